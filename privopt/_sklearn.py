"""scikit-learn's estimator protocol for privopt's estimators, without importing scikit-learn.

scikit-learn imports scipy.stats and pandas when it loads (about a second of CPU
in a fresh process), so privopt's estimators do not subclass its
``BaseEstimator``: :class:`PrivoptEstimator` and :class:`PrivoptClassifier`
implement the protocol scikit-learn reads from an estimator (its
"developing estimators" guide):

* ``get_params`` / ``set_params`` (deep: ``step__param`` of a nested estimator),
  read from ``__init__``'s signature as ``BaseEstimator`` reads them, so
  ``sklearn.base.clone``, ``GridSearchCV``, ``Pipeline`` and ``cross_val_score``
  work unchanged; ``__sklearn_clone__`` clones without scikit-learn; with
  scikit-learn's metadata routing enabled, ``get_metadata_routing`` declares
  ``score``'s ``sample_weight`` (not requested), as ``BaseEstimator`` does;
* ``__repr__``: the class and its parameters that differ from their defaults;
* ``__sklearn_tags__``: scikit-learn's ``Tags`` record, built (and scikit-learn
  imported) only when scikit-learn asks for it, i.e. when it is loaded already;
* classifiers: ``score`` (accuracy) and ``_estimator_type = "classifier"``;
* transformers: ``fit_transform`` and ``set_output`` (a pandas or polars output
  built by scikit-learn, imported when such an output is asked for).

Their tags declare what they are (docs/estimators.md, "Tags"):

* binary only (``classifier_tags.multi_class = False``);
* ``poor_score = True`` for private estimators: the noise needed for privacy
  may leave them below scikit-learn's accuracy thresholds on its tiny test sets;
* ``non_deterministic = True`` unless ``random_state`` is an int (a seeded fit
  is reproducible but not private when the seed is known).

Inputs are checked here too, as scikit-learn's ``validate_data`` checks them
(2-D, numeric, finite, at least one row and one column; ``n_features_in_`` and
``feature_names_in_`` set in fit and checked in predict, with its messages), and
refused with privopt's errors: text columns and missing values name their
column (:mod:`privopt._validation`), and no message quotes a value of the data.
scikit-learn is imported on two rare paths only, for its own classes: the
``NotFittedError`` of a predict before fit and the ``DataConversionWarning`` of a
column-vector ``y``.
"""

from __future__ import annotations

import copy
import inspect
import numbers
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ._validation import (check_declared_classes, check_labels_given, check_labels_within, check_missing_features,
                          check_numeric_features, check_time_features, check_two_classes, check_unique_columns,
                          warn_identifier_columns,
                          floats_or_nan, refuse_labels, user_stacklevel)
from .exceptions import ParameterError, ParameterTypeError

__all__ = ["PrivoptEstimator", "PrivoptClassifier", "PrivoptTransformer", "clone_estimator", "check_fitted",
           "refuse_fit_params",
           "check_public_input", "validate_fit", "validate_predict", "validate_table"]

#: Non-blank characters of a repr beyond which its middle is elided (scikit-learn's ``N_CHAR_MAX``).
REPR_MAX_CHARS = 700
#: The width a repr's parameters are wrapped to (scikit-learn's pretty printer's).
REPR_WIDTH = 80
#: The methods whose optional arguments scikit-learn's metadata routing knows of (its ``SIMPLE_METHODS``).
_ROUTED_METHODS = ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
                   "score", "split", "transform", "inverse_transform")


# -- the estimator protocol ---------------------------------------------------------------------

