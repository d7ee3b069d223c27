"""The Adult experiment of [NRVW20] Section 5: accuracy vs epsilon of OPDisc,
RSPM, private selection and private convex baselines, with run times, on the
UCI Adult data (:func:`run_adult_experiment`, ``privopt experiment adult``).

The Adult-specific wiring lives here (the data set, its grid steps, the figures'
title); the runner that works on any data set is :mod:`._runner`, the results file
:mod:`._store`, the summary :mod:`._summary` and the method names :mod:`._methods`.
Their public names are importable from this module as before.
"""

from __future__ import annotations

from ._methods import (
    DETERMINISTIC_METHODS,
    METHOD_DESCRIPTIONS,
    MIP_METHODS,
    REFERENCE_TIME_LIMIT,
    SELECTION_METHODS,
    TUNED_METHODS,
    ZERO_ONE_DEFAULT_REFERENCE,
    ZERO_ONE_REFERENCE,
    ZERO_ONE_REFERENCES,
    available_methods,
    method_label,
    method_revision,
)
from ._runner import Task, run_experiment, task_seed
# the runner's private helpers, as before the split (tests build one run's estimator with them)
from ._runner import _make_estimator as _make_estimator
from ._runner import _tuned as _tuned
from ._store import COLUMNS, SettingMismatchError, StaleResultsError, experiment_setting, read_results
from ._summary import format_summary, summarize, write_summary
from .._validation import check_int
from ..datasets import load_adult

__all__ = [
    "COLUMNS",
    "available_methods",
    "format_summary",
    "run_experiment",
    "run_adult_experiment",
    "adult_levels",
    "read_results",
    "write_summary",
    "summarize",
    "task_seed",
    "method_label",
    "method_revision",
    "experiment_setting",
    "SettingMismatchError",
    "StaleResultsError",
    "Task",
    "METHOD_DESCRIPTIONS",
    "MIP_METHODS",
    "SELECTION_METHODS",
    "TUNED_METHODS",
    "ZERO_ONE_REFERENCE",
    "ZERO_ONE_DEFAULT_REFERENCE",
    "ZERO_ONE_REFERENCES",
    "DETERMINISTIC_METHODS",
    "REFERENCE_TIME_LIMIT",
]


def adult_levels(feature_blocks, d, numeric_levels: int = 4) -> list[int]:
    """Grid steps per Adult feature: 1 for one-hot columns (exact), ``numeric_levels``
    for the scaled numeric columns."""
    levels = [1] * d
    for cols in feature_blocks.values():
        if len(cols) == 1:
            levels[cols[0]] = numeric_levels
    return levels


def run_adult_experiment(
    *, methods=("default", "opdisc", "rspm", "dpsgd"), epsilons=(0.1, 0.5, 1.0), runs=15, solver="highs",
    time_limit=None, scheduler=None, out="results/adult", seed=0, data_home=None, n_train=None,
    numeric_levels=4, progress=True, max_workers=None, figures=True, calibration="proven",
    norm_bound=None, rerun_stale=False,
) -> list[dict]:
    """The Adult experiment of [NRVW20] Section 5: balanced n = 15682,
    d = 23, a seeded 80/20 held-out split, delta = 1/n^2.  ``n_train``
    subsamples the training set (the first n_train of the shuffled rows);
    ``calibration="paper"`` (or ``["proven", "paper"]``) runs OPDisc with
    Algorithm 1's noise scale, as the paper did; ``norm_bound`` replaces the
    paper's ball D = sqrt(23) (grid -floor(D)..floor(D)); ``rerun_stale``: see
    :func:`run_experiment`."""
    n_train = check_int(n_train, "n_train", minimum=2, allow_none=True)   # before the data are read
    numeric_levels = check_int(numeric_levels, "numeric_levels", minimum=1)
    data = load_adult(data_home, random_state=seed)
    X_train, y_train = data.X_train, data.y_train
    if n_train is not None and n_train < len(y_train):
        X_train, y_train = X_train[:n_train], y_train[:n_train]  # rows come shuffled
    levels = adult_levels(data.feature_blocks, X_train.shape[1], numeric_levels)
    return run_experiment(
        X_train, y_train, data.X_test, data.y_test, methods=list(methods), epsilons=epsilons, runs=runs,
        solver=solver, time_limit=time_limit, out=out, seed=seed, scheduler=scheduler,
        max_workers=max_workers, levels=levels,
        progress=progress, figures=figures, calibration=calibration, norm_bound=norm_bound,
        rerun_stale=rerun_stale, title=f"Adult (n_train = {len(y_train)}, d = {X_train.shape[1]}"
              + (f", OPDisc D = {norm_bound:g})" if norm_bound is not None else ")"))
