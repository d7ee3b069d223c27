"""DP-SGD logistic regression with its gradients on a grid and exact discrete Gaussian
noise, accounted with the PLD accountant of dp_accounting."""

from __future__ import annotations

import math

import numpy as np

from .._limits import check_memory
from .._validation import check_auto_or, check_choice, check_int, check_positive, check_real
from ..exceptions import ParameterError
from . import _accounting as acc
from ._defaults import default_batch_size
from ._base import PrivateLinearClassifier, logistic_dloss
from ._gradient_grid import GradientGrid, gradient_grid

__all__ = ["DPSGDLogisticRegression", "default_batch_size", "dpsgd_batch_units", "dpsgd_update"]


def dpsgd_batch_units(grid: GradientGrid, rows: np.ndarray, w: np.ndarray, clip: float) -> np.ndarray:
    """The exact integer sum over a batch (rows ``y z``) of the per-example
    logistic gradients ``l'(y <w, z>) y z``, clipped to norm ``clip`` and
    rounded to ``grid`` (int64 grid units; zeros for an empty batch): what
    DP-SGD adds its discrete Gaussian noise to."""
    if not rows.shape[0]:
        return np.zeros(grid.dim, dtype=np.int64)
    g = logistic_dloss(rows @ w)[:, None] * rows
    norms = np.linalg.norm(g, axis=1)
    g *= (1.0 / np.maximum(1.0, norms / clip))[:, None]
    return grid.to_units(g).sum(axis=0)


def dpsgd_update(w: np.ndarray, gradient: np.ndarray, lr: float, lam: float, radius: float | None) -> np.ndarray:
    """One DP-SGD step ``w - eta (g~ + alpha w)``, projected onto
    ``{||w|| <= radius}`` if a radius is set; ``g~`` is the grid value of the
    integer release over the batch size (post-processing)."""
    w = w - lr * (gradient + lam * w)
    if radius is not None:
        nrm = np.linalg.norm(w)
        if nrm > radius:
            w *= radius / nrm
    return w


def _positive_int(value, name):
    return check_int(value, name, minimum=1)


