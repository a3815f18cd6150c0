"""A decimated SVG of the board for the HTML report: outline, copper per layer, pads, vias.

Why decimated: the report must stay small and fast to open.  A 69 MB KiCad board is mostly zone
fills and footprint graphics; drawn naively it would be tens of MB of SVG that a browser takes
seconds to lay out.  A reviewer needs to *find* a problem on the board, not to see every 10 µm
of copper, so:

* all coordinates are snapped to a grid ``q`` (0.01 mm on small boards, coarser on big ones so
  the whole board stays within ~40,000 grid steps) and written as integers in grid units (the
  ``<g transform="scale(q)">`` puts them back in mm);
* zone fills are simplified with shapely (Douglas-Peucker, tolerance a few grid steps) and
  islands smaller than a grid cell are dropped;
* tracks are grouped into one ``<path>`` per (layer, width class) and chained where consecutive
  segments share an end, so the path is mostly short relative ``l`` steps; segments shorter than
  the grid collapse away;
* pads and vias become one path per layer and size class (round ones as zero-length strokes with
  round caps, which the browser draws as discs).

The output is a fragment of SVG text (no scripts, no external references) built only from
numbers and from layer names that are escaped here: user text never reaches it unescaped.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from markupsafe import escape

from ..arrays import unique, unique_rows
from ..concurrency import Background, RunOnce, workers
from ..model import Board

log = logging.getLogger(__name__)

#: KiCad-like colours for copper layers: top red, bottom blue, inner layers from a palette that
#: stays distinguishable on the dark board background.
_TOP = "#d23c3c"
_BOTTOM = "#4f83d6"
_INNER = (
    "#c2a23a",
    "#3cae8c",
    "#b05ad0",
    "#d07d3a",
    "#5ab4d0",
    "#9ac23a",
    "#d05a8c",
    "#7a8cd0",
)

#: the board view aims at this many grid steps across the board's longer side (bounds ``q``)
_MAX_STEPS = 40_000


def layer_colour(index: int, count: int) -> str:
    """Display colour of copper layer ``index`` on a board with ``count`` layers."""
    if index == 0:
        return _TOP
    if index == count - 1:
        return _BOTTOM
    return _INNER[(index - 1) % len(_INNER)]


@dataclass
class BoardSvg:
    """The board view: SVG body text plus what the page needs to drive it."""

    svg: str  # the <svg> element (markup-safe: numbers and escaped layer names only)
    view_box: tuple[float, float, float, float]  # x, y, w, h in mm
    layers: list[dict[str, object]] = field(
        default_factory=list
    )  # {index, name, user, colour, visible}
    grid_mm: float = 0.01
    stats: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _bbox(board: Board) -> tuple[float, float, float, float] | None:
    """Board extent: the Edge.Cuts bbox, else everything drawn."""
    if board.outline.bbox is not None:
        return board.outline.bbox
    pts: list[np.ndarray] = []
    if len(board.tracks):
        pts += [board.tracks.start, board.tracks.end]
    if len(board.vias):
        pts.append(board.vias.pos)
    for fp in board.footprints:
        pts.append(np.array([[fp.x, fp.y]]))
    for zone in board.zones:
        if len(zone.outline):
            pts.append(np.asarray(zone.outline, dtype=float))
    if not pts:
        return None
    allp = np.concatenate([p.reshape(-1, 2) for p in pts])
    allp = allp[np.isfinite(allp).all(axis=1)]
    if not len(allp):
        return None
    return (
        float(allp[:, 0].min()),
        float(allp[:, 1].min()),
        float(allp[:, 0].max()),
        float(allp[:, 1].max()),
    )


def grid_for(extent_mm: float) -> float:
    """Grid step: 0.01 mm, or coarser so the longer side stays within ``_MAX_STEPS`` steps."""
    q = 0.01
    while extent_mm / q > _MAX_STEPS:
        q *= 2
    return q


#: integers in [-_TABLE_R, _TABLE_R] are written from a table of their strings: most numbers in
#: a path are short relative steps, and a lookup is 4× faster than ``str`` per number
_TABLE_R = 4096


@functools.lru_cache(maxsize=1)
def _int_table() -> np.ndarray:
    return np.array([str(i) for i in range(-_TABLE_R, _TABLE_R + 1)], dtype=object)


def _int_strings(v: np.ndarray) -> np.ndarray:
    """Decimal text of each integer of ``v`` (an object array of ``str``, as ``str(int)``)."""
    v = np.asarray(v, dtype=np.int64).ravel()
    out = np.empty(len(v), dtype=object)
    near = (v >= -_TABLE_R) & (v <= _TABLE_R)
    out[near] = _int_table()[v[near] + _TABLE_R]
    far = ~near
    if far.any():
        out[far] = np.array([str(x) for x in v[far].tolist()] + [None], dtype=object)[:-1]
    return out


def _chains(heads: np.ndarray, steps_per_chain: np.ndarray, steps: np.ndarray, end: str) -> str:
    """Path text of several chains in one pass: chain ``c`` is ``M x y`` at ``heads[c]`` then
    ``l`` and its ``steps_per_chain[c]`` relative steps (the next rows of ``steps``) followed by
    ``end`` (``"z"`` closes a ring), or ``M x y h0`` (a dot) when it has no step.

    The text is the numbers interleaved with their separators and joined once: no Python
    formatting per chain (a board view has 10⁵ chains and 10⁶ steps)."""
    n = len(heads)
    if n == 0:
        return ""
    k = np.asarray(steps_per_chain, dtype=np.int64)
    count = 2 + 2 * k  # numbers per chain
    off = np.zeros(n, dtype=np.int64)
    np.cumsum(count[:-1], out=off[1:])
    total = int(off[-1] + count[-1])
    is_head = np.zeros(total, dtype=bool)
    is_head[off] = True
    is_head[off + 1] = True
    numbers = np.empty(total, dtype=np.int64)
    numbers[is_head] = np.asarray(heads, dtype=np.int64).ravel()
    numbers[~is_head] = np.asarray(steps, dtype=np.int64).reshape(-1)
    # what each chain leaves behind it, written before the next chain's M (and at the end)
    after = np.where(k > 0, end, "h0").astype(object)
    seps = np.full(total, " ", dtype=object)
    seps[off[1:]] = after[:-1] + "M"
    seps[off[0]] = "M"
    seps[(off + 2)[k > 0]] = "l"
    text = np.empty(2 * total, dtype=object)
    text[0::2] = seps
    text[1::2] = _int_strings(numbers)
    return "".join(text.tolist()) + after[-1]


def _ring_path(pts: np.ndarray) -> str:
    """Integer grid points of one closed ring as ``M x y l dx dy … z`` (duplicates removed)."""
    if len(pts) < 2:
        return ""
    d = np.diff(pts, axis=0)
    keep = np.any(d != 0, axis=1)
    d = d[keep]
    if len(d) < 2:
        return ""
    return _chains(pts[:1], np.array([len(d)]), d, "z")


def _polyline_path(pts: np.ndarray) -> str:
    """Integer grid points of one open polyline as ``M x y l …`` (a single point -> ``h0``)."""
    d = np.diff(pts, axis=0)
    d = d[np.any(d != 0, axis=1)] if len(d) else d
    return _chains(pts[:1], np.array([len(d)]), d.reshape(-1, 2), "")


def _chain_segments(a: np.ndarray, b: np.ndarray) -> str:
    """Path text for segments a[i] -> b[i] (integer grid), chaining a segment onto the previous
    one when it starts where that one ended (KiCad writes routed tracks mostly in order).

    A chain is ``M x y`` then ``l`` and its non-zero steps, or ``h0`` when every step is zero
    (a dot).  Built with whole-array operations (:func:`_chains`): most chains on a real board
    are a single segment, and per-chain Python is slow on a board of many tracks."""
    n = len(a)
    if n == 0:
        return ""
    # break the chain where a segment does not start at the previous end
    starts_new = np.ones(n, dtype=bool)
    starts_new[1:] = np.any(a[1:] != b[:-1], axis=1)
    d = b - a
    nz = np.any(d != 0, axis=1)
    first = np.flatnonzero(starts_new)
    steps = np.add.reduceat(nz.astype(np.int64), first)  # non-zero steps per chain
    return _chains(a[first], steps, d[nz], "")


def _rings_text(coords: np.ndarray, index: np.ndarray, n_geoms: int, q: float) -> str:
    """:func:`_ring_path` of every ring in ``coords`` (mm, ring ``index[i]`` holds point ``i``,
    rings in order) in one pass: rings of fewer than 3 points, or fewer than 2 steps once
    snapped to the grid, are left out, as :func:`_ring_path` leaves them."""
    if not len(coords):
        return ""
    pts = np.round(coords / q).astype(np.int64)
    per = np.bincount(index, minlength=n_geoms)
    ok_ring = per >= 3
    d = pts[1:] - pts[:-1]
    inside = index[1:] == index[:-1]  # the step stays in its ring
    nz = inside & np.any(d != 0, axis=1)
    steps = np.bincount(index[1:][nz], minlength=n_geoms)
    keep = ok_ring & (steps >= 2)
    if not keep.any():
        return ""
    start = np.zeros(n_geoms, dtype=np.int64)
    np.cumsum(per[:-1], out=start[1:])
    sel = nz & keep[index[1:]]
    return _chains(pts[start[keep]], steps[keep], d[sel], "z")


def _width_class(width_mm: np.ndarray, q: float) -> np.ndarray:
    """Track widths snapped to the grid (at least one step) so similar widths share a path."""
    return np.maximum(np.round(width_mm / q), 1).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# The layers of the drawing
# ---------------------------------------------------------------------------------------------


class ZoneJob:
    """The zone fills of the board view: one even-odd path per copper layer with that layer's
    simplified fills, the simplification (Douglas-Peucker in GEOS, with the GIL released)
    running on background threads from construction until :meth:`text`.

    KiCad writes holes into a fill outline with zero-width bridges; with ``fill-rule: evenodd``
    the bridged hole is crossed twice and stays empty, so no polygon repair is needed here.

    The numpy work (gathering the rings, their areas, the path text) stays on the caller's
    thread: done on a background thread it costs more peak memory (its temporaries land in
    another malloc arena, which keeps them)."""

    def __init__(self, board: Board, q: float, tol_steps: float = 2.0, here: bool = False) -> None:
        """``here``: nothing is done yet and no thread started; :meth:`run_here` gathers and
        simplifies on the calling thread (a caller that is itself a background thread and
        must leave the other core to KiCad), and :meth:`text` waits for it."""
        self.q = q
        self._layers: list[int] = []
        self._rows: list[np.ndarray] = []  # per layer: its rings' rows among the distinct rings
        self._job: Any = None
        self._here: RunOnce | None = None
        if here:
            self._here = RunOnce(lambda: self._start(board, tol_steps, threads=False))
            self._job = self._here
        else:
            self._start(board, tol_steps, threads=True)

    def _start(self, board: Board, tol_steps: float, threads: bool) -> Any:
        """Gather the rings (here), then simplify them: on background threads (``threads``;
        the job is kept for :meth:`text`), else here (the simplified rings are returned)."""
        import shapely

        q = self.q
        by_layer: dict[int, list[np.ndarray]] = {}
        for zone in board.zones:
            if zone.keepout:
                continue
            for layer, polys in zone.filled.items():
                for poly in polys:
                    arr = np.asarray(poly, dtype=float)
                    if arr.ndim == 2 and arr.shape[1] == 2:
                        finite = np.isfinite(arr).all(axis=1)
                        if not finite.all():  # a copy only where a point must go
                            arr = arr[finite]
                    if arr.ndim == 2 and len(arr) >= 3:
                        by_layer.setdefault(int(layer), []).append(arr)
        min_area = (q * tol_steps) ** 2 * 4
        # a ring repeated on several layers (a ground fill poured alike on each ground layer:
        # 27 % of vme-wren's fill points) is simplified once; the bytes are the key, so only
        # bit-identical rings share a result and each layer's text is what it was
        distinct: dict[bytes, int] = {}
        rings_u: list[np.ndarray] = []
        for layer, polys in by_layer.items():
            rows = []
            for arr, area in zip(polys, _ring_areas(polys)):
                if area < min_area:
                    continue
                k = distinct.setdefault(arr.tobytes(), len(rings_u))
                if k == len(rings_u):
                    rings_u.append(arr)
                rows.append(k)
            if rows:
                self._layers.append(layer)
                self._rows.append(np.array(rows, dtype=np.int64))
        del distinct
        # one linestring per ring (from the ring's own array: faster than ``indices=``)
        geoms = np.array([shapely.linestrings(r) for r in rings_u], dtype=object)
        tol = q * tol_steps

        def simplify(part: Any) -> Any:
            return shapely.simplify(part, tol, preserve_topology=False)

        def simplify_all() -> Any:
            # in a few parts on a small thread pool (GEOS releases the GIL; the same
            # geometries)
            n = min(workers(), len(geoms))
            if n <= 1:
                return simplify(geoms)
            from concurrent.futures import ThreadPoolExecutor

            parts = np.array_split(geoms, 4 * n)
            with ThreadPoolExecutor(max_workers=n, thread_name_prefix="accel-drc zones") as pool:
                return np.concatenate(list(pool.map(simplify, parts)))

        if not threads:
            return simplify(geoms) if len(geoms) else None
        self._job = Background(simplify_all, "board view zones") if len(geoms) else None
        return None

    def run_here(self) -> None:
        """Gather and simplify now, on this thread (a job made with ``here``; once)."""
        if self._here is not None:
            self._here.run()

    def text(self) -> dict[int, str]:
        """Copper layer -> path text of its simplified fills (waits for the simplification)."""
        import shapely

        simplified = self._job.result() if self._job is not None else None
        out: dict[int, str] = {}
        if simplified is None:
            return out
        for layer, rows in zip(self._layers, self._rows):
            simple = simplified[rows]
            coords, index = shapely.get_coordinates(simple, return_index=True)
            out[layer] = _rings_text(coords, index, len(simple), self.q)
        return out


def _zone_paths(board: Board, q: float, tol_steps: float) -> dict[int, str]:
    """One even-odd path per copper layer with that layer's simplified zone fills."""
    return ZoneJob(board, q, tol_steps).text()


