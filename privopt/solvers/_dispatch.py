"""``solve``: send a Pyomo model to a solver chosen by name and read back a
:class:`SolveReport` that means the same thing for every solver."""

from __future__ import annotations

import contextlib
import difflib
import logging
import functools
import math
import os
import sys
import threading
import time
from dataclasses import dataclass, replace

import pyomo.environ as pyo
from pyomo.common.errors import ApplicationError
from pyomo.contrib.solver.common.factory import SolverFactory as ContribFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.opt import SolverFactory as LegacyFactory, SolverStatus, TerminationCondition as LegacyTC

from .._validation import check_model_objective, user_stacklevel
from ..exceptions import (
    InfeasibleModelError,
    NoSolutionError,
    ParameterError,
    ParameterTypeError,
    SolverCrashedError,
    SolverLicenseError,
    SolverNotAvailableError,
    SolverOptionError,
    UnboundedModelError,
    UncheckedOptionsWarning,
    UnknownSolverError,
)
from ._registry import REGISTRY, SolverSpec, resolve_name
from ._report import RunOutcome, SolveReport
from .._version import __version__
from ._enumerate import check_enumerable, run_enumeration
from ._options import (  # noqa: F401  (check_solve_limits, check_solver_options: privopt.solvers' names)
    DEFAULT_ABS_GAP,
    SolveOptions,
    check_solve_limits,
    check_solver_options,
)

__all__ = [
    "solve",
    "is_certified",
    "problem_class",
    "available_solvers",
    "SolverInfo",
    "get_spec",
    "DEFAULT_ABS_GAP",
]

#: The one lock that serializes solves in a process.  Pyomo's solver
#: interfaces redirect sys.stdout / sys.stderr while they run
#: (pyomo.common.tee), which breaks when two solves overlap in one process
#: ("TeeStream: deadlock observed"): a thread pool (or an in-process dask
#: cluster) gives the same answers as a process pool, but only processes solve
#: in parallel.  Reentrant, because OPSamp's worker holds it around a whole
#: certified solve (checks included) and :func:`solve` takes it again around
#: the run; replaced by a fresh lock in a forked child (a child forked while
#: another thread held it would otherwise inherit it held, forever).  Use
#: :func:`solve_lock` rather than importing the name, which a fork rebinds.
_SOLVE_LOCK = threading.RLock()


def _new_solve_lock() -> None:
    global _SOLVE_LOCK
    _SOLVE_LOCK = threading.RLock()


def _reset_highs_scheduler() -> None:
    """Drop, in a forked child, the HiGHS task scheduler inherited from the parent.

    HiGHS runs parallel tasks of a MILP solve (e.g. the analytic centre of
    the root node) on a scheduler that its first ``run()`` in a thread
    creates, with worker threads, and keeps for the life of the process.  A
    forked child inherits that scheduler's memory but none of its threads,
    so the child's first MILP solve hands a task to a worker that does not
    exist and spins in ``highs::parallel::sync`` at 100% CPU forever (a
    forked ``ProcessPoolExecutor`` worker, or opsamp's own process pool,
    after any HiGHS MILP solve in the parent).  ``Highs.resetGlobalScheduler(False)``
    in the child, before anything else runs there, detaches the dead workers
    and forgets the scheduler, so the child's next solve creates a fresh one
    with live threads.  Non-blocking, because ``True`` would join threads
    that do not exist in the child.  Only where highspy is already imported
    (otherwise no HiGHS ran here, and nothing is imported in the child).
    """
    highspy = sys.modules.get("highspy")
    reset = getattr(getattr(highspy, "Highs", None), "resetGlobalScheduler", None)
    if reset is None:
        return
    try:
        reset(False)
    except Exception:  # pragma: no cover - an old or broken highspy: nothing to reset
        pass


def _after_fork_in_child() -> None:
    _new_solve_lock()
    _reset_highs_scheduler()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def solve_lock():
    """The process's solve lock (see ``_SOLVE_LOCK``)."""
    return _SOLVE_LOCK



# ----------------------------------------------------------------------------
# Name resolution and availability
# ----------------------------------------------------------------------------

