"""The copper pads as the via table sees them: one columnar table of each pad's shape, position,
rotation, net, layers and drill (for the via-in-pad and plated-through-hole tests), with the
distance from a pad's copper to points and segments, the pads that overlap, and shapely
geometries of pads and tracks for the zone and touching tests.  A custom pad's copper is its
own outline (shapely, placed on the board by ``_custom_pads``): its distances, bound and shape
come from that outline, not from its anchor's rectangle.  The connectivity graph
(connectivity.py) reads the same table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..arrays import isin
from ..geometry import circles_through, segment_distance
from ..model import Board
from .spatial_join import near_pairs

EPS_MM = 1e-3


# ---------------------------------------------------------------------------------------------
# pads
# ---------------------------------------------------------------------------------------------


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise z of (a - o) x (b - o)."""
    return (a[:, 0] - o[:, 0]) * (b[:, 1] - o[:, 1]) - (a[:, 1] - o[:, 1]) * (b[:, 0] - o[:, 0])


def _seg_seg(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Row-wise distance between segments ``a``-``b`` and ``c``-``d`` (0 where they cross)."""
    dist = np.minimum(
        np.minimum(segment_distance(a, c, d), segment_distance(b, c, d)),
        np.minimum(segment_distance(c, a, b), segment_distance(d, a, b)),
    )
    d1, d2 = _cross(c, d, a), _cross(c, d, b)
    d3, d4 = _cross(a, b, c), _cross(a, b, d)
    return np.where((d1 * d2 < 0) & (d3 * d4 < 0), 0.0, dist)


def _clips_box(a: np.ndarray, b: np.ndarray, hw: np.ndarray, hh: np.ndarray) -> np.ndarray:
    """Whether segment ``a``-``b`` enters the box ``|x| <= hw, |y| <= hh`` (Liang-Barsky)."""
    t0 = np.zeros(len(a))
    t1 = np.ones(len(a))
    ok = np.ones(len(a), bool)
    d = b - a
    for p, q in ((-d[:, 0], a[:, 0] + hw), (d[:, 0], hw - a[:, 0]),
                 (-d[:, 1], a[:, 1] + hh), (d[:, 1], hh - a[:, 1])):  # fmt: skip
        par = p == 0
        ok &= ~(par & (q < 0))
        t = np.where(par, 0.0, q / np.where(par, 1.0, p))
        t0 = np.where(~par & (p < 0), np.maximum(t0, t), t0)
        t1 = np.where(~par & (p > 0), np.minimum(t1, t), t1)
    return ok & (t0 <= t1)


@dataclass(frozen=True, eq=False)
class PadTable:
    """All copper pads as columns (for the via-in-pad and PTH tests)."""

    xy: np.ndarray  # (n, 2)
    w: np.ndarray
    h: np.ndarray
    rot: np.ndarray  # degrees, CCW as shown (board y down)
    shape: np.ndarray  # 0 rect-like, 1 circle, 2 oval
    net: np.ndarray
    layers: np.ndarray  # (n, L) bool
    pth: np.ndarray  # plated through hole with a drill
    drill: np.ndarray  # mm, NaN if none
    fp_side: np.ndarray  # copper index of the footprint's side (0 or L-1)
    ref: tuple[str, ...]
    uuid: tuple[str, ...]
    #: custom pads' copper in board coordinates (shapely; None for every other pad), and the
    #: rows that have one: their distances and shapes come from it, not from the rectangle
    custom: tuple[Any, ...] = ()
    custom_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def from_board(cls, board: Board) -> PadTable:
        n_layers = board.layer_count
        rows = [(fp, pad) for fp, pad in board.pads if pad.copper_layers]
        n = len(rows)
        xy = np.zeros((n, 2))
        w = np.zeros(n)
        h = np.zeros(n)
        rot = np.zeros(n)
        shape = np.zeros(n, np.int8)
        net = np.zeros(n, np.int64)
        layers = np.zeros((n, n_layers), bool)
        pth = np.zeros(n, bool)
        drill = np.full(n, np.nan)
        side = np.zeros(n, np.int64)
        refs = []
        uuids = []
        custom_local: dict[int, tuple[np.ndarray, ...]] = {}
        for i, (fp, pad) in enumerate(rows):
            if pad.custom:
                custom_local[i] = pad.custom
            xy[i] = (pad.x, pad.y)
            w[i] = pad.width
            h[i] = pad.height
            rot[i] = pad.rotation
            shape[i] = 1 if pad.shape == "circle" else 2 if pad.shape == "oval" else 0
            net[i] = pad.net
            for li in pad.copper_layers:
                if 0 <= li < n_layers:
                    layers[i, li] = True
            pth[i] = pad.type == "thru_hole" and bool(pad.drill_mm)
            if pad.drill_mm:
                drill[i] = pad.drill_mm
            side[i] = n_layers - 1 if fp.layer == "B.Cu" else 0
            refs.append(f"{fp.reference}.{pad.number}")
            uuids.append(pad.uuid)
        custom, custom_rows = _custom_pads(custom_local, xy, rot, n)
        return cls(xy, w, h, rot, shape, net, layers, pth, drill, side, tuple(refs), tuple(uuids),
                   custom, custom_rows)  # fmt: skip

    def __len__(self) -> int:
        return int(self.w.shape[0])

    @property
    def bound_radius(self) -> np.ndarray:
        """Radius round each pad's centre that holds all its copper (a custom pad's outline may
        reach beyond its anchor's size)."""
        r = np.hypot(self.w, self.h) / 2.0
        if len(self.custom_rows):
            import shapely

            r = r.copy()
            for i in self.custom_rows.tolist():
                ring = shapely.get_coordinates(self.custom[i])
                r[i] = max(r[i], float(np.hypot(*(ring - self.xy[i]).T).max()))
        return r

    def _custom_of(self, pad_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions into ``pad_idx``, their custom geometries) of the custom pads in it."""
        if not len(self.custom_rows):
            return np.zeros(0, np.int64), np.zeros(0, object)
        k = np.flatnonzero(isin(pad_idx, self.custom_rows))
        return k, np.array([self.custom[i] for i in np.asarray(pad_idx)[k].tolist()], object)

    def distance(self, pad_idx: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """Distance from point ``pts[k]`` to the copper of pad ``pad_idx[k]`` (0 inside).
        Rect, circle and oval exactly; round-rect, trapezoid and custom pads by their
        rectangle (a slight over-reach at rounded corners)."""
        d = pts - self.xy[pad_idx]
        a = np.radians(self.rot[pad_idx])
        c, s = np.cos(a), np.sin(a)
        lx = np.abs(c * d[:, 0] - s * d[:, 1])
        ly = np.abs(s * d[:, 0] + c * d[:, 1])
        hw = self.w[pad_idx] / 2.0
        hh = self.h[pad_idx] / 2.0
        shp = self.shape[pad_idx]
        rect = np.hypot(np.maximum(lx - hw, 0.0), np.maximum(ly - hh, 0.0))
        circ = np.maximum(np.hypot(lx, ly) - hw, 0.0)
        # oval (stadium): distance to the centre segment minus half the short side
        r = np.minimum(hw, hh)
        qx = np.maximum(lx - np.maximum(hw - r, 0.0), 0.0)
        qy = np.maximum(ly - np.maximum(hh - r, 0.0), 0.0)
        oval = np.maximum(np.hypot(qx, qy) - r, 0.0)
        out = np.where(shp == 1, circ, np.where(shp == 2, oval, rect))
        k, geo = self._custom_of(pad_idx)
        if len(k):
            import shapely

            out[k] = shapely.distance(geo, shapely.points(np.asarray(pts, float)[k]))
        return out

    def segment_distance(self, pad_idx: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Distance from segment ``a[k]``-``b[k]`` to the copper of pad ``pad_idx[k]`` (0 where
        they overlap): a track whose body crosses a pad (a flow-through ESD array, a track
        routed over a pad to the next one) touches it, as in KiCad's connectivity, which
        collides the track's whole shape with the pad's.  Same shapes as :meth:`distance`."""
        pad_idx = np.asarray(pad_idx, dtype=np.int64)
        a = np.asarray(a, float).reshape(-1, 2)
        b = np.asarray(b, float).reshape(-1, 2)
        ang = np.radians(self.rot[pad_idx])
        c, s = np.cos(ang), np.sin(ang)

        def local(p: np.ndarray) -> np.ndarray:
            d = p - self.xy[pad_idx]
            return np.stack([c * d[:, 0] - s * d[:, 1], s * d[:, 0] + c * d[:, 1]], -1)

        la, lb = local(a), local(b)
        hw = self.w[pad_idx] / 2.0
        hh = self.h[pad_idx] / 2.0
        shp = self.shape[pad_idx]
        # circle and oval: the distance to their core segment (a point for a circle) less r
        r = np.where(shp == 1, hw, np.minimum(hw, hh))
        ex = np.where(shp == 1, 0.0, np.maximum(hw - r, 0.0))
        ey = np.where(shp == 1, 0.0, np.maximum(hh - r, 0.0))
        core = _seg_seg(la, lb, np.stack([-ex, -ey], -1), np.stack([ex, ey], -1))
        # rectangle: 0 if the segment enters it (Liang-Barsky clip), else the least of its
        # ends' distances to the box and the corners' distances to the segment
        box = np.minimum(self.distance(pad_idx, a), self.distance(pad_idx, b))
        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            corner = np.stack([sx * hw, sy * hh], -1)
            box = np.minimum(box, segment_distance(corner, la, lb))
        box = np.where(_clips_box(la, lb, hw, hh), 0.0, box)
        out = np.where(shp == 0, box, np.maximum(core - r, 0.0))
        k, geo = self._custom_of(pad_idx)
        if len(k):
            import shapely

            out[k] = shapely.distance(geo, shapely.linestrings(np.stack([a[k], b[k]], 1)))
        return out

    def overlapping_pairs(
        self, pad_idx: np.ndarray, key: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(i, j) positions into ``pad_idx`` (i < j, same ``key``, a copper layer in common) of
        pads whose copper touches: KiCad joins two pads of a net that overlap (alternative
        footprints at one place, a pad inside a pad)."""
        import shapely

        pad_idx = np.asarray(pad_idx, dtype=np.int64)
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if len(pad_idx) < 2:
            return empty
        br = self.bound_radius[pad_idx]
        xy = self.xy[pad_idx]
        qa, qb = near_pairs(xy, key, br + float(br.max()) + 2 * EPS_MM, xy, key)
        keep = qa < qb
        qa, qb = qa[keep], qb[keep]
        keep = np.hypot(*(xy[qa] - xy[qb]).T) <= br[qa] + br[qb] + EPS_MM
        keep &= (self.layers[pad_idx[qa]] & self.layers[pad_idx[qb]]).any(axis=1)
        qa, qb = qa[keep], qb[keep]
        if not len(qa):
            return empty
        geo = self.geometries(pad_idx)
        touch = np.asarray(shapely.dwithin(geo[qa], geo[qb], EPS_MM), dtype=bool)
        return qa[touch], qb[touch]

    def contains(self, pad_idx: np.ndarray, pts: np.ndarray, tol: float = EPS_MM) -> np.ndarray:
        """Whether point ``pts[k]`` lies in pad ``pad_idx[k]``."""
        return self.distance(pad_idx, pts) <= tol

    def geometries(self, pad_idx: np.ndarray) -> np.ndarray:
        """shapely geometries of the pads (circle 64-gon, rotated rectangle, stadium)."""
        import shapely

        pad_idx = np.asarray(pad_idx, dtype=np.int64)
        out = np.empty(len(pad_idx), dtype=object)
        if not len(pad_idx):
            return out
        a = np.radians(self.rot[pad_idx])
        c, s = np.cos(a), np.sin(a)
        hw = self.w[pad_idx] / 2.0
        hh = self.h[pad_idx] / 2.0
        cx, cy = self.xy[pad_idx, 0], self.xy[pad_idx, 1]

        def to_board(
            lx: np.ndarray, ly: np.ndarray, k: np.ndarray
        ) -> tuple[np.ndarray, np.ndarray]:
            # inverse of distance(): board offset = R(θ)·local in the y-down frame
            return cx[k] + c[k] * lx + s[k] * ly, cy[k] - s[k] * lx + c[k] * ly

        shp = self.shape[pad_idx]
        circ = shp == 1
        if circ.any():
            out[circ] = shapely.buffer(shapely.points(cx[circ], cy[circ]), hw[circ], quad_segs=16)
        oval = shp == 2
        if oval.any():
            r = np.minimum(hw, hh)[oval]
            ex = np.maximum(hw[oval] - r, 0.0)
            ey = np.maximum(hh[oval] - r, 0.0)
            x0, y0 = to_board(-ex, -ey, oval)
            x1, y1 = to_board(ex, ey, oval)
            lines = shapely.linestrings(
                np.stack([np.stack([x0, y0], -1), np.stack([x1, y1], -1)], 1)
            )
            out[oval] = shapely.buffer(lines, r, quad_segs=16)
        rect = ~(circ | oval)
        if rect.any():
            corners = []
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                x, y = to_board(sx * hw[rect], sy * hh[rect], rect)
                corners.append(np.stack([x, y], -1))
            out[rect] = shapely.polygons(np.stack(corners, 1))
        k, geo = self._custom_of(pad_idx)
        if len(k):
            out[k] = geo
        return out


def _custom_pads(
    local: dict[int, tuple[np.ndarray, ...]], xy: np.ndarray, rot: np.ndarray, n: int
) -> tuple[tuple[Any, ...], np.ndarray]:
    """Custom pads' copper placed on the board (their rings are in the pad's own frame: rotated
    by the pad's angle, as :meth:`PadTable.geometries` places a rectangle's corners, then moved
    to the pad) and the rows that have one; ``((), [])`` on a board without custom pads."""
    if not local:
        return (), np.zeros(0, np.int64)
    import shapely

    out: list[Any] = [None] * n
    for i, rings in local.items():
        a = np.radians(rot[i])
        c, s = np.cos(a), np.sin(a)
        polys = []
        for ring in rings:
            lx, ly = ring[:, 0], ring[:, 1]
            polys.append(
                shapely.Polygon(
                    np.stack([xy[i, 0] + c * lx + s * ly, xy[i, 1] - s * lx + c * ly], -1)
                )
            )
        out[i] = shapely.union_all(polys)
    return tuple(out), np.asarray(sorted(local), np.int64)


def shapely_dwithin(a: np.ndarray, b: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """``shapely.dwithin`` on object arrays (pairs row-wise)."""
    import shapely

    return np.asarray(shapely.dwithin(a, b, dist), dtype=bool)


def track_lines(tracks: Any, idx: np.ndarray) -> np.ndarray:
    """shapely LineStrings of tracks ``idx`` (arcs as 16-segment polylines)."""
    import shapely

    s = tracks.start[idx]
    e = tracks.end[idx]
    m = tracks.mid[idx]
    coords = np.repeat(s[:, None, :], 17, axis=1)
    t = np.linspace(0.0, 1.0, 17)
    coords = s[:, None, :] + (e - s)[:, None, :] * t[None, :, None]
    arc = ~np.isnan(m[:, 0])
    if arc.any():
        c, r = circles_through(s[arc], m[arc], e[arc])
        good = ~np.isnan(r)
        a0 = np.arctan2(s[arc, 1] - c[:, 1], s[arc, 0] - c[:, 0])
        am = np.mod(np.arctan2(m[arc, 1] - c[:, 1], m[arc, 0] - c[:, 0]) - a0, 2 * np.pi)
        ae = np.mod(np.arctan2(e[arc, 1] - c[:, 1], e[arc, 0] - c[:, 0]) - a0, 2 * np.pi)
        sweep = np.where(am <= ae, ae, ae - 2 * np.pi)
        ang = a0[:, None] + sweep[:, None] * t[None, :]
        pts = np.stack(
            [c[:, 0:1] + r[:, None] * np.cos(ang), c[:, 1:2] + r[:, None] * np.sin(ang)], -1
        )
        sub = coords[arc]
        sub[good] = pts[good]
        coords[arc] = sub
    return shapely.linestrings(coords)
