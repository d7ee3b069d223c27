"""``solver="enumerate"``: the exact argmin over W_tau by vectorized enumeration.

For the 0/1-loss halfspace models of :func:`privopt.models.zero_one_halfspace`
the oracle problem of OPDisc ([NRVW20], Algorithm 1),

    minimize  L(D, w) - scale * <eta, pi(w)>   over  w in W_tau,

W_tau = {w : w_j in grid_j, ||w||_2 <= D}, can be solved without a MILP when
W_tau is small: every point of W_tau is listed (integer arithmetic on the
squared norm, the same levels the Pyomo transformation encodes), the scores
<w, x_k> of every distinct row are computed in blocks by one matrix product,
and the loss is counted exactly with the model's own decision rule
(:mod:`privopt.models.halfspace`).  The answer is the exact minimizer (ties
have probability zero under continuous noise; the first of equal values is
returned), so the report is ``certified_optimal`` with objective = bound.

How large W_tau is depends only on the public grid and D
(:func:`enumeration_size`): with the integer grid {-3..3}^10 and D^2 = 10 it
has 327,829 points; {-5..5}^23 with D^2 = 23 has 2.2e13 (no enumeration: use
a MILP solver), but with D^2 = 4 only 156,953.

It solves only the model privopt built: the builder records the model's
components, and a model with added components, deactivated constraints,
fixed weights or changed weight bounds is refused (a MILP solver solves it
instead).  A constraint whose expression was edited in place is not
detected: edit a model, then solve it with a MILP solver.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyomo.environ as pyo

from .._limits import AUTO_MAX_BOUND_WORK, AUTO_MAX_WORK, ENUMERATE_MAX_POINTS, LOCAL_SECONDS, SPARSE_MAX_PATTERNS
from .._numba import lazy_kernel

from ..exceptions import ModelError, ParameterError
from ..models import ENUMERATION_ATTR
from ..search import (
    HalfspaceData,
    bound_search_work,
    enumeration_levels,
    install_problem,
    perturbed_problem,
    plan_shards,
    search_optimum,
)
from ..space import count_grid_points, iter_grid_blocks, prefix_counts, uniform_grid
from .._runtime import kernel_threads, map_on_kernel_threads, resolve_executor, usable_cpus, worker_count
from ..perturbation import find_perturbation_block, get_noise, perturbation_info
from ._report import RunOutcome

__all__ = [
    "ENUMERATION_ATTR",
    "AUTO_MAX_WORK",
    "AUTO_MAX_BOUND_WORK",
    "choose_solver",
    "enumeration_size",
    "count_grid_points",
    "run_enumeration",
    "iter_grid_blocks",
    "iter_losses",
    "choose_engine",
    "scoring_costs",
    "SparseTables",
    "BoundedArgmax",
    "NoisyArgmax",
]

#: Score entries evaluated per block (rows x points): bounds the memory to a
#: few hundred MB.
_BLOCK_ENTRIES = 8_000_000


def choose_solver(model, fallback: str = "highs", perturbed: bool | None = None) -> str:
    """The solver ``solver="auto"`` means for ``model``: ``"enumerate"`` for a
    model of :func:`privopt.models.zero_one_halfspace` whose oracle problem is
    cheap enough to solve exactly without a MILP, otherwise ``fallback``.

    * Perturbed (OPDisc's and RSPM's oracle; ``perturbed=True``, or the model
      carries the perturbation) on one integer grid: the branch and bound by
      support (:class:`privopt.search._regions.PerturbedHalfspaceProblem`),
      when its bound pass, supports x distinct rows, is at most
      :data:`AUTO_MAX_BOUND_WORK`.
    * Otherwise: every point scored, when the cheaper engine's work
      (:func:`scoring_costs`) is at most :data:`AUTO_MAX_WORK` x (d + 18),
      i.e. grid points x distinct rows <= AUTO_MAX_WORK for the dense engine.

    All give the exact argmin, so the choice changes the time a solve takes,
    never its answer."""
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        return fallback
    if perturbed is None:
        perturbed = find_perturbation_block(model) is not None
    points, rows = enumeration_size(model)
    if perturbed:
        split = bound_search_work(data)
        if split is not None:
            return "enumerate" if split <= AUTO_MAX_BOUND_WORK else fallback
    if points > ENUMERATE_MAX_POINTS:
        return fallback
    d = data.X.shape[1]
    work = points * max(rows, 1) * (d + 18)
    if sparse_applicable(data):
        coef, bound, _, _ = enumeration_levels(data)
        _, sparse = scoring_costs(points, max(rows, 1), d, coef, bound, data.grid, len(np.unique(data.X)))
        if sparse is not None:
            work = min(work, sparse)
    return "enumerate" if work <= AUTO_MAX_WORK * (d + 18) else fallback


def enumeration_size(model) -> tuple[int, int]:
    """(number of grid points in W_tau, number of distinct rows) of a model
    built by :func:`privopt.models.zero_one_halfspace`: the work of
    ``solver="enumerate"`` is about their product times d."""
    data = _data(model)
    coef, bound, _, _ = enumeration_levels(data)
    return count_grid_points(coef, bound), int(data.X.shape[0])


def _data(model) -> HalfspaceData:
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        raise ModelError(
            "solver='enumerate' solves the 0/1-loss models of privopt.models.zero_one_halfspace "
            "only; use a MILP solver (e.g. 'highs') for this model.", "model")
    return data


def check_unchanged(model, data, block):
    """Refuse a model that is not the one the builder made (plus the
    perturbation block): the enumeration would ignore the change."""
    known = set(data.components)
    for comp in model.component_objects((pyo.Constraint, pyo.Objective, pyo.Var, pyo.Block),
                                        active=True, descend_into=False):
        if comp is block:
            continue
        if comp.local_name not in known:
            raise ModelError(
                f"model: it has a component the builder did not make ({comp.local_name!r}); "
                "solver='enumerate' would ignore it. Use a MILP solver for a modified model.", "model")
    for j, v in enumerate(model.w.values()):
        g = data.grid[j]
        if v.fixed or v.lb is None or v.ub is None or v.lb > g[0] + 1e-9 or v.ub < g[-1] - 1e-9:
            raise ModelError(
                f"model: weight w[{j}] was fixed or its bounds changed; solver='enumerate' "
                "enumerates the builder's grid. Use a MILP solver for a modified model.", "model")
    deactivated = sorted({c.parent_component().local_name
                          for c in model.component_data_objects(pyo.Constraint, descend_into=False)
                          if not c.active})
    if deactivated:
        raise ModelError(
            f"model: constraints {deactivated[:3]} are deactivated; solver='enumerate' solves the "
            "model as built. Use a MILP solver for a modified model.", "model")


def block_points_for(rows: int) -> int:
    """Points per scoring block for ``rows`` distinct rows (memory bound)."""
    return max(1, _BLOCK_ENTRIES // max(1, rows))


def choose_engine(data, coef, bound, n_points=None) -> str:
    """``"sparse"`` or ``"dense"``: the engine with the smaller work estimate
    (:func:`scoring_costs`) for this model.  Both return the same losses in
    the same order, so the choice changes the time only."""
    if not sparse_applicable(data):
        return "dense"
    if n_points is None:
        n_points = count_grid_points(coef, bound)
    X = data.X
    base = len(np.unique(X))
    dense, sparse = scoring_costs(n_points, X.shape[0], X.shape[1], coef, bound, data.grid, base)
    if sparse is None or sparse >= dense:
        return "dense"
    zero = uniform_grid(data.grid).index(0.0)
    umin = min(c for k, c in enumerate(coef[0]) if k != zero)
    kmax = min(X.shape[1], int(bound // umin)) if umin > 0 else X.shape[1]
    return "sparse" if base ** kmax <= SPARSE_MAX_PATTERNS else "dense"


def iter_losses(data, coef, bound, block_points=None, engine="auto"):
    """The exact 0/1 loss of every point of W_tau, streamed: yields
    ``(values, units, losses)`` per block, in the order of
    :func:`iter_grid_blocks`.  ``losses`` is the number of misclassified
    training records minus a constant that does not depend on w (rows with as
    many positive as negative labels are dropped by the model builder).

    ``engine``: ``"dense"`` scores each block by one matrix product with the
    distinct rows; ``"sparse"`` tabulates the losses per support first
    (:class:`SparseTables`); ``"auto"`` takes the cheaper
    (:func:`choose_engine`).  The losses are identical."""
    X = data.X
    if engine == "auto":
        engine = choose_engine(data, coef, bound)
    tables = SparseTables(data, coef, bound) if engine == "sparse" else None
    if block_points is None:
        block_points = (block_points_for(X.shape[0]) if tables is None
                        else max(1, _BLOCK_ENTRIES // (8 * max(1, X.shape[1]))))
    lattice = IntegerLattice.of(data) if tables is None else None
    for vals, units in iter_grid_blocks(data.grid, coef, bound, block_points):
        if tables is not None:
            losses = tables.losses(vals)
        elif lattice is not None:
            losses = lattice.losses(vals)
        else:
            losses = _loss(X @ vals.T, data)
        yield vals, units, losses


def _build_dense_kernel(numba):
    """The compiled dense scorer of :class:`IntegerLattice` (None without numba)."""

    @numba.njit(cache=True)
    def kernel(xt, diff, total_pos, thr, vals, out):   # pragma: no cover - compiled
        # level[j, r] = sum_{i >= j} x[r, i] w_i of the current point; a point that shares
        # coordinates h+1.. with the previous one (the enumeration's order: coordinate 0
        # fastest) updates levels h..1 only, then scores coordinate 0 against every row
        d, rows = xt.shape
        level = np.zeros((d + 1, rows), dtype=np.int64)
        prev = np.zeros(d, dtype=np.int64)
        w = np.zeros(d, dtype=np.int64)
        for p in range(vals.shape[0]):
            for j in range(d):
                w[j] = np.int64(vals[p, j])
            h = d - 1 if p == 0 else 0
            if p > 0:
                for j in range(d - 1, 0, -1):
                    if w[j] != prev[j]:
                        h = j
                        break
            for j in range(h, 0, -1):
                wj = w[j]
                for r in range(rows):
                    level[j, r] = level[j + 1, r] + xt[j, r] * wj
            w0 = w[0]
            acc = np.int64(0)
            for r in range(rows):
                acc += diff[r] * np.int64(level[1, r] + xt[0, r] * w0 >= thr)
            out[p] = np.float64(total_pos - acc)
            for j in range(d):
                prev[j] = w[j]

    return kernel


_dense_kernel = lazy_kernel(_build_dense_kernel)

#: Largest |score| the integer scorer accepts: every <w, x> and every partial sum is then
#: an exact integer in int64 and in float64 (whose comparison with theta numpy makes).
_MAX_INTEGER_SCORE = 2 ** 52


class IntegerLattice:
    """The dense engine's losses in exact integer arithmetic, compiled.

    Where the rule is exact and every feature value and grid value is an
    integer, every score <w, x> is an integer, so ``score >= theta`` is
    ``score >= ceil(theta)`` and the loss is ``sum(pos) - sum of (pos - neg)
    over the rows predicted +1``: integers, the same numbers :func:`_loss`
    computes in floating point from the same comparisons (exact below 2^52).
    The kernel keeps each row's partial score over the coordinates 1..d-1 and
    updates it only where the point changes (consecutive points of the
    enumeration differ mostly in coordinate 0), so a point costs about one
    pass over the rows.  Built by :meth:`of` where it applies and numba is
    installed, else None (the caller takes the numpy path)."""

    def __init__(self, data, kernel):
        X = np.asarray(data.X)
        self.xt = np.ascontiguousarray(X.T.astype(np.int64))
        self.diff = np.asarray(data.pos - data.neg, dtype=np.int64)
        self.total_pos = int(np.asarray(data.pos).sum())
        self.thr = int(math.ceil(data.theta))
        self.kernel = kernel

    @classmethod
    def of(cls, data):
        """The scorer for this enumeration data, or None where it does not apply."""
        if not data.exact or not math.isfinite(data.theta):
            return None
        X = np.asarray(data.X, dtype=np.float64)
        values = np.array([v for g in data.grid for v in g], dtype=np.float64)
        if X.size == 0 or not (np.all(X == np.round(X)) and np.all(values == np.round(values))):
            return None
        largest = float(np.abs(X).sum(axis=1).max()) * float(np.abs(values).max(initial=0.0))
        if largest >= _MAX_INTEGER_SCORE or abs(data.theta) >= _MAX_INTEGER_SCORE:
            return None
        kernel = _dense_kernel()
        return None if kernel is None else cls(data, kernel)

    def losses(self, vals):
        """The loss of every point (row) of ``vals``, in its order: float64, as :func:`_loss`."""
        out = np.empty(vals.shape[0], dtype=np.float64)
        self.kernel(self.xt, self.diff, self.total_pos, self.thr, np.ascontiguousarray(vals, dtype=np.float64),
                    out)
        return out


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
    bucket: np.ndarray       #: budget -> its column of tmin and tmax (:func:`_partial_score_bounds`)
    tmin: np.ndarray         #: (d + 1, columns, rows) thr - the smallest partial score of coordinates < j
    tmax: np.ndarray         #: (d + 1, columns, rows) thr - the largest partial score of coordinates < j
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
    """The compiled branch and bound of :class:`BoundedArgmax` (None without numba)."""

    @numba.njit(cache=True, nogil=True)
    def kernel(lattice, tree, noisy, best_k, part, parts, split):   # pragma: no cover - compiled
        # depth-first over W in the enumeration's order (coordinate d-1 most significant); a node at
        # level j has coordinates j..d-1 fixed (level[j, r]: their part of row r's score) and holds
        # the points [first[j], first[j] + counts[j, budget[j]]) of that order; with parts > 1, only
        # the subtrees at level `split` whose rank is part modulo parts (one thread's share)
        xt, diff, total_pos = lattice.xt, lattice.diff, lattice.total_pos
        gint, nk, coef, counts = tree.gint, tree.nk, tree.coef, tree.counts
        bucket, tmin, tmax, leaf, bound = tree.bucket, tree.tmin, tree.tmax, tree.leaf, tree.bound
        min_bound = tree.min_bound
        noise, table, block = noisy.noise, noisy.table, noisy.block
        scale, floor, has_floor = noisy.scale, noisy.floor, noisy.has_floor
        d, rows = xt.shape
        level = np.zeros((d + 1, rows), dtype=xt.dtype)
        budget = np.zeros(d + 1, dtype=np.int64)
        first = np.zeros(d + 1, dtype=np.int64)
        nxt_k = np.zeros(d + 1, dtype=np.int64)
        nxt_p = np.zeros(d + 1, dtype=np.int64)
        drops = np.zeros(d + 1, dtype=np.float64)
        k0 = nk[0]
        cur = np.zeros(d, dtype=np.int64)
        best, best_p, scored, bounded = -np.inf, np.int64(-1), np.int64(0), np.int64(0)
        rank = np.zeros(d + 1, dtype=np.int64)
        budget[d] = bound
        j, entering = d, True
        while j <= d:
            if entering:
                lo, hi = first[j], first[j] + counts[j, budget[j]]
                if j == d or hi - lo >= min_bound:
                    # lower bound on the loss of every point below: rows predicted +1 (or -1)
                    # whatever the free coordinates 0..j-1 take (each within the node's budget)
                    bounded += 1
                    acc = np.int64(0)
                    b = bucket[budget[j]]
                    for r in range(rows):      # comparisons only, in the arrays' narrow type (SIMD)
                        s, dr = level[j, r], diff[r]
                        acc += dr * ((s >= tmin[j, b, r]) | ((s >= tmax[j, b, r]) & (dr > 0)))
                    drops[j] = np.float64(total_pos - acc) / scale
                else:      # a small subtree: its parent's bound holds for it too
                    drops[j] = drops[j + 1]
                drop = drops[j]
                # the largest noise of [lo, hi): whole blocks from the sparse table, the ends scanned
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
                ub = top - drop
                if ub < best or (has_floor and ub <= floor):
                    j += 1
                    entering = False
                    continue
                if j == 1:
                    p = lo
                    for k in range(k0):
                        if coef[0, k] > budget[1]:
                            continue
                        if noise[p] - drop >= best and not (has_floor and noise[p] - drop <= floor):
                            a = np.int64(0)
                            for r in range(rows):
                                a += diff[r] * (level[1, r] >= leaf[k, r])
                            scored += 1
                            key = noise[p] - np.float64(total_pos - a) / scale
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
            # the next child of node j: coordinate j-1 at its next value with a completion
            c_j = j - 1
            k = nxt_k[j]
            while k < nk[c_j] and (coef[c_j, k] > budget[j] or counts[c_j, budget[j] - coef[c_j, k]] == 0):
                k += 1
            if k >= nk[c_j]:
                j += 1
                entering = False
                continue
            nxt_k[j] = k + 1
            cur[c_j] = k
            budget[c_j] = budget[j] - coef[c_j, k]
            first[c_j] = nxt_p[j]
            nxt_p[j] += counts[c_j, budget[c_j]]
            # another thread's subtree (ranked by its values' indices, not by visit: this thread's
            # pruning must not move it to another thread): node j's next child
            rank[c_j] = rank[j] * nk[c_j] + k
            if parts > 1 and c_j == split and rank[c_j] % parts != part:
                entering = False
                continue
            wk = gint[c_j, k]
            for r in range(rows):
                level[c_j, r] = level[j, r] + xt[c_j, r] * wk
            j = c_j
            entering = True
        return _Found(best, best_p, scored, bounded)

    return kernel


_argmax_kernel = lazy_kernel(_build_argmax_kernel)

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
    in their grids; the losses and keys it does compute are those of
    :class:`IntegerLattice` (exact integers, the same float64 numbers), so
    every seed releases the same point.  Built by :meth:`of` where the integer
    scorer applies and numba is installed, else None."""

    def __init__(self, data, coef, bound, kernel):
        lattice = IntegerLattice.__new__(IntegerLattice)
        IntegerLattice.__init__(lattice, data, None)
        self.xt, self.diff, self.total_pos, self.thr = lattice.xt, lattice.diff, lattice.total_pos, lattice.thr
        d, width = len(data.grid), max(len(g) for g in data.grid)
        self.gint = np.zeros((d, width), dtype=np.int64)
        self.coef = np.full((d, width), int(bound) + 1, dtype=np.int64)
        self.nk = np.array([len(g) for g in data.grid], dtype=np.int64)
        for j, g in enumerate(data.grid):
            self.gint[j, :len(g)] = np.asarray(g, dtype=np.float64).astype(np.int64)
            self.coef[j, :len(g)] = np.asarray(coef[j], dtype=np.int64)
        cap = 2 ** 62
        self.counts = np.array([[min(int(v), cap) for v in row] for row in prefix_counts(coef, int(bound))],
                               dtype=np.int64)
        self.n_points = int(self.counts[d, int(bound)])
        bucket, fmin, fmax = _partial_score_bounds(self.xt, self.gint, self.coef, self._valid(), int(bound))
        self.grid = [np.asarray(g, dtype=np.float64) for g in data.grid]
        self.bound = int(bound)
        self.min_bound = _MIN_BOUND_POINTS
        self.kernel = kernel
        score = _score_dtype(self.xt, self.gint, self.thr)
        leaf = self.thr - self.gint[0][:, None] * self.xt[0][None, :]
        self._lattice = _Lattice(self.xt.astype(score), self.diff.astype(_score_dtype(self.diff[None, :])),
                                 int(self.total_pos), int(self.thr))
        self._tree = _Tree(self.gint, self.nk, self.coef, self.counts, bucket, (self.thr - fmin).astype(score),
                           (self.thr - fmax).astype(score), leaf.astype(score), self.bound, self.min_bound)

    def _valid(self):
        return np.arange(self.gint.shape[1])[None, :] < self.nk[:, None]

    @classmethod
    def of(cls, data, coef, bound):
        """The branch and bound for this enumeration data and levels, or None
        where the integer scorer does not apply (:meth:`IntegerLattice.of`)."""
        if IntegerLattice.of(data) is None or len(data.grid) == 0:
            return None
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
        return self.kernel(self._lattice, self._tree, noisy, best_k, part, parts, split), best_k


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
    zeros = np.zeros((1,) + a.shape[1:], dtype=np.int64)
    fmin = np.concatenate([zeros, np.cumsum(np.minimum(a, b), axis=0)])
    fmax = np.concatenate([zeros, np.cumsum(np.maximum(a, b), axis=0)])
    return bucket, np.ascontiguousarray(fmin), np.ascontiguousarray(fmax)


