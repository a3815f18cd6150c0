"""``accel_drc.geometry``: the one place for arcs, arc boxes, outline chaining, hole bridging,
areas and the circle through three points — and proof that every reader uses it: the same
board read from its ``.kicad_pcb``, from KiCad's IPC-2581 export of it and through the plugin's
live-reader code path (fed the shapes pcbnew itself holds) gives the same outline rings."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from accel_drc import geometry as g
from accel_drc.readers import ipc2581, kicad_file
from conftest import FIXTURE_BOARDS, ROOT, need

PLUGIN = ROOT / "plugin"

# ---------------------------------------------------------------------------------------------
# circle through three points
# ---------------------------------------------------------------------------------------------


def test_circle_through_three_points_scalar_and_rows_agree() -> None:
    rng = np.random.default_rng(7)
    c = rng.uniform(-50, 50, (200, 2))
    r = rng.uniform(0.01, 30, 200)
    ang = rng.uniform(0, 2 * np.pi, (200, 3))
    pts = [c + r[:, None] * np.stack([np.cos(ang[:, k]), np.sin(ang[:, k])], -1) for k in range(3)]
    centres, radii = g.circles_through(*pts)
    assert np.allclose(centres, c, atol=1e-6) and np.allclose(radii, r, atol=1e-6)
    for i in range(0, 200, 37):
        got = g.circle_through(tuple(pts[0][i]), tuple(pts[1][i]), tuple(pts[2][i]))
        assert got is not None
        assert got == pytest.approx(tuple(centres[i]), abs=1e-9)


def test_collinear_points_have_no_circle() -> None:
    assert g.circle_through((0, 0), (1, 1), (2, 2)) is None
    c, r = g.circles_through(np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]]), np.array([[3.0, 3]]))
    assert np.isnan(c).all() and np.isnan(r).all()
    assert g.arc_points((0, 0), (1, 1), (2, 2)) == [(0, 0), (2, 2)]  # drawn as a line


# ---------------------------------------------------------------------------------------------
# arcs: one chord tolerance, whichever way the arc is given
# ---------------------------------------------------------------------------------------------


def _chord_error(pts: list[tuple[float, float]], c: tuple[float, float], r: float) -> float:
    """Largest distance between the chords and the circle (the sagitta at each chord middle)."""
    a = np.asarray(pts)
    mid = (a[1:] + a[:-1]) / 2
    return float((r - np.hypot(mid[:, 0] - c[0], mid[:, 1] - c[1])).max())


@pytest.mark.parametrize("r", [0.05, 0.5, 3.0, 40.0])
def test_arc_chords_stay_within_the_tolerance_and_no_finer(r: float) -> None:
    c = (3.0, -2.0)
    s, m, e = (c[0] + r, c[1]), (c[0], c[1] - r), (c[0] - r, c[1])  # half circle through -y
    pts = g.arc_points(s, m, e)
    assert pts[0] == s and pts[-1] == e  # ends kept exactly
    assert all(abs(math.hypot(x - c[0], y - c[1]) - r) < 1e-9 for x, y in pts)
    assert all(y <= c[1] + 1e-12 for _, y in pts)  # the mid point decides the side
    assert _chord_error(pts, c, r) <= g.CHORD_TOL_MM + 1e-12
    n = len(pts) - 1
    if n > 2:  # one chord fewer would break the tolerance: the count is KiCad's, not generous
        coarse = math.pi / (n - 1)
        assert r * (1 - math.cos(coarse / 2)) > g.CHORD_TOL_MM
    assert n == g.arc_segment_count(r, math.pi)


def test_three_point_and_centre_forms_give_the_same_vertices() -> None:
    """KiCad stores start/mid/end, IPC-2581 start/end/centre/direction: the same arc must come
    out with the same vertices, or the readers' outlines differ."""
    c, r = (10.0, 20.0), 7.5
    for a0, sweep in ((0.3, 2.0), (1.0, -4.5), (-2.0, 6.0)):
        s = (c[0] + r * math.cos(a0), c[1] + r * math.sin(a0))
        m = (c[0] + r * math.cos(a0 + sweep / 2), c[1] + r * math.sin(a0 + sweep / 2))
        e = (c[0] + r * math.cos(a0 + sweep), c[1] + r * math.sin(a0 + sweep))
        three = g.arc_points(s, m, e)
        centre = g.centre_arc_points(s, e, c, increasing=sweep > 0)
        assert len(three) == len(centre)
        assert np.allclose(three, centre, atol=1e-9)


