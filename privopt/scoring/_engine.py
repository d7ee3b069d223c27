r"""Exact scoring of W and exact private selection over it, shardable.

Lower bound of a region.  On a support S the records fall into at most 2^|S|
patterns (their values on the items of S).  Every scoring system with support
S predicts one label per pattern, so it makes at least

    LB_S = sum over patterns c of min(pos_c, neg_c)

errors (the error of the best labelling of the patterns).  LB_S bounds the
errors of every point of the region of S from below; it only prunes work.

Errors of a group.  For a points vector p on S, pattern c has total
score_c = sum_i p_i c_i in [lo(p), hi(p)]; threshold t errs on the positives
scoring below t and the negatives scoring at least t:

    err(p, t) = sum_c pos_c [score_c < t] + neg_c [score_c >= t]
              = total_pos + sum_{c : score_c >= t} (neg_c - pos_c),

so all ||p||_1 thresholds of p come from one histogram of (neg - pos) over
the score offsets and its suffix sums: scoring W x thresholds costs about as
much as scoring the points vectors.

Selection (:func:`sample_shard`): exact report-noisy-max by the top-down
construction of :mod:`privopt.mechanisms._topdown`, with regions = supports,
groups = points vectors, points = thresholds, noise addressed by
(level, index) keys.  The non-private optimum (:func:`optimum_shard`) is the same
search without noise: a branch and bound over supports ordered by LB_S.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms._topdown import KeyedStreams, max_of, split_region
from ._space import BLOCK, RecordTable, ScoreSpace

__all__ = ["support_lower_bounds", "group_errors", "sample_shard", "optimum_shard", "plan_shards",
           "better"]

_BIG = np.iinfo(np.int64).max // 4

_KERNEL = False


def _numba_kernel():
    """The compiled lower-bound kernel, or None without numba."""
    global _KERNEL
    if _KERNEL is False:
        try:
            import numba
        except ImportError:
            _KERNEL = None
        else:
            @numba.njit(cache=True)
            def kernel(rows_t, pos, neg, supports):   # pragma: no cover - compiled
                R, j = supports.shape
                m = rows_t.shape[1]
                npat = 1 << j
                codes = np.zeros((j, m), np.int64)      # codes[l]: pattern of the first l items
                prev = np.full(j, -1, np.int64)
                hp = np.zeros(npat, np.int64)
                hn = np.zeros(npat, np.int64)
                out = np.empty(R, np.int64)
                for r in range(R):
                    l0 = 0
                    while l0 < j - 1 and supports[r, l0] == prev[l0]:
                        l0 += 1
                    for lev in range(l0, j - 1):
                        f = supports[r, lev]
                        for i in range(m):
                            codes[lev + 1, i] = codes[lev, i] | (np.int64(rows_t[f, i]) << lev)
                    for lev in range(j):
                        prev[lev] = supports[r, lev]
                    hp[:] = 0
                    hn[:] = 0
                    f = supports[r, j - 1]
                    for i in range(m):
                        c = codes[j - 1, i] | (np.int64(rows_t[f, i]) << (j - 1))
                        hp[c] += pos[i]
                        hn[c] += neg[i]
                    s = 0
                    for c in range(npat):
                        s += min(hp[c], hn[c])
                    out[r] = s
                return out

            _KERNEL = kernel
    return _KERNEL


def support_lower_bounds(table: RecordTable, supports: np.ndarray, use_numba: bool = True) -> np.ndarray:
    """LB_S (module docstring) for each row of ``supports`` (all of one size)."""
    R, j = supports.shape
    if R == 0:
        return np.zeros(0, dtype=np.int64)
    if j == 0:
        return np.full(R, min(table.total_pos, table.total_neg), dtype=np.int64)
    kernel = _numba_kernel() if use_numba else None
    if kernel is not None:
        return kernel(table.rows_t, table.pos, table.neg, np.ascontiguousarray(supports, dtype=np.int64))
    out = np.empty(R, dtype=np.int64)
    for r in range(R):
        p, n = table.patterns(supports[r])
        out[r] = np.minimum(p, n).sum()
    return out


def group_errors(table: RecordTable, support, vectors: np.ndarray):
    """``(err, thresholds, sizes)`` for the points vectors of one support:
    err[g, b] = errors of (vectors[g], thresholds[g, b]) for b < sizes[g]
    (larger b are padding, set to a huge value); sizes[g] = ||p_g||_1 (2 for
    the empty support, whose thresholds are 0 and 1)."""
    pos, neg = table.patterns(support)
    j = len(list(support))
    if j == 0:
        err = np.array([[table.total_neg, table.total_pos]], dtype=np.int64)
        return err, np.array([[0, 1]], dtype=np.int64), np.array([2], dtype=np.int64)
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


def plan_shards(space: ScoreSpace, block: int = BLOCK) -> list[tuple[int, int, int]]:
    """(size, start, stop) ranges of supports: each size's supports in
    blocks of ``block`` lexicographic ranks (the unit of the top-level noise)."""
    out = []
    for size in range(space.k + 1):
        n = space.n_supports(size)
        for start in range(0, n, block):
            out.append((size, start, min(n, start + block)))
    return out


def better(a, b) -> bool:
    """Is candidate ``a`` = (key, region, group, position) preferred to ``b``?
    Larger key first, then the smaller (region, group, position): a
    deterministic rule, so that every split of W gives the same answer."""
    if b is None:
        return True
    if a[0] != b[0]:
        return a[0] > b[0]
    return tuple(a[1:]) < tuple(b[1:])


def _region_maxima(space, streams, size, start, stop, method):
    """M_S of each support in [start, stop) (one block): keyed (0, size, block)."""
    block0 = start // BLOCK
    if block0 != (stop - 1) // BLOCK:
        raise ValueError("a shard must lie within one noise block")
    n_block = min(space.n_supports(size), (block0 + 1) * BLOCK) - block0 * BLOCK
    u = streams.uniforms((0, size, block0), n_block)[start - block0 * BLOCK: stop - block0 * BLOCK]
    return u


def sample_shard(table: RecordTable, space: ScoreSpace, streams: KeyedStreams, method: str, scale: float,
                 shard, floor=None, use_numba: bool = True):
    """The best candidate ``(key, region, group, position)`` of one shard of
    supports under report-noisy-max with keys -err / scale + noise (None when
    every region of the shard is below ``floor``, a key already reached
    elsewhere), and the number of regions and groups expanded."""
    size, start, stop = shard
    supports = space.supports(size, start, stop)
    lb = support_lower_bounds(table, supports, use_numba=use_numba)
    n_points = space.region_sizes(supports)
    M = max_of(_region_maxima(space, streams, size, start, stop, method), n_points, method)
    bound = M - lb / scale
    best = floor
    expanded = [0, 0]
    first = space.offset(size) + start
    for r in np.argsort(-bound, kind="stable"):
        if best is not None and bound[r] < best[0]:
            break
        region = first + int(r)
        S = supports[r]
        vectors = space.vectors(S)
        err, _, sizes = group_errors(table, S, vectors)
        expanded[0] += 1
        u = streams.uniforms((1, region), len(sizes) + 1)
        Mg = split_region(u, sizes, float(M[r]), method)
        gbound = Mg - err.min(axis=1) / scale
        for gi in np.argsort(-gbound, kind="stable"):
            if best is not None and gbound[gi] < best[0]:
                break
            n = int(sizes[gi])
            expanded[1] += 1
            z = split_region(streams.uniforms((2, region, int(gi)), n + 1), np.ones(n), float(Mg[gi]), method)
            keys = z - err[gi, :n] / scale
            pos = int(np.argmax(keys))
            cand = (float(keys[pos]), region, int(gi), pos)
            if better(cand, best):
                best = cand
    if best is floor:
        best = None
    return best, expanded


def optimum_shard(table: RecordTable, space: ScoreSpace, shard, ceiling=None, use_numba: bool = True):
    """The exact minimum of the errors over one shard: ``(err, region, group,
    position)`` (smallest errors, then smallest indices), or None when no
    region can go below ``ceiling`` = (err, ...) found elsewhere."""
    size, start, stop = shard
    supports = space.supports(size, start, stop)
    lb = support_lower_bounds(table, supports, use_numba=use_numba)
    best = ceiling
    first = space.offset(size) + start
    for r in np.argsort(lb, kind="stable"):
        if best is not None and lb[r] > best[0]:
            break
        region = first + int(r)
        err, _, sizes = group_errors(table, supports[r], space.vectors(supports[r]))
        flat = int(np.argmin(err))
        gi, pos = divmod(flat, err.shape[1])
        cand = (int(err[gi, pos]), region, gi, pos)
        if best is None or (cand[0], cand[1:]) < (best[0], tuple(best[1:])):
            best = cand
    if best is ceiling:
        best = None
    return best


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