def _all_known_names() -> list[str]:
    names = set(REGISTRY)
    names.update(k for k in LegacyFactory._cls if not k.startswith("_"))
    names.update(ContribFactory._cls)
    return sorted(names)


def get_spec(name) -> SolverSpec:
    """The :class:`SolverSpec` for ``name``; unknown-to-privopt names that Pyomo
    knows get a pass-through spec (options go to the solver unchanged)."""
    if not isinstance(name, str):
        raise ParameterTypeError(
            f"solver must be a solver name (str), got {type(name).__name__}; e.g. solver='highs'.",
            "solver",
        )
    key = resolve_name(name)
    if key in REGISTRY:
        return REGISTRY[key]
    if key in ContribFactory._cls:
        return SolverSpec(key, key, "contrib", (), f"see Pyomo's documentation for '{key}'")
    if key in LegacyFactory._cls and not key.startswith("_"):
        return SolverSpec(key, key, "legacy", (), f"see Pyomo's documentation for '{key}'")
    close = difflib.get_close_matches(key, _all_known_names(), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownSolverError(
        f"Unknown solver {name!r}: neither privopt nor Pyomo knows it.{hint} "
        "Run `privopt solvers` to list the solvers privopt supports."
    )


def _make_solver(spec: SolverSpec):
    if spec.interface == "contrib":
        return ContribFactory(spec.pyomo_name)
    if spec.interface == "appsi":
        from pyomo.contrib.appsi.solvers import Highs

        return Highs()
    return LegacyFactory(spec.pyomo_name)


@functools.lru_cache(maxsize=None)
def solver_availability(name: str) -> tuple[bool, str | None]:
    spec = get_spec(name)
    try:
        with _quiet_pyomo("pyomo"):  # e.g. Pyomo's gurobi plugin warns while probing its licence
            return _probe(spec)
    except Exception:  # a broken install is "not available", never a crash here
        return False, None


def _probe(spec) -> tuple[bool, str | None]:
    if spec.interface == "enumerate":
        return True, f"privopt {__version__}"
    solver = _make_solver(spec)
    if spec.interface == "legacy":
        ok = bool(solver.available(exception_flag=False))
    else:
        ok = bool(solver.available())
    version = None
    if ok:
        v = solver.version()
        version = ".".join(str(p) for p in v) if isinstance(v, tuple) else (str(v) if v else None)
    return ok, version


@dataclass(frozen=True)
class SolverInfo:
    """One row of :func:`available_solvers`."""

    name: str
    available: bool
    version: str | None
    problem_classes: tuple
    install_hint: str
    interface: str


def available_solvers(names=None) -> list[SolverInfo]:
    """Every solver privopt knows (or ``names``), with availability and version."""
    rows = []
    for name in names or REGISTRY:
        spec = get_spec(name)
        ok, version = solver_availability(spec.name)
        rows.append(SolverInfo(spec.name, ok, version, spec.problem_classes, spec.install_hint, spec.pyomo_name))
    return rows


# ----------------------------------------------------------------------------
# Problem class
# ----------------------------------------------------------------------------

def problem_class(model) -> str:
    """``"LP"``, ``"MILP"``, ``"QP"``, ``"MIQP"`` or ``"NLP"`` for the active parts of ``model``."""
    discrete = any(
        not v.is_continuous() and not v.fixed
        for v in model.component_data_objects(pyo.Var, active=True, descend_into=True)
    )
    degree = 0
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        d = obj.expr.polynomial_degree()
        degree = max(degree, 99 if d is None else d)
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        d = con.body.polynomial_degree()
        degree = max(degree, 99 if d is None else d)
        if degree > 2:
            break
    if degree > 2:
        return "NLP"
    if degree == 2:
        return "MIQP" if discrete else "QP"
    return "MILP" if discrete else "LP"


# ----------------------------------------------------------------------------
# Certification
# ----------------------------------------------------------------------------

def is_certified(termination, objective, bound, *, mip_gap: float, abs_gap: float,
                 report_rtol: float = 0.0) -> bool:
    """Certification rule (docs/estimators.md, "Certification tolerance").

    A solve is certified optimal iff the solver reports optimality
    (``convergenceCriteriaSatisfied``), there is an incumbent, and -- when the
    solver reports a bound -- incumbent and bound agree within
    ``abs_gap + mip_gap * max(|objective|, |bound|)``.  The gap is measured
    absolutely because a perturbed optimum can be near zero or negative, where
    a relative gap means nothing.  With the default ``mip_gap = 0`` the rule is
    purely absolute.  A solver that proves optimality but reports no bound
    (pure LPs on some interfaces) is taken at its word.

    ``report_rtol`` is the relative precision with which the solver *reports*
    objective and bound (CBC: about 8 significant digits, ``1e-7``; HiGHS,
    Gurobi, SCIP: full doubles, ``0``): ``report_rtol * max(|objective|,
    |bound|)`` is added to the tolerance so that a gap made only of the
    solver's rounding does not refuse a true optimum.
    """
    if termination != TerminationCondition.convergenceCriteriaSatisfied or objective is None:
        return False
    if bound is None or (isinstance(bound, float) and math.isnan(bound)):
        return True
    if not math.isfinite(bound):
        return False
    tol = abs_gap + (mip_gap + report_rtol) * max(abs(objective), abs(bound))
    return abs(objective - bound) <= tol + 1e-12 * max(1.0, abs(objective))


# ----------------------------------------------------------------------------
# The three Pyomo interfaces, normalized
# ----------------------------------------------------------------------------

_APPSI_TC = {
    "optimal": TerminationCondition.convergenceCriteriaSatisfied,
    "maxTimeLimit": TerminationCondition.maxTimeLimit,
    "maxIterations": TerminationCondition.iterationLimit,
    "objectiveLimit": TerminationCondition.objectiveLimit,
    "minStepLength": TerminationCondition.minStepLength,
    "unbounded": TerminationCondition.unbounded,
    "infeasible": TerminationCondition.provenInfeasible,
    "infeasibleOrUnbounded": TerminationCondition.infeasibleOrUnbounded,
    "error": TerminationCondition.error,
    "interrupted": TerminationCondition.interrupted,
    "licensingProblems": TerminationCondition.licensingProblems,
}

_LEGACY_TC = {
    LegacyTC.optimal: TerminationCondition.convergenceCriteriaSatisfied,
    LegacyTC.globallyOptimal: TerminationCondition.convergenceCriteriaSatisfied,
    LegacyTC.locallyOptimal: TerminationCondition.convergenceCriteriaSatisfied,
    LegacyTC.maxTimeLimit: TerminationCondition.maxTimeLimit,
    LegacyTC.maxIterations: TerminationCondition.iterationLimit,
    LegacyTC.maxEvaluations: TerminationCondition.iterationLimit,
    LegacyTC.minFunctionValue: TerminationCondition.objectiveLimit,
    LegacyTC.minStepLength: TerminationCondition.minStepLength,
    LegacyTC.unbounded: TerminationCondition.unbounded,
    LegacyTC.infeasible: TerminationCondition.provenInfeasible,
    LegacyTC.infeasibleOrUnbounded: TerminationCondition.infeasibleOrUnbounded,
    LegacyTC.intermediateNonInteger: TerminationCondition.interrupted,
    LegacyTC.userInterrupt: TerminationCondition.interrupted,
    LegacyTC.resourceInterrupt: TerminationCondition.interrupted,
    LegacyTC.licensingProblems: TerminationCondition.licensingProblems,
    LegacyTC.error: TerminationCondition.error,
    LegacyTC.solverFailure: TerminationCondition.error,
    LegacyTC.internalSolverError: TerminationCondition.error,
    LegacyTC.feasible: TerminationCondition.unknown,
    LegacyTC.other: TerminationCondition.unknown,
    LegacyTC.unknown: TerminationCondition.unknown,
}


_NO_SOLUTION_TC = (
    TerminationCondition.provenInfeasible,
    TerminationCondition.locallyInfeasible,
    TerminationCondition.unbounded,
    TerminationCondition.infeasibleOrUnbounded,
    TerminationCondition.error,
    TerminationCondition.licensingProblems,
)


def _num(x):
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _run_contrib(spec, model, *, time_limit, mip_gap, abs_gap, threads, options, solver_object=None,
                 vars_to_load=None):
    solver = solver_object if solver_object is not None else ContribFactory(spec.pyomo_name)
    kwargs = dict(
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        rel_gap=mip_gap,
        abs_gap=abs_gap,
        solver_options=dict(options),
    )
    if time_limit is not None:
        kwargs["time_limit"] = float(time_limit)
    if threads is not None:
        kwargs["threads"] = int(threads)
    res = solver.solve(model, **kwargs)
    status = res.solution_status
    has = status in (SolutionStatus.feasible, SolutionStatus.optimal)
    if res.termination_condition in _NO_SOLUTION_TC:
        # e.g. SCIP reports an "unbounded" point with objective -1e20
        has, status = False, SolutionStatus.noSolution
    if has:
        res.solution_loader.load_vars(vars_to_load)
    return RunOutcome(res.termination_condition, status, _num(res.incumbent_objective), _num(res.objective_bound))


def _run_appsi(spec, model, *, time_limit, mip_gap, abs_gap, threads, options):
    solver = _make_solver(spec)
    solver.config.load_solution = False
    if time_limit is not None:
        solver.config.time_limit = float(time_limit)
    solver.config.mip_gap = mip_gap
    solver.highs_options = dict(options)
    res = solver.solve(model)
    tc = _APPSI_TC.get(res.termination_condition.name, TerminationCondition.unknown)
    obj = _num(res.best_feasible_objective)
    has = obj is not None
    if has:
        res.solution_loader.load_vars()
    status = (
        SolutionStatus.optimal if has and tc == TerminationCondition.convergenceCriteriaSatisfied
        else SolutionStatus.feasible if has else SolutionStatus.noSolution
    )
    return RunOutcome(tc, status, obj, _num(res.best_objective_bound))


def _run_legacy(spec, model, *, time_limit, mip_gap, abs_gap, threads, options):
    solver = LegacyFactory(spec.pyomo_name)
    # Pyomo's own ``timelimit=`` keyword is not used: for glpk and cbc it is
    # turned into the same solver option (glpk then rejects a float), and for
    # other legacy plugins its meaning varies.  The translated option is the limit.
    res = solver.solve(model, load_solutions=False, options=dict(options))
    tc = _LEGACY_TC.get(res.solver.termination_condition, TerminationCondition.unknown)
    if res.solver.status in (SolverStatus.error, SolverStatus.aborted) and tc == TerminationCondition.unknown:
        tc = TerminationCondition.error
    if res.solver.termination_condition == LegacyTC.intermediateNonInteger:
        # CBC stopped (time limit) holding only a fractional LP point: no solution.
        tc = TerminationCondition.maxTimeLimit if time_limit is not None else TerminationCondition.interrupted
        n_solutions = 0
    else:
        n_solutions = len(res.solution) if hasattr(res, "solution") else 0
    has = n_solutions > 0 and tc not in _NO_SOLUTION_TC
    obj = bound = None
    if has:
        with _quiet_pyomo():  # Pyomo warns when loading a time-limited ("aborted") result
            model.solutions.load_from(res)
        sol = res.solution[0]
        if sol.status.name in ("infeasible", "unbounded", "error"):
            has = False
    sense_min = True
    for o in model.component_data_objects(pyo.Objective, active=True):
        sense_min = o.sense == pyo.minimize
        if has:
            obj = _num(pyo.value(o))
    lb, ub = _num(res.problem.lower_bound), _num(res.problem.upper_bound)
    bound = lb if sense_min else ub
    if bound is not None and not math.isfinite(bound):
        bound = None if tc == TerminationCondition.convergenceCriteriaSatisfied else bound
    status = (
        SolutionStatus.optimal if has and tc == TerminationCondition.convergenceCriteriaSatisfied
        else SolutionStatus.feasible if has else SolutionStatus.noSolution
    )
    msg = str(getattr(res.solver, "termination_message", "") or "")
    return RunOutcome(tc, status, obj, bound, msg)


@contextlib.contextmanager
def _quiet_pyomo(name: str = "pyomo.core"):
    logger = logging.getLogger(name)
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


def _run_enumerate(spec, model, **kw):
    return run_enumeration(spec, model, **kw)


_RUNNERS = {"contrib": _run_contrib, "appsi": _run_appsi, "legacy": _run_legacy, "enumerate": _run_enumerate}


# ----------------------------------------------------------------------------
# solve
# ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _highs_probe():
    """A highspy.Highs object for looking up option names (HiGHS prints its
    banner once per process at the first construction; it is kept off the
    console here)."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            probe = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    probe.setOptionValue("output_flag", False)
    return probe


def check_option_names(solver_name: str, options: dict, parameter: str = "options") -> None:
    """Refuse option names the solver does not have, for solvers whose option
    names privopt can look up (HiGHS, through highspy's own option table).
    Options for a solver privopt does not know (a pass-through name) draw an
    :class:`~privopt.exceptions.UncheckedOptionsWarning`.  The other solvers
    of privopt's table (GLPK, CBC, SCIP, ...) get their options unchecked
    (their documentation is the reference); a misspelt option there is
    reported by the solver, if at all."""
    if options and solver_name not in REGISTRY:
        import warnings

        warnings.warn(
            f"{parameter}: privopt does not know the options of solver {solver_name!r}; "
            f"{', '.join(repr(k) for k in options)} go to it unchanged and unchecked (a misspelt option may "
            "be ignored): check them against the solver's documentation.", UncheckedOptionsWarning,
            stacklevel=user_stacklevel())
        return
    if not options or solver_name not in ("highs", "appsi_highs"):
        return
    try:
        import highspy
        probe = _highs_probe()
    except Exception:  # pragma: no cover - highspy missing: availability is reported elsewhere
        return
    unknown = [k for k in options if probe.getOptionValue(k)[0] != highspy.HighsStatus.kOk]
    if unknown:
        names = [a for a in dir(highspy.HighsOptions()) if not a.startswith("_")]
        hints = []
        for k in unknown:
            close = difflib.get_close_matches(k, names, n=2, cutoff=0.6)
            hints.append(f"{k!r}" + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""))
        err = SolverOptionError(
            f"{parameter}: HiGHS has no option {', '.join(hints)}; see https://ergo-code.github.io/HiGHS/stable/options/"
            "definitions/ for its options. privopt's own time_limit, mip_gap, abs_gap and threads are "
            "arguments, not options.")
        err.parameter = parameter
        raise err


def persistent_solver(name):
    """A Pyomo solver object that keeps its model between solves, for ``name``,
    or None when privopt has no persistent path for that solver.

    Pass it to :func:`solve` (``persistent=``) for repeated solves of ONE model
    in which only the values of mutable Params change (e.g. the noise of
    ``privopt.objective_perturbation`` with ``mutable_noise=True``): the solver
    then updates the changed coefficients and re-solves warm instead of
    rebuilding the model.  Its automatic update checks are limited to
    parameters and the objective, so adding or removing variables or
    constraints between solves is not seen: build a new one for a new model.
    Persistent paths: the solvers behind Pyomo's API v2 that are persistent
    (``highs``, ``gurobi_persistent``, ``scip_persistent``)."""
    spec = get_spec(name)
    if spec.interface != "contrib" or not solver_availability(spec.name)[0]:
        return None
    from pyomo.contrib.solver.common.persistent import PersistentSolverMixin

    opt = ContribFactory(spec.pyomo_name)
    if not isinstance(opt, PersistentSolverMixin):
        return None
    updates = getattr(opt.config, "auto_updates", None)
    if updates is not None:
        for key in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                    "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
                    "update_vars", "update_named_expressions"):
            if hasattr(updates, key):
                setattr(updates, key, False)
    opt._privopt_solver_name = spec.name
    return opt


#: The keywords of :func:`solve` validated into its :class:`SolveOptions`.
SOLVE_KEYWORDS = ("time_limit", "mip_gap", "abs_gap", "threads", "seed", "solver_options", "executor")


def solve_options(solver, options, keywords, function: str = "solve",
                  accepts=SOLVE_KEYWORDS) -> tuple[SolveOptions, str]:
    """The record of a call ``solve(model, solver, options=options, **keywords)``
    and the name its solver-specific options were given under (for errors).

    ``options`` is a :class:`SolveOptions`, or (the older spelling) a dict of
    solver-specific options, the same as ``solver_options=``; ``solver``,
    when given, overrides the record's."""
    option_name = "solver_options"
    if options is not None and not isinstance(options, SolveOptions):
        if keywords.get("solver_options") is not None:
            raise ParameterError("solver_options: give options= or solver_options= (the same thing), not both.",
                                 "solver_options")
        keywords, options, option_name = {**keywords, "solver_options": options}, None, "options"
    record = SolveOptions.from_keywords(function, keywords, options=options, accepts=accepts)
    return (record if solver is None else record.replace(solver=solver)), option_name


def _active_objectives(model):
    return list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))


