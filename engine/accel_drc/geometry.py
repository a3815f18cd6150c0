"""Plane geometry shared by every reader, the KiCad plugin's live reader and the analyses.

Why one module: the ``.kicad_pcb`` reader, the IPC-2581 reader and the live reader used to
flatten arcs each their own way (a 0.005 mm chord error in one, 5° steps in the other two), so
the same board came out with different outline rings depending on how it was read.  Every arc,
circle, outline chain and bridged fill in accel-drc now goes through the functions below, with
ONE chord tolerance (:data:`CHORD_TOL_MM`) and ONE chaining epsilon (:data:`CHAIN_EPS_MM`).

Units and frame: millimetres as floats, KiCad's frame (x right, y down) unless a function says
"nm" (integer nanometres, the way KiCad stores positions: used where a result must match pcbnew
to the nanometre).  Points are ``(x, y)`` tuples; rings are ``(n, 2)`` float arrays, closed
when their last point equals their first exactly.

What is here (``docs/geometry.md``, "Shared geometry", has the details):

- circle through three points: :func:`circle_through` (one arc), :func:`circles_through`
  (numpy, row-wise);
- arcs: :func:`arc_sweep`, :func:`arc_segment_count`, :func:`arc_points` (start/mid/end, as
  KiCad stores arcs), :func:`arc_from_centre` / :func:`centre_arc_points` (start/end/centre and
  a direction, as IPC-2581 stores them), :func:`circle_points`, :func:`bezier_points`;
- KiCad's integer arc box: :func:`kiround`, :func:`kicad_arc_centre`, :func:`rotate_nm`,
  :func:`arc_bbox_nm`;
- outlines: :func:`chain` (grid-bucketed, linear), :func:`outline_rings`;
- areas and holes: :func:`signed_area`, :func:`ring_area`, :func:`bridge_holes`;
- distances: :func:`segment_distance`, :func:`arc_distance` (numpy, broadcasting).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

Point = tuple[float, float]
PointNm = tuple[int, int]

#: Largest distance (mm) between a flattened arc's chords and the true arc.  KiCad's own
#: ``ARC_HIGH_DEF`` (0.005 mm), the error it uses to turn arcs into polygons for DRC and fills,
#: so our rings and pcbnew's differ by no more than pcbnew's own approximation.
CHORD_TOL_MM = 0.005

#: Edge.Cuts ends closer than this (mm) are joined into one outline: KiCad's board-outline
#: chaining epsilon (0.02 mm).  Exported outlines often miss by nanometres to a micrometre.
CHAIN_EPS_MM = 0.02

#: |twice the signed triangle area| (mm²) under which three points count as collinear
_COLLINEAR = 1e-12

_TWO_PI = 2.0 * math.pi


# ---------------------------------------------------------------------------------------------
# circle through three points
# ---------------------------------------------------------------------------------------------


def _circumcentre(ax: Any, ay: Any, bx: Any, by: Any, cx: Any, cy: Any) -> tuple[Any, Any, Any]:
    """(ux, uy, d) of the circle through a, b, c; ``d`` (twice the signed triangle area times 2)
    is ~0 for collinear points.  Plain arithmetic, so it serves floats and numpy arrays alike."""
    d = 2.0 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    a2, b2, c2 = ax * ax + ay * ay, bx * bx + by * by, cx * cx + cy * cy
    ux = a2 * (by - cy) + b2 * (cy - ay) + c2 * (ay - by)
    uy = a2 * (cx - bx) + b2 * (ax - cx) + c2 * (bx - ax)
    return ux, uy, d


def circle_through(s: Point, m: Point, e: Point) -> Point | None:
    """Centre of the circle through ``s``, ``m`` and ``e``; None when they are collinear."""
    ux, uy, d = _circumcentre(s[0], s[1], m[0], m[1], e[0], e[1])
    if abs(d) < _COLLINEAR:
        return None
    return ux / d, uy / d


def circles_through(s: np.ndarray, m: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centres ``(n, 2)`` and radii ``(n,)`` of the circles through the rows of ``s``, ``m``,
    ``e`` (each ``(n, 2)``); NaN where the three points are collinear."""
    ux, uy, d = _circumcentre(s[:, 0], s[:, 1], m[:, 0], m[:, 1], e[:, 0], e[:, 1])
    bad = np.abs(d) < _COLLINEAR
    with np.errstate(divide="ignore", invalid="ignore"):
        ux = np.where(bad, np.nan, ux / np.where(bad, 1.0, d))
        uy = np.where(bad, np.nan, uy / np.where(bad, 1.0, d))
    return np.stack([ux, uy], -1), np.hypot(s[:, 0] - ux, s[:, 1] - uy)


