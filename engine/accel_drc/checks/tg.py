"""``tg``: every dielectric's glass-transition temperature against the class minimum.

What it checks:
    The Tg of every dielectric of the stack-up against ``min_tg_c``.  A KiCad stack-up has no Tg
    field: Tg comes from the material library (basis ``library``), a Tg written in the material's
    name ("FR4 Tg170") or ``stackup: materials:`` in the config (both ``declared``).  Generic
    "FR4" with no grade (or a bare glass style like "7628", or KiCad's untouched default
    dielectric) spans grades from 130 to 170 °C: it passes where even the lowest grade meets the
    limit; where it does not, the finding is a violation resting on a ``default`` Tg (the lowest
    grade), which the pipeline's settle step reports as conditional, with the grades that would
    pass (``evidence["candidates"]``).  A violation lists the library laminates that meet the
    limit (``evidence["remedy"]``).
Why:
    A board that dissipates hundreds of watts runs hot and goes through lead-free reflow several
    times; below its Tg a laminate's z-axis expansion multiplies and via barrels crack.
Parameters:
    ``min_tg_c`` (°C): lowest glass-transition temperature allowed.
Cannot verify when:
    A dielectric's material is unknown to the library, or known with an unconfirmed Tg, or its
    name names two laminates: the finding says what to declare (the Tg of the material the board
    names, never another laminate's: ``stackup: materials: dielectric 2: {tg_c: <Tg (°C)>}``); a
    board with no stack-up.
Example:
    ``{check: tg, severity: error, params: {min_tg_c: 170}}`` (training): "FR4 Tg150" fails,
    "Megtron 7" (library Tg 200 °C) passes.
"""

from __future__ import annotations

from typing import Any

from ..analysis.materials import DielectricInfo, materials_meeting, resolve_dielectric
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "tg"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["min_tg_c"],
    "properties": {"min_tg_c": {"type": "number"}},
}


def declare_field_hint(
    dielectric: str, info: DielectricInfo, field: str, what: str, example: str
) -> str:
    """The line that makes ``field`` of ``dielectric`` known, naming the material the board
    already names (a Panasonic R-1566 dielectric asks for R-1566's Tg, not for a laminate swap).

    ``what`` names the value ("Tg (°C)", "Df at ≈ 10 GHz"); ``example`` is the YAML value to
    show where the board names no material at all."""
    if info.material:
        return (
            f"declare the {what} of {info.material!r} (from its datasheet) for {dielectric} in "
            f"accel-drc.yaml: stackup: materials: {dielectric}: {{{field}: <{what}>}}"
        )
    return (
        f"name the laminate of {dielectric} in the stack-up (KiCad Board Setup > Physical "
        f"Stackup), or declare it in accel-drc.yaml: stackup: materials: {dielectric}: "
        f"{{material: '<laminate>', {field}: {example}}}"
    )


def _generic_grades(ctx: CheckContext, limit: float) -> dict[str, str]:
    """Pass/fail of each generic FR-4 Tg grade in the library (the values an unnamed grade may
    take), e.g. ``{"FR-4 Tg 130": "fail", "FR-4 Tg 150": "pass", …}``."""
    out: dict[str, str] = {}
    for m in ctx.analysis.materials.materials.values():
        if m.maker == "generic" and m.id.startswith("fr4") and m.tg_c is not None:
            out[f"FR-4 Tg {m.tg_c:g}"] = "pass" if float(m.tg_c) >= limit else "fail"
    return dict(sorted(out.items()))


@register(KIND)
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
    overrides = ctx.config.stackup.materials
    lib = ctx.analysis.materials
    out = []
    dielectrics = stack.dielectrics()
    remedy: list[str] | None = None
    for d in dielectrics:
        info = resolve_dielectric(d, lib, overrides)
        ev: dict[str, Any] = {"dielectric": info.to_dict(), "tg_note": info.tg_note}
        mat = lib.get(info.matched) if info.matched else None
        if info.tg_c is None and mat is not None and mat.tg_not_applicable:
            # PTFE laminates (RO3003, …) have no glass transition below decomposition: there is
            # no Tg to fall short of, and asking the user to declare one would be wrong
            continue
        material_basis = "default" if info.kicad_default else "declared"
        if info.tg_c is None:
            both = lib.ambiguous(info.material) if info.matched is None else []
            if not info.material:
                what = "no material is named"
            elif both:
                what = f"material {info.material!r} names {' and '.join(both)}"
            elif info.matched is None:
                what = f"material {info.material!r} is not in the library"
            else:
                what = f"{info.matched_name} has no confirmed Tg"
            if both:
                ev["declare"] = (
                    f"say which laminate {d.name} is: accel-drc.yaml stackup: materials: "
                    f"{d.name}: {{material: '{both[0]}'}} (or '{both[-1]}')"
                )
            else:
                ev["declare"] = declare_field_hint(d.name, info, "tg_c", "Tg (°C)", "170")
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{d.name}: Tg unknown ({what})",
                    limit=limit,
                    unit="°C",
                    layer=d.name,
                    evidence=ev,
                    basis={"material": material_basis},
                )
            )
            continue
        if info.tg_c >= limit:
            continue
        if remedy is None:
            remedy = materials_meeting(lib, min_tg=limit)
        ev["remedy"] = (
            f"laminates in rules/materials.yaml with Tg ≥ {limit:g} °C: " + ", ".join(remedy)
            if remedy
            else f"no laminate in rules/materials.yaml has a confirmed Tg ≥ {limit:g} °C"
        )
        basis = {"tg": info.tg_basis or "library", "material": material_basis}
        if info.tg_basis == "default":
            # no grade named (generic FR-4, KiCad's default): the lowest grade is a default
            ev["candidates"] = _generic_grades(ctx, limit)
            ev["candidates_of"] = "tg"
            ev["declare"] = (
                f"name the laminate grade of {d.name} (e.g. 'FR4 TG170' or the part number) in "
                f"the stack-up, or declare its Tg in accel-drc.yaml: stackup: materials: "
                f"{d.name}: {{tg_c: <Tg (°C) from the laminate's datasheet>}}"
            )
            msg = (
                f"{d.name} ({info.material}): generic FR-4 without a Tg grade; its lowest grade "
                f"({info.tg_c:g} °C) is below the {ctx.board_class} minimum {limit:g} °C"
            )
        else:
            msg = (
                f"{d.name} ({info.material}): Tg {info.tg_c:g} °C < {limit:g} °C, the "
                f"{ctx.board_class} minimum"
            )
        out.append(
            finding(
                rule,
                Status.VIOLATION,
                msg,
                measured=info.tg_c,
                limit=limit,
                unit="°C",
                layer=d.name,
                evidence=ev,
                basis=basis,
            )
        )
    return CheckOutcome(out, checked=len(dielectrics))
