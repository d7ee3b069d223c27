"""privopt.mechanisms.rspm: calibration, the privacy derivation, exactness against brute force,
the separator set, randomness and validation.

The noise scale b = 2 * Delta * m / epsilon is privopt's own derivation (see
privopt/calibration/_rspm.py); the tests in the "derivation" section check its
steps numerically, including that the factor 2 (replace-one neighbours) is needed.
"""

from __future__ import annotations

import importlib
import itertools
import math
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.stats import laplace

import privopt
from privopt import calibration
from privopt._random import SecureGenerator
from privopt.exceptions import (
    ModelError,
    NoiseDisclosureWarning,
    ParameterError,
    ParameterTypeError,
    UnknownSolverError,
)
from privopt.mechanisms import MECHANISMS, rspm
from privopt.models import ModelInfo, attach_info, rspm_halfspace

from tests.conftest import require_solver

# ---------------------------------------------------------------------------
# numpy reference implementation (independent of the MILP)
# ---------------------------------------------------------------------------


def candidates(d):
    """{-1, 0, 1}^d as an array (3^d, d)."""
    return np.array(list(itertools.product((-1, 0, 1), repeat=d)), dtype=float)


def separator_values(W):
    """h_w(u) for u in U = (+e_1..+e_d, -e_1..-e_d): (1[w_j = 1], 1[w_j = -1])."""
    return np.hstack([(W == 1).astype(float), (W == -1).astype(float)])


def errors(W, X, y):
    """0/1 error COUNT of each candidate; rule +1 iff <w, x> >= 0 (the models' tie rule)."""
    pred = np.where(X @ W.T >= 0, 1, -1)  # (n, |W|)
    return (pred != y[:, None]).sum(axis=0).astype(float)


def brute_force(X, y, xi):
    """Candidates sorted by err(w) + sum_u xi_u h_w(u); returns (values, candidates)."""
    W = candidates(X.shape[1])
    vals = errors(W, X, y) + separator_values(W) @ xi
    order = np.argsort(vals, kind="stable")
    return vals[order], W[order]


def data(n, d, seed, values=(-2, -1, 0, 1, 2)):
    rng = np.random.default_rng(seed)
    return rng.choice(np.asarray(values), size=(n, d)).astype(float), rng.choice([-1, 1], size=n)


# ---------------------------------------------------------------------------
# calibration against hand-computed values
# ---------------------------------------------------------------------------

def test_noise_scale_hand_values():
    # Adult: d = 23, m = 2d = 46, epsilon = 1: b = 2 * 1 * 46 / 1 = 92
    assert calibration.rspm_noise_scale(1.0, 0.0, 46) == pytest.approx(92.0, rel=1e-15)
    # epsilon = 0.5, m = 4: b = 2 * 4 / 0.5 = 16; delta is not used by the Laplace variant
    assert calibration.rspm_noise_scale(0.5, 1e-6, 4) == pytest.approx(16.0, rel=1e-15)
    assert calibration.rspm_noise_scale(0.5, 0.0, 4) == calibration.rspm_noise_scale(0.5, 0.1, 4)
    # error RATE instead of count: Delta = 1/n; n = 100, epsilon = 2, m = 6: 2 * 0.01 * 6 / 2 = 0.06
    assert calibration.rspm_noise_scale(2.0, 0.0, 6, sensitivity=0.01) == pytest.approx(0.06, rel=1e-12)


@pytest.mark.parametrize("kwargs, parameter, error", [
    (dict(epsilon=0.0), "epsilon", ParameterError),
    (dict(epsilon=float("nan")), "epsilon", ParameterError),
    (dict(delta=1.0), "delta", ParameterError),
    (dict(delta=-0.1), "delta", ParameterError),
    (dict(n_separators=0), "n_separators", ParameterError),
    (dict(n_separators=2.5), "n_separators", ParameterTypeError),
    (dict(noise="gaussian"), "noise", ParameterError),
    (dict(noise="cauchy"), "noise", ParameterError),
    (dict(noise=1), "noise", ParameterTypeError),
    (dict(sensitivity=0.0), "sensitivity", ParameterError),
])
def test_noise_scale_rejects(kwargs, parameter, error):
    args = dict(epsilon=1.0, delta=0.0, n_separators=4, noise="laplace")
    args.update(kwargs)
    sens = args.pop("sensitivity", 1.0)
    with pytest.raises(error) as err:
        calibration.rspm_noise_scale(args["epsilon"], args["delta"], args["n_separators"], args["noise"],
                                     sensitivity=sens)
    assert err.value.parameter == parameter


