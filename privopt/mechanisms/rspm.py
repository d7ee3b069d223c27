"""RSPM: Report Separator-Perturbed Noisy Max (Min) [NRW18] for halfspaces
over {-1, 0, 1}^d, the private competitor of OPDisc in [NRVW20] Section 5.

:func:`rspm` runs in four steps, as :func:`~privopt.mechanisms.opdisc` does, each a
function of this module with a frozen record out (after :func:`_public`, the scalar checks
a ledger runs before it reserves the call): :func:`_check` (:class:`RSPMTask`),
:func:`_plan` (:class:`RSPMPlan`: m and b), :func:`_run` (:class:`RSPMAnswer`: the
certified argmin on a clone) and :func:`_release` (the result with its typed
:class:`RSPMParameters`).  The noise xi is drawn in :func:`rspm` itself, between the plan
and the run.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.modeling import unique_component_name

from .._frozen import FrozenRecord
from .._random import check_random_state
from .._validation import check_bool, check_delta, check_epsilon, check_positive, user_stacklevel
from ..calibration import check_loss_range, check_rspm_noise, rspm_noise_scale
from ..exceptions import ModelError, ParameterTypeError
from ..models import Asked, check_model_contract, get_info, quiet_clone
from ..oracle import certified_solve
from ..perturbation import weights_of
from ..ledger import charges
from ..result import PrivateResult, curator_reports, weight_labels
from ..solvers import SolveOptions, keyword_signature, parse_keywords
from ._checks import check_n_samples, check_named_solver, check_run, decision_bounds, warn_noise_disclosed
from ._terms import TermBound, check_record_terms, record_terms_kind
from ._noise import draw_rspm_noise

__all__ = ["rspm", "rspm_outlook", "RSPMParameters"]

#: Name of the block rspm adds to its clone (encoding constraints).
_ENCODING_BLOCK = "_privopt_rspm_encoding"


#: RSPM's oracle (the MILP of :func:`privopt.models.rspm_halfspace`, HiGHS) on
#: discretized real-valued features is predicted NOT to be certified when the
#: model has at least this many weights x possible distinct rows (d min(n, P),
#: P the number of value patterns the discretized features allow: the big-M
#: rows are one per distinct row, the branching variables one per weight) ...
RSPM_HARD_SIZE = 9_000
#: ... and each unit of the noise scale b = 4 d / epsilon is worth at least this
#: many records (epsilon n / (4 d) >= 9): the noise then breaks few of the 0/1
#: loss's ties and the MILP is about as hard as the non-private one.
RSPM_HARD_RECORDS_PER_NOISE = 9.0
#: ... within a time limit of at most this many seconds (the estimator's
#: default; the calibration cell nearest the rule's boundary was certified in
#: 213 s when given 600 s, so above this nothing is predicted).
RSPM_MEASURED_SECONDS = 120.0
#: The calibrated features: real values discretized to at least this many steps
#: (``levels``) each, so that most records are distinct rows.
RSPM_MIN_LEVELS = 4


def rspm_outlook(d: int, n_samples: int, epsilon: float, row_patterns: int | None = None) -> tuple[bool, str]:
    """Whether RSPM's MILP is predicted not to be certified within
    :data:`RSPM_MEASURED_SECONDS` (HiGHS, real-valued features discretized to
    at least :data:`RSPM_MIN_LEVELS` steps each, so that most records are
    distinct rows; binary and one-hot columns make far fewer, and RSPM on
    Adult's is certified in seconds), and why, from d (weights, counting the
    intercept), n, epsilon and ``row_patterns`` only (public: nothing of the
    data's values is read).  ``row_patterns``: how many distinct rows the
    features allow (the product of levels + 1 over the discretized features);
    None means n.

    Predicted hard when d min(n, row_patterns) >= :data:`RSPM_HARD_SIZE` and
    epsilon n / (4 d) >= :data:`RSPM_HARD_RECORDS_PER_NOISE`.  The rule is
    measured, not derived: in ``benchmarks/bench_rspm_time.py`` (breast cancer
    with 10 to 30 features on 5 levels, n = 569, epsilon 1 to 4; there
    row_patterns exceeds n) no solve in that region was certified within 60 s
    (all 30 features at epsilon 4: not within 600 s); the one nearest the
    boundary (d = 16, epsilon 2) was certified in 213 s when given 600 s,
    hence :data:`RSPM_MEASURED_SECONDS`.  With d = 11 every solve was certified
    in about 10 s; with epsilon n / (4 d) < 9 four of four at d <= 21 and two
    of four at d = 26, 31 within 60 s (benchmarks/results/rspm_time.md).
    Outside the predicted region a solve may still run out of time: the rule
    says where failure is near certain, not where success is.  Returns
    ``(hard, reason)``."""
    d, n, epsilon = int(d), int(n_samples), float(epsilon)
    rows = n if row_patterns is None else min(n, int(row_patterns))
    per_noise = epsilon * n / (4.0 * d)
    hard = d * rows >= RSPM_HARD_SIZE and per_noise >= RSPM_HARD_RECORDS_PER_NOISE
    rows_text = f"n = {n:,} records" if rows == n else f"{rows:,} possible distinct rows (n = {n:,})"
    reason = (f"d = {d} weights x {rows_text} = {d * rows:,} (predicted hard from {RSPM_HARD_SIZE:,}) and "
              f"epsilon n / (4 d) = {per_noise:.3g} records per unit of the noise scale b = 4 d / epsilon = "
              f"{4.0 * d / epsilon:.3g} (predicted hard from {RSPM_HARD_RECORDS_PER_NOISE:g})")
    return hard, reason


@dataclass(frozen=True)
class _Keywords:
    """RSPM's own keywords (each documented in :func:`rspm`), checked there;
    how the model is solved is the :class:`~privopt.solvers.SolveOptions`
    beside it."""

    noise: str = "laplace"
    separator_vars: Any = None   # (p, n): Vars or names
    sensitivity: float | None = None
    n_samples: int | None = None
    loss_range: Any = None
    return_noise: bool = False


#: The fields of :class:`~privopt.solvers.SolveOptions` rspm takes as keywords.
RSPM_OPTIONS = ("solver", "time_limit", "threads", "on_failure", "solver_options", "abs_gap", "public_constraints",
                "keep_report")


def _scalars(comp) -> list:
    """The scalar data of a Var component in index order."""
    if not comp.is_indexed():
        return [comp]
    keys = list(comp.index_set()) if comp.index_set().isordered() else sorted(comp.keys())
    return [comp[k] for k in keys]


def _separators(model, separator_vars, info) -> tuple[list, list]:
    """The separator binaries ``(p, n)`` of the model (``separator_vars``, else its info's),
    checked to be two disjoint lists of the same length."""
    if separator_vars is None and info is not None:
        separator_vars = info.extra.get("separator_vars")
    if separator_vars is None:
        raise ModelError(
            "model: it does not name its separator binaries (p, n). Build it with "
            "privopt.models.rspm_halfspace, or pass separator_vars=(p, n).", "separator_vars")
    if isinstance(separator_vars, str) or len(separator_vars) != 2:
        raise ParameterTypeError("separator_vars must be a pair (p, n) of Vars or names.", "separator_vars")
    p_vars = _indexed_scalars(model, separator_vars[0], "p[j] = 1[w_j = 1]")
    n_vars = _indexed_scalars(model, separator_vars[1], "n[j] = 1[w_j = -1]")
    if len(n_vars) != len(p_vars):
        raise ModelError(f"separator_vars: p has {len(p_vars)} entries but n has {len(n_vars)}.", "separator_vars")
    if {id(v) for v in p_vars} & {id(v) for v in n_vars}:
        raise ModelError("separator_vars: p and n share variables.", "separator_vars")
    return p_vars, n_vars


def _indexed_scalars(model, component, what: str) -> list:
    """The scalar VarData of ``component`` (a name or a Var) in index order."""
    name = component if isinstance(component, str) else getattr(component, "name", None)
    if not isinstance(name, str):
        raise ParameterTypeError(
            "separator_vars must be a pair of Var components or names, e.g. ('p', 'n').", "separator_vars")
    comp = model.find_component(name)
    if comp is None or not isinstance(comp, pyo.Var):
        raise ModelError(
            f"model: it has no variable {name!r} ({what}); RSPM needs binaries p[j] = 1[w_j = 1] and "
            "n[j] = 1[w_j = -1] -- build the model with privopt.models.rspm_halfspace, or pass "
            "separator_vars=(p, n).", "separator_vars")
    items = _scalars(comp)
    for v in items:
        if v.fixed:
            raise ModelError(f"separator_vars: {v.name} is fixed; RSPM must be free to choose it.",
                             "separator_vars")
        if not v.is_binary():
            raise ModelError(
                f"separator_vars: {v.name} is not binary; the separator encoding needs binaries "
                "p_j, n_j in {0, 1}.", "separator_vars")
    return items


def _public(model, weights=None, *, epsilon, delta=None, random_state=None, options=None, **kwargs) -> None:
    """RSPM's checks of its scalar arguments, reading nothing of the model: run
    before a ledger reserves the call (:func:`privopt.ledger.charges`), and again by
    :func:`rspm` itself."""
    solve, kw = parse_keywords("rspm", options, kwargs, _Keywords, RSPM_OPTIONS)
    check_epsilon(epsilon)
    check_delta(0.0 if delta is None else delta, allow_zero=True)
    check_rspm_noise(kw.noise)
    check_bool(kw.return_noise, "return_noise")
    check_named_solver(solve, "highs")


@charges("rspm", pure=True, check=_public)
@curator_reports
@keyword_signature(_Keywords, RSPM_OPTIONS, {"solver": "highs"})
def rspm(model, weights=None, *, epsilon: float, delta: float | None = None, random_state=None,
         options: SolveOptions | None = None, **kwargs) -> PrivateResult:
    r"""Release an epsilon-DP halfspace w in {-1, 0, 1}^d by RSPM.

    RSPM (Report Separator-Perturbed Noisy Max, written as a minimization) of
    Neel, Roth, Wu, *How to use heuristics for differential privacy*
    (arXiv:1811.07765) [NRW18], in the form compared with OPDisc in [NRVW20]
    Section 5:

    1. separator set U = {+e_1, ..., +e_d, -e_1, ..., -e_d} (m = 2d), with
       h_w(+e_j) = 1 iff w_j = 1 and h_w(-e_j) = 1 iff w_j = -1 (the
       separator set of [NRVW20] Section 3.1); every two distinct w differ
       on some u in U;
    2. one noise draw per separator element: xi_u ~ Lap(b) i.i.d., with
       b = 2 Delta m / epsilon = 4 d / epsilon for the 0/1 error count
       (:func:`privopt.calibration.rspm_noise_scale`: privopt's derivation
       under replace-one neighbours for an exact oracle, checked against an
       exact enumeration of the output distribution in ``tests/mechanisms/test_rspm.py``
       and by the audit; if [NRW18] state theirs under add/remove neighbours
       it may be up to 2x larger than theirs);
    3. w_hat = argmin_{w in {-1,0,1}^d} err(w, D) + sum_u xi_u h_w(u).  With
       w_j = p_j - n_j, binaries p_j + n_j <= 1, h_w(+e_j) = p_j and
       h_w(-e_j) = n_j, so the perturbation sum_j xi_j p_j + xi'_j n_j is
       linear.  It is injected by the ``privopt.objective_perturbation``
       transformation (``weights=[p_1..p_d, n_1..n_d]``, ``noise=xi``,
       ``scale=-1``, ``normalize=False``) on a clone of ``model``, and the
       clone is solved exactly and certified (:mod:`privopt.oracle`);
    4. output w_hat = p - n.

    Guarantee: epsilon-DP (delta = 0) for data sets differing in one replaced
    record, provided the oracle is exact and each record changes the loss of
    every candidate by at most Delta.  **The constant b is privopt's own
    derivation** (written out in :func:`privopt.calibration.rspm_noise_scale`):
    the statement of [NRW18]'s theorem could not be obtained when this was
    written, so no theorem of [NRW18] is cited for it.  The Gaussian variant
    is not offered for the same reason (``noise="gaussian"`` raises).

    Which of the two labellings of h_w is used does not matter: with the
    halfspace rule +1 iff <w, x> >= theta and theta < 0 one gets
    h_w(+e_j) = 1 - n_j, h_w(-e_j) = 1 - p_j instead, an affine relabelling
    that gives the same output distribution because Lap(b) is symmetric.

    Parameters
    ----------
    model : pyomo ConcreteModel
        Built by :func:`privopt.models.rspm_halfspace` (its info names the
        separator binaries: ``extra["separator_vars"] == ("p", "n")``), or any
        model whose one active, minimized objective is a SUM of per-record
        losses, with binaries p[j], n[j] and w[j] = p[j] - n[j].  Never
        modified: privopt transforms a clone, on which it also adds (again)
        the encoding constraints p_j + n_j <= 1 and w_j = p_j - n_j, so that
        phi(w) = (p, n) is a function of w even if the user's model forgot them.
    weights : IndexedVar, list of Var, str, optional
        The decision vector w (positional, as in :func:`~privopt.mechanisms.opdisc`
        and :func:`~privopt.mechanisms.opsamp`); default: the model's info
        ``weights`` or ``"w"``.
    epsilon : float
        Privacy budget (> 0).
    delta : float, optional
        Deprecated and ignored: RSPM (Laplace) is pure epsilon-DP and the
        result records ``delta = 0``.  Passing it warns
        (DeprecationWarning); a value outside [0, 1) is still refused, and the
        value is kept as ``parameters["requested_delta"]`` (0.0 when not given).
    random_state : None, int or numpy Generator
        ``None`` (default) draws the noise from the operating system's secure
        source.  A seed makes the run reproducible and is **not private** if
        the seed is known.
    options : SolveOptions, optional
        The keywords ``solver``, ``time_limit``, ``threads``, ``on_failure``,
        ``solver_options``, ``abs_gap``, ``public_constraints`` and
        ``keep_report`` as one record (:class:`privopt.SolveOptions`, each
        field documented there), e.g. built once and reused; those keywords,
        given beside it, override its fields.  Any keyword rspm does not take
        is a TypeError naming it.

    Other Parameters
    ----------------
    noise : {"laplace"}
        Distribution of the separator noise.  ``"gaussian"`` raises (see above).
    separator_vars : (Var or str, Var or str), optional
        The binaries (p, n); default: the model's info, else an error.
    sensitivity : float, optional
        Delta, the most one replaced record changes L(D, w) for any w;
        default: the width of ``loss_range`` (1 for the 0/1 loss); required
        when no range is given.  Declared alone (records coupled by a row are
        then accepted), the records' terms at the answer must lie within an
        interval of width Delta, else the call is refused (charged).
    n_samples : int
        n; default: the model's info; required (the model's contract checks
        that its records' side falls into exactly n blocks with the decision
        fixed, :func:`privopt.models.check_model_contract`).
    loss_range : float or (a, b), optional
        The range of each record's term; default: the model's info.  Each
        record's term at the answer is checked against it before the release
        (a term outside refuses the call, charged; no value in the message).
    solver, time_limit, threads, solver_options, abs_gap : fields of SolveOptions
        Passed to :func:`privopt.solvers.solve` (gap 0 is always requested).
    on_failure : {"raise", "return"}
        What to do when the solver does not certify the optimum.
    return_noise : bool
        Put xi (first the d draws for +e_j, then the d draws for -e_j) in
        ``result.noise``; warns, because releasing it voids privacy.
    public_constraints : str or list of str, optional
        The model's constraints on the decision alone (and weights whose
        bounds are mutable Params) that are fixed before the data is seen, by
        component name.  RSPM keeps them in the model, so they shape the set
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
        ``weights`` (w_hat in {-1, 0, 1}^d), ``epsilon``, ``delta`` (0.0),
        ``parameters`` (an :class:`RSPMParameters`, read as fields or keys:
        ``noise_scale``, ``noise``, ``noise_distribution``,
        ``n_separators``, ``separator_set``, ``sensitivity``, ``dim``,
        ``requested_delta``, ``n_samples``, ``calibration``, ``record_terms``:
        ``"clipped by construction"`` for a model built with ``privopt.RecordModel(clip=True)``,
        ``"checked at the points computed"`` where each record's term is read at the answer
        only (the range elsewhere is assumed), None for privopt's own models),
        ``report`` (the SolveReport, only with ``keep_report=True``; else None).
    """
    solve, kw = parse_keywords("rspm", options, kwargs, _Keywords, RSPM_OPTIONS)
    task = _check(model, weights, epsilon, delta, solve, kw)       # every refusal before any noise or solve
    plan = _plan(task)
    # all the noise, here: one draw per separator element (+e_j then -e_j)
    xi = draw_rspm_noise(check_random_state(random_state), plan.noise_scale, plan.n_separators)
    answer = _run(task, xi)
    return _release(task, plan, answer, xi)


# --- 1. check: every argument and the model, before any noise or solve ---------------

@dataclass(frozen=True)
class RSPMTask:
    """One call of :func:`rspm`, checked before any noise is drawn or any solve starts:
    the model, its decision ``w_vars`` and separator binaries ``p_vars``, ``n_vars``, the
    privacy parameters, the solve's options, the sensitivity Delta and how each record's
    term is checked at the answer (``term_bound``)."""

    model: Any
    w_vars: list
    p_vars: list
    n_vars: list
    epsilon: float
    requested_delta: float
    noise: str
    solve: SolveOptions
    sensitivity: float
    contract: Any
    term_bound: TermBound
    return_noise: bool
    record_terms: str | None

    @property
    def dim(self) -> int:
        """d, the number of weights."""
        return len(self.w_vars)


def _check(model, weights, epsilon, delta, solve: SolveOptions, kw: _Keywords) -> RSPMTask:
    """Every check of a call, in this order, before any noise is drawn or any solve starts:
    the scalar arguments (``delta`` deprecated: warned), the run, the separator binaries and
    the decision, Delta (from ``sensitivity`` or the width of ``loss_range``), and the
    model's contract."""
    epsilon = check_epsilon(epsilon)
    requested_delta = check_delta(0.0 if delta is None else delta, allow_zero=True)
    if delta is not None:
        warnings.warn(
            "rspm(delta=...) is deprecated and ignored: RSPM is pure epsilon-DP (the result has delta = 0); "
            "leave delta out.", DeprecationWarning, stacklevel=user_stacklevel())
    noise = check_rspm_noise(kw.noise)
    solve = check_run(model, solve, kw.return_noise)
    info = get_info(model)
    p_vars, n_vars = _separators(model, kw.separator_vars, info)
    w_vars = weights_of(model, weights, default_name=info.weights if info is not None else "w")
    if len(w_vars) != len(p_vars):
        raise ModelError(f"weights: w has {len(w_vars)} entries but the separator binaries have {len(p_vars)}.",
                         "weights")
    loss_range = kw.loss_range if kw.loss_range is not None else (info.loss_range if info is not None else None)
    loss_range = None if loss_range is None else check_loss_range(loss_range)
    sensitivity = _sensitivity(kw.sensitivity, loss_range)
    n_samples = check_n_samples(kw.n_samples, info)
    contract = check_model_contract(model, w_vars, solve.public_constraints, info, "RSPM", n_samples=n_samples,
                                    asked=Asked(coupled_declared=kw.sensitivity is not None,
                                                **decision_bounds(None, info)))
    # each record's term against loss_range (or, with only Delta declared, the terms at one w within Delta)
    term_bound = TermBound(loss_range) if loss_range is not None and kw.sensitivity is None else TermBound(
        None, sensitivity)
    return RSPMTask(model, w_vars, p_vars, n_vars, epsilon, requested_delta, noise, solve, sensitivity, contract,
                    term_bound, bool(kw.return_noise), record_terms_kind(info, contract, term_bound))


def _sensitivity(sensitivity, loss_range) -> float:
    """Delta: the given sensitivity, else the width of ``loss_range``; required."""
    if sensitivity is None and loss_range is not None:
        sensitivity = float(loss_range[1]) - float(loss_range[0])
    if sensitivity is None:
        raise ModelError(
            "sensitivity: give Delta, the most one replaced record changes the loss of any w "
            "(1 for a 0/1 error count).", "sensitivity")
    return check_positive(sensitivity, "sensitivity")


# --- 2. plan: the noise scale, from public constants only --------------------------

@dataclass(frozen=True)
class RSPMPlan:
    """What a call computes from public inputs before the noise: the separator set's size
    ``n_separators`` (m = 2d) and the Laplace scale ``noise_scale``
    (b = 2 Delta m / epsilon, :func:`privopt.calibration.rspm_noise_scale`)."""

    n_separators: int
    noise_scale: float


def _plan(task: RSPMTask) -> RSPMPlan:
    """m = 2d separators and b = 2 Delta m / epsilon for them."""
    m = 2 * task.dim
    return RSPMPlan(m, rspm_noise_scale(task.epsilon, task.requested_delta, m, task.noise,
                                        sensitivity=task.sensitivity))


# --- 3. run: the perturbed objective on a clone, solved and certified ---------------

@dataclass(frozen=True)
class RSPMAnswer:
    """The oracle's answer: ``weights`` (w_hat = p - n in {-1, 0, 1}^d) and the solve's ``report``."""

    weights: np.ndarray
    report: Any


def _run(task: RSPMTask, xi: np.ndarray) -> RSPMAnswer:
    """argmin_w L(w) + sum_j xi_j p_j + xi_{d+j} n_j on a clone of the model (with the
    encoding p_j + n_j <= 1, w_j = p_j - n_j added again), certified by the solver; each
    record's term at the answer checked (refused, charged, when broken)."""
    d = task.dim
    private_model = quiet_clone(task.model)
    p_c = [private_model.find_component(v) for v in task.p_vars]
    n_c = [private_model.find_component(v) for v in task.n_vars]
    w_c = [private_model.find_component(v) for v in task.w_vars]
    enc = pyo.Block(concrete=True)
    private_model.add_component(unique_component_name(private_model, _ENCODING_BLOCK), enc)
    enc.exclusive = pyo.Constraint(range(d), rule=lambda blk, j: p_c[j] + n_c[j] <= 1)
    enc.link = pyo.Constraint(range(d), rule=lambda blk, j: w_c[j] - p_c[j] + n_c[j] == 0)
    # objective: L(w) - (-1) * <xi, (p, n)> = L(w) + sum_j xi_j p_j + xi_{d+j} n_j
    pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
        private_model, weights=p_c + n_c, noise=xi, normalize=False, scale=-1.0)
    report = certified_solve(private_model, options=task.solve, what="the RSPM objective", _prechecked=True)
    p_hat = np.array([round(pyo.value(v)) for v in p_c], dtype=int)
    n_hat = np.array([round(pyo.value(v)) for v in n_c], dtype=int)
    w_hat = (p_hat - n_hat).astype(float)
    check_record_terms(task.model, task.w_vars, task.contract, [w_hat], task.term_bound, "RSPM", task.solve)
    return RSPMAnswer(w_hat, report)


