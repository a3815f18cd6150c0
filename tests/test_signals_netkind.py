"""Issue #27 §2-§4: what a net is comes from the pins it lands on; the designer's declared
impedance is the target; every member of a family is evaluated.  Fixture boards:
fixtures/checks/signals/ (make_fixtures.py writes them; EXPECTED.md says what each gives)."""

from __future__ import annotations

from pathlib import Path

import pytest

SIG = Path(__file__).resolve().parents[1] / "fixtures" / "checks" / "signals"


def _board(name: str):
    from accel_drc.readers import read_board

    return read_board(str(SIG / f"{name}.kicad_pcb"))


def _analysis(name: str, config=None):
    from accel_drc.analysis import Analysis

    return Analysis(_board(name), config)


def _by_name(board, mapping):
    return {board.nets[k]: v for k, v in mapping.items()}


def test_pads_carry_pinfunction_and_pintype() -> None:
    b = _board("usb_c_sbu")
    pads = {p.number: p for fp in b.footprints for p in fp.pads}
    assert pads["A8"].pin_function == "SBU1" and pads["A8"].pin_type == "bidirectional"


def test_usb_c_sbu_in_a_usb_ss_class_is_sideband_not_a_lane() -> None:
    a = _analysis("usb_c_sbu")
    side = _by_name(a.board, a.net_sideband)
    assert side["/USB/USBC1_X_P"].how == "connector" and "A8" in side["/USB/USBC1_X_P"].pattern
    typed = _by_name(a.board, a.net_signal)
    assert "/USB/USBC1_X_P" not in typed and "/USB/USBC1_X_N" not in typed
    assert typed["/USB/USBC1_TX1_P"].family == "usb_ss"  # the lane: family, rate assumed
    from accel_drc.pipeline import check_board

    res = check_board(a.board, board_class="edge")
    # no lane check judges a sideband (connectivity still does: an open is an open; this
    # fixture's SBU track is drawn to show the net class, not routed pad to pad)
    lane_checks = {"via_stub", "impedance", "laminate_df", "foil", "insertion_loss", "skew",
                   "return_path"}  # fmt: skip
    assert not [f for f in res.findings if f.net and "USBC1_X" in f.net and f.check in lane_checks]
    row = next(r for r in res.coverage["pairs"] if r["name"].endswith("USBC1_X"))
    assert row["interface"] == "sideband" and row["recognised_by"] == "connector"


def test_hdmi_cec_by_name_and_by_contact_13() -> None:
    a = _analysis("hdmi_cec")
    side = _by_name(a.board, a.net_sideband)
    assert side["/HDMI/NET_A"].how == "connector"  # named by nothing but contact 13
    assert "/HDMI/CEC" in side
    assert "/HDMI/CEC" not in _by_name(a.board, a.net_signal)


def test_ddr5_x8_recognised_by_its_ball_names() -> None:
    a = _analysis("ddr5_x8")
    typed = _by_name(a.board, a.net_signal)
    lanes = {n: s for n, s in typed.items() if s.signal == "ddr5"}
    assert len(lanes) == 27  # DQ0-7, DQS_t/c, CK_t/c, CS_n, CA0-13
    one = next(iter(lanes.values()))
    assert one.how == "pin" and one.basis == "assumed"  # the speed grade is not a fact
    side = _by_name(a.board, a.net_sideband)
    assert {s.kind for s in side.values()} == {"dram_ctl"} and len(side) == 3  # ZQ RESET ALERT


def test_lpddr4_channel_strobe_names_pair() -> None:
    from accel_drc.model import find_diff_pairs

    pairs = find_diff_pairs(["", "DQ_S0_TA", "DQ_S0_CA", "CK_TA", "CK_CA"])
    assert len(pairs) == 2
    # the channel after an underscore (antmicro-lpddr4-testbed): CK_T_A/CK_C_A are one clock,
    # not two single nets that are each other's crosstalk aggressors
    pairs = find_diff_pairs(["", "CK_T_A", "CK_C_A", "CK_T_B", "CK_C_B", "CA_T_A", "CA_C_A"])
    assert [(p.name, p.positive, p.negative) for p in pairs] == [("CK_A", 1, 2), ("CK_B", 3, 4)]


def test_net_class_ohm_is_the_target_and_the_departure_is_one_warning() -> None:
    from accel_drc.pipeline import check_board
    from accel_drc.results import Severity

    res = check_board(_board("class_ohm"), board_class="edge")
    imp = [f for f in res.findings if f.check == "impedance" and f.layer]
    for f in imp:
        assert f.limit == 85.0 and f.evidence["band"]["target_from"]["how"] == "net_class"
    dep = [f for f in res.findings if f.rule.endswith(".declared_target")]
    assert len(dep) == 1 and dep[0].severity == Severity.WARNING
    assert "85" in dep[0].message and "100" in dep[0].message


