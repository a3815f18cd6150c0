"""The readable summary ``accel-drc check`` prints, and the ``accel-drc rules`` table."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from ..classify import explain
from ..hostile import terminal
from ..packs import GENERAL
from ..results import KICAD_ORIGIN, CheckResult, Finding, Severity, Status, waiver_states

_SEV_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_ST_ORDER = {Status.VIOLATION: 0, Status.CANNOT_VERIFY: 1, Status.WAIVED: 2}


def worst(findings: Sequence[Finding], n: int = 10) -> list[Finding]:
    """Most serious first (unwaived errors, then warnings; violations before cannot-verify), one
    per rule before a second of the same rule, so ten laminate lines do not hide a Tg finding."""
    ranked = sorted(
        findings,
        key=lambda f: (_ST_ORDER[f.status] == 2, _SEV_ORDER[f.severity], _ST_ORDER[f.status]),
    )
    first, rest, seen = [], [], set()
    for f in ranked:
        (rest if f.rule in seen else first).append(f)
        seen.add(f.rule)
    key = {id(f): i for i, f in enumerate(ranked)}
    head = first[:n]
    if len(head) < n:
        head += rest[: n - len(head)]
    return sorted(head, key=lambda f: key[id(f)])


def _fmt(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def summary(result: CheckResult, top: int = 10) -> str:
    b = result.board_summary
    size = b.get("size_mm")
    size_txt = f", {size[0]:.1f} × {size[1]:.1f} mm" if size else ""
    lines = [
        f"accel-drc {result.tool_version}: {os.path.basename(result.board_file)} "
        f"({b.get('copper_layers')} copper layers{size_txt})",
        f"class: {explain(result.classification)}",
    ]
    if result.coverage_line():
        lines.append(result.coverage_line())
    checked = sum(r.checked for r in result.rules)
    lines.append(f"rules: {len(result.rules)} run, {checked} items checked")
    kicad = result.extras.get("kicad_drc")
    if isinstance(kicad, Mapping):  # check --kicad-drc
        lines.append(kicad_line(result, kicad))
    phrases = [p for _, _, p in result.count_phrases()]
    lines.append("findings: " + (" · ".join(phrases) if phrases else "none"))
    shown = [f for f in worst(result.findings, top) if f.status != Status.WAIVED]
    if shown:
        lines.append("worst:")
        for f in shown:
            tag = f"{f.severity.value.upper():7} {'' if f.status == Status.VIOLATION else '(' + f.status.value.replace('_', ' ') + ') '}"
            lines.append(f"  {tag}{f.rule}: {f.message}")
        rest = len([f for f in result.findings if f.status != Status.WAIVED]) - len(shown)
        if rest > 0:
            lines.append(f"  … and {rest} more (see --json / --html)")
    config, _kicad = waiver_states(result.waivers)
    if config:  # KiCad's exclusions are on the kicad drc line, not waivers of the config
        lines.append("waivers: " + ", ".join(f"{n} {k}" for k, n in sorted(config.items())))
    for w in result.waivers:
        if w["state"] != "applied":
            kicad = w.get("origin") == KICAD_ORIGIN
            where = f" (line {w['line']})" if w.get("line") else ""
            what = "KiCad exclusion" if kicad else w["state"]
            lines.append(f"  {'stale ' if kicad else ''}{what}: {w['rule']}{where}: {w['reason']}")
    from ..starter_config import hint_line

    hint = hint_line(result.findings, result.board_file)  # what `accel-drc init` would write
    if hint:
        lines.append(hint)
    lines.append("verdict: " + verdict_line(result))  # last: the one line scripts read
    # net names, messages and reasons are the board's and the config's text: a name holding a
    # newline and ESC[8m could forge a "verdict: PASS" line, so controls are shown escaped
    return "\n".join(terminal(line) for line in lines)


def kicad_line(result: CheckResult, kicad: Mapping[str, Any]) -> str:
    """``kicad drc: KiCad 9.0.8: 7 violations, 1 unconnected item, 0 parity; 8 excluded in KiCad``."""
    c = kicad.get("counts") or {}
    excl = result.counts().excluded
    return (
        f"kicad drc: KiCad {kicad.get('kicad_version')} (kicad-cli): "
        f"{c.get('violations', 0)} violations, {c.get('unconnected_items', 0)} unconnected, "
        f"{c.get('schematic_parity', 0)} parity; {excl} excluded in KiCad"
    )


def _params(p: Mapping[str, Any]) -> str:
    parts = []
    for k, v in p.items():
        if isinstance(v, Mapping):
            v = "{" + ", ".join(f"{a}: {_fmt(b)}" for a, b in v.items()) + "}"
        parts.append(f"{k}={_fmt(v)}")
    return ", ".join(parts)


def _wrapped(text: str, **kw: Any) -> list[str]:
    """``text`` wrapped to 100 columns as lines (``textwrap`` turns the text's own newlines
    into spaces, so each line is one the wrapping made; each is then shown escaped)."""
    return [terminal(line) for line in textwrap.fill(text, 100, **kw).split("\n")]


def rules_table(rules: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for r in rules:
        out.append(terminal(f"{r['id']}  [{r['check']}, {r['severity']}]  {_params(r['params'])}"))
        out += _wrapped(r["why"], initial_indent="    why: ", subsequent_indent="         ")
        out += _wrapped(
            r["source"],
            initial_indent="    source: ",
            subsequent_indent="            ",
            break_long_words=False,
            break_on_hyphens=False,  # keeps a cited [id] such as [isola-datasheets] whole
        )
    out.append(f"{len(rules)} rules")
    return "\n".join(out)


def references_list(cited: Mapping[str, Mapping[str, Any]]) -> str:
    """The bibliography: ``[id] full citation`` for every reference the sources above cite."""
    if not cited:
        return ""
    out = [f"References ({len(cited)}):"]
    for rid, ref in cited.items():
        out += _wrapped(
            f"[{rid}] {ref['citation']}",
            initial_indent="  ",
            subsequent_indent="      ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(out)


def class_note(result: CheckResult) -> str:
    """What the verdict owes to an auto-detected class: how many results rest on it (conditional
    until the class is declared), or that every class-dependent result holds under every class."""
    cls = result.classification
    if cls.source != "auto":
        return ""
    if cls.board_class == GENERAL:
        return (
            "not an accelerator board (auto-detected): the class-specific rules did not run; "
            "declare `class:` in accel-drc.yaml or --class to apply them"
        )
    n = sum(
        1
        for f in result.findings
        if "class" in ((f.evidence.get("conditional") or {}).get("rests_on") or {})
    )
    head = f"class {cls.board_class} was auto-detected ({cls.confidence:.0%})"
    if n:
        return (
            f"{head}: {n} result{'s' if n != 1 else ''} rest{'' if n != 1 else 's'} on it and "
            "stay conditional until you declare `class:` in accel-drc.yaml or --class"
        )
    return f"{head}: no violation depends on it (declare `class:` to make it a fact)"


def verdict_line(result: CheckResult) -> str:
    """``FAIL (…)``, ``NOT VERIFIED (…)`` or ``PASS (…)``: an error-severity rule that could not
    be checked is never summed up as a pass, though it does not fail the exit code.  An
    auto-detected class is named with what rests on it."""
    line = _verdict_head(result)
    note = class_note(result)
    return f"{line}; {note}" if note else line


def _verdict_head(result: CheckResult) -> str:
    v = result.verdict()
    if v == "fail":
        n = len(result.unwaived_errors())
        return f"FAIL ({n} unwaived error violation{'s' if n != 1 else ''})"
    if v == "unverified" and not result.unverified_errors():
        return (
            "NOT VERIFIED (no rule checked anything: every rule is disabled or found nothing to "
            "examine; exit code 0)"
        )
    if v == "unverified":
        n = len(result.unverified_errors())
        return (
            f"NOT VERIFIED (no error violation, but {n} error-severity check"
            f"{'s' if n != 1 else ''} could not be verified: declare what "
            f"{'they name' if n != 1 else 'it names'}; exit code 0)"
        )
    return "PASS (no unwaived error violation, nothing unverified at error severity)"
