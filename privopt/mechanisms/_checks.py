"""Checks every mechanism runs before any noise is drawn or any solve starts."""

from __future__ import annotations

import warnings


from .._validation import check_bool, check_int, check_model_objective, user_stacklevel
from ..exceptions import (
    ModelError,
    NoiseDisclosureWarning,
    ParameterError,
    SolverNotAvailableError,
    LossContractWarning,
    WeakGuaranteeWarning,
)
from ..perturbation import is_transformed
from ..solvers import (
    SolveOptions,
    check_option_names,
    check_solver_options,
    choose_solver,
    get_spec,
    solver_availability,
)

__all__ = ["decision_bounds", "check_solver_ready", "check_named_solver", "check_model_objective", "check_run",
           "warn_noise_disclosed", "check_n_samples", "warn_if_delta_weak", "objective_scale", "warn_if_mean_objective"]


def check_n_samples(n_samples, info):
    """n from the caller or the model's info; a caller's n that contradicts
    the number of records the privopt model was built on is refused."""
    known = info.n_samples if info is not None else None
    if n_samples is None:
        return known
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    if known is not None and n_samples != known:
        raise ParameterError(
            f"n_samples={n_samples} contradicts the model, which was built on {known} records; leave "
            "n_samples out (privopt reads it from the model) or rebuild the model.", "n_samples")
    return n_samples


def decision_bounds(grid, info) -> dict:
    """How the contract reads the decision's own bounds on a discrete mechanism
    (:func:`privopt.models.check_model_contract`): where W is read from them (no
    ``grid=`` and no grid the model's own builder declared), a weight whose own bounds
    narrow its domain must be declared.  With ``grid=`` W is the grid and the bounds are
    never read (:func:`privopt.perturbation.resolve_grids` with ``read_bounds=False``;
    OPDisc relaxes them on its clone), so nothing is asked."""
    builder_grid = grid is None and info is not None and info.grid is not None
    return {"bounds_give_w": grid is None and not builder_grid, "continuous": False}


def warn_if_delta_weak(delta, n_samples, stacklevel: int | None = None):
    """Warn when delta > 1/n: (epsilon, delta)-DP then allows publishing a
    record outright with probability delta (at the caller's line: the first frame
    outside privopt, unless ``stacklevel`` is given)."""
    if n_samples is not None and delta > 1.0 / n_samples:
        warnings.warn(
            f"delta={delta:g} exceeds 1/n = {1.0 / n_samples:.3g}: a mechanism may then reveal a whole "
            f"record with probability delta and still meet (epsilon, delta)-DP. Choose delta well below "
            f"1/n, e.g. 1/n^2 = {1.0 / n_samples ** 2:.3g}.", WeakGuaranteeWarning,
            stacklevel=user_stacklevel() if stacklevel is None else stacklevel)


def check_solver_ready(solver) -> str:
    """The solver name is known and the solver installed (raises otherwise)."""
    spec = get_spec(solver)
    if not solver_availability(spec.name)[0]:
        raise SolverNotAvailableError(
            f"Solver {spec.name!r} is not installed or not usable here. Install it: {spec.install_hint}"
        )
    return spec.name


def check_named_solver(solve: SolveOptions, default_solver: str, *, skip: tuple[str, ...] = ("auto",)) -> None:
    """The solver of ``solve`` (``default_solver`` when None), when it is named (not
    one of ``skip``, which are resolved from the model later): known, installed, and
    its ``solver_options`` names valid.  From the arguments alone: a mechanism's public
    check, run before a ledger reserves the release (so a bad name costs nothing)."""
    solver = solve.solver_or(default_solver)
    if isinstance(solver, str) and solver.strip().lower() in skip:
        return
    name = check_solver_ready(solver)
    check_option_names(name, check_solver_options(solve.solver_options), "solver_options")


def check_run(model, solve: SolveOptions, return_noise, *, default_solver: str = "highs") -> SolveOptions:
    """The checks every mechanism runs before it draws noise or clones the model.

    ``solve`` was validated when it was built (limits, options, failure policy:
    :class:`~privopt.solvers.SolveOptions`); here ``return_noise``, the model (one
    active objective, not already perturbed) and the solver (``default_solver`` when
    ``solve.solver`` is None; ``"auto"`` chosen from the model; installed; HiGHS's
    option names).  Returns ``solve`` with its solver resolved to a name and its
    options checked against it; raises a privopt error naming the parameter
    otherwise.  A mechanism that ran them passes ``_prechecked=True`` to
    :func:`privopt.oracle.certified_solve`, and ``solve`` does not repeat them.
    """
    check_bool(return_noise, "return_noise")
    options = check_solver_options(solve.solver_options)
    check_model_objective(model)
    solver = solve.solver_or(default_solver)
    if isinstance(solver, str) and solver.strip().lower() == "auto":
        solver = choose_solver(model, perturbed=True)     # the oracle solves the perturbed model
    name = check_solver_ready(solver)
    check_option_names(name, options, "solver_options")
    if is_transformed(model):
        raise ModelError("model: it is already objective-perturbed; pass the original loss model "
                         "(privopt.perturbation.revert(model) undoes it).", "model")
    return solve.replace(solver=name, solver_options=options)


def warn_noise_disclosed(what: str = "the noise vector", stacklevel: int | None = None) -> None:
    """The warning every mechanism gives when ``return_noise=True`` (at the caller's
    line: the first frame outside privopt, unless ``stacklevel`` is given)."""
    warnings.warn(f"result.noise holds {what}; publishing it voids privacy.", NoiseDisclosureWarning,
                  stacklevel=user_stacklevel() if stacklevel is None else stacklevel)


