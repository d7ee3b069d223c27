"""Finite grids of the decision vector and exact arithmetic on them.

OPDisc [NRVW20, Algorithm 1] works on a discrete, tau-separated parameter set
W_tau inside the ball ||w||_2 <= D.  privopt represents W_tau as a product of
per-coordinate grids (each coordinate w_j takes a value of ``grids[j]``)
intersected with the ball.  This module finds the grids, their separation and
the possible values of ||w||^2, in integers wherever the grid is a multiple of
a common step (with D = sqrt(23), ``D**2`` is
22.999999999999996, so the levels must not be computed in floating point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo

from .._lattice import MAX_GRID_SIZE, SNAP_TOL, check_grid_size, check_norm_square, grid_separation, snapped_floor
from ..exceptions import ModelError, ParameterError, ParameterTypeError

__all__ = [
    "grid_from_var",
    "resolve_grids",
    "grid_separation",
    "NormLevels",
    "norm_levels",
    "snap_to_grid",
]

#: The largest number of distinct ||w||^2 values privopt encodes.  (The
#: largest grid per coordinate, MAX_GRID_SIZE, is :data:`privopt._lattice.MAX_GRID_SIZE`.)
MAX_LEVELS = 100_000
#: The most (partial sums x grid values) the dynamic programme of
#: :func:`norm_levels` may visit (a few seconds): beyond it the levels are
#: refused before the work, not after it.
MAX_LEVEL_WORK = 20_000_000
_REL_TOL = SNAP_TOL


def grid_from_var(var) -> tuple:
    """The finite grid of one scalar variable from its domain and bounds.

    Integer (and binary) variables with finite bounds give ``lb..ub``; anything
    else raises, because OPDisc, RSPM and private selection release a point of
    a finite parameter set.
    """
    if var.is_continuous():
        raise ModelError(
            f"weights: variable {var.name} is continuous; privopt's discrete mechanisms (OPDisc, "
            "RSPM, private selection) release a point of a finite parameter set. Give it an integer "
            "domain with finite bounds, or declare its values with grid=[...] (for a continuous "
            "decision, privopt.opsamp).",
            "weights",
        )
    lb, ub = var.bounds
    if lb is None or ub is None:
        raise ModelError(
            f"weights: variable {var.name} has no finite bounds ({lb}, {ub}); give it bounds, "
            "e.g. Var(domain=Integers, bounds=(-4, 4)).",
            "weights",
        )
    lo, hi = math.ceil(lb - 1e-9), math.floor(ub + 1e-9)
    if hi < lo:
        raise ModelError(f"weights: variable {var.name} has an empty integer range.", "weights")
    if hi - lo + 1 > MAX_GRID_SIZE:
        raise ModelError(
            f"weights: variable {var.name} takes {hi - lo + 1} values; privopt encodes at most "
            f"{MAX_GRID_SIZE} per coordinate. Tighten its bounds.",
            "weights",
        )
    return tuple(float(v) for v in range(lo, hi + 1))


def _as_grid(values, name: str) -> tuple:
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be a sequence of numbers: {exc}", "grid") from exc
    if arr.size == 0:
        raise ParameterError(f"{name} is empty; give at least one value.", "grid")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values.", "grid")
    if arr.size > MAX_GRID_SIZE:
        raise ParameterError(f"{name} has {arr.size} values; at most {MAX_GRID_SIZE}.", "grid")
    uniq = np.unique(arr)
    if uniq.size != arr.size:
        raise ParameterError(f"{name} repeats values; give each value once.", "grid")
    return tuple(float(v) for v in uniq)


def resolve_grids(weights, grid=None, info_grid=None) -> list[tuple]:
    """Per-coordinate grids for ``weights`` (a list of scalar VarData).

    Priority: an explicit ``grid`` (one sequence for every coordinate, or one
    per coordinate), then the model's declared grid (ModelInfo), then the
    variables' integer domains and bounds.  Grid values must lie within each
    variable's bounds (and be integral for integer variables).
    """
    d = len(weights)
    source = grid if grid is not None else info_grid
    if source is None:
        grids = [grid_from_var(v) for v in weights]
    else:
        if isinstance(source, (str, bytes)):
            raise ParameterTypeError("grid must be a sequence of numbers, not a string.", "grid")
        seq = list(source)
        nested = len(seq) > 0 and all(np.ndim(s) == 1 for s in seq)
        if nested:
            if len(seq) != d:
                raise ParameterError(
                    f"grid gives {len(seq)} per-coordinate grids but there are {d} weights.", "grid"
                )
            grids = [_as_grid(s, f"grid[{j}]") for j, s in enumerate(seq)]
        else:
            g = _as_grid(seq, "grid")
            grids = [g] * d
    for v, g in zip(weights, grids):
        lb, ub = v.bounds
        if (lb is not None and g[0] < lb - 1e-9) or (ub is not None and g[-1] > ub + 1e-9):
            raise ParameterError(
                f"grid: values [{g[0]}, {g[-1]}] of {v.name} lie outside its bounds ({lb}, {ub}).",
                "grid",
            )
        if not v.is_continuous() and any(abs(x - round(x)) > 1e-9 for x in g):
            raise ParameterError(
                f"grid: {v.name} is an integer variable but the grid has non-integer values; "
                "declare the variable with domain=Reals (the grid makes it discrete).",
                "grid",
            )
    return grids


def _common_step(values) -> Fraction | None:
    """A step h (as an exact Fraction of the float values) such that every
    value is an integer multiple of h, or None.  Tries the values' own
    decimal representations, which covers integer grids and tau-grids such
    as 0.5 or 0.25 steps."""
    nonzero = [v for v in values if v != 0]
    if not nonzero:
        return Fraction(1)
    arr = np.asarray(nonzero, dtype=float)
    if np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2.0**53):
        # integer grids (the common case): the gcd, vectorized, instead of one Fraction per value
        return Fraction(int(np.gcd.reduce(np.abs(arr).astype(np.int64))))
    fracs = [Fraction(repr(v)).limit_denominator(10**4) for v in nonzero]
    if any(abs(float(f) - v) > 1e-12 * max(1.0, abs(v)) for f, v in zip(fracs, nonzero)):
        return None
    # gcd of fractions: gcd(numerators * common denominator) / common denominator
    den = math.lcm(*(f.denominator for f in fracs))
    num = math.gcd(*(int(f * den) for f in fracs))
    return Fraction(num, den)


@dataclass(frozen=True)
class NormLevels:
    """The possible values of ||w||^2 on the grid within the ball.

    ``coef[j][k]`` is the contribution of grid value k of coordinate j to
    ||w||^2 in units of ``unit`` (so ||w||^2 = unit * sum_jk coef[j][k] r[j,k]);
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
    step = _common_step(all_values)
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


