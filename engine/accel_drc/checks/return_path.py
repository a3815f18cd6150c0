"""``return_path``: solid reference copper under every high-speed segment, and a return via at
every layer change that changes the reference.

What it checks:
    One rule per signal type (``rule.signal``).  For every track segment of its nets, the
    reference planes above and below it (the stack-up owner's walk over the plane layers) and
    the filled copper of those planes (the zone fills as stored in the board): each stretch of
    at least ``min_break_mm`` not over filled copper is a break, a *crossing* (a void or split:
    filled copper on both sides) or an *edge* (the trace runs off the plane), with its position
    and length; the finding states the fraction of the net's length over solid reference.
    Stretches inside the pad field of a footprint the net lands on (a BGA or connector
    breakout, where the planes are cut by the pins' antipads) are not judged, nor a stretch
    that runs from the net's own via no farther than two via diameters + 0.5 mm (the antipads
    of the via and its partner: the layer change is judged at the via).  At every via of
    these nets whose entry and exit layers have different reference layers: a via of a
    reference net within ``max_stitch_mm`` centre to centre, or, where the reference net changes
    (GND to a supply), a capacitor joining the two reference nets within that distance.  A return
    barrel is a via or a plated footprint hole (a connector's ground pin) of a reference net.
Why:
    A return current that meets a void detours around it: the loop inductance, the impedance
    and the crosstalk to every trace sharing the detour rise, and the lane radiates.  At a layer
    change the return must jump between planes; without a nearby return via it finds its way
    through the plane capacitance, far away.
Parameters:
    ``min_break_mm`` (mm, ≥ 1, two sampling steps): shortest uncovered stretch reported;
    ``max_stitch_mm`` (mm, > 0): farthest return via (or stitching capacitor) from a signal via;
    ``error_from_gbps`` (Gb/s, > 0): a crossing or a missing return via on a lane at or above
    this rate is at the rule's severity, otherwise (and every edge) a warning;
    ``single_ended`` (bool, default false): also judge the type's single-ended nets (DDR DQ and
    address/command); a serial link's lanes are pairs, and a single net that carries its type
    is a sideband (hot-plug detect, AUX) that needs no return path;
    ``edge_keepout_mm`` (mm, > 0, optional): a trace over its plane but within this distance of
    the plane's edge (a side where the copper stops within it and is still absent at twice it)
    along a stretch longer than twice this distance (shorter ones pass a corner of a void, not
    an edge) is a warning (``.edge_approach``): the fringe field and the return current crowd
    at the edge, the impedance rises and the edge radiates.
Cannot verify when:
    There is no stack-up, or a reference layer holds no stored zone fill (a plane typed in the
    stack-up but not filled: refill the zones): one finding per rule naming the layers.
Example:
    ``{check: return_path, signal: pcie4, severity: error, params: {min_break_mm: 1.0,
    max_stitch_mm: 1.27, error_from_gbps: 10}}``: a 30 mm F.Cu lane over a GND zone that stops
    half-way has one 15 mm edge break; a layer change with the nearest GND via 1.40 mm away
    fails, 1.20 mm passes; with ``edge_keepout_mm: 2.286`` (TI's 90 mil) a lane 1 mm inside
    the plane's edge is a warning, one 3 mm inside is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import isin, unique
from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding, straight_pieces

if TYPE_CHECKING:
    from ..analysis.returnpath import Approach, Break, PlaneFills

KIND = "return_path"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("via_stubs",)

PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["min_break_mm", "max_stitch_mm", "error_from_gbps"],
    "properties": {
        "min_break_mm": {"type": "number", "minimum": 1.0},
        "max_stitch_mm": {"type": "number", "exclusiveMinimum": 0},
        "error_from_gbps": {"type": "number", "exclusiveMinimum": 0},
        "single_ended": {"type": "boolean"},
        "edge_keepout_mm": {"type": "number", "exclusiveMinimum": 0},
    },
}

#: margin (mm) around a footprint's pads inside which a break is a breakout, not judged
PAD_FIELD_MARGIN_MM = 0.5


@register(KIND)
def check_return_path(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    analysis = ctx.analysis
    nets = tuple(analysis.nets_by_signal(rule.signal)) if rule.signal else ()
    if not nets:
        return out
    board = ctx.board
    params = rule.params or {}
    if not params.get("single_ended"):
        typed = set(nets)
        partners = _partners(analysis)
        nets = tuple(sorted(n for n in typed if not typed.isdisjoint(partners.get(n, ()))))
        if not nets:
            return out
    st = analysis.signal_types.get(rule.signal)
    rate = float(getattr(st, "data_rate_gbps", 0.0) or 0.0)
    fast = rate >= float(params["error_from_gbps"])
    out.examined_nets = frozenset(nets)
    if board.stackup is None or not board.stackup.layers:
        out.findings.append(
            finding(rule, Status.CANNOT_VERIFY, f"{rule.signal}: no stack-up, so no reference "
                    "planes: the return path is not checked",
                    evidence={"declare": "the board stack-up (Board Setup > Physical Stackup)"})
        )  # fmt: skip
        return out
    from ..analysis.returnpath import plane_fills
    from ..analysis.stackup import reference_walk

    fills = plane_fills(analysis)
    planes = analysis.plane_layers
    refs: dict[int, list[int]] = {}
    for ly in range(board.layer_count):
        walk = reference_walk(board.stackup, ly, planes)
        refs[ly] = (
            []
            if walk is None
            else [
                int(s.reference.copper_index)
                for s in walk.sides
                if s.reference is not None
                and s.known_plane
                and s.reference.copper_index is not None
            ]
        )
    unfilled: set[int] = set()
    _planar(ctx, rule, nets, refs, fills, fast, float(params["min_break_mm"]), unfilled, out)
    _layer_changes(ctx, rule, nets, refs, fills, fast, float(params["max_stitch_mm"]), out)
    if params.get("edge_keepout_mm"):
        _edge_approach(ctx, rule, nets, refs, fills, float(params["edge_keepout_mm"]),
                       float(params["min_break_mm"]), out)  # fmt: skip
    if unfilled:
        names = [board.copper_layers[k].name for k in sorted(unfilled)]
        out.findings.append(
            finding(rule, Status.CANNOT_VERIFY,
                    f"{rule.signal}: reference layer(s) {', '.join(names)} hold no stored zone "
                    "fill: the copper under the traces is unknown",
                    evidence={"layers": names, "declare": "fill the zones (KiCad: B) and save"})
        )  # fmt: skip
    return out


def _partners(analysis: Any) -> dict[int, set[int]]:
    """Each net's partners in the board's differential pairs (found once per board: every
    rule asks)."""
    got = analysis.memo.get("return_path_partners")
    if got is None:
        got = analysis.memo["return_path_partners"] = {}
        for p in analysis.board.diff_pairs:
            got.setdefault(p.positive, set()).add(p.negative)
            got.setdefault(p.negative, set()).add(p.positive)
    return got  # type: ignore[no-any-return]


def _pad_fields(analysis: Any, nets: Sequence[int]) -> np.ndarray:
    """(k, 4) boxes of the pads of every footprint that has a pad on one of ``nets``: the pad
    centres' extent grown by the footprint's largest pad side / 2 + :data:`PAD_FIELD_MARGIN_MM`.
    The boxes of every footprint and the footprint of every pad are found once per board
    (columns: the planar pass, the edge approach and the layer changes of every rule ask)."""
    memo = analysis.memo.get("return_path_fp_boxes")
    if memo is None:
        memo = analysis.memo["return_path_fp_boxes"] = _footprint_boxes(analysis.board)
    want = frozenset(nets)
    per_nets = analysis.memo.setdefault("return_path_fields", {})
    got = per_nets.get(want)
    if got is None:  # the planar pass, the edge approach and the layer changes ask alike
        boxes, pad_fp, pad_net = memo
        hit = unique(pad_fp[isin(pad_net, np.fromiter(want, np.int64, len(want)))])
        got = per_nets[want] = boxes[hit].reshape(-1, 4)
    return got  # type: ignore[no-any-return]


def _footprint_boxes(board: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes (F, 4) of the footprints that have pads, in board order; each pad's row in it;
    each pad's net), for :func:`_pad_fields`."""
    cols = [
        (i, p.x, p.y, p.width if p.width > p.height else p.height, p.net)
        for i, fp in enumerate(fp for fp in board.footprints if fp.pads)
        for p in fp.pads
    ]
    if not cols:
        return np.zeros((0, 4)), np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = np.asarray(cols, dtype=float)
    fp_of = a[:, 0].astype(np.int64)
    st = np.flatnonzero(np.r_[True, fp_of[1:] != fp_of[:-1]])
    r = np.maximum.reduceat(a[:, 3], st) / 2 + PAD_FIELD_MARGIN_MM
    boxes = np.column_stack(
        [
            np.minimum.reduceat(a[:, 1], st) - r,
            np.minimum.reduceat(a[:, 2], st) - r,
            np.maximum.reduceat(a[:, 1], st) + r,
            np.maximum.reduceat(a[:, 2], st) + r,
        ]
    )
    return boxes, fp_of, a[:, 4].astype(np.int64)


