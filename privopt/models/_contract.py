"""What privopt may read as public in a user's model: the decision block.

Every mechanism's guarantee is for a parameter set W fixed before the data is
seen.  A user's model can restrict W in two places privopt cannot tell apart
from the loss by looking at them:

* a **decision constraint**: an active constraint that restricts the decision
  without touching the per-record part of the loss, e.g. a budget
  ``sum_j w_j == 1`` or a return target ``sum_j w_j * mean_return_j >= R``
  (whose coefficients are the mean of the private records);
* a **Param bound**: a weight whose bound is a mutable Param (``Var(bounds=(0,
  m.cap))``), whose value may have been computed from the data.

Either shapes W (private selection lists W through them; OPDisc, RSPM and
OPSamp keep them in the model, so their argmin ranges over them).  If its
coefficients come from the private data, the released law (and the published
|W|) changes with one record and no guarantee holds.  So privopt reads none of
them as public unless the user said so: :func:`check_public_constraints`
lists them before any work and refuses those not declared with
``public_constraints=`` (or by the builder's :class:`~privopt.models.ModelInfo`).

Which constraints are decision constraints is decided from the model's
structure alone (never from a coefficient): a variable is *record-side* when
it appears in the objective (and is not a weight), or in a constraint with a
record-side variable; a constraint is a decision constraint when none of its
variables is record-side.  So ``w_j = sum_k g_k r_jk`` and any constraint on
the grid binaries r count as decision constraints, while ``u_t >= w . x_t``
(u_t in the objective) is part of the loss.  Bounds written as numbers, and
immutable Params (whose values Pyomo folds into the model), cannot be told from
the declaration of W and are read as public; the docs say so.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import pyomo.environ as pyo
from pyomo.core.expr.numvalue import is_constant
from pyomo.core.expr.visitor import identify_variables

from ..exceptions import ModelError, ParameterError, ParameterTypeError

__all__ = ["ALL", "decision_constraints", "param_bounds", "check_public_constraints", "check_public_term",
           "parse_public_names"]

#: ``public_constraints="all"``: every decision constraint and Param bound is public.
ALL = "all"


def parse_public_names(public_constraints, model):
    """``public_constraints`` as ``ALL`` or a frozenset of component names of
    ``model`` (a name, a Constraint or Var component or data object, or a
    sequence of them).  Every name must be a Constraint or Var of the model.
    """
    if public_constraints is None:
        return frozenset()
    if isinstance(public_constraints, str):
        if public_constraints.strip().lower() == ALL:
            return ALL
        items = [public_constraints]
    elif hasattr(public_constraints, "ctype") or hasattr(public_constraints, "parent_component"):
        items = [public_constraints]
    elif isinstance(public_constraints, Iterable):
        items = list(public_constraints)   # a list of names or components
    else:
        raise ParameterTypeError(
            "public_constraints must be 'all', a constraint's name, or a list of names (or Constraint "
            f"components), got {type(public_constraints).__name__}.", "public_constraints")
    names = set()
    for item in items:
        if isinstance(item, str):
            name = item
        elif hasattr(item, "name") and hasattr(item, "parent_component"):
            name = item.name
        else:
            raise ParameterTypeError(
                f"public_constraints: {item!r} is neither a name nor a Pyomo constraint or variable.",
                "public_constraints")
        comp = model.find_component(name)
        if comp is None or comp.ctype not in (pyo.Constraint, pyo.Var):
            known = sorted(c.name for c in model.component_objects((pyo.Constraint, pyo.Var), descend_into=True))
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ParameterError(
                f"public_constraints: the model has no constraint or variable named {name!r}.{hint}",
                "public_constraints")
        names.add(comp.name)
    return frozenset(names)


def _declared(obj, names) -> bool:
    return names == ALL or obj.name in names or obj.parent_component().name in names


def decision_constraints(model, w_vars, skip=()) -> list:
    """The active decision constraints of ``model`` (see the module doc), in
    the model's order.  Constraint components named in ``skip`` (a builder's
    own per-record constraints, declared in its ModelInfo) are not read."""
    weight_ids = {id(v) for v in w_vars}
    skip = set(skip)
    record: set = set()
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        record.update(id(v) for v in identify_variables(obj.expr, include_fixed=False))
    record -= weight_ids
    cons = []
    for comp in model.component_objects(pyo.Constraint, active=True, descend_into=True):
        if comp.name in skip:
            continue
        for con in comp.values():
            if not con.active:
                continue
            ids = {id(v) for v in identify_variables(con.body, include_fixed=False)}
            if ids:
                cons.append((con, ids))
    # propagate "record-side" through the constraints until nothing changes
    external = [False] * len(cons)
    changed = True
    while changed:
        changed = False
        for k, (_, ids) in enumerate(cons):
            if not external[k] and not ids.isdisjoint(record):
                external[k] = True
                new = ids - weight_ids - record
                if new:
                    record |= new
                    changed = True
    return [con for k, (con, _) in enumerate(cons) if not external[k]]


def param_bounds(w_vars) -> list:
    """``(var, side)`` for every weight bound that is a mutable Param (or an
    expression of one), side ``"lower"`` or ``"upper"``."""
    out = []
    for v in w_vars:
        for side in ("lower", "upper"):
            bound = getattr(v, side)
            if bound is not None and not is_constant(bound):
                out.append((v, side))
    return out


def _summary(items, limit=6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def check_public_constraints(model, w_vars, public_constraints=None, info=None, what="this mechanism") -> list:
    """Refuse a model whose decision constraints or Param bounds are not all
    declared public; return the declared decision constraints (which then
    shape W).

    Declared are those named in ``public_constraints`` (``"all"``, a name, or
    a list of Constraint/Var names; a component's name covers every index),
    and those the model's :class:`~privopt.models.ModelInfo` lists in
    ``public_constraints`` (privopt's own builders declare the constraints
    they build from public quantities).  Runs before any noise is drawn and
    any solve starts; reads the model's structure only.
    """
    names = parse_public_names(public_constraints, model)
    if names != ALL and info is not None and info.public_constraints:
        names = names | frozenset(info.public_constraints)
    skip = info.record_constraints if info is not None else ()
    cons = decision_constraints(model, w_vars, skip)
    bounds = param_bounds(w_vars)
    undeclared = [c for c in cons if not _declared(c, names)]
    loose = [(v, side) for v, side in bounds if not _declared(v, names)]
    if undeclared or loose:
        parts = []
        if undeclared:
            comps: dict = {}
            for c in undeclared:
                comps.setdefault(c.parent_component().name, []).append(c)
            listed = [name if len(cs) == 1 and not cs[0].parent_component().is_indexed()
                      else f"{name} ({len(cs)} constraint{'s' if len(cs) > 1 else ''})"
                      for name, cs in comps.items()]
            parts.append(f"constraints on the decision alone: {_summary(listed)}")
        if loose:
            parts.append("bounds of the decision given by mutable Params: "
                         + _summary([f"{v.name}.{side[:2]}" for v, side in loose]))
        first = next(iter(comps)) if undeclared else loose[0][0].parent_component().name
        raise ModelError(
            f"model: {'; '.join(parts)}. {what} would let them shape the set of decisions W it releases "
            "over, so if their coefficients or values come from the private records the release is not "
            "private (one record can change W and the published |W|). privopt reads none of them as "
            "public unless you say so. Fix: if they are fixed before the data is seen, declare them, e.g. "
            f"public_constraints=[{first!r}, ...] (or public_constraints='all'); otherwise deactivate them "
            "(model.<name>.deactivate()) or move them into the loss.", "public_constraints")
    return [c for c in cons if _declared(c, names)]


def _is_summand(expr, target) -> bool:
    """Whether the named expression ``target`` is added once, with
    coefficient 1, at the top of ``expr`` (a sum, seen through named
    expressions)."""
    for _ in range(64):   # unwrap named expressions (bounded nesting)
        if expr is target:
            return True
        if getattr(expr, "is_named_expression_type", lambda: False)():
            expr = expr.expr
            continue
        break
    if type(expr).__name__ != "SumExpression":
        return False
    return any(a is target for a in expr.args)


def check_public_term(model, public_term, w_vars):
    """The named Expression ``public_term`` of ``model`` (a component or its
    name): a term of the objective that depends on the decision alone (a
    public fixed cost C(w)), declared by the user.  Refused when it is not a
    named Expression of the model, involves any variable other than the
    weights, or does not occur in the active objective."""
    if public_term is None:
        return None
    name = public_term if isinstance(public_term, str) else getattr(public_term, "name", None)
    comp = model.find_component(name) if isinstance(name, str) else None
    if comp is None or comp.ctype is not pyo.Expression or comp.is_indexed():
        raise ParameterError(
            f"public_term: {public_term!r} is not a scalar named Expression of the model; declare the "
            "public cost as model.cost = pyo.Expression(expr=...), use it in the objective, and pass "
            "public_term='cost'.", "public_term")
    weight_ids = {id(v) for v in w_vars}
    others = [v.name for v in identify_variables(comp.expr, include_fixed=False) if id(v) not in weight_ids]
    if others:
        raise ModelError(
            f"public_term: {comp.name} involves {_summary(others, 3)}, which are not weights; a public term "
            "must depend on the decision alone (a cost fixed before the data is seen).", "public_term")
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if not any(_is_summand(o.expr, comp) for o in objectives):
        raise ModelError(
            f"public_term: {comp.name} is not a summand of the active objective; write the objective as "
            f"the records' loss + model.{comp.local_name} (added once, coefficient 1).", "public_term")
    return comp
