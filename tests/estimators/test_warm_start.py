"""The warm start's W: its public rule and budget split (values worked out by
hand), the estimator's wiring and account, and the law of the release given the
warm start's v against the exact base-measure softmax computed independently."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import privopt
import privopt.baselines
from privopt.calibration import split_warm_start_epsilon
from privopt.exceptions import ParameterError
from privopt.estimators import (WARM_START_FRACTION, WARM_START_SELECTION_BUDGET, Resolution, ladder_prior,
                                warm_start_applies, warm_start_prior, warm_start_resolution, warm_start_share)
from privopt.space import count_grid_points

from tests._law import pooled_chi_square_pvalue, shipped_and_broken


def test_split_of_epsilon_by_hand():
    assert split_warm_start_epsilon(2.0) == (1.0, 1.0)
    a, b = split_warm_start_epsilon(0.3, 0.25)
    assert a == pytest.approx(0.075) and b == pytest.approx(0.225)
    for share in (0.0, 1.0, 1.5):
        with pytest.raises(ParameterError, match="share"):
            split_warm_start_epsilon(1.0, share)


def test_split_parts_sum_to_epsilon_exactly():
    # 0.9 * 0.7 + 0.9 * (1 - 0.7) rounds to 0.9 + 1.1e-16; the split's parts sum to epsilon exactly
    assert 0.9 * 0.7 + 0.9 * (1.0 - 0.7) > 0.9 and 1.7 * 0.85 + 1.7 * (1.0 - 0.85) < 1.7
    for epsilon in (2.0, 0.3, 1.7, 3.3, 0.9):
        for share in (0.5, 0.55, 0.7, 0.6985, 0.8, 0.25, 0.3):
            a, b = split_warm_start_epsilon(epsilon, share)
            assert a + b == epsilon
            assert a == pytest.approx(share * epsilon) and b == pytest.approx((1 - share) * epsilon)


def test_share_by_hand():
    # s = max(1/2, 1 - 2000 / (epsilon n)): half each up to epsilon n = 4000, then the selection keeps 2000 / n
    assert WARM_START_SELECTION_BUDGET == 2000.0
    assert warm_start_share(2.0, 2000) == 0.5                  # epsilon n = 4000: the boundary
    assert warm_start_share(0.5, 1000) == 0.5                  # epsilon n = 500
    assert warm_start_share(2.0, 4000) == 0.75                 # 1 - 2000 / 8000
    assert warm_start_share(1.0, 10_000) == pytest.approx(0.8)   # 1 - 2000 / 10000
    assert warm_start_share(2.0, 3317) == pytest.approx(0.698523, abs=1e-6)   # 1 - 2000 / 6634
    assert warm_start_share(2.0, 4000, budget=1000.0) == 0.875
    eps_warm, eps_select = split_warm_start_epsilon(2.0, warm_start_share(2.0, 4000))
    assert (eps_warm, eps_select) == (1.5, 0.5) and eps_select * 4000 == 2000.0


def test_rule_by_hand():
    # (2 / eps_select)(ln max|W| + ln 20) / n <= 0.025: ln 306049 = 12.6314, ln 20 = 2.9957
    assert WARM_START_FRACTION == 0.025
    assert warm_start_applies([953, 306_049], 1.0, 11_000)        # 2 * 15.6271 / 11000 = 0.00284
    assert not warm_start_applies([953, 306_049], 1.0, 398)       # 31.254 / 398 = 0.0785 > 0.025
    assert not warm_start_applies([953, 306_049], 1.0, 1000)      # 31.254 / 1000 = 0.0313 > 0.025
    # the boundary: n = 2 * (ln 1000 + ln 20) / 0.025 = 80 * 9.9035 = 792.28
    assert warm_start_applies([1000], 1.0, 793) and not warm_start_applies([1000], 1.0, 792)
    # with the fraction 0.05 of the law before revision 2026-11-29.2: 40 * 9.9035 = 396.14
    assert warm_start_applies([1000], 1.0, 397, fraction=0.05) and not warm_start_applies([1000], 1.0, 396,
                                                                                          fraction=0.05)
    # only the largest W counts
    assert warm_start_applies([10**6, 10], 1.0, 700) == warm_start_applies([10**6], 1.0, 700)


def test_warm_start_prior_by_hand():
    # ladder prior (0.6, 0.4) on sizes (10, 1000): per-point masses 0.06 and 0.0004; the warm start's
    # 100 points get 0.0004 each, 0.04 in all; renormalized by 1.04
    p = warm_start_prior([0.6, 0.4], [10, 1000], 100)
    np.testing.assert_allclose(p, np.array([0.6, 0.4, 0.04]) / 1.04)
    # a weight that underflowed to 0 does not count in the minimum
    np.testing.assert_allclose(warm_start_prior([1.0, 0.0], [10, 1000], 100), np.array([1.0, 0.0, 10.0]) / 11.0)
    # the per-point masses of the finest W and of the warm start's W are equal
    q = warm_start_prior(ladder_prior([953, 306_049], 1.0, 5000), [953, 306_049], 4225)
    assert q[2] / 4225 == pytest.approx(min(q[0] / 953, q[1] / 306_049))


def test_warm_start_resolution():
    res = warm_start_resolution()
    assert (res.levels, res.grid, res.centered, res.warm_start, res.wide_intercept) == (33, 33, True, True, False)
    assert res.norm_bound ** 2 == pytest.approx(2 * 33 ** 2)
    # the ball holds the whole grid: (2 * 33 + 1)^2 points
    assert count_grid_points([[k * k for k in range(-33, 34)]] * 2, 2 * 33 ** 2) == 67 ** 2


class _Scores:
    """A stand-in for the warm start's release: ``decision_function`` returns X's first column."""

    def __init__(self, v):
        self.weights_ = np.asarray(v, dtype=float)

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, 0]


@pytest.mark.parametrize("levels", [33, 7])
def test_the_warm_start_feature_cuts_at_v_s_own_boundary(levels):
    """Scores just below and just above 0 fall in different steps, so the point (1, 0) of W
    predicts as v does; with an even number of steps (32, before) both fall in the step 0."""
    from privopt.estimators import WarmStartFeature
    from privopt.models import FeatureDiscretizer

    raw = FeatureDiscretizer(bounds=(-50.0, 50.0), levels=1).fit(np.zeros((1, 1)))
    feature = WarmStartFeature(_Scores([3.0, 4.0]), levels, raw)        # F = 5 / sqrt(2)
    s = np.array([-3.0, -0.4, -1e-9, 1e-9, 0.4, 3.0, 40.0])
    z = feature.transform(s.reshape(-1, 1))[:, 0]
    assert set(z) <= set(range(-levels, levels + 1, 2))
    np.testing.assert_array_equal(z >= 0, s > 0)                     # v's own rule, from W's point (1, 0)
    even = WarmStartFeature(_Scores([3.0, 4.0]), levels + 1, raw).transform(s.reshape(-1, 1))[:, 0]
    assert even[2] == even[3] == 0                                   # what the even count could not split


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, 3))
    score = 3.0 * X[:, 0] - 2.0 * X[:, 1] + 0.7 * X[:, 2] - 0.6
    y = (score + rng.normal(0.0, 0.4, size=n) > 0).astype(int)
    return X, y


def test_parameter_checked_before_the_data():
    X, y = _data(50)
    with pytest.raises(ParameterError, match="warm_start"):
        privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), warm_start="yes").fit(X, y)
    with pytest.raises(ParameterError, match="warm_start"):
        privopt.PrivateHalfspaceClassifier(epsilon=1.0, warm_start=True).fit(np.round(X * 4), y)


def test_off_and_below_the_rule_no_warm_start():
    X, y = _data(200)
    off = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), random_state=0, warm_start=False).fit(X, y)
    assert off.warm_start_ is None and off.epsilon_warm_start_ == 0.0
    assert not any(r.warm_start for r in off.resolutions_)
    # epsilon * n small: the rule keeps the budget for the ladder; the release is the one without warm start
    low = privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), random_state=3).fit(X, y)
    ref = privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), random_state=3, warm_start=False).fit(X, y)
    assert low.warm_start_ is None
    np.testing.assert_array_equal(low.result_.weights, ref.result_.weights)


def test_share_grows_with_epsilon_n():
    # epsilon n = 2 * 3000 = 6000 > 4000: the selection keeps 2000 / 3000 of epsilon, the warm start the rest
    X, y = _data(3000)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), random_state=1).fit(X, y)
    assert clf.warm_start_ is not None
    assert clf.epsilon_warm_start_ == 2.0 * (1.0 - 2000.0 / 6000.0) == pytest.approx(4.0 / 3.0)
    assert clf.result_.parameters["epsilon_selection"] == 2.0 - clf.epsilon_warm_start_
    assert clf.result_.parameters["epsilon_selection"] * 3000 == pytest.approx(2000.0)
    assert clf.warm_start_.epsilon_spent_ == clf.epsilon_warm_start_ and clf.result_.epsilon == 2.0


def test_warm_start_account_and_release():
    X, y = _data(600)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), random_state=1, warm_start=True).fit(X, y)
    assert clf.epsilon_warm_start_ == pytest.approx(1.0)
    assert clf.result_.epsilon == pytest.approx(2.0)
    assert clf.result_.parameters["epsilon_selection"] == pytest.approx(1.0)
    assert clf.result_.parameters["epsilon_warm_start"] == pytest.approx(1.0)
    assert clf.warm_start_.epsilon_spent_ == pytest.approx(1.0)
    assert clf.resolutions_[-1] == warm_start_resolution()
    assert "warm start" in clf.mechanism_reason_
    # the predictions follow the released W's own feature map, also after pickling
    pred = clf.predict(X)
    assert set(np.unique(pred)) <= {0, 1}
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), pred)
    if clf.resolution_.warm_start:
        assert clf.coef_.shape == (1, 1)


class _FixedWarmStart:
    """A stand-in for the warm start's release with a fixed v (the law of the
    selection is a law given v): score f(x) = <a, x> + c, and weights_ of the
    given norm (F = ||weights_|| / sqrt(dim))."""

    a = np.array([2.0])
    c = -1.2
    weights_ = np.array([1.5, -0.9])
    epsilon_spent_ = 0.0

    def __init__(self, epsilon, bounds, random_state):
        self.epsilon = epsilon

    def fit(self, X, y):
        self.epsilon_spent_ = self.epsilon
        return self

    def decision_function(self, X):
        return np.asarray(X, dtype=float) @ self.a + self.c


def _exact_law(X, y, eps_select, n, occam=False):
    """The exponential mechanism's law over the caller's rung (levels 2, grid 1, D = 1) and
    the warm start's W, with mu(r, w) = pi_r / |W_r|, computed here from the definitions
    (numpy only).  One W on the ladder: its prior is 1, and the warm start's points get its
    per-point mass, 1 / 5, so every point of both W's has the same base measure.  ``occam``:
    the slipped law with the Occam prior's weights over both W's instead."""
    ypm = np.where(y == 1, 1, -1)
    # rung 0: z = round(2 x) in {0, 1, 2}, w in {-1, 0, 1}^2 with ||w|| <= 1, +1 iff w . (z, 1) >= -1/2
    z0 = np.rint(np.clip(X[:, 0], 0, 1) * 2.0)
    pts0 = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if a * a + b * b <= 1]
    # rung 1: the score clipped to F = ||v|| / sqrt(2), cut into 33 centred steps
    F = np.linalg.norm(_FixedWarmStart.weights_) / math.sqrt(2.0)
    s = np.clip(X[:, 0] * 2.0 - 1.2, -F, F)
    z1 = 2.0 * np.rint((s + F) / (2 * F) * 33) - 33
    pts1 = [(a, b) for a in range(-33, 34) for b in range(-33, 34)]
    keys, logw, losses = [], [], []
    prior = ladder_prior([len(pts0), len(pts1)], eps_select, n, "occam") if occam else None
    for r, (z, pts) in enumerate(((z0, pts0), (z1, pts1))):
        for a, b in pts:
            pred = np.where(a * z + b >= -0.5, 1, -1)
            loss = float(np.sum(pred != ypm))
            keys.append((r, a, b))
            losses.append(loss)
            logw.append(-eps_select * loss / 2.0 + (math.log(prior[r] / len(pts)) if occam else 0.0))
    logw = np.array(logw)
    p = np.exp(logw - logw.max())
    return keys, p / p.sum(), losses


@pytest.mark.slow
def test_law_given_v_is_the_base_measure_softmax(monkeypatch):
    monkeypatch.setattr(privopt.baselines, "ObjectivePerturbationLogisticRegression", _FixedWarmStart)
    rng = np.random.default_rng(11)
    n = 40
    X = rng.uniform(0, 1, size=(n, 1))
    y = (X[:, 0] + rng.normal(0, 0.2, size=n) > 0.55).astype(int)
    eps = 1.0
    keys, probs, losses = _exact_law(X, y, eps / 2, n)
    # cells: (W, training errors) -- every point of a cell has the same probability, and 4,494
    # points are too many cells for 1,500 draws
    cells = sorted(set(zip((k[0] for k in keys), losses)))
    cell_of = {k: cells.index((k[0], lo)) for k, lo in zip(keys, losses)}
    p_cell = np.zeros(len(cells))
    for k, p in zip(keys, probs):
        p_cell[cell_of[k]] += p
    counts = np.zeros(len(cells))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(1500):
            clf = privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=(0, 1), random_state=seed, warm_start=True,
                                                     mechanism="exponential", resolutions=[(2, 1, 1.0)]).fit(X, y)
            r = 1 if clf.resolution_.warm_start else 0
            assert clf.resolution_ == (warm_start_resolution() if r else Resolution(2, 1, 1.0))
            a, b = (int(v) for v in clf.result_.weights)
            counts[cell_of[(r, a, b)]] += 1
    assert pooled_chi_square_pvalue(counts, p_cell) > 1e-3
    # the test has power: two slipped laws are rejected, the selection at the full epsilon (the
    # warm start's share not taken from it) and the Occam prior's weights over both W's
    for wrong in (_exact_law(X, y, eps, n)[1], _exact_law(X, y, eps / 2, n, occam=True)[1]):
        q = np.zeros(len(cells))
        for k, p in zip(keys, wrong):
            q[cell_of[k]] += p
        assert pooled_chi_square_pvalue(counts, q) < 1e-3


@pytest.mark.slow
def test_audit_passes_as_shipped_and_flags_the_warm_start_without_noise():
    from privopt import audit

    pair = audit.warm_start_instance()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shipped, broken = shipped_and_broken(audit.WarmStartTarget, pair, epsilon=1.0,
                                             broken={"noiseless_warm_start": True}, n_samples=800)
        real = [audit.WarmStartTarget(pair, epsilon=1.0).run_mechanism(k, np.random.default_rng(k)) for k in (0, 1)]
    assert not shipped.violation
    assert broken.violation and broken.epsilon_lower_bound > 2.0
    # the estimator itself gives outputs of the same form: (bucket, W released, labels at x = 0 and 1)
    for out in real:
        assert out.shape == (4,) and out[1] in (0.0, 1.0) and set(out[2:]) <= {-1.0, 1.0}
