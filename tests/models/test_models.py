"""The model catalogue (privopt.models): the merged 0/1 MILP is exact, its
cuts and big-M values are valid, the norm ball is exact, the convex losses
evaluate to their formulas, and bad input is refused by name."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from privopt.exceptions import (
    InfeasibleModelError,
    ParameterError,
    ParameterTypeError,
    PrivacyLeakWarning,
)
from privopt.models import (
    FeatureDiscretizer,
    absolute_regression,
    build_stats,
    discretize_features,
    get_info,
    get_weights,
    hinge_halfspace,
    predict_halfspace,
    rspm_halfspace,
    squared_regression,
    zero_one_halfspace,
)
from privopt.solvers import solve


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def _data(seed, n=60, d=3, values=(0, 1, 2), noise=1.0):
    """Integer features with many repeated rows (so merging and ties occur)."""
    rng = np.random.default_rng(seed)
    X = rng.choice(np.asarray(values, dtype=float), size=(n, d))
    w0 = rng.integers(-2, 3, size=d)
    y = np.where(X @ w0 - 0.5 + rng.normal(0, noise, n) >= 0, 1, -1)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


def _true_loss(w, X, y, info):
    return int((predict_halfspace(w, X, info, pm=True) != np.where(y == info.extra["classes"][1], 1, -1)).sum())


def _grid_points(info):
    bound = info.extra["norm_sq_bound"] if "norm_sq_bound" in info.extra else math.inf
    for w in itertools.product(*info.grid):
        if sum(v * v for v in w) <= bound + 1e-9:
            yield np.array(w, dtype=float)


def _brute_force(X, y, info):
    return min(_true_loss(w, X, y, info) for w in _grid_points(info))


def _solve(model, solver="highs"):
    report = solve(model, solver, time_limit=60)
    assert report.certified_optimal, report
    return report


def _fix_w(model, w):
    for j, v in enumerate(w):
        model.w[j].fix(float(v))


# ----------------------------------------------------------------------------
# exactness of the merged 0/1 model
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_merged_model_has_same_optimum_and_argmin_loss_as_per_record(seed):
    X, y = _data(seed)
    merged = zero_one_halfspace(X, y)
    per_record = zero_one_halfspace(X, y, merge_rows=False)
    stats = build_stats(merged)
    assert stats["n_rows"] < X.shape[0]  # the data do have repeated rows
    # one binary per record, except records whose prediction no w can change (x = 0)
    assert len(per_record.e) + build_stats(per_record)["n_constant_rows"] == X.shape[0]
    assert len(per_record.e) == int(np.any(X != 0, axis=1).sum())
    r_m, r_p = _solve(merged), _solve(per_record)
    assert r_m.objective == pytest.approx(r_p.objective, abs=1e-6)
    info = get_info(merged)
    # the argmin of each model has exactly the optimum as its true 0/1 loss
    assert _true_loss(get_weights(merged), X, y, info) == round(r_m.objective)
    assert _true_loss(get_weights(per_record), X, y, info) == round(r_p.objective)
    # and that is the optimum over the whole grid
    assert round(r_m.objective) == _brute_force(X, y, info)


def test_merged_equals_per_record_with_each_solver(milp_solver):
    X, y = _data(11, n=50)
    a = _solve(zero_one_halfspace(X, y), milp_solver)
    b = _solve(zero_one_halfspace(X, y, merge_rows=False), milp_solver)
    assert a.objective == pytest.approx(b.objective, abs=1e-6)


@pytest.mark.parametrize("d,seed", [(2, 0), (2, 1), (3, 2), (3, 3)])
def test_optimum_equals_brute_force_over_grid(d, seed):
    X, y = _data(seed, n=50, d=d, values=(-1, 0, 1, 2))
    model = zero_one_halfspace(X, y)
    info = get_info(model)
    rep = _solve(model)
    assert rep.objective == pytest.approx(_brute_force(X, y, info), abs=1e-6)
    assert _true_loss(get_weights(model), X, y, info) == round(rep.objective)


@pytest.mark.parametrize("kwargs", [
    {"fit_intercept": True},
    {"grid": np.arange(-1, 1.01, 0.5), "norm_bound": 1.0},
    {"grid": [(-1, 0, 1), (0, 1, 2, 3)], "norm_bound": 3.0},
    {"threshold": 1.0},
    {"threshold": -0.3, "grid": 3},
])
def test_optimum_equals_brute_force_variants(kwargs):
    X, y = _data(5, n=50, d=2, values=(-1, 0, 1, 2))
    model = zero_one_halfspace(X, y, **kwargs)
    info = get_info(model)
    rep = _solve(model)
    assert rep.objective == pytest.approx(_brute_force(X, y, info), abs=1e-6)
    assert _true_loss(get_weights(model), X, y, info) == round(rep.objective)
    per_record = zero_one_halfspace(X, y, merge_rows=False, **kwargs)
    assert _solve(per_record).objective == pytest.approx(rep.objective, abs=1e-6)


def test_every_grid_point_has_its_true_loss_in_the_model():
    """For each fixed w in W, min over e of the model's objective is the true
    0/1 loss at w: the big-M rows are valid and the chain cuts cut nothing
    that matters (they hold at e = the minority-prediction indicator)."""
    X, y = _data(7, n=80, d=2, values=(0, 1, 2, 3))
    model = zero_one_halfspace(X, y, grid=2)
    assert build_stats(model)["n_chain_cuts"] > 0
    info = get_info(model)
    for w in _grid_points(info):
        _fix_w(model, w)
        rep = _solve(model)
        assert rep.objective == pytest.approx(_true_loss(w, X, y, info), abs=1e-6), w


def test_margin_mode_every_grid_point_and_cut_validity():
    """Real-valued X with an explicit margin: the model's loss at each w is the
    margin loss (a +1 record is right iff score >= 0, a -1 record iff score
    <= -margin), including with the (restricted) chain cuts."""
    rng = np.random.default_rng(3)
    base = rng.choice([0.0, 0.13, 0.43, 0.79], size=(70, 2))  # no score hits 0 or -mu inexactly
    X = base
    y = np.where(X @ np.array([1.0, -1.0]) + rng.normal(0, 0.3, 70) >= 0, 1, -1)
    mu = 0.05
    model = zero_one_halfspace(X, y, grid=2, margin=mu)
    info = get_info(model)
    assert info.extra["exact_margin"] is False
    assert build_stats(model)["n_chain_cuts"] > 0
    no_cuts = zero_one_halfspace(X, y, grid=2, margin=mu, chain_cuts=False)
    assert _solve(model).objective == pytest.approx(_solve(no_cuts).objective, abs=1e-6)
    for w in _grid_points(info):
        _fix_w(model, w)
        s = X @ w
        margin_loss = int(((y == 1) & (s < 0)).sum() + ((y == -1) & (s > -mu)).sum())
        assert _solve(model).objective == pytest.approx(margin_loss, abs=1e-6), w
        # the rule used for prediction (theta = -mu/2) errs no more than the model counts
        assert _true_loss(w, X, y, info) <= margin_loss


def test_margin_mode_omits_the_cut_that_would_be_invalid():
    """a = (0.013, 0.031) majority -1 and b = (0.021, 0.031) majority +1 differ in
    coordinate 0 only.  At w = (1, -1) both scores (-0.018, -0.010) lie in the
    band (-margin, 0), so both records are errors: p_a = 1, p_b = 0 although
    w_0 > 0.  The cut p_a - p_b <= sum_{g<0} r[0, k] must not be there."""
    # (no score on the grid hits the band's edges exactly, so numpy and the solver agree)
    X = np.array([[0.013, 0.031]] * 3 + [[0.021, 0.031]] * 3 + [[0.5, 0.0], [0.0, 0.5]])
    y = np.array([-1, -1, 1, 1, 1, -1, 1, -1])
    mu = 0.05
    model = zero_one_halfspace(X, y, grid=2, norm_bound=3.0, margin=mu)
    assert build_stats(model)["n_chain_cuts"] > 0
    info = get_info(model)
    for w in _grid_points(info):
        _fix_w(model, w)
        s = X @ w
        margin_loss = int(((y == 1) & (s < 0)).sum() + ((y == -1) & (s > -mu)).sum())
        assert _solve(model).objective == pytest.approx(margin_loss, abs=1e-6), w


@pytest.mark.parametrize("seed", range(3))
def test_margin_mode_merged_equals_per_record(seed):
    rng = np.random.default_rng(seed + 90)
    X = rng.choice([0.0, 0.023, 0.057, 0.31, 0.69], size=(90, 2))
    y = np.where(X @ np.array([1.0, -1.0]) + rng.normal(0, 0.2, 90) >= 0, 1, -1)
    kw = dict(grid=2, margin=0.05)
    merged = zero_one_halfspace(X, y, **kw)
    per_record = zero_one_halfspace(X, y, merge_rows=False, **kw)
    stats = build_stats(merged)
    assert stats["n_binaries"] > stats["n_binary_rows"]  # mixed rows: one binary per label
    a, b = _solve(merged), _solve(per_record)
    assert a.objective == pytest.approx(b.objective, abs=1e-6)
    s = X @ get_weights(merged)
    assert int(((y == 1) & (s < 0)).sum() + ((y == -1) & (s > -0.05)).sum()) == round(a.objective)


def test_margin_mode_lp_relaxation_keeps_the_mixed_row_constant():
    """With both labels on a row, e_plus + e_minus >= 1 gives the LP relaxation
    the min(P_k, N_k) that exact mode has as a constant."""
    X = np.array([[0.3, 0.7]] * 5 + [[0.6, 0.1]] * 4 + [[0.2, 0.2]] * 2)
    y = np.array([1, 1, 1, -1, -1] + [-1, -1, -1, 1] + [1, -1])
    model = zero_one_halfspace(X, y, grid=2, margin=0.01)
    assert build_stats(model)["n_band_rows"] == 3
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    lp = solve(model, "highs")
    assert lp.objective >= 2 + 1 + 1 - 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_chain_cuts_do_not_change_the_optimum(seed):
    X, y = _data(seed + 20, n=120, d=3, values=(0, 1, 2, 3))
    with_cuts = zero_one_halfspace(X, y, chain_cuts=True)
    without = zero_one_halfspace(X, y, chain_cuts=False)
    assert build_stats(with_cuts)["n_chain_cuts"] > 0
    assert not hasattr(without, "chain")
    assert _solve(with_cuts).objective == pytest.approx(_solve(without).objective, abs=1e-6)


def test_chain_cuts_pair_consecutive_rows_differing_in_one_coordinate():
    # rows (1,1),(2,1),(4,1) form a chain in coordinate 0; (1,1),(1,3) one in coordinate 1
    X = np.array([[1, 1], [2, 1], [4, 1], [1, 3], [5, 5]] * 2, dtype=float)
    y = np.array([1, 1, -1, -1, 1] + [1, 1, -1, -1, 1])
    model = zero_one_halfspace(X, y, grid=1)
    # pairs: (1,1)-(2,1), (2,1)-(4,1), (1,1)-(1,3): 3 pairs x 2 cuts
    assert build_stats(model)["n_chain_cuts"] == 6


def _onehot(seed, n=300, groups=(3, 3, 2), noise=1.0):
    """One-hot data: one active category per group, labels from a noisy planted halfspace."""
    rng = np.random.default_rng(seed)
    cols = []
    for k in groups:
        cols.append(np.eye(k)[rng.integers(0, k, size=n)])
    X = np.hstack(cols)
    w0 = rng.integers(-2, 3, size=X.shape[1])
    y = np.where(X @ w0 - 0.5 + rng.normal(0, noise, n) >= 0, 1, -1)
    return X, y


def _set_point(model, w):
    """Set w, r and every e to its value at w (e = 1 iff its fit row needs it)."""
    info = get_info(model)
    for j, v in enumerate(w):
        model.w[j].set_value(float(v))
        for k, g in enumerate(info.grid[j]):
            model.r[j, k].set_value(1.0 if abs(g - v) < 1e-12 else 0.0)
    for k in model.e:
        model.e[k].set_value(0.0)
    for k in model.fit:
        c = model.fit[k]
        body = pyo.value(c.body)
        if (c.has_lb() and body < pyo.value(c.lower) - 1e-9) or (c.has_ub() and body > pyo.value(c.upper) + 1e-9):
            model.e[k].set_value(1.0)


def _violated(con):
    return sum(1 for c in con.values()
               if (c.has_lb() and pyo.value(c.body) < pyo.value(c.lower) - 1e-9)
               or (c.has_ub() and pyo.value(c.body) > pyo.value(c.upper) + 1e-9))


@pytest.mark.parametrize("data", ["onehot", "integers"])
@pytest.mark.slow
def test_swap_cuts_hold_at_every_grid_point(data):
    """At every w in W, with each e at its value at w (what every optimum has), no swap cut
    is violated: the cuts remove no point that an optimum could take."""
    X, y = _onehot(5) if data == "onehot" else _data(11, n=150, d=3, values=(0, 1, 2, 3))
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0 if data == "onehot" else None, swap_cuts=True)
    assert build_stats(model)["n_swap_cuts"] > 0
    assert get_info(model).extra["swap_cuts"] is True
    for w in _grid_points(get_info(model)):
        _set_point(model, w)
        assert _violated(model.fit) == 0
        assert _violated(model.swap) == 0, w


def test_swap_cuts_with_a_margin_omit_the_cut_that_would_be_invalid():
    """a = (1, 0, 1) majority -1 and b = (0, 1, 1) majority +1 differ by e_0 - e_1.  At
    w = (0, 0, -0.25) both scores (-0.25) lie in the band (-margin, 0): both are errors,
    p_a = 1 and p_b = 0 although neither w_0 > 0 nor w_1 < 0.  That cut must be left out
    (and likewise for c = (1, 0, 0) majority +1, d = (0, 1, 0) majority -1); the other
    direction of each pair is kept, and every kept cut holds at every grid point."""
    X = np.array([[1, 0, 1]] * 3 + [[0, 1, 1]] * 3 + [[1, 0, 0], [0, 1, 0]], dtype=float)
    y = np.array([-1, -1, 1, 1, 1, -1, 1, -1])
    grid = np.arange(-1, 1.01, 0.25)
    model = zero_one_halfspace(X, y, grid=grid, norm_bound=1.0, margin=0.5, chain_cuts=False, swap_cuts=True)
    n_swap = build_stats(model)["n_swap_cuts"]
    assert n_swap == 2          # pairs (a, b) and (d, c), each in one direction only
    for w in _grid_points(get_info(model)):
        _set_point(model, w)
        assert _violated(model.swap) == 0, w


def test_swap_cuts_pair_rows_differing_in_one_group():
    # rows 0, 1, 2 differ in the first group (categories 0, 1, 2) -> 3 pairs; rows 0 and 3 in the second
    X = np.array([[1, 0, 0, 1, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [1, 0, 0, 0, 1]] * 3, dtype=float)
    y = np.array([1, -1, 1, -1] * 2 + [1, -1, -1, -1])
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, swap_cuts=True)
    assert build_stats(model)["n_binary_rows"] == 4
    assert build_stats(model)["n_swap_cuts"] == 2 * 4
    assert build_stats(zero_one_halfspace(X, y, grid=2, norm_bound=2.0, swap_cuts=False))["n_swap_cuts"] == 0
    assert not hasattr(rspm_halfspace(X, y), "swap")


def test_swap_cuts_auto_follows_the_solver_auto_would_use():
    """swap_cuts="auto" (default) adds the cuts where solver="auto" sends OPDisc's oracle to
    a MILP solver (the paper's ball on one-hot data: the branch and bound by support does not
    apply) and leaves them out where it takes the branch and bound (D = 2), which ignores them."""
    from privopt.solvers import choose_solver

    X, y = _onehot(0, n=300, groups=(4, 4, 4, 4, 4, 4))       # d = 24: the paper's ball has 2^24 patterns
    for norm_bound, cuts in ((2.0, False), (None, True)):
        model = zero_one_halfspace(X, y, grid=2, norm_bound=norm_bound)
        assert (build_stats(model)["n_swap_cuts"] > 0) == cuts == get_info(model).extra["swap_cuts"]
        assert (choose_solver(model, perturbed=True) != "enumerate") == cuts
    # graded features (one column on 0..4 beside the groups): the MILP path, but no cuts
    Xg = X.copy()
    Xg[:, 0] = np.arange(len(Xg)) % 5
    model = zero_one_halfspace(Xg, y, grid=2)
    assert choose_solver(model, perturbed=True) != "enumerate"
    assert build_stats(model)["n_swap_cuts"] == 0 and get_info(model).extra["swap_cuts"] is False
    assert build_stats(zero_one_halfspace(Xg, y, grid=2, swap_cuts=True))["n_swap_cuts"] > 0


@pytest.mark.parametrize("seed", range(3))
def test_swap_cuts_do_not_change_the_optimum(seed):
    """The unperturbed optimum, and OPDisc's released point and value (the perturbed
    problem), are the same with and without the swap cuts."""
    from privopt import opdisc

    X, y = _onehot(seed, n=400, groups=(4, 3, 3))
    with_cuts = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, swap_cuts=True)
    without = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, swap_cuts=False)
    assert build_stats(with_cuts)["n_swap_cuts"] > 0 and not hasattr(without, "swap")
    assert _solve(with_cuts).objective == pytest.approx(_solve(without).objective, abs=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (opdisc(m, epsilon=1.0, delta=1e-4, solver="highs", time_limit=60, random_state=seed,
                       keep_report=True) for m in (with_cuts, without))
    assert a.certified and b.certified
    assert a.report.objective == pytest.approx(b.report.objective, abs=1e-6)
    np.testing.assert_array_equal(a.weights, b.weights)


def test_tie_rows_are_dropped_and_counted_in_the_constant():
    X = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 1]], dtype=float)
    y = np.array([1, -1, 1, 1, -1, -1])
    model = zero_one_halfspace(X, y)
    stats = build_stats(model)
    assert stats["n_tie_rows_dropped"] == 1  # row (1, 0): one +1, one -1
    assert len(model.e) == 2
    # constant: min(P, N) over rows = 1 (tie) + 1 + 0
    assert stats["objective_constant"] == 2
    coefs = sorted(model.loss.expr.args[i].args[0] for i in range(1, len(model.loss.expr.args)))
    assert coefs == [1, 1]  # |P - N| for rows (0,1) and (1,1)
    info = get_info(model)
    rep = _solve(model)
    assert rep.objective == pytest.approx(_brute_force(X, y, info), abs=1e-6)


def test_all_rows_tied_gives_a_constant_objective():
    X = np.array([[1, 2], [1, 2]], dtype=float)
    y = np.array([0, 1])
    model = zero_one_halfspace(X, y)
    assert len(model.e) == 0
    assert pyo.value(model.loss.expr) == 1


def test_big_m_is_tight_and_valid():
    X, y = _data(4, n=60, d=3, values=(-2, 0, 1, 3))
    model = zero_one_halfspace(X, y)
    info = get_info(model)
    B, D, mu = 1, math.sqrt(3), info.extra["margin"]
    points = list(_grid_points(info))
    from pyomo.repn import generate_standard_repn

    rows_seen = 0
    for k in model.fit:
        repn = generate_standard_repn(model.fit[k].body)
        coef = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        M = abs(coef[id(model.e[k])])
        x = np.array([coef.get(id(model.w[j]), 0.0) for j in range(3)])
        scores = [x @ w for w in points]
        if model.fit[k].lower is not None:  # majority +1: score + M e >= 0
            needed = -min(scores)
        else:  # majority -1: score - M e <= -mu
            needed = max(scores) + mu
        assert M >= needed - 1e-9  # valid for every w in W
        assert M <= min(B * np.abs(x).sum(), D * np.linalg.norm(x)) + mu + 1e-9  # the stated bound
        rows_seen += 1
    assert rows_seen == len(model.e)


@pytest.mark.parametrize("kwargs", [{}, {"grid": 2, "norm_bound": 2.0}, {"grid": [-1, -0.5, 0, 0.5, 1, 1.5]},
                                    {"grid": 3, "norm_bound": 3.0}])
def test_big_m_is_the_exact_score_range_over_w(kwargs):
    """Each big-M equals the largest violation over the grid points of the ball (the
    exact knapsack bound), not just a valid upper bound: brute force over W."""
    from pyomo.repn import generate_standard_repn

    X, y = _data(9, n=120, d=4, values=(0, 1, 2, 3))
    X[:40, 1:] = (X[:40, 1:] > 1)       # some 0/1 rows with several ones (where the ball bound is loose)
    model = zero_one_halfspace(X, y, **kwargs)
    info = get_info(model)
    mu = info.extra["margin"]
    W = np.array(list(_grid_points(info)))
    for k in model.fit:
        repn = generate_standard_repn(model.fit[k].body)
        coef = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        M = abs(coef[id(model.e[k])])
        x = np.array([coef.get(id(model.w[j]), 0.0) for j in range(4)])
        scores = W @ x
        needed = -scores.min() if model.fit[k].lower is not None else scores.max() + mu
        assert M == pytest.approx(needed, abs=1e-9), (x, M, needed)


@pytest.mark.parametrize("seed", range(3))
def test_doubling_big_m_does_not_change_the_optimum(seed):
    X, y = _data(seed + 40, n=80, d=3, values=(-1, 0, 1, 2))
    a = _solve(zero_one_halfspace(X, y)).objective
    b = _solve(zero_one_halfspace(X, y, _big_m_factor=2.0)).objective
    assert a == pytest.approx(b, abs=1e-6)


# ----------------------------------------------------------------------------
# the norm ball
# ----------------------------------------------------------------------------

def _tiny(d):
    X = np.eye(d)
    y = np.array([1] + [-1] * (d - 1)) if d > 1 else np.array([1])
    if d == 1:
        X, y = np.array([[1.0], [2.0]]), np.array([1, -1])
    return X, y


def test_norm_constraint_excludes_grid_points_outside_the_ball():
    X, y = _tiny(2)
    model = zero_one_halfspace(X, y, grid=2, norm_bound=math.sqrt(5))
    assert model.norm_ball.upper == 5
    _fix_w(model, [2, 1])
    solve(model, "highs")  # feasible
    _fix_w(model, [2, 2])
    with pytest.raises(InfeasibleModelError):
        solve(model, "highs")


def test_norm_bound_sqrt23_float_trap():
    assert math.sqrt(23) ** 2 != 23  # the trap itself
    X, y = _tiny(4)
    model = zero_one_halfspace(X, y, grid=4, norm_bound=math.sqrt(23))
    assert model.norm_ball.upper == 23
    assert get_info(model).extra["norm_sq_units"] == 23
    _fix_w(model, [3, 3, 2, 1])  # ||w||^2 = 23: inside
    rep = solve(model, "highs")
    assert rep.has_solution
    _fix_w(model, [4, 2, 2, 1])  # 25: outside
    with pytest.raises(InfeasibleModelError):
        solve(model, "highs")
    # a bound just below sqrt(23) excludes 23
    model2 = zero_one_halfspace(X, y, grid=4, norm_bound=4.79)
    assert model2.norm_ball.upper == 22


def test_default_grid_and_norm_are_the_papers():
    d = 23
    X = np.vstack([np.eye(d), 2 * np.eye(d)])
    y = np.array([1, -1] * d)
    model = zero_one_halfspace(X, y)
    info = get_info(model)
    assert info.grid == (tuple(range(-4, 5)),) * d
    assert info.norm_bound == pytest.approx(math.sqrt(23))
    assert model.norm_ball.upper == 23
    assert info.separation == 1 and info.lipschitz == 1 and info.lipschitz_l1 == 1
    assert info.grid_encoding == "r" and info.n_samples == 2 * d
    assert info.loss_range == (0.0, 1.0)
    # the encoding contract: r[j, k] <-> grid[j][k], w_j linked explicitly
    assert model.w[0].is_integer()
    assert set(model.r.keys()) == {(j, k) for j in range(d) for k in range(9)}
    from pyomo.repn import generate_standard_repn

    repn = generate_standard_repn(model.w_link[5].body)
    coef = {v.name: c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
    assert coef["w[5]"] == 1 and coef["r[5,0]"] == 4 and coef["r[5,8]"] == -4


def test_tau_grid_info_and_real_w():
    X, y = _data(2, n=30, d=2)
    model = zero_one_halfspace(X, y, grid=np.arange(-1, 1.01, 0.5), norm_bound=1.0)
    info = get_info(model)
    assert info.grid == ((-1.0, -0.5, 0.0, 0.5, 1.0),) * 2
    assert info.separation == pytest.approx(0.5)
    assert info.lipschitz == pytest.approx(2.0)
    assert info.extra["margin"] == pytest.approx(0.5)
    assert info.extra["grid_unit"] == pytest.approx(0.5)
    assert info.extra["norm_sq_units"] == 4  # ||w||^2 <= 1 in units of 0.25
    assert not model.w[0].is_integer()


# ----------------------------------------------------------------------------
# decision rule
# ----------------------------------------------------------------------------

def test_tie_rule_zero_score_predicts_the_larger_class():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    y = np.array(["no", "yes", "yes"])
    model = zero_one_halfspace(X, y)
    info = get_info(model)
    assert info.extra["classes"] == ("no", "yes")
    assert info.extra["threshold"] == pytest.approx(-0.5)
    assert list(predict_halfspace([0, 0], X, info)) == ["yes"] * 3
    assert list(predict_halfspace([1, -1], X, info)) == ["yes", "no", "yes"]
    assert list(predict_halfspace([1, -1], X, model, pm=True)) == [1, -1, 1]
    # tau-grid scores rounded in floating point still land on the right side
    model2 = zero_one_halfspace(X, y, grid=[-0.3, -0.1, 0.1, 0.3], norm_bound=1.0)
    info2 = get_info(model2)
    assert info2.extra["margin"] == pytest.approx(0.1)  # sums of odd multiples of 0.1
    assert list(predict_halfspace([0.3, -0.1], np.array([[1.0, 3.0]]), info2, pm=True)) == [1]


def test_predict_rejects_wrong_length_w():
    X, y = _data(0, n=20, d=2)
    info = get_info(zero_one_halfspace(X, y, fit_intercept=True))
    with pytest.raises(ParameterError) as exc:
        predict_halfspace([1, 1], X, info)
    assert exc.value.parameter == "w"
    assert predict_halfspace([1, 1, -1], X, info).shape == (20,)


# ----------------------------------------------------------------------------
# RSPM model
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_rspm_model_optimum_and_encoding(seed):
    X, y = _data(seed + 60, n=60, d=3, values=(-1, 0, 1, 2))
    model = rspm_halfspace(X, y)
    info = get_info(model)
    assert info.extra["separator_vars"] == ("p", "n")
    assert info.grid == ((-1, 0, 1),) * 3 and info.norm_bound == pytest.approx(math.sqrt(3))
    assert not hasattr(model, "norm_ball") and not hasattr(model, "r")
    rep = _solve(model)
    best = min(_true_loss(np.array(w, float), X, y, info) for w in itertools.product((-1, 0, 1), repeat=3))
    assert rep.objective == pytest.approx(best, abs=1e-6)
    w = get_weights(model)
    assert _true_loss(w, X, y, info) == round(rep.objective)
    for j in range(3):
        p, n = round(model.p[j].value), round(model.n[j].value)
        assert p + n <= 1 and w[j] == p - n
    per_record = rspm_halfspace(X, y, merge_rows=False)
    assert _solve(per_record).objective == pytest.approx(rep.objective, abs=1e-6)


# ----------------------------------------------------------------------------
# convex losses
# ----------------------------------------------------------------------------

def _reg_data(seed, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    X[::4] = X[1::4]  # some identical rows
    y = X @ rng.uniform(-1, 1, d) + rng.normal(0, 0.2, n)
    return X, np.clip(y, -2, 2)


def test_hinge_loss_at_fixed_w_matches_numpy():
    X, y01 = _reg_data(1)
    y = np.where(y01 > 0, 1, -1)
    model = hinge_halfspace(X, y, bound=2.0, x_bound=1.0)
    info = get_info(model)
    C = 1 + 2.0 * 3 * 1.0
    assert info.extra["scale"] == pytest.approx(C)
    assert info.lipschitz_l1 == pytest.approx(1.0 / C)
    assert info.lipschitz == pytest.approx(math.sqrt(3) / C)
    assert info.linf_diameter == 4.0 and info.l2_diameter == pytest.approx(4 * math.sqrt(3))
    rng = np.random.default_rng(0)
    for _ in range(3):
        w = rng.uniform(-2, 2, 3)
        _fix_w(model, w)
        losses = np.maximum(0, 1 - y * (X @ w)) / C
        assert np.all((losses >= 0) & (losses <= 1))
        assert _solve(model).objective == pytest.approx(losses.sum(), rel=1e-7, abs=1e-7)


def test_hinge_merged_equals_unmerged_and_predicts_with_rule():
    X, y01 = _reg_data(2)
    y = np.where(y01 > 0, "a", "b")
    a = hinge_halfspace(X, y, x_bound=1.0)
    b = hinge_halfspace(X, y, x_bound=1.0, merge_rows=False)
    assert len(a.xi) < len(b.xi)
    assert _solve(a).objective == pytest.approx(_solve(b).objective, abs=1e-7)
    pred = predict_halfspace(get_weights(a), X, get_info(a))
    assert set(pred) <= {"a", "b"}


def test_absolute_loss_at_fixed_w_matches_numpy():
    X, y = _reg_data(3)
    model = absolute_regression(X, y, bound=1.5, x_bound=[1, 1, 1], y_bound=2.0, fit_intercept=True)
    info = get_info(model)
    C = 2.0 + 1.5 * 4
    assert info.extra["scale"] == pytest.approx(C)
    assert info.lipschitz_l1 == pytest.approx(1.0 / C)
    w = np.array([0.5, -1.0, 1.5, 0.2])
    _fix_w(model, w)
    Xi = np.hstack([X, np.ones((X.shape[0], 1))])
    losses = np.abs(y - Xi @ w) / C
    assert np.all(losses <= 1)
    assert _solve(model).objective == pytest.approx(losses.sum(), rel=1e-7, abs=1e-7)


def test_squared_loss_value_and_optimum():
    X, y = _reg_data(4)
    model = squared_regression(X, y, bound=0.5, x_bound=1.0, y_bound=2.0)
    info = get_info(model)
    C = 2.0 + 0.5 * 3
    assert info.lipschitz_l1 == pytest.approx(2.0 / C)
    w = np.array([0.1, -0.4, 0.3])
    for j in range(3):
        model.w[j].set_value(w[j])
    expected = ((y - X @ w) ** 2).sum() / C**2
    assert pyo.value(model.loss) == pytest.approx(expected, rel=1e-10)
    rep = _solve(model)
    from scipy.optimize import lsq_linear

    ref = lsq_linear(X, y, bounds=(-0.5, 0.5), tol=1e-12)
    assert rep.objective == pytest.approx(((y - X @ ref.x) ** 2).sum() / C**2, rel=1e-5, abs=1e-8)


def test_convex_losses_lie_in_unit_interval_on_the_box():
    rng = np.random.default_rng(9)
    beta = np.array([1.0, 2.0, 0.5])
    X = rng.uniform(-1, 1, (200, 3)) * beta
    y = rng.uniform(-3, 3, 200)
    for build, f in [
        (absolute_regression, lambda r: np.abs(r)),
        (squared_regression, lambda r: r**2),
    ]:
        info = get_info(build(X, y, bound=1.0, x_bound=beta, y_bound=3.0))
        C = info.extra["scale"]
        for _ in range(50):
            w = rng.choice([-1.0, 1.0], 3)  # corners maximize |<w, x>|
            v = f(y - X @ w) / (C if f(2.0) == 2.0 else C**2)
            assert np.all((v >= 0) & (v <= 1 + 1e-12))


def test_inferred_bounds_warn():
    X, y = _reg_data(5)
    with pytest.warns(PrivacyLeakWarning):
        hinge_halfspace(X, np.where(y > 0, 1, -1))
    with pytest.warns(PrivacyLeakWarning):
        absolute_regression(X, y, x_bound=1.0)
    with pytest.warns(PrivacyLeakWarning):
        discretize_features(X, None, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        squared_regression(X, y, x_bound=1.0, y_bound=3.0)


def test_x_is_clipped_to_public_bound():
    X = np.array([[3.0], [-0.5], [0.2]])
    y = np.array([1, -1, 1])
    model = hinge_halfspace(X, y, bound=1.0, x_bound=1.0)
    _fix_w(model, [1.0])
    # clipped x = (1, -0.5, 0.2): hinge = (0, 0.5, 0.8) / 2
    assert _solve(model).objective == pytest.approx(1.3 / 2.0)


# ----------------------------------------------------------------------------
# discretization
# ----------------------------------------------------------------------------

def test_discretize_features_maps_onto_public_grid():
    X = np.array([[0.0, 0.55, 1.0], [2.0, -0.3, 0.0], [0.5, 0.26, 1.0]])
    X0 = X.copy()
    Z = discretize_features(X, bounds=([0, 0, 0], [1, 1, 1]), levels=[4, 10, 1])
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Z, [[0, 6, 1], [4, 0, 0], [2, 3, 1]])
    # real-valued X is refused; its discretized version builds and solves
    y = np.array([1, -1, 1])
    with pytest.raises(ParameterError) as exc:
        zero_one_halfspace(X, y)
    assert exc.value.parameter == "X" and "discretize_features" in str(exc.value)
    model = zero_one_halfspace(Z, y)
    assert get_info(model).extra["exact_margin"] is True
    t = FeatureDiscretizer(bounds=(0, 1), levels=[4, 10, 1]).fit(X)
    np.testing.assert_array_equal(t.transform(X), Z)


@pytest.mark.parametrize("bounds,levels,param", [
    ((1, 0), 4, "bounds"),
    ((0, 1, 2), 4, "bounds"),
    ((0, [1, 1]), 4, "bounds"),
    ((0, 1), 0, "levels"),
    ((0, 1), 2.5, "levels"),
    ((0, 1), [1, 2], "levels"),
])
def test_discretize_features_validation(bounds, levels, param):
    with pytest.raises((ParameterError, ParameterTypeError)) as exc:
        discretize_features(np.zeros((2, 3)), bounds, levels)
    assert exc.value.parameter == param


# ----------------------------------------------------------------------------
# validation and input immutability
# ----------------------------------------------------------------------------

_X = np.array([[0, 1], [1, 0], [1, 1], [2, 1]], dtype=float)
_Y = np.array([1, -1, 1, -1])


@pytest.mark.parametrize("X,y,kwargs,param,exc_type", [
    ([[0, np.nan], [1, 0]], [1, -1], {}, "X", ParameterError),
    ([[0, np.inf], [1, 0]], [1, -1], {}, "X", ParameterError),
    ([[1, 1], [0, 1]], [1, 1], {}, "y", ParameterError),
    ([[1, 1], [0, 1]], [1, -1, 1], {}, "y", ParameterError),
    ([1, 2, 3], [1, -1, 1], {}, "X", ParameterError),
    ([[0.5, 1.0 / 3.0], [1.0, 0.0]], [1, -1], {}, "X", ParameterError),
    (_X, _Y, {"grid": []}, "grid", ParameterError),
    (_X, _Y, {"grid": [0, 1, 1]}, "grid", ParameterError),
    (_X, _Y, {"grid": [1]}, "grid", ParameterError),
    (_X, _Y, {"grid": 0}, "grid", ParameterError),
    (_X, _Y, {"grid": 2.5}, "grid", ParameterTypeError),
    (_X, _Y, {"grid": "abc"}, "grid", ParameterTypeError),
    (_X, _Y, {"grid": [[0, 1], [0, 1], [0, 1]]}, "grid", ParameterError),
    (_X, _Y, {"grid": [0, np.nan]}, "grid", ParameterError),
    (_X, _Y, {"grid": [0, 1, math.pi]}, "grid", ParameterError),
    (_X, _Y, {"norm_bound": -1.0}, "norm_bound", ParameterError),
    (_X, _Y, {"grid": [1, 2], "norm_bound": 1.0}, "norm_bound", ParameterError),
    (_X, _Y, {"merge_rows": "yes"}, "merge_rows", ParameterTypeError),
    (_X, _Y, {"chain_cuts": 1}, "chain_cuts", ParameterTypeError),
    (_X, _Y, {"swap_cuts": 1}, "swap_cuts", ParameterTypeError),
    (_X, _Y, {"fit_intercept": None}, "fit_intercept", ParameterTypeError),
    (_X, _Y, {"threshold": "0"}, "threshold", ParameterTypeError),
    (_X, _Y, {"margin": 1e-7}, "margin", ParameterError),
    (_X, _Y, {"margin": -1.0}, "margin", ParameterError),
])
def test_zero_one_validation_names_the_parameter(X, y, kwargs, param, exc_type):
    with pytest.raises(exc_type) as exc:
        zero_one_halfspace(X, y, **kwargs)
    assert exc.value.parameter == param


@pytest.mark.parametrize("build,kwargs,param", [
    (hinge_halfspace, {"bound": 0.0}, "bound"),
    (hinge_halfspace, {"x_bound": [1.0]}, "x_bound"),
    (hinge_halfspace, {"x_bound": -1.0}, "x_bound"),
    (absolute_regression, {"y_bound": 0.0, "x_bound": 1.0}, "y_bound"),
    (squared_regression, {"x_bound": [1.0, np.nan], "y_bound": 1.0}, "x_bound"),
    (rspm_halfspace, {"merge_rows": None}, "merge_rows"),
])
def test_other_builders_validate(build, kwargs, param):
    with pytest.raises((ParameterError, ParameterTypeError)) as exc:
        build(_X, _Y, **kwargs)
    assert exc.value.parameter == param


def test_regression_target_validation():
    with pytest.raises(ParameterError) as exc:
        squared_regression(_X, [1.0, np.nan, 0.0, 1.0], x_bound=1.0, y_bound=1.0)
    assert exc.value.parameter == "y"
    with pytest.raises(ParameterError) as exc:
        absolute_regression(_X, [1.0, 2.0], x_bound=1.0, y_bound=1.0)
    assert exc.value.parameter == "y"


def test_callers_arrays_are_not_modified():
    X = np.array([[-0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [2.0, 1.0], [5.0, -7.0]])
    y = np.array([1, -1, 1, -1, 1])
    yf = y.astype(float) * 10
    X0, y0, yf0 = X.copy(), y.copy(), yf.copy()
    zero_one_halfspace(X, y, fit_intercept=True)
    zero_one_halfspace(X, y, merge_rows=False)
    rspm_halfspace(X, y)
    hinge_halfspace(X, y, x_bound=1.0)
    absolute_regression(X, yf, x_bound=1.0, y_bound=1.0)
    squared_regression(X, yf, x_bound=1.0, y_bound=1.0)
    discretize_features(X, (0, 1), 3)
    predict_halfspace([1, 1], X, get_info(zero_one_halfspace(X, y)))
    for a, b in [(X, X0), (y, y0), (yf, yf0)]:
        np.testing.assert_array_equal(a, b)
    assert np.signbit(X[0, 0])  # even the -0.0 is untouched


def test_a_norm_bound_whose_square_overflows_is_refused_with_the_equivalent_bound():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([1, -1, 1, -1])
    same = r"norm_bound >= 1\.41421 \(the largest norm on this grid\) gives the same W"
    with pytest.raises(ParameterError, match=same) as err:
        zero_one_halfspace(X, y, norm_bound=1e300)      # grid -1..1 on d = 2: ||w|| <= sqrt(2)
    assert err.value.parameter == "norm_bound"


def test_too_small_margin_message_quotes_no_value_of_the_records():
    """The refusal of a margin below the solvers' integrality tolerance at this model's big-M
    values names the margin and the fixes, and no number computed from the records: two tables
    whose big-M values differ get the same message."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (20, 3))
    y = rng.integers(0, 2, 20)
    messages = []
    for A in (X, 3 * X):
        with pytest.raises(ParameterError, match="margin 1e-09 is too small") as info:
            zero_one_halfspace(A, y, margin=1e-9)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_feature_discretizer_refuses_no_value_of_the_data():
    """With public bounds, fit reads only X's shape and transform keeps a missing or infinite
    value as NaN (in a Pipeline it runs before the private estimator charges its ledger, so a
    refusal here would be free); the estimator refuses the NaN once charged."""
    from privopt.models import FeatureDiscretizer

    X = np.array([[0.0, 0.5], [np.nan, 1.0], [np.inf, -np.inf], [0.25, 2.0]])
    disc = FeatureDiscretizer(bounds=(0.0, 1.0), levels=4).fit(X)
    out = disc.transform(X)
    np.testing.assert_array_equal(out, [[0.0, 2.0], [np.nan, 4.0], [np.nan, np.nan], [1.0, 4.0]])
    with pytest.raises(ParameterTypeError, match="X"):
        disc.transform([["a", "b"]])
    with pytest.raises(ParameterError, match="fitted with 2"):
        disc.transform(np.zeros((2, 3)))
