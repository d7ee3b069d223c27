"""W, the discrete decision set, as one frozen record: :class:`DecisionSpace`.

W = {w : w_j in grids[j] for every coordinate j, ||w||_2 <= D, and the declared separable
rows lower_r <= offset_r + sum_j t_rj(w_j) <= upper_r}: the per-coordinate grids (sorted
tuples of values, :func:`privopt.space.parse_grid`), the ball (D, None for none; on
privopt's 0/1-loss models also D^2 as the builder rounded it onto the grid's units) and the
declared rows on the decision (a :class:`privopt.space.SeparableConstraints`, the ball not
among them; None for none).  Every other view of W is derived from these, computed on
first use and kept: the exact levels of ||w||^2 (:attr:`DecisionSpace.levels`,
:func:`privopt.space.norm_levels`), the ball as a separable row and the rows with the ball
(:attr:`DecisionSpace.ball`, :attr:`DecisionSpace.separable`), the one grid every
coordinate shares (:attr:`DecisionSpace.uniform`), the size of the product and |W|
(:attr:`DecisionSpace.product_size`, :attr:`DecisionSpace.size`), the split by support's
work (:meth:`DecisionSpace.support_work`), the points (:meth:`DecisionSpace.points`), W in
its grid's exact units as the 0/1-loss models read it (:attr:`DecisionSpace.exact_units`) and
W with its ball rounded onto those units (:attr:`DecisionSpace.on_units`).

:func:`public_w` is the one place W is made from public inputs alone (a ``grid=`` argument,
d and the ball), kept once per process where the inputs are plain numbers: the default
estimator's ladder and the 0/1-loss model built for each of its W's read the same record.

Every layer reads this one record: the search engine's halfspace data holds it
(:class:`privopt.search.HalfspaceData`), the prefix tree is built from it
(:meth:`privopt.search.PrefixSpace.of`), W of a user's model is read from the Pyomo model
into it (:class:`privopt.mechanisms.selection._decision.DecisionSet`), and private selection's
record of W holds it (:class:`privopt.mechanisms.selection._w.SelectionW`).  Public
quantities only, numpy only: nothing here reads data or Pyomo.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validation import check_real
from ..exceptions import ParameterError, ParameterTypeError
from ._constrained import SeparableConstraints, constrained_points, count_constrained_points
from ._grid import parse_grid
from ._levels import NormLevels, norm_levels
from ._points import grid_points, product_size, uniform_grid
from ._support import SupportWork, split_support_work
from ._units import GridUnits, grid_unit, grid_units_of, integral_typed

__all__ = ["DecisionSpace", "public_w"]


@dataclass(frozen=True, eq=False)
class DecisionSpace:
    """W (module docstring): ``grids``, one sorted tuple of floats per coordinate;
    ``norm_bound``, D of the ball ||w||_2 <= D (None: no ball); ``norm_sq_bound``, D^2 as a
    model builder rounded it onto the grid's units (None: D^2 itself); ``constraints``, the
    declared separable rows on the decision, the ball not among them (None: none).

    Frozen; the derived views (properties below) are computed once, on first use."""

    grids: tuple
    norm_bound: float | None = None
    norm_sq_bound: float | None = None
    constraints: SeparableConstraints | None = None

    @classmethod
    def of(cls, grid, d: int, norm_bound: float | None = None, *, name: str = "grid",
           min_values: int = 1) -> "DecisionSpace":
        """W from a ``grid=`` argument (:func:`privopt.space.parse_grid`, errors naming
        ``name``) on ``d`` coordinates inside the ball of radius ``norm_bound``."""
        return cls(parse_grid(grid, d, name, min_values=min_values),
                   None if norm_bound is None else float(norm_bound))

    @property
    def d(self) -> int:
        """The coordinates of w."""
        return len(self.grids)

    @functools.cached_property
    def levels(self) -> NormLevels:
        """The exact levels of ||w||^2 within the ball (:func:`privopt.space.norm_levels`);
        raises :class:`privopt.exceptions.ParameterError` where no grid point is in it."""
        if self.norm_bound is None:
            raise ValueError("W has no ball: its levels of ||w||^2 are not defined")
        return norm_levels(self.grids, self.norm_bound)

    @functools.cached_property
    def uniform(self) -> tuple | None:
        """The one grid every coordinate shares when it holds 0, else None
        (:func:`privopt.space.uniform_grid`)."""
        return uniform_grid(self.grids)

    @functools.cached_property
    def product_size(self) -> int:
        """The number of points of the product of the grids (:func:`privopt.space.product_size`)."""
        return product_size(self.grids)

    @functools.cached_property
    def ball(self) -> SeparableConstraints | None:
        """The ball ||w|| <= D as one separable row (None: no ball): in the exact integer
        units of :attr:`levels` where it has them (tested exactly), else on the squares of
        the values with D^2 (1 + 1e-12), as the fix-and-solve evaluator tests it."""
        if self.norm_bound is None:
            return None
        lv = self.levels
        if lv.exact:
            ball, top = [np.asarray(c, dtype=np.float64) for c in lv.coef], float(lv.bound)
        else:
            ball = [np.asarray(g, dtype=np.float64) ** 2 for g in self.grids]
            top = self.norm_bound ** 2 * (1 + 1e-12)
        return SeparableConstraints([b[None, :] for b in ball], [-np.inf], [top], [0.0], [0.0])

    @functools.cached_property
    def separable(self) -> SeparableConstraints | None:
        """The declared rows with the ball as one more row (last, exact: ``rtol`` 0); the
        ball alone without declared rows; None with neither."""
        cons, ball = self.constraints, self.ball
        if cons is None:
            return ball
        if ball is None:
            return cons
        tables = [np.vstack([t, b]) for t, b in zip(cons.tables, ball.tables)]
        return SeparableConstraints(tables, list(cons.lower) + [-np.inf], list(cons.upper) + [float(ball.upper[0])],
                                    list(cons.offset) + [0.0], list(cons.rtol) + [0.0])

    @functools.cached_property
    def size(self) -> int | None:
        """|W|: counted through :attr:`separable` by dynamic programming
        (:func:`privopt.space.count_constrained_points`; None where its numbers are too
        irregular to count), the product's size where W is the product."""
        sep = self.separable
        return self.product_size if sep is None else count_constrained_points(sep)

    def support_work(self, n_values: int) -> SupportWork | None:
        """The split by support's :class:`privopt.space.SupportWork` of W for records whose
        entries take ``n_values`` distinct values, where
        :func:`privopt.space.split_support_count`'s rule lets W split (one grid with 0 for
        every coordinate, exact levels, the ball's limits), else None."""
        if self.uniform is None or self.norm_bound is None or self.constraints is not None:
            return None
        lv = self.levels
        if not lv.exact:
            return None
        return split_support_work(self.d, lv.coef[0], int(lv.bound), n_values)

    @functools.cached_property
    def exact_units(self) -> GridUnits:
        """W in its grid's exact units (:func:`privopt.space.grid_units_of` of :attr:`grids` and
        :attr:`norm_bound`; no ball: the models' default D = sqrt(d)), the view the 0/1-loss
        models read; raises :class:`privopt.exceptions.ParameterError` (each time it is
        asked) where the grid has no common step or the ball holds no grid point."""
        return grid_units_of(self.grids, self.norm_bound)

    @functools.cached_property
    def on_units(self) -> "DecisionSpace":
        """W as the 0/1-loss models' halfspace data hold it: the grids of
        :attr:`exact_units` (whole coordinates as ints), its D, and D^2 rounded onto the grid's
        units (``n_units * unit^2``) as :attr:`norm_sq_bound`."""
        u = self.exact_units
        return DecisionSpace(u.grid, u.D, float(u.n_units * u.unit * u.unit))

    def points(self) -> np.ndarray:
        """The points of W (shape (|W|, d)), in the product grid's order (the last coordinate
        most significant): :func:`privopt.space.constrained_points` through
        :attr:`separable`, or the product where W is the product (raises ValueError where
        the rows' numbers are too irregular to list through)."""
        sep = self.separable
        if sep is not None:
            return constrained_points(self.grids, sep)
        values, _ = grid_points(self.grids, [[0] * len(g) for g in self.grids], 0)
        return values


