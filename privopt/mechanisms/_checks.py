"""Checks every mechanism runs before any noise is drawn or any solve starts."""

from __future__ import annotations

import warnings


from .._validation import check_bool, check_int, check_model_objective
from ..exceptions import (
    ModelError,
    NoiseDisclosureWarning,
    ParameterError,
    SolverNotAvailableError,
    WeakGuaranteeWarning,
)
from ..solvers import get_spec
from ..solvers._dispatch import _availability

__all__ = ["check_solver_ready", "check_model_objective", "check_run", "warn_noise_disclosed",
           "check_n_samples", "warn_if_delta_weak"]


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


def warn_if_delta_weak(delta, n_samples, stacklevel=3):
    """Warn when delta > 1/n: (epsilon, delta)-DP then allows publishing a
    record outright with probability delta."""
    if n_samples is not None and delta > 1.0 / n_samples:
        warnings.warn(
            f"delta={delta:g} exceeds 1/n = {1.0 / n_samples:.3g}: a mechanism may then reveal a whole "
            f"record with probability delta and still meet (epsilon, delta)-DP. Choose delta well below "
            f"1/n, e.g. 1/n^2 = {1.0 / n_samples ** 2:.3g}.", WeakGuaranteeWarning, stacklevel=stacklevel)


def check_solver_ready(solver) -> str:
    """The solver name is known and the solver installed (raises otherwise)."""
    spec = get_spec(solver)
    if not _availability(spec.name)[0]:
        raise SolverNotAvailableError(
            f"Solver {spec.name!r} is not installed or not usable here. Install it: {spec.install_hint}"
        )
    return spec.name


def check_run(model, *, solver, time_limit, threads, abs_gap, solver_options, return_noise, on_failure):
    """The checks every mechanism runs before it draws noise or clones the model.

    Returns ``(solver_name, solver_options, on_failure)``; raises a privopt
    error naming the parameter otherwise.  These are the setup checks of
    :func:`privopt.solvers.solve` (limits, options and their names for HiGHS,
    availability, one active objective) plus the mechanisms' own; a mechanism
    that ran them passes ``_prechecked=True`` to
    :func:`privopt.oracle.certified_solve`, and ``solve`` does not repeat them.
    """
    from ..oracle import check_on_failure
    from ..perturbation import is_transformed
    from ..solvers._dispatch import _check_limits, _check_options, check_option_names

    on_failure = check_on_failure(on_failure)
    check_bool(return_noise, "return_noise")
    _check_limits(time_limit, 0.0, abs_gap, threads, None)
    options = _check_options(solver_options)
    check_model_objective(model)
    if isinstance(solver, str) and solver.strip().lower() == "auto":
        from ..solvers._enumerate import choose_solver

        solver = choose_solver(model)
    name = check_solver_ready(solver)
    check_option_names(name, options, "solver_options")
    if is_transformed(model):
        raise ModelError("model: it is already objective-perturbed; pass the original loss model "
                         "(privopt.perturbation.revert(model) undoes it).", "model")
    return name, options, on_failure


def warn_noise_disclosed(what: str = "the noise vector", stacklevel: int = 3) -> None:
    """The warning every mechanism gives when ``return_noise=True``
    (``stacklevel`` 3: the caller of the function that calls this one)."""
    warnings.warn(f"result.noise holds {what}; publishing it voids privacy.", NoiseDisclosureWarning,
                  stacklevel=stacklevel)
