"""The JSON report: the whole result, stable keys, for CI and for other tools."""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from typing import Any

from ..references import bibliography, resolve
from ..results import CheckResult, Severity, Status, waiver_states

SCHEMA_VERSION = 1


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf, tuples or numpy scalars: convert (NaN/inf -> null)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(v) for v in value]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return _clean(value.to_dict())
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "value") and isinstance(value.value, str):
        return value.value
    return str(value)


def _default(value: Any) -> Any:
    """``json.dumps`` fallback for what the fast path meets: numpy scalars, sets, enums, typed
    report extras (``to_dict``)."""
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return list(value)
    if hasattr(value, "value") and isinstance(value.value, str):
        return value.value
    return str(value)


#: one record (a dict in a list of several) on one line: ``", "`` and ``": "`` as ``json.dumps``
#: writes without ``indent``
_RECORD = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_default)


def _record(value: Any) -> str:
    """One record through CPython's C encoder; NaN/inf anywhere in it -> null (:func:`_clean`)."""
    try:
        return _RECORD.encode(value)
    except ValueError:
        return _RECORD.encode(_clean(value))


def _indented(value: Any, depth: int, indent: int, out: list[str]) -> None:
    """Append ``value`` as ``json.dumps(indent=indent)`` writes it, except that a container in a
    list of several is one line (:func:`_record`).

    Why: the pure-Python encoder that ``indent`` forces is several times slower than the C
    encoder, and writes a line per value.  One record
    per line keeps the file readable, greppable and diffable, one finding to a line."""
    if isinstance(value, dict) and value:
        pad = "\n" + " " * (indent * (depth + 1))
        out.append("{")
        first = True
        for k, v in value.items():
            out.append(pad if first else "," + pad)
            first = False
            # a key as json writes it (an int, float, bool or None key becomes a string)
            out.append((_RECORD.encode(k) if isinstance(k, str) else _record({k: 0})[1:-4]) + ": ")
            _indented(v, depth + 1, indent, out)
        out.append("\n" + " " * (indent * depth) + "}")
    elif isinstance(value, (list, tuple)) and value:
        pad = "\n" + " " * (indent * (depth + 1))
        out.append("[")
        several = len(value) > 1
        for i, v in enumerate(value):
            out.append(pad if i == 0 else "," + pad)
            if several or not isinstance(v, (dict, list, tuple)):
                out.append(_record(v))
            else:
                _indented(v, depth + 1, indent, out)
        out.append("\n" + " " * (indent * depth) + "]")
    elif value is None or isinstance(value, (str, int, float, dict, list, tuple)):
        out.append(_record(value))
    else:  # a typed extra, a set, an enum: what json's ``default`` would make of it, indented
        _indented(_default(value), depth, indent, out)


def fast_dumps(doc: Any, indent: int | None = 2, end: str = "") -> str:
    """Serialise ``doc`` through CPython's C ``json`` encoder: NaN/inf -> null, numpy scalars,
    sets, enums and typed extras (``to_dict``) converted.  With ``indent`` the document is
    indented as ``json.dumps`` does, except that each record of a list of several (a finding, a
    rule, a SARIF result) is written on one line: the same JSON, 2.5× faster than ``indent``'s
    pure-Python encoder on a 10,000-finding report.  ``end`` is appended (a final newline)."""
    if indent is None:
        return _record(doc) + end
    out: list[str] = []
    _indented(doc, 0, indent, out)
    out.append(end)  # joined with the rest: no second copy of a 30 MB text for one newline
    return "".join(out)


def finding_dict(f: Any) -> dict[str, Any]:
    """``Finding.to_dict`` without ``dataclasses.asdict``'s deep copy (hot on big boards)."""
    return {
        "rule": f.rule,
        "check": f.check,
        "severity": f.severity.value,
        "status": f.status.value,
        "message": f.message,
        "measured": f.measured,
        "limit": f.limit,
        "unit": f.unit,
        "net": f.net,
        "layer": f.layer,
        "pos": None if f.pos is None else {"x": f.pos[0], "y": f.pos[1]},
        "items": list(f.items),
        "why": f.why,
        "source": f.source,
        "evidence": dict(f.evidence),
        "waiver": None if f.waiver is None else dict(f.waiver),
    }


