"""Private scoring systems: the set W, exact scoring, the exact top-down
sampler (distribution against an independent computation), sharding,
the estimator and its score card."""

from __future__ import annotations

import itertools
import math
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from scipy import integrate, stats

from privopt._random import NoiseDraws, SecureGenerator
from privopt.calibration import exponential_mechanism_probabilities, permute_and_flip_probabilities
from privopt.calibration._scoring import RISK_TABLE_SENSITIVITY, risk_table_noise_scale, split_risk_epsilon
from privopt.exceptions import NonBinaryItemWarning, ParameterError, PrivacyLeakWarning
from privopt.search._topdown import KeyedStreams, max_of, split_region, truncated_max_of
from privopt.scoring import best_scoring_system, select_scoring_system
from privopt.scoring._engine import group_errors, support_lower_bounds
from privopt.scoring._space import RecordTable, ScoreSpace


# -- independent references ---------------------------------------------------
def brute_force_W(d, P, k, signs=None):
    """Every (points, threshold) of W, listed from the definition."""
    out = [(np.zeros(d, int), 0), (np.zeros(d, int), 1)]
    for j in range(1, k + 1):
        for S in itertools.combinations(range(d), j):
            vals = []
            for f in S:
                vs = [v for v in range(-P, P + 1) if v != 0]
                if signs is not None and signs[f] != 0:
                    vs = [v for v in vs if np.sign(v) == signs[f]]
                vals.append(vs)
            for p in itertools.product(*vals):
                c = np.zeros(d, int)
                c[list(S)] = p
                lo, hi = sum(v for v in p if v < 0), sum(v for v in p if v > 0)
                out.extend((c, t) for t in range(lo + 1, hi + 1))
    return out


def errors_of(X, y, c, t):
    return int(np.sum(((X @ c) >= t).astype(int) != y))


def rnm_exponential_probabilities(losses, scale):
    """P(point i wins) for argmax -L/s + E, E iid Exp(1), by quadrature over
    E_i (independent of the sampler and of permute-and-flip's definition)."""
    u = -np.asarray(losses, float) / scale
    out = []
    for i in range(u.size):
        others = np.delete(u, i)

        def f(x, i=i, others=others):
            z = x + u[i] - others
            return math.exp(-x) * float(np.prod(np.where(z > 0, -np.expm1(-np.maximum(z, 0)), 0.0)))
        breaks = sorted({max(0.0, float(v)) for v in others - u[i]})
        val = integrate.quad(f, 0, np.inf, points=breaks[:50] or None, limit=400)[0] if not breaks else sum(
            integrate.quad(f, a, b, limit=200)[0] for a, b in zip([0.0] + breaks, breaks + [np.inf]))
        out.append(val)
    p = np.array(out)
    return p / p.sum()


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (12, 2))
    y = rng.integers(0, 2, 12)
    return X, y


# -- W ---------------------------------------------------------------------------
@pytest.mark.parametrize("d,P,k,signs", [(4, 2, 2, None), (5, 1, 3, None), (4, 3, 4, [1, 0, -1, 0])])
def test_size_matches_the_definition(d, P, k, signs):
    space = ScoreSpace(d, P, k, signs)
    W = brute_force_W(d, P, k, signs)
    assert space.size() == len(W)
    total = sum(space.region_sizes(space.supports(j)).sum() for j in range(k + 1))
    assert total == len(W)


def test_errors_and_lower_bounds_match_brute_force():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (200, 4))
    y = (X @ [2, -1, 1, 0] + rng.normal(0, 1, 200) > 0.5).astype(int)
    space, table = ScoreSpace(4, 2, 3), RecordTable.from_arrays(X, y)
    for j in range(1, 4):
        S = space.supports(j)
        lb = support_lower_bounds(table, S)
        np.testing.assert_array_equal(lb, support_lower_bounds(table, S, use_numba=False))
        for r in range(S.shape[0]):
            vec = space.vectors(S[r])
            err, thr, sizes = group_errors(table, S[r], vec)
            for g in range(vec.shape[0]):
                c = np.zeros(4, int)
                c[S[r]] = vec[g]
                assert sizes[g] == np.abs(vec[g]).sum()
                ref = [errors_of(X, y, c, t) for t in thr[g, :sizes[g]]]
                np.testing.assert_array_equal(err[g, :sizes[g]], ref)
            assert lb[r] <= err.min()


