"""The metadata a privopt model carries.

A privopt model is a plain Pyomo ``ConcreteModel`` with

* the decision vector as ``model.w`` (an ``IndexedVar`` indexed ``0..d-1``),
* the loss L(D, w) = sum_i l_i(w) as its only active objective (minimized),
* a :class:`ModelInfo` attached with :func:`attach_info`, read back with
  :func:`get_info`.

The mechanisms read what they need from the info when their own argument is
``None`` (``norm_bound``, ``separation``, ``lipschitz``, ``n_samples``, ...).
Everything in a ModelInfo must be *public*: derived from the model's
declared domain and bounds, never from the private data (``n_samples`` is the
usual exception, and is treated as public as in the paper).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModelInfo", "attach_info", "get_info", "has_info"]

_ATTR = "_privopt_model_info"


@dataclass(frozen=True)
class ModelInfo:
    """Public facts about a loss model that privopt's mechanisms need.

    Attributes
    ----------
    weights : str
        Name of the decision-vector component (default ``"w"``).
    grid : tuple of tuple of float or None
        For discrete models, the values each coordinate may take (one sorted
        tuple per coordinate); ``None`` for continuous models.
    separation : float or None
        tau: every two distinct points of the parameter set are at l2 distance
        >= tau (the smallest gap of the per-coordinate grids).
    norm_bound : float or None
        D: ||w||_2 <= D on the parameter set.
    loss_range : (float, float) or None
        Range of each per-example loss l_i.
    lipschitz : float or None
        G for OPDisc: per-example loss G-Lipschitz in l2 on the parameter set.
    lipschitz_l1 : float or None
        G for OPSamp: per-example loss G-Lipschitz with respect to l1.
    linf_diameter, l2_diameter, l1_diameter : float or None
        Diameters of the parameter set (OPSamp).
    n_samples : int or None
        Number of records n the loss sums over.
    grid_encoding : str or None
        Name of an existing binary component ``r[j, k]`` with
        ``w_j = sum_k grid[j][k] r[j, k]`` and ``sum_k r[j, k] = 1``, which the
        objective-perturbation transformation reuses instead of adding its own.
    public_constraints : tuple of str
        Names of the model's constraint components (and of weight variables
        whose bounds are mutable Params) that are fixed before the data is
        seen and may shape W (:func:`privopt.models._contract.check_public_constraints`);
        privopt's builders list the constraints they build from public
        quantities (the grid, the ball).  A constraint on the decision alone
        that is not listed here nor in a mechanism's ``public_constraints=``
        is refused.
    record_constraints : tuple of str
        Names of constraint components that are part of the per-record loss
        (a builder's rows), declared so that the public-constraint check does
        not read them.  A declaration, not a guess: list only constraints that
        hold for every decision.
    record_blocks : str or None
        Name of an indexed ``Block`` whose i-th block holds everything record i
        contributes (its variables, rows and objective term), and nothing else
        of the model depends on the records.  Set by
        :class:`privopt.RecordModel`, which builds each block by calling the
        user's per-record builder, so the split between the records and the
        public rest of the model is known by construction rather than inferred.
    extra : dict
        Model-specific facts (e.g. the tie rule of a classifier).
    """

    weights: str = "w"
    grid: tuple | None = None
    separation: float | None = None
    norm_bound: float | None = None
    loss_range: tuple | None = None
    lipschitz: float | None = None
    lipschitz_l1: float | None = None
    linf_diameter: float | None = None
    l2_diameter: float | None = None
    l1_diameter: float | None = None
    n_samples: int | None = None
    grid_encoding: str | None = None
    public_constraints: tuple = ()
    record_constraints: tuple = ()
    record_blocks: str | None = None
    extra: dict = field(default_factory=dict)

    def replace(self, **changes: Any) -> "ModelInfo":
        return dataclasses.replace(self, **changes)


def attach_info(model, info: ModelInfo) -> None:
    """Attach ``info`` to ``model`` (survives ``model.clone()``)."""
    if not isinstance(info, ModelInfo):
        raise TypeError("info must be a privopt.models.ModelInfo")
    setattr(model, _ATTR, info)


def get_info(model) -> ModelInfo | None:
    """The :class:`ModelInfo` attached to ``model``, or ``None``."""
    return getattr(model, _ATTR, None)


def has_info(model) -> bool:
    return get_info(model) is not None
