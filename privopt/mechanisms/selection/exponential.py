r"""Private selection over a finite W: the exponential mechanism [MT07] and
permute-and-flip [MS20], sampled exactly by report-noisy-max."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo

from ..._random import check_random_state
from ..._validation import check_choice, check_epsilon, check_int, check_positive, check_probability
from ...calibration import check_loss_range, check_selection_method, selection_noise_scale, selection_utility_bound
from ...exceptions import ModelError, ParameterError
from ...models import ENUMERATION_ATTR, Asked, check_model_contract, check_public_term, get_info
from ...perturbation import is_transformed, resolve_grids, weights_of
from ...ledger import charges
from ...result import PrivateResult, curator_reports, weight_labels
from ...solvers import BLOCKS_ENGINE, SolveOptions, check_unchanged, keyword_signature, parse_keywords
from ...search import halfspace_problem
from .._checks import (check_model_objective, check_n_samples, check_named_solver, check_solver_ready,
                      decision_bounds, warn_if_mean_objective)
from ._evaluate import slow_solver_note
from ._plan import SelectionPlan, bounded_lower_bound, check_time_limit, plan_halfspace, plan_user_model
from ._release import SelectionParameters, SelectionReport, noise_distribution
from ._samplers import BoundedSampler, Draw, ScoredSampler, selection_keys

__all__ = ["exponential_mechanism", "SelectionReport", "selection_keys", "topdown_problem", "SELECTION_PATHS",
           "SELECTION_OPTIONS", "SelectionTask", "bounded_lower_bound"]

#: The values of ``exponential_mechanism(path=...)``: ``"auto"`` (score every point of W
#: while |W| <= max_points, else the bounded sampler), ``"score"`` (every point scored, or
#: a refusal above max_points), ``"bounded"`` (the bounded sampler whatever |W|).
SELECTION_PATHS = ("auto", "score", "bounded")

#: The fields of :class:`~privopt.solvers.SolveOptions` exponential_mechanism takes as keywords.
SELECTION_OPTIONS = ("solver", "time_limit", "threads", "solver_options", "abs_gap", "progress", "executor",
                     "public_constraints", "keep_report")


@dataclass(frozen=True)
class _Keywords:
    """exponential_mechanism's own keywords (each documented there); how the model is
    solved is the :class:`~privopt.solvers.SolveOptions` beside it."""

    loss_range: Any = None
    n_samples: int | None = None
    method: str = "exponential"
    norm_bound: float | None = None
    grid: Any = None
    beta: float = 0.05
    max_points: int | None = None
    public_term: Any = None
    sense: str = "minimize"
    path: str = "auto"
    sensitivity: float | None = None


@dataclass(frozen=True)
class SelectionTask:
    """One call of :func:`exponential_mechanism`, checked (before the data's values are
    read): the model and its decision ``w_vars``, the privacy and utility parameters, the
    declared public constraints and term, and ``solver`` (``"enumerate"``: privopt's
    0/1-loss model on its own W, ``halfspace`` its data; else the ready solver's name)."""

    model: Any
    w_vars: list
    info: Any
    epsilon: float
    method: str
    beta: float
    sensitivity: float
    loss_range: tuple
    n_samples: int | None
    own: _Keywords
    options: SolveOptions
    term: Any
    public_cons: list
    solver: str
    halfspace: Any = None
    contract: Any = None

    @property
    def norm_bound(self) -> float | None:
        """D of the ball intersected with W (the keyword as given)."""
        return self.own.norm_bound

    @property
    def grid(self) -> Any:
        """The weights' values (the keyword as given)."""
        return self.own.grid

    @property
    def max_points(self) -> int | None:
        """The largest |W| scored point by point (the keyword as given)."""
        return self.own.max_points

    @property
    def public_term(self) -> Any:
        """The declared public summand of the objective (the keyword as given)."""
        return self.own.public_term

    @property
    def sense(self) -> str:
        """``"minimize"`` or ``"maximize"`` (the keyword as given)."""
        return self.own.sense

    @property
    def path(self) -> str:
        """How a user's model is sampled (the keyword as given)."""
        return self.own.path

    @property
    def n_public(self) -> int:
        """n for the time predictions (privopt's models always declare it)."""
        return int(self.n_samples) if self.n_samples is not None else 1

    @property
    def records_are_users(self) -> bool:
        """Whether the records' terms are the user's to check (clip into loss_range where they
        can be seen): not for a model whose ModelInfo declares its per-record rows (privopt's
        builders, whose rows merge identical records with a weight)."""
        return self.info is None or not self.info.record_constraints


def _public(model, weights=None, *, epsilon, random_state=None, options=None, **kwargs) -> None:
    """Private selection's checks of its scalar arguments, reading nothing of the
    model: run before a ledger reserves the call (:func:`privopt.ledger.charges`), and
    again by :func:`exponential_mechanism` itself."""
    opts, own = parse_keywords("exponential_mechanism", options, kwargs, _Keywords, SELECTION_OPTIONS)
    check_epsilon(epsilon)
    _check_own(own)
    if own.loss_range is not None:
        check_loss_range(own.loss_range)
    check_named_solver(opts, "auto", skip=("auto", "enumerate"))


@charges("exponential_mechanism", pure=True, check=_public)
@curator_reports
@keyword_signature(_Keywords, SELECTION_OPTIONS, {"solver": "auto"})
def exponential_mechanism(model, weights=None, *, epsilon: float, random_state=None,
                          options: SolveOptions | None = None, **kwargs) -> PrivateResult:
    r"""Release a point of a finite, public W by private selection: pure
    epsilon-DP, no delta.

    The loss L(D, w) = sum_{i=1}^n l_i(w) (the model's one active objective,
    minimized) is a sum of n per-record terms, each in ``loss_range`` = [a, b].
    Under replace-one neighbours L moves by at most Delta = b - a at every w,
    and privopt releases

    * ``method="exponential"`` [MT07]: w with probability proportional to
      exp(-epsilon L(D, w) / (2 Delta)), sampled exactly as
      argmax_w -L(D, w) + (2 Delta/epsilon) G_w with iid standard Gumbel G_w;
    * ``method="permute_and_flip"`` [MS20]: permute-and-flip, sampled as
      argmax_w -L(D, w) + (2 Delta/epsilon) E_w with iid Exponential(1) E_w
      [DKSSWXZ21]; never worse in expected loss than the exponential
      mechanism at the same epsilon.

    Both are epsilon-DP for any W fixed before the data.  With probability at
    least 1 - beta the released point's loss exceeds min_W L by at most
    alpha = (2 Delta / epsilon)(ln |W| + ln(1/beta)) (``parameters["alpha"]``;
    :func:`privopt.calibration.selection_utility_bound`).

    How it is sampled.  For privopt's 0/1-loss halfspace models (one integer
    grid with 0 for every weight, the exact rule) W is split by support and
    report-noisy-max is drawn top down [MTM14]: each support's largest noise
    value first, then, only where it could still win against the best key
    found, the noise of its points.  A support whose best possible key (its
    largest noise minus a lower bound on its loss) is below the best key
    found is never scored.  The released point has exactly the law above, W
    is never listed point by point, so |W| has no limit, and the supports can
    be sharded on any ``executor`` with the same answer for the same seed
    (``parameters["path"] == "topdown"``).  Otherwise every point is scored
    and the noise is drawn block by block in a fixed order of W (memory stays
    bounded).

    W is every value the weights' domains and bounds allow (or ``grid``, or the
    model's declared grid), intersected with the ball ||w||_2 <= ``norm_bound``
    when given and with the model's constraints on the decision alone that
    are declared public (``public_constraints``; any other is refused, see
    below).  For the 0/1-loss models of
    :func:`privopt.models.zero_one_halfspace` W is the model's grid and ball
    and every point is scored by privopt's exact enumeration (the decision and
    tie rule of the model); for any other model L(w) is the optimum of the
    model with the weights fixed at w, solved by ``solver`` and certified (with
    HiGHS, a model whose rows show that it falls apart into choose-one blocks
    once w is fixed is evaluated exactly by their closed form instead, no solve:
    :class:`privopt.solvers.ChooseOneBlocks`, ``report.engine``).

    Refusals.  Every check runs before the data's values are read: the
    model's contract (:func:`privopt.models.check_model_contract`: n missing,
    a number of the records' blocks other than n, a constraint on the decision
    alone, a weight bound given by a mutable Param, or a term on the decision
    alone not declared public), a missing
    loss_range, continuous or unbounded weights, an empty W, a maximized
    objective without ``sense="maximize"``, |W| above ``max_points``, a running time
    predicted from public sizes above ``time_limit`` (enumeration: |W|, n and d;
    fix-and-solve: |W| and the model's rows and columns; the bounded path: a
    lower bound on its work, see ``path``), or an ``executor`` with a model that
    cannot be pickled.  These depend on public
    quantities only.  Two refusals can depend on the data, and so are
    themselves observable: a solve that is not certified optimal, and a
    ``time_limit`` that runs out during scoring or sampling (the scoring
    prediction is conservative so that this is rare; the bounded path's is a
    lower bound, so there it is not).  Either raises
    :class:`~privopt.exceptions.NotCertifiedError` and releases nothing.

    Parameters
    ----------
    model : pyomo ConcreteModel
        Its one active objective, minimized, is L(D, w).  Never modified.
    weights : IndexedVar, list of Var, str, optional
        The decision vector; default: the model's ``ModelInfo`` or ``model.w``.
    epsilon : float
        Privacy budget (> 0).
    random_state : None, int or numpy Generator
        ``None`` (default): the operating system's secure source.  A seed makes
        the run reproducible and is **not private** when the seed is known.
    options : privopt.SolveOptions, optional
        How the model is solved, as one record (its ``solver``, ``time_limit``,
        ``threads``, ``solver_options``, ``abs_gap``, ``progress``, ``executor``,
        ``public_constraints`` and ``keep_report`` are this function's keywords;
        a keyword given beside it overrides its field).  Any other keyword is a
        TypeError naming it.

    Other Parameters
    ----------------
    loss_range : float or (a, b), optional
        Range of each per-record loss term (a width c means (0, c)).  Default:
        the model's info (privopt's 0/1-loss models: (0, 1)).  Required for
        a user's model.  Its width is the sensitivity Delta, not a Lipschitz
        constant.
    n_samples : int
        n; default: the model's info; required (the model's contract checks
        that its records' side falls into exactly n blocks with the decision
        fixed, :func:`privopt.models.check_model_contract`).  Used for alpha / n
        in the parameters and to check that every L(w) lies in [n a, n b] (a
        loss outside means the model breaks its declared contract and nothing
        is released).
        With n known, a user's objective written as a mean (``sum(...) / n``)
        draws a :class:`~privopt.exceptions.LossContractWarning`, from the
        expression's structure alone, before any solve.
    method : {"exponential", "permute_and_flip"}
    solver : str
        ``"auto"``: enumeration for privopt's 0/1-loss models, HiGHS otherwise.
        ``"enumerate"`` forces the enumeration; any other name is the solver of
        the fix-and-solve path.
    norm_bound : float, optional
        D of the ball ||w||_2 <= D intersected with W.
    grid : sequence, optional
        Values of the weights (one sequence, or one per coordinate).
    beta : float
        Failure probability of the utility bound alpha.
    time_limit : float, optional
        Seconds for the whole release.  Refused up front when the time
        predicted from public sizes is longer (see Refusals).  While scoring
        (fix-and-solve) or sampling (``path="bounded"``), every solve gets the
        time left as its solver's own limit (HiGHS ``time_limit``, GLPK
        ``tmlim`` in whole seconds, CBC ``sec``), a solve stopped by it is
        never used, and the deadline passing, between solves or inside one,
        raises :class:`~privopt.exceptions.NotCertifiedError` naming
        time_limit with nothing released.  On the bounded path the clock
        starts before the model is read into the solver.
    threads : int, optional
        Threads of the solver of the fix-and-solve and bounded paths.
    solver_options : dict, optional
        Solver-specific options of that solver.
    abs_gap : float
        The absolute gap within which a solve counts as certified optimal.
    max_points : int, optional
        The largest |W| accepted where every point is scored (default
        50,000,000 for the enumeration, 10,000 for fix-and-solve, where each
        point is one solve); the top-down path has no limit on |W|.
    progress : bool, optional
        Show a progress bar; default: when scoring is predicted to take more
        than a few seconds (or W has more than 200 points to solve).
    executor : None, "local", Executor, dask Client or "ray"
        Where the work runs.  The top-down path (privopt's 0/1-loss models):
        its shards of supports; None runs in this process when the predicted
        time is a few seconds, else on a local process pool.  Fix-and-solve
        scoring of a user's model (``path="score"``): None or ``"local"``
        scores in this process; any other executor (a thread or process pool,
        a dask Client, ``"ray"``) gets W's points in one contiguous shard per
        worker, each worker loading its own copy of the model (pickled once,
        before any solve: a model that cannot be pickled is refused, naming
        executor) and reading it into its own solver; the losses come back in
        W's order and the noise is drawn here, as without an executor.  The
        released point does not depend on it for the same seed (each shard's
        warm starts begin afresh, so a loss can differ in its last digits,
        which changes the release only on a tie of keys at that level).  The
        bounded path runs in this process.
    public_constraints : str or list of str, optional
        The model's constraints on the decision alone (and weights whose
        bounds are mutable Params) that are fixed before the data is seen, by
        component name (a name covers every index).  Only these may shape W;
        any other such constraint makes the call refuse before any work,
        naming it (:func:`privopt.models._contract.check_public_constraints`):
        if its coefficients came from the records, one record would change W.
        privopt's own models declare theirs.  ``"all"`` declares nothing: a model
        with a component it would have covered is refused, naming each.
    public_term : str or named Expression, optional
        A summand of the objective that depends on the decision alone and is
        fixed before the data (a public fixed cost C(w)): L(w) = sum_i l_i(w)
        + C(w).  It cannot change between neighbours, so it adds nothing to
        the sensitivity, and the range check applies to L(w) - C(w).
    sensitivity : float, optional
        Delta, declared: the most one replaced record moves L(D, w) at any w of W,
        when the records' terms are coupled by a row of the model (a capacity shared
        by the customers).  Default: the width b - a of ``loss_range``.  A model whose
        records' side, with the decision fixed, falls into fewer than n independent
        blocks is refused, naming the rows that join several records, unless this is
        given (with an argument that it holds: privopt cannot check it); it must be at
        least b - a, and the noise is calibrated to it.
    path : {"auto", "score", "bounded"}
        How a user's model is sampled (privopt's 0/1-loss models keep their
        exact engines unless ``"bounded"`` is asked).  ``"score"``: every
        point of W is scored by fix-and-solve (refused above ``max_points``).
        ``"bounded"``: report-noisy-max drawn exactly by A* sampling [MTM14]
        over regions that fix a prefix of the decision's coordinates (in
        index order) to values of their grids; each region's size is counted
        exactly through the declared linear constraints on the decision, its
        loss bounded from below by the model's LP relaxation (every integer
        variable relaxed) with the prefix fixed, solved by ``solver`` (HiGHS
        for ``"auto"``; GLPK, CBC, ... through Pyomo) and certified optimal,
        and only the points that may still win are solved exactly.  The same
        law as scoring every point, pure epsilon-DP with the same epsilon;
        the bounds only decide the work, and an uncertified solve releases
        nothing.  ``"auto"`` (default): ``"score"`` while |W| (counted
        from public quantities) is at most ``max_points`` (default 10,000),
        ``"bounded"`` above.  ``time_limit`` bounds every solve (see
        time_limit); the run's work cannot be predicted without the data (it
        depends on how tight the bounds are), so ``report.predicted_time``
        is a lower bound from public quantities: at least one region solve per
        ancestor of the released point that holds several points (the fewest
        over W, at most one per coordinate of the decision, counted from the
        grids and the declared constraints) and one exact solve, each timed
        from the model's rows and columns; a ``time_limit`` below it is
        refused before the model is read.
    sense : {"minimize", "maximize"}
        ``"minimize"`` (default): the objective is a loss, minimized; a
        maximized objective is refused.  ``"maximize"`` (a user's model
        only): the objective is a utility U(D, w) = sum_i u_i(w), maximized
        over the other variables with w fixed, each u_i in ``loss_range``;
        privopt selects with the loss L = -U (the same sensitivity b - a,
        the range check on U as written).  The objective must then be
        maximized: privopt never flips a sense on its own.
    keep_report : bool, default False
        Return the report (below) and leave it on an exception raised after
        the data is read; otherwise both carry ``report=None``.  The report is
        the data curator's diagnostics: computed from the data, not covered
        by the guarantee; never hand it to an analyst.  Refused under a
        :class:`~privopt.PrivacyLedger` (an analyst's budget).

    Returns
    -------
    PrivateResult
        ``mechanism`` is ``method``; ``delta`` is 0; ``parameters`` holds
        ``method``, ``sensitivity`` (Delta), ``loss_range``, ``noise_scale``
        (2 Delta / epsilon), ``n_points`` (|W|), ``alpha``, ``alpha_per_record``
        (alpha / n), ``beta``, ``n_samples``, ``dim``, ``norm_bound``,
        ``path``, ``sense`` (the scored paths), ``record_terms`` (a user's model
        scored by fix-and-solve: ``"clipped"`` when each record's term was seen, with the
        decision fixed, as one block of the model (n blocks holding the objective's
        variables: by the closed form of the blocks, or from each HiGHS solve's solution)
        and clipped into ``loss_range``, so that the release used the clipped loss;
        ``"assumed"`` where the terms cannot be told apart or seen (another number of
        blocks, a solver through Pyomo, an executor), read from the model's structure
        only); ``report`` is a
        :class:`SelectionReport` (not private): which path ran and why, only
        with ``keep_report=True`` (else None).

    References
    ----------
    [MT07] McSherry, Talwar. Mechanism design via differential privacy. FOCS 2007.
    [MS20] McKenna, Sheldon. Permute-and-flip: a new mechanism for
    differentially private selection. NeurIPS 2020.
    [DKSSWXZ21] Ding, Kifer, Saghaian, Steinke, Wang, Xiao, Zhang. The
    permute-and-flip mechanism is identical to report-noisy-max with
    exponential noise. arXiv:2105.07260.
    [MTM14] Maddison, Tarlow, Minka. A* sampling. NeurIPS 2014.
    """
    opts, own = parse_keywords("exponential_mechanism", options, kwargs, _Keywords, SELECTION_OPTIONS)
    task = _check_call(model, weights, epsilon, opts, own)     # every refusal before the data's values are read
    plan = _plan(task)
    check_time_limit(plan.seconds, opts.time_limit, plan.work, plan.remedy)
    draw = plan.sampler.sample(check_random_state(random_state), task.method,
                               selection_noise_scale(task.epsilon, task.sensitivity),
                               progress=plan.progress if opts.progress is None else opts.progress)
    return _release(task, plan, draw)


def _check_own(own: _Keywords) -> _Keywords:
    """The own keywords, each checked (naming it)."""
    return _Keywords(
        loss_range=own.loss_range, n_samples=own.n_samples, method=check_selection_method(own.method),
        norm_bound=None if own.norm_bound is None else check_positive(own.norm_bound, "norm_bound"),
        grid=own.grid, beta=check_probability(own.beta, "beta"),
        max_points=check_int(own.max_points, "max_points", minimum=1, allow_none=True), public_term=own.public_term,
        sense=_check_sense(own.sense), path=check_choice(own.path, "path", SELECTION_PATHS),
        sensitivity=own.sensitivity)


def _check_objective(model, sense: str) -> None:
    """The model's one active objective, in the declared ``sense``; not objective-perturbed."""
    objective = check_model_objective(model, minimize=False)
    if sense == "minimize" and objective.sense != pyo.minimize:
        raise ModelError(
            "model: the objective is maximized, and private selection minimizes a loss. If it is a utility "
            "(a sum of n per-record terms in loss_range), pass sense='maximize': privopt then selects with "
            "the loss -U, and the sense is never flipped without your word. Otherwise negate the expression "
            "and declare sense=pyomo.minimize.", "model")
    if sense == "maximize" and objective.sense != pyo.maximize:
        raise ModelError(
            "sense: 'maximize' was given but the model's objective is minimized; pass sense='minimize' "
            "(the default) for a loss, or declare the utility's objective with sense=pyomo.maximize.",
            "sense")
    if is_transformed(model):
        raise ModelError("model: it is already objective-perturbed; pass the original loss model.", "model")


def _check_call(model, weights, epsilon, opts: SolveOptions, own: _Keywords) -> SelectionTask:
    """Every check of a call, before the data's values are read: the arguments, the
    objective, the loss contract, the decision and its declared public constraints, and
    which engine scores it (:func:`_check_solver`)."""
    epsilon = check_epsilon(epsilon)
    own = _check_own(own)
    _check_objective(model, own.sense)
    info = get_info(model)
    loss_range = own.loss_range
    if loss_range is None and info is not None and info.loss_range is not None:
        loss_range = info.loss_range
    lo, hi = check_loss_range(loss_range)
    sensitivity = _check_sensitivity(own.sensitivity, hi - lo)
    n_samples = check_n_samples(own.n_samples, info)
    w_vars = weights_of(model, weights, default_name=info.weights if info else "w")
    # the decision constraints: every one declared public, or a refusal, before any work
    term = check_public_term(model, own.public_term, w_vars)
    asked = Asked(public_term=term, coupled_declared=own.sensitivity is not None, **decision_bounds(own.grid, info))
    contract = check_model_contract(model, w_vars, opts.public_constraints, info, "Private selection",
                                    n_samples=n_samples, asked=asked)
    solver, halfspace = _check_solver(model, w_vars, opts.solver_or("auto"), own)
    return SelectionTask(model, w_vars, info, epsilon, own.method, own.beta, sensitivity, (lo, hi),
                         contract.n_records, own, opts, term, list(contract.public_constraints), solver, halfspace,
                         contract)


def _check_solver(model, w_vars, solver: str, own: _Keywords):
    """``(solver, halfspace)``: ``("enumerate", data)`` for privopt's 0/1-loss model on its
    own weights and grid (its exact engines), else the ready solver's name and None."""
    halfspace = getattr(model, ENUMERATION_ATTR, None)
    solver_key = solver.strip().lower()
    is_model_w = halfspace is not None and [v.name for v in w_vars] == [
        v.name for v in model.w.values()] and own.grid is None
    if own.path == "bounded" and solver_key == "enumerate":
        raise ParameterError("path='bounded' bounds regions of W with an LP solver; pass solver='auto' or a "
                             "solver name (HiGHS, GLPK, CBC, ...), not 'enumerate'.", "path")
    if solver_key == "enumerate" and not is_model_w:
        raise ParameterError(
            "solver='enumerate' scores the 0/1-loss models of privopt.models.zero_one_halfspace on "
            "their own weights and grid; use solver='auto' or a solver name for this model.", "solver")
    if solver_key in ("auto", "enumerate") and is_model_w and own.path != "bounded":
        check_unchanged(model, halfspace, None)     # privopt's 0/1-loss models are minimized (checked above)
        return "enumerate", halfspace
    return check_solver_ready("highs" if solver_key == "auto" else solver), None


def _plan(task: SelectionTask) -> SelectionPlan:
    """The plan of the call's W (from public quantities only): privopt's 0/1-loss model top
    down or by its exact enumeration, a user's model bounded or scored by fix-and-solve."""
    if task.halfspace is not None:
        return plan_halfspace(task.halfspace, topdown_problem(task.halfspace, task.norm_bound),
                              n_public=task.n_public, executor=task.options.executor, max_points=task.max_points,
                              model=task.model, norm_bound=task.norm_bound, desc=f"privopt {task.method}",
                              keys=selection_keys)
    # a user's model: the objective's structure (a mean?) against n, before any solve
    warn_if_mean_objective(task.model, task.n_samples, "Private selection")
    grids = resolve_grids(task.w_vars, task.grid, task.info.grid if task.info else None,
                          read_bounds=task.grid is None)     # with grid=, W is the grid: no bound is read
    return plan_user_model(task, grids, keys=selection_keys)


def _release(task: SelectionTask, plan: SelectionPlan, draw: Draw) -> PrivateResult:
    """The release step: the point drawn, with its typed parameters and report, built once."""
    assert draw.point is not None        # no floor: every sampler gives a point
    return PrivateResult(labels=weight_labels(task.w_vars), weights=draw.point, mechanism=task.method,
                         epsilon=task.epsilon, delta=0.0, parameters=_parameters(task, plan),
                         report=_report(task, plan, draw), certified=True)


def _parameters(task: SelectionTask, plan: SelectionPlan) -> SelectionParameters:
    """The ``parameters`` of a selection result (documented in :func:`exponential_mechanism`)."""
    w = plan.w
    alpha = selection_utility_bound(task.epsilon, task.sensitivity, w.n_points, task.beta)
    sampler = plan.sampler
    record_terms = None
    if (plan.path == "fix_and_solve" and isinstance(sampler, ScoredSampler)
            and sampler.evaluator.record_range is not None):
        record_terms = "clipped" if sampler.evaluator.records_seen else "assumed"
    return SelectionParameters(
        method=task.method, sensitivity=task.sensitivity, loss_range=task.loss_range,
        noise_scale=selection_noise_scale(task.epsilon, task.sensitivity), n_points=w.n_points, alpha=alpha,
        alpha_per_record=None if not task.n_samples else alpha / task.n_samples, beta=task.beta,
        n_samples=task.n_samples, dim=len(task.w_vars), norm_bound=w.norm_bound, path=plan.path,
        noise_distribution=noise_distribution(task.method), sense=None if plan.path == "topdown" else task.sense,
        record_terms=record_terms)


def _report(task: SelectionTask, plan: SelectionPlan, draw: Draw) -> SelectionReport:
    """The run's report (not private): which path, engine and listing ran, and why."""
    def report(**fields) -> SelectionReport:
        return SelectionReport(plan.path, task.solver, plan.w.n_points, draw.wall_time, plan.predicted_time, **fields)

    sampler = plan.sampler
    if isinstance(sampler, BoundedSampler) and sampler.oracle is not None:
        oracle = sampler.oracle
        return report(engine=oracle.engine, listing="prefixes", reason=plan.reason,
                      regions_solved=draw.regions_solved, regions_expanded=draw.regions_expanded,
                      points_scored=draw.points_scored, solves=oracle.regions_solved + oracle.points_scored)
    if plan.path == "fix_and_solve" and isinstance(sampler, ScoredSampler):
        return report(**_fix_and_solve_fields(sampler.evaluator, task.solver))
    if plan.path == "topdown":
        return report(engine="topdown", reason=plan.reason, regions_expanded=draw.regions_expanded,
                      points_scored=draw.points_scored, n_regions=plan.w.n_regions)
    return report(engine="enumerate", points_scored=plan.w.n_points, reason=plan.reason)


def _fix_and_solve_fields(evaluator, solver: str) -> dict:
    """The report's fields for a user's model scored by fix-and-solve, from its evaluator after the run."""
    reason = (f"a user's model: every point of W scored by fixing the decision and solving the rest "
              f"with {solver} (each solve certified){slow_solver_note(solver)}; {evaluator.listing_reason}")
    if evaluator.engine == BLOCKS_ENGINE:
        reason = (f"a user's model: with the decision fixed it falls apart into {evaluator.blocks_reason} "
                  "(verified from the model's rows read into HiGHS), so every point of W was scored "
                  f"exactly by their closed form, no solve; {evaluator.listing_reason}")
    if evaluator._executor is not None:
        reason += (f"; scored on the caller's executor, W cut into {evaluator.workers} worker shard(s), "
                   "each worker reading its own copy of the model, the noise drawn here in W's order")
    seen = evaluator.records_reason is not None
    return dict(reason=reason, listing=evaluator.listing, engine=evaluator.engine, solves=evaluator.solves,
                points_scored=evaluator.points_scored, record_terms=evaluator.records_reason if seen else None)


def _check_sensitivity(sensitivity, width: float) -> float:
    """Delta: the width b - a of ``loss_range``, or a declared ``sensitivity`` (for records
    coupled by a row), which may only be larger (it can widen the noise, never narrow it)."""
    if sensitivity is None:
        return width
    value = check_positive(sensitivity, "sensitivity")
    if value < width:
        raise ParameterError(
            f"sensitivity={value:g} is below the width {width:g} of loss_range: one replaced record moves "
            "its own term by up to that width, so L(w) moves at least as much. Declare at least the width, "
            "or leave sensitivity out.", "sensitivity")
    return value


def _check_sense(sense) -> str:
    """``sense`` as "minimize" or "maximize" (the objective's declared direction)."""
    if not isinstance(sense, str) or sense.strip().lower() not in ("minimize", "maximize"):
        raise ParameterError(f"sense must be 'minimize' (a loss, the default) or 'maximize' (a utility), got "
                             f"{sense!r}.", "sense")
    return sense.strip().lower()


def topdown_problem(data, norm_bound=None):
    """The support-split W of a zero_one_halfspace model's enumeration data
    (:class:`privopt.search._regions.HalfspaceProblem`) for the top-down
    path, or None where it does not apply."""
    D = data.norm_bound if norm_bound is None else min(float(norm_bound), data.norm_bound)
    problem = halfspace_problem(data, D)
    if problem is not None:
        problem.norm_bound = D
    return problem
