"""Via connections and stubs on hand-built boards, every number worked out by hand below."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from accel_drc.analysis import spatial_join, stack_geometry
from accel_drc.analysis import via_stubs as vs
from accel_drc.model import (
    Backdrill,
    Board,
    CopperLayer,
    DielectricSublayer,
    Footprint,
    Pad,
    Stackup,
    StackupLayer,
    Tracks,
    Vias,
    Zone,
    copper_layer_name,
)

# A 6-layer stack with distinct thicknesses so every stub is a unique sum:
#   F.Cu 0.035 | d1 0.100 εr3.0 | In1 0.0175 | d2 0.200 εr3.5 | In2 0.0175 |
#   d3 0.300 = 0.1@3.8 + 0.2@4.1 | In3 0.0175 | d4 0.200 εr3.5 | In4 0.0175 | d5 0.100 εr3.0 | B.Cu 0.035
CU = [0.035, 0.0175, 0.0175, 0.0175, 0.0175, 0.035]
DIEL = [(0.1, 3.0), (0.2, 3.5), None, (0.2, 3.5), (0.1, 3.0)]


def stackup6() -> Stackup:
    layers = [StackupLayer("F.Mask", "soldermask", 0.01)]
    for i in range(6):
        layers.append(StackupLayer(copper_layer_name(i, 6), "copper", CU[i], copper_index=i))
        if i == 5:
            break
        if DIEL[i] is None:
            subs = (
                DielectricSublayer(0.1, "FR4", 3.8, 0.02),
                DielectricSublayer(0.2, "FR4", 4.1, 0.02),
            )
            layers.append(StackupLayer(f"dielectric {i + 1}", "core", 0.3, "FR4", 3.8, 0.02, subs))
        else:
            t, er = DIEL[i]
            layers.append(StackupLayer(f"dielectric {i + 1}", "prepreg", t, "FR4", er, 0.02))
    layers.append(StackupLayer("B.Mask", "soldermask", 0.01))
    return Stackup(tuple(layers))


NETS = ("", "SIG", "GND", "SIG2")


def make_board(
    vias: list[tuple[float, float, int, int, int, bool]],
    tracks: list[tuple[float, float, float, float, int, int]] = (),
    zones: tuple[Zone, ...] = (),
    footprints: tuple[Footprint, ...] = (),
    backdrills: dict[int, Backdrill] | None = None,
    stackup: Stackup | None = None,
) -> Board:
    """vias: (x, y, start, end, net, micro); tracks: (x0, y0, x1, y1, layer, net)."""
    nv = len(vias)
    v = Vias(
        pos=np.array([[a[0], a[1]] for a in vias], float).reshape(-1, 2),
        drill=np.full(nv, 0.2),
        diameter=np.full(nv, 0.4),
        start=np.array([a[2] for a in vias], np.int16),
        end=np.array([a[3] for a in vias], np.int16),
        net=np.array([a[4] for a in vias], np.int32),
        micro=np.array([a[5] for a in vias], bool),
        uuid=tuple(f"v{i}" for i in range(nv)),
        layer_count=6,
        backdrills=backdrills or {},
    )
    nt = len(tracks)
    t = Tracks(
        start=np.array([[a[0], a[1]] for a in tracks], float).reshape(-1, 2),
        end=np.array([[a[2], a[3]] for a in tracks], float).reshape(-1, 2),
        mid=np.full((nt, 2), np.nan),
        width=np.full(nt, 0.1),
        layer=np.array([a[4] for a in tracks], np.int16),
        net=np.array([a[5] for a in tracks], np.int32),
    )
    return Board(
        source="hand",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, 6), copper_layer_name(i, 6)) for i in range(6)
        ),
        stackup=stackup6() if stackup is None else stackup,
        nets=NETS,
        tracks=t,
        vias=v,
        zones=zones,
        footprints=footprints,
    )


def square(cx: float, cy: float, half: float) -> np.ndarray:
    return np.array(
        [
            [cx - half, cy - half],
            [cx + half, cy - half],
            [cx + half, cy + half],
            [cx - half, cy + half],
        ]
    )


# face positions by hand (mm from the top of F.Cu)
T = [0.0, 0.135, 0.3525, 0.67, 0.8875, 1.005]  # top faces
B = [0.035, 0.1525, 0.37, 0.6875, 0.905, 1.04]  # bottom faces


def test_stack_faces_by_hand() -> None:
    board = make_board([])
    g = vs.StackGeometry.from_board(board)
    for i in range(6):
        assert g.top_face(i) == pytest.approx(T[i], abs=1e-12)
        assert g.bottom_face(i) == pytest.approx(B[i], abs=1e-12)


def _stubs(board: Board) -> vs.ViaStubs:
    return vs.compute(board)


def test_through_via_top_and_inner() -> None:
    # via 0: through, tracks on F.Cu and In2 -> top 0, bottom = B5 - B2 = 0.67
    # via 1: through, tracks on In1 and In2 -> top = T1 - T0 = 0.135, bottom 0.67
    board = make_board(
        [(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 3, False)],
        [
            (10, 10, 15, 10, 0, 1),
            (5, 10, 10.1, 10.05, 2, 1),  # end 0.112 mm from the centre: inside the 0.2 pad radius
            (20, 10, 25, 10, 1, 3),
            (20.15, 10, 25, 12, 2, 3),
            (20.3, 10, 30, 10, 3, 3),  # end 0.3 mm away: outside the pad, no connection
            (20, 10, 25, 10, 4, 1),  # other net: no connection
        ],
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu", "In2.Cu"]
    assert s.connected_names(1) == ["In1.Cu", "In2.Cu"]
    assert s.top_stub_mm[0] == pytest.approx(0.0)
    assert s.bottom_stub_mm[0] == pytest.approx(0.67)
    assert s.top_stub_mm[1] == pytest.approx(0.135)
    assert s.stub_mm[1] == pytest.approx(0.67)
    # εeff of d3 (0.1@3.8 + 0.2@4.1), d4 (0.2@3.5), d5 (0.1@3.0): (0.38 + 0.82 + 0.7 + 0.3) / 0.6
    eps = 2.2 / 0.6
    assert s.eps_eff[0] == pytest.approx(eps)
    f = 299_792_458.0 / (4 * 0.67e-3 * math.sqrt(eps))
    assert s.f_res_hz[0] == pytest.approx(f)
    assert f == pytest.approx(58.42e9, rel=1e-3)


def test_blind_buried_micro() -> None:
    board = make_board(
        [
            (10, 10, 0, 2, 1, False),  # blind F.Cu-In2, used on F.Cu, In1
            (20, 10, 1, 4, 1, False),  # buried In1-In4, used on In2, In4
            (30, 10, 0, 1, 1, True),  # micro F.Cu-In1, used on both
        ],
        [
            (10, 10, 12, 10, 0, 1),
            (10, 10, 12, 12, 1, 1),
            (20, 10, 22, 10, 2, 1),
            (20, 10, 22, 10, 4, 1),
            (30, 10, 32, 10, 0, 1),
            (30, 10, 32, 10, 1, 1),
        ],
    )
    s = _stubs(board)
    assert [s.types[i] for i in range(3)] == ["blind", "buried", "micro"]
    # blind: bottom = B2 - B1 = d2 + In2 = 0.2175
    assert s.top_stub_mm[0] == pytest.approx(0.0)
    assert s.bottom_stub_mm[0] == pytest.approx(0.2175)
    # buried: top = T2 - T1 = In1 + d2 = 0.2175; bottom = B4 - B4 = 0
    assert s.top_stub_mm[1] == pytest.approx(0.2175)
    assert s.bottom_stub_mm[1] == pytest.approx(0.0)
    assert s.eps_eff[1] == pytest.approx(3.5)
    # micro: no stub at all, resonance at infinity
    assert s.stub_mm[2] == pytest.approx(0.0)
    assert math.isinf(s.f_res_hz[2])


def test_stacked_vias_connect_each_other() -> None:
    # micro F.Cu-In1 on top of a buried In1-In4, same net, same place
    board = make_board(
        [(10, 10, 0, 1, 1, True), (10, 10, 1, 4, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 4, 1)],
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu", "In1.Cu"]
    assert s.connected_names(1) == ["In1.Cu", "In4.Cu"]
    assert s.stub_mm[0] == pytest.approx(0.0)
    assert s.stub_mm[1] == pytest.approx(0.0)


def test_zones_solid_and_spoke() -> None:
    # via 0: a SIG zone on In3 containing the centre -> connected In3 (the GND plane is not)
    # via 1: a zone that only touches the pad edge (a spoke ending at r = 0.2) -> connected
    # via 2: a zone of the same net 0.1 mm beyond the pad edge -> not connected
    spoke = np.array([[20.2, 9.9], [21, 9.9], [21, 10.1], [20.2, 10.1]])
    far = np.array([[30.3, 9.9], [31, 9.9], [31, 10.1], [30.3, 10.1]])
    zones = (
        Zone(net=1, net_name="SIG", layers=(3,), filled={3: (square(10, 10, 2),)}),
        Zone(net=1, net_name="SIG", layers=(3,), filled={3: (spoke, far)}),
        Zone(net=2, net_name="GND", layers=(4,), filled={4: (square(10, 10, 50),)}),
    )
    board = make_board(
        [(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 1, False), (30, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (20, 10, 22, 10, 0, 1), (30, 10, 32, 10, 0, 1)],
        zones=zones,
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu", "In3.Cu"]
    assert s.connected_names(1) == ["F.Cu", "In3.Cu"]
    assert s.connected_names(2) == ["F.Cu"]
    # bottom stub from In3: B5 - B3 = d4 + In4 + d5 + B.Cu = 0.2 + 0.0175 + 0.1 + 0.035
    assert s.bottom_stub_mm[0] == pytest.approx(0.3525)
    # connected on F.Cu only: the whole barrel below F.Cu, B5 - B0 = 1.005
    assert s.bottom_stub_mm[2] == pytest.approx(1.005)


def test_zone_with_hole_bridged_like_kicad() -> None:
    # KiCad writes a fill with a hole as one ring with a zero-width bridge; the via sits in the hole
    ring = np.array(
        [
            [0, 0],
            [20, 0],
            [20, 20],
            [0, 20],
            [0, 10],
            [8, 10],
            [8, 12],
            [12, 12],
            [12, 8],
            [8, 8],
            [8, 10],
            [0, 10],
        ],
        float,
    )
    zones = (Zone(net=1, net_name="SIG", layers=(2,), filled={2: (ring,)}),)
    board = make_board(
        [(10, 10, 0, 5, 1, False), (4, 4, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (4, 4, 6, 4, 0, 1)],
        zones=zones,
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu"]
    assert s.connected_names(1) == ["F.Cu", "In2.Cu"]


def test_pth_pad_and_via_in_pad() -> None:
    fp = Footprint(
        reference="J1",
        value="CONN",
        name="Conn:THT",
        layer="F.Cu",
        x=50,
        y=50,
        pads=(
            Pad("1", 1, "thru_hole", "circle", 50, 50, 1.6, 1.6, 0, 1.0, tuple(range(6))),
            Pad("2", 3, "smd", "rect", 60, 50, 1.0, 0.6, 90, None, (0,)),
        ),
    )
    board = make_board(
        [(60, 50.3, 0, 5, 3, False)],  # inside pad 2 rotated 90°: 0.6 wide, 1.0 tall
        [
            (50.7, 50, 55, 50, 4, 1),  # ends 0.7 mm from the PTH centre, inside the 0.8 radius
            (60, 50.3, 65, 50, 1, 3),
        ],
        footprints=(fp,),
    )
    s = _stubs(board)
    assert s.types == ("through", "pth")
    assert s.connected_names(0) == ["F.Cu", "In1.Cu"]
    assert s.ref[1] == "J1.1"
    assert s.connected_names(1) == ["F.Cu", "In4.Cu"]
    # PTH: bottom = B5 - B4 = d5 + B.Cu = 0.135
    assert s.bottom_stub_mm[1] == pytest.approx(0.135)
    # via-in-pad: bottom = B5 - B1 = 0.8875
    assert s.bottom_stub_mm[0] == pytest.approx(0.8875)


def test_backdrill_from_board_and_cut() -> None:
    tracks = [
        (10, 10, 12, 10, 1, 1),
        (10, 10, 12, 10, 2, 1),
        (20, 10, 22, 10, 1, 1),
        (20, 10, 22, 10, 3, 1),
    ]
    bds = {
        0: Backdrill(side="bottom", must_not_cut=2, residual_stub_mm=0.2),
        1: Backdrill(side="bottom", must_not_cut=1, residual_stub_mm=0.2),
    }
    board = make_board([(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 1, False)], tracks, backdrills=bds)
    s = _stubs(board)
    # via 0: top 0.135 (F.Cu unused), bottom 0.67 drilled back to the 0.2 residual -> 0.2
    assert s.geometric_stub_mm[0] == pytest.approx(0.67)
    assert s.bottom_stub_mm[0] == pytest.approx(0.2)
    assert s.stub_mm[0] == pytest.approx(0.2)
    assert not s.backdrill_cuts[0]
    # via 1 is used on In3 but the drill may cut everything below In1: a finding
    assert s.backdrill_cuts[1]


def test_backdrill_stops_at_must_not_cut_below_the_connected_layer() -> None:
    """The drill stops at the must-not-cut layer, not at the deepest connected one: what it
    leaves is the barrel between them plus the allowance (a too-deep must-not-cut layer is a
    real stub, never hidden behind the residual).  Hand-worked on the 6-layer stack."""
    tracks = [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 1, 1), (30, 10, 32, 10, 4, 1)]
    tracks += [(30, 10, 32, 10, 5, 1)]
    bds = {
        # via 0 used on F.Cu and In1; drilled from the bottom up to In3 (must not cut)
        0: Backdrill(side="bottom", must_not_cut=3, residual_stub_mm=0.05),
        # via 1 used on In4 and B.Cu; drilled from the top down to In2 (must not cut)
        1: Backdrill(side="top", must_not_cut=2, residual_stub_mm=0.05),
    }
    board = make_board([(10, 10, 0, 5, 1, False), (30, 10, 0, 5, 1, False)], tracks, backdrills=bds)
    s = _stubs(board)
    # via 0: left from In1's bottom face to In3's bottom face: d2 0.2 + In2 0.0175 + d3 0.3 +
    # In3 0.0175 = 0.535, + 0.05 = 0.585 (the undrilled stub was 0.9525)
    assert s.geometric_stub_mm[0] == pytest.approx(0.8875)  # In1 bottom -> B.Cu bottom
    assert s.bottom_stub_mm[0] == pytest.approx(0.535 + 0.05)
    assert s.stub_mm[0] == pytest.approx(0.585)
    assert not s.backdrill_cuts[0]
    # via 1: left from In2's top face to In4's top face: In2 0.0175 + d3 0.3 + In3 0.0175 +
    # d4 0.2 = 0.535, + 0.05 = 0.585
    assert s.top_stub_mm[1] == pytest.approx(0.535 + 0.05)
    assert not s.backdrill_cuts[1]
    # its resonance uses the dielectrics it still crosses: d2 0.2@3.5, d3 0.1@3.8 + 0.2@4.1
    assert s.eps_eff[0] == pytest.approx((0.2 * 3.5 + 0.1 * 3.8 + 0.2 * 4.1) / 0.5)


def test_backdrill_residual_never_longer_than_the_undrilled_stub() -> None:
    """A generous allowance cannot make a stub longer than the barrel it is cut from."""
    board = make_board(
        [(10, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 4, 1)],
        backdrills={0: Backdrill(side="bottom", must_not_cut=4, residual_stub_mm=5.0)},
    )
    s = _stubs(board)
    assert s.bottom_stub_mm[0] == pytest.approx(0.1 + 0.035)  # In4 bottom -> B.Cu bottom
    assert s.stub_mm[0] == pytest.approx(s.geometric_stub_mm[0])


def two_nets_on_f_cu_and_in2() -> Board:
    """Via 0 on SIG and via 1 on SIG2, both through vias used on F.Cu and In2.Cu (0.67 mm
    bottom stub each)."""
    return make_board(
        [(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 3, False)],
        [
            (10, 10, 12, 10, 0, 1),
            (10, 10, 12, 10, 2, 1),
            (20, 10, 22, 10, 0, 3),
            (20, 10, 22, 10, 2, 3),
        ],
    )


def test_backdrill_except_net_leaves_a_net_undrilled() -> None:
    """`except_net` takes nets out of an entry: SIG is matched by 'SIG.*' but excepted, so its
    via keeps its 0.67 mm stub while SIG2's is drilled back to the residual."""
    board = two_nets_on_f_cu_and_in2()
    entry = {"match": {"net": "SIG.*"}, "side": "bottom", "must_not_cut": "In2.Cu",
             "residual_stub_mm": 0.1}  # fmt: skip
    s = vs.compute(board, {"backdrill": [entry]})
    assert s.stub_mm[0] == pytest.approx(0.1) and s.stub_mm[1] == pytest.approx(0.1)
    s = vs.compute(board, {"backdrill": [{**entry, "except_net": "SIG"}]})
    assert s.backdrill[0] is None and s.stub_mm[0] == pytest.approx(0.67)
    assert s.backdrill[1] is not None and s.stub_mm[1] == pytest.approx(0.1)


