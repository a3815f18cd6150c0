"""``skew``: intra-pair skew in picoseconds, end pad to end pad (fixtures/checks/skew/).

The fixture boards: a 4-layer board, every dielectric εr 3.6, F.Cu and B.Cu planes, so a track
on In1.Cu or In2.Cu is a stripline in one dielectric (εeff = 3.6 exactly, 6.329 ps/mm) and a
barrel between In1.Cu and In2.Cu crosses the 1.6 mm core.  N runs 40 mm on In1.Cu.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis.delay import net_delays, ps_per_mm
from accel_drc.checks import CheckContext
from accel_drc.checks.skew import check_skew
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "skew"


def _rule(**params: object) -> Rule:
    return Rule(id="t.skew.pcie4", check="skew", severity=Severity.ERROR, params=dict(params),
                why="w", source="s", signal="pcie4")  # fmt: skip


def _run(name: str, **params: object) -> tuple[list, Analysis]:
    board = read_board(str(HERE / name))
    analysis = Analysis(board)
    ctx = CheckContext(board=board, analysis=analysis, board_class="inference")
    return check_skew(ctx, _rule(**params)).findings, analysis


def _skew_ps(name: str) -> float:
    board = read_board(str(HERE / name))
    d = net_delays(Analysis(board), [2, 3])
    return d[2].total_ps - d[3].total_ps  # type: ignore[operator]


def test_one_mm_at_eps_3p6_is_6p33_ps() -> None:
    assert ps_per_mm(3.6) == pytest.approx(6.329, abs=5e-4)
    assert round(ps_per_mm(3.6), 2) == 6.33


def test_two_barrels_on_one_leg_make_3p667_mm_of_skew() -> None:
    # 0.467 mm of track and two 1.6 mm In1-In2 barrels on P only: 3.667 mm at 6.329 ps/mm
    assert _skew_ps("two_barrels_one_leg.kicad_pcb") == pytest.approx(3.667 * ps_per_mm(3.6))
    assert _skew_ps("planar_only.kicad_pcb") == pytest.approx(0.467 * ps_per_mm(3.6))


def test_planar_only_tool_would_pass_what_the_barrels_fail() -> None:
    # the same 0.467 mm planar difference: under a 0.5 mm limit without the barrels ...
    assert _run("planar_only.kicad_pcb", max_intra_pair_mm=0.5)[0] == []
    # ... and 3.667 mm (23.2 ps) with them: a violation that names the barrels and the fix
    got, _ = _run("two_barrels_one_leg.kicad_pcb", max_intra_pair_mm=0.5)
    assert len(got) == 1
    f = got[0]
    assert f.status is Status.VIOLATION
    assert f.measured == pytest.approx(round(3.667 * ps_per_mm(3.6), 3), abs=1e-3)
    assert f.evidence["skew_mm_equivalent"] == pytest.approx(3.667, abs=1e-4)
    pieces = {w["piece"]: w for w in f.evidence["where"]}
    assert pieces["via barrels (2 vs 0)"]["delta_mm"] == pytest.approx(3.2)
    assert "add 3.667 mm on /PCIE4_TX0_N on In1.Cu" in f.evidence["fix"]
    assert "drop one via from /PCIE4_TX0_P" in f.evidence["fix"]
    assert f.evidence["basis"]["eps_eff"] == "declared"


def test_die_delay_shifts_the_skew_by_exactly_its_value() -> None:
    assert _skew_ps("matched.kicad_pcb") == 0.0
    assert _skew_ps("die_delay.kicad_pcb") == pytest.approx(5.0, abs=1e-12)
    assert _run("die_delay.kicad_pcb", max_intra_pair_ps=5.0)[0] == []
    got, _ = _run("die_delay.kicad_pcb", max_intra_pair_ps=4.9)
    assert [w["piece"] for w in got[0].evidence["where"]] == ["pad-to-die delay"]


def test_microstrip_is_faster_than_stripline_on_the_same_laminate() -> None:
    from accel_drc.analysis.delay import layer_velocity

    board = read_board(str(HERE / "matched.kicad_pcb"))
    a = Analysis(board)
    inner = layer_velocity(a, 1, 0.15, None)
    outer = layer_velocity(a, 0, 0.15, None)  # F.Cu is a plane here: B.Cu's side of In2 ...
    assert inner.eps_eff == 3.6 and inner.structure == "stripline"
    assert outer.eps_eff is None or outer.eps_eff < 3.6


def test_default_stackup_makes_the_skew_cannot_verify(tmp_path: Path) -> None:
    """KiCad's untouched stack-up (FR4 εr 4.5, equal heights, 35 µm): the εeff is a default, so
    the same 3.667 mm skew is *cannot verify* with its number, never a FAIL."""
    from accel_drc.basis import settle

    text = (HERE / "two_barrels_one_leg.kicad_pcb").read_text()
    text = text.replace("(thickness 1.6)", "(thickness 0.2)").replace("Test 3.6", "FR4")
    text = text.replace(
        "(epsilon_r 3.6) (loss_tangent 0.005)", "(epsilon_r 4.5) (loss_tangent 0.02)"
    )
    board_file = tmp_path / "auto.kicad_pcb"
    board_file.write_text(text)
    board = read_board(str(board_file))
    a = Analysis(board)
    ctx = CheckContext(board=board, analysis=a, board_class="inference")
    (f,) = check_skew(ctx, _rule(max_intra_pair_mm=0.1)).findings
    assert f.evidence["basis"]["eps_eff"] == "default"
    settled = settle(f)
    assert settled.status is Status.CANNOT_VERIFY
    assert settled.measured == f.measured  # the number stays


def _group(name: str, signal: str, **params: object) -> list:
    from accel_drc.basis import settle

    board = read_board(str(HERE / name))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.ERROR, params=dict(params),
                why="w", source="s", signal=signal)  # fmt: skip
    return [settle(f) for f in check_skew(ctx, rule).findings]


def test_ddr4_dq_against_its_dqs_rests_on_package_delays() -> None:
    # byte lane 0: DQS0 and DQ0-7/DM0 40 mm each, DQ3 1 mm longer (6.33 ps > 3.5 ps)
    params = {"group": "ddr", "max_group_ps": 3.5, "max_ca_ck_ps": 20}
    (f,) = _group("ddr4_byte_lane.kicad_pcb", "ddr4", **params)
    assert f.net == "/DDR4_DQ3" and f.rule == "t.skew.dq_dqs"
    assert f.measured == pytest.approx(round(ps_per_mm(3.6), 3), abs=1e-3)
    # no die_delay on the pads: the controller's package skew is unknown -> cannot verify
    assert f.status is Status.CANNOT_VERIFY and f.evidence["basis"]["die_delay"] == "assumed"
    # every pad declares its die delay (0 ps here): a fact
    (g,) = _group("ddr4_byte_lane_die.kicad_pcb", "ddr4", **params)
    assert g.status is Status.VIOLATION and "remove 1.000 mm on /DDR4_DQ3" in g.message


def test_flyby_address_is_timed_to_each_dram_from_the_controller() -> None:
    """A fly-by bus: CA against CK at each DRAM, along the routed path from the controller's
    pad (fixtures/checks/make_fixtures.py ``flyby_board``).  A0 meets U2's and U3's pads
    through T junctions 0.5 mm longer than CK (3.2 ps: passes); A1 is 3 mm longer at U2
    (18.99 ps: passes 20 ps) and 6.2 mm at U3 (3 mm + two 1.6 mm barrels: 39.24 ps: fails).
    The sum of each net's tracks (A1: 51.2 mm + barrels, CK 45 mm) would judge neither load."""
    board = read_board(str(HERE / "flyby.kicad_pcb"))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.ERROR, why="w", source="s",
                signal="ddr4", params={"group": "ddr", "max_ca_ck_ps": 20})  # fmt: skip
    from accel_drc.basis import settle

    out = check_skew(ctx, rule)
    (f,) = [settle(x) for x in out.findings]
    v = ps_per_mm(3.6)
    assert f.rule == "t.skew.ca_ck" and f.net == "/DDR4_A1" and f.status is Status.VIOLATION
    assert f.message.startswith("/DDR4_A1 at U3: CA–CK skew to /DDR4_CK")
    assert f.measured == pytest.approx(round(6.2 * v, 3), abs=1e-3)
    assert f.evidence["skew_ps_by_load"] == pytest.approx({"U2": 3 * v, "U3": 6.2 * v}, abs=1e-3)
    assert not out.not_judged
    # two parts with as many pads: no driver, not judged, and the coverage says why
    board = read_board(str(HERE / "flyby_no_driver.kicad_pcb"))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    out = check_skew(ctx, rule)
    assert out.findings == []
    why = out.not_judged[board.nets.index("/DDR4_A1")]
    assert any("driver cannot be told" in w for w in why)