def test_best_scoring_system_is_the_brute_force_minimum():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (300, 5))
    y = ((X @ [2, -1, 1, 0, 1] + rng.normal(0, 1, 300)) > 1).astype(int)
    W = brute_force_W(5, 2, 3)
    errs = [errors_of(X, y, c, t) for c, t in W]
    coef, t, e = best_scoring_system(X, y, max_points=2, max_items=3)
    assert e == min(errs) == errors_of(X, y, coef, t)
    assert np.count_nonzero(coef) <= 3 and np.abs(coef).max() <= 2


# -- the top-down primitives -------------------------------------------------
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_region_maximum_and_truncation_have_the_right_law(method):
    rng = np.random.default_rng(5)
    draw = (lambda size: rng.gumbel(size=size)) if method == "exponential" else rng.standard_exponential
    n, N = 7, 20000
    direct = draw((N, n)).max(axis=1)
    ours = max_of(NoiseDraws.from_uniforms(rng.random(N)), n, method)
    assert stats.ks_2samp(direct, ours).pvalue > 1e-3
    bound = 1.0
    z = draw((400000,))
    z = z[z < bound][: N * 3].reshape(-1, 3).max(axis=1)
    assert stats.ks_2samp(z, truncated_max_of(NoiseDraws.from_uniforms(rng.random(z.size)), 3, bound,
                                              method)).pvalue > 1e-3
    # a wrong n is detected
    assert stats.ks_2samp(direct, max_of(NoiseDraws.from_uniforms(rng.random(N)), 2 * n, method)).pvalue < 1e-6


def test_split_region_keeps_the_maximum():
    u = np.array([0.6, 0.1, 0.5, 0.9])
    out = split_region(NoiseDraws.from_uniforms(u), [1, 2, 1], 2.0, "exponential")
    assert out.max() == 2.0 and np.argmax(out) == 1   # 0.6 of the mass 4 falls in group 1
    assert np.all(out <= 2.0)


def test_keyed_streams_depend_on_the_key_only():
    a = KeyedStreams(np.random.default_rng(7))
    b = KeyedStreams(np.random.default_rng(7))
    np.testing.assert_array_equal(a.uniforms((1, 2), 5), b.uniforms((1, 2), 5))
    assert not np.array_equal(a.uniforms((1, 2), 5), a.uniforms((2, 1), 5))
    s = KeyedStreams(SecureGenerator())
    assert s.secure
    u = s.uniforms((0,), 10000)
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    t = KeyedStreams(SecureGenerator())
    assert not np.array_equal(u[:10], t.uniforms((0,), 10))   # a fresh secret each time


