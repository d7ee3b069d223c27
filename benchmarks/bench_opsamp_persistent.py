"""OPSamp at solver speed: time per oracle call, persistent and cold, against the warm re-solve floor.

For three oracles -- the hinge-loss LP (``hinge_halfspace``, n = 500, d = 5),
absolute-loss regression (``absolute_regression``, n = 500, d = 5) and a MILP
(the same hinge LP with integer weights in {-3..3}^5) -- this script measures,
in one run:

* the floor: HiGHS re-solving the already built LP/MILP after changing only
  the cost coefficients of w to those of OPSamp's own noise draws, through
  highspy directly (no Pyomo in the loop);
* ``privopt.opsamp`` with ``persistent=True`` (default: one solver model per
  worker, per call only the noise Params change and HiGHS re-solves warm) and
  ``persistent=False`` (each call loads the model, transforms it and solves
  from scratch), each on a warmed-up ProcessPoolExecutor with 1 and 2 workers.

ms per call = wall time of a run / m; calls/s = m / wall time.  The machines
are shared, so the runs alternate and the median of ``--repeats`` is kept; the
figure of merit is the ratio to the floor measured in the same run.  Every run
of a given oracle must release the same weights (same random_state), and the
script checks it.

Writes ``benchmarks/results/opsamp_persistent.csv`` and ``.md``.

    python benchmarks/bench_opsamp_persistent.py                 # m = 64, 3 repeats
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, wait

import numpy as np

import pyomo.environ as pyo

import privopt
from privopt.models import absolute_regression, hinge_halfspace

import _common

HERE = os.path.dirname(os.path.abspath(__file__))


def oracles(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y_cls = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    y_reg = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
    hinge = hinge_halfspace(X, y_cls, x_bound=3.0)
    absolute = absolute_regression(np.clip(X, -3, 3), np.clip(y_reg, -10, 10), x_bound=3.0, y_bound=10.0)
    milp = hinge_halfspace(X, y_cls, x_bound=3.0, bound=3.0)
    for v in milp.w.values():
        v.domain = pyo.Integers
    return {"hinge LP": hinge, "absolute LP": absolute, "hinge MILP (integer w)": milp}


def floor_ms(model, sigmas):
    """Median ms of a warm HiGHS re-solve after changing the costs of w to
    (cost - sigma_k) for OPSamp's own noise vectors (highspy, no Pyomo)."""
    from privopt.solvers import persistent_solver

    m = model.clone()
    w = list(m.w.values())
    pyo.TransformationFactory("privopt.objective_perturbation").apply_to(
        m, noise=np.zeros(len(w)), normalize=False, mutable_noise=True)
    opt = persistent_solver("highs")
    opt.solve(m, solver_options={"output_flag": False})
    h = opt._solver_model
    cols = [opt._pyomo_var_to_solver_var_map[id(v)] for v in w]
    base = np.array(h.getLp().col_cost_)
    times = []
    for sigma in sigmas:
        start = time.perf_counter()
        for j, c in enumerate(cols):
            h.changeColCost(c, base[c] - sigma[j])
        h.run()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _warm(pool, k):
    wait([pool.submit(time.sleep, 0.05) for _ in range(4 * k)])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--d", type=int, default=5)
    p.add_argument("--calls", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--paths", default="persistent,cold", help="which paths to time")
    p.add_argument("--tag", default="", help="suffix of the result files (e.g. _m1000)")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    args = p.parse_args(argv)
    workers = [int(k) for k in args.workers.split(",")]
    pools = {k: ProcessPoolExecutor(k) for k in workers}
    for k, pool in pools.items():
        _warm(pool, k)
    rows = []
    try:
        for name, model in oracles(args.n, args.d).items():
            n_samples = privopt.models.get_info(model).n_samples
            kw = dict(epsilon=1.0, delta=1.0 / n_samples**2, n_oracle_calls=args.calls, random_state=7,
                      progress=False, project=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                noise = privopt.opsamp(model, executor=pools[workers[0]], return_noise=True, **kw).noise
            floor = floor_ms(model, noise[:-1])     # the same sigma_1..sigma_m the runs below use
            paths = [p_ == "persistent" for p_ in args.paths.split(",")]
            times = {(k, pers): [] for k in workers for pers in paths}
            weights = []
            for _ in range(args.repeats):
                for k in workers:
                    for pers in paths:
                        start = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = privopt.opsamp(model, executor=pools[k], persistent=pers, **kw)
                        times[(k, pers)].append(time.perf_counter() - start)
                        weights.append(res.weights)
            same = all(np.allclose(w, weights[0], atol=1e-7, rtol=0) for w in weights)
            for (k, pers), ts in times.items():
                wall = statistics.median(ts)
                ms = 1000 * wall / args.calls
                rows.append({"oracle": name, "workers": k, "path": "persistent" if pers else "cold",
                             "ms_per_call": round(ms, 2), "calls_per_s": round(args.calls / wall, 1),
                             "floor_ms": round(floor, 2), "ratio_to_floor": round(ms / floor, 2),
                             "same_weights": same, "calls": args.calls, "repeats": args.repeats})
                print(f"{name:24s} workers={k} {rows[-1]['path']:10s} {ms:7.2f} ms/call "
                      f"({rows[-1]['calls_per_s']:6.1f} calls/s), floor {floor:5.2f} ms, x{ms / floor:.1f}, "
                      f"same weights: {same}", flush=True)
    finally:
        for pool in pools.values():
            pool.shutdown()
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, f"opsamp_persistent{args.tag}.csv"), rows, list(rows[0]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# OPSamp oracle calls: persistent vs cold, against the warm re-solve floor",
        "",
        _common.stamp_line(),
        "",
        f"n = {args.n}, d = {args.d}, m = {args.calls} calls per run, median of {args.repeats} interleaved runs, "
        f"warm ProcessPoolExecutor, HiGHS; 1-min load average at the end {load:.2f} "
        "(a shared machine: compare ratios within the table).  floor: highspy re-solving the built "
        "model after changing the costs of w.  `same weights`: every run of the oracle released the "
        "same w (same random_state).",
        "",
        "| oracle | workers | path | ms / call | calls / s | floor ms | x floor | same weights |",
        "|---|--:|---|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        lines.append(f"| {r['oracle']} | {r['workers']} | {r['path']} | {r['ms_per_call']} | {r['calls_per_s']} | "
                     f"{r['floor_ms']} | {r['ratio_to_floor']} | {r['same_weights']} |")
    lines.append("")
    with open(os.path.join(args.out, f"opsamp_persistent{args.tag}.md"), "w") as fh:
        fh.write("\n".join(lines))
    print(f"wrote {args.out}/opsamp_persistent{args.tag}.csv and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
