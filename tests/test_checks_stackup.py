"""The stack-up checks on hand-made boards, with the expected findings worked out by hand."""

from __future__ import annotations

import pytest
from _h2_boards import cu, diel, make_board, rect, stackup
from accel_drc.analysis import Analysis
from accel_drc.basis import settle
from accel_drc.checks import CheckContext, load_all
from accel_drc.model import NetClassRules, StackupLayer
from accel_drc.packs import load_library, rules_for_class
from accel_drc.results import Severity, Status

LIB = load_library()


def run(board, kind, board_class="training", config=None, signal=None):
    """Run the class pack's rule of ``kind`` (and ``signal``) on ``board``."""
    rules, _ = rules_for_class(LIB, board_class)
    rule = next(r for r in rules if r.check == kind and r.signal == signal)
    a = Analysis(board, config or {}, LIB)
    ctx = CheckContext(board=board, analysis=a, board_class=board_class, config=config or {})
    return load_all()[kind](ctx, rule)


# A 6-layer stack-up used by several tests:
#   F.Cu | d1 Megtron 7 (0.002) | In1 GND plane | d2 "FR4" core (0.02) | In2 signal |
#   d3 Megtron 7 prepreg (0.002) | In3 +0V8 plane | d4 FR4 | In4 | d5 "Foo" | B.Cu
SIX = stackup(
    cu(),
    diel("d1", "Megtron 7", 3.4, 0.002, kind="prepreg"),
    cu(),
    diel("d2", "FR4", 4.5, 0.02),
    cu(),
    diel("d3", "R-5785(N)", 3.4, 0.002, kind="prepreg"),
    cu(0.07),
    diel("d4", "FR4 TG170", 4.4, 0.018),
    cu(),
    diel("d5", "Foo laminate", None, None),
    cu(),
)
NETS = ["GND", "+0V8", "NVL_TX0_P", "NVL_TX0_N", "NVL_RX0_P", "NVL_RX0_N", "SLOW"]
FULL = rect(0, 0, 100, 80)


def six(tracks, **kw):
    zones = [("GND", 1, FULL), ("+0V8", 3, FULL)]
    return make_board(6, NETS, tracks, zones, SIX, **kw)


NV = {"signals": {"nvlink4": ["NVL_.*"]}}


def test_layer_count_below_and_above_the_class_range():
    out = run(make_board(4), "layer_count", "training")
    assert out.checked == 1
    [f] = out.findings
    assert (f.measured, f.limit, f.unit, f.status, f.severity) == (
        4,
        20,
        "layers",
        Status.VIOLATION,
        Severity.ERROR,
    )
    [f] = run(make_board(10), "layer_count", "edge").findings  # edge: 4-8
    assert (f.measured, f.limit, f.severity) == (10, 8, Severity.WARNING)
    assert run(make_board(6), "layer_count", "edge").findings == []
    assert run(make_board(12), "layer_count", "inference").findings == []
    # 9-11 layers were in no class (edge 4-8, inference 12-24): the inference pack's workstation
    # row (8-12) closes the gap (issue 27 §6)
    for n in (8, 9, 10, 11):
        assert run(make_board(n), "layer_count", "inference").findings == []


