"""Faults around a sweep: two sweeps on one folder, a results.csv with a cut or stray line or
a run recorded twice, bad command-line values, and bench_audit's noise column."""

from __future__ import annotations

import concurrent.futures as cf
import csv
import errno
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
ROOT = os.path.dirname(os.path.dirname(HERE))

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

@pytest.mark.slow
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


@pytest.mark.slow
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
        proc.wait(timeout=60)
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


def _open_copies(path) -> int:
    """How many descriptors of this process refer to ``path``."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:
            pass
    return n


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs fork and /proc")
def test_a_process_forked_while_the_lock_is_held_keeps_no_copy_of_it(tmp_path):
    """A flock lock belongs to the open file, which a forked child shares: a child that
    kept its copy would hold the lock after the sweep was killed."""
    path = tmp_path / LOCK_NAME
    with sweep_lock(str(tmp_path)):
        assert _open_copies(path) == 1
        pid = os.fork()
        if pid == 0:                          # the child: no descriptor of the lock file
            os._exit(_open_copies(path))
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        with pytest.raises(SweepLockedError):  # the parent still holds it: closing a copy does not unlock
            with sweep_lock(str(tmp_path)):
                pass
    assert _open_copies(path) == 0


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
    import privopt.cli   # before the patches below: it binds run_demo when first imported
    import privopt.datasets
    import privopt.demo

    def fail(*a, **k):
        raise AssertionError("the command started work despite a bad option")

    monkeypatch.setattr(privopt.cli, "run_demo", fail)

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


# --- 5. a sweep killed (SIGKILL) or stopped (SIGTERM), as `timeout` and schedulers do ---------------------------

#: A sweep on its own process pool (2 workers), in a process of its own.  argv: out folder and a
#: folder where each worker leaves a file named by its pid.  Run 0 finishes; runs 1 and 2 are held
#: in their workers until the sweep is killed, so the sweep is caught mid-way with one row written.
HELD_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from privopt.datasets import make_planted_halfspace
    from privopt.experiments import run_experiment
    import privopt.experiments._runner as runner

    out, marks = sys.argv[1], sys.argv[2]
    real = runner._run_task
    def held(task, *a, **k):                      # runs in a worker of the sweep's pool
        open(os.path.join(marks, f"worker-{os.getpid()}"), "w").close()
        if task.run > 0:
            while True:
                time.sleep(0.05)
        return real(task, *a, **k)
    runner._run_task = held
    d = make_planted_halfspace(150, 4, n_test=100, noise=0.05, random_state=0)
    run_experiment(d.X_train, d.y_train, d.X_test, d.y_test, out=out, max_workers=2, progress=False,
                   figures=False, methods=["dpsgd"], epsilons=[1.0], runs=3)
""")
HELD = dict(methods=["dpsgd"], epsilons=[1.0], runs=3)


def _alive(pid) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:   # pragma: no cover - no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _until(condition, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"after {timeout:g} s: {what}")


def _start_held_sweep(tmp_path):
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    with open(tmp_path / "stderr", "w") as err:   # a file, not a pipe: workers that outlive it would hold one
        proc = subprocess.Popen([sys.executable, "-c", HELD_SCRIPT, str(out), str(marks)],
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)

    def workers():
        return {int(p.name.split("-")[1]) for p in marks.iterdir()}

    def caught_mid_way():
        path = out / "results.csv"
        return len(workers()) == 2 and path.exists() and len(path.read_text().splitlines()) == 2

    try:
        _until(caught_mid_way, 120, "the sweep never reached one finished run and two held ones")
    except BaseException:
        proc.kill()
        raise
    return proc, out, workers()


