"""The default fit over the table shapes users bring, side by side with dadb0f8's single W and DP-SGD.

``PrivateHalfspaceClassifier(epsilon=1, bounds=<public bounds>)`` with its defaults
(the ladder of W's and the warm start, :func:`privopt.mixture_selection`) on tables
of different shapes, each side in its own subprocess:

* ``now``: this checkout's default fit (``keep_report=True``, which changes nothing
  but keeps the selection's report: the predicted and measured seconds of every W), the
  table's whole-number columns declared as a user who knows them would
  (``integer_features``: :func:`_common.integer_columns`, binary's every column and
  mixed's 0/1 half; ``--undeclared``: none), which on these tables changes no release
  (at the default ``time_limit`` nothing binds) and only the predicted seconds;
* ``dadb0f8``: the same estimator at dadb0f8 (before the ladder: the single default
  W), from a temporary git worktree (:func:`_common.checkout_env`);
* ``dpsgd``: :class:`privopt.baselines.DPSGDLogisticRegression` with its defaults,
  the same epsilon and bounds (this checkout).

Each process fits once (seed 1000, not counted: numba's kernels load, lazy imports)
and then ``--repeats`` warm fits (seeds 0, 1, ...) on the same table; ``warm s`` is
their median, ``first s`` the first fit.  Held-out accuracy is the mean over the
warm fits on 2,000 rows of the same distribution.

Per W (``now`` side, warm fits): the plan's predicted seconds
(:attr:`privopt.mechanisms.MixturePart.predicted_time`, from public sizes) beside the
measured wall time of its draw; the table reports the worst ratio either way over
the W's of a fit, and the whole fit's predicted (the sum over W's, what
``time_limit`` is compared with) against its measured selection time.  Tables of one
n and d with the same declarations share every public quantity of their W's (uniform and
make_classification 100,000 x 6, for one): the largest over the smallest CPU seconds of
a W across them bounds from below, by its square root, the worst ratio ANY prediction from
public quantities can have there (``public floor``); each W's distinct rows (a quantity of
the data, never read by a prediction) are listed beside the W's outside 3x.  (bench_predictions.py
compares every W's prediction with the draw's CPU seconds too, which the load of a shared
machine inflates far less, and refits the prediction's constants.)

Tables (features, then label):

* ``uniform``: features uniform in [0, 1], label from a noisy linear rule on three
  of them (x0 + x1 - x2 - 0.5 + N(0, 0.2^2) > 0); bounds (0, 1);
* ``make_classification``: scikit-learn's, d/2 informative; bounds the table's range;
* ``binary``: features Bernoulli(0.3) (binary / one-hot columns), label from a noisy
  rule on four of them; bounds (0, 1);
* ``mixed``: half the columns uniform in [0, 1], half binary, label from a noisy rule
  on two of each; bounds (0, 1);
* ``wide``: make_classification with d 60 (10 informative), small n.

Run:  python benchmarks/bench_table_shapes.py [--repeats 2] [--tables uniform:2000x6,...] [--sides now,...]
      [--undeclared] [--tag T] [--summary-only]
Writes benchmarks/results/table_shapes{T}.csv (one row per table and side),
table_shapes_w{T}.csv (one row per W of each warm fit of ``now``) and table_shapes{T}.md.
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

import numpy as np

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "results")

EPSILON = 1.0
N_TEST = 2000
FIRST_SEED = 1000
SINGLE = "dadb0f8"
SIDES = ("now", SINGLE, "dpsgd")
#: shape:n x d of the default run (100,000 x 6 twice: make_classification's and uniform features', W's
#: of the same public quantities)
TABLES = ("uniform:2000x6,uniform:10000x14,make_classification:2000x6,make_classification:10000x14,"
          "make_classification:100000x6,uniform:100000x6,binary:1000x14,binary:10000x14,mixed:1000x14,"
          "mixed:10000x14,wide:1000x60")
COLUMNS = ("table", "shape", "n", "d", "side", "warm_s", "warm_runs", "cpu_s", "first_s", "accuracy", "predicted_s",
           "selection_s", "n_w", "worst_w_ratio", "coefs")
DECLARED = ("the whole-number columns (`integer_features`, `now` only: binary's every column, mixed's 0/1 half)",
            "nothing (`--undeclared`)")
W_COLUMNS = ("table", "seed", "w", "path", "n_points", "predicted_s", "measured_s", "cpu_s", "won",
             "regions_expanded", "n", "d", "coordinate_values", "distinct_rows", "rows_predicted_s")


def _estimator(side: str, seed: int, lo, hi, integer=None):
    """The side's estimator; ``integer``: the columns ``now`` declares (``integer_features``)."""
    import privopt

    if side == "dpsgd":
        from privopt.baselines import DPSGDLogisticRegression

        return DPSGDLogisticRegression(epsilon=EPSILON, bounds=(lo, hi), random_state=seed)
    kw = {"keep_report": True, "integer_features": integer or None} if side == "now" else {}
    return privopt.PrivateHalfspaceClassifier(epsilon=EPSILON, bounds=(lo, hi), random_state=seed, **kw)


