"""Private selection among resolutions with a public base measure
(privopt.mixture_selection) and the estimator's W chosen among resolutions.

The released (r, w) is checked against its exact law computed without the
sampler: losses by brute force over every point of each W_r, the exponential
mechanism's softmax with ln mu added, and permute-and-flip from its original
definition (every visiting order) on the union with the public utility offset.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import privopt
from privopt import audit
from privopt.calibration import (
    base_measure_log_weights,
    check_prior,
    exponential_mechanism_probabilities,
    mixture_utility_bound,
    permute_and_flip_probabilities,
    selection_noise_scale,
)
from privopt.exceptions import ModelError, ParameterError
from privopt.models import get_info, predict_halfspace, zero_one_halfspace

from tests._law import direct_and_real_agree_pvalue, pooled_chi_square_pvalue, shipped_and_broken

METHODS = ("exponential", "permute_and_flip")


# --- calibration: hand-worked values ------------------------------------------

def test_base_measure_and_bound_hand_values():
    # mu = pi_r / |W_r|: (1/4) / 10 and (3/4) / 100
    np.testing.assert_allclose(base_measure_log_weights([1, 3], [10, 100]),
                               [math.log(0.025), math.log(0.0075)])
    np.testing.assert_allclose(base_measure_log_weights(None, [5, 10]), [math.log(0.1), math.log(0.05)])
    # (2 Delta / eps)(ln |W| + ln(1/pi) + ln(1/beta)) at eps 0.5, Delta 1:
    # 4 (6.907755 + 1.386294 + 2.302585) = 42.38654
    assert mixture_utility_bound(0.5, 1.0, 1000, 0.25, 0.1) == pytest.approx(42.38654, abs=1e-4)
    # pi = 1 is the plain bound of private selection
    assert mixture_utility_bound(1.0, 1.0, 100, 1.0, 0.05) == pytest.approx(2 * (math.log(100) + math.log(20)))


@pytest.mark.parametrize("bad", [[1.0], [1.0, 0.0], [1.0, -1.0], [1.0, float("nan")], "uniform"])
def test_prior_is_checked(bad):
    with pytest.raises(privopt.PrivoptError, match="prior"):
        check_prior(bad, 2)


# --- the law of the release against an independent computation ------------------

def _instance():
    """14 records of one raw feature x in {0, 1, 2}; W_0: f = x, grid 1, D 1
    (3 points); W_1: f = x - 1, grid 2, D 2 (5 points)."""
    x = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 1], dtype=float)[:, None]
    y = np.array([-1, -1, -1, 1, 1, 1, 1, 1, -1, 1, -1, 1, -1, 1])
    m0 = zero_one_halfspace(x, y, grid=1, norm_bound=1.0)
    m1 = zero_one_halfspace(x - 1.0, y, grid=2, norm_bound=2.0)
    W0, W1 = np.array([[-1.0], [0.0], [1.0]]), np.array([[-2.0], [-1.0], [0.0], [1.0], [2.0]])
    L0 = np.array([np.sum(predict_halfspace(w, x, get_info(m0)) != y) for w in W0], dtype=float)
    L1 = np.array([np.sum(predict_halfspace(w, x - 1.0, get_info(m1)) != y) for w in W1], dtype=float)
    return (m0, m1), (W0, W1), (L0, L1)


def _exact_law(losses, prior, epsilon, method):
    """P(r, w) over the union, from the definitions: softmax of -L/s + ln mu, or
    permute-and-flip's visiting orders on the utility -L + s ln mu."""
    s = selection_noise_scale(epsilon, 1.0)
    log_mu = np.concatenate([np.full(len(L), np.log(p / len(L))) for L, p in zip(losses, prior)])
    L = np.concatenate(losses)
    shifted = L - s * log_mu          # the loss whose -L/s is the key with the base measure
    if method == "exponential":
        return exponential_mechanism_probabilities(shifted, epsilon, 1.0)
    return permute_and_flip_probabilities(shifted, epsilon, 1.0)


