"""The predicted time of a W_r scored by branch and bound inside mixture_selection
(privopt/mechanisms/selection/_evaluate.py branch_and_bound_seconds, read by the plan), and the
estimator's mirror of the mixture's time_limit rule (mixture_part_seconds): from public
sizes only, checked against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from privopt.estimators import mixture_part_seconds
from privopt.mechanisms.selection import _plan
from privopt.mechanisms.selection._evaluate import (BRANCH_AND_BOUND_COST, BranchAndBoundCost, branch_and_bound_seconds,
                                          predict_evaluation_seconds)
from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import topdown_seconds
from privopt.search import BoundedArgmax
from privopt.space import SupportWork


def test_branch_and_bound_seconds_by_hand():
    """overhead 1e-3 + 1e-7 x |W| x (n / 1000) ** 0.5: |W| = 1,000 and n = 4,000 give
    1e-3 + 1e-4 x 2 = 1.2e-3 s; n = 1,000: 1.1e-3 s."""
    cost = BranchAndBoundCost(overhead=1e-3, point_seconds=1e-7, row_exponent=0.5)
    assert branch_and_bound_seconds(1000, 4000, cost) == pytest.approx(1.2e-3, rel=1e-12)
    assert branch_and_bound_seconds(1000, 1000, cost) == pytest.approx(1.1e-3, rel=1e-12)
    c = BRANCH_AND_BOUND_COST
    want = c.overhead + (c.noise_seconds + c.point_seconds) * 5000       # n = 1,000: (n / 1000) ** e = 1
    assert branch_and_bound_seconds(5000, 1000) == pytest.approx(want)


def test_the_noise_of_every_point_is_counted_whatever_the_rows_by_hand():
    """noise_seconds 2e-8 per point beside the rows' term: |W| = 1,000 and n = 4,000 give
    1e-3 + 1,000 x (2e-8 + 1e-7 x (4000 / 1000) ** 0.5) = 1e-3 + 1,000 x 2.2e-7 = 1.22e-3 s.
    Declared values (2, 2, 2, 2) with row_share 0.5: m = min(n, 16^0.5) = 4 rows, so the rows'
    term shrinks to 1e-7 x (4 / 1000) ** 0.5 = 6.3246e-9 a point but the noise's stays:
    1e-3 + 1,000 x (2e-8 + 6.3246e-9) = 1.0263246e-3 s, at any n >= 4."""
    cost = BranchAndBoundCost(overhead=1e-3, point_seconds=1e-7, row_exponent=0.5, row_share=0.5, noise_seconds=2e-8)
    assert branch_and_bound_seconds(1000, 4000, cost) == pytest.approx(1.22e-3, rel=1e-12)
    assert branch_and_bound_seconds(1000, 4000, cost, (2, 2, 2, 2)) == pytest.approx(1.0263246e-3, rel=1e-7)
    assert branch_and_bound_seconds(1000, 10 ** 6, cost, (2, 2, 2, 2)) == branch_and_bound_seconds(
        1000, 4000, cost, (2, 2, 2, 2))
    # without the noise's term, the same W on few rows costs next to nothing beyond the overhead
    rows_only = BranchAndBoundCost(overhead=1e-3, point_seconds=1e-7, row_exponent=0.5, row_share=0.5)
    assert branch_and_bound_seconds(1000, 4000, rows_only, (2, 2, 2, 2)) == pytest.approx(1.0063246e-3, rel=1e-7)


def _per_coordinate_grid_data(seed: int):
    """A W that cannot be split by support (a grid per coordinate), integer features."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(50, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 0.5, 50) > 0.5, 1, 0)
    model = zero_one_halfspace(X, y, grid=[[-1, 0, 1], [-2, -1, 0, 1, 2], [-1, 0, 1]], norm_bound=2.0)
    return getattr(model, ENUMERATION_ATTR), model


