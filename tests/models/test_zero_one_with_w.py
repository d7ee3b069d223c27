"""ZeroOneLoss.with_w: the 0/1 loss of the same records under another W, equal to
zero_one_loss built from scratch, sharing the merged rows instead of merging again."""

import numpy as np
import pytest

from privopt.exceptions import ParameterError, ParameterTypeError
from privopt.models import zero_one_loss


def _table():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(80, 3)).astype(float)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + rng.normal(0, 1, 80) > 1, 1, 0)
    return X, y


@pytest.mark.parametrize("grid, norm_bound, values", [(1, 1.5, None), (3, 3.0, 6), ((-2, -1, 0, 1, 2), None, None),
                                                      ((-0.5, 0.0, 0.5), 1.0, 5)])
def test_with_w_equals_a_loss_built_from_scratch(grid, norm_bound, values):
    X, y = _table()
    kw = dict(fit_intercept=True, classes=(0, 1))
    base = zero_one_loss(X, y, grid=2, norm_bound=2.0, feature_values=6, **kw)
    made = base.with_w(grid=grid, norm_bound=norm_bound, feature_values=values)
    fresh = zero_one_loss(X, y, grid=grid, norm_bound=norm_bound, feature_values=values, **kw)
    assert made.info == fresh.info
    assert (made.w.grids, made.w.norm_bound, made.w.norm_sq_bound) == (fresh.w.grids, fresh.w.norm_bound,
                                                                         fresh.w.norm_sq_bound)
    assert made.labels == fresh.labels
    for field in ("X", "pos", "neg"):
        np.testing.assert_array_equal(getattr(made.data, field), getattr(fresh.data, field))
        assert getattr(made.data, field) is getattr(base.data, field)     # shared, not merged again
    for field in ("exact", "mu", "t_hi", "theta", "objective", "feature_values"):
        assert getattr(made.data, field) == getattr(fresh.data, field)
    assert made.milp().nconstraints() == fresh.milp().nconstraints()


def test_with_w_checks_its_w_as_zero_one_loss_does():
    X, y = _table()
    base = zero_one_loss(X, y, grid=2, fit_intercept=True, classes=(0, 1))
    with pytest.raises(ParameterError, match="norm_bound"):
        base.with_w(grid=(1, 2), norm_bound=0.5)
    with pytest.raises(ParameterError, match="feature_values"):
        base.with_w(grid=2, feature_values=1)


def test_with_w_keeps_the_non_integer_refusal_of_a_new_grid():
    """The exact margin is the grid's unit: rows that are integral stay exact on a finer grid;
    an explicit margin carries over to every W."""
    X, y = _table()
    base = zero_one_loss(X, y, grid=1)
    assert base.with_w(grid=(-0.5, 0.0, 0.5)).data.mu == 0.5
    marg = zero_one_loss(X + 0.25, y, grid=1, margin=0.01)
    made = marg.with_w(grid=2)
    assert not made.data.exact and made.data.mu == 0.01


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("value, margin", [(4.0, None), (2.5, 0.01)])
def test_with_constant_feature_equals_the_widened_table_from_scratch(fit_intercept, value, margin):
    """One more feature equal to ``value`` in every record: the same loss as zero_one_loss on
    the widened table (rows, counts, order, rule, info), its label counts shared."""
    X, y = _table()
    kw = dict(fit_intercept=fit_intercept, classes=(0, 1), margin=margin)
    base = zero_one_loss(X, y, grid=2, norm_bound=2.0, **kw)
    made = base.with_constant_feature(value, grid=3, norm_bound=3.0, feature_values=7)
    fresh = zero_one_loss(np.column_stack([X, np.full(len(X), value)]), y, grid=3, norm_bound=3.0,
                          feature_values=7, **kw)
    assert made.info == fresh.info and made.labels == fresh.labels
    for field in ("X", "pos", "neg"):
        np.testing.assert_array_equal(getattr(made.data, field), getattr(fresh.data, field))
    assert made.data.pos is base.data.pos and made.data.neg is base.data.neg
    for field in ("exact", "mu", "t_hi", "theta", "feature_values"):
        assert getattr(made.data, field) == getattr(fresh.data, field)
    assert made.milp().nconstraints() == fresh.milp().nconstraints()


