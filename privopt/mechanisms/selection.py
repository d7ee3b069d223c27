r"""Private selection over a finite W: the exponential mechanism [MT07] and
permute-and-flip [MS20], sampled exactly by report-noisy-max."""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo

from .._limits import LOCAL_SECONDS
from .._progress import progress_bar
from .._runtime import RAY, check_executor, is_local, usable_cpus, worker_count
from .._random import check_random_state
from .._validation import check_bool, check_choice, check_epsilon, check_int, check_positive, check_probability
from ..calibration import check_loss_range, check_selection_method, selection_noise_scale, selection_utility_bound
from ..exceptions import ModelError, NotCertifiedError, ParameterError, ParameterTypeError
from ..models import ENUMERATION_ATTR, check_public_constraints, check_public_term, get_info
from ..perturbation import is_transformed, resolve_grids, weights_of
from ..ledger import charges
from ..result import PrivateResult, weight_labels
from ..solvers import BLOCKS_ENGINE, DEFAULT_ABS_GAP, check_unchanged
from ._checks import check_model_objective, check_n_samples, check_solver_ready, warn_if_mean_objective
from ._noise import draw_selection_noise
from ._release import SelectionParameters, SelectionReport, noise_distribution
from ._bounded import PyomoBoundOracle, prefix_space
from ._evaluate import (DEFAULT_MAX_EVALUATIONS, FixAndSolveEvaluator, HalfspaceEvaluator, _weight_only,
                        fix_solve_seconds, model_size)
from ..search import KeyedStreams, enumeration_levels, halfspace_problem, sample_prefix, sample_top_down

__all__ = ["exponential_mechanism", "SelectionReport", "selection_keys", "topdown_problem", "SELECTION_PATHS"]

#: The values of ``exponential_mechanism(path=...)``: ``"auto"`` (score every point of W
#: while |W| <= max_points, else the bounded sampler), ``"score"`` (every point scored, or
#: a refusal above max_points), ``"bounded"`` (the bounded sampler whatever |W|).
SELECTION_PATHS = ("auto", "score", "bounded")

#: Scoring predicted to take longer than this shows a progress bar (seconds).
_PROGRESS_AFTER = 10.0


def selection_keys(losses, noise_scale, method, rng):
    """Report-noisy-max keys of one block, noise drawn in the block's order
    (:func:`privopt.mechanisms._noise.draw_selection_noise`): -L/s + G
    (Gumbel, the exponential mechanism) or -L/s + E (Exponential(1),
    permute-and-flip), s = 2 Delta / epsilon.  The released point is the
    argmax over all blocks (first on ties, which have probability zero)."""
    return draw_selection_noise(rng, method, losses.shape[0]) - losses / noise_scale


