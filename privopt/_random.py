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

import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._optional import lazy_module
from .exceptions import ParameterTypeError

special = lazy_module("scipy.special")     # slow to import: loaded at first use

__all__ = ["NoiseDraws", "SecureGenerator", "check_random_state", "is_secure", "noise_from_words", "spawn"]

_TWO_53 = float(2**53)
_TOP_WORD = 2**53 - 1
_LN2_53 = 53.0 * math.log(2.0)


def _word_uniform(k: int) -> float:
    return (k + 0.5) / _TWO_53


def _tail_exponential(k: int, next_word: Callable[[], int]) -> tuple[float, float]:
    """(E, ln E) for E = -ln U, U uniform on (0, 1), whose first 53-bit word
    is ``k`` (U in [k, k + 1) / 2^53), with no tail cut:

    * k = 0 (U < 2^-53): by memorylessness -ln U = 53 ln 2 + (-ln U'), U'
      uniform and independent: the draw goes on with the next word;
    * k = 2^53 - 1 (U >= 1 - 2^-53): U = 1 - 2^-53 V, V uniform on (0, 1], so
      E = -log1p(-2^-53 V) = 2^-53 V (1 + O(2^-53)) and ln E = -53 ln 2 - E'
      with E' = -ln V an exponential drawn the same way: unbounded below;
    * otherwise the bucket's midpoint (as every other word).
    """
    shift = 0.0
    while k == 0:
        shift += _LN2_53
        k = next_word()
    if k == _TOP_WORD:
        inner, _ = _tail_exponential(next_word(), next_word)
        log_e = -_LN2_53 - inner
        e = -math.log1p(-math.exp(-inner) / _TWO_53)
        if shift:
            e += shift
            log_e = math.log(e)
        return e, log_e
    e = shift - math.log(_word_uniform(k))
    return e, math.log(e)


@dataclass(frozen=True)
class NoiseDraws:
    """Uniforms on (0, 1) and the exponentials E = -ln U they define, with ln E,
    from 53-bit words: for every word but the two end buckets, ``u = (k + 0.5) /
    2^53``, ``e = -ln u`` and ``log_e = ln e`` exactly as numpy computes them;
    the end buckets go on drawing (:func:`_tail_exponential`), so that E has no
    upper tail cut and ln E none below (E itself stops at the smallest
    double, where ``log_e`` goes on).  ``u`` is never 0 or 1."""

    u: np.ndarray
    e: np.ndarray
    log_e: np.ndarray

    def __getitem__(self, index) -> NoiseDraws:
        return NoiseDraws(self.u[index], self.e[index], self.log_e[index])

    def __len__(self) -> int:
        return len(self.u)

    @classmethod
    def from_uniforms(cls, u) -> NoiseDraws:
        """Draws from given uniforms (no refinement of the tails: for tests)."""
        u = np.asarray(u, dtype=float)
        e = -np.log(u)
        return cls(u, e, np.log(e))


def noise_from_words(words, next_word: Callable[[int], int]) -> NoiseDraws:
    """:class:`NoiseDraws` from 53-bit words; ``next_word(i)`` gives further
    words for the end buckets of entry i (only they read it)."""
    k = np.asarray(words, dtype=np.uint64)
    u = (k.astype(np.float64) + 0.5) / _TWO_53
    u = np.minimum(u, 1.0 - 2.0**-53)            # (2^53 - 0.5) / 2^53 rounds to 1.0
    e = -np.log(u)
    log_e = np.log(e)
    for i in np.flatnonzero((k == 0) | (k == _TOP_WORD)):
        e[i], log_e[i] = _tail_exponential(int(k[i]), _words_of(next_word, int(i)))
    return NoiseDraws(u, e, log_e)


def _words_of(next_word: Callable[[int], int], i: int) -> Callable[[], int]:
    return lambda: next_word(i)


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
        """Uniform on (0, 1): never exactly 0 or 1 (the top word's midpoint,
        which rounds to 1.0, is taken as 1 - 2^-53)."""
        return np.minimum((self._u53(size) + 0.5) / _TWO_53, 1.0 - 2.0**-53)

    def _word(self) -> int:
        return int(np.frombuffer(os.urandom(8), dtype=np.uint64)[0] >> np.uint64(11))

    def noise_draws(self, size) -> NoiseDraws:
        """:class:`NoiseDraws` of ``size`` (an int or a shape), with the end
        buckets of E = -ln U drawn on from fresh words (no tail cut)."""
        shape = tuple(np.atleast_1d(size).astype(int))
        n = int(np.prod(shape))
        words = np.frombuffer(os.urandom(8 * n), dtype=np.uint64) >> np.uint64(11)
        draws = noise_from_words(words, lambda i: self._word())
        return NoiseDraws(draws.u.reshape(shape), draws.e.reshape(shape), draws.log_e.reshape(shape))

    def uniform(self, low=0.0, high=1.0, size=None):
        return low + (high - low) * self.random(size)

    def standard_normal(self, size=None):
        return special.ndtri(self._open_uniform(size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + scale * self.standard_normal(size)

    def standard_exponential(self, size=None):
        """Exponential(1), E = -ln U, with no cut of its upper tail (the word
        0 draws on: :func:`noise_from_words`); never 0."""
        if size is None:
            return float(self.noise_draws(1).e[0])
        return self.noise_draws(size).e

    def standard_gumbel(self, size=None):
        """Standard Gumbel, G = -ln E, with no cut of its upper tail (ln E is
        drawn on below the smallest double: :func:`noise_from_words`)."""
        if size is None:
            return float(-self.noise_draws(1).log_e[0])
        return -self.noise_draws(size).log_e

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
