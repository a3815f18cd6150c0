"""The verdict of a run in one line (``FAIL (…)``, ``NOT VERIFIED (…)``, ``PASS (…)``), with what
it owes to an auto-detected class: shared by every writer and the starter config's header, so
it depends on the result alone (no writer imports another for it)."""

from __future__ import annotations

from ..packs import GENERAL
from ..results import CheckResult


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
