"""scikit-learn's own estimator checks on every privopt estimator (issue 16 item 1).

Goal: at most 2 failures per estimator, each listed with its reason in
``EXPECTED_FAILED``.  Today none fail, so the dictionaries are empty; a check
that starts failing makes this test fail.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from privopt.baselines import PRIVATE_BASELINES, REFERENCE_BASELINES  # noqa: E402
from privopt.estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier  # noqa: E402
from privopt.solvers import available_solvers  # noqa: E402

ESTIMATORS = {name: cls(random_state=0) for name, cls in {**PRIVATE_BASELINES, **REFERENCE_BASELINES}.items()}
# The MIP estimators: public bounds, coarse features and a short limit keep the checks fast.
ESTIMATORS["halfspace_opdisc"] = PrivateHalfspaceClassifier(random_state=0, bounds=(-5, 5), levels=2,
                                                            time_limit=10)
ESTIMATORS["halfspace_rspm"] = PrivateHalfspaceClassifier(mechanism="rspm", random_state=0, bounds=(-5, 5),
                                                          levels=2, time_limit=10)
ESTIMATORS["halfspace_zero_one"] = ZeroOneHalfspaceClassifier(bounds=(-5, 5), levels=2, time_limit=10)
#: Estimators that are not private (no noise, deterministic).
NOT_PRIVATE = set(REFERENCE_BASELINES) | {"halfspace_zero_one"}

#: name -> {check name: reason}; at most 2 per estimator.
EXPECTED_FAILED: dict[str, dict[str, str]] = {name: {} for name in ESTIMATORS}


def _highs_available() -> bool:
    return any(s.name == "highs" and s.available for s in available_solvers(["highs"]))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.slow
def test_sklearn_estimator_checks(name):
    if name.startswith("halfspace") and not _highs_available():
        pytest.skip("HiGHS (highspy) is not installed: pip install highspy")
    expected = EXPECTED_FAILED[name]
    assert len(expected) <= 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(ESTIMATORS[name], on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"]).splitlines()[:1]) for r in results if r["status"] == "failed"]
    assert not failed, failed
    assert len(results) >= 50  # the checks really ran


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_tags(name):
    est = ESTIMATORS[name]
    tags = est.__sklearn_tags__()
    assert tags.classifier_tags.multi_class is False
    assert tags.input_tags.sparse is False
    private = name not in NOT_PRIVATE
    assert tags.classifier_tags.poor_score is (name != "nonprivate_lr")
    # a fixed int seed is reproducible; None (the private default) is not
    assert tags.non_deterministic is False
    if private:
        assert est.set_params(random_state=None).__sklearn_tags__().non_deterministic is True
        est.set_params(random_state=0)


@pytest.mark.slow
def test_coef_shape_and_fitted_pickle():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    for name, cls in PRIVATE_BASELINES.items():
        est = cls(random_state=0, bounds=(-1, 1)).fit(X, y)
        assert est.n_features_in_ == 3 and not hasattr(est, "feature_names_in_"), name
        assert est.coef_.shape == (1, 3) and est.intercept_.shape == (1,), name
        back = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_feature_names_in():
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(300, 3)), columns=["a", "b", "c"])
    y = (X["a"] + 0.5 * X["b"] > 0).astype(int)
    for name, cls in PRIVATE_BASELINES.items():
        est = cls(random_state=0, bounds=(-1, 1)).fit(X, y)
        assert list(est.feature_names_in_) == ["a", "b", "c"], name
