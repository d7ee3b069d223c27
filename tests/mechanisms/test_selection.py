"""Private selection over a finite W: the exponential mechanism and permute-and-flip.

The distributions are checked against computations that share no code with the
sampler: losses counted by hand or by brute force, the exponential mechanism's
softmax written out, and permute-and-flip's distribution from its original
definition (average over all visiting orders of the first successful coin).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt import audit
from privopt.calibration import (
    exponential_mechanism_probabilities,
    permute_and_flip_probabilities,
    selection_noise_scale,
    selection_sensitivity,
    selection_utility_bound,
)
from privopt.exceptions import ModelError, ParameterError, ParameterTypeError
from privopt.models import zero_one_halfspace
from privopt.space import grid_points as _grid_points, iter_grid_blocks
from privopt.perturbation import norm_levels

from tests._law import chi_square_pvalue

METHODS = ("exponential", "permute_and_flip")


# --- calibration: hand-worked values ------------------------------------------

def test_noise_scale_hand_values():
    assert selection_noise_scale(0.5, 1.0) == 4.0          # 2 * 1 / 0.5
    assert selection_noise_scale(2.0, 1.5) == 1.5          # 2 * 1.5 / 2
    assert selection_sensitivity(1) == 1.0
    assert selection_sensitivity((0.5, 2.0)) == 1.5


def test_utility_bound_hand_values():
    # (2 * 1 / 1) * (ln 100 + ln 100) = 4 ln 100
    assert selection_utility_bound(1.0, 1.0, 100, beta=0.01) == pytest.approx(4 * math.log(100), rel=1e-12)
    # |W| = 1, beta = e^-1: (2 / 2) * (0 + 1) = 1
    assert selection_utility_bound(2.0, 1.0, 1, beta=math.exp(-1)) == pytest.approx(1.0, rel=1e-12)
    # Adult default W (156,953 points), epsilon 0.1, beta 0.05: 20 (ln 156953 + ln 20) = 298.3 errors
    assert selection_utility_bound(0.1, 1.0, 156_953, 0.05) == pytest.approx(20 * (11.963701 + 2.995732), rel=1e-6)
    with pytest.raises(ParameterError, match="n_points"):
        selection_utility_bound(1.0, 1.0, 0)


def test_exact_distributions_hand_values():
    # two points with losses 0 and 1 at epsilon 2, Delta 1: s = 1, coin of the worse point e^-1
    em = exponential_mechanism_probabilities([0.0, 1.0], 2.0, 1.0)
    assert em[1] == pytest.approx(math.exp(-1) / (1 + math.exp(-1)), rel=1e-12)
    pf = permute_and_flip_probabilities([0.0, 1.0], 2.0, 1.0)
    # orders (0, 1): 0 always; (1, 0): 1 with prob e^-1 -> P(1) = e^-1 / 2
    assert pf[1] == pytest.approx(math.exp(-1) / 2, rel=1e-12)
    assert pf[1] < em[1]      # permute-and-flip puts less mass on the worse point


@pytest.mark.parametrize("bad, exc", [(None, ParameterError), (0, ParameterError), (-1.0, ParameterError),
                                      ((2, 1), ParameterError), ("1", ParameterTypeError),
                                      (float("inf"), ParameterError), (True, ParameterTypeError)])
def test_loss_range_is_checked(bad, exc):
    with pytest.raises(exc, match="loss_range"):
        selection_sensitivity(bad)


# --- the streamed enumeration equals the one-shot list --------------------------

@pytest.mark.parametrize("grid, D", [([(-2, -1, 0, 1, 2)] * 6, 2.0), ([(-3, -2, -1, 0, 1, 2, 3)] * 5, 3.0),
                                     ([(0, 1, 2)] * 3 + [(-1, 0, 1)] * 2, 2.5)])
def test_streamed_blocks_equal_the_full_list(grid, D):
    lv = norm_levels(grid, D)
    W, used = _grid_points(grid, lv.coef, int(lv.bound))
    for block in (1, 7, 50, 10 ** 6):
        parts = list(iter_grid_blocks(grid, lv.coef, int(lv.bound), block))
        assert np.array_equal(np.vstack([p[0] for p in parts]), W)
        assert np.array_equal(np.concatenate([p[1] for p in parts]), used)
        assert max(p[0].shape[0] for p in parts) <= max(2 * block, 7)


# --- distribution of the shipped mechanism against the exact one ------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_output_distribution_on_a_tiny_halfspace_model(method):
    # selection_instance: L(-1), L(0), L(1) = 5, 2, 2 by hand (see its docstring)
    pair = audit.selection_instance()
    model = zero_one_halfspace(*pair.data(0))
    losses = np.array([5.0, 2.0, 2.0])
    exact = (exponential_mechanism_probabilities(losses, 1.0, 1.0) if method == "exponential"
             else permute_and_flip_probabilities(losses, 1.0, 1.0))
    rng = np.random.default_rng(2024)
    outs = np.array([privopt.exponential_mechanism(model, epsilon=1.0, method=method, random_state=rng).weights
                     for _ in range(6000)])
    assert chi_square_pvalue(outs, np.array([[-1.0], [0.0], [1.0]]), exact) > 1e-3


def _brute_force_losses(W, X, y, info):
    from privopt.models import predict_halfspace

    return np.array([np.sum(predict_halfspace(w, X, info) != y) for w in W], dtype=float)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_output_distribution_in_two_dimensions(method):
    X = np.array([[1, 0], [0, 1], [1, 1], [-1, 1], [1, -1], [0, -1], [-1, 0]], dtype=float)
    y = np.array([1, 1, 1, -1, 1, -1, -1])
    model = zero_one_halfspace(X, y, grid=1, norm_bound=1.0)       # W: 0 and the 4 unit vectors
    W = np.array([w for w in itertools.product((-1.0, 0.0, 1.0), repeat=2) if sum(v * v for v in w) <= 1])
    L = _brute_force_losses(W, X, y, privopt.models.get_info(model))
    exact = (exponential_mechanism_probabilities(L, 2.0, 1.0) if method == "exponential"
             else permute_and_flip_probabilities(L, 2.0, 1.0))
    rng = np.random.default_rng(7)
    # 3,000 draws: the test at 1e-3 misses the law at 1.25 epsilon, at epsilon / 1.25 or of the other
    # method with probability below 1e-7 (noncentral chi-square); coarser errors are rejected surely
    outs = np.array([privopt.exponential_mechanism(model, epsilon=2.0, method=method, random_state=rng).weights
                     for _ in range(3000)])
    assert chi_square_pvalue(outs, W, exact) > 1e-3


def _quadratic_model():
    """x in {0..3}; L(x) = sum_i (x - a_i)^2 / 9, each term in [0, 1]; n = 5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    a = [0, 1, 3, 3, 2]
    m.obj = pyo.Objective(expr=sum((m.x - ai) ** 2 for ai in a) / 9)
    losses = np.array([sum((x - ai) ** 2 for ai in a) / 9 for x in range(4)])
    return m, losses


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_output_distribution_on_a_user_model(method):
    m, losses = _quadratic_model()
    exact = (exponential_mechanism_probabilities(losses, 4.0, 1.0) if method == "exponential"
             else permute_and_flip_probabilities(losses, 4.0, 1.0))
    rng = np.random.default_rng(11)
    # 3,000 draws: the test at 1e-3 misses the law at 1.25 epsilon with probability below 6e-5, at
    # epsilon / 1.25 below 3e-6, of the other method below 1e-11 (noncentral chi-square)
    outs = np.array([privopt.exponential_mechanism(m, weights=m.x, epsilon=4.0, loss_range=1, n_samples=5,
                                                   method=method, random_state=rng,
                                                   public_constraints="x").weights
                     for _ in range(3000)])
    assert chi_square_pvalue(outs, np.arange(4.0)[:, None], exact) > 1e-3


