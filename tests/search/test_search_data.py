"""privopt.search.HalfspaceData: the typed record a zero_one_halfspace model carries for
the exact search engine and solver="enumerate" (it replaced a dict read by key)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from privopt._runtime import dumps_model
from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import HalfspaceData


def _model():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(30, 3)).astype(float)
    y = (X[:, 0] > X[:, 1]).astype(int)
    return X, y, zero_one_halfspace(X, y, grid=2, norm_bound=2.0)


def test_the_builder_sets_the_record():
    X, y, model = _model()
    data = getattr(model, ENUMERATION_ATTR)
    assert isinstance(data, HalfspaceData)
    # the distinct rows with their label counts stand for every record
    assert data.X.shape[1] == X.shape[1] and int(data.pos.sum() + data.neg.sum()) == len(y)
    assert {tuple(r) for r in data.X} == {tuple(r) for r in X}
    assert data.grid == ((-2, -1, 0, 1, 2),) * 3 and data.norm_bound == 2.0
    assert data.objective in data.components and "w" in data.components


def test_the_record_is_frozen_and_reads_like_the_old_dict():
    data = getattr(_model()[2], ENUMERATION_ATTR)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.theta = 1.0  # type: ignore[misc]
    assert data["theta"] is data.theta and data["X"] is data.X
    with pytest.raises(KeyError):
        data["not_a_field"]


def test_the_record_travels_with_the_model():
    """Clones and pickles (the process pools ship models this way) keep the record."""
    _, _, model = _model()
    data = getattr(model, ENUMERATION_ATTR)
    for copy in (model.clone(), pickle.loads(dumps_model(model))):
        other = getattr(copy, ENUMERATION_ATTR)
        assert isinstance(other, HalfspaceData)
        assert np.array_equal(other.X, data.X) and other.components == data.components