def test_mipi_data_lane_against_clock_in_ui() -> None:
    # D-PHY 4.5 Gb/s: 0.15 UI = 33.3 ps = 5.27 mm here; D0 is 6 mm longer than CLK, D1 5 mm
    got = _group("mipi_lanes.kicad_pcb", "mipi_dphy", max_intra_pair_ui=0.02, group="mipi",
                 max_group_ui=0.15)  # fmt: skip
    assert [f.net for f in got] == ["/DPHY_CSI_D0_P"]
    assert got[0].status is Status.VIOLATION
    assert got[0].limit == pytest.approx(0.15 * 1000 / 4.5, abs=1e-3)


_DIE_SCRIPT = """
import sys, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
for fp in board.GetFootprints():
    for pad in fp.Pads():
        if pad.GetNetname() == "/PCIE4_TX0_P":
            pad.SetPadToDieDelay(int(7.25 * 1e6))  # attoseconds: 7.25 ps
            pad.SetPadToDieLength(pcbnew.FromMM(0.5))
board.Save(sys.argv[2])
"""


def test_kicad10_die_delay_as_kicad10_writes_it(tmp_path: Path) -> None:
    """KiCad 10 itself sets a pad's pad-to-die delay and length; the reader reads them (ps, mm)
    and the skew moves by exactly the delay."""
    import kicad10
    from conftest import need

    ok, why = kicad10.available()
    need(ok, why)
    src = kicad10.inside(HERE / "die_delay.kicad_pcb")
    out = src.rsplit("/", 1)[0] + "/die_delay_k10.kicad_pcb"
    proc = kicad10.python(_DIE_SCRIPT, src, out, timeout=600)
    assert proc.returncode == 0, proc.stderr
    board = read_board(str(kicad10.outside(out)))
    p, n = board.nets.index("/PCIE4_TX0_P"), board.nets.index("/PCIE4_TX0_N")  # KiCad renumbers
    (pad,) = [x for fp in board.footprints for x in fp.pads if x.net == p]
    assert pad.die_delay_ps == pytest.approx(7.25) and pad.die_length_mm == pytest.approx(0.5)
    d = net_delays(Analysis(board), [p, n])
    assert d[p].total_ps - d[n].total_ps == pytest.approx(7.25, abs=1e-9)  # the delay wins


