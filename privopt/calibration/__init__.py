"""Noise scales and utility bounds: one function per quantity, each citing
its source.  Mechanisms call these and nothing else to size their noise.

[NRVW20] Neel, Roth, Vietri, Wu. Oracle Efficient Private Non-Convex
Optimization. ICML 2020 (arXiv:1909.01783).
"""

from ._opdisc import (
    OPDISC_CALIBRATIONS,
    opdisc_delta,
    opdisc_paper_argument_holds,
    opdisc_shift,
    opdisc_sigma,
    opdisc_sigma_paper,
    opdisc_sigma_proven,
    opdisc_utility_bound,
)

from ._grid import (
    GRID_BITS,
    GridNoise,
    count_laplace,
    grid_gaussian,
    grid_laplace,
    grid_step,
    largest_zcdp_rho,
    zcdp_delta,
)

# For privopt's other packages (the mechanisms, the scoring systems, the audit): not in __all__.
from ._opsamp import OPSampParameters as OPSampParameters
from ._opsamp import opsamp_parameters
from ._rspm import check_rspm_noise as check_rspm_noise
from ._rspm import rspm_noise_scale
from ._scoring import risk_table_noise as risk_table_noise
from ._scoring import risk_table_noise_scale as risk_table_noise_scale
from ._scoring import split_risk_epsilon as split_risk_epsilon
from ._selection import (
    SELECTION_METHODS,
    base_measure_log_weights,
    check_prior,
    exponential_mechanism_probabilities,
    mixture_utility_bound,
    permute_and_flip_probabilities,
    selection_noise_scale,
    selection_sensitivity,
    selection_utility_bound,
    split_warm_start_epsilon,
    WARM_START_SHARE,
)
from ._selection import check_loss_range as check_loss_range
from ._selection import check_selection_method as check_selection_method

__all__ = [
    "GRID_BITS",
    "GridNoise",
    "count_laplace",
    "grid_gaussian",
    "grid_laplace",
    "grid_step",
    "largest_zcdp_rho",
    "zcdp_delta",
    "OPDISC_CALIBRATIONS",
    "opdisc_delta",
    "opdisc_paper_argument_holds",
    "opdisc_shift",
    "opdisc_sigma",
    "opdisc_sigma_paper",
    "opdisc_sigma_proven",
    "opdisc_utility_bound",
    "opsamp_parameters",
    "rspm_noise_scale",
    "SELECTION_METHODS",
    "base_measure_log_weights",
    "check_prior",
    "mixture_utility_bound",
    "exponential_mechanism_probabilities",
    "permute_and_flip_probabilities",
    "selection_noise_scale",
    "selection_sensitivity",
    "selection_utility_bound",
    "split_warm_start_epsilon",
    "WARM_START_SHARE",
]