@charges("exponential_mechanism", pure=True)
def exponential_mechanism(
    model,
    weights=None,
    *,
    epsilon: float,
    loss_range=None,
    n_samples: int | None = None,
    method: str = "exponential",
    solver: str = "auto",
    norm_bound: float | None = None,
    grid=None,
    beta: float = 0.05,
    time_limit: float | None = None,
    threads: int | None = None,
    random_state=None,
    solver_options: dict | None = None,
    abs_gap: float = DEFAULT_ABS_GAP,
    max_points: int | None = None,
    progress: bool | None = None,
    executor=None,
    public_constraints=None,
    public_term=None,
    sense: str = "minimize",
    path: str = "auto",
    sensitivity: float | None = None,
) -> PrivateResult:
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

    Refusals.  Every check runs before the data's values are read: a
    constraint on the decision alone (or a weight bound given by a mutable
    Param) not declared public, a missing
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
    loss_range : float or (a, b), optional
        Range of each per-record loss term (a width c means (0, c)).  Default:
        the model's info (privopt's 0/1-loss models: (0, 1)).  Required for
        a user's model.  Its width is the sensitivity Delta, not a Lipschitz
        constant.
    n_samples : int, optional
        n; default: the model's info.  Used for alpha / n in the parameters
        and to check that every L(w) lies in [n a, n b] (a loss outside means
        the model breaks its declared contract and nothing is released).
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
    threads, solver_options, abs_gap :
        For the solver of the fix-and-solve path.
    random_state : None, int or numpy Generator
        ``None`` (default): the operating system's secure source.  A seed makes
        the run reproducible and is **not private** when the seed is known.
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
        :class:`SelectionReport` (not private): which path ran and why.

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
    # --- validation, all before the data's values are read ----------------
    epsilon = check_epsilon(epsilon)
    method = check_selection_method(method)
    beta = check_probability(beta, "beta")
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
    max_points = check_int(max_points, "max_points", minimum=1, allow_none=True)
    if progress is not None:
        progress = check_bool(progress, "progress")
    if norm_bound is not None:
        norm_bound = check_positive(norm_bound, "norm_bound")
    if not isinstance(solver, str):
        raise ParameterTypeError(f"solver must be a solver name, got {type(solver).__name__}.", "solver")
    sense = _check_sense(sense)
    path = check_choice(path, "path", SELECTION_PATHS)
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
    info = get_info(model)
    if loss_range is None and info is not None and info.loss_range is not None:
        loss_range = info.loss_range
    lo, hi = check_loss_range(loss_range)
    declared_sensitivity = sensitivity
    sensitivity = _check_sensitivity(sensitivity, hi - lo)
    n_samples = check_n_samples(n_samples, info)

    w_vars = weights_of(model, weights, default_name=info.weights if info else "w")
    # the decision constraints: every one declared public, or a refusal, before any work
    term = check_public_term(model, public_term, w_vars)
    public_cons = check_public_constraints(model, w_vars, public_constraints, info, "Private selection",
                                           bounds_give_w=grid is None and (info is None or info.grid is None),
                                           public_term=term, n_samples=n_samples,
                                           coupled_declared=declared_sensitivity is not None)
    halfspace = getattr(model, ENUMERATION_ATTR, None)
    solver_key = solver.strip().lower()
    is_model_w = halfspace is not None and [v.name for v in w_vars] == [
        v.name for v in model.w.values()] and grid is None
    if path == "bounded" and solver_key == "enumerate":
        raise ParameterError("path='bounded' bounds regions of W with an LP solver; pass solver='auto' or a "
                             "solver name (HiGHS, GLPK, CBC, ...), not 'enumerate'.", "path")
    if solver_key == "enumerate" and not is_model_w:
        raise ParameterError(
            "solver='enumerate' scores the 0/1-loss models of privopt.models.zero_one_halfspace on "
            "their own weights and grid; use solver='auto' or a solver name for this model.", "solver")
    if solver_key in ("auto", "enumerate") and is_model_w and path != "bounded":
        check_unchanged(model, halfspace, None)     # privopt's 0/1-loss models are minimized (checked above)
        problem = topdown_problem(halfspace, norm_bound)
        if problem is not None:
            return _select_topdown(problem, halfspace, w_vars, epsilon=epsilon, method=method, beta=beta,
                                   sensitivity=sensitivity, loss_range=(lo, hi), n_samples=n_samples,
                                   time_limit=time_limit, random_state=random_state, progress=progress,
                                   executor=executor)
        scorer: HalfspaceEvaluator | FixAndSolveEvaluator = HalfspaceEvaluator(
            model, halfspace, norm_bound=norm_bound, max_points=max_points)
        solver_name = "enumerate"
    else:
        solver_name = check_solver_ready("highs" if solver_key == "auto" else solver)
        # a user's model: the objective's structure (a mean?) against n, before any solve
        warn_if_mean_objective(model, n_samples, "Private selection")
        grids = resolve_grids(w_vars, grid, info.grid if info else None)
        bounded = _bounded_plan(path, grids, norm_bound, public_cons, w_vars, max_points)
        if bounded is not None:
            return _select_bounded(model, w_vars, bounded, epsilon=epsilon, method=method, beta=beta,
                                   sensitivity=sensitivity, loss_range=(lo, hi), n_samples=n_samples,
                                   time_limit=time_limit, random_state=random_state, solver=solver_name,
                                   threads=threads, abs_gap=abs_gap, solver_options=solver_options,
                                   public_cons=public_cons, term=term, sense=sense, norm_bound=norm_bound)
        scorer = FixAndSolveEvaluator(model, w_vars, grids, norm_bound=norm_bound, solver=solver_name,
                                      time_limit=time_limit, threads=threads, abs_gap=abs_gap,
                                      solver_options=solver_options, max_points=max_points,
                                      public_constraints=public_cons, public_term=term,
                                      record_range=(lo, hi) if _records_are_users(info) else None,
                                      n_records=n_samples)
        scorer.use_executor(executor)   # the model serialized for the workers, before any solve
    n_points = scorer.n_points
    _check_w_size(n_points)
    n_public = n_samples if n_samples is not None else 1   # privopt's models always declare n
    predicted = scorer.predicted_seconds(int(n_public))
    if time_limit is not None and math.isfinite(predicted) and predicted > time_limit:
        if isinstance(scorer, FixAndSolveEvaluator):   # a user's model: its own words, no features
            source = f"|W| and the model's {model_size(model):,} rows and columns, one solve per point"
            smaller = "a coarser grid, tighter bounds or declared constraints on the decision"
        else:
            source = f"|W|, n = {n_public:,} and d = {scorer.d}"
            smaller = "norm_bound, a coarser grid, fewer features"
        raise ParameterError(
            f"time_limit: scoring all {n_points:,} points of W is predicted to take about "
            f"{predicted:,.0f} s (from {source}), more than time_limit={time_limit:g} s. Raise time_limit, "
            f"make W smaller ({smaller}), or use OPDisc (privopt.opdisc), whose MILP does not score W.",
            "time_limit")

    noise_scale = selection_noise_scale(epsilon, sensitivity)
    alpha = selection_utility_bound(epsilon, sensitivity, n_points, beta)
    rng = check_random_state(random_state)

    # --- score W and sample: one pass, noise drawn block by block ----------
    if progress is None:
        progress = (predicted > _PROGRESS_AFTER) if math.isfinite(predicted) else n_points > 200
    start = time.perf_counter()
    best_key, best_w, done = -math.inf, None, 0
    tol = 1e-6 * max(1.0, abs(n_samples * hi) if n_samples else 1.0)
    with progress_bar(n_points, desc=f"privopt {method}", unit="pt", disable=not progress) as bar:
        for pts, losses in scorer.blocks():
            if n_samples is not None and isinstance(scorer, FixAndSolveEvaluator):
                records = losses - scorer.term_values(pts)   # the public term is not the records'
                if records.min() < n_samples * lo - tol or records.max() > n_samples * hi + tol:
                    raise ModelError(
                        f"model: its loss{' less public_term' if term is not None else ''} at some w is "
                        f"outside [n a, n b] = [{n_samples * lo:g}, {n_samples * hi:g}] for n = {n_samples} "
                        f"and loss_range = ({lo:g}, {hi:g}): it is not a sum of n terms in loss_range, so "
                        "the guarantee would not hold; nothing is released. Fix loss_range or the model "
                        "(a cost that depends on the decision alone and is public can be declared with "
                        "public_term=).", "model")
            # a utility (sense="maximize", checked above against the objective) is selected as the loss -U
            keys = selection_keys(losses if sense == "minimize" else -losses, noise_scale, method, rng)
            k = int(np.argmax(keys))
            if keys[k] > best_key:
                best_key, best_w = float(keys[k]), np.array(pts[k], dtype=float)
            done += pts.shape[0]
            bar.update(pts.shape[0])
            if time_limit is not None and time.perf_counter() - start > time_limit and done < n_points:
                raise NotCertifiedError(
                    f"time_limit: {time_limit:g} s ran out after scoring {done:,} of {n_points:,} "
                    "points (the prediction was too optimistic for this machine); nothing is "
                    "released. Raise time_limit or make W smaller.", None)
    wall = time.perf_counter() - start
    assert best_w is not None   # W has at least two points, so the loop ran
    released = np.asarray(best_w, dtype=float) + 0.0   # no -0.0

    record_terms = None
    if isinstance(scorer, FixAndSolveEvaluator) and scorer.record_range is not None:
        record_terms = "clipped" if scorer.records_seen else "assumed"
    parameters = _parameters(method, sensitivity, (lo, hi), noise_scale, n_points, alpha, beta, n_samples,
                             len(w_vars), getattr(scorer, "norm_bound", None), scorer.path, sense=sense,
                             record_terms=record_terms)
    return PrivateResult(
        labels=weight_labels(w_vars),
        weights=released,
        mechanism=method,
        epsilon=epsilon,
        delta=0.0,
        parameters=parameters,
        report=_evaluation_report(scorer, solver_name, n_points, wall, predicted),
        certified=True,
    )


