"""Evaluating L(w) on every point of a finite, public W: the engines behind
private selection's score-every-point path (:func:`privopt.exponential_mechanism`,
``path="score"``, and :func:`privopt.mixture_selection`).  Not to be confused with
:mod:`privopt.scoring`, the private risk scores.

Two evaluators, each yielding blocks ``(points, losses)`` in a fixed order of W
(so that noise drawn block by block in that order makes a seeded run
reproducible):

* :class:`HalfspaceEvaluator` for the 0/1-loss models of
  :func:`privopt.models.zero_one_halfspace`: the streamed enumeration of
  ``solver="enumerate"`` (:func:`privopt.search._losses.iter_losses`),
  exact integer error counts with the model's own decision and tie rule;
* :class:`FixAndSolveEvaluator` for any other Pyomo model whose decision vector
  takes finitely many values: L(w) is the optimum of the model with the
  weights fixed at w, solved by the chosen solver (persistently where the
  solver allows) and certified; a model whose objective depends on the
  weights alone is evaluated directly.

Both know their size |W| and a prediction of their running time *before*
reading the data's values, from public quantities only.
"""

from __future__ import annotations

import itertools
import pickle
import time
from typing import cast

import numpy as np
import pyomo.environ as pyo

from ..._limits import SCORING_MAX_POINTS, format_count
from ..._runtime import (RAY, check_executor, dumps_model, is_local, ray_executor, run_ordered, share, usable_cpus,
                        worker_count)
from ...exceptions import ModelError, NotCertifiedError, ParameterError
from ...models import quiet_clone, records_of
from ...space import (constrained_points, count_grid_points,
                     grid_points, norm_levels)
from ...search import (BRANCH_AND_BOUND_COST, BranchAndBoundCost, branch_and_bound_seconds, enumeration_levels,
                      iter_losses, scoring_costs)
from ._decision import DecisionSet, _linear_row, decision_set
from ...solvers import (BLOCKS_ENGINE, DEFAULT_ABS_GAP, HighsFixedSession, TerminationCondition, closed_form_blocks,
                        persistent_solver, record_blocks, solve)

__all__ = ["HalfspaceEvaluator", "FixAndSolveEvaluator", "SCORE_ENTRIES_PER_SECOND", "BranchAndBoundCost",
           "BRANCH_AND_BOUND_COST", "branch_and_bound_seconds",
           "DEFAULT_MAX_EVALUATIONS", "DEFAULT_MAX_POINTS", "ROW_OVERHEAD", "predict_evaluation_seconds"]

#: Throughput of the halfspace engines used to PREDICT their time, in score
#: entries per second, an entry being one multiply-add of a point with a row;
#: each (point, row) pair also costs about :data:`ROW_OVERHEAD` entries (the
#: comparison with the threshold and the weighted error count).  Measured by
#: ``benchmarks/bench_selection.py`` at 2.4e9 to 1.3e10 per second for the
#: dense engine on the development machine (2 cores), the low end while other
#: jobs ran; the prediction uses 1.5e9 so that a busy or slower machine still
#: finishes within the predicted time.
SCORE_ENTRIES_PER_SECOND = 1.5e9
ROW_OVERHEAD = 18


def predict_evaluation_seconds(n_points: int, n_records: int, d: int, sparse_work: float | None = None) -> float:
    """Seconds to score W, predicted from |W|, n (an upper bound on the
    distinct rows, which are data-dependent) and d: the dense engine's
    |W| n (d + ROW_OVERHEAD) / SCORE_ENTRIES_PER_SECOND, or the sparse
    engine's work (:func:`privopt.search._losses.scoring_costs` with n
    rows) at the same rate when it is given and smaller."""
    dense = n_points * max(1, int(n_records)) * (d + ROW_OVERHEAD)
    work = dense if sparse_work is None else min(dense, sparse_work)
    return work / SCORE_ENTRIES_PER_SECOND


#: The fix-and-solve evaluator's time PREDICTED from public sizes: (seconds per solve,
#: seconds per solve and per row or column of the model) for each engine, and the setup
#: time per row or column (reading the model into the solver).  Measured by
#: ``benchmarks/bench_own_model_speed.py`` on a p-median of 4,020 columns and 4,201 rows
#: (2 cores, other jobs running): about 2-3 ms per warm HiGHS re-solve (0.3 us per row or
#: column) and 35-50 ms per solve through Pyomo's persistent interface (5 us); the
#: constants are about 4x those, so that a busy machine still finishes within the
#: prediction.  A model whose LP needs many more simplex iterations per point than an
#: assignment can take longer: ``time_limit`` then still stops the run (nothing is released).
#: GLPK and CBC are driven through files: every solve writes the model as an LP file, runs the
#: solver's executable and reads its solution back, so a solve costs a process start plus Pyomo's
#: writer over every row and column, not a warm re-solve.  Measured on p-medians of 519, 1,271
#: and 2,049 rows and columns (``benchmarks/bench_own_model_speed.py``'s model, 28 to 45 points,
#: the exponential mechanism) on 2 quiet cores (load below 1): GLPK 13.7, 26.2 and 38.3 ms per
#: solve (5.4 ms + 0.016 ms per row or column), CBC 26.4, 38.1 and 50.3 ms (18 ms + 0.016 ms).
#: Their rates below are 1.4 times those, with no margin on top: a quiet machine finishes at
#: 0.7 of the prediction, a shared one later (at load 5.5 about 1.6 times the quiet times, at
#: load 9 to 11 about 4 times).  At Pyomo's persistent rate GLPK was predicted up to 7 times short
#: under load, CBC up to 12 times; at rates taken under load, 3 to 3.6 times long on a quiet machine.
FIX_SOLVE_RATES = {"highs_fixed": (2e-4, 1.2e-6), "pyomo": (2e-2, 2e-5), "direct": (1e-5, 2e-7),
                   "glpk": (7.5e-3, 2.25e-5), "cbc": (2.55e-2, 2.2e-5)}
