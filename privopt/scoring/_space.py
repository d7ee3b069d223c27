r"""The set W of scoring systems and the data it is scored on.

A scoring system on d binary items is a points vector p in {-P..P}^d with at
most k nonzero entries and an integer threshold t; it predicts the positive
class for a record x in {0, 1}^d when its total score p . x reaches t.  The
public set of candidates is

    W = {(0, 0), (0, 1)}  u  {(p, t) : 0 < |supp p| <= k,  p_j in V_j,
                                        lo(p) < t <= hi(p)}

with V_j = {-P..-1, 1..P} (or only the signs allowed for item j),
lo(p) = sum of the negative points and hi(p) = sum of the positive points: the
lowest and highest total a record can reach.  (0, 0) predicts positive for
everybody, (0, 1) for nobody; for p != 0 every threshold in (lo, hi] gives a
rule that is not constant on {0, 1}^d, and there are hi - lo = ||p||_1 of them.
W is fixed before the data is seen.

The loss of (p, t) on the data is its number of errors, so replacing one record
changes it by at most 1 (sensitivity 1).

Regions.  W is partitioned by support S = supp p (the items of the score): the
region of S holds N_S = sum_{p : supp p = S} ||p||_1 points, and splits into
one group per points vector p with ||p||_1 thresholds.  Supports are numbered
by size, then lexicographically: 0 is the empty support, then the d supports
of size 1, and so on.  On the data, the records collapse to the distinct rows
of X with their counts of positive and negative labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..search import lex_combinations

__all__ = ["ScoreSpace", "RecordTable", "item_counts", "largest_support_vectors"]

def item_counts(n_features: int, max_points: int, signs=None) -> np.ndarray:
    """c_j = |V_j|, the number of nonzero point values of each item: 2P, or P
    for an item with a sign.  From d, P and the signs alone (no table built)."""
    P = int(max_points)
    if signs is None:
        return np.full(int(n_features), 2 * P, dtype=np.int64)
    return np.where(np.asarray(signs, dtype=int).ravel() == 0, 2 * P, P).astype(np.int64)


def largest_support_vectors(counts, size: int) -> int:
    """The largest number of points vectors on one support of ``size`` items:
    the product of the ``size`` largest counts."""
    return int(math.prod(sorted(np.asarray(counts).tolist(), reverse=True)[:size])) if size else 1


class ScoreSpace:
    """The public set W (see the module docstring).

    ``signs[j]``: 0 (both signs), +1 (item j can only add points) or -1 (only
    subtract)."""

    def __init__(self, n_features: int, max_points: int, max_items: int, signs=None):
        self.d = int(n_features)
        self.P = int(max_points)
        self.k = int(min(max_items, n_features))
        signs = np.zeros(self.d, dtype=int) if signs is None else np.asarray(signs, dtype=int)
        self.signs = signs
        # built with numpy (the sizes are checked first, privopt.scoring._select.check_space)
        neg, pos = np.arange(-self.P, 0, dtype=np.int64), np.arange(1, self.P + 1, dtype=np.int64)
        both = np.concatenate([neg, pos])
        self.values = [both if s == 0 else (pos if s > 0 else neg) for s in signs]
        self.count = item_counts(self.d, self.P, signs)     # c_j = |V_j|
        self.l1 = np.array([int(np.abs(v).sum()) for v in self.values], dtype=np.int64)  # s_j

    # -- sizes ------------------------------------------------------------
    def n_supports(self, size: int) -> int:
        return math.comb(self.d, size)

    def offset(self, size: int) -> int:
        """Index of the first support of ``size``."""
        return sum(math.comb(self.d, j) for j in range(size))

    @property
    def n_regions(self) -> int:
        return self.offset(self.k + 1)

    def size(self) -> int:
        """|W| exactly: 2 + sum over p != 0 of ||p||_1, by a dynamic programme
        over the items (A[m] = number of points vectors with m items, B[m] = the
        sum of their l1 norms)."""
        A = [1] + [0] * self.k
        B = [0] * (self.k + 1)
        for c, s in zip(self.count.tolist(), self.l1.tolist()):
            for m in range(self.k, 0, -1):
                B[m] += B[m - 1] * c + A[m - 1] * s
                A[m] += A[m - 1] * c
        return 2 + sum(B[1:])

    def region_sizes(self, supports: np.ndarray) -> np.ndarray:
        """N_S = sum_i s_i prod_{l != i} c_l for each row of ``supports``
        (float: only used on the log scale of the noise)."""
        if supports.shape[1] == 0:
            return np.full(supports.shape[0], 2.0)
        c = self.count[supports].astype(float)
        s = self.l1[supports].astype(float)
        return np.prod(c, axis=1) * np.sum(s / c, axis=1)

    def n_vectors(self, size: int) -> int:
        """Largest number of points vectors on one support of ``size``."""
        return largest_support_vectors(self.count, size)

    # -- enumeration ------------------------------------------------------
    def supports(self, size: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Supports of ``size`` with lexicographic rank in [start, stop)."""
        stop = self.n_supports(size) if stop is None else stop
        return lex_combinations(self.d, size, start, stop)

    def vectors(self, support) -> np.ndarray:
        """The points vectors on ``support`` (all entries nonzero), one row
        each, in lexicographic order of the value lists (their group index)."""
        support = list(support)
        if not support:
            return np.zeros((1, 0), dtype=np.int64)
        grids = np.meshgrid(*[self.values[j] for j in support], indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1)


@dataclass
class RecordTable:
    """The records collapsed to distinct rows: ``rows_t`` (d, m) uint8 (the
    transposed distinct rows), ``pos`` and ``neg`` (m,) label counts."""

    rows_t: np.ndarray
    pos: np.ndarray
    neg: np.ndarray

    @classmethod
    def from_arrays(cls, X01: np.ndarray, y01: np.ndarray) -> RecordTable:
        X01 = np.ascontiguousarray(X01, dtype=np.uint8)
        if X01.shape[1] == 0:
            inv = np.zeros(X01.shape[0], dtype=np.int64)
            uniq = np.zeros((1, 0), dtype=np.uint8)
        else:
            uniq, inv = np.unique(X01, axis=0, return_inverse=True)
            inv = inv.reshape(-1)
        m = uniq.shape[0]
        pos = np.bincount(inv, weights=(y01 == 1), minlength=m).astype(np.int64)
        neg = np.bincount(inv, weights=(y01 != 1), minlength=m).astype(np.int64)
        return cls(np.ascontiguousarray(uniq.T), pos, neg)

    @property
    def total_pos(self) -> int:
        return int(self.pos.sum())

    @property
    def total_neg(self) -> int:
        return int(self.neg.sum())

    @property
    def n_rows(self) -> int:
        return int(self.pos.shape[0])

    def patterns(self, support) -> tuple[np.ndarray, np.ndarray]:
        """(pos, neg) per pattern of the support's items: pattern code
        c = sum_i x_{S_i} 2^i."""
        support = list(support)
        j = len(support)
        if j == 0:
            return np.array([self.total_pos]), np.array([self.total_neg])
        codes = (self.rows_t[support].astype(np.int64) << np.arange(j)[:, None]).sum(axis=0)
        npat = 1 << j
        return (np.bincount(codes, weights=self.pos, minlength=npat).astype(np.int64),
                np.bincount(codes, weights=self.neg, minlength=npat).astype(np.int64))
