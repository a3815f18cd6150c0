"""``impedance``: each routed differential pair's Zdiff, per layer, against its signal's target.

What it checks:
    One rule per signal type (``rule.signal``): every differential pair of that type, on every
    layer where P and N run side by side for at least ``min_coupled_mm``, against
    ``zdiff_ohm`` ± ``tol_pct``.  Zdiff comes from :mod:`accel_drc.analysis.impedance`: width and
    gap measured from the tracks, height and εr from the stack-up, microstrip (outer layer) by
    the 2-D field solver, stripline by Cohn's coupled-strip formula with a thickness correction;
    the finding names the method and its measured accuracy.  A layer with a shorter coupled run
    is fan-out to a via, not routing, and is not judged; a pair with no such run anywhere is
    judged on its longest layer with its net class's diff-pair gap.
Why:
    A differential impedance off target reflects part of every edge back at the driver; the
    interface specifications give the target and its tolerance.
Parameters:
    ``zdiff_ohm`` (Ω, > 0, or null: the signal type's ``zdiff_ohm``): target;
    ``tol_pct`` (%, > 0, or null: the signal type's ``zdiff_tol_pct``): tolerance;
    ``min_coupled_mm`` (mm, default 0.5): shortest side-by-side run judged.
Cannot verify when:
    The stack-up does not give what the computation needs (a thickness, an εr, a reference
    plane): ``evidence["declare"]`` says what to declare; a pair with no coupled run and no net
    class gap.
Example:
    ``{check: impedance, signal: nvlink4, severity: warning, params: {zdiff_ohm: 100,
    tol_pct: 10}}`` (training): a pair computed at 118 Ω fails (limit 90–110 Ω).
"""

from __future__ import annotations

from typing import Any

from ..analysis.impedance import MAX_ITEMS, MIN_COUPLED_MM, PairImpedance, pair_table
from ..results import Finding, Rule, Severity, Status
from . import CheckContext, CheckOutcome, register

KIND = "impedance"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "required": ["zdiff_ohm", "tol_pct"],
    "properties": {
        "zdiff_ohm": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "tol_pct": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "min_coupled_mm": {"type": "number", "minimum": 0},
    },
}

#: most item uuids one finding lists (a pair row keeps no more)
_MAX_ITEMS = MAX_ITEMS


def _target(ctx: CheckContext, rule: Rule) -> tuple[float | None, float | None]:
    params = rule.params or {}
    target = params.get("zdiff_ohm")
    tol = params.get("tol_pct", params.get("zdiff_tol_pct"))
    if (target is None or tol is None) and rule.signal:
        st = None
        try:
            st = ctx.analysis.signal_types.get(rule.signal)
        except AttributeError:
            st = None
        if st is not None:
            if target is None:
                target = getattr(st, "zdiff_ohm", None)
            if tol is None:
                tol = getattr(st, "zdiff_tol_pct", None)
    return (
        None if target is None else float(target),
        None if tol is None else float(tol),
    )


def _finding(
    rule: Rule,
    status: Status,
    message: str,
    row: PairImpedance | None,
    *,
    measured: Any = None,
    limit: Any = None,
    evidence: dict[str, Any] | None = None,
    severity: Severity | None = None,
    net: str | None = None,
) -> Finding:
    return Finding(
        rule=rule.id,
        check=rule.check,
        severity=severity or rule.severity,
        status=status,
        message=message,
        measured=measured,
        limit=limit,
        unit="ohm",
        net=net if net is not None else (row.pair if row else None),
        layer=row.layer_name if row else None,
        pos=row.pos if row else None,
        items=tuple(row.items[:_MAX_ITEMS]) if row else (),
        why=rule.why,
        source=rule.source,
        evidence=evidence or {},
    )


def _geometry(row: PairImpedance) -> dict[str, Any]:
    st = row.stack
    geo: dict[str, Any] = {
        "structure": st.structure,
        "width_mm": None if row.width_mm is None else round(row.width_mm, 4),
        "gap_mm": None if row.gap_mm is None else round(row.gap_mm, 4),
        "width_source": row.width_source,
        "gap_source": row.gap_source,
        "t_mm": st.t_mm,
        "coupled_mm": round(row.coupled_mm, 3),
        "references": list(st.references),
        "net_class": row.net_class,
    }
    if st.structure == "stripline":
        geo.update(
            h_above_mm=st.h_above_mm,
            h_below_mm=st.h_below_mm,
            epsilon_r_above=st.er_above,
            epsilon_r_below=st.er_below,
        )
        if None not in (st.h_above_mm, st.h_below_mm, st.t_mm):
            geo["b_mm"] = round(st.h_above_mm + st.t_mm + st.h_below_mm, 4)  # type: ignore[operator]
    else:
        geo.update(h_mm=st.h_below_mm, epsilon_r=st.er_below)
        geo["soldermask"] = (
            None if st.mask is None else {"thickness_mm": st.mask[0], "epsilon_r": st.mask[1]}
        )
    return geo


