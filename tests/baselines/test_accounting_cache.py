"""The accounting cache is never trusted, and no baseline releases a fit whose
accounting exceeds the request (privopt/_cache.py, privopt/baselines/_accounting.py,
privopt/baselines/_base.py).

Anyone who can write privopt's cache folder (a shared ``PRIVOPT_CACHE_DIR``, a
copied CI or container cache) can plant values in ``accounting.json``.  Every
value read back is checked by a forward computation of the privacy claim; one
that fails is discarded with a warning naming the file, recomputed, and its
entry overwritten.  Independently, every baseline's ``fit`` refuses to release
when ``epsilon_spent_`` (or the delta spent) is above the request or not finite.
"""

from __future__ import annotations

import importlib.util
import json
import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from privopt import _cache
from privopt.baselines import (
    DPAGDLogisticRegression,
    DPSGDLogisticRegression,
    NoisySGDClassifier,
    ObjectivePerturbationLogisticRegression,
)
from privopt.baselines import _accounting as acc
from privopt.baselines import dpagd, dpsgd, noisy_sgd
from privopt.baselines._base import check_release
from privopt.exceptions import AccountingError, CacheRejectedWarning, ParameterError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("dp_accounting") is None or importlib.util.find_spec("PLD_accounting") is None,
    reason="dp_accounting / PLD_accounting (the 'learn' extra) are not installed")

EPS, DELTA = 2.0, 1e-3


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty cache folder of this test's own, and no value kept in this process."""
    path = tmp_path / "privopt-cache"
    monkeypatch.setenv(_cache.CACHE_DIR_ENV, str(path))
    _clear_memory()
    yield path
    _clear_memory()


def _clear_memory():
    acc._allocation_noise_multiplier.cache_clear()
    acc.dpsgd_calibrate_noise_multiplier.cache_clear()


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


def _noisy_sgd():
    return NoisySGDClassifier(epsilon=EPS, delta=DELTA, batch_size=20, bounds=(0.0, 1.0), random_state=0,
                              accounting="allocation")


def _dpsgd():
    return DPSGDLogisticRegression(epsilon=EPS, delta=DELTA, batch_size=30, epochs=1, sampling="shuffle",
                                   bounds=(0.0, 1.0), random_state=0)


def _entries(path):
    with open(path / "accounting.json") as fh:
        return json.load(fh)


def _plant(path, function, factor):
    """Multiply the cached value of ``function`` by ``factor`` in the file; the key it was under."""
    return _set(path, function, lambda value: value * factor)


def _set(path, function, value):
    """Replace the cached value of ``function`` in the file by ``value`` (or ``value(old)``
    where it is callable), and forget the values kept in memory; the key it was under."""
    data = _entries(path)
    (key,) = [k for k in data if json.loads(k)[0] == function]
    data[key] = value(data[key]) if callable(value) else value
    with open(path / "accounting.json", "w") as fh:
        json.dump(data, fh)
    _clear_memory()
    return key


def _fit_recording(est):
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [w for w in caught if issubclass(w.category, CacheRejectedWarning)]


def _assert_rejected_once(caught, path, function):
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert str(path / "accounting.json") in message and function in message


# ---------------------------------------------------------------------------
# planted values are re-checked, recomputed and overwritten
# ---------------------------------------------------------------------------
def test_noisy_sgd_multiplier_planted_1000x_too_small_is_recomputed(cache_dir):
    clean, caught = _fit_recording(_noisy_sgd())
    assert not caught
    genuine = _entries(cache_dir)
    key = _plant(cache_dir, "_allocation_noise_multiplier", 1e-3)
    est, caught = _fit_recording(_noisy_sgd())
    assert est.noise_std_ == clean.noise_std_          # not 1000 times smaller
    assert est.epsilon_spent_ == clean.epsilon_spent_ <= EPS
    np.testing.assert_array_equal(est.coef_, clean.coef_)
    _assert_rejected_once(caught, cache_dir, "_allocation_noise_multiplier")
    assert _entries(cache_dir)[key] == genuine[key]    # the entry is overwritten


