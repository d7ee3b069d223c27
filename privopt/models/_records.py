r"""A private model written record by record: the public part first, then one block per record.

A check that reads a finished Pyomo model and guesses which of its parts came from the
private records must anticipate every way a model can be written; each pattern it misses
(a bound computed from the data, a row with a zero coefficient on a record's variable, an
auxiliary variable shared by every record) is a silent leak.  :func:`RecordModel` avoids
the guess, as OpenDP's transformations do for their inputs (the data is touched only by
typed steps built before it is seen): privopt builds the model in an order that makes
the split known by construction.

1. The **decision** (``decision``: a Pyomo ``Var`` component, or a function of the
   model returning one) with its domain and bounds, added as ``model.<name>``.
2. The **public part** (``public(model, w)``, optional): constraints on the decision and
   a public cost C(w) (its return value), built *before any record is read* and given no
   record; every component it adds is declared public in the model's
   :class:`~privopt.models.ModelInfo` (``public_constraints``), the cost as the named
   Expression ``model.public_cost``.
3. The **records**: ``model.records = Block(range(n))`` and, for each record r_i in turn,
   ``record(model.records[i], w, r_i)``, which adds what it needs to its own block (its
   variables, rows, Piecewise, mutable Params) and returns its term l_i(w) (an
   expression).  The term is kept as ``model.records[i].term``.
4. The objective ``model.loss``: minimize  sum_i records[i].loss + public_cost, where
   ``records[i].loss`` is the term itself, or with ``clip=True`` the term clipped into
   ``loss_range`` (below).

What is then verified (:func:`check_record_blocks`, also the check the mechanisms run on a
model whose ModelInfo declares ``record_blocks``): every active constraint, Expression
and Objective inside block i references only variables and mutable Params of block i and
the decision; no active constraint outside the blocks references a block's variable; and
the decision and the public part are the same after the records were built as before
(their bounds, domains, rows and mutable Params).  A record's builder that reads another
record's variable, a variable shared by several records, a Param outside its block, or
that adds a component outside its own block is refused, naming the block and the
component.  What cannot be verified is data that reaches the public part or a record's
block through the user's own Python code (a closure over the records, a record written
into another's numbers); see docs/own_model.md.

**Clipping** (``clip=True``, with ``loss_range=(a, b)``).  Record i enters the objective
as c_i = min(max(t_i, a), b), where t_i is its term.  Since the clip is non-decreasing,
min over the block's variables of c_i is the clip of the block's optimum, so the model's
optimum at any fixed decision is sum_i clip(min t_i) + C(w).  Encoding (only the sides
the term's bounds do not already meet; bounds from the variables' declared bounds by
interval arithmetic, :func:`pyomo.contrib.fbbt.fbbt.compute_bounds_on_expr`):

* lower, when t_i may fall below a:  u_i >= t_i,  u_i >= a  (u_i = max(t_i, a) at the optimum);
* upper, when t_i may exceed b: a binary z_i and  c_i >= u_i - M z_i,  c_i >= b - (b - a)(1 - z_i)
  with M = U_i - b, U_i = max(upper bound of t_i, a): z_i = 0 gives c_i = u_i (u_i >= a >= b - (b - a)),
  z_i = 1 gives c_i = b (u_i - M <= b), so min over z_i is min(u_i, b).  A term with no finite
  upper bound cannot be clipped from above by a big-M and is refused at build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables
from pyomo.repn import generate_standard_repn

from ..exceptions import ModelError, ParameterError, ParameterTypeError
from ._info import ModelInfo, attach_info

__all__ = ["RecordModel", "check_record_blocks", "RECORDS", "clip_bounds", "FAINT_RTOL", "row_variables"]

#: The default name of the indexed Block that holds one block per record.
RECORDS = "records"

#: The names :func:`RecordModel` gives the components it adds itself.
_OBJECTIVE, _PUBLIC_COST, _TERM, _LOSS = "loss", "public_cost", "term", "loss"


def _summary(items, limit=4) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _owner_maps(blocks) -> tuple[dict, dict]:
    """``(var_owner, param_owner)``: the index (position) of the block holding each variable
    and each mutable Param (by id) of the blocks ``blocks``, sub-blocks included."""
    var_owner: dict = {}
    param_owner: dict = {}
    for k, block in enumerate(blocks):
        for v in block.component_data_objects(pyo.Var, descend_into=True):
            var_owner[id(v)] = k
        for p in block.component_data_objects(pyo.Param, descend_into=True):
            param_owner[id(p)] = k
        for comp in block.component_objects(pyo.Param, descend_into=True):
            param_owner[id(comp)] = k
    return var_owner, param_owner


def _expressions_of(block):
    """``(component, expression)`` for every active constraint, Expression and active
    Objective in ``block`` (sub-blocks included)."""
    for con in block.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        yield con, con.expr
    for e in block.component_data_objects(pyo.Expression, descend_into=True):
        if e.expr is not None and not getattr(e.expr, "is_named_expression_type", lambda: False)():
            yield e, e.expr        # (an Expression that is another named Expression is walked as that one)
    for o in block.component_data_objects(pyo.Objective, active=True, descend_into=True):
        yield o, o.expr


def _stranger(expr, own: int, w_ids, var_owner, param_owner, params: bool = True) -> tuple[str, Any] | None:
    """The first variable or mutable Param of ``expr`` that is neither block ``own``'s nor
    the decision's, as ``(kind, component)``; None when there is none.  ``params=False``:
    the model has no mutable Param, so none is looked for."""
    for v in identify_variables(expr, include_fixed=True):
        if id(v) not in w_ids and var_owner.get(id(v)) != own:
            return "variable", v
    if not params:
        return None
    for p in identify_mutable_parameters(expr):
        if param_owner.get(id(p)) != own and param_owner.get(id(p.parent_component())) != own:
            return "mutable Param", p
    return None


def _where(component, var_owner, blocks) -> str:
    k = var_owner.get(id(component))
    if k is not None:
        return f"record block {blocks[k].name}"
    return "outside the record blocks"


def _record_block_list(model, block_name: str) -> list:
    comp = model.component(block_name) if isinstance(block_name, str) else None
    if comp is None or comp.ctype is not pyo.Block or not comp.is_indexed():
        raise ModelError(
            f"record_blocks: the model has no indexed Block named {block_name!r}; it names the Block whose i-th "
            "block holds everything record i contributes (privopt.RecordModel builds it).", "record_blocks")
    return list(comp.values())


def check_record_blocks(model, w_vars, block_name: str = RECORDS) -> int:
    """Verify that each block of the indexed Block ``block_name`` of ``model`` references only
    its own components and the decision ``w_vars``; return the number of blocks.

    Walks every active constraint (its body and any bound that is an expression), every
    Expression and every active Objective inside each block (sub-blocks, Piecewise
    included) with Pyomo's ``identify_variables`` (fixed variables included) and
    ``identify_mutable_parameters``: a variable that is neither the decision nor the
    block's own (another record's, or one outside the blocks, such as an auxiliary variable
    shared by every record) or a mutable Param outside the block is refused.  So is an
    active constraint outside the blocks that references a block's variable (a row joining
    records, or a public row reading one).  Raises :class:`~privopt.exceptions.ModelError`
    naming the block and the component.  Reads the model's structure only, never a value.
    """
    blocks = _record_block_list(model, block_name)
    if not blocks:
        raise ModelError(f"record_blocks: the Block {block_name!r} holds no record.", "record_blocks")
    w_ids = frozenset(id(v) for v in w_vars)
    var_owner, param_owner = _owner_maps(blocks)
    params = any(p.mutable for p in model.component_objects(pyo.Param, descend_into=True))
    for k, block in enumerate(blocks):
        for comp, expr in _expressions_of(block):
            bad = _stranger(expr, k, w_ids, var_owner, param_owner, params)
            if bad is not None:
                kind, other = bad
                raise ModelError(
                    f"model: {comp.name} in record block {block.name} references the {kind} {other.name} "
                    f"({_where(other, var_owner, blocks)}), which is neither its own nor the decision's. Each "
                    "record's block may reference only its own variables and Params and the decision: one record "
                    "could otherwise move other records' terms, or the public part. Fix: create what the record "
                    "needs inside its own block (block.x = pyo.Var(...)), and put what is shared and fixed before "
                    "the data in the public part, as a function of the decision.", "record_blocks")
        _check_own_rows(block, k, var_owner)
    _check_outside(model, blocks, var_owner)
    return len(blocks)


#: A variable of a row whose coefficient is below this fraction of the row's largest (in absolute
#: value) is *faint*: it does not make the row a record's (:func:`row_variables`).  Solvers treat
#: matrix entries of this order as zero (HiGHS's ``small_matrix_value`` is 1e-9).
FAINT_RTOL = 1e-9


def row_variables(expr) -> tuple[list, frozenset]:
    """``(live, faint)``: the unfixed variables a constraint's body ``expr`` depends on, read
    through Pyomo's standard representation so that a variable whose every coefficient is 0
    (``Q + 0 * h[0]``) is not one, and the ids of those among them whose every coefficient is
    below :data:`FAINT_RTOL` times the row's largest (``Q + 1e-300 * h[0]``).  A row does not
    become a record's by naming a record's variable with a coefficient of 0, nor with one
    negligible beside the row's others: its part on the decision survives unchanged.  (The
    objective's variables are read as named, zero costs included: a record whose cost is 0
    is still a record.)  The variables of a part that is not linear or quadratic are all
    kept and never faint (their coefficients are not read there); an expression the
    representation does not take falls back to every variable it names.  The coefficients'
    magnitudes decide structure only; no value is ever shown."""
    try:
        repn = generate_standard_repn(expr, compute_values=True, quadratic=True)
    except Exception:     # an expression the representation does not take: every variable it names
        return [v for v in identify_variables(expr, include_fixed=False)], frozenset()
    coef: dict = {}
    for v, c in zip(repn.linear_vars, repn.linear_coefs):
        coef[id(v)] = (v, max(coef.get(id(v), (v, 0.0))[1], abs(float(c))))
    for pair, c in zip(repn.quadratic_vars, repn.quadratic_coefs):
        for v in pair:
            coef[id(v)] = (v, max(coef.get(id(v), (v, 0.0))[1], abs(float(c))))
    strong = set()
    if repn.nonlinear_expr is not None:
        for v in repn.nonlinear_vars:
            coef.setdefault(id(v), (v, 0.0))
            strong.add(id(v))
    big = max((c for _, c in coef.values()), default=0.0)
    live = [v for k, (v, c) in coef.items() if (c != 0 or k in strong) and not v.fixed]
    faint = frozenset(id(v) for v in live if id(v) not in strong and coef[id(v)][1] < FAINT_RTOL * big)
    return live, faint


def _check_own_rows(block, own: int, var_owner) -> None:
    """Refuse an active constraint of a record's block in which none of the block's own
    variables occurs with a coefficient that is neither 0 nor negligible beside the row's
    others (:func:`row_variables`): a row on the decision alone, built from the record,
    restricts W with the data."""
    for con in block.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        live, faint = row_variables(con.body)
        if not any(var_owner.get(id(v)) == own and id(v) not in faint for v in live):
            raise ModelError(
                f"model: the constraint {con.name} in record block {block.name} involves none of the block's own "
                f"variables (a variable with coefficient 0, or below {FAINT_RTOL:g} of the row's largest, does not "
                "count): it restricts the decision alone, with numbers built from the record, so one record could "
                "change the set of decisions W. Fix: a "
                "restriction of the decision fixed before the data belongs in the public part; a record's "
                "preference belongs in its term (a penalty).", "record_blocks")


def _check_outside(model, blocks, var_owner) -> None:
    """Refuse an active constraint outside the record blocks that references a block's variable."""
    inside = {id(b) for b in blocks}
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        parent, in_block = con.parent_block(), False
        while parent is not None:
            if id(parent) in inside:
                in_block = True
                break
            parent = parent.parent_block()
        if in_block:
            continue
        for v in identify_variables(con.body, include_fixed=True):
            k = var_owner.get(id(v))
            if k is not None:
                raise ModelError(
                    f"model: the constraint {con.name}, outside the record blocks, references {v.name} of record "
                    f"block {blocks[k].name}. A row outside the records' blocks is public and may involve the "
                    "decision only; a row joining records (a shared capacity) makes one record move the others' "
                    "terms. Fix: move the row into the record's block, or write what it expresses on the "
                    "decision alone in the public part.", "record_blocks")


