"""SARIF 2.1.0 as GitHub code scanning reads it.

Every rule that ran is a ``reportingDescriptor`` (id, short and full description, help = why and
source).  Every finding is a result on the board file, its ``artifactLocation.uri`` relative to
the working directory (where ``upload-sarif`` runs) and its ``region.startLine`` the line of the
finding's first item in a ``.kicad_pcb`` (else 1), so the annotation lands on the track or via.
Board position, layer and net go in ``properties``.  ``partialFingerprints`` are a hash of what
identifies the finding (rule, net, layer, items), not of its numbers, so a finding keeps its
identity (and its dismissal on GitHub) across runs; a counter keeps them unique.

Each run's ``automationDetails.id`` (code scanning's *category*) is ``accel-drc/<board>/``, the
board's path relative to its repository (:func:`category`): stable per board file, whatever class
the board is checked as.  Code scanning refuses an upload holding two runs of one tool with one
category, and closes the alerts of a category that stops being uploaded; a category per class
did both (two boards of one class in one upload; a board whose auto-detected class flipped).
With ``check --baseline`` each result also carries SARIF's ``baselineState`` (``new``,
``unchanged`` or ``updated``, :mod:`accel_drc.baseline`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..hostile import MAX_BOARD_BYTES, read_regular
from ..references import Reference, resolve
from ..results import CheckResult, Finding, Severity, Status
from .json_report import fast_dumps

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/accel-drc/accel-drc"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
#: accel-drc's baseline states as SARIF's ``result.baselineState``
_BASELINE_STATE = {"new": "new", "unchanged": "unchanged", "changed": "updated"}
#: an item's id node: ``(uuid "…")`` (KiCad 7+), ``(tstamp …)`` (KiCad 6 and older: no line
#: would be found in their files, and every finding would sit on line 1)
_UUID_NODE = re.compile(rb'\((?:uuid|tstamp) "?[0-9a-fA-F-]{36}"?\)')


def level(f: Finding) -> str:
    if f.status == Status.CANNOT_VERIFY and f.severity == Severity.ERROR:
        return "warning"  # could not check: not proof of a defect
    return _LEVEL[f.severity]


def artifact_uri(board_file: str, cwd: str | None = None) -> str:
    """The board as SARIF's ``artifactLocation.uri``: its path relative to ``cwd``, ``/``
    separated and percent-encoded (RFC 3986: ``hw rev#2/main 100%.kicad_pcb`` is
    ``hw%20rev%232/main%20100%25.kicad_pcb``; unencoded, the ``#`` starts a fragment and code
    scanning finds no file)."""
    from urllib.parse import quote

    cwd = cwd or os.getcwd()
    try:
        rel = os.path.relpath(os.path.abspath(board_file), cwd)
    except ValueError:  # another drive on Windows: an absolute file: URI
        from pathlib import Path

        return Path(os.path.abspath(board_file)).as_uri()
    return quote(rel.replace(os.sep, "/"), safe="/")


def repository_root(path: str) -> str | None:
    """The work tree holding ``path``: the nearest folder above it with a ``.git`` entry (a
    folder, or the file a linked worktree or submodule has); None outside any."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def category(board_file: str, cwd: str | None = None) -> str:
    """The run's ``automationDetails.id``: ``accel-drc/<board>/``, ``<board>`` the board's path
    relative to its repository (else to ``cwd``), percent-encoded as :func:`artifact_uri`.

    Why per board file and not per class: code scanning keys alerts by category, refuses one
    upload with two runs of one category, and closes every alert of a category not uploaded
    again (a class that flips would strand them)."""
    root = repository_root(board_file)
    return f"accel-drc/{artifact_uri(board_file, root or cwd)}/"


def uuid_lines(path: str, uuids: Iterable[str]) -> dict[str, int]:
    """Line (1-based) where each uuid first appears as ``(uuid "…")`` or ``(tstamp …)`` in a text board file.

    One regex pass over the bytes (C speed) and one incremental newline count, whatever the
    number of wanted uuids."""
    # compared as bytes: no decode per node (a board has a uuid per item: 2.7 M at 346 MB)
    wanted = {u.lower().encode("ascii", "replace") for u in uuids if u}
    out: dict[str, int] = {}
    if not wanted or not os.path.isfile(path):
        return out
    try:
        data = read_regular(path, MAX_BOARD_BYTES)  # never a device or a FIFO swapped in
    except InputError:
        return out
    # the nodes' text in one C pass (no match object per node); a wanted one is then found
    # from the previous hit on, so the file is still scanned once in all
    line, at = 1, 0
    for node in _UUID_NODE.findall(data):
        u = node[node.index(b" ") + 1 : -1].strip(b'"').lower()
        if u in wanted:
            pos = data.find(node, at)
            line += data.count(b"\n", at, pos)
            at = pos
            out[u.decode("ascii")] = line
            wanted.discard(u)
            if not wanted:
                break
    return out


