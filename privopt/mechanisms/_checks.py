"""Checks every mechanism runs before any noise is drawn or any solve starts."""

from __future__ import annotations

import pyomo.environ as pyo

from ..exceptions import ModelError, SolverNotAvailableError
from ..solvers import get_spec
from ..solvers._dispatch import _availability

__all__ = ["check_solver_ready", "check_model_objective"]


def check_solver_ready(solver) -> str:
    """The solver name is known and the solver installed (raises otherwise)."""
    spec = get_spec(solver)
    if not _availability(spec.name)[0]:
        raise SolverNotAvailableError(
            f"Solver {spec.name!r} is not installed or not usable here. Install it: {spec.install_hint}"
        )
    return spec.name


def check_model_objective(model):
    """Exactly one active objective, minimized; returns it."""
    if not isinstance(model, pyo.Block):
        raise ModelError(f"model must be a Pyomo model (ConcreteModel), got {type(model).__name__}.", "model")
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        raise ModelError(
            f"model: exactly one active objective (the loss) is needed, found {len(objectives)}; "
            "deactivate the others with obj.deactivate().", "model")
    if objectives[0].sense != pyo.minimize:
        raise ModelError(
            "model: the objective is maximized; privopt perturbs a loss to be minimized. Negate "
            "the expression and declare sense=minimize.", "model")
    return objectives[0]
