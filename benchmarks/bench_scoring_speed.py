"""How long a private scoring system takes to fit at the sizes people use.

The case the issue names: points in -5..5, at most 5 items, a free threshold, 30
binary items and 30,000 records, epsilon 1, permute-and-flip, with an exact
guarantee: ``privopt.scoring.select_scoring_system`` in this process and on a
local process pool of 2 workers (the same released system for the same seed),
over a few seeds; and the non-private optimum over the same W.  The synthetic
set has correlated items (a 5-factor latent model) and labels from a sparse
integer score with logistic noise.

Run:  python benchmarks/bench_scoring_speed.py [--seeds 3] [--n 30000] [--d 30]
Writes benchmarks/results/scoring_speed.md.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from privopt.scoring import best_scoring_system, select_scoring_system
from privopt.scoring._space import ScoreSpace

import _common

HERE = os.path.dirname(os.path.abspath(__file__))


def synthetic(n, d, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 5))
    X = ((Z @ rng.normal(size=(5, d)) + rng.normal(size=(n, d))) > 0.3).astype(int)
    w = np.zeros(d)
    w[:6] = [3, -2, 2, 1, -1, 2]
    y = ((X @ w + 1.5 * rng.logistic(size=n)) > 1.5).astype(int)
    return X, y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--d", type=int, default=30)
    args = ap.parse_args(argv)
    X, y = synthetic(args.n, args.d)
    W = ScoreSpace(args.d, 5, 5).size()
    rows = []
    select_scoring_system(X[:200], y[:200], epsilon=1.0, max_points=5, max_items=2, random_state=0,
                          executor="local")                      # compile the kernels outside the timing
    with ProcessPoolExecutor(2) as pool:
        for seed in range(args.seeds):
            out = {}
            for where, ex in (("local", "local"), ("pool of 2", pool)):
                start = time.perf_counter()
                res = select_scoring_system(X, y, epsilon=1.0, max_points=5, max_items=5, random_state=seed,
                                            executor=ex, progress=False, keep_report=True)
                out[where] = (time.perf_counter() - start, res)
            w = np.asarray(out["local"][1].weights)
            errors = int(np.sum(((X @ w[:-1]) >= w[-1]).astype(int) != y))
            rows.append((seed, out["local"][0], out["pool of 2"][0],
                         np.array_equal(out["local"][1].weights, out["pool of 2"][1].weights),
                         out["local"][1].report.regions_expanded, errors, out["local"][1].parameters["alpha"]))
            print(rows[-1], flush=True)
    start = time.perf_counter()
    _, _, best = best_scoring_system(X, y, max_points=5, max_items=5)
    t_best = time.perf_counter() - start
    lines = [
        "# Private scoring systems: time to fit",
        "",
        f"{_common.stamp_line(_common.stamp(argv))} Shared machine: other jobs may have run.",
        "",
        f"Synthetic: {args.d} binary items, {args.n:,} records ({len(np.unique(X, axis=0)):,} distinct rows); "
        f"points -5..5, at most 5 items, free threshold: |W| = {W:,}; epsilon 1, permute-and-flip.",
        "",
        "| seed | in this process (s) | process pool of 2 (s) | same release | supports scored | "
        "training errors | excess over the optimum | bound alpha |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for seed, t_local, t_pool, same, expanded, errors, alpha in rows:
        lines.append(f"| {seed} | {t_local:.1f} | {t_pool:.1f} | {same} | {expanded:,} | {errors:,} | "
                     f"{errors - best:,} | {alpha:.1f} |")
    lines += ["", f"Non-private optimum over the same W (`best_scoring_system`): {best:,} errors, {t_best:.1f} s."]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    _common.write_markdown(os.path.join(HERE, "results", "scoring_speed.md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
