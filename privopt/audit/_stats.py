r"""Statistics of the audit: a lower confidence bound on epsilon from samples.

A mechanism M is (epsilon, delta)-DP when, for every pair of neighbouring
data sets D, D' and every set S of outputs,

    P[M(D) in S] <= e^epsilon P[M(D') in S] + delta.

So for ANY fixed event S and any true probabilities p1 = P[M(D) in S],
p2 = P[M(D') in S] the mechanism's epsilon is at least

    eps(S) = ln((p1 - delta) / p2).

From n1 runs on D with k1 outputs in S and n2 runs on D' with k2 in S, the
Clopper-Pearson bounds give p1 >= p1_lower and p2 <= p2_upper, each with
probability >= 1 - alpha/2, so with probability >= 1 - alpha

    epsilon >= ln((p1_lower - delta) / p2_upper)  =: eps_lb(S)

(both directions: S is also tried with D and D' swapped).  A *lower* bound on
the mechanism's epsilon: an audit can prove a violation (eps_lb above the
claimed epsilon), never privacy.

Choosing S.  Taking the max of eps_lb(S) over many events S computed on the
same samples is biased upward.  Two valid ways are offered:

* ``selection="split"`` (default): the runs are split in two independent
  halves.  The event (and direction) with the largest eps_lb on the first
  half is chosen among the candidates -- single outputs (or buckets), the
  Neyman-Pearson sets {o : p1(o)/p2(o) >= t} for every threshold t (ordered
  by the first half's smoothed likelihood ratio, which holds the optimal
  event for every delta) and, for one-dimensional bucketed outputs, the
  half-lines.  Only that one event is evaluated on the second half, at
  level alpha.  No correction is needed because the event does not depend
  on the second half.
* ``selection="bonferroni"``: every candidate event of a family fixed in
  advance (all nonempty proper subsets of the declared support when it has
  at most 12 elements, else single outputs, their complements and
  half-lines) is evaluated on all the runs, each bound at level
  alpha / (2 * number of hypotheses), and the max is taken (union bound).
  The support (or the bucket edges) must then be given a priori.

Continuous outputs are bucketed (``bins``): per coordinate, by edges given in
advance or, with ``selection="split"``, by quantiles of the pooled first
half; buckets are [e_i, e_(i+1)) and the outer ones extend to -inf and +inf
so every output lands in one.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .._frozen import FrozenDict
from .._validation import check_choice, check_delta, check_int, check_probability, check_real
from ..exceptions import ParameterError, ParameterTypeError

__all__ = ["clopper_pearson", "estimate_epsilon", "AuditResult", "MAX_SUBSET_LABELS"]

#: With ``selection="bonferroni"``, every subset of the support is a candidate
#: event when the support has at most this many elements.
MAX_SUBSET_LABELS = 12


# ---------------------------------------------------------------------------
# Clopper-Pearson
# ---------------------------------------------------------------------------

def _cp_lower(k, n, alpha):
    """One-sided (1 - alpha) lower Clopper-Pearson bound (vectorized)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, out)