def test_non_finite_die_delay_is_a_bad_input_error(tmp_path: Path) -> None:
    """A pad's (die_delay 1e999) is refused with file:line, never an inf in a delay sum."""
    from accel_drc.errors import InputError

    text = (HERE / "die_delay.kicad_pcb").read_text().replace("(die_delay 5)", "(die_delay 1e999)")
    bad = tmp_path / "bad.kicad_pcb"
    bad.write_text(text)
    with pytest.raises(InputError) as err:
        read_board(str(bad))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "die_delay" in t)
    assert f"bad.kicad_pcb:{line}" in str(err.value) and "die_delay" in str(err.value)


def test_a_huge_multi_drop_net_is_not_traced_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A net over the tracing bound (hostile.MAX_TRACE_SEGMENTS; here lowered to 5 so the
    fly-by fixture's nets exceed it) is not traced: not judged, with the count."""
    import accel_drc.hostile as hostile

    monkeypatch.setattr(hostile, "MAX_TRACE_SEGMENTS", 5)
    board = read_board(str(HERE / "flyby.kicad_pcb"))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.ERROR, why="w", source="s",
                signal="ddr4", params={"group": "ddr", "max_ca_ck_ps": 20})  # fmt: skip
    out = check_skew(ctx, rule)
    assert out.findings == []
    why = out.not_judged[board.nets.index("/DDR4_A1")]
    assert any("more than 5 are not traced" in w for w in why)


