"""The points of W_tau = {w : w_j in grid[j], sum_j units_j(w_j) <= bound}: counted by
dynamic programming over coordinates, listed at once or in blocks, in one order (the
last coordinate most significant).  Integer squared-norm units make the ball exact
(:func:`privopt.space.norm_levels`).  Pure numpy; imported by the enumeration,
the split by support and the mechanisms that list W."""

from __future__ import annotations

import collections
import functools
import math

import numpy as np

__all__ = ["count_grid_points", "grid_points", "prefix_counts", "iter_grid_blocks", "uniform_grid",
           "product_size"]


def count_grid_points(coef, bound: int) -> int:
    """Number of index tuples (k_1..k_d) with ``sum_j coef[j][k_j] <= bound``
    (integer squared-norm units), by dynamic programming over coordinates."""
    return int(prefix_counts(coef, bound)[-1][bound])


def grid_points(grid, coef, bound):
    """All grid points with sum of squared-norm units <= bound: (values, units)."""
    d = len(grid)
    # minimal units still needed by the coordinates after j
    rest = np.zeros(d + 1, dtype=np.int64)
    for j in range(d - 1, -1, -1):
        rest[j] = rest[j + 1] + min(coef[j])
    idx = np.zeros((1, 0), dtype=np.int16)
    used = np.zeros(1, dtype=np.int64)
    for j in range(d):
        parts_idx, parts_used = [], []
        for k, c in enumerate(coef[j]):
            keep = used + c + rest[j + 1] <= bound
            if keep.any():
                sel = idx[keep]
                parts_idx.append(np.hstack([sel, np.full((sel.shape[0], 1), k, dtype=np.int16)]))
                parts_used.append(used[keep] + c)
        idx = np.vstack(parts_idx)
        used = np.concatenate(parts_used)
    values = np.empty(idx.shape, dtype=np.float64)
    for j in range(d):
        values[:, j] = np.asarray(grid[j], dtype=np.float64)[idx[:, j]]
    return values, used


def prefix_counts(coef, bound):
    """``counts[j][u]``: number of value tuples of coordinates 0..j-1 whose
    squared-norm units sum to at most u (u = 0..bound); Python integers, in read-only
    arrays computed once per (coef, bound) in a process (a fit asks for the same
    ones many times)."""
    return _prefix_counts(tuple(tuple(map(int, c)) for c in coef), int(bound))


@functools.lru_cache(maxsize=128)     # a default fit's ladder asks for about 30
def _prefix_counts(coef: tuple, bound: int) -> tuple:
    exact = np.zeros(bound + 1, dtype=object)   # exactly u units
    exact[0] = 1
    out = [np.cumsum(exact)]
    for c in coef:
        new = np.zeros(bound + 1, dtype=object)
        for x in c:
            if x <= bound:
                new[x:] += exact[: bound + 1 - x]
        exact = new
        out.append(np.cumsum(exact))
    for counts in out:
        counts.flags.writeable = False
    return tuple(out)


def iter_grid_blocks(grid, coef, bound, block_points: int):
    """The points of W_tau in blocks of about ``block_points``: yields
    ``(values, units)`` like :func:`grid_points`, in exactly its order (the
    last coordinate most significant), so that the concatenated blocks equal
    ``grid_points(grid, coef, bound)`` while memory stays O(block_points * d).

    The points are split on a suffix of coordinates: a suffix assignment whose
    completions (counted by dynamic programming) fit in a block is
    materialized at once; small pieces are merged up to the block size."""
    d = len(grid)
    counts = prefix_counts(coef, bound)
    block_points = max(1, int(block_points))
    buf_vals, buf_used, buf_n = [], [], 0

    def pieces(j, suffix, used):
        # suffix: value indices of coordinates j..d-1 (fixed); complete 0..j-1
        budget = bound - used
        if counts[j][budget] <= block_points:
            if j == 0:
                vals, units = np.zeros((1, 0)), np.zeros(1, dtype=np.int64)
            else:
                vals, units = grid_points(grid[:j], coef[:j], budget)
            if suffix:
                tail = np.array([grid[j + i][k] for i, k in enumerate(suffix)], dtype=np.float64)
                vals = np.hstack([vals, np.broadcast_to(tail, (vals.shape[0], len(suffix)))])
            yield vals, units + used
            return
        for k, c in enumerate(coef[j - 1]):
            if used + c <= bound and counts[j - 1][bound - used - c] > 0:
                yield from pieces(j - 1, [k] + suffix, used + c)

    for vals, units in pieces(d, [], 0):
        buf_vals.append(vals)
        buf_used.append(units)
        buf_n += vals.shape[0]
        if buf_n >= block_points:
            yield np.vstack(buf_vals), np.concatenate(buf_used)
            buf_vals, buf_used, buf_n = [], [], 0
    if buf_n:
        yield np.vstack(buf_vals), np.concatenate(buf_used)


def uniform_grid(grid):
    """The one grid every coordinate shares when it holds 0, else None (the
    split by support needs it)."""
    g0 = tuple(grid[0])
    return g0 if all(tuple(g) == g0 for g in grid) and 0.0 in g0 else None


def product_size(grids) -> int:
    """The number of points of the product of ``grids``, exactly: prod_L L^(number of
    coordinates with L values), one power per distinct length (a million coordinates of 3
    values: 3^(10^6) in milliseconds, where multiplying the lengths one by one took minutes)."""
    return math.prod(length ** times for length, times in collections.Counter(len(g) for g in grids).items())
