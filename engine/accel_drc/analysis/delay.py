"""Propagation delay of a net, pad to pad, in picoseconds: the physics the ``skew`` check uses.

A length-matching tool compares millimetres of track; a receiver sees picoseconds.  The two
differ wherever the legs of a pair (or the nets of a group) do not see the same velocity:

* **layer**: a track travels at ``v = c / √εeff`` of its own cross-section; εeff comes from the
  2-D field solver of the impedance package (:func:`fd_coupled`, run on the cross-section
  :func:`~accel_drc.analysis.impedance.layer_stack` reads from the stack-up owner), as
  ``(Z_air / Z)²`` (the ratio of the solved impedance without and with the dielectrics).  A
  microstrip (part of the field in air) is faster than a stripline on the same laminate.  A
  stripline inside one dielectric needs no solve: εeff = εr exactly (TEM).
* **via barrel**: the signal travels the barrel from the layer it enters on to the layer it
  leaves on (the via table's connected layers, not the drill's whole span), at ``c / √εr`` of
  the dielectrics along that span (stack-up heights; :class:`StackGeometry` of the via table).
* **pad-to-die** (the package), declared in ``accel-drc.yaml`` or on the pad, the config
  first: a part's statement (``package_delays: REF: {delays: matched | compensated | none}``)
  adds 0 ps on each of its pads; a pad's delay (``package_delays: REF: {pins_ps: {PAD: ps}}``)
  is added as it stands, as is a pad's KiCad 10 ``(die_delay ps)``; a pad's ``(die_length
  mm)`` (KiCad 8+) at the velocity of the net's longest layer.  A pad none of these covers is
  *undeclared* (:attr:`NetDelay.die_undeclared`): its package delay is unknown, counted 0.
  A part of at most three pads (a series or termination resistor, a capacitor) has no die
  behind its pads: with nothing declared on it, it is neither declared nor undeclared.
* **series parts**: a pair AC-coupled through two capacitors is one lane (``channels``); the
  delays of the nets on both sides add.  The capacitors themselves are the same on both legs
  and add no skew (their package delay is not modelled).

A net's length is the sum of all its segments (what KiCad's length tuner reports): a branch is
counted like a run.  Every number carries its basis: the εeff is ``declared`` only when the
stack-up's εr and heights are, else ``default`` (KiCad's untouched stack-up) — a skew built on a
default εr is not a fact, and the check says so with the number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import median, sorted_rows, unique

if TYPE_CHECKING:
    from . import Analysis

#: speed of light in mm/ps
C_MM_PER_PS = 0.299792458
#: mesh resolution of the εeff solve: εeff is a ratio of two capacitances solved on the same
#: mesh, so the mesh error cancels: on vme-wren's F.Cu (w 0.10-0.125 mm, with mask) εeff at
#: resolution 0.5 is within 0.05 % of resolution 4 (0.03 % in delay) at 1/150 of the time (0.01 s a
#: cross-section); the impedance itself needs the finer production setting
EPS_RESOLUTION = 0.5


def ps_per_mm(eps_eff: float) -> float:
    """Delay of one millimetre at effective permittivity ``eps_eff`` (ps/mm): √εeff / c."""
    return math.sqrt(eps_eff) / C_MM_PER_PS


@dataclass(frozen=True)
class LayerVelocity:
    """How fast a track of one width (and gap to its partner) travels on one copper layer."""

    layer: int
    layer_name: str
    structure: str  # microstrip | stripline | unknown
    eps_eff: float | None
    basis: str  # basis of εeff: declared | default (the weakest of εr and heights)
    missing: tuple[str, ...] = ()
    #: where a declared velocity came from ("" for the field solve of the stack-up)
    source: str = ""

    @property
    def ps_per_mm(self) -> float | None:
        return None if self.eps_eff is None else ps_per_mm(self.eps_eff)


def _solve_eps_eff(stack: Any, w_mm: float, s_mm: float, odd: bool) -> float:
    """εeff of a pair (``odd``: its differential mode) or of a single line (even mode of a
    partner far away) on cross-section ``stack``: ``(Z_air / Z)²``.

    A stripline in one dielectric is TEM: εeff = εr exactly.  A stripline between two
    dielectrics: the impedance package's offset-stripline split (each half's air capacitance
    weighted by its own εr), which is the field solution's own structure for the two halves and
    costs nothing; its error is in the field that crosses the strip plane beside the strips,
    which weighs the two εr almost equally (docs/impedance.md: within 2.1 % in Z, so about 1 %
    in √εeff).  A microstrip (field partly in air and soldermask): the 2-D field solver, the
    one mode asked for, its air and dielectric capacitances from one sweep (C/C_air is
    (Z_air/Z)², which two full :func:`fd_coupled` solves gave at three times the cost)."""
    from .impedance import field_cross_section, offset_coupled_stripline
    from .impedance.solver import fd_mode_eps_eff

    k = 1 if odd else 0
    if stack.structure == "stripline":
        ha, hb = stack.h_above_mm, stack.h_below_mm
        era, erb = stack.er_above, stack.er_below
        if abs(era - erb) < 1e-9:
            return float(era)
        t = stack.t_mm or 0.0
        z = offset_coupled_stripline(w_mm, s_mm, ha, hb, t, era, erb)[k]
        z_air = offset_coupled_stripline(w_mm, s_mm, ha, hb, t, 1.0, 1.0)[k]
        return round((z_air / z) ** 2, 4)
    (w, s, t, y, layers, top), mask = field_cross_section(stack, w_mm, s_mm)
    return round(fd_mode_eps_eff(w, s, t, y, layers, top, EPS_RESOLUTION, mask, odd), 4)


def layer_velocity(
    analysis: Analysis, layer: int, width_mm: float, gap_mm: float | None
) -> LayerVelocity:
    """The :class:`LayerVelocity` of a track of ``width_mm`` on ``layer``: of a pair's
    differential mode at ``gap_mm``, or of a single line (``gap_mm`` None).  Memoised per
    cross-section on the analysis (a board has a few dozen)."""
    from .impedance import layer_stack
    from .stackup import stackup_basis

    memo: dict[Any, LayerVelocity] = analysis.memo.setdefault("velocity", {})
    # widths and gaps to the nearest 25 µm: εeff moves by well under 1 % across that (a
    # microstrip's εeff changes ~1 % from w = 0.10 to 0.125 mm), and a board's many slightly
    # different widths then share a few solves
    width_mm = max(round(width_mm / 0.025) * 0.025, 0.025)
    gap_mm = None if gap_mm is None else max(round(gap_mm / 0.025) * 0.025, 0.025)
    key = (layer, width_mm, gap_mm)
    got = memo.get(key)
    if got is not None:
        return got
    board = analysis.board
    name = board.copper_layers[layer].name
    stack = layer_stack(board, layer, analysis.plane_layers)
    if stack.missing or stack.structure == "unknown" or stack.h_below_mm is None:
        got = LayerVelocity(layer, name, stack.structure, None, "default", stack.missing)
    else:
        sb = stackup_basis(analysis)
        bases = {sb.thickness, sb.epsilon_r(stack.dielectrics)}
        basis = "default" if "default" in bases else "declared"
        h = min(x for x in (stack.h_below_mm, stack.h_above_mm) if x)
        odd = gap_mm is not None and gap_mm > 0
        s = float(gap_mm) if odd else 20.0 * h + width_mm  # a partner far away: a single line
        try:
            eps = _solve_eps_eff(stack, max(width_mm, 1e-3), s, odd)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            got = LayerVelocity(layer, name, stack.structure, None, basis, (f"field solve: {exc}",))
        else:
            got = LayerVelocity(layer, name, stack.structure, eps, basis)
    memo[key] = got
    return got


def segment_lengths(tracks: Any, rows: np.ndarray) -> np.ndarray:
    """Length (mm) of track ``rows``: straight segments by their chord, arcs by r·θ."""
    s, e = tracks.start[rows], tracks.end[rows]
    out = np.hypot(e[:, 0] - s[:, 0], e[:, 1] - s[:, 1])
    mid = getattr(tracks, "mid", None)
    if mid is None or len(mid) != len(tracks.start) or not len(rows):
        return out
    m = mid[rows]
    arc = ~np.isnan(m[:, 0])
    if arc.any():
        from ..geometry import circles_through

        _c, r = circles_through(s[arc], m[arc], e[arc])
        a = np.hypot(m[arc, 0] - s[arc, 0], m[arc, 1] - s[arc, 1])
        b = np.hypot(e[arc, 0] - m[arc, 0], e[arc, 1] - m[arc, 1])
        with np.errstate(invalid="ignore"):
            th = 2 * np.arcsin(np.clip(a / (2 * r), 0, 1)) + 2 * np.arcsin(
                np.clip(b / (2 * r), 0, 1)
            )
        got = r * th
        ok = np.isfinite(got)
        out[np.flatnonzero(arc)[ok]] = got[ok]  # a collinear "arc" keeps its chord
    return out


@dataclass
class ViaHop:
    """One barrel a net travels through: where, between which layers, how long and how slow."""

    xy: tuple[float, float]
    entry: int
    exit: int
    length_mm: float | None
    eps_r: float | None
    uuid: str = ""

    @property
    def ps(self) -> float | None:
        if self.length_mm is None or self.eps_r is None:
            return None
        return self.length_mm * ps_per_mm(self.eps_r)


@dataclass(frozen=True)
class PadPackage:
    """One pad's package (pad-to-die) delay and who declared it."""

    pad: str  # "U1.A3"
    part: str  # "U1"
    length_mm: float | None
    delay_ps: float | None
    #: "board" (the pad's KiCad die_delay / die_length), "pins_ps" (accel-drc.yaml, per pad),
    #: a part statement of :data:`~accel_drc.config.PACKAGE_STATEMENTS`, or None: undeclared
    source: str | None


