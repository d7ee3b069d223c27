"""Compiled kernels that fall back to numpy without numba (the ``fast`` extra).

Every kernel is compiled with ``cache=True`` and compiled once per machine,
not once per process: the first process that uses a kernel writes it to
numba's on-disk cache and later processes load it (about 0.5 s for all of
them, against 2 to 25 s to compile).  For the cache to hit, a kernel must be
a module-level function: numba keys a cached function by its bytecode and the
pickled contents of its closure, and a kernel that closes over another
compiled function (a dispatcher, which pickles with an identifier drawn
afresh in each process) misses in every new process.  Kernels that call each
other therefore live at module level (``privopt/search/_pattern_kernels.py``)
and reach each other as globals.

Where the cache lives: numba's own choice, first that is writable: the
directory named by ``NUMBA_CACHE_DIR`` when it is set; ``__pycache__`` next
to the kernel's module (``privopt/search/__pycache__/*.nbi, *.nbc``); numba's
user-wide cache directory (``~/.cache/numba`` on Linux).  When none of them is
writable numba would refuse to build a cached kernel; privopt then sets
``NUMBA_CACHE_DIR`` to ``<privopt's cache directory>/numba``
(:func:`privopt._cache.cache_dir`), or to a temporary directory of the process
(compiled again in the next one), so that a fit never fails for lack of a
cache.  The cache is keyed by the kernel's source, the argument types, numba's
version and the CPU, so it never serves a stale kernel.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

from ._cache import cache_dir

__all__ = ["lazy_kernel"]


def _writable_dir(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _fallback_cache_dir(numba) -> str:
    """Point numba's cache at privopt's cache directory (or a temporary one) and return it."""
    path = os.path.join(cache_dir(), "numba")
    if not _writable_dir(path):
        path = tempfile.mkdtemp(prefix="privopt-numba-")
    os.environ["NUMBA_CACHE_DIR"] = path   # numba re-reads its configuration from the environment
    numba.config.CACHE_DIR = path
    return path


def lazy_kernel(build: Callable) -> Callable:
    """A getter for a kernel compiled on first use: ``build(numba)`` returns the
    compiled function; the getter returns it, or None when numba is not
    installed (the caller then takes its numpy path).  When numba finds no
    writable cache location, the build is retried with ``NUMBA_CACHE_DIR``
    set as the module docstring says."""
    state: dict = {}

    def get():
        if "kernel" not in state:
            try:
                import numba
            except ImportError:
                state["kernel"] = None
            else:
                try:
                    state["kernel"] = build(numba)
                except RuntimeError as exc:   # "cannot cache function ...: no locator available"
                    if "cannot cache" not in str(exc):
                        raise
                    _fallback_cache_dir(numba)
                    state["kernel"] = build(numba)
        return state["kernel"]

    return get
