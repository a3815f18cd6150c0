"""Power-delivery network: rails, their plane-pair capacitance, decoupling capacitors, |Z(f)|.

The model is the usual lumped one (VRM, bulk and MLCC banks, plane pair), everything in parallel at one node:

    VRM (R + jωL)  ∥  each capacitor (ESR + jωESL + 1/jωC)  ∥  plane pairs (jωC_plane)

No spreading inductance and no package: the result is a *lower bound* on what the die sees, so
a rail over target here is over target for real, while a rail under target still needs a field
solver for sign-off (said in docs/geometry.md).

Rails come from the config (``rails:``) or are detected: power-named nets that own filled zones.
Ground is every GND/VSS-named net.

Which target a rail is held to (issue 19): the class pack's target is the *accelerator core
rail's* (0.7–0.8 V at hundreds of amperes), so it applies only to a rail declared ``role: core``
or recognised as the core (:func:`recognise_core`: the rail feeding the most balls of the
largest BGA, at a core voltage; basis ``assumed``).  Any other rail is judged against its own
V·ripple/ΔI (or ``target_ohm``) when the config declares it, else it has no target
(:attr:`RailResult.need_load`).  A VRM taken from the pack is a placeholder (basis ``default``);
so are the capacitors' ESL/ESR from ``rules/capacitors.yaml`` and a plane dielectric of KiCad's
untouched stack-up (basis ``default`` of the ``network_model``, whose corners are evaluated).
The verdict covers the class band only up to :data:`MODEL_MAX_HZ`, where a lumped board model
stops meaning much.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..concurrency import workers
from ..config import ProjectConfig, RailSpec, as_config
from ..hostile import fullmatch as _bounded  # config regexes: bounded name length
from ..model import Board, Zone
from .capacitors import CapacitorLibrary, CapModel, not_fitted, package_of, parse_capacitance

if TYPE_CHECKING:
    from . import Analysis

log = logging.getLogger(__name__)

EPS0 = 8.8541878128e-12  # F/m

# the rail-name rules live in .railnames (imported without this module: a board with no rail
# candidate never imports the PDN model, issue 18); re-exported here for the callers of pdn
from .railnames import is_ground, is_power, voltage_from_name  # noqa: E402, F401
from .railnames import leaf as _short  # noqa: E402

#: zones smaller than this are pads and pours, not a plane (mm²)
MIN_PLANE_MM2 = 25.0


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


def warm_regions(zones: Sequence[Zone], net_names: Sequence[str]) -> threading.Thread:
    """Start making the plane fills valid (:meth:`Zone.region`) on a daemon thread, for the
    zones of ground and power nets: the ones the PDN check will intersect.

    For a caller that has the zones before it has the rest of the board: the KiCad plugin
    starts this as soon as the zones arrive and asks KiCad for the footprints meanwhile, so the
    ~0.8 s of GEOS work on vme-wren is done while the socket would sit idle.  Same values as
    computing them later (the cache is per zone and layer, computed once).  Only fills with a
    fill of the other kind (ground / power) on an adjacent layer are warmed: no other is ever
    part of a plane pair."""

    def run() -> None:
        try:
            for z in sorted(
                planes, key=lambda z: -sum(len(r) for v in z.filled.values() for r in v)
            ):
                for li in list(z.filled):
                    if faces(z, li):
                        z.region(li)
        except Exception:  # only a head start: the check computes (and reports) it itself
            log.debug("warming zone regions failed", exc_info=True)

    def wanted(z: Zone) -> bool:
        name = net_names[z.net] if 0 < z.net < len(net_names) else ""
        return not z.keepout and bool(name) and (is_ground(name) or is_power(name))

    def ground(z: Zone) -> bool:
        return is_ground(net_names[z.net] if 0 < z.net < len(net_names) else "")

    planes = [z for z in zones if wanted(z)]
    # only a fill with the other kind's fill on an adjacent layer can be part of a plane pair:
    # a power plane between two signal layers (vme-wren's P3V3 on In5, P1V8 on In6) is never
    # made valid by the check, so it is not warmed either
    # (the layers' keys only: a reader's lazy fills are parsed on the warming thread, not here)
    filled = {(ground(z), li) for z in planes for li in z.filled}

    def faces(z: Zone, li: int) -> bool:
        other = not ground(z)
        return (other, li - 1) in filled or (other, li + 1) in filled

    t = threading.Thread(target=run, name="accel-drc zone regions", daemon=True)
    t.start()
    return t


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
                self._by_key[k] = layer_region(self._zones, li)
        self._done[li] = self._by_key[k]
        return self._done[li]

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
    of it, computed once per geometry (a ground union serves every rail facing it)."""

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


def _holes_in_shells(a: _Holed, b: _Holed) -> float:
    """Σ area(hole of ``a`` ∩ shell of ``b``) over every pair that meets: a hole well inside a
    shell counts whole, one across a shell's edge by its overlay."""
    import shapely

    # each shell is the query's input, so GEOS prepares it once for all the holes it is tested on
    j, i = a.hole_tree.query(b.shells, predicate="intersects")
    if not len(i):
        return 0.0
    j_in, i_in = a.hole_tree.query(b.shells, predicate="contains_properly")
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
    return np.isin(rows[:, 0] * width + rows[:, 1], among[:, 0] * width + among[:, 1])


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
    total = shells - _holes_in_shells(rail, ground) - _holes_in_shells(ground, rail)
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


# ---------------------------------------------------------------------------------------------
# rails
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CapGroup:
    """Identical capacitors (same value, package, ESL, ESR) counted once."""

    value_f: float
    package: str | None
    esl_h: float
    esr_ohm: float
    refs: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.refs)

    @property
    def label(self) -> str:
        return f"{_si(self.value_f, 'F')} {self.package or '?'} ×{self.count}"


