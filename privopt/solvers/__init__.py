"""Solver dispatch: the one place in privopt that knows solvers.

:func:`solve` sends any Pyomo model to a solver chosen by name, translates the
uniform options (``time_limit``, ``mip_gap``, ``abs_gap``, ``threads``,
``seed``: fields of the one record :class:`SolveOptions`) to that solver's own option names, and returns a
:class:`SolveReport` whose ``certified_optimal`` means the same for every
solver.  :func:`available_solvers` lists what is installed.  ``"enumerate"``
is privopt's own exact search over the grid for the models of
:func:`privopt.models.zero_one_halfspace` (:mod:`privopt.solvers._enumerate`);
mechanisms also take ``solver="auto"`` (:func:`choose_solver`).
"""

from ._dispatch import (
    DEFAULT_ABS_GAP,
    SolverInfo,
    available_solvers,
    get_spec,
    is_certified,
    persistent_solver,
    problem_class,
    solve,
)
from ._options import SolveOptions

# For privopt's other layers (the oracle, the mechanisms): the record's helpers, not in __all__.
from ._dispatch import solve_options as solve_options
from ._options import ON_FAILURE as ON_FAILURE
from ._options import SOLVE_FIELDS as SOLVE_FIELDS
from ._options import check_options as check_options
from ._options import split_keywords as split_keywords
from ._options import keyword_signature as keyword_signature
from ._options import parse_keywords as parse_keywords

# For privopt's other packages (the mechanisms' setup checks, selection's scorer, the
# model builders' solver="auto" hint): not public API, so not in __all__.
from ._dispatch import check_option_names as check_option_names
from ._dispatch import check_solve_limits as check_solve_limits
from ._dispatch import check_solver_options as check_solver_options
from ._dispatch import solve_lock as solve_lock
from ._dispatch import solver_availability as solver_availability
from ._enumerate import check_unchanged as check_unchanged
from ._enumerate import choose_solver, count_grid_points, enumeration_size
from ._highs_costs import HighsCostSession as HighsCostSession
from ._highs_fixed import HighsFixedSession as HighsFixedSession
from ._blocks import BLOCKS_ENGINE as BLOCKS_ENGINE
from ._blocks import ChooseOneBlocks as ChooseOneBlocks
from ._blocks import closed_form_blocks as closed_form_blocks
from ._blocks import RecordBlocks as RecordBlocks
from ._blocks import record_blocks as record_blocks
from ._registry import ALIASES, REGISTRY, SolverSpec
from ._report import SolutionStatus, SolveReport, TerminationCondition

__all__ = [
    "solve",
    "SolveOptions",
    "SolveReport",
    "SolverInfo",
    "SolverSpec",
    "TerminationCondition",
    "SolutionStatus",
    "available_solvers",
    "get_spec",
    "is_certified",
    "problem_class",
    "persistent_solver",
    "choose_solver",
    "count_grid_points",
    "enumeration_size",
    "DEFAULT_ABS_GAP",
    "REGISTRY",
    "ALIASES",
]
