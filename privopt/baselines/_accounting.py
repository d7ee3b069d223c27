"""Every noise scale and privacy parameter of :mod:`privopt.baselines`.

Each quantity is computed by one function here, named after what it returns
and citing the equation it implements; the estimators call these functions
and nothing else computes a scale.  The tests check each against values worked
out independently (closed forms, a numeric root, or ``dp_accounting``).

Neighbouring relation
---------------------
privopt uses **replace-one** everywhere: data sets of the same size ``n``
that differ in one record ([NRVW20] Definition 2.5, also the relation of
[CMS11] and [AMU20]); ``n`` is then public, so schedules may depend on it.
DP-SGD can also be accounted under **add/remove** (a data set with one
record more or less) when a user asks for it; it is never the default.
Under replace-one a mechanism spends roughly twice the epsilon it spends
under add/remove at the same noise.

References
----------
[NRVW20] Neel, Roth, Vietri, Wu. Oracle efficient private non-convex
    optimization. ICML 2020.
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
[KJH20]  Koskela, Jalko, Honkela. Computing tight differential privacy
    guarantees using FFT. AISTATS 2020 (the PLD accountant).
[DGKKM22] Doroshenko, Ghazi, Kamath, Kumar, Manurangsi. Connect the dots:
    tighter discrete approximations of privacy loss distributions. PoPETs 2022.
[CKS20]  Canonne, Kamath, Steinke. The discrete Gaussian for differential
    privacy. NeurIPS 2020 (Proposition 12: RDP to (epsilon, delta)).
[DR14]   Dwork, Roth. The algorithmic foundations of differential privacy. 2014.
[CMS11]  Chaudhuri, Monteleoni, Sarwate. Differentially private empirical risk
    minimization. JMLR 12, 2011.
[LK18]   Lee, Kifer. Concentrated differentially private gradient descent with
    adaptive per-iteration privacy budget. KDD 2018.
[FS25]   Feldman, Shenfeld. Privacy amplification by random allocation.
    arXiv 2502.08202, 2025.
[FS26]   Feldman, Shenfeld. Efficient privacy loss accounting for subsampling and
    random allocation. ICML 2026, arXiv 2602.17284 (the ``PLD_accounting``
    package, ``pip install pld-accounting``, is the authors' implementation).
[CGH+25] Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha, Zhang.
    Balls-and-bins sampling for DP-SGD. AISTATS 2025.
[ZDW22]  Zhu, Dong, Wang. Optimal accounting of differential privacy via
    characteristic function. AISTATS 2022 (dominating pairs, Poisson subsampling).
[KLS21]  Kairouz, Liu, Steinke. The distributed discrete Gaussian mechanism for
    federated learning with secure aggregation. ICML 2021.
"""

from __future__ import annotations

from .._cache import JsonCache
from .._optional import require

import functools
import hashlib
import importlib.metadata
import inspect
import json
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "zcdp_bs16_epsilon",
    "zcdp_bs16_rho",
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
    "DPSGD_NEIGHBOURING",
    "dpsgd_dp_event",
    "dpsgd_epsilon",
    "dpsgd_one_step_delta",
    "pld_discretization_interval",
    "dpsgd_calibrate_noise_multiplier",
    "discrete_gaussian_gaussian_shift",
    "dpsgd_grid_delta_split",
    "dpsgd_grid_noise_multiplier",
    "dpsgd_grid_epsilon",
    "grid_exponent",
    "grid_sensitivity_units",
    "grid_sigma_units",
    "noisy_sgd_sigma",
    "noisy_sgd_epsilon",
    "expected_draws_until_distinct",
    "noisy_sgd_step_size",
    "NOISY_SGD_ACCOUNTING",
    "GridCalibration",
    "noisy_sgd_grid_calibration",
    "grid_calibration",
    "GRID_MAX_TARGET",
    "noisy_sgd_grid_noise_multiplier",
    "noisy_sgd_grid_epsilon",
    "allocation_add_remove_pld",
    "noisy_sgd_allocation_delta",
    "noisy_sgd_allocation_epsilon",
    "noisy_sgd_allocation_epsilon_spent",
    "noisy_sgd_allocation_sigma",
    "noisy_sgd_allocation_steps",
    "noisy_sgd_allocation_step_size",
    "objective_perturbation_parameters",
    "output_perturbation_beta",
]


# ---------------------------------------------------------------------------
# On-disk cache of the slow accountings
# ---------------------------------------------------------------------------
#: The noise calibrations below are pure functions of public quantities
#: (epsilon, delta, the sampling rate, the number of steps, the neighbouring
#: relation) and of the code, and take up to minutes; their results are kept
#: in privopt's cache directory (:mod:`privopt._cache`: ``$PRIVOPT_CACHE_DIR``,
#: else the user cache directory, e.g. ``~/.cache/privopt/accounting.json``),
#: so a fresh process does not repeat them.  Storing them reveals nothing about
#: any data set, and a cache that cannot be read or written is skipped.
_DISK_CACHE = JsonCache("accounting")

#: The distributions whose versions enter the cache key (their accountants compute the values).
_KEY_PACKAGES = ("dp-accounting", "pld-accounting", "numpy", "scipy")


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """A hash of this module's source and of the versions of the packages that
    compute its values: any change to either gives new cache keys, so the
    cache never serves a value the current code would not compute."""
    h = hashlib.sha256()
    try:
        with open(__file__, "rb") as fh:
            h.update(fh.read())
    except OSError:  # pragma: no cover - a module without its source file
        h.update(b"no source")
    for name in _KEY_PACKAGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{name}={version};".encode())
    return h.hexdigest()[:24]


def _disk_key(name: str, values: tuple) -> str | None:
    """The key of :func:`_disk_cached` for function ``name`` at the arguments
    ``values`` (all of them, defaults filled in), or None when JSON cannot hold them."""
    try:
        return json.dumps([name, _code_fingerprint(), *values])
    except (TypeError, ValueError):
        return None


def _disk_cached(check):
    """Decorator: keep the float results of a function of public parameters in
    privopt's on-disk cache, keyed by the function's name, all its arguments
    (defaults filled in) and :func:`_code_fingerprint`.

    The cache is never trusted: anyone who can write its folder can plant a
    value.  ``check(value, *args)`` is required and re-verifies a value read
    back by a forward computation of the privacy claim it stands for (e.g. the
    delta a cached noise multiplier gives at the target epsilon); a value that
    fails it, or is not positive, is discarded with a
    :class:`~privopt.exceptions.CacheRejectedWarning` naming the file
    (:meth:`~privopt._cache.JsonCache.get_verified`), computed again and
    overwritten, so a planted value is never used.  The undecorated function
    is ``__wrapped__``."""
    def decorate(func):
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = tuple(bound.arguments.values())
            key = _disk_key(func.__name__, values)
            if key is None:  # an argument JSON cannot hold: no caching
                return func(*args, **kwargs)
            what = f"{func.__name__}{values}"
            cached = _DISK_CACHE.get_verified(key, lambda v: v > 0 and check(v, *values), what)
            if cached is not None:
                return cached
            value = func(*args, **kwargs)
            _DISK_CACHE.put(key, float(value))
            return value

        return wrapper

    return decorate


# ---------------------------------------------------------------------------
# zCDP [BS16]
# ---------------------------------------------------------------------------
def zcdp_bs16_epsilon(rho: float, delta: float) -> float:
    """epsilon of the (epsilon, delta)-DP implied by rho-zCDP by [BS16, Proposition 1.3]:
    ``rho + 2 sqrt(rho ln(1/delta))``."""
    if rho < 0:
        raise ValueError("rho must be >= 0")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_bs16_rho(epsilon: float, delta: float) -> float:
    """The inverse of :func:`zcdp_bs16_epsilon`.

    With ``s = sqrt(rho)`` and ``L = ln(1/delta)``, ``epsilon = s^2 + 2 s sqrt(L)``
    has the positive root ``rho = (sqrt(L + epsilon) - sqrt(L))^2``; this is the
    conversion of [LK18] (their code solves the same equation numerically).
    """
    big_l = math.log(1.0 / delta)
    # (sqrt(L+e) - sqrt(L))^2 written without cancellation:
    root = epsilon / (math.sqrt(big_l + epsilon) + math.sqrt(big_l))
    return root * root


