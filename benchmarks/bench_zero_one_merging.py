"""How much row merging (and chain cuts) buys on the Adult 0/1-loss MILP.

Builds the non-private 0/1-loss model of the paper's Adult setup
([NRVW20] Section 5: balanced n = 15682, d = 23, w in {-4..4}^23, ||w||_2 <= sqrt(23))
in three variants

* ``per_record``   -- one binary and one big-M row per record,
* ``merged``       -- identical rows merged, one binary and one big-M row per
  distinct row, tie rows dropped, no chain cuts,
* ``merged+chain`` -- the same plus the monotonicity (chain) cuts,

solves each with each installed MILP solver under the same time limit, and
writes one table row per (instance, variant, solver) to
``benchmarks/results/zero_one_merging.csv`` and ``.md``.

Feature instances (``--instances``):

* ``paper``    -- the paper's features (capital-gain, capital-loss,
  hours-per-week divided by their maxima, real-valued), with an explicit
  margin (``--margin``, default 1e-3; the authors' approach, see
  :mod:`privopt.models.halfspace`);
* ``discrete`` -- the same with the three numeric columns rounded onto
  {0..L} (``--levels``, default 10) from the public bounds [0, 1]
  (:func:`privopt.models.discretize_features`): integer features and the
  exact margin 1.

Run:  python benchmarks/bench_zero_one_merging.py --time-limit 60
      (``--solvers highs`` to use one solver; PRIVOPT_DATA_HOME or
      ``--data-home`` points to the folder holding adult/).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from privopt.datasets import load_adult
from privopt.exceptions import SolverError
from privopt.models import (
    build_stats,
    discretize_features,
    get_info,
    get_weights,
    predict_halfspace,
    zero_one_halfspace,
)
from privopt.solvers import available_solvers, solve

import _common

HERE = Path(__file__).resolve().parent

MILP_SOLVERS = ["highs", "glpk", "cbc", "scip", "gurobi"]
VARIANTS = {
    "per_record": dict(merge_rows=False, chain_cuts=False),
    "merged": dict(merge_rows=True, chain_cuts=False),
    "merged+chain": dict(merge_rows=True, chain_cuts=True),
}
COLUMNS = ["instance", "variant", "solver", "rows", "columns", "binaries", "distinct_rows",
           "chain_cuts", "build_s", "solve_s", "certified", "termination", "objective", "bound",
           "gap", "rel_gap", "train_acc"]


def _data_home(arg):
    if arg:
        return arg
    if os.environ.get("PRIVOPT_DATA_HOME"):
        return os.environ["PRIVOPT_DATA_HOME"]
    shared = HERE.parent.parent / "shared" / "data"
    return str(shared) if (shared / "adult" / "adult.data").is_file() else None


def _instances(names, X, levels, margin):
    out = {}
    for name in names:
        if name == "paper":
            out[name] = (X, {"margin": margin})
        elif name == "discrete":
            d = X.shape[1]
            lv = [1] * (d - 3) + [levels] * 3  # one-hot columns stay exact, numeric ones rounded
            out[name] = (discretize_features(X, bounds=(0.0, 1.0), levels=lv), {})
        else:
            raise SystemExit(f"unknown instance {name!r} (choose paper, discrete)")
    return out


def _size(model):
    vars_ = list(model.component_data_objects(pyo.Var, active=True))
    return (
        sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True)),
        len(vars_),
        sum(1 for v in vars_ if v.is_binary()),
    )


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    ap.add_argument("--solvers", default=None,
                    help="comma-separated solver names (default: every installed MILP solver)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset of "
                    + ", ".join(VARIANTS))
    ap.add_argument("--instances", default="paper", help="comma-separated: paper, discrete")
    ap.add_argument("--levels", type=int, default=10, help="levels of the numeric columns (discrete)")
    ap.add_argument("--margin", type=float, default=1e-3, help="margin for real features (paper)")
    ap.add_argument("--threads", type=int, default=None, help="solver threads (default: solver's)")
    ap.add_argument("--seed", type=int, default=0, help="random_state of load_adult's balancing draw")
    ap.add_argument("--data-home", default=None, help="folder holding adult/ (else $PRIVOPT_DATA_HOME)")
    ap.add_argument("--out", default=str(HERE / "results" / "zero_one_merging"),
                    help="output path without extension (.csv and .md are written)")
    args = ap.parse_args(argv)

    installed = {s.name: s for s in available_solvers() if s.available}
    if args.solvers:
        solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    else:
        solvers = [s for s in MILP_SOLVERS if s in installed]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v!r}")

    data = load_adult(_data_home(args.data_home), holdout=None, random_state=args.seed)
    X, y = data.X_train, data.y_train
    n, d = X.shape
    print(f"Adult: n = {n}, d = {d}; solvers {solvers}; time limit {args.time_limit:g} s", flush=True)

    rows = []
    for inst, (Xi, kw) in _instances([s.strip() for s in args.instances.split(",")], X,
                                     args.levels, args.margin).items():
        for variant in variants:
            for solver in solvers:
                t0 = time.perf_counter()
                model = zero_one_halfspace(Xi, y, **VARIANTS[variant], **kw)
                build = time.perf_counter() - t0
                stats = build_stats(model)
                n_rows, n_cols, n_bin = _size(model)
                row = dict(instance=inst, variant=variant, solver=solver, rows=n_rows, columns=n_cols,
                           binaries=n_bin, distinct_rows=stats["n_rows"], chain_cuts=stats["n_chain_cuts"],
                           build_s=build)
                try:
                    rep = solve(model, solver, time_limit=args.time_limit, threads=args.threads)
                    acc = None
                    if rep.has_solution:
                        w = get_weights(model)
                        acc = float(np.mean(predict_halfspace(w, Xi, get_info(model)) == y))
                    row.update(solve_s=rep.wall_time, certified=rep.certified_optimal,
                               termination=rep.termination.name, objective=rep.objective,
                               bound=rep.bound, gap=rep.abs_gap_achieved, rel_gap=rep.rel_gap_achieved,
                               train_acc=acc)
                except SolverError as exc:
                    rep = getattr(exc, "report", None)
                    row.update(solve_s=rep.wall_time if rep else None, certified=False,
                               termination=type(exc).__name__, objective=None,
                               bound=rep.bound if rep else None, gap=None, rel_gap=None, train_acc=None)
                rows.append(row)
                print("  " + "  ".join(f"{k}={_fmt(row.get(k))}" for k in COLUMNS), flush=True)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _common.write_csv(out.with_suffix(".csv"), rows, COLUMNS, extrasaction="ignore")
    versions = ", ".join(f"{s} {installed[s].version}" for s in solvers if s in installed)
    with open(out.with_suffix(".md"), "w") as fh:
        fh.write("# 0/1-loss MILP on Adult: row merging and chain cuts\n\n")
        fh.write(f"Generated by {_common.stamp_line(_common.stamp(argv))}\n\n")
        fh.write(f"Data: Adult balanced (load_adult, random_state={args.seed}), n = {n}, d = {d}; "
                 f"grid {{-4..4}}^{d}, ||w||_2 <= sqrt({d}); non-private 0/1 optimum.  "
                 f"`paper`: real features, explicit margin {args.margin:g}; `discrete`: numeric "
                 f"columns rounded onto {{0..{args.levels}}} (exact margin 1).  Time limit "
                 f"{args.time_limit:g} s per solve, threads {args.threads or 'solver default'}; "
                 f"{versions}.  objective/bound = "
                 f"misclassified training records; gap = |objective - bound|.\n\n")
        fh.write("| " + " | ".join(COLUMNS) + " |\n")
        fh.write("|" + "---|" * len(COLUMNS) + "\n")
        for row in rows:
            fh.write("| " + " | ".join(_fmt(row.get(k)) for k in COLUMNS) + " |\n")
    print(f"wrote {out.with_suffix('.csv')} and {out.with_suffix('.md')}")
    return rows


if __name__ == "__main__":
    main()
