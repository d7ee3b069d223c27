"""Private mechanisms: noise, oracle call(s), output step, PrivateResult."""

import functools

# For privopt's other packages (the decorator, the command line, the audit, the estimators): not in __all__.
from ._checks import check_solver_ready as check_solver_ready
from ._noise import draw_grid_noise as draw_grid_noise
from ._noise import release_on_grid as release_on_grid
from ._noise import draw_opdisc_noise as draw_opdisc_noise
from ._noise import draw_opsamp_noise as draw_opsamp_noise
from ._noise import draw_rspm_noise as draw_rspm_noise
from ._noise import draw_selection_noise as draw_selection_noise
from .selection import FixAndSolveEvaluator as FixAndSolveEvaluator
from .selection import PyomoBoundOracle as PyomoBoundOracle
from .selection import prefix_space as prefix_space
from .selection import relaxation_bound as relaxation_bound
from .selection import predict_evaluation_seconds as predict_evaluation_seconds
from .selection import workers_for as workers_for
from .selection import MixtureParameters as MixtureParameters
from .selection import BoundedSampler as BoundedSampler
from .selection import MixturePart as MixturePart
from .selection import MixtureReport as MixtureReport
from .selection import SelectionParameters as SelectionParameters
from .selection import SelectionReport as SelectionReport
from .opdisc import OPDiscParameters as OPDiscParameters
from .opdisc import opdisc
from .opsamp import OPSampReleaseParameters as OPSampReleaseParameters
from .opsamp import opsamp
from .rspm import RSPMParameters as RSPMParameters
from .rspm import rspm
from .selection import exponential_mechanism, mixture_selection

#: Mechanisms by name (used by ``@privopt.private`` and the estimators).
#: ``"exponential"`` and ``"permute_and_flip"`` are
#: :func:`exponential_mechanism` with that ``method``.
MECHANISMS = {
    "opdisc": opdisc,
    "opsamp": opsamp,
    "rspm": rspm,
    "exponential": functools.partial(exponential_mechanism, method="exponential"),
    "permute_and_flip": functools.partial(exponential_mechanism, method="permute_and_flip"),
}

#: The mechanisms that are pure epsilon-DP and take no delta.
PURE_MECHANISMS = ("rspm", "exponential", "permute_and_flip")

__all__ = ["opdisc", "opsamp", "rspm", "exponential_mechanism", "mixture_selection", "MECHANISMS",
           "PURE_MECHANISMS"]
