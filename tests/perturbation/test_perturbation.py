"""The privopt.objective_perturbation transformation: exact pi(w) encoding,
getters, undo, options."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt  # noqa: F401  (registers the transformation)
from privopt.exceptions import ModelError, NotTransformedError, ParameterError, ParameterTypeError
from privopt.perturbation import (
    get_noise,
    get_normalization,
    get_original_objective,
    get_perturbation_block,
    get_perturbed_objective,
    get_weights,
    is_transformed,
    norm_levels,
    pi_value,
    revert,
)
from privopt.solvers import solve

from tests._toy import brute_force, separated, toy_data, zero_one_model
from tests.conftest import require_solver

XFRM = "privopt.objective_perturbation"
INT_GRID = (-2, -1, 0, 1, 2)
TAU_GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)


def _draws(n_draws, d, sigma, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, sigma, size=d + 1) for _ in range(n_draws)]


@pytest.mark.parametrize(
    "grid, d, norm_bound, margin",
    [
        (INT_GRID, 2, math.sqrt(5), 1.0),   # excludes the corners (+-2, +-2)
        (INT_GRID, 3, 2.0, 1.0),
        (TAU_GRID, 2, 1.2, 0.5),            # tau = 0.5 grid, ||w||^2 in multiples of 0.25
    ],
)
@pytest.mark.slow
def test_exact_argmin_matches_brute_force(milp_solver, grid, d, norm_bound, margin):
    """For many noise draws (both signs of the last coordinate) the solver's
    answer is the brute-force argmin of L(w) - <eta, pi(w)> over the grid."""
    X, y = toy_data(n=6, d=d, seed=d)
    if margin == 0.5:
        X = np.clip(X, -1, 1)  # scores are multiples of 0.5 on the tau grid
    draws = _draws(50, d, sigma=1.5, seed=11 + d)
    negatives = sum(eta[-1] < 0 for eta in draws)
    assert 10 <= negatives <= 40  # both signs are exercised
    checked = 0
    for eta in draws:
        rows = brute_force(X, y, grid, norm_bound, eta)
        if not separated(rows):
            continue
        model = zero_one_model(X, y, grid=grid, margin=margin)
        pyo.TransformationFactory(XFRM).apply_to(model, noise=eta, norm_bound=norm_bound, grid=grid)
        report = solve(model, milp_solver)
        assert report.certified_optimal
        w = tuple(round(pyo.value(model.w[j]) * 2) / 2 for j in range(d))
        assert w == rows[0][1], (eta, w, rows[:2])
        assert report.objective == pytest.approx(rows[0][0], abs=1e-6)
        checked += 1
    assert checked >= 45


@pytest.mark.parametrize("encoding", ["binary", "piecewise"])
def test_s_equals_sqrt_of_remaining_norm(encoding):
    """At the optimum s = sqrt(D^2 - ||w||^2), for the encoding valid for the sign."""
    require_solver("highs")
    X, y = toy_data(n=5, d=2, seed=3)
    rng = np.random.default_rng(5)
    for _ in range(10):
        eta = rng.normal(0, 2, size=3)
        eta[-1] = abs(eta[-1]) if encoding == "piecewise" else -abs(eta[-1])
        model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
        pyo.TransformationFactory(XFRM).apply_to(model, noise=eta, norm_bound=math.sqrt(5), pi_encoding=encoding)
        solve(model, "highs")
        info = get_normalization(model)
        assert info["pi_encoding"] == encoding
        w = np.array([pyo.value(model.w[j]) for j in range(2)])
        assert pyo.value(info["s"]) == pytest.approx(math.sqrt(max(0.0, 5 - w @ w)), abs=1e-6)
        assert pyo.value(info["squared_norm"]) == pytest.approx(w @ w, abs=1e-6)


def test_auto_encoding_follows_sign():
    X, y = toy_data(n=4, d=2)
    for last, expected in [(1.0, "piecewise"), (-1.0, "binary"), (0.0, "piecewise")]:
        model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
        pyo.TransformationFactory(XFRM).apply_to(model, noise=[0.1, 0.2, last], norm_bound=2.0)
        assert get_normalization(model)["pi_encoding"] == expected
    # with a negative scale the sign flips
    model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
    pyo.TransformationFactory(XFRM).apply_to(model, noise=[0.1, 0.2, 1.0], norm_bound=2.0, scale=-1.0)
    assert get_normalization(model)["pi_encoding"] == "binary"


def test_piecewise_refused_for_negative_sign():
    X, y = toy_data(n=4, d=2)
    model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
    with pytest.raises(ParameterError, match="piecewise"):
        pyo.TransformationFactory(XFRM).apply_to(model, noise=[0.1, 0.2, -1.0], norm_bound=2.0,
                                                 pi_encoding="piecewise")


def test_norm_levels_sqrt23_float_trap():
    D = math.sqrt(23)
    assert D**2 < 23  # the trap itself
    lv = norm_levels([tuple(range(-4, 5))] * 23, D)
    assert lv.exact and lv.bound == 23 and lv.levels[-1] == 23
    assert lv.norm_bound**2 == pytest.approx(23)


def test_norm_levels_tau_grid_in_integers():
    lv = norm_levels([TAU_GRID] * 2, 1.2)
    assert lv.unit == 0.25 and lv.bound == 5 and lv.levels == (0, 1, 2, 3, 4, 5)
    assert lv.coef[0] == (4, 1, 0, 1, 4)


def test_norm_levels_irregular_grid_enumerated():
    grid = (0.0, 1.0, math.sqrt(2))
    lv = norm_levels([grid] * 2, 2.0)
    assert not lv.exact
    assert set(np.round(lv.levels, 9)) == {0.0, 1.0, 2.0, 3.0, 4.0}


def test_norm_bound_excluding_every_point():
    with pytest.raises(ParameterError, match="norm_bound") as err:
        norm_levels([(1.0, 2.0)] * 3, 1.0)
    assert err.value.parameter == "norm_bound"


def test_norm_constraint_excludes_points_outside_ball():
    """With zero noise on w and a big push on s, the solver still cannot leave the ball."""
    require_solver("highs")
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), domain=pyo.Integers, bounds=(-2, 2))
    m.loss = pyo.Objective(expr=-10 * (m.w[0] + m.w[1]))  # wants the corner (2, 2)
    pyo.TransformationFactory(XFRM).apply_to(m, noise=[0, 0, 0], norm_bound=math.sqrt(5))
    solve(m, "highs")
    w = [round(pyo.value(m.w[j])) for j in range(2)]
    assert sorted(w) == [1, 2]


def test_create_using_leaves_original_untouched():
    X, y = toy_data(n=4, d=2)
    model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
    before = sorted(c.name for c in model.component_objects())
    new = pyo.TransformationFactory(XFRM).create_using(model, noise=[0.1, 0.2, 0.3], norm_bound=2.0,
                                                        weights=model.w)
    assert is_transformed(new) and not is_transformed(model)
    assert sorted(c.name for c in model.component_objects()) == before
    assert model.loss.active
    assert [v.name for v in get_weights(new)] == ["w[0]", "w[1]"]
    assert get_weights(new)[0].model() is new


def test_getters_and_revert():
    X, y = toy_data(n=4, d=2)
    model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
    with pytest.raises(NotTransformedError):
        get_noise(model)
    with pytest.raises(NotTransformedError):
        get_perturbation_block(model)
    eta = np.array([0.3, -0.2, 0.5])
    pyo.TransformationFactory(XFRM).apply_to(model, noise=eta, norm_bound=2.0)
    np.testing.assert_allclose(get_noise(model), eta)
    assert get_original_objective(model) is model.loss
    assert not model.loss.active and get_perturbed_objective(model).active
    blocks = [b for b in model.component_objects(pyo.Block) if b is not model]
    assert len(blocks) == 1  # everything on one block
    with pytest.raises(ModelError, match="already"):
        pyo.TransformationFactory(XFRM).apply_to(model, noise=eta, norm_bound=2.0)
    revert(model)
    assert model.loss.active and not is_transformed(model)
    assert [b for b in model.component_objects(pyo.Block) if b is not model] == []
    active = list(model.component_data_objects(pyo.Objective, active=True))
    assert active == [model.loss]


def test_unnormalized_linear_term():
    require_solver("highs")
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(3), bounds=(-1, 1))
    m.loss = pyo.Objective(expr=sum(0 * m.w[j] for j in range(3)) + 1)
    eta = np.array([2.0, -3.0, 0.5])
    pyo.TransformationFactory(XFRM).apply_to(m, noise=eta, normalize=False)
    solve(m, "highs")
    np.testing.assert_allclose([pyo.value(m.w[j]) for j in range(3)], np.sign(eta))
    with pytest.raises(NotTransformedError):
        get_normalization(m)


def test_reuse_of_existing_grid_encoding():
    require_solver("highs")
    grid = INT_GRID
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), domain=pyo.Integers, bounds=(-2, 2))
    m.r = pyo.Var([(j, k) for j in range(2) for k in range(5)], domain=pyo.Binary)
    m.one = pyo.Constraint(range(2), rule=lambda m, j: sum(m.r[j, k] for k in range(5)) == 1)
    m.link = pyo.Constraint(range(2), rule=lambda m, j: m.w[j] == sum(grid[k] * m.r[j, k] for k in range(5)))
    m.loss = pyo.Objective(expr=m.w[0] - m.w[1])
    pyo.TransformationFactory(XFRM).apply_to(m, noise=[1.0, 0.5, -2.0], norm_bound=2.0, grid_encoding="r")
    blk = get_perturbation_block(m)
    assert not hasattr(blk, "r") and get_normalization(m)["r"] is m.r
    report = solve(m, "highs")
    assert report.certified_optimal


@pytest.mark.parametrize(
    "kwargs, exc, parameter",
    [
        ({"noise": [0.1, 0.2]}, ParameterError, "noise"),         # needs d + 1
        ({"noise": [0.1, float("nan"), 0.3]}, ParameterError, "noise"),
        ({"noise": [0.1, 0.2, 0.3], "norm_bound": -1}, ParameterError, "norm_bound"),
        ({"noise": [0.1, 0.2, 0.3]}, ParameterError, "norm_bound"),  # missing
        ({"noise": [0.1, 0.2, 0.3], "norm_bound": 2, "weights": 5}, ParameterTypeError, "weights"),
        ({"noise": [0.1, 0.2, 0.3], "norm_bound": 2, "weights": "nope"}, ModelError, "weights"),
        ({"noise": [0.1, 0.2, 0.3], "norm_bound": 0.5, "grid": (1.0, 2.0)}, ParameterError, "norm_bound"),
    ],
)
def test_transformation_errors(kwargs, exc, parameter):
    X, y = toy_data(n=4, d=2)
    model = zero_one_model(X, y, grid=INT_GRID, margin=1.0)
    with pytest.raises(exc) as err:
        pyo.TransformationFactory(XFRM).apply_to(model, **kwargs)
    assert getattr(err.value, "parameter", None) == parameter or parameter in str(err.value)


def test_pi_value_on_sphere():
    w = np.array([1.0, -2.0])
    p = pi_value(w, 3.0)
    assert np.linalg.norm(p) == pytest.approx(1.0)
    np.testing.assert_allclose(p, [1 / 3, -2 / 3, 2 / 3])