def _block_maxima(values, block):
    """Sparse table of the maxima of ``values`` in blocks of ``block``: row t
    holds the maximum of 2^t consecutive blocks from each block on."""
    nb = len(values) // block
    rows = [values[:nb * block].reshape(nb, block).max(axis=1) if nb else np.full(1, -np.inf)]
    while (2 << (len(rows) - 1)) <= nb:
        half = 1 << (len(rows) - 1)
        prev = rows[-1]
        rows.append(np.concatenate([np.maximum(prev[:-half], prev[half:]), np.full(half, -np.inf)]))
    return np.ascontiguousarray(np.vstack(rows))


def _loss(S, data):
    """Exact 0/1 loss of every column of the score matrix S (rows x points)."""
    pos, neg = data.pos, data.neg
    if data.exact:
        positive = S >= data.theta                 # +1 iff score >= theta (= t - mu/2)
        return float(pos.sum()) - (pos - neg).astype(np.float64) @ positive
    tol = 1e-9 * (1.0 + abs(data.t_hi))
    wrong_pos = S < data.t_hi - tol                # +1 correct iff score >= t
    wrong_neg = S > data.t_hi - data.mu + tol   # -1 correct iff score <= t - mu
    return pos.astype(np.float64) @ wrong_pos + neg.astype(np.float64) @ wrong_neg


