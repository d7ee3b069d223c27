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

#: name -> class, for running every private baseline through one interface.
PRIVATE_BASELINES = {
    "dpsgd": DPSGDLogisticRegression,
    "dpagd": DPAGDLogisticRegression,
    "noisy_sgd": NoisySGDClassifier,
    "objective_perturbation": ObjectivePerturbationLogisticRegression,
    "output_perturbation": OutputPerturbationLogisticRegression,
}
#: name -> class of the non-private reference points.
REFERENCE_BASELINES = {
    "nonprivate_lr": NonPrivateLogisticRegression,
    "majority": MajorityClassClassifier,
}