def _parts(clf, record: list | None = None) -> list[dict]:
    """The selection report's W's (predicted and measured seconds), where the fit kept one;
    with ``record`` (:func:`_common.record_plans`), each W's CPU seconds too."""
    report = getattr(getattr(clf, "result_", None), "report", None)
    parts = getattr(report, "parts", None) or ()
    if not parts and report is not None and hasattr(report, "predicted_time"):
        parts = (report,)
    plans = record if record and len(record) == len(parts) else [{}] * len(parts)
    return [{"path": getattr(p, "path", ""), "n_points": int(getattr(p, "n_points", 0) or 0),
             "predicted_s": float(p.predicted_time), "measured_s": float(p.wall_time), "cpu_s": r.get("cpu_s"),
             "won": bool(getattr(p, "won", True)), "regions_expanded": getattr(p, "regions_expanded", None),
             "coordinate_values": r.get("coordinate_values", ""), "distinct_rows": r.get("distinct_rows"),
             "rows_predicted_s": r.get("rows_predicted_s")}
            for p, r in zip(parts, plans)]


def child(path: str, side: str, repeats: int) -> dict:
    """The first fit, then ``repeats`` warm fits of ``side`` in this process."""
    import warnings

    with np.load(path) as f:
        X, y, Xt, yt, lo, hi, integer = (f[k] for k in ("X", "y", "X_test", "y_test", "lo", "hi", "integer"))
    out: dict = {"warm": [], "cpu": [], "accuracy": [], "coefs": [], "parts": []}
    for i, seed in enumerate([FIRST_SEED, *range(repeats)]):
        clf = _estimator(side, seed, lo, hi, [int(j) for j in integer])
        record: list = []
        if side == "now":
            _common.record_plans(record)        # each W's CPU seconds (this checkout's planner)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0, c0 = time.perf_counter(), time.process_time()
            clf.fit(X, y)
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        if i == 0:
            out["first"] = secs
            continue
        out["warm"].append(secs)
        out["cpu"].append(cpu)
        out["accuracy"].append(float(np.mean(clf.predict(Xt) == yt)))
        out["coefs"].append(np.concatenate([np.ravel(clf.coef_), np.ravel(clf.intercept_)]).round(12).tolist())
        out["parts"].append(_parts(clf, record))
    return out


def run_child(root: str, path: str, side: str, repeats: int) -> dict:
    env = _common.checkout_env(root)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", side, "--table-file", path,
                          "--repeats", str(repeats)], env=env, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{root} {side}: failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(rev: str) -> str:
    tree = tempfile.mkdtemp(prefix=f"privopt-{rev}-")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-f", "--detach", tree, rev], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return tree


def ratio(predicted: float, measured: float) -> float:
    """How far off a prediction is, either way (>= 1; inf when one of them is 0)."""
    if predicted <= 0 or measured <= 0:
        return float("inf")
    return max(predicted / measured, measured / predicted)