# -- the distribution test ------------------------------------------------------
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
@pytest.mark.slow
def test_released_distribution_matches_the_exact_one(tiny, method):
    X, y = tiny
    eps, runs = 1.0, 8000
    W = brute_force_W(2, 1, 2)
    losses = np.array([errors_of(X, y, c, t) for c, t in W], dtype=float)
    if method == "exponential":
        exact = exponential_mechanism_probabilities(losses, eps, 1.0)
    else:
        exact = rnm_exponential_probabilities(losses, 2.0 / eps)
    index = {(tuple(c), t): i for i, (c, t) in enumerate(W)}
    counts = np.zeros(len(W))
    for seed in range(runs):
        r = select_scoring_system(X, y, epsilon=eps, max_points=1, max_items=2, method=method,
                                  random_state=seed, executor="local")
        w = np.rint(r.weights).astype(int)
        counts[index[(tuple(w[:-1]), int(w[-1]))]] += 1
    keep = exact * runs >= 5

    def pooled(v):
        return np.append(v[keep], v[~keep].sum()) if (~keep).any() else v[keep]
    obs, exp = pooled(counts), pooled(exact) * runs
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # the test has power: the law at twice the epsilon is rejected
    wrong = (exponential_mechanism_probabilities(losses, 2 * eps, 1.0) if method == "exponential"
             else rnm_exponential_probabilities(losses, 1.0 / eps))
    assert stats.chisquare(obs, pooled(wrong) * runs).pvalue < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_released_loss_distribution_on_a_pruned_W(method):
    """A W of 512 points where most supports are pruned: the law of the
    released point's loss against the exact one."""
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2, (40, 5))
    y = ((X @ [2, -1, 1, 0, 0] + rng.normal(0, 0.7, 40)) > 0.5).astype(int)
    eps, runs = 1.0, 4000
    W = brute_force_W(5, 2, 2)
    losses = np.array([errors_of(X, y, c, t) for c, t in W], dtype=float)
    exact = (exponential_mechanism_probabilities(losses, eps, 1.0) if method == "exponential"
             else rnm_exponential_probabilities(losses, 2.0 / eps))
    levels = np.unique(losses)
    p_level = np.array([exact[losses == v].sum() for v in levels])
    counts = np.zeros(levels.size)
    expanded = 0
    for seed in range(runs):
        r = select_scoring_system(X, y, epsilon=eps, max_points=2, max_items=2, method=method,
                                  random_state=seed, executor="local", keep_report=True)
        w = np.rint(r.weights).astype(int)
        counts[np.searchsorted(levels, errors_of(X, y, w[:-1], w[-1]))] += 1
        expanded += r.report.regions_expanded
    assert expanded < runs * 16 * 0.5          # most of the 16 supports are pruned on average
    keep = p_level * runs >= 5
    obs, exp = counts[keep], p_level[keep] * runs
    if (~keep).any():
        obs, exp = np.append(obs, counts[~keep].sum()), np.append(exp, p_level[~keep].sum() * runs)
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_quadrature_reference_agrees_with_permute_and_flip_definition():
    losses = np.array([3.0, 4.0, 4.0, 6.0, 9.0])
    np.testing.assert_allclose(rnm_exponential_probabilities(losses, 2.0),
                               permute_and_flip_probabilities(losses, 1.0, 1.0), atol=1e-7)


# -- sharding ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(11)
    X = (rng.normal(size=(2000, 14)) + rng.normal(size=(2000, 1)) > 0.4).astype(int)
    y = ((X[:, :5] @ [2, -1, 1, 1, -2] + rng.logistic(size=2000)) > 0.5).astype(int)
    return X, y


def _answers(X, y, executor, seeds):
    return [tuple(select_scoring_system(X, y, epsilon=0.5, max_points=3, max_items=4, random_state=s,
                                        executor=executor).weights) for s in seeds]


def test_sharded_answers_are_bit_identical(wide):
    X, y = wide
    seeds = range(4)
    local = _answers(X, y, "local", seeds)
    with ThreadPoolExecutor(2) as ex:
        assert _answers(X, y, ex, seeds) == local
    with ProcessPoolExecutor(2) as ex:
        assert _answers(X, y, ex, seeds) == local


def test_sharded_answers_on_dask_are_bit_identical(wide):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    X, y = wide
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert _answers(X, y, client, range(3)) == _answers(X, y, "local", range(3))


def test_pruning_scores_a_small_part_of_W(wide):
    X, y = wide
    r = select_scoring_system(X, y, epsilon=1.0, max_points=3, max_items=4, random_state=0, executor="local",
                              keep_report=True)
    assert r.report.regions_expanded < r.report.n_regions / 10
    coef, t, best = best_scoring_system(X, y, max_points=3, max_items=4)
    w = np.rint(r.weights).astype(int)
    excess = errors_of(X, y, w[:-1], w[-1]) - best
    assert 0 <= excess <= r.parameters["alpha"]


