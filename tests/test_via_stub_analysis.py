"""Via connections and stubs on hand-built boards, every number worked out by hand below."""

from __future__ import annotations

import math

import numpy as np
import pytest
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


def test_backdrill_from_config_by_net_and_class() -> None:
    board = make_board(
        [(10, 10, 0, 5, 1, False), (20, 10, 0, 5, 3, False)],
        [
            (10, 10, 12, 10, 0, 1),
            (10, 10, 12, 10, 2, 1),
            (20, 10, 22, 10, 0, 3),
            (20, 10, 22, 10, 2, 3),
        ],
    )
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