def clone_estimator(estimator, *, safe: bool = True):
    """A new unfitted estimator with the same parameters: ``sklearn.base.clone``'s
    rule without scikit-learn.  Each parameter is cloned in turn (an estimator by its
    ``__sklearn_clone__`` or its parameters, a list/tuple/set/dict element by element,
    any other value deep-copied: a :class:`~privopt.PrivacyLedger` deep-copies to
    itself, so a clone charges the same ledger); the clone's constructor must keep
    every parameter as given (a RuntimeError otherwise, as scikit-learn's)."""
    kind = type(estimator)
    if kind is dict:
        return {k: clone_estimator(v, safe=safe) for k, v in estimator.items()}
    if kind in (list, tuple, set, frozenset):
        return kind([clone_estimator(e, safe=safe) for e in estimator])
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        if not safe:
            return copy.deepcopy(estimator)
        raise TypeError(f"Cannot clone object {estimator!r} (type {kind}): it does not seem to be a scikit-learn "
                        "estimator as it does not implement a 'get_params' method.")
    if hasattr(estimator, "__sklearn_clone__") and not isinstance(estimator, PrivoptEstimator):
        return estimator.__sklearn_clone__()            # another library's estimator: its own rule
    params = {name: clone_estimator(value, safe=False) for name, value in estimator.get_params(deep=False).items()}
    new = kind(**params)
    kept = new.get_params(deep=False)
    for name, value in params.items():
        if kept[name] is not value:
            raise RuntimeError(f"Cannot clone object {estimator}, as the constructor either does not set or "
                               f"modifies parameter {name}")
    for attr in ("_metadata_request", "_sklearn_output_config"):    # scikit-learn's per-estimator settings
        if attr in vars(estimator):
            setattr(new, attr, copy.deepcopy(vars(estimator)[attr]))
    return new


def _changed_params(estimator) -> dict:
    """The parameters that differ from their ``__init__`` defaults (compared by repr,
    NaN equal to NaN), in ``get_params`` order: what a repr shows."""
    defaults = {name: p.default for name, p in inspect.signature(type(estimator).__init__).parameters.items()}

    def changed(name, value) -> bool:
        if name not in defaults or defaults[name] is inspect.Parameter.empty:
            return True
        default = defaults[name]
        if hasattr(value, "get_params") and type(value) is not type(default):
            return True
        nan = [isinstance(v, numbers.Real) and not isinstance(v, bool) and v != v for v in (value, default)]
        return repr(value) != repr(default) and not all(nan)

    return {name: value for name, value in estimator.get_params(deep=False).items() if changed(name, value)}


def _wrapped(head: str, items: list[str], width: int = REPR_WIDTH) -> str:
    """``head(item, item, ...)`` packed into lines of ``width``, later lines aligned after
    the parenthesis, as scikit-learn's pretty printer lays out an estimator."""
    indent = " " * (len(head) + 1)
    lines, line = [], head + "("
    for k, item in enumerate(items):
        piece = item + (", " if k < len(items) - 1 else ")")
        if len(line) + len(piece.rstrip()) > width and line.strip() not in ("", head + "("):
            lines.append(line.rstrip())
            line = indent
        line += piece
    if not items:
        line += ")"
    lines.append(line)
    return "\n".join(lines)


def _elided(text: str, max_chars: int = REPR_MAX_CHARS) -> str:
    """``text`` with its middle replaced by ``...`` when it has more than ``max_chars``
    non-blank characters (about half of them kept on each side)."""
    nonblank = [i for i, ch in enumerate(text) if not ch.isspace()]
    if len(nonblank) <= max_chars:
        return text
    keep = max_chars // 2
    left, right = nonblank[keep - 1] + 1, nonblank[-keep]
    return text[:left] + "..." + text[right:] if left + 3 < right else text


