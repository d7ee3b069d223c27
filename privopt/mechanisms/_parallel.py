"""The worker side of OPSamp's oracle calls, on any executor (:mod:`privopt._runtime`).

Mechanisms that call the oracle many times (OPSamp) draw every random
quantity in the parent process and send each worker a serialized model and
its own noise vector, so the answer does not depend on which executor ran the
calls or in which order they finished.  What an executor is, how a local pool
is sized and how tasks are run in order lives in :mod:`privopt._runtime` (its
names are re-exported here, where they used to live).

This module runs in whichever process the executor chose:
:func:`oracle_chunk` (one task of several calls) and :func:`oracle_call` (one
call: load the model, set sigma_k, solve, read w), the per-process caches
(:data:`_KEPT`, the models kept for warm re-solves; :data:`_PAYLOADS`, the
models installed by a pool's initializer, :func:`install_payload`) and the
persistent path.  Solves in one process are serialized by the one solve lock
of :mod:`privopt.solvers` (:func:`privopt.solvers._dispatch.solve_lock`,
reset in a forked child).
"""

from __future__ import annotations

import os
import pickle
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from .._runtime import (   # re-exported: the executors used to live here
    PoolExecutor,
    check_executor,
    default_executor,
    dumps_model,
    ray_executor,
    run_ordered,
    share,
    usable_cpus,
    worker_count,
)
from ..exceptions import NotCertifiedError, ParameterError, SolverError
from ..oracle import certified_solve
from ..perturbation import set_noise
from ..solvers import DEFAULT_ABS_GAP, HighsCostSession, SolveOptions, get_spec, persistent_solver, solve_lock

__all__ = ["check_executor", "default_executor", "usable_cpus", "worker_count", "dumps_model", "share",
           "run_ordered", "PoolExecutor", "ray_executor", "OracleAnswer", "OracleSolve", "oracle_call",
           "oracle_chunk", "install_payload"]

# ----------------------------------------------------------------------------
# The worker side of OPSamp's oracle calls
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class OracleAnswer:
    """What one oracle call sends back: the weights (None without a
    solution), the solve report and whether it was certified."""

    values: tuple | None
    report: object
    certified: bool


@dataclass(frozen=True)
class OracleSolve:
    """How a worker solves each oracle call: the part of the run's
    :class:`~privopt.solvers.SolveOptions` a worker needs, and nothing else.

    Built once in the parent (:meth:`of`) and sent with every task, so it must
    pickle for any executor (a process pool, dask, Ray): the run's executor,
    progress bar and declared constraints stay in the parent, and the
    solver-specific options are a tuple of ``(name, value)`` pairs (in the
    order given), so the record is frozen all the way down and every call of
    a run is solved alike.  The failure policy is not here either: a worker
    always reports an uncertified call (``certified=False``) and the parent
    applies ``on_failure``.
    """

    solver: str
    time_limit: float | None = None
    threads: int | None = None
    abs_gap: float = DEFAULT_ABS_GAP
    solver_options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, options: SolveOptions) -> OracleSolve:
        """The worker's record of a run's validated ``options`` (its solver resolved)."""
        if options.solver is None:
            raise ParameterError("solver: OPSamp's oracle calls need a solver name; the run's solver was not "
                                 "resolved (solver=None).", "solver")
        return cls(options.solver, options.time_limit, options.threads, options.abs_gap,
                   tuple(options.options.items()))

    def solve_options(self) -> SolveOptions:
        """The record :func:`privopt.oracle.certified_solve` takes, rebuilt in the worker."""
        return SolveOptions(solver=self.solver, time_limit=self.time_limit, threads=self.threads,
                            abs_gap=self.abs_gap, solver_options=dict(self.solver_options))


#: Per worker process: the models kept for persistent oracle calls (key of the
#: opsamp run -> _Persistent), at most _MAX_KEPT of them, and the serialized
#: models installed by the initializer of privopt's own process pools.
_KEPT: dict = {}
_MAX_KEPT = 4
#: Guards _KEPT's insertions and evictions: a thread pool's workers share it (two of them
#: evicting the same oldest entry raised KeyError).  Held for dict operations only, and
#: made anew in a forked child.
_KEPT_LOCK = threading.Lock()


def _new_kept_lock() -> None:
    global _KEPT_LOCK
    _KEPT_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_kept_lock)
_PAYLOADS: dict = {}


def install_payload(key: str, payload: bytes) -> None:
    """Initializer of the process pools opsamp creates: the model arrives once per worker."""
    _PAYLOADS[key] = payload


@dataclass
class _Persistent:
    model: object
    weights: list
    solver_object: object
    lock: threading.Lock
    fast: object = None          # a HighsCostSession once the first solve built the HiGHS model
    base_costs: object = None    # costs of w without the noise
    fast_tried: bool = False


def _solve_lock():
    return solve_lock()


def _read_answer(model, w, how: OracleSolve, persistent=None) -> OracleAnswer:
    """Solve ``model`` as ``how`` says (warm on ``persistent`` when given) and read w."""
    try:
        with _solve_lock():
            extra = {} if persistent is None else {"persistent": persistent, "vars_to_load": w}
            # the parent ran check_run on these arguments (mechanisms/_checks.py)
            report = certified_solve(model, options=how.solve_options(), what="an OPSamp oracle call",
                                     _prechecked=True, **extra)
        certified = True
    except NotCertifiedError as exc:
        report, certified = exc.report, False
    values = None
    if report is not None and report.has_solution:
        raw = [v.value for v in w]
        if any(x is None for x in raw):
            raise SolverError(f"{how.solver} returned a solution without values for the weights.", report)
        values = tuple(float(x) for x in raw)
    return OracleAnswer(values, report, certified)


