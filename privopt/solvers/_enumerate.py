"""``solver="enumerate"``: the exact argmin over W_tau by vectorized enumeration.

For the 0/1-loss halfspace models of :func:`privopt.models.zero_one_halfspace`
the oracle problem of OPDisc ([NRVW20], Algorithm 1),

    minimize  L(D, w) - scale * <eta, pi(w)>   over  w in W_tau,

W_tau = {w : w_j in grid_j, ||w||_2 <= D}, can be solved without a MILP when
W_tau is small: every point of W_tau is listed (integer arithmetic on the
squared norm, the same levels the Pyomo transformation encodes), the scores
<w, x_k> of every distinct row are computed in blocks by one matrix product,
and the loss is counted exactly with the model's own decision rule
(:mod:`privopt.models.halfspace`).  The answer is the exact minimizer (ties
have probability zero under continuous noise; the first of equal values is
returned), so the report is ``certified_optimal`` with objective = bound.

How large W_tau is depends only on the public grid and D
(:func:`enumeration_size`): with the integer grid {-3..3}^10 and D^2 = 10 it
has 327,829 points; {-5..5}^23 with D^2 = 23 has 2.2e13 (no enumeration: use
a MILP solver), but with D^2 = 4 only 156,953.

It solves only the model privopt built: the builder records the model's
components, and a model with added components, deactivated constraints,
fixed weights or changed weight bounds is refused (a MILP solver solves it
instead).  A constraint whose expression was edited in place is not
detected: edit a model, then solve it with a MILP solver.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from .._limits import AUTO_MAX_BOUND_WORK, AUTO_MAX_WORK, ENUMERATE_MAX_POINTS, LOCAL_SECONDS

from ..exceptions import ModelError, ParameterError
from ..models import ENUMERATION_ATTR
from ..search import (
    HalfspaceData,
    bound_search_work,
    enumeration_levels,
    install_problem,
    iter_losses,
    perturbed_problem,
    plan_shards,
    scoring_costs,
    search_optimum,
    sparse_applicable,
)
from ..space import count_grid_points
from .._runtime import resolve_executor, usable_cpus, worker_count
from ..perturbation import find_perturbation_block, get_noise, perturbation_info
from ._report import RunOutcome

__all__ = [
    "ENUMERATION_ATTR",
    "AUTO_MAX_WORK",
    "AUTO_MAX_BOUND_WORK",
    "choose_solver",
    "enumeration_size",
    "count_grid_points",
    "run_enumeration",
]


def choose_solver(model, fallback: str = "highs", perturbed: bool | None = None) -> str:
    """The solver ``solver="auto"`` means for ``model``: ``"enumerate"`` for a
    model of :func:`privopt.models.zero_one_halfspace` whose oracle problem is
    cheap enough to solve exactly without a MILP, otherwise ``fallback``.

    * Perturbed (OPDisc's and RSPM's oracle; ``perturbed=True``, or the model
      carries the perturbation) on one integer grid: the branch and bound by
      support (:class:`privopt.search._regions.PerturbedHalfspaceProblem`),
      when its bound pass, supports x distinct rows, is at most
      :data:`AUTO_MAX_BOUND_WORK`.
    * Otherwise: every point scored, when the cheaper engine's work
      (:func:`scoring_costs`) is at most :data:`AUTO_MAX_WORK` x (d + 18),
      i.e. grid points x distinct rows <= AUTO_MAX_WORK for the dense engine.

    All give the exact argmin, so the choice changes the time a solve takes,
    never its answer."""
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        return fallback
    if perturbed is None:
        perturbed = find_perturbation_block(model) is not None
    points, rows = enumeration_size(model)
    if perturbed:
        split = bound_search_work(data)
        if split is not None:
            return "enumerate" if split <= AUTO_MAX_BOUND_WORK else fallback
    if points > ENUMERATE_MAX_POINTS:
        return fallback
    d = data.X.shape[1]
    work = points * max(rows, 1) * (d + 18)
    if sparse_applicable(data):
        coef, bound, _, _ = enumeration_levels(data)
        _, sparse = scoring_costs(points, max(rows, 1), d, coef, bound, data.grid, len(np.unique(data.X)))
        if sparse is not None:
            work = min(work, sparse)
    return "enumerate" if work <= AUTO_MAX_WORK * (d + 18) else fallback


def enumeration_size(model) -> tuple[int, int]:
    """(number of grid points in W_tau, number of distinct rows) of a model
    built by :func:`privopt.models.zero_one_halfspace`: the work of
    ``solver="enumerate"`` is about their product times d."""
    data = _data(model)
    coef, bound, _, _ = enumeration_levels(data)
    return count_grid_points(coef, bound), int(data.X.shape[0])


def _data(model) -> HalfspaceData:
    data = getattr(model, ENUMERATION_ATTR, None)
    if data is None:
        raise ModelError(
            "solver='enumerate' solves the 0/1-loss models of privopt.models.zero_one_halfspace "
            "only; use a MILP solver (e.g. 'highs') for this model.", "model")
    return data


def check_unchanged(model, data, block):
    """Refuse a model that is not the one the builder made (plus the
    perturbation block): the enumeration would ignore the change."""
    known = set(data.components)
    for comp in model.component_objects((pyo.Constraint, pyo.Objective, pyo.Var, pyo.Block),
                                        active=True, descend_into=False):
        if comp is block:
            continue
        if comp.local_name not in known:
            raise ModelError(
                f"model: it has a component the builder did not make ({comp.local_name!r}); "
                "solver='enumerate' would ignore it. Use a MILP solver for a modified model.", "model")
    for j, v in enumerate(model.w.values()):
        g = data.grid[j]
        if v.fixed or v.lb is None or v.ub is None or v.lb > g[0] + 1e-9 or v.ub < g[-1] - 1e-9:
            raise ModelError(
                f"model: weight w[{j}] was fixed or its bounds changed; solver='enumerate' "
                "enumerates the builder's grid. Use a MILP solver for a modified model.", "model")
    deactivated = sorted({c.parent_component().local_name
                          for c in model.component_data_objects(pyo.Constraint, descend_into=False)
                          if not c.active})
    if deactivated:
        raise ModelError(
            f"model: constraints {deactivated[:3]} are deactivated; solver='enumerate' solves the "
            "model as built. Use a MILP solver for a modified model.", "model")


@dataclass(frozen=True)
class EnumerationPlan:
    """What :func:`check_enumerable` found, for :func:`run_enumeration`: the
    halfspace data, the noise vector and its scale, whether pi(w) normalizes
    it, the enumeration levels ``(coef, bound, unit, D)``, the number of
    points of W_tau and ``problem``, the support split of a perturbed model
    for the branch and bound (:func:`privopt.search._regions.perturbed_problem`),
    or None where every point is listed."""

    data: HalfspaceData
    noise: np.ndarray
    scale: float
    normalize: bool
    levels: tuple
    n_points: int
    problem: object | None


def check_enumerable(model, options=None) -> EnumerationPlan:
    """Everything ``solver="enumerate"`` checks before it starts (raises a
    :class:`~privopt.exceptions.ModelError` or ``ParameterError`` naming the
    problem), and the :class:`EnumerationPlan` of the run."""
    data = _data(model)
    opts = dict(options or {})
    max_points = opts.pop("max_points", ENUMERATE_MAX_POINTS)
    if opts:
        raise ParameterError(f"options: solver='enumerate' takes only 'max_points', got {sorted(opts)}.",
                             "options")
    block = find_perturbation_block(model)
    info = perturbation_info(model)
    d = len(data.grid)
    if info is None:
        noise, scale, normalize, norm_bound = np.zeros(d), 0.0, False, None
        objective = model.find_component(data.objective)
        if objective is None or not objective.active:
            raise ModelError("model: its loss objective is not active; solver='enumerate' minimizes it.",
                             "model")
    else:
        if list(info.weight_names) != [v.name for v in model.w.values()]:
            raise ModelError("model: the perturbation is not on the weights w; solver='enumerate' "
                             "needs weights=model.w.", "model")
        noise = get_noise(model)
        scale, normalize, norm_bound = info.scale, info.normalize, info.norm_bound
    check_unchanged(model, data, block)
    levels = enumeration_levels(data, norm_bound)
    n_points = count_grid_points(levels[0], levels[1])
    if info is not None:
        problem = perturbed_problem(data, levels, noise, scale, normalize)
        if problem is not None:      # branch and bound: W_tau is never listed, no max_points
            return EnumerationPlan(data, noise, scale, normalize, levels, n_points, problem)
    if n_points > max_points:
        raise ParameterError(
            f"solver='enumerate': W_tau has {n_points:,} grid points, more than max_points="
            f"{max_points:,}. Use a MILP solver (e.g. 'highs'), a smaller norm_bound or a coarser "
            "grid, or raise options={'max_points': ...}.", "solver")
    return EnumerationPlan(data, noise, scale, normalize, levels, n_points, None)


def run_enumeration(spec, model, *, time_limit, mip_gap, abs_gap, threads, options, plan=None, executor=None):
    """The runner behind ``solve(model, "enumerate")``: returns a
    :class:`~privopt.solvers._report.RunOutcome` like the other runners and
    loads w (with its grid encoding r and, when normalized, s) into the model.
    ``plan``: the :class:`EnumerationPlan` of :func:`check_enumerable` for this model, if made."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    start = time.perf_counter()
    if plan is None:   # solve() passes the checks it already made
        plan = check_enumerable(model, options)
    data, noise, scale, normalize, n_points = plan.data, plan.noise, plan.scale, plan.normalize, plan.n_points
    coef, bound, unit, D = plan.levels
    block = find_perturbation_block(model)
    d = len(data.grid)
    X = data.X
    if plan.problem is not None:
        return _branch_and_bound(plan.problem, model, data, block, start, time_limit, n_points, threads, executor)
    best_val, best_w, best_s, done = math.inf, None, None, 0
    for W, used, losses in iter_losses(data, coef, bound):
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time limit after {done:,} of {n_points:,} grid points"
            if best_w is None:
                return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.noSolution, message=message)
            _load(model, data, best_w, block, best_s)
            return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.feasible, best_val, -math.inf,
                              message)
        if normalize:
            s = np.sqrt(np.maximum(0.0, D * D - used * unit))
            perturbation = (W @ noise[:d] + noise[d] * s) / D
        else:
            s = None
            perturbation = W @ noise[:d]
        J = losses - scale * perturbation
        k = int(np.argmin(J))
        if J[k] < best_val:
            best_val, best_w = float(J[k]), W[k].copy()
            best_s = None if s is None else float(s[k])
        done += W.shape[0]
    assert done == n_points
    _load(model, data, best_w, block, best_s)
    message = f"exact enumeration of {n_points:,} grid points x {X.shape[0]:,} distinct rows"
    return RunOutcome(TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal, best_val, best_val,
                      message)


