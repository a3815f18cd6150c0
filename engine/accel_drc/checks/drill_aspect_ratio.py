"""``drill_aspect_ratio``: every plated hole's depth over its finished hole against the fab.

What it checks:
    Every via with a drill and every plated through-hole pad: the plated span (the board
    thickness for a through hole; the stack-up from the first to the last copper layer for a
    blind or buried via) over the finished hole size (the drill the board file states), against
    the fab's limit: ``fab: aspect_ratio_max`` or ``fab: class`` of accel-drc.yaml when
    declared, else the fab class the pack assumes (``fab_class``, one of ``rules/fab.yaml``:
    standard 10:1, advanced 12:1, high_aspect 15:1, very_high_aspect 20:1).  One finding per
    group of identical holes
    (type, drill, span), with the count, the positions and the remedy: the smallest drill that
    passes, and the least capable fab class that builds the ratio (or that none in the data
    does).  Microvias (KiCad's micro type, blind vias across one dielectric) are the
    ``microvia`` kind's.  A backdrilled via is judged over its whole barrel: it is plated
    through before the backdrill removes the stub.
Why:
    Plating solution must flow through the hole to deposit copper at the barrel's middle; past
    the fab's ratio the wall there is thin or missing (cracked barrels in thermal cycling, opens
    after reflow), or the fab refuses the job and asks for a bigger drill.
Parameters:
    ``fab_class`` (string): the id in ``rules/fab.yaml`` of the fab class this board class
    assumes when accel-drc.yaml declares no ``fab:``.
Cannot verify when:
    The fab is not declared and the group fails some fab class of ``rules/fab.yaml`` but not
    every one (the verdict rests on the guess; declare ``fab: aspect_ratio_max``); the span
    rests on KiCad's default 1.6 mm board or its auto stack-up; a blind or buried via's span
    cannot be computed (a thickness missing from the stack-up).
Example:
    ``{check: drill_aspect_ratio, severity: error, params: {fab_class: advanced}}``: 3,235
    through vias of 0.10 mm in a 1.711 mm board are 17.1:1, beyond the assumed 12:1 and built
    only by the very_high_aspect class (20:1, on request): *cannot verify* until the fab is
    declared, with the remedy "a drill of at least 0.143 mm (0.15 mm) passes 12:1"; 0.08 mm
    there is 21.4:1, beyond every class (a fact).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding
from ._holes import Holes, ceil_to, fab_limit, group_rows, microvia_rows, plated_holes, positions

KIND = "drill_aspect_ratio"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["fab_class"],
    "properties": {"fab_class": {"type": "string", "minLength": 1}},
}

#: ratios equal within this pass (KiCad stores nanometres)
_TOL = 1e-6
#: drill sizes of the remedy are rounded up to this step (mm)
_DRILL_STEP = 0.05


@register(KIND)
def check_drill_aspect_ratio(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    if not len(ctx.board.vias) and not any(
        fp.pads and any(p.drill_mm for p in fp.pads) for fp in ctx.board.footprints
    ):
        return out
    lim = fab_limit(ctx, (rule.params or {}).get("fab_class"))
    if lim is None:
        return out
    holes = plated_holes(ctx)
    keep = np.ones(len(holes), bool)
    keep[microvia_rows(holes)] = False  # (a mask: np.setdiff1d would import numpy.ma)
    rows = np.flatnonzero(keep)
    out.checked = int(len(rows))
    if not len(rows):
        return out
    span = holes.span_mm[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = span / holes.drill[rows]
    unknown = rows[~np.isfinite(ratio)]
    # the lowest limit a finding is about: the declared one, or the least capable class
    floor = lim.limit if lim.basis == "declared" else min(c.aspect_ratio_max for c in lim.classes)
    bad = rows[np.isfinite(ratio) & (ratio > floor + _TOL)]
    for g in group_rows(
        (holes.kind[bad], np.round(holes.drill[bad] * 1e4), np.round(holes.span_mm[bad] * 1e4),
         holes.start[bad], holes.end[bad])
    ):  # fmt: skip
        out.findings.append(_group_finding(ctx, rule, holes, bad[g], lim))
    if len(unknown):
        out.findings.append(_unknown_span(rule, holes, unknown))
    return out


def _verdicts(ratio: float, lim: Any) -> dict[str, str]:
    return {c.id: ("fail" if ratio > c.aspect_ratio_max + _TOL else "pass") for c in lim.classes}


def _group_finding(ctx: CheckContext, rule: Rule, holes: Holes, g: np.ndarray, lim: Any) -> Finding:
    i = int(g[0])
    drill, span = float(holes.drill[i]), float(holes.span_mm[i])
    ratio = span / drill
    names = holes.layer_names
    layers = f"{names[int(holes.start[i])]}–{names[int(holes.end[i])]}"
    what = holes.types[i] + (" via" if holes.types[i] != "PTH pad" else "")
    count = len(g)
    plural = "s" if count > 1 and not what.endswith("pad") else ("s" if count > 1 else "")
    # the drill that passes the limit; for a group that passes the assumed fab and fails a
    # less capable class, the drill that passes every class (then no fab is assumed)
    target = lim.limit if ratio > lim.limit + _TOL else lim.classes[0].aspect_ratio_max
    need = ceil_to(span / target, _DRILL_STEP)
    builds = next((c for c in lim.classes if ratio <= c.aspect_ratio_max + _TOL), None)
    if builds is not None:
        fab_txt = f"or the {builds.id} fab ({builds.aspect_ratio_max:g}:1) builds it"
    else:
        fab_txt = "no fab class in rules/fab.yaml builds it" + "".join(
            f"; {c.id} ({c.aspect_ratio_max:g}:1) needs {span / c.aspect_ratio_max:.3f} mm"
            for c in lim.classes[1:]
        )
    remedy = (
        f"a drill of at least {span / target:.3f} mm ({need:.2f} mm) passes {target:g}:1; {fab_txt}"
    )
    basis = {"span": holes.basis_of(i) or "default", "drill": "measured", "fab": lim.basis}
    ev: dict[str, Any] = {
        "count": count,
        "type": holes.types[i],
        "drill_mm": round(drill, 4),
        "span_mm": round(span, 4),
        "layers": layers,
        "aspect_ratio": round(ratio, 2),
        "fab_limit": lim.limit,
        "fab": lim.label,
        "positions": positions(holes, g),
        "remedy": {"min_drill_mm": need, "fab_class": builds.id if builds else None,
                   "text": remedy},
        "group": f"{what} {drill:.3f} mm {layers}",
    }  # fmt: skip
    if lim.basis != "declared":
        ev["candidates"] = _verdicts(ratio, lim)
        ev["candidates_of"] = "fab"
        ev["declare"] = "your fab's aspect ratio (accel-drc.yaml `fab: aspect_ratio_max:`)"
    x, y = holes.xy[i].tolist()
    passes = ratio <= lim.limit + _TOL
    head = (
        f"{count} {what}{plural} ({drill:.3f} mm drill, {layers}, {span:.3f} mm): "
        f"{ratio:.1f}:1 {'passes' if passes else '>'} {lim.label}"
    )
    if passes:  # fails a less capable class only: said, but it rests on the assumed fab
        head += f", fails {', '.join(k for k, v in ev['candidates'].items() if v == 'fail')}"
    return finding(
        rule,
        Status.VIOLATION,
        f"{head}; first at ({x:.3f}, {y:.3f}); {remedy}",
        measured=round(ratio, 2),
        limit=lim.limit,
        unit=":1",
        pos=(round(x, 4), round(y, 4)),
        items=holes.ids_of(g),
        evidence=ev,
        basis=basis,
    )


def _unknown_span(rule: Rule, holes: Holes, rows: np.ndarray) -> Finding:
    i = int(rows[0])
    x, y = holes.xy[i].tolist()
    kinds = sorted({holes.types[int(k)] for k in rows.tolist()})
    return finding(
        rule,
        Status.CANNOT_VERIFY,
        f"{len(rows)} plated holes ({', '.join(kinds)}): the plated span is unknown (the "
        f"stack-up does not give every thickness, or the board no thickness), aspect ratio "
        f"not checked; first at ({x:.3f}, {y:.3f})",
        pos=(round(x, 4), round(y, 4)),
        items=holes.ids_of(rows),
        evidence={
            "count": int(len(rows)),
            "positions": positions(holes, rows),
            "declare": "the board thickness and every layer thickness of the stack-up "
            "(KiCad Board Setup > Physical Stackup)",
        },
    )
