"""RSPM in the estimator on many real-valued features (issue 29, item 5): where
its MILP is predicted not to be certified within ``time_limit``, ``fit``
refuses before anything is fitted or solved, instead of spending the limit and
raising NotCertifiedError in every fold of a cross-validation."""

from __future__ import annotations

import importlib
import time
import warnings

import numpy as np
import pytest

from privopt.exceptions import ParameterError, PrivacyLeakWarning
from privopt.mechanisms.rspm import (RSPM_HARD_RECORDS_PER_NOISE, RSPM_HARD_SIZE, RSPM_MEASURED_SECONDS,
                                     rspm_outlook)

from tests.conftest import require_solver

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer  # noqa: E402

from privopt.estimators import PrivateHalfspaceClassifier  # noqa: E402


class _Solved(Exception):
    pass


@pytest.fixture
def no_solve(monkeypatch):
    """Any RSPM run (noise, clone, solve) fails the test."""
    mech = importlib.import_module("privopt.mechanisms")

    def boom(*a, **k):
        raise _Solved("RSPM ran")

    monkeypatch.setitem(mech.MECHANISMS, "rspm", boom)


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


# --- the rule, on the calibration cells of benchmarks/results/rspm_time.md ------------

@pytest.mark.parametrize("d, n, epsilon, hard", [
    (11, 569, 4.0, False),    # breast cancer, 10 features: certified in about 10 s at epsilon 1, 2, 4
    (16, 569, 1.0, False),    # certified in 9 to 15 s
    (21, 569, 1.0, False),    # certified in 5 to 13 s
    (16, 569, 2.0, True),     # not certified in 60 s; given 600 s, certified in 213 s
    (16, 569, 4.0, True),
    (31, 569, 4.0, True),     # the case: 120 s, gap 64
    (31, 569, 2.0, True),
    (11, 2000, 1.0, True),    # make_classification, n = 2000: not certified in 60 s (gap 426)
])
def test_outlook_on_calibration_cells(d, n, epsilon, hard):
    got, reason = rspm_outlook(d, n, epsilon)
    assert got is hard
    assert f"d = {d}" in reason and f"n = {n:,}" in reason


def test_outlook_thresholds_are_the_documented_ones():
    assert RSPM_HARD_SIZE == 9_000 and RSPM_HARD_RECORDS_PER_NOISE == 9.0 and RSPM_MEASURED_SECONDS == 120.0
    # more noise (smaller epsilon) or fewer weights leave the predicted region
    assert rspm_outlook(31, 569, 4.0)[0] and not rspm_outlook(31, 569, 1.0)[0]
    assert not rspm_outlook(15, 569, 4.0)[0]


# --- the estimator ------------------------------------------------------------------

def test_breast_cancer_at_epsilon_4_is_refused_before_anything(no_solve, cancer):
    """The issue's call: refused in well under a second, naming time_limit and the
    fixes, with nothing fitted and the user's arrays untouched."""
    X, y = cancer
    X0, y0 = X.copy(), y.copy()
    clf = PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)   # refused before bounds are inferred from the data
        with pytest.raises(ParameterError) as err:
            clf.fit(X, y)
    assert time.perf_counter() - start < 5.0
    assert err.value.parameter == "time_limit"
    msg = str(err.value)
    assert msg.startswith("time_limit: RSPM's MILP over {-1, 0, 1}^31 is predicted NOT to be certified")
    for fix in ("mechanism='auto'", "at most 14 features", "smaller epsilon (below 1.96", "time_limit=None",
                "Nothing was solved"):
        assert fix in msg, fix
    for attr in ("result_", "discretizer_", "coef_", "mechanism_"):
        assert not hasattr(clf, attr), attr
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_cross_val_score_fails_fast(no_solve, cancer):
    from sklearn.model_selection import cross_val_score

    X, y = cancer
    start = time.perf_counter()
    with pytest.raises(ParameterError):
        cross_val_score(PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm", bounds=(X.min(0), X.max(0))),
                        X, y, cv=3, error_score="raise")
    assert time.perf_counter() - start < 10.0


