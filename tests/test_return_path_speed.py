"""The return-path check's speed work (issue 32) answers exactly what the plain computation did.

:meth:`PlaneFills.covered` tries a layer's fill polygons whose box meets the points, smallest
first, and skips a point once one holds it; the plain computation asks every polygon for every
point.  :func:`fill_polygons` builds a layer's polygons in one call; each must be the polygon
``shapely.polygons`` makes of its ring, coordinate for coordinate.  Compared on hand-made polygons (an island in a plane's void, overlapping pours, a point
on an edge), on every reference layer of the return-path fixtures, and on vme-wren's planes at
the points the check itself samples (where the shared boards are present).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely
from accel_drc.analysis import Analysis
from accel_drc.analysis.returnpath import PlaneFills
from accel_drc.geometry import fill_polygons
from accel_drc.model import Zone
from accel_drc.readers import read_board
from conftest import SHARED_BOARDS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "checks" / "return_path"
VME_WREN = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"


def _plain(fills: PlaneFills, layer: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Every fill polygon of ``layer`` asked for every point, fresh from the stored rings.

    Each polygon is prepared first: shapely 2.0 (Python 3.9's pin) scans every vertex for every
    point of an unprepared polygon (5 minutes for vme-wren's 10⁵-vertex planes), shapely 2.2
    prepares it itself; the answers are the same either way."""
    out = np.zeros(len(x), bool)
    board = fills.analysis.board
    nets = fills.nets_of(layer)
    for z in board.zones:
        if z.net in nets and layer in z.layers:
            for ring in z.filled.get(layer, ()):
                if len(ring) >= 3:
                    poly = shapely.polygons(np.asarray(ring, float))
                    shapely.prepare(poly)
                    out |= shapely.contains_xy(poly, x, y)
    return out


def _points(rng: np.random.Generator, box: tuple[float, float, float, float], n: int) -> tuple:
    x0, y0, x1, y1 = box
    return rng.uniform(x0 - 1, x1 + 1, n), rng.uniform(y0 - 1, y1 + 1, n)


class _Board:
    """The little of a board :class:`PlaneFills` reads: nets, zones, no stack-up planes."""

    def __init__(self, zones: list[Zone]) -> None:
        self.nets = ["", "GND", "VDD"]
        self.zones = zones


class _Analysis:
    def __init__(self, board: _Board) -> None:
        self.board = board
        self.plane_layers: dict[int, list] = {}
        self.memo: dict = {}


def _zone(net: int, rings: list[list[tuple[float, float]]]) -> Zone:
    arrays = tuple(np.asarray(r, float) for r in rings)
    return Zone(net=net, net_name="", layers=(1,), outline=arrays[0], filled={1: arrays})


def test_smallest_first_answers_as_every_polygon() -> None:
    """A GND plane (a 100 mm square with a 20 mm void, its fill fractured: one ring with the
    void bridged in), a VDD island inside the void, and a VDD pour overlapping the plane's
    corner: each point is covered where any polygon holds it, whatever the order tried."""
    plane = [(0, 0), (100, 0), (100, 100), (0, 100), (0, 40), (40, 40), (40, 60), (60, 60),
             (60, 40), (40, 40), (0, 40)]  # fmt: skip
    island = [(45, 45), (55, 45), (55, 55), (45, 55)]
    corner = [(90, 90), (120, 90), (120, 120), (90, 120)]
    board = _Board([_zone(1, [plane]), _zone(2, [island, corner])])
    fills = PlaneFills(_Analysis(board))  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    x, y = _points(rng, (0, 0, 120, 120), 5000)
    # on edges and vertices too (a point on the boundary is not covered)
    x = np.concatenate([x, [40.0, 50.0, 45.0, 0.0, 95.0, 20.0]])
    y = np.concatenate([y, [50.0, 50.0, 45.0, 0.0, 95.0, 40.0]])
    got = fills.covered(1, x, y)
    assert got.tolist() == _plain(fills, 1, x, y).tolist()
    assert got[-5] and not got[-6] and not got[-4] and got[-2]  # island, void, edge, overlap


