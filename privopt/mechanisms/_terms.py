"""Each record's term against its declared range, where a mechanism cannot clip it.

Private selection scores every point of W and clips each record's term into ``loss_range``
(:class:`~privopt.mechanisms.selection._evaluate.FixAndSolveEvaluator`).  OPDisc, OPSamp and RSPM
release an argmin of a perturbed model over all of W at once, so there is no per-point
loss to clip; their guarantees assume every record's term in ``loss_range`` (OPSamp:
an interval of width 1; OPDisc: the range over the separation gives the Lipschitz
constant; RSPM: the range's width is Delta).  :func:`check_record_terms` refuses the
release when a record's term breaks that range at a point the mechanism computed (the
oracle's answer, every answer of OPSamp): the records' blocks are the ones the model's
contract found (:class:`privopt.models.ModelContract`, one finder), and each block's part of
the objective is read from a solve of the model with the decision fixed at the point (a
warm HiGHS re-solve where the model is linear, else a certified solve of a clone through
Pyomo).  With only a sensitivity Delta declared (RSPM's ``sensitivity=``), the n terms at
one point must lie within an interval of width Delta: two records' terms at the same w
further apart than Delta show that replacing one by the other moves L(w) by more.

The refusal is decided after the data is read, so it is charged like a release (the
ledger charges from the reservation on) and its message carries no value computed from
the data: neither the point, nor a term, nor how many lay outside.  A term beyond the
range at a point the mechanism never computed is not seen (docs/guarantees.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyomo.core.expr.visitor import identify_variables

from ..exceptions import ModelError, NotCertifiedError
from ..models import quiet_clone
from ..oracle import certified_solve
from ..solvers import HighsFixedSession, SolveOptions, record_blocks

__all__ = ["TermBound", "check_record_terms", "record_terms_kind", "CLIPPED_BY_CONSTRUCTION", "CHECKED_AT_ANSWERS"]

#: ``parameters["record_terms"]`` of OPDisc, OPSamp and RSPM (:func:`record_terms_kind`), read from
#: the model's structure and declarations only: each record's term clipped into ``loss_range`` at
#: every w by the model's construction (:func:`privopt.RecordModel` with ``clip=True``) ...
CLIPPED_BY_CONSTRUCTION = "clipped by construction"
#: ... or read at the points the mechanism computed only (a term outside the range elsewhere is not seen).
CHECKED_AT_ANSWERS = "checked at the points computed"


@dataclass(frozen=True)
class TermBound:
    """What each record's term must meet at every point checked: inside ``loss_range``
    (a, b) when one is declared, else (``width``: a declared sensitivity Delta) the n terms
    at one point within an interval of width Delta.  Both public."""

    loss_range: tuple | None = None
    width: float | None = None

    @property
    def active(self) -> bool:
        return self.loss_range is not None or self.width is not None

    def broken(self, values: np.ndarray) -> bool:
        """Whether the terms ``values`` (one point's, one per record) break the bound."""
        if values.size == 0:
            return False
        if self.loss_range is not None:
            a, b = float(self.loss_range[0]), float(self.loss_range[1])
            tol = 1e-7 * (1.0 + abs(a) + abs(b))
            return bool(np.any(values < a - tol) or np.any(values > b + tol))
        width = float(self.width)   # type: ignore[arg-type]
        return bool(values.max() - values.min() > width + 1e-7 * (1.0 + width + float(np.abs(values).max())))


def check_record_terms(model, w_vars, contract, points, bound: TermBound, what: str, solve: SolveOptions) -> int:
    """Refuse (:class:`~privopt.exceptions.ModelError`, nothing released) when at one of
    ``points`` (rows: values of the decision ``w_vars`` of ``model``) a record's term breaks
    ``bound``; return how many distinct points were checked (0 where there is nothing to
    check: no bound, or no records' blocks, as privopt's own builders, whose rows merge
    identical records).  ``contract``: the :class:`privopt.models.ModelContract` the call's
    checks returned; ``solve``: the run's solver options (its solver, threads, abs_gap)."""
    split = None if contract is None else contract.split
    if not bound.active or split is None or split.n_blocks == 0:
        return 0
    pts = np.unique(np.atleast_2d(np.asarray(points, dtype=np.float64)), axis=0)
    for values in _terms(model, w_vars, contract, pts, solve):
        if bound.broken(values):
            raise ModelError(_broken_message(bound, what), "model")
    return int(pts.shape[0])


def record_terms_kind(info, contract, bound: TermBound) -> str | None:
    """What the release rests on for each record's term, from public structure only:
    :data:`CLIPPED_BY_CONSTRUCTION` for a model built record by record with ``clip=True`` (each
    term in ``loss_range`` at every w, whatever the data), :data:`CHECKED_AT_ANSWERS` where
    :func:`check_record_terms` reads the records' blocks (the range elsewhere is assumed), None
    where there is nothing to read (no range declared, or privopt's own builders, whose rows
    merge identical records)."""
    split = None if contract is None else contract.split
    if split is None or split.n_blocks == 0 or not bound.active:
        return None
    if contract.by_construction and info is not None and bool(info.extra.get("clipped")):
        return CLIPPED_BY_CONSTRUCTION
    return CHECKED_AT_ANSWERS


def _broken_message(bound: TermBound, what: str) -> str:
    """The refusal's text: the declared bound only (public), no value read from the data."""
    if bound.loss_range is not None:
        a, b = bound.loss_range
        said = f"lies outside loss_range = ({a:g}, {b:g})"
    else:
        said = f"differs from another record's term at the same decision by more than sensitivity = {bound.width:g}"
    return (f"model: with the decision fixed at a point {what} computed, a record's term (its block of the model, "
            f"found by the model's contract) {said}. The model breaks the contract its noise is calibrated to, "
            "so the release would not be private; nothing is released (the call is charged: the data was read). "
            "Fix: declare a range that holds for every record and every decision, fixed before the data is seen, "
            "or bound each record's term in the model itself (a public cap on its variables). No value of the "
            "data is shown.")


def _terms(model, w_vars, contract, points, solve: SolveOptions):
    """Each point's record terms (one array per point, one value per block): by warm HiGHS
    re-solves of ``model`` where it is linear and HiGHS is the solver, else by certified
    solves of one clone through Pyomo."""
    weight_ids = {id(v) for v in w_vars}
    relax = [c for c in contract.public_constraints
             if all(id(v) in weight_ids for v in identify_variables(c.body, include_fixed=False))]
    session = HighsFixedSession.build(model, w_vars, solver=solve.solver_or("highs"), threads=solve.threads,
                                      abs_gap=solve.abs_gap, options=solve.solver_options, relax=relax)
    reader = None
    if session is not None:
        reader, _ = record_blocks(session, contract.split.column_labels(session.column_of))
    if reader is not None and reader.n_blocks == contract.split.n_blocks:
        for point in points:
            report = session.solve_at(point, solve.time_limit)
            if not report.certified_optimal or report.objective is None:
                raise NotCertifiedError(_uncheckable(), None)
            yield reader.values(session.column_values())
        return
    clone = quiet_clone(model)
    cw = [clone.find_component(v) for v in w_vars]
    for con in relax:
        clone.find_component(con).deactivate()
    split = contract.split_on(clone, cw)
    options = solve.replace(on_failure="raise")
    for point in points:
        for v, x in zip(cw, point):
            v.fix(float(x))
        try:
            certified_solve(clone, options=options, what="the model with the decision fixed", _prechecked=True)
        except NotCertifiedError:
            raise NotCertifiedError(_uncheckable(), None) from None
        yield split.values()


def _uncheckable() -> str:
    return ("Not certified: the model with the decision fixed at a point the mechanism computed was not solved "
            "to a certified optimum, so each record's term could not be checked against its declared range; "
            "nothing is released. Check that the model is feasible for every decision, raise time_limit, or try "
            "another solver.")

