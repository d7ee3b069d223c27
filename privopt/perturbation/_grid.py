"""Finite grids of the decision vector and exact arithmetic on them.

OPDisc [NRVW20, Algorithm 1] works on a discrete, tau-separated parameter set
W_tau inside the ball ||w||_2 <= D.  privopt represents W_tau as a product of
per-coordinate grids (each coordinate w_j takes a value of ``grids[j]``)
intersected with the ball.  This module is the Pyomo side of W: the decision
variables of a model (:func:`weights_of`), their grids (:func:`resolve_grids`,
checked against each variable's domain and bounds) and the snapping of solver
values onto the grid.  The grid parser, the common step and the exact levels
of ||w||^2 are :mod:`privopt.space`'s (re-exported here).
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo

from ..exceptions import ModelError, ParameterError, ParameterTypeError
from ..space import MAX_GRID_SIZE, NormLevels, grid_separation, norm_levels, parse_grid

__all__ = [
    "grid_from_var",
    "resolve_grids",
    "grid_separation",
    "NormLevels",
    "norm_levels",
    "snap_to_grid",
]


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


def resolve_grids(weights, grid=None, info_grid=None, read_bounds: bool = True) -> list[tuple]:
    """Per-coordinate grids for ``weights`` (a list of scalar VarData).

    Priority: an explicit ``grid`` (parsed by :func:`privopt.space.parse_grid`:
    an int B, one sequence for every coordinate, or one per coordinate), then
    the model's declared grid (ModelInfo), then the variables' integer domains
    and bounds.  Grid values must lie within each variable's bounds (and be
    integral for integer variables); with ``read_bounds=False`` (a mechanism given
    ``grid=``, whose W is the grid and whose variables' own bounds are never read,
    as they may come from the data) the bounds are not compared.
    """
    d = len(weights)
    source = grid if grid is not None else info_grid
    if source is None:
        grids = [grid_from_var(v) for v in weights]
    else:
        grids = list(parse_grid(source, d, "grid"))
    for v, g in zip(weights, grids):
        lb, ub = v.bounds if read_bounds else (None, None)
        if (lb is not None and g[0] < lb - 1e-9) or (ub is not None and g[-1] > ub + 1e-9):
            raise ParameterError(
                f"grid: values of {v.name} lie outside its bounds; give a grid inside the bounds you "
                "declared (a bound is not printed: it may come from the data).",
                "grid",
            )
        if not v.is_continuous() and any(abs(x - round(x)) > 1e-9 for x in g):
            raise ParameterError(
                f"grid: {v.name} is an integer variable but the grid has non-integer values; "
                "declare the variable with domain=Reals (the grid makes it discrete).",
                "grid",
            )
    return grids


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
            hint = (f" (a name: pass the variables themselves, weights=[model.{v}, ...], or one indexed "
                    "variable's name)" if isinstance(v, str) else "")
            raise ParameterTypeError(f"weights must contain scalar Vars, got {v!r}{hint}.", "weights")
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