def test_backdrill_from_config_by_net_and_class() -> None:
    board = two_nets_on_f_cu_and_in2()
    cfg = {
        "backdrill": [
            {
                "match": {"net": "SIG"},
                "side": "bottom",
                "must_not_cut": "In2.Cu",
                "residual_stub_mm": 0.25,
            },
            {
                "match": {"net_class": "Default"},
                "side": "top",
                "must_not_cut": "F.Cu",
                "residual_stub_mm": 0.1,
            },
        ]
    }
    s = vs.compute(board, cfg)
    assert s.backdrill[0] is not None and s.backdrill[0].source == "config"
    assert s.stub_mm[0] == pytest.approx(0.25)
    # SIG2 only matches the second entry: a top drill on a via used on F.Cu changes nothing,
    # the 0.67 bottom stub stays
    assert s.backdrill[1].side == "top"
    assert s.stub_mm[1] == pytest.approx(0.67)
    rows = vs.via_rows(type("A", (), {"via_stubs": s, "board": board})())
    assert rows[0]["backdrill"] == {
        "side": "bottom",
        "must_not_cut": "In2.Cu",
        "residual_stub_mm": 0.25,
        "source": "config",
    }
    assert rows[0]["connected"] == ["F.Cu", "In2.Cu"]
    assert rows[0]["stub_mm"] == pytest.approx(0.25)
    assert set(rows[0]) >= {
        "x",
        "y",
        "net",
        "start",
        "end",
        "type",
        "top_stub_mm",
        "bottom_stub_mm",
    }


