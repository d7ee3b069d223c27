"""Shared machinery of the baselines: public feature scaling, argument checks,
linear decision rule, losses.

Feature map (per record, public parameters only, so it costs no privacy)
------------------------------------------------------------------------
1. ``bounds = (lower, upper)`` (scalars or one value per feature, PUBLIC, like
   diffprivlib's ``bounds``; per-feature pairs ``[(lo, hi), ...]`` and
   ``{"lower": ..., "upper": ...}`` are accepted too, see
   :func:`privopt._validation.check_bounds`, and an empty, inverted or
   infinite range is refused naming the feature): each feature is clipped to
   [lower, upper] and mapped to [-1, 1] by ``2 (x - lower) / (upper - lower) - 1``
   (a constant column of data-derived bounds maps to 0).  Values outside the
   bounds are clipped with a :class:`~privopt.exceptions.ClippedFeaturesWarning`
   (in ``fit`` and ``predict``) that counts them per feature: it describes the
   data, so it is for the data curator only.  Centring the public range at 0 matters: on
   [0, 1] every row shares a large common component, the problem is badly
   conditioned, and with the same budget the optimisers end up much closer to
   the majority class (measured in docs/estimators.md, "Defaults at small n").
   ``bounds=None`` takes the bounds from the data and emits
   :class:`~privopt.exceptions.PrivacyLeakWarning`: the release then leaks more
   than its stated epsilon.
2. ``data_norm = R`` (public): rows whose L2 norm exceeds R are scaled down to
   norm R; then every row is divided by R, so ``||x|| <= 1``.  The default
   ``None`` means ``R = sqrt(d)``, the largest norm a row of [-1, 1]^d can
   have, so no row is clipped and the map stays data independent.
3. With ``fit_intercept`` a constant column ``s`` (the intercept scaling, as in
   scikit-learn's liblinear solver) is appended before the division:
   ``z = (x1, s) / sqrt(R^2 + s^2)`` (x1 the row after steps 1-2, before the
   division by R), still of norm <= 1, so the intercept is an ordinary
   (regularised) weight and every Lipschitz/smoothness constant below holds
   for it too.  ``s = 1`` gives the constant the scale of one feature of
   [-1, 1], so the L2 penalty (or, for the SGD methods, the step geometry)
   treats the intercept like any feature weight.  privopt's first versions
   used ``s = R`` (``z = (x1 / R, 1) / sqrt(2)``), which makes the intercept
   R = sqrt(d) times cheaper than a feature: under the strong regularization
   small data need, the fit then spends its budget on the class balance and
   predicts the majority class (measured in docs/estimators.md, "Defaults at
   small n").

The fitted ``coef_`` and ``intercept_`` act on the features after steps 1-2
*before* the division by R: ``decision_function(X) = x1 @ coef_ + intercept_``
with ``x1`` the bounds-scaled, row-clipped features.  ``predict`` returns
``classes_[1]`` iff the decision function is >= 0 (ties go to ``classes_[1]``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any
import warnings

import numpy as np
from .._optional import require_installed

require_installed("sklearn")

from .._limits import FIT_BYTES_PER_VALUE, check_memory, check_width
from .._random import check_random_state
from .._sklearn import (PrivoptClassifier, check_fitted, check_public_input, refuse_fit_params, validate_fit,
                       validate_predict)
from .._validation import (
    check_bool,
    check_delta,
    check_epsilon,
    check_positive,
    user_stacklevel,
    warn_clipped,
)
from .._validation import check_bounds as _check_bounds
from ..exceptions import AccountingError, PrivacyLeakWarning
from ..ledger import estimator_key, release

__all__ = ["PrivateLinearClassifier", "FeatureMap", "check_bool", "check_bounds", "check_release"]


def check_bounds(bounds, n_features: int | None = None, feature_names=None):
    """``None`` or PUBLIC feature bounds as ``(lower, upper)``: privopt's one
    bounds parser (:func:`privopt._validation.check_bounds`: ``(lower, upper)``,
    per-feature pairs ``[(lo, hi), ...]`` or ``{"lower": ..., "upper": ...}``;
    every range finite with lo < hi).  Without ``n_features`` only the form is
    checked."""
    return _check_bounds(bounds, n_features, feature_names=feature_names)


class FeatureMap:
    """The public, per-record feature map described in the module docstring."""

    def __init__(self, lower, upper, data_norm, fit_intercept, intercept_scaling=1.0):
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        #: s of step 3.
        self.intercept_scaling = float(intercept_scaling)

    def _norm(self) -> float:
        """``sqrt(R^2 + s^2)``, the divisor of step 3."""
        return math.hypot(self.data_norm, self.intercept_scaling)

    def scaled(self, X: np.ndarray) -> np.ndarray:
        """Steps 1-2 without the final division by R (the space of coef_)."""
        lo = np.broadcast_to(self.lower, (X.shape[1],))
        hi = np.broadcast_to(self.upper, (X.shape[1],))
        width = hi - lo
        safe = np.where(width > 0, width, 1.0)
        x1 = np.where(width > 0, 2.0 * (np.clip(X, lo, hi) - lo) / safe - 1.0, 0.0)
        norms = np.linalg.norm(x1, axis=1)
        too_long = norms > self.data_norm
        if np.any(too_long):
            x1[too_long] *= (self.data_norm / norms[too_long])[:, None]
        return x1

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Rows z with ||z|| <= 1 (the space the optimisers work in)."""
        x1 = self.scaled(X)
        if not self.fit_intercept:
            return x1 / self.data_norm
        s = np.full((x1.shape[0], 1), self.intercept_scaling)
        return np.hstack([x1, s]) / self._norm()

    def to_coef(self, w: np.ndarray):
        """Map weights on z to (coef_, intercept_) on the scaled features."""
        if self.fit_intercept:
            norm = self._norm()
            coef = w[:-1] / norm
            intercept = float(w[-1] * self.intercept_scaling / norm)
        else:
            coef = w / self.data_norm
            intercept = 0.0
        return coef, intercept


