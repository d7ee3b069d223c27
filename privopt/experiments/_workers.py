"""The sweep's own worker processes, and stopping a sweep on SIGTERM.

A sweep that creates its process pool (:func:`sweep_pool`) makes every worker end
with the sweep: a worker asks the kernel for SIGKILL when its parent dies (Linux's
``prctl(PR_SET_PDEATHSIG)``; elsewhere a thread that watches the parent's pid), so a
sweep killed with SIGKILL leaves no worker running under pid 1.  The kernel sends
that signal when the *thread* that forked the worker ends; the pool forks its
workers from the thread that submits the runs, which runs the sweep to its end.

:func:`stop_on_sigterm` turns a SIGTERM (what ``timeout``, ``kill`` and batch
schedulers send) into a request the sweep's loop reads between runs: it records the
runs that have finished, stops the workers (:func:`stop_pool`), releases its lock and
raises :class:`SweepStopped`, a :class:`SystemExit` with code 128 + 15, so the
process ends non-zero as a process ended by SIGTERM does.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["SweepStopped", "StopRequest", "stop_on_sigterm", "sweep_pool", "stop_pool"]

#: prctl option: the signal a process gets when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


class SweepStopped(SystemExit):
    """The sweep stopped on a signal (SIGTERM) after recording its finished runs.
    ``code`` is 128 + the signal's number (the exit status of a shell's process
    ended by it); the message says what is recorded and how to resume."""

    def __init__(self, message: str, signum: int):
        super().__init__(128 + signum)
        self.message = message
        self.signum = signum

    def __str__(self) -> str:
        return self.message


@dataclass
class StopRequest:
    """Set by the signal handler of :func:`stop_on_sigterm`; read by the sweep's loop."""

    signum: int | None = None

    @property
    def requested(self) -> bool:
        return self.signum is not None


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[StopRequest]:
    """For the ``with`` block, a SIGTERM sets the yielded :class:`StopRequest` instead
    of ending the process at once.  Only in the main thread (where Python runs signal
    handlers) and only when SIGTERM has its default action: a handler the program
    installed itself is left alone (then the request is never set)."""
    request = StopRequest()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield request
        return
    owner = os.getpid()

    def handler(signum, frame):
        if os.getpid() != owner:   # a child forked meanwhile that has not reset it: end as by default
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        request.signum = signum

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield request
    finally:
        signal.signal(signal.SIGTERM, previous)


def _end_with_parent(parent: int | None) -> None:
    """Worker initializer: SIGTERM does its default (the sweep's handler was copied by
    fork), and the worker dies with its parent.  ``parent``: the pid the worker was
    forked from (None when a fork server forks it: that server ends with the sweep)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _set_parent_death_signal() and parent is not None:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="privopt-parent-watch").start()
    if parent is not None and os.getppid() != parent:   # the parent died before the line above
        os._exit(1)


def _set_parent_death_signal() -> bool:
    """Ask Linux for SIGKILL when the parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):   # pragma: no cover - no libc prctl
        return False


def _watch_parent(parent: int) -> None:  # pragma: no cover - where prctl is missing
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def sweep_pool(max_workers: int) -> cf.ProcessPoolExecutor:
    """A local process pool of ``max_workers`` whose workers end with the sweep."""
    method = multiprocessing.get_start_method()
    parent = None if method == "forkserver" else os.getpid()
    return cf.ProcessPoolExecutor(max_workers=max_workers, initializer=_end_with_parent, initargs=(parent,))


def stop_pool(pool: cf.ProcessPoolExecutor) -> None:
    """End the pool now: pending runs cancelled, running ones stopped (SIGTERM to
    each worker), the workers and the pool's thread joined."""
    terminate = getattr(pool, "terminate_workers", None)   # Python 3.14
    if callable(terminate):  # pragma: no cover - newer Python
        terminate()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=30)
    if manager is not None:
        manager.join(timeout=30)