@dataclass
class NetDelay:
    """The delay of one net from end pad to end pad, piece by piece."""

    net: int
    layer_mm: dict[int, float] = field(default_factory=dict)
    layer_ps: dict[int, float | None] = field(default_factory=dict)
    velocity: dict[int, LayerVelocity] = field(default_factory=dict)
    vias: list[ViaHop] = field(default_factory=list)
    die_ps: float = 0.0
    die_mm: float = 0.0
    die_pads: list[PadPackage] = field(default_factory=list)  # package delay declared
    die_undeclared: list[PadPackage] = field(default_factory=list)  # package delay unknown
    missing: list[str] = field(default_factory=list)
    basis: str = "declared"  # of the velocities; lengths are measured
    #: the gap to its pair partner the velocities were solved at (None: a single line)
    gap: float | None = None

    @property
    def via_ps(self) -> float | None:
        got = [v.ps for v in self.vias]
        return None if any(x is None for x in got) else float(sum(got))  # type: ignore[arg-type]

    @property
    def track_mm(self) -> float:
        return float(sum(self.layer_mm.values()))

    @property
    def main_layer(self) -> int | None:
        """The layer that carries most of the net (where length is added to tune it)."""
        return max(self.layer_mm, key=lambda k: self.layer_mm[k]) if self.layer_mm else None

    @property
    def total_ps(self) -> float | None:
        """The whole delay, or None when any piece's velocity is unknown."""
        if self.missing or any(v is None for v in self.layer_ps.values()):
            return None
        via = self.via_ps
        if via is None:
            return None
        die_len_ps = 0.0
        if self.die_mm:
            main = self.main_layer
            vel = self.velocity.get(main) if main is not None else None
            if vel is None or vel.ps_per_mm is None:
                return None
            die_len_ps = self.die_mm * vel.ps_per_mm
        return float(sum(self.layer_ps.values())) + via + self.die_ps + die_len_ps  # type: ignore[arg-type]


