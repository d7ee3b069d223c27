"""Solver failures become explicit outcomes, for OPDisc, OPSamp and RSPM.

* a time limit on a hard model: NotCertifiedError carrying the report,
  nothing released, the user's model untouched; under on_failure="return"
  the answer comes back with certified=False and an UncertifiedReleaseWarning;
* a solver told to stop at a gap (through its own options) is not certified;
* no feasible point at the time limit: NoSolutionError;
* an infeasible model: InfeasibleModelError with its report;
* a solver binary missing from PATH: SolverNotAvailableError with the install
  hint, before any noise is drawn or any model is built;
* a solver process that dies (a fake executable first on PATH that kills
  itself, or exits without writing a solution): SolverCrashedError with its
  report.

No code path returns an uncertified answer as private: every failure either
raises (nothing released) or, only when asked with on_failure="return",
returns ``certified=False`` with a warning.
"""

from __future__ import annotations

from dataclasses import replace

import math
import os
import stat
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.common import Executable

import privopt
from privopt.exceptions import (
    InfeasibleModelError,
    NoSolutionError,
    NotCertifiedError,
    SolverCrashedError,
    SolverNotAvailableError,
    UncertifiedReleaseWarning,
)
from privopt.models import hinge_halfspace, rspm_halfspace, zero_one_halfspace
from privopt.solvers import TerminationCondition, _dispatch
from privopt.solvers.examples import market_split

from tests.conftest import require_solver

parallel_mod = sys.modules["privopt.mechanisms._parallel"]  # the worker side of the OPSamp oracle calls

TIME_LIMIT = 0.5


def _X():
    return np.array([[0, 1], [1, 0], [1, 1], [2, 1], [0, 2], [1, 2]], dtype=float)


def _y():
    return np.array([1, -1, 1, -1, 1, -1])


def _state(model):
    return ({v.name: (v.value, v.lb, v.ub, v.fixed) for v in model.component_data_objects(pyo.Var)},
            sorted(c.name for c in model.component_objects()),
            {o.name: o.active for o in model.component_data_objects(pyo.Objective)})


# --- hard models, one per mechanism (market split: Cornuejols-Dawande) -----------------

def _hard_opdisc():
    m = market_split(n_constraints=4, n_vars=40, seed=1)
    kw = dict(weights=m.x, epsilon=700.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(40), n_samples=4)
    return m, kw


def _hard_opsamp(executor):
    # its 4 rows are its 4 records (one block each with the decision fixed), as OPDisc's model says
    # a tiny G gives a large eta, i.e. small sigma_k: the perturbed market split stays hard
    m = market_split(n_constraints=4, n_vars=40, seed=1)
    kw = dict(weights="x", epsilon=1.0, delta=1e-3, lipschitz_l1=1e-5, n_samples=4, n_oracle_calls=6,
              executor=executor, progress=False)
    return m, kw


def _hard_rspm():
    """Market split as an RSPM oracle: w = x - n with separator binaries (x, n)."""
    m = market_split(n_constraints=4, n_vars=40, seed=1)
    m.n = pyo.Var(m.J, domain=pyo.Binary)
    m.w = pyo.Var(m.J, domain=pyo.Integers, bounds=(-1, 1))
    m.link = pyo.Constraint(m.J, rule=lambda m, j: m.w[j] == m.x[j] - m.n[j])
    kw = dict(separator_vars=("x", "n"), weights="w", sensitivity=1.0, epsilon=700.0,   # the largest accepted
              n_samples=4,    # its 4 rows, one block each with the decision fixed
              public_constraints=["w", "link"])   # {-1, 0, 1}^40 and w = x - n: fixed before any data
    return m, kw


def _run_hard(kind, **extra):
    """Run ``kind`` on its hard model with a tiny time limit; returns (model, thunk)."""
    if kind == "opdisc":
        m, kw = _hard_opdisc()
        return m, lambda: privopt.opdisc(m, time_limit=TIME_LIMIT, random_state=0, **kw, **extra)
    if kind == "rspm":
        m, kw = _hard_rspm()
        return m, lambda: privopt.rspm(m, time_limit=TIME_LIMIT, random_state=0, **kw, **extra)
    pool = ThreadPoolExecutor(1)
    m, kw = _hard_opsamp(pool)

    def run():
        try:
            return privopt.opsamp(m, time_limit=0.2, random_state=0, **kw, **extra)
        finally:
            pool.shutdown()
    return m, run