class PrivoptEstimator:
    """scikit-learn's estimator protocol (module docstring): parameters, clone, repr and tags.

    As with scikit-learn's ``BaseEstimator``, a subclass takes its parameters as
    keyword arguments of ``__init__`` (no ``*args``/``**kwargs``) and stores each,
    unchanged, under its own name; ``fit`` validates them."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The parameter names of ``__init__``, sorted (as ``BaseEstimator`` sorts them)."""
        init = cls.__init__
        if init is object.__init__:
            return []
        params = [p for p in inspect.signature(init).parameters.values() if p.name != "self"
                  and p.kind != p.VAR_KEYWORD]
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__}: an estimator's parameters are keyword arguments of __init__ "
                                   f"(no *args); its constructor is {inspect.signature(init)}.")
        return sorted(p.name for p in params)

    def get_params(self, deep: bool = True) -> dict:
        """The parameters, by name; ``deep``: also ``name__param`` of each parameter that
        is an estimator (a Pipeline's steps, a wrapped estimator)."""
        out: dict = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        """Set parameters, ``name__param`` setting ``param`` of the estimator held in
        ``name``; an unknown name raises a ValueError listing the valid ones.  Returns self."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict] = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self}. Valid parameters are: "
                                 f"{self._get_param_names()!r}.")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def __sklearn_clone__(self):
        return clone_estimator(self)

    def __repr__(self) -> str:
        items = [f"{name}={value!r}" for name, value in _changed_params(self).items()]
        return _elided(_wrapped(type(self).__name__, items))

    def get_metadata_routing(self):
        """scikit-learn's metadata routing (when the user enables it): each method's
        optional arguments beyond X and y (``score``'s ``sample_weight``), none of them
        requested, as ``BaseEstimator`` derives them from the signatures.  Called by
        scikit-learn only, so scikit-learn is loaded already when this imports it."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=self)
        for method in _ROUTED_METHODS:
            func = getattr(type(self), method, None)
            if not inspect.isfunction(func) or not hasattr(request, method):
                continue
            for name, p in list(inspect.signature(func).parameters.items())[1:]:
                if name not in ("X", "y", "Y", "Xt", "yt") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    getattr(request, method).add_request(param=name, alias=None)
        return request

    def __sklearn_tags__(self):
        """scikit-learn's default tags (``BaseEstimator``'s).  Called by scikit-learn
        only, so scikit-learn is loaded already when this imports it."""
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False), transformer_tags=None,
                    regressor_tags=None, classifier_tags=None)


class PrivoptClassifier(PrivoptEstimator):
    """A binary classifier: ``score`` is the accuracy; tags as the module docstring says."""

    _estimator_type = "classifier"
    #: Private estimators may score below scikit-learn's thresholds.
    _poor_score = True
    #: Non-private references draw no randomness.
    _deterministic = False

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.classifier_tags = ClassifierTags(multi_class=False, poor_score=self._poor_score)
        tags.target_tags.required = True
        tags.input_tags.sparse = False
        rs = getattr(self, "random_state", None)
        tags.non_deterministic = not (self._deterministic or isinstance(rs, numbers.Integral))
        return tags

    def predict(self, X):      # pragma: no cover - every classifier defines it
        raise NotImplementedError

    def score(self, X, y, sample_weight=None) -> float:
        """The accuracy of ``predict(X)`` against ``y``: the (``sample_weight``-weighted)
        fraction of the rows predicted right (scikit-learn's ``accuracy_score``)."""
        pred = self.predict(X)
        y = _labels_1d(y, warn=False)
        if len(y) != len(pred):
            raise ParameterError(f"y: {len(y)} labels for {len(pred)} rows of X; give one label per row.", "y")
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
        if weights is not None and weights.shape != y.shape:
            raise ParameterError(f"sample_weight: {weights.size} weights for {len(y)} rows; give one per row.",
                                 "sample_weight")
        return float(np.average(np.asarray(pred) == y, weights=weights))



#: The containers ``set_output(transform=...)`` accepts, as scikit-learn's.
_OUTPUT_CONTAINERS = ("default", "pandas", "polars")


