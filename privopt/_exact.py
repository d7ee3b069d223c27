"""Exact samplers of discrete noise: integer arithmetic only, no floating point.

A release ``x + Lap(b)`` computed in doubles can be told apart from its
neighbour ``x' + Lap(b)`` with certainty: the doubles that the sum can take
depend on ``x``, so an output that only ``x`` can produce rules ``x'`` out
(Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012).  privopt therefore adds noise to a number only as an
*integer* drawn exactly from a discrete law (on the integers for counts, on a
grid fixed before the data is read for real values:
:func:`privopt.calibration.grid_laplace`), and every integer is reachable from
every input.

The samplers are Algorithms 1-3 of [CKS20], run with Python integers and
:class:`fractions.Fraction`: each returns a draw whose law is *exactly* the
stated one, given exact uniform integers (``random_state=None``:
:func:`os.urandom`, the operating system's secure source; a seeded
numpy Generator for reproducible, non-private runs).

* :func:`bernoulli_exp` -- Bernoulli(exp(-gamma)) for rational gamma >= 0
  ([CKS20], Algorithm 1 and its reduction for gamma > 1);
* :func:`discrete_laplace` -- P(k) = (e^{1/t} - 1)/(e^{1/t} + 1) e^{-|k|/t}
  on the integers for rational t > 0 ([CKS20], Algorithm 2);
* :func:`discrete_gaussian` -- P(k) proportional to e^{-k^2 / (2 sigma^2)} on
  the integers for rational sigma^2 > 0 ([CKS20], Algorithm 3).

[CKS20] Canonne, Kamath, Steinke. The Discrete Gaussian for Differential
Privacy. NeurIPS 2020 (arXiv:2004.00010).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._random import is_secure

__all__ = [
    "bernoulli",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "randbelow",
    "sample_many",
]

_CHUNK = 62  # bits per numpy draw (integers below 2**62 are exact in int64)


def randbelow(rng, m: int) -> int:
    """A uniform integer in ``{0, ..., m - 1}``, exactly (rejection, no modulo
    bias): from :func:`os.urandom` for privopt's secure generator
    (``SecureGenerator.randbelow``), 62-bit chunks of a numpy Generator
    otherwise."""
    m = int(m)
    if m <= 0:
        raise ValueError(f"randbelow needs m >= 1, got {m}")
    if is_secure(rng):
        return rng.randbelow(m)
    if m <= 2**_CHUNK:
        return int(rng.integers(0, m))
    bits = (m - 1).bit_length()
    chunks = -(-bits // _CHUNK)
    while True:
        value = 0
        for _ in range(chunks):
            value = (value << _CHUNK) | int(rng.integers(0, 2**_CHUNK))
        value >>= chunks * _CHUNK - bits
        if value < m:
            return value


def bernoulli(rng, p: Fraction) -> bool:
    """Bernoulli(p) for rational p in [0, 1], exactly."""
    return randbelow(rng, p.denominator) < p.numerator


def _bernoulli_exp_unit(rng, gamma: Fraction) -> bool:
    # [CKS20] Algorithm 1, gamma in [0, 1]: K = first k with A_k ~ Bern(gamma / k) = 0;
    # P[K odd] = exp(-gamma)
    k = 1
    while bernoulli(rng, gamma / k):
        k += 1
    return k % 2 == 1


def bernoulli_exp(rng, gamma) -> bool:
    """Bernoulli(exp(-gamma)) for rational ``gamma >= 0``, exactly
    ([CKS20], Algorithm 1; for gamma > 1, the product of floor(gamma)
    Bernoulli(e^-1) and one Bernoulli(e^-(gamma - floor(gamma))))."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_unit(rng, Fraction(1)):
            return False
    return _bernoulli_exp_unit(rng, gamma - whole)


def _geometric_exp_minus_one(rng) -> int:
    # V = number of successes before the first failure of Bern(e^-1) trials
    v = 0
    while _bernoulli_exp_unit(rng, Fraction(1)):
        v += 1
    return v


def discrete_laplace(rng, scale) -> int:
    """One draw of the discrete Laplace law with rational ``scale`` t > 0:
    P(k) = (e^{1/t} - 1)/(e^{1/t} + 1) e^{-|k|/t}, k in Z ([CKS20],
    Algorithm 2, with t = num / den: U uniform below num, ...)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"discrete_laplace needs scale > 0, got {scale}")
    t, s = scale.numerator, scale.denominator   # the law Lap_Z(t / s)
    while True:
        u = randbelow(rng, t)
        if not bernoulli_exp(rng, Fraction(u, t)):
            continue
        x = u + t * _geometric_exp_minus_one(rng)
        y = x // s
        negative = randbelow(rng, 2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_gaussian(rng, sigma2) -> int:
    """One draw of the discrete Gaussian with rational variance parameter
    ``sigma2`` > 0: P(k) proportional to exp(-k^2 / (2 sigma2)), k in Z
    ([CKS20], Algorithm 3: a discrete Laplace of scale floor(sigma) + 1,
    accepted with probability exp(-(|y| - sigma2/t)^2 / (2 sigma2)))."""
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"discrete_gaussian needs sigma2 > 0, got {sigma2}")
    t = math.isqrt(math.floor(sigma2)) + 1
    while True:
        y = discrete_laplace(rng, Fraction(t))
        gap = abs(y) - sigma2 / t
        if bernoulli_exp(rng, gap * gap / (2 * sigma2)):
            return y


def sample_many(sampler, rng, parameter, size: int) -> np.ndarray:
    """``size`` independent draws of ``sampler(rng, parameter)`` as an array
    of Python integers (dtype object: a draw may exceed int64)."""
    out = np.empty(int(size), dtype=object)
    for i in range(int(size)):
        out[i] = sampler(rng, parameter)
    return out