def test_kicad_dru_width_gap_per_layer() -> None:
    b = _board("dru_per_layer")
    rules = b.net_classes.design_rules
    assert [r.name for r in rules] == ["90_ohm_outer", "90_ohm_inner"]
    inner = rules[1]
    assert inner.track_width == (None, pytest.approx(0.127), None)
    assert inner.diff_pair_uncoupled == (None, None, 5.0)
    from accel_drc.analysis.signals import declared_target

    n = b.nets.index("/HS/PCIE_TX0_P")
    outer = declared_target(b, n, "F.Cu")
    assert outer is not None and outer.zdiff_ohm == 90 and outer.how == "kicad_dru"
    assert outer.width_mm == 0.17 and outer.gap_mm == 0.18


def test_kicad_dru_unbalanced_is_bad_input(tmp_path) -> None:
    from accel_drc.errors import InputError
    from accel_drc.readers.kicad_dru import parse_dru

    with pytest.raises(InputError) as e:
        parse_dru('(version 1)\n(rule "x"\n (condition "A.NetClass == \'a\'")\n', "b.kicad_dru")
    assert "b.kicad_dru" in str(e.value) and "2" in str(e.value)


def test_cm4_pcie2_declared_is_checked() -> None:
    from accel_drc.pipeline import check_board

    cfg = {"class": "edge", "signals": {"pcie2": ["/CM4/PCIE_.*"]}}  # cm4_pcie2.accel-drc.yaml
    res = check_board(_board("cm4_pcie2"), config=cfg)
    rules = {f.rule for f in res.findings}
    assert "edge.impedance.pcie2" in rules
    imp = next(f for f in res.findings if f.rule == "edge.impedance.pcie2")
    assert imp.limit == 90.0  # the designer's 90 Ω (net class 90Ohm_PCIe), not 85


def test_every_pcie_generation_is_a_member() -> None:
    from accel_drc.analysis.signals import family_members
    from accel_drc.packs import load_library

    lib = load_library()
    assert family_members(lib, "pcie4") == ("pcie1", "pcie2", "pcie3", "pcie4", "pcie5", "pcie6")
    assert set(family_members(lib, "eth10g")) >= {"eth1g", "eth10g", "eth25g"}
    for cls in ("edge", "inference", "training"):
        sigs = {r.signal for r in lib.packs[cls].rules if r.check == "via_stub"}
        assert {"pcie1", "pcie2", "usb3_gen1", "usb3_gen2x2", "eth1g"} <= sigs


def test_config_sideband_declares_more() -> None:
    a = _analysis("class_ohm", {"signals": {"sideband": ["/DP/DP0_TX0_.*"]}})
    assert not a.net_signal
    assert {s.how for s in a.net_sideband.values()} == {"config"}


def test_ic_pin_names_type_a_lane_no_name_class_or_connector_tells(tmp_path) -> None:
    """The m2-oculink adapter, pairs renamed /L.*, its connectors' footprints made unknown: the
    connectors' pin names (PETp0, PERn1, …) still say PCIe."""
    from conftest import FIXTURES

    src = FIXTURES / "boards" / "m2-oculink-adapter" / "antmicro-m2-oculink-adapter-hw.kicad_pcb"
    text = src.read_text(encoding="utf-8").replace("/PCIe_{x4}.", "/L.")
    text = text.replace("PCB-Edge_M.2_Key-M", "PCB-Edge_X").replace("OCuLink", "Thing")
    text = text.replace("G14A421211112HR", "G00")
    path = tmp_path / "anon.kicad_pcb"
    path.write_text(text, encoding="utf-8")
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    a = Analysis(read_board(str(path)), {})
    typed = _by_name(a.board, a.net_signal)
    lanes = {n: s for n, s in typed.items() if n.startswith("/L.")}
    assert lanes and {s.family for s in lanes.values()} == {"pcie"}
    assert "pin" in {s.how for s in lanes.values()}


