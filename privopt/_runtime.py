"""Executors: where privopt's parallel work runs (process and thread pools, dask, Ray).

Mechanisms that run many independent tasks (OPSamp's oracle calls, the top-down
samplers' shards, the branch and bound of OPDisc's exact oracle) take an
``executor`` argument; this module is the one place that knows what one is:

* :func:`check_executor` accepts ``None`` (a local process pool, created
  later), any :class:`~concurrent.futures.Executor` (process or thread pool,
  ``dask.distributed.Client.get_executor()``, ...), a ``dask.distributed``
  ``Client`` itself (its ``get_executor()`` is used), a pool with the
  ``multiprocessing.Pool`` interface (the standard library's, or Ray's
  ``ray.util.multiprocessing.Pool``, which runs on a Ray cluster), seen
  through :class:`PoolExecutor`, or the string ``"ray"`` (a Ray pool created
  by :func:`ray_executor` for the run);
* :func:`default_executor` sizes a :class:`~concurrent.futures.ProcessPoolExecutor`
  to the CPUs this process may use (:func:`usable_cpus`), capped by the number of tasks;
* :func:`resolve_executor`: ``"local"`` (this process), None (this process for
  short work, else a local pool), or any executor above;
* :func:`dumps_model` serializes a Pyomo model once (``pickle``, or
  ``cloudpickle`` when the model holds lambdas, as models built with
  ``rule=lambda ...`` do);
* :func:`share` sends a large argument to a dask cluster once (``scatter``,
  broadcast) instead of once per task;
* :func:`run_ordered` submits the tasks (at most ``max_in_flight`` pending at
  a time), shows a progress bar over completed tasks, returns the results in
  submission order and stops early (cancelling what has not started) when a
  result is fatal or a task raises.

It sits below every layer that runs parallel work and imports none of them.
"""

from __future__ import annotations

import functools
import multiprocessing
import multiprocessing.pool
import os
import pickle
import threading
import time
import weakref
from concurrent.futures import FIRST_COMPLETED, Executor, Future, InvalidStateError, ProcessPoolExecutor, wait
from dataclasses import dataclass

from ._limits import LOCAL_SECONDS
from ._optional import require
from ._progress import progress_bar
from .exceptions import ModelError, ParameterTypeError, WorkerLostError

__all__ = ["RAY", "LOCAL", "is_local", "PoolExecutor", "check_executor", "ray_executor", "usable_cpus",
           "kernel_threads", "map_on_kernel_threads", "default_executor", "worker_count", "share", "dumps_model",
           "run_ordered", "resolve_executor", "THREAD_LIMIT_VARIABLES"]

#: ``executor="ray"``: a Ray pool created for the run (see :func:`ray_executor`).
RAY = "ray"


#: How often a :class:`PoolExecutor` with tasks pending looks at its pool's worker processes.
WORKER_POLL_SECONDS = 0.2


def _settle(fut: Future, value=None, error=None) -> None:
    """Give ``fut`` its result or exception unless it has one already (a lost
    worker's error may come first; the pool's result thread must never raise)."""
    try:
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)
    except InvalidStateError:
        pass


def _set_result(fut: Future, value) -> None:
    _settle(fut, value)


def _set_exception(fut: Future, error) -> None:
    _settle(fut, error=error)


@dataclass(frozen=True)
class WorkerDeath:
    """A worker process of a pool that ended while tasks were pending."""

    pid: int | None
    exitcode: int