@dataclass(frozen=True)
class _Public:
    """The decision and the public part as built before the records: the decision's
    variables, the names of the components the public builder added (declared public), and
    the public cost (a named Expression, or None)."""

    w_vars: tuple
    names: tuple
    cost: Any


def _add_decision(model, decision, name: str):
    """Attach the decision (a Var component, or a function of the model returning one) and
    return it."""
    var = decision(model) if callable(decision) and not isinstance(decision, pyo.Var) else decision
    if not isinstance(var, pyo.Var) or var.ctype is not pyo.Var:
        raise ParameterTypeError(
            "decision must be a Pyomo Var component, e.g. decision=pyo.Var(range(4), domain=pyo.Binary), or a "
            f"function of the model returning one; got {type(var).__name__}.", "decision")
    if var.parent_block() is None:
        model.add_component(name, var)
    elif var.model() is not model:
        raise ParameterError("decision: the Var belongs to another model; build it in the function given as "
                             "decision=lambda m: pyo.Var(...) or pass an unattached pyo.Var(...).", "decision")
    return var


def _fingerprint(model, w, names) -> tuple:
    """A structural snapshot of the decision and the public part: each decision variable's
    domain, bounds and fixed flag, and each public component's rows (as text), variable
    bounds and mutable Param values.  Compared before and after the records are built."""
    out: list = [tuple((str(v.domain), v.lb, v.ub, v.fixed) for v in w.values())]
    for name in names:
        comp = model.component(name)
        for data in comp.values() if comp.is_indexed() else [comp]:
            if comp.ctype is pyo.Constraint:
                out.append((data.name, str(data.expr)))
            elif comp.ctype is pyo.Var:
                out.append((data.name, str(data.domain), data.lb, data.ub, data.fixed))
            elif comp.ctype is pyo.Expression:
                out.append((data.name, str(data.expr)))
            elif comp.ctype is pyo.Param and comp.mutable:
                out.append((data.name, pyo.value(data)))
    return tuple(out)