# ---------------------------------------------------------------------------
# the separator set
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_separator_set_separates(d):
    """Every two distinct w in {-1,0,1}^d differ on some u in U = {+e_j, -e_j}."""
    W = candidates(d)
    H = separator_values(W)
    assert H.shape == (3**d, 2 * d)
    for a, b in itertools.combinations(range(len(W)), 2):
        assert np.any(H[a] != H[b]), (W[a], W[b])
    # and h_w(u) is h_w(x) = 1[<w, x> >= 1/2] evaluated at x = u (a halfspace at u)
    U = np.vstack([np.eye(d), -np.eye(d)])
    assert np.array_equal(H, (W @ U.T >= 0.5).astype(float))
    # the encoding determines w: w = p - n
    assert np.array_equal(H[:, :d] - H[:, d:], W)


def test_half_of_the_separator_set_does_not_separate():
    """The check above can fail: U = {+e_j} alone does not tell w_j = 0 from w_j = -1."""
    d = 2
    W = candidates(d)
    H = separator_values(W)[:, :d]
    assert any(np.array_equal(H[a], H[b]) for a, b in itertools.combinations(range(len(W)), 2))


# ---------------------------------------------------------------------------
# the derivation of b (privopt's own; see privopt/calibration/_rspm.py)
# ---------------------------------------------------------------------------

def _shift(w_star, delta_loss=1.0):
    h = separator_values(w_star[None, :])[0]
    return np.where(h == 1, -2.0 * delta_loss, 2.0 * delta_loss)


def test_shift_step_on_neighbouring_data_sets():
    """Step (2): if w* is the argmin for (D, xi), it is the argmin for (D', xi + c), D' = D with
    one record replaced, c_u = -2 if h_{w*}(u) = 1 else +2; and ||c||_1 = 2m gives
    exp(-||c||_1 / b) = exp(-epsilon) at b = rspm_noise_scale."""
    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(300):
        d = 2 if trial % 2 else 3
        X, y = data(7, d, seed=1000 + trial)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(len(y))
        X2[i] = rng.choice([-2, -1, 0, 1, 2], size=d)
        y2[i] = rng.choice([-1, 1])
        eps = 2.0
        b = calibration.rspm_noise_scale(eps, 0.0, 2 * d)
        xi = rng.laplace(0.0, b, size=2 * d)
        vals, W = brute_force(X, y, xi)
        if vals[1] - vals[0] < 1e-9:
            continue
        w_star = W[0]
        c = _shift(w_star)
        assert np.abs(c).sum() == pytest.approx(2 * (2 * d))
        assert math.exp(-np.abs(c).sum() / b) == pytest.approx(math.exp(-eps))
        vals2, W2 = brute_force(X2, y2, xi + c)
        assert vals2[1] - vals2[0] > 0  # unique
        assert np.array_equal(W2[0], w_star)
        checked += 1
    assert checked > 250


def test_shift_of_one_per_coordinate_is_not_enough():
    """The factor 2: replacing one record can move the loss DIFFERENCE of two candidates by 2.
    d = 1, D = {(x=-1, y=-1)}, D' = {(x=-1, y=+1)}: err_D = (1, 1, 0), err_D' = (0, 0, 1) for
    w = (-1, 0, 1).  With xi = (0.9, 0), w* = 1; a shift of +-1 loses w*, +-2 keeps it."""
    X, y = np.array([[-1.0]]), np.array([-1])
    X2, y2 = np.array([[-1.0]]), np.array([1])
    W = candidates(1)
    assert np.array_equal(errors(W, X, y), [1, 1, 0])
    assert np.array_equal(errors(W, X2, y2), [0, 0, 1])
    xi = np.array([0.9, 0.0])
    _, order = brute_force(X, y, xi)
    assert order[0][0] == 1
    _, half = brute_force(X2, y2, xi + _shift(order[0], delta_loss=0.5))
    _, full = brute_force(X2, y2, xi + _shift(order[0], delta_loss=1.0))
    assert half[0][0] != 1
    assert full[0][0] == 1


