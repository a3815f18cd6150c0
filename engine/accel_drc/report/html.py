"""The self-contained HTML violation report.

One file, opened from disk in any browser with no request leaving it: the CSS and JavaScript
are inlined from ``templates/``, the board view and the plots are inline SVG, and the findings
travel as JSON inside ``<script type="application/json">`` that the page's own script turns into
the table and the board markers.  Why JSON plus script rather than 10,000 rendered rows: one
copy of the data (the file stays well under 15 MB), and the table can be filtered, sorted and
grouped without a server.

User text (net names, footprint values, file names, layer names, waiver reasons) is escaped
everywhere: jinja2 autoescape for the HTML, :func:`safe_json` for the embedded JSON (``<``, ``>``,
``&``, U+2028 and U+2029 become ``\\uXXXX`` so ``</script>`` cannot close the element), and the
page's script only ever inserts it as text.

This module assembles the page (:func:`build_context`, :func:`render`, :func:`write`); its parts
live beside it: the template and assets in :mod:`.html_template`, the section rows in
:mod:`.html_rows`, the embedded JSON in :mod:`.embedded_json`, number and citation formatting
in :mod:`.html_format`, the stack-up table and drawing in :mod:`.stackup_figure`, the PDN and
via-stub plots in :mod:`.pdn_stub_plots`, the board view in :mod:`.board_svg`, the finding
drawings in :mod:`.drawings`, the loss plots in :mod:`.loss_plots`, the cannot-verify groups in
:mod:`.declare_html`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..classify import NOT_ACCELERATOR
from ..model import Board
from ..packs import GENERAL
from ..references import bibliography
from ..results import CheckResult, Status
from ..version import __version__
from .board_svg import render_board, start_zones
from .declare_html import cannot_verify_groups, not_accelerator
from .drawings import drawings
from .embedded_json import evidence_budget, safe_json
from .html_format import cite_html, fmt_num, fmt_si
from .html_rows import (
    COVERAGE_ROWS,
    FIELDS,
    LAYER_WIDE_CHECKS,
    SEVERITIES,
    coverage_section,
    finding_rows,
    heat_layers,
    initial_layers,
    kicad_drc_section,
    layer_wide,
    rail_rows,
    rule_runs,
    via_stub_rows,
    waiver_rows,
    worst_severity,
)
from .html_template import (
    read_asset,
    template,
    template_key,
    template_module_source,
    write_template_module,
)
from .loss_plots import loss_context
from .pdn_stub_plots import pdn_plot, stub_histogram
from .stackup_figure import PATTERN_DEFS, place_labels, stackup_names, stackup_rows, stackup_svg

log = logging.getLogger(__name__)

#: this module assembles the page; the names below were defined here before the report was split
#: by idea (issue 26) and are still importable from here
__all__ = [
    "COVERAGE_ROWS",
    "FIELDS",
    "LAYER_WIDE_CHECKS",
    "PATTERN_DEFS",
    "build_context",
    "cite_html",
    "class_note",
    "evidence_budget",
    "fmt_num",
    "fmt_si",
    "layer_wide",
    "pdn_plot",
    "place_labels",
    "prepare",
    "render",
    "safe_json",
    "sha256_of",
    "stackup_names",
    "stackup_svg",
    "stub_histogram",
    "template",
    "template_key",
    "template_module_source",
    "write",
    "write_template_module",
]

_STATUSES = ("violation", "cannot_verify", "waived")


# ---------------------------------------------------------------------------------------------
# Building the page context
# ---------------------------------------------------------------------------------------------


def class_note(result: CheckResult) -> str:
    from .text import class_note as note

    return note(result)


def build_context(result: CheckResult, board: Board) -> dict[str, Any]:
    """Everything the template shows, computed once (the template only lays it out)."""
    findings = list(result.findings)
    # the board view's zone fills simplify in GEOS on another core while the rows are built
    zones = start_zones(board)
    refs = result.references
    cited = bibliography(
        refs,
        [r.rule.source for r in result.rules]
        + [e.source for e in result.classification.evidence]
        + [f.source for f in findings],
    )
    sev_counts = Counter(f.severity.value for f in findings if f.status == Status.VIOLATION)
    status_counts = Counter(f.status.value for f in findings)
    all_sev = Counter(f.severity.value for f in findings)
    unwaived_errors = len(result.unwaived_errors())
    texts: dict[str, int] = {}
    copper = frozenset(n for cl in board.copper_layers for n in (cl.name, cl.user_name) if n)
    rows, texts = finding_rows(findings, texts, copper)
    cls = result.classification
    stackup = stackup_rows(result, board, findings)
    board_file = result.board_file or board.source
    # everything but the board view first: the zone fills are still simplifying meanwhile
    ctx: dict[str, Any] = {
        "title": f"accel-drc: {os.path.basename(board_file) or board_file}",
        "board_name": os.path.basename(board_file) or board_file,
        "board_file": board_file,
        "sha256": result.board_sha256,
        "date": result.date,
        "tool_version": result.tool_version or __version__,
        "packs": result.rule_packs,
        # the whole pack list as one line for the banner's tooltip
        "packs_text": ", ".join(
            f"{p.get('name', '')} {p.get('version', '')}".strip()
            for p in result.rule_packs
            if isinstance(p, Mapping)
        ),
        "pattern_defs": PATTERN_DEFS,
        "verdict": result.verdict(),
        "unverified_errors": len(result.unverified_errors()),
        "unwaived_errors": unwaived_errors,
        "total": len(findings),
        "count_phrases": result.count_phrases(),
        "count_icons": {"error": "✖", "warning": "⚠", "info": "ℹ"},
        "class_note": class_note(result),
        # by severity over every finding (as the text summary counts), by status beside it
        "sev_counts": {s: all_sev.get(s, 0) for s in SEVERITIES},
        "violation_sev_counts": {s: sev_counts.get(s, 0) for s in SEVERITIES},
        "status_counts": {s: status_counts.get(s, 0) for s in _STATUSES},
        "worst": worst_severity(sev_counts),
        "cls": cls,
        "overridden": cls.source != "auto",
        # what the classifier alone said (the winner's share of the votes, as classify does)
        "auto_class": GENERAL
        if any(e.what == NOT_ACCELERATOR for e in cls.evidence)
        else (max(cls.scores, key=cls.scores.get) if cls.scores else cls.board_class),
        "auto_conf": (max(cls.scores.values()) / sum(cls.scores.values()))
        if cls.scores and sum(cls.scores.values()) > 0
        else cls.confidence,
        "scores": sorted(cls.scores.items(), key=lambda kv: -kv[1]),
        "evidence": [
            {
                "what": e.what,
                "value": fmt_num(e.value),
                "votes": sorted(e.votes.items(), key=lambda kv: -abs(kv[1])),
                "note": e.note,
                "source": e.source,
            }
            for e in cls.evidence
        ],
        "classes": sorted({k for e in cls.evidence for k in e.votes} | set(cls.scores)),
        "summary": result.board_summary,
        "board": {
            "layers": board.layer_count,
            "format": board.format,
            "size": board.outline.size_mm,
            "thickness": board.board_thickness_mm,
            "nets": board.named_net_count,
            "tracks": len(board.tracks),
            "vias": len(board.vias),
            "footprints": len(board.footprints),
            "zones": len(board.zones),
        },
        "stackup": stackup,
        "stackup_svg": stackup_svg(stackup),
        "rails": rail_rows(result),
        # keyed "irdrop" by the pipeline today, by the kind ("ir_drop") once the registry keys extras
        "irdrop": [
            r
            for r in result.extras.get("irdrop") or result.extras.get("ir_drop") or []
            if isinstance(r, dict)
        ],
        "via_stubs": via_stub_rows(result),
        "loss": loss_context(result.extras),
        "waivers": waiver_rows(result),
        "cannot_verify": cannot_verify_groups(result.findings),
        "not_accelerator": not_accelerator(cls),
        "coverage": coverage_section(result),
        "rule_runs": rule_runs(result, findings),
        "signal_nets": sorted(
            (str(k), v)
            for k, v in (result.extras.get("signals") or {}).items()
            if isinstance(v, int)
        ),
        "checks": sorted({f.check for f in findings}),
        # the layer filter's options: every layer a finding is on or counted against (a
        # stack-up badge on a dielectric sets the filter to the dielectric's name)
        "finding_layers": sorted(
            {f.layer for f in findings if f.layer} | {n for f in findings for n in stackup_names(f)}
        ),
        "rule_ids": sorted({f.rule for f in findings}),
        "css": read_asset("report.css"),
        "js": read_asset("report.js"),
        "warnings": list(board.warnings)[:20],
        "kicad_drc": kicad_drc_section(result),
        # the bibliography: every reference a source on the page cites, in full
        "references": list(cited.values()),
        "cite": functools.partial(cite_html, refs),
    }
    drawn = drawings(findings)
    # the drawings on the board view (a skew's is in the finding panel), for the layer toggle
    ctx["board_drawings"] = sum(d["k"] != "skew" for d in drawn)
    board_svg = render_board(board, initial_layers(board), zones)
    heat = heat_layers(result)
    if heat:
        # the IR-drop heat maps over the board, in board mm, hidden until toggled
        svg_text = board_svg.svg.replace(
            '<g id="markers"', "".join(h["svg"] for h in heat) + '<g id="markers"', 1
        )
        board_svg = replace(board_svg, svg=svg_text)
    data = {
        "fields": list(FIELDS),
        "findings": rows,
        "texts": list(texts),
        # short citations by id, for the finding panel's links to the References section
        "refs": {rid: refs[rid].short() for rid in cited},
        "layers": board_svg.layers,
        "viewBox": list(board_svg.view_box),
        # the thermal via fields, skew groups, plane breaks and return-via reaches, from the
        # findings' own evidence
        "drawings": drawn,
    }
    ctx["board_svg"] = Markup(board_svg.svg)
    ctx["heat_layers"] = [{k: v for k, v in h.items() if k != "svg"} for h in heat]
    ctx["grid_mm"] = board_svg.grid_mm
    ctx["layers"] = board_svg.layers
    ctx["data_json"] = safe_json(data, plain=True)
    return ctx


def prepare(board: Board) -> None:
    """Start the costliest part of a report of ``board`` now, before the check that the report
    will show (the board view's zone fills: :func:`.board_svg.zones_ahead`), so it runs on
    another core meanwhile.  For a caller that will write the HTML report of this board object;
    the report is the same with or without it."""
    from .board_svg import zones_ahead

    zones_ahead(board)


def render(result: CheckResult, board: Board, editor_note: str | None = None) -> str:
    """The whole report as one HTML document (a pure function of the result and the board).

    ``editor_note``: one sentence for the banner from the KiCad button (how many markers it
    put where in the editor); the command line has none."""
    return template().render(**build_context(result, board), editor_note=editor_note)


def write(
    path: str | os.PathLike[str],
    result: CheckResult,
    board: Board,
    editor_note: str | None = None,
) -> None:
    """Render and write the report (UTF-8); parent directories are created."""
    from ..hostile import write_text

    text = render(result, board, editor_note)
    p = Path(path)
    if str(path) != "-":
        p.parent.mkdir(parents=True, exist_ok=True)
    write_text(str(path), text)  # atomic (temp file + rename); '-' is stdout
    log.info("wrote HTML report %s (%d bytes)", p, len(text.encode("utf-8")))


def sha256_of(path: str | os.PathLike[str]) -> str:
    """sha256 of a file, for callers that build a CheckResult by hand."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
