"""Report-noisy-max over W_tau of a 0/1-loss halfspace model by branch and bound, without
Pyomo (:class:`BoundedArgmax`, compiled): the same point as scoring every point of W with
:class:`privopt.search._losses.IntegerLattice` and taking the first largest key, with the
subtrees that cannot hold it bounded away."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._numba import lazy_kernel
from .._runtime import kernel_threads, map_on_kernel_threads
from ..space import prefix_counts
from ._losses import IntegerLattice

__all__ = ["BoundedArgmax", "NoisyArgmax"]


class _Lattice(NamedTuple):
    """The integer scorer's data, as the branch and bound's kernel reads it (every array in
    the narrowest integer type that holds it: :func:`_score_dtype`)."""

    xt: np.ndarray           #: (d, rows) feature values
    diff: np.ndarray         #: pos - neg of each row
    total_pos: int
    thr: int                 #: ceil(theta)


class _Tree(NamedTuple):
    """W_tau's enumeration tree: grid values, their norm units, the points below each budget,
    and the thresholds a row's partial score is compared with."""

    gint: np.ndarray         #: (d, width) int64 grid values
    nk: np.ndarray           #: grid size of each coordinate
    coef: np.ndarray         #: (d, width) squared-norm units of each grid value
    counts: np.ndarray       #: (d + 1, bound + 1) points with coordinates < j within each budget
    bucket: np.ndarray       #: budget -> its column of tsel (:func:`_partial_score_bounds`)
    tsel: np.ndarray         #: (d + 1, columns, rows) thr - the partial score bound of coordinates < j (_thresholds)
    half: np.ndarray         #: (2, columns, rows) as tsel[1], coordinate 0 <= 0 or >= 0 (_split_thresholds)
    quarter: np.ndarray      #: (4, columns, rows) as tsel[2], coordinates 0 and 1 each in one half
    leaf: np.ndarray         #: (width, rows) thr - x[r, 0] * (k-th grid value of coordinate 0)
    bound: int
    min_bound: int           #: fewest points of a subtree whose bound is computed


class _Noise(NamedTuple):
    """The noise of every point, its block maxima, the scale and the floor."""

    noise: np.ndarray
    table: np.ndarray        #: :func:`_block_maxima` of ``noise``
    block: int
    scale: float
    floor: float
    has_floor: bool


class _Found(NamedTuple):
    """What the kernel returns: the best key, its position in the enumeration (-1: none), points scored,
    nodes bounded."""

    key: float
    position: int
    scored: int
    bounded: int


def _build_argmax_kernel(numba):
    """The compiled branch and bound of :class:`BoundedArgmax`
    (:func:`._argmax_kernels.branch_and_bound`; None without numba): imported on first use,
    its steps live at module level there, which is what lets numba's cache hit."""
    from . import _argmax_kernels   # lazy: numba (privopt[fast]) and the kernel load only when used

    return _argmax_kernels.branch_and_bound


_argmax_kernel = lazy_kernel(_build_argmax_kernel)


def _build_ball_bounds_kernel(numba):
    """The compiled tables of :func:`_ball_score_bounds` (None without numba)."""

    @numba.njit(cache=True, nogil=True)
    def ball_bounds(xt, gint, coef, nk, bound, fmax):   # pragma: no cover - compiled
        # fmax[j, b, r]: the largest sum_{i<j} x[r, i] w_i over the values of coordinates 0..j-1
        # whose units sum to at most b (a knapsack over the coordinates; the smallest is minus
        # that of -x); a budget no assignment fits is left 0 (no point lies below a node with
        # it).  In the table's type, which holds every partial score (_score_dtype)
        d, rows = xt.shape
        reach = np.zeros((d + 1, bound + 1), dtype=np.bool_)     # some assignment fits budget b
        reach[0, :] = True
        for j in range(1, d + 1):
            c = j - 1
            xc = xt[c]
            for b in range(bound + 1):
                hi = fmax[j, b]
                fits = False
                for k in range(nk[c]):
                    u = coef[c, k]
                    if u > b or not reach[j - 1, b - u]:
                        continue
                    g = gint[c, k]
                    up = fmax[j - 1, b - u]
                    if not fits:
                        for r in range(rows):
                            hi[r] = up[r] + xc[r] * g
                        fits = True
                    else:
                        for r in range(rows):
                            hi[r] = max(hi[r], up[r] + xc[r] * g)
                reach[j, b] = fits
        return fmax

    return ball_bounds