def _compare_board(path: Path, rng: np.random.Generator, per_layer: int) -> int:
    board = read_board(str(path))
    fills = PlaneFills(Analysis(board))
    t = board.tracks
    n = 0
    for layer in range(board.layer_count):
        polys = fills.polygons(layer)
        if not polys:
            continue
        # the track ends of the board (where the check's samples crowd) and random points
        ends = np.concatenate([t.start, t.end])
        pick = ends[rng.choice(len(ends), min(per_layer, len(ends)), replace=False)]
        rx, ry = _points(rng, tuple(shapely.total_bounds(polys)), per_layer)
        x, y = np.concatenate([pick[:, 0], rx]), np.concatenate([pick[:, 1], ry])
        assert fills.covered(layer, x, y).tolist() == _plain(fills, layer, x, y).tolist(), layer
        n += 1
    return n


def test_fixture_planes_answer_as_every_polygon() -> None:
    rng = np.random.default_rng(5)
    assert sum(_compare_board(p, rng, 400) for p in sorted(FIXTURES.glob("*.kicad_pcb"))) >= 9


@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_vme_wren_planes_answer_as_every_polygon() -> None:
    """vme-wren's In5 (a plane and two supply islands, the case the order is for) among them."""
    assert _compare_board(VME_WREN, np.random.default_rng(9), 3000) >= 4


@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_rows_many_is_each_nets_rows_in_turn() -> None:
    board = read_board(str(VME_WREN))
    index = Analysis(board).track_index
    nets = list(range(1, len(board.nets), 7))
    for layer in range(board.layer_count):
        plain = [index.rows(n, layer) for n in nets]
        want = np.concatenate(plain) if plain else np.zeros(0, int)
        assert index.rows_many(nets, layer).tolist() == want.tolist()


