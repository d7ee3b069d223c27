"""The oracle step: solve a perturbed model and check the certificate.

The guarantees of objective perturbation ([NRVW20] Theorems for OPDisc and
OPSamp, [NRW18] for RSPM) hold for the *exact* minimizer of the perturbed
objective.  A solver that stops on a time limit or with a gap returns
something else, and releasing it is not covered by the proofs.  privopt's
policy:

* the solver is asked for relative gap 0 and absolute gap ``abs_gap``
  (default 1e-6 objective units);
* a solve is *certified* when the solver reports optimality and incumbent and
  bound agree within ``abs_gap`` (:func:`privopt.solvers.is_certified`);
  the residual risk is that another grid point is within 1e-6 of the optimum
  of a perturbed objective with continuous noise, in which case the solver
  may return either;
* ``on_failure="raise"`` (default): an uncertified solve releases nothing and
  raises :class:`~privopt.exceptions.NotCertifiedError` carrying the report;
* ``on_failure="return"``: the uncertified answer is returned with
  ``certified=False`` and an :class:`~privopt.exceptions.UncertifiedReleaseWarning`.
  It is **not** differentially private by any theorem privopt knows; use it
  for experiments that count and show such runs separately, never for release.

No fallback answer is published when a solve is not certified: the *event*
of failure depends on the data, so releasing anything conditioned on it would
make that event observable, and no privacy proof covers it.
"""

from __future__ import annotations

import warnings

from ._validation import check_choice, user_stacklevel
from .exceptions import NotCertifiedError, UncertifiedReleaseWarning
from .solvers import ON_FAILURE, SolveOptions, solve, solve_options

__all__ = ["certified_solve", "apply_failure_policy", "not_certified_message", "ON_FAILURE", "check_on_failure",
           "SMALLER_MODEL", "SMALLER_USER_MODEL"]

def check_on_failure(on_failure) -> str:
    return check_choice(on_failure, "on_failure", ON_FAILURE)


#: What makes the problem smaller, in the words of privopt's own models (a weight grid, a ball,
#: features): the default of :func:`not_certified_message`.
SMALLER_MODEL = "a smaller norm_bound or grid, fewer feature levels or features"
#: The same in the words of a user's model (a decision, its grid, its declared constraints).
SMALLER_USER_MODEL = ("a coarser grid or tighter bounds or declared constraints on the decision (fewer points "
                      "in W), or a smaller model")


def not_certified_message(report, *, what: str = "the perturbed model", smaller: str = SMALLER_MODEL) -> str:
    """The one message of an uncertified solve: its first line says what happened and
    what to change (``smaller``: what makes the problem smaller, in the model's own words).

    The text is a function of public settings only (the solver's name, ``time_limit``,
    ``abs_gap``, ``what``, ``smaller``): which way the solve failed (a time limit, a
    gap at the solver's rounding level, another termination) depends on the data, so it
    is not told, and the message names every remedy.  No value computed from the data
    (objective, bound, gap, time spent, termination) is in the text: a refusal after the
    data is read is an output.
    """
    return (
        f"Not certified: {report.solver} did not certify {what} optimal within time_limit={report.time_limit} "
        f"and abs_gap={report.abs_gap:g}; raise time_limit, pass a larger abs_gap (e.g. ten times this one, "
        "if the solver proves optimality at its rounding level), try another solver (solver='auto' searches "
        f"the grid exactly when it is small), or make the problem smaller: {smaller}.\n"
        "The privacy guarantee needs the exact argmin, so nothing is released (see on_failure). Which way "
        "the solve failed and its objective, bound, gap and time are computed from the data and are not "
        "shown (they are in the solve's report, which a mechanism gives only with keep_report=True: the "
        "data curator's diagnostics). privopt never retries with a changed grid or model by itself: a "
        "choice that depends on how fast this data solved would leak."
    )


def certified_solve(
    model,
    solver: str | None = None,
    *,
    options: SolveOptions | dict | None = None,
    what: str = "the perturbed model",
    smaller: str = SMALLER_MODEL,
    persistent=None,
    vars_to_load=None,
    _prechecked: bool = False,
    **kwargs,
):
    """Solve ``model`` with gap 0 and apply the failure policy.

    ``options``: a :class:`~privopt.solvers.SolveOptions` record (solver,
    time_limit, threads, abs_gap, solver_options, executor and on_failure are
    read; mip_gap is always 0 here), or, the older spelling, a dict of
    solver-specific options (the same as ``solver_options``).  ``**kwargs``:
    ``time_limit``, ``threads``, ``abs_gap``, ``solver_options``,
    ``executor``, ``on_failure`` (``"raise"`` or ``"return"``, see the module
    docstring), each a field of the record (documented there) and overriding
    it; any other name is a TypeError naming it.
    ``persistent``: a solver object from
    :func:`privopt.solvers.persistent_solver` to re-solve the same model warm
    (``vars_to_load``: the variables whose values are wanted).
    ``executor``: where ``solver="enumerate"`` runs its branch and bound (see
    :func:`privopt.solvers.solve`).
    ``what``: the model's name in a failure's message; ``smaller``: what makes
    the problem smaller, named there (:data:`SMALLER_USER_MODEL` for a user's
    model).
    ``_prechecked`` (private): the mechanism ran its setup checks
    (:func:`privopt.mechanisms._checks.check_run`), which
    :func:`privopt.solvers.solve` then skips.

    Returns the :class:`~privopt.solvers.SolveReport` (certified, or
    uncertified under ``on_failure="return"``).  Errors from the solve
    (infeasible, no solution, crash) propagate with their report.
    """
    record, _ = solve_options(solver, options, kwargs, "certified_solve", accepts=CERTIFIED_KEYWORDS)
    report = solve(model, options=record.replace(mip_gap=0.0), persistent=persistent,
                   vars_to_load=vars_to_load, _prechecked=_prechecked)
    return apply_failure_policy(report, record.on_failure, what=what, smaller=smaller)


#: The keywords of :func:`certified_solve` validated into its record.
CERTIFIED_KEYWORDS = ("time_limit", "threads", "abs_gap", "solver_options", "executor", "on_failure")


def apply_failure_policy(report, on_failure: str, *, what: str = "the perturbed model",
                         smaller: str = SMALLER_MODEL):
    """``report`` when it is certified; otherwise raise NotCertifiedError
    (``on_failure="raise"``) or warn and return it (``"return"``)."""
    if report.certified_optimal:
        return report
    message = not_certified_message(report, what=what, smaller=smaller)
    if on_failure == "raise":
        raise NotCertifiedError(message, report)
    warnings.warn(
        message.replace("nothing is released", "the answer is returned WITHOUT a privacy guarantee"),
        UncertifiedReleaseWarning,
        stacklevel=user_stacklevel(),
    )
    return report
