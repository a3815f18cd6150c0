"""The per-signal rules are generated from ``rules/signals.yaml`` (``rules/signal_rules.yaml``):
adding a signal type is one entry there, a class-specific value lives only in its class pack,
and a mistake in the template is a ``file:line`` input error (exit 3).  Issue 26."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from accel_drc import bundled
from accel_drc.errors import InputError
from accel_drc.packs import CLASSES, GENERAL, load_library, load_pack
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from conftest import FIXTURES, ROOT

RULES = ROOT / "rules"
LIB = load_library()

#: a signal type nobody has yet: every field the templates read, nothing else
NEW_SIGNAL = """
  testlink:
    name: Test Link 20G
    data_rate_gbps: 20
    modulation: NRZ
    nyquist_ghz: 10
    max_df: 0.003
    min_foil: RTF
    max_stub_mm: 0.381
    min_fres_ratio: 10
    zdiff_ohm: 90
    zdiff_tol_pct: 10
    recognise:
      net_name: ['testlink']
    source: >-
      [U] a signal type made up for this test
"""


def _rules_copy(tmp_path: Path) -> Path:
    """A private copy of ``rules/`` (the bundled snapshot does not apply to it: full path)."""
    out = tmp_path / "rules"
    shutil.copytree(RULES, out)
    return out


def _add_signal(rules: Path, entry: str = NEW_SIGNAL) -> None:
    """Append ``entry`` to the ``signals:`` map of ``rules/signals.yaml`` (its last section)."""
    path = rules / "signals.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("    "), "signals: is no longer last"
    path.write_text(text.rstrip("\n") + "\n" + entry, encoding="utf-8")


def _by_id(lib, cls: str) -> dict:
    return {r.id: r for r in lib.packs[cls].rules}


def test_a_new_signal_type_is_one_entry_in_signals_yaml(tmp_path) -> None:
    """One entry in signals.yaml and nothing else: every class pack (and the general pack) has
    its rules, with the params its fields say, texts naming it, after every other rule."""
    rules = _rules_copy(tmp_path)
    _add_signal(rules)
    lib = load_library(rules)
    want = {
        "laminate_df": {"max_df": 0.003},
        "foil": {"min_grade": "RTF"},
        "impedance": {"zdiff_ohm": 90, "tol_pct": 10},
        "via_stub": {"max_stub_mm": 0.381, "min_fres_ratio": 10, "require_backdrill": False},
        "crosstalk": {
            "budget_pct": 5,
            "max_gap_h": 4,
            "fastest_rise_ui": 0.125,
            "min_coupled_mm": 1.0,
        },
    }
    for cls in (*CLASSES, GENERAL):
        got = {r.check: r for r in lib.packs[cls].rules if r.signal == "testlink"}
        assert {k: dict(r.params) for k, r in got.items()} == want, cls
        assert all(r.id == f"{cls}.{r.check}.testlink" for r in got.values())
        # the opt-in kinds (skew, return_path, insertion_loss) need the entry to ask for them
        assert not {"skew", "return_path", "insertion_loss"} & set(got)
        # the other rules are today's, in today's order; each new one follows its kind's
        # rules of the other signals (the test signal is the last entry of signals.yaml)
        ids = [r.id for r in lib.packs[cls].rules]
        assert [i for i in ids if not i.endswith(".testlink")] == [
            r.id for r in LIB.packs[cls].rules
        ]
        for kind in got:
            mine = [i for i in ids if i.split(".")[1] == kind]
            assert mine[-1] == f"{cls}.{kind}.testlink", (cls, kind)
    r = _by_id(lib, "edge")["edge.via_stub.testlink"]
    assert "0.3 / 20 in = 0.381 mm for Test Link 20G." in r.why
    assert "AI Inference (Edge) column: no" in r.source  # the class's backdrill row
    imp = _by_id(lib, "edge")["edge.impedance.testlink"]
    assert (imp.severity.value, imp.source) == ("error", "[U] a signal type made up for this test")


def test_the_new_signal_type_judges_a_board(tmp_path) -> None:
    """The generated rules run: the NVLink fixture's pair declared as the new type fails the new
    type's stated Df (FR-4 0.02 > 0.003) under its own rule id."""
    rules = _rules_copy(tmp_path)
    _add_signal(rules)
    lib = load_library(rules)
    board = read_board(str(FIXTURES / "checks" / "laminate_df" / "nvlink4_20mm.kicad_pcb"))
    res = check_board(
        board, {"signals": {"testlink": ["/NVLINK4_TX0_[PN]"]}}, board_class="edge", library=lib
    )
    got = [(f.rule, f.status.value, f.net) for f in res.findings if f.check == "laminate_df"]
    assert got == [("edge.laminate_df.testlink", "violation", "/NVLINK4_TX0")], res.findings
    ran = {run.rule.id for run in res.rules}
    assert {"edge.impedance.testlink", "edge.via_stub.testlink"} <= ran


