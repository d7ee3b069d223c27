"""Pieces shared by the benchmark scripts of this folder.

* :func:`stamp` / :func:`stamp_line`: the environment a results file was made in
  (date, machine, cores, Python and privopt versions, command line), so that a
  table can be read next to the run that made it;
* :func:`write_csv` / :func:`read_csv`: rows (dicts) out to a CSV with given
  columns, and back in (for scripts that resume from their own CSV);
* :func:`write_markdown`: a Markdown results file from its lines;
* :func:`checkout_env`: the environment of a subprocess that must import privopt
  from another checkout (a git worktree of an earlier revision);
* :func:`make_learner`, :func:`fit_timed`, :func:`resolution_label`, :func:`read_fit_rows`:
  the learners of the accuracy benchmarks (``bench_adaptive_w.py``,
  ``bench_adaptive_regimes.py``), one timed fit, and their results CSVs read back.
* :func:`shape_table`: the synthetic tables of the table-shape benchmarks;
* :func:`record_plans`: every W's public quantities, predicted seconds and CPU seconds.

The data sets several scripts share are in ``_datasets.py``; no script imports another.

How the scripts find this module: ``import _common``.  Python puts a script's own
folder first on ``sys.path`` when it runs it (``python benchmarks/bench_x.py`` from
any directory, and ``benchmarks/run_all.py``), so no script patches ``sys.path``;
privopt itself comes from the virtualenv (an editable install).  Code that loads a
script by its path instead (``importlib.util.spec_from_file_location``, as some
tests do) puts this folder on ``sys.path`` first.  benchmarks/ is deliberately not a
package: its files are scripts, run by path.
"""

from __future__ import annotations

import csv
import os
import platform
import shlex
import sys
import time
import warnings
from datetime import datetime, timezone
from typing import Literal

HERE = os.path.dirname(os.path.abspath(__file__))


def stamp(argv: list[str] | None = None, script: str | None = None) -> dict:
    """The environment of this run, as a dict of strings and numbers.

    Keys: ``date`` (UTC, ISO 8601 to the second), ``machine``, ``cores``, ``python``,
    ``privopt`` (the version of the privopt this process imports) and ``command``
    (``python benchmarks/<script> <arguments>``; ``argv`` defaults to
    ``sys.argv[1:]`` and ``script`` to the name of the running script).
    """
    import privopt

    argv = sys.argv[1:] if argv is None else list(argv)
    script = os.path.basename(script or sys.argv[0] or "?")
    command = " ".join(["python", f"benchmarks/{script}", *([shlex.join(argv)] if argv else [])])
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(), "privopt": privopt.__version__, "command": command}


def stamp_line(env: dict | None = None) -> str:
    """The one-line Markdown form of :func:`stamp` that the results files print under
    their title, e.g. ```python benchmarks/bench_x.py --seeds 2` on 2026-11-25 16:40 UTC,
    x86_64, 2 cores, Python 3.12.3, privopt 0.1.0.`` (``env`` defaults to a new stamp)."""
    env = stamp() if env is None else env
    when = datetime.fromisoformat(env["date"]).strftime("%Y-%m-%d %H:%M UTC")
    return (f"`{env['command']}` on {when}, {env['machine']}, {env['cores']} cores, "
            f"Python {env['python']}, privopt {env['privopt']}.")


def write_csv(path: str | os.PathLike, rows: list[dict], columns,
              extrasaction: Literal["raise", "ignore"] = "raise") -> None:
    """Write ``rows`` (dicts) to the CSV file ``path`` with the header ``columns`` (in
    that order), creating its folder.  A missing key is written empty; a key not in
    ``columns`` is an error (a column would be lost silently otherwise) unless
    ``extrasaction="ignore"`` says that the row carries more than the file keeps."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction=extrasaction)
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path: str | os.PathLike) -> list[dict]:
    """The rows of the CSV file ``path`` as dicts of strings (``[]`` when the file does
    not exist yet): what a script resumes from."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def write_markdown(path: str | os.PathLike, lines) -> None:
    """Write the Markdown file ``path``, creating its folder: ``lines`` is a list of
    lines (joined with newlines, plus a final newline) or the whole text as is."""
    text = lines if isinstance(lines, str) else "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def checkout_env(root: str, env: dict | None = None) -> dict:
    """The environment (a copy of ``env``, default ``os.environ``) of a subprocess that
    must import privopt from the checkout at ``root`` (e.g. a git worktree of an earlier
    revision) rather than this one.

    ``root`` goes first on ``PYTHONPATH``: its entries come before the editable install
    of the virtualenv, so ``import privopt`` finds ``root/privopt``.  This folder comes
    after it, so that a copy of a script run inside an older checkout can still
    ``import _common`` when that revision predates this module (a checkout's own
    ``benchmarks/`` folder, the copy's folder, comes first on ``sys.path`` anyway).
    """
    env = dict(os.environ if env is None else env)
    parts = [os.path.abspath(root), HERE] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def make_learner(learner: str, eps: float, bounds, seed: int):
    """An accuracy benchmark's learner, built as a user would: ``"after"``, the default
    ``PrivateHalfspaceClassifier``; ``"before"``, its single default W
    (``resolutions=None``); ``"ladder"``, the ladder without the warm start's W
    (``warm_start=False``); ``"logreg"``, non-private logistic regression; any other name,
    the private baseline of that name (``privopt.baselines.PRIVATE_BASELINES``)."""
    import privopt
    from privopt.baselines import PRIVATE_BASELINES, NonPrivateLogisticRegression

    if learner == "before":
        return privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed, resolutions=None)
    if learner == "after":
        return privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed)
    if learner == "ladder":         # the previous default: the ladder without the warm start's W
        return privopt.PrivateHalfspaceClassifier(epsilon=eps, bounds=bounds, random_state=seed, warm_start=False)
    if learner == "logreg":
        return NonPrivateLogisticRegression()
    return PRIVATE_BASELINES[learner](epsilon=eps, bounds=bounds, random_state=seed)