# -- calibration -------------------------------------------------------------------
def test_risk_table_calibration_by_hand():
    assert RISK_TABLE_SENSITIVITY == 2.0
    assert risk_table_noise_scale(0.5) == 4.0
    assert split_risk_epsilon(1.0, 0.25) == (0.75, 0.25)
    with pytest.raises(ParameterError, match="risk_share"):
        split_risk_epsilon(1.0, 1.0)


def test_selection_parameters_by_hand(wide):
    X, y = wide
    r = select_scoring_system(X, y, epsilon=0.5, max_points=3, max_items=4, random_state=0, executor="local")
    n_points = ScoreSpace(14, 3, 4).size()
    assert r.parameters["n_points"] == n_points
    assert r.parameters["noise_scale"] == 4.0
    assert r.parameters["alpha"] == pytest.approx(4.0 * (math.log(n_points) + math.log(20.0)))
    assert r.delta == 0.0 and r.epsilon == 0.5


# -- the estimator -------------------------------------------------------------------
def test_estimator_fits_reads_and_prints(wide):
    from privopt import PrivateScoringSystem

    X, y = wide
    est = PrivateScoringSystem(epsilon=2.0, max_points=3, max_items=4, random_state=0).fit(X, y)
    assert est.coef_.dtype.kind == "i" and np.count_nonzero(est.coef_) <= 4
    assert set(est.points_) == {f"x{j}" for j in np.flatnonzero(est.coef_)}
    np.testing.assert_array_equal(est.predict(X), ((X @ est.coef_) >= est.threshold_).astype(int))
    card = str(est.scorecard())
    assert "points" in card and f"predict 1 when the total is >= {est.threshold_}" in card
    for name, pts in est.points_.items():
        assert name in card and f"{pts:+d}" in card
    _, _, best = best_scoring_system(X, y, max_points=3, max_items=4)
    assert est.score(X, y) >= 1 - (best + est.result_.parameters["alpha"]) / len(y)


def test_estimator_signs_and_names():
    pd = pytest.importorskip("pandas")
    from privopt import PrivateScoringSystem

    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.integers(0, 2, (500, 3)), columns=["a", "b", "c"])
    y = ((X["a"] - 2 * X["b"] + rng.normal(0, 0.5, 500)) > 0).astype(int)
    est = PrivateScoringSystem(epsilon=1.0, max_points=2, max_items=2, signs={"b": +1}, random_state=0).fit(X, y)
    assert est.coef_[1] >= 0
    assert set(est.points_) <= {"a", "b", "c"}
    assert list(est.scorecard().to_frame().columns) == ["item", "points"]


def test_estimator_risk_table_spends_the_stated_share(wide):
    from privopt import PrivateScoringSystem

    X, y = wide
    est = PrivateScoringSystem(epsilon=1.0, max_points=2, max_items=3, risk_share=0.2, random_state=0).fit(X, y)
    assert est.result_.epsilon == pytest.approx(0.8)
    assert est.epsilon_spent_ == pytest.approx(1.0)
    scores = [r["score"] for r in est.risk_table_]
    assert scores == list(range(int(np.minimum(est.coef_, 0).sum()), int(np.maximum(est.coef_, 0).sum()) + 1))
    assert "rate" in str(est.scorecard())


