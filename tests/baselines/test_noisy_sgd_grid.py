"""Noisy SGD on the grid (accounting="poisson_grid", the default): the noise
multiplier against the Gaussian mechanism worked out by hand at t = 1, the
accounting shared with DP-SGD on the grid, and the estimator's algorithm (Poisson
batches at q = 1/t, gradients rounded to the grid, exact integer sums) against a
hand loop with the noise set to zero."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special

from privopt.baselines import NoisySGDClassifier, gradient_grid, noisy_sgd
from privopt.baselines import _accounting as acc
from privopt.baselines._gradient_grid import GradientGrid


def gaussian_delta(sigma, eps, sens=1.0):
    """[BW18] Theorem 8, written out: Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return special.ndtr(a - b) - math.exp(eps) * special.ndtr(-a - b)


def data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_one_step_is_the_add_remove_gaussian_at_half_epsilon(eps):
    # t = 1, q = 1: every record is in the step; replace-one by group privacy over add/remove:
    # z is the Gaussian's (sensitivity 1) at eps/2 and delta / (1 + e^{eps/2})
    delta = 1e-4
    delta_ar = delta / (1.0 + math.exp(eps / 2))
    z = acc.noisy_sgd_grid_noise_multiplier(eps, delta, 1)
    assert gaussian_delta(z, eps / 2) <= delta_ar * (1 + 1e-9)
    assert gaussian_delta(z * 0.999, eps / 2) > delta_ar           # and not much more noise


def test_the_accounting_is_dpsgd_on_the_grid_at_one_pass():
    t = 25
    z = acc.noisy_sgd_grid_noise_multiplier(1.0, 1e-4, t)
    assert z == acc.dpsgd_grid_noise_multiplier(1.0, 1e-4, 1 / t, t, "poisson", None, "replace_one")
    assert acc.noisy_sgd_grid_epsilon(z, t, 1.0, 1e-4) <= 1.0
    assert acc.noisy_sgd_grid_epsilon(z * 0.99, t, 1.0, 1e-4) > 1.0


def test_the_default_fit_reports_its_accounting():
    X, y = data(97)
    est = NoisySGDClassifier(epsilon=1.0, delta=1e-4, bounds=(0, 1), batch_size=4, random_state=3).fit(X, y)
    t = math.ceil(97 / 4)
    assert est.accounting_ == "poisson_grid" and est.n_steps_ == t
    assert est.noise_multiplier_ == acc.noisy_sgd_grid_noise_multiplier(1.0, 1e-4, t)
    assert est.noise_std_ == est.noise_multiplier_ and est.epsilon_spent_ <= 1.0
    assert est.sampling_fraction_ == 1 / t and est.batch_size_ == 97 / t
    assert est.learning_rate_ == pytest.approx(
        acc.noisy_sgd_allocation_step_size(10.0, 1.0, est.noise_std_, X.shape[1] + 1, 97, t))
    assert est.grid_step_ * est.noise_sigma_units_ >= est.noise_multiplier_   # s step >= z L


def test_noiseless_run_matches_a_hand_loop(monkeypatch):
    monkeypatch.setattr(GradientGrid, "noise", lambda self, rng, rows: np.zeros((rows, self.dim), dtype=np.int64))
    X, y = data(40, d=2)
    est = NoisySGDClassifier(epsilon=1.0, delta=1e-4, bounds=(0, 1), batch_size=4, learning_rate=0.3,
                             random_state=1).fit(X, y)
    t = 10
    rng = np.random.default_rng(1)
    Z = est._feature_map.transform(X)
    yz = Z * np.where(y == est.classes_[1], 1.0, -1.0)[:, None]
    w, acc_w, used = np.zeros(3), np.zeros(3), 0
    for _ in range(t):
        acc_w += w
        batch = np.flatnonzero(rng.random(40) < 1 / t)
        used += batch.size
        g = sum((-yz[i] for i in batch if yz[i] @ w < 1.0), np.zeros(3))
        w = w - 0.3 * g
        if np.linalg.norm(w) > 10.0:
            w *= 10.0 / np.linalg.norm(w)
    assert est.n_gradient_steps_ == used
    # each gradient rounded to the grid moves by at most step sqrt(d) / 2
    np.testing.assert_allclose(est.weights_, acc_w / t, atol=40 * 0.3 * est.grid_step_ * 3)


def test_batch_units_are_the_rounded_hinge_subgradients():
    g = gradient_grid(1.0, 2.0, 2)
    rows = np.array([[0.6, 0.8], [0.3, -0.4], [-1.0, 0.0]])
    w = np.array([1.0, 1.0])                                   # margins 1.4, -0.1, -1: two active
    units = noisy_sgd.noisy_sgd_batch_units(g, rows, w, "hinge")
    expected = np.rint(-np.array([0.3, -0.4]) / g.step) + np.rint(-np.array([-1.0, 0.0]) / g.step)
    np.testing.assert_array_equal(units, expected.astype(np.int64))
    assert noisy_sgd.noisy_sgd_batch_units(g, rows[:0], w, "hinge").tolist() == [0, 0]


def test_learns_at_epsilon_one():
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.uniform(0, 1, size=(n, 5))
    y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = NoisySGDClassifier(epsilon=1.0, delta=1 / n**2, bounds=(0, 1), batch_size=4,
                                 random_state=0).fit(X[:1400], y[:1400])
    assert est.accounting_ == "poisson_grid" and est.score(X[1400:], y[1400:]) > 0.8


def test_a_large_epsilon_is_calibrated_at_a_smaller_target_the_accountant_resolves():
    # epsilon = 200, delta = 1e-5: delta / (1 + e^100) = 4e-49 is below what the PLD accountant
    # resolves, so the calibration at 200 over-noises; the targets start at GRID_MAX_TARGET = 64
    # and are halved while the z found spends less than half its target: 64, then 32, kept
    t = 1093
    direct = acc.dpsgd_grid_noise_multiplier(200.0, 1e-5, 1 / t, t, "poisson", None, "replace_one")
    assert acc.noisy_sgd_grid_epsilon(direct, t, 200.0, 1e-5) < 1.0          # the degenerate answer
    cal = acc.noisy_sgd_grid_calibration(200.0, 1e-5, t)
    assert cal.epsilon_target == 32.0 and cal.noise_multiplier < direct / 100
    assert cal.noise_multiplier == acc.dpsgd_grid_noise_multiplier(32.0, 1e-5, 1 / t, t, "poisson", None,
                                                                   "replace_one")
    assert acc.noisy_sgd_grid_epsilon(cal.noise_multiplier, t, 32.0, 1e-5) <= 32.0
    # at an ordinary epsilon nothing changes
    assert acc.noisy_sgd_grid_calibration(1.0, 1e-4, 25) == acc.GridCalibration(
        acc.dpsgd_grid_noise_multiplier(1.0, 1e-4, 1 / 25, 25, "poisson", None, "replace_one"), 1.0)