@dataclass(frozen=True)
class EnumerationPlan:
    """What :func:`check_enumerable` found, for :func:`run_enumeration`: the
    halfspace data, the noise vector and its scale, whether pi(w) normalizes
    it, the enumeration levels ``(coef, bound, unit, D)``, the number of
    points of W_tau and ``problem``, the support split of a perturbed model
    for the branch and bound (:func:`privopt.search._regions.perturbed_problem`),
    or None where every point is listed."""

    data: HalfspaceData
    noise: np.ndarray
    scale: float
    normalize: bool
    levels: tuple
    n_points: int
    problem: object | None


def check_enumerable(model, options=None) -> EnumerationPlan:
    """Everything ``solver="enumerate"`` checks before it starts (raises a
    :class:`~privopt.exceptions.ModelError` or ``ParameterError`` naming the
    problem), and the :class:`EnumerationPlan` of the run."""
    data = _data(model)
    opts = dict(options or {})
    max_points = opts.pop("max_points", ENUMERATE_MAX_POINTS)
    if opts:
        raise ParameterError(f"options: solver='enumerate' takes only 'max_points', got {sorted(opts)}.",
                             "options")
    block = find_perturbation_block(model)
    info = perturbation_info(model)
    d = len(data.grid)
    if info is None:
        noise, scale, normalize, norm_bound = np.zeros(d), 0.0, False, None
        objective = model.find_component(data.objective)
        if objective is None or not objective.active:
            raise ModelError("model: its loss objective is not active; solver='enumerate' minimizes it.",
                             "model")
    else:
        if list(info.weight_names) != [v.name for v in model.w.values()]:
            raise ModelError("model: the perturbation is not on the weights w; solver='enumerate' "
                             "needs weights=model.w.", "model")
        noise = get_noise(model)
        scale, normalize, norm_bound = info.scale, info.normalize, info.norm_bound
    check_unchanged(model, data, block)
    levels = enumeration_levels(data, norm_bound)
    n_points = count_grid_points(levels[0], levels[1])
    if info is not None:
        problem = perturbed_problem(data, levels, noise, scale, normalize)
        if problem is not None:      # branch and bound: W_tau is never listed, no max_points
            return EnumerationPlan(data, noise, scale, normalize, levels, n_points, problem)
    if n_points > max_points:
        raise ParameterError(
            f"solver='enumerate': W_tau has {n_points:,} grid points, more than max_points="
            f"{max_points:,}. Use a MILP solver (e.g. 'highs'), a smaller norm_bound or a coarser "
            "grid, or raise options={'max_points': ...}.", "solver")
    return EnumerationPlan(data, noise, scale, normalize, levels, n_points, None)


