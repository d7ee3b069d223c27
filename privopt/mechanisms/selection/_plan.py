"""How private selection will draw from W, chosen in one place from public quantities only.

A :class:`SelectionPlan` says which sampler runs (top down, every point scored, or bounded:
:mod:`privopt.mechanisms.selection._samplers`), |W|, the predicted time and why; it is decided before
any of the data's values are read.  :func:`check_time_limit` is the one rule against
``time_limit``: a plan whose predicted time (on the workers that run it; on the bounded path
a lower bound) is longer is refused before any work.  ``exponential_mechanism`` plans one W
(:func:`plan_halfspace` for privopt's 0/1-loss models, :func:`plan_user_model` for a
user's); ``mixture_selection`` plans each W_r with :func:`plan_halfspace`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..._limits import LOCAL_SECONDS, format_count
from ..._runtime import RAY, check_executor, is_local, usable_cpus, worker_count
from ...exceptions import ModelError, ParameterError
from ...search import BoundedArgmax
from ._decision import decision_set
from ._evaluate import (DEFAULT_MAX_EVALUATIONS, FixAndSolveEvaluator, HalfspaceEvaluator, branch_and_bound_seconds,
                        fix_solve_engine, fix_solve_seconds, model_size, slow_solver_note)
from ._samplers import BoundedSampler, RangeCheck, Sampler, ScoredSampler, TopDownSampler, selection_keys
from ._w import SelectionW

__all__ = ["SelectionPlan", "check_time_limit", "check_w_size", "plan_halfspace", "plan_user_model", "workers_for",
           "bounded_lower_bound", "PROGRESS_AFTER"]

#: Sampling predicted to take longer than this shows a progress bar (seconds).
PROGRESS_AFTER = 10.0


@dataclass(frozen=True)
class SelectionPlan:
    """Which sampler draws from one W, and why (from public quantities only).

    ``path``: "topdown", "enumerate", "fix_and_solve" or "bounded"; ``w``: W, the one
    record the sampler and the release read
    (:class:`~privopt.mechanisms.selection._w.SelectionW`: |W|, the ball, the
    representation its engine reads); ``predicted_time``: seconds predicted from public
    sizes (NaN where there is none; on the bounded path a lower bound), as reported;
    ``seconds``: the same on the workers that run it, what :func:`check_time_limit`
    compares with ``time_limit``; ``work`` and ``remedy``: the refusal's words;
    ``reason``: why this path (one sentence, for the report); ``sampler``: the
    :class:`~privopt.mechanisms.selection._samplers.Sampler`; ``progress``: whether a bar
    is shown by default."""

    path: str
    w: SelectionW
    predicted_time: float
    seconds: float
    work: str
    remedy: str
    reason: str
    sampler: Sampler
    progress: bool = False

    @property
    def n_points(self) -> int:
        """|W| (``w.n_points``)."""
        return self.w.n_points


def check_time_limit(seconds: float, time_limit: float | None, work: str, remedy: str) -> None:
    """The one rule of ``time_limit`` before any work: refuse when the predicted
    ``seconds`` (finite) are more than it, naming ``work`` and the ``remedy``."""
    if time_limit is not None and math.isfinite(seconds) and seconds > time_limit:
        raise ParameterError(f"time_limit: {work}, more than time_limit={time_limit:g} s. {remedy}", "time_limit")


def workers_for(executor, predicted: float) -> int:
    """How many workers the top-down run will have (for its time prediction):
    1 in this process, the usable CPUs for the default pool (chosen when the
    pass is predicted to take more than a few seconds), else the executor's."""
    if executor is None:
        return usable_cpus() if predicted >= LOCAL_SECONDS else 1
    if is_local(executor):
        return 1
    ex = check_executor(executor)
    return 1 if ex == RAY else max(1, worker_count(ex))


def check_w_size(n_points: int, widen: str = "the weights' bounds or the ball") -> None:
    """Refuse an empty W and a W of one point (the release would not depend on the
    data), from |W| alone; ``widen`` names what to widen."""
    if n_points == 0:
        raise ModelError("weights: W is empty (no value of the weights meets their bounds, the ball and "
                         "the constraints on the weights); there is nothing to select.", "weights")
    if n_points == 1:
        raise ModelError("weights: W has a single point, so the release would not depend on the data; "
                         f"widen {widen}.", "weights")


