"""Connected layers of every via and PTH pad on the real fixtures, against an independent
computation through KiCad's own pcbnew (run under /usr/bin/python3), compared exactly; plus the
8-layer fixture's blind vias and stubs worked out by hand from its stack-up."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis.via_stubs import via_rows
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS

# For each via / plated hole: which copper layers (as stack indexes) carry, with the item's net,
#  a track or arc end inside its pad, a zone fill touching its pad (HitTestFilledArea with the
#  pad radius), a pad containing the via centre, or a stacked via of the same net.
PCBNEW_SCRIPT = r"""
import json, sys
import pcbnew

TOL = 1000  # nm, the same 1 µm tolerance as accel-drc
b = pcbnew.LoadBoard(sys.argv[1])
stack = list(b.GetEnabledLayers().CuStack())
pos_of = {L: i for i, L in enumerate(stack)}
tracks_by_net = {}
vias = []
for t in b.GetTracks():
    if t.Type() == pcbnew.PCB_VIA_T:
        vias.append(t)
    else:
        tracks_by_net.setdefault(t.GetNetCode(), []).append(t)
zones_by_net = {}
for z in b.Zones():
    if not z.GetIsRuleArea():
        zones_by_net.setdefault(z.GetNetCode(), []).append(z)
pads_by_net = {}
for fp in b.GetFootprints():
    for p in fp.Pads():
        pads_by_net.setdefault(p.GetNetCode(), []).append(p)
vias_by_net = {}
for v in vias:
    vias_by_net.setdefault(v.GetNetCode(), []).append(v)

def span(v):
    a, c = pos_of[v.TopLayer()], pos_of[v.BottomLayer()]
    return min(a, c), max(a, c)

def dist(a, c):
    return ((a.x - c.x) ** 2 + (a.y - c.y) ** 2) ** 0.5

out = []
for v in vias:
    net = v.GetNetCode()
    s, e = span(v)
    pos = v.GetPosition()
    conn = set()
    if net > 0:
        for i in range(s, e + 1):
            L = stack[i]
            r = v.GetWidth(L) / 2
            for t in tracks_by_net.get(net, ()):
                if t.GetLayer() == L and (dist(t.GetStart(), pos) <= r + TOL or dist(t.GetEnd(), pos) <= r + TOL):
                    conn.add(i)
            for z in zones_by_net.get(net, ()):
                if z.IsOnLayer(L) and z.HitTestFilledArea(L, pos, int(r) + TOL):
                    conn.add(i)
            for p in pads_by_net.get(net, ()):
                if p.IsOnLayer(L) and p.HitTest(pos, TOL):
                    conn.add(i)
            for w in vias_by_net.get(net, ()):
                if w is v:
                    continue
                ws, we = span(w)
                if (ws, we) == (s, e) or not ws <= i <= we or i not in (ws, we):
                    continue
                if dist(w.GetPosition(), pos) <= r + w.GetWidth(L) / 2 + TOL:
                    conn.add(i)
    out.append({"kind": "via", "uuid": v.m_Uuid.AsString(), "x": pos.x / 1e6, "y": pos.y / 1e6,
                "connected": sorted(conn)})
for fp in b.GetFootprints():
    side = 0 if fp.GetLayer() == pcbnew.F_Cu else len(stack) - 1
    for p in fp.Pads():
        if p.GetAttribute() != pcbnew.PAD_ATTRIB_PTH or p.GetDrillSize().x <= 0:
            continue
        net = p.GetNetCode()
        pos = p.GetPosition()
        conn = set()
        if net > 0:
            conn.add(side)
            for i, L in enumerate(stack):
                if not p.IsOnLayer(L):
                    continue
                for t in tracks_by_net.get(net, ()):
                    if t.GetLayer() == L and (p.HitTest(t.GetStart(), TOL) or p.HitTest(t.GetEnd(), TOL)):
                        conn.add(i)
                r = min(p.GetSize(L).x, p.GetSize(L).y) / 2
                for z in zones_by_net.get(net, ()):
                    if z.IsOnLayer(L) and z.HitTestFilledArea(L, pos, int(r) + TOL):
                        conn.add(i)
                for w in vias_by_net.get(net, ()):
                    ws, we = span(w)
                    if ws <= i <= we and p.HitTest(w.GetPosition(), TOL):
                        conn.add(i)
        out.append({"kind": "pth", "uuid": p.m_Uuid.AsString(), "x": pos.x / 1e6, "y": pos.y / 1e6,
                    "ref": fp.GetReference() + "." + p.GetNumber(), "connected": sorted(conn)})
