"""skew, return_path and crosstalk on every recognised interface (issue #32): which signal types
get which rule, and what an unconfirmed ([U]) skew limit does to a finding."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from accel_drc.analysis import Analysis
from accel_drc.basis import settle
from accel_drc.checks import CheckContext
from accel_drc.checks.skew import UNCONFIRMED_LIMIT, check_skew
from accel_drc.packs import load_library
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

SKEW = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "skew"
LIB = load_library()
#: a trio (C-PHY) and a 75 Ω coax line (SDI) have no pair to skew
NO_PAIR = {"mipi_cphy", "sdi3g", "sdi12g"}
MEMORY = ("ddr3", "ddr4", "ddr5", "lpddr4", "lpddr4x", "lpddr5")


def _rules(check: str, pack: str = "inference") -> dict[str, Rule]:
    return {r.signal: r for r in LIB.packs[pack].rules if r.check == check and r.signal}


def test_every_type_with_a_pair_has_a_skew_rule_and_a_memory_bus_its_groups() -> None:
    got = _rules("skew")
    assert set(LIB.signals) - set(got) == NO_PAIR
    for sid, r in got.items():
        if sid in MEMORY:  # DQ/DM vs DQS, CA vs CK
            assert r.params["group"] == "ddr", sid
            assert r.params["max_group_ps"] > 0 and r.params["max_ca_ck_ps"] > 0, sid
        else:
            keys = ("max_intra_pair_ps", "max_intra_pair_mm", "max_intra_pair_ui")
            assert any(r.params.get(k) for k in keys), sid


def test_an_unconfirmed_skew_limit_is_a_warning_that_says_so() -> None:
    """A limit not read in a primary copy ([U], listed under the signal's unconfirmed) makes
    a warning rule whose why says it is a typical value; a confirmed one keeps its severity."""
    for pack in ("inference", "edge", "training", "general"):
        for sid, r in _rules("skew", pack).items():
            typical = UNCONFIRMED_LIMIT in LIB.signals[sid].unconfirmed
            if typical:
                assert r.severity is Severity.WARNING, r.id
                assert "[U]" in r.why and "cannot verify" in r.why, r.id
    sata = _rules("skew")["sata3"]
    assert sata.params == {"max_intra_pair_ps": 20} and "[sata3]" in sata.source
    assert UNCONFIRMED_LIMIT not in LIB.signals["sata3"].unconfirmed


def test_return_path_on_every_type_single_nets_where_there_are_no_pairs() -> None:
    """Every type but 1000BASE-T, whose transformer-isolated MDI pairs run over planes voided
    on purpose (and at 125 MBd need no return via), and SDI, whose 75 Ω networks do too."""
    got = _rules("return_path")
    assert set(LIB.signals) - set(got) == {"eth1000baset", "sdi3g", "sdi12g"}
    for sid in (*MEMORY, "mipi_cphy"):
        assert got[sid].params.get("single_ended") is True, sid
    # the rate still decides error or warning: one threshold for all
    assert {r.params["error_from_gbps"] for r in got.values()} == {10}


def test_crosstalk_on_every_type_but_the_c_phy_trio() -> None:
    got = _rules("crosstalk")
    assert set(LIB.signals) - set(got) == {"mipi_cphy"}
    for sid in ("lpddr4x", "sdi3g", "sdi12g"):
        assert got[sid].params.get("single_ended") is True, sid
    assert got["lpddr4x"].why == got["lpddr4"].why.replace("LPDDR4 / LPDDR4X", "LPDDR4X")


def _findings(name: str, signal: str, unconfirmed: bool, **params: object) -> list:
    board = read_board(str(SKEW / name))
    analysis = Analysis(board)
    st = analysis.signal_types[signal]
    u = (*st.unconfirmed, UNCONFIRMED_LIMIT) if unconfirmed else ()
    analysis.__dict__["signal_types"] = {
        **analysis.signal_types,
        signal: dataclasses.replace(st, unconfirmed=u),
    }
    ctx = CheckContext(board=board, analysis=analysis, board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.WARNING, params=dict(params),
                why="w", source="s", signal=signal)  # fmt: skip
    return [settle(f) for f in check_skew(ctx, rule).findings]


def test_a_pair_over_an_unconfirmed_limit_is_cannot_verify_with_its_number() -> None:
    # two barrels on one leg: 23.2 ps of skew against 0.5 mm (3.2 ps)
    (fact,) = _findings("two_barrels_one_leg.kicad_pcb", "pcie4", False, max_intra_pair_mm=0.5)
    (typ,) = _findings("two_barrels_one_leg.kicad_pcb", "pcie4", True, max_intra_pair_mm=0.5)
    assert fact.status is Status.VIOLATION and fact.evidence["basis"]["limit"] == "library"
    assert typ.status is Status.CANNOT_VERIFY and typ.evidence["basis"]["limit"] == "assumed"
    assert typ.measured == fact.measured and typ.limit == fact.limit
    assert "[U] a typical value, not a requirement" in typ.message


def test_a_byte_lane_over_an_unconfirmed_group_limit_is_cannot_verify() -> None:
    # every pad declares its die delay: with DDR4's own limit DQ3 (1 mm long) is a violation;
    # the same limit borrowed by another memory type ([U]) is cannot verify
    params = {"group": "ddr", "max_group_ps": 3.5, "max_ca_ck_ps": 20}
    (fact,) = _findings("ddr4_byte_lane_die.kicad_pcb", "ddr4", False, **params)
    (typ,) = _findings("ddr4_byte_lane_die.kicad_pcb", "ddr4", True, **params)
    assert fact.status is Status.VIOLATION
    assert typ.status is Status.CANNOT_VERIFY and typ.evidence["basis"]["limit"] == "assumed"
    assert typ.measured == pytest.approx(fact.measured)


def test_lpddr4_odt_ca_is_a_strap_not_a_lane() -> None:
    """LPDDR4's ODT_CA ball is tied to VDD2 or VSS (through a resistor on the LPDDR4 test bed):
    no signal type, so no return path or skew is asked of it; DDR3/DDR4's ODT is a command."""
    from accel_drc.analysis.signals import _DRAM_LANE

    assert _DRAM_LANE.match("ODT_CA_A") is None and _DRAM_LANE.match("ODTCA_B") is None
    assert _DRAM_LANE.match("ODT") and _DRAM_LANE.match("ODT1")


def test_coverage_says_why_a_type_has_no_rule_of_a_kind() -> None:
    """A type whose physics a check does not model says so in coverage (signals.yaml
    not_modelled), instead of only "the pack has no rule"."""
    from accel_drc.coverage import _si_checks

    row = {"interface": "mipi_cphy", "interface_name": "MIPI C-PHY", "kind": "net"}
    got = _si_checks(row, [], [], {}, [], LIB.signals)
    assert got["skew"].startswith("not run: the pack has no skew rule for MIPI C-PHY: a trio")
    assert "trio's three wire-to-wire differences" in got["crosstalk"]
    row = {"interface": "eth1000baset", "interface_name": "1000BASE-T", "kind": "pair"}
    assert "transformer-isolated" in _si_checks(row, [], [], {}, [], LIB.signals)["return_path"]


def test_not_modelled_must_name_a_kind_the_type_has_no_rule_of(tmp_path) -> None:
    """A not_modelled entry for a kind the type does get is a file:line error (exit 3)."""
    import shutil

    from accel_drc.errors import InputError

    rules = tmp_path / "rules"
    shutil.copytree(Path(__file__).resolve().parent.parent / "rules", rules)
    path = rules / "signals.yaml"
    text = path.read_text(encoding="utf-8")
    old = "      skew: a trio of three wires, no pair; intra-trio matching is not modelled\n"
    assert old in text
    path.write_text(text.replace(old, old + "      via_stub: not really\n"), encoding="utf-8")
    with pytest.raises(InputError) as ei:
        load_library(rules)
    assert str(ei.value).startswith(f"{path}:") and "via_stub" in str(ei.value)


def test_a_declared_kicad_dru_limit_makes_an_unconfirmed_one_a_fact(tmp_path: Path) -> None:
    """The designer's .kicad_dru skew rule replaces a [U] limit: a pair over it is a violation
    with limit basis declared (fixtures/checks/skew/declared: 4 ps, the pair has 5 ps)."""
    import shutil

    declared = SKEW / "declared"
    board = tmp_path / "b.kicad_pcb"
    shutil.copy(SKEW / "die_delay.kicad_pcb", board)
    shutil.copy(declared / "board.kicad_pro", tmp_path / "b.kicad_pro")
    shutil.copy(declared / "intra_tight.kicad_dru", tmp_path / "b.kicad_dru")
    b = read_board(str(board))
    analysis = Analysis(b)
    st = analysis.signal_types["pcie4"]
    analysis.__dict__["signal_types"] = {
        **analysis.signal_types,
        "pcie4": dataclasses.replace(st, unconfirmed=(UNCONFIRMED_LIMIT,)),
    }
    ctx = CheckContext(board=b, analysis=analysis, board_class="inference")
    rule = Rule(id="t.skew", check="skew", severity=Severity.WARNING,
                params={"max_intra_pair_ps": 10}, why="w", source="s", signal="pcie4")  # fmt: skip
    (f,) = [settle(x) for x in check_skew(ctx, rule).findings]
    assert f.status is Status.VIOLATION and f.evidence["basis"]["limit"] == "declared"
    assert f.limit == 4.0


def test_lpddr4_channel_names_group_as_byte_lanes_and_clock() -> None:
    """LPDDR4 suffixes its channel (DQ00_A, DQ_S0A, DMI_0A, CA0_A, CK_A, as on Antmicro's LPDDR4
    test bed): the suffix is moved in front, so channel A's DQ0-7 and DMI_0 meet DQS0 and its CA
    meets CK; DDR4 names are unchanged."""
    from accel_drc.checks.skew import _DDR_CA, _DDR_CK, _DDR_DATA, _DDR_STROBE, _ddr_leaf

    def key(rx, name: str) -> tuple[str, ...]:
        m = rx.match(_ddr_leaf(name))
        assert m is not None, name
        return m.groups()

    assert key(_DDR_DATA, "DQ07_A") == ("a:", "dq", "07")
    assert key(_DDR_DATA, "DMI_0A") == ("a:", "dmi", "0")
    assert key(_DDR_STROBE, "DQ_S0A") == ("a:", "0")
    assert key(_DDR_CK, "CK_A") == ("a:",) and key(_DDR_CA, "CA5_A") == ("a:",)
    assert key(_DDR_CA, "CS0_B") == ("b:",)
    assert _ddr_leaf("/DDR4-PS.DQ2") == "ddr4-ps.dq2" and _ddr_leaf("DDR4_DQS_0") == "ddr4_dqs_0"