def _planar(
    ctx: CheckContext,
    rule: Rule,
    nets: Sequence[int],
    refs: Mapping[int, list[int]],
    fills: PlaneFills,
    fast: bool,
    min_break: float,
    unfilled: set[int],
    out: CheckOutcome,
) -> None:
    from ..analysis.returnpath import breaks, join_breaks

    board = ctx.board
    index = ctx.analysis.track_index
    boxes = _pad_fields(ctx.analysis, nets)
    names = [c.name for c in board.copper_layers]
    per_net: dict[int, dict[str, Any]] = {}
    for ly in range(board.layer_count):
        rows = index.rows_many(nets, ly)
        if not len(rows):
            continue
        for ref in refs.get(ly, ()):
            if not fills.has_fill(ref):
                unfilled.add(ref)
                continue
            s, e, r = straight_pieces(board, rows)
            covered, got = breaks(fills, ref, s, e, r.tolist())
            length = np.hypot(*(e - s).T)
            net_of = board.tracks.net[r]
            for n in unique(net_of).tolist():
                d = per_net.setdefault(n, {"length": 0.0, "covered": 0.0, "breaks": []})
                sel = net_of == n
                d["length"] += float(length[sel].sum())
                d["covered"] += float(covered[sel].sum())
            by_net: dict[int, list[Break]] = {}
            for b in got:
                by_net.setdefault(int(board.tracks.net[b.row]), []).append(b)
            for n, bs in by_net.items():
                if sum(b.length_mm for b in bs) < min_break - 1e-9:
                    continue  # no run joined from them reaches min_break (most: antipads)
                sel = net_of == n
                for b in join_breaks(bs, s[sel], e[sel]):
                    if b.length_mm < min_break - 1e-9 or _in_boxes(b, boxes):
                        continue
                    if b.kind == "edge" and _antipad(b, board.vias, n):
                        continue
                    per_net[n]["breaks"].append((b, names[ly], names[ref]))
    uuids = board.tracks.uuid
    for n, d in sorted(per_net.items()):
        if not d["breaks"]:
            continue
        frac = d["covered"] / d["length"] if d["length"] else 1.0
        brs: list[tuple[Break, str, str]] = d["breaks"]
        crossing = any(b.kind == "crossing" for b, _l, _r in brs)
        sev = rule.severity if crossing and fast else Severity.WARNING
        b0, l0, r0 = max(brs, key=lambda x: x[0].length_mm)
        text = (
            f"{board.nets[n]}: {len(brs)} break(s) in the reference plane under the trace; "
            f"longest {b0.length_mm:.2f} mm on {l0} over {r0} ({b0.kind}) from "
            f"({b0.start[0]:.2f}, {b0.start[1]:.2f}) to ({b0.end[0]:.2f}, {b0.end[1]:.2f}); "
            f"{100 * frac:.1f} % of the trace over solid reference"
        )
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                text,
                measured=round(frac, 4),
                limit=1.0,
                unit="fraction over solid reference",
                net=board.nets[n],
                layer=l0,
                pos=b0.start,
                items=tuple(uuids[b.row] for b, _l, _r in brs if uuids[b.row]),
                severity=sev,
                evidence={
                    "breaks": [
                        {
                            "layer": lname,
                            "reference": rname,
                            "kind": b.kind,
                            "start": b.start,
                            "end": b.end,
                            "length_mm": round(b.length_mm, 4),
                        }
                        for b, lname, rname in brs[:50]
                    ],  # fmt: skip
                    "fraction_over_reference": round(frac, 4),
                    "fills": "zone fills as stored in the board (refill before checking)",
                },
                basis={"fills": "measured", "signal": _signal_basis(ctx, (n,))},
            )
        )


