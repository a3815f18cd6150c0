"""PDN plane pairs: where a rail's fills face a ground fill, and the capacitance between them.

Model: a *plane pair* is a rail's fill on one copper layer and the ground fills on the adjacent
copper layer (a dielectric between, no copper), with the overlap of their filled areas as a
parallel-plate capacitor, C = ε0·εr·A/d (:func:`plane_capacitance`), εr the series value of the
dielectric's slices (d/εr = Σ tₖ/εrₖ, :func:`dielectric_between`).  Fringing is ignored (the
planes are 10²–10⁴ times wider than they are apart): a lower bound of the plate capacitance.

Units: mm and mm² for geometry (KiCad's frame), F for capacitance, εr dimensionless.

How the overlap is measured: KiCad writes a fill's holes into its outline with zero-width
bridges; each zone's fill is made valid once (:meth:`accel_drc.model.Zone.region`), a layer's
ground fills are united once per fill content (:class:`_LazyRegions`), and the area of
rail ∩ ground is summed over shells and holes (:func:`_holed_overlap_area`, inclusion–
exclusion: within 1e-12 relative of GEOS's overlay, tested against it on vme-wren, the Thor
carrier and synthetic planes), or by the overlay itself (:func:`_overlay_area`, cut into
quadrants) where that sum is too near its own rounding to be trusted.  A rail plane much larger
than the ground islands beside it is first tested on the file's rings (:func:`_misses`).

Limits: only adjacent layers pair (a plane two dielectrics away is shielded by the one between);
a plane pair across a dielectric the stack-up does not describe has no capacitance (the rail's
``missing`` says what to declare).

References: the parallel-plate capacitance of power/ground planes as the board's high-frequency
decoupling: Smith et al. 1999 (``smith1999`` in ``rules/references.yaml``), and docs/geometry.md
"The network".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...arrays import isin
from ...concurrency import workers
from ...model import Board, Zone
from ..railnames import is_ground, is_power

log = logging.getLogger(__name__)

EPS0 = 8.8541878128e-12  # F/m


# ---------------------------------------------------------------------------------------------
# geometry: plane pairs
# ---------------------------------------------------------------------------------------------


def layer_region(zones: Sequence[Zone], layer: int) -> Any:
    """Union of the filled polygons of ``zones`` on ``layer`` as one valid shapely geometry
    (None if none of them is filled there).  Each zone's own fill comes from
    :meth:`Zone.region` (made valid once, cached)."""
    import shapely

    parts = [g for g in (z.region(layer) for z in zones) if g is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else shapely.union_all(parts)


def warm_regions(
    zones: Sequence[Zone], net_names: Sequence[str], then: Callable[[], None] | None = None
) -> threading.Thread:
    """Start making the plane fills valid (:meth:`Zone.region`) on a daemon thread, for the
    fills the PDN check will make valid (:func:`regions_to_warm`); then ``then`` on the same
    thread (another head start: one thread, so the warm-ups never take both cores from KiCad).

    For a caller that has the zones before it has the rest of the board: the KiCad plugin
    starts this as soon as the zones arrive and asks KiCad for the footprints meanwhile, so the
    GEOS work is done while the socket would sit idle.  Same values as computing them later
    (the cache is per zone and layer, computed once)."""

    def run() -> None:
        try:
            # what to warm is read from the fills, on this thread: a reader's lazy fills are
            # parsed here, not on the caller's
            for z, li in regions_to_warm(zones, net_names):
                z.region(li)
        except Exception:  # only a head start: the check computes (and reports) it itself
            log.debug("warming zone regions failed", exc_info=True)
        if then is not None:
            try:
                then()
            except Exception:  # likewise
                log.debug("warming after the zone regions failed", exc_info=True)

    t = threading.Thread(target=run, name="accel-drc zone regions", daemon=True)
    t.start()
    return t


def regions_to_warm(zones: Sequence[Zone], net_names: Sequence[str]) -> list[tuple[Zone, int]]:
    """(zone, layer) of the fills :func:`plane_pairs` will make valid, biggest first, as far as
    the zones alone tell (the rails' links and a config's ``rails:`` need the rest of the
    board): what :func:`warm_regions` builds ahead, and nothing the check would not build.

    - a power net's fill on a layer, when the ground fill of an adjacent layer meets its box and
      is not so much smaller (:data:`_MISS_RATIO`) that the check first tries :func:`_misses`
      (vme-wren: the 146k-vertex P3V3 plane on In5 beside the analog-ground islands of In4,
      which the check never builds);
    - a ground layer's fills when a power fill that meets its box faces it, and only on the
      lowest layer of those with the same fill content (:meth:`_LazyRegions.canonical`:
      vme-wren's GND fills on In3, In8 and In10 are byte-identical, one union serves all three).
    Warming the rest cost the plugin's click on vme-wren 0.27 s of CPU for nothing."""

    def name(z: Zone) -> str:
        return net_names[z.net] if 0 < z.net < len(net_names) else ""

    gnd = [z for z in zones if not z.keepout and is_ground(name(z))]  # as the check's _LazyRegions
    by_net: dict[tuple[str, int], list[Zone]] = {}
    for z in zones:
        nm = name(z)
        if not z.keepout and nm and not is_ground(nm) and is_power(nm):
            for li, rings in z.filled.items():
                if rings:
                    by_net.setdefault((nm, li), []).append(z)
    if not gnd or not by_net:
        return []
    n = 1 + max([li for z in gnd for li in z.filled] + [li for _nm, li in by_net])
    ground = _LazyRegions(gnd, n)  # its keys, boxes and sizes only: no region is built here
    out: list[tuple[int, Zone, int]] = []
    grounds: set[int] = set()
    for (_nm, li), zs in by_net.items():
        box = _raw_bounds(zs, li)
        size = sum(len(r) for z in zs for r in z.filled.get(li, ()) if len(r) >= 3)
        warm = False
        for g in (li - 1, li + 1):
            gb = ground.box(g) if 0 <= g < n else None
            if box is None or gb is None or _disjoint(box, gb):
                continue
            grounds.add(ground.canonical(g))  # built either way (also for the _misses test)
            warm = warm or ground.size(g) * _MISS_RATIO >= size
        if warm:
            out += [(size, z, li) for z in zs]
    for g in grounds:
        out += [(ground.size(g), z, g) for z in gnd if z.filled.get(g)]
    out.sort(key=lambda t: -t[0])
    return [(z, li) for _size, z, li in out]


@dataclass(frozen=True)
class PlanePair:
    rail_layer: str
    ground_layer: str
    area_mm2: float
    thickness_mm: float | None
    epsilon_r: float | None  # effective (series) εr of the dielectric between them
    dielectric: str  # names of the dielectric layers
    capacitance_f: float | None
    dielectric_names: tuple[str, ...] = ()  # stack-up names of the dielectrics between them


def ground_layers(board: Board, ground_nets: set[int]) -> dict[int, Any]:
    """Layer -> union of the ground fills on it (computed once for all rails)."""
    gnd_z = [z for z in board.zones if z.net in ground_nets and not z.keepout]
    return {li: layer_region(gnd_z, li) for li in range(board.layer_count)} if gnd_z else {}


def _raw_bounds(zones: Sequence[Zone], layer: int) -> tuple[float, float, float, float] | None:
    """Bounding box of the fill rings of ``zones`` on ``layer`` as the file gives them (None if
    none has a ring of 3 points there): the valid region :func:`layer_region` makes of them lies
    inside it, so two disjoint boxes mean an empty overlap without building either region."""
    box: list[float] | None = None
    for z in zones:
        for r in z.filled.get(layer, ()):
            if len(r) >= 3:
                a = np.asarray(r, dtype=float)
                # column by column: numpy's min(axis=0) over an (n, 2) array is 30× slower
                xs, ys = a[:, 0], a[:, 1]
                b = [float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())]
                if box is None:
                    box = b
                else:
                    box = [min(box[0], b[0]), min(box[1], b[1]),
                           max(box[2], b[2]), max(box[3], b[3])]  # fmt: skip
    return None if box is None else (box[0], box[1], box[2], box[3])


