"""PrivateHalfspaceClassifier: scikit-learn conventions, labels, public bounds, privacy leak warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from privopt import PrivacyLeakWarning
from privopt.datasets import make_planted_halfspace
from privopt.estimators import PrivateHalfspaceClassifier
from privopt.exceptions import ParameterError, ParameterTypeError
from privopt.models import predict_halfspace

from tests.conftest import require_solver


@pytest.fixture(scope="module")
def planted():
    return make_planted_halfspace(400, 5, n_test=200, noise=0.05, random_state=1)


def test_fit_predict_score_on_planted(planted):
    require_solver("highs")
    clf = PrivateHalfspaceClassifier(epsilon=2.0, mechanism="opdisc", random_state=0).fit(
        planted.X_train, planted.y_train)
    assert clf.result_.certified and clf.result_.mechanism == "opdisc"
    assert clf.result_.delta == pytest.approx(1 / 400**2)  # delta=None -> 1/n^2
    acc = clf.score(planted.X_test, planted.y_test)
    majority = max(np.mean(planted.y_test == 1), np.mean(planted.y_test == -1))
    assert acc > majority + 0.1
    # predict uses exactly the model's decision rule
    np.testing.assert_array_equal(clf.predict(planted.X_test),
                                  predict_halfspace(clf.result_.weights, planted.X_test, clf.model_info_))
    scores = clf.decision_function(planted.X_test)
    assert np.array_equal(clf.predict(planted.X_test) == clf.classes_[1], scores >= 0)


def test_calibration_option_and_neighbour_relation(planted):
    require_solver("highs")
    from privopt import calibration

    X, y = planted.X_train, planted.y_train
    proven = PrivateHalfspaceClassifier(epsilon=1.0, mechanism="opdisc", random_state=0).fit(X, y)
    paper = PrivateHalfspaceClassifier(epsilon=1.0, calibration="paper", random_state=0).fit(X, y)
    rspm = PrivateHalfspaceClassifier(epsilon=1.0, mechanism="rspm", random_state=0).fit(X, y)
    for est in (proven, paper, rspm):
        assert est.neighbouring_ == "replace_one" == est.result_.neighbouring
    p, q = proven.result_.parameters, paper.result_.parameters
    assert (p["calibration"], q["calibration"]) == ("proven", "paper")
    d, D = p["dim"], p["norm_bound"]
    assert p["sigma"] == calibration.opdisc_sigma_proven(1.0, 1 / 400**2, p["lipschitz"], D, p["separation"], d)
    assert q["sigma"] == calibration.opdisc_sigma_paper(1.0, 1 / 400**2, q["lipschitz"], D, q["separation"])
    with pytest.raises(ParameterError, match="calibration"):
        PrivateHalfspaceClassifier(mechanism="rspm", calibration="paper").fit(X, y)


def test_reproducible_under_seed_and_clone(planted):
    require_solver("highs")
    a = PrivateHalfspaceClassifier(epsilon=0.5, random_state=3).fit(planted.X_train, planted.y_train)
    b = clone(a).fit(planted.X_train, planted.y_train)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert clone(a).get_params() == a.get_params()
    assert not hasattr(clone(a), "coef_")


def test_any_two_labels(planted):
    require_solver("highs")
    y = np.where(planted.y_train == 1, "rich", "poor")
    clf = PrivateHalfspaceClassifier(epsilon=2.0, random_state=0).fit(planted.X_train, y)
    assert list(clf.classes_) == ["poor", "rich"]
    pred = clf.predict(planted.X_test)
    assert set(pred) <= {"poor", "rich"}
    ref = PrivateHalfspaceClassifier(epsilon=2.0, random_state=0).fit(planted.X_train, planted.y_train)
    np.testing.assert_array_equal(pred == "rich", ref.predict(planted.X_test) == 1)


def test_real_features_need_public_bounds(planted):
    require_solver("highs")
    rng = np.random.default_rng(0)
    X = planted.X_train + rng.uniform(-0.2, 0.2, size=planted.X_train.shape)
    X_before = X.copy()
    with pytest.warns(PrivacyLeakWarning):
        PrivateHalfspaceClassifier(epsilon=2.0, random_state=0).fit(X, planted.y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = PrivateHalfspaceClassifier(epsilon=2.0, bounds=(-0.5, 1.5), levels=2, random_state=0)
        clf.fit(X, planted.y_train)
    np.testing.assert_array_equal(X, X_before)
    assert clf.discretizer_ is not None
    assert clf.score(planted.X_test, planted.y_test) > 0.6


def test_integer_features_used_as_they_are(planted):
    require_solver("highs")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = PrivateHalfspaceClassifier(epsilon=2.0, random_state=0).fit(planted.X_train, planted.y_train)
    assert clf.discretizer_ is None


@pytest.mark.parametrize(
    "params, exc, parameter",
    [
        ({"epsilon": 0}, ParameterError, "epsilon"),
        ({"epsilon": "a"}, ParameterTypeError, "epsilon"),
        ({"delta": 2.0}, ParameterError, "delta"),
        ({"mechanism": "magic"}, ParameterError, "mechanism"),
        ({"time_limit": -5}, ParameterError, "time_limit"),
    ],
)
def test_bad_parameters(planted, params, exc, parameter):
    with pytest.raises(exc) as err:
        PrivateHalfspaceClassifier(**params).fit(planted.X_train, planted.y_train)
    assert err.value.parameter == parameter


@pytest.mark.parametrize(
    "X, y, parameter",
    [
        (np.array([[0.0, np.nan], [1.0, 0.0]]), [0, 1], "X"),
        (np.zeros((0, 2)), [], "X"),
        (np.ones((3, 2)), [1, 1, 1], "y"),          # one class only
        (np.ones((3, 2)), [0, 1], "y"),             # shape mismatch
        (np.ones(3), [0, 1, 0], "X"),               # 1-D X
    ],
)
def test_bad_data(X, y, parameter):
    with pytest.raises(ParameterError) as err:
        PrivateHalfspaceClassifier(epsilon=1.0).fit(X, y)
    assert err.value.parameter == parameter


def test_predict_checks_feature_count(planted):
    require_solver("highs")
    clf = PrivateHalfspaceClassifier(epsilon=2.0, random_state=0).fit(planted.X_train, planted.y_train)
    with pytest.raises(ParameterError, match="features"):
        clf.predict(planted.X_test[:, :3])


@pytest.mark.slow
def test_defaults_certify_on_one_hot_adult(data_home):
    """One-hot-heavy Adult (d = 28): with the paper's ball the MILP was not certified within 300 s;
    the estimator's default ball (D = 2) is solved exactly (enumeration or HiGHS) in seconds."""
    from privopt.datasets import load_adult

    data = load_adult(data_home, feature_set=("workclass", "marital-status", "relationship", "race", "sex"),
                      scale="public", random_state=0)
    assert data.X_train.shape[1] == 28
    clf = PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, keep_report=True).fit(data.X_train, data.y_train)
    assert clf.result_.certified and clf.result_.parameters["norm_bound"] == 2.0
    assert clf.result_.report.wall_time < 60
    assert clf.score(data.X_test, data.y_test) > 0.6
    info = clf.model_info_
    assert info.grid[0] == (-2.0, -1.0, 0.0, 1.0, 2.0)