def _ring_areas(rings: Sequence[np.ndarray]) -> np.ndarray:
    """Unsigned shoelace area of each ring (mm², the ring closed back to its first point), all
    rings in one pass without BLAS (``np.dot`` on long vectors spins up BLAS threads that crawl
    on a busy machine)."""
    if not rings:
        return np.zeros(0)
    counts = np.array([len(r) for r in rings], dtype=np.int64)
    pts = np.concatenate(rings)
    start = np.zeros(len(rings), dtype=np.int64)
    np.cumsum(counts[:-1], out=start[1:])
    nxt = np.arange(1, len(pts) + 1)
    nxt[start + counts - 1] = start  # each ring's last point wraps to its first
    x, y = pts[:, 0], pts[:, 1]
    cross = x * y[nxt] - y * x[nxt]
    return np.abs(np.add.reduceat(cross, start)) / 2.0


def _track_paths(board: Board, q: float) -> dict[int, list[tuple[int, str]]]:
    """Per copper layer: [(width in grid steps, path)], one path per width class."""
    tr = board.tracks
    out: dict[int, list[tuple[int, str]]] = {}
    if not len(tr):
        return out
    start = np.asarray(tr.start, dtype=float)
    end = np.asarray(tr.end, dtype=float)
    mid = np.asarray(tr.mid, dtype=float)
    if mid.shape != start.shape:
        mid = np.full_like(start, np.nan)
    arc = ~np.isnan(mid[:, 0])
    # arcs: draw start -> mid -> end (two chords), good enough at report zoom
    a = np.concatenate([start[~arc], start[arc], mid[arc]])
    b = np.concatenate([end[~arc], mid[arc], end[arc]])
    width = np.concatenate([tr.width[~arc], tr.width[arc], tr.width[arc]])
    layer = np.concatenate([tr.layer[~arc], tr.layer[arc], tr.layer[arc]]).astype(np.int64)
    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1) & np.isfinite(width)
    a, b, width, layer = a[ok], b[ok], width[ok], layer[ok]
    ai = np.round(a / q).astype(np.int64)
    bi = np.round(b / q).astype(np.int64)
    wc = _width_class(np.asarray(width, dtype=float), q)
    # keep file order inside a group (chaining relies on it): stable sort by (layer, width)
    order = np.lexsort((wc, layer))
    ai, bi, wc, layer = ai[order], bi[order], wc[order], layer[order]
    # a segment that collapsed to a point and is thinner than 2 steps is invisible: drop it
    keep = np.any(ai != bi, axis=1) | (wc >= 2)
    ai, bi, wc, layer = ai[keep], bi[keep], wc[keep], layer[keep]
    if not len(ai):
        return out
    key = layer * 1_000_000 + wc
    bounds = np.flatnonzero(np.diff(key)) + 1
    for s, e in zip([0, *bounds.tolist()], [*bounds.tolist(), len(key)]):
        lay, w = int(layer[s]), int(wc[s])
        out.setdefault(lay, []).append((w, _chain_segments(ai[s:e], bi[s:e])))
    return out


