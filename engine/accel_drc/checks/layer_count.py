"""``layer_count``: copper layers against the class range.

What it checks:
    The number of copper layers of the board (measured from the board file) against the class
    range ``min``–``max``.
Why:
    An accelerator board routes hundreds of high-speed lanes and several power planes; below the
    class minimum it cannot route what the class needs (the rule's severity).  Above the maximum
    is only a warning: more layers than the class usually has is a cost question, not a defect.
Parameters:
    ``min`` (integer or null): fewest copper layers;
    ``max`` (integer or null): most copper layers (over it: a warning).
Cannot verify when:
    Never: the layer count is measured.
Example:
    ``{check: layer_count, severity: error, params: {min: 20, max: null}}`` (training): a 2-layer
    board fails with "2 copper layers; the training class needs at least 20 (20–…)".
"""

from __future__ import annotations

from typing import Any

from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

KIND = "layer_count"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["min", "max"],
    "properties": {
        "min": {"type": ["integer", "null"], "minimum": 1},
        "max": {"type": ["integer", "null"], "minimum": 1},
    },
}


@register(KIND)
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
