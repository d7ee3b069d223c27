"""Exact arithmetic on grids, shared by the model builders
(:mod:`privopt.models`) and the objective-perturbation transformation
(:mod:`privopt.perturbation`): one definition of a grid's separation and of
the floating-point-safe floor that turns D^2 into a count of grid units
(with D = sqrt(23), ``D**2`` is 22.999999999999996)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SNAP_TOL", "grid_separation", "snapped_floor"]

#: Relative tolerance within which a float is taken to be the integer just above it.
SNAP_TOL = 1e-9


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