def test_a_point_the_island_holds_is_not_tried_against_the_plane(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cost: points inside a small polygon (a supply island in the plane's void) are
    answered by it alone; the plane around it, whose test costs with its vertices, is not
    asked (it was, when the polygons were tried in zone order)."""
    plane = [(0, 0), (100, 0), (100, 100), (0, 100), (0, 40), (40, 40), (40, 60), (60, 60),
             (60, 40), (40, 40), (0, 40)]  # fmt: skip
    island = [(45, 45), (55, 45), (55, 55), (45, 55)]
    fills = PlaneFills(_Analysis(_Board([_zone(1, [plane]), _zone(2, [island])])))  # type: ignore[arg-type]
    asked: list[int] = []
    real = shapely.contains_xy

    def counting(geom, x, y=None):  # noqa: ANN001, ANN202
        asked.append(int(shapely.get_num_coordinates(geom)))
        return real(geom, x, y)

    monkeypatch.setattr(shapely, "contains_xy", counting)
    x, y = np.linspace(46, 54, 50), np.linspace(46, 54, 50)
    assert fills.covered(1, x, y).all()
    assert asked == [5]  # the island's ring (4 corners, closed), never the plane's 12


def _same_polygons(rings: list[np.ndarray]) -> None:
    """Each polygon :func:`fill_polygons` builds is ``shapely.polygons`` of its ring (same
    coordinates in the same order, closed alike), prepared, and answers alike."""
    got = fill_polygons(rings)
    assert len(got) == len(rings)
    assert shapely.is_prepared(got).all()
    for poly, ring in zip(got, rings):
        want = shapely.polygons(ring)
        assert shapely.get_coordinates(poly).tolist() == shapely.get_coordinates(want).tolist()
        assert shapely.equals_exact(poly, want, tolerance=0)


def test_fill_polygons_are_each_rings_polygon() -> None:
    """An open ring (closed by its first point), a closed one, a fractured fill with a void
    bridged in, and a ring of three points closed (built alone, as before)."""
    open_ring = np.array([(0, 0), (4, 0), (4, 3)], float)
    closed = np.array([(10, 0), (12, 0), (12, 2), (10, 2), (10, 0)], float)
    fractured = np.array([(0, 0), (100, 0), (100, 100), (0, 100), (0, 40), (40, 40), (40, 60),
                          (60, 60), (60, 40), (40, 40), (0, 40)], float)  # fmt: skip
    _same_polygons([open_ring, closed, fractured])
    # a ring stored column by column (the IPC-2581 reader's rings are transposed views)
    _same_polygons([np.asfortranarray(fractured), np.asfortranarray(open_ring)])
    _same_polygons([open_ring, np.array([(0, 0), (1, 0), (0, 0)], float), closed])
    assert fill_polygons([]) == []


def _board_rings(path: Path) -> int:
    board = read_board(str(path))
    fills = PlaneFills(Analysis(board))
    n = 0
    for layer in range(board.layer_count):
        if fills.polygons(layer) and layer in fills._rings:
            _same_polygons(fills._rings[layer])
            n += 1
    return n


def test_fill_polygons_of_the_fixture_planes() -> None:
    assert sum(_board_rings(p) for p in sorted(FIXTURES.glob("*.kicad_pcb"))) >= 9


@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_fill_polygons_of_vme_wren() -> None:
    """vme-wren's planes: 590k fill vertices on four distinct layers."""
    assert _board_rings(VME_WREN) >= 4


def _check(board: object) -> list[tuple[str, str]]:
    from accel_drc.pipeline import check_board

    got = check_board(board, None)  # type: ignore[arg-type]
    return [(f.rule, f.message) for f in got.findings if f.check == "return_path"]


def test_warmed_fills_are_the_polygons_the_check_reads() -> None:
    """:func:`warm_fills` (the KiCad plugin runs it while KiCad sends the footprints) builds
    each ground and supply zone's polygons and indexes; the check then reads those very
    objects (no second build) and finds what it finds on a cold board, on every fixture."""
    from accel_drc.analysis.returnpath import warm_fills

    n = 0
    for path in sorted(FIXTURES.glob("*.kicad_pcb")):
        cold, warm = read_board(str(path)), read_board(str(path))
        warm_fills(warm.zones, warm.nets)
        built = {
            id(p): p for z in warm.zones for ps in z.__dict__.get("_fill_polygons", {}).values()
            for p in ps
        }  # fmt: skip
        assert built, path.name
        assert _check(warm) == _check(cold), path.name
        fills = PlaneFills(Analysis(warm))
        for layer in range(warm.layer_count):
            for poly in fills.polygons(layer):
                assert id(poly) in built  # the warmed object itself
                n += 1
    assert n >= 9


def test_fill_polygons_are_built_once_and_equal_to_the_rings() -> None:
    """A zone's polygons of a layer: built once (the warm-up's tuple is the check's), the ring
    polygons of :func:`fill_polygons` in file order, rings of under 3 points left out; asking
    with ``index`` after another caller built them changes nothing."""
    plane = np.array([(0, 0), (10, 0), (10, 10), (0, 10)], float)
    sliver = np.array([(20, 0), (21, 0)], float)
    island = np.array([(30, 0), (31, 0), (31, 1)], float)
    z = Zone(net=1, net_name="GND", layers=(0,), filled={0: (plane, sliver, island)})
    first = z.fill_polygons(0, index=True)
    assert z.fill_polygons(0) is first and z.fill_polygons(0, index=True) is first
    assert [shapely.get_coordinates(p).tolist() for p in first] == [
        shapely.get_coordinates(p).tolist() for p in fill_polygons([plane, island])
    ]
    assert z.fill_polygons(1) == ()
    assert shapely.contains_xy(first[0], 5.0, 5.0) and not shapely.contains_xy(first[0], 11.0, 5.0)


def test_fill_polygons_waits_for_the_thread_building_them(monkeypatch) -> None:  # noqa: ANN001
    """Two threads asking at once: one builds (and indexes) under the zone's lock, the other
    waits and gets the same tuple: GEOS must never build one polygon's index twice at once."""
    import threading

    import accel_drc.geometry as geometry

    calls = []
    real = geometry.fill_polygons
    gate = threading.Event()

    def slow(rings):  # noqa: ANN001, ANN202
        calls.append(threading.current_thread().name)
        gate.wait(5)
        return real(rings)

    monkeypatch.setattr(geometry, "fill_polygons", slow)
    plane = np.array([(0, 0), (10, 0), (10, 10), (0, 10)], float)
    z = Zone(net=1, net_name="GND", layers=(0,), filled={0: (plane,)})
    got: list = []
    a = threading.Thread(target=lambda: got.append(z.fill_polygons(0, index=True)))
    b = threading.Thread(target=lambda: got.append(z.fill_polygons(0)))
    a.start()
    while not calls:
        pass
    b.start()
    gate.set()
    a.join(10)
    b.join(10)
    assert len(calls) == 1 and len(got) == 2 and got[0] is got[1]
