"""The rows of the HTML report's sections, built from a check result: the findings (one
compact row each for the embedded JSON, in :data:`FIELDS` order, evidence bounded by
:mod:`.embedded_json`), the PDN rails, the via-stub series, the waivers (accel-drc's and
KiCad's exclusions), KiCad's own DRC, the rule runs, the coverage table, and the IR-drop heat
maps laid over the board view.  Values keep the units of the result (mm, Ω, F, Hz); numbers
meant for reading are formatted by :mod:`.html_format`.  The template only lays these out."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import escape

from ..extras import ViaStubSeries
from ..model import Board
from ..results import KICAD_ORIGIN, CheckResult, Finding, Severity, Status
from .embedded_json import compact_evidence, evidence_budget, jsonable, plain_rounded
from .html_format import fmt_si
from .pdn_stub_plots import pdn_plot, stub_histogram
from .stackup_figure import stackup_names

SEVERITIES = ("error", "warning", "info")

#: checks whose finding is about a whole copper layer, not a spot on it: copper_weight gives

#: its plane finding a point inside the plane for the KiCad marker, which on the board view

#: reads as a problem at that spot (in a BGA field, say), so the board view highlights the layer

#: instead (:func:`layer_wide`).  laminate_df and foil are not here: their findings are about

#: one signal group's traces on a layer, and point at one of them.

LAYER_WIDE_CHECKS = frozenset({"copper_weight"})


def layer_wide(f: Finding, copper: frozenset[str]) -> bool:
    """Whether the board view shows ``f`` as its whole layer (no point marker): a finding of a
    :data:`LAYER_WIDE_CHECKS` check on one of the copper layers ``copper`` (names and user
    names) the view draws."""
    return f.check in LAYER_WIDE_CHECKS and f.layer in copper


def finding_rows(
    findings: Sequence[Finding], texts: dict[str, int], copper: frozenset[str] = frozenset()
) -> tuple[list[list[Any]], dict[str, int]]:
    """Findings as compact rows for the page script (keys in ``FIELDS``); ``why`` and ``source``
    go to a shared string table because every finding of a rule repeats them.  A finding about
    a whole copper layer (:func:`layer_wide`) has no position and ``whole`` set."""

    def text_id(s: str) -> int:
        if s not in texts:
            texts[s] = len(texts)
        return texts[s]

    rows: list[list[Any]] = []
    budget = evidence_budget(len(findings))
    for i, f in enumerate(findings):
        ev: dict[str, Any] = {}
        declare = None
        for k, v in (f.evidence or {}).items():
            k = str(k)
            if k == "declare":  # shown on its own line of the finding panel
                declare = jsonable(v)
            else:
                ev[k] = plain_rounded(v)
        ev = compact_evidence(ev, budget, rounded=True)
        waiver = jsonable(dict(f.waiver)) if f.waiver else None
        whole = layer_wide(f, copper)
        pos = None if whole else f.pos
        rows.append(
            [
                i,
                f.rule,
                f.check,
                f.severity.value if isinstance(f.severity, Severity) else str(f.severity),
                f.status.value if isinstance(f.status, Status) else str(f.status),
                f.message,
                jsonable(f.measured),
                jsonable(f.limit),
                f.unit or "",
                f.net,
                f.layer,
                None if pos is None else round(float(pos[0]), 4),
                None if pos is None else round(float(pos[1]), 4),
                list(f.items),
                text_id(f.why or ""),
                text_id(f.source or ""),
                declare
                if isinstance(declare, str)
                else (None if declare is None else str(declare)),
                ev or None,
                waiver,
                stackup_names(f) or None,
                1 if whole else None,
            ]
        )
    return rows, texts


#: the order of the values in a finding row of the embedded JSON (the page script reads it)

FIELDS = (
    "i",
    "rule",
    "check",
    "severity",
    "status",
    "message",
    "measured",
    "limit",
    "unit",
    "net",
    "layer",
    "x",
    "y",
    "items",
    "why",
    "source",
    "declare",
    "evidence",
    "waiver",
    "slayers",  # other stack-up layers the finding counts against (see stackup_names)
    "whole",  # 1: about its whole copper layer, highlighted on the board view (layer_wide)
)


def worst_severity(counts: Mapping[str, int]) -> str:
    for sev in SEVERITIES:
        if counts.get(sev):
            return sev
    return "ok"


def rail_rows(result: CheckResult) -> list[dict[str, Any]]:
    rails = result.extras.get("rails") or []
    band = None
    for run in result.rules:
        if run.rule.check == "pdn_impedance":
            p = run.rule.params
            lo, hi = p.get("f_min_hz"), p.get("f_max_hz")
            if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                band = (float(lo), float(hi))
            break
    out = []
    for rail in rails if isinstance(rails, list) else []:
        if not isinstance(rail, Mapping):
            continue
        rb = band
        lo, hi = rail.get("f_min_hz"), rail.get("f_max_hz")
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            rb = (float(lo), float(hi))
        decaps = rail.get("decaps") or []
        missing = rail.get("missing") or []
        out.append(
            {
                "name": str(rail.get("name") or "rail"),
                "nets": [str(n) for n in rail.get("nets") or []],
                "target": fmt_si(rail.get("target_ohm"), "Ω"),
                "target_source": str(rail.get("target_source") or ""),
                "dominant": str(rail.get("dominant") or ""),
                "source": str(rail.get("source") or ""),
                "missing": [str(m) for m in missing] if isinstance(missing, list) else [],
                "plane_c": fmt_si(rail.get("plane_capacitance_f"), "F"),
                "decaps": len(decaps) if isinstance(decaps, list) else 0,
                "plot": pdn_plot(rail, rb),
                "role": str(rail.get("role") or ""),
                "role_basis": str(rail.get("role_basis") or ""),
                "role_evidence": str(rail.get("role_evidence") or ""),
                "need_load": [str(n) for n in rail.get("need_load") or []],
                "model_band": str(rail.get("model_band") or ""),
            }
        )
    return out


def via_stub_rows(result: CheckResult) -> list[dict[str, Any]]:
    """One histogram row per signal type of ``extras["via_stubs"]`` (signal ->
    :class:`~accel_drc.extras.ViaStubSeries`, from ``checks.via_stub.via_stub_extra``)."""
    src: Mapping[str, ViaStubSeries] = result.extras.get("via_stubs") or {}
    out = []
    for sig, series in src.items():
        lim = None if series.limit_mm is None else float(series.limit_mm)
        vals = [float(s) for s in series.stubs_mm]
        over = sum(1 for v in vals if lim is not None and v > lim)
        notes = []
        if series.unknown:
            notes.append(f"{series.unknown} with unknown stub")
        notes.append(f"{series.backdrilled} backdrilled")
        fres, nyq = series.min_f_res_hz, series.nyquist_hz
        if fres is not None and nyq is not None and nyq > 0:
            notes.append(f"lowest f_res {fmt_si(fres, 'Hz')} = {fres / nyq:.1f} × Nyquist")
        out.append(
            {
                "signal": str(sig),
                "notes": notes,
                "count": len(vals),
                "over": over,
                "limit": lim,
                "max": max(vals) if vals else None,
                "plot": stub_histogram(str(sig), vals, lim),
            }
        )
    return out


def waiver_rows(result: CheckResult) -> dict[str, list[dict[str, Any]]]:
    """The project config's waivers by state (applied, expired, stale), and apart from them,
    under ``"kicad"``, KiCad's own DRC exclusions (``check --kicad-drc``): those are set in
    KiCad and stored in the ``.kicad_pro``, not waivers of the config, so they are shown as
    "excluded in KiCad" with the finding each one set aside."""
    groups: dict[str, list[dict[str, Any]]] = {"applied": [], "expired": [], "stale": []}
    kicad: list[dict[str, Any]] = []
    for w in result.waivers:
        if not isinstance(w, Mapping):
            continue
        if w.get("origin") == KICAD_ORIGIN:
            kicad.append(w)
            continue
        state = str(w.get("state") or w.get("status") or "applied")
        entry = dict(w)
        sel = entry.get("selector", entry.get("match"))
        if sel is None:
            sel = {k: entry[k] for k in ("net", "layer", "uuid", "item") if entry.get(k)}
        text = (
            ", ".join(f"{k}: {v}" for k, v in sel.items() if v not in (None, ""))
            if isinstance(sel, Mapping)
            else ("" if sel is None else str(sel))
        )
        # a waiver that names only a rule matches every finding of it: say so, not a blank cell
        entry["selector_text"] = text or "any"
        groups.setdefault(state, []).append(entry)
    groups["kicad"] = _kicad_exclusions(result, kicad)
    return groups


def _kicad_exclusions(
    result: CheckResult, rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """KiCad's exclusions as the Waivers section lists them: the rule, the ``.kicad_pro`` they
    are stored in, KiCad's comment (when the designer wrote one) and the finding each one set
    aside (by its exclusion string), or why it matched none (stale)."""
    by_exclusion = {
        str(f.evidence.get("kicad_exclusion")): i
        for i, f in enumerate(result.findings)
        if f.evidence and f.evidence.get("kicad_exclusion")
    }
    out = []
    for w in rows:
        project = os.path.basename(str(w.get("file") or "")) or ".kicad_pro"
        reason = str(w.get("reason") or "")
        i = by_exclusion.get(str(w.get("exclusion")))
        out.append(
            {
                "state": "excluded" if w.get("state") == "applied" else "stale",
                "rule": w.get("rule"),
                "where": f"excluded in KiCad ({project})",
                # KiCad's default reason repeats "excluded in KiCad": only a designer's comment
                "comment": "" if reason.startswith("excluded in KiCad") else reason,
                "finding": None if i is None else {"i": i, "message": result.findings[i].message},
                "hint": w.get("hint") or "",
            }
        )
    return out


def kicad_drc_section(result: CheckResult) -> dict[str, Any] | None:
    """KiCad's own DRC (``check --kicad-drc``): its version and one row per violation type."""
    info = result.extras.get("kicad_drc")
    if not isinstance(info, Mapping):
        return None
    rows: dict[str, Counter[str]] = {}
    for f in result.findings:
        if f.check == "kicad_drc":
            rows.setdefault(f.rule, Counter())[f.status.value] += 1
            rows[f.rule][f.severity.value] += 1
    kicad_waivers = [w for w in result.waivers if w.get("origin") == KICAD_ORIGIN]
    return {
        **info,
        "types": sorted(rows.items(), key=lambda kv: (-kv[1]["violation"], kv[0])),
        "excluded": sum(c["waived"] for c in rows.values()),
        "stale": sum(1 for w in kicad_waivers if w.get("state") == "stale"),
        # KiCad's DRC engine stops reporting one violation type at 199 entries
        "capped": sorted(r for r, c in rows.items() if c["violation"] + c["waived"] == 199),
    }