FIX_SOLVE_SETUP_PER_ENTRY = 5e-5
#: The solvers Pyomo drives through files (one LP file written and read back per solve): slow for
#: scoring W point by point, where HiGHS's session re-solves one model with the decision fixed.
FILE_SOLVERS = ("glpk", "cbc")


def fix_solve_engine(solver, *, fast: bool = True, direct: bool = False) -> str:
    """The key of :data:`FIX_SOLVE_RATES` a fix-and-solve run with ``solver`` is timed at:
    ``"direct"`` (an objective of the decision alone), ``"highs_fixed"`` (HiGHS's session),
    ``"glpk"``/``"cbc"`` (through files), else ``"pyomo"`` (Pyomo's fix and a persistent solve)."""
    name = str(solver).lower()
    if direct:
        return "direct"
    if fast and name in ("highs", "appsi_highs"):
        return "highs_fixed"
    return name if name in FILE_SOLVERS else "pyomo"


def slow_solver_note(solver) -> str:
    """The note a plan of private selection carries when ``solver`` goes through files
    (:data:`FILE_SOLVERS`): HiGHS is the fast path, and why; "" otherwise."""
    name = str(solver).lower()
    if name not in FILE_SOLVERS:
        return ""
    base, per_entry = FIX_SOLVE_RATES[name]
    return (f"; {name} is driven through files (each point: the model written as an LP file, {name} started, its "
            f"solution read back: about {base * 1e3:.0f} ms + {per_entry * 1e3:.2f} ms per row or column of the "
            "model); solver='highs' is the fast path for selection: one HiGHS model read once and re-solved warm "
            "with the decision's columns fixed, a few ms per point (and no solve at all where the model falls "
            "apart per record)")
#: The margin folded into :data:`FIX_SOLVE_RATES` and :data:`FIX_SOLVE_SETUP_PER_ENTRY` (about 4x
#: the measured rates).  A prediction that must not exceed the work (a lower bound, used to
#: refuse up front) divides it out: ``fix_solve_seconds(..., margin=False)``.
FIX_SOLVE_MARGIN = 4.0


def model_size(model) -> int:
    """The model's numbers of variables and active constraints added: the public size
    the fix-and-solve predictions are read from (never a value of the data)."""
    return model.nvariables() + sum(
        1 for _ in model.component_data_objects(pyo.Constraint, active=True, descend_into=True))


def fix_solve_seconds(size: int, engine: str, n_solves: float, setups: float = 1.0, margin: bool = True) -> float:
    """Seconds predicted for ``setups`` readings of a model of ``size`` rows and columns
    into the solver and ``n_solves`` solves of it (each with the decision fixed or boxed),
    at the rates of :data:`FIX_SOLVE_RATES` for ``engine``; ``margin=False``: at the measured
    rates (the constants divided by :data:`FIX_SOLVE_MARGIN`), for a bound from below."""
    base, per_entry = FIX_SOLVE_RATES[engine]
    out = setups * size * FIX_SOLVE_SETUP_PER_ENTRY + n_solves * (base + size * per_entry)
    return out if margin else out / FIX_SOLVE_MARGIN

#: Default limit on |W| for the fix-and-solve engine (one solve per point).
DEFAULT_MAX_EVALUATIONS = 10_000

#: Default limit on |W| for the halfspace engine (:data:`privopt._limits.SCORING_MAX_POINTS`;
#: the old name, which privopt.estimators reads).
DEFAULT_MAX_POINTS = SCORING_MAX_POINTS


class HalfspaceEvaluator:
    """Exact 0/1 losses of every point of W_tau of a zero_one_halfspace model.

    W_tau is the model's grid intersected with its ball (and with
    ``norm_bound`` when given).  The predicted time uses n (public) as the
    bound on the number of distinct rows, never the data's own count.
    """

    path = "enumerate"

    def __init__(self, model, data, *, norm_bound=None, max_points=None):
        self.data = data
        self.grid = data.grid
        self.d = len(self.grid)
        D = data.norm_bound if norm_bound is None else min(float(norm_bound), data.norm_bound)
        coef, bound, unit, D = enumeration_levels(data, D)
        self.coef, self.bound, self.unit, self.norm_bound = coef, bound, unit, D
        self.n_points = count_grid_points(coef, bound)
        limit = SCORING_MAX_POINTS if max_points is None else max_points
        if self.n_points > limit:
            raise ParameterError(
                f"max_points: W has {format_count(self.n_points)} points, more than max_points={limit:,}. Use a "
                "smaller norm_bound or grid, fewer features, or OPDisc (privopt.opdisc) with a MILP "
                "solver, whose cost does not grow with |W|.", "max_points")

    def predicted_seconds(self, n_records: int) -> float:
        """Time predicted from |W|, n, d, the grid and (for the sparse engine)
        the number of distinct feature values, with n standing in for the
        data-dependent number of distinct rows."""
        base = len(np.unique(self.data.X)) if self.data.exact else None
        _, sparse = scoring_costs(self.n_points, n_records, self.d, self.coef, self.bound,
                                  self.grid if self.data.exact else None, base)
        return predict_evaluation_seconds(self.n_points, n_records, self.d, sparse)

    def blocks(self):
        for vals, _units, losses in iter_losses(self.data, self.coef, self.bound):
            yield vals, losses


