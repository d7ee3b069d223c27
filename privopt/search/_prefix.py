r"""Exact report-noisy-max over a W of partial assignments, bounded by any oracle.

The regions of :mod:`privopt.search._topdown` are supports of a 0/1-loss model; here they
are *prefixes* of the decision: a region fixes coordinates 0..t-1 (in index order) to
values of their grids and leaves coordinates t..d-1 free.  Its size N_r is the number of
points of W that complete it: counted exactly through W's separable constraints
(:func:`privopt.space.count_constrained_points` on the remaining coordinates, with the
fixed coordinates' contributions moved into the offset), or the product of the remaining
grids' sizes when there are none.  Sizes are public (the grids and the declared public
constraints), and the children of a region partition it, so their sizes sum to its size.

The sampler is A* sampling [MTM14] with the region maxima of facts (a)-(c) of
:mod:`privopt.search._topdown`: the root's maximum noise M is drawn from |W| by (a); a
region's children (the values of its next coordinate that have a completion) get their
maxima by (b)-(c) from the region's M and their sizes; every region's upper bound on any
key inside it is M_r - LB_r / s, where LB_r is a lower bound on the loss over the region
given by the :class:`BoundOracle`.  Regions are kept in a priority queue by upper bound;
the one with the largest is taken next; a region with one point is scored exactly
(its key is M_r - L(w) / s, with L(w) from the oracle's exact ``loss``); the search stops
when the best key found beats the upper bound of every open region.  Every point never
reached has a key below the released one, so the released point has exactly the law of
report-noisy-max over W (the exponential mechanism with Gumbel noise, permute-and-flip
with Exponential noise) and is pure epsilon-DP with the same epsilon.  The bounds depend
on the data but only decide how much work is done; an invalid bound (above the loss of
some point of its region) would prune wrongly and break the law, so the oracle must give
certified bounds (privopt's Pyomo oracle refuses otherwise).

Lazy bounds: a child first inherits its parent's bound (valid on a subset) and is bounded
by the oracle only when it is taken from the queue, so regions whose inherited upper
bound already loses are never solved.

Noise by key (:class:`privopt.search.KeyedStreams`): the root's maximum from key (5,),
the split of region ``prefix`` from key (6, t, *prefix) (value indices), so the release
does not depend on the order regions are visited in.

Without Pyomo: the oracle is any object with ``lower_bound(lower, upper)`` and
``loss(point)``.

[MTM14] Maddison, Tarlow, Minka. A* sampling. NeurIPS 2014.
"""

from __future__ import annotations

import functools
import heapq
import math
import time

import numpy as np

from ..exceptions import NotCertifiedError
from ..space import COUNT_STEP_WORK, SeparableConstraints, constrained_points, count_with_work, product_size
from ._topdown import max_of, split_region

__all__ = ["PrefixSpace", "BoundOracle", "PrefixStats", "sample_prefix", "MIN_SOLVES_WORK"]

#: The counting :meth:`PrefixSpace.min_region_solves` may do, in the units of
#: :class:`privopt.space.ConstrainedCount` (about 0.3 microseconds each on a 2-core machine of
#: 2026: about a third of a second).  A count of work, not of seconds, so that the bound, and
#: what a time_limit is refused for, do not depend on the machine's load.
MIN_SOLVES_WORK = 1_000_000


class BoundOracle:
    """What the prefix sampler needs from the data (an interface).

    * ``lower_bound(lower, upper)``: a lower bound on the loss of every point of W with
      ``lower <= w <= upper`` (fixed coordinates have ``lower[j] == upper[j]``); it must
      be valid (certified), or the oracle raises;
    * ``loss(point)``: the exact loss L(w) of one point of W.
    """

    def lower_bound(self, lower: np.ndarray, upper: np.ndarray) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def loss(self, point: np.ndarray) -> float:  # pragma: no cover - interface
        raise NotImplementedError


