"""Results and fitted estimators survive pickle, joblib and a process pool."""

from __future__ import annotations

import io
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from privopt import PrivateResult
from privopt._frozen import FrozenDict


def _make_result():
    return PrivateResult(weights=[1.0, -2.0], mechanism="opdisc", epsilon=1.0, delta=1e-5,
                         parameters={"sigma": 0.5, "alpha": None})


def test_frozendict_is_read_only_and_pickles():
    d = FrozenDict({"a": 1})
    with pytest.raises(TypeError):
        d["a"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        d._data = {}  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(d))
    assert isinstance(back, FrozenDict) and back == {"a": 1}


def test_private_result_pickles():
    r = _make_result()
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back.weights, r.weights)
    assert back.parameters == {"sigma": 0.5, "alpha": None}
    with pytest.raises(TypeError):
        back.parameters["sigma"] = 0.0  # still read-only after the round trip
    assert not back.weights.flags.writeable


def test_private_result_joblib():
    joblib = pytest.importorskip("joblib")
    buf = io.BytesIO()
    joblib.dump(_make_result(), buf)
    buf.seek(0)
    assert joblib.load(buf).parameters["sigma"] == 0.5


def test_private_result_from_process_pool():
    with ProcessPoolExecutor(max_workers=1) as ex:
        back = ex.submit(_make_result).result()
    assert back.mechanism == "opdisc" and back.parameters["sigma"] == 0.5


def test_audit_result_pickles():
    from privopt.audit import _stats
    fields = {f: None for f in _stats.AuditResult.__dataclass_fields__}
    fields.update(histogram={"a": 1}, histogram_prime={"a": 2}, metadata={"mechanism": "opdisc"})
    r = _stats.AuditResult(**fields)
    back = pickle.loads(pickle.dumps(r))
    assert back.histogram == {"a": 1} and back.metadata["mechanism"] == "opdisc"
