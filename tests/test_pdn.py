"""PDN impedance against exact answers: series RLC, anti-resonance, N in parallel, plane
capacitance of rectangles and of polygons with holes, a rail on a real board vs KiCad's pcbnew."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from accel_drc.analysis import Analysis, pdn
from accel_drc.analysis.pdn import EPS0, CapGroup, impedance, planes
from accel_drc.analysis.pdn import rails as pdn_rails
from accel_drc.checks import CheckContext
from accel_drc.checks.pdn_impedance import check_pdn_impedance, rails_extra
from accel_drc.model import (
    Board,
    CopperLayer,
    DielectricSublayer,
    Footprint,
    Pad,
    Stackup,
    StackupLayer,
    Zone,
    copper_layer_name,
)
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status
from conftest import FIXTURE_BOARDS, SHARED_BOARDS, need


def grp(c: float, esl: float, esr: float, n: int = 1, pkg: str = "0402") -> CapGroup:
    return CapGroup(c, pkg, esl, esr, tuple(f"C{i}" for i in range(n)))


def test_single_capacitor_series_rlc() -> None:
    c, esl, esr = 100e-9, 1e-9, 0.02
    f0 = 1 / (2 * math.pi * math.sqrt(esl * c))
    assert f0 == pytest.approx(15.9155e6, rel=1e-5)
    z = impedance(np.array([f0]), [grp(c, esl, esr)], None, None)
    assert z[0] == pytest.approx(esr, rel=1e-9)
    # far below: 1/(ωC); far above: ωL (ESR negligible)
    z = impedance(np.array([1e3, 1e10]), [grp(c, esl, 0.0)], None, None)
    assert z[0] == pytest.approx(1 / (2 * math.pi * 1e3 * c) - 2 * math.pi * 1e3 * esl, rel=1e-9)
    assert z[1] == pytest.approx(2 * math.pi * 1e10 * esl - 1 / (2 * math.pi * 1e10 * c), rel=1e-9)


def test_two_capacitors_anti_resonance() -> None:
    # lossless branches cancel (Z1 = -Z2) at ω² = (1/C1 + 1/C2) / (L1 + L2)
    c1, l1, c2, l2, r = 10e-6, 1e-9, 100e-9, 1e-9, 1e-3
    w = math.sqrt((1 / c1 + 1 / c2) / (l1 + l2))
    f_ar = w / (2 * math.pi)
    assert f_ar == pytest.approx(11.31e6, rel=1e-3)
    groups = [grp(c1, l1, r), grp(c2, l2, r)]
    f = np.logspace(math.log10(f_ar) - 0.2, math.log10(f_ar) + 0.2, 20001)
    z = impedance(f, groups, None, None)
    k = int(np.argmax(z))
    assert f[k] == pytest.approx(f_ar, rel=1e-3)
    # at the peak: |Z| ≈ X² / (R1 + R2), X = ωL1 − 1/(ωC1)
    x = w * l1 - 1 / (w * c1)
    assert z[k] == pytest.approx(x * x / (2 * r), rel=1e-2)
    # domain.md §6's estimate 1/(2π√(L·C_small)) holds with L the loop of both inductances
    assert 1 / (2 * math.pi * math.sqrt((l1 + l2) * c2)) == pytest.approx(f_ar, rel=1e-2)


def test_n_equal_capacitors_in_parallel() -> None:
    f = pdn.sweep(1e4, 1e9)
    one = impedance(f, [grp(1e-6, 0.8e-9, 0.015)], None, None)
    ten = impedance(f, [grp(1e-6, 0.8e-9, 0.015, n=10)], None, None)
    np.testing.assert_allclose(ten, one / 10, rtol=1e-12)
    # ten separate groups of one are the same network
    sep = impedance(f, [grp(1e-6, 0.8e-9, 0.015)] * 10, None, None)
    np.testing.assert_allclose(sep, ten, rtol=1e-12)


def test_vrm_and_plane_branches() -> None:
    f = np.array([1e4, 1e9])
    z = impedance(f, [], None, {"r_ohm": 1e-3, "l_h": 1e-9})
    assert z[0] == pytest.approx(abs(1e-3 + 2j * math.pi * 1e4 * 1e-9))
    z = impedance(f, [], 1e-9, None)
    assert z[1] == pytest.approx(1 / (2 * math.pi * 1e9 * 1e-9))


# -------------------------------------------------------------------------------------------
# plane capacitance
# -------------------------------------------------------------------------------------------


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)


def with_hole(outer: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """KiCad's way: the hole joined to the outline by a zero-width bridge, in one ring."""
    o = outer.tolist()
    h = hole[::-1].tolist()
    return np.array([o[0], *o[1:], o[0], h[0], *h[1:], h[0]], float)


def board4(
    zones: tuple[Zone, ...], footprints: tuple[Footprint, ...] = (), subl: bool = False
) -> Board:
    # F.Cu | 0.2 εr 4 | In1 | 0.1 (= 0.05@3 + 0.05@6: series εr 4) | In2 | 1.0 εr 4.5 | B.Cu
    d2 = StackupLayer("dielectric 2", "prepreg", 0.1, "X", 4.0, 0.01)
    if subl:
        d2 = StackupLayer(
            "dielectric 2",
            "prepreg",
            0.1,
            "X",
            3.0,
            0.01,
            (DielectricSublayer(0.05, "X", 3.0, 0.01), DielectricSublayer(0.05, "Y", 6.0, 0.01)),
        )
    layers = (
        StackupLayer("F.Cu", "copper", 0.035, copper_index=0),
        StackupLayer("dielectric 1", "core", 0.2, "X", 4.0, 0.01),
        StackupLayer("In1.Cu", "copper", 0.035, copper_index=1),
        d2,
        StackupLayer("In2.Cu", "copper", 0.035, copper_index=2),
        StackupLayer("dielectric 3", "core", 1.0, "X", 4.5, 0.01),
        StackupLayer("B.Cu", "copper", 0.035, copper_index=3),
    )
    return Board(
        source="hand",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, 4), copper_layer_name(i, 4)) for i in range(4)
        ),
        stackup=Stackup(layers),
        nets=("", "GND", "+1V8", "SIG"),
        zones=zones,
        footprints=footprints,
    )


def test_plane_capacitance_rectangles() -> None:
    # +1V8 100×50 on In1, GND 80×60 offset on In2 (facing) and on B.Cu (not facing In1)
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rect(0, 0, 100, 50),)}),
        Zone(
            net=1,
            net_name="GND",
            layers=(2, 3),
            filled={2: (rect(30, 20, 110, 80),), 3: (rect(0, 0, 100, 50),)},
        ),
    )
    b = board4(zones)
    rails = pdn.find_rails(b)
    assert [r.name for r in rails] == ["+1V8"]
    r = rails[0]
    # overlap: x 30..100, y 20..50 = 70 × 30 = 2100 mm²; d = 0.1 mm, εr 4
    assert len(r.plane_pairs) == 1
    p = r.plane_pairs[0]
    assert (p.rail_layer, p.ground_layer) == ("In1.Cu", "In2.Cu")
    assert p.area_mm2 == pytest.approx(2100.0)
    want = EPS0 * 4.0 * 2100e-6 / 0.1e-3
    assert r.plane_capacitance_f == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(743.75e-12, rel=1e-3)  # ≈ 35.4 pF/cm² at εr 4, 0.1 mm