@pytest.mark.parametrize("factor", [1e-3, 10.0])
def test_noisy_sgd_epsilon_planted_wrong_is_recomputed(cache_dir, factor):
    """The reported epsilon: an understatement (a false claim) and an
    overstatement (a claim the run does not need) are both recomputed."""
    clean, _ = _fit_recording(_noisy_sgd())
    genuine = _entries(cache_dir)
    key = _plant(cache_dir, "noisy_sgd_allocation_epsilon", factor)
    est, caught = _fit_recording(_noisy_sgd())
    assert est.epsilon_spent_ == clean.epsilon_spent_
    _assert_rejected_once(caught, cache_dir, "noisy_sgd_allocation_epsilon")
    assert _entries(cache_dir)[key] == genuine[key]


def test_dpsgd_multiplier_planted_1000x_too_small_is_recomputed(cache_dir):
    clean, caught = _fit_recording(_dpsgd())
    assert not caught
    genuine = _entries(cache_dir)
    key = _plant(cache_dir, "dpsgd_calibrate_noise_multiplier", 1e-3)
    est, caught = _fit_recording(_dpsgd())
    assert est.noise_multiplier_ == clean.noise_multiplier_
    assert est.epsilon_spent_ == clean.epsilon_spent_ <= EPS
    np.testing.assert_array_equal(est.coef_, clean.coef_)
    _assert_rejected_once(caught, cache_dir, "dpsgd_calibrate_noise_multiplier")
    assert _entries(cache_dir)[key] == genuine[key]


@pytest.mark.parametrize("planted", [0.0, -1.0, 1e-300])
def test_a_planted_zero_negative_or_tiny_multiplier_is_recomputed(cache_dir, planted):
    clean, _ = _fit_recording(_noisy_sgd())
    _set(cache_dir, "_allocation_noise_multiplier", planted)
    est, caught = _fit_recording(_noisy_sgd())
    assert est.noise_std_ == clean.noise_std_
    _assert_rejected_once(caught, cache_dir, "_allocation_noise_multiplier")


def test_a_clean_cache_is_read_without_warning_and_gives_the_same_fit(cache_dir):
    first, _ = _fit_recording(_noisy_sgd())
    _clear_memory()
    second, caught = _fit_recording(_noisy_sgd())
    assert not caught
    assert (second.noise_std_, second.epsilon_spent_) == (first.noise_std_, first.epsilon_spent_)
    np.testing.assert_array_equal(second.coef_, first.coef_)


def test_json_cache_get_verified_discards_a_value_that_fails_its_check(cache_dir):
    c = _cache.JsonCache("t")
    assert c.put("k", 2.0)
    assert c.get_verified("k", lambda v: v > 1.0) == 2.0
    with pytest.warns(CacheRejectedWarning, match="t.json"):
        assert c.get_verified("k", lambda v: v > 3.0) is None
    assert c.get_verified("absent", lambda v: True) is None


# ---------------------------------------------------------------------------
# no release above the request, whatever the accounting says
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("spent, delta_spent", [
    (2.0 + 1e-12, DELTA), (math.inf, DELTA), (math.nan, DELTA), (-math.inf, DELTA),
    (1.0, DELTA * 1.001), (1.0, math.inf), (1.0, math.nan), (None, DELTA), (1.0, None)])
def test_check_release_refuses_more_than_requested_or_not_finite(spent, delta_spent):
    with pytest.raises(AccountingError, match="Est"):
        check_release(spent, delta_spent, EPS, DELTA, "Est")


@pytest.mark.parametrize("spent, delta_spent", [(EPS, DELTA), (0.5, 0.0), (0.0, DELTA / 2)])
def test_check_release_accepts_what_was_requested(spent, delta_spent):
    check_release(spent, delta_spent, EPS, DELTA, "Est")


def test_noisy_sgd_with_only_the_multiplier_wrong_is_not_released(cache_dir, monkeypatch):
    """A planted multiplier that slipped through (here: the calibration itself
    returns it, as a future accounting bug would) gives epsilon_spent_ = inf;
    the fit is refused and nothing of it is left on the estimator."""
    real = acc.noisy_sgd_allocation_sigma
    monkeypatch.setattr(noisy_sgd.acc, "noisy_sgd_allocation_sigma", lambda *a, **k: real(*a, **k) / 1000)
    X, y = _data()
    est = _noisy_sgd()
    with pytest.raises(AccountingError, match=r"epsilon_spent_.*inf"):
        est.fit(X, y)
    assert not hasattr(est, "noise_std_") and not hasattr(est, "epsilon_spent_")
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_a_refused_refit_leaves_the_previous_fit_untouched(cache_dir, monkeypatch):
    X, y = _data()
    est = _noisy_sgd().fit(X, y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
    real = acc.noisy_sgd_allocation_sigma
    monkeypatch.setattr(noisy_sgd.acc, "noisy_sgd_allocation_sigma", lambda *a, **k: real(*a, **k) / 1000)
    with pytest.raises(AccountingError):
        est.fit(X[::-1], y[::-1])
    assert vars(est).keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(est, k), v)


