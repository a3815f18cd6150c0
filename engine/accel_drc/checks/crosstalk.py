"""``crosstalk``: near- and far-end crosstalk onto every high-speed lane from the recognised
nets that run beside it, from the field-solved cross-section.

What it checks:
    One rule per signal type (``rule.signal``): its pairs are the victims, judged on the
    differential noise their receiver sees (with ``single_ended``, also its single nets: DDR DQ
    and address/command).  The aggressors are every other net with a signal type (a recognised
    interface, so its edge rate is known), bar the victim's pair partner; a net with no type
    is neither.  On each copper layer, the aggressor segments that run beside a victim segment
    (directions within 10°) with an edge-to-edge gap of at most ``max_gap_h`` × h (h: the
    layer's height to its nearest reference plane) give a coupled piece: its length and gap
    (a uniform-grid join of the segments, linear in the segments).  On the two signal layers of
    a dual stripline (adjacent layers between the same two planes, none between them) the
    segments of one that run over those of the other (directions within 10°, centre offset
    across within ``max_gap_h`` × their vertical separation plus a width) give broadside
    pieces, solved by the general two-strip field solution at the offset (interpolated between
    offsets of half the separation).  Each piece's coupling
    comes from the 2-D field solution of the layer's cross-section (the stack-up owner's
    heights, εr, copper and soldermask) at the victim's width and that gap, interpolated
    between solves at gaps h·2^(k/2): Kb = ¼(Cm/C + Lm/L) and kf = Cm/C − Lm/L.  Summed over
    the pieces and layers: NEXT = (length-weighted Kb)·min(1, 2·TD/tr) and FEXT = Σ kf·TD / 2tr
    (capped at ½).  A pair aggressor drives its legs with ±½ of its swing and a pair victim
    sees P − N: the net-to-net terms are superposed, so a pair beside a pair largely cancels.
    Per aggressor the larger of |NEXT| and |FEXT| counts (which end the receiver sits at is
    not known), except that a victim and an aggressor known from their names to run the same
    way (both TX, both RX, DDR command/address/clock from the controller, MIPI CSI lanes
    camera to host, DSI lanes host to display) count FEXT only (their NEXT lands on the
    victim's transmitter), and ones known to run opposite ways (TX beside RX, CSI beside DSI)
    NEXT only (their FEXT lands there).  The victim's noise is the power sum
    √(Σ x²) over its aggressors (they are not synchronous), against ``budget_pct`` % of the
    swing.
    The edge tr is ``rise_ps`` where declared; otherwise two bounds of each aggressor's
    interface: one unit interval (no working link has a slower edge, so the noise there is a
    lower bound) and the fastest edge its specification allows (an upper bound):
    ``min_rise_ps`` of its signal type in ``rules/signals.yaml``, cited, where published, else
    ``fastest_rise_ui`` UI, marked [U] with what was searched.  Over the budget at one UI: a violation; only at the fastest edge: cannot
    verify at *info* severity, with both numbers and what to declare (a guessed edge must not
    make a warning on every microstrip bus).  The finding names the worst aggressor, the layer, the coupled
    length, the closest gap and the spacing that would bring the noise under the budget.
Why:
    Crosstalk is noise in the victim's eye that equalisation cannot remove: NEXT from a lane
    running the other way, FEXT (microstrip only: a stripline's homogeneous dielectric cancels
    it) from one running the same way, growing with the coupled length and the edge rate.  A
    spacing rule of thumb (3W, 5H) ignores both; the solved cross-section does not.
Parameters:
    ``budget_pct`` (%, > 0): the largest crosstalk, as a share of the aggressor's swing;
    ``max_gap_h`` (> 0): farthest edge-to-edge gap looked at, in heights to the reference
    (coupling beyond 4 h is under 1 % in microstrip, far less in stripline);
    ``fastest_rise_ui`` (UI, > 0, ≤ 1): the fastest edge assumed where neither the rule
    declares one nor the signal type cites one ([U]);
    ``rise_ps`` (ps, > 0, optional): the aggressors' declared 10–90 % edge at the coupling;
    ``min_coupled_mm`` (mm, ≥ 0): a victim/aggressor couple coupled over less than this in
    total is not judged (a pin escape);
    ``single_ended`` (bool, default false): also judge the type's single nets.
Cannot verify when:
    No edge rate is declared and the noise is over the budget at the fastest edge the
    interface allows but not at one unit interval: info severity, both numbers (declare
    ``rise_ps``: accel-drc.yaml ``rules: <rule id>: {params: {rise_ps: <ps>}}``); over the
    budget at one UI, but the stack-up's heights or εr are KiCad's
    defaults, or a victim's or aggressor's type is assumed (the number is kept, conditional);
    a layer's cross-section cannot be built (no stack-up, no reference plane): one finding
    naming the layers, info severity (the other checks that need the stack-up say so too).
Example:
    ``{check: crosstalk, signal: ddr4, severity: warning, params: {budget_pct: 5, max_gap_h: 4,
    fastest_rise_ui: 0.125, min_coupled_mm: 1, single_ended: true}}``: DDR4 DQ0–DQ2, 0.15 mm
    wide and 0.1 mm apart over 40 mm of stripline, take 17.8 % NEXT from each neighbour: DQ1
    25.1 % (power sum), a violation naming DQ0, In2.Cu, 0.100 mm and the gap that passes.  Two
    PCIe Gen4 TX pairs 0.3 mm apart over 40 mm of microstrip: FEXT 0.95 % at a one-UI edge,
    7.6 % at the fastest: cannot verify (info) until ``rise_ps`` is declared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import isin, unique
from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding, straight_pieces

if TYPE_CHECKING:
    from ..analysis.crosstalk import Coupling

KIND = "crosstalk"

PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["budget_pct", "max_gap_h", "fastest_rise_ui", "min_coupled_mm"],
    "properties": {
        "budget_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
        "max_gap_h": {"type": "number", "exclusiveMinimum": 0, "maximum": 20},
        "fastest_rise_ui": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "rise_ps": {"type": "number", "exclusiveMinimum": 0},
        "min_coupled_mm": {"type": "number", "minimum": 0},
        "single_ended": {"type": "boolean"},
    },
}

#: gap nodes per doubling at which the cross-section is solved (log-log interpolation between)
NODES_PER_OCTAVE = 2
#: widths are solved to the nearest 25 µm (Kb moves ~1 % across it)
WIDTH_STEP_MM = 0.025
#: most aggressors a finding lists
MAX_LISTED = 5
#: a broadside couple of layers ``u`` (upper) and ``u + 1`` is keyed ``BROADSIDE + u`` where a
#: layer index goes (its pieces' "gap" is the centre-to-centre offset across)
BROADSIDE = 1000
#: broadside offset nodes per vertical separation of the two strips (linear interpolation)
BROADSIDE_NODES = 2

#: a victim's couple: (aggressor name, its nets and signs, the net-to-net term keys, ends)
_Couple = tuple[str, Mapping[int, int], list[tuple[int, int]], str]


@dataclass
class _Term:
    """One victim net beside one aggressor net: its coupled pieces (layer, width, gap, length)
    and, once solved (:meth:`solve`), the sums the crosstalk formulas take."""

    layers: list[int] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    lengths: list[float] = field(default_factory=list)
    length: float = 0.0
    min_gap: float = math.inf
    pos: tuple[float, float] | None = None
    rows: list[int] = field(default_factory=list)  # victim track rows
    sums: tuple[float, float, float] | None = None  # (Σ Kb·len, Σ TD ps, Σ kf·TD ps)
    layer_sums: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    mids: list[tuple[float, float]] = field(default_factory=list)  # each piece's middle
    pieces: list[tuple[int, int]] = field(default_factory=list)  # (victim, aggressor) piece ids

    def add(
        self,
        layer: int,
        width: float,
        gap: float,
        length: float,
        row: int,
        mid: Any,
        piece: tuple[int, int] = (-1, -1),
    ) -> None:
        self.pieces.append(piece)
        self.layers.append(layer)
        self.widths.append(width)
        self.gaps.append(gap)
        self.lengths.append(length)
        self.length += length
        self.rows.append(row)
        self.mids.append((round(float(mid[0]), 4), round(float(mid[1]), 4)))
        if gap < self.min_gap:
            self.min_gap = gap
            self.pos = (round(float(mid[0]), 4), round(float(mid[1]), 4))

    def by_layer(self) -> dict[int, float]:
        out: dict[int, float] = {}
        for ly, ln in zip(self.layers, self.lengths):
            out[ly] = out.get(ly, 0.0) + ln
        return out

    def bound(self, solver: _Solver, coarse: bool = False) -> tuple[float, float, float]:
        """Upper-bound sums (Σ Kb·length, Σ TD, Σ |kf|·TD): the pieces of one layer and one
        solved width all at their closest gap's node at or below it (coupling falls with the
        gap), and every piece at the slowest delay the layer's dielectrics allow (εeff ≤ the
        largest εr).  The nodes are ones the full solution (:meth:`solve`) reads too, so the
        bound costs no solve the full one would not.  ``coarse``: each node's coarse-mesh
        bounds (:meth:`_Solver.span`: the largest Kb and |kf| the fine node can have), so an
        upper bound of the fine bound from the coarse meshes alone."""
        groups: dict[tuple[int, float], list[float]] = {}
        for ly, w, g, ln in zip(self.layers, self.widths, self.gaps, self.lengths):
            acc = groups.setdefault((ly, solver.quantise(w)), [math.inf, 0.0])
            acc[0] = min(acc[0], g)
            acc[1] += ln
        kb_len = td = kf_td = 0.0
        for (ly, w), (gap, ln) in groups.items():
            if coarse:
                sp = solver.span_below(ly, w, gap)
                kb, kf = sp[1], max(abs(sp[2]), abs(sp[3]))
            else:
                c = solver.at_node_below(ly, w, gap)
                kb, kf = c.kb, abs(c.kf)
            t = ln * solver.ps_per_mm_max(ly)
            kb_len += kb * ln
            td += t
            kf_td += kf * t
        return kb_len, td, kf_td

    def span_sums(self, solver: _Solver) -> tuple[float, float, float, float, float, float]:
        """The ranges (low, high) of :meth:`solve`'s three sums (Σ Kb·length, Σ TD, Σ kf·TD)
        that the fine solution can take, from the coarse meshes alone: each piece's
        interpolated bounds (:meth:`_Solver.span_interpolated`), a product kf·delay at its
        interval's extreme corners."""
        kb0 = kb1 = td0 = td1 = kt0 = kt1 = 0.0
        for ly, w, g, ln in zip(self.layers, self.widths, self.gaps, self.lengths):
            b0, b1, f0, f1, p0, p1 = solver.span_interpolated(ly, w, g)
            kb0 += b0 * ln
            kb1 += b1 * ln
            td0 += p0 * ln
            td1 += p1 * ln
            corners = (f0 * p0, f0 * p1, f1 * p0, f1 * p1)
            kt0 += min(corners) * ln
            kt1 += max(corners) * ln
        return kb0, kb1, td0, td1, kt0, kt1

    def solve(self, solver: _Solver) -> tuple[float, float, float]:
        """(Σ Kb·length, Σ TD, Σ kf·TD) over the pieces; per layer in :attr:`layer_sums`."""
        if self.sums is None:
            per: dict[int, list[float]] = {}
            for ly, w, g, ln in zip(self.layers, self.widths, self.gaps, self.lengths):
                kb, kf, ps = solver.interpolated(ly, w, g)
                acc = per.setdefault(ly, [0.0, 0.0, 0.0])
                acc[0] += kb * ln
                acc[1] += ps * ln
                acc[2] += kf * ps * ln
            self.layer_sums = {ly: (a[0], a[1], a[2]) for ly, a in per.items()}
            self.sums = tuple(sum(a[i] for a in per.values()) for i in range(3))  # type: ignore[assignment]
        return self.sums  # type: ignore[return-value]

    def where(self, layer: int) -> tuple[float, float, tuple[float, float] | None, int]:
        """(coupled length, closest gap, its position, its victim track row) of the pieces on
        ``layer``."""
        got = [(g, i) for i, (ly, g) in enumerate(zip(self.layers, self.gaps)) if ly == layer]
        length = sum(ln for ly, ln in zip(self.layers, self.lengths) if ly == layer)
        g, i = min(got)
        return length, g, self.mids[i], self.rows[i]


