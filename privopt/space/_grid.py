"""A grid of W: the one parser of a ``grid=`` argument and the one rule for its common step.

W_tau is a product of per-coordinate grids intersected with the ball ||w||_2 <= D.  Every
place that takes a grid from a caller (the model builders of :mod:`privopt.models`, the
Pyomo transformation and the mechanisms through :func:`privopt.perturbation.resolve_grids`)
parses it here, and every place that needs the grid in integer units (the exact margin of
the 0/1 models, the exact levels of ||w||^2) finds its step with :func:`common_step`.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .._lattice import check_grid_size
from ..exceptions import ParameterError, ParameterTypeError

__all__ = ["parse_grid", "default_grid_bound", "common_step", "STEP_MAX_DENOMINATOR", "STEP_TOL"]

#: The largest denominator a grid's common step may have (as a fraction of
#: its values): steps such as 1/2, 1/4, 0.1 or 1/1024 are found, finer ones are not.
STEP_MAX_DENOMINATOR = 10**4
#: A grid value is a multiple of the step when it is within this relative
#: distance of one: the float of a rational with a small denominator (0.1, or
#: 0.30000000000000004 from np.arange) is, a decimal that merely approximates
#: one (0.333333333) is not, so "exact" means exact.
STEP_TOL = 1e-12


def default_grid_bound(d: int) -> int:
    """B of the default grid -B..B: floor(sqrt(d)) ([NRVW20], Section 5)."""
    return math.isqrt(d)


def _coordinate(values, name: str, param: str, min_values: int) -> tuple:
    """One coordinate's grid: its distinct finite values, sorted, as floats."""
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must contain numbers: {exc}", param) from exc
    if arr.ndim != 1:
        raise ParameterError(f"{name}: each coordinate's grid must be a 1-D sequence of values.", param)
    if arr.size < min_values:
        need = "at least one value" if min_values <= 1 else f"at least {min_values} values"
        raise ParameterError(f"{name}: a coordinate grid needs {need}, got {arr.tolist()}.", param)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values.", param)
    arr = np.sort(arr)
    if np.any(np.diff(arr) <= 0):
        raise ParameterError(f"{name} contains repeated values ({arr.tolist()}); give each value once.", param)
    return tuple(float(v) for v in arr)


def parse_grid(grid, d: int, name: str = "grid", *, min_values: int = 1) -> tuple[tuple[float, ...], ...]:
    """Per-coordinate grids of W, one sorted tuple of floats per coordinate.

    ``None``: the integers -B..B with B = :func:`default_grid_bound` (d); an int
    B >= 1: the integers -B..B; a 1-D sequence: the same values for every
    coordinate; a sequence of d sequences (or a (d, K) array): one grid per
    coordinate.  ``min_values``: the fewest values a coordinate may have (the
    model builders need 2; a user's model may fix a coordinate with one).
    A coordinate with more than :data:`privopt._lattice.MAX_GRID_SIZE` values
    is refused from the grid's length (or B) before any value is converted.
    Errors name ``name``.
    """
    if grid is None:
        b = default_grid_bound(d)
        check_grid_size(b, name, derived=f"the default grid -B..B with B = floor(sqrt(d)) = {b}: ")
        return (tuple(float(v) for v in range(-b, b + 1)),) * d
    if isinstance(grid, bool):
        raise ParameterTypeError(f"{name} must be None, an int B, or a sequence of values.", name)
    check_grid_size(grid, name)
    if isinstance(grid, numbers.Integral):
        b = int(grid)
        if b < 1:
            raise ParameterError(f"{name}=B means the integers -B..B and needs B >= 1, got {b}.", name)
        return (tuple(float(v) for v in range(-b, b + 1)),) * d
    if isinstance(grid, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be None, an int B (grid -B..B) or a sequence of values, got the float {grid!r}.", name)
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__"):
        raise ParameterTypeError(
            f"{name} must be None, an int B, or a sequence of values, got {type(grid).__name__}.", name)
    if len(grid) == 0:
        raise ParameterError(f"{name} is empty; give at least one value.", name)
    first = grid[0]
    nested = hasattr(first, "__len__") and not isinstance(first, (str, bytes))
    if not nested:
        return (_coordinate(grid, name, name, min_values),) * d
    if len(grid) != d:
        raise ParameterError(
            f"{name} gives {len(grid)} per-coordinate grids but there are {d} coordinates; give one per "
            "coordinate, or one sequence for all.", name)
    rectangular = _rectangular(grid, name, min_values)
    if rectangular is not None:
        return rectangular
    return tuple(_coordinate(g, f"{name}[{j}]", name, min_values) for j, g in enumerate(grid))


def _rectangular(grid, name: str, min_values: int) -> tuple[tuple[float, ...], ...] | None:
    """A per-coordinate grid whose coordinates all have the same number of finite, distinct
    values, parsed at once as a (d, K) array (the same tuples as :func:`_coordinate`, one per
    row, a row's tuple shared by the rows equal to it); None where it is not one (ragged, or
    a coordinate is refused: the coordinate-by-coordinate path then names it).  A million
    coordinates: about a second instead of 40."""
    try:
        arr = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2 or arr.shape[1] < max(1, min_values) or not np.all(np.isfinite(arr)):
        return None
    arr = np.sort(arr, axis=1)
    if arr.shape[1] > 1 and np.any(np.diff(arr, axis=1) <= 0):
        return None
    if np.all(arr == arr[0]):
        return (tuple(float(v) for v in arr[0]),) * arr.shape[0]
    rows, inverse = np.unique(arr, axis=0, return_inverse=True)
    tuples = [tuple(float(v) for v in row) for row in rows]
    return tuple(tuples[i] for i in inverse.ravel().tolist())


def common_step(values) -> Fraction | None:
    """The largest step h (an exact Fraction) such that every value is an
    integer multiple of h, or None when there is none.

    Integer values: their gcd (computed vectorized).  Otherwise each value is
    read as the fraction nearest its decimal representation with a denominator
    at most :data:`STEP_MAX_DENOMINATOR`, and must be within :data:`STEP_TOL`
    (relative) of it; h is the gcd of those fractions.  All-zero input gives 1.
    """
    nonzero = [float(v) for v in np.asarray(values, dtype=float).ravel() if v != 0]
    if not nonzero:
        return Fraction(1)
    arr = np.asarray(nonzero, dtype=float)
    if np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2.0**53):
        return Fraction(int(np.gcd.reduce(np.abs(arr).astype(np.int64))))
    fracs = [Fraction(repr(v)).limit_denominator(STEP_MAX_DENOMINATOR) for v in nonzero]
    if any(abs(float(f) - v) > STEP_TOL * max(1.0, abs(v)) for f, v in zip(fracs, nonzero)):
        return None
    den = math.lcm(*(f.denominator for f in fracs))
    num = math.gcd(*(int(f * den) for f in fracs))
    return Fraction(num, den)
