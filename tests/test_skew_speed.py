"""The skew check's speed work (issue 32) computes exactly what the plain computation did.

* εeff of a microstrip: one solve of the one mode asked for (:func:`fd_mode_eps_eff`) against
  the plain two full :func:`fd_coupled` solves (dielectric, then air) and (Z_air/Z)², on
  hand-made cross-sections and on every cross-section the check times on the fixture boards
  and on vme-wren (where the shared boards are present).
* The fly-by graph's nodes: numbered by numpy (:func:`_nodes`) against the plain dictionary
  that numbered each track end as it first appeared, snapping to 1 µm included.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis import Analysis, delay
from accel_drc.analysis.impedance import FdLayer, fd_coupled, field_cross_section, layer_stack
from accel_drc.analysis.impedance.solver import fd_mode_eps_eff
from accel_drc.readers import read_board
from conftest import SHARED_BOARDS

ROOT = Path(__file__).resolve().parent.parent
SKEW = ROOT / "fixtures" / "checks" / "skew"
VME_WREN = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"


def _plain_eps_eff(w, s, t, y, layers, top, resolution, mask, odd) -> float:  # noqa: ANN001
    """What ``delay._solve_eps_eff`` computed before: two full solves, (Z_air/Z)²."""
    k = 1 if odd else 0
    z = fd_coupled(w, s, t, y, layers, top, resolution, mask)[k]
    air = tuple(FdLayer(lay.y0, lay.y1, 1.0) for lay in layers)
    z_air = fd_coupled(w, s, t, y, air, top, resolution, None if mask is None else (mask[0], 1.0))[
        k
    ]
    return round((z_air / z) ** 2, 4)


@pytest.mark.parametrize("odd", [True, False])
@pytest.mark.parametrize(
    ("w", "s", "h", "er", "mask"),
    [
        (0.10, 0.10, 0.08, 3.6, (0.02, 3.8)),
        (0.125, 0.20, 0.1, 4.3, None),
        (0.30, 0.15, 0.2, 3.0, (0.015, 3.3)),
        (0.09, 2.5, 0.07, 3.9, (0.025, 4.0)),  # a single line: the partner 20 h away
    ],
)
def test_one_mode_solve_equals_two_full_solves(w, s, h, er, mask, odd) -> None:  # noqa: ANN001
    layers = (FdLayer(0.0, h, er),)
    got = round(fd_mode_eps_eff(w, s, 0.035, h, layers, None, delay.EPS_RESOLUTION, mask, odd), 4)
    assert got == _plain_eps_eff(w, s, 0.035, h, layers, None, delay.EPS_RESOLUTION, mask, odd)


def _cross_sections(board_path: Path) -> list[tuple]:
    """Every (layer stack, width, gap, odd) the skew check solves on a board: each copper
    layer of a microstrip structure at the widths and gaps its tracks and classes use."""
    board = read_board(str(board_path))
    analysis = Analysis(board)
    t = board.tracks
    gaps = {None} | {
        getattr(c, "diff_pair_gap_mm", None) for c in board.net_classes.classes
    }  # fmt: skip
    out = []
    for ly in np.unique(t.layer).tolist():
        stack = layer_stack(board, ly, analysis.plane_layers)
        if stack.missing or stack.structure != "microstrip" or stack.h_below_mm is None:
            continue
        h = min(x for x in (stack.h_below_mm, stack.h_above_mm) if x)
        widths = sorted({round(float(w) / 0.025) * 0.025 for w in t.width[t.layer == ly]})
        for w in widths[:4]:
            w = max(w, 0.025)
            for gap in gaps:
                odd = bool(gap)
                out.append((stack, w, float(gap) if odd else 20.0 * h + w, odd))
    return out


def _compare(board_path: Path) -> int:
    n = 0
    for stack, w, s, odd in _cross_sections(board_path):
        (ww, ss, t, y, layers, top), mask = field_cross_section(stack, w, s)
        plain = _plain_eps_eff(ww, ss, t, y, layers, top, delay.EPS_RESOLUTION, mask, odd)
        assert delay._solve_eps_eff(stack, w, s, odd) == plain, (stack.structure, w, s, odd)
        n += 1
    return n


def test_every_fixture_cross_section_is_timed_as_before() -> None:
    n = sum(_compare(p) for p in sorted(SKEW.glob("*.kicad_pcb")))
    n += sum(_compare(p) for p in sorted((SKEW.parent / "crosstalk").glob("*.kicad_pcb")))
    assert n >= 4  # microstrip layers were found and compared


@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_vme_wren_cross_sections_are_timed_as_before() -> None:
    assert _compare(VME_WREN) >= 2


def _plain_nodes(lys: np.ndarray, pts: np.ndarray) -> list[int]:
    """The numbering load_delays used before: a dictionary, in the order the ends appear."""
    nodes: dict[tuple[int, int, int], int] = {}
    return [
        nodes.setdefault(
            (int(ly), round(x / delay._SNAP_MM), round(y / delay._SNAP_MM)), len(nodes)
        )
        for ly, (x, y) in zip(lys.tolist(), pts.tolist())
    ]


def test_graph_nodes_are_numbered_as_before() -> None:
    rng = np.random.default_rng(7)
    base = rng.uniform(50, 250, (300, 2))
    # ends that meet (exactly, within the 1 µm snap, across the rounding's half-way point),
    # on two layers
    pts = np.concatenate([base, base + 4e-4, base[::-1], base + 0.0015, base - 5e-4])
    lys = rng.integers(0, 2, len(pts))
    got, n = delay._nodes(lys, pts)
    plain = _plain_nodes(lys, pts)
    assert got.tolist() == plain and n == len(set(plain))
    assert delay._nodes(np.zeros(0, np.int64), np.zeros((0, 2)))[1] == 0


def test_flyby_nets_numbered_as_before() -> None:
    board = read_board(str(SKEW / "flyby.kicad_pcb"))
    t = board.tracks
    rows = np.arange(len(t.start))
    pts = np.empty((2 * len(rows), 2))
    pts[0::2], pts[1::2] = t.start[rows], t.end[rows]
    lys = np.repeat(t.layer[rows].astype(np.int64), 2)
    assert delay._nodes(lys, pts)[0].tolist() == _plain_nodes(lys, pts)


@pytest.mark.parametrize(
    "config_text",
    [
        None,
        "package_delays:\n  U1: {pins_ps: {A1: 40, A6: 46}}\n  U2: {delays: none}\n",
        "package_delays:\n  U1: {delays: compensated, reason: deskew}\n  U2: {pins_ps: {B6: 2}}\n",
    ],
)
def test_package_delays_per_net_as_for_the_whole_board(tmp_path: Path, config_text) -> None:  # noqa: ANN001
    """:func:`net_packages` (one net's pads, from the pads-by-net index) gives each net what
    :func:`pad_packages` (every pad of the board) gave it, in the same order."""
    from accel_drc.config import load_config

    cfg_file = None
    if config_text is not None:
        cfg_file = tmp_path / "accel-drc.yaml"
        cfg_file.write_text(config_text)
    cfg = load_config(str(cfg_file) if cfg_file else None, None)
    for name in (
        "ddr4_lane_two_parts.kicad_pcb",
        "ddr4_byte_lane_die.kicad_pcb",
        "flyby.kicad_pcb",
    ):
        board = read_board(str(SKEW / name))
        analysis = Analysis(board, cfg)
        whole = delay.pad_packages(board, analysis.config)
        for net in range(1, len(board.nets)):
            assert delay.net_packages(analysis, net) == whole.get(net, []), (name, net)


def _plain_tees(seg: np.ndarray, speed: np.ndarray, ends: np.ndarray, ids: np.ndarray) -> list:
    """What the T-junction search computed before: every end against every track of its
    layer, the whole ends × tracks array (tracks' end nodes: ``ids`` in pairs)."""
    edges: list = []
    seg_ids = ids.reshape(-1, 2)
    for ly in np.unique(seg[:, 0]).tolist():
        si, ei = np.flatnonzero(seg[:, 0] == ly), np.flatnonzero(ends[:, 0] == ly)
        a, p = seg[si], ends[ei]
        dx, dy = (a[:, 3] - a[:, 1])[None, :], (a[:, 4] - a[:, 2])[None, :]
        ll = dx * dx + dy * dy
        rx, ry = p[:, 1:2] - a[None, :, 1], p[:, 2:3] - a[None, :, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            u = (rx * dx + ry * dy) / ll
            dist = np.hypot(rx - u * dx, ry - u * dy)
        hit = (ll > 0) & (u > 1e-6) & (u < 1 - 1e-6)
        hit &= dist <= np.maximum(a[None, :, 5], delay._SNAP_MM)
        hit &= (ids[ei][:, None] != seg_ids[si, 0][None, :]) & (
            ids[ei][:, None] != seg_ids[si, 1][None, :]
        )
        for i, j in zip(*np.nonzero(hit)):
            k = int(si[j])
            full = float(np.sqrt(ll[0, j])) * float(speed[k])
            t = float(u[i, j])
            edges.append((int(ids[ei[i]]), int(seg_ids[k, 0]), t * full))
            edges.append((int(ids[ei[i]]), int(seg_ids[k, 1]), (1 - t) * full))
    return edges


def _tee_cases(path: Path, nets: int) -> int:
    board = read_board(str(path))
    t = board.tracks
    n = 0
    for net in sorted(set(t.net.tolist()))[:nets]:
        rows = np.flatnonzero(t.net == net)
        if len(rows) < 3:
            continue
        ly = t.layer[rows].astype(np.int64)
        pts = np.empty((2 * len(rows), 2))
        pts[0::2], pts[1::2] = t.start[rows], t.end[rows]
        lys = np.repeat(ly, 2)
        ids, _n = delay._nodes(lys, pts)
        seg = np.column_stack([ly, t.start[rows], t.end[rows], t.width[rows] / 2])
        speed = np.full(len(rows), 6.5)
        got: list = []
        delay._tees(seg, ids.reshape(-1, 2), speed, np.column_stack([lys, pts]), ids, got)
        assert sorted(got) == sorted(_plain_tees(seg, speed, np.column_stack([lys, pts]), ids))
        n += len(got)
    return n


def test_t_junctions_found_as_by_the_whole_array() -> None:
    assert _tee_cases(SKEW / "flyby.kicad_pcb", 50) >= 4  # A0's two T junctions, both ways


@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_vme_wren_t_junctions_found_as_by_the_whole_array() -> None:
    assert _tee_cases(VME_WREN, 400) > 0


def test_layer_lookup_as_isin() -> None:
    rng = np.random.default_rng(11)
    lys = rng.integers(0, 12, 500)
    for layers in [(), (0,), (3, 5, 31), tuple(range(12)), (40,)]:
        assert delay._on_layers(lys, layers).tolist() == np.isin(lys, list(layers)).tolist()
    assert delay._on_layers(np.zeros(0, np.int64), (1, 2)).tolist() == []


def test_nodes_are_the_rows_unique_numbering() -> None:
    """:func:`delay._nodes` (one stable lexicographic sort) numbers the track ends exactly as
    ``np.unique(axis=0)`` with first-appearance ranks did: equal (layer, snapped point) rows one
    node, nodes in the order they first appear; on random ends with many coincidences, ends
    within the snap and ends just beyond it."""
    from accel_drc.analysis.delay import _SNAP_MM, _nodes

    def plain(lys: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, int]:
        keys = np.column_stack([lys, np.round(pts / _SNAP_MM)]).astype(np.int64)
        _u, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        return rank[inv.reshape(-1)], len(first)

    rng = np.random.default_rng(32)
    for n in (1, 2, 3, 7, 60, 500):
        for _ in range(100):
            lys = rng.integers(0, 3, n)
            pts = rng.integers(-3, 4, (n, 2)) * _SNAP_MM + rng.choice([0.0, 4e-4, 6e-4], (n, 2))
            got, want = _nodes(lys, pts), plain(lys, pts)
            assert got[1] == want[1] and got[0].tolist() == want[0].tolist()
    assert _nodes(np.zeros(0, np.int64), np.zeros((0, 2)))[1] == 0
