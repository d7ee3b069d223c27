"""Independent oracle calls on any :class:`concurrent.futures.Executor`.

Mechanisms that call the oracle many times (OPSamp) draw every random
quantity in the parent process and send each worker a serialized model and
its own noise vector, so the answer does not depend on which executor ran the
calls or in which order they finished.  This module knows executors, not
mechanisms:

* :func:`check_executor` accepts ``None`` (a local process pool, created
  later), any :class:`~concurrent.futures.Executor` (process or thread pool,
  ``dask.distributed.Client.get_executor()``, ...), a ``dask.distributed``
  ``Client`` itself (its ``get_executor()`` is used), a pool with the
  ``multiprocessing.Pool`` interface (the standard library's, or Ray's
  ``ray.util.multiprocessing.Pool``, which runs on a Ray cluster), seen
  through :class:`PoolExecutor`, or the string ``"ray"`` (a Ray pool created
  by :func:`ray_executor` for the run);
* :func:`default_executor` sizes a :class:`~concurrent.futures.ProcessPoolExecutor`
  to the CPUs this process may use, capped by the number of calls;
* :func:`dumps_model` serializes a Pyomo model once (``pickle``, or
  ``cloudpickle`` when the model holds lambdas, as models built with
  ``rule=lambda ...`` do);
* :func:`share` sends a large argument (the serialized model) to a dask
  cluster once (``scatter``, broadcast) instead of once per call;
* :func:`run_ordered` submits the calls (at most ``max_in_flight`` pending at
  a time, so that m = 10^5 calls do not queue 10^5 copies of anything), shows
  a tqdm bar over completed calls, returns the results in submission order and
  stops early (cancelling what has not started) when a result is fatal or a
  call raises.

The second half is the worker side of OPSamp's oracle calls, which runs in
whichever process the executor chose: :func:`oracle_chunk` (one task of
several calls) and :func:`oracle_call` (one call: load the model, set sigma_k,
solve, read w), the per-process caches (:data:`_KEPT`, the models kept for
warm re-solves; :data:`_PAYLOADS`, the models installed by a pool's
initializer, :func:`install_payload`) and the persistent path.  Solves in one
process are serialized by the one solve lock of :mod:`privopt.solvers`
(:func:`privopt.solvers._dispatch.solve_lock`, reset in a forked child).
"""

from __future__ import annotations

import os
import pickle
import threading
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ..exceptions import ModelError, NotCertifiedError, ParameterTypeError, SolverError
from ..oracle import certified_solve

__all__ = ["check_executor", "default_executor", "usable_cpus", "worker_count", "dumps_model", "share",
           "run_ordered", "PoolExecutor", "ray_executor", "OracleAnswer", "oracle_call", "oracle_chunk",
           "install_payload"]

#: ``executor="ray"``: a Ray pool created for the run (see :func:`ray_executor`).
RAY = "ray"


class PoolExecutor(Executor):
    """A :class:`concurrent.futures.Executor` view of a pool with the
    ``multiprocessing.Pool`` interface (``apply_async`` with ``callback`` and
    ``error_callback``): the standard library's ``multiprocessing.Pool`` or
    Ray's ``ray.util.multiprocessing.Pool`` (Ray's documented drop-in for it,
    whose workers are actors on a Ray cluster).  ``owned``: ``shutdown``
    terminates the pool (privopt created it); otherwise the pool is left
    running for its owner."""

    def __init__(self, pool, *, owned: bool = False):
        self._pool = pool
        self._owned = owned
        n = getattr(pool, "_processes", None)
        self._max_workers = n if isinstance(n, int) and n > 0 else None

    def submit(self, fn, /, *args, **kwargs):
        fut = Future()
        fut.set_running_or_notify_cancel()
        self._pool.apply_async(fn, args, kwargs, callback=fut.set_result, error_callback=fut.set_exception)
        return fut

    def shutdown(self, wait=True, *, cancel_futures=False):
        if self._owned:
            self._pool.terminate()


def _is_pool(obj) -> bool:
    return callable(getattr(obj, "apply_async", None)) and callable(getattr(obj, "terminate", None))


