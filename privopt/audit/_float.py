"""Audit of a release that adds noise to a number: the floating-point attack.

Mironov (CCS 2012) showed that ``x + Lap(b)`` computed in doubles reaches a
set of doubles that depends on ``x``: an output that the neighbour ``x'``
cannot produce rules ``x'`` out with certainty.  :class:`NoisyValueTarget`
audits that attack on one value released on two neighbouring data sets
(x and x', ``|x - x'|`` = the sensitivity): each run's output is the pair of
bits (reachable from x, reachable from x'), decided exactly by
:func:`reachable_by_double_laplace` (the double-precision sampler replayed
over its 2^53 words) or :func:`reachable_on_grid` (privopt's release on a grid
fixed in advance).  As shipped (``release="grid"``, privopt's
:func:`~privopt.mechanisms._noise.release_on_grid`) every output is reachable
from both, and the audit finds nothing; the broken variant
``release="double"`` (the plain double-precision Laplace that privopt used
before) gives outputs impossible under the neighbour with large probability,
and the audit's lower bound on epsilon exceeds the claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_choice, check_epsilon, check_positive, check_real
from ..calibration import count_laplace, grid_laplace
from ..mechanisms import draw_grid_noise, release_on_grid
from ._targets import AuditTarget

__all__ = ["NoisyValueTarget", "double_laplace", "reachable_by_double_laplace", "reachable_on_grid"]

_TWO_53 = float(2**53)
RELEASES = ("grid", "double")


def double_laplace(words, scale: float) -> np.ndarray:
    """Laplace(scale) noise as privopt's secure generator computed it in doubles
    before it was replaced: u = (k + 0.5) / 2^53 from 53-bit words k, then
    ``-scale sign(u - 1/2) log1p(-2 |u - 1/2|)``."""
    u = (np.asarray(words, dtype=np.float64) + 0.5) / _TWO_53 - 0.5
    return 0.0 - scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))


def reachable_by_double_laplace(outputs, value: float, scale: float) -> np.ndarray:
    """For each output y: is there a 53-bit word k with ``value +
    double_laplace(k) == y`` exactly?  The map k -> value + noise(k) is
    non-decreasing in doubles, so a binary search over k in [0, 2^53) finds the
    smallest k whose sum is >= y, and y is reachable iff that sum equals y."""
    y = np.asarray(outputs, dtype=np.float64).ravel()
    lo = np.zeros(y.shape, dtype=np.int64)
    hi = np.full(y.shape, 2**53 - 1, dtype=np.int64)
    while np.any(lo < hi):
        mid = lo + (hi - lo) // 2
        below = (value + double_laplace(mid, scale)) < y
        lo = np.where(below, mid + 1, lo)
        hi = np.where(below, hi, mid)
    return (value + double_laplace(lo, scale)) == y


def reachable_on_grid(outputs, step: float) -> np.ndarray:
    """For each output y of a release on the grid ``step`` Z with integer noise
    whose support is all of Z: reachable from any value iff y is an exact
    multiple of the step (checked in rational arithmetic)."""
    s = Fraction(step)
    return np.array([(Fraction(float(v)) / s).denominator == 1 for v in np.ravel(outputs)], dtype=bool)


@dataclass(frozen=True)
class _ValuePair:
    """The neighbouring values x (D) and x' (D')."""

    values: tuple[float, float]

    @property
    def name(self) -> str:
        return f"value {self.values[0]:g} vs {self.values[1]:g}"


class NoisyValueTarget(AuditTarget):
    """One number released with Laplace-type noise of sensitivity
    ``sensitivity`` at ``epsilon``, on x = ``values[0]`` (D) and x' =
    ``values[1]`` (D').

    ``release="grid"`` (as shipped): privopt's release on a grid fixed in
    advance with exact discrete Laplace noise (counts: ``count=True``, the
    integers, as the risk table; reals: :func:`~privopt.calibration.grid_laplace`,
    as OPSamp's output step).  ``release="double"`` (broken): ``x + Lap(b)``
    in doubles, b = sensitivity / epsilon.  Each output is the pair of bits
    (reachable from x, reachable from x'); an output impossible under one
    data set is an event of probability 0 there, which no epsilon allows.
    """

    mechanism = "noisy value"
    support: Any = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=float)

    def __init__(self, values=(0.0, 1.0), *, epsilon=1.0, sensitivity=1.0, count=True, release="grid"):
        x, x_prime = (check_real(v, "values") for v in values)
        self.pair = _ValuePair((x, x_prime))
        self.epsilon = check_epsilon(epsilon)
        self.delta = 0.0
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        if abs(x - x_prime) > self.sensitivity:
            raise ValueError("values: |x - x'| must not exceed the sensitivity")
        self.release = check_choice(release, "release", RELEASES)
        self.grid = (count_laplace(self.sensitivity, self.epsilon) if count
                     else grid_laplace(self.sensitivity, self.epsilon, 1))
        self.scale = self.sensitivity / self.epsilon
        self.variant = "as shipped" if self.release == "grid" else "double-precision Laplace"
        self.models = ()
        self.parameters = {"release": self.release, "scale": self.scale, "grid_step": self.grid.step,
                           "count": bool(count)}

    def draw_noise(self, rng, size=None):
        n = 1 if size is None else int(size)
        if self.release == "grid":
            return draw_grid_noise(rng, self.grid, n)
        return rng.integers(0, 2**53, size=n, dtype=np.int64)

    def stack_noise(self, draws):
        return np.concatenate(draws)

    def _released(self, which: int, noise) -> np.ndarray:
        x = self.pair.values[which]
        if self.release == "grid":
            return release_on_grid(np.full(len(noise), x), self.grid, noise)
        return x + double_laplace(noise, self.scale)

    def _reachable(self, outputs, value: float) -> np.ndarray:
        if self.release == "grid":
            return reachable_on_grid(outputs, self.grid.step)
        return reachable_by_double_laplace(outputs, value, self.scale)

    def outputs_from_noise(self, which, noise):
        y = self._released(which, noise)
        return np.column_stack([self._reachable(y, v) for v in self.pair.values]).astype(float)

    def run_mechanism(self, which, rng):
        return self.outputs_from_noise(which, self.draw_noise(rng))[0]