# ---------------------------------------------------------------------------------------------
# arcs
# ---------------------------------------------------------------------------------------------


def arc_sweep(s: Point, m: Point, e: Point, c: Point) -> tuple[float, float]:
    """(start angle, signed sweep) in radians of the arc ``s`` → ``m`` → ``e`` around ``c``.

    The sweep is positive when the arc runs towards increasing ``atan2`` angle (clockwise on
    screen, y being down); an arc whose ends coincide is a full circle (sweep ±2π)."""
    a0 = math.atan2(s[1] - c[1], s[0] - c[0])
    am = math.atan2(m[1] - c[1], m[0] - c[0])
    a1 = math.atan2(e[1] - c[1], e[0] - c[0])
    de = (a1 - a0) % _TWO_PI
    dm = (am - a0) % _TWO_PI
    if de == 0.0:  # full circle drawn as an arc
        return a0, _TWO_PI
    return (a0, de) if dm <= de else (a0, de - _TWO_PI)


def arc_segment_count(radius: float, sweep: float, tol: float = CHORD_TOL_MM) -> int:
    """Chords needed so that none is farther than ``tol`` from an arc of ``radius`` and
    ``sweep`` radians (KiCad's ``GetArcToSegmentCount`` rule: chord angle 2·acos(1 − tol/r));
    at least 2, so a flattened arc always keeps a vertex between its ends."""
    step = 2.0 * math.acos(max(-1.0, min(1.0, 1.0 - tol / radius))) if radius > tol else math.pi / 2
    return max(2, int(math.ceil(abs(sweep) / max(step, 1e-3))))


def _run(
    c: Point, r: float, a0: float, sweep: float, s: Point, e: Point, tol: float
) -> list[Point]:
    """``s``, the inner vertices of the flattened arc, ``e`` (the ends are kept exactly)."""
    n = arc_segment_count(r, sweep, tol)
    pts = [s]
    for i in range(1, n):
        a = a0 + sweep * i / n
        pts.append((c[0] + r * math.cos(a), c[1] + r * math.sin(a)))
    pts.append(e)
    return pts


def arc_points(s: Point, m: Point, e: Point, tol: float = CHORD_TOL_MM) -> list[Point]:
    """The arc from ``s`` through ``m`` to ``e`` (KiCad's three-point form) as a polyline whose
    chord error is at most ``tol`` mm; a straight line when the points are collinear."""
    c = circle_through(s, m, e)
    if c is None:
        return [s, e]
    r = math.hypot(s[0] - c[0], s[1] - c[1])
    a0, sweep = arc_sweep(s, m, e, c)
    return _run(c, r, a0, sweep, s, e, tol)


