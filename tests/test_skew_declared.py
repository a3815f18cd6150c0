"""``skew`` by the designer's own limits: ``.kicad_dru`` skew and length constraints (KiCad's
time domain, ps; or mm) and the delays of a KiCad 10 tuning profile
(fixtures/checks/skew/declared/EXPECTED.md lists the cases)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis.delay import net_delays, ps_per_mm
from accel_drc.basis import settle
from accel_drc.checks import CheckContext
from accel_drc.checks.skew import check_skew
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

SKEW = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "skew"
HERE = SKEW / "declared"
P_MINUS_N = 5.0  # P's pad-to-die delay, the whole skew of die_delay.kicad_pcb
V = ps_per_mm(3.6)  # In1.Cu: a stripline in one εr 3.6 dielectric


def _board(tmp_path: Path, dru: str | None, board: str = "die_delay.kicad_pcb") -> Path:
    """The case's board with board.kicad_pro and ``dru`` beside it, as KiCad keeps them."""
    out = tmp_path / "b.kicad_pcb"
    shutil.copy(SKEW / board, out)
    shutil.copy(HERE / "board.kicad_pro", tmp_path / "b.kicad_pro")
    if dru:
        shutil.copy(HERE / f"{dru}.kicad_dru", tmp_path / "b.kicad_dru")
    return out


def _run(path: Path, **params: object) -> list:
    board = read_board(str(path))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    rule = Rule(id="t.skew.pcie4", check="skew", severity=Severity.ERROR, params=dict(params),
                why="w", source="s", signal="pcie4")  # fmt: skip
    return [settle(f) for f in check_skew(ctx, rule).findings]


def test_published_limit_without_a_declared_one(tmp_path: Path) -> None:
    (f,) = _run(_board(tmp_path, None), max_intra_pair_mm=0.127)
    assert f.status is Status.VIOLATION and f.limit == pytest.approx(round(0.127 * V, 3))
    assert f.evidence["basis"]["limit"] == "library"


def test_declared_looser_limit_is_used_and_warned(tmp_path: Path) -> None:
    got = _run(_board(tmp_path, "intra_loose"), max_intra_pair_mm=0.127)
    (w,) = got  # no skew violation at 6 ps; one warning that 6 ps is looser than 0.8 ps
    assert w.rule == "t.skew.pcie4.declared_limit" and w.severity is Severity.WARNING
    assert w.measured == 6.0 and w.limit == pytest.approx(round(0.127 * V, 3))
    assert '.kicad_dru rule "pcie_pair_skew" (line 4)' in w.message and "looser" in w.message
    assert w.evidence["exceed_published"] == ["/PCIE4_TX0"]


def test_declared_tighter_limit_fails_the_pair_and_the_last_rule_wins(tmp_path: Path) -> None:
    (f,) = _run(_board(tmp_path, "intra_tight"), max_intra_pair_ps=10)
    assert f.status is Status.VIOLATION and f.limit == 4.0 and f.measured == P_MINUS_N
    assert f.evidence["basis"]["limit"] == "declared"
    assert '"pcie_pair_skew" (line 7)' in f.message


def test_declared_length_domain_skew_is_converted_at_the_pair_velocity(tmp_path: Path) -> None:
    (f,) = _run(_board(tmp_path, "intra_mm"), max_intra_pair_ps=10)
    assert f.limit == pytest.approx(round(0.5 * V, 3)) and f.status is Status.VIOLATION


def test_conditions_not_read_and_group_rules_are_no_pair_limit(tmp_path: Path) -> None:
    assert _run(_board(tmp_path, "unread"), max_intra_pair_ps=10) == []
    board = read_board(str(_board(tmp_path, "unread")))
    assert [r.name for r in board.net_classes.timing_rules] == ["pcie_group"]


def test_declared_delay_budget_in_ps(tmp_path: Path) -> None:
    got = _run(_board(tmp_path, "length_ps"), max_intra_pair_ps=10)
    (f,) = got
    assert f.rule == "t.skew.pcie4.declared_length" and f.net == "/PCIE4_TX0_P"
    assert f.limit == pytest.approx(255.0) and f.measured == pytest.approx(
        round(40 * V + P_MINUS_N, 3)
    )


def test_tuning_profile_delays_are_read_in_ps_per_mm(tmp_path: Path) -> None:
    board = read_board(str(_board(tmp_path, None)))
    tp = board.net_classes.tuning_profile_of("/PCIE4_TX0_P")
    assert tp is not None and tp.time_domain
    assert tp.delay_on("In1.Cu") == 7.0 and tp.via_ps_per_mm == 6.5
    # the declared stack-up's field solve stands where it is declared
    n = board.nets.index("/PCIE4_TX0_N")
    assert net_delays(Analysis(board), [n])[n].total_ps == pytest.approx(40 * V)


def test_tuning_profile_times_a_default_stackup(tmp_path: Path) -> None:
    """KiCad's untouched stack-up (εr 4.5 assumed) makes a skew *cannot verify*; the designer's
    tuning profile declares 7.0 ps/mm on In1.Cu, so the delay rests on a declaration."""
    path = _board(tmp_path, None)
    text = path.read_text().replace("Test 3.6", "FR4")
    text = text.replace(
        "(epsilon_r 3.6) (loss_tangent 0.005)", "(epsilon_r 4.5) (loss_tangent 0.02)"
    )
    path.write_text(text)
    board = read_board(str(path))
    n = board.nets.index("/PCIE4_TX0_N")
    d = net_delays(Analysis(board), [n])[n]
    assert d.basis == "declared" and d.total_ps == pytest.approx(280.0)
    assert "tuning profile PCIe_85" in d.velocity[1].source
    (f,) = _run(path, max_intra_pair_ps=4.0)
    assert f.status is Status.VIOLATION and "heights" not in f.evidence["basis"]
    # without the profile the same board is cannot verify
    (tmp_path / "b.kicad_pro").unlink()
    (g,) = _run(path, max_intra_pair_ps=4.0)
    assert g.status is Status.CANNOT_VERIFY


