"""The project's own documentation: links resolve, and nothing points at files users do not get."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """docs/ built once with ``mkdocs build --strict``, its output read: no ``-q``, which silences
    the warnings and with them the strict mode (a build with 8 warnings exited 0 under ``-q``)."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None:
        pytest.skip("mkdocs or mkdocstrings[python] is not installed (pip install -e '.[test]')")
    site = tmp_path_factory.mktemp("docs") / "site"
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    log = res.stdout + res.stderr
    assert res.returncode == 0, log
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert not warnings, "\n".join(warnings)
    return site


@pytest.mark.slow
def test_reference_pages_build_with_mkdocs(built_site):
    """docs/ builds with MkDocs in strict mode without a warning: a broken link, a page missing
    from the navigation or a docstring read as a cross-reference (``grid[j][k]``) fails here."""
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    site = built_site
    built = {p.parent.name if p.parent != site else "index" for p in site.rglob("index.html")}
    assert pages <= built, pages - built
    # the API reference is generated from the docstrings: every object of docs/api.md is rendered
    api = (site / "api" / "index.html").read_text()
    wanted = re.findall(r"^::: (\S+)", (ROOT / "docs" / "api.md").read_text(), re.M)
    assert len(wanted) >= 10
    missing = [name for name in wanted if f'id="{name}"' not in api]
    assert not missing, missing


def test_readme_says_how_to_reach_privopt_after_make_demo():
    """After `make demo` privopt lives in .venv (not on PATH), and a script in the folder that
    holds a clone named privopt imports the clone's folder as an empty namespace package
    (measured: AttributeError on privopt.exponential_mechanism): the README says both."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ". .venv/bin/activate" in readme and "namespace package" in readme
    assert "never falling" not in readme          # the small-data tables do fall (0.780 -> 0.775)
    assert "$(VENV)/bin/activate" in (ROOT / "Makefile").read_text()     # make demo says it too


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
    assert all(p > 0 for p in card.points_.values())          # the card with public signs only adds
    assert namespace["sel"].delta == 0 and namespace["res"].delta == 0


def _public_namespaces():
    """privopt and its public subpackages and modules (``privopt.x`` without a leading underscore)."""
    import importlib
    import pkgutil

    import privopt

    yield privopt
    for info in pkgutil.iter_modules(privopt.__path__):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"privopt.{info.name}")


def _resolve(path: str):
    """The object a dotted path names (the longest importable prefix, then attributes); None if none."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


def test_api_reference_documents_only_public_paths():
    """Every ``:::`` target of docs/api.md is a public path (no ``_module``) that names an object."""
    pytest.importorskip("sklearn")   # the estimators and the scoring classes are imported on first use
    targets = re.findall(r"^::: (\S+)", (ROOT / "docs" / "api.md").read_text(), re.M)
    private = [t for t in targets if any(part.startswith("_") for part in t.split("."))]
    assert not private, f"docs/api.md documents private paths: {private}"
    unresolved = [t for t in targets if _resolve(t) is None]
    assert not unresolved, unresolved