def _pad_geometry(
    board: Board, q: float
) -> tuple[dict[int, list[str]], dict[int, dict[int, list[str]]], int]:
    """Pads per copper layer: filled polygons (rect-like) and round strokes by width class.

    Rotation follows KiCad: degrees counter-clockwise on screen, with y pointing down.  The
    corners are computed for all pads at once, with the same IEEE operations in the same order
    as pad by pad (cos and sin from :mod:`math`, once per distinct rotation: numpy's may
    differ in the last bit), so the text is the same."""
    polys: dict[int, list[str]] = {}
    strokes: dict[int, dict[int, list[str]]] = {}
    pads = [
        pad for _fp, pad in board.pads if pad.copper_layers and pad.width > 0 and pad.height > 0
    ]
    if not pads:
        return polys, strokes, 0
    x = np.array([p.x for p in pads], dtype=float)
    y = np.array([p.y for p in pads], dtype=float)
    w = np.array([p.width for p in pads], dtype=float)
    h = np.array([p.height for p in pads], dtype=float)
    rot, at = np.unique(
        np.array([p.rotation or 0.0 for p in pads], dtype=float), return_inverse=True
    )
    c = np.array([math.cos(math.radians(t)) for t in rot.tolist()])[at.reshape(-1)]
    s = np.array([math.sin(math.radians(t)) for t in rot.tolist()])[at.reshape(-1)]
    rnd = [p.shape in ("circle", "oval") for p in pads]

    def grid(v: np.ndarray) -> list[int]:
        return np.rint(v / q).astype(np.int64).tolist()  # type: ignore[no-any-return]

    # round pads: one stroke along the long side
    half = np.abs(w - h) / 2.0
    long_x = w >= h
    u = np.where(long_x, half, 0.0)
    v = np.where(long_x, 0.0, half)
    dx, dy = u * c + v * s, -u * s + v * c
    sx0, sy0, sx1, sy1 = grid(x - dx), grid(y - dy), grid(x + dx), grid(y + dy)
    sw = np.maximum(1, np.rint(np.minimum(w, h) / q).astype(np.int64)).tolist()
    # rect-like pads: four corners
    hw, hh = w / 2.0, h / 2.0
    signs = ((-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh))
    cx = [grid(x + cu * c + cv * s) for cu, cv in signs]
    cy = [grid(y - cu * s + cv * c) for cu, cv in signs]
    for pad, r, x0, y0, x1, y1, wc, a0, a1, a2, a3, b0, b1, b2, b3 in zip(
        pads, rnd, sx0, sy0, sx1, sy1, sw, *cx, *cy
    ):
        if r:
            seg = f"M{x0} {y0}l{x1 - x0} {y1 - y0}" if (x0, y0) != (x1, y1) else f"M{x0} {y0}h0"
            for layer in pad.copper_layers:
                strokes.setdefault(layer, {}).setdefault(wc, []).append(seg)
            continue
        text = f"M{a0} {b0}l{a1 - a0} {b1 - b0} {a2 - a1} {b2 - b1} {a3 - a2} {b3 - b2}z"
        for layer in pad.copper_layers:
            polys.setdefault(layer, []).append(text)
    return polys, strokes, len(pads)