def _disjoint(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1]


def _content_key(zones: Sequence[Zone], layer: int) -> bytes | None:
    """A digest of the fill rings of ``zones`` on ``layer``, zone by zone (None if there are
    none): two layers with the same key get the same :func:`layer_region` from GEOS (same input,
    same deterministic operations), so it is built once.  A stack-up often repeats one ground
    fill on several layers (vme-wren: In3, In8 and In10 carry byte-identical GND fills)."""
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    found = False
    for z in zones:
        for r in z.filled.get(layer, ()):
            if len(r) >= 3:
                a = np.ascontiguousarray(r, dtype=float)
                h.update(len(a).to_bytes(8, "little"))
                h.update(a.tobytes())
                found = True
        h.update(b"|")  # zone boundary: each zone is made valid on its own, then united
    return h.digest() if found else None


def _inside_rings(rings: Sequence[np.ndarray], x: float, y: float) -> bool:
    """Whether (x, y) lies inside any of the fill ``rings`` as the file gives them (even-odd
    crossing count of a ray to +x).  A fill's holes are bridged into its outline by edges that
    run there and back, so they cross the ray twice and leave the parity alone: the count is
    that of the polygon-with-holes the ring means, with no valid geometry built.  The point must
    not lie on a ring (the caller made sure)."""
    for r in rings:
        a = np.asarray(r, dtype=float)
        b = np.roll(a, -1, axis=0)
        y1, y2 = a[:, 1], b[:, 1]
        cross = (y1 > y) != (y2 > y)
        if not cross.any():
            continue
        x1, x2 = a[cross, 0], b[cross, 0]
        y1, y2 = y1[cross], y2[cross]
        xi = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        if int(np.count_nonzero(x < xi)) % 2:
            return True
    return False