def snap_to_grid(values, grids) -> np.ndarray:
    """Round solver values (e.g. 0.9999999) to the nearest grid value."""
    out = np.empty(len(grids))
    for j, (x, g) in enumerate(zip(values, grids)):
        arr = np.asarray(g)
        out[j] = arr[np.argmin(np.abs(arr - x))]
    return out


def _within(v, block) -> bool:
    """Whether ``v`` lives in ``block`` or one of its sub-blocks."""
    b = v.parent_block()
    while b is not None:
        if b is block:
            return True
        b = b.parent_block()
    return False


def _inactive_ancestor(v):
    """The first deactivated block on the way from ``v`` to the top, or None."""
    b = v.parent_block()
    while b is not None:
        if not b.active:
            return b
        b = b.parent_block()
    return None


def weights_of(model, weights=None, default_name: str = "w") -> list:
    """The scalar VarData of the decision vector, in index order.

    ``weights`` may be an IndexedVar, a list of scalar Vars, a component name,
    or None (then the ModelInfo's weights name, else ``default_name``).
    Components of another model (e.g. the original of a clone) are looked up
    by name in ``model``.
    """
    if weights is None:
        weights = default_name
    if isinstance(weights, str):
        comp = model.find_component(weights)
        if comp is None or not isinstance(comp, pyo.Var):
            raise ModelError(
                f"weights: the model has no variable named {weights!r}; pass weights=model.<var>.",
                "weights",
            )
        weights = comp
    if isinstance(weights, pyo.Var) and weights.is_indexed():
        items = [weights[i] for i in weights.index_set()] if weights.index_set().isordered() else [
            weights[i] for i in sorted(weights.keys())]
    elif isinstance(weights, (list, tuple)):
        items = list(weights)
    elif isinstance(weights, pyo.Var):
        items = [weights]
    else:
        raise ParameterTypeError(
            "weights must be an IndexedVar, a list of scalar Vars or a component name, got "
            f"{type(weights).__name__}.",
            "weights",
        )
    if not items:
        raise ModelError("weights is empty; give the decision vector.", "weights")
    out = []
    for v in items:
        if not (hasattr(v, "is_variable_type") and v.is_variable_type()) or v.is_indexed():
            raise ParameterTypeError(f"weights must contain scalar Vars, got {v!r}.", "weights")
        if not _within(v, model):
            mapped = model.find_component(v)
            if mapped is None:
                raise ModelError(f"weights: {v.name} is not a variable of this model.", "weights")
            v = mapped
        inactive = _inactive_ancestor(v)
        if inactive is not None:
            raise ModelError(
                f"weights: {v.name} lies in the deactivated block {inactive.name!r}, so the solver "
                "would never see it; activate the block or choose weights in an active one.", "weights")
        if v.fixed:
            raise ModelError(f"weights: {v.name} is fixed; unfix it or leave it out.", "weights")
        out.append(v)
    if len({id(v) for v in out}) != len(out):
        raise ModelError("weights lists the same variable twice.", "weights")
    return out
