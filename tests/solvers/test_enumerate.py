"""solver="enumerate": the exact argmin over W_tau without a MILP.

Agreement with HiGHS (objective and argmin) on perturbed and unperturbed
0/1-loss models of every kind the builder makes, the grid-point count against
hand counts, and refusal of models the enumeration would misread."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

import privopt
from privopt.exceptions import ModelError, ParameterError
from privopt.models import discretize_features, zero_one_halfspace
from privopt.solvers import choose_solver, count_grid_points, enumeration_size, solve

from tests.conftest import require_solver

XFORM = "privopt.objective_perturbation"


def _data(n=60, d=3, levels=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    score = X @ rng.normal(size=d) + rng.normal(0, 0.7, n)
    y = np.where(score > np.median(score), 1, -1)
    return X, y


def _both(model, eta=None, **xkw):
    """(objective, w) from enumeration and from HiGHS on two clones."""
    out = []
    for name in ("enumerate", "highs"):
        m = model.clone()
        if eta is not None:
            pyo.TransformationFactory(XFORM).apply_to(m, noise=eta, **xkw)
        rep = solve(m, name)
        assert rep.certified_optimal
        out.append((rep.objective, np.array([pyo.value(v) for v in m.w.values()])))
    return out


BUILDS = {
    "integer": lambda X, y: zero_one_halfspace(X, y),
    "intercept": lambda X, y: zero_one_halfspace(X, y, fit_intercept=True, threshold=0.5),
    "small-ball": lambda X, y: zero_one_halfspace(X, y, norm_bound=1.5),
    "tau-grid": lambda X, y: zero_one_halfspace(X, y, grid=[-1, -0.5, 0, 0.5, 1]),
    "unmerged": lambda X, y: zero_one_halfspace(X, y, merge_rows=False),
    "margin": lambda X, y: zero_one_halfspace(X + 0.37 * (X > 0), y, margin=0.25, grid=1),
}


@pytest.mark.parametrize("build", list(BUILDS), ids=list(BUILDS))
def test_enumeration_equals_milp(build):
    require_solver("highs")
    X, y = _data()
    model = BUILDS[build](X, y)
    d = len(model.w)
    (fe, we), (fh, wh) = _both(model)                        # the non-private optimum
    assert fe == pytest.approx(fh, abs=1e-6)
    seen = set()
    for seed in range(6):                                    # both signs of the last coordinate occur
        eta = np.random.default_rng(seed).normal(0.0, 4.0, size=d + 1)
        (fe, we), (fh, wh) = _both(model, eta)
        assert fe == pytest.approx(fh, abs=1e-6), (build, seed)
        np.testing.assert_allclose(we, wh, atol=1e-6)
        seen.add(tuple(we))
    assert len(seen) >= 2                                    # the answers depend on the noise


def test_enumeration_equals_milp_unnormalized_and_other_norm_bound():
    require_solver("highs")
    X, y = _data(seed=3)
    model = zero_one_halfspace(X, y)
    for seed in range(4):
        eta = np.random.default_rng(seed).normal(0.0, 3.0, size=3)
        (fe, we), (fh, wh) = _both(model, eta, normalize=False)
        assert fe == pytest.approx(fh, abs=1e-6) and np.allclose(we, wh)
        eta = np.random.default_rng(seed).normal(0.0, 3.0, size=4)
        (fe, we), (fh, wh) = _both(model, eta, norm_bound=1.0)   # a smaller ball than the model's
        assert fe == pytest.approx(fh, abs=1e-6) and np.allclose(we, wh)


def test_enumeration_by_brute_force_on_the_definition():
    """The argmin of L(w) - <eta, pi(w)> over every grid point, computed here from scratch."""
    X, y = _data(n=40, d=2, seed=7)
    model = zero_one_halfspace(X, y)                       # grid -1..1, D = sqrt(2)
    eta = np.array([3.0, -2.0, 1.5])
    m = model.clone()
    pyo.TransformationFactory(XFORM).apply_to(m, noise=eta)
    rep = solve(m, "enumerate")
    best = min(((np.sum(np.where(X @ w >= 0, 1, -1) != y) - eta @ privopt.perturbation.pi_value(w, math.sqrt(2)),
                 w) for w in map(np.array, itertools.product([-1.0, 0.0, 1.0], repeat=2)) if w @ w <= 2),
               key=lambda t: t[0])
    assert rep.objective == pytest.approx(best[0], abs=1e-9)
    np.testing.assert_array_equal([pyo.value(v) for v in m.w.values()], best[1])
    assert rep.certified_optimal and rep.bound == rep.objective


@pytest.mark.parametrize("d, B, D2, expected", [
    (2, 1, 2, 9), (2, 1, 1, 5), (3, 2, 4, 81 - 8 * 3 - 12 - 12),   # hand counts below
    (10, 3, 10, 327_829), (23, 4, 4, 156_953), (28, 5, 4, 355_433),
])
def test_grid_point_counts(d, B, D2, expected):
    # (2, 1, 2): all 9 points of {-1,0,1}^2; (2, 1, 1): 0 and the 4 unit vectors;
    # (3, 2, 4) on {-2..2}^3: 125 points minus those with ||w||^2 > 4
    coef = [[v * v for v in range(-B, B + 1)]] * d
    if (d, B, D2) == (3, 2, 4):
        expected = sum(1 for w in itertools.product(range(-2, 3), repeat=3) if sum(v * v for v in w) <= 4)
    assert count_grid_points(coef, D2) == expected


def test_enumeration_size_and_auto_choice():
    X, y = _data(n=100, d=3)
    model = zero_one_halfspace(X, y)                     # {-1,0,1}^3 in the ball of radius sqrt(3): 27 points
    points, rows = enumeration_size(model)
    assert points == 27 and rows == len(np.unique(X, axis=0))
    assert choose_solver(model) == "enumerate"
    big = zero_one_halfspace(np.ones((4, 40)), [1, -1, 1, -1])   # d = 40, D^2 = 40: astronomically many
    assert enumeration_size(big)[0] > 10**15 and choose_solver(big) == "highs"
    assert choose_solver(pyo.ConcreteModel()) == "highs"


def test_opdisc_auto_uses_enumeration_and_gives_the_milp_answer():
    require_solver("highs")
    X, y = _data(n=80, d=3, seed=11)
    model = zero_one_halfspace(X, y)
    for seed in range(3):
        a = privopt.opdisc(model, epsilon=1.0, delta=1e-4, solver="auto", random_state=seed, keep_report=True)
        b = privopt.opdisc(model, epsilon=1.0, delta=1e-4, solver="highs", random_state=seed, keep_report=True)
        assert a.report.solver == "enumerate" and a.certified
        np.testing.assert_array_equal(a.weights, b.weights)
        assert a.report.objective == pytest.approx(b.report.objective, abs=1e-6)


def test_estimator_default_on_small_real_valued_data():
    """n = 398, d = 10 real features in [0, 1], the estimator's defaults: certified at once."""
    from privopt.estimators import PrivateHalfspaceClassifier

    rng = np.random.default_rng(0)
    X = rng.random((398, 10))
    y = np.where(X @ rng.normal(size=10) > 0.2, 1, 0)
    clf = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0, keep_report=True).fit(X, y)
    assert clf.result_.certified and clf.result_.report.solver == "enumerate"
    assert clf.result_.report.wall_time < 60


