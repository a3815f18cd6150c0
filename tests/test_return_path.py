"""``return_path``: breaks in the reference plane under a high-speed trace, and return vias at
layer changes (fixtures/checks/return_path/, written by fixtures/checks/make_fixtures.py).

The boards: F.Cu signal, GND planes on In1.Cu and In2.Cu (zones with stored fills), B.Cu
signal; the pair /PCIE4_TX0_P/N (PCIe Gen4, 16 Gb/s) runs 30 mm on F.Cu from x 10 to 40.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from accel_drc.analysis import Analysis
from accel_drc.checks import CheckContext
from accel_drc.checks.return_path import check_return_path
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "return_path"


def _run(name: str, **params: float) -> list:
    board = read_board(str(HERE / name))
    p = {"min_break_mm": 1.0, "max_stitch_mm": 1.27, "error_from_gbps": 10.0, **params}
    rule = Rule(id="t.return_path.pcie4", check="return_path", severity=Severity.ERROR,
                params=p, why="w", source="s", signal="pcie4")  # fmt: skip
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    return check_return_path(ctx, rule).findings


def test_half_covered_trace_has_exactly_one_break_on_the_uncovered_half() -> None:
    # the GND zone covers x 10..25 under a 30 mm F.Cu trace (x 10..40)
    got = [f for f in _run("half_covered.kicad_pcb") if f.net == "/PCIE4_TX0_P"]
    assert len(got) == 1
    (b,) = got[0].evidence["breaks"]
    assert b["start"] == pytest.approx((25.0, 10.0), abs=1e-3)
    assert b["end"] == pytest.approx((40.0, 10.0), abs=1e-3)
    assert b["length_mm"] == pytest.approx(15.0, abs=1e-3)
    assert b["kind"] == "edge" and b["reference"] == "In1.Cu"
    assert got[0].measured == pytest.approx(0.5, abs=1e-4)
    assert got[0].severity is Severity.WARNING  # running off a plane edge: a warning


def test_fully_covered_trace_passes() -> None:
    assert _run("covered.kicad_pcb") == []


def test_split_crossing_under_a_16_gbps_lane_is_an_error() -> None:
    got = _run("split.kicad_pcb")
    assert {f.net for f in got} == {"/PCIE4_TX0_P", "/PCIE4_TX0_N"}
    for f in got:
        (b,) = f.evidence["breaks"]
        assert b["kind"] == "crossing" and b["length_mm"] == pytest.approx(2.0, abs=1e-3)
        assert f.severity is Severity.ERROR and f.status is Status.VIOLATION
    # the same crossing on a slower lane (limit above 16 Gb/s) is a warning
    assert {f.severity for f in _run("split.kicad_pcb", error_from_gbps=20.0)} == {Severity.WARNING}


def test_return_via_at_1p20_mm_passes_at_1p40_fails() -> None:
    assert _run("gnd_via_1p20.kicad_pcb") == []
    got = _run("gnd_via_1p40.kicad_pcb")
    p = [f for f in got if f.net == "/PCIE4_TX0_P"]
    assert len(p) == 1 and p[0].rule == "t.return_path.pcie4.via"
    assert p[0].measured == pytest.approx(1.40)
    assert "In1.Cu → In2.Cu" in p[0].message


def test_no_high_speed_nets_reads_no_fills(monkeypatch: pytest.MonkeyPatch) -> None:
    """Zone fills cost nothing when no net of the rule's signal exists."""
    board = read_board(str(HERE / "covered.kicad_pcb"))
    rule = Rule(id="t", check="return_path", severity=Severity.ERROR, why="w", source="s",
                params={"min_break_mm": 1.0, "max_stitch_mm": 1.27, "error_from_gbps": 10.0},
                signal="usb3")  # fmt: skip
    import accel_drc.analysis.returnpath as rp

    monkeypatch.setattr(rp, "plane_fills", lambda *a: pytest.fail("fills read"))
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    assert check_return_path(ctx, rule).findings == []


def test_a_split_under_a_segment_joint_is_one_crossing() -> None:
    """The same 2 mm split, with each trace made of two segments meeting at x 21 inside it:
    the two 1 mm pieces are joined into one 2 mm crossing (an error), not two plane edges."""
    got = _run("split_at_joint.kicad_pcb")
    assert {f.net for f in got} == {"/PCIE4_TX0_P", "/PCIE4_TX0_N"}
    for f in got:
        (b,) = f.evidence["breaks"]
        assert b["kind"] == "crossing" and b["length_mm"] == pytest.approx(2.0, abs=2e-3)
        assert f.severity is Severity.ERROR


