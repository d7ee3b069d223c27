"""Optional dependencies: import them or say which extra installs them; and the
slow-to-import libraries that only some paths use, imported on first use.

:func:`lazy_module` is the one accessor for the latter: ``stats =
lazy_module("scipy.stats")`` at a module's top costs nothing, and ``stats.norm``
imports scipy.stats at that first attribute access (0.4 to 0.8 s in a fresh
process), so ``import privopt`` does not pay for what its first call may never
use.  ``tests/project/test_import_cost.py`` checks which libraries a fresh
``import privopt`` loads."""

from __future__ import annotations

import importlib

__all__ = ["require", "require_installed", "lazy_module", "LazyModule", "EXTRAS"]

#: importable module -> (pip extra, what needs it)
EXTRAS = {
    "sklearn": ("learn", "privopt's estimators and baselines"),
    "dp_accounting": ("learn", "the DP-SGD / DP-AGD privacy accounting"),
    "dask": ("dask", "parallel OPSamp and experiment sweeps"),
    "distributed": ("dask", "parallel OPSamp and experiment sweeps"),
    "ray": ("ray", "OPSamp's oracle calls on a Ray cluster (executor='ray')"),
    "matplotlib": ("plot", "figures"),
    "pyscipopt": ("scip", "the SCIP solver"),
    "gurobipy": ("gurobi", "the Gurobi solver"),
}


def _missing(module: str) -> ImportError:
    """The ImportError that names the extra installing ``module``: ``pip install privopt[learn]``."""
    top = module.split(".")[0]
    extra, what = EXTRAS.get(top, (None, "this feature"))
    hint = f"pip install privopt[{extra}]" if extra else f"pip install {top}"
    return ImportError(f"{what} need(s) the optional package {top!r}, which is not installed: {hint}")


def require(module: str):
    """Import ``module`` (dotted names allowed) or raise an ImportError whose
    message names the extra: ``pip install privopt[learn]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _missing(module) from exc


def require_installed(module: str) -> None:
    """Raise :func:`require`'s ImportError unless the top-level package of ``module``
    is installed, WITHOUT importing it: the estimators need scikit-learn's extra
    installed but load scikit-learn only when the user does (it costs about a
    second of CPU in a fresh process)."""
    import importlib.util

    top = module.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise _missing(module)


class LazyModule:
    """The module ``name``, imported at the first access to one of its attributes
    (later accesses read it from ``sys.modules``: a dictionary look-up).  Thread
    safe: Python's import lock serializes a first import from several threads."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> LazyModule:
    """``name`` (dotted), imported on first attribute access (see the module docstring)."""
    return LazyModule(name)
