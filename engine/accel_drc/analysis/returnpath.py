"""Where a trace's return current has solid copper under it, and where it does not.

The return current of a trace flows in its reference planes, right under it.  Which copper
layers those are is the stack-up owner's walk (:func:`~accel_drc.analysis.stackup.reference_walk`
over ``Analysis.plane_layers``); what copper they hold is the zone fills as the board stores
them (KiCad's ``filled_polygon``: fractured rings, holes bridged in).  This module answers, for
track segments, which stretches of their length lie over the filled copper of a reference
layer, with exact ends: the segments are sampled every :data:`STEP_MM` (a point-in-polygon test
on a prepared polygon costs about a microsecond once its index is built, 20-30 ms for a
100k-vertex plane fill, where one exact GEOS overlay of a line with such a fill costs tens of
milliseconds per line and fails on the bridges; testing first which segments touch a fill's
boundary, to sample only those, cost a second index per fill and saved nothing on vme-wren), and every change
between two samples is bisected to :data:`EDGE_TOL_MM`.  A void shorter than the step can be
missed; the check judges breaks of at least ``min_break_mm`` ≥ 2 steps only, which are never
missed.

The fills are parsed only when a check asks (the reader keeps them lazy), and only those of the
reference layers of the nets asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import unique
from .railnames import is_ground, is_power

if TYPE_CHECKING:
    from . import Analysis

#: sample spacing along a segment (mm)
STEP_MM = 0.5
#: the ends of a break are found to this (mm)
EDGE_TOL_MM = 5e-4


@dataclass(frozen=True)
class Break:
    """A stretch of segment ``row`` not over the filled copper of reference layer ``layer``."""

    row: int
    layer: int
    t0: float  # position along the segment, mm from its start
    t1: float
    start: tuple[float, float]
    end: tuple[float, float]
    kind: str  # crossing (filled on both sides: a void or split) | edge (runs off the plane)

    @property
    def length_mm(self) -> float:
        return self.t1 - self.t0


class PlaneFills:
    """The prepared fill polygons of the plane nets on each reference layer (built on demand)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._layers: dict[int, list[Any]] = {}
        self._bounds: dict[int, np.ndarray] = {}
        #: the order each layer's polygons are tried in (see :meth:`covered`)
        self._order: dict[int, np.ndarray] = {}
        self._nets: dict[int, frozenset[int]] = {}
        self._rails: dict[int, bool] = {}
        #: each layer's fill rings, and the layer whose identical fill it shares
        self._rings: dict[int, list[np.ndarray]] = {}
        self._canon: dict[int, int] = {}
        #: answers of :meth:`covered` by (layer, the points): the same trace pieces over two
        #: alike planes (a layer between two copies of GND) ask the same question twice
        self._answers: dict[tuple[int, bytes, bytes], np.ndarray] = {}

    def nets_of(self, layer: int) -> frozenset[int]:
        """Nets whose zones on ``layer`` count as reference copper: the layer's plane nets, and
        any ground or supply net (found once per layer: every rule and via asks)."""
        got = self._nets.get(layer)
        if got is None:
            got = self._nets[layer] = self._find_nets(layer)
        return got

    def _find_nets(self, layer: int) -> frozenset[int]:
        board = self.analysis.board
        named = {n for n, _f in self.analysis.plane_layers.get(layer, ())}
        return frozenset(
            z.net
            for z in board.zones
            if not z.keepout
            and z.net
            and layer in z.layers
            and (board.nets[z.net] in named or self._rail(z.net))
        )

    def _rail(self, net: int) -> bool:
        """Whether ``net`` is a ground or supply by name (once per net: every layer asks of
        every zone)."""
        got = self._rails.get(net)
        if got is None:
            name = self.analysis.board.nets[net]
            got = self._rails[net] = is_ground(name) or is_power(name)
        return got

    def polygons(self, layer: int) -> list[Any]:
        """The prepared fill polygons of ``layer`` (built once; a layer whose fills equal an
        earlier layer's shares that layer's)."""
        got = self._layers.get(layer)
        if got is not None:
            return got
        board = self.analysis.board
        nets = self.nets_of(layer)
        zones = [z for z in board.zones if z.net in nets and layer in z.layers]
        rings = [
            np.asarray(ring, dtype=float)
            for z in zones
            for ring in z.filled.get(layer, ())
            if len(ring) >= 3
        ]
        for other, seen in self._rings.items():
            if _same_rings(rings, seen):
                # a plane poured alike on several layers: one set of prepared polygons, so one
                # point index and one answer per query for all of them
                self._canon[layer] = self._canon.get(other, other)
                got = self._layers[layer] = self._layers[other]
                return got
        self._rings[layer] = rings
        # each zone's polygons as the zone keeps them (:meth:`Zone.fill_polygons`): the KiCad
        # plugin builds them, and their point indexes, while KiCad sends the footprints
        got = self._layers[layer] = [poly for z in zones for poly in z.fill_polygons(layer)]
        return got

    def has_fill(self, layer: int) -> bool:
        return bool(self.polygons(layer))

    def covered(self, layer: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether each point lies on the filled copper of ``layer``.  Only the fill polygons
        whose box meets the points' box are tried (the boxes of a layer's polygons are found
        once: a plane is hundreds of fill polygons and the checks ask hundreds of times), the
        smallest first, and a point one holds is not tried again (the answer is whether any
        holds it: the order changes the cost, never the answer)."""
        import shapely

        out = np.zeros(len(x), bool)
        polys = self.polygons(layer)
        if not len(x) or not polys:
            return out
        canon = self._canon.get(layer, layer)
        key = (canon, np.ascontiguousarray(x).tobytes(), np.ascontiguousarray(y).tobytes())
        known = self._answers.get(key)
        if known is not None:
            return known.copy()
        bb = self._bounds.get(canon)
        if bb is None:
            bb = self._bounds[canon] = np.asarray(shapely.bounds(polys), dtype=float).reshape(-1, 4)
            # the smallest polygons first: a point a small one holds (a supply island, a
            # split plane's part) is not tested again against the plane around it, whose
            # test costs with its vertices (vme-wren's In5: 12 ms of tests become 4.4 ms)
            self._order[canon] = np.argsort(shapely.get_num_coordinates(polys), kind="stable")
        x_lo, x_hi, y_lo, y_hi = x.min(), x.max(), y.min(), y.max()
        near = (bb[:, 0] <= x_hi) & (bb[:, 2] >= x_lo) & (bb[:, 1] <= y_hi) & (bb[:, 3] >= y_lo)
        order = self._order[canon]
        for i in order[near[order]].tolist():
            x0, y0, x1, y1 = bb[i]
            sel = ~out & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
            if sel.any():
                out[sel] = shapely.contains_xy(polys[i], x[sel], y[sel])
        self._answers[key] = out.copy()
        return out


def _same_rings(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Whether two layers' fill rings are the same, point for point."""
    return len(a) == len(b) and all(
        p.shape == q.shape and np.array_equal(p, q) for p, q in zip(a, b)
    )


