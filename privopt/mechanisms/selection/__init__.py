r"""Private selection over a finite W and over several W's at once, as check -> plan ->
sample -> release.

- check and the mechanisms: :func:`exponential_mechanism` (``exponential.py``, the
  exponential mechanism [MT07] and permute-and-flip [MS20] over one W) and
  :func:`mixture_selection` (``mixture.py``, over the disjoint union of several W's with a
  public base measure);
- W of a user's model, read once per release: ``_decision.py`` (``DecisionSet``);
- plan, from public quantities only, with the one ``time_limit`` rule: ``_plan.py``
  (``SelectionPlan``, ``plan_halfspace``, ``plan_user_model``, ``check_time_limit``);
- L(w) on every point of W: ``_evaluate.py``; the bounds of the bounded sampler on a
  user's model: ``_bounded.py``;
- sample, one interface run alike by both mechanisms and the audit: ``_samplers.py``
  (``TopDownSampler``, ``ScoredSampler``, ``BoundedSampler``, each giving a ``Draw``);
- release, typed and frozen: ``_release.py`` (``SelectionParameters``, ``SelectionReport``,
  ``MixtureParameters``, ``MixtureReport``).

[MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
[MS20] McKenna, Sheldon. Permute-and-flip. NeurIPS 2020.
"""

from ._bounded import PyomoBoundOracle as PyomoBoundOracle
from ._bounded import prefix_space as prefix_space
from ._bounded import relaxation_bound as relaxation_bound
from ._evaluate import FixAndSolveEvaluator as FixAndSolveEvaluator
from ._evaluate import branch_and_bound_seconds as branch_and_bound_seconds
from ._evaluate import predict_evaluation_seconds as predict_evaluation_seconds
from ._plan import workers_for as workers_for
from ._release import MixtureParameters as MixtureParameters
from ._release import MixturePart as MixturePart
from ._release import SelectionParameters, SelectionReport
from ._samplers import BoundedSampler as BoundedSampler
from .exponential import (SELECTION_OPTIONS, SELECTION_PATHS, SelectionTask, bounded_lower_bound, exponential_mechanism,
                          selection_keys, topdown_problem)
from .mixture import MixtureReport, mixture_selection

__all__ = ["exponential_mechanism", "mixture_selection", "SelectionReport", "MixtureReport", "selection_keys",
           "topdown_problem", "SELECTION_PATHS", "SELECTION_OPTIONS", "SelectionTask", "bounded_lower_bound",
           "SelectionParameters"]