def _zcdp_rdp_epsilon(rho: float, delta: float) -> float:
    rdp = require("dp_accounting.rdp")
    dp_accounting = require("dp_accounting")

    acc = rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta))


def dp_epsilon_from_zcdp(rho: float, delta: float) -> float:
    """epsilon of the (epsilon, delta)-DP implied by rho-zCDP.

    rho-zCDP is RDP of order a with value rho a for every a > 1 [BS16].  Two
    valid conversions are taken and the smaller kept: [BS16, Prop. 1.3]
    (:func:`zcdp_bs16_epsilon`) and ``dp_accounting``'s RDP accountant on
    ``ZCDpEvent(rho)``, whose RDP-to-DP conversion ([CKS20], Prop. 12, minimized
    over a grid of orders) is tighter at every order (e.g. rho = 0.0208,
    delta = 1e-5: 0.94 instead of 1.0).
    """
    if rho < 0:
        raise ValueError("rho must be >= 0")
    if rho == 0:
        return 0.0
    return min(zcdp_bs16_epsilon(rho, delta), _zcdp_rdp_epsilon(rho, delta))


def zcdp_rho_from_dp(epsilon: float, delta: float) -> float:
    """The largest rho (to a relative 1e-9) whose zCDP guarantee implies
    (epsilon, delta)-DP by :func:`dp_epsilon_from_zcdp`: Brent's method
    between the [BS16] value :func:`zcdp_bs16_rho` (a lower bound, since the
    conversion is never looser than [BS16]) and a bracket found by doubling."""
    from scipy import optimize

    lo = zcdp_bs16_rho(epsilon, delta)

    def excess(rho):
        return dp_epsilon_from_zcdp(rho, delta) - epsilon

    for _ in range(60):  # the closed form can round a hair above epsilon (e.g. epsilon = 1e4)
        if excess(lo) <= 0:
            break
        lo *= 1.0 - 1e-9
    else:  # pragma: no cover - the min() makes this impossible
        raise RuntimeError("zCDP conversion is looser than [BS16]")
    hi = 2.0 * lo
    while excess(hi) <= 0:
        lo, hi = hi, 2.0 * hi
    rho = float(optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=1e-10))
    while excess(rho) > 0:
        rho *= 1.0 - 1e-10
    return rho


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
    memorylessness of the exponential).  Scores that may move by at most
    Delta' in either direction become monotone with Delta = 2 Delta' after
    subtracting Delta' from all of them on one data set, which does not change
    the argmax: pass ``sensitivity = 2 Delta'`` (DP-AGD under replace-one).  eps-DP implies (eps^2/2)-zCDP
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
    if epsilon > 700.0:  # e^eps overflows; log(1 + q (e^eps - 1)) = eps + log q + log(1 + (1 - q) e^-eps / q)
        return epsilon + math.log(q) + math.log1p((1.0 - q) * math.exp(-epsilon) / q), q * delta
    return math.log1p(q * math.expm1(epsilon)), q * delta


def deamplify_by_subsampling(epsilon: float, delta: float, q: float) -> tuple[float, float]:
    """The inverse of :func:`amplify_by_subsampling`: the (eps0, delta0) a base
    mechanism may have so that the subsampled mechanism is (eps, delta)-DP:
    ``eps0 = log(1 + (e^eps - 1)/q)``, ``delta0 = delta / q``.  Above
    eps = 1 it is evaluated as ``eps - log q + log(1 - (1 - q) e^-eps)`` (the
    same number, without overflow at large eps)."""
    if epsilon > 1.0:
        return epsilon - math.log(q) + math.log1p(-(1.0 - q) * math.exp(-epsilon)), delta / q
    return math.log1p(math.expm1(epsilon) / q), delta / q


# ---------------------------------------------------------------------------
# DP-SGD with the PLD accountant [ACG+16, KJH20, DGKKM22]
# ---------------------------------------------------------------------------
#: Neighbouring relations DP-SGD can be accounted under; the first is the default.
DPSGD_NEIGHBOURING = ("replace_one", "add_remove")


def _relation(neighbouring: str):
    dp_accounting = require("dp_accounting")

    rel = dp_accounting.NeighboringRelation
    if neighbouring == "replace_one":
        return rel.REPLACE_ONE
    if neighbouring == "add_remove":
        return rel.ADD_OR_REMOVE_ONE
    raise ValueError(f"unknown neighbouring relation {neighbouring!r}")


