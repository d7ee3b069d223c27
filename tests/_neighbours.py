"""A neighbouring-table harness for the decisions a private fit must make from public quantities.

For a table D and a record index, :func:`neighbours` builds tables D' that differ from D in that
one record only (replace-one): a value no other record holds, the bounds' minimum or maximum, a
value outside the bounds (clipped by the feature map), a whole number where the rest are 0/1, a
flipped label, a copy of another record.  :func:`public_decisions` lists what a fitted estimator
or a :class:`~privopt.PrivateResult` exposes besides its release: which W's were offered and in
what order, the prior, the mechanism ``"auto"`` chose and why, the budget split, noise scales,
calibration constants, every field of ``result_.parameters`` that is not the released point or a
function of it, and the text of every warning emitted.  :func:`assert_same_decisions` fits both
tables with the same ``random_state`` and fails on any difference: a decision read from the data
would make the release's support or law depend on one record (a point offered on D and not on
D' has positive probability under D only; no epsilon covers it).

What is left out, and why, is named where it is left out (:data:`RELEASED`, :data:`CURATOR_ONLY`).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable

import numpy as np

from privopt.exceptions import ClippedFeaturesWarning

#: Attributes that are the release or a function of the released point (its W, its feature map,
#: its weights), so they may differ between neighbours by design.
RELEASED = frozenset({
    "coef_", "intercept_", "threshold_", "weights_", "points_",
    # the W the release was drawn from (a ladder's selection), its feature map and model facts
    "resolution_", "discretizer_", "model_info_",
    # the warm start's own release (its public decisions are compared separately)
    "warm_start_",
    # DPAGD's adaptive run: each step size and the number of steps are chosen by its noisy
    # max and noisy gradient tests (released, and charged, by its own accounting)
    "steps_", "n_iter_", "n_gradient_measurements_", "n_noisy_max_", "budget_log_", "rho_spent_",
})
#: A scoring system's risk table: counts released with discrete Laplace noise (its own share of
#: epsilon), so it is a release.
RELEASED = RELEASED | {"risk_table_"}
#: Fields of ``result_.parameters`` that are the released point or follow from it: the index of
#: the W chosen by a selection among W's, and that W's ball and dimension (compared where W is one).
RELEASED_PARAMETERS = frozenset({"resolution", "norm_bound", "dim", "weights"})
#: Warnings for whoever holds the data, documented as never part of a release: the clipping
#: count (:func:`privopt._validation.warn_clipped`, "it is for the data curator").
CURATOR_ONLY = (ClippedFeaturesWarning,)


def _plain(value):
    """A comparable form: arrays as tuples, dataclasses as dicts, floats exactly."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, tuple(np.asarray(value).ravel().tolist()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _parameters(parameters) -> dict:
    if parameters is None:
        return {}
    if dataclasses.is_dataclass(parameters):
        items = {f.name: getattr(parameters, f.name) for f in dataclasses.fields(parameters)}
    elif isinstance(parameters, dict):
        items = dict(parameters)
    else:
        items = {k: parameters[k] for k in parameters}
    chosen = "resolution" in items        # a selection among W's: the chosen W's facts are released
    out = {}
    for name, value in items.items():
        if name in RELEASED_PARAMETERS and (chosen or name == "weights"):
            continue
        if name in ("inner", "release") and value is not None:      # a wrapped release's own parameters
            out[name] = _parameters(value)
        else:
            out[name] = _plain(value)
    return out


def result_decisions(result) -> dict:
    """What a :class:`~privopt.PrivateResult` says besides its point: the mechanism, the
    epsilon and delta spent, the neighbouring relation, whether it is certified, and its
    parameters without the released ones (:data:`RELEASED_PARAMETERS`)."""
    return {"mechanism": result.mechanism, "epsilon": result.epsilon, "delta": result.delta,
            "neighbouring": result.neighbouring, "certified": result.certified,
            "parameters": _parameters(result.parameters)}


def public_decisions(est) -> dict:
    """Every fitted attribute (``name_``) of ``est`` that is not released (:data:`RELEASED`),
    the result's decisions (:func:`result_decisions`) and, where a warm start ran, its own."""
    single = len(getattr(est, "resolutions_", None) or ()) <= 1      # W was not chosen: its facts are public
    out = {}
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if name in RELEASED and not (single and name == "model_info_"):
            continue
        out[name] = result_decisions(value) if name == "result_" else _plain(value)
    warm = getattr(est, "warm_start_", None)
    if warm is not None:
        out["warm_start_"] = public_decisions(warm)
    return out


