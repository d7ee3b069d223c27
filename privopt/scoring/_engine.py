r"""Exact scoring of the scoring systems of W, as a problem for the top-down
sampler (:mod:`privopt.search._topdown`).

Regions are supports S (the items of a score), groups are points vectors p on
S, points are thresholds.  Lower bound of a region: the pattern bound of
:mod:`privopt.search._patterns` on the items of S (every scoring system on S
predicts one label per pattern of its items).

Errors of a group.  For a points vector p on S, pattern c has total
score_c = sum_i p_i c_i in [lo(p), hi(p)]; threshold t errs on the positives
scoring below t and the negatives scoring at least t:

    err(p, t) = sum_c pos_c [score_c < t] + neg_c [score_c >= t]
              = total_pos + sum_{c : score_c >= t} (neg_c - pos_c),

so all ||p||_1 thresholds of p come from one histogram of (neg - pos) over the
score offsets and its suffix sums: scoring W x thresholds costs about as much
as scoring the points vectors.
"""

from __future__ import annotations

import numpy as np

from .._numba import lazy_kernel
from ..search import RegionProblem, pattern_counts, pattern_lower_bounds
from ._space import RecordTable, ScoreSpace

__all__ = ["ScoringProblem", "support_lower_bounds", "group_errors", "decode"]

_BIG = np.iinfo(np.int64).max // 4


def support_lower_bounds(table: RecordTable, supports: np.ndarray, use_numba: bool = True) -> np.ndarray:
    """The pattern bound on the errors of every scoring system of each support."""
    return pattern_lower_bounds(table.rows_t, 2, table.pos, table.neg, supports, use_numba=use_numba)


def group_errors(table: RecordTable, support, vectors: np.ndarray):
    """``(err, thresholds, sizes)`` for the points vectors of one support:
    err[g, b] = errors of (vectors[g], thresholds[g, b]) for b < sizes[g]
    (larger b are padding, set to a huge value); sizes[g] = ||p_g||_1 (2 for
    the empty support, whose thresholds are 0 and 1)."""
    j = len(list(support))
    if j == 0:
        err = np.array([[table.total_neg, table.total_pos]], dtype=np.int64)
        return err, np.array([[0, 1]], dtype=np.int64), np.array([2], dtype=np.int64)
    pos, neg = pattern_counts(table.rows_t, 2, table.pos, table.neg, support)
    g = vectors.shape[0]
    bits = ((np.arange(1 << j)[:, None] >> np.arange(j)[None, :]) & 1).astype(np.int64)   # (npat, j)
    scores = vectors @ bits.T                                      # (g, npat)
    lo = np.minimum(vectors, 0).sum(axis=1)
    sizes = np.abs(vectors).sum(axis=1)
    width = int(sizes.max()) + 1
    offs = scores - lo[:, None]                                    # in [0, ||p||_1]
    flat = (np.arange(g)[:, None] * width + offs).ravel()
    diff = np.broadcast_to(neg - pos, scores.shape).ravel()
    D = np.bincount(flat, weights=diff, minlength=g * width).reshape(g, width).astype(np.int64)
    suffix = np.cumsum(D[:, ::-1], axis=1)[:, ::-1]                # suffix[:, b] = sum_{b' >= b} D
    err = table.total_pos + suffix[:, 1:]                          # thresholds t = lo + b, b = 1..width-1
    b = np.arange(1, width)[None, :]
    err = np.where(b <= sizes[:, None], err, _BIG)
    return err, lo[:, None] + b, sizes


def _build_numba_kernel(numba):
    """The smallest-error-per-points-vector kernel (compiled on first use; None without numba)."""

    @numba.njit(cache=True)
    def kernel(vectors, pos, neg, total_pos):   # pragma: no cover - compiled
        g, j = vectors.shape
        npat = 1 << j
        gmin = np.empty(g, np.int64)
        sizes = np.empty(g, np.int64)
        width = 1
        for q in range(g):
            w = 0
            for i in range(j):
                w += abs(vectors[q, i])
            width = max(width, w + 1)
        D = np.zeros(width, np.int64)
        for q in range(g):
            lo = 0
            l1 = 0
            for i in range(j):
                v = vectors[q, i]
                l1 += abs(v)
                if v < 0:
                    lo += v
            for b in range(l1 + 1):
                D[b] = 0
            for c in range(npat):
                sc = 0
                for i in range(j):
                    if (c >> i) & 1:
                        sc += vectors[q, i]
                D[sc - lo] += neg[c] - pos[c]
            # err(lo + b) = total_pos + sum_{b' >= b} D[b'], b = 1..l1
            acc = 0
            best = np.iinfo(np.int64).max
            for b in range(l1, 0, -1):
                acc += D[b]
                if total_pos + acc < best:
                    best = total_pos + acc
            gmin[q] = best
            sizes[q] = l1
        return gmin, sizes

    return kernel


_numba_kernel = lazy_kernel(_build_numba_kernel)


class ScoringProblem(RegionProblem):
    """W of :class:`ScoreSpace` on the records of :class:`RecordTable`."""

    def __init__(self, space: ScoreSpace, table: RecordTable, use_numba: bool = True):
        self.space, self.table, self.use_numba = space, table, use_numba
        self.k = space.k

    def n_supports(self, size):
        return self.space.n_supports(size)

    def offset(self, size):
        return self.space.offset(size)

    def supports(self, size, start=0, stop=None):
        return self.space.supports(size, start, stop)

    def region_sizes(self, supports):
        return self.space.region_sizes(supports)

    def lower_bounds(self, supports):
        return support_lower_bounds(self.table, supports, self.use_numba)

    def group_errors(self, support):
        vectors = self.space.vectors(support)
        if len(support) and self.use_numba and _numba_kernel() is not None:
            pos, neg = pattern_counts(self.table.rows_t, 2, self.table.pos, self.table.neg, support)
            gmin, sizes = _numba_kernel()(vectors, pos, neg, self.table.total_pos)

            def row(g):
                return group_errors(self.table, support, vectors[g:g + 1])[0][0, :sizes[g]]
            return gmin, sizes, row
        err, _, sizes = group_errors(self.table, support, vectors)
        return err.min(axis=1), sizes, lambda g: err[g, :sizes[g]]


def decode(space: ScoreSpace, table: RecordTable, region: int, group: int, position: int):
    """(support, points vector, threshold) of a candidate."""
    size = 0
    while space.offset(size + 1) <= region:
        size += 1
    rank = region - space.offset(size)
    support = space.supports(size, rank, rank + 1)[0]
    if size == 0:
        return support, np.zeros(0, dtype=np.int64), int(position)
    vectors = space.vectors(support)
    _, thresholds, _ = group_errors(table, support, vectors[group:group + 1])
    return support, vectors[group], int(thresholds[0, position])
