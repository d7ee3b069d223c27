"""privopt.PrivacyLedger: one budget per data set, charged once per outermost release,
refused before any work, composed exactly (pure) or by basic / optimal composition
(approximate), saved to a hash-chained file that two processes may charge at once."""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import os
import pickle
import threading
import time
import warnings
from fractions import Fraction

import numpy as np
import pytest

import privopt
from privopt import audit
from privopt.exceptions import (AccountingError, BudgetExceededError, LedgerFileError, ParameterError,
                                ParameterTypeError, RepeatedReleaseWarning)
from privopt.ledger import optimal_epsilon, release
from privopt.models import zero_one_halfspace

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402

from privopt.baselines import (  # noqa: E402
    DPAGDLogisticRegression,
    DPSGDLogisticRegression,
    MajorityClassClassifier,
    NoisySGDClassifier,
    NonPrivateLogisticRegression,
    ObjectivePerturbationLogisticRegression,
    OutputPerturbationLogisticRegression,
)


def _tiny_model():
    pair = audit.selection_instance()       # W = {-1, 0, 1}, three records
    return zero_one_halfspace(*pair.data(0))


def _binary(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d))
    y = (X[:, 0] == 1).astype(int)
    return X, y


def _unit(n=60, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = (X[:, 0] > X[:, 1]).astype(int)
    return X, y


class _Untouchable:
    """A 'model' or 'data' that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"read {name!r} before the ledger refused")

    def __len__(self):
        raise AssertionError("read the length before the ledger refused")

    def __array__(self, *args, **kwargs):
        raise AssertionError("read the data before the ledger refused")


# ---------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------
def test_three_pure_releases_of_different_kinds_add_exactly():
    ledger = privopt.PrivacyLedger(epsilon=1.0)
    X, y = _binary()
    privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, random_state=0, ledger=ledger)
    OutputPerturbationLogisticRegression(epsilon=0.25, bounds=(0, 1), random_state=0, ledger=ledger).fit(X, y)
    privopt.scoring.PrivateScoringSystem(epsilon=0.125, max_points=2, max_items=2, random_state=0,
                                         ledger=ledger).fit(X, y)
    assert ledger.spent.epsilon == 0.875 and ledger.spent.delta == 0.0
    assert ledger.remaining.epsilon == 0.125 and ledger.remaining.delta == 0.0
    kinds = [(r.what, r.mechanism, r.epsilon, r.delta) for r in ledger.releases]
    assert kinds == [("exponential_mechanism", "exponential_mechanism", 0.5, 0.0),
                     ("OutputPerturbationLogisticRegression.fit", "OutputPerturbationLogisticRegression", 0.25, 0.0),
                     ("PrivateScoringSystem.fit", "PrivateScoringSystem", 0.125, 0.0)]
    assert all(r.when.tzinfo is not None for r in ledger.releases)


def test_pure_epsilons_add_as_the_decimals_they_print_as():
    # float arithmetic gives 0.1 + 0.2 + 0.3 = 0.6000000000000001 and ten 0.1s = 0.9999999999999999
    ledger = privopt.PrivacyLedger(epsilon=1.0)
    for eps in (0.1, 0.2, 0.3):
        ledger.charge("by hand", eps, 0.0, mechanism="laplace")
    assert ledger.spent.epsilon == 0.6
    ten = privopt.PrivacyLedger(epsilon=1.0)
    for _ in range(10):
        ten.charge("by hand", 0.1, 0.0, mechanism="laplace")
    assert ten.spent.epsilon == 1.0 and ten.remaining.epsilon == 0.0
    with pytest.raises(BudgetExceededError):
        ten.charge("one more", 1e-9, 0.0, mechanism="laplace")


def test_a_completed_release_can_be_neither_refunded_nor_settled_and_no_spend_is_negative():
    ledger = privopt.PrivacyLedger(epsilon=1.0)
    for public in ("reserve", "refund", "settle"):      # privopt's own path only, never the caller's
        assert not hasattr(ledger, public)
    first = ledger.charge("first", 0.25)
    with release("by hand", "laplace", lambda: (0.5, 0.0), ledger=ledger) as charge:
        second = charge.record
    for record in (first, second):
        with pytest.raises(AccountingError, match="stays charged"):
            ledger._refund(record)
        with pytest.raises(AccountingError, match="stays charged"):
            ledger._settle(record, 0.0, 0.0)
    assert ledger.spent.epsilon == 0.75
    # an open reservation (its body not run) can be given back, and the right one goes
    third = ledger._reserve("third", "laplace", 0.125, 0.0)
    fourth = ledger._reserve("fourth", "laplace", 0.0625, 0.0)
    ledger._refund(third)
    assert [r.what for r in ledger.releases] == ["first", "by hand", "fourth"] and fourth.entry != third.entry
    for eps, dlt in ((-0.5, 0.0), (math.nan, 0.0), (0.1, -1e-6), (0.1, 2.0)):
        with pytest.raises(ParameterError):
            ledger.charge("bad", eps, dlt)
    assert ledger.spent.epsilon == 0.8125


def test_an_approximate_release_adds_its_delta_and_at_most_its_epsilon():
    ledger = privopt.PrivacyLedger(epsilon=3.0, delta=1e-4)
    X, y = _unit()
    privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, random_state=0, ledger=ledger)
    est = DPSGDLogisticRegression(epsilon=1.0, delta=1e-6, epochs=1, batch_size=16, bounds=(0, 1), random_state=0,
                                  ledger=ledger).fit(X, y)
    assert ledger.spent.delta == 1e-6
    assert ledger.spent.epsilon <= 1.5
    assert est.epsilon_spent_ <= 1.0 and est.delta_spent_ == 1e-6


def test_optimal_composition_of_pure_releases_matches_kairouz_oh_viswanath():
    # [KOV15] Theorem 3.3, k = 10 releases of epsilon 0.5, delta 0: at
    # delta_i = sum_{j < i} C(k, j) (e^{(k-j) e} - e^{(k-2i+j) e}) / (1 + e^e)^k
    # the optimal epsilon is (k - 2i) e.  Worked for i = 1, 2, 3 below.
    k, e = 10, 0.5
    for i, expected in ((1, 4.0), (2, 3.0), (3, 2.0)):
        d = sum(math.comb(k, j) * (math.exp((k - j) * e) - math.exp((k - 2 * i + j) * e))
                for j in range(i)) / (1 + math.exp(e)) ** k
        got = optimal_epsilon([(e, 0.0)] * k, d)
        assert expected - 1e-9 <= got <= expected + 1e-3
    assert optimal_epsilon([(e, 0.0)] * k, 0.0) == pytest.approx(5.0)    # at delta 0: the plain sum
    ledger = privopt.PrivacyLedger(epsilon=10.0)
    for _ in range(k):
        ledger.charge("by hand", e, 0.0, mechanism="laplace")
    assert ledger.spent.epsilon == 5.0
    assert ledger.epsilon_at(0.04102841460951593) == pytest.approx(3.0, abs=1e-3)


def test_composition_against_dp_accounting_never_looser_than_basic():
    dp_accounting = pytest.importorskip("dp_accounting")
    pairs = [(0.3, 1e-6)] * 30
    basic = privopt.PrivacyLedger(epsilon=100.0, delta=1e-3)
    optimal = privopt.PrivacyLedger(epsilon=100.0, delta=1e-3, composition="optimal")
    for eps, dlt in pairs:
        basic.charge("by hand", eps, dlt, mechanism="gaussian")
        optimal.charge("by hand", eps, dlt, mechanism="gaussian")
    assert basic.spent.epsilon == pytest.approx(9.0) and basic.spent.delta == pytest.approx(3e-5)
    assert optimal.spent.delta == basic.spent.delta
    assert optimal.spent.epsilon < basic.spent.epsilon            # many small releases: strictly tighter
    # dp-accounting on its own: the dominating pair of one (0.3, 1e-6) guarantee, self-composed 30 times
    pld = dp_accounting.pld.privacy_loss_distribution
    one = pld.from_privacy_parameters(dp_accounting.pld.common.DifferentialPrivacyParameters(0.3, 1e-6))
    independent = one.self_compose(30).get_epsilon_for_delta(3e-5)
    assert optimal.spent.epsilon == pytest.approx(independent, rel=1e-3)
    # and the pure case: 30 releases of 0.3 at delta 0 are exactly 9 under every composition
    pure = privopt.PrivacyLedger(epsilon=100.0, delta=1e-3, composition="optimal")
    for _ in range(30):
        pure.charge("by hand", 0.3, 0.0, mechanism="laplace")
    assert pure.spent.epsilon == 9.0 and pure.spent.delta == 0.0


# ---------------------------------------------------------------------------
# refusal before any work; refunds; failures stay charged
# ---------------------------------------------------------------------------
def test_over_budget_is_refused_before_any_work_and_leaves_the_ledger_unchanged(monkeypatch):
    ledger = privopt.PrivacyLedger(epsilon=1.0, delta=1e-5)
    ledger.charge("earlier", 0.9, 0.0, mechanism="laplace")
    before = (ledger.spent, ledger.releases)
    # a mechanism never reads its model
    with pytest.raises(BudgetExceededError) as info:
        privopt.exponential_mechanism(_Untouchable(), epsilon=0.5, ledger=ledger)
    message = str(info.value)
    assert "0.9" in message and "0.1" in message and "0.5" in message and "Ask for less" in message
    assert info.value.requested.epsilon == 0.5 and info.value.remaining.epsilon == pytest.approx(0.1)
    with ledger, pytest.raises(BudgetExceededError):
        privopt.opdisc(_Untouchable(), epsilon=0.5, delta=1e-6)
    # a DP-SGD run of a million epochs (minutes of work) is refused at once, its training never entered
    monkeypatch.setattr(DPSGDLogisticRegression, "_fit_private",
                        lambda *a, **k: pytest.fail("DP-SGD ran under an exhausted ledger"))
    X, y = _unit(n=2000, d=5)
    est = DPSGDLogisticRegression(epsilon=0.5, delta=1e-6, epochs=10**6, bounds=(0, 1), ledger=ledger)
    start = time.perf_counter()
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert time.perf_counter() - start < 5.0        # generous on a shared machine; the job takes minutes
    assert not hasattr(est, "coef_")
    assert (ledger.spent, ledger.releases) == before


def test_a_pure_ledger_refuses_an_approximate_release():
    ledger = privopt.PrivacyLedger(epsilon=5.0)
    with pytest.raises(BudgetExceededError, match="pure releases only"):
        privopt.opdisc(_Untouchable(), epsilon=0.5, delta=1e-6, ledger=ledger)
    assert ledger.releases == ()


def test_a_non_private_fit_is_refused_under_a_ledger():
    ledger = privopt.PrivacyLedger(epsilon=5.0)
    X, y = _unit()
    for est in (NonPrivateLogisticRegression(ledger=ledger), MajorityClassClassifier(ledger=ledger),
                OutputPerturbationLogisticRegression(epsilon=0.5, ledger=ledger)):    # bounds from the data
        with pytest.raises(BudgetExceededError, match="not differentially private"):
            est.fit(X, y)
    assert ledger.releases == ()


def _median_model(r):
    """The README's private median of records in [0, 1]: sum_i |w - r_i|."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.w = pyo.Var(bounds=(0, 1))
    m.t = pyo.Var(range(len(r)), bounds=(0, 1))
    m.above = pyo.Constraint(range(len(r)), rule=lambda m, i: m.t[i] >= m.w - float(r[i]))
    m.below = pyo.Constraint(range(len(r)), rule=lambda m, i: m.t[i] >= float(r[i]) - m.w)
    m.loss = pyo.Objective(expr=sum(m.t.values()))
    return m


def test_public_bad_arguments_cost_nothing_and_read_nothing():
    ledger = privopt.PrivacyLedger(epsilon=2.0, delta=1e-3)
    with ledger:
        for call in (lambda: privopt.exponential_mechanism(_Untouchable(), epsilon=-1.0),
                     lambda: privopt.exponential_mechanism(_Untouchable(), epsilon=0.5, method="no such method"),
                     lambda: privopt.exponential_mechanism(_Untouchable(), epsilon=0.5, path="scored"),
                     lambda: privopt.opdisc(_Untouchable(), epsilon=0.5, delta=1e-6, solver="no such solver"),
                     lambda: privopt.opdisc(_Untouchable(), epsilon=0.5, delta=1e-6, calibration="guess"),
                     lambda: privopt.opsamp(_Untouchable(), epsilon=0.5, delta=1e-6, time_limit=-1),
                     lambda: privopt.opsamp(_Untouchable(), epsilon=0.5, delta=1e-6, n_oracle_calls=0),
                     lambda: privopt.rspm(_Untouchable(), epsilon=0.5, noise="uniform"),
                     lambda: privopt.mixture_selection(_Untouchable(), epsilon=0.5, beta=2.0),
                     lambda: privopt.scoring.select_scoring_system(_Untouchable(), None, epsilon=0.5,
                                                                    method="best")):
            with pytest.raises((ParameterError, ParameterTypeError, privopt.exceptions.UnknownSolverError)):
                call()
    X, y = _unit()
    for est in (OutputPerturbationLogisticRegression(epsilon=0.5, bounds=(0, 1), alpha=-1.0, ledger=ledger),
                DPSGDLogisticRegression(epsilon=0.5, delta=1e-6, bounds=(0, 1), epochs=0, ledger=ledger),
                privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), mechanism="magic", ledger=ledger),
                privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), solver="no such solver",
                                                   ledger=ledger),
                privopt.scoring.PrivateScoringSystem(epsilon=0.5, risk_share=1.5, ledger=ledger)):
        with pytest.raises((ParameterError, ParameterTypeError, privopt.exceptions.UnknownSolverError)):
            est.fit(X, y)
    assert ledger.releases == () and ledger.spent.epsilon == 0.0


