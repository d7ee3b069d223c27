"""The pattern kernels' typed records and reused workspaces, and the top-down
sampler's test of a region by its exact minimum (privopt/search/_patterns.py,
_pattern_kernels.py, _topdown.py): the same released candidate and the same
counts as expanding every region, and no data carried from one call to the next."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import KeyedStreams, enumeration_levels, sample_top_down
from privopt.search._patterns import points_of, region_minima, screened_minima, support_values

from ._problems import needs_numba, region_problem


class _Counting:
    """Wraps a problem's exact_minima, counting the regions asked for."""

    def __init__(self, problem):
        self.asked = 0
        self._inner = problem.exact_minima

    def __call__(self, supports):
        self.asked += len(supports)
        return self._inner(supports)


@needs_numba
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_skipping_by_exact_minimum_releases_what_expanding_every_region_does(method):
    """With and without the problem's exact minima (the old path expands every
    region whose bound reaches the best key): the same best candidate and the
    same numbers of regions and groups, over seeds, scales and floors; and the
    exact minima are actually used (asked of the problem for every region, the bound pass's
    exact minima not kept)."""
    problem = region_problem(0)
    plain = copy.copy(problem)
    plain.exact_minima = plain.screened_minima = None     # type: ignore[method-assign]
    asked = 0
    for seed in range(12):
        for scale in (0.5, 2.0, 8.0):
            for floor in (None, (-40.0, 2 ** 62, 2 ** 62, 2 ** 62)):
                counted = copy.copy(problem)
                counted.exact_minima = _Counting(problem)     # type: ignore[method-assign]
                counted.screened_minima = None                # type: ignore[method-assign]
                counted.lower_bounds_exact = None             # type: ignore[method-assign]  (every minimum asked)
                a = sample_top_down(counted, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                    floor=floor)
                b = sample_top_down(plain, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                    floor=floor)
                assert a[0] == b[0] and tuple(a[1]) == tuple(b[1]), (seed, scale, floor)
                asked += counted.exact_minima.asked
    assert asked > 0


class _Screening:
    """Wraps a problem's screened_minima, counting the regions left with a bound."""

    def __init__(self, problem):
        self.bounded = 0
        self._problem = problem

    def __call__(self, supports, region_max, best_key, key_scale, slack):
        val, exact = screened_minima(self._problem.records, supports, self._problem.points(supports.shape[1]),
                                     region_max, best_key, key_scale, slack)
        self.bounded += int((~exact).sum())
        return val


@needs_numba
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_screened_minima_release_what_expanding_every_region_does(method):
    """The sampler's default (each region's patterns counted only until its exact
    minimum, or a lower bound on it, settles whether it can win) against expanding
    every region whose bound reaches the best key: the same best candidate and the same
    numbers of regions and groups, over seeds, scales and floors; and some regions are
    settled by a partial count."""
    problem = region_problem(0, n=600, levels=6)
    plain = copy.copy(problem)
    plain.exact_minima = plain.screened_minima = None     # type: ignore[method-assign]
    bounded = 0
    for seed in range(12):
        for scale in (0.5, 2.0, 8.0):
            for floor in (None, (-40.0, 2 ** 62, 2 ** 62, 2 ** 62)):
                screened = copy.copy(problem)
                screened.screened_minima = _Screening(problem)     # type: ignore[method-assign]
                a = sample_top_down(screened, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                    floor=floor)
                b = sample_top_down(plain, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                    floor=floor)
                assert a[0] == b[0] and tuple(a[1]) == tuple(b[1]), (seed, scale, floor)
                bounded += screened.screened_minima.bounded
    assert bounded > 0


