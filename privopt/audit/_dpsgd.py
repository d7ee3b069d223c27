"""Audit of DP-SGD's last iterate after one step: the floating-point attack.

With ``averaging="last"`` and one full-batch step from w = 0, DP-SGD releases
``w_1 = -eta g~``, the noisy gradient sum over the batch rescaled: a number
plus noise.  Computed in doubles with continuous Gaussian noise (the
estimator before its gradients went on a grid), the doubles w_1 can take
depend on the clipped sum, so an output impossible under the neighbour rules
it out (Mironov, CCS 2012).  :class:`DPSGDStepTarget` replays that attack on
two neighbouring data sets (one label flipped) exactly:

* ``release="grid"`` (as shipped): the estimator's own step
  (:func:`~privopt.baselines.dpsgd_batch_units`, its
  :class:`~privopt.baselines.GradientGrid` and :func:`~privopt.baselines.dpsgd_update`): the integer sum of
  the rounded clipped gradients plus exact discrete Gaussian noise, then the
  update.  An output is possible under a data set iff some integer vector S
  gives it through the update (a binary search per coordinate: the update is
  monotone in S), whatever the data set, since the discrete Gaussian gives
  every integer vector a positive probability.
* ``release="double"`` (broken, kept only here): the former arithmetic,
  ``sum + z C ndtri((k + 1/2) / 2^53)`` per coordinate from the secure
  generator's 53-bit words k, divided by the batch size and stepped; an
  output is possible under a data set iff some word k gives it exactly (a
  binary search over the 2^53 words: the map is monotone in k).

:class:`NoisySGDStepTarget` replays the same attack on the first step of
:class:`~privopt.baselines.NoisySGDClassifier` (hinge loss, gradient sums not
divided by the batch size): ``w_2 = -eta (S + noise)`` on the grid
(``accounting="poisson_grid"``, the default) or with N(0, (z L)^2) in
doubles (the continuous accountings ``"allocation"`` and
``"amu_subsampling"``, the broken variant here).

Each run's output is the pair of bits (possible under D, possible under D');
an output impossible under one data set is an event of probability 0 there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri

from .._validation import check_choice, check_delta, check_epsilon
from ..baselines import (
    GradientGrid,
    dpsgd_batch_units,
    dpsgd_update,
    gradient_grid,
    noisy_sgd_batch_units,
    noisy_sgd_update,
)
from ..baselines import accounting as acc
from ._targets import AuditTarget

__all__ = ["DPSGDStepTarget", "NoisySGDStepTarget", "dpsgd_step_instance"]

RELEASES = ("grid", "double")
_TWO_53 = float(2**53)


@dataclass(frozen=True)
class DPSGDStepPair:
    """Two neighbouring data sets in the estimator's feature space (rows ``y z``,
    ``||z|| <= 1``): D and D' with the label of the first record flipped."""

    rows: tuple[np.ndarray, np.ndarray]

    @property
    def name(self) -> str:
        n, d = self.rows[0].shape
        return f"one DP-SGD step, n={n}, d={d}, first label flipped"


def dpsgd_step_instance(n: int = 8, d: int = 2, seed: int = 0) -> DPSGDStepPair:
    """n records with ``||z|| <= 1`` (the last coordinate an intercept of 1/2) and
    labels +-1; D' flips the first label."""
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1.0, 1.0, size=(n, d))
    z[:, -1] = 0.5
    z /= np.maximum(1.0, np.linalg.norm(z, axis=1))[:, None]
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y_prime = y.copy()
    y_prime[0] = -y_prime[0]
    return DPSGDStepPair((z * y[:, None], z * y_prime[:, None]))