# --- 4. release: the answer with its typed parameters -------------------------------

@dataclass(frozen=True, eq=False)
class RSPMParameters(FrozenRecord):
    """The ``parameters`` of :func:`rspm` (documented there): typed fields, also readable
    as a mapping (``result.parameters["noise_scale"]``)."""

    noise_scale: float
    noise: str
    noise_distribution: str
    n_separators: int
    separator_set: str
    sensitivity: float
    dim: int
    requested_delta: float
    n_samples: int
    record_terms: str | None
    calibration: str


def _release(task: RSPMTask, plan: RSPMPlan, answer: RSPMAnswer, xi: np.ndarray) -> PrivateResult:
    """The release step: the answer, with its typed parameters, built once."""
    b, m = plan.noise_scale, plan.n_separators
    parameters = RSPMParameters(
        noise_scale=b, noise=task.noise,
        noise_distribution=f"Laplace(0, {b:.6g}) i.i.d., one draw per separator element ({m} draws)",
        n_separators=m, separator_set="{+e_j, -e_j : j = 1..d}", sensitivity=task.sensitivity, dim=task.dim,
        requested_delta=task.requested_delta, n_samples=task.contract.n_records, record_terms=task.record_terms,
        calibration=("b = 2 * sensitivity * n_separators / epsilon (privopt's derivation, "
                     "privopt.calibration.rspm_noise_scale)"))
    if task.return_noise:
        warn_noise_disclosed("the noise vector")
    return PrivateResult(
        labels=weight_labels(task.w_vars),
        weights=answer.weights,
        mechanism="rspm",
        epsilon=task.epsilon,
        delta=0.0,
        parameters=parameters,
        report=answer.report,
        certified=answer.report.certified_optimal,
        noise=xi if task.return_noise else None,
    )
