"""``material_consistency``: stack-up values that contradict the laminate they name.

"Megtron 7" with loss tangent 0.02 is either the wrong material or the wrong numbers; either
way every loss and impedance figure built on it is wrong.  KiCad's untouched default dielectric
("FR4", εr 4.5, tan δ 0.02) is reported too, as info: the laminate was never really declared.
Params: ``df_tolerance_rel``, ``dk_tolerance_rel`` (relative widening of the library range).
"""

from __future__ import annotations

from ..analysis.materials import stackup_is_kicad_default
from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding


@register("material_consistency")
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
    whole = stackup_is_kicad_default(stack, lib)
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
                        basis={
                            "material": "default",
                            "epsilon_r": "default",
                            "loss_tangent": "default",
                            "height": "default" if whole else "declared",
                        },
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