def test_the_void_around_the_nets_own_via_is_an_antipad_not_a_plane_edge() -> None:
    """An edge break running from the net's own via (0.6 mm pad) up to two diameters + 0.5 mm
    (1.7 mm) is its antipad merged with the partner's: judged at the via, not as an edge."""
    from accel_drc.analysis.returnpath import Break
    from accel_drc.checks.return_path import _antipad

    board = read_board(str(HERE / "gnd_via_1p40.kicad_pcb"))
    p = board.nets.index("/PCIE4_TX0_P")

    def edge(length: float) -> Break:
        return Break(0, 1, 0.0, length, (40.0 - length, 10.0), (40.0, 10.0), "edge")

    assert _antipad(edge(1.6), board.vias, p)
    assert not _antipad(edge(1.8), board.vias, p)  # longer: a real plane edge
    assert not _antipad(edge(1.6), board.vias, board.nets.index("/PCIE4_TX0_N"))  # not its via


def test_trace_near_the_plane_edge_is_a_warning_and_clear_of_it_is_not() -> None:
    """TI's 90 mil (2.286 mm) from the reference plane's edge: the GND planes stop at y 11.0,
    1.0 mm from P (y 10) and 0.7 mm from N (y 10.3), over the whole 30 mm run: one warning per
    net; stopping at y 12.6 (2.6 mm and 2.3 mm away) gives none.  Without the parameter the
    approach is not judged."""
    keep = {"edge_keepout_mm": 2.286}
    got = _run("edge_near.kicad_pcb", **keep)
    assert {f.net for f in got} == {"/PCIE4_TX0_P", "/PCIE4_TX0_N"}
    for f in got:
        assert f.rule == "t.return_path.pcie4.edge_approach" and f.severity is Severity.WARNING
        # the probes every 1 mm at x 11 .. 39 (the ends lie on the zone's own x edges)
        assert f.evidence["length_mm"] == pytest.approx(28.0, abs=1e-6)
        # the nearest probe off the plane: ½ of 2.286 mm (1.14 mm; ¼ = 0.57 mm is on it)
        assert f.measured == pytest.approx(0.5 * 2.286)
        assert {s["reference"] for s in f.evidence["stretches"]} == {"In1.Cu"}
    assert _run("edge_clear.kicad_pcb", **keep) == []
    assert _run("edge_near.kicad_pcb") == []


def test_a_short_pass_by_a_plane_corner_is_not_an_edge_approach() -> None:
    """The planes stop at y 11.0 only for x 10-14 (then run to y 20): the pair is within
    2.286 mm of that edge for about 3 mm, less than twice the keep-out, which passing a void's
    corner alone can give: not reported (a 1 mm floor would report it)."""
    assert _run("edge_short.kicad_pcb", edge_keepout_mm=2.286) == []


def test_alike_planes_share_one_index_and_one_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """split.kicad_pcb pours the same GND fill on In1 and In2: one set of prepared polygons
    (one point index) serves both, and the same points asked of the second are not tested
    again; the answers are those of the fill itself (issue 32, the return path's cost)."""
    import numpy as np
    import shapely
    from accel_drc.analysis.returnpath import breaks, plane_fills

    board = read_board(str(HERE / "split.kicad_pcb"))
    fills = plane_fills(Analysis(board))
    assert fills.polygons(1) is fills.polygons(2)
    x, y = np.linspace(5.0, 45.0, 81), np.full(81, 10.0)
    want = ((x > 10) & (x < 20)) | ((x > 22) & (x < 40))  # a boundary point is off
    assert (fills.covered(1, x, y) == want).all()
    calls = []
    real = shapely.contains_xy
    monkeypatch.setattr(shapely, "contains_xy", lambda *a: calls.append(1) or real(*a))
    assert (fills.covered(2, x, y) == want).all()
    assert calls == []
    s, e = np.array([[10.0, 10.0]]), np.array([[40.0, 10.0]])
    c1, b1 = breaks(fills, 1, s, e, [0])
    c2, b2 = breaks(fills, 2, s, e, [0])
    assert c1 == pytest.approx(c2) and [(b.t0, b.t1, b.kind) for b in b1] == [
        (b.t0, b.t1, b.kind) for b in b2
    ]
    ((t0, t1, kind),) = [(b.t0, b.t1, b.kind) for b in b1]
    assert (t0, t1, kind) == (
        pytest.approx(10.0, abs=1e-3),
        pytest.approx(12.0, abs=1e-3),
        "crossing",
    )