def test_broken_sampler_would_fail_the_distribution_test():
    # the same chi-square test rejects a sampler with half the noise scale
    losses = np.array([5.0, 2.0, 2.0])
    rng = np.random.default_rng(0)
    keys = -losses / 1.0 + (-np.log(rng.standard_exponential((6000, 3))))   # s = Delta/eps: sensitivity halved
    outs = np.array([[-1.0], [0.0], [1.0]])[np.argmax(keys, axis=1)]
    exact = exponential_mechanism_probabilities(losses, 1.0, 1.0)
    assert chi_square_pvalue(outs, np.array([[-1.0], [0.0], [1.0]]), exact) < 1e-6


# --- a user's model that is not a classifier: which sites to open ------------------

def _sites_model(n_customers=12, n_sites=5, k=2, seed=0):
    rng = np.random.default_rng(seed)
    cust = rng.random((n_customers, 2))
    sites = rng.random((n_sites, 2))
    dist = np.minimum(1.0, np.linalg.norm(cust[:, None, :] - sites[None, :, :], axis=2))  # each in [0, 1]
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n_customers - 1)
    m.J = pyo.RangeSet(0, n_sites - 1)
    m.open = pyo.Var(m.J, domain=pyo.Binary)
    m.assign = pyo.Var(m.I, m.J, bounds=(0, 1))
    m.budget = pyo.Constraint(expr=sum(m.open[j] for j in m.J) == k)       # public: on the weights alone
    m.served = pyo.Constraint(m.I, rule=lambda m, i: sum(m.assign[i, j] for j in m.J) == 1)
    m.only_open = pyo.Constraint(m.I, m.J, rule=lambda m, i, j: m.assign[i, j] <= m.open[j])
    m.cost = pyo.Objective(expr=sum(float(dist[i, j]) * m.assign[i, j] for i in m.I for j in m.J))
    return m, dist


