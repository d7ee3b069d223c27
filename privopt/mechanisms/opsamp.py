"""OPSamp: objective perturbation by sampling over a continuous parameter
space [NRVW20, Algorithm 2], with its oracle calls on any executor.

:func:`opsamp` runs in four stages, each a function of this module:

1. :func:`_check` -- every argument and the model, before any noise is drawn
   or any solve starts;
2. :func:`_plan` -- the public constants (G, the diameters of W, n) and from
   them m, eta and lambda (:func:`privopt.calibration.opsamp_parameters`);
3. :func:`_run_calls` -- the m oracle calls on the executor (the worker side,
   caches and warm re-solves are in :mod:`privopt.mechanisms._parallel`);
4. :func:`_release` -- the failure policy, the average of the answers plus
   Laplace noise, the projection onto the public box, and the result.

All the noise is drawn in :func:`opsamp` itself, between stages 2 and 3.
"""

from __future__ import annotations

import math
import uuid
import warnings
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
import pyomo.environ as pyo

from .._limits import check_memory
from .._frozen import FrozenDict, FrozenRecord
from .._random import check_random_state
from .._validation import (
    check_bool,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_real,
    renamed_argument,
    user_stacklevel,
)
from ..calibration import OPSampParameters, check_loss_range, opsamp_parameters
from ..exceptions import (
    ModelError,
    NoiseDominatesWarning,
    NotCertifiedError,
    ParameterError,
    ParameterTypeError,
    SolverError,
    UncertifiedReleaseWarning,
)
from ..models import Asked, check_model_contract, get_info
from ..perturbation import weights_of
from ..ledger import charges
from ..result import PrivateResult, curator_reports, weight_labels
from ..solvers import SolveOptions, keyword_signature, parse_keywords
from ._checks import check_n_samples, check_named_solver, check_run, warn_if_delta_weak, warn_noise_disclosed
from ._noise import draw_opsamp_noise, release_on_grid
from ._terms import TermBound, check_record_terms, record_terms_kind
from .._runtime import (RAY, check_executor, default_executor, dumps_model, ray_executor, run_ordered, share,
                        worker_count)
from ._parallel import OracleAnswer, OracleSolve, install_payload, oracle_chunk


#: Why OPSamp's ``parameters["alpha"]`` was renamed (as OPDisc's): a bound on L/n, where private
#: selection's ``alpha`` is the total excess loss; each name now has one meaning.
OPSAMP_ALPHA_RENAMED = ("OPSamp's utility bound is per record, on L/n; 'alpha' in private selection's "
                        "parameters is the total excess loss, so OPSamp's bound is named alpha_per_record")
__all__ = ["opsamp", "OPSampReleaseParameters"]


@dataclass(frozen=True)
class _Keywords:
    """OPSamp's own keywords (each documented in :func:`opsamp`), checked in
    :func:`_check` and :func:`_plan`; how each call is solved is the
    :class:`~privopt.solvers.SolveOptions` beside it."""

    lipschitz_l1: float | None = None
    linf_diameter: float | None = None
    l2_diameter: float | None = None
    l1_diameter: float | None = None
    n_samples: int | None = None
    loss_range: object = None
    n_oracle_calls: int | None = None
    beta: float = 0.05
    oracle_error: float = 0.0
    return_noise: bool = False
    project: bool = True
    persistent: bool = True
    lipschitz: float | None = None   # the deprecated name of lipschitz_l1


#: The fields of :class:`~privopt.solvers.SolveOptions` opsamp takes as keywords.
OPSAMP_OPTIONS = ("solver", "time_limit", "threads", "executor", "progress", "on_failure", "solver_options",
                  "abs_gap", "public_constraints", "keep_report")


