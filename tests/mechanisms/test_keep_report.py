"""keep_report: a release's report (the solve's objective, bound, gap and time; the regions
and points a sampler reached) is computed from the data, so a mechanism returns it, and
leaves it on an exception raised after the data is read, only when the caller asks for it;
a call charged to a privacy ledger (an analyst's budget) refuses to be asked, for free."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import privopt
from privopt.exceptions import NotCertifiedError, ParameterError, ParameterTypeError, SolverError
from privopt.mechanisms import MixtureReport, SelectionReport
from privopt.models import hinge_halfspace, rspm_halfspace, zero_one_halfspace
from privopt.result import PrivateResult, curator_reports
from privopt.scoring import select_scoring_system
from privopt.solvers import SolveOptions, SolveReport, TerminationCondition, _dispatch
from tests._models import tiny_halfspace, tiny_quadratic
from tests.conftest import require_solver

pytestmark = pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDominatesWarning")


def _data(n=12, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 0.0, 1.0], size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] >= 0, 1, -1)
    return X, y


def _opsamp(**kw):
    X, y = _data()
    return privopt.opsamp(hinge_halfspace(X, y, x_bound=2.0), epsilon=1.0, delta=1e-3, n_oracle_calls=3,
                          progress=False, random_state=0, **kw)


def _binary():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(30, 3))
    return X, (X[:, 0] == 1).astype(int)


#: Each mechanism on a small instance, and the type of its report.
CALLS = {
    "opdisc": (lambda **kw: privopt.opdisc(zero_one_halfspace(*_data()), epsilon=1.0, delta=1e-3,
                                           random_state=0, **kw), SolveReport),
    "opsamp": (_opsamp, tuple),
    "rspm": (lambda **kw: privopt.rspm(rspm_halfspace(*_data()), epsilon=1.0, random_state=0, **kw), SolveReport),
    "exponential_mechanism": (lambda **kw: privopt.exponential_mechanism(tiny_halfspace(), epsilon=1.0,
                                                                         random_state=0, **kw), SelectionReport),
    "exponential_mechanism (scored)": (
        lambda **kw: privopt.exponential_mechanism(tiny_quadratic(), weights="x", epsilon=1.0, loss_range=1,
                                                   n_samples=5, public_constraints="x", random_state=0, **kw),
        SelectionReport),
    "mixture_selection": (lambda **kw: privopt.mixture_selection(
        [tiny_halfspace(), tiny_halfspace(grid=2, norm_bound=2.0)], epsilon=1.0, random_state=0, **kw),
        MixtureReport),
    "select_scoring_system": (lambda **kw: select_scoring_system(*_binary(), epsilon=1.0, max_points=1,
                                                                 max_items=2, random_state=0, **kw), object),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_report_is_returned_only_when_asked_for(name):
    require_solver("highs")
    call, kind = CALLS[name]
    default = call()
    assert default.report is None
    kept = call(keep_report=True)
    assert kept.report is not None and isinstance(kept.report, kind)
    np.testing.assert_array_equal(default.weights, kept.weights)      # the same release, the same noise
    assert default.parameters == kept.parameters and default.certified == kept.certified


def test_keep_report_in_the_record_and_a_keyword_over_it():
    require_solver("highs")
    call, _ = CALLS["opdisc"]
    assert call(options=SolveOptions(keep_report=True)).report is not None
    assert call(options=SolveOptions(keep_report=True), keep_report=False).report is None
    with pytest.raises(ParameterTypeError, match="keep_report must be True or False"):
        call(keep_report="yes")
    with pytest.raises(ParameterTypeError, match="keep_report must be True or False"):
        CALLS["select_scoring_system"][0](keep_report=1)


def test_the_decorator_passes_keep_report_to_its_mechanism():
    require_solver("highs")
    X, y = _data()
    plain = privopt.private("opdisc", epsilon=1.0, delta=1e-3, random_state=0)(zero_one_halfspace)
    kept = privopt.private("opdisc", epsilon=1.0, delta=1e-3, random_state=0, keep_report=True)(zero_one_halfspace)
    assert plain(X, y).report is None and isinstance(kept(X, y).report, SolveReport)


def _uncertified(monkeypatch):
    """Every solve through Pyomo runs, then 'stops on its time limit' one unit short of its bound."""
    real = _dispatch._RUNNERS["contrib"]

    def stopped(spec, model, **kw):
        out = real(spec, model, **kw)
        obj = out.objective
        return replace(out, termination=TerminationCondition.maxTimeLimit, bound=obj - 1.0 if obj is not None else None)

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", stopped)


@pytest.mark.parametrize("name", ["opdisc", "rspm", "opsamp"])
def test_a_refusal_after_the_data_is_read_carries_no_report_unless_asked(name, monkeypatch):
    require_solver("highs")
    _uncertified(monkeypatch)
    call, _ = CALLS[name]
    with pytest.raises(NotCertifiedError, match="nothing is released") as err:
        call(solver="highs")
    assert err.value.report is None
    with pytest.raises(NotCertifiedError) as err:
        call(solver="highs", keep_report=True)
    report = err.value.report
    assert isinstance(report, SolveReport) and not report.certified_optimal and report.objective is not None


def test_the_estimators_fit_raises_without_the_report_unless_kept(monkeypatch):
    require_solver("highs")
    _uncertified(monkeypatch)
    X, y = _data(40)
    with pytest.raises(NotCertifiedError) as err:
        privopt.PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, solver="highs").fit(X, y)
    assert err.value.report is None
    with pytest.raises(NotCertifiedError) as err:
        privopt.PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, solver="highs", keep_report=True).fit(X, y)
    assert isinstance(err.value.report, SolveReport)


def test_the_report_is_dropped_along_the_whole_exception_chain():
    @curator_reports
    def mechanism(keep_report=False):
        try:
            raise SolverError("inner", report="inner report")
        except SolverError as exc:
            raise NotCertifiedError("outer", report="outer report") from exc

    with pytest.raises(NotCertifiedError) as err:
        mechanism()
    assert err.value.report is None and err.value.__cause__.report is None
    with pytest.raises(NotCertifiedError) as err:
        mechanism(keep_report=True)
    assert err.value.report == "outer report" and err.value.__cause__.report == "inner report"

    @curator_reports
    def release(**kw):
        return PrivateResult(weights=[1.0], mechanism="opdisc", epsilon=1.0, delta=0.0, report="diagnostics")

    assert release().report is None and release(keep_report=True).report == "diagnostics"
    assert release(options=SolveOptions(keep_report=True)).report == "diagnostics"


class _Untouchable:
    """A model or data set that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"read {name!r} before the ledger refused")

    def __len__(self):
        raise AssertionError("read the length before the ledger refused")

    def __array__(self, *args, **kwargs):
        raise AssertionError("read the data before the ledger refused")


