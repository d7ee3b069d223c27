"""The results store: ``results.csv`` of a sweep (one row per finished run, appended as
runs finish), read back with numbers parsed, rewritten with today's columns, and the
setting fingerprint that decides whether a file may be resumed."""

from __future__ import annotations

import csv
import errno
import io
import locale
import math
import os
import tempfile
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import ParameterError, PrivoptError

__all__ = [
    "COLUMNS",
    "read_results",
    "scan_results",
    "experiment_setting",
    "ResultsFileError",
    "ResultsFileWarning",
    "ResultsWriteError",
    "ResultsAppender",
    "check_out_folder",
    "SettingMismatchError",
    "StaleResultsError",
]

COLUMNS = [
    "method", "epsilon", "run", "train_accuracy", "test_accuracy", "seconds", "certified",
    "status", "delta", "n_train", "n_test", "solver", "seed", "calibration", "setting", "message",
    "neighbouring", "revision",
]


def read_results(path) -> list[dict]:
    """Rows of a results.csv (numbers parsed), or [] when it does not exist.

    A run recorded twice (the same method, epsilon, run and calibration, e.g. by two
    sweeps that a privopt without the sweep lock let share a folder) is counted once:
    the first row is kept and a :class:`ResultsFileWarning` names the lines dropped.
    A line that cannot be read (a row cut short by an interrupted write, or not a row
    at all) raises :class:`ResultsFileError` naming its line number; the good rows are
    never touched, and :func:`~privopt.experiments.run_experiment` on the same folder
    sets such lines aside by itself (:func:`scan_results`)."""
    scan = scan_results(path)
    if scan.bad:
        line, text, why = scan.bad[0]
        more = f" (and {len(scan.bad) - 1} more line(s): {', '.join(str(b[0]) for b in scan.bad[1:])})" \
            if len(scan.bad) > 1 else ""
        raise ResultsFileError(
            f"{path}, line {line}: {why}: {_shorten(text)!r}{more}. The other rows are fine: remove that "
            "line, or run the sweep again on this folder (privopt experiment ... --out FOLDER, or "
            "run_experiment(out=FOLDER)), which moves such lines to results.csv.rejected and runs them "
            "again.")
    if scan.duplicates:
        warnings.warn(scan.duplicates_message(path), ResultsFileWarning, stacklevel=2)
    return scan.rows


class ResultsFileError(ValueError):
    """A line of ``results.csv`` cannot be read (:func:`read_results` names it)."""


class ResultsFileWarning(UserWarning):
    """``results.csv`` held a run twice (counted once) or lines that were set aside."""


@dataclass
class ResultsScan:
    """What :func:`scan_results` found: ``rows`` (parsed, each run once), ``bad``
    ((line number, text, why) of the lines that are not readable rows) and
    ``duplicates`` ((line number, first line of the same run) of rows dropped
    because their run was recorded before)."""

    rows: list = field(default_factory=list)
    bad: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)

    def duplicates_message(self, path) -> str:
        lines = ", ".join(f"line {d} (first at line {f})" for d, f in self.duplicates[:10])
        more = f" and {len(self.duplicates) - 10} more" if len(self.duplicates) > 10 else ""
        return (f"{path} records {len(self.duplicates)} run(s) twice (same method, epsilon, run and "
                f"calibration): counted once, keeping the first row; dropped {lines}{more}.")


