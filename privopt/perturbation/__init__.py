"""Perturbation: the ``privopt.objective_perturbation`` Pyomo transformation
and its getters.

Importing privopt registers the transformation with Pyomo::

    import pyomo.environ as pyo
    import privopt
    xfrm = pyo.TransformationFactory("privopt.objective_perturbation")
    xfrm.apply_to(model, noise=eta, norm_bound=D)        # in place
    private_model = xfrm.create_using(model, noise=eta, norm_bound=D)  # on a clone
"""

from ._grid import grid_separation, norm_levels, resolve_grids, snap_to_grid, weights_of
from .objective_perturbation import (
    ObjectivePerturbation,
    get_noise,
    get_normalization,
    get_original_objective,
    get_perturbation_block,
    get_perturbed_objective,
    get_weights,
    is_transformed,
    pi_value,
    revert,
    set_noise,
)

# For privopt's other packages (the exact oracle in privopt.solvers): not in __all__.
from .objective_perturbation import PerturbationInfo as PerturbationInfo
from .objective_perturbation import find_perturbation_block as find_perturbation_block
from .objective_perturbation import perturbation_info as perturbation_info

__all__ = [
    "ObjectivePerturbation",
    "get_noise",
    "get_normalization",
    "get_original_objective",
    "get_perturbation_block",
    "get_perturbed_objective",
    "get_weights",
    "is_transformed",
    "pi_value",
    "revert",
    "set_noise",
    "grid_separation",
    "norm_levels",
    "resolve_grids",
    "snap_to_grid",
    "weights_of",
]