def _exact_probabilities_d1(L, b, h=0.005, R=60.0):
    """P[argmin = -1, 0, 1] of L(w) + xi_p 1[w=1] + xi_n 1[w=-1], xi ~ Lap(b)^2, by integrating
    over xi_p on a fine grid and using the Laplace tail for xi_n in closed form."""
    Lm, L0, L1 = L
    s = np.arange(-R, R, h) + h / 2
    ws = laplace.pdf(s, scale=b) * h
    p1 = float(np.sum(ws * (s < L0 - L1) * laplace.sf(L1 + s - Lm, scale=b)))
    p0 = float(laplace.sf(L0 - L1, scale=b) * laplace.sf(L0 - Lm, scale=b))
    return np.array([1.0 - p1 - p0, p0, p1])


def test_privacy_loss_is_epsilon_and_tight_for_d1():
    """Exact output distributions for d = 1 over every pair of loss vectors L, L' in {0,1,2}^3
    with |L(w) - L'(w)| <= 1 for each w (what replacing one record allows): the largest
    |log P_L[w] / P_L'[w]| is epsilon at b = rspm_noise_scale (attained), and 2 epsilon at half
    of it -- so the scale is not slack in this argument and cannot be halved."""
    eps = 1.0
    b = calibration.rspm_noise_scale(eps, 0.0, 2)

    def worst(scale):
        probs = {L: _exact_probabilities_d1(L, scale) for L in itertools.product(range(-1, 4), repeat=3)}
        out = 0.0
        for L in itertools.product(range(3), repeat=3):
            for dl in itertools.product((-1, 0, 1), repeat=3):
                L2 = tuple(a + b for a, b in zip(L, dl))
                out = max(out, float(np.max(np.abs(np.log(probs[L] / probs[L2])))))
        return out

    assert worst(b) == pytest.approx(eps, abs=2e-3)
    assert worst(b / 2) == pytest.approx(2 * eps, abs=2e-3)


# ---------------------------------------------------------------------------
# the mechanism: exact argmin, every installed solver
# ---------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
@pytest.mark.parametrize("d", [2, 3])
def test_rspm_matches_brute_force_every_solver(milp_solver, d):
    X, y = data(12, d, seed=d)
    model = rspm_halfspace(X, y)
    seen = set()
    for seed in range(8):
        res = rspm(model, epsilon=3.0, solver=milp_solver, random_state=seed, return_noise=True, keep_report=True)
        assert res.certified and res.report.certified_optimal
        assert res.noise.shape == (2 * d,)
        vals, W = brute_force(X, y, res.noise)
        if vals[1] - vals[0] > 1e-5:
            assert np.array_equal(res.weights, W[0]), (seed, res.noise, vals[:3], W[:3])
        seen.add(tuple(res.weights))
    assert len(seen) > 1  # the noise does move the answer


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
@pytest.mark.parametrize("build", ["per_record", "intercept"])
def test_rspm_matches_brute_force_model_variants(build):
    require_solver("highs")
    d = 2
    X, y = data(10, d, seed=5)
    if build == "per_record":
        model = rspm_halfspace(X, y, merge_rows=False)
        Xb = X
    else:
        model = rspm_halfspace(X, y, fit_intercept=True)
        Xb = np.hstack([X, np.ones((len(y), 1))])
    for seed in range(10):
        res = rspm(model, epsilon=2.0, random_state=seed, return_noise=True)
        vals, W = brute_force(Xb, y, res.noise)
        if vals[1] - vals[0] > 1e-5:
            assert np.array_equal(res.weights, W[0])