def eps_of(ps_mm: float) -> float:
    """The εeff that travels at ``ps_mm`` ps/mm (the inverse of :func:`ps_per_mm`)."""
    return (ps_mm * C_MM_PER_PS) ** 2


def _with_profile(vel: LayerVelocity, profile: Any) -> LayerVelocity:
    """``vel``, or the designer's own delay on the layer from the KiCad 10 tuning profile of the
    net's class (time-domain tuning on) where the stack-up cannot give one (no cross-section)
    or only KiCad's default does: a declared velocity, not a default.  Where the stack-up is
    declared, its field solve stands (the physics of the stack-up the fab builds)."""
    if profile is None or (vel.eps_eff is not None and vel.basis != "default"):
        return vel
    got = profile.delay_on(vel.layer_name)
    if got is None:
        return vel
    src = f"KiCad tuning profile {profile.name}: {got:g} ps/mm on {vel.layer_name}"
    return LayerVelocity(vel.layer, vel.layer_name, vel.structure, eps_of(got), "declared", (), src)


def _profile_via(profile: Any) -> float | None:
    """The tuning profile's via delay (ps per mm of height), time-domain tuning on, or None."""
    if profile is None or not profile.time_domain:
        return None
    return profile.via_ps_per_mm


#: a part with at most this many pads is a passive (resistor, capacitor, ferrite, a 3-pad
#: array): no die, so no package delay to declare
_PASSIVE_PADS = 3


