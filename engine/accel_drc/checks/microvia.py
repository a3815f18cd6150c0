"""``microvia``: microvias against IPC-2226, and stacked microvias against IPC-4761 / IPC-WP-023.

What it checks:
    Every microvia (KiCad's ``micro`` type, and a blind via that spans one dielectric): its
    depth (the dielectric it crosses, from the stack-up) over its drill against the aspect
    ratio of ``rules/fab.yaml`` (IPC-2226: at most 1:1), and the depth against 0.25 mm.
    Stacks: microvias at one position on consecutive layers (one's end layer is the next's
    start).  Every level another lands on must be filled and capped (IPC-4761 type VII, KiCad
    10's ``(filling yes)`` and ``(capping yes)``), the outermost level excepted; and a stack may
    have at most ``max_stack`` levels (staggering is the remedy for both).  One finding per
    group of identical microvias or stacks, with the count and positions.
Why:
    A laser-drilled microvia deeper than it is wide does not plate to its bottom; one over
    0.25 mm is no longer a microvia.  A microvia landing on an unfilled or uncapped one below
    has no solid target: the interface separates in reflow (IPC-WP-023's weak microvia
    interface), an open that often passes the bare-board test.
Parameters:
    ``max_stack`` (integer ≥ 2): most stacked levels the class allows.
Cannot verify when:
    The dielectric thickness is KiCad's auto stack-up (default), or not stated; a stack whose
    vias do not state filling and capping (the KiCad 10 via properties, or a board from an
    older KiCad): what to declare is named.
Example:
    ``{check: microvia, severity: error, params: {max_stack: 2}}``: a 0.10 mm microvia through
    a 0.12 mm prepreg is 1.2:1 and fails; three microvias stacked F.Cu–In3.Cu with
    ``(filling no)`` fail.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import ViaProtection
from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding
from ._holes import (
    Holes,
    fab_data,
    group_rows,
    microvia_rows,
    plated_holes,
    positions,
)

KIND = "microvia"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["max_stack"],
    "properties": {"max_stack": {"type": "integer", "minimum": 1}},
}

_TOL = 1e-6
#: two microvias are at one position when their centres are this close (mm)
_SAME_XY_MM = 0.001


def _candidates(ctx: CheckContext) -> bool:
    """Whether the board has any via that could be a microvia (cheap, before any table)."""
    v = ctx.board.vias
    if not len(v):
        return False
    start, end = np.asarray(v.start, np.int64), np.asarray(v.end, np.int64)
    last = v.layer_count - 1
    micro = np.asarray(v.micro, bool) if len(v.micro) == len(v) else np.zeros(len(v), bool)
    return bool((micro | (((start == 0) ^ (end == last)) & (end - start == 1))).any())


@register(KIND)
def check_microvia(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    fab = fab_data(ctx)
    if fab is None or not _candidates(ctx):
        return out
    holes = plated_holes(ctx, pads=False)
    mv = microvia_rows(holes)
    out.checked = int(len(mv))
    if not len(mv):
        return out
    from ._holes import stack_geometry

    geom = stack_geometry(ctx.board)
    depth = geom.length(2 * holes.start[mv] + 1, 2 * holes.end[mv])
    spec = fab.microvia
    ar_max, depth_max = float(spec["aspect_ratio_max"]), float(spec["depth_max_mm"])
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = depth / holes.drill[mv]
    known = np.isfinite(ratio)
    bad = known & ((ratio > ar_max + _TOL) | (depth > depth_max + _TOL))
    d_basis = holes.span_basis[1] or "default"
    for g in group_rows(
        (np.round(holes.drill[mv][bad] * 1e4), holes.start[mv][bad], holes.end[mv][bad],
         np.round(depth[bad] * 1e4))
    ):  # fmt: skip
        rows = mv[bad][g]
        out.findings.append(
            _shape_finding(rule, holes, rows, float(depth[bad][g[0]]), ar_max, depth_max,
                           d_basis, spec)
        )  # fmt: skip
    if (~known).any():
        rows = mv[~known]
        x, y = holes.xy[int(rows[0])].tolist()
        out.findings.append(
            finding(
                rule,
                Status.CANNOT_VERIFY,
                f"{len(rows)} microvias: the dielectric they cross has no thickness in the "
                f"stack-up, aspect ratio and depth not checked; first at ({x:.3f}, {y:.3f})",
                pos=(round(x, 4), round(y, 4)),
                items=holes.ids_of(rows),
                evidence={
                    "count": int(len(rows)),
                    "positions": positions(holes, rows),
                    "declare": "the dielectric thicknesses of the stack-up",
                },
            )  # fmt: skip
        )
    out.findings.extend(_stacks(ctx, rule, holes, mv, spec))
    return out


def _shape_finding(
    rule: Rule, holes: Holes, rows: np.ndarray, depth: float, ar_max: float, depth_max: float,
    basis: str, spec: Any,
) -> Finding:  # fmt: skip
    i = int(rows[0])
    drill = float(holes.drill[i])
    ratio = depth / drill
    names = holes.layer_names
    layers = f"{names[int(holes.start[i])]}–{names[int(holes.end[i])]}"
    reasons = []
    if ratio > ar_max + _TOL:
        reasons.append(f"aspect ratio {ratio:.2f}:1 > {ar_max:g}:1")
    if depth > depth_max + _TOL:
        reasons.append(f"depth {depth:.3f} mm > {depth_max:g} mm")
    need = depth / ar_max
    x, y = holes.xy[i].tolist()
    remedy = (
        f"a drill of at least {need:.3f} mm, or a dielectric of at most {drill * ar_max:.3f} mm"
        if depth <= depth_max + _TOL
        else f"a dielectric of at most {min(depth_max, drill * ar_max):.3f} mm (split the span)"
    )
    return finding(
        rule,
        Status.VIOLATION,
        f"{len(rows)} microvia{'s' if len(rows) > 1 else ''} ({drill:.3f} mm drill, {layers}, "
        f"{depth:.3f} mm dielectric): {'; '.join(reasons)}; first at ({x:.3f}, {y:.3f}); "
        f"remedy: {remedy}",
        measured=round(ratio, 3),
        limit=ar_max,
        unit=":1",
        pos=(round(x, 4), round(y, 4)),
        items=holes.ids_of(rows),
        evidence={
            "count": int(len(rows)),
            "drill_mm": round(drill, 4),
            "depth_mm": round(depth, 4),
            "aspect_ratio": round(ratio, 3),
            "layers": layers,
            "positions": positions(holes, rows),
            "remedy": remedy,
            "standard": spec.get("source", ""),
            **(
                {"declare": "the dielectric thicknesses of your fab's stack-up"}
                if basis != "declared"
                else {}
            ),
            "group": f"microvia {drill:.3f} mm {layers}",
        },
        basis={"depth": basis, "drill": "measured"},
    )


def stacks_of(holes: Holes, mv: np.ndarray) -> list[list[int]]:
    """Chains of microvias at one position on consecutive layers (each ≥ 2 levels, ordered
    from the top), as rows of ``holes``."""
    if len(mv) < 2:
        return []
    key = np.round(holes.xy[mv] / _SAME_XY_MM).astype(np.int64)
    order = np.lexsort((holes.start[mv], key[:, 1], key[:, 0]))
    k = key[order]
    same = np.r_[False, (k[1:] == k[:-1]).all(axis=1)]
    if not same.any():
        return []
    out: list[list[int]] = []
    bounds = np.flatnonzero(~same)
    for a, b in zip(bounds.tolist(), np.r_[bounds[1:], len(order)].tolist()):
        if b - a < 2:
            continue
        rows = [int(mv[j]) for j in order[a:b].tolist()]
        chain = [rows[0]]
        for r in rows[1:]:
            if int(holes.start[r]) == int(holes.end[chain[-1]]):
                chain.append(r)
                continue
            if len(chain) >= 2:
                out.append(chain)
            chain = [r]
        if len(chain) >= 2:
            out.append(chain)
    return out


def _stacks(
    ctx: CheckContext, rule: Rule, holes: Holes, mv: np.ndarray, spec: Any
) -> list[Finding]:
    chains = stacks_of(holes, mv)
    if not chains:
        return []
    max_stack = int((rule.params or {}).get("max_stack") or 2)
    last = len(holes.layer_names) - 1
    prot = ctx.board.vias.protection
    via_row = {k: int(r) for k, r in enumerate(holes.via_rows.tolist())}
    groups: dict[tuple[Any, ...], list[list[int]]] = {}
    for chain in chains:
        # the levels another lands on: all but the outermost (the one on an outer layer)
        inner = list(chain)
        if int(holes.start[chain[0]]) == 0:
            inner = chain[1:]
        elif int(holes.end[chain[-1]]) == last:
            inner = chain[:-1]
        states = [_state(prot.get(via_row.get(r, -1))) for r in inner]
        verdict = "no" if "no" in states else ("unknown" if "unknown" in states else "yes")
        too_tall = len(chain) > max_stack
        if verdict == "yes" and not too_tall:
            continue
        span = (int(holes.start[chain[0]]), int(holes.end[chain[-1]]))
        groups.setdefault((len(chain), span, verdict, too_tall), []).append(chain)
    out = []
    listed_only = "unprotected_vias" in ctx.board.not_carried
    for (levels, span, verdict, too_tall), cs in groups.items():
        out.append(_stack_finding(rule, holes, levels, span, verdict, too_tall, cs, max_stack,
                                  spec, listed_only))  # fmt: skip
    return out


def _state(p: ViaProtection | None) -> str:
    """``yes`` filled and capped, ``no`` stated otherwise, ``unknown`` not stated."""
    if p is None or (p.filling is None and p.capping is None):
        return "unknown"
    if p.filled_and_capped:
        return "yes"
    return "no" if p.filling is False or p.capping is False else "unknown"


def _stack_finding(
    rule: Rule, holes: Holes, levels: int, span: tuple[int, int], verdict: str, too_tall: bool,
    chains: list[list[int]], max_stack: int, spec: Any, listed_only: bool = False,
) -> Finding:  # fmt: skip
    """One finding for the stacks of one shape; ``listed_only``: the board's format states a
    via's protection only where the via has it (IPC-2581), so "not stated" may be "none"."""
    names = holes.layer_names
    layers = f"{names[span[0]]}–{names[span[1]]}"
    tops = np.array([c[0] for c in chains])
    x, y = holes.xy[int(tops[0])].tolist()
    reasons = []
    basis = {"stack": "measured"}
    if verdict != "yes":
        reasons.append(
            "the levels below the outermost are not filled and capped (IPC-4761 type VII)"
            if verdict == "no"
            else "the vias do not state filling and capping (IPC-4761 type VII)"
            + (
                "; this file lists a via's protection only where the via has one"
                if listed_only
                else ""
            )
        )
        if not too_tall:  # a stack too tall fails whatever its protection
            basis["protection"] = "declared" if verdict == "no" else "default"
    if too_tall:
        reasons.append(f"{levels} levels > {max_stack}")
    n = len(chains)
    items = holes.ids_of([r for c in chains for r in c])
    return finding(
        rule,
        Status.VIOLATION,
        f"{n} stacked microvia{'s' if n > 1 else ''} ({levels} levels, {layers}): "
        f"{'; '.join(reasons)}; first at ({x:.3f}, {y:.3f}); remedy: fill and cap the "
        f"landed-on levels (KiCad 10 via properties: filling, capping) or stagger them",
        measured=levels,
        limit=max_stack,
        unit="levels",
        pos=(round(x, 4), round(y, 4)),
        items=items,
        evidence={
            "count": n,
            "levels": levels,
            "layers": layers,
            "filled_and_capped": verdict,
            "positions": positions(holes, tops),
            "standard": spec.get("stacked_source", ""),
            "declare": "filling and capping of the stacked microvias (KiCad 10 via properties)",
            "group": f"stack {levels} {layers} {verdict}",
        },
        basis=basis,
        rule_id=rule.id + ".stack",
    )
