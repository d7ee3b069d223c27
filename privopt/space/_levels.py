"""The exact levels of ||w||^2 on a grid of W within the ball ||w||_2 <= D.

With D = sqrt(23), ``D**2`` is 22.999999999999996, so the levels are computed in
integers wherever the grid is a multiple of a common step (:func:`privopt.space.common_step`),
and D^2 is snapped onto the integer multiple it represents.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from .._lattice import SNAP_TOL, check_grid_size, check_norm_square, snapped_floor
from ..exceptions import ParameterError
from ._grid import common_step

__all__ = ["NormLevels", "norm_levels", "MAX_LEVELS", "MAX_LEVEL_WORK"]

#: The largest number of distinct ||w||^2 values privopt encodes.  (The
#: largest grid per coordinate, MAX_GRID_SIZE, is :data:`privopt._lattice.MAX_GRID_SIZE`.)
MAX_LEVELS = 100_000
#: The most (partial sums x grid values) the dynamic programme of
#: :func:`norm_levels` may visit (a few seconds): beyond it the levels are
#: refused before the work, not after it.
MAX_LEVEL_WORK = 20_000_000
_REL_TOL = SNAP_TOL


@dataclass(frozen=True)
class NormLevels:
    """The possible values of ||w||^2 on the grid within the ball.

    ``coef[j][k]`` is the contribution of grid value k of coordinate j to
    ||w||^2 in units of ``unit`` (so ``||w||^2 = unit * sum_jk coef[j][k] r[j,k]``);
    ``levels`` are the attainable (or, for integer units, all integer)
    values of that sum within the ball, in the same units; ``bound`` is the
    ball's D^2 in those units (an int when ``exact``).
    """

    unit: float
    coef: tuple
    levels: tuple
    bound: float
    exact: bool
    norm_bound: float  # D actually used (snapped when D^2 is within 1e-9 of a level)


def norm_levels(grids, norm_bound: float) -> NormLevels:
    """Encode ||w||^2 on the grid exactly (:func:`_norm_levels`), worked out once per grid
    and ball in a process (both public; a fit's ladder asks for the same ones dozens of
    times): the cache is keyed by every value with its type, so it returns what a fresh
    computation would, and a refusal is raised again on every call."""
    try:
        values = tuple(map(tuple, grids))
        key = (values, tuple(map(type, itertools.chain.from_iterable(values))), type(norm_bound), norm_bound)
        hash(key)
    except TypeError:          # an unhashable entry: computed, as before, every time
        return _norm_levels(grids, norm_bound)
    return _cached_norm_levels(key)


@functools.lru_cache(maxsize=512)
def _cached_norm_levels(key) -> NormLevels:
    return _norm_levels(list(key[0]), key[3])


def _norm_levels(grids, norm_bound: float) -> NormLevels:
    """Encode ||w||^2 on the grid exactly.

    When every grid value is an integer multiple of a step h, ||w||^2 is an
    integer multiple of h^2 and the levels are the integers
    0..floor(D^2 / h^2), computed without floating-point error (a D^2 within a
    relative 1e-9 of an integer multiple is snapped to it, so D = sqrt(23)
    admits ||w||^2 = 23).  Otherwise the attainable sums are enumerated by
    dynamic programming over coordinates (at most ``MAX_LEVELS``).
    """
    check_grid_size(list(grids), "grid")
    d2 = check_norm_square(norm_bound, grids)
    all_values = sorted({v for g in grids for v in g})
    step = common_step(all_values)
    fine_step = step is not None and d2 / float(step) ** 2 > MAX_LEVELS
    if fine_step:
        step = None  # too fine a common step: enumerate the attainable sums instead
    if step is not None:
        h = float(step)
        unit = h * h
        coef = tuple(tuple(int(round(v / h)) ** 2 for v in g) for g in grids)
        n = snapped_floor(d2 / unit)  # 22.999999999999996 -> 23
        d_used = math.sqrt(n * unit) if abs(n * unit - d2) <= _REL_TOL * max(1.0, d2) else float(norm_bound)
        lo = sum(min(c) for c in coef)
        levels = tuple(range(lo, n + 1)) if lo <= n else ()
        result = NormLevels(unit, coef, levels, n, True, d_used)
    else:
        coef = tuple(tuple(v * v for v in g) for g in grids)
        sums = {0.0}
        for c in coef:
            if len(sums) * len(c) > MAX_LEVEL_WORK:
                name = "norm_bound" if fine_step else "grid"
                raise ParameterError(
                    f"{name}: ||w||^2 takes too many distinct values on this grid within norm_bound="
                    f"{norm_bound!r} to list them (over {MAX_LEVELS:,} levels in units of the grid's step, "
                    "or an irregular grid); use a smaller norm_bound, a coarser grid, or a grid whose "
                    "values are multiples of a common step.", name)
            sums = {round(s + x, 12) for s in sums for x in c if s + x <= d2 * (1 + _REL_TOL)}
            if len(sums) > MAX_LEVELS:
                raise ParameterError(
                    "grid: ||w||^2 takes too many distinct values on this irregular grid; use a "
                    "grid whose values are multiples of a common step.",
                    "grid",
                )
        result = NormLevels(1.0, coef, tuple(sorted(sums)), d2, False, float(norm_bound))
    if not result.levels:
        raise ParameterError(
            f"norm_bound: no grid point satisfies ||w||_2 <= {norm_bound} (the smallest norm on the "
            f"grid is {math.sqrt(sum(min(v * v for v in g) for g in grids)):.6g}); raise norm_bound.",
            "norm_bound",
        )
    return result
