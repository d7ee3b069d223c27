"""Faults around a sweep: two sweeps on one folder, a results.csv with a cut or stray line or
a run recorded twice, bad command-line values, and bench_audit's noise column."""

from __future__ import annotations

import concurrent.futures as cf
import csv
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from privopt.datasets import make_planted_halfspace
from privopt.experiments import (
    ResultsFileError,
    ResultsFileWarning,
    SweepLockedError,
    read_results,
    run_experiment,
    summarize,
)
from privopt.experiments._lock import LOCK_NAME, sweep_lock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: 2 epsilons x 3 runs of DP-SGD (about 0.1 s each) plus the majority class once: 7 runs asked.
SWEEP = dict(methods=["dpsgd", "majority"], epsilons=[1.0, 2.0], runs=3)
N_ASKED = 7

#: A sweep in a process of its own.  argv: out folder, and optionally a file whose
#: existence it waits for before each run (so that it holds the lock as long as the test
#: wants).  Exit code 3 and the message on stderr when another sweep holds the folder.
SCRIPT = textwrap.dedent("""
    import concurrent.futures as cf, os, sys, time
    from privopt.datasets import make_planted_halfspace
    from privopt.experiments import SweepLockedError, run_experiment
    import privopt.experiments._runner as runner

    out = sys.argv[1]
    go = sys.argv[2] if len(sys.argv) > 2 else None
    if go:
        real = runner._run_task
        def waiting(*a, **k):
            while not os.path.exists(go):
                time.sleep(0.05)
            return real(*a, **k)
        runner._run_task = waiting
    d = make_planted_halfspace(150, 4, n_test=100, noise=0.05, random_state=0)
    try:
        with cf.ThreadPoolExecutor(2) as ex:
            run_experiment(d.X_train, d.y_train, d.X_test, d.y_test, executor=ex, out=out, progress=False,
                           figures=False, methods=["dpsgd", "majority"], epsilons=[1.0, 2.0], runs=3)
    except SweepLockedError as exc:
        print(exc, file=sys.stderr)
        sys.exit(3)
""")


@pytest.fixture(scope="module")
def small():
    return make_planted_halfspace(150, 4, n_test=100, noise=0.05, random_state=0)


def _run(small, out, **kw):
    kw = {**SWEEP, **kw}
    with cf.ThreadPoolExecutor(2) as ex:
        return run_experiment(small.X_train, small.y_train, small.X_test, small.y_test, executor=ex,
                              out=str(out), progress=False, figures=False, **kw)


def _sweep_process(out, go=None):
    args = [sys.executable, "-c", SCRIPT, str(out)] + ([str(go)] if go else [])
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MPLBACKEND": "Agg"})


def _wait_for_holder(out, pid, timeout=60.0):
    path = os.path.join(out, LOCK_NAME)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and f"pid {pid} " in open(path, "rb").read().decode(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"the sweep process {pid} never took the lock")


def _keys(rows):
    return [(r["method"], r["epsilon"], r["run"], r.get("calibration") or "") for r in rows]


def _csv_keys(path):
    with open(path, newline="") as fh:
        return [(r["method"], r["epsilon"], r["run"], r["calibration"]) for r in csv.DictReader(fh)]


# --- 1. two sweeps on one folder ------------------------------------------------------------------------------

def test_a_second_sweep_process_on_the_same_folder_is_refused_naming_folder_and_pid(tmp_path):
    out, go = tmp_path / "out", tmp_path / "go"
    first = _sweep_process(out, go)           # holds the lock until `go` exists
    try:
        _wait_for_holder(out, first.pid)
        second = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], capture_output=True, text=True,
                                timeout=300)
        assert second.returncode == 3, second.stderr[-2000:]
        assert str(out) in second.stderr and f"pid {first.pid}" in second.stderr
        assert "another out folder" in second.stderr
        go.touch()
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err[-2000:]
    finally:
        go.touch()
        if first.poll() is None:
            first.kill()
    keys = _csv_keys(out / "results.csv")
    assert len(keys) == len(set(keys)) == N_ASKED


