"""What a fresh process imports: ``import privopt`` loads no slow library it does not
use, and the default estimator's module none beyond scikit-learn's own.

Each check runs in a fresh interpreter (nothing imported before it) and reads
``sys.modules`` after the import.  Once Pyomo is imported, importing any part of
scipy makes Pyomo import scipy.stats, scipy.integrate and scipy.spatial (about a
second), so ``import privopt`` must import no scipy at all; scikit-learn imports
scipy.stats and pandas itself (``sklearn.utils.fixes``), so the estimators' module
is checked only for what privopt adds to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _loaded_after(code: str, modules: list[str]) -> list[str]:
    """The modules of ``modules`` that are in ``sys.modules`` after ``code`` runs in a fresh process."""
    prog = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env, timeout=300,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_privopt_loads_no_scipy_pandas_sklearn_or_numba():
    slow = ["scipy", "scipy.stats", "scipy.integrate", "scipy.optimize", "scipy.special", "scipy.sparse",
            "pandas", "sklearn", "numba", "matplotlib", "dask", "privopt.audit", "privopt.baselines",
            "privopt.estimators"]
    assert _loaded_after("import privopt", slow) == []


def test_import_estimators_adds_no_baselines_or_numba():
    """The estimators' module loads scikit-learn (and with it scipy.stats and pandas),
    but not numba (loaded by the first fit that runs a kernel), the baselines (the warm
    start loads objective perturbation alone), scikit-learn's models or the audit."""
    loaded = _loaded_after("from privopt import PrivateHalfspaceClassifier",
                           ["sklearn.base", "numba", "privopt.baselines", "sklearn.linear_model",
                            "sklearn.model_selection", "privopt.audit", "matplotlib"])
    assert loaded == ["sklearn.base"]


def test_baselines_load_their_submodules_at_first_use():
    """``privopt.baselines`` imports a baseline's module at the first use of one of its
    names: objective perturbation (the default estimator's warm start) without the
    reference baselines' scikit-learn LogisticRegression or the grid search's model
    selection; every public name still resolves, to the class its submodule defines."""
    code = ("import privopt.baselines as b\n"
            "from privopt.baselines import ObjectivePerturbationLogisticRegression as O\n"
            "from privopt.baselines.perturbation import ObjectivePerturbationLogisticRegression\n"
            "assert O is ObjectivePerturbationLogisticRegression\n")
    assert _loaded_after(code, ["privopt.baselines.perturbation", "privopt.baselines.reference",
                                "privopt.baselines.grid_search", "sklearn.linear_model",
                                "sklearn.model_selection"]) == ["privopt.baselines.perturbation"]
    code = ("import privopt.baselines as b\n"
            "names = [getattr(b, name) for name in b.__all__]\n"
            "assert b.PRIVATE_BASELINES['dpsgd'] is b.DPSGDLogisticRegression\n"
            "assert b.REFERENCE_BASELINES['majority'].__module__ == 'privopt.baselines.reference'\n"
            "assert b.accounting.__name__ == 'privopt.baselines._accounting'\n")
    assert _loaded_after(code, ["privopt.baselines.reference", "privopt.baselines.grid_search"]) == [
        "privopt.baselines.reference", "privopt.baselines.grid_search"]


def test_calibration_loads_scipy_at_first_use():
    """A calibration that needs scipy imports it when called (here scipy.integrate's
    quadrature, scipy.optimize's root finder and scipy.stats' normal tail), not before."""
    code = ("import math, privopt, sys\n"
            "assert 'scipy' not in sys.modules\n"
            "from privopt.calibration import opdisc_paper_argument_holds, opdisc_sigma_proven\n"
            "assert 'scipy' not in sys.modules\n"
            "s = opdisc_sigma_proven(1.0, 1e-5, 1.0, 1.0, 1.0, 3)\n"
            "assert math.isfinite(s) and s > 0 and opdisc_paper_argument_holds(1.0, 1e-5)\n")
    assert _loaded_after(code, ["scipy.stats", "scipy.integrate", "scipy.optimize"]) == [
        "scipy.stats", "scipy.integrate", "scipy.optimize"]
