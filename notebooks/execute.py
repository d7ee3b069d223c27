"""Re-execute the teaching notebooks in place, to refresh their committed outputs.

    .venv/bin/python notebooks/execute.py          # every notebooks/[0-9]*.ipynb
    .venv/bin/python notebooks/execute.py 04 05    # only names containing "04" or "05"

Each notebook runs top to bottom in a fresh "python3" kernel (install it into
the virtualenv with ``.venv/bin/python -m ipykernel install --sys-prefix --name
python3`` if nbclient cannot find it), from the notebooks/ folder, with a
timeout of 300 s per cell, and is written back with its outputs (no per-cell
timing metadata, so that a refresh changes only what the cells print).  A cell
that raises stops that notebook, which is then NOT written; the script exits
with status 1.  Set PRIVOPT_DATA_HOME to the folder holding adult/ first, or
05_adult_experiment falls back to synthetic data (it says so in its output).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
TIMEOUT = 300  # seconds per cell


def execute(path: Path, *, timeout: int = TIMEOUT) -> float:
    """Execute ``path`` in place; returns the wall time in seconds."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    paths = sorted(HERE.glob("[0-9]*.ipynb"))
    if argv:
        paths = [p for p in paths if any(a in p.name for a in argv)]
    status = 0
    for path in paths:
        try:
            seconds = execute(path)
        except CellExecutionError as exc:
            print(f"FAILED  {path.name}: {str(exc).splitlines()[0] if str(exc) else exc}", file=sys.stderr)
            status = 1
            continue
        print(f"{seconds:6.1f} s  {path.name}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
