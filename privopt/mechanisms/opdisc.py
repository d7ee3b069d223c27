"""OPDisc: objective perturbation over a discrete parameter space
[NRVW20, Algorithm 1].

:func:`opdisc` runs in four steps, each a function of this module with a frozen record
out (after :func:`_public`, the scalar checks a ledger runs before it reserves the call):

1. :func:`_check` -- every argument and the model, before any noise is drawn or any
   solve starts (:class:`OPDiscTask`: W_tau, G, D, tau, n);
2. :func:`_plan` -- sigma from the calibration and the bounds, from public constants only
   (:class:`OPDiscPlan`);
3. :func:`_run` -- the perturbed objective on a clone, solved and certified, each record's
   term checked at the answer (:class:`OPDiscAnswer`);
4. :func:`_release` -- the result with its typed :class:`OPDiscParameters`.

The noise eta is drawn in :func:`opdisc` itself, between steps 2 and 3.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyomo.environ as pyo

from .._frozen import FrozenRecord
from .._random import check_random_state
from .._validation import (
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
    user_stacklevel,
)
from ..calibration import (
    OPDISC_CALIBRATIONS,
    check_loss_range,
    opdisc_delta,
    opdisc_paper_argument_holds,
    opdisc_sigma,
    opdisc_utility_bound,
)
from ..exceptions import ModelError, ParameterError, UnprovenGuaranteeWarning
from .._runtime import check_executor, is_local
from ..models import Asked, check_model_contract, get_info, quiet_clone
from ..oracle import certified_solve
from ..perturbation import (
    get_normalization,
    grid_separation,
    resolve_grids,
    snap_to_grid,
    weights_of,
)
from ..ledger import charges
from ..result import PrivateResult, curator_reports, weight_labels
from ..solvers import SolveOptions, keyword_signature, parse_keywords
from ..space import DecisionSpace, count_grid_points
from ._checks import (check_n_samples, check_named_solver, check_run, decision_bounds, warn_if_delta_weak,
                      warn_if_mean_objective, warn_noise_disclosed)
from ._terms import TermBound, check_record_terms, record_terms_kind
from ._noise import draw_opdisc_noise

#: Why OPDisc's ``parameters["alpha"]`` was renamed: the name meant a per-record bound here and
#: the total excess loss in private selection; each name now has one meaning.
OPDISC_ALPHA_RENAMED = ("OPDisc's utility bound is per record, on L/n; 'alpha' in private selection's "
                        "parameters is the total excess loss, so OPDisc's bound is named alpha_per_record")

__all__ = ["opdisc", "OPDiscParameters"]


@dataclass(frozen=True)
class _Keywords:
    """OPDisc's own keywords (each documented in :func:`opdisc`), checked
    there; how the model is solved is the :class:`~privopt.solvers.SolveOptions`
    beside it."""

    lipschitz: float | None = None
    norm_bound: float | None = None
    separation: float | None = None
    n_samples: int | None = None
    loss_range: object = None
    grid: object = None
    calibration: str = "proven"
    beta: float = 0.05
    pi_encoding: str = "auto"
    return_noise: bool = False


#: The fields of :class:`~privopt.solvers.SolveOptions` opdisc takes as keywords.
OPDISC_OPTIONS = ("solver", "time_limit", "threads", "on_failure", "solver_options", "abs_gap", "executor",
                  "public_constraints", "keep_report")


def _public(model, weights=None, *, epsilon, delta, random_state=None, options=None, **kwargs) -> None:
    """OPDisc's checks of its scalar arguments, reading nothing of the model: run
    before a ledger reserves the call (:func:`privopt.ledger.charges`), and again by
    :func:`opdisc` itself."""
    solve, kw = parse_keywords("opdisc", options, kwargs, _Keywords, OPDISC_OPTIONS)
    check_epsilon(epsilon)
    check_delta(delta)
    check_probability(kw.beta, "beta")
    check_choice(kw.calibration, "calibration", OPDISC_CALIBRATIONS)
    check_bool(kw.return_noise, "return_noise")
    check_named_solver(solve, "highs")


@charges("opdisc", check=_public)
@curator_reports
@keyword_signature(_Keywords, OPDISC_OPTIONS, {"solver": "highs"})
def opdisc(model, weights=None, *, epsilon: float, delta: float, random_state=None,
           options: SolveOptions | None = None, **kwargs) -> PrivateResult:
    r"""Release an (epsilon, delta)-DP minimizer of a loss over a discrete grid.

    Algorithm 1 (OPDisc) of Neel, Roth, Vietri, Wu, *Oracle Efficient Private
    Non-Convex Optimization*, ICML 2020 [NRVW20]:

    1. sigma from the calibration (below);
    2. eta ~ N(0, sigma^2 I_{d+1});
    3. output w_hat = argmin_{w in W_tau} L(D, w) - <eta, pi(w)>, with
       pi(w) = (w, sqrt(D^2 - ||w||^2)) / D, solved exactly as a MILP by the
       ``privopt.objective_perturbation`` transformation on a clone of ``model``
       and certified by the solver.

    W_tau is the grid of the weights (integer ranges of the variables, the
    model's declared grid, or ``grid``) intersected with ||w||_2 <= D.  The
    guarantee needs every per-example loss l_i to be G-Lipschitz in l2 on W_tau
    (a loss with values in [0, 1] is 1/tau-Lipschitz there) and the oracle to be
    exact (see :mod:`privopt.oracle` for the certification policy).

    Neighbouring data sets differ by replacing one record ([NRVW20],
    Definition 2.5); the result says so (``result.neighbouring``).

    Calibration.  The default, ``calibration="proven"``, takes the smallest
    sigma for which privopt's complete proof gives (epsilon, delta)-DP:
    delta(sigma) = E[max(0, 1 - exp(eps - X/s - 1/(2 s^2)))] <= delta with
    X ~ chi_{d+1}, s = sigma / (4 G D^2 / tau)
    (:func:`privopt.calibration.opdisc_sigma_proven`, derivation in
    :func:`privopt.calibration.opdisc_delta`).  ``calibration="paper"`` uses
    Algorithm 1's 7 G D^2 sqrt(ln(1/delta)) / (tau epsilon)
    (:func:`privopt.calibration.opdisc_sigma_paper`), whose printed proof has
    a gap; it is there to reproduce the paper, and the result reports the delta
    privopt can prove for it in ``parameters["provable_delta"]``.  The proven
    sigma is smaller than the paper's for small d (about 0.77x at d = 2) and
    larger for large d (about 1.15x at d = 23, 1.4x at d = 50).

    Parameters
    ----------
    model : pyomo ConcreteModel
        Its one active objective, minimized, is the loss L(D, w) = sum_i l_i(w).
        It is never modified: privopt transforms a clone.
    weights : IndexedVar, list of Var, str, optional
        The decision vector; default: the model's ``ModelInfo`` or ``model.w``.
    epsilon, delta : float
        Privacy parameters, epsilon > 0 and 0 < delta < 1 (e.g. 1/n^2).
    random_state : None, int or numpy Generator
        ``None`` (default) draws the noise from the operating system's secure
        source.  A seed makes the run reproducible and is **not private** if
        the seed is known.
    options : SolveOptions, optional
        The keywords ``solver``, ``time_limit``, ``threads``, ``on_failure``,
        ``solver_options``, ``abs_gap``, ``executor``,
        ``public_constraints`` and ``keep_report`` as one record
        (:class:`privopt.SolveOptions`, each field documented there), e.g.
        built once and reused; those keywords, given beside it, override its
        fields.  Any keyword opdisc does not take is a TypeError naming it.

    Other Parameters
    ----------------
    lipschitz : float, optional
        G; default: the model's info, or (loss range width)/tau when the
        info states a loss range.
    norm_bound : float, optional
        D; default: the model's info.
    separation : float, optional
        tau; default: the model's info, else the grid's smallest gap.  A
        value larger than the grid's smallest gap is an error (the grid would
        not be tau-separated).
    n_samples : int
        n; default: the model's info; required (the model's contract checks
        that its records' side falls into exactly n blocks with the decision
        fixed, :func:`privopt.models.check_model_contract`).  Used for the
        utility bound ``alpha_per_record`` and for two warnings, never for the noise:
        delta > 1/n draws a :class:`~privopt.exceptions.WeakGuaranteeWarning`,
        and an objective written as a mean (``sum(...) / n``) a
        :class:`~privopt.exceptions.LossContractWarning` (from the
        expression's structure, before any solve).
    loss_range : float or (a, b), optional
        The range of each record's term; default: the model's info.  When
        given, G defaults to its width over tau, and each record's term at the
        oracle's answer is checked against it before the release
        (:func:`privopt.mechanisms._terms.check_record_terms`): a term outside
        refuses the call (charged, the data was read; no value in the message).
    grid : sequence, optional
        Values of the weights (one sequence or one per coordinate), for
        variables declared continuous.  W is then the grid: the weights' own
        bounds are not read (they may come from the data) and are relaxed on
        the clone, so they cannot cut it.
    calibration : {"proven", "paper"}
        How sigma is computed (see above).  ``"paper"`` warns
        (:class:`~privopt.exceptions.UnprovenGuaranteeWarning`) where even the
        paper's own argument does not cover epsilon.
    beta : float
        Failure probability of the utility bound (Theorem 5).
    solver, time_limit, threads, solver_options, abs_gap : fields of SolveOptions
        Passed to :func:`privopt.solvers.solve` (gap 0 is always requested).
        Any MILP solver by name (default ``"highs"``), ``"enumerate"``
        (privopt's exact search over W_tau, for models of
        :func:`privopt.models.zero_one_halfspace` with a small W_tau), or
        ``"auto"``: enumeration where W_tau is small
        (:func:`privopt.solvers.choose_solver`), else HiGHS.  Every choice
        returns the exact argmin; only the time differs.
    on_failure : {"raise", "return"}
        What to do when the solver does not certify the optimum
        (:mod:`privopt.oracle`).
    pi_encoding : {"auto", "piecewise", "binary"}
        Encoding of s = sqrt(D^2 - ||w||^2) (see
        :mod:`privopt.perturbation.objective_perturbation`).
    return_noise : bool
        Put eta in ``result.noise`` (for tests and teaching; warns, because
        releasing it voids privacy).
    executor : None, "local", Executor, dask Client or "ray"
        Where the exact oracle's branch and bound by support runs when the
        solver is (or ``"auto"`` resolves to) ``"enumerate"``: None, a local
        process pool of ``threads`` workers when it is predicted above 5 s;
        ``"local"``, this process; otherwise the given executor (the problem
        is sent once per dask worker).  The released w is the same on any of
        them.  Checked before any solve.
    public_constraints : str or list of str, optional
        The model's constraints on the decision alone (and weights whose
        bounds are mutable Params) that are fixed before the data is seen, by
        component name.  OPDisc keeps them in the model, so they shape the set
        its argmin ranges over; any other such constraint makes the call refuse
        before any noise is drawn, naming it
        (:func:`privopt.models._contract.check_public_constraints`).
        privopt's own models declare theirs.  ``"all"`` declares nothing: a model
        with a component it would have covered is refused, naming each.
    keep_report : bool, default False
        Return the report (below), the data curator's diagnostics, as in
        :func:`privopt.exponential_mechanism` (refused under a ledger).

    Returns
    -------
    PrivateResult
        ``weights``, ``epsilon``, ``delta``, ``neighbouring``, ``parameters``
        (an :class:`OPDiscParameters`, read as fields or keys: ``calibration``,
        ``sigma``, ``provable_delta``, ``alpha_per_record``, ``beta``,
        ``lipschitz``, ``norm_bound``, ``separation``, ``n_samples``, ``dim``,
        ``noise_distribution``, ``pi_encoding``, ``record_terms``: ``"clipped by construction"`` for a model built with
        ``privopt.RecordModel(clip=True)``, ``"checked at the points computed"`` where each
        record's term is read at the answer only (the range elsewhere is assumed), None
        for privopt's own models), ``report`` (the SolveReport, only with
        ``keep_report=True``; else None).
    """
    solve, kw = parse_keywords("opdisc", options, kwargs, _Keywords, OPDISC_OPTIONS)
    task = _check(model, weights, epsilon, delta, solve, kw)       # every refusal before any noise or solve
    plan = _plan(task)
    eta = draw_opdisc_noise(check_random_state(random_state), plan.sigma, task.dim)   # all the noise, here
    answer = _run(task, eta)
    return _release(task, plan, answer, eta)


# --- 1. check: every argument and the model, before any noise or solve ---------------

@dataclass(frozen=True)
class OPDiscTask:
    """One call of :func:`opdisc`, checked before any noise is drawn or any solve starts:
    the model and its decision ``w_vars``, the privacy and utility parameters, the solve's
    options (solver resolved), W_tau as ``w`` (a :class:`privopt.space.DecisionSpace`: its
    grids and ball, read as ``grids`` and ``norm_bound``, D as the exact levels of ||w||^2
    snapped it; ``grid``: the keyword as given, None when W is the model's), and the public
    constants G, tau and n."""

    model: Any
    w_vars: list
    info: Any
    epsilon: float
    delta: float
    beta: float
    calibration: str
    pi_encoding: str
    solve: SolveOptions
    grid: Any
    w: DecisionSpace
    contract: Any
    n_samples: int
    loss_range: tuple | None
    separation: float
    lipschitz: float
    return_noise: bool

    @property
    def grids(self) -> list:
        """W_tau's per-coordinate grids."""
        return list(self.w.grids)

    @property
    def norm_bound(self) -> float:
        """D, as the exact levels of ||w||^2 snapped it (:attr:`privopt.space.NormLevels.norm_bound`)."""
        return self.w.levels.norm_bound

    @property
    def dim(self) -> int:
        """d, the number of weights."""
        return len(self.w_vars)


def _check(model, weights, epsilon, delta, solve: SolveOptions, kw: _Keywords) -> OPDiscTask:
    """Every check of a call, in this order, before any noise is drawn or any solve starts:
    the scalar arguments, the run, the model's contract, W_tau (its grid, tau, the ball
    ||w||_2 <= D: refused when one point is left), G, and the two warnings on n."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    beta = check_probability(kw.beta, "beta")
    calibration = check_choice(kw.calibration, "calibration", OPDISC_CALIBRATIONS)
    if kw.pi_encoding not in ("auto", "piecewise", "binary"):
        raise ParameterError("pi_encoding must be 'auto', 'piecewise' or 'binary'.", "pi_encoding")
    solve = _check_solve(model, solve, kw.return_noise)
    grid = kw.grid
    info = get_info(model)
    w_vars = weights_of(model, weights, default_name=info.weights if info else "w")
    n_samples = check_n_samples(kw.n_samples, info)
    loss_range = _loss_range(kw.loss_range, info)
    contract = check_model_contract(model, w_vars, solve.public_constraints, info, "OPDisc", n_samples=n_samples,
                                    asked=Asked(declare=None, **decision_bounds(grid, info)))
    n_samples = contract.n_records
    grids = resolve_grids(w_vars, grid, info.grid if info else None, read_bounds=grid is None)
    separation = _separation(kw.separation, info, grid_separation(grids))
    w = DecisionSpace(tuple(grids), _norm_bound(kw.norm_bound, info))
    levels = w.levels  # raises if no grid point is inside the ball
    lipschitz = _lipschitz(kw.lipschitz, info, separation, loss_range)

    warn_if_delta_weak(delta, n_samples)
    warn_if_mean_objective(model, n_samples, "OPDisc")   # the objective's structure against n, before any solve
    if levels.exact and count_grid_points(levels.coef, int(levels.bound)) == 1:
        raise ParameterError(
            f"norm_bound: only one grid point lies in the ball ||w||_2 <= {levels.norm_bound:g}, so the release "
            "would not depend on the data (or the noise); raise norm_bound.", "norm_bound")
    return OPDiscTask(model, w_vars, info, epsilon, delta, beta, calibration, kw.pi_encoding, solve, grid, w,
                      contract, n_samples, loss_range, separation, lipschitz,
                      bool(kw.return_noise))


def _check_solve(model, solve: SolveOptions, return_noise) -> SolveOptions:
    """The run's checks (:func:`~privopt.mechanisms._checks.check_run`) on
    ``solve``, returned with its solver resolved (``"auto"``: from W's size)."""
    solve = check_run(model, solve, return_noise)
    if not (solve.executor is None or is_local(solve.executor)):
        check_executor(solve.executor)
    return solve


def _separation(separation, info, grid_tau: float) -> float:
    """tau: the given separation, the model's, or the grid's smallest gap; never above the grid's."""
    if separation is None:
        separation = info.separation if info and info.separation else grid_tau
    separation = check_positive(separation, "separation")
    if not math.isfinite(separation):
        raise ModelError("weights: every coordinate has a single value; there is nothing to choose.", "weights")
    if separation > grid_tau * (1 + 1e-9):
        raise ParameterError(
            f"separation: the grid is not {separation:g}-separated (its smallest gap is "
            f"{grid_tau:g}); use separation <= {grid_tau:g}.", "separation")
    return separation


def _norm_bound(norm_bound, info) -> float:
    """D: the given bound on ||w||_2 or the model's."""
    if norm_bound is None:
        norm_bound = info.norm_bound if info else None
    if norm_bound is None:
        raise ParameterError("norm_bound: give D, the bound ||w||_2 <= D on the grid.", "norm_bound")
    return check_positive(norm_bound, "norm_bound")


def _loss_range(loss_range, info):
    """(a, b): the given range of each record's term, or the model's; None when neither
    declares one (then only a Lipschitz constant speaks for the terms)."""
    if loss_range is None and info is not None:
        loss_range = info.loss_range
    return None if loss_range is None else check_loss_range(loss_range)


def _lipschitz(lipschitz, info, separation: float, loss_range=None) -> float:
    """G: the given l2-Lipschitz constant, the model's, or its loss range over tau."""
    if lipschitz is None and info is not None and info.lipschitz is not None:
        lipschitz = info.lipschitz
    if lipschitz is None and loss_range is not None:
        lipschitz = (loss_range[1] - loss_range[0]) / separation
    if lipschitz is None:
        raise ParameterError(
            "lipschitz: give G, the l2-Lipschitz constant of each per-example loss on the grid "
            "(a loss with values in [0, 1] on a tau-separated grid has G = 1/tau).", "lipschitz")
    return check_positive(lipschitz, "lipschitz")



# --- 2. plan: sigma from the calibration, from public constants only ---------------

@dataclass(frozen=True)
class OPDiscPlan:
    """What a call computes from public inputs before the noise: ``sigma``
    (:func:`privopt.calibration.opdisc_sigma`), ``provable_delta``
    (:func:`privopt.calibration.opdisc_delta` at that sigma) and the utility bound
    ``alpha_per_record`` (:func:`privopt.calibration.opdisc_utility_bound`); eta's law
    ``noise_distribution``, N(0, sigma^2 I_{d+1})."""

    sigma: float
    provable_delta: float
    alpha_per_record: float | None
    noise_distribution: str


def _plan(task: OPDiscTask) -> OPDiscPlan:
    """sigma for (epsilon, delta) at G, D, tau and d under ``task.calibration``, the delta
    privopt proves for it, and the utility bound; warns where ``calibration="paper"`` is
    not even covered by the paper's own argument."""
    epsilon, d = task.epsilon, task.dim
    sigma = opdisc_sigma(epsilon, task.delta, task.lipschitz, task.norm_bound, task.separation, d,
                         calibration=task.calibration)
    provable_delta = opdisc_delta(sigma, epsilon, task.lipschitz, task.norm_bound, task.separation, d)
    if task.calibration == "paper" and not opdisc_paper_argument_holds(epsilon, task.delta):
        warnings.warn(
            f"calibration='paper' at epsilon={epsilon:g}, delta={task.delta:g}: even the paper's own "
            "tail argument does not cover this epsilon; the delta privopt can prove for this "
            f"sigma is {provable_delta:.3g} (parameters['provable_delta']). Use "
            "calibration='proven' for a guarantee.", UnprovenGuaranteeWarning, stacklevel=user_stacklevel())
    alpha = None if task.n_samples is None else opdisc_utility_bound(sigma, task.n_samples, d, task.beta)
    return OPDiscPlan(sigma, provable_delta, alpha, f"N(0, sigma^2 I_{d + 1})")


# --- 3. run: the perturbed objective on a clone, solved and certified ---------------

@dataclass(frozen=True)
class OPDiscAnswer:
    """The oracle's answer: ``weights`` (snapped to W_tau), the solve's ``report`` and the
    encoding of pi the transformation chose (``pi_encoding``)."""

    weights: np.ndarray
    report: Any
    pi_encoding: str


def _run(task: OPDiscTask, eta: np.ndarray) -> OPDiscAnswer:
    """argmin_{w in W_tau} L(D, w) - <eta, pi(w)> on a clone of the model (the
    ``privopt.objective_perturbation`` transformation), certified by the solver; each
    record's term at the answer checked against ``loss_range`` (refused, charged, when
    broken: the data was read)."""
    private_model = quiet_clone(task.model)
    private_w = [private_model.find_component(v) for v in task.w_vars]
    if task.grid is not None:   # W is the grid: the weights' own bounds (never read, maybe the data's) must not cut it
        for v in private_w:
            v.setlb(None)
            v.setub(None)
    pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
        private_model,
        weights=private_w,
        noise=eta,
        normalize=True,
        norm_bound=task.norm_bound,
        grid=task.grids,
        grid_encoding=None if task.grid is not None else (task.info.grid_encoding if task.info else None),
        pi_encoding=task.pi_encoding,
    )
    report = certified_solve(private_model, options=task.solve, what="the OPDisc objective", _prechecked=True)
    w_hat = snap_to_grid([pyo.value(v) for v in private_w], task.grids)
    # each record's term at the answer, against loss_range: refused (charged) when broken, never released as is
    check_record_terms(task.model, task.w_vars, task.contract, [w_hat], TermBound(task.loss_range), "OPDisc",
                       task.solve)
    return OPDiscAnswer(w_hat, report, get_normalization(private_model)["pi_encoding"])


# --- 4. release: the answer with its typed parameters -------------------------------

@dataclass(frozen=True, eq=False)
class OPDiscParameters(FrozenRecord):
    """The ``parameters`` of :func:`opdisc` (documented there): typed fields, also readable
    as a mapping (``result.parameters["sigma"]``).  The old key ``"alpha"`` still reads
    ``alpha_per_record``, with a DeprecationWarning."""

    _renamed: ClassVar[dict[str, tuple[str, str]]] = {"alpha": ("alpha_per_record", OPDISC_ALPHA_RENAMED)}

    calibration: str
    sigma: float
    provable_delta: float
    alpha_per_record: float | None
    beta: float
    lipschitz: float
    norm_bound: float
    separation: float
    n_samples: int
    dim: int
    noise_distribution: str
    pi_encoding: str
    record_terms: str | None


def _release(task: OPDiscTask, plan: OPDiscPlan, answer: OPDiscAnswer, eta: np.ndarray) -> PrivateResult:
    """The release step: the answer, with its typed parameters, built once."""
    parameters = OPDiscParameters(
        calibration=task.calibration, sigma=plan.sigma, provable_delta=plan.provable_delta,
        alpha_per_record=plan.alpha_per_record, beta=task.beta, lipschitz=task.lipschitz,
        norm_bound=task.norm_bound, separation=task.separation, n_samples=task.n_samples, dim=task.dim,
        noise_distribution=plan.noise_distribution, pi_encoding=answer.pi_encoding,
        record_terms=record_terms_kind(task.info, task.contract, TermBound(task.loss_range)))
    if task.return_noise:
        warn_noise_disclosed("the noise vector")
    return PrivateResult(
        labels=weight_labels(task.w_vars),
        weights=answer.weights,
        mechanism="opdisc",
        epsilon=task.epsilon,
        delta=task.delta,
        parameters=parameters,
        report=answer.report,
        certified=answer.report.certified_optimal,
        noise=eta if task.return_noise else None,
    )
