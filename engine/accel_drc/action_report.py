"""What the GitHub Action says about a run over several boards (``action/run.sh`` runs this).

``python -m accel_drc.action_report rollup …`` prints the job summary's roll-up: one table row
per board (verdict; unwaived errors, warnings and findings that could not be verified; with a
baseline the new and fixed counts; where its reports are: the run's artifact and the board's
folder in it), then what each baseline says is fixed.

``python -m accel_drc.action_report annotate …`` prints the workflow commands that put findings
on the pull request: ``::error file=…,line=…,title=…::message`` (``warning``, ``notice``), the
first :data:`ANNOTATIONS_PER_BOARD` of each board, most serious first (a finding on no item
annotates the board file itself).  GitHub shows only ten of each kind per step; the rest are in
the log, the summary and the reports.

Board names and finding text are the committer's data: a workflow command's data and property
values are escaped as the runner unescapes them (``%``, CR, LF; in properties also ``:`` and
``,``), so one finding is one command however its net is named, and the Markdown is escaped as
the per-board summary is (:func:`accel_drc.report.markdown.esc`).

Arguments after ``--`` are triples ``BOARD FOLDER EXIT`` in the order the boards were checked:
the board's path as checked, the folder holding its ``findings.json`` (and ``findings.sarif``)
and accel-drc's exit code for it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .report.markdown import code, esc, shorten

#: findings annotated per board, most serious first
ANNOTATIONS_PER_BOARD = 50
#: longest annotation message (characters; cut at a word boundary)
MESSAGE_LIMIT = 1000
#: fixed findings listed per board in the roll-up (the count is complete)
FIXED_LISTED = 20

_ICON = {"fail": "❌", "unverified": "⚠️", "pass": "✅", "error": "💥", "usage": "💥"}
_WORD = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}
#: a finding's annotation command: (status, severity) -> command
_LEVEL = {
    ("violation", "error"): "error",
    ("violation", "warning"): "warning",
    ("cannot_verify", "error"): "warning",
    ("cannot_verify", "warning"): "notice",
}
#: annotation order: errors, then warnings; violations before what could not be verified
_RANK = {
    ("violation", "error"): 0,
    ("violation", "warning"): 1,
    ("cannot_verify", "error"): 2,
    ("cannot_verify", "warning"): 3,
}


def cmd_data(text: str) -> str:
    """``text`` as a workflow command's data (after the second ``::``): ``%``, CR, LF escaped,
    as the runner unescapes them (actions/runner ``ActionCommand``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def cmd_prop(text: str) -> str:
    """``text`` as a workflow command's property value: also ``:`` and ``,`` escaped."""
    return cmd_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass
class Board:
    """One checked board: its path as checked, its report folder and accel-drc's exit code;
    ``doc`` its JSON report (None when accel-drc wrote none)."""

    path: str
    folder: str
    exit_code: int
    doc: Mapping[str, Any] | None

    @classmethod
    def read(cls, path: str, folder: str, exit_code: str) -> Board:
        """The board's JSON report read from ``folder`` (None if absent or unreadable)."""
        doc = _read_json(os.path.join(folder, "findings.json"))
        try:
            rc = int(exit_code)
        except ValueError:
            rc = 2
        return cls(path, folder, rc, doc if isinstance(doc, Mapping) else None)

    @property
    def findings(self) -> list[Mapping[str, Any]]:
        """The report's findings (none without a report)."""
        found = (self.doc or {}).get("findings")
        return [f for f in found if isinstance(f, Mapping)] if isinstance(found, list) else []

    @property
    def baseline(self) -> Mapping[str, Any] | None:
        """What ``check --baseline`` recorded (counts, fixed findings), or None."""
        extras = (self.doc or {}).get("extras")
        base = extras.get("baseline") if isinstance(extras, Mapping) else None
        return base if isinstance(base, Mapping) else None


def _read_json(path: str) -> Any:
    """A JSON file, or None when it is missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None


def _count(findings: Sequence[Mapping[str, Any]], status: str, *severities: str) -> int:
    return sum(1 for f in findings if f.get("status") == status and f.get("severity") in severities)


def _verdict_cell(board: Board) -> str:
    """The board's verdict, or why it has none (accel-drc's exit code)."""
    verdict = ((board.doc or {}).get("summary") or {}).get("verdict")
    if board.doc is None or verdict not in _WORD:
        return f"{_ICON['error']} error (exit {board.exit_code})"
    return f"{_ICON[verdict]} {_WORD[verdict]}"


def _report_cell(board: Board, run_url: str | None, artifact: str | None, run_dir: str) -> str:
    """Where the board's HTML report is: the run's artifact (a link to the run's artifacts) and
    the board's folder inside it."""
    if not artifact or not os.path.isfile(os.path.join(board.folder, "report.html")):
        return "–"
    inside = f"{os.path.relpath(board.folder, run_dir)}/report.html".replace(os.sep, "/")
    name = esc(artifact, 100)
    head = f"[{name}]({run_url}#artifacts)" if run_url else name
    return f"{head} › {code(inside, 100)}"


def rollup(
    boards: Sequence[Board],
    verdict: str,
    exit_code: int,
    run_url: str | None = None,
    artifact: str | None = None,
    run_dir: str = ".",
) -> str:
    """The roll-up over all boards as Markdown (see the module's docstring)."""
    word = _WORD.get(verdict, verdict.upper())
    icon = _ICON.get(verdict, _ICON["error"])
    n = len(boards)
    out = [f"## {icon} accel-drc: {word} ({n} board{'s' if n != 1 else ''}, exit {exit_code})", ""]
    based = any(b.baseline for b in boards)
    head = ["board", "verdict", "errors", "warnings", "cannot verify"]
    head += ["new", "fixed"] if based else []
    out += ["| " + " | ".join([*head, "report"]) + " |", "|" + "---|" * (len(head) + 1)]
    for b in boards:
        f = b.findings
        cells = [esc(b.path, 200), _verdict_cell(b)]
        if b.doc is None:
            cells += ["–"] * (len(head) - 2)
        else:
            cells += [
                str(_count(f, "violation", "error")),
                str(_count(f, "violation", "warning")),
                str(_count(f, "cannot_verify", "error", "warning")),
            ]
            if based:
                counts = (b.baseline or {}).get("counts") or {}
                new = (counts.get("new", 0) + counts.get("changed", 0)) if b.baseline else "–"
                cells += [str(new), str(counts.get("fixed", "–"))]
        cells.append(_report_cell(b, run_url, artifact, run_dir))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if artifact:
        where = (
            f"[this run's artifacts]({run_url}#artifacts)" if run_url else "this run's artifacts"
        )
        out += [
            f"Reports: the artifact {code(artifact, 100)} in {where}, a folder per board "
            "(report.html, findings.json, findings.sarif, junit.xml).",
            "",
        ]
    for b in boards:
        out += _fixed_lines(b)
    return "\n".join(out).rstrip() + "\n"


def _fixed_lines(board: Board) -> list[str]:
    """What the board's baseline lists as fixed, as Markdown lines (bounded)."""
    base = board.baseline
    fixed = [f for f in (base or {}).get("fixed") or [] if isinstance(f, Mapping)]
    total = ((base or {}).get("counts") or {}).get("fixed", len(fixed))
    if not fixed:
        return []
    out = [f"**Fixed since the baseline** in {esc(board.path, 200)} ({total}):", ""]
    for f in fixed[:FIXED_LISTED]:
        subject = f.get("net") or f.get("layer")
        where = f" {code(subject, 80)}" if subject else ""
        out.append(f"- {code(f.get('rule', ''), 80)}{where}: {esc(f.get('message', ''), 200)}")
    if total > FIXED_LISTED:
        out.append(f"- … and {total - FIXED_LISTED} more (findings.json: extras.baseline.fixed)")
    out.append("")
    return out


def _lines(folder: str, count: int) -> list[int | None]:
    """Each finding's line in the board file, from the SARIF written beside the JSON (its
    results are the findings, in order); None where it has none."""
    doc = _read_json(os.path.join(folder, "findings.sarif"))
    try:
        results = doc["runs"][0]["results"]
        lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    except (TypeError, KeyError, IndexError):
        return [None] * count
    if len(lines) != count:
        return [None] * count
    return [n if isinstance(n, int) and n > 1 else None for n in lines]


def annotations(board: Board, limit: int = ANNOTATIONS_PER_BOARD) -> list[str]:
    """The board's annotation commands: its first ``limit`` unwaived errors and warnings (most
    serious first; with a baseline, new and changed ones before unchanged ones), then a notice
    of how many more there are."""
    findings = board.findings
    lines = _lines(board.folder, len(findings))
    ranked = sorted(
        (
            (_RANK[key], f.get("baseline") == "unchanged", i)
            for i, f in enumerate(findings)
            if (key := (f.get("status"), f.get("severity"))) in _RANK
        )
    )
    out = []
    for _, _, i in ranked[:limit]:
        f = findings[i]
        level = _LEVEL[(f.get("status"), f.get("severity"))]
        props = [f"file={cmd_prop(board.path)}"]
        if f.get("items") and lines[i]:
            props.append(f"line={lines[i]}")
        state = f.get("baseline")
        title = f"accel-drc {f.get('rule', '')}" + (
            f" ({state})" if state in ("new", "changed") else ""
        )
        props.append(f"title={cmd_prop(shorten(str(title), 200))}")
        message = str(f.get("message", ""))
        if f.get("status") == "cannot_verify":
            message += " [cannot verify]"
        out.append(f"::{level} {','.join(props)}::{cmd_data(shorten(message, MESSAGE_LIMIT))}")
    if len(ranked) > limit:
        more = f"{len(ranked) - limit} more findings are not annotated (the first {limit} are): "
        more += "see the job summary and the report"
        out.append(f"::notice file={cmd_prop(board.path)},title=accel-drc::{cmd_data(more)}")
    return out


def _boards(triples: Sequence[str]) -> list[Board]:
    if len(triples) % 3:
        raise SystemExit("accel-drc action_report: boards come as BOARD FOLDER EXIT triples")
    return [Board.read(*triples[i : i + 3]) for i in range(0, len(triples), 3)]


def main(argv: Sequence[str] | None = None) -> int:
    """``rollup`` or ``annotate`` (see the module's docstring); prints to stdout."""
    p = argparse.ArgumentParser(prog="python -m accel_drc.action_report")
    p.add_argument("what", choices=("rollup", "annotate"))
    p.add_argument("--verdict", default="error")
    p.add_argument("--exit-code", type=int, default=2)
    p.add_argument("--run-url", default="")
    p.add_argument("--artifact", default="")
    p.add_argument("--run-dir", default=".")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)  # the boards: any text, after '--'
    args = p.parse_args(argv[:cut])
    boards = _boards(argv[cut + 1 :])
    if args.what == "rollup":
        text = rollup(
            boards,
            args.verdict,
            args.exit_code,
            args.run_url or None,
            args.artifact or None,
            args.run_dir,
        )
        sys.stdout.write(text)
    else:
        for board in boards:
            for line in annotations(board):
                sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
