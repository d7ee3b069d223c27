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
Each is declared by its name: ``public_constraints="all"`` declares nothing (a
model with a component it would have covered is refused, naming each), because a
blanket declaration also covers a constraint whose numbers came from the records
(a cardinality computed from the data gave |W| 92 on one data set and 36 on its
neighbour), and privopt cannot tell such numbers from numbers fixed in advance.

Which constraints are decision constraints is decided from the model's
structure alone (never from a coefficient's value, only whether it is 0 or
negligible): a variable is *record-side* when it appears in the objective (and is
not a weight), or in a constraint with a record-side variable; a constraint is a
decision constraint when none of its variables is record-side.  A variable named
in a row with a coefficient of 0, or below ``FAINT_RTOL`` = 1e-9 of the row's
largest coefficient, does not count (``Q + 1e-300 h_0 <= 1.2 mean(D)`` constrains
the decision exactly as ``Q <= 1.2 mean(D)`` does).  So ``w_j = sum_k g_k r_jk``
and any constraint on the grid binaries r count as decision constraints, while
``u_t >= w . x_t`` (u_t in the objective) is part of the loss.

A third place is the decision's own bounds, where a mechanism reads W from them
(no ``grid=``): ``Var(domain=Integers, bounds=(0, hi))`` with ``hi`` computed
from the records makes |W| depend on one record.  With ``bounds_give_w``,
:func:`check_public_constraints` refuses a weight whose own bounds narrow its
domain unless it is named in ``public_constraints`` (a binary variable's values
are its domain's and need no declaration).  A bound written as a number is read
as a number (Pyomo's ``Var.lower`` wraps it with the domain's bound, as
``max(0, 0)``; the variable's own bound is read instead), and only a bound that
depends on a mutable Param is a Param bound.  Immutable Params (whose values
Pyomo folds into the model) cannot be told from numbers.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from pyomo.core.expr.numvalue import is_constant
from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables

from ..exceptions import ModelError, ParameterError, ParameterTypeError
from ._records import FAINT_RTOL, check_record_blocks, row_variables

__all__ = ["ALL", "FAINT_RTOL", "Asked", "ModelContract", "RecordSplit", "check_model_contract", "record_split",
           "records_of", "decision_constraints", "param_bounds", "bounded_by_own_bounds", "check_public_constraints",
           "check_public_term", "parse_public_names"]

#: ``public_constraints="all"``: parsed, but declares nothing (:func:`check_public_constraints`
#: refuses it, naming each component it would have declared).
ALL = "all"


def parse_public_names(public_constraints, model):
    """``public_constraints`` as ``ALL`` or a frozenset of component names of
    ``model`` (a name, a Constraint, Var or Expression component or data object,
    or a sequence of them).  Every name must be a Constraint, Var or Expression
    of the model (a named Expression declares a public term of the objective).
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
        if comp is None or comp.ctype not in (pyo.Constraint, pyo.Var, pyo.Expression):
            known = sorted(c.name for c in model.component_objects((pyo.Constraint, pyo.Var, pyo.Expression),
                                                                   descend_into=True))
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ParameterError(
                f"public_constraints: the model has no constraint or variable named {name!r}.{hint}",
                "public_constraints")
        names.add(comp.name)
    return frozenset(names)


def _declared(obj, names) -> bool:
    return names == ALL or obj.name in names or obj.parent_component().name in names


@dataclass(frozen=True)
class ModelSides:
    """The two sides of a user's model, read from its structure alone (never a
    coefficient): ``record`` the ids of the record-side variables (in the objective and
    not a weight, or sharing an active constraint with one), ``objective`` those of the
    objective's own non-weight variables, ``rows`` every active constraint with the ids
    of its variables, ``external[k]`` whether row k is on the records' side, ``links`` the
    ids of the record-side variables of each summand of the objective that holds several
    (a summand joins its variables as a row does), ``variables`` the record-side
    variables themselves (VarData), and ``faint[k]`` the ids of row k's variables whose
    coefficients are negligible beside the row's others (:func:`row_variables`): they do
    not make the row a record's."""

    weight_ids: frozenset
    record: frozenset
    objective: frozenset
    rows: tuple
    external: tuple
    links: tuple = ()
    variables: tuple = ()
    faint: tuple = ()


def live_variables(expr) -> list:
    """The live variables of a constraint's body (:func:`row_variables`), faint ones included."""
    return row_variables(expr)[0]


def model_sides(model, w_vars, skip=(), decision=()) -> ModelSides:
    """:class:`ModelSides` of ``model`` (see the module doc).  Constraint components
    named in ``skip`` (a builder's own per-record constraints, declared in its
    ModelInfo) are not read.  ``decision``: variables besides the weights declared part
    of the decision (an auxiliary variable tied to the decision alone, as a cost
    ``f >= c w``), read as the weights are: their rows and costs are then the
    decision's and need a declaration."""
    weight_ids = {id(v) for v in w_vars} | {id(v) for v in decision}
    skip = set(skip)
    record: set = set()
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        # every variable the objective names: a cost of 0 is a value (a record at distance 0), not structure
        record.update(id(v) for v in identify_variables(obj.expr, include_fixed=False))
    record -= weight_ids
    objective = frozenset(record)
    cons: list = []
    faint: list = []
    for comp in model.component_objects(pyo.Constraint, active=True, descend_into=True):
        if comp.name in skip:
            continue
        for con in comp.values():
            if not con.active:
                continue
            live, weak = row_variables(con.body)
            ids = {id(v) for v in live}
            if ids:
                cons.append((con, ids))
                faint.append(weak)
    # propagate "record-side" through the constraints until nothing changes: a row is the records'
    # when a record-side variable occurs in it with a coefficient that is not faint
    external = [False] * len(cons)
    changed = True
    while changed:
        changed = False
        for k, (_, ids) in enumerate(cons):
            if not external[k] and not (ids - faint[k]).isdisjoint(record):
                external[k] = True
                new = ids - weight_ids - record
                if new:
                    record |= new
                    changed = True
    links, by_id = _objective_links(model, record)
    return ModelSides(frozenset(weight_ids), frozenset(record), objective, tuple(cons), tuple(external),
                      links, tuple(by_id.values()), tuple(faint))


def _objective_links(model, record) -> tuple:
    """``(links, variables)``: the record-side variables' ids of every summand of the
    active objective that holds two or more of them, and every record-side variable of the
    objective and the rows by id (``variables``: id -> VarData)."""
    links, by_id = [], {}
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        for _, term in scaled_summands(obj.expr):
            ids = {id(v) for v in identify_variables(term, include_fixed=False) if id(v) in record}
            if len(ids) > 1:
                links.append(frozenset(ids))
    for comp in model.component_data_objects((pyo.Objective, pyo.Constraint), active=True, descend_into=True):
        body = comp.expr if comp.ctype is pyo.Objective else comp.body
        for v in identify_variables(body, include_fixed=False):
            if id(v) in record:
                by_id[id(v)] = v
    return tuple(links), by_id


def decision_constraints(model, w_vars, skip=(), sides: ModelSides | None = None) -> list:
    """The active decision constraints of ``model`` (see the module doc), in
    the model's order.  Constraint components named in ``skip`` (a builder's
    own per-record constraints, declared in its ModelInfo) are not read."""
    sides = model_sides(model, w_vars, skip) if sides is None else sides
    return [con for (con, _), ext in zip(sides.rows, sides.external) if not ext]


def _mutable_params(bound) -> list:
    """The mutable Params a bound of a variable (its own, as written: a number, a Param
    or an expression) depends on; ``[]`` for a number or an immutable Param."""
    if bound is None or isinstance(bound, (int, float)):
        return []
    if getattr(bound, "is_parameter_type", lambda: False)():
        return [bound] if getattr(bound, "mutable", False) or not is_constant(bound) else []
    if is_constant(bound):
        return []
    return list(identify_mutable_parameters(bound))


def _own_bounds(v) -> tuple:
    """The bounds written on ``v`` itself (``Var(bounds=...)``, ``setlb``/``setub``), not
    those of its domain: Pyomo's ``v.lower`` combines both (``max(0, 0)`` for a
    non-negative domain), which is why it is not read here."""
    return getattr(v, "_lb", None), getattr(v, "_ub", None)


def param_bounds(w_vars) -> list:
    """``(var, side)`` for every weight bound that is a mutable Param (or an
    expression of one), side ``"lower"`` or ``"upper"``.  A bound written as a
    number is not one (whatever the domain combines it with)."""
    out = []
    for v in w_vars:
        for side, bound in zip(("lower", "upper"), _own_bounds(v)):
            if _mutable_params(bound):
                out.append((v, side))
    return out


def bounded_by_own_bounds(w_vars, continuous: bool = False) -> list:
    """The weights whose own bounds (written on the variable, as numbers or Params) narrow
    the values their domain allows: W read from their domain and bounds would be read
    from those numbers.  A binary variable (or any whose bounds are its domain's) is not
    one: its values are its domain's.  A continuous weight counts only with ``continuous``
    (a mechanism over a continuous W, as OPSamp, whose box is the bounds)."""
    out = []
    for v in w_vars:
        if v.is_continuous() and not continuous:    # a discrete W is then read from a grid, not its bounds
            continue
        lb, ub = v.bounds
        dlo, dhi = v.domain.bounds() if v.domain is not None else (None, None)
        own_lo, own_hi = _own_bounds(v)
        narrower = ((own_lo is not None and lb is not None and (dlo is None or lb > dlo))
                    or (own_hi is not None and ub is not None and (dhi is None or ub < dhi)))
        if narrower:
            out.append(v)
    return out


def _summary(items, limit=6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _is_named(e) -> bool:
    return bool(getattr(e, "is_named_expression_type", lambda: False)())


def _constant_of(e):
    """The value of ``e`` when it holds no variable, else None."""
    if getattr(e, "is_potentially_variable", lambda: False)():
        return None
    return e


def objective_summands(expr, skip_ids=frozenset()) -> list:
    """The summands of ``expr`` read from its tree: sums (and named expressions, and
    scalings by a constant: ``c * (...)``, ``(...) / c``, ``-(...)``) are opened, every
    other node is one summand.  Named expressions whose id is in ``skip_ids`` (declared
    public terms) are left out.  Reads the tree, never a coefficient's value."""
    out, stack = [], [expr]
    for _ in range(10_000_000):        # a bound on the work, not a data-dependent loop
        if not stack:
            break
        e = stack.pop()
        if _is_named(e):
            if id(e) not in skip_ids:
                stack.append(e.expr)
            continue
        kind = type(e).__name__
        args: list = list(getattr(e, "args", None) or ())
        if kind in ("SumExpression", "LinearExpression"):
            stack.extend(args)
        elif kind == "NegationExpression" and args:
            stack.append(args[0])
        elif kind == "DivisionExpression" and len(args) == 2 and _constant_of(args[1]) is not None:
            stack.append(args[0])
        elif kind == "ProductExpression" and len(args) == 2 and _constant_of(args[0]) is not None:
            stack.append(args[1])
        elif kind == "ProductExpression" and len(args) == 2 and _constant_of(args[1]) is not None:
            stack.append(args[0])
        else:
            out.append(e)
    return out


def scaled_summands(expr) -> list:
    """``[(factor, summand), ...]`` with ``expr = sum factor * summand``: sums (and named
    expressions, and scalings by a constant) opened as :func:`objective_summands` opens
    them, each summand with the product of the constant factors it was found under (the
    factors' values are read: this is for evaluating a solved model's terms, never for
    deciding a refusal)."""
    out, stack = [], [(1.0, expr)]
    for _ in range(10_000_000):        # a bound on the work, not a data-dependent loop
        if not stack:
            break
        c, e = stack.pop()
        if _is_named(e):
            stack.append((c, e.expr))
            continue
        kind = type(e).__name__
        args: list = list(getattr(e, "args", None) or ())
        if kind in ("SumExpression", "LinearExpression"):
            stack.extend((c, a) for a in args)
        elif kind == "NegationExpression" and args:
            stack.append((-c, args[0]))
        elif kind == "DivisionExpression" and len(args) == 2 and _constant_of(args[1]) is not None:
            stack.append((c / float(pyo.value(args[1])), args[0]))
        elif kind in ("ProductExpression", "MonomialTermExpression") and len(args) == 2 \
                and _constant_of(args[0]) is not None:
            stack.append((c * float(pyo.value(args[0])), args[1]))
        elif kind == "ProductExpression" and len(args) == 2 and _constant_of(args[1]) is not None:
            stack.append((c * float(pyo.value(args[1])), args[0]))
        else:
            out.append((c, e))
    return out


@dataclass(frozen=True)
class RecordSplit:
    """The records' blocks of a model with the decision fixed, found once
    (:func:`record_split`): ``n_blocks`` blocks that hold a variable of the objective,
    ``variables[b]`` the record-side variables of block b, ``terms[b]`` the objective's
    summands of block b as ``(factor, summand)`` (its term is their sum), ``rest`` the
    summands on the decision alone and the constant.  Read from the structure; the
    summands' values are read only when a solved model is evaluated (:meth:`values`)."""

    n_blocks: int
    variables: tuple
    terms: tuple
    rest: tuple
    maximize: bool = False

    def values(self) -> np.ndarray:
        """Each block's term at the model's current values (a solved model), in the
        objective's own sense."""
        return np.array([sum(c * float(pyo.value(t)) for c, t in group) for group in self.terms], dtype=float)

    def column_labels(self, column_of) -> dict:
        """``{column: block}`` for every record-side variable ``column_of`` (id of a
        VarData -> a solver's column) maps, the one reading of the blocks a solver's
        session uses."""
        out = {}
        for b, group in enumerate(self.variables):
            for v in group:
                col = column_of(v)
                if col is not None:
                    out[int(col)] = b
        return out


def records_of(model, w_vars) -> RecordSplit:
    """The :class:`RecordSplit` of ``model`` with the decision ``w_vars`` and no declaration
    (:func:`record_split` of its :func:`model_sides`), for a direct caller of an evaluator."""
    return record_split(model, model_sides(model, w_vars))


def record_split(model, sides: ModelSides) -> RecordSplit:
    """The :class:`RecordSplit` of ``model`` from its :class:`ModelSides`: the record-side
    variables linked by the record-side rows and by the objective's summands (the
    decision fixed), the blocks that hold a variable of the objective numbered in the
    order of their first variable, and the objective's summands grouped by block.  The
    one finder of the records' blocks every mechanism uses (the contract's count, the
    selection's clipping, the check of each record's term against loss_range)."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    maximize = bool(objectives) and objectives[0].sense == pyo.maximize
    if not sides.record:
        rest = tuple(t for o in objectives for t in scaled_summands(o.expr))
        return RecordSplit(0, (), (), rest, maximize)
    rows = [k for k, ext in enumerate(sides.external) if ext]
    label, ids = _record_labels(sides, rows)
    of_id = dict(zip(ids, (int(x) for x in label)))
    kept: dict = {}
    for v in sides.variables:                  # blocks with a variable of the objective, in the model's order
        lab = of_id[id(v)]
        if id(v) in sides.objective and lab not in kept:
            kept[lab] = len(kept)
    variables: list = [[] for _ in kept]
    for v in sides.variables:
        if of_id[id(v)] in kept:
            variables[kept[of_id[id(v)]]].append(v)
    terms: list = [[] for _ in kept]
    others: list = []
    for o in objectives:
        for c, t in scaled_summands(o.expr):
            blocks = {kept[of_id[id(v)]] for v in identify_variables(t, include_fixed=False)
                      if id(v) in of_id and of_id[id(v)] in kept}
            if blocks:
                terms[min(blocks)].append((c, t))      # one block (a summand joins its variables' blocks)
            else:
                others.append((c, t))
    return RecordSplit(len(kept), tuple(tuple(g) for g in variables), tuple(tuple(g) for g in terms),
                       tuple(others), maximize)


def decision_only_terms(model, sides: ModelSides, skip_ids=frozenset()) -> list:
    """The summands of the active objective on the decision alone (no record-side
    variable, at least one variable), when the objective has record-side variables:
    such a summand is part of L(w) and of no record's term.  Where no variable of the
    objective is on the records' side (every record's term written in the decision
    itself, ``sum_t (w - y_t) ** 2``), every summand is on the decision alone and none can
    be told from a record's term: ``[]``.  Declared public terms (``skip_ids``) are left out."""
    if not sides.objective:
        return []
    out = []
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        for term in objective_summands(obj.expr, skip_ids):
            if not getattr(term, "is_potentially_variable", lambda: False)():
                continue
            ids = {id(v) for v in identify_variables(term, include_fixed=False)}
            if ids and ids.isdisjoint(sides.record):
                out.append(term)
    return out


def _term_text(term, limit=3) -> str:
    """A summand by the names of its variables (``a term in Q, f``), never by its
    coefficients, which may have been computed from the records."""
    names = list(dict.fromkeys(v.name for v in identify_variables(term, include_fixed=False)))
    return "a term in " + ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _record_labels(sides: ModelSides, rows) -> tuple[np.ndarray, list]:
    """``(label, ids)``: the block of each record-side variable (``ids[k]`` has
    ``label[k]``) when the record-side variables are linked by the rows ``rows`` (indices
    into ``sides.rows``): the connected components, the decision fixed."""
    ids = sorted(sides.record)
    index = {v: k for k, v in enumerate(ids)}
    a, b = [], []
    groups = [sides.rows[k][1] for k in rows] + list(sides.links)
    for group in groups:
        members = [index[v] for v in group if v in index]
        a.extend(members[:1] * (len(members) - 1))
        b.extend(members[1:])
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(ids), len(ids)))
    _, label = connected_components(graph, directed=False)
    return label, ids