#: Tasks per worker process of a parallel branch and bound (each sent with the
#: best value known when it starts; more tasks: a tighter ceiling, finer time limit).
TASKS_PER_WORKER = 16


def bound_workers(problem, rows: int, threads: int | None) -> int:
    """Worker processes for the branch and bound: 1 (this process) when
    ``threads == 1``, when its lower-bound pass is predicted below
    :data:`LOCAL_SECONDS` on one core, or in a worker process already;
    else ``threads`` (default: every usable CPU)."""
    import multiprocessing

    if threads == 1 or multiprocessing.parent_process() is not None:
        return 1
    if problem.predicted_seconds(rows) < LOCAL_SECONDS:
        return 1
    return max(1, int(threads) if threads is not None else usable_cpus())


def _branch_and_bound(problem, model, data, block, start, time_limit, n_points, threads=None, executor=None):
    """The exact argmin of OPDisc's oracle objective by branch and bound over
    the supports of W_tau (:class:`privopt.search._regions.PerturbedHalfspaceProblem`):
    each support's minimum comes from its row-pattern histogram where the
    patterns are few, else a lower bound that sends the support to be scored
    only if it can still beat the best value found; so the answer is the
    exact minimizer without listing W_tau.  On ``threads`` worker processes
    (:func:`bound_workers`) the blocks of supports are searched in parallel
    with the same answer (:func:`privopt.search._topdown.search_optimum`),
    or on ``executor`` when one is given (``"local"``: this process)."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    rows = data.X.shape[0]
    deadline = None if time_limit is None else start + time_limit
    if executor is not None:
        (best, done, total), where = _search_on_executor(problem, executor, deadline)
    else:
        workers = bound_workers(problem, rows, threads)
        best, done, total = _search_on_pool(problem, workers, deadline)
        where = f"on {workers} processes" if workers > 1 else "in one process"
    if done < total:
        message = f"time limit after {done:,} of {total:,} blocks of supports (branch and bound {where})"
        if best is None:
            return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.noSolution, message=message)
        _load_candidate(problem, model, data, block, best)
        return RunOutcome(TerminationCondition.maxTimeLimit, SolutionStatus.feasible, float(best[0]), -math.inf,
                          message)
    _load_candidate(problem, model, data, block, best)
    value = float(best[0])
    message = (f"exact branch and bound ({where}) over the {problem.n_regions:,} supports of {n_points:,} grid "
               f"points x {rows:,} distinct rows")
    return RunOutcome(TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal, value, value, message)


def _search_on_pool(problem, workers: int, deadline):
    """:func:`search_optimum` here (``workers == 1``) or on a local process
    pool made for it: the problem goes to each worker once (the pool's
    initializer), tasks of a few seconds each carry only their blocks; at the
    deadline the running tasks are stopped too."""
    from concurrent.futures import ProcessPoolExecutor

    if workers <= 1:
        return search_optimum(problem, deadline=deadline)
    key = f"branch-and-bound-{os.getpid()}-{id(problem)}"
    problem.region_minima(problem.supports(problem.k, 0, 1))     # load the kernels here: workers fork with them
    pool = ProcessPoolExecutor(max_workers=workers, initializer=install_problem, initargs=(key, problem))
    done = total = 0
    try:
        best, done, total = search_optimum(problem, executor=pool, deadline=deadline, installed=key,
                                           tasks_per_worker=TASKS_PER_WORKER)
    finally:
        if done < total or total == 0:       # out of time (or an error): stop the running tasks too
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
    return best, done, total


def _search_on_executor(problem, executor, deadline):
    """:func:`search_optimum` on a caller's executor, resolved as the samplers
    resolve theirs (:func:`privopt._runtime.resolve_executor`:
    ``"local"`` here, ``"ray"`` a Ray pool made for the run).  Returns
    ``((best, done, total), where)``."""
    ex, owned = resolve_executor(executor, 0.0, len(plan_shards(problem)))
    try:
        out = search_optimum(problem, executor=ex, deadline=deadline, tasks_per_worker=TASKS_PER_WORKER)
    finally:
        if owned:
            ex.shutdown()
    return out, "in one process" if ex is None else f"on the executor's {worker_count(ex)} workers"


def _load_candidate(problem, model, data, block, best):
    w = problem.decode(best[1], best[2])
    s_value = problem.slack_of(best[1], best[2]) if problem.normalize else None
    _load(model, data, w, block, s_value)


def _load(model, data, w, block, s_value):
    r = model.find_component("r")
    for j, v in enumerate(model.w.values()):
        v.set_value(float(w[j]), skip_validation=True)
        if r is not None:
            for k, g in enumerate(data.grid[j]):
                r[j, k].set_value(1 if abs(g - w[j]) <= 1e-12 else 0, skip_validation=True)
    if block is not None and s_value is not None:
        block.s.set_value(float(s_value), skip_validation=True)
