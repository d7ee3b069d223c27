"""The Adult experiment of [NRVW20] Section 5: accuracy vs epsilon of OPDisc,
RSPM and private convex baselines, with run times.

Each run (method, epsilon, run index) fits one classifier on the training
set and scores it on training and held-out data.  Runs are independent and
are executed through any ``concurrent.futures.Executor`` (local processes by
default, a dask cluster with ``scheduler=ADDRESS``).  Each finished run is
appended to ``results.csv`` at once, so an interrupted sweep resumes where it
stopped.  delta = 1/n^2 for every method, as in the paper.  Every method is
accounted under replace-one neighbours.  OPDisc uses privopt's proven noise
calibration unless ``calibration="paper"`` (Algorithm 1's value, to reproduce
the paper); the calibration is part of each row and of the resume key.

Randomness: every run gets its own seed derived from ``seed`` and the run's
(method, epsilon, run) by :class:`numpy.random.SeedSequence`, so the sweep is
reproducible.  A reproducible experiment is a measurement, not a release:
the seeds are public.

Solves that a solver does not certify optimal (time limit) are recorded with
``certified=False`` (the mechanisms run with ``on_failure="return"`` here) and
are counted and drawn separately in the figures, never averaged with the
certified ones.
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import math
import os
import time
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = [
    "COLUMNS",
    "available_methods",
    "format_summary",
    "run_experiment",
    "run_adult_experiment",
    "read_results",
    "summarize",
    "task_seed",
]

COLUMNS = [
    "method", "epsilon", "run", "train_accuracy", "test_accuracy", "seconds", "certified",
    "status", "delta", "n_train", "n_test", "solver", "seed", "calibration", "setting", "message",
]

#: Methods of the MIP family (privopt's mechanisms through the estimator).
MIP_METHODS = ("opdisc", "rspm")


def _baselines():
    from ..baselines import PRIVATE_BASELINES, REFERENCE_BASELINES

    return {**PRIVATE_BASELINES, **REFERENCE_BASELINES}


def available_methods() -> list[str]:
    from ..mechanisms import MECHANISMS

    names = [m for m in MIP_METHODS if m in MECHANISMS]
    try:
        names += list(_baselines())
    except ImportError:  # baselines need the [learn] extra
        pass
    return names


def task_seed(seed: int, method: str, epsilon: float, run: int) -> int:
    """A seed for one run, derived from the sweep's seed and the run's identity."""
    key = [int(seed), zlib.crc32(method.encode()), int(round(epsilon * 1e6)), int(run)]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


@dataclass(frozen=True)
class Task:
    method: str
    epsilon: float
    run: int
    seed: int
    delta: float
    solver: str
    time_limit: float | None
    levels: tuple | None
    baseline_params: tuple = ()
    calibration: str = "proven"


def _make_estimator(task: Task, n_features: int):
    if task.method in MIP_METHODS:
        from ..estimators import PrivateHalfspaceClassifier

        return PrivateHalfspaceClassifier(
            epsilon=task.epsilon, delta=task.delta, mechanism=task.method, bounds=(0.0, 1.0),
            levels=list(task.levels) if task.levels is not None else 1, solver=task.solver,
            time_limit=task.time_limit, random_state=task.seed, on_failure="return",
            calibration=task.calibration if task.method == "opdisc" else "proven",
            # the paper's ball for OPDisc: ||w|| <= sqrt(d), grid -floor(sqrt d)..floor(sqrt d)
            norm_bound=math.sqrt(n_features) if task.method == "opdisc" else None)
    cls = _baselines()[task.method]
    params = cls().get_params()
    kwargs = {}
    if "epsilon" in params:
        kwargs["epsilon"] = task.epsilon
    if "delta" in params:
        kwargs["delta"] = task.delta
    if "random_state" in params:
        kwargs["random_state"] = task.seed
    if "bounds" in params:
        kwargs["bounds"] = (0.0, 1.0)  # features are one-hot or scaled to [0, 1]
    kwargs.update({k: v for k, v in task.baseline_params if k in params})
    return cls(**kwargs)


def _run_task(task: Task, X_train, y_train, X_test, y_test) -> dict:
    """Fit one classifier and score it (runs in a worker)."""
    import warnings

    from ..exceptions import PrivoptError, UncertifiedReleaseWarning

    row = {"method": task.method, "epsilon": task.epsilon, "run": task.run, "delta": task.delta,
           "n_train": len(y_train), "n_test": len(y_test), "solver": task.solver, "seed": task.seed,
           "train_accuracy": math.nan, "test_accuracy": math.nan, "certified": "", "status": "ok",
           "calibration": _row_calibration(task.method, task.calibration), "message": ""}
    start = time.perf_counter()
    try:
        est = _make_estimator(task, X_train.shape[1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UncertifiedReleaseWarning)
            est.fit(X_train, y_train)
        uncertified = [w for w in caught if issubclass(w.category, UncertifiedReleaseWarning)]
        row["train_accuracy"] = float(est.score(X_train, y_train))
        row["test_accuracy"] = float(est.score(X_test, y_test))
        result = getattr(est, "result_", None)
        if result is not None:
            row["certified"] = bool(result.certified)
            if not result.certified:
                row["status"] = "uncertified"
                rep = result.report
                row["message"] = f"{rep.termination.name}; gap {rep.abs_gap_achieved}"
        elif uncertified:  # e.g. a baseline's inner optimizer stopped short
            row["certified"] = False
            row["status"] = "uncertified"
            row["message"] = str(uncertified[0].message)[:300]
        else:
            row["certified"] = ""  # no oracle to certify
    except PrivoptError as exc:
        row["status"] = "error"
        row["certified"] = False
        row["message"] = f"{type(exc).__name__}: {exc}"[:300]
    row["seconds"] = time.perf_counter() - start
    return row


def read_results(path) -> list[dict]:
    """Rows of a results.csv (numbers parsed), or [] when it does not exist."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            for k in ("epsilon", "train_accuracy", "test_accuracy", "seconds", "delta"):
                r[k] = float(r[k]) if r.get(k) not in (None, "") else math.nan
            r["run"] = int(r["run"])
            r["certified"] = {"True": True, "False": False}.get(r.get("certified", ""), None)
            rows.append(r)
    return rows