def loss_blocks(sides: ModelSides, rows=None) -> int:
    """How many blocks the record-side part of the model falls into with the decision
    fixed (linked by ``rows``, default every record-side row), counting only the blocks
    that hold a variable of the objective: the most records whose terms can be told apart."""
    if not sides.record:
        return 0
    rows = [k for k, ext in enumerate(sides.external) if ext] if rows is None else rows
    label, ids = _record_labels(sides, rows)
    return len({int(lab) for lab, v in zip(label, ids) if v in sides.objective})


def coupling_rows(sides: ModelSides, n_samples: int) -> list:
    """The record-side rows that join the terms of several records, when the record-side
    part falls into fewer than n blocks (else ``[]``): the widest rows (most record-side
    variables), dropped widest first until n blocks are left, as a capacity row
    ``sum_i q_i x_ij <= C_j y_j`` over every customer is.  Where dropping every row still
    leaves fewer than n blocks (one variable of the objective serves several records), the
    rows of the largest block."""
    record_rows = [k for k, ext in enumerate(sides.external) if ext]
    width = {k: len(sides.rows[k][1] & sides.record) for k in record_rows}
    for top in sorted({w for w in width.values() if w > 1}, reverse=True):
        kept = [k for k in record_rows if width[k] < top]
        if loss_blocks(sides, kept) >= n_samples:
            return [sides.rows[k][0] for k in record_rows if width[k] >= top]
    label, ids = _record_labels(sides, record_rows)
    biggest = np.bincount(label).argmax()
    members = {v for lab, v in zip(label, ids) if lab == biggest}
    return [sides.rows[k][0] for k in record_rows if not sides.rows[k][1].isdisjoint(members)]


