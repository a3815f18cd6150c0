"""``crosstalk``: the coupled-line model against published and exact results, the neighbour
search, and the check on the fixture boards (fixtures/checks/crosstalk/, written by
fixtures/checks/make_fixtures.py).

The fixture boards: F.Cu a microstrip 0.2 mm over the In1.Cu plane (εr 3.6, no mask); In2.Cu an
offset stripline (the 1.6 mm core up to In1.Cu, 0.2 mm of prepreg down to the B.Cu plane, εr 3.6
both); 0.15 mm traces, 40 mm long, parallel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis.crosstalk import (
    XTALK_RESOLUTION,
    combine,
    coupling_from_modes,
    crosstalk_at,
    parallel_runs,
)
from accel_drc.analysis.impedance import FIELD_ORDER, cohn_coupled_stripline_zero_t
from accel_drc.analysis.impedance.solver import FdLayer, fd_coupled_modes
from accel_drc.basis import settle_all
from accel_drc.checks import CheckContext
from accel_drc.checks.crosstalk import check_crosstalk, direction
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "crosstalk"
MIL = 0.0254

# TNT-MMTL bem/tests/test1 (github.com/corecode/mmtl-tnt, bem/tests/test1.xsctn and
# test1.result): two 18 mil strips 1.4 mil thick, pitch 50 mil (gap 32 mil), on 10 mil of
# εr 4 over a ground plane, no cover; 25.4 mm coupled, 25 ps rise.  Published: odd 49.9284 Ω,
# even 53.8841 Ω, odd 1.78905e8 m/s, even 1.71284e8 m/s, backward 1.90729e-2, forward
# −1.25888e-1.
MMTL = {"bxt": 1.90729e-2, "fxt": -1.25888e-1, "z_odd": 49.9284, "z_even": 53.8841}


def _mmtl_case() -> tuple:
    return fd_coupled_modes(
        18 * MIL, 32 * MIL, 1.4 * MIL, 10 * MIL, (FdLayer(0.0, 10 * MIL, 4.0),), None,
        resolution=XTALK_RESOLUTION, order=FIELD_ORDER,
    )  # fmt: skip


def test_tnt_mmtl_published_coupled_microstrip_within_one_percent() -> None:
    ze, zo, ee, eo = _mmtl_case()
    assert ze == pytest.approx(MMTL["z_even"], rel=0.005)
    assert zo == pytest.approx(MMTL["z_odd"], rel=0.005)
    c = coupling_from_modes(ze, zo, ee, eo)
    td = 25.4 * c.ps_per_mm
    nxt, fxt = crosstalk_at(c.kb * 25.4, td, c.kf * td, 25.4, 25.0)
    # measured: backward −0.4 %, forward −1.0 % (docs/impedance.md, Crosstalk)
    assert nxt == pytest.approx(MMTL["bxt"], rel=0.01)
    assert fxt == pytest.approx(MMTL["fxt"], rel=0.015)


@pytest.mark.parametrize(
    ("w", "s", "b"), [(0.1, 0.1, 0.3), (0.2, 0.1, 0.4), (0.1, 0.3, 0.3), (0.15, 0.05, 0.3)]
)
def test_symmetric_stripline_against_cohn_exact(w: float, s: float, b: float) -> None:
    """Zero-thickness strips centred between planes: Cohn's conformal map is exact; in one
    dielectric Cm/C = Lm/L, so Kb = (Ze − Zo) / 2(Ze + Zo) and FEXT vanishes."""
    ze, zo = cohn_coupled_stripline_zero_t(w, s, b, 3.8)
    exact = (ze - zo) / (2.0 * (ze + zo))
    got = coupling_from_modes(
        *fd_coupled_modes(w, s, 0.0, b / 2, (FdLayer(0.0, b, 3.8),), b,
                          resolution=XTALK_RESOLUTION, order=FIELD_ORDER)
    )  # fmt: skip
    # production mesh: −3.2 % … −0.04 % (t = 0 converges as h¹, slower than real copper's h^4/3)
    assert got.kb == pytest.approx(exact, rel=0.035)
    assert abs(got.kf) < 1e-12
    assert got.eeff == pytest.approx(3.8, rel=1e-9)


def test_parallel_runs_overlap_gap_and_angle() -> None:
    # victim 0..20 on y = 0; aggressor A 5..30 at y = 0.4 (parallel), B crossing at x = 10,
    # C at 5° slope, D touching (gap 0); widths 0.1 -> A's gap 0.3, overlap 15 mm
    vs, ve, vw = np.array([[0.0, 0.0]]), np.array([[20.0, 0.0]]), np.array([0.1])
    as_ = np.array([[5.0, 0.4], [10.0, -5.0], [0.0, 0.3], [0.0, 0.1]])
    ae = np.array([[30.0, 0.4], [10.0, 5.0], [20.0, 0.3 + 20 * np.tan(np.radians(15))], [20, 0.1]])
    runs = parallel_runs(vs, ve, vw, as_, ae, np.full(4, 0.1), 1.0)
    assert runs.aggressor.tolist() == [0]
    assert runs.length_mm[0] == pytest.approx(15.0)
    assert runs.gap_mm[0] == pytest.approx(0.3)
    # beyond the search distance: nothing
    assert len(parallel_runs(vs, ve, vw, as_[:1], ae[:1], np.full(1, 0.1), 0.25).victim) == 0


def test_pair_superposition_cancels() -> None:
    """A pair aggressor N P beside a pair victim P' N': ½(X_PP' − X_PN' − X_NP' + X_NN')."""
    terms = {(10, 1): 0.04, (11, 1): 0.02, (10, 2): 0.02, (11, 2): 0.01}
    got = combine(terms, {10: 1, 11: -1}, {1: 1, 2: -1})
    assert got == pytest.approx(0.5 * (0.04 - 0.02 - 0.02 + 0.01))
    assert combine({(10, 1): 0.04}, {10: 1}, {1: 1}) == pytest.approx(0.04)


@pytest.mark.parametrize(
    ("name", "way"),
    [
        ("/PCIE4_TX0_P", "out"), ("/PCIe/PET0p", "out"), ("USB3_SSTX1+", "out"),
        ("/PCIE4_RX0_N", "in"), ("/HSI2_P", "in"), ("/DDR4-PS.A12", "out"),
        ("/DDR4-PS.ACTN", "out"), ("/DDR4_CK_T", "out"), ("/DDR4-PS.WEN", "out"),
        ("/DDR4_DQ3", None), ("/DDR4_DQS0_P", None), ("/CSI0.D1_P", None),
    ],
)  # fmt: skip
def test_direction_from_names(name: str, way: str | None) -> None:
    assert direction(name, "ddr4" if "DDR4" in name else None) == way


@pytest.mark.parametrize(
    ("name", "way"),
    [
        ("/CSI0.D1_P", "in"), ("/CSI/CAM2.CSI4_CLK_N", "in"), ("/MIPI_CSI_D0_P", "in"),
        ("/DSI0_D1_P", "out"), ("/LCD/MIPI_DSI_CLK_P", "out"), ("/DPHY_D0_P", None),
        ("/CSI_TO_DSI_D0_P", None),
    ],
)  # fmt: skip
def test_mipi_lane_direction_from_csi_or_dsi(name: str, way: str | None) -> None:
    """A CSI-2 lane (data or clock) runs camera -> host, a DSI lane host -> display; so two
    CSI lanes count FEXT only, a CSI lane beside a DSI lane NEXT only.  Outside a MIPI type
    the name says nothing."""
    assert direction(name, "mipi_dphy") == way
    assert direction(name, "pcie4") is None


def test_a_command_name_outside_ddr_says_nothing() -> None:
    """/CAM_A1 is not a DDR address line: no direction unless the net is of a DDR type."""
    assert direction("/CAM_A1", "mipi_dphy") is None
    assert direction("/DDR4-PS.A12", "ddr4") == "out"


def _run(name: str, signal: str, **params: float) -> list:
    board = read_board(str(HERE / name))
    p = {"budget_pct": 5, "max_gap_h": 4, "fastest_rise_ui": 0.125, "min_coupled_mm": 1.0,
         "single_ended": signal == "ddr4", **params}  # fmt: skip
    rule = Rule(id=f"t.crosstalk.{signal}", check="crosstalk", severity=Severity.WARNING,
                params=p, why="w", source="s", signal=signal)  # fmt: skip
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    return settle_all(check_crosstalk(ctx, rule).findings)


def test_tight_ddr4_dq_on_stripline_is_a_violation() -> None:
    got = {f.net: f for f in _run("ddr4_dq_stripline_tight.kicad_pcb", "ddr4")}
    assert set(got) == {"/DDR4_DQ0", "/DDR4_DQ1", "/DDR4_DQ2"}
    mid = got["/DDR4_DQ1"]
    assert mid.status is Status.VIOLATION and mid.severity is Severity.WARNING
    # DQ are bidirectional: NEXT is judged; 40 mm saturates (2·TD ≈ 510 ps ≥ 312.5 ps); a
    # homogeneous stripline has no FEXT; two equal neighbours power-sum to √2 × one
    (a, b) = mid.evidence["aggressors"]
    assert a["next_one_ui"] == pytest.approx(b["next_one_ui"], rel=1e-9)
    assert abs(a["fext_one_ui"]) < 1e-9
    assert mid.measured == pytest.approx(np.sqrt(2) * a["next_one_ui"], rel=1e-3)
    assert 0.15 < a["next_one_ui"] < 0.2
    assert "edge to edge would meet the budget" in mid.message
    assert mid.layer == "In2.Cu" and mid.pos is not None


def test_spaced_ddr4_dq_passes() -> None:
    assert _run("ddr4_dq_stripline_spaced.kicad_pcb", "ddr4") == []


def test_microstrip_tx_pairs_depend_on_the_edge_rate() -> None:
    """Two PCIe Gen4 TX pairs 0.3 mm apart on microstrip over 40 mm: differential FEXT ≈ 1 %
    with a one-UI edge (62.5 ps), ≈ 7.6 % with the fastest (7.8 ps): cannot verify, info;
    declared 10 ps → 5.9 %: a violation; declared 20 ps → 3 %: nothing."""
    got = _run("tx_pairs_microstrip_tight.kicad_pcb", "pcie4")
    assert {f.net for f in got} == {"/PCIE4_TX0_P", "/PCIE4_TX1_P"}
    for f in got:
        assert f.status is Status.CANNOT_VERIFY and f.severity is Severity.INFO
        assert "rise_ps" in f.evidence["declare"]
        lo, hi = f.evidence["crosstalk_one_ui_edge"], f.evidence["crosstalk_fastest_edge"]
        assert lo < 0.05 < hi
        assert hi == pytest.approx(lo * 8.0, rel=1e-3)  # FEXT ∝ 1/tr; NEXT not judged (TX, TX)
        assert f.evidence["aggressors"][0]["judged"] == "FEXT"
    fast = _run("tx_pairs_microstrip_tight.kicad_pcb", "pcie4", rise_ps=10.0)
    assert {f.status for f in fast} == {Status.VIOLATION}
    assert _run("tx_pairs_microstrip_tight.kicad_pcb", "pcie4", rise_ps=20.0) == []


def test_tx_beside_rx_counts_next_only() -> None:
    """The tight microstrip pairs, one TX and one RX: the TX's FEXT arrives at the RX lane's
    transmitter, so only NEXT (≈ 0.7 % differential, any edge: saturated) reaches a receiver;
    the same pairs both TX fail at a 5 ps edge on FEXT."""
    assert _run("tx_rx_pairs_microstrip_tight.kicad_pcb", "pcie4", rise_ps=5.0) == []
    assert _run("tx_pairs_microstrip_tight.kicad_pcb", "pcie4", rise_ps=5.0) != []


def test_spaced_pairs_and_stripline_pairs_pass() -> None:
    assert _run("tx_pairs_microstrip_spaced.kicad_pcb", "pcie4") == []
    # the tight pairs in a stripline: no FEXT (one dielectric), NEXT lands on the transmitters
    assert _run("tx_pairs_stripline_tight.kicad_pcb", "pcie4", rise_ps=5.0) == []


def test_nothing_to_judge_solves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule whose signal has no nets on the board builds no cross-section."""
    import accel_drc.analysis.crosstalk as xt

    monkeypatch.setattr(xt, "coupling_of", lambda *a, **k: pytest.fail("solved"))
    assert _run("tx_pairs_microstrip_tight.kicad_pcb", "usb3") == []
    assert _run("ddr4_dq_stripline_tight.kicad_pcb", "pcie4") == []