def solve(
    model,
    solver: str | None = None,
    *,
    options: SolveOptions | dict | None = None,
    raise_on_no_solution: bool = True,
    persistent=None,
    vars_to_load=None,
    _prechecked: bool = False,
    **kwargs,
) -> SolveReport:
    """Solve a Pyomo model with the solver called ``solver``.

    Parameters
    ----------
    model : pyomo Block
        A model with exactly one active objective.
    solver : str, optional
        ``"highs"`` (default, embedded via highspy), ``"appsi_highs"``,
        ``"glpk"``, ``"cbc"``, ``"scip"``, ``"gurobi"``, ``"gurobi_persistent"``,
        ``"cplex"``, or any other name Pyomo's solver factories know (its
        options are then passed through unchanged and privopt does not
        translate ``time_limit`` etc. for it).
    options : SolveOptions or dict, optional
        A :class:`~privopt.solvers.SolveOptions` record (solver, time_limit,
        mip_gap, abs_gap, threads, seed, solver_options, executor; its other
        fields mean nothing to ``solve``), built once and reused; the keywords
        below override its fields, and ``solver`` its solver.  A dict is the
        solver-specific options, the same as ``solver_options`` (give one of
        the two).
    **kwargs
        ``time_limit``, ``mip_gap``, ``abs_gap``, ``threads``, ``seed``,
        ``solver_options``, ``executor``, as documented below, validated into
        a :class:`~privopt.solvers.SolveOptions` (each field documented
        there); any other name is a TypeError naming it.
    raise_on_no_solution : bool
        Raise (default) when the solve ends without a feasible point.
    persistent : solver object, optional
        From :func:`persistent_solver` (same ``solver``): reuse it, so that a
        model solved before is updated and re-solved warm.
    vars_to_load : list of VarData, optional
        With ``persistent``: load only these variables' values (default all).
    _prechecked : bool
        Private, for privopt's mechanisms: the caller already ran the setup
        checks (:func:`privopt.mechanisms._checks.check_run`: the HiGHS
        option names, the one active objective, the solver's availability)
        on these arguments, so ``solve`` does not repeat them (the record's
        own fields are validated when it is built, always).  The solver's
        availability is still looked up (cached per process; it gives the
        version for the report, and a worker on another machine may lack a
        solver the parent has), as is the problem class of the transformed
        model, which no mechanism checks.

    Other Parameters
    ----------------
    time_limit : float, optional
        Seconds; translated to the solver's own option.
    mip_gap : float
        Relative optimality gap the solver may stop at (default 0: prove
        optimality).
    abs_gap : float
        Absolute gap the solver may stop at; also the tolerance of the
        certification rule (:func:`is_certified`).
    threads, seed : int, optional
        Translated where the solver has such an option (GLPK has neither).
        ``solver="enumerate"`` runs its branch and bound on ``threads``
        worker processes when it is predicted above 5 s (default: every
        usable CPU; 1 keeps it in this process); the answer is the same.
    executor : None, "local", Executor, dask Client or "ray", optional
        ``solver="enumerate"`` only (other solvers ignore it): run the branch
        and bound by support on this executor instead of a local process pool
        (``"local"``: in this process).  The argmin, and so the release, is
        the same on any executor.
    solver_options : dict, optional
        Solver-specific options, passed after (and so over) the translated ones.

    Returns
    -------
    SolveReport
        The solution is loaded into ``model`` only when there is one.

    Raises
    ------
    UnknownSolverError, SolverNotAvailableError, SolverOptionError
        Before any solve.
    InfeasibleModelError, UnboundedModelError, NoSolutionError, SolverCrashedError
        After the solve; each carries the :class:`SolveReport` as ``.report``.
    """
    record, option_name = solve_options(solver, options, kwargs)
    spec = get_spec(record.solver_or("highs"))
    if persistent is not None and getattr(persistent, "_privopt_solver_name", None) != spec.name:
        raise ParameterError("persistent: pass an object from persistent_solver() for the same solver.",
                             "persistent")
    user_options = record.options
    time_limit, mip_gap, abs_gap = record.time_limit, record.mip_gap, record.abs_gap
    threads, seed, executor = record.threads, record.seed, record.executor
    if not _prechecked:
        check_option_names(spec.name, user_options, option_name)
        check_model_objective(model, minimize=False)
    available, version = solver_availability(spec.name)
    if not available:
        raise SolverNotAvailableError(
            f"Solver {spec.name!r} is not installed or not usable here. Install it: {spec.install_hint}"
        )
    # a persistent solver's model was classified at its first solve; only
    # mutable Params change afterwards, so the class cannot
    checked = persistent is not None and getattr(persistent, "_privopt_checked_model", None) is model
    if spec.problem_classes and not checked:
        pclass = problem_class(model)
        if pclass not in spec.problem_classes:
            raise SolverOptionError(
                f"Solver {spec.name!r} cannot solve a {pclass} (it handles "
                f"{'/'.join(spec.problem_classes)}); choose another solver, e.g. "
                f"{_suggest_for(pclass)}."
            )
    if persistent is not None:
        persistent._privopt_checked_model = model
    solver_options = spec.translate(
        time_limit=time_limit, mip_gap=mip_gap, abs_gap=abs_gap, threads=threads, seed=seed
    )
    solver_options.update(user_options)
    plan = None
    if spec.interface == "enumerate":  # model errors are the caller's, raised before the run

        plan = check_enumerable(model, solver_options)

    settings = _Settings(time_limit, mip_gap, abs_gap, solver_options)
    start = time.perf_counter()
    try:
        # Pyomo's solver interfaces redirect sys.stdout while they run, which is
        # not thread-safe: solves in one process are serialized.  Run solves in
        # parallel with processes (or a dask cluster), not threads.
        with solve_lock():
            start = time.perf_counter()
            extra = {} if persistent is None else {"solver_object": persistent, "vars_to_load": vars_to_load}
            if plan is not None:
                extra["plan"] = plan
            if spec.interface == "enumerate" and executor is not None:
                extra["executor"] = executor
            outcome = _RUNNERS[spec.interface](
                spec, model, time_limit=time_limit, mip_gap=mip_gap, abs_gap=abs_gap,
                threads=threads, options=solver_options, **extra,
            )
    except (ApplicationError, RuntimeError, OSError, ValueError, KeyError, AttributeError) as exc:
        wall = time.perf_counter() - start
        report = _report(spec, version, RunOutcome(TerminationCondition.error, SolutionStatus.noSolution,
                                                   message=repr(exc)), wall, settings)
        raise SolverCrashedError(
            f"Solver {spec.name!r} failed instead of returning a status: {exc}", report
        ) from exc
    except Exception as exc:   # e.g. gurobipy.GurobiError, which is none of the above
        licence = _licence_message(spec, exc, model)
        if licence is None:
            raise
        report = _report(spec, version, RunOutcome(TerminationCondition.licensingProblems,
                                                   SolutionStatus.noSolution, message=repr(exc)),
                         time.perf_counter() - start, settings)
        raise SolverLicenseError(licence, report) from exc
    wall = time.perf_counter() - start
    if (outcome.termination == TerminationCondition.unknown and time_limit is not None
            and wall >= 0.95 * float(math.ceil(time_limit) if spec.integer_time_limit else time_limit)):
        # Shell solvers (GLPK) report a time-limit stop as "feasible"/"other".
        outcome = replace(outcome, termination=TerminationCondition.maxTimeLimit)
    report = _report(spec, version, outcome, wall, settings)
    tc, message = outcome.termination, outcome.message
    if not raise_on_no_solution or report.has_solution:
        return report
    if tc == TerminationCondition.provenInfeasible or tc == TerminationCondition.locallyInfeasible:
        raise InfeasibleModelError(f"The model is infeasible ({spec.name}).", report)
    if tc in (TerminationCondition.unbounded, TerminationCondition.infeasibleOrUnbounded):
        raise UnboundedModelError(
            f"The model is unbounded or infeasible ({spec.name}: {tc.name}); check the bounds "
            "of the decision variables.", report)
    if tc in (TerminationCondition.error, TerminationCondition.licensingProblems):
        raise SolverCrashedError(f"Solver {spec.name!r} ended with {tc.name}: {message}", report)
    if tc == TerminationCondition.maxTimeLimit:
        raise NoSolutionError(
            f"Solver {spec.name!r} hit the time limit of {time_limit} s without finding any "
            "feasible solution; raise time_limit.", report)
    raise NoSolutionError(f"Solver {spec.name!r} stopped ({tc.name}) without a solution.", report)


