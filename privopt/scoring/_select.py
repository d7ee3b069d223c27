r"""Private selection of a scoring system, and the non-private optimum.

:func:`select_scoring_system` releases one (points, threshold) from the public
set W of :mod:`privopt.scoring._space` by the exponential mechanism [MT07] or
permute-and-flip [MS20]: with probability proportional to
exp(-epsilon err / 2) (EM), resp. permute-and-flip's law, where err counts the
training errors of the candidate.  The sensitivity of err under replace-one is
1, so both are pure epsilon-DP (delta = 0), and with probability 1 - beta

    err(released) - min_W err <= (2 / epsilon) (ln |W| + ln(1 / beta)).

They are sampled exactly by report-noisy-max drawn top down
(:mod:`privopt.search._topdown`): supports whose best possible key cannot
win are not scored, and the answer does not depend on how the supports are
split across workers.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from .._limits import LOCAL_SECONDS, SCORING_MAX_FEATURES, check_memory, check_width
from .._random import check_random_state
from .._validation import check_bool, check_epsilon, check_int, check_probability
from ..calibration import check_selection_method, selection_noise_scale, selection_utility_bound
from ..exceptions import ParameterError
from .._runtime import resolve_executor
from ..search import KeyedStreams, plan_shards, sample_top_down, search_optimum
from ..ledger import charges
from ..result import PrivateResult, curator_reports
from ..search import BOUND_ROWS_PER_SECOND
from ._engine import ScoringProblem, decode
from ._space import RecordTable, ScoreSpace, item_counts, largest_support_vectors

__all__ = ["select_scoring_system", "best_scoring_system", "ScoringReport", "predict_bound_seconds",
           "predict_support_seconds", "predict_space_bytes"]

# The lower-bound pass runs at BOUND_ROWS_PER_SECOND rows per second and core (numba
# kernel; a support over m distinct rows costs ~m): the kernel and constant of private
# selection on halfspace models (measured 1.4e8 to 5e8 under load, benchmarks/results/topdown.md).


#: Scoring one support (:meth:`privopt.scoring._engine.ScoringProblem.group_errors`)
#: costs about this much per points vector (building it) plus this much per unit of
#: its work k 2^k + k P (patterns, thresholds); measured with the numba kernel on 2,000
#: records: P = 20, k = 4: 1.5 s for 2.56e6 vectors; P = 12, k = 5: 6.8 s for 8e6;
#: P = 2000, k = 2: 43 s for 1.6e7 (predicted 1.5, 4.9 and 70 s).
_SECONDS_PER_VECTOR = 4e-7
_SECONDS_PER_VECTOR_UNIT = 1e-9


def _largest_support(n_features: int, max_points: int, max_items: int, signs) -> tuple[int, int]:
    """(k, the number of points vectors on the support of k items that has the
    most), from d, P and the signs alone (the counts of :class:`ScoreSpace`)."""
    k = min(int(max_items), int(n_features))
    return k, largest_support_vectors(item_counts(n_features, max_points, signs), k)


def predict_space_bytes(n_features: int, max_points: int, max_items: int, signs=None) -> int:
    """Bytes of W's largest allocations, from d, P, k and the signs alone: the
    value lists of the items (d x 2P) and the points vectors of the largest
    support, which the sampler builds whole when it scores that support
    ((2P)^k vectors of k entries, twice while they are built; without numba
    also a table of k P + 1 thresholds per vector)."""
    k, n_vec = _largest_support(n_features, max_points, max_items, signs)
    per_vector = 2 * 8 * k
    if importlib.util.find_spec("numba") is None:
        per_vector += 4 * 8 * (k * int(max_points) + 1)
    return int(n_features) * 2 * int(max_points) * 8 + n_vec * per_vector


def predict_support_seconds(space: ScoreSpace) -> float:
    """Predicted seconds to score the largest support of W once (every points
    vector with every threshold), on one core: the sampler does this for
    every support whose lower bound does not rule it out, and the supports of
    k items hold most of W."""
    if space.k == 0:
        return 0.0
    n_vec = space.n_vectors(space.k)
    unit = space.k * (1 << space.k) + space.k * space.P
    return n_vec * (_SECONDS_PER_VECTOR + unit * _SECONDS_PER_VECTOR_UNIT)


class ScoringReport:
    """Diagnostics of one fit (NOT private: they depend on the data).

    ``regions_expanded`` / ``groups_expanded``: supports and points vectors
    that were scored exactly (the rest were pruned by their bound),
    ``n_regions``, ``n_shards``, ``wall_time``, ``predicted_bound_time``."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"ScoringReport({items})"