def test_a_refusal_decided_after_the_data_is_read_is_charged():
    # the README's private median, with a loss_range its loss leaves on one data set and not on its neighbour:
    # the refusal is an outcome that depends on the data, so it costs what a release costs
    grid = [g / 4 for g in range(5)]
    for records, refused in ((np.full(10, 0.5), False), (np.zeros(10), True)):
        ledger = privopt.PrivacyLedger(epsilon=5.0)
        with (pytest.raises(privopt.exceptions.ModelError) if refused else contextlib.nullcontext()):
            privopt.exponential_mechanism(_median_model(records), weights="w", grid=grid, epsilon=1.0,
                                          loss_range=(0, 0.6), n_samples=len(records), path="bounded",
                                          random_state=0, ledger=ledger)
        assert ledger.spent.epsilon == 1.0 and len(ledger.releases) == 1


def test_any_failure_after_the_reservation_stays_charged(monkeypatch):
    ledger = privopt.PrivacyLedger(epsilon=3.0)
    for error in (RuntimeError("a failure after the noise was drawn"), MemoryError(),
                  ParameterError("a refusal after the data was read", "X"), KeyboardInterrupt()):
        with pytest.raises(type(error)):
            with release("by hand", "laplace", lambda: (0.5, 0.0), ledger=ledger):
                raise error
    assert ledger.spent.epsilon == 2.0 and len(ledger.releases) == 4
    # a memory error inside a mechanism, after its model was read
    from privopt.mechanisms.selection import exponential as selection

    def out_of_memory(task):
        raise MemoryError
    monkeypatch.setattr(selection, "_plan", out_of_memory)
    with pytest.raises(MemoryError):
        privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, random_state=0, ledger=ledger)
    assert ledger.spent.epsilon == 2.5
    with pytest.raises(ParameterTypeError, match="ledger"):
        privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, ledger="my budget")
    assert ledger.spent.epsilon == 2.5