def user_model(X, y, *, exclusivity=True):
    """A per-record RSPM model written by hand: w = p - n, binaries e_i for errors.
    Without ``exclusivity`` the user forgot p_j + n_j <= 1 (rspm adds it on its clone)."""
    n, d = X.shape
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(d), domain=pyo.Integers, bounds=(-1, 1))
    m.pp = pyo.Var(range(d), domain=pyo.Binary)
    m.nn = pyo.Var(range(d), domain=pyo.Binary)
    m.link = pyo.Constraint(range(d), rule=lambda m, j: m.w[j] == m.pp[j] - m.nn[j])
    if exclusivity:
        m.excl = pyo.Constraint(range(d), rule=lambda m, j: m.pp[j] + m.nn[j] <= 1)
    m.e = pyo.Var(range(n), domain=pyo.Binary)

    def fit(m, i):
        score = sum(float(X[i, j]) * m.w[j] for j in range(d))
        M = float(np.abs(X[i]).sum()) + 1
        return score >= -M * m.e[i] if y[i] > 0 else score <= -1 + M * m.e[i]

    m.fit = pyo.Constraint(range(n), rule=fit)
    m.loss = pyo.Objective(expr=sum(m.e[i] for i in range(n)))
    return m


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
@pytest.mark.parametrize("exclusivity", [True, False])
def test_rspm_on_user_model(exclusivity):
    require_solver("highs")
    X, y = data(9, 2, seed=8)
    model = user_model(X, y, exclusivity=exclusivity)
    public = ["link", "excl", "w"] if exclusivity else ["link", "w"]   # the encoding of {-1, 0, 1}: public
    with pytest.raises(ModelError, match="link"):              # not declared: refused before any solve
        rspm(model, epsilon=2.0, separator_vars=("pp", "nn"), sensitivity=1.0, random_state=0, n_samples=9)
    for seed in range(10):
        res = rspm(model, epsilon=2.0, separator_vars=("pp", "nn"), sensitivity=1.0, n_samples=9,
                   random_state=seed, return_noise=True, public_constraints=public)
        vals, W = brute_force(X, y, res.noise)
        if vals[1] - vals[0] > 1e-5:
            assert np.array_equal(res.weights, W[0])
    # the same through a ModelInfo
    attach_info(model, ModelInfo(weights="w", loss_range=(0.0, 1.0), n_samples=9, public_constraints=tuple(public),
                                 extra={"separator_vars": ("pp", "nn")}))
    res = rspm(model, epsilon=2.0, random_state=3)
    assert res.parameters["sensitivity"] == 1.0 and res.parameters["n_samples"] == 9


# ---------------------------------------------------------------------------
# result, randomness, the user's model
# ---------------------------------------------------------------------------

def _small():
    X, y = data(8, 3, seed=2)
    return rspm_halfspace(X, y)


def test_result_parameters_and_registry():
    require_solver("highs")
    model = _small()
    res = rspm(model, epsilon=0.5, random_state=0)
    d = 3
    assert res.mechanism == "rspm"
    assert res.epsilon == 0.5 and res.delta == 0.0
    assert res.parameters["requested_delta"] == 0.0
    with pytest.warns(DeprecationWarning, match="RSPM is pure epsilon-DP"):
        old = rspm(model, epsilon=0.5, delta=1e-4, random_state=0)     # deprecated, ignored
    assert old.delta == 0.0 and old.parameters["requested_delta"] == 1e-4
    assert old.weights.tolist() == res.weights.tolist()
    assert res.parameters["noise_scale"] == pytest.approx(4 * d / 0.5)
    assert res.parameters["noise"] == "laplace"
    assert res.parameters["n_separators"] == 2 * d
    assert res.parameters["dim"] == d and res.parameters["sensitivity"] == 1.0
    assert res.noise is None
    assert set(np.unique(res.weights)) <= {-1.0, 0.0, 1.0}
    assert MECHANISMS["rspm"] is rspm


def test_weights_positional_as_in_opdisc_and_opsamp():
    require_solver("highs")
    model = _small()
    a = rspm(model, "w", epsilon=0.5, random_state=0)
    b = rspm(model, model.w, epsilon=0.5, random_state=0)
    c = rspm(model, weights="w", epsilon=0.5, random_state=0)
    assert a.weights.tolist() == b.weights.tolist() == c.weights.tolist()


def test_private_decorator_runs_rspm():
    require_solver("highs")
    X, y = data(8, 2, seed=4)
    build = privopt.private("rspm", epsilon=1.0, random_state=1)(rspm_halfspace)
    res = build(X, y)
    assert res.mechanism == "rspm" and res.weights.shape == (2,)