def resolution_label(res) -> str:
    """levels/grid/D, with /g for geometric steps, /c for centred steps, /wide for the wide
    intercept and /warm for the warm start's W."""
    if res is None:
        return ""
    return (f"{res.levels}/{res.grid}/{res.norm_bound:.3g}" + ("/g" if getattr(res, "geometric", False) else "")
            + ("/c" if getattr(res, "centered", False) else "")
            + ("/wide" if getattr(res, "wide_intercept", False) else "")
            + ("/warm" if getattr(res, "warm_start", False) else ""))


def read_fit_rows(path) -> list[dict]:
    """The rows of a results CSV of bench_adaptive_w.py or bench_adaptive_regimes.py, numbers parsed."""
    rows = read_csv(path)
    for r in rows:
        for key in ("eps", "accuracy", "seconds", "offered"):
            r[key] = float(r[key])
        for key in ("seed", "n_train", "d"):
            r[key] = int(r[key])
    return rows


def fit_timed(clf, X, y, Xt, yt) -> tuple[float, float]:
    """Fit ``clf`` on (X, y) with warnings silenced; (held-out accuracy on (Xt, yt), fit seconds)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    secs = time.perf_counter() - t0
    return float((clf.predict(Xt) == yt).mean()), secs


def shape_table(shape: str, n: int, d: int, n_test: int = 2000, seed: int = 0):
    """(X, y, X_test, y_test, lo, hi): n training rows and ``n_test`` held-out rows of one of the
    table shapes users bring (bench_table_shapes.py and bench_predictions.py), with public bounds
    ``lo``, ``hi``: ``uniform`` (features uniform in [0, 1], label from a noisy linear rule on
    three of them), ``make_classification`` / ``wide`` (scikit-learn's, d/2 informative, at
    most 10; bounds the table's range), ``binary`` (Bernoulli(0.3) columns, a noisy rule on
    four), ``mixed`` (half uniform, half binary), ``gaussian`` (correlated normal features,
    bounds at +-4, a noisy rule on two), ``ordinal`` (whole numbers 0..4, as survey answers, a
    noisy rule on three; bounds (0, 4))."""
    import numpy as np

    rng = np.random.default_rng(seed)
    m = n + n_test
    if shape in ("make_classification", "wide"):
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=m, n_features=d, n_informative=min(10, max(2, d // 2)),
                                   n_redundant=0, random_state=seed)
        lo, hi = X.min(0), X.max(0)
    else:
        if shape == "uniform":
            X = rng.uniform(0, 1, size=(m, d))
            z = X[:, 0] + X[:, 1] - X[:, 2] - 0.5
        elif shape == "binary":
            X = (rng.uniform(size=(m, d)) < 0.3).astype(float)
            z = X[:, 0] + X[:, 1] - X[:, 2] - X[:, 3] + 0.1
        elif shape == "gaussian":
            X = rng.normal(size=(m, d)) @ (np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d))
            X = np.clip(X, -4.0, 4.0)
            z = X[:, 0] - 0.5 * X[:, 1]
        elif shape == "ordinal":
            X = rng.integers(0, 5, size=(m, d)).astype(float)
            z = (X[:, 0] + X[:, 1] - X[:, 2] - 2.0) / 2.0
        elif shape == "mixed":
            half = d // 2
            X = np.hstack([rng.uniform(0, 1, size=(m, half)), (rng.uniform(size=(m, d - half)) < 0.3).astype(float)])
            z = X[:, 0] - X[:, 1] + X[:, half] - X[:, half + 1]
        else:
            raise SystemExit(f"unknown table shape {shape!r}")
        y = (z + rng.normal(0, 0.2, m) > 0).astype(int)
        lo, hi = {"gaussian": (-4.0, 4.0), "ordinal": (0.0, 4.0)}.get(shape, (0.0, 1.0))
        lo, hi = np.full(d, lo), np.full(d, hi)
    return X[:n], y[:n], X[n:], y[n:], lo, hi


def integer_columns(shape: str, d: int) -> list[int]:
    """The columns of :func:`shape_table`'s ``shape`` that take whole numbers only (``binary``'s
    0/1 columns, ``mixed``'s second half, ``ordinal``'s 0..4), as a user who knows the table
    declares them (``integer_features``): public, from the shape alone."""
    if shape in ("binary", "ordinal"):
        return list(range(d))
    if shape == "mixed":
        return list(range(d // 2, d))
    return []


def rows_prediction(plan, work, data) -> float | None:
    """What the plan's predicted seconds would be if the prediction knew the W's distinct rows m
    (``len(data.X)``, a quantity of the data) instead of bounding them from public quantities:
    the same form and fitted constants (privopt.search._costs) with n = m and ``row_share`` 1,
    so the rows the kernels visit are m (at most prod_j v_j).  None for a single W whose every
    point is scored (no form with rows there).  A diagnostic of how far a counted estimate of
    the distinct rows could take the predictions, not privopt's prediction."""
    import dataclasses

    from privopt.search import _costs

    rows = int(len(data.X))
    if plan.path == "topdown":
        cost = dataclasses.replace(_costs.topdown_cost(work), row_share=1.0)
        return float(_costs.topdown_seconds(work, rows, cost))
    if getattr(plan.sampler, "argmax", None) is None:
        return None
    cost = dataclasses.replace(_costs.BRANCH_AND_BOUND_COST, row_share=1.0)
    return float(_costs.branch_and_bound_seconds(int(plan.n_points), rows, cost,
                                                 coordinate_values=getattr(data, "coordinate_values", None)))