class _Solver:
    """Field solutions of the board's cross-sections at gap nodes h·2^(k/2), memoised on the
    analysis (shared by every crosstalk rule of the run): the fine couplings, and the coarse
    mesh's capacitances and couplings the screen reads (:meth:`span`)."""

    def __init__(self, ctx: CheckContext) -> None:
        from ..analysis.impedance import layer_stack

        self.board = ctx.board
        self.analysis = ctx.analysis
        self.memo: dict[Any, Any] = ctx.analysis.memo.setdefault("crosstalk_couplings", {})
        self._stacks: dict[int, Any] = {}
        self._layer_stack = layer_stack
        #: (layer, solved width, gap node) -> :meth:`span` (a node's range stays valid once the
        #: fine solution is known: it holds it)
        self._spans: dict[tuple[int, float, int], tuple[float, ...]] = {}

    def stack(self, layer: int) -> Any:
        got = self._stacks.get(layer)
        if got is None:
            got = self._layer_stack(self.board, layer, self.analysis.plane_layers)
            self._stacks[layer] = got
        return got

    def height(self, layer: int) -> float:
        """The layer's height to its nearest plane; of a broadside couple, the vertical
        distance between its two strips' centres."""
        if layer >= BROADSIDE:
            from ..analysis.crosstalk import broadside_section

            a, b = self.stacks(layer)
            yb, ya, _top, _layers = broadside_section(a, b)
            return (ya + 0.5 * (a.t_mm or 0.0)) - (yb + 0.5 * (b.t_mm or 0.0))
        return _height(self.stack(layer))

    def stacks(self, layer: int) -> list[Any]:
        """The cross-sections ``layer`` stands for: its own, or a broadside couple's two."""
        if layer >= BROADSIDE:
            return [self.stack(layer - BROADSIDE), self.stack(layer - BROADSIDE + 1)]
        return [self.stack(layer)]

    def layer_name(self, layer: int) -> str:
        """``In2.Cu``, or ``In2.Cu/In3.Cu`` for a broadside couple."""
        return "/".join(s.layer_name for s in self.stacks(layer))

    def dual_stripline(self, upper: int) -> bool:
        """Whether copper layers ``upper`` and ``upper + 1`` are the two signal layers of a
        dual stripline: both striplines with every value known, between the same two planes
        (no plane between them), the lower layer below the upper one."""
        a, b = self.stack(upper), self.stack(upper + 1)
        if a.structure != "stripline" or b.structure != "stripline" or a.missing or b.missing:
            return False
        if len(a.references) != 2 or set(a.references) != set(b.references):
            return False
        if None in (a.h_below_mm, a.h_above_mm, b.h_below_mm, b.h_above_mm):
            return False
        return bool(b.h_below_mm + (b.t_mm or 0.0) < a.h_below_mm)

    def ps_per_mm_max(self, layer: int) -> float:
        """The slowest delay (ps/mm) a line on ``layer`` can have: at the largest εr of its
        cross-section (substrate, prepreg, soldermask), which bounds εeff = C/C_air from above
        (a capacitance grows with every εr in the field)."""
        from ..analysis.crosstalk import C0_M_S

        ers = [1.0]
        for st in self.stacks(layer):
            ers += [e for e in (st.er_below, st.er_above, st.mask[1] if st.mask else None) if e]
        return math.sqrt(max(ers)) / C0_M_S * 1e9

    @staticmethod
    def quantise(width: float) -> float:
        """The width (mm) a cross-section is solved at: the nearest :data:`WIDTH_STEP_MM`."""
        return max(round(width / WIDTH_STEP_MM) * WIDTH_STEP_MM, WIDTH_STEP_MM)

    def _node(self, layer: int, width: float, k: int) -> Coupling:
        from ..analysis.crosstalk import coupling_of

        h = self.height(layer)
        return coupling_of(
            self.stack(layer), self.quantise(width), h * 2.0 ** (k / NODES_PER_OCTAVE), self.memo
        )

    def _broadside_node(self, layer: int, width: float, k: int) -> Coupling:
        """A broadside couple's coupling at centre offset ``k`` steps of
        height/:data:`BROADSIDE_NODES` across."""
        from ..analysis.crosstalk import broadside_coupling_of

        a, b = self.stacks(layer)
        step = self.height(layer) / BROADSIDE_NODES
        return broadside_coupling_of(a, b, self.quantise(width), k * step, self.memo)

    def at_node_below(self, layer: int, width: float, gap: float) -> Coupling:
        """The coupling at the gap node at or below ``gap`` (an upper bound of its coupling);
        of a broadside couple, at the offset node at or below it."""
        if layer >= BROADSIDE:
            step = self.height(layer) / BROADSIDE_NODES
            return self._broadside_node(layer, width, max(math.floor(gap / step + 1e-9), 0))
        return self._node(layer, width, self._node_below(layer, gap))

    def _node_below(self, layer: int, gap: float) -> int:
        """The gap node at or below ``gap`` on a (not broadside) ``layer``."""
        return math.floor(NODES_PER_OCTAVE * math.log2(gap / self.height(layer)) + 1e-9)

    def span(self, layer: int, width: float, k: int) -> tuple[float, ...]:
        """(Kb low, Kb high, kf low, kf high, ps/mm low, ps/mm high): the range the fine
        solution at gap node ``k`` lies in, from its coarse mesh alone
        (:func:`~accel_drc.analysis.crosstalk.coarse_coupling_of` and its measured bounds
        ``COARSE_KB``, ``COARSE_KF``, ``COARSE_PS``); a node outside the coarse mesh's measured
        domain, or solved fully already, is its fine value (a range of one point)."""
        from ..analysis.crosstalk import (
            COARSE_KB,
            COARSE_KF,
            COARSE_PS,
            coarse_coupling_of,
        )

        w = self.quantise(width)
        got = self._spans.get((layer, w, k))
        if got is not None:  # memoised: the cross-section's key costs more than the look-up
            return got
        h = self.height(layer)
        c, coarse = coarse_coupling_of(
            self.stack(layer), w, h * 2.0 ** (k / NODES_PER_OCTAVE), self.memo
        )
        ps = c.ps_per_mm
        kb = abs(c.kb) if coarse else 0.0
        got = (
            c.kb - COARSE_KB[0] * kb,
            c.kb + COARSE_KB[1] * kb,
            c.kf - COARSE_KF[0] * kb,
            c.kf + COARSE_KF[1] * kb,
            ps * (1.0 - COARSE_PS[0]) if coarse else ps,
            ps * (1.0 + COARSE_PS[1]) if coarse else ps,
        )
        self._spans[(layer, w, k)] = got
        return got

    def span_below(self, layer: int, width: float, gap: float) -> tuple[float, ...]:
        """:meth:`span` at the gap node at or below ``gap`` (:meth:`at_node_below`); of a
        broadside couple, its fine node (a range of one point: the two-strip solution has no
        coarse screen)."""
        if layer >= BROADSIDE:
            c = self.at_node_below(layer, width, gap)
            return c.kb, c.kb, c.kf, c.kf, c.ps_per_mm, c.ps_per_mm
        return self.span(layer, width, self._node_below(layer, gap))

    def span_interpolated(self, layer: int, width: float, gap: float) -> tuple[float, ...]:
        """The range (:meth:`span`) of :meth:`interpolated` at ``gap``, from the coarse meshes:
        the same interpolation of the nodes' low ends and of their high ends.  Kb log-log and
        kf and the delay linearly are each increasing in both node values (weights 1 − f and
        f ≥ 0, exp and log increasing), so the fine nodes lying in their ranges puts the fine
        interpolation in this one.  A broadside couple: its fine value (no coarse screen; no
        board at hand has a dual stripline)."""
        if layer >= BROADSIDE:
            kb, kf, ps = self.interpolated(layer, width, gap)
            return kb, kb, kf, kf, ps, ps
        x = NODES_PER_OCTAVE * math.log2(gap / self.height(layer))
        k0 = math.floor(x + 1e-9)
        f = max(x - k0, 0.0)
        a = self.span(layer, width, k0)
        if f < 1e-9:
            return a
        b = self.span(layer, width, k0 + 1)

        def loglog(p: float, q: float) -> float:
            return math.exp((1 - f) * math.log(max(p, 1e-12)) + f * math.log(max(q, 1e-12)))

        return (
            loglog(a[0], b[0]),
            loglog(a[1], b[1]),
            *((1 - f) * a[i] + f * b[i] for i in range(2, 6)),
        )

    def interpolated(self, layer: int, width: float, gap: float) -> tuple[float, float, float]:
        """(Kb, kf, ps/mm) at ``gap``: Kb log-log between the two nodes around it, kf and the
        delay linearly in log gap; of a broadside couple, all three linearly in the offset."""
        if layer >= BROADSIDE:
            x = max(gap, 0.0) / (self.height(layer) / BROADSIDE_NODES)
            k0 = math.floor(x + 1e-9)
            f = max(x - k0, 0.0)
            lo = self._broadside_node(layer, width, k0)
            if f < 1e-9:
                return lo.kb, lo.kf, lo.ps_per_mm
            hi = self._broadside_node(layer, width, k0 + 1)
            return (
                (1 - f) * lo.kb + f * hi.kb,
                (1 - f) * lo.kf + f * hi.kf,
                (1 - f) * lo.ps_per_mm + f * hi.ps_per_mm,
            )
        x = NODES_PER_OCTAVE * math.log2(gap / self.height(layer))
        k0 = math.floor(x + 1e-9)
        f = max(x - k0, 0.0)
        lo = self._node(layer, width, k0)
        if f < 1e-9:  # on a node (a gap of exactly h·2^(k/2)): the node above is not needed
            return lo.kb, lo.kf, lo.ps_per_mm
        hi = self._node(layer, width, k0 + 1)
        kb = math.exp((1 - f) * math.log(max(lo.kb, 1e-12)) + f * math.log(max(hi.kb, 1e-12)))
        return kb, (1 - f) * lo.kf + f * hi.kf, (1 - f) * lo.ps_per_mm + f * hi.ps_per_mm