def pad_packages(board: Any, config: Any) -> dict[int, list[PadPackage]]:
    """Net -> the :class:`PadPackage` of each of its pads: a part's statement in the config
    covers all its pads; else the config's per-pad delay beats the pad's own die_delay /
    die_length (module docstring)."""
    declared = getattr(config, "package_delays", None) or {}
    out: dict[int, list[PadPackage]] = {}
    for fp in board.footprints:
        for p in fp.pads:
            if p.net:
                got = _pad_package(declared, fp.reference, p, len(fp.pads))
                if got is not None:
                    out.setdefault(p.net, []).append(got)
    return out


def _pad_package(declared: Mapping[str, Any], ref: str, p: Any, n_pads: int) -> PadPackage | None:
    """The :class:`PadPackage` of pad ``p`` of part ``ref`` (``n_pads`` pads), or None for a
    passive's pad (:func:`pad_packages`)."""
    part = declared.get(ref)
    name = f"{ref}.{p.number}"
    pin = part.pins_ps.get(p.number) if part is not None else None
    if part is not None and part.delays:
        return PadPackage(name, ref, None, 0.0, part.delays)
    if pin is not None:
        return PadPackage(name, ref, None, pin, "pins_ps")
    if p.die_delay_ps is not None or p.die_length_mm is not None:
        return PadPackage(name, ref, p.die_length_mm, p.die_delay_ps, "board")
    if n_pads <= _PASSIVE_PADS:
        return None  # a resistor's or capacitor's pad: no die behind it
    return PadPackage(name, ref, None, None, None)


def net_packages(analysis: Analysis, net: int) -> list[PadPackage]:
    """:func:`pad_packages` of one net, from the pads-by-net index (found once per net: the
    check asks for the nets of its rules, not the board's every pad)."""
    memo: dict[int, list[PadPackage]] = analysis.memo.setdefault("pad_packages", {})
    got = memo.get(net)
    if got is None:
        declared = getattr(analysis.config, "package_delays", None) or {}
        got = memo[net] = [
            pp
            for ref, p, n_pads in pads_of_nets(analysis).get(net, ())
            if (pp := _pad_package(declared, ref, p, n_pads)) is not None
        ]
    return got


