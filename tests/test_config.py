"""accel-drc.yaml: the example loads; every mistake is file:line: what is wrong."""

from __future__ import annotations

import datetime as dt
import shutil
import textwrap
from pathlib import Path

import pytest
from accel_drc.config import check_layers, load_config
from accel_drc.errors import InputError
from accel_drc.packs import load_library
from accel_drc.results import Finding, Severity, Status
from accel_drc.waivers import apply_waivers
from conftest import FIXTURE_BOARDS, FIXTURES

LIB = load_library()
EXAMPLE = FIXTURES / "configs" / "example-accel-drc.yaml"


def test_example_config_loads_every_key():
    cfg = load_config(str(EXAMPLE), None, LIB)
    assert cfg.board_class == "inference"
    assert set(cfg.signals) == {"pcie5", "ddr5"}
    assert cfg.signals["pcie5"][0].fullmatch("/PCIe_x4.TX0+")
    assert cfg.foil == {"default": "VLP", "In3.Cu": "HVLP"}
    assert cfg.materials["dielectric 2"].loss_tangent == 0.004
    assert set(cfg.rule_overrides) == {
        "inference.layer_count",
        "*.impedance.pcie5",
        "*.via_stub.ddr5",
    }
    assert set(cfg.rules) == set(cfg.rule_overrides)
    [w] = cfg.waivers
    assert w.expires == "2027-06-30" and w.owner == "jane@example.com"
    assert cfg.backdrill[0].must_not_cut == "In3.Cu"
    assert cfg.rails[0].vrm is not None and cfg.rails[0].vrm.l_h == 2e-10
    assert (cfg.report.dir, cfg.report.marker_layer) == ("accel-drc", "Cmts.User")
    assert cfg.line_of("waivers", 0) == 22


def test_found_beside_the_board_and_empty_without(tmp_path):
    board = tmp_path / "b.kicad_pcb"
    board.write_text("(kicad_pcb)")
    assert load_config(None, str(board), LIB).data == {}
    (tmp_path / "accel-drc.yaml").write_text("class: edge\n")
    cfg = load_config(None, str(board), LIB)
    assert cfg.board_class == "edge" and cfg.path == str(tmp_path / "accel-drc.yaml")
    with pytest.raises(InputError, match="config file not found"):
        load_config(str(tmp_path / "nope.yaml"), None, LIB)