def predict_bound_seconds(space: ScoreSpace, n_rows: int) -> float:
    """Predicted seconds of the lower-bound pass on one core: every support
    reads every distinct row once (public: d, k and the number of rows)."""
    return space.n_regions * max(1, n_rows) / BOUND_ROWS_PER_SECOND


def check_space(n_features: int, max_points, max_items, signs) -> ScoreSpace:
    """The public W for ``n_features`` items, with clear errors."""
    P = check_int(max_points, "max_points", minimum=1)
    k = check_int(max_items, "max_items", minimum=1)
    if signs is None:
        s = None
    else:
        s = np.asarray(signs)
        if s.shape != (n_features,) or not np.isin(s, (-1, 0, 1)).all():
            raise ParameterError(f"signs: expected {n_features} entries in {{-1, 0, +1}} (one per item: "
                                 "+1 = can only add points, -1 = only subtract, 0 = either), "
                                 f"got {np.asarray(signs).tolist()!r}.", "signs")
    # W's tables grow like d P and (2P)^k: refused here, before any of them is built
    size_param = "max_points" if P > 5 else "max_items"
    k_eff, n_vec = _largest_support(n_features, P, k, s)
    check_memory(
        predict_space_bytes(n_features, P, k, s), size_param,
        f"W with max_points={P} and max_items={k} (the {n_vec:,} points vectors of one support of {k_eff} items, "
        "which the sampler builds whole when it scores that support)",
        "Use a smaller max_points (a scoring system read by hand has a few points per item: the default is 5) "
        "or fewer max_items.")
    return ScoreSpace(n_features, P, k, s)


def check_scoring_width(X, name: str = "X") -> None:
    """Refuse, from X's shape alone, more items than a scoring system takes
    (:data:`privopt._limits.SCORING_MAX_FEATURES`), before X is read."""
    check_width(X, what="a scoring system (C(d, max_items) supports of points)", max_features=SCORING_MAX_FEATURES,
                parameter=name, fix="Give fewer items (select the binary features worth a point beforehand).")


def check_binary_matrix(X, name: str = "X") -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ParameterError(f"{name}: expected a 2-D array of 0/1 items with at least one row, got shape "
                             f"{X.shape}.", name)
    if not np.isin(X, (0, 1)).all():
        raise ParameterError(
            f"{name}: scoring systems take binary items (0/1); found other values. Binarize numeric columns "
            "with public thresholds first (privopt.scoring.ThresholdBinarizer).", name)
    return X.astype(np.uint8)


def _public(X01, y01, *, epsilon, max_points=5, max_items=5, signs=None, method="permute_and_flip", beta=0.05,
            keep_report=False, **_ignored) -> None:
    """The selection's checks of its scalar arguments and of X01's public shape (W's
    size and memory), reading no value of the data: run before a ledger reserves the
    call (:func:`privopt.ledger.charges`), and again by :func:`select_scoring_system`."""
    check_epsilon(epsilon)
    check_selection_method(method)
    check_probability(beta, "beta")
    check_bool(keep_report, "keep_report")
    shape = getattr(X01, "shape", None)
    if shape is not None and len(shape) == 2:
        check_space(int(shape[1]), max_points, max_items, signs)