def _edge_approach(
    ctx: CheckContext,
    rule: Rule,
    nets: Sequence[int],
    refs: Mapping[int, list[int]],
    fills: PlaneFills,
    keepout: float,
    min_run: float,
    out: CheckOutcome,
) -> None:
    """A warning per net whose trace runs over its reference plane but within ``keepout`` of
    that plane's edge for stretches (joined across the trace's corners) of at least ``min_run``
    and more than twice ``keepout`` (outside the pad fields of the parts it lands on, where
    every plane is cut by the pins' antipads).  Twice the keep-out: a trace passing the corner
    of a void at distance d < k is within k of it for 2·√(k² − d²) ≤ 2k; only an edge that runs
    along the trace keeps it near for longer."""
    from ..analysis.returnpath import approaches

    min_run = max(min_run, 2.0 * keepout)
    board = ctx.board
    index = ctx.analysis.track_index
    boxes = _pad_fields(ctx.analysis, nets)
    names = [c.name for c in board.copper_layers]
    per_net: dict[int, list[tuple[Any, str, str]]] = {}
    for ly in range(board.layer_count):
        rows = index.rows_many(nets, ly)
        if not len(rows):
            continue
        s, e, r = straight_pieces(board, rows)
        for ref in refs.get(ly, ()):
            if not fills.has_fill(ref):
                continue  # reported by the planar pass
            got = approaches(fills, ref, s, e, r.tolist(), keepout, boxes)
            for chain in _chains([a for a in got if not _in_boxes(a, boxes)], board):
                if sum(a.length_mm for a in chain) < min_run - 1e-9:
                    continue
                n = int(board.tracks.net[chain[0].row])
                per_net.setdefault(n, []).extend((a, names[ly], names[ref]) for a in chain)
    uuids = board.tracks.uuid
    for n, runs in sorted(per_net.items()):
        a0, l0, r0 = max(runs, key=lambda x: x[0].length_mm)
        total = sum(a.length_mm for a, _l, _r in runs)
        nearest = min(a.near_mm for a, _l, _r in runs)
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{board.nets[n]}: runs {total:.1f} mm within {keepout:g} mm of the edge of its "
                f"reference plane ({len(runs)} stretch(es); nearest ≈ {nearest:.2f} mm); longest "
                f"{a0.length_mm:.2f} mm on {l0} near the edge of {r0} from ({a0.start[0]:.2f}, "
                f"{a0.start[1]:.2f}) to ({a0.end[0]:.2f}, {a0.end[1]:.2f}): move the trace "
                f"{keepout:g} mm inside the plane, or extend the plane",
                measured=round(nearest, 4),
                limit=keepout,
                unit="mm to the plane edge",
                net=board.nets[n],
                layer=l0,
                pos=a0.start,
                items=tuple(uuids[a.row] for a, _l, _r in runs if uuids[a.row]),
                severity=Severity.WARNING,
                rule_id=f"{rule.id}.edge_approach",
                evidence={
                    "stretches": [
                        {
                            "layer": lname,
                            "reference": rname,
                            "start": a.start,
                            "end": a.end,
                            "length_mm": round(a.length_mm, 4),
                            "nearest_mm": a.near_mm,
                        }
                        for a, lname, rname in runs[:50]
                    ],  # fmt: skip
                    "length_mm": round(total, 4),
                    "fills": "zone fills as stored in the board (refill before checking)",
                },
                basis={"fills": "measured", "signal": _signal_basis(ctx, (n,))},
            )
        )


