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


def _fitted(cls_name: str, **kw):
    """A small fitted private estimator (exact enumeration: no external solver)."""
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 3)).astype(float)
    y = (X[:, 0] + rng.random(60) > 0.8).astype(int)
    if cls_name == "scoring":
        from privopt.scoring import PrivateScoringSystem

        return PrivateScoringSystem(epsilon=1.0, max_items=2, random_state=0, **kw).fit(X, y)
    from privopt.estimators import PrivateHalfspaceClassifier

    return PrivateHalfspaceClassifier(epsilon=1.0, random_state=0, **kw).fit(X, y)


@pytest.mark.parametrize("cls_name, mechanism, report_class", [
    ("halfspace", "permute_and_flip", b"SelectionReport"),
    ("halfspace", "opdisc", b"SolveReport"),
    ("scoring", None, b"ScoringReport"),
])
def test_fitted_estimator_pickle_carries_no_report_by_default(cls_name, mechanism, report_class):
    """The solve's diagnostics (perturbed optimum, distinct rows, wall time, regions expanded) are
    not private: a fitted estimator drops them, so its pickle does not hold them; with
    keep_report=True they are kept, in memory and in the pickle."""
    kw = {} if mechanism is None else {"mechanism": mechanism}
    est = _fitted(cls_name, **kw)
    assert est.result_.report is None
    blob = pickle.dumps(est)
    # (selection among resolutions reports a MixtureReport, a SelectionReport subclass)
    assert report_class not in blob and b"MixtureReport" not in blob and b"wall_time" not in blob
    back = pickle.loads(blob)
    assert back.result_.report is None
    np.testing.assert_array_equal(back.result_.weights, est.result_.weights)   # the release itself is kept

    kept = _fitted(cls_name, keep_report=True, **kw)
    assert kept.result_.report is not None
    np.testing.assert_array_equal(kept.result_.weights, est.result_.weights)   # same seed, same release
    blob = pickle.dumps(kept)
    assert type(kept.result_.report).__name__.encode() in blob
    assert report_class in blob or b"MixtureReport" in blob
    assert pickle.loads(blob).result_.report.wall_time == kept.result_.report.wall_time


def test_keep_report_is_checked_before_the_fit():
    pytest.importorskip("sklearn")
    from privopt.estimators import PrivateHalfspaceClassifier
    from privopt.exceptions import ParameterTypeError
    from privopt.scoring import PrivateScoringSystem

    for est in (PrivateHalfspaceClassifier(keep_report="yes"), PrivateScoringSystem(keep_report=1)):
        with pytest.raises(ParameterTypeError, match="keep_report must be True or False"):
            est.fit("not data", None)


def test_private_result_without_report():
    r = PrivateResult(weights=[1.0], mechanism="opdisc", epsilon=1.0, delta=1e-5, report=("diagnostic",))
    bare = r.without_report()
    assert bare.report is None and r.report == ("diagnostic",)
    assert bare.epsilon == r.epsilon and not bare.weights.flags.writeable
