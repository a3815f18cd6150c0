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

# For each via / plated hole: on which copper layers (stack indexes) does KiCad's own geometry
# engine find copper of the same net touching it (within 1 µm)?  Real connections: the item's
# shape fully flashed (GetEffectiveShape(layer, ALWAYS_FLASHED)) collided with track and arc
# shapes (SHAPE.Collide), pad shapes and zone fills (SHAPE_POLY_SET.Collide) -- KiCad's
# CN_VISITOR rule; a PTH lead also counts on its side.  Touching vias of the same net: their
# shapes as KiCad draws them on that layer (GetEffectiveShape(layer): the pad where
# PCB_VIA::FlashLayer says it is, else the hole) collide; such a touch connects via A on layer L
# when the other via has a real connection on L, or one beyond the layers A reaches (repeated
# until nothing changes) -- the rule of accel_drc.analysis.via_connections._connect_touching_vias.
PCBNEW_SCRIPT = r"""
import json, sys
import pcbnew

TOL = 1000  # nm, the same 1 µm tolerance as accel-drc
ALWAYS = pcbnew.FLASHING_ALWAYS_FLASHED
b = pcbnew.LoadBoard(sys.argv[1])
b.BuildConnectivity()
stack = list(b.GetEnabledLayers().CuStack())
pos_of = {L: i for i, L in enumerate(stack)}
tracks_by_net, vias_by_net, zones_by_net, pads_by_net = {}, {}, {}, {}
vias = []
for t in b.GetTracks():
    if t.Type() == pcbnew.PCB_VIA_T:
        vias.append(t)
        vias_by_net.setdefault(t.GetNetCode(), []).append(t)
    else:
        tracks_by_net.setdefault(t.GetNetCode(), []).append(t)
for z in b.Zones():
    if not z.GetIsRuleArea():
        zones_by_net.setdefault(z.GetNetCode(), []).append(z)
for fp in b.GetFootprints():
    for p in fp.Pads():
        pads_by_net.setdefault(p.GetNetCode(), []).append(p)

def span(v):
    a, c = pos_of[v.TopLayer()], pos_of[v.BottomLayer()]
    return min(a, c), max(a, c)

def near(a, c, reach):
    return abs(a.x - c.x) <= reach and abs(a.y - c.y) <= reach

def connections(item, layers, is_pad):
    net = item.GetNetCode()
    conn = set()
    if net <= 0:
        return conn
    pos = item.GetPosition()
    for i in layers:
        L = stack[i]
        shape = item.GetEffectiveShape(L, ALWAYS)
        for t in tracks_by_net.get(net, ()):
            if t.GetLayer() == L and shape.Collide(t.GetEffectiveShape(L), TOL):
                conn.add(i)
        for z in zones_by_net.get(net, ()):
            if z.IsOnLayer(L) and z.GetFilledPolysList(L).Collide(shape, TOL):
                conn.add(i)
        for p in pads_by_net.get(net, ()):
            if p is item or not p.IsOnLayer(L) or not near(p.GetPosition(), pos, 20_000_000):
                continue
            if not is_pad and shape.Collide(p.GetEffectiveShape(L, ALWAYS), TOL):
                conn.add(i)
    return conn

real = [connections(v, range(span(v)[0], span(v)[1] + 1), False) for v in vias]
index = {id(v): k for k, v in enumerate(vias)}
touches = []  # (k, m, layer index)
for k, v in enumerate(vias):
    if v.GetNetCode() <= 0:
        continue
    s0, e0 = span(v)
    for w in vias_by_net.get(v.GetNetCode(), ()):
        m = index[id(w)]
        if m <= k or not near(w.GetPosition(), v.GetPosition(), 20_000_000):
            continue
        s1, e1 = span(w)
        for i in range(max(s0, s1), min(e0, e1) + 1):
            L = stack[i]
            if v.GetEffectiveShape(L).Collide(w.GetEffectiveShape(L), TOL):
                touches.append((k, m, i))
conn = [set(r) for r in real]
changed = True
while changed:
    changed = False
    for k, m, i in touches:
        for x, y in ((k, m), (m, k)):
            if i in conn[x] or not conn[y]:
                continue
            beyond = not conn[x] or min(conn[y]) < min(conn[x]) or max(conn[y]) > max(conn[x])
            if i in conn[y] or beyond:
                conn[x].add(i)
                changed = True
out = []
for k, v in enumerate(vias):
    pos = v.GetPosition()
    out.append({"kind": "via", "uuid": v.m_Uuid.AsString(), "x": pos.x / 1e6, "y": pos.y / 1e6,
                "connected": sorted(conn[k])})
for fp in b.GetFootprints():
    side = 0 if fp.GetLayer() == pcbnew.F_Cu else len(stack) - 1
    for p in fp.Pads():
        if p.GetAttribute() != pcbnew.PAD_ATTRIB_PTH or p.GetDrillSize().x <= 0:
            continue
        pos = p.GetPosition()
        c = connections(p, [i for i, L in enumerate(stack) if p.IsOnLayer(L)], True)
        # a via-in-pad joins the pad on the layers both have (as accel-drc's step 2)
        for w in vias_by_net.get(p.GetNetCode(), ()):
            if not near(w.GetPosition(), pos, 20_000_000):
                continue
            s1, e1 = span(w)
            for i in range(s1, e1 + 1):
                L = stack[i]
                if p.IsOnLayer(L) and p.GetEffectiveShape(L, ALWAYS).Collide(
                        w.GetEffectiveShape(L, ALWAYS), TOL):
                    c.add(i)
        if p.GetNetCode() > 0:
            c.add(side)
        out.append({"kind": "pth", "uuid": p.m_Uuid.AsString(), "x": pos.x / 1e6, "y": pos.y / 1e6,
                    "ref": fp.GetReference() + "." + p.GetNumber(), "connected": sorted(c)})
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