#: gurobipy's error codes for licence problems (GRB.Error.NO_LICENSE, SIZE_LIMIT_EXCEEDED).
_GUROBI_NO_LICENSE, _GUROBI_SIZE_LIMIT = 10009, 10010
#: The limits of the size-limited licence that comes with ``pip install gurobipy``.
GUROBI_SIZE_LIMIT = 2000


def _licence_message(spec, exc, model) -> str | None:
    """A clear message for a solver's licence error, or None for any other exception."""
    if type(exc).__name__ != "GurobiError":
        return None
    errno = getattr(exc, "errno", None)
    others = "'highs' (privopt's default), 'scip' or 'cbc'"
    if errno == _GUROBI_SIZE_LIMIT or "size-limited" in str(exc):
        n_vars = sum(1 for _ in model.component_data_objects(pyo.Var, active=True, descend_into=True))
        n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
        return (f"Solver {spec.name!r}: this model ({n_vars} variables, {n_cons} constraints, as privopt sends "
                f"it) is too large for Gurobi's size-limited licence, which pip install gurobipy includes "
                f"and which solves at most {GUROBI_SIZE_LIMIT} variables and {GUROBI_SIZE_LIMIT} constraints. "
                f"Install a full Gurobi licence (free for academic use: https://www.gurobi.com/academia/), "
                f"make the model smaller, or choose another solver: {others}. (Gurobi: {exc})")
    if errno == _GUROBI_NO_LICENSE or "licen" in str(exc).lower():
        return (f"Solver {spec.name!r}: Gurobi found no valid licence ({exc}). Install one "
                f"(https://www.gurobi.com/downloads/) or choose another solver: {others}.")
    return None


