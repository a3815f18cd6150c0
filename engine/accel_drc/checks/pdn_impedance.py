"""``pdn_impedance``: |Z(f)| of each power rail against its target impedance.

What it checks:
    Per rail: the core rail (``role: core`` declared, or recognised: the rail feeding the most
    balls of the largest BGA at ≤ 1 V, basis ``assumed``) over the class target, or
    any rail over its own declared V·ripple/ΔI, is a violation naming the failing bands, what
    sets |Z| in each and what a network under target needs there (``evidence["remedy"]``), with
    the basis of every input (a recognised role is ``assumed``, a pack VRM and the default
    capacitor models ``default``, so the pipeline's settle step makes such a finding
    conditional).  The curves go into each finding's evidence and, through :func:`extras`, into
    ``result.extras["rails"]`` for the HTML plot.
Why:
    The target impedance V·ripple/ΔI is the largest |Z| at which the rail's load step keeps the
    voltage inside its ripple budget; an accelerator core (hundreds of amperes at under a volt)
    needs a fraction of a milliohm from DC to the band where the package takes over.
Parameters:
    ``target_ohm`` (Ω, or null): the class target of the accelerator *core* rail (NextPCB 2026:
    training < 0.15 mΩ, inference < 0.2 mΩ, edge < 1 mΩ);
    ``f_min_hz`` / ``f_max_hz`` (Hz): the class band, DC–100 MHz;
    ``model_max_hz`` (Hz): where a board-level lumped model stops meaning much (20 MHz): the
    band judged ends there;
    ``sweep_max_hz`` (Hz): the plotted sweep (1 GHz);
    ``default_voltage`` (V), ``default_ripple_pct`` (%), ``default_transient_a`` (A) and
    ``vrm: {r_ohm, l_h}`` (Ω, H): placeholders for what a core rail leaves out.
Rails:
    The declared ``rails:`` and, beside them, every rail the circuit shows that none of them
    covers (``source: detected``, "not declared"): a power-named net with a plane, input rails
    (``VIN``, ``VSYS``, ``VBAT``, ``DC_IN``, ``SYS_VIN_HV``) included, a regulator's switch node
    (the net between its switch pin and the inductor) never, the two sides of a shunt of at
    most 10 mΩ or a 0 Ω link one rail with all their capacitors.  An undeclared rail's finding
    is *info* ("declare to check") unless it is the recognised core rail.
Cannot verify when:
    A rail that is not the core and declares no load (with the load step its network would hold
    and the ``rails:`` entry to paste); a rail that cannot be computed (no VRM, no nets, unknown
    dielectric); a board with no rail at all (one finding).
Example:
    ``{check: pdn_impedance, severity: error, params: {target_ohm: 0.00015, f_min_hz: 1e4,
    f_max_hz: 1e8, model_max_hz: 2e7, ...}}`` (training): a core rail whose |Z| rises above
    0.15 mΩ anywhere from 10 kHz to 20 MHz fails, naming the band, what sets |Z| there and the
    capacitance or inductance that would bring it under target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..results import Finding, Rule, Severity, Status
from . import CheckContext, CheckOutcome, register

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.pdn.model import RailResult

KIND = "pdn_impedance"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("rails",)

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "required": [
        "target_ohm",
        "f_min_hz",
        "f_max_hz",
        "sweep_max_hz",
        "default_voltage",
        "default_ripple_pct",
        "default_transient_a",
        "vrm",
    ],
    "properties": {
        "target_ohm": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "f_min_hz": {"type": "number", "exclusiveMinimum": 0},
        "f_max_hz": {"type": "number", "exclusiveMinimum": 0},
        "sweep_max_hz": {"type": "number", "exclusiveMinimum": 0},
        "model_max_hz": {"type": "number", "exclusiveMinimum": 0},
        "default_voltage": {"type": "number", "exclusiveMinimum": 0},
        "default_ripple_pct": {"type": "number", "exclusiveMinimum": 0},
        "default_transient_a": {"type": "number", "exclusiveMinimum": 0},
        "vrm": {
            "type": "object",
            "required": ["r_ohm", "l_h"],
            "properties": {"r_ohm": {"type": "number"}, "l_h": {"type": "number"}},
        },
    },
}

#: points of the |Z(f)| curve kept in a finding's evidence (the full sweep is in extras)
CURVE_POINTS = 81


def _results(ctx: CheckContext, params: Mapping[str, Any]) -> list[RailResult]:
    rails = ctx.analysis.rails
    if not rails:
        return []  # no import of the PDN model for a board without rails (start-up)
    from ..analysis.pdn.model import evaluate

    return [evaluate(r, params) for r in rails]


@register(KIND)
def check_pdn_impedance(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    params = dict(rule.params or {})
    out = CheckOutcome()
    results = _results(ctx, params)
    out.checked = len(results)
    if not results:
        out.findings.append(
            Finding(
                rule=rule.id,
                check="pdn_impedance",
                severity=rule.severity,
                status=Status.CANNOT_VERIFY,
                message="no power rail found: no power-named net owns a plane zone, and the "
                "config declares no rails",
                why=rule.why,
                source=rule.source,
                evidence={
                    "declare": "the rails to check, in accel-drc.yaml: rails: [{name: <rail>, "
                    "nets: ['<net regex>'], voltage: <V>, ripple_pct: <%>, transient_a: <A>, "
                    "vrm: {r_ohm: <Ω>, l_h: <H>}}]"
                },
            )
        )
        return out
    for res in results:
        f = _finding(rule, res)
        if f is not None:
            out.findings.append(f)
    return out


def _rail_yaml(res: RailResult, *, core: bool) -> str:
    """A ready-to-paste ``rails:`` entry for the rail, its known values filled in, every other
    one a ``<placeholder>`` of the starter file's (:data:`~accel_drc.starter_config.PLACEHOLDERS`)."""
    from ..yamltext import yaml_quote

    rail = res.rail
    nets = (
        ", ".join(
            yaml_quote(re.escape(n).replace(chr(92) + chr(32), chr(32))) for n in rail.nets[:3]
        )
        or "'<net regex>'"
    )
    bits = [f"name: {yaml_quote(rail.name)}", f"nets: [{nets}]"]
    if core:
        bits.append("role: core")
    bits.append(f"voltage: {rail.voltage:g}" if rail.voltage is not None else "voltage: <V>")
    bits.append(
        f"ripple_pct: {rail.ripple_pct:g}" if rail.ripple_pct is not None else "ripple_pct: <%>"
    )
    bits.append(
        f"transient_a: {rail.transient_a:g}" if rail.transient_a is not None else "transient_a: <A>"
    )
    if res.basis.get("vrm") != "declared":
        bits.append("vrm: {r_ohm: <Ω>, l_h: <H>}")
    return "rails: [{" + ", ".join(bits) + "}]"


