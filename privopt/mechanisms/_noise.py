"""The noise-drawing step of each mechanism, in one place.

Each mechanism draws its noise by calling the function here, and so does the
empirical privacy audit (:mod:`privopt.audit`), which replays the mechanism
with an exact argmin by enumeration instead of a solver.  Keeping the draw in
one function makes the audit test the code that runs, not a copy of it.

``size=None`` draws the noise of ONE run, exactly as the mechanism uses it;
``size=N`` draws the noise of N independent runs at once (a leading axis of
length N), for the audit.  For a numpy Generator, one call with ``size=N``
gives the same numbers as N consecutive calls with ``size=None`` for
``draw_opdisc_noise`` and ``draw_rspm_noise`` (one distribution per call);
``draw_opsamp_noise`` draws all sigma's before all mu's, so its batched
numbers differ from N consecutive runs, with the same distribution.
"""

from __future__ import annotations

import math

import numpy as np

from .._exact import (discrete_gaussian, discrete_gaussian_array, discrete_laplace, discrete_laplace_array,
                      sample_many)
from .._random import is_secure
from ..calibration import GridNoise

__all__ = ["draw_grid_noise", "draw_opdisc_noise", "draw_opsamp_noise", "draw_rspm_noise",
           "draw_selection_noise", "release_on_grid"]


def _shape(size, *tail):
    # one run: exactly the size argument the mechanisms have always passed
    # (an int for a vector), so that results for a given seed do not change
    if size is None:
        return tail[0] if len(tail) == 1 else tuple(tail)
    return (int(size), *tail)


def draw_opdisc_noise(rng, sigma: float, dim: int, size=None) -> np.ndarray:
    """eta ~ N(0, sigma^2 I_{d+1}) of OPDisc [NRVW20, Algorithm 1]: shape
    ``(dim + 1,)``, or ``(size, dim + 1)``."""
    return np.asarray(rng.normal(0.0, sigma, size=_shape(size, dim + 1)), dtype=float)


def draw_opsamp_noise(rng, eta: float, grid: GridNoise, n_calls: int, dim: int, size=None, *,
                      output_noise: bool = True):
    """The noise of OPSamp [NRVW20, Algorithm 2]: ``(sigmas, mu)`` with
    sigma_k ~ Exp(RATE eta)^d for k = 1..m (mean 1/eta) and mu the output
    step's integer noise on ``grid`` (discrete Laplace in grid units, drawn
    exactly: :func:`draw_grid_noise`), drawn in that order from the one
    generator: shapes ``(m, d)`` and ``(d,)``, or ``(size, m, d)`` and
    ``(size, d)`` (mu: Python integers, dtype object).

    ``output_noise=False`` (the audit's broken variant without the Laplace
    step, never the mechanism): mu is all zeros and none is drawn; the sigmas
    are the same numbers."""
    sigmas = np.asarray(rng.exponential(scale=1.0 / eta, size=_shape(size, n_calls, dim)), dtype=float)
    count = dim if size is None else int(size) * dim
    mu = draw_grid_noise(rng, grid, count) if output_noise else np.zeros(count, dtype=object)
    return sigmas.reshape(_shape(size, n_calls, dim)), mu.reshape(_shape(size, dim))


def draw_grid_noise(rng, grid: GridNoise, size: int) -> np.ndarray:
    """``size`` i.i.d. integers of ``grid``'s law (discrete Laplace or
    discrete Gaussian in grid units), sampled exactly with integer
    arithmetic ([CKS20], Algorithms 2 and 3; :mod:`privopt._exact`): an
    array of Python integers (dtype object).  The secure generator
    (``random_state=None``) draws them with the array samplers (a million in
    seconds); a seeded generator with the scalar ones, whose stream seeded
    results have always come from."""
    if is_secure(rng):
        array = discrete_laplace_array if grid.law == "laplace" else discrete_gaussian_array
        return array(rng, grid.parameter, int(size)).astype(object)
    sampler = discrete_laplace if grid.law == "laplace" else discrete_gaussian
    return sample_many(sampler, rng, grid.parameter, int(size))


def release_on_grid(values, grid: GridNoise, noise) -> np.ndarray:
    """The release gamma (round(x / gamma) + Z) of eq. (1) of
    :mod:`privopt.calibration._grid`: ``values`` rounded to the grid (exact:
    gamma is a power of two), the integer noise ``noise`` added in exact
    integer arithmetic, and the sum returned as doubles (a function of that
    integer only: every output is reachable from every input)."""
    x = np.asarray(values, dtype=float)
    z = np.asarray(noise, dtype=object).reshape(x.shape)
    if not np.all(np.isfinite(x)):
        raise ValueError("release_on_grid: the value to release is not finite")
    units = [int(round(v)) for v in np.ldexp(x, -grid.exponent).ravel()]
    total = [u + int(k) for u, k in zip(units, z.ravel())]
    return np.array([math.ldexp(float(t), grid.exponent) for t in total], dtype=float).reshape(x.shape)


def draw_rspm_noise(rng, scale: float, n_separators: int, size=None) -> np.ndarray:
    """xi_u ~ Lap(scale) i.i.d., one per separator element, of RSPM [NRW18]:
    shape ``(n_separators,)`` (first the d draws for +e_j, then the d for
    -e_j), or ``(size, n_separators)``."""
    return np.asarray(rng.laplace(0.0, scale, size=_shape(size, n_separators)), dtype=float)


def draw_selection_noise(rng, method: str, n_points: int, size=None) -> np.ndarray:
    """The per-point noise of private selection, on the scale of one unit of
    epsilon u / (2 Delta): standard Gumbel for ``method="exponential"``
    (Gumbel-max sampling of the exponential mechanism [MT07]), Exponential(1)
    for ``"permute_and_flip"`` (report-noisy-max form of [MS20], [DKSSWXZ21]).
    A seeded generator draws both from ``rng.standard_exponential`` (G = -ln E),
    so it gives the same stream for both methods: shape ``(n_points,)`` or
    ``(size, n_points)``.  The secure generator (``random_state=None``) draws
    them with no tail cut (``SecureGenerator.standard_gumbel`` and
    ``standard_exponential``: no point of W has probability 0, and no key is
    infinite)."""
    shape = _shape(size, int(n_points))
    if method not in ("exponential", "permute_and_flip"):
        raise ValueError(f"unknown selection method {method!r}")
    if is_secure(rng):
        draws = rng.noise_draws(shape)
        return -draws.log_e if method == "exponential" else draws.e
    e = np.asarray(rng.standard_exponential(shape), dtype=float)
    return -np.log(e) if method == "exponential" else e
