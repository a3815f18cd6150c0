"""The HTML report's cannot-verify groups and its class sentence.

Each cannot-verify group is one group of :func:`accel_drc.starter_config.declare_groups`, the
same grouping (and the same ready-to-paste ``accel-drc.yaml`` block) as the JSON report's
``cannot_verify[]`` and the Markdown report, so the three reports never disagree about what to
declare.  Kept apart from :mod:`accel_drc.report.html` so that module only wires the context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..classify import NOT_ACCELERATOR
from ..packs import GENERAL
from ..results import Classification, Finding
from ..starter_config import declare_groups

#: findings listed under a group (the rest are one "… and N more" line; the table has them all)
GROUP_ITEMS = 12


def cannot_verify_groups(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """Per group of what to declare: its title, the number of findings its block resolves,
    error count, rules, the first :data:`GROUP_ITEMS` findings (index into ``findings``) and
    ``yaml``, the block for exactly its findings (the JSON report's ``declare_yaml``).

    ``findings`` must be the run's own list (``result.findings``): the groups of one run are
    computed once and shared with the JSON and Markdown writers."""
    out = []
    for g in declare_groups(findings):
        out.append(
            {
                "declare": g.title,
                "count": len(g.findings),
                "errors": g.errors,
                "rules": list(g.rules),
                "items": [_item(i, findings[i]) for i in g.findings[:GROUP_ITEMS]],
                "yaml": g.yaml,
            }
        )
    return out


def _item(i: int, f: Finding) -> dict[str, Any]:
    """One listed finding: its index (the link into the findings table) and where it is."""
    return {"i": i, "message": f.message, "layer": f.layer, "net": f.net}


def not_accelerator(cls: Classification) -> str | None:
    """Why the board is not an accelerator board (the classifier's evidence, e.g. "2 copper
    layers; no fast interface; …") when its class is :data:`GENERAL`, else ``None``.  A
    ``general`` class is a finding of absence, not a vote won, so the report states it as such
    rather than as "classified as general with confidence 1.00"."""
    if cls.board_class != GENERAL:
        return None
    why = next((e for e in cls.evidence if e.what == NOT_ACCELERATOR), None)
    return str(why.value) if why is not None else ""
