r"""The predicted seconds of a draw from one W of a 0/1-loss halfspace model, from public
sizes only, and their fitted constants, in one place.

Two forms (the two ways a W_r of ``mixture_selection`` is drawn):

* top down over W split by support (:func:`topdown_seconds`, :class:`TopDownCost`), and
* report-noisy-max over W by branch and bound (:func:`branch_and_bound_seconds`,
  :class:`BranchAndBoundCost`).

Each reads n, d, |W|, the supports of W and their points, and the values a record's
coordinate takes where they are declared in public (``integer_features``, the estimator's
levels): never a value of X.  The plans (:mod:`privopt.mechanisms.selection._plan`) report
them as ``predicted_time`` and compare them with ``time_limit``; the estimator's ladder sums
them against ``time_limit`` (:func:`privopt.estimators.mixture_part_seconds`).

The constants (:data:`TOPDOWN_COST`, :data:`ONE_FEATURE_COST`, :data:`BRANCH_AND_BOUND_COST`)
are written between the markers below by ``python benchmarks/bench_predictions.py --repeats 3
--fit --write``, the one command that measures the default fit's W's on the benchmark's
training tables and refits them (on the draws' CPU seconds, the median over the repeats of
each W); the comment above them states when and on what.  Rerun it after any change of the
kernels' or the draws' speed: with ``--speed-against benchmarks/results/predictions.csv`` the
results file states each W's CPU seconds against the last run's (on 2026-11-29 the round's
speed changes had made the draws 0.65 to 0.84 times as long, geometric means per form, and the
records fitted before them predicted the large top-down and the scored W's 2.5 to 3 times long).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..space import SupportWork

__all__ = ["TopDownCost", "BranchAndBoundCost", "TOPDOWN_COST", "ONE_FEATURE_COST", "BRANCH_AND_BOUND_COST",
           "topdown_cost", "topdown_seconds", "branch_and_bound_seconds"]


@dataclass(frozen=True)
class TopDownCost:
    """The constants of a top-down draw's predicted time (:func:`topdown_seconds`), from
    public sizes only (n, d, the supports of W, their points, and the values a record's
    coordinate takes where they are declared, v_j for coordinate j):

        T = overhead + support_seconds x regions x (m / 1000) ** row_exponent
                     + point_seconds x sum_k C(d, k) |V_k| k (p_k / 1000) ** pattern_exponent,
        m = min(n, (prod_j v_j) ** row_share),   p_k = min(m, vbar ** k),

    vbar = (prod_j v_j) ** (1 / d) their geometric mean.  Declared per coordinate
    (:attr:`privopt.space.SupportWork.coordinate_values`: the estimator's levels + 1 for a
    discretized feature, 2 for a column ``integer_features`` declares 0/1, 1 for the
    intercept), prod_j v_j bounds the distinct rows; declared as one number v for every
    coordinate (``values``), v_j = v.

    ``overhead``: seconds of one draw beyond its kernels (its noise streams, its shards' fixed
    work, the candidate's decoding: a term per shard of 4,096 supports was fitted to zero on the
    benchmark, and on 2026-11-29 to 1.4e-4 s per shard with the same fit, root mean square log
    ratio 0.526 against 0.527, so it is left out); ``support_seconds``: the lower-bound pass,
    the pattern histogram of each support over the distinct rows, per support at 1,000 rows; ``m``: the
    rows the kernels visit, at most n and at most the value patterns of d coordinates
    (``row_share`` < 1: the intercept is one column of one value, and drawn rows repeat long
    before every pattern is seen), growing more slowly than n (``row_exponent`` < 1: the
    kernels screen rows and the sampler asks about few supports); ``point_seconds``: the
    exact-minima phase, (point x support size) of each support of size k (|V_k| its points)
    over its row patterns p_k, at most vbar ** k (``pattern_exponent``).  With v undeclared
    (None), m = n and p_k = m.

    Knowingly not predicted: the rows and patterns a table really has depend on its values
    (continuous features make far more than binary ones of the same n, d and levels, and
    features concentrated in a few levels far fewer than uniform ones), and how many supports
    the draw expands depends on the noise and the losses; only a public declaration
    (``integer_features``) lets a prediction follow the first.  Measured on 2026-11-29
    (benchmarks/results/table_shapes_pred5.md): a draw's CPU seconds follow the distinct rows of
    the discretized table (on 100,000 x 6, 0.64 microseconds per distinct row for the W of
    1,793 points on equal steps on uniform and make_classification features alike, and for
    every W at most 1.1 times as much per row on uniform features), which uniform features
    make 9.7 to 33 times as many as make_classification's at the same n, d, bounds'
    discretization and W, so the draws of W's on more than one feature took 3.7 to 18 times
    as long, and no public prediction is within less than 4.2 of both.  The fit puts the prediction at the geometric
    middle of the W's that share every public quantity.  Among those are the ladder's twins of
    one W on other steps (centred, geometric), which this form does not tell apart: on the
    benchmark of 2026-11-29 the geometric twin took 0.2 to 1.0 times the time of its twin on
    equal steps (0.85 to 1.0 on uniform features, 0.18 on make_classification 50,000 x 12); a
    factor for it (fitted 0.44) would lower the training tables' worst ratio from 5.7 to 3.7
    and raise the five tables of bench_table_shapes' check from 1.9 to 2.2."""

    overhead: float
    support_seconds: float
    row_exponent: float
    point_seconds: float
    pattern_exponent: float
    row_share: float = 1.0


