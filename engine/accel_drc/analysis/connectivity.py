"""Copper islands of a net: which of its pads the routing really joins.

The same joining rules as the via analysis (:mod:`.via_stubs`, KiCad's connectivity: items of a
net join on a layer where their copper touches there, 1 µm tolerance):

* a track or arc end whose round cap touches another track's copper on the same layer, or a
  pad's copper on a layer the pad has; a pad's centre inside a track's copper (KiCad joins a
  track whose end overlaps a BGA ball without reaching its centre: checked on crosslink's U11.A3);
* a track's copper touching a via's pad disc on a layer the via spans (as ``find_connections``);
* a pad whose copper contains or touches a via's disc (via-in-pad), on layers both have;
* two overlapping vias of the net, on a layer both span;
* a filled zone of the net on a layer, touching any of these.

Arcs are taken as the two chords start-mid-end (the sagitta of a routed arc is micrometres).
Only the nets asked for are examined, each on its own few items, so a board's high-speed nets
cost milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from .via_stubs import PadTable

if TYPE_CHECKING:
    from ..model import Board

_EPS = 1e-3  # mm, as the via analysis


@dataclass(frozen=True)
class NetIslands:
    """The connected pieces of one net.

    ``pad_groups``: for each island that holds a pad, the pads' names (``J1.5``); islands
    without a pad (a loose track, a via) are counted in ``loose``.  ``track_mm``: routed length
    of the net (all islands)."""

    net: int
    pad_groups: tuple[tuple[str, ...], ...]
    loose: int
    track_mm: float
    n_tracks: int
    n_vias: int
    pos: tuple[float, float] | None  # where the route breaks (the middle of the smallest gap)
    gap_mm: float | None = None  # the smallest distance between two islands' points

    @property
    def open(self) -> bool:
        return len(self.pad_groups) > 1


class _DSU:
    def __init__(self, n: int) -> None:
        self.p = list(range(n))

    def find(self, a: int) -> int:
        p = self.p
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[rb] = ra


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance matrix: points ``p`` (m, 2) to segments ``a``-``b`` (k, 2) -> (m, k)."""
    ab = b - a  # (k, 2)
    ap = p[:, None, :] - a[None, :, :]  # (m, k, 2)
    den = np.maximum((ab * ab).sum(-1), 1e-18)[None, :]
    t = np.clip((ap * ab[None]).sum(-1) / den, 0.0, 1.0)
    q = a[None] + t[..., None] * ab[None]
    return np.hypot(*(p[:, None, :] - q).transpose(2, 0, 1))


def net_islands(
    board: Board, nets: Iterable[int], pads: PadTable | None = None
) -> dict[int, NetIslands]:
    """Islands of each net in ``nets`` (nets without pads are skipped)."""
    want = sorted({int(n) for n in nets if n})
    if not want:
        return {}
    if pads is None:
        # only the pads of the nets asked for: the table is built in Python, pad by pad
        keep = set(want)
        subset = SimpleNamespace(
            layer_count=board.layer_count,
            pads=[(fp, pad) for fp, pad in board.pads if pad.net in keep],
        )
        pads = PadTable.from_board(subset)  # type: ignore[arg-type]
    t = board.tracks
    v = board.vias
    t_net = np.asarray(t.net, dtype=np.int64) if len(t) else np.zeros(0, np.int64)
    v_net = np.asarray(v.net, dtype=np.int64) if len(v) else np.zeros(0, np.int64)
    zones_by_net: dict[int, list[tuple[int, Any]]] = {}
    for z in board.zones:
        if z.keepout or z.net not in want:
            continue
        for layer, polys in z.filled.items():
            for poly in polys:
                if len(poly) >= 3:
                    zones_by_net.setdefault(z.net, []).append((layer, np.asarray(poly, float)))
    out = {}
    for net in want:
        pi = np.flatnonzero(pads.net == net)
        if len(pi) == 0:
            continue
        ti = np.flatnonzero(t_net == net)
        vi = np.flatnonzero(v_net == net)
        out[net] = _islands(board, net, pads, pi, ti, vi, zones_by_net.get(net, []))
    return out