def _product_points(grids, norm_bound, cap):
    """``(count, points)``: the points of prod_j grids[j] (inside
    ||w|| <= norm_bound when given), in the enumeration's order (the LAST
    coordinate most significant), or ``(count, None)`` when there are more
    than ``cap``.  Without a ball (or on a grid without exact norm levels) the
    product is listed with zero norm units and filtered afterwards."""
    lv = norm_levels(grids, norm_bound) if norm_bound is not None else None
    if lv is not None and lv.exact:
        coef, bound = lv.coef, int(lv.bound)
    else:
        coef, bound = [[0] * len(g) for g in grids], 0
    n = count_grid_points(coef, bound)
    if n > cap:
        return n, None
    pts, _ = grid_points(grids, coef, bound)
    if lv is not None and not lv.exact:
        pts = pts[(pts ** 2).sum(axis=1) <= norm_bound ** 2 * (1 + 1e-12)]
    return n, pts


def _filter_by_constraints(points, cons, w_vars):
    """Keep the rows of ``points`` that satisfy every constraint in ``cons``
    (linear ones vectorized, others point by point)."""

    keep = np.ones(points.shape[0], dtype=bool)
    index = {id(v): j for j, v in enumerate(w_vars)}
    slow = []
    for con in cons:
        linear = _linear_row(con, index, len(w_vars))
        if linear is None:
            slow.append(con)
            continue
        val = points @ linear[0] + linear[1]
        tol = 1e-9 * (1 + np.abs(val))
        if con.has_lb():
            keep &= val >= pyo.value(con.lower) - tol
        if con.has_ub():
            keep &= val <= pyo.value(con.upper) + tol
    if slow:
        saved = [v.value for v in w_vars]
        for i in np.flatnonzero(keep):
            for v, x in zip(w_vars, points[i]):
                v.set_value(float(x), skip_validation=True)
            for con in slow:
                body = pyo.value(con.body)
                if (con.has_lb() and body < pyo.value(con.lower) - 1e-9 * (1 + abs(body))) or (
                        con.has_ub() and body > pyo.value(con.upper) + 1e-9 * (1 + abs(body))):
                    keep[i] = False
                    break
        for v, x in zip(w_vars, saved):
            v.set_value(x, skip_validation=True)
    return points[keep]


def _weights_alone(model, weight_ids, dropped) -> bool:
    """Whether no active objective or constraint of ``model`` (but those whose id is in
    ``dropped``) has a variable other than the weights (ids ``weight_ids``): the
    objective, which usually has one, is looked at first."""
    from pyomo.core.expr.visitor import identify_variables

    for comp in itertools.chain(
            model.component_data_objects(pyo.Objective, active=True, descend_into=True),
            model.component_data_objects(pyo.Constraint, active=True, descend_into=True)):
        if id(comp) in dropped:
            continue
        expr = comp.expr if comp.ctype is pyo.Objective else comp.body
        if any(id(v) not in weight_ids for v in identify_variables(expr, include_fixed=False)):
            return False
    return True


