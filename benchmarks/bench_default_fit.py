"""The default fit, side by side: dadb0f8's single W, eaaf9c1's default and this checkout's.

``PrivateHalfspaceClassifier()`` with its defaults (``epsilon=1``, the public
``bounds`` given) chooses its W privately among resolutions
(:func:`privopt.mixture_selection`).  At dadb0f8 (before the ladder) the default
was the single default W; at eaaf9c1 the ladder and the warm start were the
default.  This benchmark times the three in one run, on the same tables and
seeds, each in its own subprocess with its checkout first on PYTHONPATH
(:func:`_common.checkout_env`; the two revisions in temporary git worktrees,
removed at the end):

* ``warm``: the median over ``--repeats`` fits (seeds 0, 1, ...) in one process
  after a first fit (seed 1000) that is not counted, each fit on a different
  training fold of the table (below), as a user who cross-validates meets them:
  nothing fitted before is fitted again;
* ``first fit``: that first fit of the fresh process (numba kernels loaded from
  numba's on-disk cache or compiled, lazy imports), in the same process;
* ``fresh process``: the wall time of ``--fresh`` further subprocesses (median)
  that each load the table, ``import privopt`` and fit once, from start to exit
  (Python's start-up and every import included), with ``import`` and ``fit``,
  the two parts timed inside that process;
* ``fresh clone``: one more such subprocess with an empty numba cache (its own
  new NUMBA_CACHE_DIR), as the very first process of a fresh clone: it compiles
  every kernel the fit uses;
* held-out accuracy: mean over the warm fits' seeds, on a held-out set of the
  same distribution; ``same as eaaf9c1``: whether every warm fit released the
  same coefficients as eaaf9c1's fit with the same seed (the released law,
  seed for seed).

Tables: continuous synthetic features (scikit-learn ``make_classification``,
``n_informative`` = d/2, 5,000 held-out rows), 2,000 x 6 and 10,000 x 14;
public bounds: the range of the whole generated table per feature (a range a
data owner would publish).  Folds: n + n/4 training rows are generated and cut
into :data:`FOLDS` folds of n/4; fit i trains on the n rows outside fold i
(the first fit leaves out the last fold, warm fit i fold i, the fresh process
fold 0), the same folds and seeds on every side.  The tables are written once
to a temporary .npz that every subprocess reads.

Run:  python benchmarks/bench_default_fit.py [--repeats 3] [--fresh 3] [--tables 2000x6,10000x14] [--tag T]
Writes benchmarks/results/default_fit{T}.csv and default_fit{T}.md.
"""

from __future__ import annotations

import argparse
import json
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

#: side -> git revision (None: this checkout)
SIDES = {"dadb0f8 (single W)": "dadb0f8", "eaaf9c1 (default)": "eaaf9c1", "now (default)": None}
BASE = "eaaf9c1 (default)"
EPSILON = 1.0
N_TEST = 5000
FIRST_SEED = 1000
#: folds of n/4 rows each of the n + n/4 generated training rows; a fit trains on the rest (n rows)
FOLDS = 5
COLUMNS = ("table", "n", "d", "side", "revision", "warm_s", "warm_runs", "first_fit_s", "fresh_wall_s",
           "fresh_import_s", "fresh_fit_s", "clone_wall_s", "clone_fit_s", "accuracy", "same_as_base", "coefs")