def fit_decisions(fit: Callable[[], object]) -> tuple[dict, tuple]:
    """(the decisions, the warnings (category, text)) of one call ``fit()``, the warnings
    of :data:`CURATOR_ONLY` left out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = fit()
    said = tuple((w.category.__name__, str(w.message)) for w in caught if not issubclass(w.category, CURATOR_ONLY))
    decisions = fitted if isinstance(fitted, dict) else public_decisions(fitted)
    return decisions, said


def neighbours(X: np.ndarray, y: np.ndarray, lo: float, hi: float, *, record: int = 0) -> dict:
    """Tables that differ from (X, y) in record ``record`` only, by name: ``new_value`` (a value
    no other record holds, inside the bounds), ``at_min`` and ``at_max`` (the bounds), ``outside``
    (far outside the bounds: clipped), ``whole_number`` (an integer inside the bounds that no
    other record holds where the table is 0/1), ``spread`` (the record's coordinates spread over
    lo..hi), ``spread_whole`` (the same rounded to whole numbers), ``flipped_label`` and
    ``duplicate`` (a copy of the next record)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    d = X.shape[1]

    def with_row(row, label=None):
        X2, y2 = X.copy(), y.copy()
        X2[record] = row
        if label is not None:
            y2[record] = label
        return X2, y2

    other = (record + 1) % X.shape[0]
    whole = np.floor(lo + 0.75 * (hi - lo))
    spread = np.linspace(lo, hi, d)
    return {
        "new_value": with_row(np.full(d, lo + 0.3183098861837907 * (hi - lo))),
        "at_min": with_row(np.full(d, lo)),
        "at_max": with_row(np.full(d, hi)),
        "outside": with_row(np.full(d, hi + 10.0 * (hi - lo))),
        "whole_number": with_row(np.full(d, whole)),
        "spread": with_row(spread),
        "spread_whole": with_row(np.rint(spread)),
        "flipped_label": with_row(X[record], 1 - y[record] if set(np.unique(y)) <= {0, 1} else -y[record]),
        "duplicate": with_row(X[other], y[other]),
    }


def differences(a: dict, b: dict, prefix: str = "") -> list[str]:
    """The keys (dotted) whose values differ between two decision records."""
    out = []
    for key in sorted(set(a) | set(b), key=str):
        va, vb = a.get(key, "<absent>"), b.get(key, "<absent>")
        if isinstance(va, dict) and isinstance(vb, dict):
            out += differences(va, vb, f"{prefix}{key}.")
        elif va != vb:
            out.append(f"{prefix}{key}: {str(va)[:160]} != {str(vb)[:160]}")
    return out


def assert_same_decisions(fit: Callable[[np.ndarray, np.ndarray], object], X, y, lo: float, hi: float,
                          *, skip: tuple[str, ...] = (), only: tuple[str, ...] | None = None) -> None:
    """Fit (X, y) and each neighbour of :func:`neighbours` (those named in ``only``, all
    but ``skip`` otherwise) with ``fit(X, y)`` (the same ``random_state`` inside) and fail
    listing every public decision or warning that differs."""
    base, said = fit_decisions(functools.partial(fit, X, y))
    failures = []
    for name, (X2, y2) in neighbours(X, y, lo, hi).items():
        if name in skip or (only is not None and name not in only):
            continue
        other, said2 = fit_decisions(functools.partial(fit, X2, y2))
        diff = differences(base, other)
        if said != said2:
            diff.append(f"warnings: {said} != {said2}")
        failures += [f"{name}: {line}" for line in diff]
    assert not failures, "decisions that read the private data:\n" + "\n".join(failures)


def ledger_state(ledger) -> dict:
    """What a ledger shows after a call: what is spent and left, and each entry's name,
    mechanism, (epsilon, delta) and number (its time left out: a clock, not the data)."""
    return {"spent": (ledger.spent.epsilon, ledger.spent.delta),
            "remaining": (ledger.remaining.epsilon, ledger.remaining.delta),
            "releases": tuple((r.what, r.mechanism, r.epsilon, r.delta, r.entry) for r in ledger.releases)}


def ledger_outcome(fit: Callable, X, y, budget: tuple[float, float]) -> tuple[dict, object]:
    """(the state of a fresh ledger of ``budget`` after ``fit(X, y, ledger)``, the outcome:
    ``"fitted"`` or the exception's (type, message))."""
    from privopt import PrivacyLedger

    ledger = PrivacyLedger(*budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit(X, y, ledger)
            outcome: object = "fitted"
        except Exception as exc:        # noqa: BLE001 - an exception is an outcome the analyst sees
            outcome = (type(exc).__name__, str(exc))
    return ledger_state(ledger), outcome


def failing_neighbours(X: np.ndarray, y: np.ndarray, *, record: int = 0) -> dict:
    """Tables that differ from (X, y) in one record and that a private fit refuses once it
    has read them: ``missing`` (a NaN), ``missing_elsewhere`` (a NaN in another record and
    column: the same refusal from another table), ``infinite`` (an inf)."""
    X = np.asarray(X, dtype=float)

    def with_value(i, j, value):
        X2 = X.copy()
        X2[i, j] = value
        return X2, np.asarray(y).copy()

    return {"missing": with_value(record, 0, np.nan), "missing_elsewhere": with_value(record + 1, 1, np.nan),
            "infinite": with_value(record, 0, np.inf)}