class DPSGDStepTarget(AuditTarget):
    """DP-SGD's last iterate after one full-batch step (q = 1, batch size n,
    learning rate ``learning_rate``, clip ``clip_norm``) at (epsilon, delta),
    on the data sets of ``pair`` (:func:`dpsgd_step_instance` by default)."""

    mechanism = "DP-SGD last iterate, one step"
    support: Any = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=float)

    def __init__(self, pair=None, *, epsilon=1.0, delta=1e-5, clip_norm=1.0, learning_rate=4.0,
                 release="grid"):
        self._setup(pair, epsilon, delta, release, float(clip_norm), float(learning_rate))
        self.denominator = float(self.n)
        self._calibrate()

    def _setup(self, pair, epsilon, delta, release, clip: float, lr: float) -> None:
        """The pair, the checked (epsilon, delta), the release and the step's constants."""
        self.pair = dpsgd_step_instance() if pair is None else pair
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.release = check_choice(release, "release", RELEASES)
        self.clip, self.lr = clip, lr
        self.n, self.d = self.pair.rows[0].shape

    def _grid_noise_multiplier(self) -> float:
        """z of the estimator's accounting on the grid for this one step (q = 1)."""
        return acc.dpsgd_grid_noise_multiplier(self.epsilon, self.delta, 1.0, 1)

    def _calibrate(self) -> None:
        """The noise: on the grid as shipped, or the Gaussian's z in doubles (the broken variant)."""
        if self.release == "grid":
            z = self._grid_noise_multiplier()
            self.grid: GradientGrid | None = gradient_grid(self.clip, z, self.d)
        else:
            z = acc.dpsgd_calibrate_noise_multiplier(self.epsilon, self.delta, 1.0, 1)
            self.grid = None
        self.noise_multiplier = float(z)
        self.variant = "as shipped" if self.release == "grid" else "continuous Gaussian in doubles"
        self.models = ()
        self.parameters = {"release": self.release, "noise_multiplier": self.noise_multiplier,
                           "grid_step": None if self.grid is None else self.grid.step}

    # -- the release ---------------------------------------------------------
    def _clipped_sum(self, which: int) -> np.ndarray:
        rows = self.pair.rows[which]
        if self.grid is not None:
            return dpsgd_batch_units(self.grid, rows, np.zeros(self.d), self.clip)
        g = np.full(self.n, -0.5)[:, None] * rows     # the former arithmetic; l'(0) = -1/2 exactly
        g *= (1.0 / np.maximum(1.0, np.linalg.norm(g, axis=1) / self.clip))[:, None]
        return g.sum(axis=0)

    def _step(self, gradient) -> np.ndarray:
        """The estimator's update from w = 0 (elementwise, so any shape of gradients)."""
        g = np.asarray(gradient, dtype=float)
        return dpsgd_update(np.zeros(g.shape), g, self.lr, 0.0, None)

    def _released(self, which: int, noise) -> np.ndarray:
        total = self._clipped_sum(which)
        if self.grid is not None:
            return self._step(self.grid.to_value(total[None, :] + noise) / self.denominator)
        scale = self.noise_multiplier * self.clip
        return self._step((total[None, :] + self._double_noise(noise, scale)) / self.denominator)

    @staticmethod
    def _double_noise(words, scale):
        u = np.minimum((np.asarray(words, dtype=np.float64) + 0.5) / _TWO_53, 1.0 - 2.0**-53)
        return 0.0 + scale * ndtri(u)

    # -- the replay ----------------------------------------------------------
    def _possible(self, outputs, which: int) -> np.ndarray:
        """Per output row: does some noise value give it exactly on data set ``which``?"""
        total = self._clipped_sum(which)
        ok = np.ones(len(outputs), dtype=bool)
        for j in range(self.d):
            ok &= self._coordinate_reachable(outputs[:, j], j, total)
        return ok

    def _coordinate_reachable(self, y, j, total) -> np.ndarray:
        grid = self.grid
        if grid is not None:        # the integer S_j of the release; w_j decreases in S_j
            lo, hi = -(2**52), 2**52

            def value(s):
                return self._step(grid.to_value(s) / self.denominator)
        else:                       # the word k of the noise; w_j decreases in k
            lo, hi = 0, 2**53 - 1
            scale = self.noise_multiplier * self.clip

            def value(s):
                return self._step((total[j] + self._double_noise(s, scale)) / self.denominator)
        low = np.full(y.shape, lo, dtype=np.int64)
        high = np.full(y.shape, hi, dtype=np.int64)
        while np.any(low < high):
            mid = low + (high - low) // 2
            above = value(mid) > y           # still above the target: move to larger S or k
            low = np.where(above, mid + 1, low)
            high = np.where(above, high, mid)
        return value(low) == y

    # -- the audit interface --------------------------------------------------
    def draw_noise(self, rng, size=None):
        n = 1 if size is None else int(size)
        if self.grid is not None:
            return self.grid.noise(rng, n)
        return rng.integers(0, 2**53, size=(n, self.d), dtype=np.int64)

    def stack_noise(self, draws):
        return np.concatenate(draws)

    def outputs_from_noise(self, which, noise):
        w = self._released(which, noise)
        return np.column_stack([self._possible(w, v) for v in (0, 1)]).astype(float)

    def run_mechanism(self, which, rng):
        return self.outputs_from_noise(which, self.draw_noise(rng))[0]


class NoisySGDStepTarget(DPSGDStepTarget):
    """:class:`~privopt.baselines.NoisySGDClassifier`'s iterate after its first
    step from w = 0 (hinge loss, learning rate ``learning_rate``, no
    projection: the radius is taken large enough), ``w_2 = -eta (S + xi)``,
    with the noise of a run of ``steps`` steps at (epsilon, delta): on the
    grid (``release="grid"``, ``accounting="poisson_grid"``: z of
    :func:`~privopt.baselines._accounting.noisy_sgd_grid_noise_multiplier`)
    or ``N(0, (z L)^2)`` in doubles (``release="double"``, z the Gaussian's
    at (epsilon, delta), sensitivity 1, as for DP-SGD's broken variant).  The
    batch of the replayed step is the whole data set (the batch at t = 1; on
    the grid every integer vector S is a possible release whatever the batch,
    so the replay of an estimator's outputs holds for any t)."""

    mechanism = "noisy SGD iterate after one step"

    def __init__(self, pair=None, *, epsilon=1.0, delta=1e-5, learning_rate=0.5, steps=1, release="grid"):
        self._setup(pair, epsilon, delta, release, 1.0, float(learning_rate))
        self.steps = int(steps)
        self.denominator = 1.0
        self._calibrate()
        self.parameters["steps"] = self.steps

    def _grid_noise_multiplier(self) -> float:
        """z of noisy SGD's grid accounting over ``steps`` steps."""
        return acc.noisy_sgd_grid_noise_multiplier(self.epsilon, self.delta, self.steps)

    def _clipped_sum(self, which: int) -> np.ndarray:
        rows = self.pair.rows[which]
        if self.grid is not None:
            return noisy_sgd_batch_units(self.grid, rows, np.zeros(self.d), "hinge")
        return (-rows).sum(axis=0)       # the hinge's subgradient at w = 0: -y z

    def _step(self, gradient) -> np.ndarray:
        g = np.asarray(gradient, dtype=float)
        return noisy_sgd_update(np.zeros(g.shape), g, self.lr, None)
