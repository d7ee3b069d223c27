r"""The default estimator's policy over W: which resolutions of W it offers to
the data, the public budget rule that decides how many, the prior over them and
the warm start's rule and W.  The arithmetic on each W (its grid, ball, levels
of ||w||^2 and points) is :mod:`privopt.space`'s; this module only decides
which W's :class:`privopt.PrivateHalfspaceClassifier` offers.

A resolution fixes W for the 0/1-loss halfspace classifier: the number of
steps each real-valued feature is cut into (``levels``), whether the steps are
centred on the middle of each feature's range (``centered``: {-L, -L+2, ..., L}
instead of {0..L}, so that the intercept's small grid can cut a feature near its
middle rather than near its bottom; :func:`privopt.models.discretize_features`),
whether the intercept is widened (``wide_intercept``: a second constant feature
equal to L, so the intercept is b + L b' with b, b' on the grid and a cut can
fall anywhere in a feature's range), the weight grid -B..B (``grid``) and the
ball ||w||_2 <= D (``norm_bound``, over every coordinate).  Private
selection over one W pays (2/epsilon) ln |W| in training errors, so the right
W depends on epsilon, n and the data; privopt offers a ladder of resolutions
and lets a public base measure (:func:`privopt.mixture_selection`) choose
among them privately.

Everything here is public: it depends on d, epsilon, n (the number of records,
which the estimator's guarantee treats as public, as every private selection in
privopt does) and constants fixed before any data, never on the records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["Resolution", "default_ladder", "GEOMETRIC_RUNGS", "ladder_cap", "ladder_prior", "warm_start_applies",
           "warm_start_resolution", "warm_start_prior", "warm_start_share",
           "PRIORS", "PRIOR_TEMPER", "RULE_FRACTION", "RULE_BETA", "WARM_START_FRACTION", "WARM_START_LEVELS",
           "WARM_START_SELECTION_BUDGET"]

#: Which rungs of :func:`default_ladder` get a twin on geometric steps (``geometric``):
#: ``"none"``; of the rungs of levels 8 in the ball sqrt(5), ``"plain"`` the one on steps {0..L},
#: ``"plainwide"`` that one and the centred one with the wide intercept, ``"fine"`` all three;
#: ``"all"``, every rung.
GEOMETRIC_RUNGS = ("none", "plain", "plainwide", "fine", "all")
#: The priors pi over the offered resolutions (:func:`ladder_prior`).
PRIORS = ("occam", "uniform", "tempered")
#: The tempered prior's budget T (:func:`ladder_prior`, ``"tempered"``): Occam's prior while
#: epsilon n <= T, its weights frozen at epsilon n = T beyond.  Chosen among 250, 500, 1000 and
#: 2000 on development tables only (benchmarks/results/ceiling_prior_rules.md and
#: ceiling_prior_rules2.md), then checked on tables chosen before any result on them
#: (benchmarks/results/ceiling_second.md).
PRIOR_TEMPER = 500.0

#: The public rule's bound on the utility bound per record (see :func:`ladder_cap`).
#: Chosen with the Occam prior among 0.1, 0.2, 0.3, 0.5 by the mean held-out accuracy
#: over the development sets (5-feature breast cancer, Pima, 6-feature wine, credit,
#: two-class, Adult with 5 and with 23 features; epsilon 0.1 to 2, 5 seeds):
#: 0.709 / 0.774 / 0.776 / 0.781 at epsilon 0.1 / 0.5 / 1 / 2 against 0.711 / 0.765 /
#: 0.776 / 0.781 for 0.5 and 0.692 / 0.774 / 0.776 / 0.781 for 0.2.  Other sets were
#: kept aside (benchmarks/bench_adaptive_w.py).
RULE_FRACTION = 0.3
#: The failure probability in the public rule's utility bound.
RULE_BETA = 1.0 / 20.0
#: The warm start's rule (:func:`warm_start_applies`): the selection bound per record of the
#: largest offered W, at the selection's share of epsilon, at most this.  0.05 (fixed before it
#: was measured) until revision 2026-11-29.2 of the default's law; 0.025 since, chosen between
#: 0.05 and 0.025 on development tables (benchmarks/results/ceiling_warm_dev.md): at epsilon n
#: of a few thousand the warm start halved the selection's budget for a W it seldom released
#: (+0.002 mean held-out accuracy at epsilon 0.5 over 14 tables, up to +0.012), then checked on
#: tables chosen before any result on them (benchmarks/results/ceiling_fourth.md).
WARM_START_FRACTION = 0.025
#: The most epsilon * n the selection keeps when the warm start runs (:func:`warm_start_share`):
#: beyond 2 T the warm start gets the rest.  Since revision 2026-11-29.2 of the default's law
#: (the share was 1/2 at every epsilon n before); chosen among 1500, 2000 and 3000 on
#: development tables (benchmarks/results/ceiling_warm_dev.md).
WARM_START_SELECTION_BUDGET = 2000.0
#: Steps of the warm start's one score feature (centred: {-L, -L+2, ..., L}); its W is the
#: grid -L..L on (weight, intercept) with the ball that holds all of it.  Odd, so that the
#: score 0, v's own decision boundary, falls between two steps and v's own classifier is a
#: point of W.  (It was 32: 0 was the middle of a step, and on a table where 30% of the
#: records score within that step of 0 the W could not release v's own split.)
WARM_START_LEVELS = 33


@dataclass(frozen=True)
class Resolution:
    """One W: features cut into ``levels`` steps (centred on the middle of
    their range when ``centered``; geometric in the range when ``geometric``), weights in -``grid``..``grid``,
    ||w||_2 <= ``norm_bound``; with ``wide_intercept`` one more weight on a
    constant feature equal to ``levels`` (the intercept b + levels * b');
    with ``warm_start`` the features are one private score instead of the
    record's (:func:`warm_start_resolution`)."""

    levels: int
    grid: int
    norm_bound: float
    centered: bool = False
    wide_intercept: bool = False
    #: The one feature is a private warm start's score <v, z(x)> (:func:`warm_start_resolution`)
    #: instead of the record's own features.
    warm_start: bool = False
    #: The steps are equal in u' = ln(1 + u (b - 1)) / ln(b) instead of in u, the position in the
    #: public range (:func:`privopt.models.discretize_features`, ``spacing="geometric"``).
    geometric: bool = False

    @property
    def spacing(self) -> str:
        """The feature map's spacing of the steps: ``"geometric"`` or ``"uniform"``."""
        return "geometric" if self.geometric else "uniform"


def default_ladder(d_model: int, first: Resolution | None = None, geometric: str = "none",
                   finer: tuple[int, ...] = ()) -> tuple[Resolution, ...]:
    """The resolutions offered by default, coarsest first, for d_model weights
    (features plus the intercept).  The first is the estimator's single
    default W (``first``, else levels 4, D = min(sqrt(d_model), 2),
    B = floor(D)); then finer feature levels in a slightly larger ball
    (levels 8, -2..2, D = sqrt(5)), then larger weights (levels 6, -3..3,
    D = 3; levels 8, -4..4, D = 4).  Each comes three times: on the steps
    {0..L}; on the centred steps {-L, -L+2, ..., L} (same |W|); and on the
    centred steps with the widened intercept b + L b' (one more coordinate
    in the ball), in that order, the first W's included.  On a grid -B..B a
    one-feature cut w_j z_j + b >= 0 falls within B steps of where z_j = 0:
    the bottom of {0..L}, the middle of the centred steps, anywhere with the
    wide intercept.  Which of the three suits the data is not known before
    the data is seen.  The richer ones are kept only where they can be
    sampled exactly in reasonable time (the estimator checks) and where the
    budget allows (:func:`ladder_cap`).

    ``geometric`` (:data:`GEOMETRIC_RUNGS`): which rungs also come on
    geometric steps (|W| unchanged, right after their equal-step triple): of
    the levels-8 rungs in the ball sqrt(5), ``"plain"`` the one on {0..L},
    ``"plainwide"`` it and the centred one with the wide intercept, ``"fine"``
    all three; ``"all"`` the three variants of every rung.  Equal steps leave most records of a right-skewed
    feature in the lowest step; geometric steps cut the bottom of the range
    finer and lose the top's detail, so which suits the data is again not
    known before it is seen.

    ``finer``: more feature levels for the rung in the ball sqrt(5) (e.g. ``(16,)``), each
    with its three variants right after the levels-8 rung's (|W| unchanged: the levels cut
    the features, not the weights); a label that follows the difference of two features
    finer than a step of 8 levels needs them (8 itself and repeats add nothing)."""
    if geometric not in GEOMETRIC_RUNGS:
        raise ValueError(f"geometric must be one of {GEOMETRIC_RUNGS}, got {geometric!r}")
    if first is None:
        D1 = min(math.sqrt(d_model), 2.0)
        first = Resolution(4, int(math.floor(D1 + 1e-9)), D1)
    fine = Resolution(8, 2, math.sqrt(5.0))
    finer_rungs = tuple(replace(fine, levels=L) for L in dict.fromkeys(int(v) for v in finer) if L != fine.levels)
    rest = (fine, *finer_rungs, Resolution(6, 3, 3.0), Resolution(8, 4, 4.0))
    plain = (first,) + tuple(r for r in rest if r != first)

    def variants(r):
        return (r, replace(r, centered=True), replace(r, centered=True, wide_intercept=True))

    def twins(r):
        if geometric == "none" or (geometric != "all" and r != fine):
            return ()
        g = variants(replace(r, geometric=True))
        return g[:1] if geometric == "plain" else (g[0], g[2]) if geometric == "plainwide" else g

    return tuple(t for r in plain for t in variants(r) + twins(r))


def ladder_cap(sizes, epsilon: float, n: int, *, fraction: float = RULE_FRACTION,
               beta: float = RULE_BETA) -> int:
    """How many resolutions of a ladder (coarsest first, sizes |W_r|) to
    offer: the first always, then every one whose selection bound per record,
    (2 / epsilon)(ln |W_r| + ln(1/beta)) / n, is at most ``fraction``
    (the bound (4) of private selection with Delta = 1, divided by n).  A
    public rule: it reads epsilon, n and the sizes only.  At small epsilon * n
    it keeps the first W alone, so the release is the plain mechanism on the
    default W."""
    keep = 1
    for r, m in enumerate(sizes):
        if r == 0:
            continue
        if (2.0 / epsilon) * (math.log(m) + math.log(1.0 / beta)) / n <= fraction:
            keep = r + 1
        else:
            break
    return keep


def ladder_prior(sizes, epsilon: float, n: int, kind: str = "occam", *, temper: float = PRIOR_TEMPER):
    """The public weights pi_r of the base measure mu(r, w) = pi_r / |W_r|.

    ``"uniform"``: 1/R each.  ``"occam"`` (the estimator's until revision
    2026-11-27.2 of its law): pi_r proportional
    to exp(-(epsilon / 2) n g_r) with g_r = sqrt(ln |W_r| / (2 n)), Occam's bound
    on the gap between the test and the training error of a point of a finite
    W_r (Hoeffding and a union bound over W_r).  Then the release weights (r, w)
    by exp(-(epsilon / 2)(L_r(w) + n g_r)) / |W_r|: the mechanism minimizes,
    privately, training errors plus the bound on how much a richer W_r can
    overfit (structural risk minimization), instead of training errors alone,
    which a richer W always lowers.  Public: it reads epsilon, n and the sizes
    only.  (With Delta = 1: the loss is a count of errors.)

    ``"tempered"`` (the estimator's since revision 2026-11-28): pi_r
    proportional to exp(-(min(epsilon n, T) / 2) g_r), T = ``temper``
    (:data:`PRIOR_TEMPER`): Occam's prior while epsilon n <= T; beyond, the
    weights stay those of epsilon n = T, so that the penalty in training
    errors, (min(epsilon n, T) / epsilon) g_r, shrinks as T g_r / epsilon
    instead of staying n g_r.  Occam's bound is a worst case that does not
    shrink with the budget: at a large epsilon n it holds back a richer W
    whose best point has tens of training errors fewer (where the selection's
    own error, (2 / epsilon) ln |W_r|, is a few), and the tempered prior lets
    that W be released.  Still a function of epsilon, n, the sizes and a
    constant fixed in the code only, so it is fixed before the data is read."""
    import numpy as np

    sizes = np.asarray(sizes, dtype=float)
    if kind == "uniform":
        return np.full(len(sizes), 1.0 / len(sizes))
    if kind not in ("occam", "tempered"):
        raise ValueError(f"kind must be one of {PRIORS}, got {kind!r}")
    if kind == "tempered" and not (math.isfinite(temper) and temper > 0):
        raise ValueError(f"temper must be a positive finite number, got {temper!r}")
    gap = np.sqrt(np.log(sizes) / (2.0 * n))
    if kind == "tempered" and epsilon * n > temper:
        logits = -(float(temper) / 2.0) * gap
    else:       # Occam's, bit for bit (also the tempered prior's while epsilon n <= T)
        logits = -(epsilon / 2.0) * n * gap
    p = np.exp(logits - logits.max())
    return p / p.sum()


def warm_start_resolution(levels: int = WARM_START_LEVELS) -> Resolution:
    """The W of a private warm start: one feature, the score <v, z(x)> of a
    privately released linear model v, cut into ``levels`` centred steps
    (odd ``levels``: the score 0, v's own decision boundary, is a boundary
    between two steps); weight and intercept on -levels..levels, ball
    sqrt(2) levels (every point of the grid): (2 levels + 1)^2 points, the
    halfspaces that cut the score anywhere between its steps."""
    return Resolution(levels, levels, math.sqrt(2.0 * levels * levels), centered=True, warm_start=True)


def warm_start_applies(sizes, epsilon_select: float, n: int, *, fraction: float = WARM_START_FRACTION,
                       beta: float = RULE_BETA) -> bool:
    """Whether the estimator spends part of epsilon on a warm start: when the
    selection bound per record of the largest offered W at the selection's
    budget, (2 / epsilon_select)(ln max |W_r| + ln(1/beta)) / n, is at most
    ``fraction``: epsilon * n is large enough that the ladder loses little by
    sharing it.  A public rule (epsilon, n and the sizes only)."""
    m = max(int(s) for s in sizes)
    return (2.0 / epsilon_select) * (math.log(m) + math.log(1.0 / beta)) / n <= fraction


def warm_start_share(epsilon: float, n: int, *, budget: float = WARM_START_SELECTION_BUDGET) -> float:
    """The warm start's share of epsilon (eq. (7) of :mod:`privopt.calibration._selection`):
    s = max(1/2, 1 - T / (epsilon n)), T = ``budget``: half of epsilon to each step while
    epsilon n <= 2T, beyond it the selection keeps epsilon_2 = T / n (its bound per record,
    (2 / epsilon_2)(ln |W| + ln(1/beta)) / n = 2 (ln |W| + ln(1/beta)) / T, no longer shrinks
    much in practice: it is far below its worst case) and the warm start, whose convex release
    keeps improving with its budget, gets the rest.  A public rule (epsilon and n only)."""
    return max(0.5, 1.0 - float(budget) / (float(epsilon) * int(n)))


def warm_start_prior(prior, sizes, warm_size: int):
    """The prior over the offered W's and the warm start's W (last): the
    ladder's ``prior`` (over ``sizes``) and, for the warm start's W of
    ``warm_size`` points, the weight that gives its points the smallest
    per-point mass pi_r / |W_r| of the ladder's W's; renormalized.  The warm
    start's W is small, and Occam's prior would favour it for that (by tens of
    training errors at a few thousand records); but its points are no simpler
    than the finest W's (a direction of R^d, found with the data), so it is
    released only where its training errors are lower, as if it were part of
    the finest offered W.  (A weight of the ladder that underflowed to 0 is
    left out of the minimum.)  Public: it reads the sizes and the prior only."""
    import numpy as np

    prior = np.asarray(prior, dtype=float)
    per_point = prior / np.asarray(sizes, dtype=float)
    out = np.append(prior, float(per_point[prior > 0].min()) * int(warm_size))
    return out / out.sum()
