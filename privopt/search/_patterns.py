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

import functools
import math
import threading
from typing import NamedTuple

import numpy as np

from .._lattice import kept_while_alive
from .._limits import KEPT_WORKSPACE_PATTERNS, memory_budget
from .._numba import lazy_kernel
from .._runtime import kernel_threads, map_on_kernel_threads

__all__ = ["pattern_codes", "pattern_counts", "pattern_lower_bounds", "region_minima", "screened_minima",
           "support_values", "Floor",
           "Records", "Points", "Workspace", "records_of", "points_of", "new_workspace"]


def _kernel_module():
    """:mod:`._pattern_kernels`, imported on first use: importing it defines the
    numba kernels (compiled, or loaded from numba's cache, at their first call);
    they live at module level there, which is what lets the cache hit."""
    from . import _pattern_kernels   # lazy: numba (privopt[fast]) and its kernels load only when used

    return _pattern_kernels


def _build_numba_kernel(numba):
    """The compiled kernel of (1) over many supports (compiled on first use,
    or loaded from numba's cache; None without numba)."""
    return _kernel_module().bounds


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
        records = records_of(digits_t, base, np.zeros(1), pos, neg)
        return kernel(records, np.ascontiguousarray(supports, dtype=np.int64), _workspace(j, records, 0))
    out = np.empty(R, dtype=np.int64)
    for r in range(R):
        p, n = pattern_counts(digits_t, base, pos, neg, supports[r])
        out[r] = np.minimum(p, n).sum()
    return out


# ----------------------------------------------------------------------------
# exact region minima of a halfspace objective, from the same histograms
# ----------------------------------------------------------------------------
#
# A halfspace w of support S predicts one label per pattern c of S, so its
# 0/1 loss is a sum over the patterns that occur,
#
#     L(w) = sum_c [<w, x_c> >= theta] neg_c + [<w, x_c> < theta] pos_c,     (2)
#
# with x_c the values of pattern c on S.  Once the histogram of (1) is built,
# (2) costs (patterns that occur) x (points of the region) x |S| operations
# instead of (rows) x (points) x |S|: on one-hot or few-valued data a handful
# of patterns.  The objective is J(v) = L(v) - scale * (<eta_S, v> + e_v) / den
# (OPDisc's perturbed oracle; scale = 0 gives the loss itself).


def _build_minima_kernels(numba):
    """The compiled kernels of (2) (:mod:`._pattern_kernels`): ``minima`` (many supports:
    minimum and its point, or the bound (1) where (2) would cost more than ``budget``),
    ``one_support`` (every point's loss and objective), the two screening kernels and
    ``floor_minima`` (``minima`` leaving a region its bound where that settles the
    sampler's test)."""
    kernels = _kernel_module()
    return kernels.minima, kernels.one_support, kernels.screened_minima, kernels.screened_rows, kernels.floor_minima


_minima_kernels = lazy_kernel(_build_minima_kernels)

#: (2) is used on a support where (patterns that occur) x (points) <= this
#: times the distinct rows, or <= EXACT_BUDGET_MIN: a support then costs at
#: most a few passes over the rows (it was within noise of the bound alone on
#: the oracle suite's dense sets, and removes nearly every scoring of a
#: support on one-hot ones).
EXACT_BUDGET_PER_ROW = 4.0
EXACT_BUDGET_MIN = 4096


class Records(NamedTuple):
    """The distinct rows, as digits, with their label counts (what the kernels read of the data)."""

    digits_t: np.ndarray     #: (d, rows) int64: the index in ``values`` of each entry
    values: np.ndarray       #: float64: the distinct entries
    pos: np.ndarray          #: int64: positive records of each row
    neg: np.ndarray          #: int64: negative records of each row
    base: int                #: len(values) (at least 1)


def records_of(digits_t, base, values, pos, neg) -> Records:
    """A :class:`Records` with the dtypes and layout the kernels read."""
    return Records(np.ascontiguousarray(digits_t, dtype=np.int64), np.asarray(values, dtype=np.float64),
                   np.asarray(pos, dtype=np.int64), np.asarray(neg, dtype=np.int64), int(base))