class PoolExecutor(Executor):
    """A :class:`concurrent.futures.Executor` view of a pool with the
    ``multiprocessing.Pool`` interface (``apply_async`` with ``callback`` and
    ``error_callback``): the standard library's ``multiprocessing.Pool`` or
    Ray's ``ray.util.multiprocessing.Pool`` (Ray's documented drop-in for it,
    whose workers are actors on a Ray cluster).  ``owned``: ``shutdown``
    terminates the pool (privopt created it); otherwise the pool is left
    running for its owner.

    Liveness.  A ``multiprocessing.Pool`` whose worker dies (SIGKILL, the
    out-of-memory killer, ``os._exit``) replaces the worker but never calls
    back for the task it held, so waiting on it would last for ever.  While
    tasks are pending, a watcher thread looks at the pool's worker processes
    every :data:`WORKER_POLL_SECONDS` (``pool._pool``, the only place a
    ``multiprocessing.Pool`` shows them; a pool without it, such as Ray's, is
    not watched: Ray reports a dead actor itself).  A worker seen alive that
    then ends with a non-zero exit code, or with any exit code when the pool
    does not recycle its workers (``maxtasksperchild=None``), fails every
    pending task with :class:`~privopt.exceptions.WorkerLostError`: the pool
    cannot tell which task was lost, so none of them is trusted (as a
    :class:`~concurrent.futures.ProcessPoolExecutor` does).

    The workers are noted when privopt is handed the pool (:func:`check_executor`,
    which every public function runs on its ``executor`` argument before any
    work), in a record kept per pool across calls (:class:`_PoolWorkers`), not
    when the first task is submitted: an idle worker of a ``multiprocessing.Pool``
    waits for its next task holding the pool's queue lock, so one killed before
    the first task leaves the pool deadlocked, with its replacement alive and
    no further death to see.  A worker noted at any earlier hand-over of the
    same pool that has since ended is reported the same way at the next wait
    (once).  Not covered: a worker that exits with status 0 from a pool with
    ``maxtasksperchild``, or a pool whose worker died before privopt was ever
    handed it (no process privopt saw alive ends)."""

    def __init__(self, pool, *, owned: bool = False):
        self._pool = pool
        self._owned = owned
        n = getattr(pool, "_processes", None)
        self._max_workers = n if isinstance(n, int) and n > 0 else None
        self._lock = threading.Lock()
        self._pending: set[Future] = set()
        self._watcher: threading.Thread | None = None
        self._workers = _pool_workers(pool)     # noted now: privopt is handed the pool

    def submit(self, fn, /, *args, **kwargs):
        fut: Future = Future()
        fut.set_running_or_notify_cancel()
        with self._lock:
            self._pending.add(fut)
            self._watch_workers()
        fut.add_done_callback(self._forget)
        self._pool.apply_async(fn, args, kwargs, callback=functools.partial(_set_result, fut),
                               error_callback=functools.partial(_set_exception, fut))
        return fut

    def shutdown(self, wait=True, *, cancel_futures=False):
        if self._owned:
            self._pool.terminate()

    def _forget(self, fut: Future) -> None:
        with self._lock:
            self._pending.discard(fut)

    def _watch_workers(self) -> None:
        """Start the watcher thread (under ``self._lock``) when the pool shows its workers."""
        if self._watcher is not None or self._workers is None:
            return
        self._workers.note()
        self._watcher = threading.Thread(target=self._watch, name="privopt-pool-liveness", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        """Until no task is pending: look for a dead worker; fail every pending task at one."""
        while True:
            time.sleep(WORKER_POLL_SECONDS)
            with self._lock:
                if not self._pending:
                    self._watcher = None
                    return
                death = self._workers.dead() if self._workers is not None else None
                pending = list(self._pending) if death is not None else []
            if death is not None:
                error = WorkerLostError(self._lost_message(death, len(pending)))
                for fut in pending:
                    _set_exception(fut, error)

    def _lost_message(self, death: WorkerDeath, n_pending: int) -> str:
        how = (f"killed by signal {-death.exitcode}" if death.exitcode < 0
               else f"exit code {death.exitcode}")
        kind = type(self._pool)
        name = ("multiprocessing.Pool" if isinstance(self._pool, multiprocessing.pool.Pool)
                else f"{kind.__module__}.{kind.__qualname__}")
        return (f"executor: worker process {death.pid} of the {name} ended ({how}) while privopt "
                f"waited for {n_pending} task(s); such a pool never answers for the task a dead worker "
                "held, so privopt stopped instead of waiting for ever, and released nothing (no result "
                "of this call was used). The usual cause is the out-of-memory killer or a signal: check "
                "the workers' memory, then run again on a new pool (this one may not recover: a worker killed "
                "while it waited for a task takes the pool's queue lock with it, and then even the pool's "
                "terminate() blocks, so end its worker processes), or pass "
                "executor=None (privopt's own process pool) or a concurrent.futures.ProcessPoolExecutor, "
                "which report a lost worker themselves.")


class _PoolWorkers:
    """The worker processes of one ``multiprocessing.Pool`` (its ``_pool`` list)
    that privopt has seen alive since it was first handed the pool, shared by
    every :class:`PoolExecutor` of that pool (a call checks its executor more
    than once, and a user may pass the same pool to many calls)."""

    def __init__(self, pool):
        try:
            self._pool = weakref.ref(pool)      # the per-pool record must not keep the pool alive
        except TypeError:
            self._pool = functools.partial(_same, pool)
        self._lock = threading.Lock()
        self._seen: dict[int, object] = {}      # id -> worker process seen alive

    def note(self) -> None:
        """Remember the pool's worker processes that are alive now (replacements included)."""
        pool = self._pool()
        procs = list(getattr(pool, "_pool", None) or ())
        with self._lock:
            for proc in procs:
                if id(proc) not in self._seen and _exitcode(proc) is None:
                    self._seen[id(proc)] = proc

    def dead(self) -> WorkerDeath | None:
        """A worker seen alive that has ended abnormally (then forgotten: reported once), or None.
        Abnormally: a non-zero exit code, or any exit when the pool does not recycle its
        workers (``maxtasksperchild=None``)."""
        self.note()
        recycles = bool(getattr(self._pool(), "_maxtasksperchild", None))
        with self._lock:
            for key, proc in list(self._seen.items()):
                code = _exitcode(proc)
                if code is None:
                    continue
                del self._seen[key]
                if code != 0 or not recycles:
                    return WorkerDeath(getattr(proc, "pid", None), code)
        return None


_HANDED_LOCK = threading.Lock()
#: pool -> its :class:`_PoolWorkers`, for every pool privopt was handed (freed with the pool).
_HANDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pool_workers(pool) -> _PoolWorkers | None:
    """The record of ``pool``'s workers, made at the first hand-over, with the workers
    alive now noted; None for a pool that does not show its worker processes (Ray's)."""
    if not isinstance(getattr(pool, "_pool", None), list):
        return None
    with _HANDED_LOCK:
        try:
            record = _HANDED.get(pool)
            if record is None:
                record = _HANDED[pool] = _PoolWorkers(pool)
        except TypeError:       # not weakly referable or not hashable: a record for this executor only
            record = _PoolWorkers(pool)
    record.note()
    return record


def _same(obj):
    return obj


def _exitcode(proc) -> int | None:
    """A worker process's exit code (None while it runs, or when it cannot be read)."""
    try:
        code = proc.exitcode
    except (ValueError, AttributeError, OSError):     # closed, or not a process
        return None
    return code if isinstance(code, int) else None


def _is_pool(obj) -> bool:
    return callable(getattr(obj, "apply_async", None)) and callable(getattr(obj, "terminate", None))


def check_executor(executor):
    """``None``, ``"ray"``, an Executor, something with ``get_executor()`` (a
    dask Client), or a ``multiprocessing.Pool``-like pool (wrapped in
    :class:`PoolExecutor`)."""
    if executor is None or isinstance(executor, Executor):
        return executor
    if isinstance(executor, str) and executor.strip().lower() == RAY:

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


#: Environment variables that cap the threads of a compiled kernel, as for numba's own
#: parallel loops and OpenMP (joblib's workers set them to share the CPUs out).
THREAD_LIMIT_VARIABLES = ("PRIVOPT_NUM_THREADS", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS")


def kernel_threads() -> int:
    """Threads a compiled kernel of this process may run at once: the usable CPUs, capped
    by the first of :data:`THREAD_LIMIT_VARIABLES` that is set to a positive integer; 1 in
    a child process (a worker of a pool is already one of several)."""
    if multiprocessing.parent_process() is not None:
        return 1
    for name in THREAD_LIMIT_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return min(usable_cpus(), int(value))
    return usable_cpus()


_POOL_LOCK = threading.Lock()
_POOL: list = []      # [(workers, the pool)] once made; emptied at every fork
_RETIRED: list = []   # pools a larger one replaced, whose threads may still be ending; emptied at every fork


def map_on_kernel_threads(fn, items) -> list:
    """``[fn(x) for x in items]``, the calls run at once on the kernel threads (the
    compiled kernels release the GIL): one thread pool for the process, made when first
    needed with at least :func:`kernel_threads` workers, larger if ``items`` asks.

    The pool does not outlive a fork (an ``os.register_at_fork`` hook): its idle threads are
    ended before the fork, after the kernels running on them finish, and the next call of
    either process makes a new pool.  A child forked with a pool inherited the pool's queue
    but none of its threads, so its first call would wait forever; and Python 3.12 and
    later warn when a process forks with threads alive."""
    items = list(items)
    if len(items) <= 1:
        return [fn(x) for x in items]
    with _POOL_LOCK:       # submitted at once: a fork's hook sees every call whole, or none of it
        futures = [_kernel_pool(len(items)).submit(fn, x) for x in items]
    return [f.result() for f in futures]


def _kernel_pool(threads: int):
    """The process's kernel thread pool, at least ``threads`` workers (``_POOL_LOCK`` held);
    a larger one replaces a smaller, which ends once its queued calls are done (kept among
    the retired pools until a fork waits for its threads)."""
    from concurrent.futures import ThreadPoolExecutor

    if not _POOL or _POOL[-1][0] < threads:
        for _, old in _POOL:
            old.shutdown(wait=False)
            _RETIRED.append(old)
        size = max(threads, kernel_threads())
        _POOL[:] = [(size, ThreadPoolExecutor(max_workers=size, thread_name_prefix="privopt-kernel"))]
    return _POOL[-1][1]


def _end_pool_before_fork() -> None:
    """At-fork hook (before): hold the pool's lock through the fork and end the threads of the
    pool and of every pool it replaced (a replaced pool's threads end on their own, but may
    not have yet)."""
    _POOL_LOCK.acquire()
    for pool in [p for _, p in _POOL] + _RETIRED:
        pool.shutdown(wait=True)
    _POOL.clear()
    _RETIRED.clear()


if hasattr(os, "register_at_fork"):   # POSIX; Windows does not fork
    os.register_at_fork(before=_end_pool_before_fork, after_in_parent=_POOL_LOCK.release,
                        after_in_child=_POOL_LOCK.release)


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


#: ``executor="local"``: run in this process, whatever the predicted time.
LOCAL = "local"


def is_local(executor) -> bool:
    """Whether ``executor`` is the string ``"local"`` (any case, spaces ignored)."""
    return isinstance(executor, str) and executor.strip().lower() == LOCAL


def resolve_executor(executor, predicted: float, n_tasks: int, local_seconds: float = LOCAL_SECONDS):
    """``(executor or None for in-process, owned)``: ``"local"`` runs the
    tasks here; None runs them here when the predicted time is below
    ``local_seconds`` (or there is one task), else on a local process pool;
    otherwise any executor :func:`check_executor` accepts.  ``owned``: the
    caller made the pool for this run and shuts it down."""
    if is_local(executor):
        return None, False
    ex = check_executor(executor)
    if ex is None:
        if predicted < local_seconds or n_tasks < 2:
            return None, False
        return default_executor(n_tasks), True
    if ex == RAY:
        return ray_executor(n_tasks), True
    return ex, False
