"""W of one private selection as one frozen record: the plan builds it once, from public
quantities only, and the samplers and the release read it.

W itself is :class:`privopt.space.DecisionSpace` (the grids, the ball, the declared rows on
the decision, and every view derived from them), the one record of W that every layer
reads; :class:`SelectionW` holds it with |W| as the engine that samples it counted it, and
the form of the data that engine reads: the halfspace data of privopt's 0/1-loss model
(:class:`privopt.search.HalfspaceData`: the records' distinct rows, holding W) and its
split by support for the top-down sampler (:class:`privopt.search._regions.HalfspaceProblem`
of :func:`privopt.search.halfspace_problem`), or a user's model's W read from the model
(:class:`~privopt.mechanisms.selection._decision.DecisionSet`: the decision's variables and
declared constraints beside W's record, and the prefix tree of the bounded sampler).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...space import DecisionSpace

__all__ = ["SelectionW"]


@dataclass(frozen=True)
class SelectionW:
    """W of one private selection (module docstring): ``space`` W (a
    :class:`privopt.space.DecisionSpace`; its ``norm_bound`` the D the selection uses);
    ``n_points`` |W|, counted from public quantities by the engine that samples it; on
    privopt's 0/1-loss models ``halfspace`` (their halfspace data) and, where W splits by
    support, ``problem`` (the support split, sampled top down); on a user's model
    ``decision`` (its :class:`~privopt.mechanisms.selection._decision.DecisionSet`)."""

    space: DecisionSpace
    n_points: int
    halfspace: Any = None
    problem: Any = None
    decision: Any = None

    @classmethod
    def of_halfspace(cls, n_points: int, norm_bound: float, data, problem=None) -> "SelectionW":
        """W of a 0/1-loss model's halfspace ``data`` inside the ball of radius ``norm_bound``
        (the data's own W where that is its ball, else the same grids in that ball)."""
        own = data.w
        space = own if float(norm_bound) == own.norm_bound else DecisionSpace(
            own.grids, float(norm_bound), own.norm_sq_bound)
        return cls(space, n_points, halfspace=data, problem=problem)

    @classmethod
    def of_decision(cls, n_points: int, decision) -> "SelectionW":
        """W of a user's model (its :class:`~privopt.mechanisms.selection._decision.DecisionSet`)."""
        return cls(decision.w, n_points, decision=decision)

    @property
    def norm_bound(self) -> float | None:
        """D of the ball W is in (None: no ball)."""
        return self.space.norm_bound

    @property
    def n_regions(self) -> int | None:
        """The supports of W on the top-down path (None elsewhere)."""
        return None if self.problem is None else int(self.problem.n_regions)

    @property
    def prefixes(self) -> Any:
        """W as a tree of prefixes (:class:`privopt.search.PrefixSpace`) of a user's model
        whose W can be counted through its declared constraints, else None."""
        return None if self.decision is None else self.decision.space