def run_enumeration(spec, model, *, time_limit, mip_gap, abs_gap, threads, options, plan=None, executor=None):
    """The runner behind ``solve(model, "enumerate")``: returns a
    :class:`~privopt.solvers._report.RunOutcome` like the other runners and
    loads w (with its grid encoding r and, when normalized, s) into the model.
    ``plan``: the :class:`EnumerationPlan` of :func:`check_enumerable` for this model, if made."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    start = time.perf_counter()
    if plan is None:   # solve() passes the checks it already made
        plan = check_enumerable(model, options)
    data, noise, scale, normalize, n_points = plan.data, plan.noise, plan.scale, plan.normalize, plan.n_points
    coef, bound, unit, D = plan.levels
    block = find_perturbation_block(model)
    d = len(data.grid)
    X = data.X
    if plan.problem is not None:
        return _branch_and_bound(plan.problem, model, data, block, start, time_limit, n_points, threads, executor)
    best_val, best_w, best_s, done = math.inf, None, None, 0
    for W, used, losses in iter_losses(data, coef, bound):
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time limit after {done:,} of {n_points:,} grid points"
            if best_w is None:
                return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.noSolution, message=message)
            _load(model, data, best_w, block, best_s)
            return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.feasible, best_val, -math.inf,
                              message)
        if normalize:
            s = np.sqrt(np.maximum(0.0, D * D - used * unit))
            perturbation = (W @ noise[:d] + noise[d] * s) / D
        else:
            s = None
            perturbation = W @ noise[:d]
        J = losses - scale * perturbation
        k = int(np.argmin(J))
        if J[k] < best_val:
            best_val, best_w = float(J[k]), W[k].copy()
            best_s = None if s is None else float(s[k])
        done += W.shape[0]
    assert done == n_points
    _load(model, data, best_w, block, best_s)
    message = f"exact enumeration of {n_points:,} grid points x {X.shape[0]:,} distinct rows"
    return RunOutcome(TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal, best_val, best_val,
                      message)


#: Tasks per worker process of a parallel branch and bound (each sent with the
#: best value known when it starts; more tasks: a tighter ceiling, finer time limit).
TASKS_PER_WORKER = 16


def bound_workers(problem, rows: int, threads: int | None) -> int:
    """Worker processes for the branch and bound: 1 (this process) when
    ``threads == 1``, when its lower-bound pass is predicted below
    :data:`LOCAL_SECONDS` on one core, or in a worker process already;
    else ``threads`` (default: every usable CPU)."""
    import multiprocessing

    if threads == 1 or multiprocessing.parent_process() is not None:
        return 1
    if problem.predicted_seconds(rows) < LOCAL_SECONDS:
        return 1
    return max(1, int(threads) if threads is not None else usable_cpus())


def _branch_and_bound(problem, model, data, block, start, time_limit, n_points, threads=None, executor=None):
    """The exact argmin of OPDisc's oracle objective by branch and bound over
    the supports of W_tau (:class:`privopt.search._regions.PerturbedHalfspaceProblem`):
    each support's minimum comes from its row-pattern histogram where the
    patterns are few, else a lower bound that sends the support to be scored
    only if it can still beat the best value found; so the answer is the
    exact minimizer without listing W_tau.  On ``threads`` worker processes
    (:func:`bound_workers`) the blocks of supports are searched in parallel
    with the same answer (:func:`privopt.search._topdown.search_optimum`),
    or on ``executor`` when one is given (``"local"``: this process)."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    rows = data.X.shape[0]
    deadline = None if time_limit is None else start + time_limit
    if executor is not None:
        (best, done, total), where = _search_on_executor(problem, executor, deadline)
    else:
        workers = bound_workers(problem, rows, threads)
        best, done, total = _search_on_pool(problem, workers, deadline)
        where = f"on {workers} processes" if workers > 1 else "in one process"
    if done < total:
        message = f"time limit after {done:,} of {total:,} blocks of supports (branch and bound {where})"
        if best is None:
            return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.noSolution, message=message)
        _load_candidate(problem, model, data, block, best)
        return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.feasible, float(best[0]), -math.inf,
                          message)
    _load_candidate(problem, model, data, block, best)
    value = float(best[0])
    message = (f"exact branch and bound ({where}) over the {problem.n_regions:,} supports of {n_points:,} grid "
               f"points x {rows:,} distinct rows")
    return RunOutcome(TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal, value, value, message)