def test_a_signal_entry_turns_its_rules_on_and_off(tmp_path) -> None:
    """``rules:`` in an entry: ``false`` drops a kind, ``true`` adds an opt-in kind, a mapping
    overrides; its own words are not templates (a literal brace stays)."""
    rules = _rules_copy(tmp_path)
    _add_signal(
        rules,
        NEW_SIGNAL
        + "    single_ended: true\n"
        + "    rules:\n"
        + "      crosstalk: false\n"
        + "      return_path: true\n"
        + "      impedance: {severity: warning, why_more: 'Ours {not a field}.'}\n",
    )
    lib = load_library(rules)
    got = {r.check: r for r in lib.packs["training"].rules if r.signal == "testlink"}
    assert "crosstalk" not in got
    assert got["return_path"].params["single_ended"] is True
    assert got["impedance"].severity.value == "warning"
    assert got["impedance"].why.endswith("every transition. Ours {not a field}.")


def test_class_specific_values_live_only_in_the_class_pack() -> None:
    """Backdrill is the one per-signal value that differs by class: it is a fact of the class
    packs' signal_rules: sections, nowhere in signals.yaml or the template, and the expansion
    gives it to those classes' rules only."""
    needs = {}
    for cls in CLASSES:
        data = yaml.safe_load((RULES / "classes" / f"{cls}.yaml").read_text(encoding="utf-8"))
        assert not any("signal" in r for r in data["rules"]), "per-signal rules are generated"
        sec = data["signal_rules"]["via_stub"]
        own = (sec.get("signals") or {}).items()
        needs[cls] = {s for s, v in own if v["params"]["require_backdrill"]}
        got = {r.signal for r in LIB.packs[cls].rules if r.params.get("require_backdrill")}
        assert got == needs[cls], cls
    assert needs["edge"] == set()
    assert needs["training"] == needs["inference"] == {"nvlink4", "nvlink5", "pcie5", "pcie6"}
    text = (RULES / "signals.yaml").read_text(encoding="utf-8")
    assert "require_backdrill" not in text and "Backdrilling required row" not in text
    template = (RULES / "signal_rules.yaml").read_text(encoding="utf-8")
    assert "Backdrilling required row" not in template
    assert yaml.safe_load(template)["checks"]["via_stub"]["params"]["require_backdrill"] is False
    # the rule every class shares is in the general pack; the backdrilled one is not
    general = _by_id(LIB, GENERAL)
    assert "general.via_stub.pcie4" in general and "general.via_stub.pcie5" not in general


BAD_TEMPLATES = [
    # an unknown field in a template: the line of the template's text
    ("{name} ({data_rate_gbps} Gb/s", "{name} ({data_rate_gbs} Gb/s", "{data_rate_gbs}"),
    # a format spec the value cannot take
    ("0.3 / {baud_gbd:g} in", "0.3 / {baud_gbd:q} in", "{baud_gbd:q}"),
    # a width that would build a gigabyte string per rule (hostile.TEMPLATE_FORMAT_SPEC)
    ("{max_stub_mm:.3f} mm for {name}", "{max_stub_mm:>999999999} mm for {name}", "999999999"),
    # a block name the schema refuses
    ("    block: loss\n", "    block: Loss\n", "Loss"),
    # a check kind no module declares
    ("  laminate_df:\n    block: links", "  laminate_dk:\n    block: links", "laminate_dk"),
    # a key the schema does not know
    ("    needs: [max_df]\n", "    needs: [max_df]\n    colour: red\n", "colour"),
]


@pytest.mark.parametrize(("old", "new", "words"), BAD_TEMPLATES, ids=lambda x: str(x)[:24])
def test_a_malformed_template_is_a_file_line_error(tmp_path, old, new, words) -> None:
    rules = _rules_copy(tmp_path)
    path = rules / "signal_rules.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputError) as ei:
        load_library(rules)
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if words in ln)
    assert str(ei.value).startswith(f"{path}:"), str(ei.value)
    assert ei.value.line is not None and abs(ei.value.line - line) <= 8, (str(ei.value), line)
    assert words.strip("{}").split(":")[0] in str(ei.value)