def test_tg_per_dielectric_with_assumed_fr4_and_unknown_material():
    out = run(six([]), "tg", "training")  # min 170
    assert out.checked == 5
    by = {f.layer: f for f in out.findings}
    # d1, d3 Megtron 7 (200 DSC) pass; d4 FR4 TG170 = 170 passes (not below); d2 generic FR4
    # spans 130-170 °C: its lowest grade (a default) is below 170, so the violation is
    # conditional once settled, with the grades that would pass; d5 is unknown
    assert set(by) == {"d2", "d5"}
    assert (by["d2"].measured, by["d2"].limit, by["d2"].status) == (
        130.0,
        170.0,
        Status.VIOLATION,
    )
    assert by["d2"].evidence["basis"]["tg"] == "default"
    assert by["d2"].evidence["candidates"] == {
        "FR-4 Tg 130": "fail",
        "FR-4 Tg 150": "fail",
        "FR-4 Tg 170": "pass",
    }
    settled = settle(by["d2"])
    assert settled.status == Status.CANNOT_VERIFY and "passes FR-4 Tg 170" in settled.message
    assert "without a Tg grade" in by["d2"].message and "FR4 TG170" in by["d2"].evidence["declare"]
    # the remedy names library laminates that meet 170 °C, every one confirmed
    assert "Megtron 7" in by["d2"].evidence["remedy"] and "Tg ≥ 170" in by["d2"].evidence["remedy"]
    assert "generic FR-4 (Tg grade not declared)" not in by["d2"].evidence["remedy"]
    assert by["d5"].status == Status.CANNOT_VERIFY
    # the declare hint asks for the Tg of the material the board names, not for another laminate
    hint = by["d5"].evidence["declare"]
    assert "'Foo laminate'" in hint and "d5: {tg_c: <Tg (°C)>}" in hint and "Megtron" not in hint
    # edge (min 130): generic FR4 passes, d5 still cannot be verified
    assert [f.layer for f in run(six([]), "tg", "edge").findings] == ["d5"]
    # the config names d5's laminate: it is then checked
    cfg = {"stackup": {"materials": {"d5": {"material": "Tachyon 100G"}}}}
    assert [f.layer for f in run(six([]), "tg", "training", cfg).findings] == ["d2"]
    # a named grade below the limit is a violation: IS400 (150 DSC) on a training board
    cfg2 = {"stackup": {"materials": {"d5": {"material": "IS400 2116"}, "d2": {"tg_c": 175}}}}
    [f] = run(six([]), "tg", "training", cfg2).findings
    assert (f.layer, f.measured, f.limit, f.status) == ("d5", 150.0, 170.0, Status.VIOLATION)


def test_tg_of_ptfe_is_not_applicable_not_unknown():
    """RO3003 / PTFE have no glass transition (domain §2: Tg "n/a (PTFE)"): no finding, and
    certainly not a cannot-verify asking for a Tg that does not exist."""
    cfg = {"stackup": {"materials": {"d5": {"material": "RO3003"}}}}
    out = run(six([]), "tg", "training", cfg)
    assert out.checked == 5
    assert "d5" not in {f.layer for f in out.findings}
    # the same layer with a material not in the library is still unknown
    cfg = {"stackup": {"materials": {"d5": {"material": "Mystery 9000"}}}}
    assert "d5" in {f.layer for f in run(six([]), "tg", "training", cfg).findings}


def test_tg_without_stackup_is_cannot_verify():
    [f] = run(make_board(4), "tg", "edge").findings
    assert f.status == Status.CANNOT_VERIFY and "no stack-up" in f.message


def test_copper_weight_of_plane_layers():
    # In1 GND plane 35 µm (1 oz): a ground plane is not judged (issue 27 §6); In3 +0V8 plane
    # 70 µm (2 oz) passes training's 2 oz
    out = run(six([]), "copper_weight", "training")
    assert (out.checked, out.findings) == (1, [])
    # the +0V8 plane on In1 (35 µm): below the class's typical weight, and nobody described the
    # rail (no core rail either: no BGA): its current is unknown, so cannot verify at info,
    # naming what to declare (a described rail's thin plane is a warning: the test below)
    b = make_board(6, NETS, [], [("GND", 3, FULL), ("+0V8", 1, FULL)], SIX)
    [f] = run(b, "copper_weight", "training").findings
    assert (f.layer, f.net, f.measured, f.limit, f.unit) == ("In1.Cu", "+0V8", 1.0, 2.0, "oz")
    assert (f.status, f.severity) == (Status.CANNOT_VERIFY, Severity.INFO)
    assert f.evidence["thickness_mm"] == 0.035 and "rails:" in f.evidence["declare"]
    # marked on the board: inside the plane's fill, with the zone to select in KiCad
    assert f.pos is not None and 0 < f.pos[0] < 100 and 0 < f.pos[1] < 80
    assert f.items == ("zone-1",)
    assert run(b, "copper_weight", "inference").findings == []  # 1 oz is enough


