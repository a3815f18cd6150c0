"""``current_density``: where the DC current of a declared rail crowds, in planes and vias.

What it checks:
    From the same solve as ``ir_drop`` (analysis/irdrop.py): the largest current density of each
    copper layer (A/mm², at the cell or track where it occurs) against ``max_plane_a_per_mm2``,
    and each via's barrel current against ``max_via_a_per_mm2`` times its plated cross-section
    π(r_o² − r_i²) (IPC-2152 treats a barrel as a conductor of that cross-section).
Why:
    Hundreds of amperes converge on the accelerator's balls and leave the regulators through a
    few hundred vias: the plane necks and the vias next to them heat first.
Parameters:
    max_plane_a_per_mm2: largest plane/track current density (A/mm²);
    max_via_a_per_mm2: largest barrel current density (A/mm²); the finding states the current
    that is for the via's drill and plating.
Cannot verify when:
    the core rail (declared ``role: core``, or recognised by the PDN analysis) declares no
    sources and loads: ``cannot_verify`` with the same ready-to-paste entry as ``ir_drop``.
    Any other rail without IR keys is out of scope (the seeds ask for the core's current).  The
    current distribution does not depend on temperature or conductivity (all copper scales
    alike); a via verdict resting on the default plating is conditional.
Example:
    rules: {training.current_density: {params: {max_via_a_per_mm2: 60}}}
"""

from __future__ import annotations

import math
from typing import Any

from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "current_density"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("irdrop",)
PARAMS: dict[str, Any] = {
    "type": "object",
    "required": ["max_plane_a_per_mm2", "max_via_a_per_mm2"],
    "additionalProperties": False,
    "properties": {
        "max_plane_a_per_mm2": {"type": "number", "exclusiveMinimum": 0},
        "max_via_a_per_mm2": {"type": "number", "exclusiveMinimum": 0},
    },
}

#: most via findings per rail (the rest are counted in the last one's evidence)
MAX_VIA_FINDINGS = 20


@register(KIND)
def check(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    jmax = float(rule.params["max_plane_a_per_mm2"])
    vmax = float(rule.params["max_via_a_per_mm2"])
    nets: set[int] = set()
    for r in ctx.analysis.irdrop:
        if r.missing and r.role_basis:
            # a core rail without sources/loads: nothing to solve, say what to declare
            out.findings.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"rail {r.name}: no current distribution without its sources and loads "
                    "(the ir_drop finding carries the entry to paste)",
                    net=r.nets[0] if len(r.nets) == 1 else None,
                    evidence={"rail": r.name, "declare": r.suggest},
                    basis={"sources": "default", "loads": "default", "role": r.role_basis},
                )
            )
            continue
        if r.missing or r.error or r.net is None:
            continue
        nets.update(ctx.board.net_index[n] for n in r.nets if n in ctx.board.net_index)
        out.checked += 1
        net = r.nets[0] if len(r.nets) == 1 else None
        geo = {k: r.basis[k] for k in ("geometry", "sources", "loads") if k in r.basis}
        for layer, (j, pos) in sorted(r.jmax.items()):
            if j > jmax:
                out.findings.append(
                    finding(
                        rule,
                        Status.VIOLATION,
                        f"rail {r.name}: {j:.3g} A/mm² on {layer} (limit {jmax:g} A/mm²), "
                        f"averaged over a {r.mesh.get('cell_mm')} mm cell",
                        measured=round(j, 4),
                        limit=jmax,
                        unit="A/mm²",
                        net=net,
                        layer=layer,
                        pos=pos,
                        evidence={"rail": r.name, "mesh": r.mesh},
                        basis={
                            **geo,
                            "copper_thickness": r.basis.get("stackup_thickness", "declared"),
                        },
                    )
                )
        plating = r.basis.get("via_plating", "default")
        over = []
        from ..analysis.irdrop import copper_of

        pl_mm = copper_of(ctx.config).plating_mm
        for v in r.vias:
            ro = v["drill_mm"] / 2.0
            ri = max(0.0, ro - pl_mm)
            limit_a = vmax * math.pi * (ro * ro - ri * ri)
            if v["current_a"] > limit_a:
                over.append((v, limit_a))
        for v, limit_a in over[:MAX_VIA_FINDINGS]:
            out.findings.append(
                finding(
                    rule,
                    Status.VIOLATION,
                    f"rail {r.name}: {v['kind']} at ({v['x']:g}, {v['y']:g}) carries "
                    f"{v['current_a']:.3g} A (limit {limit_a:.3g} A: {vmax:g} A/mm² over its "
                    f"{v['drill_mm']:g} mm barrel, {pl_mm * 1000:g} µm plating)",
                    measured=round(v["current_a"], 4),
                    limit=round(limit_a, 4),
                    unit="A",
                    net=net,
                    layer=v["span"][0],
                    pos=(v["x"], v["y"]),
                    items=(v["uuid"],) if v.get("uuid") else (),
                    evidence={
                        "rail": r.name,
                        "via": v,
                        **(
                            {"declare": "declare the barrel plating (stackup: via_plating_um)"}
                            if plating == "default"
                            else {}
                        ),
                    },
                    basis={**geo, "via_plating": plating},
                )
            )
    out.examined_nets = frozenset(nets)
    return out
