"""The Pyomo side of bounded private selection (``exponential_mechanism(path="bounded")``).

:class:`PyomoBoundOracle` gives the prefix sampler (:func:`privopt.search.sample_prefix`)
what it needs from a user's model:

* a *lower bound* on L(w) over a region (a box of the decision: a prefix fixed, the
  other coordinates between their grids' extremes): the optimum of the model's LP
  relaxation (every integer column continuous, the decision's columns boxed), solved by
  the solver named and certified optimal by privopt's policy
  (:func:`privopt.solvers.is_certified`, :func:`privopt.oracle.certified_solve`), less a
  small slack for the solver's tolerances; an uncertified solve releases nothing;
* the *exact* L(w) of one point: the model with the decision fixed, solved (MIP where
  the model has other integer variables) and certified, as the fix-and-solve evaluator does.

On HiGHS both go through :class:`privopt.solvers.HighsFixedSession` (the model read once
per session, re-solved warm); on other solvers through Pyomo on two clones of the model
(one with ``core.relax_integer_vars`` applied).  Both results are memoized by box and
by point, so no region is solved twice.  A model to maximize (``sense="maximize"``): the
relaxation bounds the utility from above, so the loss -U is bounded from below by its
negation.

:func:`prefix_space` builds the public side: the decision's grids and the declared linear
constraints on the decision alone (and the ball), as a :class:`privopt.search.PrefixSpace`.
"""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo

from ...exceptions import ModelError, NotCertifiedError, SolverError
from ...oracle import SMALLER_USER_MODEL, certified_solve, not_certified_message
from ...search import BoundOracle
from ...solvers import DEFAULT_ABS_GAP, HighsFixedSession, get_spec
from ...models import quiet_clone
from ._decision import decision_set

__all__ = ["PyomoBoundOracle", "prefix_space", "relaxation_bound", "BOUND_SLACK"]

#: Relative slack taken off every relaxation optimum before it is used as a lower bound
#: (an LP's reported optimum is exact only up to the solver's feasibility tolerances,
#: about 1e-7): the bound used is LB - BOUND_SLACK (1 + |LB|) - abs_gap.  A looser bound
#: costs work, never correctness.
BOUND_SLACK = 1e-6


def relaxation_bound(value: float, abs_gap: float = DEFAULT_ABS_GAP) -> float:
    """The lower bound used for a relaxation optimum ``value`` (on the loss): ``value``
    less its slack ``BOUND_SLACK (1 + |value|) + abs_gap``."""
    return value - BOUND_SLACK * (1.0 + abs(value)) - abs_gap


def prefix_space(grids, norm_bound, weight_cons, w_vars):
    """``(space, reason)``: W as a :class:`privopt.search.PrefixSpace` through the
    declared linear constraints on the weights alone (and the ball), or ``(None,
    reason)`` where it cannot be (a constraint on the weights that is not linear, or
    numbers too irregular to count): the ``space`` and ``why`` of
    :func:`privopt.mechanisms.selection._decision.decision_set`."""
    decision = decision_set(w_vars, grids, norm_bound, weight_cons)
    return decision.space, decision.why


