r"""W_tau of a 0/1-loss halfspace model, split by support for the exact
top-down samplers and the branch-and-bound optimum (:mod:`privopt.search._topdown`).

W_tau = {w : w_j in grid, ||w||_2 <= D} (one grid shared by every coordinate,
0 in it, squared norms in integer units, as :mod:`privopt.solvers._enumerate`
lists them).  Its points with support S (the nonzero coordinates) form one
region; on an integer grid and a small ball every support is small (at D = 2,
at most 4 coordinates).  A region's points are the value vectors on S with all
entries nonzero and squared norm within the bound: the same list V_k for every
support of size k, so region sizes are public.

Loss of a point: the model's exact rule (positive iff <w, x> >= theta) on the
distinct rows, counted with their positive and negative labels, the same
numbers as the enumeration's, read from the histogram of the rows' patterns
on S (:mod:`privopt.search._patterns`).  Lower bound of a region: its exact
smallest loss where the patterns are few, else the pattern bound.

The cost of a run is the lower-bound pass, sum_k C(d, k) times the distinct
rows (public: d, k and n bound it), plus the regions that are actually scored
(data-dependent, usually a handful).  Nothing is enumerated point by point.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from .._lattice import kept_unique_values, kept_while_alive
from .._limits import MAX_REGION_PATTERNS, MAX_REGION_POINTS, memory_budget
from ..exceptions import ModelError
from ..space import SupportWork, grid_points, norm_levels, split_support_count
from ._costs import ONE_FEATURE_COST, TOPDOWN_COST, TopDownCost, topdown_cost, topdown_seconds
from ._patterns import (Floor, Points, float32_exact, points_of, records_of, region_minima, screened_minima,
                        support_values)
from ._topdown import RegionProblem, lex_combinations

__all__ = ["HalfspaceProblem", "PerturbedHalfspaceProblem", "halfspace_problem", "perturbed_problem",
           "split_supports", "bound_search_work", "enumeration_levels", "EnumerationLevels", "BOUND_ROWS_PER_SECOND",
           "TopDownCost", "TOPDOWN_COST", "ONE_FEATURE_COST", "topdown_cost", "topdown_seconds",
           "MAX_PATTERNS", "MAX_REGION_POINTS"]

#: Measured throughput of the lower-bound pass (rows per second per support,
#: one core, numba kernel; benchmarks/bench_selection.py).
BOUND_ROWS_PER_SECOND = 2e8


#: A support whose features' numbers of values multiply to at least this share of the distinct rows
#: is screened row by row (:meth:`HalfspaceProblem.many_patterns`).
ROWS_PATTERN_SHARE = 0.5

#: Fewest distinct rows for screening by rows (and for stopping a bound's histogram early): on
#: fewer, a histogram costs next to nothing and its exact minima and pattern bounds prune more.
#: From 512 rows, supports of many patterns (continuous features) already cost a full histogram
#: for a bound (1) that prunes little and a second one when screened: on a 1,000 x 14 table of
#: half uniform, half binary columns, screening them by rows takes a fifth less CPU (same draws).
ROWS_SCREEN_MIN = 512

#: A budget of :func:`privopt.search._patterns.region_minima` that rules no support out.
_NO_BUDGET = 2 ** 62

#: Largest number of row patterns per support (base^k) the bound tabulates
#: (defined with the other limits in :mod:`privopt._limits`).
MAX_PATTERNS = MAX_REGION_PATTERNS


def _split_applies(data, levels) -> tuple | None:
    """``(values, inverse)`` when W_tau of this enumeration data (W's grid, ``data.w``,
    within the ball of ``levels``, :func:`enumeration_levels`) can be split by support (the
    exact rule, one grid with 0 for every coordinate, and
    :func:`privopt.space.split_support_count`'s limits on row patterns and region points),
    else None.  ``values, inverse`` is ``np.unique`` of the distinct rows' entries, computed
    once for the check and the problem."""

    if data.w.uniform is None or not data.exact:
        return None
    X = np.asarray(data.X, dtype=np.float64)
    uniq = kept_unique_values(X)        # once per feature matrix: the W's of a ladder share its rows
    if split_support_count(X.shape[1], levels.coef[0], int(levels.bound),
                           _split_values(data, len(uniq[0]))) is None:
        return None
    return uniq


def _split_values(data, present: int) -> int:
    """The number of values the split's rule reads: the values a coordinate takes as declared
    in public (:attr:`privopt.search.HalfspaceData.feature_values`), so that the path is
    chosen from public quantities; the values present in X where none is declared (or where
    the declaration falls short of them: the kernels' tables are sized by what is there)."""
    declared = getattr(data, "feature_values", None)
    return present if declared is None else max(int(declared), present)


def split_supports(data, levels: EnumerationLevels | None = None) -> int | None:
    """The number of supports the split by support of this enumeration data
    has (:func:`privopt.space.split_support_count` on its d, W's grid and levels from
    ``data.w`` within the ball of ``levels``, by default W's own, and its number of
    distinct entries), or None where the split does not apply; computed without listing
    anything, so it is cheap on any ball."""
    if data.w.uniform is None or not data.exact:
        return None
    levels = enumeration_levels(data) if levels is None else levels
    X = np.asarray(data.X)
    return split_support_count(X.shape[1], levels.coef[0], int(levels.bound),
                               _split_values(data, len(np.unique(X))))


def bound_search_work(data) -> int | None:
    """Supports x distinct rows of the branch and bound by support on the
    enumeration data of a zero_one_halfspace model, or None where the split
    by support does not apply (the margin rule, a grid per coordinate, too
    many row patterns per support); raises :class:`privopt.exceptions.ModelError`
    where the grid has no exact levels.  ``solver="auto"`` and the model
    builders' ``swap_cuts="auto"`` compare it with
    :data:`privopt._limits.AUTO_MAX_BOUND_WORK`."""
    supports = split_supports(data, enumeration_levels(data))
    return None if supports is None else supports * max(int(data.X.shape[0]), 1)


class EnumerationLevels(NamedTuple):
    """The squared norm of W_tau in integer units (it unpacks as
    ``coef, bound, unit, D``)."""

    coef: tuple            #: per coordinate, the squared norm of each grid value, in units
    bound: int             #: the ball's squared radius, in units
    unit: float            #: the unit
    D: float               #: the ball's radius


def enumeration_levels(data, norm_bound=None) -> EnumerationLevels:
    """The :class:`EnumerationLevels` of the squared norm in integer units on
    the enumeration data of a zero_one_halfspace model (its ball intersected
    with ``norm_bound``'s); raises :class:`privopt.exceptions.ModelError`
    where the grid has no exact levels."""
    same = norm_bound is None or float(norm_bound) == data.norm_bound
    lv = data.w.levels if same else norm_levels(data.grid, norm_bound)    # W's own, computed once
    if not lv.exact:
        raise ModelError("solver='enumerate' needs grid values that are multiples of a common step.", "model")
    # the builder's ball and the transformation's (the same D unless the caller
    # gave another): the feasible set is their intersection, as in the MILP
    bound = min(int(lv.bound), int(math.floor(data.norm_sq_bound / lv.unit + 1e-9)))
    return EnumerationLevels(lv.coef, bound, lv.unit, lv.norm_bound)


def perturbed_problem(data, levels, noise, scale, normalize):
    """A :class:`PerturbedHalfspaceProblem` for OPDisc's oracle on a
    zero_one_halfspace model (W from ``data.w`` within the ball of ``levels``, the
    transformation's :func:`enumeration_levels`), or None where the support split does
    not apply."""
    uniq = _split_applies(data, levels)
    if uniq is None:
        return None
    return PerturbedHalfspaceProblem(data, levels, uniq=uniq, noise=noise, scale=scale, normalize=normalize)


def halfspace_problem(data, norm_bound=None):
    """A :class:`HalfspaceProblem` for the enumeration data of a
    zero_one_halfspace model: W from ``data.w``, within the ball of radius ``norm_bound``
    where one is given (:func:`enumeration_levels`), or None where it does not apply (the
    margin rule, a grid per coordinate, no 0 in the grid, too many row patterns)."""
    levels = enumeration_levels(data, norm_bound)
    uniq = _split_applies(data, levels)
    if uniq is None:
        return None
    return HalfspaceProblem(data, levels, uniq=uniq)


@functools.lru_cache(maxsize=32)
def _support_points(values: tuple, units: tuple, k: int, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-tuples of nonzero grid values within the bound and their squared norms in
    units (:func:`privopt.space.grid_points`), read-only, listed once per process for each
    (values, units, k, bound): every W of a ladder on the same grid asks for the same ones
    (a default fit's ladder about 20 of them, each of at most
    :data:`privopt._limits.MAX_REGION_POINTS` points)."""
    V, used = grid_points([values] * k, [units] * k, bound)
    used = np.asarray(used, dtype=np.int64)
    V.flags.writeable = used.flags.writeable = False
    return V, used


#: :func:`_loss_points` of read-only points still alive (W's support points, :func:`_support_points`),
#: by their identity, theta, d and the scores' dtype, each dropped when its points are collected
#: (:func:`privopt._lattice.kept_while_alive`).
_LOSS_POINTS: dict = {}


def _loss_points(V: np.ndarray, theta: float, d: int, float32: bool) -> Points:
    """:class:`privopt.search._patterns.Points` of the loss itself (no perturbation) on the
    points ``V``, scored in float32 where ``float32`` (:func:`privopt.search._patterns.float32_exact`
    of the records' values and V): public (W's grid and ball, theta, d), so made once for a
    read-only V while it is alive, which every W of a ladder on the same grid and every fit on
    it reads again; its arrays are read by the kernels, never written.  The kept Points hold a
    read-only copy of V, not V itself: an entry that held V would keep it alive, and so itself,
    for as long as the process runs."""
    def make(points: np.ndarray) -> Points:
        return points_of(points, theta, np.zeros(d), np.zeros(V.shape[0]), float32=float32)

    def kept() -> Points:
        copy = np.array(V, dtype=np.float64)
        copy.flags.writeable = False
        return make(copy)

    if V.flags.writeable:
        return make(V)
    return kept_while_alive(_LOSS_POINTS, V, (float(theta), int(d), bool(float32)), kept)


class HalfspaceProblem(RegionProblem):
    """Regions = supports of W_tau; groups = single points (see module docstring)."""

    def __init__(self, data, levels: EnumerationLevels | None = None, uniq=None):
        """W is ``data.w``: its one grid (:attr:`privopt.space.DecisionSpace.uniform`, which
        must hold 0) and its squared norms in units, within the ball of ``levels``
        (:func:`enumeration_levels`; by default W's own)."""
        levels = enumeration_levels(data) if levels is None else levels
        grid, units, bound = data.w.uniform, levels.coef[0], levels.bound
        X = np.asarray(data.X, dtype=np.float64)     # kept as digits (below): the kernels read those
        self.d = X.shape[1]
        self.pos = np.asarray(data.pos, dtype=np.int64)
        self.neg = np.asarray(data.neg, dtype=np.int64)
        self.theta = float(data.theta)
        self.feature_values = getattr(data, "feature_values", None)     # public, where declared
        self.coordinate_values = getattr(data, "coordinate_values", None)
        zero = grid.index(0.0)
        nz = [i for i in range(len(grid)) if i != zero]
        values = np.array([grid[i] for i in nz], dtype=np.float64)
        u = np.array([units[i] for i in nz], dtype=np.int64)
        U, inv = kept_unique_values(X) if uniq is None else uniq
        self.base = max(1, len(U))
        self.values = np.asarray(U, dtype=np.float64)
        self.digits_t = np.ascontiguousarray(inv.reshape(X.shape).T.astype(np.int64))
        self.records = records_of(self.digits_t, self.base, self.values, self.pos, self.neg)
        #: log of the number of distinct values of each feature among the distinct rows
        self._log_levels = np.log(np.array([max(1, np.count_nonzero(np.bincount(row, minlength=1)))
                                            for row in self.digits_t], dtype=np.float64).reshape(-1))
        self._points: dict[int, Points] = {}

        self.vectors = [np.zeros((1, 0))]
        self.units = [np.zeros(1, dtype=np.int64)]        # squared norm of each vector, in grid units
        for k in range(1, min(self.d, int(bound // u.min())) + 1):
            # k-tuples of nonzero values within the bound, listed with pruning
            V, used = _support_points(tuple(values.tolist()), tuple(u.tolist()), k, int(bound))
            self.vectors.append(V)
            self.units.append(used)
        self.k = len(self.vectors) - 1
        self.n_points = sum(math.comb(self.d, j) * self.vectors[j].shape[0] for j in range(self.k + 1))

    def n_supports(self, size):
        return math.comb(self.d, size)

    def offset(self, size):
        return sum(math.comb(self.d, j) for j in range(size))

    @property
    def n_regions(self) -> int:
        return self.offset(self.k + 1)

    def supports(self, size, start=0, stop=None):
        stop = self.n_supports(size) if stop is None else stop
        return lex_combinations(self.d, size, start, stop)

    def region_sizes(self, supports):
        return np.full(supports.shape[0], float(self.vectors[supports.shape[1]].shape[0]))

    def _objective(self, k: int) -> dict:
        """The perturbation arguments of (2) in :mod:`privopt.search._patterns`
        for supports of size k: none (the loss itself)."""
        return {"noise": np.zeros(self.d), "extra": np.zeros(self.vectors[k].shape[0]), "scale": 0.0, "den": 1.0}

    def points(self, k: int) -> Points:
        """The points of the regions of size k with their objective (made once)."""
        if k not in self._points:
            self._points[k] = self._make_points(k)
        return self._points[k]

    def _make_points(self, k: int) -> Points:
        """The loss itself: the same for every problem on the same public points, theta, d and
        scores' dtype (:func:`_loss_points`)."""
        V = self.vectors[k]
        return _loss_points(V, self.theta, self.d, float32_exact(self.records.values, V))

    def region_minima(self, supports, ceiling=math.inf, prune=True, stop_early=False, floor: Floor | None = None):
        """``(val, exact, arg)`` of :func:`privopt.search._patterns.region_minima`:
        the exact minimum of the objective over each region (and its point)
        where the region's row patterns are few and its bound reaches the
        best value so far (``ceiling``, lowered by each exact minimum when
        ``prune``; or, with a ``floor``, does not settle the sampler's test), else a
        lower bound."""
        return region_minima(self.records, supports, self.points(supports.shape[1]), ceiling=ceiling, prune=prune,
                             stop_early=stop_early, floor=floor)

    def exact_minima(self, supports):
        """The exact minimum of the objective over each region (rows of
        ``supports``, all of one size, in any order), whatever the cost of
        the histogram: what the sampler asks of a region before drawing its
        groups' noise (:func:`privopt.search._topdown.sample_shard`)."""
        return region_minima(self.records, supports, self.points(supports.shape[1]), budget=_NO_BUDGET)[0]

    def screened_minima(self, supports, region_max, best_key: float, key_scale: float, slack: float):
        """Each region's exact minimum of the objective, or a lower bound on it that
        already shows that no key ``region_max - J / key_scale`` of the region reaches
        ``best_key`` (:func:`privopt.search._patterns.screened_minima`): what the sampler
        asks of a region before drawing its groups' noise, the patterns of a region that
        cannot win counted only until that is settled.  None without numba."""
        out = screened_minima(self.records, supports, self.points(supports.shape[1]), region_max, best_key,
                              key_scale, slack, by_rows=self.many_patterns(supports))
        return None if out is None else out[0]

    def many_patterns(self, supports) -> np.ndarray:
        """Whether each support's rows may take nearly as many patterns as there are
        distinct rows: the product of its features' numbers of values is at least
        :data:`ROWS_PATTERN_SHARE` times the rows (at least :data:`ROWS_SCREEN_MIN`).  The regions of such a support are
        screened row by row, without a histogram (:func:`privopt.search._patterns.screened_minima`);
        it decides the work only, never a value."""
        rows = max(1, self.digits_t.shape[1])
        if rows < ROWS_SCREEN_MIN or 8 * self.d * rows > memory_budget() // 16:
            return np.zeros(len(supports), dtype=bool)      # few rows, or too many to copy in the rows' order
        return self._log_levels[np.asarray(supports, dtype=np.int64)].sum(axis=1) >= math.log(ROWS_PATTERN_SHARE * rows)

    def lower_bounds(self, supports):
        """A lower bound on the objective over each region, for the order in which the
        sampler visits them and the regions it never visits: its exact minimum where
        the patterns are few (every such region, whatever its value: the samplers need
        each bound as tight as it can be), else the pattern bound over the rows counted
        until the patterns were too many for the exact minimum (``stop_early``, from
        :data:`ROWS_SCREEN_MIN` rows; on fewer, the pattern bound over all of them).  A
        support of :meth:`many_patterns` is not counted at all: its bound is the
        objective's least value with no row counted (0 for the loss), and the sampler
        settles its region row by row when it comes to it (:meth:`screened_minima`)."""
        return self._bounds_exact(supports)[0]

    def lower_bounds_exact(self, supports, region_max=None, best_key: float | None = None, key_scale: float = 1.0,
                           slack: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(LB, exact)``: :meth:`lower_bounds` and whether each is the region's exact
        minimum of the objective (what the sampler would otherwise ask again,
        :meth:`screened_minima`).  With the sampler's ``best_key`` so far and the regions'
        noise maxima ``region_max`` (and its test's ``key_scale`` and ``slack``), a region
        whose bound already shows that it cannot reach the best key keeps that bound
        (:class:`privopt.search._patterns.Floor`): its histogram stops once the rows
        counted show it, no point of it is scored, and it is never visited."""
        floor = None if best_key is None else Floor(np.asarray(region_max, dtype=np.float64), float(best_key),
                                                    float(key_scale), float(slack))
        return self._bounds_exact(supports, floor)

    def _bounds_exact(self, supports, floor: Floor | None = None) -> tuple[np.ndarray, np.ndarray]:
        supports = np.asarray(supports, dtype=np.int64)
        out = np.empty(len(supports))
        exact = np.zeros(len(supports), dtype=bool)
        many = self.many_patterns(supports) if supports.shape[1] else np.zeros(len(supports), dtype=bool)
        if not many.any():          # every support counted: no copies of a part
            return self._counted_bounds(supports, floor, None)
        out[many] = self._uncounted_bounds(supports[many])
        if not many.all():
            out[~many], exact[~many] = self._counted_bounds(supports, floor, ~many)
        return out, exact

    def _counted_bounds(self, supports, floor: Floor | None, part) -> tuple[np.ndarray, np.ndarray]:
        """``(LB, exact)`` from the supports' histograms (:meth:`region_minima`, stopped early from
        :data:`ROWS_SCREEN_MIN` rows; with the sampler's ``floor``, those that cannot win left
        with their bounds), for the supports ``part`` selects (all of them where None)."""
        if part is not None:
            supports = np.ascontiguousarray(supports[part])
            floor = None if floor is None else floor.restricted(part)
        val, ok, _ = self.region_minima(supports, prune=False, stop_early=self.digits_t.shape[1] >= ROWS_SCREEN_MIN,
                                        floor=floor if supports.shape[1] else None)
        return val, ok

    def _uncounted_bounds(self, supports) -> np.ndarray:
        """min over each region's points of J = L - scale * pert with L = 0: minus scale
        times the largest perturbation term ((2) of :mod:`privopt.search._patterns`)."""
        pts = self.points(supports.shape[1])
        if pts.scale == 0.0:
            return np.zeros(len(supports))
        pert = (pts.noise[supports] @ pts.V.T + pts.extra[None, :]) / pts.den
        return -pts.scale * pert.max(axis=1)

    def _values(self, support):
        """``(loss, J)`` of every point of the region of ``support``."""
        support = np.asarray(support, dtype=np.int64)
        return support_values(self.records, support, self.points(len(support)))

    def losses(self, support) -> np.ndarray:
        """The 0/1 loss of every point of the region of ``support``."""
        return self._values(support)[0]

    def group_errors(self, support):
        err = self.losses(support)
        return err, np.ones(err.shape[0], dtype=np.int64), lambda g: err[g:g + 1]

    def decode(self, region: int, group: int) -> np.ndarray:
        """The point of W_tau of a candidate (region, group)."""
        size = 0
        while self.offset(size + 1) <= region:
            size += 1
        support = self.supports(size, region - self.offset(size), region - self.offset(size) + 1)[0]
        w = np.zeros(self.d)
        w[support] = self.vectors[size][group]
        return w

    def predicted_seconds(self, n_records: int) -> float:
        """The lower-bound pass on one core, with n standing in for the
        (data-dependent) number of distinct rows."""
        return self.n_regions * max(1, int(n_records)) / BOUND_ROWS_PER_SECOND

    def public_work(self) -> SupportWork:
        """The supports of W, the sum over them of (points of the region) x (support size),
        the points of one support of each size and the values a coordinate takes as
        declared (:class:`privopt.space.SupportWork`), from public sizes only (d, the grid,
        the ball, the declaration): what the bound pass and the exact-minima phase visit."""
        sizes = tuple(int(self.vectors[j].shape[0]) for j in range(1, self.k + 1))
        work = sum(math.comb(self.d, j) * sizes[j - 1] * j for j in range(1, self.k + 1))
        return SupportWork(int(self.n_regions), int(work), int(self.d), sizes, self.feature_values,
                           self.coordinate_values)

    def sampling_seconds(self, n_records: int, cost: TopDownCost | None = None) -> float:
        """A top-down draw from W, predicted from public sizes only (:class:`TopDownCost`,
        :func:`topdown_seconds` on :meth:`public_work` and n); the kernels' threads are not
        counted (on a machine shared with other work they barely shorten a draw)."""
        return topdown_seconds(self.public_work(), n_records, cost)


class PerturbedHalfspaceProblem(HalfspaceProblem):
    r"""OPDisc's oracle objective on W_tau, split by support, for its exact
    branch and bound (:func:`privopt.search._topdown.optimum_shard`):

        J(w) = L(w) - scale * <eta, pi(w)>,   pi(w) = (w, sqrt(D^2 - ||w||^2)) / D

    (normalized; ``pi(w) = w`` without normalization), exactly as
    ``solver="enumerate"`` computes it.  Each region's minimum comes from the
    histogram of the rows' patterns on its support (:func:`region_minima` of
    :mod:`privopt.search._patterns`) where the patterns are few; elsewhere
    its lower bound is the pattern bound on L minus scale times the largest
    perturbation term of the region's points (public W and the noise only)."""

    def __init__(self, data, levels: EnumerationLevels, *, noise, scale, normalize, uniq=None):
        super().__init__(data, levels, uniq=uniq)
        self.noise = np.asarray(noise, dtype=np.float64)
        self.scale, self.normalize = float(scale), bool(normalize)
        self.unit, self.D = float(levels.unit), float(levels.D) if levels.D is not None else 1.0

    def slack(self, k: int) -> np.ndarray:
        """s = sqrt(D^2 - ||v||^2) of each vector of size k (normalized only)."""
        return np.sqrt(np.maximum(0.0, self.D * self.D - self.units[k] * self.unit))

    def _make_points(self, k: int) -> Points:
        return points_of(self.vectors[k], self.theta, **self._objective(k), values=self.records.values)

    def _objective(self, k: int) -> dict:
        extra = (self.noise[self.d] * self.slack(k) if self.normalize
                 else np.zeros(self.vectors[k].shape[0]))
        return {"noise": self.noise, "extra": extra, "scale": self.scale,
                "den": self.D if self.normalize else 1.0}

    def group_errors(self, support):
        J = self._values(support)[1]
        return J, np.ones(J.shape[0], dtype=np.int64), lambda g: J[g:g + 1]

    def slack_of(self, region: int, group: int) -> float:
        size = 0
        while self.offset(size + 1) <= region:
            size += 1
        return float(self.slack(size)[group])