def test_backdrill_without_residual_is_unknown() -> None:
    board = make_board(
        [(10, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 2, 1)],
        backdrills={0: Backdrill(side="bottom", must_not_cut=2)},
    )
    s = _stubs(board)
    assert math.isnan(s.stub_mm[0])


def test_no_stackup_means_unknown() -> None:
    board = make_board(
        [(10, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 2, 1)],
        stackup=Stackup(()),
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu", "In2.Cu"]
    assert math.isnan(s.stub_mm[0])
    assert not s.stackup_known


def test_resonance_formula() -> None:
    # 1 inch stub in air resonates at c / (4 · 0.0254 m) = 2.9507 GHz; at εr 4 half that
    assert vs.resonance_hz(25.4, 1.0) == pytest.approx(2.950713e9, rel=1e-6)
    assert vs.resonance_hz(25.4, 4.0) == pytest.approx(2.950713e9 / 2, rel=1e-6)
    # domain.md §4 rule of thumb: L[in] = 0.3 / rate[Gb/s] gives f_res ≈ 10 × Nyquist at Dk ≈ 3.5
    rate = 32.0
    f = vs.resonance_hz(0.3 / rate * 25.4, 3.5)
    assert f / (rate / 2 * 1e9) == pytest.approx(10.5, rel=0.02)


def test_near_pairs_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    q = rng.uniform(0, 50, (300, 2))
    qn = rng.integers(1, 4, 300)
    qr = rng.choice([0.1, 0.2, 0.5, 3.0], 300)
    t = rng.uniform(0, 50, (2000, 2))
    tn = rng.integers(1, 4, 2000)
    a, b = vs.near_pairs(q, qn, qr, t, tn)
    got = set(zip(a.tolist(), b.tolist()))
    d = np.hypot(q[:, None, 0] - t[None, :, 0], q[:, None, 1] - t[None, :, 1])
    want = {
        (int(i), int(j))
        for i, j in zip(*np.nonzero((d <= qr[:, None]) & (qn[:, None] == tn[None, :])))
    }
    assert got == want
    assert len(want) > 50


@pytest.mark.slow
def test_scale_100k_vias_1m_segments() -> None:
    """100k vias and 1M segments in memory: the join finds every connection at that size (it
    runs in 3.9 s on two shared cores; an O(vias × tracks) join, 10^11 distance tests, would not
    finish within CI's limit).  No clock in the assertion: speed is bench/'s business."""
    from accel_drc.model import Tracks as T
    from accel_drc.model import Vias as V

    rng = np.random.default_rng(1)
    n_layers, nv, nt, nn = 24, 100_000, 1_000_000, 20_000
    vpos = rng.uniform(0, 500, (nv, 2))
    vnet = rng.integers(1, nn, nv)
    k = 2 * nv
    # two track ends at each via, 0.1 mm off centre (inside the 0.225 mm pad radius), on
    # layers 3 and 17; the other 800k tracks anywhere
    start = np.concatenate(
        [np.repeat(vpos, 2, axis=0) + [0.1, 0.0], rng.uniform(0, 500, (nt - k, 2))]
    )
    end = start + rng.normal(0, 2, (nt, 2))
    net = np.concatenate([np.repeat(vnet, 2), rng.integers(1, nn, nt - k)]).astype(np.int32)
    layer = np.concatenate([np.tile([3, 17], nv), np.full(nt - k, 9)]).astype(np.int16)
    tracks = T(
        start=start,
        end=end,
        mid=np.full((nt, 2), np.nan),
        width=np.full(nt, 0.1),
        layer=layer,
        net=net,
    )
    vias = V(
        pos=vpos,
        drill=np.full(nv, 0.2),
        diameter=np.full(nv, 0.45),
        start=np.zeros(nv, np.int16),
        end=np.full(nv, n_layers - 1, np.int16),
        net=vnet.astype(np.int32),
        micro=np.zeros(nv, bool),
        layer_count=n_layers,
    )
    board = Board(
        source="synth",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, n_layers), copper_layer_name(i, n_layers))
            for i in range(n_layers)
        ),
        nets=("", *(f"N{i}" for i in range(1, nn))),
        tracks=tracks,
        vias=vias,
    )
    conn = vs.find_connections(board)["connected"]
    assert conn[:, 3].all() and conn[:, 17].all()
    # the random tracks on layer 9 reach a via only when one of the via's net ends there
    assert conn.sum() >= 2 * nv


