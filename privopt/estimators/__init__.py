"""scikit-learn style estimators around privopt's mechanisms."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from .._optional import require_installed

require_installed("sklearn")     # the estimators' extra, checked without importing scikit-learn

import pyomo.environ as pyo  # noqa: E402

from .._frozen import FrozenRecord
from .._lattice import check_grid_size, check_norm_square
from .._limits import (SCORING_MAX_POINTS, ZERO_ONE_MAX_FEATURES, check_memory, check_width, format_bytes,
                       halfspace_fit_bytes, memory_budget, public_shape)
from .._runtime import usable_cpus
from .._sklearn import (PrivoptClassifier, check_fitted, check_public_input, refuse_fit_params, validate_fit,
                       validate_predict)
from .._validation import (check_bool, check_bounds, check_choice, check_delta, check_epsilon,
                          check_integer_features, check_positive, snap_integer_features, user_stacklevel,
                          warn_clipped)
from .._random import check_random_state
from ..calibration import OPDISC_CALIBRATIONS, split_warm_start_epsilon
from ..exceptions import ClippedFeaturesWarning, ParameterError, PrivacyLeakWarning
from ..ledger import current_ledger, estimator_key, refuse_kept_report, release
from ..mechanisms import (MECHANISMS, branch_and_bound_seconds, check_solver_ready, mixture_selection,
                          predict_evaluation_seconds, workers_for)
from ..mechanisms.rspm import (RSPM_HARD_RECORDS_PER_NOISE, RSPM_HARD_SIZE, RSPM_MEASURED_SECONDS, RSPM_MIN_LEVELS,
                              rspm_outlook)
from ..models import (FeatureDiscretizer, ZeroOneLoss, get_info, halfspace_decision_function, rspm_halfspace,
                     zero_one_halfspace, zero_one_loss)
from ..oracle import check_on_failure
from ..result import PrivateResult, report_wanted, reports_kept
from ..search import BOUND_ROWS_PER_SECOND, scoring_costs, topdown_seconds
from ..solvers import choose_solver, solve
from ..space import DecisionSpace, SupportWork, count_grid_points, public_w
from ._ladder import (GEOMETRIC_RUNGS, PRIOR_TEMPER, PRIORS, RULE_BETA, RULE_FRACTION, WARM_START_FRACTION,
                      WARM_START_LEVELS, WARM_START_SELECTION_BUDGET, Resolution, default_ladder, ladder_cap,
                      ladder_prior, warm_start_applies, warm_start_prior, warm_start_resolution, warm_start_share)

__all__ = ["PrivateHalfspaceClassifier", "ZeroOneHalfspaceClassifier",
           # The default estimator's policy over W (privopt/estimators/_ladder.py): public rules.
           "Resolution", "default_ladder", "GEOMETRIC_RUNGS", "ladder_cap", "ladder_prior", "warm_start_applies",
           "warm_start_resolution", "warm_start_prior", "PRIORS", "PRIOR_TEMPER", "RULE_FRACTION", "RULE_BETA",
           "WARM_START_FRACTION", "WARM_START_LEVELS", "warm_start_share", "WARM_START_SELECTION_BUDGET"]

_MECHANISMS = ("auto", "permute_and_flip", "exponential", "opdisc", "rspm")
_SELECTION = ("permute_and_flip", "exponential")
#: A resolution beyond the first is offered only if sampling it exactly is
#: predicted (from public quantities) to take at most this many seconds.
LADDER_SECONDS = 10.0
#: ... and, where it cannot be split by support (every point is scored), only if it has at
#: most this many points: scoring a million points took 6 to 7 s per fit on a 420-record set
#: (30 times the single default W), and the prediction of that path ran up to 2.5 times
#: short above a million points on a loaded machine.
LADDER_ENUMERATE_POINTS = 400_000
#: The resolutions beyond the first are offered only while their sizes |W_r| sum to at most
#: this many points.  The time rule above predicts the sampler's bounding pass (supports x n
#: rows), not the expansion of the points within them, which dominates at small n: on
#: scikit-learn's breast cancer (30 features, 398 records) six resolutions of 0.5 to 7.1
#: million points, each predicted under 0.25 s, took 62 s per fit.  The cap is the smallest
#: round number that leaves the ladder of every table of benchmarks/bench_adaptive_w.py as it
#: was (at most 5.4 million points beyond the first, Adult's 23 features); there it stops
#: after three resolutions (1.7 million points).
LADDER_TOTAL_POINTS = 6_000_000
#: The prior over the offered resolutions (:func:`privopt.estimators.ladder_prior`): the Occam
#: prior tempered by the budget (Occam's while epsilon n <= ``PRIOR_TEMPER``, frozen beyond),
#: since revision 2026-11-28 of the default's law; ``"occam"`` was the law until then.
LADDER_PRIOR = "tempered"
#: Which rungs of the default ladder also come on geometric feature steps
#: (:func:`privopt.estimators.default_ladder`, ``geometric``; :data:`GEOMETRIC_RUNGS`): since
#: revision 2026-11-29 of the default's law ``"plain"``, the levels-8 rung in the ball sqrt(5) on
#: geometric steps {0..L}; ``"none"`` was the law until then.  Chosen among "plain", "plainwide",
#: "fine" and "all" on development tables only (benchmarks/results/ceiling_geometric_first*.md and
#: ceiling_geometric_second*.md): "plain" holds the fit's CPU time within 1.2x of "none" on the
#: table shapes (make_classification 2,000 x 6: 1.04x; uniform 10,000 x 14: 1.16x; "plainwide"
#: 1.39x there), then checked on tables chosen before any result on them
#: (benchmarks/results/ceiling_third.md).
LADDER_GEOMETRIC = "plain"

#: More feature levels for the default ladder's rung in the ball sqrt(5)
#: (:func:`privopt.estimators.default_ladder`, ``finer``): none in the shipped law.
LADDER_FINER_LEVELS: tuple[int, ...] = ()

#: ``mechanism="auto"`` selects privately when scoring all of W is predicted
#: (from |W|, n and d only) to take at most this many seconds with
#: ``time_limit=None``; otherwise at most ``time_limit``.
AUTO_SELECTION_SECONDS = 120.0


def _check_width(X) -> None:
    """Refuse more features than the 0/1-loss models take
    (:data:`privopt._limits.ZERO_ONE_MAX_FEATURES`), from X's shape alone."""
    check_width(X, what="a halfspace classifier over W (the 0/1-loss models)", max_features=ZERO_ONE_MAX_FEATURES,
                fix="Give fewer features (select or aggregate columns of X, or use the convex baselines of "
                    "privopt.baselines, which scale linearly in them).")


def auto_mechanism(n_points: int, n_records: int, d: int, time_limit, sparse_work=None,
                   topdown_regions: int | None = None) -> tuple[str, str]:
    """The public rule of ``mechanism="auto"``: ``("permute_and_flip", why)``
    when private selection over W is predicted to finish within the time
    limit (from |W|, n, d and the grid, never from the data's values), else
    ``("opdisc", why)``.

    ``topdown_regions``: the number of supports of W when the top-down sampler
    applies (one integer grid with 0): its cost is the lower-bound pass,
    supports x n rows at :data:`privopt.search._regions.BOUND_ROWS_PER_SECOND`
    per core, on the local process pool it uses by default (all usable CPUs).
    Otherwise every point is scored (:func:`privopt.mechanisms.selection._evaluate.predict_evaluation_seconds`).

    Private selection's excess loss grows with ln |W| / epsilon, OPDisc's noise
    with D^2 / epsilon (measured in docs/estimators.md), so wherever W can be
    sampled, selection is the better mechanism; OPDisc remains for W too large,
    where its oracle is one MILP."""
    budget = AUTO_SELECTION_SECONDS if time_limit is None else float(time_limit)
    if topdown_regions is not None:
        predicted = _bound_pass_seconds(topdown_regions, n_records) / usable_cpus()
        what = f"bounding the {topdown_regions:,} supports of W"
        ok = predicted <= budget
    else:
        predicted = predict_evaluation_seconds(n_points, n_records, d, sparse_work)
        what = "scoring W"
        ok = n_points <= SCORING_MAX_POINTS and predicted <= budget
    if ok:
        return "permute_and_flip", f"|W| = {n_points:,}: {what} predicted to take {predicted:.3g} s <= {budget:g} s"
    return "opdisc", (f"|W| = {n_points:,}: {what} predicted to take {predicted:.3g} s > {budget:g} s "
                      "(or |W| above the enumeration limit); OPDisc solves one MILP instead")


def _bound_pass_seconds(regions: int, n_records: int) -> float:
    """The top-down sampler's lower-bound pass on one core: supports x n rows at
    :data:`privopt.search.BOUND_ROWS_PER_SECOND` (public: the number of supports and n)."""
    return regions * max(1, int(n_records)) / BOUND_ROWS_PER_SECOND


def mixture_part_seconds(n_points: int, n_records: int, d: int, sparse_work=None,
                         topdown_work: SupportWork | None = None, coordinate_values=None) -> float:
    """The public prediction of sampling one W_r inside ``mixture_selection``, at least what
    its plan compares with ``time_limit`` (:func:`privopt.mechanisms.selection._plan.plan_halfspace`):
    top down (``topdown_work``: :func:`privopt.search.topdown_seconds`) on the workers the
    plan's own rule gives it (``workers_for`` on the bound pass: this process where it is
    short, else the usable CPUs); where the split by support does not apply, the larger of
    scoring every point and the branch and bound (which of the two runs depends on numba
    and the integer scorer: the larger, so that the sum never falls short of the plan's).
    ``coordinate_values``: the values each coordinate takes where declared per coordinate
    (the branch and bound's, as its plan reads them; the top-down work carries its own)."""
    if topdown_work is None:
        return max(float(predict_evaluation_seconds(n_points, n_records, d, sparse_work)),
                   float(branch_and_bound_seconds(n_points, n_records, coordinate_values=coordinate_values)))
    one_core = topdown_seconds(topdown_work, n_records)
    return one_core / workers_for(None, _bound_pass_seconds(topdown_work.regions, n_records))


@functools.lru_cache(maxsize=1024)
def _rung_outlook(n: int, d_model: int, n_features: int, res, fit_intercept: bool, feature_values: int,
                  declared, budget: float, cpus: int, enumerate_points: int) -> tuple[int, float, bool]:
    """(|W_r|, its predicted sampling time :func:`mixture_part_seconds`, whether a rung
    after the first may be offered: at most ``enumerate_points`` (``LADDER_ENUMERATE_POINTS``) points where every
    point is scored, and :func:`auto_mechanism` within ``budget`` gives private selection) of
    the ladder's rung ``res`` on ``n_features`` columns (``d_model``: the coordinates of the
    ladder's first W, which the predictions read): public numbers only (n, the rung, whether
    there is an intercept, the values a coordinate takes as declared, the budget and the
    usable CPUs ``cpus`` the predictions read), so kept once per process for every fit that
    asks again."""
    w = public_w(int(res.grid), n_features + (1 if fit_intercept else 0), float(res.norm_bound))
    lv = w.levels
    size = count_grid_points(lv.coef, int(lv.bound)) if lv.exact else 10 ** 18
    split = w.support_work(feature_values) if lv.exact and int(res.grid) >= 1 else None
    if split is not None and declared is not None:
        split = dataclasses.replace(split, coordinate_values=declared)
    regions = None if split is None else split.regions
    work = (None if regions is not None or not lv.exact else
            scoring_costs(size, n, w.d, lv.coef, int(lv.bound), list(w.grids), feature_values)[1])
    part = mixture_part_seconds(size, n, d_model, work, topdown_work=split, coordinate_values=declared)
    offerable = (size < 10 ** 18 and not (regions is None and size > enumerate_points)
                 and auto_mechanism(size, n, d_model, budget, work, topdown_regions=regions)[0] == "permute_and_flip")
    return size, part, offerable