def test_model_is_not_modified():
    require_solver("highs")
    model = _small()
    before = sorted(c.name for c in model.component_objects(descend_into=True))
    rspm(model, epsilon=1.0, random_state=0)
    after = sorted(c.name for c in model.component_objects(descend_into=True))
    assert before == after
    assert model.loss.active


def test_reproducible_under_a_seed():
    require_solver("highs")
    model = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        a = rspm(model, epsilon=1.0, random_state=42, return_noise=True)
        b = rspm(model, epsilon=1.0, random_state=42, return_noise=True)
        c = rspm(model, epsilon=1.0, random_state=43, return_noise=True)
    assert np.array_equal(a.noise, b.noise) and np.array_equal(a.weights, b.weights)
    assert not np.array_equal(a.noise, c.noise)
    # the seed's stream: Lap(b) draws of numpy's default_rng, +e_j first
    expected = np.random.default_rng(42).laplace(0.0, a.parameters["noise_scale"], size=6)
    assert np.array_equal(a.noise, expected)


def test_return_noise_warns():
    require_solver("highs")
    with pytest.warns(NoiseDisclosureWarning):
        res = rspm(_small(), epsilon=1.0, random_state=0, return_noise=True)
    assert res.noise.shape == (6,)


def test_random_state_none_uses_secure_generator(monkeypatch):
    require_solver("highs")
    calls = []
    original = SecureGenerator.laplace

    def spy(self, loc=0.0, scale=1.0, size=None):
        calls.append((loc, scale, size))
        return original(self, loc, scale, size)

    monkeypatch.setattr(SecureGenerator, "laplace", spy)
    res = rspm(_small(), epsilon=1.0)
    assert calls == [(0.0, res.parameters["noise_scale"], 6)]


def test_noise_distribution_is_laplace_with_the_scale():
    """The draws the mechanism injects are i.i.d. Lap(b), b = 4d/epsilon."""
    require_solver("highs")
    d = 8
    X = np.vstack([np.eye(d), -np.eye(d)])
    model = rspm_halfspace(X, np.r_[np.ones(d, int), -np.ones(d, int)])
    draws = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        for seed in range(30):
            draws.append(rspm(model, epsilon=2.0, random_state=seed, return_noise=True).noise)
    draws = np.concatenate(draws)
    from scipy import stats
    b = 4 * d / 2.0
    assert stats.kstest(draws, "laplace", args=(0.0, b)).pvalue > 1e-3
    assert stats.kstest(draws, "laplace", args=(0.0, b / 2)).pvalue < 1e-3


def test_solver_sees_err_plus_xi_on_p_and_n(monkeypatch):
    """The objective handed to the solver is err(w) + sum_j xi_j p_j + xi_{d+j} n_j: same
    constant and e-coefficients as the loss, +xi (not -xi) on the separator binaries, nothing
    else; the user's encoding is kept and rspm's own copy of it is added."""
    require_solver("highs")
    from pyomo.repn import generate_standard_repn

    mod = importlib.import_module("privopt.mechanisms.rspm")
    seen = {}
    real = mod.certified_solve

    def capture(model, *args, **kwargs):
        seen["model"] = model
        return real(model, *args, **kwargs)

    monkeypatch.setattr(mod, "certified_solve", capture)
    model = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        res = rspm(model, epsilon=1.0, random_state=7, return_noise=True)
    clone = seen["model"]
    objs = list(clone.component_data_objects(pyo.Objective, active=True))
    assert len(objs) == 1 and objs[0].sense == pyo.minimize
    got = generate_standard_repn(objs[0].expr)
    ref = generate_standard_repn(model.loss.expr)
    coef = {v.name: c for v, c in zip(got.linear_vars, got.linear_coefs)}
    ref_coef = {v.name: c for v, c in zip(ref.linear_vars, ref.linear_coefs)}
    d = 3
    for j in range(d):
        assert coef.pop(f"p[{j}]") == pytest.approx(res.noise[j])
        assert coef.pop(f"n[{j}]") == pytest.approx(res.noise[d + j])
    assert coef == pytest.approx(ref_coef)
    assert got.constant == pytest.approx(ref.constant)
    assert clone.pn_excl.active and clone.w_link.active
    enc = clone.find_component("_privopt_rspm_encoding")
    assert len(enc.exclusive) == d and len(enc.link) == d