#: How a user declares the bound a coupling implies, per mechanism keyword (:func:`_refuse_coupling`).
_COUPLING_DECLARATIONS = {
    "sensitivity": ("; or, if you can prove a bound Delta on how much one replaced record moves L(w) at every w "
                    "with the shared rows, declare it with sensitivity=Delta (at least the width of "
                    "loss_range), which the noise is then calibrated to."),
    None: (". Its guarantee is for a sum of per-record terms and has no bound to declare for a coupled loss; "
           "a model that merges identical records into one weighted term each declares its per-record rows "
           "instead, ModelInfo(record_constraints=[...]), as privopt's own models do."),
}


def _refuse_coupling(sides, n_samples, what, declare: str | None = "sensitivity") -> None:
    """Refuse a model whose records' terms are joined by a row (module doc of
    :func:`check_public_constraints`), naming the rows; ``declare``: the keyword by which
    the caller may declare the bound the coupling implies (None: there is none)."""
    blocks = loss_blocks(sides)
    if not sides.objective or blocks >= n_samples:
        return
    rows = coupling_rows(sides, n_samples)
    comps: dict = {}
    for c in rows:
        comps.setdefault(c.parent_component().name, []).append(c)
    listed = [name if len(cs) == 1 and not cs[0].parent_component().is_indexed()
              else f"{name} ({len(cs)} row{'s' if len(cs) > 1 else ''})" for name, cs in comps.items()]
    raise ModelError(
        f"model: with the decision fixed, its records' side falls into {blocks:,} independent block(s) for "
        f"n = {n_samples:,} records, so some block holds several records' terms: they are joined by "
        f"{_summary(listed) if listed else 'a summand of the objective holding several records variables'}. "
        "One record can then move L(w) through the others' terms, by more than one "
        f"record's term may, and {what} calibrated to one record's term would not be private. Fix: write the "
        "model so that each record's term has its own variables and rows (a capacity shared by the records is "
        "a constraint of the decision, or a per-record penalty)" + _COUPLING_DECLARATIONS[declare],
        declare or "model")


