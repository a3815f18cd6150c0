"""PDN rails: which nets are power rails, what joins them, their capacitors, the core rail.

Model: a rail is the set of nets one supply drives (:class:`Rail`): declared in the config
(``rails:``, each a list of net patterns) or detected from the circuit (:func:`detect_rails`:
a power-named net with a plane of at least :data:`MIN_PLANE_MM2`, not a regulator's switch node
(:func:`switch_nodes`), joined with every net a current-sense shunt or 0 Ω link of at most
:data:`SHUNT_MAX_OHM` connects to it (:func:`linked_nets`)).  Ground is every GND/VSS-named net
(:mod:`..railnames`).  Its decoupling capacitors are the fitted capacitors with one pad on the
rail and one on ground, modelled from ``rules/capacitors.yaml`` (ESL/ESR typicals unless the
config declares them; :mod:`..capacitors`); its plane pairs come from :mod:`.planes`.  The
accelerator's core rail is the one declared ``role: core``, else recognised
(:func:`recognise_core`: the rail feeding the most balls of the largest BGA at ≤
:data:`CORE_MAX_V`, basis ``assumed``).

Units: V for voltages, F/H/Ω for the capacitor models, mm/mm² for positions and plane areas.

Limits: a rail is what its nets' names and planes say; a supply with no power-like name and no
plane is found only when declared.  The core rail is a guess (``assumed``) until declared.

References: target impedance and the role of the core rail: Smith et al. 1999 (``smith1999``);
board decoupling ranges: AMD UG583 (``amd-ug583``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...config import ProjectConfig, RailSpec, as_config
from ...hostile import fullmatch as _bounded  # config regexes: bounded name length
from ...model import Board, Zone
from ..capacitors import CapacitorLibrary, CapModel, not_fitted, package_of, parse_capacitance
from ..railnames import is_ground, is_power, voltage_from_name
from ..railnames import leaf as _short
from .planes import PlanePair, _all_plane_pairs

#: zones smaller than this are pads and pours, not a plane (mm²)
MIN_PLANE_MM2 = 25.0


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


def rail_name_matches(patterns: Sequence[str], name: str) -> bool:
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


def _default_dielectrics(
    board: Board, materials: Any, declared: Any = None
) -> tuple[set[str], bool]:
    """(names of the dielectrics that are KiCad's untouched default, whether the whole stack-up
    is KiCad's auto-generated one): a plane pair over them has a default εr (and, for the
    whole stack-up, a default height)."""
    st = board.stackup
    if st is None or materials is None:
        return set(), False
    from ..stackup import StackupBasis

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
    from ..railnames import resistance_ohm

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
        ids = {i for i, n in enumerate(board.nets) if i and n and rail_name_matches(spec.nets, n)}
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


def bga_balls(fp: Any) -> list[Any]:
    return [p for p in fp.pads if _BALL.match(p.number or "")]


def largest_bgas(board: Board) -> list[Any]:
    """The footprints with the most balls, among those that are BGAs (library name says BGA, or
    at least :data:`MIN_BGA_BALLS` grid-named pads).  Several when the board carries several
    of the same package (eight accelerators on a baseboard)."""
    best: list[Any] = []
    n_best = 0
    for fp in board.footprints:
        balls = bga_balls(fp)
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
    ball_nets = [p.net for fp in bgas for p in bga_balls(fp)]  # the grid names matched once
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
    n_balls = len(bga_balls(bga))
    also = f" (and {len(bgas) - 1} more of the same package)" if len(bgas) > 1 else ""
    why = (
        f"feeds {counts[k]} of the {n_balls * len(bgas)} balls of the largest BGA, "
        f"{bga.reference} ({bga.value or bga.name}){also}, more than any other rail, at "
        f"{volt:g} V (a core voltage: ≤ {CORE_MAX_V:g} V)"
    )
    rails[k] = replace(rail, role="core", role_basis="assumed", role_evidence=why)
    return rails