BAD = [
    ("class: edge\nsignal:\n  pcie4: ['x']\n", 2, "unknown key 'signal' in top level"),
    ("class: datacenter\n", 1, "class: 'datacenter' is not one of training, inference, edge"),
    ("signals:\n  pcie4: ['ok']\n  pcie7: ['x']\n", 3, "unknown signal type 'pcie7'"),
    (
        "signals:\n  pcie4:\n    - 'ok'\n    - '(unclosed'\n",
        4,
        "bad regular expression '(unclosed'",
    ),
    ("stackup:\n  foil:\n    In1.Cu: SUPERFLAT\n", 3, "unknown foil grade 'SUPERFLAT'"),
    ("stackup:\n  foils: {}\n", 2, "unknown key 'foils' in stackup"),
    ("waivers:\n  - rule: '*'\n    owner: me\n", 2, "'reason' is a required property"),
    (
        "waivers:\n  - rule: '*'\n    reason: ok then\n    net: '[bad'\n",
        4,
        "bad regular expression",
    ),
    (
        "waivers:\n  - rule: '*'\n    reason: ok then\n    expires: 31/12/2026\n",
        4,
        "does not match",
    ),
    (
        "rules:\n  edge.layer_cnt: {severity: warning}\n",
        2,
        "rule override 'edge.layer_cnt' matches no rule",
    ),
    ("rules:\n  edge.layer_count:\n    params: {min: two}\n", 3, "min"),
    (
        "rules:\n  edge.layer_count: {severity: fatal}\n",
        2,
        "'fatal' is not one of error, warning, info",
    ),
    ("rules:\n  packs: [missing.yaml]\n", 2, "rule pack not found: missing.yaml"),
    ("rails:\n  - name: V\n    nets: ['(']\n", 3, "bad regular expression"),
    (
        "backdrill:\n  - match: {signal: pcie9}\n    side: bottom\n",
        2,
        "unknown signal type 'pcie9'",
    ),
    (
        "backdrill:\n  - match: {net: 'x'}\n    side: middle\n",
        3,
        "'middle' is not one of top, bottom",
    ),
    (
        "backdrill:\n  - match: {net: 'x'}\n    side: top\n    except_net: '(x'\n",
        4,
        "bad regular expression",
    ),
    ("report: {dir: out, colour: red}\n", 1, "unknown key 'colour' in report"),
    ("class: edge\n  bad: indent\n", 2, "malformed YAML"),
    # unclosed brackets and quotes: the line of the opener, not where the parser gave up (the
    # end of the file, one line further; issue 16)
    ("class: training\nreport:\n  dir: [accel-drc\n", 3, "column 8, and is never closed"),
    ("class: training\nreport: {dir: x\n\n\n", 2, "flow mapping that starts here"),
    ('class: "training\nreport: {dir: x}\n', 1, "quoted scalar that starts here"),
    ("- just\n- a list\n", 1, "must be a mapping"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD)
def test_config_errors_have_file_and_line(tmp_path, text, line, words):
    p = tmp_path / "accel-drc.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as ei:
        load_config(str(p), None, LIB)
    err = ei.value
    assert words in str(err), str(err)
    assert err.line == line, str(err)
    assert str(err).startswith(f"{p}:{line}: " if line else f"{p}: ")


def test_layer_names_are_checked_against_the_board(tmp_path):
    p = tmp_path / "accel-drc.yaml"
    p.write_text("stackup:\n  foil:\n    default: VLP\n    In7.Cu: HVLP\n")
    cfg = load_config(str(p), None, LIB)
    with pytest.raises(InputError) as ei:
        check_layers(cfg, {"F.Cu", "In1.Cu", "In2.Cu", "B.Cu"})
    assert str(ei.value).startswith(f"{p}:4: no copper layer 'In7.Cu' on this board")


def test_extra_pack_and_override(tmp_path):
    (tmp_path / "ours.yaml").write_text(
        textwrap.dedent(
            """\
            pack: ours
            version: "3"
            applies_to: [edge]
            rules:
              - check: tg
                id: ours.tg_strict
                severity: warning
                params: {min_tg_c: 150}
                why: our customer wants mid-Tg FR-4 at least
                source: customer spec ABC-12
            """
        )
    )
    p = tmp_path / "accel-drc.yaml"
    p.write_text("rules:\n  packs: [ours.yaml]\n  edge.tg: {params: {min_tg_c: 140}}\n")
    cfg = load_config(str(p), None, LIB)
    from accel_drc.packs import rules_for_class

    rules, used = rules_for_class(LIB, "edge", cfg.extra_packs, cfg.rule_overrides, cfg.doc)
    by = {r.id: r for r in rules}
    assert used == ["edge", "ours"]
    assert by["edge.tg"].params == {"min_tg_c": 140} and by["ours.tg_strict"].params == {
        "min_tg_c": 150
    }
    rules_t, used_t = rules_for_class(LIB, "training", cfg.extra_packs, cfg.rule_overrides, cfg.doc)
    assert used_t == ["training"] and "ours.tg_strict" not in {r.id for r in rules_t}


# --- waivers ---------------------------------------------------------------------------------


def _f(rule, net=None, layer=None, items=(), status=Status.VIOLATION):
    return Finding(
        rule=rule,
        check=rule.split(".")[1],
        severity=Severity.ERROR,
        status=status,
        message="m",
        net=net,
        layer=layer,
        items=items,
    )


def test_waivers_matching_expired_and_stale():
    fs = [
        _f("training.laminate_df.nvlink4", "/NVL_TX0", "F.Cu"),
        _f("training.laminate_df.nvlink4", "/NVL_TX0", "In2.Cu"),
        _f("training.foil.nvlink4", None, "B.Cu", status=Status.CANNOT_VERIFY),
        _f("training.tg", None, "dielectric 1"),
        _f("training.copper_weight", "GND", "In1.Cu", items=("abc-1",)),
    ]
    ws = [
        {
            "rule": "training.laminate_df.*",
            "net": "/NVL_.*",
            "layer": "F.Cu",
            "reason": "short breakout",
            "owner": "ann",
            "expires": "2027-01-01",
        },
        {
            "rule": "training.foil.*",
            "layer": "B.Cu",
            "reason": "fab confirms HVLP",
            "expires": "2026-01-01",
        },  # expired
        {"rule": "training.tg", "layer": "dielectric 9", "reason": "no such layer"},  # stale
        {"rule": "copper_weight", "uuid": "abc-.*", "reason": "waived by check kind and uuid"},
    ]
    out, rows = apply_waivers(fs, ws, today=dt.date(2026, 11, 22), lines=[3, 9, 14, 20])
    assert [f.status for f in out] == [
        Status.WAIVED,
        Status.VIOLATION,
        Status.CANNOT_VERIFY,
        Status.VIOLATION,
        Status.WAIVED,
    ]
    assert out[0].waiver == {
        "rule": "training.laminate_df.*",
        "reason": "short breakout",
        "owner": "ann",
        "expires": "2027-01-01",
        "line": 3,
    }
    assert [(r["state"], r["matched"], r["line"]) for r in rows] == [
        ("applied", 1, 3),
        ("expired", 1, 9),
        ("stale", 0, 14),
        ("applied", 1, 20),
    ]
    # the day after expiry the first one stops waiving too
    out2, rows2 = apply_waivers(fs, ws, today=dt.date(2027, 1, 2))
    assert out2[0].status == Status.VIOLATION and rows2[0]["state"] == "expired"


def test_waivers_end_to_end_on_a_real_board(tmp_path):
    board = FIXTURE_BOARDS["m2-oculink-adapter"]
    d = tmp_path / "b"
    d.mkdir()
    for f in board.parent.iterdir():
        shutil.copy(f, d / f.name)
    cfg = d / "accel-drc.yaml"
    cfg.write_text(
        (FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml").read_text()
        + textwrap.dedent(
            """\
            waivers:
              - rule: training.foil.nvlink4
                layer: B\\.Cu
                reason: the fab quotes HVLP on B.Cu, to be written into the stack-up
                owner: hw-team
                expires: 2099-12-31
              - rule: training.tg
                reason: old waiver
                expires: 2020-01-01
              - rule: training.foil.nvlink5
                reason: matches nothing
            """
        )
    )
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    res = check_board(
        read_board(str(d / board.name)), load_config(None, str(d / board.name), LIB), library=LIB
    )
    waived = [f for f in res.findings if f.status == Status.WAIVED]
    assert [(f.rule, f.layer) for f in waived] == [("training.foil.nvlink4", "B.Cu")]
    assert [(w["state"], w["matched"]) for w in res.waivers] == [
        ("applied", 1),
        ("expired", 3),
        ("stale", 0),
    ]
    assert all(f.status == Status.CANNOT_VERIFY for f in res.findings if f.rule == "training.tg")
    assert [w["line"] for w in res.waivers] == [14, 19, 22]  # the config has 12 lines before
    assert Path(res.board_file).name == board.name


# --- hostile or unusual values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("2027-02-30", "cannot read '2027-02-30': day is out of range for month"),
        ("2027-13-01", "cannot read '2027-13-01': month must be in 1..12"),
    ],
)
def test_impossible_expiry_date_is_file_line_not_internal_error(tmp_path, value, words):
    p = tmp_path / "accel-drc.yaml"
    p.write_text(
        f"class: edge\nwaivers:\n  - rule: '*'\n    reason: ok then\n    expires: {value}\n"
    )
    with pytest.raises(InputError) as ei:
        load_config(str(p), None, LIB)
    assert str(ei.value) == f"{p}:5: {words}"


