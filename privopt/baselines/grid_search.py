"""Hyperparameter grid search for the baselines -- which is NOT private.

The paper's baseline (NRVW20, Section 5) is DP-SGD
logistic regression with a grid search over clip norm, batch size and
learning rate.  Every run in the grid is (epsilon, delta)-DP, but **choosing
the best run by its accuracy on the private data is not itself private**: the
selected model is not covered by (epsilon, delta), and neither is the total of
k runs plus the selection.  Private tuning exists (Liu and Talwar, STOC 2019;
Papernot and Steinke, ICLR 2022) and is not implemented here.  Use this helper
to reproduce the paper's (optimistic) baseline, with a public validation set
where one exists, and report it as such.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from .._random import check_random_state
from .._validation import check_array_2d, check_probability
from ..exceptions import ParameterError, ParameterTypeError, PrivacyLeakWarning
from .dpsgd import DPSGDLogisticRegression

__all__ = ["DEFAULT_DPSGD_GRID", "GridSearchResult", "private_grid_search", "dpsgd_grid_search"]

#: A grid over the three hyperparameters the paper searches.  The values the
#: paper's authors searched are not given in the paper; these are ours.
DEFAULT_DPSGD_GRID = {
    "clip_norm": (0.1, 0.5, 1.0),
    "batch_size": (64, 256, 1024),
    "learning_rate": (1.0, 4.0, 16.0),
}

_WARNING = (
    "choosing hyperparameters on the private data is not itself private: each run is "
    "(epsilon, delta)-DP, but the selected model and the {k} runs together are not covered "
    "by (epsilon, delta). Report the result as a non-private tuning of a private algorithm."
)


@dataclass
class GridSearchResult:
    """What :func:`private_grid_search` found (NOT a private release)."""

    best_params: dict
    best_score: float
    best_estimator: object | None
    results: list = field(default_factory=list)  # (params, validation accuracy)


def private_grid_search(estimator, param_grid, X, y, *, X_val=None, y_val=None,
                        validation_fraction=0.25, refit=True, random_state=None):
    """Fit ``clone(estimator)`` with every combination in ``param_grid`` and
    keep the one with the best validation accuracy.  **Not private** (module
    docstring); always emits :class:`~privopt.exceptions.PrivacyLeakWarning`.

    Without ``X_val``/``y_val`` a random ``validation_fraction`` of (X, y) is
    held out for scoring.  With ``refit`` the best combination is fitted
    again on all of (X, y) and returned as ``best_estimator``.  An int
    ``random_state`` makes the split and every run reproducible; None uses
    the secure generator for the split and ``random_state=None`` (secure
    noise) for every run.
    """
    if not isinstance(param_grid, (dict, list)):
        raise ParameterTypeError("param_grid must be a dict or a list of dicts.", "param_grid")
    grid = list(ParameterGrid(param_grid))
    if not grid:
        raise ParameterError("param_grid is empty.", "param_grid")
    validation_fraction = check_probability(validation_fraction, "validation_fraction")
    rng = check_random_state(random_state)
    X = check_array_2d(X, "X")
    y = np.asarray(y).copy()
    if (X_val is None) != (y_val is None):
        raise ParameterError("give both X_val and y_val, or neither.", "X_val")
    warnings.warn(_WARNING.format(k=len(grid)), PrivacyLeakWarning, stacklevel=2)

    if X_val is None:
        perm = np.asarray(rng.permutation(X.shape[0]))
        n_val = max(1, int(round(validation_fraction * X.shape[0])))
        val, tr = perm[:n_val], perm[n_val:]
        X_tr, y_tr, X_va, y_va = X[tr], y[tr], X[val], y[val]
    else:
        X_tr, y_tr = X, y
        X_va, y_va = check_array_2d(X_val, "X_val"), np.asarray(y_val)

    seeds = (np.random.SeedSequence(int(random_state)).spawn(len(grid) + 1)
             if isinstance(random_state, (int, np.integer)) else [None] * (len(grid) + 1))

    results = []
    for params, seed in zip(grid, seeds):
        est = clone(estimator).set_params(**params)
        if "random_state" in est.get_params():
            est.set_params(random_state=None if seed is None else np.random.default_rng(seed))
        est.fit(X_tr, y_tr)
        results.append((params, float(est.score(X_va, y_va))))
    best_params, best_score = max(results, key=lambda r: r[1])
    best = None
    if refit:
        best = clone(estimator).set_params(**best_params)
        if "random_state" in best.get_params():
            best.set_params(random_state=None if seeds[-1] is None
                            else np.random.default_rng(seeds[-1]))
        best.fit(X, y)
    return GridSearchResult(best_params, best_score, best, results)


def dpsgd_grid_search(X, y, *, epsilon, delta, param_grid=None, X_val=None, y_val=None,
                      validation_fraction=0.25, refit=True, random_state=None, **params):
    """The paper's DP-SGD baseline: grid search of
    :class:`~privopt.baselines.DPSGDLogisticRegression` over clip norm, batch
    size and learning rate (``param_grid``, default
    :data:`DEFAULT_DPSGD_GRID`); other keyword arguments (``epochs``,
    ``bounds``, ...) are passed to the estimator.

    **Choosing hyperparameters on the private data is not itself private**: each
    run is (epsilon, delta)-DP, the selection is not; a
    :class:`~privopt.exceptions.PrivacyLeakWarning` says so every time.
    """
    est = DPSGDLogisticRegression(epsilon=epsilon, delta=delta, **params)
    return private_grid_search(
        est, DEFAULT_DPSGD_GRID if param_grid is None else param_grid, X, y,
        X_val=X_val, y_val=y_val, validation_fraction=validation_fraction, refit=refit,
        random_state=random_state,
    )