def test_track_body_and_pad_edge_touch_like_kicad() -> None:
    """KiCad joins copper that touches, not only track ends: a 2.54 mm wide track running over
    the via (ending 0.67 mm away) connects; a 0.1 mm track passing 0.26 mm from the centre does
    not (0.2 + 0.05 < 0.26); an SMD pad whose edge overlaps the via pad connects."""
    fp = Footprint(
        reference="R1",
        value="0R",
        name="R_0402",
        layer="F.Cu",
        x=40,
        y=10,
        pads=(Pad("1", 1, "smd", "rect", 40.5, 10, 0.6, 0.5, 0, None, (0,)),),
    )
    board = make_board(
        [(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 1, False), (40, 10, 0, 5, 1, False)],
        [
            (0, 10.6, 9.4, 10.6, 0, 1),  # wide track below: distance 0.6 <= 0.2 + 1.27
            (19, 10.26, 21, 10.26, 3, 1),  # passes 0.26 from the centre: no
            (19, 10.24, 21, 10.24, 4, 1),  # passes 0.24 from the centre: yes (0.2 + 0.05)
        ],
        footprints=(fp,),
    )
    # the wide track: make it 2.54 mm wide
    tr = board.tracks
    width = tr.width.copy()
    width[0] = 2.54
    board = Board(
        source=board.source,
        format=board.format,
        copper_layers=board.copper_layers,
        stackup=board.stackup,
        nets=board.nets,
        tracks=Tracks(tr.start, tr.end, tr.mid, width, tr.layer, tr.net),
        vias=board.vias,
        footprints=board.footprints,
    )
    s = _stubs(board)
    assert s.connected_names(0) == ["F.Cu"]
    assert s.connected_names(1) == ["In4.Cu"]
    # pad 40.2..40.8 × 9.75..10.25: its left edge is 0.2 from the via centre = the via radius
    assert s.connected_names(2) == ["F.Cu"]