def test_dpsgd_with_an_accountant_answering_nan_is_not_released(monkeypatch):
    monkeypatch.setattr(dpsgd.acc, "dpsgd_epsilon", lambda *a, **k: math.nan)
    monkeypatch.setattr(dpsgd.acc, "dpsgd_calibrate_noise_multiplier", lambda *a, **k: 1.0)
    X, y = _data()
    with pytest.raises(AccountingError, match="DPSGDLogisticRegression"):
        _dpsgd().fit(X, y)


def test_dpagd_with_a_budget_too_large_is_not_released(monkeypatch):
    """A bug that gives DP-AGD twice its zCDP budget: the honest conversion of
    what it charged is above epsilon, and the fit is refused."""
    real = acc.zcdp_rho_from_dp
    monkeypatch.setattr(dpagd.acc, "zcdp_rho_from_dp", lambda eps, delta: 2 * real(eps, delta))
    X, y = _data()
    with pytest.raises(AccountingError, match="DPAGDLogisticRegression"):
        DPAGDLogisticRegression(epsilon=EPS, delta=DELTA, bounds=(0.0, 1.0), random_state=0).fit(X, y)


def test_perturbation_still_releases():
    X, y = _data()
    est = ObjectivePerturbationLogisticRegression(epsilon=EPS, bounds=(0.0, 1.0), random_state=0).fit(X, y)
    assert est.epsilon_spent_ == EPS and est.delta_spent_ == 0.0


# ---------------------------------------------------------------------------
# clean fits report at most what was requested (so the check above never refuses them)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps, delta, n", [(0.01, 1e-5, 10), (0.01, 1e-3, 101), (0.01, 1e-5, 398)])
def test_amu_noise_meets_its_epsilon_exactly(eps, delta, n):
    """The analytic-Gaussian round trip overshot epsilon by about 1e-12
    relative at these inputs; the calibration is nudged up until the forward
    accounting meets it."""
    m = math.ceil(n / 2)
    sigma = acc.noisy_sgd_sigma(eps, delta, n, m)
    assert acc.noisy_sgd_epsilon(sigma, delta, n, m) <= eps


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_allocation_fit_reports_at_most_its_epsilon(cache_dir, eps):
    """One step (t = 1): the epsilon bisection rounds up by up to 1e-4
    relative and reported 0.300003 at epsilon = 0.3."""
    X, y = _data(n=40)
    est = NoisySGDClassifier(epsilon=eps, delta=DELTA, batch_size=40, bounds=(0.0, 1.0),
                             random_state=0, accounting="allocation").fit(X, y)
    assert est.n_steps_ == 1
    assert est.epsilon_spent_ <= eps
    assert acc.noisy_sgd_allocation_delta(est.noise_std_, 1, est.epsilon_spent_) <= DELTA


# ---------------------------------------------------------------------------
# the screens that keep a planted value cheap to refuse
# ---------------------------------------------------------------------------
def test_noisy_sgd_multiplier_planted_huge_is_recomputed(cache_dir):
    """More noise is private, but a planted 1e6 overflowed the fit: a value
    above the calibration's upper end (2 sigma_G) is refused too."""
    clean, _ = _fit_recording(_noisy_sgd())
    _plant(cache_dir, "_allocation_noise_multiplier", 1e6)
    est, caught = _fit_recording(_noisy_sgd())
    assert est.noise_std_ == clean.noise_std_
    _assert_rejected_once(caught, cache_dir, "_allocation_noise_multiplier")


@pytest.mark.parametrize("z, eps", [(0.5, 0.1), (1.0, 1.0), (3.0, 5.0)])
def test_one_step_delta_without_subsampling_is_the_gaussian_mechanism(z, eps):
    """q = 1, replace-one: N(1, z^2) against N(-1, z^2), sensitivity 2 [BW18, Theorem 8]."""
    from scipy import special

    hand = special.ndtr(1 / z - eps * z / 2) - math.exp(eps) * special.ndtr(-1 / z - eps * z / 2)
    assert acc.dpsgd_one_step_delta(z, 1.0, eps) == pytest.approx(hand, rel=1e-9)