def _search_on_pool(problem, workers: int, deadline):
    """:func:`search_optimum` here (``workers == 1``) or on a local process
    pool made for it: the problem goes to each worker once (the pool's
    initializer), tasks of a few seconds each carry only their blocks; at the
    deadline the running tasks are stopped too."""
    from concurrent.futures import ProcessPoolExecutor

    if workers <= 1:
        return search_optimum(problem, deadline=deadline)
    key = f"branch-and-bound-{os.getpid()}-{id(problem)}"
    problem.region_minima(problem.supports(problem.k, 0, 1))     # load the kernels here: workers fork with them
    pool = ProcessPoolExecutor(max_workers=workers, initializer=install_problem, initargs=(key, problem))
    done = total = 0
    try:
        best, done, total = search_optimum(problem, executor=pool, deadline=deadline, installed=key,
                                           tasks_per_worker=TASKS_PER_WORKER)
    finally:
        if done < total or total == 0:       # out of time (or an error): stop the running tasks too
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
    return best, done, total


def _search_on_executor(problem, executor, deadline):
    """:func:`search_optimum` on a caller's executor, resolved as the samplers
    resolve theirs (:func:`privopt._runtime.resolve_executor`:
    ``"local"`` here, ``"ray"`` a Ray pool made for the run).  Returns
    ``((best, done, total), where)``."""
    ex, owned = resolve_executor(executor, 0.0, len(plan_shards(problem)))
    try:
        out = search_optimum(problem, executor=ex, deadline=deadline, tasks_per_worker=TASKS_PER_WORKER)
    finally:
        if owned:
            ex.shutdown()
    return out, "in one process" if ex is None else f"on the executor's {worker_count(ex)} workers"