@dataclass(frozen=True, eq=False)
class Rail:
    """A power rail as the board and config describe it (no class defaults applied yet)."""

    name: str
    nets: tuple[str, ...]
    net_ids: tuple[int, ...]
    source: str  # config | detected
    voltage: float | None = None
    ripple_pct: float | None = None
    transient_a: float | None = None
    vrm: Mapping[str, float] | None = None  # {r_ohm, l_h} from the config
    target_ohm: float | None = None  # from the config
    ground_nets: tuple[str, ...] = ()
    plane_pairs: tuple[PlanePair, ...] = ()
    decaps: tuple[CapModel, ...] = ()
    unread_caps: tuple[str, ...] = ()  # capacitors on the rail whose value could not be read
    notes: tuple[str, ...] = ()
    pos: tuple[float, float] | None = None
    layer: str | None = None
    #: what the rail feeds (config ``role:``, or ``core`` when recognised), and its basis
    role: str | None = None
    role_basis: str | None = None  # declared | assumed
    role_evidence: str = ""  # how a core rail was recognised
    voltage_basis: str | None = None  # declared (config or the net's name)
    #: basis of the plane pairs' εr and height: declared, or default (KiCad's untouched stack-up)
    plane_dielectric_basis: str | None = None

    @property
    def plane_capacitance_f(self) -> float | None:
        if any(p.capacitance_f is None for p in self.plane_pairs):
            return None
        return float(sum(p.capacitance_f or 0.0 for p in self.plane_pairs))

    @property
    def plane_unknown(self) -> bool:
        return any(p.capacitance_f is None for p in self.plane_pairs)

    def groups(self) -> tuple[CapGroup, ...]:
        acc: dict[tuple[float, str | None, float, float], list[str]] = {}
        for c in self.decaps:
            acc.setdefault((c.value_f, c.package, c.esl_h, c.esr_ohm), []).append(c.ref)
        return tuple(
            CapGroup(v, p, esl, r, tuple(refs))
            for (v, p, esl, r), refs in sorted(acc.items(), key=lambda kv: -kv[0][0])
        )


def _si(x: float | None, unit: str) -> str:
    if x is None or not math.isfinite(x):
        return f"? {unit}"
    if x == 0:
        return f"0 {unit}"
    for exp, pre in (
        (9, "G"),
        (6, "M"),
        (3, "k"),
        (0, ""),
        (-3, "m"),
        (-6, "µ"),
        (-9, "n"),
        (-12, "p"),
    ):
        if abs(x) >= 10**exp * 0.9999:
            v = x / 10**exp
            return f"{v:.3g} {pre}{unit}"
    return f"{x:.3g} {unit}"


def _match(patterns: Sequence[str], name: str) -> bool:
    for pat in patterns:
        pat = str(pat)
        try:
            if _bounded(pat, name) or _bounded(pat, _short(name)):
                return True
        except re.error:
            if pat in (name, _short(name)):
                return True
    return False


def _is_capacitor(ref: str, fp_name: str) -> bool:
    if re.match(r"^C\d", ref, re.I) or re.match(r"^CP\d", ref, re.I):
        return True
    low = fp_name.lower().split(":")[-1]
    return low.startswith(("c_", "cp_", "capae")) or "-cap" in low or "capacitor" in fp_name.lower()


def _capacitor_footprints(board: Board) -> list[tuple[Any, frozenset[int]]]:
    """(footprint, its pads' nets) of every capacitor footprint: found once for all rails
    (a Python loop over every footprint per rail held the GIL the main thread's checks need)."""
    return [
        (fp, frozenset(p.net for p in fp.pads))
        for fp in board.footprints
        if _is_capacitor(fp.reference, fp.name)
    ]


def _decaps(
    board: Board,
    rail_nets: set[int],
    ground_nets: set[int],
    lib: CapacitorLibrary,
    capacitors: Sequence[tuple[Any, frozenset[int]]] | None = None,
) -> tuple[list[CapModel], list[str]]:
    caps: list[CapModel] = []
    unread: list[str] = []
    for fp, nets in capacitors if capacitors is not None else _capacitor_footprints(board):
        if not (nets & rail_nets) or not (nets & ground_nets):
            continue
        if "dnp" in fp.attributes or not_fitted(fp.value):
            continue
        value = parse_capacitance(fp.value)
        part = lib.parts.get(fp.reference)
        if value is None and part and "value_f" in part:
            value = float(part["value_f"])
        if value is None:
            unread.append(f"{fp.reference} ({fp.value!r})")
            continue
        caps.append(lib.model(fp.reference, value, package_of(fp.name, fp.value)))
    caps.sort(key=lambda c: c.ref)
    return caps, unread


def _zone_area(z: Zone, li: int, cache: dict[tuple[int, int], float] | None) -> float:
    """``z.filled_area_mm2(li)``, remembered in ``cache`` (detection and the rail positions
    ask for the same zone areas; a 120k-vertex fill costs milliseconds each time)."""
    if cache is None:
        return z.filled_area_mm2(li)
    key = (id(z), li)
    got = cache.get(key)
    if got is None:
        got = cache[key] = z.filled_area_mm2(li)
    return got


def _rail_pos(
    board: Board, rail_nets: set[int], areas: dict[tuple[int, int], float] | None = None
) -> tuple[tuple[float, float] | None, str | None]:
    best = None
    for z in board.zones:
        if z.net not in rail_nets:
            continue
        for li in z.filled:
            a = _zone_area(z, li, areas)
            # equal areas (copies of one shape, equal to 1e-9) are a tie the first zone wins:
            # the last bits of a shoelace sum depend on where the copy sits, not on its size
            if best is None or a > best[0] * (1.0 + 1e-9):
                pts = np.concatenate(z.filled[li]) if z.filled[li] else z.outline
                if len(pts):
                    c = pts.mean(axis=0)
                    best = (a, (round(float(c[0]), 3), round(float(c[1]), 3)), board.layer_name(li))
    if best is None:
        return None, None
    return best[1], best[2]


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


