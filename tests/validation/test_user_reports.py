"""Small things a user hit (issue 32): every baseline takes bounds; Gurobi's
size-limited licence error arrives as a privopt error; a weak delta warns without
n_samples on privopt's own models."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ParameterError, SolverError, SolverLicenseError, WeakGuaranteeWarning
from privopt.models import hinge_halfspace, zero_one_halfspace
from privopt.solvers import _dispatch

from tests.conftest import require_solver, solver_available


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 0.3, n) > 0.2, 1, 0)
    return X, y


# --- every baseline takes bounds ----------------------------------------------------

def test_every_baseline_takes_bounds():
    pytest.importorskip("sklearn")
    from privopt.baselines import PRIVATE_BASELINES, REFERENCE_BASELINES

    X, y = _data()
    for name, cls in {**PRIVATE_BASELINES, **REFERENCE_BASELINES}.items():
        assert "bounds" in cls().get_params(), name
    from privopt.baselines import MajorityClassClassifier, NonPrivateLogisticRegression

    plain = NonPrivateLogisticRegression().fit(X, y)
    bounded = NonPrivateLogisticRegression(bounds=(0.0, 1.0)).fit(X, y)   # used to raise TypeError
    np.testing.assert_array_equal(plain.coef_, bounded.coef_)            # data inside the bounds: same fit
    assert MajorityClassClassifier(bounds=(0.0, 1.0)).fit(X, y).score(X, y) == max(y.mean(), 1 - y.mean())


def test_reference_clips_to_the_bounds_and_checks_them():
    pytest.importorskip("sklearn")
    from privopt.baselines import MajorityClassClassifier, NonPrivateLogisticRegression

    X, y = _data()
    wide = X.copy()
    wide[0, 0] = 50.0                                     # outside the public range
    a = NonPrivateLogisticRegression(bounds=(0.0, 1.0)).fit(wide, y)
    b = NonPrivateLogisticRegression().fit(np.clip(wide, 0.0, 1.0), y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_allclose(a.decision_function(wide), b.decision_function(np.clip(wide, 0.0, 1.0)))
    for cls in (NonPrivateLogisticRegression, MajorityClassClassifier):
        with pytest.raises(ParameterError) as err:
            cls(bounds=(1.0, 0.0)).fit(X, y)
        assert err.value.parameter == "bounds"
        with pytest.raises(ParameterError) as err:
            cls(bounds=([0.0, 0.0], [1.0, 1.0])).fit(X, y)   # 2 entries for 3 features
        assert err.value.parameter == "bounds"


# --- Gurobi's size-limited licence ----------------------------------------------------

def _big_lp(n=2100):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=(0, 1))
    m.o = pyo.Objective(expr=sum(m.x[i] for i in range(n)))
    return m


def _check_licence_error(err, solver):
    assert isinstance(err.value, SolverError)
    msg = str(err.value)
    assert solver in msg and "size-limited licence" in msg and "2000 variables and 2000 constraints" in msg
    assert "'highs'" in msg and err.value.report.termination.name == "licensingProblems"


def test_gurobi_size_limit_is_a_privopt_error_mocked(monkeypatch):
    """Without a size-limited gurobipy at hand: a runner raising gurobipy's error (errno 10010)."""
    class GurobiError(Exception):
        def __init__(self, errno, msg):
            super().__init__(errno, msg)
            self.errno = errno

    def runner(*a, **k):
        raise GurobiError(10010, "Model too large for size-limited license; visit https://gurobi.com/unrestricted")

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", runner)
    monkeypatch.setattr(_dispatch, "solver_availability", lambda name: (True, "mock"))
    with pytest.raises(SolverLicenseError) as err:
        privopt.solvers.solve(_big_lp(10), "gurobi")
    _check_licence_error(err, "gurobi")

    def other(*a, **k):
        raise GurobiError(10005, "Unable to retrieve attribute 'X'")

    monkeypatch.setitem(_dispatch._RUNNERS, "contrib", other)
    with pytest.raises(GurobiError):          # not a licence problem: not disguised as one
        privopt.solvers.solve(_big_lp(10), "gurobi")


@pytest.mark.skipif(not solver_available("gurobi"), reason="gurobipy not installed")
def test_gurobi_size_limit_is_a_privopt_error_real():
    """gurobipy's pip licence refuses > 2000 variables; privopt says so and names the alternatives."""
    import gurobipy

    try:                                       # a full licence solves it: nothing to test
        with gurobipy.Env() as env, gurobipy.Model(env=env) as probe:
            probe.addVars(2100)
            probe.optimize()
        pytest.skip("this Gurobi licence is not size-limited")
    except gurobipy.GurobiError:
        pass
    for solver in ("gurobi", "gurobi_persistent"):
        with pytest.raises(SolverLicenseError) as err:
            privopt.solvers.solve(_big_lp(), solver)
        _check_licence_error(err, solver)


# --- a weak delta warns without n_samples ---------------------------------------------

def test_weak_delta_warns_from_the_models_n():
    """privopt's models know n: delta > 1/n warns without n_samples= (issue 32)."""
    require_solver("highs")
    X = np.array([[0, 1], [1, 0], [1, 1], [2, 1], [0, 2], [1, 2]], dtype=float)
    y = np.array([1, -1, 1, 1, -1, 1])
    model = zero_one_halfspace(X, y, grid=[-1, 0, 1], norm_bound=1.5)
    with pytest.warns(WeakGuaranteeWarning, match=r"delta=0.5 exceeds 1/n"):
        privopt.opdisc(model, epsilon=1.0, delta=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakGuaranteeWarning)
        privopt.opdisc(model, epsilon=1.0, delta=1e-3, random_state=0)      # 1e-3 < 1/6: silent
    with ThreadPoolExecutor(1) as pool, pytest.warns(WeakGuaranteeWarning, match=r"exceeds 1/n"):
        warnings.simplefilter("ignore", privopt.exceptions.NoiseDominatesWarning)
        privopt.opsamp(hinge_halfspace(X, y, x_bound=2.0), epsilon=1.0, delta=0.5, n_oracle_calls=2,
                       random_state=0, executor=pool, progress=False)
