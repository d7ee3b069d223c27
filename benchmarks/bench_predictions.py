"""Predicted against measured seconds of every W of the default fit, per table shape, and the
fit of the prediction's constants.

The default fit (``PrivateHalfspaceClassifier(epsilon=1, bounds=<public bounds>)``, its
ladder of W's and the warm start, :func:`privopt.mixture_selection`) on the tables of
bench_table_shapes.py (:func:`_common.shape_table`).  Per W of every warm fit: the plan's
predicted seconds (:attr:`privopt.mechanisms.MixturePart.predicted_time`, from public
sizes only) and the measured wall time of its draw, with the public quantities the
prediction reads, recorded as the plan is made:

* top down (``topdown``): n, the supports of W (``regions``) and ``point_work`` = sum over
  the supports of (points of the region) x (support size)
  (:meth:`privopt.search._regions.HalfspaceProblem.public_work`);
* scored by branch and bound (``enumerate``): n, |W| and d.

``--fit`` (with ``--also`` earlier runs' CSVs) refits the constants
(:data:`privopt.search._regions.TOPDOWN_COST` and
:data:`privopt.mechanisms.selection._evaluate.BRANCH_AND_BOUND_COST`) on the rows of this run (or of
the CSV with ``--summary-only``): the values that make the worst ratio, either way, of
predicted to the draws' CPU seconds (``--fit-on wall``: wall time) over every W smallest
(the overheads held), printed for the two records; ``--summary-only --repredict``
recomputes every W's prediction with the current constants (a pure function of the public
quantities in the CSV).  A uniform speed change of the kernels is their ``row_seconds`` /
``point_seconds`` alone.

Each table runs in its own process: a first fit (seed 1000, not counted: numba's kernels
load), then ``--repeats`` warm fits (seeds 0, 1, ...).

Run:  python benchmarks/bench_predictions.py [--repeats 2] [--tables uniform:2000x6,...] [--fit [--also CSV]]
      [--summary-only [--repredict]]
Writes benchmarks/results/predictions.csv (one row per W of each warm fit) and predictions.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import astuple

import numpy as np

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results")

EPSILON = 1.0
FIRST_SEED = 1000
TABLES = ("uniform:2000x6,uniform:10000x14,make_classification:2000x6,make_classification:10000x14,"
          "make_classification:100000x6,binary:1000x14,binary:10000x14,mixed:1000x14,mixed:10000x14,wide:1000x60")
COLUMNS = ("table", "seed", "w", "path", "n", "d", "n_points", "regions", "point_work", "predicted_s",
           "measured_s", "ratio", "cpu_s", "cpu_ratio", "won", "regions_expanded", "points_scored")


def child(path: str, repeats: int) -> list[dict]:
    """The first fit, then ``repeats`` warm fits; one row per W of each warm fit."""
    import warnings

    import privopt

    with np.load(path) as f:
        X, y, lo, hi = (f[k] for k in ("X", "y", "lo", "hi"))
    rows: list[dict] = []
    for i, seed in enumerate([FIRST_SEED, *range(repeats)]):
        record: list[dict] = []
        _common.record_plans(record)
        clf = privopt.PrivateHalfspaceClassifier(epsilon=EPSILON, bounds=(lo, hi), random_state=seed,
                                                 keep_report=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y)
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


def run_table(spec: str, repeats: int, tmp: str) -> list[dict]:
    shape, size = spec.split(":")
    n, d = (int(v) for v in size.lower().split("x"))
    X, y, _, _, lo, hi = _common.shape_table(shape, n, d, 0)
    path = os.path.join(tmp, f"{shape}_{n}x{d}.npz")
    np.savez(path, X=X, y=y, lo=lo, hi=hi)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, "--repeats", str(repeats)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{spec}: failed:\n{out.stderr[-3000:]}")
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    for r in rows:
        r["table"] = f"{shape} {n:,} x {d}"
        r["ratio"] = ratio(r["predicted_s"], r["measured_s"])
        r["cpu_ratio"] = ratio(r["predicted_s"], r["cpu_s"])
    return rows


# -- the fit of the constants ---------------------------------------------------------------

def _topdown_seconds(cost, r) -> float:
    from privopt.search._regions import topdown_seconds

    return topdown_seconds(int(float(r["regions"])), int(float(r["point_work"])), int(r["n"]), int(r["d"]), cost)


def _scored_seconds(cost, r) -> float:
    from privopt.mechanisms.selection._evaluate import branch_and_bound_seconds

    return branch_and_bound_seconds(int(r["n_points"]), int(r["n"]), cost)


def predicted(r) -> float:
    """The current constants' prediction of the W of row ``r`` (from its public quantities)."""
    from privopt.mechanisms.selection._evaluate import BRANCH_AND_BOUND_COST
    from privopt.search._regions import TOPDOWN_COST

    if r["path"] == "topdown":
        return _topdown_seconds(TOPDOWN_COST, r)
    return _scored_seconds(BRANCH_AND_BOUND_COST, r)


