"""The baselines whose cost per feature is large refuse a wide X from its shape alone,
before a ledger's reservation (a free refusal), and take an X at their limit."""

import warnings

import numpy as np
import pytest

import privopt
from privopt._limits import DPAGD_MAX_FEATURES, OUTPUT_PERTURBATION_MAX_FEATURES
from privopt.baselines import (DPAGDLogisticRegression, DPSGDLogisticRegression,
                               ObjectivePerturbationLogisticRegression, OutputPerturbationLogisticRegression)
from privopt.exceptions import ParameterError

LIMITED = [(OutputPerturbationLogisticRegression, OUTPUT_PERTURBATION_MAX_FEATURES),
           (DPAGDLogisticRegression, DPAGD_MAX_FEATURES)]


@pytest.mark.parametrize("cls, limit", LIMITED)
def test_one_feature_past_the_limit_is_refused_free_under_a_ledger(cls, limit):
    X, y = np.zeros((4, limit + 1)), np.array([0, 1, 0, 1])
    ledger = privopt.PrivacyLedger(epsilon=5.0, delta=1e-3)
    with pytest.raises(ParameterError) as info:
        cls(bounds=(0, 1), ledger=ledger, random_state=0).fit(X, y)
    msg = str(info.value)
    assert info.value.parameter == "X"
    assert f"{limit + 1:,} features" in msg and f"at most {limit:,}" in msg and "fewer features" in msg
    assert ledger.spent.epsilon == 0 and not ledger.releases
    with pytest.raises(ParameterError):     # and without a ledger, the same refusal
        cls(bounds=(0, 1), random_state=0).fit(X, y)


def test_dpagd_fits_at_its_limit():
    X = np.zeros((4, DPAGD_MAX_FEATURES))
    X[::2, ::3] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPAGDLogisticRegression(bounds=(0, 1), random_state=0).fit(X, np.array([0, 1, 0, 1]))
    assert est.coef_.shape == (1, DPAGD_MAX_FEATURES)


@pytest.mark.parametrize("cls", [ObjectivePerturbationLogisticRegression, DPSGDLogisticRegression])
def test_the_baselines_linear_in_d_have_no_width_limit(cls):
    assert cls._max_features is None
