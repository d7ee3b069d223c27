"""Noise scales and utility bounds: one function per quantity, each citing
its source.  Mechanisms call these and nothing else to size their noise.

[NRVW20] Neel, Roth, Vietri, Wu. Oracle Efficient Private Non-Convex
Optimization. ICML 2020 (arXiv:1909.01783).
"""

from __future__ import annotations

import math

from .._validation import check_delta, check_epsilon, check_int, check_positive, check_probability

__all__ = ["opdisc_sigma", "opdisc_utility_bound"]


def opdisc_sigma(epsilon: float, delta: float, lipschitz: float, norm_bound: float, separation: float) -> float:
    r"""Standard deviation of OPDisc's Gaussian noise [NRVW20, Algorithm 1].

    .. math::  \sigma = \frac{7 G D^2 \sqrt{\ln(1/\delta)}}{\tau \varepsilon}

    with G the l2-Lipschitz constant of each per-example loss on the grid W_tau,
    D the l2 bound on W_tau and tau its separation.  eta ~ N(0, sigma^2 I_{d+1})
    then makes the exact argmin of L(D, w) - <eta, pi(w)> (epsilon, delta)-DP.
    (The authors' code used half of this value; privopt uses the paper's.)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    G = check_positive(lipschitz, "lipschitz")
    D = check_positive(norm_bound, "norm_bound")
    tau = check_positive(separation, "separation")
    return 7.0 * G * D**2 * math.sqrt(math.log(1.0 / delta)) / (tau * epsilon)


def opdisc_utility_bound(
    epsilon: float,
    delta: float,
    lipschitz: float,
    norm_bound: float,
    separation: float,
    n_samples: int,
    dim: int,
    beta: float = 0.05,
) -> float:
    r"""OPDisc's accuracy guarantee alpha [NRVW20, Theorem 5].

    With probability at least 1 - beta the output w_hat satisfies
    L(D, w_hat)/n <= min_{w in W_tau} L(D, w)/n + alpha, where

    .. math::  \alpha = \frac{14 G D^2 \sqrt{2 (d+1) \ln(4/\beta) \ln(1/\delta)}}{n \tau \varepsilon}.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    G = check_positive(lipschitz, "lipschitz")
    D = check_positive(norm_bound, "norm_bound")
    tau = check_positive(separation, "separation")
    n = check_int(n_samples, "n_samples", minimum=1)
    d = check_int(dim, "dim", minimum=1)
    beta = check_probability(beta, "beta")
    return (
        14.0 * G * D**2 * math.sqrt(2.0 * (d + 1) * math.log(4.0 / beta) * math.log(1.0 / delta))
        / (n * tau * epsilon)
    )