@dataclass(frozen=True)
class _Run:
    """The checked arguments of one opsamp call (stage 1)."""

    model: object
    w_vars: list
    info: object
    epsilon: float
    delta: float
    beta: float
    oracle_error: float
    n_oracle_calls: int | None
    n_samples: int | None  # the caller's n, else the model info's (the plan requires it)
    solve: SolveOptions   # solver resolved, executor checked, progress decided
    rng: np.random.Generator
    project: bool
    persistent: bool
    return_noise: bool
    contract: object = None          # what the model's contract read (privopt.models.ModelContract)
    loss_range: tuple | None = None  # each record's term's declared range, checked at every answer

    @property
    def d(self) -> int:
        return len(self.w_vars)


@dataclass(frozen=True)
class _Plan:
    """The public constants and OPSamp's parameters (stage 2)."""

    params: OPSampParameters
    sources: tuple   # where D_inf, D_2, D_1 came from
    n_samples: int


def _box_diameters(w_vars):
    """(D_inf, D_2, D_1) of the box of the variables' declared bounds, or None."""
    widths = []
    for v in w_vars:
        lb, ub = v.bounds
        if lb is None or ub is None:
            return None
        widths.append(float(ub) - float(lb))
    return max(widths), math.sqrt(sum(x * x for x in widths)), sum(widths)


def _public(model, weights=None, *, epsilon, delta, random_state=None, options=None, **kwargs) -> None:
    """OPSamp's checks of its scalar arguments, reading nothing of the model: run
    before a ledger reserves the call (:func:`privopt.ledger.charges`), and again by
    :func:`opsamp` itself."""
    solve, kw = parse_keywords("opsamp", options, kwargs, _Keywords, OPSAMP_OPTIONS)
    check_epsilon(epsilon)
    check_delta(delta)
    check_probability(kw.beta, "beta")
    for name in ("project", "persistent", "return_noise"):
        check_bool(getattr(kw, name), name)
    if kw.n_oracle_calls is not None and not isinstance(kw.n_oracle_calls, bool):
        check_int(kw.n_oracle_calls, "n_oracle_calls", minimum=1)
    check_named_solver(solve, "highs")


