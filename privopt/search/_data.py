"""The record a zero_one_halfspace model carries for the exact search engine and for
``solver="enumerate"`` (:data:`privopt.models.ENUMERATION_ATTR`): the model's distinct rows
with their label counts, its decision rule and its W (the one record of W,
:class:`privopt.space.DecisionSpace`: the grid and the ball).

It holds the training data's distinct rows, so it is private: the oracle and the
samplers read it, a release never contains it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..space import DecisionSpace

__all__ = ["HalfspaceData"]


@dataclass(frozen=True, eq=False)
class HalfspaceData:
    """What the exact engine needs of a zero_one_halfspace model, set on the model by
    :func:`privopt.models.zero_one_halfspace`.

    ``X``: the distinct rows (float64, one per row of the merged model); ``pos``,
    ``neg``: how many records with label +1 and -1 each distinct row stands for;
    ``exact``, ``mu``, ``t_hi``, ``theta``: the decision rule (``exact``: the exact
    margin rule, positive iff <w, x> >= ``t_hi``, negative iff <= ``t_hi - mu``;
    ``theta``: the threshold the region kernels use); ``w``: W (a
    :class:`privopt.space.DecisionSpace`: the per-coordinate grids, D, and D^2 as the
    builder rounded it onto the grid's units; read as ``grid``, ``norm_bound`` and
    ``norm_sq_bound`` too); ``objective``: the name of the model's loss
    objective; ``components``: the names of the components the builder made
    (``solver="enumerate"`` refuses a model changed since); ``feature_values``: the most
    values a coordinate of a record takes, declared in public by the caller (the
    estimator's discretization: levels + 1, plus the intercept's), or None: what the
    top-down split and its predicted time read in place of the values present in X;
    ``coordinate_values``: the values each coordinate of a record takes (the intercept's:
    1), declared in public per coordinate (the estimator's: levels + 1, fewer for columns
    ``integer_features`` declares), or None: read by the draw's predicted time only.
    """

    X: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    exact: bool
    mu: float
    t_hi: float
    theta: float
    w: DecisionSpace
    objective: str = "loss"
    components: tuple[str, ...] = ()
    feature_values: int | None = None
    coordinate_values: tuple[int, ...] | None = None

    @property
    def grid(self) -> tuple:
        """W's per-coordinate grids (``w.grids``)."""
        return self.w.grids

    @property
    def norm_bound(self) -> float:
        """D of W's ball (``w.norm_bound``)."""
        bound = self.w.norm_bound
        assert bound is not None        # a 0/1-loss model's W always has its ball
        return float(bound)

    @property
    def norm_sq_bound(self) -> float:
        """D^2 as the builder rounded it onto the grid's units (``w.norm_sq_bound``)."""
        bound = self.w.norm_sq_bound
        assert bound is not None
        return float(bound)

    def __getitem__(self, key: str):
        """``data["X"]``: the dict spelling of the fields, for code written when
        this record was a dict (privopt itself reads the attributes)."""
        if key not in _FIELDS:
            raise KeyError(key)
        return getattr(self, key)


_FIELDS = frozenset(f.name for f in fields(HalfspaceData)) | {"grid", "norm_bound", "norm_sq_bound"}