def _minimax(rows, model, make, start, key: str = "measured_s") -> tuple:
    """The positive parameters (after the first, held) of the cost record ``make(*params)`` that
    make the worst log ratio of ``model(record, row)`` to the measured seconds over ``rows``
    smallest (Nelder-Mead on the log parameters from ``start`` and from random restarts), and
    that worst ratio."""
    from scipy.optimize import minimize

    meas = np.array([float(r[key]) for r in rows])
    held, free = start[0], np.log(np.asarray(start[1:], dtype=float))

    def worst(logp):
        cost = make(held, *np.exp(logp))
        pred = np.array([model(cost, r) for r in rows])
        return float(np.max(np.abs(np.log(pred / meas))))

    opts = {"maxiter": 4000, "xatol": 1e-6, "fatol": 1e-8}
    rng = np.random.default_rng(0)
    best = None
    for x0 in [free] + [free + rng.normal(0, 1, free.size) for _ in range(4)]:
        out = minimize(worst, x0, method="Nelder-Mead", options=opts)
        for _ in range(3):          # restarts: the objective is a maximum, with kinks
            out = minimize(worst, out.x, method="Nelder-Mead", options=opts)
        if best is None or out.fun < best.fun:
            best = out
    return (held, *np.exp(best.x)), math.exp(best.fun)


def fit(rows, key: str = "measured_s") -> list[str]:
    """The refitted constants of both records (the overhead held) on the seconds ``key`` of
    ``rows`` (the wall time, or ``cpu_s``), as lines of the results file."""
    rows = [r for r in rows if r.get(key) not in ("", None)]
    from privopt.mechanisms.selection._evaluate import BRANCH_AND_BOUND_COST, BranchAndBoundCost
    from privopt.search._regions import TOPDOWN_COST, TopDownCost

    lines = []
    top = [r for r in rows if r["path"] == "topdown"]
    if top:
        p, w = _minimax(top, _topdown_seconds, TopDownCost, astuple(TOPDOWN_COST), key)
        lines.append(f"- top down ({len(top)} W's): TopDownCost(overhead={p[0]:.3g}, row_seconds={p[1]:.3g}, "
                     f"exact_weight={p[2]:.3g}, row_base={p[3]:.3g}, row_exponent={p[4]:.3g}): worst ratio {w:.2f}")
    scored = [r for r in rows if r["path"] == "enumerate"]
    if scored:
        p, w = _minimax(scored, _scored_seconds, BranchAndBoundCost, astuple(BRANCH_AND_BOUND_COST), key)
        lines.append(f"- branch and bound ({len(scored)} W's): BranchAndBoundCost(overhead={p[0]:.3g}, "
                     f"point_seconds={p[1]:.3g}, row_exponent={p[2]:.3g}): worst ratio {w:.2f}")
    return lines


# -- the results file -------------------------------------------------------------------------

def floor_of(rows, measure: str = "measured_s") -> dict:
    """Per (n, d, W index): the smallest worst ratio ANY prediction from public sizes could
    have over the tables of that size (they share every public quantity): the square root
    of the largest over the smallest measured seconds (``measure``: wall or ``cpu_s``)."""
    out: dict = {}
    for r in rows:
        if r.get(measure) in ("", None):
            continue
        key = (int(r["n"]), int(r["d"]), int(r["w"]), r["path"], int(r["n_points"]))
        out.setdefault(key, []).append(float(r[measure]))
    return {k: math.sqrt(max(v) / min(v)) for k, v in out.items()}


def _worst(rows, key: str = "ratio"):
    vals = [float(r[key]) for r in rows if r.get(key) not in ("", None)]
    return max(vals) if vals else None


def _fmt(v, fmt: str = ".1f") -> str:
    return "" if v is None else format(v, fmt)


def summary_lines(rows) -> list[str]:
    lines = ["| table | W's | top down: worst | scored: worst | worst W (path, |W|) | worst (CPU s) "
             "| predicted s (sum) | measured s (sum) | CPU s (sum) |", "|---|--:|--:|--:|---|--:|--:|--:|--:|"]
    for table in dict.fromkeys(r["table"] for r in rows):
        mine = [r for r in rows if r["table"] == table]
        worst = max(mine, key=lambda r: float(r["ratio"]))
        seeds = sorted({int(r["seed"]) for r in mine})

        def total(key, mine=mine, seeds=seeds):
            if any(r.get(key) in ("", None) for r in mine):
                return None
            return statistics.median(sum(float(r[key]) for r in mine if int(r["seed"]) == s) for s in seeds)

        lines.append(f"| {table} | {len({r['w'] for r in mine})} | "
                     f"{_fmt(_worst([r for r in mine if r['path'] == 'topdown']))} | "
                     f"{_fmt(_worst([r for r in mine if r['path'] == 'enumerate']))} | "
                     f"{float(worst['ratio']):.1f} (W{worst['w']}, {worst['path']}, {int(worst['n_points']):,}) | "
                     f"{_fmt(_worst(mine, 'cpu_ratio'))} | {_fmt(total('predicted_s'), '.3g')} | "
                     f"{_fmt(total('measured_s'), '.3g')} | {_fmt(total('cpu_s'), '.3g')} |")
    return lines


