"""The numba kernel of :class:`privopt.search._argmax.BoundedArgmax` (imported on first use,
by its lazy getter, only when numba is installed): the branch and bound over W_tau, and the
steps it is made of, each a compiled function of its own.

They are module-level functions on purpose, as in :mod:`._pattern_kernels`: numba's on-disk
cache (``cache=True``) keys a function by its bytecode and the pickled contents of its closure,
and a compiled function that closes over another (a dispatcher, pickled with an identifier
drawn afresh in each process) would be compiled again in every new process; module globals
are not part of the key (:mod:`privopt._numba`).  The steps are small and inlined into the
search (``inline="always"``), so splitting them out costs nothing.

The arguments are the records of :mod:`._argmax` (NamedTuples of arrays, which numba takes
as they are): ``lattice`` (the rows: ``xt``, ``diff``, ``total_pos``), ``tree`` (W's
enumeration tree and the threshold tables) and ``noisy`` (the noise of every point, its
sparse table of block maxima, the scale and the floor).  A row's part of a count is
``diff[r] * [s >= t[r]]`` (s: its partial score, t: its threshold, :func:`._argmax._thresholds`),
summed in int32, wrapping: exact below ``_MOST_RECORDS`` records (``BoundedArgmax.of``).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["branch_and_bound"]


@numba.njit(cache=True, inline="always")
def largest_noise(noise, table, block, lo, hi):   # pragma: no cover - compiled
    """The largest noise of the points [lo, hi): the whole blocks inside it from the sparse
    table of block maxima (two overlapping runs of 2^t blocks), the ends scanned."""
    top = -np.inf
    bl, bh = (lo + block - 1) // block, hi // block
    if bl < bh:
        t = 0
        while (2 << t) <= bh - bl:
            t += 1
        top = max(table[t, bl], table[t, bh - (1 << t)])
        for p in range(lo, bl * block):
            top = max(top, noise[p])
        for p in range(bh * block, hi):
            top = max(top, noise[p])
    else:
        for p in range(lo, hi):
            top = max(top, noise[p])
    return top


@numba.njit(cache=True, inline="always")
def node_count(level, j, diff, tsel, b):   # pragma: no cover - compiled
    """Node j's count over the rows with its one table (budget column b):
    sum_r diff[r] [level[j, r] >= tsel[j, b, r]] (comparisons only, in the arrays' narrow
    type: SIMD)."""
    acc = np.int32(0)
    for r in range(level.shape[1]):
        acc = np.int32(acc + np.int32(diff[r]) * np.int32(level[j, r] >= tsel[j, b, r]))
    return acc


@numba.njit(cache=True, inline="always")
def leaf_count(level, diff, leaf, k):   # pragma: no cover - compiled
    """The count of a level-1 node's point whose coordinate 0 takes its k-th value (its
    loss is total_pos less it): sum_r diff[r] [level[1, r] >= leaf[k, r]]."""
    acc = np.int32(0)
    for r in range(level.shape[1]):
        acc = np.int32(acc + np.int32(diff[r]) * np.int32(level[1, r] >= leaf[k, r]))
    return acc


@numba.njit(cache=True, inline="always")
def quarters_count(level, diff, quarter, b):   # pragma: no cover - compiled
    """The largest of a level-2 node's four quarters' counts (coordinates 0 and 1 each <= 0
    or >= 0: ``quarter[q, b]``) over the rows, in one pass: its tightest bound."""
    a0, a1, a2, a3 = np.int32(0), np.int32(0), np.int32(0), np.int32(0)
    for r in range(level.shape[1]):
        s, dr = level[2, r], np.int32(diff[r])
        a0 = np.int32(a0 + dr * np.int32(s >= quarter[0, b, r]))
        a1 = np.int32(a1 + dr * np.int32(s >= quarter[1, b, r]))
        a2 = np.int32(a2 + dr * np.int32(s >= quarter[2, b, r]))
        a3 = np.int32(a3 + dr * np.int32(s >= quarter[3, b, r]))
    return max(max(a0, a1), max(a2, a3))


@numba.njit(cache=True, inline="always")
def child_count(level, c, xt, wk, diff, tsel, b):   # pragma: no cover - compiled
    """Node c's scores (its parent's, ``level[c + 1]``, plus coordinate c at the value
    ``wk``) and its count with its one table, in one pass over the rows."""
    acc = np.int32(0)
    for r in range(level.shape[1]):
        level[c, r] = level[c + 1, r] + xt[c, r] * wk
        acc = np.int32(acc + np.int32(diff[r]) * np.int32(level[c, r] >= tsel[c, b, r]))
    return acc


@numba.njit(cache=True, inline="always")
def child_halves(level, xt, wk, diff, half, b):   # pragma: no cover - compiled
    """A level-1 node's scores (level 2's plus coordinate 1 at the value ``wk``) and the
    counts of its two halves (coordinate 0 <= 0, >= 0: ``half[h, b]``), in one pass."""
    a0, a1 = np.int32(0), np.int32(0)
    for r in range(level.shape[1]):
        level[1, r] = level[2, r] + xt[1, r] * wk
        s, dr = level[1, r], np.int32(diff[r])
        a0 = np.int32(a0 + dr * np.int32(s >= half[0, b, r]))
        a1 = np.int32(a1 + dr * np.int32(s >= half[1, b, r]))
    return a0, a1


@numba.njit(cache=True, inline="always")
def child_scores(level, c, xt, wk):   # pragma: no cover - compiled
    """Node c's scores alone (a subtree too small for a bound of its own)."""
    for r in range(level.shape[1]):
        level[c, r] = level[c + 1, r] + xt[c, r] * wk