def _load_candidate(problem, model, data, block, best):
    w = problem.decode(best[1], best[2])
    s_value = problem.slack_of(best[1], best[2]) if problem.normalize else None
    _load(model, data, w, block, s_value)


def _load(model, data, w, block, s_value):
    r = model.find_component("r")
    for j, v in enumerate(model.w.values()):
        v.set_value(float(w[j]), skip_validation=True)
        if r is not None:
            for k, g in enumerate(data.grid[j]):
                r[j, k].set_value(1 if abs(g - w[j]) <= 1e-12 else 0, skip_validation=True)
    if block is not None and s_value is not None:
        block.s.set_value(float(s_value), skip_validation=True)


# ---------------------------------------------------------------------------
# Sparse scoring: losses tabulated per support, looked up in the dense order
# ---------------------------------------------------------------------------

#: Fixed work of setting up the sparse engine (its compiled kernel, the
#: tables), in multiply-add units: small problems stay dense.
_SPARSE_SETUP_COST = 2_000_000_000
#: Work units of one (point, coordinate) of the dense point stream that the
#: sparse engine still pays (generation of the point in the dense order and
#: its table lookup), relative to one multiply-add of the dense engine:
#: measured at about 100 by ``benchmarks/bench_selection.py`` (1.7 million
#: points at d = 41 read back in 4.6 s).
_SPARSE_POINT_COST = 100