def test_refuses_models_it_would_misread():
    X, y = _data()
    model = zero_one_halfspace(X, y)
    extra = model.clone()
    extra.cut = pyo.Constraint(expr=extra.w[0] >= 1)              # a user's constraint
    with pytest.raises(ModelError, match="cut"):
        solve(extra, "enumerate")
    fixed = model.clone()
    fixed.w[1].fix(0)
    with pytest.raises(ModelError, match="w\\[1\\]"):
        solve(fixed, "enumerate")
    off = model.clone()
    off.norm_ball.deactivate()
    with pytest.raises(ModelError, match="deactivated"):
        solve(off, "enumerate")
    plain = pyo.ConcreteModel()
    plain.w = pyo.Var([0], bounds=(0, 1), domain=pyo.Integers)
    plain.o = pyo.Objective(expr=plain.w[0])
    with pytest.raises(ModelError, match="zero_one_halfspace"):
        solve(plain, "enumerate")
    with pytest.raises(ParameterError, match="max_points"):
        solve(model.clone(), "enumerate", options={"max_points": 5})
    with pytest.raises(ParameterError, match="options"):
        solve(model.clone(), "enumerate", options={"presolve": "off"})


def test_discretized_real_features_agree_with_milp():
    require_solver("highs")
    rng = np.random.default_rng(5)
    Xr = rng.random((120, 4))
    y = np.where(Xr @ [1.0, -1.0, 0.5, 0.0] > 0.2, 1, -1)
    Xi = discretize_features(Xr, bounds=(0, 1), levels=4)
    model = zero_one_halfspace(Xi, y)
    for seed in range(3):
        eta = np.random.default_rng(seed).normal(0.0, 10.0, size=5)
        (fe, we), (fh, wh) = _both(model, eta)
        assert fe == pytest.approx(fh, abs=1e-6) and np.allclose(we, wh)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.slow
