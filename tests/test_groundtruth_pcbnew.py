"""Ground truth: the reader against KiCad's own ``pcbnew`` on every bundled real board.

A script runs under ``/usr/bin/python3`` (the interpreter KiCad's Python module is built for),
loads the board with ``pcbnew.LoadBoard`` and prints KiCad's counts as JSON; the test compares
them with what :mod:`accel_drc.readers.kicad_file` read.  Everything must be *exactly* equal:
counts, via spans, the board outline's bounding box in nanometres, the board thickness; the
total copper zone-fill area (parsed from the fill polygons) agrees to 1e-9.

Board size convention (checked here): KiCad's ``BOARD::GetBoardEdgesBoundingBox()`` is the union
of the bounding boxes of all Edge.Cuts shapes (board and footprint), each **inflated by half its
line width** (``EDA_SHAPE::getBoundingBox`` ends with ``Inflate(width / 2)``).  The reader's
``Outline.bbox`` follows the same convention, so a 100 mm board drawn with 0.1 mm lines is
100.1 mm here, as in KiCad's board statistics.

KiCad 9 reports blind and buried vias as one type (``VIATYPE_BLIND_BURIED``); the reader's
blind + buried are compared with it.  Skips locally without KiCad, fails in CI (conftest).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from accel_drc.readers.kicad_file import read
from conftest import FIXTURE_BOARDS, FIXTURES, need

PCBNEW_SCRIPT = r"""
import json, sys
import pcbnew

board = pcbnew.LoadBoard(sys.argv[1])
out = {"segments": 0, "arcs": 0, "vias": {"through": 0, "blind_buried": 0, "micro": 0},
       "via_spans": {}}
names = {}

def lname(layer):
    if layer not in names:
        names[layer] = board.GetStandardLayerName(layer)
    return names[layer]

kinds = {pcbnew.VIATYPE_THROUGH: "through", pcbnew.VIATYPE_MICROVIA: "micro"}
# KiCad 9 has VIATYPE_BLIND_BURIED; KiCad 10 splits it into VIATYPE_BLIND and VIATYPE_BURIED
for n in ("VIATYPE_BLIND_BURIED", "VIATYPE_BLIND", "VIATYPE_BURIED"):
    if hasattr(pcbnew, n):
        kinds[getattr(pcbnew, n)] = "blind_buried"
for t in board.GetTracks():
    cls = t.GetClass()
    if cls == "PCB_VIA":
        key = kinds.get(t.GetViaType(), str(t.GetViaType()))
        out["vias"][key] = out["vias"].get(key, 0) + 1
        span = lname(t.TopLayer()) + "-" + lname(t.BottomLayer())
        out["via_spans"][span] = out["via_spans"].get(span, 0) + 1
    elif cls == "PCB_ARC":
        out["arcs"] += 1
    else:
        out["segments"] += 1
out["copper_layers"] = board.GetCopperLayerCount()
out["copper_layer_names"] = [lname(l) for l in board.GetEnabledLayers().CuStack()]
out["footprints"] = len(board.GetFootprints())
out["pads"] = sum(len(fp.Pads()) for fp in board.GetFootprints())
out["named_nets"] = sum(1 for name in board.GetNetsByName().keys() if str(name) != "")
out["zones"] = len(board.Zones())
bb = board.GetBoardEdgesBoundingBox()
out["edge_bbox_nm"] = [bb.GetX(), bb.GetY(), bb.GetRight(), bb.GetBottom()]
out["board_size_nm"] = [bb.GetWidth(), bb.GetHeight()]
out["thickness_nm"] = board.GetDesignSettings().GetBoardThickness()
area = 0.0
for z in board.Zones():
    for layer in z.GetLayerSet().CuStack():
        if z.HasFilledPolysForLayer(layer):
            area += z.GetFilledPolysList(layer).Area()
