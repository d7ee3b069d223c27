"""The numba kernels of :mod:`privopt.search._patterns` (imported on first
use, by its lazy getters, only when numba is installed).

They are module-level functions on purpose: numba's on-disk cache
(``cache=True``) keys a function by its bytecode *and* the pickled contents
of its closure, and a dispatcher pickles with an identifier drawn afresh in
every process.  Kernels defined inside a builder function that call one
another (closures over dispatchers) therefore never hit the cache, and every
new process recompiled them (about 2 to 25 s on a first fit).  Here they
call each other as module globals, which the cache key does not include, so
the second process loads them from the cache (see :mod:`privopt._numba`).

Their arguments travel as three typed records of :mod:`._patterns`
(NamedTuples of arrays, which numba takes as they are): ``Records`` (the
distinct rows and their labels), ``Points`` (a region's points and the
objective) and ``Workspace`` (the histogram's scratch arrays, reusable from
call to call: a histogram's stamp makes every older entry count as empty).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bounds", "minima", "floor_minima", "one_support", "screened_minima", "screened_rows"]


# The histogram step shared by the kernels of (1) and (2).  Consecutive
# supports (lexicographic order) share a prefix, whose partial pattern codes
# are kept: about one pass over the rows per support.  A pattern's entry holds
# the stamp of the histogram that last counted it and its two counts, side by
# side (one memory access per row); an entry with an older stamp counts as
# empty, so nothing is cleared between supports, and the bound (1) is summed
# as the rows are counted.


@numba.njit(cache=True)
def histogram(support, records, ws):   # pragma: no cover - compiled
    """Histogram of the support's patterns (ws.counts[c] = (stamp, pos, neg) of
    each pattern c that occurs, listed in ws.occ in order of first row, with
    that row in ws.first_row): returns (the bound (1), patterns that occur).
    Only the patterns that occur are visited: O(rows) per support, whatever
    base^|S| is."""
    s, n_occ, rows = histogram_upto(support, records, ws, records.digits_t.shape[1])
    return s, n_occ


@numba.njit(cache=True)
def histogram_upto(support, records, ws, most):   # pragma: no cover - compiled
    """:func:`histogram`, stopped at the first row whose pattern would be the
    (``most`` + 1)-th to occur: returns (the bound (1) over the rows counted,
    patterns that occur among them, rows counted).  The bound over some of the
    rows is a lower bound on the loss over all of them (each row's labels only
    add to a loss)."""
    s, n_occ, rows, _ = histogram_until(support, records, ws, most, 0.0, 0.0, -np.inf, 1.0, 0.0)
    return s, n_occ, rows


@numba.njit(cache=True)
def prefix_codes(support, records, ws):   # pragma: no cover - compiled
    """The partial pattern codes of the support's prefix (levels 0..j-2, those it
    shares with the previous support kept), and a new stamp for its histogram
    (returned)."""
    j = support.shape[0]
    digits_t, codes, mult = records.digits_t, ws.codes, ws.mult
    m = digits_t.shape[1]
    l0 = 0
    while l0 < j - 1 and support[l0] == ws.prev[l0]:
        l0 += 1
    for lev in range(l0, j - 1):
        f = support[lev]
        for i in range(m):
            codes[lev + 1, i] = codes[lev, i] + np.int64(digits_t[f, i]) * mult[lev]
    for lev in range(j):
        ws.prev[lev] = support[lev]
    ws.stamp[0] += 1
    return ws.stamp[0]


#: Rows between two looks at the bound (1) counted so far in :func:`histogram_until`.
SETTLE_EVERY = 64


@numba.njit(cache=True)
def histogram_until(support, records, ws, most, offset, region_max, best_key, key_scale,
                    slack):   # pragma: no cover - compiled
    """:func:`histogram_upto` (which is this with a best key of minus infinity, never
    settled), stopped too as soon as the bound (1) over the rows counted
    so far, minus ``offset``, settles the sampler's test (:func:`cannot_win`; a lower bound
    on the region's objective, since each row's labels only add to a loss): returns (the
    bound over the rows counted, patterns that occur among them, rows counted, settled).
    Where it does not settle, the same numbers as :func:`histogram_upto`."""
    stamp = prefix_codes(support, records, ws)
    j = support.shape[0]
    digits_t, pos, neg = records.digits_t, records.pos, records.neg
    codes, counts, occ = ws.codes, ws.counts, ws.occ
    m = digits_t.shape[1]
    f = support[j - 1]
    last = ws.mult[j - 1]
    n_occ = 0
    s = 0
    for i in range(m):
        c = codes[j - 1, i] + np.int64(digits_t[f, i]) * last
        p, q = pos[i], neg[i]
        if counts[c, 0] != stamp:
            if n_occ == most:
                return s, n_occ, i, False
            counts[c, 0] = stamp
            occ[n_occ] = c
            ws.first_row[n_occ] = i
            n_occ += 1
        else:
            s -= min(counts[c, 1], counts[c, 2])
            p += counts[c, 1]
            q += counts[c, 2]
        counts[c, 1] = p
        counts[c, 2] = q
        s += min(p, q)
        if (i + 1) % SETTLE_EVERY == 0 and i + 1 < m \
                and cannot_win(s - offset, region_max, best_key, key_scale, slack):
            return s, n_occ, i + 1, True
    return s, n_occ, m, cannot_win(s - offset, region_max, best_key, key_scale, slack)


@numba.njit(cache=True)
def bounds(records, supports, ws):   # pragma: no cover - compiled
    """(1) for every support, with the workspace ``ws`` of their size (its
    prefix forgotten first)."""
    R, j = supports.shape
    for lev in range(j):
        ws.prev[lev] = -1
    out = np.empty(R, np.int64)
    for r in range(R):
        s, n_occ = histogram(supports[r], records, ws)
        out[r] = s
    return out


# The kernels of (2): many supports (``minima``: minimum and its point, or the
# bound (1) where (2) would cost more than ``budget``) and one support
# (``one_support``: every point's loss and objective).  Both evaluate J with
# the same operations, so the values they give for one point are equal to the
# last bit.  A point's score on a pattern is the sum over the levels, in
# order, of value * V[p, level] (the same additions in the same order as
# scoring a row); the loop runs over the points innermost, which the compiler
# vectorizes.


@numba.njit(cache=True)
def losses_from_patterns(records, support, points, ws, n_occ):   # pragma: no cover - compiled
    """The loss of every point from the histogram (ws.loss[:P])."""
    for p in range(points.Vt.shape[1]):
        ws.loss[p] = 0
    add_patterns(records, support, points, ws, 0, n_occ, pattern_scratch(points, n_occ))


@numba.njit(cache=True)
def pattern_scratch(points, n):   # pragma: no cover - compiled
    """Scratch arrays of :func:`add_patterns` for up to ``n`` patterns at once: their values
    (j, n) and scores (n) in the dtype of ``points.Vt``, their labels wrong if predicted
    positive and if predicted negative."""
    j = points.Vt.shape[0]
    return (np.empty((j, n), points.Vt.dtype), np.empty(n, points.Vt.dtype), np.empty(n, np.int64),
            np.empty(n, np.int64))


@numba.njit(cache=True)
def add_patterns(records, support, points, ws, q0, q1, scratch):   # pragma: no cover - compiled
    """Add the patterns that occur q0..q1-1 to every point's loss (ws.loss[:P]): their
    labels that the point's rule gets wrong.  Pattern-major: the patterns' values (read
    off the first row that has each, no division of its code) and labels gathered once,
    then each point's scores over all of them in one run, which the compiler vectorizes; a
    point's score on a pattern is the sum over the levels, in order, of value *
    V[p, level] (the same additions in the same order as scoring a row)."""
    Vt, theta, values, digits_t = points.Vt, points.theta, records.values, records.digits_t
    j, P = Vt.shape
    xs, sc, if_pos, if_neg = scratch
    n = q1 - q0
    for q in range(n):
        c = ws.occ[q0 + q]
        i = ws.first_row[q0 + q]
        for lev in range(j):
            xs[lev, q] = values[digits_t[support[lev], i]]
        if_pos[q] = ws.counts[c, 2]      # wrong if predicted positive: the pattern's negatives
        if_neg[q] = ws.counts[c, 1]
    for p in range(P):
        v = Vt[0, p]
        for q in range(n):
            sc[q] = xs[0, q] * v         # 0.0 + x v is x v (or +0.0 for -0.0, which compares alike)
        for lev in range(1, j):
            v = Vt[lev, p]
            for q in range(n):
                sc[q] += xs[lev, q] * v
        acc = 0
        for q in range(n):
            acc += if_pos[q] if sc[q] >= theta else if_neg[q]
        ws.loss[p] += acc


@numba.njit(cache=True)
def perturbation(support, points, pert):   # pragma: no cover - compiled
    V, noise, extra, den = points.V, points.noise, points.extra, points.den
    P, j = V.shape
    for p in range(P):
        t = 0.0
        for lev in range(j):
            t += noise[support[lev]] * V[p, lev]
        pert[p] = (t + extra[p]) / den


@numba.njit(cache=True, nogil=True)
def start_minima(records, supports, points, budget, ws, stop_early):   # pragma: no cover - compiled
    """The start of :func:`minima` and :func:`floor_minima`: the workspace's prefix
    forgotten (it may come from other data), their outputs ``(val, exact, arg)`` for the
    supports, and the most rows a histogram counts (all, or with ``stop_early`` as many as
    (2) within ``budget`` allows)."""
    R, j = supports.shape
    for lev in range(j):
        ws.prev[lev] = -1
    most = records.digits_t.shape[1]
    if stop_early:
        most = min(most, budget // max(points.V.shape[0], 1) + 1)
    return np.empty(R, np.float64), np.zeros(R, np.bool_), np.full(R, -1, np.int64), most


@numba.njit(cache=True, nogil=True)
def minima(records, supports, points, budget, ceiling, prune, ws, stop_early=False):   # pragma: no cover
    """(val, exact, arg) of every support, with the workspace ``ws`` of their
    size (its prefix forgotten first: it may come from other data).  With
    ``stop_early``, a support's histogram stops as soon as its patterns are too
    many for (2) within ``budget``: its value is then the bound (1) over the rows
    counted so far (a lower bound all the same, usually a weaker one), and every
    exact value is what it is without."""
    R = supports.shape[0]
    P = points.V.shape[0]
    scale = points.scale
    val, exact, arg, most = start_minima(records, supports, points, budget, ws, stop_early)
    for r in range(R):
        s, n_occ, counted = histogram_upto(supports[r], records, ws, most)
        lb = s - scale * largest_perturbation(supports[r], points, ws.pert)
        if n_occ * P <= budget and lb <= ceiling:
            v, bp = smallest_objective(records, supports[r], points, ws, n_occ)
            val[r], exact[r], arg[r] = v, True, bp
            if prune:
                ceiling = min(ceiling, v)
        else:
            val[r] = lb
    return val, exact, arg


@numba.njit(cache=True, nogil=True)
def floor_minima(records, supports, points, budget, ws, stop_early, floor):   # pragma: no cover - compiled
    """:func:`minima` (no ceiling, no pruning) for the sampler's bound pass once a best key
    is known: a region whose bound (1) minus the largest perturbation term already
    settles the sampler's test against ``best_key`` (:func:`cannot_win` with its noise
    maximum ``region_max[r]``) is left with that bound, its histogram stopped as soon as
    the rows counted settle it (:func:`histogram_until`) and no point scored.  Every other
    region's ``(val, exact, arg)`` is :func:`minima`'s.  The sampler never visits a settled
    region (its bound is below the best key, which only grows), so the released point and
    the regions it scores are the same.  ``floor``: the sampler's
    :class:`privopt.search._patterns.Floor` of these supports."""
    region_max, best_key, key_scale, slack = floor
    R = supports.shape[0]
    P = points.V.shape[0]
    scale = points.scale
    val, exact, arg, most = start_minima(records, supports, points, budget, ws, stop_early)
    for r in range(R):
        offset = scale * largest_perturbation(supports[r], points, ws.pert)
        s, n_occ, counted, settled = histogram_until(supports[r], records, ws, most, offset, region_max[r],
                                                     best_key, key_scale, slack)
        if n_occ * P <= budget and not settled:
            v, bp = smallest_objective(records, supports[r], points, ws, n_occ)
            val[r], exact[r], arg[r] = v, True, bp
        else:
            val[r] = s - offset
    return val, exact, arg


@numba.njit(cache=True)
def largest_perturbation(support, points, pert):   # pragma: no cover - compiled
    """The perturbation term of every point of the support (``pert``) and the largest."""
    perturbation(support, points, pert)
    mx = -np.inf
    for p in range(points.V.shape[0]):
        mx = max(mx, pert[p])
    return mx


@numba.njit(cache=True)
def smallest_objective(records, support, points, ws, n_occ):   # pragma: no cover - compiled
    """``(min J, its first point)`` over the support's points, from its histogram (the
    perturbation terms in ``ws.pert`` already)."""
    losses_from_patterns(records, support, points, ws, n_occ)
    best = np.inf
    bp = -1
    for p in range(points.V.shape[0]):
        v = ws.loss[p] - points.scale * ws.pert[p]
        if v < best:
            best = v
            bp = p
    return best, bp


#: Patterns between two looks at the smallest partial objective in :func:`screened_minima`.
SCREEN_EVERY = 32


@numba.njit(cache=True, nogil=True)
def screened_minima(records, supports, points, floor, ws):   # pragma: no cover
    """For every support: the exact minimum of J over its region, or, as soon as the
    smallest partial objective (the patterns counted so far: each point's loss only grows
    as patterns are added, so it is a lower bound on the point's J) shows that no key of
    the region reaches ``best_key``, that lower bound.  The test is the sampler's:
    ``upper = region_max[r] - low / key_scale`` cannot win when ``upper < best_key - slack
    (1 + |upper| + |best_key|)``, its numbers the sampler's
    :class:`privopt.search._patterns.Floor` ``floor`` of these supports.  Returns ``(val, exact)``."""
    region_max, best_key, key_scale, slack = floor
    R, j = supports.shape
    P = points.V.shape[0]
    scale = points.scale
    loss, pert = ws.loss, ws.pert
    for lev in range(j):
        ws.prev[lev] = -1
    val = np.empty(R, np.float64)
    exact = np.zeros(R, np.bool_)
    scratch = pattern_scratch(points, SCREEN_EVERY)
    for r in range(R):
        support = supports[r]
        _, n_occ = histogram(support, records, ws)
        perturbation(support, points, pert)
        for p in range(P):
            loss[p] = 0
        stopped = False
        for q0 in range(0, n_occ, SCREEN_EVERY):
            q = min(q0 + SCREEN_EVERY, n_occ) - 1
            add_patterns(records, support, points, ws, q0, q + 1, scratch)
            if q + 1 < n_occ:
                low = np.inf
                for p in range(P):
                    low = min(low, loss[p] - scale * pert[p])
                upper = region_max[r] - low / key_scale
                if upper < best_key - slack * (1.0 + abs(upper) + abs(best_key)):
                    val[r] = low
                    stopped = True
                    break
        if not stopped:
            best = np.inf
            for p in range(P):
                best = min(best, loss[p] - scale * pert[p])
            val[r] = best
            exact[r] = True
    return val, exact


@numba.njit(cache=True)
def cannot_win(value, region_max, best_key, key_scale, slack):   # pragma: no cover - compiled
    """The sampler's test on a lower bound ``value`` of a region's objective: its keys are
    at most ``upper = region_max - value / key_scale``, below ``best_key - slack (1 +
    |upper| + |best_key|)``.  It holds for every value above one that passes (``upper +
    slack |upper|`` grows with upper)."""
    upper = region_max - value / key_scale
    return upper < best_key - slack * (1.0 + abs(upper) + abs(best_key))


@numba.njit(cache=True, nogil=True)
def screened_rows(supports, points, floor, ordered, block, tree, threshold, ws):   # pragma: no cover - compiled
    """:func:`screened_minima` without the histogram: every point's loss (2) is summed
    over the distinct rows themselves, in a fixed order, ``block`` rows at a time
    (``ordered``: the rows' values, positive labels and negative minus positive labels
    in that order, :func:`privopt.search._patterns.ordered_rows`).  Where a support's
    patterns are nearly all distinct the histogram merges next to nothing, and a region
    that cannot win is settled after a share of the rows instead of after a full pass to
    build the histogram.

    The scores of a block's rows are summed along ``tree`` (``(depth, value, point)``
    per node, :func:`privopt.search._patterns.score_tree`): the points sorted, each
    node one prefix of them, its partial score that of its parent plus the rows' value
    at its depth times its own, so points that share a prefix share its additions, made
    in the same order as point by point (the same numbers).  After each block, a point
    whose partial objective (a lower bound on its objective: its loss only grows with the
    rows) already passes the sampler's test (:func:`cannot_win`) is no longer counted;
    the region is settled when none is left, with the smallest of those partial
    objectives.  Where points are left after the last row, the region's minimum is the
    smallest objective among them (a point set aside is above a value that passes the
    test, which the points left do not reach).  A row's score is that of its pattern and
    a point's loss over all the rows is the same integer as over the patterns, so an
    exact value is the same number as the histogram's.  ``threshold``: theta in the
    scores' dtype (:func:`privopt.search._patterns.score_threshold`, the same comparisons;
    with float32 scores and int32 label differences the comparisons and sums run eight
    lanes wide).  ``floor``: the sampler's :class:`privopt.search._patterns.Floor` of these
    supports.  Returns ``(val, exact)``."""
    region_max, best_key, key_scale, slack = floor
    R, j = supports.shape
    x_o, pos_o, diff_o = ordered
    m = pos_o.shape[0]
    Vt = points.Vt
    P = Vt.shape[1]
    depth, node_value, node_point = tree
    n_nodes = depth.shape[0]
    parent, end = tree_links(depth, j)
    live = np.ones(n_nodes, np.bool_)
    scale = points.scale
    loss, pert = ws.loss, ws.pert
    sc = np.empty((j, block), Vt.dtype)
    alive = np.empty(P, np.bool_)
    val = np.empty(R, np.float64)
    exact = np.zeros(R, np.bool_)
    for r in range(R):
        support = supports[r]
        perturbation(support, points, pert)
        for p in range(P):
            loss[p] = 0
            alive[p] = True
        for q in range(n_nodes):
            live[q] = True
        n_alive = P
        settled = np.inf
        t0 = 0
        while t0 < m and n_alive > 0:
            b = min(block, m - t0)
            # a row adds neg where a point puts it on the positive side, else pos: pos + (neg - pos) [score >= theta]
            base = 0
            for t in range(t0, t0 + b):
                base += pos_o[t]
            diff = diff_o[t0:t0 + b]
            q = 0
            while q < n_nodes:
                if not live[q]:
                    q = end[q]          # no point left below this prefix: its scores are not needed
                    continue
                d = depth[q]
                v = node_value[q]
                row = x_o[support[d], t0:t0 + b]
                cur = sc[d]
                if d == 0:
                    # 0.0 + x v is x v (or +0.0 for -0.0, which compares and adds alike)
                    for t in range(b):
                        cur[t] = row[t] * v
                else:
                    prev = sc[d - 1]
                    for t in range(b):
                        cur[t] = prev[t] + row[t] * v
                p = node_point[q]
                if p >= 0 and alive[p]:
                    acc = 0
                    for t in range(b):
                        if cur[t] >= threshold:
                            acc += diff[t]
                    loss[p] += base + acc
                q += 1
            t0 += b
            if t0 < m:
                dropped = False
                for p in range(P):
                    if alive[p]:
                        value = loss[p] - scale * pert[p]
                        if cannot_win(value, region_max[r], best_key, key_scale, slack):
                            settled = min(settled, value)
                            alive[p] = False
                            n_alive -= 1
                            dropped = True
                if dropped:
                    mark_live(node_point, parent, alive, live)
        if n_alive == 0:
            val[r] = settled
        else:
            low = np.inf
            for p in range(P):
                if alive[p]:
                    low = min(low, loss[p] - scale * pert[p])
            val[r] = low
            exact[r] = True
    return val, exact


@numba.njit(cache=True)
def tree_links(depth, j):   # pragma: no cover - compiled
    """``(parent, end)`` of the nodes of a :func:`privopt.search._patterns.score_tree` (depth
    first: a node's parent is the last node before it one level up, its subtree the nodes
    after it up to ``end``, the next node at its level or above; -1 and the node count where
    there is none)."""
    n = depth.shape[0]
    parent = np.full(n, -1, np.int64)
    end = np.full(n, n, np.int64)
    open_ = np.full(max(j, 1), -1, np.int64)
    for q in range(n):
        d = depth[q]
        for dd in range(d, open_.shape[0]):
            if open_[dd] >= 0:
                end[open_[dd]] = q
                open_[dd] = -1
        if d > 0:
            parent[q] = open_[d - 1]
        open_[d] = q
    return parent, end


@numba.njit(cache=True)
def mark_live(node_point, parent, alive, live):   # pragma: no cover - compiled
    """``live[q]``: whether some point still ``alive`` completes a node of q's subtree (a
    parent comes before its children, so one pass from the last node up)."""
    n = node_point.shape[0]
    for q in range(n):
        live[q] = False
    for q in range(n - 1, -1, -1):
        p = node_point[q]
        if p >= 0 and alive[p]:
            live[q] = True
        if live[q] and parent[q] >= 0:
            live[parent[q]] = True


@numba.njit(cache=True)
def one_support(records, support, points, ws):   # pragma: no cover - compiled
    """(loss, J) of every point of one support, with the workspace ``ws`` of
    its size (its prefix reset)."""
    j = support.shape[0]
    P = points.V.shape[0]
    for lev in range(j):
        ws.prev[lev] = -1
    _, n_occ = histogram(support, records, ws)
    losses_from_patterns(records, support, points, ws, n_occ)
    perturbation(support, points, ws.pert)
    loss = ws.loss[:P].copy()
    J = np.empty(P, np.float64)
    for p in range(P):
        J[p] = loss[p] - points.scale * ws.pert[p]
    return loss, J
