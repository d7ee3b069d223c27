"""Predicted against measured seconds of every W of the default fit, per table shape, and the
fit of the prediction's constants.

The default fit (``PrivateHalfspaceClassifier(epsilon=1, bounds=<public bounds>)``, its
ladder of W's and the warm start, :func:`privopt.mixture_selection`) on synthetic tables
(:func:`_common.shape_table`: uniform, make_classification, binary, mixed, wide, and for the
hold-out also gaussian and ordinal), the whole-number columns declared as a user who knows
them would (``integer_features``: :func:`_common.integer_columns`; ``--undeclared``: none).
Per W of every warm fit: the plan's predicted seconds
(:attr:`privopt.mechanisms.MixturePart.predicted_time`, from public sizes only), the
measured wall time of its draw and the process's CPU seconds during it, with the public
quantities the prediction reads, recorded as the plan is made:

* top down (``topdown``): n, d, the supports of W (``regions``), ``point_work`` and the
  points of one support of each size (``support_points``), and the values a coordinate takes
  as the estimator declares them (``feature_values``: levels + 1, plus the intercept's;
  ``coordinate_values``: per coordinate, 2 for a declared 0/1 column)
  (:meth:`privopt.search._regions.HalfspaceProblem.public_work`, :class:`privopt.space.SupportWork`);
* scored by branch and bound (``enumerate``): n, |W| and ``coordinate_values``.

Each W's prediction when it was drawn (the constants shipped then) is kept as
``predicted_before_s``; the results file compares it with the forms of :data:`FORMS` on the
same measured seconds (:func:`form_lines`).

Refit (ONE command, after any change of the kernels' or the draws' speed)::

    python benchmarks/bench_predictions.py --repeats 3 --fit --write

measures the training tables (``TABLES``: 24 shapes and sizes, about 5 minutes on 2 shared
cores), refits the three records of privopt/search/_costs.py, :data:`privopt.search._costs.TOPDOWN_COST`
(W's on more than one feature), :data:`privopt.search._costs.ONE_FEATURE_COST` (the warm
start's W) and :data:`privopt.search._costs.BRANCH_AND_BOUND_COST` (:func:`fit`: on each W's
median CPU seconds over the repeats, ``--fit-on wall``: wall time; the smallest worst ratio of
predicted to measured, a short one weighted by :data:`SHORT_WEIGHT`, then within 2% of it the
least squares of the log ratios, :func:`_minimax`), writes them between the file's markers with
the command, the date and the run above each (:func:`write_constants`), recomputes this run's
predictions with them into predictions.md (its first table: as drawn, against as refitted), and
measures the hold-out tables with them (``HOLDOUT``, chosen before any fit: other n, d and two
other generators) into predictions_holdout.md, and prints any table whose offered W's differ
from the committed listing (:func:`compare_offered`: the predictions decide which W's the
ladder offers under a ``time_limit``, so new constants can change the default's law there).
Then ``python benchmarks/bench_table_shapes.py --sides now`` checks the benchmark's tables.  Without
``--write`` the refitted records are only printed (and listed in predictions.md);
``--summary-only --fit`` refits on the last run's CSV without measuring.

Each table runs in its own process: a first fit (seed 1000, not counted: numba's kernels
load), then ``--repeats`` warm fits (seeds 0, 1, ...).

``--speed-against benchmarks/results/predictions.csv`` adds each W's CPU seconds against that
earlier run's (:func:`speed_lines`: have the draws got faster or slower since the constants were
fitted?); ``--fresh-copy`` fits each time a new copy of X (nothing kept per array is found again,
as for a user who fits a new array in a warm process: on 2026-11-29 the draws' CPU seconds were
the same, geometric mean 1.00 over 47 W's of five tables, predictions_fresh.md).

Run:  python benchmarks/bench_predictions.py [--repeats 2] [--tables uniform:2000x6,...] [--fit [--write] [--also CSV]]
      [--summary-only [--repredict]] [--holdout] [--undeclared] [--fresh-copy] [--speed-against CSV] [--tag T]
Writes benchmarks/results/predictions{T}.csv (one row per W of each warm fit) and predictions{T}.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import numpy as np

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results")

EPSILON = 1.0
FIRST_SEED = 1000
TABLES = ("uniform:1000x4,uniform:2000x6,uniform:3000x12,uniform:10000x14,uniform:30000x8,uniform:100000x6,"
          "make_classification:2000x6,make_classification:3000x10,make_classification:1000x20,"
          "make_classification:10000x14,make_classification:50000x12,make_classification:100000x6,"
          "binary:1000x14,binary:2000x6,binary:3000x20,binary:10000x14,binary:30000x8,binary:100000x12,"
          "mixed:1000x14,mixed:20000x6,mixed:5000x16,mixed:10000x14,wide:1000x60,wide:2000x40")
#: The hold-out tables, chosen before the constants were fitted: n, d and generators (gaussian,
#: ordinal) the fit never saw, and n beyond its largest (150,000).
HOLDOUT = ("uniform:7000x9,binary:1500x12,mixed:60000x10,make_classification:15000x16,wide:3000x30,"
           "gaussian:20000x7,ordinal:8000x11,gaussian:150000x12,ordinal:2500x5")
COLUMNS = ("table", "seed", "w", "path", "n", "d", "n_points", "regions", "point_work", "support_points",
           "feature_values", "coordinate_values", "predicted_s",
           "measured_s", "ratio", "cpu_s", "cpu_ratio", "won", "regions_expanded", "points_scored",
           "predicted_before_s", "cpu_ratio_before", "distinct_rows")
def child(path: str, repeats: int, fresh: bool = False) -> list[dict]:
    """The first fit, then ``repeats`` warm fits; one row per W of each warm fit.  The table's
    whole-number columns (``integer``: :func:`_common.integer_columns`, empty with
    ``--undeclared``) are declared, as a user who knows them would (``integer_features``).
    ``fresh`` (``--fresh-copy``): each fit on a new copy of X (the same values, another array),
    so that nothing kept per array since an earlier fit (:func:`privopt._lattice.kept_while_alive`)
    is found again, as for a user who fits a new array in a warm process."""
    import warnings

    import privopt

    with np.load(path) as f:
        X, y, lo, hi, integer = (f[k] for k in ("X", "y", "lo", "hi", "integer"))
    declared = [int(j) for j in integer] or None
    rows: list[dict] = []
    for i, seed in enumerate([FIRST_SEED, *range(repeats)]):
        record: list[dict] = []
        _common.record_plans(record)
        clf = privopt.PrivateHalfspaceClassifier(epsilon=EPSILON, bounds=(lo, hi), random_state=seed,
                                                 keep_report=True, integer_features=declared)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(np.array(X, copy=True) if fresh else X, y)
        if i == 0:
            continue
        report = clf.result_.report
        parts = getattr(report, "parts", None) or (report,)      # one W: exponential_mechanism's report
        if len(parts) != len(record):
            raise RuntimeError(f"{len(parts)} W's in the report, {len(record)} plans recorded")
        for k, (p, r) in enumerate(zip(parts, record)):
            rows.append({**r, "seed": seed, "w": k, "measured_s": float(p.wall_time),
                         "won": bool(getattr(p, "won", True)), "regions_expanded": p.regions_expanded,
                         "points_scored": p.points_scored})
    return rows


def ratio(predicted: float, measured: float) -> float:
    """How far off a prediction is, either way (>= 1)."""
    if predicted <= 0 or measured <= 0:
        return math.inf
    return max(predicted / measured, measured / predicted)


def run_table(spec: str, repeats: int, tmp: str, declare: bool = True, fresh: bool = False) -> list[dict]:
    shape, size = spec.split(":")
    n, d = (int(v) for v in size.lower().split("x"))
    X, y, _, _, lo, hi = _common.shape_table(shape, n, d, 0)
    path = os.path.join(tmp, f"{shape}_{n}x{d}.npz")
    integer = _common.integer_columns(shape, d) if declare else []
    np.savez(path, X=X, y=y, lo=lo, hi=hi, integer=np.array(integer, dtype=np.int64))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, "--repeats", str(repeats),
                          *(["--fresh-copy"] if fresh else [])],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{spec}: failed:\n{out.stderr[-3000:]}")
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    for r in rows:
        r["table"] = f"{shape} {n:,} x {d}"
        r["ratio"] = ratio(r["predicted_s"], r["measured_s"])
        r["cpu_ratio"] = ratio(r["predicted_s"], r["cpu_s"])
        r["predicted_before_s"] = r["predicted_s"]       # the constants shipped when it was measured
        r["cpu_ratio_before"] = ratio(r["predicted_before_s"], r["cpu_s"])
    return rows


# -- the fit of the constants ---------------------------------------------------------------

def _opt(r, key):
    v = r.get(key)
    return None if v in ("", None) else v


def _support_work(r):
    """The :class:`privopt.space.SupportWork` of a top-down row (its public quantities)."""
    from privopt.space import SupportWork

    sizes = tuple(int(v) for v in str(_opt(r, "support_points") or "").split(";") if v)
    values = _opt(r, "feature_values")
    return SupportWork(int(float(r["regions"])), int(float(r["point_work"])), int(r["d"]), sizes,
                       None if values is None else int(float(values)), _coordinates(r))


def _coordinates(r) -> tuple[int, ...] | None:
    """The values each coordinate takes, where the row's W declared them per coordinate."""
    return tuple(int(v) for v in str(_opt(r, "coordinate_values") or "").split(";") if v) or None