def plan_halfspace(data, problem, *, n_public: int, executor=None, max_points=None, model=None,
                   norm_bound=None, single: bool = True, desc: str = "privopt selection", keys=selection_keys
                   ) -> SelectionPlan:
    """The plan of a 0/1-loss halfspace W: top down over ``problem`` (its split by support,
    :func:`privopt.mechanisms.selection.topdown_problem`) where there is one, else every
    point scored by the exact enumeration (refused above ``max_points``).  ``single``: W is
    the only one (``exponential_mechanism``: a W of fewer than two points is refused, and
    every point is scored block by block); else a W_r of the mixture (scored by branch and
    bound where :class:`privopt.search.BoundedArgmax` applies).  ``keys``: as
    :class:`~privopt.mechanisms.selection._samplers.ScoredSampler` takes it."""
    if problem is not None:
        n_points = int(problem.n_points)
        if single:
            check_w_size(n_points, widen="the grid or the ball")
        # the pool is chosen by the lower-bound pass, as before; the time is the whole draw's
        bound_pass = float(problem.predicted_seconds(n_public))
        predicted = float(problem.sampling_seconds(n_public))
        workers = workers_for(executor, bound_pass)
        w = SelectionW.of_halfspace(n_points, problem.norm_bound, data, problem)
        return SelectionPlan(
            "topdown", w, predicted, predicted / workers,
            work=(f"bounding the {problem.n_regions:,} supports of W on n = {n_public:,} records and finding the "
                  f"smallest loss of those that may win is predicted to take about {predicted / workers:,.0f} s on "
                  f"{workers} worker(s)"),
            remedy=("Raise time_limit, shard on more workers (executor=...), or make W smaller (norm_bound, fewer "
                    "features)."),
            reason=("privopt's 0/1-loss model on one integer grid with 0: W split by support and report-noisy-max "
                    "drawn top down, supports that cannot win never scored"),
            sampler=TopDownSampler.of(w, executor=executor, predicted=bound_pass, desc=desc),
            progress=predicted > PROGRESS_AFTER)
    evaluator = HalfspaceEvaluator(model, data, norm_bound=norm_bound, max_points=max_points)
    n_points = int(evaluator.n_points)
    if single:
        check_w_size(n_points)
    # its noise is held whole (8 bytes a point, within the evaluator's max_points)
    argmax = None if single else BoundedArgmax.of(data, evaluator.coef, evaluator.bound)
    if argmax is None:
        predicted = float(evaluator.predicted_seconds(n_public))
        how = f"scoring all {format_count(n_points)} points of W"
    else:
        predicted = float(branch_and_bound_seconds(n_points, n_public,
                                                   coordinate_values=getattr(data, "coordinate_values", None)))
        how = f"report-noisy-max over the {format_count(n_points)} points of W by branch and bound"
    return SelectionPlan(
        "enumerate", SelectionW.of_halfspace(n_points, evaluator.norm_bound, data), predicted, predicted,
        work=(f"{how} is predicted to take about {predicted:,.0f} s (from |W|, n = {n_public:,} and "
              f"d = {evaluator.d})"),
        remedy=("Raise time_limit, make W smaller (norm_bound, a coarser grid, fewer features), or use OPDisc "
                "(privopt.opdisc), whose MILP does not score W."),
        reason=("privopt's 0/1-loss model whose W cannot be split by support: every point scored by the exact "
                "enumeration"),
        sampler=ScoredSampler(evaluator, argmax=argmax, desc=desc, keys=keys),
        progress=_progress_default(predicted, n_points))


def _progress_default(predicted: float, n_points: int) -> bool:
    return (predicted > PROGRESS_AFTER) if math.isfinite(predicted) else n_points > 200


#: The most points a W may have for the samplers, which weigh |W| and its regions as
#: floats: 2^1023 (about 9e307; 646 coordinates of 3 values pass it).
MAX_W_BITS = 1023


def check_w_countable(n_points) -> None:
    """Refuse, from |W| alone (public: the decision's grids and declared constraints), a W
    with more points than a float holds, which the samplers cannot weigh (a million
    coordinates of 3 values: |W| = 3^(10^6))."""
    if n_points is not None and int(n_points).bit_length() > MAX_W_BITS:
        raise ParameterError(
            f"grid: W has {format_count(n_points)} points, more than private selection can weigh (2^{MAX_W_BITS}, "
            "about 9e307: the samplers hold |W| and its regions' sizes as floats). Nothing was computed. Make W "
            "smaller: fewer decision variables or values per variable (a grid of 3 values allows at most 646 "
            "coordinates), or declare constraints that cut it; or use OPDisc (privopt.opdisc), whose cost does "
            "not grow with |W|.", "grid")