def _via_paths(board: Board, q: float) -> list[tuple[int, str]]:
    """Vias as discs: [(diameter class in grid steps, path of zero-length round strokes)]."""
    vias = board.vias
    if not len(vias):
        return []
    pos_mm = np.asarray(vias.pos, dtype=float)
    dia_mm = np.asarray(vias.diameter, dtype=float)
    ok = np.isfinite(pos_mm).all(axis=1) & np.isfinite(dia_mm)
    pos = np.round(pos_mm[ok] / q).astype(np.int64)
    dia = _width_class(dia_mm[ok], q)
    out = []
    for d in unique(dia).tolist():
        sel = pos[dia == d]
        # dedupe stacked vias at the same grid point
        sel = unique_rows(sel)
        out.append((int(d), _chains(sel, np.zeros(len(sel), dtype=np.int64), sel[:0], "")))
    return out


def _outline_path(board: Board, q: float) -> str:
    parts = []
    for ring in board.outline.rings:
        arr = np.asarray(ring, dtype=float)
        if arr.ndim != 2 or len(arr) < 2:
            continue
        arr = arr[np.isfinite(arr).all(axis=1)]
        if len(arr) < 2:
            continue
        pts = np.round(arr / q).astype(np.int64)
        closed = len(arr) > 2 and np.allclose(arr[0], arr[-1])
        parts.append(_ring_path(pts) if closed else _polyline_path(pts))
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Public entry
# ---------------------------------------------------------------------------------------------


