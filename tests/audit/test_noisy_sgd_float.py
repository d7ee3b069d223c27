"""Mironov's floating-point attack replayed on noisy SGD's iterate after one step.

The estimator itself (accounting="poisson_grid", the default; two steps, so that
its output, the average of w_1 = 0 and w_2, is w_2 / 2, exactly; random_state=None:
the secure generator) is fitted 300 times on a data set; every released w_2 is
checked, exactly, for being a possible release on the neighbour with one label
flipped.  On the grid none is impossible; the continuous Gaussian in doubles of
the accountings "allocation" and "amu_subsampling", the audit's broken variant,
makes most of them impossible, and the audit flags it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from privopt import audit
from privopt.audit._dpsgd import DPSGDStepPair
from privopt.baselines import NoisySGDClassifier

TWO_STEPS = dict(epsilon=1.0, delta=1e-5, batch_size=6, learning_rate=0.5, radius=1e6, bounds=(-1.0, 1.0))


def _data():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 1.0, size=(12, 2))
    y = (rng.random(12) < 0.5).astype(int)
    y[:2] = (0, 1)
    y_prime = y.copy()
    y_prime[0] = 1 - y_prime[0]
    return X, y, y_prime


def test_the_estimators_releases_are_all_possible_under_the_neighbour():
    X, y, y_prime = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [NoisySGDClassifier(**TWO_STEPS).fit(X, y) for _ in range(300)]
    est = fits[0]
    assert est.n_steps_ == 2 and est.accounting_ == "poisson_grid"
    Z = est._feature_map.transform(X)
    sign = np.where(y == 1, 1.0, -1.0)[:, None]
    sign_prime = np.where(y_prime == 1, 1.0, -1.0)[:, None]
    target = audit.NoisySGDStepTarget(DPSGDStepPair((Z * sign, Z * sign_prime)), epsilon=1.0, delta=1e-5,
                                      learning_rate=0.5, steps=2)
    assert target.noise_multiplier == est.noise_multiplier_ and target.grid.step == est.grid_step_
    w2 = 2.0 * np.array([f.weights_ for f in fits])           # w_2, exactly (w_1 = 0)
    assert len({tuple(v) for v in w2}) > 250                   # the releases vary
    assert np.all(target._possible(w2, 0)) and np.all(target._possible(w2, 1))


def test_the_replay_has_power_on_continuous_noise():
    """The same step with N(0, (z L)^2) in doubles: most outputs on D are impossible on D'."""
    target = audit.NoisySGDStepTarget(epsilon=1.0, delta=1e-5, release="double")
    out = target.outputs_from_noise(0, target.draw_noise(np.random.default_rng(0), 300))
    assert np.all(out[:, 0] == 1.0)                            # each is possible where it was made
    assert np.mean(out[:, 1] == 0.0) > 0.8


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_noisy_sgd_step_audit_as_shipped_and_broken(epsilon):
    shipped = audit.NoisySGDStepTarget(epsilon=epsilon, delta=1e-5)
    result = audit.audit(shipped, n_samples=1500, random_state=1)
    assert not result.violation and result.epsilon_lower_bound == 0.0
    broken = audit.NoisySGDStepTarget(epsilon=epsilon, delta=1e-5, release="double")
    flagged = audit.audit(broken, n_samples=1500, random_state=1)
    assert flagged.violation and flagged.epsilon_lower_bound > 3.0
