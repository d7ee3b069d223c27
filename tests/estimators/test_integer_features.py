"""``integer_features``: columns declared in public to take the whole numbers of their bounds
(a 0/1 column: bounds (0, 1)).  Checked before the data is read, enforced record by record
(rounded, then clipped to the bounds as every feature is), read by the draws' predicted
times only: on data that honour it, the fit is the undeclared fit, seed for seed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import privopt
from privopt._validation import check_integer_features, snap_integer_features
from privopt.exceptions import ParameterError


def _binary(n=1500, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.uniform(size=(n, d)) < 0.3).astype(float)
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.3, n) > 0.3).astype(int)
    return X, y


def _fit(X, y, **kw):
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y)


@pytest.mark.parametrize("bad, words", [
    ("some", "integer_features must be"),
    ([0, 1.5], "integer_features must be"),
    ([0, "a"], "integer_features must be"),
    ([0, 0], "declared twice"),
    ([[0, 1]], "integer_features must be"),
])
def test_a_bad_form_is_refused_by_name_before_the_data_is_read(bad, words):
    """The form is checked with the other parameters: X full of NaN (which the data's own
    check would refuse, naming X) never gets that far."""
    X = np.full((20, 3), np.nan)
    with pytest.raises(ParameterError, match=words) as err:
        _fit(X, np.arange(20) % 2, bounds=(0, 1), integer_features=bad)
    assert err.value.parameter == "integer_features"


@pytest.mark.parametrize("declared, bounds, words", [
    ([3], (0, 1), "out of range"),
    ([True, False], (0, 1), "one entry per column"),
    (["age"], (0, 1), "need X as a pandas DataFrame"),
    ([1], ([0, 0, 0], [1, 2.5, 1]), r"feature 1 is declared integer-valued but its bounds \(0, 2.5\)"),
    ("all", None, "needs declared bounds"),
    ([0], "as_is", "needs declared bounds"),
])
def test_a_declaration_that_does_not_fit_x_is_refused_from_its_public_shape(declared, bounds, words):
    """Index range, mask length, names and whole-number bounds: from X's shape, its column
    names and the bounds, before any value of X is read (X holds NaN)."""
    X = np.full((20, 3), np.nan)
    with pytest.raises(ParameterError, match=words) as err:
        _fit(X, np.arange(20) % 2, bounds=bounds, integer_features=declared)
    assert err.value.parameter == "integer_features"


def test_the_forms_resolve_to_the_same_columns():
    names = ["a", "b", "c"]
    bounds = (np.zeros(3), np.ones(3))
    want = (0, 2)
    assert check_integer_features([2, 0], 3, bounds=bounds) == want
    assert check_integer_features([-1, 0], 3, bounds=bounds) == want
    assert check_integer_features([True, False, True], 3, bounds=bounds) == want
    assert check_integer_features(["c", "a"], 3, feature_names=names, bounds=bounds) == want
    assert check_integer_features("all", 3, bounds=bounds) == (0, 1, 2)
    assert check_integer_features(None, 3, bounds=bounds) == ()


def test_declared_columns_are_snapped_record_by_record():
    """Rounded to whole numbers (a new array, the caller's untouched); the bounds' clipping
    then holds them to the declared values, whatever the records held."""
    X = np.array([[0.2, 0.7], [0.9, 1.4], [-3.0, 0.5], [1.6, 2.0]])
    before = X.copy()
    out = snap_integer_features(X, (0,))
    assert np.array_equal(X, before)
    assert out[:, 0].tolist() == [0.0, 1.0, -3.0, 2.0] and np.array_equal(out[:, 1], X[:, 1])
    assert np.clip(out[:, 0], 0, 1).tolist() == [0.0, 1.0, 0.0, 1.0]


def test_a_fit_on_records_that_break_the_declaration_is_the_fit_on_their_snapped_values():
    """A declared 0/1 column holding 0.2, 0.9, 1.4, -3, ...: the fit (and its predictions) are
    those on the rounded and clipped column, seed for seed; no error, no message about it."""
    X, y = _binary(800, 4)
    rng = np.random.default_rng(3)
    noisy = X + rng.uniform(-0.45, 0.45, size=X.shape)
    noisy[:5, 0] = [-3.0, 1.7, 2.4, -0.6, 9.0]
    snapped = np.clip(np.rint(noisy), 0, 1)
    a = _fit(noisy, y, bounds=(0, 1), integer_features="all")
    b = _fit(snapped, y, bounds=(0, 1), integer_features="all")
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    assert a.resolution_ == b.resolution_ and a.integer_features_ == (0, 1, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the clipping warning of the noisy column's values
        assert np.array_equal(a.decision_function(noisy), b.decision_function(snapped))


def test_on_data_that_honour_it_the_fit_is_the_undeclared_fit_and_only_the_predictions_change():
    """A 0/1 table with and without the declaration: the same offered W's, paths, released
    point and fitted attributes, seed for seed (the default time_limit does not bind); the
    declared fit predicts shorter draws for the ladder's W's (their records take 2 values a
    column, not levels + 1) and the same for the warm start's."""
    X, y = _binary(3000, 6)
    plain = _fit(X, y, bounds=(0, 1), keep_report=True)
    declared = _fit(X, y, bounds=(0, 1), keep_report=True, integer_features="all")
    assert np.array_equal(plain.coef_, declared.coef_) and np.array_equal(plain.intercept_, declared.intercept_)
    assert plain.resolution_ == declared.resolution_ and plain.resolutions_ == declared.resolutions_
    p, q = plain.result_.report.parts, declared.result_.report.parts
    assert [x.path for x in p] == [x.path for x in q] and [x.n_points for x in p] == [x.n_points for x in q]
    warm = [r.warm_start for r in plain.resolutions_]
    shorter = [b.predicted_time < a.predicted_time for a, b, w in zip(p, q, warm) if not w]
    assert shorter and all(shorter)
    assert all(a.predicted_time == b.predicted_time for a, b, w in zip(p, q, warm) if w)


def test_a_declaration_is_a_parameter_scikit_learn_clones():
    from sklearn.base import clone

    clf = privopt.PrivateHalfspaceClassifier(bounds=(0, 1), integer_features=[0, 2])
    assert clone(clf).get_params()["integer_features"] == [0, 2]
    assert privopt.PrivateHalfspaceClassifier().get_params()["integer_features"] is None


def test_a_declaration_by_column_name_and_a_refusal_under_a_ledger_costs_nothing():
    """Names of a DataFrame's columns select the same columns as their indices (the same fit);
    a declaration that does not fit X is refused before the ledger reserves the fit."""
    pd = pytest.importorskip("pandas")
    X, y = _binary(600, 3)
    frame = pd.DataFrame(X, columns=["smoker", "female", "owner"])
    by_name = _fit(frame, y, bounds=(0, 1), integer_features=["owner", "smoker"])
    by_index = _fit(X, y, bounds=(0, 1), integer_features=[0, 2])
    assert by_name.integer_features_ == by_index.integer_features_ == (0, 2)
    assert np.array_equal(by_name.coef_, by_index.coef_)
    with privopt.PrivacyLedger(epsilon=5.0) as ledger:
        with pytest.raises(ParameterError, match="not among X's columns") as err:
            _fit(frame, y, bounds=(0, 1), integer_features=["age"])
        assert err.value.parameter == "integer_features"
        assert ledger.spent.epsilon == 0.0 and not ledger.releases
