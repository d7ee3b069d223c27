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
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bounds", "minima", "one_support"]

# The histogram step shared by the kernels of (1) and (2).  Consecutive
# supports (lexicographic order) share a prefix, whose partial pattern codes
# are kept: about one pass over the rows per support.


@numba.njit(cache=True)
def histogram(r, supports, prev, codes, mult, digits_t, pos, neg, last, hp, hn, seen,
              occ):   # pragma: no cover - compiled
    """Histogram of support r's patterns (pos, neg counts in hp, hn; the
    codes that occur in occ): returns (the bound (1), patterns that occur).
    Only the patterns that occur are visited: O(rows) per support, whatever
    base^|S| is."""
    j = supports.shape[1]
    m = digits_t.shape[1]
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
    s = 0
    n_occ = 0
    for i in range(m):
        c = last[i]
        if not seen[c]:
            seen[c] = True
            s += min(hp[c], hn[c])
            occ[n_occ] = c
            n_occ += 1
    return s, n_occ


@numba.njit(cache=True)
def clear(occ, n_occ, hp, hn, seen):   # pragma: no cover - compiled
    for q in range(n_occ):
        c = occ[q]
        hp[c] = 0
        hn[c] = 0
        seen[c] = False


@numba.njit(cache=True)
def workspace(supports, base, m):   # pragma: no cover - compiled
    """(codes, mult, prev, hp, hn, seen, last, occ) for supports of one size."""
    j = supports.shape[1]
    npat = base ** j
    mult = np.ones(j, np.int64)
    for lev in range(1, j):
        mult[lev] = mult[lev - 1] * base
    return (np.zeros((j, m), np.int64), mult, np.full(j, -1, np.int64), np.zeros(npat, np.int64),
            np.zeros(npat, np.int64), np.zeros(npat, np.bool_), np.zeros(m, np.int64), np.zeros(m, np.int64))


@numba.njit(cache=True)
def bounds(digits_t, base, pos, neg, supports):   # pragma: no cover - compiled
    """(1) for every support."""
    R = supports.shape[0]
    codes, mult, prev, hp, hn, seen, last, occ = workspace(supports, base, digits_t.shape[1])
    out = np.empty(R, np.int64)
    for r in range(R):
        s, n_occ = histogram(r, supports, prev, codes, mult, digits_t, pos, neg, last, hp, hn, seen, occ)
        clear(occ, n_occ, hp, hn, seen)
        out[r] = s
    return out


# The kernels of (2): many supports (``minima``: minimum and its point, or the
# bound (1) where (2) would cost more than ``budget``) and one support
# (``one_support``: every point's loss and objective).  Both evaluate J with
# the same operations, so the values they give for one point are equal to the
# last bit.


@numba.njit(cache=True)
def losses_from_patterns(occ, n_occ, hp, hn, base, values, V, theta, xs, loss):   # pragma: no cover
    P, j = V.shape
    for p in range(P):
        loss[p] = 0
    for q in range(n_occ):
        c = occ[q]
        cc = c
        for lev in range(j):
            xs[lev] = values[cc % base]
            cc //= base
        for p in range(P):
            sc = 0.0
            for lev in range(j):
                sc += xs[lev] * V[p, lev]
            if sc >= theta:
                loss[p] += hn[c]
            else:
                loss[p] += hp[c]


@numba.njit(cache=True)
def perturbation(support, noise, V, extra, den, pert):   # pragma: no cover - compiled
    P, j = V.shape
    for p in range(P):
        t = 0.0
        for lev in range(j):
            t += noise[support[lev]] * V[p, lev]
        pert[p] = (t + extra[p]) / den


@numba.njit(cache=True)
def minima(digits_t, base, values, pos, neg, supports, V, theta, noise, extra, scale, den,
           budget, ceiling, prune):   # pragma: no cover - compiled
    R, j = supports.shape
    P = V.shape[0]
    codes, mult, prev, hp, hn, seen, last, occ = workspace(supports, base, digits_t.shape[1])
    xs = np.zeros(j, np.float64)
    loss = np.zeros(P, np.int64)
    pert = np.zeros(P, np.float64)
    val = np.empty(R, np.float64)
    exact = np.zeros(R, np.bool_)
    arg = np.full(R, -1, np.int64)
    for r in range(R):
        s, n_occ = histogram(r, supports, prev, codes, mult, digits_t, pos, neg, last, hp, hn, seen, occ)
        perturbation(supports[r], noise, V, extra, den, pert)
        mx = -np.inf
        for p in range(P):
            mx = max(mx, pert[p])
        lb = s - scale * mx
        if n_occ * P <= budget and lb <= ceiling:
            losses_from_patterns(occ, n_occ, hp, hn, base, values, V, theta, xs, loss)
            best = np.inf
            bp = -1
            for p in range(P):
                v = loss[p] - scale * pert[p]
                if v < best:
                    best = v
                    bp = p
            val[r] = best
            exact[r] = True
            arg[r] = bp
            if prune:
                ceiling = min(ceiling, best)
        else:
            val[r] = lb
        clear(occ, n_occ, hp, hn, seen)
    return val, exact, arg


@numba.njit(cache=True)
def one_support(digits_t, base, values, pos, neg, support, V, theta, noise, extra, scale,
                den):   # pragma: no cover - compiled
    j = support.shape[0]
    P = V.shape[0]
    supports = support.reshape(1, j)
    codes, mult, prev, hp, hn, seen, last, occ = workspace(supports, base, digits_t.shape[1])
    _, n_occ = histogram(0, supports, prev, codes, mult, digits_t, pos, neg, last, hp, hn, seen, occ)
    xs = np.zeros(j, np.float64)
    loss = np.zeros(P, np.int64)
    pert = np.zeros(P, np.float64)
    losses_from_patterns(occ, n_occ, hp, hn, base, values, V, theta, xs, loss)
    perturbation(support, noise, V, extra, den, pert)
    J = np.empty(P, np.float64)
    for p in range(P):
        J[p] = loss[p] - scale * pert[p]
    return loss, J
