"""The release step of private selection: the report and the parameters are typed
records, built whole once and never changed after (privopt.mechanisms.selection._release)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import privopt
from privopt.mechanisms import MixtureParameters, MixtureReport, SelectionParameters, SelectionReport
from tests._models import tiny_halfspace as _halfspace
from tests._models import tiny_quadratic as _quadratic

#: The keys of ``parameters`` as documented in exponential_mechanism, per path.
_SELECTION_KEYS = ("method", "sensitivity", "loss_range", "noise_scale", "n_points", "alpha", "alpha_per_record",
                   "beta", "n_samples", "dim", "norm_bound", "path", "noise_distribution")
_MIXTURE_KEYS = ("method", "resolution", "prior", "log_base_measure", "sensitivity", "loss_range", "noise_scale",
                 "n_points", "alpha", "alpha_per_record", "alpha_by_resolution", "beta", "n_samples", "dim",
                 "norm_bound", "path", "noise_distribution")


def _runs():
    """One release per path: top-down, a user's model scored point by point, bounded."""
    top = privopt.exponential_mechanism(_halfspace(), epsilon=1.0, random_state=0, keep_report=True)
    scored = privopt.exponential_mechanism(_quadratic(), weights="x", epsilon=1.0, loss_range=1, n_samples=5,
                                           public_constraints="x", random_state=0, keep_report=True)
    bounded = privopt.exponential_mechanism(_quadratic(), weights="x", epsilon=1.0, loss_range=1, n_samples=5,
                                            public_constraints="x", path="bounded", random_state=0, keep_report=True)
    return {"topdown": top, "fix_and_solve": scored, "bounded": bounded}


def test_every_selection_path_releases_a_frozen_report_and_typed_parameters():
    for path, res in _runs().items():
        assert isinstance(res.report, SelectionReport) and res.report.path == path
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.report.reason = "changed after release"
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.report.n_regions = 3
        params = res.parameters
        assert isinstance(params, SelectionParameters)
        with pytest.raises(dataclasses.FrozenInstanceError):
            params.noise_scale = 0.0
        with pytest.raises(TypeError):
            params["noise_scale"] = 0.0
        # the typed fields and the documented mapping agree
        assert params.noise_scale == params["noise_scale"] == pytest.approx(2.0)
        assert params.path == params["path"] == path
        extra = () if path == "topdown" else ("sense",)
        assert tuple(params) == _SELECTION_KEYS + extra + (("record_terms",) if path == "fix_and_solve" else ())
        assert dict(params) == {k: getattr(params, k) for k in params}


def test_the_top_down_report_declares_its_number_of_regions():
    res = privopt.exponential_mechanism(_halfspace(grid=2, norm_bound=2.0), epsilon=1.0, random_state=1,
                                        keep_report=True)
    names = {f.name for f in dataclasses.fields(SelectionReport)}
    assert "n_regions" in names and res.report.n_regions >= 2
    assert res.report.regions_expanded <= res.report.n_regions


def test_mixture_releases_typed_parameters_and_a_frozen_report_of_frozen_parts():
    res = privopt.mixture_selection([_halfspace(), _halfspace(grid=2, norm_bound=2.0)], epsilon=1.0,
                                    random_state=3, keep_report=True)
    params = res.parameters
    assert isinstance(params, MixtureParameters) and tuple(params) == _MIXTURE_KEYS
    assert params.resolution == params["resolution"] in (0, 1)
    assert params.n_points == (3, 5)
    report = res.report
    assert isinstance(report, MixtureReport) and report.n_points == 8
    assert [p["won"] for p in report.parts] == [p.won for p in report.parts]
    assert sum(p.won for p in report.parts) == 1 and report.parts[params.resolution].won
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.parts[0].won = True
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.parts = ()
    # a copy with more entries is a new record: the released one is unchanged
    warm = dataclasses.replace(params, epsilon_selection=0.5, epsilon_warm_start=0.5, warm_start="x")
    assert "epsilon_selection" not in params and warm["epsilon_selection"] == 0.5
    assert tuple(warm)[-3:] == ("epsilon_selection", "epsilon_warm_start", "warm_start")


def test_typed_parameters_survive_pickling_and_compare_as_mappings():
    res = privopt.exponential_mechanism(_halfspace(), epsilon=1.0, random_state=0, keep_report=True)
    back = pickle.loads(pickle.dumps(res))
    assert isinstance(back.parameters, SelectionParameters)
    assert back.parameters == res.parameters == dict(res.parameters)
    assert hash(back.parameters) == hash(res.parameters)
    assert back.report.n_regions == res.report.n_regions


def test_the_estimators_warm_start_gives_typed_parameters_with_its_split():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 2))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    clf = privopt.PrivateHalfspaceClassifier(epsilon=2.0, bounds=(0, 1), random_state=1, warm_start=True).fit(X, y)
    params = clf.result_.parameters
    assert isinstance(params, MixtureParameters)
    assert params.epsilon_selection + params.epsilon_warm_start == pytest.approx(2.0)
    assert params["warm_start"] == "objective_perturbation"