def warm_fills(zones: Sequence[Any], net_names: Sequence[str]) -> None:
    """Build the prepared fill polygons (:meth:`Zone.fill_polygons`) of every ground and
    supply zone, with their point indexes: what :class:`PlaneFills` reads (it also counts a
    stack-up plane's net of another name, built when asked).  For a caller that has the zones
    before the rest of the board: the KiCad plugin runs it while KiCad sends the footprints,
    so the check's return-path tests find the indexes built (vme-wren: about 60 ms of the
    click's critical path)."""
    for z in zones:
        if z.keepout or not 0 < z.net < len(net_names):
            continue
        name = net_names[z.net]
        if is_ground(name) or is_power(name):
            for layer in z.filled:
                z.fill_polygons(layer, index=True)


def plane_fills(analysis: Analysis) -> PlaneFills:
    """The run's :class:`PlaneFills` (one per analysis)."""
    got = analysis.memo.get("plane_fills")
    if got is None:
        got = analysis.memo["plane_fills"] = PlaneFills(analysis)
    return got  # type: ignore[no-any-return]


def breaks(
    fills: PlaneFills, layer: int, start: np.ndarray, end: np.ndarray, rows: Sequence[int]
) -> tuple[np.ndarray, list[Break]]:
    """(covered length per segment, the breaks) of the straight segments ``start``→``end``
    (``(n, 2)``; ``rows`` their track rows) over reference layer ``layer``."""
    vec = end - start
    length = np.hypot(vec[:, 0], vec[:, 1])
    n_s = np.maximum(np.ceil(length / STEP_MM).astype(np.int64), 1) + 1
    seg = np.repeat(np.arange(len(start)), n_s)
    first = np.concatenate(([0], np.cumsum(n_s)[:-1]))
    k = np.arange(len(seg)) - np.repeat(first, n_s)
    frac = k / np.repeat(n_s - 1, n_s)
    t = frac * length[seg]
    px = start[seg, 0] + frac * vec[seg, 0]
    py = start[seg, 1] + frac * vec[seg, 1]
    cov = fills.covered(layer, px, py)
    covered = np.zeros(len(start))
    out: list[Break] = []
    # per segment: runs of equal coverage between samples, the changes bisected
    change = np.flatnonzero((cov[1:] != cov[:-1]) & (seg[1:] == seg[:-1]))
    edge_t = _bisect(fills, layer, start, vec, length, seg[change], t[change], t[change + 1],
                     cov[change])  # fmt: skip
    cuts: dict[int, list[tuple[float, bool]]] = {}
    for i, c in enumerate(change.tolist()):
        cuts.setdefault(int(seg[c]), []).append((float(edge_t[i]), bool(cov[c + 1])))
    first_cov = cov[first]
    # a segment with no change over its length is wholly covered or wholly a break: only the
    # others, and the uncovered, are walked
    covered[:] = np.where(first_cov, length, 0.0)
    walk = sorted(set(cuts) | set(np.flatnonzero(~first_cov).tolist()))
    for s in walk:
        ln = float(length[s])
        state = bool(first_cov[s])
        pos = 0.0
        runs: list[tuple[float, float, bool]] = []
        for te, new in cuts.get(s, ()):
            runs.append((pos, te, state))
            pos, state = te, new
        runs.append((pos, ln, state))
        covered[s] = sum(b - a for a, b, c in runs if c)
        for j, (a, b, c) in enumerate(runs):
            if c or b - a <= EDGE_TOL_MM:
                continue
            inner = 0 < j < len(runs) - 1
            u0, u1 = a / ln if ln else 0.0, b / ln if ln else 0.0
            out.append(
                Break(
                    int(rows[s]),
                    layer,
                    round(a, 4),
                    round(b, 4),
                    (
                        round(float(start[s, 0] + u0 * vec[s, 0]), 4),
                        round(float(start[s, 1] + u0 * vec[s, 1]), 4),
                    ),
                    (
                        round(float(start[s, 0] + u1 * vec[s, 0]), 4),
                        round(float(start[s, 1] + u1 * vec[s, 1]), 4),
                    ),
                    "crossing" if inner else "edge",
                )  # fmt: skip
            )
    return covered, out


