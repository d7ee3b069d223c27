"""OPDisc on the paper's Adult setup: this revision against an earlier one, side by side.

For each epsilon and run, the seed is the Adult experiment's own (``privopt experiment
adult``, sweep seed 0: ``task_seed(0, "opdisc", epsilon, run)``), so every revision
solves the same perturbed problem.  Each solve runs in a fresh subprocess of its
revision (a git worktree for ``--before``): it loads the balanced Adult training split
(80/20, seed 0), discretizes the numeric features onto 0..4 with the public bounds
[0, 1], builds ``zero_one_halfspace`` with that revision's defaults (grid -4..4,
||w|| <= sqrt(23)) and times ``privopt.opdisc(..., solver="highs", delta=1/n^2)``.
The revisions of one (epsilon, run) run back to back, so that a loaded machine slows
them alike; compare ratios within this run.  Variants of this revision: ``now`` (its
defaults), ``now, swap cuts`` (``swap_cuts=True``, the default before the data-shape
rule) and ``now, box big-M`` (each row's big-M from the grid box and the ball, as
before the exact big-M).

Run:    python benchmarks/bench_adult_opdisc_speed.py --before caa4902 [--epsilons 0.5,1] [--runs 2]
                [--variants now,before,swap,box]
Needs:  the UCI Adult files (PRIVOPT_DATA_HOME, see privopt.datasets.load_adult).
Writes: benchmarks/results/adult_opdisc_speed.csv and .md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
COLUMNS = ["epsilon", "run", "seed", "variant", "seconds", "build_seconds", "certified", "objective", "w"]


def _solve(epsilon, seed, variant, time_limit):
    """One OPDisc solve in this process (the revision this file was copied into)."""
    import warnings

    import privopt
    from privopt.datasets import load_adult
    from privopt.experiments.adult import adult_levels
    from privopt.models import discretize_features, zero_one_halfspace

    data = load_adult(random_state=0, holdout="split")
    X, y = data.X_train, data.y_train
    Xd = discretize_features(X, bounds=(0.0, 1.0), levels=adult_levels(data.feature_blocks, X.shape[1], 4))
    start = time.perf_counter()
    kwargs = {"swap": {"swap_cuts": True}, "box": {"_exact_big_m": False}}.get(variant, {})
    model = zero_one_halfspace(Xd, y, **kwargs)   # the revision's defaults, or one change
    build = time.perf_counter() - start
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        res = privopt.opdisc(model, epsilon=epsilon, delta=1.0 / len(y) ** 2, solver="highs", random_state=seed,
                             time_limit=time_limit, on_failure="return")
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "build_seconds": build, "certified": bool(res.certified),
            "objective": None if res.report is None else res.report.objective,
            "w": [int(v) for v in np.asarray(res.weights)]}


def _run(tree, epsilon, seed, variant, time_limit):
    script = os.path.join(tree, "benchmarks", "_opdisc_speed_worker.py")
    with open(script, "w") as fh:   # this file's _solve(), run against that tree
        fh.write(open(os.path.abspath(__file__)).read())
    out = subprocess.run([sys.executable, script, "--solve", str(epsilon), str(seed), variant, str(time_limit)],
                         check=True, capture_output=True, text=True,
                         cwd=os.path.join(tree, "benchmarks"), env=_common.checkout_env(tree))
    os.remove(script)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--solve":
        eps, seed, variant, limit = float(argv[1]), int(argv[2]), argv[3], float(argv[4])
        print(json.dumps(_solve(eps, seed, variant, limit)))
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default="caa4902", help="an earlier revision, checked out in a git worktree")
    p.add_argument("--epsilons", default="0.5,1")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--time-limit", type=float, default=600.0)
    p.add_argument("--variants", default="now,before,swap,box", help="which of now, before, swap, box to run")
    p.add_argument("--out", default=RESULTS)
    args = p.parse_args(argv)

    from privopt.experiments._runner import task_seed

    before_tree = os.path.join("/tmp", f"privopt-bench-{args.before}")
    if not os.path.exists(before_tree):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", before_tree, args.before], check=True,
                       capture_output=True)
    variants = [v for k, v in {"now": ("now", ROOT, "default"),
                               "before": (f"before ({args.before})", before_tree, "default"),
                               "swap": ("now, swap cuts", ROOT, "swap"),
                               "box": ("now, box big-M", ROOT, "box")}.items() if k in args.variants.split(",")]
    rows = []
    try:
        for eps in [float(e) for e in args.epsilons.split(",")]:
            for run in range(args.runs):
                seed = task_seed(0, "opdisc", eps, run)
                for label, tree, variant in variants:
                    r = _run(tree, eps, seed, variant, args.time_limit)
                    rows.append({"epsilon": eps, "run": run, "seed": seed, "variant": label,
                                 "seconds": round(r["seconds"], 1), "build_seconds": round(r["build_seconds"], 2),
                                 "certified": r["certified"], "objective": r["objective"], "w": r["w"]})
                    print(f"eps={eps} run={run} {label:18s} {r['seconds']:7.1f} s  certified={r['certified']}",
                          flush=True)
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", before_tree], capture_output=True)
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, "adult_opdisc_speed.csv"), rows, COLUMNS)
    _summary(rows, args, argv)
    return 0


def _summary(rows, args, argv=None):
    labels = list(dict.fromkeys(r["variant"] for r in rows))
    lines = ["# OPDisc on the paper's Adult setup: this revision against an earlier one", "",
             f"{_common.stamp_line(_common.stamp(argv))} A shared machine: compare ratios within this run. Seconds of "
             "`privopt.opdisc` (HiGHS, delta = 1/n^2, grid -4..4, ||w|| <= sqrt(23)) in a fresh process per solve, "
             "with the Adult experiment's seeds; the variants of one (epsilon, run) ran back to back.", "",
             "| epsilon | run | " + " | ".join(labels) + " | now / before | same w |",
             "|--:|--:|" + "--:|" * len(labels) + "--:|---|"]
    for key in dict.fromkeys((r["epsilon"], r["run"]) for r in rows):
        rs = {r["variant"]: r for r in rows if (r["epsilon"], r["run"]) == key}
        cells = [f"{rs[lb]['seconds']:.1f}{'' if rs[lb]['certified'] else ' (not certified)'}" if lb in rs else "-"
                 for lb in labels]
        ratio = rs[labels[0]]["seconds"] / rs[labels[1]]["seconds"]
        same = len({tuple(r["w"]) for r in rs.values()}) == 1
        lines.append(f"| {key[0]:g} | {key[1]} | " + " | ".join(cells) + f" | {ratio:.2f}x | {same} |")
    lines += ["", "`same w`: every variant released the same weights (the same perturbed problem, solved exactly)."]
    _common.write_markdown(os.path.join(args.out, "adult_opdisc_speed.md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