def _build_numba_hist(numba):
    """The compiled pattern-histogram kernel (compiled on first use; None without numba)."""

    @numba.njit(parallel=True, cache=True)
    def kernel(xdig_t, diff, supports, base, npat):   # pragma: no cover - compiled
        m, k = supports.shape
        rows = xdig_t.shape[1]
        hist = np.zeros((m, npat))
        for s in numba.prange(m):
            for r in range(rows):
                code = 0
                mul = 1
                for i in range(k):
                    code += xdig_t[supports[s, i], r] * mul
                    mul *= base
                hist[s, code] += diff[r]
        return hist

    return kernel


_numba_hist = lazy_kernel(_build_numba_hist)


def _pattern_histograms(xdig, xdig_t, diff, S, base, npat, use_numba=True):
    """hist[s, p] = sum of diff over the rows whose values on support S[s]
    have pattern code p = sum_i digit_i base^i (numba kernel or numpy)."""
    kernel = _numba_hist() if use_numba else None
    if kernel is not None:
        return kernel(xdig_t, diff, S, base, npat)
    k = S.shape[1]
    codes = (xdig[:, S] * (base ** np.arange(k))).sum(axis=2)               # (rows, m)
    codes += (np.arange(S.shape[0]) * npat)[None, :]
    return np.bincount(codes.ravel(), weights=np.repeat(diff, S.shape[0]),
                       minlength=S.shape[0] * npat).reshape(S.shape[0], npat)