# ---------------------------------------------------------------------------
# charged once per outermost release
# ---------------------------------------------------------------------------
def test_the_warm_start_estimator_is_one_release_of_its_total_epsilon():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(300, 2))
    y = (X[:, 0] - X[:, 1] + rng.normal(0, 0.3, size=300) > 0).astype(int)
    ledger = privopt.PrivacyLedger(epsilon=2.0)
    with ledger:
        clf = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), warm_start=True, random_state=0,
                                                 mechanism="permute_and_flip").fit(X, y)
    assert clf.warm_start_ is not None           # objective perturbation, then mixture selection, both ran
    assert [(r.what, r.epsilon, r.delta) for r in ledger.releases] == [("PrivateHalfspaceClassifier.fit", 2.0, 0.0)]
    assert clf.epsilon_spent_ == 2.0 and clf.delta_spent_ == 0.0


def test_nested_mechanism_calls_and_the_decorator_charge_once():
    ledger = privopt.PrivacyLedger(epsilon=3.0)
    with release("two selections as one release", "exponential", lambda: (1.0, 0.0), ledger=ledger):
        privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, random_state=0, ledger=ledger)
        privopt.exponential_mechanism(_tiny_model(), epsilon=0.5, random_state=1)
    assert [r.epsilon for r in ledger.releases] == [1.0]
    built = []

    @privopt.private("exponential", epsilon=0.5, random_state=0, ledger=ledger)
    def build(data):
        built.append(data)
        return _tiny_model()

    build("data")
    assert [r.epsilon for r in ledger.releases] == [1.0, 0.5]
    assert ledger.releases[-1].what == "@private build"
    ledger.charge("fill", 1.5, 0.0, mechanism="laplace")
    with pytest.raises(BudgetExceededError):
        build("data")
    assert built == ["data"]                      # refused before the builder read the data