def test_no_stackup_is_cannot_verify(tmp_path: Path) -> None:
    text = (HERE / "ddr4_dq_stripline_tight.kicad_pcb").read_text()
    start = text.index("\t\t(stackup")
    end = text.index("\t\t)\n", start) + len("\t\t)\n")
    (tmp_path / "b.kicad_pcb").write_text(text[:start] + text[end:])
    board = read_board(str(tmp_path / "b.kicad_pcb"))
    rule = Rule(id="t", check="crosstalk", severity=Severity.WARNING, why="w", source="s",
                signal="ddr4", params={"budget_pct": 5, "max_gap_h": 4, "fastest_rise_ui": 0.125,
                                       "min_coupled_mm": 1.0, "single_ended": True})  # fmt: skip
    ctx = CheckContext(board=board, analysis=Analysis(board), board_class="inference")
    got = check_crosstalk(ctx, rule).findings
    assert [f.status for f in got] == [Status.CANNOT_VERIFY]
    assert "no stack-up" in got[0].message and got[0].severity is Severity.INFO


def test_parallel_runs_skip_slivers_and_degenerate_segments() -> None:
    """Hostile geometry: a neighbour 5 µm away (a clearance error, not a coupled run), a
    zero-length segment and a zero-width one give no run and no error."""
    vs, ve, vw = (
        np.array([[0.0, 0.0], [3.0, 3.0]]),
        np.array([[20.0, 0.0], [3.0, 3.0]]),
        np.array([0.1, 0.1]),
    )
    as_ = np.array([[0.0, 0.105], [5.0, 5.0], [0.0, -0.3]])
    ae = np.array([[20.0, 0.105], [5.0, 5.0], [20.0, -0.3]])
    runs = parallel_runs(vs, ve, vw, as_, ae, np.array([0.1, 0.1, 0.0]), 1.0)
    assert runs.aggressor.tolist() == [2]  # only the zero-width trace 0.25 mm away
    assert runs.gap_mm[0] == pytest.approx(0.25)