class SparseTables:
    """The exact 0/1 loss of every point of W_tau, computed per support.

    A point's score on a row depends only on the row's values on the point's
    support S (its nonzero coordinates).  On a ball of small radius every
    support is small (at D = 2 on an integer grid, at most 4 coordinates), and
    the rows restricted to S collapse to at most base^|S| patterns (base = the
    number of distinct feature values).  For each support the pattern
    histogram of (positive - negative) counts is built once, and the loss of
    every value vector on S is one small matrix product with the pattern
    matrix's prediction table, for all supports of a size at once.

    The table is then read in the order of :func:`iter_grid_blocks` (the
    dense engine's order), by the colexicographic rank of each point's support
    and the rank of its value vector, so both engines return the same losses
    for the same points in the same order: the choice of engine changes the
    time, never the answer.  It needs the exact decision rule and one grid
    shared by every coordinate, with 0 in it.
    """

    def __init__(self, data, coef, bound, chunk_entries=4_000_000, use_numba=True):
        grid = uniform_grid(data.grid)
        if grid is None or not data.exact:
            raise ValueError("sparse scoring needs the exact rule and one grid with 0 for every coordinate")
        X = data.X
        self.d = d = X.shape[1]
        zero = grid.index(0.0)
        nz_idx = [k for k in range(len(grid)) if k != zero]
        self.nz_values = np.array([grid[k] for k in nz_idx])
        units = np.array([coef[0][k] for k in nz_idx], dtype=np.int64)
        G = len(nz_idx)
        self.G = G
        U, Xdig = np.unique(X, return_inverse=True)
        Xdig = Xdig.reshape(X.shape).astype(np.int64)
        Xdig_t = np.ascontiguousarray(Xdig.T.astype(np.uint8 if len(U) <= 255 else np.int64))
        base = len(U)
        rows = X.shape[0]
        diff = (data.pos - data.neg).astype(np.float64)
        total_pos = float(data.pos.sum())
        theta = data.theta
        kmax = int(bound // units.min()) if units.min() > 0 else d
        kmax = min(kmax, d)
        if base ** kmax > SPARSE_MAX_PATTERNS:
            raise ValueError("too many row patterns for sparse scoring")
        from math import comb

        self.binom = np.array([[comb(j, t) for t in range(d + 2)] for j in range(d + 1)], dtype=np.int64)
        self.tables, self.lookup, self.offsets = [], [], []
        offset = 0
        for k in range(kmax + 1):
            # value vectors on a support of size k, ordered by code sum_i digit_i G^i
            if k == 0:
                V = np.zeros((1, 0))
                lookup = np.zeros(1, dtype=np.int64)
            else:
                digits = np.array(list(itertools.product(range(G), repeat=k)))[:, ::-1]  # digit i at column i
                codes = (digits * (G ** np.arange(k))).sum(axis=1)
                order = np.argsort(codes)
                digits, codes = digits[order], codes[order]
                keep = units[digits].sum(axis=1) <= bound
                digits, codes = digits[keep], codes[keep]
                V = self.nz_values[digits]
                lookup = np.full(G ** k, -1, dtype=np.int64)
                lookup[codes] = np.arange(len(codes))
            nV = V.shape[0]
            if nV == 0:
                break
            n_supports = comb(d, k)
            # patterns: code sum_i digit_i base^i -> values U[digit_i]
            if k == 0:
                positive = (np.zeros((1, 1)) >= theta).astype(np.float64)       # score 0 on every row
                table = np.full((1, 1), total_pos - diff.sum() * positive[0, 0])
            else:
                pdig = np.array(list(itertools.product(range(base), repeat=k)))[:, ::-1]
                P = U[pdig]                                       # (base^k, k)
                positive = (P @ V.T >= theta).astype(np.float64)  # (base^k, nV)
                supports = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64)
                ranks = self._colex(supports)
                supports = supports[np.argsort(ranks)]
                table = np.empty((n_supports, nV))
                npat = base ** k
                m = max(1, chunk_entries // max(rows if not use_numba else 1, npat))
                for lo in range(0, n_supports, m):
                    S = supports[lo:lo + m]
                    hist = _pattern_histograms(Xdig, Xdig_t, diff, S, base, npat, use_numba)
                    table[lo:lo + m] = total_pos - hist @ positive
            self.tables.append(table.ravel())
            self.lookup.append(lookup)
            self.offsets.append(offset)
            offset += table.size
        self.flat = np.concatenate(self.tables)
        self.kmax = len(self.tables) - 1
        self.nV = [len(t) // max(1, comb(d, k)) for k, t in enumerate(self.tables)]

    def _colex(self, supports):
        """Colexicographic rank of sorted index tuples: sum_i C(c_i, i + 1)."""
        k = supports.shape[1]
        return sum(self.binom[supports[:, i], i + 1] for i in range(k)) if k else np.zeros(len(supports), int)

    def losses(self, vals):
        """Losses of the points ``vals`` (rows of a dense block) from the tables."""
        nz = vals != 0
        ordinal = np.cumsum(nz, axis=1)                       # 1-based position among the nonzeros
        k = ordinal[:, -1]
        cols = np.arange(self.d)[None, :]
        rank = np.where(nz, self.binom[cols, np.where(nz, ordinal, 0)], 0).sum(axis=1)
        digit = np.searchsorted(self.nz_values, vals)          # index among the nonzero values
        code = np.where(nz, digit * (self.G ** np.maximum(ordinal - 1, 0)), 0).sum(axis=1)
        out = np.empty(vals.shape[0])
        for kk in np.unique(k):
            sel = k == kk
            vidx = self.lookup[kk][code[sel]]
            out[sel] = self.flat[self.offsets[kk] + rank[sel] * self.nV[kk] + vidx]
        return out


def sparse_applicable(data) -> bool:
    """Whether :class:`SparseTables` can score this model (exact rule, one grid with 0)."""
    return bool(data.exact) and uniform_grid(data.grid) is not None


def scoring_costs(n_points: int, rows: int, d: int, coef, bound, grid=None, base=None):
    """(dense, sparse) work estimates in multiply-add units for ``rows``
    distinct rows (sparse is None where it does not apply): dense
    |W| rows (d + 18); sparse sum_k C(d, k) (rows (k + 2) + P_k V_k) for the
    pattern histograms and their products with the prediction tables (P_k =
    min(base^k, rows) patterns, V_k value vectors on a support of size k),
    plus |W| d * 100 for reading the table back in the dense order."""
    from math import comb

    dense = n_points * max(1, rows) * (d + 18)
    g = uniform_grid(grid) if grid is not None else None
    if g is None:
        return dense, None
    zero = g.index(0.0)
    umin = min(c for k, c in enumerate(coef[0]) if k != zero)
    kmax = min(d, int(bound // umin)) if umin > 0 else d
    nonzero_units = [c for k, c in enumerate(coef[0]) if k != zero]
    b = max(1, rows) if base is None else base
    hist = 0
    for k in range(1, kmax + 1):
        # value vectors on a support of size k: k-tuples of nonzero values within the bound
        n_values = count_grid_points([nonzero_units] * k, bound)
        hist += comb(d, k) * (max(1, rows) * (k + 2) + min(b ** k, max(1, rows)) * n_values)
    return dense, _SPARSE_SETUP_COST + hist + n_points * d * _SPARSE_POINT_COST