def test_site_selection_scores_every_subset_exactly_and_releases_privately():
    from privopt.mechanisms.selection._evaluate import FixAndSolveEvaluator
    from privopt.perturbation import resolve_grids

    m, dist = _sites_model()
    w_vars = [m.open[j] for j in m.J]
    scorer = FixAndSolveEvaluator(m, w_vars, resolve_grids(w_vars), solver="highs", public_constraints=[m.budget])
    assert scorer.n_points == math.comb(5, 2)               # the budget constraint cut the 32 subsets to 10
    for pts, losses in scorer.blocks():
        for w, L in zip(pts, losses):
            opened = np.flatnonzero(w > 0.5)
            assert L == pytest.approx(dist[:, opened].min(axis=1).sum(), abs=1e-6)
    before = [(c.name, c.active) for c in m.component_data_objects(pyo.Constraint)]
    res = privopt.exponential_mechanism(m, weights=m.open, epsilon=1.0, loss_range=1, n_samples=12,
                                        method="permute_and_flip", random_state=3, public_constraints="budget")
    assert res.delta == 0 and res.mechanism == "permute_and_flip" and res.certified
    assert res.weights.sum() == 2 and set(res.weights) <= {0.0, 1.0}
    assert res.parameters["n_points"] == 10 and res.parameters["path"] == "fix_and_solve"
    assert res.labels == tuple(range(5))
    # the user's model is untouched
    assert [(c.name, c.active) for c in m.component_data_objects(pyo.Constraint)] == before
    assert not any(v.fixed for v in m.open.values())


def test_fix_and_solve_release_is_the_noisy_argmax_of_the_exact_losses():
    m, dist = _sites_model(seed=1)
    subsets = [w for w in itertools.product((0.0, 1.0), repeat=5) if sum(w) == 2]
    # the mechanism's order of W: the last coordinate most significant
    subsets.sort(key=lambda w: tuple(reversed(w)))
    L = np.array([dist[:, np.flatnonzero(np.array(w) > 0.5)].min(axis=1).sum() for w in subsets])
    for seed in range(5):
        res = privopt.exponential_mechanism(m, weights=m.open, epsilon=0.7, loss_range=1, random_state=seed,
                                            n_samples=12, public_constraints=["budget"])
        g = -np.log(np.random.default_rng(seed).standard_exponential(len(subsets)))
        expected = subsets[int(np.argmax(g - L / selection_noise_scale(0.7, 1.0)))]
        assert tuple(res.weights) == expected


def test_fix_and_solve_refuses_a_loss_outside_its_declared_contract():
    m, _ = _sites_model()
    # 12 customers declared as 6 records: the model's contract counts 12 blocks for n = 6 and
    # refuses before any solve (some block is no record's); with one block per record each
    # record's term is clipped instead (tests/models/test_model_checks.py)
    with pytest.raises(ModelError, match="12 independent blocks for n = 6"):
        privopt.exponential_mechanism(m, weights=m.open, epsilon=1.0, loss_range=0.1, n_samples=6,
                                      random_state=0, public_constraints=["budget"])


# --- audit ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_audit_passes_shipped_and_flags_halved_sensitivity(method):
    # the mechanism's own top-down sampler runs once per sample (~0.3 ms each): 25,000 samples
    # per data set, 5,000 choosing the event (of 3 outputs) and 20,000 counting it, give eps_lb
    # ~0.8 as shipped and ~1.6 with the sensitivity halved (the same 20,000 counted as by an even
    # split of 40,000: on the exact law, over 300 seeds, the same quantiles of eps_lb)
    pair = audit.selection_instance()
    kw = dict(n_samples=25_000, selection_fraction=0.2, random_state=0)
    shipped = audit.audit(audit.SelectionTarget(pair, epsilon=1.0, method=method), **kw)
    assert not shipped.violation and shipped.epsilon_lower_bound <= 1.0
    broken = audit.audit(audit.SelectionTarget(pair, epsilon=1.0, method=method, sensitivity_factor=0.5), **kw)
    assert broken.violation and broken.epsilon_lower_bound > 1.2