def test_a_bad_value_in_a_signal_entry_names_signals_yaml(tmp_path) -> None:
    """A generated rule's params are validated against its kind: a bad field is an error at
    the signal's line in signals.yaml."""
    rules = _rules_copy(tmp_path)
    _add_signal(rules, NEW_SIGNAL + "    rules:\n      impedance: {params: {tol_pct: -5}}\n")
    with pytest.raises(InputError) as ei:
        load_library(rules)
    assert str(ei.value).startswith(str(rules / "signals.yaml") + ":"), str(ei.value)
    assert "tol_pct" in str(ei.value)


def test_a_malformed_template_exits_3_from_the_cli(tmp_path) -> None:
    """The CLI's answer to a broken template: one ``file:line`` line and exit 3, no traceback."""
    rules = _rules_copy(tmp_path)
    path = rules / "signal_rules.yaml"
    path.write_text(path.read_text().replace("/ {baud_gbd:g} in", "/ {baud_gbd:q} in", 1))
    board = FIXTURES / "checks" / "laminate_df" / "nvlink4_20mm.kicad_pcb"
    code = (
        "import sys; from pathlib import Path; import accel_drc.packs as p; "
        f"p.RULES_DIR = Path({str(rules)!r}); from accel_drc import cli; "
        f"sys.exit(cli.main(['check', {str(board)!r}, '--quiet']))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert f"{path}:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_user_pack_of_explicit_per_signal_rules_still_loads(tmp_path) -> None:
    """A project's pack writes its per-signal rules out, as before; the generated blocks are
    for the class packs beside signal_rules.yaml, and asking for one there is a clear error."""
    body = """\
        pack: ours
        version: "1"
        rules:
          - check: via_stub
            signal: pcie5
            severity: error
            params: {max_stub_mm: 0.2, min_fres_ratio: 10, require_backdrill: true}
            why: our fab's backdrill leaves 0.2 mm at most
            source: fab report 2026-10
        """
    p = tmp_path / "ours.yaml"
    p.write_text(textwrap.dedent(body))
    [r] = load_pack(p, LIB.signals, LIB.foils).rules
    assert (r.id, r.params["max_stub_mm"]) == ("ours.via_stub.pcie5", 0.2)
    p.write_text(textwrap.dedent(body) + "  - signal_rules: links\n")
    with pytest.raises(InputError) as ei:
        load_pack(p, LIB.signals, LIB.foils)
    assert str(ei.value).startswith(f"{p}:") and "write this pack's rules out" in str(ei.value)


def test_the_snapshot_holds_the_template() -> None:
    """signal_rules.yaml is validated into the snapshot like every other rule file (a clean run
    reads it without parsing YAML)."""
    assert "signal_rules.yaml" in bundled.VALIDATED
    from accel_drc.yamlsafe import load_yaml

    assert load_yaml(RULES / "signal_rules.yaml").trusted


def test_the_snapshot_packs_are_the_expanded_packs() -> None:
    """The snapshot stores each class pack with its generated rules written out (a clean run
    expands nothing): those rules are the ones the full path expands from the YAML, field for
    field and in order."""

    def rows(lib) -> dict:
        return {
            name: [
                (r.id, r.check, r.signal, r.severity, dict(r.params), r.why, r.source, r.pack)
                for r in pack.rules
            ]
            for name, pack in lib.packs.items()
        }

    from accel_drc.yamlsafe import load_yaml

    assert load_yaml(RULES / "classes" / "edge.yaml").trusted
    with bundled.disabled():
        full = load_library()
    assert rows(LIB) == rows(full)


def test_every_via_stub_why_reads_as_sentences() -> None:
    """Every via_stub rule's why ends its limit sentence before "That length" (seven signals'
    own copies of the template once left the full stop out); they now use the template."""
    for pack in LIB.packs.values():
        for r in pack.rules:
            if r.check == "via_stub" and "That length" in r.why:
                assert ". That length" in r.why, r.id


def test_the_template_orders_rules_by_kind_then_signal() -> None:
    """No hand-kept order list: a block lists its kinds' rules kind by kind (template order),
    each over the signals in signals.yaml order."""
    template = yaml.safe_load((RULES / "signal_rules.yaml").read_text(encoding="utf-8"))
    assert "layout" not in template
    order = list(yaml.safe_load((RULES / "signals.yaml").read_text(encoding="utf-8"))["signals"])
    kinds = list(template["checks"])
    rules = [r for r in LIB.packs["inference"].rules if r.signal is not None]
    keys = [
        (template["checks"][r.check]["block"], kinds.index(r.check), order.index(r.signal))
        for r in rules
    ]
    for block in {k[0] for k in keys}:
        mine = [k[1:] for k in keys if k[0] == block]
        assert mine == sorted(mine), block