class Points(NamedTuple):
    """The points of the regions of one support size (values on the support)
    and the objective J(v) = L(v) - scale * (<noise_S, v> + extra_v) / den
    (scale = 0: the loss itself)."""

    V: np.ndarray            #: (P, j) float64
    Vt: np.ndarray           #: (j, P) contiguous: float32 where every score is exact in it, else float64
    theta: float             #: positive iff <w, x> >= theta
    noise: np.ndarray        #: float64 per coordinate of w
    extra: np.ndarray        #: float64 per point
    scale: float
    den: float


def points_of(V, theta, noise, extra, scale=0.0, den=1.0, values=None, float32: bool | None = None) -> Points:
    """A :class:`Points` with the dtypes and layout the kernels read; with the records'
    ``values``, the scores are computed in float32 where :func:`float32_exact` says every
    one of them is exact there (twice the numbers per vector instruction, the same
    scores, so the same losses), else in float64 (``float32``: that answer, where the
    caller has it already)."""
    V = np.ascontiguousarray(V, dtype=np.float64)
    if float32 is None:
        float32 = values is not None and float32_exact(values, V)
    dtype = np.float32 if float32 else np.float64
    return Points(V, np.ascontiguousarray(V.T, dtype=dtype), float(theta), np.asarray(noise, dtype=np.float64),
                  np.asarray(extra, dtype=np.float64), float(scale), float(den))


#: Scores up to this size (in units of the values' and points' common power-of-two step) are exact in float32.
_FLOAT32_EXACT = 2 ** 24


def _dyadic_exponent(x, most: int = 8) -> int | None:
    """The smallest a <= ``most`` with every entry of ``x`` times 2**a an integer, or None
    (every a tried at once: one array operation, not one per a)."""
    y = np.asarray(x, dtype=np.float64).reshape(1, -1) * (2.0 ** np.arange(most + 1))[:, None]
    ok = np.all(np.isfinite(y) & (y == np.round(y)), axis=1)
    return int(np.argmax(ok)) if ok.any() else None


def float32_exact(values, V) -> bool:
    """Whether every partial sum of every score <x, v> (x with entries in ``values``, v a
    row of ``V``) is exact in float32: both are multiples of powers of two (2**-a, 2**-b)
    and the largest sum in units of 2**-(a + b) is below 2**24, so each product and each
    sum in the kernels' order is an integer multiple of that unit that float32 holds
    exactly."""
    V = np.asarray(V, dtype=np.float64)
    (a, top), (b, row_sum) = _values_scale(values), _points_scale(V)
    if a is None or b is None or V.size == 0:
        return False
    largest = top * row_sum
    return largest * 2.0 ** (a + b) < _FLOAT32_EXACT


#: :func:`_values_scale` of read-only value lists still alive (the records' distinct values, which
#: the W's on one feature matrix share), each dropped when its array is collected, so nothing of
#: the data outlives the fit that read it (:func:`privopt._lattice.kept_while_alive`).
_VALUE_SCALES: dict = {}


def _values_scale(values) -> tuple[int | None, float]:
    """``(dyadic exponent, largest |value|)`` of the records' values, worked out once for a
    read-only array (whose entries cannot change), else at each call."""
    def make():
        return _dyadic_exponent(values), float(np.max(np.abs(values), initial=0.0))

    if isinstance(values, np.ndarray) and not values.flags.writeable:
        return kept_while_alive(_VALUE_SCALES, values, None, make)
    return make()


#: :func:`_points_scale` of read-only point lists still alive (the support points every W of a
#: grid shares), each dropped when its array is collected (:func:`privopt._lattice.kept_while_alive`).
_SCALES: dict = {}


def _points_scale(V: np.ndarray) -> tuple[int | None, float]:
    """``(dyadic exponent, largest row sum of |v|)`` of the points ``V`` (public: W's grid
    and ball), worked out once for a read-only ``V`` (whose entries cannot change), else at
    each call."""
    def make():
        return _dyadic_exponent(V), float(np.abs(V).sum(axis=1).max()) if V.size else 0.0

    if V.flags.writeable:
        return make()
    return kept_while_alive(_SCALES, V, None, make)