def test_pad_geometries_match_distance() -> None:
    pads = vs.PadTable(
        xy=np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]]),
        w=np.array([2.0, 1.0, 3.0]),
        h=np.array([1.0, 1.0, 1.0]),
        rot=np.array([30.0, 0.0, 90.0]),
        shape=np.array([0, 1, 2], np.int8),
        net=np.array([1, 1, 1]),
        layers=np.ones((3, 2), bool),
        pth=np.ones(3, bool),
        drill=np.full(3, 0.5),
        fp_side=np.zeros(3, np.int64),
        ref=("A.1", "A.2", "A.3"),
        uuid=("", "", ""),
    )
    import shapely

    rng = np.random.default_rng(3)
    idx = np.repeat(np.arange(3), 200)
    pts = pads.xy[idx] + rng.uniform(-2.5, 2.5, (600, 2))
    geo = pads.geometries(idx)
    want = shapely.distance(geo, shapely.points(pts))
    np.testing.assert_allclose(pads.distance(idx, pts), want, atol=2e-3)


def _faces_by_walking(st: Stackup) -> tuple[list[float], list[float]]:
    """Top and bottom face depth of each copper layer, by walking the stack-up layer by layer
    (an oracle independent of the prefix sums)."""
    z = 0.0
    top: list[float] = []
    bot: list[float] = []
    for layer in st.layers:
        if layer.kind in ("soldermask", "silkscreen", "solderpaste"):
            continue
        if layer.is_copper:
            top.append(z)
            z += layer.thickness_mm
            bot.append(z)
        else:
            z += (
                sum(s.thickness_mm for s in layer.sublayers)
                if layer.sublayers
                else layer.thickness_mm
            )
    return top, bot


