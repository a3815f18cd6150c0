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

from ..geometry import segment_distance
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
    """Connected components from an edge list, solved at once with numpy (hooking + pointer
    jumping: a few passes even for a 200-segment serpentine, no Python loop per edge)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._a: list[np.ndarray] = []
        self._b: list[np.ndarray] = []
        self._labels: np.ndarray | None = None

    def union(self, a: int, b: int) -> None:
        self.union_many(np.array([a]), np.array([b]))

    def union_many(self, a: np.ndarray, b: np.ndarray) -> None:
        if len(a):
            self._a.append(np.asarray(a, np.int64))
            self._b.append(np.asarray(b, np.int64))
            self._labels = None

    def labels(self) -> np.ndarray:
        if self._labels is None:
            lab = np.arange(self.n, dtype=np.int64)
            if self._a:
                a = np.concatenate(self._a)
                b = np.concatenate(self._b)
                while True:
                    la, lb = lab[a], lab[b]
                    if (la == lb).all():
                        break
                    np.minimum.at(lab, np.maximum(la, lb), np.minimum(la, lb))
                    while True:  # pointer jumping: every node points at its root
                        nxt = lab[lab]
                        if (nxt == lab).all():
                            break
                        lab = nxt
            self._labels = lab
        return self._labels

    def find(self, i: int) -> int:
        return int(self.labels()[i])


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance matrix: points ``p`` (m, 2) to segments ``a``-``b`` (k, 2) -> (m, k)."""
    return segment_distance(p[:, None, :], a[None], b[None])


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
    t_order = np.argsort(t_net, kind="stable")
    t_sorted = t_net[t_order]
    v_order = np.argsort(v_net, kind="stable")
    v_sorted = v_net[v_order]
    p_order = np.argsort(pads.net, kind="stable")
    p_sorted = pads.net[p_order]

    def rows(order: np.ndarray, keys: np.ndarray, net: int) -> np.ndarray:
        lo, hi = np.searchsorted(keys, net, "left"), np.searchsorted(keys, net, "right")
        return np.sort(order[lo:hi])

    for net in want:
        pi = rows(p_order, p_sorted, net)
        if len(pi) == 0:
            continue
        ti = rows(t_order, t_sorted, net)
        vi = rows(v_order, v_sorted, net)
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
        end_w = w[end_owner]
        # track-track, 1: ends at the same point on the same layer (1 nm grid): nearly every
        # joint of a routed net, found by one sort instead of an ends x segments matrix
        key = (end_layer * 4_000_001 + np.round(ends[:, 0] * 1e3).astype(np.int64)) * 4_000_001
        key += np.round(ends[:, 1] * 1e3).astype(np.int64)
        order = np.argsort(key, kind="stable")
        same = key[order][1:] == key[order][:-1]
        dsu.union_many(T0 + end_owner[order][:-1][same], T0 + end_owner[order][1:][same])
        # 2: an end no other end shares (a T-joint, a slightly off end) whose round cap
        # touches another track's copper on the same layer
        shared = np.zeros(len(key), bool)
        shared[order[1:][same]] = True
        shared[order[:-1][same]] = True
        free = np.flatnonzero(~shared)
        if len(free):
            d = _seg_dist(ends[free], ca, cb)
            hit = (d <= (cw[None, :] + end_w[free, None]) / 2.0 + _EPS) & (
                end_layer[free, None] == cl[None, :]
            )
            fa, cbi = np.nonzero(hit)
            dsu.union_many(T0 + end_owner[free[fa]], T0 + owner[cbi])
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
                js = np.unique(np.concatenate([end_owner[dend], owner[dc]]))
                dsu.union_many(np.full(len(js), k), T0 + js)
        # track-via: the track's copper touches the via disc on a layer the via spans
        if n_v:
            vp = np.asarray(v.pos[vi], float).reshape(-1, 2)
            vr = np.asarray(v.diameter[vi], float) / 2.0
            d = _seg_dist(vp, ca, cb)
            span = (cl[None, :] >= np.asarray(v.start[vi])[:, None]) & (
                cl[None, :] <= np.asarray(v.end[vi])[:, None]
            )
            hit = (d <= vr[:, None] + cw[None, :] / 2.0 + _EPS) & span
            va, vb = np.nonzero(hit)
            dsu.union_many(V0 + va, T0 + owner[vb])
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
        va, vb = np.nonzero(np.triu(touch & common, 1))
        dsu.union_many(V0 + va, V0 + vb)
    if zones:
        _join_zones(board, pads, pi, ti, vi, zones, dsu, T0, V0, Z0)

    names = [pads.ref[p] for p in pi]
    lab = dsu.labels()
    groups: dict[int, list[str]] = {}
    for k in range(n_p):
        groups.setdefault(int(lab[k]), []).append(names[k])
    with_pad = set(groups)
    loose = len(set(lab[n_p:].tolist()) - with_pad)
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
        comp = lab[np.concatenate(own)]
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
