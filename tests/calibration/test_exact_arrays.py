"""The array samplers of privopt._exact against their laws.

Each law is computed here from its definition (the discrete Laplace's geometric
series, the discrete Gaussian's normalising sum), independently of the samplers;
the scalar samplers, checked the same way in test_exact_noise.py, are the
reference of a two-sample test.  Every test also shows its power: a law with a
slightly different parameter is rejected on the same draws.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privopt import _exact
from privopt._random import SecureGenerator
from tests._law import holds_on_a_fresh_sample, pooled_chi_square_pvalue


def _counts(draws, support):
    draws = np.asarray(draws, dtype=np.int64)
    inside = np.array([(draws == k).sum() for k in support], dtype=float)
    return np.append(inside, len(draws) - inside.sum())


def _probs(pmf, support):
    p = np.array([pmf(k) for k in support])
    return np.append(p, max(1.0 - p.sum(), 0.0))


def _laplace_pmf(t):
    q = math.exp(-1.0 / t)
    return lambda k: (1 - q) / (1 + q) * q ** abs(k)


def _gaussian_pmf(sigma2):
    s = math.sqrt(sigma2)
    span = int(40 * s) + 10
    norm = math.fsum(math.exp(-j * j / (2 * sigma2)) for j in range(-span, span + 1))
    return lambda k: math.exp(-k * k / (2 * sigma2)) / norm


def _gaussian_tail(sigma2, k):
    """P(|X| >= k) of the discrete Gaussian, from its definition."""
    pmf = _gaussian_pmf(sigma2)
    return 1.0 - math.fsum(pmf(j) for j in range(-k + 1, k))


@pytest.mark.parametrize("t", [Fraction(7, 10), Fraction(3, 2), Fraction(10), Fraction(41, 3)])
def test_discrete_laplace_array_has_its_law(t):
    draws = _exact.discrete_laplace_array(np.random.default_rng(11), t, 100_000)
    assert draws.dtype == np.int64
    support = range(-int(8 * t) - 3, int(8 * t) + 4)
    counts = _counts(draws, support)
    assert pooled_chi_square_pvalue(counts, _probs(_laplace_pmf(float(t)), support)) > 1e-4
    assert pooled_chi_square_pvalue(counts, _probs(_laplace_pmf(float(t) * 1.05), support)) < 1e-4


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(5, 2), Fraction(30), Fraction(1000, 7),
                                    Fraction(9), Fraction(400)])   # the last two: the square path, t = s
def test_discrete_gaussian_array_has_its_law(sigma2):
    draws = _exact.discrete_gaussian_array(np.random.default_rng(12), sigma2, 100_000)
    assert draws.dtype == np.int64
    s = math.sqrt(sigma2)
    support = range(-int(6 * s) - 2, int(6 * s) + 3)
    counts = _counts(draws, support)
    assert pooled_chi_square_pvalue(counts, _probs(_gaussian_pmf(float(sigma2)), support)) > 1e-4
    assert pooled_chi_square_pvalue(counts, _probs(_gaussian_pmf(float(sigma2) * 1.06), support)) < 1e-4


def test_a_large_discrete_gaussian_has_its_exact_tails_from_the_secure_generator():
    """sigma^2 = 3000^2 (the size DP-SGD's grid uses), a million draws from
    os.urandom: P(|X| >= k sigma) for k = 1, 2, 3 within 4.5 binomial standard
    errors of the exact law, and the variance within 1%."""
    sigma2 = Fraction(3000**2)
    draws = _exact.discrete_gaussian_array(SecureGenerator(), sigma2, 1_000_000)
    n = draws.size
    for k in (1, 2, 3):
        p = _gaussian_tail(float(sigma2), 3000 * k)
        hits = int(np.sum(np.abs(draws) >= 3000 * k))
        assert abs(hits - n * p) < 4.5 * math.sqrt(n * p * (1 - p)), (k, hits, n * p)
    assert abs(draws.astype(float).var() / float(sigma2) - 1.0) < 0.01


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_the_array_and_the_scalar_samplers_agree(law):
    """Two-sample chi-square: 20,000 draws of the scalar sampler (the reference)
    against 20,000 of the array sampler, on one parameter."""
    rng = np.random.default_rng(5)
    if law == "laplace":
        param, scalar, array = Fraction(5, 2), _exact.discrete_laplace, _exact.discrete_laplace_array
    else:
        param, scalar, array = Fraction(17, 2), _exact.discrete_gaussian, _exact.discrete_gaussian_array
    a = np.asarray(_exact.sample_many(scalar, rng, param, 20_000), dtype=np.int64)
    b = array(rng, param, 20_000)
    support = range(-12, 13)
    table = np.vstack([_counts(a, support), _counts(b, support)])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table).pvalue > 1e-4


@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 1)])
def test_bernoulli_exp_array_has_probability_exp_minus_gamma(num, den):
    n = 200_000
    hits = int(_exact.bernoulli_exp_array(np.random.default_rng(6), np.full(n, num), np.full(n, den)).sum())
    assert stats.binomtest(hits, n, math.exp(-num / den)).pvalue > 1e-4


def test_randbelow_array_is_uniform_for_a_modulus_that_does_not_divide_the_words():
    m = 3 * 2**59                      # 2^62 mod m = 2^61: naive w mod m would favour the low third
    draws = _exact.randbelow_array(np.random.default_rng(7), np.full(300_000, m))
    thirds = np.bincount(draws // 2**59, minlength=3)
    assert stats.chisquare(thirds).pvalue > 1e-4


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="scale > 0"):
        _exact.discrete_laplace_array(np.random.default_rng(0), 0, 3)
    with pytest.raises(ValueError, match="sigma2 > 0"):
        _exact.discrete_gaussian_array(np.random.default_rng(0), -1, 3)
    with pytest.raises(ValueError, match="2\\^61"):
        _exact.randbelow_array(np.random.default_rng(0), np.array([0]))


@pytest.mark.parametrize("sigma2", [Fraction(5, 2), Fraction(49)])
def test_small_draws_of_the_gaussian_array_sampler_have_the_law(sigma2):
    """Below 4096 draws the array sampler runs on Python integers: 1,250 calls of 16."""
    rng = np.random.default_rng(21)
    draws = np.concatenate([_exact.discrete_gaussian_array(rng, sigma2, 16) for _ in range(1250)])
    s = math.sqrt(sigma2)
    support = range(-int(6 * s) - 2, int(6 * s) + 3)
    counts = _counts(draws, support)
    assert pooled_chi_square_pvalue(counts, _probs(_gaussian_pmf(float(sigma2)), support)) > 1e-4
    assert pooled_chi_square_pvalue(counts, _probs(_gaussian_pmf(float(sigma2) * 1.15), support)) < 1e-4


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_grid_noise_from_the_secure_generator_is_the_calibrated_law(law):
    """draw_grid_noise with random_state=None runs the array samplers: the grid's law
    (KS against the continuous law the large-scale discrete one approaches), Python
    integers out as before."""
    from privopt import calibration
    from privopt.mechanisms import draw_grid_noise

    grid = (calibration.grid_laplace(1.0, 2.0, 1) if law == "laplace"
            else calibration.grid_gaussian(1.0, 1.0, 1e-5, 1))
    draws = draw_grid_noise(SecureGenerator(), grid, 20_000)
    assert draws.dtype == object and isinstance(draws[0], int)
    scale = float(grid.parameter) if law == "laplace" else math.sqrt(float(grid.parameter))
    family = stats.laplace if law == "laplace" else stats.norm

    def pvalue(spread, x=None):
        x = draw_grid_noise(SecureGenerator(), grid, 20_000).astype(float) if x is None else x
        return stats.kstest(x / scale, family(0, spread).cdf).pvalue

    assert holds_on_a_fresh_sample(lambda: pvalue(1.0), alpha=1e-4)
    assert pvalue(1.1, draws.astype(float)) < 1e-4