def _topdown_model(rows):
    """``predict(cost)``: :func:`privopt.search.topdown_seconds` of every top-down row, vectorized
    for the fit (checked against the function itself by :func:`fit`)."""
    from privopt.search._costs import _log_values

    works = [_support_work(r) for r in rows]
    n = np.array([max(1.0, float(r["n"])) for r in rows])
    regions = np.array([w.regions for w in works], dtype=float)
    logs = np.array([_log_values(w) for w in works], dtype=float).reshape(-1, 2)
    log_rows, log_v = logs[:, 0], logs[:, 1]
    kmax = max((len(w.sizes) for w in works), default=0)
    weight = np.zeros((len(works), kmax))        # C(d, k) |V_k| k
    for i, w in enumerate(works):
        for k, points in enumerate(w.sizes, start=1):
            weight[i, k - 1] = math.comb(w.d, k) * points * k
    ks = np.arange(1, kmax + 1, dtype=float)
    log_k = np.where(np.isinf(log_v)[:, None], np.inf, ks[None, :] * np.where(np.isinf(log_v), 0.0, log_v)[:, None])
    log_thousand = math.log(1000.0)

    def predict(cost):
        log_m = np.minimum(np.log(n), np.where(np.isinf(log_rows), np.inf, cost.row_share * log_rows))
        rows_ = np.exp(cost.row_exponent * (log_m - log_thousand))
        pats = np.exp(cost.pattern_exponent * (np.minimum(log_m[:, None], log_k) - log_thousand))
        return cost.overhead + cost.support_seconds * regions * rows_ + cost.point_seconds * (weight * pats).sum(1)

    return predict