def check_release(epsilon_spent, delta_spent, epsilon: float, delta: float, estimator: str) -> None:
    """Refuse a release whose own accounting does not cover it: raise
    :class:`~privopt.exceptions.AccountingError` unless ``epsilon_spent`` and
    ``delta_spent`` are finite numbers at most the requested ``epsilon`` and
    ``delta`` (no tolerance: the calibrations round up, so a clean fit meets
    them exactly).  ``None`` (an estimator that did not account) is refused
    too.  Every baseline's ``fit`` calls it after its mechanism ran and before
    anything of the run is exposed, so no accounting bug, and no planted cache
    value that slipped past its check, can release."""
    for name, spent, asked in (("epsilon_spent_", epsilon_spent, epsilon), ("delta spent", delta_spent, delta)):
        value = math.nan if spent is None else float(spent)
        if not math.isfinite(value) or value > asked:
            raise AccountingError(
                f"{estimator}: nothing was released, because the run's own accounting gives "
                f"{name} = {value!r}, {'not a finite number' if not math.isfinite(value) else 'above'} the "
                f"requested {asked!r} (epsilon={epsilon!r}, delta={delta!r}). This is a fault of privopt's "
                "accounting, or of a tampered accounting cache (privopt's cache folder); please report it.")


@dataclass(frozen=True)
class _CommonParams:
    """The checked parameters every private baseline shares."""

    epsilon: float
    delta: float
    fit_intercept: bool
    data_norm: float | None
    bounds: object
    rng: object


@dataclass(frozen=True)
class _Prepared:
    """The public feature map, the mapped records z, the label set and the labels as +-1."""

    feature_map: FeatureMap
    Z: np.ndarray
    classes: np.ndarray
    y_pm: np.ndarray


