"""W in the exact units of its grid: the view the 0/1-loss models read.

The exact margin of the 0/1 models ([NRVW20], Section 5) counts scores and ||w||^2 in
integers: every grid value an integer multiple of the grid's unit h (1 for a grid of whole
numbers, else :func:`privopt.space.common_step`), and D^2 as floor(D^2 / h^2) units of h^2.
:class:`GridUnits` holds that view of one W (the grid and the ball only, no data), derived
once per :class:`privopt.space.DecisionSpace` (:attr:`DecisionSpace.exact_units`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._lattice import SNAP_TOL, check_norm_square, grid_separation, snapped_floor
from .._validation import check_positive
from ..exceptions import ParameterError
from ._grid import common_step

__all__ = ["GridUnits", "grid_units_of", "integral_typed", "grid_unit", "grid_units", "norm_sq_units"]


def integral_typed(grids) -> tuple:
    """The grids with each coordinate of whole numbers as Python ints (the exact margin reads
    them as integers, :func:`grid_unit`), the others as they are."""
    return tuple(tuple(int(v) for v in g) if all(v == round(v) for v in g) else g for g in grids)


def grid_unit(grid: tuple, name: str = "grid") -> Fraction:
    """1 for integral grids (the exact margin counts in whole grid values),
    otherwise the common step h of :func:`privopt.space.common_step`, every
    grid value an integer multiple of h (raises when there is none)."""
    flat = [v for g in grid for v in g]
    if all(isinstance(v, int) for v in flat):
        return Fraction(1)
    h = common_step(flat)
    if h is None:
        raise ParameterError(
            f"{name} values are not multiples of a common rational step, so scores and "
            "||w||^2 cannot be computed exactly; use a tau-grid such as np.arange(-1, 1.01, 0.25).",
            name,
        )
    return h


def grid_units(grid: tuple, unit: Fraction) -> list[list[int]]:
    """Grid values as exact integers in units of ``unit`` (worked out once per grid and unit
    in a process: the W's of a ladder share their grids)."""
    return [list(g) for g in _grid_units(tuple(tuple(float(v) for v in g) for g in grid), Fraction(unit))]


@functools.lru_cache(maxsize=256)
def _grid_units(grid: tuple, unit: Fraction) -> tuple:
    return tuple(tuple(int(round(Fraction(v).limit_denominator(10**9) / unit)) for v in g) for g in grid)


def norm_sq_units(norm_bound: float, unit: Fraction, exact_sq: Fraction | None = None) -> int:
    """floor(D^2 / unit^2), computed exactly: ``exact_sq`` when the caller knows
    D^2 exactly (the default D = sqrt(d)); otherwise D**2 is snapped to a
    nearby integer multiple of unit^2 within :data:`privopt._lattice.SNAP_TOL` (relative),
    so that D = sqrt(23) gives 23 and not 22."""
    if exact_sq is not None:
        return int(math.floor(exact_sq / (unit * unit)))
    return snapped_floor(float(norm_bound) ** 2 / float(unit * unit), SNAP_TOL)


@dataclass(frozen=True)
class GridUnits:
    """One W in its grid's exact units (module docstring): ``grid``, the grids with whole
    coordinates as ints (:func:`integral_typed`); ``unit``, h (:func:`grid_unit`); ``D``;
    ``n_units``, floor(D^2 / h^2) (:func:`norm_sq_units`); ``units``, the grid in units of h;
    ``tau``, the grid's separation; the three diameters of the models' info, each the smaller
    of the grid's box and the ball's 2D (``min(range, 2D)`` in l_inf, ``min(||ranges||_2, 2D)``
    in l_2, ``min(sum ranges, 2D sqrt(d))`` in l_1, D here the rounded ball sqrt(n_units h^2))."""

    grid: tuple
    unit: Fraction
    D: float
    n_units: int
    units: tuple
    tau: float
    linf_diameter: float
    l2_diameter: float
    l1_diameter: float


def grid_units_of(grids, norm_bound: float | None) -> GridUnits:
    """:class:`GridUnits` of parsed ``grids`` (:func:`privopt.space.parse_grid`) and the ball
    of radius ``norm_bound`` (None: the models' default D = sqrt(d), D^2 = d exactly), with
    their checks in this order: the grid's step, D > 0, D^2 finite, some grid point in the ball."""
    grid_t = integral_typed(grids)
    unit = grid_unit(grid_t)
    d = len(grid_t)
    if norm_bound is None:
        D, exact_sq = math.sqrt(d), Fraction(d)
    else:
        D, exact_sq = check_positive(norm_bound, "norm_bound"), None
    check_norm_square(D, grid_t)          # a D whose square overflows, refused naming the equivalent one
    units = grid_units(grid_t, unit)
    n_units = norm_sq_units(D, unit, exact_sq)
    min_units = sum(min(u * u for u in g) for g in units)
    if min_units > n_units:
        raise ParameterError(
            f"norm_bound={D:g} excludes every grid point (the smallest ||w||^2 on the grid is "
            f"{float(min_units * unit * unit):g} > D^2); include 0 in the grid or raise norm_bound.",
            "norm_bound",
        )
    lo = np.array([g[0] for g in grid_t], dtype=float)
    hi = np.array([g[-1] for g in grid_t], dtype=float)
    ball = math.sqrt(float(n_units * unit * unit))
    ranges = hi - lo
    return GridUnits(grid=grid_t, unit=unit, D=float(D), n_units=n_units, units=tuple(tuple(u) for u in units),
                     tau=grid_separation(grid_t), linf_diameter=float(min(ranges.max(), 2 * ball)),
                     l2_diameter=float(min(np.sqrt((ranges ** 2).sum()), 2 * ball)),
                     l1_diameter=float(min(ranges.sum(), 2 * ball * np.sqrt(len(ranges)))))