def check_executor(executor):
    """``None``, ``"ray"``, an Executor, something with ``get_executor()`` (a
    dask Client), or a ``multiprocessing.Pool``-like pool (wrapped in
    :class:`PoolExecutor`)."""
    if executor is None or isinstance(executor, Executor):
        return executor
    if isinstance(executor, str) and executor.strip().lower() == RAY:
        from .._optional import require

        require("ray")  # a missing extra fails here, before any noise is drawn
        return RAY
    get = getattr(executor, "get_executor", None)
    if callable(get):
        inner = get()
        if isinstance(inner, Executor):
            return inner
    if _is_pool(executor):
        return PoolExecutor(executor)
    raise ParameterTypeError(
        "executor must be None (a local process pool), 'ray' (a pool on the Ray cluster of "
        "ray.init / RAY_ADDRESS), a concurrent.futures.Executor (e.g. ThreadPoolExecutor(2), "
        "ProcessPoolExecutor(4), dask_client.get_executor()), a dask.distributed Client, or a "
        "multiprocessing.Pool-like pool (multiprocessing.Pool, ray.util.multiprocessing.Pool), "
        f"got {type(executor).__name__}.", "executor")


def ray_executor(n_tasks: int, initializer=None, initargs=()) -> PoolExecutor:
    """A ``ray.util.multiprocessing.Pool`` for one run, seen as an Executor.

    Ray's pool connects to the cluster ``ray.init`` already joined, else to
    ``RAY_ADDRESS``, else starts a local Ray instance (Ray's own rules).  It
    has one worker per CPU of the cluster, at most ``n_tasks``; each worker
    runs ``initializer(*initargs)`` once when it starts, so a model passed
    there is sent to each worker once.  The pool is terminated after the run.
    """
    from .._optional import require

    require("ray")
    from ray.util.multiprocessing import Pool

    pool = Pool(initializer=initializer, initargs=initargs)
    size = getattr(pool, "_processes", None)
    if isinstance(size, int) and size > n_tasks:
        pool.terminate()
        pool = Pool(processes=max(1, int(n_tasks)), initializer=initializer, initargs=initargs)
    return PoolExecutor(pool, owned=True)