def _evaluation_report(scorer, solver_name, n_points, wall, predicted) -> SelectionReport:
    """The report of a run that scored every point of W: which path, engine
    and listing ran, and why."""
    if not isinstance(scorer, FixAndSolveEvaluator):
        return SelectionReport(scorer.path, solver_name, n_points, wall, predicted, engine="enumerate",
                               points_scored=n_points,
                               reason=("privopt's 0/1-loss model whose W cannot be split by support: every "
                                       "point scored by the exact enumeration"))
    reason = (f"a user's model: every point of W scored by fixing the decision and solving the rest "
              f"with {solver_name} (each solve certified); {scorer.listing_reason}")
    if scorer.engine == BLOCKS_ENGINE:
        reason = (f"a user's model: with the decision fixed it falls apart into {scorer.blocks_reason} "
                  "(verified from the model's rows read into HiGHS), so every point of W was scored "
                  f"exactly by their closed form, no solve; {scorer.listing_reason}")
    if scorer._executor is not None:
        reason += (f"; scored on the caller's executor, W cut into {scorer.workers} worker shard(s), "
                   "each worker reading its own copy of the model, the noise drawn here in W's order")
    seen = scorer.records_reason is not None
    return SelectionReport(scorer.path, solver_name, n_points, wall, predicted, reason=reason,
                           listing=scorer.listing, engine=scorer.engine, solves=scorer.solves,
                           points_scored=scorer.points_scored,
                           record_terms=scorer.records_reason if seen else None,
                           terms_clipped=scorer.terms_clipped if seen else 0)