# --- package delays declared in accel-drc.yaml (issue 28: every declaration honoured) --------
# ddr4_lane_two_parts: a byte lane from the controller U1 (pads A1..A11) to the memory U2
# (B1..B11), as a memory-down board has it: A1/A2 DQS0 P/N, A3..A10 DQ0..DQ7, A11 DM0.  DQ3
# (A6 -> B6) is 1 mm longer: 6.33 ps of board skew against a 3.5 ps limit on board + package.
_LANE = "ddr4_lane_two_parts.kicad_pcb"
_DDR_PARAMS = {"group": "ddr", "max_group_ps": 3.5, "max_ca_ck_ps": 20}


def _lane(tmp_path: Path, config_text: str | None) -> list:
    """The settled findings of the DDR group rule on the lane board under ``config_text``
    (an accel-drc.yaml, loaded by the real loader; None: no config)."""
    from accel_drc.basis import settle
    from accel_drc.config import load_config

    cfg_file = None
    if config_text is not None:
        cfg_file = tmp_path / "accel-drc.yaml"
        cfg_file.write_text(config_text)
    cfg = load_config(str(cfg_file) if cfg_file else None, None)
    board = read_board(str(HERE / _LANE))
    ctx = CheckContext(board=board, analysis=Analysis(board, cfg), board_class="inference",
                       config=cfg)  # fmt: skip
    rule = Rule(id="t.skew", check="skew", severity=Severity.ERROR, params=dict(_DDR_PARAMS),
                why="w", source="s", signal="ddr4")  # fmt: skip
    return [settle(f) for f in check_skew(ctx, rule).findings]


#: every pad of U1 at 46 ps but DQ3's A6 at ``a6`` ps
def _u1_pins(a6: float) -> str:
    pins = ", ".join(f"A{k}: {a6 if k == 6 else 46}" for k in range(1, 12))
    return f"package_delays:\n  U1: {{pins_ps: {{{pins}}}}}\n  U2: {{delays: none}}\n"


def test_undeclared_package_delays_leave_the_lane_unverified_with_a_pasteable_entry(tmp_path):
    """No package delay declared: DQ3's 6.33 ps rests on 0 ps of package, cannot verify; the
    hint is the accel-drc.yaml entry for exactly the six pads of DQ3 and DQS0, and pasted as
    it stands (placeholders filled) it loads and makes the skew a fact."""
    import re

    (f,) = _lane(tmp_path, None)
    assert f.status is Status.CANNOT_VERIFY and f.evidence["basis"]["die_delay"] == "assumed"
    assert f.evidence["package_pads"] == {"U1": ["A6", "A1", "A2"], "U2": ["B6", "B1", "B2"]}
    hint = f.evidence["declare"]
    entry = re.search(r"package_delays: (\{.*?\}\}\})", hint).group(1)
    assert entry == (
        "{'U1': {pins_ps: {'A6': <ps>, 'A1': <ps>, 'A2': <ps>}}, "
        "'U2': {pins_ps: {'B6': <ps>, 'B1': <ps>, 'B2': <ps>}}}"
    )
    got = _lane(tmp_path, "package_delays: " + entry.replace("<ps>", "40") + "\n")
    (g,) = [x for x in got if x.net == "/DDR4_DQ3"]
    assert g.status is Status.VIOLATION and g.evidence["basis"]["die_delay"] == "declared"
    # DQS0 now carries 80 ps of package the other DQ nets' undeclared pads do not: each is
    # 80 ps short, unverified until its pads are declared too
    assert {x.status for x in got if x is not g} == {Status.CANNOT_VERIFY}