def arc_from_centre(
    start: Point, end: Point, centre: Point, increasing: bool
) -> tuple[float, float, float]:
    """(radius, start angle, signed sweep) of the arc from ``start`` to ``end`` around
    ``centre`` going towards increasing (``increasing=True``) or decreasing ``atan2`` angle;
    equal ends make a full circle.  IPC-2581 gives arcs this way (its ``clockwise`` is stated in
    a y-up frame, so a clockwise IPC arc read into KiCad's y-down frame is ``increasing``)."""
    cx, cy = centre
    r = math.hypot(start[0] - cx, start[1] - cy)
    a0 = math.atan2(start[1] - cy, start[0] - cx)
    a1 = math.atan2(end[1] - cy, end[0] - cx)
    if increasing:
        return r, a0, (a1 - a0) % _TWO_PI or _TWO_PI
    return r, a0, -((a0 - a1) % _TWO_PI or _TWO_PI)


def centre_arc_points(
    start: Point, end: Point, centre: Point, increasing: bool, tol: float = CHORD_TOL_MM
) -> list[Point]:
    """:func:`arc_from_centre` flattened with the same chord rule as :func:`arc_points`."""
    r, a0, sweep = arc_from_centre(start, end, centre, increasing)
    return _run(centre, r, a0, sweep, start, end, tol)


def circle_points(centre: Point, radius: float, tol: float = CHORD_TOL_MM) -> list[Point]:
    """A full circle as a closed ring (last point = first, exactly), chords within ``tol``."""
    cx, cy = centre
    first = (cx + radius, cy)
    return _run(centre, radius, 0.0, _TWO_PI, first, first, tol)


def bezier_points(p: Sequence[Point], n: int = 32) -> list[Point]:
    """A cubic Bézier (start, control 1, control 2, end) at ``n`` + 1 evenly spaced t."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = p[:4]
    out = []
    for i in range(n + 1):
        t = i / n
        u = 1.0 - t
        out.append(
            (
                u**3 * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t**3 * x3,
                u**3 * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t**3 * y3,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# KiCad's integer arc bounding box (sizes equal to pcbnew's to the nanometre)
# ---------------------------------------------------------------------------------------------


def kiround(v: float) -> int:
    """KiCad's KiROUND: halves round away from zero (Python's round() rounds them to even)."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def kicad_arc_centre(s: PointNm, m: PointNm, e: PointNm) -> PointNm:
    """The arc centre exactly as KiCad 9 computes it (``trigo.cpp`` ``CalcArcCenter``), in nm.

    Why not plain geometry: KiCad estimates how far the nanometre rounding of the three points
    can move the centre and, when a multiple of 100 nm (else 10 nm) lies within that
    uncertainty, snaps the centre to it.  On vme-wren's 64 µm corner arcs this moves the
    centre by ~20 nm and the board's bounding box by 10 nm; porting the rule keeps the board
    size equal to pcbnew's to the nanometre.
    """
    ax, ay = float(s[0]), float(s[1])
    bx, by = float(m[0]), float(m[1])
    cx, cy = float(e[0]), float(e[1])
    y21, x21 = by - ay, bx - ax
    y32, x32 = cy - by, cx - bx
    if (x21 == 0.0 and y32 == 0.0) or (y21 == 0.0 and x32 == 0.0):
        return kiround((ax + cx) / 2.0), kiround((ay + cy) / 2.0)
    eps = 2.220446049250313e-16
    if x21 == 0.0:
        x21 = eps
    if x32 == 0.0:
        x32 = -eps
    a_slope = y21 / x21
    b_slope = y32 / x32
    with np.errstate(all="ignore"):
        da = a_slope * float(np.hypot(np.float64(0.5) / y21 if y21 else np.inf, 0.5 / x21))
        db = b_slope * float(np.hypot(np.float64(0.5) / y32 if y32 else np.inf, 0.5 / x32))
    if a_slope == b_slope:
        if (ax, ay) == (cx, cy):
            return kiround((ax + bx) / 2.0), kiround((ay + by) / 2.0)
        a_slope += eps
        b_slope -= eps
    if a_slope == 0.0:
        a_slope = 1e-10
    if b_slope == 0.0:
        b_slope = 1e-10

    def rel(d: float, v: float) -> float:
        return (d / v) ** 2 if v else math.inf

    half = math.sqrt(0.5)
    ab_se_y = a_slope * b_slope * (ay - cy)
    d_ab_se_y = ab_se_y * math.sqrt(rel(da, a_slope) + rel(db, b_slope) + rel(half, ay - cy))
    b_sm_x = b_slope * (ax + bx)
    d_b_sm_x = b_sm_x * math.sqrt(rel(db, b_slope) + rel(half, ax + bx))
    a_me_x = a_slope * (bx + cx)
    d_a_me_x = a_me_x * math.sqrt(rel(da, a_slope) + rel(half, bx + cx))
    twice = 2.0 * (b_slope - a_slope)
    d_twice = 2.0 * math.sqrt(db * db + da * da)
    num_x = ab_se_y + b_sm_x - a_me_x
    d_num_x = math.sqrt(d_ab_se_y**2 + d_b_sm_x**2 + d_a_me_x**2)
    center_x = num_x / twice
    d_center_x = center_x * math.sqrt(rel(d_num_x, num_x) + rel(d_twice, twice))
    num_y = (ax + bx) / 2.0 - center_x
    d_num_y = math.sqrt(1.0 / 8.0 + d_center_x * d_center_x)
    first = num_y / a_slope
    d_first = first * math.sqrt(rel(d_num_y, num_y) + rel(da, a_slope))
    center_y = first + (ay + by) / 2.0
    d_center_y = math.sqrt(d_first * d_first + 1.0 / 8.0)
    r100x = math.floor((center_x + 50.0) / 100.0) * 100.0
    r100y = math.floor((center_y + 50.0) / 100.0) * 100.0
    r10x = math.floor((center_x + 5.0) / 10.0) * 10.0
    r10y = math.floor((center_y + 5.0) / 10.0) * 10.0
    if abs(r100x - center_x) < d_center_x and abs(r100y - center_y) < d_center_y:
        center_x, center_y = r100x, r100y
    elif abs(r10x - center_x) < d_center_x and abs(r10y - center_y) < d_center_y:
        center_x, center_y = r10x, r10y
    if not (math.isfinite(center_x) and math.isfinite(center_y)):
        raise ValueError("degenerate arc")
    lim = 2**31 - 101
    return (
        kiround(min(max(center_x, -lim), lim)),
        kiround(min(max(center_y, -lim), lim)),
    )