def _scored_model(rows):
    """``predict(cost)``: :func:`privopt.mechanisms.selection.branch_and_bound_seconds` of every row."""
    from privopt.search._costs import branch_and_bound_seconds

    return lambda cost: np.array([branch_and_bound_seconds(int(r["n_points"]), int(r["n"]), cost, _coordinates(r))
                                  for r in rows])


#: The range of every fitted exponent of n, the rows or the patterns: more of them never cost
#: less, and every kernel's work is at most linear in them (one pass over the rows per support
#: or per point scored).
EXPONENT_RANGE = (0.0, 1.0)

#: A prediction short by a factor f counts as one long by f ** SHORT_WEIGHT in the minimax
#: (``time_limit`` trusts the predictions: the ladder sums them against it, the plans refuse above
#: it, and a draw longer than predicted overruns it).  1: either way alike.  On the 2026-11-29 run,
#: 2 gave worst short 4.3 and long 10.8 (626 of 669 draws within 3x), 1 short 7.3 and long 6.0 (621).

SHORT_WEIGHT = 1.0


def _minimax(predict, make, start, measured, floor) -> tuple:
    """The fields of the cost record ``make(**fields)`` (from ``start``, a dict) that put the
    predictions at the geometric middle of what public quantities allow: first the smallest
    worst log ratio c* (either way) of ``predict(record)`` to ``measured`` over the W's
    (minimize c subject to -c / SHORT_WEIGHT <= log predicted - log measured <= c for every W:
    :data:`SHORT_WEIGHT`; smooth constraints, SLSQP, from ``start`` and random restarts), then, within 2% of c*, the
    smallest mean squared log ratio (the worst W's alone leave free the constants that do
    not move them; the others then set those, so the form extrapolates as the bulk says; from every
    start and every minimax solution within 2%, the least of them).
    Fields are fitted in logarithms, the exponents as they are, within :data:`EXPONENT_RANGE`
    (the kernels' work is monotone and at most linear in the rows and patterns).  Returns the record, its
    worst ratio and its worst ratio over ``floor`` (per W the log of :func:`floor_of`'s: the
    spread of the W's that share every public quantity, which no prediction can narrow)."""
    from scipy.optimize import minimize

    names = list(start)
    raw = [k.endswith("exponent") for k in names]
    x0 = np.array([start[k] if r else math.log(start[k]) for k, r in zip(names, raw)], dtype=float)
    log_meas = np.log(np.asarray(measured, dtype=float))

    def record(x):
        return make(**{k: (float(v) if r else float(math.exp(v))) for k, v, r in zip(names, x, raw)})

    def resid(x):
        with np.errstate(all="ignore"):
            pred = predict(record(x))
            out = np.log(np.maximum(pred, 1e-300)) - log_meas
        return np.where(np.isfinite(out), out, 1e3)

    def within(z, c=None):      # c - the weighted |resid| >= 0, as two smooth sides
        r = resid(z[:-1] if c is None else z)
        top = z[-1] if c is None else c
        return np.concatenate([top - r, top + SHORT_WEIGHT * r])

    def excess(x):          # the worst weighted log ratio
        r = resid(x)
        return float(np.maximum(r, -SHORT_WEIGHT * r).max())

    opts = {"maxiter": 500, "ftol": 1e-10}
    # log fields: 1e-26 .. 2e4; a share of the row patterns' exponent at most 1
    bounds = [EXPONENT_RANGE if r else (-60.0, 0.0) if k.endswith("share") else (-60.0, 10.0)
              for k, r in zip(names, raw)]
    rng = np.random.default_rng(0)
    starts = [np.array([min(max(v, EXPONENT_RANGE[0]), EXPONENT_RANGE[1]) if r else v for v, r in zip(x, raw)])
              for x in [x0] + [x0 + rng.normal(0, 0.5, x0.size) for _ in range(5)]]
    found = []
    for x in starts:
        z = np.append(x, max(0.0, excess(x)))
        out = minimize(lambda z: z[-1], z, method="SLSQP", constraints=[{"type": "ineq", "fun": within}],
                       bounds=bounds + [(0.0, None)], options=opts)
        found.append((out.x[:-1], excess(out.x[:-1])))
    best = min(found, key=lambda t: t[1])
    cap = best[1] + math.log(1.02)

    def squares(x):
        return float(np.mean(resid(x) ** 2))

    # the least squares within the cap from every start and every minimax solution within it (SLSQP stops in
    # a local minimum: from one start only, 0.518 root mean square log ratio against 0.506 on the 2026-11-29 run)
    x = best[0]
    for x1 in [*(f for f, worst in found if worst <= cap), *starts]:
        out = minimize(squares, x1, method="SLSQP", bounds=bounds,
                       constraints=[{"type": "ineq", "fun": lambda x: within(x, cap)}], options=opts)
        if excess(out.x) <= cap + 1e-6 and squares(out.x) < squares(x):
            x = out.x
    e = np.abs(resid(x))        # reported either way alike
    return record(x), math.exp(float(e.max())), math.exp(float((e - np.asarray(floor)).max()))


