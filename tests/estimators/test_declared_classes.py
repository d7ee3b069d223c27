"""The label set declared public (``classes=``): classes_ and the refusal no longer depend
on which labels the private data happen to hold."""

from __future__ import annotations

import numpy as np
import pytest

from privopt import PrivateHalfspaceClassifier
from privopt.exceptions import ParameterError
from privopt.scoring import PrivateScoringSystem


def _neighbours():
    """Two neighbouring data sets (replace-one): D holds one record of class 1, D' turns it
    into class 0, so D' has one class only."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(40, 3)).astype(float)
    y = np.zeros(40, dtype=int)
    y[7] = 1
    y_prime = y.copy()
    y_prime[7] = 0
    return X, y, y_prime


ESTIMATORS = {
    "halfspace selection": lambda **kw: PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, **kw),
    "halfspace opdisc": lambda **kw: PrivateHalfspaceClassifier(epsilon=1.0, mechanism="opdisc", random_state=0,
                                                                **kw),
    "halfspace rspm": lambda **kw: PrivateHalfspaceClassifier(epsilon=1.0, mechanism="rspm", random_state=0, **kw),
    "halfspace warm start": lambda **kw: PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), warm_start=True,
                                                                    random_state=0, **kw),
    "scoring system": lambda **kw: PrivateScoringSystem(epsilon=1.0, max_items=2, max_points=2, random_state=0,
                                                        **kw),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_declared_classes_release_on_both_neighbours(name):
    """Without classes=, D' (one class) is refused while D releases: the refusal shows the
    private label.  With classes=(0, 1) both release and classes_ is the declared pair."""
    X, y, y_prime = _neighbours()
    make = ESTIMATORS[name]
    make().fit(X, y)
    with pytest.raises(ParameterError, match="two classes"):
        make().fit(X, y_prime)
    for labels in (y, y_prime, np.ones_like(y)):
        est = make(classes=(0, 1)).fit(X, labels)
        assert est.classes_.tolist() == [0, 1]
        assert set(np.unique(est.predict(X))) <= {0, 1}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_a_label_outside_the_declared_classes_is_refused_before_any_work(name, monkeypatch):
    X, y, _ = _neighbours()
    y = y.copy()
    y[3] = 2
    est = ESTIMATORS[name](classes=(0, 1))
    with pytest.raises(ParameterError, match=r"classes=\[0, 1\]") as info:
        est.fit(X, y)
    assert info.value.parameter == "y"
    assert not hasattr(est, "classes_") and not hasattr(est, "result_")


@pytest.mark.parametrize("bad", [(0,), (0, 0), (0, 1, 2), [[0, 1]], (0.0, float("nan"))])
def test_a_malformed_class_declaration_is_refused(bad):
    X, y, _ = _neighbours()
    with pytest.raises(ParameterError) as info:
        PrivateHalfspaceClassifier(classes=bad).fit(X, y)
    assert info.value.parameter == "classes"


def test_declared_string_classes_keep_their_order_and_positive_class():
    """classes_ is the sorted pair, as when read from y: classes_[1] is the positive class."""
    X, y, _ = _neighbours()
    labels = np.where(y == 1, "yes", "no")
    est = PrivateHalfspaceClassifier(random_state=0, classes=("yes", "no")).fit(X, labels)
    ref = PrivateHalfspaceClassifier(random_state=0).fit(X, labels)
    assert est.classes_.tolist() == ref.classes_.tolist() == ["no", "yes"]
    np.testing.assert_array_equal(est.coef_, ref.coef_)


@pytest.mark.parametrize("name", ["DPSGDLogisticRegression", "NoisySGDClassifier", "DPAGDLogisticRegression",
                                  "ObjectivePerturbationLogisticRegression",
                                  "OutputPerturbationLogisticRegression"])
def test_every_private_baseline_takes_the_declared_classes(name):
    """A baseline with classes declared fits a y holding one of them (the neighbour that
    removes the only record of a class releases too) and refuses a label outside them."""
    import privopt.baselines as baselines

    cls = getattr(baselines, name)
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(60, 3))
    y_one = np.zeros(60, dtype=int)
    est = cls(epsilon=1.0, bounds=(0, 1), random_state=0, classes=(0, 1)).fit(X, y_one)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    assert est.get_params()["classes"] == (0, 1)
    with pytest.raises(ParameterError, match="y"):
        cls(epsilon=1.0, bounds=(0, 1), random_state=0, classes=(0, 1)).fit(X, np.full(60, 2))