class Workspace(NamedTuple):
    """Scratch arrays of the histogram of one support size (a pattern's entry counts only
    under the stamp of the histogram that wrote it, so nothing is cleared after a use)."""

    codes: np.ndarray        #: (j, rows) partial pattern codes of the current support's prefixes
    mult: np.ndarray         #: base ** level
    prev: np.ndarray         #: the previous support (its prefix is reused)
    counts: np.ndarray       #: (base ** j, 3): stamp of the histogram that last counted a pattern, pos, neg
    stamp: np.ndarray        #: (1,) the stamp of the last histogram (entries with an older one count as empty)
    occ: np.ndarray          #: the codes that occur
    first_row: np.ndarray    #: the first row of each code that occurs (in the order of occ)
    xs: np.ndarray           #: a pattern's values (j), in the dtype of Points.Vt
    sc: np.ndarray           #: the scores of the points on one pattern (P), in the dtype of Points.Vt
    loss: np.ndarray         #: the points' losses (P)
    pert: np.ndarray         #: the points' perturbation terms (P)


#: Per thread: the workspaces of :func:`region_minima` and :func:`support_values` by shape
#: (a few, most recent last).
_WORKSPACES = threading.local()
_KEPT_WORKSPACES = 64

#: The most bytes of histogram tables (``Workspace.counts``) kept per thread.
_KEPT_WORKSPACE_BYTES = 128 << 20


def new_workspace(j: int, base: int, rows: int, n_points: int, dtype=np.float64) -> Workspace:
    """A cleared :class:`Workspace` for supports of size j, its scores in ``dtype`` (that
    of :attr:`Points.Vt`; made here, not in a kernel: one compiled function fewer to load
    in a fresh process)."""
    mult = np.ones(j, np.int64)
    for lev in range(1, j):
        mult[lev] = mult[lev - 1] * base
    return Workspace(np.zeros((j, rows), np.int64), mult, np.full(j, -1, np.int64),
                     np.zeros((int(base) ** j, 3), np.int64), np.zeros(1, np.int64), np.zeros(rows, np.int64),
                     np.zeros(rows, np.int64),
                     np.zeros(j, dtype), np.zeros(n_points, dtype), np.zeros(n_points, np.int64),
                     np.zeros(n_points, np.float64))


def _workspace(j: int, records: Records, n_points: int, dtype=np.float64) -> Workspace:
    """A workspace of this shape and score dtype for this thread, made once and reused
    (each histogram counts under a new stamp, so no call reads what an earlier one left)."""
    kept = getattr(_WORKSPACES, "by_shape", None)
    if kept is None:
        kept = _WORKSPACES.by_shape = {}
    key = (j, records.base, records.digits_t.shape[1], n_points, np.dtype(dtype))
    ws = kept.pop(key, None)
    if ws is None:
        ws = new_workspace(*key)
        if records.base ** j > KEPT_WORKSPACE_PATTERNS:
            return ws                         # a large one is not held once its call is done
        while kept and (len(kept) >= _KEPT_WORKSPACES or sum(w.counts.nbytes for w in kept.values())
                        + ws.counts.nbytes > _KEPT_WORKSPACE_BYTES):
            kept.pop(next(iter(kept)))
    kept[key] = ws
    return ws


def _empty_support(records: Records, points: Points):
    """(loss, J) of the single point of the empty support (w = 0: score 0)."""
    wrong = int(np.sum(records.neg)) if 0.0 >= points.theta else int(np.sum(records.pos))
    loss = np.full(points.V.shape[0], wrong, dtype=np.int64)
    return loss, loss - points.scale * (points.extra / points.den)


class Floor(NamedTuple):
    """What the sampler knows when it bounds a shard's regions (:func:`region_minima`): the
    best key so far, each region's noise maximum, and its test's scale and slack
    (:func:`privopt.search._topdown.sample_shard`)."""

    region_max: np.ndarray   #: float64, one per support
    best_key: float
    key_scale: float
    slack: float

    def of_part(self, a: int, b: int) -> Floor:
        """The floor of the supports ``a:b`` as the compiled kernels take it: the noise
        maxima a contiguous float64 array, the test's numbers Python floats (one
        compiled signature whatever the caller passed)."""
        return Floor(np.ascontiguousarray(self.region_max[a:b], dtype=np.float64), float(self.best_key),
                     float(self.key_scale), float(self.slack))

    def restricted(self, part) -> Floor:
        """The floor of the supports ``part`` selects (a mask or indices of them): their
        noise maxima, the same best key and test."""
        return self._replace(region_max=self.region_max[part])