def _transformed_copy(payload, weight_names, sigma, *, mutable_noise=False):
    """A private copy of the model with objective L(w) - <sigma, w>, and its w."""
    model = pickle.loads(payload)
    w = [cuid.find_component_on(model) for cuid in weight_names]
    pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
        model, weights=w, noise=np.asarray(sigma, dtype=float), normalize=False, mutable_noise=mutable_noise)
    return model, w


def _persistent_state(key, payload, weight_names, sigma, solver):
    """The worker's kept model for run ``key`` (built on first use), or None
    when the solver has no persistent path."""
    state = _KEPT.get(key)
    if state is not None:
        return state
    opt = persistent_solver(solver)
    if opt is None:
        return None
    model, w = _transformed_copy(payload, weight_names, sigma, mutable_noise=True)
    state = _Persistent(model, w, opt, threading.Lock())
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:          # another thread of this worker built it meanwhile
            return kept
        while len(_KEPT) >= _MAX_KEPT:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[key] = state
    return state


def _warm_call(state, sigma, how: OracleSolve) -> OracleAnswer:
    """One call on the kept model: through the HighsCostSession once the first
    solve has built the HiGHS model, else set sigma and re-solve through
    :func:`privopt.oracle.certified_solve` (and try to attach the session)."""
    sigma = np.asarray(sigma, dtype=float)
    with state.lock:
        if state.fast is not None:
            with _solve_lock():
                values, report = state.fast.solve(state.base_costs - sigma)
            if values is None:
                raise SolverError(f"{how.solver} ended an OPSamp oracle call without a solution "
                                  f"({report.termination.name}).", report)
            return OracleAnswer(tuple(float(x) for x in values), report, report.certified_optimal)
        set_noise(state.model, sigma)
        answer = _read_answer(state.model, state.weights, how, state.solver_object)
        if not state.fast_tried:
            state.fast_tried = True
            if get_spec(how.solver).name == "highs":
                state.fast = HighsCostSession.attach(
                    state.solver_object, state.weights, solver=how.solver, time_limit=how.time_limit,
                    abs_gap=how.abs_gap, options=dict(how.solver_options))
                if state.fast is not None:
                    state.base_costs = state.fast.costs() + sigma
        return answer


def oracle_call(payload, weight_names: tuple, sigma, how: OracleSolve,
                key: str | None = None, keep: bool = False) -> OracleAnswer:
    """One OPSamp oracle call, run in a worker (top level, so picklable).

    ``payload`` is the serialized model, or None when the pool's initializer
    installed it under ``key``; ``how`` is the run's :class:`OracleSolve`
    (solver, time limit, threads, abs_gap, solver options).  Two paths give
    the same answer:

    * warm (``keep`` with a solver that has a persistent path,
      :func:`privopt.solvers.persistent_solver`; the default for HiGHS): the
      worker keeps the model of run ``key``, transformed once by
      ``privopt.objective_perturbation`` with ``normalize=False`` and
      ``mutable_noise=True``.  The first call sets sigma_k and solves through
      :func:`privopt.oracle.certified_solve`; for HiGHS every later call
      changes only the cost coefficients of w in the HiGHS model already
      built (:class:`privopt.solvers._highs_costs.HighsCostSession`) and
      re-solves warm from the previous basis, certified by the same rule
      (:func:`privopt.solvers.is_certified`);
    * cold (otherwise): the worker loads a private copy of the model, applies
      the transformation (objective L(w) - <sigma, w>) and solves it from
      scratch through :func:`privopt.oracle.certified_solve`.

    An uncertified solve is returned with ``certified=False`` (the parent
    applies the failure policy, so that its warning or error is raised where
    the caller can see it); errors without a solution propagate.

    Why a warm start cannot change the answer: the privacy proof of OPSamp
    needs each answer w_k to be a function of the data and sigma_k alone.
    Each call's objective is linear in w with a continuous noise vector, so its
    minimizer over w is unique with probability one; a certified solve
    returns the exact optimum, and a unique exact optimum does not depend on
    the point the solver started from.  The warm path therefore returns what
    the cold path returns (tests/mechanisms/test_opsamp.py checks it call by call).
    """
    if payload is None:
        payload = _PAYLOADS[key]
    if keep and key is not None:
        state = _persistent_state(key, payload, weight_names, sigma, how.solver)
        if state is not None:
            return _warm_call(state, sigma, how)
    model, w = _transformed_copy(payload, weight_names, sigma)
    return _read_answer(model, w, how)


def oracle_chunk(payload, weight_names, sigmas, how: OracleSolve, key=None, keep=False, stop=False):
    """Several oracle calls in one task (:func:`oracle_call` for each row of
    ``sigmas``, in order); with ``stop`` the task ends at its first
    uncertified call (the parent then releases nothing)."""
    out = []
    for sigma in sigmas:
        answer = oracle_call(payload, weight_names, sigma, how, key, keep)
        out.append(answer)
        if stop and not answer.certified:
            break
    return out