def test_copper_weight_ground_plane_of_18um_is_not_an_error():
    """Issue 27 §6: an 18 µm GND plane failed every real board (vme-wren, the Thor carrier, a
    CM5 carrier, a DDR5 coupon); the seed's weight is for the power planes."""
    thin = stackup(cu(), diel("d1", "FR4", 4.5, 0.02), cu(0.018), diel("d2", "FR4", 4.5, 0.02),
                   cu(0.07), diel("d3", "FR4", 4.5, 0.02), cu())  # fmt: skip
    b = make_board(4, ["GND", "+0V8"], [], [("GND", 1, FULL), ("+0V8", 2, FULL)], thin)
    out = run(b, "copper_weight", "training")
    assert (out.checked, out.findings) == (1, [])


def test_copper_weight_solved_ir_drop_decides():
    """Where the rail's IR drop is solved, the solve decides: a 1 oz plane is not reported."""
    b = make_board(6, NETS, [], [("GND", 3, FULL), ("+0V8", 1, FULL)], SIX)
    rails = {"rails": [{"name": "VCORE", "nets": ["+0V8"], "voltage": 0.8}]}
    rules, _ = rules_for_class(LIB, "training")
    rule = next(r for r in rules if r.check == "copper_weight")
    a = Analysis(b, rails, LIB)
    ctx = CheckContext(board=b, analysis=a, board_class="training", config=rails)
    solved = type("R", (), {"nets": ("+0V8",), "missing": [], "error": None, "worst_drop_pct": 0.3})
    a.__dict__["irdrop"] = [solved]
    assert load_all()["copper_weight"](ctx, rule).findings == []
    # described but not solved (an input missing): the typical weight stands, as a warning
    unsolved = type("R", (), {"nets": ("+0V8",), "missing": ["sources"], "error": None,
                              "worst_drop_pct": None})  # fmt: skip
    a.__dict__["irdrop"] = [unsolved]
    [f] = load_all()["copper_weight"](ctx, rule).findings
    assert (f.status, f.severity) == (Status.VIOLATION, Severity.WARNING)
    # a rail the IR drop does not know (nobody described it, not the core rail): info
    a.__dict__["irdrop"] = []
    [f] = load_all()["copper_weight"](ctx, rule).findings
    assert (f.status, f.severity) == (Status.CANNOT_VERIFY, Severity.INFO)


def test_copper_weight_marker_lands_on_copper_of_a_c_shaped_plane():
    """A C-shaped plane's centroid is in the gap; the marker must sit on its copper."""
    import numpy as np
    import shapely

    c_shape = np.array(
        [[0, 0], [100, 0], [100, 20], [20, 20], [20, 60], [100, 60], [100, 80], [0, 80]], float
    )
    b = make_board(6, NETS, [], [("+0V8", 1, c_shape), ("GND", 3, FULL)], SIX)
    [f] = run(b, "copper_weight", "training").findings
    assert f.layer == "In1.Cu" and f.pos is not None
    assert shapely.Polygon(c_shape).contains(shapely.Point(f.pos))


def test_copper_weight_small_zone_and_a_power_typed_layer_are_not_planes():
    # a GND pour over 20 % of the board is not a plane (min fraction 0.25)
    b = make_board(
        4,
        ["GND"],
        [],
        [("GND", 1, rect(0, 0, 20, 80))],
        stackup(
            cu(),
            diel("d1", "FR4", 4.5, 0.02),
            cu(),
            diel("d2", "FR4", 4.5, 0.02),
            cu(0.018),
            diel("d3", "FR4", 4.5, 0.02),
            cu(),
        ),
    )
    [f] = run(b, "copper_weight", "edge").findings
    assert f.status == Status.CANNOT_VERIFY and "no power-rail plane" in f.message
    assert f.severity == Severity.INFO  # nothing to judge: not an unverified error
    # a layer KiCad types power with no rail's plane on it is not a plane either (issue 27 §6)
    b2 = make_board(4, ["GND"], [], [], b.stackup, kinds={2: "power"})
    out = run(b2, "copper_weight", "edge")
    assert (out.findings, out.checked) == ([], 0)
    # nor is a ground plane: a board whose planes are all ground has nothing to judge
    b3 = make_board(4, ["GND"], [], [("GND", 1, FULL)], b.stackup)
    assert run(b3, "copper_weight", "edge").findings == []