def _build_public(model, w, public) -> _Public:
    """Run the public builder (no record exists yet) and collect what it declared."""
    before = {c.local_name for c in model.component_objects(descend_into=False)}
    cost = public(model, w) if public is not None else None
    added = [c for c in model.component_objects(descend_into=False) if c.local_name not in before]
    taken = [c.local_name for c in added if c.local_name in (RECORDS, _OBJECTIVE, _PUBLIC_COST)]
    if taken:
        raise ParameterError(f"public: it added a component named {taken[0]!r}, a name RecordModel gives its own "
                             "components; rename it.", "public")
    named = None
    if cost is not None:
        if not getattr(cost, "is_expression_type", lambda: False)() and not isinstance(cost, (int, float)) \
                and getattr(cost, "ctype", None) is not pyo.Var:
            raise ParameterTypeError(
                "public must return the public cost C(w) as an expression of the decision (or None); got "
                f"{type(cost).__name__}.", "public")
        model.add_component(_PUBLIC_COST, pyo.Expression(expr=cost))
        named = model.component(_PUBLIC_COST)
        others = [v.name for v in identify_variables(named.expr, include_fixed=True)
                  if v.parent_component() is not w and v.model() is model
                  and v.parent_component().local_name not in {c.local_name for c in added}]
        if others:
            raise ModelError(f"public: the public cost references {_summary(others)}, which is neither the decision "
                             "nor a variable the public builder added.", "public")
    declared = [c.local_name for c in added if c.ctype in (pyo.Constraint, pyo.Var, pyo.Expression)]
    if named is not None:
        declared.append(_PUBLIC_COST)
    return _Public(tuple(w.values()), tuple(declared), named)