def test_branch_and_bound_equals_the_full_enumeration_on_wide_one_hot(normalize):
    """solver='enumerate' on a perturbed model searches by support with bounds; its
    answer is the argmin of L(w) - scale <eta, pi(w)> over all of W_tau, computed here
    point by point."""
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.search import enumeration_levels, iter_losses

    rng = np.random.default_rng(4)
    X = np.hstack([np.eye(4)[rng.integers(0, 4, 1500)] for _ in range(5)])
    y = np.where(X @ rng.normal(size=20) + rng.normal(0, 1, 1500) > 0, 1, -1)
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True)
    data = getattr(model, ENUMERATION_ATTR)
    d = len(model.w)
    for seed in range(4):
        eta = np.random.default_rng(seed).normal(0.0, 30.0, size=d + 1 if normalize else d)
        m = model.clone()
        pyo.TransformationFactory(XFORM).apply_to(m, noise=eta, normalize=normalize)
        rep = solve(m, "enumerate")
        assert rep.certified_optimal and "branch and bound" in rep.message
        coef, bound, unit, D = enumeration_levels(data)
        best = math.inf
        for W, used, losses in iter_losses(data, coef, bound, engine="dense"):
            pert = (W @ eta[:d] + eta[d] * np.sqrt(np.maximum(0.0, D * D - used * unit))) / D if normalize \
                else W @ eta[:d]
            best = min(best, float((losses - pert).min()))
        assert rep.objective == pytest.approx(best, abs=1e-9)
        w = np.array([pyo.value(v) for v in m.w.values()])
        positive = data["X"] @ w >= data["theta"]
        loss = data["pos"] @ ~positive + data["neg"] @ positive
        pert = eta[:d] @ w
        if normalize:
            pert = (pert + eta[d] * np.sqrt(max(0.0, D * D - w @ w))) / D
        assert loss - pert == pytest.approx(best, abs=1e-9)


def _perturbed(X, y, eta, normalize=True, **kw):
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.solvers._enumerate import enumeration_levels
    from privopt.search._regions import perturbed_problem

    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True, **kw)
    data = getattr(model, ENUMERATION_ATTR)
    return model, data, perturbed_problem(data, enumeration_levels(data), eta, 7.0, normalize)