def net_delays(
    analysis: Analysis, nets: Iterable[int], gaps: Mapping[int, float] | None = None
) -> dict[int, NetDelay]:
    """The :class:`NetDelay` of each of ``nets``; ``gaps`` gives a pair net's gap to its
    partner (then its layers travel at the pair's differential-mode εeff)."""
    from .via_stubs import StackGeometry

    board = analysis.board
    tracks = board.tracks
    index = analysis.track_index
    gaps = gaps or {}
    memo = analysis.memo
    geom = memo.get("_delay_geom")
    if geom is None:
        geom = memo["_delay_geom"] = StackGeometry.from_board(board)
    stubs = analysis.via_stubs
    from .stackup import stackup_basis

    sb = stackup_basis(analysis)
    out: dict[int, NetDelay] = {}
    nets = list(nets)
    net_rows = [index.net_rows(net) for net in nets]
    # every net's track lengths in one pass (element by element: the same numbers per net)
    all_rows = np.concatenate(net_rows) if net_rows else np.zeros(0, np.int64)
    all_lengths = segment_lengths(tracks, all_rows) if len(all_rows) else np.zeros(0)
    ends = np.cumsum([len(r) for r in net_rows])
    for k, net in enumerate(nets):
        d = NetDelay(net, gap=gaps.get(net))
        rows = net_rows[k]
        profile = board.net_classes.tuning_profile_of(board.nets[net])
        if len(rows):
            lengths = all_lengths[ends[k] - len(rows) : ends[k]]
            layers = tracks.layer[rows]
            widths = tracks.width[rows]
            for ly in unique(layers).tolist():
                sel = layers == ly
                d.layer_mm[ly] = float(lengths[sel].sum())
                w = median(widths[sel])
                vel = _with_profile(layer_velocity(analysis, ly, w, gaps.get(net)), profile)
                d.velocity[ly] = vel
                d.layer_ps[ly] = None if vel.ps_per_mm is None else d.layer_mm[ly] * vel.ps_per_mm
                if vel.eps_eff is None:
                    d.missing.extend(vel.missing or (f"the cross-section of {vel.layer_name}",))
                if vel.basis == "default":
                    d.basis = "default"
        for i in stubs.rows_for_nets((net,)).tolist():
            conn = np.flatnonzero(stubs.connected[i])
            if len(conn) < 2:
                continue
            lo, hi = int(conn[0]), int(conn[-1])
            length, eps = geom.span(2 * lo + 1, 2 * hi)
            via_ps = _profile_via(profile)
            weak = math.isnan(eps) or sb.epsilon_r_between(lo, hi) == "default"
            if via_ps is not None and weak and not math.isnan(length):
                eps = eps_of(via_ps)  # the designer's via delay per mm of height (KiCad 10)
            d.vias.append(
                ViaHop(
                    (float(stubs.xy[i, 0]), float(stubs.xy[i, 1])),
                    lo,
                    hi,
                    None if math.isnan(length) else length,
                    None if math.isnan(eps) else eps,
                    stubs.uuid[i],
                )
            )
            if math.isnan(length) or math.isnan(eps):
                d.missing.append("the heights and εr of the stack-up along a via barrel")
            elif weak and via_ps is None:
                d.basis = "default"  # the barrel's εr is KiCad's default material
        for pp in net_packages(analysis, net):
            if pp.source is None:
                d.die_undeclared.append(pp)
                continue
            d.die_pads.append(pp)
            d.die_ps += pp.delay_ps or 0.0
            # a delay, where given, wins over a length
            d.die_mm += (pp.length_mm or 0.0) if pp.delay_ps is None else 0.0
        d.missing = list(dict.fromkeys(d.missing))
        out[net] = d
    return out


# -- multi-drop nets: the delay from the driver to each load ------------------------------------

#: track ends closer than this are one node (mm): KiCad snaps joined ends to the same point
_SNAP_MM = 1e-3


@dataclass
class LoadDelays:
    """The delay of one multi-drop net from its driver pad to each of its other pads.

    ``driver`` is the reference of the part that drives the net: the part with the most pads on
    the board among those on the net (the memory controller or FPGA of a fly-by bus; a DRAM has
    78-96 balls, a termination resistor 2).  ``to_part`` maps each other part's reference to the
    delay (ps) along the routed copper from the driver's pad to that part's pad on this net
    (tracks at their layer's velocity, via barrels over the span travelled, both pads' die
    delays); a part the copper does not reach (through a zone, or not routed) is missing."""

    net: int
    driver: str
    to_part: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def pads_of_nets(analysis: Analysis) -> dict[int, list[tuple[str, Any, int]]]:
    """Net -> [(part reference, pad, the part's pad count)], built once per analysis."""
    memo = analysis.memo.get("delay_pads")
    if memo is None:
        memo = analysis.memo["delay_pads"] = {}
        for fp in analysis.board.footprints:
            for p in fp.pads:
                if p.net:
                    memo.setdefault(p.net, []).append((fp.reference, p, len(fp.pads)))
    return memo


def _driver(pads: list[tuple[str, Any, int]]) -> tuple[str, Any] | None:
    """(reference, pad) of the part with the most pads among the parts with a pad on the net
    (``pads``: :func:`pads_of_nets`); None when two parts tie (no driver can be told)."""
    best = sorted(pads, key=lambda t: -t[2])
    best = [b for k, b in enumerate(best) if all(b[0] != c[0] for c in best[:k])]
    if not best or (len(best) > 1 and best[0][2] == best[1][2]):
        return None
    return best[0][0], best[0][1]


