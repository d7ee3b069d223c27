"""The sweep lock: one sweep at a time writes an out folder.

A sweep reads ``results.csv`` to learn which runs are done and appends the runs it
finishes.  Two sweeps on one folder would both find the same runs missing and both
record them, so :func:`run_experiment <privopt.experiments.run_experiment>` holds an
exclusive lock on ``OUT/.privopt-sweep.lock`` from before it reads the file until its
summary is written; a second sweep on the folder refuses at once with
:class:`SweepLockedError`, naming the folder and the holder (pid, host, start time).

The lock is an operating-system lock on the open file (``fcntl.flock``; ``msvcrt.locking``
on Windows), not the file's existence: it is released when the sweep ends, however it
ends (an exception, Ctrl-C, a killed process), so a crashed sweep never leaves a stale
lock behind.  A ``flock`` lock belongs to the open file, which a forked child shares:
a pool worker forked during the sweep would keep it held after a ``kill -9`` of the
sweep.  So no child keeps it: every process forked while the lock is held closes its
copy of the descriptor at once (an ``os.register_at_fork`` hook; closing a copy never
releases the lock, and ``exec`` closes it anyway, as Python opens it non-inheritable).
The lock then lives exactly as long as the sweep's own process.  The file itself stays
(empty when no sweep holds it); removing it while a sweep runs would let a second sweep
in, so leave it be.  On a network file system the
lock holds across machines only where the file system supports ``flock`` (NFS v4 does).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import socket
import sys
from collections.abc import Iterator

__all__ = ["LOCK_NAME", "SweepLockedError", "sweep_lock"]

#: The lock file's name in the out folder.
LOCK_NAME = ".privopt-sweep.lock"
_HOLDER_AT = 1   # the holder's line starts after the byte that Windows locks
#: Descriptors of the locks this process holds: a forked child closes its copies.
_HELD: set[int] = set()


def _close_in_child() -> None:
    """In a child just forked: close the copies of the lock descriptors, so that the
    lock goes with the sweep's process alone (a child never unlocks: closing a copy
    leaves the lock to the parent's descriptor)."""
    for fd in _HELD:
        try:
            os.close(fd)
        except OSError:   # pragma: no cover - already closed
            pass
    _HELD.clear()


if hasattr(os, "register_at_fork"):   # POSIX; Windows does not fork
    os.register_at_fork(after_in_child=_close_in_child)


class SweepLockedError(RuntimeError):
    """Another sweep holds the out folder (its pid, host and start time are in the message)."""


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - not run on the project's CI
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(_HOLDER_AT)
            text = fh.read(500).decode(errors="replace").strip()
    except OSError:
        text = ""
    return text or "a process that has not written its pid yet"


@contextlib.contextmanager
def sweep_lock(out: str) -> Iterator[str]:
    """Hold the sweep lock of folder ``out`` (which must exist) for the ``with`` block;
    raise :class:`SweepLockedError` at once when another sweep holds it."""
    path = os.path.join(out, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    owner = os.getpid()
    _HELD.add(fd)
    try:
        if not _try_lock(fd):
            raise SweepLockedError(
                f"{out} is in use by another sweep ({_holder(path)}; lock file {path}). Two sweeps on one "
                "folder would record the same runs twice: wait until that sweep ends and run this one "
                "again (it resumes, reusing the runs that sweep finished), or give another out folder.")
        holder = (f"pid {os.getpid()} on {socket.gethostname()}, started "
                  f"{_dt.datetime.now().isoformat(timespec='seconds')}")
        os.ftruncate(fd, _HOLDER_AT)
        os.lseek(fd, _HOLDER_AT, os.SEEK_SET)
        os.write(fd, (holder + "\n").encode())
        try:
            yield holder
        finally:
            if os.getpid() == owner:   # not in a forked child, which closed its copy
                os.ftruncate(fd, _HOLDER_AT)
                _unlock(fd)
    finally:
        if os.getpid() == owner:
            _HELD.discard(fd)
            os.close(fd)