@dataclass(frozen=True)
class BranchAndBoundCost:
    """The constants of the predicted time of one W_r of ``mixture_selection`` scored by
    branch and bound (:class:`privopt.search.BoundedArgmax`), from public sizes only:

        T = overhead + |W| x (noise_seconds + point_seconds x (m / 1000) ** row_exponent),
        m = min(n, (prod_j v_j) ** row_share)

    ``noise_seconds``: drawing the noise of every point and its block maxima, whatever the
    rows; ``point_seconds x |W|``: walking the enumeration's tree and scoring what it does not
    prune (at n = 1000 records); each scored point costs a pass over the distinct rows m, so
    the time grows with n more slowly than scoring every point does (``row_exponent`` < 1).
    v_j: the values each coordinate takes where they are declared per coordinate
    (:attr:`privopt.search.HalfspaceData.coordinate_values`, e.g. 0/1 columns: the distinct
    rows are at most their product); m = n where they are not.

    Knowingly not predicted: how much of the tree the bounds prune depends on the data
    (how separable the labels are at the W's resolution): the points scored on W's of the
    same public sizes differ up to 4-fold between the benchmark's uniform and
    make_classification tables, and on a hold-out gaussian 20,000 x 7 table W's of 33,809 and
    84,663 points scored 26 points (about 1 ms, predicted about 50 times long).  Nor the
    distinct rows each scored point is counted over (at most m): on 100,000 x 6 the W of 33,809
    points took 2.0 ms on make_classification's 3,609 distinct rows and 35.7 ms on uniform
    features' 59,617 (benchmarks/results/table_shapes_pred5.md).  Where most of
    W is pruned the prediction is long (the safe side for ``time_limit``); it is at the
    geometric middle of the benchmark's W's, not an upper bound."""

    overhead: float
    point_seconds: float
    row_exponent: float
    row_share: float = 1.0
    noise_seconds: float = 0.0


# --- fitted constants: written by `python benchmarks/bench_predictions.py --fit --write` ---
#: Fitted on 2026-11-29 08:12 UTC by ``python benchmarks/bench_predictions.py --repeats 3 --fit --write
#: --speed-against benchmarks/results/predictions.csv`` on the draws' CPU seconds of the W's measured by `python
#: benchmarks/bench_predictions.py --repeats 3 --fit --write --speed-against benchmarks/results/predictions.csv` on
#: 2026-11-29 08:10 UTC, x86_64, 2 cores, Python 3.11.7, privopt 0.1.0: top down, d > 2 (176 W's, the median of each
#: over its repeats); worst ratio 5.26, at most 4.21 times the spread of the W's that share its public quantities.
TOPDOWN_COST = TopDownCost(overhead=0.00104, support_seconds=3.1e-06, row_exponent=0.662, point_seconds=3.16e-08,
                           pattern_exponent=0.985, row_share=0.819)
#: Fitted on 2026-11-29 08:12 UTC by ``python benchmarks/bench_predictions.py --repeats 3 --fit --write
#: --speed-against benchmarks/results/predictions.csv`` on the draws' CPU seconds of the W's measured by `python
#: benchmarks/bench_predictions.py --repeats 3 --fit --write --speed-against benchmarks/results/predictions.csv` on
#: 2026-11-29 08:10 UTC, x86_64, 2 cores, Python 3.11.7, privopt 0.1.0: top down, one feature (15 W's, the median of
#: each over its repeats); worst ratio 1.92, at most 1.92 times the spread of the W's that share its public
#: quantities.
ONE_FEATURE_COST = TopDownCost(overhead=0.00097, support_seconds=2.58e-06, row_exponent=0.0587, point_seconds=0,
                               pattern_exponent=0, row_share=0.777)