class PyomoBoundOracle(BoundOracle):
    """Certified relaxation bounds and exact losses of a user's Pyomo model
    (module docstring).  ``model`` is never modified.  ``inflate`` (for the audit's
    broken variant only, :class:`privopt.audit.BoundedSelectionTarget`) multiplies every
    bound: above 1, on positive losses, the bounds are not valid and regions that hold
    the winner are pruned."""

    def __init__(self, model, w_vars, *, solver="highs", weight_cons=(), sense="minimize", time_limit=None,
                 threads=None, abs_gap=None, solver_options=None, public_term=None, n_samples=None,
                 loss_range=None, inflate: float = 1.0, deadline=None):
        self.model, self.user_w = model, list(w_vars)
        self.solver = get_spec(solver).name
        self.weight_cons = list(weight_cons)
        self.sign = 1.0 if sense == "minimize" else -1.0
        self.time_limit, self.threads = time_limit, threads
        # the run's deadline (a time.perf_counter value; default: time_limit from now)
        self.deadline = deadline if deadline is not None or time_limit is None else (
            time.perf_counter() + float(time_limit))
        self.abs_gap = DEFAULT_ABS_GAP if abs_gap is None else abs_gap
        self.options = solver_options
        self.term_name = None if public_term is None else public_term.name
        self.n_samples, self.loss_range = n_samples, loss_range
        self.inflate = float(inflate)
        self.regions_solved = 0
        self.points_scored = 0
        self._bounds: dict = {}
        self._losses: dict = {}
        self._bound_session = self._leaf_session = None
        self._relaxed = self._fixed = None
        self.engine = "pyomo"
        if self.solver in ("highs", "appsi_highs"):
            kw = dict(solver=self.solver, threads=threads, abs_gap=self.abs_gap, options=solver_options)
            self._bound_session = HighsFixedSession.build(model, self.user_w, relax_integers=True, **kw)
            self._leaf_session = HighsFixedSession.build(model, self.user_w, relax=self.weight_cons, **kw)
            if self._bound_session is not None and self._leaf_session is not None:
                self.engine = "highs_fixed"
            else:
                self._bound_session = self._leaf_session = None

    # --- the Pyomo path's clones ---------------------------------------------------------
    def _relaxed_clone(self):
        if self._relaxed is None:
            clone = quiet_clone(self.model)
            pyo.TransformationFactory("core.relax_integer_vars").apply_to(clone)
            self._relaxed = (clone, [clone.find_component(v) for v in self.user_w])
        return self._relaxed

    def _fixed_clone(self):
        if self._fixed is None:
            clone = quiet_clone(self.model)
            for con in self.weight_cons:
                clone.find_component(con.name).deactivate()
            self._fixed = (clone, [clone.find_component(v) for v in self.user_w])
        return self._fixed

    # --- time_limit: every solve gets the time left, and none past the deadline is used --------
    def _limit(self, time_limit):
        """The next solve's own time limit: the time left before the deadline (and at most
        ``time_limit`` when given); None without either.  Past the deadline the run stops."""
        if self.deadline is None:
            return time_limit
        left = self.deadline - time.perf_counter()
        if left <= 0:
            raise self._out_of_time(False)
        return left if time_limit is None else min(left, float(time_limit))

    def _out_of_time(self, inside: bool) -> NotCertifiedError:
        limit = "the time limit" if self.time_limit is None else f"{self.time_limit:g} s"
        # how many regions and points were reached depends on the data: not said
        return NotCertifiedError(
            f"time_limit: {limit} ran out {'during a solve ' if inside else ''}before the sampling was done; "
            "nothing is released (a solve stopped by its time limit is never used as a bound or a loss). Raise "
            "time_limit.", None)

    def _check_time(self, report) -> None:
        """Raise the time-limit error when a solve stopped on its time limit, or ended past the
        deadline (certified or not: the run overran ``time_limit``)."""
        if self.deadline is None:
            return
        if _stopped_on_time(report) or time.perf_counter() > self.deadline:
            raise self._out_of_time(True)

    def _pyomo_solve(self, clone, limit, what):
        """A certified solve of ``clone`` through Pyomo with the time left as the solver's own
        limit (GLPK ``tmlim``, CBC ``sec``, HiGHS ``time_limit``: privopt.solvers' translation)."""
        try:
            report = certified_solve(clone, self.solver, time_limit=limit, threads=self.threads,
                                     solver_options=self.options, abs_gap=self.abs_gap, what=what,
                                     smaller=SMALLER_USER_MODEL)
        except SolverError as exc:   # not certified, or no solution: the deadline's doing?
            if self.deadline is not None and (
                    (exc.report is not None and _stopped_on_time(exc.report))
                    or time.perf_counter() > self.deadline):
                raise self._out_of_time(True) from exc
            raise
        self._check_time(report)
        return report

    # --- the oracle ----------------------------------------------------------------------
    def lower_bound(self, lower, upper, time_limit=None) -> float:
        key = (tuple(np.asarray(lower).tolist()), tuple(np.asarray(upper).tolist()))
        if key in self._bounds:
            return self._bounds[key]
        what = "the LP relaxation of a region of W"
        limit = self._limit(time_limit)
        self.regions_solved += 1
        if self._bound_session is not None:
            report = self._bound_session.solve_within(lower, upper, limit)
            self._check_time(report)
            if not report.certified_optimal or report.objective is None:
                raise NotCertifiedError(not_certified_message(report, what=what, smaller=SMALLER_USER_MODEL),
                                        report)
        else:
            clone, ws = self._relaxed_clone()
            for v, a, b in zip(ws, lower, upper):
                if a == b:
                    v.fix(float(a))
                else:
                    v.unfix()
                    v.setlb(float(a))
                    v.setub(float(b))
            report = self._pyomo_solve(clone, limit, what)
        value = self.sign * float(report.objective)     # a bound on the loss (on -U for a utility)
        out = relaxation_bound(value, self.abs_gap) * self.inflate
        self._bounds[key] = out
        return out

    def loss(self, point, time_limit=None) -> float:
        key = tuple(np.asarray(point).tolist())
        if key in self._losses:
            return self._losses[key]
        self.points_scored += 1
        what = "the model with the decision fixed at a point of W"     # which point depends on the data
        limit = self._limit(time_limit)
        if self._leaf_session is not None:
            report = self._leaf_session.solve_at(point, limit)
            self._check_time(report)
            if not report.certified_optimal or report.objective is None:
                raise NotCertifiedError(
                    f"Not certified: evaluating L(w) at a point of W ended with {report.termination.name}; "
                    "bounded private selection needs the exact loss of every point it scores, so nothing "
                    "is released. Check that the model is feasible for every w that the weights' bounds "
                    "and constraints allow, raise time_limit, or try another solver.", report)
        else:
            clone, ws = self._fixed_clone()
            for v, x in zip(ws, point):
                v.fix(float(x))
            report = self._pyomo_solve(clone, limit, what)
        value = float(report.objective)
        self._check_range(point, value)
        out = self.sign * value
        self._losses[key] = out
        return out

    def _check_range(self, point, value):
        """The loss (less the public term) of a scored point must lie in [n a, n b]."""
        if self.n_samples is None or self.loss_range is None:
            return
        lo, hi = self.loss_range
        records = value
        if self.term_name is not None:
            clone, ws = self._fixed_clone()
            for v, x in zip(ws, point):
                v.set_value(float(x), skip_validation=True)
            records -= float(pyo.value(clone.find_component(self.term_name)))
        n = self.n_samples
        tol = 1e-6 * max(1.0, abs(n * hi))
        if records < n * lo - tol or records > n * hi + tol:
            raise ModelError(
                f"model: its objective{' less public_term' if self.term_name else ''} at a point of W is "
                f"outside [n a, n b] = [{n * lo:g}, {n * hi:g}] "
                f"for n = {n} and loss_range = ({lo:g}, {hi:g}): it is not a sum of n terms in loss_range, "
                "so the guarantee would not hold; nothing is released. Fix loss_range or the model (a "
                "public cost of the decision alone can be declared with public_term=).", "model")


def _stopped_on_time(report) -> bool:
    """Whether a solve ended on its time limit (never a certified optimum to use)."""
    return getattr(report.termination, "name", "") == "maxTimeLimit"
