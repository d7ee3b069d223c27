"""Fast smoke tests of the pieces of benchmarks/bench_scoring.py (not of its results)."""

import os

import numpy as np
import pytest
from tests._bench import load_benchmark

HERE = os.path.dirname(os.path.abspath(__file__))
bench = load_benchmark("bench_scoring")


def _toy(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d))
    y = ((X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.7, n)) > 0.5).astype(int)
    return X, y


def test_held_out_is_a_third_and_run_last():
    assert len(bench.HELD_OUT) * 3 >= len(bench.DATASETS)
    assert bench.DATASETS[-len(bench.HELD_OUT):] == bench.HELD_OUT
    assert set(bench.SPACES) == set(bench.DATASETS)


def test_round_into_w():
    coef, thr = bench.round_into_w([0.1, -2.0, 1.0, 0.05], b=-1.0, P=4, k=2)
    assert coef.tolist() == [0, -4, 2, 0]
    assert thr == 2                         # ceil(-(4/2) * -1.0)
    assert bench.round_into_w(np.zeros(3), b=0.5, P=3, k=2)[1] == 0
    assert bench.round_into_w(np.zeros(3), b=-0.5, P=3, k=2)[1] == 1


def test_errors_all_thresholds_match_brute_force():
    X, y = _toy()
    c = np.array([2, 1, -3, 0, 0, 1])
    lo, hi = -12, 13
    ts, err = bench._errors_all_thresholds(X @ c, y, lo, hi)
    brute = [np.sum(((X @ c) >= t).astype(int) != y) for t in ts]
    assert err.tolist() == brute


def test_candidate_roundings_stay_in_w():
    w = np.array([0.3, -1.2, 0.0, 2.5, 0.01])
    for c in bench.candidate_roundings(w, P=3, k=2):
        assert np.count_nonzero(c) <= 2 and np.abs(c).max() <= 3


def test_two_stage_select_is_in_w_and_near_best_at_large_epsilon():
    X, y = _toy()
    coef, thr, m = bench.two_stage_select(X, y, np.array([1.0, 1.0, -1.0, 0, 0, 0]), 3, 3, 700.0,
                                          np.random.default_rng(0))
    assert np.count_nonzero(coef) <= 3 and abs(thr) <= 10 and m > 10
    assert bench.accuracy_w(X, y, coef, thr) > 0.75


def test_private_lr_maps_back_to_01_features():
    X, y = _toy()
    from privopt.baselines import ObjectivePerturbationLogisticRegression

    est = ObjectivePerturbationLogisticRegression(epsilon=5.0, bounds=(0.0, 1.0), random_state=0).fit(
        X.astype(float), y)
    w, b = bench._lr_to_01(est)
    assert np.array_equal(est.predict(X.astype(float)), (X @ w + b >= 0).astype(int))


def test_fasterrisk_runs_and_its_threshold_matches_its_predict():
    X, y = _toy()
    pytest.importorskip("fasterrisk")
    coef, thr = bench.fasterrisk_w(X, y, 3, 3)
    assert np.count_nonzero(coef) <= 3 and np.abs(coef).max() <= 3
    opt = bench._fasterrisk()(X=X.astype(float), y=np.where(y == 1, 1, -1), k=3, lb=-3, ub=3)
    opt.optimize()
    _, b0, betas = opt.get_models()
    pred = (b0[0] + X @ betas[0]) > 0
    assert np.array_equal(pred.astype(int), bench.predict_w(X, coef, thr))


def test_loaders_give_binary_features():
    for name in ("pima", "titanic"):
        X, y = bench.load(name)
        assert set(np.unique(X.to_numpy())) <= {0, 1} and set(np.unique(y)) == {0, 1}
