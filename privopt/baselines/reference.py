"""Reference points that are NOT private: non-private logistic regression and
the majority-class predictor."""

from __future__ import annotations

import numpy as np
from .._optional import require

require("sklearn")
from sklearn.linear_model import LogisticRegression  # noqa: E402

from .._sklearn import PrivoptClassifier, check_fitted, validate_fit, validate_predict
from .._validation import check_int, check_positive, warn_clipped
from ..ledger import release
from ._base import check_bool, check_bounds

__all__ = ["NonPrivateLogisticRegression", "MajorityClassClassifier"]


class NonPrivateLogisticRegression(PrivoptClassifier):
    """Ordinary L2-regularised logistic regression -- **NOT PRIVATE**.

    A reference point for the private baselines: scikit-learn's
    ``LogisticRegression(C=C)`` on the features.  ``epsilon``, ``delta``
    and ``random_state`` are accepted so that every baseline can be built the
    same way, and are ignored; ``epsilon_spent_`` is ``inf``.

    ``bounds``: ``None`` (default) or the public ``(lower, upper)`` feature
    ranges that the private baselines take (scalars or one entry per
    feature).  Given, each feature is clipped to its range before fitting and
    predicting, as the private baselines clip it, so that the reference sees
    the same inputs; unlike theirs, ``coef_`` stays on the unscaled features.
    Data inside the bounds is fitted exactly as without them; values outside
    are clipped with a :class:`~privopt.exceptions.ClippedFeaturesWarning`
    (for the data curator: it counts them).  The bounds are read by the
    baselines' parser (``(lower, upper)``, per-feature pairs or a dict).
    """

    _poor_score = False
    _deterministic = True

    def __init__(self, epsilon=None, delta=None, *, C=1.0, fit_intercept=True, max_iter=1000,
                 random_state=None, bounds=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.random_state = random_state
        self.bounds = bounds
        self.ledger = ledger

    def _clip(self, X):
        if self._bounds is None:
            return X
        lower, upper = self._bounds
        return np.clip(X, lower, upper)

    def fit(self, X, y):
        """Fit without privacy.  Under a :class:`~privopt.PrivacyLedger` it is
        refused before the data is read (no epsilon covers it)."""
        with release(f"{type(self).__name__}.fit", "none", _not_private, ledger=getattr(self, "ledger", None)):
            return self._fit(X, y)

    def _fit(self, X, y):
        C = check_positive(self.C, "C")
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        check_bounds(self.bounds)
        X, classes, y_pm = validate_fit(self, X, y)
        names = getattr(self, "feature_names_in_", None)
        self._bounds = check_bounds(self.bounds, X.shape[1], names)
        if self._bounds is not None:
            warn_clipped(X, *self._bounds, feature_names=names, what=f"{type(self).__name__}.fit", stacklevel=4)
        self._lr = LogisticRegression(C=C, fit_intercept=fit_intercept,
                                      max_iter=max_iter).fit(self._clip(X), y_pm)
        self.n_iter_ = self._lr.n_iter_.copy()
        self.classes_ = classes
        self.coef_ = self._lr.coef_.copy()
        self.intercept_ = self._lr.intercept_.copy()
        self.epsilon_spent_ = float("inf")
        self.delta_spent_ = 0.0
        return self

    def decision_function(self, X):
        check_fitted(self, "coef_")
        X = validate_predict(self, X)
        if self._bounds is not None:
            warn_clipped(X, *self._bounds, feature_names=getattr(self, "feature_names_in_", None),
                         what=f"{type(self).__name__}.predict", stacklevel=4)
        return self._lr.decision_function(self._clip(X))

    def predict(self, X):
        """``classes_[1]`` where the decision function is >= 0."""
        return np.where(self.decision_function(X) >= 0, self.classes_[1], self.classes_[0])


class MajorityClassClassifier(PrivoptClassifier):
    """Predicts the most frequent training label -- **NOT PRIVATE** (the
    majority is a statistic of the data).  Ties go to ``classes_[1]``.
    ``epsilon``, ``delta``, ``random_state`` and ``bounds`` are accepted (as
    every baseline takes them) and ignored; ``bounds`` is still checked."""

    _deterministic = True

    def __init__(self, epsilon=None, delta=None, *, random_state=None, bounds=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.bounds = bounds
        self.ledger = ledger

    def fit(self, X, y):
        """The majority label.  Under a :class:`~privopt.PrivacyLedger` it is
        refused before the data is read (no epsilon covers it)."""
        with release(f"{type(self).__name__}.fit", "none", _not_private, ledger=getattr(self, "ledger", None)):
            return self._fit(X, y)

    def _fit(self, X, y):
        check_bounds(self.bounds)
        X, classes, y_pm = validate_fit(self, X, y)
        check_bounds(self.bounds, X.shape[1], getattr(self, "feature_names_in_", None))
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.majority_ = 1 if y_pm.sum() >= 0 else -1
        self.epsilon_spent_ = float("inf")
        self.delta_spent_ = 0.0
        return self

    def decision_function(self, X):
        check_fitted(self, "majority_")
        X = validate_predict(self, X)
        return np.full(X.shape[0], float(self.majority_))

    def predict(self, X):
        return np.where(self.decision_function(X) >= 0, self.classes_[1], self.classes_[0])


def _not_private() -> tuple[float, float]:
    """What a non-private fit spends: every epsilon (a ledger refuses it)."""
    return float("inf"), 0.0
