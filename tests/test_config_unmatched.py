"""Config entries that match nothing on the board are reported (``config.unmatched``).

Config regexes match the whole name (``re.fullmatch``, documented in config.py and
docs/rules.md).  A user who writes the prefix ``'^PCIE_TX'`` in ``backdrill: match: net:``
otherwise gets no backdrill and no word about it; now the run carries a warning with the config
file:line and the ``.*`` pattern that would have matched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _h2_boards import cu, diel, make_board, stackup
from accel_drc.analysis.signals import SignalAssignment
from accel_drc.analysis.via_stubs import config_backdrills
from accel_drc.config import (
    REGEX_SEMANTICS,
    BackdrillSpec,
    load_config,
    suggest_pattern,
)
from accel_drc.config_audit import unmatched_entries
from accel_drc.errors import InputError
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.results import Severity, Status
from conftest import FIXTURE_BOARDS

LIB = load_library()
NETS = ["GND", "+0V8", "PCIE_TX0_P", "PCIE_TX0_N", "PCIE_RX0_P", "PCIE_RX0_N", "/pwr/VCORE"]
STACK = stackup(
    cu(), diel("d1", "FR4", 4.5, 0.02), cu(), diel("d2", "FR4", 4.5, 0.02), cu(),
    diel("d3", "FR4", 4.5, 0.02), cu(),
)  # fmt: skip


def board(stack=STACK):
    return make_board(4, NETS, [("PCIE_TX0_P", 0, (0, 0), (10, 0))], stack=stack)


def keys(cfg, b=None, net_signal=None):
    out, _ = unmatched_entries(cfg, b or board(), net_signal or {})
    return {u.key: u for u in out}


def write(tmp_path, text):
    p = tmp_path / "accel-drc.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(str(p), None, LIB)


def test_suggestion_for_prefix_and_substring_patterns():
    names = ["PCIE_TX0_P", "PCIE_TX0_N", "/top/PCIE_TX1_P", "GND"]
    assert suggest_pattern("^PCIE_TX", names) == ("PCIE_TX.*", 2)
    assert suggest_pattern("PCIE_TX", names) == ("PCIE_TX.*", 2)
    assert suggest_pattern("TX1", names) == (".*TX1.*", 1)
    assert suggest_pattern("pcie_tx0", names) == ("(?i)pcie_tx0.*", 2)
    assert suggest_pattern("A|B", ["AB"]) == ("(?:A|B).*", 1)
    assert suggest_pattern("DDR", names) == (None, 0)


def test_signals_pattern_that_matches_nothing():
    got = keys({"signals": {"pcie5": ["^PCIE_TX", "PCIE_RX.*"], "ddr5": ["DDR_.*"]}})
    assert set(got) == {"signals.pcie5[0]", "signals.ddr5[0]"}  # PCIE_RX.* matches 2 nets
    u = got["signals.pcie5[0]"]
    assert (u.suggestion, u.would_match) == ("PCIE_TX.*", 2)
    assert REGEX_SEMANTICS in u.message and "'PCIE_TX.*' would match 2" in u.message
    assert got["signals.ddr5[0]"].suggestion is None


def test_signals_pattern_shadowed_by_another_type():
    cfg = {"signals": {"pcie4": ["PCIE_.*"], "pcie5": ["PCIE_TX.*"], "usb3": ["PCIE_RX0_P"]}}
    got = keys(cfg)
    assert set(got) == {"signals.pcie5[0]", "signals.usb3[0]"}
    assert "declared earlier as pcie4" in got["signals.pcie5[0]"].message
    # a redundant pattern of the same type changes nothing wrong: not reported
    assert keys({"signals": {"pcie5": ["PCIE_.*", "PCIE_TX.*"]}}) == {}


def test_backdrill_prefix_regex_is_reported_and_whole_name_works():
    spec = {"match": {"net": "^PCIE_TX"}, "side": "bottom", "residual_stub_mm": 0.2}
    b = board()
    # the consumer really applies no backdrill with the prefix pattern ...
    assert config_backdrills(b, [BackdrillSpec.of(spec)])[0] == {}
    got = keys({"backdrill": [spec]}, b)
    u = got["backdrill[0].match.net"]
    assert (u.suggestion, u.would_match) == ("PCIE_TX.*", 2)
    assert "no backdrill is applied" in u.message
    # ... and with the suggested one it drills both nets, and nothing is reported
    fixed = {**spec, "match": {"net": u.suggestion}}
    assert sorted(config_backdrills(b, [BackdrillSpec.of(fixed)])[0]) == [3, 4]
    assert keys({"backdrill": [fixed]}, b) == {}


def test_backdrill_signal_class_conjunction_and_shadowing():
    b = board()
    ns = {3: SignalAssignment("pcie5", "net_name"), 4: SignalAssignment("pcie5", "net_name")}
    got = keys({"backdrill": [{"match": {"signal": "nvlink4"}, "side": "bottom"}]}, b, ns)
    assert "matches no signal type carried" in got["backdrill[0].match.signal"].message
    assert keys({"backdrill": [{"match": {"signal": "pcie5"}, "side": "bottom"}]}, b, ns) == {}
    both = {"match": {"signal": "pcie5", "net": "PCIE_RX.*"}, "side": "bottom"}
    got = keys({"backdrill": [both]}, b, ns)
    assert list(got) == ["backdrill[0].match.signal"]
    assert "no net matches them all" in got["backdrill[0].match.signal"].message
    first = {"match": {"net": "PCIE_.*"}, "side": "bottom"}
    second = {"match": {"net": "PCIE_TX.*"}, "side": "top"}
    got = keys({"backdrill": [first, second]}, b, ns)
    assert list(got) == ["backdrill[1].match.net"]
    assert "taken by an earlier backdrill entry" in got["backdrill[1].match.net"].message


def test_rails_patterns_on_name_and_last_path_part():
    cfg = {"rails": [{"name": "core", "nets": ["VCORE", "/pwr/VCORE", "VDD_CORE", "0V8"]}]}
    got = keys(cfg)
    assert set(got) == {"rails[0].nets[2]", "rails[0].nets[3]"}  # VCORE matches the leaf
    assert "(rail core)" in got["rails[0].nets[2]"].message
    assert (got["rails[0].nets[3]"].suggestion, got["rails[0].nets[3]"].would_match) == (
        ".*0V8.*",
        1,
    )


def test_stackup_materials_on_a_board_without_stackup():
    cfg = {"stackup": {"materials": {"d1": {"tg_c": 180}}}}
    got = keys(cfg, make_board(4, NETS))
    assert "the board has no stack-up" in got["stackup.materials.d1"].message
    assert keys(cfg, board()) == {}  # d1 exists: applies


def test_findings_carry_the_config_file_line(tmp_path):
    cfg = write(
        tmp_path,
        """\
        class: edge
        signals:
          pcie5: ['PCIE_.*']
        backdrill:
          - match: {net: '^PCIE_TX'}
            side: bottom
            residual_stub_mm: 0.15
        """,
    )
    res = check_board(board(), cfg)
    [f] = [f for f in res.findings if f.rule == "config.unmatched"]
    assert (f.check, f.severity, f.status) == ("config", Severity.WARNING, Status.VIOLATION)
    assert f.evidence["config"] == f"{cfg.path}:5" and f.evidence["line"] == 5
    assert f.evidence["key"] == "backdrill[0].match.net" and f.evidence["suggestion"] == "PCIE_TX.*"
    assert f.message.startswith("accel-drc.yaml:5: backdrill[0].match.net '^PCIE_TX'")
    run = [r for r in res.rules if r.rule.id == "config.unmatched"]
    assert len(run) == 1 and run[0].checked == 2  # one signals pattern, one backdrill entry
    # a warning: it does not fail the run by itself
    assert all(e.rule != "config.unmatched" for e in res.unwaived_errors())


def test_no_config_no_rule():
    res = check_board(board(), {})
    assert not any(r.rule.id == "config.unmatched" for r in res.rules)


def test_bad_regex_error_states_the_semantics(tmp_path):
    with pytest.raises(InputError) as ei:
        write(tmp_path, "backdrill:\n  - match: {net: '(PCIE'}\n    side: bottom\n")
    assert str(ei.value).endswith(f"({REGEX_SEMANTICS})") and ":2:" in str(ei.value)


def test_cli_on_a_real_board_reports_the_prefix_backdrill(tmp_path):
    """The m2-oculink fixture's PCIe lanes are '/PCIe_{x4}.TX0+' ... : '^/PCIe_\\{x4\\}\\.TX'
    as written by a user who expects a search matches none of them."""
    pcb = FIXTURE_BOARDS["m2-oculink-adapter"]
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "backdrill:\n"
        "  - match: {net: '^/PCIe_\\{x4\\}\\.TX'}\n"
        "    side: bottom\n"
        "    residual_stub_mm: 0.2\n"
    )
    out, sarif, junit = (tmp_path / n for n in ("r.json", "r.sarif", "r.xml"))
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", str(pcb), "--config", str(cfg)]
        + ["--json", str(out), "--sarif", str(sarif), "--junit", str(junit)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr  # warnings only
    doc = json.loads(Path(out).read_text(encoding="utf-8"))
    [f] = [f for f in doc["findings"] if f["rule"] == "config.unmatched"]
    assert f["severity"] == "warning" and f["status"] == "violation"
    assert f["evidence"]["config"] == f"{cfg}:2"
    assert f["evidence"]["suggestion"] == "/PCIe_\\{x4\\}\\.TX.*"
    b = read_board(str(pcb))
    tx = [n for n in b.nets if n.startswith("/PCIe_{x4}.TX")]
    assert f["evidence"]["would_match"] == len(tx) == 8
    assert any(rr["id"] == "config.unmatched" for rr in doc["rules"])
    run = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]
    assert "config.unmatched" in {d["id"] for d in run["tool"]["driver"]["rules"]}
    [res] = [x for x in run["results"] if x["ruleId"] == "config.unmatched"]
    assert res["level"] == "warning"
    assert 'name="config.unmatched"' in junit.read_text(encoding="utf-8")
    assert "config.unmatched" in r.stdout  # the summary shows it


def test_assumed_type_declare_hint_is_a_pattern_that_matches(tmp_path):
    """The line we tell the user to add must itself match: '+', '.', '{' are escaped."""
    import re

    from accel_drc.model import NetClassRules

    name = "/PCIe_{x4}.TX0+"
    b = make_board(
        4,
        ["GND", name],
        [(name, 0, (0, 0), (10, 0))],
        stack=STACK,
        net_classes=NetClassRules(patterns=((name, "85Ohm-diff_PCIE"),)),
    )
    res = check_board(b, {}, board_class="edge")
    [f] = [f for f in res.findings if f.rule.startswith("signals.assumed_type")]
    pat = re.search(r"\['(.*)'\]", f.evidence["declare"]).group(1)
    assert re.fullmatch(pat, name)
    assert keys({"signals": {"pcie5": [pat]}}, b) == {}
    # the unescaped name, as the hint used to say, matches nothing and is now reported
    assert "signals.pcie5[0]" in keys({"signals": {"pcie5": [name]}}, b)


def test_stale_waiver_says_which_regex_matched_nothing():
    import datetime as dt

    from accel_drc.results import Finding
    from accel_drc.waivers import apply_waivers

    def f(rule, net, layer):
        return Finding(rule, rule.split(".")[1], Severity.ERROR, Status.VIOLATION, "m", net=net,
                       layer=layer)  # fmt: skip

    fs = [f("training.laminate_df.nvlink4", "/NVL_TX0", "F.Cu")]
    ws = [
        {"rule": "training.laminate_df.*", "net": "^/NVL", "reason": "prefix written as search"},
        {"rule": "training.foil.*", "reason": "no foil finding in this run"},
        {"rule": "training.laminate_df.*", "layer": "In9.Cu", "reason": "no such layer"},
        {"rule": "training.laminate_df.*", "net": "/NVL.*", "reason": "right"},
    ]
    _, rows = apply_waivers(fs, ws, today=dt.date(2026, 11, 22))
    assert [r["state"] for r in rows] == ["stale", "stale", "stale", "applied"]
    assert rows[0]["hint"] == (
        f"net '^/NVL' matches no net of the training.laminate_df.* findings; {REGEX_SEMANTICS}: "
        "'/NVL.*' would match 1"
    )
    assert rows[1]["hint"] == "rule 'training.foil.*' matches no finding of this run"
    assert (
        rows[2]["hint"].startswith("layer 'In9.Cu' matches no layer")
        and "would" not in rows[2]["hint"]
    )
    assert "hint" not in rows[3]


def test_capacitor_override_for_a_missing_reference():
    from accel_drc.model import Footprint

    fp = Footprint("C12", "100n", "Capacitor_SMD:C_0402_1005Metric", "F.Cu", 1.0, 1.0)
    b = make_board(4, NETS, stack=STACK, footprints=[fp])
    cfg = {"capacitors": {"parts": {"C12": {"esl_h": 3e-10}, "C99": {"esl_h": 3e-10}}}}
    got = keys(cfg, b)
    assert list(got) == ["capacitors.parts.C99"]
    assert "no footprint reference" in got["capacitors.parts.C99"].message
