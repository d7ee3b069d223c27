"""The one record of W (privopt.space.DecisionSpace): its derived views against brute force
over the product grid."""

import itertools
import math

import numpy as np
import pytest

from privopt.space import (DecisionSpace, SeparableConstraints, linear_tables, norm_levels, split_support_work)


def _brute(grids, norm_bound=None, rows=None, lower=None, upper=None):
    """The points of W listed from the product (last coordinate most significant)."""
    out = []
    for combo in itertools.product(*[list(g) for g in reversed(grids)]):
        w = np.array(combo[::-1])
        if norm_bound is not None and float(w @ w) > norm_bound ** 2 * (1 + 1e-12):
            continue
        if rows is not None:
            v = np.asarray(rows) @ w
            if np.any(v < np.asarray(lower) - 1e-9) or np.any(v > np.asarray(upper) + 1e-9):
                continue
        out.append(w)
    return np.array(out).reshape(-1, len(grids))


def test_grid_and_ball_views_match_brute_force():
    w = DecisionSpace.of(2, 4, math.sqrt(5))
    assert w.d == 4 and w.grids == ((-2.0, -1.0, 0.0, 1.0, 2.0),) * 4
    expected = _brute(w.grids, math.sqrt(5))
    assert w.size == expected.shape[0]
    np.testing.assert_array_equal(w.points(), expected)
    assert w.product_size == 5 ** 4
    assert w.uniform == w.grids[0]
    lv = norm_levels(w.grids, math.sqrt(5))
    assert (w.levels.coef, w.levels.bound, w.levels.unit) == (lv.coef, lv.bound, lv.unit)
    assert w.levels is w.levels            # computed once
    assert w.support_work(3) == split_support_work(4, lv.coef[0], int(lv.bound), 3)


def test_no_ball_is_the_product():
    w = DecisionSpace(((0.0, 1.0), (-1.0, 0.0, 2.0)))
    assert w.ball is None and w.separable is None
    assert w.size == 6
    np.testing.assert_array_equal(w.points(), _brute(w.grids))
    assert w.support_work(2) is None
    with pytest.raises(ValueError):
        w.levels


def test_declared_rows_with_the_ball():
    grids = ((0.0, 1.0),) * 6
    rows = [[1.0] * 6]
    cons = SeparableConstraints(linear_tables(grids, rows), [2.0], [3.0], rtol=1e-9)
    w = DecisionSpace(grids, 1.9, constraints=cons)
    sep = w.separable
    assert sep.rows == 2 and sep.rtol[-1] == 0.0 and sep.upper[-1] == 3.0   # the ball last, in exact units
    expected = _brute(grids, 1.9, rows, [2.0], [3.0])
    assert w.size == expected.shape[0] == math.comb(6, 2) + math.comb(6, 3)
    np.testing.assert_array_equal(w.points(), expected)
    assert w.support_work(2) is None        # declared rows: W is not split by support
    alone = DecisionSpace(grids, constraints=cons)
    assert alone.separable is cons and alone.size == math.comb(6, 2) + math.comb(6, 3)


def test_irregular_grid_ball_on_squares():
    grids = ((0.0, 0.3333333333, 1.0),) * 3
    w = DecisionSpace(grids, 1.2)
    assert not w.levels.exact
    np.testing.assert_array_equal(w.points(), _brute(grids, 1.2))