class PrivateLinearClassifier(PrivoptClassifier):
    """Base of the private baselines: a linear classifier on the public
    feature map, with ``epsilon``, ``delta``, ``random_state``, ``bounds``,
    ``data_norm`` and ``fit_intercept``.

    Subclasses implement ``_check_params()`` (validate their own
    hyperparameters, raising before any data is touched, and return them)
    and ``_fit_private(Z, y_pm, rng, epsilon, delta, params)`` returning the
    weight vector on z; they set their privacy attributes there, after the
    last point where they can fail: ``epsilon_spent_`` and the delta spent
    (``delta_spent_``; ``delta_`` is its deprecated alias).  ``fit`` releases only if these are
    within the request (:func:`check_release`); a refused fit leaves the
    estimator exactly as it was before the call.
    """

    # The parameters every baseline's __init__ sets (annotations only: no class default).
    epsilon: Any
    delta: Any
    random_state: Any
    bounds: Any
    data_norm: Any
    fit_intercept: Any

    #: Whether ``delta = 0`` is allowed (pure-DP mechanisms).
    _pure_dp = False
    #: The most features (columns of X) this baseline takes, refused from X's shape
    #: (:meth:`_check_public_width`); None: no limit (its cost is linear in the data).
    _max_features: int | None = None

    # -- validation -----------------------------------------------------
    def _check_common(self) -> _CommonParams:
        """The parameters every baseline shares, checked before the data is read."""
        check_bounds(self.bounds)       # the form, before the data is read; the lengths in _prepare
        return _CommonParams(
            epsilon=check_epsilon(self.epsilon),
            delta=check_delta(self.delta, allow_zero=self._pure_dp),
            fit_intercept=check_bool(self.fit_intercept, "fit_intercept"),
            data_norm=check_positive(self.data_norm, "data_norm", allow_none=True),
            bounds=self.bounds,
            rng=check_random_state(self.random_state),
        )

    def _check_params(self):  # pragma: no cover - overridden
        return {}

    def _check_public_width(self, X) -> None:
        """Refuse, from X's public shape alone (before a ledger's reservation, so the
        refusal is free), more features than this baseline finishes in a few seconds
        (:attr:`_max_features`, one limit of :mod:`privopt._limits` per baseline)."""
        if self._max_features is not None:
            check_width(X, what=type(self).__name__, max_features=self._max_features,
                        why="measured: more features would take more than a few seconds", fix=(
                "Give fewer features: select or hash them publicly before privopt (e.g. a feature "
                "selection on public data, or sklearn's FeatureHasher), or use a baseline linear in them "
                "(ObjectivePerturbationLogisticRegression, DPSGDLogisticRegression)."))

    def _work_bytes(self, n: int, d_z: int, params) -> int:
        """Bytes the fit will hold, from public sizes: the n x ``d_z`` float
        arrays of the feature map (:data:`privopt._limits.FIT_BYTES_PER_VALUE`).
        A subclass that draws more (DP-SGD's noise for every step) adds its own."""
        return int(n) * int(d_z) * FIT_BYTES_PER_VALUE

    def _check_work_memory(self, n: int, d: int, fit_intercept: bool, params) -> None:
        """Refuse, before the features are mapped, a fit predicted not to fit in memory."""
        d_z = d + int(bool(fit_intercept))
        check_memory(self._work_bytes(n, d_z, params), "X",
                     f"{type(self).__name__}'s fit on {n:,} records of {d:,} features", (
                         "Give fewer features (select or aggregate columns of X), or, for DP-SGD, fewer steps "
                         "(fewer epochs, a larger batch_size)."))

    def _prepare(self, X, y, common: _CommonParams, params=None) -> _Prepared:
        """The public feature map and the mapped records (X and y are copied)."""
        bounds, data_norm, fit_intercept = common.bounds, common.data_norm, common.fit_intercept
        # classes: the label set declared public (None: read from y); a subclass may offer it as a parameter
        X, classes, y_pm = validate_fit(self, X, y, classes=getattr(self, "classes", None))
        d = X.shape[1]
        self._check_work_memory(X.shape[0], d, fit_intercept, params)
        if bounds is None:
            warnings.warn(
                "bounds were not given, so each feature's range is taken from the private "
                "data: the fit is not differentially private, and its epsilon_spent_ is inf. "
                "Pass public bounds=(lower, upper) to avoid this.",
                PrivacyLeakWarning,
                stacklevel=user_stacklevel(),
            )
            lower, upper = X.min(axis=0), X.max(axis=0)
        else:
            names = getattr(self, "feature_names_in_", None)
            lower, upper = check_bounds(bounds, d, names)
            warn_clipped(X, lower, upper, feature_names=names, what=f"{type(self).__name__}.fit", stacklevel=5)
        norm = math.sqrt(d) if data_norm is None else data_norm
        fmap = FeatureMap(lower, upper, norm, fit_intercept)
        return _Prepared(fmap, fmap.transform(X), classes, y_pm)

    @property
    def delta_(self) -> float:
        """Deprecated alias of ``delta_spent_`` (one spelling of the spend on every estimator)."""
        warnings.warn(f"{type(self).__name__}.delta_ is deprecated and will be removed; use delta_spent_.",
                      DeprecationWarning, stacklevel=2)
        try:
            return vars(self)["delta_spent_"]
        except KeyError:
            raise AttributeError("delta_") from None

    # -- the ledger -----------------------------------------------------
    def _ledger_spend(self) -> tuple[float, float]:
        """The (epsilon, delta) this fit charges a ledger, from public parameters
        only: the requested pair, or infinite epsilon when ``bounds`` is None (the
        feature map then reads the data, and no epsilon covers the release)."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, allow_zero=self._pure_dp)
        return (math.inf if self.bounds is None else epsilon), delta

    # -- sklearn API ----------------------------------------------------
    def fit(self, X, y, **fit_params):
        """Fit on (X, y).  Every hyperparameter is checked before the data is
        read; ``X`` and ``y`` are copied, never modified.  Under a
        :class:`~privopt.PrivacyLedger` (``ledger=`` or ``with ledger:``) the fit
        is charged its (epsilon, delta) before anything else.  ``fit_params`` (e.g.
        ``sample_weight``) are refused, naming them and the fix."""
        refuse_fit_params(self, fit_params)
        name = type(self).__name__
        with release(f"{name}.fit", name, self._ledger_spend, ledger=getattr(self, "ledger", None),
                     data=(estimator_key(self), X, y),
                     check=lambda: (check_public_input(X), self._check_public_width(X), self._check_common(),
                                    self._check_params())):
            return self._fit_checked(X, y)

    def _fit_checked(self, X, y):
        self._check_public_width(X)     # without a ledger, release() runs no check: here, before X is read
        common = self._check_common()
        eps, delta, bounds = common.epsilon, common.delta, common.bounds
        params = self._check_params()
        before = dict(vars(self))
        prepared = self._prepare(X, y, common, params)
        fmap, Z, classes, y_pm = prepared.feature_map, prepared.Z, prepared.classes, prepared.y_pm
        # privopt's relation for every mechanism; a subclass that offers
        # another (DP-SGD's neighbouring="add_remove") overrides it.
        self.neighbouring_ = "replace_one"
        w = self._fit_private(Z, y_pm, common.rng, eps, delta, params)
        try:
            check_release(getattr(self, "epsilon_spent_", None),
                          getattr(self, "delta_spent_", None),
                          eps, delta, type(self).__name__)
        except AccountingError:
            vars(self).clear()
            vars(self).update(before)
            raise
        self._feature_map = fmap
        self._bounds_declared = bounds is not None
        if bounds is None:      # the feature map read the data: no epsilon covers the release
            self.epsilon_spent_ = math.inf
        self.classes_ = classes
        self.weights_ = np.asarray(w, dtype=float)
        coef, intercept = fmap.to_coef(self.weights_)
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])
        self.feature_bounds_ = (fmap.lower.copy(), fmap.upper.copy())
        self.data_norm_ = fmap.data_norm
        return self

    def decision_function(self, X):
        """Score of ``classes_[1]``: ``x1 @ coef_ + intercept_`` on the
        scaled features (module docstring)."""
        check_fitted(self, "weights_")
        X = validate_predict(self, X)
        fmap = self._feature_map
        if self._bounds_declared:
            warn_clipped(X, fmap.lower, fmap.upper, feature_names=getattr(self, "feature_names_in_", None),
                         what=f"{type(self).__name__}.predict", stacklevel=4)
        return fmap.transform(X) @ self.weights_

    def predict(self, X):
        """``classes_[1]`` where ``decision_function(X) >= 0``, else ``classes_[0]``."""
        return np.where(self.decision_function(X) >= 0, self.classes_[1], self.classes_[0])



def _compare_rows(a: np.ndarray, i: int, j: int) -> int:
    """-1, 0 or 1 as row i of ``a`` is lexicographically before, equal to or after row j."""
    differ = np.flatnonzero(a[i] != a[j])
    if differ.size == 0:
        return 0
    k = differ[0]
    return -1 if a[i, k] < a[j, k] else 1


def merge_rows(yz: np.ndarray):
    """Distinct rows of ``yz`` (= y_i z_i) and their multiplicities.  A sum
    over records of any function of ``y_i z_i`` equals the count-weighted sum
    over distinct rows, so this changes no value (nor any sensitivity); it
    only makes full-data passes cheaper when records repeat (Adult: 15682
    records, a few thousand distinct rows)."""
    if yz.shape[0] >= yz.shape[1]:
        rows, counts = np.unique(yz, axis=0, return_counts=True)
        return rows, counts.astype(float)
    # wide (fewer rows than columns): np.unique(axis=0) sorts the rows as byte strings of d
    # values (5 x 200,000 took 5 s); comparing two rows at their first difference, vectorised,
    # gives the same lexicographic order in O(n log n) comparisons of O(d) each
    order = np.array(sorted(range(yz.shape[0]), key=functools.cmp_to_key(functools.partial(_compare_rows, yz))),
                     dtype=np.int64)
    ordered = yz[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(order)))
    return ordered[starts], counts.astype(float)


# ---------------------------------------------------------------------------
# Losses of the margin m = y <w, z>, vectorised over records
# ---------------------------------------------------------------------------
def logistic_loss(margins: np.ndarray) -> np.ndarray:
    """``log(1 + exp(-m))``, computed stably."""
    return np.logaddexp(0.0, -margins)


def logistic_dloss(margins: np.ndarray) -> np.ndarray:
    """d/dm of the logistic loss: ``-1 / (1 + exp(m))`` (in [-1, 0])."""
    return -0.5 * (1.0 - np.tanh(0.5 * margins))


def hinge_dloss(margins: np.ndarray) -> np.ndarray:
    """A subgradient of the hinge loss: -1 where m < 1, else 0."""
    return np.where(margins < 1.0, -1.0, 0.0)
