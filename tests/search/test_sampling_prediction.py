"""The top-down draw's predicted time (privopt/search/_regions.py sampling_seconds, read by
privopt/mechanisms/selection/_plan.py): the per-draw overhead, the lower-bound pass and the
exact-minima phase, from public sizes only, checked against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from privopt.mechanisms.selection._plan import plan_halfspace
from privopt.mechanisms.selection import topdown_problem
from privopt.models import ENUMERATION_ATTR, zero_one_halfspace
from privopt.search import halfspace_problem
from privopt.search import topdown_seconds
from privopt.search._regions import TOPDOWN_COST, TopDownCost
from privopt.exceptions import ParameterError
from privopt.space import SupportWork, norm_levels, split_support_work


def _problem(X, y, grid, norm_bound, feature_values=None):
    model = zero_one_halfspace(X, y, grid=grid, norm_bound=norm_bound, feature_values=feature_values)
    data = getattr(model, ENUMERATION_ATTR)
    return data, halfspace_problem(data)


def test_sampling_seconds_by_hand():
    """d = 3, grid {-1, 0, 1} in the unit ball: the empty support (1 point) and three
    supports of one feature (points -1 and 1): 4 regions, sizes (2,), point work
    3 x 2 x 1 = 6.  Nothing declared (v None): m = n = 1,000 rows and p_1 = m; with
    overhead 1e-3, support_seconds 2e-6, point_seconds 1e-7 and both exponents 1:
    1e-3 + 2e-6 x 4 x 1 + 1e-7 x 3 x 2 x 1 x 1 = 1.0086e-3 s.  Declared v = 4 with
    row_share 0.5 and both exponents 0.5: m = min(1000, 4^1.5) = 8 rows, p_1 = min(8, 4) = 4:
    1e-3 + 2e-6 x 4 x (8 / 1000)^0.5 + 1e-7 x 6 x (4 / 1000)^0.5, at any n >= 8."""
    _, problem = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    assert problem.n_regions == 4 and problem.public_work() == SupportWork(4, 6, 3, (2,), None)
    cost = TopDownCost(overhead=1e-3, support_seconds=2e-6, row_exponent=1.0, point_seconds=1e-7,
                       pattern_exponent=1.0)
    assert problem.sampling_seconds(1000, cost) == pytest.approx(1.0086e-3, rel=1e-12)
    assert topdown_seconds(problem.public_work(), 1000, cost) == problem.sampling_seconds(1000, cost)
    assert problem.sampling_seconds(4000, cost) == pytest.approx(1e-3 + 4 * (8e-6 + 6e-7), rel=1e-12)
    capped = TopDownCost(overhead=1e-3, support_seconds=2e-6, row_exponent=0.5, point_seconds=1e-7,
                         pattern_exponent=0.5, row_share=0.5)
    declared = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0, feature_values=4)[1]
    assert declared.public_work() == SupportWork(4, 6, 3, (2,), 4)
    want = 1e-3 + 2e-6 * 4 * (8 / 1000) ** 0.5 + 1e-7 * 6 * (4 / 1000) ** 0.5
    assert declared.sampling_seconds(1000, capped) == pytest.approx(want, rel=1e-12)
    assert declared.sampling_seconds(10 ** 6, capped) == declared.sampling_seconds(1000, capped)   # capped
    # the default constants are the module's one record
    assert problem.sampling_seconds(1000) == topdown_seconds(SupportWork(4, 6, 3, (2,)), 1000, TOPDOWN_COST)


def test_the_declared_values_choose_the_path_not_the_values_present():
    """A table of 0/1 entries splits by support on its own values (2 per coordinate); the
    same table declared to take 2^22 + 1 values per coordinate (more row patterns on one
    feature than the split allows) is not split: the path follows the public declaration.
    A declaration below the values present never makes the kernels' tables too small."""
    X = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    y = [1, -1, 1, -1]
    assert _problem(X, y, grid=1, norm_bound=1.0)[1] is not None
    assert _problem(X, y, grid=1, norm_bound=1.0, feature_values=2 ** 22 + 1)[1] is None
    from privopt.search._regions import _split_values

    data = _problem(X, y, grid=1, norm_bound=1.0, feature_values=2)[0]
    assert _split_values(data, 5) == 5 and _split_values(data, 1) == 2


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "9"])
def test_a_bad_feature_values_is_refused_by_name(bad):
    with pytest.raises(ParameterError, match="feature_values"):
        zero_one_halfspace(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0, feature_values=bad)