def _islands(
    board: Board,
    net: int,
    pads: PadTable,
    pi: np.ndarray,
    ti: np.ndarray,
    vi: np.ndarray,
    zones: Sequence[tuple[int, np.ndarray]],
) -> NetIslands:
    t = board.tracks
    v = board.vias
    n_p, n_t, n_v = len(pi), len(ti), len(vi)
    dsu = _DSU(n_p + n_t + n_v + len(zones))
    T0, V0, Z0 = n_p, n_p + n_t, n_p + n_t + n_v

    # tracks as chords (an arc: start-mid, mid-end), each chord owned by its track
    if n_t:
        s = np.asarray(t.start[ti], float)
        e = np.asarray(t.end[ti], float)
        m = np.asarray(t.mid[ti], float)
        w = np.asarray(t.width[ti], float)
        lay = np.asarray(t.layer[ti], np.int64)
        arc = ~np.isnan(m[:, 0])
        ca = np.concatenate([s, m[arc]])
        cb = np.concatenate([np.where(arc[:, None], m, e), e[arc]])
        owner = np.concatenate([np.arange(n_t), np.flatnonzero(arc)])
        cw = w[owner]
        cl = lay[owner]
        length = float(np.hypot(*(cb - ca).T).sum())
        ends = np.concatenate([s, e])  # track ends (anchors)
        end_owner = np.concatenate([np.arange(n_t), np.arange(n_t)])
        end_layer = lay[end_owner]
        # track-track: an end inside another track's copper on the same layer
        d = _seg_dist(ends, ca, cb)
        end_w = w[end_owner]
        hit = (d <= (cw[None, :] + end_w[:, None]) / 2.0 + _EPS) & (
            end_layer[:, None] == cl[None, :]
        )
        for a, b in zip(*np.nonzero(hit)):
            dsu.union(T0 + int(end_owner[a]), T0 + int(owner[b]))
        # track-pad: a track end in the pad, or the pad centre in the track
        if n_p:
            for k, p in enumerate(pi):
                on = pads.layers[p][lay]  # tracks on a layer the pad has copper on
                if not on.any():
                    continue
                # the round end cap of the track touching the pad's copper
                dend = pads.distance(np.full(len(ends), p), ends) <= end_w / 2.0 + _EPS
                dend &= np.concatenate([on, on])
                dc = _seg_dist(pads.xy[p][None, :], ca, cb)[0] <= cw / 2.0 + _EPS
                dc &= on[owner]
                for j in set(end_owner[dend].tolist()) | set(owner[dc].tolist()):
                    dsu.union(k, T0 + int(j))
        # track-via: the track's copper touches the via disc on a layer the via spans
        if n_v:
            vp = np.asarray(v.pos[vi], float).reshape(-1, 2)
            vr = np.asarray(v.diameter[vi], float) / 2.0
            d = _seg_dist(vp, ca, cb)
            span = (cl[None, :] >= np.asarray(v.start[vi])[:, None]) & (
                cl[None, :] <= np.asarray(v.end[vi])[:, None]
            )
            hit = (d <= vr[:, None] + cw[None, :] / 2.0 + _EPS) & span
            for a, b in zip(*np.nonzero(hit)):
                dsu.union(V0 + int(a), T0 + int(owner[b]))
    else:
        length = 0.0
    if n_v:
        vp = np.asarray(v.pos[vi], float).reshape(-1, 2)
        vr = np.asarray(v.diameter[vi], float) / 2.0
        vs = np.asarray(v.start[vi], np.int64)
        ve = np.asarray(v.end[vi], np.int64)
        # via-pad
        for k, p in enumerate(pi):
            near = pads.distance(np.full(n_v, p), vp) <= vr + _EPS
            for j in np.flatnonzero(near):
                layers = np.flatnonzero(pads.layers[p])
                if ((layers >= vs[j]) & (layers <= ve[j])).any():
                    dsu.union(k, V0 + int(j))
        # via-via
        dd = np.hypot(*(vp[:, None, :] - vp[None, :, :]).transpose(2, 0, 1))
        touch = dd <= vr[:, None] + vr[None, :] + _EPS
        common = np.maximum(vs[:, None], vs[None, :]) <= np.minimum(ve[:, None], ve[None, :])
        for a, b in zip(*np.nonzero(np.triu(touch & common, 1))):
            dsu.union(V0 + int(a), V0 + int(b))
    if zones:
        _join_zones(board, pads, pi, ti, vi, zones, dsu, T0, V0, Z0)

    names = [pads.ref[p] for p in pi]
    groups: dict[int, list[str]] = {}
    for k in range(n_p):
        groups.setdefault(dsu.find(k), []).append(names[k])
    with_pad = set(groups)
    loose = len({dsu.find(i) for i in range(n_p, Z0 + len(zones))} - with_pad)
    pos = (round(float(pads.xy[pi[0], 0]), 4), round(float(pads.xy[pi[0], 1]), 4))
    gap_mm = None
    if len(groups) > 1:
        # where the route breaks: the closest two points (pad centres, track ends, via centres)
        # of different islands
        pts = [pads.xy[pi]]
        own = [np.arange(n_p)]
        if n_t:
            pts += [np.asarray(t.start[ti], float), np.asarray(t.end[ti], float)]
            own += [T0 + np.arange(n_t)] * 2
        if n_v:
            pts.append(np.asarray(v.pos[vi], float).reshape(-1, 2))
            own.append(V0 + np.arange(n_v))
        xy = np.concatenate(pts)
        comp = np.array([dsu.find(int(i)) for i in np.concatenate(own)])
        d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
        d[comp[:, None] == comp[None, :]] = np.inf
        a, b = np.unravel_index(int(np.argmin(d)), d.shape)
        if np.isfinite(d[a, b]):
            gap_mm = round(float(d[a, b]), 3)
            pos = (
                round(float(xy[a, 0] + xy[b, 0]) / 2, 4),
                round(float(xy[a, 1] + xy[b, 1]) / 2, 4),
            )
    return NetIslands(
        gap_mm=gap_mm,
        net=net,
        pad_groups=tuple(
            tuple(sorted(g)) for g in sorted(groups.values(), key=lambda g: (-len(g), g))
        ),
        loose=loose,
        track_mm=round(length, 3),
        n_tracks=n_t,
        n_vias=n_v,
        pos=pos,
    )