def _on_layers(lys: np.ndarray, layers: Iterable[int]) -> np.ndarray:
    """Which of the copper layer indexes ``lys`` are among ``layers`` (a table lookup)."""
    want = [ly for ly in layers if ly >= 0]
    table = np.zeros(max([*want, int(lys.max()) if len(lys) else 0]) + 1, bool)
    table[want] = True
    return table[lys]


def _on_pad(pad: Any, xy: np.ndarray) -> np.ndarray:
    """Which points ``xy`` (n, 2) lie on ``pad``'s copper (its rotated rectangle, 1 µm slack)."""
    a = math.radians(-(pad.rotation or 0.0))
    d = xy - np.array([pad.x, pad.y])
    u = d[:, 0] * math.cos(a) + d[:, 1] * math.sin(a)
    v = -d[:, 0] * math.sin(a) + d[:, 1] * math.cos(a)
    return (np.abs(u) <= pad.width / 2 + 1e-3) & (np.abs(v) <= pad.height / 2 + 1e-3)


def load_delays(analysis: Analysis, d: NetDelay) -> LoadDelays | None:
    """The :class:`LoadDelays` of net ``d.net`` (timed like ``d``: its gap, its velocities), or
    None when no driver can be told.  A graph of the net's copper: track ends (joined where they
    meet, and where an end lands on another track of the layer: a T), via barrels between the
    layers they connect, pads where a track end or a via lies on them; shortest delay from the
    driver's pad (Dijkstra; a fly-by net is a tree, so the shortest path is the path)."""
    from ..hostile import MAX_TRACE_SEGMENTS

    board = analysis.board
    on_net = pads_of_nets(analysis).get(d.net, [])
    got = _driver(on_net)
    if got is None:
        return None
    driver, dpad = got
    t = board.tracks
    rows = analysis.track_index.net_rows(d.net)
    if len(rows) > MAX_TRACE_SEGMENTS:
        return LoadDelays(d.net, driver, missing=[f"a net of {len(rows)} tracks (more than "
                                                  f"{MAX_TRACE_SEGMENTS} are not traced)"])  # fmt: skip
    ly = t.layer[rows].astype(np.int64)
    speed = _layer_speeds(d, ly)
    if isinstance(speed, int):
        return LoadDelays(d.net, driver, missing=[f"the velocity on layer {speed}"])
    # the track ends, start and end of each row in turn, as graph nodes
    pts = np.empty((2 * len(rows), 2))
    pts[0::2], pts[1::2] = t.start[rows], t.end[rows]
    lys = np.repeat(ly, 2)
    ids, n_nodes = _nodes(lys, pts)
    lengths = segment_lengths(t, rows) if len(rows) else np.zeros(0)
    edges: list[tuple[int, int, float]] = list(
        zip(ids[0::2].tolist(), ids[1::2].tolist(), (lengths * speed).tolist())
    )
    seg = np.column_stack([ly, t.start[rows], t.end[rows], t.width[rows] / 2])
    _tees(seg, ids.reshape(-1, 2), speed, np.column_stack([lys, pts]), ids, edges)
    pad_nodes: dict[str, int] = {}
    pads = [(ref, p) for ref, p, _n in on_net]
    for ref, p in pads:
        pn = pad_nodes.setdefault(ref, n_nodes + len(pad_nodes))
        if len(pts):
            on = _on_pad(p, pts) & _on_layers(lys, p.copper_layers)
            edges += [(pn, int(n), 0.0) for n in ids[on].tolist()]
    n_base = n_nodes + len(pad_nodes)
    extra = _via_edges(analysis, d, pts, lys, ids, pads, pad_nodes, n_base, edges)
    if extra is None:
        return LoadDelays(d.net, driver, missing=["the heights and εr along a via barrel"])
    n = n_base + extra
    if not edges or driver not in pad_nodes:
        return LoadDelays(d.net, driver, missing=["routed copper"])
    dist = _shortest(n, edges, pad_nodes[driver])
    out = LoadDelays(d.net, driver)
    pkg = _package_ps(analysis, d.net)
    d0 = pkg.get(f"{driver}.{dpad.number}", 0.0)
    for ref, p in pads:
        if ref == driver:
            continue
        ps = float(dist[pad_nodes[ref]])
        if math.isfinite(ps):
            out.to_part.setdefault(ref, ps + d0 + pkg.get(f"{ref}.{p.number}", 0.0))
        else:
            out.missing.append(ref)
    return out