def test_with_constant_feature_refuses_a_non_integer_column_on_the_exact_lattice():
    X, y = _table()
    base = zero_one_loss(X, y, grid=1)
    assert base.with_constant_feature(3.0, grid=1).data.exact
    with pytest.raises(ParameterError, match="non-integer"):
        base.with_constant_feature(0.5, grid=1)


def test_the_public_w_kept_per_process_is_what_the_grid_and_ball_give():
    # an int grid and a float ball are worked out once per process (the ladder's W's at every
    # fit): the kept record's units are the ones made afresh, and other grids are made at each call
    from privopt.space import grid_units_of, parse_grid, public_w
    from privopt.space._w import _kept_public_w

    for grid, bound, d in [(2, 2.0, 7), (1, 1.0, 3), (None, None, 4), (3, 3, 5)]:
        kept = public_w(grid, d, bound, min_values=2, exact_units=True)
        assert kept is public_w(grid, d, bound, min_values=2, exact_units=True)   # the same record: kept
        assert kept.exact_units is kept.exact_units                               # ... its units derived once
        assert kept.exact_units == grid_units_of(parse_grid(grid, d), bound)      # ... equal to the ones made now
    before = _kept_public_w.cache_info().currsize
    grid = np.int64(2)
    assert public_w(grid, 7, 2.0).exact_units == public_w(2, 7, 2.0).exact_units  # a numpy integer: made, not kept
    assert _kept_public_w.cache_info().currsize == before
    with pytest.raises(ParameterTypeError):                  # True is not the grid 1, kept or not
        public_w(True, 3, 1.0)
    with pytest.raises(ParameterError, match="excludes every grid point"):
        public_w((1.0, 2.0), 2, 0.5).exact_units


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("scale, offset, margin", [(2.0, -4.0, None), (3.0, 1.0, None), (0.5, 0.25, 0.01)])
def test_with_affine_features_equals_the_mapped_table_from_scratch(fit_intercept, scale, offset, margin):
    """Every feature mapped to scale * x + offset (the centred steps 2 z - L among them): the
    same loss as zero_one_loss on the mapped table (rows bit for bit, counts, order, rule,
    info), its label counts shared; the intercept's column left as it is."""
    X, y = _table()
    kw = dict(fit_intercept=fit_intercept, classes=(0, 1), margin=margin)
    base = zero_one_loss(X, y, grid=2, norm_bound=2.0, **kw)
    made = base.with_affine_features(scale, offset, grid=3, norm_bound=3.0, feature_values=7)
    fresh = zero_one_loss(scale * X + offset + 0.0, y, grid=3, norm_bound=3.0, feature_values=7, **kw)
    assert made.info == fresh.info and made.labels == fresh.labels
    for field in ("X", "pos", "neg"):
        assert getattr(made.data, field).tobytes() == getattr(fresh.data, field).tobytes()
    assert made.data.pos is base.data.pos and made.data.neg is base.data.neg
    for field in ("exact", "mu", "t_hi", "theta", "feature_values"):
        assert getattr(made.data, field) == getattr(fresh.data, field)
    np.testing.assert_array_equal(base.data.X, zero_one_loss(X, y, grid=2, norm_bound=2.0, **kw).data.X)   # untouched


def test_with_affine_features_refuses_a_map_that_is_not_increasing_or_leaves_the_lattice():
    X, y = _table()
    base = zero_one_loss(X, y, grid=1)
    with pytest.raises(ParameterError, match="scale"):
        base.with_affine_features(-1.0, 0.0, grid=1)
    with pytest.raises(ParameterError, match="non-integer"):
        base.with_affine_features(1.0, 0.5, grid=1)
