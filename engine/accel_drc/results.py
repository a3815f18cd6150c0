"""Rules, findings and the result of a run: the contract between checks, waivers and reports.

Every report (text, JSON, JUnit, SARIF, HTML, editor markers) is a pure function of a
:class:`CheckResult`; nothing downstream re-derives a verdict.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Status(str, enum.Enum):
    VIOLATION = "violation"
    CANNOT_VERIFY = "cannot_verify"  # the board does not declare what the rule needs: never a pass
    WAIVED = "waived"


#: packs of the pipeline's pseudo-rules (assumed signal types, unmatched config entries, pairs of
#: unknown interface): they report on the run, they check nothing on the board
_PSEUDO_PACKS = frozenset({"signals", "config", "coverage"})


@dataclass(frozen=True)
class Rule:
    """One rule from a pack: a check kind plus its limits.

    ``params`` holds the check-specific limits exactly as the YAML gives them (after defaults and
    project overrides); the check documents the keys it reads.  ``signal`` names the signal type a
    per-signal rule applies to.
    """

    id: str  # stable, e.g. "training.laminate_df.nvlink4"
    check: str  # check kind: layer_count, tg, copper_weight, laminate_df, foil, impedance, via_stub, pdn_impedance
    severity: Severity
    params: Mapping[str, Any]
    why: str
    source: str
    pack: str = ""
    signal: str | None = None
    title: str = ""


@dataclass(frozen=True)
class Finding:
    """One thing a reviewer must look at.  ``measured``/``limit`` are in ``unit``; ``pos`` is in
    board mm.  ``evidence`` carries the check's details (dielectric name, stub lengths, …)."""

    rule: str
    check: str
    severity: Severity
    status: Status
    message: str
    measured: Any = None
    limit: Any = None
    unit: str = ""
    net: str | None = None
    layer: str | None = None
    pos: tuple[float, float] | None = None
    items: tuple[str, ...] = ()
    why: str = ""
    source: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    waiver: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["severity"] = self.severity.value
        d["status"] = self.status.value
        d["pos"] = None if self.pos is None else {"x": self.pos[0], "y": self.pos[1]}
        d["items"] = list(self.items)
        d["evidence"] = dict(self.evidence)
        return d


@dataclass(frozen=True)
class Evidence:
    """One piece of classification evidence and how it weighed."""

    what: str  # "copper layers", "NVLink nets", …
    value: Any  # what the board has
    votes: Mapping[str, float]  # class -> weight this evidence adds
    note: str = ""
    source: str = ""


@dataclass(frozen=True)
class Classification:
    board_class: str  # training | inference | edge
    confidence: float  # 0..1
    evidence: tuple[Evidence, ...] = ()
    source: str = "auto"  # auto | config | cli
    scores: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleRun:
    """A rule that ran, and how many items it examined (so a clean rule is visibly a pass)."""

    rule: Rule
    checked: int = 0


#: the order a reviewer acts on: error violations, error cannot-verify, warnings, info; waived last
_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_STATUS_RANK = {Status.VIOLATION: 0, Status.CANNOT_VERIFY: 1, Status.WAIVED: 2}


def rank(f: Finding) -> tuple[int, int, int]:
    """Sort key that leads with what matters (a stable sort keeps each check's own order)."""
    return (f.status == Status.WAIVED, _SEVERITY_RANK[f.severity], _STATUS_RANK[f.status])


@dataclass
class CheckResult:
    """Everything one ``accel-drc check`` produced."""

    board_file: str
    board_sha256: str
    classification: Classification
    findings: list[Finding]
    rules: list[RuleRun]
    rule_packs: list[dict[str, str]]  # [{name, version, file}]
    waivers: list[dict[str, Any]] = field(default_factory=list)  # applied / expired / stale
    extras: dict[str, Any] = field(default_factory=dict)  # rails curves, stub histograms, …
    board_summary: dict[str, Any] = field(default_factory=dict)
    date: str = ""
    tool_version: str = ""
    #: the reference library the sources cite by ``[id]`` (``references.Reference`` by id);
    #: reports expand the ids into full citations.  Empty: sources are shown as written.
    references: Mapping[str, Any] = field(default_factory=dict)
    #: what high-speed nets were seen and which rules examined them (``coverage.build``):
    #: ``{"pairs": [{name, nets, interface, basis, checks_run, not_checked_because}], "summary"}``
    coverage: dict[str, Any] = field(default_factory=dict)

    def unwaived_errors(self) -> list[Finding]:
        return [
            f
            for f in self.findings
            if f.severity == Severity.ERROR and f.status == Status.VIOLATION
        ]

    def unverified_errors(self) -> list[Finding]:
        """Error-severity findings that could not be checked (the board does not declare what
        the rule needs): not violations, but not passes either."""
        return [
            f
            for f in self.findings
            if f.severity == Severity.ERROR and f.status == Status.CANNOT_VERIFY
        ]

    def coverage_line(self) -> str:
        """One line: "pairs: 42 — 8 checked, 30 of unknown interface, 4 breakouts" (empty when
        no coverage was computed), so nothing high-speed passes without being counted."""
        return str((self.coverage or {}).get("summary", {}).get("line", ""))

    def count_phrases(self) -> list[tuple[str, int, str]]:
        """Per severity present: ``(severity, n, "11 errors: 10 violations, 1 cannot verify")``.

        The counters read as sentences, in the order a reviewer acts on them; a severity with
        no finding is left out, and a breakdown of one status only is not repeated."""
        out = []
        for sev in Severity:
            mine = [f for f in self.findings if f.severity == sev]
            if not mine:
                continue
            n = len(mine)
            word = sev.value if sev == Severity.INFO or n == 1 else sev.value + "s"
            parts = []
            for st, one, many in (
                (Status.VIOLATION, "violation", "violations"),
                (Status.CANNOT_VERIFY, "cannot verify", "cannot verify"),
                (Status.WAIVED, "waived", "waived"),
            ):
                k = sum(1 for f in mine if f.status == st)
                if k:
                    parts.append(f"{k} {one if k == 1 else many}")
            out.append((sev.value, n, f"{n} {word}: " + ", ".join(parts)))
        return out

    def verdict(self) -> str:
        """``fail``: an unwaived error violation (exit 5).  ``unverified``: none, but an
        error-severity rule could not be checked — exit 0 as the issue's kicad-cli convention
        says, yet never printed as a pass (unknown is not pass).  ``pass``: neither."""
        if self.unwaived_errors():
            return "fail"
        if self.unverified_errors() or self.nothing_checked():
            return "unverified"
        return "pass"

    def nothing_checked(self) -> bool:
        """Whether no rule of a rule pack examined anything (every rule disabled, say): a run
        that checked nothing found nothing wrong, which is not a pass."""
        return not any(r.checked for r in self.rules if r.rule.pack not in _PSEUDO_PACKS)
