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
from privopt.search._regions import BOUND_ROWS_PER_SECOND, EXACT_WORK_PER_SECOND, SAMPLE_OVERHEAD_SECONDS


def _problem(X, y, grid, norm_bound):
    data = getattr(zero_one_halfspace(X, y, grid=grid, norm_bound=norm_bound), ENUMERATION_ATTR)
    coef, bound, _, _ = enumeration_levels(data)
    return data, halfspace_problem(data, coef, bound)


def test_sampling_seconds_by_hand():
    """d = 3, grid {-1, 0, 1} in the unit ball: the empty support (1 point) and three
    supports of one feature (points -1 and 1): 4 regions, exact work 3 x 2 x 1 = 6 per row.
    At n = 1,000: 1e-3 + 4 x 1000 / 2e8 + 6 x 1000 / 1.6e10 seconds."""
    _, problem = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    assert problem.n_regions == 4 and problem.exact_work(1000) == 6000
    expected = 1e-3 + 4 * 1000 / 2e8 + 6000 / 1.6e10
    assert (SAMPLE_OVERHEAD_SECONDS, BOUND_ROWS_PER_SECOND, EXACT_WORK_PER_SECOND) == (1e-3, 2e8, 1.6e10)
    assert problem.sampling_seconds(1000) == pytest.approx(expected, rel=1e-12)


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
    assert finer.exact_work(40) > a.exact_work(40) and finer.sampling_seconds(40) > a.sampling_seconds(40)


def test_the_plan_reports_the_whole_draw_and_keeps_the_pool_choice_of_the_bound_pass():
    data, _ = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    problem = topdown_problem(data, None)
    plan = plan_halfspace(data, problem, n_public=1000, single=False)
    assert plan.path == "topdown"
    assert plan.predicted_time == pytest.approx(problem.sampling_seconds(1000))
    assert plan.sampler.predicted == pytest.approx(problem.predicted_seconds(1000))
