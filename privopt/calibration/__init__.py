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
from ._opsamp import opsamp_parameters
from ._rspm import rspm_noise_scale
from ._selection import (
    SELECTION_METHODS,
    base_measure_log_weights,
    check_prior,
    mixture_utility_bound,
    exponential_mechanism_probabilities,
    permute_and_flip_probabilities,
    selection_noise_scale,
    selection_sensitivity,
    selection_utility_bound,
)

__all__ = [
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
]