@charges("select_scoring_system", pure=True, check=_public)
@curator_reports
def select_scoring_system(X01, y01, *, epsilon, max_points=5, max_items=5, signs=None,
                          method="permute_and_flip", beta=0.05, random_state=None, executor=None,
                          progress=None, time_limit=None, feature_names=None, keep_report=False) -> PrivateResult:
    """Release a scoring system (points vector and threshold) privately.

    Parameters
    ----------
    X01 : array (n, d) of 0/1
        The binary items.
    y01 : array (n,) of 0/1
        The labels (1 = the positive class).
    epsilon : float
        Pure epsilon-DP under replace-one (delta = 0).
    max_points, max_items, signs
        W: points in -P..P per item, at most ``max_items`` items, optional
        per-item signs (+1 only adds points, -1 only subtracts, 0 either).
    method : {"permute_and_flip", "exponential"}
    executor : None, "local", a concurrent.futures Executor, a dask Client or "ray"
        Where the shards of supports run.  None: in this process when the
        predicted time is short, else a local process pool.  The released
        point is the same on every executor for the same seed.
    time_limit : float or None
        Refuse, before any scoring, when the predicted lower-bound pass alone
        exceeds it.
    keep_report : bool, default False
        Return the report (below), the data curator's diagnostics, as in
        :func:`privopt.exponential_mechanism` (refused under a ledger).

    Returns
    -------
    PrivateResult
        ``weights`` = (points..., threshold); ``parameters`` holds the
        sensitivity (1), ``noise_scale`` 2/epsilon, ``n_points`` |W| and
        ``alpha`` the utility bound above.  ``report`` (not private; only with
        ``keep_report=True``, else None) says how much of W was scored.
    """
    epsilon = check_epsilon(epsilon)
    method = check_selection_method(method)
    beta = check_probability(beta, "beta")
    check_bool(keep_report, "keep_report")
    check_scoring_width(X01)
    X01 = check_binary_matrix(X01)
    y01 = np.asarray(y01).astype(int)
    space = check_space(X01.shape[1], max_points, max_items, signs)
    table = RecordTable.from_arrays(X01, y01)
    predicted = predict_bound_seconds(space, X01.shape[0])
    if time_limit is not None and predicted > time_limit:
        raise ParameterError(
            f"time_limit: bounding the {space.n_regions:,} supports of W on {X01.shape[0]:,} records is "
            f"predicted to take ~{predicted:,.0f} s on one core, more than time_limit={time_limit:g}. Use fewer "
            "items (max_items) or features, or shard on more workers (executor=...).", "time_limit")
    one_support = predict_support_seconds(space)
    if time_limit is not None and one_support > time_limit:
        raise ParameterError(
            f"time_limit: scoring one support of {space.k} items (its {space.n_vectors(space.k):,} points vectors, "
            f"each with its thresholds; the sampler scores every support whose bound does not rule it out, and the "
            f"supports of {space.k} items hold most of W) is predicted "
            f"to take ~{one_support:,.3g} s on one core, more than time_limit={time_limit:g}. Use a smaller "
            "max_points or fewer max_items.", "time_limit")
    rng = check_random_state(random_state)
    streams = KeyedStreams(rng)
    scale = selection_noise_scale(epsilon, 1.0)
    n_points = space.size()
    problem = ScoringProblem(space, table)
    if progress is None:
        progress = predicted > 10.0
    best, stats, wall = sample_top_down(problem, streams, method, scale, executor=executor, predicted=predicted,
                                        progress=progress, desc=f"privopt scoring system ({method})",
                                        local_seconds=LOCAL_SECONDS)
    support, vec, threshold = decode(space, table, *best[1:])
    coef = np.zeros(space.d)
    coef[support] = vec
    labels = tuple(feature_names) if feature_names is not None else tuple(range(space.d))
    parameters = {
        "method": method,
        "sensitivity": 1.0,
        "noise_scale": scale,
        "n_points": n_points,
        "alpha": selection_utility_bound(epsilon, 1.0, n_points, beta),
        "beta": beta,
        "n_samples": int(X01.shape[0]),
        "max_points": space.P,
        "max_items": space.k,
        "path": "topdown",
        "noise_distribution": "Gumbel(0, 1) per point" if method == "exponential" else "Exponential(1) per point",
    }
    report = ScoringReport(regions_expanded=stats[0], groups_expanded=stats[1], n_regions=space.n_regions,
                           n_shards=len(plan_shards(problem)), wall_time=wall, predicted_bound_time=predicted)
    return PrivateResult(weights=np.append(coef, threshold), mechanism=method, epsilon=epsilon, delta=0.0,
                         parameters=parameters, report=report, certified=True,
                         labels=labels + ("threshold",))


def best_scoring_system(X01, y01, *, max_points=5, max_items=5, signs=None, executor="local",
                        progress=False):
    """The exact non-private 0/1 optimum over the same W (NOT private):
    ``(coef, threshold, errors)``, smallest errors first, then the first
    support, points vector and threshold in W's order."""
    X01 = check_binary_matrix(X01)
    y01 = np.asarray(y01).astype(int)
    space = check_space(X01.shape[1], max_points, max_items, signs)
    table = RecordTable.from_arrays(X01, y01)
    problem = ScoringProblem(space, table)
    shards = plan_shards(problem)
    ex, owned = resolve_executor(executor, predict_bound_seconds(space, X01.shape[0]), len(shards), LOCAL_SECONDS)
    try:
        best = search_optimum(problem, executor=ex, progress=progress, desc="privopt 0/1 optimum")[0]
    finally:
        if owned:
            ex.shutdown()
    support, vec, threshold = decode(space, table, *best[1:])
    coef = np.zeros(space.d, dtype=np.int64)
    coef[support] = vec
    return coef, threshold, int(best[0])