def test_auto_under_a_ledger_without_delta_chooses_a_pure_mechanism():
    X, y = _binary(n=30)
    pure = privopt.PrivacyLedger(2.0)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0, ledger=pure).fit(X, y)
    assert clf.mechanism_ in ("permute_and_flip", "exponential")
    assert (pure.spent.epsilon, pure.spent.delta) == (1.0, 0.0)
    # where auto's public rule picks OPDisc (a time limit selection cannot meet), the ledger holds it to selection
    rule = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), time_limit=1e-9)
    assert rule._pure_only(pure) and not rule._pure_only(privopt.PrivacyLedger(2.0, delta=1e-3))
    assert not privopt.PrivateHalfspaceClassifier(epsilon=1.0, calibration="paper")._pure_only(pure)
    with pytest.raises(BudgetExceededError):      # OPDisc asked for by name still needs a delta
        privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), mechanism="opdisc", ledger=pure).fit(X, y)
    assert len(pure.releases) == 1


def test_auto_reserves_opdisc_delta_and_settles_to_the_pure_release():
    X, y = _binary(n=30)
    ledger = privopt.PrivacyLedger(epsilon=2.0, delta=1e-2)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0, ledger=ledger).fit(X, y)
    assert clf.mechanism_ in ("permute_and_flip", "exponential")
    assert ledger.spent.epsilon == 1.0 and ledger.spent.delta == 0.0
    opd = privopt.PrivateHalfspaceClassifier(epsilon=0.5, mechanism="opdisc", bounds=(0, 1), random_state=0,
                                             ledger=ledger).fit(X, y)
    assert opd.delta_spent_ == 1 / 30**2 and ledger.spent.delta == pytest.approx(1 / 30**2)


def test_with_ledger_is_per_context_and_thread_safe():
    ledger = privopt.PrivacyLedger(epsilon=1.0)
    seen = []
    with ledger:
        assert privopt.ledger.current_ledger() is ledger
        t = threading.Thread(target=lambda: seen.append(privopt.ledger.current_ledger()))
        t.start()
        t.join()
    assert seen == [None] and privopt.ledger.current_ledger() is None
    # one ledger entered by two threads, blocks interleaved: the first in leaves first, each its own block
    first_in, second_in, first_out, errors = threading.Event(), threading.Event(), threading.Event(), []

    def block(me):
        try:
            if me == 1:
                first_in.wait()
            with ledger:
                (first_in if me == 0 else second_in).set()
                if me == 0:
                    second_in.wait()
                else:
                    first_out.wait()
                assert privopt.ledger.current_ledger() is ledger
            if me == 0:
                first_out.set()
            assert privopt.ledger.current_ledger() is None
        except Exception as exc:          # noqa: BLE001 - reported below
            errors.append(exc)
            first_out.set()

    pair = [threading.Thread(target=block, args=(me,)) for me in (0, 1)]
    for t in pair:
        t.start()
    for t in pair:
        t.join(timeout=60)
    assert errors == []

    def spend():
        for _ in range(40):
            try:
                ledger.charge("thread", 0.01, 0.0, mechanism="laplace")
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=spend) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger.releases) == 100 and ledger.spent.epsilon == 1.0


# ---------------------------------------------------------------------------
# one spelling of the spend; repeated fits
# ---------------------------------------------------------------------------
FAST = {
    DPSGDLogisticRegression: dict(epochs=1, batch_size=16, delta=1e-5),
    DPAGDLogisticRegression: dict(splits=10, delta=1e-5),
    NoisySGDClassifier: dict(radius=20.0, delta=1e-5),
    ObjectivePerturbationLogisticRegression: dict(alpha=1e-3),
    OutputPerturbationLogisticRegression: dict(alpha=1e-3),
}


@pytest.mark.parametrize("cls", list(FAST), ids=lambda c: c.__name__)
def test_every_baseline_reports_epsilon_spent_and_delta_spent(cls):
    X, y = _unit()
    ledger = privopt.PrivacyLedger(epsilon=1.0, delta=1e-4)
    est = cls(epsilon=1.0, bounds=(0, 1), random_state=0, ledger=ledger, **FAST[cls]).fit(X, y)
    assert 0 < est.epsilon_spent_ <= 1.0 and est.delta_spent_ == FAST[cls].get("delta", 0.0)
    assert ledger.spent.epsilon == 1.0 and ledger.spent.delta == FAST[cls].get("delta", 0.0)
    if "delta" in FAST[cls]:
        with pytest.warns(DeprecationWarning, match="delta_spent_"):
            assert est.delta_ == est.delta_spent_


def test_the_scoring_system_and_the_halfspace_estimators_report_the_spend():
    X, y = _binary()
    card = privopt.scoring.PrivateScoringSystem(epsilon=1.0, max_points=2, max_items=2, random_state=0).fit(X, y)
    assert card.epsilon_spent_ == 1.0 and card.delta_spent_ == 0.0
    with pytest.warns(DeprecationWarning, match="epsilon_spent_"):
        assert card.epsilon_ == 1.0
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    assert clf.epsilon_spent_ == clf.result_.epsilon and clf.delta_spent_ == clf.result_.delta
    exact = privopt.ZeroOneHalfspaceClassifier(bounds=(0, 1)).fit(X, y)
    assert exact.epsilon_spent_ == math.inf and exact.delta_spent_ == 0.0