def plan_user_model(task, grids, keys=selection_keys) -> SelectionPlan:
    """The plan of a user's model (``task``: the checked call,
    :class:`privopt.mechanisms.selection.SelectionTask`; ``grids``: the decision's
    grids): the bounded sampler where ``path`` asks for it, or "auto" finds |W| above
    ``max_points``; else every point scored by fix-and-solve."""
    decision = decision_set(task.w_vars, grids, task.norm_bound, task.public_cons)   # W, read and counted once
    check_w_countable(decision.size)
    reason = _bounded_reason(task, decision)
    if reason is not None:
        return _plan_bounded(task, decision, reason)
    opts = task.options
    evaluator = FixAndSolveEvaluator.from_decision(
        task.model, decision, solver=task.solver, time_limit=opts.time_limit, threads=opts.threads,
        abs_gap=opts.abs_gap, solver_options=opts.solver_options, max_points=task.max_points, public_term=task.term,
        record_range=task.loss_range if task.records_are_users else None, n_records=task.n_samples,
        records=None if task.contract is None else task.contract.split)
    evaluator.use_executor(opts.executor)   # the model serialized for the workers, before any solve
    n_points = int(evaluator.n_points)
    check_w_size(n_points)
    predicted = float(evaluator.predicted_seconds(task.n_public))
    check = None if task.n_samples is None else RangeCheck(task.n_samples, task.loss_range, task.term is not None)
    return SelectionPlan(
        "fix_and_solve", SelectionW.of_decision(n_points, decision), predicted, predicted,
        work=(f"scoring all {format_count(n_points)} points of W is predicted to take about {predicted:,.0f} s "
              f"(from |W| and the model's {model_size(task.model):,} rows and columns, one solve per point"
              f"{slow_solver_note(task.solver)})"),
        remedy=("Raise time_limit, make W smaller (a coarser grid, tighter bounds or declared constraints on the "
                "decision), or use OPDisc (privopt.opdisc), whose MILP does not score W."),
        reason=(f"a user's model: every point of W scored by fixing the decision and solving the rest with "
                f"{task.solver}{slow_solver_note(task.solver)}"),
        sampler=ScoredSampler(evaluator, sense=task.sense, check=check, time_limit=opts.time_limit,
                              desc=f"privopt {task.method}", keys=keys),
        progress=_progress_default(predicted, n_points))


def _bounded_reason(task, decision) -> str | None:
    """Why the bounded sampler runs, or None (every point scored).  Decided from public
    quantities only: ``path``, |W| counted through the declared constraints (the
    :class:`~privopt.mechanisms.selection._decision.DecisionSet`'s count), and ``max_points``."""
    if task.path == "score":
        return None
    space, why = decision.space, decision.why
    if space is None:
        if task.path == "bounded":
            raise ParameterError(f"path: the bounded sampler needs the size of every region of W, but {why}. "
                                 "Write the constraints on the weights as linear ones, or use path='score'.",
                                 "path")
        return None
    n_points = int(space.size(()))
    limit = DEFAULT_MAX_EVALUATIONS if task.max_points is None else task.max_points
    if task.path == "bounded":
        return f"path='bounded' was asked; {why}: {format_count(n_points)} points"
    if n_points <= limit:
        return None
    return f"|W| = {format_count(n_points)} ({why}) is above max_points={limit:,}, too many to solve once per point"


def _plan_bounded(task, decision, why) -> SelectionPlan:
    """The bounded sampler's plan: its predicted time is a lower bound (:func:`bounded_lower_bound`)."""
    space = decision.space
    n_points = int(space.size(()))
    check_w_size(n_points)
    predicted, min_solves = bounded_lower_bound(space, task.model, task.solver)
    opts = task.options
    w = SelectionW.of_decision(n_points, decision)
    sampler = BoundedSampler.of(w, task.model, task.w_vars, time_limit=opts.time_limit, solver=task.solver,
                             weight_cons=decision.constraints, sense=task.sense, threads=opts.threads,
                             abs_gap=opts.abs_gap, solver_options=opts.solver_options, public_term=task.term,
                             n_samples=task.n_samples, loss_range=task.loss_range)
    return SelectionPlan(
        "bounded", w, predicted, predicted,
        work=(f"the bounded sampler needs at least {min_solves} certified LP solve(s) (the regions above any point "
              "of W, at most one per coordinate of the decision, counted from the grids and the declared "
              f"constraints) and one exact solve, at least about {predicted:.3g} s for a model of "
              f"{model_size(task.model):,} rows and columns (a lower bound: the true work depends on how tight the "
              "bounds are)"),
        remedy="Raise time_limit, or make the model or the decision smaller.",
        reason=(f"bounded sampler: {why}; report-noisy-max drawn exactly by A* sampling over prefixes of the "
                f"decision, each region bounded by the LP relaxation solved by {task.solver} (certified)"),
        sampler=sampler)


def bounded_lower_bound(space, model, solver) -> tuple[float, int]:
    """``(seconds, region_solves)``: a lower bound, from public quantities only, on the work of
    the bounded sampler.  Every run bounds each ancestor of the released point that holds
    several points (:meth:`privopt.search.PrefixSpace.min_region_solves`, at most one per
    coordinate of the decision, counted from the grids and the declared constraints) and
    solves that point exactly; each solve is timed by the fix-and-solve evaluator's per-solve
    prediction from the model's rows and columns (:func:`privopt.mechanisms.selection._evaluate.fix_solve_seconds`)
    at the measured rates, without the evaluator's safety margin, plus reading the model into
    the solver (two HiGHS sessions; one Pyomo clone otherwise).  How many regions A*
    sampling opens beyond these depends on how tight the bounds are, which depends on the
    data, so the true work cannot be predicted without reading it: this is a lower bound,
    which is what ``time_limit`` is refused against up front."""
    solves = space.min_region_solves()
    engine = fix_solve_engine(solver)
    highs = engine == "highs_fixed"
    seconds = fix_solve_seconds(model_size(model), engine, solves + 1, setups=2.0 if highs else 1.0, margin=False)
    return seconds, solves