def test_a_mixture_w_scored_by_branch_and_bound_is_predicted_as_such_from_public_sizes():
    if BoundedArgmax.of(*_levels(_per_coordinate_grid_data(0)[0])) is None:
        pytest.skip("the branch and bound needs numba")
    plans = []
    for seed in (0, 1):          # two tables of the same shape, other values and labels
        data, model = _per_coordinate_grid_data(seed)
        plan = _plan.plan_halfspace(data, None, n_public=50, model=model, single=False)
        assert plan.path == "enumerate"
        assert plan.predicted_time == pytest.approx(branch_and_bound_seconds(plan.n_points, 50))
        assert "branch and bound" in plan.work
        plans.append(plan)
    assert plans[0].predicted_time == plans[1].predicted_time
    # a single W (exponential_mechanism) scores every point: the enumeration's prediction
    single = _plan.plan_halfspace(data, None, n_public=50, model=model, single=True)
    assert single.predicted_time != plans[1].predicted_time and "scoring all" in single.work


def _levels(data):
    from privopt.search import enumeration_levels

    coef, bound, _, _ = enumeration_levels(data)
    return data, coef, bound


def test_the_estimators_mirror_is_never_short_of_the_plans_prediction():
    """Top down: the same formula on the same public work (on one core where the bound pass
    is short); scored: the larger of every point and the branch and bound."""
    work = SupportWork(regions=99, point_work=3276, d=7, sizes=(4, 4, 8, 16), values=6)
    assert mixture_part_seconds(953, 2000, 7, topdown_work=work) == topdown_seconds(work, 2000)
    scored = mixture_part_seconds(88_273, 2000, 7)
    assert scored == max(predict_evaluation_seconds(88_273, 2000, 7), branch_and_bound_seconds(88_273, 2000))


def test_branch_and_bound_seconds_with_values_declared_per_coordinate_by_hand():
    """Declared values (4, 4, 4, 1) per coordinate: at most 4 x 4 x 4 x 1 = 64 distinct rows;
    row_share 0.5 makes m = min(n, 64^0.5) = 8, so |W| = 1,000 and n = 4,000 give
    1e-3 + 1e-7 x 1,000 x (8 / 1000)^0.5 (n itself no longer counts); on n = 5 < 8, m = n.
    Undeclared (None), the formula of n alone."""
    cost = BranchAndBoundCost(overhead=1e-3, point_seconds=1e-7, row_exponent=0.5, row_share=0.5)
    want = 1e-3 + 1e-4 * (8 / 1000) ** 0.5
    assert branch_and_bound_seconds(1000, 4000, cost, (4, 4, 4, 1)) == pytest.approx(want, rel=1e-12)
    assert branch_and_bound_seconds(1000, 10 ** 6, cost, (4, 4, 4, 1)) == pytest.approx(want, rel=1e-12)
    assert branch_and_bound_seconds(1000, 5, cost, (4, 4, 4, 1)) == branch_and_bound_seconds(1000, 5, cost)
    assert branch_and_bound_seconds(1000, 4000, cost, None) == pytest.approx(1.2e-3, rel=1e-12)
    # the estimator's mirror passes them on where every point of W_r cannot be split by support
    declared = mixture_part_seconds(88_273, 2000, 7, coordinate_values=(2,) * 6 + (1,))
    assert declared == max(predict_evaluation_seconds(88_273, 2000, 7),
                           branch_and_bound_seconds(88_273, 2000, coordinate_values=(2,) * 6 + (1,)))


def test_the_plan_of_a_w_scored_by_branch_and_bound_reads_the_declared_values():
    if BoundedArgmax.of(*_levels(_per_coordinate_grid_data(0)[0])) is None:
        pytest.skip("the branch and bound needs numba")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(50, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0.5, 1, 0)
    grid = [[-1, 0, 1], [-2, -1, 0, 1, 2], [-1, 0, 1]]
    model = zero_one_halfspace(X, y, grid=grid, norm_bound=2.0, coordinate_values=(3, 3, 3))
    data = getattr(model, ENUMERATION_ATTR)
    plan = _plan.plan_halfspace(data, None, n_public=50, model=model, single=False)
    assert plan.path == "enumerate"
    want = branch_and_bound_seconds(plan.n_points, 50, coordinate_values=(3, 3, 3))
    assert plan.predicted_time == pytest.approx(want)
    assert want < branch_and_bound_seconds(plan.n_points, 50)      # 27 rows at most, not 50
