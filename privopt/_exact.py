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

:func:`discrete_laplace_array` and :func:`discrete_gaussian_array` run the
same algorithms on whole arrays at once: every draw of a round is a numpy
int64 operation on 62-bit uniform words (the top 62 bits of
:func:`os.urandom` words for the secure generator, ``rng.integers(0, 2**62)``
for a seeded numpy Generator), a uniform below m by rejection
of the words at or above the largest multiple of m (no modulo bias), and the
elements still running go on to the next round.  The arithmetic is exact
(every product is bounded below 2^62 before it is formed; the one square
that may exceed it is taken in Python integers), so their law is the stated
one exactly; parameters too large for that bound fall back to the scalar
samplers; below 4096 draws the same algorithms run one draw at a time on
Python integers from buffered words (faster there).  A million draws take a
few seconds (2-7 s measured, the secure generator the slower).

[CKS20] Canonne, Kamath, Steinke. The Discrete Gaussian for Differential
Privacy. NeurIPS 2020 (arXiv:2004.00010).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np

from ._random import is_secure

__all__ = [
    "bernoulli",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_laplace",
    "discrete_laplace_array",
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


# ---------------------------------------------------------------------------
# The same algorithms on arrays: numpy int64 arithmetic, exact
# ---------------------------------------------------------------------------
_WORD = 2**62          # the uniform words below are in [0, 2^62)
_FAST_LIMIT = 2**61    # every modulus m of the array path satisfies m <= 2^61


def _words(rng, n: int) -> np.ndarray:
    """``n`` independent uniform integers in [0, 2^62) (int64), from the secure
    generator's :func:`os.urandom` words (the top 62 bits of each 64-bit word)
    or from a numpy Generator."""
    if is_secure(rng):
        raw = np.frombuffer(os.urandom(8 * int(n)), dtype=np.uint64) >> np.uint64(2)
        return raw.astype(np.int64)
    return np.asarray(rng.integers(0, _WORD, size=int(n)), dtype=np.int64)


def randbelow_array(rng, m) -> np.ndarray:
    """Independent uniform integers in ``{0, ..., m_i - 1}`` for an int64 array
    ``m`` (1 <= m_i <= 2^61), exactly: a word w uniform in [0, 2^62) is kept
    when ``w < m floor(2^62 / m)`` (probability > 1/2) and gives ``w mod m``;
    the others draw again."""
    m = np.asarray(m, dtype=np.int64)
    if m.size and (m.min() < 1 or m.max() > _FAST_LIMIT):
        raise ValueError("randbelow_array needs 1 <= m <= 2^61")
    out = np.empty(m.shape, dtype=np.int64)
    todo = np.arange(m.size)
    flat_m, flat_out = m.ravel(), out.ravel()
    while todo.size:
        mm = flat_m[todo]
        w = _words(rng, todo.size)
        ok = w < mm * (_WORD // mm)
        flat_out[todo[ok]] = w[ok] % mm[ok]
        todo = todo[~ok]
    return out


def _bernoulli_array(rng, num, den) -> np.ndarray:
    """Bernoulli(num_i / den_i), 0 <= num <= den <= 2^61 (int64 arrays or
    scalars, broadcast), exactly: with K = floor(2^62 / den), a word w uniform
    in [0, 2^62) conditioned on w < den K is uniform there, and w < num K has
    probability num K / (den K) = num / den; words at or above den K (fewer
    than half) are drawn again."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    shape = np.broadcast_shapes(num.shape, den.shape)
    k = _WORD // den
    top = np.broadcast_to(den * k, shape).ravel()
    cut = np.broadcast_to(num * k, shape).ravel()
    w = _words(rng, top.size)
    ok = w < top
    out = w < cut
    todo = np.flatnonzero(~ok)
    while todo.size:
        w = _words(rng, todo.size)
        ok = w < top[todo]
        out[todo[ok]] = w[ok] < cut[todo[ok]]
        todo = todo[~ok]
    return out.reshape(shape)


def _bernoulli_exp_unit_array(rng, num, den) -> np.ndarray:
    """Bernoulli(exp(-num_i / den_i)) for num_i / den_i in [0, 1]: [CKS20],
    Algorithm 1 on every element at once -- K is the first k with
    A_k ~ Bernoulli(gamma / k) = 0, and P[K odd] = exp(-gamma).  A_k is drawn as
    Bernoulli(1/k) AND Bernoulli(num/den) (independent; their product has
    probability gamma / k), so no product num * k is formed."""
    num, den = (np.asarray(v, dtype=np.int64).ravel() for v in np.broadcast_arrays(num, den))
    k = np.ones(num.size, dtype=np.int64)
    todo = np.flatnonzero(_bernoulli_array(rng, num, den))   # A_1 = Bernoulli(gamma)
    while todo.size:
        k[todo] += 1
        kk = k[todo]
        a = _bernoulli_array(rng, 1, kk)
        sub = todo[a]
        a2 = _bernoulli_array(rng, num[sub], den[sub])
        todo = sub[a2]
    return k % 2 == 1


def bernoulli_exp_array(rng, num, den) -> np.ndarray:
    """Bernoulli(exp(-gamma_i)) for ``gamma_i = num_i / den_i >= 0`` (int64
    arrays, den <= 2^61), exactly: [CKS20], Algorithm 1, with gamma > 1 as
    floor(gamma) Bernoulli(e^-1) trials and one Bernoulli(e^-(gamma mod 1)),
    all of which must succeed."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    whole, rest = num // den, num % den
    out = np.ones(num.shape, dtype=bool)
    todo = np.flatnonzero(whole > 0)
    left = whole.copy()
    while todo.size:
        ok = _bernoulli_exp_unit_array(rng, np.ones(todo.size, np.int64), np.ones(todo.size, np.int64))
        out[todo[~ok]] = False
        left[todo] -= 1
        todo = todo[ok & (left[todo] > 0)]
    alive = np.flatnonzero(out)
    out[alive] = _bernoulli_exp_unit_array(rng, rest[alive], den[alive])
    return out


def _geometric_exp_minus_one_array(rng, size: int) -> np.ndarray:
    """V = number of successes before the first failure of Bernoulli(e^-1)
    trials, for ``size`` independent elements."""
    v = np.zeros(int(size), dtype=np.int64)
    todo = np.arange(int(size))
    ones = np.ones(int(size), dtype=np.int64)
    while todo.size:
        ok = _bernoulli_exp_unit_array(rng, ones[: todo.size], ones[: todo.size])
        v[todo[ok]] += 1
        todo = todo[ok]
    return v


def _laplace_round(rng, t: int, s: int, size: int) -> np.ndarray:
    """One round of [CKS20], Algorithm 2 for ``size`` elements (scale t / s):
    the draw, or ``_REJECT`` where the round rejects."""
    u = randbelow_array(rng, np.full(size, t, dtype=np.int64))
    keep = bernoulli_exp_array(rng, u, np.full(size, t, dtype=np.int64))
    v = _geometric_exp_minus_one_array(rng, size)
    y = (u + t * v) // s
    negative = randbelow_array(rng, np.full(size, 2, dtype=np.int64)) == 1
    keep &= ~(negative & (y == 0))
    return np.where(keep, np.where(negative, -y, y), _REJECT)


_REJECT = np.iinfo(np.int64).min


#: Draws made at once by the array samplers: larger requests are filled chunk by
#: chunk, so the working arrays (some of Python integers) stay a few tens of MB.
_CHUNK_DRAWS = 2**18


def _fill(round_fn, size: int) -> np.ndarray:
    """Run ``round_fn(k)`` (k elements, ``_REJECT`` where rejected) until every
    one of ``size`` elements is accepted: each element's first accepted round,
    so the draws are independent with the algorithm's law.  At most
    ``_CHUNK_DRAWS`` elements are worked on at once."""
    out = np.empty(int(size), dtype=np.int64)
    for start in range(0, int(size), _CHUNK_DRAWS):
        todo = np.arange(start, min(int(size), start + _CHUNK_DRAWS))
        while todo.size:
            got = round_fn(todo.size)
            ok = got != _REJECT
            out[todo[ok]] = got[ok]
            todo = todo[~ok]
    return out


def discrete_laplace_array(rng, scale, size: int) -> np.ndarray:
    """``size`` independent draws of :func:`discrete_laplace` (rational
    ``scale`` t/s > 0), as an int64 array, by [CKS20], Algorithm 2 on arrays.
    A scale whose numerator or denominator reaches 2^40 uses the scalar
    sampler (dtype object)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"discrete_laplace needs scale > 0, got {scale}")
    t, s = scale.numerator, scale.denominator
    if t >= 2**40 or s >= 2**40:
        return sample_many(discrete_laplace, rng, scale, size)
    return _fill(lambda k: _laplace_round(rng, t, s, k), size)


def _gaussian_round(rng, scale: int, offset: int, factor: int, den: int, size: int) -> np.ndarray:
    """One round of [CKS20], Algorithm 3 for ``size`` elements: Y ~ Lap_Z(t)
    (t = ``scale``) accepted with probability
    ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| factor - offset)^2 / den)``
    (the caller's reduced integers).  The square is taken in Python integers
    and split into its whole part and remainder over ``den`` (<= 2^61)."""
    y = _fill(lambda k: _laplace_round(rng, scale, 1, k), size)
    gap = np.abs(y).astype(object) * factor - offset
    square = gap * gap
    whole = np.asarray(square // den, dtype=object)
    if whole.size and max(whole) >= 2**62:  # astronomically rare: reject through the exact scalar trial
        accept = np.array([bernoulli_exp(rng, Fraction(int(q), den)) for q in square], dtype=bool)
    else:
        rest = np.asarray(square % den, dtype=np.int64)
        accept = _bernoulli_exp_split(rng, whole.astype(np.int64), rest, den)
    return np.where(accept, y, _REJECT)


def _bernoulli_exp_split(rng, whole, rest, den: int) -> np.ndarray:
    """Bernoulli(exp(-(whole + rest / den))) elementwise: ``whole`` Bernoulli(e^-1)
    trials and one Bernoulli(exp(-rest/den)), all succeeding."""
    size = whole.size
    ones = np.ones(size, dtype=np.int64)
    out = bernoulli_exp_array(rng, whole, ones)
    alive = np.flatnonzero(out)
    out[alive] = _bernoulli_exp_unit_array(rng, rest[alive], np.full(alive.size, den, dtype=np.int64))
    return out


#: Below this many draws the array samplers run the same algorithms on Python
#: integers, one draw at a time from buffered words: faster there (24 against 63 us a draw
#: at 2048 draws, sigma = 10^7; equal near 8192; the arrays 2x faster at 32768).
_SMALL = 4096


class _WordStream:
    """62-bit uniform words of ``rng`` (:func:`_words`), drawn 1024 at a time and
    served one by one, and exact uniform integers below m <= 2^61 from them
    (rejection of the words at or above the largest multiple of m)."""

    def __init__(self, rng):
        self._rng = rng
        self._buffer: list[int] = []

    def below(self, m: int) -> int:
        top = m * (_WORD // m)
        while True:
            if not self._buffer:
                self._buffer = _words(self._rng, 1024).tolist()
            w = self._buffer.pop()
            if w < top:
                return w % m


def _bernoulli_exp_int(words: _WordStream, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for integers num >= 0, 1 <= den <= 2^61, as
    :func:`bernoulli_exp` (whole part as Bernoulli(e^-1) trials, [CKS20]
    Algorithm 1 for the rest), on Python integers; A_k ~ Bernoulli(gamma / k)
    is drawn as Bernoulli(1/k) AND Bernoulli(num'/den)."""
    whole, rest = divmod(num, den)
    for _ in range(whole):
        k = 1
        while words.below(k) == 0:   # A_k ~ Bernoulli(1/k), gamma = 1
            k += 1
        if k % 2 == 0:
            return False
    k = 1
    while words.below(k) == 0 and words.below(den) < rest:
        k += 1
    return k % 2 == 1


def _discrete_laplace_int(words: _WordStream, t: int) -> int:
    """[CKS20], Algorithm 2 for the integer scale t, on Python integers."""
    while True:
        u = words.below(t)
        if not _bernoulli_exp_int(words, u, t):
            continue
        v = 0
        while _bernoulli_exp_int(words, 1, 1):
            v += 1
        x = u + t * v
        negative = words.below(2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def _gaussian_small(rng, scale: int, offset: int, factor: int, den: int, size: int) -> np.ndarray:
    """``size`` draws of [CKS20], Algorithm 3 with the reduced integers of
    :func:`_gaussian_round`, one at a time on Python integers."""
    words = _WordStream(rng)
    out = np.empty(int(size), dtype=np.int64)
    for i in range(int(size)):
        while True:
            y = _discrete_laplace_int(words, scale)
            gap = abs(y) * factor - offset
            if _bernoulli_exp_int(words, gap * gap, den):
                out[i] = y
                break
    return out


def discrete_gaussian_array(rng, sigma2, size: int) -> np.ndarray:
    """``size`` independent draws of :func:`discrete_gaussian` (rational
    variance parameter ``sigma2`` = a/b > 0), as an int64 array, by [CKS20],
    Algorithm 3 on arrays.  Its proof holds for any integer scale t > 0 of the
    discrete Laplace proposal (t only sets the acceptance rate): t = s when
    sigma^2 = s^2 is the square of an integer (acceptance
    ``exp(-(|Y| - s)^2 / (2 s^2))``, exact in int64 up to s = 2^30), else
    t = floor(sigma) + 1 (acceptance ``exp(-(|Y| t b - a)^2 / (2 a b t^2))``,
    up to ``2 a b t^2 <= 2^61``, sigma^2 of about 2^29 for an integer).  Beyond
    those ranges the scalar sampler is used (dtype object); below 4096 draws the
    same algorithm runs on Python integers, one draw at a time."""
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"discrete_gaussian needs sigma2 > 0, got {sigma2}")
    a, b = sigma2.numerator, sigma2.denominator
    root = math.isqrt(a)
    if b == 1 and root * root == a and 2 * a <= _FAST_LIMIT:
        reduced = (root, root, 1, 2 * a)
    else:
        t = math.isqrt(math.floor(sigma2)) + 1
        if 2 * a * b * t * t > _FAST_LIMIT:
            return sample_many(discrete_gaussian, rng, sigma2, size)
        reduced = (t, a, t * b, 2 * a * b * t * t)
    if int(size) < _SMALL:
        return _gaussian_small(rng, *reduced, size)
    return _fill(lambda k: _gaussian_round(rng, *reduced, k), size)
