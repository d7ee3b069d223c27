"""Report-noisy-max over W by branch and bound (privopt.search.BoundedArgmax)
releases exactly what scoring every point releases, seed for seed.

The reference is the path it replaces: every point's loss from
``iter_losses`` in the enumeration's order, the noise drawn block by block,
the first largest key ``noise - L / s`` taken (and None at or below a floor).
"""

from __future__ import annotations

import numpy as np
import pytest

import privopt
import privopt.mechanisms.selection.mixture as mix
from privopt.mechanisms import draw_selection_noise
from privopt.models import zero_one_loss
from privopt.search import enumeration_levels
from privopt.search import BoundedArgmax, iter_losses

from tests._law import holds_on_a_fresh_sample, pooled_chi_square_pvalue
from tests.mechanisms.test_mixture import _exact_law, _instance

METHODS = ("exponential", "permute_and_flip")
SEEDS = range(50)


def _problems():
    """Five small 0/1 problems on integer features: (name, data)."""
    rng = np.random.default_rng(7)
    X4 = rng.integers(-2, 3, size=(150, 4)).astype(float)
    y4 = np.where(X4[:, 0] - X4[:, 1] + 0.5 * X4[:, 2] + rng.normal(size=150) > 0, 1, -1)
    X3 = rng.integers(0, 3, size=(80, 3)).astype(float)
    y3 = np.where(X3[:, 0] + X3[:, 1] + rng.normal(size=80) > 2, 1, -1)
    X1 = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 1], dtype=float)[:, None] - 1.0
    y1 = np.array([-1, -1, -1, 1, 1, 1, 1, 1, -1, 1, -1, 1, -1, 1])
    return [("4 features, grid 3, D 3", zero_one_loss(X4, y4, grid=3, norm_bound=3.0).data),
            ("3 features, grid 2, D 2", zero_one_loss(X3, y3, grid=2, norm_bound=2.0).data),
            ("1 feature, grid 2, D 2", zero_one_loss(X1, y1, grid=2, norm_bound=2.0).data),
            ("2 features, grid 3, D 3", zero_one_loss(X4[:, :2], y4, grid=3, norm_bound=3.0).data),
            # scores up to 20,000 * 2 * 3 * 5 (int32 in the kernel, not int16)
            ("4 features x 20,000, grid 3, D 3", zero_one_loss(20_000 * X4, y4, grid=3, norm_bound=3.0).data),
            # 40,000 records on 27 distinct rows: label counts and losses past int16 (the kernel's int32 counts)
            ("3 features, 500 copies, grid 2, D 2",
             zero_one_loss(np.tile(X3, (500, 1)), np.tile(y3, 500), grid=2, norm_bound=2.0).data)]


def _scored_every_point(data, coef, bound, noise, scale):
    """(keys, points) of every point of W, the losses from iter_losses."""
    points, losses = [], []
    for vals, _units, block in iter_losses(data, coef, bound):
        points.append(vals)
        losses.append(np.asarray(block, dtype=float))
    return noise - np.concatenate(losses) / scale, np.vstack(points)


def test_one_noise_call_is_the_block_by_block_stream():
    # the branch and bound draws a W's noise in one call where scoring drew it block by block
    for method in METHODS:
        for seed in range(5):
            whole = draw_selection_noise(np.random.default_rng(seed), method, 100_003)
            rng = np.random.default_rng(seed)
            parts = [draw_selection_noise(rng, method, n) for n in (1, 7, 5_000, 33_333, 61_662)]
            np.testing.assert_array_equal(whole, np.concatenate(parts))