def _grid(bbox: tuple[float, float, float, float]) -> float:
    xmin, ymin, xmax, ymax = bbox
    return grid_for(max(xmax - xmin, ymax - ymin, 1.0))


#: zone jobs started ahead of the report by :func:`zones_ahead`: id(board) -> (board, job),
#: each claimed (and dropped) by the first :func:`start_zones` of that same board object
_AHEAD: dict[int, tuple[Board, ZoneJob | None]] = {}
#: most jobs kept unclaimed (a caller that started one and then wrote no report)
_AHEAD_MAX = 2


def zones_ahead(board: Board) -> None:
    """Start :func:`start_zones` of ``board`` now, for the report that a caller will write after
    checking the board: the simplification (0.25 s of CPU on vme-wren, GEOS without the GIL)
    then runs on another core during the check instead of inside the report.  The report's own
    :func:`start_zones` of the same board object takes the job over; the view is the same.
    Never raises: a board whose fills cannot be simplified fails (or falls back) in the report,
    where it always did, not before the check (it is only a head start)."""
    if len(_AHEAD) >= _AHEAD_MAX:
        _AHEAD.clear()
    try:
        job = _zone_job(board)
    except Exception:
        log.warning(
            "the board view was not started ahead (the report will try again)", exc_info=True
        )
        return
    _AHEAD[id(board)] = (board, job)