def test_two_sweep_processes_started_together_never_record_a_run_twice(tmp_path, small):
    out = tmp_path / "out"
    procs = [_sweep_process(out) for _ in range(2)]
    codes = []
    for p in procs:
        _, err = p.communicate(timeout=300)
        codes.append(p.returncode)
        assert p.returncode in (0, 3), err[-2000:]    # done, or refused because the other held the folder
    assert 0 in codes
    keys = _csv_keys(out / "results.csv")
    assert len(keys) == len(set(keys)) == N_ASKED
    again = _run(small, out)                          # the refused one, run again, resumes to nothing new
    assert len(again) == N_ASKED and sum(s["runs"] for s in summarize(again)) == N_ASKED


def test_the_lock_is_released_by_an_error_and_by_a_killed_sweep(tmp_path, small):
    from privopt.experiments.adult import SettingMismatchError

    _run(small, tmp_path, runs=1)
    with pytest.raises(SettingMismatchError):          # raised while the lock is held
        _run(small, tmp_path, seed=1)
    assert len(_run(small, tmp_path, runs=1)) == 3      # the lock was released

    out, go = tmp_path / "killed", tmp_path / "go"
    proc = _sweep_process(out, go)
    try:
        _wait_for_holder(out, proc.pid)
        with pytest.raises(SweepLockedError, match=f"pid {proc.pid}"):
            _run(small, out)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(_run(small, out)) == N_ASKED             # a killed sweep leaves no stale lock


def test_sweep_lock_in_one_process():
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        with sweep_lock(out) as holder:
            assert holder.startswith(f"pid {os.getpid()} ")
            with pytest.raises(SweepLockedError, match="in use by another sweep"):
                with sweep_lock(out):
                    pass
        with sweep_lock(out):          # free again
            pass


# --- a run recorded twice -------------------------------------------------------------------------------------

def test_a_run_recorded_twice_is_counted_once(tmp_path, small):
    rows = _run(small, tmp_path)
    path = tmp_path / "results.csv"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines + lines[1:3]))        # two runs again, as two sweeps used to write them
    with pytest.warns(ResultsFileWarning, match=r"2 run\(s\) twice.*counted once, keeping the first row; "
                                                r"dropped line 9 \(first at line 2\), line 10 \(first at line 3\)"):
        read = read_results(path)
    assert _keys(read) == _keys(rows)
    assert sum(s["runs"] for s in summarize(read)) == N_ASKED

    with pytest.warns(ResultsFileWarning, match="twice"):
        again = _run(small, tmp_path)                   # the sweep rewrites the file with each run once
    assert len(again) == N_ASKED and len(_csv_keys(path)) == N_ASKED
    assert "results.csv` (7 runs" in (tmp_path / "summary.md").read_text()


# --- 2. a cut or stray line -----------------------------------------------------------------------------------

def test_a_cut_last_row_keeps_the_good_rows_names_the_line_and_is_run_again(tmp_path, small):
    rows = _run(small, tmp_path)
    path = tmp_path / "results.csv"
    good = path.read_bytes().decode()
    path.write_bytes(good[:-40].encode())               # the last write was interrupted
    with pytest.raises(ResultsFileError, match=r"results.csv, line 8: the last line has no line end.*"
                                               r"remove that line, or run the sweep again"):
        read_results(path)
    with pytest.warns(ResultsFileWarning, match=r"moved 1 unreadable line\(s\) to .*results.csv.rejected .*line 8"):
        again = _run(small, tmp_path)
    assert sorted(_keys(again)) == sorted(_keys(rows))
    by_key = {k: r["test_accuracy"] for k, r in zip(_keys(rows), rows)}
    assert {k: r["test_accuracy"] for k, r in zip(_keys(again), again)} == by_key   # same seeds, same runs
    rejected = (tmp_path / "results.csv.rejected").read_text()
    assert "# line 8 of results.csv" in rejected and good.splitlines()[7][:-40] in rejected
    assert path.read_bytes().decode().splitlines()[:7] == good.splitlines()[:7]     # good rows untouched