class FixAndSolveEvaluator:
    """L(w) for every w of a finite W of a user's Pyomo model.

    W = prod_j grid_j, intersected with the ball ``norm_bound`` (if given) and
    with ``public_constraints``: the model's decision constraints that the
    caller declared public (:func:`privopt.models._contract.check_public_constraints`
    has refused the model if any other exists).  ``model`` is never modified:
    W is listed from the constraints' numbers, read only; the declared
    constraints on the weights alone are then dropped from what is solved
    (every w in W meets them; declared constraints that also involve
    auxiliary variables of the decision stay), the weights are fixed at each
    w in turn and the remaining variables minimized.  On HiGHS the model is
    read once into a :class:`privopt.solvers.HighsFixedSession` and never
    cloned; other solvers work on a clone (:attr:`clone`, made on first use,
    with Pyomo's "Unable to clone" log line about constructed components'
    initializers silenced: see :func:`privopt.models.quiet_clone`).  Every such
    solve must be certified optimal (:func:`privopt.solvers.is_certified`);
    otherwise the release is refused (:class:`~privopt.exceptions.NotCertifiedError`).

    W is a :class:`~privopt.mechanisms.selection._decision.DecisionSet` (:attr:`decision`), built
    once per evaluator: the plan builds it and hands it over (:meth:`from_decision`); a
    direct call ``FixAndSolveEvaluator(model, w_vars, grids, ...)`` builds it through the
    same :func:`~privopt.mechanisms.selection._decision.decision_set`.
    """

    path = "fix_and_solve"

    def __init__(self, model, w_vars, grids, *, norm_bound=None, public_constraints=(), **options):
        """The evaluator of a user's ``model`` for direct callers: W (the decision
        ``w_vars`` on ``grids``, in the ball ``norm_bound`` and the declared
        ``public_constraints``) built once, by :func:`~privopt.mechanisms.selection._decision.decision_set`;
        ``options``: the keywords of :meth:`from_decision`."""
        self._build(model, decision_set(w_vars, grids, norm_bound, public_constraints), **options)

    @classmethod
    def from_decision(cls, model, decision: DecisionSet, **options) -> FixAndSolveEvaluator:
        """The evaluator of W already built (:class:`~privopt.mechanisms.selection._decision.DecisionSet`,
        the plan's): it reads the decision, its grids, ball and declared constraints from
        ``decision`` and never builds W again.  ``options``: ``solver``, ``time_limit``,
        ``threads``, ``abs_gap``, ``solver_options``, ``max_points``, ``public_term``,
        ``record_range``, ``n_records`` (as the class docstring says)."""
        self = cls.__new__(cls)
        self._build(model, decision, **options)
        return self

    def _build(self, model, decision: DecisionSet, *, solver="highs", time_limit=None, threads=None,
               abs_gap=None, solver_options=None, max_points=None, public_term=None, record_range=None,
               n_records=None, records=None) -> None:
        """Set the evaluator up on ``decision`` (both constructors end here)."""
        self.decision = decision            # W, built once: read here, never built again
        self.max_points = DEFAULT_MAX_EVALUATIONS if max_points is None else int(max_points)
        self.solver = solver
        self.threads = threads
        self.abs_gap = DEFAULT_ABS_GAP if abs_gap is None else abs_gap
        self.solver_options = solver_options
        self.time_limit = time_limit
        self.model = model
        self.user_w = list(decision.variables)          # the user's own variables: read, never set
        self.d = len(self.user_w)
        self.norm_bound = decision.norm_bound
        self._clone = None
        self._term_name = None if public_term is None else public_term.name
        ids = {id(v) for v in self.user_w}
        self.weight_cons = list(decision.constraints)
        cap = max(self.max_points * 100, 1_000_000)
        points = self._list_w(list(decision.grids), decision.norm_bound, decision, cap)
        self.points = points
        self.n_points = int(points.shape[0])
        if self.n_points > self.max_points:
            raise ParameterError(
                f"max_points: W has {format_count(self.n_points)} points and each needs one certified solve; the "
                f"limit is max_points={self.max_points:,}. Raise max_points if you can wait, make W "
                "smaller (tighter bounds, norm_bound, constraints on the weights), or use OPDisc "
                "(privopt.opdisc), which solves one MILP whatever |W|.", "max_points")
        # direct: no variable but the weights anywhere
        self.direct = _weights_alone(model, ids, {id(c) for c in self.weight_cons})
        #: whether blocks() may use the HiGHS session (False: Pyomo's path, as before the session)
        self.fast = True
        self.engine, self.solves, self.points_scored = None, 0, 0
        #: why the closed form of the blocks did or did not apply (set by blocks() on HiGHS)
        self.blocks_reason: str | None = None
        #: where blocks() scores (:meth:`use_executor`): None in this process, and on how many workers
        self._executor: object = None
        self._blob: bytes | None = None
        self.workers = 1
        #: each record's term clipped into ``record_range`` where the records can be seen (:meth:`blocks`)
        self.record_range: tuple[float, float] | None = (
            None if record_range is None else (float(record_range[0]), float(record_range[1])))
        self.n_records = n_records
        #: the records' blocks the model's contract found (:class:`privopt.models.RecordSplit`); a direct
        #: caller with a range gets them from the same finder (:func:`privopt.models.records_of`)
        self.records = records if records is not None or record_range is None else records_of(model, self.user_w)
        #: whether the records' terms were seen (and clipped), and why (read from the structure and n only;
        #: how many terms lay outside depends on the data and is never counted)
        self.records_seen = False
        self.records_reason = ("the records' terms are not seen on this path: each is assumed in loss_range"
                               if record_range is not None else None)

    def _list_w(self, grids, norm_bound, decision, cap):
        """The points of W, in the product grid's order, and how they were
        listed (``self.listing``, ``self.listing_reason``).

        Through the declared linear constraints on the weights (and the ball)
        where there are any: |W| is counted first, without listing the product
        (:func:`privopt.space.count_constrained_points`), refused above
        ``max_points`` with its count, then listed depth first with pruning;
        constraints on the weights that are not linear filter the listed
        points.  Otherwise (or when the count gives up on irregular numbers)
        the product grid inside the ball is listed and filtered, as before."""
        cons = list(decision.constraints)
        # the decision set's rows and its one count (a ball alone is tested on the product grid)
        sep, others = (decision.separable, list(decision.others)) if cons else (None, cons)
        n_listed = None if sep is None else decision.count
        if sep is not None and n_listed is not None:
            limit = cap if others else self.max_points
            if n_listed > limit:
                what = "before its constraints that are not linear" if others else "under its constraints"
                raise ParameterError(
                    f"max_points: W has {n_listed:,} points {what} (counted from the declared "
                    f"constraints on the weights), more than {limit:,}; each point needs one certified "
                    "solve. Raise max_points if you can wait, make W smaller (tighter bounds or "
                    "constraints on the weights, norm_bound), or use OPDisc (privopt.opdisc), which "
                    "solves one MILP whatever |W|.", "max_points")
            points = constrained_points(grids, sep)
            self.listing = "constraints"
            self.listing_reason = (
                f"W listed through the {sep.rows - (norm_bound is not None)} declared linear constraint(s) "
                f"on the weights{' and the ball' if norm_bound is not None else ''}: {n_listed:,} points "
                f"counted, then listed, without listing the product grid")
        else:
            n_raw, points = _product_points(grids, norm_bound, cap)
            if points is None:
                raise ParameterError(
                    f"max_points: the weights' grid has {n_raw:,} points before its constraints, too many "
                    f"to list (limit {cap:,}). Shrink the weights' bounds, give norm_bound, or write the "
                    "constraints on the weights as linear ones (they are then listed through), or use "
                    "OPDisc (privopt.opdisc), whose MILP does not list W.", "max_points")
            self.listing = "product"
            self.listing_reason = ("W listed as the product grid" + (" inside the ball" if norm_bound else "")
                                   + (", then filtered by the declared constraints on the weights" if cons
                                      else "") + (": no linear constraint on the weights alone" if sep is None
                                                  and cons else "") +
                                   (": too many distinct partial sums to count through the constraints"
                                    if sep is not None else ""))
            others = cons
        if others:
            # evaluated on the clone (the filter sets the weights' values there, never on the user's model)
            points = _filter_by_constraints(points, [self.clone.find_component(c.name) for c in others],
                                            self.w_vars)
        return points

    @property
    def clone(self):
        """The clone of the user's model that Pyomo's path fixes and solves
        (made on first use): the declared constraints on the weights alone
        deactivated, :attr:`w_vars` its weights."""
        if self._clone is None:
            clone = quiet_clone(self.model)
            for con in self.weight_cons:
                clone.find_component(con.name).deactivate()
            self._w_vars = [clone.find_component(v) for v in self.user_w]
            self._clone = clone
        return self._clone

    @property
    def w_vars(self):
        """The clone's weights (in the order of the user's)."""
        self.clone  # noqa: B018 (made on first use)
        return self._w_vars

    @property
    def objective(self):
        return next(self.clone.component_data_objects(pyo.Objective, active=True, descend_into=True))

    @property
    def public_term(self):
        return None if self._term_name is None else self.clone.find_component(self._term_name)

    def term_values(self, points) -> np.ndarray:
        """C(w) of the declared public term at each row of ``points`` (zeros
        without one): C depends on the weights alone, so it is evaluated by
        setting them, on the clone."""
        if self.public_term is None:
            return np.zeros(points.shape[0])
        saved = [(v.value, v.fixed) for v in self.w_vars]
        out = np.empty(points.shape[0])
        for i, w in enumerate(points):
            for v, x in zip(self.w_vars, w):
                v.set_value(float(x), skip_validation=True)
            out[i] = float(pyo.value(self.public_term))
        for v, (x, fixed) in zip(self.w_vars, saved):
            v.set_value(x, skip_validation=True)
            v.fixed = fixed
        return out

    def predicted_seconds(self, n_records=None) -> float:
        """Seconds to score W, predicted from public sizes only: |W| and the
        model's numbers of variables and active constraints (never a solve,
        never the data's values), at the rates of :data:`FIX_SOLVE_RATES` for
        the engine :meth:`blocks` will try (the HiGHS session for HiGHS).  On an
        executor (:meth:`use_executor`) the workers read the model at the same time and
        each solves its shard: one setup and |W| / workers solves."""
        engine = fix_solve_engine(self.solver, fast=self.fast, direct=self.direct)
        return fix_solve_seconds(model_size(self.model), engine, -(-self.n_points // self.workers))

    def use_executor(self, executor) -> None:
        """Score on ``executor`` (any executor :func:`privopt._runtime.check_executor`
        accepts; None or ``"local"``: in this process, one point after another).  The
        model is serialized here, once, before any solve: each worker loads its own copy
        and reads it into its own solver (:class:`_FixedSolves`), so a model that cannot
        be pickled is refused now, naming ``executor``.  An objective of the weights alone
        is evaluated here whatever the executor (there is nothing to solve)."""
        self._executor, self._blob, self.workers = None, None, 1
        if executor is None or is_local(executor) or self.direct:
            return
        ex = check_executor(executor)
        if ex is None:
            return
        try:   # with its weights and constraints: the worker's copies are those of its model (no lookup by name)
            self._blob = dumps_model((self.model, self.user_w, self.weight_cons))
        except ModelError as exc:
            raise ParameterError(
                f"executor: scoring on an executor sends the model to each worker, and it cannot be "
                f"pickled ({exc}). Pass executor=None (score in this process), or make the model "
                "picklable (rules as module-level functions, or install cloudpickle for rule=lambda ...).",
                "executor") from exc
        self._executor = ex
        # Ray: a pool made for the run (ray_executor), one shard per CPU here (the cluster's are not known yet)
        self.workers = max(1, min(self.n_points, usable_cpus() if ex == RAY else worker_count(ex)))

    def blocks(self, block_points=256, executor=None):
        """``(points, losses)`` block by block in W's order.  Each loss is
        the certified optimum of the clone with the weights fixed at the
        point: on HiGHS through one :class:`privopt.solvers.HighsFixedSession`
        (the model loaded once with the weights' columns free, then their
        bounds set to each point and re-solved warm), otherwise through
        Pyomo (``Var.fix`` and a persistent or fresh solve).  On HiGHS, when the
        session's rows show that the model with the decision fixed falls apart into
        choose-one blocks (:class:`privopt.solvers.ChooseOneBlocks`, checked row by row;
        ``self.blocks_reason`` says why or why not), the losses are that closed form's,
        every point at once, and no LP is solved.  The engine used
        is ``self.engine``; ``self.solves`` and ``self.points_scored`` count
        the work done.  ``executor`` (or the one given to :meth:`use_executor`):
        W's points are cut into one contiguous shard per worker, each scored by
        its own session (:func:`_evaluate_shard`), and the losses come back in W's
        order, in the same blocks; the caller draws the noise, in that order."""
        if executor is not None:
            self.use_executor(executor)
        if self._executor is not None:
            yield from self._blocks_on_executor(block_points)
            return
        start = time.perf_counter()
        solves = None if self.direct else _FixedSolves(
            self.model, self.user_w, self.weight_cons, lambda: (self.clone, self.w_vars), solver=self.solver,
            threads=self.threads, abs_gap=self.abs_gap, options=self.solver_options, fast=self.fast)
        self.engine = "direct" if solves is None else solves.engine
        if solves is not None and solves.session is not None:
            # the model's rows, as the session read them: every block of the closed form's shape?
            closed, self.blocks_reason = closed_form_blocks(solves.session)
            if closed is not None:
                self.engine = BLOCKS_ENGINE
                yield from self._closed_form_blocks(closed, block_points, start)
                return
        reader = self._solution_records(solves)
        for lo in range(0, self.n_points, block_points):
            pts = self.points[lo:lo + block_points]
            losses = np.empty(pts.shape[0])
            for i, w in enumerate(pts):
                self.points_scored += 1
                if solves is None:
                    for v, x in zip(self.w_vars, w):
                        v.fix(float(x))
                    losses[i] = float(pyo.value(self.objective.expr))
                    continue
                remaining = None
                if self.time_limit is not None:
                    remaining = self.time_limit - (time.perf_counter() - start)
                    if remaining <= 0:
                        raise NotCertifiedError(_time_up(self.time_limit, lo + i, self.n_points), None)
                self.solves += 1
                report = solves.solve(w, remaining)
                if not report.certified_optimal or report.objective is None:
                    if self.time_limit is not None and _stopped_on_time(report):
                        raise NotCertifiedError(_time_up(self.time_limit, lo + i, self.n_points), report)
                    raise NotCertifiedError(_uncertified(w, report), report)
                objective = float(report.objective)
                if reader is None:
                    losses[i] = objective
                elif solves.session is None:
                    losses[i] = self._clipped_pyomo(reader, objective)
                else:
                    losses[i] = self._clipped_solution(reader, solves.session, w, objective)
            yield pts, losses
        if self._clone is not None:
            for v in self.w_vars:
                v.unfix()

    def _closed_form_blocks(self, closed, block_points, start):
        """:meth:`blocks` by the closed form of :class:`privopt.solvers.ChooseOneBlocks` (the
        model's structure verified from its rows): no solve; a point where the model is
        infeasible raises the LP path's refusal (the same message), nothing released."""
        clip = (self.record_range is not None and self.records is not None
                and self.records.n_blocks == self.n_records == closed.n_blocks)
        if self.record_range is not None:
            self.records_seen = clip
            self.records_reason = (
                f"each of the {closed.n_blocks:,} blocks read as one record's term and clipped into loss_range"
                if clip else f"{closed.n_blocks:,} blocks for n = {self.n_records} records: the records' terms "
                "are not told apart, each is assumed in loss_range")
        for lo in range(0, self.n_points, block_points):
            if self.time_limit is not None and time.perf_counter() - start > self.time_limit:
                raise NotCertifiedError(_time_up(self.time_limit, lo, self.n_points), None)
            pts = self.points[lo:lo + block_points]
            losses, infeasible = self._clipped(closed, pts) if clip else closed.losses(pts)
            self.points_scored += pts.shape[0]
            if infeasible.any():
                raise NotCertifiedError(_uncertified(pts[int(np.flatnonzero(infeasible)[0])], _INFEASIBLE), None)
            yield pts, losses

    def _clipped(self, closed, pts):
        """``(losses, infeasible)`` with every block's optimum (one record's term) clipped into
        ``record_range``: L(w) = sum_i clip(l_i(w), a, b) + the rest (the decision's own costs,
        declared public, and the constant, the same at every w)."""
        a, b = cast("tuple[float, float]", self.record_range)   # a range given: blocks() sees the records
        values, rest, infeasible = closed.block_values(pts)
        losses = rest + np.clip(values, a, b).sum(axis=1)
        losses[infeasible] = np.nan
        return losses, infeasible

    def _solution_records(self, solves):
        """The objective blocks to read each record's term from, in the solution of each
        solve (:class:`privopt.solvers.RecordBlocks`), when ``record_range`` is set, the
        model is solved in a HiGHS session and it falls into exactly ``n_records`` objective
        blocks with the decision fixed; else None (the terms are assumed in the range), with
        ``records_reason`` saying which."""
        if self.record_range is None:
            return None
        if solves is not None and solves.session is None and self.records is not None:
            return self._pyomo_records()
        if solves is None or solves.session is None:
            self.records_reason = ("the records' terms are not seen on this path (no solve): each is assumed in "
                                   "loss_range")
            return None
        reader, why = (None, "the model's contract did not split it into its records' blocks") \
            if self.records is None else record_blocks(solves.session, self.records.column_labels(
                solves.session.column_of))
        if reader is None or self.n_records is None or reader.n_blocks != self.n_records:
            detail = (why if reader is None else "n_samples not given" if self.n_records is None
                      else f"{reader.n_blocks:,} blocks for n = {self.n_records} records")
            self.records_reason = f"the records' terms are not told apart ({detail}): each is assumed in loss_range"
            return None
        self.records_seen = True
        self.records_reason = (f"each of the {reader.n_blocks:,} blocks of the model with the decision fixed read "
                               "as one record's term from each solve's solution and clipped into loss_range")
        return reader

    def _pyomo_records(self):
        """The records' blocks read on the clone Pyomo's path solves (the same finder,
        :func:`privopt.models.records_of`), when it finds exactly ``n_records``; else None
        (the terms are assumed in the range), with ``records_reason`` saying which."""
        split = records_of(self.clone, self.w_vars)
        if split.n_blocks != self.n_records:
            self.records_reason = (f"the records' terms are not told apart on the solver's path through Pyomo "
                                   f"({split.n_blocks:,} blocks for n = {self.n_records} records): each is "
                                   "assumed in loss_range")
            return None
        self.records_seen = True
        self.records_reason = (f"each of the {split.n_blocks:,} blocks of the model with the decision fixed read "
                               "as one record's term from each solve's solution (through Pyomo) and clipped into "
                               "loss_range")
        return split

    def _clipped_pyomo(self, split, objective) -> float:
        """L'(w) from a solve through Pyomo: the solve's objective, less each block's term
        (read at the clone's solution) plus the term clipped into ``record_range``; the
        objective itself where no term lies outside."""
        a, b = cast("tuple[float, float]", self.record_range)   # a range given: blocks() sees the records
        values = split.values()
        tol = 1e-7 * (1.0 + abs(a) + abs(b))
        if not np.any((values < a - tol) | (values > b + tol)):
            return objective
        return objective - float(values.sum()) + float(np.clip(values, a, b).sum())

    def _clipped_solution(self, reader, session, point, objective) -> float:
        """L'(w) from the solution of the solve at ``point``: the decision's own costs and the
        constant, plus each block's part of the objective (one record's term: with the decision
        fixed the blocks are independent, so each is at its own optimum) clipped into
        ``record_range``.  The blocks' parts must add up to the
        solve's ``objective`` (else nothing is released)."""
        a, b = cast("tuple[float, float]", self.record_range)   # a range given: blocks() sees the records
        x = session.column_values()
        values, rest = reader.values(x), reader.rest(point, x)
        total = rest + float(values.sum())
        if not abs(total - objective) <= 1e-7 * (1.0 + abs(objective) + float(np.abs(values).sum())):
            raise NotCertifiedError(
                "Not certified: at a point of W the solution's per-record terms do not add up to the solve's "
                "objective, so each record's term cannot be clipped into loss_range; nothing is released. "
                "Report this with the model.", None)
        return rest + float(np.clip(values, a, b).sum())

    def _blocks_on_executor(self, block_points):
        """:meth:`blocks` on the executor of :meth:`use_executor`: one shard per worker,
        the time left passed as a wall-clock deadline, the first failure (not certified,
        or time_limit run out) raised here with nothing released."""
        ex, owned = self._executor, False
        if ex == RAY:
            ex, owned = ray_executor(self.workers), True
        cuts = np.linspace(0, self.n_points, self.workers + 1).astype(int)
        job = {"solver": self.solver, "threads": self.threads, "abs_gap": self.abs_gap,
               "options": self.solver_options, "fast": self.fast, "time_limit": self.time_limit}
        deadline = None if self.time_limit is None else time.time() + self.time_limit
        try:
            blob = share(ex, self._blob)
            shards = [(blob, job, self.points[a:b], deadline) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
            results, fatal = run_ordered(ex, _evaluate_shard, shards, is_fatal=lambda r: r["error"] is not None)
        finally:
            if owned:
                ex.shutdown()
        done = [r for r in results if r is not None]
        self.solves += sum(r["solves"] for r in done)
        self.points_scored += sum(r["solves"] for r in done)
        self.engine = done[0]["engine"] if done else None
        if fatal is not None:
            raise NotCertifiedError(results[fatal]["error"], None)
        losses = np.concatenate([r["losses"] for r in results])
        for lo in range(0, self.n_points, block_points):
            yield self.points[lo:lo + block_points], losses[lo:lo + block_points]


class _FixedSolves:
    """Certified-or-not solves of one model with the weights fixed at one point after
    another: one :class:`privopt.solvers.HighsFixedSession` on ``model`` (read once, never
    modified; the declared constraints on the weights alone relaxed), or else Pyomo's
    ``Var.fix`` and a persistent or fresh solve on ``fixable()`` (a model with those
    constraints deactivated, and its weights, made on first use)."""

    def __init__(self, model, weights, weight_cons, fixable, *, solver, threads, abs_gap, options, fast=True):
        self.session = HighsFixedSession.build(model, weights, solver=solver, threads=threads, abs_gap=abs_gap,
                                               options=options, relax=weight_cons) if fast else None
        self.opt = None if self.session is not None else persistent_solver(solver)
        self.engine = ("highs_fixed" if self.session is not None else "pyomo_persistent" if self.opt is not None
                       else "pyomo")
        self._fixable, self._solved = fixable, False
        self.solver, self.threads, self.abs_gap, self.options = solver, threads, abs_gap, options

    def solve(self, point, time_limit):
        """The :class:`~privopt.solvers.SolveReport` of the model with the weights at ``point``."""
        if self.session is not None:
            return self.session.solve_at(point, time_limit)
        model, weights = self._fixable()
        for v, x in zip(weights, point):
            v.fix(float(x))
        if self.opt is not None and self._solved:   # the persistent solver sees the new fixed values
            self.opt.update_variables(weights)
        report = solve(model, self.solver, time_limit=time_limit, threads=self.threads, abs_gap=self.abs_gap,
                       options=self.options, persistent=self.opt, raise_on_no_solution=False)
        self._solved = True
        return report


def _evaluate_shard(blob, job, points, deadline):
    """One worker's shard of the fix-and-solve scoring: loads its own copy of the model, its
    weights and its declared constraints on the weights alone (``blob``, one pickle from
    :func:`privopt._runtime.dumps_model`, so they are the copy's own components: no lookup
    by name, whose parser Pyomo shares between threads), reads it into its own solver and
    returns ``{"losses", "solves", "engine", "error"}``: ``error`` is None, or the message of
    the first point not certified or of the deadline (a :func:`time.time` value) passed;
    nothing of a failed shard is used."""
    model, weights, cons = pickle.loads(blob) if isinstance(blob, bytes) else blob

    def fixable():   # the worker's copy is its own: Pyomo's path fixes the weights on it
        for con in cons:
            con.deactivate()
        return model, weights

    solves = _FixedSolves(model, weights, cons, fixable, solver=job["solver"], threads=job["threads"],
                          abs_gap=job["abs_gap"], options=job["options"], fast=job["fast"])
    losses = np.empty(points.shape[0])
    out = {"losses": losses, "solves": 0, "engine": solves.engine, "error": None}
    for i, w in enumerate(points):
        remaining = None if deadline is None else deadline - time.time()
        if remaining is not None and remaining <= 0:
            out["error"] = _time_up(job["time_limit"], i, points.shape[0], " of this worker's shard")
            return out
        report = solves.solve(w, remaining)
        out["solves"] += 1
        if not report.certified_optimal or report.objective is None:
            out["error"] = (_time_up(job["time_limit"], i, points.shape[0], " of this worker's shard")
                            if deadline is not None and _stopped_on_time(report) else _uncertified(w, report))
            return out
        losses[i] = float(report.objective)
    return out


def _time_up(time_limit, done, total, where="") -> str:
    """The refusal when ``time_limit`` runs out while scoring: how far it got (``done``)
    depends on how fast the data solved, so it is not said; only the public |W| (``total``)."""
    del done
    return (f"time_limit: {time_limit:g} s ran out before the {total:,} evaluations of L(w){where} were done; "
            "nothing is released. Raise time_limit or make W smaller.")


def _uncertified(w, report) -> str:
    note = str(getattr(report, "message", "") or "")
    refused = note[note.index("HiGHS refused"):] + ". " if "HiGHS refused" in note else ""
    infeasible = getattr(report.termination, "name", "") == "provenInfeasible"
    hint = (" A decision at which the records cannot be served (no site open, too little capacity committed) "
            "is left out of W by a constraint on the decision alone whose numbers are fixed before the data "
            "(e.g. sum(open) >= 1), declared in public_constraints." if infeasible else "")
    del w    # which point failed depends on the data: never said
    return (f"Not certified: evaluating L(w) at a point of W ended with {report.termination.name}; "
            "private selection needs the exact loss of every point of W, so nothing is released. " + refused
            + "Check that the model is feasible for every w that the weights' bounds and constraints allow, raise "
            f"time_limit, or try another solver.{hint}")


class _INFEASIBLE:   # what the LP path's report says of an infeasible point (for its message)
    termination = TerminationCondition.provenInfeasible


def _stopped_on_time(report) -> bool:
    """Whether a solve ended on its time limit (never a certified optimum)."""
    return getattr(report.termination, "name", "") == "maxTimeLimit"