_ball_bounds_kernel = lazy_kernel(_build_ball_bounds_kernel)


def _build_split_bounds_kernel(numba):
    """The compiled tables of :func:`_split_thresholds` (None without numba)."""

    @numba.njit(cache=True, nogil=True)
    def split_bounds(sp0, sp1, pos, gint, coef, nk, reps, thr, half, quarter):   # pragma: no cover - compiled
        # sp0[k, r] = sign_r x[r, 0] gint[0, k], sp1 the same for coordinate 1 (sign_r +1 where row
        # r's diff > 0, else -1): a row's bound over a set of values is sign_r times the largest of
        # sign_r * (partial score) over it, at an end of each coordinate's values in the set (the
        # score is linear in each).  Column c holds budget reps[c]; tables t = 0, 1 the halves,
        # t = 2 + 2 h1 + h0 the quarters.  A half or quarter no value fits takes another's table
        # (the smallest bound is the same); none fits: thr (no point lies below a node with it)
        rows = sp0.shape[1]
        best = np.zeros(rows, dtype=sp0.dtype)
        tables = 6 if quarter.shape[1] > 0 else 2
        for c in range(half.shape[1]):
            found = np.zeros(6, dtype=np.bool_)
            for t in range(tables):
                h0, h1 = t % 2, (t - 2) // 2
                for k1 in range(nk[1] if t >= 2 else 1):
                    rest = reps[c]
                    if t >= 2:
                        g1 = gint[1, k1]
                        rest -= coef[1, k1]
                        if rest < 0 or (h1 == 0 and g1 > 0) or (h1 == 1 and g1 < 0):
                            continue
                    lo, hi = -1, -1      # coordinate 0's smallest and largest value in half h0 within rest
                    for k in range(nk[0]):
                        g = gint[0, k]
                        if coef[0, k] <= rest and ((h0 == 0 and g <= 0) or (h0 == 1 and g >= 0)):
                            if lo < 0 or g < gint[0, lo]:
                                lo = k
                            if hi < 0 or g > gint[0, hi]:
                                hi = k
                    if lo < 0:
                        continue
                    if t < 2:
                        for r in range(rows):
                            best[r] = max(sp0[lo, r], sp0[hi, r])
                    elif not found[t]:
                        for r in range(rows):
                            best[r] = sp1[k1, r] + max(sp0[lo, r], sp0[hi, r])
                    else:
                        for r in range(rows):
                            best[r] = max(best[r], sp1[k1, r] + max(sp0[lo, r], sp0[hi, r]))
                    found[t] = True
                if found[t]:
                    out = half[t, c] if t < 2 else quarter[t - 2, c]
                    for r in range(rows):
                        out[r] = thr - best[r] if pos[r] else thr + best[r]
            for t in range(tables):
                if not found[t]:
                    other = -1
                    for t2 in range(0 if t < 2 else 2, 2 if t < 2 else 6):
                        if found[t2]:
                            other = t2
                    out = half[t, c] if t < 2 else quarter[t - 2, c]
                    src = half[max(other, 0), c] if other < 2 else quarter[other - 2, c]
                    for r in range(rows):
                        out[r] = src[r] if other >= 0 else thr
        return half, quarter

    return split_bounds


_split_bounds_kernel = lazy_kernel(_build_split_bounds_kernel)

#: The most records (summed over the distinct rows) :class:`BoundedArgmax` searches: its kernel
#: counts each point's rows in int32, wrapping (twice the vector lanes of int64, about a
#: quarter off the search's time), which is exact whenever the true count, between minus the
#: negative and plus the positive labels, fits in int32 (two's complement sums are exact
#: modulo 2^32 whatever the order).
_MOST_RECORDS = 2**31 - 1

#: Points per block of the noise's block maxima (:class:`BoundedArgmax`).
_NOISE_BLOCK = 64
#: The fewest points of a subtree whose loss bound :class:`BoundedArgmax` computes (a pass over
#: the rows, as scoring one point); a smaller subtree inherits its parent's bound.
_MIN_BOUND_POINTS = 2