@pytest.mark.parametrize("bad, why", [
    ("garbage,xx,yy", "3 fields where the header has"),
    ("dpsgd,xx" + ",1" * 16, "epsilon is 'xx', not a number"),
    ("dpsgd,1.0,one" + ",1" * 15, "run is 'one', not a whole number"),
])
def test_a_stray_line_is_named_with_its_line_number(tmp_path, small, bad, why):
    rows = _run(small, tmp_path)
    path = tmp_path / "results.csv"
    lines = path.read_bytes().decode().splitlines(keepends=True)
    path.write_bytes("".join(lines[:3] + [bad + "\r\n"] + lines[3:]).encode())
    with pytest.raises(ResultsFileError, match=rf"line 4: {why}"):
        read_results(path)
    with pytest.warns(ResultsFileWarning, match=rf"line 4: {why}"):
        again = _run(small, tmp_path)
    assert sorted(_keys(again)) == sorted(_keys(rows)) and len(_csv_keys(path)) == N_ASKED
    assert bad in (tmp_path / "results.csv.rejected").read_text()


def test_a_file_that_is_not_a_results_file_is_refused_untouched(tmp_path, small):
    path = tmp_path / "results.csv"
    path.write_bytes(b"hello,world\r\n1,2\r\n")
    with pytest.raises(ResultsFileError, match="line 1: not the header of a privopt results file"):
        _run(small, tmp_path)
    assert path.read_bytes() == b"hello,world\r\n1,2\r\n"


# --- bad values for the library's runner ----------------------------------------------------------------------

def test_run_experiment_refuses_a_huge_epsilon_and_too_few_records(tmp_path, small):
    from privopt.exceptions import ParameterError

    with pytest.raises(ParameterError, match="epsilon"):
        _run(small, tmp_path, epsilons=[1e308])
    with pytest.raises(ParameterError, match="at least 2 training records"):
        with cf.ThreadPoolExecutor(1) as ex:
            run_experiment(small.X_train[:0], small.y_train[:0], small.X_test, small.y_test, executor=ex,
                           out=str(tmp_path), progress=False, figures=False, **SWEEP)
    assert not (tmp_path / "results.csv").exists()


# --- 4. the command line --------------------------------------------------------------------------------------

@pytest.fixture
def no_work(monkeypatch):
    """The checks must come before any data is read or any run starts."""
    import privopt.datasets
    import privopt.demo

    def fail(*a, **k):
        raise AssertionError("the command started work despite a bad option")

    monkeypatch.setattr(privopt.datasets, "load_adult", fail)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", fail)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", fail)
    monkeypatch.setattr(privopt.demo, "run_demo", fail)


EXPERIMENT = ["experiment", "adult", "--methods", "opdisc,dpsgd", "--epsilons", "1", "--runs", "1"]