class PrivoptTransformer(PrivoptEstimator):
    """A transformer: ``fit_transform``, ``set_output`` and the transformer tags, as
    scikit-learn's ``TransformerMixin`` gives them.  ``transform`` returns an array,
    or the container ``set_output(transform=...)`` (or scikit-learn's global
    ``transform_output``) asks for: a pandas or polars frame named by
    ``get_feature_names_out`` (pandas keeps a DataFrame input's index), as scikit-learn's
    own transformers return it."""

    #: scikit-learn's marker that ``transform`` is wrapped by the output configuration.
    _sklearn_auto_wrap_output_keys = {"transform"}
    #: The output names every transformer defines (read by :meth:`_wrap_output`).
    get_feature_names_out: Callable[..., Any]

    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y, **fit_params).transform(X)

    def set_output(self, *, transform=None):
        """The container of ``transform``'s output: "default" (an array), "pandas" or
        "polars" (with the names of ``get_feature_names_out``); None leaves it as it is."""
        if transform is not None:
            if transform not in _OUTPUT_CONTAINERS:
                raise ParameterError(f"set_output: transform={transform!r}; use one of "
                                     f"{', '.join(map(repr, _OUTPUT_CONTAINERS))} (or None to leave it).", "transform")
            self._sklearn_output_config = {"transform": transform}     # scikit-learn's attribute: clone keeps it
        return self

    def _wrap_output(self, out: np.ndarray, X):
        """``out`` in the configured container (:meth:`set_output`); scikit-learn's global
        configuration is read only when scikit-learn is loaded (else it was never set)."""
        wanted = getattr(self, "_sklearn_output_config", {}).get("transform")
        if wanted is None and "sklearn" in sys.modules:
            wanted = sys.modules["sklearn"].get_config().get("transform_output", "default")
        if wanted in (None, "default"):
            return out
        names = [str(name) for name in self.get_feature_names_out()]
        if wanted == "polars":
            import polars

            return polars.DataFrame(out, schema=names, orient="row")
        import pandas

        index = X.index if isinstance(X, pandas.DataFrame) else None
        return pandas.DataFrame(out, columns=names, index=index)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags

# -- input checks ---------------------------------------------------------------------------------

def check_fitted(estimator, attribute: str) -> None:
    """Raise scikit-learn's ``NotFittedError`` (a ValueError and an AttributeError)
    unless ``estimator`` has ``attribute``, i.e. has been fitted.  scikit-learn is
    imported on this error path only: its class is the one users catch."""
    if hasattr(estimator, attribute):
        return
    from sklearn.exceptions import NotFittedError

    raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
                         "appropriate arguments before using this estimator.")


#: Why a private fit takes no per-record weights, and what to do instead.
SAMPLE_WEIGHT_REFUSAL = (
    "sample_weight: {cls}.fit takes no per-record weights: the privacy guarantee bounds what one record "
    "changes, and a weight would scale one record's influence (a record of weight 10 counts as ten records), "
    "beyond the calibrated noise. Fit on the records as they are (drop sample_weight); weights chosen from "
    "the data are private data too.")


def refuse_fit_params(estimator, fit_params: dict) -> None:
    """Refuse keyword arguments of ``fit`` beyond X and y, before anything is read, naming
    them and the fix: ``sample_weight`` (scikit-learn's, or a Pipeline's ``clf__sample_weight``)
    with :data:`SAMPLE_WEIGHT_REFUSAL`, any other as a constructor parameter given to fit, where
    Python's ``TypeError`` named neither (nor, for the baselines, the estimator's own class)."""
    if not fit_params:
        return
    cls = type(estimator).__name__
    if "sample_weight" in fit_params:
        raise ParameterTypeError(SAMPLE_WEIGHT_REFUSAL.format(cls=cls), "sample_weight")
    names = sorted(fit_params)
    known = sorted(set(names) & set(estimator.get_params(deep=False)))
    how = (f"{', '.join(known)} {'is a parameter' if len(known) == 1 else 'are parameters'} of the estimator: "
           f"give {'it' if len(known) == 1 else 'them'} to its constructor ({cls}({known[0]}=...)) or to "
           "set_params" if known else f"{cls}'s parameters are listed by get_params()")
    raise ParameterTypeError(f"{cls}.fit takes X and y only, got also {', '.join(names)}; {how}.", names[0])