def _row_calibration(method: str, calibration: str) -> str:
    """The calibration recorded for a run: OPDisc's, or "" for methods that have one."""
    return calibration if method == "opdisc" else ""


def _done_keys(rows) -> set:
    return {(r["method"], round(r["epsilon"], 9), r["run"], r.get("calibration") or "") for r in rows}


def experiment_setting(X_train, y_train, X_test, y_test, *, solver, time_limit, levels, baseline_params,
                       seed) -> str:
    """A short fingerprint of everything that changes a run's result except
    (method, epsilon, run, calibration): the data (a hash of the arrays, so
    their size too), solver, time limit, levels, baseline parameters and the
    sweep's seed.  A results file is resumed only with the same setting."""
    import hashlib

    h = hashlib.sha256()
    for a in (X_train, y_train, X_test, y_test):
        arr = np.ascontiguousarray(np.asarray(a))
        h.update(str((arr.shape, arr.dtype.str)).encode())
        h.update(arr.tobytes())
    h.update(repr((solver, time_limit, None if levels is None else tuple(levels),
                   tuple(sorted((baseline_params or {}).items())), seed)).encode())
    return h.hexdigest()[:12]


class SettingMismatchError(ValueError):
    """``out/results.csv`` holds runs of another setting (data, solver, ...)."""


def _make_executor(scheduler, max_workers):
    if scheduler:
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover
            raise RuntimeError("scheduler= needs dask.distributed: pip install 'privopt[dask]'") from exc
        client = Client(scheduler)
        return client.get_executor(), client
    return cf.ProcessPoolExecutor(max_workers=max_workers or os.cpu_count() or 1), None