@pytest.mark.parametrize("argv, expected", [
    (EXPERIMENT + ["--time-limit", "-1"], ["--time-limit must be > 0, got -1.0", "leave the option out"]),
    (EXPERIMENT + ["--time-limit", "nan"], ["--time-limit must be finite"]),
    (EXPERIMENT + ["--levels", "0"], ["--levels must be >= 1, got 0", "grid steps"]),
    (EXPERIMENT + ["--n-train", "-5"], ["--n-train must be >= 2, got -5", "leave the option out for all"]),
    (EXPERIMENT + ["--n-train", "0"], ["--n-train must be >= 2, got 0"]),
    (EXPERIMENT + ["--epsilons", "1e308"], ["--epsilons", "700"]),
    (EXPERIMENT + ["--epsilons", "0"], ["--epsilons must be > 0"]),
    (EXPERIMENT + ["--runs", "0"], ["--runs must be >= 1, got 0"]),
    (EXPERIMENT + ["--workers", "0"], ["--workers must be >= 1"]),
    (EXPERIMENT + ["--seed", "-1"], ["--seed must be >= 0"]),
    (EXPERIMENT + ["--norm-bound", "-2"], ["--norm-bound must be > 0"]),
    (EXPERIMENT + ["--methods", "opdisc,nope"], ["--methods must be one of", "'nope'", "dpsgd"]),
    (EXPERIMENT + ["--solver", "nosuch"], ["--solver: unknown solver 'nosuch'", "auto", "highs", "enumerate",
                                           "privopt solvers"]),
    (["demo", "--solver", "nosuch"], ["privopt demo: error: --solver: unknown solver 'nosuch'", "highs"]),
    (["demo", "--time-limit", "-1"], ["privopt demo: error: --time-limit must be > 0"]),
    (["demo", "--runs", "0"], ["privopt demo: error: --runs must be >= 1"]),
])
def test_cli_bad_values_are_argparse_errors_naming_the_option(no_work, capsys, argv, expected):
    from privopt.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("usage: privopt ")
    for text in expected:
        assert text in err, (text, err)


def test_cli_a_solver_that_is_not_installed_is_refused_when_a_method_needs_it(no_work, capsys):
    from privopt.cli import main
    from privopt.solvers import available_solvers

    missing = [s.name for s in available_solvers() if not s.available and s.name != "cplex"] or \
        [s.name for s in available_solvers() if not s.available]
    if not missing:
        pytest.skip("every solver privopt knows is installed here")
    with pytest.raises(SystemExit) as exc:
        main(EXPERIMENT + ["--solver", missing[0]])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"--solver: Solver {missing[0]!r} is not installed" in err and "installed one: auto" in err


def test_cli_bad_value_exit_code_from_a_process():
    proc = subprocess.run([sys.executable, "-m", "privopt", "experiment", "adult", "--n-train", "0"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2
    assert "--n-train must be >= 2" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_a_second_sweep_on_a_folder_in_use_exits_2(data_home, tmp_path, capsys):
    from privopt.cli import main

    with sweep_lock(str(tmp_path)):
        code = main(["experiment", "adult", "--methods", "majority", "--runs", "1", "--n-train", "200",
                     "--data-home", data_home, "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "in use by another sweep" in err and f"pid {os.getpid()}" in err and "Traceback" not in err


# --- 3. bench_audit's noise column ----------------------------------------------------------------------------

def test_bench_audit_describes_the_noise_of_every_case(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "benchmarks"))   # as running it does: its `import _common`
    spec = importlib.util.spec_from_file_location("bench_audit", os.path.join(ROOT, "benchmarks", "bench_audit.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for target, _ in bench.cases():
        text = bench._noise(target)
        assert text and "=" in text, target
        if target.mechanism.startswith("scoring"):
            assert text == f"s=2Delta/eps={target.parameters['noise_scale']:.4g}"


def test_cli_demo_on_a_folder_in_use_or_not_a_results_folder_exits_2(tmp_path, capsys, monkeypatch):
    import privopt.datasets
    from privopt.cli import main

    def no_adult(*a, **k):                      # the synthetic fallback, without a network
        raise privopt.datasets.DatasetNotFoundError("no Adult files here")

    monkeypatch.setattr(privopt.datasets, "load_adult", no_adult)
    # the demo and the experiment import it at module level
    monkeypatch.setattr("privopt.demo.load_adult", no_adult)
    monkeypatch.setattr("privopt.experiments.adult.load_adult", no_adult)
    with sweep_lock(str(tmp_path)):
        assert main(["demo", "--out", str(tmp_path), "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert "privopt demo: " in err and f"pid {os.getpid()}" in err and "Traceback" not in err
    (tmp_path / "results.csv").write_bytes(b"hello,world\r\n")
    assert main(["demo", "--out", str(tmp_path), "--runs", "1"]) == 2
    assert "not the header of a privopt results file" in capsys.readouterr().err
