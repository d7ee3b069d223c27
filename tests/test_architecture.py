"""The layers of docs/architecture.md, checked on the source: no import circle among
privopt's modules (every import statement at any depth, function-local ones included),
and the foundation modules import nothing of privopt above them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "privopt"

#: The foundation layer (docs/architecture.md): they may import one another only.
FOUNDATIONS = {"privopt.exceptions", "privopt._validation", "privopt._random", "privopt._lattice",
               "privopt._limits", "privopt._frozen", "privopt._optional", "privopt._progress",
               "privopt._cache", "privopt._numba", "privopt._runtime", "privopt._version"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the privopt modules it imports anywhere in its body.  ``from pkg import
    sub`` of a submodule is an import of that submodule; of any other name, of the
    package (its ``__init__`` runs)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("privopt"):
                    continue
                subs = {f"{target}.{a.name}" for a in node.names} & mods.keys()
                others = [a for a in node.names if f"{target}.{a.name}" not in mods]
                graph[m] |= subs | ({target} if others and target in mods else set())
            elif isinstance(node, ast.Import):
                graph[m] |= {a.name for a in node.names if a.name in mods}
        graph[m].discard(m)
    return graph


def cycles(graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_among_privopts_modules():
    found = cycles(import_graph())
    assert not found, f"import circles (move the shared piece to a lower layer): {found}"


def test_the_foundations_import_nothing_above_them():
    graph = import_graph()
    upward = {m: sorted(graph[m] - FOUNDATIONS) for m in FOUNDATIONS if m in graph and graph[m] - FOUNDATIONS}
    assert not upward, upward


def test_the_check_sees_a_circle():
    """The detector itself: a two-module circle, and a package importing its submodule."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert cycles({"p": {"p.x"}, "p.x": set()}) == []


def _package(graph, name: str) -> set[str]:
    return {m for m in graph if m == name or m.startswith(name + ".")}


def test_w_sits_on_the_foundations():
    """privopt.space (W: grids, step, levels, points, the split by support)
    imports only the foundations and itself."""
    graph = import_graph()
    space = _package(graph, "privopt.space")
    upward = {m: sorted(graph[m] - FOUNDATIONS - space) for m in space if graph[m] - FOUNDATIONS - space}
    assert space and not upward, upward


def test_the_search_engine_sits_below_the_solvers():
    """privopt.search imports only the foundations, privopt.space and itself
    (no Pyomo layer, no mechanism)."""
    graph = import_graph()
    search = _package(graph, "privopt.search")
    allowed = FOUNDATIONS | _package(graph, "privopt.space") | search
    upward = {m: sorted(graph[m] - allowed) for m in search if graph[m] - allowed}
    assert search and not upward, upward


#: Limits of the search engine and the enumeration, defined once (in privopt._limits).
_ONE_HOME = ("LOCAL_SECONDS", "MAX_POINTS", "_PATTERNS", "MAX_REGION_POINTS")


def test_each_work_limit_is_defined_once():
    """No module but privopt._limits gives a number to a name ending in one of
    ``_ONE_HOME`` (another module may import or alias it): two values of one
    limit (20M against 50M, 2^22 against 2^20) cannot come back unnoticed."""
    found = {}
    for m, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                literal = all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp)) for n in ast.walk(node.value)
                              if not isinstance(n, (ast.operator, ast.unaryop)))
                for t in targets:
                    if isinstance(t, ast.Name) and t.id.endswith(_ONE_HOME) and literal:
                        found.setdefault(t.id.lstrip("_"), []).append(m)
    elsewhere = {k: v for k, v in found.items() if v != ["privopt._limits"]}
    assert not elsewhere, elsewhere
    assert {"LOCAL_SECONDS", "ENUMERATE_MAX_POINTS", "SCORING_MAX_POINTS", "SPARSE_MAX_PATTERNS",
            "MAX_REGION_PATTERNS", "MAX_REGION_POINTS"} <= found.keys()