#: a zone job started before its board object existed (:func:`zones_early`): the zones it was
#: made of, its grid step, the job; claimed by the first :func:`_zone_job` of a board with those
#: very zones at that step
_EARLY: list[tuple[Sequence[Any], float, ZoneJob]] = []


def zones_early(
    zones: Sequence[Any], bbox: tuple[float, float, float, float] | None
) -> ZoneJob | None:
    """A board view zone job for a board still being read: ``zones`` (the objects the board
    will hold) and ``bbox``, its extent as far as known (the KiCad plugin: the Edge.Cuts
    drawings, before the footprints' own); registered now, run by whichever thread first calls
    its :meth:`ZoneJob.run_here` (the plugin's warm-up thread while KiCad sends the footprints;
    else the report's head start, :func:`zones_ahead`, when it claims the job first).  The
    report of a board holding these very zones takes it over when its grid step (:func:`_grid`
    of the final extent) is the one used here, else simplifies again: the view is the same
    either way.  None (and nothing registered) without an extent.  Never raises (a head start
    only)."""
    if bbox is None:
        return None
    try:
        from types import SimpleNamespace

        q = _grid(bbox)
        job = ZoneJob(SimpleNamespace(zones=zones), q, tol_steps=2.0, here=True)  # type: ignore[arg-type]
    except Exception:
        log.debug("the board view's zones were not started early", exc_info=True)
        return None
    _EARLY[:] = [(zones, q, job)]
    return job