def test_score_dtype_is_the_narrowest_that_holds_every_partial_score():
    from privopt.search._argmax import _score_dtype

    xt, gint = np.array([[1, -2], [3, 0]]), np.array([[1, -1], [2, 0]])
    assert _score_dtype(xt, gint, 5) is np.int16            # 5 + 2 * 1 + 3 * 2 = 13
    assert _score_dtype(np.array([[32_767]]), np.array([[1]]), 0) is np.int16
    assert _score_dtype(np.array([[32_767]]), np.array([[1]]), -1) is np.int32    # |thr| counts: 32,768
    assert _score_dtype(np.array([[16_384], [16_384]]), np.array([[-1], [1]])) is np.int32
    assert _score_dtype(np.array([[40_000]]), np.array([[0]])) is np.int32       # the values themselves
    assert _score_dtype(np.array([[2 ** 31 - 1]]), np.array([[1]])) is np.int32
    assert _score_dtype(np.array([[2 ** 30]]), np.array([[2]])) is np.int64
    assert _score_dtype(np.array([[-9, 13]])) is np.int16 and _score_dtype(np.array([[-40_000, 3]])) is np.int32


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("score_type", ["narrowest", "int64"])
@pytest.mark.parametrize("tables", ["per budget step", "coarsened"])
@pytest.mark.parametrize("scale", [0.5, 2.0, 20.0])
@pytest.mark.parametrize("index", range(6))
@pytest.mark.slow
def test_the_first_largest_key_and_none_at_or_below_the_floor(index, scale, tables, score_type, threads,
                                                              monkeypatch):
    import privopt.search._argmax as enum

    # threads: the subtrees at coordinate d-2 dealt to 3 threads, however small W is
    monkeypatch.setattr(enum, "kernel_threads", lambda: threads)
    monkeypatch.setattr(enum, "_THREAD_MIN_POINT_ROWS", 1)
    if tables == "coarsened":       # the score-bound tables capped: budgets share wider columns
        monkeypatch.setattr(enum, "_SCORE_BOUND_ENTRIES", 1)
    if score_type == "int64":       # the kernel's comparisons in int64 whatever the scores' range
        monkeypatch.setattr(enum, "_score_dtype", lambda *args: np.int64)
    name, data = _problems()[index]
    coef, bound, _, _ = enumeration_levels(data, data.norm_bound)
    argmax = BoundedArgmax.of(data, coef, bound)
    assert argmax is not None, name
    assert argmax.threads() == (threads if len(data.grid) >= 2 else 1)
    pruned = False
    for seed in SEEDS:
        noise = np.random.default_rng(seed).standard_exponential(argmax.n_points)
        keys, points = _scored_every_point(data, coef, bound, noise, scale)
        k = int(np.argmax(keys))
        top = keys[k]
        second = np.max(np.delete(keys, k)) if len(keys) > 1 else top - 1.0
        for floor in (None, top - 5.0, (top + second) / 2, second, top, np.nextafter(top, -np.inf), top + 1.0):
            found = argmax.best(noise, scale, floor)
            if floor is not None and top <= floor:
                assert found.point is None and found.index == -1, (name, seed, floor)
                continue
            assert (found.index, found.key) == (k, top), (name, seed, floor)
            np.testing.assert_array_equal(found.point, points[k])
            pruned |= found.points_scored < argmax.n_points
    assert pruned or argmax.n_points < 10, name    # the bound does leave points out


def test_more_records_than_its_int32_counts_hold_are_not_searched(monkeypatch):
    # the kernel counts a point's rows in int32 (exact below 2^31 records); past the limit
    # there is no branch and bound, and every point is scored instead
    import privopt.search._argmax as enum

    _, data = _problems()[5]
    coef, bound, _, _ = enumeration_levels(data, data.norm_bound)
    n = int(data.pos.sum() + data.neg.sum())
    assert n == 40_000 and enum._MOST_RECORDS == 2**31 - 1
    monkeypatch.setattr(enum, "_MOST_RECORDS", n)
    assert BoundedArgmax.of(data, coef, bound) is not None
    monkeypatch.setattr(enum, "_MOST_RECORDS", n - 1)
    assert BoundedArgmax.of(data, coef, bound) is None


def test_ties_go_to_the_first_point():
    # equal keys (a constant loss and equal noise): the first point in the enumeration's order
    _, data = _problems()[1]
    coef, bound, _, _ = enumeration_levels(data, data.norm_bound)
    argmax = BoundedArgmax.of(data, coef, bound)
    keys, _ = _scored_every_point(data, coef, bound, np.zeros(argmax.n_points), 2.0)
    best = np.flatnonzero(keys == keys.max())
    noise = np.zeros(argmax.n_points)
    assert argmax.best(noise, 2.0).index == best[0]


def _resolutions():
    """Three W's of one table (public choices): one grid and ball after another."""
    rng = np.random.default_rng(3)
    X = rng.integers(-2, 3, size=(120, 3)).astype(float)
    y = np.where(X[:, 0] - X[:, 2] + rng.normal(size=120) > 0, 1, -1)
    return [zero_one_loss(X, y, grid=1, norm_bound=1.0), zero_one_loss(X, y, grid=2, norm_bound=2.0),
            zero_one_loss(X, y, grid=3, norm_bound=3.0)]


