"""Noise that floating point cannot betray.

* the exact samplers (privopt._exact) against their laws computed here from the
  definitions (chi-square), Bernoulli(exp(-gamma)) against exp(-gamma);
* the grid calibration (privopt.calibration._grid) against values worked out by hand;
* Mironov's attack replayed: on the old double-precision Laplace it finds outputs
  impossible under the neighbour (the replay has power), on every release privopt
  makes now (the risk table, OPSamp's output step, output perturbation) it finds none;
* the audit entry: as shipped no violation, the double-precision variant flagged.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privopt import _random, audit, calibration
from privopt._exact import bernoulli_exp, discrete_gaussian, discrete_laplace, randbelow, sample_many
from privopt._random import SecureGenerator
from privopt.audit import reachable_by_double_laplace, reachable_on_grid
from privopt.audit._float import double_laplace
from privopt.mechanisms import draw_grid_noise, release_on_grid
from tests._law import holds_on_a_fresh_sample


def _chi2_pvalue(draws, pmf, support):
    """Chi-square of the counts on ``support`` (plus one cell for the rest) against
    ``pmf`` evaluated on it."""
    draws = np.asarray(draws, dtype=np.int64)
    observed = np.array([(draws == k).sum() for k in support] + [0.0])
    observed[-1] = len(draws) - observed[:-1].sum()
    p = np.array([pmf(k) for k in support])
    expected = np.append(p, max(1.0 - p.sum(), 0.0)) * len(draws)
    keep = expected > 5
    rest = ~keep
    obs = np.append(observed[keep], observed[rest].sum())
    exp = np.append(expected[keep], expected[rest].sum())
    return stats.chisquare(obs[exp > 0], exp[exp > 0] * obs.sum() / exp.sum()).pvalue


def _laplace_law(t):
    """P(k) proportional to exp(-|k| / t), normalised by its geometric series."""
    q = math.exp(-1.0 / t)
    return lambda k: (1 - q) / (1 + q) * q ** abs(k)


def _gaussian_law(sigma2):
    norm = sum(math.exp(-j * j / (2 * sigma2)) for j in range(-2000, 2001))
    return lambda k: math.exp(-k * k / (2 * sigma2)) / norm


@pytest.mark.parametrize("t", [Fraction(7, 10), Fraction(3, 2), Fraction(10)])
def test_discrete_laplace_has_its_law(t):
    rng = np.random.default_rng(int(t * 10))
    draws = sample_many(discrete_laplace, rng, t, 20_000)
    support = range(-int(8 * t) - 3, int(8 * t) + 4)
    assert _chi2_pvalue(draws, _laplace_law(float(t)), support) > 1e-3
    # the test has power: the law of a scale 15% off is rejected
    assert _chi2_pvalue(draws, _laplace_law(float(t) * 1.15), support) < 1e-3


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(5, 2), Fraction(30)])
def test_discrete_gaussian_has_its_law(sigma2):
    rng = np.random.default_rng(int(sigma2 * 2))
    draws = sample_many(discrete_gaussian, rng, sigma2, 20_000)
    s = math.sqrt(sigma2)
    support = range(-int(6 * s) - 2, int(6 * s) + 3)
    assert _chi2_pvalue(draws, _gaussian_law(float(sigma2)), support) > 1e-3
    assert _chi2_pvalue(draws, _gaussian_law(float(sigma2) * 1.3), support) < 1e-3


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    rng = np.random.default_rng(3)
    hits = sum(bernoulli_exp(rng, gamma) for _ in range(20_000))
    assert stats.binomtest(hits, 20_000, math.exp(-float(gamma))).pvalue > 1e-3


def test_randbelow_is_uniform_beyond_int64_and_secure_without_a_seed(monkeypatch):
    rng = np.random.default_rng(0)
    m = 3 * 2**70 + 1
    draws = [randbelow(rng, m) for _ in range(3000)]
    assert 0 <= min(draws) and max(draws) < m
    # thirds of [0, m) equally likely
    counts = np.bincount([d * 3 // m for d in draws], minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3
    calls = []
    real = _random.os.urandom
    monkeypatch.setattr(_random.os, "urandom", lambda k: calls.append(k) or real(k))
    discrete_laplace(SecureGenerator(), Fraction(3, 2))
    assert calls, "random_state=None must draw from the secure source"
    secure = [SecureGenerator().randbelow(m) for _ in range(3000)]
    assert 0 <= min(secure) and max(secure) < m

    def thirds_pvalue():
        draws = [SecureGenerator().randbelow(m) for _ in range(3000)]
        return stats.chisquare(np.bincount([d * 3 // m for d in draws], minlength=3)).pvalue

    assert holds_on_a_fresh_sample(thirds_pvalue)


def test_grid_laplace_by_hand():
    # Delta_1 = 1, d = 1: gamma = 2^(floor(log2 1) - 20) = 2^-20; t = (2^20 + 1) / 1
    g = calibration.grid_laplace(1.0, 1.0, 1)
    assert (g.exponent, g.parameter, g.epsilon) == (-20, 2**20 + 1, 1.0)
    assert g.scale == 1.0 + 2.0**-20
    # Delta_1 = 0.3, eps = 0.5, d = 3: log2(0.3 / 3) = -3.32 -> gamma = 2^(-4 - 20) = 2^-24;
    # t = (0.3 * 2^24 + 3) / 0.5 in exact rationals (0.3 as the double it is)
    g = calibration.grid_laplace(0.3, 0.5, 3)
    assert g.exponent == -24
    assert g.parameter == (Fraction(0.3) * 2**24 + 3) * 2
    assert g.sensitivity_units / g.parameter == Fraction(1, 2)     # delivered epsilon, exactly
    # at an exact power of two the floor is exact: Delta / d = 2^-3 -> gamma = 2^-23
    assert calibration.grid_step(0.375, 3, "l1") == -23
    assert calibration.grid_step(2.0, 4, "l2") == -20               # sqrt(4) = 2: 2 / 2 = 2^0
    # counts: gamma = 1, t = Delta / eps = 2 / 0.5 = 4
    c = calibration.count_laplace(2.0, 0.5)
    assert (c.exponent, c.parameter, c.epsilon, c.step) == (0, 4, 0.5, 1.0)


def test_zcdp_delta_by_hand_and_grid_gaussian():
    # eq. (4) at rho = 1/2, eps = 1: a fine grid over alpha, computed here
    alpha = np.linspace(1.0001, 20, 400_000)
    log_d = (alpha - 1) * (alpha * 0.5 - 1) - np.log(alpha - 1) + alpha * np.log1p(-1 / alpha)
    assert calibration.zcdp_delta(0.5, 1.0) == pytest.approx(math.exp(log_d.min()), rel=1e-6)
    # at alpha = 2 by hand: e^{1 (1 - 1)} / 1 * (1/2)^2 = 0.25 >= the infimum
    assert calibration.zcdp_delta(0.5, 1.0) <= 0.25
    g = calibration.grid_gaussian(1.0, 1.0, 1e-5, 3)
    assert g.law == "gaussian" and g.exponent == calibration.grid_step(1.0, 3, "l2")
    # Delta_u = Delta / gamma + sqrt(d) (rounded up), rho = Delta_u^2 / (2 sigma^2)
    assert float(g.sensitivity_units) == pytest.approx(2.0**-g.exponent + math.sqrt(3), rel=1e-12)
    assert g.rho == pytest.approx(float(g.sensitivity_units) ** 2 / (2 * float(g.parameter)), rel=1e-12)
    assert 0.999e-5 < g.delta <= 1e-5


def test_release_on_grid_adds_integer_noise_to_the_rounded_value():
    grid = calibration.grid_laplace(0.3, 0.5, 3)
    x = np.array([0.1, -2.75, 1e-9])
    z = np.array([5, -1, 0], dtype=object)
    out = release_on_grid(x, grid, z)
    units = np.rint(np.ldexp(x, -grid.exponent)) + np.array([5, -1, 0])
    np.testing.assert_array_equal(out, np.ldexp(units, grid.exponent))
    assert reachable_on_grid(out, grid.step).all()


# --- Mironov's attack, replayed -------------------------------------------------------

def test_the_replay_finds_the_attack_on_double_precision_laplace():
    """The replay has power: count 0 vs 1 at b = 2, most outputs of x = 0 are impossible
    under x' = 1 (Mironov's attack); each is reachable from its own value."""
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**53, size=2000, dtype=np.int64)
    y = 0.0 + double_laplace(words, 2.0)
    assert reachable_by_double_laplace(y, 0.0, 2.0).all()
    assert reachable_by_double_laplace(y, 1.0, 2.0).mean() < 0.5


def _risk_tables(n, seed):
    from privopt.scoring import PrivateScoringSystem

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 4))
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, n) >= 2).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1 - X2[0], 1 - y2[0]           # one record replaced
    fits = [PrivateScoringSystem(epsilon=2.0, risk_share=0.5, max_points=2, max_items=2, random_state=s)
            .fit(*data) for s, data in ((seed, (X, y)), (seed + 1, (X2, y2)))]
    return fits


def test_risk_table_counts_are_exact_integers_reachable_under_a_neighbour():
    """End to end at n = 40, eps 2, half of it on the table: every released count is an
    integer (the clamp at 0 included), so every value is reachable from the neighbour's
    count (the noise's support is all of Z)."""
    for fit in _risk_tables(40, 5):
        cells = np.array([[r["n"], r["positives"]] for r in fit.risk_table_]).ravel()
        assert reachable_on_grid(cells, 1.0).all()
        assert "noisy counts" in str(fit.scorecard())      # the printed table says what its counts are


def test_risk_table_noise_has_the_discrete_laplace_law():
    """The cells of the table minus the true counts, over many tables of a fixed points
    vector, follow the discrete Laplace law of scale 2 / eps_table."""
    from privopt.scoring import PrivateScoringSystem

    X01 = np.repeat(np.eye(2, dtype=int), 60, axis=0)       # scores 0 and 1, 60 records each
    y01 = np.tile([1, 0], 60)
    clf = PrivateScoringSystem(epsilon=2.0)
    clf.coef_ = np.array([1, 0])
    rng = np.random.default_rng(11)
    noise = []
    for _ in range(600):
        table = clf._risk_table(X01, y01, 2.0, rng)
        for s, row in enumerate(table):
            members = (X01 @ clf.coef_) == s
            noise.append(row["positives"] - y01[members].sum())
    assert _chi2_pvalue(noise, _laplace_law(1.0), range(-12, 13)) > 1e-3
    assert _chi2_pvalue(noise, _laplace_law(1.25), range(-12, 13)) < 1e-3


def test_grid_noise_draw_is_the_calibrated_law():
    grid = calibration.grid_laplace(1.0, 2.0, 1)       # t = (2^20 + 1) / 2 grid units
    draws = draw_grid_noise(np.random.default_rng(2), grid, 20_000).astype(float)
    scale = float(grid.parameter)
    assert stats.kstest(draws / scale, stats.laplace(0, 1).cdf).pvalue > 1e-3
    assert stats.kstest(draws / scale, stats.laplace(0, 1.1).cdf).pvalue < 1e-3


# --- the audit entry -------------------------------------------------------------------

@pytest.mark.parametrize("values, count", [((0.0, 1.0), True), ((5.0, 6.0), True), ((0.3, 0.3 + 1e-9), False)])
def test_noisy_value_audit_as_shipped_and_broken(values, count):
    shipped = audit.NoisyValueTarget(values, epsilon=0.5, count=count)
    result = audit.audit(shipped, n_samples=1500, random_state=1)
    assert not result.violation and result.epsilon_lower_bound == 0.0
    broken = audit.NoisyValueTarget(values, epsilon=0.5, count=count, release="double")
    flagged = audit.audit(broken, n_samples=1500, random_state=1)
    assert flagged.violation and flagged.epsilon_lower_bound > 3.0


# --- the selection noise: no uniform of 0 or 1, no tail cut ----------------------------

_TOP = 2**53 - 1


def test_the_top_word_no_longer_gives_an_infinite_key():
    """The word 2^53 - 1 gave u = (k + 0.5) / 2^53 == 1.0 and a Gumbel key of +inf; its
    bucket now draws on: the key is finite and past the old cut (about 37 units)."""
    from privopt.search._topdown import KeyedStreams, max_of

    assert (_TOP + 0.5) / 2.0**53 == 1.0                       # the old arithmetic
    with np.errstate(divide="ignore"):
        assert np.log(1) - np.log(-np.log(1.0)) == np.inf
    streams = KeyedStreams(np.random.default_rng(0))
    real = streams._words
    streams._words = lambda key, n: np.full(n, _TOP, dtype=np.uint64) if len(key) == 1 else real(key, n)
    draws = streams.draws((5,), 3)
    assert np.all(draws.u < 1.0) and np.all(np.isfinite(draws.log_e))
    for method in ("exponential", "permute_and_flip"):
        keys = max_of(draws, 10, method)
        assert np.all(np.isfinite(keys)) and np.all(keys > 37.0)


@pytest.mark.parametrize("first", [0, _TOP])
def test_end_buckets_draw_on_with_the_exact_conditional_law(first):
    """Given U < 2^-53, -ln U - 53 ln 2 is Exponential(1) (memorylessness); given
    U >= 1 - 2^-53, -ln(-ln U) - 53 ln 2 is Exponential(1) to within 2^-53."""
    from privopt._random import noise_from_words

    rng = np.random.default_rng(first % 7)
    draws = noise_from_words(np.full(4000, first, dtype=np.uint64),
                             lambda i: int(rng.integers(0, 2**53)))
    rest = (draws.e if first == 0 else -draws.log_e) - 53 * math.log(2)
    assert stats.kstest(rest, stats.expon.cdf).pvalue > 1e-3
    assert stats.kstest(rest, stats.expon(scale=1.1).cdf).pvalue < 1e-3


def test_secure_generator_draws_have_their_laws_and_no_end_values(monkeypatch):
    g = SecureGenerator()
    assert holds_on_a_fresh_sample(lambda: stats.kstest(g.standard_exponential(20_000), stats.expon.cdf).pvalue)
    assert holds_on_a_fresh_sample(lambda: stats.kstest(g.standard_gumbel(20_000), stats.gumbel_r.cdf).pvalue)
    monkeypatch.setattr(SecureGenerator, "_u53", lambda self, size: np.full(size, float(_TOP)))
    assert g._open_uniform(4).max() < 1.0
    assert np.all(np.isfinite(g.standard_normal(4)))


def test_secure_selection_noise_has_its_law_and_is_finite():
    from privopt.mechanisms import draw_selection_noise

    g = SecureGenerator()
    gumbel = draw_selection_noise(g, "exponential", 20_000)
    expo = draw_selection_noise(g, "permute_and_flip", 20_000)
    assert np.all(np.isfinite(gumbel)) and expo.min() > 0
    assert holds_on_a_fresh_sample(
        lambda: stats.kstest(draw_selection_noise(g, "exponential", 20_000), stats.gumbel_r.cdf).pvalue)
    assert holds_on_a_fresh_sample(
        lambda: stats.kstest(draw_selection_noise(g, "permute_and_flip", 20_000), stats.expon.cdf).pvalue)
    # a seeded generator keeps its stream: Gumbel = -ln of the same exponentials
    a = draw_selection_noise(np.random.default_rng(4), "exponential", 5)
    np.testing.assert_array_equal(a, -np.log(np.random.default_rng(4).standard_exponential(5)))