def test_estimator_refuses_non_binary_items_before_any_work():
    from privopt import PrivateScoringSystem

    X = np.array([[0.0, 2.0], [1.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ParameterError, match="ThresholdBinarizer"):
        PrivateScoringSystem(random_state=0).fit(X, [0, 1, 1])
    with pytest.raises(ParameterError, match="max_points"):
        PrivateScoringSystem(max_points=0, random_state=0).fit(X[:, :1], [0, 1, 1])
    with pytest.raises(ParameterError, match="signs"):
        PrivateScoringSystem(signs=[2], random_state=0).fit(X[:, :1], [0, 1, 1])


def test_binarizer_public_thresholds_and_leak_warning():
    from privopt.scoring import ThresholdBinarizer

    X = np.array([[35.0, 0], [61.0, 1], [45.0, 1]])
    b = ThresholdBinarizer({0: [40, 60]}).fit(X)
    np.testing.assert_array_equal(b.transform(X), [[0, 0, 0], [1, 1, 1], [1, 0, 1]])
    assert list(b.get_feature_names_out()) == ["x0 >= 40", "x0 >= 60", "x1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ThresholdBinarizer({0: [40]}).fit(X)           # public: no warning
    with pytest.warns(PrivacyLeakWarning):
        ThresholdBinarizer(from_data=2).fit(X)
    # a column with no cut points is the item column >= 1 by a public rule, whatever it holds:
    # no error (it would say for free whether the column is binary), a warning for the curator
    with pytest.warns(NonBinaryItemWarning, match=r"\['x0'\]"):
        fitted = ThresholdBinarizer().fit(X)
    np.testing.assert_array_equal(fitted.transform(X), [[1, 0], [1, 1], [1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ThresholdBinarizer().fit(X[:, 1:])             # a 0/1 column passes through silently
    with pytest.raises(ParameterError, match="from_data"):
        ThresholdBinarizer(from_data=1).fit(np.array([["text"]], dtype=object))   # before X is read


@pytest.mark.parametrize("d,k", [(7, 3), (10, 4), (6, 6), (12, 1), (5, 0)])
def test_lex_combinations_match_itertools_at_any_start(d, k):
    from privopt.search._topdown import lex_combinations

    combos = list(itertools.combinations(range(d), k))
    ref = np.array(combos, dtype=np.int64).reshape(len(combos), k)
    n = ref.shape[0]
    for a, b in [(0, n), (min(3, n), min(n, 9)), (n - 1, n), (0, 0)]:
        np.testing.assert_array_equal(lex_combinations(d, k, a, b), ref[a:b])


# -- audit --------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("method", ["permute_and_flip", "exponential"])
def test_audit_passes_shipped_and_flags_halved_sensitivity(method):
    """The scoring sampler itself, 25,000 runs per data set on a near-worst-case pair (5,000
    choosing the event among 4 outputs, 20,000 counting it, as many as an even split of 40,000):
    eps lower bound about 0.8 as shipped at eps = 1, about 1.6-1.8 with half the sensitivity."""
    from privopt import audit

    pair = audit.selection_instance()
    kw = dict(n_samples=25_000, selection_fraction=0.2, random_state=0)
    shipped = audit.audit(audit.ScoringTarget(pair, epsilon=1.0, method=method), **kw)
    assert not shipped.violation and shipped.epsilon_lower_bound <= 1.0
    broken = audit.audit(audit.ScoringTarget(pair, epsilon=1.0, method=method, sensitivity_factor=0.5), **kw)
    assert broken.violation and broken.epsilon_lower_bound > 1.2


def test_audit_replay_equals_the_mechanism_run_by_run():
    from privopt import audit

    target = audit.ScoringTarget(audit.selection_instance(), epsilon=1.0)
    assert len(target.support) == ScoreSpace(1, 1, 1).size() == 4
    for seed in range(10):
        for which in (0, 1):
            fast = target.outputs_from_noise(which, target.draw_noise(np.random.default_rng(seed), size=1))[0]
            np.testing.assert_array_equal(fast, target.run_mechanism(which, np.random.default_rng(seed)))


def test_threshold_binarizer_keeps_missing_values_as_nan_items():
    """A missing or infinite value is never refused by the binarizer (in a Pipeline it runs
    before the scoring system charges its ledger: a refusal would be free): its items are NaN
    (the output then float), refused by the scoring system once charged."""
    from privopt.scoring import ThresholdBinarizer

    X = np.array([[10.0, 1.0], [np.nan, 0.0], [70.0, np.inf]])
    b = ThresholdBinarizer({0: [40, 60]}).fit(X)
    out = b.transform(X)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[0, 0, 1], [np.nan, np.nan, 0], [1, 1, np.nan]])
    assert b.transform(X[[0]]).dtype == np.uint8
