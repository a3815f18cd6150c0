"""``accel-drc check --baseline OLD.json``: what changed since an earlier run.

A team adopting accel-drc on a board that already exists gets dozens of findings on day one; what
a pull request must answer is which of them it *added*.  The baseline is an earlier ``check
--json`` report (the same board before the change, e.g. on the main branch).  Each finding of
this run is matched to one of the baseline's by its identity (:func:`identity`) and marked:

``new``        no finding of the baseline has its identity;
``changed``    one has, but with another status or severity (a ``cannot_verify`` that is now a
               ``violation``: the change made it one);
``unchanged``  one has, with the same status and severity (its measured numbers may differ:
               the message is not part of the identity);

and the baseline's findings left unmatched are ``fixed``.  With ``--fail-on new`` the exit code
is 5 only for an unwaived error violation that is ``new`` or ``changed``: the board's old debt
does not fail the pull request, a regression does.

**Identity.**  The rule id, the subject (net, differential pair, layer, power rail) and the
position rounded to :data:`POSITION_GRID_MM` — never the message, which holds the measured
numbers (``Zdiff 141.5 Ω`` becomes ``163.3 Ω`` when the stack-up changes; it is the same
finding).  Several findings with one identity are matched in order, one to one.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError
from .results import CheckResult, Finding, Severity, Status

#: positions are compared on this grid (mm): a finding's position is its first item's, which
#: only moves when the item does; the grid absorbs float noise and unit round trips
POSITION_GRID_MM = 0.1

#: largest baseline accepted (bytes): a 10,000-finding report is 38 MB; json needs about 10 bytes
#: of memory per byte
MAX_BASELINE_BYTES = 256 << 20

#: the baseline states of this run's findings (the baseline's own unmatched ones are ``fixed``)
STATES = ("new", "changed", "unchanged")

#: how many fixed findings a comparison keeps in the reports (the count is always complete)
MAX_FIXED_LISTED = 1000

Identity = tuple[str, str, str, str, str, Any, Any]


def identity(
    rule: str,
    net: str | None,
    layer: str | None,
    evidence: Mapping[str, Any] | None,
    pos: tuple[float, float] | None,
) -> Identity:
    """What makes two findings the same finding: rule id, subject (net, pair, layer, rail) and
    the position rounded to :data:`POSITION_GRID_MM` (None when it has none)."""
    ev = evidence or {}

    def grid(v: float | None) -> int | None:
        return None if v is None else int(round(v / POSITION_GRID_MM))

    x, y = pos if pos is not None else (None, None)
    return (
        rule,
        net or "",
        layer or "",
        str(ev.get("pair") or ""),
        str(ev.get("rail") or ""),
        grid(x),
        grid(y),
    )


def finding_identity(f: Finding) -> Identity:
    """:func:`identity` of a finding of this run."""
    return identity(f.rule, f.net, f.layer, f.evidence, f.pos)


@dataclass(frozen=True)
class OldFinding:
    """One finding of the baseline report, as much of it as the comparison needs."""

    key: Identity
    rule: str
    severity: str
    status: str
    message: str
    net: str | None
    layer: str | None
    pos: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        """The fixed finding as the JSON report lists it."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "status": self.status,
            "message": self.message,
            "net": self.net,
            "layer": self.layer,
            "pos": None if self.pos is None else {"x": self.pos[0], "y": self.pos[1]},
        }


@dataclass
class Baseline:
    """A baseline report, read (:func:`load`)."""

    path: str
    findings: list[OldFinding]
    board_file: str | None = None
    date: str | None = None


