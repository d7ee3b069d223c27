"""The audit of a ladder with a rung on geometric feature steps: as shipped (a map of the
public bounds and a constant) it passes; with the steps at the data's quantiles it is flagged."""

from __future__ import annotations

import numpy as np
import pytest
from tests._law import direct_and_real_agree_pvalue, shipped_and_broken

from privopt import audit


def test_instance_hand_values():
    # shipped: the geometric cut x >= 9.09 separates 5s from 20s on both sides; the data's median
    # is 5 on D (every record but x = 0 on one side: best 4 errors) and 20 on D' (best 1)
    pair = audit.geometric_instance(k=4)
    shipped = audit.GeometricStepsTarget(pair, epsilon=1.0)
    broken = audit.GeometricStepsTarget(pair, epsilon=1.0, data_steps=True)
    assert shipped.losses[0][5:].min() == 0 and shipped.losses[1][5:].min() == 1
    assert broken.losses[0][5:].min() == 4 and broken.losses[1][5:].min() == 1
    # the equal-step rung (cut at 50) is the same for both variants
    np.testing.assert_array_equal(shipped.losses[0][:5], broken.losses[0][:5])
    # neighbours move each shipped loss by at most 1 (the replaced record's own term)
    assert np.max(np.abs(shipped.losses[0] - shipped.losses[1])) <= 1
    assert np.max(np.abs(broken.losses[0] - broken.losses[1])) >= 3


def test_audit_passes_shipped_and_flags_steps_at_the_data_quantiles():
    pair = audit.geometric_instance()
    shipped, broken = shipped_and_broken(audit.GeometricStepsTarget, pair, epsilon=1.0, broken={"data_steps": True})
    assert not shipped.violation and shipped.epsilon_lower_bound <= 1.0
    assert broken.violation and broken.epsilon_lower_bound > 1.5


@pytest.mark.slow
def test_direct_law_and_the_real_mechanism_agree():
    target = audit.GeometricStepsTarget(audit.geometric_instance(), epsilon=1.0)
    assert direct_and_real_agree_pvalue(target, 3000, 1000) > 1e-3
