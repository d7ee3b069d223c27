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

from tests.conftest import require_solver


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
    assert len(rows) == 5          # 2 epsilons x 2 runs of OPDisc; the deterministic reference once
    assert [r["epsilon"] for r in rows if r["method"] == "nonprivate_lr"] == [float("inf")]
    with open(tmp_path / "results.csv") as fh:
        header = next(csv.reader(fh))
    assert header == COLUMNS
    for r in rows:
        assert 0.0 <= r["train_accuracy"] <= 1.0 and 0.0 <= r["test_accuracy"] <= 1.0
        assert r["seconds"] > 0 and r["delta"] == pytest.approx(1 / 150**2)
    assert all(r["certified"] is True for r in rows if r["method"] == "opdisc")
    assert os.path.getsize(tmp_path / "accuracy_vs_epsilon.png") > 10_000
    assert os.path.getsize(tmp_path / "runtimes.png") > 5_000
    assert {r["neighbouring"] for r in rows if r["method"] == "opdisc"} == {"replace_one"}
    assert {r["neighbouring"] for r in rows if r["method"] == "nonprivate_lr"} == {""}   # not private
    summary = (tmp_path / "summary.md").read_text()
    assert "| opdisc | 1 | 2 | 2 | 0 |" in summary and "| nonprivate_lr | inf | 1 |" in summary
    assert "privopt's proven sigma" in summary   # one line per method on what it is

    # a complete sweep resumes to nothing new
    again = _run(small, tmp_path, methods=["opdisc", "nonprivate_lr"], epsilons=[1.0, 4.0], runs=2)
    assert len(again) == 5

    # an interrupted sweep (rows lost) resumes exactly the missing runs, with the same seeds
    lines = (tmp_path / "results.csv").read_text().splitlines()
    (tmp_path / "results.csv").write_text("\n".join(lines[:4]) + "\n")
    resumed = _run(small, tmp_path, methods=["opdisc", "nonprivate_lr"], epsilons=[1.0, 4.0], runs=2)
    keys = [(r["method"], r["epsilon"], r["run"]) for r in resumed]
    assert len(keys) == len(set(keys)) == 5
    old = {(r["method"], r["epsilon"], r["run"]): r["test_accuracy"] for r in rows}
    new = {(r["method"], r["epsilon"], r["run"]): r["test_accuracy"] for r in resumed}
    assert old == new  # seeds are derived from (method, epsilon, run): same answers


@pytest.mark.slow
def test_a_results_file_of_an_older_privopt_is_rewritten_with_todays_columns(small, tmp_path):
    rows = _run(small, tmp_path, methods=["majority", "dpsgd"], epsilons=[1.0], runs=1)
    old_columns = [c for c in COLUMNS if c != "neighbouring"]
    with open(tmp_path / "results.csv", newline="") as fh:
        old = list(csv.DictReader(fh))
    with open(tmp_path / "results.csv", "w", newline="") as fh:       # as an older privopt wrote it
        w = csv.DictWriter(fh, fieldnames=old_columns)
        w.writeheader()
        w.writerows([{k: r[k] for k in old_columns} for r in old])
    again = _run(small, tmp_path, methods=["majority", "dpsgd"], epsilons=[1.0, 2.0], runs=1)
    with open(tmp_path / "results.csv", newline="") as fh:
        assert next(csv.reader(fh)) == COLUMNS
    assert len(again) == 3
    by = {(r["method"], r["epsilon"]): r for r in again}
    assert by["dpsgd", 1.0]["neighbouring"] == "" and by["dpsgd", 2.0]["neighbouring"] == "replace_one"
    assert by["dpsgd", 1.0]["test_accuracy"] == rows[[r["method"] for r in rows].index("dpsgd")]["test_accuracy"]


