"""Power-delivery network: rails, their plane-pair capacitance, decoupling capacitors, |Z(f)|.

The model is the usual lumped one (VRM, bulk and MLCC banks, plane pair), everything in parallel at one node:

    VRM (R + jωL)  ∥  each capacitor (ESR + jωESL + 1/jωC)  ∥  plane pairs (jωC_plane)

No spreading inductance and no package: the result is a *lower bound* on what the die sees, so
a rail over target here is over target for real, while a rail under target still needs a field
solver for sign-off (said in docs/geometry.md).

Rails come from the config (``rails:``) or are detected: power-named nets that own filled zones.
A detected rail's voltage, ripple, transient and VRM come from the class pack's
``pdn_impedance`` params, and the finding says so.  Ground is every GND/VSS-named net.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..concurrency import workers
from ..model import Board, Zone
from .capacitors import CapacitorLibrary, CapModel, not_fitted, package_of, parse_capacitance
from .via_stubs import cfg_get

log = logging.getLogger(__name__)

EPS0 = 8.8541878128e-12  # F/m

_GROUND = re.compile(r"(^|[^a-z0-9])[adpsc]?(gnd|vss|ground)|^0v$", re.I)
_POWER = re.compile(
    r"^\+"  # +VBAT, +5V: KiCad's power symbols
    r"|^[+-]?\d+([.,p]\d+)?v\d*"  # 3V3, +5V, 1.8V, 12V0
    r"|^(vcc|vdd|vddq|vccio|vcore|vin|vbus|vbat|vpp|vio|avdd|dvdd|pvdd|avcc|dvcc|vsys|vmain|pwr)"
    r"|^p\d+v\d*"  # P3V3, P0V8
    r"|^v\d+p\d+"  # V1P8
    r"|\d+v\d*$",  # VCC_3V3, *_1V8, *V0
    re.I,
)
#: zones smaller than this are pads and pours, not a plane (mm²)
MIN_PLANE_MM2 = 25.0


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def is_ground(name: str) -> bool:
    return bool(name) and bool(_GROUND.search(_short(name)))


def is_power(name: str) -> bool:
    s = _short(name)
    return bool(s) and not is_ground(name) and bool(_POWER.search(s))


def voltage_from_name(name: str) -> float | None:
    """``3V3`` -> 3.3, ``+5V`` -> 5, ``P0V8`` -> 0.8, ``VCC_1V2`` -> 1.2, ``1.8V`` -> 1.8."""
    s = _short(name).upper()
    for m in re.finditer(r"(\d+)(?:[.,](\d+))?V(\d*)", s):
        whole, dec, after = m.group(1), m.group(2), m.group(3)
        frac = dec or after
        try:
            return float(f"{whole}.{frac}") if frac else float(whole)
        except ValueError:
            continue
    m = re.search(r"V(\d+)P(\d+)", s)
    if m:
        return float(f"{m.group(1)}.{m.group(2)}")
    return None


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
    computing them later (the cache is per zone and layer, computed once)."""

    def run() -> None:
        try:
            for z in sorted(
                planes, key=lambda z: -sum(len(r) for v in z.filled.values() for r in v)
            ):
                for li in list(z.filled):
                    z.region(li)
        except Exception:  # only a head start: the check computes (and reports) it itself
            log.debug("warming zone regions failed", exc_info=True)

    def wanted(z: Zone) -> bool:
        name = net_names[z.net] if 0 < z.net < len(net_names) else ""
        return not z.keepout and bool(name) and (is_ground(name) or is_power(name))

    planes = [z for z in zones if wanted(z)]
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


def ground_layers(board: Board, ground_nets: set[int]) -> dict[int, Any]:
    """Layer -> union of the ground fills on it (computed once for all rails)."""
    gnd_z = [z for z in board.zones if z.net in ground_nets and not z.keepout]
    return {li: layer_region(gnd_z, li) for li in range(board.layer_count)} if gnd_z else {}


class _LazyRegions(Mapping):
    """Layer -> union of the fills of ``zones`` on it, built the first time a layer is asked
    for: a ground union is costly (120k-vertex planes on vme-wren) and only the layers that
    face a rail plane are ever needed.  Same values as :func:`ground_layers`."""

    def __init__(self, zones: Sequence[Zone], layer_count: int) -> None:
        self._zones = list(zones)
        self._n = layer_count if self._zones else 0
        self._done: dict[int, Any] = {}
        # rails are measured on several threads: one lock per layer, so a union is built once
        self._locks = {li: threading.Lock() for li in range(self._n)}

    def __getitem__(self, li: int) -> Any:
        if not (isinstance(li, int) and 0 <= li < self._n):
            raise KeyError(li)
        if li not in self._done:
            with self._locks[li]:
                if li not in self._done:
                    self._done[li] = layer_region(self._zones, li)
        return self._done[li]

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


