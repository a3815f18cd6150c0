"""``via_stub``: the unused via barrel on fast nets, and backdrill where the class requires it.

One rule per signal type (``rule.signal``); params:

* ``max_stub_mm`` (float | null): longest stub allowed;
* ``min_fres_ratio`` (float | null): lowest allowed f_res / f_Nyquist.  A length limit alone is
  not enough at 112G and above, where even a backdrilled stub may resonate too low (Bogatin's stub rule of thumb, ``[bogatin2015-stub]``);
* ``require_backdrill`` (bool): every via with a stub on these nets must be backdrilled.

Findings, all one per via (the issue asks for it) with a one-line message so 10k of them stay
readable; ``evidence["group"]`` names the via's shape (span, used layers, stub) so reports can
fold identical ones:

* ``<rule>``: stub over the length limit or resonance too close to Nyquist;
* ``<rule>.backdrill``: backdrill required, none declared, and the via has a stub;
* ``<rule>.backdrill_cut``: a declared backdrill would cut a layer the net uses;
* ``<rule>`` with status cannot_verify: stubs that cannot be computed (stack-up thicknesses or
  a backdrill's residual stub undeclared), one finding per reason, with ``evidence["declare"]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis.via_stubs import MM_PER_MIL, ViaStubs, backdrill_dict, cfg_get
from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register

_TOL = 1e-9


def _fmt_hz(f: float) -> str:
    if not math.isfinite(f):
        return "∞"
    if f >= 1e9:
        return f"{f / 1e9:.1f} GHz"
    return f"{f / 1e6:.0f} MHz"


def _nets_of(analysis: Any, signal: str | None) -> tuple[int, ...]:
    if signal is None:
        return ()
    fn = getattr(analysis, "nets_by_signal", None)
    if fn is None:
        return ()
    return tuple(int(n) for n in fn(signal))


def _nyquist(analysis: Any, signal: str | None) -> float | None:
    types = getattr(analysis, "signal_types", None) or {}
    st = types.get(signal) if signal is not None and isinstance(types, Mapping) else None
    ny = cfg_get(st, "nyquist_hz")
    return float(ny) if ny else None


def _signal_name(analysis: Any, signal: str | None) -> str:
    types = getattr(analysis, "signal_types", None) or {}
    st = types.get(signal) if signal is not None and isinstance(types, Mapping) else None
    return str(cfg_get(st, "name", signal or "?"))


def _via_label(stubs: ViaStubs, i: int) -> str:
    if stubs.ref[i]:
        return f"PTH pad {stubs.ref[i]}"
    return f"{stubs.types[i]} via"


def _evidence(
    stubs: ViaStubs, i: int, nyq: float | None, params: Mapping[str, Any]
) -> dict[str, Any]:
    names = stubs.layer_names
    stub = float(stubs.stub_mm[i])
    fres = float(stubs.f_res_hz[i])
    conn = stubs.connected_names(i)
    return {
        "stub_mm": round(stub, 4),
        "stub_mil": round(stub / MM_PER_MIL, 2),
        "top_stub_mm": round(float(stubs.top_stub_mm[i]), 4),
        "bottom_stub_mm": round(float(stubs.bottom_stub_mm[i]), 4),
        "geometric_stub_mm": round(float(stubs.geometric_stub_mm[i]), 4),
        "connected": conn,
        "start": names[int(stubs.start[i])],
        "end": names[int(stubs.end[i])],
        "type": stubs.types[i],
        "eps_eff": None if math.isnan(stubs.eps_eff[i]) else round(float(stubs.eps_eff[i]), 3),
        "f_res_hz": fres if math.isfinite(fres) else None,
        "nyquist_hz": nyq,
        "f_res_ratio": None if nyq is None or not math.isfinite(fres) else round(fres / nyq, 3),
        "max_stub_mm": params.get("max_stub_mm"),
        "min_fres_ratio": params.get("min_fres_ratio"),
        "backdrill": backdrill_dict(stubs.backdrill[i], names),
        "group": f"{stubs.types[i]} {names[int(stubs.start[i])]}-{names[int(stubs.end[i])]} "
        f"used {'+'.join(conn)} stub {stub:.3f} mm",
    }


@register("via_stub")
def check_via_stub(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    params = rule.params or {}
    max_stub = params.get("max_stub_mm")
    min_ratio = params.get("min_fres_ratio")
    need_bd = bool(params.get("require_backdrill"))
    out = CheckOutcome()
    if max_stub is None and min_ratio is None and not need_bd:
        return out
    nets = _nets_of(ctx.analysis, rule.signal)
    if not nets:
        return out
    stubs: ViaStubs = ctx.analysis.via_stubs
    idx = stubs.rows_for_nets(nets)
    # a barrel the net does not use on any layer carries no signal: nothing to check
    idx = idx[stubs.connected[idx].any(axis=1)] if len(idx) else idx
    out.checked = int(len(idx))
    if not len(idx):
        return out
    nyq = _nyquist(ctx.analysis, rule.signal)
    sig_name = _signal_name(ctx.analysis, rule.signal)
    board = ctx.board
    findings = out.findings

    def base(i: int, rule_id: str, status: Status, message: str, **kw: Any) -> Finding:
        net_i = int(stubs.net[i])
        return Finding(
            rule=rule_id,
            check="via_stub",
            severity=rule.severity,
            status=status,
            message=message,
            net=board.nets[net_i] if 0 <= net_i < len(board.nets) else None,
            pos=(round(float(stubs.xy[i, 0]), 4), round(float(stubs.xy[i, 1]), 4)),
            items=tuple(x for x in (stubs.uuid[i], stubs.ref[i]) if x),
            why=rule.why,
            source=rule.source,
            **kw,
        )

    unknown_stack: list[int] = []
    unknown_residual: list[int] = []
    unknown_eps: list[int] = []
    for i in idx.tolist():
        stub = float(stubs.stub_mm[i])
        fres = float(stubs.f_res_hz[i])
        net = board.nets[int(stubs.net[i])]
        where = f"{_via_label(stubs, i)} at ({stubs.xy[i, 0]:.3f}, {stubs.xy[i, 1]:.3f}) on {net}"
        bd = stubs.backdrill[i]
        if stubs.backdrill_cuts[i]:
            ev = _evidence(stubs, i, nyq, params) if not math.isnan(stub) else {}
            ev["backdrill"] = backdrill_dict(bd, stubs.layer_names)
            ev["connected"] = stubs.connected_names(i)
            findings.append(
                base(
                    i,
                    rule.id + ".backdrill_cut",
                    Status.VIOLATION,
                    f"{where}: the {bd.side if bd else ''} backdrill (must not cut "
                    f"{ev['backdrill']['must_not_cut'] if ev['backdrill'] else '?'}) would cut "
                    f"layers the net uses ({', '.join(ev['connected'])})",
                    evidence=ev,
                )
            )
        if math.isnan(stub):
            geometric = float(stubs.geometric_stub_mm[i])
            (
                unknown_residual if bd is not None and not math.isnan(geometric) else unknown_stack
            ).append(i)
            continue
        ev = _evidence(stubs, i, nyq, params)
        reasons = []
        too_long = max_stub is not None and stub > float(max_stub) + _TOL
        if too_long:
            reasons.append(f"> {float(max_stub):.3f} mm")
        ratio = ev["f_res_ratio"]
        if min_ratio is not None and nyq is not None and ratio is None and stub > 1e-6:
            # a stub whose dielectric εr is not on record has no known resonance: the ratio
            # rule cannot pass it (unknown is not pass), even when the length rule does
            unknown_eps.append(i)
        too_low = (
            min_ratio is not None
            and nyq is not None
            and ratio is not None
            and ratio < float(min_ratio)
        )
        if too_low:
            reasons.append(f"f_res {_fmt_hz(fres)} = {ratio:.1f}× Nyquist < {float(min_ratio):g}×")
        if reasons:
            # measured and limit state the reason that failed (the length when both did), so
            # JSON, SARIF and JUnit never show a value under its limit as a violation
            if too_long:
                measured, limit, unit = round(stub, 4), float(max_stub), "mm"
            else:
                measured, limit, unit = ratio, float(min_ratio), "f_res/f_Nyquist"
            side_layer = _stub_layer(stubs, i)
            findings.append(
                base(
                    i,
                    rule.id,
                    Status.VIOLATION,
                    f"{where}: {sig_name} stub {stub:.3f} mm ({stub / MM_PER_MIL:.1f} mil) "
                    f"{'; '.join(reasons)}; used {'+'.join(ev['connected'])}",
                    measured=measured,
                    limit=limit,
                    unit=unit,
                    layer=side_layer,
                    evidence=ev,
                )
            )
        if need_bd and bd is None and stub > 1e-6:
            findings.append(
                base(
                    i,
                    rule.id + ".backdrill",
                    Status.VIOLATION,
                    f"{where}: {sig_name} requires backdrill; none declared for a "
                    f"{stub:.3f} mm ({stub / MM_PER_MIL:.1f} mil) stub",
                    measured=round(stub, 4),
                    unit="mm",
                    layer=_stub_layer(stubs, i),
                    evidence={
                        **ev,
                        "declare": "backdrill (accel-drc.yaml `backdrill:` or the "
                        "board's backdrill) for these nets",
                    },
                )
            )
    if min_ratio is not None and nyq is None:
        findings.append(
            Finding(
                rule=rule.id,
                check="via_stub",
                severity=rule.severity,
                status=Status.CANNOT_VERIFY,
                message=f"{sig_name}: no Nyquist frequency known, f_res / f_Nyquist not checked",
                why=rule.why,
                source=rule.source,
                evidence={"declare": f"data rate of signal type {rule.signal}"},
            )
        )
    _unknown(findings, rule, stubs, board, unknown_stack, sig_name,
             "copper and dielectric thicknesses in the board stack-up",
             "stub length unknown: the stack-up does not give every thickness")  # fmt: skip
    _unknown(findings, rule, stubs, board, unknown_residual, sig_name,
             "residual_stub_mm of the backdrill (accel-drc.yaml `backdrill:`)",
             "backdrilled, but the residual stub the fabricator leaves is not declared")  # fmt: skip
    _unknown(findings, rule, stubs, board, unknown_eps, sig_name,
             "εr of the dielectrics along the stub (the board's stack-up)",
             "stub resonance unknown: the dielectric εr along the stub is not on record, "
             "f_res / f_Nyquist not checked")  # fmt: skip
    return out


def _stub_layer(stubs: ViaStubs, i: int) -> str:
    """The layer the longer stub hangs off (where a reviewer looks)."""
    conn = np.flatnonzero(stubs.connected[i])
    if not len(conn):
        return stubs.layer_names[int(stubs.start[i])]
    top = float(stubs.top_stub_mm[i])
    bottom = float(stubs.bottom_stub_mm[i])
    j = conn[0] if top >= bottom else conn[-1]
    return stubs.layer_names[int(j)]


def _unknown(
    findings: list[Finding],
    rule: Rule,
    stubs: ViaStubs,
    board: Any,
    rows: Sequence[int],
    sig_name: str,
    declare: str,
    why_unknown: str,
) -> None:
    """One cannot_verify finding per reason (not per via): the fix is the same for all."""
    if not rows:
        return
    nets = sorted({board.nets[int(stubs.net[i])] for i in rows})
    first = rows[0]
    findings.append(
        Finding(
            rule=rule.id,
            check="via_stub",
            severity=rule.severity,
            status=Status.CANNOT_VERIFY,
            message=f"{sig_name}: {len(rows)} via(s) on {len(nets)} net(s): {why_unknown}",
            net=nets[0] if len(nets) == 1 else None,
            pos=(round(float(stubs.xy[first, 0]), 4), round(float(stubs.xy[first, 1]), 4)),
            items=tuple(stubs.uuid[i] for i in rows[:50] if stubs.uuid[i]),
            why=rule.why,
            source=rule.source,
            evidence={"declare": declare, "vias": len(rows), "nets": nets[:50]},
        )
    )


def via_stub_extra(analysis: Any, rules: Sequence[Rule]) -> dict[str, Any]:
    """``result.extras["via_stubs"]``: per signal type the stub of every used via on its nets
    (for the HTML histogram) and the limits."""
    out: dict[str, Any] = {}
    stubs: ViaStubs | None = None
    for rule in rules:
        if rule.check != "via_stub" or rule.signal is None or rule.signal in out:
            continue
        nets = _nets_of(analysis, rule.signal)
        if not nets:
            continue
        if stubs is None:
            stubs = analysis.via_stubs
        idx = stubs.rows_for_nets(nets)
        idx = idx[stubs.connected[idx].any(axis=1)] if len(idx) else idx
        vals = stubs.stub_mm[idx]
        known = vals[~np.isnan(vals)]
        fres = stubs.f_res_hz[idx]
        params = rule.params or {}
        out[rule.signal] = {
            "stubs_mm": [round(float(v), 4) for v in known],
            "limit_mm": params.get("max_stub_mm"),
            "min_fres_ratio": params.get("min_fres_ratio"),
            "nyquist_hz": _nyquist(analysis, rule.signal),
            "min_f_res_hz": float(np.nanmin(fres)) if np.isfinite(fres).any() else None,
            "count": int(len(idx)),
            "unknown": int(len(vals) - len(known)),
            "backdrilled": int(sum(1 for i in idx if stubs.backdrill[int(i)] is not None)),
        }
    return out
