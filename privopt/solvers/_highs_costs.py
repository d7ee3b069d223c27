"""Re-solving a model already loaded in HiGHS after changing only cost coefficients.

Pyomo's persistent HiGHS interface keeps the model in a ``highspy.Highs``
object, but every ``solve`` call also redirects the process's file
descriptors to capture the solver log, which costs more than a warm LP
re-solve itself.  When only the objective coefficients of some variables
change between solves (OPSamp's oracle calls), :class:`HighsCostSession`
changes those costs in the ``highspy`` model Pyomo built and re-runs HiGHS
directly, then reports the outcome with privopt's own certification rule
(:func:`privopt.solvers.is_certified`).  It reads two attributes of Pyomo's
interface (the ``highspy`` model and its variable map); when they are not
there (another Pyomo version) :meth:`HighsCostSession.attach` returns None and
callers keep using the Pyomo path.
"""

from __future__ import annotations

import time

import numpy as np

from ._dispatch import DEFAULT_ABS_GAP, _report, _Settings, get_spec, solver_availability
from ._report import RunOutcome

__all__ = ["HighsCostSession"]


class HighsCostSession:
    """Warm re-solves of one HiGHS model with new costs for chosen columns."""

    def __init__(self, highs, columns, spec, version, time_limit, abs_gap, options):
        self._h = highs
        self._cols = np.asarray(columns, dtype=np.int32)
        self._spec = spec
        self._version = version
        self._time_limit = time_limit
        self._abs_gap = abs_gap
        self._options = dict(options or {})
        self._h.setOptionValue("output_flag", False)

    @classmethod
    def attach(cls, solver_object, variables, *, solver="highs", time_limit=None, abs_gap=None, options=None):
        """A session on the model that ``solver_object`` (from
        :func:`privopt.solvers.persistent_solver`, already used to solve it
        once) holds, changing the costs of ``variables``; or None."""
        highs = getattr(solver_object, "_solver_model", None)
        var_map = getattr(solver_object, "_pyomo_var_to_solver_var_map", None)
        if highs is None or var_map is None or not hasattr(highs, "changeColsCost"):
            return None
        try:
            columns = [var_map[id(v)] for v in variables]
        except KeyError:
            return None
        spec = get_spec(solver)
        return cls(highs, columns, spec, solver_availability(spec.name)[1], time_limit,
                   DEFAULT_ABS_GAP if abs_gap is None else abs_gap, options)

    def costs(self) -> np.ndarray:
        """The current cost coefficients of the chosen columns."""
        return np.asarray(self._h.getLp().col_cost_, dtype=float)[self._cols]

    def solve(self, costs):
        """Set the chosen columns' costs to ``costs``, re-solve warm and return
        (values of the chosen columns or None, SolveReport)."""
        c = np.asarray(costs, dtype=np.float64)
        self._h.changeColsCost(len(self._cols), self._cols, c)
        return self._run("warm re-solve with changed costs (highspy)")

    def _run(self, message, values=True):
        """Run HiGHS on the model as it stands; (values of the chosen columns or
        None, SolveReport certified by privopt's rule).  ``values=False``
        skips copying the solution out of HiGHS (only the report is needed)."""
        import highspy
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        h = self._h
        start = time.perf_counter()
        run_status = h.run()
        wall = time.perf_counter() - start
        status = h.getModelStatus()
        if run_status == highspy.HighsStatus.kError and status == highspy.HighsModelStatus.kNotset:
            # HiGHS ran nothing: not certified (below), and the report says why it may have refused
            message += ("; HiGHS refused to run (HighsStatus.kError), e.g. for a threads option other than "
                        "the one its process-wide scheduler was started with: leave threads=None")
        info = h.getInfo()
        has = info.primal_solution_status == 2
        tc = {
            highspy.HighsModelStatus.kOptimal: TerminationCondition.convergenceCriteriaSatisfied,
            highspy.HighsModelStatus.kTimeLimit: TerminationCondition.maxTimeLimit,
            highspy.HighsModelStatus.kInfeasible: TerminationCondition.provenInfeasible,
            highspy.HighsModelStatus.kUnbounded: TerminationCondition.unbounded,
            highspy.HighsModelStatus.kUnboundedOrInfeasible: TerminationCondition.infeasibleOrUnbounded,
        }.get(status, TerminationCondition.unknown)
        optimal = status == highspy.HighsModelStatus.kOptimal
        sol_status = (SolutionStatus.optimal if optimal and has
                      else SolutionStatus.feasible if has else SolutionStatus.noSolution)
        obj = float(info.objective_function_value) if has else None
        if info.mip_node_count == -1:           # an LP: the bound is the optimum when optimal
            bound = obj if (has and optimal) else None
        else:
            bound = float(info.mip_dual_bound)
        out = None
        if has and values:
            out = np.asarray(h.getSolution().col_value, dtype=float)[self._cols]
        report = _report(self._spec, self._version, RunOutcome(tc, sol_status, obj, bound, message), wall,
                         _Settings(self._time_limit, 0.0, self._abs_gap, self._options))
        return out, report