def summary_counts(result: CheckResult) -> dict[str, Any]:
    sev = Counter(f.severity.value for f in result.findings)
    st = Counter(f.status.value for f in result.findings)
    chk = Counter(f.check for f in result.findings)
    errors = len(result.unwaived_errors())
    counts = result.counts()  # the count the text summary and the HTML banner show
    config_waivers, kicad_exclusions = waiver_states(result.waivers)
    compared = result.extras.get("baseline")
    return {
        "total": len(result.findings),
        # every status, waived included (schema 1); the banner's counters are the next three
        "by_severity": {s.value: sev.get(s.value, 0) for s in Severity},
        # open (violation + cannot verify) per severity: the red/amber/blue counters
        "open_by_severity": counts.open_by_severity(),
        # waived findings apart, by who set them aside: the project config's waivers, and
        # KiCad's own DRC exclusions (its .kicad_pro) with check --kicad-drc
        "waived_by_config": counts.waived,
        "excluded_in_kicad": counts.excluded,
        "by_status": {s.value: st.get(s.value, 0) for s in Status},
        "by_check": dict(sorted(chk.items())),
        "unwaived_errors": errors,
        "rules_run": len(result.rules),
        "items_checked": sum(r.checked for r in result.rules),
        # the config's waivers by state; KiCad's exclusions (--kicad-drc) apart, not as waivers
        "waivers": config_waivers,
        "kicad_exclusions": kicad_exclusions,
        "unverified_errors": len(result.unverified_errors()),
        # violations the numbers show but that rest on a default or an assumption (cannot_verify
        # with evidence.conditional), by the input they rest on
        "conditional": sum(1 for f in result.findings if f.evidence.get("conditional")),
        "conditional_on": dict(
            sorted(
                Counter(
                    k
                    for f in result.findings
                    for k in ((f.evidence.get("conditional") or {}).get("rests_on") or {})
                ).items()
            )
        ),
        "verdict": result.verdict(),  # fail | unverified | pass
        # check --baseline: how many findings are new, changed, unchanged, and fixed
        **({"baseline": compared.counts()} if hasattr(compared, "counts") else {}),
    }


def cannot_verify_groups(result: CheckResult) -> list[dict[str, Any]]:
    """``cannot_verify[]``: per group of what to declare (:func:`accel_drc.starter_config.declare_groups`)
    its title, counts, rules, the indices of its findings in ``findings[]`` and
    ``declare_yaml``, the accel-drc.yaml block for exactly those findings."""
    from ..starter_config import declare_groups

    return [
        {
            "declare": g.title,
            "count": len(g.findings),
            "errors": g.errors,
            "rules": dict(g.rules),
            "findings": list(g.findings),
            "declare_yaml": g.yaml,
        }
        for g in declare_groups(result.findings)
    ]


def _findings(result: CheckResult, ids: Any) -> list[dict[str, Any]]:
    """Every finding as a record; with ``check --baseline`` each says ``"baseline"``: ``new``,
    ``changed`` or ``unchanged`` (:mod:`accel_drc.baseline`)."""
    states = getattr(result.extras.get("baseline"), "states", None)
    if states is None:
        return [{**finding_dict(f), "references": ids(f.source)} for f in result.findings]
    return [
        {**finding_dict(f), "references": ids(f.source), "baseline": state}
        for f, state in zip(result.findings, states)
    ]


def to_dict(result: CheckResult) -> dict[str, Any]:
    c = result.classification
    per_rule = Counter(f.rule for f in result.findings)
    refs = result.references
    ids = functools.lru_cache(maxsize=None)(lambda s: [r.id for r in resolve(refs, s)])
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
                {
                    "what": e.what,
                    "value": e.value,
                    "votes": dict(e.votes),
                    "note": e.note,
                    "source": e.source,
                    "references": ids(e.source),
                }
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
                "references": ids(r.rule.source),
                "pack": r.rule.pack,
                "checked": r.checked,
                "findings": sum(
                    n
                    for rid, n in per_rule.items()
                    if rid == r.rule.id or rid.startswith(r.rule.id + ".")
                ),
            }
            for r in result.rules
        ],
        "coverage": result.coverage or {"pairs": [], "summary": {}},
        "findings": _findings(result, ids),
        # the cannot-verify findings grouped by what to declare, each with its accel-drc.yaml block
        "cannot_verify": cannot_verify_groups(result),
        "waivers": result.waivers,
        "extras": result.extras,
        # the full citation of every [id] a source above cites (rules/references.yaml)
        "references": bibliography(
            refs,
            [r.rule.source for r in result.rules]
            + [e.source for e in c.evidence]
            + [f.source for f in result.findings],
        ),
    }
    return doc


def dumps(result: CheckResult) -> str:
    return fast_dumps(to_dict(result), end="\n")


def write(path: str, result: CheckResult) -> None:
    from ..hostile import write_text

    write_text(path, dumps(result))  # atomic (temp file + rename); '-' is stdout
