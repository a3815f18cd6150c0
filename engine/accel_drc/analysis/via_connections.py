"""Which layers each barrel really connects on, decided as KiCad decides it (connectivity
anchors): a track end inside the via's pad, a pad of the net containing the via centre, a filled
zone of the net touching the pad disc, or another touching via of the net (stacked vias).  The
rules are in :mod:`accel_drc.analysis.via_stubs`' docstring; :func:`find_connections` applies
them to every barrel."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import unique
from ..concurrency import Background, workers
from ..geometry import arc_distance, circles_through, segment_distance
from ..model import Board
from .pad_table import EPS_MM, PadTable, shapely_dwithin, track_lines
from .spatial_join import near_pairs


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
    shapely.prepare(polys[unique(pj)])
    hit = np.zeros(len(qi), bool)
    geo = has_shape[qi]
    if geo.any():
        hit[geo] = shapely.dwithin(polys[pj[geo]], shapes[qi[geo]], EPS_MM)
    pt = ~geo
    if pt.any():
        inside = shapely.contains_xy(polys[pj[pt]], xy[qi[pt], 0], xy[qi[pt], 1])
        rest = np.flatnonzero(pt)[~inside]
        hit[np.flatnonzero(pt)[inside]] = True
        if len(rest):
            pts = shapely.points(xy[qi[rest]])
            hit[rest] = shapely.dwithin(polys[pj[rest]], pts, rad[qi[rest]] + EPS_MM)
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
    ai, bi = near_pairs(vias.pos, vias.net, via_r + rmax + EPS_MM, vias.pos, vias.net)
    d = np.hypot(*(vias.pos[ai] - vias.pos[bi]).T)
    ok = (ai < bi) & (d <= via_r[ai] + via_r[bi] + EPS_MM)
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
    touch = (layers >= lo) & (layers <= hi) & (d[:, None] <= rad[ai] + rad[bi] + EPS_MM)
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
            ti, vi = near_pairs(t_c, t_net, t_r + float(via_r.max()) + EPS_MM, vias.pos, vias.net)
            lay = t_layer[ti]
            ok = (lay >= span_lo[vi]) & (lay <= span_hi[vi])
            ti, vi, lay = ti[ok], vi[ok], lay[ok]
            d = np.empty(len(ti))
            a_ = is_arc[ti]
            p = vias.pos[vi]
            d[~a_] = segment_distance(p[~a_], tr.start[ti[~a_]], tr.end[ti[~a_]])
            if a_.any():
                d[a_] = arc_distance(p[a_], tr.start[ti[a_]], tr.mid[ti[a_]], tr.end[ti[a_]])
            hit = d <= via_r[vi] + tr.width[ti] / 2.0 + EPS_MM
            connected[vi[hit], lay[hit]] = True
        if npth:
            bound = pads.bound_radius[pth_idx]
            ti, pi = near_pairs(
                t_c, t_net, t_r + float(bound.max()) + EPS_MM, pads.xy[pth_idx], pads.net[pth_idx]
            )
            lay = t_layer[ti]
            ok = pads.layers[pth_idx[pi], lay]
            ti, pi, lay = ti[ok], pi[ok], lay[ok]
            if len(ti):
                lines = track_lines(tr, ti)
                hit = shapely_dwithin(pth_geoms[pi], lines, tr.width[ti] / 2.0 + EPS_MM)
                connected[nv + pi[hit], lay[hit]] = True

    # 2. pads of the same net whose copper touches the via pad (via-in-pad, or beside it)
    if len(pads) and nv:
        pi, vi = near_pairs(
            pads.xy, pads.net, pads.bound_radius + float(via_r.max()) + EPS_MM, vias.pos, vias.net
        )
        ok = pads.distance(pi, vias.pos[vi]) <= via_r[vi] + EPS_MM
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