def _default_dielectrics(
    board: Board, materials: Any, declared: Any = None
) -> tuple[set[str], bool]:
    """(names of the dielectrics that are KiCad's untouched default, whether the whole stack-up
    is KiCad's auto-generated one): a plane pair over them has a default εr (and, for the
    whole stack-up, a default height)."""
    st = board.stackup
    if st is None or materials is None:
        return set(), False
    from .stackup import StackupBasis

    basis = StackupBasis(st, materials)
    declared = set(declared or ())  # `stackup: materials:` in the config declares these
    return set(basis.default_dielectrics - declared), basis.auto


#: a two-pad part of at most this many ohms joins its nets into one rail (a current-sense
#: shunt, 1-10 mΩ, or a 0 Ω link: the same node as far as the PDN goes)
SHUNT_MAX_OHM = 0.010
#: references of the parts whose value may be such a link (resistors, jumpers, net ties)
_LINK_REF = re.compile(r"^(R|RS|JP|SJ|NT)\d", re.I)
#: an inductor, by reference (L12) or library name
_INDUCTOR_REF = re.compile(r"^L\d", re.I)
#: a switch-node net name: /DCDC/5V_SW, VCORE_LX, BUCK1_PH, SW1
_SWITCH_NAME = re.compile(r"(^|[_/.{-])(sw\d*|lx\d*|ph\d*|switch)($|[_/.}-])", re.I)


