"""W of one private selection as one frozen record: the plan builds it once, from public
quantities only, and the samplers and the release read it.

Several representations of W remain beneath it, each the form one engine needs: the
halfspace data of privopt's 0/1-loss model (:class:`privopt.search.HalfspaceData`: the
records' distinct rows with W's grid and ball), its split by support for the top-down
sampler (:class:`privopt.search._regions.HalfspaceProblem` of
:func:`privopt.search.halfspace_problem`),
and a user's model's W read from the model (:class:`~privopt.mechanisms.selection._decision.DecisionSet`:
the declared constraints on the decision, |W| through them and the prefix tree of the
bounded sampler).  :class:`SelectionW` holds the one that applies, with |W| and the ball
every path reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SelectionW"]


@dataclass(frozen=True)
class SelectionW:
    """W of one private selection (module docstring): ``n_points`` |W|, counted from public
    quantities by the engine that samples it; ``norm_bound`` D of the ball W is in (None: no
    ball); on privopt's 0/1-loss models ``halfspace`` (their halfspace data) and, where W
    splits by support, ``problem`` (the support split, sampled top down); on a user's model
    ``decision`` (its :class:`~privopt.mechanisms.selection._decision.DecisionSet`)."""

    n_points: int
    norm_bound: float | None
    halfspace: Any = None
    problem: Any = None
    decision: Any = None

    @property
    def n_regions(self) -> int | None:
        """The supports of W on the top-down path (None elsewhere)."""
        return None if self.problem is None else int(self.problem.n_regions)

    @property
    def space(self) -> Any:
        """W as a tree of prefixes (:class:`privopt.search.PrefixSpace`) of a user's model
        whose W can be counted through its declared constraints, else None."""
        return None if self.decision is None else self.decision.space