def test_plane_capacitance_polygons_with_holes_and_sublayers() -> None:
    # rail: 40×40 with a 10×10 hole (10..20); ground on both sides:
    #   F.Cu (facing In1 through 0.2 mm εr 4): 40×40 with a 10×10 hole at 15..25 (overlaps the
    #   rail's hole by 5×5): overlap = 1600 − 100 − 100 + 25 = 1425 mm²
    #   In2 (facing In1 through 0.05@3 + 0.05@6 = 0.1 mm, series εr 4): two rects, 0..20 × 0..40
    #   and 20..40 × 0..40 that touch, total 1600; overlap with the rail = 1600 − 100 = 1500 mm²
    rail = with_hole(rect(0, 0, 40, 40), rect(10, 10, 20, 20))
    g_top = with_hole(rect(0, 0, 40, 40), rect(15, 15, 25, 25))
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rail,)}),
        Zone(net=1, net_name="GND", layers=(0,), filled={0: (g_top,)}),
        Zone(
            net=1,
            net_name="GND",
            layers=(2,),
            filled={2: (rect(0, 0, 20, 40), rect(20, 0, 40, 40))},
        ),
    )
    b = board4(zones, subl=True)
    r = pdn.find_rails(b)[0]
    pairs = {(p.rail_layer, p.ground_layer): p for p in r.plane_pairs}
    assert set(pairs) == {("In1.Cu", "F.Cu"), ("In1.Cu", "In2.Cu")}
    assert pairs[("In1.Cu", "F.Cu")].area_mm2 == pytest.approx(1425.0)
    assert pairs[("In1.Cu", "In2.Cu")].area_mm2 == pytest.approx(1500.0)
    assert pairs[("In1.Cu", "In2.Cu")].epsilon_r == pytest.approx(4.0)
    want = EPS0 * 4.0 * 1425e-6 / 0.2e-3 + EPS0 * 4.0 * 1500e-6 / 0.1e-3
    assert r.plane_capacitance_f == pytest.approx(want, rel=1e-12)


def cap_fp(ref: str, value: str, name: str, rail: int, gnd: int = 1) -> Footprint:
    return Footprint(
        reference=ref,
        value=value,
        name=name,
        layer="F.Cu",
        x=0,
        y=0,
        pads=(
            Pad("1", rail, "smd", "rect", 0, 0, 0.5, 0.5, 0, None, (0,)),
            Pad("2", gnd, "smd", "rect", 1, 0, 0.5, 0.5, 0, None, (0,)),
        ),
    )


def test_rail_from_config_with_decaps_and_target() -> None:
    fps = (
        cap_fp("C1", "100n", "Capacitor_SMD:C_0402_1005Metric", 2),
        cap_fp("C2", "100nF 16V X7R", "Capacitor_SMD:C_0402_1005Metric", 2),
        cap_fp("C3", "10u", "Capacitor_SMD:C_0805_2012Metric", 2),
        cap_fp("C4", "DNP", "Capacitor_SMD:C_0402_1005Metric", 2),
        cap_fp("C5", "??", "Capacitor_SMD:C_0402_1005Metric", 2),
        cap_fp("R1", "10k", "Resistor_SMD:R_0402_1005Metric", 2),  # not a capacitor
        cap_fp("C6", "1u", "Capacitor_SMD:C_0402_1005Metric", 3),  # not on the rail
    )
    b = board4((), fps)
    cfg = {
        "rails": [
            {
                "name": "core",
                "nets": [r"\+1V8"],
                "voltage": 1.8,
                "ripple_pct": 3,
                "transient_a": 2,
                "vrm": {"r_ohm": 1e-3, "l_h": 5e-9},
            }
        ]
    }
    rail = pdn.find_rails(b, cfg)[0]
    assert [c.ref for c in rail.decaps] == ["C1", "C2", "C3"]
    assert rail.unread_caps == ("C5 ('??')",)
    assert [g.label for g in rail.groups()] == ["10 µF 0805 ×1", "100 nF 0402 ×2"]
    res = pdn.evaluate(rail, {"target_ohm": 0.001, "f_min_hz": 1e4, "f_max_hz": 1e8})
    # own target wins over the class: 1.8 V × 3 % / 2 A = 27 mΩ
    assert res.target_ohm == pytest.approx(0.027)
    assert res.target_source == "V·ripple/ΔI (config)"
    assert res.vrm_source == "config" and res.missing == ()
    # the curve is exactly the network's
    lib_caps = rail.groups()
    want = impedance(res.f_hz, lib_caps, None, {"r_ohm": 1e-3, "l_h": 5e-9})
    np.testing.assert_allclose(res.z_ohm, want)
    # judged up to where a board-level lumped model holds (20 MHz), not the class's 100 MHz
    assert res.f_max_hz == pytest.approx(pdn.MODEL_MAX_HZ) and res.band_max_hz == 1e8
    band = (res.f_hz >= 1e4) & (res.f_hz <= pdn.MODEL_MAX_HZ * (1 + 1e-9))
    assert res.worst_z_ohm == pytest.approx(float(res.z_ohm[band].max()))
    assert res.f_hz[0] == pytest.approx(1e4) and res.f_hz[-1] == pytest.approx(1e9)
    assert res.basis["voltage"] == res.basis["transient_a"] == "declared"
    assert res.basis["vrm"] == "declared" and res.basis["network_model"] == "default"


class StandIn:
    def __init__(self, board: Board, config: dict | None = None) -> None:
        self.board = board
        self.config = config or {}
        self.rails = pdn.find_rails(board, self.config)


def rule(**params) -> Rule:  # noqa: ANN003
    return Rule(
        id="edge.pdn_impedance",
        check="pdn_impedance",
        severity=Severity.ERROR,
        params=params,
        why="target impedance",
        source="[nextpcb2026] PCB Design Parameter table, PDN target impedance row",
    )


def test_check_finding_and_pass() -> None:
    fps = tuple(cap_fp(f"C{i}", "100n", "C_0402_1005Metric", 2) for i in range(1, 5))
    b = board4((), fps)
    cfg = {
        "rails": [
            {
                "name": "core",
                "nets": ["[+]1V8"],
                "role": "core",
                "vrm": {"r_ohm": 1e-3, "l_h": 5e-9},
            }
        ]
    }
    a = StandIn(b, cfg)
    ctx = CheckContext(board=b, analysis=a, board_class="edge")
    out = check_pdn_impedance(ctx, rule(target_ohm=0.001, f_min_hz=1e4, f_max_hz=1e8))
    assert out.checked == 1 and len(out.findings) == 1
    f = out.findings[0]
    assert f.status == Status.VIOLATION and f.unit == "Ω"
    # four 100 nF 0402 (1 nH mounted, 35 mΩ) against a 5 nH VRM: the worst point in the band is
    # the VRM/decap anti-resonance, the top of the band is set by the decaps' ESL
    assert f.limit == 0.001
    assert f.measured == pytest.approx(f.evidence["z_ohm"])
    assert f.evidence["margin_ohm"] == pytest.approx(0.001 - f.measured)
    assert f.evidence["worst_f_hz"] <= pdn.MODEL_MAX_HZ * (1 + 1e-9)
    assert f.evidence["basis"]["rail_role"] == "declared"
    assert "20 MHz" in f.evidence["model_band"] and "UG583" in f.evidence["model_band"]
    # the failing band and what a network under target needs there
    bands = f.evidence["over_bands"]
    assert bands and bands[0]["f_lo_hz"] <= f.evidence["worst_f_hz"] <= bands[-1]["f_hi_hz"]
    assert "of capacitance" in f.evidence["remedy"] and "inductance" in f.evidence["remedy"]
    # the decaps' ESL/ESR are rules/capacitors.yaml typicals: their corners are evaluated too
    assert f.evidence["candidates_of"] == "network_model"
    assert set(f.evidence["candidates"]) == {"typical", "low ESL + low ESR", "low ESL + high ESR"}
    assert "decaps 100 nF 0402 ×4" in f.evidence["dominant"]
    assert len(f.evidence["curve"]) <= 81
    # a generous target passes
    out = check_pdn_impedance(ctx, rule(target_ohm=100.0, f_min_hz=1e4, f_max_hz=1e8))
    assert out.findings == [] and out.checked == 1
    extra = rails_extra(a, [rule(target_ohm=100.0, f_min_hz=1e4, f_max_hz=1e8)])
    assert extra[0]["name"] == "core" and len(extra[0]["impedance"]) == 201