def check_public_input(X, name: str = "X") -> None:
    """What a fit may check of ``X`` before reading any value of it: its type, its
    number of rows (public under replace-one) and its schema.  A scipy sparse matrix, an
    ``X`` with no row, repeated column names and columns typed as dates or time spans are
    refused naming ``name`` and the fix, before a ledger reserves the fit (so the refusal
    costs nothing); everything else is :func:`validate_fit`'s."""
    check_unique_columns(X, name)
    check_time_features(X, name)
    if _is_sparse(X):
        raise ParameterTypeError(
            f"{name}: a sparse matrix ({type(X).__name__}); privopt's estimators take a dense array of "
            f"numbers. Pass {_densified(X, name)} (or select fewer columns first if it does not fit in memory).",
            name)
    shape = getattr(X, "shape", None)
    try:
        rows = int(shape[0]) if shape is not None and len(shape) > 0 else len(X)
    except TypeError:
        return          # not a table: validate_fit names what it is
    if rows == 0:
        raise ParameterError(f"{name}: it has no rows; a fit needs at least one record.", name)


def _densified(X, name: str = "X") -> str:
    """How to make ``X`` dense: a DataFrame of sparse columns (``pd.get_dummies(..., sparse=True)``)
    has no ``toarray``, its ``.sparse`` accessor has ``to_dense``."""
    return f"{name}.sparse.to_dense()" if hasattr(X, "columns") and hasattr(X, "sparse") else f"{name}.toarray()"


def _is_sparse(X) -> bool:
    """A scipy sparse matrix or array, or a DataFrame all of whose columns are sparse
    (pandas' ``.sparse`` accessor exists only then), without importing either library."""
    return (hasattr(X, "tocsr") and hasattr(X, "nnz")) or (hasattr(X, "columns") and hasattr(X, "sparse"))


def _feature_names(X):
    """X's column names (an object array) when X is a data frame whose columns are all
    strings, else None: scikit-learn's rule (narwhals recognises the data frame libraries,
    as in scikit-learn; without narwhals, anything with ``columns`` is one).  Mixed
    string and non-string names are refused, as scikit-learn refuses them."""
    if isinstance(X, (np.ndarray, list, tuple)) or not (hasattr(X, "columns") or hasattr(X, "column_names")):
        return None
    try:
        import narwhals.stable.v2 as nw     # scikit-learn's own dependency; ~0.05 s, for data frames only
    except ImportError:
        columns = getattr(X, "columns", None)
        names = None if columns is None else np.asarray(list(columns), dtype=object)
    else:
        names = np.asarray(nw.from_native(X).columns, dtype=object) if nw.dependencies.is_into_dataframe(X) \
            else None
    if names is None or len(names) == 0:
        return None
    types = sorted({type(v).__qualname__ for v in names})
    if len(types) > 1 and "str" in types:
        raise ParameterTypeError(
            "X: feature names are only supported if all input features have string names, but your input has "
            f"{types} as feature name / column name types. Convert them all to strings (X.columns = "
            "X.columns.astype(str)), or remove the column names.", "X")
    return names if types == ["str"] else None


def _check_feature_names(est, X, *, reset: bool) -> None:
    """Set (``reset``: fit) or check (predict) ``feature_names_in_``: scikit-learn's
    ``_check_feature_names``, its warnings and its error message."""
    names = _feature_names(X)
    if reset:
        if names is not None:
            est.feature_names_in_ = names
        elif hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        return
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is None and names is None:
        return
    cls = type(est).__name__
    if fitted is None:
        warnings.warn(f"X has feature names, but {cls} was fitted without feature names", UserWarning,
                      stacklevel=user_stacklevel())
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {cls} was fitted with feature names", UserWarning,
                      stacklevel=user_stacklevel())
        return
    if len(fitted) == len(names) and np.all(fitted == names):
        return
    unseen, missing = sorted(set(names) - set(fitted)), sorted(set(fitted) - set(names))

    def listed(found) -> str:
        return "".join(f"- {n}\n" for n in found[:5]) + ("- ...\n" if len(found) > 5 else "")

    message = "The feature names should match those that were passed during fit.\n"
    message += f"Feature names unseen at fit time:\n{listed(unseen)}" if unseen else ""
    message += f"Feature names seen at fit time, yet now missing:\n{listed(missing)}" if missing else ""
    message += "" if unseen or missing else "Feature names must be in the same order as they were in fit.\n"
    raise ParameterError(f"X: {message}", "X")