def test_impossible_date_from_the_cli_is_exit_3(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "accel-drc.yaml"
    p.write_text("waivers:\n  - rule: '*'\n    reason: ok then\n    expires: 2027-02-30\n")
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "rules", "--class", "edge", "--config", str(p)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().endswith(
        f"{p}:4: cannot read '2027-02-30': day is out of range for month"
    )


def test_exponent_floats_without_a_dot_are_numbers(tmp_path):
    """`l_h: 1e-9` failed with "'1e-9' is not of type 'number'" (YAML 1.1 wants 1.0e-9)."""
    p = tmp_path / "accel-drc.yaml"
    p.write_text(
        "rails:\n  - name: VCORE\n    nets: [VCORE]\n    transient_a: 3E2\n"
        "    vrm: {r_ohm: 2e-4, l_h: 1e-9}\n"
        "rules:\n  edge.pdn_impedance: {params: {target_ohm: 5e-4}}\n"
    )
    cfg = load_config(str(p), None, LIB)
    [rail] = cfg.data["rails"]
    assert rail["vrm"] == {"r_ohm": 0.0002, "l_h": 1e-9} and rail["transient_a"] == 300.0
    assert cfg.rule_overrides["edge.pdn_impedance"]["params"]["target_ohm"] == 0.0005


# --- overridden limits say where they come from ------------------------------------------------


def test_overridden_limit_is_attributed_to_the_config_not_the_seed(tmp_path):
    from accel_drc.packs import rules_for_class

    p = tmp_path / "accel-drc.yaml"
    p.write_text(
        "class: edge\n"
        "rules:\n"
        "  edge.layer_count: {params: {min: 2}}\n"
        "  edge.tg: {severity: warning}\n"
        "  edge.copper_weight:\n"
        "    params: {min_oz: 2}\n"
        "    source: our fab's plating spec FS-7\n"
    )
    cfg = load_config(str(p), None, LIB)
    rules, _ = rules_for_class(LIB, "edge", cfg.extra_packs, cfg.rule_overrides, cfg.doc)
    by = {r.id: r for r in rules}
    pack = {r.id: r for r in LIB.packs["edge"].rules}
    lc = by["edge.layer_count"]
    assert lc.params == {"min": 2, "max": 8}
    assert lc.source == f"accel-drc.yaml:3 (overrides {pack['edge.layer_count'].source})"
    assert lc.why.startswith("Limit set by the project (accel-drc.yaml:3: min=2), not by the pack.")
    assert lc.why.endswith(pack["edge.layer_count"].why)
    # severity only: the limit is still the pack's, and so are why and source
    assert (by["edge.tg"].why, by["edge.tg"].source) == (
        pack["edge.tg"].why,
        pack["edge.tg"].source,
    )
    assert by["edge.tg"].severity == Severity.WARNING
    # an override with its own source keeps it
    assert by["edge.copper_weight"].source == "our fab's plating spec FS-7"
    assert "accel-drc.yaml:5" in by["edge.copper_weight"].why


def test_rules_command_shows_the_override_source(tmp_path, capsys):
    from types import SimpleNamespace

    from accel_drc.cli import run_rules

    p = tmp_path / "accel-drc.yaml"
    p.write_text("rules:\n  edge.layer_count: {params: {min: 2}}\n")
    assert run_rules(SimpleNamespace(board_class="edge", config=str(p), json=False)) == 0
    out = capsys.readouterr().out
    assert "source: accel-drc.yaml:2 (overrides [nextpcb2026] PCB Design Parameter" in out


# --- sub-rule ids: findings carry rule.sub, reports list rule --------------------------------


def test_waiver_on_a_rule_id_covers_its_sub_rule_findings():
    fs = [
        _f("edge.material_consistency.kicad_default", layer="dielectric 1"),
        _f("edge.material_consistency", layer="dielectric 2"),
        _f("edge.material_consistency_x", layer="dielectric 3"),  # another rule: not a sub-id
        _f("edge.tg", layer="dielectric 1"),
    ]
    ws = [
        {"rule": "edge.material_consistency", "reason": "stack-up comes from the fab"},
        {"rule": "signals.assumed_type", "reason": "generation unknown, fine"},
    ]
    out, rows = apply_waivers(fs, ws, today=dt.date(2026, 11, 22))
    assert [f.status for f in out] == [
        Status.WAIVED,
        Status.WAIVED,
        Status.VIOLATION,
        Status.VIOLATION,
    ]
    assert [(r["state"], r["matched"]) for r in rows] == [("applied", 2), ("stale", 0)]
    assert rows[1]["hint"] == "rule 'signals.assumed_type' matches no finding of this run"
    # the assumed-type pseudo-rule's findings are sub-ids too
    a = _f("signals.assumed_type.pcie4")
    out2, rows2 = apply_waivers([a], ws[1:], today=dt.date(2026, 11, 22))
    assert out2[0].status == Status.WAIVED and rows2[0]["state"] == "applied"


def test_override_accepts_a_finding_sub_id(tmp_path):
    from accel_drc.packs import override_matches, rules_for_class

    p = tmp_path / "accel-drc.yaml"
    p.write_text("rules:\n  edge.material_consistency.kicad_default: {severity: info}\n")
    cfg = load_config(str(p), None, LIB)  # was: exit 3 "matches no rule"
    rules, _ = rules_for_class(LIB, "edge", cfg.extra_packs, cfg.rule_overrides, cfg.doc)
    by = {r.id: r for r in rules}
    assert by["edge.material_consistency"].severity == Severity.INFO
    assert by["edge.layer_count"].severity == Severity.ERROR
    assert override_matches("edge.tg", "edge.tg") and override_matches("edge.tg", "*.tg")
    assert override_matches("edge.tg", "edge.tg.sub")
    assert not override_matches("edge.tg", "edge.tg.a.b")  # one sub-word only
    assert not override_matches("edge.tg", "edge.tgx")