def public_w(grid, d: int, norm_bound=None, *, min_values: int = 1, exact_units: bool = False) -> DecisionSpace:
    """W from public inputs alone (:meth:`DecisionSpace.of`: a ``grid=`` argument on ``d``
    coordinates, errors naming ``grid``, at least ``min_values`` values per coordinate; the
    ball of radius ``norm_bound``, a real number checked before it is read, None for none).

    Kept once per process (one record, its derived views with it) where the grid is None or
    an int B and the ball None or a float or an int: public numbers only, and the default
    estimator asks for its ladder's W's several times per fit and again at every fit, and the
    0/1-loss model built for each of them reads the same record.  Any other grid is made at
    each call (it may be a large array; equal grids of other types give equal records).
    ``exact_units``: the caller reads :attr:`DecisionSpace.exact_units` (the 0/1 models), so a
    grid without a common step is refused before a ball that is not a real number."""
    d = int(d)
    if ((grid is None and d >= 1) or type(grid) is int) and (norm_bound is None or type(norm_bound) in (float, int)):
        return _kept_public_w(grid, d, norm_bound)       # B >= 1 or B = floor(sqrt(d)) >= 1: min_values moot
    return _made_public_w(grid, d, norm_bound, min_values, exact_units)


@functools.lru_cache(maxsize=256)
def _kept_public_w(grid, d: int, norm_bound) -> DecisionSpace:
    return _made_public_w(grid, d, norm_bound, 1, False)


def _made_public_w(grid, d: int, norm_bound, min_values: int, exact_units: bool) -> DecisionSpace:
    grids = parse_grid(grid, d, "grid", min_values=min_values)
    if norm_bound is not None:
        try:
            norm_bound = check_real(norm_bound, "norm_bound")
        except (ParameterError, ParameterTypeError):
            if exact_units:
                grid_unit(integral_typed(grids))      # the grid's own refusal first, as W's units are read
            raise
    return DecisionSpace(grids, norm_bound)
