"""The JSON report: the whole result, stable keys, for CI and for other tools."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from typing import Any

from ..results import CheckResult, Severity, Status

SCHEMA_VERSION = 1


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf, tuples or numpy scalars: convert (NaN/inf -> null)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):
        return value.value
    return str(value)


def summary_counts(result: CheckResult) -> dict[str, Any]:
    sev = Counter(f.severity.value for f in result.findings)
    st = Counter(f.status.value for f in result.findings)
    chk = Counter(f.check for f in result.findings)
    errors = len(result.unwaived_errors())
    return {
        "total": len(result.findings),
        "by_severity": {s.value: sev.get(s.value, 0) for s in Severity},
        "by_status": {s.value: st.get(s.value, 0) for s in Status},
        "by_check": dict(sorted(chk.items())),
        "unwaived_errors": errors,
        "rules_run": len(result.rules),
        "items_checked": sum(r.checked for r in result.rules),
        "waivers": dict(Counter(w["state"] for w in result.waivers)),
        "verdict": "fail" if errors else "pass",
    }


def to_dict(result: CheckResult) -> dict[str, Any]:
    c = result.classification
    per_rule = Counter(f.rule for f in result.findings)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "accel-drc", "version": result.tool_version},
        "date": result.date,
        "board": {"file": result.board_file, "sha256": result.board_sha256, **result.board_summary},
        "classification": {
            "class": c.board_class,
            "confidence": c.confidence,
            "source": c.source,
            "scores": dict(c.scores),
            "evidence": [
                {"what": e.what, "value": e.value, "votes": dict(e.votes), "note": e.note, "source": e.source}
                for e in c.evidence
            ],
        },
        "summary": summary_counts(result),
        "rule_packs": result.rule_packs,
        "rules": [
            {
                "id": r.rule.id,
                "check": r.rule.check,
                "severity": r.rule.severity.value,
                "signal": r.rule.signal,
                "params": dict(r.rule.params),
                "why": r.rule.why,
                "source": r.rule.source,
                "pack": r.rule.pack,
                "checked": r.checked,
                "findings": sum(n for rid, n in per_rule.items() if rid == r.rule.id or rid.startswith(r.rule.id + ".")),
            }
            for r in result.rules
        ],
        "findings": [f.to_dict() for f in result.findings],
        "waivers": result.waivers,
        "extras": result.extras,
    }
    return _clean(doc)


def dumps(result: CheckResult) -> str:
    return json.dumps(to_dict(result), indent=2, ensure_ascii=False) + "\n"


def write(path: str, result: CheckResult) -> None:
    text = dumps(result)
    if path == "-":
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