def _chains(got: Sequence[Approach], board: Any) -> list[list[Approach]]:
    """The stretches of one layer over one reference grouped where one ends where another
    begins on the same net (a trace's corner: the run goes on along the edge)."""
    from ..analysis.returnpath import _key

    parent = list(range(len(got)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    at: dict[tuple[int, int, int], int] = {}
    for i, a in enumerate(got):
        net = int(board.tracks.net[a.row])
        for q in (a.start, a.end):
            k = (net, *_key(q))
            if k in at:
                parent[find(i)] = find(at[k])
            else:
                at[k] = i
    groups: dict[int, list[Approach]] = {}
    for i, a in enumerate(got):
        groups.setdefault(find(i), []).append(a)
    return list(groups.values())


#: an edge break that starts at the net's own via and is no longer than this many of the via's
#: pad diameters (plus 0.5 mm) is the antipad of the via and its partner's, merged: the
#: return's way across the layer change is judged at the via (``.via``), not as a plane edge
ANTIPAD_DIAMETERS = 2.0


def _antipad(b: Break, vias: Any, net: int) -> bool:
    """Whether edge break ``b`` is the antipad void around a via of ``net`` it starts from."""
    if not len(vias.pos):
        return False
    mine = np.flatnonzero(vias.net == net)
    if not len(mine):
        return False
    for q in (b.start, b.end):
        d = np.hypot(vias.pos[mine, 0] - q[0], vias.pos[mine, 1] - q[1])
        k = int(np.argmin(d))
        if d[k] < 1e-3 and b.length_mm <= ANTIPAD_DIAMETERS * float(vias.diameter[mine[k]]) + 0.5:
            return True
    return False


def _in_boxes(b: Break | Approach, boxes: np.ndarray) -> bool:
    return _inside(0.5 * (b.start[0] + b.end[0]), 0.5 * (b.start[1] + b.end[1]), boxes)


def _inside(x: float, y: float, boxes: np.ndarray) -> bool:
    if not len(boxes):
        return False
    return bool(
        ((boxes[:, 0] <= x) & (x <= boxes[:, 2]) & (boxes[:, 1] <= y) & (y <= boxes[:, 3])).any()
    )


def _signal_basis(ctx: CheckContext, nets: Sequence[int]) -> str:
    from ..analysis.signals import nets_signal_basis

    return nets_signal_basis(ctx.analysis.net_signal, list(nets))


def _layer_changes(
    ctx: CheckContext,
    rule: Rule,
    nets: Sequence[int],
    refs: Mapping[int, list[int]],
    fills: PlaneFills,
    fast: bool,
    max_d: float,
    out: CheckOutcome,
) -> None:
    """A return via (or a stitching capacitor) near every via that changes the reference."""
    board = ctx.board
    stubs = ctx.analysis.via_stubs
    idx = stubs.rows_for_nets(nets)
    if not len(idx):
        return
    names = [c.name for c in board.copper_layers]
    caps = None
    boxes = None
    returns = None
    for i in idx.tolist():
        conn = np.flatnonzero(stubs.connected[i])
        if len(conn) < 2:
            continue
        lo, hi = int(conn[0]), int(conn[-1])
        a, b = set(refs.get(lo, ())), set(refs.get(hi, ()))
        if not a or not b or a & b:
            continue  # a reference plane shared by both layers carries the return across
        ref_nets = set()
        for k in a | b:
            ref_nets |= fills.nets_of(k)
        xy = stubs.xy[i]
        if boxes is None:
            boxes = _pad_fields(ctx.analysis, nets)
        if _inside(float(xy[0]), float(xy[1]), boxes):
            out.not_judged.setdefault(int(stubs.net[i]), []).append(
                f"return_path: via at ({xy[0]:.3f}, {xy[1]:.3f}) in a footprint's pad field "
                "(breakout), "
                "return vias not judged"
            )
            continue
        if returns is None:
            returns = _board_memo(ctx.analysis, "return_path_barrels", _return_barrels)
        nearest = float("inf")
        if ref_nets and len(returns[0]):
            mask = isin(returns[1], list(ref_nets))
            d = np.hypot(returns[0][mask, 0] - xy[0], returns[0][mask, 1] - xy[1])
            nearest = float(d.min()) if len(d) else nearest
        if nearest <= max_d + 1e-9:
            continue
        nets_a = set().union(*(fills.nets_of(k) for k in a))
        nets_b = set().union(*(fills.nets_of(k) for k in b))
        cap_d = float("inf")
        if nets_a and nets_b and not nets_a & nets_b:
            if caps is None:
                caps = _board_memo(ctx.analysis, "return_path_caps", _caps)
            cap_d = min(
                (
                    float(np.hypot(x - xy[0], y - xy[1]))
                    for x, y, pn in caps
                    if pn & nets_a and pn & nets_b
                ),
                default=float("inf"),
            )
            if cap_d <= max_d + 1e-9:
                continue
        net = board.nets[int(stubs.net[i])]
        ra = "+".join(names[k] for k in sorted(a))
        rb = "+".join(names[k] for k in sorted(b))
        need = (
            f"a stitching capacitor between {_few(board, nets_a)} and {_few(board, nets_b)}, "
            "or a return via,"
            if cap_d < float("inf") or (nets_a and nets_b and not nets_a & nets_b)
            else "a return via"
        )
        near = "none on the board" if nearest == float("inf") else f"nearest {nearest:.3f} mm"
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{net}: via at ({xy[0]:.3f}, {xy[1]:.3f}) {names[lo]}→{names[hi]} changes the "
                f"reference {ra} → {rb}; no return via within {max_d:g} mm ({near}): place "
                f"{need} within {max_d:g} mm",
                measured=None if nearest == float("inf") else round(nearest, 4),
                limit=max_d,
                unit="mm",
                net=net,
                layer=names[lo],
                pos=(round(float(xy[0]), 4), round(float(xy[1]), 4)),
                items=tuple(x for x in (stubs.uuid[i],) if x),
                severity=rule.severity if fast else Severity.WARNING,
                rule_id=f"{rule.id}.via",
                evidence={
                    "from": names[lo],
                    "to": names[hi],
                    "references_from": ra,
                    "references_to": rb,
                    "nearest_return_via_mm": None if nearest == float("inf") else round(nearest, 4),
                },  # fmt: skip
                basis={"geometry": "measured", "signal": _signal_basis(ctx, (int(stubs.net[i]),))},
            )
        )