def _declare(res: RailResult) -> str:
    """What turns each weak input of the rail's verdict into a fact."""
    b = res.basis
    rail = res.rail
    out = []
    if res.need_load:
        out.append(f"declare the rail's own load in accel-drc.yaml: {_rail_yaml(res, core=False)}")
    elif (
        b.get("rail_role") == "assumed"
        or b.get("vrm") == "default"
        or "default" in (b.get(k) for k in ("voltage", "ripple_pct", "transient_a"))
    ):
        core = b.get("rail_role") is not None
        out.append(
            ("confirm it is the core rail and " if b.get("rail_role") == "assumed" else "")
            + f"declare its load and regulator in accel-drc.yaml: {_rail_yaml(res, core=core)}"
        )
    if b.get("network_model") == "default" and not res.need_load:
        if any(c.unconfirmed for c in rail.decaps):
            out.append(_capacitors_yaml(rail))
        if rail.plane_dielectric_basis == "default":
            from ..analysis.stackup import declare_hint

            names = sorted({p.dielectric for p in rail.plane_pairs if p.dielectric})
            out.append(
                declare_hint({"h", "epsilon_r"}, dielectrics=names)
                or "declare your fab's stack-up (the plane dielectrics' height and εr)"
            )
    return "; ".join(out)


def unconfirmed_packages(rail: Any) -> list[str]:
    """The packages of the rail's decaps whose ESL rests on the library's typical figure."""
    return sorted({str(c.package) for c in rail.decaps if c.unconfirmed and c.package})