def usable_cpus() -> int:
    """CPUs this process may run on (affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_executor(n_tasks: int, initializer=None, initargs=()) -> ProcessPoolExecutor:
    """A local process pool with min(usable CPUs, n_tasks) workers (each
    running ``initializer(*initargs)`` once when it starts).

    The platform's default start method (``fork`` on Linux before Python
    3.14), on purpose: a child forked after HiGHS ran a MILP here would
    inherit HiGHS's task scheduler without its threads and spin forever on its
    first MILP, but privopt's at-fork hook resets that scheduler in every
    forked child (:func:`privopt.solvers._dispatch._reset_highs_scheduler`),
    which also covers pools the caller forks.  Measured with 2 workers and 4
    small MILPs after one in the parent: fork with the reset 0.23 s,
    ``forkserver`` 2.6 s, ``spawn`` 2.7 s (each worker imports privopt and
    Pyomo again); docs/oracle.md, "HiGHS and forked processes"."""
    return ProcessPoolExecutor(max_workers=max(1, min(usable_cpus(), int(n_tasks))),
                               initializer=initializer, initargs=initargs)


def _dask_client(executor):
    if type(executor).__module__.startswith("distributed"):
        return getattr(executor, "_client", None)
    return None


def worker_count(executor) -> int:
    """How many calls ``executor`` runs at once (best effort; CPUs here when unknown)."""
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = _dask_client(executor)
    if client is not None:
        try:
            return max(1, int(sum(client.nthreads().values())))
        except Exception:  # pragma: no cover - a client that cannot answer
            pass
    return usable_cpus()


def share(executor, obj):
    """The argument to pass to every call for ``obj``: on a dask executor, a
    future of ``obj`` scattered once to every worker; otherwise ``obj``."""
    client = _dask_client(executor)
    if client is None:
        return obj
    return client.scatter(obj, broadcast=True, hash=False)


def dumps_model(model) -> bytes:
    """Serialize a Pyomo model for the workers (loaded with :func:`pickle.loads`)."""
    try:
        return pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError) as first:
        try:
            import cloudpickle
        except ImportError:
            raise ModelError(
                f"model: it cannot be pickled ({first}), which parallel oracle calls need. Models "
                "built with rule=lambda ... need cloudpickle (pip install cloudpickle, included in "
                "privopt[dask]); or define the rules as module-level functions.", "model") from first
        try:
            return cloudpickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # pragma: no cover - depends on the user's model
            raise ModelError(f"model: it cannot be serialized for the workers: {exc}", "model") from exc


def run_ordered(executor, fn, arg_tuples, *, progress=False, desc="calls", is_fatal=None, max_in_flight=None,
                weights=None):
    """Run ``fn(*args)`` for each tuple of ``arg_tuples`` on ``executor``.

    Returns ``(results, fatal_index)``: results in submission order (``None``
    where a call never ran) and the index of the first result (in completion
    order) for which ``is_fatal(result)`` held, or ``None``.  At a fatal
    result or an exception every call not yet finished is cancelled (calls
    already running finish in their worker); an exception is re-raised.
    At most ``max_in_flight`` calls are pending at once (default: all).
    ``weights``: how much each call advances the progress bar (e.g. the
    number of oracle calls a task holds; default 1 each).
    """
    from .._progress import progress_bar

    n = len(arg_tuples)
    window = n if max_in_flight is None else max(1, int(max_in_flight))
    results = [None] * n
    pending: dict = {}
    fatal_index = None
    submitted = 0
    steps = [1] * n if weights is None else [int(w) for w in weights]
    bar = progress_bar(sum(steps), desc=desc, unit="call", disable=not progress)
    try:
        while submitted < n or pending:
            while submitted < n and len(pending) < window:
                pending[executor.submit(fn, *arg_tuples[submitted])] = submitted
                submitted += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=pending.__getitem__):
                i = pending.pop(fut)
                results[i] = fut.result()  # re-raises a worker's exception
                bar.update(steps[i])
                if is_fatal is not None and is_fatal(results[i]):
                    fatal_index = i
                    break
            if fatal_index is not None:
                break
    finally:
        for fut in pending:
            fut.cancel()
        bar.close()
    return results, fatal_index


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
    from ..solvers._dispatch import solve_lock

    return solve_lock()


def _read_answer(model, w, solver, solve_kwargs, persistent=None) -> OracleAnswer:
    try:
        with _solve_lock():
            extra = {} if persistent is None else {"persistent": persistent, "vars_to_load": w}
            # the parent ran check_run on these arguments (mechanisms/_checks.py)
            report = certified_solve(model, solver, on_failure="raise", what="an OPSamp oracle call",
                                     _prechecked=True, **extra, **solve_kwargs)
        certified = True
    except NotCertifiedError as exc:
        report, certified = exc.report, False
    values = None
    if report is not None and report.has_solution:
        raw = [v.value for v in w]
        if any(x is None for x in raw):
            raise SolverError(f"{solver} returned a solution without values for the weights.", report)
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
    from ..solvers import persistent_solver

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


def _warm_call(state, sigma, solver, solve_kwargs) -> OracleAnswer:
    """One call on the kept model: through the HighsCostSession once the first
    solve has built the HiGHS model, else set sigma and re-solve through
    :func:`privopt.oracle.certified_solve` (and try to attach the session)."""
    from ..perturbation import set_noise

    sigma = np.asarray(sigma, dtype=float)
    with state.lock:
        if state.fast is not None:
            with _solve_lock():
                values, report = state.fast.solve(state.base_costs - sigma)
            if values is None:
                raise SolverError(f"{solver} ended an OPSamp oracle call without a solution "
                                  f"({report.termination.name}).", report)
            return OracleAnswer(tuple(float(x) for x in values), report, report.certified_optimal)
        set_noise(state.model, sigma)
        answer = _read_answer(state.model, state.weights, solver, solve_kwargs, state.solver_object)
        if not state.fast_tried:
            from ..solvers import get_spec
            from ..solvers._highs_costs import HighsCostSession

            state.fast_tried = True
            if get_spec(solver).name == "highs":
                state.fast = HighsCostSession.attach(
                    state.solver_object, state.weights, solver=solver,
                    time_limit=solve_kwargs.get("time_limit"), abs_gap=solve_kwargs.get("abs_gap"),
                    options=solve_kwargs.get("options"))
                if state.fast is not None:
                    state.base_costs = state.fast.costs() + sigma
        return answer


def oracle_call(payload, weight_names: tuple, sigma, solver: str, solve_kwargs: dict,
                key: str | None = None, keep: bool = False) -> OracleAnswer:
    """One OPSamp oracle call, run in a worker (top level, so picklable).

    ``payload`` is the serialized model, or None when the pool's initializer
    installed it under ``key``.  Two paths give the same answer:

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
    the cold path returns (tests/test_opsamp.py checks it call by call).
    """
    if payload is None:
        payload = _PAYLOADS[key]
    if keep and key is not None:
        state = _persistent_state(key, payload, weight_names, sigma, solver)
        if state is not None:
            return _warm_call(state, sigma, solver, solve_kwargs)
    model, w = _transformed_copy(payload, weight_names, sigma)
    return _read_answer(model, w, solver, solve_kwargs)


def oracle_chunk(payload, weight_names, sigmas, solver, solve_kwargs, key=None, keep=False, stop=False):
    """Several oracle calls in one task (:func:`oracle_call` for each row of
    ``sigmas``, in order); with ``stop`` the task ends at its first
    uncertified call (the parent then releases nothing)."""
    out = []
    for sigma in sigmas:
        answer = oracle_call(payload, weight_names, sigma, solver, solve_kwargs, key, keep)
        out.append(answer)
        if stop and not answer.certified:
            break
    return out