#: Fitted on 2026-11-29 08:12 UTC by ``python benchmarks/bench_predictions.py --repeats 3 --fit --write
#: --speed-against benchmarks/results/predictions.csv`` on the draws' CPU seconds of the W's measured by `python
#: benchmarks/bench_predictions.py --repeats 3 --fit --write --speed-against benchmarks/results/predictions.csv` on
#: 2026-11-29 08:10 UTC, x86_64, 2 cores, Python 3.11.7, privopt 0.1.0: branch and bound (28 W's, the median of each
#: over its repeats); worst ratio 3.79, at most 2.13 times the spread of the W's that share its public quantities.
BRANCH_AND_BOUND_COST = BranchAndBoundCost(overhead=0.000209, point_seconds=3.01e-08, row_exponent=0.741,
                                           row_share=0.812, noise_seconds=1.36e-09)
# --- end of fitted constants ---


def topdown_cost(work: SupportWork) -> TopDownCost:
    """The constants of a top-down draw of W (public: its d): :data:`ONE_FEATURE_COST` for a W
    on one feature (d <= 2, the intercept's coordinate counted), else :data:`TOPDOWN_COST`."""
    return ONE_FEATURE_COST if int(work.d) <= 2 else TOPDOWN_COST


def _log_values(work: SupportWork) -> tuple[float, float]:
    """``(log of the most distinct rows before the share, log of the mean values per coordinate)``
    of :func:`topdown_seconds`: d log v with one ``values`` for every coordinate, or, where
    declared per coordinate (``coordinate_values``), the sum over the coordinates of log v_j and
    its mean (inf where nothing is declared)."""
    if work.coordinate_values is not None:
        logs = [math.log(max(1, int(v))) for v in work.coordinate_values]
        return math.fsum(logs), math.fsum(logs) / max(1, len(logs))
    log_v = math.log(work.values) if work.values is not None and work.values > 1 else math.inf
    return int(work.d) * log_v, log_v


def topdown_seconds(work: SupportWork, n_records: int, cost: TopDownCost | None = None) -> float:
    """A top-down draw's predicted seconds on one core (:class:`TopDownCost`, by default the
    constants :func:`topdown_cost` gives W) from the supports of W and their points
    (:class:`privopt.space.SupportWork`: :meth:`privopt.search._regions.HalfspaceProblem.public_work`,
    :func:`privopt.space.split_support_work`) and n, all public.  Where the values are declared
    per coordinate (``work.coordinate_values``, v_j), ``v ** d`` reads prod_j v_j and
    ``v ** k`` reads vbar ** k, vbar their geometric mean."""
    cost = topdown_cost(work) if cost is None else cost
    log_n = math.log(max(1, int(n_records)))
    log_rows, log_v = _log_values(work)
    # in logarithms: v ** (share x d) overflows a float for large d
    log_m = min(log_n, cost.row_share * log_rows)
    rows = math.exp(log_m - math.log(1000.0))
    total = cost.overhead + cost.support_seconds * int(work.regions) * rows ** cost.row_exponent
    for k, points in enumerate(work.sizes, start=1):
        patterns = math.exp(min(log_m, k * log_v) - math.log(1000.0))
        total += cost.point_seconds * math.comb(int(work.d), k) * int(points) * k * patterns ** cost.pattern_exponent
    return total


def branch_and_bound_seconds(n_points: int, n_records: int, cost: BranchAndBoundCost | None = None,
                             coordinate_values=None) -> float:
    """Seconds predicted for report-noisy-max over W by branch and bound
    (:class:`BranchAndBoundCost`, by default :data:`BRANCH_AND_BOUND_COST`), from |W|, n and,
    where declared, the values each coordinate takes (``coordinate_values``), public only."""
    cost = BRANCH_AND_BOUND_COST if cost is None else cost
    rows = float(max(1, int(n_records)))
    if coordinate_values is not None:       # in logarithms: the product overflows a float for large d
        log_rows = cost.row_share * math.fsum(math.log(max(1, int(v))) for v in coordinate_values)
        rows = math.exp(log_rows) if log_rows < math.log(rows) else rows
    per_point = cost.noise_seconds + cost.point_seconds * (rows / 1000.0) ** cost.row_exponent
    return cost.overhead + int(n_points) * per_point