@charges("opsamp", check=_public)
@curator_reports
@keyword_signature(_Keywords, OPSAMP_OPTIONS, {"solver": "highs", "progress": True})
def opsamp(model, weights=None, *, epsilon: float, delta: float, random_state=None,
           options: SolveOptions | None = None, **kwargs) -> PrivateResult:
    r"""Release an (epsilon, delta)-DP minimizer of a loss over a continuous set.

    Algorithm 2 (OPSamp) of Neel, Roth, Vietri, Wu, *Oracle Efficient Private
    Non-Convex Optimization*, ICML 2020 [NRVW20], with a sensitivity bound
    that privopt proves (the paper's Lemma 9 does not hold as printed):

    1. m, eta, lambda from :func:`privopt.calibration.opsamp_parameters`,
       lambda = min(D_1, A + min(t_H, t_B)) with A = 250 eta G d^2 D_inf^2 +
       alpha/(10 G), t_H = D_1 sqrt(ln(1/delta)/(2m)) and t_B Bernstein's
       deviation (derivation there);
    2. for k = 1..m: sigma_k ~ Exp(eta)^d (rate eta, mean 1/eta) and
       w_k = argmin_{w in W} L(D, w) - <sigma_k, w>, each solved exactly on a
       copy of ``model`` transformed by ``privopt.objective_perturbation``
       with ``normalize=False`` and certified by the solver (by default each
       worker keeps its copy and re-solves it warm, see ``persistent``);
    3. output (1/m) sum_k w_k + mu, mu ~ Lap(lambda/epsilon)^d.

    Utility, [NRVW20, Theorem 7] verbatim: "Assuming the loss functions are
    convex, Algorithm 2 is an (alpha', beta)-minimizer for (1/n) L(w, D) with
    alpha' = O( d^{5/4} G D_inf sqrt(D_2 log(1/beta)) / sqrt(eps n) +
    alpha log(1/beta) / eps )".  The theorem states no constant;
    ``parameters["alpha_per_record"]`` is privopt's own bound with explicit constants
    (``alpha_source = "privopt"``) and ``alpha_theorem7_rate`` the expression
    inside the O(), which is not a bound.

    Privacy needs each per-example loss to take values in an interval of
    width 1 (e.g. [0, 1]) and to be G-Lipschitz in l1 on W, D_inf and D_2 to
    bound W's diameters, and an oracle with additive error at most alpha on
    the per-record objective (see ``oracle_error``).  It needs no convexity;
    the utility bound does.

    The oracle calls are independent and run on ``executor``.  All the noise
    (the m vectors sigma_k, then mu) is drawn in this process from the one
    generator given by ``random_state``, in that order; each worker receives
    the serialized model and its sigma_k.  For a given ``random_state`` the
    result is therefore the same on a process pool, a thread pool or a dask
    cluster, whatever order the calls finish in and whichever worker (and so
    whichever warm start) each call gets: each answer is the unique exact
    optimum for its sigma_k (see ``persistent``).

    Parameters
    ----------
    model : pyomo ConcreteModel
        Its one active objective, minimized, is the loss L(D, w) = sum_i l_i(w).
        It is never modified: each call solves its own copy.
    weights : IndexedVar, list of Var, str, optional
        The decision vector w (length d); default: the ModelInfo's or ``model.w``.
    epsilon, delta : float
        Privacy parameters, epsilon > 0, 0 < delta < 1.
    random_state : None, int or numpy Generator
        ``None`` (default): the operating system's secure source.  A seed
        makes the run reproducible and is **not private** if known.
    options : SolveOptions, optional
        The keywords ``solver``, ``time_limit``, ``threads``, ``executor``,
        ``progress``, ``on_failure``, ``solver_options``, ``abs_gap``,
        ``public_constraints`` and ``keep_report`` as one record
        (:class:`privopt.SolveOptions`, each field documented there), e.g.
        built once and reused; those keywords, given beside it, override its
        fields.  Any keyword opsamp does not take is a TypeError naming it.

    Other Parameters
    ----------------
    lipschitz_l1 : float, optional
        G, the l1-Lipschitz constant of each per-example loss; default: the
        model's ``info.lipschitz_l1``, else its l2 constant ``info.lipschitz``
        (also an l1 constant, since ||.||_2 <= ||.||_1).
    lipschitz : float, optional
        Deprecated name of ``lipschitz_l1`` (warns; ``lipschitz`` is the l2
        constant in :func:`~privopt.mechanisms.opdisc`).
    linf_diameter, l2_diameter : float, optional
        D_inf and D_2 of W; default: the model's info, else the box of the
        weights' declared bounds, D_inf = max_j (ub_j - lb_j),
        D_2 = sqrt(sum_j (ub_j - lb_j)^2) (public: the declared domain).
    l1_diameter : float, optional
        D_1, the l1 diameter of W, which bounds each call's change between
        neighbouring data sets; default: the model's info, else the box of
        the declared bounds, D_1 = sum_j (ub_j - lb_j), else
        min(d D_inf, sqrt(d) D_2).  A W smaller than its box (a simplex, a
        ball) has a smaller D_1: pass it to get less noise.
    n_samples : int
        n; default: the model's info; required (the model's contract checks that
        its records' side falls into exactly n blocks with the decision fixed).
    loss_range : float or (a, b), optional
        The range of each record's term (width at most 1); default: the
        model's info.  When given, each record's term at every oracle answer is
        checked against it before the release
        (:func:`privopt.mechanisms._terms.check_record_terms`): a term outside
        refuses the call (charged, the data was read; no value in the message).
    n_oracle_calls : int, optional
        m.  ``None``: the paper's m, refused above 10,000 calls (the message
        says what a smaller m costs).  Any m >= 1 is private; a larger m
        shrinks the deviation term of lambda like 1/sqrt(m).
    beta : float
        Failure probability of the utility bound (enters eta).
    oracle_error : float
        alpha of the oracle O_alpha, per-record objective units.  privopt
        certifies each call within ``abs_gap`` on L - <sigma, w>, i.e. within
        abs_gap / n per record, so lambda uses
        max(oracle_error, abs_gap / n) (reported as ``oracle_error``).
    solver, time_limit, threads, solver_options, abs_gap : fields of SolveOptions
        Passed to each call's solve (``time_limit`` is per call): through
        :func:`privopt.oracle.certified_solve`, and on HiGHS's warm path
        (see ``persistent``) to the HighsCostSession, which certifies by
        the same rule.
    executor : None, "ray", concurrent.futures.Executor, dask Client or pool, optional
        Where the calls run.  ``None``: a local ``ProcessPoolExecutor`` with
        min(usable CPUs, m) workers, shut down afterwards (scripts on
        platforms that do not fork need the ``if __name__ == "__main__":``
        guard).  ``"ray"``: a ``ray.util.multiprocessing.Pool`` (Ray's
        documented drop-in for ``multiprocessing.Pool``) on the Ray cluster
        ``ray.init``/``RAY_ADDRESS`` points at (a local Ray instance
        otherwise), one worker per cluster CPU, the model sent to each worker
        once, terminated afterwards (needs ``privopt[ray]``).  A given
        executor, dask Client or ``multiprocessing.Pool``-like pool (the
        standard library's or Ray's) is used and left running; the model is
        then sent with the calls (scattered once on dask).
    progress : bool
        Show a tqdm bar over completed calls.
    on_failure : {"raise", "return"}
        An uncertified call: ``"raise"`` stops, cancels the calls not started
        and raises :class:`~privopt.exceptions.NotCertifiedError` (nothing is
        released); ``"return"`` warns (UncertifiedReleaseWarning) and returns
        a result with ``certified=False``, not covered by the guarantee.
        A call that ends without any solution always raises.
    persistent : bool
        Keep one solver model per worker and per call change only the
        objective coefficients of w, re-solving warm from the previous
        call's basis (default True; for solvers with a persistent path, e.g.
        HiGHS, whose later calls skip Pyomo and change the costs in the
        HiGHS model directly; others solve each call from scratch).  The
        privacy proof needs each answer to be a function of the data and
        sigma_k alone; it is, either way: each call's minimizer is unique
        with probability one, and an exact, certified, unique optimum does
        not depend on where the solver started (docs/guarantees.md, OPSamp).
        The answer for a given ``random_state`` is therefore the same either
        way (up to the last floating-point digits of the optimal vertex);
        False forces the cold path.
    project : bool
        Project the released point onto the box of the weights' declared
        bounds (default True; coordinates without bounds are left alone).
        The box is public, so clipping to it is post-processing and costs no
        privacy; the answer then lies in W whenever W is that box.  ``False``
        releases the unprojected average plus noise.  Integer weights are not
        rounded: OPSamp's answer is an average plus noise, not a grid point.
    return_noise : bool
        Put the noise in ``result.noise``, an (m+1, d) array: rows 0..m-1 are
        sigma_1..sigma_m, the last row is mu, the output step's integer noise
        times the grid step (warns: releasing it voids privacy).
    public_constraints : str or list of str, optional
        The model's constraints on the decision alone (and weights whose
        bounds are mutable Params) that are fixed before the data is seen, by
        component name.  OPSamp keeps them in the model, so they shape the set
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
        ``weights``; ``parameters`` (an :class:`OPSampReleaseParameters`, read as
        fields or keys) with ``n_oracle_calls``, ``gamma``,
        ``eta``, ``lambda``, ``laplace_scale``, ``stability_bound`` (A),
        ``t_hoeffding``, ``t_bernstein``, ``l1_diameter``, ``alpha_per_record``
        (privopt's utility bound on L/n, formerly ``alpha``, see
        :func:`~privopt.calibration.opsamp_parameters`), ``alpha_source``,
        ``alpha_theorem7_rate``, the terms of alpha
        ``alpha_oracle``, ``alpha_perturbation``, ``alpha_laplace``, ``beta``,
        ``oracle_error``, ``lipschitz_l1`` (G; also under its old key
        ``lipschitz``), ``linf_diameter``, ``l2_diameter``,
        ``n_samples``, ``dim``, ``paper_n_oracle_calls``, ``gamma_source``,
        ``diameter_source``, ``noise_distribution``, ``grid_step``, ``output_noise``,
        ``projected``, ``output``, ``laplace_scale_over_width``, ``abs_gap``, ``solver``,
        ``record_terms`` (as in :func:`privopt.opdisc`; read at every oracle answer);
        ``certified`` False when some call was not certified (``on_failure="return"``: how
        many, and which, depends on the data and is not in ``parameters`` or the warning);
        ``report``: the tuple of the m SolveReports, in call order, only with
        ``keep_report=True`` (else None; not private).
    """
    solve, keywords = parse_keywords("opsamp", options, kwargs, _Keywords, OPSAMP_OPTIONS)
    lipschitz_l1 = renamed_argument("opsamp", "lipschitz_l1", keywords.lipschitz_l1, "lipschitz",
                                    keywords.lipschitz,
                                    why="the l1-Lipschitz constant; lipschitz is the l2 constant in opdisc")
    lipschitz_name = "lipschitz" if keywords.lipschitz is not None else "lipschitz_l1"   # errors name what was passed
    run = _check(model, weights, epsilon=epsilon, delta=delta, random_state=random_state, solve=solve,
                 keywords=keywords)
    plan = _plan(run, keywords, lipschitz_l1, lipschitz_name)
    # all the noise, from the one generator, in this process: sigma_1..sigma_m, then mu
    sigmas, mu = draw_opsamp_noise(run.rng, plan.params.eta, plan.params.output_grid,
                                   plan.params.n_oracle_calls, run.d)
    answers = _run_calls(run, sigmas)
    # each record's term at every answer, against loss_range: refused (charged) when broken, never released as is
    check_record_terms(run.model, run.w_vars, run.contract, [a.values for a in answers],
                       TermBound(run.loss_range), "OPSamp", run.solve)
    return _release(run, plan, answers, sigmas, mu)