def record_plans(record: list) -> None:
    """Wrap privopt's planner of a 0/1-loss W (the mixture's W's and a single W's) so that
    every W planned from now on appends to ``record`` (in the order of the W's, as the
    selection report lists them) its public quantities (``path``, ``n``, ``d``,
    ``n_points``, ``regions``, ``point_work``, ``support_points``: the points of a support of
    each size 1, 2, ..., ``feature_values``: the values a coordinate takes as declared,
    ``coordinate_values``: the values each coordinate takes where declared per coordinate
    (";"-joined), ``predicted_s``), the distinct rows of the W's data (``distinct_rows``: a
    quantity of the DATA, which the prediction never reads: recorded to show how far the
    measured seconds follow it), ``rows_predicted_s`` (a diagnostic, not what privopt predicts:
    the same form and constants with the W's distinct rows in place of their public bound,
    :func:`rows_prediction`; None for a single W scored whole) and, once drawn, ``cpu_s``:
    the process's CPU seconds of the draw (every thread), which the load of a shared machine
    inflates far less than its wall time.  For this checkout's privopt only."""
    import time

    from privopt.mechanisms.selection import _plan, mixture
    from privopt.mechanisms.selection import exponential as selection

    def plan(data, problem, *, n_public, **kw):
        out = _plan.plan_halfspace(data, problem, n_public=n_public, **kw)
        work = None if problem is None else problem.public_work()
        row = {"path": out.path, "n": int(n_public), "d": len(data.grid), "n_points": int(out.n_points),
               "regions": None, "point_work": None, "support_points": None,
               "feature_values": getattr(data, "feature_values", None), "predicted_s": float(out.predicted_time),
               "coordinate_values": ";".join(map(str, getattr(data, "coordinate_values", None) or ())),
               "distinct_rows": int(len(data.X)),
               "rows_predicted_s": rows_prediction(out, work, data)}
        if work is not None:
            row.update(regions=work.regions, point_work=work.point_work, support_points=";".join(map(str, work.sizes)))
        record.append(row)
        sample = out.sampler.sample

        def timed(*args, **kwargs):         # the process's CPU seconds of the draw (every thread)
            c0 = time.process_time()
            try:
                return sample(*args, **kwargs)
            finally:
                row["cpu_s"] = time.process_time() - c0

        out.sampler.sample = timed
        return out

    mixture.plan_halfspace = selection.plan_halfspace = plan     # the mixture's W's, and a single W's