def test_laminate_df_stripline_takes_both_reference_dielectrics():
    # NVL_TX0 pair on In2 between the planes In1 (GND) and In3 (+0V8): dielectrics d2 (FR4 0.02)
    # above and d3 (Megtron 7 0.002) below; NVLink 4 allows 0.003 -> one finding naming d2
    b = six([("NVL_TX0_P", 2, (10, 10), (50, 10)), ("NVL_TX0_N", 2, (10, 10.2), (50, 10.2))])
    out = run(b, "laminate_df", "training", NV, signal="nvlink4")
    assert out.checked == 1
    [f] = out.findings
    assert (f.net, f.layer, f.measured, f.limit, f.status) == (
        "NVL_TX0",
        "In2.Cu",
        0.02,
        0.003,
        Status.VIOLATION,
    )
    assert f.evidence["geometry"] == "stripline"
    assert f.evidence["dielectric"] == "d2"
    assert [d["name"] for d in f.evidence["dielectrics"]] == ["d2", "d3"]
    assert "d2 (FR4, Df 0.02 from stack-up)" in f.message
    assert f.pos == (10.0, 10.0)
    assert f.items == (
        "00000000-0000-0000-0000-000000000000",
        "00000000-0000-0000-0000-000000000001",
    )


def test_laminate_df_microstrip_and_config_override():
    # F.Cu: microstrip over d1 Megtron 7 (0.002) -> fine; In2 again violates via d2
    b = six(
        [
            ("NVL_RX0_P", 0, (1, 1), (2, 1)),
            ("NVL_RX0_N", 0, (1, 2), (2, 2)),
            ("NVL_TX0_P", 2, (3, 3), (4, 3)),
        ]
    )
    out = run(b, "laminate_df", "training", NV, signal="nvlink4")
    assert out.checked == 2  # (NVL_RX0 pair, F.Cu) and (NVL_TX0 pair, In2.Cu)
    assert [(f.net, f.layer) for f in out.findings] == [("NVL_TX0", "In2.Cu")]
    # declaring d2 as Megtron 7 in the config clears it (its own 0.02 is then not used)
    cfg = {**NV, "stackup": {"materials": {"d2": {"material": "Megtron 7"}}}}
    assert run(b, "laminate_df", "training", cfg, signal="nvlink4").findings == []


def test_laminate_df_unknown_dielectric_and_no_planes():
    # In4 sits between d4 (FR4 TG170, 0.018) and d5 (unknown); planes above (In3) only
    b = six([("NVL_TX0_P", 4, (1, 1), (2, 1))])
    [f] = run(b, "laminate_df", "training", NV, signal="nvlink4").findings
    assert f.status == Status.VIOLATION and f.measured == 0.018  # d4 is over the limit already
    # with no plane anywhere, only the dielectrics directly above and below count
    b2 = make_board(6, NETS, [("NVL_TX0_P", 4, (1, 1), (2, 1))], [], SIX)
    [f2] = run(b2, "laminate_df", "training", NV, signal="nvlink4").findings
    assert [d["name"] for d in f2.evidence["dielectrics"]] == ["d4", "d5"]
    # B.Cu references the In3 plane through d5 (unknown) and d4 (0.018): d4 decides
    b3 = six([("NVL_TX0_P", 5, (1, 1), (2, 1))])
    [f3] = run(b3, "laminate_df", "training", NV, signal="nvlink4").findings
    assert [d["name"] for d in f3.evidence["dielectrics"]] == ["d5", "d4"]
    assert (f3.status, f3.measured, f3.evidence["geometry"]) == (
        Status.VIOLATION,
        0.018,
        "microstrip",
    )
    # only an unknown dielectric under the trace: cannot verify, with what to declare
    st = stackup(cu(), diel("d5", "Foo laminate", None, None), cu())
    b4 = make_board(2, NETS, [("NVL_TX0_P", 0, (1, 1), (2, 1))], [], st)
    [f4] = run(b4, "laminate_df", "training", NV, signal="nvlink4").findings
    assert f4.status == Status.CANNOT_VERIFY and f4.measured is None
    hint = f4.evidence["declare"]
    assert "'Foo laminate'" in hint and "d5: {loss_tangent:" in hint and "Megtron" not in hint