def clip_bounds(term) -> tuple[float | None, float | None]:
    """Bounds of the expression ``term`` from its variables' declared bounds (interval
    arithmetic, Pyomo's ``compute_bounds_on_expr``); None for a side with no finite bound."""
    from pyomo.contrib.fbbt.fbbt import compute_bounds_on_expr

    lo, hi = compute_bounds_on_expr(term)
    return (None if lo is None else float(lo)), (None if hi is None else float(hi))


def _clip(block, term, loss_range) -> Any:
    """Add the encoding of min(max(term, a), b) to ``block`` (module doc); return the
    expression that enters the objective."""
    a, b = (float(x) for x in loss_range)
    lo, hi = clip_bounds(term)
    out = term
    upper = hi if hi is not None else None
    if lo is None or lo < a:
        block.clip_low = pyo.Var(bounds=(a, None if hi is None else max(hi, a)))
        block.clip_low_ge_term = pyo.Constraint(expr=block.clip_low >= term)
        out = block.clip_low
        upper = None if hi is None else max(hi, a)
    if hi is None or hi > b:
        if upper is None:
            raise ModelError(
                f"clip: the term of {block.name} has no finite upper bound from its variables' bounds, so it cannot "
                "be clipped at loss_range's upper end by a big-M. Fix: give the record's variables finite bounds "
                "(fixed before the data, e.g. from loss_range), or write a term that stays in loss_range.", "clip")
        big_m = upper - b
        block.clip_high = pyo.Var(domain=pyo.Binary)
        block.clip = pyo.Var(bounds=(a, b))
        block.clip_below = pyo.Constraint(expr=block.clip >= out - big_m * block.clip_high)
        block.clip_at_top = pyo.Constraint(expr=block.clip >= b - (b - a) * (1 - block.clip_high))
        out = block.clip
    return out