@needs_numba
@pytest.mark.parametrize("by_rows", ["none", "all", "alternate"])
def test_screened_minima_are_exact_or_a_lower_bound_that_settles_the_test(by_rows):
    """Each value is the region's exact minimum (flagged exact) or below it, and then
    the region's upper key is below the best key; a best key no region can miss gives
    every minimum exactly: counted over the patterns, over the rows without a histogram,
    or some supports one way and some the other."""
    problem = region_problem(3, n=600, levels=6)
    for k in range(1, problem.k + 1):
        S = problem.supports(k)
        pts = problem.points(k)
        exact_val = region_minima(problem.records, S, pts, budget=2 ** 62)[0]
        M = np.linspace(0.0, 3.0, len(S))
        rows = {"none": None, "all": np.ones(len(S), dtype=bool), "alternate": np.arange(len(S)) % 2 == 1}[by_rows]
        for best_key in (-np.inf, -20.0, 0.0, 2.0):
            val, exact = screened_minima(problem.records, S, pts, M, best_key, 2.0, 1e-9, by_rows=rows)
            np.testing.assert_array_equal(val[exact], exact_val[exact])
            assert np.all(val[~exact] <= exact_val[~exact])
            upper = M[~exact] - val[~exact] / 2.0
            assert np.all(upper < best_key - 1e-9 * (1 + np.abs(upper) + abs(best_key)))
            if best_key == -np.inf:
                assert exact.all()


@needs_numba
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_screening_by_rows_releases_what_expanding_every_region_does(method, monkeypatch):
    """The sampler's default on a table whose larger supports take nearly as many patterns
    as there are rows (those screened row by row, their bounds not counted beforehand)
    against expanding every region whose full pattern bound reaches the best key:
    the same best candidate, over seeds, scales and floors; and some regions are
    screened by rows."""
    from privopt.search import _patterns, _regions

    problem = region_problem(5, n=400, d=5, levels=8)
    assert not problem.many_patterns(problem.supports(problem.k)).any()     # 400 rows: histograms are cheap
    monkeypatch.setattr(_regions, "ROWS_SCREEN_MIN", 1)
    assert problem.many_patterns(problem.supports(problem.k)).all()
    plain = copy.copy(problem)
    plain.exact_minima = plain.screened_minima = None     # type: ignore[method-assign]
    plain.lower_bounds = lambda S: problem.region_minima(S, prune=False)[0]     # type: ignore[method-assign]
    counted = []
    real = _patterns._screened_part

    def counting(kernels, records, supports, points, floor, by_rows):
        counted.append(len(supports) if by_rows else 0)
        return real(kernels, records, supports, points, floor, by_rows)

    _patterns._screened_part = counting
    try:
        for seed in range(10):
            for scale in (0.5, 2.0, 8.0):
                for floor in (None, (-40.0, 2 ** 62, 2 ** 62, 2 ** 62)):
                    a = sample_top_down(problem, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                        floor=floor)
                    b = sample_top_down(plain, KeyedStreams(np.random.default_rng(seed)), method, scale,
                                        floor=floor)
                    assert a[0] == b[0], (seed, scale, floor)
    finally:
        _patterns._screened_part = real
    assert sum(counted) > 0


@needs_numba
def test_histograms_stopped_early_keep_every_exact_minimum_and_bound_the_rest():
    """``stop_early``: the same exact minima (and minimizers) where the patterns are few
    enough for them, a lower bound on the minimum elsewhere, never above the full
    pattern bound; on a table of many values per feature some histograms stop."""
    problem = region_problem(6, n=500, d=6, levels=9)
    stopped = 0
    for k in range(1, problem.k + 1):
        S, pts = problem.supports(k), problem.points(k)
        full = region_minima(problem.records, S, pts)
        early = region_minima(problem.records, S, pts, stop_early=True)
        truth = region_minima(problem.records, S, pts, budget=2 ** 62)[0]
        np.testing.assert_array_equal(early[1], full[1])
        np.testing.assert_array_equal(early[0][early[1]], full[0][full[1]])
        np.testing.assert_array_equal(early[2], full[2])
        assert np.all(early[0] <= full[0]) and np.all(early[0] <= truth)
        stopped += int(np.sum(early[0] < full[0]))
    assert stopped > 0


