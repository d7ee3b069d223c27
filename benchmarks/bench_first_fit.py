"""The first fit of a fresh process: cold caches, warm caches, and a warm process.

A fresh Python process pays, on its first fit, for what later fits reuse:
privopt's numba kernels (compiled, or loaded from numba's on-disk cache) and
the baselines' privacy accounting (computed, or read from privopt's on-disk
cache, :mod:`privopt._cache`).  For each estimator this benchmark times, each
in a FRESH subprocess:

* ``cold``: the first fit with empty caches (a new temporary ``NUMBA_CACHE_DIR``
  and ``PRIVOPT_CACHE_DIR``): what the very first use on a machine costs;
* ``second process``: the first fit of a later fresh process with the same
  (now populated) cache directories: what every later process costs (median
  over ``--repeats`` such processes, each fresh);
* ``warm``: a second fit in those same processes (another seed; median).

``--before REF`` adds, for PrivateHalfspaceClassifier and
DPSGDLogisticRegression, the first fit of a second fresh process on the code
of git revision REF (extracted with ``git archive`` into a temporary
directory): the same measurement before a change.  NoisySGDClassifier is
left out there (minutes of CPU; before the accounting cache every process
paid its ``cold`` time).

``import`` is the time of ``import privopt`` plus the estimator's module, in
the same processes; it is not part of any fit time.  The estimators:
``privopt.PrivateHalfspaceClassifier()`` with its defaults (``random_state=0``
only) on a 2,000-record, 6-feature planted halfspace over {0, 1}^6 (10% label
noise, ``privopt.datasets.make_planted_halfspace``), and
``NoisySGDClassifier`` and ``DPSGDLogisticRegression`` (defaults, public
bounds (0, 1)) on the same data.  The numba columns count privopt's kernels
loaded from the cache (hits) and compiled (misses) during the process.

Run:  python benchmarks/bench_first_fit.py [--repeats 3] [--before REF] [--only PrivateHalfspaceClassifier]
Writes benchmarks/results/first_fit.csv and first_fit.md.  The cold
NoisySGDClassifier fit takes one to two minutes of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import statistics
import tempfile
import time
from datetime import datetime, timezone

import _common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

N, D = 2000, 6
ESTIMATORS = ("PrivateHalfspaceClassifier", "NoisySGDClassifier", "DPSGDLogisticRegression")


def _kernel_stats() -> tuple[int, int]:
    """(cache hits, cache misses) summed over privopt's numba kernels built in this process."""
    from privopt.scoring import _engine
    from privopt.search import _patterns
    from privopt.search import _losses

    kernels: list = []
    for getter in (_patterns._numba_kernel, _patterns._minima_kernels, _engine._numba_kernel,
                   _losses._numba_hist):
        k = getter()
        if k is None:
            continue
        kernels.extend(k if isinstance(k, tuple) else (k,))
    hits = sum(int(sum(k.stats.cache_hits.values())) for k in kernels)
    misses = sum(int(sum(k.stats.cache_misses.values())) for k in kernels)
    return hits, misses


def child(name: str) -> None:
    """One fresh process: import, first fit, second fit; prints one JSON line."""
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    import privopt
    from privopt.baselines import DPSGDLogisticRegression, NoisySGDClassifier
    from privopt.datasets import make_planted_halfspace

    t_import = time.perf_counter() - t0
    data = make_planted_halfspace(N, D, noise=0.1, random_state=0)
    X, y = data.X_train, data.y_train

    def make(seed):
        if name == "PrivateHalfspaceClassifier":
            return privopt.PrivateHalfspaceClassifier(random_state=seed)
        cls = {"NoisySGDClassifier": NoisySGDClassifier, "DPSGDLogisticRegression": DPSGDLogisticRegression}[name]
        return cls(bounds=(0.0, 1.0), random_state=seed)

    t = time.perf_counter()
    make(0).fit(X, y)
    first = time.perf_counter() - t
    t = time.perf_counter()
    make(1).fit(X, y)
    warm = time.perf_counter() - t
    hits, misses = _kernel_stats()
    print(json.dumps({"import_seconds": t_import, "first_fit_seconds": first, "warm_fit_seconds": warm,
                      "numba_cache_hits": hits, "numba_cache_misses": misses}))


