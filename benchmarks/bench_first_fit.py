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
paid its ``cold`` time) unless it is named with ``--only``.  ``--name STEM``
writes ``STEM.csv`` and ``STEM.md`` instead of ``first_fit.*``.

Each process is timed as a user meets it: nothing is imported before it is used.
The child starts its clock, imports the estimator (``from privopt import
PrivateHalfspaceClassifier``, or the baseline's class from ``privopt.baselines``),
then reads the data (made by the parent, saved with numpy, loaded with numpy,
which the import has loaded already) and fits: ``import`` is that import,
``first fit`` the first fit (with the imports it makes itself: numba, the warm
start's baseline), ``total`` the two together, each in wall and CPU seconds
(``time.perf_counter``, ``time.process_time``); ``process`` is the whole child
process's wall time as the parent sees it (interpreter start and exit included).
The estimators: ``privopt.PrivateHalfspaceClassifier(random_state=0)`` with its
defaults on a 2,000-record, 6-feature planted halfspace over {0, 1}^6 (10% label
noise, ``privopt.datasets.make_planted_halfspace``), and ``NoisySGDClassifier``
and ``DPSGDLogisticRegression`` (defaults, public bounds (0, 1)) on the same data.
The numba columns count privopt's kernels loaded from the cache (hits) and
compiled (misses) during the process.  The children run without
``PYTHONDONTWRITEBYTECODE``: their modules load from bytecode (``__pycache__``),
as an installed package's do; compiling privopt's modules from source instead
adds about 0.4 s to every import.

``--floor`` adds the import, each in a fresh process, of the third-party
libraries the default fit cannot avoid (numpy, Pyomo's ``pyomo.environ``, numba)
and of numba's start-up to its first cached kernel: what no change inside privopt
removes while it keeps them; and, for comparison, what privopt avoids: numba
loaded after Pyomo with Pyomo's scipy hook firing (it imports scipy.stats,
scipy.integrate, scipy.sparse and scipy.spatial when numba imports scipy), and
scikit-learn's ``sklearn.base`` (which imports scipy.stats and pandas), which the
estimators no longer import.

Run:  python benchmarks/bench_first_fit.py [--repeats 3] [--before REF] [--floor] [--only PrivateHalfspaceClassifier]
      [--name first_fit]
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


def child(name: str, data: str) -> None:
    """One fresh process: import, first fit, second fit; prints one JSON line."""
    t0, c0 = time.perf_counter(), time.process_time()
    if name == "PrivateHalfspaceClassifier":
        from privopt import PrivateHalfspaceClassifier as cls
    else:
        import privopt.baselines

        cls = getattr(privopt.baselines, name)
    t_import, c_import = time.perf_counter() - t0, time.process_time() - c0
    import warnings

    import numpy as np      # loaded by the import above

    warnings.simplefilter("ignore")
    with np.load(data) as arrays:
        X, y = arrays["X"], arrays["y"]

    def make(seed):
        if name == "PrivateHalfspaceClassifier":
            return cls(random_state=seed)
        return cls(bounds=(0.0, 1.0), random_state=seed)

    t, c = time.perf_counter(), time.process_time()
    make(0).fit(X, y)
    first, first_cpu = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    make(1).fit(X, y)
    warm = time.perf_counter() - t
    hits, misses = _kernel_stats()
    print(json.dumps({"import_seconds": t_import, "import_cpu": c_import, "first_fit_seconds": first,
                      "first_fit_cpu": first_cpu, "warm_fit_seconds": warm,
                      "numba_cache_hits": hits, "numba_cache_misses": misses}))


def run_child(name: str, env: dict, data: str, root: str = ROOT) -> dict:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, "--data", data,
                          "--root", root],
                         env=_common.checkout_env(root, env),
                         cwd=root, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_seconds"] = time.perf_counter() - t
    return res


#: numba's start-up to a cached kernel (the kernel cached by the untimed first run).
_KERNEL = "@numba.njit(cache=True)\ndef f(x):\n    return x + 1\nf(1)\n"
#: Pyomo's callback on the import of scipy held back while numba (which imports scipy) loads,
#: as privopt._numba.import_numba holds it.
_HELD = ("from pyomo.common.dependencies import DeferredImportCallbackFinder as F\n"
         "held = F._callbacks.pop('scipy', [])\nimport numba\nF._callbacks['scipy'] = held\n")
#: --floor: the third-party imports the default fit needs, numba's start-up to a cached kernel,
#: and, for comparison, what privopt no longer imports (scikit-learn; Pyomo's scipy hook).
FLOOR = {
    "numpy": "import numpy",
    "pyomo.environ": "import pyomo.environ",
    "numba": "import numba",
    "numba to its first cached kernel": "import numba\n" + _KERNEL,
    "all the default fit needs: numpy, pyomo.environ, numba to a cached kernel (Pyomo's scipy hook held)":
        "import numpy, pyomo.environ\n" + _HELD + _KERNEL,
    "not imported: numba after pyomo.environ, Pyomo's scipy hook firing (scipy.stats, ...)":
        "import pyomo.environ\nimport numba\n" + _KERNEL,
    "not imported: sklearn.base (with scipy.stats, pandas)": "import sklearn.base",
}


def floor(repeats: int) -> list[dict]:
    """Median CPU and wall seconds of each FLOOR snippet in fresh processes (after one
    untimed run that fills numba's cache)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="privopt-floor-") as tmp:
        for what, code in FLOOR.items():
            path = os.path.join(tmp, f"floor{len(rows)}.py")
            with open(path, "w") as fh:
                fh.write("import time\nt, c = time.perf_counter(), time.process_time()\n" + code +
                         "\nprint(time.perf_counter() - t, time.process_time() - c)\n")
            env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            runs = [subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, check=True,
                                   cwd=tmp).stdout.split() for _ in range(max(1, repeats) + 1)][1:]
            rows.append({"what": what, "seconds": statistics.median(float(r[0]) for r in runs),
                         "cpu": statistics.median(float(r[1]) for r in runs)})
    return rows


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
    ap.add_argument("--before", metavar="REF", help="also time later processes on git revision REF")
    ap.add_argument("--floor", action="store_true", help="also time the third-party imports alone")
    ap.add_argument("--name", default="first_fit", help="stem of the results files (STEM.csv, STEM.md)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:          # privopt of --root: run_child put it first on PYTHONPATH
        child(args.child, args.data)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="privopt-before-") as before_root:
        if args.before:
            archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", before_root], input=archive.stdout, check=True)
        data = os.path.join(before_root, "first_fit_data.npz")
        save_data(data)
        for name in args.only or ESTIMATORS:
            rows += measure(name, args.repeats, data)
            if args.before and (name != "NoisySGDClassifier" or args.only):
                rows += measure(name, args.repeats, data, before_root, f"before ({args.before}): ")
            print(name, {r["phase"]: r["total_seconds"] for r in rows if r["estimator"] == name}, flush=True)
    write(rows, floor(args.repeats) if args.floor else [], args)


def save_data(path: str) -> None:
    """The benchmark's table, saved for the children (which load it with numpy alone)."""
    import numpy as np

    from privopt.datasets import make_planted_halfspace

    data = make_planted_halfspace(N, D, noise=0.1, random_state=0)
    np.savez(path, X=data.X_train, y=data.y_train)


def measure(name: str, repeats: int, data: str, root: str = ROOT, label: str = "") -> list[dict]:
    """The rows of one estimator: cold, later processes, warm (on the code under ``root``)."""
    with tempfile.TemporaryDirectory(prefix="privopt-first-fit-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                   PRIVOPT_CACHE_DIR=os.path.join(tmp, "privopt"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)    # modules load from bytecode, as an installed package's do
        cold = run_child(name, env, data, root)
        later = [run_child(name, env, data, root) for _ in range(max(1, repeats))]
    for res in [cold, *later]:
        res["total_seconds"] = res["import_seconds"] + res["first_fit_seconds"]
        res["total_cpu"] = res["import_cpu"] + res["first_fit_cpu"]
    second = {key: statistics.median(r[key] for r in later) for key in later[0]}
    rows = []
    for phase, res, runs in (("cold (empty caches)", cold, 1),
                             ("later process (caches populated)", second, len(later))):
        rows.append({"estimator": name, "n": N, "d": D, "phase": label + phase, "processes": runs,
                     **{key: round(res[key], 3) for key in ("import_seconds", "import_cpu", "first_fit_seconds",
                                                           "first_fit_cpu", "total_seconds", "total_cpu",
                                                           "process_seconds", "warm_fit_seconds")},
                     "numba_cache_hits": res["numba_cache_hits"], "numba_cache_misses": res["numba_cache_misses"]})
    return rows


def write(rows: list[dict], floor_rows: list[dict], args) -> None:
    os.makedirs(args.out, exist_ok=True)
    _common.write_csv(os.path.join(args.out, f"{args.name}.csv"), rows, list(rows[0]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    command = (f"python benchmarks/bench_first_fit.py --repeats {max(1, args.repeats)}"
               f"{f' --before {args.before}' if args.before else ''}{' --floor' if args.floor else ''}"
               f"{''.join(f' --only {name}' for name in args.only or ())}"
               f"{f' --name {args.name}' if args.name != 'first_fit' else ''}")
    lines = ["# First fit of a fresh process", "",
             f"`{command}` ({versions()}, Python {platform.python_version()}, "
             f"{platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the end, "
             f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}). Every process fresh and timed as a "
             "user meets it (nothing imported before it is used); `cold` is one process, `later process` the "
             f"median over {max(1, args.repeats)} later processes; {N:,} records, {D} features (planted halfspace "
             f"over {{0, 1}}^{D}). `cold`: empty NUMBA_CACHE_DIR and PRIVOPT_CACHE_DIR; `later process`: the same "
             "directories after the cold process; `before (REF)`: the same on git revision REF. `import`: "
             "`from privopt import PrivateHalfspaceClassifier` (a baseline: its class from `privopt.baselines`); "
             "`first fit`: the first fit, with the imports it makes (numba, the warm start's baseline); "
             "`total`: the two, wall (CPU in brackets); `process`: the child's whole wall time, interpreter "
             "start and exit included; `warm`: a second fit in the same process. Modules load from bytecode, "
             "as an installed package's do (the children run without PYTHONDONTWRITEBYTECODE). "
             "`numba hits / misses`: "
             "privopt's kernels loaded from the cache / compiled in the whole process (both fits).",
             "The machine was shared with other jobs during the run: compare the CPU seconds, and rows of one "
             "run only.", "",
             "| estimator | phase | import s (CPU) | first fit s (CPU) | total s (CPU) | process s | warm fit s "
             "| numba hits / misses |", "|---|---|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r['estimator']} | {r['phase']} | {r['import_seconds']:.2f} ({r['import_cpu']:.2f}) | "
                     f"{r['first_fit_seconds']:.2f} ({r['first_fit_cpu']:.2f}) | "
                     f"{r['total_seconds']:.2f} ({r['total_cpu']:.2f}) | {r['process_seconds']:.2f} | "
                     f"{r['warm_fit_seconds']:.2f} | {r['numba_cache_hits']} / {r['numba_cache_misses']} |")
    if floor_rows:
        lines += ["", "The floor: each import alone in a fresh process (median of "
                  f"{max(1, args.repeats)}, after one untimed run that fills numba's cache):", "",
                  "| what | wall s | CPU s |", "|---|--:|--:|"]
        lines += [f"| {r['what']} | {r['seconds']:.2f} | {r['cpu']:.2f} |" for r in floor_rows]
    _common.write_markdown(os.path.join(args.out, f"{args.name}.md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