def _check_term(block, term) -> None:
    ok = isinstance(term, (int, float)) or getattr(term, "is_potentially_variable", None) is not None \
        or getattr(term, "is_expression_type", None) is not None
    if term is None or not ok:
        raise ParameterTypeError(
            f"record: the builder returned {type(term).__name__} for {block.name}; it must return the record's term "
            "l_i(w), a Pyomo expression (or a number), e.g. return block.u.", "record")


def _build_records(model, w, record, records, block_name, clip, loss_range) -> int:
    """Create the indexed Block and call ``record`` once per record on its own block."""
    rows = list(records)
    if not rows:
        raise ParameterError("records: no record given.", "records")
    model.add_component(block_name, pyo.Block(range(len(rows))))
    blocks = model.component(block_name)
    top = {c.local_name for c in model.component_objects(descend_into=False)}
    sizes = []
    for i, r in enumerate(rows):
        block = blocks[i]
        term = record(block, w, r)
        _check_term(block, term)
        if block.component(_TERM) is not None or block.component(_LOSS) is not None:
            raise ParameterError(f"record: {block.name} already has a component named 'term' or 'loss', names "
                                 "RecordModel gives its own; rename it.", "record")
        block.add_component(_TERM, pyo.Expression(expr=term))
        loss = _clip(block, block.component(_TERM), loss_range) if clip else block.component(_TERM)
        block.add_component(_LOSS, pyo.Expression(expr=loss))
        now = [c.local_name for c in model.component_objects(descend_into=False) if c.local_name not in top]
        if now:
            raise ModelError(f"record: building {block.name} added {_summary(now)} to the model, outside the record's "
                             "block: a record's builder adds components to its own block only.", "record")
        sizes.append(sum(1 for _ in block.component_objects(descend_into=True)))
    for i, size in enumerate(sizes):       # a later record's builder adding to an earlier block
        if sum(1 for _ in blocks[i].component_objects(descend_into=True)) != size:
            raise ModelError(f"record: {blocks[i].name} was changed after it was built (another record's builder "
                             "added to it): a record's builder adds components to its own block only.", "record")
    return len(rows)


def _check_loss_range(loss_range, clip) -> tuple | None:
    if loss_range is None:
        if clip:
            raise ParameterError("clip=True needs loss_range=(a, b), the range each record's term is clipped into.",
                                 "loss_range")
        return None
    try:
        a, b = (float(x) for x in loss_range)
    except (TypeError, ValueError):
        raise ParameterTypeError("loss_range must be a pair of numbers (a, b), a < b.", "loss_range") from None
    if not a < b:
        raise ParameterError(f"loss_range must satisfy a < b; got ({a:g}, {b:g}).", "loss_range")
    return (a, b)