def _record_line(cost) -> str:
    args = ", ".join(f"{f.name}={getattr(cost, f.name):.3g}" for f in dataclasses.fields(cost))
    return f"{type(cost).__name__}({args})"


def medians(rows, key: str = "cpu_s") -> list[dict]:
    """One row per W (table and W index) with ``key`` its median over the repeats (warm fits),
    so that one slow repeat on a loaded machine does not decide the fit."""
    groups: dict = {}
    for r in rows:
        if _opt(r, key) is not None:
            groups.setdefault((r["table"], int(r["w"])), []).append(r)
    return [{**g[0], key: statistics.median(float(r[key]) for r in g)} for g in groups.values()]


#: The fitted groups of W's: (label, path, which rows, the record's name in privopt/search/_costs.py,
#: the fields kept as shipped (None: every field fitted)).
GROUPS = (("top down, d > 2", "topdown", lambda r: int(r["d"]) > 2, "TOPDOWN_COST", None),
          ("top down, one feature", "topdown", lambda r: int(r["d"]) <= 2, "ONE_FEATURE_COST",
           ("point_seconds", "pattern_exponent", "row_share")),
          ("branch and bound", "enumerate", lambda r: True, "BRANCH_AND_BOUND_COST", None))

#: Where a field shipped as 0 is fitted, it starts from this value (the fit is in logarithms).
_ZERO_START = {"noise_seconds": 1e-9}


def fit(rows, key: str = "cpu_s") -> tuple[list[str], dict]:
    """The three records of privopt/search/_costs.py refitted on the seconds ``key`` of ``rows``
    (``cpu_s``, or the wall time ``measured_s``), the median over the repeats of each W
    (:func:`medians`), by :func:`_minimax`: the top-down W's on more than one feature (every
    field), the W's on one feature (:data:`privopt.search._costs.ONE_FEATURE_COST`, the warm
    start's: they share every public quantity but n, so the exact-minima phase is kept as
    shipped) and the branch and bound's.  Returns the lines of the results file and
    ``{record name: fitted record}``."""
    from privopt.search import _costs

    rows = medians(rows, key)
    floors = floor_of(rows, key)
    lines, fitted = [], {}
    for label, path, keep, name, kept in GROUPS:
        mine = [r for r in rows if r["path"] == path and keep(r)]
        if not mine:
            continue
        start = getattr(_costs, name)
        base, make = dataclasses.asdict(start), type(start)
        varied = {k: (v if v or k not in _ZERO_START else _ZERO_START[k]) for k, v in base.items()
                  if kept is None or k not in kept}
        if path == "enumerate" and not any(_coordinates(r) for r in mine):
            varied.pop("row_share", None)       # nothing declared per coordinate: row_share unread

        def built(base=base, make=make, **kw):
            return make(**{**base, **kw})

        floor = [math.log(floors[_public_key(r)]) for r in mine]
        model = _topdown_model(mine) if path == "topdown" else _scored_model(mine)
        cost, worst, excess = _minimax(model, built, varied, [float(r[key]) for r in mine], floor)
        fitted[name] = cost
        if path == "topdown":
            check = np.array([_costs.topdown_seconds(_support_work(r), int(r["n"]), cost) for r in mine])
            if not np.allclose(check, model(cost), rtol=1e-9):
                raise AssertionError("the vectorized top-down model differs from topdown_seconds")
        lines.append(f"- {label} ({len(mine)} W's, the median of each over its repeats): `{_record_line(cost)}`: "
                     f"worst ratio {worst:.2f}, at most {excess:.2f} times the spread of the W's that share its "
                     "public quantities")
    return lines, fitted


def _record_source(name: str, cost, note: str) -> str:
    """The lines of privopt/search/_costs.py that define one fitted record, its provenance above it
    (``#:`` lines, the record's documentation), within 120 columns."""
    import textwrap

    args = [f"{f.name}={getattr(cost, f.name):.3g}" for f in dataclasses.fields(cost)]
    head = f"{name} = {type(cost).__name__}("
    body = textwrap.wrap(", ".join(args) + ")", 118 - len(head), break_long_words=False, break_on_hyphens=False)
    lines = [head + body[0]] + [" " * len(head) + line for line in body[1:]]
    comment = ["#: " + line for line in textwrap.wrap(note, 114, break_long_words=False, break_on_hyphens=False)]
    return "\n".join(comment + lines) + "\n"


