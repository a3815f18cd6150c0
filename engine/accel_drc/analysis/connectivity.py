"""Copper islands of a net: which of its pads the routing really joins.

The same joining rules as the via analysis (:mod:`.via_stubs`, KiCad's connectivity: items of a
net join on a layer where their copper overlaps there; fills within 1 µm):

* a track or arc end whose round cap touches another track's copper on the same layer, or a
  pad's copper on a layer the pad has; a pad's centre inside a track's copper (KiCad joins a
  track whose end overlaps a BGA ball without reaching its centre: checked on crosslink's U11.A3);
* a track's copper touching a via's pad disc on a layer the via spans (as ``find_connections``);
* a pad whose copper contains or touches a via's disc (via-in-pad), on layers both have;
* two overlapping vias of the net, on a layer both span;
* a filled zone of the net on a layer, touching any of these;
* a board-level graphic on a copper layer (:class:`~accel_drc.model.CopperShape`), with its own
  net or the one KiCad's net propagation gives it, touching any of these;
* two tracks whose copper crosses away from their ends (measured only in nets still in pieces).

Contact is overlap, as KiCad's ``Collide`` with no clearance: items that only touch are apart
(:data:`_TOUCH`).  Custom pads are measured by their outline (anchor and primitives).

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

from ..arrays import percentile, unique
from ..geometry import segment_distance
from .pad_table import PadTable

if TYPE_CHECKING:
    from ..model import Board

_EPS = 1e-3  # mm: the reach of the candidate searches and of the fill (polygon) joins
#: mm added to the sum of two items' reaches in the exact contact tests: KiCad joins two items
#: only where their copper overlaps (``SHAPE::Collide`` with no clearance: a distance strictly
#: below the sum, in integer nm), so two shapes that only touch are apart; half a nanometre
#: under the sum absorbs float rounding (latentred-single-phy: vias tangent to 0402 pads)
_TOUCH = -5e-7
#: mm added to the reach of the bounding pre-tests (1 nm: far above rounding, far below any gap)
_SLACK = 1e-6
#: tracks per group of nets that :func:`net_islands` joins at once
_GROUP_TRACKS = 150_000


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
    #: islands of tracks and vias that reach neither a pad nor a zone fill: the dangling
    #: copper KiCad's DRC lists as unconnected (a fill island without a pad it does not)
    dangling: int = 0

    @property
    def open(self) -> bool:
        return len(self.pad_groups) > 1

    @property
    def unconnected(self) -> bool:
        """Whether KiCad's DRC reports the net among its ``unconnected_items``: more than one
        piece of copper that holds a pad or a track or via (a fill island alone is not one)."""
        return len(self.pad_groups) + self.dangling > 1


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
    board: Board,
    nets: Iterable[int],
    pads: PadTable | None = None,
    batched: bool | None = None,
) -> dict[int, NetIslands]:
    """Islands of each net in ``nets`` (nets without pads are skipped).

    Two ways to the same islands (a test holds them equal): ``batched=True`` (and ``None``,
    the default) joins the items of many nets at once (:func:`_islands_batched`: one spatial
    join per kind of contact for a group of nets, no per-net numpy calls), in groups of about
    :data:`_GROUP_TRACKS` tracks; ``batched=False`` takes one net at a time (:func:`_islands`:
    a few dozen numpy calls and an items × items matrix per net).  Groups, not the whole board
    at once: the joins' temporaries stay a few tens of MB (they are reused, not fresh pages
    every time) and their sorts stay in cache.  A small board's nets are one group
    (docs/check-speed.md has the measurements behind the group size).
    """
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
    for net, geom_layer in _copper_shape_nets(board):
        if net in want:
            zones_by_net.setdefault(net, []).append(geom_layer)
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

    plan: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for net in want:
        pi = rows(p_order, p_sorted, net)
        if len(pi) == 0:
            continue
        ti = rows(t_order, t_sorted, net)
        vi = rows(v_order, v_sorted, net)
        plan.append((net, pi, ti, vi))
    if batched is None or batched:
        i = 0
        while i < len(plan):  # groups of whole nets, about _GROUP_TRACKS tracks each
            j, n_t = i, 0
            while j < len(plan) and (j == i or n_t + len(plan[j][2]) <= _GROUP_TRACKS):
                n_t += len(plan[j][2])
                j += 1
            out.update(_islands_batched(board, pads, plan[i:j], zones_by_net))
            i = j
        return out
    for net, pi, ti, vi in plan:
        out[net] = _islands(board, net, pads, pi, ti, vi, zones_by_net.get(net, []))
    return out


class _Shifted:
    """A net's local node numbers (pads, tracks, vias, zones, as :func:`_islands` numbers
    them) mapped onto the batched union-find's global ones, for :func:`_join_zones`."""

    def __init__(self, dsu: _DSU, local: tuple[int, int, int], base: tuple[int, ...]) -> None:
        self.dsu = dsu
        self.t0, self.v0, self.z0 = local
        self.base = base  # global first pad, track, via, zone node of the net

    def _g(self, x: int) -> int:
        if x < self.t0:
            return self.base[0] + x
        if x < self.v0:
            return self.base[1] + x - self.t0
        if x < self.z0:
            return self.base[2] + x - self.v0
        return self.base[3] + x - self.z0

    def union(self, a: int, b: int) -> None:
        self.dsu.union(self._g(a), self._g(b))