def test_false_friends_in_names_are_not_lanes() -> None:
    """A sheet named "SGMII PHYs" does not make its supplies SGMII; QSGMII (5 GBd) is not the
    1.25 Gb/s SGMII member; an FPGA's multi-function pin name (CSI_B: configuration chip
    select) names no MIPI lane; a hub's port-4 pin USB4D+ is a name match the pin path refuses."""
    from accel_drc.analysis import signals as sg
    from accel_drc.packs import load_library

    rec = sg.recogniser(load_library())
    assert rec.recognise("/SGMII PHYs/DP_A1V8", "") is None
    assert rec.recognise("/SGMII PHYs/ETH12_SGMII_RX_P", "").signal == "eth1g"
    got = rec.recognise("/QSGMII PHY/QSGMII_0_RX_P", "")
    assert got is None or got.signal != "eth1g"
    assert sg._MULTI_FUNCTION_PIN.match("IO_L16P_T2_CSI_B_14")
    assert not sg._MULTI_FUNCTION_PIN.match("PETp0")
    assert rec.recognise("USB4D+", "").how == "net_name"  # a member: refused on a pin name


def test_a_routing_class_gives_way_to_the_family_the_name_states() -> None:
    """``DP 100 5mil`` is a routing class: an HDMI pair in it is HDMI; a plain lane in it is DP
    (family, rate assumed); ``85Ohm-diff_SFI`` gives the SFP family, not 10G as a fact."""
    from accel_drc.analysis import signals as sg
    from accel_drc.packs import load_library

    rec = sg.recogniser(load_library())
    assert rec.recognise("/HDMI/TMDS_D0_P", "DP 100 5mil").family == "hdmi"
    dp = rec.recognise("/X/LANE0_P", "DP 100 5mil")
    assert dp.family == "displayport" and dp.basis == "assumed"
    sfi = rec.recognise("/SFP/SFI.RX_P", "85Ohm-diff_SFI")
    assert sfi.family == "sfp" and sfi.basis == "assumed"


def test_sfp28_lanes_are_25g_on_both_sides_of_the_caps() -> None:
    """``85Ohm-diff_SFI`` names the family; the SFP28 connector tells 25.78 Gb/s, and the pair
    behind the AC-coupling caps is the same lane; TX_DISABLE on contact 3 is sideband."""
    a = _analysis("sfp28_cage")
    typed = _by_name(a.board, a.net_signal)
    for n in ("/SFP/SFI_CONN_TX_P", "/SFP/SFI_CONN_TX_N", "/SFP/SFI.TX_P", "/SFP/SFI.TX_N"):
        assert typed[n].signal == "eth25g" and typed[n].basis == "declared", n
    assert typed["/SFP/SFI_CONN_TX_P"].how == "connector"
    assert typed["/SFP/SFI.TX_P"].how == "ac_coupled"
    assert "/SFP/TX_DISABLE" in _by_name(a.board, a.net_sideband)


def test_kicad10_tuning_profile_is_the_declared_target(tmp_path) -> None:
    """A KiCad 10 tuning profile (``tuning_profiles_impedance_geometric``) a net class names:
    its target impedance and, on the layer, its width and gap (nm in the file)."""
    import json
    import shutil

    from accel_drc.analysis.signals import declared_target
    from accel_drc.readers import read_board

    for ext in ("kicad_pcb", "kicad_pro"):
        shutil.copy(SIG / f"class_ohm.{ext}", tmp_path / f"b.{ext}")
    pro = json.loads((tmp_path / "b.kicad_pro").read_text())
    pro["net_settings"]["classes"][1]["tuning_profile"] = "DP90"
    pro["tuning_profiles"] = {
        "meta": {"version": 1},
        "tuning_profiles_impedance_geometric": [
            {
                "profile_name": "DP90",
                "type": 1,
                "target_impedance": 90,
                "layer_entries": [
                    {"signal_layer": "F.Cu", "width": 150000, "diff_pair_gap": 200000, "delay": 0},
                    "junk",
                ],
            },
            {"profile_name": "bad", "target_impedance": "x"},
        ],
    }
    (tmp_path / "b.kicad_pro").write_text(json.dumps(pro))
    b = read_board(str(tmp_path / "b.kicad_pcb"))
    got = declared_target(b, b.nets.index("/DP/DP0_TX0_P"), "F.Cu")
    assert got is not None and got.how == "tuning_profile" and got.zdiff_ohm == 90
    assert (got.width_mm, got.gap_mm) == (0.15, 0.2)


