"""The points of a product grid that meet separable constraints, counted and listed without
listing the product first.

W = {w : w_j in grid[j], lower_r <= offset_r + sum_j t_rj(w_j) <= upper_r for every row r},
where t_rj(g) is coordinate j's contribution to row r when it takes the value g.  A linear
constraint sum_j a_rj w_j has t_rj(g) = a_rj g (:func:`linear_tables`); the ball
sum_j w_j^2 <= D^2 has t_j(g) = g^2 (or its exact integer units).  A cardinality constraint
sum_j open_j == k on 20 binaries leaves C(20, k) points of the 2^20 of the product: this
module counts them (by dynamic programming over the distinct partial sums, pruned as soon
as no completion can meet a row: the partial sum plus the smallest and largest sums the
remaining coordinates can add) and lists them (over the coordinates, keeping only the
partial assignments whose state in that programme has a completion), so the work follows
the number of distinct partial sums and |W|, not the product.

The order is the one of :func:`privopt.space.grid_points` (the LAST coordinate most
significant, each coordinate's values in its grid's order): the listed points are exactly
the rows of the product that a filter with the same test would keep, in the same order,
so a sampler that draws its noise in W's order draws the same noise for the same point.

The test of one point is ``val >= lower - rtol (1 + |val|)`` and ``val <= upper + rtol
(1 + |val|)`` with ``val = offset + sum_j t_rj(w_j)`` (``rtol`` per row: 1e-9 for a
constraint read from a model, 0 for exact integer units); pruning is looser than the test
(it never drops a point the test keeps).  The count and the listing sum in the same order,
so they agree exactly.

Pure numpy on public quantities (the grids and the constraints' numbers); nothing here
reads data or Pyomo.  A sampler that bounds regions of W (partial assignments of the
coordinates) can reuse :func:`partial_feasible` to discard a region no point of which
meets the constraints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SeparableConstraints", "linear_tables", "count_constrained_points", "constrained_points",
           "partial_feasible", "MAX_COUNT_STATES", "ConstrainedCount", "count_with_work", "COUNT_STEP_WORK"]

#: The count gives up (returns None) when the distinct partial sums at one coordinate
#: exceed this: the constraints' numbers are then too irregular to count by merging
#: partial sums (the caller falls back to listing the product and filtering it).
MAX_COUNT_STATES = 1 << 20

#: The fixed cost of one coordinate's step of a count (:class:`ConstrainedCount`), in the
#: units of one candidate partial sum of one row: numpy's per-call overhead of a step
#: (about a dozen array operations) against its per-element cost.
COUNT_STEP_WORK = 200


class SeparableConstraints:
    """Rows ``lower_r <= offset_r + sum_j tables[j][r, k_j] <= upper_r`` over the grids.

    ``tables[j]`` is an array of shape (rows, len(grid[j])): coordinate j's contribution to
    each row at each of its values.  ``lower``/``upper`` may hold -inf/+inf (one-sided
    rows); ``rtol`` is the relative tolerance of each row's test (scalar or per row).
    """

    def __init__(self, tables, lower, upper, offset=None, rtol=1e-9):
        self.tables = [np.atleast_2d(np.asarray(t, dtype=np.float64)) for t in tables]
        self.rows = self.tables[0].shape[0] if self.tables else 0
        for t in self.tables:
            if t.shape[0] != self.rows:
                raise ValueError("every coordinate's table needs one line per constraint row")
        self.lower = np.broadcast_to(np.asarray(lower, dtype=np.float64), (self.rows,)).copy()
        self.upper = np.broadcast_to(np.asarray(upper, dtype=np.float64), (self.rows,)).copy()
        self.offset = (np.zeros(self.rows) if offset is None
                       else np.broadcast_to(np.asarray(offset, dtype=np.float64), (self.rows,)).copy())
        self.rtol = np.broadcast_to(np.asarray(rtol, dtype=np.float64), (self.rows,)).copy()
        d = len(self.tables)
        # the smallest / largest sum and the largest magnitude coordinates 0..j-1 can add
        self.rest_lo = np.zeros((d + 1, self.rows))
        self.rest_hi = np.zeros((d + 1, self.rows))
        self.rest_abs = np.zeros((d + 1, self.rows))
        for j in range(d):
            t = self.tables[j]
            self.rest_lo[j + 1] = self.rest_lo[j] + t.min(axis=1)
            self.rest_hi[j + 1] = self.rest_hi[j] + t.max(axis=1)
            self.rest_abs[j + 1] = self.rest_abs[j] + np.abs(t).max(axis=1)

    @property
    def d(self) -> int:
        return len(self.tables)

    def can_complete(self, sums, j) -> np.ndarray:
        """For each line of ``sums`` (partial sums of coordinates j..d-1, offset
        included; shape (m, rows)): whether coordinates 0..j-1 could still bring
        every row into its range.  Loose by the test's tolerance plus rounding."""
        if self.rows == 0:
            return np.ones(sums.shape[0], dtype=bool)
        mag = 1.0 + np.abs(sums) + self.rest_abs[j]
        slack = self.rtol * mag + 1e-12 * mag
        ok = (sums + self.rest_lo[j] <= self.upper + slack) & (sums + self.rest_hi[j] >= self.lower - slack)
        return ok.all(axis=1)

    def test(self, sums) -> np.ndarray:
        """The exact test of complete points (``sums``: shape (m, rows))."""
        if self.rows == 0:
            return np.ones(sums.shape[0], dtype=bool)
        tol = self.rtol * (1.0 + np.abs(sums))
        return ((sums >= self.lower - tol) & (sums <= self.upper + tol)).all(axis=1)