def write_constants(fitted: dict, lines: list[str], command: str, measured: str, path: str | None = None) -> str:
    """Rewrite the fitted records between the markers of privopt/search/_costs.py (or the file
    ``path``; each with the command, the date, the run it was fitted on (``measured``: its
    stamp line) and its worst ratio, above it); returns the file's path."""
    from privopt.search import _costs

    path = path or _costs.__file__
    with open(path) as fh:
        text = fh.read()
    start, end = text.index(COSTS_BEGIN), text.index(COSTS_END)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    notes = dict(zip((g[3] for g in GROUPS if g[3] in fitted), lines))
    block = [COSTS_BEGIN + "\n"]
    for name, cost in fitted.items():
        what = notes[name].split(": `")[0].lstrip("- ") + ";" + notes[name].split("`:")[-1]
        block.append(_record_source(name, cost, f"Fitted on {when} by ``{command}`` on the draws' CPU seconds of "
                                                f"the W's measured by {measured.rstrip('.')}: {what.strip()}."))
    new = text[:start] + "".join(block) + text[end:]
    with open(path, "w") as fh:
        fh.write(new)
    return path


COSTS_BEGIN = "# --- fitted constants: written by `python benchmarks/bench_predictions.py --fit --write` ---"
COSTS_END = "# --- end of fitted constants ---"


def predicted(r, fitted: dict | None = None) -> float:
    """The prediction of the W of row ``r`` (from its public quantities) with the shipped
    constants, or with the records ``fitted`` (:func:`fit`) where given."""
    from privopt.search._costs import branch_and_bound_seconds, topdown_seconds

    fitted = fitted or {}
    if r["path"] == "topdown":
        work = _support_work(r)
        cost = fitted.get("ONE_FEATURE_COST" if work.d <= 2 else "TOPDOWN_COST")
        return topdown_seconds(work, int(r["n"]), cost)
    return branch_and_bound_seconds(int(r["n_points"]), int(r["n"]), fitted.get("BRANCH_AND_BOUND_COST"),
                                    coordinate_values=_coordinates(r))


def repredict(rows, fitted: dict | None = None) -> None:
    """Each row's prediction (``predicted_s``) and ratios recomputed (:func:`predicted`); the
    prediction when it was measured stays in ``predicted_before_s``."""
    for r in rows:
        if r.get("predicted_before_s") in ("", None):
            r["predicted_before_s"] = r["predicted_s"]
        r["predicted_s"] = predicted(r, fitted)
        r["ratio"] = ratio(float(r["predicted_s"]), float(r["measured_s"]))
        r["cpu_ratio"] = ratio(float(r["predicted_s"]), float(r["cpu_s"])) if r.get("cpu_s") else ""
        r["cpu_ratio_before"] = (ratio(float(r["predicted_before_s"]), float(r["cpu_s"])) if r.get("cpu_s")
                                 else "")


# -- the results file -------------------------------------------------------------------------

#: The prediction forms compared on the same measured W's (:func:`form_lines`).
FORMS = ("as measured (the constants shipped when the W's were drawn)",
         "as shipped, nothing declared (levels + 1 for every column)",
         "as shipped, the whole-number columns declared (integer_features)")


def _undeclared(r) -> tuple[int, ...] | None:
    """The row's values per coordinate as if nothing were declared: levels + 1 for every
    feature (``feature_values`` less the intercept's one), 1 for the constant columns."""
    values = _coordinates(r)
    if values is None:
        return None
    top = int(float(r["feature_values"])) - 1
    return tuple(top if v > 1 else 1 for v in values)


def predicted_as(r, form: str) -> float:
    """The prediction of the W of row ``r`` under one of :data:`FORMS`."""
    from privopt.search._costs import branch_and_bound_seconds, topdown_seconds

    index = FORMS.index(form)
    if index == 0:
        return float(r["predicted_before_s"])
    if index == 2:
        return float(r["predicted_s"])
    if r["path"] == "enumerate":
        return branch_and_bound_seconds(int(r["n_points"]), int(r["n"]), coordinate_values=_undeclared(r))
    return topdown_seconds(dataclasses.replace(_support_work(r), coordinate_values=_undeclared(r)), int(r["n"]))


