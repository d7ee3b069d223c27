"""The results store: ``results.csv`` of a sweep (one row per finished run, appended as
runs finish), read back with numbers parsed, rewritten with today's columns, and the
setting fingerprint that decides whether a file may be resumed."""

from __future__ import annotations

import csv
import math
import os

import numpy as np

__all__ = [
    "COLUMNS",
    "read_results",
    "experiment_setting",
    "SettingMismatchError",
    "StaleResultsError",
]

COLUMNS = [
    "method", "epsilon", "run", "train_accuracy", "test_accuracy", "seconds", "certified",
    "status", "delta", "n_train", "n_test", "solver", "seed", "calibration", "setting", "message",
    "neighbouring", "revision",
]


def read_results(path) -> list[dict]:
    """Rows of a results.csv (numbers parsed), or [] when it does not exist."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            for k in ("epsilon", "train_accuracy", "test_accuracy", "seconds", "delta"):
                r[k] = float(r[k]) if r.get(k) not in (None, "") else math.nan
            r["run"] = int(r["run"])
            r["certified"] = {"True": True, "False": False}.get(r.get("certified", ""), None)
            rows.append(r)
    return rows


def rewrite_results(path, rows) -> None:
    """Write ``rows`` to ``path`` with the columns of :data:`COLUMNS` (empty where a row of
    an older file has no value)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for r in rows:
            out = {k: r.get(k, "") for k in COLUMNS}
            out["certified"] = {True: "True", False: "False", None: ""}.get(r.get("certified"), "")
            writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()})
    os.replace(tmp, path)


def done_keys(rows) -> set:
    return {(r["method"], round(r["epsilon"], 9), r["run"], r.get("calibration") or "") for r in rows}


def experiment_setting(X_train, y_train, X_test, y_test, *, solver, time_limit, levels, baseline_params,
                       seed, norm_bound=None) -> str:
    """A short fingerprint of everything that changes a run's result except
    (method, epsilon, run, calibration): the data (a hash of the arrays, so
    their size too), solver, time limit, levels, baseline parameters, OPDisc's
    ball and the sweep's seed.  A results file is resumed only with the same
    setting."""
    import hashlib

    h = hashlib.sha256()
    for a in (X_train, y_train, X_test, y_test):
        arr = np.ascontiguousarray(np.asarray(a))
        h.update(str((arr.shape, arr.dtype.str)).encode())
        h.update(arr.tobytes())
    key: tuple = (solver, time_limit, None if levels is None else tuple(levels),
           tuple(sorted((baseline_params or {}).items())), seed)
    if norm_bound is not None:  # settings of sweeps with the paper's ball keep their old fingerprint
        key += (float(norm_bound),)
    h.update(repr(key).encode())
    return h.hexdigest()[:12]


class SettingMismatchError(ValueError):
    """``out/results.csv`` holds runs of another setting (data, solver, ...)."""


class StaleResultsError(SettingMismatchError):
    """``out/results.csv`` holds runs of a requested method computed by another
    revision of privopt's code (:func:`method_revision`)."""