def test_every_paired_type_with_an_impedance_rule_has_a_crosstalk_rule() -> None:
    """Each class pack judges crosstalk on every signal type it judges impedance on (NVLink,
    PAM4 Ethernet, LPDDR and the slower generations had none); DDR-like types with their
    single-ended nets (DQ, command/address)."""
    from accel_drc.packs import load_library, rules_for_class

    lib = load_library()
    for cls in ("edge", "inference", "training"):
        rules, _packs = rules_for_class(lib, cls)
        xt = {r.signal: r for r in rules if r.check == "crosstalk"}
        imp = {r.signal for r in rules if r.check == "impedance" and r.signal}
        assert imp <= set(xt), (cls, sorted(imp - set(xt)))
        for sig in ("ddr3", "ddr4", "ddr5", "lpddr4", "lpddr5"):
            assert xt[sig].params.get("single_ended") is True, (cls, sig)
        for sig in ("eth56g", "eth112g", "nvlink4", "nvlink5"):
            assert "ICN" in xt[sig].why and xt[sig].severity is Severity.WARNING


def test_a_cited_fastest_edge_comes_from_the_signal_library() -> None:
    """HDMI 1.4's fastest edge is a fact of the signal type (rules/signals.yaml ``min_rise_ps``:
    75 ps 20-80 % = 100 ps 10-90 %): the rule's ``fastest_rise_ui`` does not apply.  At an
    assumed 0.01 UI (2.9 ps) the tight HDMI pairs would be far over the budget; at the cited
    100 ps they pass."""
    assert _run("hdmi14_pairs_microstrip_tight.kicad_pcb", "hdmi14", fastest_rise_ui=0.01) == []


