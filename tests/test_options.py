"""SolveOptions: the one typed, validated record of how a model is solved."""

import dataclasses

import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ParameterError, ParameterTypeError, SolverOptionError
from privopt.oracle import certified_solve
from privopt.solvers import DEFAULT_ABS_GAP, SolveOptions, solve


def _lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=2 * m.x + m.y)
    return m


def test_defaults_and_export():
    opts = SolveOptions()
    assert privopt.SolveOptions is SolveOptions
    assert opts.solver is None and opts.solver_or("highs") == "highs"
    assert opts.abs_gap == DEFAULT_ABS_GAP and opts.mip_gap == 0.0 and opts.on_failure == "raise"
    assert opts.options == {}


@pytest.mark.parametrize("field, value, error, words", [
    ("time_limit", 0, ParameterError, "time_limit must be > 0"),
    ("time_limit", "60", ParameterTypeError, "time_limit must be a number"),
    ("threads", 0, ParameterError, "threads"),
    ("abs_gap", -1.0, ParameterError, "abs_gap must be a finite number >= 0"),
    ("mip_gap", float("nan"), ParameterError, "mip_gap"),
    ("seed", -1, ParameterError, "seed"),
    ("on_failure", "ignore", ParameterError, "on_failure must be one of"),
    ("progress", 1, ParameterTypeError, "progress must be True or False"),
    ("solver", 3, ParameterTypeError, "solver must be a solver name"),
    ("executor", 42, ParameterTypeError, "executor must be None"),
])
def test_each_field_is_validated_when_built(field, value, error, words):
    with pytest.raises(error) as err:
        SolveOptions(**{field: value})
    assert words in str(err.value)
    assert getattr(err.value, "parameter", None) == field


def test_solver_options_checked_and_copied():
    with pytest.raises(SolverOptionError):
        SolveOptions(solver_options=["presolve"])
    given = {"presolve": "on"}
    opts = SolveOptions(solver_options=given)
    given["presolve"] = "off"                        # the user's dict changes afterwards ...
    assert opts.solver_options == {"presolve": "on"}  # ... the record does not
    assert opts.options is not opts.solver_options    # a fresh dict for each solver call


def test_frozen_and_public_constraints_as_tuple():
    opts = SolveOptions(public_constraints=["a", "b"])
    assert opts.public_constraints == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.time_limit = 5  # type: ignore[misc]


def test_unknown_keyword_is_a_type_error_with_the_closest_name():
    with pytest.raises(TypeError, match=r"solve\(\) got an unexpected keyword argument 'time_limt'.*'time_limit'"):
        solve(_lp(), time_limt=5)
    with pytest.raises(TypeError, match=r"certified_solve\(\) got an unexpected keyword argument 'thread'"):
        certified_solve(_lp(), thread=1)
    with pytest.raises(TypeError, match="SolveOptions.replace"):
        SolveOptions().replace(abs_gp=1e-3)
    # a field solve() does not take is refused as a keyword, as before (on_failure is certified_solve's)
    with pytest.raises(TypeError, match="on_failure"):
        solve(_lp(), on_failure="return")


def test_from_keywords_overrides_a_record():
    base = SolveOptions(solver="highs", time_limit=60, threads=2)
    opts = SolveOptions.from_keywords("f", {"time_limit": 10}, options=base)
    assert (opts.solver, opts.time_limit, opts.threads) == ("highs", 10, 2)
    assert base.time_limit == 60                      # the reused record is unchanged
    with pytest.raises(ParameterError, match="time_limit"):
        SolveOptions.from_keywords("f", {"time_limit": -1}, options=base)
    with pytest.raises(ParameterTypeError, match="options: f\\(\\) takes options=privopt.SolveOptions"):
        SolveOptions.from_keywords("f", {}, options={"time_limit": 1})


def test_solve_with_a_record_is_solve_with_keywords():
    by_keywords = solve(_lp(), "highs", time_limit=30, abs_gap=1e-7, solver_options={"presolve": "off"})
    record = SolveOptions(solver="highs", time_limit=30, abs_gap=1e-7, solver_options={"presolve": "off"})
    by_record = solve(_lp(), options=record)
    for report in (by_keywords, by_record):
        assert report.certified_optimal and report.objective == pytest.approx(3.0)
        assert report.time_limit == 30 and report.abs_gap == 1e-7 and report.options["presolve"] == "off"
    # a keyword beside the record overrides it; the positional solver overrides the record's
    overridden = solve(_lp(), "highs", options=SolveOptions(solver="glpk", time_limit=30), time_limit=20)
    assert overridden.solver == "highs" and overridden.time_limit == 20


def test_solve_options_dict_keeps_its_old_meaning():
    report = solve(_lp(), options={"presolve": "off"})
    assert report.options["presolve"] == "off"
    with pytest.raises(ParameterError, match="not both"):
        solve(_lp(), options={"presolve": "off"}, solver_options={"presolve": "on"})


def test_certified_solve_reads_on_failure_from_the_record():
    report = certified_solve(_lp(), options=SolveOptions(on_failure="return", time_limit=30))
    assert report.certified_optimal and report.mip_gap == 0.0
    with pytest.raises(ParameterError, match="on_failure"):
        certified_solve(_lp(), on_failure="ignore")
