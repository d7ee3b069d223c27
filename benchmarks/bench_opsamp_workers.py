"""OPSamp oracle calls per second with 1 and 2 worker processes.

Builds one hinge-loss halfspace LP (:func:`privopt.models.hinge_halfspace`,
synthetic data with continuous features, public bounds x_bound = 3, box
[-1, 1]^d), then runs :func:`privopt.opsamp` on it with the same
``random_state`` and ``n_oracle_calls`` on a ``ProcessPoolExecutor`` of each
size in ``--workers`` (default 1 and 2).  Every pool is started and warmed up
before timing (process start-up is not counted); the worker counts are run
alternately, ``--repeats`` times each (so that load from other users of a
shared machine hits them alike), and the median wall time is kept.  The figure is the ratio
of calls per second, ``speedup`` = (calls/s with k workers) / (calls/s with 1).

Every run must return the same weights (the noise is drawn in the parent), and
the script checks that it does.

Writes ``benchmarks/results/opsamp_workers.csv`` and ``.md`` (``--out``).

Run:  python benchmarks/bench_opsamp_workers.py
      python benchmarks/bench_opsamp_workers.py --n 2000 --calls 32 --repeats 3 --solver glpk
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import statistics
import time
from concurrent.futures import ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np

import privopt
from privopt.mechanisms import opsamp
from privopt.mechanisms._parallel import usable_cpus
from privopt.models import hinge_halfspace
from privopt.solvers import available_solvers

import _common

HERE = Path(__file__).resolve().parent

COLUMNS = ["solver", "solver_version", "n", "d", "n_oracle_calls", "workers", "repeats", "median_seconds",
           "min_seconds", "calls_per_second", "speedup", "mean_solver_seconds_per_call", "usable_cpus",
           "load_average_1min", "python", "privopt", "date"]


def build_model(n: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w_true = rng.uniform(-1, 1, size=d)
    y = np.where(X @ w_true + 0.3 * rng.normal(size=n) >= 0, 1, -1)
    return hinge_halfspace(X, y, bound=1.0, x_bound=3.0)


def _noop():
    return os.getpid()


def run(args) -> list[dict]:
    model = build_model(args.n, args.d, args.seed)
    version = {row.name: row.version for row in available_solvers([args.solver])}.get(args.solver)
    kw = dict(epsilon=1.0, delta=1.0 / args.n**2, n_oracle_calls=args.calls, random_state=args.seed,
              solver=args.solver, progress=False)
    pools = {w: ProcessPoolExecutor(max_workers=w) for w in args.workers}
    times = {w: [] for w in args.workers}
    solver_times = {w: [] for w in args.workers}
    loads = []
    reference = None
    try:
        for w, pool in pools.items():
            wait([pool.submit(_noop) for _ in range(4 * w)])  # start and warm the workers
        # interleave the worker counts, so that load from other users of a shared
        # machine hits both alike
        for _ in range(args.repeats):
            for w, pool in pools.items():
                start = time.perf_counter()
                res = opsamp(model, executor=pool, **kw)
                times[w].append(time.perf_counter() - start)
                solver_times[w].append(float(np.mean([r.wall_time for r in res.report])))
                loads.append(os.getloadavg()[0])
                if reference is None:
                    reference = res.weights
                elif not np.array_equal(res.weights, reference):
                    raise SystemExit(f"different weights with {w} workers: the result must not "
                                     "depend on the executor")
    finally:
        for pool in pools.values():
            pool.shutdown()
    rows = []
    for w in args.workers:
        median = statistics.median(times[w])
        rows.append({
            "solver": args.solver, "solver_version": version, "n": args.n, "d": args.d,
            "n_oracle_calls": args.calls, "workers": w, "repeats": args.repeats,
            "median_seconds": round(median, 3), "min_seconds": round(min(times[w]), 3),
            "calls_per_second": round(args.calls / median, 3), "speedup": None,
            "mean_solver_seconds_per_call": round(statistics.mean(solver_times[w]), 4),
            "usable_cpus": usable_cpus(), "load_average_1min": round(statistics.mean(loads), 2),
            "python": platform.python_version(), "privopt": privopt.__version__,
            "date": _dt.datetime.now().isoformat(timespec="seconds"),
        })
        print(f"{w} worker(s): median {median:.2f} s for {args.calls} calls "
              f"= {args.calls / median:.2f} calls/s", flush=True)
    base = next((r["calls_per_second"] for r in rows if r["workers"] == 1), rows[0]["calls_per_second"])
    for r in rows:
        r["speedup"] = round(r["calls_per_second"] / base, 3)
    return rows


def write(rows, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    _common.write_csv(out / "opsamp_workers.csv", rows, COLUMNS)
    r0 = rows[0]
    lines = [
        "# OPSamp oracle calls per second vs worker processes",
        "",
        f"hinge_halfspace LP, n = {r0['n']}, d = {r0['d']}, {r0['n_oracle_calls']} oracle calls per run, "
        f"solver {r0['solver']} {r0['solver_version'] or ''}, median of {r0['repeats']} interleaved runs, "
        f"warm ProcessPoolExecutor, {r0['usable_cpus']} usable CPUs, Python {r0['python']}, {r0['date']}; "
        f"mean 1-min load average during the runs {r0['load_average_1min']} (a shared machine).",
        "Same random_state in every run; the weights were identical for every worker count.",
        "",
        "| workers | median s | min s | calls/s | speedup vs 1 | solver s/call |",
        "|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['median_seconds']:.2f} | {r['min_seconds']:.2f} | "
                     f"{r['calls_per_second']:.2f} | {r['speedup']:.2f} | {r['mean_solver_seconds_per_call']:.3f} |")
    lines += ["", "solver s/call: the solver call's wall time (Pyomo model writing included) as "
              "reported in each SolveReport; the rest of a call is loading the model and "
              "applying the perturbation.", ""]
    (out / "opsamp_workers.md").write_text("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="records (default 500)")
    parser.add_argument("--d", type=int, default=5, help="features (default 5)")
    parser.add_argument("--calls", type=int, default=16, help="oracle calls per run (default 16)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per worker count (default 5)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="pool sizes (default 1 2)")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    rows = run(args)
    write(rows, args.out)
    print((args.out / "opsamp_workers.md").read_text())


if __name__ == "__main__":
    main()