def test_check_cannot_verify() -> None:
    b = board4((), (cap_fp("C1", "100n", "C_0402_1005Metric", 2),))
    # no VRM from config nor class: cannot verify, says what to declare
    a = StandIn(b, {"rails": [{"name": "core", "nets": ["[+]1V8"]}]})
    out = check_pdn_impedance(CheckContext(b, a, "edge"), rule(target_ohm=0.001))
    assert [f.status for f in out.findings] == [Status.CANNOT_VERIFY]
    assert "vrm" in out.findings[0].evidence["declare"]
    # no rail at all
    a = StandIn(board4(()))
    out = check_pdn_impedance(CheckContext(a.board, a, "edge"), rule(target_ohm=0.001))
    assert [f.status for f in out.findings] == [Status.CANNOT_VERIFY]
    assert "rails:" in out.findings[0].evidence["declare"]


def test_names() -> None:
    for n in (
        "+3V3",
        "VCC",
        "/FPGA Power/VCC_AUX",
        "+1V5",
        "P0V8",
        "VDD_CORE",
        "1V8",
        "V1P8",
        "+12V",
    ):
        assert pdn.is_power(n), n
    for n in ("GND", "AGND", "/GNDA", "VSS", "SIG3", "PCIE_TX0_P", "Net-(U1-Pad3)"):
        assert not pdn.is_power(n), n
    for n in ("GND", "AGND", "/GNDA", "GNDD", "VSS", "VSSA", "PGND", "Net-(U2-AGND)", "0V"):
        assert pdn.is_ground(n), n
    for n in ("SIG3", "+3V3", "VDD", "DIAGNOSTIC"):
        assert not pdn.is_ground(n), n
    assert pdn.voltage_from_name("+3V3") == 3.3
    assert pdn.voltage_from_name("P0V8") == 0.8
    assert pdn.voltage_from_name("VCC_1V2") == 1.2
    assert pdn.voltage_from_name("+12V") == 12.0
    assert pdn.voltage_from_name("V1P8") == 1.8


# -------------------------------------------------------------------------------------------
# a rail on a real board, against KiCad's own polygon engine
# -------------------------------------------------------------------------------------------

PCBNEW_RAIL = r"""
import sys, json
import pcbnew
b = pcbnew.LoadBoard(sys.argv[1])
rail, gnds = sys.argv[2], sys.argv[3].split(",")
stack = list(b.GetEnabledLayers().CuStack())
def region(nets, L):
    s = pcbnew.SHAPE_POLY_SET()
    for z in b.Zones():
        if z.GetNetname() in nets and z.IsOnLayer(L) and not z.GetIsRuleArea():
            s.BooleanAdd(z.GetFilledPolysList(L))
    return s
out = []
for i in range(len(stack) - 1):
    for a, c in ((i, i + 1), (i + 1, i)):
        x = pcbnew.SHAPE_POLY_SET(region([rail], stack[a]))
        x.BooleanIntersection(region(gnds, stack[c]))
        if x.Area() > 0:
            out.append([a, c, x.Area() / 1e12])
refs = []
for fp in b.GetFootprints():
    nets = {p.GetNetname() for p in fp.Pads()}
    if rail in nets and nets & set(gnds) and fp.GetReference().startswith("C"):
        refs.append(fp.GetReference())
print(json.dumps({"pairs": out, "caps": sorted(refs)}))
"""