def test_resume_only_the_same_setting(small, tmp_path, capsys):
    """Another data set (or size, solver, time limit, ...) never resumes an old results file."""
    from privopt.experiments.adult import SettingMismatchError

    rows = _run(small, tmp_path, methods=["majority", "dpsgd"], epsilons=[1.0], runs=1)
    assert len({r["setting"] for r in rows}) == 1
    with cf.ThreadPoolExecutor(1) as ex:
        again = run_experiment(small.X_train, small.y_train, small.X_test, small.y_test, executor=ex,
                               out=str(tmp_path), methods=["majority", "dpsgd"], epsilons=[1.0], runs=1,
                               figures=False)
    assert len(again) == 2 and "reusing 2 finished runs" in capsys.readouterr().err
    other = make_planted_halfspace(150, 4, n_test=100, noise=0.05, random_state=1)   # same size, other data
    for data, kw in ((other, {}), (small, {"time_limit": 5.0}), (small, {"seed": 1}),
                     (small, {"norm_bound": 2.0})):
        with pytest.raises(SettingMismatchError, match="another setting"):
            _run(data, tmp_path, methods=["majority"], epsilons=[1.0], runs=2, **kw)


def test_resume_refuses_rows_of_another_revision(small, tmp_path, monkeypatch):
    """Rows computed by an older revision of a method's code are never mixed with new ones."""
    import privopt._revisions as revisions
    from privopt.experiments.adult import StaleResultsError, method_revision

    from privopt.experiments import available_methods

    assert set(available_methods()) <= set(revisions.REVISIONS)     # every method has a revision
    rows = _run(small, tmp_path, methods=["majority", "dpsgd"], epsilons=[1.0], runs=1)
    assert {r["method"]: r["revision"] for r in rows} == {m: revisions.REVISIONS[m] for m in ("majority", "dpsgd")}
    assert method_revision("opdisc") == revisions.REVISIONS["opdisc"]
    path = tmp_path / "results.csv"
    before = path.read_bytes()

    monkeypatch.setitem(revisions.REVISIONS, "dpsgd", "2099-01-01")   # DP-SGD's code changed
    with pytest.raises(StaleResultsError, match=r"dpsgd: 1 run .*--rerun-stale"):
        _run(small, tmp_path, methods=["majority", "dpsgd"], epsilons=[1.0], runs=1)
    assert path.read_bytes() == before                              # refused: the file is untouched

    # rerun_stale reruns the requested methods' stale rows; other methods' rows are left alone
    again = _run(small, tmp_path, methods=["dpsgd"], epsilons=[1.0], runs=1, rerun_stale=True)
    by = {r["method"]: r for r in again}
    assert len(again) == 2 and by["dpsgd"]["revision"] == "2099-01-01"
    assert by["majority"]["revision"] == revisions.REVISIONS["majority"] != "2099-01-01"
    old_dpsgd = [r for r in rows if r["method"] == "dpsgd"][0]
    assert by["dpsgd"]["test_accuracy"] == old_dpsgd["test_accuracy"]   # same seed, same code here

    # a file from a privopt that recorded no revision: refused as well, saying so
    with open(path, newline="") as fh:
        old = list(csv.DictReader(fh))
    cols = [c for c in COLUMNS if c != "revision"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows([{k: r[k] for k in cols} for r in old])
    with pytest.raises(StaleResultsError, match="unrecorded"):
        _run(small, tmp_path, methods=["dpsgd"], epsilons=[1.0], runs=1)


def test_demo_never_mixes_data_sets(tmp_path, monkeypatch, capsys):
    """A demo on other data moves the old results aside instead of printing them under the new title."""
    import privopt.datasets
    import privopt.demo as demo

    def no_adult(*a, **k):                                 # the synthetic fallback, without a network
        raise privopt.datasets.DatasetNotFoundError("no Adult files here")

    monkeypatch.setattr(privopt.datasets, "load_adult", no_adult)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", no_adult)
    out = tmp_path / "demo"
    monkeypatch.setattr(demo, "DEMO_METHODS", ("nonprivate_lr",))
    kw = dict(out=str(out), runs=1, epsilons=(1.0,), progress=False)
    demo.run_demo(n_train=200, **kw)
    first = read_results(out / "results.csv")
    demo.run_demo(n_train=150, **kw)
    err = capsys.readouterr().err
    assert "another setting" in err
    second = read_results(out / "results.csv")
    assert {r["n_train"] for r in second} == {"150"} and {r["n_train"] for r in first} == {"200"}
    assert list(out.glob("results-previous-*.csv"))


def test_demo_explains_methods_and_figure(tmp_path, monkeypatch, capsys):
    import privopt.datasets
    import privopt.demo as demo

    def no_adult(*a, **k):
        raise privopt.datasets.DatasetNotFoundError("no Adult files here")

    monkeypatch.setattr(privopt.datasets, "load_adult", no_adult)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", no_adult)
    monkeypatch.setattr(demo, "DEMO_METHODS", ("nonprivate_lr",))
    demo.run_demo(out=str(tmp_path / "d"), runs=1, n_train=200, epsilons=(1.0,), progress=False)
    captured = capsys.readouterr()
    assert demo.METHOD_LINES["nonprivate_lr"] in captured.out and "How to read this" in captured.out
    assert captured.err.count("SYNTHETIC DATA INSTEAD") == 1          # the fallback is said once
    # summary.md explains itself: the paragraph printed to the terminal is in it too
    assert demo.CLOSING in (tmp_path / "d" / "summary.md").read_text()


def test_demo_runs_and_labels_the_estimators_real_default(tmp_path, monkeypatch, capsys):
    """The demo runs the estimator as it comes (``default``: W chosen among resolutions), not a
    mechanism on one fixed W under the default's name; it prints the W each run released and the
    default against DP-SGD, and says once how to provide the Adult files."""
    import privopt.datasets
    import privopt.demo as demo

    def no_adult(*a, **k):
        raise privopt.datasets.DatasetNotFoundError("not found; set PRIVOPT_DATA_HOME=DIR (DIR/adult/adult.data)")

    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    assert demo.DEMO_METHODS[0] == "default" and "permute_and_flip" not in demo.DEMO_METHODS
    assert "default" not in demo.METHOD_LINES["permute_and_flip"].split("(")[0]
    monkeypatch.setattr(demo, "DEMO_METHODS", ("default", "dpsgd"))
    demo.run_demo(out=str(tmp_path / "d"), runs=1, n_train=300, epsilons=(1.0,), progress=False, figures=False)
    captured = capsys.readouterr()
    assert demo.METHOD_LINES["default"] in captured.out
    assert "The W `default` released:" in captured.out and "- epsilon 1: permute_and_flip: " in captured.out
    assert "Held-out accuracy, `default` against `dpsgd`:" in captured.out
    assert captured.err.count("PRIVOPT_DATA_HOME") == 1            # how to provide the files: once
    summary = (tmp_path / "d" / "summary.md").read_text()
    assert "## How to read this" in summary and "The W `default` released:" in summary


@pytest.mark.slow
def test_both_calibrations_tuned_dpsgd_and_the_zero_one_reference(small, tmp_path):
    """One sweep runs OPDisc under both calibrations (labelled apart, same seeds, the paper's
    sigma smaller), DP-SGD tuned on the private data (labelled so, with the chosen
    hyperparameters) and the non-private 0/1 optimum on OPDisc's grid and ball."""
    require_solver("highs")
    from privopt.estimators import ZeroOneHalfspaceClassifier
    from privopt.experiments.adult import METHOD_DESCRIPTIONS, method_label

    rows = _run(small, tmp_path, methods=["opdisc", "dpsgd_tuned", "nonprivate_01"], epsilons=[1.0], runs=2,
                calibration=["proven", "paper"], norm_bound=2.0)
    labels = sorted(s["method"] for s in summarize(rows))
    assert labels == ["dpsgd_tuned", "nonprivate_01", "opdisc", "opdisc[paper]"]
    assert all(lab in METHOD_DESCRIPTIONS for lab in labels)
    op = {(r["calibration"], r["run"]): r for r in rows if r["method"] == "opdisc"}
    assert set(op) == {("proven", 0), ("proven", 1), ("paper", 0), ("paper", 1)}
    assert op["proven", 0]["seed"] == op["paper", 0]["seed"]    # common random numbers
    tuned = [r for r in rows if r["method"] == "dpsgd_tuned"]
    assert all(r["status"] == "ok" and "not private" in r["message"] and "clip_norm=" in r["message"]
               for r in tuned)
    (ref,) = [r for r in rows if r["method"] == "nonprivate_01"]
    assert ref["certified"] is True and ref["epsilon"] == float("inf")
    # the reference is the 0/1 optimum on the same grid: no OPDisc run beats it on training data
    assert all(r["train_accuracy"] <= ref["train_accuracy"] + 1e-12 for r in op.values())
    best = ZeroOneHalfspaceClassifier(bounds=(0.0, 1.0), levels=1, norm_bound=2.0).fit(small.X_train, small.y_train)
    assert best.score(small.X_train, small.y_train) == pytest.approx(ref["train_accuracy"])
    assert method_label("opdisc", "paper") == "opdisc[paper]" and method_label("rspm", "") == "rspm"


def test_private_selection_and_the_zero_one_reference_on_the_estimators_default_w(small, tmp_path):
    """permute_and_flip and exponential run the estimator with that mechanism and its default W
    (intercept, grid -2..2, ||w|| <= min(sqrt(d), 2)), are recorded as pure epsilon-DP (delta 0,
    scored by enumeration whatever the sweep's MILP solver), and nonprivate_01_default is the 0/1
    optimum on that same W: no selection run beats it on the training data."""
    from privopt.estimators import PrivateHalfspaceClassifier, ZeroOneHalfspaceClassifier
    from privopt.experiments import available_methods
    from privopt.experiments.adult import METHOD_DESCRIPTIONS, Task, _make_estimator
    from privopt.experiments.plots import REFERENCE

    methods = ["permute_and_flip", "exponential", "nonprivate_01_default"]
    assert set(methods) <= set(available_methods())
    rows = _run(small, tmp_path, methods=methods, epsilons=[1.0, 4.0], runs=2)
    assert len(rows) == 9                 # 2 mechanisms x 2 epsilons x 2 runs; the reference once
    labels = sorted({s["method"] for s in summarize(rows)})
    assert labels == sorted(methods) and all(lab in METHOD_DESCRIPTIONS for lab in labels)
    sel = [r for r in rows if r["method"] in methods[:2]]
    assert all(r["status"] == "ok" and r["certified"] is True for r in sel)
    assert {r["delta"] for r in sel} == {0.0} and {r["neighbouring"] for r in sel} == {"replace_one"}
    assert {r["solver"] for r in sel} == {"enumerate"}
    (ref,) = [r for r in rows if r["method"] == "nonprivate_01_default"]
    assert ref["certified"] is True and ref["epsilon"] == float("inf") and ref["neighbouring"] == ""
    assert all(r["train_accuracy"] <= ref["train_accuracy"] + 1e-12 for r in sel)
    best = ZeroOneHalfspaceClassifier(bounds=(0.0, 1.0), levels=1).fit(small.X_train, small.y_train)
    assert best.score(small.X_train, small.y_train) == pytest.approx(ref["train_accuracy"])
    assert best.fit_intercept is True                              # the estimator's default W
    summary = (tmp_path / "summary.md").read_text()
    assert "| permute_and_flip | 1 | 2 | 2 | 0 |" in summary and "| exponential | 4 | 2 | 2 | 0 |" in summary
    assert "| nonprivate_01_default | inf | 1 | 1 | 0 |" in summary and "permute-and-flip [MS20]" in summary
    assert "nonprivate_01_default" in REFERENCE                    # drawn as a reference line

    # the runner builds the estimator with that mechanism and its defaults for W; the seed is the task's
    for m in methods[:2]:
        est = _make_estimator(Task(m, 1.0, 0, 7, 1e-6, "highs", 600.0, None), 4)
        assert isinstance(est, PrivateHalfspaceClassifier) and est.mechanism == m and est.random_state == 7
        default = PrivateHalfspaceClassifier()
        for p in ("fit_intercept", "grid", "norm_bound", "solver", "calibration"):
            assert getattr(est, p) == getattr(default, p), p
        assert est.time_limit == 600.0 and est.bounds == (0.0, 1.0)
    ref_est = _make_estimator(Task("nonprivate_01_default", float("inf"), 0, 7, 1e-6, "highs", None, None), 4)
    for p in ("fit_intercept", "grid", "norm_bound", "solver"):
        assert getattr(ref_est, p) == getattr(ZeroOneHalfspaceClassifier(), p), p
    # the runner keeps the paper's homogeneous halfspace for OPDisc, RSPM and their reference
    for m in ("opdisc", "rspm", "nonprivate_01"):
        assert _make_estimator(Task(m, 1.0, 0, 7, 1e-6, "highs", None, None), 4).fit_intercept is False


def test_the_default_method_is_the_estimator_as_a_user_gets_it(small, tmp_path):
    """``default`` is PrivateHalfspaceClassifier with every parameter its default but epsilon, the
    public bounds (none for integer features: levels None), the time limit and the seed, so that W
    is chosen among resolutions; each row says which W it released, and summary.md lists them
    with the default against DP-SGD at each epsilon."""
    from privopt.estimators import PrivateHalfspaceClassifier
    from privopt.experiments.adult import METHOD_DESCRIPTIONS, Task, _make_estimator

    given = {"epsilon", "bounds", "time_limit", "random_state", "keep_report"}
    for levels, bounds in ((None, None), ((4, 4, 1, 1), (0.0, 1.0))):
        est = _make_estimator(Task("default", 1.0, 0, 7, 1e-6, "highs", 60.0, levels), 4)
        params, defaults = est.get_params(), PrivateHalfspaceClassifier().get_params()
        assert {p for p in params if params[p] != defaults[p]} <= given
        assert est.mechanism == "auto" and est.bounds == bounds and est.epsilon == 1.0
    rows = _run(small, tmp_path, methods=["default", "dpsgd"], epsilons=[1.0, 4.0], runs=1)
    default = [r for r in rows if r["method"] == "default"]
    assert len(default) == 2 and all(r["status"] == "ok" for r in default)
    assert all(r["message"].startswith("permute_and_flip: ") and "W offered" in r["message"] for r in default)
    assert {r["delta"] for r in default} == {0.0}       # a selection: pure epsilon-DP
    summary = (tmp_path / "summary.md").read_text()
    assert "The W `default` released:" in summary and default[0]["message"] in summary
    assert "Held-out accuracy, `default` against `dpsgd`:" in summary
    assert summary.count("- epsilon ") == 4            # two epsilons, each in both lists
    assert "PrivateHalfspaceClassifier's defaults" in METHOD_DESCRIPTIONS["default"]


def test_format_versus_says_ahead_behind_or_level():
    from privopt.experiments import format_versus

    def row(method, eps, acc):
        return {"method": method, "epsilon": eps, "run": 0, "status": "ok", "train_accuracy": acc,
                "test_accuracy": acc, "seconds": 1.0, "calibration": ""}

    rows = [row("default", 0.1, 0.80), row("dpsgd", 0.1, 0.70), row("default", 1.0, 0.80),
            row("dpsgd", 1.0, 0.85), row("default", 2.0, 0.9), row("dpsgd", 2.0, 0.9), row("dpsgd", 4.0, 0.9)]
    text = format_versus(rows)
    assert "- epsilon 0.1: 0.800 against 0.700 (ahead by 0.100)" in text
    assert "- epsilon 1: 0.800 against 0.850 (behind by 0.050)" in text
    assert "- epsilon 2: 0.900 against 0.900 (level)" in text and "epsilon 4" not in text
    assert format_versus([row("dpsgd", 1.0, 0.5)]) == ""


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
    run = {"method": "opdisc", "epsilon": 1.0}
    rows = [
        {**run, "status": "ok", "train_accuracy": 0.8, "test_accuracy": 0.7, "seconds": 1.0},
        {**run, "status": "ok", "train_accuracy": 0.6, "test_accuracy": 0.5, "seconds": 3.0},
        {**run, "status": "uncertified", "train_accuracy": 0.1, "test_accuracy": 0.1, "seconds": 9.0},
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


@pytest.mark.slow
def test_cli_experiment_adult(data_home, tmp_path):
    require_solver("highs")
    out = tmp_path / "adult"
    env = {**os.environ, "PRIVOPT_DATA_HOME": data_home, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "privopt", "experiment", "adult", "--methods", "opdisc,nonprivate_lr",
         "--epsilons", "2", "--runs", "1", "--n-train", "400", "--workers", "1", "--out", str(out),
         "--calibration", "proven,paper", "--norm-bound", "2"],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "held-out acc" in proc.stdout and "opdisc[paper]" in proc.stdout
    rows = read_results(out / "results.csv")
    assert {r["method"] for r in rows} == {"opdisc", "nonprivate_lr"}
    assert sorted(r["calibration"] for r in rows if r["method"] == "opdisc") == ["paper", "proven"]
    assert all(r["n_train"] == "400" for r in rows)
    assert (out / "accuracy_vs_epsilon.png").exists() and (out / "runtimes.png").exists()


@pytest.mark.parametrize("command", ["experiment", "demo"])
def test_cli_help_says_each_default_once_in_words(command):
    """No "(default: None)", "(default: False)", doubled "(default: ...) (default: ...)" or a
    Python list in the help; the experiment's default methods start with the recommended one."""
    from privopt.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices[command]
    text = " ".join(sub.format_help().split())
    assert "(default: None)" not in text and "(default: False)" not in text and "['" not in text
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            help_text = " ".join(sub._get_formatter()._expand_help(action).split()) if action.help else ""
            shown = sub._get_formatter()._get_help_string(action)
            assert shown.count("default:") + shown.count("none:") + shown.count("(without it") <= 1, shown
            assert help_text
    if command == "experiment":
        assert "(default: default,opdisc,rspm,dpsgd)" in text
        assert sub.parse_args(["adult"]).methods[0] == "default"


def test_cli_help_shows_every_default_and_missing_data_names_data_home(tmp_path, capsys, monkeypatch):
    import privopt.datasets
    from privopt.cli import build_parser, main

    sub = build_parser()._subparsers._group_actions[0].choices["experiment"]
    text = " ".join(sub.format_help().split())
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.dest                       # every option explained
    assert "(default: 15)" in text and "(default: results/adult)" in text
    args = sub.parse_args(["adult", "--calibration", "proven,paper", "--norm-bound", "2",
                           "--methods", "opdisc,dpsgd_tuned,nonprivate_01"])
    assert args.calibration == ["proven", "paper"] and args.norm_bound == 2.0
    assert sub.parse_args(["adult"]).calibration == ["proven"]
    with pytest.raises(SystemExit):
        sub.parse_args(["adult", "--calibration", "proven,papr"])
    assert "calibration 'papr'" in capsys.readouterr().err

    def no_adult(*a, **k):
        raise privopt.datasets.DatasetNotFoundError("no Adult files here")

    monkeypatch.setattr(privopt.datasets, "load_adult", no_adult)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", no_adult)
    assert main(["experiment", "adult", "--data-home", str(tmp_path), "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert "--data-home" in err and "Traceback" not in err


def test_experiment_uses_the_papers_ball_for_opdisc():
    from privopt.experiments.adult import Task, _make_estimator

    est = _make_estimator(Task("opdisc", 1.0, 0, 0, 1e-6, "highs", None, None), 23)
    assert est.norm_bound == pytest.approx(23 ** 0.5) and est.grid is None   # grid -4..4, as in [NRVW20]


def test_reference_lines_at_the_same_accuracy_stay_apart(tmp_path):
    """Two non-private references with the same accuracy (the two 0/1 optima often
    coincide) are drawn with different dash patterns and their values in the legend."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from privopt.experiments import plots

    def row(method, eps, acc):
        return {"method": method, "epsilon": eps, "run": 0, "status": "ok", "certified": True,
                "train_accuracy": acc, "test_accuracy": acc, "calibration": ""}

    rows = [row("nonprivate_01", float("inf"), 0.8), row("nonprivate_01_default", float("inf"), 0.8),
            row("majority", float("inf"), 0.5), row("opdisc", 1.0, 0.7), row("opdisc", 2.0, 0.75)]
    captured = {}
    real_close = plt.close

    def keep(fig=None):
        captured["fig"] = fig
        real_close(fig)

    plt.close = keep
    try:
        plots.plot_accuracy(rows, tmp_path / "acc.png")
    finally:
        plt.close = real_close
    ax = captured["fig"].axes[1]
    refs = [ln for ln in ax.get_lines() if "not private" in (ln.get_label() or "")]
    assert len(refs) == 3
    styles = {ln.get_label().split(" ")[0]: ln.get_linestyle() for ln in refs}
    assert styles["nonprivate_01"] != styles["nonprivate_01_default"] and len(set(styles.values())) == 3
    assert all(ln.get_label().endswith(": 0.800") or ln.get_label().endswith(": 0.500") for ln in refs)