def test_without_a_cited_edge_the_assumed_one_is_marked_unconfirmed() -> None:
    """PCIe Gen4 has no published transmitter rise minimum: the finding names the assumed
    0.125 UI as [U], with what was searched, and its basis says the edge is assumed."""
    got = _run("tx_pairs_microstrip_tight.kicad_pcb", "pcie4")
    assert got
    for f in got:
        assert "[U] assumed" in f.message
        edge = f.evidence["aggressors"][0]["fastest_edge"]
        assert edge.startswith("[U] assumed 0.125 UI") and "pcie-base" in edge
        assert f.evidence["basis"]["fastest_edge"] == "assumed"


def test_every_cited_edge_names_its_definition_and_a_known_reference() -> None:
    """Each ``min_rise_ps`` in rules/signals.yaml is a 10-90 % edge below one UI, its source
    cites rules/references.yaml ids and says which definition it converted; a type with no
    value that names a source marks it [U]."""
    import re as _re

    from accel_drc.packs import load_library

    lib = load_library()
    cited = 0
    for st in lib.signals.values():
        if st.min_rise_ps is None:
            assert not st.min_rise_source or st.min_rise_source.startswith("[U]"), st.id
            continue
        cited += 1
        assert 0 < st.min_rise_ps < 1000.0 / st.baud_gbd, st.id
        src = st.min_rise_source
        assert "20-80 %" in src and "10-90 %" in src, st.id
        ids = _re.findall(r"\[([a-z0-9-]+)\]", src)
        assert ids and all(i in lib.references for i in ids), (st.id, ids)
    assert cited >= 3