def _bisect(
    fills: PlaneFills,
    layer: int,
    start: np.ndarray,
    vec: np.ndarray,
    length: np.ndarray,
    seg: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    lo_cov: np.ndarray,
) -> np.ndarray:
    """The position of each coverage change between ``lo`` and ``hi`` (vectorised bisection)."""
    lo, hi = lo.astype(float).copy(), hi.astype(float).copy()
    if not len(lo):
        return lo
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(length[seg] > 0, 1.0 / length[seg], 0.0)
    while float(np.max(hi - lo)) > EDGE_TOL_MM:
        mid = 0.5 * (lo + hi)
        u = mid * scale
        c = fills.covered(layer, start[seg, 0] + u * vec[seg, 0], start[seg, 1] + u * vec[seg, 1])
        same = c == lo_cov
        lo = np.where(same, mid, lo)
        hi = np.where(same, hi, mid)
    return 0.5 * (lo + hi)


def _key(p: tuple[float, float]) -> tuple[int, int]:
    """A point to the micrometre (segment ends that meet share it)."""
    return (round(p[0] * 1000), round(p[1] * 1000))


class _EndCounts:
    """How many of a net's segment ends lie at a point, to the micrometre as :func:`_key`
    finds it (``np.round`` and ``round`` both round half to even).  Counted for the points
    asked about only (a group's free ends: a few per net), not for every end of the net."""

    def __init__(self, start: np.ndarray, end: np.ndarray) -> None:
        self._start, self._end = start, end
        self._um: np.ndarray | None = None

    def count(self, key: tuple[int, int]) -> int:
        if self._um is None:
            pts = np.concatenate([self._start, self._end]).reshape(-1, 2)
            self._um = np.round(pts * 1000).astype(np.int64)
        um = self._um
        return int(np.count_nonzero((um[:, 0] == key[0]) & (um[:, 1] == key[1])))