MECHS = ["opdisc", "opsamp", "rspm"]


# --- 1. time limits ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", MECHS)
def test_time_limit_raises_not_certified_and_releases_nothing(kind):
    require_solver("highs")
    model, run = _run_hard(kind, keep_report=True)      # the curator's diagnostics, asked for
    before = _state(model)
    with pytest.raises(NotCertifiedError, match="nothing is released") as err:
        run()
    report = err.value.report
    assert report is not None and not report.certified_optimal
    assert report.termination == TerminationCondition.maxTimeLimit
    assert report.has_solution            # an incumbent existed, and was still not released
    assert _state(model) == before        # the user's model got nothing


@pytest.mark.parametrize("kind", MECHS)
def test_time_limit_under_return_policy_is_flagged(kind):
    require_solver("highs")
    model, run = _run_hard(kind, on_failure="return", keep_report=True)
    with pytest.warns(UncertifiedReleaseWarning, match="WITHOUT a privacy guarantee"):
        res = run()
    assert res.certified is False and "NOT covered" in repr(res)
    reports = res.report if isinstance(res.report, tuple) else (res.report,)
    assert any(not r.certified_optimal for r in reports)


@pytest.mark.parametrize("solver, options", [("highs", {"mip_abs_gap": 100.0}), ("cbc", {"allow": 100.0}),
                                             ("glpk", {"mipgap": 100.0})])
def test_solver_stopping_at_a_gap_is_not_certified(solver, options):
    """A user option that lets the solver stop at a large gap makes it report
    'optimal' (HiGHS, CBC) with bound and incumbent far apart: privopt's
    absolute-gap rule refuses to certify, so nothing is released."""
    require_solver(solver)
    m, kw = _hard_opdisc()
    before = _state(m)
    with pytest.raises(NotCertifiedError) as err:
        privopt.opdisc(m, random_state=0, solver=solver, solver_options=options, time_limit=20, keep_report=True,
                       **kw)
    rep = err.value.report
    assert rep.wall_time < 10                            # it stopped at the gap, not at the time limit
    if solver != "glpk":
        assert rep.termination == TerminationCondition.convergenceCriteriaSatisfied
        assert rep.abs_gap_achieved > 1.0
    assert not rep.certified_optimal and rep.has_solution
    assert _state(m) == before


def test_no_feasible_point_at_the_time_limit():
    """Market split as a feasibility problem: no incumbent within the limit."""
    require_solver("highs")
    m = market_split(n_constraints=4, n_vars=40, seed=1, feasibility=True)
    with pytest.raises(NoSolutionError) as err:
        privopt.opdisc(m, weights=m.x, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(40),
                       n_samples=4, time_limit=TIME_LIMIT, random_state=0, on_failure="return",
                       public_constraints="c", keep_report=True)
    assert err.value.report is not None and not err.value.report.has_solution
    assert all(m.x[j].value is None for j in m.J)


# --- 2. infeasible models --------------------------------------------------------------

def _infeasible(kind, solver):
    if kind == "opdisc":
        m = zero_one_halfspace(_X(), _y())
        m.impossible = pyo.Constraint(expr=m.w[0] + m.w[1] >= 3)      # the grid is {-1, 0, 1}
        return m, lambda: privopt.opdisc(m, epsilon=1.0, delta=1e-3, solver=solver, random_state=0,
                                         public_constraints="impossible", keep_report=True)
    if kind == "opsamp":
        m = hinge_halfspace(_X(), _y(), x_bound=2.0)
        m.impossible = pyo.Constraint(expr=m.w[0] + m.w[1] >= 3)      # the box is [-1, 1]^2
        pool = ThreadPoolExecutor(1)

        def run():
            try:
                return privopt.opsamp(m, epsilon=1.0, delta=1e-3, n_oracle_calls=8, solver=solver,
                                      executor=pool, progress=False, random_state=0,
                                      public_constraints="impossible", keep_report=True)
            finally:
                pool.shutdown()
        return m, run
    m = rspm_halfspace(_X(), _y())
    m.impossible = pyo.Constraint(expr=m.w[0] + m.w[1] >= 3)
    return m, lambda: privopt.rspm(m, epsilon=1.0, solver=solver, random_state=0,
                                   public_constraints="impossible", keep_report=True)


