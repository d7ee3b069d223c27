"""Certification tolerance follows each solver's reporting precision (issue 16 item 7)."""

from __future__ import annotations

from pyomo.contrib.solver.common.results import TerminationCondition

from privopt.oracle import not_certified_message
from privopt.solvers import is_certified
from privopt.solvers._dispatch import get_spec
from privopt.solvers._report import SolveReport

OPT = TerminationCondition.convergenceCriteriaSatisfied
# The CBC case that was refused: a true optimum, bound rounded to ~8 digits.
OBJ, BOUND = -28.706882198, -28.70688043


def test_cbc_rounding_is_tolerated_but_not_for_full_precision_solvers():
    assert not is_certified(OPT, OBJ, BOUND, mip_gap=0.0, abs_gap=1e-6)
    assert is_certified(OPT, OBJ, BOUND, mip_gap=0.0, abs_gap=1e-6, report_rtol=get_spec("cbc").report_rtol)
    assert get_spec("highs").report_rtol == 0.0
    # the allowance is relative to the size of the numbers, not a blanket slack
    assert not is_certified(OPT, OBJ, OBJ + 1e-3, mip_gap=0.0, abs_gap=1e-6,
                            report_rtol=get_spec("cbc").report_rtol)


def _report(obj, bound, tc=OPT):
    return SolveReport(
        solver="cbc", interface="cbc", solver_version=None, termination=tc, solution_status=None,
        certified_optimal=False, objective=obj, bound=bound, abs_gap_achieved=abs(obj - bound),
        rel_gap_achieved=None, wall_time=0.5, time_limit=60.0, mip_gap=0.0, abs_gap=1e-8,
        options={}, message="")


def test_rounding_level_gap_names_abs_gap_not_time_limit():
    first = not_certified_message(_report(OBJ, BOUND)).splitlines()[0]
    assert first.startswith("Not certified") and "rounding" in first and "abs_gap" in first
    assert "time_limit" not in first


def test_real_gap_names_time_limit_on_first_line():
    first = not_certified_message(_report(-10.0, -12.0, TerminationCondition.maxTimeLimit)).splitlines()[0]
    assert first.startswith("Not certified") and "time_limit" in first
    assert "gap 2" not in first          # the gap is computed from the data: the message does not show it
    # what the user can change, and that privopt does not change it behind their back
    for knob in ("solver='auto'", "norm_bound", "grid", "levels"):
        assert knob in first, knob
    assert "never retries" in not_certified_message(_report(-10.0, -12.0, TerminationCondition.maxTimeLimit))