def test_laminate_df_uses_library_when_stackup_says_zero():
    # KiCad writes loss_tangent 0 when nobody set it: the library value of "7628" (FR-4) is used
    st = stackup(cu(), diel("d1", "7628", 4.2, 0.0, kind="prepreg"), cu())
    b = make_board(2, ["NVL_TX0_P"], [("NVL_TX0_P", 0, (1, 1), (2, 1))], [], st)
    [f] = run(b, "laminate_df", "training", NV, signal="nvlink4").findings
    assert f.measured == 0.02 and f.evidence["dielectrics"][0]["df_from"] == "library"


def test_laminate_df_sublayers_worst_slice_decides():
    from accel_drc.model import DielectricSublayer

    d = StackupLayer(
        "d1",
        "core",
        0.2,
        "Megtron 7",
        3.4,
        0.002,
        sublayers=(
            DielectricSublayer(0.1, "Megtron 7", 3.4, 0.002),
            DielectricSublayer(0.1, "370HR", 3.9, 0.025),
        ),
    )
    st = stackup(cu(), diel("x", "Megtron 7", 3.4, 0.002), cu())
    st = type(st)((st.layers[0], st.layers[1], d, st.layers[3], st.layers[4]))
    b = make_board(2, ["NVL_TX0_P"], [("NVL_TX0_P", 0, (1, 1), (2, 1))], [], st)
    [f] = run(b, "laminate_df", "training", NV, signal="nvlink4").findings
    assert f.measured == 0.025 and "Megtron 7 + 370HR" in f.message


def test_foil_declared_undeclared_and_default():
    b = six(
        [
            ("NVL_TX0_P", 0, (1, 1), (2, 1)),
            ("NVL_RX0_P", 2, (1, 1), (2, 1)),
            ("NVL_RX0_N", 4, (1, 1), (2, 1)),
        ]
    )
    cfg = {**NV, "stackup": {"foil": {"F.Cu": "HVLP", "In2.Cu": "rtf"}}}
    out = run(b, "foil", "training", cfg, signal="nvlink4")  # NVLink 4 needs VLP
    assert out.checked == 3
    by = {f.layer: f for f in out.findings}
    assert set(by) == {"In2.Cu", "In4.Cu"}
    assert (by["In2.Cu"].measured, by["In2.Cu"].limit, by["In2.Cu"].status) == (
        "RTF",
        "VLP",
        Status.VIOLATION,
    )
    assert by["In4.Cu"].status == Status.CANNOT_VERIFY
    assert (
        by["In4.Cu"]
        .evidence["declare"]
        .startswith("declare the foil grade of In4.Cu (the one your fab quotes) in accel-drc.yaml")
    )
    # both name the grades that meet the limit
    for f in by.values():
        assert f.evidence["remedy"].startswith("foil grades in rules/foils.yaml that meet VLP: VLP")
        assert "RTF" not in f.evidence["remedy"] and "HVLP4" in f.evidence["remedy"]
    assert by["In2.Cu"].evidence["basis"]["foil"] == "declared"
    # a default grade covers every layer not named
    cfg2 = {**NV, "stackup": {"foil": {"default": "HVLP2"}}}
    assert run(b, "foil", "training", cfg2, signal="nvlink4").findings == []
    # the board's own grade (IPC-2581) is used when the config is silent
    layers = tuple(
        StackupLayer(sl.name, sl.kind, sl.thickness_mm, copper_index=sl.copper_index, foil="VLP")
        if sl.is_copper
        else sl
        for sl in SIX.layers
    )
    b2 = make_board(6, NETS, [("NVL_TX0_P", 0, (1, 1), (2, 1))], [], type(SIX)(layers))
    assert run(b2, "foil", "training", NV, signal="nvlink4").findings == []


