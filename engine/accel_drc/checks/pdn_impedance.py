"""``pdn_impedance``: |Z(f)| of each power rail against its target impedance.

Params (class pack): ``target_ohm`` (the class target, NextPCB 2026: training < 0.15 mΩ, inference
< 0.2 mΩ, edge < 1 mΩ), ``f_min_hz`` / ``f_max_hz`` (the band compared, DC–100 MHz),
``sweep_max_hz`` (the plotted sweep, 1 GHz), ``default_voltage``, ``default_ripple_pct``,
``default_transient_a`` and ``vrm: {r_ohm, l_h}`` (used for rails the config does not describe).

One finding per rail over target (worst frequency, |Z| there, target, margin, the dominant
element); a rail that cannot be judged (no VRM model, no nets, unknown dielectric) is
cannot_verify with what to declare; a board with no rail at all is one cannot_verify finding.
The curves go into each finding's evidence and, through :func:`rails_extra`, into
``result.extras["rails"]`` for the HTML plot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.pdn import RailResult, _si, evaluate, rail_row
from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register

#: points of the |Z(f)| curve kept in a finding's evidence (the full sweep is in extras)
CURVE_POINTS = 81


def _results(ctx: CheckContext, params: Mapping[str, Any]) -> list[RailResult]:
    return [evaluate(r, params) for r in ctx.analysis.rails]


@register("pdn_impedance")
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
                    "declare": "rails: [{name, nets: [regex], voltage, ripple_pct, transient_a, "
                    "vrm: {r_ohm, l_h}}] in accel-drc.yaml"
                },
            )
        )
        return out
    for res in results:
        f = _finding(rule, res)
        if f is not None:
            out.findings.append(f)
    return out


def _finding(rule: Rule, res: RailResult) -> Finding | None:
    rail = res.rail
    row = rail_row(res, points=CURVE_POINTS)
    assumed = ""
    if rail.source == "detected":
        assumed = " (rail detected from its planes; target and VRM from the class defaults)"
    elif res.assumed:
        assumed = f" ({', '.join(res.assumed)} from the class defaults)"
    evidence: dict[str, Any] = {
        "rail": rail.name,
        "nets": list(rail.nets),
        "source": rail.source,
        "assumed_from_class": list(res.assumed),
        "target_source": res.target_source if res.target_ohm is not None else None,
        "band_hz": [res.f_min_hz, res.f_max_hz],
        "plane_capacitance_f": rail.plane_capacitance_f,
        "plane_pairs": row["plane_pairs"],
        "decaps": len(rail.decaps),
        "decap_groups": [g.label for g in rail.groups()],
        "unread_caps": list(rail.unread_caps),
        "vrm": row["vrm"],
        "curve": row["impedance"],
    }
    common = {
        "rule": rule.id,
        "check": "pdn_impedance",
        "severity": rule.severity,
        "net": rail.nets[0] if len(rail.nets) == 1 else None,
        "layer": rail.layer,
        "pos": rail.pos,
        "why": rule.why,
        "source": rule.source,
    }
    if res.missing:
        evidence["declare"] = "; ".join(res.missing)
        return Finding(
            status=Status.CANNOT_VERIFY,
            message=f"rail {rail.name}: cannot compute |Z(f)|: declare {res.missing[0]}{assumed}",
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
        }
    )
    return Finding(
        status=Status.VIOLATION,
        message=f"rail {rail.name}: |Z| {_si(z, 'Ω')} at {_si(res.worst_f_hz, 'Hz')} > target "
        f"{_si(t, 'Ω')} ({ratio:.3g}×); set by {res.dominant}{assumed}",
        measured=z,
        limit=t,
        unit="Ω",
        items=tuple(rail.nets),
        evidence=evidence,
        **common,
    )


def rails_extra(analysis: Any, rules: Sequence[Rule] | None = None) -> list[dict[str, Any]]:
    """``result.extras["rails"]``: each rail row with its full |Z(f)| curve, evaluated with the
    params of the first pdn_impedance rule (the class pack's)."""
    params: Mapping[str, Any] | None = None
    for rule in rules or ():
        if rule.check == "pdn_impedance":
            params = rule.params
            break
    if params is None:
        got = getattr(analysis, "pdn_params", None)
        params = got if isinstance(got, Mapping) else {}
    return [rail_row(evaluate(r, params)) for r in analysis.rails]