@pytest.mark.parametrize("solver", ["highs", "glpk", "cbc"])
@pytest.mark.parametrize("kind", MECHS)
def test_infeasible_model(kind, solver):
    require_solver(solver)
    m, run = _infeasible(kind, solver)
    before = _state(m)
    with pytest.raises(InfeasibleModelError) as err:
        run()
    assert err.value.report is not None and not err.value.report.has_solution
    assert _state(m) == before


# --- 3. a missing solver binary ----------------------------------------------------------

@pytest.fixture
def path_without(monkeypatch, tmp_path):
    """Set PATH to an empty folder (plus nothing else), so that glpsol and cbc cannot
    be found; Pyomo's executable cache and privopt's availability cache are reset
    on the way in and out."""
    def reset():
        for exe in ("glpsol", "cbc"):
            Executable(exe).rehash()
        _dispatch.solver_availability.cache_clear()

    monkeypatch.setenv("PATH", str(tmp_path))
    reset()
    yield tmp_path
    monkeypatch.undo()
    reset()


def _easy(kind, solver, rng):
    if kind == "opdisc":
        m = zero_one_halfspace(_X(), _y())
        return m, lambda: privopt.opdisc(m, epsilon=1.0, delta=1e-3, solver=solver, random_state=rng,
                                         keep_report=True)
    if kind == "opsamp":
        m = hinge_halfspace(_X(), _y(), x_bound=2.0)
        pool = ThreadPoolExecutor(1)

        def run():
            try:
                return privopt.opsamp(m, epsilon=1.0, delta=1e-3, n_oracle_calls=8, solver=solver,
                                      executor=pool, progress=False, random_state=rng, keep_report=True)
            finally:
                pool.shutdown()
        return m, run
    m = rspm_halfspace(_X(), _y())
    return m, lambda: privopt.rspm(m, epsilon=1.0, solver=solver, random_state=rng, keep_report=True)


@pytest.mark.parametrize("solver, hint", [("glpk", "apt-get install glpk-utils"),
                                          ("cbc", "apt-get install coinor-cbc")])
@pytest.mark.parametrize("kind", MECHS)
def test_missing_binary_is_reported_before_any_work(kind, solver, hint, path_without, monkeypatch):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    m, run = _easy(kind, solver, rng)
    before = _state(m)

    def boom(*a, **k):
        raise AssertionError("a solve started although the solver is missing")

    for key in list(_dispatch._RUNNERS):
        monkeypatch.setitem(_dispatch._RUNNERS, key, boom)
    monkeypatch.setattr(parallel_mod, "oracle_call", boom)
    with pytest.raises(SolverNotAvailableError, match=hint) as err:
        run()
    assert solver in str(err.value) and err.value.report is None
    assert rng.bit_generator.state == state          # no noise was drawn
    assert _state(m) == before


# --- 4. a solver process that dies -------------------------------------------------------

_FAKE = """#!/bin/sh
# A solver that answers version probes with the real binary, then fails every solve.
case "$*" in
  *-stop*|*--version*|*--help*) exec {real} "$@" ;;
esac
echo "fake {name}: starting"
{action}
"""

ACTIONS = {
    "killed": "kill -9 $$",                      # the process dies by a signal mid-run
    "exit-code": "exit 3",                       # exits with an error code
    "silent": "exit 0",                          # exits 'successfully' without writing a solution
}


@pytest.fixture
def fake_solver(tmp_path, monkeypatch):
    made = []

    def make(exe, action):
        real = Executable(exe).path()
        if real is None:
            pytest.skip(f"{exe} is not installed")
        script = tmp_path / exe
        script.write_text(_FAKE.format(real=real, name=exe, action=ACTIONS[action]))
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        Executable(exe).rehash()
        _dispatch.solver_availability.cache_clear()
        made.append(exe)
        assert Executable(exe).path() == str(script)
        return script

    yield make
    monkeypatch.undo()
    for exe in made:
        Executable(exe).rehash()
    _dispatch.solver_availability.cache_clear()


@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("solver, exe", [("cbc", "cbc"), ("glpk", "glpsol")])
@pytest.mark.parametrize("kind", MECHS)
def test_dying_solver_is_an_explicit_error(kind, solver, exe, action, fake_solver, caplog):
    fake_solver(exe, action)
    m, run = _easy(kind, solver, np.random.default_rng(0))
    before = _state(m)
    with caplog.at_level("CRITICAL", logger="pyomo"), warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedReleaseWarning)   # a crash is never "returned"
        with pytest.raises(SolverCrashedError) as err:
            run()
    report = err.value.report
    assert report is not None and not report.certified_optimal and not report.has_solution
    assert report.solver == solver
    assert _state(m) == before