def test_stubs_property_against_walk() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st_

    top, bot = _faces_by_walking(stackup6())
    g = vs.StackGeometry.from_board(make_board([]))

    @settings(max_examples=300, deadline=None)
    @given(st_.integers(0, 5), st_.integers(0, 5), st_.sets(st_.integers(0, 5), min_size=1))
    def check(a: int, b: int, used: set[int]) -> None:
        s, e = min(a, b), max(a, b)
        used = {u for u in used if s <= u <= e}
        if not used:
            return
        conn = np.zeros((1, 6), bool)
        conn[0, sorted(used)] = True
        r = vs.compute_stubs(g, np.array([s]), np.array([e]), conn)
        want_top = top[min(used)] - top[s]
        want_bot = bot[e] - bot[max(used)]
        assert r["top"][0] == pytest.approx(want_top, abs=1e-12)
        assert r["bottom"][0] == pytest.approx(want_bot, abs=1e-12)
        assert r["stub"][0] == pytest.approx(max(want_top, want_bot), abs=1e-12)
        # f_res is the quarter-wave formula with the stub's own εeff
        if r["stub"][0] > 0:
            assert r["f_res"][0] == pytest.approx(
                stack_geometry.C0 / (4 * r["stub"][0] * 1e-3 * np.sqrt(r["eps"][0]))
            )

    check()