def _capacitors_yaml(rail: Any) -> str:
    """The ready-to-paste ``capacitors:`` entry that confirms the rail's decap models: the
    mounting inductance (added to every body ESL) and each unconfirmed package's body ESL."""
    from ..yamltext import yaml_quote

    pkgs = ", ".join(f"{yaml_quote(p)}: {{esl_body_h: <H>}}" for p in unconfirmed_packages(rail))
    body = "mounting_esl_h: <H>" + (f", packages: {{{pkgs}}}" if pkgs else "")
    return (
        "declare the capacitors' mounted ESL (the library's typical figures model them now), "
        f"in accel-drc.yaml: capacitors: {{{body}}}; or per part, a parts: {{C12: {{esl_h: <H>, "
        "esr_ohm: <Ω>}} entry in it"
    )


def _finding(rule: Rule, res: RailResult) -> Finding | None:
    from ..analysis.pdn.model import remedy
    from ..analysis.pdn.rails import _si
    from ..analysis.pdn.rows import rail_row

    rail = res.rail
    row = rail_row(res, points=CURVE_POINTS)
    role = ""
    if rail.role == "core":
        role = (
            " (core rail, declared)"
            if rail.role_basis == "declared"
            else " (core rail, recognised)"
        )
    evidence: dict[str, Any] = {
        "rail": rail.name,
        "nets": list(rail.nets),
        "source": rail.source,
        "role": rail.role,
        "role_basis": rail.role_basis,
        "assumed_from_class": list(res.assumed),
        "target_source": res.target_source if res.target_ohm is not None else None,
        "band_hz": [res.f_min_hz, res.f_max_hz],
        "class_band_hz": [res.f_min_hz, res.band_max_hz],
        "model_band": row["model_band"],
        "plane_capacitance_f": rail.plane_capacitance_f,
        "plane_pairs": row["plane_pairs"],
        "decaps": len(rail.decaps),
        "decap_groups": [g.label for g in rail.groups()],
        "unread_caps": list(rail.unread_caps),
        "unconfirmed_packages": unconfirmed_packages(rail),
        "vrm": row["vrm"],
        "curve": row["impedance"],
    }
    if rail.role_evidence:
        evidence["role_evidence"] = f"recognised as the core rail: it {rail.role_evidence}"
    basis = dict(res.basis)
    # a rail nobody described (found on the board, not declared, not the core) is listed for
    # the designer to declare: info, not an error (issue 27 §5)
    undescribed = rail.source == "detected" and rail.role != "core"
    common = {
        "rule": rule.id,
        "check": "pdn_impedance",
        "severity": Severity.INFO if undescribed else rule.severity,
        # a rail of several nets (a shunt's two sides) is marked on the net it is named after
        "net": rail.nets[0]
        if len(rail.nets) == 1
        else (rail.name if rail.name in rail.nets else None),
        "layer": rail.layer,
        "pos": rail.pos,
        "why": rule.why,
        "source": rule.source,
    }
    if res.missing:
        evidence["declare"] = "; ".join(res.missing)
        if basis:
            evidence["basis"] = basis
        return Finding(
            status=Status.CANNOT_VERIFY,
            message=f"rail {rail.name}{role}{' (not declared)' if undescribed else ''}: cannot "
            f"compute |Z(f)|: declare {res.missing[0]}",
            evidence=evidence,
            **common,
        )
    band = f"{_si(res.f_min_hz, 'Hz')}–{_si(res.f_max_hz, 'Hz')}"
    if res.need_load:
        # not the core rail, no load of its own: no target to judge against.  Say what the
        # network does hold, so the number is there when the load is known
        evidence["declare"] = _declare(res)
        if basis:
            evidence["basis"] = basis
        holds = ""
        if res.worst_z_ohm and rail.voltage:
            steps = {
                pct: rail.voltage * pct / 100.0 / res.worst_z_ohm for pct in (3.0, 5.0)
            }  # fmt: skip
            evidence["max_step_a"] = {f"{pct:g}%": round(a, 4) for pct, a in steps.items()}
            holds = (
                f"; at {rail.voltage:g} V that holds 5 % ripple for load steps up to "
                f"{_si(steps[5.0], 'A')} (3 %: {_si(steps[3.0], 'A')})"
            )
        peak = (
            f"|Z| peaks at {_si(res.worst_z_ohm, 'Ω')} at {_si(res.worst_f_hz, 'Hz')} in {band}"
            if res.worst_z_ohm is not None
            else f"|Z| not finite in {band}"
        )
        return Finding(
            status=Status.CANNOT_VERIFY,
            message=f"rail {rail.name}{' (not declared)' if undescribed else ''}: no target: "
            "the class target is the accelerator core "
            f"rail's, and this rail's own load (ripple, load step) is not declared; {peak}"
            f"{holds}",
            measured=res.worst_z_ohm,
            unit="Ω",
            items=tuple(rail.nets),
            evidence=evidence,
            **common,
        )
    if not res.over:
        return None
    z, t = float(res.worst_z_ohm or 0.0), float(res.target_ohm or 0.0)
    ratio = z / t if t > 0 else math.inf
    evidence.update(
        {
            "worst_f_hz": res.worst_f_hz,
            "z_ohm": z,
            "target_ohm": t,
            "margin_ohm": t - z,
            "margin_db": round(20 * math.log10(t / z), 2) if t > 0 and z > 0 else None,
            "dominant": res.dominant,
            "over_bands": row["over_bands"],
            "remedy": remedy(res),
        }
    )
    if res.candidates:
        evidence["candidates"] = dict(res.candidates)
        evidence["candidates_of"] = "network_model"
    declare = _declare(res)
    if declare:
        evidence["declare"] = declare
    evidence["basis"] = basis
    over = ", ".join(
        f"{_si(b.f_lo_hz, 'Hz')}–{_si(b.f_hi_hz, 'Hz')}" for b in res.over_bands
    )  # fmt: skip
    return Finding(
        status=Status.VIOLATION,
        message=f"rail {rail.name}{role}: |Z| {_si(z, 'Ω')} at {_si(res.worst_f_hz, 'Hz')} > "
        f"target {_si(t, 'Ω')} ({res.target_source}; {ratio:.3g}×), over target {over}; set by "
        f"{res.dominant}; judged {band} (a board-level model stops near "
        f"{_si(res.model_max_hz, 'Hz')})",
        measured=z,
        limit=t,
        unit="Ω",
        items=tuple(rail.nets),
        evidence=evidence,
        **common,
    )


def rails_extra(analysis: Analysis, rules: Sequence[Rule] | None = None) -> list[dict[str, Any]]:
    """``result.extras["rails"]``: each rail row with its full |Z(f)| curve, evaluated with the
    params of the first pdn_impedance rule (the class pack's)."""
    if not analysis.rails:
        return []  # no import of the PDN model for a board without rails (start-up)
    from ..analysis.pdn.model import evaluate
    from ..analysis.pdn.rows import rail_row

    params: Mapping[str, Any] = {}  # no pdn_impedance rule: the model's own defaults
    for rule in rules or ():
        if rule.check == "pdn_impedance":
            params = rule.params
            break
    return [rail_row(evaluate(r, params)) for r in analysis.rails]


#: the report extras of this kind: ``result.extras["rails"]`` (|Z(f)| curves, HTML report)
EXTRAS_KEY = "rails"
extras = rails_extra
