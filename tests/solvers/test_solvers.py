"""The solver layer: same answers everywhere, options that take effect, errors."""

from __future__ import annotations

import math
import subprocess
import sys
import time
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import (
    InfeasibleModelError,
    NoSolutionError,
    ParameterError,
    ParameterTypeError,
    SolverCrashedError,
    SolverNotAvailableError,
    SolverOptionError,
    UnboundedModelError,
    UnknownSolverError,
)
from privopt.solvers import (
    REGISTRY,
    SolveReport,
    TerminationCondition,
    available_solvers,
    get_spec,
    is_certified,
    problem_class,
    solve,
)
from privopt.solvers.examples import infeasible_milp, market_split, small_milp, unbounded_lp

from tests.conftest import MILP_SOLVERS, require_solver

ALL_INSTALLABLE = MILP_SOLVERS + ["appsi_highs", "gurobi", "gurobi_persistent"]


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
def test_same_optimum_every_solver(name):
    require_solver(name)
    model = small_milp()
    report = solve(model, name)
    assert isinstance(report, SolveReport)
    assert report.certified_optimal is True
    assert report.termination == TerminationCondition.convergenceCriteriaSatisfied
    assert report.objective == pytest.approx(-6.4, abs=1e-9)
    assert [round(pyo.value(model.x[i])) for i in range(3)] == [-2, 1, -2]
    assert report.solver_version
    assert report.wall_time >= 0


def test_report_is_immutable():
    require_solver("highs")
    report = solve(small_milp(), "highs")
    with pytest.raises(Exception):
        report.certified_optimal = False  # frozen dataclass


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
@pytest.mark.slow
def test_time_limit_stops_hard_model(name):
    """A time limit actually stops a hard model near the limit, and the
    answer is reported as not certified."""
    require_solver(name)
    model = market_split(n_constraints=4, n_vars=40, seed=0)
    limit = 2.0
    start = time.perf_counter()
    report = solve(model, name, time_limit=limit)
    elapsed = time.perf_counter() - start
    assert report.certified_optimal is False
    assert report.termination == TerminationCondition.maxTimeLimit
    assert report.has_solution  # x = 0 is feasible, so there is an incumbent
    assert limit * 0.8 <= elapsed <= limit + 8.0


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
def test_time_limit_without_incumbent_raises(name):
    require_solver(name)
    model = market_split(n_constraints=4, n_vars=40, seed=0, feasibility=True)
    with pytest.raises(NoSolutionError) as err:
        solve(model, name, time_limit=1.0)
    assert err.value.report.termination == TerminationCondition.maxTimeLimit
    assert err.value.report.has_solution is False
    assert all(model.x[j].value is None for j in model.J)  # nothing loaded


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
def test_infeasible_raises(name):
    require_solver(name)
    with pytest.raises(InfeasibleModelError) as err:
        solve(infeasible_milp(), name)
    assert err.value.report is not None
    assert not err.value.report.certified_optimal


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
def test_unbounded_raises(name):
    require_solver(name)
    model = unbounded_lp()
    with pytest.raises(UnboundedModelError):
        solve(model, name)
    assert model.x.value is None


def test_unknown_solver_suggests_close_names():
    with pytest.raises(UnknownSolverError, match="highs") as err:
        solve(small_milp(), "hihgs")
    assert isinstance(err.value, ValueError)
    assert err.value.parameter == "solver"


def test_solver_name_type():
    with pytest.raises(ParameterTypeError):
        solve(small_milp(), 3)


def test_not_installed_has_install_hint(monkeypatch):
    from privopt.solvers import _dispatch

    monkeypatch.setattr(_dispatch, "solver_availability", lambda name: (False, None))
    with pytest.raises(SolverNotAvailableError, match="apt-get install coinor-cbc"):
        solve(small_milp(), "cbc")


@pytest.mark.parametrize("options", [["time_limit", 3], {"a": [1, 2]}, {3: 1}])
def test_options_of_wrong_type(options):
    with pytest.raises(SolverOptionError):
        solve(small_milp(), "highs", options=options)


def test_unknown_highs_option_names_are_refused_before_any_solve(monkeypatch):
    """A misspelt HiGHS option is refused with the closest real names, by solve() and by a
    mechanism before it draws noise; real option names pass."""
    require_solver("highs")
    import privopt
    from privopt.solvers import _dispatch

    calls = []
    monkeypatch.setattr(_dispatch, "_RUNNERS", {k: (lambda *a, **k: calls.append(1)) for k in _dispatch._RUNNERS})
    with pytest.raises(SolverOptionError, match=r"options: HiGHS has no option 'presolv' \(did you mean 'presolve'"):
        solve(small_milp(), "highs", options={"presolv": "off"})
    model = privopt.models.zero_one_halfspace(np.eye(3), np.array([1, -1, 1]))
    with pytest.raises(SolverOptionError, match="solver_options: HiGHS has no option 'time_limt'") as info:
        privopt.opdisc(model, epsilon=1.0, delta=1e-4, solver="highs", solver_options={"time_limt": 3})
    assert info.value.parameter == "solver_options" and calls == []
    monkeypatch.undo()
    assert solve(small_milp(), "highs", options={"presolve": "off", "mip_allow_restart": False}).certified_optimal


