"""The Adult experiment runner: results file, resume, uncertified runs kept apart, figures, CLI."""

from __future__ import annotations

import concurrent.futures as cf
import csv
import os
import subprocess
import sys

import numpy as np
import pytest

from privopt.datasets import make_planted_halfspace
from privopt.experiments import COLUMNS, read_results, run_experiment, summarize, task_seed

from .conftest import require_solver


@pytest.fixture(scope="module")
def small():
    return make_planted_halfspace(150, 4, n_test=100, noise=0.05, random_state=0)


def _run(small, out, **kw):
    with cf.ThreadPoolExecutor(2) as ex:
        return run_experiment(small.X_train, small.y_train, small.X_test, small.y_test,
                              executor=ex, out=str(out), progress=False, **kw)


def test_results_file_and_resume(small, tmp_path):
    require_solver("highs")
    rows = _run(small, tmp_path, methods=["opdisc", "nonprivate_lr"], epsilons=[1.0, 4.0], runs=2)
    assert len(rows) == 8
    with open(tmp_path / "results.csv") as fh:
        header = next(csv.reader(fh))
    assert header == COLUMNS
    for r in rows:
        assert 0.0 <= r["train_accuracy"] <= 1.0 and 0.0 <= r["test_accuracy"] <= 1.0
        assert r["seconds"] > 0 and r["delta"] == pytest.approx(1 / 150**2)
    assert all(r["certified"] is True for r in rows if r["method"] == "opdisc")
    assert os.path.getsize(tmp_path / "accuracy_vs_epsilon.png") > 10_000
    assert os.path.getsize(tmp_path / "runtime_histogram.png") > 5_000

    # a complete sweep resumes to nothing new
    again = _run(small, tmp_path, methods=["opdisc", "nonprivate_lr"], epsilons=[1.0, 4.0], runs=2)
    assert len(again) == 8

    # an interrupted sweep (rows lost) resumes exactly the missing runs, with the same seeds
    lines = (tmp_path / "results.csv").read_text().splitlines()
    (tmp_path / "results.csv").write_text("\n".join(lines[:4]) + "\n")
    resumed = _run(small, tmp_path, methods=["opdisc", "nonprivate_lr"], epsilons=[1.0, 4.0], runs=2)
    keys = [(r["method"], r["epsilon"], r["run"]) for r in resumed]
    assert len(keys) == len(set(keys)) == 8
    old = {(r["method"], r["epsilon"], r["run"]): r["test_accuracy"] for r in rows}
    new = {(r["method"], r["epsilon"], r["run"]): r["test_accuracy"] for r in resumed}
    assert old == new  # seeds are derived from (method, epsilon, run): same answers


def test_uncertified_runs_are_counted_apart(small, tmp_path, monkeypatch):
    require_solver("highs")
    from privopt.solvers import _dispatch

    monkeypatch.setattr(_dispatch, "is_certified", lambda *a, **k: False)
    rows = _run(small, tmp_path, methods=["opdisc"], epsilons=[2.0], runs=2)
    assert [r["status"] for r in rows] == ["uncertified"] * 2
    assert all(r["certified"] is False for r in rows)
    s = summarize(rows)[0]
    assert s["uncertified"] == 2 and s["ok"] == 0 and np.isnan(s["test_mean"])


def test_summarize_excludes_uncertified():
    rows = [
        {"method": "opdisc", "epsilon": 1.0, "status": "ok", "train_accuracy": 0.8, "test_accuracy": 0.7, "seconds": 1.0},
        {"method": "opdisc", "epsilon": 1.0, "status": "ok", "train_accuracy": 0.6, "test_accuracy": 0.5, "seconds": 3.0},
        {"method": "opdisc", "epsilon": 1.0, "status": "uncertified", "train_accuracy": 0.1, "test_accuracy": 0.1, "seconds": 9.0},
    ]
    s = summarize(rows)[0]
    assert s["train_mean"] == pytest.approx(0.7) and s["test_std"] == pytest.approx(0.1)
    assert s["uncertified"] == 1 and s["median_seconds"] == 3.0


def test_task_seeds_distinct():
    seeds = {task_seed(0, m, e, r) for m in ["opdisc", "rspm"] for e in [0.1, 0.5, 1] for r in range(15)}
    assert len(seeds) == 90
    assert task_seed(0, "opdisc", 0.5, 3) == task_seed(0, "opdisc", 0.5, 3)


def test_unknown_method(small, tmp_path):
    with pytest.raises(ValueError, match="unknown method"):
        _run(small, tmp_path, methods=["nope"], epsilons=[1.0], runs=1)


def test_cli_experiment_adult(data_home, tmp_path):
    require_solver("highs")
    out = tmp_path / "adult"
    env = {**os.environ, "PRIVOPT_DATA_HOME": data_home, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "privopt", "experiment", "adult", "--methods", "opdisc,nonprivate_lr",
         "--epsilons", "2", "--runs", "1", "--n-train", "400", "--workers", "1", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "held-out acc" in proc.stdout
    rows = read_results(out / "results.csv")
    assert {r["method"] for r in rows} == {"opdisc", "nonprivate_lr"}
    assert all(r["n_train"] == "400" for r in rows)
    assert (out / "accuracy_vs_epsilon.png").exists() and (out / "runtime_histogram.png").exists()