@dataclass
class Comparison:
    """This run against a baseline: ``states[i]`` is the state of ``result.findings[i]``;
    ``fixed`` the baseline's findings no finding matched.  It rides in
    ``CheckResult.extras["baseline"]``: the JSON report writes :meth:`to_dict` there and a
    ``baseline`` key per finding, the SARIF a ``baselineState`` per result."""

    path: str
    board_file: str | None
    date: str | None
    states: list[str]
    fixed: list[OldFinding] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many findings are new, changed, unchanged and fixed."""
        out = {s: 0 for s in STATES}
        for s in self.states:
            out[s] += 1
        out["fixed"] = len(self.fixed)
        return out

    def to_dict(self) -> dict[str, Any]:
        """What the JSON report says of the baseline (the states are per finding)."""
        return {
            "file": self.path,
            "board": self.board_file,
            "date": self.date,
            "counts": self.counts(),
            "fixed": [f.to_dict() for f in self.fixed[:MAX_FIXED_LISTED]],
        }


def _text(value: Any, what: str, path: str, i: int, optional: bool = True) -> str | None:
    """A string field of baseline finding ``i`` (None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InputError(path, f"findings[{i}].{what}: expected a string, got {value!r:.60}")
    return value


def _pos(value: Any, path: str, i: int) -> tuple[float, float] | None:
    """The ``pos`` of baseline finding ``i``: None or ``{"x": mm, "y": mm}``, finite."""
    if value is None:
        return None
    try:
        x, y = float(value["x"]), float(value["y"])
    except (TypeError, KeyError, ValueError):
        raise InputError(path, f"findings[{i}].pos: expected {{x, y}} in mm or null") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InputError(path, f"findings[{i}].pos: not a finite position")
    return (x, y)


def _old_finding(raw: Any, path: str, i: int) -> OldFinding:
    """Baseline finding ``i`` read and checked (a clear error naming it, never a traceback)."""
    if not isinstance(raw, Mapping):
        raise InputError(path, f"findings[{i}]: expected an object")
    rule = _text(raw.get("rule"), "rule", path, i, optional=False) or ""
    net = _text(raw.get("net"), "net", path, i)
    layer = _text(raw.get("layer"), "layer", path, i)
    evidence = raw.get("evidence")
    if evidence is not None and not isinstance(evidence, Mapping):
        raise InputError(path, f"findings[{i}].evidence: expected an object")
    pos = _pos(raw.get("pos"), path, i)
    return OldFinding(
        key=identity(rule, net, layer, evidence, pos),
        rule=rule,
        severity=str(raw.get("severity") or ""),
        status=str(raw.get("status") or ""),
        message=str(raw.get("message") or ""),
        net=net,
        layer=layer,
        pos=pos,
    )


def load(path: str) -> Baseline:
    """Read an earlier ``check --json`` report as a baseline.

    Bad input is one line naming the file (exit 3): missing, a folder, too big, not UTF-8, not
    JSON (with its line), or no ``findings`` list."""
    if not os.path.exists(path):
        raise InputError(path, "no such file (--baseline wants an earlier `check --json` report)")
    if not os.path.isfile(path):
        raise InputError(path, "not a regular file (--baseline wants a JSON report)")
    try:
        size = os.path.getsize(path)
        if size > MAX_BASELINE_BYTES:
            raise InputError(
                path, f"{size} bytes: larger than a baseline report can be ({MAX_BASELINE_BYTES})"
            )
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"not UTF-8 (byte 0x{data[exc.start]:02x})", offset=exc.start
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"not JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from None
    except RecursionError:
        raise InputError(path, "not a report: nested too deeply") from None
    if not isinstance(doc, Mapping) or not isinstance(doc.get("findings"), list):
        raise InputError(path, "not an accel-drc JSON report: it has no 'findings' list")
    board = doc.get("board")
    board_file = board.get("file") if isinstance(board, Mapping) else None
    date = doc.get("date")
    return Baseline(
        path=path,
        findings=[_old_finding(raw, path, i) for i, raw in enumerate(doc["findings"])],
        board_file=board_file if isinstance(board_file, str) else None,
        date=date if isinstance(date, str) else None,
    )


def compare(findings: Sequence[Finding], baseline: Baseline) -> Comparison:
    """Mark each finding new, changed or unchanged against ``baseline``; the baseline's findings
    left over are the fixed ones.  Findings sharing an identity match one to one, in order."""
    pool: dict[Identity, list[OldFinding]] = {}
    for old in baseline.findings:
        pool.setdefault(old.key, []).append(old)
    states = []
    for f in findings:
        candidates = pool.get(finding_identity(f))
        if not candidates:
            states.append("new")
            continue
        old = candidates.pop(0)
        same = old.status == f.status.value and old.severity == f.severity.value
        states.append("unchanged" if same else "changed")
    left = _left(pool)
    fixed = [old for old in baseline.findings if id(old) in left]
    return Comparison(baseline.path, baseline.board_file, baseline.date, states, fixed)


def _left(pool: Mapping[Identity, list[OldFinding]]) -> set[int]:
    """The ids of the baseline findings no finding took (for :func:`compare`'s ordered list)."""
    return {id(old) for olds in pool.values() for old in olds}


def apply(result: CheckResult, baseline: Baseline) -> Comparison:
    """Compare ``result`` with ``baseline`` and attach the comparison to the result (its
    ``extras["baseline"]``, which the reports read)."""
    comparison = compare(result.findings, baseline)
    result.extras["baseline"] = comparison
    return comparison


def regressions(result: CheckResult) -> list[Finding]:
    """The unwaived error violations the baseline does not excuse: ``new``, or ``changed`` (it
    was not an error violation before).  What ``--fail-on new`` fails on."""
    comparison = result.extras.get("baseline")
    if not isinstance(comparison, Comparison):
        return result.unwaived_errors()
    return [
        f
        for f, state in zip(result.findings, comparison.states)
        if state != "unchanged" and f.severity == Severity.ERROR and f.status == Status.VIOLATION
    ]


def state_of(result: CheckResult) -> Iterable[str | None]:
    """Each finding's baseline state, in order (None throughout without a baseline)."""
    comparison = result.extras.get("baseline")
    if isinstance(comparison, Comparison):
        return comparison.states
    return [None] * len(result.findings)