def test_row_order_is_a_fixed_permutation_spread_over_the_rows():
    """Worked by hand for m = 10 (10 x 0.618 rounds to 6, which is not prime to 10: the stride is 7):
    0, 7, 4, 1, 8, 5, 2, 9, 6, 3; a permutation for every m; its first tenth meets every
    tenth of the sorted rows; read-only; the block is a multiple of 16 within its limits."""
    from privopt.search._patterns import ROW_BLOCK_MAX, ROW_BLOCK_MIN, row_block, row_order

    assert row_order(10).tolist() == [0, 7, 4, 1, 8, 5, 2, 9, 6, 3]
    for m in (1, 2, 3, 97, 1000, 4096):
        assert sorted(row_order(m).tolist()) == list(range(m))
    first = row_order(1000)[:100]
    assert len(set((first // 100).tolist())) == 10
    assert not row_order(50).flags.writeable
    for m in (1, 100, 5000, 10 ** 6):
        b = row_block(m)
        assert ROW_BLOCK_MIN <= b <= ROW_BLOCK_MAX and b % 16 == 0
    # a quarter of the rows, down to a multiple of 16: 1000 / 4 = 250 -> 240, 1557 -> 389 -> 384
    assert [row_block(m) for m in (100, 1000, 1557, 2048, 10000)] == [64, 240, 384, 512, 512]


@needs_numba
def test_reused_workspaces_carry_nothing_between_problems():
    """Two problems with workspaces of the same shape, called in turn: every
    region's values equal those of the numpy path (no count or prefix left over)."""
    first, second = region_problem(1), region_problem(2)
    assert first.records.digits_t.shape == second.records.digits_t.shape
    for _ in range(2):
        for problem in (first, second):
            for k in range(1, problem.k + 1):
                S = problem.supports(k)
                pts = problem.points(k)
                val, exact, _ = region_minima(problem.records, S, pts, budget=2 ** 62)
                assert exact.all()
                for r in range(0, len(S), max(1, len(S) // 7)):
                    loss, J = support_values(problem.records, S[r], pts)
                    ref_loss, ref_J = support_values(problem.records, S[r], pts, use_numba=False)
                    np.testing.assert_array_equal(loss, ref_loss)
                    np.testing.assert_allclose(J, ref_J, rtol=0, atol=1e-9)
                    assert val[r] == J.min()


def test_enumeration_levels_is_a_typed_record_that_unpacks_as_before():
    problem_data = getattr(zero_one_halfspace(np.eye(3), [1, -1, 1], grid=2, norm_bound=2.0), ENUMERATION_ATTR)
    levels = enumeration_levels(problem_data)
    coef, bound, unit, D = levels
    assert (levels.coef, levels.bound, levels.unit, levels.D) == (coef, bound, unit, D)
    assert isinstance(levels.bound, int) and levels.bound >= 1


@pytest.mark.parametrize("values, V, expected", [
    ([0.0, 1.0, 2.0], [[1.0, -1.0], [2.0, 0.0]], True),          # integers: 2 * 2 = 4 < 2**24
    ([-0.5, 0.5, 1.5], [[1.0, -2.0]], True),                      # half-integers: 1.5 * 3 * 2 = 9 units
    ([0.0, 0.1], [[1.0]], False),                                 # 0.1 is not a multiple of a power of two
    ([0.0, 4096.0], [[4096.0, 0.0]], False),                      # 4096 * 4096 = 2**24: not below
    ([0.0, 4095.0], [[4096.0, 0.0]], True),                       # 4095 * 4096 < 2**24
    ([0.0, 1.0], np.zeros((0, 2)), False),                        # no points
])
def test_float32_scores_only_where_every_score_is_exact(values, V, expected):
    """Worked by hand: the largest |<x, v>| in units of the common power-of-two step
    must be below 2**24 (float32's 24-bit significand)."""
    from privopt.search._patterns import float32_exact

    assert float32_exact(np.asarray(values), np.asarray(V, dtype=float)) is expected


@needs_numba
@pytest.mark.slow
def test_float32_scores_give_the_float64_minima_bit_for_bit():
    """On integer data the problem's points score in float32, and every region's
    minimum, exactness and minimizer equal those of the same points scored in float64."""
    from privopt.search._patterns import points_of

    problem = region_problem(3, n=400)
    for k in range(1, problem.k + 1):
        S, pts32 = problem.supports(k), problem.points(k)
        assert pts32.Vt.dtype == np.float32
        pts64 = points_of(pts32.V, pts32.theta, pts32.noise, pts32.extra, pts32.scale, pts32.den)
        assert pts64.Vt.dtype == np.float64
        for budget in (None, 2 ** 62):
            got = region_minima(problem.records, S, pts32, budget=budget)
            ref = region_minima(problem.records, S, pts64, budget=budget)
            for a, b in zip(got, ref):
                np.testing.assert_array_equal(a, b)
        for r in range(0, len(S), max(1, len(S) // 5)):
            for a, b in zip(support_values(problem.records, S[r], pts32), support_values(problem.records, S[r], pts64)):
                np.testing.assert_array_equal(a, b)


def _child_kernel_threads(queue):
    from privopt._runtime import kernel_threads

    queue.put(kernel_threads())


@pytest.mark.slow
def test_kernel_threads_follow_the_cpus_the_limits_and_the_process(monkeypatch):
    """Worked by hand: the usable CPUs, capped by the first positive limit among
    PRIVOPT_NUM_THREADS, NUMBA_NUM_THREADS and OMP_NUM_THREADS; 1 in a child process."""
    import multiprocessing

    from privopt import _runtime

    monkeypatch.setattr(_runtime, "usable_cpus", lambda: 6)
    for name in _runtime.THREAD_LIMIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert _runtime.kernel_threads() == 6
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert _runtime.kernel_threads() == 2
    monkeypatch.setenv("NUMBA_NUM_THREADS", "4")          # before OMP_NUM_THREADS
    assert _runtime.kernel_threads() == 4
    monkeypatch.setenv("PRIVOPT_NUM_THREADS", "16")       # first, and capped by the CPUs
    assert _runtime.kernel_threads() == 6
    for bad in ("0", "two", "-1", ""):
        monkeypatch.setenv("PRIVOPT_NUM_THREADS", bad)    # not a positive integer: the next limit
        assert _runtime.kernel_threads() == 4
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_kernel_threads, args=(queue,))
    child.start()
    assert queue.get(timeout=120) == 1
    child.join()


@needs_numba
def test_region_minima_in_threads_are_those_of_one_thread(monkeypatch):
    """The supports split into runs over several threads (each with its own workspace)
    give every region the values of one thread, bit for bit; a pruned call stays whole."""
    from privopt.search import _patterns

    problem = region_problem(4, n=500)
    monkeypatch.setattr(_patterns, "THREAD_MIN_WORK", 1)
    for k in range(1, problem.k + 1):
        S, pts = problem.supports(k), problem.points(k)
        for budget in (None, 2 ** 62):
            monkeypatch.setattr(_patterns, "kernel_threads", lambda: 1)
            one = region_minima(problem.records, S, pts, budget=budget)
            monkeypatch.setattr(_patterns, "kernel_threads", lambda: 3)
            assert len(_patterns._thread_parts(len(S), k, problem.records, False)) == min(3, len(S))
            many = region_minima(problem.records, S, pts, budget=budget)
            for a, b in zip(one, many):
                np.testing.assert_array_equal(a, b)
        assert _patterns._thread_parts(len(S), k, problem.records, True) == [(0, len(S))]


def test_score_tree_shares_the_prefixes_of_the_sorted_points():
    """Worked by hand: (1, 1), (1, 2), (2, 1), (-1, 1) sorted are (-1, 1), (1, 1), (1, 2),
    (2, 1): nodes -1 | 1 (point 3), 1 | 1 (point 0), 2 (point 1), 2 | 1 (point 2); every
    point is completed by exactly one node; the values in the scores' dtype."""
    from privopt.search._patterns import points_of, score_tree

    V = np.array([[1, 1], [1, 2], [2, 1], [-1, 1]], dtype=float)
    depth, value, point = score_tree(points_of(V, 0.0, np.zeros(2), np.zeros(4)))
    assert depth.tolist() == [0, 1, 0, 1, 1, 0, 1]
    assert value.tolist() == [-1, 1, 1, 1, 2, 2, 1]
    assert point.tolist() == [-1, 3, -1, 0, 1, -1, 2]
    pts32 = points_of(V, 0.0, np.zeros(2), np.zeros(4), values=np.array([0.0, 1.0]))
    assert score_tree(pts32)[1].dtype == pts32.Vt.dtype == np.float32
    rng = np.random.default_rng(0)
    W = rng.integers(-2, 3, size=(40, 3)).astype(float)
    _, _, completes = score_tree(points_of(W, 0.0, np.zeros(3), np.zeros(40)))
    assert sorted(completes[completes >= 0].tolist()) == list(range(40))


def test_score_tree_is_the_walk_over_the_sorted_points():
    """On random point sets (repeated points, -0.0 beside 0.0, one to four coordinates): the
    nodes of the walk over the lexicographically sorted points, each point's levels from
    the first where it differs from the point before it (a repeated point its last level
    only), with the value of that point."""
    from privopt.search._patterns import points_of, score_tree

    def walk(V):
        depth, value, point, prev = [], [], [], None
        for p in np.lexsort(V.T[::-1]):
            first = 0
            while prev is not None and first < V.shape[1] - 1 and V[p, first] == V[prev, first]:
                first += 1
            for lev in range(first, V.shape[1]):
                depth.append(lev)
                value.append(V[p, lev])
                point.append(int(p) if lev == V.shape[1] - 1 else -1)
            prev = p
        return depth, value, point

    rng = np.random.default_rng(7)
    for _ in range(300):
        P, j = int(rng.integers(1, 25)), int(rng.integers(1, 5))
        V = rng.integers(-2, 3, size=(P, j)).astype(float)
        V[rng.random(V.shape) < 0.1] = -0.0
        if P > 2:
            V[2] = V[0]
        depth, value, point = score_tree(points_of(V, 0.0, np.zeros(j), np.zeros(P)))
        d2, v2, p2 = walk(V)
        assert depth.tolist() == d2 and point.tolist() == p2
        np.testing.assert_array_equal(value, np.asarray(v2))
        assert np.array_equal(np.signbit(value), np.signbit(np.asarray(v2)))


def test_ordered_rows_are_the_records_in_row_order():
    """The values, positive labels and label differences of the rows in :func:`row_order`."""
    from privopt.search._patterns import ordered_rows, records_of, row_order

    rng = np.random.default_rng(1)
    digits = rng.integers(0, 3, size=(4, 50))
    values = np.array([0.0, 0.5, 2.0])
    pos, neg = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    records = records_of(digits, 3, values, pos, neg)
    x, p, diff = ordered_rows(records, np.float64)
    order = row_order(50)
    np.testing.assert_array_equal(x, values[digits[:, order]])
    np.testing.assert_array_equal(p, pos[order])
    np.testing.assert_array_equal(diff, neg[order] - pos[order])


def test_score_threshold_compares_every_score_as_theta_does():
    """A score of the scores' dtype is at or above :func:`score_threshold` exactly when it is at or
    above theta: float32 scores around thetas that float32 cannot hold (and one it can), and
    float64 scores, whose threshold is theta itself."""
    from privopt.search._patterns import score_threshold

    rng = np.random.default_rng(4)
    V = np.ones((3, 2))
    for theta in (0.1, -0.3, 1e-40, 0.5, -7.000001, 1e39):
        pts = points_of(V, theta, np.zeros(2), np.zeros(3))
        t32 = score_threshold(pts._replace(Vt=pts.Vt.astype(np.float32)))
        with np.errstate(over="ignore"):      # 1e39: float32's +inf
            near = np.float32(theta)
            scores = np.concatenate([rng.normal(theta, abs(theta) + 1, 1000).astype(np.float32),
                                     [near, np.nextafter(near, np.float32(np.inf)),
                                      np.nextafter(near, np.float32(-np.inf))]]).astype(np.float32)
        assert t32.dtype == np.float32
        np.testing.assert_array_equal(scores >= t32, scores.astype(np.float64) >= theta)
        assert score_threshold(pts) == theta and score_threshold(pts).dtype == np.float64
