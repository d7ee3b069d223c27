"""Optional dependencies: import them or say which extra installs them."""

from __future__ import annotations

import importlib

__all__ = ["require", "EXTRAS"]

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


def require(module: str):
    """Import ``module`` (dotted names allowed) or raise an ImportError whose
    message names the extra: ``pip install privopt[learn]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra, what = EXTRAS.get(top, (None, "this feature"))
        hint = f"pip install privopt[{extra}]" if extra else f"pip install {top}"
        raise ImportError(f"{what} need(s) the optional package {top!r}, which is not installed: "
                          f"{hint}") from exc
