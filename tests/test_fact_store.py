"""``Analysis`` is the fact store (issue 26): its facts are declared on it, nothing outside sets
one, the checks read only facts it declares (no ``getattr`` guard for a stand-in that lacks
one), and the pipeline schedules the checks by the facts their kinds declare they need
(``NEEDS``), never by naming a kind."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from accel_drc import kinds
from accel_drc.analysis import Analysis
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "engine" / "accel_drc"
CHECKS = sorted((PACKAGE / "checks").glob("*.py"))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _analysis_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names that hold the analysis in ``fn``: ``analysis``, a parameter annotated
    ``Analysis``, and a name bound to ``ctx.analysis``."""
    names = {"analysis"}
    for arg in [*fn.args.args, *fn.args.kwonlyargs]:
        if arg.annotation is not None and ast.unparse(arg.annotation).strip("'\"") == "Analysis":
            names.add(arg.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and ast.unparse(node.value) == "ctx.analysis":
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _is_analysis(expr: ast.AST, names: set[str]) -> bool:
    return (isinstance(expr, ast.Name) and expr.id in names) or ast.unparse(expr) == "ctx.analysis"


def _reads(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, how, name) of every read of the analysis in a module: ``attr`` for
    ``analysis.name``, ``getattr`` for ``getattr(analysis, "name", …)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for fn in _functions(tree):
        names = _analysis_names(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and _is_analysis(node.value, names):
                yield node.lineno, "attr", node.attr
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and node.args
                and _is_analysis(node.args[0], names)
            ):
                yield node.lineno, "getattr", ast.unparse(node.args[1])


def _declared() -> set[str]:
    """What ``Analysis`` declares: its class's members and what ``__init__`` sets."""
    a = Analysis(read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"])))
    return set(dir(Analysis)) | set(vars(a))


def test_checks_read_only_facts_the_analysis_declares() -> None:
    """Every fact a check reads is declared on ``Analysis`` (on main: ``pdn_params``, read and
    never set), none is read through a ``getattr`` guard (on main: 11 such guards) and none
    through its ``__dict__`` (on main: four memos poked into it)."""
    declared = _declared() - {"__dict__"}
    bad = []
    for path in CHECKS:
        for line, how, name in _reads(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if how == "getattr":
                bad.append(f"{where}: getattr(analysis, {name}): read the fact, it is declared")
            elif name not in declared:
                bad.append(f"{where}: analysis.{name} is no fact of Analysis")
    assert not bad, "\n".join(bad)


def test_no_fact_is_set_from_outside() -> None:
    """No module of the package or the plugin sets an attribute of the analysis or writes into
    its ``__dict__`` (on main: ``analysis.library = lib`` in the pipeline,
    ``analysis.board_class`` in ``inspect``, seven memos poked in as
    ``analysis.__dict__["_impedance_cache"]`` and the like).  The library and the class are
    constructor arguments; the memos live in ``Analysis.memo``, declared in ``__init__``."""
    bad = []
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "plugin").rglob("*.py")]
    for path in files:
        if path == PACKAGE / "analysis" / "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in _functions(tree):
            names = _analysis_names(fn)
            for node in ast.walk(fn):
                targets = []
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and _is_analysis(t.value, names):
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: sets {ast.unparse(t)}")
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "__dict__"
                    and _is_analysis(node.value, names)
                ):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "\n".join(bad)


def test_needs_name_facts_of_the_analysis() -> None:
    found = kinds.discover()
    assert any(k.needs for k in found.values())
    for kind in found.values():
        for fact in kind.needs:
            assert hasattr(Analysis, fact) or fact in Analysis.PREFETCHABLE, (kind.kind, fact)
    for fact in Analysis.PREFETCHABLE:
        assert any(fact in k.needs for k in found.values()), f"no kind needs {fact}"


def test_pipeline_names_no_check_kind() -> None:
    """The pipeline schedules and prefetches from the kinds' ``NEEDS``: no kind's name appears in
    it as a value (on main: ``"via_stub"``, ``"impedance"``, ``"pdn_impedance"``, …).  A dict key
    that happens to be spelled like a kind (a report row's ``"foil"``) is not a kind."""
    names = set(kinds.kind_names())
    tree = ast.parse((PACKAGE / "pipeline.py").read_text(encoding="utf-8"))
    keys = {id(k) for d in ast.walk(tree) if isinstance(d, ast.Dict) for k in d.keys}
    keys |= {id(s.slice) for s in ast.walk(tree) if isinstance(s, ast.Subscript)}
    named = [
        f"pipeline.py:{n.lineno}: {n.value!r}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and n.value in names and id(n) not in keys
    ]
    assert not named, "\n".join(named)


def test_wave_follows_the_prefetch_queue() -> None:
    """A rule runs in the wave of the facts it needs: 0 when none is being computed ahead, 1 for
    a fact started alone, 2 for one queued behind it; ``irdrop`` waits for the rails."""
    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    a = Analysis(board)
    assert a.wave(("via_stubs",)) == a.wave(("irdrop",)) == 0
    a.prefetch("via_stubs")
    a.prefetch("pair_table", after="via_stubs")
    a.prefetch("rails")
    try:
        assert a.wave(()) == a.wave(("net_signal",)) == 0
        assert a.wave(("via_stubs",)) == a.wave(("rails",)) == a.wave(("irdrop",)) == 1
        assert a.wave(("pair_table",)) == a.wave(("pair_table", "via_stubs")) == 2
    finally:
        a.settle_prefetched()