def _end_everything(proc, pids):
    """Cleanup whatever the test found: no process of the test outlives it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=60)
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _check_clean_end_and_resume(small, out, workers):
    with sweep_lock(str(out)):          # free as soon as the sweep's process is gone: no worker holds it
        pass
    _until(lambda: not any(_alive(p) for p in workers), 30,
           f"the sweep's workers {sorted(p for p in workers if _alive(p))} still run")
    assert _csv_keys(out / "results.csv") == [("dpsgd", "1.0", "0", "")]     # the run finished before
    rows = _run(small, out, **HELD)                                           # the resume completes
    keys = _csv_keys(out / "results.csv")
    assert len(rows) == len(keys) == len(set(keys)) == 3                      # each run once


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.slow
def test_a_sweep_killed_by_sigkill_leaves_no_worker_and_no_lock_and_resumes(tmp_path, small):
    proc, out, workers = _start_held_sweep(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        _check_clean_end_and_resume(small, out, workers)
    finally:
        _end_everything(proc, workers)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("to", ["the sweep", "its process group"])   # `timeout` signals the group
@pytest.mark.slow
def test_a_sweep_stopped_by_sigterm_ends_cleanly_non_zero_and_resumes(tmp_path, small, to):
    proc, out, workers = _start_held_sweep(tmp_path)
    try:
        if to == "the sweep":
            os.kill(proc.pid, signal.SIGTERM)
        else:                                # the sweep leads its own session (start_new_session)
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        err = (tmp_path / "stderr").read_text()
        assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
        assert "stopped by SIGTERM" in err and "1 finished run" in err and str(out) in err
        assert "Traceback" not in err
        _check_clean_end_and_resume(small, out, workers)
    finally:
        _end_everything(proc, workers)


# --- 6. a full disk, a read-only out folder, no matplotlib ---------------------------------------------------

class _FillingFile:
    """A file that takes ``rows`` more writes, then a part of one, then fails as a full disk does."""

    def __init__(self, real, rows):
        self._real, self._left = real, rows

    def write(self, data):
        if self._left == 0:
            self._real.write(data[: len(data) // 2])
            self._real.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._left -= 1
        return self._real.write(data)

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._real.close()


def test_a_full_disk_keeps_the_rows_written_names_the_folder_and_the_resume_completes(tmp_path, small, monkeypatch):
    import builtins

    real_open = builtins.open
    path = str(tmp_path / "results.csv")

    def filling_open(file, mode="r", *a, **k):
        fh = real_open(file, mode, *a, **k)
        return _FillingFile(fh, rows=3) if str(file) == path and "a" in mode else fh   # header and 2 rows

    monkeypatch.setattr(builtins, "open", filling_open)
    with pytest.raises(OSError, match=rf"{tmp_path}.*No space left on device.*2 finished runs are kept.*"
                                      r"free space.*resumes") as info:
        _run(small, tmp_path)
    assert info.value.errno == errno.ENOSPC
    monkeypatch.setattr(builtins, "open", real_open)
    first = read_results(path)                          # the rows written stay, and no line is cut
    assert len(first) == 2
    rows = _run(small, tmp_path)
    keys = _csv_keys(path)
    assert len(rows) == len(keys) == len(set(keys)) == N_ASKED
    assert _keys(rows)[:2] == _keys(first)


@pytest.mark.parametrize("how", ["chmod", "read-only file system"])
def test_a_read_only_out_folder_is_refused_before_any_run(tmp_path, small, monkeypatch, how):
    import builtins

    import privopt.experiments._runner as runner
    from privopt.exceptions import ParameterError

    _run(small, tmp_path, runs=1)
    before = (tmp_path / "results.csv").read_bytes()
    if how == "chmod":
        if os.geteuid() == 0:
            pytest.skip("root writes in a folder without write permission")
        os.chmod(tmp_path, 0o555)
    else:                                               # what a read-only mount answers
        real_open, real_os_open = builtins.open, os.open
        inside = str(tmp_path) + os.sep

        def refuse():
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        def ro_open(file, mode="r", *a, **k):
            if str(file).startswith(inside) and any(c in mode for c in "wax+"):
                refuse()
            return real_open(file, mode, *a, **k)

        def ro_os_open(file, flags, *a, **k):
            if str(file).startswith(inside) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                refuse()
            return real_os_open(file, flags, *a, **k)

        monkeypatch.setattr(builtins, "open", ro_open)
        monkeypatch.setattr(os, "open", ro_os_open)

    def no_run(*a, **k):
        raise AssertionError("a run started in a folder that cannot take its row")

    monkeypatch.setattr(runner, "_run_task", no_run)
    try:
        with pytest.raises(ParameterError, match=rf"out: cannot write in {tmp_path} .*another out folder") as info:
            _run(small, tmp_path)
        assert info.value.parameter == "out"
    finally:
        os.chmod(tmp_path, 0o755)
    assert (tmp_path / "results.csv").read_bytes() == before


def test_without_matplotlib_the_sweep_warns_first_and_writes_the_summary_without_figures(tmp_path, small,
                                                                                        monkeypatch):
    import warnings

    import privopt.experiments._runner as runner

    monkeypatch.setitem(sys.modules, "matplotlib", None)      # `import matplotlib` fails as if not installed
    real, seen = runner._run_task, []

    def run(*a, **k):
        seen.append(len(caught))
        return real(*a, **k)

    monkeypatch.setattr(runner, "_run_task", run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with cf.ThreadPoolExecutor(2) as ex:
            rows = run_experiment(small.X_train, small.y_train, small.X_test, small.y_test, executor=ex,
                                  out=str(tmp_path), progress=False, **SWEEP)
    texts = [str(w.message) for w in caught]
    assert any("matplotlib" in t and "pip install privopt[plot]" in t and "figures=False" in t for t in texts), texts
    assert seen and min(seen) >= 1                              # said before the first run
    assert len(rows) == N_ASKED
    summary = (tmp_path / "summary.md").read_text()
    assert "results.csv` (7 runs" in summary and ".png" not in summary
    assert not (tmp_path / "accuracy_vs_epsilon.png").exists()


def test_cli_no_figures_and_the_faults_of_the_sweep_are_messages_not_tracebacks(tmp_path, capsys, monkeypatch):
    import privopt.experiments
    from privopt.cli import build_parser, main
    from privopt.exceptions import ParameterError

    calls = []

    def fake(**kw):
        calls.append(kw)
        return []

    monkeypatch.setattr(privopt.experiments, "run_adult_experiment", fake)
    argv = ["experiment", "adult", "--methods", "majority", "--runs", "1", "--out", str(tmp_path)]
    assert main(argv + ["--no-figures"]) == 0
    assert calls[-1]["figures"] is False and "figures:" not in capsys.readouterr().out
    assert main(argv) == 0 and calls[-1]["figures"] is True
    assert "--no-figures" in " ".join(build_parser()._subparsers._group_actions[0].choices["experiment"]
                                      .format_help().split())

    def full(**kw):
        raise privopt.experiments.ResultsWriteError(errno.ENOSPC, f"{tmp_path}/results.csv: disk full ...")

    def read_only(**kw):
        raise ParameterError(f"out: cannot write in {tmp_path} ...", "out")

    for fault, code in ((full, 1), (read_only, 2)):
        monkeypatch.setattr(privopt.experiments, "run_adult_experiment", fault)
        assert main(argv) == code
        err = capsys.readouterr().err
        assert err.startswith("privopt experiment: ") and str(tmp_path) in err and "Traceback" not in err