def _misses(rings: Sequence[np.ndarray], ground: Any) -> bool:
    """True when the fill ``rings`` (as the file gives them) certainly do not overlap the valid
    ``ground``: no ring touches it, and no part of it lies inside them.  Lets a big rail plane
    skip its costly :meth:`Zone.region` when the facing layer holds only small ground islands
    outside it (vme-wren: the 142k-vertex P3V3 plane on In5 beside the analog ground on In4).
    False means "may overlap": the exact overlay decides."""
    import shapely

    lines = shapely.multilinestrings(
        [shapely.linestrings(np.vstack([r, r[:1]])) for r in (np.asarray(q, float) for q in rings)]
    )
    g = shapely.from_wkb(shapely.to_wkb(ground))  # a private copy: prepared, not shared
    shapely.prepare(g)
    if shapely.intersects(g, lines):
        return False
    pts = shapely.get_coordinates(shapely.point_on_surface(shapely.get_parts(g)))
    return not any(_inside_rings(rings, float(x), float(y)) for x, y in pts)


#: a rail plane with this many times the vertices of the facing ground is first tested with
#: :func:`_misses` before its region is built
_MISS_RATIO = 8


class _LazyRegions(Mapping):
    """Layer -> union of the fills of ``zones`` on it, built the first time a layer is asked
    for: a ground union is costly (120k-vertex planes on vme-wren) and only the layers that
    face a rail plane are ever needed.  Layers whose fills are identical share one union
    (:func:`_content_key`).  Same values as :func:`ground_layers`."""

    def __init__(self, zones: Sequence[Zone], layer_count: int) -> None:
        self._zones = list(zones)
        self._n = layer_count if self._zones else 0
        self._done: dict[int, Any] = {}
        self._keys: dict[int, bytes | None] = {}
        self._boxes: dict[int, tuple[float, float, float, float] | None] = {}
        self._by_key: dict[bytes, Any] = {}
        self._holed: dict[bytes | None, _Holed] = {}
        # rails are measured on several threads: one lock per fill content, so a union is
        # built once; a plain lock guards the small bookkeeping dicts
        self._lock = threading.Lock()
        self._key_locks: dict[bytes, threading.Lock] = {}

    def key(self, li: int) -> bytes | None:
        """:func:`_content_key` of layer ``li`` (computed once)."""
        if li not in self._keys:
            k = _content_key(self._zones, li) if 0 <= li < self._n else None
            with self._lock:
                self._keys.setdefault(li, k)
        return self._keys[li]

    def box(self, li: int) -> tuple[float, float, float, float] | None:
        """:func:`_raw_bounds` of layer ``li`` (computed once; None: no fill there)."""
        if li not in self._boxes:
            b = _raw_bounds(self._zones, li) if 0 <= li < self._n else None
            with self._lock:
                self._boxes.setdefault(li, b)
        return self._boxes[li]

    def size(self, li: int) -> int:
        """Vertices of the fill rings on layer ``li``."""
        return sum(len(r) for z in self._zones for r in z.filled.get(li, ()) if len(r) >= 3)

    def __getitem__(self, li: int) -> Any:
        if not (isinstance(li, int) and 0 <= li < self._n):
            raise KeyError(li)
        if li in self._done:
            return self._done[li]
        k = self.key(li)
        if k is None:
            self._done[li] = None
            return None
        with self._lock:
            lock = self._key_locks.setdefault(k, threading.Lock())
        with lock:
            if k not in self._by_key:
                # built from the lowest layer with this content (the same union from any of
                # them): the layer whose fills the KiCad plugin warmed (:func:`warm_regions`)
                self._by_key[k] = layer_region(self._zones, self.canonical(li))
        self._done[li] = self._by_key[k]
        return self._done[li]

    def canonical(self, li: int) -> int:
        """The lowest layer whose fills have the same content as layer ``li``'s."""
        k = self.key(li)
        return next((m for m in range(li) if k is not None and self.key(m) == k), li)

    def holed(self, li: int) -> _Holed | None:
        """The :class:`_Holed` split of layer ``li``'s union (built once per fill content,
        shared by every rail facing it); None where the layer has no fill."""
        g = self[li]
        if g is None:
            return None
        k = self.key(li)
        with self._lock:
            lock = self._key_locks.setdefault(k, threading.Lock())
        with lock:
            if k not in self._holed:
                self._holed[k] = _Holed(g)
        return self._holed[k]

    def __iter__(self) -> Any:
        return iter(range(self._n))

    def __len__(self) -> int:
        return self._n