class DPSGDLogisticRegression(PrivateLinearClassifier):
    r"""Logistic regression trained by DP-SGD, accounted with ``dp_accounting``.

    Algorithm ([ACG+16], Algorithm 1; [BST14] for the convex case and the
    averaging of iterates).  With the public feature map of
    :mod:`privopt.baselines._base` (``||z|| <= 1``), ``w_0 = 0`` and
    ``T = round(epochs * n / batch_size)`` steps (``epochs`` passes for
    ``sampling="shuffle"``):

    1. draw a batch ``B_t`` (see *Sampling*);
    2. per-example gradients ``g_i = l'(y_i <w, z_i>) y_i z_i`` of the logistic
       loss, clipped: ``g_i <- g_i / max(1, ||g_i|| / C)``;
    3. each clipped g_i rounded to the grid ``C 2^-k Z^d`` (k fixed from the
       public (z, d) before any record is read: at most 0.1% inflation of the
       norm bound; :class:`~privopt.baselines.GradientGrid`), their sum an
       exact integer vector, plus exact discrete Gaussian noise
       ``N_Z(0, s^2)^d`` in grid units with ``s >= z Delta`` (Delta the integer
       norm bound of one rounded gradient; [CKS20] sampler, :mod:`privopt._exact`);
       ``g~`` = that integer vector's grid value over ``b``, the expected
       batch size (``batch_size``) under Poisson sampling and the actual one
       under shuffling.  Every later value is a function of the integer
       releases, so no output is a double plus continuous noise (the
       floating-point attack of Mironov, CCS 2012, replayed on the last
       iterate after one step, finds no output impossible under a neighbour:
       :class:`~privopt.audit.DPSGDStepTarget`);
    4. ``w <- w - eta (g~ + alpha w)``, then projection onto
       ``{||w|| <= radius}`` if ``radius`` is set;
    5. output the average of the iterates ``w_1..w_T``
       (``averaging="uniform"``, as in [BST14]) or the last one
       (``averaging="last"``).  Both are post-processing.

    Sampling, and what the accountant assumes
    -----------------------------------------
    ``sampling="poisson"`` (default): each record joins each batch
    independently with probability ``q = batch_size / n`` (variable batch
    size).  Each step's discrete Gaussian on the grid is dominated by the
    continuous Gaussian pair of shift 1/z per record ([CKS20], the multivariate discrete Gaussian;
    :func:`~privopt.baselines._accounting.discrete_gaussian_gaussian_shift`),
    so accountings built from dominating pairs hold for it: Poisson
    subsampling under add/remove ([ZDW22]) composed by ``dp_accounting``'s
    privacy loss distribution (PLD) accountant ([KJH20]; pessimistic
    discretization, so an upper bound) on
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``.
    Neighbours are **replace-one**, privopt's relation for every mechanism
    ([NRVW20], Definition 2.5): one record's clipped gradient is swapped for
    another.  The continuous Gaussian's replace-one pair does not transfer to
    the grid (it uses the rotation invariance of the continuous Gaussian), so
    a replaced record is accounted by group privacy as one removal and one
    addition, each at (epsilon/2, delta / (1 + e^{epsilon/2})) under
    add/remove (:func:`~privopt.baselines._accounting.dpsgd_grid_noise_multiplier`):
    1-2% more noise than the continuous replace-one PLD at n = 2,000 to
    12,546 (accountant ``"pld_group"``).  ``n`` is public under replace-one, so ``q`` and ``T`` come from
    it.  ``neighbouring="add_remove"`` accounts under add/remove-one instead
    (about half the epsilon at the same noise: at n = 12546, b = 256, 20
    epochs, delta = 1/n^2, epsilon = 1 needs z = 6.62 under replace-one,
    3.46 under add/remove); results under the two relations are not
    comparable.

    ``sampling="shuffle"``: each epoch cuts a fresh random permutation into
    ``ceil(n / batch_size)`` fixed-size batches.  The Poisson analysis does
    **not** cover fixed-size shuffled batches (the gap is real: Chua et al.,
    "How private are DP-SGD implementations?", ICML 2024), so no amplification
    is claimed: under **replace-one** neighbours each record enters one batch
    per epoch, where it moves the clipped sum by at most 2C; the release is
    accounted as ``SelfComposedDpEvent(GaussianDpEvent(z), epochs)`` under
    replace-one (Gaussian sensitivity 2).  It has no add/remove variant.
    This bound is rigorous but much larger, so shuffling needs far more
    noise for the same epsilon.

    Calibration: with ``noise_multiplier=None`` the smallest z (to 1e-6)
    whose accounted epsilon at ``delta`` is <= ``epsilon`` is found by
    Brent's method on the PLD epsilon
    (:func:`~privopt.baselines._accounting.dpsgd_grid_noise_multiplier`).
    A given ``noise_multiplier`` must meet the target, else ParameterError.

    Hyperparameters chosen on the private data (see
    :func:`~privopt.baselines.dpsgd_grid_search`) are not covered by this
    guarantee.

    Parameters
    ----------
    epsilon, delta : target privacy; ``delta`` must be > 0 (e.g. 1/n^2).
    clip_norm : C, the per-example gradient clipping norm (gradients here have
        norm <= 1, so C >= 1 never clips).
    batch_size : expected (Poisson) or actual (shuffle) batch size, or
        ``"auto"`` (default): ``min(256, max(1, ceil(n / 10)))`` from the
        public number of records n (256, tuned on Adult, once n >= 2560;
        otherwise a tenth of the data, so small data sets still get ~10
        steps per epoch).  See docs/estimators.md, "Defaults at small n".
    learning_rate : eta (default 4.0 = 1/L: with ``||z|| <= 1`` each
        per-example logistic loss is L-smooth in w with L = max l'' = 1/4).
    epochs : passes over the data (T = round(epochs n / batch_size) steps;
        default 60).  At a fixed (epsilon, delta) the accounted noise grows
        about like sqrt(T) while the signal grows like T, so more passes cost
        little; privopt's former 20 passes with eta = 1 under-optimized from
        n = 140 (200 steps) to n = 35,000 (see docs/estimators.md, "Defaults
        at small n").
    sampling : "poisson" or "shuffle" (see above).
    noise_multiplier : z, or None to calibrate it to (epsilon, delta).
    alpha : L2 penalty added to every step (data independent).
    radius : optional projection radius for w (None: no projection).
    averaging : "uniform" (average of all iterates) or "last".
    neighbouring : "replace_one" (default) or "add_remove" (Poisson sampling only).
    n_samples : the PUBLIC number of records n that sets q = batch_size / n
        and T.  None (default): ``len(X)``, which is public under replace-one
        (neighbouring data sets have the same size).  Under add/remove the
        size of the data set is itself private, so ``n_samples`` must be
        given; records are still sampled with probability q each.
    fit_intercept, bounds, data_norm : the public feature map (``_base``).
    random_state : None (secure noise) or a seed (reproducible, not private).

    Attributes
    ----------
    noise_multiplier_ : z accounted; the noise std on the clipped sum is at
        least z * Delta grid steps (about z * C).
    grid_step_ : the grid step ``C 2^-k``.  noise_sigma_units_ : s, the
        discrete Gaussian's parameter in grid units.
    epsilon_spent_ : epsilon of the run at ``delta_spent_`` by the PLD accountant
        (<= epsilon; under replace-one with Poisson sampling, twice the
        add/remove epsilon at delta / (1 + e^{epsilon/2})).
    delta_spent_ : delta (``delta_`` is its deprecated alias).
    n_steps_ : T.  sampling_probability_ : q (Poisson) or batch_size/n.
    batch_size_ : the batch size used (the rule's when "auto").
    dp_event_ : the ``dp_accounting`` event accounted (recompute
        ``epsilon_spent_`` as ``2 PLDAccountant(neighboring_relation=
        NeighboringRelation.ADD_OR_REMOVE_ONE).compose(dp_event_).get_epsilon(
        delta / (1 + e^{epsilon/2}))`` under replace-one with Poisson sampling,
        else with the PLD accountant under ``neighbouring`` at ``delta_spent_``).
    neighbouring_ : "replace_one" or "add_remove".
    accountant_ : "pld_group" (replace-one, Poisson) or "pld".

    References
    ----------
    [ACG+16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep
    learning with differential privacy. CCS 2016.
    [BST14] Bassily, Smith, Thakurta. Private empirical risk minimization:
    efficient algorithms and tight error bounds. FOCS 2014.
    [KJH20] Koskela, Jalko, Honkela. Computing tight differential privacy
    guarantees using FFT. AISTATS 2020.
    [CKS20] Canonne, Kamath, Steinke. The discrete Gaussian for differential
    privacy. NeurIPS 2020.
    [KLS21] Kairouz, Liu, Steinke. The distributed discrete Gaussian mechanism
    for federated learning with secure aggregation. ICML 2021.
    [ZDW22] Zhu, Dong, Wang. Optimal accounting of differential privacy via
    characteristic function. AISTATS 2022.
    [NRVW20] Neel, Roth, Vietri, Wu. Oracle efficient private non-convex
    optimization. ICML 2020.
    """

    def __init__(self, epsilon=1.0, delta=1e-5, *, clip_norm=1.0, batch_size="auto",
                 learning_rate=4.0, epochs=60, sampling="poisson", noise_multiplier=None,
                 alpha=0.0, radius=None, averaging="uniform", neighbouring="replace_one",
                 n_samples=None, fit_intercept=True, bounds=None, data_norm=None, random_state=None, classes=None,
                 ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.sampling = sampling
        self.noise_multiplier = noise_multiplier
        self.alpha = alpha
        self.radius = radius
        self.averaging = averaging
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.fit_intercept = fit_intercept
        self.bounds = bounds
        self.data_norm = data_norm
        self.random_state = random_state
        self.classes = classes
        self.ledger = ledger

    def _ledger_spend(self) -> tuple[float, float]:
        """What a ledger (whose releases are replace-one, as all of privopt's) is
        charged: under ``neighbouring="add_remove"`` a replaced record is one removal
        and one addition, so (epsilon, delta) under add/remove gives
        (2 epsilon, (1 + e^epsilon) delta) under replace-one (group privacy of two
        steps: the definition applied to D -> D minus the record -> D')."""
        epsilon, delta = super()._ledger_spend()
        if self.neighbouring == "add_remove":
            return 2.0 * epsilon, min((1.0 + math.exp(epsilon)) * delta, 1.0)
        return epsilon, delta

    def _check_params(self):
        p = {
            "clip_norm": check_positive(self.clip_norm, "clip_norm"),
            "batch_size": check_auto_or(self.batch_size, "batch_size", _positive_int, "an integer >= 1"),
            "learning_rate": check_positive(self.learning_rate, "learning_rate"),
            "epochs": check_int(self.epochs, "epochs", minimum=1),
            "sampling": check_choice(self.sampling, "sampling", {"poisson", "shuffle"}),
            "noise_multiplier": check_positive(self.noise_multiplier, "noise_multiplier",
                                               allow_none=True),
            "alpha": check_real(self.alpha, "alpha"),
            "radius": check_positive(self.radius, "radius", allow_none=True),
            "averaging": check_choice(self.averaging, "averaging", {"uniform", "last"}),
            "neighbouring": check_choice(self.neighbouring, "neighbouring", acc.DPSGD_NEIGHBOURING),
            "n_samples": (None if self.n_samples is None
                          else check_int(self.n_samples, "n_samples", minimum=1)),
        }
        if p["neighbouring"] == "add_remove" and p["n_samples"] is None:
            raise ParameterError(
                "n_samples: under neighbouring='add_remove' the number of records is private; "
                "give the public n (e.g. a known upper bound) that sets the sampling rate.", "n_samples")
        if p["sampling"] == "shuffle" and p["neighbouring"] != "replace_one":
            raise ParameterError(
                "neighbouring: sampling='shuffle' is accounted under replace-one only; use "
                "neighbouring='replace_one' or sampling='poisson'.", "neighbouring")
        if p["alpha"] < 0:
            raise ParameterError(f"alpha must be >= 0, got {p['alpha']}.", "alpha")
        return p

    def _schedule(self, n, p):
        if p["batch_size"] == "auto":
            p["batch_size"] = default_batch_size(n)
        if p["batch_size"] > n:
            raise ParameterError(
                f"batch_size ({p['batch_size']}) exceeds the number of records ({n}).",
                "batch_size",
            )
        q = p["batch_size"] / n
        if p["sampling"] == "poisson":
            steps = max(1, int(round(p["epochs"] / q)))
        else:
            steps = p["epochs"] * int(math.ceil(n / p["batch_size"]))
        return q, steps

    def _check_work_memory(self, n: int, d: int, fit_intercept: bool, params) -> None:
        """As every baseline's, but under ``neighbouring="add_remove"`` (n private) the
        refusal quotes neither n nor the bytes predicted from it: it is charged, and a
        message after the data is read carries no value computed from it."""
        if params is None or params.get("neighbouring") != "add_remove":
            super()._check_work_memory(n, d, fit_intercept, params)
            return
        check_memory(self._work_bytes(n, d + int(bool(fit_intercept)), params), "X",
                     f"{type(self).__name__}'s fit on the records of X ({d:,} features)",
                     "Give fewer features (select or aggregate columns of X), or fewer steps (fewer epochs, a "
                     "larger batch_size).", quote=False)

    def _work_bytes(self, n, d_z, p):
        """The feature map's arrays and the noise of every step (``steps`` x ``d_z``
        int64 grid units, drawn at once in :meth:`_fit_private`)."""
        try:
            _, steps = self._schedule(n if p["n_samples"] is None else p["n_samples"], dict(p))
        except ParameterError:      # refused with its own message in _fit_private
            steps = 0
        return super()._work_bytes(n, d_z, p) + 8 * steps * int(d_z)

    @staticmethod
    def _refuse_if_one_step_exceeds(z, q, eps, delta, sampling, rel):
        """A given noise multiplier whose single step already spends more than
        delta at epsilon (:func:`~privopt.baselines._accounting.dpsgd_one_step_delta`)
        is refused before the PLD accountant runs: at such a z it would need
        gigabytes of memory to reach the same answer.  Under replace-one with
        Poisson sampling the run is accounted as two add/remove steps
        (:func:`~privopt.baselines._accounting.dpsgd_grid_delta_split`), so
        the one step is checked at their (epsilon/2, delta_AR)."""
        if sampling == "poisson" and rel == "replace_one":
            eps, delta = acc.dpsgd_grid_delta_split(eps, delta)
            rel = "add_remove"
        one_step = acc.dpsgd_one_step_delta(z, q if sampling == "poisson" else 1.0, eps, rel)
        if one_step > delta:
            raise ParameterError(
                f"noise_multiplier={z}: a single step already gives delta={one_step:.3g} > delta={delta} "
                f"at epsilon={eps}; raise it or leave it None to calibrate.", "noise_multiplier")

    def _fit_private(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        if p["sampling"] == "shuffle" and p["n_samples"] not in (None, n):
            raise ParameterError(
                f"n_samples ({p['n_samples']}) differs from the {n} records given; shuffled batches "
                "split the records themselves: leave n_samples None or use sampling='poisson'.", "n_samples")
        q, steps = self._schedule(n if p["n_samples"] is None else p["n_samples"], p)
        sampling = p["sampling"]
        epochs = p["epochs"] if sampling == "shuffle" else None
        rel = p["neighbouring"]
        target = eps
        if p["noise_multiplier"] is None:
            cal = acc.grid_calibration(
                lambda t: acc.dpsgd_grid_noise_multiplier(t, delta, q, steps, sampling, epochs, rel),
                lambda z, t: acc.dpsgd_grid_epsilon(z, q, steps, t, delta, sampling, epochs, rel,
                                                    acc.pld_discretization_interval(t)), eps)
            z, target = cal.noise_multiplier, cal.epsilon_target
        else:
            z = p["noise_multiplier"]
            self._refuse_if_one_step_exceeds(z, q, eps, delta, sampling, rel)
        spent = acc.dpsgd_grid_epsilon(z, q, steps, target, delta, sampling, epochs, rel,
                                       acc.pld_discretization_interval(target))
        if spent > eps:
            raise ParameterError(
                f"noise_multiplier={z} gives epsilon={spent:.4g} > epsilon={eps} at delta={delta} "
                "for this schedule; raise it or leave it None to calibrate.",
                "noise_multiplier",
            )
        C, lr, lam, radius = p["clip_norm"], p["learning_rate"], p["alpha"], p["radius"]
        yz = Z * y[:, None]
        w = np.zeros(d)
        w_sum = np.zeros(d)
        grid = gradient_grid(C, z, d)
        noise = grid.noise(rng, steps)

        def batches():
            if sampling == "poisson":
                for _ in range(steps):
                    yield np.flatnonzero(rng.random(n) < q), p["batch_size"]
            else:
                n_batches = int(math.ceil(n / p["batch_size"]))
                for _ in range(p["epochs"]):
                    for idx in np.array_split(rng.permutation(n), n_batches):
                        yield idx, idx.size

        for t, (idx, denom) in enumerate(batches()):
            released = noise[t] + dpsgd_batch_units(grid, yz[idx], w, C)   # exact integers
            w = dpsgd_update(w, grid.to_value(released) / denom, lr, lam, radius)
            w_sum += w

        self.noise_multiplier_ = float(z)
        self.epsilon_spent_ = float(spent)
        self.delta_spent_ = float(delta)
        self.n_steps_ = int(steps)
        self.batch_size_ = int(p["batch_size"])
        self.sampling_probability_ = float(q)
        self.dp_event_ = acc.dpsgd_dp_event(z, q, steps, sampling, epochs)
        self.neighbouring_ = rel
        self.accountant_ = "pld_group" if sampling == "poisson" and rel == "replace_one" else "pld"
        self.grid_step_ = grid.step
        self.noise_sigma_units_ = int(grid.sigma_units)
        return w_sum / steps if p["averaging"] == "uniform" else w