def _early_job(board: Board, q: float) -> ZoneJob | None:
    """The :func:`zones_early` job of ``board``'s zones at step ``q`` (claimed once), if any;
    started on a thread of its own unless a thread runs it already (it may be waiting for its
    turn on the plugin's warm-up thread)."""
    if not _EARLY:
        return None
    zones, q0, job = _EARLY.pop()
    mine = board.zones
    if q0 == q and len(zones) == len(mine) and all(a is b for a, b in zip(zones, mine)):
        Background(job.run_here, "board view zones")
        return job
    return None


def start_zones(board: Board) -> ZoneJob | None:
    """Start the zone fills' simplification (the view's costliest part, mostly GEOS with the GIL
    released) on background threads, so that it runs beside the caller's Python work (the HTML
    report's finding rows); hand the job to :func:`render_board` as ``zones``.  None when the
    board has no extent (nothing to draw).  A job :func:`zones_ahead` started for this board
    object is handed over instead of starting another."""
    ahead = _AHEAD.pop(id(board), None)
    if ahead is not None and ahead[0] is board:
        return ahead[1]
    return _zone_job(board)


def _zone_job(board: Board) -> ZoneJob | None:
    bbox = _bbox(board)
    if bbox is None:
        return None
    q = _grid(bbox)
    return _early_job(board, q) or ZoneJob(board, q, tol_steps=2.0)


