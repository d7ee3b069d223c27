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


def test_the_message_does_not_say_which_way_the_solve_failed():
    """A rounding-level gap after proven optimality and a time limit with a real gap are
    different outcomes of the data: the message is the same text for both."""
    rounding = not_certified_message(_report(OBJ, BOUND))
    timed_out = not_certified_message(_report(-10.0, -12.0, TerminationCondition.maxTimeLimit))
    assert rounding == timed_out
    assert "maxTimeLimit" not in timed_out and "convergence" not in rounding


def test_the_first_line_names_every_remedy_and_no_value_of_the_data():
    msg = not_certified_message(_report(-10.0, -12.0, TerminationCondition.maxTimeLimit))
    first = msg.splitlines()[0]
    assert first.startswith("Not certified")
    for knob in ("time_limit=60.0", "abs_gap=1e-08", "solver='auto'", "norm_bound", "grid", "levels"):
        assert knob in first, knob
    for value in ("-10", "-12", "0.5", "gap 2"):   # objective, bound, time spent, gap
        assert value not in msg, value
    assert "never retries" in msg
