r"""Pattern histograms of records restricted to a support, and the lower
bound they give on the 0/1 loss of every classifier of that support.

On a support S (a set of feature indices) the records take at most base^|S|
value patterns (base = the number of distinct feature values).  Any
classifier whose prediction depends on the features of S only predicts one
label per pattern, so it misclassifies at least

    LB_S = sum over patterns c of min(pos_c, neg_c)                   (1)

records (pos_c, neg_c: the positive and negative records of pattern c).  The
bound prunes the exact top-down selection samplers and the branch and bound of
the exact optima; it never decides which point is released.
"""

from __future__ import annotations

import numpy as np

from .._numba import lazy_kernel

__all__ = ["pattern_codes", "pattern_counts", "pattern_lower_bounds"]


def _build_numba_kernel(numba):
    """The compiled kernel of (1) over many supports (compiled on first use; None without numba).
    Consecutive supports (lexicographic order) share a prefix, whose partial
    pattern codes are kept: about one pass over the rows per support."""

    @numba.njit(cache=True)
    def kernel(digits_t, base, pos, neg, supports):   # pragma: no cover - compiled
        R, j = supports.shape
        m = digits_t.shape[1]
        npat = base ** j
        codes = np.zeros((j, m), np.int64)      # codes[l]: pattern of the first l items
        mult = np.ones(j, np.int64)
        for lev in range(1, j):
            mult[lev] = mult[lev - 1] * base
        prev = np.full(j, -1, np.int64)
        hp = np.zeros(npat, np.int64)
        hn = np.zeros(npat, np.int64)
        seen = np.zeros(npat, np.bool_)
        last = np.zeros(m, np.int64)
        out = np.empty(R, np.int64)
        for r in range(R):
            l0 = 0
            while l0 < j - 1 and supports[r, l0] == prev[l0]:
                l0 += 1
            for lev in range(l0, j - 1):
                f = supports[r, lev]
                for i in range(m):
                    codes[lev + 1, i] = codes[lev, i] + np.int64(digits_t[f, i]) * mult[lev]
            for lev in range(j):
                prev[lev] = supports[r, lev]
            f = supports[r, j - 1]
            for i in range(m):
                c = codes[j - 1, i] + np.int64(digits_t[f, i]) * mult[j - 1]
                last[i] = c
                hp[c] += pos[i]
                hn[c] += neg[i]
            # only the patterns that occur: O(rows) per support, whatever base^j is
            s = 0
            for i in range(m):
                c = last[i]
                if not seen[c]:
                    seen[c] = True
                    s += min(hp[c], hn[c])
            for i in range(m):
                c = last[i]
                hp[c] = 0
                hn[c] = 0
                seen[c] = False
            out[r] = s
        return out

    return kernel


_numba_kernel = lazy_kernel(_build_numba_kernel)


def pattern_codes(digits_t: np.ndarray, base: int, support) -> np.ndarray:
    """Pattern code sum_i digit_{S_i} base^i of every record."""
    support = list(support)
    if not support:
        return np.zeros(digits_t.shape[1], dtype=np.int64)
    mult = base ** np.arange(len(support), dtype=np.int64)
    return (digits_t[support].astype(np.int64) * mult[:, None]).sum(axis=0)


def pattern_counts(digits_t, base, pos, neg, support) -> tuple[np.ndarray, np.ndarray]:
    """(pos_c, neg_c) for every pattern c of the support (base^|S| each)."""
    npat = base ** len(list(support))
    codes = pattern_codes(digits_t, base, support)
    return (np.bincount(codes, weights=pos, minlength=npat).astype(np.int64),
            np.bincount(codes, weights=neg, minlength=npat).astype(np.int64))


def pattern_lower_bounds(digits_t, base, pos, neg, supports: np.ndarray, use_numba: bool = True) -> np.ndarray:
    """LB_S of (1) for each row of ``supports`` (all of one size, sorted
    lexicographically for speed)."""
    R, j = supports.shape
    if R == 0:
        return np.zeros(0, dtype=np.int64)
    if j == 0:
        return np.full(R, min(int(pos.sum()), int(neg.sum())), dtype=np.int64)
    kernel = _numba_kernel() if use_numba else None
    if kernel is not None:
        return kernel(digits_t, int(base), np.asarray(pos, np.int64), np.asarray(neg, np.int64),
                      np.ascontiguousarray(supports, dtype=np.int64))
    out = np.empty(R, dtype=np.int64)
    for r in range(R):
        p, n = pattern_counts(digits_t, base, pos, neg, supports[r])
        out[r] = np.minimum(p, n).sum()
    return out
