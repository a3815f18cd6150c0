"""``copper_weight``: copper thickness of the planes of the power rails.

What it checks:
    The copper thickness of every layer where a power rail's zones fill at least
    ``min_plane_fraction`` of the board, against ``min_oz``.  Ground planes are not judged, nor
    a layer KiCad types ``power`` that holds no rail plane: the seed tables' copper weight is
    the weight of the accelerator's *power planes* (NextPCB's "Copper weight (power planes)"
    row), and a typical value is not a requirement.  1 oz = 35 µm (NextPCB's and KiCad's
    convention); a layer passes within 0.5 µm of the limit.  KiCad's untouched auto-generated
    stack-up (35 µm everywhere) is a ``default`` thickness, not a declared one.
Why:
    An accelerator core draws hundreds of amperes at under a volt: plane copper sets the DC drop
    and the heating of the power distribution.  The weight is the proxy; the drop is the
    answer: where the IR drop of a rail is solved (``ir_drop``: sources and loads declared, or
    the core rail), the solve decides and a thinner plane is not reported here; otherwise a
    plane below the class's weight is a *warning* (``evidence["declare"]`` says what to declare
    to have the drop solved), whatever the rule's severity, for a rail the IR drop knows (the
    core rail, or a rail declared in ``rails:``).  A rail nobody described that is not the core
    rail draws an unknown current: its thin plane is *cannot verify* at info severity, with
    what to declare (issue 28: a rail nobody described is info; issue 27: an image sensor's
    analog supply plane at 0.5 oz was a false alarm).
Parameters:
    ``min_oz`` (oz, > 0): the class's power-plane copper;
    ``min_plane_fraction`` (0–1, default 0.25): how much of the board a rail's zones must fill
    for its layer to count as the rail's plane.
Cannot verify when:
    No plane at all is found (no supply or ground zone filling enough of a layer, no layer typed
    power: *info*); a plane layer's copper thickness is not declared in the stack-up (at most a
    warning).  A board whose planes are all ground has nothing this rule judges: no finding.
Example:
    ``{check: copper_weight, severity: error, params: {min_oz: 2.0, min_plane_fraction: 0.25}}``
    (training): a VCORE plane of 35 µm (1 oz) with no IR-drop solve is a warning; a GND plane
    of 18 µm is not judged.
"""

from __future__ import annotations

from typing import Any

from ..analysis.nets import plane_layers
from ..analysis.railnames import is_power
from ..analysis.stackup import stackup_basis
from ..geometry import ring_area
from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "copper_weight"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("irdrop",)

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["min_oz"],
    "properties": {
        "min_oz": {"type": "number", "exclusiveMinimum": 0},
        "min_plane_fraction": {"type": "number", "minimum": 0, "maximum": 1},
    },
}

UM_PER_OZ = 35.0
_TOL_MM = 0.0005


def plane_anchor(
    board: Any, layer: int, net: str | None
) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """(a point inside the plane, the uuids of its zones) for the plane of ``net`` on copper
    layer ``layer``: where the report's board view and the KiCad plugin put the marker of a
    layer-level finding, and what the plugin selects.  The point is GEOS's point-on-surface of
    the largest filled polygon there, taken on KiCad's ring as written (holes bridged in): its
    scan-line interior point lands on copper, never in a hole or off a C-shaped plane (all 137
    fill rings of vme-wren checked against the repaired polygon), far cheaper than
    repairing a large plane's polygon."""
    import numpy as np
    import shapely

    zones = [z for z in board.zones if not z.keepout and z.net_name == net and layer in z.filled]
    uuids = tuple(z.uuid for z in zones if z.uuid)
    best, best_area = None, 0.0
    for z in zones:
        for ring in z.filled.get(layer, ()):
            pts = np.asarray(ring, dtype=float)
            if len(pts) < 3:
                continue
            area = ring_area(pts)
            if area > best_area:
                best, best_area = pts, area
    if best is None:
        return None, uuids
    try:
        p = shapely.point_on_surface(shapely.polygons(best))
    except shapely.errors.GEOSException:
        return None, uuids
    if p.is_empty:
        return None, uuids
    return (round(float(p.x), 4), round(float(p.y), 4)), uuids


