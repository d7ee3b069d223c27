"""W of a user's model, built once: :class:`DecisionSet`.

The decision set of private selection on a user's model is the product of the decision's
grids, intersected with the ball ||w||_2 <= norm_bound (when given) and with the model's
constraints on the decision alone that are declared public.  :func:`decision_set` reads it
from the model once: the declared constraints on the decision, the linear ones among them
as separable rows (:class:`privopt.space.SeparableConstraints`, the ball one more row), the
others (left to a filter of listed points), |W| counted once through the rows
(:func:`privopt.space.count_constrained_points`), and W as a tree of prefixes
(:class:`privopt.search.PrefixSpace`) where it can be counted, with why.  The plan, the
fix-and-solve evaluator and the bounded sampler read the record; none counts W again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ...search import PrefixSpace
from ...space import SeparableConstraints, count_constrained_points, linear_tables, norm_levels, product_size

__all__ = ["DecisionSet", "decision_set"]


@dataclass(frozen=True)
class DecisionSet:
    """W of a user's model (module docstring): ``variables`` (the decision, the user's
    VarData), ``grids`` (one per coordinate), ``norm_bound`` (None: no ball),
    ``constraints`` (the declared public constraints on the decision alone), ``separable``
    (the linear ones and the ball as rows; None when none is linear), ``others`` (the
    declared ones that are not linear), ``count`` (|W| counted through ``separable`` before
    ``others`` filter it; None where it is None or its numbers are too irregular),
    ``space`` (W as a tree of prefixes, its size known; None where W cannot be counted)
    and ``why`` (how W was counted, or why it could not be)."""

    variables: tuple
    grids: tuple
    norm_bound: float | None
    constraints: tuple
    separable: SeparableConstraints | None
    others: tuple
    count: int | None
    space: Any
    why: str

    @property
    def size(self) -> int | None:
        """|W| from the prefix tree (None where W cannot be counted)."""
        return None if self.space is None else self.space.size(())


def decision_set(w_vars, grids, norm_bound, public_constraints) -> DecisionSet:
    """The :class:`DecisionSet` of the decision ``w_vars`` on ``grids`` (inside the ball
    ``norm_bound`` when given) and the declared ``public_constraints`` (those on the
    decision alone shape W; the others stay in the model)."""
    variables = list(w_vars)
    cons = _weight_only(list(public_constraints), {id(v) for v in variables})
    sep, others = _separable_constraints(grids, norm_bound, cons, variables) if cons else (None, [])
    count = None if sep is None else count_constrained_points(sep)
    space, why = _prefix_space(grids, norm_bound, cons, sep, others, count)
    return DecisionSet(tuple(variables), tuple(grids), norm_bound, tuple(cons), sep, tuple(others), count, space, why)


def _prefix_space(grids, norm_bound, cons, sep, others, count):
    """``(space, why)``: W as a :class:`privopt.search.PrefixSpace` through the declared
    linear constraints on the weights alone (and the ball), its size given where it was
    counted; ``(None, why)`` where it cannot be (a constraint on the weights that is not
    linear, or numbers too irregular to count)."""
    if others:
        return None, "a declared constraint on the weights is not linear, so the regions' sizes cannot be counted"
    if cons and sep is None:
        return None, "no linear constraint to count W through"
    if cons and count is None:
        return None, "the constraints' numbers are too irregular to count W exactly"
    if cons:
        space = PrefixSpace(grids, sep, size=count)
    elif norm_bound is not None:   # the ball alone (_separable_constraints adds it only next to a linear row)
        space = PrefixSpace(grids, _ball_only(grids, norm_bound))
    else:
        space = PrefixSpace(grids, None, size=product_size(grids))
    if space.size(()) is None:
        return None, "the constraints' numbers are too irregular to count W exactly"
    return space, "W counted through the declared linear constraints" if space.cons is not None else (
        "W is the product of the weights' grids")


def _ball_only(grids, norm_bound):
    """The ball ||w|| <= norm_bound as one separable row (its exact integer units where
    :func:`privopt.space.norm_levels` has them), tested as the fix-and-solve evaluator tests it."""
    lv = norm_levels(grids, norm_bound)
    if lv.exact:
        ball, top = [np.asarray(c, dtype=np.float64) for c in lv.coef], float(lv.bound)
    else:
        ball, top = [np.asarray(g, dtype=np.float64) ** 2 for g in grids], norm_bound ** 2 * (1 + 1e-12)
    return SeparableConstraints([b[None, :] for b in ball], [-np.inf], [top], [0.0], [0.0])


def _separable_constraints(grids, norm_bound, cons, w_vars):
    """``(constraints, others)``: the linear constraints of ``cons`` (on the
    weights alone) as rows of :class:`privopt.space.SeparableConstraints` on
    ``grids``, with the ball ||w|| <= norm_bound as one more row when given
    (its exact integer units where :func:`privopt.space.norm_levels` has them),
    and the constraints of ``cons`` that are not linear (left to the filter).
    ``constraints`` is None when no constraint is linear: the product grid
    (inside the ball) is then listed as before."""

    index = {id(v): j for j, v in enumerate(w_vars)}
    rows, lower, upper, offset, others = [], [], [], [], []
    for con in cons:
        linear = _linear_row(con, index, len(w_vars))
        if linear is None:
            others.append(con)
            continue
        rows.append(linear[0])
        lower.append(float(pyo.value(con.lower)) if con.has_lb() else -np.inf)
        upper.append(float(pyo.value(con.upper)) if con.has_ub() else np.inf)
        offset.append(linear[1])
    if not rows:
        return None, others
    tables = linear_tables(grids, np.array(rows))
    rtol = [1e-9] * len(rows)
    if norm_bound is not None:   # the ball, tested as _product_points tests it
        lv = norm_levels(grids, norm_bound)
        if lv.exact:
            ball, top = [np.asarray(c, dtype=np.float64) for c in lv.coef], float(lv.bound)
        else:
            ball, top = [np.asarray(g, dtype=np.float64) ** 2 for g in grids], norm_bound ** 2 * (1 + 1e-12)
        tables = [np.vstack([t, b[None, :]]) for t, b in zip(tables, ball)]
        lower, upper, offset, rtol = lower + [-np.inf], upper + [top], offset + [0.0], rtol + [0.0]
    return SeparableConstraints(tables, lower, upper, offset, rtol), others


def _weight_only(cons, weight_ids):
    """The constraints of ``cons`` whose variables are all weights (they are
    applied to the listed points; the others stay in the model)."""
    from pyomo.core.expr.visitor import identify_variables

    return [con for con in cons
            if all(id(v) in weight_ids for v in identify_variables(con.body, include_fixed=False))]


def _linear_row(con, index, d):
    """``(a, c)`` with body(w) = a . w + c (a of length d) for a constraint on the weights
    alone whose body is linear (``index``: id of each weight's VarData -> its coordinate),
    else None."""
    from pyomo.repn import generate_standard_repn

    repn = generate_standard_repn(con.body, compute_values=True)
    if not repn.is_linear():
        return None
    a = np.zeros(d)
    for v, c in zip(repn.linear_vars, repn.linear_coefs):
        a[index[id(v)]] += c
    return a, float(repn.constant)