def w_lines(rows) -> list[str]:
    floors = floor_of(rows)
    lines = ["| table | W | path | |W| | supports | predicted s | measured s (median) | worst ratio "
             "| best any public prediction could do | CPU s (median) | worst ratio (CPU) |",
             "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    keys = dict.fromkeys((r["table"], int(r["w"])) for r in rows)
    for table, w in keys:
        mine = [r for r in rows if r["table"] == table and int(r["w"]) == w]
        r0 = mine[0]
        floor = floors[(int(r0["n"]), int(r0["d"]), w, r0["path"], int(r0["n_points"]))]
        measured = statistics.median(float(r["measured_s"]) for r in mine)
        cpu = [float(r["cpu_s"]) for r in mine if r.get("cpu_s") not in ("", None)]
        lines.append(f"| {table} | {w} | {r0['path']} | {int(r0['n_points']):,} | {r0['regions'] or ''} | "
                     f"{float(r0['predicted_s']):.3g} | {measured:.3g} | {_worst(mine):.1f} | {floor:.1f} | "
                     f"{_fmt(statistics.median(cpu) if cpu else None, '.3g')} | {_fmt(_worst(mine, 'cpu_ratio'))} |")
    return lines


def write_markdown(rows, head: str, fitted: list[str], repeats: int, tag: str = "") -> None:
    worst, worst_cpu = _worst(rows), _worst(rows, "cpu_ratio")
    floor = max(floor_of(rows).values())
    floor_cpu = max(floor_of(rows, "cpu_s").values(), default=None)
    lines = ["# Predicted against measured seconds of every W of the default fit", "", head, "",
             f"`PrivateHalfspaceClassifier(epsilon={EPSILON:g}, bounds=<public bounds>, random_state=seed)`, "
             f"{repeats} warm fits per table (seeds 0..{repeats - 1}, each table in its own process after a first "
             "fit); per W the plan's predicted seconds (public sizes only: n, d, |W|, the supports of W and their "
             "points; the constants of privopt/search/_regions.py TOPDOWN_COST and "
             "privopt/mechanisms/selection/_evaluate.py BRANCH_AND_BOUND_COST) against the measured wall time of "
             "its draw and the process's CPU seconds "
             "during it (every thread), which the load of a shared machine inflates far less; `worst`: the largest "
             "ratio, either way, over every W of the warm fits (the goal: at most 3). The machine (2 cores) was "
             "shared with other jobs.", "",
             f"Worst ratio over every W: **{worst:.1f}** against the wall time, **{_fmt(worst_cpu)}** against the "
             "CPU seconds. The tables of one size share every public quantity (n, d, the bounds' discretization, "
             "the W's), so one prediction serves them all; the column `best any public prediction could do` is the "
             "square root of the largest over the smallest measured seconds of a W across them, the worst ratio "
             f"ANY public prediction would have there (largest: {floor:.1f} on the wall time, {_fmt(floor_cpu)} on "
             "the CPU seconds).", "",
             *summary_lines(rows), ""]
    if fitted:
        lines += ["Constants refitted on this run (`--fit`), minimizing the worst ratio:", "", *fitted, ""]
    lines += ["Per W (over the warm fits):", "", *w_lines(rows)]
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
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.repeats)))
        return 0
    csv_path = os.path.join(OUT, f"predictions{args.tag}.csv")
    if args.summary_only:
        rows = _common.read_csv(csv_path)
        with open(os.path.join(OUT, f"predictions{args.tag}.md")) as fh:
            head = fh.read().splitlines()[2]
        if args.repredict:
            for r in rows:
                r["predicted_s"] = predicted(r)
                r["ratio"] = ratio(float(r["predicted_s"]), float(r["measured_s"]))
                r["cpu_ratio"] = ratio(float(r["predicted_s"]), float(r["cpu_s"])) if r.get("cpu_s") else ""
            _common.write_csv(csv_path, rows, COLUMNS)
    else:
        head = _common.stamp_line(_common.stamp(argv))
        rows = []
        with tempfile.TemporaryDirectory(prefix="privopt-predictions-") as tmp:
            for spec in args.tables.split(","):
                t0 = time.perf_counter()
                got = run_table(spec, args.repeats, tmp)
                rows += got
                _common.write_csv(csv_path, rows, COLUMNS)      # kept table by table
                print(f"{spec}: {len(got)} W's, worst ratio {max(r['ratio'] for r in got):.1f} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
        _common.write_csv(csv_path, rows, COLUMNS)
    key = "measured_s" if args.fit_on == "wall" else "cpu_s"
    fitted = fit(rows + [r for path in args.also for r in _common.read_csv(path)], key) if args.fit else []
    for line in fitted:
        print(line)
    write_markdown(rows, head, fitted, max(int(r["seed"]) for r in rows) + 1, args.tag)
    return 0


if __name__ == "__main__":
    sys.exit(main())