def _grid_values(grid) -> int:
    """The fewest values a coordinate of W takes: 2B + 1 for the grid -B..B, else
    the length of the grid (the shortest, for one grid per coordinate)."""
    if isinstance(grid, (int, np.integer)):
        return 2 * int(grid) + 1
    try:
        lengths = [len(g) for g in grid]
    except TypeError:
        return max(1, int(np.size(grid)))
    return max(1, min(lengths, default=1))


def _is_integral(X: np.ndarray) -> bool:
    return bool(np.all(X == np.round(X)))


def _integer_typed(X) -> bool:
    """Whether X's type says that its values are whole numbers: a numpy array (or pandas
    column) of integer or bool dtype, or a DataFrame whose columns all are.  Public, unlike
    whether a float X happens to hold whole numbers."""
    dtype = getattr(X, "dtype", None)
    column_types = getattr(X, "dtypes", None)
    dtypes = [dtype] if dtype is not None else ([] if column_types is None else list(column_types))
    try:
        return bool(dtypes) and all(np.dtype(t).kind in "biu" for t in dtypes)
    except TypeError:           # a pandas extension dtype: not a numpy one
        return False


#: ``bounds="as_is"`` declares X already on the integer grid of W: its whole numbers are its features.
AS_IS = "as_is"
#: Without ``bounds``, whole-number features are used as they are only within
#: [-RAW_FEATURE_LIMIT, RAW_FEATURE_LIMIT]: the largest value a discretized feature takes on the
#: default ladder (levels 8).  W's weights are small integers (-2..2 on the default W, -4..4 at
#: most), so on a wider column (an income in dollars, an age in years) no point of W places a
#: threshold inside the column's range, and the release is the majority class, silently.  A public
#: constant: it does not depend on the data.
RAW_FEATURE_LIMIT = 8
#: The values a coordinate of X used as it is is taken to have where a public count is needed (the
#: predicted times that choose the offered W's and the mechanism): 2, the 0/1 columns (indicators,
#: one-hot codes) that whole-number X without bounds mostly holds.  A public constant, never a count
#: of X's values (that made the offered W's depend on one record).  X whose columns take more values
#: (up to the 17 of [-RAW_FEATURE_LIMIT, RAW_FEATURE_LIMIT] without bounds, any with
#: ``bounds="as_is"``) is sampled the same way, and only runs longer than predicted; give public
#: bounds to have such columns discretized instead.
RAW_VALUES = 2


def _bounds_fix(feature_names, dtypes=None) -> str:
    """The fix of a fit without bounds, with every column of X named (public: the schema), bool
    columns given their public range (0, 1): ``bounds={'age': (lo, hi), ...}`` for a DataFrame, else
    per-feature pairs in column order."""
    if feature_names is None:
        return ("bounds=[(lo_0, hi_0), (lo_1, hi_1), ...] (one public pair per column, in order) or "
                "bounds=(lo, hi) for all")
    kinds = list(dtypes) if dtypes is not None else [None] * len(feature_names)
    pairs = [f"{str(c)!r}: {'(0, 1)' if getattr(k, 'kind', '') == 'b' else '(lo, hi)'}"
             for c, k in zip(feature_names, kinds)]
    shown = ", ".join(pairs[:12]) + (f", ... ({len(pairs) - 12} more columns)" if len(pairs) > 12 else "")
    return f"bounds={{{shown}}}"


def _check_raw_features(Xa: np.ndarray, declared: bool, feature_names=None, dtypes=None) -> None:
    """Refuse X used as it is (no feature map) where that would be a trap: without ``bounds``,
    whole numbers beyond [-RAW_FEATURE_LIMIT, RAW_FEATURE_LIMIT] (W's small weights cannot cut
    them: the release would be the majority class); with ``bounds="as_is"`` values that are not
    whole numbers.  Runs after the data is read: the message names every column of X (public)
    and quotes no value of X, nor which column holds the offending values."""
    fix = _bounds_fix(feature_names, dtypes)
    if declared:
        if not _is_integral(Xa):
            raise ParameterError(
                f"bounds='as_is' declares X already on W's integer grid, but X holds values that are not whole "
                f"numbers. Give public bounds instead: {fix}, (lo, hi) the lowest and highest values each column "
                "can take, known without looking at the data.", "bounds")
        return
    if float(np.max(np.abs(Xa), initial=0.0)) > RAW_FEATURE_LIMIT:
        raise ParameterError(
            f"bounds: none were given and X holds whole numbers beyond +-{RAW_FEATURE_LIMIT} (e.g. an age in "
            "years or an income in dollars). Used as they are, W's small integer weights cannot place a "
            "threshold inside such a column's range and the model is no better than the majority class. Give "
            f"public bounds for every column: {fix}, (lo, hi) the lowest and highest values each column can "
            "take, known without looking at the data (e.g. {'income': (0, 200000)}); the columns are then cut "
            f"into levels. Or, if X is already on W's integer grid, declare it: bounds={AS_IS!r}.", "bounds")


def _offered_with_prior(ladder, sizes, warm: bool, eps_select: float, n: int):
    """``(ladder, sizes, prior)``: the public prior over the offered W's (the warm start's W,
    last when ``warm``, weighs its points as the finest offered W does), with every W whose
    weight underflows to 0 (epsilon n in the hundreds of thousands) left out: a public
    choice, like the prior itself."""
    if not warm:
        prior = ladder_prior(sizes, eps_select, n, LADDER_PRIOR)
    else:
        prior = warm_start_prior(ladder_prior(sizes[:-1], eps_select, n, LADDER_PRIOR), sizes[:-1], sizes[-1])
    keep = [i for i, p in enumerate(prior) if p > 0]
    return [ladder[i] for i in keep], [sizes[i] for i in keep], prior[prior > 0]


def _say_bounds_leak() -> None:
    """The one PrivacyLeakWarning of a fit whose bounds are read from the data, at the
    user's line (:func:`user_stacklevel`), not one per discretizer at privopt's own."""
    warnings.warn("bounds were not given, so the feature ranges are taken from the private data (min and max "
                  "of each column): the fit is not differentially private, and its result_.epsilon is inf. "
                  "Pass bounds=(lower, upper) from public knowledge of the features.",
                  PrivacyLeakWarning, stacklevel=user_stacklevel())


#: The note a fit on bounds read from the data carries in its parameters (key ``"bounds"``).
DATA_BOUNDS_NOTE = "from the data: no guarantee"


@dataclass(frozen=True, eq=False)
class DataBoundsParameters(FrozenRecord):
    """The ``parameters`` of a fit whose feature bounds were read from the data (its
    ``result_.epsilon`` is inf): the release's own parameters, kept as the mechanism
    gave them (``release``, e.g. a :class:`~privopt.mechanisms.SelectionParameters`),
    the epsilon asked for (``epsilon_requested``) and the note that no guarantee holds
    (``bounds``).  Frozen, as every release's parameters; read as one mapping, the
    release's keys then ``"epsilon_requested"`` and ``"bounds"``
    (``result_.parameters["epsilon_requested"]``, ``dict(result_.parameters)``)."""

    release: Mapping[str, Any]
    epsilon_requested: float
    bounds: str = DATA_BOUNDS_NOTE

    def _keys(self) -> tuple:
        own = ("epsilon_requested", "bounds")
        return (*(k for k in self.release if k not in own), *own)

    def __getitem__(self, key):
        if key in ("epsilon_requested", "bounds"):
            return getattr(self, key)
        return self.release[key]


def _without_guarantee(result: PrivateResult, epsilon: float) -> PrivateResult:
    """``result`` as released from bounds read from the data: a new result (``result``
    is not changed) whose epsilon is inf and whose parameters are
    :class:`DataBoundsParameters` around the release's own."""
    return dataclasses.replace(result, epsilon=math.inf,
                               parameters=DataBoundsParameters(result.parameters, float(epsilon)))


@dataclass(frozen=True)
class _WarmStart:
    """The warm start of a fit, when it ran: its release (an
    :class:`~privopt.baselines.ObjectivePerturbationLogisticRegression`, the fit's
    ``warm_start_``) and the epsilon it spent."""

    release: Any
    epsilon: float


@dataclass(frozen=True)
class _OfferedWs:
    """What the resolve step of a fit gives the select step: the offered W's as ``rungs``
    ((Resolution, features, feature map) each, the warm start's last; None where the fit
    offers no ladder), their sizes |W_r|, the public ``prior`` over them (None for one W),
    the selection's ``epsilon`` (the budget less the warm start's share), the
    ``random_state`` it draws with, and the ``warm`` start (None where it did not run)."""

    rungs: list | None
    sizes: list | None
    prior: Any
    epsilon: float
    random_state: Any
    warm: _WarmStart | None


@dataclass(frozen=True)
class _Selected:
    """What the select step of a fit gives: the ``result`` (the fit's release), the
    ``model`` it was drawn from (its ModelInfo reads the weights), the ``resolution`` of
    its W and every ``resolutions`` offered, the feature map of its W (``discretizer``,
    set on the estimator where ``set_discretizer``) and what it adds to the fit's
    ``mechanism_reason_``."""

    result: PrivateResult
    model: Any
    resolution: Resolution | None
    resolutions: tuple
    discretizer: Any = None
    set_discretizer: bool = False
    reason: str = ""


def _with_warm_start(result: PrivateResult, epsilon: float, offered: _OfferedWs) -> PrivateResult:
    """The release of a fit whose selection ran after a warm start: the sequential
    composition of the two (Dwork, Roth 2014, Thm. 3.16), built once as a new result (``result``, the
    selection's, is not changed): epsilon the whole budget, the parameters the
    selection's with ``epsilon_selection``, ``epsilon_warm_start`` and ``warm_start``."""
    assert offered.warm is not None
    return dataclasses.replace(result, epsilon=float(epsilon), parameters=dataclasses.replace(
        result.parameters, epsilon_selection=float(offered.epsilon), epsilon_warm_start=float(offered.warm.epsilon),
        warm_start="objective_perturbation"))