def test_declared_ddr_group_limit(tmp_path: Path) -> None:
    """DQ3 is 1 mm (6.33 ps) longer than its DQS: over DDR4's published 3.5 ps, inside the
    designer's 10 ps group rule that selects the byte lane and its strobe."""
    path = _board(tmp_path, "ddr_group", board="ddr4_byte_lane_die.kicad_pcb")
    board = read_board(str(path))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.ERROR, why="w", source="s",
                signal="ddr4", params={"group": "ddr", "max_group_ps": 3.5})  # fmt: skip
    (w,) = [settle(f) for f in check_skew(ctx, rule).findings]
    assert w.rule == "t.skew.declared_limit" and w.severity is Severity.WARNING
    assert w.measured == 10.0 and w.limit == 3.5 and len(w.evidence["pairs"]) == 9
    assert w.evidence["exceed_published"] == ["/DDR4_DQ3"]
    # without the rule: DQ3 fails the published 3.5 ps
    (tmp_path / "b.kicad_dru").unlink()
    board = read_board(str(path))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    (f,) = [settle(f) for f in check_skew(ctx, rule).findings]
    assert f.net == "/DDR4_DQ3" and f.evidence["basis"]["limit"] == "library"


def test_kicad10_reads_the_same_time_domain_rule_on_the_same_nets(tmp_path: Path) -> None:
    """KiCad 10.0.7's own DRC on the length_ps case: it takes the rule in the time domain
    (its report states the limit in ps: ``255000fs`` and ``100ps`` read as KiCad reads them) and
    applies it to the nets our reader selects.  (kicad-cli 10.0.7 times every item of this
    board at 0 ps, the profile's delays unused, so its verdict is not compared: only what the
    rule is and whom it selects.)"""
    import json

    import kicad10
    from conftest import need

    ok, why = kicad10.available()
    need(ok, why)
    board = read_board(str(_board(tmp_path, "length_ps")))
    (rule,) = board.net_classes.timing_rules
    assert (rule.kind, rule.min, rule.max, rule.time) == ("length", 100.0, 255.0, True)
    src = kicad10.inside(tmp_path / "b.kicad_pcb")
    out = src.rsplit("/", 1)[0] + "/drc.json"
    proc = kicad10.run(["/usr/bin/kicad-cli", "pcb", "drc", "--format", "json", "--severity-all",
                        "-o", out, src], timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(kicad10.outside(out).read_text())
    got = [v for v in doc["violations"] if v["type"] == "length_out_of_range"]
    assert got and all("rule 'pcie_delay'" in v["description"] for v in got)
    assert all(" ps" in v["description"] for v in got)  # the time domain, as we read it
    named = {n for v in got for i in v["items"] for n in ("/PCIE4_TX0_P", "/PCIE4_TX0_N")
             if f"[{n}]" in i["description"]}  # fmt: skip
    assert named == {"/PCIE4_TX0_P", "/PCIE4_TX0_N"}


def test_a_tuning_profile_delay_no_line_travels_at_is_not_used(tmp_path: Path) -> None:
    """``delay`` 1e15 as/mm (1e9 ps/mm) or 1 as/mm (faster than light) is no velocity: the
    profile declares none on that layer (hostile.TUNING_DELAY_PS_PER_MM)."""
    import json

    path = _board(tmp_path, None)
    for bad in (1e15, 1, -7000000, "x"):
        pro = json.loads((HERE / "board.kicad_pro").read_text())
        entry = pro["tuning_profiles"]["tuning_profiles_impedance_geometric"][0]
        entry["layer_entries"][0]["delay"] = bad
        entry["via_prop_delay"] = bad
        (tmp_path / "b.kicad_pro").write_text(json.dumps(pro))
        tp = read_board(str(path)).net_classes.tuning_profile_of("/PCIE4_TX0_P")
        assert tp is not None and tp.delay_on("In1.Cu") is None and tp.via_ps_per_mm is None


def test_timing_rules_kicad_would_refuse_or_we_cannot_evaluate_are_not_read() -> None:
    """An exponent, a negative value, mixed time and length units (KiCad refuses them), a
    condition with ``&&`` or another field, a rule limited to a layer: no limit is taken from
    them; ``fs`` is a thousandth of a ps; a comment line is a comment."""
    from accel_drc.readers.kicad_dru import parse_timing

    text = """(version 1)
(rule a (condition "A.NetClass == 'x'") (constraint skew (max 1e999ps)))
(rule b (condition "A.NetClass == 'x'") (constraint skew (max -5ps)))
(rule c (condition "A.NetClass == 'x'") (constraint length (min 1mm) (max 5ps)))
(rule d (condition "A.NetClass == 'x' && A.Layer == 'F.Cu'") (constraint skew (max 1ps)))
(rule e (condition "A.Type == 'Track'") (constraint skew (max 1ps)))
# (rule f (condition "A.NetClass == 'x'") (constraint skew (max 1ps)))
(rule g (layer inner) (condition "A.hasNetclass('x')") (constraint skew (max 2500fs)))
"""
    (g,) = parse_timing(text, "t.kicad_dru")
    assert (g.name, g.max, g.time, g.layer, g.terms) == (
        "g",
        2.5,
        True,
        "inner",
        (("NetClass", "x"),),
    )
    # a layer-limited rule is read but never taken as a net's limit (the skew check's rule)