class PrefixSpace:
    """W = prod_j grids[j] (intersected with ``constraints``, a
    :class:`privopt.space.SeparableConstraints` on the same grids, when given) as a
    tree of prefixes: public quantities only.  ``size``: |W| where the caller has
    counted it already through the same constraints (it is then not counted again)."""

    def __init__(self, grids, constraints: SeparableConstraints | None = None, size: int | None = None):
        self.grids = [np.asarray(g, dtype=np.float64) for g in grids]
        self.d = len(self.grids)
        self.cons = constraints
        if constraints is not None and constraints.d != self.d:
            raise ValueError("the constraints need one table per coordinate")
        self._sizes: dict = {} if size is None else {(): int(size)}
        self._work: dict = {}       # prefix -> the cost of counting it (ConstrainedCount.work)

    @functools.cached_property
    def lo(self) -> np.ndarray:
        """Each coordinate's smallest value (made on first use: the boxes' bounds; a W the
        plan refuses by its size never needs them)."""
        return np.array([g.min() for g in self.grids])

    @functools.cached_property
    def hi(self) -> np.ndarray:
        """Each coordinate's largest value (made on first use, as :attr:`lo`)."""
        return np.array([g.max() for g in self.grids])

    @classmethod
    def of(cls, w) -> "PrefixSpace":
        """W (a :class:`privopt.space.DecisionSpace`) as a tree of prefixes: its grids, its
        rows with the ball (:attr:`~privopt.space.DecisionSpace.separable`) and |W| as W
        counted it (:attr:`~privopt.space.DecisionSpace.size`, not counted again)."""
        return cls(w.grids, w.separable, size=w.size)

    def _sub(self, prefix) -> SeparableConstraints:
        c = self.cons
        assert c is not None
        t = len(prefix)
        sums = c.offset.copy()
        for j, k in enumerate(prefix):
            sums = sums + c.tables[j][:, k]
        return SeparableConstraints(c.tables[t:], c.lower, c.upper, sums, c.rtol)

    def size(self, prefix: tuple) -> int | None:
        """The number of points of W that complete ``prefix`` (value indices of
        coordinates 0..t-1), exactly; None when the constraints' numbers are too
        irregular to count (:func:`privopt.space.count_constrained_points`)."""
        prefix = tuple(prefix)
        if prefix not in self._sizes:
            self._count(prefix)
        return self._sizes[prefix]

    def _count(self, prefix: tuple, max_work: int | None = None) -> bool:
        """Count ``prefix``'s size and its cost into the memo; False, with nothing memoized,
        when the cost would be more than ``max_work`` (the count stops there)."""
        t = len(prefix)
        work = COUNT_STEP_WORK
        if self.cons is None:
            out: int | None = product_size(self.grids[t:])
        elif t == self.d:     # a full assignment: the constraints' own test of the point
            sums = self.cons.offset + sum((self.cons.tables[j][:, k] for j, k in enumerate(prefix)),
                                          np.zeros(self.cons.rows))
            out = int(self.cons.test(sums[None, :])[0])
        else:
            counted = count_with_work(self._sub(prefix), max_work=None if max_work is None else max_work - work)
            if counted.cut:
                return False
            out, work = counted.count, work + counted.work
        self._sizes[prefix] = out
        self._work[prefix] = work
        return True

    def count_work(self, prefix: tuple) -> int:
        """What counting ``prefix``'s size costs (:class:`privopt.space.ConstrainedCount`'s
        units: the same whether it was counted now or before)."""
        prefix = tuple(prefix)
        self.size(prefix)
        return self._work.get(prefix, 0)      # the caller's |W| (prefix ()) cost nothing here

    def point(self, prefix: tuple) -> np.ndarray:
        """The values of a full assignment (value indices of every coordinate)."""
        return np.array([g[k] for g, k in zip(self.grids, prefix)], dtype=np.float64)

    def only_completion(self, prefix: tuple) -> tuple:
        """The value indices of the one point of a region of size 1."""
        t = len(prefix)
        if t == self.d:
            return tuple(prefix)
        if self.cons is None:
            return tuple(prefix) + (0,) * (self.d - t)
        pts = constrained_points([g.tolist() for g in self.grids[t:]], self._sub(prefix))
        if pts.shape[0] != 1:
            raise ValueError("the region does not have exactly one point")
        rest = tuple(int(np.flatnonzero(g == x)[0]) for g, x in zip(self.grids[t:], pts[0]))
        return tuple(prefix) + rest

    def min_region_solves(self, budget: int = 256, work: int = MIN_SOLVES_WORK) -> int:
        """A lower bound, from public quantities only, on the regions :func:`sample_prefix`
        bounds in any run: the released point's every ancestor with more than one point
        is bounded once (a region is split only after its own bound), so a run bounds at
        least the fewest such ancestors of any point of W.  Found breadth first over the
        prefixes (sizes counted exactly, at most ``budget`` of them and at most ``work``
        units of counting, :meth:`count_work`, a count that would take the work past it
        stopped at that point; the counts are memoized and reused by the
        sampler); when either runs out before a region of one point is met, every level
        explored so far holds regions of several points only, which still bounds the count
        from below.  Both limits count work, not seconds, so the bound is a function of W
        alone: the same on an idle and a loaded machine, in the prediction and in every
        release's report.  An
        ancestor whose box equals its parent's (the next coordinate's grid has one value)
        is not a new solve (the oracle memoizes boxes), so it does not count."""
        new_box = [True] + [len(g) > 1 for g in self.grids]   # ancestor at depth t: a box of its own?
        level: list[tuple] = [()]
        counted = spent = 0
        for t in range(self.d):
            nxt: list[tuple] = []
            for prefix in level:
                for k in range(len(self.grids[t])):
                    child = prefix + (k,)
                    if child not in self._sizes and not self._count(child, max_work=work - spent):
                        return sum(new_box[: t + 1])   # the count alone would end past the limit
                    s = self.size(child)      # counted now or before: memoized
                    counted, spent = counted + 1, spent + self.count_work(child)
                    if s == 1 or s is None:   # a point whose ancestors are the depths 0..t (or uncountable)
                        return sum(new_box[: t + 1])
                    if s:
                        nxt.append(prefix + (k,))
                    if counted >= budget or spent >= work:   # depths 0..t: several points each
                        return sum(new_box[: t + 1])
            level = nxt
        return sum(new_box[: self.d])

    def box(self, prefix: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The box of the region: fixed coordinates at their values, the others
        between their grids' smallest and largest values."""
        lower, upper = self.lo.copy(), self.hi.copy()
        for j, k in enumerate(prefix):
            lower[j] = upper[j] = self.grids[j][k]
        return lower, upper


class PrefixStats:
    """The work of one run: ``regions_solved`` (oracle bounds), ``regions_expanded``
    (regions split into children), ``points_scored`` (exact losses), ``wall_time``."""

    def __init__(self):
        self.regions_solved = 0
        self.regions_expanded = 0
        self.points_scored = 0
        self.wall_time = 0.0

    def __repr__(self):
        return (f"PrefixStats(regions_solved={self.regions_solved}, regions_expanded={self.regions_expanded}, "
                f"points_scored={self.points_scored}, wall_time={self.wall_time:.3f})")


def sample_prefix(space: PrefixSpace, oracle, streams, method: str, scale: float, *, deadline=None,
                  stats: PrefixStats | None = None):
    """One exact report-noisy-max draw over W (keys -L(w)/scale + noise), by A*
    sampling over prefixes (module docstring).  Returns ``(point, key, stats)``.

    ``deadline``: a :func:`time.perf_counter` value; past it the run raises
    :class:`~privopt.exceptions.NotCertifiedError` (nothing is released)."""
    stats = PrefixStats() if stats is None else stats
    start = time.perf_counter()
    n = space.size(())
    if n is None or n < 1:
        raise ValueError("W has no point (or cannot be counted)")
    root_max = float(max_of(streams.draws((5,), 1), n, method)[0])
    # queue entries: (-upper bound, tie order, prefix, size, region max, lower bound, own bound?)
    heap: list = [(-math.inf, (), (), n, root_max, -math.inf, False)]
    best = None      # (key, prefix of the point)
    while heap:
        neg_ub, _, prefix, size, M, lb, own = heapq.heappop(heap)
        if best is not None and -neg_ub < best[0]:
            break
        if deadline is not None and time.perf_counter() > deadline:
            raise NotCertifiedError(     # how many regions and points were reached depends on the data: not said
                "time_limit: ran out before the sampling was done; nothing is released. Raise time_limit.", None)
        if size == 1:
            full = space.only_completion(prefix)
            stats.points_scored += 1
            key = M - float(oracle.loss(space.point(full))) / scale
            if best is None or key > best[0] or (key == best[0] and full < best[1]):
                best = (key, full)
            continue
        if not own:
            stats.regions_solved += 1
            lb = max(lb, float(oracle.lower_bound(*space.box(prefix))))
            ub = M - lb / scale
            if best is None or ub >= best[0]:
                heapq.heappush(heap, (-ub, prefix, prefix, size, M, lb, True))
            continue
        # split into the next coordinate's values that have a completion (facts (b)-(c))
        stats.regions_expanded += 1
        t = len(prefix)
        kids: list[tuple[tuple, int]] = []
        for k in range(len(space.grids[t])):
            n_kid = space.size(prefix + (k,))
            if n_kid is None:
                raise ValueError("a region of W cannot be counted")
            if n_kid:
                kids.append((prefix + (k,), n_kid))
        sizes = np.array([s for _, s in kids], dtype=float)
        if int(sum(s for _, s in kids)) != size:
            raise ValueError("the children's sizes do not add up to the region's size")
        Mc = split_region(streams.draws((6, t, *prefix), len(kids) + 1), sizes, M, method)
        for (p, s), m in zip(kids, Mc):
            ub = float(m) - lb / scale
            if best is None or ub >= best[0]:
                heapq.heappush(heap, (-ub, p, p, s, float(m), lb, False))
    stats.wall_time += time.perf_counter() - start
    assert best is not None
    return space.point(best[1]), best[0], stats
