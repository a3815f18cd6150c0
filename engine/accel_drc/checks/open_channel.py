"""``open_channel``: a high-speed net whose copper does not join all its pads.

What it checks:
    Every differential pair net and every net with a recognised high-speed type (the nets the
    coverage lists) is traced on the board's own copper (:mod:`..analysis.connectivity`, KiCad's
    joining rules: copper of the net touching on a layer it has: a track's body over a pad
    (a flow-through route), two overlapping pads (alternative footprints at one place), track
    ends on tracks, tracks and pads on via discs, touching vias, zone fills and the fills
    touching each other, a track joined to a fill by an end in it).  A net whose pads fall into
    more than one island is open; so is one whose tracks or vias leave a piece that reaches no
    pad and no fill (the dangling copper KiCad's DRC lists as unconnected): the two agree net
    for net with ``kicad-cli pcb drc``'s ``unconnected_items`` (docs/rules.md).  A via of such
    a net that connects on one layer only is where the route stops; on a net whose pads all
    join, such a via is not reported here (KiCad's ``via_dangling`` is its rule).  One finding per net,
    naming the parts the pieces join ("/PCIe.RX1- is not routed between J1 and J2"), never one per
    pad: a half-routed board gives one line for each net still to route.  The pieces are in
    ``evidence["pieces"]`` with the routed length and via count, the one-layer vias in
    ``evidence["dangling_vias"]``; basis ``connectivity: measured``.
Why:
    An open lane is not a long stub or an impedance miss; reported as the stub it leaves (a via
    "connected" on one layer has its whole barrel as stub), it sends the designer to backdrill a
    via that needs a track.  An open channel fails the board whatever its interface.
Parameters:
    ``unknown_pairs`` (bool, default true): also trace differential pairs whose interface is not
    known (a pair is high-speed-looking by its structure).
Cannot verify when:
    Never (connectivity is measured; a net without pads is skipped).
Example:
    ``edge.open_channel: /PCIe_{x4}.RX1- is not routed between J1 and J2 (2 pieces: J1.29
    + 4.2 mm of track; J2.A7 alone)``.
"""

from __future__ import annotations

from typing import Any

from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "open_channel"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("via_stubs",)

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"unknown_pairs": {"type": "boolean"}},
}

#: most pieces / vias one message names
_SHOWN = 3


def channel_nets(ctx: CheckContext, unknown_pairs: bool = True) -> set[int]:
    """The nets the coverage lists: pair nets (all, or those of a known type) and typed nets."""
    sig = ctx.analysis.net_signal
    nets = set(sig)
    for p in ctx.analysis.diff_pairs:
        if unknown_pairs or p.positive in sig or p.negative in sig:
            nets.update((p.positive, p.negative))
    nets.discard(0)
    return nets