def rotate_nm(x: int, y: int, deg: float) -> PointNm:
    """KiCad's integer ``RotatePoint``: exact for multiples of 90°, KiROUND otherwise."""
    d = deg % 360.0
    if d == 0.0:
        return x, y
    if d == 90.0:
        return y, -x
    if d == 180.0:
        return -x, -y
    if d == 270.0:
        return -y, x
    c, s = math.cos(math.radians(d)), math.sin(math.radians(d))
    return kiround(y * s + x * c), kiround(y * c - x * s)


def arc_bbox_nm(
    s: PointNm, m: PointNm, e: PointNm, place: tuple[int, int, float] | None = None
) -> list[PointNm]:
    """Points whose bounding box is KiCad's arc box (``EDA_SHAPE::computeArcBBox``): the two
    ends plus each axis extreme of the circle the arc passes, in integer nm.

    ``s``, ``m``, ``e`` are in the coordinates the file gives (footprint-local for ``fp_arc``);
    ``place`` = (x, y, degrees) of the footprint.  Like KiCad, the centre is computed before
    placing and then rotated and moved with the end points.
    """
    c = kicad_arc_centre(s, m, e)
    if place is not None:
        px, py, deg = place
        s, m, e, c = (rotate_nm(p[0], p[1], deg) for p in (s, m, e, c))
        s, m, e, c = ((p[0] + px, p[1] + py) for p in (s, m, e, c))
    cx, cy = c
    r = max(1, kiround(math.hypot(s[0] - cx, s[1] - cy)))
    a0, sweep = arc_sweep(s, m, e, (cx, cy))
    pts = [s, e]
    for k, (dx, dy) in enumerate(((1, 0), (0, 1), (-1, 0), (0, -1))):
        d = (k * math.pi / 2.0 - a0) % _TWO_PI
        inside = (0.0 < d < sweep) if sweep > 0 else (d > _TWO_PI + sweep and d > 0.0)
        if inside:
            pts.append((cx + dx * r, cy + dy * r))
    return pts