def RecordModel(*, decision, record: Callable, records: Iterable, public: Callable | None = None,  # noqa: N802
                loss_range=None, clip: bool = False, name: str = "w", block_name: str = RECORDS,
                grid=None) -> pyo.ConcreteModel:
    r"""Build a private loss model record by record: the decision, then the public part
    (before any record is read), then one block per record (module doc).

    Parameters
    ----------
    decision : pyo.Var, or callable(model) -> pyo.Var
        The decision with its domain and bounds, fixed before the data
        (``pyo.Var(range(6), domain=pyo.Binary)``); added as ``model.<name>``.  Its bounds
        are declared public (they were written before any record was read).
    record : callable(block, w, r) -> expression
        Called once per record r on a fresh block ``model.records[i]``; adds the record's
        variables, rows (and Piecewise, sub-blocks, mutable Params) to ``block`` and
        returns its term l_i(w).  It may reference only its block and the decision ``w``.
    records : iterable
        The private records, one item per record; read only after the public part is built.
    public : callable(model, w) -> expression or None, optional
        Adds the public constraints on the decision (and any variable tied to the decision
        alone) and returns the public cost C(w) (or None).  It is run before the records
        are read and is given none; everything it adds is declared public.
    loss_range : (a, b), optional
        The range of each record's term, recorded in the model's ModelInfo.
    clip : bool
        Enter each record's term as min(max(l_i, a), b) (needs ``loss_range``; module doc).
    name, block_name : str
        The names of the decision and of the indexed Block of the records.
    grid : sequence, or sequence of sequences, optional
        The public values of a continuous decision (one sequence for every coordinate,
        or one per coordinate), recorded as the ModelInfo's grid.

    Returns
    -------
    pyo.ConcreteModel
        An ordinary Pyomo model minimizing sum_i records[i].loss + public_cost, with a
        ModelInfo: ``record_blocks=block_name``, ``n_samples=n``, ``loss_range``, the
        public components declared (``public_constraints``), ``weights=name``.
    """
    if not callable(record):
        raise ParameterTypeError("record must be a function record(block, w, r) returning the record's term.",
                                 "record")
    if public is not None and not callable(public):
        raise ParameterTypeError("public must be a function public(model, w) returning the public cost or None.",
                                 "public")
    span = _check_loss_range(loss_range, clip)
    model = pyo.ConcreteModel()
    w = _add_decision(model, decision, name)
    part = _build_public(model, w, public)
    before = _fingerprint(model, w, part.names)
    n = _build_records(model, w, record, records, block_name, clip, span)
    if _fingerprint(model, w, part.names) != before:
        raise ModelError("record: a record's builder changed the decision or the public part (a bound, a row, a "
                         "mutable Param): a record's builder adds to its own block only.", "record")
    blocks = model.component(block_name)
    total = sum(blocks[i].component(_LOSS) for i in range(n))
    model.add_component(_OBJECTIVE, pyo.Objective(expr=total + part.cost if part.cost is not None else total))
    check_record_blocks(model, part.w_vars, block_name)
    declared = (w.local_name,) + tuple(x for x in part.names if x != w.local_name)
    attach_info(model, ModelInfo(weights=w.local_name, grid=_grid_of(grid, len(part.w_vars)), loss_range=span,
                                 n_samples=n, public_constraints=declared, record_blocks=block_name,
                                 extra={"clipped": bool(clip)}))
    return model


def _grid_of(grid, d: int) -> tuple | None:
    if grid is None:
        return None
    items = list(grid)
    if items and all(isinstance(x, (int, float)) for x in items):
        return tuple(tuple(sorted(float(x) for x in items)) for _ in range(d))
    if len(items) != d:
        raise ParameterError(f"grid: {len(items)} sequences for a decision of {d} coordinates.", "grid")
    return tuple(tuple(sorted(float(x) for x in g)) for g in items)
