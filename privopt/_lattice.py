"""Exact arithmetic on grids, shared by the model builders
(:mod:`privopt.models`) and the objective-perturbation transformation
(:mod:`privopt.perturbation`): one definition of a grid's separation and of
the floating-point-safe floor that turns D^2 into a count of grid units
(with D = sqrt(23), ``D**2`` is 22.999999999999996)."""

from __future__ import annotations

import math
import numbers
import weakref
from typing import Callable, TypeVar

import numpy as np

from .exceptions import ParameterError

__all__ = ["SNAP_TOL", "MAX_GRID_SIZE", "grid_separation", "snapped_floor", "check_grid_size",
           "check_norm_square", "unique_values", "kept_unique_values", "kept_while_alive"]

T = TypeVar("T")

#: Relative tolerance within which a float is taken to be the integer just above it.
SNAP_TOL = 1e-9

#: The most values one coordinate's grid may have.  Every consumer of a grid
#: builds something per value (a binary r[j, k] of the MILP, an exact
#: fraction, a squared-norm coefficient), so a grid is refused above this
#: from its length alone, before any of that is built.
MAX_GRID_SIZE = 10_000


def grid_separation(grids) -> float:
    """tau of a product grid: the smallest gap between two values of one
    coordinate (two distinct points differ in at least one coordinate by at
    least that much, and points differing in one coordinate by exactly that
    much exist).  ``inf`` when every coordinate has a single value."""
    gaps = [float(np.min(np.diff(np.asarray(g, dtype=float)))) for g in grids if len(g) > 1]
    return min(gaps) if gaps else math.inf


def snapped_floor(q: float, rel_tol: float = SNAP_TOL) -> int:
    """floor(q), except that a q within ``rel_tol`` (relative) below an
    integer counts as that integer: 22.999999999999996 -> 23."""
    near = round(q)
    if abs(q - near) <= rel_tol * max(1.0, abs(q)):
        return int(near)
    return int(math.floor(q))


def _grid_count(grid):
    """Values per coordinate of ``grid`` as the model builders read it (an
    int B: the 2B + 1 integers -B..B), from lengths alone, without building
    the grid; None where the length is not known without iterating."""
    if grid is None or isinstance(grid, (bool, str, bytes)):
        return None
    if isinstance(grid, numbers.Integral):
        b = int(grid)
        return [2 * b + 1] if b >= 1 else None   # B < 1 is the parser's to refuse
    if not hasattr(grid, "__len__"):
        return None
    try:
        first = grid[0] if len(grid) else None
    except (TypeError, IndexError, KeyError):
        return [len(grid)]
    if first is not None and hasattr(first, "__len__") and not isinstance(first, (str, bytes)):
        return [len(g) if hasattr(g, "__len__") else 0 for g in grid]
    return [len(grid)]


def check_grid_size(grid, name: str = "grid", *, derived: str = "") -> None:
    """Refuse a grid with more than :data:`MAX_GRID_SIZE` values in one
    coordinate, from its length alone (``range(-10**7, 10**7)`` is refused at
    once instead of becoming 2e7 floats and fractions).  ``grid`` is an int B
    (-B..B), a sequence of values, or one sequence per coordinate; anything
    else is left to the grid parser.  ``derived``: how ``grid`` came from the
    parameter ``name`` when the caller did not give it (the message says so)."""
    counts = _grid_count(grid)
    if not counts or max(counts) <= MAX_GRID_SIZE:
        return
    j = counts.index(max(counts))
    where = f" (coordinate {j})" if len(counts) > 1 else ""
    size = f"{max(counts):,}" if max(counts) < 10**15 else f"{float(max(counts)):.3g}"
    raise ParameterError(
        f"{name}: {derived}the grid has {size} values per coordinate{where}; privopt accepts at "
        f"most {MAX_GRID_SIZE:,} (it builds a binary variable, an exact fraction and a squared-norm level "
        "per value). Use a coarser grid, e.g. grid=B for the integers -B..B with B <= "
        f"{(MAX_GRID_SIZE - 1) // 2:,}, or np.linspace(-B, B, 21).", name)


