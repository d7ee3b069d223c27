"""The W's the default ladder offers, and the mechanism "auto" picks, are public choices:
they must not change when one record of X changes.  X used as it is (``bounds="as_is"``,
or whole numbers without bounds) has no public count of the values its coordinates take;
counting them in X made the ladder offer another set of W's after one record was replaced
(a W offered on one table and not on its neighbour puts positive probability on points the
neighbour's release can never give: no epsilon covers that)."""

import numpy as np
import pytest

from privopt.estimators import RAW_VALUES, PrivateHalfspaceClassifier


def _tables(d: int, wide_record: bool):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (3000, d)).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    neighbour = X.copy()
    neighbour[0] = (np.arange(d) % 17) - 8 if wide_record else 1 - X[0]
    return X, neighbour, y


@pytest.mark.parametrize("bounds", ["as_is", None])
def test_offered_ws_do_not_depend_on_the_values_present(bounds):
    """A 0/1 table and its neighbour with one record spread over -8..8: the same W's offered,
    the same mechanism and reason (d = 10: counting X's values offered 3 W's against 2)."""
    X, neighbour, y = _tables(10, wide_record=True)
    fits = [PrivateHalfspaceClassifier(epsilon=1.0, bounds=bounds, random_state=0, warm_start=False).fit(A, y)
            for A in (X, neighbour)]
    assert fits[0].resolutions_ == fits[1].resolutions_
    assert (fits[0].mechanism_, fits[0].mechanism_reason_) == (fits[1].mechanism_, fits[1].mechanism_reason_)
    assert len(fits[0].resolutions_) >= 2


def test_a_0_1_table_without_bounds_keeps_its_ladder():
    """The public count is 2 (0/1 columns, what whole-number X without bounds mostly holds): a
    0/1 table of d = 10 is offered the W's its values allow (3: with the ball of radius 3, which
    holds a planted halfspace's weights in {-1, 0, 1}); a count of 17 (the whole numbers of
    [-8, 8]) offered 2."""
    X, _, y = _tables(10, wide_record=False)
    fit = PrivateHalfspaceClassifier(epsilon=1.0, bounds=None, random_state=0, warm_start=False).fit(X, y)
    assert RAW_VALUES == 2
    assert len(fit.resolutions_) == 3 and max(r.norm_bound for r in fit.resolutions_) >= 3


def test_the_public_w_is_kept_per_grid_ball_and_d():
    # the ladder's W from public numbers (an int grid, a float ball) is one record per process,
    # equal to the one made afresh; a grid given otherwise is made at each call
    from privopt.space import DecisionSpace, public_w

    clf = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0.0, 1.0))
    w = clf._public_w(5)
    assert w is clf._public_w(5) is public_w(2, 6, 2.0)
    fresh = DecisionSpace.of(2, 6, 2.0)
    assert (w.grids, w.norm_bound, w.size, w.levels.coef, w.levels.bound) == (
        fresh.grids, fresh.norm_bound, fresh.size, fresh.levels.coef, fresh.levels.bound)
    own = PrivateHalfspaceClassifier(epsilon=1.0, bounds=(0.0, 1.0), grid=[-1.0, 0.0, 1.0], norm_bound=1.5)
    assert own._public_w(5) is not own._public_w(5)
    assert own._public_w(5).grids == DecisionSpace.of([-1.0, 0.0, 1.0], 6, 1.5).grids