def run_experiment(
    X_train, y_train, X_test, y_test, *,
    methods, epsilons, runs=15, solver="highs", time_limit=None, out="results", seed=0,
    scheduler=None, executor=None, max_workers=None, levels=None, baseline_params=None,
    progress=True, figures=True, title="", calibration="proven",
) -> list[dict]:
    """Run every (method, epsilon, run) not yet in ``out/results.csv``.

    Returns all rows of the results file (old and new).  ``executor`` (any
    concurrent.futures.Executor) overrides ``scheduler`` (a dask scheduler
    address) and the default local process pool.  ``levels``: grid steps per
    feature for the MIP methods (public feature bounds are (0, 1));
    ``baseline_params``: extra parameters for the baselines (e.g. a public
    ``data_norm``); ``calibration``: OPDisc's noise calibration, "proven"
    (default) or "paper" (see :func:`privopt.opdisc`).
    """
    from .._progress import progress_bar

    from .._validation import check_choice, check_epsilon, check_int
    from ..calibration import OPDISC_CALIBRATIONS

    known = available_methods()
    for m in methods:
        if m not in known:
            raise ValueError(f"unknown method {m!r}; choose from {', '.join(known)}")
    epsilons = [check_epsilon(e) for e in epsilons]
    runs = check_int(runs, "runs", minimum=1)
    calibration = check_choice(calibration, "calibration", OPDISC_CALIBRATIONS)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "results.csv")
    setting = experiment_setting(X_train, y_train, X_test, y_test, solver=solver, time_limit=time_limit,
                                 levels=levels, baseline_params=baseline_params, seed=seed)
    existing = read_results(path)
    other = sorted({r.get("setting") or "(none recorded)" for r in existing} - {setting})
    if other:
        raise SettingMismatchError(
            f"{path} holds runs of another setting ({', '.join(other)}; this one is {setting}: a "
            "different data set or size, solver, time limit, levels, baseline parameters or seed). "
            "Use another out folder, or delete the file to start over.")
    done = _done_keys(existing)
    if existing and progress:
        import sys

        print(f"resuming {path}: reusing {len(existing)} finished runs of setting {setting}",
              file=sys.stderr, flush=True)
    n = len(y_train)
    delta = 1.0 / n**2
    extra = tuple(sorted((baseline_params or {}).items()))
    tasks = [Task(m, e, r, task_seed(seed, m, e, r), delta, solver, time_limit,
                  tuple(levels) if levels is not None else None, extra, calibration)
             for m in methods for e in epsilons for r in range(runs)
             if (m, round(e, 9), r, _row_calibration(m, calibration)) not in done]
    new_file = not os.path.exists(path)
    fh = open(path, "a", newline="")
    writer = csv.DictWriter(fh, fieldnames=COLUMNS)
    if new_file:
        writer.writeheader()
        fh.flush()
    own_executor, client = (None, None)
    if executor is None and tasks:
        own_executor, client = _make_executor(scheduler, max_workers)
        executor = own_executor
    try:
        futures = [executor.submit(_run_task, t, X_train, y_train, X_test, y_test) for t in tasks]
        bar = progress_bar(len(futures), desc="runs", unit="run", disable=not progress)
        for fut in cf.as_completed(futures):
            row = fut.result()
            row["setting"] = setting
            writer.writerow({k: row.get(k, "") for k in COLUMNS})
            fh.flush()
            bar.update(1)
            bar.set_postfix_str(f"{row['method']} eps={row['epsilon']:g} {row['status']}")
        bar.close()
    finally:
        fh.close()
        if own_executor is not None:
            own_executor.shutdown(wait=True, cancel_futures=True)
        if client is not None:
            client.close()
    rows = read_results(path)
    if figures:
        from .plots import plot_accuracy, plot_runtimes

        plot_accuracy(rows, os.path.join(out, "accuracy_vs_epsilon.png"), title=title)
        plot_runtimes(rows, os.path.join(out, "runtime_histogram.png"), title=title)
    return rows