def test_options_for_a_solver_privopt_does_not_know_are_flagged(monkeypatch):
    from privopt.exceptions import UncheckedOptionsWarning
    from privopt.solvers import _dispatch

    monkeypatch.setattr(_dispatch, "solver_availability", lambda name: (False, None))
    with pytest.warns(UncheckedOptionsWarning, match="'max_iter' go to it unchanged and unchecked"):
        with pytest.raises(SolverNotAvailableError):
            solve(small_milp(), "ipopt", options={"max_iter": 10})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncheckedOptionsWarning)   # no options, or a known solver: silent
        with pytest.raises(SolverNotAvailableError):
            solve(small_milp(), "ipopt")
        with pytest.raises(SolverNotAvailableError):
            solve(small_milp(), "cbc", options={"cuts": "on"})


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"time_limit": -1}, ParameterError),
        ({"time_limit": "10"}, ParameterTypeError),
        ({"mip_gap": -0.1}, ParameterError),
        ({"threads": 0}, ParameterError),
        ({"seed": -3}, ParameterError),
    ],
)
def test_bad_limits(kwargs, exc):
    with pytest.raises(exc):
        solve(small_milp(), "highs", **kwargs)


def test_several_objectives_rejected():
    model = small_milp()
    model.obj2 = pyo.Objective(expr=model.x[0])
    with pytest.raises(ParameterError, match="exactly one active objective"):
        solve(model, "highs")


def test_problem_class_and_capability():
    assert problem_class(small_milp()) == "MILP"
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1))
    m.o = pyo.Objective(expr=(m.x - 0.3) ** 2)
    assert problem_class(m) == "QP"
    require_solver("glpk")
    with pytest.raises(SolverOptionError, match="cannot solve a QP"):
        solve(m, "glpk")
    require_solver("highs")
    report = solve(m, "highs")
    assert report.certified_optimal and m.x.value == pytest.approx(0.3, abs=1e-6)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("glpk", {"tmlim": 3, "mipgap": 0.0}),  # GLPK: whole seconds, rounded up
        ("cbc", {"sec": 2.5, "ratio": 0.0, "allow": 1e-6, "threads": 2, "randomCbcSeed": 7,
                 "timeMode": "elapsed"}),
        ("appsi_highs", {"time_limit": 2.5, "mip_rel_gap": 0.0, "mip_abs_gap": 1e-6,
                         "threads": 2, "random_seed": 7}),
        ("cplex", {"timelimit": 2.5, "mipgap": 0.0, "mip_tolerances_absmipgap": 1e-6,
                   "threads": 2, "randomseed": 7}),
        ("highs", {"random_seed": 7}),  # the rest goes through Pyomo's uniform config
        ("scip", {"randomization/randomseedshift": 7}),
        ("gurobi", {"Seed": 7}),
    ],
)
def test_option_translation(name, expected):
    opts = get_spec(name).translate(time_limit=2.5, mip_gap=0.0, abs_gap=1e-6, threads=2, seed=7)
    assert opts == expected


@pytest.mark.parametrize("name", ALL_INSTALLABLE)
def test_translated_options_reach_the_solver(name):
    """The report records the solver-specific options that were passed."""
    require_solver(name)
    report = solve(small_milp(), name, time_limit=30, seed=3)
    spec = get_spec(name)
    if spec.time_limit:
        assert spec.time_limit in report.options
    if spec.seed:
        assert report.options[spec.seed] == 3


def test_user_options_override_translation():
    require_solver("cbc")
    report = solve(small_milp(), "cbc", time_limit=10, options={"sec": 20})
    assert report.options["sec"] == 20


def test_aliases_and_passthrough():
    assert get_spec("scip_direct").name == "scip"
    assert get_spec("GLPK").name == "glpk"
    # A name privopt does not know but Pyomo does passes through unchanged.
    spec = get_spec("ipopt")
    assert spec.pyomo_name == "ipopt" and spec.problem_classes == ()


def test_is_certified_rule():
    ok = TerminationCondition.convergenceCriteriaSatisfied
    assert is_certified(ok, -35.7, -35.7, mip_gap=0.0, abs_gap=1e-6)
    # near-zero and negative optima: the absolute gap decides
    assert not is_certified(ok, -1e-3, -2e-3, mip_gap=0.0, abs_gap=1e-6)
    assert not is_certified(ok, 0.0, -1e-5, mip_gap=0.0, abs_gap=1e-6)
    assert not is_certified(TerminationCondition.maxTimeLimit, 1.0, 1.0, mip_gap=0, abs_gap=1e-6)
    assert not is_certified(ok, 1.0, -math.inf, mip_gap=0, abs_gap=1e-6)
    assert is_certified(ok, 1.0, None, mip_gap=0, abs_gap=1e-6)


def test_solver_crash_is_explicit(monkeypatch):
    from privopt.solvers import _dispatch

    def boom(*args, **kwargs):
        raise OSError("process died")

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", boom)
    with pytest.raises(SolverCrashedError) as err:
        solve(small_milp(), "highs")
    assert err.value.report.termination == TerminationCondition.error


def test_available_solvers_lists_registry():
    rows = available_solvers()
    assert {r.name for r in rows} == set(REGISTRY)
    highs = next(r for r in rows if r.name == "highs")
    assert highs.available and "MILP" in highs.problem_classes


def test_cli_solvers_table():
    out = subprocess.run([sys.executable, "-m", "privopt", "solvers"], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["solver", "available", "version"]
    highs = next(line for line in lines if line.startswith("highs "))
    assert highs.split()[1] == "yes"


def test_version():
    assert isinstance(privopt.__version__, str) and privopt.__version__.count(".") == 2