@dataclass(frozen=True)
class Asked:
    """What a mechanism asks of a model's declarations (:func:`check_public_constraints`,
    :func:`check_model_contract`): ``bounds_give_w`` (W or its box is read from the
    weights' own bounds, so a weight whose bounds narrow its domain must be declared;
    with ``continuous`` a continuous weight's too), ``public_term`` (the declared public
    summand, :func:`check_public_term`), ``coupled_declared`` (the caller declared the
    bound a coupling of the records implies) and ``declare`` (the keyword of that
    declaration, None where the mechanism has none)."""

    bounds_give_w: bool = False
    continuous: bool = False
    public_term: Any = None
    coupled_declared: bool = False
    declare: str | None = "sensitivity"


def check_public_constraints(model, w_vars, public_constraints=None, info=None, what="this mechanism", *,
                             n_samples=None, asked: Asked = Asked(), sides: ModelSides | None = None) -> list:
    """Refuse a model whose decision constraints, Param bounds or (with
    ``asked.bounds_give_w``) weights' own bounds are not all declared public; return
    the declared decision constraints (which then shape W).  ``asked``: what the
    mechanism asks (:class:`Asked`); ``sides``: the :class:`ModelSides`, if read.

    Declared are those named in ``public_constraints`` (a name, or a list of
    Constraint/Var names; a component's name covers every index; ``"all"``
    declares nothing, and a refusal then says so and names each component),
    and those the model's :class:`~privopt.models.ModelInfo` lists in
    ``public_constraints`` (privopt's own builders declare the constraints
    they build from public quantities).  ``bounds_give_w``: a weight whose own
    bounds narrow its domain must be named too (:func:`bounded_by_own_bounds`).

    The objective's summands on the decision alone (:func:`decision_only_terms`)
    must be declared as well: ``public_term`` (the component
    :func:`check_public_term` returned), or named Expressions listed in
    ``public_constraints``; ``"all"`` does not declare them.

    With ``n_samples`` (every mechanism, where n is known), the records must not be
    coupled: with the decision fixed, the record-side variables linked by the record-side
    rows must fall into at least n blocks that hold a variable of the objective
    (:func:`loss_blocks`), else the rows that join several records are named
    (:func:`coupling_rows`) and the call refused, unless ``coupled_declared`` (the caller
    declared, by the keyword ``declare``, the bound the coupling implies; ``declare``
    None: the mechanism has no such keyword, as OPDisc and OPSamp, whose guarantees are
    for sums of per-record terms).  Skipped for a model whose ModelInfo declares its
    per-record rows (``record_constraints``: privopt's builders, which merge identical
    records into one weighted row), and for an objective with no record-side variable.
    Runs before any noise is drawn and any solve starts; reads the model's structure only.
    """
    bounds_give_w, public_term, declare = asked.bounds_give_w, asked.public_term, asked.declare
    names = parse_public_names(public_constraints, model)
    blanket = names == ALL          # "all" declares nothing: each component is named (module doc)
    if blanket:
        names = frozenset()
    if info is not None and info.public_constraints:
        names = names | frozenset(info.public_constraints)
    skip = info.record_constraints if info is not None else ()
    if sides is None:
        sides = model_sides(model, w_vars, skip, declared_decision(model, w_vars, names))
    cons = decision_constraints(model, w_vars, skip, sides)
    bounds = param_bounds(w_vars)
    undeclared = [c for c in cons if not _declared(c, names)]
    loose = [(v, side) for v, side in bounds if not _declared(v, names)]
    loose_ids = {id(v) for v, _ in loose}
    from_bounds = ([v for v in bounded_by_own_bounds(w_vars, asked.continuous)
                    if not _declared(v, names) and id(v) not in loose_ids]
                   if bounds_give_w else [])
    note = _ALL_NOTE if blanket else ""
    if undeclared or loose:
        parts, fix = [], []
        if undeclared:
            comps: dict = {}
            for c in undeclared:
                comps.setdefault(c.parent_component().name, []).append(c)
            listed = [name if len(cs) == 1 and not cs[0].parent_component().is_indexed()
                      else f"{name} ({len(cs)} constraint{'s' if len(cs) > 1 else ''})"
                      for name, cs in comps.items()]
            parts.append(f"constraints on the decision alone: {_summary(listed)}{_faint_note(sides, undeclared)}")
            fix += list(comps)
        if loose:
            parts.append("bounds of the decision given by mutable Params: "
                         + _summary([f"{v.name}.{side[:2]}" for v, side in loose]))
            fix += list(dict.fromkeys(v.parent_component().name for v, _ in loose))
        if from_bounds and blanket:    # one refusal names everything "all" would have declared
            by_var: dict = {}
            for v in from_bounds:
                by_var.setdefault(v.parent_component().name, []).append(v)
            parts.append("bounds written on the decision, from which W is read: "
                         + _summary([_bounds_text(name, vs) for name, vs in by_var.items()], 4))
            fix += [name for name in by_var if name not in fix]
        raise ModelError(
            f"model: {note}{'; '.join(parts)}. {what} would let them shape the set of decisions W it releases "
            "over, so if their coefficients or values come from the private records the release is not "
            "private (one record can change W and the published |W|). privopt reads none of them as "
            "public unless you say so. Fix: if they are fixed before the data is seen, declare them by "
            f"name, public_constraints={fix!r}; otherwise "
            "deactivate them (model.<name>.deactivate()) or move them into the loss.", "public_constraints")
    if from_bounds:
        groups: dict = {}
        for v in from_bounds:
            groups.setdefault(v.parent_component().name, []).append(v)
        names_of = list(groups)
        shown = _summary([_bounds_text(name, vs) for name, vs in groups.items()], 4)
        raise ModelError(
            f"model: {note}{what} would read W, the set of decisions it releases over, from the bounds written on "
            f"the decision: {shown}. If a bound came from the private records, one record changes W and the "
            "published |W|, and the release is not private; privopt reads a variable's bounds as public only "
            "when you say so. Fix: if they are fixed before the data is seen, declare them, "
            f"public_constraints={names_of!r} (with the constraints you declare); otherwise bound the decision "
            "by numbers fixed in advance, or drop the bounds and give its values with grid=[...]. (The bounds "
            "are not shown: until declared they may come from the data.)",
            "public_constraints")
    _refuse_decision_terms(model, sides, names, public_term, what)
    builder_records = info is not None and bool(info.record_constraints)
    if n_samples is not None and not asked.coupled_declared and not builder_records:
        _refuse_coupling(sides, n_samples, what, declare)
    return [c for c in cons if _declared(c, names)]