def _describe(row: PairImpedance) -> str:
    st = row.stack
    w = f"w {row.width_mm:.3f} mm" if row.width_mm is not None else "w ?"
    s = f"gap {row.gap_mm:.3f} mm" if row.gap_mm is not None else "gap ?"
    if st.structure == "stripline" and st.h_above_mm is not None and st.h_below_mm is not None:
        h = f"h {st.h_above_mm:.3f}/{st.h_below_mm:.3f} mm"
        er = f"εr {st.er_above:g}/{st.er_below:g}"
    else:
        h = f"h {st.h_below_mm:.3f} mm" if st.h_below_mm is not None else "h ?"
        er = f"εr {st.er_below:g}" if st.er_below is not None else "εr ?"
    return f"{w}, {s}, {h}, {er}"


def _judged_rows(table: list[PairImpedance], min_coupled: float) -> list[PairImpedance]:
    """The pair-layers to judge: where P and N run side by side for ``min_coupled`` mm or more.

    A pair that has tracks but no such run anywhere (routed apart, or only short pieces) is not
    skipped: its longest layer is judged with the net class gap (the row says so), or comes out
    cannot_verify when the net class has no gap either.
    """
    by_pair: dict[tuple[int, int], list[PairImpedance]] = {}
    for r in table:
        by_pair.setdefault((r.positive, r.negative), []).append(r)
    out: list[PairImpedance] = []
    for rows in by_pair.values():
        good = [r for r in rows if r.coupled_mm >= min_coupled]
        if good:
            out.extend(good)
        else:
            out.append(max(rows, key=lambda r: r.length_mm))
    return out


@register(KIND)
def check_impedance(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    if not rule.signal:
        return out
    a = ctx.analysis
    nets = set(a.nets_by_signal(rule.signal))
    if not nets:
        return out
    pairs = [dp for dp in a.diff_pairs if dp.positive in nets and dp.negative in nets]
    if not pairs:
        return out
    target, tol = _target(ctx, rule)
    min_coupled = float((rule.params or {}).get("min_coupled_mm") or MIN_COUPLED_MM)
    rows = _judged_rows(pair_table(a, pairs), min_coupled)
    out.examined_nets = frozenset(n for r in rows for n in (r.positive, r.negative))
    if target is None or tol is None:
        out.checked = len(rows)
        if rows:
            out.findings.append(
                _finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{len(rows)} routed pair layer(s) of {rule.signal}: no differential impedance "
                    f"target declared for this signal type",
                    None,
                    net=rows[0].pair,
                    evidence={
                        "declare": f"accel-drc.yaml rules: {rule.id}: params: zdiff_ohm, tol_pct",
                        "pairs": sorted({r.pair for r in rows}),
                    },
                )
            )
        return out
    lo, hi = target * (1.0 - tol / 100.0), target * (1.0 + tol / 100.0)
    # ``limit`` is the target (a number, like every other check's); the band is in evidence
    limit = target
    band = {"target_ohm": target, "tol_pct": tol, "min_ohm": round(lo, 2), "max_ohm": round(hi, 2)}
    names = a.board.nets

    def nets_of(row: PairImpedance) -> list[str]:
        return [names[row.positive], names[row.negative]]

    for row in rows:
        out.checked += 1
        geo = _geometry(row)
        if row.zdiff_ohm is None:
            missing = list(row.missing)
            out.findings.append(
                _finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{row.pair} on {row.layer_name}: Zdiff cannot be computed, the board does not "
                    f"declare: {'; '.join(missing)}",
                    row,
                    limit=limit,
                    evidence={
                        "declare": "; ".join(missing),
                        "band": band,
                        "geometry": geo,
                        "nets": nets_of(row),
                        "notes": list(row.notes),
                    },
                )
            )
            continue
        z = row.zdiff_ohm
        if lo <= z <= hi:
            continue
        dev = (z / target - 1.0) * 100.0
        evidence = {
            "method": row.method,
            "accuracy": row.accuracy,
            "zdiff_ohm": round(z, 2),
            "deviation_pct": round(dev, 1),
            "band": band,
            "geometry": geo,
            "nets": nets_of(row),
            "notes": list(row.notes),
        }
        if row.closed_form_ohm is not None:
            evidence["closed_form_ohm"] = round(row.closed_form_ohm, 2)
        assumption = None
        sig = getattr(a, "net_signal", {}).get(row.positive)
        if sig is not None:
            assumption = getattr(sig, "assumption", None)
        if assumption:
            evidence["assumption"] = assumption
        out.findings.append(
            _finding(
                rule,
                Status.VIOLATION,
                f"{row.pair} on {row.layer_name}: Zdiff {z:.1f} Ω is {dev:+.1f} % from the "
                f"{target:g} Ω ± {tol:g} % target ({_describe(row)}; {row.method}, "
                f"{row.accuracy})",
                row,
                measured=round(z, 2),
                limit=limit,
                evidence=evidence,
            )
        )
    return out
