"""Objective and output perturbation for L2-regularised logistic regression
[CMS11, KST12]."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from .._limits import OUTPUT_PERTURBATION_MAX_FEATURES
from .._validation import check_auto_or, check_choice, check_positive
from ..calibration import GridNoise, grid_gaussian, grid_laplace
from ..exceptions import ParameterError, UncertifiedReleaseWarning
from ..mechanisms import draw_grid_noise, release_on_grid
from . import _accounting as acc
from . import _defaults
from ._base import PrivateLinearClassifier, logistic_dloss, logistic_loss, merge_rows

__all__ = [
    "ObjectivePerturbationLogisticRegression",
    "OutputPerturbationLogisticRegression",
    "minimize_regularized_logistic",
    "output_perturbation_grid",
    "sample_gamma_norm_noise",
]

#: Bound on the second derivative of the logistic loss (c in [CMS11]).
LOGISTIC_C = 0.25
#: Noises of output perturbation (see OutputPerturbationLogisticRegression).
OUTPUT_NOISES = ("auto", "laplace", "gaussian")


def sample_gamma_norm_noise(rng, d: int, beta: float) -> np.ndarray:
    """A vector b in R^d with density proportional to ``exp(-beta ||b||)``:
    its norm is Gamma(shape d, scale 1/beta) -- drawn as a sum of d
    Exponential(scale 1/beta) variables, which the secure generator provides --
    and its direction is uniform (a normalised standard normal vector)
    ([CMS11], Algorithms 1 and 2)."""
    norm = float(np.sum(rng.exponential(1.0 / beta, size=d)))
    direction = np.asarray(rng.normal(0.0, 1.0, size=d), dtype=float)
    direction /= np.linalg.norm(direction)
    return norm * direction


def minimize_regularized_logistic(yz: np.ndarray, reg: float, linear=None,
                                  tol: float = 1e-8, max_iter: int = 100):
    """argmin_w ``(1/n) sum log(1 + exp(-y_i <w, z_i>)) + (reg/2)||w||^2 + <linear, w>``
    (rows ``yz[i] = y_i z_i``) by Newton's method with backtracking (the
    objective is reg-strongly convex and smooth).  Returns
    ``(w, gradient_norm)``."""
    n_records = yz.shape[0]
    yz, counts = merge_rows(yz)
    wts = counts / n_records
    d = yz.shape[1]
    lin = np.zeros(d) if linear is None else np.asarray(linear, dtype=float)

    def obj(w):
        return wts @ logistic_loss(yz @ w) + 0.5 * reg * (w @ w) + lin @ w

    w = np.zeros(d)
    f = obj(w)
    gnorm = np.inf
    for _ in range(max_iter):
        m = yz @ w
        dl = logistic_dloss(m)
        grad = yz.T @ (wts * dl) + reg * w + lin
        gnorm = float(np.linalg.norm(grad))
        if gnorm <= tol:
            break
        s = 0.25 * (1.0 - np.tanh(0.5 * m) ** 2)  # sigma(m)(1 - sigma(m))
        step = _newton_step(yz, wts * s, reg, grad)
        t = 1.0
        while True:
            w_new = w - t * step
            f_new = obj(w_new)
            if f_new <= f - 1e-4 * t * (grad @ step) or t < 1e-12:
                break
            t *= 0.5
        if f_new >= f:  # no further decrease possible in floating point (equal: the line search stalled)
            break
        w, f = w_new, f_new
    return w, gnorm


def _newton_step(a: np.ndarray, c: np.ndarray, reg: float, grad: np.ndarray) -> np.ndarray:
    """``H^{-1} grad`` for the Hessian ``H = A^T diag(c) A + reg I`` (A: k x d, c >= 0).

    With at least as many rows as columns, H (d x d) is solved directly; with fewer
    (wide data), by the Woodbury identity with ``B = diag(sqrt(c)) A``:
    ``H^{-1} g = (g - B^T (reg I_k + B B^T)^{-1} B g) / reg``, a k x k system, so
    the step costs O(k^2 d) time and O(k d) memory instead of O(d^3) and O(d^2)
    (a million features needed a 7.3 TiB Hessian)."""
    k, d = a.shape
    if k >= d:
        return np.linalg.solve((a.T * c) @ a + reg * np.eye(d), grad)
    b = a * np.sqrt(c)[:, None]
    inner = b @ b.T + reg * np.eye(k)
    return (grad - b.T @ np.linalg.solve(inner, b @ grad)) / reg


def _warn_if_inexact(gnorm, tol):
    """Warn when the minimiser stopped above the public tolerance ``tol``.  The text quotes
    ``tol`` only, never ``gnorm``: the gradient norm is computed from the data (output
    perturbation's, without any noise), and a message after the data is read carries no
    value computed from it; whether it is said is not covered by the guarantee, as an
    uncertified solve is not (docs/guarantees.md, Certification)."""
    if gnorm > tol:
        warnings.warn(
            f"the perturbed objective was not minimised to the gradient-norm tolerance tol={tol:g} within "
            "the Newton iterations; the privacy proof assumes the exact minimiser.",
            UncertifiedReleaseWarning,
            stacklevel=3,
        )


class _RegularizedLogisticRegression(PrivateLinearClassifier):
    """Shared parameters of the two [CMS11] perturbation estimators: L2
    regularization ``alpha`` (Lambda; ``"auto"`` = the public rule of the
    subclass, a function of n, the dimension d_z of z and epsilon, recorded
    in ``alpha_``) and the tolerance ``tol`` of the exact (Newton)
    minimization; both are pure epsilon-DP by default (output perturbation
    can add Gaussian noise for (epsilon, delta) instead: its ``noise``)."""

    _pure_dp = True
    #: The public rule behind ``alpha="auto"`` (n, d_z, epsilon) -> Lambda.
    _auto_alpha: Callable[[int, int, float], float] | None = None

    def __init__(self, epsilon=1.0, delta=0.0, *, alpha="auto", tol=1e-8, fit_intercept=True,
                 bounds=None, data_norm=None, random_state=None, classes=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.bounds = bounds
        self.data_norm = data_norm
        self.random_state = random_state
        self.classes = classes
        self.ledger = ledger

    def _check_params(self):
        return {"alpha": check_auto_or(self.alpha, "alpha", check_positive, "a positive number"),
                "tol": check_positive(self.tol, "tol")}

    def _resolve_alpha(self, p, n, d, eps):
        """Lambda: the given ``alpha`` or the public rule (the caller records it
        as ``alpha_`` once the fit has succeeded)."""
        return float(self._auto_alpha(n, d, eps) if p["alpha"] == "auto" else p["alpha"])


class ObjectivePerturbationLogisticRegression(_RegularizedLogisticRegression):
    r"""L2-regularised logistic regression by objective perturbation
    ([CMS11], Algorithm 2; [KST12]).

    Conditions of the proof ([CMS11], Theorem 9), all met here: every row has
    ``||z|| <= 1`` (public feature map: clip to PUBLIC ``bounds``, clip rows to
    ``data_norm``, divide; see ``_base``); the loss is convex and twice
    differentiable with ``|l'| <= 1`` and ``|l''| <= c = 1/4`` (logistic);
    the regulariser ``(Lambda/2)||w||^2`` (``Lambda = alpha``) is 1-strongly
    convex times Lambda, and the Hessian of each loss term is rank one
    ([KST12] make this explicit).  The intercept is an ordinary regularised
    weight on the constant feature.

    Mechanism (pure epsilon-DP under replace-one neighbours, n public;
    ``delta`` is accepted for a uniform interface and not used):

    1. ``eps' = eps - log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``;
    2. if ``eps' > 0``: ``Delta = 0``; else ``Delta = c/(n (e^{eps/4} - 1)) - Lambda``
       and ``eps' = eps/2`` (the Delta adjustment adds regularisation when
       Lambda is too small for the budget);
    3. b with density proportional to ``exp(-beta ||b||)``, ``beta = eps'/2``;
    4. output ``argmin_w (1/n) sum_i l(y_i <w, z_i>) + (Lambda/2)||w||^2
       + (1/n) <b, w> + (Delta/2)||w||^2``
       (:func:`~privopt.baselines._accounting.objective_perturbation_parameters`).

    The proof needs the exact minimiser; Newton's method is run to gradient
    norm ``tol`` and :class:`~privopt.exceptions.UncertifiedReleaseWarning` is
    emitted if it stops short.

    Regularization: ``alpha="auto"`` (default) is the public rule
    ``Lambda = 0.1 d_z / (n eps)`` (d_z: features plus the intercept column;
    :func:`~privopt.baselines._defaults.default_objective_perturbation_alpha`),
    which bounds the shift the noise causes in the minimiser
    (``||b|| / (n Lambda)``, ``E||b|| = 2 d_z / eps'``) independently of n;
    a number sets Lambda directly.

    Attributes
    ----------
    alpha_ : Lambda used.
    epsilon_spent_ : epsilon (pure DP).  delta_spent_ : 0.
    epsilon_prime_, Delta_, beta_ : the quantities of steps 1-3.

    References
    ----------
    [CMS11] Chaudhuri, Monteleoni, Sarwate. Differentially private empirical
    risk minimization. JMLR 12:1069-1109, 2011.
    [KST12] Kifer, Smith, Thakurta. Private convex empirical risk minimization
    and high-dimensional regression. COLT 2012.
    """

    _auto_alpha = staticmethod(_defaults.default_objective_perturbation_alpha)


    def _fit_private(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        lam = self._resolve_alpha(p, n, d, eps)
        eps_p, big_delta, beta = acc.objective_perturbation_parameters(eps, n, lam, LOGISTIC_C)
        b = sample_gamma_norm_noise(rng, d, beta)
        w, gnorm = minimize_regularized_logistic(
            Z * y[:, None], lam + big_delta, linear=b / n, tol=p["tol"]
        )
        _warn_if_inexact(gnorm, p["tol"])
        self.alpha_ = lam
        self.epsilon_spent_ = float(eps)
        self.delta_spent_ = 0.0
        self.epsilon_prime_ = float(eps_p)
        self.Delta_ = float(big_delta)
        self.beta_ = float(beta)
        return w


class OutputPerturbationLogisticRegression(_RegularizedLogisticRegression):
    r"""L2-regularised logistic regression by output perturbation
    ([CMS11], Algorithm 1; Gaussian noise for (epsilon, delta) optionally).

    ``w* = argmin_w (1/n) sum_i l(y_i <w, z_i>) + (Lambda/2)||w||^2``
    (``Lambda = alpha``) has L2 sensitivity ``Delta = 2 / (n Lambda)`` under
    replace-one neighbours when ``||z|| <= 1`` and the loss is 1-Lipschitz
    ([CMS11], Corollary 8).  [CMS11] release ``w* + b`` with continuous
    noise; computed in doubles that release falls to a floating-point attack
    (Mironov, CCS 2012: an output can be impossible under the neighbour), so
    privopt releases ``gamma (round(w* / gamma) + Z)`` on a grid gamma = 2^k
    fixed before the data is read, with Z an integer vector drawn exactly
    (:func:`output_perturbation_grid`, :mod:`privopt.calibration._grid`):

    * ``noise="laplace"``: Z_j i.i.d. discrete Laplace calibrated to the l1
      sensitivity ``sqrt(d_z) Delta`` (pure epsilon-DP, ``delta`` not used).
      Its expected norm is about ``sqrt(2) d_z Delta / eps``, sqrt(2) times
      that of [CMS11]'s Algorithm 1 (density ``exp(-beta ||b||)``), which has
      no exact sampler on a grid;
    * ``noise="gaussian"``: Z_j i.i.d. discrete Gaussian for the l2
      sensitivity Delta at (epsilon, delta) through zCDP ([CKS20], Theorem 14
      and Corollary 13); its sigma is about 8% above the analytic Gaussian
      scale of [BW18] for continuous noise; needs ``delta > 0``;
    * ``noise="auto"`` (default): Gaussian when ``delta > 0`` and its expected
      norm is the smaller of the two (a public rule of (d_z, epsilon, delta):
      :func:`~privopt.baselines._defaults.default_output_perturbation_noise`),
      else Laplace.

    The sensitivity bound is for the exact minimiser (same warning as
    objective perturbation).

    Regularization: ``alpha="auto"`` (default) is the public rule
    ``Lambda = d_z / (n eps)`` (d_z: features plus the intercept column;
    :func:`~privopt.baselines._defaults.default_output_perturbation_alpha`),
    under which the Laplace noise has expected norm ``2 d_z / (n Lambda eps)
    = 2`` whatever n (the Gaussian one, when chosen, less); a number sets
    Lambda directly.  The noise ignores the curvature of the loss (the
    sensitivity ``2 / (n Lambda)`` is a worst case), so at the same epsilon
    objective perturbation is usually more accurate
    (``benchmarks/bench_small_data.py``).

    Attributes
    ----------
    alpha_ : Lambda used.  noise_ : "laplace" or "gaussian".
    epsilon_spent_, delta_spent_ (0 for Laplace noise; for Gaussian the delta
    the grid's zCDP bound delivers, at most delta), sensitivity_ = 2/(n Lambda),
    noise_scale_ (the Laplace scale or Gaussian sigma in the weights' units),
    noise_std_ (Gaussian sigma; else None), grid_step_ (gamma), beta_ (None:
    [CMS11]'s Gamma-norm noise is no longer used).

    References
    ----------
    [CMS11] Chaudhuri, Monteleoni, Sarwate. Differentially private empirical
    risk minimization. JMLR 12:1069-1109, 2011.
    [BW18] Balle, Wang. Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising. ICML 2018.
    [CKS20] Canonne, Kamath, Steinke. The discrete Gaussian for differential
    privacy. NeurIPS 2020.
    """

    _auto_alpha = staticmethod(_defaults.default_output_perturbation_alpha)
    # its exact noise on the grid takes 40 s at a million features (privopt._limits)
    _max_features = OUTPUT_PERTURBATION_MAX_FEATURES

    def __init__(self, epsilon=1.0, delta=0.0, *, alpha="auto", noise="auto", tol=1e-8,
                 fit_intercept=True, bounds=None, data_norm=None, random_state=None, classes=None, ledger=None):
        super().__init__(epsilon, delta, alpha=alpha, tol=tol, fit_intercept=fit_intercept,
                         bounds=bounds, data_norm=data_norm, random_state=random_state, classes=classes,
                         ledger=ledger)
        self.noise = noise

    def _check_params(self):
        p = super()._check_params()
        p["noise"] = check_choice(self.noise, "noise", OUTPUT_NOISES)
        if p["noise"] == "gaussian" and not self.delta > 0:
            raise ParameterError(
                "noise='gaussian' is (epsilon, delta)-DP and needs delta > 0; pass delta (e.g. "
                "1/n^2) or use noise='laplace' (pure epsilon-DP).", "noise")
        return p

    def _fit_private(self, Z, y, rng, eps, delta, p):
        n, d = Z.shape
        lam = self._resolve_alpha(p, n, d, eps)
        noise = p["noise"] if p["noise"] != "auto" else \
            _defaults.default_output_perturbation_noise(d, eps, delta)
        grid = output_perturbation_grid(noise, eps, delta, n, lam, d)
        z = draw_grid_noise(rng, grid, d)
        w, gnorm = minimize_regularized_logistic(Z * y[:, None], lam, tol=p["tol"])
        _warn_if_inexact(gnorm, p["tol"])
        self.alpha_ = lam
        self.noise_ = noise
        self.epsilon_spent_ = float(grid.epsilon)
        self.delta_spent_ = float(grid.delta)
        self.beta_ = None
        self.noise_scale_ = grid.scale
        self.noise_std_ = grid.scale if noise == "gaussian" else None
        self.grid_step_ = grid.step
        self.sensitivity_ = 2.0 / (n * lam)
        return release_on_grid(w, grid, z)


def output_perturbation_grid(noise: str, epsilon: float, delta: float, n: int, alpha: float,
                             d: int) -> GridNoise:
    """The law of output perturbation's noise on a grid fixed before the data is
    read.  The L2 sensitivity of the regularised minimiser is
    ``Delta_2 = 2 / (n Lambda)`` ([CMS11], Corollary 8; ||z|| <= 1, 1-Lipschitz
    loss), so its l1 sensitivity is at most ``sqrt(d) Delta_2``:

    * ``"laplace"``: exact discrete Laplace per coordinate for l1 sensitivity
      ``sqrt(d) Delta_2`` (:func:`privopt.calibration.grid_laplace`), pure
      epsilon-DP;
    * ``"gaussian"``: exact discrete Gaussian per coordinate for l2 sensitivity
      ``Delta_2`` at (epsilon, delta) through zCDP
      (:func:`privopt.calibration.grid_gaussian`, [CKS20] Theorem 14 and
      Corollary 13).
    """
    sensitivity = 2.0 / (n * alpha)
    if noise == "gaussian":
        return grid_gaussian(sensitivity, epsilon, delta, d)
    return grid_laplace(math.sqrt(d) * sensitivity, epsilon, d)