# ---------------------------------------------------------------------------
# validation: all before any noise is drawn or any solve starts
# ---------------------------------------------------------------------------

@pytest.fixture
def no_solve(monkeypatch):
    mod = importlib.import_module("privopt.mechanisms.rspm")  # the module, not the function

    def boom(*a, **k):
        raise AssertionError("validation must happen before noise is drawn or the solver runs")

    monkeypatch.setattr(mod, "certified_solve", boom)
    monkeypatch.setattr(mod, "check_random_state", boom)


def _maximized():
    m = _small()
    m.loss.sense = pyo.maximize
    return m


def _without_info():
    X, y = data(6, 2, seed=1)
    return user_model(X, y)


@pytest.mark.parametrize("make, kwargs, parameter, error", [
    (_small, dict(epsilon=0.0), "epsilon", ParameterError),
    (_small, dict(epsilon="1"), "epsilon", ParameterTypeError),
    (_small, dict(epsilon=1.0, delta=1.0), "delta", ParameterError),
    (_small, dict(epsilon=1.0, delta=-1e-3), "delta", ParameterError),
    (_small, dict(epsilon=1.0, noise="gaussian"), "noise", ParameterError),
    (_small, dict(epsilon=1.0, noise="exponential"), "noise", ParameterError),
    (_small, dict(epsilon=1.0, noise=None), "noise", ParameterTypeError),
    (_small, dict(epsilon=1.0, on_failure="ignore"), "on_failure", ParameterError),
    (_small, dict(epsilon=1.0, solver="no_such_solver"), "solver", UnknownSolverError),
    (_small, dict(epsilon=1.0, separator_vars=("p", "missing")), "separator_vars", ModelError),
    (_small, dict(epsilon=1.0, separator_vars=("w", "n")), "separator_vars", ModelError),  # w not binary
    (_small, dict(epsilon=1.0, separator_vars="p"), "separator_vars", ParameterTypeError),
    (_small, dict(epsilon=1.0, weights="nope"), "weights", ModelError),
    (_small, dict(epsilon=1.0, sensitivity=-1.0), "sensitivity", ParameterError),
    (_small, dict(epsilon=1.0, return_noise="yes"), "return_noise", ParameterTypeError),
    (_maximized, dict(epsilon=1.0), "model", ModelError),
    (_without_info, dict(epsilon=1.0), "separator_vars", ModelError),
    (_without_info, dict(epsilon=1.0, separator_vars=("pp", "nn")), "sensitivity", ModelError),
])
@pytest.mark.filterwarnings("ignore:rspm\\(delta=:DeprecationWarning")
def test_validation_names_the_parameter(no_solve, make, kwargs, parameter, error):
    with pytest.raises(error) as err:
        rspm(make(), **kwargs)
    assert err.value.parameter == parameter


def test_not_a_model(no_solve):
    with pytest.raises(ModelError) as err:
        rspm("model", epsilon=1.0)
    assert err.value.parameter == "model"


def test_parameters_are_a_typed_frozen_record_read_as_the_documented_mapping():
    """RSPM's parameters: typed fields, the same values under the documented keys, frozen."""
    import dataclasses
    import pickle

    from privopt.mechanisms import RSPMParameters

    require_solver("highs")
    res = rspm(_small(), epsilon=0.5, random_state=0)
    p = res.parameters
    assert isinstance(p, RSPMParameters)
    assert list(p) == ["noise_scale", "noise", "noise_distribution", "n_separators", "separator_set",
                       "sensitivity", "dim", "requested_delta", "n_samples", "record_terms", "calibration"]
    assert p.noise_scale == p["noise_scale"] == pytest.approx(2 * 1.0 * 6 / 0.5)
    assert p.n_samples == 8 and p.noise_distribution.startswith("Laplace(0, 24) i.i.d.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.noise_scale = 1.0
    assert pickle.loads(pickle.dumps(res)).parameters == p == dict(p)
