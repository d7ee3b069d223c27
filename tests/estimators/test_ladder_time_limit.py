"""The default estimator's ladder and mixture_selection's time_limit are one rule: the
ladder stops before the W's predicted sampling times sum past time_limit, so a fit is
never refused by the mixture for a ladder the estimator itself chose (before, the ladder
checked each W alone and time_limit=3 refused a 2,000-row fit that time_limit=1 and 120
ran)."""

from __future__ import annotations

import warnings

import pytest

import privopt


@pytest.fixture(scope="module")
def table():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2000, n_features=6, n_informative=3, n_redundant=0, random_state=0)
    bounds = (X.min(0), X.max(0))
    # one untimed fit first: the process's first fit loads the compiled kernels (about 2 s), which
    # no W's prediction counts; the tests below time the W's, not the loading
    privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=bounds, random_state=1, time_limit=None).fit(X, y)
    return X, y, bounds


@pytest.mark.parametrize("time_limit", [0.5, 1.5, 3.0, 4.0, 5.0, 7.0, 120.0])
def test_no_time_limit_refuses_the_ladder_it_chose(table, time_limit):
    X, y, bounds = table
    clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=bounds, random_state=0, time_limit=time_limit,
                                             keep_report=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    report = clf.result_.report
    assert report.predicted_time <= time_limit
    assert len(clf.resolutions_) == len(report.parts)


def test_a_longer_time_limit_offers_at_least_the_same_ws(table):
    X, y, bounds = table
    offered = []
    for time_limit in (1.0, 3.0, 7.0, 120.0):
        clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=bounds, random_state=0, time_limit=time_limit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y)
        offered.append(clf.resolutions_)
    for shorter, longer in zip(offered, offered[1:]):
        assert longer[:len(shorter) - 1] == shorter[:len(shorter) - 1]     # the warm start's W comes last
        assert len(longer) >= len(shorter)
    assert len(offered[-1]) > len(offered[0])


def test_the_paths_and_predictions_are_the_same_on_tables_that_differ_only_in_their_values():
    """Binary and continuous features of one shape and public bounds: the estimator declares
    the values its discretization allows (levels + 1, plus the intercept's), so every W is
    drawn on the same path with the same predicted time (before, the binary table's few
    values split W's by support that the continuous table's scored point by point)."""
    import numpy as np

    rng = np.random.default_rng(3)
    X_bin = (rng.random((600, 5)) < 0.3).astype(float)
    X_cont = rng.random((600, 5))
    y = np.where(rng.random(600) < 0.5, 1, 0)
    seen = []
    for X in (X_bin, X_cont):
        clf = privopt.PrivateHalfspaceClassifier(epsilon=1.0, bounds=(np.zeros(5), np.ones(5)), random_state=0,
                                                 keep_report=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y)
        seen.append([(p.path, p.n_points, p.predicted_time) for p in clf.result_.report.parts])
    assert seen[0] == seen[1]
    assert {path for path, _, _ in seen[0]} == {"topdown", "enumerate"}