@pytest.mark.parametrize("method", METHODS)
def test_the_mixture_releases_what_scoring_every_point_releases(method, monkeypatch):
    """Every W_r scored by branch and bound (the later ones against the floor of the
    best total so far) against every point scored, block by block: the same release
    for every seed, with fewer points scored."""
    models = _resolutions()
    monkeypatch.setattr(mix, "topdown_problem", lambda data, norm_bound=None: None)
    new = [privopt.mixture_selection(models, epsilon=1.0, method=method, random_state=s, keep_report=True)
           for s in SEEDS]
    monkeypatch.setattr(mix.BoundedArgmax, "of", staticmethod(lambda *args: None))
    old = [privopt.mixture_selection(models, epsilon=1.0, method=method, random_state=s, keep_report=True)
           for s in SEEDS]
    for a, b in zip(new, old):
        np.testing.assert_array_equal(a.weights, b.weights)
        assert a.parameters == b.parameters
    scored = [p["points_scored"] for r in new for p in r.report.parts]
    sizes = [p["n_points"] for r in new for p in r.report.parts]
    assert all(s is not None for s in scored)
    assert sum(scored) < sum(sizes)
    assert all(p["points_scored"] is None for r in old for p in r.report.parts)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_the_secure_generator_keeps_the_law(method, monkeypatch):
    # random_state=None: W's noise in one call of the secure generator; the release's law is the exact one
    models, _, losses = _instance()
    monkeypatch.setattr(mix, "topdown_problem", lambda data, norm_bound=None: None)
    prior = (0.3, 0.7)
    exact = _exact_law(losses, prior, 1.0, method)
    cells = [(0, -1.0), (0, 0.0), (0, 1.0), (1, -2.0), (1, -1.0), (1, 0.0), (1, 1.0), (1, 2.0)]

    def pvalue():
        counts = np.zeros(len(cells))
        for _ in range(3000):
            res = privopt.mixture_selection(models, epsilon=1.0, prior=prior, method=method, random_state=None,
                                            keep_report=True)
            counts[cells.index((res.parameters["resolution"], float(res.weights[0])))] += 1
            assert res.report.parts[0]["points_scored"] is not None
        return pooled_chi_square_pvalue(counts, exact)

    assert holds_on_a_fresh_sample(pvalue)


def test_partial_score_bounds_are_the_range_within_each_budget():
    """fmin / fmax of coordinates 0..j-1 within a squared-norm budget b: every
    assignment with each coordinate's units <= b lies inside, and for one free
    coordinate the range is exactly that of its values within b (a box over the
    whole grid, as before, would be wider at small budgets)."""
    from privopt.search._argmax import _partial_score_bounds

    rng = np.random.default_rng(3)
    d, rows = 3, 40
    xt = rng.integers(-3, 4, size=(d, rows)).astype(np.int64)
    grid = np.array([-2, -1, 0, 1, 2], dtype=np.int64)
    gint = np.tile(grid, (d, 1))
    coef = gint ** 2
    valid = np.ones_like(gint, dtype=bool)
    bound = 6
    bucket, fmin, fmax = _partial_score_bounds(xt, gint, coef, valid, bound)
    assert fmin.shape[1] == 3          # the budget steps 0, 1, 4
    for b in range(bound + 1):
        allowed = grid[grid ** 2 <= b]
        for j in range(1, d + 1):
            lo, hi = fmin[j, bucket[b]], fmax[j, bucket[b]]
            for combo in np.array(np.meshgrid(*[allowed] * j)).reshape(j, -1).T:
                score = xt[:j].T @ combo
                assert np.all(lo <= score) and np.all(score <= hi)
        single = np.outer(xt[0], allowed)
        np.testing.assert_array_equal(fmin[1, bucket[b]], single.min(axis=1))
        np.testing.assert_array_equal(fmax[1, bucket[b]], single.max(axis=1))
    assert np.all(fmin[:, :, :] <= 0) and np.all(fmax >= 0)     # 0 is in every grid: w = 0 scores 0