def _shorten(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _parse_row(r: dict) -> dict:
    """A row of the csv with its numbers parsed; ValueError saying why it is not one."""
    if not r.get("method"):
        raise ValueError("no method")
    for k in ("epsilon", "train_accuracy", "test_accuracy", "seconds", "delta"):
        if k in r:
            try:
                r[k] = float(r[k]) if r[k] != "" else math.nan
            except ValueError:
                raise ValueError(f"{k} is {r[k]!r}, not a number") from None
    if "epsilon" in r and not r["epsilon"] > 0:
        raise ValueError(f"epsilon is {r['epsilon']!r}")
    try:
        r["run"] = int(r["run"])
    except (KeyError, ValueError):
        raise ValueError(f"run is {r.get('run')!r}, not a whole number") from None
    if r.get("certified", "") not in ("True", "False", ""):
        raise ValueError(f"certified is {r['certified']!r}, not True, False or empty")
    r["certified"] = {"True": True, "False": False}.get(r.get("certified", ""), None)
    return r


def scan_results(path) -> ResultsScan:
    """Read ``results.csv`` line by line, keeping every good row once.

    A line is bad when it is not a row of the header's columns with numbers where
    numbers go, or when it is the last line and has no line end (a write that was
    interrupted: even if its fields parse, its last one may be cut short).  A row
    whose (setting, method, epsilon, run, calibration) came before is a duplicate."""
    scan = ResultsScan()
    if not os.path.exists(path):
        return scan
    with open(path, newline="") as fh:
        text = fh.read()
    physical = io.StringIO(text).readlines()   # split as the csv reader counts lines (at "\n")
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        return scan
    lacking = [c for c in ("method", "epsilon", "run") if c not in header]
    if lacking:
        raise ResultsFileError(
            f"{path}, line 1: not the header of a privopt results file (no column {', '.join(lacking)}): "
            f"{_shorten(physical[0].rstrip())!r}. Move the file away or use another out folder.")
    seen: dict = {}
    end = reader.line_num
    while True:
        start = end + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:   # e.g. a stray carriage return; the reader goes on at the next line
            end = reader.line_num
            scan.bad.append((start, "".join(physical[start - 1:end]).rstrip("\r\n"), f"not csv ({exc})"))
            continue
        end = reader.line_num
        raw = "".join(physical[start - 1:end]).rstrip("\r\n")
        if not fields:
            continue
        try:
            if end == len(physical) and not physical[-1].endswith("\n"):
                raise ValueError("the last line has no line end (a write that was interrupted)")
            if len(fields) != len(header):
                raise ValueError(f"{len(fields)} fields where the header has {len(header)}"
                                 + (" (a row cut short, or not a row)" if len(fields) < len(header) else ""))
            row = _parse_row(dict(zip(header, fields)))
        except ValueError as exc:
            scan.bad.append((start, raw, str(exc)))
            continue
        key = (row.get("setting") or "", *_done_key(row))
        if key in seen:
            scan.duplicates.append((start, seen[key]))
            continue
        seen[key] = start
        scan.rows.append(row)
    return scan


def rewrite_results(path, rows) -> None:
    """Write ``rows`` to ``path`` with the columns of :data:`COLUMNS` (empty where a row of
    an older file has no value)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for r in rows:
            out = {k: r.get(k, "") for k in COLUMNS}
            out["certified"] = {True: "True", False: "False", None: ""}.get(r.get("certified"), "")
            writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()})
    os.replace(tmp, path)


class ResultsWriteError(PrivoptError, OSError):
    """Writing the sweep's files failed (a full disk, a quota): ``errno`` is the
    system's; the message names the file, what is kept and how to resume."""

    def __init__(self, code: int, message: str):
        super().__init__(code, message)

    def __str__(self) -> str:
        return str(self.strerror)


def finished_runs(n: int) -> str:
    """"1 finished run is" / "3 finished runs are"."""
    return f"{n} finished run{'' if n == 1 else 's'} {'is' if n == 1 else 'are'}"


def write_failure(path: str, exc: OSError, recorded: int, doing: str) -> ResultsWriteError:
    """The :class:`ResultsWriteError` for ``exc`` raised while ``doing`` in the out folder
    of ``path``: what failed, the runs kept in ``results.csv``, and the fix."""
    why = exc.strerror or str(exc)
    code = exc.errno or errno.EIO
    name = errno.errorcode.get(code, str(code))
    return ResultsWriteError(code, (
        f"{path}: {why} [{name}] while {doing}. The {finished_runs(recorded)} kept in "
        f"{os.path.join(os.path.dirname(path), 'results.csv')}; free space on that disk (or give another "
        "out folder) and run the same sweep again: it resumes, running only the runs not recorded."))


class ResultsAppender:
    """Appends the rows of a sweep to ``results.csv`` as they finish, each as one
    whole line written at once (no buffer), so that a failed write (a full disk)
    loses no row written before: the part of the line that did get written is cut
    off again, and :class:`ResultsWriteError` says how many runs the file keeps.
    ``recorded``: the runs the file holds already.  Writes the header to a new file."""

    #: The encoding ``open`` uses by default, as the readers of the file do.
    ENCODING = locale.getpreferredencoding(False)

    def __init__(self, path: str, recorded: int = 0):
        self.path = path
        self.recorded = recorded
        new = not os.path.exists(path)
        self._fh = open(path, "ab", buffering=0)
        if new:
            try:
                self._write(self._line(dict(zip(COLUMNS, COLUMNS))), "writing the header of a new results file")
            except ResultsWriteError:
                self._fh.close()
                raise

    @staticmethod
    def _line(row: dict) -> str:
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=COLUMNS).writerow({k: row.get(k, "") for k in COLUMNS})
        return buf.getvalue()

    def append(self, row: dict) -> None:
        """Record one finished run."""
        self._write(self._line(row), "recording a finished run")
        self.recorded += 1

    def _write(self, text: str, doing: str) -> None:
        data = memoryview(text.encode(self.ENCODING))
        start = self._fh.seek(0, os.SEEK_END)
        try:
            while data:
                data = data[self._fh.write(data) or 0:]
        except OSError as exc:
            try:
                self._fh.truncate(start)   # no half line left behind
            except OSError:  # pragma: no cover - a resume sets a cut line aside anyway
                pass
            raise write_failure(self.path, exc, self.recorded, doing) from exc

    def close(self) -> None:
        self._fh.close()