def test_full_circles_are_closed_exactly() -> None:
    ring = g.circle_points((1.0, 2.0), 1.5)
    assert ring[0] == ring[-1]
    assert _chord_error(ring, (1.0, 2.0), 1.5) <= g.CHORD_TOL_MM + 1e-12
    r, a0, sweep = g.arc_from_centre((2.0, 0.0), (2.0, 0.0), (0.0, 0.0), increasing=False)
    assert (r, a0, sweep) == (2.0, 0.0, -2 * math.pi)


def test_arc_bbox_includes_crossed_axis_extremes() -> None:
    # half circle centre (0, 0) radius 10 nm-units from (0, 10) through (-10, 0) to (0, -10)
    pts = g.arc_bbox_nm((0, 10), (-10, 0), (0, -10))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    assert (min(xs), max(xs), min(ys), max(ys)) == (-10, 0, -10, 10)
    # quarter arc that crosses no axis extreme: the box is the ends
    pts = g.arc_bbox_nm((10_000_000, 0), (7071068, 7071068), (0, 10_000_000))
    assert sorted(pts) == [(0, 10_000_000), (10_000_000, 0)]
    # placed in a footprint turned by 90°: the box turns with it
    pts = g.arc_bbox_nm((0, 10), (-10, 0), (0, -10), place=(100, 200, 90.0))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    assert (min(xs), max(xs), min(ys), max(ys)) == (90, 110, 200, 210)


def test_kiround_rounds_halves_away_from_zero() -> None:
    assert [g.kiround(v) for v in (0.5, 1.5, -0.5, -1.5, 2.4)] == [1, 2, -1, -2, 2]


# ---------------------------------------------------------------------------------------------
# outline chaining
# ---------------------------------------------------------------------------------------------


def test_chain_joins_loose_reversed_and_near_missing_pieces() -> None:
    pieces = [
        ([(0.0, 0.0), (10.0, 0.0)], False),
        ([(10.0, 10.0), (10.0, 0.0)], False),  # reversed piece
        ([(0.0, 10.0), (0.0, 0.001)], False),  # misses the start by 1 µm (< 0.02 mm)
        ([(10.0, 10.0), (0.0, 10.0)], False),
        ([(20.0, 20.0), (21.0, 20.0), (21.0, 21.0)], True),  # closed shape, not repeated
    ]
    rings = g.outline_rings(pieces)
    assert len(rings) == 2
    big = max(rings, key=len)
    assert len(big) == 5 and (big[0] == big[-1]).all()  # closed: first point repeated exactly
    assert g.ring_area(big) == pytest.approx(100.0, abs=0.01)
    small = min(rings, key=len)
    assert len(small) == 4 and (small[0] == small[-1]).all()
    # an end farther than the epsilon stays open
    (open_,) = g.chain([[(0.0, 0.0), (1.0, 0.0)], [(1.03, 0.0), (2.0, 0.0)]])[:1]
    assert len(open_) == 2


def test_chain_of_thousands_of_shuffled_pieces_gives_one_ring() -> None:
    """A DXF-imported outline: a 5,000-gon (0.06 mm sides) as loose segments, shuffled, half reversed."""
    n = 5_000
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pts = [(50 * math.cos(a), 50 * math.sin(a)) for a in ang]
    pieces = [[pts[i], pts[(i + 1) % n]] for i in range(n)]
    rng = random.Random(3)
    rng.shuffle(pieces)
    pieces = [p[::-1] if rng.random() < 0.5 else p for p in pieces]
    (ring,) = g.chain(pieces)
    assert len(ring) == n + 1 and (ring[0] == ring[-1]).all()
    assert g.ring_area(ring) == pytest.approx(math.pi * 2500, rel=1e-6)