def _float_table(est, X, *, missing: str = "refuse") -> np.ndarray:
    """X as a new 2-D float64 array (the caller's object is never touched), refused
    as scikit-learn's ``check_array`` refuses it: sparse, complex, not 2-D, no row or
    no column; text and missing values are refused before, naming their columns."""
    cls = type(est).__name__
    if _is_sparse(X):
        raise ParameterTypeError(f"X: sparse data was passed, but dense data is required; pass {_densified(X)} (or "
                                 "select fewer columns first).", "X")
    if isinstance(X, np.matrix):
        raise ParameterTypeError("X: np.matrix is not supported; convert it with np.asarray(X).", "X")
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            arr = np.array(X, dtype=np.float64, copy=True)
        except np.exceptions.ComplexWarning as exc:
            raise ParameterError("X: Complex data not supported; give real numbers.", "X") from exc
        except (TypeError, ValueError) as exc:
            raise ParameterTypeError(f"X: {exc}; give a 2-D array of numbers.", "X") from exc
    if arr.ndim != 2:
        got = "scalar" if arr.ndim == 0 else f"{arr.ndim}D"
        reshape = (" Reshape your data either using X.reshape(-1, 1) if your data has a single feature or "
                   "X.reshape(1, -1) if it contains a single sample.") if arr.ndim < 2 else ""
        raise ParameterError(f"X: expected a 2D array (n_samples, n_features), got a {got} array of shape "
                             f"{arr.shape} instead (found array with dim {arr.ndim}, while dim <= 2 is required "
                             f"by {cls}).{reshape}", "X")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        what = "sample(s)" if arr.shape[0] < 1 else "feature(s)"
        raise ParameterError(f"X: Found array with 0 {what} (shape={arr.shape}) while a minimum of 1 is required "
                             f"by {cls}.", "X")
    finite = np.isfinite(arr)
    if not finite.all():
        if missing == "pass":
            return np.where(finite, arr, np.nan)
        check_missing_features(arr, "X")        # names the columns
    return arr


def _check_n_features(est, X: np.ndarray, *, reset: bool) -> None:
    """Set (fit) or check (predict) ``n_features_in_``, with scikit-learn's message."""
    if reset:
        est.n_features_in_ = X.shape[1]
    elif hasattr(est, "n_features_in_") and X.shape[1] != est.n_features_in_:
        raise ParameterError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                             f"{est.n_features_in_} features as input.", "X")


def validate_table(est, X, *, reset: bool, text_fix: str | None = None, missing: str = "refuse") -> np.ndarray:
    """X checked, converted to a new float64 array, and its shape and names recorded
    (``reset``: fit) or compared (predict); ``text_fix``: the fix a text column's
    refusal suggests (privopt's default: one-hot encode it).  ``missing="pass"`` (a
    transformer's): NaN and infinite values are not refused but returned as NaN, so that
    the private step after it refuses them once it is charged (a refusal here, before any
    ledger, would say for free whether a value is missing)."""
    check_unique_columns(X, "X")     # the schema first: repeated column names, dates and time spans
    check_time_features(X, "X")
    if reset:       # a fit: columns named like an identifier (from the names alone) are worth a word
        warn_identifier_columns(X, "X")
    if missing == "pass":     # values that are not numbers become NaN: only text typed as such is refused
        if _is_sparse(X) or isinstance(X, np.matrix):
            _float_table(est, X)        # refused by its type, as below
        _check_feature_names(est, X, reset=reset)
        try:
            floats = floats_or_nan(X, "X", **({} if text_fix is None else {"fix": text_fix}))
        except (TypeError, ValueError) as exc:
            if isinstance(exc, (ParameterError, ParameterTypeError)):
                raise
            raise ParameterTypeError(f"X: {exc}; give a 2-D array of numbers.", "X") from exc
        arr = _float_table(est, floats, missing="pass")
        _check_n_features(est, arr, reset=reset)
        return arr
    if text_fix is None:
        check_numeric_features(X, "X")   # text, even numbers written as text, names its column
    else:
        check_numeric_features(X, "X", fix=text_fix)
    check_missing_features(X, "X")   # NaN and inf name their columns and a private way out
    _check_feature_names(est, X, reset=reset)
    arr = _float_table(est, X)
    _check_n_features(est, arr, reset=reset)
    return arr