def objective_scale(expr):
    """The constant c of an objective written as c * E, E / k or -E (peeled
    from the outside in, through named expressions), as ``(c, E)``; ``(1.0,
    expr)`` when the outermost node is not such a scaling.

    Reads the expression's TREE and the constants of its outermost scaling
    nodes only, never the coefficients inside E (which may hold the data)."""
    c, e = 1.0, expr
    for _ in range(64):   # a bound on the nesting, not a data-dependent loop
        if getattr(e, "is_named_expression_type", lambda: False)():
            e = e.expr
            continue
        name = type(e).__name__
        args = getattr(e, "args", None)
        if name == "NegationExpression":
            c, e = -c, args[0]
            continue
        if name == "DivisionExpression" and not _is_variable(args[1]):
            k = _constant(args[1])
            if k is None or k == 0:
                break
            c, e = c / k, args[0]
            continue
        if name in ("ProductExpression", "MonomialTermExpression") and args is not None and len(args) == 2:
            if not _is_variable(args[0]) and _is_variable(args[1]):
                k, inner = _constant(args[0]), args[1]
            elif not _is_variable(args[1]) and _is_variable(args[0]):
                k, inner = _constant(args[1]), args[0]
            else:
                break
            if k is None:
                break
            c, e = c * k, inner
            continue
        break
    return c, e


def _is_variable(e) -> bool:
    return bool(getattr(e, "is_potentially_variable", lambda: False)())


def _constant(e):
    from pyomo.environ import value

    try:
        return float(value(e))
    except (ValueError, TypeError, ArithmeticError):
        return None


#: 1/c = k n for these k is read as a mean (k = 2: the halved mean, ``sum(...) / (2 n)``).
_MEAN_MULTIPLES = (1, 2)


def _term_factors(expr):
    """The constant factor of each summand of ``expr`` (seen through named
    expressions), as a list, or None when ``expr`` is not a sum of at least
    two summands each of the form k * E.  Reads the outermost scaling of each
    summand only (:func:`objective_scale`)."""
    for _ in range(64):
        if getattr(expr, "is_named_expression_type", lambda: False)():
            expr = expr.expr
            continue
        break
    if type(expr).__name__ not in ("SumExpression", "LinearExpression"):
        return None
    factors = []
    for arg in expr.args:
        if not _is_variable(arg):
            continue   # a constant summand carries no record
        c, inner = objective_scale(arg)
        if inner is arg:
            c = 1.0
        factors.append(c)
    return factors if len(factors) >= 2 else None


def _mean_factor(c, n_samples):
    """k when 1/|c| is within 1% of k n for k in :data:`_MEAN_MULTIPLES`, else None."""
    if c == 0:
        return None
    for k in _MEAN_MULTIPLES:
        if abs(1.0 / abs(c) - k * n_samples) <= 0.01 * k * n_samples:
            return k
    return None


def warn_if_mean_objective(model, n_samples, what: str, stacklevel: int | None = None) -> bool:
    """Warn (:class:`~privopt.exceptions.LossContractWarning`) when the active
    objective is a mean of per-record losses instead of their sum, which
    cannot be a sum of n per-record terms each in the declared range: the
    release stays private, but its noise is calibrated to terms n times wider
    than the loss's.  Returns whether it warned.  Two forms are recognized:

    * the objective is c * E with 1/|c| within 1% of n or 2 n (``sum(...) / n``,
      ``sum(...) / (2 n)``);
    * the 1/n is folded into the summands: every summand of the objective is
      k_t * E_t with the same k_t = k and 1/|k| within 1% of n or 2 n (scenario
      probabilities 1/n in a stochastic programme, ``sum(u[t] / n ...)``).

    The check reads the objective's expression tree and the constant factor of
    each summand's outermost scaling node, before any solve; it does not read
    the coefficients inside a summand (where the data usually sits).  It is a
    diagnostic for the data curator, not part of the release.  Nothing runs
    when n is unknown.  A 1/n folded into data coefficients of differing values
    (``sum(c_i / n * x_i)``) cannot be told from a sum and is not detected."""
    if n_samples is None or n_samples < 2:
        return False
    from pyomo.environ import Objective

    objectives = list(model.component_data_objects(Objective, active=True))
    if len(objectives) != 1:
        return False
    c, inner = objective_scale(objectives[0].expr)
    if _mean_factor(c, n_samples) is not None:
        form = f"(...) / {1.0 / abs(c):.6g}"
    else:
        factors = _term_factors(inner)
        if not factors:
            return False
        k0 = factors[0]
        if any(abs(k - k0) > 1e-9 * abs(k0) for k in factors) or _mean_factor(c * k0, n_samples) is None:
            return False
        form = f"a sum of {len(factors)} terms each multiplied by 1/{1.0 / abs(c * k0):.6g}"
    warnings.warn(
        f"model: its objective is {form} with n_samples = {n_samples}: it looks like a MEAN "
        f"of per-record losses. {what} assumes a SUM of n per-record terms, each in the declared range, and "
        f"calibrates its noise to that range, so the noise is about n = {n_samples} times too large for this "
        "loss (the release is still private, but close to useless). Drop the 1/n (minimize the sum), or, if "
        "the declared range already describes the scaled terms, ignore this warning "
        "(warnings.simplefilter('ignore', privopt.exceptions.LossContractWarning)).",
        LossContractWarning, stacklevel=user_stacklevel() if stacklevel is None else stacklevel)
    return True
