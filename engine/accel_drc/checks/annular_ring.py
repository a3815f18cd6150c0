"""``annular_ring``: the land around every plated hole against IPC-6012's finished minimum.

What it checks:
    Every via and plated through-hole pad: the designed annular ring, (land − finished hole)
    / 2 (a pad's land: its smaller side), against the minimum of ``rules/fab.yaml`` for the
    IPC-6012 class: ``fab: ipc6012_class`` of accel-drc.yaml when declared, else the pack's
    ``ipc6012_class``.  External lands (a hole reaching F.Cu or B.Cu) against the external
    minimum, buried holes against the internal one; where the class allows no breakout, a
    land no wider than its hole fails too.  One finding per group of identical holes.
Why:
    The drill wanders from the land's centre; the finished ring is the designed one less that
    wander.  A land designed below the class minimum cannot meet it on any board (class 3: no
    breakout, 50 µm external), and the fab will either enlarge it or reject the job.
Parameters:
    ``ipc6012_class`` (2 or 3): the IPC-6012 class this board class is built to.
Cannot verify when:
    Never for the geometry (the land and hole are measured); a failure against the pack's
    class (not declared in ``fab: ipc6012_class``) rests on that assumption and says so.
Example:
    ``{check: annular_ring, severity: error, params: {ipc6012_class: 3}}``: a 0.30 mm via with
    a 0.35 mm land has a 25 µm ring, under class 3's 50 µm external minimum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding
from ._holes import Holes, fab_data, group_rows, plated_holes, positions

KIND = "annular_ring"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ipc6012_class"],
    "properties": {"ipc6012_class": {"type": "integer", "enum": [1, 2, 3]}},
}

_TOL = 1e-6


@register(KIND)
def check_annular_ring(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    fab = fab_data(ctx)
    declared = ctx.config.fab.ipc6012_class
    cls = int(declared or (rule.params or {}).get("ipc6012_class") or 0)
    spec = fab.annular_ring.get(cls) if fab is not None else None
    if spec is None:
        return out
    if not len(ctx.board.vias) and not any(p.drill_mm for _, p in ctx.board.pads):
        return out
    holes = plated_holes(ctx)
    out.checked = len(holes)
    if not len(holes):
        return out
    last = len(holes.layer_names) - 1
    ring = (holes.diameter - holes.drill) / 2.0
    outer = (holes.start == 0) | (holes.end == last)
    need = np.where(outer, float(spec["external_mm"]), float(spec["internal_mm"]))
    bad = ring < need - _TOL
    if not spec["breakout_allowed"]:
        bad |= ring <= _TOL
    idx = np.flatnonzero(bad)
    basis = "declared" if declared else "default"
    for g in group_rows(
        (holes.kind[idx], np.round(holes.drill[idx] * 1e4), np.round(holes.diameter[idx] * 1e4),
         outer[idx])
    ):  # fmt: skip
        f = _finding(rule, holes, idx[g], float(need[idx[g[0]]]), cls, basis, spec)
        if not declared and fab is not None:
            f.evidence["candidates"] = _verdicts(holes, int(idx[g[0]]), last, fab.annular_ring)
            f.evidence["candidates_of"] = "ipc6012_class"
        out.findings.append(f)
    return out


def _verdicts(holes: Holes, i: int, last: int, specs: Any) -> dict[str, str]:
    """pass / fail of hole ``i`` under every IPC-6012 class of the data."""
    ring = (float(holes.diameter[i]) - float(holes.drill[i])) / 2.0
    outer = int(holes.start[i]) == 0 or int(holes.end[i]) == last
    out = {}
    for c, s in sorted(specs.items()):
        need = float(s["external_mm"] if outer else s["internal_mm"])
        fail = ring < need - _TOL or (not s["breakout_allowed"] and ring <= _TOL)
        out[f"class {c}"] = "fail" if fail else "pass"
    return out


def _finding(
    rule: Rule, holes: Holes, rows: np.ndarray, need: float, cls: int, basis: str, spec: Any
) -> Finding:
    i = int(rows[0])
    drill, land = float(holes.drill[i]), float(holes.diameter[i])
    ring = (land - drill) / 2.0
    what = holes.types[i] + (" via" if holes.types[i] != "PTH pad" else "")
    x, y = holes.xy[i].tolist()
    n = len(rows)
    side = "external" if need == float(spec["external_mm"]) else "internal"
    return finding(
        rule,
        Status.VIOLATION,
        f"{n} {what}{'s' if n > 1 else ''} ({drill:.3f} mm hole, {land:.3f} mm land): annular "
        f"ring {ring * 1000:.0f} µm < IPC-6012 class {cls} {side} {need * 1000:.0f} µm; first at "
        f"({x:.3f}, {y:.3f}); remedy: a land of at least {drill + 2 * need:.3f} mm, or a "
        f"drill of at most {land - 2 * need:.3f} mm",
        measured=round(ring, 4),
        limit=need,
        unit="mm",
        pos=(round(x, 4), round(y, 4)),
        items=holes.ids_of(rows),
        evidence={
            "count": n,
            "drill_mm": round(drill, 4),
            "land_mm": round(land, 4),
            "ring_mm": round(ring, 4),
            "ipc6012_class": cls,
            "positions": positions(holes, rows),
            "declare": "the IPC-6012 class you order (accel-drc.yaml `fab: ipc6012_class:`)",
            "group": f"{what} {drill:.3f}/{land:.3f} mm",
        },
        basis={"ring": "measured", "ipc6012_class": basis},
    )