def join_breaks(got: Sequence[Break], start: np.ndarray, end: np.ndarray) -> list[Break]:
    """The breaks of one net on one layer over one reference, joined across the segment ends
    where a trace's void continues into the next segment; each joined run is a *crossing* when
    every free end of it lies where the trace goes on over copper, an *edge* when one ends at
    an end of the trace (a pad or a via: the trace ran off the plane).  ``start``/``end``: the
    net's segments on that layer (how many segments meet at each point)."""
    if not got:
        return []
    ends = _EndCounts(start, end)
    parent = list(range(len(got)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    at: dict[tuple[int, int], list[int]] = {}
    for i, b in enumerate(got):
        for q in (b.start, b.end):
            at.setdefault(_key(q), []).append(i)
    for idx in at.values():
        for j in idx[1:]:
            parent[find(j)] = find(idx[0])
    groups: dict[int, list[int]] = {}
    for i in range(len(got)):
        groups.setdefault(find(i), []).append(i)
    out = []
    for members in groups.values():
        bs = [got[i] for i in members]
        free = [q for b in bs for q in (b.start, b.end) if len(at[_key(q)]) == 1]
        # a free end in the middle of a segment, or where another segment goes on, lies next
        # to copper; one at a point only its own segment reaches is an end of the trace
        trace_end = any(ends.count(_key(q)) == 1 for q in free)
        first = max(bs, key=lambda b: b.length_mm)
        a, z = (free + [first.start, first.end])[:2] if len(free) >= 2 else (first.start, first.end)
        total = sum(b.length_mm for b in bs)
        out.append(
            Break(
                first.row,
                first.layer,
                0.0,
                round(total, 4),
                a,
                z,
                "edge" if trace_end or not free else "crossing",
            )  # fmt: skip
        )
    return out


@dataclass(frozen=True)
class Approach:
    """A stretch of segment ``row`` over the copper of reference layer ``layer`` but within
    ``keepout`` of that plane's edge, on one side: ``near_mm`` is the nearest probe found off
    the plane (a quarter of the keep-out at best)."""

    row: int
    layer: int
    t0: float
    t1: float
    start: tuple[float, float]
    end: tuple[float, float]
    near_mm: float

    @property
    def length_mm(self) -> float:
        return self.t1 - self.t0


#: sample spacing of the edge-approach probes (mm): the shortest stretch judged is twice the
#: keep-out (4.6 mm at 90 mil), so 1 mm finds every one to within a millimetre, at half the
#: point tests of the break sampling
PROBE_STEP_MM = 1.0


def approaches(
    fills: PlaneFills,
    layer: int,
    start: np.ndarray,
    end: np.ndarray,
    rows: Sequence[int],
    keepout: float,
    skip: np.ndarray | None = None,
) -> list[Approach]:
    """The stretches of the segments ``start``→``end`` that run over the copper of reference
    layer ``layer`` within ``keepout`` of its edge (sampled every :data:`PROBE_STEP_MM`, probed
    across the segment on both sides; samples inside a ``skip`` box (k, 4) are not probed).  A side is near an edge where the probe at ``keepout``
    and the one at twice that both lie off the copper: a plane edge, a split or a void wider
    than the keep-out; a small void (another net's antipad) that the far probe passes is not
    an edge.  The nearest off-copper probe of {¼, ½, ¾, 1} × ``keepout`` is the distance."""
    vec = end - start
    length = np.hypot(vec[:, 0], vec[:, 1])
    ok = length > 0
    n_s = np.maximum(np.ceil(length / PROBE_STEP_MM).astype(np.int64), 1) + 1
    seg = np.repeat(np.arange(len(start)), n_s)
    first = np.concatenate(([0], np.cumsum(n_s)[:-1]))
    k = np.arange(len(seg)) - np.repeat(first, n_s)
    frac = k / np.repeat(n_s - 1, n_s)
    px = start[seg, 0] + frac * vec[seg, 0]
    py = start[seg, 1] + frac * vec[seg, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        nx = np.where(ok, -vec[:, 1] / length, 0.0)[seg]
        ny = np.where(ok, vec[:, 0] / length, 0.0)[seg]
    want = ok[seg]
    for x0, y0, x1, y1 in skip if skip is not None else ():
        want &= ~((px >= x0) & (px <= x1) & (py >= y0) & (py <= y1))
    on = np.zeros(len(seg), bool)
    on[want] = fills.covered(layer, px[want], py[want])
    near = np.full(len(seg), np.inf)
    idx = np.flatnonzero(on)
    # both sides in one call per probe distance (each call walks the layer's fill polygons)
    idx, side = np.concatenate([idx, idx]), np.repeat([1.0, -1.0], len(idx))

    def off(sel: np.ndarray, d: float) -> np.ndarray:
        i = idx[sel]
        return ~fills.covered(layer, px[i] + side[sel] * d * nx[i], py[i] + side[sel] * d * ny[i])

    far = np.flatnonzero(off(np.arange(len(idx)), keepout))
    far = far[off(far, 2 * keepout)]
    got = np.full(len(far), keepout)
    for q in (0.75, 0.5, 0.25):
        got = np.where(off(far, q * keepout), q * keepout, got)
    np.minimum.at(near, idx[far], got)
    hit = np.isfinite(near)
    out: list[Approach] = []
    t = frac * length[seg]
    # runs of consecutive near samples within one segment
    edges = np.flatnonzero(np.diff(np.concatenate(([0], hit.astype(np.int8), [0]))))
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        for s in unique(seg[a:b]).tolist():
            sel = np.arange(a, b)[seg[a:b] == s]
            t0, t1 = float(t[sel[0]]), float(t[sel[-1]])
            if t1 - t0 <= EDGE_TOL_MM:
                continue
            out.append(
                Approach(
                    int(rows[s]),
                    layer,
                    round(t0, 4),
                    round(t1, 4),
                    (round(float(px[sel[0]]), 4), round(float(py[sel[0]]), 4)),
                    (round(float(px[sel[-1]]), 4), round(float(py[sel[-1]]), 4)),
                    float(near[sel].min()),
                )
            )
    return out