out["copper_fill_area_mm2"] = area / 1e12
print(json.dumps(out, sort_keys=True))
"""


def pcbnew_counts(python: str, board: str) -> dict:
    """KiCad's own counts for ``board`` (runs ``pcbnew.LoadBoard`` in a subprocess)."""
    proc = subprocess.run(
        [python, "-c", PCBNEW_SCRIPT, board], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reader_counts(path: str) -> dict:
    """The same figures from accel-drc's reader, in KiCad's terms."""
    board = read(path)
    types = board.vias.types
    spans: dict[str, int] = {}
    for a, b in zip(board.vias.start.tolist(), board.vias.end.tolist()):
        key = f"{board.layer_name(a)}-{board.layer_name(b)}"
        spans[key] = spans.get(key, 0) + 1
    bbox = board.outline.bbox
    assert bbox is not None
    nm = [round(v * 1e6) for v in bbox]
    return {
        "segments": board.tracks.segment_count,
        "arcs": board.tracks.arc_count,
        "vias": {
            "through": types.count("through"),
            "blind_buried": types.count("blind") + types.count("buried"),
            "micro": types.count("micro"),
        },
        "via_spans": spans,
        "copper_layers": board.layer_count,
        "copper_layer_names": [layer.name for layer in board.copper_layers],
        "footprints": len(board.footprints),
        "pads": board.pad_count,
        "named_nets": board.named_net_count,
        "zones": len(board.zones),
        "edge_bbox_nm": nm,
        "board_size_nm": [nm[2] - nm[0], nm[3] - nm[1]],
        "thickness_nm": round((board.board_thickness_mm or 0.0) * 1e6),
        "copper_fill_area_mm2": sum(
            z.filled_area_mm2(layer) for z in board.zones for layer in z.filled
        ),
    }


def compare(name: str, ours: dict, kicad: dict) -> None:
    """Field by field, so a failure names the field.  Everything is exact except the copper
    fill area: KiCad sums int64 nm² per polygon, the reader float mm² (agree to 1e-9)."""
    for key in sorted(kicad):
        if key == "copper_fill_area_mm2":
            assert ours[key] == pytest.approx(kicad[key], rel=1e-9, abs=1e-9), f"{name}: {key}"
        else:
            assert ours[key] == kicad[key], (
                f"{name}: {key}: reader {ours[key]} != pcbnew {kicad[key]}"
            )


@pytest.mark.kicad
@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_reader_matches_pcbnew(name: str, pcbnew_python: str) -> None:
    path = str(FIXTURE_BOARDS[name])
    kicad = pcbnew_counts(pcbnew_python, path)
    ours = reader_counts(path)
    compare(name, ours, kicad)
    assert set(ours) == set(kicad)


#: the hand-written format boards KiCad 9 can open (KiCad 10's format is newer than it)
VERSION_BOARDS = ("kicad6", "kicad7", "kicad8", "kicad9")


@pytest.mark.kicad
@pytest.mark.parametrize("name", VERSION_BOARDS)
def test_hand_written_boards_match_pcbnew(name: str, pcbnew_python: str) -> None:
    """The small boards of test_reader_kicad.py hold the hand-worked numbers (rotated pads,
    arc extremes, blind/buried/micro vias); KiCad must agree with them too."""
    path = str(FIXTURES / "kicad_versions" / f"{name}.kicad_pcb")
    kicad = pcbnew_counts(pcbnew_python, path)
    ours = reader_counts(path)
    compare(name, ours, kicad)


ITEMS_SCRIPT = r"""
import json, sys
import pcbnew

b = pcbnew.LoadBoard(sys.argv[1])
name = b.GetStandardLayerName
fps, pads, vias, tracks, zones = [], [], [], {}, []
for fp in b.GetFootprints():
    p = fp.GetPosition()
    fps.append([fp.GetReference(), fp.GetValue(), fp.GetFPIDAsString(), name(fp.GetLayer()),
                p.x, p.y, round(fp.GetOrientationDegrees(), 6)])
    for pad in fp.Pads():
        q = pad.GetPosition()
        d = pad.GetDrillSize()
        pads.append([fp.GetReference(), pad.GetNumber(), q.x, q.y, pad.GetNetname(),
                     min(d.x, d.y) if d.x > 0 else 0])
for t in b.GetTracks():
    if t.GetClass() == "PCB_VIA":
        q = t.GetPosition()
        vias.append([q.x, q.y, t.GetWidth(pcbnew.F_Cu), t.GetDrillValue(), t.GetNetname()])
    else:
        key = name(t.GetLayer()) + "|" + str(t.GetWidth()) + "|" + t.GetNetname()
        tracks[key] = tracks.get(key, 0) + 1
for z in b.Zones():
    zones.append([z.GetNetname(), [name(l) for l in z.GetLayerSet().CuStack()],
                  z.GetAssignedPriority(), bool(z.GetIsRuleArea())])
print(json.dumps({"footprints": sorted(fps), "pads": sorted(pads), "vias": sorted(vias),
                  "tracks": tracks, "zones": sorted(zones)}))
"""


def reader_items(path: str) -> dict:
    """Per-item data in KiCad's terms: nm integers, angles in (-180, 180]."""
    b = read(path)

    def nm(v: float) -> int:
        return round(v * 1e6)

    def angle(deg: float) -> float:
        d = deg % 360.0
        return round(d - 360.0 if d > 180.0 else d, 6)

    fps, pads, vias, tracks, zones = [], [], [], {}, []
    for fp in b.footprints:
        fps.append(
            [fp.reference, fp.value, fp.name, fp.layer, nm(fp.x), nm(fp.y), angle(fp.rotation)]
        )
        for p in fp.pads:
            pads.append(
                [fp.reference, p.number, nm(p.x), nm(p.y), b.nets[p.net], nm(p.drill_mm or 0)]
            )
    for v in b.vias:
        vias.append([nm(v.x), nm(v.y), nm(v.diameter_mm), nm(v.drill_mm), b.nets[v.net]])
    t = b.tracks
    for i in range(len(t)):
        key = f"{b.layer_name(int(t.layer[i]))}|{nm(t.width[i])}|{b.nets[int(t.net[i])]}"
        tracks[key] = tracks.get(key, 0) + 1
    for z in b.zones:
        zones.append([z.net_name, [b.layer_name(x) for x in z.layers], z.priority, z.keepout])
    return {
        "footprints": sorted(fps),
        "pads": sorted(pads),
        "vias": sorted(vias),
        "tracks": tracks,
        "zones": sorted(zones),
    }


@pytest.mark.kicad
@pytest.mark.parametrize(
    "path",
    [str(p) for p in FIXTURE_BOARDS.values()]
    + [str(FIXTURES / "kicad_versions" / f"{n}.kicad_pcb") for n in VERSION_BOARDS],
    ids=[*FIXTURE_BOARDS, *VERSION_BOARDS],
)
def test_items_match_pcbnew(path: str, pcbnew_python: str) -> None:
    """Item by item, not only counts: every footprint (reference, value, library id, side,
    position to the nm, rotation), every pad (absolute position to the nm after the footprint
    transform, net, drill), every via (position, pad, drill, net), tracks per (layer, width,
    net) and zones (net, layers, priority, rule area)."""
    proc = subprocess.run(
        [pcbnew_python, "-c", ITEMS_SCRIPT, path], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    kicad = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = reader_items(path)
    for key in sorted(kicad):
        if kicad[key] != ours[key] and isinstance(kicad[key], list):
            diff = [(a, b) for a, b in zip(kicad[key], ours[key]) if a != b][:3]
            pytest.fail(
                f"{key}: {len(kicad[key])} vs {len(ours[key])} items; first differences {diff}"
            )
        assert ours[key] == kicad[key], key


def test_fixture_boards_exist() -> None:
    """The ground truth above must have boards to run on (a fresh clone ships them)."""
    assert len(FIXTURE_BOARDS) >= 4


# -- Debian's kicad-demos: every board KiCad 9.0.8 ships must read, with KiCad's counts --------

#: where Debian's ``kicad-demos`` package (bookworm-backports, 9.0.8) puts its boards
DEMO_DIR = Path("/usr/share/kicad/demos")
#: vme-wren (69 MB) costs pcbnew ≈ 50 s and has its own ground-truth tests
#: (test_reader_vme_wren.py, test_via_stub_groundtruth.py)
DEMO_EXCLUDED = ("vme-wren",)
DEMO_BOARDS = (
    {
        str(p.relative_to(DEMO_DIR)): p
        for p in sorted(DEMO_DIR.glob("**/*.kicad_pcb"))
        if not any(x in p.parts for x in DEMO_EXCLUDED)
    }
    if DEMO_DIR.is_dir()
    else {}
)

#: one pcbnew process for every demo board: counts (PCBNEW_SCRIPT) and items (ITEMS_SCRIPT)
DEMO_SCRIPT = (
    "import json, sys\nimport pcbnew\n"
    "def counts(board):\n"
    + "\n".join(
        "    " + line
        for line in PCBNEW_SCRIPT.split("board = pcbnew.LoadBoard(sys.argv[1])")[1]
        .replace("print(json.dumps(out, sort_keys=True))", "return out")
        .splitlines()
    )
    + "\ndef items(b):\n"
    + "\n".join(
        "    " + line
        for line in ITEMS_SCRIPT.split("b = pcbnew.LoadBoard(sys.argv[1])")[1]
        .replace("print(json.dumps(", "return ((")
        .splitlines()
    )
    + "\nfor path in sys.argv[1:]:\n"
    "    board = pcbnew.LoadBoard(path)\n"
    "    print('@@' + json.dumps({'counts': counts(board), 'items': items(board)}), flush=True)\n"
)


@pytest.fixture(scope="module")
def demo_truth(pcbnew_python: str) -> dict[str, dict]:
    """KiCad's counts and items for every demo board, from one pcbnew subprocess (≈ 15 s)."""
    need(bool(DEMO_BOARDS), f"Debian's kicad-demos is not installed ({DEMO_DIR})")
    paths = [str(p) for p in DEMO_BOARDS.values()]
    proc = subprocess.run(
        [pcbnew_python, "-c", DEMO_SCRIPT, *paths], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = [json.loads(line[2:]) for line in proc.stdout.splitlines() if line.startswith("@@")]
    assert len(got) == len(paths), "pcbnew did not load every demo board"
    return dict(zip(DEMO_BOARDS, got))


def test_demo_boards_present() -> None:
    """CI installs kicad-demos (.ci/run); locally its absence is a skip, not a pass."""
    need(bool(DEMO_BOARDS), f"Debian's kicad-demos is not installed ({DEMO_DIR})")
    assert len(DEMO_BOARDS) >= 19


@pytest.mark.kicad
@pytest.mark.parametrize("name", sorted(DEMO_BOARDS))
def test_demo_board_matches_pcbnew(name: str, demo_truth: dict[str, dict]) -> None:
    """Every kicad-demos board reads (RoyalBlue54L-Feather included: KiCad 9 wrote 349 teardrop
    settings without their '('), with KiCad's layer count and names, segments, arcs, vias by
    type and span, footprints, pads, nets, zones, outline size, thickness and fill area, and
    item by item (footprints, pads, vias, tracks per layer/width/net, zones)."""
    path = str(DEMO_BOARDS[name])
    compare(name, reader_counts(path), demo_truth[name]["counts"])
    kicad = demo_truth[name]["items"]
    ours = json.loads(json.dumps(reader_items(path)))  # tuples -> lists, as pcbnew's JSON
    for key in sorted(kicad):
        assert ours[key] == kicad[key], f"{name}: {key}"
