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
    """levels/grid/D, with /c for centred steps, /wide for the wide intercept and /warm for the
    warm start's W."""
    if res is None:
        return ""
    return (f"{res.levels}/{res.grid}/{res.norm_bound:.3g}" + ("/c" if getattr(res, "centered", False) else "")
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