def render_board(
    board: Board, visible_layers: Iterable[int] | None = None, zones: ZoneJob | None = None
) -> BoardSvg:
    """Build the board view.  ``visible_layers``: copper layers shown at first (default: the two
    outer layers; the reader toggles the rest).  ``zones``: :func:`start_zones` of this board,
    when the caller started it ahead."""
    bbox = _bbox(board)
    count = board.layer_count
    layers_meta: list[dict[str, object]] = []
    shown = set(visible_layers) if visible_layers is not None else {0, max(count - 1, 0)}
    for cl in board.copper_layers:
        layers_meta.append(
            {
                "index": cl.index,
                "name": cl.name,
                "user": cl.user_name if cl.user_name != cl.name else "",
                "colour": layer_colour(cl.index, count),
                "visible": cl.index in shown,
            }
        )
    if bbox is None:
        empty = (
            '<svg id="board-svg" class="board-svg" viewBox="0 0 100 100" role="img" '
            'aria-label="board view: the board has no outline or geometry">'
            '<g id="markers" class="markers"></g></svg>'
        )
        return BoardSvg(svg=empty, view_box=(0.0, 0.0, 100.0, 100.0), layers=layers_meta)
    xmin, ymin, xmax, ymax = bbox
    extent = max(xmax - xmin, ymax - ymin, 1.0)
    q = _grid(bbox)
    margin = extent * 0.03
    vb = (xmin - margin, ymin - margin, (xmax - xmin) + 2 * margin, (ymax - ymin) + 2 * margin)

    if zones is None:
        zones = start_zones(board)
    tracks = _track_paths(board, q)
    pad_polys, pad_strokes, pad_count = _pad_geometry(board, q)
    vias = _via_paths(board, q)
    outline = _outline_path(board, q)
    zone_text: dict[int, str] = zones.text() if zones is not None else {}

    out: list[str] = []
    out.append(
        f'<svg id="board-svg" class="board-svg" '
        f'viewBox="{vb[0]:.3f} {vb[1]:.3f} {vb[2]:.3f} {vb[3]:.3f}" '
        f'data-home="{vb[0]:.3f} {vb[1]:.3f} {vb[2]:.3f} {vb[3]:.3f}" '
        f'preserveAspectRatio="xMidYMid meet" role="img" '
        f'aria-label="board view with {count} copper layers and the findings marked">'
    )
    out.append(
        f'<rect class="board-bg" x="{vb[0]:.3f}" y="{vb[1]:.3f}" width="{vb[2]:.3f}" '
        f'height="{vb[3]:.3f}"/>'
    )
    out.append(f'<g class="geom" transform="scale({q:g})">')
    if outline:
        out.append(f'<path class="outline-fill" d="{outline}"/>')
    # bottom layer first so the top is drawn over it
    for cl in sorted(board.copper_layers, key=lambda c: -c.index):
        i = cl.index
        colour = layer_colour(i, count)
        hidden = "" if i in shown else ' style="display:none"'
        body: list[str] = []
        if zone_text.get(i):
            body.append(f'<path class="zone" fill="{colour}" d="{zone_text[i]}"/>')
        for w, d in tracks.get(i, []):
            body.append(f'<path class="trk" stroke="{colour}" stroke-width="{w}" d="{d}"/>')
        if pad_polys.get(i):
            body.append(f'<path class="pad" fill="{colour}" d="{"".join(pad_polys[i])}"/>')
        for w, segs in sorted(pad_strokes.get(i, {}).items()):
            body.append(
                f'<path class="padr" stroke="{colour}" stroke-width="{w}" d="{"".join(segs)}"/>'
            )
        if not body:
            body.append("")
        out.append(
            f'<g class="cu" data-layer="{i}" data-name="{escape(cl.name)}"{hidden}>'
            + "".join(body)
            + "</g>"
        )
    if vias:
        out.append('<g class="vias" data-layer="vias">')
        for d, path in vias:
            out.append(f'<path class="via" stroke-width="{d}" d="{path}"/>')
        out.append("</g>")
    if outline:
        out.append(f'<path class="outline" d="{outline}"/>')
    out.append("</g>")
    out.append('<g id="markers" class="markers"></g>')
    out.append("</svg>")
    stats = {
        "zone_layers": len(zone_text),
        "track_paths": sum(len(v) for v in tracks.values()),
        "pads": pad_count,
        "vias": len(board.vias),
    }
    return BoardSvg(svg="".join(out), view_box=vb, layers=layers_meta, grid_mm=q, stats=stats)


def layer_names(board: Board) -> Sequence[str]:
    """Canonical copper layer names in stack order (for the report's filters)."""
    return [cl.name for cl in board.copper_layers]
