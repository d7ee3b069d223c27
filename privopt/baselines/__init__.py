"""Convex private baselines, scikit-learn style, to run side by side with
privopt's objective-perturbation mechanisms on the same data.

Private (each docstring cites its paper and states its accounting):

- :class:`DPSGDLogisticRegression` -- DP-SGD [ACG+16, BST14], gradients on a
  grid with exact discrete Gaussian noise (:class:`GradientGrid`), PLD accountant
  of ``dp_accounting``, noise multiplier calibrated to (epsilon, delta);
  :func:`dpsgd_grid_search` runs the paper's (non-private!) hyperparameter
  search.
- :class:`DPAGDLogisticRegression` -- DP-AGD [LK18], zCDP, its gradients on
  the same kind of grid.
- :class:`NoisySGDClassifier` -- noisy SGD for non-smooth convex losses [AMU20].
- :class:`ObjectivePerturbationLogisticRegression` -- [CMS11] Alg. 2, [KST12].
- :class:`OutputPerturbationLogisticRegression` -- [CMS11] Alg. 1.

Not private (reference points): :class:`NonPrivateLogisticRegression`,
:class:`MajorityClassClassifier`.

All private estimators scale features with PUBLIC ``bounds`` (clip, map to
[-1, 1]), clip rows to ``data_norm`` and work with ``||z|| <= 1``; without
bounds they take them from the data and emit
:class:`~privopt.exceptions.PrivacyLeakWarning`.  Every noise scale is
computed in :mod:`privopt.baselines._accounting`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # what the names below are; at run time each is imported at its first use
    from . import _accounting as accounting
    from ._gradient_grid import GradientGrid, gradient_grid
    from .dpagd import DPAGDLogisticRegression
    from .dpsgd import DPSGDLogisticRegression, dpsgd_batch_units, dpsgd_update
    from .grid_search import (
        DEFAULT_DPSGD_GRID,
        GridSearchResult,
        dpsgd_grid_search,
        private_grid_search,
    )
    from .noisy_sgd import NoisySGDClassifier, noisy_sgd_batch_units, noisy_sgd_update
    from .perturbation import (
        ObjectivePerturbationLogisticRegression,
        OutputPerturbationLogisticRegression,
    )
    from .reference import MajorityClassClassifier, NonPrivateLogisticRegression

    #: name -> class, for running every private baseline through one interface.
    PRIVATE_BASELINES: dict[str, type]
    #: name -> class of the non-private reference points.
    REFERENCE_BASELINES: dict[str, type]

#: public name -> the submodule that defines it.  A submodule is imported at the first use of
#: one of its names (PEP 562), so the default estimator's warm start, which needs objective
#: perturbation alone, does not import scikit-learn's LogisticRegression and model selection
#: (the reference baselines and the grid search) in a fresh process.
_HOMES = {
    "accounting": "._accounting",
    "GradientGrid": "._gradient_grid", "gradient_grid": "._gradient_grid",
    "DPAGDLogisticRegression": ".dpagd",
    "DPSGDLogisticRegression": ".dpsgd", "dpsgd_batch_units": ".dpsgd", "dpsgd_update": ".dpsgd",
    "DEFAULT_DPSGD_GRID": ".grid_search", "GridSearchResult": ".grid_search", "dpsgd_grid_search": ".grid_search",
    "private_grid_search": ".grid_search",
    "NoisySGDClassifier": ".noisy_sgd", "noisy_sgd_batch_units": ".noisy_sgd", "noisy_sgd_update": ".noisy_sgd",
    "ObjectivePerturbationLogisticRegression": ".perturbation",
    "OutputPerturbationLogisticRegression": ".perturbation",
    "MajorityClassClassifier": ".reference", "NonPrivateLogisticRegression": ".reference",
}
#: name -> class name of the private baselines (``PRIVATE_BASELINES``).
_PRIVATE = {
    "dpsgd": "DPSGDLogisticRegression",
    "dpagd": "DPAGDLogisticRegression",
    "noisy_sgd": "NoisySGDClassifier",
    "objective_perturbation": "ObjectivePerturbationLogisticRegression",
    "output_perturbation": "OutputPerturbationLogisticRegression",
}
#: name -> class name of the non-private reference points (``REFERENCE_BASELINES``).
_REFERENCE = {
    "nonprivate_lr": "NonPrivateLogisticRegression",
    "majority": "MajorityClassClassifier",
}

__all__ = [
    "GradientGrid",
    "gradient_grid",
    "dpsgd_batch_units",
    "noisy_sgd_batch_units",
    "noisy_sgd_update",
    "dpsgd_update",
    "DPSGDLogisticRegression",
    "DPAGDLogisticRegression",
    "NoisySGDClassifier",
    "ObjectivePerturbationLogisticRegression",
    "OutputPerturbationLogisticRegression",
    "NonPrivateLogisticRegression",
    "MajorityClassClassifier",
    "dpsgd_grid_search",
    "private_grid_search",
    "GridSearchResult",
    "DEFAULT_DPSGD_GRID",
    "accounting",
    "PRIVATE_BASELINES",
    "REFERENCE_BASELINES",
]


def __getattr__(name: str):
    """A public name, its submodule imported on first use (then kept as a global)."""
    if name in _HOMES:
        module = importlib.import_module(_HOMES[name], __name__)
        value = module if name == "accounting" else getattr(module, name)
    elif name == "PRIVATE_BASELINES":
        value = {key: __getattr__(cls) for key, cls in _PRIVATE.items()}
    elif name == "REFERENCE_BASELINES":
        value = {key: __getattr__(cls) for key, cls in _REFERENCE.items()}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
