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


def test_the_loss_points_are_kept_per_theta_and_dtype_and_dropped_with_their_points():
    """The Points of the loss on a read-only V: one per (theta, d, scores' dtype), the same object
    at each ask; made afresh (and not kept) for a writeable V; dropped once V is collected (so
    the kept Points must not hold V itself)."""
    from privopt.search import _regions

    rng = np.random.default_rng(5)
    V = rng.integers(-2, 3, size=(20, 3)).astype(float)
    V.flags.writeable = False
    before = len(_regions._LOSS_POINTS)
    one = _regions._loss_points(V, 0.5, 4, False)
    assert _regions._loss_points(V, 0.5, 4, False) is one
    others = [_regions._loss_points(V, 1.5, 4, False), _regions._loss_points(V, 0.5, 4, True)]
    assert all(p is not one for p in others) and others[0] is not others[1]
    assert others[1].Vt.dtype == np.float32 and one.Vt.dtype == np.float64 and others[0].theta == 1.5
    assert len(_regions._LOSS_POINTS) == before + 3
    np.testing.assert_array_equal(one.V, V)
    assert not one.V.flags.writeable
    W = V.copy()
    fresh = _regions._loss_points(W, 0.5, 4, False)
    assert fresh is not _regions._loss_points(W, 0.5, 4, False) and fresh.V is W
    assert len(_regions._LOSS_POINTS) == before + 3          # nothing kept of a writeable array
    del V, one, others
    gc.collect()
    assert len(_regions._LOSS_POINTS) == before


def test_the_points_scale_and_score_tree_are_kept_while_their_points_are_alive():
    """The scale and prefix tree of read-only points are worked out once and dropped with the
    points; the scale of writeable points is not kept."""
    rng = np.random.default_rng(6)
    V = rng.integers(-2, 3, size=(20, 3)).astype(float)
    W = V.copy()
    V.flags.writeable = False
    scales, trees = len(_patterns._SCALES), len(_patterns._TREES)
    assert _patterns._points_scale(V) == _patterns._points_scale(W) == (0, float(np.abs(V).sum(axis=1).max()))
    assert len(_patterns._SCALES) == scales + 1
    one = _patterns.score_tree(_patterns.points_of(V, 0.0, np.zeros(3), np.zeros(20)))
    assert all(a is b for a, b in zip(one, _patterns.score_tree(_patterns.points_of(V, 1.0, np.ones(3), np.zeros(20)))))
    assert len(_patterns._TREES) == trees + 1
    del V
    gc.collect()
    assert len(_patterns._SCALES) == scales and len(_patterns._TREES) == trees