def form_lines(rows, refit: dict | None = None) -> list[str]:
    """Per prediction form (:data:`FORMS`), on the same measured W's (CPU seconds): the worst
    ratio either way, the share within 3x, the worst short (measured / predicted: where
    ``time_limit`` is overrun) and long, the warm start's W's worst, the declared tables' worst;
    with ``refit`` (records of :func:`fit` not written), theirs too."""
    lines = ["| prediction | worst | within 3x | worst short (measured / predicted) | worst long "
             "| warm start's W: worst | tables with whole-number columns: worst, within 3x |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    rows = [r for r in rows if r.get("cpu_s") not in ("", None)]
    forms = [*FORMS, *(["as refitted on this run (`--fit`, not written)"] if refit else [])]
    for form in forms:
        pred = [predicted_as(r, form) if form in FORMS else predicted(r, refit) for r in rows]
        cpu = [float(r["cpu_s"]) for r in rows]
        ratios = [ratio(p, c) for p, c in zip(pred, cpu)]
        short = max(zip((c / p for p, c in zip(pred, cpu)), rows), key=lambda t: t[0])
        long = max(zip((p / c for p, c in zip(pred, cpu)), rows), key=lambda t: t[0])
        warm = [x for x, r in zip(ratios, rows) if int(r["d"]) <= 2]
        declared = [x for x, r in zip(ratios, rows) if _common.integer_columns(r["table"].split()[0], 1)]
        lines.append(f"| {form} | {max(ratios):.1f} | {_share_of(ratios)} | {short[0]:.1f} ({short[1]['table']} "
                     f"W{short[1]['w']}) | {long[0]:.1f} ({long[1]['table']} W{long[1]['w']}) | "
                     f"{_fmt(max(warm) if warm else None)} | "
                     f"{_fmt(max(declared) if declared else None)}, {_share_of(declared)} |")
    return lines

def speed_lines(rows, earlier, label: str) -> list[str]:
    """Each W's median CPU seconds (:func:`medians`) over those of the same W (table, index in
    the ladder, |W|) in ``earlier`` rows (another run's CSV, ``label``), per group of
    :data:`GROUPS`: how many W's matched, the geometric mean of the ratios and their quartiles
    (below 1: the draws got faster since ``earlier`` was measured)."""
    before = {(r["table"], int(r["w"]), int(r["n_points"])): float(r["cpu_s"]) for r in medians(earlier)}
    lines = [f"Each W's median CPU seconds in this run over the same W's in {label}:", "",
             "| W's | matched | geometric mean | quartiles |", "|---|--:|--:|--:|"]
    for name, path, keep, _, _ in GROUPS:
        logs = sorted(math.log(float(r["cpu_s"]) / before[k]) for r in medians(rows)
                      if r["path"] == path and keep(r)
                      and (k := (r["table"], int(r["w"]), int(r["n_points"]))) in before and before[k] > 0)
        if logs:
            q = [math.exp(logs[int(f * (len(logs) - 1))]) for f in (0.25, 0.5, 0.75)]
            lines.append(f"| {name} | {len(logs)} | {math.exp(sum(logs) / len(logs)):.2f} | "
                         f"{q[0]:.2f}, {q[1]:.2f}, {q[2]:.2f} |")
    return lines


def _public_key(r) -> tuple:
    """What a W's prediction reads (n, d, its index in the ladder, the path, |W|, the values
    declared per coordinate): W's with the same key share every public quantity."""
    return int(r["n"]), int(r["d"]), int(r["w"]), r["path"], int(r["n_points"]), _coordinates(r)


def floor_of(rows, measure: str = "measured_s") -> dict:
    """Per (n, d, W index): the smallest worst ratio ANY prediction from public sizes could
    have over the tables of that size (they share every public quantity): the square root
    of the largest over the smallest measured seconds (``measure``: wall or ``cpu_s``)."""
    out: dict = {}
    for r in rows:
        if r.get(measure) in ("", None):
            continue
        out.setdefault(_public_key(r), []).append(float(r[measure]))
    return {k: math.sqrt(max(v) / min(v)) for k, v in out.items()}


def _worst(rows, key: str = "ratio"):
    vals = [float(r[key]) for r in rows if r.get(key) not in ("", None)]
    return max(vals) if vals else None


def _fmt(v, fmt: str = ".1f") -> str:
    return "" if v is None else format(v, fmt)


def summary_lines(rows) -> list[str]:
    lines = ["| table | W's | top down: worst (CPU s) | scored: worst (CPU s) | worst W (path, |W|) | within 3x "
             "| best any public prediction could do (CPU) | worst (wall) | predicted s (sum) | measured s (sum) "
             "| CPU s (sum) |", "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|"]
    floors = floor_of(rows, "cpu_s")
    for table in dict.fromkeys(r["table"] for r in rows):
        mine = [r for r in rows if r["table"] == table]
        worst = max(mine, key=lambda r: float(r["cpu_ratio"]))
        seeds = sorted({int(r["seed"]) for r in mine})

        def total(key, mine=mine, seeds=seeds):
            if any(r.get(key) in ("", None) for r in mine):
                return None
            return statistics.median(sum(float(r[key]) for r in mine if int(r["seed"]) == s) for s in seeds)

        lines.append(f"| {table} | {len({r['w'] for r in mine})} | "
                     f"{_fmt(_worst([r for r in mine if r['path'] == 'topdown'], 'cpu_ratio'))} | "
                     f"{_fmt(_worst([r for r in mine if r['path'] == 'enumerate'], 'cpu_ratio'))} | "
                     f"{float(worst['cpu_ratio']):.1f} (W{worst['w']}, {worst['path']}, {int(worst['n_points']):,}) | "
                     f"{_share(mine, 'cpu_ratio')} | {max(floors[_public_key(r)] for r in mine):.1f} | "
                     f"{_fmt(_worst(mine))} | {_fmt(total('predicted_s'), '.3g')} | "
                     f"{_fmt(total('measured_s'), '.3g')} | {_fmt(total('cpu_s'), '.3g')} |")
    return lines


def w_lines(rows) -> list[str]:
    floors = floor_of(rows, "cpu_s")
    lines = ["| table | W | path | |W| | supports | predicted s | measured s (median) | worst ratio (wall) "
             "| best any public prediction could do (CPU) | CPU s (median) | worst ratio (CPU) |",
             "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    keys = dict.fromkeys((r["table"], int(r["w"])) for r in rows)
    for table, w in keys:
        mine = [r for r in rows if r["table"] == table and int(r["w"]) == w]
        r0 = mine[0]
        floor = floors[_public_key(r0)]
        measured = statistics.median(float(r["measured_s"]) for r in mine)
        cpu = [float(r["cpu_s"]) for r in mine if r.get("cpu_s") not in ("", None)]
        lines.append(f"| {table} | {w} | {r0['path']} | {int(r0['n_points']):,} | {r0['regions'] or ''} | "
                     f"{float(r0['predicted_s']):.3g} | {measured:.3g} | {_worst(mine):.1f} | {floor:.1f} | "
                     f"{_fmt(statistics.median(cpu) if cpu else None, '.3g')} | {_fmt(_worst(mine, 'cpu_ratio'))} |")
    return lines


def _share(rows, key: str) -> str:
    """The share of the W's (rows) whose ratio ``key`` is at most 3, as "k of m (p%)"."""
    return _share_of([float(r[key]) for r in rows if r.get(key) not in ("", None)])


def _share_of(vals) -> str:
    within = sum(v <= 3.0 for v in vals)
    return f"{within} of {len(vals)} ({100.0 * within / max(1, len(vals)):.0f}%)"


def write_markdown(rows, head: str, fitted: list[str], repeats: int, tag: str = "", refit: dict | None = None,
                   speed: list[str] | None = None) -> None:
    worst, worst_cpu = _worst(rows), _worst(rows, "cpu_ratio")
    floor = max(floor_of(rows).values())
    floor_cpu = max(floor_of(rows, "cpu_s").values(), default=None)
    lines = ["# Predicted against measured seconds of every W of the default fit", "", head, "",
             f"`PrivateHalfspaceClassifier(epsilon={EPSILON:g}, bounds=<public bounds>, random_state=seed, "
             "integer_features=<the table's whole-number columns>)` (binary: every column; mixed: its 0/1 half; "
             "ordinal: every column; none elsewhere; `--undeclared`: none), "
             f"{repeats} warm fits per table (seeds 0..{repeats - 1}, each table in its own process after a first "
             "fit); per W the plan's predicted seconds (public sizes only: n, d, |W|, the supports of W and their "
             "points, the values each coordinate takes as the estimator declares them; the constants of "
             "privopt/search/_costs.py: TOPDOWN_COST (W's on more than one feature), ONE_FEATURE_COST (the "
             "warm start's W) and BRANCH_AND_BOUND_COST) against the "
             "measured wall time of its draw and the process's CPU seconds "
             "during it (every thread), which the load of a shared machine inflates far less; `worst`: the largest "
             "ratio, either way, over every W of the warm fits (the goal: at most 3). The machine (2 cores) was "
             "shared with other jobs. Refit: `python benchmarks/bench_predictions.py --repeats 3 --fit --write` "
             "(the script's docstring).", "",
             f"Worst ratio over every W: **{_fmt(worst_cpu)}** against the CPU seconds ({worst:.1f} against the wall "
             f"time); within 3x: **{_share(rows, 'cpu_ratio')}** of the W's against the CPU seconds. The same measured "
             f"W's against the predictions when they were drawn (`predicted_before_s`: the constants shipped "
             f"then): worst **{_fmt(_worst(rows, 'cpu_ratio_before'))}**, "
             f"within 3x **{_share(rows, 'cpu_ratio_before')}**. The tables of one "
             "size share every public quantity (n, d, the bounds' discretization, the W's), so one prediction serves "
             "them all; the column `best any public prediction could do` is the square root of the largest over the "
             "smallest measured seconds of a W across them (and its repeats), the worst ratio ANY public prediction "
             f"would have there (largest: {_fmt(floor_cpu)} on the CPU seconds, {floor:.1f} on the wall time).", "",
             "The same measured W's under each prediction form (CPU seconds; `short`: the draw took longer "
             "than predicted, what a time_limit trusts; `long`: shorter):", "", *form_lines(rows, refit), "",
             *summary_lines(rows), ""]
    if fitted:
        lines += ["Constants refitted on this run (`--fit`: the smallest worst ratio, then least squares within 2% "
                  "of it):", "", *fitted, ""]
    lines += [*(speed or []), *([""] if speed else []), "Per W (over the warm fits):", "", *w_lines(rows)]
    _common.write_markdown(os.path.join(OUT, f"predictions{tag}.md"), lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2, help="warm fits per table")
    ap.add_argument("--tables", default=TABLES, help="shape:NxD,... (bench_table_shapes.py's shapes)")
    ap.add_argument("--fit", action="store_true", help="refit the constants on the measured W's and print them")
    ap.add_argument("--summary-only", action="store_true", help="rebuild predictions.md from predictions.csv")
    ap.add_argument("--repredict", action="store_true",
                    help="with --summary-only: each W's prediction recomputed with the current constants")
    ap.add_argument("--fit-on", choices=("cpu", "wall"), default="cpu",
                    help="with --fit: the measured seconds fitted: the draw's CPU seconds (default: what the "
                         "constants were fitted on; the load of a shared machine inflates them far less), or its "
                         "wall time")
    ap.add_argument("--also", action="append", default=[], metavar="CSV",
                    help="with --fit: also fit on the W's of this earlier predictions.csv (repeatable)")
    ap.add_argument("--tag", default="", help="results to predictions{TAG}.csv/.md (e.g. _holdout: tables the "
                                               "constants were not fitted on)")
    ap.add_argument("--holdout", action="store_true",
                    help="the hold-out tables (HOLDOUT) into predictions_holdout.csv/.md")
    ap.add_argument("--undeclared", action="store_true",
                    help="declare no column integer-valued (by default the tables' whole-number columns are: "
                         "integer_features)")
    ap.add_argument("--write", action="store_true",
                    help="with --fit: write the refitted records into privopt/search/_costs.py (with the command "
                         "and the date), recompute this run's predictions with them, then measure the hold-out "
                         "tables with them (--holdout) unless --no-holdout, and compare the W's the default "
                         "offers with benchmarks/results/offered_ws.json (tests/_offered.py)")
    ap.add_argument("--no-holdout", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--fresh-copy", action="store_true",
                    help="each fit on a new copy of X (nothing kept per array is found again: a user who fits a "
                         "new array in a warm process); by default every fit of a table reads the same array")
    ap.add_argument("--speed-against", metavar="CSV",
                    help="also compare each W's median CPU seconds with those of an earlier run's CSV (the same "
                         "tables and W's): has the draws' speed changed since the constants were fitted?")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.repeats, args.fresh_copy)))
        return 0
    if args.holdout:
        args.tables, args.tag = HOLDOUT, args.tag or "_holdout"
    csv_path = os.path.join(OUT, f"predictions{args.tag}.csv")
    earlier = _common.read_csv(args.speed_against) if args.speed_against else None     # before it is rewritten
    if args.summary_only:
        rows = _common.read_csv(csv_path)
        with open(os.path.join(OUT, f"predictions{args.tag}.md")) as fh:
            head = fh.read().splitlines()[2]
        if args.repredict:
            repredict(rows)
            _common.write_csv(csv_path, rows, COLUMNS)
    else:
        head = _common.stamp_line(_common.stamp(argv))
        rows = []
        with tempfile.TemporaryDirectory(prefix="privopt-predictions-") as tmp:
            for spec in args.tables.split(","):
                t0 = time.perf_counter()
                got = run_table(spec, args.repeats, tmp, declare=not args.undeclared, fresh=args.fresh_copy)
                rows += got
                _common.write_csv(csv_path, rows, COLUMNS)      # kept table by table
                print(f"{spec}: {len(got)} W's, worst ratio {max(r['ratio'] for r in got):.1f} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
        _common.write_csv(csv_path, rows, COLUMNS)
    key = "measured_s" if args.fit_on == "wall" else "cpu_s"
    fitted, records = fit(rows + [r for path in args.also for r in _common.read_csv(path)], key) if args.fit \
        else ([], {})
    for line in fitted:
        print(line)
    if args.write and records:
        command = "python benchmarks/bench_predictions.py " + " ".join(argv if argv is not None else sys.argv[1:])
        print(f"written into {write_constants(records, fitted, command, head)}")
        repredict(rows, records)            # the rows' predictions with the records just written
        _common.write_csv(csv_path, rows, COLUMNS)
    against = os.path.relpath(os.path.abspath(args.speed_against or "."), os.path.dirname(HERE))
    speed = speed_lines(rows, earlier, f"`{against}` (read before this run wrote anything)") if earlier else None
    write_markdown(rows, head, fitted, max(int(r["seed"]) for r in rows) + 1, args.tag,
                   None if args.write else records, speed)
    if args.write and records and not args.no_holdout:        # the shipped constants on tables never fitted on
        subprocess.run([sys.executable, os.path.abspath(__file__), "--holdout", "--repeats", str(args.repeats)],
                       check=True)
    if args.write and records:
        compare_offered()
    return 0


def compare_offered() -> None:
    """The W's the default offers with the records just written against the committed listing
    (tests/_offered.py, benchmarks/results/offered_ws.json): any difference is a change of the
    default's law on that table (printed; the listing is rewritten only by hand)."""
    script = os.path.join(os.path.dirname(HERE), "tests", "_offered.py")
    with tempfile.TemporaryDirectory(prefix="privopt-offered-") as tmp:
        after = os.path.join(tmp, "offered_ws.json")
        subprocess.run([sys.executable, script, "--out", after], check=True, capture_output=True)
        subprocess.run([sys.executable, script, "--compare", os.path.join(OUT, "offered_ws.json"), after], check=True)

if __name__ == "__main__":
    sys.exit(main())