@pytest.mark.kicad
def test_rail_on_openpci2_matches_pcbnew(pcbnew_python: str) -> None:
    path = str(FIXTURE_BOARDS["openpci2-backplane"])
    board = read_board(path)
    rails = {r.name: r for r in Analysis(board).rails}
    assert {"+3V3", "+12V"} <= set(rails)
    r = rails["+3V3"]
    got = subprocess.run(
        [pcbnew_python, "-c", PCBNEW_RAIL, path, "+3V3", ",".join(r.ground_nets)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert got.returncode == 0, got.stderr[-2000:]
    want = json.loads(got.stdout.strip().splitlines()[-1])
    names = [layer.name for layer in board.copper_layers]
    ours = sorted(
        (names.index(p.rail_layer), names.index(p.ground_layer), p.area_mm2) for p in r.plane_pairs
    )
    assert [(a, c) for a, c, _ in ours] == [(a, c) for a, c, _ in sorted(want["pairs"])]
    for (_, _, mine), (_, _, theirs) in zip(ours, sorted(want["pairs"])):
        assert mine == pytest.approx(theirs, rel=1e-6)
    # In2 (+3V3) over In1 (GND) through the 1.24 mm FR4 core (εr 4.5): ε0 εr A / d
    core = next(p for p in r.plane_pairs if p.rail_layer == "In2.Cu")
    assert core.capacitance_f == pytest.approx(EPS0 * 4.5 * core.area_mm2 * 1e-6 / 1.24e-3)
    assert sorted(c.ref for c in r.decaps) == want["caps"]
    assert len(r.decaps) == 32


def test_rail_on_openpci2_numbers() -> None:
    """The same rail with the edge class defaults: every figure from the board, exact."""
    board = read_board(str(FIXTURE_BOARDS["openpci2-backplane"]))
    r = next(x for x in Analysis(board).rails if x.name == "+3V3")
    assert r.source == "detected" and r.voltage == 3.3
    labels = [g.label for g in r.groups()]
    assert labels[0].startswith("100 µF electrolytic")
    params = {"target_ohm": 0.001, "vrm": {"r_ohm": 1e-4, "l_h": 1e-9}}
    # no BGA on the board: +3V3 is no core rail, and the class target (a core's) is not its own
    res = pdn.evaluate(r, params)
    assert r.role is None and not res.over and res.target_ohm is None
    assert res.need_load and "ripple_pct, transient_a" in res.need_load[0]
    assert res.basis["vrm"] == "default"
    # declared the core rail, it is held to the class target
    res = pdn.evaluate(dataclasses.replace(r, role="core", role_basis="declared"), params)
    assert res.over and res.assumed == ("target_ohm", "vrm")
    assert res.basis["rail_role"] == "declared" and res.basis["vrm"] == "default"
    band = res.f_hz <= pdn.MODEL_MAX_HZ * (1 + 1e-9)
    assert res.worst_z_ohm == pytest.approx(float(res.z_ohm[band].max()))


def test_pipeline_rail_from_config_on_crosslink() -> None:
    """A declared rail beats detection: its own target V·ripple/ΔI and VRM, the board's planes
    and capacitors, one finding with the worst point of the real curve."""
    from accel_drc.pipeline import check_board

    board = read_board(str(FIXTURE_BOARDS["crosslink-nx-video-converter"]))
    cfg = {
        "rails": [
            {
                "name": "DDR",
                "nets": [r"\+1V5"],
                "voltage": 1.5,
                "ripple_pct": 2,
                "transient_a": 3,
                "vrm": {"r_ohm": 0.002, "l_h": 2e-9},
            }
        ]
    }
    res = check_board(board, cfg, board_class="edge")
    pdn_f = [f for f in res.findings if f.check == "pdn_impedance"]
    # the board's other rails stay listed, not declared: info, never dropped (issue 27 §5)
    others = [f for f in pdn_f if f.evidence["rail"] != "DDR"]
    assert others and all(f.evidence["source"] == "detected" for f in others)
    assert all(f.severity == Severity.INFO and "(not declared)" in f.message for f in others)
    [f] = [f for f in pdn_f if f.evidence["rail"] == "DDR"]
    # 1.5 V × 2 % / 3 A = 10 mΩ
    assert f.limit == pytest.approx(0.01)
    assert f.evidence["target_source"] == "V·ripple/ΔI (config)"
    assert f.evidence["assumed_from_class"] == []
    rail = next(r for r in res.extras["rails"] if r["name"] == "DDR")
    assert rail["nets"] == ["+1V5"] and rail["vrm"]["r_ohm"] == 0.002
    band = [p for p in rail["impedance"] if 1e4 <= p["f_hz"] <= 1e8 * (1 + 1e-9)]
    worst = max(band, key=lambda p: p["z_ohm"])
    assert f.measured == pytest.approx(worst["z_ohm"])
    assert f.evidence["worst_f_hz"] == pytest.approx(worst["f_hz"])
    assert f.measured > 0.01
    # every capacitor between +1V5 and GND is in the network, each value read from the board
    assert len(rail["decaps"]) == 10 and rail["unread_caps"] == []


def test_inspect_details_vias_and_rails() -> None:
    from accel_drc.inspection import inspect_document

    board = read_board(str(FIXTURE_BOARDS["openpci2-backplane"]))
    doc = inspect_document(board, details=("vias", "rails"), board_class="edge")
    det = doc.get("details", doc)
    vias = det["vias"]
    # every via, then every plated through-hole pad (62 on this board)
    assert len(vias) == len(board.vias) + 62
    assert set(vias[0]) >= {
        "x", "y", "net", "start", "end", "type", "connected",
        "top_stub_mm", "bottom_stub_mm", "stub_mm", "backdrill",
    }  # fmt: skip
    rails = {r["name"]: r for r in det["rails"]}
    r = rails["+3V3"]
    assert len(r["decaps"]) == 32 and len(r["plane_pairs"]) == 2
    assert {tuple(p["layers"]) for p in r["plane_pairs"]} == {
        ("F.Cu", "In1.Cu"),
        ("In2.Cu", "In1.Cu"),
    }
    assert r["target_source"] is None and r["need_load"] and len(r["impedance"]) == 201
    assert r["model_max_hz"] == pdn.MODEL_MAX_HZ and "judged" in r["model_band"]


def _rail_p12_both_ways(tmp_path, extra_config: str) -> tuple[dict, Any]:
    """openpci2-backplane with a declared core rail P12 (12 V, 3 % ripple) in class inference:
    the rail's row from `inspect --detail rails` and its pdn_impedance finding from `check`."""
    import shutil

    from accel_drc.config import load_config
    from accel_drc.inspection import inspect_document
    from accel_drc.packs import load_library
    from accel_drc.pipeline import check_board

    src = FIXTURE_BOARDS["openpci2-backplane"]
    for f in src.parent.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    (tmp_path / "accel-drc.yaml").write_text(
        "class: inference\nrails:\n  - {name: P12, nets: ['[+]12V'], role: core, voltage: 12,"
        " ripple_pct: 3}\n" + extra_config,
        encoding="utf-8",
    )
    path = str(tmp_path / src.name)
    lib = load_library()
    cfg = load_config(None, path, lib)
    board = read_board(path)
    doc = inspect_document(board, details=("rails",), config=cfg)
    rail = {r["name"]: r for r in doc.get("details", doc)["rails"]}["P12"]
    res = check_board(board, cfg, board_file=path, library=lib)
    (f,) = [x for x in res.findings if x.check == "pdn_impedance" and "P12" in x.message]
    return rail, f


def test_inspect_rails_use_the_config_class_like_check(tmp_path) -> None:
    """`inspect --detail rails` and `check` judge a rail with the same class defaults when the
    class comes from accel-drc.yaml (not only from --class)."""
    rail, f = _rail_p12_both_ways(tmp_path, "")
    # 12 V × 3 % (inference default ripple) / 400 A (inference default transient) = 0.9 mΩ
    assert rail["target_ohm"] == pytest.approx(12 * 0.03 / 400)
    assert f.limit == pytest.approx(rail["target_ohm"])


def test_inspect_rails_follow_the_projects_rule_override(tmp_path) -> None:
    """`inspect --detail rails` evaluates with the rule `check` applies: the class pack's
    pdn_impedance params after the project's `rules:` override, not the shipped pack's."""
    rail, f = _rail_p12_both_ways(
        tmp_path, "rules:\n  inference.pdn_impedance:\n    params: {default_transient_a: 100}\n"
    )
    # 12 V × 3 % / 100 A (the project's transient, not the pack's 400 A) = 3.6 mΩ
    assert rail["target_ohm"] == pytest.approx(12 * 0.03 / 100)
    assert f.limit == pytest.approx(rail["target_ohm"])


def test_partial_rail_parameters_filled_from_class() -> None:
    b = board4((), (cap_fp("C1", "100n", "C_0402_1005Metric", 2),))
    spec = {"name": "r", "nets": ["[+]1V8"], "role": "core", "voltage": 1.8, "ripple_pct": 5}
    rail = pdn.find_rails(b, {"rails": [spec]})[0]
    res = pdn.evaluate(
        rail,
        {
            "target_ohm": 0.001,
            "default_voltage": 0.8,
            "default_ripple_pct": 5,
            "default_transient_a": 9,
            "vrm": {"r_ohm": 1e-4, "l_h": 1e-9},
        },
    )
    # 1.8 V × 5 % (own) / 9 A (class) = 10 mΩ
    assert res.target_ohm == pytest.approx(0.01)
    assert res.target_source == "V·ripple/ΔI (config + class)"
    assert res.assumed == ("default_transient_a", "vrm")
    assert res.basis["transient_a"] == "default" and res.basis["ripple_pct"] == "declared"
    # the same rail without role: core is judged on its own load only: none declared, no target
    del spec["role"]
    rail = pdn.find_rails(b, {"rails": [spec]})[0]
    res = pdn.evaluate(rail, {"target_ohm": 0.001, "default_transient_a": 9})
    assert res.target_ohm is None and "transient_a" in res.need_load[0]


def test_capacitor_overrides_from_config_file(tmp_path) -> None:
    """`capacitors:` in accel-drc.yaml is validated and reaches the decap models."""
    from accel_drc.config import load_config
    from accel_drc.errors import InputError

    good = tmp_path / "accel-drc.yaml"
    good.write_text(
        "rails:\n  - name: core\n    nets: ['\\+1V8']\n"
        "capacitors:\n  mounting_esl_h: 1.0e-10\n  parts:\n    C1: {esl_h: 7.0e-10, esr_ohm: 0.05}\n",
        encoding="utf-8",
    )
    cfg = load_config(str(good), None)
    b = board4((), (cap_fp("C1", "100n", "Capacitor_SMD:C_0402_1005Metric", 2),))
    rail = pdn.find_rails(b, cfg.data)[0]  # the pipeline hands the analysis the validated mapping
    (cap,) = rail.decaps
    assert cap.esl_h == pytest.approx(7.0e-10) and cap.esr_ohm == pytest.approx(0.05)

    bad = tmp_path / "bad.yaml"
    bad.write_text("capacitors:\n  parts:\n    C1: {esl: 1}\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_config(str(bad), None)
    assert str(err.value).startswith(f"{bad}:3")


def test_overlap_area_clip_equals_plain_intersection() -> None:
    """The bounding-box clip is only a speed-up: same area as the plain intersection."""
    import shapely

    ground = shapely.Polygon(
        [(0, 0), (100, 0), (100, 80), (0, 80)], holes=[[(10, 10), (20, 10), (20, 20), (10, 20)]]
    )
    rail = shapely.Polygon([(5, 5), (30, 5), (30, 25), (5, 25)])
    assert planes._overlap_area(rail, ground) == pytest.approx(25 * 20 - 100, rel=1e-12)
    assert planes._overlap_area(rail, ground) == pytest.approx(rail.intersection(ground).area)
    far = shapely.box(200, 200, 210, 210)
    assert planes._overlap_area(far, ground) == 0.0


def test_overlap_area_split_into_quadrants_equals_plain_intersection(monkeypatch) -> None:
    """Big planes are cut into quadrants before the overlay (a speed-up only): with the split
    forced down to a few vertices, a plane with hundreds of antipad holes against a ground with
    its own holes still gives the plain overlay's area, and the exact one."""
    import shapely

    holes_r = [
        shapely.box(x, y, x + 0.6, y + 0.6) for x in range(2, 60, 3) for y in range(2, 40, 3)
    ]
    holes_g = [
        shapely.Point(x + 1.5, y + 0.7).buffer(0.4, quad_segs=8)
        for x in range(0, 70, 4)
        for y in range(0, 45, 4)
    ]
    rail = shapely.box(0, 0, 62, 42).difference(shapely.union_all(holes_r))
    ground = shapely.box(-5, -5, 70, 45).difference(shapely.union_all(holes_g))
    plain = shapely.area(shapely.intersection(rail, ground))
    monkeypatch.setattr(planes, "_SPLIT_VERTICES", 50)
    split = planes._overlay_area(rail, ground)
    assert split == pytest.approx(plain, rel=1e-12)
    # and the exact value: the rail minus the ground's holes inside it, by inclusion-exclusion
    lost = shapely.area(shapely.intersection(rail, shapely.union_all(holes_g)))
    assert split == pytest.approx(shapely.area(rail) - lost, rel=1e-12)
    monkeypatch.setattr(planes, "_SPLIT_DEPTH", 0)  # no split at all: the same number
    assert planes._overlay_area(rail, ground) == pytest.approx(plain, rel=1e-12)


def _holed_planes() -> list[tuple[str, object, object]]:
    """(case, rail, ground) pairs of planes with antipad holes in the shapes that test the
    shells-and-holes sum: concentric antipads on both layers (the same via), holes across the
    other plane's edge, a rail of several islands, a ground of several parts, a rail inside a
    ground hole (no overlap at all), a hole of one plane holding a whole island of the other."""
    import shapely

    def disc(x: float, y: float, r: float, segs: int = 8) -> object:
        return shapely.Point(x, y).buffer(r, quad_segs=segs)

    vias = [(x + 0.5, y + 0.5) for x in range(1, 60, 3) for y in range(1, 40, 3)]
    rail = shapely.box(0, 0, 62, 42).difference(
        shapely.union_all([disc(x, y, 0.45) for x, y in vias[::2]])
    )
    # the ground's antipads: the same vias (concentric, other size and phase) and its own
    ground = shapely.box(-5, 20, 70, 80).difference(
        shapely.union_all(
            [disc(x, y, 0.6, 7) for x, y in vias[1::3]] + [disc(x + 1.2, y, 0.3) for x, y in vias]
        )
    )
    islands = shapely.union_all([shapely.box(x, 0, x + 8, 60) for x in range(0, 60, 12)])
    islands = islands.difference(shapely.union_all([disc(x, y, 0.5) for x, y in vias]))
    parts = shapely.union_all([shapely.box(-3, y, 65, y + 6) for y in range(-2, 45, 9)])
    parts = parts.difference(shapely.union_all([disc(x + 0.7, y, 0.4) for x, y in vias]))
    inside_hole = disc(30.0, 30.0, 0.2)
    big_hole = shapely.box(0, 0, 40, 40).difference(shapely.box(10, 10, 30, 30))
    island = shapely.box(12, 12, 20, 20).difference(disc(16, 16, 1.0))
    return [
        ("antipads on both planes", rail, ground),
        ("islands against a plane", islands, ground),
        ("islands against parts", islands, parts),
        ("plane against parts", rail, parts),
        ("rail inside a ground hole", inside_hole, ground.difference(disc(30.0, 30.0, 0.5))),
        ("island inside a rail hole", island, big_hole),
        ("rail hole holding a ground island", big_hole, island),
    ]


@pytest.mark.parametrize("case", range(7))
def test_overlap_by_shells_and_holes_equals_the_overlay(case: int) -> None:
    """The rails' plane-pair areas are summed over shells and holes (inclusion–exclusion:
    A(E ∩ F) − Σ A(h ∩ F) − Σ A(g ∩ E) + Σ A(h ∩ g)) instead of one overlay of two planes with
    thousands of holes.  Stated tolerance: 1e-12 relative to the exact overlay (GEOS's
    ``intersection`` of the whole geometries), and exactly 0 where they do not overlap (a sum
    near its own rounding is handed to the overlay).  On vme-wren's 47 plane pairs the worst
    is 4e-15, on the Thor carrier's 43 9e-15 (:func:`test_vme_wren_plane_pairs_equal_the_overlay`)."""
    import shapely

    name, rail, ground = _holed_planes()[case]
    exact = float(shapely.area(shapely.intersection(rail, ground)))
    got = planes._overlap_area(rail, ground)
    if exact == 0.0:
        assert got == 0.0, name
    else:
        assert got == pytest.approx(exact, rel=1e-12, abs=0), name
    both = planes._holed_overlap_area(planes._Holed(rail), planes._Holed(ground))
    # the sum itself is used wherever it is not near its own rounding
    assert both is None or both == pytest.approx(exact, rel=1e-12, abs=0), name


def test_overlap_near_its_rounding_goes_to_the_overlay(monkeypatch) -> None:
    """A rail inside a ground antipad: the shells overlap, the holes take all of it back, and
    the sum is a rounding residue, not an area: the overlay decides (0, no plane pair)."""
    import shapely

    calls = []
    real = planes._overlay_area

    def spy(rail: object, ground: object) -> float:
        calls.append(1)
        return real(rail, ground)

    monkeypatch.setattr(planes, "_overlay_area", spy)
    _name, rail, ground = _holed_planes()[4]
    assert planes._holed_overlap_area(planes._Holed(rail), planes._Holed(ground)) is None
    assert planes._overlap_area(rail, ground) == 0.0 and calls == [1]
    calls.clear()
    _name, rail, ground = _holed_planes()[0]
    assert planes._overlap_area(rail, ground) == pytest.approx(
        float(shapely.area(shapely.intersection(rail, ground))), rel=1e-12
    )
    assert calls == []  # a real overlap is summed, no overlay


@pytest.mark.slow
@pytest.mark.parametrize("which", ["vme-wren", "thor"])
def test_vme_wren_plane_pairs_equal_the_overlay(which: str) -> None:
    """Every plane pair the rails of vme-wren and of KiCad 10's Jetson AGX Thor carrier can
    have (every detected rail's fill on every layer against the ground union on each adjacent
    one): the shells-and-holes area equals the exact overlay's to 1e-12 relative, and is 0
    exactly where the overlay's is."""
    import shapely

    path = (
        SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
        if which == "vme-wren"
        else Path("/var/cache/accel-drc/kicad10-sid/usr/share/kicad/demos")
        / "jetson-agx-thor-baseboard"
        / "jetson-agx-thor-baseboard.kicad_pcb"
    )
    need(path.is_file(), f"{path} is not on this machine")
    b = read_board(str(path))
    gnd = {i for i, n in enumerate(b.nets) if i and pdn.is_ground(n)}
    lazy = planes._LazyRegions(
        [z for z in b.zones if z.net in gnd and not z.keepout], b.layer_count
    )
    n = 0
    for _name, ids in pdn.detect_rails(b, gnd, pdn_rails._capacitor_footprints(b)):
        zones = [z for z in b.zones if z.net in ids and not z.keepout]
        for li in range(b.layer_count):
            rail = pdn.layer_region(zones, li)
            for gl in (li - 1, li + 1):
                if rail is None or not 0 <= gl < b.layer_count or lazy[gl] is None:
                    continue
                exact = float(shapely.area(shapely.intersection(rail, lazy[gl])))
                got = planes._overlap_area(rail, lazy[gl], planes._Holed(rail), lazy.holed(gl))
                assert got == pytest.approx(exact, rel=1e-12, abs=0)
                n += 1
    assert n > 40


def test_rails_on_threads_equal_serial(monkeypatch) -> None:
    """The rails are measured on a thread pool, and the pipeline starts them on a background
    thread: the same rails, plane pairs and findings as one thread doing it all."""
    from accel_drc import concurrency, pipeline
    from accel_drc.analysis import Analysis as A

    path = FIXTURE_BOARDS["openpci2-backplane"]

    def run() -> tuple[list, list]:
        b = read_board(str(path))
        r = pipeline.check_board(b)
        rails = [
            (x.name, [(p.rail_layer, p.ground_layer, p.area_mm2) for p in x.plane_pairs])
            for x in pdn.find_rails(b)
        ]
        return rails, [(f.rule, f.status.value, f.measured, f.net, f.message) for f in r.findings]

    threaded = run()
    monkeypatch.setattr(concurrency, "workers", lambda: 1)
    monkeypatch.setattr(planes, "workers", lambda: 1)
    monkeypatch.setattr(A, "prefetch", lambda self, name: None)
    serial = run()
    assert threaded == serial
    assert any(pairs for _name, pairs in threaded[0])  # the board has plane pairs to compare


def test_prefetched_rails_error_becomes_a_crash_finding(monkeypatch) -> None:
    """A bug in the rails computed on the background thread is not lost with the thread: the
    PDN rule reports it as an error, as it would if the rails were computed in line."""
    from accel_drc import pipeline
    from accel_drc.analysis import Analysis as A

    def boom(self: A) -> list:
        raise RuntimeError("rails exploded")

    monkeypatch.setattr(A, "_compute_rails", boom)
    b = read_board(str(FIXTURE_BOARDS["openpci2-backplane"]))
    r = pipeline.check_board(b)
    crashed = [f for f in r.findings if f.check == "pdn_impedance"]
    assert crashed and all("rails exploded" in f.message for f in crashed)
    assert all(f.severity == Severity.ERROR for f in crashed)


def test_warm_regions_fills_the_cache_with_the_same_geometry() -> None:
    """The plugin makes plane fills valid ahead of the check: the cached geometry is what the
    check would have computed, and only ground and power zones are warmed."""
    import shapely

    rail = with_hole(rect(0, 0, 40, 40), rect(10, 10, 20, 20))
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rail,)}),
        Zone(net=1, net_name="GND", layers=(0,), filled={0: (rect(0, 0, 40, 40),)}),
        Zone(net=3, net_name="SIG", layers=(0,), filled={0: (rect(50, 0, 60, 10),)}),
    )
    pdn.warm_regions(zones, ("", "GND", "+1V8", "SIG")).join(timeout=30)
    assert 1 in zones[0].__dict__.get("_regions", {}) and 0 in zones[1].__dict__["_regions"]
    assert "_regions" not in zones[2].__dict__
    assert shapely.area(zones[0].region(1)) == pytest.approx(1600 - 100)
    fresh = Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rail,)})
    assert shapely.equals(fresh.region(1), zones[0].region(1))
    assert zones[0].region(0) is None