def _join_zones(
    board: Board,
    pads: PadTable,
    pi: np.ndarray,
    ti: np.ndarray,
    vi: np.ndarray,
    zones: Sequence[tuple[int, np.ndarray]],
    dsu: _DSU,
    T0: int,
    V0: int,
    Z0: int,
) -> None:
    import shapely

    t = board.tracks
    v = board.vias
    for zk, (layer, ring) in enumerate(zones):
        poly = shapely.polygons(ring)
        node = Z0 + zk
        for k, p in enumerate(pi):
            if pads.layers[p][layer] and shapely.dwithin(
                poly, pads.geometries(np.array([p]))[0], _EPS
            ):
                dsu.union(node, k)
        for k, r in enumerate(ti):
            if int(t.layer[r]) != layer:
                continue
            line = shapely.linestrings([t.start[r], t.end[r]])
            if shapely.dwithin(poly, line, float(t.width[r]) / 2.0 + _EPS):
                dsu.union(node, T0 + k)
        for k, r in enumerate(vi):
            if int(v.start[r]) <= layer <= int(v.end[r]):
                pt = shapely.points(np.asarray(v.pos[r], float))
                if shapely.dwithin(poly, pt, float(v.diameter[r]) / 2.0 + _EPS):
                    dsu.union(node, V0 + k)
