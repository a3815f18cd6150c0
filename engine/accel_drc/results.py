"""Rules, findings and the result of a run: the contract between checks, waivers and reports.

Every report (text, JSON, JUnit, SARIF, HTML, editor markers) is a pure function of a
:class:`CheckResult`; nothing downstream re-derives a verdict.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
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


#: ``waiver["origin"]`` of a finding KiCad's own exclusion list (the ``.kicad_pro``) set aside
KICAD_ORIGIN = "kicad"


def waiver_states(waivers: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """(the project config's waivers by state, KiCad's exclusions by state): the waiver rows of
    a run counted apart by origin, as every report lists them (an exclusion set in KiCad is not
    a waiver of the config)."""
    config: dict[str, int] = {}
    kicad: dict[str, int] = {}
    for w in waivers:
        into = kicad if w.get("origin") == KICAD_ORIGIN else config
        state = str(w.get("state"))
        into[state] = into.get(state, 0) + 1
    return config, kicad


def excluded_in_kicad(f: Finding) -> bool:
    """Whether a waived finding is one of KiCad's DRC exclusions (``check --kicad-drc``), not a
    waiver of the project config."""
    return f.status == Status.WAIVED and bool(f.waiver) and f.waiver.get("origin") == KICAD_ORIGIN


@dataclass(frozen=True)
class FindingCounts:
    """How many findings, counted once for every report.

    ``open``: severity -> status -> n over the findings still to act on (violation, cannot
    verify); ``waived``: set aside by a waiver of the project config; ``excluded``: set aside
    by an exclusion in KiCad (its ``.kicad_pro``); ``total``: all of them."""

    open: Mapping[str, Mapping[str, int]]
    waived: int
    excluded: int
    total: int

    def open_by_severity(self) -> dict[str, int]:
        """Severity -> open findings (violation + cannot verify), every severity present."""
        return {s.value: sum(self.open[s.value].values()) for s in Severity}

    def phrases(self) -> list[tuple[str, int, str]]:
        """See :meth:`CheckResult.count_phrases`."""
        out = []
        for sev in Severity:
            by = self.open[sev.value]
            n = sum(by.values())
            if not n:
                continue
            word = sev.value if sev == Severity.INFO or n == 1 else sev.value + "s"
            parts = []
            for st, one, many in (
                (Status.VIOLATION, "violation", "violations"),
                (Status.CANNOT_VERIFY, "cannot verify", "cannot verify"),
            ):
                k = by[st.value]
                if k:
                    parts.append(f"{k} {one if k == 1 else many}")
            out.append((sev.value, n, f"{n} {word}: " + ", ".join(parts)))
        if self.waived:
            out.append(("waived", self.waived, f"{self.waived} waived"))
        if self.excluded:
            out.append(
                ("excluded", self.excluded, f"{self.excluded} excluded in KiCad (.kicad_pro)")
            )
        return out


def count_findings(findings: Sequence[Finding]) -> FindingCounts:
    """Count ``findings`` as :class:`FindingCounts` (one pass)."""
    open_: dict[str, dict[str, int]] = {
        s.value: {Status.VIOLATION.value: 0, Status.CANNOT_VERIFY.value: 0} for s in Severity
    }
    waived = excluded = 0
    for f in findings:
        if f.status == Status.WAIVED:
            if excluded_in_kicad(f):
                excluded += 1
            else:
                waived += 1
        else:
            open_[f.severity.value][f.status.value] += 1
    return FindingCounts(open_, waived, excluded, len(findings))


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

    def counts(self) -> FindingCounts:
        """The one count of the findings every report shows (text, Markdown, JSON, HTML):
        the open ones (violation, cannot verify) per severity, and the waived ones apart, by
        who set them aside (see :func:`count_findings`)."""
        return count_findings(self.findings)

    def count_phrases(self) -> list[tuple[str, int, str]]:
        """The counters as sentences: per severity with an open finding,
        ``(severity, n, "11 errors: 10 violations, 1 cannot verify")``, then
        ``("waived", n, "2 waived")`` (by the project config) and
        ``("excluded", n, "8 excluded in KiCad (.kicad_pro)")`` when there are any.

        The severity counters hold the open findings only: a waived finding or one excluded in
        KiCad was set aside on purpose and is not an error left to fix, so it has a counter of
        its own instead of swelling the red one (``8 waived`` inside ``9 errors`` for one real
        error).  In the order a reviewer acts on them; a severity with no open finding is left
        out, and a breakdown of one status only is not repeated."""
        return self.counts().phrases()

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
