"""Private scoring systems (risk scores): integer points per binary item and
a threshold, selected privately from the whole public set of such systems.

* :class:`PrivateScoringSystem`: the scikit-learn estimator (``points_``,
  ``threshold_``, ``scorecard()``, an optional private risk table);
* :class:`ThresholdBinarizer`: binary items from numeric columns with public
  cut points;
* :func:`select_scoring_system`: the mechanism on arrays, returning a
  :class:`~privopt.PrivateResult`;
* :func:`best_scoring_system`: the exact non-private 0/1 optimum over the same
  set (a reference, NOT private).
"""

from typing import TYPE_CHECKING

# For the audit: not in __all__.
from ._engine import ScoringProblem as ScoringProblem
from ._engine import decode as decode
from ._select import best_scoring_system, select_scoring_system
from ._select import check_binary_matrix as check_binary_matrix
from ._select import check_space as check_space
from ._space import RecordTable as RecordTable

if TYPE_CHECKING:   # imported on first use (they need scikit-learn); named here for type checkers and the docs
    from ._binarize import ThresholdBinarizer
    from ._estimator import PrivateScoringSystem, ScoreCard

__all__ = ["select_scoring_system", "best_scoring_system", "PrivateScoringSystem", "ScoreCard",
           "ThresholdBinarizer"]


def __getattr__(name):
    # the estimator and the binarizer need scikit-learn (privopt[learn])
    if name in ("PrivateScoringSystem", "ScoreCard"):
        from . import _estimator

        return getattr(_estimator, name)
    if name == "ThresholdBinarizer":
        from ._binarize import ThresholdBinarizer

        return ThresholdBinarizer
    raise AttributeError(f"module 'privopt.scoring' has no attribute {name!r}")