def test_material_consistency():
    st = stackup(
        cu(),
        diel("d1", "Megtron 7", 4.5, 0.02),
        cu(),
        diel("d2", "FR4", 4.5, 0.02),
        cu(),
        diel("d3", "Megtron 6", 3.5, 0.005),
        cu(),
    )
    out = run(make_board(4, stack=st), "material_consistency", "edge")
    assert out.checked == 3
    by = {f.layer: f for f in out.findings}
    assert set(by) == {"d1", "d2"}  # Megtron 6 at 0.005 is inside 0.002-0.005 (+50 %)
    assert (
        by["d1"].status == Status.VIOLATION
        and by["d1"].measured == 0.02
        and by["d1"].limit == 0.002
    )
    assert "loss tangent 0.02 is outside" in by["d1"].message
    assert by["d2"].rule == "edge.material_consistency.kicad_default"
    assert (by["d2"].severity, by["d2"].status) == (Severity.INFO, Status.CANNOT_VERIFY)


@pytest.mark.parametrize(
    ("net", "cls", "expected", "how"),
    [
        ("/PCIe_TX0_P", "Default", "pcie4", "family_net_name"),
        ("PCIE5_TX0_P", "Default", "pcie5", "net_name"),
        ("/LANE_TX0_P", "PCIe_Gen5", "pcie5", "net_class"),
        ("/LANE_TX0_P", "85Ohm-diff_PCIE", "pcie4", "family_net_class"),
        ("NVLINK5_TX3_N", "Default", "nvlink5", "net_name"),
        ("/DDR5/DQ0", "Default", "ddr5", "net_name"),
        ("/LPDDR5/DQ0", "Default", "lpddr5", "net_name"),
        (
            "USB3_SSTX_P",
            "Default",
            "usb3",
            "family_net_name",
        ),  # USB3 names the family (Gen 1/2/2x2)
        ("/PCIe_REFCLK_P", "Default", None, None),
        ("/PCIe_{REF0}.CK+", "85Ohm-diff_PCIE", None, None),
        ("PERST#", "PCIe", None, None),
        ("GND", "Default", None, None),
        ("USB_3V3", "Default", None, None),
        ("/DDR5/VDDQ", "Default", None, None),
        ("/DDR5/DDR5_VREF_CA", "Default", None, None),
        ("+12V_PCIE", "PCIe", None, None),
    ],
)
def test_signal_recognition(net, cls, expected, how):
    rules = NetClassRules(patterns=((net, cls),)) if cls != "Default" else NetClassRules()
    a = Analysis(make_board(2, [net], net_classes=rules), {}, LIB)
    got = a.net_signal.get(1)
    assert (got.signal if got else None) == expected
    if got:
        assert got.how == how
        assert (got.assumption is not None) == how.startswith("family")


def test_config_declares_first_and_pairs_share_a_type():
    # LANE0_P is declared usb4 by the config (whole-name regex); LANE0_N joins it as its pair
    a = Analysis(
        make_board(2, ["LANE0_P", "LANE0_N", "PCIE5_TX0_P"]),
        {"signals": {"usb4": ["LANE0_P"], "eth25g": ["PCIE5_.*"]}},
        LIB,
    )
    assert a.net_signal[1].signal == "usb4" and a.net_signal[1].how == "config"
    assert a.net_signal[2].signal == "usb4" and a.net_signal[2].how == "pair"
    assert a.net_signal[3].signal == "eth25g"  # the config beats the net-name pattern
    # a pattern matching part of a name does not count (whole-name match)
    a2 = Analysis(make_board(2, ["XLANE0_P"]), {"signals": {"usb4": ["LANE0_P"]}}, LIB)
    assert 1 not in a2.net_signal