def _records_are_users(info) -> bool:
    """Whether the records' terms are the user's to check (clip into loss_range where they
    can be seen): not for a model whose ModelInfo declares its per-record rows (privopt's
    builders, whose rows merge identical records with a weight)."""
    return info is None or not info.record_constraints


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


def _check_w_size(n_points: int, widen: str = "the weights' bounds or the ball") -> None:
    """Refuse an empty W and a W of one point (the release would not depend on the
    data), from |W| alone; ``widen`` names what to widen."""
    if n_points == 0:
        raise ModelError("weights: W is empty (no value of the weights meets their bounds, the ball and "
                         "the constraints on the weights); there is nothing to select.", "weights")
    if n_points == 1:
        raise ModelError("weights: W has a single point, so the release would not depend on the data; "
                         f"widen {widen}.", "weights")


def _parameters(method, sensitivity, loss_range, noise_scale, n_points, alpha, beta, n_samples, dim, norm_bound,
                path, **extra) -> SelectionParameters:
    """The ``parameters`` of a selection result (documented in :func:`exponential_mechanism`)."""
    return SelectionParameters(
        method=method, sensitivity=sensitivity, loss_range=loss_range, noise_scale=noise_scale,
        n_points=n_points, alpha=alpha, alpha_per_record=None if not n_samples else alpha / n_samples, beta=beta,
        n_samples=n_samples, dim=dim, norm_bound=norm_bound, path=path,
        noise_distribution=noise_distribution(method), **extra)


def _workers_for(executor, predicted: float) -> int:
    """How many workers the top-down run will have (for its time prediction):
    1 in this process, the usable CPUs for the default pool (chosen when the
    pass is predicted to take more than a few seconds), else the executor's."""
    if executor is None:
        return usable_cpus() if predicted >= LOCAL_SECONDS else 1
    if is_local(executor):
        return 1
    ex = check_executor(executor)
    return 1 if ex == RAY else max(1, worker_count(ex))