@pytest.mark.parametrize("method", METHODS)
def test_audit_enumeration_equals_the_mechanism_run_by_run(method):
    target = audit.SelectionTarget(audit.selection_instance(), epsilon=1.0, method=method)
    for seed in range(20):
        for which in (0, 1):
            fast = target.outputs_from_noise(which, target.draw_noise(np.random.default_rng(seed), size=1))[0]
            real = target.run_mechanism(which, np.random.default_rng(seed))
            assert np.array_equal(fast, real)


# --- bad input: refused before any data-dependent work ----------------------------------

def test_bad_inputs_are_refused():
    m, _ = _quadratic_model()
    with pytest.raises(ParameterError, match="loss_range"):
        privopt.exponential_mechanism(m, weights=m.x, epsilon=1.0)
    with pytest.raises(ParameterError, match="method"):
        privopt.exponential_mechanism(m, weights=m.x, epsilon=1.0, loss_range=1, method="gumbel")
    with pytest.raises(ParameterError, match="epsilon"):
        privopt.exponential_mechanism(m, weights=m.x, epsilon=0.0, loss_range=1)
    c = pyo.ConcreteModel()
    c.x = pyo.Var(bounds=(0, 3))
    c.obj = pyo.Objective(expr=c.x)
    with pytest.raises(ModelError, match="continuous"):
        privopt.exponential_mechanism(c, weights=c.x, epsilon=1.0, loss_range=1, n_samples=1)
    u = pyo.ConcreteModel()
    u.x = pyo.Var(domain=pyo.Integers)
    u.obj = pyo.Objective(expr=u.x)
    with pytest.raises(ModelError, match="bounds"):
        privopt.exponential_mechanism(u, weights=u.x, epsilon=1.0, loss_range=1, n_samples=1)
    mx = pyo.ConcreteModel()
    mx.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    mx.obj = pyo.Objective(expr=mx.x, sense=pyo.maximize)
    with pytest.raises(ModelError, match="maximized"):
        privopt.exponential_mechanism(mx, weights=mx.x, epsilon=1.0, loss_range=1)
    e = pyo.ConcreteModel()
    e.x = pyo.Var([0, 1], domain=pyo.Integers, bounds=(0, 3))
    e.c = pyo.Constraint(expr=e.x[0] + e.x[1] >= 7)
    e.obj = pyo.Objective(expr=e.x[0])
    with pytest.raises(ModelError, match="public_constraints=\\['c'"):   # not declared: refused, named
        privopt.exponential_mechanism(e, weights=e.x, epsilon=1.0, loss_range=1, n_samples=1)
    with pytest.raises(ModelError, match="empty"):
        privopt.exponential_mechanism(e, weights=e.x, epsilon=1.0, loss_range=1, n_samples=1,
                                      public_constraints=["c", "x"])
    big = pyo.ConcreteModel()
    big.x = pyo.Var(range(8), domain=pyo.Integers, bounds=(0, 9))
    big.obj = pyo.Objective(expr=sum(big.x.values()))
    with pytest.raises(ParameterError, match="max_points"):   # above max_points, path="auto" would bound regions
        privopt.exponential_mechanism(big, weights=big.x, epsilon=1.0, loss_range=1, path="score",
                                      n_samples=1, public_constraints="x")


def test_predicted_time_above_time_limit_is_refused_before_scoring():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(300, 40))
    y = np.where(X.sum(axis=1) > 80, 1, -1)
    model = zero_one_halfspace(X, y, grid=3, norm_bound=3.0)     # 3.7e8 supports to bound
    with pytest.raises(ParameterError, match="time_limit.*predicted"):
        privopt.exponential_mechanism(model, epsilon=1.0, time_limit=0.5)
    # the path that scores every point (a grid per coordinate) predicts its own time
    model = zero_one_halfspace(X[:, :12], y, grid=[[-1.0, 0.0, 1.0]] * 11 + [[-1.0, 0.0, 0.5, 1.0]],
                               norm_bound=3.0)
    with pytest.raises(ParameterError, match="time_limit.*predicted"):
        privopt.exponential_mechanism(model, epsilon=1.0, time_limit=0.5)


