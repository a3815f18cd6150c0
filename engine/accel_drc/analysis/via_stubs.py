"""Where each via really connects, and how long its unused barrel (the stub) is.

A via's barrel runs from its start layer to its end layer whatever the routing does; the part
beyond the last layer the signal uses is an open-ended transmission line that resonates at a
quarter wave (Bogatin's stub rule of thumb).  To know the stub we must know which layers the net *really*
connects on, which KiCad itself decides geometrically (connectivity anchors):

* a track or arc **end** inside the via's pad (KiCad hit-tests track anchors, not their width);
* a pad of the same net whose copper contains the via centre (via-in-pad), on the pad's layers;
* a filled zone of the same net on that layer that touches the via's pad disc (KiCad collides
  the via's whole shape with the fill, so a thermal spoke counts as a connection);
* another via of the same net whose copper touches this one's on a layer both span, when that
  via has a real connection there or carries the signal to a layer this one does not reach
  (stacked vias); a via whose unused pads are removed has only its hole on a layer where nothing
  connects (see ``_connect_touching_vias``).

Plated through-hole pads are treated the same way (their lead is soldered on the footprint's
own side, so that layer counts as connected too).

Boards have 100k+ vias and 1M+ segments, so nothing here is O(vias × tracks): track ends are
joined to vias by sorting on a (net, grid cell) key and reading the 3×3 neighbouring cells with
``searchsorted``; zones go through one shapely STRtree with prepared polygons.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..concurrency import Background, workers
from ..config import BackdrillSpec, ProjectConfig, as_config
from ..geometry import arc_distance, circles_through, segment_distance
from ..model import Backdrill, Board

if TYPE_CHECKING:
    from . import Analysis
    from .signals import SignalAssignment

log = logging.getLogger(__name__)

#: speed of light in vacuum (m/s)
C0 = 299_792_458.0
MM_PER_MIL = 0.0254
#: tolerance (mm) on "touches": KiCad works in nm, fills approximate arcs
_EPS_MM = 1e-3


# ---------------------------------------------------------------------------------------------
# stack-up geometry
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StackGeometry:
    """The copper/dielectric column along a barrel, as prefix sums over segments.

    Segments in z order: ``Cu0, D0, Cu1, D1, …, Cu(n-1)`` (segment ``2i`` is copper layer ``i``,
    ``2i+1`` the dielectric(s) between copper ``i`` and ``i+1``, sublayers summed).  Any length
    over a segment range is a difference of prefix sums; a range crossing an undeclared
    thickness is unknown (NaN), not zero.
    """

    n_layers: int
    thickness: np.ndarray  # (2n-1,) mm, NaN = undeclared
    eps_t: np.ndarray  # (2n-1,) Σ εr·t over dielectric sublayers (0 for copper), NaN = unknown εr
    diel_t: np.ndarray  # (2n-1,) dielectric thickness (0 for copper)

    @classmethod
    def from_board(cls, board: Board) -> StackGeometry:
        n = board.layer_count
        seg = 2 * n - 1
        thickness = np.full(seg, np.nan)
        eps_t = np.zeros(seg)
        diel_t = np.zeros(seg)
        st = board.stackup
        if st is None or len(st.copper()) != n:
            eps_t[:] = np.nan
            return cls(n, thickness, eps_t, diel_t)
        for layer in st.copper():
            idx = layer.copper_index
            if idx is None or not 0 <= idx < n:
                continue
            if layer.thickness_mm is not None:
                thickness[2 * idx] = layer.thickness_mm
        for i in range(n - 1):
            diels = st.dielectrics_between(i, i + 1)
            if not diels:
                eps_t[2 * i + 1] = np.nan
                continue
            t_sum = 0.0
            et_sum = 0.0
            for d in diels:
                subs = d.sublayers or ()
                slices = [(s.thickness_mm, s.epsilon_r) for s in subs] or [
                    (d.thickness_mm, d.epsilon_r)
                ]
                if len(subs) > 0 and any(s.thickness_mm is None for s in subs):
                    # sublayer thicknesses missing: fall back to the layer's total
                    slices = [(d.thickness_mm, d.epsilon_r)]
                for t, er in slices:
                    if t is None:
                        t_sum = math.nan
                    else:
                        t_sum += t
                        et_sum += math.nan if er is None else er * t
            thickness[2 * i + 1] = t_sum
            diel_t[2 * i + 1] = 0.0 if math.isnan(t_sum) else t_sum
            eps_t[2 * i + 1] = et_sum
        return cls(n, thickness, eps_t, diel_t)

    @functools.cached_property
    def _prefixes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Prefix sums of thickness, undeclared-count, εr·t, unknown-εr count and dielectric
        thickness (computed once per geometry: the remedies of 10k violating vias ask for
        spans one at a time, and rebuilding five arrays per ask was most of their cost)."""

        def pre(a: np.ndarray) -> np.ndarray:
            return np.concatenate(([0.0], np.cumsum(a)))

        return (
            pre(np.nan_to_num(self.thickness, nan=0.0)),
            pre(np.isnan(self.thickness).astype(float)),
            pre(np.nan_to_num(self.eps_t, nan=0.0)),
            pre(np.isnan(self.eps_t).astype(float)),
            pre(self.diel_t),
        )

    def _prefix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._prefixes

    @functools.cached_property
    def _prefix_lists(self) -> tuple[list[float], ...]:
        return tuple(a.tolist() for a in self._prefixes)

    def span(self, lo: int, hi: int) -> tuple[float, float]:
        """``(length, eps_eff)`` of segments ``lo .. hi-1`` as Python floats: the scalar twin of
        :meth:`length` and :meth:`eps_eff` (the same prefix differences, bit for bit), for
        per-via callers where building one-element arrays costs more than the arithmetic."""
        p_t, p_nan, p_et, p_enan, p_d = self._prefix_lists
        hi = max(hi, lo)
        length = math.nan if p_nan[hi] - p_nan[lo] > 0 else p_t[hi] - p_t[lo]
        d = p_d[hi] - p_d[lo]
        if d <= 0 or p_enan[hi] - p_enan[lo] > 0:
            return length, math.nan
        return length, (p_et[hi] - p_et[lo]) / d

    def length(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Σ thickness of segments ``lo .. hi-1`` (vectorised; NaN if any is undeclared)."""
        p_t, p_nan, _, _, _ = self._prefixes
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.maximum(np.asarray(hi, dtype=np.int64), lo)
        out = p_t[hi] - p_t[lo]
        out[(p_nan[hi] - p_nan[lo]) > 0] = np.nan
        return out

    def eps_eff(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Thickness-weighted εr of the dielectrics in segments ``lo .. hi-1`` (NaN if none or
        unknown)."""
        _, _, p_et, p_enan, p_d = self._prefixes
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.maximum(np.asarray(hi, dtype=np.int64), lo)
        d = p_d[hi] - p_d[lo]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (p_et[hi] - p_et[lo]) / d
        out[(d <= 0) | ((p_enan[hi] - p_enan[lo]) > 0)] = np.nan
        return out

    # positions of faces, for tests and docs
    def top_face(self, i: int) -> float:
        return float(self.length(np.array([0]), np.array([2 * i]))[0])

    def bottom_face(self, i: int) -> float:
        return float(self.length(np.array([0]), np.array([2 * i + 1]))[0])


def resonance_hz(stub_mm: np.ndarray | float, eps_eff: np.ndarray | float) -> np.ndarray:
    """Quarter-wave resonance of an open stub: f = c / (4 · L · √εeff).  0 length → inf."""
    stub = np.asarray(stub_mm, dtype=float)
    eps = np.asarray(eps_eff, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return C0 / (4.0 * stub * 1e-3 * np.sqrt(eps))


# ---------------------------------------------------------------------------------------------
# spatial join: points of the same net near query discs, by sorting (net, cell) keys
# ---------------------------------------------------------------------------------------------


def _column_min(xy: np.ndarray) -> np.ndarray:
    """``xy.min(axis=0)`` of an (n, 2) array, one contiguous column at a time: numpy reduces
    a C-ordered (n, 2) array along axis 0 with a strided inner loop, 25× slower (52 ms vs 2 ms
    on 1.9 M points); the minimum is exact either way."""
    return np.array([xy[:, 0].min(), xy[:, 1].min()])


def _column_max(xy: np.ndarray) -> np.ndarray:
    """``xy.max(axis=0)`` of an (n, 2) array (see :func:`_column_min`)."""
    return np.array([xy[:, 0].max(), xy[:, 1].max()])


#: :func:`near_pairs` pre-filters its queries with :func:`_box_holds_any` from this many on,
#: when they outnumber the targets this many times
_SAT_MIN_QUERIES = 20000
_SAT_RATIO = 8
#: cells of the target-count grid along the longer side at most (256: a 260 kB table, which
#: stays in cache for 2 M random look-ups; 1024 made them 3x slower for a finer filter)
_SAT_CELLS = 256


def _box_holds_any(q_xy: np.ndarray, q_rad: np.ndarray, t_xy: np.ndarray) -> np.ndarray:
    """Mask of the queries whose box ``[q - r, q + r]`` may hold a target: every query with a
    target within ``r`` is kept (a superset; :func:`near_pairs` then tests the distance).

    A grid of target counts (at most :data:`_SAT_CELLS` cells a side) as a summed-area table:
    a query's box covers the cells from ``floor((q - r - o) / c)`` to ``floor((q + r - o) / c)``,
    which hold every target inside the box (the same monotonic arithmetic maps a target to its
    cell), and four look-ups count them.  Linear, where the bucketed join sorts every query
    (346 MB synthetic board: 1.5 M signal tracks against 4,608 signal vias)."""
    lo = _column_min(t_xy)
    hi = _column_max(t_xy)
    cell = max(float((hi - lo).max()) / (_SAT_CELLS - 1), 1e-6)
    nx = int((hi[0] - lo[0]) / cell) + 2
    ny = int((hi[1] - lo[1]) / cell) + 2
    tx = np.floor((t_xy[:, 0] - lo[0]) / cell).astype(np.int64)
    ty = np.floor((t_xy[:, 1] - lo[1]) / cell).astype(np.int64)
    sat = np.zeros((nx + 1, ny + 1), np.int32)  # small: its look-ups stay in cache
    sat[1:, 1:] = np.bincount(tx * ny + ty, minlength=nx * ny).reshape(nx, ny)
    sat = sat.cumsum(axis=0).cumsum(axis=1)
    flat = sat.ravel()
    r = np.maximum(q_rad, 0.0)
    out: np.ndarray | None = None
    corners = []
    for k, n in ((0, nx), (1, ny)):
        c = q_xy[:, k]
        a = np.floor((c - r - lo[k]) / cell)
        b = np.floor((c + r - lo[k]) / cell)
        inside = (b >= 0) & (a < n)  # else the box misses the grid
        out = inside if out is None else out & inside
        np.clip(a, 0, n - 1, out=a)
        np.clip(b, 0, n - 1, out=b)
        corners.append((a.astype(np.int64), b.astype(np.int64) + 1))
    (x0, x1), (y0, y1) = corners
    x0 *= ny + 1  # row offsets in the flat table
    x1 *= ny + 1
    count = flat.take(x1 + y1)
    count -= flat.take(x0 + y1)
    count -= flat.take(x1 + y0)
    count += flat.take(x0 + y0)
    assert out is not None
    out &= count > 0
    return out


def near_pairs(
    q_xy: np.ndarray,
    q_net: np.ndarray,
    q_rad: np.ndarray,
    t_xy: np.ndarray,
    t_net: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """All (query, target) index pairs with the same net and ``|t - q| <= q_rad``.

    Targets are bucketed on a square grid keyed by (net, cx, cy) and sorted once; each query
    reads its 3×3 neighbourhood with ``searchsorted``.  Queries are grouped by radius (powers of
    two) so one large pad does not blow up the cell size for 100k small vias.
    """
    q_xy = np.asarray(q_xy, dtype=float).reshape(-1, 2)
    t_xy = np.asarray(t_xy, dtype=float).reshape(-1, 2)
    q_net = np.asarray(q_net, dtype=np.int64)
    t_net = np.asarray(t_net, dtype=np.int64)
    q_rad = np.asarray(q_rad, dtype=float)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if len(q_xy) == 0 or len(t_xy) == 0:
        return empty
    # only nets present on both sides matter
    lo_net = min(int(q_net.min()), int(t_net.min()))
    hi_net = max(int(q_net.max()), int(t_net.max()))
    if lo_net >= 0 and hi_net < (1 << 26):
        # a table over the net numbers: linear, where intersect1d / isin sort both sides
        in_q = np.zeros(hi_net + 1, bool)
        in_q[q_net] = True
        both = np.zeros(hi_net + 1, bool)
        both[t_net] = True
        both &= in_q
        if not both.any():
            return empty
        t_keep = np.flatnonzero(both[t_net])
        q_keep = np.flatnonzero(both[q_net] & (q_rad >= 0))
    else:
        common = np.intersect1d(np.unique(q_net), np.unique(t_net))
        if len(common) == 0:
            return empty
        t_keep = np.flatnonzero(np.isin(t_net, common))
        q_keep = np.flatnonzero(np.isin(q_net, common) & (q_rad >= 0))
    if len(t_keep) == 0 or len(q_keep) == 0:
        return empty
    if len(q_keep) >= _SAT_MIN_QUERIES and len(q_keep) > _SAT_RATIO * len(t_keep):
        # many queries, few targets (every signal track against the signal vias): first drop
        # the queries whose box holds no target at all, in O(1) each
        q_keep = q_keep[_box_holds_any(q_xy[q_keep], q_rad[q_keep], t_xy[t_keep])]
        if len(q_keep) == 0:
            return empty
    txy = t_xy[t_keep]
    tnet = t_net[t_keep]
    qxy = q_xy[q_keep]
    origin = np.minimum(_column_min(txy), _column_min(qxy)) - 1.0
    span = np.maximum(_column_max(txy), _column_max(qxy)) - origin + 1.0

    rad = np.maximum(q_rad[q_keep], 1e-3)
    group = np.ceil(np.log2(rad / 1e-3)).astype(np.int64)
    out_q: list[np.ndarray] = []
    out_t: list[np.ndarray] = []
    for g in np.unique(group):
        qi = q_keep[group == g]
        cell = float(np.maximum(q_rad[qi].max(), 1e-3))
        gx = int(span[0] / cell) + 3
        gy = int(span[1] / cell) + 3
        tc = np.floor((txy - origin) / cell).astype(np.int64)
        tkey = (tnet * gx + tc[:, 0]) * gy + tc[:, 1]
        order = np.argsort(tkey, kind="stable")
        skey = tkey[order]
        qc = np.floor((q_xy[qi] - origin) / cell).astype(np.int64)
        base = (q_net[qi] * gx + qc[:, 0]) * gy + qc[:, 1]
        # sorted needles: searchsorted is several times faster, and base + offset stays sorted
        qorder = np.argsort(base, kind="stable")
        base = base[qorder]
        qi = qi[qorder]
        for dx in (-1, 0, 1):
            # the cells dy = -1, 0, 1 of one column are consecutive keys, so their targets
            # are one run of the sorted keys: two searches per column, not six
            key = base + dx * gy
            lo = np.searchsorted(skey, key - 1, side="left")
            hi = np.searchsorted(skey, key + 1, side="right")
            cnt = hi - lo
            total = int(cnt.sum())
            if total == 0:
                continue
            rep_q = np.repeat(qi, cnt)
            offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            rep_t = t_keep[order[np.repeat(lo, cnt) + offs]]
            d = np.hypot(*(t_xy[rep_t] - q_xy[rep_q]).T)
            ok = d <= q_rad[rep_q]
            out_q.append(rep_q[ok])
            out_t.append(rep_t[ok])
    if not out_q:
        return empty
    return np.concatenate(out_q), np.concatenate(out_t)


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
        for i, (fp, pad) in enumerate(rows):
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
        return cls(xy, w, h, rot, shape, net, layers, pth, drill, side, tuple(refs), tuple(uuids))

    def __len__(self) -> int:
        return int(self.w.shape[0])

    @property
    def bound_radius(self) -> np.ndarray:
        return np.hypot(self.w, self.h) / 2.0

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
        return np.where(shp == 1, circ, np.where(shp == 2, oval, rect))

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
        return np.where(shp == 0, box, np.maximum(core - r, 0.0))

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
        qa, qb = near_pairs(xy, key, br + float(br.max()) + 2 * _EPS_MM, xy, key)
        keep = qa < qb
        qa, qb = qa[keep], qb[keep]
        keep = np.hypot(*(xy[qa] - xy[qb]).T) <= br[qa] + br[qb] + _EPS_MM
        keep &= (self.layers[pad_idx[qa]] & self.layers[pad_idx[qb]]).any(axis=1)
        qa, qb = qa[keep], qb[keep]
        if not len(qa):
            return empty
        geo = self.geometries(pad_idx)
        touch = np.asarray(shapely.dwithin(geo[qa], geo[qb], _EPS_MM), dtype=bool)
        return qa[touch], qb[touch]

    def contains(self, pad_idx: np.ndarray, pts: np.ndarray, tol: float = _EPS_MM) -> np.ndarray:
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
        return out


def shapely_dwithin(a: np.ndarray, b: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """``shapely.dwithin`` on object arrays (pairs row-wise)."""
    import shapely

    return np.asarray(shapely.dwithin(a, b, dist), dtype=bool)


def _track_lines(tracks: Any, idx: np.ndarray) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ViaStubs:
    """Per barrel (vias first, then plated through-hole pads), columnar."""

    layer_names: tuple[str, ...]
    xy: np.ndarray  # (n, 2)
    net: np.ndarray
    start: np.ndarray
    end: np.ndarray
    types: tuple[str, ...]  # through | blind | buried | micro | pth
    ref: tuple[str, ...]  # "" for vias, "J1.3" for pads
    uuid: tuple[str, ...]
    via_row: np.ndarray  # index into board.vias, -1 for pads
    connected: np.ndarray  # (n, L) bool
    top_stub_mm: np.ndarray  # NaN = unknown (no stack-up data, or unconnected barrel)
    bottom_stub_mm: np.ndarray
    stub_mm: np.ndarray
    eps_eff: np.ndarray  # εr of the dielectrics along the longer stub
    f_res_hz: np.ndarray  # inf for a zero stub
    backdrill: tuple[Backdrill | None, ...]
    backdrill_cuts: np.ndarray  # a backdrill that would cut a connected layer
    geometric_stub_mm: np.ndarray  # the stub before any backdrill
    stackup_known: bool
    notes: tuple[str, ...] = ()
    index_by_net: Mapping[int, np.ndarray] = field(default_factory=dict)
    #: the stack-up column the stubs were computed on (the remedies reuse it; None when built
    #: by hand, then they rebuild it from the board)
    geom: StackGeometry | None = None
    #: per-check-run memo of the remedies (see ``checks/via_stub``): vias of one shape on one
    #: net family get the same remedy, and the per-class re-runs ask again for the same ones
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    #: the nets whose barrels the table holds (None: every net; see :func:`compute`)
    nets: frozenset[int] | None = None

    def __len__(self) -> int:
        return int(self.net.shape[0])

    @property
    def via_count(self) -> int:
        return int((self.via_row >= 0).sum())

    def rows_for_nets(self, nets: Iterable[int]) -> np.ndarray:
        """Indexes of the barrels on any of ``nets`` (sorted).  A table computed for some nets
        only refuses any other (an empty answer there would read as "no via")."""
        nets = list(nets)
        if self.nets is not None:
            other = [n for n in nets if n not in self.nets and n > 0]
            if other:
                raise LookupError(
                    f"the via table was computed for {len(self.nets)} nets; net {other[0]} "
                    "is not one of them"
                )
        parts = [self.index_by_net[n] for n in nets if n in self.index_by_net]
        if not parts:
            return np.zeros(0, np.int64)
        return np.sort(np.concatenate(parts))

    def connected_names(self, i: int) -> list[str]:
        return [self.layer_names[j] for j in np.flatnonzero(self.connected[i])]


def _connect_zones(
    board: Board,
    xy: np.ndarray,
    net: np.ndarray,
    rad: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    connected: np.ndarray,
    shapes: np.ndarray | None = None,
    nets: np.ndarray | None = None,
) -> None:
    """Mark layers where a filled zone of the item's net touches its copper: the via's pad disc
    (centre ``xy``, radius ``rad``), or ``shapes[i]`` where given (PTH pads).  ``nets``: the
    net mask of :func:`find_connections` (a zone of another net touches none of the items)."""
    import shapely

    rings: list[np.ndarray] = []
    z_net: list[int] = []
    z_layer: list[int] = []
    for zone in board.zones:
        if zone.keepout or zone.net <= 0:
            continue
        if nets is not None and not (zone.net < len(nets) and nets[zone.net]):
            continue  # its fills are not even parsed
        for layer, polys in zone.filled.items():
            for poly in polys:
                if len(poly) >= 3:
                    rings.append(np.asarray(poly, dtype=float))
                    z_net.append(zone.net)
                    z_layer.append(layer)
    if not rings or len(xy) == 0:
        return
    counts = np.array([len(r) for r in rings])
    coords = np.concatenate(rings)
    # linearrings() closes each ring; KiCad's bridged holes stay in the ring, which is fine for
    # point-in-polygon and distance (the bridge has no width)
    lr = shapely.linearrings(coords, indices=np.repeat(np.arange(len(rings)), counts))
    polys = shapely.polygons(lr)
    zn = np.array(z_net, dtype=np.int64)
    zl = np.array(z_layer, dtype=np.int64)
    tree = shapely.STRtree(polys)
    has_shape = np.zeros(len(xy), bool)
    if shapes is not None:
        has_shape = np.array([g is not None for g in shapes], bool)
    boxes = shapely.box(xy[:, 0] - rad, xy[:, 1] - rad, xy[:, 0] + rad, xy[:, 1] + rad)
    if has_shape.any():
        b = shapely.bounds(shapes[has_shape].astype(object))
        boxes[has_shape] = shapely.box(b[:, 0], b[:, 1], b[:, 2], b[:, 3])
    qi, pj = tree.query(boxes)
    ok = (zn[pj] == net[qi]) & (zl[pj] >= start[qi]) & (zl[pj] <= end[qi])
    qi, pj = qi[ok], pj[ok]
    if len(qi) == 0:
        return
    # skip layers already known connected (cheap) before any polygon test
    todo = ~connected[qi, zl[pj]]
    qi, pj = qi[todo], pj[todo]
    if len(qi) == 0:
        return
    shapely.prepare(polys[np.unique(pj)])
    hit = np.zeros(len(qi), bool)
    geo = has_shape[qi]
    if geo.any():
        hit[geo] = shapely.dwithin(polys[pj[geo]], shapes[qi[geo]], _EPS_MM)
    pt = ~geo
    if pt.any():
        inside = shapely.contains_xy(polys[pj[pt]], xy[qi[pt], 0], xy[qi[pt], 1])
        rest = np.flatnonzero(pt)[~inside]
        hit[np.flatnonzero(pt)[inside]] = True
        if len(rest):
            pts = shapely.points(xy[qi[rest]])
            hit[rest] = shapely.dwithin(polys[pj[rest]], pts, rad[qi[rest]] + _EPS_MM)
    connected[qi[hit], zl[pj[hit]]] = True


def _track_queries(tracks: Any) -> tuple[np.ndarray, np.ndarray]:
    """A bounding disc (centre, radius incl. half the width) of every track and arc."""
    s, e, m = tracks.start, tracks.end, tracks.mid
    centre = (s + e) / 2.0
    rad = np.hypot(*(e - s).T) / 2.0
    arc = ~np.isnan(m[:, 0])
    if arc.any():
        c, r = circles_through(s[arc], m[arc], e[arc])
        good = ~np.isnan(r)
        sub_c, sub_r = centre[arc], rad[arc]
        sub_c[good] = c[good]
        sub_r[good] = r[good]
        # a collinear "arc" is its chord (plus the mid point, in case it sticks out)
        far = np.hypot(*(m[arc] - sub_c).T)
        sub_r = np.maximum(sub_r, np.where(good, 0.0, far))
        centre[arc] = sub_c
        rad[arc] = sub_r
    return centre, rad + tracks.width / 2.0


def _connect_touching_vias(
    vias: Any,
    via_r: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    connected: np.ndarray,
    n_layers: int,
) -> None:
    """Where touching vias of one net take the signal from one barrel to the other.

    *Touching*: on a layer both span, a via has copper of its pad's radius where the pad is
    there, else only its plated hole.  With ``(remove_unused_layers yes)`` a pad exists only
    where something connects to the via (KiCad's ``PCB_VIA::FlashLayer``; ``keep_end_layers``
    keeps the start and end pads).  Two vias touch on a layer where those coppers overlap.

    *Connecting*: a touch on layer L connects via A there when the other via B has a real
    connection on L (a track, pad or zone, found before this step: A's pad is then part of
    that copper), or when B reaches a connection beyond the layers A already reaches (B's
    barrel carries A's signal on: a micro-via stacked on a buried via).  Applied until
    nothing changes, so chains of touching vias work.

    Why not "touching = connected on every shared layer": two through vias that touch only each
    other on B.Cu (their kept end pads) and connect on the same layers above do not take the
    signal anywhere at B.Cu; counting it moved the bottom of both barrels to B.Cu and hid their
    stubs (vme-wren: 33 P3V3 vias at 0.6 mm centres with 0.6 mm pads came out connected on all
    12 layers).  So a touching via never shortens another via's stub unless it brings a
    connection that via does not have.
    """
    rmax = float(via_r.max())
    ai, bi = near_pairs(vias.pos, vias.net, via_r + rmax + _EPS_MM, vias.pos, vias.net)
    d = np.hypot(*(vias.pos[ai] - vias.pos[bi]).T)
    ok = (ai < bi) & (d <= via_r[ai] + via_r[bi] + _EPS_MM)
    ai, bi, d = ai[ok], bi[ok], d[ok]
    if not len(ai):
        return
    nv = len(vias)
    conn = connected[:nv]
    cond = vias.conditional(n_layers)
    hole_r = vias.drill.astype(float) / 2.0
    # copper radius per (via, layer): the pad where it is (unconditional, or connected there)
    rad = np.where(~cond | conn, via_r[:, None], hole_r[:, None])
    layers = np.arange(n_layers)[None, :]
    lo = np.maximum(start[ai], start[bi])[:, None]
    hi = np.minimum(end[ai], end[bi])[:, None]
    touch = (layers >= lo) & (layers <= hi) & (d[:, None] <= rad[ai] + rad[bi] + _EPS_MM)
    keep = touch.any(axis=1)
    ai, bi, touch = ai[keep], bi[keep], touch[keep]
    idx = np.arange(n_layers)[None, :]
    for _ in range(nv):  # a chain of k touching vias settles in k rounds
        top = np.where(conn, idx, n_layers).min(axis=1)
        bottom = np.where(conn, idx, -1).max(axis=1)
        gained = False
        for x, y in ((ai, bi), (bi, ai)):
            beyond = (bottom[y] >= 0) & ((top[y] < top[x]) | (bottom[y] > bottom[x]))
            gain = touch & (conn[y] | beyond[:, None]) & ~conn[x]
            if gain.any():
                rows, cols = np.nonzero(gain)
                conn[x[rows], cols] = True
                gained = True
        if not gained:
            break


def _in_mask(mask: np.ndarray, net: np.ndarray) -> np.ndarray:
    """``mask[net]`` with out-of-range net numbers (none on a board the reader made) False."""
    net = np.asarray(net, dtype=np.int64)
    ok = (net >= 0) & (net < len(mask))
    out = np.zeros(net.shape, bool)
    out[ok] = mask[net[ok]]
    return out


class _Done:
    """A result computed in line, with :class:`..concurrency.Background`'s ``result()``."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self) -> Any:
        return self._value


def find_connections(board: Board, nets: np.ndarray | None = None) -> dict[str, Any]:
    """The barrels of ``board`` (vias, then PTH pads) and the copper layers each connects on.

    ``nets``: a bool mask over the board's net indexes; only the barrels on those nets are
    analysed (``via_row`` keeps each via barrel's row in ``board.vias``).  Every join here is
    between copper of one net (KiCad's connectivity), so a barrel's row is the same as in the
    whole table; the items of other nets are never looked at (the ground vias and plane fills
    that are most of a board's vias and all of its zones)."""
    n_layers = board.layer_count
    vias = board.vias
    vrows = None
    if nets is not None:
        vrows = np.flatnonzero(_in_mask(nets, vias.net))
        vias = vias.take(vrows)
    nv = len(vias)
    pads = PadTable.from_board(board)
    pth = pads.pth if nets is None else pads.pth & _in_mask(nets, pads.net)
    pth_idx = np.flatnonzero(pth)
    npth = len(pth_idx)

    xy = np.concatenate([vias.pos.reshape(-1, 2), pads.xy[pth_idx]])
    net = np.concatenate([vias.net.astype(np.int64), pads.net[pth_idx]])
    start = np.concatenate([vias.start.astype(np.int64), np.zeros(npth, np.int64)])
    end = np.concatenate([vias.end.astype(np.int64), np.full(npth, n_layers - 1, np.int64)])
    # reach of a barrel's copper on each layer: the via pad, or the PTH pad's bounding circle
    via_r = vias.diameter.astype(float) / 2.0
    n = nv + npth
    connected = np.zeros((n, n_layers), bool)

    # KiCad joins two items of a net on a layer when their copper shapes touch there
    # (CN_VISITOR: GetEffectiveShape(layer)->Collide(...)); so do we, with a 1 µm tolerance.
    span_lo, span_hi = start, end
    pth_geoms = pads.geometries(pth_idx) if npth else np.empty(0, dtype=object)
    pad_pos = np.full(len(pads), -1, np.int64)
    pad_pos[pth_idx] = np.arange(npth)

    # 4. (started first) zones of the same net touching the via pad disc / the PTH pad: GEOS
    # work with the GIL released, on a second thread while 1-2 run here; into its own table
    # (OR-ed in below, so the result is the same as in sequence: it does not skip the layers
    # 1-2 find, which costs a few more polygon tests than it saves in wall time)
    shapes = np.concatenate([np.full(nv, None, dtype=object), pth_geoms]) if npth else None
    rad_all = np.concatenate([via_r, pads.bound_radius[pth_idx]])

    def zone_table() -> np.ndarray:
        got = np.zeros_like(connected)
        _connect_zones(board, xy, net, rad_all, start, end, got, shapes, nets)
        return got

    zones = Background(zone_table, "via zones") if workers() > 1 else _Done(zone_table())

    # 1. tracks and arcs whose copper touches the via pad / PTH pad
    tr = board.tracks
    if nets is not None and len(tr):  # only the nets analysed: the same joins, fewer tracks
        tr = tr.take(np.flatnonzero(_in_mask(nets, tr.net)))
    if len(tr):
        t_c, t_r = _track_queries(tr)
        t_net = tr.net.astype(np.int64)
        t_layer = tr.layer.astype(np.int64)
        is_arc = tr.is_arc
        if nv:
            ti, vi = near_pairs(t_c, t_net, t_r + float(via_r.max()) + _EPS_MM, vias.pos, vias.net)
            lay = t_layer[ti]
            ok = (lay >= span_lo[vi]) & (lay <= span_hi[vi])
            ti, vi, lay = ti[ok], vi[ok], lay[ok]
            d = np.empty(len(ti))
            a_ = is_arc[ti]
            p = vias.pos[vi]
            d[~a_] = segment_distance(p[~a_], tr.start[ti[~a_]], tr.end[ti[~a_]])
            if a_.any():
                d[a_] = arc_distance(p[a_], tr.start[ti[a_]], tr.mid[ti[a_]], tr.end[ti[a_]])
            hit = d <= via_r[vi] + tr.width[ti] / 2.0 + _EPS_MM
            connected[vi[hit], lay[hit]] = True
        if npth:
            bound = pads.bound_radius[pth_idx]
            ti, pi = near_pairs(
                t_c, t_net, t_r + float(bound.max()) + _EPS_MM, pads.xy[pth_idx], pads.net[pth_idx]
            )
            lay = t_layer[ti]
            ok = pads.layers[pth_idx[pi], lay]
            ti, pi, lay = ti[ok], pi[ok], lay[ok]
            if len(ti):
                lines = _track_lines(tr, ti)
                hit = shapely_dwithin(pth_geoms[pi], lines, tr.width[ti] / 2.0 + _EPS_MM)
                connected[nv + pi[hit], lay[hit]] = True

    # 2. pads of the same net whose copper touches the via pad (via-in-pad, or beside it)
    if len(pads) and nv:
        pi, vi = near_pairs(
            pads.xy, pads.net, pads.bound_radius + float(via_r.max()) + _EPS_MM, vias.pos, vias.net
        )
        ok = pads.distance(pi, vias.pos[vi]) <= via_r[vi] + _EPS_MM
        pi, vi = pi[ok], vi[ok]
        layers = np.arange(n_layers)[None, :]
        both = pads.layers[pi] & (layers >= span_lo[vi, None]) & (layers <= span_hi[vi, None])
        rows, cols = np.nonzero(both)
        connected[vi[rows], cols] = True
        # the PTH pad is joined there too (to the via)
        k = pad_pos[pi[rows]]
        good = k >= 0
        connected[nv + k[good], cols[good]] = True

    # 4. zones of the same net touching the via pad disc / the PTH pad (computed beside 1-2)
    connected |= zones.result()

    # 5. a PTH lead is soldered on its footprint's side
    if npth:
        connected[nv + np.arange(npth), pads.fp_side[pth_idx]] = True

    # 3. touching vias of the same net (after every other connection: it depends on them)
    if nv > 1:
        _connect_touching_vias(vias, via_r, start, end, connected, n_layers)

    # no net, no connection
    connected[net <= 0] = False
    types = tuple(vias.types) + ("pth",) * npth
    refs = ("",) * nv + tuple(pads.ref[i] for i in pth_idx)
    from .nets import JoinedStrings  # via uuids stay undecoded until a finding names one

    uuids = JoinedStrings(vias.uuid, nv, tuple(pads.uuid[i] for i in pth_idx))
    via_row = np.concatenate([np.arange(nv) if vrows is None else vrows, np.full(npth, -1)])
    return {
        "xy": xy,
        "net": net,
        "start": start,
        "end": end,
        "connected": connected,
        "types": types,
        "ref": refs,
        "uuid": uuids,
        "via_row": via_row,
    }


# ---------------------------------------------------------------------------------------------
# backdrill from the config
# ---------------------------------------------------------------------------------------------


def _fullmatch(pattern: str, text: str) -> bool:
    from ..hostile import fullmatch

    try:
        return fullmatch(pattern, text)
    except re.error:
        return pattern == text


def config_backdrills(
    board: Board,
    specs: Sequence[BackdrillSpec],
    net_signal: Mapping[int, SignalAssignment] | None = None,
) -> tuple[dict[int, Backdrill], list[str]]:
    """Net index -> Backdrill from the config ``backdrill:`` list (first matching entry wins).

    ``match`` may name a ``net_class`` (KiCad net class, regex), a ``signal`` type (regex on the
    signal id) or a ``net`` (regex on the net name); several keys must all match.  Each regex
    matches the *whole* name (``re.fullmatch``, like every config regex: ``PCIE_TX.*``, not
    ``^PCIE_TX``); an entry that matches no net is reported by the pipeline
    (``config.unmatched``, :func:`accel_drc.config.unmatched_entries`).  ``except_net`` (regex
    on the net name, whole-name match) leaves nets out of an entry, e.g. the one pair a design
    does not backdrill, without a negative look-ahead in ``match``.
    """
    out: dict[int, Backdrill] = {}
    notes: list[str] = []
    for k, spec in enumerate(specs or ()):
        match = spec.match
        side = spec.side
        if side not in ("top", "bottom"):
            notes.append(f"backdrill[{k}]: side {side!r} is not top or bottom; ignored")
            continue
        mnc_name = spec.must_not_cut
        mnc = None
        if mnc_name is not None:
            mnc = board.layer_index(str(mnc_name))
            if mnc is None:
                notes.append(
                    f"backdrill[{k}]: must_not_cut layer {mnc_name!r} is not a copper layer "
                    "of this board; the deepest connected layer is used instead"
                )
        residual = spec.residual_stub_mm
        drill = Backdrill(
            side=side,
            must_not_cut=mnc,
            residual_stub_mm=None if residual is None else float(residual),
            drill_mm=spec.drill_mm,
            source="config",
        )
        want_class = match.net_class
        want_signal = match.signal
        want_net = match.net
        except_net = spec.except_net
        if want_class is None and want_signal is None and want_net is None:
            notes.append(f"backdrill[{k}]: empty match; ignored")
            continue
        for idx, name in enumerate(board.nets):
            if idx == 0 or not name or idx in out:
                continue
            if want_net is not None and not _fullmatch(str(want_net), name):
                continue
            if except_net is not None and _fullmatch(str(except_net), name):
                continue
            if want_class is not None and not _fullmatch(
                str(want_class), board.net_classes.class_of(name)
            ):
                continue
            if want_signal is not None:
                got = (net_signal or {}).get(idx)
                if got is None or not _fullmatch(str(want_signal), got.signal):
                    continue
            out[idx] = drill
    return out, notes


# ---------------------------------------------------------------------------------------------
# putting it together
# ---------------------------------------------------------------------------------------------


def compute_stubs(
    geom: StackGeometry,
    start: np.ndarray,
    end: np.ndarray,
    connected: np.ndarray,
    backdrills: Sequence[Backdrill | None] | None = None,
) -> dict[str, np.ndarray]:
    """Top, bottom and overall stub (mm), εeff and f_res for each barrel.

    Top stub: top face of the start layer -> top face of the topmost connected layer.
    Bottom stub: bottom face of the bottommost connected layer -> bottom face of the end layer.
    A backdrill replaces the stub on its side with what it leaves: the barrel from the deepest
    connected layer to the must-not-cut layer (none when they are the same layer), plus the
    fabricator's residual allowance (unknown if undeclared, and so is the stub), never more
    than the undrilled stub.  One that would cut a connected layer is flagged.
    """
    n = len(start)
    n_layers = connected.shape[1] if connected.ndim == 2 else geom.n_layers
    any_conn = connected.any(axis=1)
    idx = np.arange(n_layers)
    top_c = np.where(connected, idx[None, :], n_layers).min(axis=1) if n else np.zeros(0, int)
    bot_c = np.where(connected, idx[None, :], -1).max(axis=1) if n else np.zeros(0, int)
    top_c = np.where(any_conn, top_c, start)
    bot_c = np.where(any_conn, bot_c, end)
    t_lo, t_hi = 2 * start, 2 * top_c
    b_lo, b_hi = 2 * bot_c + 1, 2 * end + 1
    top = geom.length(t_lo, t_hi)
    bottom = geom.length(b_lo, b_hi)
    eps_top = geom.eps_eff(t_lo, t_hi)
    eps_bot = geom.eps_eff(b_lo, b_hi)
    # an unconnected barrel has no signal path: no stub to speak of
    top[~any_conn] = np.nan
    bottom[~any_conn] = np.nan
    geometric = np.fmax(top, bottom)
    geometric[np.isnan(top) | np.isnan(bottom)] = np.nan

    cuts = np.zeros(n, bool)
    # a residual stub with no dielectric of its own on record takes the board's average εr
    eps_board = geom.eps_eff(np.array([0]), np.array([2 * geom.n_layers - 1]))[0]

    span = geom.span  # (length mm, εr) between faces ``lo`` and ``hi`` (NaN if unknown)

    if backdrills is not None:
        for i, bd in enumerate(backdrills):
            if bd is None or not any_conn[i]:
                continue
            residual = bd.residual_stub_mm if bd.residual_stub_mm is not None else bd.max_stub_mm
            # The drill stops at the must-not-cut layer: what is left is the barrel from the
            # deepest connected layer to that layer, plus the fabricator's residual allowance
            # beyond it (just the allowance when the must-not-cut layer is the connected one).
            if bd.side == "top":
                if start[i] != 0:
                    continue
                limit = bd.must_not_cut if bd.must_not_cut is not None else int(top_c[i])
                cuts[i] = bool(connected[i, :limit].any())
                kept, kept_eps = (
                    span(2 * limit, 2 * int(top_c[i])) if limit < top_c[i] else (0.0, math.nan)
                )
                left = math.nan if residual is None else kept + residual
                top[i] = left if np.isnan(top[i]) or np.isnan(left) else min(top[i], left)
                if not np.isnan(kept_eps):
                    eps_top[i] = kept_eps
                elif np.isnan(eps_top[i]):
                    eps_top[i] = eps_board
            else:
                if end[i] != geom.n_layers - 1:
                    continue
                limit = bd.must_not_cut if bd.must_not_cut is not None else int(bot_c[i])
                cuts[i] = bool(connected[i, limit + 1 :].any())
                kept, kept_eps = (
                    span(2 * int(bot_c[i]) + 1, 2 * limit + 1)
                    if limit > bot_c[i]
                    else (0.0, math.nan)
                )
                left = math.nan if residual is None else kept + residual
                bottom[i] = left if np.isnan(bottom[i]) or np.isnan(left) else min(bottom[i], left)
                if not np.isnan(kept_eps):
                    eps_bot[i] = kept_eps
                elif np.isnan(eps_bot[i]):
                    eps_bot[i] = eps_board
    stub = np.fmax(top, bottom)
    stub[np.isnan(top) | np.isnan(bottom)] = np.nan
    eps = np.where(np.nan_to_num(top, nan=-1) >= np.nan_to_num(bottom, nan=-1), eps_top, eps_bot)
    eps = np.where(np.isnan(eps), eps_board, eps)
    fres = resonance_hz(stub, eps)
    return {
        "top": top,
        "bottom": bottom,
        "stub": stub,
        "eps": eps,
        "f_res": fres,
        "cuts": cuts,
        "geometric": geometric,
    }


def compute(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None = None,
    net_signal: Mapping[int, SignalAssignment] | None = None,
    nets: Iterable[int] | None = None,
) -> ViaStubs:
    """Connections, stubs and backdrills for every via and PTH pad of ``board``, or only for
    those on ``nets`` (the table then answers :meth:`ViaStubs.rows_for_nets` for those nets
    only: the checks ask for their signal nets, a few percent of a board's barrels)."""
    mask = None
    if nets is not None:
        mask = np.zeros(len(board.nets), bool)
        picked = np.fromiter((n for n in nets if 0 < n < len(board.nets)), np.int64)
        mask[picked] = True
    conn = find_connections(board, mask)
    geom = StackGeometry.from_board(board)
    n = len(conn["net"])
    specs = as_config(config).backdrill
    by_net, notes = config_backdrills(board, specs, net_signal) if specs else ({}, [])
    bds: list[Backdrill | None] = [None] * n
    board_bds = board.vias.backdrills
    # only the barrels a backdrill can apply to are visited (a Python loop over 200 k barrels
    # that finds none cost 0.23 s on the synthetic training board); a via's barrel is found
    # by its row (the via barrels come first, in row order)
    via_rows = conn["via_row"][: int((conn["via_row"] >= 0).sum())]
    rows = np.fromiter((int(r) for r in board_bds), np.int64, len(board_bds))
    at = np.searchsorted(via_rows, rows)
    hit = at < len(via_rows)
    hit[hit] = via_rows[at[hit]] == rows[hit]
    todo: set[int] = set(at[hit].tolist())
    if by_net:
        net_col = conn["net"]
        todo.update(np.flatnonzero(np.isin(net_col, np.fromiter(by_net, np.int64))).tolist())
    for i in sorted(todo):
        row = int(conn["via_row"][i])
        bd = board_bds.get(row) if row >= 0 else None
        cfg_bd = by_net.get(int(conn["net"][i]))
        if bd is None:
            bd = cfg_bd
        elif bd.residual_stub_mm is None and cfg_bd is not None:
            # the board says where it is drilled, the config what the fabricator leaves
            bd = dataclasses.replace(
                bd, residual_stub_mm=cfg_bd.residual_stub_mm, source=f"{bd.source}+config"
            )
        bds[i] = bd
    res = compute_stubs(geom, conn["start"], conn["end"], conn["connected"], bds)
    stack_known = bool(not np.isnan(geom.thickness).any())
    if board.stackup is None:
        notes.append("the board has no stack-up: stub lengths cannot be computed")
    elif not stack_known:
        notes.append("the stack-up leaves some copper or dielectric thickness undeclared")
    order = np.argsort(conn["net"], kind="stable")
    nets_sorted = conn["net"][order]
    uniq, first = np.unique(nets_sorted, return_index=True)
    bounds = list(first) + [len(order)]
    index_by_net = {int(u): order[bounds[k] : bounds[k + 1]] for k, u in enumerate(uniq)}
    for msg in notes:
        log.info("via stubs: %s", msg)
    return ViaStubs(
        layer_names=tuple(layer.name for layer in board.copper_layers),
        xy=conn["xy"],
        net=conn["net"],
        start=conn["start"],
        end=conn["end"],
        types=conn["types"],
        ref=conn["ref"],
        uuid=conn["uuid"],
        via_row=conn["via_row"],
        connected=conn["connected"],
        top_stub_mm=res["top"],
        bottom_stub_mm=res["bottom"],
        stub_mm=res["stub"],
        eps_eff=res["eps"],
        f_res_hz=res["f_res"],
        backdrill=tuple(bds),
        backdrill_cuts=res["cuts"],
        geometric_stub_mm=res["geometric"],
        stackup_known=stack_known,
        notes=tuple(notes),
        index_by_net=index_by_net,
        geom=geom,
        nets=None if mask is None else frozenset(np.flatnonzero(mask).tolist()),
    )


def _num(x: float) -> float | None:
    """JSON-friendly: NaN -> None, rounded to 1 nm."""
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), 6)


def backdrill_dict(bd: Backdrill | None, layer_names: Sequence[str]) -> dict[str, Any] | None:
    if bd is None:
        return None
    return {
        "side": bd.side,
        "must_not_cut": None
        if bd.must_not_cut is None or not 0 <= bd.must_not_cut < len(layer_names)
        else layer_names[bd.must_not_cut],
        "residual_stub_mm": bd.residual_stub_mm,
        "source": bd.source,
    }


def via_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail vias``: one row per via, then per PTH pad."""
    vs: ViaStubs = analysis.via_stubs
    board: Board = analysis.board
    names = vs.layer_names
    rows = []
    for i in range(len(vs)):
        net_i = int(vs.net[i])
        row: dict[str, Any] = {
            "x": round(float(vs.xy[i, 0]), 6),
            "y": round(float(vs.xy[i, 1]), 6),
            "net": board.nets[net_i] if 0 <= net_i < len(board.nets) else "",
            "start": names[int(vs.start[i])],
            "end": names[int(vs.end[i])],
            "type": vs.types[i],
            "connected": vs.connected_names(i),
            "top_stub_mm": _num(vs.top_stub_mm[i]),
            "bottom_stub_mm": _num(vs.bottom_stub_mm[i]),
            "stub_mm": _num(vs.stub_mm[i]),
            "backdrill": backdrill_dict(vs.backdrill[i], names),
        }
        if vs.ref[i]:
            row["ref"] = vs.ref[i]
        if vs.backdrill_cuts[i]:
            row["backdrill_cuts_connected_layer"] = True
        rows.append(row)
    return rows