def _few(board: Any, nets: set[int]) -> str:
    """Up to three net names (a split supply layer carries dozens)."""
    names = sorted(board.nets[x] for x in nets)
    return "/".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "")


def _board_memo(analysis: Any, key: str, make: Any) -> Any:
    """``make(board)``, found once per board (every rule's layer changes ask; a board's pads
    are tens of thousands)."""
    got = analysis.memo.get(key)
    if got is None:
        got = analysis.memo[key] = make(analysis.board)
    return got


def _return_barrels(board: Any) -> tuple[np.ndarray, np.ndarray]:
    """(positions (n, 2), nets) of every barrel that can carry a return current between
    layers: the vias, and the plated holes of footprint pads (a connector's ground pins)."""
    pts = [board.vias.pos.reshape(-1, 2)]
    nets = [board.vias.net.astype(np.int64)]
    pth = [(p.x, p.y, p.net) for fp in board.footprints for p in fp.pads if p.drill_mm and p.net]
    if pth:
        arr = np.asarray(pth, dtype=float)
        pts.append(arr[:, :2])
        nets.append(arr[:, 2].astype(np.int64))
    return np.concatenate(pts), np.concatenate(nets)


def _caps(board: Any) -> list[tuple[float, float, set[int]]]:
    """(x, y, the nets of its two pads) of every two-pad capacitor."""
    out = []
    for fp in board.footprints:
        if not (fp.reference or "").upper().startswith("C") or len(fp.pads) != 2:
            continue
        out.append((fp.x, fp.y, {p.net for p in fp.pads}))
    return out