def _suggest_for(pclass: str) -> str:
    for name, spec in REGISTRY.items():
        if pclass in spec.problem_classes and solver_availability(name)[0]:
            return repr(name)
    return "one listed by `privopt solvers`"


@dataclass(frozen=True)
class _Settings:
    """The limits and options one solve ran with, as its report states them."""

    time_limit: float | None
    mip_gap: float
    abs_gap: float
    options: dict


def _report(spec, version, outcome: RunOutcome, wall: float, settings: _Settings) -> SolveReport:
    tc, status, obj, bound = outcome.termination, outcome.status, outcome.objective, outcome.bound
    certified = is_certified(tc, obj, bound, mip_gap=settings.mip_gap, abs_gap=settings.abs_gap,
                             report_rtol=spec.report_rtol) and status in (
        SolutionStatus.optimal, SolutionStatus.feasible)
    agap: float | None = None
    rgap: float | None = None
    if obj is not None and bound is not None and math.isfinite(bound):
        agap = abs(obj - bound)
        rgap = agap / max(abs(obj), 1e-10)
    return SolveReport(
        solver=spec.name, interface=spec.pyomo_name, solver_version=version, termination=tc,
        solution_status=status, certified_optimal=bool(certified), objective=obj, bound=bound,
        abs_gap_achieved=agap, rel_gap_achieved=rgap, wall_time=wall, time_limit=settings.time_limit,
        mip_gap=float(settings.mip_gap), abs_gap=float(settings.abs_gap), options=dict(settings.options),
        message=outcome.message,
    )
