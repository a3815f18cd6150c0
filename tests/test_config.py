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
    assert cfg.materials["dielectric 2"]["loss_tangent"] == 0.004
    assert set(cfg.rule_overrides) == {
        "inference.layer_count",
        "*.impedance.pcie5",
        "*.via_stub.ddr5",
    }
    [w] = cfg.waivers
    assert w["expires"] == "2027-06-30" and w["owner"] == "jane@example.com"
    assert cfg.data["backdrill"][0]["must_not_cut"] == "In3.Cu"
    assert cfg.data["rails"][0]["vrm"]["l_h"] == 2e-10
    assert cfg.data["report"] == {"dir": "accel-drc", "marker_layer": "Cmts.User"}
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
    ("report: {dir: out, colour: red}\n", 1, "unknown key 'colour' in report"),
    ("class: edge\n  bad: indent\n", 2, "malformed YAML"),
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
              - rule: training.copper_weight
                layer: In1\\.Cu
                reason: In1 is a reference plane only, no rail current
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
    assert [(f.rule, f.layer) for f in waived] == [("training.copper_weight", "In1.Cu")]
    assert [(w["state"], w["matched"]) for w in res.waivers] == [
        ("applied", 1),
        ("expired", 3),
        ("stale", 0),
    ]
    assert all(f.status == Status.CANNOT_VERIFY for f in res.findings if f.rule == "training.tg")
    assert [w["line"] for w in res.waivers] == [14, 19, 22]  # the config has 12 lines before
    assert Path(res.board_file).name == board.name
