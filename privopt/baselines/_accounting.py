"""Every noise scale and privacy parameter of :mod:`privopt.baselines`.

Each quantity is computed by one function here, named after what it returns
and citing the equation it implements; the estimators call these functions
and nothing else computes a scale.  The tests check each against values worked
out independently (closed forms, a numeric root, or ``dp_accounting``).

Neighbouring relations
----------------------
``add/remove``  data sets that differ by adding or removing one record (the
                relation of the RDP accountant's ``PoissonSampledDpEvent``).
``replace-one`` data sets of the same size ``n`` that differ in one record
                (the relation of [CMS11] and of the noisy SGD of [AMU20]); ``n``
                is public.

References
----------
[ACG+16] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang. Deep learning
    with differential privacy. CCS 2016.
[Mir17]  Mironov. Renyi differential privacy. CSF 2017.
[MTZ19]  Mironov, Talwar, Zhang. Renyi differential privacy of the sampled
    Gaussian mechanism. arXiv 1908.10530 (the RDP of ``PoissonSampledDpEvent``).
[BS16]   Bun, Steinke. Concentrated differential privacy: simplifications,
    extensions, and lower bounds. TCC 2016.
[BW18]   Balle, Wang. Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising. ICML 2018.
[BBG18]  Balle, Barthe, Gaboardi. Privacy amplification by subsampling: tight
    analyses via couplings and divergences. NeurIPS 2018.
[DR14]   Dwork, Roth. The algorithmic foundations of differential privacy. 2014.
[CMS11]  Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk
    minimization. JMLR 12, 2011.
[LK18]   Lee, Kifer. Concentrated differentially private gradient descent with
    adaptive per-iteration privacy budget. KDD 2018.
"""

from __future__ import annotations

from .._optional import require

import contextlib
import functools
import logging
import math

import numpy as np

__all__ = [
    "zcdp_rho_from_dp",
    "dp_epsilon_from_zcdp",
    "gaussian_sigma_for_zcdp",
    "gaussian_zcdp_rho",
    "noisy_max_exponential_scale",
    "classical_gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_epsilon",
    "amplify_by_subsampling",
    "deamplify_by_subsampling",
    "dpsgd_dp_event",
    "dpsgd_epsilon",
    "dpsgd_calibrate_noise_multiplier",
    "noisy_sgd_sigma",
    "noisy_sgd_epsilon",
    "expected_draws_until_distinct",
    "noisy_sgd_step_size",
    "objective_perturbation_parameters",
    "output_perturbation_beta",
]