def rule_runs(result: CheckResult, findings: Sequence[Finding]) -> list[dict[str, Any]]:
    by_rule: dict[str, Counter[str]] = {}
    for f in findings:
        by_rule.setdefault(f.rule, Counter())[f.status.value] += 1
    out = []
    for run in result.rules:
        c = by_rule.get(run.rule.id, Counter())
        if c.get("violation"):
            outcome = "fail"
        elif c.get("cannot_verify"):
            outcome = "cannot_verify"
        elif c.get("waived"):
            outcome = "waived"
        elif run.checked == 0:
            outcome = "nothing"
        else:
            outcome = "pass"
        out.append(
            {
                "id": run.rule.id,
                "check": run.rule.check,
                "title": run.rule.title,
                "severity": run.rule.severity.value,
                "signal": run.rule.signal,
                "checked": run.checked,
                "violations": c.get("violation", 0),
                "cannot_verify": c.get("cannot_verify", 0),
                "waived": c.get("waived", 0),
                "outcome": outcome,
                "why": run.rule.why,
                "source": run.rule.source,
            }
        )
    # what needs attention first: failed, unverifiable, waived, then passes and no-ops
    rank = {"fail": 0, "cannot_verify": 1, "waived": 2, "pass": 3, "nothing": 4}
    out.sort(key=lambda r: rank[r["outcome"]])
    return out


