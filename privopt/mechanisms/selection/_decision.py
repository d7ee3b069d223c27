"""W of a user's model, built once: :class:`DecisionSet`.

The decision set of private selection on a user's model is the product of the decision's
grids, intersected with the ball ||w||_2 <= norm_bound (when given) and with the model's
constraints on the decision alone that are declared public.  :func:`decision_set` reads it
from the model once into W's one record (:class:`privopt.space.DecisionSpace`: the grids, the
ball and the declared linear constraints as separable rows), which counts |W| through its
rows with the ball (:attr:`privopt.space.DecisionSpace.size`); beside it the Pyomo side that
W's record cannot hold: the decision's variables, the declared constraints, those among them
that are not linear (left to a filter of listed points), and W as a tree of prefixes
(:meth:`privopt.search.PrefixSpace.of`) where it can be counted, with why.  The plan, the
fix-and-solve evaluator and the bounded sampler read the record; none counts W again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ...search import PrefixSpace
from ...space import DecisionSpace, SeparableConstraints, linear_tables

__all__ = ["DecisionSet", "decision_set"]


@dataclass(frozen=True)
class DecisionSet:
    """W of a user's model (module docstring): ``variables`` (the decision, the user's
    VarData), ``w`` (W's record, :class:`privopt.space.DecisionSpace`: the grids, the ball,
    the declared linear constraints as rows), ``constraints`` (the declared public
    constraints on the decision alone), ``others`` (the declared ones that are not linear),
    ``space`` (W as a tree of prefixes, its size known; None where W cannot be counted) and
    ``why`` (how W was counted, or why it could not be).  ``grids``, ``norm_bound``,
    ``separable`` and ``count`` read ``w``."""

    variables: tuple
    w: DecisionSpace
    constraints: tuple
    others: tuple
    space: Any
    why: str

    @property
    def grids(self) -> tuple:
        """The decision's grids, one per coordinate."""
        return self.w.grids

    @property
    def norm_bound(self) -> float | None:
        """D of the ball (None: no ball)."""
        return self.w.norm_bound

    @property
    def separable(self) -> SeparableConstraints | None:
        """The declared linear constraints and the ball as rows; None when none is linear."""
        return None if self.w.constraints is None else self.w.separable

    @property
    def count(self) -> int | None:
        """|W| counted through :attr:`separable` before :attr:`others` filter it; None where
        it is None or its numbers are too irregular."""
        return None if self.separable is None else self.w.size

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
    rows, others = _separable_constraints(grids, cons, variables) if cons else (None, [])
    w = DecisionSpace(tuple(grids), norm_bound, constraints=rows)
    space, why = _prefix_space(w, cons, others)
    return DecisionSet(tuple(variables), w, tuple(cons), tuple(others), space, why)


def _prefix_space(w: DecisionSpace, cons, others):
    """``(space, why)``: W as a :class:`privopt.search.PrefixSpace` through the declared
    linear constraints on the weights alone (and the ball), its size as ``w`` counted it;
    ``(None, why)`` where it cannot be (a constraint on the weights that is not linear, or
    numbers too irregular to count)."""
    if others:
        return None, "a declared constraint on the weights is not linear, so the regions' sizes cannot be counted"
    if cons and w.constraints is None:
        return None, "no linear constraint to count W through"
    if w.size is None:
        return None, "the constraints' numbers are too irregular to count W exactly"
    space = PrefixSpace.of(w)
    return space, "W counted through the declared linear constraints" if space.cons is not None else (
        "W is the product of the weights' grids")


def _separable_constraints(grids, cons, w_vars):
    """``(rows, others)``: the linear constraints of ``cons`` (on the weights alone) as
    rows of :class:`privopt.space.SeparableConstraints` on ``grids`` (the ball is W's
    record's to add: :attr:`privopt.space.DecisionSpace.separable`), and the constraints
    of ``cons`` that are not linear (left to the filter).  ``rows`` is None when no
    constraint is linear: the product grid (inside the ball) is then listed as before."""

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
    return SeparableConstraints(tables, lower, upper, offset, [1e-9] * len(rows)), others


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
