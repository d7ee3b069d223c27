"""Gradients on a grid fixed in advance, with exact discrete Gaussian noise.

A noisy gradient computed in doubles, ``(sum_i g_i + N(0, s^2 I)) / b``, is a
number plus continuous noise: after one step the released weights are
``x + noise`` rescaled, and the doubles such a sum can reach depend on ``x``
(Mironov, CCS 2012), so an output impossible under a neighbour rules it out.
Here each clipped per-example gradient is rounded to the grid ``C 2^-k Z^d``
(k fixed from public quantities before any record is read), the batch sum is
an exact integer vector, and integer discrete Gaussian noise is added with the
exact sampler of :mod:`privopt._exact`; every later computation is a function
of that integer vector (post-processing), and every integer vector is a
possible release under every data set ([KLS21], the distributed discrete
Gaussian, without the modular arithmetic of secure aggregation).

[KLS21] Kairouz, Liu, Steinke. The distributed discrete Gaussian mechanism for
federated learning with secure aggregation. ICML 2021.
[CKS20] Canonne, Kamath, Steinke. The discrete Gaussian for differential
privacy. NeurIPS 2020.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._exact import discrete_gaussian_array
from . import _accounting as acc

__all__ = ["GradientGrid", "gradient_grid"]


@dataclass(frozen=True)
class GradientGrid:
    """The grid ``clip 2^-exponent Z^dim`` and its discrete Gaussian noise.

    ``sensitivity_units``: the integer L2 norm bound Delta of one rounded
    clipped gradient (:func:`~privopt.baselines._accounting.grid_sensitivity_units`);
    ``sigma_units``: the noise's std parameter s in grid units (an integer, at
    least ``noise_multiplier Delta``; the variance parameter is s^2);
    ``noise_multiplier``: the z the
    accounting used (the noise exceeds it by a relative
    ``GRID_NOISE_MARGIN``)."""

    clip: float
    exponent: int
    dim: int
    noise_multiplier: float
    sensitivity_units: Fraction
    sigma_units: int

    @property
    def step(self) -> float:
        """The grid step ``clip 2^-exponent`` (exact in doubles)."""
        return math.ldexp(self.clip, -self.exponent)

    def to_units(self, gradients) -> np.ndarray:
        """Each row (a clipped gradient, norm <= clip) rounded to the nearest
        grid point, in grid units (int64); the exact integer norm of every row
        is checked against Delta (a failure would be a bug, never data)."""
        units = np.rint(np.ldexp(np.asarray(gradients, dtype=float) / self.clip, self.exponent))
        units = units.astype(np.int64)
        norms2 = np.einsum("ij,ij->i", units, units) if units.ndim == 2 else np.array([units @ units])
        if norms2.size and Fraction(int(norms2.max())) > self.sensitivity_units ** 2:
            raise RuntimeError("a rounded gradient exceeds the grid's norm bound")  # pragma: no cover
        return units

    def noise(self, rng, rows: int) -> np.ndarray:
        """``rows`` x ``dim`` i.i.d. discrete Gaussians N_Z(0, s^2), exact (int64)."""
        draws = discrete_gaussian_array(rng, Fraction(self.sigma_units) ** 2, int(rows) * self.dim)
        return np.asarray(draws, dtype=np.int64).reshape(int(rows), self.dim)

    def to_value(self, units) -> np.ndarray:
        """The real vector ``step * units`` of an integer release (post-processing)."""
        return np.ldexp(np.asarray(units, dtype=float), -self.exponent) * self.clip


def gradient_grid(clip: float, noise_multiplier: float, dim: int) -> GradientGrid:
    """The grid and noise of a step accounted at noise multiplier z: the noise
    ``z (1 + GRID_NOISE_MARGIN)`` per unit of sensitivity, the exponent of
    :func:`~privopt.baselines._accounting.grid_exponent` and the variance of
    :func:`~privopt.baselines._accounting.grid_sigma_units`, all from public
    quantities (C, z, d).  Checked: the Gaussian shift that dominates one
    record's step ([CKS20], the multivariate discrete Gaussian) is at most 1/z, so the continuous
    Gaussian's accounting at z covers the grid."""
    z_noise = float(noise_multiplier) * (1.0 + acc.GRID_NOISE_MARGIN)
    k = acc.grid_exponent(z_noise, dim)
    s = acc.grid_sigma_units(z_noise, k, dim)
    delta_units = acc.grid_sensitivity_units(k, dim)
    mu = acc.discrete_gaussian_gaussian_shift(float(delta_units), float(s), dim)
    if not mu <= 1.0 / float(noise_multiplier):
        raise RuntimeError("the grid's noise does not cover the accounted noise multiplier")  # pragma: no cover
    return GradientGrid(float(clip), k, int(dim), float(noise_multiplier), delta_units, s)