def _overlap_area(rail: Any, ground: Any) -> float:
    """Area of ``rail`` ∩ ``ground``.

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
    rail_layers = {li for z in rail_z for li, rings in z.filled.items() if rings}
    rail_reg = {li: layer_region(rail_z, li) for li in sorted(rail_layers) if 0 <= li < n}
    out: list[PlanePair] = []
    for upper in range(n - 1):
        lower = upper + 1
        for r_layer, g_layer in ((upper, lower), (lower, upper)):
            r = rail_reg.get(r_layer)
            if r is None or r.is_empty:
                continue  # the ground union of g_layer is then never built
            g = gnd_reg.get(g_layer)
            if g is None or g.is_empty:
                continue
            area = _overlap_area(r, g)
            if area <= 0:
                continue
            t, er, names = dielectric_between(board, upper, lower)
            cap = None if t is None or er is None else plane_capacitance(area, t, er)
            out.append(
                PlanePair(
                    rail_layer=board.layer_name(r_layer),
                    ground_layer=board.layer_name(g_layer),
                    area_mm2=area,
                    thickness_mm=t,
                    epsilon_r=er,
                    dielectric=names,
                    capacitance_f=cap,
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
            if re.fullmatch(pat, name) or re.fullmatch(pat, _short(name)):
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


def _decaps(
    board: Board, rail_nets: set[int], ground_nets: set[int], lib: CapacitorLibrary
) -> tuple[list[CapModel], list[str]]:
    caps: list[CapModel] = []
    unread: list[str] = []
    for fp in board.footprints:
        nets = {p.net for p in fp.pads}
        if not (nets & rail_nets) or not (nets & ground_nets):
            continue
        if not _is_capacitor(fp.reference, fp.name):
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
            if best is None or a > best[0]:
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


def find_rails(board: Board, config: Any = None) -> list[Rail]:
    """Rails from the config ``rails:`` list, else detected from power nets with planes."""
    lib = CapacitorLibrary.load(overrides=cfg_get(config, "capacitors"))
    ground_ids = {i for i, n in enumerate(board.nets) if i and is_ground(n)}
    ground_names = tuple(board.nets[i] for i in sorted(ground_ids))
    specs = cfg_get(config, "rails", ()) or ()
    rails: list[Rail] = []
    notes_common: list[str] = []
    if not ground_ids:
        notes_common.append("no ground net (GND/VSS…) found")
    entries: list[tuple[str, set[int], str, Any]] = []
    areas: dict[tuple[int, int], float] = {}
    if specs:
        for k, spec in enumerate(specs):
            pats = cfg_get(spec, "nets", ()) or ()
            if isinstance(pats, str):
                pats = [pats]
            ids = {i for i, n in enumerate(board.nets) if i and n and _match(pats, n)}
            name = str(cfg_get(spec, "name", f"rail {k + 1}"))
            entries.append((name, ids, "config", spec))
    else:
        plane_area: dict[int, float] = {}
        for z in board.zones:
            if z.keepout or z.net <= 0 or z.net in ground_ids:
                continue
            plane_area[z.net] = plane_area.get(z.net, 0.0) + sum(
                _zone_area(z, li, areas) for li in z.filled
            )
        for net_id, area in sorted(plane_area.items()):
            name = board.nets[net_id]
            if area >= MIN_PLANE_MM2 and is_power(name):
                entries.append((name, {net_id}, "detected", None))
    all_pairs = _all_plane_pairs(board, [ids for _n, ids, _s, _sp in entries], ground_ids)
    for (name, ids, source, spec), pairs in zip(entries, all_pairs):
        notes = list(notes_common)
        if not ids:
            notes.append("the rail's net patterns match no net of the board")
        caps, unread = _decaps(board, ids, ground_ids, lib) if ids and ground_ids else ([], [])
        if unread:
            notes.append(f"{len(unread)} capacitor value(s) could not be read: left out")
        vrm = cfg_get(spec, "vrm")
        vrm_d = None
        if vrm:
            vrm_d = {
                "r_ohm": float(cfg_get(vrm, "r_ohm", 0.0)),
                "l_h": float(cfg_get(vrm, "l_h", 0.0)),
            }
        pos, layer = _rail_pos(board, ids, areas)
        volt = cfg_get(spec, "voltage")
        if volt is None and source == "detected":
            volt = voltage_from_name(name)
        rails.append(
            Rail(
                name=name,
                nets=tuple(board.nets[i] for i in sorted(ids)),
                net_ids=tuple(sorted(ids)),
                source=source,
                voltage=None if volt is None else float(volt),
                ripple_pct=_f(cfg_get(spec, "ripple_pct")),
                transient_a=_f(cfg_get(spec, "transient_a")),
                vrm=vrm_d,
                target_ohm=_f(cfg_get(spec, "target_ohm")),
                ground_nets=ground_names,
                plane_pairs=tuple(pairs),
                decaps=tuple(caps),
                unread_caps=tuple(unread),
                notes=tuple(notes),
                pos=pos,
                layer=layer,
            )
        )
    return rails


def _f(x: Any) -> float | None:
    return None if x is None else float(x)


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


@dataclass(frozen=True, eq=False)
class RailResult:
    """A rail evaluated with the class defaults filled in."""

    rail: Rail
    f_hz: np.ndarray
    z_ohm: np.ndarray
    target_ohm: float | None
    target_source: str  # "config target_ohm" | "V·ripple/ΔI (config)" | "class target_ohm"
    vrm: Mapping[str, float] | None
    vrm_source: str  # config | class defaults | none
    f_min_hz: float
    f_max_hz: float
    worst_f_hz: float | None = None
    worst_z_ohm: float | None = None
    dominant: str = ""
    missing: tuple[str, ...] = ()  # what must be declared before this rail can be judged
    assumed: tuple[str, ...] = field(default_factory=tuple)  # parameters taken from the class

    @property
    def over(self) -> bool:
        return (
            not self.missing
            and self.target_ohm is not None
            and self.worst_z_ohm is not None
            and self.worst_z_ohm > self.target_ohm
        )


def evaluate(
    rail: Rail, params: Mapping[str, Any] | None = None, per_decade: int = 40
) -> RailResult:
    """|Z(f)| of ``rail`` and its verdict inputs, class ``pdn_impedance`` params filling gaps."""
    p = dict(params or {})
    f_lo = 1e4
    f_hi = float(p.get("sweep_max_hz") or 1e9)
    f_min = float(p.get("f_min_hz") or 1e4)
    f_max = float(p.get("f_max_hz") or 1e8)
    freqs = sweep(min(f_lo, f_min), max(f_hi, f_max), per_decade)
    assumed: list[str] = []
    missing: list[str] = []

    # target: config target_ohm > the rail's own V·ripple/ΔI > the class target
    target = rail.target_ohm
    t_src = "config target_ohm"
    own = (rail.voltage, rail.ripple_pct, rail.transient_a)
    if target is None and rail.source == "config" and any(x is not None for x in own):
        # the rail gives part of V·ripple/ΔI: the class defaults fill the rest, visibly
        filled = []
        for val, key in zip(own, ("default_voltage", "default_ripple_pct", "default_transient_a")):
            if val is None and p.get(key) is not None:
                val = float(p[key])
                assumed.append(key)
            filled.append(val)
        v, rip, di = filled
        if v is not None and rip is not None and di:
            target = v * rip / 100.0 / di
            t_src = "V·ripple/ΔI (config)" if len(assumed) == 0 else "V·ripple/ΔI (config + class)"
    if target is None and p.get("target_ohm") is not None:
        target = float(p["target_ohm"])
        t_src = "class target_ohm"
        assumed.append("target_ohm")
    if target is None:
        missing.append("target_ohm (or voltage, ripple_pct and transient_a) for the rail")

    vrm = rail.vrm
    v_src = "config"
    if vrm is None and isinstance(p.get("vrm"), Mapping):
        vrm = {"r_ohm": float(p["vrm"].get("r_ohm", 0.0)), "l_h": float(p["vrm"].get("l_h", 0.0))}
        v_src = "class defaults"
        assumed.append("vrm")
    if vrm is None:
        v_src = "none"
        missing.append("vrm: {r_ohm, l_h} for the rail (accel-drc.yaml rails:)")
    if not rail.net_ids:
        missing.append("nets: patterns that match the rail's nets")
    if rail.plane_unknown:
        missing.append("thickness and εr of the dielectrics between the rail's plane pairs")

    groups = rail.groups()
    plane_c = rail.plane_capacitance_f
    z = impedance(freqs, groups, plane_c, vrm)
    band = (freqs >= f_min * (1 - 1e-9)) & (freqs <= f_max * (1 + 1e-9))
    worst_f = worst_z = None
    dominant = ""
    if band.any() and np.isfinite(z[band]).any():
        zb = np.where(band, z, -np.inf)
        k = int(np.argmax(zb))
        worst_f, worst_z = float(freqs[k]), float(z[k])
        dominant = _dominant(np.array([freqs[k]]), groups, plane_c, vrm)
    elif not groups and not plane_c and vrm is None:
        missing.append("decoupling capacitors, planes or a VRM model: nothing on the rail")
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


# ---------------------------------------------------------------------------------------------
# rows for inspect / extras
# ---------------------------------------------------------------------------------------------


def _params_of(analysis: Any, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ``pdn_impedance`` params to evaluate with: given > ``analysis.pdn_params`` > the class
    pack of ``analysis.board_class`` (inspect --class) > the class the classifier picks."""
    if params is not None:
        return params
    got = getattr(analysis, "pdn_params", None)
    if isinstance(got, Mapping):
        return got
    try:
        lib = analysis.library
        cls = getattr(analysis, "board_class", None)
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
        "f_min_hz": res.f_min_hz,
        "f_max_hz": res.f_max_hz,
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


def rail_rows(analysis: Any, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail rails``: each rail with its network and |Z(f)|."""
    p = _params_of(analysis, params)
    return [rail_row(evaluate(r, p)) for r in analysis.rails]