# ---------------------------------------------------------------------------------------------
# outlines
# ---------------------------------------------------------------------------------------------


def chain(pieces: Sequence[Sequence[Point]], eps: float = CHAIN_EPS_MM) -> list[np.ndarray]:
    """Join open polylines end to end into as few chains as possible.  A chain whose ends meet
    (within ``eps``) is closed: its last point is set to its first, exactly.

    Endpoints are bucketed on a grid of ``eps`` and only the 3×3 neighbouring cells are read,
    so this stays linear for outlines imported from DXF with thousands of pieces.  Of several
    candidate ends the nearest wins.

    The pieces are first put in a canonical order and direction (by their end points to the
    nanometre), so the result does not depend on the order a reader met them in: where three
    ends meet (an overlapping or doubled Edge.Cuts line) the file reader, which sees the file's
    order, and the live reader, which sees KiCad's, still build the same rings.
    """

    def nm(p: Point) -> tuple[int, int]:
        return (round(p[0] * 1e6), round(p[1] * 1e6))

    def canonical(pc: Sequence[Point]) -> tuple[tuple[int, int], tuple[int, int], int]:
        a, b = nm(pc[0]), nm(pc[-1])
        return (a, b, len(pc)) if a <= b else (b, a, len(pc))

    pieces = [list(pc) if nm(pc[0]) <= nm(pc[-1]) else list(pc)[::-1] for pc in pieces]
    pieces.sort(key=canonical)
    grid: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def cell(p: Point) -> tuple[int, int]:
        return (math.floor(p[0] / eps), math.floor(p[1] / eps))

    for i, pc in enumerate(pieces):
        grid.setdefault(cell(pc[0]), []).append((i, 0))
        grid.setdefault(cell(pc[-1]), []).append((i, 1))
    used = [False] * len(pieces)

    def nearest(p: Point) -> tuple[int, int] | None:
        cx, cy = cell(p)
        best: tuple[int, int] | None = None
        best_d = eps
        for gx in (cx - 1, cx, cx + 1):
            for gy in (cy - 1, cy, cy + 1):
                for i, end in grid.get((gx, gy), ()):
                    if used[i]:
                        continue
                    q = pieces[i][0] if end == 0 else pieces[i][-1]
                    d = math.hypot(q[0] - p[0], q[1] - p[1])
                    if d <= best_d:
                        best, best_d = (i, end), d
        return best

    def meets(a: Point, b: Point) -> bool:
        return math.hypot(a[0] - b[0], a[1] - b[1]) <= eps

    out: list[np.ndarray] = []
    for i, pc in enumerate(pieces):
        if used[i]:
            continue
        used[i] = True
        line = list(pc)
        closed = False
        for forward in (True, False):  # grow the tail, then the head
            while True:
                if len(line) > 2 and meets(line[-1], line[0]):
                    closed = True
                    break
                got = nearest(line[-1] if forward else line[0])
                if got is None:
                    break
                j, end = got
                used[j] = True
                seg = pieces[j]
                if forward:
                    line.extend(seg[1:] if end == 0 else seg[-2::-1])
                else:
                    line[:0] = seg[:-1] if end == 1 else seg[:0:-1]
            if closed:
                break
        if closed:
            line[-1] = line[0]
        out.append(np.asarray(line, dtype=np.float64).reshape(-1, 2))
    return out


