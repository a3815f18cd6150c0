"""The check-kind registry: one module per kind, discovered; the docs generated from it.

Adding a kind touches its module and the packs that use it, nothing else: these tests hold the
built-in modules to the contract, install a throw-away kind from a temporary package (an entry
point of the group ``accel_drc.checks``, exactly as a plugin package would) and see it in
``accel-drc rules``, in the generated docs and in a check run; a rule naming a kind nobody
declares is a ``file:line`` error at load; the committed ``docs/rules.md`` equals the generated
text.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from accel_drc import checks, docgen, packs
from accel_drc.cli import build_parser, main
from accel_drc.errors import InputError
from accel_drc.report.writers import WRITERS, render_outputs

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = sorted(
    p.stem for p in (ROOT / "engine/accel_drc/checks").glob("*.py") if not p.stem.startswith("_")
)

THROWAWAY = '''\
"""``silkscreen_colour``: a throw-away kind the registry test installs.

What it checks:
    Nothing real: one finding per run, so the test can see the rule ran.
Why:
    To prove that adding a kind is one module.
Parameters:
    ``colour`` (string): the colour asked for.
Cannot verify when:
    Never.
Example:
    ``{check: silkscreen_colour, params: {colour: white}}``.
"""

from __future__ import annotations

from typing import Any

from accel_drc.checks import CheckContext, CheckOutcome, register
from accel_drc.checks._common import finding
from accel_drc.results import Rule, Status

KIND = "silkscreen_colour"
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["colour"],
    "properties": {"colour": {"type": "string", "minLength": 1}},
}


@register(KIND)
def check(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    msg = "silkscreen is " + rule.params["colour"]
    return CheckOutcome([finding(rule, Status.VIOLATION, msg)], checked=1)


def extras(analysis: Any, rules: Any) -> dict[str, Any]:
    return {"colours": [r.params["colour"] for r in rules if r.check == KIND]}
'''

PACK = """\
pack: ours
version: "1"
applies_to: [training, inference, edge]
rules:
  - id: ours.silk
    check: silkscreen_colour
    severity: info
    params: {colour: white}
    why: the house style asks for white silkscreen
    source: house style guide