def test_a_clone_fitted_again_on_the_same_data_warns_and_is_charged_again():
    ledger = privopt.PrivacyLedger(epsilon=2.0)
    X, y = _unit()
    est = OutputPerturbationLogisticRegression(epsilon=0.25, bounds=(0, 1), random_state=0, ledger=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RepeatedReleaseWarning)
        est.fit(X, y)
        ObjectivePerturbationLogisticRegression(epsilon=0.25, bounds=(0, 1), ledger=ledger).fit(X, y)  # another model
        clone(est).fit(X[:30], y[:30])                                                                  # other data
    twin = clone(est)
    assert twin.ledger is ledger                    # a clone keeps the account, never a copy of it
    with pytest.warns(RepeatedReleaseWarning, match="charged again") as record:
        twin.fit(X, y)
    assert record[0].filename == __file__           # points at the caller's line
    assert ledger.spent.epsilon == 1.0


def test_cross_validation_charges_every_fit():
    from sklearn.model_selection import cross_val_score

    ledger = privopt.PrivacyLedger(epsilon=2.0)
    X, y = _unit(n=90)
    est = OutputPerturbationLogisticRegression(epsilon=0.25, bounds=(0, 1), random_state=0, ledger=ledger)
    cross_val_score(est, X, y, cv=3)
    assert len(ledger.releases) == 3 and ledger.spent.epsilon == 0.75


# ---------------------------------------------------------------------------
# a saved ledger
# ---------------------------------------------------------------------------
def test_a_saved_ledger_survives_reopening_and_stores_nothing_of_the_data(tmp_path):
    path = tmp_path / "adult.ledger"
    ledger = privopt.PrivacyLedger.open(path, epsilon=2.0, delta=1e-5)
    X, y = _unit()
    OutputPerturbationLogisticRegression(epsilon=0.5, bounds=(0, 1), random_state=0, ledger=ledger).fit(X, y)
    ledger.charge("by hand", 0.25, 0.0, mechanism="laplace")
    again = privopt.PrivacyLedger.open(path)
    assert again.budget == ledger.budget and again.spent.epsilon == 0.75
    assert [r.entry for r in again.releases] == [r.entry for r in ledger.releases]
    text = path.read_text()
    for value in np.concatenate([X.ravel()[:5], [X.sum(), X.mean()]]):
        assert repr(float(value)) not in text
    assert pickle.loads(pickle.dumps(again)).spent.epsilon == 0.75
    with release("auto", "opdisc or selection", lambda: (0.5, 1e-6), ledger=again) as charge:
        with pytest.raises(AccountingError):
            charge.settle(0.75, 0.0)               # never raised after the fact
        charge.settle(0.5, 0.0)                    # settled down while open, in the file too
    assert privopt.PrivacyLedger.open(path).spent == privopt.ledger.Spend(1.25, 0.0)
    with pytest.raises(TypeError, match="fork its budget"):
        pickle.dumps(privopt.PrivacyLedger(epsilon=1.0))
    with pytest.raises(LedgerFileError, match="epsilon=2.0"):
        privopt.PrivacyLedger.open(path, epsilon=5.0)


@pytest.mark.parametrize("edit", ["lower an epsilon", "drop a line", "reorder", "garbage"])
def test_a_tampered_file_is_refused(tmp_path, edit):
    path = tmp_path / "l.jsonl"
    ledger = privopt.PrivacyLedger.open(path, epsilon=1.0)
    for eps in (0.25, 0.5):
        ledger.charge("by hand", eps, 0.0, mechanism="laplace")
    lines = path.read_text().splitlines()
    if edit == "lower an epsilon":
        entry = json.loads(lines[2])
        entry["epsilon"] = "0.0"
        lines[2] = json.dumps(entry, sort_keys=True)
    elif edit == "drop a line":
        del lines[1]
    elif edit == "reorder":
        lines[1], lines[2] = lines[2], lines[1]
    else:
        lines.append("not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LedgerFileError, match="was edited"):
        privopt.PrivacyLedger.open(path)
    with pytest.raises(LedgerFileError):
        ledger.charge("after the edit", 0.1, 0.0, mechanism="laplace")


def test_an_open_ledger_notices_a_truncated_file(tmp_path):
    path = tmp_path / "l.jsonl"
    ledger = privopt.PrivacyLedger.open(path, epsilon=1.0)
    ledger.charge("by hand", 0.75, 0.0, mechanism="laplace")
    path.write_text(path.read_text().splitlines()[0] + "\n")      # a valid chain: only the budget line
    with pytest.raises(LedgerFileError, match="truncated"):
        ledger.charge("after the truncation", 0.5, 0.0, mechanism="laplace")


def _charge_file(path, barrier, out):
    ledger = privopt.PrivacyLedger.open(path)
    barrier.wait()
    charged = 0
    for _ in range(8):
        try:
            ledger.charge("worker", 0.1, 0.0, mechanism="laplace")
            charged += 1
        except BudgetExceededError:
            pass
    out.put(charged)


def _read_file(path, barrier, out):
    ledger = privopt.PrivacyLedger.open(path)
    barrier.wait()
    seen = [ledger.spent.epsilon for _ in range(50)]      # under a shared lock: never half a line
    out.put(("reader", seen == sorted(seen)))


def test_two_processes_charging_one_file_never_exceed_its_budget(tmp_path):
    path = tmp_path / "shared.jsonl"
    privopt.PrivacyLedger.open(path, epsilon=1.2)
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(3), ctx.Queue()
    workers = [ctx.Process(target=_charge_file, args=(str(path), barrier, out)) for _ in range(2)]
    reader = ctx.Process(target=_read_file, args=(str(path), barrier, out))
    for w in workers + [reader]:
        w.start()
    results = [out.get(timeout=120) for _ in range(3)]
    assert ("reader", True) in results
    counts = [r for r in results if not isinstance(r, tuple)]
    reader.join(timeout=120)
    assert reader.exitcode == 0
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    ledger = privopt.PrivacyLedger.open(path)
    assert sum(counts) == 12 == len(ledger.releases)       # 16 attempts, 12 fit in 1.2
    assert ledger.spent.epsilon == 1.2
    assert all(c > 0 for c in counts)


def test_the_command_line_shows_a_saved_ledger(tmp_path, capsys):
    from privopt.cli import main

    path = tmp_path / "l.jsonl"
    ledger = privopt.PrivacyLedger.open(path, epsilon=1.0, delta=1e-6)
    ledger.charge("PrivateScoringSystem.fit", 0.25, 0.0, mechanism="PrivateScoringSystem")
    assert main(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert "PrivateScoringSystem.fit" in out and "0.25" in out and "0.75" in out
    head = str(ledger.head)
    assert f"head:      {head}" in out
    ledger.charge("later", 0.125)
    assert main(["ledger", str(path), "--expect-head", head]) == 0          # extends the anchor
    assert "extends the expected head" in capsys.readouterr().out
    assert main(["ledger", str(path), "--expect-head", "2:" + "0" * 64]) == 2
    assert "does not extend the anchor" in capsys.readouterr().err
    path.write_text(path.read_text().replace("0.25", "0.05"))
    assert main(["ledger", str(path)]) == 2
    assert "was edited" in capsys.readouterr().err


def test_warnings_of_a_charged_fit_still_point_at_the_callers_line():
    from privopt.exceptions import ClippedFeaturesWarning

    X, y = _unit()
    X[0, 0] = 2.0          # outside the declared bounds
    ledger = privopt.PrivacyLedger(epsilon=5.0)
    for est in (OutputPerturbationLogisticRegression(epsilon=0.5, bounds=(0, 1), random_state=0, ledger=ledger),
                NonPrivateLogisticRegression(bounds=(0, 1)),
                privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), mechanism="permute_and_flip",
                                                   random_state=0, ledger=ledger)):
        with pytest.warns(ClippedFeaturesWarning) as record:
            est.fit(X, y)
        assert {w.filename for w in record if w.category is ClippedFeaturesWarning} == {__file__}