def test_hostile_dru_and_pin_names(tmp_path) -> None:
    """A .kicad_dru that is not UTF-8 is bad input; deep nesting, expressions and conditions on
    several classes are not read (KiCad's own DRC judges them); a 200 KB pin name is matched by
    no pattern."""
    from accel_drc.errors import InputError
    from accel_drc.readers.kicad_dru import parse_dru, read_dru

    bad = tmp_path / "x.kicad_dru"
    bad.write_bytes(b"(version 1)\n\xff\xfe")
    with pytest.raises(InputError, match="not UTF-8"):
        read_dru(str(bad))
    assert parse_dru("(" * 3000 + ")" * 3000, "d") == ()
    two = "(rule a (condition \"A.NetClass == 'x' || A.NetClass == 'y'\") (constraint track_width (opt 1mm)))"
    assert parse_dru(two, "d") == ()
    expr = "(rule a (condition \"A.NetClass == 'x'\") (constraint track_width (opt 2*0.1mm)))"
    assert parse_dru(expr, "d")[0].track_width == (None, None, None)
    text = (SIG / "usb_c_sbu.kicad_pcb").read_text(encoding="utf-8")
    text = text.replace('(pinfunction "SBU1")', '(pinfunction "' + "SBU1" * 50_000 + '")')
    (tmp_path / "h.kicad_pcb").write_text(text, encoding="utf-8")
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    a = Analysis(read_board(str(tmp_path / "h.kicad_pcb")), {})
    side = _by_name(a.board, a.net_sideband)
    assert side["/USB/USBC1_X_P"].how == "connector"  # the contact still tells; the name is skipped


MEMBERS = [
    # board, net -> the member it must be typed as (and how), the member's rules that judge it
    ("member_qsgmii", {"/PHY/QSGMII0_TX_P": ("qsgmii", "net_name")}, ["impedance", "via_stub"]),
    ("member_1000baset", {"/ETH/MDI0_P": ("eth1000baset", "net_name")}, ["impedance"]),
    ("member_10gbase_kr", {"/BP/KR0_TX_P": ("eth10g", "net_name")}, ["impedance", "via_stub"]),
    ("member_lvds", {"/LCD/LVDS_A0_P": ("lvds", "net_name")}, ["impedance"]),
    # the second corpus review: DVI TMDS (machdyne-schoko DVI_Dn) as the
    # slowest HDMI member, and a copper MDI pair named by its letter (gd-syzygy-sgmii ETH_A_P,
    # starshipraider PAIRA_L_P) as 1000BASE-T: both families, the rate assumed
    ("member_dvi", {"/Video/DVI_D0_P": ("hdmi14", "family_net_name")}, ["impedance", "via_stub"]),
    ("member_base_t", {"/PHY/ETH_A_P": ("eth1000baset", "family_net_name")}, ["impedance"]),
    (
        "member_sdi",
        {
            "/VID/SDI_3G_OUT": ("sdi3g", "net_name"),
            "/VID/12G_SDI_IN": ("sdi12g", "net_name"),
            "/VID/HD_SDI_OUT": ("sdi12g", "family_net_name"),  # rate not told: assumed 12G
        },
        ["via_stub"],
    ),
    ("member_lpddr4x", {"/MEM/N00": ("lpddr4x", "pin")}, ["via_stub"]),
]


@pytest.mark.parametrize("board,typed,kinds", MEMBERS, ids=[m[0] for m in MEMBERS])
def test_every_family_member_is_recognised_and_judged(board, typed, kinds) -> None:
    """Issue 27 §4: QSGMII, 1000BASE-T MDI, 10GBASE-KR, 3G/12G-SDI, LVDS and LPDDR4X are typed
    as their member and judged by its rules in every class pack."""
    from accel_drc.api import check

    a = _analysis(board)
    got = _by_name(a.board, a.net_signal)
    for net, (sid, how) in typed.items():
        assert (got[net].signal, got[net].how) == (sid, how), net
    res = check(str(SIG / f"{board}.kicad_pcb"), config={}, board_class="edge")
    runs = {r.rule.id: r.checked for r in res.rules}
    for sid in {s for s, _ in typed.values()}:
        for kind in kinds:
            assert runs.get(f"edge.{kind}.{sid}", 0) > 0, (sid, kind, runs)