# --- 1. check: every argument and the model, before any noise or solve -------------

def _check(model, weights, *, epsilon, delta, random_state, solve: SolveOptions, keywords: _Keywords) -> _Run:
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    beta = check_probability(keywords.beta, "beta")
    oracle_error = check_real(keywords.oracle_error, "oracle_error")
    if oracle_error < 0:
        raise ParameterError(f"oracle_error must be >= 0, got {oracle_error!r}.", "oracle_error")
    project = check_bool(keywords.project, "project")
    persistent = check_bool(keywords.persistent, "persistent")
    solve = check_run(model, solve, keywords.return_noise)
    solve = solve.replace(executor=check_executor(solve.executor),
                          progress=True if solve.progress is None else solve.progress)
    rng = check_random_state(random_state)
    n_oracle_calls = keywords.n_oracle_calls
    if n_oracle_calls is not None:
        if isinstance(n_oracle_calls, bool):  # check_int would read True as 1
            raise ParameterTypeError("n_oracle_calls must be an integer or None, got bool.", "n_oracle_calls")
        n_oracle_calls = check_int(n_oracle_calls, "n_oracle_calls", minimum=1)

    info = get_info(model)
    w_vars = weights_of(model, weights, default_name=info.weights if info else "w")
    if n_oracle_calls is not None:   # the m noise vectors and answers, refused from public sizes first
        check_memory(n_oracle_calls * _bytes_per_call(len(w_vars)), "n_oracle_calls",
                     f"OPSamp's {n_oracle_calls:,} oracle calls (a noise vector sigma_k, an answer and a "
                     f"solve report each, for d = {len(w_vars)})",
                     "Use fewer n_oracle_calls (None: the paper's m; the deviation term of lambda shrinks only "
                     "like 1/sqrt(m)).")
    n_samples = check_n_samples(keywords.n_samples, info)
    loss_range = keywords.loss_range if keywords.loss_range is not None else (
        info.loss_range if info is not None else None)
    if loss_range is not None:
        lo, hi = check_loss_range(loss_range)
        loss_range = (lo, hi)
        if hi - lo > 1.0 + 1e-12:
            raise ModelError(
                f"model: its per-example losses range over [{lo:g}, {hi:g}]; OPSamp needs values in an "
                "interval of width 1 (e.g. [0, 1]): divide the loss by a public bound.", "loss_range")
    # the decision's bounds are W's box (its diameters, the projection): public only when declared
    contract = check_model_contract(model, w_vars, solve.public_constraints, info, "OPSamp", n_samples=n_samples,
                                    asked=Asked(declare=None, bounds_give_w=True, continuous=True))
    n_samples = contract.n_records
    return _Run(model=model, w_vars=w_vars, info=info, epsilon=epsilon, delta=delta, beta=beta,
                oracle_error=oracle_error, n_oracle_calls=n_oracle_calls, n_samples=n_samples, solve=solve, rng=rng,
                project=project, persistent=persistent, return_noise=bool(keywords.return_noise),
                contract=contract, loss_range=loss_range)