#: most coverage rows drawn (a training baseboard has thousands of NVLink nets: the JSON has all)

COVERAGE_ROWS = 400


_RESULT_BADGE = {
    "pass": "pass",
    "violation": "fail",
    "cannot_verify": "cannot_verify",
    "waived": "waived",
}


def coverage_section(result: CheckResult) -> dict[str, Any] | None:
    """The coverage card: pairs first (unknown interface, then unchecked, then checked), then the
    single-ended nets; at most :data:`COVERAGE_ROWS` rows."""
    cov = result.coverage or {}
    rows = list(cov.get("pairs") or [])
    if not cov:
        return None

    def rank(r: Mapping[str, Any]) -> tuple[int, int, str]:
        itf = r.get("interface")
        k = (
            0
            if itf is None
            else 1
            if not r.get("checked") and itf not in ("refclk", "excluded")
            else 2
            if not r.get("checked")
            else 3
        )
        return (0 if r.get("kind") == "pair" else 1, k, str(r.get("name")))

    rows.sort(key=rank)
    shown = []
    for r in rows[:COVERAGE_ROWS]:
        shown.append(
            {
                "name": r.get("name"),
                "kind": r.get("kind"),
                "nets": ", ".join(r.get("nets") or ()),
                "interface": r.get("interface_name") or "unknown",
                "basis": r.get("basis") or "unknown",
                "evidence": r.get("evidence") or "",
                "runs": [
                    (
                        c.get("rule"),
                        _RESULT_BADGE.get(str(c.get("result")), "nothing"),
                        c.get("result"),
                    )
                    for c in r.get("checks_run") or ()
                ],
                "why": r.get("not_checked_because") or "",
                "checked": bool(r.get("checked")),
            }
        )
    return {
        "summary": cov.get("summary") or {},
        "rows": shown,
        "more": max(0, len(rows) - len(shown)),
    }