def dielectric_between(
    board: Board, upper: int, lower: int
) -> tuple[float | None, float | None, str]:
    """(thickness mm, series εr, names) of the dielectric between adjacent copper layers.

    Capacitors in series: d/εr_eff = Σ t_k/εr_k over the slices (sublayers included)."""
    st = board.stackup
    if st is None:
        return None, None, ""
    diels = st.dielectrics_between(upper, lower)
    if not diels:
        return None, None, ""
    t_sum = 0.0
    t_over_e = 0.0
    names = []
    for d in diels:
        names.append(d.name + (f" ({d.material})" if d.material else ""))
        slices = [(s.thickness_mm, s.epsilon_r) for s in d.sublayers] or [
            (d.thickness_mm, d.epsilon_r)
        ]
        if any(t is None for t, _ in slices):
            slices = [(d.thickness_mm, d.epsilon_r)]
        for t, er in slices:
            if t is None or er is None or er <= 0:
                return None, None, ", ".join(names)
            t_sum += t
            t_over_e += t / er
    if t_sum <= 0:
        return None, None, ", ".join(names)
    return t_sum, t_sum / t_over_e, ", ".join(names)


def plane_capacitance(area_mm2: float, thickness_mm: float, epsilon_r: float) -> float:
    """C = ε0·εr·A/d (A in mm², d in mm)."""
    return EPS0 * epsilon_r * (area_mm2 * 1e-6) / (thickness_mm * 1e-3)


#: below this many vertices (rail + ground piece together) one overlay is cheaper than splitting
_SPLIT_VERTICES = 8000
#: quadrant levels at most (4⁶ = 4096 tiles: far more than a real plane ever needs)
_SPLIT_DEPTH = 6


#: below this share of the shells' overlap, the hole-by-hole sum (:func:`_holed_overlap_area`)
#: is too close to its own rounding to be trusted, and the overlay decides: its terms are each
#: at most the shells' overlap S and are summed with an error of a few ulp of S per term, so
#: above 1 % of S the result is within ~1e-11 relative of the overlay's (measured: 5e-15)
_HOLED_MIN_SHARE = 0.01


class _Holed:
    """A valid polygonal geometry split into its parts' shells (as polygons) and holes (as
    polygons), each with its area and a spatial index: what :func:`_holed_overlap_area` needs
    of it, computed once per geometry (a ground union serves every rail facing it, on several
    threads: nothing in it is prepared, and its trees are built before it is shared)."""

    def __init__(self, geom: Any) -> None:
        import shapely

        parts = shapely.get_parts(geom)
        parts = parts[shapely.get_type_id(parts) == 3]  # polygons (a union's stray lines: no area)
        self.shells = shapely.polygons(shapely.get_exterior_ring(parts))
        counts = shapely.get_num_interior_rings(parts)
        owner = np.repeat(np.arange(len(parts)), counts)
        index = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        self.holes = shapely.polygons(shapely.get_interior_ring(parts[owner], index))
        self.hole_area = shapely.area(self.holes)
        self.shell_tree = shapely.STRtree(self.shells)
        self.hole_tree = shapely.STRtree(self.holes)
        # GEOS builds a tree on its first query: done here, by the one thread that makes the
        # split, so the threads that share it only ever read a built tree
        for tree in (self.shell_tree, self.hole_tree):
            tree.query(self.shells[:1])