@register(KIND)
def check_copper_weight(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    board = ctx.board
    min_oz = float(rule.params["min_oz"])
    frac = float(rule.params.get("min_plane_fraction", 0.25))
    every_plane = plane_layers(board, ctx.analysis.zone_fractions, frac)
    planes = rail_planes(every_plane)
    if not planes and every_plane:
        # ground planes (or power-typed layers without a rail's plane) only: nothing this rule
        # judges, and nothing unknown either
        return CheckOutcome([], checked=0)
    if not planes:
        return CheckOutcome(
            [
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"no power-rail plane found (no supply zone filling ≥ {frac:.0%} of a "
                    "layer): power-plane copper cannot be checked",
                    severity=Severity.INFO,
                    limit=min_oz,
                    unit="oz",
                    evidence={"declare": "pour the power rails' planes (zones of the rail nets)"},
                )
            ],
            checked=0,
        )
    thickness = {}
    # KiCad's untouched auto-generated stack-up writes 35 µm on every copper layer: a default
    facts = stackup_basis(ctx.analysis)
    if board.stackup is not None:
        for sl in board.stackup.copper():
            if sl.copper_index is not None:
                thickness[sl.copper_index] = sl.thickness_mm
    out = []
    solved: dict[str, Any] | None = None  # rail net -> its IR-drop result, asked for lazily
    described: set[str] | None = None  # nets of the rails the IR drop knows (declared, core)
    for idx, nets in planes.items():
        name = board.copper_layers[idx].name
        t = thickness.get(idx)
        t_basis = facts.copper_thickness(name)
        ev = {
            "plane_nets": [{"net": n, "fraction": round(f, 3)} for n, f in nets],
            "layer_type": board.copper_layers[idx].kind,
            "thickness_mm": t,
        }
        net = nets[0][0] if nets else None
        # a plane is measured (zone fills) unless KiCad's layer type says so without one
        basis = {"copper_thickness": t_basis, "plane": "measured" if nets else "declared"}
        if t is None:
            ev["declare"] = (
                f"set the copper thickness of {name} in the board's stack-up (Board Setup > Physical Stackup)"
            )
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{name}: plane copper thickness not declared",
                    severity=_capped(rule),
                    limit=min_oz,
                    unit="oz",
                    layer=name,
                    net=net,
                    evidence=ev,
                    basis={"plane": basis["plane"]},
                )
            )
            continue
        oz = t * 1000.0 / UM_PER_OZ
        if t < min_oz * UM_PER_OZ / 1000.0 - _TOL_MM:
            if solved is None:
                solved = solved_rails(ctx)
            ir = [solved[n] for n, _ in nets if n in solved]
            if ir and len(ir) == len(nets):
                continue  # the rail's IR drop is solved: ir_drop decides, not the proxy
            if described is None:
                described = {n for r in ctx.analysis.irdrop for n in r.nets}
            # a rail nobody described and no core rail: its current, so the copper it needs, is
            # unknown; the class's weight is typical of accelerator power planes, not of every
            # supply (an image sensor's analog 2.8 V draws tens of mA): info, what to declare
            unknown = not any(n in described for n, _ in nets)
            planes_txt = ", ".join(n for n, _ in nets)
            pos, items = plane_anchor(board, idx, net) if net else (None, ())
            ev["remedy"] = (
                f"{min_oz:g} oz ({min_oz * UM_PER_OZ:g} µm) or heavier copper on {name}, set in "
                "the stack-up (KiCad Board Setup > Physical Stackup) as the fab builds it"
            )
            ev["declare"] = (
                f"declare the rail ({net}: sources, loads, voltage in accel-drc.yaml rails:) "
                "to have its IR drop solved: the drop, not the class's typical weight, decides"
            )
            if t_basis == "default":
                ev["declare"] = (
                    f"declare your fab's copper: accel-drc.yaml stackup: copper: {{{name}: "
                    "{thickness_um: <µm>}} or the copper thickness of each layer in KiCad "
                    "(Board Setup > Physical Stackup); 35 µm everywhere is KiCad's default"
                )
            why = (
                "the rail is neither described nor the core rail: its current, so the copper "
                "it needs, is unknown"
                if unknown
                else "the rail's IR drop is not solved"
            )
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY if unknown else Status.VIOLATION,
                    f"{name} ({planes_txt}): {t * 1000:g} µm = {oz:.2f} oz plane copper < "
                    f"{min_oz:g} oz ({min_oz * UM_PER_OZ:g} µm), the {ctx.board_class} class's "
                    f"typical power-plane weight; {why}",
                    severity=Severity.INFO if unknown else _capped(rule),
                    measured=round(oz, 3),
                    limit=min_oz,
                    unit="oz",
                    layer=name,
                    net=net,
                    pos=pos,
                    items=items,
                    evidence=ev,
                    basis=basis,
                )
            )
    return CheckOutcome(out, checked=len(planes))


def _capped(rule: Rule) -> Severity:
    """The rule's severity, at most a warning: the class's copper weight is a typical value,
    not a requirement (the IR drop, where it is solved, is)."""
    return Severity.WARNING if rule.severity == Severity.ERROR else rule.severity


def rail_planes(
    planes: dict[int, list[tuple[str, float]]],
) -> dict[int, list[tuple[str, float]]]:
    """The layers of ``planes`` (:func:`..analysis.nets.plane_layers`) that hold a power rail's
    plane, with only those rails: ground planes and layers typed ``power`` without a rail's
    zone drop out (issue 27 §6: an 18 µm GND plane failed every real board)."""
    out = {}
    for idx, nets in planes.items():
        rails = [(n, f) for n, f in nets if is_power(n)]
        if rails:
            out[idx] = rails
    return out


def solved_rails(ctx: CheckContext) -> dict[str, Any]:
    """Net name -> the IR-drop result of the rail it belongs to, for every rail whose drop
    ``ir_drop`` solves (no input missing, no error)."""
    out: dict[str, Any] = {}
    for r in ctx.analysis.irdrop:
        if not r.missing and not r.error and r.worst_drop_pct is not None:
            for n in r.nets:
                out[n] = r
    return out