def _cp_upper(k, n, alpha):
    """One-sided (1 - alpha) upper Clopper-Pearson bound (vectorized)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, out)


def clopper_pearson(k, n, confidence: float = 0.95, side: str = "two-sided"):
    """Exact (Clopper-Pearson) confidence bounds for a binomial proportion.

    ``k`` successes out of ``n`` trials.  ``side="two-sided"`` returns
    ``(lower, upper)`` covering p with probability >= ``confidence``
    (alpha/2 in each tail); ``"lower"`` / ``"upper"`` return the one-sided
    bound at level ``confidence``.  Uses :func:`scipy.stats.beta` quantiles:
    lower = Beta(alpha; k, n - k + 1) (0 when k = 0), upper =
    Beta(1 - alpha; k + 1, n - k) (1 when k = n).
    """
    confidence = check_probability(confidence, "confidence")
    side = check_choice(side, "side", ("two-sided", "lower", "upper"))
    k_arr = np.asarray(k)
    n_arr = np.asarray(n)
    if not (np.issubdtype(k_arr.dtype, np.integer) and np.issubdtype(n_arr.dtype, np.integer)):
        raise ParameterTypeError("k and n must be integers (counts).", "k")
    if np.any(n_arr < 1) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ParameterError("counts must satisfy 0 <= k <= n and n >= 1.", "k")
    alpha = 1.0 - confidence
    if side == "lower":
        return _scalar(_cp_lower(k_arr, n_arr, alpha))
    if side == "upper":
        return _scalar(_cp_upper(k_arr, n_arr, alpha))
    return _scalar(_cp_lower(k_arr, n_arr, alpha / 2)), _scalar(_cp_upper(k_arr, n_arr, alpha / 2))


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _eps_bound(k1, n1, k2, n2, delta, alpha_each):
    """eps_lb = ln((p1_lower - delta) / p2_upper), -inf when p1_lower <= delta."""
    p1 = _cp_lower(k1, n1, alpha_each)
    p2 = _cp_upper(k2, n2, alpha_each)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log((p1 - delta) / p2)
    return np.where(p1 > delta, val, -np.inf), p1, p2


def _point_eps(k1, n1, k2, n2, delta):
    """ln((k1/n1 - delta) / (k2/n2)): the plug-in estimate (inf when k2 = 0)."""
    p1, p2 = k1 / n1, k2 / n2
    if p1 <= delta:
        return -math.inf
    if p2 == 0:
        return math.inf
    return math.log((p1 - delta) / p2)


# ---------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditResult:
    """The outcome of an empirical privacy audit.

    Attributes
    ----------
    epsilon_lower_bound : float
        With probability >= ``confidence`` the mechanism's epsilon (at the
        stated ``delta``, for this pair of neighbours) is at least this
        (clamped at 0).
    claimed_epsilon : float or None
        The epsilon the mechanism claims; ``violation`` compares with it.
    delta : float
    confidence : float
    n_samples : (int, int)
        Runs on D and on D'.
    n_selection, n_evaluation : (int, int)
        Runs used to choose the event and to bound its probabilities
        (``selection="split"``; with ``"bonferroni"`` every run is used for
        both and ``n_selection`` is ``(0, 0)``).
    selection : str
    n_candidate_events : int
        Events (times two directions) compared; with ``"bonferroni"`` the
        union bound divides alpha by twice the number of hypotheses.
    worst_event : str
        The event S that gave the bound, in words, and its direction:
        ``"P[M(D) in S] vs P[M(D') in S]"`` or the reverse.
    worst_event_labels : tuple
        The outputs (or buckets) in S, as labels of the histograms.
    direction : str
        ``"D,D'"``: the bound is ln((P[M(D) in S] - delta) / P[M(D') in S]);
        ``"D',D"``: D and D' swapped.
    counts : (int, int, int, int)
        (k1, n1, k2, n2) of the evaluated event.
    p1_lower, p2_upper : float
        The Clopper-Pearson bounds used.
    event_epsilon_estimate : float
        The plug-in estimate ln((k1/n1 - delta) / (k2/n2)) of the same event.
    event_epsilon_interval : (float, float)
        (lower, upper) for eps(S) of the evaluated event: each end holds with
        probability >= ``confidence`` (the lower end is ``epsilon_lower_bound``
        before clamping at 0; the upper end uses the other Clopper-Pearson
        tails, p1_upper and p2_lower).  An interval for this one event, not an
        upper bound on the mechanism's epsilon.
    histogram, histogram_prime : mapping label -> count
        Empirical output histograms on D and on D' (all runs).
    labels : tuple
        The labels in histogram order (outputs, or bucket descriptions).
    metadata : mapping
        Mechanism, variant, oracle, instance, parameters, seconds, ...
    """

    epsilon_lower_bound: float
    claimed_epsilon: float | None
    delta: float
    confidence: float
    n_samples: tuple
    n_selection: tuple
    n_evaluation: tuple
    selection: str
    n_candidate_events: int
    worst_event: str
    worst_event_labels: tuple
    direction: str
    counts: tuple
    p1_lower: float
    p2_upper: float
    event_epsilon_estimate: float
    event_epsilon_interval: tuple
    histogram: Any
    histogram_prime: Any
    labels: tuple
    metadata: Any = field(default_factory=dict)

    def __post_init__(self):
        for name in ("histogram", "histogram_prime", "metadata"):
            object.__setattr__(self, name, FrozenDict(getattr(self, name)))

    @property
    def violation(self) -> bool:
        """True when the lower bound exceeds the claimed epsilon: with
        probability >= ``confidence`` the mechanism is NOT
        (claimed_epsilon, delta)-DP."""
        return self.claimed_epsilon is not None and self.epsilon_lower_bound > self.claimed_epsilon

    def as_row(self) -> dict:
        """A flat dict (for a CSV row)."""
        meta = dict(self.metadata)
        return {
            "mechanism": meta.get("mechanism", ""),
            "variant": meta.get("variant", ""),
            "instance": meta.get("instance", ""),
            "oracle": meta.get("oracle", ""),
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "confidence": self.confidence,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "event_epsilon_estimate": self.event_epsilon_estimate,
            "event_epsilon_ci_low": self.event_epsilon_interval[0],
            "event_epsilon_ci_high": self.event_epsilon_interval[1],
            "violation": self.violation,
            "n_samples": self.n_samples[0],
            "n_evaluation": self.n_evaluation[0],
            "selection": self.selection,
            "worst_event": self.worst_event,
            "k1": self.counts[0], "n1": self.counts[1], "k2": self.counts[2], "n2": self.counts[3],
            "seconds": meta.get("seconds", float("nan")),
        }

    def __str__(self) -> str:
        claim = "" if self.claimed_epsilon is None else (
            f" (claimed {self.claimed_epsilon:g}: {'VIOLATION' if self.violation else 'no violation'})")
        return (f"AuditResult(epsilon >= {self.epsilon_lower_bound:.4g} with confidence "
                f"{self.confidence:g}{claim}; delta={self.delta:g}; worst event {self.worst_event}; "
                f"counts {self.counts}; n={self.n_samples})")


# ---------------------------------------------------------------------------
# Labelling outputs
# ---------------------------------------------------------------------------

def _as_outputs(x, name):
    try:
        arr = np.array(x, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be an array of outputs: {exc}", name) from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ParameterError(f"{name} must have shape (n_runs,) or (n_runs, d), got {arr.shape}.", name)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} contains NaN or infinite outputs.", name)
    return arr


def _fmt(v):
    return f"{v:g}"


class _Discrete:
    """Labels = a fixed list of output vectors plus 'other'."""

    ordered = False

    def __init__(self, support):
        self.support = np.unique(np.asarray(support, dtype=float), axis=0)
        self.names = tuple("(" + ", ".join(_fmt(v) for v in row) + ")" for row in self.support) + ("other",)

    def labels(self, X):
        K = len(self.support)
        out = np.full(X.shape[0], K, dtype=np.int64)
        if K == 0 or X.shape[1] != self.support.shape[1]:
            return out
        # exact match of rows (outputs of discrete mechanisms are exact grid values)
        if K <= 64:
            for start in range(0, X.shape[0], 50_000):
                block = X[start:start + 50_000]
                eq = np.all(block[:, None, :] == self.support[None, :, :], axis=2)
                hit = eq.any(axis=1)
                out[start:start + block.shape[0]] = np.where(hit, eq.argmax(axis=1), K)
            return out
        both = np.vstack([self.support, X])
        _, inv = np.unique(both, axis=0, return_inverse=True)
        inv = np.asarray(inv).reshape(-1)
        code_of = np.full(inv.max() + 1, K, dtype=np.int64)
        code_of[inv[:K]] = np.arange(K)
        return code_of[inv[K:]]


class _Buckets:
    """Per-coordinate buckets (-inf, e_1), [e_1, e_2), ..., [e_k, inf).

    Left-closed, so that an edge placed at an atom of the output distribution
    (a quantile equal to a value many runs share) isolates the atom from the
    values just below it."""

    def __init__(self, edges):
        self.edges = [np.asarray(e, dtype=float) for e in edges]
        self.ordered = len(self.edges) == 1
        per_coord = []
        for j, e in enumerate(self.edges):
            bounds = [-math.inf] + e.tolist() + [math.inf]
            per_coord.append([f"w{j}" + (f" in [{_fmt(a)}, {_fmt(b)})" if math.isfinite(b) else f" >= {_fmt(a)}")
                              if math.isfinite(a) else f"w{j} < {_fmt(b)}" for a, b in zip(bounds[:-1], bounds[1:])])
        self.names = tuple(" & ".join(c) for c in itertools.product(*per_coord))
        self.sizes = [len(e) + 1 for e in self.edges]

    def labels(self, X):
        if X.shape[1] != len(self.edges):
            raise ParameterError(f"bins give edges for {len(self.edges)} coordinates but outputs have "
                                 f"{X.shape[1]}.", "bins")
        idx = [np.searchsorted(e, X[:, j], side="right") for j, e in enumerate(self.edges)]
        return np.ravel_multi_index(idx, self.sizes).astype(np.int64)


def _explicit_edges(bins, d):
    """``bins`` given as edges: one increasing sequence (d = 1) or one per coordinate."""
    seq = list(bins)
    nested = len(seq) > 0 and all(np.ndim(s) == 1 for s in seq)
    per = seq if nested else [seq]
    if len(per) != d:
        raise ParameterError(f"bins: give one sequence of edges per output coordinate ({d}).", "bins")
    out = []
    for e in per:
        arr = np.asarray(e, dtype=float)
        if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)) or np.any(np.diff(arr) <= 0):
            raise ParameterError("bins: edges must be finite and strictly increasing.", "bins")
        out.append(arr)
    return out


def _quantile_edges(pool, k):
    edges = []
    for j in range(pool.shape[1]):
        q = np.quantile(pool[:, j], np.linspace(0, 1, k + 1)[1:-1])
        edges.append(np.unique(q))
    return edges


def _labeller(bins, support, pool, d, selection):
    if bins is None:
        if support is None:
            if selection == "bonferroni":
                raise ParameterError(
                    "support: with selection='bonferroni' the set of possible outputs must be given in "
                    "advance (support=...), or use selection='split'.", "support")
            support = pool
        sup = np.asarray(support, dtype=float)
        if sup.ndim == 1:
            sup = sup[:, None]
        if sup.ndim != 2 or sup.shape[1] != d:
            raise ParameterError(f"support must have shape (k, {d}).", "support")
        return _Discrete(sup)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        k = check_int(bins, "bins", minimum=2)
        if selection == "bonferroni":
            raise ParameterError("bins: with selection='bonferroni' give the bucket edges in advance "
                                 "(a sequence), not a number of buckets.", "bins")
        return _Buckets(_quantile_edges(pool, k))
    if isinstance(bins, (str, bytes)) or not hasattr(bins, "__len__"):
        raise ParameterTypeError("bins must be None (discrete outputs), an int or a sequence of edges.", "bins")
    return _Buckets(_explicit_edges(bins, d))


# ---------------------------------------------------------------------------
# Candidate events
# ---------------------------------------------------------------------------

def _selected_candidates(ca, cb, na, nb, ordered):
    """Candidate events (boolean rows over the K labels) from first-half counts."""
    K = ca.size
    rows = set()
    for k in range(K):
        rows.add((k,))
    ra = (ca + 0.5) / (na + 1.0)
    rb = (cb + 0.5) / (nb + 1.0)
    for ratio in (ra / rb, rb / ra):
        order = np.argsort(-ratio, kind="stable")
        for j in range(1, K):
            rows.add(tuple(sorted(order[:j].tolist())))
    if ordered:
        for j in range(1, K):
            rows.add(tuple(range(j)))
            rows.add(tuple(range(j, K)))
    return _membership(sorted(rows), K)


def _a_priori_candidates(K, ordered):
    rows = set()
    if K <= MAX_SUBSET_LABELS:
        for r in range(1, K):
            rows.update(itertools.combinations(range(K), r))
    else:
        for k in range(K):
            rows.add((k,))
            rows.add(tuple(i for i in range(K) if i != k))
        if ordered:
            for j in range(1, K):
                rows.add(tuple(range(j)))
                rows.add(tuple(range(j, K)))
    return _membership(sorted(rows), K)


def _membership(rows, K):
    M = np.zeros((len(rows), K), dtype=bool)
    for i, r in enumerate(rows):
        M[i, list(r)] = True
    return M


def _describe(mask, names):
    inside = [names[i] for i in np.nonzero(mask)[0]]
    return "{" + ", ".join(inside) + "}"


# ---------------------------------------------------------------------------
# estimate_epsilon
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _ChosenEvent:
    """The event S an audit bounds epsilon on and the runs that count for it."""

    lab: Any                 #: the labeller of the outputs (_Discrete or _Buckets)
    mask: np.ndarray         #: which labels S holds
    swap: bool               #: the direction D', D (S likelier under D')
    counts: tuple            #: (k1, n1, k2, n2): runs in S and runs, the likelier side first
    n_events: int            #: candidate events (each in two directions)
    alpha_each: float        #: the level of each one-sided Clopper-Pearson bound
    n_selection: tuple       #: runs on D and D' that chose S
    n_evaluation: tuple      #: runs on D and D' that count S


def _ordered_counts(swap, k_a, n_a, k_b, n_b) -> tuple:
    """``(k1, n1, k2, n2)``: the direction's first data set's counts first."""
    return (k_b, n_b, k_a, n_a) if swap else (k_a, n_a, k_b, n_b)


def _split_event(A, B, bins, support, selection_fraction, delta, alpha) -> _ChosenEvent:
    """``selection="split"``: the event and direction chosen on the first
    ``selection_fraction`` of each side's runs (the largest lower bound at the
    evaluation's level, else the largest smoothed ratio), counted on the rest."""
    sa, sb = int(A.shape[0] * selection_fraction), int(B.shape[0] * selection_fraction)
    if min(sa, sb, A.shape[0] - sa, B.shape[0] - sb) < 1:
        raise ParameterError("split selection needs at least 2 runs on each data set.", "outputs")
    A_sel, A_ev, B_sel, B_ev = A[:sa], A[sa:], B[:sb], B[sb:]
    lab = _labeller(bins, support, np.vstack([A_sel, B_sel]), A.shape[1], "split")
    K = len(lab.names)
    ca_sel = np.bincount(lab.labels(A_sel), minlength=K)
    cb_sel = np.bincount(lab.labels(B_sel), minlength=K)
    M = _selected_candidates(ca_sel, cb_sel, sa, sb, lab.ordered)
    ea, eb = M @ ca_sel, M @ cb_sel
    # score every (event, direction) on the first half, at the evaluation's level
    s_ab, _, _ = _eps_bound(ea, sa, eb, sb, delta, alpha / 2)
    s_ba, _, _ = _eps_bound(eb, sb, ea, sa, delta, alpha / 2)
    scores = np.concatenate([s_ab, s_ba])
    if np.all(np.isneginf(scores)):
        # nothing informative: take the largest smoothed ratio
        ra = (ea + 0.5) / (sa + 1.0)
        rb = (eb + 0.5) / (sb + 1.0)
        scores = np.concatenate([np.log(ra / rb), np.log(rb / ra)])
    best = int(np.argmax(scores))
    swap = best >= M.shape[0]
    mask = M[best % M.shape[0]]
    la, lb_ = lab.labels(A_ev), lab.labels(B_ev)
    k_a, k_b = int(np.isin(la, np.nonzero(mask)[0]).sum()), int(np.isin(lb_, np.nonzero(mask)[0]).sum())
    n_a, n_b = A_ev.shape[0], B_ev.shape[0]
    return _ChosenEvent(lab, mask, swap, _ordered_counts(swap, k_a, n_a, k_b, n_b), M.shape[0], alpha / 2,
                        (sa, sb), (n_a, n_b))


def _a_priori_event(A, B, bins, support, delta, alpha) -> _ChosenEvent:
    """``selection="bonferroni"``: every candidate event of the fixed labels, in both
    directions, bounded at alpha / (4 * events); the largest bound's event."""
    lab = _labeller(bins, support, None, A.shape[1], "bonferroni")
    K = len(lab.names)
    M = _a_priori_candidates(K, lab.ordered)
    ca, cb = np.bincount(lab.labels(A), minlength=K), np.bincount(lab.labels(B), minlength=K)
    ea, eb = M @ ca, M @ cb
    n_events = M.shape[0]
    alpha_each = alpha / (2 * 2 * n_events)
    s_ab, _, _ = _eps_bound(ea, A.shape[0], eb, B.shape[0], delta, alpha_each)
    s_ba, _, _ = _eps_bound(eb, B.shape[0], ea, A.shape[0], delta, alpha_each)
    scores = np.concatenate([s_ab, s_ba])
    best = int(np.argmax(scores))
    swap = best >= n_events
    mask = M[best % n_events]
    k_a, k_b = int(ea[best % n_events]), int(eb[best % n_events])
    n_a, n_b = A.shape[0], B.shape[0]
    return _ChosenEvent(lab, mask, swap, _ordered_counts(swap, k_a, n_a, k_b, n_b), n_events, alpha_each,
                        (0, 0), (n_a, n_b))


def _eps_upper(k1, n1, k2, n2, delta, alpha_each) -> float:
    """The other end of a two-sided interval for eps(S) of this event:
    log((p1_hi - delta) / p2_lo) from the Clopper-Pearson upper bound on p1 and the
    lower bound on p2 (-inf where p1_hi <= delta, inf where p2_lo = 0)."""
    p1_hi = float(_cp_upper(np.array([k1]), n1, alpha_each)[0])
    p2_lo = float(_cp_lower(np.array([k2]), n2, alpha_each)[0])
    if p1_hi <= delta:
        return -math.inf
    if p2_lo <= 0:
        return math.inf
    return math.log((p1_hi - delta) / p2_lo)


def estimate_epsilon(
    outputs,
    outputs_prime,
    *,
    delta: float,
    claimed_epsilon: float | None = None,
    confidence: float = 0.95,
    selection: str = "split",
    bins=None,
    support=None,
    selection_fraction: float = 0.5,
    metadata: dict | None = None,
) -> AuditResult:
    """A lower confidence bound on epsilon from runs of a mechanism on two
    neighbouring data sets (see the module docstring for the method).

    Parameters
    ----------
    outputs, outputs_prime : array (n_runs,) or (n_runs, d)
        Independent outputs of the mechanism on D and on D'.
    delta : float
        The mechanism's delta (0 allowed, for pure DP).
    claimed_epsilon : float, optional
        The epsilon the mechanism claims (sets ``result.violation``).
    confidence : float
        1 - alpha; the bound holds with at least this probability.
    selection : {"split", "bonferroni"}
        How the event S is chosen without selection bias.
    bins : None, int or sequence
        None: outputs are discrete (each distinct output vector is a label).
        An int k (``"split"`` only): k quantile buckets per coordinate from
        the first half.  A sequence of inner edges (one per coordinate for
        d > 1): fixed buckets.
    support : array (k, d), optional
        The possible outputs of a discrete mechanism (required with
        ``"bonferroni"``; with ``"split"`` the first half's distinct outputs
        are used).  Outputs outside it share one label, ``"other"``.
    selection_fraction : float
        Share of the runs used to choose the event (``"split"``).
    """
    A = _as_outputs(outputs, "outputs")
    B = _as_outputs(outputs_prime, "outputs_prime")
    if A.shape[1] != B.shape[1]:
        raise ParameterError("outputs and outputs_prime must have the same number of coordinates.", "outputs_prime")
    delta = check_delta(delta, allow_zero=True)
    if claimed_epsilon is not None:
        claimed_epsilon = check_real(claimed_epsilon, "claimed_epsilon")
    confidence = check_probability(confidence, "confidence")
    selection = check_choice(selection, "selection", ("split", "bonferroni"))
    selection_fraction = check_probability(selection_fraction, "selection_fraction")
    alpha = 1.0 - confidence
    if selection == "split":
        chosen = _split_event(A, B, bins, support, selection_fraction, delta, alpha)
    else:
        chosen = _a_priori_event(A, B, bins, support, delta, alpha)
    lab, mask, swap, n_events, alpha_each = chosen.lab, chosen.mask, chosen.swap, chosen.n_events, chosen.alpha_each
    n_sel, n_ev, K = chosen.n_selection, chosen.n_evaluation, len(chosen.lab.names)
    k1, n1, k2, n2 = chosen.counts
    lb, p1_lo, p2_hi = _eps_bound(np.array([k1]), n1, np.array([k2]), n2, delta, alpha_each)
    lb = float(lb[0])
    hi = _eps_upper(k1, n1, k2, n2, delta, alpha_each)

    hist_a = np.bincount(lab.labels(A), minlength=K)
    hist_b = np.bincount(lab.labels(B), minlength=K)
    names = lab.names
    direction = "D',D" if swap else "D,D'"
    first, second = ("D'", "D") if swap else ("D", "D'")
    event = _describe(mask, names)
    return AuditResult(
        epsilon_lower_bound=max(0.0, lb),
        claimed_epsilon=claimed_epsilon,
        delta=delta,
        confidence=confidence,
        n_samples=(A.shape[0], B.shape[0]),
        n_selection=n_sel,
        n_evaluation=n_ev,
        selection=selection,
        n_candidate_events=int(2 * n_events),
        worst_event=f"S = {event}: P[M({first}) in S] vs P[M({second}) in S]",
        worst_event_labels=tuple(names[i] for i in np.nonzero(mask)[0]),
        direction=direction,
        counts=(int(k1), int(n1), int(k2), int(n2)),
        p1_lower=float(p1_lo[0]),
        p2_upper=float(p2_hi[0]),
        event_epsilon_estimate=_point_eps(k1, n1, k2, n2, delta),
        event_epsilon_interval=(lb, hi),
        histogram={n: int(c) for n, c in zip(names, hist_a)},
        histogram_prime={n: int(c) for n, c in zip(names, hist_b)},
        labels=names,
        metadata=dict(metadata or {}),
    )
