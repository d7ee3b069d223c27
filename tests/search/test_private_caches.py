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


def test_the_distinct_values_are_dropped_with_their_rows(monkeypatch):
    """The distinct values of a feature matrix (worked out once for the W's of a ladder that
    share its rows) and their scale are kept only while the rows are alive."""
    from privopt import _lattice

    calls = []
    real = _lattice.unique_values

    def spy(x):
        calls.append(1)
        return real(x)

    monkeypatch.setattr(_lattice, "unique_values", spy)
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(1500, 5))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=1500) > 0, 1, 0)
    clf = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0, 1), random_state=0, keep_report=True).fit(X, y)
    n_w = len(clf.result_.report.parts)
    del clf
    gc.collect()
    assert 0 < len(calls) < n_w              # the W's on one feature matrix shared its values
    assert _lattice._UNIQUE_KEPT == {}       # and nothing of them is kept after the fit
    assert _patterns._VALUE_SCALES == {}



def _counted_sum(x, calls):
    calls.append(1)
    return float(x.sum())


def test_kept_while_alive_works_out_once_per_live_array_and_forgets_it():
    """One value per live array and tag, made once; the entry goes when the array is collected."""
    import functools

    from privopt._lattice import kept_while_alive

    cache: dict = {}
    calls: list = []
    a = np.arange(4.0)
    a.flags.writeable = False
    make = functools.partial(_counted_sum, a, calls)
    assert kept_while_alive(cache, a, "t", make) == 6.0
    assert kept_while_alive(cache, a, "t", make) == 6.0 and len(calls) == 1
    assert kept_while_alive(cache, a, "u", make) == 6.0 and len(calls) == 2     # another tag: its own entry
    b = a.copy()            # equal values, another array: worked out again
    assert kept_while_alive(cache, b, "t", lambda: -1.0) == -1.0
    del a, make
    gc.collect()
    assert len(cache) == 1 and all(key[0] == id(b) for key in cache)