# --- issue 19: only the core rail is held to the class target ---------------------------------


def bga_fp(ref: str, ball_nets: dict[int, int], rows: str = "ABCDEFGHJK") -> Footprint:
    """A 10 × 10 BGA whose first balls carry the given nets (net id -> ball count), the rest
    unconnected."""
    names = [f"{r}{c}" for r in rows for c in range(1, 11)]
    nets: list[int] = []
    for net, n in ball_nets.items():
        nets += [net] * n
    nets += [0] * (len(names) - len(nets))
    pads = tuple(
        Pad(number=nm, net=nt, type="smd", shape="circle", x=0.0, y=0.0, width=0.4, height=0.4)
        for nm, nt in zip(names, nets)
    )
    return Footprint(ref, "XCZU4CG", "Package_BGA:BGA-100_10x10mm", "F.Cu", 0, 0, pads=pads)


def board_rails(fps: tuple[Footprint, ...], nets: tuple[str, ...]) -> Board:
    """board4 with a plane for every power net of ``nets`` (ids 2…) over a GND plane."""
    zones = [Zone(net=1, net_name="GND", layers=(2,), filled={2: (rect(0, 0, 100, 100),)})]
    zones += [
        Zone(net=k, net_name=nets[k], layers=(1,), filled={1: (rect(0, 10 * k, 100, 10 * k + 8),)})
        for k in range(2, len(nets))
    ]
    return dataclasses.replace(board4(tuple(zones), fps), nets=nets)


