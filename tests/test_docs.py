"""The project's own documentation: links resolve, and nothing points at files users do not get."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "notebooks" / "README.md"]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", DOCS, ids=[p.relative_to(ROOT).as_posix() for p in DOCS])
def test_relative_links_resolve(page):
    missing = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    assert not missing, f"{page.name} links to missing files: {missing}"


def test_no_reference_to_files_users_never_get():
    """Docstrings, docs, notebooks and benchmarks cite the papers or the project's own pages."""
    offenders = []
    roots = [ROOT / "privopt", ROOT / "docs", ROOT / "notebooks", ROOT / "benchmarks", ROOT / "README.md"]
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.suffix in {".py", ".md", ".ipynb"}]
        for f in files:
            text = f.read_text(errors="ignore")
            if "DESIGN.md" in text or "../shared" in text:
                offenders.append(f.relative_to(ROOT).as_posix())
    assert not offenders, offenders


def test_reference_pages_build_with_mkdocs(tmp_path):
    """docs/ builds with MkDocs in strict mode: a broken link or a page missing from the
    navigation fails the build (and this test)."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None:
        pytest.skip("mkdocs or mkdocstrings[python] is not installed (pip install -e '.[test]')")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    site = tmp_path / "site"
    built = {p.parent.name if p.parent != site else "index" for p in site.rglob("index.html")}
    assert pages <= built, pages - built
    # the API reference is generated from the docstrings: every object of docs/api.md is rendered
    api = (site / "api" / "index.html").read_text()
    wanted = re.findall(r"^::: (\S+)", (ROOT / "docs" / "api.md").read_text(), re.M)
    assert len(wanted) >= 10
    missing = [name for name in wanted if f'id="{name}"' not in api]
    assert not missing, missing


def test_readme_is_a_front_page_whose_commands_and_examples_work():
    """The README's two commands are Makefile targets, its links go into the docs site
    (the reference lives there), and its python blocks run in order in one namespace."""
    import warnings

    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in readme and re.search(rf"^{target}:", makefile, re.M)
    for page in ("mechanisms", "own_model", "guarantees", "experiments", "scoring", "api"):
        assert f"(docs/{page}.md" in readme, page
    namespace: dict = {"__name__": "readme"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the OPSamp example says that its noise dominates
        for k, code in enumerate(re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)):
            exec(compile(code, f"README.md[block {k}]", "exec"), namespace)   # noqa: S102
    assert namespace["clf"].mechanism_ == "permute_and_flip"
    card = namespace["card"]
    assert 1 <= len(card.points_) <= 4 and "predict 'Yes' when the total is >=" in str(card.scorecard())
    assert namespace["sel"].delta == 0 and namespace["res"].delta == 0