"""


def _install_plugin(tmp: Path, source: str = THROWAWAY) -> Path:
    """A package ``silk_kind`` with one check module and its entry point, importable from
    ``tmp`` (a ``*.dist-info`` folder is what an installed distribution leaves on sys.path)."""
    pkg = tmp / "silk_kind"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "silkscreen_colour.py").write_text(source)
    info = tmp / "silk_kind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: silk-kind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[accel_drc.checks]\nsilkscreen_colour = silk_kind.silkscreen_colour\n"
    )
    return tmp


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = _install_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield checks.discover(refresh=True)
    monkeypatch.undo()
    checks.REGISTRY.pop("silkscreen_colour", None)
    sys.modules.pop("silk_kind.silkscreen_colour", None)
    sys.modules.pop("silk_kind", None)
    importlib.invalidate_caches()
    checks.discover(refresh=True)


# --- the contract ----------------------------------------------------------------------------


def test_every_module_is_a_kind_that_follows_the_contract():
    kinds = checks.discover()
    assert BUILT_IN and sorted(kinds) == BUILT_IN  # no _MODULES list: the files are the kinds
    for name in BUILT_IN:
        mod = importlib.import_module(f"accel_drc.checks.{name}")
        assert checks.contract_problems(mod) == [], name
        assert name == mod.KIND
        jsonschema.Draft7Validator.check_schema(mod.PARAMS)
        assert kinds[name].params is mod.PARAMS
        assert kinds[name].check is checks.REGISTRY[name]
        for _, key in checks.SECTIONS:
            assert kinds[name].sections[key].strip(), (name, key)


def test_check_kinds_and_param_schemas_are_derived_from_the_registry():
    assert checks.kind_names() == packs.CHECK_KINDS
    assert set(packs.PARAM_SCHEMAS) == set(BUILT_IN)
    assert packs.PARAM_SCHEMAS["tg"]["required"] == ["min_tg_c"]
    with pytest.raises(AttributeError):
        packs.NO_SUCH_THING  # noqa: B018
    # every kind the shipped packs use is declared, and every declared kind is used
    lib = packs.load_library()
    used = {r.check for p in lib.packs.values() for r in p.rules}
    assert used == set(BUILT_IN)


def test_extras_hook_keys():
    kinds = checks.discover()
    assert kinds["via_stub"].extras is not None and kinds["via_stub"].extras_key == "via_stubs"
    assert (
        kinds["pdn_impedance"].extras is not None and kinds["pdn_impedance"].extras_key == "rails"
    )
    assert kinds["tg"].extras is None and kinds["tg"].extras_key == "tg"


def test_docstring_parser_reads_the_sections_and_names_what_is_missing():
    summary, sections = checks.parse_docstring(
        "Sum.\n\nWhat it checks:\n    a\n      b\n\n    c\nWhy: inline\nExample:\n    x\n"
    )
    assert summary == "Sum."
    assert sections == {"what": "a\n  b\n\nc", "why": "inline", "example": "x"}
    mod = type(sys)("bad_kind")
    mod.__doc__ = "Only a summary."
    mod.KIND = "Bad Kind"
    problems = checks.contract_problems(mod)
    assert "KIND (a lower-case name) is missing" in problems
    assert any("PARAMS" in p for p in problems)
    assert "the docstring has no 'Cannot verify when' section" in problems


# --- unknown kinds are load errors -----------------------------------------------------------


def test_unknown_kind_is_a_load_error_with_its_line(tmp_path: Path):
    lib = packs.load_library()
    p = tmp_path / "ours.yaml"
    p.write_text(PACK)
    with pytest.raises(InputError) as ei:
        packs.load_pack(p, lib.signals, lib.foils)
    assert str(ei.value).startswith(f"{p}:6: unknown check kind 'silkscreen_colour' (known: ")
    assert "copper_weight" in str(ei.value)


def test_unknown_kind_in_a_project_pack_exits_3(tmp_path: Path, capsys):
    (tmp_path / "ours.yaml").write_text(PACK)
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("rules:\n  packs: [ours.yaml]\n")
    assert main(["rules", "--config", str(cfg)]) == 3
    err = capsys.readouterr().err
    assert "ours.yaml:6: unknown check kind 'silkscreen_colour'" in err


# --- a throw-away kind from a plugin package -------------------------------------------------


def test_plugin_kind_is_discovered_documented_and_run(plugin, tmp_path: Path, capsys):
    assert "silkscreen_colour" in plugin
    kind = plugin["silkscreen_colour"]
    assert kind.module == "silk_kind.silkscreen_colour"
    assert "silkscreen_colour" in packs.CHECK_KINDS
    # the generated docs
    md = docgen.kinds_markdown()
    assert "### `silkscreen_colour`" in md and "To prove that adding a kind is one module." in md
    assert "| `colour` | string ≥ 1 |" not in md  # minLength is not a number bound
    assert "| `colour` | string | yes |" in md
    # accel-drc rules sees the kind and a project pack's rule using it
    (tmp_path / "ours.yaml").write_text(PACK)
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("rules:\n  packs: [ours.yaml]\n")
    assert main(["rules", "--config", str(cfg), "--class", "edge", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "### `silkscreen_colour`" in out
    assert "| `ours.silk` | `silkscreen_colour` | info | colour=white |" in out
    # a bad param of the new kind is refused by its own schema, with the line
    (tmp_path / "ours.yaml").write_text(PACK.replace("{colour: white}", "{color: white}"))
    assert main(["rules", "--config", str(cfg)]) == 3
    assert "ours.yaml:8: unknown key 'color' in rules.0.params" in capsys.readouterr().err
    # and a check runs it, its extras hook filling result.extras[KIND]
    (tmp_path / "ours.yaml").write_text(PACK)
    from accel_drc.config import load_config
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    board = read_board(str(ROOT / "fixtures/boards/coral-tpu-m2-adapter/M2.kicad_pcb"))
    result = check_board(board, load_config(str(cfg), None), board_class="edge")
    assert [f.message for f in result.findings if f.rule == "ours.silk"] == ["silkscreen is white"]
    assert result.extras["silkscreen_colour"] == {"colours": ["white"]}


@pytest.mark.slow
def test_plugin_kind_through_the_installed_command(tmp_path: Path):
    """The same from a fresh process: nothing but PYTHONPATH tells accel-drc of the kind."""
    root = _install_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": str(root)}
    got = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "rules", "--class", "edge", "--format", "markdown"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert got.returncode == 0, got.stderr
    assert "| [`silkscreen_colour`](#silkscreen_colour) | a throw-away kind" in got.stdout


def test_a_plugin_kind_that_cannot_run_is_an_error_a_thin_docstring_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    def discover_with(source: str, where: Path) -> dict:
        root = _install_plugin(where, source)
        monkeypatch.syspath_prepend(str(root))
        importlib.invalidate_caches()
        for m in ("silk_kind.silkscreen_colour", "silk_kind"):
            sys.modules.pop(m, None)
        try:
            return checks.discover(refresh=True)
        finally:
            monkeypatch.undo()
            checks.REGISTRY.pop("silkscreen_colour", None)

    try:
        thin = THROWAWAY.replace(
            "Example:\n    ``{check: silkscreen_colour, params: {colour: white}}``.\n", ""
        )
        assert "Example:" not in thin
        with caplog.at_level("WARNING", logger="accel_drc.checks"):
            kinds = discover_with(thin, tmp_path / "a")
        assert "silkscreen_colour" in kinds
        assert "the docstring has no 'Example' section" in caplog.text
        broken = THROWAWAY.replace("PARAMS: dict[str, Any] = {", "NOT_PARAMS: dict[str, Any] = {")
        with pytest.raises(InputError, match="PARAMS .* is missing"):
            discover_with(broken, tmp_path / "b")
    finally:
        for m in ("silk_kind.silkscreen_colour", "silk_kind"):
            sys.modules.pop(m, None)
        importlib.invalidate_caches()
        checks.discover(refresh=True)
    assert "silkscreen_colour" not in checks.discover()


# --- generated docs --------------------------------------------------------------------------


def test_committed_docs_equal_the_generated_reference():
    doc = ROOT / "docs/rules.md"
    text = doc.read_text(encoding="utf-8")
    want = docgen.splice(text, docgen.reference(*docgen.shipped_rules()), str(doc))
    assert text == want, (
        "docs/rules.md is out of date: run `python -m accel_drc.regenerate` "
        "(or `accel-drc rules --format markdown --write docs/rules.md`)"
    )


def test_write_replaces_only_the_generated_section(tmp_path: Path, capsys):
    p = tmp_path / "r.md"
    p.write_text(f"# mine\n\nhand text\n\n{docgen.BEGIN}\nstale\n{docgen.END}\n\ntail\n")
    assert main(["rules", "--format", "markdown", "--write", str(p)]) == 0
    text = p.read_text()
    assert text.startswith("# mine\n\nhand text\n\n") and text.endswith(f"{docgen.END}\n\ntail\n")
    assert "stale" not in text and "### `via_stub`" in text and "### edge (" in text
    assert "updated" in capsys.readouterr().out
    assert main(["rules", "--format", "markdown", "--write", str(p)]) == 0
    assert "up to date" in capsys.readouterr().out
    q = tmp_path / "none.md"
    q.write_text("no markers\n")
    assert main(["rules", "--format", "markdown", "--write", str(q)]) == 3
    assert "no generated section" in capsys.readouterr().err
    assert main(["rules", "--write", str(q)]) == 1  # --write needs --format markdown


def test_docgen_module_check_mode(tmp_path: Path):
    p = tmp_path / "r.md"
    p.write_text(f"{docgen.BEGIN}\n{docgen.END}\n")
    assert docgen.main(["--check", str(p)]) == 1
    assert docgen.main([str(p)]) == 0
    assert docgen.main(["--check", str(p)]) == 0


def test_generated_text_has_no_rst_markup():
    md = docgen.kinds_markdown()
    assert "``" not in md and ":mod:" not in md and ":func:" not in md


# --- the writers registry drives the CLI flags ------------------------------------------------


def test_writers_registry_drives_the_check_flags():
    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    flags = {a.dest for a in check._actions}
    assert set(WRITERS) <= flags
    assert list(WRITERS) == ["json", "junit", "sarif", "markdown", "html"]
    with pytest.raises(TypeError, match="unknown report format"):
        render_outputs(None, None, pdf="x.pdf")  # type: ignore[arg-type]


def test_pipeline_and_inspection_do_not_print():
    for name in ("pipeline.py", "inspection.py", "docgen.py", "packs.py", "yamlsafe.py"):
        src = (ROOT / "engine/accel_drc" / name).read_text(encoding="utf-8")
        body = src if name != "docgen.py" else src.split("def main(")[0]
        assert "print(" not in body and "sys.stdout" not in body, name


def test_schemas_are_json_files_beside_the_data():
    schemas = sorted(p.name for p in (ROOT / "rules/schemas").glob("*.schema.json"))
    assert schemas == [
        f"{n}.schema.json"
        for n in (
            "config",
            "connectors",
            "fab",
            "foils",
            "materials",
            "pack",
            "references",
            "signal_rules",
            "signals",
        )
    ]
    from accel_drc.config import CONFIG_SCHEMA

    assert CONFIG_SCHEMA["properties"]["class"]["enum"] == list(packs.BOARD_CLASSES)