def outline_rings(
    paths: Iterable[tuple[Sequence[Point], bool]], eps: float = CHAIN_EPS_MM
) -> tuple[np.ndarray, ...]:
    """Board-outline rings from flattened Edge.Cuts shapes ``(points, closed)``: closed shapes
    (circles, rectangles, polygons) are rings on their own (closed exactly), open ones (lines,
    arcs, curves: KiCad draws outlines as loose pieces) are joined by :func:`chain`."""
    rings: list[np.ndarray] = []
    open_: list[Sequence[Point]] = []
    for pts, closed in paths:
        if closed:
            ring = list(pts)
            if ring and tuple(ring[0]) != tuple(ring[-1]):
                ring.append(ring[0])
            rings.append(np.asarray(ring, dtype=np.float64).reshape(-1, 2))
        elif len(pts) >= 2:
            open_.append(pts)
    return tuple(rings + chain(open_, eps))


# ---------------------------------------------------------------------------------------------
# areas and holes
# ---------------------------------------------------------------------------------------------


def signed_area(ring: Any) -> float:
    """Shoelace area of a ring (mm²), positive when it runs towards increasing ``atan2`` angle
    (counter-clockwise in a y-up frame, clockwise on a y-down screen).  The ring may or may not
    repeat its first point; bridged holes (see :func:`bridge_holes`) subtract themselves."""
    a = np.asarray(ring, dtype=np.float64).reshape(-1, 2)
    if len(a) < 3:
        return 0.0
    # Relative to the first vertex (the closing term is then zero): the products stay small,
    # so a 10⁵-vertex plane 200 mm from the origin keeps ~1e-12 relative accuracy instead of
    # cancelling 4·10⁴-sized terms.  Not ``np.dot``: on strided columns it goes to a threaded
    # BLAS ddot, whose threads cost far more than the arithmetic on a busy machine and whose result
    # depends on the BLAS thread count.
    x = a[:, 0] - a[0, 0]
    y = a[:, 1] - a[0, 1]
    return float(np.sum(x[:-1] * y[1:] - x[1:] * y[:-1])) / 2.0


def ring_area(ring: Any) -> float:
    """Unsigned :func:`signed_area`."""
    return abs(signed_area(ring))


def bridge_holes(outer: np.ndarray, holes: Sequence[np.ndarray]) -> np.ndarray:
    """One ring: ``outer`` with each hole spliced in by a zero-width bridge, the way KiCad
    writes zone fills ("fractured" polygons), so a shoelace sum over the ring is the copper
    area (outline minus holes) and ``shapely.buffer(ring, 0)`` gives the polygon with holes.

    The holes are turned against the outer ring and each is bridged from its first vertex to
    the nearest vertex of the outer ring (found for all holes at once with a shapely STRtree,
    so a plane with thousands of anti-pads costs O((n + h) log n), not O(n·h)).
    """
    outer = np.asarray(outer, dtype=np.float64).reshape(-1, 2)
    keep = [np.asarray(h, dtype=np.float64).reshape(-1, 2) for h in holes]
    keep = [h for h in keep if len(h) >= 3]
    if not keep or len(outer) < 3:
        return outer
    ring = outer if signed_area(outer) >= 0 else outer[::-1]
    # every hole's signed area in one pass (a plane can have thousands of anti-pads)
    flat = np.concatenate(keep)
    starts = np.cumsum([0] + [len(h) for h in keep[:-1]])
    nxt = np.arange(1, len(flat) + 1)
    nxt[np.append(starts[1:], len(flat)) - 1] = starts  # each hole's last point wraps to its first
    cross = flat[:, 0] * flat[nxt, 1] - flat[:, 1] * flat[nxt, 0]
    areas = np.add.reduceat(cross, starts)
    keep = [h if a < 0 else h[::-1] for h, a in zip(keep, areas.tolist())]
    firsts = np.array([h[0] for h in keep])
    if len(ring) * len(keep) <= 1 << 16:
        d = ((firsts[:, None, :] - ring[None, :, :]) ** 2).sum(axis=2)
        at = np.argmin(d, axis=1)
    else:
        import shapely

        tree = shapely.STRtree(shapely.points(ring))
        got = tree.query_nearest(shapely.points(firsts), return_distance=False, all_matches=False)
        at = np.empty(len(keep), dtype=np.int64)
        at[got[0]] = got[1]
    parts: list[np.ndarray] = []
    prev = 0
    for k in np.argsort(at, kind="stable").tolist():
        i = int(at[k])
        h = keep[k]
        parts.append(ring[prev : i + 1])
        parts.append(h)
        parts.append(h[:1])
        prev = i
    parts.append(ring[prev:])
    return np.concatenate(parts)


