"""Argument checks shared by the public API.

Each checker raises :class:`~privopt.exceptions.ParameterTypeError` for a
wrong type and :class:`~privopt.exceptions.ParameterError` for a wrong value,
naming the parameter and saying how to fix it.  They never modify their input.
"""

from __future__ import annotations

import math
import numbers
from typing import Literal, overload

import numpy as np

from .exceptions import ModelError, ParameterError, ParameterTypeError

__all__ = [
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
    "check_array_2d",
    "check_binary_labels",
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


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """The privacy parameter epsilon: a finite real number > 0."""
    return check_positive(
        epsilon, name, hint="epsilon is the privacy budget; typical values are 0.1 to 10."
    )


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


def check_array_2d(X, name: str = "X", *, min_rows: int = 1) -> np.ndarray:
    """A finite 2-D float array (a copy; the caller's array is never touched)."""
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
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values; remove or impute them.", name)
    return arr


def check_binary_labels(y, n_rows: int, name: str = "y"):
    """Return ``(classes, y_pm)`` with ``y_pm`` in {-1, +1} (``classes[1]`` -> +1)."""
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
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite values.", name)
    classes = np.unique(arr)
    if classes.size != 2:
        raise ParameterError(
            f"{name} must contain exactly two classes, found {classes.size} "
            f"({classes[:5].tolist()}); privopt's classifiers are binary.",
            name,
        )
    y_pm = np.where(arr == classes[1], 1, -1).astype(int)
    return classes, y_pm