@register(KIND)
def check_crosstalk(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    analysis = ctx.analysis
    board = ctx.board
    params = rule.params or {}
    victims = _victims(ctx, rule, bool(params.get("single_ended")))
    if not victims:
        return out
    out.examined_nets = frozenset(n for members in victims.values() for n in members)
    if board.stackup is None or not board.stackup.layers:
        out.findings.append(
            finding(rule, Status.CANNOT_VERIFY, f"{rule.signal}: no stack-up, so no cross-section "
                    "to solve: crosstalk is not checked",
                    evidence={"declare": "the board stack-up (Board Setup > Physical Stackup)"},
                    severity=Severity.INFO)
        )  # fmt: skip
        return out
    aggressors = _units(board, sorted(analysis.net_signal))
    solver = _Solver(ctx)
    terms, unbuilt = _terms(ctx, solver, victims, aggressors, float(params["max_gap_h"]))
    _judge(ctx, rule, solver, victims, aggressors, terms, out)
    if unbuilt:
        out.findings.append(
            finding(rule, Status.CANNOT_VERIFY,
                    f"{rule.signal}: no cross-section on {', '.join(sorted(unbuilt))}: "
                    "crosstalk there is not checked",
                    evidence={"layers": {k: list(v) for k, v in sorted(unbuilt.items())},
                              "declare": "the missing stack-up values (Board Setup > Physical "
                              "Stackup)"},
                    severity=Severity.INFO)
        )  # fmt: skip
    return out


def _victims(ctx: CheckContext, rule: Rule, single_ended: bool) -> dict[str, dict[int, int]]:
    """Victim name -> {net: sign}: the rule's pairs (P +1, N −1), and with ``single_ended``
    its other nets on their own."""
    nets = tuple(ctx.analysis.nets_by_signal(rule.signal)) if rule.signal else ()
    if not nets:
        return {}
    units = _units(ctx.board, nets)
    if single_ended:
        return units
    return {k: v for k, v in units.items() if len(v) == 2}


def _units(board: Any, nets: Sequence[int]) -> dict[str, dict[int, int]]:
    """Name -> {net: sign} of ``nets`` grouped as the board's pairs (both halves among
    ``nets``) and single nets."""
    want = set(nets)
    out: dict[str, dict[int, int]] = {}
    paired: set[int] = set()
    for p in board.diff_pairs:
        if p.positive in want and p.negative in want:
            out[p.name] = {p.positive: 1, p.negative: -1}
            paired |= {p.positive, p.negative}
    for n in nets:
        if n not in paired:
            out[board.nets[n]] = {n: 1}
    return out


@dataclass(frozen=True)
class _LayerRuns:
    """The parallel runs on one copper layer between the segments of every net with a signal
    type (victim and aggressor alike): ``runs`` indexes ``v_rows``/``a_rows`` (the pieces'
    track rows, an arc as its two chords); ``nets`` the typed nets with copper there."""

    runs: Any
    v_rows: np.ndarray
    a_rows: np.ndarray
    nets: np.ndarray
    #: the straight pieces' ends (what ``runs`` indexes), for the drawing of a finding's runs
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None


def _typed_runs(
    ctx: CheckContext, solver: _Solver, max_gap_h: float
) -> tuple[dict[int, _LayerRuns], dict[int, np.ndarray]]:
    """Every layer's :class:`_LayerRuns`, and the typed nets on each layer whose cross-section
    cannot be built: one join per layer for the whole run, memoised on the analysis (every
    crosstalk rule's victims are typed nets, so each rule takes its rows from the same join
    instead of joining its own victims with every typed net again)."""
    from ..analysis.crosstalk import parallel_runs

    analysis = ctx.analysis
    memo = analysis.memo.setdefault("crosstalk_runs", {})
    if max_gap_h in memo:
        return memo[max_gap_h]  # type: ignore[no-any-return]
    board = ctx.board
    t = board.tracks
    typed = isin(t.net, np.fromiter(analysis.net_signal, np.int64, len(analysis.net_signal)))
    unit = _unit_ids(ctx)
    built: dict[int, _LayerRuns] = {}
    unbuilt: dict[int, np.ndarray] = {}
    for ly in range(board.layer_count):
        rows = np.flatnonzero(typed & (t.layer == ly))
        if not len(rows):
            continue
        nets = unique(t.net[rows]).astype(np.int64)
        stack = solver.stack(ly)
        if stack.missing or stack.h_below_mm is None:
            unbuilt[ly] = nets
            continue
        s, e, r = straight_pieces(board, rows)
        w = t.width[r]
        u = unit[t.net[r]]
        runs = parallel_runs(s, e, w, s, e, w, max_gap_h * solver.height(ly), v_unit=u, a_unit=u)
        built[ly] = _LayerRuns(runs, r, r, nets, s, e)
    for ly in range(board.layer_count - 1):
        if ly in built and ly + 1 in built and solver.dual_stripline(ly):
            built[BROADSIDE + ly] = _broadside_runs(
                ctx, solver, built[ly], built[ly + 1], max_gap_h
            )
    memo[max_gap_h] = (built, unbuilt)
    return built, unbuilt


def _broadside_runs(
    ctx: CheckContext, solver: _Solver, up: _LayerRuns, down: _LayerRuns, max_gap_h: float
) -> _LayerRuns:
    """The runs of a dual stripline's two signal layers over each other: every typed piece
    on the upper layer against every one on the lower (directions within 10°), within a centre
    offset across of ``max_gap_h`` × their vertical separation plus a width (stacked traces
    included); each couple both ways round (either may be the victim), its "gap" the offset."""
    from ..analysis.crosstalk import Runs, parallel_runs

    assert up.starts is not None and up.ends is not None
    assert down.starts is not None and down.ends is not None
    t = ctx.board.tracks
    unit = _unit_ids(ctx)
    zu, zd = np.zeros(len(up.v_rows)), np.zeros(len(down.v_rows))
    reach = max_gap_h * solver.height(BROADSIDE + int(t.layer[up.v_rows[0]])) + float(
        max(t.width[up.v_rows].max(), t.width[down.v_rows].max())
    )
    got = parallel_runs(
        up.starts, up.ends, zu, down.starts, down.ends, zd, reach,
        v_unit=unit[t.net[up.v_rows]], a_unit=unit[t.net[down.v_rows]], min_gap_mm=-1.0,
    )  # fmt: skip
    n = len(up.v_rows)
    runs = Runs(
        np.concatenate([got.victim, got.aggressor + n]),
        np.concatenate([got.aggressor + n, got.victim]),
        np.concatenate([got.length_mm, got.length_mm]),
        np.concatenate([got.gap_mm, got.gap_mm]),
        np.concatenate([got.mid, got.mid]),
    )
    rows = np.concatenate([up.v_rows, down.v_rows])
    return _LayerRuns(
        runs, rows, rows, unique(np.concatenate((up.nets, down.nets))),
        np.concatenate([up.starts, down.starts]), np.concatenate([up.ends, down.ends]),
    )  # fmt: skip


def _unit_ids(ctx: CheckContext) -> np.ndarray:
    """Net id -> unit id: a pair's N maps to its P when both have the same signal type (the
    pair every rule of that type judges as one victim, whose legs are not each other's
    aggressors), every other net to itself."""
    sig = ctx.analysis.net_signal
    unit = np.arange(max(len(ctx.board.nets), 1), dtype=np.int64)
    for p in ctx.board.diff_pairs:
        a, b = sig.get(p.positive), sig.get(p.negative)
        if a is not None and b is not None and a.signal == b.signal:
            unit[p.negative] = p.positive
    return unit


def _terms(
    ctx: CheckContext,
    solver: _Solver,
    victims: Mapping[str, Mapping[int, int]],
    aggressors: Mapping[str, Mapping[int, int]],
    max_gap_h: float,
) -> tuple[dict[tuple[int, int], _Term], dict[str, tuple[str, ...]]]:
    """The coupled pieces of every victim net beside every aggressor net (its partner
    excepted), over every layer, taken from the run's shared join (:func:`_typed_runs`); and
    the layers, holding a victim, whose cross-section cannot be built."""
    board = ctx.board
    t = board.tracks
    vnets = np.array(sorted({n for m in victims.values() for n in m}), np.int64)
    anets = np.array(sorted({n for m in aggressors.values() for n in m}), np.int64)
    partner = {n: m for u in victims.values() if len(u) == 2 for n in u for m in u if m != n}
    terms: dict[tuple[int, int], _Term] = {}
    built, unbuilt_nets = _typed_runs(ctx, solver, max_gap_h)
    unbuilt: dict[str, tuple[str, ...]] = {}
    for ly, nets in unbuilt_nets.items():
        if isin(nets, vnets).any():
            stack = solver.stack(ly)
            unbuilt[stack.layer_name] = stack.missing or ("a reference plane",)
    for ly, lr in sorted(built.items()):
        runs = lr.runs
        if not len(runs.victim):
            continue
        rows_v = lr.v_rows[runs.victim]
        nv = t.net[rows_v].astype(np.int64)
        na = t.net[lr.a_rows[runs.aggressor]].astype(np.int64)
        keep = np.flatnonzero(isin(nv, vnets) & isin(na, anets) & (nv != na))
        if not len(keep):
            continue
        widths = t.width[rows_v[keep]].tolist()
        gaps = runs.gap_mm[keep].tolist()
        lengths = runs.length_mm[keep].tolist()
        mids = runs.mid[keep]
        vp, ap = runs.victim[keep].tolist(), runs.aggressor[keep].tolist()
        for i, (v, a, row) in enumerate(
            zip(nv[keep].tolist(), na[keep].tolist(), rows_v[keep].tolist())
        ):
            if partner.get(v) == a:
                continue
            terms.setdefault((v, a), _Term()).add(
                ly, widths[i], gaps[i], lengths[i], row, mids[i], (vp[i], ap[i])
            )
    return terms, unbuilt


def _height(stack: Any) -> float:
    """Height (mm) of the layer to its nearest reference plane."""
    hs = [h for h in (stack.h_below_mm, stack.h_above_mm) if h]
    return float(min(hs))


def _rise_bounds(
    ctx: CheckContext, rule: Rule, nets: Mapping[int, int]
) -> tuple[float, float, bool, str]:
    """(slow, fast) edge (ps) of an aggressor, whether it is declared, and where the fast edge
    comes from: ``rise_ps`` for both (declared); else one UI and the fastest 10-90 % edge its
    signal type's specification allows (``min_rise_ps`` in ``rules/signals.yaml``, the
    library's cited fact), or ``fastest_rise_ui`` UI where the library has none ([U]: an
    assumed edge, with what was searched)."""
    params = rule.params or {}
    if params.get("rise_ps"):
        r = float(params["rise_ps"])
        return r, r, True, "declared: rise_ps"
    a = ctx.analysis.net_signal.get(next(iter(nets)))
    # per signal type and rule, once a run (the bound asks for every couple of every victim)
    memo = ctx.analysis.memo.setdefault("crosstalk_edges", {})
    key = (rule.id, params["fastest_rise_ui"], a.signal if a is not None else None)
    got = memo.get(key)
    if got is None:
        got = memo[key] = _spec_edge(ctx, a, float(params["fastest_rise_ui"]))
    return got


def _spec_edge(ctx: CheckContext, a: Any, ui_frac: float) -> tuple[float, float, bool, str]:
    """:func:`_rise_bounds` of an aggressor of assignment ``a`` with no edge declared."""
    st = ctx.analysis.signal_types.get(a.signal) if a is not None else None
    baud = float(getattr(st, "baud_gbd", 0.0) or getattr(st, "data_rate_gbps", 0.0) or 1.0)
    ui = 1000.0 / baud
    cited = getattr(st, "min_rise_ps", None)
    if cited:
        where = f"rules/signals.yaml {st.id} min_rise_ps {float(cited):g} ps"
        return ui, min(float(cited), ui), False, f"{where}: {st.min_rise_source}"
    searched = getattr(st, "min_rise_source", "") or "[U] no primary minimum edge in the library"
    return ui, ui_frac * ui, False, f"[U] assumed {ui_frac:g} UI: {searched}"


def _edge_note(source: str) -> str:
    """How a finding's text names its fastest edge: cited from the library, or [U] assumed."""
    return "[U] assumed" if source.startswith("[U]") else "spec minimum"


#: a DDR command/address/clock net: driven by the controller only (the leaf of its name)
_DDR_COMMAND = re.compile(
    r"(?:^|[^a-z0-9])(?:a\d+|ba\d|bg\d|ca\d+|cs\d*|cke\d*|odt\d*|act|par|we|cas|ras|ck|clk)"
    r"(?:_?[ntc])?(?:_?[pn+-])?$"
)
_CSI = re.compile(r"(?:^|[^a-z])csi")
_DSI = re.compile(r"(?:^|[^a-z])dsi")
_TX = re.compile(r"(?:^|[^a-z]|ss)(?:tx|pet|hso)(?:$|[^a-z]|[pn](?:$|[^a-z]))")
_RX = re.compile(r"(?:^|[^a-z]|ss)(?:rx|per|hsi)(?:$|[^a-z]|[pn](?:$|[^a-z]))")


def direction(name: str, signal: str | None = None) -> str | None:
    """Which way a net's signal travels, from its name: ``out`` (a transmitter's lane; a DDR
    command/address/clock from the controller, when ``signal`` is a DDR type; a MIPI DSI lane),
    ``in`` (a receiver's lane; a MIPI CSI lane, camera to host), or None (a DQ or strobe, which
    runs both ways, or a name that does not say)."""
    leaf = name.rsplit("/", 1)[-1].lower()
    if _TX.search(leaf) and not _RX.search(leaf):
        return "out"
    if _RX.search(leaf) and not _TX.search(leaf):
        return "in"
    if (signal or "").startswith(("ddr", "lpddr")) and _DDR_COMMAND.search(leaf):
        return "out"
    if (signal or "").startswith("mipi"):
        # every lane of a CSI-2 link, clock included, runs camera -> host; of a DSI link,
        # host -> display: a camera input beside a display output runs the other way
        csi, dsi = bool(_CSI.search(leaf)), bool(_DSI.search(leaf))
        if csi != dsi:
            return "in" if csi else "out"
    return None


def _ends(ctx: CheckContext, victim: Mapping[int, int], aggressor: Mapping[int, int]) -> str:
    """Which end's crosstalk reaches the victim's receiver: ``far`` (FEXT) when victim and
    aggressor are known from their names to run the same way (their NEXT lands on the victim's
    transmitter), ``near`` (NEXT) when known to run opposite ways (their FEXT lands on it),
    else ``both`` (the larger counts)."""

    def way(n: int) -> str | None:
        a = ctx.analysis.net_signal.get(n)
        return direction(ctx.board.nets[n], a.signal if a is not None else None)

    dv = {way(n) for n in victim}
    da = {way(n) for n in aggressor}
    if len(dv) != 1 or len(da) != 1 or None in dv or None in da:
        return "both"
    return "far" if dv == da else "near"


#: what the message says of a couple whose direction decides the end
_ENDS_NOTE = {
    "both": "",
    "far": " (same direction: NEXT reaches its transmitter, not judged)",
    "near": " (opposite directions: FEXT reaches its transmitter, not judged)",
}


def _noise(
    sums: Mapping[tuple[int, int], tuple[float, float, float]],
    lengths: Mapping[tuple[int, int], float],
    victim: Mapping[int, int],
    aggressor: Mapping[int, int],
    rise_ps: float,
) -> tuple[float, float]:
    """(NEXT, FEXT) on ``victim`` from ``aggressor`` at edge ``rise_ps``, superposed."""
    from ..analysis.crosstalk import cap_fext, combine, crosstalk_at

    nxt: dict[tuple[int, int], float] = {}
    fxt: dict[tuple[int, int], float] = {}
    for key, (kb_len, td, kf_td) in sums.items():
        nxt[key], fxt[key] = crosstalk_at(kb_len, td, kf_td, lengths[key], rise_ps)
    return combine(nxt, victim, aggressor), cap_fext(combine(fxt, victim, aggressor))


def _power_sum(xs: Any) -> float:
    """The power sum √(Σ x²) of the aggressors' noise: the aggressors are not synchronous, so
    their peaks do not line up (IEEE 802.3ap's power-sum crosstalk)."""
    return math.sqrt(sum(x * x for x in xs))


def _worst(nf: tuple[float, float], ends: str) -> float:
    """The (NEXT, FEXT) value that reaches the victim's receiver (:func:`_ends`)."""
    return max(abs(nf[0]) if ends != "far" else 0.0, abs(nf[1]) if ends != "near" else 0.0)


def _bound(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    couples: Sequence[_Couple],
    terms: Mapping[tuple[int, int], _Term],
    coarse: bool,
) -> float:
    """An upper bound of a victim's noise at the fastest edges: every term at its upper-bound
    sums (:meth:`_Term.bound`, from the coarse meshes with ``coarse``), no cancellation inside
    a pair, the aggressors' noise summed plainly (a plain sum bounds the power sum)."""
    bound = 0.0
    for _an, agg, keys, ends in couples:
        _slow, fast, _d, _src = _rise_bounds(ctx, rule, agg)
        amp = 0.5 if len(agg) > 1 else 1.0
        for k in keys:
            b = _noise(
                {k: terms[k].bound(solver, coarse)},
                {k: terms[k].length},
                {k[0]: 1},
                {k[1]: 1},
                fast,
            )
            bound += amp * _worst((abs(b[0]), abs(b[1])), ends)
    return bound


def _noise_upper(
    spans: Mapping[tuple[int, int], tuple[float, ...]],
    lengths: Mapping[tuple[int, int], float],
    victim: Mapping[int, int],
    aggressor: Mapping[int, int],
    rise_ps: float,
) -> tuple[float, float]:
    """Upper bounds of |NEXT| and |FEXT| (:func:`_noise`) on ``victim`` from ``aggressor``,
    each net-to-net term's sums known only within ``spans`` (:meth:`_Term.span_sums`): NEXT
    rises with Σ Kb·length and with Σ TD (its extremes are at the ranges' corners), FEXT is
    linear in Σ kf·TD; each term's range enters the superposition with its sign, and the cap
    of ½ (monotone in |FEXT|) applies after it, as in :func:`_noise`."""
    from ..analysis.crosstalk import crosstalk_at

    amp = 0.5 if len(aggressor) > 1 else 1.0
    nxt = [0.0, 0.0]
    fxt = [0.0, 0.0]
    for (v, a), (kb0, kb1, td0, td1, kt0, kt1) in spans.items():
        sign = victim[v] * aggressor[a] * amp
        n = [crosstalk_at(kb, td, 0.0, lengths[(v, a)], rise_ps)[0] for kb in (kb0, kb1)
             for td in (td0, td1)]  # fmt: skip
        f = [kt / (2.0 * rise_ps) for kt in (kt0, kt1)]
        for acc, lo, hi in ((nxt, min(n), max(n)), (fxt, min(f), max(f))):
            acc[0] += min(sign * lo, sign * hi)
            acc[1] += max(sign * lo, sign * hi)
    return max(abs(nxt[0]), abs(nxt[1])), min(0.5, max(abs(fxt[0]), abs(fxt[1])))


#: relative slack on the coarse screen's upper bound: the fine solution sums its pieces in
#: another order, so its rounding may differ by a few ulps
_SCREEN_SLACK = 1e-9


def _coarse_passes(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    victim: Mapping[int, int],
    couples: Sequence[_Couple],
    terms: Mapping[tuple[int, int], _Term],
    budget: float,
) -> bool:
    """Whether the victim passes on the coarse meshes alone (no fine mesh solved): its coarse
    upper bound (:meth:`_Term.bound` with ``coarse``) under the budget, or else the full
    formula (superposition, the ends that count, power sum) at the fastest edges on the ranges
    the fine solution lies in (:func:`_noise_upper`).  Either way the full solution is under
    the budget too (each range holds the fine value: ``COARSE_*`` in analysis/crosstalk.py),
    so a victim the fine solution fails never passes here."""
    if _bound(ctx, rule, solver, couples, terms, True) <= budget:
        return True
    return (
        _coarse_upper(ctx, rule, solver, victim, couples, terms) * (1.0 + _SCREEN_SLACK) <= budget
    )


def _coarse_upper(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    victim: Mapping[int, int],
    couples: Sequence[_Couple],
    terms: Mapping[tuple[int, int], _Term],
) -> float:
    """An upper bound, from the coarse meshes alone, of the victim's power-summed noise at the
    fastest edges (the full solution's ``total_hi``): :func:`_noise_upper` of each aggressor,
    the end that counts (:func:`_worst`, increasing in both), power-summed."""
    worst = []
    for _an, agg, keys, ends in couples:
        _slow, fast, _d, _src = _rise_bounds(ctx, rule, agg)
        spans = {k: terms[k].span_sums(solver) for k in keys}
        lengths = {k: terms[k].length for k in keys}
        worst.append(_worst(_noise_upper(spans, lengths, victim, agg, fast), ends))
    return _power_sum(worst)


def _judge(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    victims: Mapping[str, Mapping[int, int]],
    aggressors: Mapping[str, Mapping[int, int]],
    terms: Mapping[tuple[int, int], _Term],
    out: CheckOutcome,
) -> None:
    """One finding per victim whose summed noise is over the budget (or may be).  Each victim
    is first screened on the coarse meshes (:func:`_coarse_passes`), then bounded from one
    fine solve per term (every piece at its closest gap, no cancellation inside a pair):
    under the budget at either, it passes without its full solution."""
    budget = float((rule.params or {})["budget_pct"]) / 100.0
    for name, victim, couples in _couples(ctx, rule, victims, aggressors, terms):
        # the coarse screen first (no fine mesh solved), then the fine bound as before: each
        # passes only victims the full solution passes, so the findings are the full one's
        if _coarse_passes(ctx, rule, solver, victim, couples, terms, budget):
            continue
        if _bound(ctx, rule, solver, couples, terms, False) <= budget:
            continue
        rows = _rows(ctx, rule, solver, victim, couples, terms)
        total_lo = _power_sum(_worst(r[3], r[8]) for r in rows)
        total_hi = _power_sum(_worst(r[4], r[8]) for r in rows)
        if total_hi <= budget:
            continue
        out.findings.append(
            _finding(ctx, rule, solver, name, victim, rows, total_lo, total_hi, budget)
        )


def _couples(
    ctx: CheckContext,
    rule: Rule,
    victims: Mapping[str, Mapping[int, int]],
    aggressors: Mapping[str, Mapping[int, int]],
    terms: Mapping[tuple[int, int], _Term],
) -> list[tuple[str, Mapping[int, int], list[_Couple]]]:
    """(victim name, its nets and signs, its couples) of every victim with an aggressor
    coupled over ``min_coupled_mm`` or more, by name."""
    min_len = float((rule.params or {})["min_coupled_mm"])
    unit_of = {n: name for name, m in aggressors.items() for n in m}
    vname = {n: name for name, m in victims.items() for n in m}
    by_victim: dict[str, set[str]] = {}
    for v, a in terms:
        if v in vname and a in unit_of:
            by_victim.setdefault(vname[v], set()).add(unit_of[a])
    out = []
    for name, anames in sorted(by_victim.items()):
        victim = victims[name]
        couples: list[_Couple] = []
        for an in sorted(anames):
            agg = aggressors[an]
            keys = [(v, a) for v in victim for a in agg if (v, a) in terms]
            if max(terms[k].length for k in keys) < min_len:
                continue
            couples.append((an, agg, keys, _ends(ctx, victim, agg)))
        if couples:
            out.append((name, victim, couples))
    return out


def _rows(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    victim: Mapping[int, int],
    couples: Sequence[_Couple],
    terms: Mapping[tuple[int, int], _Term],
) -> list[Any]:
    """The full (fine) solution of each couple: (aggressor, its nets, its terms, (NEXT, FEXT)
    at the slow edge, at the fast edge, slow, fast, declared, ends, the fast edge's source)."""
    rows = []
    for an, agg, keys, ends in couples:
        slow, fast, declared, src = _rise_bounds(ctx, rule, agg)
        sums = {k: terms[k].solve(solver) for k in keys}
        lengths = {k: terms[k].length for k in keys}
        lo = _noise(sums, lengths, victim, agg, slow)
        hi = _noise(sums, lengths, victim, agg, fast)
        rows.append((an, agg, [terms[k] for k in keys], lo, hi, slow, fast, declared, ends, src))
    return rows


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _db(x: float) -> str:
    return f"{20 * math.log10(abs(x)):.1f} dB" if x else "−∞ dB"


def _finding(
    ctx: CheckContext,
    rule: Rule,
    solver: _Solver,
    name: str,
    victim: Mapping[int, int],
    rows: list[Any],
    total_lo: float,
    total_hi: float,
    budget: float,
) -> Any:
    """The finding of one victim: a violation when over the budget at the slow bound (or the
    declared edge), else cannot verify with both numbers."""
    from ..analysis.impedance import stack_basis
    from ..analysis.signals import nets_signal_basis
    from ..analysis.stackup import weakest

    board = ctx.board
    names = [c.name for c in board.copper_layers]
    over = total_lo > budget
    # the worst aggressor at the edge the finding reports (rows[i][7]: the rule's rise_ps
    # declared, the same for every row)
    col = 3 if over or rows[0][7] else 4
    rows.sort(key=lambda r: -_worst(r[col], r[8]))
    an, agg, ts, lo, hi, slow, fast, declared, ends, src = rows[0]
    # the quantity that dominates at the edge the finding reports (one UI or declared when
    # over there, else the fastest): at a slow edge a microstrip's NEXT can dominate while its
    # FEXT, growing as 1/tr, dominates at the fastest
    at_edge = lo if over or declared else hi
    which = (
        "FEXT"
        if ends == "far" or (ends == "both" and abs(at_edge[1]) >= abs(at_edge[0]))
        else "NEXT"
    )
    # the net-to-net term and the layer that make the dominant quantity (a FEXT made on the
    # microstrip pieces of a net that runs mostly in stripline names the microstrip layer)
    q = 2 if which == "FEXT" else 0
    near = max(ts, key=lambda t: abs(t.solve(solver)[q]))
    layer = max(near.layer_sums, key=lambda k: abs(near.layer_sums[k][q]))
    on_len, on_gap, on_pos, on_row = near.where(layer)
    broadside = layer >= BROADSIDE
    if over or declared:
        head = f"crosstalk {_pct(total_lo)} ({_db(total_lo)})"
        at = "at the declared edge" if declared else "at a one-UI edge"
        worst = abs(lo[1] if which == "FEXT" else lo[0])
    else:
        head = (
            f"crosstalk between {_pct(total_lo)} (one-UI edge, {slow:.0f} ps) and "
            f"{_pct(total_hi)} (fastest edge, {fast:.1f} ps, {_edge_note(src)})"
        )
        at = "at the fastest edge"
        worst = abs(hi[1] if which == "FEXT" else hi[0])
    kind = "pair" if len(victim) == 2 else "net"
    need = _spacing_hint(
        solver, near, layer, on_gap, total_lo if over or declared else total_hi, budget, which
    )
    text = (
        f"{name} ({kind}): {head} from {len(rows)} aggressor(s), budget {_pct(budget)}; "
        f"worst {an}: {which} {_pct(worst)} {at}, made on {solver.layer_name(layer)}: coupled "
        + (
            f"{on_len:.1f} mm broadside (the other layer of the dual stripline, no plane "
            f"between) at {on_gap:.3f} mm offset across, centre to centre"
            if broadside
            else f"{on_len:.1f} mm at {on_gap:.3f} mm gap"
        )
        + _ENDS_NOTE[ends]
        + (f"; {need}" if need else "")
    )
    sb: dict[str, list[str]] = {}
    for ly in {ly for t in ts for ly in t.layers}:
        for st in solver.stacks(ly):
            for k, b in stack_basis(ctx.analysis, st):
                sb.setdefault(k, []).append(b)
    basis: dict[str, str] = {k: weakest(v) for k, v in sb.items()}
    basis["geometry"] = "measured"
    basis["signal"] = nets_signal_basis(
        ctx.analysis.net_signal, list(victim) + [n for r in rows for n in r[1]]
    )
    if declared:
        basis["rise"] = "declared"
    elif not over:  # the fastest edge makes the finding: cited (library) or [U] assumed
        basis["fastest_edge"] = (
            "assumed" if any(r[9].startswith("[U]") for r in rows) else "library"
        )
    status = Status.VIOLATION if over or declared else Status.CANNOT_VERIFY
    uuids = board.tracks.uuid
    items = tuple(dict.fromkeys(uuids[r] for t in ts for r in t.rows[:50] if uuids[r]))
    evidence: dict[str, Any] = {
        "budget": budget,
        "crosstalk_one_ui_edge": round(total_lo, 5),
        "crosstalk_fastest_edge": round(total_hi, 5),
        "aggressors": [
            {
                "aggressor": r[0],
                "next_one_ui": round(r[3][0], 5),
                "fext_one_ui": round(r[3][1], 5),
                "next_fastest": round(r[4][0], 5),
                "fext_fastest": round(r[4][1], 5),
                "judged": {"both": "NEXT, FEXT", "far": "FEXT", "near": "NEXT"}[r[8]],
                "rise_ps": [round(r[5], 2), round(r[6], 2)],
                "fastest_edge": r[9],
                "coupled_mm": round(max(t.length for t in r[2]), 3),
                "min_gap_mm": round(min(t.min_gap for t in r[2]), 4),
            }
            for r in rows[:MAX_LISTED]
        ],
        "model": MODEL,
        "coupled": _coupled_runs(ctx, rule, rows[:MAX_LISTED], names),
        **({"broadside": solver.layer_name(layer)} if broadside else {}),
    }
    if status == Status.CANNOT_VERIFY:
        evidence["declare"] = (
            f"the aggressors' edge rate: accel-drc.yaml rules: {rule.id}: "
            "{params: {rise_ps: <10-90 % edge at the coupling, ps>}}"
        )
    return finding(
        rule,
        status,
        text,
        measured=round(total_lo if over or declared else total_hi, 5),
        limit=budget,
        unit="fraction of the aggressor swing",
        net=board.nets[next(iter(victim))],
        layer=names[int(board.tracks.layer[on_row])],
        pos=on_pos,
        items=items,
        evidence=evidence,
        basis=basis,
        # over the budget only at the assumed fastest edge: shown, with what to declare, but
        # not a warning (a check that cries wolf on every microstrip bus is worse than none)
        severity=None if status == Status.VIOLATION else Severity.INFO,
    )


#: most coupled stretches a finding's evidence draws (the report's drawing of the runs)
MAX_DRAWN = 64


def _coupled_runs(
    ctx: CheckContext, rule: Rule, rows: Sequence[Any], names: Sequence[str]
) -> list[list[Any]]:
    """The coupled stretches of the listed aggressors, for the report's drawing:
    ``[vx0, vy0, vx1, vy1, ax0, ay0, ax1, ay1, layer, aggressor, gap mm]`` each, the victim's
    stretch (its piece's overlap, from the run's middle and length) and the same stretch
    projected on the aggressor's piece; the longest :data:`MAX_DRAWN`, from the run's shared
    join (:func:`_typed_runs`, memoised: no new search)."""
    built, _unbuilt = _typed_runs(ctx, _Solver(ctx), float((rule.params or {})["max_gap_h"]))
    out: list[tuple[float, list[Any]]] = []
    for r in rows:
        for term in r[2]:
            for ly, gap, ln, mid, (vp, ap) in zip(
                term.layers, term.gaps, term.lengths, term.mids, term.pieces
            ):
                lr = built.get(ly)
                if lr is None or lr.starts is None or lr.ends is None or vp < 0:
                    continue
                vs, ve = lr.starts[vp], lr.ends[vp]
                as_, ae = lr.starts[ap], lr.ends[ap]
                u = (ve - vs) / max(float(np.hypot(*(ve - vs))), 1e-12)
                ua = (ae - as_) / max(float(np.hypot(*(ae - as_))), 1e-12)
                c = vs + float(np.dot(np.asarray(mid) - vs, u)) * u  # on the victim's line
                p0, p1 = c - 0.5 * ln * u, c + 0.5 * ln * u
                q0 = as_ + float(np.dot(p0 - as_, ua)) * ua
                q1 = as_ + float(np.dot(p1 - as_, ua)) * ua
                xy = [round(float(v), 4) for v in (*p0, *p1, *q0, *q1)]
                vname = names[int(ctx.board.tracks.layer[lr.v_rows[vp]])]
                out.append((ln, [*xy, vname, r[0], round(gap, 4)]))
    out.sort(key=lambda x: -x[0])
    return [x[1] for x in out[:MAX_DRAWN]]


#: what the finding's evidence says of the model and its proof
MODEL = (
    "2-D field solution of the layer's cross-section (Kb = (Cm/C + Lm/L)/4, kf = Cm/C - Lm/L); "
    "TNT-MMTL's published coupled microstrip reproduced within 1 % (Kb -0.4 %, FEXT -1.0 %), "
    "Cohn's exact coupled stripline within 0.5 % (docs/impedance.md, Crosstalk)"
)


def _spacing_hint(
    solver: _Solver, term: _Term, layer: int, gap: float, noise: float, budget: float, which: str
) -> str:
    """ "about X mm": the gap at which the dominant net-to-net coupling on ``layer``, scaled
    from its closest ``gap`` there, brings ``noise`` under ``budget`` (an estimate: the other
    terms are taken to scale alike)."""
    w = max(term.widths)
    kb0, kf0, _ = solver.interpolated(layer, w, gap)
    ref = abs(kf0) if which == "FEXT" else kb0
    if ref <= 0:
        return ""
    if layer >= BROADSIDE:  # offset across, in steps of half the vertical separation
        step = solver.height(layer) / BROADSIDE_NODES
        for k in range(1, 8 * BROADSIDE_NODES + 1):
            g = gap + k * step
            kb, kf, _ = solver.interpolated(layer, w, g)
            if noise * (abs(kf) if which == "FEXT" else kb) / ref <= budget:
                return f"about {g:.3f} mm offset across (centre to centre) would meet the budget"
        return ""
    for k in range(1, 4 * NODES_PER_OCTAVE + 1):
        g = gap * 2.0 ** (k / NODES_PER_OCTAVE)
        kb, kf, _ = solver.interpolated(layer, w, g)
        if noise * (abs(kf) if which == "FEXT" else kb) / ref <= budget:
            return f"about {g:.3f} mm edge to edge would meet the budget"
    return ""