def _package_ps(analysis: Analysis, net: int) -> dict[str, float]:
    """Pad ("U1.A3") -> its package delay (ps) on ``net`` as :func:`pad_packages` decides it
    (the config's statement or per-pad value, else the pad's own die_delay; 0 where undeclared,
    which the net's :attr:`NetDelay.die_undeclared` reports)."""
    return {pp.pad: pp.delay_ps or 0.0 for pp in net_packages(analysis, net)}


def _shortest(n: int, edges: list[tuple[int, int, float]], source: int) -> list[float]:
    """Dijkstra over an undirected graph of ``n`` nodes (a net has tens to hundreds: a heap in
    plain Python costs less than importing a sparse-graph library)."""
    import heapq

    adj: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for a, b, w in edges:
        adj[a].append((b, w))
        adj[b].append((a, w))
    dist = [math.inf] * n
    dist[source] = 0.0
    heap = [(0.0, source)]
    while heap:
        got, u = heapq.heappop(heap)
        if got > dist[u]:
            continue
        for v, w in adj[u]:
            nd = got + w
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return dist


def _layer_speeds(d: NetDelay, ly: np.ndarray) -> np.ndarray | int:
    """ps/mm of each track of layers ``ly`` at the net's velocities, or the layer of the first
    track whose velocity is unknown."""
    speed = {}
    for layer in dict.fromkeys(ly.tolist()):
        vel = d.velocity.get(layer)
        speed[layer] = None if vel is None else vel.ps_per_mm
    for layer in ly.tolist():
        if speed[layer] is None:
            return int(layer)
    return np.array([speed[x] for x in ly.tolist()], dtype=float)


def _nodes(lys: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, int]:
    """(the node of each track end, how many nodes): ends on one layer within :data:`_SNAP_MM`
    (rounded to that grid) are one node, numbered in the order they first appear."""
    if not len(pts):
        return np.zeros(0, dtype=np.int64), 0
    keys = np.column_stack([lys, np.round(pts / _SNAP_MM)]).astype(np.int64)
    # equal rows by one stable lexicographic sort (np.unique(axis=0) sorts a void view of the
    # rows: 0.3 ms a net); each group numbered by the row that comes first in it
    order, new = sorted_rows(keys)
    group = np.cumsum(new) - 1
    first = order[new]  # stable: the first row of each group in file order
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    ids = np.empty(len(keys), dtype=np.int64)
    ids[order] = rank[group]
    return ids, len(first)


def _tees(
    seg: np.ndarray,
    seg_ids: np.ndarray,
    speed: np.ndarray,
    ends: np.ndarray,
    end_ids: np.ndarray,
    edges: list,
) -> None:
    """Join each track end that lands inside another track of its layer (a T junction): edges
    from the end to both ends of that track, at the delay of the distance along it.  ``seg``
    (n, 6): layer, x0, y0, x1, y1, half width of each track, ``seg_ids`` (n, 2) its end nodes,
    ``speed`` its ps/mm; ``ends`` (m, 3): layer, x, y of each track end, ``end_ids`` its node.
    One ends × tracks array per layer (a net has tens to hundreds of tracks)."""
    if len(seg) < 3:
        return
    for ly in unique(seg[:, 0]).tolist():
        si, all_ei = np.flatnonzero(seg[:, 0] == ly), np.flatnonzero(ends[:, 0] == ly)
        for c0 in range(0, len(all_ei), 256):  # ends × tracks in blocks: bounded memory
            block = all_ei[c0 : c0 + 256]
            _tees_block(seg[si], si, seg_ids, speed, ends, end_ids, block, edges)