# ---------------------------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------------------------


def segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from points ``p`` to segments ``a``–``b`` (arrays whose last axis is x, y,
    broadcast against each other: row-wise pairs, or ``p[:, None]`` against ``a[None]`` for a
    distance matrix).  A zero-length segment is its point."""
    ab = b - a
    ap = p - a
    den = (ab * ab).sum(axis=-1)
    t = np.where(den > 0, (ap * ab).sum(axis=-1) / np.where(den > 0, den, 1.0), 0.0)
    q = a + ab * np.clip(t, 0.0, 1.0)[..., None]
    d = p - q
    return np.hypot(d[..., 0], d[..., 1])


def arc_distance(p: np.ndarray, s: np.ndarray, m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Distance from points ``p`` to the arcs start ``s`` – mid ``m`` – end ``e`` (row-wise,
    each ``(n, 2)``); an arc whose points are collinear is measured as the segment ``s``–``e``."""
    c, r = circles_through(s, m, e)
    out = np.minimum(np.hypot(*(p - s).T), np.hypot(*(p - e).T))
    ok = ~np.isnan(r)
    if not ok.any():
        return segment_distance(p, s, e)

    def ang(v: np.ndarray) -> np.ndarray:
        return np.arctan2(v[:, 1], v[:, 0])

    a0 = ang(s - c)
    sweep_m = np.mod(ang(m - c) - a0, _TWO_PI)
    sweep_e = np.mod(ang(e - c) - a0, _TWO_PI)
    sweep_p = np.mod(ang(p - c) - a0, _TWO_PI)
    ccw = sweep_m <= sweep_e  # the mid point lies on the way from start to end going +angle
    inside = np.where(ccw, sweep_p <= sweep_e, sweep_p >= sweep_e)
    radial = np.abs(np.hypot(*(p - c).T) - r)
    arc = np.where(inside, np.minimum(radial, out), out)
    return np.where(ok, arc, segment_distance(p, s, e))


def fill_polygons(rings: Sequence[np.ndarray]) -> list[Any]:
    """One prepared polygon per fill ring, each as ``shapely.polygons(ring)`` makes it (a
    ring not closed gets its first point again at the end), built in one call from the
    rings' coordinates end to end.  Ring by ring, shapely builds each ring and then copies it
    into its polygon: 7-12 ms for vme-wren's 590k fill vertices, against about 4 ms.  Rings
    of which one is too short to close into four points are built ring by ring, as before
    (whatever shapely makes of such a ring)."""
    import shapely

    closed = [r if len(r) and np.array_equal(r[0], r[-1]) else np.vstack([r, r[:1]]) for r in rings]
    if not closed or any(len(r) < 4 for r in closed):
        got = [shapely.polygons(r) for r in rings]
    else:
        ends = np.cumsum([0] + [len(r) for r in closed])
        got = list(
            shapely.from_ragged_array(
                shapely.GeometryType.POLYGON,
                np.ascontiguousarray(np.concatenate(closed)),  # GEOS reads it row by row
                (ends, np.arange(len(closed) + 1)),
            )
        )
    shapely.prepare(got)
    return got