def check_out_folder(out: str) -> None:
    """Create ``out`` if needed and make sure a file can be created in it, before any
    run: else a :class:`~privopt.exceptions.ParameterError` (``parameter="out"``)
    naming the folder, the system's reason and the fix."""
    try:
        os.makedirs(out, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".privopt-write-test-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ParameterError(
            f"out: cannot write in {out} ({exc.strerror or exc}); a sweep writes results.csv, its lock and "
            "summary.md there. Make the folder writable, or give another out folder (--out DIR on the "
            "command line).", "out") from exc


def _done_key(r) -> tuple:
    return (r["method"], round(r["epsilon"], 9), r["run"], r.get("calibration") or "")


def done_keys(rows) -> set:
    return {_done_key(r) for r in rows}


def experiment_setting(X_train, y_train, X_test, y_test, *, solver, time_limit, levels, baseline_params,
                       seed, norm_bound=None) -> str:
    """A short fingerprint of everything that changes a run's result except
    (method, epsilon, run, calibration): the data (a hash of the arrays, so
    their size too), solver, time limit, levels, baseline parameters, OPDisc's
    ball and the sweep's seed.  A results file is resumed only with the same
    setting."""
    import hashlib

    h = hashlib.sha256()
    for a in (X_train, y_train, X_test, y_test):
        arr = np.ascontiguousarray(np.asarray(a))
        h.update(str((arr.shape, arr.dtype.str)).encode())
        h.update(arr.tobytes())
    key: tuple = (solver, time_limit, None if levels is None else tuple(levels),
           tuple(sorted((baseline_params or {}).items())), seed)
    if norm_bound is not None:  # settings of sweeps with the paper's ball keep their old fingerprint
        key += (float(norm_bound),)
    h.update(repr(key).encode())
    return h.hexdigest()[:12]


class SettingMismatchError(ValueError):
    """``out/results.csv`` holds runs of another setting (data, solver, ...)."""


class StaleResultsError(SettingMismatchError):
    """``out/results.csv`` holds runs of a requested method computed by another
    revision of privopt's code (:func:`method_revision`)."""
