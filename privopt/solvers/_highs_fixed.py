"""Re-solving one model loaded in HiGHS with the decision fixed at one point after another.

Private selection's fix-and-solve scorer needs L(w) = min over the other variables of the
model with the decision fixed at w, for every w of W.  Fixing the decision through Pyomo
(``Var.fix`` and a persistent solve) costs far more than the LP itself: Pyomo treats the
fixed variables as parameters and re-writes the bounds of every row they appear in, then
loads every variable's value back into the model.  :class:`HighsFixedSession` instead
loads the model into HiGHS once with the decision *free* (its columns kept, their
integrality dropped: a column whose bounds are one value needs none), and for each point
sets the decision columns' bounds to the point and re-runs HiGHS warm from the previous
basis.  The LP (or MIP) solved is the model with w fixed, exactly as Pyomo would pass it;
each outcome is certified by privopt's rule (:func:`privopt.solvers.is_certified`, via
:class:`privopt.solvers._highs_costs.HighsCostSession`'s report), and the caller releases
nothing unless every one is.

Reads two attributes of Pyomo's persistent HiGHS interface (the ``highspy`` model and its
variable map); when they are not there (another Pyomo version), or the solver is not
HiGHS, :meth:`HighsFixedSession.build` returns None and the caller keeps Pyomo's path.
"""

from __future__ import annotations

import numpy as np

from ._dispatch import DEFAULT_ABS_GAP, get_spec, persistent_solver, solve_lock, solver_availability
from ._highs_costs import HighsCostSession

__all__ = ["HighsFixedSession"]


class HighsFixedSession(HighsCostSession):
    """Warm re-solves of one HiGHS model with the decision columns' bounds set
    to one point after another (:meth:`solve_at`)."""

    @classmethod
    def build(cls, model, variables, *, solver="highs", time_limit=None, threads=None, abs_gap=None,
              options=None, relax=(), relax_integers=False):
        """A session on ``model`` (read into a new HiGHS model, never modified;
        ``variables`` must be unfixed), or None where privopt has no such path
        for ``solver``.  ``options`` are HiGHS option names, set as given.
        The rows of the constraints in ``relax`` (constraints of ``model`` on
        ``variables`` alone, which every point solved at is known to meet) get
        infinite bounds: they are not part of what is solved.  ``relax_integers``: every
        column continuous (the LP relaxation, whose optimum bounds the model's from below
        on any box of the decision: :meth:`solve_within`)."""
        try:
            spec = get_spec(solver)
        except Exception:   # an unknown name: the caller's own path reports it
            return None
        if spec.name not in ("highs", "appsi_highs") or any(v.fixed for v in variables):
            return None
        opt = persistent_solver(spec.name)
        if opt is None:
            return None
        try:
            with solve_lock():   # Pyomo redirects the output while it reads the model, as in a solve
                opt.set_instance(model)
        except Exception:   # a model Pyomo's HiGHS interface does not take (e.g. nonlinear)
            return None
        highs = getattr(opt, "_solver_model", None)
        var_map = getattr(opt, "_pyomo_var_to_solver_var_map", None)
        if highs is None or var_map is None or not hasattr(highs, "changeColsBounds"):
            return None
        try:
            columns = [var_map[id(v)] for v in variables]
        except KeyError:    # a weight in no active constraint or objective
            return None
        import highspy

        con_map = getattr(opt, "_pyomo_con_to_solver_con_map", None)
        if relax:
            rows = [con_map.get(con) if con_map is not None else None for con in relax]
            if any(r is None for r in rows):
                return None
            r = np.asarray(rows, dtype=np.int32)
            inf = np.full(len(r), highspy.kHighsInf)
            highs.changeRowsBounds(len(r), r, -inf, inf)
        cols = np.asarray(columns, dtype=np.int32)
        if relax_integers:
            n_all = int(highs.getNumCol())
            highs.changeColsIntegrality(n_all, np.arange(n_all, dtype=np.int32),
                                        np.array([highspy.HighsVarType.kContinuous] * n_all))
        highs.changeColsIntegrality(len(cols), cols,
                                    np.array([highspy.HighsVarType.kContinuous] * len(cols)))
        abs_gap = DEFAULT_ABS_GAP if abs_gap is None else abs_gap
        session = cls(highs, columns, spec, solver_availability(spec.name)[1], time_limit, abs_gap, options)
        session._solver_object = opt     # keeps Pyomo's interface (and its maps) alive
        highs.setOptionValue("mip_rel_gap", 0.0)
        highs.setOptionValue("mip_abs_gap", float(abs_gap))
        if threads is not None:
            highs.setOptionValue("threads", int(threads))
        for key, value in (options or {}).items():
            if highs.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                return None   # an option HiGHS refuses: the caller's path reports it as before
        return session

    def column_of(self, var):
        """The session's column of a variable of the model it read (a VarData), or None."""
        var_map = getattr(getattr(self, "_solver_object", None), "_pyomo_var_to_solver_var_map", None)
        return None if var_map is None else var_map.get(id(var))

    def solve_at(self, point, time_limit=None):
        """The model with the decision fixed at ``point``, re-solved warm:
        a :class:`~privopt.solvers.SolveReport` (certified or not)."""
        v = np.asarray(point, dtype=np.float64)
        self._h.changeColsBounds(len(self._cols), self._cols, v, v)
        self._limit_to(time_limit)
        return self._run("warm re-solve with the decision's columns fixed (highspy)", values=False)[1]

    def column_values(self) -> np.ndarray:
        """The values of every column (the whole model, in HiGHS's order) in the solution
        of the last solve: what :class:`privopt.solvers.RecordBlocks` reads each record's
        term from.  Only meaningful after a solve whose report has a solution."""
        return np.asarray(self._h.getSolution().col_value, dtype=np.float64)

    def solve_within(self, lower, upper, time_limit=None):
        """The model with each decision column between ``lower`` and ``upper``
        (equal where a coordinate is fixed), re-solved warm: a
        :class:`~privopt.solvers.SolveReport` (certified or not)."""
        lo = np.asarray(lower, dtype=np.float64)
        hi = np.asarray(upper, dtype=np.float64)
        self._h.changeColsBounds(len(self._cols), self._cols, lo, hi)
        self._limit_to(time_limit)
        return self._run("warm re-solve with the decision's columns boxed (highspy)", values=False)[1]

    def _limit_to(self, time_limit) -> None:
        """Give the next run at most ``time_limit`` seconds (None: no limit).  HiGHS checks
        its ``time_limit`` option against the run clock of the Highs object, which keeps
        counting over every run of the session (measured on highspy 1.16: after a first
        solve of 0.08 s, every later run with ``time_limit=0.05`` stopped at once on
        kTimeLimit), so the option is set to that clock plus ``time_limit``.  A run stopped
        there reports ``maxTimeLimit`` and is never certified."""
        self._time_limit = time_limit
        if time_limit is None:
            self._h.setOptionValue("time_limit", float("inf"))
            return
        clock = getattr(self._h, "getRunTime", None)
        spent = float(clock()) if callable(clock) else 0.0
        self._h.setOptionValue("time_limit", spent + max(0.0, float(time_limit)))