# ---------------------------------------------------------------------------
# zCDP [BS16]
# ---------------------------------------------------------------------------
def dp_epsilon_from_zcdp(rho: float, delta: float) -> float:
    """epsilon of the (epsilon, delta)-DP implied by rho-zCDP.

    [BS16, Proposition 1.3]: rho-zCDP implies
    ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP for every delta > 0.
    """
    if rho < 0:
        raise ValueError("rho must be >= 0")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_rho_from_dp(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee implies (epsilon, delta)-DP.

    Solves ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` [BS16, Prop. 1.3] for
    rho: with ``s = sqrt(rho)`` and ``L = ln(1/delta)`` the equation is
    ``s^2 + 2 s sqrt(L) - epsilon = 0``, whose positive root gives

        rho = (sqrt(L + epsilon) - sqrt(L))^2.

    This is the conversion used by [LK18] (their code solves the same equation
    numerically).
    """
    big_l = math.log(1.0 / delta)
    # (sqrt(L+e) - sqrt(L))^2 written without cancellation:
    root = epsilon / (math.sqrt(big_l + epsilon) + math.sqrt(big_l))
    return root * root


def gaussian_zcdp_rho(sensitivity: float, sigma: float) -> float:
    """rho of the Gaussian mechanism: ``Delta^2 / (2 sigma^2)`` [BS16, Prop. 1.6]."""
    return sensitivity**2 / (2.0 * sigma**2)


def gaussian_sigma_for_zcdp(sensitivity: float, rho: float) -> float:
    """sigma giving rho-zCDP for L2 sensitivity Delta: ``Delta / sqrt(2 rho)``
    [BS16, Prop. 1.6] (the noisy gradient of [LK18], Alg. 2)."""
    return sensitivity / math.sqrt(2.0 * rho)


def noisy_max_exponential_scale(sensitivity: float, rho: float) -> float:
    """Scale b of the one-sided exponential noise of Report Noisy Max.

    Report Noisy Max with i.i.d. Exponential(scale b) noise added to *monotone*
    scores of sensitivity Delta (every score moves in the same direction, by
    at most Delta, between neighbours) is eps-DP with ``b = Delta / eps``
    ([DR14], Claim 3.9 and the remark after it; the argument uses only the
    memorylessness of the exponential).  eps-DP implies (eps^2/2)-zCDP
    [BS16, Prop. 1.4], so for a budget rho we take ``eps = sqrt(2 rho)``:

        b = Delta / sqrt(2 rho).

    This is the NoisyMax of [LK18] (Alg. 2; the authors' code uses the same
    scale).
    """
    return sensitivity / math.sqrt(2.0 * rho)


# ---------------------------------------------------------------------------
# The Gaussian mechanism for (epsilon, delta)
# ---------------------------------------------------------------------------
def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``Delta sqrt(2 ln(1.25/delta)) / epsilon`` ([DR14], Theorem A.1; valid
    for epsilon < 1).  Used only to initialise the per-iteration budget of
    DP-AGD as the authors did, never to claim a guarantee."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma for which N(0, sigma^2) noise on a query of L2
    sensitivity Delta is (epsilon, delta)-DP: the analytic Gaussian mechanism
    [BW18, Theorem 8], computed by ``dp_accounting.get_sigma_gaussian``.
    It is exact (no epsilon < 1 restriction) and never larger than
    :func:`classical_gaussian_sigma`."""
    dp_accounting = require("dp_accounting")

    return sensitivity * float(dp_accounting.get_sigma_gaussian(epsilon, delta))


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact epsilon of the Gaussian mechanism [BW18]
    (``dp_accounting.get_epsilon_gaussian`` at noise ``sigma / Delta``)."""
    dp_accounting = require("dp_accounting")

    return float(dp_accounting.get_epsilon_gaussian(sigma / sensitivity, delta))


# ---------------------------------------------------------------------------
# Amplification by subsampling [BBG18]
# ---------------------------------------------------------------------------
def amplify_by_subsampling(epsilon: float, delta: float, q: float) -> tuple[float, float]:
    """``(log(1 + q (e^eps - 1)), q delta)``: the guarantee of a mechanism that
    is (eps, delta)-DP under replace-one neighbours when it is run on a subsample
    of m out of n records drawn without replacement, ``q = m / n`` ([BBG18],
    Section 5: sampling without replacement, substitution relation; the
    proof couples the two subsamples so that they differ with probability q
    and uses advanced joint convexity, their Theorem 2)."""
    return math.log1p(q * math.expm1(epsilon)), q * delta


def deamplify_by_subsampling(epsilon: float, delta: float, q: float) -> tuple[float, float]:
    """The inverse of :func:`amplify_by_subsampling`: the (eps0, delta0) a base
    mechanism may have so that the subsampled mechanism is (eps, delta)-DP:
    ``eps0 = log(1 + (e^eps - 1)/q)``, ``delta0 = delta / q``."""
    return math.log1p(math.expm1(epsilon) / q), delta / q


# ---------------------------------------------------------------------------
# DP-SGD with the RDP accountant [ACG+16, Mir17, MTZ19]
# ---------------------------------------------------------------------------
class _DropOrderWarnings(logging.Filter):
    """dp_accounting logs a warning when its series for a fractional RDP order
    does not converge and then leaves that order out of the minimum over
    orders: the epsilon it returns stays a valid upper bound.  During
    calibration Brent's method probes many such points; drop those lines."""

    def filter(self, record):
        return "failed to converge" not in record.getMessage()


@contextlib.contextmanager
def _quiet_rdp_orders():
    logger = logging.getLogger("absl")
    flt = _DropOrderWarnings()
    logger.addFilter(flt)
    try:
        yield
    finally:
        logger.removeFilter(flt)


def _neighboring(sampling: str):
    dp_accounting = require("dp_accounting")

    rel = dp_accounting.NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if sampling == "poisson" else rel.REPLACE_ONE


def dpsgd_dp_event(noise_multiplier: float, sampling_probability: float, steps: int,
                   sampling: str = "poisson", epochs: int | None = None):
    """The ``dp_accounting`` event that DP-SGD's release is accounted as.

    ``sampling="poisson"``: each step includes each record independently with
    probability q and adds N(0, (z C)^2) to the sum of clipped gradients
    [ACG+16, Alg. 1]:
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``
    under add/remove neighbours (this is exactly the mechanism [MTZ19] analyse).

    ``sampling="shuffle"``: each epoch splits a fresh random permutation into
    fixed-size batches.  The Poisson analysis does **not** cover this, so we
    claim no amplification: under replace-one neighbours a record enters one
    batch per epoch and moves the clipped sum by at most 2C, a Gaussian
    mechanism of noise multiplier z/2 per epoch; ``epochs`` of them compose
    (the placement of the record, hidden, only mixes these bounds, and Renyi
    divergence is jointly quasi-convex):
    ``SelfComposedDpEvent(GaussianDpEvent(z/2), epochs)``.
    """
    dp_accounting = require("dp_accounting")

    if sampling == "poisson":
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(
                sampling_probability, dp_accounting.GaussianDpEvent(noise_multiplier)
            ),
            int(steps),
        )
    if sampling == "shuffle":
        if epochs is None:
            raise ValueError("sampling='shuffle' needs epochs")
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(noise_multiplier / 2.0), int(epochs)
        )
    raise ValueError(f"unknown sampling {sampling!r}")


def dpsgd_epsilon(noise_multiplier: float, sampling_probability: float, steps: int,
                  delta: float, sampling: str = "poisson", epochs: int | None = None) -> float:
    """epsilon of DP-SGD at ``delta`` by ``dp_accounting.rdp.RdpAccountant``
    (default orders) on :func:`dpsgd_dp_event`."""
    rdp = require("dp_accounting.rdp")

    acc = rdp.RdpAccountant(neighboring_relation=_neighboring(sampling))
    with _quiet_rdp_orders():
        acc.compose(dpsgd_dp_event(noise_multiplier, sampling_probability, steps, sampling, epochs))
        return float(acc.get_epsilon(delta))


@functools.lru_cache(maxsize=256)
def dpsgd_calibrate_noise_multiplier(epsilon: float, delta: float, sampling_probability: float,
                                     steps: int, sampling: str = "poisson",
                                     epochs: int | None = None) -> float:
    """The smallest noise multiplier z (within 1e-6) for which
    :func:`dpsgd_epsilon` is <= epsilon, by
    ``dp_accounting.calibrate_dp_mechanism`` (Brent's method on the RDP
    accountant).  The result is re-checked, and nudged up if rounding left it
    a hair over the target."""
    dp_accounting = require("dp_accounting")
    rdp = require("dp_accounting.rdp")

    rel = _neighboring(sampling)

    def make_event(z):
        return dpsgd_dp_event(z, sampling_probability, steps, sampling, epochs)

    with _quiet_rdp_orders():
        z = float(
            dp_accounting.calibrate_dp_mechanism(
                lambda: rdp.RdpAccountant(neighboring_relation=rel),
                make_event,
                epsilon,
                delta,
                dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
                tol=1e-6,
            )
        )
    for _ in range(60):
        if dpsgd_epsilon(z, sampling_probability, steps, delta, sampling, epochs) <= epsilon:
            return z
        z *= 1.0 + 1e-6
    raise RuntimeError("noise multiplier calibration did not reach the target epsilon")


# ---------------------------------------------------------------------------
# Noisy SGD that stops when half the points have been seen [AMU20]
# ---------------------------------------------------------------------------
def noisy_sgd_sigma(epsilon: float, delta: float, n: int, n_seen: int,
                    lipschitz: float = 1.0) -> float:
    """Per-step noise std of :class:`~privopt.baselines.NoisySGDClassifier`.

    Derivation (replace-one neighbours, n public).  Every record enters at
    most one gradient step (its first draw; later draws are noise-only
    steps), so given the data-independent index sequence two neighbours'
    runs differ in one Gaussian step of L2 sensitivity ``2 L`` (one gradient
    of norm <= L swapped for another).  The records used are a uniformly
    random subset of size ``n_seen`` (exchangeability of uniform draws), so
    the record that differs is used with probability ``q = n_seen / n``;
    coupling the two index sequences identically, [BBG18] gives
    ``(log(1 + q (e^eps0 - 1)), q delta0)``-DP when the single step is
    (eps0, delta0)-DP.  We therefore solve for the base guarantee with
    :func:`deamplify_by_subsampling` and take the exact Gaussian scale
    [BW18]:

        sigma = 2 L * analytic_gaussian_sigma(log(1 + (e^eps - 1)/q), delta/q).

    No amplification by iteration or per-step subsampling is claimed (see the
    estimator's docstring for why this differs from [AMU20], Theorem 6).
    """
    q = n_seen / n
    eps0, delta0 = deamplify_by_subsampling(epsilon, delta, q)
    if delta0 >= 1.0:
        delta0 = 1.0 - 1e-12
    return 2.0 * lipschitz * analytic_gaussian_sigma(eps0, delta0)


def noisy_sgd_epsilon(sigma: float, delta: float, n: int, n_seen: int,
                      lipschitz: float = 1.0) -> float:
    """epsilon of that noisy SGD at ``delta`` (inverse of :func:`noisy_sgd_sigma`)."""
    q = n_seen / n
    eps0 = analytic_gaussian_epsilon(sigma, delta / q, sensitivity=2.0 * lipschitz)
    return amplify_by_subsampling(eps0, delta / q, q)[0]


def expected_draws_until_distinct(n: int, m: int) -> float:
    """Expected number of uniform draws with replacement from n items until m
    distinct items have been seen (coupon collector):
    ``sum_{k=0}^{m-1} n / (n - k)`` (about ``n ln 2`` for m = n/2)."""
    k = np.arange(m, dtype=float)
    return float(np.sum(n / (n - k)))


def noisy_sgd_step_size(radius: float, lipschitz: float, sigma: float, d: int,
                        expected_steps: float) -> float:
    """``eta = D / sqrt(T_bar (L^2 + d sigma^2))``: the step size minimising the
    projected-subgradient bound ``(D^2/(2 eta) + eta T (L^2 + d sigma^2)/2) / m``
    for the average of the fresh-step iterates of the noisy SGD (second moment
    of a noisy step <= L^2 + d sigma^2; T replaced by its expectation T_bar)."""
    return radius / math.sqrt(expected_steps * (lipschitz**2 + d * sigma**2))


# ---------------------------------------------------------------------------
# Objective and output perturbation [CMS11]
# ---------------------------------------------------------------------------
def objective_perturbation_parameters(epsilon: float, n: int, alpha: float,
                                      c: float = 0.25) -> tuple[float, float, float]:
    """``(epsilon_prime, Delta, beta)`` of [CMS11], Algorithm 2, steps 1-3.

    1. ``eps' = eps - log(1 + 2c/(n Lambda) + c^2/(n^2 Lambda^2))``;
    2. if ``eps' > 0``: ``Delta = 0``; else ``Delta = c / (n (e^{eps/4} - 1)) - Lambda``
       and ``eps' = eps / 2``;
    3. the noise b has density proportional to ``exp(-beta ||b||)`` with
       ``beta = eps' / 2``.

    ``Lambda`` is ``alpha`` (objective ``(1/n) sum loss + (Lambda/2)||w||^2``),
    ``c`` bounds the second derivative of the loss (1/4 for the logistic loss).
    """
    ratio = c / (n * alpha)
    eps_p = epsilon - math.log1p(2.0 * ratio + ratio * ratio)
    if eps_p > 0:
        big_delta = 0.0
    else:
        big_delta = c / (n * math.expm1(epsilon / 4.0)) - alpha
        eps_p = epsilon / 2.0
    return eps_p, max(big_delta, 0.0), eps_p / 2.0


def output_perturbation_beta(epsilon: float, n: int, alpha: float, lipschitz: float = 1.0) -> float:
    """beta of [CMS11], Algorithm 1: noise density ``exp(-beta ||b||)`` with
    ``beta = n Lambda eps / 2`` (the L2 sensitivity of the regularised
    minimiser is ``2 L / (n Lambda)`` [CMS11, Corollary 8], for ||x|| <= 1 and
    an L-Lipschitz loss; L = 1 for the logistic loss)."""
    return n * alpha * epsilon / (2.0 * lipschitz)