print(json.dumps(out))
"""


def pcbnew_connections(python: str, board: str) -> list[dict]:
    r = subprocess.run(
        [python, "-c", PCBNEW_SCRIPT, board], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.kicad
@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_connected_layers_match_pcbnew(name: str, pcbnew_python: str) -> None:
    path = str(FIXTURE_BOARDS[name])
    want = pcbnew_connections(pcbnew_python, path)
    stubs = Analysis(read_board(path)).via_stubs
    ours_via = {}
    for i in range(len(stubs)):
        if stubs.via_row[i] >= 0:
            ours_via[stubs.uuid[i]] = sorted(np.flatnonzero(stubs.connected[i]).tolist())
    ours_pth = {}
    for i in range(len(stubs)):
        if stubs.via_row[i] < 0:
            key = (round(float(stubs.xy[i, 0]), 4), round(float(stubs.xy[i, 1]), 4), stubs.ref[i])
            ours_pth[key] = sorted(np.flatnonzero(stubs.connected[i]).tolist())
    w_via = {w["uuid"]: w["connected"] for w in want if w["kind"] == "via"}
    w_pth = {
        (round(w["x"], 4), round(w["y"], 4), w["ref"]): w["connected"]
        for w in want
        if w["kind"] == "pth"
    }
    assert len(w_via) == len(ours_via) and len(w_via) > 0
    diff = {k: (ours_via.get(k), v) for k, v in w_via.items() if ours_via.get(k) != v}
    assert diff == {}
    assert set(w_pth) == set(ours_pth)
    diff = {k: (ours_pth.get(k), v) for k, v in w_pth.items() if ours_pth.get(k) != v}
    assert diff == {}


def test_crosslink_blind_vias_and_stubs_by_hand() -> None:
    """crosslink-nx-video-converter: 8 layers, F.Cu 35 µm | 0.12 | In1 18 | 0.2 | In2 18 | 0.24 |
    In3 18 | 0.2 | In4 18 | 0.24 | In5 35 | 0.2 | In6 35 | 0.12 | B.Cu 35 (all FR4 εr 4.5)."""
    path = str(FIXTURE_BOARDS["crosslink-nx-video-converter"])
    board = read_board(path)
    rows = via_rows(Analysis(board))
    blind = [r for r in rows if r["type"] == "blind"]
    assert len(blind) == 2
    for r in blind:
        assert (r["start"], r["end"]) == ("F.Cu", "In2.Cu")
        assert r["net"] == "/DDR3/DDR3_LDQS_N"
        assert r["connected"] == ["F.Cu", "In2.Cu"]
        assert r["stub_mm"] == pytest.approx(0.0)
    by_conn = {}
    for r in rows:
        if r["type"] == "through" and r["stub_mm"] is not None:
            by_conn.setdefault(tuple(r["connected"]), set()).add(round(r["stub_mm"], 6))
    # F.Cu + In2 through via: bottom face of In2 to bottom face of B.Cu
    # 0.24 + 0.018 + 0.2 + 0.018 + 0.24 + 0.035 + 0.2 + 0.035 + 0.12 + 0.035 = 1.141
    assert by_conn[("F.Cu", "In2.Cu")] == {1.141}
    # F.Cu + In4: 0.24 + 0.035 + 0.2 + 0.035 + 0.12 + 0.035 = 0.665
    assert by_conn[("F.Cu", "In4.Cu")] == {0.665}
    # In6 + B.Cu: top face of F.Cu to top face of In6 = total 1.497 - (0.035 + 0.12 + 0.035) = 1.342
    assert by_conn[("In6.Cu", "B.Cu")] == {1.342}
    # F.Cu only (a via whose other end has no track): the whole barrel below F.Cu, 1.532 - 0.035
    assert by_conn[("F.Cu",)] == {1.497}
    assert by_conn[("F.Cu", "B.Cu")] == {0.0}