def _holes_in_shells(a: _Holed, b: _Holed, *, shared: _Holed) -> float:
    """Σ area(hole of ``a`` ∩ shell of ``b``) over every pair that meets: a hole inside a shell
    counts whole, one across a shell's edge by its overlay.

    The query's *inputs* are prepared by GEOS, and a prepared geometry builds its index on
    first use, so they are always taken from the side that is not ``shared`` (the ground's
    split is read by every rail's thread; the rail's belongs to one).  With the shells as
    inputs, each is prepared once for all the holes it is tested on (a rail's 2,447-vertex
    shell against the ground's 2,978 holes); with the holes as inputs, a hole is within a
    shell, which for the area is the same as inside it."""
    import shapely

    if shared is a:  # the shells are this thread's: the inputs
        j, i = a.hole_tree.query(b.shells, predicate="intersects")
        if not len(i):
            return 0.0
        j_in, i_in = a.hole_tree.query(b.shells, predicate="contains_properly")
    else:  # the holes are this thread's: the inputs
        i, j = b.shell_tree.query(a.holes, predicate="intersects")
        if not len(i):
            return 0.0
        i_in, j_in = b.shell_tree.query(a.holes, predicate="within")
    total = float(a.hole_area[i_in].sum())
    # the holes across a shell's edge: those that meet it and are not inside it
    meet = np.stack([j, i], axis=1)
    inside = np.stack([j_in, i_in], axis=1)
    cut = ~_rows_in(meet, inside)
    if cut.any():
        total += float(shapely.area(shapely.intersection(a.holes[i[cut]], b.shells[j[cut]])).sum())
    return total