def _bytes_per_call(d: int) -> int:
    """Memory one oracle call keeps until the release: its sigma_k (in the
    array of all m and in its chunk), its answer and its SolveReport
    (measured about 550 bytes kept and 770 at the peak per call with d = 2;
    1 KiB + 48 d bytes is the prediction)."""
    return 1024 + 48 * int(d)


# --- 2. plan: the public constants, m, eta and lambda --------------------------------

def _lipschitz(lipschitz, info, name="lipschitz_l1") -> float:
    """G: the caller's, else the model's l1 constant, else its l2 constant
    (also an l1 constant, since ||.||_2 <= ||.||_1)."""
    if lipschitz is None and info is not None:
        lipschitz = info.lipschitz_l1 if info.lipschitz_l1 is not None else info.lipschitz
    if lipschitz is None:
        raise ParameterError(
            f"{name}: give G, the l1-Lipschitz constant of each per-example loss on W.", name)
    return check_positive(lipschitz, name)


def _diameters(w_vars, info, given: dict):
    """(values, sources) of D_inf, D_2, D_1: the caller's, else the model
    info's, else the box of the declared bounds (D_1 may stay None: then
    :func:`~privopt.calibration.opsamp_parameters` takes min(d D_inf, sqrt(d) D_2))."""
    box = _box_diameters(w_vars)
    values, sources = [], []
    for i, (name, value) in enumerate(given.items()):
        source = "argument"
        if value is None and info is not None and getattr(info, name, None) is not None:
            value, source = getattr(info, name), "model info"
        if value is None and box is not None:
            value, source = box[i], "variable bounds"
        if value is None and name == "l1_diameter":
            source = "min(d D_inf, sqrt(d) D_2)"  # opsamp_parameters' default
        elif value is None:
            raise ParameterError(
                f"{name}: give it (the diameter of W), or give every weight finite bounds so "
                "that privopt can use the box of the declared bounds.", name)
        else:
            value = check_positive(value, name)
        values.append(value)
        sources.append(source)
    return tuple(values), tuple(sources)