def test_secure_source_by_default_and_result_fields():
    pair = audit.selection_instance()
    model = zero_one_halfspace(*pair.data(0))
    res = privopt.exponential_mechanism(model, epsilon=1.0, method="permute_and_flip")
    assert res.weights[0] in (-1.0, 0.0, 1.0)
    p = res.parameters
    assert p["sensitivity"] == 1.0 and p["noise_scale"] == 2.0 and p["n_points"] == 3
    assert p["alpha"] == pytest.approx(2.0 * (math.log(3) + math.log(20)))
    assert p["n_samples"] == 6 and p["alpha_per_record"] == pytest.approx(p["alpha"] / 6)
    assert res.neighbouring == "replace_one" and res.delta == 0.0


def test_private_decorator_runs_selection_without_delta():
    pair = audit.selection_instance()

    @privopt.private("permute_and_flip", epsilon=1.0, random_state=0)
    def build(X, y):
        return zero_one_halfspace(X, y)

    res = build(*pair.data(0))
    assert res.mechanism == "permute_and_flip" and res.delta == 0


# --- estimator ---------------------------------------------------------------------------

def test_estimator_auto_selects_privately_and_reports_why():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, random_state=0)
    bounds = (X.min(0), X.max(0))
    est = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=bounds, random_state=0).fit(X, y)
    assert est.mechanism_ == "permute_and_flip" and "predicted" in est.mechanism_reason_
    assert est.result_.delta == 0 and est.result_.mechanism == "permute_and_flip"
    # the same W's non-private 0/1 optimum, within the utility bound alpha / n
    best = privopt.ZeroOneHalfspaceClassifier(bounds=bounds).fit(X, y).score(X, y)
    assert est.score(X, y) >= best - est.result_.parameters["alpha_per_record"]
    with pytest.raises(ParameterError, match="calibration"):
        privopt.PrivateHalfspaceClassifier(mechanism="exponential", calibration="paper").fit(X, y)
    with pytest.raises(ParameterError, match="solver"):
        privopt.PrivateHalfspaceClassifier(mechanism="exponential", solver="highs",
                                           bounds=(X.min(0), X.max(0))).fit(X, y)


def test_auto_rule_falls_back_to_opdisc_when_w_is_too_large_to_score():
    from privopt.estimators import auto_mechanism

    # every point scored (no top-down path)
    assert auto_mechanism(156_953, 12_546, 24, 120.0)[0] == "permute_and_flip"
    mech, why = auto_mechanism(10_507_649, 35_000, 65, 120.0)
    assert mech == "opdisc" and "OPDisc" in why
    assert auto_mechanism(156_953, 12_546, 24, 0.1)[0] == "opdisc"
    # top down: one-hot Adult, d = 64 + intercept, D = 2: sum_{k <= 4} C(65, k) supports x n rows
    regions = sum(math.comb(65, k) for k in range(5))
    mech, why = auto_mechanism(10_507_649, 35_000, 65, 120.0, topdown_regions=regions)
    assert mech == "permute_and_flip" and "722,866 supports" in why
    regions = sum(math.comb(257, k) for k in range(5))           # d = 256: 1.8e8 supports
    assert auto_mechanism(10**12, 35_000, 257, 120.0, topdown_regions=regions)[0] == "opdisc"


# --- the sparse engine: the same losses in the same order as the dense one -----------------