def test_dual_stripline_broadside_run_is_found_and_judged() -> None:
    """DDR4 DQ0 on In2.Cu right over DQ1 on In3.Cu for 40 mm, no plane between (a dual
    stripline): the broadside coupling from the two-strip field solution, ≈ 15 % NEXT (one
    dielectric: no FEXT), a violation on each; the finding names both layers, says broadside
    and gives the offset across that would pass.  Before broadside runs were searched, the two
    nets on two layers were never a couple: no finding."""
    got = {f.net: f for f in _run("ddr4_dq_dual_stripline_stacked.kicad_pcb", "ddr4")}
    assert set(got) == {"/DDR4_DQ0", "/DDR4_DQ1"}
    for net, f in got.items():
        assert f.status is Status.VIOLATION and f.severity is Severity.WARNING
        assert "In2.Cu/In3.Cu" in f.message and "broadside" in f.message
        assert "offset across (centre to centre) would meet the budget" in f.message
        assert f.evidence["broadside"] == "In2.Cu/In3.Cu"
        assert f.layer == ("In2.Cu" if net == "/DDR4_DQ0" else "In3.Cu")
        (a,) = f.evidence["aggressors"]
        assert 0.12 < a["next_one_ui"] < 0.2 and abs(a["fext_one_ui"]) < 1e-9
        assert a["coupled_mm"] == pytest.approx(40.0)


def test_dual_stripline_crossing_at_right_angles_passes() -> None:
    """The same two layers routed across each other (as a dual stripline should be): no run."""
    assert _run("ddr4_dq_dual_stripline_orthogonal.kicad_pcb", "ddr4") == []


def test_no_dual_stripline_costs_no_broadside_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose signal layers each have their own planes (every fixture but the dual
    stripline, vme-wren, Thor and the corpus) solves no broadside cross-section."""
    import accel_drc.analysis.crosstalk as xt

    monkeypatch.setattr(xt, "broadside_coupling_of", lambda *a, **k: pytest.fail("solved"))
    assert _run("ddr4_dq_two_layers.kicad_pcb", "ddr4")
    assert _run("tx_pairs_stripline_tight.kicad_pcb", "pcie4") == []


def test_dual_stripline_section_recovers_each_dielectric(tmp_path: Path) -> None:
    """The two layers' stacks each weight εr over everything down to their planes; the
    broadside cross-section takes b's side below, a's side above, and recovers the dielectric
    between the two signal layers (εr 4.2 here, 3.6 elsewhere) from what a's weighted εr holds
    beyond b's own side.  A stack-up whose numbers would make that εr non-positive falls back to
    a's weighted εr instead of solving a negative permittivity."""
    from accel_drc.analysis.crosstalk import broadside_section
    from accel_drc.analysis.impedance import layer_stack

    text = (HERE / "ddr4_dq_dual_stripline_stacked.kicad_pcb").read_text()
    mid = '(layer "dielectric 3" (type "prepreg") (thickness 0.2) (material "Test 3.6") (epsilon_r 3.6)'
    assert mid in text
    (tmp_path / "b.kicad_pcb").write_text(
        text.replace(mid, mid.replace("(epsilon_r 3.6)", "(epsilon_r 4.2)"))
    )
    board = read_board(str(tmp_path / "b.kicad_pcb"))
    planes = Analysis(board).plane_layers
    a, b = layer_stack(board, 2, planes), layer_stack(board, 3, planes)
    yb, ya, top, layers = broadside_section(a, b)
    assert (yb, ya, top) == pytest.approx((0.2, 0.435, 0.67))
    assert [x.er for x in layers] == pytest.approx([3.6, 4.2, 3.6])
    from dataclasses import replace

    odd = broadside_section(replace(a, er_below=1.0), b)[3]
    assert odd[1].er == pytest.approx(1.0)
