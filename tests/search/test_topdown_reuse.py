"""What the top-down sampler reuses instead of working it out again (privopt/search/_topdown.py,
_regions.py, _patterns.py, _pattern_kernels.py): the bound pass's exact minima, the prefix
tree of a W's public points, the subtrees of points already set aside when the rows are
counted without a histogram.  Each must give what the uncached or unskipped path gives."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from privopt.search import KeyedStreams, sample_top_down
from privopt.search._patterns import Floor, points_of, region_minima, score_tree

from ._problems import needs_numba, region_problem



def _assert_same_draws(problem, other, method: str, low_floor: float) -> None:
    """The sampler on ``problem`` and on ``other`` draws the same best candidate and the same
    counts, over 8 seeds, three scales, and without or with the floor ``low_floor``."""
    for seed in range(8):
        for scale in (0.5, 2.0, 8.0):
            for floor in (None, (low_floor, 2 ** 62, 2 ** 62, 2 ** 62)):
                a = sample_top_down(problem, KeyedStreams(np.random.default_rng(seed)), method, scale, floor=floor)
                b = sample_top_down(other, KeyedStreams(np.random.default_rng(seed)), method, scale, floor=floor)
                assert a[0] == b[0] and tuple(a[1]) == tuple(b[1]), (seed, scale, floor)

@needs_numba
def test_lower_bounds_flag_exactly_the_exact_minima():
    """``lower_bounds_exact``: the same bounds as ``lower_bounds``; where flagged exact, the
    region's minimum over every point (a histogram without a budget); some are flagged."""
    flagged = 0
    for seed, levels in ((0, 4), (3, 9)):
        problem = region_problem(seed, n=500, levels=levels)
        for k in range(problem.k + 1):
            S = problem.supports(k)
            low, exact = problem.lower_bounds_exact(S)
            np.testing.assert_array_equal(low, problem.lower_bounds(S))
            truth = region_minima(problem.records, S, problem.points(k), budget=2 ** 62)[0]
            np.testing.assert_array_equal(low[exact], truth[exact])
            assert np.all(low <= truth)
            flagged += int(exact.sum())
    assert flagged > 0


@needs_numba
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_exact_bounds_kept_release_what_asking_again_does(method):
    """The sampler with the bound pass's exact minima kept against one that asks the problem
    for every minimum again (no ``lower_bounds_exact``): the same best candidate and the
    same counts of regions and groups, over seeds, scales and floors."""
    base = region_problem(1)
    asked = {"kept": 0, "again": 0}

    def counting(name):
        def screened(supports, *args):
            asked[name] += len(supports)
            return base.screened_minima(supports, *args)
        return screened

    problem, again = copy.copy(base), copy.copy(base)
    problem.screened_minima = counting("kept")     # type: ignore[method-assign]
    again.screened_minima = counting("again")     # type: ignore[method-assign]
    again.lower_bounds_exact = None     # type: ignore[method-assign]
    _assert_same_draws(problem, again, method, -40.0)
    assert asked["kept"] < asked["again"]


def test_score_tree_of_public_points_is_kept_and_is_the_tree_of_a_copy():
    """Two Points on the same read-only V (a W's support points, at two fits) share one tree,
    equal to the tree of a writeable copy of V (listed afresh); a float32 Points on the
    same V has its own, in float32."""
    rng = np.random.default_rng(3)
    V = rng.integers(-2, 3, size=(30, 3)).astype(float)
    V.flags.writeable = False
    one = score_tree(points_of(V, 0.0, np.zeros(3), np.zeros(30)))
    two = score_tree(points_of(V, 0.5, np.ones(3), np.zeros(30)))
    assert all(a is b for a, b in zip(one, two))
    fresh = score_tree(points_of(V.copy(), 0.0, np.zeros(3), np.zeros(30)))
    assert not any(a is b for a, b in zip(one, fresh))
    for a, b in zip(one, fresh):
        np.testing.assert_array_equal(a, b)
    small = score_tree(points_of(V, 0.0, np.zeros(3), np.zeros(30), values=np.array([0.0, 1.0])))
    assert small[1].dtype == np.float32 and one[1].dtype == np.float64
    np.testing.assert_array_equal(small[1], one[1])