def _tees_block(
    a: np.ndarray,
    si: np.ndarray,
    ids: np.ndarray,
    speed: np.ndarray,
    e_arr: np.ndarray,
    e_ids: np.ndarray,
    ei: np.ndarray,
    edges: list,
) -> None:
    """:func:`_tees` for the ends ``ei`` against the tracks ``si`` (``a``) of one layer."""
    p = e_arr[ei]
    reach = np.maximum(a[:, 5], _SNAP_MM)
    # only the (end, track) pairs whose end lies in the track's box grown by its reach can be
    # a T (within reach of the track's line, between its ends): the exact test runs on those
    slack = reach + 1e-9
    lo_x, hi_x = np.minimum(a[:, 1], a[:, 3]) - slack, np.maximum(a[:, 1], a[:, 3]) + slack
    lo_y, hi_y = np.minimum(a[:, 2], a[:, 4]) - slack, np.maximum(a[:, 2], a[:, 4]) + slack
    px, py = p[:, 1:2], p[:, 2:3]
    ii, jj = np.nonzero((px >= lo_x) & (px <= hi_x) & (py >= lo_y) & (py <= hi_y))
    dx, dy = a[jj, 3] - a[jj, 1], a[jj, 4] - a[jj, 2]
    ll = dx * dx + dy * dy
    rx, ry = p[ii, 1] - a[jj, 1], p[ii, 2] - a[jj, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        u = (rx * dx + ry * dy) / ll
        dist = np.hypot(rx - u * dx, ry - u * dy)
    hit = (ll > 0) & (u > 1e-6) & (u < 1 - 1e-6) & (dist <= reach[jj])
    hit &= (e_ids[ei[ii]] != ids[si[jj], 0]) & (e_ids[ei[ii]] != ids[si[jj], 1])
    for c in np.flatnonzero(hit).tolist():
        i, j = int(ii[c]), int(jj[c])
        k = int(si[j])
        full = math.sqrt(float(ll[c])) * float(speed[k])
        nid, t = int(e_ids[ei[i]]), float(u[c])
        edges.append((nid, int(ids[k, 0]), t * full))
        edges.append((nid, int(ids[k, 1]), (1 - t) * full))


def _via_edges(
    analysis: Analysis,
    d: NetDelay,
    pts: np.ndarray,
    lys: np.ndarray,
    ids: np.ndarray,
    pads: list[tuple[str, Any]],
    pad_nodes: dict[str, int],
    first: int,
    edges: list[tuple[int, int, float]],
) -> int | None:
    """Add each via of the net as one node per copper layer it connects, joined layer to layer
    by the barrel's delay over that span, and to the track ends and pads on it; returns how many
    nodes it added (None: a barrel whose heights or εr are unknown)."""
    from .via_stubs import StackGeometry

    stubs = analysis.via_stubs
    board = analysis.board
    geom = analysis.memo.get("_delay_geom") or StackGeometry.from_board(board)
    count = 0
    for i in stubs.rows_for_nets((d.net,)).tolist():
        vr = int(stubs.via_row[i])
        if vr < 0:
            continue  # a plated pad: the pad node covers it
        conn = np.flatnonzero(stubs.connected[i]).tolist()
        if not conn:
            continue
        xy = stubs.xy[i]
        r = float(board.vias.diameter[vr]) / 2 + _SNAP_MM
        mine = {ly: first + count + k for k, ly in enumerate(conn)}
        count += len(conn)
        for lo, hi in zip(conn, conn[1:]):
            length, eps = geom.span(2 * lo + 1, 2 * hi)
            if math.isnan(length) or math.isnan(eps):
                return None
            edges.append((mine[lo], mine[hi], length * ps_per_mm(eps)))
        if len(pts):
            near = np.hypot(pts[:, 0] - xy[0], pts[:, 1] - xy[1]) <= r
            for k in np.flatnonzero(near).tolist():
                if int(lys[k]) in mine:
                    edges.append((mine[int(lys[k])], int(ids[k]), 0.0))
        for ref, p in pads:
            if _on_pad(p, xy[None, :])[0]:
                for ly in p.copper_layers:
                    if ly in mine:
                        edges.append((mine[ly], pad_nodes[ref], 0.0))
    return count
