"""The DP-SGD family before and after its gradients went on a grid, in one invocation.

Usage:  python benchmarks/bench_dpsgd_grid.py [--seeds 5] [--before 9297d82] [--methods dpsgd dpagd]
Writes  benchmarks/results/dpsgd_grid.csv (one row per fit, ``version`` before/after)
        and benchmarks/results/dpsgd_grid.md (means, paired differences).
        ``--methods noisy_sgd --out benchmarks/results/noisy_sgd_grid``: noisy SGD,
        whose default went from random allocation with continuous Gaussian noise to
        Poisson batches on the grid (``accounting="poisson_grid"``).

"after" is this checkout: DP-SGD and DP-AGD round each clipped gradient to a grid
fixed in advance and add exact discrete Gaussian noise (DP-SGD accounted under
replace-one by group privacy over add/remove).  "before" is privopt at git revision
``--before`` (continuous Gaussian noise in doubles), run by this same script in a
temporary git worktree, in parallel.  Each method is built as a user would:
``cls(epsilon, delta=min(1e-5, 1/n^2), bounds, random_state=seed)``, on table shapes
of ``bench_small_data.py`` (``_datasets.small_data_sets``; 70/30 stratified splits, the same seeds for both
versions).  A difference is "within noise" when its paired mean is within two
standard errors of the paired differences.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

import _common
from _datasets import small_data_sets

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = ("dpsgd", "dpagd")
DATASETS = ("synthetic_n2000_d10", "digits_3_vs_8", "synthetic_n1500_d80_sep1.5")
EPSILONS = (0.5, 1.0, 2.0)
COLUMNS = ["version", "dataset", "n_train", "d", "seed", "epsilon", "method", "accuracy", "seconds", "error"]


def fits(version: str, seeds: int, datasets, epsilons, methods=METHODS) -> list[dict]:
    """One row per fit of each method of ``METHODS`` with the privopt this process imports."""
    from privopt.baselines import PRIVATE_BASELINES

    warnings.simplefilter("ignore")
    rows = []
    for _, name, X, y, bounds in small_data_sets():
        if name not in datasets:
            continue
        for seed in range(seeds):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
            n = len(ytr)
            for eps in epsilons:
                for method in methods:
                    est = PRIVATE_BASELINES[method](epsilon=eps, delta=min(1e-5, 1.0 / n**2), bounds=bounds,
                                                    random_state=seed)
                    t = time.perf_counter()
                    try:
                        acc, err = est.fit(Xtr, ytr).score(Xte, yte), ""
                    except Exception as exc:  # record, do not hide
                        acc, err = math.nan, f"{type(exc).__name__}: {exc}"[:160]
                    rows.append(dict(version=version, dataset=name, n_train=n, d=X.shape[1], seed=seed,
                                     epsilon=eps, method=method, accuracy=acc,
                                     seconds=round(time.perf_counter() - t, 3), error=err))
    return rows


def _mean_se(values):
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0


def summary(rows, args) -> list[str]:
    lines = ["# The DP-SGD family before and after its noise went on a grid", "", _common.stamp_line(), "",
             f"Held-out accuracy, mean ± standard error over {args.seeds} seeds (70/30 splits, the same "
             f"for both versions). `before`: privopt at {args.before} (continuous Gaussian noise in "
             "doubles); `after`: this checkout (gradients on a grid, exact discrete Gaussian noise). "
             "`after - before`: mean and standard error of the paired differences; `~` marks a "
             "difference within two standard errors.", "",
             "| data | n_train | d | epsilon | method | before | after | after - before | seconds before / after |",
             "|---|---|---|---|---|---|---|---|---|"]
    key = {(r["version"], r["dataset"], r["seed"], r["epsilon"], r["method"]): r for r in rows}
    within = total = 0
    for name in args.datasets:
        info = next((r for r in rows if r["dataset"] == name), None)
        if info is None:
            continue
        for eps in args.epsilons:
            for method in args.methods:
                pairs = [(key[("before", name, s, eps, method)], key[("after", name, s, eps, method)])
                         for s in range(args.seeds)
                         if ("before", name, s, eps, method) in key and ("after", name, s, eps, method) in key]
                if not pairs:
                    continue
                b, a = _mean_se([p[0]["accuracy"] for p in pairs]), _mean_se([p[1]["accuracy"] for p in pairs])
                diff = _mean_se([p[1]["accuracy"] - p[0]["accuracy"] for p in pairs])
                ok = abs(diff[0]) <= 2 * diff[1] or diff[0] == 0.0
                within += ok
                total += 1
                secs = (np.mean([p[0]["seconds"] for p in pairs]), np.mean([p[1]["seconds"] for p in pairs]))
                lines.append(f"| {name} | {info['n_train']} | {info['d']} | {eps:g} | {method} | "
                             f"{b[0]:.3f} ± {b[1]:.3f} | {a[0]:.3f} ± {a[1]:.3f} | "
                             f"{diff[0]:+.3f} ± {diff[1]:.3f}{' ~' if ok else ''} | {secs[0]:.2f} / {secs[1]:.2f} |")
    lines += ["", f"{within} of {total} cells within two standard errors of no difference."]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--before", default="9297d82", help="git revision of the 'before' (continuous noise)")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), help="names of PRIVATE_BASELINES")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "dpsgd_grid"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)      # internal: write this version's rows to a CSV
    args = ap.parse_args()
    if args.worker:
        rows = fits("before", args.seeds, args.datasets, args.epsilons, args.methods)
        _common.write_csv(args.worker, rows, COLUMNS)
        return
    tree = tempfile.mkdtemp(prefix="privopt-before-")
    subprocess.run(["git", "-C", HERE, "worktree", "add", "-f", "--detach", tree, args.before], check=True,
                   stdout=subprocess.DEVNULL)
    before_csv = os.path.join(tree, "before.csv")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", before_csv, "--seeds", str(args.seeds),
           "--datasets", *args.datasets, "--epsilons", *map(str, args.epsilons), "--methods", *args.methods]
    proc = subprocess.Popen(cmd, env=_common.checkout_env(tree), cwd=tree)
    try:
        rows = fits("after", args.seeds, args.datasets, args.epsilons, args.methods)
        if proc.wait() != 0:
            raise SystemExit(f"the run on {args.before} failed")
        for r in _common.read_csv(before_csv):
            rows.append({**r, "n_train": int(r["n_train"]), "d": int(r["d"]), "seed": int(r["seed"]),
                         "epsilon": float(r["epsilon"]), "accuracy": float(r["accuracy"]),
                         "seconds": float(r["seconds"])})
    finally:
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", tree], check=False)
    _common.write_csv(args.out + ".csv", rows, COLUMNS)
    lines = summary(rows, args)
    _common.write_markdown(args.out + ".md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