def test_board_backdrill_takes_residual_from_config() -> None:
    # the board (KiCad 10 / IPC-2581) says where the via is drilled; the config what is left
    board = make_board(
        [(10, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10, 10, 12, 10, 2, 1)],
        backdrills={0: Backdrill(side="bottom", must_not_cut=2, source="board")},
    )
    cfg = {"backdrill": [{"match": {"net": "SIG"}, "side": "bottom", "residual_stub_mm": 0.18}]}
    s = vs.compute(board, cfg)
    assert s.backdrill[0].must_not_cut == 2 and s.backdrill[0].source == "board+config"
    assert s.stub_mm[0] == pytest.approx(0.18)


def _stub_columns(s: vs.ViaStubs) -> list:
    return [
        s.xy.tolist(),
        s.net.tolist(),
        s.connected.tolist(),
        np.nan_to_num(s.stub_mm, nan=-1.0).tolist(),
        np.nan_to_num(s.f_res_hz, nan=-1.0, posinf=-2.0).tolist(),
        list(s.types),
        list(s.uuid),
    ]


def test_prefetched_via_stubs_equal_in_line() -> None:
    """The pipeline may compute the via table on a background thread while it classifies
    (``Analysis.prefetch("via_stubs")``, issue 18): the same table as computed on demand."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS["openpci2-backplane"]))
    ahead = Analysis(board)
    ahead.prefetch("via_stubs")
    assert ahead.prefetching("via_stubs")
    got = ahead.via_stubs
    assert ahead.via_stubs is got  # one computation, kept
    fresh = Analysis(board).via_stubs
    assert len(got) > 0 and got.connected.any()
    assert _stub_columns(got) == _stub_columns(fresh)


def test_prefetched_via_stubs_error_reaches_the_caller(monkeypatch) -> None:
    """A bug in the via table computed ahead is raised where a check asks for the table (the
    pipeline turns it into a crash finding), not lost with the thread."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    def boom(self: Analysis) -> vs.ViaStubs:
        raise RuntimeError("via table exploded")

    monkeypatch.setattr(Analysis, "_compute_via_stubs", boom)
    a = Analysis(read_board(str(FIXTURE_BOARDS["openpci2-backplane"])))
    a.prefetch("via_stubs")
    a.settle_prefetched()  # waits for the thread; the error is kept for whoever asks
    with pytest.raises(RuntimeError, match="via table exploded"):
        _ = a.via_stubs


def _rows_of(s: vs.ViaStubs, nets: set[int]) -> list:
    """The table's columns on the barrels of ``nets``, in barrel order, plus their via rows."""
    idx = s.rows_for_nets(nets)
    cols = _stub_columns(s)
    out = [[col[i] for i in idx.tolist()] for col in cols]
    out.append(s.via_row[idx].tolist())
    out.append(np.nan_to_num(s.geometric_stub_mm[idx], nan=-1.0).tolist())
    out.append([s.backdrill[i] for i in idx.tolist()])
    return out