@pytest.mark.parametrize("change", [
    {"time_limit": None},                         # no limit: the caller chose to wait
    {"time_limit": 2 * RSPM_MEASURED_SECONDS},    # beyond what was calibrated: nothing predicted
    {"epsilon": 1.0},                             # enough noise: outside the predicted region
    {"solver": "cbc"},                            # the rule is HiGHS's
])
def test_not_refused_outside_the_rule(no_solve, cancer, monkeypatch, change):
    """These go on to RSPM (stubbed here: the solve itself is not run)."""
    if "solver" in change:
        require_solver(change["solver"])
    X, y = cancer
    params = {"epsilon": 4, "mechanism": "rspm", "bounds": (X.min(0), X.max(0)), **change}
    with pytest.raises(_Solved):
        PrivateHalfspaceClassifier(**params).fit(X, y)


def test_integer_features_are_not_refused(no_solve, cancer):
    """Integer features are used as they are: how many distinct rows they make is
    not public, and the rule was calibrated on discretized real values only.  (These reach
    2,501, beyond the +-8 used as they are without bounds: declared with bounds='as_is'.)"""
    X, y = cancer
    with pytest.raises(_Solved):
        PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm", bounds="as_is").fit(np.round(X), y)


@pytest.mark.slow
def test_outside_the_predicted_region_rspm_still_certifies(cancer):
    """The rule leaves small problems alone: 8 features (d = 9) at epsilon 4 is
    solved and certified."""
    require_solver("highs")
    X, y = cancer
    X = X[:, :8]
    assert not rspm_outlook(9, X.shape[0], 4.0)[0]
    clf = PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm", bounds=(X.min(0), X.max(0)), random_state=0,
                                     time_limit=60)
    start = time.perf_counter()
    clf.fit(X, y)
    assert clf.result_.certified
    assert time.perf_counter() - start < 20.0


def test_binary_columns_are_not_refused(no_solve, cancer):
    """A feature on fewer than 4 steps (binary and one-hot columns, as in the Adult
    experiment's levels) leaves the calibrated regime: no prediction, RSPM runs."""
    X, y = cancer
    levels = [4] * (X.shape[1] - 1) + [1]
    with pytest.raises(_Solved):
        PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm", bounds=(X.min(0), X.max(0)),
                                   levels=levels).fit(X, y)
    with pytest.raises(ParameterError):    # 4 steps or more everywhere: refused
        PrivateHalfspaceClassifier(epsilon=4, mechanism="rspm", bounds=(X.min(0), X.max(0)),
                                   levels=[4] * (X.shape[1] - 1) + [8]).fit(X, y)


def test_few_features_bound_the_distinct_rows(no_solve):
    """n = 9,000 records on 3 features of 5 values make at most 125 distinct rows:
    not predicted hard.  On 8 features (390,625 patterns) they are; the message
    then offers at most 4 features (5 weights x 625 patterns < 9,000)."""
    rng = np.random.default_rng(0)
    n = 9_000
    X = rng.uniform(0, 1, size=(n, 8))
    y = (X[:, 0] + rng.normal(0, 0.3, n) > 0.5).astype(int)
    assert not rspm_outlook(4, n, 1.0, row_patterns=125)[0]
    assert rspm_outlook(9, n, 1.0, row_patterns=5 ** 8)[0]
    with pytest.raises(_Solved):
        PrivateHalfspaceClassifier(epsilon=1, mechanism="rspm", bounds=(0.0, 1.0)).fit(X[:, :3], y)
    with pytest.raises(ParameterError) as err:
        PrivateHalfspaceClassifier(epsilon=1, mechanism="rspm", bounds=(0.0, 1.0)).fit(X, y)
    assert "at most 4 features" in str(err.value) and "125" not in str(err.value)