def _refs(group: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in group:
        ref = name.rsplit(".", 1)[0]
        if ref not in out:
            out.append(ref)
    return out


def _piece(group: tuple[str, ...]) -> str:
    shown = ", ".join(group[:_SHOWN]) + (f" +{len(group) - _SHOWN}" if len(group) > _SHOWN else "")
    return shown


def dangling_vias(ctx: CheckContext, nets: set[int]) -> dict[int, list[int]]:
    """Net -> via barrels (rows of ``analysis.via_stubs``) that connect on at most one layer."""
    stubs = ctx.analysis.via_stubs
    idx = stubs.rows_for_nets(nets)
    if not len(idx):
        return {}
    idx = idx[stubs.via_row[idx] >= 0]
    n_conn = stubs.connected[idx].sum(axis=1)
    out: dict[int, list[int]] = {}
    for i in idx[n_conn <= 1].tolist():
        out.setdefault(int(stubs.net[i]), []).append(int(i))
    return out


@register(KIND)
def check_open_channel(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    params = rule.params or {}
    nets = channel_nets(ctx, bool(params.get("unknown_pairs", True)))
    out = CheckOutcome(examined_nets=frozenset(nets))
    if not nets:
        return out
    from ..analysis.connectivity import net_islands  # only with channel nets to check

    board = ctx.board
    islands = net_islands(board, nets)
    out.checked = len(islands)
    stubs = ctx.analysis.via_stubs if len(board.vias) else None
    dangling = dangling_vias(ctx, nets) if stubs is not None else {}
    names = board.nets
    for net in sorted(set(islands) | set(dangling), key=lambda n: names[n]):
        isl = islands.get(net)
        vias = dangling.get(net, [])
        is_open = isl is not None and isl.open
        stray = isl is not None and not isl.open and isl.unconnected
        if not is_open and not stray:
            # every pad joined, no dangling copper: connected as KiCad counts it, even with a
            # via that only one layer reaches (KiCad's own via_dangling rule, not an open route)
            continue
        name = names[net]
        ev: dict[str, Any] = {"nets": [name]}
        parts: list[str] = []
        pos = isl.pos if isl is not None else None
        items: list[str] = []
        if is_open:
            groups = isl.pad_groups  # type: ignore[union-attr]
            a, b = _refs(groups[0]), _refs(groups[1])
            between = f"{'/'.join(a[:2])} and {'/'.join(b[:2])}"
            if set(a) == set(b):
                between = f"pads of {a[0]}"
            if isl.n_tracks == 0 and isl.n_vias == 0:  # type: ignore[union-attr]
                msg = f"{name} is not routed between {between} (no copper on the net)"
            else:
                pieces = "; ".join(_piece(g) for g in groups[:_SHOWN])
                more = f"; {len(groups) - _SHOWN} more" if len(groups) > _SHOWN else ""
                msg = (
                    f"{name} is not routed between {between}: its copper is in {len(groups)} "
                    f"pieces ({pieces}{more}), {isl.track_mm:.1f} mm of track, "  # type: ignore[union-attr]
                    f"{isl.n_vias} via{'s' if isl.n_vias != 1 else ''}"  # type: ignore[union-attr]
                )
                if isl.gap_mm is not None and isl.pos is not None:  # type: ignore[union-attr]
                    gx, gy = isl.pos  # type: ignore[union-attr]
                    msg += (
                        f"; the pieces come within {isl.gap_mm:.2f} mm of each other "  # type: ignore[union-attr]
                        f"(gap centred at {gx:.2f}, {gy:.2f})"
                    )
            ev.update(
                pieces=[list(g) for g in groups],
                loose_pieces=isl.loose,  # type: ignore[union-attr]
                track_mm=isl.track_mm,  # type: ignore[union-attr]
                vias=isl.n_vias,  # type: ignore[union-attr]
                gap_mm=isl.gap_mm,  # type: ignore[union-attr]
            )
            parts.append(msg)
        if stray:
            n_d = isl.dangling  # type: ignore[union-attr]
            gx, gy = isl.pos or (0.0, 0.0)  # type: ignore[union-attr]
            parts.append(
                f"{name}: {n_d} piece{'s' if n_d != 1 else ''} of its track or vias join"
                f"{'s' if n_d == 1 else ''} none of its pads (nearest gap "
                f"{isl.gap_mm or 0:.2f} mm, at {gx:.2f}, {gy:.2f}): dangling copper, "  # type: ignore[union-attr]
                "unconnected in KiCad's DRC too"
            )
            ev.update(dangling_pieces=n_d, track_mm=isl.track_mm, gap_mm=isl.gap_mm)  # type: ignore[union-attr]
        if vias:
            label = []
            for i in vias[:_SHOWN]:
                x, y = (float(c) for c in stubs.xy[i])  # type: ignore[union-attr]
                on = stubs.connected_names(i)  # type: ignore[union-attr]
                label.append(
                    f"({x:.2f}, {y:.2f}) on {on[0]}" if on else f"({x:.2f}, {y:.2f}) on no layer"
                )
            more = f" and {len(vias) - _SHOWN} more" if len(vias) > _SHOWN else ""
            txt = (
                f"{len(vias)} via{'s' if len(vias) != 1 else ''} connect{'s' if len(vias) == 1 else ''} "
                f"on one layer or none: {', '.join(label)}{more} (the route stops in the via; "
                "not a stub to backdrill)"
            )
            parts.append(txt if is_open or stray else f"{name}: {txt}")
            ev["dangling_vias"] = [
                {
                    "x": round(float(stubs.xy[i][0]), 4),  # type: ignore[union-attr]
                    "y": round(float(stubs.xy[i][1]), 4),  # type: ignore[union-attr]
                    "connected": stubs.connected_names(i),  # type: ignore[union-attr]
                    "uuid": stubs.uuid[i],  # type: ignore[union-attr]
                }
                for i in vias[:50]
            ]
            items = [d["uuid"] for d in ev["dangling_vias"] if d["uuid"]]
            if pos is None:
                first = vias[0]
                pos = (round(float(stubs.xy[first][0]), 4), round(float(stubs.xy[first][1]), 4))  # type: ignore[union-attr]
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                "; ".join(parts),
                measured=len(isl.pad_groups) + isl.dangling if isl is not None else 1,
                limit=1,
                unit="copper pieces joining the pads",
                net=name,
                pos=pos,
                items=items,
                evidence=ev,
                basis={"connectivity": "measured"},
            )
        )
    return out
