"""privopt: differentially private optimization as a Pyomo plugin.

Pipeline: model (``privopt.models``) -> perturbation (the
``privopt.objective_perturbation`` transformation) -> oracle
(``privopt.solvers``, ``privopt.oracle``) -> output step
(``privopt.mechanisms``) -> result and accounting (``PrivateResult``,
``privopt.calibration``).
"""

from ._version import __version__
from . import exceptions
from .exceptions import (BudgetExceededError, LossContractWarning, PrivacyLeakWarning, PrivoptError,
                         UnprovenGuaranteeWarning)
from . import calibration, models, perturbation, scoring, solvers  # registers the transformation
from .decorators import private
from .models import RecordModel
from .mechanisms import exponential_mechanism, mixture_selection, opdisc, opsamp, rspm
from .result import PrivateResult
from .ledger import PrivacyLedger
from .solvers import SolveOptions

__all__ = [
    "__version__",
    "exceptions",
    "PrivacyLeakWarning",
    "UnprovenGuaranteeWarning",
    "LossContractWarning",
    "PrivoptError",
    "PrivateResult",
    "PrivacyLedger",
    "BudgetExceededError",
    "SolveOptions",
    "audit",
    "calibration",
    "models",
    "perturbation",
    "solvers",
    "opdisc",
    "opsamp",
    "rspm",
    "exponential_mechanism",
    "mixture_selection",
    "private",
    "RecordModel",
    "scoring",
]


def __getattr__(name):
    # scikit-learn is an optional extra: import the estimator on first use.
    if name in ("PrivateHalfspaceClassifier", "ZeroOneHalfspaceClassifier"):
        from . import estimators

        return getattr(estimators, name)
    if name == "PrivateScoringSystem":
        from .scoring import PrivateScoringSystem    # loaded on first use by privopt.scoring

        return PrivateScoringSystem
    if name == "audit":  # scipy.stats is slow to import: load the audit on first use
        import importlib

        return importlib.import_module(".audit", __name__)
    raise AttributeError(f"module 'privopt' has no attribute {name!r}")
