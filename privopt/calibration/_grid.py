r"""Noise on a grid fixed in advance: the parameters of every release that adds
noise to a number.

A release computed as ``x + noise`` in doubles is open to Mironov's attack
(CCS 2012): the doubles reachable from x and from a neighbour x' differ, so an
output can rule x' out with certainty.  privopt instead releases

.. math::

    M(x) = \gamma\,\big(\operatorname{round}(x / \gamma) + Z\big),
    \qquad Z \in \mathbb{Z}^d \text{ drawn exactly},                      (1)

with the step gamma a power of two chosen from public quantities only (the
sensitivity, the dimension: before the data is read) and Z a discrete Laplace
or discrete Gaussian vector sampled with integer arithmetic
(:mod:`privopt._exact`, [CKS20] Algorithms 1-3).  round(x / gamma) is exact
(gamma is a power of two) and the integer vector round(x / gamma) + Z is
reachable from every input; the double that is printed is a function of that
integer only (post-processing), so no output is impossible under a neighbour.

Sensitivity after rounding.  Each coordinate of round(x / gamma) lies within
1/2 of x / gamma, so for neighbours with ||x - x'|| <= Delta

.. math::

    \|\operatorname{round}(x/\gamma) - \operatorname{round}(x'/\gamma)\|_1
        \le \Delta_1/\gamma + d, \qquad
    \|\cdot\|_2 \le \Delta_2/\gamma + \sqrt d .                          (2)

The step is gamma = 2^floor(log2(Delta / (c_d 2^GRID_BITS))) with c_d = d (l1)
or sqrt(d) (l2), so the rounding adds at most 2^-GRID_BITS (about 1e-6) of
Delta: the scale of the noise is raised by that factor, never the epsilon.

* Discrete Laplace (:func:`grid_laplace`): Z_j i.i.d. with
  P(k) proportional to exp(-|k| / t); a shift of the integer vector by v
  changes the probability of every output by at most exp(||v||_1 / t), so (1)
  is epsilon-DP with

  .. math::  \varepsilon = (\Delta_1/\gamma + d) / t,                      (3)

  and privopt sets t = (Delta_1/gamma + d) / epsilon in exact rational
  arithmetic: the delivered epsilon is the requested one exactly.
  For counts (:func:`count_laplace`) gamma = 1, nothing is rounded and
  t = Delta_1 / epsilon.
* Discrete Gaussian (:func:`grid_gaussian`): Z_j i.i.d. with P(k)
  proportional to exp(-k^2 / (2 sigma^2)) (sigma in grid units) is
  rho-zCDP with rho = Delta_u^2 / (2 sigma^2), Delta_u the l2 bound of (2)
  ([CKS20], Theorem 14), hence (epsilon, delta)-DP with

  .. math::  \delta = \inf_{\alpha > 1} \frac{e^{(\alpha-1)(\alpha\rho-\varepsilon)}}{\alpha-1}
             \Big(1 - \frac1\alpha\Big)^{\alpha}                            (4)

  ([CKS20], Corollary 13; :func:`zcdp_delta`).  privopt takes the largest rho
  whose delta (4) is at most the requested delta, and sigma^2 a rational
  rounded up from Delta_u^2 / (2 rho); the delivered delta is (4) at the
  resulting rho.

[CKS20] Canonne, Kamath, Steinke. The Discrete Gaussian for Differential
Privacy. NeurIPS 2020 (arXiv:2004.00010).
[M12] Mironov. On significance of the least significant bits for differential
privacy. CCS 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .._optional import lazy_module
from .._validation import check_delta, check_epsilon, check_int, check_positive

optimize = lazy_module("scipy.optimize")     # slow to import: loaded at first use

__all__ = ["GRID_BITS", "GridNoise", "count_laplace", "grid_gaussian", "grid_laplace", "grid_step",
           "largest_zcdp_rho", "zcdp_delta"]

#: The grid step is at most 2^-GRID_BITS of the sensitivity per unit of
#: rounding (eq. (2)): the noise scale grows by at most that factor.
GRID_BITS = 20


@dataclass(frozen=True)
class GridNoise:
    """The law of a release on a grid, eq. (1): the step ``step`` (gamma, a
    power of two, ``2 ** exponent``), the noise in grid units (``law``
    "laplace" with scale ``t``, P(k) ~ exp(-|k|/t); or "gaussian" with
    variance parameter ``sigma2``, P(k) ~ exp(-k^2/(2 sigma2))), the
    sensitivity of the unrounded value (``norm`` "l1" or "l2") and its bound
    in grid units after rounding, and the epsilon, delta delivered."""

    law: str
    exponent: int
    dim: int
    sensitivity: float
    norm: str
    sensitivity_units: Fraction
    parameter: Fraction       # t (laplace) or sigma2 (gaussian), in grid units
    epsilon: float
    delta: float = 0.0
    rho: float | None = None  # zCDP parameter of the discrete Gaussian

    @property
    def step(self) -> float:
        """gamma = 2^exponent."""
        return math.ldexp(1.0, self.exponent)

    @property
    def scale(self) -> float:
        """The noise scale in the value's own units: t gamma (Laplace) or
        sigma gamma (Gaussian)."""
        if self.law == "laplace":
            return float(self.parameter) * self.step
        return math.sqrt(float(self.parameter)) * self.step

    def describe(self) -> str:
        what = (f"discrete Laplace of scale {self.scale:.4g}" if self.law == "laplace"
                else f"discrete Gaussian of sigma {self.scale:.4g}")
        return f"{what} on the grid 2^{self.exponent} (exact integer noise)"


def grid_step(sensitivity: float, dim: int, norm: str) -> int:
    """The exponent k of the step gamma = 2^k of eq. (2):
    floor(log2(Delta / (c_d 2^GRID_BITS))), c_d = d (l1) or sqrt(d) (l2)."""
    sensitivity = check_positive(sensitivity, "sensitivity")
    dim = check_int(dim, "dim", minimum=1)
    per_unit = dim if norm == "l1" else math.sqrt(dim)
    exponent = math.floor(math.log2(sensitivity / per_unit)) - GRID_BITS
    # floating log2 may be off by one at an exact power of two: fix it exactly
    while Fraction(2) ** exponent * per_unit * 2**GRID_BITS > Fraction(sensitivity):
        exponent -= 1
    return exponent


def grid_laplace(sensitivity_l1: float, epsilon: float, dim: int) -> GridNoise:
    """Discrete Laplace on the grid of eq. (2) for a value of l1 sensitivity
    Delta_1: t = (Delta_1 / gamma + d) / epsilon, eq. (3), exactly."""
    epsilon = check_epsilon(epsilon)
    exponent = grid_step(sensitivity_l1, dim, "l1")
    units = Fraction(sensitivity_l1) / Fraction(2) ** exponent + dim
    t = units / Fraction(epsilon)
    return GridNoise("laplace", exponent, int(dim), float(sensitivity_l1), "l1", units, t,
                     epsilon=float(units / t))


def count_laplace(sensitivity_l1: float, epsilon: float) -> GridNoise:
    """Discrete Laplace on integer counts (gamma = 1, no rounding): t =
    Delta_1 / epsilon exactly, eq. (3) with d = 0."""
    epsilon = check_epsilon(epsilon)
    units = Fraction(check_positive(sensitivity_l1, "sensitivity"))
    t = units / Fraction(epsilon)
    return GridNoise("laplace", 0, 1, float(sensitivity_l1), "l1", units, t, epsilon=float(units / t))


def _log_zcdp_delta(rho: float, epsilon: float) -> float:
    # ln of eq. (4), minimised over alpha > 1; every alpha gives a valid bound
    def log_delta(alpha):
        return ((alpha - 1.0) * (alpha * rho - epsilon) - math.log(alpha - 1.0)
                + alpha * math.log1p(-1.0 / alpha))

    # the minimiser lies near (epsilon + rho) / (2 rho): search a bracket around it
    centre = max(1.0 + 1e-6, (epsilon + rho) / (2.0 * rho))
    best = optimize.minimize_scalar(log_delta, bounds=(1.0 + 1e-12, 4.0 * centre + 10.0), method="bounded",
                           options={"xatol": 1e-10})
    return min(0.0, float(best.fun), log_delta(centre))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """delta of eq. (4): the (epsilon, delta) a rho-zCDP release satisfies
    ([CKS20], Corollary 13), minimised over the order alpha > 1."""
    return math.exp(_log_zcdp_delta(check_positive(rho, "rho"), float(epsilon)))


def largest_zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose delta of eq. (4) is at most ``delta`` (by bisection
    on ln delta, then lowered by a relative 1e-9 to stay on the safe side)."""
    epsilon = check_epsilon(epsilon)
    target = math.log(check_delta(delta))
    lo = hi = 1.0
    while _log_zcdp_delta(hi, epsilon) < target:
        hi *= 2.0
    while _log_zcdp_delta(lo, epsilon) >= target:
        lo /= 2.0
    rho = optimize.brentq(lambda r: _log_zcdp_delta(r, epsilon) - target, lo, hi, xtol=1e-300, rtol=1e-12)
    return rho * (1.0 - 1e-9)


def grid_gaussian(sensitivity_l2: float, epsilon: float, delta: float, dim: int) -> GridNoise:
    """Discrete Gaussian on the grid of eq. (2) for a value of l2 sensitivity
    Delta_2 at (epsilon, delta): the largest rho with zcdp_delta(rho, eps) <=
    delta, sigma^2 = Delta_u^2 / (2 rho) rounded up to a rational, eq. (4)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    exponent = grid_step(sensitivity_l2, dim, "l2")
    # Delta_u = Delta_2 / gamma + sqrt(d), rounded up to a rational
    units = Fraction(sensitivity_l2) / Fraction(2) ** exponent + Fraction(math.sqrt(dim)) \
        + Fraction(1, 2**40)
    rho = largest_zcdp_rho(epsilon, delta)
    sigma2 = Fraction(units * units / (2 * Fraction(rho))).limit_denominator(2**20) + Fraction(1, 2**20)
    rho_delivered = float(units * units / (2 * sigma2))
    return GridNoise("gaussian", exponent, int(dim), float(sensitivity_l2), "l2", units, sigma2,
                     epsilon=epsilon, delta=zcdp_delta(rho_delivered, epsilon), rho=rho_delivered)