@contextlib.contextmanager
def _quiet_leak():
    """The discretizers' own PrivacyLeakWarning silenced (said once by :func:`_say_bounds_leak`)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=PrivacyLeakWarning)
        yield


class PrivateHalfspaceClassifier(PrivoptClassifier):
    """A differentially private linear classifier trained on the 0/1 loss.

    ``fit`` builds the 0/1-loss model of :func:`privopt.models.zero_one_halfspace`
    over the finite set W = {w : w_j in grid, ||w||_2 <= D} and releases a
    point of W privately:

    * ``"permute_and_flip"`` / ``"exponential"``: private selection over W
      (:func:`privopt.exponential_mechanism`; [MS20], [MT07]), sampled
      exactly from the training errors of W's points (top down by support:
      only supports that can win are scored, so |W| has no limit); pure
      epsilon-DP (``delta`` is not used and the result reports 0); the excess
      training error is at most (2/epsilon)(ln |W| + ln(1/beta)) with
      probability 1 - beta.
    * ``"opdisc"``: objective perturbation ([NRVW20], Algorithm 1), one MILP
      (or enumeration) solve; (epsilon, delta)-DP.  For W too large to score.
    * ``"rspm"``: RSPM ([NRW18]) over {-1, 0, 1}^d, one MILP.  On
      real-valued features discretized to ``levels`` >= 4 (every feature),
      with HiGHS and ``time_limit`` <= 120 s (the default),
      ``fit`` first asks :func:`privopt.mechanisms.rspm.rspm_outlook` (d, n,
      epsilon and the levels only) and raises a ParameterError naming ``time_limit`` where
      the MILP is predicted not to be certified in time (e.g. all 30 features
      of breast cancer at epsilon 4), before anything is fitted or solved.
    * ``"auto"`` (default): permute-and-flip wherever sampling W is predicted,
      from |W|, n, d and the number of feature values (levels + 1 for
      discretized features), to fit in ``time_limit`` (120 s when None), else
      OPDisc (:func:`auto_mechanism`; the choice and its reason are in
      ``mechanism_`` and ``mechanism_reason_``).  A MILP solver named in
      ``solver`` (e.g. ``"highs"``) means OPDisc.  Its excess error grows
      with ln |W| / epsilon, OPDisc's noise with D^2 / epsilon.  Measured with
      these defaults, none of them tuned on the sets below: on Adult (paper
      features) with the W chosen among resolutions, held-out 0.776 at
      epsilon 0.1 and 0.779 at epsilon 2 (DP-SGD with public defaults 0.742
      and 0.768; ``benchmarks/results/adaptive_w.md``; the single default W
      gave 0.769 at epsilon 0.1); on ``benchmarks/bench_small_data.py`` at
      epsilon 1, clearly above the majority class on 15 of 15 criterion sets
      and ahead of DP-SGD on 11; on the regime sweeps level with or ahead of the best untuned
      convex method in 13 of 18 cells of other feature sets and 10 of 10
      along n.  It trails DP-SGD where the default W is too coarse for the
      data (large n, many real-valued features).

    W chosen among resolutions (default).  A W fixed before the budget is
    known is either too coarse for a large epsilon * n or too costly (ln |W|)
    for a small one.  With private selection and none of ``grid``,
    ``norm_bound``, ``levels`` given, ``fit`` offers a ladder of resolutions
    (feature levels, weight grid, ball; :func:`privopt.estimators.default_ladder`):
    the single default W below first, then finer ones, each also on features
    centred on the middle of their range and centred with a wide intercept
    b + L b' (so that the intercept's small grid can cut a feature near its
    middle or anywhere, not only near its bottom), and (since revision
    2026-11-29, ``LADDER_GEOMETRIC``) the levels-8 rung also on geometric steps
    of the public range (finer near the lower bound, for right-skewed
    features: :func:`privopt.models.discretize_features`), each kept only where
    sampling it exactly is predicted to take at most ``LADDER_SECONDS`` (and
    has at most ``LADDER_ENUMERATE_POINTS`` points where it cannot be split by
    support) and
    where the public budget rule :func:`privopt.estimators.ladder_cap`
    (epsilon, n and |W_r| only) allows it.  One private selection then
    releases a resolution and a point together, with the public base measure
    mu(r, w) = pi_r / |W_r| (:func:`privopt.mixture_selection`, [MT07]), pi
    the Occam prior tempered by the budget (:func:`privopt.estimators.ladder_prior`,
    ``"tempered"``): pi_r proportional to exp(-(min(epsilon n, T) / 2) g_r),
    g_r = sqrt(ln |W_r| / (2n)) Occam's bound on how much W_r can overfit and
    T = ``PRIOR_TEMPER`` = 500, so that the release weighs training errors
    plus that bound while epsilon n <= T and a bound that shrinks as
    T g_r / epsilon beyond (a function of epsilon, n and the sizes, fixed
    before the data is read; until revision 2026-11-28 the prior was Occam's
    at every epsilon n, ``"occam"``):
    epsilon-DP as a whole, and within (2/epsilon)(ln |W_r| + ln(1/pi_r) +
    ln(1/beta)) training errors of the best point of every offered W_r.
    Where the rule keeps only the first W (small epsilon * n), the release
    is the plain mechanism on the default W, bit for bit.
    ``resolutions=None`` always uses the single default W.

    Warm start.  A W of grid points caps how finely a direction can be
    expressed, and at a large epsilon * n a convex private learner finds a
    good direction where that cap binds.  Where the public rule
    :func:`privopt.estimators.warm_start_applies` allows it (epsilon * n large
    enough that the ladder loses little by sharing the budget), ``fit``
    first spends ``epsilon_1 = s epsilon`` on L2-regularised logistic
    regression by objective perturbation ([CMS11], pure DP), with the public
    share s = max(1/2, 1 - 2000 / (epsilon n)) (:func:`privopt.estimators.warm_start_share`;
    1/2 at every epsilon n until revision 2026-11-29.2), whose release v
    gives one more W (:func:`privopt.estimators.warm_start_resolution`): the
    halfspaces on the single feature <v, z(x)>, cut into 33 centred steps
    (0 is v's own boundary), so that the selection can keep v's direction
    and move its threshold.  The selection then runs over the ladder and
    this W with ``epsilon_2 = epsilon - epsilon_1``: epsilon-DP in total by
    sequential composition (:func:`privopt.calibration.split_warm_start_epsilon`).
    Its points get the per-point mass of the finest offered W
    (:func:`privopt.estimators.warm_start_prior`), so it is released only where
    its training errors beat the ladder's, not for being small.

    Features.  The MILP needs integer-valued scores, so real-valued features
    are first mapped onto the integer grid {0, ..., levels} after clipping to
    ``bounds`` (:func:`privopt.models.discretize_features`): a per-record map
    that costs no privacy when the bounds are public.  ``bounds=None`` with
    real-valued X infers the bounds from the data and emits one
    :class:`~privopt.PrivacyLeakWarning` (at the caller's line); the fit is
    then not differentially private and ``result_.epsilon`` is ``inf`` (the
    epsilon asked for is ``result_.parameters["epsilon_requested"]``).  Whole-number X with
    ``bounds=None`` is used as it is only within [-8, 8] (``RAW_FEATURE_LIMIT``, the largest
    value of a discretized feature on the default ladder): beyond it (an age in years, an
    income in dollars) W's small weights cannot place a threshold and the release would be
    the majority class, so ``fit`` refuses, naming every column and the fix (public bounds by
    column name).  ``bounds="as_is"`` declares X already on W's integer grid: its whole
    numbers are used as they are, whatever their range.  The same map is applied in
    ``predict``/``decision_function``.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    delta : float or None
        None means 1/n^2 for n training records, as in the paper.
    mechanism : {"auto", "permute_and_flip", "exponential", "opdisc", "rspm"}
        See above; default ``"auto"``.
    grid : None, int or sequence
        Weight grid of W (None: {-B..B} with B = floor(D), i.e.
        {-2..2} once d >= 4); RSPM always uses {-1, 0, 1}.
    norm_bound : float or None
        D of W.  None: min(sqrt(d), 2) (d counts the intercept).  The
        paper used D = sqrt(d) with B = floor(sqrt(d)); privopt's default ball
        is smaller because OPDisc's noise grows with D^2 (d/4 times less noise
        than the paper's ball) and because W_tau then stays small enough to
        solve exactly at any d seen so far: on the suite of
        ``benchmarks/bench_oracle_suite.py`` (data not used to choose it
        beforehand) the D = 2 ball was at least as accurate on held-out data
        at every epsilon where both could be solved (breast cancer, d = 10:
        0.60 / 0.60 / 0.71 against 0.48 / 0.59 / 0.59 at epsilon 0.1 / 0.5 / 1)
        and was certified within seconds on one-hot Adult feature sets up to
        d = 44, where the paper's ball was not certified within 300 s.
        Pass ``norm_bound=math.sqrt(d)`` (and ``grid=None``) for the paper's
        choice.
    calibration : {"proven", "paper"}
        OPDisc's noise calibration (:func:`privopt.opdisc`): ``"proven"``
        (default) is privopt's complete proof, ``"paper"`` Algorithm 1's
        value, for reproducing [NRVW20].  RSPM has one calibration.
    bounds : (lower, upper), per-feature pairs, {column: (lo, hi)}, "as_is" or None
        PUBLIC feature bounds: ``(lower, upper)`` with two numbers or two
        length-d sequences, per-feature pairs ``[(lo_0, hi_0), ...]``,
        ``{"lower": ..., "upper": ...}``, or for a DataFrame one pair per
        column name, ``{"age": (18, 90), ...}`` (resolved once, in column
        order, for every step of ``fit``); ``"as_is"`` declares whole-number
        X already on W's grid (see Features); a (2, d) array is (lower, upper), a
        (d, 2) array pairs, and with d = 2 the one reading that gives every
        feature lo < hi is used (both valid and different: refused as
        ambiguous; use the dict).  Empty (lo == hi), inverted, infinite or
        NaN ranges and a wrong length are refused naming the feature
        (:func:`privopt._validation.check_bounds`).  Values outside are
        clipped (the guarantee needs it) with a
        :class:`~privopt.exceptions.ClippedFeaturesWarning` counting them per
        feature, in ``fit`` and ``predict``; that warning describes the data
        and is for the data curator only.
    integer_features : None, "all", or column indices, names or a boolean mask
        PUBLIC declaration of the columns that take only the whole numbers of
        their bounds (0/1 indicators with bounds (0, 1), answers 0..4 with
        bounds (0, 4)), in the forms of scikit-learn's ``categorical_features``.
        Needs declared whole-number bounds for them; its form, its columns and
        those bounds are refused naming ``integer_features`` before any value
        of X is read (:func:`privopt._validation.check_integer_features`).
        Enforced, never checked against the data: ``fit`` and ``predict``
        round each declared entry to the nearest whole number, record by
        record, then clip it to its bounds as every feature is (a 1.4 in a 0/1
        column is 1).  Read by the predicted time of each W's draw only: a
        declared column of bounds (lo, hi) takes v_j = min(levels + 1,
        hi - lo + 1) values (levels + 1 otherwise), so the distinct rows are at
        most prod_j v_j (:class:`privopt.search._costs.TopDownCost`); those
        predictions decide which W's ``time_limit`` offers.  On data that
        honour it the fit is the undeclared fit, seed for seed, wherever
        ``time_limit`` does not bind.  Default None: none declared.
    levels : int, sequence of int or None
        Grid steps per real-valued feature.  None (default): 4 on the single
        default W, or each resolution's own when W is chosen among resolutions.
    resolutions : "auto", None or sequence of Resolution or (levels, grid, norm_bound[, centered[, wide_intercept]])
        The resolutions offered to private selection (see above): "auto"
        (default) the built-in ladder, a sequence your own (public) ladder,
        None the single default W.  Applies to private selection only, and
        only when ``grid``, ``norm_bound`` and ``levels`` are None.
    warm_start : "auto", True or False
        Whether the ladder also offers the W of a private warm start (see
        above): "auto" (default) on the built-in ladder where the public rule
        :func:`privopt.estimators.warm_start_applies` says epsilon * n is large
        enough, True wherever a ladder is offered (the caller's too) with
        declared ``bounds``, False never.
    fit_intercept : bool
        Add a constant feature whose weight is the intercept (default True:
        without it a halfspace on non-negative discretized features cannot
        place its threshold freely; measured on the development sets of
        ``benchmarks/bench_small_data.py``, e.g. breast cancer at epsilon 1:
        0.898 with, 0.864 without).  Until privopt 0.1 the default was False.
    solver : solver name; default ``"auto"``: privopt's exact enumeration of
        W_tau when it is small (e.g. d = 10 with the default grid), else
        HiGHS (:func:`privopt.solvers.choose_solver`).  Any MILP solver by name.
    time_limit : float
        Seconds per solve (default 120: finite, so a fold that cannot be
        certified fails with a :class:`~privopt.exceptions.NotCertifiedError`
        whose first line says so, instead of hanging a cross-validation).
        ``None`` means no limit.
    random_state : None, int or numpy Generator
        None draws from the operating system's secure source; a seed gives
        reproducible fits that are not private when the seed is known.
    on_failure : {"raise", "return"}
        Policy for a solve that is not certified optimal (:mod:`privopt.oracle`).
    classes : None or two labels
        The label set of the task, treated as PUBLIC.  None (default) reads
        it from y: ``classes_`` and the refusal of a y with one class then
        depend on the private labels (a neighbour that removes the only
        record of a class turns a release into a refusal; docs/guarantees.md,
        "The label set").  Declared (e.g. ``classes=(0, 1)``): ``classes_`` is
        the sorted pair whatever y holds, a y holding only one of them is
        fitted like any other (the mechanism reads only the +-1 labels), and a
        label outside them is refused before any work.
    keep_report : bool
        Keep ``result_.report``, the solve's diagnostics (default False: it is
        set to None after ``fit``, so it is neither kept nor pickled).  The
        report (the perturbed optimum, the number of distinct rows, wall time,
        regions expanded) depends on the data and the noise and is **not**
        private: keep it only while the estimator stays with the data
        curator.  An exception raised by ``fit`` after the data is read
        carries it (``error.report``) only when True.  Refused under a
        :class:`~privopt.PrivacyLedger` (an analyst's budget), before the fit
        is reserved.
    ledger : PrivacyLedger or None
        The budget of the data set (:class:`privopt.PrivacyLedger`): each fit is
        charged its (epsilon, delta) before the data is read (else the ledger of
        an enclosing ``with ledger:`` block).

    Attributes
    ----------
    epsilon_spent_, delta_spent_ : float
        The privacy this fit spent (``result_.epsilon``, ``result_.delta``).
    coef_ : ndarray of shape (1, d)
        Private weights on the (discretized) features, shaped like
        scikit-learn's binary linear classifiers.
    intercept_ : ndarray of shape (1,)
        As in scikit-learn: ``decision_function(X) = Xd @ coef_[0] +
        intercept_[0]`` on the discretized features ``Xd``; it is the
        intercept weight (0 without ``fit_intercept``) minus ``threshold_``.
    threshold_ : float
        The decision threshold theta of the 0/1-loss model (the rule is
        ``<w, x> >= theta``), reported separately.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    classes_ : ndarray of the two labels (``classes_[1]`` is the positive class).
    result_ : PrivateResult
        The release and its account; ``result_.report`` is None unless
        ``keep_report=True``.
    mechanism_ : str
        The mechanism that ran (``mechanism`` unless it is ``"auto"``).
    mechanism_reason_ : str
        Why: the public rule's prediction under ``"auto"``, and the
        resolutions offered.
    resolution_ : Resolution or None
        The (levels, grid, norm_bound) of the released W (private selection;
        None for OPDisc and RSPM).
    resolutions_ : tuple of Resolution
        The resolutions that were offered (one when W was not chosen).
    neighbouring_ : str
        ``"replace_one"``: the relation of the guarantee.
    model_info_ : ModelInfo of the model that was solved.
    discretizer_ : FeatureDiscretizer, WarmStartFeature or None
        The map from X to the features of the released W (``WarmStartFeature``
        when the warm start's W was released: ``coef_`` is then the weight of
        its one score feature).
    integer_features_ : tuple of int
        The indices of the columns ``integer_features`` declared (empty: none).
    warm_start_ : ObjectivePerturbationLogisticRegression or None
        The warm start's private release v (None when no warm start ran).
    epsilon_warm_start_ : float
        The part of epsilon the warm start spent (0 without one); the
        selection spent the rest, and ``result_.epsilon`` is the total.

    References
    ----------
    [CMS11] Chaudhuri, Monteleoni, Sarwate. Differentially private empirical
    risk minimization. JMLR 12:1069-1109, 2011.
    """

    def __init__(self, epsilon=1.0, delta=None, mechanism="auto", grid=None, norm_bound=None,
                 calibration="proven", bounds=None, levels=None, fit_intercept=True, solver="auto",
                 time_limit=120.0, random_state=None, on_failure="raise", keep_report=False, resolutions="auto",
                 warm_start="auto", classes=None, ledger=None, integer_features=None):
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.grid = grid
        self.norm_bound = norm_bound
        self.calibration = calibration
        self.bounds = bounds
        self.levels = levels
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.time_limit = time_limit
        self.random_state = random_state
        self.on_failure = on_failure
        self.keep_report = keep_report
        self.resolutions = resolutions
        self.warm_start = warm_start
        self.classes = classes
        self.ledger = ledger
        self.integer_features = integer_features

    # -- helpers -------------------------------------------------------------
    def _levels_value(self):
        """``levels``, with None meaning the single default W's 4."""
        return 4 if self.levels is None else self.levels

    def _check_bounds_form(self) -> None:
        """``bounds``' form, before the data is read: None, ``"as_is"`` or public bounds
        (:func:`privopt._validation.check_bounds`)."""
        if isinstance(self.bounds, str):
            if self.bounds != AS_IS:
                raise ParameterError(f"bounds must be None, public feature bounds (e.g. (lower, upper) or "
                                     f"{{'age': (18, 90), ...}}) or {AS_IS!r}, got {self.bounds!r}.", "bounds")
            return
        check_bounds(self.bounds)

    def _check_integer_features_form(self) -> None:
        """``integer_features``' form, before the data is read
        (:func:`privopt._validation.check_integer_features`): it needs declared numeric bounds."""
        integer_features = getattr(self, "integer_features", None)
        check_integer_features(integer_features)
        if integer_features is not None and (self.bounds is None or isinstance(self.bounds, str)):
            raise ParameterError(
                "integer_features declares columns that take the whole numbers of their public bounds, so it needs "
                f"declared bounds (got bounds={self.bounds!r}): pass bounds=(lower, upper) with whole-number bounds "
                "for those columns (e.g. (0, 1) for 0/1 columns), or leave integer_features=None.",
                "integer_features")

    def _integer_columns(self, n_features: int, feature_names=None, bounds=None) -> tuple[int, ...]:
        """The indices of the columns ``integer_features`` declares, from X's public shape and
        column names and the resolved bounds (:func:`privopt._validation.check_integer_features`)."""
        integer_features = getattr(self, "integer_features", None)
        if integer_features is None:
            return ()
        if bounds is None:
            bounds = check_bounds(self.bounds, n_features, feature_names=feature_names)
        return check_integer_features(integer_features, n_features, feature_names=feature_names, bounds=bounds)

    def _snapped(self, Xa):
        """X with the declared integer-valued columns rounded to whole numbers, record by record
        (:func:`privopt._validation.snap_integer_features`; the bounds' clipping follows, in the
        feature maps): X itself where nothing is declared."""
        columns = getattr(self, "integer_features_", ())
        return snap_integer_features(Xa, columns) if columns else Xa

    def _raw_features(self, Xa) -> bool:
        """Whether X is used as it is (no feature map): ``bounds="as_is"``, or no bounds and
        whole numbers (:func:`_check_raw_features` refuses wide ones)."""
        return self.bounds == AS_IS if isinstance(self.bounds, str) else (self.bounds is None and _is_integral(Xa))

    def _resolved_bounds(self, Xa, X=None):
        """The bounds every step of ``fit`` uses, resolved once from ``bounds`` and X's
        columns (:func:`privopt._validation.check_bounds`): ``(lower, upper)`` arrays, or None
        when X is used as it is or the ranges are to be read from the data.  X used as it is
        is checked here (:func:`_check_raw_features`)."""
        names = getattr(self, "feature_names_in_", None)
        if self._raw_features(Xa):
            _check_raw_features(Xa, isinstance(self.bounds, str), names, getattr(X, "dtypes", None))
            return None
        return check_bounds(self.bounds, Xa.shape[1], feature_names=names)

    def _transform(self, Xa, *, fitting: bool, bounds=None):
        """The features of W from X: the fitted feature map (``fitting``: fitted first, on the
        resolved ``bounds`` of :meth:`_resolved_bounds`; None with X not used as it is: the
        ranges read from the data)."""
        names = getattr(self, "feature_names_in_", None)
        if fitting:
            if self._raw_features(Xa):
                self.discretizer_ = None
            else:
                if bounds is None:
                    _say_bounds_leak()
                with _quiet_leak():
                    self.discretizer_ = FeatureDiscretizer(bounds=bounds, levels=self._levels_value()).fit(Xa)
        if self.discretizer_ is None:
            return Xa
        if self.discretizer_.bounds is not None:     # declared bounds: say what is clipped (for the curator)
            warn_clipped(Xa, self.discretizer_.lower_, self.discretizer_.upper_, feature_names=names,
                         what=f"{type(self).__name__}.{'fit' if fitting else 'predict'}",
                         stacklevel=5)     # fit -> _fit -> _transform, predict -> decision_function -> _transform
        return self.discretizer_.transform(Xa)

    def _check_time_limit(self):
        if self.time_limit is not None and (not isinstance(self.time_limit, numbers.Real) or self.time_limit <= 0):
            raise ParameterError("time_limit must be a positive number of seconds or None.", "time_limit")

    def _ball(self, n_features: int, res=None):
        """(grid, D) of W: the caller's, or the defaults of the class docstring
        (or those of the resolution ``res`` of the ladder)."""
        if res is not None:
            return int(res.grid), float(res.norm_bound)
        d_model = n_features + (1 if self.fit_intercept else 0)
        norm_bound = (check_positive(self.norm_bound, "norm_bound") if self.norm_bound is not None
                      else min(math.sqrt(d_model), 2.0))
        grid = self.grid if self.grid is not None else int(math.floor(norm_bound + 1e-9))
        # refused from its length alone, before any grid, level or model is built
        check_norm_square(norm_bound)
        if self.grid is not None:
            check_grid_size(grid, "grid")
        else:
            check_grid_size(grid, "norm_bound", derived=f"norm_bound={self.norm_bound!r} with grid=None gives the "
                            f"grid -B..B with B = floor(norm_bound) = {grid:.6g}: ")
        return grid, norm_bound

    def _public_w(self, n_features: int, res=None) -> DecisionSpace:
        """W (:class:`privopt.space.DecisionSpace`) from the grid and the ball alone (no data),
        on d counting the intercept: :func:`privopt.space.public_w`, one record per process for
        the ladder's int grid and float ball, the one its 0/1-loss models read."""
        grid, norm_bound = self._ball(n_features, res)
        d = n_features + (1 if self.fit_intercept else 0)
        return public_w(grid, d, norm_bound)

    def _public_levels(self, n_features: int, res=None):
        """(d counting the intercept, per-coordinate grids, NormLevels) of W,
        from the grid and the ball alone (no data)."""
        w = self._public_w(n_features, res)
        return w.d, list(w.grids), w.levels

    def _public_size(self, n_features: int, res=None) -> int:
        """|W| from the grid and the ball alone (no data)."""
        _, _, lv = self._public_levels(n_features, res)
        if not lv.exact:
            return 10 ** 18   # no exact enumeration: too large to score
        return count_grid_points(lv.coef, int(lv.bound))

    def _feature_values(self, Xd, res=None) -> int:
        """The number of values a record's coordinate can take (public): levels
        + 1 for discretized features, else (X used as it is) the public constant
        ``RAW_VALUES`` (2: 0/1 columns); plus the intercept's.
        Never the values present in X: this number decides which W's the ladder
        offers and which mechanism ``"auto"`` runs, so a count read from the data
        would make the offered W's (and so the release's support) depend on one record."""
        if self.discretizer_ is not None:
            levels = res.levels if res is not None else self._levels_value()
            return int(np.max(np.atleast_1d(levels))) + 1 + (1 if self.fit_intercept else 0)
        return RAW_VALUES + (1 if self.fit_intercept else 0)

    def _coordinate_values(self, Xr, res=None, disc=None) -> tuple[int, ...] | None:
        """The values each coordinate of W takes (public, read by the predicted times only):
        levels + 1 for a discretized feature, at most min(levels + 1, hi - lo + 1) for one
        ``integer_features`` declares (bounds (lo, hi); a 0/1 column: 2), 1 for a widened
        intercept's constant column and for the intercept.  None for a W on other features
        than X's discretized columns (the warm start's score, X used as it is)."""
        disc = self.discretizer_ if disc is None else disc
        if not isinstance(disc, FeatureDiscretizer) or disc.bounds is None:
            return None
        p = len(disc.lower_)
        levels = np.broadcast_to(np.atleast_1d(res.levels if res is not None else self._levels_value()), (p,))
        counts = [int(v) + 1 for v in levels] + [1] * (Xr.shape[1] - p + (1 if self.fit_intercept else 0))
        for j in getattr(self, "integer_features_", ()):
            counts[j] = min(counts[j], int(disc.upper_[j] - disc.lower_[j]) + 1)
        return tuple(counts)

    def _public_sparse_work(self, Xd, n, n_points, res=None):
        """The sparse engine's work estimate for the auto rule (|W| =
        ``n_points``), from the grid, the ball, n and the number of feature
        values: levels + 1 for discretized features (public), else the values
        present in X (for integer features given as they are)."""
        grid, _ = self._ball(Xd.shape[1], res)
        if not isinstance(grid, (int, np.integer)) or isinstance(grid, bool):
            return None
        d_model, grids, lv = self._public_levels(Xd.shape[1], res)
        if not lv.exact:
            return None
        base = self._feature_values(Xd, res)
        return scoring_costs(n_points, n, d_model, lv.coef, int(lv.bound), grids, base)[1]

    def _public_topdown_regions(self, Xd, res=None):
        """The number of supports of W when the top-down sampler applies (one
        integer grid with 0, few enough row patterns and points per support:
        :func:`privopt.space.split_support_count`, the rule the sampler itself
        uses), from the grid, the ball and the number of feature values (as for
        the sparse estimate); None otherwise."""
        work = self._public_topdown_work(Xd, res)
        return None if work is None else work.regions

    def _public_topdown_work(self, Xd, res=None) -> SupportWork | None:
        """The supports of W and their points (:meth:`privopt.space.DecisionSpace.support_work`) when
        the top-down sampler applies, from the same public quantities; None otherwise."""
        grid, _ = self._ball(Xd.shape[1], res)
        if not isinstance(grid, (int, np.integer)) or isinstance(grid, bool) or int(grid) < 1:
            return None
        w = self._public_w(Xd.shape[1], res)
        if not w.levels.exact:
            return None
        return w.support_work(self._feature_values(Xd, res))

    def _check_rspm_outlook(self, Xa, epsilon):
        """Refuse ``mechanism="rspm"`` up front where its MILP is predicted not
        to be certified within ``time_limit`` (:func:`privopt.mechanisms.rspm.rspm_outlook`),
        from d, n, epsilon and the levels only, in the regime it was calibrated on:
        real-valued features discretized to at least ``RSPM_MIN_LEVELS`` steps
        each, HiGHS, a time limit no longer than the calibrated one."""
        discretized = not self._raw_features(Xa)
        # the calibrated regime: every feature on RSPM_MIN_LEVELS steps or more (binary and one-hot
        # columns, levels 1, make far fewer distinct rows: RSPM on Adult is certified in seconds)
        try:
            fine = discretized and float(np.min(np.atleast_1d(self._levels_value()))) >= RSPM_MIN_LEVELS
        except (TypeError, ValueError):     # the discretizer refuses bad levels with its own message
            fine = False
        highs = isinstance(self.solver, str) and self.solver.strip().lower() in ("auto", "highs")
        if not (fine and highs) or self.time_limit is None or self.time_limit > RSPM_MEASURED_SECONDS:
            return
        n, p = Xa.shape
        d = p + int(bool(self.fit_intercept))
        try:
            values = sorted((int(v) + 1 for v in np.broadcast_to(np.atleast_1d(self._levels_value()), (p,))),
                            reverse=True)
        except (TypeError, ValueError):     # the discretizer refuses bad levels with its own message
            return
        hard, reason = rspm_outlook(d, n, epsilon, row_patterns=math.prod(values))
        if not hard:
            return
        eps_max = RSPM_HARD_RECORDS_PER_NOISE * 4.0 * d / n
        # the most features (those with the most levels first) that leave the predicted size
        k_max = max((k for k in range(p + 1)
                     if (k + d - p) * min(n, math.prod(values[:k])) < RSPM_HARD_SIZE), default=0)
        fewer = f"at most {k_max} features (d min(n, row patterns) below {RSPM_HARD_SIZE:,}), " if k_max else ""
        raise ParameterError(
            f"time_limit: RSPM's MILP over {{-1, 0, 1}}^{d} is predicted NOT to be certified within "
            f"time_limit={self.time_limit:g} s on these discretized features ({reason}; measured: no "
            "such HiGHS solve was certified within 60 s, and the one nearest this rule's boundary needed "
            f"213 s). Nothing was solved. Use mechanism='auto' (private selection, scored exactly), {fewer}"
            f"a smaller epsilon (below {eps_max:.3g}: more noise breaks the loss's ties), or time_limit=None "
            f"(or above {RSPM_MEASURED_SECONDS:g} s) to try anyway.", "time_limit")

    def _check_fit_memory(self, shape, mechanism: str, milp_solver: bool) -> None:
        """Refuse, from n, d and W's grid alone (public), a fit whose model cannot
        fit in memory (:func:`privopt._limits.halfspace_fit_bytes`, a lower
        bound), before any feature, model or solver is built.  The MILP's size
        counts for OPDisc, RSPM, a MILP solver, and ``"auto"`` on the default
        ball (D = 2 with a grid holding +-1 has C(d, 4) supports of four unit
        weights, far more than auto's rule lets it sample at the widths this
        refuses: auto's fit is OPDisc's there); the model alone otherwise."""
        n, p = shape
        d_model = p + int(bool(self.fit_intercept))
        if mechanism == "rspm":
            grid_values, milp = 3, True
        else:
            grid, norm_bound = self._ball(p)
            grid_values = _grid_values(grid)
            default_ball = self.grid is None and norm_bound >= 2.0
            milp = milp_solver or mechanism == "opdisc" or (mechanism == "auto" and default_ball)
        need = halfspace_fit_bytes(n, p, d_model, grid_values, milp)
        what = (f"the 0/1-loss model over {d_model:,} weights with {grid_values} grid values each"
                f"{' and its MILP solve' if milp else ''} on {n:,} records")
        per_feature = halfspace_fit_bytes(n, 1, 1, grid_values, milp)
        fits = max(0, memory_budget() // per_feature - int(bool(self.fit_intercept)))
        check_memory(need, "X", what, (
            f"It needs at least {format_bytes(per_feature)} per feature, so about {fits:,} features fit here "
            f"with this W: give fewer features (select or aggregate columns of X), or a smaller W (fewer grid "
            "values: grid=1 gives 3 per weight)."))

    def _zero_one_model(self, Xd, y, res=None, disc=None):
        """The 0/1-loss MILP of OPDisc's grid and ball (defaults in the class docstring), with
        the values its coordinates take declared in public (:meth:`_feature_values`,
        :meth:`_coordinate_values`), as on a ladder's W's: private selection's path (split by
        support or every point scored) and predicted time then read these, never the values
        present in X, which one record changes (a 0/1 table drawn top down, its neighbour with
        one record spread over the levels scored point by point: ``result_.parameters.path``
        told them apart)."""
        grid, norm_bound = self._ball(Xd.shape[1], res)
        return zero_one_halfspace(Xd, y, grid=grid, norm_bound=norm_bound, fit_intercept=self.fit_intercept,
                                  classes=(-1, 1), feature_values=self._feature_values(Xd, res),
                                  coordinate_values=self._coordinate_values(Xd, res, disc))

    def _zero_one_loss_on(self, Xr, y, res, values, declared):
        """The 0/1 loss without its MILP (:func:`privopt.models.zero_one_loss`), what private
        selection among resolutions reads, of one W of a ladder, with the values its
        coordinates take as declared (``values``: :meth:`_feature_values`, ``declared``:
        :meth:`_coordinate_values`)."""
        grid, norm_bound = self._ball(Xr.shape[1], res)
        return zero_one_loss(Xr, y, grid=grid, norm_bound=norm_bound, fit_intercept=self.fit_intercept,
                             classes=(-1, 1), feature_values=values, coordinate_values=declared)

    def _zero_one_losses(self, ladder, y) -> list:
        """:meth:`_zero_one_loss_on` of every (Resolution, features, feature map) of a ladder,
        the rows of each distinct feature matrix (the same array) checked and merged once and
        shared by the W's on it (:meth:`privopt.models.ZeroOneLoss.with_w`: only the grid and
        the ball differ).  The losses live as long as this fit's selection."""
        first: dict = {}        # id(features) -> (features, its first loss), local to this call
        out = []
        for res, Xr, disc in ladder:
            kept = first.get(id(Xr))
            grid, norm_bound = self._ball(Xr.shape[1], res)
            values = self._feature_values(Xr, res)
            declared = self._coordinate_values(Xr, res, disc)     # read by the predicted time only
            if kept is not None and kept[0] is Xr:
                loss = kept[1].with_w(grid=grid, norm_bound=norm_bound, feature_values=values,
                                      coordinate_values=declared)
            else:
                base, centred = _narrower(first, Xr, res), _uncentred(first, Xr, res)
                if base is not None:
                    loss = base.with_constant_feature(float(res.levels), grid=grid, norm_bound=norm_bound,
                                                      feature_values=values, coordinate_values=declared)
                elif centred is not None:
                    loss = centred.with_affine_features(2.0, -float(res.levels), grid=grid, norm_bound=norm_bound,
                                                        feature_values=values, coordinate_values=declared)
                else:
                    loss = self._zero_one_loss_on(Xr, y, res, values, declared)
                first[id(Xr)] = (Xr, loss)
            out.append(loss)
        return out

    def _uses_ladder(self, mechanism: str, milp_solver: bool) -> bool:
        """Whether W is chosen among resolutions (class docstring): private
        selection, ``resolutions="auto"`` or a sequence, and none of ``grid``,
        ``norm_bound``, ``levels`` set by the caller."""
        if self.resolutions is None or mechanism not in _SELECTION or milp_solver:
            return False
        given = [name for name in ("grid", "norm_bound", "levels") if getattr(self, name) is not None]
        if given:
            if isinstance(self.resolutions, str):
                return False            # "auto" defers to the caller's own W
            raise ParameterError(f"resolutions: a ladder of resolutions sets W itself; leave {given[0]} None "
                                 "(or pass resolutions=None to use the one W it describes).", "resolutions")
        return True

    def _check_resolutions(self, d_model: int):
        """The ladder offered: ``"auto"`` -> :func:`privopt.estimators.default_ladder`,
        else the caller's (levels, grid, norm_bound[, centered[, wide_intercept]]) tuples, checked."""
        if isinstance(self.resolutions, str):
            if self.resolutions != "auto":
                raise ParameterError(f"resolutions must be 'auto', None or a sequence of (levels, grid, "
                                     f"norm_bound), got {self.resolutions!r}.", "resolutions")
            return default_ladder(d_model, geometric=LADDER_GEOMETRIC, finer=LADDER_FINER_LEVELS)
        try:
            rungs = [r if isinstance(r, Resolution) else Resolution(*r) for r in self.resolutions]
        except TypeError as exc:
            raise ParameterError("resolutions must be 'auto', None or a sequence of (levels, grid, norm_bound) "
                                 f"triples, got {self.resolutions!r}.", "resolutions") from exc
        for r in rungs:
            if (not isinstance(r.levels, (int, np.integer)) or r.levels < 1 or not isinstance(r.grid, (int, np.integer))
                    or r.grid < 1 or not (isinstance(r.norm_bound, numbers.Real) and r.norm_bound > 0)
                    or not isinstance(r.centered, (bool, np.bool_))
                    or not isinstance(r.wide_intercept, (bool, np.bool_))
                    or not isinstance(r.geometric, (bool, np.bool_))):
                raise ParameterError(f"resolutions: {r} needs levels >= 1 and grid >= 1 (integers), a positive "
                                     "norm_bound, and centered, wide_intercept and geometric True or False.",
                                     "resolutions")
            check_norm_square(r.norm_bound)
        if not rungs:
            raise ParameterError("resolutions: the sequence is empty.", "resolutions")
        return tuple(rungs)

    def _ladder(self, Xa, Xd, n: int):
        """The resolutions that may be offered to the data, coarsest first, as (Resolution,
        discretized X, discretizer) triples: the first is the single default W;
        each further one is kept if sampling it exactly is predicted to take at
        most ``LADDER_SECONDS`` (public: |W_r|, n, d, levels), with at most
        ``LADDER_ENUMERATE_POINTS`` points where every point is scored, while
        the sizes of those beyond the first sum to at most ``LADDER_TOTAL_POINTS``
        and their predicted sampling times (:func:`mixture_part_seconds`) to at most
        ``time_limit``, the sum ``mixture_selection`` holds against it (none of this
        depends on epsilon); :meth:`_capped` then keeps those
        the public budget rule :func:`privopt.estimators.ladder_cap` allows.
        Returns the triples and the |W_r|."""
        d_model = Xd.shape[1] + (1 if self.fit_intercept else 0)
        rungs = self._check_resolutions(d_model)
        if isinstance(self.resolutions, str):       # "auto": the first rung is the single default W
            rungs = default_ladder(d_model, Resolution(int(self._levels_value()), *self._ball(Xd.shape[1])),
                                   geometric=LADDER_GEOMETRIC, finer=LADDER_FINER_LEVELS)
        budget = LADDER_SECONDS if self.time_limit is None else min(LADDER_SECONDS, float(self.time_limit))
        out, seen, total, seconds = [], set(), 0, 0.0
        maps: dict = {}     # the feature matrices made so far in this fit (:meth:`_rung_features`)
        for i, res in enumerate(rungs):
            key = ((res.grid, res.norm_bound) if self.discretizer_ is None    # integer features as they are
                   else (res.levels, res.grid, res.norm_bound, res.centered, res.wide_intercept, res.geometric))
            if key in seen:
                continue
            disc, Xr = self._rung_features(res, Xa, Xd, maps)
            size, part, offerable = _rung_outlook(
                n, d_model, Xr.shape[1], res, bool(self.fit_intercept), self._feature_values(Xr, res),
                self._coordinate_values(Xr, res, disc), budget, usable_cpus(), LADDER_ENUMERATE_POINTS)
            if i > 0:
                if not offerable:
                    continue
                if total + size > LADDER_TOTAL_POINTS or self._over_time_limit(seconds + part):
                    break       # the ladder's total size, or the mixture's time_limit on the sum: it stops here
                total += size
            seconds += part
            seen.add(key)
            out.append((res, Xr, disc, size))
        return [o[:3] for o in out], [o[3] for o in out]

    def _rung_features(self, res, Xa, Xd, maps: dict):
        """(feature map, features) of the rung ``res``: X as it is where integer features are used
        as they are (levels do not apply), else X discretized at the rung's levels, centring and
        spacing, with the wide intercept's constant column where it widens the intercept; each
        distinct matrix made once per fit and kept in ``maps`` ((levels, centered, spacing[,
        True]) -> (feature map, features)), so that the 0/1 losses on it share its merged rows."""
        if self.discretizer_ is None:
            return None, Xd
        fmap = (res.levels, res.centered, res.spacing)
        if fmap not in maps:
            with _quiet_leak():     # said once, by _transform
                made = FeatureDiscretizer(bounds=self.discretizer_.bounds, levels=res.levels,
                                          center=res.centered, spacing=res.spacing).fit(Xa)
            steps = maps.get((res.levels, False, res.spacing)) if res.centered else None
            # the centred steps from the steps on {0..L} of the same levels and spacing, made already
            maps[fmap] = (made, made.transform(Xa) if steps is None else _centred(steps[1], made.levels_))
        disc, Xs = maps[fmap]
        if not res.wide_intercept:
            return disc, Xs
        if fmap + (True,) not in maps:
            maps[fmap + (True,)] = (disc, _with_wide_intercept(Xs, res))
        return disc, maps[fmap + (True,)][1]

    def _over_time_limit(self, seconds: float) -> bool:
        """Whether ``mixture_selection`` would refuse W's whose predicted sampling times sum to
        ``seconds`` (its one rule: the sum against ``time_limit``)."""
        return self.time_limit is not None and math.isfinite(seconds) and seconds > float(self.time_limit)

    @staticmethod
    def _capped(ladder, sizes, epsilon: float, n: int):
        """The first ``ladder_cap(sizes, epsilon, n)`` resolutions of a ladder and their sizes."""
        keep = ladder_cap(sizes, epsilon, n)
        return ladder[:keep], sizes[:keep]

    def _check_warm_start(self):
        """``warm_start``: "auto", True or False (checked before the data is read)."""
        if isinstance(self.warm_start, str):
            if self.warm_start != "auto":
                raise ParameterError(f"warm_start must be 'auto', True or False, got {self.warm_start!r}.",
                                     "warm_start")
            return "auto"
        return check_bool(self.warm_start, "warm_start")

    def _warm_start_wanted(self, warm_start, sizes, epsilon_select: float, n: int) -> bool:
        """Whether the ladder gets a warm start's W: never without declared
        ``bounds`` (its feature map needs them) or with integer features used as
        they are; with ``warm_start="auto"`` on the built-in ladder where the
        public rule :func:`privopt.estimators.warm_start_applies` holds at the
        selection's share ``epsilon_select``."""
        if warm_start is False or self.bounds is None or self.discretizer_ is None:
            return False
        if warm_start == "auto" and not isinstance(self.resolutions, str):
            return False        # the caller's own ladder: only with warm_start=True
        return warm_start is True or warm_start_applies(sizes, epsilon_select, n)

    def _warm_start_rung(self, Xa, y, epsilon_warm: float, rng, bounds):
        """(the warm start's release, its ladder entry (Resolution, features,
        feature map), |W|): objective perturbation with ``epsilon_warm`` on the
        raw features with the declared bounds (resolved once, in column order: the
        warm start sees the array ``Xa``, not the caller's DataFrame), then its one
        score feature."""
        from ..baselines import ObjectivePerturbationLogisticRegression    # lazy: scikit-learn's optimizers

        lower, upper = bounds
        model = ObjectivePerturbationLogisticRegression(epsilon=epsilon_warm, bounds=(lower.copy(), upper.copy()),
                                                        random_state=rng)
        model.classes = (0, 1)      # the task's labels, public: y may hold one of them (classes=)
        with warnings.catch_warnings():     # the estimator has warned of clipped features already
            warnings.simplefilter("ignore", ClippedFeaturesWarning)
            model.fit(Xa, np.where(y == 1, 1, 0))
        res = warm_start_resolution()
        feature = WarmStartFeature(model, res.levels, self.discretizer_)
        Zs = feature.transform(Xa)
        return model, (res, Zs, feature), self._public_size(1, res)

    def _set_linear(self, w, info):
        """``threshold_``, ``coef_`` (1, d) and ``intercept_`` from the model's weights ``w``
        (a widened intercept's weight on its constant feature L folded into ``intercept_``)."""
        threshold = float(info.extra["threshold"])
        self.threshold_ = threshold
        if self.fit_intercept:
            coef, intercept = w[:-1].copy(), float(w[-1] - threshold)
        else:
            coef, intercept = w.copy(), -threshold
        res = getattr(self, "resolution_", None)
        if res is not None and res.wide_intercept:
            intercept += float(coef[-1]) * float(res.levels)
            coef = coef[:-1]
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])

    # -- scikit-learn API ------------------------------------------------------
    def fit(self, X, y, **fit_params):
        """Fit on (X, y); all checks run before any solve.  Under a
        :class:`~privopt.PrivacyLedger` the fit is charged before any work: one
        release of its total epsilon (and delta), whatever mechanisms it runs.  A fit
        that raises leaves the estimator's attributes as they were before the call (still
        charged under a ledger once the data was read).  ``fit_params`` (e.g.
        ``sample_weight``) are refused, naming them and the fix (:func:`refuse_fit_params`)."""
        refuse_fit_params(self, fit_params)
        name = type(self).__name__
        ledger = getattr(self, "ledger", None)
        pure_only = self._pure_only(ledger)
        keep = report_wanted({"keep_report": self.keep_report})     # else fit's exceptions carry no report
        before = dict(vars(self))
        try:
            with release(f"{name}.fit", name, functools.partial(self._ledger_spend, X, pure_only),
                         ledger=ledger, data=(estimator_key(self), X, y),
                         check=lambda: self._check_public(X)) as charge, reports_kept(keep):
                self._fit(X, y, pure_only=pure_only)
                if charge is not None:      # "auto" reserved OPDisc's delta; a pure mechanism ran: give it back
                    charge.settle(self.epsilon_spent_, self.delta_spent_)
        except BaseException:
            # a failed fit leaves the estimator as it was: no mix of this fit's feature map
            # with an earlier fit's W and weights
            vars(self).clear()
            vars(self).update(before)
            raise
        return self

    def _check_public(self, X) -> None:
        """The checks a ledger runs before it reserves a fit: X's type, shape and memory, and
        no ``keep_report=True`` (the report is the curator's, computed from the data)."""
        check_public_input(X)
        self._check_public_shape(X)
        refuse_kept_report(f"{type(self).__name__}.fit", {"keep_report": self.keep_report})

    def _milp_solver(self) -> bool:
        """Whether ``solver`` names a MILP solver (not ``"auto"`` or ``"enumerate"``): OPDisc's oracle then."""
        return not (isinstance(self.solver, str) and self.solver.strip().lower() in ("auto", "enumerate"))

    def _pure_only(self, ledger) -> bool:
        """Whether ``mechanism="auto"`` must choose a pure mechanism: the ledger in
        force (``ledger=``, else the enclosing ``with ledger:`` block's) has no delta
        left, and nothing else asks for OPDisc (``calibration="paper"``, a MILP
        solver).  The ledger's state is public (what was released before), so the
        choice it makes reads nothing of the data."""
        ledger = ledger if ledger is not None else current_ledger()
        if ledger is None or self.mechanism != "auto" or self.calibration != "proven":
            return False
        if self._milp_solver():
            return False
        return ledger.remaining.delta == 0.0

    def _ledger_spend(self, X, pure_only: bool = False) -> tuple[float, float]:
        """The (epsilon, delta) a ledger is charged, before any work: epsilon; delta
        0 for a pure mechanism (or ``mechanism="auto"`` held to one, ``pure_only``),
        else ``delta`` or 1/n^2 (n = len(X), public under
        replace-one); infinite epsilon when ``bounds`` is None and X's type does not say
        its features are whole numbers (the feature map could read the data's ranges: no
        epsilon covers it).  X's dtype is public; whether a float X holds whole numbers is
        not, so it is never read before the reservation."""
        epsilon = check_epsilon(self.epsilon)
        if pure_only or self.mechanism in ("rspm",) + _SELECTION:
            delta = 0.0
        else:
            delta = 1.0 / len(X) ** 2 if self.delta is None else check_delta(self.delta)
        return (math.inf if self.bounds is None and not _integer_typed(X) else epsilon), delta

    def _auto_choice(self, Xd, milp_solver: bool, pure_only: bool) -> tuple[str, str]:
        """``mechanism="auto"``: (the mechanism, why), from public quantities only (the
        calibration, the solver, |W|, n, d and the time limit: :func:`auto_mechanism`), held to
        a pure mechanism under a ledger with no delta left (``pure_only``)."""
        if self.calibration != "proven":
            return "opdisc", "calibration='paper' is OPDisc's"
        if milp_solver:
            return "opdisc", f"solver={self.solver!r} is a MILP solver: OPDisc"
        n = Xd.shape[0]
        n_points = self._public_size(Xd.shape[1])
        regions = self._public_topdown_regions(Xd)
        mechanism, why = auto_mechanism(
            n_points, n, Xd.shape[1] + int(bool(self.fit_intercept)), self.time_limit,
            None if regions is not None else self._public_sparse_work(Xd, n, n_points), topdown_regions=regions)
        if pure_only and mechanism not in _SELECTION:
            return "permute_and_flip", ("the privacy ledger in force has no delta left: a pure mechanism (auto "
                                        f"would have chosen OPDisc: {why})")
        return mechanism, why

    def _check_params(self) -> tuple[float, str, str, bool, object, bool]:
        """The constructor's parameters, checked before the data is read (and, under a
        ledger, before the fit is reserved): (epsilon, mechanism, calibration,
        keep_report, warm_start, whether ``solver`` names a MILP solver)."""
        epsilon = check_epsilon(self.epsilon)
        mechanism = check_choice(self.mechanism, "mechanism", _MECHANISMS)
        calibration = check_choice(self.calibration, "calibration", OPDISC_CALIBRATIONS)
        if mechanism in ("rspm",) + _SELECTION and calibration != "proven":
            raise ParameterError("calibration applies to mechanism='opdisc' only; leave it 'proven' "
                                 f"for {mechanism}.", "calibration")
        if mechanism != "auto" and mechanism not in MECHANISMS:
            raise ParameterError(f"mechanism {mechanism!r} is not available in this installation.", "mechanism")
        check_on_failure(self.on_failure)
        keep_report = check_bool(self.keep_report, "keep_report")
        if self.resolutions is not None:
            self._check_resolutions(2)      # the form, before the data is read (whatever the mechanism)
        warm_start = self._check_warm_start()
        if warm_start is True and (self.bounds is None or isinstance(self.bounds, str)):
            raise ParameterError("warm_start=True needs declared public bounds (the warm start's feature map "
                                 "clips to them); pass bounds=(lower, upper), or leave warm_start='auto'.",
                                 "warm_start")
        self._check_bounds_form()       # the form, before the data is read; the lengths once d is known
        self._check_integer_features_form()
        milp_solver = self._milp_solver()
        if milp_solver:
            check_solver_ready(self.solver)     # an unknown or missing solver, before any work
            if mechanism in _SELECTION:
                raise ParameterError(
                    f"solver: private selection scores W by privopt's enumeration; use solver='auto' "
                    f"(got {self.solver!r}), or mechanism='opdisc' for a MILP solver.", "solver")
        return epsilon, mechanism, calibration, keep_report, warm_start, milp_solver

    def _check_public_shape(self, X) -> None:
        """The fit's memory and width, refused from X's shape alone, before any value of X is
        read (and, under a ledger, before the reservation)."""
        _, mechanism, _, _, _, milp_solver = self._check_params()
        shape = public_shape(X)
        if shape is not None:
            self._check_fit_memory(shape, mechanism, milp_solver)
            _check_width(X)
            columns = getattr(X, "columns", None)       # the schema: public
            self._integer_columns(shape[1], None if columns is None else list(columns))

    def _fit(self, X, y, *, pure_only: bool = False):
        epsilon, mechanism, calibration, keep_report, warm_start, milp_solver = self._check_params()
        self._check_public_shape(X)
        Xa, classes, y_pm = validate_fit(self, X, y, classes=self.classes)
        bounds = self._resolved_bounds(Xa, X)      # once: every step below gets these arrays, in column order
        self.integer_features_ = self._integer_columns(Xa.shape[1], getattr(self, "feature_names_in_", None),
                                                       bounds)
        Xa = self._snapped(Xa)      # declared whole numbers, record by record (a new array)
        self._check_fit_memory(Xa.shape, mechanism, milp_solver)    # from n and d, before the features are built
        _check_width(Xa)
        if mechanism == "rspm":
            self._check_time_limit()
            self._check_rspm_outlook(Xa, epsilon)    # before the discretizer is fitted or anything solved
        Xd = self._transform(Xa, fitting=True, bounds=bounds)
        y = np.where(y_pm == 1, 1, -1)
        n = Xd.shape[0]
        delta = 1.0 / n**2 if self.delta is None else check_delta(self.delta)
        self._check_time_limit()

        mechanism, self.mechanism_reason_ = (self._auto_choice(Xd, milp_solver, pure_only) if mechanism == "auto"
                                             else (mechanism, "chosen by the caller"))
        self.mechanism_ = mechanism
        offered = self._resolve_ws(Xa, Xd, y, n, epsilon, mechanism, milp_solver, warm_start, bounds)
        self.warm_start_ = None if offered.warm is None else offered.warm.release
        self.epsilon_warm_start_ = 0.0 if offered.warm is None else offered.warm.epsilon
        selected = self._select(offered, Xd, y, mechanism, epsilon, delta, calibration)
        self._set_fitted(selected, keep_report, classes, epsilon)
        return self

    def _resolve_ws(self, Xa, Xd, y, n: int, epsilon: float, mechanism: str, milp_solver: bool, warm_start,
                    bounds) -> _OfferedWs:
        """The resolve step (with the warm start): the W's this fit offers, from public
        quantities (the ladder of resolutions capped by the budget rule, the warm start's W
        when its rule applies, the prior over them with the W's whose weight underflows left
        out), or none (``rungs`` None: the one W of the caller's grid, norm_bound and levels,
        or OPDisc and RSPM).  The warm start, when it runs, spends its share of epsilon here
        (its own release: objective perturbation) and the selection draws with the same
        generator after it."""
        if not self._uses_ladder(mechanism, milp_solver):
            return _OfferedWs(None, None, None, epsilon, self.random_state, None)
        candidates = self._ladder(Xa, Xd, n)
        ladder, sizes = self._capped(candidates[0], candidates[1], epsilon, n)
        eps_select, rng, warm = epsilon, self.random_state, None
        shares = split_warm_start_epsilon(epsilon, warm_start_share(epsilon, n))
        if self._warm_start_wanted(warm_start, sizes, shares[1], n):
            eps_warm, eps_select = shares
            ladder, sizes = self._capped(candidates[0], candidates[1], eps_select, n)
            rng = check_random_state(self.random_state)
            release, rung, size = self._warm_start_rung(Xa, y, eps_warm, rng, bounds)
            ladder, sizes = ladder + [rung], sizes + [size]
            warm = _WarmStart(release, eps_warm)
        prior = None
        if len(ladder) > 1:
            ladder, sizes, prior = _offered_with_prior(ladder, sizes, warm is not None, eps_select, n)
        return _OfferedWs(ladder, sizes, prior, eps_select, rng, warm)

    def _select(self, offered: _OfferedWs, Xd, y, mechanism: str, epsilon: float, delta: float,
                calibration: str) -> _Selected:
        """The select step: the release on the offered W's (private selection among them, or
        on the one offered), or on the one W of the caller's parameters (private selection,
        OPDisc or RSPM)."""
        if offered.rungs is not None and len(offered.rungs) > 1:
            return self._select_among(offered, y, mechanism, epsilon)
        if offered.rungs is not None:       # one resolution offered: the plain mechanism on its W
            res, Xr, disc = offered.rungs[0]
            model = self._zero_one_model(Xr, y, res, disc)
            result = MECHANISMS[mechanism](model, epsilon=epsilon, time_limit=self.time_limit,
                                           random_state=self.random_state, keep_report=True)
            return _Selected(result, model, res, (res,), disc, disc is not None)
        if mechanism in _SELECTION:
            model = self._zero_one_model(Xd, y)
            result = MECHANISMS[mechanism](model, epsilon=epsilon, time_limit=self.time_limit,
                                           random_state=self.random_state, keep_report=True)
            grid, D = self._ball(Xd.shape[1])
            resolution = (Resolution(int(self._levels_value()), int(grid), D)
                          if isinstance(grid, (int, np.integer)) and np.ndim(self._levels_value()) == 0 else None)
            return _Selected(result, model, resolution, (resolution,) if resolution is not None else ())
        if mechanism == "opdisc":
            model = self._zero_one_model(Xd, y)
            result = MECHANISMS["opdisc"](model, epsilon=epsilon, delta=delta, solver=self.solver,
                                          time_limit=self.time_limit, random_state=self.random_state,
                                          on_failure=self.on_failure, calibration=calibration, keep_report=True)
            return _Selected(result, model, None, ())
        if self.grid is not None or self.norm_bound is not None:
            raise ParameterError("grid and norm_bound apply to mechanism='opdisc' only; RSPM uses "
                                 "{-1, 0, 1}^d.", "grid" if self.grid is not None else "norm_bound")
        model = rspm_halfspace(Xd, y, fit_intercept=self.fit_intercept, classes=(-1, 1))
        result = MECHANISMS["rspm"](model, epsilon=epsilon, solver=self.solver,
                                    time_limit=self.time_limit, random_state=self.random_state,
                                    on_failure=self.on_failure, keep_report=True)
        return _Selected(result, model, None, ())

    def _select_among(self, offered: _OfferedWs, y, mechanism: str, epsilon: float) -> _Selected:
        """Private selection among the offered W's (:func:`privopt.mixture_selection` with the
        public prior), with ``offered.epsilon``; where a warm start ran, the fit's release is
        the sequential composition of the two (:func:`_with_warm_start`)."""
        ladder, sizes = offered.rungs, offered.sizes
        assert ladder is not None and sizes is not None     # the select step sends a ladder of two or more here
        models = self._zero_one_losses(ladder, y)
        result = mixture_selection(models, epsilon=offered.epsilon, method=mechanism, prior=offered.prior,
                                   time_limit=self.time_limit, random_state=offered.random_state, keep_report=True)
        r = result.parameters.resolution
        reason = (f"; W chosen privately among {len(ladder)} resolutions (|W_r| = "
                  f"{', '.join(f'{m:,}' for m in sizes)}) with the base measure "
                  f"pi_r / |W_r|, pi the {LADDER_PRIOR} prior")
        if offered.warm is not None:
            reason += (f"; the last W is a warm start's (objective perturbation with epsilon "
                       f"{offered.warm.epsilon:g}; the selection spent {offered.epsilon:g})")
            result = _with_warm_start(result, epsilon, offered)
        return _Selected(result, models[r], ladder[r][0], tuple(res for res, _, _ in ladder), ladder[r][2], True,
                         reason)

    def _set_fitted(self, selected: _Selected, keep_report: bool, classes, epsilon: float) -> None:
        """The last step: the fitted attributes from the release (the W it was drawn from,
        its feature map, the result kept without its report unless asked) and the linear
        model from its weights."""
        self.resolution_, self.resolutions_ = selected.resolution, selected.resolutions
        if selected.set_discretizer:
            self.discretizer_ = selected.discretizer
        self.mechanism_reason_ += selected.reason
        model, result = selected.model, selected.result
        info = model.info if isinstance(model, ZeroOneLoss) else get_info(model)
        self.model_info_ = info
        if self.discretizer_ is not None and getattr(self.discretizer_, "bounds", True) is None:
            # feature ranges read from the data: the release is not epsilon-DP, whatever was asked
            result = _without_guarantee(result, epsilon)
        # the solve's diagnostics depend on the data and the noise: not kept (nor pickled) unless asked
        self.result_ = result if keep_report else result.without_report()
        self.epsilon_spent_, self.delta_spent_ = float(result.epsilon), float(result.delta)
        self.neighbouring_ = result.neighbouring
        self.classes_ = np.asarray(classes)
        self._set_linear(np.asarray(result.weights, dtype=float), info)

    def decision_function(self, X):
        """<w, x> - theta on the discretized features; >= 0 predicts ``classes_[1]``."""
        check_fitted(self, "result_")
        Xd = self._transform(self._snapped(validate_predict(self, X)), fitting=False)
        if getattr(self, "resolution_", None) is not None:
            Xd = _with_wide_intercept(Xd, self.resolution_)
        return halfspace_decision_function(self.result_.weights, Xd, self.model_info_)

    def predict(self, X):
        scores = self.decision_function(X)
        return np.where(scores >= 0, self.classes_[1], self.classes_[0])


class WarmStartFeature:
    """The one feature of a warm start's W: the score <v, z(x)> of a private
    logistic regression v (its ``decision_function`` on the raw features,
    through its public feature map), clipped to [-F, F] with
    F = ||v||_2 / sqrt(dim v) and cut into ``levels`` centred steps
    {-L, -L+2, ..., L}.  With L odd (the default's 33) the score 0 lies on the
    boundary between the steps -1 and +1, so the point (weight 1, intercept 0)
    of W is v's own rule (a score of exactly 0 goes to the step below); with L
    even 0 is the middle of a step, and W cannot cut there.  The map gives
    ||z(x)|| <= 1, so |<v, z(x)>| <= ||v||_2, but scores spread over about
    ||v||_2 / sqrt(dim v) (z's entries are of
    size 1 / sqrt(dim v)): cutting [-||v||, ||v||] would leave most records in
    a few steps around v's boundary, where the threshold matters; records
    beyond F fall in the end steps.  A function of v alone (public once v is
    released), applied in ``fit`` and ``predict``.
    ``lower_``/``upper_``/``bounds`` are those of the raw features (for the
    clipping warning of the estimator)."""

    def __init__(self, model, levels: int, raw):
        self.model = model
        self.levels = int(levels)
        v = np.ravel(model.weights_)
        self.bound_ = max(float(np.linalg.norm(v)) / math.sqrt(v.size), 1e-12)
        self.bounds, self.lower_, self.upper_ = raw.bounds, raw.lower_, raw.upper_
        self._steps = FeatureDiscretizer(bounds=(-self.bound_, self.bound_), levels=self.levels,
                                         center=True).fit(np.zeros((1, 1)))

    def transform(self, Xa):
        with warnings.catch_warnings():     # the estimator warns of clipped features once, itself
            warnings.simplefilter("ignore", ClippedFeaturesWarning)
            score = np.clip(self.model.decision_function(Xa), -self.bound_, self.bound_)
        return self._steps.transform(score.reshape(-1, 1))


def _narrower(first: dict, Xr, res):
    """The loss, among ``first`` (id -> (features, loss)), on ``Xr`` without its last
    column where ``res`` widens the intercept and that column is L = ``res.levels`` in every
    record (:func:`_with_wide_intercept`), else None."""
    if not res.wide_intercept or Xr.ndim != 2 or Xr.shape[1] < 2:
        return None
    for X0, loss in reversed(first.values()):     # the latest first: the ladder widens the W before it
        if (X0.shape == (Xr.shape[0], Xr.shape[1] - 1) and np.all(Xr[:, -1] == float(res.levels))
                and np.array_equal(X0, Xr[:, :-1])):
            return loss
    return None


def _uncentred(first: dict, Xr, res):
    """The loss, among ``first`` (id -> (features, loss)), on the steps z of which ``Xr``
    holds the centred steps 2 z - L, L = ``res.levels`` (:func:`privopt.models.discretize_features`
    with ``center=True``), checked entry by entry, where ``res`` centres and does not widen
    the intercept, else None."""
    if not res.centered or res.wide_intercept or Xr.ndim != 2:
        return None
    for X0, loss in reversed(first.values()):     # the latest first: the ladder centres the W before it
        if X0.shape == Xr.shape and np.array_equal(_centred(X0, res.levels), Xr):
            return loss
    return None


def _centred(Xs, levels):
    """The centred steps 2 z - L (+ 0.0) of the steps z on {0..L}, the same floating-point
    operations as :func:`privopt.models.discretize_features` with ``center=True``."""
    return 2.0 * Xs - levels + 0.0


def _with_wide_intercept(Xd, res):
    """``Xd`` with the constant feature L = ``res.levels`` appended when the
    resolution widens the intercept (:class:`privopt.estimators.Resolution`), else ``Xd``."""
    if not res.wide_intercept:      # (a Resolution pickled before the field existed reads the default, False)
        return Xd
    return np.column_stack([Xd, np.full(Xd.shape[0], float(res.levels))])


class ZeroOneHalfspaceClassifier(PrivateHalfspaceClassifier):
    """The non-private 0/1-loss optimum on OPDisc's grid -- **NOT PRIVATE**.

    A reference point for :class:`PrivateHalfspaceClassifier`: the same
    features, grid and ball as its single default W (``resolutions=None``; by
    default the private estimator may release a finer resolution), and the same MILP
    (:func:`privopt.models.zero_one_halfspace`), solved without noise, so
    ``coef_`` minimizes the number of training errors over
    W = {w : w_j in grid, ||w||_2 <= D}.  The gap between this classifier and
    OPDisc is the price of privacy; the gap between it and a convex
    surrogate is the price of the grid.

    Parameters are those of :class:`PrivateHalfspaceClassifier` that shape the
    problem (``grid``, ``norm_bound``, ``bounds``, ``levels``,
    ``fit_intercept``, ``solver``, ``time_limit``); ``epsilon``, ``delta``,
    ``random_state`` are accepted so that every estimator can be built the same
    way, and ignored (``epsilon_spent_`` is ``inf``).  The non-private problem
    is often much harder for a MILP solver than the perturbed one (nothing
    breaks the ties among near-optimal halfspaces): when ``time_limit`` stops
    the solver, the best halfspace found is kept (``certified_`` is False) and
    ``train_error_bounds_`` brackets the optimum.

    Attributes
    ----------
    coef_, intercept_, threshold_ : as in :class:`PrivateHalfspaceClassifier`.
    report_ : SolveReport of the solve.
    certified_ : bool, True when the solver proved the optimum.
    train_error_bounds_ : (lower, upper) number of misclassified training
        records: the solver's proven bound and the incumbent's count.
    """

    #: Not private, but limited like the private estimator by the grid, the
    #: discretized features and (without ``fit_intercept``) a homogeneous
    #: halfspace: it may score below scikit-learn's test thresholds.
    _poor_score = True
    _deterministic = True

    def __init__(self, epsilon=None, delta=None, grid=None, norm_bound=None, bounds=None, levels=4,
                 fit_intercept=True, solver="auto", time_limit=120.0, random_state=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.grid = grid
        self.norm_bound = norm_bound
        self.bounds = bounds
        self.levels = levels
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.time_limit = time_limit
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X, y):
        """Solve the 0/1-loss MILP on (X, y) without noise.  Under a
        :class:`~privopt.PrivacyLedger` it is refused before the data is read."""
        with release(f"{type(self).__name__}.fit", "none", lambda: (math.inf, 0.0),
                     ledger=getattr(self, "ledger", None)):
            return self._fit_exact(X, y)

    def _fit_exact(self, X, y):
        self._check_time_limit()
        self._check_bounds_form()
        _check_width(X)
        Xa, classes, y_pm = validate_fit(self, X, y)
        _check_width(Xa)
        Xd = self._transform(Xa, fitting=True, bounds=self._resolved_bounds(Xa, X))
        model = self._zero_one_model(Xd, np.where(y_pm == 1, 1, -1))
        solver = choose_solver(model) if self.solver == "auto" else self.solver
        report = solve(model, solver, time_limit=self.time_limit)
        info = get_info(model)
        w = np.array([pyo.value(model.w[j]) for j in model.w], dtype=float)
        w = (np.round(w) if np.allclose(w, np.round(w), atol=1e-6) else w) + 0.0  # no -0.0
        self.model_info_ = info
        self.report_ = report
        self.certified_ = bool(report.certified_optimal)
        self.weights_ = w
        self.train_error_bounds_ = (None if report.bound is None else float(report.bound),
                                    None if report.objective is None else float(report.objective))
        self.classes_ = np.asarray(classes)
        self._set_linear(w, info)
        self.epsilon_spent_ = float("inf")
        self.delta_spent_ = 0.0
        return self

    def decision_function(self, X):
        """<w, x> - theta on the discretized features; >= 0 predicts ``classes_[1]``."""
        check_fitted(self, "weights_")
        Xd = self._transform(validate_predict(self, X), fitting=False)
        return halfspace_decision_function(self.weights_, Xd, self.model_info_)