def _plan(run: _Run, keywords: _Keywords, lipschitz, lipschitz_name="lipschitz_l1") -> _Plan:
    lipschitz = _lipschitz(lipschitz, run.info, lipschitz_name)
    (linf_diameter, l2_diameter, l1_diameter), sources = _diameters(
        run.w_vars, run.info, {"linf_diameter": keywords.linf_diameter, "l2_diameter": keywords.l2_diameter,
                               "l1_diameter": keywords.l1_diameter})
    n_samples = run.n_samples
    if n_samples is None:
        raise ParameterError("n_samples: give n, the number of records the loss sums over.", "n_samples")
    warn_if_delta_weak(run.delta, n_samples)
    # the oracle is certified within abs_gap on the sum, i.e. abs_gap / n per record
    effective_error = max(run.oracle_error, run.solve.abs_gap / n_samples)
    params = opsamp_parameters(run.epsilon, run.delta, lipschitz, linf_diameter, l2_diameter, n_samples, run.d,
                               n_oracle_calls=run.n_oracle_calls, beta=run.beta, oracle_error=effective_error,
                               l1_diameter=l1_diameter)
    return _Plan(params=params, sources=sources, n_samples=n_samples)


# --- 3. run: the m oracle calls on the executor ---------------------------------------

def _run_calls(run: _Run, sigmas: np.ndarray) -> list[OracleAnswer]:
    """The answers of the m calls, in call order.  Under ``on_failure="raise"``
    the first uncertified call cancels the calls not started and raises
    NotCertifiedError (nothing is released)."""
    m = len(sigmas)
    payload = dumps_model(run.model)
    weight_names = tuple(pyo.ComponentUID(v) for v in run.w_vars)
    solve = run.solve
    how = OracleSolve.of(solve)   # what each worker needs of the options: frozen, picklable
    owned = solve.executor is None or solve.executor == RAY
    key = uuid.uuid4().hex   # names this run's model in the workers
    pool: Executor
    if solve.executor == RAY:   # a Ray pool for this run; the model goes to each worker once
        pool = ray_executor(m, initializer=install_payload, initargs=(key, payload))
    elif owned:   # the model goes to each worker once, with the pool's initializer
        pool = default_executor(m, initializer=install_payload, initargs=(key, payload))
    else:   # an Executor: check_executor wrapped anything else
        pool = cast(Executor, solve.executor)
    try:
        shared = None if owned else share(pool, payload)
        # several calls per task, so that the executor's round trip does not
        # dominate a warm re-solve: at least 4 tasks per worker, at most 64 calls each
        size = max(1, min(64, m // (4 * worker_count(pool))))
        chunks = [sigmas[k:k + size].copy() for k in range(0, m, size)]
        stop = solve.on_failure == "raise"
        calls = [(shared, weight_names, chunk, how, key, run.persistent, stop)
                 for chunk in chunks]
        results, fatal_chunk = run_ordered(
            pool, oracle_chunk, calls, progress=solve.progress, desc="OPSamp oracle calls",
            is_fatal=(lambda batch: any(not a.certified for a in batch)) if stop else None,
            max_in_flight=max(8, 4 * worker_count(pool)), weights=[len(c) for c in chunks])
    finally:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)

    if fatal_chunk is not None:
        batch = results[fatal_chunk]
        bad = next(a for a in batch if not a.certified)
        raise NotCertifiedError(
            f"{bad.report.solver} did not certify the optimum of an OPSamp oracle call "
            f"({bad.report.termination.name}); the privacy guarantee needs every call's argmin, so nothing is "
            "released. Raise time_limit, try another solver, or see on_failure.", bad.report)
    answers = [a for batch in results for a in batch]
    for a in answers:    # which call failed depends on the data: not said
        if a.values is None:  # pragma: no cover - solve() raises when there is no solution
            raise SolverError("An OPSamp oracle call returned no solution; nothing is released.", a.report)
    return answers


# --- 4. release: average plus Laplace noise, projected onto the public box -----------

@dataclass(frozen=True, eq=False)
class OPSampReleaseParameters(FrozenRecord):
    """The ``parameters`` of :func:`opsamp` (documented there): typed fields, also readable
    as a mapping.  The fields of the calibration's
    :class:`~privopt.calibration.OPSampParameters` (but epsilon and delta, which the result
    holds, and ``alpha``, here ``alpha_per_record``; ``lambda_`` reads as the key
    ``"lambda"``; the output grid as ``grid_step`` and ``output_noise``), then what the run
    adds.  The old key ``"alpha"`` still reads ``alpha_per_record``, with a
    DeprecationWarning; ``"lipschitz"`` and ``"lipschitz_l1"`` are both G."""

    _renamed: ClassVar[dict[str, tuple[str, str]]] = {"alpha": ("alpha_per_record", OPSAMP_ALPHA_RENAMED)}
    _field_keys: ClassVar[dict[str, str]] = {"lambda_": "lambda"}

    n_oracle_calls: int
    gamma: float
    eta: float
    lambda_: float
    laplace_scale: float
    stability_bound: float
    t_hoeffding: float
    t_bernstein: float
    l1_diameter: float
    alpha_source: str
    alpha_theorem7_rate: float
    alpha_oracle: float
    alpha_perturbation: float
    alpha_laplace: float
    paper_n_oracle_calls: float
    gamma_source: str
    lipschitz: float
    linf_diameter: float
    l2_diameter: float
    n_samples: int
    dim: int
    beta: float
    oracle_error: float
    grid_step: float
    output_noise: str
    alpha_per_record: float
    diameter_source: Any
    noise_distribution: str
    projected: bool
    output: str
    laplace_scale_over_width: float
    lipschitz_l1: float
    abs_gap: float
    solver: str | None
    record_terms: str | None


def _release(run: _Run, plan: _Plan, answers: list[OracleAnswer], sigmas: np.ndarray,
             mu: np.ndarray) -> PrivateResult:
    params, m, d = plan.params, len(answers), run.d
    certified = all(a.certified for a in answers)
    if not certified:    # how many calls, and which, depends on the data: neither is said
        warnings.warn(
            f"Some of the {m} OPSamp oracle calls were not certified optimal; the answer is returned WITHOUT a "
            "privacy guarantee.", UncertifiedReleaseWarning, stacklevel=user_stacklevel())

    w_bar = np.mean(np.array([a.values for a in answers], dtype=float), axis=0)
    output = release_on_grid(w_bar, params.output_grid, mu)
    lower = np.array([-np.inf if v.lb is None else float(v.lb) for v in run.w_vars])
    upper = np.array([np.inf if v.ub is None else float(v.ub) for v in run.w_vars])
    projected = bool(run.project and np.any(np.isfinite(lower) | np.isfinite(upper)))
    if projected:
        output = np.clip(output, lower, upper)   # post-processing onto the public box
    if params.laplace_scale > params.linf_diameter:
        warnings.warn(
            f"OPSamp's Laplace scale lambda/epsilon = {params.laplace_scale:.4g} exceeds the width of W "
            f"(D_inf = {params.linf_diameter:.4g}): the answer is mostly noise. More records, a larger "
            "epsilon or more oracle calls (n_oracle_calls) reduce it.", NoiseDominatesWarning,
            stacklevel=user_stacklevel())

    fields = params.as_dict()
    for name in ("epsilon", "delta"):
        fields.pop(name)
    fields["lambda_"] = fields.pop("lambda")
    fields["alpha_per_record"] = fields.pop("alpha")     # a bound on L/n: one meaning per name
    parameters = OPSampReleaseParameters(
        **fields,
        diameter_source=FrozenDict(zip(("linf_diameter", "l2_diameter", "l1_diameter"), plan.sources)),
        noise_distribution=(f"sigma_k ~ Exp(rate eta)^{d} (k = 1..{m}), mu: "
                            f"{params.output_grid.describe()}, ^{d}"),
        projected=projected,
        output=("average of the oracle answers rounded to the grid "
                f"2^{params.output_grid.exponent} plus exact discrete Laplace noise"
                + (", clipped to the box of the declared bounds" if projected else "")),
        laplace_scale_over_width=params.laplace_scale / params.linf_diameter,
        lipschitz_l1=params.lipschitz,   # G, l1; also under the old key "lipschitz"
        abs_gap=run.solve.abs_gap,
        solver=run.solve.solver,
        record_terms=record_terms_kind(run.info, run.contract, TermBound(run.loss_range)),
    )
    if run.return_noise:
        warn_noise_disclosed("the noise (sigma_1..sigma_m, mu)")
    return PrivateResult(
        labels=weight_labels(run.w_vars),
        weights=output,
        mechanism="opsamp",
        epsilon=run.epsilon,
        delta=run.delta,
        parameters=parameters,
        report=tuple(a.report for a in answers),
        certified=certified,
        noise=(np.vstack([sigmas, mu.astype(float)[None, :] * params.output_grid.step])
               if run.return_noise else None),
    )
