"""privopt's exact search engine over a finite W, below the solver layer and without
Pyomo: the top-down samplers of private selection (exact report-noisy-max drawn top down)
and the optimum search by regions (:mod:`privopt.search._topdown`), A* sampling over prefixes
of the decision with any bound oracle (:mod:`privopt.search._prefix`), the region problems of
the 0/1-loss halfspace models (:mod:`privopt.search._regions`), the pattern kernels
(:mod:`privopt.search._patterns`), the exact 0/1 losses of every point of W
(:mod:`privopt.search._losses`) and report-noisy-max over W by branch and bound
(:mod:`privopt.search._argmax`), and the predicted seconds of its draws with their fitted
constants (:mod:`privopt.search._costs`).  Internal: the mechanisms
(:func:`privopt.exponential_mechanism`, :func:`privopt.opdisc` with ``solver="enumerate"``),
the scoring systems and the audit import the names below (package-level names, not
public API: none is in ``__all__``)."""

from ._argmax import BoundedArgmax as BoundedArgmax
from ._argmax import NoisyArgmax as NoisyArgmax
from ._costs import BRANCH_AND_BOUND_COST as BRANCH_AND_BOUND_COST
from ._costs import BranchAndBoundCost as BranchAndBoundCost
from ._costs import branch_and_bound_seconds as branch_and_bound_seconds
from ._data import HalfspaceData as HalfspaceData
from ._losses import IntegerLattice as IntegerLattice
from ._losses import SparseTables as SparseTables
from ._losses import block_points_for as block_points_for
from ._losses import choose_engine as choose_engine
from ._losses import iter_losses as iter_losses
from ._losses import scoring_costs as scoring_costs
from ._losses import sparse_applicable as sparse_applicable
from ._patterns import pattern_counts as pattern_counts
from ._patterns import pattern_lower_bounds as pattern_lower_bounds
from ._regions import BOUND_ROWS_PER_SECOND as BOUND_ROWS_PER_SECOND
from ._regions import topdown_seconds as topdown_seconds
from ._regions import bound_search_work as bound_search_work
from ._regions import enumeration_levels as enumeration_levels
from ._regions import halfspace_problem as halfspace_problem
from ._regions import perturbed_problem as perturbed_problem
from ._regions import split_supports as split_supports
from ._prefix import BoundOracle as BoundOracle
from ._prefix import PrefixSpace as PrefixSpace
from ._prefix import PrefixStats as PrefixStats
from ._prefix import sample_prefix as sample_prefix
from ._topdown import KeyedStreams as KeyedStreams
from ._topdown import RegionProblem as RegionProblem
from ._topdown import install_problem as install_problem
from ._topdown import lex_combinations as lex_combinations
from ._topdown import plan_shards as plan_shards
from ._topdown import run_shards as run_shards
from ._topdown import sample_top_down as sample_top_down
from ._topdown import search_optimum as search_optimum

__all__: list[str] = []
