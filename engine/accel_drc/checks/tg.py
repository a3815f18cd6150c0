"""``tg``: every dielectric's glass-transition temperature against the class minimum.

A KiCad stack-up has no Tg field: Tg comes from the material library (or ``stackup: materials:``
in the config).  An unknown material, or a known one whose Tg is unconfirmed, is cannot_verify
with what to declare.  Generic "FR4" (no grade named, or a bare glass style like "7628") spans
grades from 130 to 170 °C: it passes where even the lowest grade (130 °C) meets the limit, and
is cannot_verify (measured = the 130 °C lower bound) where it does not: the board may be Tg 170
FR-4, or not, and only the designer knows.  Generic FR-4 whose name states its Tg ("FR4 Tg170",
"FR-4 TG 180") is checked at that Tg.  Params: ``min_tg_c``.
"""

from __future__ import annotations

from ..analysis.materials import resolve_dielectric
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding


@register("tg")
def check_tg(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    stack = ctx.board.stackup
    limit = float(rule.params["min_tg_c"])
    if stack is None or not stack.dielectrics():
        return CheckOutcome(
            [
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    "the board has no stack-up: the laminate's Tg cannot be checked",
                    limit=limit,
                    unit="°C",
                    evidence={
                        "declare": "define the stack-up in KiCad (Board Setup > Physical Stackup) with the laminate names"
                    },
                )
            ],
            checked=0,
        )
    overrides = (ctx.config.get("stackup") or {}).get("materials") or {}
    out = []
    dielectrics = stack.dielectrics()
    for d in dielectrics:
        info = resolve_dielectric(d, ctx.analysis.materials, overrides)
        ev = {"dielectric": info.to_dict(), "tg_note": info.tg_note}
        mat = ctx.analysis.materials.get(info.matched) if info.matched else None
        if info.tg_c is None and mat is not None and mat.tg_not_applicable:
            # PTFE laminates (RO3003, …) have no glass transition below decomposition: there is
            # no Tg to fall short of, and asking the user to declare one would be wrong
            continue
        if info.tg_c is None:
            both = ctx.analysis.materials.ambiguous(info.material) if info.matched is None else []
            if both:
                what = f"material {info.material!r} names {' and '.join(both)}"
            elif info.matched is None:
                what = f"material {info.material!r} is not in the library"
            else:
                what = f"{info.matched_name} has no confirmed Tg"
            if not info.material:
                what = "no material is named"
            ev["declare"] = (
                f"declare the laminate of {d.name} in accel-drc.yaml "
                f"(stackup: materials: {d.name}: {{material: 'Megtron 6', tg_c: 185}})"
            )
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{d.name}: Tg unknown ({what})",
                    limit=limit,
                    unit="°C",
                    layer=d.name,
                    evidence=ev,
                )
            )
        elif info.tg_c < limit and info.tg_from == "library (assumed)":
            ev["declare"] = (
                f"name the laminate grade of {d.name} (e.g. 'FR4 TG170' or the part number) in "
                f"the stack-up or in accel-drc.yaml (stackup: materials: {d.name}: {{tg_c: 170}})"
            )
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{d.name} ({info.material}): generic FR-4 without a Tg grade; its lowest grade "
                    f"({info.tg_c:g} °C) is below the {ctx.board_class} minimum {limit:g} °C",
                    measured=info.tg_c,
                    limit=limit,
                    unit="°C",
                    layer=d.name,
                    evidence=ev,
                )
            )
        elif info.tg_c < limit:
            out.append(
                finding(
                    rule,
                    Status.VIOLATION,
                    f"{d.name} ({info.material}): Tg {info.tg_c:g} °C < {limit:g} °C, the "
                    f"{ctx.board_class} minimum",
                    measured=info.tg_c,
                    limit=limit,
                    unit="°C",
                    layer=d.name,
                    evidence=ev,
                )
            )
    return CheckOutcome(out, checked=len(dielectrics))
