"""The experiment runner: every (method, epsilon, run) of a sweep, on any data set.

Each run (method, epsilon, run index) fits one classifier on the training
set and scores it on training and held-out data.  Runs are independent and
are executed through any ``concurrent.futures.Executor`` (local processes by
default, a dask cluster with ``scheduler=ADDRESS``).  Each finished run is
appended to ``results.csv`` at once, so an interrupted sweep resumes where it
stopped.  delta = 1/n^2 for every method, as in the paper (private selection,
``permute_and_flip`` and ``exponential``, is pure epsilon-DP: its rows record
delta = 0).  Every method is
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
certified ones.  The rows go to the results store (:mod:`._store`), the
summary and figures are written by :mod:`._summary` and :mod:`.plots`.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import csv
import math
import os
import time
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# MAX_EPSILON: the largest epsilon privopt accepts (e^epsilon overflows above)
from .._validation import MAX_EPSILON, check_choice, check_epsilon, check_int, check_positive
from ._methods import (
    DEFAULT_METHOD,
    DETERMINISTIC_METHODS,
    MIP_METHODS,
    REFERENCE_TIME_LIMIT,
    SELECTION_METHODS,
    TUNED_METHODS,
    ZERO_ONE_DEFAULT_REFERENCE,
    ZERO_ONE_REFERENCE,
    ZERO_ONE_REFERENCES,
    _baselines,
    available_methods,
    method_revision,
    row_calibration,
)
from ._lock import sweep_lock
from ._store import (
    COLUMNS,
    ResultsAppender,
    ResultsFileWarning,
    SettingMismatchError,
    StaleResultsError,
    check_out_folder,
    done_keys,
    experiment_setting,
    finished_runs,
    read_results,
    rewrite_results,
    scan_results,
    write_failure,
)
from ._summary import write_summary
from ._workers import SweepStopped, stop_on_sigterm, stop_pool, sweep_pool
from .._progress import progress_bar
from ..calibration import OPDISC_CALIBRATIONS
from ..exceptions import ParameterError, PrivacyLeakWarning, PrivoptError, UncertifiedReleaseWarning
from .plots import FiguresSkippedWarning, figures_unavailable, plot_accuracy, plot_runtimes

__all__ = ["Task", "task_seed", "run_experiment"]


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
    norm_bound: float | None = None


def _opdisc_ball(task: Task, n_features: int) -> float:
    """OPDisc's D: the task's, else the paper's ||w|| <= sqrt(d) (grid
    -floor(D)..floor(D) either way)."""
    return task.norm_bound if task.norm_bound is not None else math.sqrt(n_features)


def _make_estimator(task: Task, n_features: int):
    # lazy: the estimators need scikit-learn (privopt[learn]), loaded when a run starts
    from ..estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier

    if task.method == DEFAULT_METHOD:
        # what a user gets: epsilon and the features' public bounds, every other parameter the estimator's
        # default (no levels, grid or norm_bound: W is chosen among the resolutions).  Features declared
        # on the unit grid (levels None: integer-valued, e.g. the demo's {0, 1} set) need no bounds and
        # are used as they are, as a user would give them; features with levels are in [0, 1].
        bounds = (0.0, 1.0) if task.levels is not None else None
        return PrivateHalfspaceClassifier(epsilon=task.epsilon, bounds=bounds, time_limit=task.time_limit,
                                          random_state=task.seed, keep_report=True)
    levels = list(task.levels) if task.levels is not None else 1
    if task.method in MIP_METHODS:
        return PrivateHalfspaceClassifier(
            epsilon=task.epsilon, delta=task.delta, mechanism=task.method, bounds=(0.0, 1.0),
            levels=levels, solver=task.solver,
            time_limit=task.time_limit, random_state=task.seed, on_failure="return",
            calibration=task.calibration if task.method == "opdisc" else "proven",
            norm_bound=_opdisc_ball(task, n_features) if task.method == "opdisc" else None,
            keep_report=True,      # the runner reads the solver and the failure from it (the curator's table)
            fit_intercept=False)   # the paper's homogeneous halfspace (the estimator's default is True)
    if task.method in SELECTION_METHODS:
        # the estimator's defaults for W (fit_intercept, grid, norm_bound) and its solver (enumeration)
        return PrivateHalfspaceClassifier(
            epsilon=task.epsilon, mechanism=task.method, bounds=(0.0, 1.0), levels=levels,
            time_limit=task.time_limit, random_state=task.seed, keep_report=True)
    if task.method == ZERO_ONE_DEFAULT_REFERENCE:
        return ZeroOneHalfspaceClassifier(
            bounds=(0.0, 1.0), levels=levels, time_limit=task.time_limit or REFERENCE_TIME_LIMIT)
    if task.method == ZERO_ONE_REFERENCE:
        return ZeroOneHalfspaceClassifier(
            bounds=(0.0, 1.0), levels=levels, norm_bound=_opdisc_ball(task, n_features),
            solver=task.solver, time_limit=task.time_limit or REFERENCE_TIME_LIMIT, fit_intercept=False)
    # the tuned baseline starts from DP-SGD built like every baseline; _tuned then searches its grid
    cls = _baselines()["dpsgd" if task.method in TUNED_METHODS else task.method]
    params = cls().get_params()
    kwargs: dict[str, Any] = {}
    if "epsilon" in params and math.isfinite(task.epsilon):
        kwargs["epsilon"] = task.epsilon
    if "delta" in params:
        kwargs["delta"] = task.delta
    if "random_state" in params:
        kwargs["random_state"] = task.seed
    if "bounds" in params:
        kwargs["bounds"] = (0.0, 1.0)  # features are one-hot or scaled to [0, 1]
    kwargs.update({k: v for k, v in task.baseline_params if k in params})
    return cls(**kwargs)


def released_w(est) -> str:
    """What a fitted default estimator released, in words: its mechanism and the W of its
    release (levels, grid, ball, and whether geometric, centred, with a wide intercept or the warm
    start's score feature), e.g. ``"permute_and_flip: levels 1, grid -2..2, ||w|| <= 2"``."""
    res = getattr(est, "resolution_", None)
    if res is None:
        return est.mechanism_
    if res.warm_start:
        shape = f"the warm start's score in {res.levels} steps, grid -{res.grid}..{res.grid}"
    elif getattr(est, "discretizer_", None) is None:     # integer features used as they are
        shape = f"integer features as they are, grid -{res.grid}..{res.grid}, ||w|| <= {res.norm_bound:g}"
    else:
        shape = f"levels {res.levels}, grid -{res.grid}..{res.grid}, ||w|| <= {res.norm_bound:g}"
        shape += (", geometric steps" * getattr(res, "geometric", False) + ", centred" * res.centered
                  + ", wide intercept" * res.wide_intercept)
    return f"{est.mechanism_}: {shape} (of {len(est.resolutions_)} W offered)"


def _run_task(task: Task, X_train, y_train, X_test, y_test) -> dict:
    """Fit one classifier and score it (runs in a worker)."""
    import warnings

    row = {"method": task.method, "epsilon": task.epsilon, "run": task.run, "delta": task.delta,
           "n_train": len(y_train), "n_test": len(y_test), "solver": task.solver, "seed": task.seed,
           "train_accuracy": math.nan, "test_accuracy": math.nan, "certified": "", "status": "ok",
           "calibration": row_calibration(task.method, task.calibration), "message": ""}
    start = time.perf_counter()
    try:
        est = _make_estimator(task, X_train.shape[1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UncertifiedReleaseWarning)
            if task.method in TUNED_METHODS:
                est, row["message"] = _tuned(est, task, X_train, y_train)
            else:
                est.fit(X_train, y_train)
        uncertified = [w for w in caught if issubclass(w.category, UncertifiedReleaseWarning)]
        row["train_accuracy"] = float(est.score(X_train, y_train))
        row["test_accuracy"] = float(est.score(X_test, y_test))
        # the relation the fitted estimator's guarantee holds under ("" for the non-private references)
        row["neighbouring"] = getattr(est, "neighbouring_", "")
        result = getattr(est, "result_", None)
        if task.method == ZERO_ONE_DEFAULT_REFERENCE:   # the estimator's default solver: say which ran
            row["solver"] = getattr(est.report_, "solver", None) or task.solver
        if task.method in ZERO_ONE_REFERENCES:   # not private: the best halfspace found counts
            row["certified"] = est.certified_
            lo, hi = est.train_error_bounds_
            n = len(y_train)
            row["message"] = ("" if est.certified_ else
                              f"not proven optimal within {est.time_limit:g} s; optimum's training accuracy "
                              f"<= {1 - (lo or 0) / n:.4f}")
        elif result is not None:
            if task.method in (*SELECTION_METHODS, DEFAULT_METHOD):   # the guarantee's delta (0 for a
                row["delta"] = float(result.delta)   # selection), W scored whatever the sweep's MILP solver
                row["solver"] = getattr(result.report, "solver", None) or task.solver
            if task.method == DEFAULT_METHOD:
                row["message"] = released_w(est)
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


def _tuned(est, task: Task, X_train, y_train):
    """The paper's DP-SGD baseline: grid search (privopt.baselines.DEFAULT_DPSGD_GRID)
    with the validation split drawn from the training data, refit on all of it."""
    import warnings

    from ..baselines import DEFAULT_DPSGD_GRID, private_grid_search   # lazy: scikit-learn (privopt[learn])

    grid: dict[str, Sequence[float]] = dict(DEFAULT_DPSGD_GRID)
    n_fit = len(y_train) - int(round(0.25 * len(y_train)))  # the search fits on 3/4 of the records
    grid["batch_size"] = [b for b in grid["batch_size"] if b <= n_fit] or [max(1, n_fit // 10)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the label says it; the row records it
        found = private_grid_search(est, grid, X_train, y_train, random_state=task.seed)
    params = ", ".join(f"{k}={v:g}" for k, v in sorted(found.best_params.items()))
    return found.best_estimator, f"chosen on private data (not private): {params}"


def _make_executor(scheduler, max_workers):
    if scheduler:
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover
            raise RuntimeError("scheduler= needs dask.distributed: pip install 'privopt[dask]'") from exc
        client = Client(scheduler)
        return client.get_executor(), client
    return sweep_pool(max_workers or os.cpu_count() or 1), None   # its workers end with the sweep


def _set_aside(path: str, scan) -> None:
    """Move the unreadable lines of ``results.csv`` to ``results.csv.rejected`` (appended,
    each after a comment naming its line and why) and say so, with the runs recorded
    twice, in a :class:`ResultsFileWarning`; the caller rewrites the file with the good
    rows, each run once.  The runs of the lines set aside are not done, so the sweep
    runs them again (with the same seeds)."""
    import datetime as _dt
    import warnings

    parts = []
    if scan.bad:
        rejected = f"{path}.rejected"
        stamp = _dt.datetime.now().isoformat(timespec="seconds")
        with open(rejected, "a", newline="") as fh:
            for line, text, why in scan.bad:
                fh.write(f"# line {line} of {os.path.basename(path)}, set aside {stamp}: {why}\n{text}\n")
        parts.append(f"{path}: moved {len(scan.bad)} unreadable line(s) to {rejected} and will run them again: "
                     + "; ".join(f"line {line}: {why}" for line, _, why in scan.bad[:10])
                     + (f"; and {len(scan.bad) - 10} more" if len(scan.bad) > 10 else ""))
    if scan.duplicates:
        parts.append(scan.duplicates_message(path))
    warnings.warn(" Also: ".join(parts), ResultsFileWarning, stacklevel=3)


def run_experiment(
    X_train, y_train, X_test, y_test, *,
    methods, epsilons, runs=15, solver="highs", time_limit=None, out="results", seed=0,
    scheduler=None, executor=None, max_workers=None, levels=None, baseline_params=None,
    progress=True, figures=True, title="", calibration="proven", norm_bound=None, rerun_stale=False,
    notes="",
) -> list[dict]:
    """Run every (method, epsilon, run) not yet in ``out/results.csv``.

    Returns all rows of the results file (old and new).  ``executor`` (any
    concurrent.futures.Executor) overrides ``scheduler`` (a dask scheduler
    address) and the default local process pool.  ``levels``: grid steps per
    feature for the MIP methods (public feature bounds are (0, 1));
    ``baseline_params``: extra parameters for the baselines (e.g. a public
    ``data_norm``); ``calibration``: OPDisc's noise calibration, "proven"
    (default) or "paper" (see :func:`privopt.opdisc`), or a list of both to
    run OPDisc under each (rows say which; the paper's is drawn as
    ``opdisc[paper]``); ``norm_bound``: OPDisc's ball D (default sqrt(d), the
    paper's), grid -floor(D)..floor(D); ``notes``: how to read the results,
    written into ``summary.md`` under the table.

    Resuming: rows are reused only for the same setting (data, solver, time
    limit, levels, baseline parameters, ball, seed; else
    :class:`SettingMismatchError`) and, for the methods requested, only when
    computed by the current revision of their code (:func:`method_revision`;
    rows without one come from a privopt that did not record it).  Otherwise
    :class:`StaleResultsError`, unless ``rerun_stale=True``, which drops those
    rows from the file and runs them again.

    One sweep at a time: the sweep holds a lock on ``out`` (:mod:`._lock`) from
    before it reads ``results.csv`` until the summary is written; a second sweep on
    the same folder raises :class:`~._lock.SweepLockedError` naming the holder's pid,
    so no run is ever recorded twice.  A file that does hold a run twice (written by
    an older privopt) keeps its first row; lines that are not readable rows (the last
    row cut short by an interrupted write, a stray line) are moved to
    ``results.csv.rejected`` and their runs run again; both with a
    :class:`~._store.ResultsFileWarning` naming the lines.  epsilons above
    :data:`privopt._validation.MAX_EPSILON` are refused.

    Faults: an ``out`` folder that cannot be written is refused before any run
    (:class:`~privopt.exceptions.ParameterError`, ``parameter="out"``).  A failed write of
    a row (a full disk) stops the sweep with :class:`~._store.ResultsWriteError` (an
    ``OSError`` with the system's ``errno``); the rows written before stay, whole.  A
    SIGTERM (when the program has no handler of its own) stops the sweep between runs:
    the finished runs are recorded, the workers stopped, the lock released, and
    :class:`~._workers.SweepStopped` (a ``SystemExit``, code 143) is raised.  The
    sweep's own process pool has workers that die with it, so even ``kill -9`` leaves
    no worker and no lock behind; the rerun resumes.  ``figures=False`` skips the
    figures; without matplotlib the sweep warns before any run
    (:class:`~.plots.FiguresSkippedWarning`) and writes the summary without them.

    Methods: :func:`available_methods`; ``dpsgd_tuned`` is DP-SGD with the
    paper's (non-private) grid search, ``nonprivate_01`` the 0/1-loss
    optimum on OPDisc's grid and ball; ``default`` is
    :class:`~privopt.PrivateHalfspaceClassifier` with its defaults (W chosen
    among resolutions; the W it released is each row's message), given
    ``bounds=(0, 1)`` when ``levels`` are given and none when ``levels`` is None
    (integer-valued features, used as they are); ``permute_and_flip`` and
    ``exponential`` are private selection over the estimator's default W,
    ``nonprivate_01_default`` the 0/1-loss optimum on that W.  Methods without randomness
    (:data:`DETERMINISTIC_METHODS`) run once, recorded with epsilon = inf.
    """
    known = available_methods()
    for m in methods:
        if m not in known:
            raise ValueError(f"unknown method {m!r}; choose from {', '.join(known)}")
    epsilons = [check_epsilon(e) for e in epsilons]
    if not epsilons:
        raise ParameterError("epsilons: give at least one epsilon, e.g. [0.1, 1.0].", "epsilons")
    if max(epsilons) > MAX_EPSILON:
        raise ParameterError(
            f"epsilons: {max(epsilons):g} is above {MAX_EPSILON:g}, where no method is private in any useful "
            "sense (and DP-SGD's accountant overflows); give smaller epsilons, and for the no-noise limit add "
            "the non-private references (nonprivate_lr, nonprivate_01).", "epsilons")
    if len(y_train) < 2 or len(y_test) < 1:
        raise ParameterError(f"y_train: a sweep needs at least 2 training records and 1 held-out record, got "
                             f"{len(y_train)} and {len(y_test)}.", "y_train")
    runs = check_int(runs, "runs", minimum=1)
    calibrations = [calibration] if isinstance(calibration, str) else list(calibration)
    if not calibrations:
        raise ValueError("calibration: give 'proven', 'paper' or a list of them")
    calibrations = list(dict.fromkeys(check_choice(c, "calibration", OPDISC_CALIBRATIONS) for c in calibrations))
    if norm_bound is not None:
        norm_bound = check_positive(norm_bound, "norm_bound")
    figures = _check_figures(figures)
    check_out_folder(out)   # a folder that cannot take the rows is refused before any run
    path = os.path.join(out, "results.csv")
    # no other sweep reads or appends this results.csv meanwhile; a SIGTERM stops the sweep between runs
    with sweep_lock(out), stop_on_sigterm() as stop:
        setting = experiment_setting(X_train, y_train, X_test, y_test, solver=solver, time_limit=time_limit,
                                     levels=levels, baseline_params=baseline_params, seed=seed,
                                     norm_bound=norm_bound)
        scan = scan_results(path)   # every run once; unreadable lines apart (set aside below)
        existing = scan.rows
        other = sorted({r.get("setting") or "(none recorded)" for r in existing} - {setting})
        if other:
            raise SettingMismatchError(
                f"{path} holds runs of another setting ({', '.join(other)}; this one is {setting}: a "
                "different data set or size, solver, time limit, levels, baseline parameters or seed). "
                "Use another out folder, or delete the file to start over.")
        stale = [r for r in existing
                 if r["method"] in methods and (r.get("revision") or "") != method_revision(r["method"])]
        if stale:
            found = ", ".join(f"{m}: {k} run{'s' if k > 1 else ''} of revision "
                              f"{sorted({r.get('revision') or 'unrecorded' for r in stale if r['method'] == m})}"
                              f" (current: {method_revision(m)})"
                              for m, k in sorted(collections.Counter(r["method"] for r in stale).items()))
            if not rerun_stale:
                raise StaleResultsError(
                    f"{path} holds runs computed by another revision of privopt's code ({found}); this "
                    "privopt may compute other numbers, and a sweep must not mix them. Pass "
                    "rerun_stale=True (privopt experiment ... --rerun-stale) to drop those runs and run "
                    "them again, or use another out folder.")
            stale_ids = {id(r) for r in stale}
            existing = [r for r in existing if id(r) not in stale_ids]
            rewrite_results(path, existing)
            if progress:
                import sys

                print(f"dropped {len(stale)} runs of an older revision from {path} ({found}); running them "
                      "again", file=sys.stderr, flush=True)
        if scan.bad or scan.duplicates:
            _set_aside(path, scan)
            rewrite_results(path, existing)
        done = done_keys(existing)
        if existing and progress:
            import sys

            print(f"resuming {path}: reusing {len(existing)} finished runs of setting {setting}",
                  file=sys.stderr, flush=True)
        n = len(y_train)
        delta = 1.0 / n**2
        extra = tuple(sorted((baseline_params or {}).items()))
        lv = tuple(levels) if levels is not None else None
        grid = []
        for m in methods:
            if m in DETERMINISTIC_METHODS:
                grid.append((m, math.inf, 0, ""))
                continue
            for c in (calibrations if m == "opdisc" else [""]):
                grid += [(m, e, r, c) for e in epsilons for r in range(runs)]
        tasks = [Task(m, e, r, task_seed(seed, m, e, r) if math.isfinite(e) else task_seed(seed, m, 0.0, r),
                      delta, solver, time_limit, lv, extra, c or "proven", norm_bound)
                 for m, e, r, c in grid if (m, round(e, 9), r, row_calibration(m, c)) not in done]
        if os.path.exists(path):
            with open(path, newline="") as fh:
                header = next(csv.reader(fh), [])
            if header != COLUMNS:  # a file of an older privopt: rewrite it with today's columns
                rewrite_results(path, existing)
        appender = ResultsAppender(path, recorded=len(existing))
        try:
            _run_tasks(tasks, (X_train, y_train, X_test, y_test), appender, setting, stop,
                       executor=executor, scheduler=scheduler, max_workers=max_workers, progress=progress)
        finally:
            appender.close()
        rows = read_results(path)
        _write_outputs(rows, out, title=title, figures=figures, notes=notes)
        if stop.requested:   # a SIGTERM while the summary was written, or with nothing to run
            raise _stopped(stop, appender)
        return rows


#: Seconds between two looks of the sweep's loop at a stop request (SIGTERM).
_POLL_SECONDS = 0.2


def _run_tasks(tasks, data, appender, setting, stop, *, executor, scheduler, max_workers, progress) -> None:
    """Run ``tasks`` on ``executor`` (else on the sweep's own pool, or a dask cluster
    at ``scheduler``), appending each row as it finishes.  When the loop ends early (a
    stop request, a full disk, an error, Ctrl-C) the own pool's workers are stopped at
    once: a run in progress could not be recorded anyway."""
    if not tasks:
        return
    own, client = (None, None)
    if executor is None:
        own, client = _make_executor(scheduler, max_workers)
        executor = own
    finished = False
    try:
        _collect(executor, tasks, data, appender, setting, stop, progress)
        finished = True
    finally:
        if isinstance(own, cf.ProcessPoolExecutor) and not finished:
            stop_pool(own)
        elif own is not None:
            own.shutdown(wait=finished, cancel_futures=True)
        if client is not None:
            client.close()


def _collect(executor, tasks, data, appender, setting, stop, progress) -> None:
    """Submit every task and append each finished run's row; the rows that finished
    are recorded before a task's error is raised or a stop request honoured."""
    pending = {executor.submit(_run_task, t, *data) for t in tasks}
    bar = progress_bar(len(pending), desc="runs", unit="run", disable=not progress)
    try:
        while pending:
            done, pending = cf.wait(pending, timeout=_POLL_SECONDS, return_when=cf.FIRST_COMPLETED)
            failed = None
            for fut in done:
                error = fut.exception()   # raised below, after the other finished rows are recorded
                if error is not None:
                    failed = failed or error
                    continue
                row = fut.result()
                row["setting"] = setting
                row["revision"] = method_revision(row["method"])
                appender.append(row)
                bar.update(1)
                bar.set_postfix_str(f"{row['method']} eps={row['epsilon']:g} {row['status']}")
            # before a failure: a SIGTERM sent to the process group (as `timeout` does) ends the
            # workers too, and the pool they leave broken is not the sweep's fault
            if stop.requested:
                bar.close()   # before the message (closing twice is harmless)
                raise _stopped(stop, appender)
            if failed is not None:
                raise failed
    finally:
        bar.close()
        for fut in pending:
            fut.cancel()


def _stopped(stop, appender) -> SweepStopped:
    """The :class:`SweepStopped` of a stop request, its message also on stderr (an
    uncaught SystemExit prints nothing)."""
    import signal
    import sys

    name = signal.Signals(stop.signum).name
    message = (f"the sweep was stopped by {name}: {finished_runs(appender.recorded)} recorded in "
               f"{appender.path} (the runs in progress were stopped); run the same sweep again to resume.")
    print(f"privopt: {message}", file=sys.stderr, flush=True)
    return SweepStopped(message, stop.signum)


def _write_outputs(rows, out, *, title, figures, notes="") -> None:
    """The figures (when ``figures``) and ``summary.md``; a failed write (a full disk) is
    a :class:`ResultsWriteError` that says the results file is kept."""
    try:
        if figures:
            plot_accuracy(rows, os.path.join(out, "accuracy_vs_epsilon.png"), title=title)
            plot_runtimes(rows, os.path.join(out, "runtimes.png"), title=title)
        write_summary(rows, os.path.join(out, "summary.md"), title=title, figures=figures, notes=notes)
    except OSError as exc:
        failed = exc.filename if isinstance(exc.filename, str) else os.path.join(out, "summary.md")
        raise write_failure(failed, exc, len(rows), "writing the summary and figures") from exc


def _check_figures(figures: bool) -> bool:
    """Whether to draw the figures: ``figures``, unless matplotlib is missing; then a
    :class:`FiguresSkippedWarning` says so before any run, and the sweep goes on without."""
    if not figures:
        return False
    reason = figures_unavailable()
    if reason is None:
        return True
    warnings.warn(f"{reason}. The sweep runs and writes results.csv and summary.md without figures; pass "
                  "figures=False (--no-figures on the command line) to skip them without this warning.",
                  FiguresSkippedWarning, stacklevel=3)
    return False