@pytest.mark.parametrize(
    "name", ["openpci2-backplane", "m2-oculink-adapter", "coral-tpu-m2-adapter"]
)
def test_scoped_via_table_equals_the_whole_one_on_its_nets(name: str) -> None:
    """The checks' via table holds the barrels of the typed and pair nets only (issue 18:
    every join is within one net, so those rows cannot change); compared row by row with
    the whole table on real boards, and it refuses a net outside its scope."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS[name]))
    whole = Analysis(board).via_stubs
    scoped_an = Analysis(board)
    scoped_an.scope_via_table()
    scoped = scoped_an.via_stubs
    nets = set(scoped_an.via_nets or ())
    assert nets and scoped.nets == frozenset(nets)
    assert len(scoped) == len(whole.rows_for_nets(nets)) < len(whole)
    assert _rows_of(scoped, nets) == _rows_of(whole, nets)
    outside = sorted(set(whole.net.tolist()) - nets - {0})
    assert outside, "a board with ground vias: some barrel is outside the scope"
    with pytest.raises(LookupError):
        scoped.rows_for_nets([outside[0]])
    with pytest.raises(RuntimeError):
        scoped_an.scope_via_table()  # the table exists already: too late to scope it


def test_scoped_via_table_keeps_board_backdrills_on_their_rows() -> None:
    """A scoped table maps a board backdrill (keyed by via row) to its barrel, and a zone of
    a net outside the scope is never looked at."""
    tracks = [(10, 10, 12, 10, 1, 3), (10, 10, 12, 10, 2, 3), (20, 10, 22, 10, 1, 1)]
    bds = {2: Backdrill(side="bottom", must_not_cut=2, residual_stub_mm=0.2)}
    fill = {3: (square(15, 10, 20),)}
    gnd = Zone(net=2, net_name="GND", layers=(3,), outline=square(15, 10, 20), filled=fill)

    class Untouchable(dict):
        def items(self):  # type: ignore[no-untyped-def]  # noqa: ANN202
            raise AssertionError("the fills of a net outside the scope were read")

    gnd_unread = Zone(net=2, net_name="GND", layers=(3,), filled=Untouchable(fill))
    vias = [(5, 10, 0, 5, 2, False), (20, 10, 0, 5, 1, False), (10, 10, 0, 5, 3, False)]
    board = make_board(vias, tracks, zones=(gnd,), backdrills=bds)
    whole = vs.compute(board)
    board_unread = make_board(vias, tracks, zones=(gnd_unread,), backdrills=bds)
    scoped = vs.compute(board_unread, nets=[3, 1])
    assert scoped.via_row.tolist() == [1, 2]
    assert scoped.backdrill[1] is bds[2] and scoped.backdrill[0] is None
    for r_whole, r_scoped in ((1, 0), (2, 1)):
        assert whole.connected[r_whole].tolist() == scoped.connected[r_scoped].tolist()
        assert whole.stub_mm[r_whole] == pytest.approx(scoped.stub_mm[r_scoped])
    assert whole.connected[0, 3]  # the GND via on its plane, in the whole table only
    assert scoped.uuid[1] == "v2"


def test_box_filter_keeps_every_query_near_a_target() -> None:
    """:func:`_box_holds_any` may keep too many queries, never too few (random boxes, against
    a brute-force box test), and :func:`near_pairs` gives the same pairs with it as without."""
    rng = np.random.default_rng(11)
    for _ in range(25):
        q = rng.uniform(-10, 110, (4000, 2))
        r = rng.uniform(0, rng.uniform(0.05, 30), 4000)
        t = rng.uniform(0, 100, (int(rng.integers(1, 300)), 2))
        keep = spatial_join._box_holds_any(q, r, t)
        dx = np.abs(q[:, None, 0] - t[None, :, 0]) <= r[:, None]
        dy = np.abs(q[:, None, 1] - t[None, :, 1]) <= r[:, None]
        need = (dx & dy).any(axis=1)
        assert not (need & ~keep).any()
    q = rng.uniform(0, 400, (60000, 2))
    qn = rng.integers(1, 5, 60000)
    qr = rng.uniform(0.1, 4.0, 60000)
    t = rng.uniform(0, 400, (500, 2))
    tn = rng.integers(1, 5, 500)
    # the filter is on
    assert len(q) >= spatial_join._SAT_MIN_QUERIES and len(q) > spatial_join._SAT_RATIO * len(t)
    a, b = vs.near_pairs(q, qn, qr, t, tn)
    d = np.hypot(q[:, None, 0] - t[None, :, 0], q[:, None, 1] - t[None, :, 1])
    want = set(zip(*np.nonzero((d <= qr[:, None]) & (qn[:, None] == tn[None, :]))))
    assert set(zip(a.tolist(), b.tolist())) == {(int(i), int(j)) for i, j in want}
    assert len(want) > 100


def test_tables_take_rows() -> None:
    """``Vias.take`` / ``Tracks.take`` (the scoped via table's subsets): each column follows
    its rows, a backdrill and a declared type move with their via, uuids stay lazy."""
    bds = {2: Backdrill(side="bottom", must_not_cut=2)}
    board = make_board(
        [(5, 10, 0, 5, 2, False), (20, 10, 0, 5, 1, False), (10, 10, 1, 4, 3, False)],
        [(0, 0, 1, 0, 0, 1), (0, 1, 2, 1, 3, 2), (0, 2, 3, 2, 5, 3)],
        backdrills=bds,
    )
    vias = dataclasses.replace(board.vias, declared={2: "blind"})
    sub = vias.take(np.array([2, 0]))
    assert sub.pos.tolist() == [[10, 10], [5, 10]] and sub.net.tolist() == [3, 2]
    assert sub.start.tolist() == [1, 0] and list(sub.uuid) == ["v2", "v0"]
    assert sub.backdrills == {0: bds[2]} and sub.types == ("blind", "through")
    tr = board.tracks.take(np.array([2]))
    assert tr.start.tolist() == [[0, 2]] and tr.layer.tolist() == [5] and tr.net.tolist() == [3]
    assert len(tr) == 1 and len(tr.uuid) == 1