def test_dying_solver_under_return_policy_still_raises(fake_solver, caplog):
    """on_failure="return" concerns uncertified answers; a crash has no answer to return."""
    fake_solver("cbc", "killed")
    m = zero_one_halfspace(_X(), _y())
    with caplog.at_level("CRITICAL", logger="pyomo"), pytest.raises(SolverCrashedError):
        privopt.opdisc(m, epsilon=1.0, delta=1e-3, solver="cbc", on_failure="return", random_state=0)


# --- 5. estimator and experiment level --------------------------------------------------

def test_estimator_releases_nothing_when_not_certified(monkeypatch):
    """PrivateHalfspaceClassifier: 'raise' leaves the estimator unfitted; 'return'
    keeps the result marked uncertified and warns."""
    require_solver("highs")
    from privopt.estimators import PrivateHalfspaceClassifier
    from privopt.solvers import SolveReport

    real = _dispatch._RUNNERS["contrib"]

    def stopped(spec, model, **kw):      # the solver runs, then "hits its time limit"
        out = real(spec, model, **kw)
        obj = out.objective
        return replace(out, termination=TerminationCondition.maxTimeLimit, bound=obj - 1.0 if obj is not None else None)

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", stopped)
    X, y = _X(), _y()
    est = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, solver="highs")  # the MILP path
    with pytest.raises(NotCertifiedError):
        est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "result_")
    est = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, on_failure="return", solver="highs",
                                     keep_report=True)   # the report is dropped unless kept
    with pytest.warns(UncertifiedReleaseWarning):
        est.fit(X, y)
    assert est.result_.certified is False
    assert isinstance(est.result_.report, SolveReport) and not est.result_.report.certified_optimal


def test_experiment_runner_keeps_uncertified_runs_apart(tmp_path, monkeypatch):
    """The experiment runner records an uncertified run as such (never as a private
    accuracy), and a crashed run as an error."""
    require_solver("highs")
    import concurrent.futures as cf

    from privopt.datasets import make_planted_halfspace
    from privopt.experiments import run_experiment

    real = _dispatch._RUNNERS["contrib"]
    calls = {"n": 0}

    def flaky(spec, model, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("solver process died")
        out = real(spec, model, **kw)
        if calls["n"] == 2:
            return replace(out, termination=TerminationCondition.maxTimeLimit, bound=out.objective - 1.0)
        return out

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", flaky)
    data = make_planted_halfspace(60, 3, n_test=30, noise=0.05, random_state=0)
    with cf.ThreadPoolExecutor(1) as ex:
        rows = run_experiment(data.X_train, data.y_train, data.X_test, data.y_test, methods=["opdisc"],
                              epsilons=[1.0], runs=3, executor=ex, out=str(tmp_path), progress=False,
                              figures=False)
    status = sorted(r["status"] for r in rows)
    assert status == ["error", "ok", "uncertified"]
    for r in rows:
        assert (r["certified"] is True) == (r["status"] == "ok")


def test_cross_val_score_shows_why_a_fold_failed(monkeypatch):
    """Inside cross_val_score the first line of the error says what happened and what to change."""
    require_solver("highs")
    from sklearn.model_selection import cross_val_score

    from privopt.estimators import PrivateHalfspaceClassifier

    real = _dispatch._RUNNERS["contrib"]

    def stopped(spec, model, **kw):
        out = real(spec, model, **kw)
        obj = out.objective
        return replace(out, termination=TerminationCondition.maxTimeLimit, bound=obj - 1.0 if obj is not None else None)

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", stopped)
    X, y = _X(), _y()
    assert PrivateHalfspaceClassifier().time_limit == 120.0  # finite default
    with pytest.raises(NotCertifiedError) as err:
        cross_val_score(PrivateHalfspaceClassifier(random_state=0, solver="highs"), X, y, cv=2,
                        error_score="raise")
    first = str(err.value).splitlines()[0]
    assert first.startswith("Not certified") and "did not certify" in first
    # how the solve failed and its gap are computed from the data: the message shows neither
    assert "maxTimeLimit" not in first and "gap 1" not in first
    assert "time_limit" in first
