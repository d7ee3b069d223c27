"""privopt.space.public_w: the one record of a public W that the estimator and the 0/1-loss models read."""

import math
from fractions import Fraction

import numpy as np
import pytest

from privopt.exceptions import ParameterError, ParameterTypeError
from privopt.space import DecisionSpace, public_w


def test_the_units_of_an_integer_grid_are_worked_out_by_hand():
    # grid -2..2 on 3 coordinates, D = sqrt(5): D^2 = 4.999... snaps to 5 units of 1;
    # the box's ranges are 4 each, the ball's diameter 2 sqrt(5)
    u = public_w(2, 3, math.sqrt(5)).exact_units
    assert u.grid == ((-2, -1, 0, 1, 2),) * 3 and all(type(v) is int for g in u.grid for v in g)
    assert (u.unit, u.n_units, u.D, u.tau) == (Fraction(1), 5, math.sqrt(5), 1.0)
    assert u.units == ((-2, -1, 0, 1, 2),) * 3
    assert u.linf_diameter == 4.0                                   # min(4, 2 sqrt 5 = 4.47)
    assert u.l2_diameter == pytest.approx(2 * math.sqrt(5))         # min(sqrt 48 = 6.93, 4.47)
    assert u.l1_diameter == pytest.approx(2 * math.sqrt(5) * math.sqrt(3))   # min(12, 7.75)


def test_the_units_of_a_stepped_grid_and_its_rounded_ball():
    # grid {-1/2, 0, 1/2, 1}, D = 1.2 on 2 coordinates: unit 1/2, floor(1.44 / 0.25) = 5 units,
    # the rounded ball sqrt(5 / 4) = 1.118; ranges 1.5 each
    w = public_w([-0.5, 0.0, 0.5, 1.0], 2, 1.2)
    u = w.exact_units
    assert (u.unit, u.n_units, u.tau) == (Fraction(1, 2), 5, 0.5)
    assert u.units == ((-1, 0, 1, 2),) * 2
    assert u.linf_diameter == 1.5                                   # min(1.5, 2.24)
    assert u.l2_diameter == pytest.approx(1.5 * math.sqrt(2))       # min(2.12, 2.24)
    assert u.l1_diameter == pytest.approx(3.0)                      # min(3, 3.16)
    assert (w.on_units.grids, w.on_units.norm_bound, w.on_units.norm_sq_bound) == (w.grids, 1.2, 1.25)
    assert w.on_units is w.on_units


def test_one_record_per_process_for_plain_numbers_others_made_each_time():
    assert public_w(2, 6, 2.0) is public_w(2, 6, 2.0) is public_w(2, 6, 2)
    assert public_w(None, 4, None) is public_w(None, 4, None)
    arr = np.array([-1.0, 0.0, 1.0])
    assert public_w(arr, 3, 1.5) is not public_w(arr, 3, 1.5)
    assert public_w(arr, 3, 1.5).grids == DecisionSpace.of(arr, 3, 1.5).grids
    assert public_w(np.int64(2), 6, 2.0) is not public_w(2, 6, 2.0)


def test_refusals_name_the_parameter_in_the_models_order():
    with pytest.raises(ParameterError, match="at least 2 values"):
        public_w([0.0], 2, 1.0, min_values=2)
    with pytest.raises(ParameterTypeError, match="norm_bound must be a real number"):
        public_w(2, 2, "a")
    # a grid without a common step is refused before a ball that is not a number (the models' order)
    with pytest.raises(ParameterError, match="common rational step"):
        public_w([0.0, 0.333333333], 2, "a", exact_units=True)
    with pytest.raises(ParameterError, match="must be > 0"):
        public_w(2, 2, -1.0).exact_units
    with pytest.raises(ParameterError, match="excludes every grid point"):
        public_w((1.0, 2.0), 2, 0.5).exact_units


def test_the_estimator_and_its_zero_one_losses_read_the_same_record():
    from privopt import PrivateHalfspaceClassifier
    from privopt.models import zero_one_loss

    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(60, 3)), rng.integers(0, 2, size=60)
    clf = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X, y)
    res = clf.resolutions_[0]
    grid, bound = clf._ball(3, res)
    w = clf._public_w(3, res)
    Xd = clf.discretizer_.transform(X)
    if clf.fit_intercept:
        Xd = np.hstack([Xd, np.ones((60, 1))])
    loss = zero_one_loss(Xd, y, grid=grid, norm_bound=bound)
    assert loss.data.w is w.on_units                                 # the same record, its units derived once
    assert loss.info.grid == w.exact_units.grid and loss.info.norm_bound == w.exact_units.D
