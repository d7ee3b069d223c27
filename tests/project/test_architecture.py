"""The layers of docs/architecture.md, checked on the source: no import circle among
privopt's modules (every import statement at any depth, function-local ones included),
and the foundation modules import nothing of privopt above them."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "privopt"

#: The foundation layer (docs/architecture.md): they may import one another only.
FOUNDATIONS = {"privopt.exceptions", "privopt._validation", "privopt._random", "privopt._lattice",
               "privopt._limits", "privopt._frozen", "privopt._optional", "privopt._progress",
               "privopt._cache", "privopt._numba", "privopt._runtime", "privopt._version", "privopt._exact"}


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


#: Modules allowed to reach into another package's private modules: none.
PRIVATE_IMPORT_EXCEPTIONS: set[str] = set()


def _is_package(mods, name: str) -> bool:
    return name in mods and mods[name].name == "__init__.py"


def private_imports() -> list[tuple[str, int, str]]:
    """``(module, line, what)`` of every import (at any depth) of another
    subpackage's private module (a path component after the subpackage starting
    with ``_``) or of a private name (``_x``, not dunder) from another package.
    Within one subpackage anything goes; privopt's top-level private modules
    (the foundations: ``privopt._lattice``, ...) are public to privopt."""
    mods = _modules()
    out = []
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        mp = m.split(".")
        own = mp[1] if len(mp) > 1 and _is_package(mods, "privopt." + mp[1]) else None
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = mp if is_pkg else mp[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            tp = target.split(".")
            if tp[0] != "privopt":
                continue
            pkg = tp[1] if len(tp) > 1 and _is_package(mods, "privopt." + tp[1]) else None
            if pkg is not None and pkg == own:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                inner = (full if full in mods else target).split(".")[2:] if pkg else []
                private_name = alias.name.startswith("_") and not alias.name.startswith("__")
                if pkg is None and full in mods:
                    private_name = False          # a top-level module of privopt (a foundation)
                if any(p.startswith("_") for p in inner) or private_name:
                    out.append((m, node.lineno, f"from {target} import {alias.name}"))
    return out


def test_no_import_of_another_packages_private_parts():
    """Each package exports what the others need from its ``__init__``; importers
    use those package-level names."""
    found = [x for x in private_imports() if x[0] not in PRIVATE_IMPORT_EXCEPTIONS]
    assert not found, found


def _package_of(module: str) -> str:
    """The subpackage of a privopt module (``privopt.solvers._enumerate`` ->
    ``solvers``), or the module itself for a top-level one."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _private_names_defined(tree: ast.AST) -> set[str]:
    """Private names (``_x``, not dunder) a module gives to an object: attributes
    assigned (``obj._x = ...``, ``setattr(obj, "_x", ...)``), methods and class
    attributes, module-level functions and variables."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for sub in (x for t in targets for x in ast.walk(t)):
                if isinstance(sub, ast.Attribute):
                    out.add(sub.attr)
                elif isinstance(sub, ast.Name):
                    out.add(sub.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
            out.add(str(node.args[1].value))
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def private_attribute_reads() -> list[tuple[str, int, str]]:
    """``(module, line, attribute)`` of every read of a private attribute
    (``obj._x``, ``obj`` not ``self``/``cls``) that privopt defines in another
    package and not in the reader's own: a contract between packages that the
    import check cannot see (e.g. the exact oracle reading what the perturbation
    transformation set on its block)."""
    mods = _modules()
    trees = {m: ast.parse(path.read_text()) for m, path in mods.items()}
    defined: dict[str, set[str]] = {}
    for m, tree in trees.items():
        defined.setdefault(_package_of(m), set()).update(_private_names_defined(tree))
    everywhere = set().union(*defined.values())
    out = []
    for m, tree in trees.items():
        own = defined[_package_of(m)]
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in everywhere
                    and node.attr not in own and node.attr.startswith("_") and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                out.append((m, node.lineno, node.attr))
    return out


def test_no_read_of_another_packages_private_attributes():
    found = private_attribute_reads()
    assert not found, ("private attributes of another package read (export a public accessor or a typed "
                       f"record from the owning package instead): {found}")


def test_the_private_attribute_check_sees_one(tmp_path, monkeypatch):
    pkg = tmp_path / "privopt"
    for rel, text in {"__init__.py": "", "a/__init__.py": "", "a/make.py": "def f(b):\n    b._secret = 1\n",
                      "b/__init__.py": "", "b/use.py": "def g(b):\n    return b._secret + b._own\n",
                      "b/own.py": "def h(b):\n    b._own = 2\n"}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    assert private_attribute_reads() == [("privopt.b.use", 2, "_secret")]


def test_the_private_import_check_sees_one(tmp_path, monkeypatch):
    """The detector itself, on a tiny package tree."""
    root = tmp_path / "privopt"
    for rel, text in {"__init__.py": "", "_lattice.py": "", "a/__init__.py": "", "a/_impl.py": "x = 1\n",
                      "b/__init__.py": "", "b/_own.py": "",
                      "b/use.py": ("from ..a._impl import x\nfrom ..a import _hidden\nfrom .._lattice import y\n"
                                   "from ._own import z\nfrom ..a import public\n")}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", root)
    assert [what for _, _, what in private_imports()] == ["from privopt.a._impl import x",
                                                          "from privopt.a import _hidden"]


#: The most function-local imports of privopt's own modules outside LOCAL_IMPORT_EXCEPTIONS:
#: each that remains loads a slow optional part on first use (scikit-learn's estimators and
#: baselines, numba's kernels); an import circle is never the reason (the graph above
#: counts function-local imports too, so moving one to module level cannot create a circle).
MAX_LOCAL_IMPORTS = 15
#: Modules whose function-local imports are not counted: none.
LOCAL_IMPORT_EXCEPTIONS: set[str] = set()


def local_imports() -> list[tuple[str, int]]:
    """``(module, line)`` of every import of privopt's own modules inside a function."""
    out = []
    for m, path in _modules().items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if n is not f}
        for node in ast.walk(tree):
            if id(node) not in inner:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    target = ".".join(base[:len(base) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target == "privopt" or target.startswith("privopt."):
                    out.append((m, node.lineno))
            elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "privopt" for a in node.names):
                out.append((m, node.lineno))
    return sorted(out)


def test_few_function_local_imports():
    found = [x for x in local_imports() if x[0] not in LOCAL_IMPORT_EXCEPTIONS]
    assert len(found) <= MAX_LOCAL_IMPORTS, (len(found), found)


#: The layers of docs/architecture.md, bottom up: a module imports only from its own layer
#: or the ones below it.  (A package's entry covers its submodules.)
LAYERS = [
    ("foundations", FOUNDATIONS | {"privopt._revisions", "privopt._sklearn"}),
    ("space", {"privopt.space"}),
    ("search", {"privopt.search"}),
    ("model", {"privopt.models"}),
    ("perturbation", {"privopt.perturbation"}),
    ("oracle", {"privopt.solvers", "privopt.oracle"}),
    ("calibration", {"privopt.calibration"}),
    ("result", {"privopt.result", "privopt.ledger"}),
    ("mechanisms", {"privopt.mechanisms"}),
    ("applications", {"privopt", "privopt.__main__", "privopt.estimators", "privopt.scoring", "privopt.baselines",
                      "privopt.decorators", "privopt.audit", "privopt.experiments", "privopt.datasets",
                      "privopt.demo", "privopt.cli"}),
]


def layer_of(module: str) -> int | None:
    for i, (_, names) in enumerate(LAYERS):
        if module in names or any(module.startswith(n + ".") for n in names if n != "privopt"):
            return i
    return None


def test_every_module_has_a_layer_and_imports_only_downwards():
    graph = import_graph()
    homeless = sorted(m for m in graph if layer_of(m) is None)
    assert not homeless, f"modules in no layer of docs/architecture.md: {homeless}"
    upward = sorted((m, d) for m, deps in graph.items() for d in deps if layer_of(d) > layer_of(m))
    assert not upward, f"imports above the importer's layer: {upward}"