def region_minima(records: Records, supports, points: Points, budget=None, ceiling=np.inf, prune=False,
                  use_numba=True, stop_early=False, floor: Floor | None = None):
    """For each support (rows of ``supports``, all of one size, sorted
    lexicographically) and the points of ``points``: ``(val, exact, arg)``.
    Where ``exact``, ``val`` is the minimum of J over the region and ``arg``
    its first minimizing point, from (2); elsewhere ``val`` is the bound (1)
    minus ``scale`` times the largest perturbation term and ``arg`` is -1.
    (2) is used where (patterns that occur) x (points) <= ``budget``
    (default: :data:`EXACT_BUDGET_PER_ROW` times the distinct rows, at least
    :data:`EXACT_BUDGET_MIN`) and the bound is at most ``ceiling`` (a value
    already attained; with ``prune`` the smallest exact value of the supports
    before it in the same call joins it), so a support that cannot reach the
    ceiling is left with its bound, which is then all a branch and bound
    needs of it.  With ``stop_early``, a support's histogram stops as soon as
    its patterns pass what ``budget`` allows (2) for: its bound is then (1)
    over the rows counted so far, still a lower bound (the exact values are
    the same).  With a ``floor`` (the sampler's best key so far and each region's noise
    maximum, :class:`Floor`; no ``ceiling`` or ``prune`` then), a region whose bound
    already settles the sampler's test against it is left with that bound, its histogram
    stopped as soon as the rows counted settle it (``floor_minima`` of
    :mod:`._pattern_kernels`); every other entry is the same.  Without numba every entry
    is a bound."""
    supports = np.asarray(supports, dtype=np.int64)
    R, j = supports.shape
    if R == 0:
        return np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    if j == 0:
        _, J = _empty_support(records, points)
        p = int(np.argmin(J))
        return np.full(R, J[p]), np.ones(R, dtype=bool), np.full(R, p, dtype=np.int64)
    kernels = _minima_kernels() if use_numba else None
    if kernels is None:
        lb = pattern_lower_bounds(records.digits_t, records.base, records.pos, records.neg, supports,
                                  use_numba=use_numba)
        pert = (points.noise[supports] @ points.V.T + points.extra[None, :]) / points.den
        return lb - points.scale * pert.max(axis=1), np.zeros(R, dtype=bool), np.full(R, -1, dtype=np.int64)
    if budget is None:
        budget = max(EXACT_BUDGET_MIN, int(EXACT_BUDGET_PER_ROW * records.digits_t.shape[1]))
    supports = np.ascontiguousarray(supports)
    if floor is None:
        run = functools.partial(_minima_part, kernels[0], records, points, int(budget), float(ceiling), bool(prune),
                                bool(stop_early), supports)
    else:
        run = functools.partial(_floor_part, kernels[4], records, points, int(budget), bool(stop_early), supports,
                                floor)
    parts = _thread_parts(R, j, records, prune)
    if len(parts) == 1:
        return run(parts[0])
    results = map_on_kernel_threads(run, parts)
    return tuple(np.concatenate(col) for col in zip(*results))