def _faint_note(sides: ModelSides, undeclared) -> str:
    """What the refusal adds when some undeclared decision row names a record's variable only
    with a negligible coefficient (:data:`FAINT_RTOL`): the rows by name, never a coefficient."""
    ids = {id(c) for c in undeclared}
    named = [con.parent_component().name for (con, _), weak in zip(sides.rows, sides.faint)
             if id(con) in ids and not weak.isdisjoint(sides.record)]
    if not named:
        return ""
    return (f" ({_summary(list(dict.fromkeys(named)), 4)} name{'s' if len(named) == 1 else ''} a record's variable "
            f"only with a coefficient below {FAINT_RTOL:g} of the row's largest, which counts as absent: the "
            "row still constrains the decision as if that variable were not there, so it is not a record's row)")


#: The start of a refusal of ``public_constraints="all"`` (:func:`check_public_constraints`).
_ALL_NOTE = ("public_constraints='all' declares nothing: privopt cannot tell a number fixed before the data "
             "from one computed from the records, so each component that shapes W is declared by its name, "
             "your statement that its numbers were fixed in advance. Here: ")


def _declared_terms(model, names, public_term) -> frozenset:
    """The ids of the named expressions declared public: ``public_term`` and every
    Expression component named in ``names`` (each of its indices)."""
    ids = set() if public_term is None else {id(public_term)}
    if names != ALL:
        for name in names:
            comp = model.find_component(name)
            if comp is not None and comp.ctype is pyo.Expression:
                ids.update(id(e) for e in comp.values())
                ids.add(id(comp))
    return frozenset(ids)