def test_spi_sdi_is_no_video_link_and_lpddr4_balls_without_x_stay_lpddr4() -> None:
    import dataclasses

    from accel_drc.analysis import Analysis
    from accel_drc.analysis.signals import recogniser
    from accel_drc.packs import load_library

    a = _analysis("member_sdi")
    assert "/SPI/SDI" not in _by_name(a.board, a.net_signal)  # SPI's serial data in
    # a sheet named after the interface holds other nets (latentpink's "QSGMII PHY" sheet: its
    # 1.0 V supply and the copper MDI pairs are no QSGMII lanes)
    rec = recogniser(load_library())
    for net in ("/QSGMII PHY/QSGMII Power/A1V0_VSC", "/QSGMII PHY/ETH4_D2_P", "/LVDS/LED0",
                "/12G-SDI/I2C_SCL", "/1000BASE-T/LED_LINK"):  # fmt: skip
        assert rec.recognise(net, "") is None, net
    assert rec.recognise("/QSGMII PHY/QSGMII_0_RX_AC_P", "").signal == "qsgmii"
    b = _board("member_lpddr4x")
    plain = dataclasses.replace(
        b,
        footprints=tuple(
            dataclasses.replace(fp, value="MT53E512M32D1ZW") if fp.reference == "U1" else fp
            for fp in b.footprints
        ),
    )
    typed = {v.signal for v in Analysis(plain, None).net_signal.values()}
    assert typed == {"lpddr4"}


def test_sdi_link_classes_are_sdi_and_the_parallel_bus_is_not() -> None:
    """crosslink-nx-video-converter (fixtures/boards): the designer's ``75Ohm-se_SDI`` class
    holds the coax lines (SDI, rate assumed); ``50Ohm-se_SDI_D`` the deserialiser's parallel
    bus ``SDI_D0``-``D19`` and ``SMPTE_BYPASS`` is a control pin: neither is an SDI link."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    b = read_board(str(FIXTURE_BOARDS["crosslink-nx-video-converter"]))
    typed = _by_name(b, Analysis(b, None).net_signal)
    assert (
        typed["/SDI/SDI_IN"].signal == "sdi12g" and typed["/SDI/SDI_IN"].how == "family_net_class"
    )
    assert not any(n.startswith("/SDI/SDI_D") for n in typed)
    assert "/SDI/~{SMPTE_BYPASS}" not in typed


@pytest.mark.parametrize(
    ("name", "family"),
    [("/DVI_D2_P", "dvi"), ("/DVI_CK_N", "dvi"), ("/VIDEO/DVI_D1+", "dvi"), ("/ETH_A_P", "base_t"), ("/ETH2_B_N", "base_t"),
     ("/PAIRA_L2R_P", "base_t"), ("/PAIRD_R_N", "base_t"), ("/BI_DC+", "base_t")],
)  # fmt: skip
def test_dvi_and_lettered_mdi_pairs_are_recognised_with_the_rate_assumed(name, family) -> None:
    """Issue 27 second review: DVI TMDS pairs and copper MDI pairs named by pair letter passed
    unseen on 6 corpus boards; now their family, the rate assumed (basis ``assumed``)."""
    from accel_drc.analysis import signals as sg
    from accel_drc.packs import load_library

    got = sg.recogniser(load_library()).recognise(name, "")
    assert got is not None and got.family == family and got.basis == "assumed", got


@pytest.mark.parametrize(
    "name",
    ["/PoE/PAIR12", "/QSGMII PHY/ETH4_D2_P", "/ETH_A", "/DVI_HPD", "/DVI_SDA", "/TAP_MDI_A",
     "/ETH_LED_A", "PAIRED_P", "/ETH_DATA_P", "/DVI_5V", "/SDRAM/DQ0", "/CAM/D0_P", "/GPDI0.D0_P"],
)  # fmt: skip
def test_look_alikes_of_dvi_and_mdi_pairs_are_not(name) -> None:
    """A PoE pair-set supply, a QSGMII sheet's ETHn_Dm (stays unknown), a single MDI tap, the DVI
    port's HPD / DDC / +5 V, an LED, and a plain D0_P are no DVI lane or MDI pair."""
    from accel_drc.analysis import signals as sg
    from accel_drc.packs import load_library

    got = sg.recogniser(load_library()).recognise(name, "")
    assert got is None or got.family not in ("dvi", "base_t"), got


def test_an_hdmi_receptacle_tells_the_family_of_a_dvi_named_pair() -> None:
    """Pins beat names where the part says so: a DVI-named pair (family dvi, a guess) on an HDMI
    receptacle's TMDS contacts is HDMI (every dvi member is an hdmi member); a DisplayPort-named
    alt-mode lane on USB-C SuperSpeed contacts stays DisplayPort (disjoint families)."""
    from accel_drc.analysis import signals as sg
    from accel_drc.packs import load_library

    lib = load_library()
    dvi = sg.SignalAssignment("hdmi14", "family_net_name", "dvi", "note", "dvi")
    assert sg._connector_beats(lib, dvi, "hdmi")
    dp = sg.SignalAssignment("dp14", "family_net_name", "dp", "note", "displayport")
    assert not sg._connector_beats(lib, dp, "usb_ss")