def screened_minima(records: Records, supports, points: Points, region_max, best_key: float, key_scale: float,
                    slack: float, by_rows=None):
    """For each support (rows of ``supports``, all of one size, sorted lexicographically):
    ``(val, exact)``: the exact minimum of J over its region (``exact``), or a lower bound
    on it that already shows that the region cannot hold a key at or above ``best_key``:
    ``upper = region_max - val / key_scale`` is below ``best_key - slack (1 + |upper| +
    |best_key|)``, the sampler's test (:func:`privopt.search._topdown.sample_shard`).  Each
    point's loss (2) is a sum of nonnegative counts, so the smallest partial sum after some
    of them is a lower bound on the region's minimum, and the rest are not visited once it
    settles the test: summed over the patterns (after a histogram of the rows) or, for the
    supports that ``by_rows`` marks (a boolean per support: those whose rows' patterns may
    be nearly all distinct), over the rows themselves in the fixed order of
    :func:`row_order`, without a histogram.  Needs numba (None without it)."""
    supports = np.ascontiguousarray(supports, dtype=np.int64)
    R, j = supports.shape
    kernels = _minima_kernels()
    if kernels is None or j == 0 or R == 0:
        return None
    floor = Floor(np.ascontiguousarray(region_max, dtype=np.float64), float(best_key), float(key_scale),
                  float(slack))
    rows = np.zeros(R, dtype=bool) if by_rows is None else np.asarray(by_rows, dtype=bool)
    if rows.all() or not rows.any():        # one kernel for all of them: no copies of a part
        return _screened_part(kernels, records, supports, points, floor, bool(rows.any()))
    val, exact = np.empty(R), np.zeros(R, dtype=bool)
    for use_rows in (False, True):
        chosen = np.flatnonzero(rows == use_rows)
        if len(chosen):
            val[chosen], exact[chosen] = _screened_part(kernels, records, np.ascontiguousarray(supports[chosen]),
                                                        points, floor.restricted(chosen), use_rows)
    return val, exact


def _screened_part(kernels, records, supports, points, floor: Floor, by_rows: bool):
    """One of the two screening kernels on some supports, split over threads where the work is large."""
    R, j = supports.shape
    ordered = ordered_rows(records, points.Vt.dtype) if by_rows else None

    def run(part):
        a, b = part
        ws = _workspace(j, records, points.V.shape[0], points.Vt.dtype)
        args = (supports[a:b], points, floor.of_part(a, b))
        if by_rows:
            return kernels[3](*args, ordered, row_block(records.digits_t.shape[1]), score_tree(points),
                              score_threshold(points), ws)
        return kernels[2](records, *args, ws)

    parts = _thread_parts(R, j, records, False, points.V.shape[0] * j, SCREEN_THREAD_MIN_WORK)
    if len(parts) == 1:
        return run(parts[0])
    return tuple(np.concatenate(col) for col in zip(*map_on_kernel_threads(run, parts)))


#: The :func:`ordered_rows` of records still alive (by identity of their ``digits_t``) and dtype.
#: Rows of the private data: an entry holds no reference to its records and is dropped when
#: they are collected (:func:`privopt._lattice.kept_while_alive`), so nothing of the data
#: outlives the fit that read it.
_ORDERED: dict = {}