def test_a_mechanisms_warnings_point_at_the_callers_line_through_the_ledgers_hook():
    from privopt.exceptions import NoiseDisclosureWarning, WeakGuaranteeWarning

    with pytest.warns(Warning) as record:
        privopt.opdisc(_tiny_model(), epsilon=1.0, delta=0.5, return_noise=True, random_state=0,
                       ledger=privopt.PrivacyLedger(epsilon=1.0, delta=0.9))
    mine = [w for w in record if w.category in (NoiseDisclosureWarning, WeakGuaranteeWarning)]
    assert len(mine) == 2 and {w.filename for w in mine} == {__file__}


def test_a_mechanism_warns_at_the_callers_line_through_the_ledger_decorator():
    from privopt.datasets import make_planted_halfspace
    from privopt.models import hinge_halfspace, rspm_halfspace

    d = make_planted_halfspace(60, 2, n_test=5, feature_values=(-1, 1), noise=0.1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        privopt.rspm(rspm_halfspace(d.X_train, d.y_train), epsilon=1.0, delta=0.1, random_state=0)
        privopt.opsamp(hinge_halfspace(d.X_train, d.y_train, x_bound=1.0), epsilon=1.0, delta=1e-4,
                       n_oracle_calls=3, random_state=0, progress=False)
    kinds = {w.category.__name__: w.filename for w in seen}
    assert {"DeprecationWarning", "NoiseDominatesWarning"} <= set(kinds)
    assert all(f == __file__ for f in kinds.values()), kinds


# ---------------------------------------------------------------------------
# a fork cannot copy a budget
# ---------------------------------------------------------------------------
def _fit_in_worker(seed):
    X, y = _unit(seed=seed)
    try:
        OutputPerturbationLogisticRegression(epsilon=0.5, bounds=(0, 1), random_state=seed).fit(X, y)
    except privopt.exceptions.LedgerProcessError as exc:
        return "refused: " + str(exc)
    return "released"


def test_an_in_memory_ledger_refuses_to_be_charged_in_a_forked_process(tmp_path):
    ctx = multiprocessing.get_context("fork")
    with privopt.PrivacyLedger(epsilon=1.0) as ledger:
        with ctx.Pool(2) as pool:
            outcomes = pool.map(_fit_in_worker, range(4))
        assert all(o.startswith("refused") and "PrivacyLedger.open" in o for o in outcomes), outcomes
        assert ledger.spent.epsilon == 0.0
        _fit_in_worker(0)                      # the parent's own fit is charged as before
    assert ledger.spent.epsilon == 0.5
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                               # the child: its copy of the ledger must not charge
        try:
            ledger.charge("child", 0.5)
            os.write(write, b"charged")
        except privopt.exceptions.LedgerProcessError:
            os.write(write, b"refused")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 16) == b"refused"
    ledger.charge("parent", 0.5)               # the parent still has its last 0.5
    assert ledger.remaining.epsilon == 0.0
    # a file ledger is shared by every process: the child's charge is the parent's too
    saved = privopt.PrivacyLedger.open(tmp_path / "l.ledger", epsilon=1.0)
    pid = os.fork()
    if pid == 0:
        try:
            saved.charge("child", 0.75)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert saved.spent.epsilon == 0.75
    with pytest.raises(BudgetExceededError):
        saved.charge("parent", 0.5)


