"""``material_consistency``: stack-up values that contradict the laminate they name.

What it checks:
    Every dielectric whose material the library knows: its stack-up εr and loss tangent against
    the library's range for that laminate, widened by ``dk_tolerance_rel`` / ``df_tolerance_rel``.
    KiCad's untouched default dielectric ("FR4", εr 4.5, tan δ 0.02) is reported too, as info
    (sub-id ``<rule>.kicad_default``, basis ``default`` for material, εr and tan δ, and for the
    heights when the whole stack-up is KiCad's auto-generated one): the laminate was never really
    declared.  Names are matched as for ``tg``; a name that names two laminates is not judged.
Why:
    "Megtron 7" with loss tangent 0.02 is either the wrong material or the wrong numbers; either
    way every loss and impedance figure built on it is wrong.
Parameters:
    ``df_tolerance_rel`` (≥ 0): relative widening of the library's Df range;
    ``dk_tolerance_rel`` (≥ 0): relative widening of the library's Dk range.
Cannot verify when:
    A dielectric is KiCad's default one (info, with the stack-up to declare).  A material the
    library does not know is not judged here (``tg`` and ``laminate_df`` say so).
Example:
    ``{check: material_consistency, severity: warning, params: {df_tolerance_rel: 0.5,
    dk_tolerance_rel: 0.15}}``: "Megtron 7" declared with tan δ 0.02 is reported.
"""

from __future__ import annotations

from typing import Any

from ..analysis.stackup import stackup_basis
from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "material_consistency"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "df_tolerance_rel": {"type": "number", "minimum": 0},
        "dk_tolerance_rel": {"type": "number", "minimum": 0},
    },
}


@register(KIND)
def check_material_consistency(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    stack = ctx.board.stackup
    if stack is None:
        return CheckOutcome([], checked=0)
    lib = ctx.analysis.materials
    df_tol = rule.params.get("df_tolerance_rel")
    dk_tol = rule.params.get("dk_tolerance_rel")
    overrides = ctx.config.stackup.materials
    out = []
    n = 0
    facts = stackup_basis(ctx.analysis)
    whole = facts.auto
    for d in stack.dielectrics():
        if d.name in overrides:
            n += 1  # the project declared this dielectric: its own values are not used
            continue
        for sl in list(d.sublayers) or [d]:
            n += 1
            if lib.is_kicad_default(sl.material, sl.epsilon_r, sl.loss_tangent):
                also = (
                    "; the whole stack-up is KiCad's auto-generated one (equal heights, 35 µm "
                    "copper): heights and copper weights are KiCad's defaults too"
                    if whole
                    else ""
                )
                out.append(
                    finding(
                        rule,
                        Status.CANNOT_VERIFY,
                        f"{d.name}: KiCad's default dielectric (FR4, εr 4.5, tan δ 0.02): the "
                        f"laminate was never really declared{also}",
                        measured=sl.loss_tangent,
                        unit="tan δ",
                        layer=d.name,
                        severity=Severity.INFO,
                        rule_id=f"{rule.id}.kicad_default",
                        evidence={
                            "material": sl.material,
                            "epsilon_r": sl.epsilon_r,
                            "loss_tangent": sl.loss_tangent,
                            "stackup_kicad_default": whole,
                            "declare": f"declare your fab's stack-up: name the real laminate of {d.name} with its εr and loss tangent in KiCad's stack-up (Board Setup > Physical Stackup) or in accel-drc.yaml (stackup: materials: {d.name}: {{material: '<laminate>', loss_tangent: <Df>}})",
                        },
                        basis={"material": "default", **facts.dielectric(d.name)},
                    )
                )
                continue
            m = lib.match(sl.material)
            if m is None:
                continue
            reasons = lib.contradiction(m.material, sl.epsilon_r, sl.loss_tangent, df_tol, dk_tol)
            if reasons:
                out.append(
                    finding(
                        rule,
                        Status.VIOLATION,
                        f"{d.name} says {sl.material!r} but " + "; ".join(reasons),
                        measured=sl.loss_tangent,
                        limit=m.material.df,
                        unit="tan δ",
                        layer=d.name,
                        evidence={
                            "material": sl.material,
                            "library_material": m.material.id,
                            "library_dk": m.material.dk,
                            "library_df": m.material.df,
                            "library_freq_ghz": m.material.freq_ghz,
                            "epsilon_r": sl.epsilon_r,
                            "loss_tangent": sl.loss_tangent,
                            "library_source": m.material.source,
                        },
                        basis={
                            "material": "declared",
                            "epsilon_r": "declared",
                            "loss_tangent": "declared",
                            "library_values": "library",
                        },
                    )
                )
    return CheckOutcome(out, checked=n)
