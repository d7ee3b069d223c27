"""W, the discrete decision set of the discrete mechanisms: a product of per-coordinate
grids intersected with the ball ||w||_2 <= D.

- :func:`parse_grid`: the one parser of a ``grid=`` argument (``None``, an int B, one
  sequence for every coordinate, or one per coordinate); :func:`common_step`: the one rule
  for a grid's common step (the unit in which the grid and ||w||^2 are exact integers).
- :func:`norm_levels` (:class:`NormLevels`): the exact levels of ||w||^2 within the ball.
- :func:`count_grid_points`, :func:`grid_points`, :func:`iter_grid_blocks`,
  :func:`prefix_counts`, :func:`uniform_grid`: counting and listing the points of W.
- :class:`SeparableConstraints`, :func:`count_constrained_points`, :func:`constrained_points`:
  the points of a product grid that meet separable (e.g. linear) constraints on the decision,
  counted and listed without listing the product (a cardinality or knapsack constraint);
  :func:`count_with_work` (:class:`ConstrainedCount`): a count with its cost in units of work
  that do not depend on the machine's load.
- :func:`split_support_count`: whether (and into how many supports) W can be split by
  support for the exact search engine.
- :class:`DecisionSpace`: W itself as one frozen record (the grids, the ball, the declared
  rows) with the views above derived from it on first use; every layer reads it.
  :func:`public_w`: the one maker of W from public inputs (a ``grid=`` argument, d, the
  ball), one record per process for plain numbers, read by the estimator and the 0/1 models.
- :class:`GridUnits` (:func:`grid_units_of`, :attr:`DecisionSpace.exact_units`): W in its
  grid's exact units (:func:`grid_unit`, :func:`grid_units`, :func:`norm_sq_units`), the
  view of the 0/1-loss models' exact margin.

Pure numpy on public quantities (the grid, the ball, d, the number of feature values):
nothing here reads private data or Pyomo.  It imports only the foundations.  Which W's the
default estimator offers (the resolutions, the budget rule, the prior, the warm start) is
the estimator's policy, not arithmetic on W: :mod:`privopt.estimators` (``_ladder.py``).
"""

from .._lattice import MAX_GRID_SIZE, grid_separation
from ._constrained import (
    COUNT_STEP_WORK,
    MAX_COUNT_STATES,
    ConstrainedCount,
    SeparableConstraints,
    constrained_points,
    count_constrained_points,
    count_with_work,
    linear_tables,
    partial_feasible,
)
from ._grid import STEP_MAX_DENOMINATOR, STEP_TOL, common_step, default_grid_bound, parse_grid
from ._levels import MAX_LEVEL_WORK, MAX_LEVELS, NormLevels, norm_levels
from ._points import count_grid_points, grid_points, iter_grid_blocks, prefix_counts, product_size, uniform_grid
from ._support import SupportWork, split_support_count, split_support_work
from ._units import GridUnits, grid_unit, grid_units, grid_units_of, integral_typed, norm_sq_units
from ._w import DecisionSpace, public_w

__all__ = [
    "DecisionSpace",
    "public_w",
    "GridUnits",
    "grid_units_of",
    "grid_unit",
    "grid_units",
    "norm_sq_units",
    "integral_typed",
    "parse_grid",
    "default_grid_bound",
    "common_step",
    "STEP_MAX_DENOMINATOR",
    "STEP_TOL",
    "MAX_GRID_SIZE",
    "grid_separation",
    "NormLevels",
    "norm_levels",
    "MAX_LEVELS",
    "MAX_LEVEL_WORK",
    "count_grid_points",
    "grid_points",
    "iter_grid_blocks",
    "prefix_counts",
    "uniform_grid",
    "product_size",
    "split_support_count",
    "split_support_work",
    "SupportWork",
    "SeparableConstraints",
    "linear_tables",
    "count_constrained_points",
    "count_with_work",
    "ConstrainedCount",
    "COUNT_STEP_WORK",
    "constrained_points",
    "partial_feasible",
    "MAX_COUNT_STATES",
]