# ---------------------------------------------------------------------------
# a saved ledger against rollback, truncation and a crash mid-write
# ---------------------------------------------------------------------------
def _saved(tmp_path, charges=(0.25, 0.25)):
    path = tmp_path / "data.ledger"
    ledger = privopt.PrivacyLedger.open(path, epsilon=1.0)
    for eps in charges:
        ledger.charge("by hand", eps)
    return path, ledger


def test_an_older_copy_or_a_cut_file_is_refused_by_a_fresh_open(tmp_path):
    path, ledger = _saved(tmp_path, charges=(0.25,))
    older = path.read_bytes()
    ledger.charge("later", 0.5)
    assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.75
    full = path.read_bytes()
    path.write_bytes(older)                       # an older copy: a valid chain, one release fewer
    with pytest.raises(LedgerFileError, match="older copy"):
        privopt.PrivacyLedger.open(path)
    path.write_bytes(b"".join(full.splitlines(keepends=True)[:-1]))   # its last line cut
    with pytest.raises(LedgerFileError, match="truncated"):
        privopt.PrivacyLedger.open(path)
    path.write_bytes(full)
    assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.75
    (tmp_path / "data.ledger.head").unlink()       # a missing head is refused too
    with pytest.raises(LedgerFileError, match="head .* is missing"):
        privopt.PrivacyLedger.open(path)


def test_an_anchor_kept_elsewhere_catches_an_older_file_and_head_pair(tmp_path):
    path, ledger = _saved(tmp_path, charges=(0.25,))
    head_path = tmp_path / "data.ledger.head"
    old_pair = (path.read_bytes(), head_path.read_bytes())
    ledger.charge("later", 0.5)
    anchor = str(ledger.head)
    assert anchor.startswith("3:") and len(anchor) == 2 + 64
    ledger.check_anchor(anchor)
    privopt.PrivacyLedger.open(path).charge("after the anchor", 0.125)
    privopt.PrivacyLedger.open(path).check_anchor(anchor)     # a file that extends the anchor passes
    path.write_bytes(old_pair[0])
    head_path.write_bytes(old_pair[1])
    older = privopt.PrivacyLedger.open(path)                 # the pair is consistent: only the anchor sees it
    assert older.spent.epsilon == 0.25
    with pytest.raises(LedgerFileError, match="does not extend the anchor"):
        older.check_anchor(anchor)
    with pytest.raises(ParameterError, match="anchor"):
        older.check_anchor("3:not a hash")


def test_a_line_cut_by_a_crash_is_dropped_with_a_warning_and_the_file_repaired(tmp_path):
    path, ledger = _saved(tmp_path)
    whole = path.read_bytes()
    with open(path, "ab") as handle:               # a crash in the middle of writing a charge
        handle.write(b'{"delta": "0.0", "epsilon": "0.5", "kind": "cha')
    with pytest.warns(privopt.exceptions.LedgerRepairWarning, match="cut short"):
        again = privopt.PrivacyLedger.open(path)          # a read: the line is dropped, the file left as it is
    assert again.spent.epsilon == 0.5 and path.read_bytes().startswith(whole + b'{"delta"')
    again.charge("after the repair", 0.25)                 # a write cuts it, then appends
    assert path.read_bytes().startswith(whole + b'{"delta": "0.0", "epsilon": "0.25"')
    assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.75
    # a crash after a complete entry, before its head was written: the entry is kept (never less spent)
    head_path = tmp_path / "data.ledger.head"
    old_head = head_path.read_bytes()
    again.charge("its head lost", 0.125)
    head_path.write_bytes(old_head)
    assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.875