def _near_chords(
    c_mid: np.ndarray,
    c_half: np.ndarray,
    c_key: np.ndarray,
    p_xy: np.ndarray,
    p_key: np.ndarray,
    p_rad: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(chord, point) index pairs of the same key with ``|point - mid| <= half + p_rad``: every
    pair whose chord (centre ``c_mid``, half length plus its own reach ``c_half``) may touch the
    point's disc (radius ``p_rad``), and some that do not (the caller tests each exactly).

    The points are the queries (fewer than the chords, and one search radius each) for all
    chords up to the 99th percentile of ``c_half``; the longest 1 % query the points instead,
    so one long trace does not widen every point's search."""
    from .spatial_join import near_pairs

    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not len(c_mid) or not len(p_xy):
        return empty
    cut = percentile(c_half, 99.0)
    short = np.flatnonzero(c_half <= cut)
    long_ = np.flatnonzero(c_half > cut)
    cs: list[np.ndarray] = []
    ps: list[np.ndarray] = []
    if len(short):
        pq, ct = near_pairs(p_xy, p_key, p_rad + cut, c_mid[short], c_key[short])
        cs.append(short[ct])
        ps.append(pq)
    if len(long_):
        cq, pt = near_pairs(
            c_mid[long_], c_key[long_], c_half[long_] + float(p_rad.max()), p_xy, p_key
        )
        cs.append(long_[cq])
        ps.append(pt)
    if not cs:
        return empty
    return np.concatenate(cs), np.concatenate(ps)


def _islands_batched(
    board: Board,
    pads: PadTable,
    plan: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
    zones_by_net: dict[int, list[tuple[int, Any]]],
) -> dict[int, NetIslands]:
    """:func:`_islands` of every net of ``plan`` at once, with the same contacts and the same
    arithmetic on each (so the same islands, lengths and gaps), found by spatial joins on
    (net, layer) keys (:func:`.spatial_join.near_pairs`) instead of per-net distance matrices.

    Every join asks for a superset of the contacts (a radius that bounds the exact test, plus
    1 µm) and then applies the per-net test itself, element by element."""
    from .spatial_join import near_pairs

    if not plan:
        return {}
    t = board.tracks
    v = board.vias
    n_layers = max(int(board.layer_count), 1)
    pi_all = np.concatenate([p[1] for p in plan]).astype(np.int64)
    ti_all = np.concatenate([p[2] for p in plan]).astype(np.int64)
    vi_all = np.concatenate([p[3] for p in plan]).astype(np.int64)
    n_pl = np.array([len(p[1]) for p in plan], np.int64)
    n_tl = np.array([len(p[2]) for p in plan], np.int64)
    n_vl = np.array([len(p[3]) for p in plan], np.int64)
    zones = [zones_by_net.get(p[0], []) for p in plan]
    n_zl = np.array([len(z) for z in zones], np.int64)
    P, T, V = len(pi_all), len(ti_all), len(vi_all)
    T0, V0, Z0 = P, P + T, P + T + V
    dsu = _DSU(Z0 + int(n_zl.sum()))
    k_net = np.arange(len(plan), dtype=np.int64)  # the plan index stands for the net
    p_net = np.repeat(k_net, n_pl)
    t_net = np.repeat(k_net, n_tl)
    v_net = np.repeat(k_net, n_vl)
    margin = 1e-6
    p_xy = pads.xy[pi_all] if P else np.zeros((0, 2))
    p_layers = pads.layers[pi_all] if P else np.zeros((0, n_layers), bool)

    chord_len_first = np.zeros(0)
    chord_len_second = np.zeros(0)
    arc = np.zeros(0, bool)
    if T:
        s = np.asarray(t.start[ti_all], float).reshape(-1, 2)
        e = np.asarray(t.end[ti_all], float).reshape(-1, 2)
        m = np.asarray(t.mid[ti_all], float).reshape(-1, 2)
        w = np.asarray(t.width[ti_all], float)
        lay = np.asarray(t.layer[ti_all], np.int64)
        arc = ~np.isnan(m[:, 0])
        arc_rows = np.flatnonzero(arc)
        ca = np.concatenate([s, m[arc]])
        cb = np.concatenate([np.where(arc[:, None], m, e), e[arc]])
        owner = np.concatenate([np.arange(T), arc_rows])
        cw = w[owner]
        cl = lay[owner]
        c_net = t_net[owner]
        c_len = np.hypot(*(cb - ca).T)
        chord_len_first = c_len[:T]
        chord_len_second = c_len[T:]
        c_mid = 0.5 * (ca + cb)
        ends = np.concatenate([s, e])
        end_owner = np.concatenate([np.arange(T), np.arange(T)])
        end_layer = lay[end_owner]
        end_w = w[end_owner]
        end_net = t_net[end_owner]
        # 1: ends at the same point on the same layer (1 nm grid), per net
        # the per-net key with the (net, layer) in place of the layer: one int64 sort while
        # it fits (coordinates within ±2 m, as the per-net key assumes), else net, then key
        nl = end_net * n_layers + end_layer
        xr = np.round(ends[:, 0] * 1e3).astype(np.int64)
        yr = np.round(ends[:, 1] * 1e3).astype(np.int64)
        if int(nl.max()) < (1 << 62) // (4_000_001 * 4_000_001) - 1:
            key = (nl * 4_000_001 + xr) * 4_000_001 + yr
            order = np.argsort(key, kind="stable")
            same = key[order][1:] == key[order][:-1]
        else:
            key = (end_layer * 4_000_001 + xr) * 4_000_001 + yr
            order = np.lexsort((key, end_net))
            same = (key[order][1:] == key[order][:-1]) & (end_net[order][1:] == end_net[order][:-1])
        dsu.union_many(T0 + end_owner[order][:-1][same], T0 + end_owner[order][1:][same])
        # 2: an end no other end of its net shares, whose round cap touches a chord there
        shared = np.zeros(len(key), bool)
        shared[order[1:][same]] = True
        shared[order[:-1][same]] = True
        free = np.flatnonzero(~shared)
        c_half = 0.5 * c_len + 0.5 * cw  # a chord's copper lies within this of its middle
        if len(free):
            cq, ft = _near_chords(
                c_mid,
                c_half,
                c_net * n_layers + cl,
                ends[free],
                end_net[free] * n_layers + end_layer[free],
                0.5 * end_w[free] + _EPS + margin,
            )
            fe = free[ft]
            d = segment_distance(ends[fe], ca[cq], cb[cq])
            hit = (d <= (cw[cq] + end_w[fe]) / 2.0 + _TOUCH) & (end_layer[fe] == cl[cq])
            dsu.union_many(T0 + end_owner[fe[hit]], T0 + owner[cq[hit]])
        if P:
            # track-pad: the round end cap of a track touching the pad's copper ...
            # only ends and chords on a layer where their net has a pad can touch one
            pad_at = np.zeros((len(plan), n_layers), bool)
            pr, pc = np.nonzero(p_layers)
            pad_at[p_net[pr], pc] = True
            bound = pads.bound_radius[pi_all]
            cand = np.flatnonzero(pad_at[end_net, end_layer])
            pq, et = near_pairs(
                p_xy,
                p_net,
                bound + float(end_w.max()) / 2.0 + _EPS + margin,
                ends[cand],
                end_net[cand],
            )
            et = cand[et]
            ok = p_layers[pq, end_layer[et]]
            pq, et = pq[ok], et[ok]
            dend = pads.distance(pi_all[pq], ends[et]) <= end_w[et] / 2.0 + _TOUCH
            dsu.union_many(pq[dend], T0 + end_owner[et[dend]])
            # ... or the track's body over the pad (a flow-through route)
            on = np.flatnonzero(pad_at[c_net, cl])
            cq, pt = _near_chords(
                c_mid[on], c_half[on], c_net[on], p_xy, p_net, bound + _EPS + margin
            )
            cq = on[cq]
            ok = p_layers[pt, cl[cq]]
            cq, pt = cq[ok], pt[ok]
            dc = pads.segment_distance(pi_all[pt], ca[cq], cb[cq]) <= cw[cq] / 2.0 + _TOUCH
            dsu.union_many(pt[dc], T0 + owner[cq[dc]])
        if V:
            # track-via: the track's copper touches the via disc on a layer the via spans
            vp = np.asarray(v.pos[vi_all], float).reshape(-1, 2)
            vr = np.asarray(v.diameter[vi_all], float) / 2.0
            vs = np.asarray(v.start[vi_all], np.int64)
            ve = np.asarray(v.end[vi_all], np.int64)
            cq, vt = _near_chords(c_mid, c_half, c_net, vp, v_net, vr + _EPS + margin)
            d = segment_distance(vp[vt], ca[cq], cb[cq])
            hit = (d <= vr[vt] + cw[cq] / 2.0 + _TOUCH) & (cl[cq] >= vs[vt]) & (cl[cq] <= ve[vt])
            dsu.union_many(V0 + vt[hit], T0 + owner[cq[hit]])
    # pad-pad: overlapping pads of a net (alternative footprints, a pad inside a pad)
    qa, qb = pads.overlapping_pairs(pi_all, p_net)
    dsu.union_many(qa, qb)
    if V:
        vp = np.asarray(v.pos[vi_all], float).reshape(-1, 2)
        vr = np.asarray(v.diameter[vi_all], float) / 2.0
        vs = np.asarray(v.start[vi_all], np.int64)
        ve = np.asarray(v.end[vi_all], np.int64)
        rmax = float(vr.max())
        if P:
            # via-pad: the pad's copper within the via disc, on a layer both have
            bound = pads.bound_radius[pi_all]
            pq, vt = near_pairs(p_xy, p_net, bound + rmax + _EPS + margin, vp, v_net)
            near = pads.distance(pi_all[pq], vp[vt]) <= vr[vt] + _TOUCH
            pq, vt = pq[near], vt[near]
            idx = np.arange(n_layers)[None, :]
            both = (p_layers[pq] & (idx >= vs[vt, None]) & (idx <= ve[vt, None])).any(axis=1)
            dsu.union_many(pq[both], V0 + vt[both])
        # via-via: overlapping discs on a layer both span
        va, vb = near_pairs(vp, v_net, vr + rmax + _EPS + margin, vp, v_net)
        keep = va < vb
        va, vb = va[keep], vb[keep]
        dd = np.hypot(*(vp[va] - vp[vb]).T)
        touch = dd <= vr[va] + vr[vb] + _TOUCH
        common = np.maximum(vs[va], vs[vb]) <= np.minimum(ve[va], ve[vb])
        ok = touch & common
        dsu.union_many(V0 + va[ok], V0 + vb[ok])
    # zones, per net (their nets are few: planes, not channels)
    p_base = np.concatenate([[0], np.cumsum(n_pl)])
    t_base = np.concatenate([[0], np.cumsum(n_tl)])
    v_base = np.concatenate([[0], np.cumsum(n_vl)])
    z_base = np.concatenate([[0], np.cumsum(n_zl)])
    for k, (_net, pi, ti, vi) in enumerate(plan):
        if zones[k]:
            n_p, n_t, n_v = len(pi), len(ti), len(vi)
            shifted = _Shifted(
                dsu,
                (n_p, n_p + n_t, n_p + n_t + n_v),
                (int(p_base[k]), T0 + int(t_base[k]), V0 + int(v_base[k]), Z0 + int(z_base[k])),
            )
            _join_zones(board, pads, pi, ti, vi, zones[k], shifted, n_p, n_p + n_t,  # type: ignore[arg-type]
                        n_p + n_t + n_v)  # fmt: skip
    if T:
        _join_crossing_chords(dsu, T0, ca, cb, cw, c_net * n_layers + cl, c_net, owner)
    lab = dsu.labels()
    lab_l = lab.tolist()
    out: dict[int, NetIslands] = {}
    arc_cum = np.concatenate([[0], np.cumsum(arc)]) if T else np.zeros(1, np.int64)
    for k, (net, pi, ti, vi) in enumerate(plan):
        n_p, n_t, n_v = len(pi), len(ti), len(vi)
        p0, t0_, v0_, z0_ = int(p_base[k]), int(t_base[k]), int(v_base[k]), int(z_base[k])
        names = [pads.ref[p] for p in pi]
        groups: dict[int, list[str]] = {}
        for j in range(n_p):
            groups.setdefault(lab_l[p0 + j], []).append(names[j])
        with_pad = set(groups)
        rest = (
            lab_l[T0 + t0_ : T0 + t0_ + n_t]
            + lab_l[V0 + v0_ : V0 + v0_ + n_v]
            + lab_l[Z0 + z0_ : Z0 + z0_ + len(zones[k])]
        )
        loose = len(set(rest) - with_pad)
        fills = set(lab_l[Z0 + z0_ : Z0 + z0_ + len(zones[k])])
        dangling = len(set(rest[: n_t + n_v]) - with_pad - fills)
        length = 0.0
        if n_t:
            a0, a1 = int(arc_cum[t0_]), int(arc_cum[t0_ + n_t])
            length = float(
                np.concatenate([chord_len_first[t0_ : t0_ + n_t], chord_len_second[a0:a1]]).sum()
            )
        pos = (round(float(pads.xy[pi[0], 0]), 4), round(float(pads.xy[pi[0], 1]), 4))
        gap_mm = None
        if len(groups) > 1 or dangling:
            # where the route breaks: the closest two points of different islands
            pts = [pads.xy[pi]]
            comp_parts = [lab[p0 : p0 + n_p]]
            if n_t:
                pts += [np.asarray(t.start[ti], float), np.asarray(t.end[ti], float)]
                comp_parts += [lab[T0 + t0_ : T0 + t0_ + n_t]] * 2
            if n_v:
                pts.append(np.asarray(v.pos[vi], float).reshape(-1, 2))
                comp_parts.append(lab[V0 + v0_ : V0 + v0_ + n_v])
            xy = np.concatenate(pts)
            comp = np.concatenate(comp_parts)
            gap_mm, pos = _closest_gap(xy, comp, gap_mm, pos)
        out[net] = _net_islands(net, groups, (loose, dangling), length, n_t, n_v, gap_mm, pos)
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
        # every chord's box grown by half its width (+ 1 µm tolerance + 1 nm): its copper lies
        # inside, so the pre-tests below (a point farther than its own reach from the box
        # cannot touch the copper) are exact filters; the distances of the candidates they
        # keep are the same element-wise arithmetic as over all rows
        grow_c = cw / 2.0 + (_EPS + _SLACK)
        c_lo_x = np.minimum(ca[:, 0], cb[:, 0]) - grow_c
        c_hi_x = np.maximum(ca[:, 0], cb[:, 0]) + grow_c
        c_lo_y = np.minimum(ca[:, 1], cb[:, 1]) - grow_c
        c_hi_y = np.maximum(ca[:, 1], cb[:, 1]) + grow_c
        free = np.flatnonzero(~shared)
        if len(free):
            # candidates: the end within half its width of the chord's grown box, on the same
            # layer; then the exact distance
            fe = ends[free]
            fr = end_w[free, None] / 2.0
            fx, fy = fe[:, 0:1], fe[:, 1:2]
            near = (end_layer[free, None] == cl[None, :]) & (fx >= c_lo_x[None, :] - fr)
            near &= fx <= c_hi_x[None, :] + fr
            near &= fy >= c_lo_y[None, :] - fr
            near &= fy <= c_hi_y[None, :] + fr
            fa, cbi = np.nonzero(near)
            d = segment_distance(fe[fa], ca[cbi], cb[cbi])
            hit = d <= (cw[cbi] + end_w[free[fa]]) / 2.0 + _TOUCH
            fa, cbi = fa[hit], cbi[hit]
            dsu.union_many(T0 + end_owner[free[fa]], T0 + owner[cbi])
        # track-pad: a track end in the pad, or the pad centre in the track
        # (only the ends that can reach the pad are measured: its copper lies in the disc of
        # radius ``bound_radius`` round its centre)
        if n_p:
            reach_end = end_w / 2.0 + _TOUCH
            bound = pads.bound_radius[pi] + _SLACK
            for k, p in enumerate(pi):
                on = pads.layers[p][lay]  # tracks on a layer the pad has copper on
                if not on.any():
                    continue
                pxy = pads.xy[p]
                # the round end cap of the track touching the pad's copper
                r = reach_end + bound[k]
                cand = np.flatnonzero(
                    (np.abs(ends[:, 0] - pxy[0]) <= r) & (np.abs(ends[:, 1] - pxy[1]) <= r)
                )
                cand = cand[np.concatenate([on, on])[cand]]
                dend = cand[pads.distance(np.full(len(cand), p), ends[cand]) <= reach_end[cand]]
                # the track's body over the pad's copper (a flow-through route)
                b = bound[k]
                cc = np.flatnonzero(
                    (c_lo_x - b <= pxy[0])
                    & (pxy[0] <= c_hi_x + b)
                    & (c_lo_y - b <= pxy[1])
                    & (pxy[1] <= c_hi_y + b)
                )
                cc = cc[on[owner[cc]]]
                d_body = pads.segment_distance(np.full(len(cc), p), ca[cc], cb[cc])
                dc = cc[d_body <= cw[cc] / 2.0 + _TOUCH]
                js = unique(np.concatenate([end_owner[dend], owner[dc]]))
                dsu.union_many(np.full(len(js), k), T0 + js)
        # track-via: the track's copper touches the via disc on a layer the via spans
        if n_v:
            vp = np.asarray(v.pos[vi], float).reshape(-1, 2)
            vr = np.asarray(v.diameter[vi], float) / 2.0
            span = (cl[None, :] >= np.asarray(v.start[vi])[:, None]) & (
                cl[None, :] <= np.asarray(v.end[vi])[:, None]
            )
            # candidates first: the via centre within its radius of the chord's grown box,
            # then the exact distance on those
            vx, vy, vrr = vp[:, 0:1], vp[:, 1:2], vr[:, None]
            near = span & (vx >= c_lo_x[None, :] - vrr)
            near &= vx <= c_hi_x[None, :] + vrr
            near &= vy >= c_lo_y[None, :] - vrr
            near &= vy <= c_hi_y[None, :] + vrr
            va, vb = np.nonzero(near)
            d = segment_distance(vp[va], ca[vb], cb[vb])
            hit = d <= vr[va] + cw[vb] / 2.0 + _TOUCH
            dsu.union_many(V0 + va[hit], T0 + owner[vb[hit]])
    else:
        length = 0.0
    if n_v:
        vp = np.asarray(v.pos[vi], float).reshape(-1, 2)
        vr = np.asarray(v.diameter[vi], float) / 2.0
        vs = np.asarray(v.start[vi], np.int64)
        ve = np.asarray(v.end[vi], np.int64)
        # via-pad: every pad against every via of the net in one call
        # (pre-test: the via centre within the pad's bounding radius plus the via's)
        reach_v = vr[None, :] + (pads.bound_radius[pi] + (_EPS + _SLACK))[:, None]
        cand = np.flatnonzero(
            (
                (np.abs(vp[None, :, 0] - pads.xy[pi, 0][:, None]) <= reach_v)
                & (np.abs(vp[None, :, 1] - pads.xy[pi, 1][:, None]) <= reach_v)
            ).ravel()
        )
        if n_p and cand.size:
            kk, jj = np.divmod(cand, n_v)
            near = cand[pads.distance(pi[kk], vp[jj]) <= vr[jj] + _TOUCH]
            for kj in near.tolist():
                k, j = divmod(kj, n_v)
                layers = np.flatnonzero(pads.layers[pi[k]])
                if ((layers >= vs[j]) & (layers <= ve[j])).any():
                    dsu.union(k, V0 + int(j))
        # via-via
        dd = np.hypot(*(vp[:, None, :] - vp[None, :, :]).transpose(2, 0, 1))
        touch = dd <= vr[:, None] + vr[None, :] + _TOUCH
        common = np.maximum(vs[:, None], vs[None, :]) <= np.minimum(ve[:, None], ve[None, :])
        va, vb = np.nonzero(np.triu(touch & common, 1))
        dsu.union_many(V0 + va, V0 + vb)
    qa, qb = pads.overlapping_pairs(pi, np.zeros(n_p, np.int64))
    dsu.union_many(qa, qb)
    if zones:
        _join_zones(board, pads, pi, ti, vi, zones, dsu, T0, V0, Z0)
    if n_t:
        _join_crossing_chords(dsu, T0, ca, cb, cw, cl, np.zeros(len(cl), np.int64), owner)

    names = [pads.ref[p] for p in pi]
    lab = dsu.labels()
    groups: dict[int, list[str]] = {}
    for k in range(n_p):
        groups.setdefault(int(lab[k]), []).append(names[k])
    with_pad = set(groups)
    loose = len(set(lab[n_p:].tolist()) - with_pad)
    fills = set(lab[Z0:].tolist())
    dangling = len(set(lab[n_p:Z0].tolist()) - with_pad - fills)
    pos = (round(float(pads.xy[pi[0], 0]), 4), round(float(pads.xy[pi[0], 1]), 4))
    gap_mm = None
    if len(groups) > 1 or dangling:
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
        gap_mm, pos = _closest_gap(xy, comp, gap_mm, pos)
    return _net_islands(net, groups, (loose, dangling), length, n_t, n_v, gap_mm, pos)


def _join_crossing_chords(
    dsu: _DSU,
    T0: int,
    ca: np.ndarray,
    cb: np.ndarray,
    cw: np.ndarray,
    c_key: np.ndarray,
    c_net: np.ndarray,
    owner: np.ndarray,
) -> None:
    """Join two tracks whose copper touches away from their ends (two tracks of a net crossing
    in an X on a layer: latentpink's A1V0_VSC on In4.Cu), as KiCad does: its ``CN_VISITOR``
    collides the two tracks' whole shapes, not only their ends.

    Chords (``ca``-``cb``, width ``cw``, owned by track ``owner``; ``c_key`` = net and layer)
    are measured only in nets whose tracks are still in more than one piece after every other
    joint, and only against chords of another piece: a routed net is one piece by then, so a
    connected board costs one ``np.unique``."""
    if len(ca) < 2:
        return
    from .pad_table import _seg_seg

    comp = dsu.labels()[T0 + owner]
    nets, inv = np.unique(c_net, return_inverse=True)
    lo = np.full(len(nets), np.iinfo(np.int64).max, np.int64)
    hi = np.full(len(nets), -1, np.int64)
    np.minimum.at(lo, inv, comp)
    np.maximum.at(hi, inv, comp)
    cand = np.flatnonzero(lo[inv] != hi[inv])
    if len(cand) < 2:
        return
    mid = 0.5 * (ca[cand] + cb[cand])
    half = 0.5 * np.hypot(*(cb[cand] - ca[cand]).T) + 0.5 * cw[cand]
    key = c_key[cand]
    cq, pt = _near_chords(mid, half, key, mid, key, half + _EPS + _SLACK)
    a, b = cand[cq], cand[pt]
    keep = (a < b) & (comp[a] != comp[b])
    a, b = a[keep], b[keep]
    if len(a):
        hit = _seg_seg(ca[a], cb[a], ca[b], cb[b]) <= (cw[a] + cw[b]) / 2.0 + _TOUCH
        dsu.union_many(T0 + owner[a[hit]], T0 + owner[b[hit]])


def _closest_gap(
    xy: np.ndarray, comp: np.ndarray, gap_mm: float | None, pos: tuple[float, float] | None
) -> tuple[float | None, tuple[float, float] | None]:
    """Where the route breaks: the closest two points of different islands (their distance in
    mm and their midpoint); ``gap_mm``/``pos`` unchanged when no two islands have points."""
    if len(xy) > _GAP_MATRIX:
        ab = _closest_gap_tree(xy, comp)
        if ab is None:
            return gap_mm, pos
        a, b = ab
        dist = float(np.hypot(*(xy[a] - xy[b])))
    else:
        d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
        d[comp[:, None] == comp[None, :]] = np.inf
        a, b = np.unravel_index(int(np.argmin(d)), d.shape)
        dist = float(d[a, b])
    if np.isfinite(dist):
        gap_mm = round(dist, 3)
        pos = (
            round(float(xy[a, 0] + xy[b, 0]) / 2, 4),
            round(float(xy[a, 1] + xy[b, 1]) / 2, 4),
        )
    return gap_mm, pos


#: points above which :func:`_closest_gap` searches a k-d tree instead of a distance matrix
#: (a ground net of 50k track ends and vias: a 20 GB matrix)
_GAP_MATRIX = 2000


def _closest_gap_tree(xy: np.ndarray, comp: np.ndarray) -> tuple[int, int] | None:
    """Indexes of the closest two points of different islands, by one k-d tree query per
    island other than the largest (any such pair has a point outside the largest island)."""
    from scipy.spatial import cKDTree

    labels, counts = np.unique(comp, return_counts=True)
    if len(labels) < 2:
        return None
    best: tuple[float, int, int] | None = None
    for lab in labels[np.argsort(-counts, kind="stable")][1:].tolist():
        inside = np.flatnonzero(comp == lab)
        outside = np.flatnonzero(comp != lab)
        dist, j = cKDTree(xy[outside]).query(xy[inside])
        k = int(np.argmin(dist))
        if best is None or float(dist[k]) < best[0]:
            best = (float(dist[k]), int(inside[k]), int(outside[int(j[k])]))
    return None if best is None else (best[1], best[2])


def _net_islands(
    net: int,
    groups: dict[Any, list[str]],
    loose: tuple[int, int],
    length: float,
    n_t: int,
    n_v: int,
    gap_mm: float | None,
    pos: tuple[float, float] | None,
) -> NetIslands:
    """One net's islands record, its pad groups biggest first (the batched and per-net paths
    build it alike, so their results compare equal)."""
    return NetIslands(
        gap_mm=gap_mm,
        net=net,
        pad_groups=tuple(
            tuple(sorted(g)) for g in sorted(groups.values(), key=lambda g: (-len(g), g))
        ),
        loose=loose[0],
        dangling=loose[1],
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
    """Join each filled polygon of a net (``zones``: layer, ring) to what KiCad joins it to: a
    pad or a via whose copper touches it on its layer, a track with an end in it, another fill
    of the net on the layer that touches it.  Each polygon is tested against all candidates
    at once (a bounding-box pre-test, then one vectorised ``dwithin``)."""
    import shapely

    t = board.tracks
    v = board.vias
    # a fill is its ring; a copper graphic (:func:`_copper_shape_nets`) comes as its polygon
    polys = [shapely.polygons(g) if isinstance(g, np.ndarray) else g for _layer, g in zones]
    is_shape = np.array([not isinstance(g, np.ndarray) for _l, g in zones], bool)
    boxes = np.asarray(shapely.bounds(np.asarray(polys, dtype=object)), float).reshape(-1, 4)
    t_body = _track_bodies(t, ti) if is_shape.any() and len(ti) else None
    z_layer = np.array([layer for layer, _r in zones], np.int64)
    # candidates: (x, y, reach) of every pad, track end and via of the net
    p_xy = pads.xy[pi]
    p_reach = pads.bound_radius[pi] + _EPS
    p_geo = pads.geometries(pi) if len(pi) else np.zeros(0, object)
    t_xy = np.concatenate([np.asarray(t.start[ti], float), np.asarray(t.end[ti], float)])
    t_xy = t_xy.reshape(-1, 2)
    t_lay = np.tile(np.asarray(t.layer[ti], np.int64), 2)
    t_own = np.tile(np.arange(len(ti)), 2)
    t_pts = shapely.points(t_xy) if len(t_xy) else np.zeros(0, object)
    v_xy = np.asarray(v.pos[vi], float).reshape(-1, 2)
    v_rad = np.asarray(v.diameter[vi], float) / 2.0 + _EPS
    v_s = np.asarray(v.start[vi], np.int64)
    v_e = np.asarray(v.end[vi], np.int64)
    v_pts = shapely.points(v_xy) if len(v_xy) else np.zeros(0, object)

    def in_box(box: np.ndarray, xy: np.ndarray, reach: np.ndarray | float) -> np.ndarray:
        return (
            (xy[:, 0] >= box[0] - reach)
            & (xy[:, 0] <= box[2] + reach)
            & (xy[:, 1] >= box[1] - reach)
            & (xy[:, 1] <= box[3] + reach)
        )

    for zk in range(len(zones)):
        poly, box, layer = polys[zk], boxes[zk], int(z_layer[zk])
        shapely.prepare(poly)
        node = Z0 + zk
        # zone-zone: two fills of the net on one layer that touch (two zones of one net
        # poured over each other, a fill split by a priority zone and rejoined)
        zj = np.flatnonzero(
            (z_layer == layer)
            & (np.arange(len(zones)) > zk)
            & (boxes[:, 0] <= box[2] + _EPS)
            & (boxes[:, 2] >= box[0] - _EPS)
            & (boxes[:, 1] <= box[3] + _EPS)
            & (boxes[:, 3] >= box[1] - _EPS)
        )
        for j in zj.tolist():
            if shapely.dwithin(poly, polys[j], _EPS):
                dsu.union(node, Z0 + j)
        if len(pi):
            k = np.flatnonzero(pads.layers[pi, layer] & in_box(box, p_xy, p_reach))
            if len(k):
                k = k[np.asarray(shapely.dwithin(poly, p_geo[k], _EPS), bool)]
                for kk in k.tolist():
                    dsu.union(node, kk)
        if t_body is not None and is_shape[zk]:
            # a copper graphic joins a track whose copper touches it anywhere (KiCad collides
            # the two shapes, as two tracks)
            lines, half, t_layer = t_body
            k = np.flatnonzero(t_layer == layer)
            if len(k):
                k = k[np.asarray(shapely.dwithin(poly, lines[k], half[k] + _EPS), bool)]
                for kk in k.tolist():
                    dsu.union(node, T0 + kk)
        elif len(t_xy):
            # a track joins a fill where one of its ends lies in it (KiCad tests the track's
            # anchors, not its body: a fill that only grazes a track's side is not a joint)
            k = np.flatnonzero((t_lay == layer) & in_box(box, t_xy, _EPS))
            if len(k):
                k = k[np.asarray(shapely.dwithin(poly, t_pts[k], _EPS), bool)]
                for kk in unique(t_own[k]).tolist():
                    dsu.union(node, T0 + kk)
        if len(v_xy):
            k = np.flatnonzero((v_s <= layer) & (layer <= v_e) & in_box(box, v_xy, v_rad))
            if len(k):
                k = k[np.asarray(shapely.dwithin(poly, v_pts[k], v_rad[k]), bool)]
                for kk in k.tolist():
                    dsu.union(node, V0 + kk)


def _track_bodies(t: Any, ti: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tracks ``ti`` as shapely centre lines (an arc through its mid point), half widths and
    layers: their copper is each line grown by its half width."""
    import shapely

    s = np.asarray(t.start[ti], float).reshape(-1, 2)
    e = np.asarray(t.end[ti], float).reshape(-1, 2)
    m = np.asarray(t.mid[ti], float).reshape(-1, 2)
    mid = np.where(np.isnan(m), 0.5 * (s + e), m)
    lines = shapely.linestrings(np.stack([s, mid, e], 1))
    return lines, np.asarray(t.width[ti], float) / 2.0, np.asarray(t.layer[ti], np.int64)


def _copper_shape_nets(board: Board) -> list[tuple[int, tuple[int, Any]]]:
    """Each copper graphic of the board (:attr:`Board.copper_shapes`) with the net KiCad gives
    it, as ``(net, (layer, polygon))``; graphics that end with no net are left out.

    A graphic keeps the ``(net N)`` of the file.  One without (a KiCad 6 file) gets what
    KiCad's net propagation (``CN_CONNECTIVITY_ALGO::PropagateNets``) gives it: the graphics
    that touch on a layer form a piece; the piece takes the net of the pads it touches when
    they are all of one net (pads of two nets: a conflict, no net), else the net of the tracks
    and vias it touches.  Zones play no part in propagation, as in KiCad.  A board has a
    handful of graphics on copper, usually none: this costs nothing on the others."""
    shapes = getattr(board, "copper_shapes", ())
    if not shapes:
        return []
    import shapely

    geoms = np.array(
        [shapely.Polygon(sh.rings[0], list(sh.rings[1:])) for sh in shapes], dtype=object
    )
    nets = np.array([sh.net for sh in shapes], np.int64)
    layers = np.array([sh.layer for sh in shapes], np.int64)
    todo = np.flatnonzero(nets <= 0)
    if len(todo):
        nets = nets.copy()
        dsu = _DSU(len(shapes))
        for i in todo.tolist():
            for j in todo.tolist():
                if j > i and layers[i] == layers[j] and shapely.dwithin(geoms[i], geoms[j], _EPS):
                    dsu.union(i, j)
        lab = dsu.labels()
        pad_nets, item_nets = _touching_nets(board, geoms[todo], layers[todo])
        for root in unique(lab[todo]).tolist():
            members = [k for k, i in enumerate(todo.tolist()) if lab[i] == root]
            pn = {n for k in members for n in pad_nets[k]}
            if len(pn) > 1:
                continue  # pads of two nets: KiCad leaves the piece as it is
            it = [n for k in members for n in item_nets[k]]
            got = pn.pop() if pn else (max(set(it), key=it.count) if it else 0)
            nets[todo[members]] = got
    return [(int(nets[i]), (int(layers[i]), geoms[i])) for i in range(len(shapes)) if nets[i] > 0]


def _touching_nets(
    board: Board, geoms: np.ndarray, layers: np.ndarray
) -> tuple[list[set[int]], list[list[int]]]:
    """For each graphic: the nets of the pads whose copper touches it on its layer, and the
    nets of the tracks and vias that do (bounding boxes first, then shapely)."""
    import shapely

    box = np.asarray(shapely.bounds(geoms), float).reshape(-1, 4)
    lo, hi = box[:, :2].min(axis=0), box[:, 2:].max(axis=0)
    rows = [
        (fp, pad)
        for fp, pad in board.pads
        if pad.net
        and lo[0] - max(pad.width, pad.height) <= pad.x <= hi[0] + max(pad.width, pad.height)
        and lo[1] - max(pad.width, pad.height) <= pad.y <= hi[1] + max(pad.width, pad.height)
    ]
    pads = PadTable.from_board(SimpleNamespace(layer_count=board.layer_count, pads=rows))  # type: ignore[arg-type]
    p_geo = pads.geometries(np.arange(len(pads)))
    t, v = board.tracks, board.vias
    t_net = np.asarray(t.net, np.int64) if len(t) else np.zeros(0, np.int64)
    ti = np.flatnonzero(t_net > 0)
    lines, half, t_layer = _track_bodies(t, ti) if len(ti) else (np.zeros(0, object),) * 3
    v_net = np.asarray(v.net, np.int64) if len(v) else np.zeros(0, np.int64)
    vi = np.flatnonzero(v_net > 0)
    v_pts = shapely.points(np.asarray(v.pos[vi], float).reshape(-1, 2)) if len(vi) else []
    v_rad = np.asarray(v.diameter[vi], float) / 2.0 if len(vi) else np.zeros(0)
    v_s = np.asarray(v.start[vi], np.int64) if len(vi) else np.zeros(0, np.int64)
    v_e = np.asarray(v.end[vi], np.int64) if len(vi) else np.zeros(0, np.int64)
    pad_nets: list[set[int]] = []
    item_nets: list[list[int]] = []
    for k in range(len(geoms)):
        g, li = geoms[k], int(layers[k])
        shapely.prepare(g)
        on = np.flatnonzero(pads.layers[:, li]) if len(pads) else np.zeros(0, np.int64)
        hit = on[np.asarray(shapely.dwithin(g, p_geo[on], _EPS), bool)] if len(on) else on
        pad_nets.append({int(pads.net[h]) for h in hit.tolist()})
        found: list[int] = []
        tk = np.flatnonzero(t_layer == li) if len(ti) else np.zeros(0, np.int64)
        if len(tk):
            tk = tk[np.asarray(shapely.dwithin(g, lines[tk], half[tk] + _EPS), bool)]
            found += t_net[ti[tk]].tolist()
        vk = np.flatnonzero((v_s <= li) & (li <= v_e)) if len(vi) else np.zeros(0, np.int64)
        if len(vk):
            vk = vk[np.asarray(shapely.dwithin(g, np.asarray(v_pts)[vk], v_rad[vk] + _EPS), bool)]
            found += v_net[vi[vk]].tolist()
        item_nets.append(found)
    return pad_nets, item_nets