def test_ball_score_bounds_are_the_exact_range_within_each_budget():
    """The ball's tables: fmin / fmax of coordinates 0..j-1 are the smallest and largest
    score over the assignments whose units sum to at most b (worked out here by listing
    them), inside the box's ranges, equal to them for one free coordinate; a grid without 0
    (coordinate 1) leaves small budgets with no assignment."""
    import itertools

    from privopt.search._argmax import _ball_bounds_kernel, _ball_score_bounds, _partial_score_bounds

    rng = np.random.default_rng(5)
    d, rows, bound = 4, 30, 7
    xt = rng.integers(-3, 4, size=(d, rows)).astype(np.int64)
    grids = [np.array([-2, -1, 0, 1, 2]), np.array([-1, 1]), np.array([-2, 0, 2]), np.array([0, 1])]
    width = max(len(g) for g in grids)
    gint = np.zeros((d, width), dtype=np.int64)
    coef = np.full((d, width), bound + 1, dtype=np.int64)
    for j, g in enumerate(grids):
        gint[j, :len(g)], coef[j, :len(g)] = g, g ** 2
    nk = np.array([len(g) for g in grids], dtype=np.int64)
    valid = np.arange(width)[None, :] < nk[:, None]
    bucket, fmin, fmax = _ball_score_bounds(xt, gint, coef, nk, bound, _ball_bounds_kernel())
    box_bucket, bmin, bmax = _partial_score_bounds(xt, gint, coef, valid, bound)
    np.testing.assert_array_equal(bucket, np.arange(bound + 1))
    tighter = False
    for j in range(1, d + 1):
        combos = np.array(list(itertools.product(*grids[:j])))
        units = (combos ** 2).sum(axis=1)
        scores = combos @ xt[:j]                        # (assignments, rows)
        for b in range(bound + 1):
            inside = scores[units <= b]
            if len(inside) == 0:        # no assignment fits (coordinate 1 has no 0): never a node's budget
                continue
            np.testing.assert_array_equal(fmin[j, b], inside.min(axis=0))
            np.testing.assert_array_equal(fmax[j, b], inside.max(axis=0))
            assert np.all(bmin[j, box_bucket[b]] <= fmin[j, b]) and np.all(fmax[j, b] <= bmax[j, box_bucket[b]])
            if j == 1:
                np.testing.assert_array_equal(fmin[1, b], bmin[1, box_bucket[b]])
            tighter |= bool(np.any(fmax[j, b] < bmax[j, box_bucket[b]]))
    assert tighter      # two free coordinates cannot both spend the whole budget