def _union_groups(n: int, pairs: Sequence[tuple[int, int]]) -> dict[int, frozenset[int]]:
    """Net id -> the ids ``pairs`` join it with (itself included), for every id in a pair."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        parent[root(a)] = root(b)
    groups: dict[int, set[int]] = {}
    for a, b in pairs:
        for i in (a, b):
            groups.setdefault(root(i), set()).add(i)
    return {i: frozenset(g) for g in groups.values() for i in g}


def linked_nets(board: Board, ground_ids: set[int]) -> dict[int, frozenset[int]]:
    """Net id -> the nets it forms one rail with: nets joined by a two-pad resistor, jumper or
    net tie whose value is at most :data:`SHUNT_MAX_OHM` (the two sides of a 1 mΩ shunt, a 0 Ω
    link), ground never.  A part marked not fitted does not join."""
    from .railnames import resistance_ohm

    pairs: list[tuple[int, int]] = []
    for fp in board.footprints:
        if not _LINK_REF.match(fp.reference) or "dnp" in fp.attributes or not_fitted(fp.value):
            continue
        nets = {p.net for p in fp.pads if p.net}
        if len(nets) != 2 or nets & ground_ids:
            continue
        ohm = resistance_ohm(fp.value)
        if ohm is not None and ohm <= SHUNT_MAX_OHM:
            a, b = sorted(nets)
            pairs.append((a, b))
    return _union_groups(len(board.nets), pairs)


def switch_nodes(
    board: Board, ground_ids: set[int], cap_fps: Sequence[tuple[Any, frozenset[int]]]
) -> dict[int, str]:
    """Net id -> why it is a regulator's switch node, not a rail: a net on one side of an
    inductor (reference ``L…``) whose other side is another non-ground net, and either named
    like a switch node (``SW``, ``LX``, ``PH``) or decoupled by no capacitor to ground while
    the other side is (the output filter's capacitors sit on the output, not on the switch)."""
    decoupled = {
        n for _fp, nets in cap_fps if nets & ground_ids for n in nets if n not in ground_ids
    }
    out: dict[int, str] = {}
    for fp in board.footprints:
        if not _INDUCTOR_REF.match(fp.reference):
            continue
        nets = sorted({p.net for p in fp.pads if p.net})
        if len(nets) != 2 or set(nets) & ground_ids:
            continue
        for sw, other in (nets, nets[::-1]):
            name = board.nets[sw]
            if _SWITCH_NAME.search(_short(name)):
                why = "named as a switch node"
            elif sw not in decoupled and other in decoupled:
                why = "no capacitor to ground, the inductor's other side has"
            else:
                continue
            out[sw] = f"switch node of {fp.reference} ({why}; the rail is {board.nets[other]})"
    return out


def detect_rails(
    board: Board,
    ground_ids: set[int],
    cap_fps: Sequence[tuple[Any, frozenset[int]]],
    areas: dict[tuple[int, int], float] | None = None,
) -> list[tuple[str, set[int]]]:
    """(name, net ids) of the rails the circuit shows: a power-named net (input rails too:
    ``SYS_VIN_HV``, ``VSYS``, ``DC_IN``) with a plane of at least :data:`MIN_PLANE_MM2`, not a
    regulator's switch node (:func:`switch_nodes`), with every net a shunt or 0 Ω link joins
    it to (:func:`linked_nets`) as one rail, named after a supply-named net of it (not the
    unnamed ``Net-(C21-Pad1)`` a ferrite or 0 Ω joins to ``/M1_DVDD``), of those its board-level
    net (one without a sheet path, ``SYS_VIN_HV`` rather than ``/DCDC/16V_OUT``), else its
    largest plane."""
    plane_area: dict[int, float] = {}
    for z in board.zones:
        if z.keepout or z.net <= 0 or z.net in ground_ids or z.net >= len(board.nets):
            continue
        plane_area[z.net] = plane_area.get(z.net, 0.0) + sum(
            _zone_area(z, li, areas) for li in z.filled
        )
    cands = [
        i for i, a in sorted(plane_area.items()) if a >= MIN_PLANE_MM2 and is_power(board.nets[i])
    ]
    if not cands:
        return []
    switching = switch_nodes(board, ground_ids, cap_fps)
    links = linked_nets(board, ground_ids)
    out: list[tuple[str, set[int]]] = []
    seen: set[int] = set()
    for net_id in cands:
        if net_id in switching or net_id in seen:
            continue
        ids = set(links.get(net_id, {net_id})) - set(switching)
        seen |= ids

        def rank(i: int) -> tuple[bool, bool, float, str]:
            # a supply's name first (``/M1_DVDD``, not the ``Net-(C21-Pad1)`` a ferrite joins
            # to it), then one not under a sheet path, then the largest plane
            name = board.nets[i]
            return (not is_power(name), name.startswith("/"), -plane_area.get(i, 0.0), name)

        out.append((board.nets[min(ids, key=rank)], ids))
    return out


def find_rails(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None = None,
    materials: Any = None,
) -> list[Rail]:
    """Rails from the config ``rails:`` list, else detected from power nets with planes.
    ``materials`` (the laminate library) tells a KiCad-default plane dielectric from a declared
    one; without it the stack-up's values are taken as declared."""
    cfg = as_config(config)
    lib = CapacitorLibrary.load(overrides=cfg.capacitors)
    default_diels, _whole = _default_dielectrics(board, materials, cfg.stackup.materials.keys())
    ground_ids = {i for i, n in enumerate(board.nets) if i and is_ground(n)}
    ground_names = tuple(board.nets[i] for i in sorted(ground_ids))
    specs = cfg.rails
    rails: list[Rail] = []
    notes_common: list[str] = []
    if not ground_ids:
        notes_common.append("no ground net (GND/VSS…) found")
    entries: list[tuple[str, set[int], str, RailSpec | None]] = []
    areas: dict[tuple[int, int], float] = {}
    declared: set[int] = set()
    for spec in specs:
        ids = {i for i, n in enumerate(board.nets) if i and n and _match(spec.nets, n)}
        entries.append((spec.name, ids, "config", spec))
        declared |= ids
    cap_fps = _capacitor_footprints(board)
    # the rails nobody declared: detected from the circuit, listed beside the declared ones
    # (a rail left out of ``rails:`` is "not declared", never silently dropped)
    for name, ids in detect_rails(board, ground_ids, cap_fps, areas):
        if not ids & declared:
            entries.append((name, ids, "detected", None))
    all_pairs = _all_plane_pairs(board, [ids for _n, ids, _s, _sp in entries], ground_ids)
    for (name, ids, source, spec), pairs in zip(entries, all_pairs):
        notes = list(notes_common)
        if not ids:
            notes.append("the rail's net patterns match no net of the board")
        caps, unread = (
            _decaps(board, ids, ground_ids, lib, cap_fps) if ids and ground_ids else ([], [])
        )
        if unread:
            notes.append(f"{len(unread)} capacitor value(s) could not be read: left out")
        vrm = spec.vrm if spec is not None else None
        vrm_d = None
        if vrm is not None:
            vrm_d = {"r_ohm": float(vrm.r_ohm), "l_h": float(vrm.l_h)}
        pos, layer = _rail_pos(board, ids, areas)
        volt = spec.voltage if spec is not None else None
        v_basis = None if volt is None else "declared"
        if volt is None and source == "detected":
            # "+3V3", "P0V85": the designer wrote the voltage into the net's name; a rail of
            # several nets (a shunt's two sides: SYS_VIN_HV and /DCDC/16V_OUT on the Thor
            # carrier) takes the one voltage its other nets' names agree on
            volt = voltage_from_name(name)
            if volt is None:
                named = {voltage_from_name(board.nets[i]) for i in ids} - {None}
                volt = named.pop() if len(named) == 1 else None
            v_basis = None if volt is None else "declared"
        role = spec.role if spec is not None else None
        rails.append(
            Rail(
                name=name,
                nets=tuple(board.nets[i] for i in sorted(ids)),
                net_ids=tuple(sorted(ids)),
                source=source,
                voltage=None if volt is None else float(volt),
                ripple_pct=spec.ripple_pct if spec is not None else None,
                transient_a=spec.transient_a if spec is not None else None,
                vrm=vrm_d,
                target_ohm=spec.target_ohm if spec is not None else None,
                ground_nets=ground_names,
                plane_pairs=tuple(pairs),
                decaps=tuple(caps),
                unread_caps=tuple(unread),
                notes=tuple(notes),
                pos=pos,
                layer=layer,
                role=None if role is None else str(role),
                role_basis=None if role is None else "declared",
                voltage_basis=v_basis,
                plane_dielectric_basis=(
                    None
                    if not pairs
                    else "default"
                    if any(set(pp.dielectric_names) & default_diels for pp in pairs)
                    else "declared"
                ),
            )
        )
    return recognise_core(board, rails)


# ---------------------------------------------------------------------------------------------
# the accelerator's core rail
# ---------------------------------------------------------------------------------------------

#: ball names of a grid array: row letters (I, O, Q, S, X, Z skipped by JEDEC) and a column number
_BALL = re.compile(r"^[A-HJ-NPRTUVWY]{1,2}\d{1,2}$")
#: fewest grid-named pads that make a footprint a BGA when its name does not say so
MIN_BGA_BALLS = 49
#: a core rail is at most this many volts (accelerator and FPGA cores: 0.65–1.0 V)
CORE_MAX_V = 1.0
#: and feeds at least this many balls of the largest BGA (a core is fed by many)
CORE_MIN_BALLS = 8


def _balls(fp: Any) -> list[Any]:
    return [p for p in fp.pads if _BALL.match(p.number or "")]


def largest_bgas(board: Board) -> list[Any]:
    """The footprints with the most balls, among those that are BGAs (library name says BGA, or
    at least :data:`MIN_BGA_BALLS` grid-named pads).  Several when the board carries several
    of the same package (eight accelerators on a baseboard)."""
    best: list[Any] = []
    n_best = 0
    for fp in board.footprints:
        balls = _balls(fp)
        if not ("bga" in fp.name.lower() or len(balls) >= MIN_BGA_BALLS) or not balls:
            continue
        if len(balls) > n_best:
            best, n_best = [fp], len(balls)
        elif len(balls) == n_best:
            best.append(fp)
    return best


def recognise_core(board: Board, rails: Sequence[Rail]) -> list[Rail]:
    """Mark the accelerator's core rail (``role: core``, basis ``assumed``) when no rail is
    declared ``core``: the rail that feeds the most power balls of the largest BGA, if its
    voltage (config or net name) is a core voltage (≤ :data:`CORE_MAX_V`) and it feeds at least
    :data:`CORE_MIN_BALLS` balls.  Only a core rail is held to the class target (the seed's
    accelerator core figure); every other rail needs its own load declared.

    A guess, so its basis is ``assumed``: a violation resting on it is reported as conditional
    ("declare role: core, or the rail's own voltage, ripple and load step")."""
    rails = list(rails)
    if any(r.role == "core" for r in rails):
        return rails
    bgas = largest_bgas(board)
    if not bgas:
        return rails
    ball_nets = [p.net for fp in bgas for p in _balls(fp)]  # the grid names matched once
    counts: list[int] = []
    for r in rails:
        ids = set(r.net_ids)
        counts.append(sum(1 for net in ball_nets if net in ids))
    if not counts or max(counts) == 0:
        return rails
    k = int(np.argmax(counts))
    rail = rails[k]
    if rail.role is not None or counts[k] < CORE_MIN_BALLS or counts.count(counts[k]) > 1:
        return rails
    volt = rail.voltage if rail.voltage is not None else voltage_from_name(rail.name)
    if volt is None or volt > CORE_MAX_V:
        return rails
    bga = bgas[0]
    n_balls = len(_balls(bga))
    also = f" (and {len(bgas) - 1} more of the same package)" if len(bgas) > 1 else ""
    why = (
        f"feeds {counts[k]} of the {n_balls * len(bgas)} balls of the largest BGA, "
        f"{bga.reference} ({bga.value or bga.name}){also}, more than any other rail, at "
        f"{volt:g} V (a core voltage: ≤ {CORE_MAX_V:g} V)"
    )
    rails[k] = replace(rail, role="core", role_basis="assumed", role_evidence=why)
    return rails


# ---------------------------------------------------------------------------------------------
# impedance
# ---------------------------------------------------------------------------------------------


def sweep(f_lo: float = 1e4, f_hi: float = 1e9, per_decade: int = 40) -> np.ndarray:
    """Log-spaced frequencies, both ends included."""
    n = int(round(math.log10(f_hi / f_lo) * per_decade)) + 1
    return np.logspace(math.log10(f_lo), math.log10(f_hi), max(n, 2))


def cap_impedance(f: np.ndarray, c: float, esl: float, esr: float) -> np.ndarray:
    """Series R-L-C: ESR + jωL + 1/(jωC)."""
    w = 2 * np.pi * np.asarray(f, dtype=float)
    return esr + 1j * w * esl + 1.0 / (1j * w * c)


def branch_admittances(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> list[tuple[str, np.ndarray]]:
    """(label, Y(f)) of each parallel branch: VRM, each capacitor group, the planes."""
    w = 2 * np.pi * np.asarray(f, dtype=float)
    out: list[tuple[str, np.ndarray]] = []
    if vrm is not None:
        r, lh = float(vrm.get("r_ohm", 0.0)), float(vrm.get("l_h", 0.0))
        z = r + 1j * w * lh
        if np.all(np.abs(z) > 0):
            out.append((f"VRM (R {_si(r, 'Ω')}, L {_si(lh, 'H')})", 1.0 / z))
    for g in groups:
        out.append((f"decaps {g.label}", g.count / cap_impedance(f, g.value_f, g.esl_h, g.esr_ohm)))
    if plane_c:
        out.append((f"plane pairs ({_si(plane_c, 'F')})", 1j * w * plane_c))
    return out


def impedance(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> np.ndarray:
    """|Z(f)| of VRM ∥ capacitor groups ∥ plane capacitance (inf where nothing conducts)."""
    branches = branch_admittances(f, groups, plane_c, vrm)
    y = np.zeros(len(f), complex)
    for _, yb in branches:
        y = y + yb
    with np.errstate(divide="ignore"):
        return np.abs(1.0 / y)


#: where a board-level lumped model stops meaning much (Hz).  Board decoupling is designed for
#: "roughly 100 kHz and 10–20 MHz" (AMD UG583 / UG584, PCB decoupling capacitors); above that
#: the package's own capacitors, the die capacitance and the plane spreading inductance between
#: the capacitors and the balls (none of them in this model) set the impedance the die sees.
MODEL_MAX_HZ = 2.0e7
#: corners of the default decoupling model: ESL × 0.5 is the low end of the typical ranges in rules/capacitors.yaml
#: (body 0.75 × the midpoint, mounting 0.2 nH instead of 0.6 nH); ESR × 0.55 / × 1.45 the low and
#: high ends of its ESR ranges; a default plane dielectric × 3 in capacitance (a thin prepreg
#: where KiCad's default spreads the board thickness evenly)
_CORNERS = (
    ("low ESL + low ESR", 0.5, 0.55),
    ("low ESL + high ESR", 0.5, 1.45),
)
_PLANE_CORNER = 3.0


@dataclass(frozen=True)
class OverBand:
    """A stretch of the judged band where |Z| is over target, and what sets it at its peak."""

    f_lo_hz: float
    f_hi_hz: float
    peak_f_hz: float
    peak_z_ohm: float
    dominant: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "f_lo_hz": self.f_lo_hz,
            "f_hi_hz": self.f_hi_hz,
            "peak_f_hz": self.peak_f_hz,
            "peak_z_ohm": self.peak_z_ohm,
            "dominant": self.dominant,
        }


@dataclass(frozen=True, eq=False)
class RailResult:
    """A rail evaluated with the class defaults filled in."""

    rail: Rail
    f_hz: np.ndarray
    z_ohm: np.ndarray
    target_ohm: float | None
    target_source: (
        str  # "config target_ohm" | "V·ripple/ΔI (config)" | "class target_ohm (core rail)"
    )
    vrm: Mapping[str, float] | None
    vrm_source: str  # config | class defaults | none
    f_min_hz: float
    f_max_hz: float  # upper end of the band judged: the class band cut at the model's limit
    worst_f_hz: float | None = None
    worst_z_ohm: float | None = None
    dominant: str = ""
    missing: tuple[str, ...] = ()  # what must be declared before |Z(f)| can be computed
    assumed: tuple[str, ...] = field(default_factory=tuple)  # parameters taken from the class
    #: the class band as the pack gives it (DC–100 MHz) and where the lumped model stops
    band_max_hz: float = 1e8
    model_max_hz: float = MODEL_MAX_HZ
    #: {input: basis} (accel_drc.basis) of everything the verdict uses
    basis: Mapping[str, str] = field(default_factory=dict)
    #: a rail that is not the core rail and declares no load of its own: what to declare
    need_load: tuple[str, ...] = ()
    over_bands: tuple[OverBand, ...] = ()
    #: pass/fail of the verdict at the corners of the default network model (ESL, ESR, planes)
    candidates: Mapping[str, str] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        return (
            not self.missing
            and self.target_ohm is not None
            and self.worst_z_ohm is not None
            and self.worst_z_ohm > self.target_ohm
        )


def _scaled_groups(rail: Rail, esl_k: float, esr_k: float) -> tuple[CapGroup, ...]:
    """The rail's capacitor groups with the *default* (unconfirmed) models scaled; parts whose
    model the project declared keep it."""
    acc: dict[tuple[float, str | None, float, float], list[str]] = {}
    for c in rail.decaps:
        esl, esr = (c.esl_h * esl_k, c.esr_ohm * esr_k) if c.unconfirmed else (c.esl_h, c.esr_ohm)
        acc.setdefault((c.value_f, c.package, esl, esr), []).append(c.ref)
    return tuple(
        CapGroup(v, p, esl, r, tuple(refs))
        for (v, p, esl, r), refs in sorted(acc.items(), key=lambda kv: -kv[0][0])
    )


def _worst(freqs: np.ndarray, z: np.ndarray, band: np.ndarray) -> tuple[float | None, float | None]:
    if not band.any() or not np.isfinite(z[band]).any():
        return None, None
    zb = np.where(band, z, -np.inf)
    k = int(np.argmax(zb))
    return float(freqs[k]), float(z[k])


def evaluate(
    rail: Rail, params: Mapping[str, Any] | None = None, per_decade: int = 40
) -> RailResult:
    """|Z(f)| of ``rail`` and its verdict inputs, each with its basis.

    The target: the rail's own ``target_ohm``, else its own V·ripple/ΔI (all three declared),
    else — for the core rail only (``role: core`` declared, or recognised) — the class target
    (or V·ripple/ΔI with the class defaults filling what the rail leaves out).  Any other rail
    without its own load has no target: ``need_load`` says what to declare.  The band judged
    is the class band cut at ``model_max_hz`` (the lumped model's limit, :data:`MODEL_MAX_HZ`)."""
    p = dict(params or {})
    f_lo = 1e4
    f_hi = float(p.get("sweep_max_hz") or 1e9)
    f_min = float(p.get("f_min_hz") or 1e4)
    band_max = float(p.get("f_max_hz") or 1e8)
    model_max = float(p.get("model_max_hz") or MODEL_MAX_HZ)
    f_max = min(band_max, model_max)
    freqs = sweep(min(f_lo, f_min), max(f_hi, band_max), per_decade)
    assumed: list[str] = []
    missing: list[str] = []
    need: list[str] = []
    basis: dict[str, str] = {}

    own = (rail.voltage, rail.ripple_pct, rail.transient_a)
    own_keys = ("voltage", "ripple_pct", "transient_a")
    own_declared = rail.source == "config" and any(
        x is not None for x in (rail.ripple_pct, rail.transient_a)
    )
    target = rail.target_ohm
    t_src = "config target_ohm"
    if target is not None:
        basis["target"] = "declared"
    elif all(x is not None for x in own) and rail.transient_a:
        v, rip, di = own
        target = float(v) * float(rip) / 100.0 / float(di)  # type: ignore[arg-type]
        t_src = "V·ripple/ΔI (config)"
        basis.update(
            {"voltage": rail.voltage_basis or "declared", "ripple_pct": "declared",
             "transient_a": "declared"}
        )  # fmt: skip
    elif rail.role == "core":
        basis["rail_role"] = rail.role_basis or "declared"
        if own_declared:
            # the core rail gives part of V·ripple/ΔI: the class defaults fill the rest, visibly
            filled = []
            for val, key, dkey in zip(
                own, own_keys, ("default_voltage", "default_ripple_pct", "default_transient_a")
            ):
                if val is None and p.get(dkey) is not None:
                    val = float(p[dkey])
                    assumed.append(dkey)
                    basis[key] = "default"
                elif val is not None:
                    basis[key] = (
                        (rail.voltage_basis or "declared") if key == "voltage" else "declared"
                    )
                filled.append(val)
            v, rip, di = filled
            if v is not None and rip is not None and di:
                target = v * rip / 100.0 / di
                t_src = "V·ripple/ΔI (config + class)"
        if target is None and p.get("target_ohm") is not None:
            target = float(p["target_ohm"])
            t_src = "class target_ohm (core rail)"
            assumed.append("target_ohm")
        if target is None:
            missing.append("target_ohm (or voltage, ripple_pct and transient_a) for the rail")
    else:
        # not the accelerator core: the class target (a core rail's) does not apply
        lacking = [k for k, x in zip(own_keys, own) if x is None]
        need.append(
            f"{', '.join(lacking)} of rail {rail.name} (its own V·ripple/ΔI), or role: core if "
            "it is the accelerator's core rail"
            if lacking
            else f"transient_a of rail {rail.name} (a load step above 0 A)"
        )

    vrm = rail.vrm
    v_src = "config"
    if vrm is not None:
        basis["vrm"] = "declared"
    elif isinstance(p.get("vrm"), Mapping):
        vrm = {"r_ohm": float(p["vrm"].get("r_ohm", 0.0)), "l_h": float(p["vrm"].get("l_h", 0.0))}
        v_src = "class defaults"
        assumed.append("vrm")
        basis["vrm"] = "default"  # the pack's placeholder, not this board's regulator
    else:
        v_src = "none"
        missing.append("vrm: {r_ohm, l_h} for the rail (accel-drc.yaml rails:)")
    if not rail.net_ids:
        missing.append("nets: patterns that match the rail's nets")
    if rail.plane_unknown:
        missing.append("thickness and εr of the dielectrics between the rail's plane pairs")

    groups = rail.groups()
    plane_c = rail.plane_capacitance_f
    if rail.plane_pairs:
        basis["plane_area"] = "measured"
    if rail.decaps:
        basis["decaps"] = "measured"
    decap_default = any(c.unconfirmed for c in rail.decaps)
    plane_default = bool(rail.plane_pairs) and rail.plane_dielectric_basis == "default"
    if rail.decaps or rail.plane_pairs:
        # ESL/ESR of the capacitors (rules/capacitors.yaml typicals unless declared) and the
        # plane dielectric (KiCad's default stack-up unless declared): one network model
        basis["network_model"] = "default" if decap_default or plane_default else "declared"

    z = impedance(freqs, groups, plane_c, vrm)
    band = (freqs >= f_min * (1 - 1e-9)) & (freqs <= f_max * (1 + 1e-9))
    worst_f, worst_z = _worst(freqs, z, band)
    dominant = ""
    if worst_f is not None:
        dominant = _dominant(np.array([worst_f]), groups, plane_c, vrm)
    elif not groups and not plane_c and vrm is None:
        missing.append("decoupling capacitors, planes or a VRM model: nothing on the rail")

    over_bands: list[OverBand] = []
    candidates: dict[str, str] = {}
    if target is not None and worst_z is not None and not missing:
        over = band & np.isfinite(z) & (z > target)
        k = 0
        n = len(freqs)
        while k < n:
            if not over[k]:
                k += 1
                continue
            j = k
            while j + 1 < n and over[j + 1]:
                j += 1
            seg = slice(k, j + 1)
            pk = k + int(np.argmax(z[seg]))
            over_bands.append(
                OverBand(
                    float(freqs[k]),
                    float(freqs[j]),
                    float(freqs[pk]),
                    float(z[pk]),
                    _dominant(np.array([freqs[pk]]), groups, plane_c, vrm),
                )
            )
            k = j + 1
        if basis.get("network_model") == "default":
            candidates["typical"] = "fail" if worst_z > target else "pass"
            pk = _PLANE_CORNER if plane_default else 1.0
            for label, esl_k, esr_k in _CORNERS:
                g2 = _scaled_groups(rail, esl_k if decap_default else 1.0,
                                    esr_k if decap_default else 1.0)  # fmt: skip
                z2 = impedance(freqs, g2, None if plane_c is None else plane_c * pk, vrm)
                _, w2 = _worst(freqs, z2, band)
                name = label if decap_default else "plane C × 3"
                if plane_default and decap_default:
                    name += " + plane C × 3"
                candidates[name] = "fail" if w2 is not None and w2 > target else "pass"
                if not decap_default:
                    break
    return RailResult(
        rail=rail,
        f_hz=freqs,
        z_ohm=z,
        target_ohm=target,
        target_source=t_src,
        vrm=vrm,
        vrm_source=v_src,
        f_min_hz=f_min,
        f_max_hz=f_max,
        worst_f_hz=worst_f,
        worst_z_ohm=worst_z,
        dominant=dominant,
        missing=tuple(dict.fromkeys(missing)),
        assumed=tuple(assumed),
        band_max_hz=band_max,
        model_max_hz=model_max,
        basis=basis,
        need_load=tuple(need),
        over_bands=tuple(over_bands),
        candidates=candidates,
    )


def _dominant(
    f: np.ndarray,
    groups: Sequence[CapGroup],
    plane_c: float | None,
    vrm: Mapping[str, float] | None,
) -> str:
    """The branch that sets |Z| at ``f``: the one carrying the largest admittance; at an
    anti-resonance (the two largest of opposite reactance and within 3× of each other) both."""
    br = [(label, complex(y[0])) for label, y in branch_admittances(f, groups, plane_c, vrm)]
    if not br:
        return ""
    br.sort(key=lambda t: -abs(t[1]))
    first = br[0]
    if len(br) > 1:
        second = br[1]
        if (
            first[1].imag * second[1].imag < 0
            and abs(second[1]) * 3 >= abs(first[1])
            and abs(first[1].imag) > abs(first[1].real)
        ):
            return f"anti-resonance of {first[0]} with {second[0]}"
    return first[0]


def model_band_text(res: RailResult) -> str:
    """The band the verdict covers and why it stops there, as the finding and the plot say it."""
    lo, hi = _si(res.f_min_hz, "Hz"), _si(res.f_max_hz, "Hz")
    if res.band_max_hz > res.f_max_hz:
        return (
            f"judged {lo}–{hi}: a board-level lumped model (VRM, capacitors, planes at one node) "
            f"means something up to about {_si(res.model_max_hz, 'Hz')}; above it, up to the "
            f"class band's {_si(res.band_max_hz, 'Hz')}, the package capacitors, the die "
            "capacitance and the plane spreading inductance to the balls set |Z| (board "
            "decoupling is designed for roughly 100 kHz to 10–20 MHz: AMD UG583/UG584): that "
            "part needs the package model or a field solver"
        )
    return (
        f"judged {lo}–{hi} (inside the lumped model's range, up to {_si(res.model_max_hz, 'Hz')})"
    )


def remedy(res: RailResult) -> str:
    """What would bring the rail under target, band by band: the failing stretch, what sets
    |Z| at its peak, and the capacitance (at the band's low end) and inductance (at its high
    end) a network under target needs there, beside what the rail has now."""
    t = res.target_ohm
    if not res.over_bands or not t:
        return ""
    rail = res.rail
    c_now = sum(c.value_f for c in rail.decaps) + (rail.plane_capacitance_f or 0.0)
    inv_l = sum(1.0 / c.esl_h for c in rail.decaps if c.esl_h > 0)
    l_now = 1.0 / inv_l if inv_l else None
    parts = []
    for b in res.over_bands:
        c_need = 1.0 / (2 * math.pi * b.f_lo_hz * t)
        l_need = t / (2 * math.pi * b.f_hi_hz)
        needs = []
        if c_now < c_need:
            needs.append(
                f"≥ {_si(c_need, 'F')} of capacitance for {_si(b.f_lo_hz, 'Hz')} (the rail has "
                f"{_si(c_now, 'F')})"
            )
        if l_now is None or l_now > l_need:
            needs.append(
                f"≤ {_si(l_need, 'H')} of parallel mounted inductance for "
                f"{_si(b.f_hi_hz, 'Hz')} (its capacitors give {_si(l_now, 'H')})"
            )
        if not needs:
            # enough C and little enough L in total: the peak is a resonance between branches
            needs.append(
                "damping of the resonance: capacitors with their self-resonance in the band "
                "(intermediate values) or more ESR, since total capacitance and mounted "
                "inductance already suffice"
            )
        parts.append(
            f"{_si(b.f_lo_hz, 'Hz')}–{_si(b.f_hi_hz, 'Hz')} (peak {_si(b.peak_z_ohm, 'Ω')} at "
            f"{_si(b.peak_f_hz, 'Hz')}, set by {b.dominant}): under {_si(t, 'Ω')} needs "
            + " and ".join(needs)
        )
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# rows for inspect / extras
# ---------------------------------------------------------------------------------------------


def _params_of(analysis: Analysis, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ``pdn_impedance`` params to evaluate with: given > ``analysis.pdn_params`` > the class
    pack of ``analysis.board_class`` (inspect --class) > the class the classifier picks."""
    if params is not None:
        return params
    got = getattr(analysis, "pdn_params", None)
    if isinstance(got, Mapping):
        return got
    try:
        lib = analysis.library
        cls = analysis.board_class
        if cls is None:
            from ..classify import classify

            cls = classify(analysis.board, analysis, lib).board_class
        for rule in lib.packs[cls].rules:
            if rule.check == "pdn_impedance":
                return rule.params
    except Exception:  # no library / classifier: the rows still show the board's own network
        log.info("pdn: no class pack params for the rail rows", exc_info=True)
    return None


def rail_row(res: RailResult, points: int | None = None) -> dict[str, Any]:
    rail = res.rail
    f, z = res.f_hz, res.z_ohm
    if points and len(f) > points:
        keep = np.unique(np.linspace(0, len(f) - 1, points).round().astype(int))
        f, z = f[keep], z[keep]
    return {
        "name": rail.name,
        "nets": list(rail.nets),
        "source": rail.source,
        "ground_nets": list(rail.ground_nets),
        "voltage": rail.voltage,
        "plane_capacitance_f": rail.plane_capacitance_f,
        "plane_pairs": [
            {
                "layers": [p.rail_layer, p.ground_layer],
                "area_mm2": round(p.area_mm2, 3),
                "dielectric": p.dielectric,
                "thickness_mm": p.thickness_mm,
                "epsilon_r": None if p.epsilon_r is None else round(p.epsilon_r, 4),
                "capacitance_f": p.capacitance_f,
            }
            for p in rail.plane_pairs
        ],
        "decaps": [
            {
                "ref": c.ref,
                "value_f": c.value_f,
                "package": c.package,
                "esl_h": c.esl_h,
                "esr_ohm": round(c.esr_ohm, 6),
                "unconfirmed": c.unconfirmed,
            }
            for c in rail.decaps
        ],
        "unread_caps": list(rail.unread_caps),
        "vrm": None if res.vrm is None else {**res.vrm, "source": res.vrm_source},
        "target_ohm": res.target_ohm,
        "target_source": res.target_source if res.target_ohm is not None else None,
        "role": rail.role,
        "role_basis": rail.role_basis,
        "role_evidence": rail.role_evidence,
        "f_min_hz": res.f_min_hz,
        "f_max_hz": res.f_max_hz,
        "band_max_hz": res.band_max_hz,
        "model_max_hz": res.model_max_hz,
        "model_band": model_band_text(res),
        "basis": dict(res.basis),
        "need_load": list(res.need_load),
        "over_bands": [b.to_dict() for b in res.over_bands],
        "worst_f_hz": res.worst_f_hz,
        "worst_z_ohm": res.worst_z_ohm,
        "dominant": res.dominant,
        "missing": list(res.missing),
        "notes": list(rail.notes),
        "impedance": [
            {"f_hz": float(fi), "z_ohm": float(zi) if math.isfinite(zi) else None}
            for fi, zi in zip(f, z)
        ],
    }


def rail_rows(analysis: Analysis, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail rails``: each rail with its network and |Z(f)|."""
    p = _params_of(analysis, params)
    return [rail_row(evaluate(r, p)) for r in analysis.rails]