def topdown_problem(data, norm_bound=None):
    """The support-split W of a zero_one_halfspace model's enumeration data
    (:class:`privopt.search._regions.HalfspaceProblem`) for the top-down
    path, or None where it does not apply."""
    D = data.norm_bound if norm_bound is None else min(float(norm_bound), data.norm_bound)
    coef, bound, _, _ = enumeration_levels(data, D)
    problem = halfspace_problem(data, coef, bound)
    if problem is not None:
        problem.norm_bound = D
    return problem


def _select_topdown(problem, data, w_vars, *, epsilon, method, beta, sensitivity, loss_range, n_samples,
                    time_limit, random_state, progress, executor):
    """Private selection over a halfspace W split by support: exact
    report-noisy-max drawn top down (:mod:`privopt.search._topdown`)."""
    n_points = problem.n_points
    _check_w_size(n_points, widen="the grid or the ball")
    n_public = n_samples if n_samples is not None else 1
    predicted = problem.predicted_seconds(n_public)
    workers = _workers_for(executor, predicted)
    if time_limit is not None and predicted / workers > time_limit:
        raise ParameterError(
            f"time_limit: bounding the {problem.n_regions:,} supports of W on n = {n_public:,} records is "
            f"predicted to take about {predicted / workers:,.0f} s on {workers} worker(s), more than "
            f"time_limit={time_limit:g} s. "
            "Raise time_limit, shard on more workers (executor=...), or make W smaller (norm_bound, fewer "
            "features).", "time_limit")
    noise_scale = selection_noise_scale(epsilon, sensitivity)
    alpha = selection_utility_bound(epsilon, sensitivity, n_points, beta)
    streams = KeyedStreams(check_random_state(random_state))
    if progress is None:
        progress = predicted > _PROGRESS_AFTER
    best, expanded, wall = sample_top_down(problem, streams, method, noise_scale, executor=executor,
                                           predicted=predicted, progress=progress, desc=f"privopt {method}")
    released = problem.decode(best[1], best[2]) + 0.0
    parameters = _parameters(method, sensitivity, loss_range, noise_scale, n_points, alpha, beta, n_samples,
                             len(w_vars), problem.norm_bound, "topdown")
    report = SelectionReport("topdown", "enumerate", n_points, wall, predicted, engine="topdown",
                             reason=("privopt's 0/1-loss model on one integer grid with 0: W split by support "
                                     "and report-noisy-max drawn top down, supports that cannot win never "
                                     "scored"),
                             regions_expanded=expanded[0], points_scored=expanded[1],
                             n_regions=problem.n_regions)
    return PrivateResult(labels=weight_labels(w_vars), weights=released, mechanism=method, epsilon=epsilon,
                         delta=0.0, parameters=parameters, report=report, certified=True)


def _bounded_plan(path, grids, norm_bound, public_cons, w_vars, max_points):
    """``(space, reason, weight_cons)`` when the bounded sampler runs, else None
    (every point scored).  Decided from public quantities only: ``path``, |W| counted
    through the declared constraints, and ``max_points``."""
    if path == "score":
        return None
    weight_cons = _weight_only(list(public_cons), {id(v) for v in w_vars})
    space, why = prefix_space(grids, norm_bound, weight_cons, w_vars)
    if space is None:
        if path == "bounded":
            raise ParameterError(f"path: the bounded sampler needs the size of every region of W, but {why}. "
                                 "Write the constraints on the weights as linear ones, or use path='score'.",
                                 "path")
        return None
    n_points = int(space.size(()))
    limit = DEFAULT_MAX_EVALUATIONS if max_points is None else max_points
    if path == "bounded":
        return space, f"path='bounded' was asked; {why}: {n_points:,} points", weight_cons
    if n_points <= limit:
        return None
    return space, (f"|W| = {n_points:,} ({why}) is above max_points={limit:,}, too many to solve once per "
                   "point"), weight_cons