def _refuse_decision_terms(model, sides, names, public_term, what) -> None:
    """Refuse an objective with undeclared summands on the decision alone, naming them."""
    terms = decision_only_terms(model, sides, _declared_terms(model, names, public_term))
    if not terms:
        return
    counts: dict = {}
    for t in terms:            # the same text many times (a scaled x inside every record's term): once, counted
        text = _term_text(t)
        counts[text] = counts.get(text, 0) + 1
    shown = _summary([text if k == 1 else f"{text} ({k} times, scaled)" for text, k in counts.items()], 4)
    name = next(n for n in ("fixed_cost", "public_cost", "decision_cost") if model.component(n) is None)
    raise ModelError(
        f"model: the objective has {len(terms)} term{'s' if len(terms) > 1 else ''} on the decision alone, "
        f"in which no record's variable occurs: {shown}. Such a term is part of L(w) and of no record, so if "
        f"its numbers came from the private records, {what} would release by a loss in which one record moves "
        "every point (not a sum of per-record terms in loss_range); privopt reads none as public unless you say "
        "so. Fix: if it is a cost fixed before the data is seen, write it as a named Expression added to the "
        f"objective, model.{name} = pyo.Expression(expr=...), and declare it (public_term={name!r} in "
        f"privopt.exponential_mechanism, or public_constraints=[{name!r}]); otherwise move it into the records' "
        "terms or drop it.", "public_term")