def fingerprint(f: Finding) -> str:
    key = "|".join(
        [
            f.rule,
            f.check,
            f.net or "",
            f.layer or "",
            ",".join(sorted(f.items)[:8]),
            str(f.evidence.get("dielectric", "")),
        ]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _md_citation(c: Reference) -> str:
    """A citation as Markdown: the title in italics, the URL as a link (code-scanning UIs render
    the rule help as Markdown)."""
    text = f"{c.author}. *{c.title}*. {c.publisher}, {c.year}."
    if c.document:
        text += f" {c.document}."
    if c.unconfirmed:
        text += f" ({', '.join(c.unconfirmed)} unconfirmed [U])"
    if c.url:
        text += f" <{c.url}>"
    return text


def to_sarif(result: CheckResult, cwd: str | None = None) -> dict[str, Any]:
    rules = []
    index: dict[str, int] = {}
    for run in result.rules:
        r = run.rule
        index[r.id] = len(rules)
        cited = resolve(result.references, r.source)
        refs_text = "".join(f"\n[{c.id}] {c.citation()}" for c in cited)
        refs_md = "".join(f"\n- **[{c.id}]** {_md_citation(c)}" for c in cited)
        rules.append(
            {
                "id": r.id,
                "name": "".join(w.capitalize() for w in re.split(r"[._]", r.id)),
                "shortDescription": {
                    "text": r.title or f"{r.check}" + (f" ({r.signal})" if r.signal else "")
                },
                "fullDescription": {"text": r.why},
                "help": {
                    "text": f"{r.why}\nSource: {r.source}"
                    + (f"\nReferences:{refs_text}" if cited else ""),
                    "markdown": f"{r.why}\n\n**Source:** {r.source}"
                    + (f"\n\n**References:**\n{refs_md}" if cited else ""),
                },
                "defaultConfiguration": {"level": _LEVEL[r.severity]},
                "properties": {
                    "check": r.check,
                    "signal": r.signal,
                    "source": r.source,
                    "references": [c.to_dict() for c in cited],
                    "params": dict(r.params),
                    "pack": r.pack,
                },
            }
        )
    uri = artifact_uri(result.board_file, cwd)
    lines = (
        uuid_lines(result.board_file, (f.items[0] for f in result.findings if f.items))
        if result.board_file.endswith(".kicad_pcb")
        else {}
    )
    results = []
    seen: dict[str, int] = {}
    compared = result.extras.get("baseline")  # check --baseline: a baseline.Comparison
    states = getattr(compared, "states", None)
    for i, f in enumerate(result.findings):
        rid = f.rule
        # findings under a sub-id (rule.kicad_default, rule.backdrill) belong to their rule
        base = rid
        while base not in index and "." in base:
            base = base.rsplit(".", 1)[0]
        fp = fingerprint(f)
        seen[fp] = seen.get(fp, 0) + 1
        if seen[fp] > 1:
            fp = f"{fp}:{seen[fp]}"
        line = lines.get(f.items[0].lower(), 1) if f.items else 1
        res: dict[str, Any] = {
            "ruleId": rid,
            "level": level(f),
            "message": {
                "text": f.message
                + (f" [{f.status.value.replace('_', ' ')}]" if f.status != Status.VIOLATION else "")
            },
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri},
                        "region": {"startLine": line},
                    },
                    **({"logicalLocations": [{"name": f.net, "kind": "net"}]} if f.net else {}),
                }
            ],
            "partialFingerprints": {"accelDrcFinding/v1": fp},
            "properties": {
                "status": f.status.value,
                "severity": f.severity.value,
                "check": f.check,
                "net": f.net,
                "layer": f.layer,
                "pos": None if f.pos is None else {"x": f.pos[0], "y": f.pos[1]},
                "measured": f.measured,
                "limit": f.limit,
                "unit": f.unit,
                "items": list(f.items),
                "why": f.why,
                "source": f.source,
            },
        }
        if base in index:
            res["ruleIndex"] = index[base]
            if base != rid:
                res["ruleId"] = base
                res["properties"]["subRule"] = rid
        if states is not None:
            res["baselineState"] = _BASELINE_STATE[states[i]]
        if f.status == Status.WAIVED and f.waiver:
            res["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": str(f.waiver.get("reason", "")),
                }
            ]
        results.append(res)
    tool: dict[str, Any] = {
        "driver": {
            "name": "accel-drc",
            "version": result.tool_version,
            "semanticVersion": result.tool_version,
            "informationUri": INFO_URI,
            "rules": rules,
        }
    }
    kicad = result.extras.get("kicad_drc")
    if isinstance(kicad, dict):  # check --kicad-drc: KiCad's DRC ran in the same gate
        tool["extensions"] = [
            {"name": "KiCad DRC (kicad-cli pcb drc)", "version": str(kicad.get("kicad_version"))}
        ]
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": tool,
                "automationDetails": {"id": category(result.board_file, cwd)},
                "results": results,
                "properties": {
                    "class": result.classification.board_class,
                    "confidence": result.classification.confidence,
                    "classification_source": result.classification.source,
                    "board_sha256": result.board_sha256,
                    "rule_packs": result.rule_packs,
                    **({"kicad_drc": kicad} if isinstance(kicad, dict) else {}),
                },
            }
        ],
    }
    return doc


def dumps(result: CheckResult, cwd: str | None = None) -> str:
    return fast_dumps(to_sarif(result, cwd), end="\n")


def write(path: str, result: CheckResult, cwd: str | None = None) -> None:
    from ..hostile import write_text

    write_text(path, dumps(result, cwd))  # atomic (temp file + rename); '-' is stdout