def check_norm_square(norm_bound, grids=None) -> float:
    """D^2 as a finite float, or a :class:`ParameterError` naming ``norm_bound``
    (``1e300 ** 2`` overflows: every level, unit and constraint built from D^2
    would fail or spin).  With ``grids`` the message gives the largest norm on
    the grid, above which every D gives the same W."""
    try:
        d2 = float(norm_bound) ** 2
    except OverflowError:
        d2 = math.inf
    if math.isfinite(d2):
        return d2
    hint = ""
    if grids is not None:
        largest = math.sqrt(sum(max(float(v) * float(v) for v in g) for g in grids))
        hint = f" Any norm_bound >= {largest:.6g} (the largest norm on this grid) gives the same W: pass that."
    else:
        hint = " A norm_bound at least the largest norm on the grid gives the same W as any larger one: pass that."
    raise ParameterError(
        f"norm_bound must be a finite number whose square is a finite float, got {norm_bound!r}.{hint}",
        "norm_bound")


def kept_while_alive(cache: dict, anchor, tag, make: Callable[[], T]) -> T:
    """``make()``, worked out once per live ``anchor`` (by identity) and ``tag`` and kept in
    ``cache`` (``(id, tag) -> (weak reference, value)``) while ``anchor`` is alive: an entry
    holds no reference to its anchor and a finalizer drops it when the anchor is collected, so
    what a cache holds of a data set does not outlive the data.  For read-only arrays only
    (whose entries cannot change, so the kept value stays true); the value must hold no
    reference to ``anchor`` (else the entry keeps its anchor, and so itself, alive)."""
    key = (id(anchor), tag)
    kept = cache.get(key)
    if kept is not None and kept[0]() is anchor:
        return kept[1]
    out = make()
    cache[key] = (weakref.ref(anchor), out)
    weakref.finalize(anchor, cache.pop, key, None)
    return out


#: :func:`unique_values` of read-only arrays still alive (:func:`kept_while_alive`).
_UNIQUE_KEPT: dict = {}


def kept_unique_values(x) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_values` of ``x``, worked out once for a read-only float64 array (whose
    entries cannot change) and shared by every caller while it is alive (read-only
    results): e.g. the W's of a ladder on one feature matrix, which share its merged rows.
    Any other array is worked out at each call."""
    if not isinstance(x, np.ndarray) or x.flags.writeable or x.dtype != np.float64:
        return unique_values(x)
    return kept_while_alive(_UNIQUE_KEPT, x, None, lambda: _read_only_pair(unique_values(x)))


def _read_only_pair(pair: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    values, inverse = pair
    values.flags.writeable = inverse.flags.writeable = False
    return values, inverse


#: Widest range of integer values :func:`unique_values` counts in a table instead of sorting.
_COUNTED_SPAN = 1 << 16


def unique_values(x) -> tuple[np.ndarray, np.ndarray]:
    """``(values, inverse)`` as ``np.unique(x, return_inverse=True)`` (the distinct values
    in ascending order, and each entry's index among them), for a float array of any
    shape (``inverse`` flattened).  Where every entry is an integer within a span of at
    most 65,536 (the codes of discretized features), the values are counted in a table
    instead of sorted: O(size) rather than O(size log size), the same arrays (a -0.0 is
    listed as 0.0, its equal)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if x.size:
        lo, hi = float(x.min()), float(x.max())
        if hi - lo <= _COUNTED_SPAN and np.array_equal(x, np.round(x)):
            codes = (x - lo).astype(np.int64)
            present = np.bincount(codes, minlength=int(hi - lo) + 1) > 0
            rank = np.cumsum(present) - 1
            return np.flatnonzero(present) + lo, rank[codes]
    values, inverse = np.unique(x, return_inverse=True)
    return values, np.asarray(inverse).reshape(-1)