def test_net_layers_from_tracks_and_zones():
    b = make_board(
        4,
        ["A", "GND"],
        [("A", 0, (0, 0), (1, 0)), ("A", 3, (0, 0), (1, 0)), ("A", 0, (2, 0), (3, 0))],
        [("GND", 1, FULL), ("GND", 2, FULL)],
    )
    a = Analysis(b, {})
    assert a.net_layers == {1: frozenset({0, 3}), 2: frozenset({1, 2})}
    assert list(a.track_index.rows(1, 0)) == [0, 2]
    # every net's rows at once, in the order asked (nets without tracks there add none)
    assert list(a.track_index.rows_many([2, 1, 7], 0)) == [0, 2]
    assert list(a.track_index.rows_many([1], 3)) == [1]
    assert list(a.track_index.rows_many([], 0)) == []
    assert dict(a.plane_layers) == {1: [("GND", 1.0)], 2: [("GND", 1.0)]}


# --- issue 19: KiCad's auto-generated stack-up is a default, not a declaration ----------------

#: KiCad's untouched 4-layer stack-up: FR4 4.5/0.02, equal heights, 35 µm copper everywhere
KICAD4 = stackup(
    cu(),
    diel("dielectric 1", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
    cu(),
    diel("dielectric 2", "FR4", 4.5, 0.02, t=0.48),
    cu(),
    diel("dielectric 3", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
    cu(),
)


def test_kicad_default_stackup_detected_whole_and_per_dielectric():
    from accel_drc.analysis.stackup import StackupBasis

    mats = LIB.materials
    assert StackupBasis(KICAD4, mats).auto
    assert not StackupBasis(SIX, mats).auto
    # one height edited: εr / tan δ still KiCad's, the heights are the designer's
    edited = stackup(
        cu(),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.2, kind="prepreg"),
        cu(),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=1.1),
        cu(),
    )
    basis = StackupBasis(edited, mats)
    assert not basis.auto
    assert basis.dielectric("dielectric 1") == {
        "epsilon_r": "default",
        "loss_tangent": "default",
        "height": "declared",
    }
    # 18 µm copper: not KiCad's 35 µm default
    thin = stackup(cu(0.018), diel("dielectric 1", "FR4", 4.5, 0.02, t=1.5), cu(0.018))
    assert not StackupBasis(thin, mats).auto


def test_laminate_df_on_kicad_default_rests_on_a_default_and_names_remedies():
    b = make_board(4, NETS, [("NVL_TX0_P", 0, (1, 1), (2, 1))], [("GND", 1, FULL)], KICAD4)
    [f] = run(b, "laminate_df", "training", NV, signal="nvlink4").findings
    assert f.status == Status.VIOLATION and f.measured == 0.02
    assert f.evidence["basis"]["loss_tangent"] == "default"
    assert f.evidence["declare"].startswith("declare your fab's stack-up")
    settled = settle(f)
    assert settled.status == Status.CANNOT_VERIFY
    # the remedy: library laminates with a confirmed Df ≤ 0.003, lowest first; none over it
    rem = f.evidence["remedy"]
    assert rem.startswith("laminates in rules/materials.yaml with Df ≤ 0.003")
    assert "Megtron 7" in rem and "Megtron 6" not in rem and "FR-4" not in rem
    # a declared Df over the limit is a fact
    b2 = six([("NVL_TX0_P", 0, (1, 1), (2, 1))])
    cfg = {**NV, "stackup": {"materials": {"d1": {"loss_tangent": 0.004}}}}
    [f2] = run(b2, "laminate_df", "training", cfg, signal="nvlink4").findings
    assert f2.evidence["basis"]["loss_tangent"] == "declared"
    assert settle(f2).status == Status.VIOLATION


