"""privopt.space as a unit: the one grid parser, the one step rule, the norm levels, the
points of W and the one applicability rule of the split by support."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
import pytest

from privopt import space
from privopt._limits import MAX_REGION_PATTERNS, MAX_REGION_POINTS
from privopt.exceptions import ParameterError, ParameterTypeError
from privopt.space import grid_unit
from privopt.models._common import parse_grid as model_parse_grid
from privopt.perturbation import resolve_grids

# --------------------------------------------------------------------------- parser


def test_parse_grid_forms():
    ints = tuple(float(v) for v in range(-2, 3))
    assert space.parse_grid(None, 5) == (ints,) * 5                 # B = floor(sqrt(5)) = 2
    assert space.parse_grid(2, 3) == (ints,) * 3
    assert space.parse_grid([1, -1, 0.5], 2) == ((-1.0, 0.5, 1.0),) * 2
    assert space.parse_grid([[0, 1], (2, -2, 0)], 2) == ((0.0, 1.0), (-2.0, 0.0, 2.0))
    assert space.parse_grid(np.array([[0, 1], [1, 2]]), 2) == ((0.0, 1.0), (1.0, 2.0))
    assert space.parse_grid([3.0], 2) == ((3.0,), (3.0,))           # one value: a fixed coordinate


@pytest.mark.parametrize("grid, kind", [
    (True, ParameterTypeError), (1.5, ParameterTypeError), ("abc", ParameterTypeError),
    (iter([1, 2]), ParameterTypeError), ([], ParameterError), (0, ParameterError),
    ([1, 1, 2], ParameterError), ([0, np.nan], ParameterError), ([[0, 1]] * 3, ParameterError),
    ([[0, 1], [[0, 1]]], ParameterError), (["a", "b"], ParameterTypeError), (10**9, ParameterError),
])
def test_parse_grid_refusals_name_the_parameter(grid, kind):
    with pytest.raises(kind) as info:
        space.parse_grid(grid, 2, "my_grid")
    assert info.value.parameter == "my_grid"


def test_parse_grid_min_values():
    with pytest.raises(ParameterError, match="at least 2 values"):
        space.parse_grid([[0, 1], [5]], 2, min_values=2)


def test_the_models_and_the_transformation_parse_alike():
    """The catalogue models (ints, two values at least) and a user's model
    (resolve_grids, checked against the variables' bounds) read the same grid
    through the one parser."""
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(2), bounds=(-3, 3))
    for grid in (2, [-1, 0, 0.5, 1], [[0, 1], [-2, 0, 2]], np.linspace(-1, 1, 5)):
        from_model = model_parse_grid(grid, 2)
        from_user = resolve_grids([m.w[0], m.w[1]], grid)
        assert [tuple(map(float, g)) for g in from_model] == [tuple(g) for g in from_user]
    assert all(isinstance(v, int) for v in model_parse_grid([-1.0, 0.0, 2.0], 2)[0])


# --------------------------------------------------------------------------- the step rule


@pytest.mark.parametrize("values, step", [
    ([-4.0, 2.0, 6.0], Fraction(2)),
    ([0.5, 1.5, -2.0], Fraction(1, 2)),
    (list(np.arange(-1, 1.01, 0.1)), Fraction(1, 10)),      # 0.30000000000000004 and friends
    ([1 / 3, 2 / 3, -1.0], Fraction(1, 3)),
    ([0.0], Fraction(1)),
    ([math.sqrt(2), 1.0], None),
])
def test_common_step(values, step):
    assert space.common_step(values) == step
    if step is not None:
        assert all((Fraction(repr(float(v))).limit_denominator(space.STEP_MAX_DENOMINATOR) / step).denominator == 1
                   for v in values)


def test_the_two_old_step_rules_disagreed_and_the_models_now_follow_the_one_rule():
    """Before privopt.space, the model builders looked for a step with denominators
    up to 1,000 within 1e-9, the norm levels with denominators up to 10^4 within
    1e-12.  Both now use common_step (10^4, 1e-12), which changes the models'
    verdict on two kinds of grid (the levels' verdict is unchanged):"""
    fine = [-1 / 1024, 0.0, 1 / 1024]           # step 1/1024: a denominator above 1,000
    assert space.common_step(fine) == Fraction(1, 1024)
    assert grid_unit(model_parse_grid(fine, 2)) == Fraction(1, 1024)     # was refused by the models
    lv = space.norm_levels([tuple(fine)] * 2, 2 / 1024)
    assert lv.exact and lv.unit == pytest.approx(1 / 1024**2)

    near = [-0.333333333, 0.0, 0.333333333]      # 3.3e-10 from 1/3: not a multiple of it
    assert space.common_step(near) is None
    with pytest.raises(ParameterError, match="common rational step"):
        grid_unit(model_parse_grid(near, 2))     # was snapped to 1/3 by the models
    assert not space.norm_levels([tuple(near)] * 2, 1.0).exact


# --------------------------------------------------------------------------- levels and points


def test_norm_levels_and_points_agree_with_brute_force():
    grid = tuple(float(v) for v in range(-2, 3))
    for d, D in ((3, 2.0), (4, math.sqrt(5)), (2, 1.5)):
        lv = space.norm_levels([grid] * d, D)
        points = [p for p in itertools.product(grid, repeat=d) if sum(v * v for v in p) <= D * D + 1e-9]
        assert space.count_grid_points(lv.coef, int(lv.bound)) == len(points)
        vals, units = space.grid_points([grid] * d, lv.coef, int(lv.bound))
        assert sorted(map(tuple, vals)) == sorted(points)
        assert np.array_equal(units, np.sum(vals ** 2, axis=1).astype(int))
        blocks = list(space.iter_grid_blocks([grid] * d, lv.coef, int(lv.bound), 7))
        assert np.array_equal(np.vstack([b[0] for b in blocks]), vals)


def test_uniform_grid():
    g = (-1.0, 0.0, 1.0)
    assert space.uniform_grid([g, g]) == g
    assert space.uniform_grid([g, (-1.0, 1.0)]) is None
    assert space.uniform_grid([(1.0, 2.0)] * 2) is None         # no 0


# --------------------------------------------------------------------------- split by support


def _supports_by_listing(grid, d, D):
    pts = [p for p in itertools.product(grid, repeat=d) if sum(v * v for v in p) <= D * D + 1e-9]
    return len({tuple(v != 0 for v in p) for p in pts})


@pytest.mark.parametrize("B, d, D", [(2, 5, 2.0), (1, 6, math.sqrt(3)), (3, 4, 3.0)])
def test_split_support_count_counts_the_supports(B, d, D):
    grid = tuple(float(v) for v in range(-B, B + 1))
    lv = space.norm_levels([grid] * d, D)
    assert space.split_support_count(d, lv.coef[0], int(lv.bound), 3) == _supports_by_listing(grid, d, D)


def test_split_support_count_refusals():
    coef, bound = (4, 1, 0, 1, 4), 4                     # -2..2, D = 2
    assert space.split_support_count(5, (4, 1, 1, 4), bound, 3) is None      # no 0 in the grid
    assert space.split_support_count(5, (0,), bound, 3) is None               # only 0
    # row patterns: n_values ** kmax against MAX_REGION_PATTERNS (kmax = 4 here)
    too_many = math.ceil(MAX_REGION_PATTERNS ** 0.25) + 1
    assert space.split_support_count(5, coef, bound, too_many) is None
    assert space.split_support_count(5, coef, bound, too_many - 2) is not None
    # n_values = 1 counts as 2 (a pattern still splits on the sign of the value)
    assert space.split_support_count(5, coef, bound, 1) == space.split_support_count(5, coef, bound, 2)


def test_split_support_count_refuses_too_many_region_points():
    """The check the estimator's old copy of the rule lacked: on -1..1 with the
    ball D^2 = d, the row patterns are few (2^20 <= MAX_REGION_PATTERNS) but one
    support of each size holds 2^21 - 2 points in all, above MAX_REGION_POINTS:
    the split does not apply (every point would be listed and scored)."""
    d, coef = 20, (1, 0, 1)
    assert 2 ** d <= MAX_REGION_PATTERNS
    points = sum(2 ** k for k in range(1, d + 1))
    assert points > MAX_REGION_POINTS
    assert space.split_support_count(d, coef, d, 2) is None
    small = max(k for k in range(d) if sum(2 ** j for j in range(1, k + 1)) <= MAX_REGION_POINTS)
    assert space.split_support_count(d, coef, small, 2) == sum(math.comb(d, k) for k in range(small + 1))


def test_the_search_engine_uses_the_one_rule():
    """search._regions' split of a real model's enumeration data is the space rule."""
    from privopt.models import zero_one_halfspace
    from privopt.models._common import ENUMERATION_ATTR
    from privopt.search._regions import enumeration_levels, halfspace_problem, split_supports

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(40, 4)).astype(float)
    y = (X[:, 0] - X[:, 1] + rng.normal(size=40) > 0).astype(int)
    model = zero_one_halfspace(X, y, grid=2, norm_bound=2.0)
    data = getattr(model, ENUMERATION_ATTR)
    lv = space.norm_levels(data.grid, data.norm_bound)
    n_values = len(np.unique(data.X))
    expected = space.split_support_count(data.X.shape[1], lv.coef[0], int(lv.bound), n_values)
    assert expected is not None
    assert split_supports(data) == expected
    assert halfspace_problem(data).n_regions == expected
    # W is read from the data's record; a smaller ball given by the caller splits W within it
    small = space.norm_levels(data.grid, 1.0)
    within = space.split_support_count(data.X.shape[1], small.coef[0], int(small.bound), n_values)
    assert within is not None and within < expected
    assert halfspace_problem(data, 1.0).n_regions == within
    assert split_supports(data, enumeration_levels(data, 1.0)) == within


@pytest.mark.parametrize("x, values, inverse", [
    ([2.0, -1.0, 2.0, 0.0], [-1.0, 0.0, 2.0], [2, 0, 2, 1]),               # counted in a table
    ([[3.0, 3.0], [-2.0, 5.0]], [-2.0, 3.0, 5.0], [1, 1, 0, 2]),           # any shape, inverse flattened
    ([0.5, -0.25, 0.5], [-0.25, 0.5], [1, 0, 1]),                           # not integers: sorted
    ([0.0, 70000.0, 0.0], [0.0, 70000.0], [0, 1, 0]),                       # span above 65,536: sorted
    ([], [], []),
])
def test_unique_values_worked_by_hand(x, values, inverse):
    from privopt._lattice import unique_values

    v, inv = unique_values(np.asarray(x, dtype=float))
    np.testing.assert_array_equal(v, values)
    np.testing.assert_array_equal(inv, inverse)


def test_unique_values_is_numpys_unique_on_feature_codes():
    """The table path gives np.unique's arrays on discretized features (and -0.0 as 0.0)."""
    from privopt._lattice import unique_values

    rng = np.random.default_rng(5)
    for x in (rng.integers(-7, 9, size=(500, 6)).astype(float), np.array([0.0, -0.0, 3.0, -0.0]),
              rng.integers(0, 2, size=1000).astype(float)):
        v, inv = unique_values(x)
        ref_v, ref_inv = np.unique(x, return_inverse=True)
        np.testing.assert_array_equal(v, ref_v)
        np.testing.assert_array_equal(inv, np.asarray(ref_inv).reshape(-1))
        np.testing.assert_array_equal(v[inv], x.reshape(-1))


@pytest.mark.parametrize("shape, levels", [((400, 6), 3), ((300, 45), 3), ((50, 0), 2), ((0, 4), 2)])
def test_unique_rows_is_numpys_unique_rows(shape, levels):
    """One mixed-radix key per row where the radices fit in 2^62 (6 columns of 3 codes), a key
    per column where they do not (3^45 > 2^62): both np.unique's rows, in its order, and its
    inverse."""
    from privopt.models._common import _row_keys, column_codes, unique_rows

    rng = np.random.default_rng(11)
    X = rng.integers(-1, levels - 1, size=shape).astype(float) * 0.5
    X[: shape[0] // 2] = X[shape[0] // 2: 2 * (shape[0] // 2)]        # half the rows repeated
    assert (_row_keys(column_codes(X)) is None) == (levels ** shape[1] >= 2 ** 62)
    Xu, inv = unique_rows(X)
    ref, ref_inv = np.unique(X, axis=0, return_inverse=True)
    np.testing.assert_array_equal(Xu, ref)
    np.testing.assert_array_equal(inv, np.asarray(ref_inv).reshape(-1))


def test_prefix_counts_are_shared_and_read_only():
    """Counted once per (units, bound) in a process: the same arrays again, which no caller
    may change (a change would corrupt every later count of that W)."""
    from privopt.space import count_grid_points, prefix_counts

    coef = [[4, 1, 0, 1, 4]] * 3
    first = prefix_counts(coef, 5)
    assert prefix_counts([tuple(c) for c in coef], 5) is first
    assert [int(v) for v in first[1]] == [1, 3, 3, 3, 5, 5]       # one coordinate: 0; +-1; +-2 from 4 units
    with pytest.raises(ValueError):
        first[1][0] = 7
    assert count_grid_points(coef, 5) == int(first[3][5])