@pytest.mark.parametrize("path", ["topdown", "enumerate"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.slow
def test_release_has_the_exact_base_measure_law(method, path, monkeypatch):
    models, Ws, losses = _instance()
    if path == "enumerate":        # the fallback where W_r cannot be split by support
        import privopt.mechanisms.selection.mixture as mix

        monkeypatch.setattr(mix, "topdown_problem", lambda data, norm_bound=None: None)
    prior = (0.3, 0.7)
    exact = _exact_law(losses, prior, 1.0, method)
    rng = np.random.default_rng(11)
    cells = [(r, float(w[0])) for r, W in enumerate(Ws) for w in W]
    counts = np.zeros(len(cells))
    n = 4000
    for _ in range(n):
        res = privopt.mixture_selection(models, epsilon=1.0, prior=prior, method=method, random_state=rng)
        counts[cells.index((res.parameters["resolution"], float(res.weights[0])))] += 1
    assert pooled_chi_square_pvalue(counts, exact) > 1e-3


def test_a_wrong_base_measure_fails_the_same_test():
    # pi_r without the 1/|W_r| (a plausible slip) has another law; the test above must see it
    models, Ws, losses = _instance()
    right = _exact_law(losses, (0.5, 0.5), 1.0, "exponential")
    s = selection_noise_scale(1.0, 1.0)
    wrong_keys = np.concatenate([-L / s + np.log(0.5) for L in losses])
    wrong = np.exp(wrong_keys - wrong_keys.max())
    wrong /= wrong.sum()
    n = 4000
    rng = np.random.default_rng(3)
    counts = rng.multinomial(n, wrong)
    assert stats.chisquare(counts, right * n).pvalue < 1e-3


def test_floor_prunes_without_changing_the_keys():
    from privopt.mechanisms.selection import topdown_problem
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.search._topdown import KeyedStreams, plan_shards, run_shards

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 3)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 2, 1, -1)
    problem = topdown_problem(getattr(zero_one_halfspace(X, y, grid=2, norm_bound=2.0), ENUMERATION_ATTR))
    streams = KeyedStreams(np.random.default_rng(5))
    shards = plan_shards(problem)
    best, _ = run_shards(problem, shards, streams=streams, method="exponential", scale=2.0)
    below, _ = run_shards(problem, shards, streams=streams, method="exponential", scale=2.0,
                          floor=(best[0] - 1e-9, 2 ** 62, 0, 0))
    assert below == best                      # the same key, from the same streams
    above, stats_above = run_shards(problem, shards, streams=streams, method="exponential", scale=2.0,
                                    floor=(best[0] + 1e-9, 2 ** 62, 0, 0))
    assert above is None


# --- the audit: shipped passes, a data-chosen base measure is flagged ---------------

def test_audit_passes_shipped_and_flags_a_base_measure_from_the_data():
    pair = audit.resolution_instance()
    shipped, broken = shipped_and_broken(audit.MixtureSelectionTarget, pair, epsilon=1.0, broken={"data_prior": True})
    assert not shipped.violation and shipped.epsilon_lower_bound <= 1.0
    assert broken.violation and broken.epsilon_lower_bound > 3.0


@pytest.mark.slow
def test_audit_direct_law_and_real_mechanism_agree():
    target = audit.MixtureSelectionTarget(audit.resolution_instance(), epsilon=1.0)
    assert direct_and_real_agree_pvalue(target, 3000, 1500) > 1e-3


# --- refusals -----------------------------------------------------------------

def test_bad_inputs_are_refused_before_any_work():
    models, _, _ = _instance()
    with pytest.raises(ParameterError, match="models"):
        privopt.mixture_selection(models[:1], epsilon=1.0)
    with pytest.raises(ParameterError, match="prior"):
        privopt.mixture_selection(models, epsilon=1.0, prior=(1.0, 2.0, 3.0))
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.w = pyo.Var([0], domain=pyo.Integers, bounds=(-1, 1))
    m.o = pyo.Objective(expr=m.w[0])
    with pytest.raises(ModelError, match="models"):
        privopt.mixture_selection([models[0], m], epsilon=1.0)
    x = np.array([[0.0], [1.0], [2.0]])
    other = zero_one_halfspace(x, np.array([1, -1, 1]), grid=1, norm_bound=1.0)     # other records
    with pytest.raises(ModelError, match="same records"):
        privopt.mixture_selection([models[0], other], epsilon=1.0)
    with pytest.raises(ParameterError, match="time_limit"):
        privopt.mixture_selection(models, epsilon=1.0, time_limit=1e-12)


