"""The floors of ``docs/architecture.md`` as a checked invariant (issue 26).

Every module of the engine package is on one floor of :data:`FLOORS` (lowest first), and every
``import`` it makes goes to its own floor or one below, with no circle anywhere.  Imports are
read from the source (the AST), *including the ones inside functions*: a function-level import
is still a dependency, only a later one, and it was function-level imports that held the old
circle of config, packs, bundled, yamlsafe, references, checks and the analysis together.  Not
counted: imports under ``if TYPE_CHECKING:`` (annotations only, never run) and under
``if __name__ == "__main__":`` (the module run as a script is an entry point, the top floor).
An import that names no module of the package by an import statement is not seen here: the
check-kind registry (``kinds.py``) finds the check modules by name, as it finds a plugin's.

The floor map lives here, once; ``docs/architecture.md``'s "Floors" block is compared with it.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "engine" / "accel_drc"

#: floor name -> the modules on it (dotted names under ``accel_drc``; ``*`` is a wildcard;
#: ``""`` is the package's ``__init__``), lowest floor first
FLOORS: dict[str, tuple[str, ...]] = {
    "base": (
        "version",
        "errors",
        "hostile",
        "caseless",
        "arrays",
        "concurrency",
        "geometry",
        "model",
        "results",
        "basis",
        "extras",
        "dccode",
        "yamltext",
    ),
    "rule data": (
        "yamlsafe",
        "bundled",
        "references",
        "kinds",
        "material_library",
        "signal_rules",
        "packs",
        "config",
    ),
    "readers": ("readers", "readers.*", "kicad_drc"),
    "facts": ("analysis", "analysis.*", "classify", "config_audit"),
    "checks": ("checks", "checks.*", "coverage"),
    "run": ("waivers", "pipeline", "inspection", "baseline"),
    "writers": ("report", "report.*", "starter_config", "docgen", "action_report"),
    "entry points": (
        "",
        "api",
        "cli",
        "kibot_plugin",
        "kibot_plugins.*",
        "kicad_install",
        "kicad_package",
        "precommit",
        "regenerate",
    ),
}


#: a package split by idea -> its modules, lowest first: within the floor, each imports only the
#: ones before it, and none imports the package's ``__init__`` (the façade that re-exports them,
#: so the package's import path stays the callers')
ROOMS: dict[str, tuple[str, ...]] = {
    "analysis.pdn": ("planes", "rails", "model", "rows"),
}


def module_files() -> dict[str, Path]:
    """Dotted name (``accel_drc`` stripped; ``""`` for the package) -> source file."""
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def floor_of(module: str) -> int:
    """The index in :data:`FLOORS` of ``module`` (KeyError naming it when it has none)."""
    hits = [
        i
        for i, pats in enumerate(FLOORS.values())
        if any(module == p or (p.endswith("*") and fnmatch.fnmatch(module, p)) for p in pats)
    ]
    if len(hits) != 1:
        raise KeyError(f"accel_drc.{module} is on {len(hits)} floors of FLOORS, not one")
    return hits[0]


def _skipped(node: ast.If) -> bool:
    """``if TYPE_CHECKING:`` and ``if __name__ == "__main__":`` blocks: never run on import."""
    text = ast.unparse(node.test)
    return (
        "TYPE_CHECKING" in text or re.fullmatch(r"__name__ == ['\"]__main__['\"]", text) is not None
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``, at any depth, outside the skipped ``if`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _skipped(node):
            yield from (n for b in node.orelse for n in _imports_of(b))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def _imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> set[str]:
    """The package's modules ``node`` imports (``from . import x`` is module ``x`` when it is one,
    else the package it names)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = ["accel_drc", *module.split(".")] if module else ["accel_drc"]
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        subs = [f"{prefix}.{a.name}" for a in node.names]
        names = [n for n in subs if n[len("accel_drc.") :] in known]
        if len(names) < len(subs):  # a name that is not a module: an attribute of ``prefix``
            names.append(prefix)
    out = set()
    for name in names:
        if name != "accel_drc" and not name.startswith("accel_drc."):
            continue
        rel = name[len("accel_drc.") :] if name != "accel_drc" else ""
        while rel not in known and "." in rel:
            rel = rel.rsplit(".", 1)[0]
        if rel in known and rel != module:
            out.add(rel)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first such import}."""
    files = module_files()
    known = set(files)
    graph: dict[str, dict[str, int]] = {}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges: dict[str, int] = {}
        for node in _imports(tree):
            for t in _targets(mod, path.name == "__init__.py", node, known):
                edges.setdefault(t, node.lineno)
        graph[mod] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def _name(mod: str) -> str:
    return f"accel_drc.{mod}" if mod else "accel_drc"


def test_every_module_is_on_one_floor() -> None:
    for mod in module_files():
        floor_of(mod)  # raises naming the module


def test_no_import_goes_up_a_floor() -> None:
    files = module_files()
    names = list(FLOORS)
    up = []
    for mod, edges in import_graph().items():
        for target, line in edges.items():
            if floor_of(target) > floor_of(mod):
                where = files[mod].relative_to(ROOT)
                up.append(
                    f"{where}:{line}: {_name(mod)} ({names[floor_of(mod)]}) imports "
                    f"{_name(target)} ({names[floor_of(target)]})"
                )
    assert not up, "imports that go up a floor:\n" + "\n".join(up)


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (function-level imports counted):\n" + "\n".join(
        ", ".join(_name(m) for m in c) for c in found
    )


def test_the_graph_sees_function_level_imports(tmp_path: Path) -> None:
    """The reader of imports itself: one inside a function counts, one under TYPE_CHECKING or
    ``__main__`` does not; relative imports resolve to the module, else its package."""
    src = (
        "from typing import TYPE_CHECKING\n"
        "from . import packs\n"
        "if TYPE_CHECKING:\n    from .pipeline import x\n"
        "def f():\n    from .analysis import via_stubs\n    from .checks import register\n"
        "if __name__ == '__main__':\n    from .cli import main\n"
    )
    known = {"", "packs", "pipeline", "analysis", "analysis.via_stubs", "checks", "cli", "mod"}
    got = set()
    for node in _imports(ast.parse(src)):
        got |= _targets("mod", False, node, known)
    assert got == {"packs", "analysis.via_stubs", "checks"}


def test_circles_finds_a_circle() -> None:
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert circles(g) == [["a", "b", "c"]]


def test_architecture_doc_draws_these_floors() -> None:
    """``docs/architecture.md``'s "Floors" block lists the floors of :data:`FLOORS`, top first,
    each with its modules: the doc and the test say the same."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- floors -->\n```\n(.*?)```\n<!-- /floors -->", text, re.S)
    assert m, "docs/architecture.md has no <!-- floors --> block"
    doc: dict[str, list[str]] = {}
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        name, _, mods = line.partition(":")
        doc[name.strip()] = [x.strip() for x in mods.split(",") if x.strip()]
    want = {
        name: [p if p else "(the package __init__)" for p in pats]
        for name, pats in reversed(list(FLOORS.items()))
    }
    assert list(doc) == list(want)
    for name in want:
        assert doc[name] == want[name], name


@pytest.mark.parametrize("floor", list(FLOORS))
def test_each_floor_holds_a_module(floor: str) -> None:
    mods = module_files()
    assert any(floor_of(m) == list(FLOORS).index(floor) for m in mods), floor


@pytest.mark.parametrize("package", list(ROOMS))
def test_a_split_package_imports_downward(package: str) -> None:
    """The modules of a package split by idea (:data:`ROOMS`) import each other lowest first
    (``analysis/pdn``: the plane geometry knows no rail, the rails no impedance model, the model
    no report row), and no module of it goes through the package's façade ``__init__``; and
    they are all its modules: a new one is placed in the order."""
    files = module_files()
    rooms = [f"{package}.{m}" for m in ROOMS[package]]
    inside = {m for m in files if m.startswith(package + ".")}
    assert inside == set(rooms), f"{package}: modules {sorted(inside)} vs ROOMS {rooms}"
    graph = import_graph()
    wrong = []
    for k, mod in enumerate(rooms):
        for target, line in graph[mod].items():
            if target == package or (target in rooms and rooms.index(target) > k):
                wrong.append(f"{files[mod].relative_to(ROOT)}:{line}: imports {_name(target)}")
    assert not wrong, "imports against the order of the package:\n" + "\n".join(wrong)
