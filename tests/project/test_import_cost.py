"""What a fresh process imports: ``import privopt`` loads no slow library it does not
use, and the default estimator neither at its import nor at its first fit.

Each check runs in a fresh interpreter (nothing imported before it) and reads
``sys.modules`` after the code.  Once Pyomo is imported, importing any part of
scipy makes Pyomo import scipy.stats, scipy.integrate and scipy.spatial (about a
second), so ``import privopt`` must import no scipy at all; numba imports scipy
when it loads, and privopt holds Pyomo's hook back then (``privopt._numba``).
The estimators implement scikit-learn's protocol without importing scikit-learn
(``privopt._sklearn``), which would import scipy.stats and pandas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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


def test_import_estimators_adds_no_sklearn_baselines_or_numba():
    """The estimators' module loads neither scikit-learn (nor with it scipy.stats and
    pandas) nor numba (loaded by the first fit that runs a kernel), the baselines (the
    warm start loads objective perturbation alone) or the audit."""
    loaded = _loaded_after("from privopt import PrivateHalfspaceClassifier",
                           ["sklearn", "scipy", "pandas", "numba", "privopt.baselines", "privopt.audit",
                            "matplotlib"])
    assert loaded == []
    code = ("from privopt.scoring import PrivateScoringSystem, ThresholdBinarizer\n"
            "from privopt.baselines import DPSGDLogisticRegression, ObjectivePerturbationLogisticRegression\n")
    assert _loaded_after(code, ["sklearn", "scipy", "pandas"]) == []


FIRST_FIT = """
import sys
import numpy as np
from privopt import PrivateHalfspaceClassifier
rng = np.random.default_rng(0)
X = (rng.random((400, 4)) < 0.5).astype(float)
y = np.where(X @ np.array([1.0, 1.0, -1.0, 0.5]) > 0.7, "yes", "no")
clf = PrivateHalfspaceClassifier(random_state=0).fit(X, y)     # the defaults: selection over W
assert set(clf.predict(X)) <= {"yes", "no"} and 0.0 <= clf.score(X, y) <= 1.0 and clf.n_features_in_ == 4
assert "privopt.baselines.perturbation" not in sys.modules
X = rng.random((2000, 4))
y = (X @ np.array([1.0, 1.0, -1.0, 0.5]) > 0.7).astype(int)
clf = PrivateHalfspaceClassifier(random_state=0, bounds=(0, 1), warm_start=True).fit(X, y)   # and a warm start
assert clf.score(X, y) > 0.5
"""


@pytest.mark.slow
def test_first_fit_loads_no_sklearn_scipy_stats_or_pandas():
    """A fresh process that imports the default estimator, fits it on a small table (its
    warm start, numba's kernels and the selection all run), predicts and scores loads
    neither scikit-learn nor scipy.stats, scipy.integrate, scipy.spatial or pandas:
    the estimator protocol and the input checks are privopt's own, and Pyomo's scipy
    hook is held back while numba (which imports scipy) loads.  A second fit with
    declared bounds runs the warm start (objective perturbation) too."""
    pytest.importorskip("numba")
    slow = ["sklearn", "scipy.stats", "scipy.integrate", "scipy.spatial", "pandas", "numba",
            "privopt.baselines.perturbation"]
    assert _loaded_after(FIRST_FIT, slow) == ["numba", "privopt.baselines.perturbation"]


def test_pyomo_still_resolves_scipy_after_numba():
    """Holding Pyomo's scipy hook back while numba loads leaves Pyomo's deferred scipy
    working: Pyomo's first use of it imports the submodules it counts on."""
    pytest.importorskip("numba")
    code = ("import sys\nimport privopt\nfrom privopt._numba import import_numba\nimport_numba()\n"
            "assert 'scipy' in sys.modules and 'scipy.stats' not in sys.modules\n"
            "from pyomo.common.dependencies import scipy, scipy_available\n"
            "assert bool(scipy_available) and scipy.sparse.coo_matrix is not None\n")
    assert _loaded_after(code, ["scipy.stats", "scipy.sparse"]) == ["scipy.stats", "scipy.sparse"]


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
