"""Binary items from numeric columns, with public thresholds."""

from __future__ import annotations

import warnings

import numpy as np

from .._optional import require_installed

require_installed("sklearn")

from .._sklearn import PrivoptTransformer, check_fitted, validate_table  # noqa: E402
from ..exceptions import NonBinaryItemWarning, ParameterError, PrivacyLeakWarning  # noqa: E402

__all__ = ["ThresholdBinarizer"]

_TEXT_FIX = ("ThresholdBinarizer cuts numeric columns at thresholds; a text column (e.g. yes/no) needs indicator "
             "columns instead: one-hot encode it (sklearn.preprocessing.OneHotEncoder, or pandas.get_dummies) "
             "and pass the indicators, which are binary items already, beside the binarized numeric columns.")


class ThresholdBinarizer(PrivoptTransformer):
    """Turn numeric columns into binary items ``column >= threshold``.

    A scoring system adds points per item, so its items must be binary.  The
    thresholds must be **public** (fixed without looking at the private data:
    clinical cut-offs, round numbers, a published codebook): a threshold
    computed from the data (a median, a quantile) reveals something about the
    data that no privacy guarantee covers.

    Every column must be numeric: a text column (a yes/no column of a
    DataFrame, numbers written as strings) is refused with a ParameterTypeError
    naming it; one-hot encode it instead (its indicators are binary items).

    Parameters
    ----------
    thresholds : dict or list
        Per column, a list of cut points: ``{"age": [40, 60], "bmi": [30]}``
        (column names of a DataFrame) or ``{0: [40, 60]}`` / a list with one
        entry per column (positions).  A column with ``[]`` is dropped; a
        column missing from a dict is the item ``column >= 1`` (a 0/1 column
        passes through), by this public rule whatever the column holds: a
        column holding other values gets a
        :class:`~privopt.exceptions.NonBinaryItemWarning` for the data
        curator, never an error (an error would say, free of charge, whether a
        column is binary).
    from_data : None or int
        ``None`` (default): use ``thresholds`` only.  An int q: columns
        without public thresholds that are not 0/1 get q - 1 cut points at the
        training data's quantiles.  This leaks the data and raises a
        :class:`~privopt.PrivacyLeakWarning`; it is for teaching and for public
        data only.

    Attributes
    ----------
    thresholds_ : list of arrays
        The cut points used, per input column.
    """

    def __init__(self, thresholds=None, from_data=None):
        self.thresholds = thresholds
        self.from_data = from_data

    def _names(self):
        names = getattr(self, "feature_names_in_", None)
        return [str(c) for c in names] if names is not None else [f"x{j}" for j in range(self.n_features_in_)]

    def _check_from_data(self) -> None:
        """``from_data``: None or an int >= 2, refused before the data is read."""
        q = self.from_data
        if q is not None and (isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 2):
            raise ParameterError(f"from_data must be None or an int >= 2 (quantile bins), got {q!r}.", "from_data")

    def _validate(self, X, reset: bool):
        """X as floats; text columns and other unreadable input are refused
        naming the column and the fix (a raw numpy ValueError otherwise).  A missing or
        infinite value is not refused here but kept as NaN (see :meth:`transform`)."""
        return validate_table(self, X, reset=reset, text_fix=_TEXT_FIX, missing="pass")

    def fit(self, X, y=None):
        self._check_from_data()
        X = self._validate(X, reset=True)
        names = self._names()
        spec = self.thresholds
        if spec is None:
            spec = {}
        if isinstance(spec, dict):
            per = []
            for j, name in enumerate(names):
                cuts = spec.get(name, spec.get(j))
                per.append(cuts)
            unknown = [k for k in spec if k not in names and k not in range(len(names))]
            if unknown:
                raise ParameterError(f"thresholds: unknown columns {unknown!r}; the columns are {names!r}.",
                                     "thresholds")
        else:
            per = list(spec)
            if len(per) != len(names):
                raise ParameterError(f"thresholds: expected one list of cut points per column ({len(names)}), "
                                     f"got {len(per)}.", "thresholds")
        leaked: list[str] = []
        not_binary: list[str] = []
        out = []
        for j, cuts in enumerate(per):
            col = X[:, j]
            binary = cuts is None and bool(np.isin(col[~np.isnan(col)], (0.0, 1.0)).all())
            if cuts is None and (self.from_data is None or binary):
                out.append(np.array([1.0]))         # the public rule: the item column >= 1
                if not binary:
                    not_binary.append(names[j])
                continue
            if cuts is None:
                q = int(self.from_data)
                cuts = np.unique(np.nanquantile(col, np.arange(1, q) / q))
                leaked.append(names[j])
            out.append(np.sort(np.asarray(cuts, dtype=float)))
        if leaked:
            warnings.warn(
                f"ThresholdBinarizer: cut points of {leaked!r} were computed from the data (from_data=...); they "
                "reveal the data and no privacy guarantee covers them. Use public thresholds for private data.",
                PrivacyLeakWarning, stacklevel=2)
        if not_binary:
            warnings.warn(
                f"ThresholdBinarizer: the columns {not_binary!r} have no cut points and were taken as the items "
                "'column >= 1' (the rule for a column missing from thresholds), but they hold values other than 0 "
                "and 1. Give them public cut points (thresholds={name: [...]}) or [] to drop them. (This warning "
                "describes the data: it is for whoever holds the data, not for publication.)",
                NonBinaryItemWarning, stacklevel=2)
        self.thresholds_ = out
        return self

    def transform(self, X):
        """The items ``column >= cut`` as 0/1 (uint8).  A missing or infinite value makes
        its items NaN (the output is then float): this transformer never refuses a value
        of the data, since in a Pipeline it runs before the private estimator charges its
        ledger and a refusal here would be free; the estimator refuses the NaN once charged."""
        check_fitted(self, "thresholds_")
        X_in, X = X, self._validate(X, reset=False)
        cols = [(X[:, j][:, None] >= cuts[None, :]) for j, cuts in enumerate(self.thresholds_) if cuts.size]
        out = np.hstack(cols).astype(np.uint8) if cols else np.zeros((X.shape[0], 0), dtype=np.uint8)
        return self._wrap_output(_keep_missing(out, X, self.thresholds_), X_in)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []     # its items are 0/1 (uint8) whatever X's dtype
        tags.input_tags.allow_nan = True     # kept as NaN items, refused by the private step once charged
        return tags

    def get_feature_names_out(self, input_features=None):
        check_fitted(self, "thresholds_")
        names = self._names()
        out = []
        for name, cuts in zip(names, self.thresholds_):
            for c in cuts:
                out.append(name if (c == 1.0 and cuts.size == 1 and self._binary_passthrough(name))
                           else f"{name} >= {c:g}")
        return np.asarray(out, dtype=object)

    def _binary_passthrough(self, name) -> bool:
        spec = self.thresholds if isinstance(self.thresholds, dict) else {}
        j = self._names().index(name)
        return spec.get(name, spec.get(j)) is None


def _keep_missing(out: np.ndarray, X: np.ndarray, thresholds: list) -> np.ndarray:
    """``out`` with NaN in the items of every missing (NaN) value of X (float then)."""
    missing = np.isnan(X)
    if not missing.any():
        return out
    per = [np.repeat(missing[:, [j]], cuts.size, axis=1) for j, cuts in enumerate(thresholds) if cuts.size]
    mask = np.hstack(per) if per else np.zeros(out.shape, dtype=bool)
    return np.where(mask, np.nan, out.astype(np.float64))