@pytest.mark.parametrize("z, q, eps", [(1.0, 0.1, 0.5), (0.7, 0.01, 1.0), (0.3, 0.05, 2.0)])
def test_one_step_delta_under_add_remove_by_hand(z, q, eps):
    """Add/remove: P = (1 - q) N(0, z^2) + q N(1, z^2) against N(0, z^2); the
    likelihood ratio 1 - q + q e^{(2x - 1)/(2 z^2)} equals e^eps at
    x0 = 1/2 + z^2 log((e^eps - 1 + q)/q)."""
    from scipy import special

    x0 = 0.5 + z * z * math.log((math.exp(eps) - 1 + q) / q)
    tail0, tail1 = special.ndtr(-x0 / z), special.ndtr((1 - x0) / z)
    hand = (1 - q) * tail0 + q * tail1 - math.exp(eps) * tail0
    assert acc.dpsgd_one_step_delta(z, q, eps, "add_remove") == pytest.approx(hand, rel=1e-9)


@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
@pytest.mark.parametrize("z, q, eps", [(2.0, 0.3, 0.2), (1.0, 0.1, 1.0)])
def test_one_step_delta_is_the_accountants_one_step(neighbouring, z, q, eps):
    """Exact, so at most the (pessimistic) PLD accountant's delta for one step, and close to it."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    a = pld_privacy_accountant.PLDAccountant(neighboring_relation=acc._relation(neighbouring))
    a.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)))
    ours, theirs = acc.dpsgd_one_step_delta(z, q, eps, neighbouring), a.get_delta(eps)
    assert theirs * (1 - 1e-3) <= ours <= theirs * (1 + 1e-9)


@pytest.mark.parametrize("z", [1e-3, 1e-300])
def test_one_step_delta_at_a_negligible_noise_is_the_sampling_rate(z):
    # the differing record's step is included with probability q and then seen exactly
    assert acc.dpsgd_one_step_delta(z, 0.01, 1.0) == pytest.approx(0.01, rel=1e-9)
    assert acc.dpsgd_one_step_delta(z, 1.0, 1.0) == pytest.approx(1.0, rel=1e-9)


def test_dpsgd_refuses_a_tiny_given_noise_multiplier_before_the_accountant(monkeypatch):
    """At z = 0.001 the PLD accountant needs gigabytes; the one-step bound refuses it first."""
    def no_accountant(*a, **k):
        raise AssertionError("the PLD accountant ran")

    monkeypatch.setattr(dpsgd.acc, "dpsgd_epsilon", no_accountant)
    X, y = _data()
    est = DPSGDLogisticRegression(epsilon=EPS, delta=DELTA, batch_size=30, noise_multiplier=1e-3,
                                  bounds=(0.0, 1.0), random_state=0)
    with pytest.raises(ParameterError, match="noise_multiplier") as info:
        est.fit(X, y)
    assert info.value.parameter == "noise_multiplier"


# ---------------------------------------------------------------------------
# the rule choosing t reads the cache unchecked; the noise released with is checked
# ---------------------------------------------------------------------------
def _searched(accounting="allocation"):
    """t chosen by the rule (no batch_size): at n = 24, d = 4 it visits t = 12, 6 and 24."""
    return NoisySGDClassifier(epsilon=EPS, delta=DELTA, bounds=(0.0, 1.0), random_state=0,
                              accounting=accounting)


def _fit_searched(est):
    rng = np.random.default_rng(1)
    X = rng.uniform(0.0, 1.0, size=(24, 4))
    y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [w for w in caught if issubclass(w.category, CacheRejectedWarning)]


def _count_accountants(monkeypatch):
    """A fresh process's view (nothing kept in memory), and the (z, t) of every
    random-allocation PLD and the arguments of every DP-SGD PLD computed from now on."""
    _clear_memory()
    acc.allocation_add_remove_pld.cache_clear()
    acc.dpsgd_epsilon.cache_clear()
    allocation, poisson = [], []
    real_allocation, real_poisson = acc.allocation_add_remove_pld, acc.dpsgd_epsilon

    def spy_allocation(z, t):
        allocation.append((z, t))
        return real_allocation(z, t)

    def spy_poisson(*args):
        poisson.append(args)
        return real_poisson(*args)

    monkeypatch.setattr(acc, "allocation_add_remove_pld", spy_allocation)
    monkeypatch.setattr(acc, "dpsgd_epsilon", spy_poisson)
    return allocation, poisson


def test_a_later_process_runs_the_allocation_accountant_once_for_the_released_pair(cache_dir, monkeypatch):
    """Before, reading back the z of each of the 3 t the rule visits re-ran
    the PLD for each; now only the (z, t) the fit releases with is checked
    (the rule's t is itself read back from the cache)."""
    first, _ = _fit_searched(_searched())
    assert [v for k, v in _entries(cache_dir).items()
            if json.loads(k)[0] == "noisy_sgd_allocation_steps"] == [first.n_steps_]
    allocation, poisson = _count_accountants(monkeypatch)
    later, caught = _fit_searched(_searched())
    assert not caught and not poisson
    assert set(allocation) == {(later.noise_std_, later.n_steps_)}
    assert (later.n_steps_, later.noise_std_, later.epsilon_spent_) == (
        first.n_steps_, first.noise_std_, first.epsilon_spent_)
    np.testing.assert_array_equal(later.coef_, first.coef_)


def test_a_later_process_runs_one_dpsgd_accountant_for_the_default_grid_fit(cache_dir, monkeypatch):
    """The default accounting: t is chosen with the allocation rule (now no
    PLD at all from a warm cache) and the grid's noise is checked once."""
    first, _ = _fit_searched(_searched("poisson_grid"))
    allocation, poisson = _count_accountants(monkeypatch)
    later, caught = _fit_searched(_searched("poisson_grid"))
    assert not caught and not allocation
    assert len(set(poisson)) == 1
    assert (later.n_steps_, later.noise_multiplier_, later.epsilon_spent_) == (
        first.n_steps_, first.noise_multiplier_, first.epsilon_spent_)
    np.testing.assert_array_equal(later.coef_, first.coef_)


def test_planted_small_multipliers_may_move_t_but_never_the_noise_released_with(cache_dir):
    """Every cached z divided by 1000: the rule reads them unchecked, but the
    fit's own t is checked, rejected, recomputed and released with its true z."""
    _fit_searched(_searched())
    data = _entries(cache_dir)
    keys = [k for k in data if json.loads(k)[0] == "_allocation_noise_multiplier"]
    for k in keys:
        data[k] *= 1e-3
    (cache_dir / "accounting.json").write_text(json.dumps(data))
    _clear_memory()
    est, caught = _fit_searched(_searched())
    _assert_rejected_once(caught, cache_dir, "_allocation_noise_multiplier")
    t = est.n_steps_
    uncached = acc._allocation_noise_multiplier.__wrapped__.__wrapped__(EPS, DELTA, t)
    assert est.noise_std_ == uncached
    assert acc.noisy_sgd_allocation_delta(est.noise_std_, t, EPS) <= DELTA
    assert acc.noisy_sgd_allocation_delta(est.noise_std_ * 1e-3, t, EPS) > DELTA
    assert est.epsilon_spent_ <= EPS


def test_a_planted_small_multiplier_for_the_released_t_is_recomputed(cache_dir):
    """Only the entry of the t the clean fit runs with, 1000 times too small: the
    rule still picks that t (its bound got smaller), the check refuses the value."""
    clean, _ = _fit_searched(_searched())
    data = _entries(cache_dir)
    (key,) = [k for k in data if json.loads(k)[0] == "_allocation_noise_multiplier"
              and json.loads(k)[-1] == clean.n_steps_]
    data[key] *= 1e-3
    (cache_dir / "accounting.json").write_text(json.dumps(data))
    _clear_memory()
    est, caught = _fit_searched(_searched())
    _assert_rejected_once(caught, cache_dir, "_allocation_noise_multiplier")
    assert (est.n_steps_, est.noise_std_, est.epsilon_spent_) == (
        clean.n_steps_, clean.noise_std_, clean.epsilon_spent_)
    np.testing.assert_array_equal(est.coef_, clean.coef_)
    assert _entries(cache_dir)[key] == clean.noise_std_


# ---------------------------------------------------------------------------
# the step rule stops each search once its comparison is decided, and keeps its t
# ---------------------------------------------------------------------------
def _walk_with_finished_searches(n, d, eps, delta):
    """The step rule with every visited t's search run to its end (no cache)."""
    raw = acc._allocation_noise_multiplier.__wrapped__.__wrapped__

    def cost(k):
        t = max(1, math.ceil(n / 2**k))
        return acc.noisy_sgd_allocation_bound(n, d, t, raw(eps, delta, t))

    k0 = k = max(0, round(math.log2(math.sqrt(max(d, 1)))))
    while 2 ** (k + 1) <= n and cost(k + 1) < cost(k):
        k += 1
    if k == k0:
        while k > 0 and cost(k - 1) < cost(k):
            k -= 1
    return max(1, math.ceil(n / 2**k))


@pytest.mark.parametrize("n, d, eps, delta", [(24, 4, 2.0, 1e-3), (60, 2, 1.0, 1e-3), (100, 5, 0.5, 1e-4)])
def test_the_rule_stopping_searches_early_picks_the_t_of_finished_searches(cache_dir, monkeypatch, n, d, eps,
                                                                             delta):
    real = acc.allocation_add_remove_pld
    real.cache_clear()
    calls = []

    def spy(z, t):
        calls.append((z, t))
        return real(z, t)

    monkeypatch.setattr(acc, "allocation_add_remove_pld", spy)
    expected = _walk_with_finished_searches(n, d, eps, delta)
    finished = len(calls)
    real.cache_clear()
    calls.clear()
    assert acc.noisy_sgd_allocation_steps(n, d, eps, delta) == expected
    assert 0 < len(calls) < finished


@pytest.mark.parametrize("args", [(2.0, 1e-3, 3), (1.0, 1e-3, 12)])
def test_every_bracket_of_the_bisection_holds_the_value_it_returns(args):
    search, ok = acc._allocation_bisection(*args), acc._allocation_meets(*args)
    brackets = []
    probe, lo, hi = next(search)
    with pytest.raises(StopIteration) as stop:
        while True:
            brackets.append((lo, hi))
            probe, lo, hi = search.send(ok(probe))
    z = stop.value.value
    assert z == acc._allocation_noise_multiplier.__wrapped__.__wrapped__(*args)
    assert len(brackets) > 5 and all(lo <= z <= hi for lo, hi in brackets)
    assert brackets[-1][1] / brackets[-1][0] < 1.01


def test_a_planted_step_count_is_used_only_among_the_rule_s_candidates(cache_dir):
    """n = 24, d = 4: the rule can reach t = 24, 12, 6, 3 or 2.  A planted t
    among them is used (t is a utility choice) with the noise calibrated at
    it; any other value is ignored and the rule's own t recomputed."""
    clean, _ = _fit_searched(_searched())
    raw = acc._allocation_noise_multiplier.__wrapped__.__wrapped__
    for planted, used in [(7.0, clean.n_steps_), (12.5, clean.n_steps_), (-3.0, clean.n_steps_), (24.0, 24)]:
        _set(cache_dir, "noisy_sgd_allocation_steps", planted)
        est, caught = _fit_searched(_searched())
        assert not caught and est.n_steps_ == used
        assert est.noise_std_ == raw(EPS, DELTA, used)
        assert acc.noisy_sgd_allocation_delta(est.noise_std_, used, EPS) <= DELTA


def _plain_bisection(epsilon, delta, steps):
    """The calibration's bisection as first written: every probe evaluated in turn."""
    def ok(z):
        return acc.noisy_sgd_allocation_delta(z, steps, epsilon) <= delta

    hi = acc._allocation_multiplier_upper_end(epsilon, delta)
    while not ok(hi):
        hi *= 1.0 + 1e-6
    lo = hi
    for _ in range(6):
        lo = lo / 2.0
        if not ok(lo):
            break
    else:
        return lo
    while hi / lo > 1.0 + 2e-3:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@pytest.mark.parametrize("args", [(2.0, 1e-3, 3), (1.0, 1e-3, 12), (0.5, 1e-4, 50), (1.0, 1e-5, 1)])
def test_skipping_the_smallest_halving_leaves_the_calibrated_noise_bit_for_bit(args):
    """The search skips the PLD of a halving when the probe a factor sqrt(2)
    above it fails (monotone in z): the same z as every probe evaluated."""
    raw = acc._allocation_noise_multiplier.__wrapped__.__wrapped__
    assert raw(*args) == _plain_bisection(*args)