def test_core_rail_recognised_from_the_largest_bga() -> None:
    nets = ("", "GND", "P0V85", "P1V8", "P3V3")
    # P0V85 feeds 30 balls, P1V8 12, P3V3 2: P0V85 is the core (0.85 V ≤ 1 V)
    b = board_rails((bga_fp("U1", {2: 30, 3: 12, 4: 2, 1: 40}),), nets)
    rails = {r.name: r for r in pdn.find_rails(b)}
    core = rails["P0V85"]
    assert (core.role, core.role_basis) == ("core", "assumed")
    assert "30 of the 100 balls" in core.role_evidence and "U1" in core.role_evidence
    assert rails["P1V8"].role is None and rails["P3V3"].role is None
    p = {"target_ohm": 2e-4, "vrm": {"r_ohm": 1e-4, "l_h": 1e-9}}
    res = pdn.evaluate(core, p)
    assert res.target_source == "class target_ohm (core rail)" and res.target_ohm == 2e-4
    assert res.basis["rail_role"] == "assumed" and res.basis["vrm"] == "default"
    other = pdn.evaluate(rails["P3V3"], p)
    assert other.target_ohm is None and other.need_load
    # the check: the core is a violation resting on an assumption (settled: cannot_verify);
    # the others are cannot_verify naming what to declare, with what they would hold
    a = StandIn(b)
    out = check_pdn_impedance(CheckContext(b, a, "inference"), rule(**p, f_min_hz=1e4))
    by = {f.evidence["rail"]: f for f in out.findings}
    assert by["P0V85"].status == Status.VIOLATION
    assert "recognised as the core rail" in by["P0V85"].evidence["role_evidence"]
    assert "role: core" in by["P0V85"].evidence["declare"]
    from accel_drc.basis import settle

    s = settle(by["P0V85"])
    assert s.status == Status.CANNOT_VERIFY and "assumed rail_role" in s.message
    f3 = by["P3V3"]
    assert f3.status == Status.CANNOT_VERIFY and "ripple_pct: <%>" in f3.evidence["declare"]
    # at 3.3 V and 5 % ripple the network holds a step of V·5 %/|Z|max
    assert f3.evidence["max_step_a"]["5%"] == pytest.approx(3.3 * 0.05 / f3.measured, rel=1e-3)


def test_core_rail_not_recognised_above_a_core_voltage_or_on_a_tie() -> None:
    nets = ("", "GND", "P1V8", "P0V85")
    # the rail with most balls is 1.8 V: no core rail is guessed (the 0.85 V one has fewer)
    b = board_rails((bga_fp("U1", {2: 30, 3: 12}),), nets)
    assert all(r.role is None for r in pdn.find_rails(b))
    # two rails with the same count: no guess either
    b = board_rails((bga_fp("U1", {2: 20, 3: 20}),), ("", "GND", "P0V9", "P0V85"))
    assert all(r.role is None for r in pdn.find_rails(b))
    # too few balls to be a core
    b = board_rails((bga_fp("U1", {2: 3}),), ("", "GND", "P0V85"))
    assert all(r.role is None for r in pdn.find_rails(b))


def test_declared_role_and_own_load() -> None:
    nets = ("", "GND", "VCORE", "P3V3")
    b = board_rails((bga_fp("U1", {2: 30}),), nets)
    cfg = {
        "rails": [
            # a declared core rail: the class target, no recognition needed
            {"name": "VCORE", "nets": ["VCORE"], "role": "core", "vrm": {"r_ohm": 1e-4, "l_h": 1e-10}},
            # a declared io rail with its own load: V·ripple/ΔI, all declared
            {"name": "P3V3", "nets": ["P3V3"], "role": "io", "voltage": 3.3, "ripple_pct": 5,
             "transient_a": 2, "vrm": {"r_ohm": 3e-3, "l_h": 1e-8}},
        ]
    }  # fmt: skip
    rails = {r.name: r for r in pdn.find_rails(b, cfg)}
    assert (rails["VCORE"].role, rails["VCORE"].role_basis) == ("core", "declared")
    res = pdn.evaluate(rails["VCORE"], {"target_ohm": 2e-4})
    assert res.basis["rail_role"] == "declared" and res.basis["vrm"] == "declared"
    res = pdn.evaluate(rails["P3V3"], {"target_ohm": 2e-4})
    assert res.target_ohm == pytest.approx(3.3 * 0.05 / 2)  # its own, not the class's
    assert {res.basis[k] for k in ("voltage", "ripple_pct", "transient_a", "vrm")} == {"declared"}