def summarize(rows) -> list[dict]:
    """Per (method, epsilon): runs, certified, uncertified, errors, mean/std accuracy of the
    certified (or non-oracle) runs, median seconds."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["method"], r["epsilon"]), []).append(r)
    out = []
    for (m, e), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        good = [r for r in rs if r["status"] == "ok"]
        tr = np.array([r["train_accuracy"] for r in good])
        te = np.array([r["test_accuracy"] for r in good])
        out.append({
            "method": m, "epsilon": e, "runs": len(rs), "ok": len(good),
            "uncertified": sum(r["status"] == "uncertified" for r in rs),
            "errors": sum(r["status"] == "error" for r in rs),
            "train_mean": float(tr.mean()) if tr.size else math.nan,
            "train_std": float(tr.std()) if tr.size else math.nan,
            "test_mean": float(te.mean()) if te.size else math.nan,
            "test_std": float(te.std()) if te.size else math.nan,
            "median_seconds": float(np.median([r["seconds"] for r in rs])),
        })
    return out


def format_summary(summary) -> str:
    header = ["method", "epsilon", "runs", "ok", "uncert.", "train acc", "held-out acc", "median s"]
    rows = [[s["method"], f"{s['epsilon']:g}", str(s["runs"]), str(s["ok"]), str(s["uncertified"]),
             f"{s['train_mean']:.3f} ± {s['train_std']:.3f}", f"{s['test_mean']:.3f} ± {s['test_std']:.3f}",
             f"{s['median_seconds']:.1f}"] for s in summary]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def adult_levels(feature_blocks, d, numeric_levels: int = 4) -> list[int]:
    """Grid steps per Adult feature: 1 for one-hot columns (exact), ``numeric_levels``
    for the scaled numeric columns."""
    levels = [1] * d
    for name, cols in feature_blocks.items():
        if len(cols) == 1:
            levels[cols[0]] = numeric_levels
    return levels


def adult_baseline_params(data) -> dict:
    """Public row-norm bound for the convex baselines: each one-hot group adds 1
    to ||x||^2 and each numeric feature in [0, 1] at most 1, so
    ||x||_2 <= sqrt(#groups + #numeric) (sqrt(7) for the paper's features).
    It follows from the schema, not from the records."""
    blocks = data.feature_blocks
    return {"data_norm": math.sqrt(len(blocks))}


def run_adult_experiment(
    *, methods=("opdisc", "rspm", "dpsgd"), epsilons=(0.1, 0.5, 1.0), runs=15, solver="highs",
    time_limit=None, scheduler=None, out="results/adult", seed=0, data_home=None, n_train=None,
    numeric_levels=4, progress=True, max_workers=None, figures=True, calibration="proven",
) -> list[dict]:
    """The Adult experiment of [NRVW20] Section 5: balanced n = 15682,
    d = 23, a seeded 80/20 held-out split, delta = 1/n^2.  ``n_train``
    subsamples the training set (for the demo); ``calibration="paper"`` runs
    OPDisc with Algorithm 1's noise scale, as the paper did."""
    from ..datasets import load_adult

    data = load_adult(data_home, random_state=seed)
    X_train, y_train = data.X_train, data.y_train
    if n_train is not None and n_train < len(y_train):
        X_train, y_train = X_train[:n_train], y_train[:n_train]  # rows come shuffled
    levels = adult_levels(data.feature_blocks, X_train.shape[1], numeric_levels)
    return run_experiment(
        X_train, y_train, data.X_test, data.y_test, methods=list(methods), epsilons=epsilons, runs=runs,
        solver=solver, time_limit=time_limit, out=out, seed=seed, scheduler=scheduler,
        max_workers=max_workers, levels=levels, baseline_params=adult_baseline_params(data),
        progress=progress, figures=figures, calibration=calibration,
        title=f"Adult (n_train = {len(y_train)}, d = {X_train.shape[1]})")
