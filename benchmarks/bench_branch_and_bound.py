"""OPDisc's exact oracle by support: exact region minima and worker processes.

For wide one-hot tables of the oracle suite (and one dense synthetic set) at
D = 2, epsilon 1, the time of one OPDisc oracle solve (``privopt.opdisc(...,
solver="enumerate")``, run in this process) with

* ``now, 1 process`` / ``now, 2 processes``: this checkout with ``threads=1`` /
  ``threads=2`` (the answer must be identical: checked);
* ``bounds only, 1 process``: this checkout with the exact minima switched
  off (every support gets the pattern bound and is scored when it can win),
  to show what the minima alone change;
* ``before (REV), 1 process``: the same solve in a clean checkout of an
  earlier revision (``--before``, a git worktree), in a subprocess.

Every variant must return the same objective (the exact minimum).  The
machine is shared: compare ratios within one run.

Run:  python benchmarks/bench_branch_and_bound.py [--before REV] [--seeds 1]
Writes benchmarks/results/branch_and_bound.md and .csv.
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
INSTANCES = ("adult-onehot-58", "mlcchurn-onehot-66", "resume-onehot-87", "lending-onehot-122", "dense-synthetic-41")
COLUMNS = ("instance", "d", "distinct_rows", "supports", "seed", "variant", "seconds", "objective", "same_w")


def model_of(name):
    """(model, n) of an oracle-suite instance at D2=4, or of the dense set."""
    from privopt.models import zero_one_halfspace

    if name == "dense-synthetic-41":
        rng = np.random.default_rng(0)          # integers 0..4 with a common factor, 12,000 rows
        Z = rng.normal(size=(12000, 1))
        X = np.clip(np.rint(2 + Z + rng.normal(size=(12000, 40))), 0, 4).astype(int)
        y = np.where((X - 2) @ rng.normal(size=40) + rng.normal(0, 2, 12000) > 0, 1, -1)
        return zero_one_halfspace(X, y, grid=2, norm_bound=2.0, fit_intercept=True), len(y)
    from _datasets import oracle_instance, oracle_model

    X, y, _, _ = oracle_instance(name)
    return oracle_model(name, "D2=4"), len(y)


def solve(name, seed, threads=1):
    """(seconds, objective, w) of one OPDisc oracle solve in this process."""
    import privopt

    model, n = model_of(name)
    start = time.perf_counter()
    res = privopt.opdisc(model, epsilon=1.0, delta=1.0 / n ** 2, solver="enumerate", random_state=seed,
                         threads=threads, time_limit=1800, keep_report=True)
    if not res.certified:
        raise RuntimeError(f"{name} seed {seed}: not certified")
    return time.perf_counter() - start, float(res.report.objective), np.asarray(res.weights, dtype=float)


def run_variant(kind, name, seed, before=None):
    """(seconds, objective, w) of one variant of the table."""
    if kind == "now1":
        return solve(name, seed, 1)
    if kind == "now2":
        return solve(name, seed, 2)
    if kind == "before":
        return _before(before, name, seed)
    from privopt.search import _patterns

    kept = (_patterns.EXACT_BUDGET_PER_ROW, _patterns.EXACT_BUDGET_MIN)
    _patterns.EXACT_BUDGET_PER_ROW, _patterns.EXACT_BUDGET_MIN = 0.0, 0      # every support gets the bound
    try:
        return solve(name, seed, 1)
    finally:
        _patterns.EXACT_BUDGET_PER_ROW, _patterns.EXACT_BUDGET_MIN = kept


def _worker(argv):
    """``--solve NAME SEED`` in a subprocess (the --before checkout): JSON out."""
    seconds, objective, w = solve(argv[0], int(argv[1]))
    print(json.dumps({"seconds": seconds, "objective": objective, "w": w.tolist()}))


def _before(rev, name, seed):
    tree = os.path.join("/tmp", f"privopt-bench-{rev}")
    if not os.path.exists(tree):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", tree, rev], check=True,
                       capture_output=True)
    script = os.path.join(tree, "benchmarks", "_bb_before.py")
    with open(script, "w") as fh:    # this file's solve(), run against the old tree
        fh.write(open(os.path.abspath(__file__)).read())
    out = subprocess.run([sys.executable, script, "--solve", name, str(seed)], check=True,
                         capture_output=True, text=True, cwd=os.path.join(tree, "benchmarks"),
                         env=_common.checkout_env(tree))     # the old tree's privopt, not the installed one
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["seconds"], r["objective"], np.asarray(r["w"])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--solve":
        return _worker(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", default=",".join(INSTANCES))
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--before", default=None, help="an earlier revision to time in a git worktree")
    p.add_argument("--out", default=RESULTS)
    args = p.parse_args(argv)

    from privopt.mechanisms.selection import topdown_problem
    from privopt.models._common import ENUMERATION_ATTR

    rows = []
    for name in args.instances.split(","):
        model, _ = model_of(name)
        data = getattr(model, ENUMERATION_ATTR)
        problem = topdown_problem(data)
        base = {"instance": name, "d": problem.d, "distinct_rows": data["X"].shape[0],
                "supports": problem.n_regions}
        for seed in range(args.seeds):
            variants = [("now, 1 process", "now1"), ("now, 2 processes", "now2")]
            if args.before:
                variants.append((f"before ({args.before}), 1 process", "before"))
            variants.append(("bounds only, 1 process", "bounds"))
            ref = None
            for label, kind in variants:
                out = run_variant(kind, name, seed, args.before)
                ref = out if ref is None else ref
                same = bool(np.array_equal(out[2], ref[2]))
                if abs(out[1] - ref[1]) > 1e-6 * max(1.0, abs(ref[1])):
                    raise RuntimeError(f"{name} seed {seed} {label}: objective {out[1]} != {ref[1]}")
                rows.append({**base, "seed": seed, "variant": label, "seconds": round(out[0], 2),
                             "objective": out[1], "same_w": same})
                print(f"{name:22s} seed={seed} {label:28s} {out[0]:8.1f} s  same w: {same}", flush=True)
    if args.before:          # the worktree made for the earlier revision
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force",
                        os.path.join("/tmp", f"privopt-bench-{args.before}")], capture_output=True)
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, "branch_and_bound.csv"), rows, COLUMNS)
    write_summary(rows, args, argv)
    return 0


def write_summary(rows, args, argv=None):
    labels = list(dict.fromkeys(r["variant"] for r in rows))
    lines = ["# OPDisc's exact oracle by support: exact region minima and worker processes", "",
             f"{_common.stamp_line(_common.stamp(argv))} Shared machine: compare ratios within this run. OPDisc oracle "
             "(`privopt.opdisc(..., solver=\"enumerate\")`), epsilon 1, delta 1/n^2, D = 2, grid -2..2, run in "
             "the benchmark's own process; seconds per solve (mean over seeds), every variant returned the same "
             "objective (checked).", "",
             "| instance | d | distinct rows | supports | " + " | ".join(labels) + " | same w |",
             "|---|--:|--:|--:|" + "--:|" * len(labels) + "---|"]
    for name in dict.fromkeys(r["instance"] for r in rows):
        rs = [r for r in rows if r["instance"] == name]
        cells = []
        for label in labels:
            s = [r["seconds"] for r in rs if r["variant"] == label]
            cells.append(f"{np.mean(s):.1f}" if s else "-")
        same = all(r["same_w"] for r in rs)
        lines.append(f"| {name} | {rs[0]['d']} | {rs[0]['distinct_rows']:,} | {rs[0]['supports']:,} | "
                     + " | ".join(cells) + f" | {same} |")
    lines += ["", "`same w`: the released weights of every variant equal those of `now, 1 process`."]
    _common.write_markdown(os.path.join(args.out, "branch_and_bound.md"), lines)


if __name__ == "__main__":
    sys.exit(main())