def summarize(table: str, shape: str, n: int, d: int, side: str, res: dict) -> tuple[dict, list[dict]]:
    """The table's row for one side, and the per-W rows of its warm fits."""
    w_rows, worst, predicted, selection, n_w = [], [], [], [], []
    for seed, parts in enumerate(res["parts"]):
        for k, p in enumerate(parts):
            w_rows.append({"table": table, "seed": seed, "w": k, "n": n, "d": d, **p})
        if parts:
            worst.append(max(ratio(p["predicted_s"], p["measured_s"]) for p in parts))
            predicted.append(sum(p["predicted_s"] for p in parts))
            selection.append(sum(p["measured_s"] for p in parts))
            n_w.append(len(parts))
    row = {"table": table, "shape": shape, "n": n, "d": d, "side": side,
           "warm_s": statistics.median(res["warm"]), "warm_runs": " ".join(f"{t:.3f}" for t in res["warm"]),
           "cpu_s": statistics.median(res["cpu"]) if res.get("cpu") else "",
           "first_s": res["first"], "accuracy": float(np.mean(res["accuracy"])),
           "predicted_s": statistics.median(predicted) if predicted else "",
           "selection_s": statistics.median(selection) if selection else "",
           "n_w": max(n_w) if n_w else "", "worst_w_ratio": max(worst) if worst else "",
           "coefs": json.dumps(res["coefs"])}
    return row, w_rows


def _f(v, fmt=".2f") -> str:
    return "" if v in ("", None) else format(float(v), fmt)


def worst_by_path(w_rows, table: str, path: str | None, measure: str = "measured_s",
                  predicted: str = "predicted_s") -> float | None:
    """The largest ratio, either way, of predicted (``predicted``: privopt's, or the diagnostic
    ``rows_predicted_s``) to measured seconds (``measure``: the wall time, or ``cpu_s``) over the
    W's of ``table`` drawn on ``path`` ("topdown" or "enumerate"; None: every W), or None when
    there are none."""
    ratios = [ratio(float(w[predicted]), float(w[measure]))
              for w in w_rows if w["table"] == table and path in (None, w["path"])
              and w.get(measure) not in ("", None) and w.get(predicted) not in ("", None)]
    return max(ratios) if ratios else None


def _public_key(w: dict) -> tuple | None:
    """What a W's prediction reads (n, d, its index in the ladder, its path, |W|, the values
    declared per coordinate): W's of two tables with the same key share every public quantity.
    None for a row of an older run that did not record n and d."""
    if w.get("n") in ("", None):
        return None
    return int(w["n"]), int(w["d"]), int(w["w"]), w["path"], int(w["n_points"]), w.get("coordinate_values") or ""


def w_medians(w_rows) -> dict:
    """(table, W index) -> the W's first row with ``cpu_s`` and ``distinct_rows`` the medians
    over the warm fits (``cpu_s`` None where no CPU seconds were recorded)."""
    out: dict = {}
    for w in w_rows:
        out.setdefault((w["table"], int(w["w"])), []).append(w)
    med = {}
    for key, ws in out.items():
        cpu = [float(w["cpu_s"]) for w in ws if w.get("cpu_s") not in ("", None)]
        rows = [int(w["distinct_rows"]) for w in ws if w.get("distinct_rows") not in ("", None)]
        med[key] = {**ws[0], "cpu_s": statistics.median(cpu) if cpu else None,
                    "distinct_rows": int(statistics.median(rows)) if rows else None}
    return med


def public_floors(w_rows) -> dict:
    """(table, W index) -> the square root of the largest over the smallest median CPU seconds
    of the W's, across this run's tables, that share its public quantities (:func:`_public_key`):
    no prediction from public quantities can be within less than that of both (1.0 for a W
    without a twin; absent where the run did not record what the key needs)."""
    med = w_medians(w_rows)
    groups: dict = {}
    for w in med.values():
        if _public_key(w) is not None and w["cpu_s"]:
            groups.setdefault(_public_key(w), []).append(w["cpu_s"])
    return {key: math.sqrt(max(groups[_public_key(w)]) / min(groups[_public_key(w)]))
            for key, w in med.items() if _public_key(w) in groups}