def make_table(n: int, d: int, seed: int = 0):
    """(X, y, X_test, y_test, bounds): n + n/4 training rows (:data:`FOLDS` folds of
    n/4) and N_TEST held-out rows of make_classification."""
    from sklearn.datasets import make_classification

    n_pool = n + n // (FOLDS - 1)
    X, y = make_classification(n_samples=n_pool + N_TEST, n_features=d, n_informative=max(2, d // 2),
                               n_redundant=0, random_state=seed)
    bounds = (X.min(0), X.max(0))
    return X[:n_pool], y[:n_pool], X[n_pool:], y[n_pool:], bounds


def training_rows(n_pool: int, fold: int) -> np.ndarray:
    """The rows a fit trains on: every row outside fold ``fold`` (of :data:`FOLDS`)."""
    return np.flatnonzero(np.arange(n_pool) * FOLDS // n_pool != fold % FOLDS)


def _fit(table, seed, fold):
    """Fit the default estimator of whatever privopt this process imports on the rows
    outside ``fold``; (seconds, model)."""
    import warnings

    import privopt

    X, y, _, _, lo, hi = table
    rows = training_rows(len(y), fold)
    X, y = X[rows], y[rows]
    clf = privopt.PrivateHalfspaceClassifier(epsilon=EPSILON, bounds=(lo, hi), random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        clf.fit(X, y)
        return time.perf_counter() - t0, clf


def _load(path):
    with np.load(path) as f:
        return tuple(f[k] for k in ("X", "y", "X_test", "y_test", "lo", "hi"))


def child_warm(path: str, repeats: int) -> dict:
    """The first fit (the last fold left out), then ``repeats`` warm fits (seed i on
    fold i) in this process."""
    table = _load(path)
    first, _ = _fit(table, FIRST_SEED, FOLDS - 1)
    times, accs, coefs = [], [], []
    for seed in range(repeats):
        secs, clf = _fit(table, seed, seed)
        times.append(secs)
        accs.append(float(np.mean(clf.predict(table[2]) == table[3])))
        coefs.append(np.concatenate([clf.coef_.ravel(), clf.intercept_]).round(12).tolist())
    return {"first_fit_s": first, "warm": times, "accuracy": accs, "coefs": coefs}


def child_fresh(path: str) -> dict:
    """Import privopt and fit once (seed 0): the two parts, timed."""
    table = _load(path)
    t0 = time.perf_counter()
    import privopt  # noqa: F401

    t_import = time.perf_counter() - t0
    secs, _ = _fit(table, 0, 0)
    return {"import_s": t_import, "fit_s": secs}


def run_child(root: str, args: list[str], numba_cache: str | None = None) -> tuple[dict, float]:
    """This script in a subprocess on the privopt of ``root``: (its JSON line, wall seconds).
    ``numba_cache``: the NUMBA_CACHE_DIR of the subprocess (default: numba's own choice)."""
    env = _common.checkout_env(root)
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], env=env,
                         cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{root}: {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def worktree(rev: str) -> str:
    tree = tempfile.mkdtemp(prefix=f"privopt-{rev}-")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "-f", "--detach", tree, rev], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return tree


def measure(label: str, root: str, path: str, args) -> dict:
    warm, _ = run_child(root, ["--child", "warm", "--table", path, "--repeats", str(args.repeats)])
    fresh = [run_child(root, ["--child", "fresh", "--table", path]) for _ in range(args.fresh)]
    with tempfile.TemporaryDirectory(prefix="privopt-numba-") as empty:
        clone, clone_wall = run_child(root, ["--child", "fresh", "--table", path], numba_cache=empty)
    return {"side": label, "clone_wall_s": clone_wall, "clone_fit_s": clone["fit_s"],
            "warm_s": statistics.median(warm["warm"]), "warm_runs": warm["warm"],
            "first_fit_s": warm["first_fit_s"], "fresh_wall_s": statistics.median(w for _, w in fresh),
            "fresh_import_s": statistics.median(f["import_s"] for f, _ in fresh),
            "fresh_fit_s": statistics.median(f["fit_s"] for f, _ in fresh),
            "accuracy": float(np.mean(warm["accuracy"])), "coefs": warm["coefs"]}


def same_coefs(a, b) -> bool:
    """Whether two lists of fitted (coef, intercept) vectors are equal, fit by fit (to 1e-9)."""
    return len(a) == len(b) and all(len(u) == len(v) and np.allclose(u, v, rtol=0, atol=1e-9)
                                    for u, v in zip(a, b))


def write(rows, args, env) -> None:
    _common.write_csv(os.path.join(OUT, f"default_fit{args.tag}.csv"), [
        {**r, "warm_runs": " ".join(f"{t:.3f}" for t in r["warm_runs"]), "coefs": json.dumps(r["coefs"])}
        for r in rows], COLUMNS)
    head = _common.stamp_line(env)
    lines = ["# The default fit: dadb0f8's single W, eaaf9c1's default and now, one run", "", head, "",
             f"`PrivateHalfspaceClassifier(epsilon={EPSILON:g}, bounds=<the table's range>, random_state=seed)` "
             "on continuous synthetic tables (make_classification, d/2 informative features, "
             f"{N_TEST:,} held-out rows). Each side in its own subprocess on its own checkout (the revisions in "
             f"git worktrees). Every fit trains on n rows: the n + n/4 generated rows but one fold of n/4 "
             f"({FOLDS} folds), a different fold for each fit of a process, as in cross-validation (no fit "
             "repeats an earlier one's data). "
             f"`warm`: median of {args.repeats} fits (seed i on fold i, i = 0..{args.repeats - 1}) after a first "
             f"fit (seed {FIRST_SEED}, last fold left out) in the same process; `first fit`: that first fit; "
             "`fresh process`: wall time "
             f"of a subprocess that loads the table, imports privopt and fits once (fold 0, seed 0; median of "
             f"{args.fresh}), with "
             "the import and the fit inside it; `x single W`: warm time over dadb0f8's; `same law`: every warm "
             "fit released eaaf9c1's coefficients for its seed and fold; `fresh clone`: the same as a fresh "
             "process, once, with an empty numba cache (NUMBA_CACHE_DIR a new folder: a fresh clone's very first "
             "process, which compiles the kernels it uses; the fresh processes before it load them from the "
             "checkout's cache). The machine (2 cores) was shared with other "
             "jobs: compare the ratios within the run.", "",
             "dadb0f8's warm fit is that fast without any cache across fits (a fit on a new fold takes as long as "
             "one on data fitted before): it draws its single W top down in a few milliseconds, and the rest of "
             "its fit builds the Pyomo model; in some fits a full pass of Python's cyclic garbage collector, set "
             "off by the model's thousands of constraint objects, adds about 0.14 s at 2,000 x 6 (a median of 3 "
             "may leave it out) and about 1 s at 10,000 x 14 (most of its time there).", "",
             "`warm mean s`: the mean of the same warm fits (what a cross-validation pays per fit, "
             "the collector's passes included), and `x single W (mean)` its ratio.", "",
             "| table | side | warm s | x single W | warm mean s | x single W (mean) | x eaaf9c1 | first fit s "
             "| fresh process s (import + fit) | fresh clone s (fit) | held-out accuracy | same law as eaaf9c1 |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in rows:
        single = next(o for o in rows if o["table"] == r["table"] and o["revision"] == "dadb0f8")
        base = next((o for o in rows if o["table"] == r["table"] and o["side"] == BASE), None)
        lines.append(
            f"| {r['table']} | {r['side']} | {r['warm_s']:.2f} | {r['warm_s'] / single['warm_s']:.2f} | "
            f"{_mean(r):.2f} | {_mean(r) / _mean(single):.2f} | {r['warm_s'] / base['warm_s']:.2f} | "
            f"{r['first_fit_s']:.2f} | {r['fresh_wall_s']:.2f} "
            f"({r['fresh_import_s']:.2f} + {r['fresh_fit_s']:.2f}) | {r['clone_wall_s']:.2f} "
            f"({r['clone_fit_s']:.2f}) | {r['accuracy']:.3f} | "
            f"{r['same_as_base']} |")
    _common.write_markdown(os.path.join(OUT, f"default_fit{args.tag}.md"), lines)


def _mean(row) -> float:
    """The mean of a row's warm fits (``warm_runs``: a list, or the CSV's space-separated text)."""
    runs = row["warm_runs"]
    return statistics.fmean(float(t) for t in (runs.split() if isinstance(runs, str) else runs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm fits per side (median)")
    ap.add_argument("--fresh", type=int, default=3, help="fresh processes per side (median)")
    ap.add_argument("--tables", default="2000x6,10000x14", help="n x d of the synthetic tables")
    ap.add_argument("--tag", default="", help="suffix of the results files (e.g. _quick)")
    ap.add_argument("--child", choices=("warm", "fresh"), help=argparse.SUPPRESS)
    ap.add_argument("--table", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        out = child_warm(args.table, args.repeats) if args.child == "warm" else child_fresh(args.table)
        print(json.dumps(out))
        return 0
    env = _common.stamp(argv)
    trees = {label: worktree(rev) for label, rev in SIDES.items() if rev is not None}
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="privopt-default-fit-") as tmp:
            for spec in args.tables.split(","):
                n, d = (int(v) for v in spec.lower().split("x"))
                path = os.path.join(tmp, f"table_{n}x{d}.npz")
                X, y, Xt, yt, (lo, hi) = make_table(n, d)
                np.savez(path, X=X, y=y, X_test=Xt, y_test=yt, lo=lo, hi=hi)
                for label, rev in SIDES.items():
                    row = measure(label, trees.get(label, ROOT), path, args)
                    rows.append({"table": f"{n:,} x {d}", "n": n, "d": d, "revision": rev or "HEAD", **row})
                    print(f"{n}x{d} {label}: warm {row['warm_s']:.2f} s, first {row['first_fit_s']:.2f} s, "
                          f"fresh {row['fresh_wall_s']:.2f} s, accuracy {row['accuracy']:.3f}", flush=True)
    finally:
        for tree in trees.values():
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for r in rows:
        base = next(o for o in rows if o["table"] == r["table"] and o["side"] == BASE)
        r["same_as_base"] = "yes" if same_coefs(r["coefs"], base["coefs"]) else "no"
    write(rows, args, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
