"""Random sources for privacy noise.

``random_state=None`` everywhere in privopt means :class:`SecureGenerator`: a
generator whose every draw comes from the operating system's cryptographically
secure source (:func:`os.urandom`), so that nobody can recover the noise from a
seed.  An ``int``, a :class:`numpy.random.SeedSequence` or a
:class:`numpy.random.Generator` gives reproducible draws for tests, teaching
and experiments; **a run whose seed is known is not private**.

The secure generator offers the subset of :class:`numpy.random.Generator`
that privopt's mechanisms use (uniform, normal, laplace, exponential,
integers, choice, permutation), each by inversion of 53-bit uniforms, and
``randbelow`` (exact uniform Python integers of any size) for the exact
samplers of :mod:`privopt._exact`.  Noise added to a released number never
comes from the floating-point draws here (Mironov's attack, CCS 2012): it is an
exact integer from :mod:`privopt._exact` on a grid fixed in advance.
"""

from __future__ import annotations

import numbers
import os

import numpy as np
from scipy.special import ndtri

from .exceptions import ParameterTypeError

__all__ = ["SecureGenerator", "check_random_state", "is_secure", "spawn"]

_TWO_53 = float(2**53)


class SecureGenerator:
    """Draws from :func:`os.urandom`; a drop-in for the parts of
    :class:`numpy.random.Generator` privopt uses.  It cannot be seeded."""

    secure = True

    def __repr__(self) -> str:
        return "SecureGenerator(os.urandom)"

    # -- core -----------------------------------------------------------
    def _u53(self, size) -> np.ndarray:
        shape = () if size is None else tuple(np.atleast_1d(size).astype(int))
        n = int(np.prod(shape)) if shape else 1
        words = np.frombuffer(os.urandom(8 * n), dtype=np.uint64) >> np.uint64(11)
        return words.astype(np.float64).reshape(shape) if shape else words.astype(np.float64)[0]

    def random(self, size=None):
        """Uniform on [0, 1) with 53 random bits."""
        return self._u53(size) / _TWO_53

    def _open_uniform(self, size=None):
        """Uniform on (0, 1): never exactly 0 or 1."""
        return (self._u53(size) + 0.5) / _TWO_53

    def uniform(self, low=0.0, high=1.0, size=None):
        return low + (high - low) * self.random(size)

    def standard_normal(self, size=None):
        return ndtri(self._open_uniform(size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + scale * self.standard_normal(size)

    def standard_exponential(self, size=None):
        return -np.log(self._open_uniform(size))

    def exponential(self, scale=1.0, size=None):
        """Exponential with the given *scale* (mean), as numpy's."""
        return scale * self.standard_exponential(size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        u = self._open_uniform(size) - 0.5
        return loc - scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))

    def integers(self, low, high=None, size=None):
        """Uniform integers in [low, high) by rejection (no modulo bias)."""
        if high is None:
            low, high = 0, low
        span = int(high) - int(low)
        if span <= 0:
            raise ValueError("high must be > low")
        shape = () if size is None else tuple(np.atleast_1d(size).astype(int))
        n = int(np.prod(shape)) if shape else 1
        bits = max(1, (span - 1).bit_length())
        out = np.empty(n, dtype=np.int64)
        filled = 0
        while filled < n:
            need = n - filled
            words = np.frombuffer(os.urandom(8 * 2 * need), dtype=np.uint64) >> np.uint64(64 - bits)
            ok = words[words < span][:need]
            out[filled : filled + ok.size] = ok.astype(np.int64) + int(low)
            filled += ok.size
        return out.reshape(shape) if shape else int(out[0])

    def randbelow(self, m: int) -> int:
        """A uniform Python integer in ``{0, ..., m - 1}`` for any ``m >= 1``,
        exactly (rejection on ``bit_length(m - 1)`` random bits)."""
        m = int(m)
        if m <= 0:
            raise ValueError("randbelow needs m >= 1")
        bits = max(1, (m - 1).bit_length())
        n_bytes = (bits + 7) // 8
        while True:
            value = int.from_bytes(os.urandom(n_bytes), "little") >> (8 * n_bytes - bits)
            if value < m:
                return value

    def permutation(self, x):
        if isinstance(x, numbers.Integral):
            return np.argsort(self.random(int(x)), kind="stable")
        arr = np.asarray(x)
        return arr[np.argsort(self.random(arr.shape[0]), kind="stable")]

    def choice(self, a, size=None, replace=True, p=None):
        pool = np.arange(a) if isinstance(a, numbers.Integral) else np.asarray(a)
        n = pool.shape[0]
        count = 1 if size is None else int(np.prod(np.atleast_1d(size)))
        if p is not None:
            cdf = np.cumsum(np.asarray(p, dtype=float))
            cdf /= cdf[-1]
            if not replace:
                raise NotImplementedError("choice(p=..., replace=False) is not supported")
            idx = np.searchsorted(cdf, self.random(count), side="right")
        elif replace:
            idx = self.integers(0, n, size=count)
        else:
            if count > n:
                raise ValueError("cannot take a larger sample than population without replacement")
            idx = self.permutation(n)[:count]
        out = pool[np.asarray(idx)]
        if size is None:
            return out[0]
        return out.reshape(np.atleast_1d(size))

    def spawn(self, n_children: int):
        return [SecureGenerator() for _ in range(n_children)]


def is_secure(rng) -> bool:
    """True when ``rng`` is privopt's secure generator."""
    return isinstance(rng, SecureGenerator)


def check_random_state(random_state, name: str = "random_state"):
    """Turn ``random_state`` into a generator.

    ``None`` -> :class:`SecureGenerator` (private); an int, a
    :class:`numpy.random.SeedSequence` -> a seeded :class:`numpy.random.Generator`
    (reproducible, not private if the seed is known); a Generator or a
    :class:`SecureGenerator` is returned as it is.
    """
    if random_state is None:
        return SecureGenerator()
    if isinstance(random_state, (SecureGenerator, np.random.Generator)):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ParameterTypeError(f"{name} must be a non-negative integer seed.", name)
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        raise ParameterTypeError(
            f"{name}: legacy numpy RandomState is not supported; pass an int seed or "
            "np.random.default_rng(seed), or None for a secure source.",
            name,
        )
    raise ParameterTypeError(
        f"{name} must be None (secure), an int seed or a numpy Generator, "
        f"got {type(random_state).__name__}.",
        name,
    )


def spawn(rng, n_children: int) -> list:
    """Independent child generators (never the same stream twice)."""
    if isinstance(rng, SecureGenerator):
        return rng.spawn(n_children)
    return rng.spawn(n_children)