def _onehot(n, groups, cats, seed):
    rng = np.random.default_rng(seed)
    X = np.hstack([np.eye(cats)[rng.integers(0, cats, n)] for _ in range(groups)]).astype(int)
    y = np.where(X @ rng.normal(size=X.shape[1]) + rng.normal(0, 1, n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("case", ["onehot", "levels", "intercept_D3", "no_intercept"])
@pytest.mark.parametrize("use_numba", [True, False])
@pytest.mark.slow
def test_sparse_tables_equal_dense_losses(case, use_numba):
    from privopt.search import SparseTables, enumeration_levels, iter_losses

    rng = np.random.default_rng(5)
    if case == "onehot":
        X, y = _onehot(400, 4, 3, 1)
        kw = dict(grid=2, norm_bound=2.0, fit_intercept=True)
    elif case == "levels":
        X = rng.integers(0, 5, size=(300, 6))
        y = np.where(X.sum(axis=1) + rng.normal(0, 2, 300) > 12, 1, -1)
        kw = dict(grid=2, norm_bound=2.0, fit_intercept=True)
    elif case == "intercept_D3":
        X = rng.integers(0, 3, size=(200, 4))
        y = np.where(rng.random(200) < 0.4, 1, -1)
        kw = dict(grid=3, norm_bound=3.0, fit_intercept=True)
    else:
        X = rng.integers(-1, 2, size=(250, 5))
        y = np.where(X[:, 0] - X[:, 2] + rng.normal(0, 1, 250) > 0, 1, -1)
        kw = dict(grid=2, norm_bound=2.0, fit_intercept=False)
    data = zero_one_halfspace(X, y, **kw)._privopt_enumeration
    coef, bound, _, _ = enumeration_levels(data)
    dense = list(iter_losses(data, coef, bound, engine="dense"))
    tables = SparseTables(data, coef, bound, use_numba=use_numba)
    W = np.vstack([b[0] for b in dense])
    assert np.array_equal(np.concatenate([b[2] for b in dense]), tables.losses(W))
    sparse = np.concatenate([b[2] for b in iter_losses(data, coef, bound, engine="sparse")])
    assert np.array_equal(np.concatenate([b[2] for b in dense]), sparse)


def test_engines_release_the_same_point_for_the_same_seed():
    """The engine changes the time, never the answer: the same seed gives the same point."""
    from privopt.search import _losses as en

    X, y = _onehot(600, 5, 3, 2)
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)
    outs = {}
    for engine in ("dense", "sparse"):
        mp = pytest.MonkeyPatch()
        mp.setattr(en, "choose_engine", lambda *a, _e=engine, **k: _e)
        try:
            outs[engine] = [tuple(privopt.exponential_mechanism(model, epsilon=0.3, method=m, random_state=s).weights)
                            for m in METHODS for s in range(3)]
            outs[engine + "_opdisc"] = tuple(privopt.opdisc(model, epsilon=1.0, delta=1e-6, solver="enumerate",
                                                            random_state=0).weights)
        finally:
            mp.undo()
    assert outs["dense"] == outs["sparse"] and outs["dense_opdisc"] == outs["sparse_opdisc"]


# --- top-down path: any executor gives the same released point ---------------------------

@pytest.mark.slow
def test_topdown_release_is_bit_identical_on_every_executor():
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    X, y = _onehot(3000, 6, 4, seed=5)                     # d = 24 one-hot + intercept
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)

    def release(executor, seed):
        res = privopt.exponential_mechanism(model, epsilon=0.5, method="permute_and_flip", random_state=seed,
                                            executor=executor, progress=False)
        assert res.parameters["path"] == "topdown"
        return tuple(res.weights)

    local = [release("local", s) for s in range(3)]
    with ThreadPoolExecutor(2) as ex:
        assert [release(ex, s) for s in range(3)] == local
    with ProcessPoolExecutor(2) as ex:
        assert [release(ex, s) for s in range(3)] == local
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert [release(client, s) for s in range(3)] == local


@pytest.mark.slow
def test_topdown_release_is_the_exact_optimum_at_large_epsilon_and_scores_few_supports():
    from privopt.search._topdown import search_optimum
    from privopt.mechanisms.selection import topdown_problem
    from privopt.models._common import ENUMERATION_ATTR

    X, y = _onehot(4000, 10, 4, seed=6)                    # d = 40 one-hot + intercept: |W| ~ 4e6
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)
    data = getattr(model, ENUMERATION_ATTR)
    problem = topdown_problem(data)
    best = search_optimum(problem)[0]

    def errors(w):
        positive = data["X"] @ w >= data["theta"]
        return int(data["pos"] @ ~positive + data["neg"] @ positive)

    assert errors(problem.decode(best[1], best[2])) == best[0]
    res = privopt.exponential_mechanism(model, epsilon=700.0, method="permute_and_flip", random_state=0,
                                        progress=False, keep_report=True)
    assert errors(np.asarray(res.weights)) == best[0]
    assert res.report.regions_expanded < problem.n_regions / 20


def test_a_continuous_decision_is_refused_naming_selection_and_the_fix():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.obj = pyo.Objective(expr=m.x)
    with pytest.raises(ModelError, match="private selection") as err:
        privopt.exponential_mechanism(m, weights=m.x, epsilon=1.0, loss_range=1, n_samples=1)
    assert "grid=" in str(err.value) and err.value.parameter == "weights"