@pytest.mark.parametrize("where", ["a folder", "a missing folder", "a binary file", "a text file", "no file"])
def test_bad_paths_are_clear_errors_and_a_read_creates_nothing(tmp_path, where, capsys):
    from privopt.cli import main

    path = {"a folder": tmp_path, "a missing folder": tmp_path / "nowhere" / "data.ledger",
            "a binary file": tmp_path / "data.bin", "a text file": tmp_path / "data.bin",
            "no file": tmp_path / "missing.ledger"}[where]
    content = {"a binary file": bytes(range(256)) * 4, "a text file": b"notes\nwithout a last newline"}.get(where)
    if content is not None:
        path.write_bytes(content)
    expected = {"a folder": "is a folder", "a missing folder": "does not exist", "a binary file": "not text",
                "a text file": "not a JSON entry", "no file": "no ledger at"}[where]
    with pytest.raises(LedgerFileError, match=expected):
        privopt.PrivacyLedger.open(path)
    if where != "no file":
        with pytest.raises(LedgerFileError, match=expected):
            privopt.PrivacyLedger.open(path, epsilon=1.0)
    assert main(["ledger", str(path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["data.bin"] if content is not None else [])
    if content is not None:
        assert path.read_bytes() == content             # never repaired: it is not a ledger


def test_a_fit_on_no_rows_or_a_sparse_matrix_is_refused_before_the_reservation():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    ledger = privopt.PrivacyLedger(epsilon=2.0, delta=1e-3)
    X, y = _unit()
    for est in (OutputPerturbationLogisticRegression(epsilon=0.5, bounds=(0, 1), ledger=ledger),
                privopt.PrivateHalfspaceClassifier(epsilon=0.5, bounds=(0, 1), ledger=ledger),
                privopt.scoring.PrivateScoringSystem(epsilon=0.5, ledger=ledger)):
        with pytest.raises(ParameterError, match="no rows"):
            est.fit(X[:0], y[:0])
        with pytest.raises(ParameterTypeError, match="toarray"):
            est.fit(scipy_sparse.csr_matrix(X), y)
    assert ledger.releases == ()


# ---------------------------------------------------------------------------
# composition that scales with the releases
# ---------------------------------------------------------------------------
def test_a_charge_composes_one_release_onto_the_ones_before(monkeypatch):
    ledger = privopt.PrivacyLedger(epsilon=700.0, delta=0.5, composition="optimal")
    pairs = [(0.02 + 1e-3 * i, 1e-7) for i in range(30)]
    for eps, dlt in pairs[:29]:
        ledger.charge("by hand", eps, dlt)
    with pytest.raises(BudgetExceededError):           # a refused charge leaves the cache usable
        ledger.charge("too much", 700.0, 0.0)
    pld_type = type(ledger._composer._kept[0].pld)
    calls, real = [], pld_type.compose
    monkeypatch.setattr(pld_type, "compose", lambda self, other, *a, **k: calls.append(1) or real(self, other, *a, **k))
    ledger.charge("the 30th", *pairs[29])
    spent = ledger.spent
    assert len(calls) == 1
    assert ledger._composer._kept[0].interval == privopt.ledger.PLD_INTERVAL     # not coarsened by the refusal
    monkeypatch.setattr(pld_type, "compose", real)
    # the same upper bound as composing every release at once (dp-accounting, pessimistic), never above basic
    once = optimal_epsilon(pairs, spent.delta)
    assert once - 1e-9 <= spent.epsilon <= once * 1.001 and spent.epsilon < sum(e for e, _ in pairs)
    assert spent.delta == pytest.approx(30e-7)


def test_many_charges_keep_exact_sums_and_an_upper_bound_when_the_grid_coarsens():
    basic = privopt.PrivacyLedger(epsilon=700.0, delta=0.5)
    optimal = privopt.PrivacyLedger(epsilon=700.0, delta=0.5, composition="optimal")
    pairs = [(0.2 + 0.001 * i, 1e-6) for i in range(40)]
    for eps, dlt in pairs:
        basic.charge("by hand", eps, dlt)
        optimal.charge("by hand", eps, dlt)
    exact = sum(Fraction(repr(e)) for e, _ in pairs)
    assert basic.spent.epsilon == float(exact) and optimal.spent.delta == basic.spent.delta
    assert optimal._composer._kept[0].interval > privopt.ledger.PLD_INTERVAL    # the grid coarsened on the way
    once = optimal_epsilon(pairs, optimal.spent.delta)                    # at the finest grid
    assert once <= optimal.spent.epsilon <= once * 1.01 < basic.spent.epsilon


def test_a_ledger_written_before_heads_is_read_and_gets_its_head_at_the_next_write(tmp_path):
    from privopt.ledger import _entry_hash

    path = tmp_path / "old.ledger"
    entries, prev = [], "0" * 64
    for entry in ({"kind": "budget", "format": "privopt-ledger/1", "epsilon": "1.0", "delta": "0.0", "when": "t"},
                  {"kind": "charge", "what": "fit", "mechanism": "m", "epsilon": "0.25", "delta": "0.0",
                   "when": "2026-01-01T00:00:00+00:00"}):
        entry["prev"] = prev
        entry["hash"] = prev = _entry_hash(entry)
        entries.append(json.dumps(entry, sort_keys=True))
    path.write_text("\n".join(entries) + "\n")
    os.chmod(path, 0o444)                                   # a read needs no write access
    try:
        assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.25
    finally:
        os.chmod(path, 0o644)
    assert not (tmp_path / "old.ledger.head").exists()
    ledger = privopt.PrivacyLedger.open(path)
    ledger.charge("later", 0.5)
    assert (tmp_path / "old.ledger.head").exists() and str(ledger.head).startswith("3:")
    assert privopt.PrivacyLedger.open(path).spent.epsilon == 0.75


def test_valid_calls_of_every_mechanism_pass_their_public_checks_and_are_charged_once():
    from privopt.datasets import make_planted_halfspace
    from privopt.models import hinge_halfspace, rspm_halfspace

    d = make_planted_halfspace(40, 2, n_test=5, feature_values=(-1, 1), noise=0.1)
    X01, y01 = _binary(n=30)
    ledger = privopt.PrivacyLedger(epsilon=10.0, delta=1e-2)
    with ledger, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        privopt.rspm(rspm_halfspace(d.X_train, d.y_train), epsilon=1.0, random_state=0)
        privopt.opsamp(hinge_halfspace(d.X_train, d.y_train, x_bound=1.0), epsilon=1.0, delta=1e-4,
                       n_oracle_calls=3, random_state=0, progress=False)
        privopt.opdisc(_tiny_model(), epsilon=1.0, delta=1e-3, solver="auto", random_state=0)
        privopt.exponential_mechanism(_tiny_model(), epsilon=1.0, solver="enumerate", random_state=0)
        privopt.mixture_selection([_tiny_model(), _tiny_model()], epsilon=1.0, random_state=0)
        privopt.scoring.select_scoring_system(X01, y01, epsilon=1.0, max_points=2, max_items=2, random_state=0)
    assert [r.what for r in ledger.releases] == ["rspm", "opsamp", "opdisc", "exponential_mechanism",
                                                 "mixture_selection", "select_scoring_system"]
    assert ledger.spent.epsilon == 6.0


def test_bounds_none_is_decided_from_the_type_of_x_not_from_its_values():
    # whether a float X holds whole numbers is a property of the data: a neighbour with one fractional value
    # must meet the same answer, so under a ledger only an integer-typed X is used as it is
    X, y = _binary(n=30)
    ledger = privopt.PrivacyLedger(epsilon=5.0)
    neighbour = X.astype(float)
    neighbour[0, 0] = 0.5
    for data in (X.astype(float), neighbour):
        with pytest.raises(BudgetExceededError, match="not differentially private"):
            privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=None, random_state=0, ledger=ledger).fit(data, y)
    assert ledger.releases == ()
    privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=None, random_state=0, ledger=ledger).fit(X, y)
    assert ledger.spent.epsilon == 1.0