@dataclass(frozen=True)
class NoisyArgmax:
    """What :meth:`BoundedArgmax.best` found: the largest key ``-L(w)/scale +
    noise`` over W (the first of equal keys in the enumeration's order), the
    point ``w``, its position ``index`` in that order (``-inf``, -1 and None
    when no key is above the floor), ``points_scored``, how many points had
    their loss computed (the others were bounded away), and
    ``nodes_bounded``, how many subtrees had their bound computed."""

    key: float
    index: int
    point: np.ndarray | None
    points_scored: int
    nodes_bounded: int


class BoundedArgmax:
    """Report-noisy-max over W_tau of a 0/1 model without scoring every point.

    Given the noise of every point of W in the enumeration's order (drawn
    before, in one call), it returns the same point as scoring every point and
    taking the first largest key ``noise - L(w) / scale``, but walks the
    enumeration's tree (the last coordinate most significant) depth first and
    leaves out a subtree when its largest noise minus a lower bound on its
    losses, divided by ``scale``, is below the best key found so far, or at or
    below ``floor``: no point in it could be released.  The lower bound counts
    the rows that are misclassified whatever values the free coordinates take
    in their grids (:func:`_thresholds`); where one or two coordinates are
    free, the smallest such count over the halves of their values, <= 0 and
    >= 0 (:func:`_split_thresholds`: a row predicted +1 only by values of one
    sign is counted right in that half alone), at level 2 only for a node the
    plain bound does not prune; a point is scored only if its noise less its
    half's bound may still win; the losses and keys it does compute are those of
    :class:`IntegerLattice` (exact integers, the same float64 numbers), so
    every seed releases the same point.  Built by :meth:`of` where the integer
    scorer applies and numba is installed, else None."""

    def __init__(self, data, coef, bound, kernel):
        lattice = IntegerLattice.__new__(IntegerLattice)
        IntegerLattice.__init__(lattice, data, None)
        # a row with as many positive as negative labels adds 0 to every count: left out of the passes
        kept = lattice.diff != 0
        self.xt, self.diff = np.ascontiguousarray(lattice.xt[:, kept]), lattice.diff[kept]
        self.total_pos, self.thr = lattice.total_pos, lattice.thr
        tables = _grid_tables(tuple(tuple(float(v) for v in g) for g in data.grid),
                              tuple(tuple(int(u) for u in c) for c in coef), int(bound))
        self.gint, self.coef, self.nk, self.counts, self.grid = tables
        d = len(self.grid)
        self.n_points = int(self.counts[d, int(bound)])
        score = _score_dtype(self.xt, self.gint, self.thr)
        bucket, tsel = _bound_thresholds(self.xt, self.diff, self.gint, self.coef, self._valid(), int(bound),
                                         self.nk, int(self.thr), score)
        self.bound = int(bound)
        self.min_bound = _MIN_BOUND_POINTS
        self.kernel = kernel
        leaf = self.thr - self.gint[0][:, None] * self.xt[0][None, :]
        self._lattice = _Lattice(self.xt.astype(score), self.diff.astype(_score_dtype(self.diff[None, :])),
                                 int(self.total_pos), int(self.thr))
        half, quarter = _split_thresholds(self.xt, self.diff, self.gint, self.coef, self.nk, bucket, self.thr, score)
        self._tree = _Tree(self.gint, self.nk, self.coef, self.counts, bucket, tsel, half, quarter,
                           leaf.astype(score), self.bound, self.min_bound)

    def _valid(self):
        return np.arange(self.gint.shape[1])[None, :] < self.nk[:, None]

    @classmethod
    def of(cls, data, coef, bound):
        """The branch and bound for this enumeration data and levels, or None
        where the integer scorer does not apply (:meth:`IntegerLattice.of`) or the data
        holds more than :data:`_MOST_RECORDS` records."""
        if IntegerLattice.of(data) is None or len(data.grid) == 0:
            return None
        if int(np.sum(data.pos)) + int(np.sum(data.neg)) > _MOST_RECORDS:
            return None     # the kernel's int32 counts (below) would not hold every sum exactly
        kernel = _argmax_kernel()
        return None if kernel is None else cls(data, coef, bound, kernel)

    def best(self, noise, scale: float, floor: float | None = None) -> NoisyArgmax:
        """The first largest key ``noise[i] - L(w_i) / scale`` over W (``noise``:
        one number per point, in the enumeration's order); ``point`` None when
        no key is above ``floor``."""
        noise = np.ascontiguousarray(noise, dtype=np.float64)
        if noise.shape != (self.n_points,):
            raise ValueError(f"noise: expected {self.n_points} numbers, one per point of W")
        noisy = _Noise(noise, _block_maxima(noise, _NOISE_BLOCK), _NOISE_BLOCK, float(scale),
                       0.0 if floor is None else float(floor), floor is not None)
        parts = self.threads()
        run = functools.partial(self._search, noisy, parts=parts)
        found = map_on_kernel_threads(run, range(parts))
        # the largest key; of equal keys, the first in the enumeration's order (each part's is its first)
        (key, index, _, _), best_k = max(found, key=lambda f: (f[0].key, -f[0].position))
        scored, bounded = sum(f[0].scored for f in found), sum(f[0].bounded for f in found)
        if index < 0 or (floor is not None and key <= floor):
            return NoisyArgmax(-math.inf, -1, None, int(scored), int(bounded))
        point = np.array([g[k] for g, k in zip(self.grid, best_k)], dtype=np.float64)
        return NoisyArgmax(float(key), int(index), point, int(scored), int(bounded))

    def threads(self) -> int:
        """Threads :meth:`best` searches with: one per :data:`_THREAD_MIN_POINT_ROWS` of
        points x rows, at most :func:`privopt._runtime.kernel_threads`; one where W has one
        coordinate (the threads take turns over the subtrees below the last two)."""
        if len(self.grid) < 2:
            return 1
        work = self.n_points * self.xt.shape[1]
        return int(max(1, min(kernel_threads(), work // _THREAD_MIN_POINT_ROWS)))

    def _search(self, noisy, part: int, parts: int) -> tuple[_Found, np.ndarray]:
        """The kernel over one thread's share of the subtrees: (what it found, the grid index
        of each coordinate of its best point)."""
        best_k = np.zeros(len(self.grid), dtype=np.int64)
        split = max(1, len(self.grid) - 2)      # the subtrees below coordinates d-1 and d-2 (d-1 alone if d = 2)
        return _Found(*self.kernel(self._lattice, self._tree, noisy, best_k, part, parts, split)), best_k


class _GridTables(NamedTuple):
    """What :class:`BoundedArgmax` reads of W alone (public: its grid, levels and ball)."""

    gint: np.ndarray         #: (d, width) int64 grid values (0 past a coordinate's values)
    coef: np.ndarray         #: (d, width) squared-norm units (bound + 1 past a coordinate's values)
    nk: np.ndarray           #: grid size of each coordinate
    counts: np.ndarray       #: (d + 1, bound + 1) points with coordinates < j within each budget, capped at 2^62
    grid: tuple              #: each coordinate's values, float64


@functools.lru_cache(maxsize=64)
def _grid_tables(grid: tuple, coef: tuple, bound: int) -> _GridTables:
    """The :class:`_GridTables` of a grid (one tuple of values per coordinate), its squared
    norms in units and the ball's bound, read-only, worked out once per process for each (a
    default fit's ladder asks for the same W's at every fit)."""
    d, width = len(grid), max(len(g) for g in grid)
    gint = np.zeros((d, width), dtype=np.int64)
    units = np.full((d, width), bound + 1, dtype=np.int64)
    for j, g in enumerate(grid):
        gint[j, :len(g)] = np.asarray(g, dtype=np.float64).astype(np.int64)
        units[j, :len(g)] = np.asarray(coef[j], dtype=np.int64)
    cap = 2 ** 62
    counts = np.array([[min(int(v), cap) for v in row] for row in prefix_counts(coef, bound)], dtype=np.int64)
    sizes = np.array([len(g) for g in grid], dtype=np.int64)
    values = tuple(np.asarray(g, dtype=np.float64) for g in grid)
    for a in (gint, units, sizes, counts, *values):
        a.flags.writeable = False
    return _GridTables(gint, units, sizes, counts, values)


def _thresholds(thr: int, diff: np.ndarray, fmin: np.ndarray, fmax: np.ndarray, score) -> np.ndarray:
    """The one table of thresholds the branch and bound compares a row's partial score s
    with: ``thr - fmax`` where the row's ``diff`` > 0, ``thr - fmin`` where it is < 0, in
    the score type ``score`` (which holds it, :func:`_score_dtype`); into ``fmin`` itself
    where it already has that type (the tables are made for this one use).

    Row r's part of a node's count is ``diff[r]`` times 1 if the row is predicted +1 by
    some point below the node when ``diff[r] > 0`` (s + fmax >= thr: it may be right), by
    every point below when ``diff[r] < 0`` (s + fmin >= thr: it must be wrong), else 0:
    in both cases ``diff[r] * [s >= tsel[r]]``, one comparison a row."""
    positive = np.asarray(diff) > 0
    if fmin.dtype != np.dtype(score):
        return (thr - np.where(positive[None, None, :], fmax, fmin)).astype(score)
    # fmax * 1 + fmin * 0 where positive, fmax * 0 + fmin * 1 elsewhere: in place, without a mask
    # broadcast over the tables (numpy's masked copy is ten times slower)
    np.multiply(fmax, positive.astype(fmax.dtype), out=fmax)
    np.multiply(fmin, (~positive).astype(fmin.dtype), out=fmin)
    np.add(fmin, fmax, out=fmin)
    return np.subtract(fmin.dtype.type(thr), fmin, out=fmin)


def _split_thresholds(xt, diff, gint, coef, nk, bucket, thr: int, score) -> tuple[np.ndarray, np.ndarray]:
    """``(half, quarter)``: tighter thresholds for the nodes at levels 1 and 2, in the layout
    of :func:`_thresholds` (``thr`` less the partial score bound that counts for each row;
    one column per column of ``bucket``, computed for the largest budget that shares it).

    ``half[h]``: coordinate 0 free within the budget, its values <= 0 (h = 0) or >= 0 (h = 1);
    ``quarter[2 h1 + h0]``: coordinates 0 and 1 free within the budget (the ball), coordinate
    1 in half h1 and 0 in half h0.  Every point below a node lies in one of them, so the
    smallest of their loss bounds is a bound (and no looser than the node's own, whose range
    holds theirs); it is far tighter where rows need coordinate 0 (or 1) of either sign to be
    predicted +1: one bound lets each row take the sign it needs, the halves do not.  Zero
    columns where W has fewer than 2 (3) coordinates."""
    d, rows = xt.shape
    cols = int(bucket[-1]) + 1
    reps = np.searchsorted(bucket, np.arange(cols), side="right") - 1     # the largest budget of each column
    half = np.empty((2, cols if d >= 2 else 0, rows), dtype=score)
    quarter = np.empty((4, cols if d >= 3 else 0, rows), dtype=score)
    pos = np.asarray(diff) > 0
    sx = np.where(pos, 1, -1)[None, :] * np.asarray(xt[:2], dtype=np.int64)     # sign_r x[r, i], i = 0, 1
    sp0 = (gint[0, :nk[0], None] * sx[0][None, :]).astype(score)
    sp1 = (gint[1, :nk[1], None] * sx[1][None, :]).astype(score) if d >= 2 else np.zeros((1, rows), score)
    _split_bounds_kernel()(sp0, sp1, pos, gint, coef, nk, reps.astype(np.int64), int(thr), half, quarter)
    return half, quarter


#: Points x rows of a W per thread of :meth:`BoundedArgmax.best` (a thread's hand-off costs
#: about what scoring a few thousand rows does; 10M point-rows take about half a millisecond).
_THREAD_MIN_POINT_ROWS = 10_000_000


#: The most entries of each of :func:`_partial_score_bounds`' tables (8 bytes each).
_SCORE_BOUND_ENTRIES = 1 << 22


def _score_dtype(xt, gint=None, thr: int = 0) -> type:
    """The narrowest of int16, int32 and int64 that holds every value of ``xt`` and, with
    ``gint``, every partial score ``sum_j x[r, j] w_j`` over any coordinates and any grid
    values and ``thr`` minus any of them: the kernel of :class:`BoundedArgmax` compares these
    in that type (more numbers per vector instruction), exactly, since none of them is out
    of its range."""
    largest = int(np.abs(xt).max(initial=0))
    if gint is not None:
        spans = np.abs(xt).max(axis=1, initial=0) * np.abs(gint).max(axis=1, initial=0)
        largest = max(largest, abs(int(thr)) + int(spans.sum()))
    for kind in (np.int16, np.int32):
        if largest <= np.iinfo(kind).max:
            return kind
    return np.int64


def _bound_thresholds(xt, diff, gint, coef, valid, bound, nk, thr: int, score):
    """``(bucket, tsel)``: :func:`_thresholds` of the kernel's tables of partial score
    bounds: those of the ball (:func:`_ball_score_bounds`, one column per budget) where they
    fit within :data:`_SCORE_BOUND_ENTRIES` entries and numba is installed, else those of
    the box (:func:`_partial_score_bounds`).  Either is a bound on every point below a node,
    so either releases the same point; the ball's are tighter where two or more coordinates
    are free, and leave out more subtrees.  On the ball's path with one knapsack instead of
    two, the same numbers: row r needs only the largest partial score where ``diff[r] > 0``
    and only the smallest where it is < 0, so the knapsack runs once on ``sign_r x[r]``
    (sign_r = +1, -1) and ``tsel = thr - sign_r * (its largest)``."""
    kernel = _ball_bounds_kernel()
    if kernel is None or (xt.shape[0] + 1) * (bound + 1) * max(1, xt.shape[1]) > _SCORE_BOUND_ENTRIES:
        bucket, fmin, fmax = _partial_score_bounds(xt, gint, coef, valid, bound)
        return bucket, _thresholds(thr, diff, fmin, fmax, score)
    sign = np.where(np.asarray(diff) > 0, 1, -1).astype(score)
    tsel = np.zeros((xt.shape[0] + 1, bound + 1, xt.shape[1]), dtype=score)
    kernel(np.ascontiguousarray(sign[None, :] * np.asarray(xt), dtype=score), gint.astype(score), coef, nk,
           int(bound), tsel)
    np.multiply(tsel, sign, out=tsel)
    return np.arange(bound + 1, dtype=np.int64), np.subtract(tsel.dtype.type(thr), tsel, out=tsel)


def _ball_score_bounds(xt, gint, coef, nk, bound, kernel, thr: int = 0, kind=None):
    """``(bucket, fmin, fmax)`` as :func:`_partial_score_bounds` gives them, but exact for
    the ball: ``fmax[j, b, r]`` is the largest score ``sum_{i<j} x[r, i] w_i`` over the
    values of coordinates 0..j-1 whose squared-norm units sum to at most b, by dynamic
    programming over the coordinates (a knapsack: ``fmax[j, b] = max_k fmax[j-1, b -
    coef[j-1, k]] + x[:, j-1] gint[j-1, k]``, ``fmax[0] = 0``), ``fmin`` the smallest; one
    column per budget (``bucket`` the identity).  The box of :func:`_partial_score_bounds`
    lets every free coordinate spend the whole budget; these ranges lie inside it (equal
    for one free coordinate) and still hold every point below a node.  In the narrowest
    integer type that holds every partial score and ``thr`` less any of them (the kernel's
    score type, :func:`_score_dtype`)."""
    d, rows = xt.shape
    if kind is None:
        kind = _score_dtype(xt, gint, thr)      # holds every partial score, and thr less any of them
    fmin = np.zeros((d + 1, bound + 1, rows), dtype=kind)
    fmax = np.zeros((d + 1, bound + 1, rows), dtype=kind)
    kernel(np.ascontiguousarray(xt, dtype=kind), gint.astype(kind), coef, nk, int(bound), fmax)
    kernel(np.ascontiguousarray(-np.asarray(xt), dtype=kind), gint.astype(kind), coef, nk, int(bound), fmin)
    return np.arange(bound + 1, dtype=np.int64), np.negative(fmin, out=fmin), fmax


def _partial_score_bounds(xt, gint, coef, valid, bound):
    """``(bucket, fmin, fmax)``: the smallest and largest score that coordinates 0..j-1
    can add to each row when each of them alone stays within a squared-norm budget b
    (the ball relaxed to a box), for every j and every budget b <= ``bound``, in integer
    units.  A coordinate's range changes only where b reaches one of its ``coef``
    values, so budgets share columns: ``bucket[b]`` is b's column (``fmin[j, bucket[b], r]``),
    that of the largest such value <= b; where the tables would pass
    :data:`_SCORE_BOUND_ENTRIES`, of a larger kept value (a wider range: still a bound)."""
    cap = 2 ** 62
    steps = np.unique(np.concatenate([[0], coef[valid]]))
    steps = steps[steps <= bound]
    column = np.searchsorted(steps, np.arange(bound + 1), side="right") - 1
    most = max(1, _SCORE_BOUND_ENTRIES // (xt.shape[0] + 1) // max(1, xt.shape[1]))
    if len(steps) > most:       # keep `most` steps, the largest among them; each budget takes the next kept one
        kept = np.unique(np.linspace(len(steps) - 1, 0, most).round().astype(np.int64))   # the last among them
        column, steps = np.searchsorted(kept, column, side="left"), steps[kept]
    bucket = column.astype(np.int64)
    allowed = valid[:, None, :] & (coef[:, None, :] <= steps[None, :, None])      # (d, columns, width)
    lo_val = np.where(allowed, gint[:, None, :], cap).min(axis=2)
    hi_val = np.where(allowed, gint[:, None, :], -cap).max(axis=2)
    empty = ~allowed.any(axis=2)      # no value within the budget: no point below, any bound holds
    lo_val[empty], hi_val[empty] = 0, 0
    a, b = xt[:, None, :] * lo_val[:, :, None], xt[:, None, :] * hi_val[:, :, None]
    return bucket, _prefix_sums(np.minimum(a, b)), _prefix_sums(np.maximum(a, b))


def _prefix_sums(terms: np.ndarray) -> np.ndarray:
    """``out[j] = terms[0] + ... + terms[j-1]`` (``out[0] = 0``), int64, contiguous: one
    vectorized addition per coordinate (numpy's cumsum along the first axis of a 3-d array
    is several times slower), the same integers."""
    out = np.empty((terms.shape[0] + 1,) + terms.shape[1:], dtype=np.int64)
    out[0] = 0
    for j in range(terms.shape[0]):
        np.add(out[j], terms[j], out=out[j + 1])
    return out


def _block_maxima(values, block):
    """Sparse table of the maxima of ``values`` in blocks of ``block``: row t
    holds the maximum of 2^t consecutive blocks from each block on (-inf past
    the last block); compiled where numba is installed (:func:`_sparse_table_kernel`),
    else with numpy, the same numbers."""
    nb = len(values) // block
    levels = 1
    while (2 << (levels - 1)) <= nb:
        levels += 1
    kernel = _sparse_table_kernel()
    if kernel is not None and nb:
        return kernel(np.ascontiguousarray(values, dtype=np.float64), block, np.empty((levels, nb)))
    rows = [values[:nb * block].reshape(nb, block).max(axis=1) if nb else np.full(1, -np.inf)]
    while (2 << (len(rows) - 1)) <= nb:
        half = 1 << (len(rows) - 1)
        prev = rows[-1]
        rows.append(np.concatenate([np.maximum(prev[:-half], prev[half:]), np.full(half, -np.inf)]))
    return np.ascontiguousarray(np.vstack(rows))


def _build_sparse_table_kernel(numba):
    """The compiled :func:`_block_maxima` (None without numba)."""

    @numba.njit(cache=True, nogil=True)
    def sparse_table(values, block, out):   # pragma: no cover - compiled
        levels, nb = out.shape
        for i in range(nb):
            top = values[i * block]
            for p in range(i * block + 1, (i + 1) * block):
                top = max(top, values[p])
            out[0, i] = top
        for t in range(1, levels):
            half = 1 << (t - 1)
            for i in range(nb):
                out[t, i] = max(out[t - 1, i], out[t - 1, i + half]) if i + half < nb else -np.inf
        return out

    return sparse_table


_sparse_table_kernel = lazy_kernel(_build_sparse_table_kernel)