def test_the_public_work_from_the_grid_and_ball_alone_is_the_problems():
    """The estimator's count of the supports and their points (the grid, the ball and the
    number of feature values only) is what the sampler's problem reads (d = 5, grid
    -2..2, D = 2: supports of up to 4 features)."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(60, 5)).astype(float)
    data, problem = _problem(X, np.where(rng.random(60) < 0.5, 1, -1), grid=2, norm_bound=2.0)
    lv = norm_levels(data.grid, data.norm_bound)
    work = split_support_work(5, lv.coef[0], int(lv.bound), 4)
    assert work == SupportWork(problem.public_work().regions, problem.public_work().point_work, 5, (4, 4, 8, 16), 4)
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
    assert finer.public_work().point_work > a.public_work().point_work
    assert finer.sampling_seconds(40) > a.sampling_seconds(40)


def test_the_plan_reports_the_whole_draw_and_keeps_the_pool_choice_of_the_bound_pass():
    data, _ = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)
    problem = topdown_problem(data, None)
    plan = plan_halfspace(data, problem, n_public=1000, single=False)
    assert plan.path == "topdown"
    assert plan.predicted_time == pytest.approx(problem.sampling_seconds(1000))
    assert plan.sampler.predicted == pytest.approx(problem.predicted_seconds(1000))


def test_values_declared_per_coordinate_by_hand():
    """The same W (d = 3, grid {-1, 0, 1}, unit ball: 4 supports, sizes (2,), point work 6)
    with the values of each coordinate declared, (2, 2, 1): the distinct rows are at most
    2 x 2 x 1 = 4, so with row_share 0.5, m = min(n, 4^0.5) = 2 rows at any n >= 2, and a
    support of one coordinate has at most vbar = (2 x 2 x 1)^(1/3) = 4^(1/3) patterns (their
    geometric mean): 1e-3 + 2e-6 x 4 x (2 / 1000)^0.5 + 1e-7 x 6 x (4^(1/3) / 1000)^0.5.
    Read by the time only: the path's declared values (``feature_values``) are untouched."""
    capped = TopDownCost(overhead=1e-3, support_seconds=2e-6, row_exponent=0.5, point_seconds=1e-7,
                         pattern_exponent=0.5, row_share=0.5)
    model = zero_one_halfspace(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0, coordinate_values=(2, 2, 1))
    data = getattr(model, ENUMERATION_ATTR)
    problem = halfspace_problem(data)
    assert data.coordinate_values == (2, 2, 1) and data.feature_values is None
    assert problem.public_work() == SupportWork(4, 6, 3, (2,), None, (2, 2, 1))
    want = 1e-3 + 2e-6 * 4 * (2 / 1000) ** 0.5 + 1e-7 * 6 * (4 ** (1 / 3) / 1000) ** 0.5
    assert problem.sampling_seconds(1000, capped) == pytest.approx(want, rel=1e-12)
    assert problem.sampling_seconds(10 ** 6, capped) == problem.sampling_seconds(1000, capped)
    # fewer values than the undeclared v = 4 on every coordinate: a shorter prediction
    undeclared = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0, feature_values=4)[1]
    assert problem.sampling_seconds(1000, capped) < undeclared.sampling_seconds(1000, capped)
    # the path reads none of it: the same split and supports as without the declaration
    plain = _problem(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0)[1]
    assert plain.n_regions == problem.n_regions and plain.public_work().sizes == problem.public_work().sizes


@pytest.mark.parametrize("bad", [(2, 2), (2, 0, 1), (2, 2.5, 1), (True, 2, 1), 3, "2,2,1"])
def test_a_bad_coordinate_values_is_refused_by_name(bad):
    with pytest.raises(ParameterError, match="coordinate_values"):
        zero_one_halfspace(np.eye(3), [1, -1, 1], grid=1, norm_bound=1.0, coordinate_values=bad)


def test_a_w_on_one_feature_has_its_own_constants_by_hand():
    """The warm start's W (one score feature of 34 values and the intercept, grid -33..33 in
    its ball: 4 supports, 66 and 4,356 points per support of size 1 and 2, v = 35) is
    predicted with :data:`ONE_FEATURE_COST`: overhead + support_seconds x 4 x (m / 1000) **
    row_exponent + point_seconds x (2 x 66 x 1 + 4,356 x 2), m = min(n, 35 ** (2 x row_share));
    a W on three coordinates with :data:`TOPDOWN_COST`."""
    from privopt.search._regions import ONE_FEATURE_COST, topdown_cost

    work = SupportWork(regions=4, point_work=8844, d=2, sizes=(66, 4356), values=35)
    c = ONE_FEATURE_COST
    m = min(100_000, 35 ** (2 * c.row_share))
    want = (c.overhead + c.support_seconds * 4 * (m / 1000) ** c.row_exponent
            + c.point_seconds * (2 * 66 * 1 * (min(m, 35) / 1000) ** c.pattern_exponent
                                 + 4356 * 2 * (min(m, 35 ** 2) / 1000) ** c.pattern_exponent))
    assert topdown_seconds(work, 100_000) == pytest.approx(want, rel=1e-12)
    assert topdown_cost(work) is ONE_FEATURE_COST
    assert topdown_seconds(work, 100_000) == topdown_seconds(work, 100_000, ONE_FEATURE_COST)
    three = SupportWork(4, 6, 3, (2,))
    assert topdown_cost(three) is TOPDOWN_COST
    assert topdown_seconds(three, 1000) == topdown_seconds(three, 1000, TOPDOWN_COST)


def test_the_fitted_constants_live_in_one_block_the_refit_rewrites():
    """The three fitted records are defined once, in privopt/search/_costs.py between the
    markers that ``python benchmarks/bench_predictions.py --fit --write`` rewrites, each with
    its provenance (a ``#:`` comment naming the command) above it; the modules that read them
    use those very records."""
    import inspect

    from privopt.mechanisms.selection import _evaluate
    from privopt.search import _costs, _regions

    text = inspect.getsource(_costs)
    begin = "# --- fitted constants: written by `python benchmarks/bench_predictions.py --fit --write` ---"
    end = "# --- end of fitted constants ---"
    assert text.count(begin) == 1 and text.count(end) == 1
    block = text[text.index(begin):text.index(end)]
    lines = block.splitlines()
    for name in ("TOPDOWN_COST", "ONE_FEATURE_COST", "BRANCH_AND_BOUND_COST"):
        assert text.count(f"\n{name} = ") == 1
        at = [i for i, line in enumerate(lines) if line.startswith(f"{name} = ")]
        assert len(at) == 1
        above = []
        for line in reversed(lines[:at[0]]):
            if not line.startswith("#: "):
                break
            above.append(line)
        assert "bench_predictions.py" in " ".join(above), name
    assert _regions.TOPDOWN_COST is _costs.TOPDOWN_COST and _regions.ONE_FEATURE_COST is _costs.ONE_FEATURE_COST
    assert _evaluate.BRANCH_AND_BOUND_COST is _costs.BRANCH_AND_BOUND_COST