def _select_bounded(model, w_vars, plan, *, epsilon, method, beta, sensitivity, loss_range, n_samples,
                    time_limit, random_state, solver, threads, abs_gap, solver_options, public_cons, term, sense,
                    norm_bound):
    """Private selection by A* sampling over prefixes of the decision, each region
    bounded by the certified LP relaxation of the model (:func:`privopt.search.sample_prefix`
    with :class:`privopt.mechanisms._bounded.PyomoBoundOracle`)."""
    space, why, weight_cons = plan
    n_points = int(space.size(()))
    _check_w_size(n_points)
    predicted, min_solves = bounded_lower_bound(space, model, solver)
    if time_limit is not None and predicted > time_limit:
        raise ParameterError(
            f"time_limit: the bounded sampler needs at least {min_solves} certified LP solve(s) (the regions "
            f"above any point of W, at most one per coordinate of the decision, counted from the grids and the "
            f"declared constraints) and one exact solve, at least about {predicted:.3g} s for a model of "
            f"{model_size(model):,} rows and columns (a lower bound: the true work depends on how tight the "
            f"bounds are), more than time_limit={time_limit:g} s. Raise time_limit, or make the model or "
            "the decision smaller.", "time_limit")
    noise_scale = selection_noise_scale(epsilon, sensitivity)
    alpha = selection_utility_bound(epsilon, sensitivity, n_points, beta)
    streams = KeyedStreams(check_random_state(random_state))
    # the clock starts before the model is read into the solver: time_limit bounds the whole release
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    oracle = PyomoBoundOracle(model, w_vars, solver=solver, weight_cons=weight_cons, sense=sense,
                              threads=threads, abs_gap=abs_gap, solver_options=solver_options, public_term=term,
                              n_samples=n_samples, loss_range=loss_range, time_limit=time_limit, deadline=deadline)
    point, _, stats = sample_prefix(space, oracle, streams, method, noise_scale, deadline=deadline)
    parameters = _parameters(method, sensitivity, loss_range, noise_scale, n_points, alpha, beta, n_samples,
                             len(w_vars), norm_bound, "bounded", sense=sense)
    report = SelectionReport(
        "bounded", solver, n_points, time.perf_counter() - start, predicted, engine=oracle.engine,
        listing="prefixes",
        reason=(f"bounded sampler: {why}; report-noisy-max drawn exactly by A* sampling over prefixes of the "
                f"decision, each region bounded by the LP relaxation solved by {solver} (certified)"),
        regions_solved=stats.regions_solved, regions_expanded=stats.regions_expanded,
        points_scored=stats.points_scored, solves=oracle.regions_solved + oracle.points_scored)
    return PrivateResult(labels=weight_labels(w_vars), weights=point + 0.0, mechanism=method, epsilon=epsilon,
                         delta=0.0, parameters=parameters, report=report, certified=True)


def bounded_lower_bound(space, model, solver) -> tuple[float, int]:
    """``(seconds, region_solves)``: a lower bound, from public quantities only, on the work of
    the bounded sampler.  Every run bounds each ancestor of the released point that holds
    several points (:meth:`privopt.search.PrefixSpace.min_region_solves`, at most one per
    coordinate of the decision, counted from the grids and the declared constraints) and
    solves that point exactly; each solve is timed by the fix-and-solve evaluator's per-solve
    prediction from the model's rows and columns (:func:`privopt.mechanisms._evaluate.fix_solve_seconds`)
    at the measured rates, without the evaluator's safety margin, plus reading the model into
    the solver (two HiGHS sessions; one Pyomo clone otherwise).  How many regions A*
    sampling opens beyond these depends on how tight the bounds are, which depends on the
    data, so the true work cannot be predicted without reading it: this is a lower bound,
    which is what ``time_limit`` is refused against up front."""
    solves = space.min_region_solves()
    highs = str(solver).lower() in ("highs", "appsi_highs")
    seconds = fix_solve_seconds(model_size(model), "highs_fixed" if highs else "pyomo", solves + 1,
                                setups=2.0 if highs else 1.0, margin=False)
    return seconds, solves