# ---------------------------------------------------------------------------------------------
# areas and holes
# ---------------------------------------------------------------------------------------------


def test_signed_area_sign_follows_the_direction() -> None:
    sq = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], float)
    assert g.signed_area(sq) == 4.0 and g.signed_area(sq[::-1]) == -4.0
    assert g.signed_area(np.vstack([sq, sq[:1]])) == 4.0  # repeating the first point is fine
    assert g.signed_area(sq[:2]) == 0.0


@pytest.mark.parametrize("holes_n", [1, 7, 400])  # 400 holes take the STRtree path
@pytest.mark.parametrize("flip", [False, True])
def test_bridged_ring_has_the_area_and_shape_of_polygon_minus_holes(
    holes_n: int, flip: bool
) -> None:
    import shapely

    side = 2 * math.ceil(math.sqrt(holes_n)) + 2
    outer = np.array([[0, 0], [side, 0], [side, side], [0, side]], float)
    holes = []
    for k in range(holes_n):
        x, y = 1 + 2 * (k % (side // 2 - 1)), 1 + 2 * (k // (side // 2 - 1))
        h = np.array([[x, y], [x + 0.5, y], [x + 0.5, y + 0.5], [x, y + 0.5]], float)
        holes.append(h[::-1] if (k % 2) ^ flip else h)  # mixed orientations
    ring = g.bridge_holes(outer[::-1] if flip else outer, holes)
    want = side * side - 0.25 * holes_n
    assert g.ring_area(ring) == pytest.approx(want, abs=1e-9)
    poly = shapely.buffer(shapely.polygons(ring), 0)  # how model.Zone.fill reads it
    assert poly.is_valid and poly.area == pytest.approx(want, abs=1e-9)
    assert len(poly.interiors) == holes_n
    assert g.bridge_holes(outer, []) is outer or (g.bridge_holes(outer, []) == outer).all()


# ---------------------------------------------------------------------------------------------
# the same board read three ways
# ---------------------------------------------------------------------------------------------

#: pcbnew's Edge.Cuts shapes in board nanometres, as KiCad's API serves them to the plugin
_DUMP_EDGES = r"""
import json, sys
import pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
items = list(board.GetDrawings())
for fp in board.GetFootprints():
    items += list(fp.GraphicalItems())
out = []
def xy(p):
    return [p.x, p.y]
for it in items:
    if it.GetClass() not in ("PCB_SHAPE", "FP_SHAPE") or it.GetLayer() != pcbnew.Edge_Cuts:
        continue
    t = it.GetShape()
    d = {"width": it.GetWidth()}
    if t == pcbnew.SHAPE_T_SEGMENT:
        d.update(kind="segment", start=xy(it.GetStart()), end=xy(it.GetEnd()))
    elif t == pcbnew.SHAPE_T_ARC:
        d.update(kind="arc", start=xy(it.GetStart()), mid=xy(it.GetArcMid()), end=xy(it.GetEnd()))
    elif t == pcbnew.SHAPE_T_CIRCLE:
        d.update(kind="circle", center=xy(it.GetCenter()), end=xy(it.GetEnd()))
    elif t == pcbnew.SHAPE_T_RECTANGLE:
        d.update(kind="rectangle", start=xy(it.GetStart()), end=xy(it.GetEnd()))
    elif t == pcbnew.SHAPE_T_POLY:
        ol = it.GetPolyShape().Outline(0)
        d.update(kind="polygon", pts=[xy(ol.CPoint(i)) for i in range(ol.PointCount())])
    elif t == pcbnew.SHAPE_T_BEZIER:
        d.update(kind="bezier", pts=[xy(p) for p in (it.GetStart(), it.GetBezierC1(),
                                                    it.GetBezierC2(), it.GetEnd())])
    else:
        continue
    out.append(d)
print(json.dumps(out))
"""


def _proto_shapes(edges: list[dict]) -> list:
    """The dumped shapes as the ``BoardGraphicShape`` messages KiCad's API sends."""
    from kipy.proto.board import board_types_pb2 as bt

    def put(v, p) -> None:  # type: ignore[no-untyped-def]
        v.x_nm, v.y_nm = p

    out = []
    for d in edges:
        m = bt.BoardGraphicShape()
        m.layer = bt.BoardLayer.BL_Edge_Cuts
        s = m.shape
        s.attributes.stroke.width.value_nm = d["width"]
        k = d["kind"]
        if k == "segment":
            put(s.segment.start, d["start"])
            put(s.segment.end, d["end"])
        elif k == "arc":
            put(s.arc.start, d["start"])
            put(s.arc.mid, d["mid"])
            put(s.arc.end, d["end"])
        elif k == "circle":
            put(s.circle.center, d["center"])
            put(s.circle.radius_point, d["end"])
        elif k == "rectangle":
            put(s.rectangle.top_left, d["start"])
            put(s.rectangle.bottom_right, d["end"])
        elif k == "polygon":
            poly = s.polygon.polygons.add()
            for p in d["pts"]:
                put(poly.outline.nodes.add().point, p)
            poly.outline.closed = True
        elif k == "bezier":
            for f, p in zip(("start", "control1", "control2", "end"), d["pts"]):
                put(getattr(s.bezier, f), p)
        out.append(m)
    return out


def _hausdorff(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric distance between two rings as curves (edges sampled every 0.05 mm)."""
    import shapely

    la, lb = shapely.linestrings(a), shapely.linestrings(b)
    pa = shapely.get_coordinates(shapely.segmentize(la, 0.05))
    pb = shapely.get_coordinates(shapely.segmentize(lb, 0.05))
    return max(
        float(shapely.distance(shapely.points(pa), lb).max()),
        float(shapely.distance(shapely.points(pb), la).max()),
    )


def _match(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> list[tuple[int, int]]:
    """Pair each ring of ``a`` with the ring of ``b`` whose centroid is nearest."""
    ca = [r[:-1].mean(axis=0) for r in a]
    cb = [r[:-1].mean(axis=0) for r in b]
    return [(i, int(np.argmin([np.hypot(*(p - q)) for q in cb]))) for i, p in enumerate(ca)]


@pytest.fixture(scope="module")
def ipc_exports(kicad_cli: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("geometry_ipc")
    out = {}
    for name, pcb in FIXTURE_BOARDS.items():
        xml = root / f"{name}.xml"
        r = subprocess.run(
            [kicad_cli, "pcb", "export", "ipc2581", "--units", "mm", "-o", str(xml), str(pcb)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        out[name] = xml
    return out


@pytest.mark.kicad
@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_the_same_board_read_three_ways_has_the_same_outline(
    name: str, pcbnew_python: str, ipc_exports: dict[str, Path]
) -> None:
    """File reader and live reader build the outline from the same shapes with the same
    functions: the same rings, vertex for vertex.  KiCad's IPC-2581 exporter writes the Profile
    already flattened (by KiCad, with its own error ``ARC_HIGH_DEF``, split across the arc):
    the same rings within both approximations, and the same ring count, closure and area."""
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (the [kicad] extra) is not installed")
    sys.path.insert(0, str(PLUGIN))
    from accel_drc_kicad import live_reader

    pcb = FIXTURE_BOARDS[name]
    file_outline = kicad_file.read(str(pcb)).outline
    ipc_outline = ipc2581.read(str(ipc_exports[name])).outline

    r = subprocess.run(
        [pcbnew_python, "-c", _DUMP_EDGES, str(pcb)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    shapes = _proto_shapes(json.loads(r.stdout))
    assert shapes
    # the live reader's own path: raw_items → _shape_paths → geometry.outline_rings
    mp = pytest.MonkeyPatch()
    mp.setattr(live_reader, "raw_items", lambda board, kinds: shapes)
    try:
        live_outline = live_reader._read_outline(
            None, SimpleNamespace(edge_cuts=shapes[0].layer), []
        )
    finally:
        mp.undo()

    assert live_outline.bbox == pytest.approx(file_outline.bbox, abs=1e-9)  # to the nanometre
    rings = file_outline.rings
    assert len(rings) == len(live_outline.rings) == len(ipc_outline.rings) >= 1
    for i, j in _match(rings, live_outline.rings):
        assert len(rings[i]) == len(live_outline.rings[j])
        assert _hausdorff(rings[i], live_outline.rings[j]) < 1e-6
    for i, j in _match(rings, ipc_outline.rings):
        a, b = rings[i], ipc_outline.rings[j]
        assert (a[0] == a[-1]).all() and (b[0] == b[-1]).all()
        # ours: chords inside the arc by up to CHORD_TOL_MM; KiCad's: its vertices ~half its
        # error outside the arc, its chords ~half inside (measured on openpci2: +2.5 / -2.2 µm)
        assert _hausdorff(a, b) <= 2 * g.CHORD_TOL_MM
        perimeter = float(np.hypot(*np.diff(a, axis=0).T).sum())
        assert g.ring_area(a) == pytest.approx(g.ring_area(b), abs=g.CHORD_TOL_MM * perimeter)


# ---------------------------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------------------------


def test_segment_distance_rows_and_matrix_agree() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(-5, 5, (30, 2))
    a = rng.uniform(-5, 5, (12, 2))
    b = a + rng.uniform(-2, 2, (12, 2))
    b[0] = a[0]  # a zero-length segment is its point
    mat = g.segment_distance(p[:, None, :], a[None], b[None])
    assert mat.shape == (30, 12)
    for k in range(12):
        rows = g.segment_distance(p, np.repeat(a[k : k + 1], 30, 0), np.repeat(b[k : k + 1], 30, 0))
        assert np.allclose(mat[:, k], rows)
    assert np.allclose(mat[:, 0], np.hypot(*(p - a[0]).T))
    # by hand: (0, 1) above the middle of (-1, 0)–(1, 0); (3, 0) beyond its end
    d = g.segment_distance(
        np.array([[0.0, 1.0], [3.0, 0.0]]), np.array([-1.0, 0]), np.array([1.0, 0])
    )
    assert d.tolist() == [1.0, 2.0]


def test_arc_distance_is_radial_inside_the_sweep_and_to_the_ends_outside() -> None:
    s, m, e = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[-1.0, 0.0]])  # +y half
    pts = np.array([[0.0, 3.0], [0.0, 0.5], [0.0, -2.0], [2.0, 0.0]])
    n = len(pts)
    d = g.arc_distance(pts, *(np.repeat(x, n, 0) for x in (s, m, e)))
    assert d == pytest.approx([2.0, 0.5, math.hypot(1, 2), 1.0])
    line = g.arc_distance(pts[:1], np.array([[0.0, 0]]), np.array([[1.0, 0]]), np.array([[2.0, 0]]))
    assert line == pytest.approx([3.0])  # collinear: the segment


def test_arc_distance_on_a_quarter_circle_both_ways() -> None:
    # quarter circle of radius 5 around (0, 0) from (5, 0) through (3.5355, 3.5355) to (0, 5)
    s = np.array([[5.0, 0.0]] * 4)
    m = np.array([[5 / 2**0.5, 5 / 2**0.5]] * 4)
    e = np.array([[0.0, 5.0]] * 4)
    p = np.array([[0.0, 0.0], [4.0, 4.0], [-5.0, 0.0], [6.0, -1.0]])
    d = g.arc_distance(p, s, m, e)
    assert d[0] == pytest.approx(5.0)
    assert d[1] == pytest.approx(32**0.5 - 5)
    assert d[2] == pytest.approx(50**0.5)  # beyond the arc: nearest end (0, 5)
    assert d[3] == pytest.approx(2**0.5)  # nearest end (5, 0)
    # the same arc drawn the other way round
    d2 = g.arc_distance(p, e, m, s)
    np.testing.assert_allclose(d2, d)
