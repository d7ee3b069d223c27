"""scikit-learn conventions shared by privopt's estimators.

Validation goes through scikit-learn's own helpers (``validate_data``,
``check_classification_targets``) so inputs are refused the way scikit-learn
refuses them (sparse, complex, object, empty, continuous targets), and the
tags declare what the estimators are (docs/estimators.md, "Tags"):

* binary only (``classifier_tags.multi_class = False``);
* ``poor_score = True`` for private estimators: the noise needed for privacy
  may leave them below scikit-learn's accuracy thresholds on its tiny test sets;
* ``non_deterministic = True`` unless ``random_state`` is an int (a seeded fit
  is reproducible but not private when the seed is known).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import (check_declared_classes, check_labels_given, check_labels_within, check_missing_features,
                          check_numeric_features)
from .exceptions import ParameterError, ParameterTypeError

__all__ = ["PrivoptClassifierMixin", "check_public_input", "validate_fit", "validate_predict"]


def check_public_input(X, name: str = "X") -> None:
    """What a fit may check of ``X`` before reading any value of it: its type and its
    number of rows (public under replace-one).  A scipy sparse matrix, and an ``X``
    with no row, are refused naming ``name`` and the fix, before a ledger reserves the
    fit (so the refusal costs nothing); everything else is :func:`validate_fit`'s."""
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):        # scipy.sparse, without importing scipy
        raise ParameterTypeError(
            f"{name}: a sparse matrix ({type(X).__name__}); privopt's estimators take a dense array of "
            f"numbers. Pass {name}.toarray() (or select fewer columns first if it does not fit in memory).", name)
    shape = getattr(X, "shape", None)
    try:
        rows = int(shape[0]) if shape is not None and len(shape) > 0 else len(X)
    except TypeError:
        return          # not a table: validate_fit names what it is
    if rows == 0:
        raise ParameterError(f"{name}: it has no rows; a fit needs at least one record.", name)


def validate_fit(est, X, y, classes=None):
    """``(X, classes, y_pm)``: X a float copy, y mapped to {-1, +1}.

    ``classes``: None reads the two classes from y (both must occur); two
    declared labels (the estimators' ``classes=``) are the classes whatever
    y holds, and a label of y outside them is refused.

    A missing label (None, NaN) or labels of mixed kinds in y are refused naming y
    (:func:`privopt._validation.check_labels_given`).

    X must be numeric: a column of text (a DataFrame's yes/no column, or
    numbers written as strings) is refused naming the column and the fix
    (:func:`privopt._validation.check_numeric_features`), where scikit-learn
    would parse number strings silently; a missing or infinite value is refused
    naming its column and a private way out
    (:func:`privopt._validation.check_missing_features`).

    Sets ``n_features_in_`` (and ``feature_names_in_`` for DataFrames).
    """
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import (
        _assert_all_finite,
        check_consistent_length,
        column_or_1d,
        validate_data,
    )

    declared = check_declared_classes(classes)     # the form, before X or y is read
    if y is None:
        raise ParameterError(f"{type(est).__name__} requires y to be passed, but the target y is None.", "y")
    check_numeric_features(X, "X")   # text, even numbers written as text, names its column
    check_missing_features(X, "X")   # NaN and inf name their columns and a private way out
    try:
        X = validate_data(est, X, accept_sparse=False, dtype=np.float64, copy=True, ensure_min_samples=1)
    except ValueError as exc:
        raise ParameterError(f"X: {exc}", "X") from exc
    except TypeError as exc:
        raise ParameterTypeError(f"X: {exc}", "X") from exc
    try:
        y = column_or_1d(y, warn=True)
        check_labels_given(y, "y")     # a missing label names y, not numpy's TypeError comparing None to a str
        check_consistent_length(X, y)
        if y.dtype.kind in "fc":
            _assert_all_finite(y, input_name="y")
        check_classification_targets(y)
    except ParameterError:
        raise
    except ValueError as exc:
        raise ParameterError(f"y: {exc}", "y") from exc
    if declared is not None:
        check_labels_within(y, declared, "y")
        return X, declared, np.where(y == declared[1], 1, -1).astype(int)
    classes = np.unique(y)
    if classes.size != 2 or type_of_target(y) != "binary":
        raise ParameterError(
            "Only binary classification is supported. "
            f"y must contain exactly two classes, found {classes.size} class(es) "
            f"({classes[:5].tolist()}); privopt's classifiers are binary "
            "(wrap in sklearn.multiclass.OneVsRestClassifier for more).", "y")
    y_pm = np.where(y == classes[1], 1, -1).astype(int)
    return X, classes, y_pm


def validate_predict(est, X):
    """A float copy of X checked against the fitted ``n_features_in_``."""
    from sklearn.utils.validation import validate_data

    check_numeric_features(X, "X")
    check_missing_features(X, "X")
    try:
        return validate_data(est, X, accept_sparse=False, dtype=np.float64, reset=False, copy=True)
    except ValueError as exc:
        raise ParameterError(f"X: {exc}", "X") from exc
    except TypeError as exc:
        raise ParameterTypeError(f"X: {exc}", "X") from exc


class PrivoptClassifierMixin:
    """Tags of privopt's binary classifiers (see module docstring)."""

    #: Private estimators may score below scikit-learn's thresholds.
    _poor_score = True
    #: Non-private references draw no randomness.
    _deterministic = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = self._poor_score
        tags.input_tags.sparse = False
        rs = getattr(self, "random_state", None)
        tags.non_deterministic = not (self._deterministic or isinstance(rs, numbers.Integral))
        return tags