@needs_numba
def test_tree_links_are_each_nodes_parent_and_subtree_end():
    """On random point sets: a node's parent is the last node before it one level up, and its
    subtree ends at the first later node at its level or above (brute force)."""
    from privopt.search._pattern_kernels import mark_live, tree_links

    rng = np.random.default_rng(11)
    for _ in range(200):
        P, j = int(rng.integers(1, 25)), int(rng.integers(1, 5))
        V = rng.integers(-2, 3, size=(P, j)).astype(float)
        depth, _, point = score_tree(points_of(V, 0.0, np.zeros(j), np.zeros(P)))
        parent, end = tree_links(depth, j)
        n = len(depth)
        for q in range(n):
            up = [r for r in range(q) if depth[r] == depth[q] - 1]
            assert parent[q] == (up[-1] if depth[q] > 0 else -1)
            later = [r for r in range(q + 1, n) if depth[r] <= depth[q]]
            assert end[q] == (later[0] if later else n)
        alive = rng.random(P) < 0.4
        live = np.ones(n, dtype=bool)
        mark_live(point, parent, alive, live)
        for q in range(n):
            below = point[q:end[q]]
            assert live[q] == bool(np.any(alive[below[below >= 0]]))


@needs_numba
def test_floor_minima_keep_every_unsettled_value_and_settle_only_what_cannot_win():
    """``region_minima`` with a floor (the sampler's best key and each region's noise
    maximum): every region whose entry is exact has the value and point it has without the
    floor; every other one either has its value without the floor or a lower bound on its
    minimum that passes the sampler's test; some are settled, some are not."""
    from privopt.search._patterns import Floor
    from privopt.search._topdown import _SLACK, _cannot_win

    settled = kept = 0
    for seed, levels, n in ((0, 4, 300), (3, 9, 500), (5, 6, 700)):
        problem = region_problem(seed, n=n, levels=levels)
        rng = np.random.default_rng(seed)
        for k in range(1, problem.k + 1):
            S = problem.supports(k)
            pts = problem.points(k)
            truth = region_minima(problem.records, S, pts, budget=2 ** 62)[0]
            plain = region_minima(problem.records, S, pts, stop_early=True)
            for key_scale in (0.5, 2.0):
                M = rng.gumbel(size=len(S)) + np.log(len(pts.V))
                best_key = float(np.quantile(M - truth / key_scale, 0.7))
                val, exact, arg = region_minima(problem.records, S, pts, stop_early=True,
                                                floor=Floor(M, best_key, key_scale, _SLACK))
                same = (val == plain[0]) & (exact == plain[1]) & (arg == plain[2])
                assert np.all(val <= truth)
                assert np.all(same | (~exact & _cannot_win(M - val / key_scale, best_key)))
                settled += int(np.sum(~same))
                kept += int(np.sum(same & plain[1]))
    assert settled > 0 and kept > 0


@needs_numba
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_bound_pass_told_the_best_key_releases_what_it_does_untold(method):
    """The sampler whose bound pass is told the best key so far (regions that cannot win are
    left with a bound, no point scored) against one whose problem does not take it: the same
    best candidate and the same counts of regions and groups, over seeds, scales and floors."""
    base = region_problem(2, n=600, levels=6)
    untold = copy.copy(base)
    untold.lower_bounds_exact = lambda supports, *rest: base.lower_bounds_exact(supports)  # type: ignore
    _assert_same_draws(base, untold, method, -60.0)


def test_loss_points_are_shared_by_problems_on_one_grid_and_equal_those_made_afresh():
    """Two problems on different data and the same W share the Points of the loss (public: W's
    points, theta, d, the scores' dtype), each equal to the Points made afresh from the problem's
    own records."""
    one, two = region_problem(0), region_problem(4, n=400)
    for k in range(1, one.k + 1):
        assert one.points(k) is two.points(k)
        fresh = points_of(one.vectors[k], one.theta, np.zeros(one.d), np.zeros(len(one.vectors[k])),
                          values=two.records.values)
        for a, b in zip(two.points(k), fresh):
            np.testing.assert_array_equal(a, b)
            assert getattr(a, "dtype", None) == getattr(b, "dtype", None)


def test_a_floor_restricted_to_some_supports_keeps_their_maxima_and_its_test():
    """``Floor.restricted``: the noise maxima of the supports a mask or index list selects, in
    their order; the best key, scale and slack unchanged."""
    floor = Floor(np.array([3.0, -1.0, 7.5, 0.25]), -2.0, 4.0, 1e-9)
    part = floor.restricted(np.array([True, False, True, True]))
    np.testing.assert_array_equal(part.region_max, [3.0, 7.5, 0.25])
    assert part[1:] == floor[1:]
    np.testing.assert_array_equal(floor.restricted(np.array([3, 1])).region_max, [0.25, -1.0])
    np.testing.assert_array_equal(floor.region_max, [3.0, -1.0, 7.5, 0.25])     # the floor itself unchanged