def ordered_rows(records: Records, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, pos, diff)``: the distinct rows in the order of :func:`row_order`, as their
    values (d, rows) in ``dtype`` (that of :attr:`Points.Vt`: the same numbers the
    histogram's kernels score with), positive labels, and negative minus positive labels
    (int32 where a block's sum of them cannot overflow it, :func:`_difference_dtype`: with
    float32 scores, eight lanes of each in a vector register; else int64); made once per
    records and dtype (:func:`screened_minima` by rows reads them in runs)."""
    digits = records.digits_t

    def make():
        order = row_order(digits.shape[1])
        x = np.ascontiguousarray(records.values[digits[:, order]].astype(dtype))
        diff = records.neg[order] - records.pos[order]
        return (x, np.ascontiguousarray(records.pos[order]),
                np.ascontiguousarray(diff.astype(_difference_dtype(diff))))

    return kept_while_alive(_ORDERED, digits, np.dtype(dtype).str, make)


def _difference_dtype(diff: np.ndarray):
    """int32 where the sum of any :data:`ROW_BLOCK_MAX` of the label differences ``diff`` (and
    every partial sum) fits in it, else int64."""
    top = int(np.max(np.abs(diff), initial=0))
    return np.int32 if top * ROW_BLOCK_MAX < 2 ** 31 else np.int64


def score_threshold(points: Points):
    """theta in the dtype of the scores (:attr:`Points.Vt`): the smallest number of that dtype
    at or above it, so that a score s of that dtype has s >= theta exactly when s >= the
    threshold (both ways: a score at or above theta is one such number, hence at or above
    the smallest; one at or above the smallest is at or above theta)."""
    kind = points.Vt.dtype.type
    with np.errstate(over="ignore"):        # beyond the dtype's range: +-inf, which compares as theta does
        t = kind(points.theta)
    if float(t) < float(points.theta):      # in float64 (numpy would compare a float32 with a float in float32)
        t = np.nextafter(t, kind(np.inf))
    return t


#: The :func:`score_tree` of Points still alive: by identity of their ``V`` and the dtype of
#: their ``Vt`` where ``V`` is read-only (the support points of W's grid and ball, public, which
#: every fit on the same W reads again), else by identity of their ``Vt`` (which the kernels only
#: read); each entry dropped when its array is collected (:func:`privopt._lattice.kept_while_alive`).
_TREES: dict = {}


def score_tree(points: Points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(depth, value, point)`` per node of the prefix tree of the points (rows of
    ``points.V`` sorted lexicographically), in depth-first order: each node is one
    prefix (v_0..v_depth) of some points, ``value`` its last entry (in the dtype of
    ``points.Vt``), ``point`` the point it completes (-1 for an inner node).  Listed
    once per read-only ``V`` and score dtype (W's public support points, which every fit
    on the same W reads again), else once per Points; e.g. the 4 points (1, 1), (1, 2),
    (2, 1), (-1, 1) give the nodes (0, -1), (1, 1: point 3), (0, 1), (1, 1: point 0),
    (1, 2: point 1), (0, 2), (1, 1: point 2)."""
    anchor = points.V if not points.V.flags.writeable else points.Vt
    return kept_while_alive(_TREES, anchor, points.Vt.dtype.str, functools.partial(_score_tree, points))


def _score_tree(points: Points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`score_tree` worked out."""
    V = points.V
    P, j = V.shape
    ranks = np.lexsort(V.T[::-1]) if P else np.zeros(0, dtype=np.int64)
    # a point's nodes are its levels from the first where it differs from the point before it in
    # this order (0 for the first; a repeated point still gets its own leaf, at level j - 1)
    first = np.zeros(P, dtype=np.int64)
    if P > 1 and j > 0:
        same = V[ranks[1:]] == V[ranks[:-1]]
        first[1:] = np.minimum(np.where(same.all(axis=1), j, np.argmin(same, axis=1)), j - 1)
    owner = np.repeat(np.arange(P), j - first)
    starts = np.cumsum(j - first) - (j - first)
    depth = first[owner] + np.arange(len(owner)) - starts[owner]
    point = np.where(depth == j - 1, ranks[owner], -1)
    tree = (depth.astype(np.int64), np.ascontiguousarray(V[ranks[owner], depth], dtype=points.Vt.dtype),
            point.astype(np.int64))
    return tree


#: Fewest and most rows between two tests of :func:`screened_minima` by rows (its ``block``).
ROW_BLOCK_MIN, ROW_BLOCK_MAX = 64, 512


def row_block(m: int) -> int:
    """The rows :func:`screened_minima` counts between two tests when it counts rows: about a
    quarter of them, within [:data:`ROW_BLOCK_MIN`, :data:`ROW_BLOCK_MAX`], a multiple of 16
    (long enough runs for the vector units and few passes over the prefix tree between
    tests, short enough to stop soon after the test is settled).  Measured on the calls of
    warm default fits replayed (eps 1; the same exact values): against a thirty-second of
    the rows, 1,000 x 14 half uniform half binary 50 -> 30 ms of the kernel per fit,
    make_classification 2,000 x 6 9.5 -> 4.7, uniform 2,000 x 6 7.6 -> 4.0, 10,000 x 14
    make_classification 775 -> 644 and uniform 463 -> 372 (512 rows against 304).  It
    decides the work only, never a value or which regions are settled."""
    return int(min(ROW_BLOCK_MAX, max(ROW_BLOCK_MIN, m // 4 // 16 * 16)))


#: The golden ratio's fractional part: the stride of :func:`row_order`.
_GOLDEN = (5 ** 0.5 - 1) / 2


@functools.lru_cache(maxsize=8)
def row_order(m: int) -> np.ndarray:
    """A fixed permutation of range(m) (read-only), ``t -> t * s mod m`` with s the integer
    nearest to m times the golden ratio's fractional part that is prime to m: the order in
    which :func:`screened_minima` counts the rows without a histogram.  The distinct rows
    are listed sorted; this order spreads any first share of them over the whole list, so
    a partial count grows about as the full count's share.  Public (it depends on m
    only), it decides only how soon a region is settled, never its exact value."""
    stride = max(1, round(m * _GOLDEN))
    while math.gcd(stride, m) != 1:
        stride += 1
    order = np.arange(m, dtype=np.int64) * stride % max(m, 1)
    order.flags.writeable = False
    return order


def _minima_part(kernel, records, points, budget, ceiling, prune, stop_early, supports, part):
    """The minima kernel on the supports ``part`` = (first, stop), with this thread's workspace."""
    a, b = part
    ws = _workspace(supports.shape[1], records, points.V.shape[0], points.Vt.dtype)
    return kernel(records, supports[a:b], points, budget, ceiling, prune, ws, stop_early)


def _floor_part(kernel, records, points, budget, stop_early, supports, floor: Floor, part):
    """The minima kernel with a floor (``floor_minima``) on the supports ``part``, with this
    thread's workspace."""
    a, b = part
    ws = _workspace(supports.shape[1], records, points.V.shape[0], points.Vt.dtype)
    return kernel(records, supports[a:b], points, budget, ws, stop_early, floor.of_part(a, b))


#: Supports x rows below which :func:`region_minima` runs in the calling thread alone
#: (a thread's hand-off costs about what a few hundred thousand row visits do).
THREAD_MIN_WORK = 200_000

#: Supports x rows x (points x support size) below which :func:`screened_minima` runs in the
#: calling thread alone: a screening call's work is mostly settled after a share of it, and
#: on a machine shared with other work a second thread waits for a core as long as it saves
#: (about 20 ms of scoring every row of every region).
SCREEN_THREAD_MIN_WORK = 200_000_000


def _thread_parts(n_supports: int, j: int, records: Records, prune: bool, per_support_row: int = 1,
                  min_work: int | None = None) -> list[tuple[int, int]]:
    """Contiguous runs of the supports, one per thread (:func:`privopt._runtime.kernel_threads`),
    each thread with a workspace of its own (at most an eighth of
    :func:`privopt._limits.memory_budget` for all of them): one run where ``prune`` chains
    the supports (each one's minimum lowers the next one's ceiling) or the work (supports x
    rows x ``per_support_row``) is below ``min_work`` per thread (default:
    :data:`THREAD_MIN_WORK`).  Each support's values
    depend on it alone, so the split changes nothing but the time."""
    rows = records.digits_t.shape[1]
    workspace = 24 * float(records.base) ** j + 8 * (j + 2) * rows
    work = n_supports * rows * max(1, int(per_support_row))
    if prune or work < 2 * (min_work or THREAD_MIN_WORK) or n_supports < 2:
        return [(0, n_supports)]        # one thread, whatever the CPUs and the memory
    threads = min(kernel_threads(), max(1, work // (min_work or THREAD_MIN_WORK)), n_supports,
                  max(1, int(memory_budget() / 8 // workspace)))
    edges = np.linspace(0, n_supports, threads + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def support_values(records: Records, support, points: Points, use_numba=True) -> tuple[np.ndarray, np.ndarray]:
    """``(loss, J)`` of every point of one support's region, by (2) (numba)
    or by scoring every row (numpy)."""
    support = np.ascontiguousarray(support, dtype=np.int64)
    if support.shape[0] == 0:
        return _empty_support(records, points)
    kernels = _minima_kernels() if use_numba else None
    if kernels is not None:
        ws = _workspace(support.shape[0], records, points.V.shape[0], points.Vt.dtype)
        return kernels[1](records, support, points, ws)
    X = records.values[records.digits_t[support].T]          # (rows, |S|)
    positive = X @ points.V.T >= points.theta
    loss = (records.pos @ ~positive + records.neg @ positive).astype(np.int64)
    pert = (points.noise[support] @ points.V.T + points.extra) / points.den
    return loss, loss - points.scale * pert