def test_materials_meeting_only_confirmed_numbers():
    from accel_drc.analysis.materials import materials_meeting

    mats = LIB.materials
    got = materials_meeting(mats, max_df=0.005, limit=50)
    names = [g.rsplit(" (", 1)[0] for g in got]
    for name in names:
        m = next(m for m in mats.materials.values() if m.name == name)
        assert m.df is not None and m.df <= 0.005
        assert "df" not in m.unconfirmed_fields
    dfs = [next(m for m in mats.materials.values() if m.name == n).df for n in names]
    assert dfs == sorted(dfs)  # best first
    tg = materials_meeting(mats, min_tg=200, limit=50)
    for g in tg:
        m = next(m for m in mats.materials.values() if m.name == g.rsplit(" (", 1)[0])
        assert m.tg_c >= 200 and not m.tg_assumed and "tg_c" not in m.unconfirmed_fields


def test_tg_declare_hint_names_the_material_the_board_names():
    """A Panasonic R-1566 dielectric (not in the library) is asked for R-1566's Tg, never
    offered another laminate (the hint once proposed Megtron 6)."""
    st = stackup(cu(), diel("dielectric 1", "R-1566(W)", 4.6, 0.01, t=1.5), cu())
    [f] = run(make_board(2, ["GND"], stack=st), "tg", "edge").findings
    assert f.status == Status.CANNOT_VERIFY
    hint = f.evidence["declare"]
    assert "'R-1566(W)'" in hint and "dielectric 1: {tg_c: <Tg (°C)>}" in hint
    assert "Megtron" not in hint


def test_copper_weight_and_layer_count_record_their_basis():
    # KiCad's default stack-up: 35 µm is KiCad's, not the designer's: a training fail is
    # conditional; a copper weight the stack-up states is a fact
    b = make_board(4, ["GND", "+0V8"], [], [("GND", 1, FULL), ("+0V8", 2, FULL)], KICAD4)
    fs = run(b, "copper_weight", "training").findings
    assert fs and all(f.evidence["basis"]["copper_thickness"] == "default" for f in fs)
    assert all(settle(f).status == Status.CANNOT_VERIFY for f in fs)
    assert "1 oz" not in fs[0].evidence["remedy"] and "2 oz" in fs[0].evidence["remedy"]
    b = make_board(6, NETS, [], [("GND", 3, FULL), ("+0V8", 1, FULL)], SIX)
    fs = run(b, "copper_weight", "training").findings
    assert fs and all(f.evidence["basis"]["copper_thickness"] == "declared" for f in fs)
    [f] = run(make_board(4), "layer_count", "training").findings
    assert f.evidence["basis"] == {"layer_count": "measured"}


def test_classify_plane_copper_evidence_gives_the_range_and_the_planes():
    from accel_drc.classify import classify

    b = make_board(6, NETS, [], [("GND", 1, FULL), ("+0V8", 3, FULL)], SIX)
    a = Analysis(b, {}, LIB)
    ev = next(e for e in classify(b, a, LIB).evidence if e.what == "plane copper")
    # In1 (GND) 35 µm = 1.00 oz, In3 (+0V8) 70 µm = 2.00 oz: both, with their layers
    assert ev.value.startswith("1.00–2.00 oz")
    assert "1.00 oz: In1.Cu (GND)" in ev.value and "2.00 oz: In3.Cu (+0V8)" in ev.value


def test_material_consistency_says_the_whole_stackup_is_kicads():
    fs = run(make_board(4, ["GND"], stack=KICAD4), "material_consistency", "edge").findings
    assert len(fs) == 3 and all(f.status == Status.CANNOT_VERIFY for f in fs)
    for f in fs:
        assert f.evidence["stackup_kicad_default"] is True
        assert "auto-generated" in f.message
        assert f.evidence["basis"] == {
            "material": "default",
            "epsilon_r": "default",
            "loss_tangent": "default",
            "height": "default",
        }
        assert f.evidence["declare"].startswith("declare your fab's stack-up")
    # SIX names real laminates except d2 "FR4 4.5/0.02": that one is default, its height is not
    [f] = run(six([]), "material_consistency", "edge").findings
    assert f.layer == "d2" and f.evidence["basis"]["height"] == "declared"
