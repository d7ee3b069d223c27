"""Noisy SGD for convex Lipschitz losses: one pass in expectation of Poisson
batches with gradients on a grid and exact discrete Gaussian noise (default),
one pass with random allocation of records to steps [FS25, FS26], or [AMU20]'s
algorithm that stops when half the points have been seen (the last two with
continuous Gaussian noise in doubles)."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice, check_positive
from . import _accounting as acc
from ._base import (
    PrivateLinearClassifier,
    hinge_dloss,
    logistic_dloss,
)
from ._gradient_grid import GradientGrid, gradient_grid

__all__ = ["NoisySGDClassifier", "noisy_sgd_batch_units", "noisy_sgd_update"]

_DLOSS = {"hinge": hinge_dloss, "logistic": logistic_dloss}


def _hinge_dloss_scalar(margin: float) -> float:
    return -1.0 if margin < 1.0 else 0.0


def _logistic_dloss_scalar(margin: float) -> float:
    return -0.5 * (1.0 - math.tanh(0.5 * margin))


_DLOSS_SCALAR = {"hinge": _hinge_dloss_scalar, "logistic": _logistic_dloss_scalar}


def noisy_sgd_batch_units(grid: GradientGrid, rows: np.ndarray, w: np.ndarray, loss: str) -> np.ndarray:
    """The exact integer sum over a batch (rows ``y z``, ``||z|| <= 1``) of the
    per-record (sub)gradients ``l'(y <w, z>) y z`` of the hinge or logistic
    loss (norm <= L = 1; the division by ``max(1, ||g||)`` only absorbs the
    float rounding of a norm-1 row), rounded to ``grid`` (int64 grid units;
    zeros for an empty batch): what the noisy SGD on the grid adds its
    discrete Gaussian noise to."""
    if not rows.shape[0]:
        return np.zeros(grid.dim, dtype=np.int64)
    g = _DLOSS[loss](rows @ w)[:, None] * rows
    g *= (1.0 / np.maximum(1.0, np.linalg.norm(g, axis=1)))[:, None]
    return grid.to_units(g).sum(axis=0)


def noisy_sgd_update(w: np.ndarray, step: np.ndarray, eta: float, radius: float | None) -> np.ndarray:
    """``Pi_D(w - eta step)``: the projected step of noisy SGD (``step`` the noisy
    gradient sum), projected onto ``{||w|| <= radius}`` unless radius is None."""
    w = w - eta * step
    if radius is not None:
        nrm = math.sqrt(w @ w)
        if nrm > radius:
            w *= radius / nrm
    return w


class NoisySGDClassifier(PrivateLinearClassifier):
    r"""Linear classifier (hinge or logistic loss) by noisy projected SGD.

    Algorithm (``accounting="poisson_grid"``, the default).  t steps (the
    default rule below; ``batch_size``: t = ceil(n / b)), ``w_1 = 0``; for
    j = 1..t:

    * the batch ``B_j``: each record independently with probability q = 1/t
      (Poisson sampling, from ``random_state``; one pass in expectation);
    * each per-record (sub)gradient ``g_i(w_j)`` (norm <= L = 1 on the public
      feature map, no clipping needed) rounded to DP-SGD's grid
      ``L 2^-k Z^d`` (:class:`~privopt.baselines.GradientGrid`, k fixed from
      the public z and d), summed exactly in integers, plus exact discrete
      Gaussian noise ``N_Z(0, s^2)^d`` with ``s >= z Delta`` grid units
      ([CKS20] sampler): an integer vector S_j
      (:func:`noisy_sgd_batch_units`);
    * ``w_{j+1} = Pi_D(w_j - eta step S_j)`` (:func:`noisy_sgd_update`);

    output the average of w_1, ..., w_t.  Every later value is a function of
    the integer releases, so no output is a double plus continuous noise (the
    replay of Mironov's attack after one step finds no output impossible under
    a neighbour: :class:`~privopt.audit.NoisySGDStepTarget`).

    Privacy (replace-one, n public): DP-SGD's accounting on the grid
    (:func:`~privopt.baselines._accounting.noisy_sgd_grid_noise_multiplier`):
    Poisson subsampling at q = 1/t for t steps under add/remove ([ZDW22],
    PLD accountant [KJH20]), the discrete Gaussian dominated by the Gaussian
    pair of shift 1/z ([CKS20], the multivariate discrete Gaussian), replace-one by group privacy at
    (epsilon/2, delta / (1 + e^{epsilon/2})) for the removal and for the
    addition.  2-4% more noise than random allocation's below (z = 1.017
    against 0.994 at n = 398, d = 10, t = 199; 1.206 against 1.164 at
    n = 1050, d = 80, t = 132; epsilon = 1, delta = 1/n^2).  The step size
    is random allocation's at sigma = z L, and the default t random
    allocation's rule (n, d, epsilon, delta only).

    ``accounting="allocation"`` and ``"amu_subsampling"`` add continuous
    Gaussian noise in doubles (``x + noise``): they are not floating-point
    safe (Mironov, CCS 2012).  "allocation": one pass of noisy
    projected SGD in which every record is used in one step chosen uniformly
    at random ("random allocation", [FS25]; "balls and bins", [CGH+25]), the
    noise calibrated by the random-allocation accountant of [FS26], which is
    specific to the continuous Gaussian.  The
    former algorithm of Arora, Marinov and Ullah [AMU20] with privopt's
    subsampling accounting stays available as ``accounting="amu_subsampling"``.

    Algorithm (``accounting="allocation"``).  With the public
    feature map of ``_base`` (``||z|| <= 1``, so both losses are L = 1
    Lipschitz in w), ``w_1 = 0`` and t steps (``batch_size``: t = ceil(n / b);
    default: :func:`~privopt.baselines._accounting.noisy_sgd_allocation_steps`):

    * each record i independently draws its step ``J_i`` uniformly from
      {1, ..., t}, from ``random_state`` (the secure generator by default),
      before any record is read; the batches ``B_j = {i : J_i = j}`` have
      Binomial(n, 1/t) sizes and may be empty;
    * for j = 1..t: ``w_{j+1} = Pi_D(w_j - eta (sum_{i in B_j} g_i(w_j) + xi_j))``,
      ``g_i`` a (sub)gradient of record i's loss (norm <= L = 1),
      ``xi_j ~ N(0, sigma^2 I_d)``;
    * output the average of w_1, ..., w_t (post-processing).

    ``Pi_D`` projects onto the ball ``{||w|| <= radius}``.

    Privacy (replace-one neighbours, n public), as
    :func:`~privopt.baselines._accounting.noisy_sgd_allocation_delta`:

    * Hypotheses of the random-allocation bound, and how this code meets them.
      (H1) Each step releases a sum over its batch of per-record vectors of
      L2 norm <= L plus N(0, sigma^2 I): the gradients of the 1-Lipschitz
      losses on ``||z|| <= 1``, with no clipping needed.  (H2) The vector
      function of step j may depend on the earlier released sums only
      (adaptivity): it depends on ``w_j``, a function of the earlier noisy
      sums.  (H3) Each record is in exactly k = 1 of the t steps, chosen
      uniformly and independently of the data and of the other records: the
      ``J_i`` above (not a permutation cut into equal batches, where the
      others' positions determine the last record's).  (H4) t does not depend
      on the data beyond n, which is public under replace-one.  Then under
      add/remove neighbours (t fixed) the whole transcript is dominated by
      ``P = (1/t) sum_j N(L e_j, sigma^2 I_t)`` against ``Q = N(0, sigma^2 I_t)``
      ([CGH+25]; [FS25]), whose privacy loss distribution [FS26] computes
      (the ``PLD_accounting`` package, pessimistic discretization).
    * Replace-one by group privacy through D minus the record:
      ``delta_RO(eps) <= (1 + e^{eps/2}) delta_AR(eps/2)``, or, if smaller, the
      Gaussian bound of the one step that differs (sensitivity 2L, [BW18]).
    * sigma is the smallest (to 0.2%, rounded up) noise whose ``delta_RO``
      at ``epsilon`` is <= ``delta``
      (:func:`~privopt.baselines._accounting.noisy_sgd_allocation_sigma`).

    Step size: ``eta = D / sqrt(t G^2)``, ``G^2 = L^2 (b (1 - 1/t) + b^2) +
    d sigma^2``, b = n / t, the minimiser of the averaged-iterate bound
    ``D^2/(2 eta t) + eta G^2/2``
    (:func:`~privopt.baselines._accounting.noisy_sgd_allocation_step_size`).
    ``learning_rate`` overrides it.

    Numbers.  At epsilon = 1, delta = 1/n^2: n = 398, d = 10 gives t = 199
    steps (b = 2) and sigma = 0.99 per coordinate; n = 1050, d = 80 gives
    t = 132 (b = 8) and sigma = 1.16 (the former accounting: 5.1 and more).

    ``accounting="amu_subsampling"``: [AMU20]'s Algorithm 1 -- draw indices
    uniformly with replacement; a fresh record takes a gradient step, a
    repeated one a noise-only step; stop when m = ceil(n/2) distinct records
    were drawn; output the average of the fresh-step iterates -- with
    privopt's accounting: each record enters at most one step (sensitivity
    2L), and the records used are a uniform subset of size m, so [BBG18]
    amplification by q = m/n gives
    ``sigma = 2 L sigma_G(log(1 + (e^eps - 1)/q), delta/q)``
    (:func:`~privopt.baselines._accounting.noisy_sgd_sigma`) and
    ``eta = D / sqrt(T_bar (L^2 + d sigma^2))``.  [AMU20, Theorem 6] itself
    holds only for eps <= 1/(2 sqrt(n)).  Its sigma is 5.1 at n = 398 and
    7.4 at n = 35,000 (epsilon = 1, delta = 1/n^2), and with it the
    estimator was clearly above the majority class in 2 of the 84 cells of
    ``benchmarks/results/default_limits.md``.

    Parameters
    ----------
    epsilon, delta : target (epsilon, delta), delta > 0.
    loss : "hinge" (default) or "logistic".
    radius : D, radius of the feasible ball (public).
    learning_rate : None (the formula above) or a fixed eta.
    batch_size : None (the default rule) or the expected batch size b of
        ``accounting="poisson_grid"`` or ``"allocation"`` (t = ceil(n / b) steps).
    accounting : "poisson_grid" (default), "allocation" or "amu_subsampling".
    fit_intercept, bounds, data_norm, random_state : see ``_base``.

    Attributes
    ----------
    noise_std_ : sigma (z L for "poisson_grid").  learning_rate_ : eta used.
    noise_multiplier_, grid_step_, noise_sigma_units_ : z, the grid step
        ``2^-k`` and s ("poisson_grid" only).
    n_steps_ : number of steps (t, or T draws for "amu_subsampling").
    n_gradient_steps_ : gradients used (the sum of the Poisson batch sizes,
        n, or m).
    epsilon_spent_ : epsilon of the run at delta (<= epsilon).
    accounting_ : the accounting used.
    batch_size_ : n / t (expected batch size; "poisson_grid" and "allocation").
    sampling_fraction_ : q = 1/t ("poisson_grid"), m/n ("amu_subsampling"),
        None ("allocation").
    base_epsilon_, base_delta_ : the single step's (eps0, delta0)
        ("amu_subsampling" only; None otherwise).

    References
    ----------
    [FS25] Feldman, Shenfeld. Privacy amplification by random allocation.
    arXiv 2502.08202, 2025.
    [FS26] Feldman, Shenfeld. Efficient privacy loss accounting for subsampling
    and random allocation. ICML 2026 (arXiv 2602.17284).
    [CGH+25] Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha,
    Zhang. Balls-and-bins sampling for DP-SGD. AISTATS 2025.
    [AMU20] Arora, Marinov, Ullah. Private stochastic convex optimization:
    efficient algorithms for non-smooth objectives. arXiv 2002.09609, 2020.
    [BBG18] Balle, Barthe, Gaboardi. Privacy amplification by subsampling:
    tight analyses via couplings and divergences. NeurIPS 2018.
    [BW18] Balle, Wang. Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising. ICML 2018.
    [CKS20] Canonne, Kamath, Steinke. The discrete Gaussian for differential
    privacy. NeurIPS 2020.
    [ZDW22] Zhu, Dong, Wang. Optimal accounting of differential privacy via
    characteristic function. AISTATS 2022.
    [KJH20] Koskela, Jalko, Honkela. Computing tight differential privacy
    guarantees using FFT. AISTATS 2020.
    """

    def __init__(self, epsilon=1.0, delta=1e-5, *, loss="hinge", radius=10.0,
                 learning_rate=None, batch_size=None, accounting="poisson_grid",
                 fit_intercept=True, bounds=None, data_norm=None, random_state=None, classes=None,
                 ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.radius = radius
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.accounting = accounting
        self.fit_intercept = fit_intercept
        self.bounds = bounds
        self.data_norm = data_norm
        self.random_state = random_state
        self.classes = classes
        self.ledger = ledger

    def _check_params(self):
        return {
            "loss": check_choice(self.loss, "loss", set(_DLOSS)),
            "radius": check_positive(self.radius, "radius"),
            "learning_rate": check_positive(self.learning_rate, "learning_rate",
                                            allow_none=True),
            "batch_size": check_positive(self.batch_size, "batch_size", allow_none=True),
            "accounting": check_choice(self.accounting, "accounting", set(acc.NOISY_SGD_ACCOUNTING)),
        }

    @staticmethod
    def _draw_indices(rng, n, m):
        """Indices drawn with replacement until m distinct have appeared, and
        the mask of first occurrences."""
        idx = np.empty(0, dtype=np.int64)
        while True:
            more = np.asarray(rng.integers(0, n, size=n), dtype=np.int64)
            idx = np.concatenate([idx, more])
            _, first = np.unique(idx, return_index=True)
            fresh = np.zeros(idx.size, dtype=bool)
            fresh[first] = True
            count = np.cumsum(fresh)
            if count[-1] >= m:
                T = int(np.searchsorted(count, m)) + 1
                return idx[:T], fresh[:T]

    def _fit_private(self, Z, y, rng, eps, delta, p):
        if p["accounting"] == "poisson_grid":
            return self._fit_poisson_grid(Z, y, rng, eps, delta, p)
        if p["accounting"] == "allocation":
            return self._fit_allocation(Z, y, rng, eps, delta, p)
        return self._fit_amu(Z, y, rng, eps, delta, p)

    @staticmethod
    def _steps(n, d, eps, delta, p):
        """t: the public rule of :func:`~privopt.baselines._accounting.noisy_sgd_allocation_steps`,
        or ``ceil(n / batch_size)``."""
        if p["batch_size"] is None:
            return acc.noisy_sgd_allocation_steps(n, d, eps, delta)
        return max(1, math.ceil(n / p["batch_size"]))

    def _fit_poisson_grid(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        L = 1.0
        t = self._steps(n, d, eps, delta, p)
        cal = acc.noisy_sgd_grid_calibration(eps, delta, t)
        z = cal.noise_multiplier
        spent = acc.noisy_sgd_grid_epsilon(z, t, cal.epsilon_target, delta)
        if not spent <= cal.epsilon_target <= eps:
            raise RuntimeError("the calibrated noise does not meet the target epsilon")  # pragma: no cover
        sigma = z * L
        D = p["radius"]
        eta = p["learning_rate"] or acc.noisy_sgd_allocation_step_size(D, L, sigma, d, n, t)
        grid = gradient_grid(L, z, d)
        noise = grid.noise(rng, t)
        yz = Z * y[:, None]
        w = np.zeros(d)
        w_sum = np.zeros(d)
        used = 0
        for j in range(t):
            w_sum += w
            batch = np.flatnonzero(rng.random(n) < 1.0 / t)      # Poisson sample at q = 1/t
            used += batch.size
            released = noise[j] + noisy_sgd_batch_units(grid, yz[batch], w, p["loss"])   # exact integers
            w = noisy_sgd_update(w, grid.to_value(released), eta, D)
        self.accounting_ = "poisson_grid"
        self.noise_std_ = float(sigma)
        self.noise_multiplier_ = float(z)
        self.grid_step_ = grid.step
        self.noise_sigma_units_ = int(grid.sigma_units)
        self.learning_rate_ = float(eta)
        self.n_steps_ = int(t)
        self.n_gradient_steps_ = int(used)
        self.batch_size_ = n / t
        self.sampling_fraction_ = 1.0 / t
        self.base_epsilon_, self.base_delta_ = None, None
        self.epsilon_spent_ = float(spent)
        self.delta_spent_ = float(delta)
        return w_sum / t

    def _fit_allocation(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        L = 1.0
        t = self._steps(n, d, eps, delta, p)
        sigma = acc.noisy_sgd_allocation_sigma(eps, delta, t, L)
        D = p["radius"]
        eta = p["learning_rate"] or acc.noisy_sgd_allocation_step_size(D, L, sigma, d, n, t)
        # the allocation: each record's step, uniform and independent, before any record is read
        step_of = np.asarray(rng.integers(0, t, size=n), dtype=np.int64)
        noise = np.asarray(rng.normal(0.0, sigma, size=(t, d)), dtype=float)
        order = np.argsort(step_of, kind="stable")
        ends = np.cumsum(np.bincount(step_of, minlength=t))
        dloss = _DLOSS[p["loss"]]
        yz = Z * y[:, None]
        w = np.zeros(d)
        w_sum = np.zeros(d)
        start = 0
        for j in range(t):
            w_sum += w
            step = noise[j]
            stop = int(ends[j])
            if stop > start:
                rows = yz[order[start:stop]]
                step = step + dloss(rows @ w) @ rows
            start = stop
            w = w - eta * step
            nrm = math.sqrt(w @ w)
            if nrm > D:
                w *= D / nrm
        self.accounting_ = "allocation"
        self.noise_std_ = float(sigma)
        self.learning_rate_ = float(eta)
        self.n_steps_ = int(t)
        self.n_gradient_steps_ = int(n)
        self.batch_size_ = n / t
        self.sampling_fraction_ = None
        self.base_epsilon_, self.base_delta_ = None, None
        self.epsilon_spent_ = acc.noisy_sgd_allocation_epsilon_spent(sigma / L, t, eps, delta)
        self.delta_spent_ = float(delta)
        return w_sum / t

    def _fit_amu(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        m = int(math.ceil(n / 2))
        L = 1.0
        sigma = acc.noisy_sgd_sigma(eps, delta, n, m, L)
        t_bar = acc.expected_draws_until_distinct(n, m)
        D = p["radius"]
        eta = p["learning_rate"] or acc.noisy_sgd_step_size(D, L, sigma, d, t_bar)
        idx, fresh = self._draw_indices(rng, n, m)
        T = idx.size
        noise = rng.normal(0.0, sigma, size=(T, d))
        dloss = _DLOSS_SCALAR[p["loss"]]
        yz = Z * y[:, None]
        w = np.zeros(d)
        w_sum = np.zeros(d)
        for t in range(T):
            step = noise[t]
            if fresh[t]:
                row = yz[idx[t]]
                w_sum += w
                step = step + dloss(float(row @ w)) * row
            w = w - eta * step
            nrm = math.sqrt(w @ w)
            if nrm > D:
                w *= D / nrm
        self.accounting_ = "amu_subsampling"
        self.batch_size_ = None
        self.noise_std_ = float(sigma)
        self.learning_rate_ = float(eta)
        self.n_steps_ = int(T)
        self.n_gradient_steps_ = int(fresh.sum())
        self.sampling_fraction_ = m / n
        self.base_epsilon_, self.base_delta_ = acc.deamplify_by_subsampling(eps, delta, m / n)
        self.epsilon_spent_ = float(acc.noisy_sgd_epsilon(sigma, delta, n, m, L))
        self.delta_spent_ = float(delta)
        return w_sum / max(1, fresh.sum())