def outside_lines(w_rows) -> list[str]:
    """The W's whose prediction is more than 3 times off their median CPU seconds, with their
    distinct rows and the same W's (every public quantity alike) on the run's other tables."""
    med, floors = w_medians(w_rows), public_floors(w_rows)
    out = [(k, w) for k, w in med.items() if w["cpu_s"] and ratio(float(w["predicted_s"]), w["cpu_s"]) > 3.0]
    if not out:
        return []
    lines = ["", "W's more than 3x off (median CPU seconds of the warm fits); `distinct rows`: the W's data "
             "after its discretization (a quantity of the data, which no prediction reads); `same W elsewhere`: "
             "the W of every other table of this run with the same public quantities, its CPU s and distinct rows; "
             "`public floor`: the square root of the largest over the smallest CPU s among them, the least worst "
             "ratio any public prediction can have.", "",
             "| table | W | path | |W| | predicted s | CPU s | ratio | distinct rows | same W elsewhere "
             "| public floor |",
             "|---|--:|---|--:|--:|--:|--:|--:|---|--:|"]
    for (table, k), w in out:
        twins = [f"{t}: {o['cpu_s']:.3g} s, {o['distinct_rows'] or '?'} rows" for (t, j), o in med.items()
                 if t != table and o["cpu_s"] and _public_key(o) is not None and _public_key(o) == _public_key(w)]
        p = float(w["predicted_s"])
        lines.append(f"| {table} | {k} | {w['path']} | {int(w['n_points']):,} | {p:.3g} | {w['cpu_s']:.3g} | "
                     f"{ratio(p, w['cpu_s']):.1f}{' over' if p > w['cpu_s'] else ' under'} | "
                     f"{w['distinct_rows'] or ''} | {'; '.join(twins)} | {_f(floors.get((table, k)), '.1f')} |")
    return lines


def write(rows, w_rows, args, env) -> None:
    _common.write_csv(os.path.join(OUT, f"table_shapes{args.tag}.csv"), rows, COLUMNS)
    _common.write_csv(os.path.join(OUT, f"table_shapes_w{args.tag}.csv"), w_rows, W_COLUMNS)
    write_markdown(rows, w_rows, args, _common.stamp_line(env))