def test_config_role_schema(tmp_path) -> None:
    from accel_drc.config import load_config
    from accel_drc.errors import InputError
    from accel_drc.packs import load_library

    lib = load_library()
    p = tmp_path / "accel-drc.yaml"
    p.write_text("rails:\n  - {name: V, nets: ['V'], role: core}\n", encoding="utf-8")
    assert load_config(str(p), None, lib).data["rails"][0]["role"] == "core"
    p.write_text("rails:\n  - {name: V, nets: ['V'], role: kore}\n", encoding="utf-8")
    with pytest.raises(InputError):
        load_config(str(p), None, lib)


def test_model_band_and_network_model_corners() -> None:
    """The verdict covers the class band only up to the lumped model's limit, and a violation
    that also holds at the low ends of the default ESL/ESR ranges does not rest on them."""
    fps = (cap_fp("C1", "22u", "Capacitor_SMD:C_1206_3216Metric", 2),)
    b = board4((), fps)
    spec = {"name": "+1V8", "nets": ["[+]1V8"], "voltage": 1.8, "ripple_pct": 3,
            "transient_a": 4, "vrm": {"r_ohm": 3e-3, "l_h": 9.5e-9}}  # fmt: skip
    rail = pdn.find_rails(b, {"rails": [spec]})[0]
    res = pdn.evaluate(rail, {"f_min_hz": 1e4, "f_max_hz": 1e8})
    assert res.f_max_hz == pdn.MODEL_MAX_HZ and res.worst_f_hz <= pdn.MODEL_MAX_HZ * 1.000001
    assert res.over and res.basis["network_model"] == "default"
    # the low-ESL corner is evaluated by hand: ESL × 0.5, ESR × 0.55 of the default model
    c = rail.decaps[0]
    low = impedance(res.f_hz, (CapGroup(c.value_f, c.package, c.esl_h * 0.5, c.esr_ohm * 0.55, ("C1",)),), None, rail.vrm)  # fmt: skip
    band = (res.f_hz >= 1e4) & (res.f_hz <= pdn.MODEL_MAX_HZ * (1 + 1e-9))
    want = "fail" if low[band].max() > res.target_ohm else "pass"
    assert res.candidates["low ESL + low ESR"] == want
    # a part the project declares keeps its model in every corner
    cfg = {"rails": [spec], "capacitors": {"parts": {"C1": {"esl_h": 1.6e-9, "esr_ohm": 0.005}}}}
    rail2 = pdn.find_rails(b, cfg)[0]
    res2 = pdn.evaluate(rail2, {"f_min_hz": 1e4, "f_max_hz": 1e8})
    assert res2.basis["network_model"] == "declared" and res2.candidates == {}
    # the remedy numbers: C ≥ 1/(2π f_lo Zt), L ≤ Zt/(2π f_hi) for the first failing band
    text = pdn.remedy(res)
    t = res.target_ohm
    c_now = sum(c.value_f for c in rail.decaps)
    l_now = 1 / sum(1 / c.esl_h for c in rail.decaps)
    for b0 in res.over_bands:
        c_need = 1 / (2 * math.pi * b0.f_lo_hz * t)
        l_need = t / (2 * math.pi * b0.f_hi_hz)
        # each requirement the rail misses is named, with the number that would meet it
        assert (pdn._si(c_need, "F") in text) == (c_now < c_need)
        assert (pdn._si(l_need, "H") in text) == (l_now > l_need)


def test_plane_dielectric_of_a_kicad_default_stackup_is_a_default() -> None:
    from accel_drc.packs import load_library

    mats = load_library().materials
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rect(0, 0, 50, 50),)}),
        Zone(net=1, net_name="GND", layers=(2,), filled={2: (rect(0, 0, 50, 50),)}),
    )
    b = board4(zones)
    assert pdn.find_rails(b, None, mats)[0].plane_dielectric_basis == "declared"
    st = b.stackup
    layers = tuple(
        dataclasses.replace(sl, material="FR4", epsilon_r=4.5, loss_tangent=0.02)
        if sl.is_dielectric
        else sl
        for sl in st.layers
    )
    b2 = dataclasses.replace(b, stackup=Stackup(layers))
    assert pdn.find_rails(b2, None, mats)[0].plane_dielectric_basis == "default"
    # declared in the config: no longer KiCad's
    cfg = {"stackup": {"materials": {"dielectric 2": {"material": "FR4 TG170"}}}}
    assert pdn.find_rails(b2, cfg, mats)[0].plane_dielectric_basis == "declared"


def test_rail_position_ties_go_to_the_first_zone_whatever_the_last_bits() -> None:
    """Copies of one fill shape at different places have equal areas only up to the last bits
    of the shoelace sum (which depend on the coordinates); the rail's position is the first of
    the largest, not whichever copy's rounding came out highest (a 1e-9 relative tie)."""
    shape = np.array([[0.0, 0.0], [1.1, 0.0], [1.1, 2.3], [0.3, 2.3], [0.0, 0.7]])
    offsets = [(153.558434, 253.120535), (7.0, 9.0), (211.181, 71.12), (0.1, 0.2)]
    zones = tuple(
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (shape + np.array(o),)})
        for o in offsets
    )
    areas = [z.filled_area_mm2(1) for z in zones]
    assert max(areas) - min(areas) <= 1e-12 * max(areas)  # equal up to rounding
    b = board4(zones)
    pos, layer = pdn_rails._rail_pos(b, {2})
    centre = (shape + np.array(offsets[0])).mean(axis=0)
    assert pos == (round(float(centre[0]), 3), round(float(centre[1]), 3))
    assert layer == "In1.Cu"


def _holed_plane() -> np.ndarray:
    """A 100×100 plane with 9 bridged 10×10 holes (KiCad's one-ring form), 60-odd vertices."""
    ring = rect(0, 0, 100, 100)
    for i in range(3):
        for j in range(3):
            x, y = 10 + 30 * i, 10 + 30 * j
            ring = with_hole(ring, rect(x, y, x + 10, y + 10))
    return ring


@pytest.mark.parametrize(
    "islands, want",
    [
        # inside a hole (70..80 × 10..20, no bridge crosses it): no overlap, the plane is never
        # built; a bridge crossing an island makes the test say "may overlap" (exact overlay)
        ((rect(72, 12, 78, 18),), None),
        ((rect(72, 12, 78, 18), rect(150, 150, 160, 160)), None),  # and one beside the board
        ((rect(22, 2, 28, 8),), 36.0),  # on the copper, touching no edge
        ((rect(15, 15, 25, 25),), 75.0),  # across a hole's edge: 100 − 25
        ((rect(72, 12, 78, 18), rect(22, 2, 28, 8)), 36.0),  # one in a hole, one on the copper
        ((rect(-5, -5, 200, 200),), 10000.0 - 900.0),  # a ground around the whole plane
    ],
)
def test_small_ground_islands_beside_a_big_plane(
    islands: tuple[np.ndarray, ...], want: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the ring test that lets a big rail plane skip building its region (planes._misses) must give
    # the same plane pairs as the exact overlay it short-cuts (forced by a huge ratio)
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (_holed_plane(),)}),
        Zone(net=1, net_name="GND", layers=(2,), filled={2: islands}),
    )
    calls: list[bool] = []
    real = planes._misses

    def spy(rings: Any, ground: Any) -> bool:
        calls.append(real(rings, ground))
        return calls[-1]

    monkeypatch.setattr(planes, "_misses", spy)
    monkeypatch.setattr(planes, "_MISS_RATIO", 1)  # the plane has more vertices than the islands
    got = pdn.find_rails(board4(zones))[0].plane_pairs
    assert calls == [want is None]  # the test ran; it said "misses" exactly when nothing overlaps
    areas = [p.area_mm2 for p in got]
    assert areas == ([] if want is None else [pytest.approx(want)])
    monkeypatch.setattr(planes, "_MISS_RATIO", 10**9)  # never short-cut: the plain overlay
    plain = pdn.find_rails(board4(zones))[0].plane_pairs
    assert [p.area_mm2 for p in plain] == areas