@pytest.mark.parametrize("solver", ["enumerate", "highs", "glpk"])
def test_zero_one_reference_is_the_optimum_by_brute_force(solver):
    """ZeroOneHalfspaceClassifier minimizes the training 0/1 loss over W = {w in {-1,0,1}^3 :
    ||w|| <= D}: checked against every grid point, with the model's own decision rule."""
    import itertools

    from privopt.estimators import ZeroOneHalfspaceClassifier

    if solver != "enumerate":
        require_solver(solver)
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(60, 3)).astype(float)
    y = np.where(X @ [1.0, -1.0, 0.5] + rng.normal(0, 0.8, 60) >= 0.5, 1, 0)
    for D in (np.sqrt(3), np.sqrt(2)):
        clf = ZeroOneHalfspaceClassifier(norm_bound=D, grid=1, solver=solver, fit_intercept=False).fit(X, y)
        assert clf.certified_ and clf.report_.solver == solver
        errors = {w: int(np.sum(predict_halfspace(np.array(w, float), X, clf.model_info_, pm=True)
                                != np.where(y == 1, 1, -1)))
                  for w in itertools.product((-1, 0, 1), repeat=3) if np.dot(w, w) <= D**2 + 1e-9}
        best = min(errors.values())
        assert round((1 - clf.score(X, y)) * len(y)) == best == clf.train_error_bounds_[1]
        assert tuple(clf.coef_[0]) in errors and np.dot(clf.coef_[0], clf.coef_[0]) <= D**2 + 1e-9
        assert clf.epsilon_spent_ == float("inf")
    # a private fit on the same problem never beats it on the training data
    priv = PrivateHalfspaceClassifier(epsilon=1.0, norm_bound=np.sqrt(2), grid=1, random_state=0).fit(X, y)
    assert priv.score(X, y) <= clf.score(X, y)