@pytest.mark.parametrize("kind", ["one-hot", "dense"])
@pytest.mark.parametrize("budget", [0, None, 10 ** 9])
@pytest.mark.parametrize("prune", [False, True])
def test_region_minima_against_every_point_scored(kind, budget, prune):
    """Each support's value from the row-pattern histogram: where marked exact, the
    minimum of L(v) - scale <eta, pi(v)> over its points (scored here row by row,
    numpy) and the first point attaining it; elsewhere a lower bound on it, left as a
    bound only when the budget rules the histogram out or the bound is above a value
    already attained in the call (``prune``).  budget 0 = bounds only, 10^9 = no cost
    limit, None = the default rule (on one-hot data every support is within it)."""
    from privopt.search._patterns import region_minima

    rng = np.random.default_rng(11)
    if kind == "one-hot":
        X = np.hstack([np.eye(3)[rng.integers(0, 3, 400)] for _ in range(3)])
    else:
        X = rng.integers(0, 4, size=(400, 6)).astype(float)
    y = np.where(X @ rng.normal(size=X.shape[1]) + rng.normal(0, 1, 400) > 0, 1, -1)
    eta = rng.normal(0.0, 3.0, size=X.shape[1] + 2)
    _, data, problem = _perturbed(X, y, eta)
    Xd = data["X"]
    seen_exact = seen_bound = 0
    for k in range(problem.k + 1):
        S = problem.supports(k)
        obj = problem._objective(k)
        val, exact, arg = region_minima(problem.records, S, problem.points(k), budget=budget, prune=prune)
        V = problem.vectors[k]
        running = math.inf
        for r in range(len(S)):
            scores = Xd[:, S[r]] @ V.T
            positive = scores >= data["theta"]
            loss = data["pos"] @ ~positive + data["neg"] @ positive
            pert = (obj["noise"][S[r]] @ V.T + obj["extra"]) / obj["den"]
            J = loss - obj["scale"] * pert
            if exact[r]:
                seen_exact += 1
                assert val[r] == pytest.approx(J.min(), abs=1e-9)
                assert J[arg[r]] == pytest.approx(J.min(), abs=1e-9)
                running = min(running, val[r])
            else:
                seen_bound += 1
                assert val[r] <= J.min() + 1e-9
                if budget == 10 ** 9 or (budget is None and kind == "one-hot"):
                    assert prune and val[r] > running   # skipped only because it cannot win
    assert seen_bound > 0 or not prune and budget != 0
    if budget == 0:
        assert seen_exact == 1                          # the empty support is always exact
    else:
        assert seen_exact > problem.k


def test_support_values_numba_and_numpy_agree():
    """One region's losses and objective by the compiled histogram kernel and by
    scoring every row with numpy: the same losses, the same objective."""
    from privopt.search._patterns import support_values

    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, size=(300, 7)).astype(float)
    y = np.where(X @ rng.normal(size=7) + rng.normal(0, 1, 300) > 0, 1, -1)
    _, _, problem = _perturbed(X, y, rng.normal(0.0, 3.0, size=9))
    for k in range(problem.k + 1):
        for S in problem.supports(k)[:12]:
            a = support_values(problem.records, S, problem.points(k))
            b = support_values(problem.records, S, problem.points(k), use_numba=False)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_allclose(a[1], b[1], rtol=0, atol=1e-9)


@pytest.mark.slow
def test_branch_and_bound_on_worker_processes_gives_the_local_answer():
    """The branch and bound split over a process pool (each task pruned by the best
    value known when it is sent) returns the candidate of the single-process run,
    on data where some supports are bounds and some exact; a deadline already past
    stops it with done < total; opdisc with threads=2 releases the same w."""
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    from privopt.search._topdown import search_optimum
    from privopt.solvers import _enumerate

    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(1500, 9)).astype(float)
    y = np.where(X @ rng.normal(size=9) + rng.normal(0, 1, 1500) > 0, 1, -1)
    model, data, problem = _perturbed(X, y, rng.normal(0.0, 20.0, size=11))
    # auto's rule counts the supports without building the problem: the same number
    assert _enumerate.bound_search_work(data) == problem.n_regions * data["X"].shape[0]
    local = search_optimum(problem)
    assert local[1] == local[2]
    import time

    with ProcessPoolExecutor(2) as pool:
        assert search_optimum(problem, executor=pool, tasks_per_worker=3) == local
        best, done, total = search_optimum(problem, executor=pool, deadline=time.perf_counter() - 1)
        assert best is None and done == 0 < total
    with ThreadPoolExecutor(3) as pool:
        assert search_optimum(problem, executor=pool) == local
    best, done, total = search_optimum(problem, deadline=time.perf_counter() - 1)
    assert best is None and done == 0 < total

    out = []
    old = _enumerate.LOCAL_SECONDS
    _enumerate.LOCAL_SECONDS = 0.0            # send even this small search to the pool
    try:
        for threads in (1, 2):
            res = privopt.opdisc(model, epsilon=1.0, delta=1e-6, solver="enumerate", random_state=3,
                                 threads=threads, keep_report=True)
            assert res.certified and ("2 processes" in res.report.message) == (threads == 2)
            out.append((res.report.objective, res.weights))
    finally:
        _enumerate.LOCAL_SECONDS = old
    assert out[0][0] == out[1][0] and np.array_equal(out[0][1], out[1][1])
    # on an executor the caller gives (here a thread pool and a process pool), and "local"
    for executor in (ThreadPoolExecutor(2), ProcessPoolExecutor(2), "local"):
        res = privopt.opdisc(model, epsilon=1.0, delta=1e-6, solver="enumerate", random_state=3,
                             executor=executor, keep_report=True)
        assert res.certified and res.report.objective == out[0][0] and np.array_equal(res.weights, out[0][1])
        assert ("executor's 2 workers" in res.report.message) == (executor != "local")
        if executor != "local":
            executor.shutdown()
    with pytest.raises(Exception, match="executor"):
        privopt.opdisc(model, epsilon=1.0, delta=1e-6, solver="enumerate", random_state=3, executor=42)
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = privopt.opdisc(model, epsilon=1.0, delta=1e-6, solver="enumerate", random_state=3,
                             executor=client, keep_report=True)
        assert res.report.objective == out[0][0] and np.array_equal(res.weights, out[0][1])