def write_markdown(rows, w_rows, args, head: str) -> None:
    lines = ["# The default fit over table shapes: now, dadb0f8's single W and DP-SGD, one run", "",
             head, "",
             f"`PrivateHalfspaceClassifier(epsilon={EPSILON:g}, bounds=<public bounds>, random_state=seed)` with its "
             "defaults; each side in its own subprocess (dadb0f8 from a git worktree); `warm s`: median of "
             f"{args.repeats} fits (seeds 0..{args.repeats - 1}) after a first fit (seed {FIRST_SEED}, `first s`) "
             f"in the same process; `x single W`: warm time over dadb0f8's; `CPU s`: the process's CPU time "
             "(every thread) of the same warm fits (median), which a shared machine inflates less than the wall "
             "time, and `x (CPU)` its ratio to dadb0f8's; "
             f"held-out accuracy on {N_TEST:,} rows. "
             "`predicted s` / `selection s`: the plan's predicted seconds summed over the W's of a warm fit (what "
             "time_limit is compared with) and the measured seconds of their draws (medians over the warm fits); "
             "`worst W`: the largest ratio, either way, of a W's predicted to its measured seconds over every W of "
             "the warm fits (the goal: at most 3); `top down` / `scored`: the same over the W's drawn top down "
             "and over those scored point by point by branch and bound (`now` only; table_shapes_w.csv has every "
             "W); `worst W (CPU)`: the worst ratio against the process's CPU seconds of each draw instead of its "
             "wall time (`now` only: what the predictions are fitted on, bench_predictions.py); `public floor`: "
             "over the table's W's, the least worst ratio against the median CPU seconds that ANY prediction from "
             "public quantities can have, given the same W's of the run's other tables (1.0: no such twin); "
             "`rows known (CPU)`: a diagnostic, the worst ratio (CPU) had the prediction read each W's distinct "
             "rows (a quantity of the data) instead of their public bound, same form and constants "
             "(`_common.rows_prediction`). "
             f"Declared: {DECLARED[bool(getattr(args, 'undeclared', False))]}. "
             "The machine (2 cores) was shared with other jobs: compare ratios within the run.", "",
             "| table | side | warm s | x single W | CPU s | x (CPU) | first s | held-out accuracy | predicted s "
             "| selection s | W's | worst W | top down | scored | worst W (CPU) | public floor | rows known (CPU) |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    floors = public_floors(w_rows)
    for r in rows:
        single = next((o for o in rows if o["table"] == r["table"] and o["side"] == SINGLE), None)
        x = f"{float(r['warm_s']) / float(single['warm_s']):.2f}" if single else ""
        has_cpu = single is not None and r.get("cpu_s") not in ("", None) and single.get("cpu_s") not in ("", None)
        xc = f"{float(r['cpu_s']) / float(single['cpu_s']):.2f}" if has_cpu else ""
        mine = r["side"] == "now"
        top = worst_by_path(w_rows, r["table"], "topdown") if mine else None
        scored = worst_by_path(w_rows, r["table"], "enumerate") if mine else None
        cpu_worst = worst_by_path(w_rows, r["table"], None, "cpu_s") if mine else None
        floor = max((v for (t, _), v in floors.items() if t == r["table"]), default=None) if mine else None
        known = worst_by_path(w_rows, r["table"], None, "cpu_s", "rows_predicted_s") if mine else None
        lines.append(f"| {r['table']} | {r['side']} | {float(r['warm_s']):.2f} | {x} | {_f(r.get('cpu_s'))} | {xc} | "
                     f"{float(r['first_s']):.2f} | "
                     f"{float(r['accuracy']):.3f} | {_f(r['predicted_s'], '.3g')} | {_f(r['selection_s'], '.3g')} | "
                     f"{r['n_w']} | {_f(r['worst_w_ratio'], '.1f')} | {_f(top, '.1f')} | {_f(scored, '.1f')} | "
                     f"{_f(cpu_worst, '.1f')} | {_f(floor, '.1f')} | {_f(known, '.1f')} |")
    lines += outside_lines(w_rows)
    _common.write_markdown(os.path.join(OUT, f"table_shapes{args.tag}.md"), lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2, help="warm fits per side (median)")
    ap.add_argument("--tables", default=TABLES, help="shape:NxD,... (shapes: uniform, make_classification, "
                    "binary, mixed, wide)")
    ap.add_argument("--sides", default=",".join(SIDES), help="now, dadb0f8, dpsgd")
    ap.add_argument("--tag", default="", help="suffix of the results files (e.g. _quick)")
    ap.add_argument("--undeclared", action="store_true",
                    help="declare no column integer-valued (by default `now` declares the tables' whole-number "
                         "columns: integer_features)")
    ap.add_argument("--summary-only", action="store_true",
                    help="rebuild the Markdown table from the CSV files of an earlier run (nothing is fitted)")
    ap.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    ap.add_argument("--table-file", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.table_file, args.child, args.repeats)))
        return 0
    if args.summary_only:
        rows = _common.read_csv(os.path.join(OUT, f"table_shapes{args.tag}.csv"))
        w_rows = _common.read_csv(os.path.join(OUT, f"table_shapes_w{args.tag}.csv"))
        with open(os.path.join(OUT, f"table_shapes{args.tag}.md")) as fh:
            head = fh.read().splitlines()[2]        # the stamp line of the run that made the CSVs
        write_markdown(rows, w_rows, args, head)
        return 0
    env = _common.stamp(argv)
    sides = args.sides.split(",")
    tree = worktree(SINGLE) if SINGLE in sides else None
    rows, w_rows = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="privopt-shapes-") as tmp:
            for spec in args.tables.split(","):
                shape, size = spec.split(":")
                n, d = (int(v) for v in size.lower().split("x"))
                table = f"{shape} {n:,} x {d}"
                path = os.path.join(tmp, f"{shape}_{n}x{d}.npz")
                X, y, Xt, yt, lo, hi = _common.shape_table(shape, n, d, N_TEST)
                integer = [] if args.undeclared else _common.integer_columns(shape, d)
                np.savez(path, X=X, y=y, X_test=Xt, y_test=yt, lo=lo, hi=hi, integer=np.array(integer, dtype=np.int64))
                for side in sides:
                    root = tree if side == SINGLE else ROOT
                    row, ws = summarize(table, shape, n, d, side, run_child(root, path, side, args.repeats))
                    rows.append(row)
                    w_rows += ws if side == "now" else []
                    print(f"{table} {side}: warm {row['warm_s']:.2f} s, first {row['first_s']:.2f} s, "
                          f"accuracy {row['accuracy']:.3f}, predicted {_f(row['predicted_s'], '.3g')} s, "
                          f"worst W {_f(row['worst_w_ratio'], '.1f')}", flush=True)
    finally:
        if tree is not None:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    write(rows, w_rows, args, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