def test_a_ledger_refuses_keep_report_before_it_reserves_or_reads_anything():
    ledger = privopt.PrivacyLedger(epsilon=5.0, delta=1e-3)
    u = _Untouchable()
    calls = [
        lambda **kw: privopt.opdisc(u, epsilon=0.5, delta=1e-6, **kw),
        lambda **kw: privopt.opsamp(u, epsilon=0.5, delta=1e-6, **kw),
        lambda **kw: privopt.rspm(u, epsilon=0.5, **kw),
        lambda **kw: privopt.exponential_mechanism(u, epsilon=0.5, **kw),
        lambda **kw: privopt.mixture_selection(u, epsilon=0.5, **kw),
        lambda **kw: select_scoring_system(u, None, epsilon=0.5, **kw),
    ]
    for call in calls:
        with pytest.raises(ParameterError, match="keep_report") as err:
            call(keep_report=True, ledger=ledger)
        assert err.value.parameter == "keep_report" and "Leave keep_report out" in str(err.value)
        with ledger, pytest.raises(ParameterError, match="keep_report"):
            call(keep_report=True)
    with pytest.raises(ParameterError, match="keep_report"):
        privopt.opdisc(u, epsilon=0.5, delta=1e-6, options=SolveOptions(keep_report=True), ledger=ledger)
    build = privopt.private("opdisc", epsilon=0.5, delta=1e-6, keep_report=True, ledger=ledger)(
        lambda: pytest.fail("the builder ran (it reads the data) before the ledger refused"))
    with pytest.raises(ParameterError, match="keep_report"):
        build()
    X, y = _binary()
    for est in (privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), keep_report=True, ledger=ledger),
                privopt.scoring.PrivateScoringSystem(epsilon=0.5, keep_report=True, ledger=ledger)):
        with pytest.raises(ParameterError, match="keep_report"):
            est.fit(X, y)
    assert ledger.releases == () and ledger.spent.epsilon == 0.0


def test_under_a_ledger_the_default_release_is_charged_and_carries_no_report():
    require_solver("highs")
    ledger = privopt.PrivacyLedger(epsilon=5.0)
    call, _ = CALLS["exponential_mechanism"]
    res = call(ledger=ledger)
    assert res.report is None and len(ledger.releases) == 1
    X, y = _binary()
    est = privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), random_state=0, ledger=ledger).fit(X, y)
    assert est.result_.report is None and len(ledger.releases) == 2