@numba.njit(cache=True, inline="always")
def next_value(coef, counts, nk, c, k, budget):   # pragma: no cover - compiled
    """The first value index >= k of coordinate c within the node's budget that leaves some
    point below it (``nk[c]``: none)."""
    while k < nk[c] and (coef[c, k] > budget or counts[c, budget - coef[c, k]] == 0):
        k += 1
    return k


@numba.njit(cache=True, nogil=True)
def branch_and_bound(lattice, tree, noisy, best_k, part, parts, split):   # pragma: no cover - compiled
    """The first largest key over W and its point (``best_k``: each coordinate's value
    index): ``(key, position, points scored, nodes bounded)``, position -1 where none.

    Depth first over W in the enumeration's order (coordinate d-1 most significant); a node at
    level j has coordinates j..d-1 fixed (``level[j, r]``: their part of row r's score) and
    holds the points [first[j], first[j] + counts[j, budget[j]]) of that order; with parts > 1,
    only the subtrees at level ``split`` whose rank is part modulo parts (one thread's share).
    A node's bound is drops[j] = (total_pos - its count) / scale, the least loss below it."""
    xt, diff, total_pos = lattice.xt, lattice.diff, lattice.total_pos
    gint, nk, coef, counts = tree.gint, tree.nk, tree.coef, tree.counts
    bucket, tsel, half, quarter, leaf = tree.bucket, tree.tsel, tree.half, tree.quarter, tree.leaf
    noise, table, block, min_bound = noisy.noise, noisy.table, noisy.block, tree.min_bound
    scale, floor, has_floor = noisy.scale, noisy.floor, noisy.has_floor
    d, rows = xt.shape
    level = np.zeros((d + 1, rows), dtype=xt.dtype)
    budget, first, rank = np.zeros(d + 1, np.int64), np.zeros(d + 1, np.int64), np.zeros(d + 1, np.int64)
    nxt_k, nxt_p = np.zeros(d + 1, np.int64), np.zeros(d + 1, np.int64)
    drops = np.zeros(d + 1, dtype=np.float64)
    halves = np.full(2, -np.inf)       # the current level-1 node's bound over each half of coordinate 0
    cur = np.zeros(d, dtype=np.int64)
    best, best_p, scored, bounded = -np.inf, np.int64(-1), np.int64(0), np.int64(0)
    budget[d] = tree.bound
    j, entering = d, True
    while j <= d:
        if entering:
            lo, hi = first[j], first[j] + counts[j, budget[j]]
            if j < d and hi - lo >= min_bound:
                bounded += 1        # its bound: computed with its scores, when it was made (below)
            elif j == d:    # the root: rows predicted +1 (or -1) whatever the coordinates take
                bounded += 1
                drops[j] = np.float64(total_pos - node_count(level, j, diff, tsel, bucket[budget[j]])) / scale
            else:      # a small subtree: its parent's bound holds for it too
                drops[j] = drops[j + 1]
            top = largest_noise(noise, table, block, lo, hi)
            ub = top - drops[j]
            if j == 2 and j < d and hi - lo >= min_bound and not (ub < best or (has_floor and ub <= floor)):
                # not pruned: the tighter bound of the four quarters, and the test again
                drops[2] = np.float64(total_pos - quarters_count(level, diff, quarter, bucket[budget[2]])) / scale
                ub = top - drops[2]
            if ub < best or (has_floor and ub <= floor):
                j += 1
                entering = False
                continue
            if j == 1:      # its points, each scored only if its noise less its half's bound may win
                p = lo
                for k in range(nk[0]):
                    if coef[0, k] > budget[1]:
                        continue
                    g0 = gint[0, k]
                    dk = max(drops[1], halves[0] if g0 < 0 else (halves[1] if g0 > 0 else max(halves[0], halves[1])))
                    if noise[p] - dk >= best and not (has_floor and noise[p] - dk <= floor):
                        scored += 1
                        key = noise[p] - np.float64(total_pos - leaf_count(level, diff, leaf, k)) / scale
                        if key > best:
                            best, best_p = key, p
                            best_k[0] = k
                            for i in range(1, d):
                                best_k[i] = cur[i]
                    p += 1
                j += 1
                entering = False
                continue
            nxt_k[j], nxt_p[j] = 0, lo
        # the next child of node j: coordinate c = j-1 at its next value with a completion
        c = j - 1
        k = next_value(coef, counts, nk, c, nxt_k[j], budget[j])
        if k >= nk[c]:
            j += 1
            entering = False
            continue
        nxt_k[j], cur[c] = k + 1, k
        budget[c] = budget[j] - coef[c, k]
        first[c] = nxt_p[j]
        nxt_p[j] += counts[c, budget[c]]
        # another thread's subtree (ranked by its values' indices, not by visit: this thread's
        # pruning must not move it to another thread): node j's next child
        rank[c] = rank[j] * nk[c] + k
        if parts > 1 and c == split and rank[c] % parts != part:
            entering = False
            continue
        # the child's scores and, for a subtree of at least min_bound points, its bound: at
        # level 1 the smaller of its halves' (kept for its points), else its one table's
        if counts[c, budget[c]] >= min_bound and c == 1:
            a0, a1 = child_halves(level, xt, gint[1, k], diff, half, bucket[budget[1]])
            halves[0], halves[1] = np.float64(total_pos - a0) / scale, np.float64(total_pos - a1) / scale
            drops[1] = min(halves[0], halves[1])
        elif counts[c, budget[c]] >= min_bound:
            count = child_count(level, c, xt, gint[c, k], diff, tsel, bucket[budget[c]])
            drops[c] = np.float64(total_pos - count) / scale
        else:
            halves[0], halves[1] = -np.inf, -np.inf
            child_scores(level, c, xt, gint[c, k])
        j = c
        entering = True
    return best, best_p, scored, bounded