def test_result_fields_and_secure_default():
    models, _, _ = _instance()
    res = privopt.mixture_selection(models, epsilon=1.0, keep_report=True)
    p = res.parameters
    assert res.delta == 0.0 and p["resolution"] in (0, 1) and p["n_points"] == (3, 5)
    assert p["prior"] == (0.5, 0.5)
    assert p["alpha"] == pytest.approx(mixture_utility_bound(1.0, 1.0, 3, 0.5))
    assert p["alpha_by_resolution"][1] == pytest.approx(mixture_utility_bound(1.0, 1.0, 5, 0.5))
    assert res.report.parts[p["resolution"]]["won"]


# --- privopt's 0/1 loss without its MILP (zero_one_loss) --------------------------------

def test_zero_one_loss_carries_the_milp_s_info_and_data():
    """The record is the model as private selection reads it: the same ModelInfo, the
    same rows, labels and W, and .milp() the same MILP as zero_one_halfspace."""
    from privopt.models import ENUMERATION_ATTR, zero_one_loss

    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 1, 60) > 1, 1, 0)
    kw = dict(grid=2, norm_bound=2.0, fit_intercept=True, classes=(0, 1))
    model, rec = zero_one_halfspace(X, y, **kw), zero_one_loss(X, y, **kw)
    assert rec.info == get_info(model)
    data = getattr(model, ENUMERATION_ATTR)
    for field in ("X", "pos", "neg"):
        np.testing.assert_array_equal(getattr(rec.data, field), getattr(data, field))
    for field in ("exact", "mu", "t_hi", "theta", "grid", "norm_bound", "norm_sq_bound"):
        assert getattr(rec.data, field) == getattr(data, field)
    assert rec.labels == (0, 1, 2, 3)
    built = rec.milp()
    assert get_info(built) == rec.info and getattr(built, ENUMERATION_ATTR).components == data.components
    assert built.nconstraints() == model.nconstraints()


@pytest.mark.parametrize("path", ["topdown", "enumerate"])
@pytest.mark.parametrize("method", METHODS)
def test_records_release_what_the_models_release_seed_for_seed(method, path, monkeypatch):
    """zero_one_loss records in place of the MILPs: the same release for every seed, on
    the top-down path and where every point is scored, and no MILP built."""
    import privopt.mechanisms.selection.mixture as mix
    import privopt.models.halfspace as hs
    from privopt.models import zero_one_loss

    x = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 1], dtype=float)[:, None]
    y = np.array([-1, -1, -1, 1, 1, 1, 1, 1, -1, 1, -1, 1, -1, 1])
    models, _, _ = _instance()
    records = (zero_one_loss(x, y, grid=1, norm_bound=1.0), zero_one_loss(x - 1.0, y, grid=2, norm_bound=2.0))
    monkeypatch.setattr(hs, "_zero_one_milp", None)        # a MILP built from here on fails
    if path == "enumerate":
        monkeypatch.setattr(mix, "topdown_problem", lambda data, norm_bound=None: None)
    for seed in range(40):
        a = privopt.mixture_selection(models, epsilon=1.0, method=method, random_state=seed)
        b = privopt.mixture_selection(records, epsilon=1.0, method=method, random_state=seed, keep_report=True)
        np.testing.assert_array_equal(a.weights, b.weights)
        assert a.labels == b.labels and a.parameters == b.parameters
        assert [p["path"] for p in b.report.parts] == [path, path]


def test_the_default_fit_builds_no_milp(monkeypatch):
    """Private selection among resolutions reads the halfspace data only: the default
    estimator builds no Pyomo model (a MILP built would fail here)."""
    import privopt.models.halfspace as hs

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.2, 400) > 1).astype(int)

    def refuse(*args, **kwargs):
        raise AssertionError("a MILP was built")

    monkeypatch.setattr(hs, "_zero_one_milp", refuse)
    monkeypatch.setattr(hs.pyo, "ConcreteModel", refuse)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X, y)
    assert len(clf.resolutions_) > 1 and clf.model_info_.n_samples == 400
