"""Synthetic classification data with a planted integer halfspace.

Used by ``privopt demo`` when the Adult files are not available, and by tests
that need data whose best classifier is known.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._random import check_random_state
from .._validation import check_int, check_real
from ..exceptions import ParameterError, ParameterTypeError
from ._base import Bunch

__all__ = ["make_planted_halfspace"]


def _check_int_values(values, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except Exception as exc:  # pragma: no cover - numpy accepts almost anything
        raise ParameterTypeError(f"{name} must be a sequence of integers: {exc}", name) from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1-D sequence of integers, got {values!r}.", name)
    if arr.dtype.kind == "b" or not all(
        isinstance(v, numbers.Real) and float(v).is_integer() for v in arr.tolist()
    ):
        raise ParameterTypeError(f"{name} must hold integers, got {values!r}.", name)
    out = np.unique(arr.astype(np.int64))
    return out


def make_planted_halfspace(
    n: int = 1000,
    d: int = 10,
    *,
    n_test: int = 0,
    feature_values=(0, 1),
    weight_values=(-1, 0, 1),
    threshold: float = 0,
    noise: float = 0.1,
    random_state=0,
) -> Bunch:
    """Labelled points from a planted integer halfspace, with label noise.

    * Features: each ``x_ij`` is drawn independently and uniformly from
      ``feature_values`` (default {0, 1}; {-1, 0, 1} is another natural
      choice).  They are small integers, so identical rows are common and
      merge in privopt's 0/1-loss MILP, and scores <w, x> are integers.
    * Planted weights: each ``w*_j`` is drawn uniformly from
      ``weight_values`` (default {-1, 0, 1}), redrawn if all are zero.  With
      the default, w* lies in RSPM's domain {-1, 0, 1}^d and in OPDisc's
      {-B..B}^d with ||w||_2 <= sqrt(d) ([NRVW20] Section 5).
    * Clean labels, with this tie rule: **+1 iff <w*, x> >= threshold**, else
      -1 (the rule privopt's linear classifiers use).  With the defaults
      (threshold 0, x in {0, 1}^d) a score of exactly 0 -- e.g. x = 0 --
      is labelled +1.
    * Label noise: each label is flipped independently with probability
      ``noise``; w* then has expected 0/1 error ``noise``.

    Parameters
    ----------
    n : int >= 1
        Training points.
    d : int >= 1
        Features.
    n_test : int >= 0, default 0
        Held-out points from the same distribution (same w*).
    feature_values, weight_values : sequences of integers
    threshold : real, default 0
    noise : float in [0, 0.5), default 0.1
    random_state : int, numpy Generator or None, default 0
        Seeds everything; ``None`` uses the secure source.

    Returns
    -------
    Bunch with the keys of :func:`~privopt.datasets.load_adult` (``X_train``,
    ``y_train``, ``X_test``, ``y_test``, ``feature_names``, ``description``)
    plus ``w_star`` (int64), ``threshold``, ``noise`` and ``flipped_train`` /
    ``flipped_test`` (which labels the noise flipped).
    """
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=0)
    fv = _check_int_values(feature_values, "feature_values")
    wv = _check_int_values(weight_values, "weight_values")
    if np.all(wv == 0):
        raise ParameterError("weight_values must contain a non-zero value.", "weight_values")
    threshold = check_real(threshold, "threshold")
    noise = check_real(noise, "noise")
    if not 0.0 <= noise < 0.5:
        raise ParameterError(
            f"noise must lie in [0, 0.5), got {noise!r} (at 0.5 the labels carry no signal).",
            "noise",
        )
    rng = check_random_state(random_state)

    w_star = np.zeros(d, dtype=np.int64)
    while not np.any(w_star):
        w_star = wv[np.asarray(rng.integers(0, wv.size, size=d))]

    def draw(m):
        X = fv[np.asarray(rng.integers(0, fv.size, size=(m, d)))].reshape(m, d)
        clean = np.where(X @ w_star >= threshold, 1, -1).astype(np.int64)
        flipped = np.asarray(rng.random(m)) < noise
        return X.astype(np.float64), np.where(flipped, -clean, clean), flipped

    X_train, y_train, f_train = draw(n)
    X_test, y_test, f_test = draw(n_test) if n_test else (
        np.empty((0, d)), np.empty(0, dtype=np.int64), np.empty(0, dtype=bool))

    description = (
        f"Synthetic planted halfspace: n = {n} training and {n_test} held-out points, d = {d}, "
        f"features uniform on {fv.tolist()}, planted w* uniform on {wv.tolist()} "
        f"(w* = {w_star.tolist()}), label +1 iff <w*, x> >= {threshold:g} else -1, each label "
        f"flipped with probability {noise:g} ({int(f_train.sum())} flipped in training), "
        f"random_state={random_state!r}."
    )
    return Bunch(
        X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
        feature_names=[f"x{j}" for j in range(d)],
        w_star=w_star, threshold=threshold, noise=noise,
        flipped_train=f_train, flipped_test=f_test,
        random_state=random_state, description=description,
    )
