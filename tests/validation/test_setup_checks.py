"""One setup check: the mechanisms check solver limits, options, availability and
the one objective once (mechanisms/_checks.py), and privopt.solvers.solve does
not repeat what they checked; one objective check with one exception type;
check_bool."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt._validation import check_bool, check_model_objective
from privopt.exceptions import ModelError, ParameterError, ParameterTypeError
from privopt.models import rspm_halfspace, zero_one_halfspace
from privopt.mechanisms import _checks as checks
from privopt.solvers import _dispatch
from privopt.solvers import _options as solve_options

from tests.conftest import require_solver


def _data(n=10, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    y = np.where(X.sum(axis=1) + rng.normal(0, 0.5, n) > 0, 1, -1)
    return X, y


def _spy(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("mechanism", ["opdisc", "rspm", "opsamp"])
def test_mechanisms_run_the_setup_checks_once(mechanism, monkeypatch):
    require_solver("highs")
    X, y = _data()
    limits = _spy(monkeypatch, solve_options, "check_solve_limits")   # the record's validation (SolveOptions)
    names = _spy(monkeypatch, checks, "check_option_names")
    limits_again = _spy(monkeypatch, _dispatch, "check_solve_limits")  # solve()'s own
    names_again = _spy(monkeypatch, _dispatch, "check_option_names")
    if mechanism == "opdisc":
        model = zero_one_halfspace(X, y, grid=[-1, 0, 1], norm_bound=1.5)
        privopt.opdisc(model, epsilon=1.0, delta=1e-3, random_state=0, solver_options={"presolve": "on"})
        solves = 1
    elif mechanism == "rspm":
        model = rspm_halfspace(X, y)
        privopt.rspm(model, epsilon=1.0, random_state=0, solver_options={"presolve": "on"})
        solves = 1
    else:
        from concurrent.futures import ThreadPoolExecutor

        from privopt.models import hinge_halfspace

        model = hinge_halfspace(X, y, x_bound=2.0)
        with ThreadPoolExecutor(1) as pool, pytest.warns(privopt.exceptions.NoiseDominatesWarning):
            privopt.opsamp(model, epsilon=1.0, delta=1e-3, n_oracle_calls=4, random_state=0, executor=pool,
                           progress=False, persistent=False, solver_options={"presolve": "on"})
        solves = 4
    assert solves >= 1
    # the limits when the mechanism's record is built, the option names once in check_run; never again in
    # solve() (which ran `solves` times)
    assert len(limits) >= 1 and len(names) == 1
    assert not limits_again and not names_again


def test_solve_alone_still_checks_everything():
    require_solver("highs")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o1 = pyo.Objective(expr=m.x)
    m.o2 = pyo.Objective(expr=-m.x)
    with pytest.raises(ModelError, match="exactly one active objective"):
        privopt.solvers.solve(m)
    m.o2.deactivate()
    with pytest.raises(ParameterError, match="time_limit"):
        privopt.solvers.solve(m, time_limit=-1)
    with pytest.raises(privopt.exceptions.SolverOptionError, match="no option"):
        privopt.solvers.solve(m, options={"presolv": "on"})
    assert privopt.solvers.solve(m).certified_optimal


def test_solve_accepts_solver_options_as_the_mechanisms_spell_it():
    require_solver("highs")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x)
    a = privopt.solvers.solve(m, solver_options={"presolve": "off"})
    b = privopt.solvers.solve(m, options={"presolve": "off"})
    assert a.options["presolve"] == b.options["presolve"] == "off"
    with pytest.raises(privopt.exceptions.SolverOptionError) as err:
        privopt.solvers.solve(m, solver_options={"presolv": "on"})
    assert err.value.parameter == "solver_options"
    with pytest.raises(ParameterError, match="not both"):
        privopt.solvers.solve(m, options={}, solver_options={})


def test_one_objective_check_one_exception_type():
    m = pyo.ConcreteModel()
    m.w = pyo.Var([0, 1], bounds=(-1, 1))
    m.a = pyo.Objective(expr=m.w[0])
    m.b = pyo.Objective(expr=m.w[1])
    for call in (lambda: check_model_objective(m),
                 lambda: pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
                     m, weights=m.w, noise=np.zeros(2), normalize=False),
                 lambda: privopt.solvers.solve(m),
                 lambda: privopt.opsamp(m, epsilon=1.0, delta=1e-3, lipschitz_l1=1.0, n_samples=5,
                                        progress=False)):
        with pytest.raises(ModelError, match="exactly one active objective") as err:
            call()
        assert isinstance(err.value, ParameterError) and err.value.parameter == "model"
    m.b.deactivate()
    m.a.sense = pyo.maximize
    with pytest.raises(ModelError, match="maximized"):
        pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
            m, weights=m.w, noise=np.zeros(2), normalize=False)
    assert check_model_objective(m, minimize=False) is m.a      # solve() accepts a maximization


def test_check_bool():
    assert check_bool(True, "x") is True and check_bool(np.bool_(False), "x") is False
    for bad in (1, 0, None, "True"):
        with pytest.raises(ParameterTypeError, match="flag must be True or False") as err:
            check_bool(bad, "flag")
        assert err.value.parameter == "flag"
    m = pyo.ConcreteModel()
    m.w = pyo.Var([0, 1], bounds=(-1, 1))
    m.o = pyo.Objective(expr=m.w[0])
    with pytest.raises(ParameterTypeError) as err:
        pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
            m, weights=m.w, noise=np.zeros(2), normalize=False, mutable_noise="yes")
    assert err.value.parameter == "mutable_noise"        # used to say "normalize"


def test_rspm_weights_lookup_is_weights_of():
    require_solver("highs")
    X, y = _data()
    model = rspm_halfspace(X, y)
    by_name = privopt.rspm(model, weights="w", epsilon=1.0, random_state=3)
    by_var = privopt.rspm(model, weights=model.w, epsilon=1.0, random_state=3)
    by_list = privopt.rspm(model, weights=[model.w[j] for j in model.w], epsilon=1.0, random_state=3)
    assert by_name.weights.tolist() == by_var.weights.tolist() == by_list.weights.tolist()
    with pytest.raises(ModelError) as err:
        privopt.rspm(model, weights="nope", epsilon=1.0, random_state=3)
    assert err.value.parameter == "weights"