def test_large_balls_are_not_split_by_support():
    """The split by support lists each size's points once and evaluates them on every
    support: with the paper's ball (D^2 = d) on 20 binary features a support of 20
    coordinates alone has 2^20 points, so the split is refused (auto goes to the MILP,
    and the model is built without listing anything); at D = 2 it applies."""
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.solvers._enumerate import bound_search_work

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 20))
    y = np.where(X.sum(axis=1) > 10, 1, -1)
    paper = zero_one_halfspace(X, y)                       # grid -4..4, D^2 = 20
    assert bound_search_work(getattr(paper, ENUMERATION_ATTR)) is None
    assert choose_solver(paper, perturbed=True) == "highs"
    small = zero_one_halfspace(X, y, grid=2, norm_bound=2.0)
    assert bound_search_work(getattr(small, ENUMERATION_ATTR)) is not None
    assert choose_solver(small, perturbed=True) == "enumerate"


# --- the compiled integer scorer of the dense engine ---------------------------------------

def _integer_cases():
    """zero_one_halfspace data on integer features (negative ones too), with and without
    an intercept, a threshold off the lattice, one feature, and a centred grid."""
    rng = np.random.default_rng(12)
    for n, d, grid, D, kw in [(300, 4, 2, 2.0, {"fit_intercept": True}),
                              (500, 3, 3, 3.0, {"threshold": 2.3}),
                              (200, 1, 4, 4.0, {}),
                              (400, 5, [-4, -2, 0, 2, 4], 6.0, {"fit_intercept": True, "threshold": -1.0})]:
        X = rng.integers(-4, 5, size=(n, d)).astype(float)
        y = np.where(X @ rng.normal(size=d) + rng.normal(0, 1.5, n) > 0, 1, -1)
        yield zero_one_halfspace(X, y, grid=grid, norm_bound=D, **kw)


@pytest.mark.parametrize("model", list(_integer_cases()))
def test_integer_scorer_gives_the_numpy_losses_bit_for_bit(model):
    """IntegerLattice (exact integers, compiled) returns the float losses of the numpy
    engine exactly, in the enumeration's order and in any other order of the points."""
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.search import enumeration_levels
    from privopt.search._losses import IntegerLattice, _loss
    from privopt.space import iter_grid_blocks

    pytest.importorskip("numba")
    data = getattr(model, ENUMERATION_ATTR)
    lattice = IntegerLattice.of(data)
    assert lattice is not None
    coef, bound, _, _ = enumeration_levels(data)
    rng = np.random.default_rng(0)
    for vals, _ in iter_grid_blocks(data.grid, coef, bound, 97):
        expected = _loss(data.X @ vals.T, data)
        got = lattice.losses(vals)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
        shuffled = rng.permutation(vals.shape[0])
        assert np.array_equal(lattice.losses(vals[shuffled]), expected[shuffled])


def test_integer_scorer_applies_to_the_exact_integer_lattice_only():
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.search import IntegerLattice

    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [1.0, 1.0]])
    y = np.array([1, -1, 1, -1])
    fine = getattr(zero_one_halfspace(X, y, grid=[-0.5, 0.0, 0.5], norm_bound=1.0), ENUMERATION_ATTR)
    margin = getattr(zero_one_halfspace(X + 0.25, y, grid=1, norm_bound=1.0, margin=0.1), ENUMERATION_ATTR)
    assert IntegerLattice.of(fine) is None and IntegerLattice.of(margin) is None