def _labels_1d(y, *, warn: bool) -> np.ndarray:
    """y as a 1-D array; a column vector (n, 1) is flattened, with scikit-learn's
    ``DataConversionWarning`` when ``warn`` (scikit-learn imported on that path only)."""
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        if warn:
            from sklearn.exceptions import DataConversionWarning

            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                          "of y to (n_samples, ), for example using ravel().", DataConversionWarning,
                          stacklevel=user_stacklevel())
        return arr.ravel()
    if arr.ndim != 1:
        raise ParameterError(f"y should be a 1d array, got an array of shape {arr.shape} instead.", "y")
    return arr


def _label_kind(y: np.ndarray) -> str:
    """scikit-learn's ``type_of_target`` of a 1-D y: "binary" (at most two values),
    "multiclass", "continuous" (floats that are not whole numbers) or "unknown"
    (objects that are not strings)."""
    if y.size and isinstance(y[0], bytes):
        raise ParameterTypeError("y: labels given as bytes are not supported; convert them to strings or "
                                 "integers.", "y")
    if y.dtype.kind == "c":
        raise ParameterError("y: Complex data not supported; give the class labels.", "y")
    if y.dtype == object and y.size and not isinstance(y[0], str):
        return "unknown"
    if y.dtype.kind == "f" and np.any(y != y.astype(np.int64)):
        return "continuous"
    return "multiclass" if np.unique(y).size > 2 else "binary"


def _validate_y(y, n_rows: int) -> np.ndarray:
    """y as a 1-D array of class labels, one per row of X, refused otherwise naming y."""
    y = _labels_1d(y, warn=True)
    check_labels_given(y, "y")     # a missing label names y, not numpy's TypeError comparing None to a str
    if len(y) != n_rows:
        raise ParameterError(f"y: Found input variables with inconsistent numbers of samples: [{n_rows}, "
                             f"{len(y)}] (rows of X, labels of y); give one label per row.", "y")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        refuse_labels("y: Input y contains infinity or a value too large for dtype('float64'); every label "
                      "must be a class.", "y")
    kind = _label_kind(y)
    if kind in ("continuous", "unknown"):
        refuse_labels(f"y: Unknown label type: {kind}. Maybe you are trying to fit a classifier, which "
                      "expects discrete classes on a regression target with continuous values.", "y")
    return y


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
    declared = check_declared_classes(classes)     # the form, before X or y is read
    if y is None:
        raise ParameterError(f"{type(est).__name__} requires y to be passed, but the target y is None.", "y")
    X = validate_table(est, X, reset=True)
    y = _validate_y(y, X.shape[0])
    if declared is not None:
        check_labels_within(y, declared, "y")
        return X, declared, np.where(y == declared[1], 1, -1).astype(int)
    classes = np.unique(y)
    check_two_classes(classes, "y")
    y_pm = np.where(y == classes[1], 1, -1).astype(int)
    return X, classes, y_pm


def validate_predict(est, X):
    """A float copy of X checked against the fitted ``n_features_in_`` (and
    ``feature_names_in_``)."""
    return validate_table(est, X, reset=False)