def test_split_thresholds_are_the_bounds_of_each_half_and_quarter():
    """The tables of the nodes at levels 1 and 2: ``half[h]`` is thr less the largest score
    of coordinate 0 over its values within the budget that are <= 0 (h = 0) or >= 0 (h = 1)
    where a row's label difference is > 0, the smallest where it is < 0 (worked out here by
    listing the values); ``quarter[2 h1 + h0]`` the same over the pairs of coordinates 1 and
    0 in those halves whose units sum to at most the budget.  A half or quarter no value
    fits takes the table of one that some value fits (the smallest bound over them is the
    same); a column shared by several budgets (the box's) holds its largest budget's."""
    import itertools

    from privopt.search._argmax import _split_thresholds

    rng = np.random.default_rng(11)
    rows, bound, thr = 25, 6, 3
    xt = rng.integers(-3, 4, size=(3, rows)).astype(np.int64)
    diff = rng.choice([-2, -1, 1, 3], size=rows)
    for grids in ([np.array([-2, -1, 0, 1, 2]), np.array([-1, 1]), np.array([0, 1])],
                  [np.array([1, 2]), np.array([-2, 0, 2]), np.array([0])]):    # coordinate 0 has no value <= 0
        width = max(len(g) for g in grids)
        gint = np.zeros((3, width), dtype=np.int64)
        coef = np.full((3, width), bound + 1, dtype=np.int64)
        for j, g in enumerate(grids):
            gint[j, :len(g)], coef[j, :len(g)] = g, g ** 2
        nk = np.array([len(g) for g in grids], dtype=np.int64)
        for bucket in (np.arange(bound + 1), np.array([0, 1, 1, 1, 2, 2, 3])):
            half, quarter = _split_thresholds(xt, diff, gint, coef, nk, bucket, thr, np.int16)
            assert half.dtype == quarter.dtype == np.int16 and half.shape == (2, bucket[-1] + 1, rows)
            for b in range(bound + 1):
                if b < bound and bucket[b + 1] == bucket[b]:
                    continue                        # a shared column holds its largest budget
                c = bucket[b]
                sides = [lambda g: g <= 0, lambda g: g >= 0]
                expected = {}
                for h in range(2):
                    vals = [g for g in grids[0] if g * g <= b and sides[h](g)]
                    if vals:
                        scores = np.outer(xt[0], vals)
                        expected[h] = thr - np.where(diff > 0, scores.max(axis=1), scores.min(axis=1))
                        np.testing.assert_array_equal(half[h, c], expected[h])
                for h in range(2):
                    if h not in expected and expected:
                        np.testing.assert_array_equal(half[h, c], half[1 - h, c])
                tables = {}
                for q in range(4):
                    pairs = [(g1, g0) for g1, g0 in itertools.product(grids[1], grids[0])
                             if g1 * g1 + g0 * g0 <= b and sides[q // 2](g1) and sides[q % 2](g0)]
                    if pairs:
                        scores = np.array([xt[1] * g1 + xt[0] * g0 for g1, g0 in pairs]).T
                        tables[q] = thr - np.where(diff > 0, scores.max(axis=1), scores.min(axis=1))
                        np.testing.assert_array_equal(quarter[q, c], tables[q])
                for q in range(4):
                    if q not in tables and tables:
                        assert any(np.array_equal(quarter[q, c], t) for t in tables.values())
        half2, quarter2 = _split_thresholds(xt[:2], diff, gint[:2], coef[:2], nk[:2], np.arange(bound + 1), thr,
                                            np.int16)
        assert half2.shape[1] == bound + 1 and quarter2.shape[1] == 0      # two coordinates: no level 2 below the root


def test_partial_score_bounds_capped_share_wider_columns(monkeypatch):
    """Past the tables' size cap, budgets share the column of a larger kept step: fewer
    columns, each range at least as wide as the budget's own (still a bound)."""
    import privopt.search._argmax as enum

    rng = np.random.default_rng(4)
    d, rows, bound = 2, 30, 13
    xt = rng.integers(-3, 4, size=(d, rows)).astype(np.int64)
    gint = np.tile(np.arange(-3, 4, dtype=np.int64), (d, 1))
    coef, valid = gint ** 2, np.ones_like(gint, dtype=bool)
    bucket, fmin, fmax = enum._partial_score_bounds(xt, gint, coef, valid, bound)
    monkeypatch.setattr(enum, "_SCORE_BOUND_ENTRIES", 2 * (d + 1) * rows)
    cbucket, cmin, cmax = enum._partial_score_bounds(xt, gint, coef, valid, bound)
    assert fmin.shape[1] == 4 and cmin.shape[1] == 2
    for b in range(bound + 1):
        assert np.all(cmin[:, cbucket[b]] <= fmin[:, bucket[b]])
        assert np.all(cmax[:, cbucket[b]] >= fmax[:, bucket[b]])


def test_block_maxima_compiled_and_numpy_agree_and_hold_the_maxima(monkeypatch):
    """Row t of the sparse table holds the largest value of the 2^t blocks from each block
    on wherever they lie within the whole blocks (the entries the search reads); the
    compiled table is numpy's, entry for entry."""
    import privopt.search._argmax as enum

    rng = np.random.default_rng(2)
    for n in (1, 63, 64, 65, 200, 1000, 4097):
        values = rng.standard_exponential(n)
        compiled = enum._block_maxima(values, 8)
        with monkeypatch.context() as m:
            m.setattr(enum, "_sparse_table_kernel", lambda: None)
            plain = enum._block_maxima(values, 8)
        np.testing.assert_array_equal(compiled, plain)
        nb = n // 8
        for t in range(compiled.shape[0] if nb else 0):
            for i in range(nb - (1 << t) + 1):
                assert compiled[t, i] == values[i * 8:(i + (1 << t)) * 8].max()


def test_bound_thresholds_are_the_thresholds_of_the_score_bounds(monkeypatch):
    """The one table the search compares with, made from one knapsack on the sign-folded
    features, equals thr less the largest partial score where a row's label difference is
    > 0 and the smallest where it is < 0 of the two-sided tables, on the ball's path and on
    the box's (past the size cap)."""
    import privopt.search._argmax as enum

    rng = np.random.default_rng(9)
    d, rows, bound, thr = 3, 40, 8, 5
    xt = rng.integers(-4, 5, size=(d, rows)).astype(np.int64)
    diff = rng.choice([-3, -1, 1, 2], size=rows)
    gint = np.tile(np.arange(-2, 3, dtype=np.int64), (d, 1))
    coef, nk = gint ** 2, np.full(d, 5, dtype=np.int64)
    valid = np.ones_like(gint, dtype=bool)
    for cap in (None, 1):
        if cap is not None:
            monkeypatch.setattr(enum, "_SCORE_BOUND_ENTRIES", cap)
        bucket, fmin, fmax = (enum._ball_score_bounds(xt, gint, coef, nk, bound, enum._ball_bounds_kernel(), thr,
                                                      np.int16) if cap is None else
                              enum._partial_score_bounds(xt, gint, coef, valid, bound))
        expected = thr - np.where(diff[None, None, :] > 0, fmax, fmin)
        got_bucket, tsel = enum._bound_thresholds(xt, diff, gint, coef, valid, bound, nk, thr, np.int16)
        np.testing.assert_array_equal(got_bucket, bucket)
        assert tsel.dtype == np.int16
        np.testing.assert_array_equal(tsel, expected)
    assert len(np.unique(bucket)) < bound + 1         # the box's shared columns were checked too
