"""A fit that fails after it started leaves the estimator as it was before the call."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from privopt.datasets import make_planted_halfspace
from privopt.estimators import PrivateHalfspaceClassifier


def _data(n, seed):
    data = make_planted_halfspace(n, 3, noise=0.1, random_state=seed)
    return data.X_train, data.y_train


def _same_state(before, after):
    assert before.keys() == after.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, after[key])
        else:
            assert after[key] is value, key


def test_a_failed_refit_keeps_the_earlier_fit(monkeypatch):
    X, y = _data(300, 0)
    est = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    assert est.resolution_ is not None            # the default's selection set its W
    before = dict(vars(est))
    predicted = est.predict(X)

    def broken(self, *args, **kwargs):
        raise RuntimeError("fails after the feature map and the W were set")

    monkeypatch.setattr(PrivateHalfspaceClassifier, "_set_linear", broken)
    X2, y2 = _data(400, 1)
    with pytest.raises(RuntimeError, match="fails after"):
        est.fit(X2, y2)
    _same_state(before, dict(vars(est)))
    monkeypatch.undo()
    np.testing.assert_array_equal(est.predict(X), predicted)


def test_a_failed_first_fit_leaves_it_unfitted(monkeypatch):
    def broken(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(PrivateHalfspaceClassifier, "_set_linear", broken)
    est = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0)
    params = dict(vars(est))
    with pytest.raises(KeyboardInterrupt):
        est.fit(*_data(300, 0))
    assert dict(vars(est)) == params
    with pytest.raises(NotFittedError):
        est.predict(_data(10, 2)[0])