def _rows_in(rows: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Which rows of the integer (n, 2) array ``rows`` are rows of ``among``."""
    if not len(among):
        return np.zeros(len(rows), bool)
    width = int(max(rows[:, 1].max(), among[:, 1].max())) + 1
    return isin(rows[:, 0] * width + rows[:, 1], among[:, 0] * width + among[:, 1])


def _holed_overlap_area(rail: _Holed, ground: _Holed) -> float | None:
    """area(rail ∩ ground) by inclusion–exclusion over shells and holes, None when the sum is
    too close to its rounding to be trusted (:data:`_HOLED_MIN_SHARE`).

    For valid polygons R = ∪ₖ(Eₖ ∖ ∪hᵢ) and G = ∪ₗ(Fₗ ∖ ∪gⱼ) (parts interior-disjoint, each
    part's holes interior-disjoint and inside its shell):

        A(R ∩ G) = Σ A(Eₖ ∩ Fₗ) − Σ A(hᵢ ∩ Fₗ) − Σ A(gⱼ ∩ Eₖ) + Σ A(hᵢ ∩ gⱼ)

    A plane's vertices are nearly all in its holes (vme-wren's ground: 414 shell vertices,
    2,978 antipad holes with 119,872), so each overlay here is between a few dozen vertices
    (and the shells' few hundred), where the one overlay of the two planes places thousands of
    holes in a graph of 10⁵ vertices: 0.32 -> 0.20 s on vme-wren's rails."""
    import shapely

    k, l_ = ground.shell_tree.query(rail.shells, predicate="intersects")  # (rail, ground)
    if not len(k):
        return 0.0
    shells = float(shapely.area(shapely.intersection(rail.shells[k], ground.shells[l_])).sum())
    if shells <= 0.0:
        return 0.0
    total = (
        shells
        - _holes_in_shells(rail, ground, shared=ground)
        - _holes_in_shells(ground, rail, shared=ground)
    )
    i, j = ground.hole_tree.query(rail.holes, predicate="intersects")
    if len(i):
        total += float(shapely.area(shapely.intersection(rail.holes[i], ground.holes[j])).sum())
    return total if total >= _HOLED_MIN_SHARE * shells else None


def _overlap_area(
    rail: Any, ground: Any, rail_holed: _Holed | None = None, ground_holed: _Holed | None = None
) -> float:
    """Area of ``rail`` ∩ ``ground``: by shells and holes (:func:`_holed_overlap_area`), or by
    the overlay (:func:`_overlay_area`) where that sum cannot be trusted.  ``rail_holed`` and
    ``ground_holed``: their :class:`_Holed` split, when the caller keeps it for other rails."""
    import shapely

    rb, gb = rail.bounds, ground.bounds
    if rb[2] < gb[0] or gb[2] < rb[0] or rb[3] < gb[1] or gb[3] < rb[1]:
        return 0.0
    try:
        got = _holed_overlap_area(rail_holed or _Holed(rail), ground_holed or _Holed(ground))
    except shapely.errors.GEOSException:
        got = None
    return _overlay_area(rail, ground) if got is None else got


def _overlay_area(rail: Any, ground: Any) -> float:
    """Area of ``rail`` ∩ ``ground`` by overlaying them.

    A ground plane has ~10⁵ vertices and a rail plane 10⁴–10⁵ (an antipad hole per via), and
    GEOS's overlay slows down faster than linearly with the holes it has to place.  So both
    are cut into quadrants of the rail's bounding box, recursively, until a piece pair is small
    (GEOS's rectangle clip is linear and cheap), and the areas of the pieces' overlaps are
    summed: the quadrants partition the box, so the sum is the overlap's area (equal to the
    plain overlay's to 1e-12 relative on vme-wren; 2× faster on its big rails).  The rectangle
    clip does not promise a valid result, so a topology error falls back to the plain overlay.

    shapely's functions, not the geometry methods: ``a.intersection(b)`` holds the GIL for the
    whole overlay (shapely 2.2), ``shapely.intersection(a, b)`` releases it, so rails measured
    on other threads (and the checks on the main thread) really run side by side."""
    import shapely

    rb, gb = rail.bounds, ground.bounds
    if rb[2] < gb[0] or gb[2] < rb[0] or rb[3] < gb[1] or gb[3] < rb[1]:
        return 0.0
    try:
        return _split_overlap(rail, shapely.clip_by_rect(ground, *rb), rb, _SPLIT_DEPTH)
    except shapely.errors.GEOSException:
        return float(shapely.area(shapely.intersection(rail, ground)))


def _split_overlap(rail: Any, ground: Any, box: tuple[float, ...], depth: int) -> float:
    """Σ area(rail ∩ ground) over the quadrants of ``box`` (both already inside ``box``)."""
    import shapely

    if rail.is_empty or ground.is_empty:
        return 0.0
    n = int(shapely.get_num_coordinates(rail)) + int(shapely.get_num_coordinates(ground))
    if depth == 0 or n < _SPLIT_VERTICES:
        return float(shapely.area(shapely.intersection(rail, ground)))
    x0, y0, x1, y1 = box
    xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
    total = 0.0
    for q in ((x0, y0, xm, ym), (xm, y0, x1, ym), (x0, ym, xm, y1), (xm, ym, x1, y1)):
        r = shapely.clip_by_rect(rail, *q)
        if r.is_empty:
            continue
        total += _split_overlap(r, shapely.clip_by_rect(ground, *q), q, depth - 1)
    return total


def plane_pairs(
    board: Board,
    rail_nets: set[int],
    ground_nets: set[int],
    ground_regions: Mapping[int, Any] | None = None,
) -> list[PlanePair]:
    """Overlap of the rail's and ground's fills on facing copper layers (adjacent in the stack,
    a dielectric between), one entry per facing pair that overlaps.  ``ground_regions`` (layer
    -> geometry) may be passed in so several rails share one ground union."""
    rail_z = [z for z in board.zones if z.net in rail_nets and not z.keepout]
    if not rail_z:
        return []
    n = board.layer_count
    gnd_reg = ground_regions if ground_regions is not None else ground_layers(board, ground_nets)
    lazy = gnd_reg if isinstance(gnd_reg, _LazyRegions) else None
    rail_layers = {li for z in rail_z for li, rings in z.filled.items() if rings}
    # the rail's region on a layer is built only when a facing ground fill's box meets its own
    # (a rail plane with no ground beside it, P3V3 and P1V8 inside vme-wren, costs nothing)
    rail_box = {li: _raw_bounds(rail_z, li) for li in sorted(rail_layers) if 0 <= li < n}
    rail_reg: dict[int, Any] = {}
    rail_holed: dict[int, _Holed] = {}  # layer -> its region's shells and holes

    def rail_rings(li: int) -> list[np.ndarray]:
        return [r for z in rail_z for r in z.filled.get(li, ()) if len(r) >= 3]

    def rail_size(li: int) -> int:
        return sum(len(r) for r in rail_rings(li))

    areas: dict[tuple[int, Any], float] = {}  # (rail layer, ground content) -> overlap area
    out: list[PlanePair] = []
    for upper in range(n - 1):
        lower = upper + 1
        for r_layer, g_layer in ((upper, lower), (lower, upper)):
            rb = rail_box.get(r_layer)
            if rb is None:
                continue
            if lazy is not None:
                gb = lazy.box(g_layer)
                if gb is None or _disjoint(rb, gb):
                    continue  # no ground fill there, or none near the rail: no overlap
            if r_layer not in rail_reg:
                if lazy is not None and lazy.size(g_layer) * _MISS_RATIO < rail_size(r_layer):
                    g = gnd_reg.get(g_layer)
                    if g is None or g.is_empty or _misses(rail_rings(r_layer), g):
                        continue  # small ground islands away from the rail plane
                rail_reg[r_layer] = layer_region(rail_z, r_layer)
            r = rail_reg[r_layer]
            if r is None or r.is_empty:
                continue  # the ground union of g_layer is then never built
            g = gnd_reg.get(g_layer)
            if g is None or g.is_empty:
                continue
            # a ground fill repeated on another layer gives the same overlap: computed once
            akey = (r_layer, lazy.key(g_layer) if lazy is not None else ("layer", g_layer))
            if akey not in areas:
                if r_layer not in rail_holed:
                    rail_holed[r_layer] = _Holed(r)
                g_holed = lazy.holed(g_layer) if lazy is not None else None
                areas[akey] = _overlap_area(r, g, rail_holed[r_layer], g_holed)
            area = areas[akey]
            if area <= 0:
                continue
            t, er, names = dielectric_between(board, upper, lower)
            cap = None if t is None or er is None else plane_capacitance(area, t, er)
            st = board.stackup
            dnames = tuple(d.name for d in st.dielectrics_between(upper, lower)) if st else ()
            out.append(
                PlanePair(
                    rail_layer=board.layer_name(r_layer),
                    ground_layer=board.layer_name(g_layer),
                    area_mm2=area,
                    thickness_mm=t,
                    epsilon_r=er,
                    dielectric=names,
                    capacitance_f=cap,
                    dielectric_names=dnames,
                )
            )
    return out


def _all_plane_pairs(
    board: Board, rail_ids: Sequence[set[int]], ground_ids: set[int]
) -> list[list[PlanePair]]:
    """:func:`plane_pairs` of every rail, sharing one lazily built ground union per layer.

    The rails run on a small thread pool: the work is GEOS (making 10⁵-vertex fills valid,
    intersecting them with the ground), which runs with the GIL released, so on vme-wren two
    cores take the PDN geometry from 1.6 s to about half.  The result is in the rails' order and
    equal to a serial run (each rail's pairs are computed by the same function)."""
    if not ground_ids:
        return [[] for _ in rail_ids]
    gnd_z = [z for z in board.zones if z.net in ground_ids and not z.keepout]
    gnd_regions = _LazyRegions(gnd_z, board.layer_count)

    def one(ids: set[int]) -> list[PlanePair]:
        return plane_pairs(board, ids, ground_ids, gnd_regions) if ids else []

    n = min(workers(), len(rail_ids))
    if n <= 1:
        return [one(ids) for ids in rail_ids]
    from concurrent.futures import ThreadPoolExecutor

    # biggest rails first, so the last one to start is a short one
    order = sorted(
        range(len(rail_ids)),
        key=lambda k: (
            -sum(
                len(r)
                for z in board.zones
                if z.net in rail_ids[k]
                for rings in z.filled.values()
                for r in rings
            )
        ),
    )
    out: list[list[PlanePair]] = [[] for _ in rail_ids]
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="accel-drc pdn") as pool:
        futures = {k: pool.submit(one, rail_ids[k]) for k in order}
        for k, fut in futures.items():
            out[k] = fut.result()
    return out
