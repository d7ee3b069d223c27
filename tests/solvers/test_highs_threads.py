"""HiGHS's scheduler is per process: a ``threads`` option other than the one it
was started with makes a run fail before it starts (status kError, model status
kNotset).  privopt never treats that as certified, and says why."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import NotCertifiedError

from tests._models import pmedian

highspy = pytest.importorskip("highspy", reason="the HiGHS solver (highspy) is needed")


def _runs_with(threads):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if threads is not None:
        h.setOptionValue("threads", threads)
    h.addVar(0.0, 1.0)
    h.changeColCost(0, 1.0)
    return h.run() == highspy.HighsStatus.kOk


def test_a_refused_run_is_not_certified_and_the_error_says_why():
    _runs_with(None)                     # the scheduler is started (if it was not) with its default
    refused = next((t for t in (1, 3, 5) if not _runs_with(t)), None)
    if refused is None:
        pytest.skip("this HiGHS accepts every threads value after its first run")
    m, _ = pmedian(6, 10)
    m.cap = pyo.Constraint(expr=sum(m.assign[i, 0] for i in m.I) <= 8)   # not choose-one blocks: HiGHS solves
    # the cap couples the records: declared with a sensitivity (the user's bound), so that HiGHS runs
    with pytest.raises(NotCertifiedError, match="HiGHS refused to run") as err:
        privopt.exponential_mechanism(m, weights="open", epsilon=1.0, loss_range=(0, 1), n_samples=10,
                                      threads=refused, random_state=0, public_constraints=[m.p], sensitivity=2.0)
    assert "threads" in str(err.value)
