"""Compiled kernels that fall back to numpy without numba (the ``fast`` extra).

Every kernel is compiled with ``cache=True`` and compiled once per machine,
not once per process: the first process that uses a kernel writes it to
numba's on-disk cache and later processes load it (about 0.5 s for all of
them, against 2 to 25 s to compile).  For the cache to hit, a kernel must be
a module-level function: numba keys a cached function by its bytecode and the
pickled contents of its closure, and a kernel that closes over another
compiled function (a dispatcher, which pickles with an identifier drawn
afresh in each process) misses in every new process.  Kernels that call each
other therefore live at module level (``privopt/search/_pattern_kernels.py``,
``privopt/search/_argmax_kernels.py``) and reach each other as globals.

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

numba imports scipy when it loads (to check its version).  Pyomo, imported by
``import privopt``, registers an import hook that, the moment anyone imports
scipy, also imports scipy.stats, scipy.integrate, scipy.sparse and
scipy.spatial (about 0.6 s of CPU) for Pyomo's own later use.
:func:`import_numba` holds that hook back while numba loads: Pyomo still
imports those modules, at its first use of scipy (its deferred import resolves
then), and a fit that never needs them does not pay for them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable

from ._cache import cache_dir

__all__ = ["lazy_kernel", "import_numba"]


@contextlib.contextmanager
def _pyomo_scipy_hook_held():
    """Pyomo's callback on the import of scipy (module docstring) taken out of its
    import hook for the duration, then put back.  Pyomo's deferred ``scipy`` stays
    unresolved, and resolves (with the callback) when Pyomo first uses it.  Nothing
    is done when Pyomo is not loaded, scipy is loaded already, or Pyomo keeps its
    hook elsewhere than ``pyomo.common.dependencies.DeferredImportCallbackFinder``."""
    finder = getattr(sys.modules.get("pyomo.common.dependencies"), "DeferredImportCallbackFinder", None)
    callbacks = getattr(finder, "_callbacks", None)
    held = callbacks.pop("scipy", None) if isinstance(callbacks, dict) and "scipy" not in sys.modules else None
    try:
        yield
    finally:
        if held is not None:
            callbacks.setdefault("scipy", []).extend(held)


def import_numba():
    """``import numba``, without letting Pyomo's scipy hook fire (module docstring);
    ImportError when numba is not installed."""
    with _pyomo_scipy_hook_held():
        import numba
    return numba


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
                numba = import_numba()
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
