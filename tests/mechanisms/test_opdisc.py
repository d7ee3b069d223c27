"""privopt.opdisc end to end: calibration, exactness, distribution, validation, failure policy."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy import stats

import privopt
from privopt import calibration
from privopt._random import SecureGenerator
from privopt.exceptions import (
    ModelError,
    NoiseDisclosureWarning,
    NotCertifiedError,
    ParameterError,
    ParameterTypeError,
    SolverNotAvailableError,
    UncertifiedReleaseWarning,
    UnknownSolverError,
    UnprovenGuaranteeWarning,
)
from privopt.models import ModelInfo, attach_info
from privopt.perturbation import pi_value

from tests._toy import brute_force, separated, toy_data, zero_one_loss, zero_one_model
from tests.conftest import require_solver

INT_GRID = (-2, -1, 0, 1, 2)


# --- calibration against hand-computed values ----------------------------------

def test_paper_sigma_hand_values():
    # delta = e^-4 -> sqrt(ln 1/delta) = 2; sigma = 7 * 1 * 2^2 * 2 / (0.5 * 2) = 56
    assert calibration.opdisc_sigma_paper(2.0, math.exp(-4), 1.0, 2.0, 0.5) == pytest.approx(56.0, rel=1e-12)
    # 7 * 2 * 9 * sqrt(ln 1e4) / (0.5 * 0.5) = 504 * 3.0348542587702925
    assert calibration.opdisc_sigma_paper(0.5, 1e-4, 2.0, 3.0, 0.5) == pytest.approx(1529.5665464202, rel=1e-9)
    # the paper's Adult setup: G = 1, D^2 = 23, tau = 1, delta = 1/n^2, n = 15682
    n = 15682
    expected = 7 * 23 * math.sqrt(2 * math.log(n))
    assert calibration.opdisc_sigma_paper(1.0, 1 / n**2, 1.0, math.sqrt(23), 1.0) == pytest.approx(expected, rel=1e-12)
    assert calibration.opdisc_sigma(1.0, 1 / n**2, 1.0, math.sqrt(23), 1.0, calibration="paper") == \
        pytest.approx(expected, rel=1e-12)


def test_shift_hand_value():
    assert calibration.opdisc_shift(1.5, 2.0, 0.5) == pytest.approx(4 * 1.5 * 4 / 0.5)


def _delta_monte_carlo(sigma, eps, c, d, n=2_000_000, seed=0):
    """The (d+1)-dimensional expectation, sampled directly: eta ~ N(0, sigma^2 I),
    worst-case privacy loss c ||eta|| / sigma^2 + c^2 / (2 sigma^2)."""
    eta = np.random.default_rng(seed).normal(0.0, sigma, size=(n, d + 1))
    loss = c * np.linalg.norm(eta, axis=1) / sigma**2 + c**2 / (2 * sigma**2)
    vals = np.maximum(0.0, -np.expm1(eps - loss))
    return vals.mean(), vals.std() / math.sqrt(n)


@pytest.mark.parametrize("d,eps,delta", [(2, 1.0, 1e-3), (5, 0.5, 1e-2), (1, 3.0, 1e-3)])
def test_proven_delta_matches_monte_carlo(d, eps, delta):
    G, D, tau = 1.0, 2.0, 1.0
    c = 4 * G * D**2 / tau
    sigma = calibration.opdisc_sigma_proven(eps, delta, G, D, tau, d)
    mean, se = _delta_monte_carlo(sigma, eps, c, d)
    assert abs(mean - delta) < 5 * se + 1e-4 * delta
    # and at a fixed sigma off the calibration
    mean, se = _delta_monte_carlo(0.8 * sigma, eps, c, d, seed=1)
    assert calibration.opdisc_delta(0.8 * sigma, eps, G, D, tau, d) == pytest.approx(mean, abs=5 * se)


def test_proven_sigma_done_when_value_and_minimality():
    # d = 2, eps = 1, delta = 1e-6, G = 1, D = 2, tau = 1: 79.9 against the paper's 104.1
    sigma = calibration.opdisc_sigma(1.0, 1e-6, 1.0, 2.0, 1.0, 2)
    assert sigma == pytest.approx(79.918, abs=0.01)
    assert calibration.opdisc_sigma_paper(1.0, 1e-6, 1.0, 2.0, 1.0) == pytest.approx(104.074, abs=0.01)
    assert calibration.opdisc_delta(sigma, 1.0, 1.0, 2.0, 1.0, 2) <= 1e-6
    assert calibration.opdisc_delta(sigma * (1 - 1e-6), 1.0, 1.0, 2.0, 1.0, 2) > 1e-6


@pytest.mark.parametrize("d,low,high", [(2, 0.71, 0.80), (10, 0.89, 0.98), (23, 1.09, 1.17), (50, 1.37, 1.45)])
def test_proven_to_paper_ratio_by_dimension(d, low, high):
    n = 12546
    delta, D = 1.0 / n**2, math.sqrt(d)
    for eps in (0.1, 0.5, 1.0, 2.0):
        ratio = (calibration.opdisc_sigma_proven(eps, delta, 1.0, D, 1.0, d)
                 / calibration.opdisc_sigma_paper(eps, delta, 1.0, D, 1.0))
        assert low <= ratio <= high, (d, eps, ratio)


def test_paper_sigma_provable_delta_exceeds_the_claim():
    # At the paper's sigma, d = 23, eps = 1, delta = 1/12546^2 (6.4e-9), the delta privopt
    # can prove is about 4.6e-6.
    n = 12546
    sigma = calibration.opdisc_sigma_paper(1.0, 1 / n**2, 1.0, math.sqrt(23), 1.0)
    assert calibration.opdisc_delta(sigma, 1.0, 1.0, math.sqrt(23), 1.0, 23) == pytest.approx(4.55e-6, rel=0.01)


def test_paper_argument_range():
    # z = s eps - 1/(2s), s = 7 sqrt(L) / (4 eps); the argument needs P[N(0,1) > z] <= delta
    assert calibration.opdisc_paper_argument_holds(1.0, 1e-6)
    assert calibration.opdisc_paper_argument_holds(22.0, 1e-6)
    assert not calibration.opdisc_paper_argument_holds(24.0, 1e-6)
    L = math.log(1e6)
    s = 7 * math.sqrt(L) / (4 * 24.0)
    assert stats.norm.sf(24.0 * s - 1 / (2 * s)) > 1e-6
    # the proven calibration covers any epsilon
    sigma = calibration.opdisc_sigma_proven(50.0, 1e-6, 1.0, 1.0, 1.0, 3)
    assert calibration.opdisc_delta(sigma, 50.0, 1.0, 1.0, 1.0, 3) <= 1e-6


def test_proven_sigma_needs_dim():
    with pytest.raises(ParameterError) as err:
        calibration.opdisc_sigma(1.0, 1e-6, 1.0, 2.0, 1.0)
    assert err.value.parameter == "dim"
    with pytest.raises(ParameterError) as err:
        calibration.opdisc_sigma(1.0, 1e-6, 1.0, 2.0, 1.0, 2, calibration="exact")
    assert err.value.parameter == "calibration"


def test_alpha_hand_value():
    # alpha = 2 sigma sqrt(2 (d+1) ln(4/beta)) / n; sigma = 1.5, d = 3, ln(4/beta) = 2, n = 100:
    # 2 * 1.5 * sqrt(16) / 100 = 0.12
    alpha = calibration.opdisc_utility_bound(1.5, 100, 3, beta=4 * math.exp(-2))
    assert alpha == pytest.approx(0.12, rel=1e-12)
    # with the paper's sigma it is Theorem 5's printed 14 G D^2 sqrt(2(d+1) ln(4/b) ln(1/d)) / (n tau eps)
    sigma = calibration.opdisc_sigma_paper(1.0, math.exp(-2), 1.0, 2.0, 1.0)
    alpha = calibration.opdisc_utility_bound(sigma, 100, 3, beta=4 * math.exp(-2))
    assert alpha == pytest.approx(14 * 4 * math.sqrt(32) / 100, rel=1e-12)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_sigma_rejects_bad_epsilon(bad):
    for fn in (calibration.opdisc_sigma_paper, calibration.opdisc_sigma_proven):
        args = (bad, 0.1, 1, 1, 1) + ((2,) if fn is calibration.opdisc_sigma_proven else ())
        with pytest.raises(ParameterError) as err:
            fn(*args)
        assert err.value.parameter == "epsilon"


# --- end to end --------------------------------------------------------------------

def _toy(d=2, n=6, seed=0):
    X, y = toy_data(n=n, d=d, seed=seed)
    return X, y, zero_one_model(X, y, grid=INT_GRID, margin=1.0)


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
def test_opdisc_on_user_model_every_solver(milp_solver):
    """The private answer is the exact argmin for the drawn noise, for each solver."""
    X, y, model = _toy()
    for seed in range(8):
        res = privopt.opdisc(model, epsilon=20.0, delta=0.1, lipschitz=1.0, norm_bound=math.sqrt(5),
                             n_samples=len(y), solver=milp_solver, random_state=seed, return_noise=True,
                             keep_report=True)
        rows = brute_force(X, y, INT_GRID, math.sqrt(5), res.noise)
        if separated(rows):
            assert tuple(res.weights) == rows[0][1]
        assert res.certified and res.report.certified_optimal
        assert res.mechanism == "opdisc" and res.epsilon == 20.0 and res.delta == 0.1


def test_same_answer_across_solvers():
    X, y, model = _toy(d=3, seed=4)
    answers = {}
    for name in ["highs", "glpk", "cbc", "scip"]:
        try:
            require_solver(name)
        except pytest.skip.Exception:
            continue
        res = privopt.opdisc(model, epsilon=5.0, delta=0.1, lipschitz=1.0, norm_bound=2.0,
                             n_samples=len(y), solver=name, random_state=123)
        answers[name] = tuple(res.weights)
    assert len(set(answers.values())) == 1, answers


def test_parameters_and_noise_scale():
    X, y, model = _toy()
    with pytest.warns(NoiseDisclosureWarning):
        res = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(5),
                             n_samples=6, random_state=7, return_noise=True)
    sigma = calibration.opdisc_sigma_proven(1.0, 1e-3, 1.0, math.sqrt(5), 1.0, 2)
    assert res.parameters["calibration"] == "proven" and res.neighbouring == "replace_one"
    assert res.parameters["sigma"] == pytest.approx(sigma, rel=1e-12)
    assert res.parameters["provable_delta"] <= 1e-3
    assert res.parameters["alpha_per_record"] == pytest.approx(
        calibration.opdisc_utility_bound(sigma, 6, 2), rel=1e-12)
    # the old name (a per-record bound, where selection's "alpha" is the total) still reads, with a warning
    with pytest.warns(DeprecationWarning, match=r"parameters\['alpha_per_record'\]"):
        assert res.parameters["alpha"] == res.parameters["alpha_per_record"]
    assert "alpha" not in list(res.parameters) and "alpha" not in dict(res.parameters)
    assert pickle.loads(pickle.dumps(res)).parameters == res.parameters
    assert res.parameters["separation"] == 1.0 and res.parameters["dim"] == 2
    np.testing.assert_allclose(res.noise, np.random.default_rng(7).normal(0, sigma, size=3))
    # without the flag the noise is not in the result
    res2 = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(5),
                          n_samples=6, random_state=7)
    assert res2.noise is None
    paper = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(5),
                           n_samples=6, random_state=7, calibration="paper")
    assert paper.parameters["calibration"] == "paper"
    assert paper.parameters["sigma"] == pytest.approx(7 * 5 * math.sqrt(math.log(1e3)), rel=1e-12)
    assert paper.parameters["provable_delta"] == pytest.approx(
        calibration.opdisc_delta(paper.parameters["sigma"], 1.0, 1.0, math.sqrt(5), 1.0, 2), rel=1e-12)
    np.testing.assert_array_equal(res.weights, res2.weights)
    with pytest.raises(ValueError):
        res2.weights[0] = 5.0  # read-only


@pytest.mark.slow
def test_output_distribution_matches_algorithm():
    """Over many seeds, the outputs follow the distribution Algorithm 1 defines
    (estimated independently by brute force over 20000 noise draws)."""
    require_solver("highs")
    X, y, model = _toy(d=2, seed=1)
    D, eps, delta = math.sqrt(5), 20.0, 0.1
    sigma = calibration.opdisc_sigma(eps, delta, 1.0, D, 1.0, 2)
    points = [np.array(w, float) for w in np.array(np.meshgrid(INT_GRID, INT_GRID)).T.reshape(-1, 2)
              if w @ w <= 5]
    losses = np.array([zero_one_loss(w, X, y) for w in points])
    P = np.array([pi_value(w, D) for w in points])
    rng = np.random.default_rng(2024)
    eta = rng.normal(0, sigma, size=(20000, 3))
    idx = np.argmin(losses[None, :] - eta @ P.T, axis=1)
    expected = np.bincount(idx, minlength=len(points)) / len(idx)

    n_runs = 300
    counts = np.zeros(len(points))
    lookup = {tuple(w): i for i, w in enumerate(points)}
    for seed in range(n_runs):
        res = privopt.opdisc(model, epsilon=eps, delta=delta, lipschitz=1.0, norm_bound=D,
                             n_samples=6, random_state=10_000 + seed)
        counts[lookup[tuple(res.weights)]] += 1
    keep = expected * n_runs >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum()) * n_runs
    mask = exp > 0
    chi2 = stats.chisquare(observed[mask], exp[mask] * observed[mask].sum() / exp[mask].sum())
    assert chi2.pvalue > 1e-3, (observed, exp)
    assert (counts > 0).sum() >= 3  # the mechanism really randomizes here


def test_user_model_never_modified():
    X, y, model = _toy()
    before = {c.name for c in model.component_objects()}
    values = {v.name: v.value for v in model.component_data_objects(pyo.Var)}
    privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=2.0, n_samples=6, random_state=0)
    assert {c.name for c in model.component_objects()} == before
    assert {v.name: v.value for v in model.component_data_objects(pyo.Var)} == values
    assert model.loss.active


def test_secure_source_by_default(monkeypatch):
    """random_state=None draws from the secure generator, and runs differ."""
    import importlib

    mod = importlib.import_module("privopt.mechanisms.opdisc")

    seen = []
    original = mod.check_random_state

    def spy(rs):
        rng = original(rs)
        seen.append(rng)
        return rng

    monkeypatch.setattr(mod, "check_random_state", spy)
    X, y, model = _toy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDisclosureWarning)
        a = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1, norm_bound=2, n_samples=6, return_noise=True)
        b = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1, norm_bound=2, n_samples=6, return_noise=True)
    assert all(isinstance(r, SecureGenerator) for r in seen)
    assert not np.allclose(a.noise, b.noise)


def test_metadata_defaults_from_model_info():
    X, y, model = _toy()
    attach_info(model, ModelInfo(norm_bound=math.sqrt(5), loss_range=(0.0, 1.0), n_samples=6,
                                 public_constraints=("w",)))
    res = privopt.opdisc(model, epsilon=1.0, delta=1e-3, random_state=0)
    assert res.parameters["lipschitz"] == 1.0  # (1 - 0) / tau
    assert res.parameters["norm_bound"] == pytest.approx(math.sqrt(5))
    assert res.parameters["n_samples"] == 6


@pytest.mark.filterwarnings("ignore::privopt.exceptions.NoiseDisclosureWarning")
def test_tau_grid_declared_by_user():
    require_solver("highs")
    X, y = toy_data(n=6, d=2, seed=2)
    X = np.clip(X, -1, 1)
    grid = (-1.0, -0.5, 0.0, 0.5, 1.0)
    model = zero_one_model(X, y, grid=grid, margin=0.5)
    for seed in range(5):
        res = privopt.opdisc(model, grid=grid, epsilon=40.0, delta=0.1, lipschitz=2.0, norm_bound=1.2,
                             n_samples=6, random_state=seed, return_noise=True)
        assert res.parameters["separation"] == 0.5
        rows = brute_force(X, y, grid, 1.2, res.noise)
        if separated(rows):
            assert tuple(res.weights) == rows[0][1]


def test_decorator():
    X, y = toy_data(n=6, d=2)

    @privopt.private("opdisc", epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=2.0, n_samples=6,
                     random_state=3, weights="w")
    def build(X, y):
        return zero_one_model(X, y, grid=INT_GRID, margin=1.0)

    res = build(X, y)
    assert isinstance(res, privopt.PrivateResult) and res.mechanism == "opdisc"
    direct = privopt.opdisc(build.builder(X, y), epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=2.0,
                            n_samples=6, random_state=3)
    np.testing.assert_array_equal(res.weights, direct.weights)
    # an int seed becomes one generator: later calls draw fresh noise
    noisy = privopt.private("opdisc", epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=2.0, n_samples=6,
                            random_state=3, return_noise=True)(build.builder)
    with pytest.warns(NoiseDisclosureWarning):
        first, second = noisy(X, y), noisy(X, y)
    assert not np.allclose(first.noise, second.noise)
    with pytest.raises(ParameterError):
        privopt.private("nope", epsilon=1.0)
    with pytest.raises(ParameterError):
        privopt.private("opdisc", epsilon=-1.0)


# --- validation before any solve ---------------------------------------------------

def _continuous_model():
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-1, 1))
    m.loss = pyo.Objective(expr=m.w[0] + m.w[1])
    return m


def _unbounded_model():
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), domain=pyo.Integers)
    m.loss = pyo.Objective(expr=m.w[0] + m.w[1])
    return m


def _max_model():
    X, y, m = _toy()
    m.loss.sense = pyo.maximize
    return m


def _two_objectives():
    X, y, m = _toy()
    m.other = pyo.Objective(expr=m.w[0])
    return m


GOOD = dict(epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=2.0, n_samples=6)


@pytest.mark.parametrize(
    "model_fn, changes, exc, parameter",
    [
        (None, {"epsilon": 0}, ParameterError, "epsilon"),
        (None, {"epsilon": -1}, ParameterError, "epsilon"),
        (None, {"epsilon": float("nan")}, ParameterError, "epsilon"),
        (None, {"epsilon": "1"}, ParameterTypeError, "epsilon"),
        (None, {"delta": 0}, ParameterError, "delta"),
        (None, {"delta": 1.0}, ParameterError, "delta"),
        (None, {"lipschitz": 0}, ParameterError, "lipschitz"),
        (None, {"lipschitz": None}, ParameterError, "lipschitz"),
        (None, {"norm_bound": -2}, ParameterError, "norm_bound"),
        (None, {"norm_bound": None}, ParameterError, "norm_bound"),
        (None, {"norm_bound": 0.5, "grid": (1.0, 2.0)}, ParameterError, "norm_bound"),
        (None, {"separation": 2.0}, ParameterError, "separation"),
        (None, {"n_samples": 0}, ParameterError, "n_samples"),
        (None, {"grid": (0.0, 0.0, 1.0)}, ParameterError, "grid"),
        (None, {"grid": (0.5, 1.0)}, ParameterError, "grid"),  # non-integer grid on an Integer var
        (None, {"solver": "nosuchsolver"}, UnknownSolverError, "solver"),
        (None, {"on_failure": "ignore"}, ParameterError, "on_failure"),
        (None, {"random_state": "seed"}, ParameterTypeError, "random_state"),
        (None, {"weights": 3.0}, ParameterTypeError, "weights"),
        (_continuous_model, {}, ModelError, "weights"),
        (_unbounded_model, {}, ModelError, "weights"),
        (_max_model, {}, ModelError, "model"),
        (_two_objectives, {}, ModelError, "model"),
    ],
)
def test_validation_errors(monkeypatch, model_fn, changes, exc, parameter):
    model = model_fn() if model_fn else _toy()[2]
    from privopt import oracle

    def no_solve(*a, **k):
        raise AssertionError("a solve started before validation finished")

    monkeypatch.setattr(oracle, "solve", no_solve)
    before = {v.name: (v.value, v.bounds, v.domain) for v in model.component_data_objects(pyo.Var)}
    kwargs = {**GOOD, **changes}
    with pytest.raises(exc) as err:
        privopt.opdisc(model, **kwargs)
    assert getattr(err.value, "parameter", None) == parameter
    assert parameter in str(err.value) or parameter == "model"
    after = {v.name: (v.value, v.bounds, v.domain) for v in model.component_data_objects(pyo.Var)}
    assert before == after


def test_missing_solver_before_solve(monkeypatch):
    from privopt.solvers import _dispatch

    monkeypatch.setattr(_dispatch, "solver_availability", lambda name: (False, None))
    import privopt.mechanisms._checks as checks

    monkeypatch.setattr(checks, "solver_availability", lambda name: (False, None))
    with pytest.raises(SolverNotAvailableError, match="install"):
        privopt.opdisc(_toy()[2], solver="cbc", **GOOD)


# --- failure policy ---------------------------------------------------------------------

def _hard_discrete_model():
    """OPDisc over binary x of a market-split loss: hard, so a 1 s limit is not enough."""
    from privopt.solvers.examples import market_split

    m = market_split(n_constraints=4, n_vars=40, seed=1)
    return m


def test_uncertified_raises_and_releases_nothing():
    require_solver("highs")
    m = _hard_discrete_model()
    kw = dict(weights=m.x, epsilon=700.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(40), n_samples=4,
              time_limit=1.0, random_state=0)
    with pytest.raises(NotCertifiedError) as err:
        privopt.opdisc(m, **kw)
    # a refusal after the data is read is an output: by default it carries no report (objective, bound, gap)
    assert err.value.report is None and err.value.__cause__ is None
    with pytest.raises(NotCertifiedError) as err:
        privopt.opdisc(m, **kw, keep_report=True)      # the curator's diagnostics, asked for
    assert err.value.report is not None and not err.value.report.certified_optimal
    assert all(m.x[j].value is None for j in m.J)  # the user's model got nothing


def test_uncertified_return_policy_is_explicit():
    require_solver("highs")
    m = _hard_discrete_model()
    with pytest.warns(UncertifiedReleaseWarning, match="WITHOUT a privacy guarantee"):
        res = privopt.opdisc(m, weights=m.x, epsilon=700.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(40),
                             n_samples=4, time_limit=1.0, random_state=0, on_failure="return")
    assert res.certified is False and "NOT covered" in repr(res)
    assert set(np.unique(res.weights)) <= {0.0, 1.0}


def test_paper_calibration_warns_at_large_epsilon_and_proven_does_not():
    require_solver("highs")
    X, y, model = _toy()
    kw = dict(delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(5), n_samples=6, random_state=3)
    with pytest.warns(UnprovenGuaranteeWarning, match="provable_delta"):
        res = privopt.opdisc(model, epsilon=40.0, calibration="paper", **kw)
    assert res.parameters["provable_delta"] > 1e-3  # the delta privopt can prove is worse
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnprovenGuaranteeWarning)
        res = privopt.opdisc(model, epsilon=40.0, **kw)
        privopt.opdisc(model, epsilon=1.0, calibration="paper", **kw)
    assert res.parameters["provable_delta"] <= 1e-3
    with pytest.raises(ParameterError) as err:
        privopt.opdisc(model, epsilon=1.0, calibration="proved", **kw)
    assert err.value.parameter == "calibration"


def test_results_keep_the_users_weight_labels():
    require_solver("highs")
    import pyomo.environ as pyo

    X = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]], dtype=float)
    y = np.array([1, -1, 1, -1, 1, -1])
    m = pyo.ConcreteModel()
    m.w = pyo.Var(["age", "income"], domain=pyo.Integers, bounds=(-1, 1))
    m.e = pyo.Var(range(len(y)), domain=pyo.Binary)
    m.fit = pyo.Constraint(range(len(y)), rule=lambda m, i: (
        y[i] * (X[i, 0] * m.w["age"] + X[i, 1] * m.w["income"]) + 3 * m.e[i] >= 1))
    m.loss = pyo.Objective(expr=sum(m.e.values()))
    res = privopt.opdisc(m, epsilon=5.0, delta=1e-3, lipschitz=1.0, norm_bound=1.5, n_samples=6, random_state=0,
                         public_constraints="w")
    assert res.labels == ("age", "income")
    assert list(res.weights_by_label) == ["age", "income"]
    assert res.weights_by_label["age"] == res.weights[0]


def test_parameters_are_a_typed_frozen_record_read_as_the_documented_mapping():
    """The release's parameters: typed fields (what the plan and the run computed), the same
    values under the documented keys, frozen, and equal to their own dict."""
    import dataclasses

    from privopt.mechanisms import OPDiscParameters

    X, y, model = _toy()
    res = privopt.opdisc(model, epsilon=1.0, delta=1e-3, lipschitz=1.0, norm_bound=math.sqrt(5),
                         n_samples=6, random_state=7)
    p = res.parameters
    assert isinstance(p, OPDiscParameters)
    assert list(p) == ["calibration", "sigma", "provable_delta", "alpha_per_record", "beta", "lipschitz",
                       "norm_bound", "separation", "n_samples", "dim", "noise_distribution", "pi_encoding",
                       "record_terms"]
    assert p.sigma == p["sigma"] == pytest.approx(calibration.opdisc_sigma_proven(1.0, 1e-3, 1.0, math.sqrt(5),
                                                                                  1.0, 2), rel=1e-12)
    assert p.noise_distribution == "N(0, sigma^2 I_3)" and p.pi_encoding in ("piecewise", "binary")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.sigma = 0.0
    assert p == dict(p) and hash(p) == hash(pickle.loads(pickle.dumps(p)))
