"""No cache of the search engine keeps rows of the private data after the fit that read them."""

from __future__ import annotations

import gc

import numpy as np

from privopt.estimators import PrivateHalfspaceClassifier
from privopt.search import _patterns


def test_the_ordered_rows_are_dropped_with_their_records(monkeypatch):
    calls = []
    real = _patterns.ordered_rows

    def spy(records, dtype):
        calls.append(1)
        return real(records, dtype)

    monkeypatch.setattr(_patterns, "ordered_rows", spy)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 8))          # 3,000 distinct rows: regions screened row by row
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=3000) > 0.5, 1, 0)
    PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    gc.collect()
    assert calls                             # the cache was used during the fit
    assert _patterns._ORDERED == {}          # and holds nothing of the data after it