def dpsgd_dp_event(noise_multiplier: float, sampling_probability: float, steps: int,
                   sampling: str = "poisson", epochs: int | None = None):
    """The ``dp_accounting`` event that DP-SGD's release is accounted as.

    ``sampling="poisson"``: each step includes each record independently with
    probability q and adds N(0, (z C)^2) to the sum of clipped gradients
    [ACG+16, Alg. 1]:
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``.
    Under replace-one neighbours the accountant compares the mixtures
    (1 - q) N(0, z^2) + q N(+1, z^2) and (1 - q) N(0, z^2) + q N(-1, z^2)
    (one clipped gradient of norm <= C swapped for another).

    ``sampling="shuffle"``: each epoch splits a fresh random permutation into
    fixed-size batches.  The Poisson analysis does **not** cover this, so no
    amplification is claimed: under replace-one neighbours a record enters one
    batch per epoch and moves the clipped sum by at most 2C, a Gaussian
    mechanism per epoch (the record's hidden batch position only mixes these
    bounds): ``SelfComposedDpEvent(GaussianDpEvent(z), epochs)``, accounted
    under REPLACE_ONE, which doubles the sensitivity of a Gaussian event.
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
        return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), int(epochs))
    raise ValueError(f"unknown sampling {sampling!r}")


def pld_discretization_interval(epsilon: float) -> float:
    """The PLD accountant's ``value_discretization_interval`` used at target
    ``epsilon``: 1e-4 (dp_accounting's default) up to epsilon = 1, then
    1e-4 * epsilon.  The pessimistic discretization gives an upper bound on
    epsilon at any interval; a coarser one only loosens it (by about 1e-5
    relative at epsilon = 20) while the cost of accounting a small noise
    multiplier falls tenfold."""
    return 1e-4 * max(1.0, float(epsilon))


@functools.lru_cache(maxsize=1024)
def dpsgd_epsilon(noise_multiplier: float, sampling_probability: float, steps: int,
                  delta: float, sampling: str = "poisson", epochs: int | None = None,
                  neighbouring: str = "replace_one",
                  value_discretization_interval: float = 1e-4) -> float:
    """epsilon of DP-SGD at ``delta``: the privacy loss distribution (PLD)
    accountant of ``dp_accounting`` ([KJH20]; [DGKKM22] for the
    connect-the-dots discretization, pessimistic, so the value is an upper
    bound) on :func:`dpsgd_dp_event`, under ``neighbouring`` ("replace_one",
    the default and privopt's relation everywhere, or "add_remove").

    The RDP accountant of ``dp_accounting`` does not support Poisson
    subsampling under replace-one; the PLD accountant does, and is tighter.
    Example: n = 12546, batch 256, T = 980, delta = 1/n^2: noise multiplier
    6.62 gives epsilon = 1.0 under replace-one (0.49 under add/remove).
    Results are memoized in the process (the estimator re-evaluates the
    calibrated noise once more to report it).
    """
    pld = require("dp_accounting.pld.pld_privacy_accountant")

    acc = pld.PLDAccountant(neighboring_relation=_relation(neighbouring),
                            value_discretization_interval=value_discretization_interval)
    acc.compose(dpsgd_dp_event(noise_multiplier, sampling_probability, steps, sampling, epochs))
    return float(acc.get_epsilon(delta))


def dpsgd_one_step_delta(noise_multiplier: float, sampling_probability: float, epsilon: float,
                         neighbouring: str = "replace_one") -> float:
    r"""The exact delta at ``epsilon`` of ONE step of DP-SGD as
    :func:`dpsgd_dp_event` accounts it (``sampling_probability`` = 1 for a
    step without subsampling, i.e. ``sampling="shuffle"``): the hockey-stick
    divergence ``sup_S P(S) - e^eps Q(S)`` of the pair of the
    accountant, in units of the clip norm and with ``z`` the noise
    multiplier, ``P = (1 - q) N(0, z^2) + q N(1, z^2)`` against
    ``Q = (1 - q) N(0, z^2) + q N(-1, z^2)`` (replace-one) or ``Q = N(0, z^2)``
    (add/remove, the remove direction).

    The likelihood ratio ``p/q`` increases in x (divide both densities by
    N(0, z^2)'s: ``(1 - q + q e^{(2x-1)/(2z^2)}) / (1 - q + q e^{(2bx-b^2)/(2z^2)})``,
    b = -1 or 0), so the supremum is at ``S = {x > x0}``, ``p(x0) = e^eps q(x0)``:
    ``delta = P(X > x0) - e^eps Q(X > x0)``.  E.g. q = 1, replace-one: the
    Gaussian mechanism of sensitivity 2, ``Phi(1/z - eps z/2) - e^eps Phi(-1/z - eps z/2)``
    [BW18, Theorem 8].

    The whole run releases this step's output among others, so its delta at
    epsilon is at least this one (the accountant's, being an upper bound, too):
    a lower bound that costs microseconds at any z, where the PLD accountant
    needs memory in proportion to 1/z (gigabytes at z = 0.03).  Above
    epsilon = 700 (e^eps overflows) it returns 0, a trivial lower bound.
    """
    from scipy import optimize, special

    z, q, eps = float(noise_multiplier), float(sampling_probability), float(epsilon)
    if not (z > 0 and 0 < q <= 1 and eps >= 0):
        raise ValueError("need noise_multiplier > 0, 0 < sampling_probability <= 1, epsilon >= 0")
    if eps > 700.0:
        return 0.0
    b = -1.0 if neighbouring == "replace_one" else 0.0
    if neighbouring not in DPSGD_NEIGHBOURING:
        raise ValueError(f"unknown neighbouring relation {neighbouring!r}")
    log_q = math.log(q)
    log_1q = math.log1p(-q) if q < 1.0 else -math.inf
    z = max(z, 1e-150)  # z^2 stays a normal float; more noise only lowers delta, so still a lower bound
    two_z2 = 2.0 * z * z

    def log_ratio_minus_eps(x):
        with np.errstate(over="ignore", invalid="ignore"):
            num = np.logaddexp(log_1q, log_q + (2.0 * x - 1.0) / two_z2)
            den = np.logaddexp(log_1q, log_q + (2.0 * b * x - b * b) / two_z2)
            diff = float(num - den)
        if math.isnan(diff):  # both terms infinite: the larger exponent decides
            diff = math.copysign(math.inf, (2.0 * x - 1.0) - (2.0 * b * x - b * b))
        return diff - eps

    lo, hi = -1.0, 1.0
    while log_ratio_minus_eps(lo) > 0 and lo > -1e300:
        lo *= 2.0
    while log_ratio_minus_eps(hi) < 0 and hi < 1e300:
        hi *= 2.0
    x0 = float(optimize.brentq(log_ratio_minus_eps, lo, hi, xtol=1e-12 * max(1.0, z * z))) \
        if log_ratio_minus_eps(lo) < 0 < log_ratio_minus_eps(hi) else hi

    def tail(shift):  # P(N(shift, z^2) > x0)
        return float(special.ndtr((shift - x0) / z))

    p_s = (1.0 - q) * tail(0.0) + q * tail(1.0)
    q_s = (1.0 - q) * tail(0.0) + q * tail(b)
    return max(0.0, p_s - math.exp(eps) * q_s)


def _dpsgd_calibration_holds(z, epsilon, delta, sampling_probability, steps, sampling, epochs,
                              neighbouring) -> bool:
    """Whether noise multiplier z meets epsilon (a value read from the disk
    cache is re-checked).  :func:`dpsgd_one_step_delta` screens it first: a
    value whose single step already exceeds delta (a planted z 1000 times too
    small) is refused without running the PLD accountant, which would need
    gigabytes at such a z."""
    one_step_q = sampling_probability if sampling == "poisson" else 1.0
    if dpsgd_one_step_delta(z, one_step_q, epsilon, neighbouring) > delta * (1.0 + 1e-6):
        return False
    return dpsgd_epsilon(z, sampling_probability, steps, delta, sampling, epochs, neighbouring,
                         pld_discretization_interval(epsilon)) <= epsilon


@functools.lru_cache(maxsize=256)
@_disk_cached(check=_dpsgd_calibration_holds)
def dpsgd_calibrate_noise_multiplier(epsilon: float, delta: float, sampling_probability: float,
                                     steps: int, sampling: str = "poisson",
                                     epochs: int | None = None,
                                     neighbouring: str = "replace_one") -> float:
    """The smallest noise multiplier z (to a relative 1e-6) for which
    :func:`dpsgd_epsilon` is <= epsilon: bracketing by doubling, then Brent's
    method (``scipy.optimize.brentq``) on the PLD epsilon, which decreases in
    z, accounted at :func:`pld_discretization_interval` (epsilon).  The result
    is re-checked and nudged up if rounding left it a hair over the target.

    The result, a function of public parameters only (epsilon, delta, the
    sampling probability, steps, sampling, epochs, neighbouring), is kept in
    privopt's on-disk cache (:func:`_disk_cached`), so caching it is safe; a
    value read from there is accepted only after one PLD evaluation confirms
    that it meets ``epsilon`` (the estimator needs that evaluation anyway).
    """
    from scipy import optimize

    interval = pld_discretization_interval(epsilon)

    def excess(z):
        return dpsgd_epsilon(z, sampling_probability, steps, delta, sampling, epochs, neighbouring,
                             interval) - epsilon

    hi = 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    lo = hi / 2.0
    while excess(lo) <= 0.0:
        if lo < 0.05:  # already private at a negligible noise: stop here
            return lo
        lo, hi = lo / 2.0, lo
    z = float(optimize.brentq(excess, lo, hi, xtol=1e-9, rtol=1e-6))
    for _ in range(60):
        if excess(z) <= 0.0:
            return z
        z *= 1.0 + 1e-6
    raise RuntimeError("noise multiplier calibration did not reach the target epsilon")


# ---------------------------------------------------------------------------
# Gradients on a grid with discrete Gaussian noise [CKS20, ZDW22, KLS21]
# ---------------------------------------------------------------------------
#: The relative margin by which the grid's noise exceeds the accounted one: it
#: covers the [CKS20] tau term (below 1e-300 for sigma >= 9 grid units) and
#: the rounding of 1 / z.
GRID_NOISE_MARGIN = 1e-9


def discrete_gaussian_gaussian_shift(shift_units: float, sigma_units: float, dim: int) -> float:
    r"""mu such that the product discrete Gaussian ``x + N_Z(0, sigma^2)^d`` on
    two integer vectors at L2 distance at most Delta = ``shift_units`` is
    (epsilon, delta(epsilon))-DP for EVERY epsilon >= 0 with the Gaussian
    profile ``delta(epsilon) = Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu)``,
    i.e. the pair (N(mu, 1), N(0, 1)) dominates it in both directions
    ([CKS20], the multivariate discrete Gaussian's approximate-DP bound, its L2 form):

        mu = sqrt(Delta^2 / sigma^2 + 2 d tau),   tau = 10 sum_k e^{-2 pi^2 sigma^2 k/(k+1)},

    the sum over fewer than sigma^2 terms k >= 1, each at most e^{-pi^2 sigma^2}
    (``k/(k+1) >= 1/2``), so ``tau <= 10 sigma^2 e^{-pi^2 sigma^2}``, the bound used
    here (in logarithms; below 1e-300 from sigma = 9, where mu is Delta / sigma to
    the last bit).  E.g. Delta = 3, sigma = 30: mu = 0.1 to 17 digits; Delta = 1.5,
    sigma = 2, d = 5: sqrt(0.5625 + 400 e^{-4 pi^2}).  Requires sigma >= 1."""
    if sigma_units < 1:
        raise ValueError("the grid's noise must be at least one unit")
    log_tau = math.log(10.0 * sigma_units ** 2) - math.pi**2 * sigma_units**2
    tau = math.exp(log_tau) if log_tau > -745 else 5e-324   # e^{log_tau} underflows: the smallest positive double
    return math.sqrt((shift_units / sigma_units) ** 2 + 2.0 * dim * tau)


def dpsgd_grid_delta_split(epsilon: float, delta: float) -> tuple[float, float]:
    r"""(epsilon_AR, delta_AR) that each of the two add/remove steps of a
    replace-one pair may spend: ``(epsilon / 2, delta / (1 + e^{epsilon/2}))``.

    Group privacy through D minus the record (D -> D'' -> D', same public q and
    T): ``P(S) <= e^{e1} R(S) + d1 <= e^{e1+e2} Q(S) + d1 + e^{e1} d2``, so
    add/remove (epsilon/2, delta_AR) in both directions gives replace-one
    ``(epsilon, (1 + e^{epsilon/2}) delta_AR) = (epsilon, delta)``.  E.g.
    epsilon = 2 ln 3, delta = 4e-9: (ln 3, 1e-9)."""
    half = epsilon / 2.0
    return half, delta / (1.0 + math.exp(half))


def dpsgd_grid_noise_multiplier(epsilon: float, delta: float, sampling_probability: float, steps: int,
                                sampling: str = "poisson", epochs: int | None = None,
                                neighbouring: str = "replace_one") -> float:
    """The noise multiplier z of DP-SGD with gradients on a grid and discrete
    Gaussian noise (std ``z Delta`` grid units, Delta the integer norm bound of
    one rounded gradient, :func:`grid_sensitivity_units`).

    Each step's discrete Gaussian is dominated by the continuous Gaussian pair
    of shift ``1 / z`` per record (:func:`discrete_gaussian_gaussian_shift`, with
    the noise ``GRID_NOISE_MARGIN`` above z Delta), so every accounting of
    :func:`dpsgd_epsilon` that works from dominating pairs holds for it: Poisson
    subsampling under add/remove (the pair ((1 - q) N(0,1) + q N(mu,1), N(0,1)),
    [ZDW22], Theorem 11, composed by the PLD accountant [KJH20]) and the
    unsampled Gaussian of ``sampling="shuffle"``.  The replace-one Poisson pair
    of :func:`dpsgd_dp_event` is specific to the continuous Gaussian (it
    reduces the record's two gradients to one line by rotation invariance),
    so under ``neighbouring="replace_one"`` with Poisson sampling the grid is
    accounted by group privacy over add/remove
    (:func:`dpsgd_grid_delta_split`): z is
    :func:`dpsgd_calibrate_noise_multiplier` at (epsilon/2, delta / (1 +
    e^{epsilon/2})) under add/remove, which costs 1-2% more noise than the
    replace-one PLD at n = 2,000 to 12,546 (e.g. 11.55 against 11.46 at
    n = 12546, b = 256, 60 epochs, epsilon = 1, delta = 1/n^2).  Otherwise z
    is :func:`dpsgd_calibrate_noise_multiplier` itself."""
    if sampling == "poisson" and neighbouring == "replace_one":
        eps_ar, delta_ar = dpsgd_grid_delta_split(epsilon, delta)
        return dpsgd_calibrate_noise_multiplier(eps_ar, delta_ar, sampling_probability, steps,
                                                "poisson", None, "add_remove")
    return dpsgd_calibrate_noise_multiplier(epsilon, delta, sampling_probability, steps, sampling, epochs,
                                            neighbouring)


def dpsgd_grid_epsilon(noise_multiplier: float, sampling_probability: float, steps: int, epsilon: float,
                       delta: float, sampling: str = "poisson", epochs: int | None = None,
                       neighbouring: str = "replace_one", value_discretization_interval: float = 1e-4) -> float:
    """epsilon spent at ``delta`` by DP-SGD on the grid at noise multiplier z,
    for a run calibrated to the target ``epsilon`` (the accounting of
    :func:`dpsgd_grid_noise_multiplier`).  Under replace-one with Poisson
    sampling: ``2 epsilon_AR``, epsilon_AR the add/remove PLD epsilon at the
    delta_AR of :func:`dpsgd_grid_delta_split` (target epsilon, delta); since
    epsilon_AR <= epsilon/2, ``(1 + e^{epsilon_AR}) delta_AR <= delta``; the
    PLD is discretized as the calibration did it, at
    :func:`pld_discretization_interval` (epsilon/2).  Otherwise
    :func:`dpsgd_epsilon` at ``value_discretization_interval``."""
    if not (sampling == "poisson" and neighbouring == "replace_one"):
        return dpsgd_epsilon(noise_multiplier, sampling_probability, steps, delta, sampling, epochs,
                             neighbouring, value_discretization_interval)
    eps_ar, delta_ar = dpsgd_grid_delta_split(epsilon, delta)
    return 2.0 * dpsgd_epsilon(noise_multiplier, sampling_probability, steps, delta_ar, "poisson", None,
                               "add_remove", pld_discretization_interval(eps_ar))


def grid_sensitivity_units(exponent: int, dim: int) -> Fraction:
    """The integer L2 norm bound Delta of one clipped gradient (norm <= C)
    rounded to the grid ``C 2^-k`` Z^d, in grid units: ``2^k + ceil(sqrt d) / 2
    + 1``.  Rounding each coordinate to the nearest integer moves a vector by
    at most ``sqrt(d) / 2`` in L2 ([KLS21], Section 4.1, deterministic
    rounding), and the extra unit absorbs the float rounding of the clip and
    of the division by the step (a relative 1e-15 of 2^k).  E.g. k = 10,
    d = 9: 1024 + 3/2 + 1 = 2053/2."""
    ceil_sqrt = math.isqrt(int(dim) - 1) + 1 if dim > 1 else 1
    return Fraction(2) ** int(exponent) + Fraction(ceil_sqrt, 2) + 1


#: The rounding's largest relative inflation of a gradient's norm bound.
GRID_MAX_INFLATION = 1e-3

#: The largest noise std, in grid units, of the exact array sampler's int64 range
#: (:func:`privopt._exact.discrete_gaussian_array`, sigma^2 the square of an integer).
GRID_MAX_SIGMA_UNITS = 2**30


def grid_exponent(noise_multiplier: float, dim: int) -> int:
    """k of the grid ``C 2^-k`` Z^d, from public quantities (z, d): the
    smallest k >= 0 at which rounding inflates the norm bound by at most
    ``GRID_MAX_INFLATION`` = 0.1% (``(ceil(sqrt d)/2 + 1) / 2^k <= 1e-3``;
    :func:`grid_sensitivity_units`), lowered while the noise std
    ``z Delta_k`` grid units exceeds ``GRID_MAX_SIGMA_UNITS`` = 2^30.  E.g.
    d = 9 (ceil(sqrt d)/2 + 1 = 5/2): k = 12 (2500 <= 4096); d = 100: k = 13."""
    need = float(grid_sensitivity_units(0, dim) - 1)        # ceil(sqrt d)/2 + 1
    k = max(0, math.ceil(math.log2(need / GRID_MAX_INFLATION)))
    while k > 0 and float(noise_multiplier) * float(grid_sensitivity_units(k, dim)) > GRID_MAX_SIGMA_UNITS:
        k -= 1
    return k


def grid_sigma_units(noise_multiplier: float, exponent: int, dim: int) -> int:
    """The discrete Gaussian's std parameter on the grid, an integer s:
    ``ceil(z Delta)`` computed exactly (z as the rational its double is; s^2 is
    the variance parameter), so the noise per unit of sensitivity is at least
    z.  E.g. z = 2, k = 10, d = 9: Delta = 2053/2, s = 2053."""
    value = Fraction(float(noise_multiplier)) * grid_sensitivity_units(exponent, dim)
    return math.ceil(value)


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

    The analytic Gaussian scale and its inverse are numerical (bisections
    in ``dp_accounting``): their round trip can put :func:`noisy_sgd_epsilon`
    a few 1e-12 (relative) above epsilon, so sigma is then raised by
    relative steps of 1e-12 until the forward accounting meets epsilon
    (:func:`_nudged_up`), as DP-SGD's calibration is.
    """
    q = n_seen / n
    eps0, delta0 = deamplify_by_subsampling(epsilon, delta, q)
    if delta0 >= 1.0:
        delta0 = 1.0 - 1e-12
    sigma = 2.0 * lipschitz * analytic_gaussian_sigma(eps0, delta0)
    return _nudged_up(sigma, lambda s: noisy_sgd_epsilon(s, delta, n, n_seen, lipschitz) <= epsilon)


def _nudged_up(sigma: float, meets, step: float = 1e-12, tries: int = 200) -> float:
    """``sigma`` times the smallest ``(1 + step)^k``, k < ``tries``, for which
    ``meets`` holds; ``sigma`` itself when none does (the release check of
    the estimators then refuses the fit, naming the epsilon spent)."""
    s = sigma
    for _ in range(tries):
        if meets(s):
            return s
        s *= 1.0 + step
    return sigma


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
# Noisy SGD, one pass with random allocation [FS25, FS26, CGH+25]
# ---------------------------------------------------------------------------
#: Accountings of :class:`~privopt.baselines.NoisySGDClassifier`; the first is the default.
NOISY_SGD_ACCOUNTING = ("poisson_grid", "allocation", "amu_subsampling")


@dataclass(frozen=True)
class GridCalibration:
    """The noise multiplier z of a run on the grid (DP-SGD, noisy SGD) and the
    epsilon target it was calibrated at (<= the requested epsilon; see
    :func:`grid_calibration`)."""

    noise_multiplier: float
    epsilon_target: float


#: The largest epsilon target a grid calibration starts from: above it the replace-one split's
#: delta / (1 + e^{epsilon/2}) falls below what the PLD accountant resolves (1e-5 / e^32 = 1.3e-19
#: here; at target 200 it is 4e-49, where the accountant returns a z far too large or overflows).
#: A z that meets a smaller target meets every larger epsilon.
GRID_MAX_TARGET = 64.0


def grid_calibration(calibrate, spent, epsilon: float) -> GridCalibration:
    """The smallest noise multiplier among the epsilon targets ``min(epsilon,
    GRID_MAX_TARGET)``, then halved while the z calibrated at a target spends less than
    half of it (``spent(z, target)``), or while the accountant overflows at a target:
    each z meets its target, hence ``epsilon`` (a target <= epsilon), and the one kept
    is returned with its target.  At an ordinary
    epsilon this is ``calibrate(epsilon)`` itself (it spends more than half its target)."""
    target = min(float(epsilon), GRID_MAX_TARGET)
    while True:
        try:
            best = GridCalibration(calibrate(target), target)
            break
        except OverflowError:           # the accountant's privacy loss overflows at the z this target asks
            if target <= 1.0:
                raise
            target /= 2.0
    while target > 1.0 and spent(best.noise_multiplier, best.epsilon_target) < target / 2.0:
        target /= 2.0
        z = calibrate(target)
        if z < best.noise_multiplier:
            best = GridCalibration(z, target)
    return best


def noisy_sgd_grid_calibration(epsilon: float, delta: float, steps: int) -> GridCalibration:
    """The noise multiplier z of the one-pass noisy SGD on the grid
    (``accounting="poisson_grid"``): t steps, each batch a Poisson sample at
    rate ``q = 1/t`` (one pass in expectation), per-record gradients of norm
    <= L rounded to the grid, exact discrete Gaussian noise of std ``z Delta``
    grid units.  It is DP-SGD's accounting on the grid,
    :func:`dpsgd_grid_noise_multiplier` with ``sampling="poisson"``,
    ``q = 1/t``, ``steps = t`` under replace-one: group privacy over the
    add/remove PLD of the Poisson-subsampled Gaussian ([ZDW22], Theorem 11;
    [KJH20]) at (epsilon/2, delta / (1 + e^{epsilon/2})), the discrete
    Gaussian dominated by the Gaussian pair of shift 1/z ([CKS20], Theorem
    15).  E.g. t = 1: the add/remove Gaussian mechanism of sensitivity 1 at
    (epsilon/2, delta / (1 + e^{epsilon/2})), z = the analytic Gaussian sigma
    there ([BW18]); the noise on the gradient sum is z L per coordinate.

    At a large epsilon delta / (1 + e^{epsilon/2}) falls below what the PLD
    accountant resolves (e.g. 4e-49 at epsilon = 200, delta = 1e-5), and the
    calibration returns a z far too large (256, spending 0.16).  So while the
    z calibrated at a target spends less than half of it, the target is halved
    (a z that meets a smaller target meets epsilon) and the smallest z is kept
    with its target: z = 0.43 at target 25 for epsilon = 200, delta = 1e-5, t = 1093."""
    t = int(steps)
    return grid_calibration(
        lambda target: dpsgd_grid_noise_multiplier(target, delta, 1.0 / t, t, "poisson", None, "replace_one"),
        lambda z, target: noisy_sgd_grid_epsilon(z, t, target, delta), epsilon)


def noisy_sgd_grid_noise_multiplier(epsilon: float, delta: float, steps: int) -> float:
    """z of :func:`noisy_sgd_grid_calibration` (the noise per unit of the
    gradient norm bound L)."""
    return noisy_sgd_grid_calibration(epsilon, delta, steps).noise_multiplier


def noisy_sgd_grid_epsilon(noise_multiplier: float, steps: int, epsilon: float, delta: float) -> float:
    """epsilon spent at ``delta`` by the one-pass noisy SGD on the grid at z
    calibrated to the target ``epsilon`` (:func:`dpsgd_grid_epsilon` at
    ``q = 1/t``, ``steps = t``, Poisson, replace-one)."""
    t = int(steps)
    return dpsgd_grid_epsilon(noise_multiplier, 1.0 / t, t, epsilon, delta, "poisson", None, "replace_one")

#: Discretization of the privacy loss and tail mass of the ``PLD_accounting``
#: computation.  Both are pessimistic (``BoundType.DOMINATES``): a coarser grid
#: only loosens the upper bound (0.05 instead of the package's default 0.01
#: costs 1% of epsilon at t = 398, sigma = 0.8, delta = 1e-6: 0.884 against
#: 0.875) and makes it 20 times faster.
ALLOCATION_LOSS_DISCRETIZATION = 0.05
ALLOCATION_TAIL_TRUNCATION = 1e-12
#: Below this noise multiplier only the no-amplification bound is used: the PLD
#: computation slows down sharply (3 to 23 s at z = 0.3, t = 100 to 35,000) and
#: the add/remove epsilon of one pass is already above 14 at delta = 1e-9 there.
ALLOCATION_MIN_NOISE_MULTIPLIER = 0.3


@functools.lru_cache(maxsize=512)
def allocation_add_remove_pld(noise_multiplier: float, steps: int):
    """The privacy loss distribution (both directions, add/remove neighbours,
    a pessimistic discretization, so an upper bound) of **1-out-of-t random
    allocation** of the Gaussian mechanism of noise multiplier z:
    ``PLD_accounting.gaussian_allocation_pld`` [FS26].

    What it bounds.  t = ``steps`` adaptively chosen queries, each a sum over
    a batch of per-record vectors of L2 norm <= 1 plus N(0, z^2 I); every record
    is put in exactly one of the t batches, chosen uniformly at random and
    independently of the data and of the other records (balls in bins); the
    whole transcript of t noisy sums is released.  Under add/remove
    neighbours (one record more or less, t fixed), the pair
    ``P = (1/t) sum_j N(e_j, z^2 I_t)`` and ``Q = N(0, z^2 I_t)`` dominates
    every such adaptive run (the balls-and-bins analysis of [CGH+25]; [FS25]
    reduce random allocation of an adaptive sequence to the allocation of the
    one element that differs), and [FS26] computes the
    PLD of (P, Q) and of (Q, P) (the log of a mean of t i.i.d. log-normal
    factors) by discretized convolution.  ``t = 1`` is the Gaussian
    mechanism of sensitivity 1.
    """
    pld_accounting = require("PLD_accounting")
    types = require("PLD_accounting.types")

    params = types.PrivacyParams(sigma=float(noise_multiplier), num_steps=int(steps),
                                 num_selected=1, num_epochs=1)
    config = types.AllocationSchemeConfig(loss_discretization=ALLOCATION_LOSS_DISCRETIZATION,
                                          tail_truncation=ALLOCATION_TAIL_TRUNCATION)
    return pld_accounting.gaussian_allocation_pld(params=params, config=config,
                                                  bound_type=types.BoundType.DOMINATES)


def _allocation_add_remove_delta(noise_multiplier: float, steps: int, epsilon: float) -> float:
    try:
        pld = allocation_add_remove_pld(float(noise_multiplier), int(steps))
        return float(pld.get_delta_for_epsilon(epsilon))
    except (ValueError, FloatingPointError, OverflowError, MemoryError):  # pragma: no cover
        return 1.0  # no claim where the numerical accountant cannot answer


def noisy_sgd_allocation_delta(noise_multiplier: float, steps: int, epsilon: float) -> float:
    r"""delta at ``epsilon`` of the one-pass noisy SGD with random allocation,
    under **replace-one** neighbours, for a noise std ``z`` times the per-record
    gradient bound L (add/remove sensitivity L, so z is the noise multiplier).

    The smaller of two valid bounds:

    1. Group privacy over the add/remove bound.  A replace-one pair D, D'
       passes through D'' = D minus the record (run with the same t, which
       depends on n only): ``P(S) <= e^{e1} R(S) + d1 <= e^{e1+e2} Q(S) +
       d1 + e^{e1} d2`` for every event S, with (e1, d1) the remove and
       (e2, d2) the add direction.  With e1 = e2 = eps/2 and
       ``delta_AR(eps/2)`` the larger of the two directions
       (:func:`allocation_add_remove_pld`):

           delta_RO(eps) <= (1 + e^{eps/2}) * delta_AR(eps/2).

    2. No amplification.  Given the allocation (drawn independently of the
       data), two replace-one neighbours' runs differ in the one step their
       differing record is allocated to, a Gaussian step of sensitivity 2L
       (one gradient of norm <= L swapped for another): the exact Gaussian
       delta [BW18, Theorem 8] at noise z/2, for every allocation, hence for
       the mixture.

    Bound 1 is computed only for z >= ``ALLOCATION_MIN_NOISE_MULTIPLIER``.
    """
    if epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    from scipy import special

    # [BW18], Theorem 8, sensitivity 2, noise z: Phi(1/z - eps z/2) - e^eps Phi(-1/z - eps z/2)
    a, c = 1.0 / noise_multiplier, epsilon * noise_multiplier / 2.0
    local = max(0.0, float(special.ndtr(a - c) - math.exp(epsilon + special.log_ndtr(-a - c))))
    if noise_multiplier < ALLOCATION_MIN_NOISE_MULTIPLIER or int(steps) == 1:
        return min(1.0, local)
    half = epsilon / 2.0
    grouped = (1.0 + math.exp(half)) * _allocation_add_remove_delta(noise_multiplier, steps, half)
    return min(1.0, local, grouped)


#: The relative rounding of :func:`noisy_sgd_allocation_epsilon`'s bisection.
ALLOCATION_EPSILON_RTOL = 1e-4


def _allocation_epsilon_holds(value, noise_multiplier, steps, delta) -> bool:
    """Whether ``value`` is what :func:`noisy_sgd_allocation_epsilon` computes,
    to its rounding (a value read from the disk cache is re-checked): a valid
    claim (``delta_RO(value) <= delta``) and not looser than the bisection
    leaves it (``delta_RO`` exceeds delta a relative 2e-4 lower, below the
    bisection's last infeasible point).  Both evaluations reuse the PLD of
    (z, t) the fit computes anyway (``allocation_add_remove_pld`` is memoized)."""
    if noisy_sgd_allocation_delta(noise_multiplier, steps, value) > delta:
        return False
    return noisy_sgd_allocation_delta(noise_multiplier, steps,
                                      value * (1.0 - 2.0 * ALLOCATION_EPSILON_RTOL)) > delta


@_disk_cached(check=_allocation_epsilon_holds)
def noisy_sgd_allocation_epsilon(noise_multiplier: float, steps: int, delta: float) -> float:
    """The smallest epsilon (to a relative 1e-4, rounded up) at which
    :func:`noisy_sgd_allocation_delta` is <= ``delta``: bisection on epsilon
    (the bound decreases in epsilon).  A function of public parameters only,
    kept in privopt's on-disk cache like :func:`noisy_sgd_allocation_sigma`."""
    if not 0.0 < delta < 1.0:
        raise ValueError("delta must be in (0, 1)")
    lo, hi = 0.0, 1.0
    while noisy_sgd_allocation_delta(noise_multiplier, steps, hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:  # pragma: no cover - no finite epsilon
            return math.inf
    while hi - lo > ALLOCATION_EPSILON_RTOL * hi:
        mid = 0.5 * (lo + hi)
        if noisy_sgd_allocation_delta(noise_multiplier, steps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def noisy_sgd_allocation_epsilon_spent(noise_multiplier: float, steps: int, epsilon: float,
                                       delta: float) -> float:
    """``epsilon_spent_`` of the one-pass noisy SGD calibrated to (epsilon,
    delta): :func:`noisy_sgd_allocation_epsilon`, or ``epsilon`` itself when
    that is smaller and ``delta_RO(epsilon) <= delta`` holds (the claim the
    calibration verified).  The bisection rounds up by up to a relative 1e-4,
    which put the value above epsilon (0.300003 at epsilon = 0.3, t = 1);
    both are valid claims and the smaller is reported."""
    spent = noisy_sgd_allocation_epsilon(noise_multiplier, steps, delta)
    if spent > epsilon and noisy_sgd_allocation_delta(noise_multiplier, steps, epsilon) <= delta:
        return float(epsilon)
    return float(spent)


def _allocation_multiplier_upper_end(epsilon: float, delta: float) -> float:
    """``2 sigma_G(epsilon, delta)`` [BW18], a hair up: the noise multiplier
    of bound 2 of :func:`noisy_sgd_allocation_delta` alone, feasible at every
    t, where the calibration's bisection starts."""
    dp_accounting = require("dp_accounting")

    return 2.0 * float(dp_accounting.get_sigma_gaussian(epsilon, delta)) * (1.0 + 1e-9)


def _allocation_multiplier_holds(z, epsilon, delta, steps) -> bool:
    """Whether noise multiplier z meets (epsilon, delta) with t = ``steps``
    (the calibration's own test; a value read from the disk cache is
    re-checked) and is at most the calibration's upper end (a relative 1e-4
    over :func:`_allocation_multiplier_upper_end`): a planted huge z would
    otherwise be accepted as "private" and overflow the fit.  Below
    ``ALLOCATION_MIN_NOISE_MULTIPLIER`` only the closed form of [BW18] is
    evaluated, so a planted tiny z costs microseconds."""
    if z > _allocation_multiplier_upper_end(epsilon, delta) * (1.0 + 1e-4):
        return False
    return noisy_sgd_allocation_delta(z, steps, epsilon) <= delta


def _allocation_bisection(epsilon: float, delta: float, steps: int):
    """The bisection of :func:`noisy_sgd_allocation_sigma`, one probe at a
    time: a generator that yields ``(z, lower, upper)`` and is sent whether
    noise multiplier z meets (epsilon, delta) at t = ``steps``
    (``noisy_sgd_allocation_delta(z, steps, epsilon) <= delta``); it returns
    the calibrated z (StopIteration's value).  ``[lower, upper]`` holds the
    value it will return whatever the answers to come: (0, inf) until the
    upper end is confirmed, ``[upper end / 2^6, upper end]`` while the lower
    end is halved, then the bisection's bracket, whose later probes all lie
    inside it.  :func:`_allocation_noise_multiplier` runs it to the end;
    :func:`noisy_sgd_allocation_steps` stops it once the bracket decides the
    rule's comparison (the same t with fewer accountant evaluations)."""
    # bound 2 alone (no amplification) is met exactly at 2 sigma_G(eps, delta): an upper end
    hi = _allocation_multiplier_upper_end(epsilon, delta)
    while not (yield hi, 0.0, math.inf):  # pragma: no cover - rounding of get_sigma_gaussian
        hi *= 1.0 + 1e-6
    lo = hi
    for _ in range(6):  # the allocation bound is at least ~z/16 of it at the n of interest
        lo_prev, lo = lo, lo / 2.0
        # The test is monotone in z (more noise, a smaller delta: the premise of any bisection
        # here), so when the bisection's first new probe after a failing lo, sqrt(lo lo_prev),
        # a factor sqrt(2) above lo, fails, lo fails too: its PLD, the slowest of the search
        # (the smallest z), is not computed, and the returned value is the same.
        if not (yield math.sqrt(lo * lo_prev), hi / 64.0, hi):
            break
        if not (yield lo, hi / 64.0, hi):
            break
    else:  # pragma: no cover - private at a negligible noise
        return lo
    while hi / lo > 1.0 + 2e-3:
        mid = math.sqrt(lo * hi)
        if (yield mid, lo, hi):
            hi = mid
        else:
            lo = mid
    return hi


def _allocation_meets(epsilon: float, delta: float, steps: int):
    """The test the bisection is sent: z meets (epsilon, delta) at t = ``steps``."""
    def ok(z):
        return noisy_sgd_allocation_delta(z, steps, epsilon) <= delta

    return ok


def _run_bisection(search, ok) -> float:
    """Run :func:`_allocation_bisection` ``search`` to its end, answering each probe with ``ok``."""
    try:
        z = next(search)[0]
        while True:
            z = search.send(ok(z))[0]
    except StopIteration as stop:
        return float(stop.value)


@functools.lru_cache(maxsize=512)
@_disk_cached(check=_allocation_multiplier_holds)
def _allocation_noise_multiplier(epsilon: float, delta: float, steps: int) -> float:
    return _run_bisection(_allocation_bisection(epsilon, delta, steps), _allocation_meets(epsilon, delta, steps))


def noisy_sgd_allocation_sigma(epsilon: float, delta: float, steps: int,
                               lipschitz: float = 1.0) -> float:
    r"""Per-step noise std of :class:`~privopt.baselines.NoisySGDClassifier`
    with ``accounting="allocation"`` (one pass, each record in one step chosen
    uniformly at random, ``steps`` = t steps), for a replace-one
    (epsilon, delta) target:

        sigma = L * min{ z : delta_RO(epsilon; z, t) <= delta },

    ``delta_RO`` the bound of :func:`noisy_sgd_allocation_delta` (group
    privacy over the add/remove random-allocation PLD of [FS26], or the
    Gaussian step of sensitivity 2L without amplification, whichever is
    smaller).  The minimum is found by bisection on z to a relative 2e-3,
    rounded up, between the no-amplification value ``2 L sigma_G(eps,
    delta)`` [BW18] (always feasible) and a feasible-infeasible bracket; the
    result is feasible by construction.  E.g. t = 1: bound 2 is exact and
    sigma = 2 L sigma_G(epsilon, delta).

    z is a function of public parameters only (epsilon, delta, t) and is kept
    in privopt's on-disk cache (:func:`_disk_cached`, keyed by them and by a
    hash of this module and of the accounting packages' versions), so caching
    it is safe: a fresh process reads it back instead of repeating the few
    dozen PLD computations (minutes at large t).
    """
    _check_allocation_target(epsilon, delta, steps)
    return lipschitz * _allocation_noise_multiplier(float(epsilon), float(delta), int(steps))


def _check_allocation_target(epsilon: float, delta: float, steps: int = 1) -> None:
    if not epsilon > 0:
        raise ValueError("epsilon must be > 0")
    if not 0.0 < delta < 1.0:
        raise ValueError("delta must be in (0, 1)")
    if int(steps) < 1:
        raise ValueError("steps must be >= 1")


def _allocation_search_multiplier(epsilon: float, delta: float, steps: int) -> float:
    """z of :func:`noisy_sgd_allocation_sigma` at t = ``steps`` (L = 1), for
    the choice of t only (:func:`noisy_sgd_allocation_steps`): a value in the
    disk cache is taken without the accountant's check when it lies in (0,
    the calibration's upper end] (a closed form, microseconds); otherwise the
    calibration itself (checked, or computed and stored) answers.

    Why skipping the check is safe: the rule's t is a utility choice.  Every
    fit accounts the t it runs with by its own calibration, read through the
    checked cache (:func:`noisy_sgd_allocation_sigma`,
    :func:`noisy_sgd_grid_calibration`), and refuses a release whose
    accounting exceeds the request; a planted value here can change which t
    that is, never whether the noise meets (epsilon, delta) at it.  A clean
    cache holds the calibration's own values, so t is the same as when every
    value is checked.  The check re-ran the random-allocation PLD for each t
    the rule visits (seconds in every fresh process); the fit now runs it
    once, for the t it releases with."""
    z = _unchecked_search_multiplier(epsilon, delta, steps)
    return z if z is not None else _allocation_noise_multiplier(float(epsilon), float(delta), int(steps))


def _unchecked_search_multiplier(epsilon: float, delta: float, steps: int) -> float | None:
    """The z of t = ``steps`` in the disk cache, unchecked, when it lies in (0,
    the calibration's upper end] (see :func:`_allocation_search_multiplier`); else None."""
    key = _disk_key("_allocation_noise_multiplier", (float(epsilon), float(delta), int(steps)))
    z = None if key is None else _DISK_CACHE.get(key)     # unchecked: see above
    if z is not None and 0.0 < z <= _allocation_multiplier_upper_end(epsilon, delta) * (1.0 + 1e-4):
        return z
    return None


def noisy_sgd_allocation_bound(n: int, d: int, steps: int, noise_multiplier: float) -> float:
    """``sqrt(n (1 - 1/t) + n^2/t + t d z^2) / n``: the empirical-risk bound of
    the averaged iterate of one pass of t projected steps, divided by D L
    (:func:`noisy_sgd_allocation_step_size`), with a batch of
    Binomial(n, 1/t) records per step (``E|B|^2 = b (1 - 1/t) + b^2``,
    b = n/t) and N(0, z^2 L^2 I_d) noise."""
    t = int(steps)
    return math.sqrt(n * (1.0 - 1.0 / t) + n * n / t + t * d * noise_multiplier**2) / n


def noisy_sgd_allocation_steps(n: int, d: int, epsilon: float, delta: float) -> int:
    r"""Default number of steps t of the one-pass noisy SGD (expected batch
    size b = n / t), a function of public quantities only (n, d, epsilon,
    delta): the t = ceil(n / b), b a power of two, that minimises
    :func:`noisy_sgd_allocation_bound` at the calibrated noise of
    :func:`noisy_sgd_allocation_sigma`.  More steps give the optimiser more
    progress (the ``n^2/t`` term) but, below a noise multiplier of about one,
    random allocation amplifies less and the total noise ``t z^2`` grows.  The
    search starts at b = the power of two nearest sqrt(d) (the minimiser when
    z is about 1) and walks while the bound improves.  The z of each t visited
    is read from the disk cache without the accountant's check
    (:func:`_unchecked_search_multiplier`: t chooses utility only; the fit
    checks the noise of the t it runs with), else its search
    (:func:`_allocation_bisection`) runs only until its bracket decides the
    comparison at hand (:func:`_rule_less`): the same t as with every search
    finished, with fewer random-allocation PLDs (e.g. n = 2,000, d = 6,
    epsilon = 1, delta = 1e-5: t = 1000 in 18 s of CPU instead of 37, 33 distinct PLDs instead of 42, the
    costly smallest halvings skipped by :func:`_allocation_bisection`).

    The returned t is kept in the disk cache too, keyed by (n, d, epsilon,
    delta) and the code, and read back unchecked when it is one of the t the
    walk can reach (:func:`_allocation_rule_candidates`), for the same reason:
    a planted t can change which t a fit runs with, never whether its noise
    meets (epsilon, delta) there, and a later process then chooses t without
    any accountant (nor ``dp_accounting``'s import)."""
    _check_allocation_target(epsilon, delta)
    n = int(n)
    key = _disk_key("noisy_sgd_allocation_steps", (n, int(d), float(epsilon), float(delta)))
    cached = None if key is None else _DISK_CACHE.get(key)     # unchecked: see the docstring
    if cached is not None and int(cached) == cached and int(cached) in _allocation_rule_candidates(n, d):
        return int(cached)
    t = _allocation_rule(n, d, epsilon, delta)
    if key is not None:
        _DISK_CACHE.put(key, float(t))
    return t


def _allocation_rule_exponent(d: int) -> int:
    """k0 of :func:`noisy_sgd_allocation_steps`: b = 2^k0 the power of two nearest sqrt(d)."""
    return max(0, round(math.log2(math.sqrt(max(d, 1)))))


def _allocation_rule_candidates(n: int, d: int) -> set[int]:
    """Every t :func:`noisy_sgd_allocation_steps` can return at (n, d): ``ceil(n / 2^k)``
    for 2^k <= n, or k = k0 (a cached t outside this set is ignored)."""
    top = max(_allocation_rule_exponent(d), int(n).bit_length() - 1)
    return {max(1, math.ceil(n / 2**k)) for k in range(top + 1)}


class _RuleCost:
    """:func:`noisy_sgd_allocation_bound` at one t of the step rule, at the z of
    :func:`_allocation_noise_multiplier`: read from the disk cache unchecked
    (:func:`_unchecked_search_multiplier`), or known to lie in the bracket of
    its bisection (:func:`_allocation_bisection`), narrowed one accountant
    evaluation at a time by :meth:`refine`.  The bound increases in z (and so
    does its floating-point evaluation: squares, products, sums and sqrt are
    monotone), so the bracket's ends bound the cost the finished search gives."""

    def __init__(self, n: int, d: int, epsilon: float, delta: float, steps: int):
        self.n, self.d, self.steps = n, d, steps
        self.args = (float(epsilon), float(delta), int(steps))
        self.z = _unchecked_search_multiplier(epsilon, delta, steps)
        if self.z is None:
            self.search = _allocation_bisection(*self.args)
            self.ok = _allocation_meets(*self.args)
            self.probe, self.lower, self.upper = next(self.search)

    def bounds(self) -> tuple[float, float]:
        """(smallest, largest) value the cost can take once the search has finished."""
        if self.z is not None:
            value = noisy_sgd_allocation_bound(self.n, self.d, self.steps, self.z)
            return value, value
        return (noisy_sgd_allocation_bound(self.n, self.d, self.steps, self.lower),
                noisy_sgd_allocation_bound(self.n, self.d, self.steps, self.upper))

    def refine(self) -> None:
        """One more probe of the search; at its end, z is stored in the disk cache
        under :func:`_allocation_noise_multiplier`'s key (the value it computes)."""
        try:
            self.probe, self.lower, self.upper = self.search.send(self.ok(self.probe))
        except StopIteration as stop:
            self.z = float(stop.value)
            key = _disk_key("_allocation_noise_multiplier", self.args)
            if key is not None:
                _DISK_CACHE.put(key, self.z)


def _rule_less(a: _RuleCost, b: _RuleCost) -> bool:
    """Whether a's cost is below b's, as the finished searches would compare them:
    decided as soon as the brackets' costs no longer overlap, else the wider
    bracket is refined (at the end both are exact values)."""
    while True:
        (a_lo, a_hi), (b_lo, b_hi) = a.bounds(), b.bounds()
        if a_hi < b_lo:
            return True
        if a_lo >= b_hi:
            return False
        open_ = [(hi - lo, i, c) for i, (c, lo, hi) in enumerate(((a, a_lo, a_hi), (b, b_lo, b_hi)))
                 if c.z is None]
        max(open_)[2].refine()


def _allocation_rule(n: int, d: int, epsilon: float, delta: float) -> int:
    """The walk of :func:`noisy_sgd_allocation_steps` over b = 2^k, comparing
    costs with :func:`_rule_less` (the comparisons, hence t, of the walk on
    finished searches)."""
    def steps_of(b):
        return max(1, math.ceil(n / b))

    costs: dict[int, _RuleCost] = {}

    def c(k):
        t = steps_of(2**k)
        if t not in costs:
            costs[t] = _RuleCost(n, d, epsilon, delta, t)
        return costs[t]

    k0 = k = _allocation_rule_exponent(d)
    while 2 ** (k + 1) <= n and _rule_less(c(k + 1), c(k)):
        k += 1
    if k == k0:
        while k > 0 and _rule_less(c(k - 1), c(k)):
            k -= 1
    return steps_of(2**k)


def noisy_sgd_allocation_step_size(radius: float, lipschitz: float, sigma: float, d: int,
                                   n: int, steps: int) -> float:
    """``eta = D / sqrt(t G^2)`` with ``G^2 = L^2 (b (1 - 1/t) + b^2) + d sigma^2``,
    b = n / t: the step size minimising the projected-SGD bound
    ``D^2 / (2 eta t) + eta G^2 / 2`` of the averaged iterate over t steps
    (G^2 bounds the second moment of a step's noisy gradient sum: |B| ~
    Binomial(n, 1/t), each gradient of norm <= L)."""
    t = int(steps)
    b = n / t
    g2 = lipschitz**2 * (b * (1.0 - 1.0 / t) + b * b) + d * sigma**2
    return radius / math.sqrt(t * g2)


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


def output_perturbation_gaussian_sigma(epsilon: float, delta: float, n: int, alpha: float,
                                       lipschitz: float = 1.0) -> float:
    """sigma of Gaussian output perturbation: ``w* + N(0, sigma^2 I)`` is
    (epsilon, delta)-DP when ``sigma`` is the analytic Gaussian scale [BW18,
    Theorem 8] for the L2 sensitivity ``2 L / (n Lambda)`` of the regularised
    minimiser [CMS11, Corollary 8] (||z|| <= 1, L-Lipschitz loss).  E.g.
    n = 100, Lambda = 0.02, L = 1: sensitivity 1, so sigma equals
    :func:`analytic_gaussian_sigma` at (epsilon, delta)."""
    return analytic_gaussian_sigma(epsilon, delta, 2.0 * lipschitz / (n * alpha))


def expected_gaussian_norm(sigma: float, d: int) -> float:
    """``E||N(0, sigma^2 I_d)|| = sigma sqrt(2) Gamma((d + 1)/2) / Gamma(d/2)``
    (the mean of a chi distribution with d degrees of freedom, times sigma):
    ``sqrt(2/pi)`` for d = 1, ``sqrt(pi/2)`` for d = 2, about ``sqrt(d - 1/2)``
    for large d."""
    return sigma * math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))


def output_perturbation_beta(epsilon: float, n: int, alpha: float, lipschitz: float = 1.0) -> float:
    """beta of [CMS11], Algorithm 1: noise density ``exp(-beta ||b||)`` with
    ``beta = n Lambda eps / 2`` (the L2 sensitivity of the regularised
    minimiser is ``2 L / (n Lambda)`` [CMS11, Corollary 8], for ||x|| <= 1 and
    an L-Lipschitz loss; L = 1 for the logistic loss)."""
    return n * alpha * epsilon / (2.0 * lipschitz)