def test_a_declared_pin_delay_changes_the_verdict(tmp_path):
    """Per pad, in ps: DQ3's controller pad 6 ps faster than the rest makes up 6 of its 6.33 ps
    (0.33 ps left: passes, no finding); the same pad at 46 ps leaves the 6.33 ps, now a fact
    whose evidence names the declaration and its line."""
    assert _lane(tmp_path, _u1_pins(40.0)) == []
    (f,) = _lane(tmp_path, _u1_pins(46.0))
    assert f.status is Status.VIOLATION and f.net == "/DDR4_DQ3"
    assert f.measured == pytest.approx(round(ps_per_mm(3.6), 3), abs=1e-3)
    assert f.evidence["basis"]["die_delay"] == "declared"
    assert f.evidence["package_delays"] == {
        "U1": "accel-drc.yaml:2 package_delays: U1: pins_ps, per pad",
        "U2": "accel-drc.yaml:3 package_delays: U2: delays: none, it adds no package delay: a "
        "chip-scale or bare-die package",
    }
    assert "declare" not in f.evidence and "package_pads" not in f.evidence
    # 2 ps more on DQ3's memory pad: 8.33 ps
    (g,) = _lane(tmp_path, _u1_pins(46.0).replace("U2: {delays: none}", "U2: {pins_ps: {B6: 2}}"))
    assert g.status is Status.CANNOT_VERIFY  # U2's other pads are still undeclared
    assert g.evidence["package_pads"] == {"U2": ["B1", "B2"]}
    text = _u1_pins(46.0).replace("U2: {delays: none}", "U2: {pins_ps: {B1: 0, B2: 0, B6: 2}}")
    (h,) = _lane(tmp_path, text)
    assert h.status is Status.VIOLATION
    assert h.measured == pytest.approx(round(ps_per_mm(3.6) + 2.0, 3), abs=1e-3)


def test_a_part_statement_makes_the_skew_a_fact_and_says_so(tmp_path):
    """``delays: compensated`` (the controller deskews per bit) for U1 and ``matched`` for U2:
    0 ps of package difference, declared; the evidence quotes each statement and its reason."""
    text = (
        "package_delays:\n"
        "  U1: {delays: compensated, reason: per-bit write/read deskew}\n"
        "  U2: {delays: matched}\n"
    )
    (f,) = _lane(tmp_path, text)
    assert f.status is Status.VIOLATION and f.evidence["basis"]["die_delay"] == "declared"
    assert f.evidence["package_delays"]["U1"].endswith(
        "delays: compensated, its package delays are made up elsewhere: the controller's "
        "per-bit deskew, or lengths already tuned with the package; reason: per-bit write/read "
        "deskew"
    )
    assert "U2: delays: matched" in f.evidence["package_delays"]["U2"]


def test_a_statement_beats_the_pads_die_delay_and_one_end_is_not_enough(tmp_path):
    """Board-declared die_delay on every pad (ddr4_byte_lane_die) is a fact; a config statement
    replaces it for its part.  On the two-part lane, declaring U1 alone leaves U2's package
    unknown: still cannot verify, naming U2's pads only."""
    (f,) = _lane(tmp_path, "package_delays:\n  U1: {delays: compensated}\n")
    assert f.status is Status.CANNOT_VERIFY
    assert f.evidence["package_pads"] == {"U2": ["B6", "B1", "B2"]}


def test_package_delay_config_errors_and_unmatched_entries(tmp_path):
    """pins_ps and delays together: refused with file:line (exit 3); an unknown statement, or a
    reason alone (it declares no delay), too;
    a part the board lacks and a pad its footprint lacks: config.unmatched."""
    from accel_drc import cli
    from accel_drc.config import load_config
    from accel_drc.config_audit import unmatched_entries

    bad = tmp_path / "bad.yaml"
    bad.write_text("package_delays:\n  U1: {pins_ps: {A1: 3}, delays: none}\n")
    assert cli.main(["check", str(HERE / _LANE), "--config", str(bad), "--quiet"]) == 3
    bad.write_text("package_delays:\n  U1: {delays: deskewed}\n")
    assert cli.main(["check", str(HERE / _LANE), "--config", str(bad), "--quiet"]) == 3
    bad.write_text("package_delays:\n  U1: {reason: 'we checked'}\n")  # declares nothing
    assert cli.main(["check", str(HERE / _LANE), "--config", str(bad), "--quiet"]) == 3
    ok = tmp_path / "ok.yaml"
    ok.write_text("package_delays:\n  U9: {delays: none}\n  U1: {pins_ps: {A99: 3, A1: 2}}\n")
    got, _ = unmatched_entries(load_config(str(ok), None), read_board(str(HERE / _LANE)))
    assert [(u.key, u.line) for u in got] == [
        ("package_delays.U9", 2),
        ("package_delays.U1.pins_ps.A99", 3),
    ]
