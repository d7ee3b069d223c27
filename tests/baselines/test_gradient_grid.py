"""The DP-SGD family's gradients on a grid with exact discrete Gaussian noise:
every quantity of the grid and of its accounting against values worked out by
hand, or recomputed here with dp_accounting from the definitions."""

from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant as pld

from privopt.baselines import GradientGrid, gradient_grid
from privopt.baselines import _accounting as acc


def test_sensitivity_units_by_hand():
    # 2^k + ceil(sqrt d)/2 + 1
    assert acc.grid_sensitivity_units(10, 9) == Fraction(2053, 2)      # 1024 + 3/2 + 1
    assert acc.grid_sensitivity_units(0, 1) == Fraction(5, 2)          # 1 + 1/2 + 1
    assert acc.grid_sensitivity_units(3, 10) == Fraction(11)           # 8 + 4/2 + 1 (ceil sqrt 10 = 4)


def test_grid_exponent_by_hand():
    # d = 9: (3/2 + 1) / 2^k <= 1e-3 needs 2^k >= 2500: k = 12; d = 100: 6000 -> k = 13
    assert acc.grid_exponent(10.0, 9) == 12
    assert acc.grid_exponent(10.0, 100) == 13
    # z = 2^20, d = 9: z (2^k + 5/2) <= 2^30 needs 2^k <= 1021.5: k = 9
    assert acc.grid_exponent(2.0**20, 9) == 9


def test_sigma_units_by_hand():
    # z = 2, k = 10, d = 9: ceil(2 * 2053/2) = 2053; z = 0.1 (its double is a hair above 1/10)
    assert acc.grid_sigma_units(2.0, 10, 9) == 2053
    assert acc.grid_sigma_units(0.1, 3, 10) == 2                        # ceil(1.1000000000000000888)


def test_delta_split_by_hand():
    eps_ar, delta_ar = acc.dpsgd_grid_delta_split(2 * math.log(3), 4e-9)
    assert eps_ar == pytest.approx(math.log(3), rel=1e-15)
    assert delta_ar == pytest.approx(1e-9, rel=1e-12)                  # 4e-9 / (1 + 3)


def test_the_discrete_gaussians_gaussian_shift_by_hand():
    assert acc.discrete_gaussian_gaussian_shift(3.0, 30.0, 5) == pytest.approx(0.1, rel=1e-15)
    # sigma = 2: the bound 10 sigma^2 e^{-pi^2 sigma^2} on tau, d = 5: sqrt(0.75^2 + 2 * 5 * 40 e^{-4 pi^2})
    assert acc.discrete_gaussian_gaussian_shift(1.5, 2.0, 5) == pytest.approx(
        math.sqrt(0.5625 + 400 * math.exp(-4 * math.pi**2)), rel=1e-15)
    with pytest.raises(ValueError, match="one unit"):
        acc.discrete_gaussian_gaussian_shift(1.0, 0.5, 1)


def _add_remove_epsilon(z, q, steps, delta):
    a = pld.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    a.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps))
    return a.get_epsilon(delta)


def test_the_grid_noise_multiplier_meets_the_group_privacy_target_and_no_less():
    """Replace-one Poisson: z is the smallest (to 1e-6) whose add/remove PLD epsilon at
    delta / (1 + e^{eps/2}) is at most eps/2 (recomputed here with dp_accounting)."""
    eps, delta, q, steps = 1.0, 1e-6, 0.05, 200
    z = acc.dpsgd_grid_noise_multiplier(eps, delta, q, steps)
    delta_ar = delta / (1 + math.exp(0.5))
    assert _add_remove_epsilon(z, q, steps, delta_ar) <= 0.5
    assert _add_remove_epsilon(z * (1 - 1e-3), q, steps, delta_ar) > 0.5
    spent = acc.dpsgd_grid_epsilon(z, q, steps, eps, delta)
    assert spent == pytest.approx(2 * _add_remove_epsilon(z, q, steps, delta_ar), rel=1e-6)
    assert spent <= eps
    # the group route costs little against the continuous Gaussian's replace-one pair
    assert z <= 1.1 * acc.dpsgd_calibrate_noise_multiplier(eps, delta, q, steps)


def test_other_schemes_keep_the_continuous_accounting():
    """Shuffled batches (an unsampled Gaussian step per epoch) and add/remove Poisson
    sampling are accounted from dominating pairs, which the grid's discrete Gaussian
    has ([CKS20], Theorem 15): the same z as the continuous Gaussian."""
    assert acc.dpsgd_grid_noise_multiplier(1.0, 1e-6, 0.1, 20, "shuffle", 2) == \
        acc.dpsgd_calibrate_noise_multiplier(1.0, 1e-6, 0.1, 20, "shuffle", 2)
    assert acc.dpsgd_grid_noise_multiplier(1.0, 1e-6, 0.1, 20, "poisson", None, "add_remove") == \
        acc.dpsgd_calibrate_noise_multiplier(1.0, 1e-6, 0.1, 20, "poisson", None, "add_remove")


def test_gradient_grid_covers_the_accounted_noise():
    grid = gradient_grid(0.5, 7.3, 9)
    assert isinstance(grid, GradientGrid)
    assert grid.exponent == 12 and grid.step == 0.5 / 4096
    assert grid.sensitivity_units == Fraction(4096) + Fraction(5, 2)
    assert grid.sigma_units >= 7.3 * float(grid.sensitivity_units)
    assert float(grid.sensitivity_units) / grid.sigma_units <= 1 / 7.3


def test_rounding_to_the_grid_stays_within_the_norm_bound():
    rng = np.random.default_rng(0)
    grid = gradient_grid(1.0, 3.0, 9)
    g = rng.normal(size=(1000, 9))
    g /= np.maximum(1.0, np.linalg.norm(g, axis=1))[:, None]        # clipped to norm 1
    units = grid.to_units(g)
    assert units.dtype == np.int64
    assert np.max(np.abs(grid.to_value(units) - g)) <= grid.step / 2
    assert np.all(np.einsum("ij,ij->i", units, units) <= float(grid.sensitivity_units) ** 2)


def test_grid_noise_is_integer_with_the_stated_spread():
    grid = gradient_grid(1.0, 2.0, 4)
    noise = grid.noise(np.random.default_rng(1), 5000)
    assert noise.shape == (5000, 4) and noise.dtype == np.int64
    assert noise.astype(float).std() == pytest.approx(grid.sigma_units, rel=0.02)