def linear_tables(grids: Sequence[Sequence[float]], A) -> list:
    """The tables of the linear rows ``A`` (shape (rows, d)) on ``grids``:
    ``tables[j][r, k] = A[r, j] * grids[j][k]``."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    return [A[:, j][:, None] * np.asarray(g, dtype=np.float64)[None, :] for j, g in enumerate(grids)]


def partial_feasible(cons: SeparableConstraints, fixed_sums, j) -> np.ndarray:
    """Whether regions whose coordinates j..d-1 are fixed (their partial sums
    ``fixed_sums``, offset included, shape (m, rows)) may hold a point of W; False
    is certain (no completion meets some row), True is not a promise."""
    return cons.can_complete(np.atleast_2d(fixed_sums), j)


class _StateGraph:
    """The distinct partial sums of W's constraints, coordinate d-1 first.

    ``states[t]`` are the distinct sum vectors once coordinates d-1..d-1-t are
    fixed (offset included; ``t = -1`` is the offset alone), ``child[t][s, k]``
    the index in ``states[t]`` reached from state ``s`` of level t-1 with value
    k of coordinate d-1-t (-1 when pruned), ``alive[t][s]`` whether state ``s``
    has a completion that meets every row, ``count`` the number of points of W and
    ``work`` the count's cost in deterministic units (:data:`COUNT_STEP_WORK` per
    coordinate plus one per candidate partial sum and row).  Built forward (counting
    prefixes), then ``alive`` backward, so that listing keeps only prefixes that end
    in a point: the listing's work and memory are at most d |W| times a grid's size,
    whatever the pruning missed."""

    def __init__(self, cons: SeparableConstraints, max_states: int, max_work: int | None = None):
        d = cons.d
        sums = cons.offset[None, :].copy()
        mult = np.ones(1, dtype=object)
        self.child: list = []
        self.ok = True
        self.cut = False      # stopped before a step that would take the work past max_work
        self.work = 0
        for j in range(d - 1, -1, -1):
            tab = cons.tables[j]
            K = tab.shape[1]
            m = sums.shape[0]
            self.work += COUNT_STEP_WORK + m * K * max(cons.rows, 1)
            if max_work is not None and self.work > max_work:
                self.ok, self.cut = False, True
                return
            new = (sums[:, None, :] + tab.T[None, :, :]).reshape(m * K, cons.rows)
            keep = cons.can_complete(new, j) if j > 0 else cons.test(new)
            child = np.full(m * K, -1, dtype=np.int64)
            if keep.any():
                if cons.rows:
                    uniq, inverse = np.unique(new[keep], axis=0, return_inverse=True)
                else:
                    uniq, inverse = new[keep][:1], np.zeros(int(keep.sum()), dtype=np.int64)
                inverse = inverse.reshape(-1)
            else:
                uniq, inverse = new[:0], np.zeros(0, dtype=np.int64)
            if uniq.shape[0] > max_states:
                self.ok = False
                return
            child[keep] = inverse
            counts = np.zeros(uniq.shape[0], dtype=object)
            np.add.at(counts, inverse, np.repeat(mult, K)[keep])
            self.child.append(child.reshape(m, K))
            sums, mult = uniq, counts
        self.count = int(mult.sum()) if d else 1
        # alive, backward: every final state met the test; a state lives if one child does
        alive = np.ones(sums.shape[0], dtype=bool)
        self.alive = [alive]
        for t in range(d - 1, 0, -1):
            ch = self.child[t]
            alive = (((ch >= 0) & alive[np.maximum(ch, 0)]).any(axis=1) if alive.size
                     else np.zeros(ch.shape[0], dtype=bool))
            self.alive.insert(0, alive)


@dataclass(frozen=True)
class ConstrainedCount:
    """|W| through separable constraints (None: too irregular to count) and what the
    count cost, in the deterministic units of :data:`COUNT_STEP_WORK` (the same on
    every machine and at every load, unlike its seconds)."""

    count: int | None
    work: int
    #: True when the count stopped at ``max_work`` (:func:`count_with_work`): ``count`` is None and
    #: says nothing of W; ``work`` is past the limit.
    cut: bool = False


def count_with_work(cons: SeparableConstraints, max_states: int = MAX_COUNT_STATES,
                    max_work: int | None = None) -> ConstrainedCount:
    """:func:`count_constrained_points` with the count's cost (:class:`ConstrainedCount`).

    ``max_work``: stop before a coordinate's step that would take the cost past it (``cut``);
    a count that is not cut is the same count, at the same cost, as without the limit, and a
    count is cut exactly when its cost without the limit would be more than ``max_work``."""
    graph = _StateGraph(cons, max_states, max_work)
    return ConstrainedCount(graph.count if graph.ok else None, graph.work, graph.cut)


def count_constrained_points(cons: SeparableConstraints, max_states: int = MAX_COUNT_STATES) -> int | None:
    """|W|, by dynamic programming over the distinct partial sums (coordinate d-1
    first, as :func:`constrained_points` sums), or None when some coordinate has more
    than ``max_states`` distinct partial sums.  Python integers (no overflow)."""
    return count_with_work(cons, max_states).count


def constrained_points(grids: Sequence[Sequence[float]], cons: SeparableConstraints,
                       max_states: int = MAX_COUNT_STATES) -> np.ndarray:
    """The points of W (shape (|W|, d)), in the order of the product grid (the last
    coordinate most significant): coordinate d-1 is fixed first, and only partial
    assignments that end in a point of W are kept (the states of the count's dynamic
    programme that have a completion), so no work is spent on dead prefixes.  Raises
    ValueError when the count gives up (``max_states``)."""
    d = len(grids)
    if d != cons.d:
        raise ValueError("one table per coordinate is needed")
    graph = _StateGraph(cons, max_states)
    if not graph.ok:
        raise ValueError("too many distinct partial sums to list W through these constraints")
    idx = np.zeros((1, 0), dtype=np.int32)        # columns: coordinates d-1, d-2, ... fixed so far
    state = np.zeros(1, dtype=np.int64)
    for t in range(d):
        ch = graph.child[t][state]                # (m, K)
        live = ch >= 0
        live[live] = graph.alive[t][ch[live]]
        rows, ks = np.nonzero(live)               # row-major: prefix first, then the value's index
        idx = np.hstack([idx[rows], ks.astype(np.int32)[:, None]])
        state = ch[rows, ks]
        if idx.shape[0] == 0:
            break
    values = np.empty((idx.shape[0], d), dtype=np.float64)
    if idx.shape[0] and d:
        for col, j in enumerate(range(d - 1, -1, -1)):
            values[:, j] = np.asarray(grids[j], dtype=np.float64)[idx[:, col]]
    return values
