"""``ir_drop``: the DC drop from a rail's regulators to each declared load, against a limit.

What it checks:
    Every ``rails:`` entry that declares ``sources`` and ``loads`` is solved on its real copper
    (analysis/irdrop.py: zone fills, tracks, pads, plated barrels; optional ``return_nets``).
    The worst load's drop, in % of ``voltage``, is compared with the rail's ``ir_drop_max_pct``
    or else the class pack's ``max_pct``.
Why:
    A training accelerator's core takes 0.7–0.8 V at more than 1,000 A: every 8 µΩ of board
    copper is 1 % of the rail.  Plane copper weight is only the proxy; the drop is the answer.
Parameters:
    max_pct: largest drop from the sources to any load pad, % of the rail voltage.
Scope:
    every rail entry with an IR key (sources, loads, return_nets, ir_drop_max_pct), and the
    accelerator's core rail: declared ``role: core``, or — when no rail is — the rail the PDN
    analysis recognises (the one feeding the most balls of the largest BGA at <= 1 V; basis
    ``assumed``).  Other rails without IR keys are out of scope: the seeds ask for the core's
    drop (~1,000 A at 0.7–0.8 V); an I/O rail's few amperes are not the question.
Cannot verify when:
    a core rail, or a rail entry with part of the IR-drop inputs, lacks sources, loads or
    voltage: the finding carries a ready-to-paste ``rails:`` entry (name, nets, voltage,
    candidate sources guessed from footprint names, ``loads: {<largest BGA>: <A>}``); a load's pads have no copper path to a source.  A violation
    resting on the default barrel plating is conditional (settled by ``basis.settle``); an
    undeclared temperature is solved at 20 °C (the lowest resistance) and the hotter candidates
    are evaluated, so a drop that fails at 20 °C is a fact.
Example:
    rails: [{name: VCORE, nets: [VCORE], voltage: 0.8, sources: [U20, U21], loads: {U1: 600}}]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.irdrop import RailIR

KIND = "ir_drop"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("irdrop",)
PARAMS: dict[str, Any] = {
    "type": "object",
    "required": ["max_pct"],
    "additionalProperties": False,
    "properties": {"max_pct": {"type": "number", "exclusiveMinimum": 0}},
}

#: operating temperatures a default-temperature verdict is also evaluated at (°C)
CANDIDATE_T = (20.0, 60.0, 85.0, 105.0)

DECLARE = (
    "declare the rail in accel-drc.yaml (sources: the regulators' footprints, loads: each "
    "load's DC current): rails: [{name: <rail>, nets: ['<net regex>'], voltage: <V>, "
    "sources: [<footprint>], loads: {<footprint>: <A>}}]"
)


def _rail_unknown(rule: Rule, r: RailIR) -> Any:
    what = "; ".join(r.missing) if r.missing else str(r.error)
    if r.missing and r.role_basis == "assumed":
        head = (
            f"rail {r.name} looks like the accelerator's core rail ({r.role_evidence}) but "
            "declares no sources and loads: cannot solve its IR drop"
        )
    elif r.missing and r.role_basis == "declared":
        head = f"core rail {r.name} declares no {' and '.join(_keys(r.missing))}: cannot solve its IR drop"
    else:
        head = f"rail {r.name}: cannot solve the IR drop"
    msg = head + (f"; declare {what}" if r.missing else f": {what}")
    if r.suggest:
        msg += " (paste-ready entry in evidence.declare)"
    ev: dict[str, Any] = {"rail": r.name, "declare": DECLARE if r.missing else what}
    if r.suggest:
        ev["declare"] = (
            "declare the rail's regulator outputs and load current in accel-drc.yaml "
            "(the sources are guesses from footprint names; the load current is yours):\n"
            + r.suggest
        )
        ev["declare_entry"] = r.suggest
    basis: dict[str, str] = {"sources": "default", "loads": "default"}
    if r.role_basis:
        basis["role"] = r.role_basis
        if r.role_evidence:
            ev["role_evidence"] = r.role_evidence
    return finding(
        rule,
        Status.CANNOT_VERIFY,
        msg,
        net=r.nets[0] if len(r.nets) == 1 else None,
        evidence=ev,
        basis=basis if r.missing else None,
    )


def _keys(missing: list[str]) -> list[str]:
    return [m.split(":", 1)[0] for m in missing]


@register(KIND)
def check(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    results = ctx.analysis.irdrop
    nets: set[int] = set()
    for r in results:
        nets.update(ctx.board.net_index[n] for n in r.nets if n in ctx.board.net_index)
        if r.missing or r.error:
            out.findings.append(_rail_unknown(rule, r))
            continue
        out.checked += 1
        limit = r.max_pct if r.max_pct is not None else float(rule.params["max_pct"])
        limit_src = "the rail's ir_drop_max_pct" if r.max_pct is not None else "the class pack"
        drop = float(r.worst_drop_pct or 0.0)
        basis = dict(r.basis)
        basis["limit"] = "declared" if r.max_pct is not None else "library"
        ev: dict[str, Any] = {
            "rail": r.name,
            "loads": r.rows,
            "resistance_ohm": r.resistance_ohm,
            "mesh": r.mesh,
            "limit_from": limit_src,
            "temperature_c": None,
        }
        verdict_fail = drop > limit
        if basis.get("temperature") == "default":
            # all of the rail is copper: the drop scales with ρ(T)/ρ(20 °C)
            from ..analysis.irdrop import ALPHA20_PER_K

            cands = {}
            for t in CANDIDATE_T:
                k = 1.0 + ALPHA20_PER_K * (t - 20.0)
                cands[f"{t:g} °C"] = "fail" if drop * k > limit else "pass"
            ev["candidates"] = cands
            ev["candidates_of"] = "temperature"
            verdict_fail = any(v == "fail" for v in cands.values())
        declare = []
        cands_all_fail = all(v == "fail" for v in (ev.get("candidates") or {"": "pass"}).values())
        if basis.get("temperature") == "default" and not cands_all_fail:
            declare.append("the operating temperature (stackup: temperature_c)")
        if basis.get("via_plating") == "default":
            declare.append("the barrel plating (stackup: via_plating_um)")
        if basis.get("stackup_thickness") == "default":
            declare.append("the stack-up's copper and dielectric thicknesses")
        if declare:
            ev["declare"] = "declare " + " and ".join(declare)
        if not verdict_fail:
            continue
        ev["remedy"] = (
            f"{r.worst_drop_mv:.3g} mV through {r.resistance_ohm * 1e6:.3g} µΩ: thicker or more "
            "plane layers, more vias under the load and the regulators, regulators closer"
            if r.resistance_ohm
            else "more copper between the regulators and the load"
        )
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                f"rail {r.name}: {r.worst_drop_mv:.3g} mV ({drop:.3g} %) drop at {r.worst_ref} "
                f"(limit {limit:g} %, {limit_src}) for {sum(r.loads.values()):g} A; "
                f"solved at {r.mesh.get('cell_mm')} mm cells",
                measured=round(drop, 4),
                limit=limit,
                unit="%",
                net=r.nets[0] if len(r.nets) == 1 else None,
                pos=r.worst_pos,
                evidence=ev,
                basis=basis,
            )
        )
    out.examined_nets = frozenset(nets)
    return out


#: the report extras of this kind go to ``result.extras["irdrop"]`` (the HTML reads either key)
EXTRAS_KEY = "irdrop"


def extras(analysis: Analysis, rules: Any = None) -> Any:
    """``result.extras["irdrop"]``: per rail, the load table and per-layer heat maps."""
    got = analysis.computed("irdrop")
    if got is None:
        if not any(r.declares_ir_drop for r in analysis.config.rails):
            return None
        got = analysis.irdrop
    if not got:
        return None  # (and the IR-drop module is not imported: start-up, issue 18)
    from ..analysis.irdrop import heat_maps, rail_row

    rows = []
    for r in got:
        row = rail_row(r)
        if r.net is not None:
            row["maps"] = heat_maps(analysis.board, r)
        rows.append(row)
    return rows or None


irdrop_extra = extras