def initial_layers(board: Board) -> set[int]:
    """The outer layers only: inner planes drawn over each other hide the board; the page turns a
    layer on when one of its findings is selected."""
    return {0, max(board.layer_count - 1, 0)}


def heat_layers(result: CheckResult) -> list[dict[str, Any]]:
    """One hidden SVG group per IR-drop heat map (rail × layer × voltage / current density),
    an inline PNG stretched over the solve's grid rectangle in board mm."""
    out: list[dict[str, Any]] = []
    rows = result.extras.get("irdrop") or result.extras.get("ir_drop") or []
    for r in rows if isinstance(rows, list) else []:
        for m in (r.get("maps") or []) if isinstance(r, dict) else []:
            x0, y0, x1, y1 = (float(v) for v in m["bbox"])
            for kind, key, label in (
                ("v", "voltage_png", "V"),
                ("j", "current_density_png", "A/mm²"),
            ):
                uri = str(m.get(key) or "")
                if not uri.startswith("data:image/png;base64,"):
                    continue
                lid = f"heat-{kind}-{len(out)}"
                out.append(
                    {
                        "id": lid,
                        "label": f"{r.get('rail')} {m['layer']} {label}",
                        "svg": f'<g class="heat" data-layer="{escape(lid)}" style="display:none">'
                        f'<image href="{escape(uri)}" x="{x0:.3f}" y="{y0:.3f}" '
                        f'width="{x1 - x0:.3f}" height="{y1 - y0:.3f}" '
                        f'preserveAspectRatio="none" opacity="0.85"/></g>',
                    }
                )
    return out
