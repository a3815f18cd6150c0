"""Footprint placement and graphic copper for the KiCad reader: a footprint's transform
(KiCad's rotation sense, exact at right angles), nanometre rounding where KiCad keeps integers
(so sizes match pcbnew exactly), and the shapely copper of one parsed graphic node (board
copper graphics, custom pad primitives).  The geometry itself (arcs, arc boxes, outline
chaining) is :mod:`accel_drc.geometry`; :mod:`.kicad_file` decides which nodes to read."""

from __future__ import annotations

import math
from typing import Any

from ..geometry import arc_points, bezier_points, circle_points


def to_nm(mm: float) -> int:
    return int(round(mm * 1e6))


def graphic_geometry(node: list, in_pad: bool = False) -> Any:
    """The copper of one parsed graphic node (``["gr_line", ["start", x, y], …]``) as a shapely
    geometry: lines, arcs and curves their stroke wide; polygons filled unless ``(fill none|no)``;
    circles and rectangles filled when ``(fill yes|solid)`` (in a custom pad's primitives also
    when their stroke is 0, KiCad's filled primitive), else their outline band.  None when it
    has no area."""
    import shapely

    kind, pts, width, fill, ring, _layer = graphic_fields(node)
    numbers = [width, *(v for q in pts.values() for v in q), *(v for q in ring for v in q)]
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError("a coordinate or width is not a finite number")
    half = max(width, 0.0) / 2.0
    if fill is None:
        fill = kind == "poly" or (in_pad and half == 0)
    geom = None
    if kind in ("line", "arc", "curve"):
        if kind == "line" and {"start", "end"} <= pts.keys():
            line = [pts["start"], pts["end"]]
        elif kind == "arc" and {"start", "mid", "end"} <= pts.keys():
            line = arc_points(pts["start"], pts["mid"], pts["end"])
        else:
            line = bezier_points(ring) if len(ring) >= 4 else []
        if len(line) >= 2 and half > 0:
            geom = shapely.LineString(line).buffer(half, quad_segs=8)
    else:
        if kind == "circle" and {"center", "end"} <= pts.keys():
            c = pts["center"]
            ring = circle_points(c, math.dist(c, pts["end"]))
        elif kind == "rect" and {"start", "end"} <= pts.keys():
            (ax, ay), (bx, by) = pts["start"], pts["end"]
            ring = [(ax, ay), (bx, ay), (bx, by), (ax, by)]
        elif kind != "poly":
            ring = []
        if len(ring) >= 3:
            if fill:
                geom = shapely.Polygon(ring).buffer(half, quad_segs=8)
            elif half > 0:
                geom = shapely.LinearRing(ring).buffer(half, quad_segs=8)
    if geom is None or geom.is_empty or geom.area <= 0:
        return None
    return geom


class Transform:
    """Footprint placement: rotate by ``deg`` (KiCad's sense, y down) then move to (x, y)."""

    __slots__ = ("x", "y", "deg", "c", "s")

    def __init__(self, x: float = 0.0, y: float = 0.0, deg: float = 0.0) -> None:
        self.x, self.y, self.deg = x, y, deg
        d = deg % 360.0
        exact = {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}
        self.c, self.s = exact.get(d) or (math.cos(math.radians(d)), math.sin(math.radians(d)))

    def apply(self, px: float, py: float) -> tuple[float, float]:
        # KiCad RotatePoint: x' = x cos + y sin ; y' = -x sin + y cos
        return (self.x + px * self.c + py * self.s, self.y - px * self.s + py * self.c)


IDENTITY = Transform()


def graphic_fields(
    node: list[Any],
) -> tuple[str, dict[str, tuple[float, float]], float, bool | None, list[tuple[float, float]], str]:
    """The fields of one parsed graphic node (``["gr_line", ["start", x, y], …]``): its kind
    (``line``, ``arc``, ``circle``, ``rect``, ``poly``, ``curve``), its named points (start, end,
    mid, center, in the node's own frame), the stroke width (mm), ``(fill …)`` (None when not
    stated), the ``(pts …)`` ring and the layer name.  One reader for the copper graphics and the
    Edge.Cuts outline."""
    kind = str(node[0])[3:]
    pts: dict[str, tuple[float, float]] = {}
    ring: list[tuple[float, float]] = []
    width, fill, layer = 0.0, None, ""
    for part in node[1:]:
        if not isinstance(part, list) or not part:
            continue
        key = part[0]
        if key in ("start", "end", "mid", "center") and len(part) >= 3:
            pts[key] = (float(part[1]), float(part[2]))
        elif key == "width" and len(part) > 1:
            width = float(part[1])
        elif key == "stroke":
            for sub in part[1:]:
                if isinstance(sub, list) and sub and sub[0] == "width" and len(sub) > 1:
                    width = float(sub[1])
        elif key == "fill" and len(part) > 1:
            fill = str(part[1]) in ("yes", "solid")
        elif key == "layer" and len(part) > 1:
            layer = str(part[1])
        elif key == "pts":
            ring = [
                (float(q[1]), float(q[2]))
                for q in part[1:]
                if isinstance(q, list) and q and q[0] == "xy" and len(q) >= 3
            ]
    return kind, pts, width, fill, ring, layer