def _bounds_text(name, vs) -> str:
    """``x`` (or ``x (3 variables)``): the bounded weights by name only.  Their bounds are
    not printed: until declared they may have been computed from the records, and a
    message is an output."""
    return name if len(vs) == 1 and not vs[0].parent_component().is_indexed() else (
        f"{name} ({len(vs)} variable{'s' if len(vs) > 1 else ''})")


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


# --- the one contract of a model built by hand, for every mechanism ------------------

def declared_decision(model, w_vars, names) -> list:
    """The variables besides the weights that ``names`` (the declared public components)
    name: an auxiliary variable tied to the decision alone (a cost ``f >= c w``), declared
    part of the decision.  Its rows and its cost are then the decision's, and each needs
    its own declaration (:func:`check_public_constraints`)."""
    if names == ALL or not names:
        return []
    weight_ids = {id(v) for v in w_vars}
    out = []
    for name in sorted(names):
        comp = model.find_component(name)
        if comp is not None and comp.ctype is pyo.Var:
            out += [v for v in comp.values() if id(v) not in weight_ids]
    return out


@dataclass(frozen=True)
class ModelContract:
    """What the contract read from a model, before any of its values: the declared
    decision constraints that shape W (``public_constraints``), ``n_records`` (n, required),
    the records' blocks (``split``; None for privopt's own builders, whose rows merge
    identical records with a weight) and whether they were declared by construction
    (``by_construction``: ``ModelInfo.record_blocks``)."""

    public_constraints: tuple
    n_records: int
    split: RecordSplit | None
    by_construction: bool = False
    skip: tuple = ()
    decision: tuple = ()
    blocks_name: str | None = None

    def split_on(self, model, w_vars) -> RecordSplit | None:
        """The same split read on ``model``, a clone of the checked model (``w_vars`` its
        decision), by the same finder and declarations: its blocks' terms can then be
        evaluated at the clone's values."""
        if self.split is None:
            return None
        if self.by_construction:
            return _split_by_blocks(model, model_sides(model, w_vars), str(self.blocks_name))
        return record_split(model, model_sides(model, w_vars, self.skip,
                                               declared_decision(model, w_vars, frozenset(self.decision))))


def contract_n(n_samples, info, what) -> int:
    """n: the caller's (checked against the model's by the mechanism) or the model's info;
    refused, naming both, when neither gives it.  Every mechanism's check of the records'
    blocks compares their count with n, so a model built by hand must say how many
    records its loss sums over."""
    n = n_samples if n_samples is not None else (info.n_samples if info is not None else None)
    if n is None:
        raise ParameterError(
            f"n_samples: {what} needs n, the number of records the loss sums over, to check that the model "
            "falls into one block per record with the decision fixed (records joined by a row, or a variable "
            "shared by every record's term, would otherwise go unseen). Give n_samples=n, or declare it in the "
            "model's info, privopt.models.attach_info(model, ModelInfo(n_samples=n, ...)).", "n_samples")
    return int(n)


