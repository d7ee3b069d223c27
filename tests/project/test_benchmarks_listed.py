"""benchmarks/run_all.py (``make benchmarks``) runs every benchmark script of the folder,
or says in its SKIPPED dict why not: a new script cannot be forgotten silently."""

from __future__ import annotations

import importlib.util
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")


def _run_all():
    spec = importlib.util.spec_from_file_location("run_all", os.path.join(BENCH, "run_all.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = module      # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["run_all"]
    return module


def test_every_benchmark_script_is_run_or_skipped_with_a_reason():
    run_all = _run_all()
    scripts = {f for f in os.listdir(BENCH) if f.endswith(".py") and f.startswith(("bench_", "study_"))}
    assert scripts, BENCH
    grouped = [b.script for g in run_all.GROUPS for b in g.benches]
    assert len(grouped) == len(set(grouped)), f"a script in two groups: {sorted(grouped)}"
    listed, skipped = set(grouped), set(run_all.SKIPPED)
    assert set(run_all.SCRIPTS) == listed
    assert not listed & skipped, f"both run and skipped: {sorted(listed & skipped)}"
    missing = scripts - listed - skipped
    assert not missing, \
        f"add to a group of benchmarks/run_all.py GROUPS (full and --quick arguments) or SKIPPED: {sorted(missing)}"
    gone = (listed | skipped) - scripts
    assert not gone, f"benchmarks/run_all.py lists scripts that do not exist: {sorted(gone)}"
    for script, reason in run_all.SKIPPED.items():
        assert isinstance(reason, str) and reason.strip(), script
    for script, args in run_all.SCRIPTS.items():
        assert len(args) == 2 and all(isinstance(a, list) for a in args), script


def test_groups_are_named_once_and_group_selects_them_in_order(capsys):
    import pytest

    run_all = _run_all()
    names = [g.name for g in run_all.GROUPS]
    assert len(names) == len(set(names)) and all(g.benches and g.measures for g in run_all.GROUPS)
    assert run_all.selected(None) == list(run_all.GROUPS) == run_all.selected([])
    assert [g.name for g in run_all.selected(["privacy", "default_fit"])] == ["default_fit", "privacy"]
    with pytest.raises(SystemExit, match="unknown --group speed; the groups are default_fit"):
        run_all.selected(["speed"])
    assert run_all.main(["--list", "--group", "privacy"]) == 0          # lists, runs nothing
    assert capsys.readouterr().out.splitlines()[1].strip() == "bench_audit.py"


def test_no_benchmark_imports_another_benchmarks_script():
    """Shared pieces live in benchmarks/_common.py and benchmarks/_datasets.py: a script
    that imports another breaks when that one is retired, and runs its module-level code."""
    import ast

    found = []
    for name in sorted(os.listdir(BENCH)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(BENCH, name)) as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{name}:{node.lineno} {m}" for m in mods if m.split(".")[0].startswith(("bench_", "study_",
                                                                                                 "run_all"))]
    assert not found, found


def test_every_retired_script_has_a_line_in_the_results_index():
    """A finished study's script is deleted but its results stay: benchmarks/results/README.md
    says which script (and which revision holds it) made each results file."""
    index = open(os.path.join(BENCH, "results", "README.md")).read()
    named = set(re.findall(r"\b((?:bench|study)_\w+\.py)\b", index))
    current = {f for f in os.listdir(BENCH) if f.endswith(".py")}
    for script in named - current:          # retired: the revision that still holds it is named
        assert re.search(r"`git show [0-9a-f]{7,}:benchmarks/" + re.escape(script) + "`", index), script
    for script in {f for f in current if not f.startswith("_")} - {"run_all.py"}:   # not the shared modules
        assert script in named, f"benchmarks/results/README.md does not name {script}"


def test_every_option_run_all_passes_is_one_the_script_defines():
    """A renamed option would otherwise only fail when make benchmarks reaches the script."""
    run_all = _run_all()
    unknown = []
    for script, (full, quick) in run_all.SCRIPTS.items():
        with open(os.path.join(BENCH, script)) as fh:
            source = fh.read()
        for option in {a for a in full + quick if a.startswith("--")}:
            if f'"{option}"' not in source:
                unknown.append(f"{script} {option}")
    assert not unknown, unknown


# --- benchmarks/_common.py ----------------------------------------------------------------------


def _common():
    spec = importlib.util.spec_from_file_location("_common", os.path.join(BENCH, "_common.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_csv_round_trip_keeps_the_column_order_and_refuses_an_unknown_column(tmp_path):
    import pytest

    common = _common()
    path = tmp_path / "sub" / "rows.csv"
    assert common.read_csv(path) == []                       # nothing to resume from yet
    common.write_csv(path, [{"b": 1, "a": "x"}, {"a": "y"}], ["a", "b"])
    assert path.read_text().splitlines() == ["a,b", "x,1", "y,"]
    assert common.read_csv(path) == [{"a": "x", "b": "1"}, {"a": "y", "b": ""}]
    with pytest.raises(ValueError):
        common.write_csv(path, [{"a": 1, "c": 2}], ["a", "b"])
    common.write_csv(path, [{"a": 1, "c": 2}], ["a", "b"], extrasaction="ignore")   # said explicitly
    assert path.read_text().splitlines() == ["a,b", "1,"]


def test_markdown_from_lines_or_text(tmp_path):
    common = _common()
    common.write_markdown(tmp_path / "a.md", ["# T", "", "x"])
    assert (tmp_path / "a.md").read_text() == "# T\n\nx\n"
    common.write_markdown(tmp_path / "b.md", "as is")
    assert (tmp_path / "b.md").read_text() == "as is"


def test_stamp_names_the_command_and_the_environment():
    import privopt

    common = _common()
    env = common.stamp(["--seeds", "2", "--tag", "a b"], script="/x/bench_demo.py")
    assert env["command"] == "python benchmarks/bench_demo.py --seeds 2 --tag 'a b'"
    assert env["privopt"] == privopt.__version__ and env["cores"] == os.cpu_count()
    line = common.stamp_line(env)
    assert line.startswith("`python benchmarks/bench_demo.py --seeds 2 --tag 'a b'` on ")
    assert f"privopt {privopt.__version__}" in line and f"Python {env['python']}" in line


@pytest.mark.slow
def test_checkout_env_makes_a_child_import_privopt_from_the_other_checkout(tmp_path):
    """The editable install must not win over the checkout put on PYTHONPATH (what the
    --before runs of bench_branch_and_bound.py and others rely on)."""
    import subprocess
    import sys

    common = _common()
    (tmp_path / "privopt").mkdir()
    (tmp_path / "privopt" / "__init__.py").write_text("")
    (tmp_path / "benchmarks").mkdir()
    child = tmp_path / "benchmarks" / "child.py"       # a script copied into the other checkout
    child.write_text("import privopt, _common\nprint(privopt.__file__)\nprint(_common.__file__)\n")
    out = subprocess.run([sys.executable, str(child)], env=common.checkout_env(str(tmp_path)),
                         capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert out[0] == str(tmp_path / "privopt" / "__init__.py")
    assert out[1] == os.path.join(BENCH, "_common.py")        # that checkout predates _common.py
    plain = subprocess.run([sys.executable, "-c", "import privopt; print(privopt.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path / "benchmarks").stdout
    assert str(tmp_path) not in plain and plain.strip().endswith("__init__.py")   # without: this checkout's
