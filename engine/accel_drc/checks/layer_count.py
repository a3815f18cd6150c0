"""``layer_count``: copper layers against the class range.

Params: ``min`` / ``max`` (int or null).  Below ``min`` is the rule's severity (the board cannot
route what the class needs); above ``max`` is only a warning (more layers than the class usually
has is a cost question, not a defect).
"""

from __future__ import annotations

from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding


@register("layer_count")
def check_layer_count(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    n = ctx.board.layer_count
    lo, hi = rule.params.get("min"), rule.params.get("max")
    rng = f"{lo if lo is not None else '…'}–{hi if hi is not None else '…'}"
    ev = {"copper_layers": [c.name for c in ctx.board.copper_layers], "class_range": [lo, hi]}
    out = []
    if lo is not None and n < lo:
        out.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{n} copper layers; the {ctx.board_class} class needs at least {lo} ({rng})",
                measured=n,
                limit=lo,
                unit="layers",
                evidence=ev,
                basis={"layer_count": "measured"},
            )
        )
    elif hi is not None and n > hi:
        out.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{n} copper layers, above the {ctx.board_class} range {rng}",
                measured=n,
                limit=hi,
                unit="layers",
                evidence=ev,
                basis={"layer_count": "measured"},
                severity=Severity.WARNING,
            )
        )
    return CheckOutcome(out, checked=1)
