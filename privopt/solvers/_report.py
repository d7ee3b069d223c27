"""The outcome of one solve, the same for every solver."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

__all__ = ["RunOutcome", "SolveReport", "TerminationCondition", "SolutionStatus"]


@dataclass(frozen=True)
class RunOutcome:
    """What one solver runner returned, before it is turned into a
    :class:`SolveReport`: the termination condition, the solution status, the
    objective of the solution loaded into the model (None: no solution), the
    solver's bound on the optimum (None: none) and its message."""

    termination: TerminationCondition
    status: SolutionStatus
    objective: float | None = None
    bound: float | None = None
    message: str = ""


@dataclass(frozen=True)
class SolveReport:
    """An immutable record of one solve.

    Attributes
    ----------
    solver : str
        The name privopt was given (after alias resolution, e.g. ``"scip"``).
    interface : str
        The Pyomo plugin that ran it (e.g. ``"highs"``, ``"glpk"``, ``"scip_direct"``).
    solver_version : str or None
    termination : TerminationCondition
        Pyomo's (API v2) termination condition; statuses of legacy plugins are
        mapped onto it.
    solution_status : SolutionStatus
    certified_optimal : bool
        True only when the solver reported optimality *and* the incumbent and
        the proven bound agree within ``abs_gap + mip_gap * |objective|``
        (see :func:`privopt.solvers.is_certified`).
    objective, bound : float or None
        Incumbent objective value and best proven bound (minimization: bound <= objective).
    abs_gap_achieved, rel_gap_achieved : float or None
        |objective - bound| and that divided by max(|objective|, 1e-10).
    wall_time : float
        Seconds spent in the solver call (including Pyomo's model writing).
    time_limit, mip_gap, abs_gap : requested limits.
    options : dict
        The solver-specific options privopt actually passed.
    message : str
        The solver's own message, if any.
    """

    solver: str
    interface: str
    solver_version: str | None
    termination: TerminationCondition
    solution_status: SolutionStatus
    certified_optimal: bool
    objective: float | None
    bound: float | None
    abs_gap_achieved: float | None
    rel_gap_achieved: float | None
    wall_time: float
    time_limit: float | None
    mip_gap: float
    abs_gap: float
    options: dict = field(default_factory=dict)
    message: str = ""

    @property
    def has_solution(self) -> bool:
        """Whether the solver returned a feasible point (loaded into the model)."""
        return self.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)

    def as_dict(self) -> dict:
        """Plain-value dict (enums as names), e.g. for a table or a CSV row."""
        return {
            "solver": self.solver,
            "interface": self.interface,
            "solver_version": self.solver_version,
            "termination": self.termination.name,
            "solution_status": self.solution_status.name,
            "certified_optimal": self.certified_optimal,
            "objective": self.objective,
            "bound": self.bound,
            "abs_gap": self.abs_gap_achieved,
            "rel_gap": self.rel_gap_achieved,
            "wall_time": self.wall_time,
            "time_limit": self.time_limit,
        }

    def __str__(self) -> str:
        def fmt(v):
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.6g}"

        return (
            f"SolveReport({self.solver} {self.solver_version or ''}: {self.termination.name}, "
            f"certified_optimal={self.certified_optimal}, objective={fmt(self.objective)}, "
            f"bound={fmt(self.bound)}, gap={fmt(self.abs_gap_achieved)}, "
            f"{self.wall_time:.2f}s)"
        )