def test_inside_rings_even_odd_over_bridges() -> None:
    ring = _holed_plane()
    assert planes._inside_rings([ring], 5.0, 5.0)
    assert not planes._inside_rings([ring], 75.0, 15.0)  # in a hole
    assert not planes._inside_rings([ring], 150.0, 50.0)
    # on the height of a bridge (y = 10 joins the first hole to the outline)
    assert planes._inside_rings([ring], 25.0, 10.5)


def test_warm_regions_skips_fills_that_face_no_plane_of_the_other_kind() -> None:
    # +1V8 on In1 faces GND on F.Cu; +3V3 on B.Cu (index 3) faces only In2, where there is no
    # ground: the check never makes it valid, so neither does the warming thread
    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rect(0, 0, 40, 40),)}),
        Zone(net=1, net_name="GND", layers=(0,), filled={0: (rect(0, 0, 40, 40),)}),
        Zone(net=3, net_name="+3V3", layers=(3,), filled={3: (rect(0, 0, 40, 40),)}),
    )
    pdn.warm_regions(zones, ("", "GND", "+1V8", "+3V3")).join(timeout=30)
    assert 1 in zones[0].__dict__.get("_regions", {}) and 0 in zones[1].__dict__["_regions"]
    assert "_regions" not in zones[2].__dict__
    b = dataclasses.replace(board4(zones), nets=("", "GND", "+1V8", "+3V3"))
    rails = {r.name: r for r in pdn.find_rails(b)}
    assert rails["+3V3"].plane_pairs == () and len(rails["+1V8"].plane_pairs) == 1
    assert "_regions" not in zones[2].__dict__  # nor did the check build it


def _built(zones: tuple[Zone, ...]) -> set[tuple[str, int]]:
    """(net name, layer) of every fill made valid so far (:meth:`Zone.region`'s cache)."""
    return {(z.net_name, li) for z in zones for li in z.__dict__.get("_regions", {})}


def test_warm_regions_builds_one_of_identical_ground_fills_and_the_check_uses_it() -> None:
    """GND filled identically on In1 and B.Cu (vme-wren repeats one fill on In3, In8, In10), a
    +1V8 plane on In2 between them: the check builds one ground union for both (the lowest
    layer's), so the plugin's warming thread builds that one and no other; the check then
    builds nothing more, and its plane pairs are those of a run with no warming."""

    def zones() -> tuple[Zone, ...]:
        gnd = rect(0, 0, 40, 40)
        return (
            Zone(net=1, net_name="GND", layers=(1, 3), filled={1: (gnd,), 3: (gnd.copy(),)}),
            Zone(net=2, net_name="+1V8", layers=(2,), filled={2: (rect(5, 5, 30, 30),)}),
        )

    nets = ("", "GND", "+1V8")
    warmed = zones()
    pdn.warm_regions(warmed, nets).join(timeout=30)
    assert _built(warmed) == {("GND", 1), ("+1V8", 2)}
    rails = pdn.find_rails(dataclasses.replace(board4(warmed), nets=nets))
    assert _built(warmed) == {("GND", 1), ("+1V8", 2)}  # nothing built twice
    cold = pdn.find_rails(dataclasses.replace(board4(zones()), nets=nets))
    pairs = [(p.rail_layer, p.ground_layer, p.area_mm2) for p in rails[0].plane_pairs]
    assert pairs == [(p.rail_layer, p.ground_layer, p.area_mm2) for p in cold[0].plane_pairs]
    assert [(a, b) for a, b, _ in pairs] == [("In2.Cu", "In1.Cu"), ("In2.Cu", "B.Cu")]


def test_warm_regions_leaves_a_big_plane_beside_small_ground_islands_to_the_check() -> None:
    """A rail plane with over 8× the vertices of the facing ground (small islands away from it)
    is first tested on the file's rings by the check, which then never builds it: the warming
    thread does not build it either (vme-wren's 146k-vertex P3V3 plane on In5 cost the plugin's
    click 0.09 s of CPU for nothing)."""
    holes = [rect(x, y, x + 0.5, y + 0.5) for x in range(2, 38, 2) for y in range(2, 38, 2)]
    plane = rect(0, 0, 40, 40)
    for h in holes:
        plane = with_hole(plane, h)
    nets = ("", "GND", "+1V8")
    zones = (  # a ground island inside one of the plane's antipads: no overlap at all
        Zone(net=1, net_name="GND", layers=(1,), filled={1: (rect(36.1, 36.1, 36.4, 36.4),)}),
        Zone(net=2, net_name="+1V8", layers=(2,), filled={2: (plane,)}),
    )
    assert planes.regions_to_warm(zones, nets) == [(zones[0], 1)]
    pdn.warm_regions(zones, nets).join(timeout=30)
    assert _built(zones) == {("GND", 1)}
    rails = pdn.find_rails(dataclasses.replace(board4(zones), nets=nets))
    assert _built(zones) == {("GND", 1)} and rails[0].plane_pairs == ()


@pytest.mark.slow
def test_warm_regions_on_vme_wren_builds_what_the_check_uses() -> None:
    """On vme-wren the warming thread builds every plane fill the check makes valid but one
    (P1V2 on In5, which the check tests on its rings first and then builds), and next to
    nothing else (the B.Cu pours of nets that are no rail: a few hundred vertices)."""
    path = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
    need(path.is_file(), f"{path} is not on this machine")
    b = read_board(str(path))
    pdn.warm_regions(b.zones, b.nets).join(timeout=300)
    warmed = {(id(z), li): z for z in b.zones for li in z.__dict__.get("_regions", {})}
    Analysis(b).rails  # noqa: B018 (the fact is computed for its cache)
    used = {(id(z), li): z for z in b.zones for li in z.__dict__.get("_regions", {})}

    def verts(keys: set[tuple[int, int]], where: dict[tuple[int, int], Zone]) -> int:
        return sum(len(r) for k in keys for r in where[k].filled.get(k[1], ()))

    # warmed and never asked for: a reader's cache does not say, so ask the check's own list
    b2 = read_board(str(path))
    Analysis(b2).rails  # noqa: B018
    needed = {(z.net_name, li) for z in b2.zones for li in z.__dict__.get("_regions", {})}
    waste = {k for k, z in warmed.items() if (z.net_name, k[1]) not in needed}
    assert verts(waste, warmed) < 0.01 * verts(set(warmed), warmed)
    late = {(used[k].net_name, k[1]) for k in set(used) - set(warmed) if verts({k}, used)}
    assert late == {("P1V2", 5)}


def test_warm_regions_runs_then_on_its_thread_after_the_regions() -> None:
    """``then`` (the plugin's return-path fill warm-up) runs on the warm-up's own thread, once
    the regions are made: one thread of head starts, never two beside KiCad."""
    import threading

    zones = (
        Zone(net=2, net_name="+1V8", layers=(1,), filled={1: (rect(0, 0, 40, 40),)}),
        Zone(net=1, net_name="GND", layers=(0,), filled={0: (rect(0, 0, 40, 40),)}),
    )
    seen: list = []

    def then() -> None:
        seen.append((threading.current_thread().name, "_regions" in zones[0].__dict__))

    t = pdn.warm_regions(zones, ("", "GND", "+1V8"), then=then)
    t.join(timeout=30)
    assert seen == [(t.name, True)]
