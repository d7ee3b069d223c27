"""The top-down draw's predicted time (privopt/search/_regions.py sampling_seconds, read by
privopt/mechanisms/selection/_plan.py): the per-draw overhead, the lower-bound pass and the
exact-minima phase, from public sizes only, checked against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from privopt.mechanisms.selection._plan import plan_halfspace
from privopt.mechanisms.selection import topdown_problem
from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import enumeration_levels, halfspace_problem
from privopt.search import topdown_seconds
from privopt.search._regions import TOPDOWN_COST, TopDownCost
from privopt.space import norm_levels, split_support_work


def _problem(X, y, grid, norm_bound):
    data = getattr(zero_one_halfspace(X, y, grid=grid, norm_bound=norm_bound), ENUMERATION_ATTR)
    coef, bound, _, _ = enumeration_levels(data)
    return data, halfspace_problem(data, coef, bound)


def test_sampling_seconds_by_hand():
    """d = 3, grid {-1, 0, 1} in the unit ball: the empty support (1 point) and three
    supports of one feature (points -1 and 1): 4 regions, point work 3 x 2 x 1 = 6 per row.
    At n = 1,000 with overhead 1e-3, row_seconds 5e-9, exact_weight 0.0125 and no cap on
    the rows (row_exponent 1): 1e-3 + 5e-9 x 1000 x (4 + 0.0125 x 6) = 1e-3 + 2.0375e-5 s.
    With row_base 4 the rows are capped at 4^3 = 64, and with row_exponent 0.5 they count
    as m = 1000 (64 / 1000)^0.5 = 252.98...: 1e-3 + 5e-9 x 252.98 x 4.075 s."""
    _, problem = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    assert problem.n_regions == 4 and problem.public_work() == (4, 6)
    cost = TopDownCost(overhead=1e-3, row_seconds=5e-9, exact_weight=0.0125)
    assert problem.sampling_seconds(1000, cost) == pytest.approx(1e-3 + 2.0375e-5, rel=1e-12)
    assert topdown_seconds(4, 6, 1000, 3, cost) == problem.sampling_seconds(1000, cost)
    capped = TopDownCost(overhead=1e-3, row_seconds=5e-9, exact_weight=0.0125, row_base=4.0, row_exponent=0.5)
    m = 1000 * (64 / 1000) ** 0.5
    assert problem.sampling_seconds(1000, capped) == pytest.approx(1e-3 + 5e-9 * m * 4.075, rel=1e-12)
    assert problem.sampling_seconds(10 ** 6, capped) == problem.sampling_seconds(1000, capped)   # capped: no growth
    # the default constants are the module's one record
    assert problem.sampling_seconds(1000) == topdown_seconds(4, 6, 1000, 3, TOPDOWN_COST)


def test_the_public_work_from_the_grid_and_ball_alone_is_the_problems():
    """The estimator's count of the supports and their points (the grid, the ball and the
    number of feature values only) is what the sampler's problem reads (d = 5, grid
    -2..2, D = 2: supports of up to 4 features)."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(60, 5)).astype(float)
    data, problem = _problem(X, np.where(rng.random(60) < 0.5, 1, -1), grid=2, norm_bound=2.0)
    lv = norm_levels(data.grid, data.norm_bound)
    work = split_support_work(5, lv.coef[0], int(lv.bound), 4)
    assert (work.regions, work.point_work) == problem.public_work() and work.d == 5
    # by hand: sizes 1..4, points per support 4 (+-1, +-2), 4 (+-1 each), 8, 16
    assert work.regions == 1 + 5 + 10 + 10 + 5
    assert work.point_work == 5 * 4 * 1 + 10 * 4 * 2 + 10 * 8 * 3 + 5 * 16 * 4


def test_sampling_seconds_grows_with_n_and_the_points_and_reads_no_data_values():
    """Two tables of the same shape and W, different values and labels: the same
    prediction (public sizes only); a larger W and a larger n predict more."""
    rng = np.random.default_rng(0)
    X1, X2 = rng.integers(0, 3, size=(40, 4)).astype(float), rng.integers(0, 3, size=(40, 4)).astype(float)
    y1, y2 = np.where(rng.random(40) < 0.5, 1, -1), np.where(np.arange(40) % 3 == 0, 1, -1)
    _, a = _problem(X1, y1, grid=2, norm_bound=2.0)
    _, b = _problem(X2, y2, grid=2, norm_bound=2.0)
    _, finer = _problem(X1, y1, grid=2, norm_bound=3.0)      # a larger ball: more points per support
    assert a.sampling_seconds(40) == b.sampling_seconds(40)
    assert a.sampling_seconds(4000) > a.sampling_seconds(40)
    assert finer.public_work()[1] > a.public_work()[1] and finer.sampling_seconds(40) > a.sampling_seconds(40)


def test_the_plan_reports_the_whole_draw_and_keeps_the_pool_choice_of_the_bound_pass():
    data, _ = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    problem = topdown_problem(data, None)
    plan = plan_halfspace(data, problem, n_public=1000, single=False)
    assert plan.path == "topdown"
    assert plan.predicted_time == pytest.approx(problem.sampling_seconds(1000))
    assert plan.sampler.predicted == pytest.approx(problem.predicted_seconds(1000))