@pytest.mark.slow
def test_api_reference_lists_every_public_name(built_site):
    """Every name in ``privopt.__all__`` and in the ``__all__`` of each public subpackage and module is
    rendered in the API reference under a public path that names the same object (e.g.
    ``privopt.opdisc`` as ``privopt.mechanisms.opdisc.opdisc``); names re-exported from another
    library (Pyomo's enums) are at least named there with their privopt path.  A name added to an
    ``__all__`` without its entry in docs/api.md fails here."""
    import types

    pytest.importorskip("sklearn")
    ids = set(re.findall(r'id="(privopt[^"]*)"', (built_site / "api" / "index.html").read_text()))
    api_text = (ROOT / "docs" / "api.md").read_text()
    by_last: dict[str, list[str]] = {}
    for i in ids:
        by_last.setdefault(i.rsplit(".", 1)[-1], []).append(i)
    missing = []
    checked = 0
    for namespace in _public_namespaces():
        for name in getattr(namespace, "__all__", []):
            if name.startswith("__"):
                continue
            obj = getattr(namespace, name)
            checked += 1
            public = f"{namespace.__name__}.{name}"
            foreign = not isinstance(obj, types.ModuleType) and hasattr(obj, "__module__") and \
                not str(obj.__module__).startswith("privopt") and isinstance(obj, type)
            if foreign:
                if public not in api_text:
                    missing.append(public)
                continue
            if isinstance(obj, types.ModuleType):
                found = any(i == public or i.startswith(public + ".") or i == obj.__name__ for i in ids)
            else:
                found = any(_resolve(i) is obj for i in by_last.get(name, []))
            if not found:
                missing.append(public)
    assert checked > 150    # the namespaces really were read
    assert not missing, f"not in docs/api.md (or not rendered) under a public path: {missing}"


def test_readme_counts_the_notebooks_and_shows_the_auto_rule_as_it_reads():
    """The README's number of teaching notebooks and its ``mechanism_reason_`` comment follow the code."""
    readme = (ROOT / "README.md").read_text()
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
    n = len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    stated = re.search(r"\[Teaching notebooks\]\(notebooks/README\.md\): (\w+) notebooks", readme)
    assert stated and stated.group(1) in (str(n), words.get(n)), (stated and stated.group(0), n)
    comment = re.search(r"clf\.mechanism_, clf\.mechanism_reason_\s+# '(\w+)', '([^.]*?)\.\.\.'", readme)
    assert comment, "the README's example of mechanism_reason_ is gone"
    pytest.importorskip("sklearn")
    from privopt.datasets import make_planted_halfspace
    from privopt.estimators import PrivateHalfspaceClassifier

    # the README's estimator example, as written there
    data = make_planted_halfspace(2000, 6, n_test=1000, feature_values=(-1, 1), noise=0.1)
    clf = PrivateHalfspaceClassifier(epsilon=0.5, random_state=0).fit(data.X_train, data.y_train)
    assert comment.group(1) == clf.mechanism_
    assert clf.mechanism_reason_.startswith(comment.group(2).rstrip()), (clf.mechanism_reason_, comment.group(2))


def test_readme_is_short_and_quotes_only_measured_numbers():
    """The README is a front page (at most 150 lines; the detail lives in docs/), and every
    accuracy it quotes (a number 0.ddd) is written in a committed results table."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    quoted = set(re.findall(r"(?<![\d.:])0\.\d{3}(?!\d)", readme))
    assert quoted, "the README quotes its headline numbers"
    tables = " ".join(p.read_text() for p in (ROOT / "benchmarks" / "results").rglob("*.md"))
    missing = sorted(x for x in quoted if x not in tables)
    assert not missing, f"numbers in README.md found in no benchmarks/results/*.md: {missing}"


def test_the_docs_build_from_the_quick_start():
    """`make docs` (the README's docs command) installs the docs extra, which holds mkdocs and
    mkdocstrings (so a clone that ran only `make demo` can build the site), then builds it strictly;
    the README names the data home the demo's fallback message asks for."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")
    readme = " ".join((ROOT / "README.md").read_text().split())
    makefile = (ROOT / "Makefile").read_text()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "`make docs`" in readme and ".venv/bin/mkdocs build" not in readme
    assert re.search(r"^docs: \$\(VENV\)/\.docs-installed$", makefile, re.M)
    assert '$(PIP) install -q -e ".[docs]"' in makefile and "mkdocs build --strict" in makefile
    assert {d.split(">")[0] for d in extras["docs"]} == {"mkdocs", "mkdocstrings[python]"}
    assert any(d.startswith("privopt[") and "docs" in d for d in extras["test"])
    assert "PRIVOPT_DATA_HOME" in readme and "--data-home" in readme
