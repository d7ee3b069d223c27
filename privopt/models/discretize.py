"""Map real-valued features onto a public integer grid.

The 0/1-loss MILP (:func:`privopt.models.zero_one_halfspace`) needs integer
scores <w, x> for an exact margin, and it is fast only when many records
share a feature row (row merging) and rows form long one-coordinate chains
(chain cuts).  Real-valued features defeat all three (:mod:`privopt.models.halfspace`: a
398 x 10 real-valued set was not certified in 120 s).  Rounding every feature
onto a fixed grid built from PUBLIC bounds is a per-record transformation:
the map from one record to its rounded record does not depend on any other
record, so applying it before a DP mechanism costs no privacy.  Bounds taken
from the data do depend on the other records; then a
:class:`~privopt.exceptions.PrivacyLeakWarning` is emitted.

The map, per feature j with public bounds [lo_j, hi_j] and L_j levels:

    z_j = round( L_j * (clip(x_j, lo_j, hi_j) - lo_j) / (hi_j - lo_j) )  in {0, 1, ..., L_j}.

Accuracy cost.  A halfspace with weights v on the original features is
approximated by w_j = v_j (hi_j - lo_j) / L_j on z, plus the intercept
absorbing sum_j v_j lo_j.  Rounding moves each scaled feature by at most 1/2,
so the score moves by at most (1/2) sum_j |w_j| <= (B/2) d_c (d_c: number of
features that actually get rounded, B = max |w_j|); only records whose score
lies within that band of the threshold can change prediction.  The second
cost is resolution: on the integer grid {-B..B}, w_j can only take 2B + 1
values, so feature j's weight in original units is w_j L_j / (hi_j - lo_j):
large L_j gives a fine input grid but a coarse weight grid (step L_j /
(hi_j - lo_j)), small L_j the reverse.  Clipping to [lo, hi] loses the
information beyond the bounds.  Columns already integer-valued (one-hot
indicators) are left exact by bounds (0, 1) and L = 1.

Geometric steps (``spacing="geometric"``).  Equal-width steps put most records
of a right-skewed feature (counts, lab values, money) in the lowest step.  The
geometric map first bends the position in the range,

    u_j = (clip(x_j, lo_j, hi_j) - lo_j) / (hi_j - lo_j),
    u'_j = ln(1 + u_j (b - 1)) / ln(b),     b = :data:`GEOMETRIC_BASE`,

then rounds u'_j to L_j equal steps, z_j = round(L_j u'_j): the step boundaries
lie at u = (b^(k / L_j) - 1) / (b - 1), finer near lo_j.  It reads the public
bounds and the constant b only, so it too is a fixed per-record map.  The ends
map to themselves (u = 0 -> 0, u = 1 -> 1, exactly in floating point), so a 0/1
feature with bounds (0, 1) gets the same z as on equal steps.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._validation import check_array_2d, check_int, floats_or_nan
from ..exceptions import ParameterError, ParameterTypeError, PrivacyLeakWarning

__all__ = ["discretize_features", "FeatureDiscretizer", "geometric_position", "SPACINGS", "GEOMETRIC_BASE"]

#: The spacings of the steps: ``"uniform"`` (equal width in the public range) or ``"geometric"``
#: (equal width after u -> ln(1 + u (b - 1)) / ln(b), module docstring).
SPACINGS = ("uniform", "geometric")
#: The base b of the geometric steps: u' = ln(1 + u (b - 1)) / ln(b), u the position in the public
#: range [lo, hi] (0 at lo, 1 at hi), then z = round(L u'); z = k for u between
#: (b^((k - 1/2) / L) - 1) / (b - 1) and (b^((k + 1/2) / L) - 1) / (b - 1).  With b = 100 and
#: L = 8 the boundaries are at 0.3%, 1.4%, 3.2%, 6.6%, 12.5%, 22.9%, 41.6% and 74.7% of the
#: range (equal steps: 6.25%, 18.75%, ...).  A public constant fixed in the code, not read from data.
GEOMETRIC_BASE = 100.0


def _check_bounds(bounds, d: int, X: np.ndarray | None, *, stacklevel: int = 3):
    if bounds is None:
        if X is None:
            raise ParameterError("bounds=None needs data to infer them from.", "bounds")
        warnings.warn(
            "bounds were not given, so the feature ranges are taken from the private data "
            "(min and max of each column); the discretization then depends on every record and "
            "the privacy guarantee does not hold as stated. Pass bounds=(lower, upper) from "
            "public knowledge of the features.",
            PrivacyLeakWarning,
            stacklevel=stacklevel,
        )
        lo, hi = X.min(axis=0), X.max(axis=0)
        hi = np.where(hi > lo, hi, lo + 1.0)
        return lo.astype(float), hi.astype(float)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ParameterTypeError(
            "bounds must be a pair (lower, upper) of numbers or of per-feature sequences, "
            f"got {type(bounds).__name__}.", "bounds")
    out = []
    for side, val in zip(("lower", "upper"), bounds):
        try:
            arr = np.array(val, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ParameterTypeError(f"bounds ({side}) must be numbers: {exc}", "bounds") from exc
        if arr.ndim == 0:
            arr = np.full(d, float(arr))
        if arr.shape != (d,):
            raise ParameterError(
                f"bounds ({side}) must be a number or have one entry per feature ({d}), "
                f"got shape {arr.shape}.", "bounds")
        if not np.all(np.isfinite(arr)):
            raise ParameterError(f"bounds ({side}) must be finite.", "bounds")
        out.append(arr)
    lo, hi = out
    if np.any(hi <= lo):
        bad = np.nonzero(hi <= lo)[0][:5].tolist()
        raise ParameterError(f"bounds: upper must exceed lower for every feature (not for {bad}).", "bounds")
    return lo, hi


def _check_center(center) -> bool:
    if not isinstance(center, (bool, np.bool_)):
        raise ParameterTypeError(f"center must be True or False, got {center!r}.", "center")
    return bool(center)


def _check_levels(levels, d: int) -> np.ndarray:
    if isinstance(levels, numbers.Integral) and not isinstance(levels, bool):
        lv = np.full(d, check_int(levels, "levels", minimum=1), dtype=np.int64)
        return lv
    if isinstance(levels, (bool, float, str)) or levels is None:
        raise ParameterTypeError(
            f"levels must be a positive int or a sequence of {d} positive ints, got {levels!r}.", "levels")
    try:
        arr = np.array(levels)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"levels must be ints: {exc}", "levels") from exc
    if arr.shape != (d,):
        raise ParameterError(f"levels must be an int or have one entry per feature ({d}), got shape {arr.shape}.",
                             "levels")
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise ParameterTypeError("levels must be integers.", "levels")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ParameterError("levels must be >= 1 for every feature.", "levels")
    return arr


def _check_spacing(spacing) -> str:
    if not isinstance(spacing, str) or spacing not in SPACINGS:
        raise ParameterError(f"spacing must be one of {SPACINGS}, got {spacing!r}.", "spacing")
    return spacing


def geometric_position(u):
    """u' = ln(1 + u (b - 1)) / ln(b), b = :data:`GEOMETRIC_BASE`, for positions u in [0, 1]
    of the public range: increasing, 0 -> 0 and 1 -> 1 exactly (1 + (b - 1) = b in floating point)."""
    b = GEOMETRIC_BASE
    return np.log(1.0 + np.asarray(u, dtype=float) * (b - 1.0)) / np.log(b)


def _apply(X, lo, hi, levels, center=False, spacing="uniform"):
    u = (np.clip(X, lo, hi) - lo) / (hi - lo)
    if spacing == "geometric":
        u = geometric_position(u)
    Z = np.rint(u * levels)  # round half to even
    if center:
        Z = 2.0 * Z - levels
    return Z + 0.0  # +0.0 normalizes -0.0


def discretize_features(X, bounds, levels=10, *, center=False, spacing="uniform"):
    """Round features clipped to public ``bounds`` onto {0, 1, ..., levels}.

    z_j = round(levels_j * (clip(x_j, lo_j, hi_j) - lo_j) / (hi_j - lo_j))
    (see the module docstring for why this costs no privacy and what it costs
    in accuracy).  With ``center=True`` the steps are centred on the middle of
    the range: z'_j = 2 z_j - levels_j in {-levels_j, -levels_j + 2, ...,
    levels_j}.

    Why centre.  A halfspace on a small integer grid scores <w, z> + b with
    the intercept b in -B..B, so a one-feature rule w_j z_j + b >= 0 can only
    cut feature j where z_j is about -b / w_j: on {0..L} that is within B steps
    of the bottom of its range, and the middle and top of a feature with many
    levels are out of reach.  On the centred steps the same b cuts within B
    steps of the middle.  Which is better depends on the data, so the
    estimator offers both, and the centred steps with a wide intercept
    (:func:`privopt.estimators.default_ladder`).  Centring is a fixed per-record
    map like the rounding itself: it costs no privacy.

    Parameters
    ----------
    X : array (n, d)
    bounds : (lower, upper) or None
        Public bounds: two numbers or two length-d sequences.  Must not come
        from the data; ``None`` infers min/max per column from ``X`` and emits
        a :class:`~privopt.exceptions.PrivacyLeakWarning`.
    levels : int or sequence of d ints
        Number of steps per feature (>= 1); 1 keeps a 0/1 indicator exact.
    center : bool
        Centre the steps on the middle of the range (above).
    spacing : "uniform" or "geometric"
        Equal-width steps, or steps equal in u' = ln(1 + u (b - 1)) / ln(b) with u
        the position in [lo_j, hi_j] and b = :data:`GEOMETRIC_BASE` (module
        docstring): finer near the lower bound, for right-skewed features.
        With ``center=True`` too, the steps are centred on u' = 1/2, which is
        u = (sqrt(b) - 1) / (b - 1) (9.1% of the range at b = 100): the middle
        of the geometric steps, where a one-feature cut with a small intercept
        falls (the default ladder offers the geometric steps on {0..L} only).

    Returns
    -------
    ndarray (n, d) of float with integer values in {0..levels_j} (centred:
    {-levels_j, -levels_j + 2, ..., levels_j}); the caller's X is not modified.
    """
    Xa = check_array_2d(X, "X")
    d = Xa.shape[1]
    lo, hi = _check_bounds(bounds, d, Xa)
    lv = _check_levels(levels, d)
    return _apply(Xa, lo, hi, lv, _check_center(center), _check_spacing(spacing))


def _finite_or_nan(X) -> np.ndarray:
    """X as a new 2-D float array, every value that is not a finite number as NaN
    (:func:`privopt._validation.floats_or_nan`): refused for its types or shape only
    (a column typed as text, not 2-D, empty), never for a value."""
    return check_array_2d(floats_or_nan(X), "X", allow_missing=True)


class FeatureDiscretizer:
    """:func:`discretize_features` as a transformer with fit/transform (the
    scikit-learn convention; no scikit-learn dependency).

    ``fit`` only validates and fixes the bounds (inferring them from the data,
    with a PrivacyLeakWarning, when ``bounds`` is None); ``transform`` applies
    the same map to any data, e.g. held-out records.
    """

    def __init__(self, bounds=None, levels=10, center=False, spacing="uniform"):
        self.bounds = bounds
        self.levels = levels
        self.center = center
        self.spacing = spacing

    def get_params(self, deep=True):
        return {"bounds": self.bounds, "levels": self.levels, "center": self.center, "spacing": self.spacing}

    def set_params(self, **params):
        for key, value in params.items():
            if key not in ("bounds", "levels", "center", "spacing"):
                raise ParameterError(f"unknown parameter {key!r} for FeatureDiscretizer.", key)
            setattr(self, key, value)
        return self

    def fit(self, X, y=None):
        """Fix the bounds.  With public bounds X's values are not read (its shape is), so
        no value of the data can make ``fit`` raise (in a Pipeline it runs before the
        private estimator charges its ledger: a refusal here would be free)."""
        Xa = _finite_or_nan(X) if self.bounds is not None else check_array_2d(X, "X")
        d = Xa.shape[1]
        self.lower_, self.upper_ = _check_bounds(self.bounds, d, Xa, stacklevel=3)
        self.levels_ = _check_levels(self.levels, d)
        self.center_ = _check_center(self.center)
        self.spacing_ = _check_spacing(getattr(self, "spacing", "uniform"))
        self.n_features_in_ = d
        return self

    def transform(self, X):
        """The levels of X; a missing or infinite value stays NaN (never refused here: the
        private step after this one refuses it once charged)."""
        if not hasattr(self, "levels_"):
            raise ParameterError("FeatureDiscretizer is not fitted; call fit first.", "self")
        Xa = _finite_or_nan(X)
        if Xa.shape[1] != self.n_features_in_:
            raise ParameterError(
                f"X has {Xa.shape[1]} features but the discretizer was fitted with {self.n_features_in_}.", "X")
        # (a discretizer pickled before a field existed reads its default)
        return _apply(Xa, self.lower_, self.upper_, self.levels_, getattr(self, "center_", False),
                      getattr(self, "spacing_", "uniform"))

    def fit_transform(self, X, y=None):
        return self.fit(X, y).transform(X)