def check_model_contract(model, w_vars, public_constraints=None, info=None, what="this mechanism", *,
                         n_samples=None, asked: Asked = Asked(bounds_give_w=True)) -> ModelContract:
    """The one check of a user's model every mechanism runs (private selection, OPDisc,
    OPSamp, RSPM), before any noise is drawn and any solve starts, from the model's
    structure and declarations only:

    * n is required (:func:`contract_n`);
    * a model built record by record (``ModelInfo.record_blocks``): its record blocks are
      verified (:func:`_declared_record_blocks`: their count is n, each references only its
      own variables and the decision), and everything outside them is public by
      construction, no declaration asked;
    * a model built by hand: every constraint on the decision alone, every bound of the
      decision (``asked.bounds_give_w``; with ``asked.continuous`` a continuous decision's too) and
      every objective term on the decision alone must be declared
      (:func:`check_public_constraints`); a coefficient of 0, or one below
      :data:`FAINT_RTOL` of the row's largest, does not make a row a record's
      (:func:`row_variables`); a variable declared by name in
      ``public_constraints`` that is not a weight is part of the decision
      (:func:`declared_decision`), its rows and costs then declared as the decision's;
      and the records' side must fall into exactly n blocks (:func:`record_split`): fewer
      is refused unless ``asked.coupled_declared``; more (a block that is no record's, as an
      auxiliary variable tied to the decision alone, or one shared by the records'
      terms) always.

    privopt's own builders (``ModelInfo.record_constraints``) declare their per-record rows
    and merge identical records; their blocks are not counted."""
    names = parse_public_names(public_constraints, model)
    n = contract_n(n_samples, info, what)
    if info is not None and info.record_blocks:
        return _by_construction(model, w_vars, info, n, what)
    declared = frozenset() if names == ALL else names
    if info is not None and info.public_constraints:
        declared = declared | frozenset(info.public_constraints)
    skip = info.record_constraints if info is not None else ()
    sides = model_sides(model, w_vars, skip, declared_decision(model, w_vars, declared))
    cons = check_public_constraints(model, w_vars, public_constraints, info, what, n_samples=n, asked=asked,
                                    sides=sides)
    if info is not None and info.record_constraints:
        return ModelContract(tuple(cons), n, None)
    split = record_split(model, sides)
    if sides.objective and split.n_blocks > n:
        _refuse_extra_blocks(split.n_blocks, n, what)
    aux = tuple(sorted(name for name in declared if (c := model.find_component(name)) is not None
                       and c.ctype is pyo.Var))
    return ModelContract(tuple(cons), n, split, skip=tuple(skip), decision=aux)


def _refuse_extra_blocks(blocks: int, n: int, what: str) -> None:
    """Refuse a model whose records' side falls into more blocks than records: some block
    is no record's (a variable tied to the decision alone, or shared by the records'
    terms), and its part of the objective cannot be told from a record's."""
    raise ModelError(
        f"model: with the decision fixed, the variables of its objective fall into {blocks:,} independent "
        f"blocks for n = {n:,} records, so at least one block is no record's: an auxiliary variable tied to "
        "the decision alone (a cost written as f >= c * w with f in the objective), or one shared by the "
        f"records' terms. Its cost is part of L(w) and of no record, so if its numbers came from the records "
        f"{what} would not be private; privopt reads none of it as public unless you say so. Fix: if it is a "
        "cost of the decision fixed before the data is seen, declare the variable and its rows by name, "
        "public_constraints=['f', 'f_row'], and add its cost as a named Expression declared too "
        "(model.fixed_cost = pyo.Expression(expr=f), public_constraints=[..., 'fixed_cost']); otherwise "
        "write it into each record's own term, or pass the right n_samples.", "model")


def _by_construction(model, w_vars, info, n: int, what: str) -> ModelContract:
    """The contract of a model built record by record: its blocks verified, counted against
    n, and everything outside them public by construction (every constraint on the
    decision alone shapes W as declared)."""
    count = _declared_record_blocks(model, w_vars, info)
    if count != n:
        raise ModelError(
            f"model: its ModelInfo declares {count:,} record blocks in {info.record_blocks!r} for n = {n:,} "
            f"records; {what} needs one block per record. Pass the n the model was built on.", "n_samples")
    sides = model_sides(model, w_vars)
    cons = decision_constraints(model, w_vars, sides=sides)
    return ModelContract(tuple(cons), n, _split_by_blocks(model, sides, info.record_blocks), True,
                         blocks_name=info.record_blocks)


def _declared_record_blocks(model, w_vars, info) -> int:
    """The number of record blocks of a model built record by record (``info.record_blocks``,
    an indexed Block), each verified by :func:`privopt.models.check_record_blocks` to
    reference only its own components and the decision (and no row outside the blocks to
    reference a block's variable)."""
    return check_record_blocks(model, w_vars, info.record_blocks)


def _split_by_blocks(model, sides: ModelSides, name: str) -> RecordSplit:
    """The :class:`RecordSplit` of a model built record by record: block b is the b-th
    block of the indexed Block ``name`` (its variables and the objective's summands on
    them)."""
    comp = model.find_component(name)
    blocks = list(comp.values())
    owner: dict = {}
    variables = []
    for b, blk in enumerate(blocks):
        vs = list(blk.component_data_objects(pyo.Var, descend_into=True))
        variables.append(tuple(vs))
        owner.update((id(v), b) for v in vs)
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    terms: list = [[] for _ in blocks]
    rest: list = []
    for o in objectives:
        for c, t in scaled_summands(o.expr):
            hit = {owner[id(v)] for v in identify_variables(t, include_fixed=False) if id(v) in owner}
            (terms[min(hit)] if hit else rest).append((c, t))
    maximize = bool(objectives) and objectives[0].sense == pyo.maximize
    return RecordSplit(len(blocks), tuple(variables), tuple(tuple(g) for g in terms), tuple(rest), maximize)