def run_child(name: str, env: dict, root: str = ROOT) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, "--root", root],
                         env=_common.checkout_env(root, env),
                         cwd=root, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for pkg in ("privopt", "numba", "dp-accounting", "pld-accounting"):
        try:
            parts.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            parts.append(f"{pkg} -")
    return ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=ESTIMATORS, action="append", help="time these estimators only")
    ap.add_argument("--repeats", type=int, default=3, help="later fresh processes per estimator (median)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--before", metavar="REF", help="also time a second process on git revision REF")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:          # privopt of --root: run_child put it first on PYTHONPATH
        child(args.child)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="privopt-before-") as before_root:
        if args.before:
            archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", before_root], input=archive.stdout, check=True)
        for name in args.only or ESTIMATORS:
            rows += measure(name, args.repeats)
            if args.before and name != "NoisySGDClassifier":
                rows += measure(name, 1, before_root, f"before ({args.before}): ")
            print(name, {r["phase"]: r["fit_seconds"] for r in rows if r["estimator"] == name}, flush=True)
    write(rows, args)


def measure(name: str, repeats: int, root: str = ROOT, label: str = "") -> list[dict]:
    """The rows of one estimator: cold, second process, warm (on the code under ``root``)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="privopt-first-fit-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                   PRIVOPT_CACHE_DIR=os.path.join(tmp, "privopt"))
        cold = run_child(name, env, root)
        later = [run_child(name, env, root) for _ in range(max(1, repeats))]
    second = {key: statistics.median(r[key] for r in later) for key in later[0]}
    for phase, res, key, runs in (("cold (empty caches)", cold, "first_fit_seconds", 1),
                                  ("second process (caches populated)", second, "first_fit_seconds", len(later)),
                                  ("warm (second fit, same process)", second, "warm_fit_seconds", len(later))):
        rows.append({"estimator": name, "n": N, "d": D, "phase": label + phase, "processes": runs,
                     "fit_seconds": round(res[key], 3), "import_seconds": round(res["import_seconds"], 3),
                     "numba_cache_hits": res["numba_cache_hits"],
                     "numba_cache_misses": res["numba_cache_misses"]})
    return rows


def write(rows: list[dict], args) -> None:
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, "first_fit.csv"), rows, list(rows[0]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = ["# First fit of a fresh process", "",
             f"`python benchmarks/bench_first_fit.py --repeats {max(1, args.repeats)}"
             f"{f' --before {args.before}' if args.before else ''}` ({versions()}, "
             f"Python {platform.python_version()}, "
             f"{platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the end, "
             f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}). Every process fresh; `cold` is one "
             f"process, the other rows the median over {max(1, args.repeats)} later processes; "
             f"{N:,} records, {D} features (planted halfspace over {{0, 1}}^{D}). `cold`: empty "
             "NUMBA_CACHE_DIR and PRIVOPT_CACHE_DIR; `second process`: the same directories after the cold "
             "process; `warm`: a second fit in those processes; `before (REF)`: the same on git revision REF "
             "(one later process). `import`: `import privopt` and the "
             "baselines, not in the fit times. `numba hits / misses`: privopt's kernels loaded from the "
             "cache / compiled in the whole process (both fits). The second process's first fit of "
             "PrivateHalfspaceClassifier is almost all numba's own start-up (importing numba and "
             "initialising its compiler before the first cached kernel loads), which no cache removes.",
             "The machine was shared with other jobs during the run.", "",
             "| estimator | phase | fit s | import s | numba hits / misses |", "|---|---|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r['estimator']} | {r['phase']} | {r['fit_seconds']:.2f} | {r['import_seconds']:.2f} | "
                     f"{r['numba_cache_hits']} / {r['numba_cache_misses']} |")
    _common.write_markdown(os.path.join(args.out, "first_fit.md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
