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
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..classify import NOT_ACCELERATOR
from ..extras import ViaStubSeries
from ..model import Board
from ..packs import GENERAL
from ..references import Reference, bibliography
from ..results import KICAD_ORIGIN, CheckResult, Finding, Severity, Status
from ..version import __version__
from .board_svg import render_board, start_zones
from .declare_html import cannot_verify_groups, not_accelerator
from .drawings import drawings
from .loss_plots import loss_context

log = logging.getLogger(__name__)

_TEMPLATES = Path(__file__).resolve().parent / "templates"

#: per-finding evidence larger than this (JSON characters) is cut to its keys, so one check that
#: attaches a long list to each finding cannot blow the file up
_EVIDENCE_MAX = 800

_SEVERITIES = ("error", "warning", "info")
_STATUSES = ("violation", "cannot_verify", "waived")


# ---------------------------------------------------------------------------------------------
# Escaping and number formatting
# ---------------------------------------------------------------------------------------------


def safe_json(data: Any, plain: bool = False) -> Markup:
    """JSON text that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so neither
    ``</script>`` nor ``<!--`` can appear), and U+2028/U+2029 as escapes (they end a line in
    older JavaScript parsers).  JSON.parse gives the original text back.

    ``plain``: the caller built ``data`` from :func:`_jsonable` values only (str keys, no NaN),
    so the walk that converts it is skipped (0.5 s on a 10,000-finding report); a value that is
    not plain after all still goes through :func:`_jsonable`.
    """
    text = None
    if plain:
        try:
            text = _COMPACT.encode(data)
        except (TypeError, ValueError):
            text = None
    if text is None:
        text = _COMPACT.encode(_jsonable(data))
    text = (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return Markup(text)


#: ``json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, built once
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _jsonable(value: Any) -> Any:
    """Plain JSON values: enums by value, tuples as lists, NaN/inf as None, numpy scalars as
    Python numbers, anything else as its string."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (Severity, Status)):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        try:
            return _jsonable(item())
        except (TypeError, ValueError):
            pass
    tolist = getattr(value, "tolist", None)  # numpy array
    if callable(tolist):
        return _jsonable(tolist())
    return str(value)


_SI = (
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
)


def fmt_si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """``0.00015, "Ω"`` -> ``150 µΩ``: engineering prefixes for plots and rail tables."""
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "—"
    if value == 0:
        return f"0 {unit}".strip()
    mag = abs(value)
    scale, prefix = _SI[-1]
    for s, p in _SI:
        if mag >= s * 0.9995:
            scale, prefix = s, p
            break
    v = value / scale
    text = f"{v:.0f}" if abs(v) >= 10**digits else f"{v:.{digits}g}"
    return f"{text} {prefix}{unit}".strip()


def fmt_num(value: Any, digits: int = 4) -> str:
    """A measured value or limit as a reviewer reads it (``None`` -> em dash)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        return f"{value:.{digits}g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt_num(v, digits) for v in value)
    return str(value)


# ---------------------------------------------------------------------------------------------
# Plots (inline SVG built from numbers; the only text in them goes through escape())
# ---------------------------------------------------------------------------------------------


def _log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0**k for k in range(a, b + 1)]


def pdn_plot(rail: Mapping[str, Any], band: tuple[float, float] | None = None) -> Markup:
    """Log-log |Z(f)| of one rail against its target, the worst point in the band marked."""
    pts = []
    for p in rail.get("impedance") or ():
        f, z = p.get("f_hz"), p.get("z_ohm")
        if isinstance(f, (int, float)) and isinstance(z, (int, float)) and f > 0 and z > 0:
            pts.append((float(f), float(z)))
    name = str(rail.get("name") or "rail")
    if len(pts) < 2:
        return Markup('<p class="muted">No impedance curve for {}.</p>').format(name)
    pts.sort()
    target = rail.get("target_ohm")
    target = float(target) if isinstance(target, (int, float)) and target > 0 else None
    fmin, fmax = pts[0][0], pts[-1][0]
    zs = [z for _, z in pts] + ([target] if target else [])
    zlo, zhi = min(zs) / 2.0, max(zs) * 2.0
    width, height, ml, mr, mt, mb = 640, 300, 64, 16, 14, 40
    pw, ph = width - ml - mr, height - mt - mb
    lx0, lx1 = math.log10(fmin), math.log10(fmax)
    ly0, ly1 = math.log10(zlo), math.log10(zhi)

    def X(f: float) -> float:
        return ml + (math.log10(f) - lx0) / (lx1 - lx0 or 1) * pw

    def Y(z: float) -> float:
        return mt + (1 - (math.log10(z) - ly0) / (ly1 - ly0 or 1)) * ph

    b_lo, b_hi = band if band else (fmin, fmax)
    in_band = [(f, z) for f, z in pts if b_lo <= f <= b_hi] or pts
    wf, wz = rail.get("worst_f_hz"), rail.get("worst_z_ohm")
    if isinstance(wf, (int, float)) and isinstance(wz, (int, float)) and wf > 0 and wz > 0:
        worst = (float(wf), float(wz))  # the check's own worst point: plot and finding agree
    elif target:
        worst = max(in_band, key=lambda p: p[1] / target)
    else:
        worst = max(in_band, key=lambda p: p[1])
    over = bool(target and worst[1] > target)
    out: list[str] = []
    label = f"|Z(f)| of {name}" + (f" against target {fmt_si(target, 'Ω')}" if target else "")
    out.append(
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
    )
    out.append(f'<rect class="plot-area" x="{ml}" y="{mt}" width="{pw}" height="{ph}"/>')
    if band:
        bx0, bx1 = X(max(b_lo, fmin)), X(min(b_hi, fmax))
        if bx1 > bx0:
            out.append(
                f'<rect class="band" x="{bx0:.1f}" y="{mt}" width="{bx1 - bx0:.1f}" height="{ph}"/>'
            )
    for t in _log_ticks(fmin, fmax):
        if fmin <= t <= fmax:
            x = X(t)
            out.append(f'<line class="grid" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}"/>')
            out.append(
                f'<text class="tick" x="{x:.1f}" y="{mt + ph + 14}" text-anchor="middle">'
                f"{escape(fmt_si(t, 'Hz', 2))}</text>"
            )
    for t in _log_ticks(zlo, zhi):
        if zlo <= t <= zhi:
            y = Y(t)
            out.append(f'<line class="grid" x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}"/>')
            out.append(
                f'<text class="tick" x="{ml - 4}" y="{y + 4:.1f}" text-anchor="end">'
                f"{escape(fmt_si(t, 'Ω', 2))}</text>"
            )
    out.append(
        f'<text class="axis" x="{ml + pw / 2:.0f}" y="{height - 4}" text-anchor="middle">'
        "frequency</text>"
        f'<text class="axis" x="12" y="{mt + ph / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {mt + ph / 2:.0f})">|Z|</text>'
    )
    mm = rail.get("model_max_hz")
    if isinstance(mm, (int, float)) and fmin < mm < fmax:
        # where the board-level lumped model stops meaning much (analysis/pdn.MODEL_MAX_HZ)
        x = X(float(mm))
        out.append(
            f'<line class="model-limit" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}"/>'
            f'<text class="tick" x="{x + 3:.1f}" y="{mt + 11}">lumped model ends '
            f"{escape(fmt_si(float(mm), 'Hz', 2))}</text>"
        )
    if target:
        y = Y(target)
        out.append(
            f'<line class="target" x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}"/>'
            f'<text class="target-label" x="{ml + pw - 4}" y="{y - 5:.1f}" text-anchor="end">'
            f"target {escape(fmt_si(target, 'Ω'))}</text>"
        )
    d = "M" + " L".join(f"{X(f):.1f} {Y(z):.1f}" for f, z in pts)
    out.append(f'<path class="curve" d="{d}"/>')
    wx, wy = X(worst[0]), Y(worst[1])
    cls = "worst over" if over else "worst"
    text = f"worst {fmt_si(worst[1], 'Ω')} at {fmt_si(worst[0], 'Hz')}"
    anchor = "end" if wx > ml + pw * 0.6 else "start"
    dx = -8 if anchor == "end" else 8
    out.append(
        f'<g class="{cls}"><circle cx="{wx:.1f}" cy="{wy:.1f}" r="5"/>'
        f'<path d="M{wx - 8:.1f} {wy:.1f}h16M{wx:.1f} {wy - 8:.1f}v16"/>'
        f'<text x="{wx + dx:.1f}" y="{max(wy - 8, mt + 12):.1f}" text-anchor="{anchor}">'
        f"{'▲ ' if over else ''}{escape(text)}</text></g>"
    )
    out.append("</svg>")
    return Markup("".join(out))


def stub_histogram(signal: str, stubs: Sequence[float], limit: float | None) -> Markup:
    """Histogram of via-stub lengths (mm) of one signal type, the limit drawn as a line and the
    bins over it hatched (so the over-limit part does not rely on colour)."""
    vals = [float(s) for s in stubs if isinstance(s, (int, float)) and math.isfinite(s)]
    if not vals:
        return Markup('<p class="muted">No vias measured for {}.</p>').format(signal)
    top = max(max(vals), limit or 0.0) * 1.05 or 1.0
    raw = top / 24
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * 0.999)
    nbins = max(1, math.ceil(top / step))
    hi = nbins * step
    counts = [0] * nbins
    for v in vals:
        counts[min(int(v / step), nbins - 1)] += 1
    cmax = max(counts) or 1
    width, height, ml, mr, mt, mb = 640, 220, 48, 16, 14, 40
    pw, ph = width - ml - mr, height - mt - mb
    over_n = sum(1 for v in vals if limit is not None and v > limit)
    label = f"stub lengths of {len(vals)} vias on {signal}" + (
        f", limit {limit:.3g} mm, {over_n} over" if limit is not None else ""
    )
    out = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">',
        f'<rect class="plot-area" x="{ml}" y="{mt}" width="{pw}" height="{ph}"/>',
    ]
    for i, c in enumerate(counts):
        if not c:
            continue
        x = ml + i * pw / nbins
        h = c / cmax * ph
        lo = i * step
        over = limit is not None and lo + step / 2 > limit
        cls = "bar over" if over else "bar"
        out.append(
            f'<rect class="{cls}" x="{x + 1:.1f}" y="{mt + ph - h:.1f}" '
            f'width="{pw / nbins - 2:.1f}" height="{h:.1f}"><title>{lo:.3f}–{lo + step:.3f} mm: '
            f"{c} vias</title></rect>"
        )
        if over:  # hatched as well as red (the page's #hatch pattern, as the stack-up uses)
            out.append(
                f'<rect class="bar-hatch" x="{x + 1:.1f}" y="{mt + ph - h:.1f}" '
                f'width="{pw / nbins - 2:.1f}" height="{h:.1f}" fill="url(#hatch)"/>'
            )
    for k in range(0, nbins + 1, max(1, math.ceil(nbins / 6))):
        x = ml + k * pw / nbins
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{mt + ph + 14}" text-anchor="middle">'
            f"{k * step:.3g}</text>"
        )
    out.append(
        f'<text class="tick" x="{ml - 4}" y="{mt + 10}" text-anchor="end">{cmax}</text>'
        f'<text class="tick" x="{ml - 4}" y="{mt + ph}" text-anchor="end">0</text>'
        f'<text class="axis" x="{ml + pw / 2:.0f}" y="{height - 4}" text-anchor="middle">'
        "stub length (mm)</text>"
        f'<text class="axis" x="12" y="{mt + ph / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {mt + ph / 2:.0f})">vias</text>'
    )
    if limit is not None:
        x = ml + limit / hi * pw
        out.append(
            f'<line class="target" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}"/>'
            f'<text class="target-label" x="{x + 4:.1f}" y="{mt + 12}">limit {limit:.3g} mm '
            f"({limit / 0.0254:.1f} mil)</text>"
        )
    out.append("</svg>")
    return Markup("".join(out))


# ---------------------------------------------------------------------------------------------
# Building the page context
# ---------------------------------------------------------------------------------------------


def _round_floats(value: Any, digits: int = 6) -> Any:
    """Floats to ``digits`` significant digits (52517654644.371376 -> 52517700000.0): the
    report shows evidence, it does not recompute from it, and 10,000 findings add up."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: _round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_round_floats(v, digits) for v in value]
    return value


def evidence_budget(n_findings: int) -> int:
    """Characters of evidence JSON per finding: ``_EVIDENCE_MAX``, less when there are many
    findings (about 3 MB of evidence in all, never under 200 characters each), so a
    10,000-finding report stays quick to parse."""
    return max(200, min(_EVIDENCE_MAX, 3_000_000 // max(n_findings, 1)))


def _plain_rounded(value: Any) -> Any:
    """``_round_floats(_jsonable(value))`` in one walk (the evidence of 10,000 findings is a
    million values)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        return float(f"{value:.6g}") if math.isfinite(value) else None
    if t is dict or isinstance(value, Mapping):
        return {str(k): _plain_rounded(v) for k, v in value.items()}
    if t is list or t is tuple or isinstance(value, (list, tuple, set, frozenset)):
        return [_plain_rounded(v) for v in value]
    return _round_floats(_jsonable(value))


#: what :func:`_compact_evidence` measures with: compact separators, as safe_json writes
_SIZER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _json_len(v: Any) -> int:
    """``len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))`` without building an
    encoder per call: scalars by their ``repr`` (what json writes), containers through C."""
    t = type(v)
    if t is str:
        return len(_encode_str(v))
    if t is int or t is float:
        return len(repr(v))
    if v is None:
        return 4
    if t is bool:
        return 4 if v else 5
    return len(_SIZER.encode(v))


def _compact_evidence(ev: Any, limit: int = _EVIDENCE_MAX, rounded: bool = False) -> Any:
    """Evidence within about ``limit`` characters of JSON.  Values longer than half the budget
    become a note saying what was left out; then keys are kept in the check's order while they
    fit, and the names of the rest are listed, so the first (most telling) facts survive.
    ``rounded``: ``ev`` is a fresh dict whose floats are already rounded (:func:`_plain_rounded`)."""
    if not isinstance(ev, dict) or not ev:
        return ev or None
    if not rounded:
        ev = _round_floats(ev)
    size = _json_len

    # each key's and value's JSON length, measured once: the dict's length follows from them
    # exactly ("{" + "k:v" joined by "," + "}"), so nothing below encodes anything twice
    keys = [(k, size(k if type(k) is str else str(k))) for k in ev]
    vsize = [size(v) for v in ev.values()]
    if 2 + sum(n + 1 + vsize[i] for i, (_k, n) in enumerate(keys)) + len(keys) - 1 <= limit:
        return ev
    for i, (k, _n) in enumerate(keys):
        if vsize[i] > limit // 2:
            v = ev[k]
            ev[k] = (
                f"({len(v)} items left out of the report)"
                if isinstance(v, (list, dict))
                else "(long value left out of the report)"
            )
            vsize[i] = size(ev[k])
    if 2 + sum(n + 1 + vsize[i] for i, (_k, n) in enumerate(keys)) + len(keys) - 1 <= limit:
        return ev
    out: dict[str, Any] = {}
    used, left = 2, []
    for i, (k, n) in enumerate(keys):
        need = n + vsize[i] + 2
        if used + need <= limit - 48:
            out[k] = ev[k]
            used += need
        else:
            left.append(k)
    names = ", ".join(left)
    out["(left out)"] = names if len(names) <= 36 else names[:35].rsplit(",", 1)[0] + ", ..."
    return out


#: evidence keys that name a stack-up layer a finding is about besides ``Finding.layer`` (e.g.
#: laminate_df names the over-limit dielectric next to the copper layer it reports)
_STACKUP_EVIDENCE_KEYS = ("dielectric", "layer_name", "stackup_layer")


def stackup_names(f: Finding) -> list[str]:
    """Stack-up layer names a finding is counted against beyond its own ``layer``, in a stable
    order.  The stack-up badges count with these and the layer filter matches them, so a badge
    on a dielectric filters to exactly the findings it counts."""
    out: list[str] = []
    for key in _STACKUP_EVIDENCE_KEYS:
        v = f.evidence.get(key) if f.evidence else None
        if isinstance(v, str) and v and v != f.layer and v not in out:
            out.append(v)
    return out


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


def _finding_rows(
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
                declare = _jsonable(v)
            else:
                ev[k] = _plain_rounded(v)
        ev = _compact_evidence(ev, budget, rounded=True)
        waiver = _jsonable(dict(f.waiver)) if f.waiver else None
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
                _jsonable(f.measured),
                _jsonable(f.limit),
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


def _worst(counts: Mapping[str, int]) -> str:
    for sev in _SEVERITIES:
        if counts.get(sev):
            return sev
    return "ok"


def _stackup_rows(
    result: CheckResult, board: Board, findings: Sequence[Finding]
) -> list[dict[str, Any]]:
    """Stack-up rows (``extras["stackup"]`` from the pipeline, else the board's own stack-up)
    with the findings against each layer and its drawn height."""
    rows: list[dict[str, Any]] = []
    src = result.extras.get("stackup")
    if isinstance(src, list) and src:
        for r in src:
            if isinstance(r, Mapping) and r.get("kind") not in ("silkscreen", "solderpaste"):
                rows.append(dict(r))
    elif board.stackup is not None:
        for layer in board.stackup.layers:
            if layer.kind in ("silkscreen", "solderpaste"):
                continue
            rows.append(
                {
                    "name": layer.name,
                    "kind": layer.kind,
                    "thickness_mm": layer.thickness_mm,
                    "material": layer.material,
                    "epsilon_r": layer.epsilon_r,
                    "loss_tangent": layer.loss_tangent,
                    "tg_c": None,
                    "foil": layer.foil,
                    "copper_oz": None,
                    "signals": [],
                }
            )
    against: dict[str, Counter[str]] = {}
    for f in findings:
        names = {f.layer} if f.layer else set()
        names.update(stackup_names(f))
        for name in names:
            c = against.setdefault(name, Counter())
            if f.status == Status.VIOLATION:
                c[f.severity.value] += 1
            else:
                c[f.status.value] += 1
    user_names = {cl.name: cl.user_name for cl in board.copper_layers if cl.user_name != cl.name}
    total = 0.0
    for r in rows:
        t = r.get("thickness_mm")
        total += float(t) if isinstance(t, (int, float)) and t > 0 else 0.0
    for r in rows:
        c = against.get(str(r.get("name")), Counter())
        r["counts"] = dict(c)
        if c.get("error"):
            r["state"] = "error"
        elif c.get("warning"):
            r["state"] = "warning"
        elif c.get("cannot_verify"):
            r["state"] = "cannot_verify"
        elif c.get("info"):
            r["state"] = "info"
        elif c.get("waived"):
            r["state"] = "waived"
        else:
            r["state"] = "ok"
        t = r.get("thickness_mm")
        r["known"] = isinstance(t, (int, float)) and t > 0
        r["frac"] = (float(t) / total) if r["known"] and total > 0 else 0.0
        r["user_name"] = user_names.get(str(r.get("name")), "")
        sig = r.get("signals") or []
        r["signals"] = [str(s) for s in sig] if isinstance(sig, (list, tuple)) else [str(sig)]
    return rows


#: the fill patterns the stack-up drawing and the stub histograms share, written once per page
#: (an id must be unique, and a histogram may be drawn without a stack-up): diagonal hatching
#: marks errors and over-limit bars, dots mark cannot-verify layers
PATTERN_DEFS = Markup(
    '<svg class="pattern-defs" width="0" height="0" aria-hidden="true" focusable="false"><defs>'
    '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="6" height="6" class="hatch-bg"/>'
    '<line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern>'
    '<pattern id="dots" width="5" height="5" patternUnits="userSpaceOnUse">'
    '<rect width="5" height="5" class="dots-bg"/><circle cx="2.5" cy="2.5" r="1" '
    'class="dots-dot"/></pattern></defs></svg>'
)

#: height of one stack-up label line in the drawing's user units (the font is 11 px; Chromium's
#: box for it, with the ✖ glyph's fallback font, is 14 px)
_LABEL_H = 15.0

#: the stack-up drawing grows past its 420 units to give up to this many layers a line each
_LABEL_ROWS_MAX = 60


def place_labels(wanted: Sequence[float], top: float, bottom: float, gap: float) -> list[float]:
    """Label centre lines as near to ``wanted`` (ascending) as possible, at least ``gap`` apart,
    inside ``[top, bottom]``: pushed down past the previous label, then pulled back up from the
    bottom.  Why: on a 26-layer board most layers are thinner than a line of text, and labels at
    their layers' centres overlap (29 of 38 did); a column with leader lines stays readable.
    The caller keeps at most ``(bottom - top) / gap + 1`` labels, so a solution exists."""
    ys: list[float] = []
    for w in wanted:
        ys.append(max(w, top, ys[-1] + gap) if ys else max(w, top))
    limit = bottom
    for i in range(len(ys) - 1, -1, -1):
        ys[i] = min(ys[i], limit)
        limit = ys[i] - gap
    return ys


def stackup_svg(rows: Sequence[Mapping[str, Any]]) -> Markup:
    """The stack-up cross-section drawn to scale (height proportional to thickness); layers
    with findings are hatched or dotted as well as coloured.  Labels sit in a column beside the
    drawing, joined to their layers by leader lines; the drawing grows (to scale) to give up to
    ``_LABEL_ROWS_MAX`` layers a line each; past that, the layers with findings and the copper
    layers keep their labels first (every layer still has its tooltip, and the table beside
    lists them all)."""
    known = [r for r in rows if r.get("known")]
    if not known:
        return Markup('<p class="muted">No layer thicknesses declared: cannot draw to scale.</p>')
    total = sum(float(r["thickness_mm"]) for r in known)
    # taller with many layers (still to scale), so every layer's label gets a line of its own
    height = max(420, int(min(len(known), _LABEL_ROWS_MAX) * _LABEL_H))
    width, x0, bw = 300, 8, 150
    scale = height / total
    out = [
        f'<svg class="stackup-svg" viewBox="0 0 {width} {height + 24}" role="img" '
        f'aria-label="stack-up cross-section to scale, {total:.3f} mm total">',
    ]
    y = 0.0
    spans: list[tuple[int, float, Mapping[str, Any]]] = []  # (order, centre y, row)
    for r in known:
        h = float(r["thickness_mm"]) * scale
        kind = str(r.get("kind") or "")
        state = str(r.get("state"))
        cls = f"sl k-{escape(kind)} s-{escape(state)}"
        out.append(
            f'<rect class="{cls}" x="{x0}" y="{y:.2f}" width="{bw}" height="{max(h, 0.8):.2f}">'
            f"<title>{escape(str(r.get('name')))}: {float(r['thickness_mm']):.4g} mm</title></rect>"
        )
        if state in ("error", "warning"):
            out.append(
                f'<rect x="{x0}" y="{y:.2f}" width="{bw}" height="{max(h, 0.8):.2f}" '
                f'fill="url(#hatch)" opacity="0.55" pointer-events="none"/>'
            )
        elif state == "cannot_verify":
            out.append(
                f'<rect x="{x0}" y="{y:.2f}" width="{bw}" height="{max(h, 0.8):.2f}" '
                f'fill="url(#dots)" opacity="0.6" pointer-events="none"/>'
            )
        spans.append((len(spans), y + h / 2, r))
        y += h
    # which layers get a label: all when they fit, else findings first, then copper, then thick
    cap = int((height - _LABEL_H) // _LABEL_H) + 1  # centres _LABEL_H apart, inside the drawing
    if len(spans) > cap:

        def priority(item: tuple[int, float, Mapping[str, Any]]) -> tuple[int, int, float]:
            r = item[2]
            flagged = str(r.get("state")) in ("error", "warning", "cannot_verify")
            copper = str(r.get("kind")) == "copper"
            return (0 if flagged else 1, 0 if copper else 1, -float(r["thickness_mm"]))

        spans = sorted(sorted(spans, key=priority)[:cap])
    ys = place_labels([c for _, c, _ in spans], _LABEL_H / 2, height - _LABEL_H / 2, _LABEL_H)
    xl = x0 + bw
    for (_, c, r), ly in zip(spans, ys):
        icon = {"error": "✖ ", "warning": "⚠ ", "cannot_verify": "? "}.get(str(r.get("state")), "")
        out.append(
            f'<path class="sl-leader" d="M{xl} {c:.2f}h6L{xl + 18} {ly:.2f}h4"/>'
            f'<text class="sl-label" x="{xl + 25}" y="{ly + 4:.2f}">'
            f"{escape(icon)}{escape(str(r.get('name')))}</text>"
        )
    out.append(f'<text class="tick" x="{x0}" y="{height + 18}">total {total:.3f} mm</text>')
    out.append("</svg>")
    return Markup("".join(out))


def _rails(result: CheckResult) -> list[dict[str, Any]]:
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


def _via_stubs(result: CheckResult) -> list[dict[str, Any]]:
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


def _waivers(result: CheckResult) -> dict[str, list[dict[str, Any]]]:
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


def _kicad_drc(result: CheckResult) -> dict[str, Any] | None:
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


def _rule_runs(result: CheckResult, findings: Sequence[Finding]) -> list[dict[str, Any]]:
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


#: the environment's options that change the compiled template (part of :func:`template_key`)
_ENV_OPTIONS: dict[str, Any] = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True}
_TEMPLATE_NAME = "report.html.j2"
#: the template compiled ahead, shipped beside this module (:func:`write_template_module`)
_TEMPLATE_MODULE = Path(__file__).resolve().parent / "_report_template.py"


@functools.cache
def template() -> jinja2.Template:
    """The compiled report template, once per process.

    Compiling it costs 0.06 s of a 0.5 s report (the KiCad plugin does it on its loader thread
    while KiCad is still sending the board), so the package ships it compiled ahead
    (``_report_template.py``, Python that jinja2 generated from ``report.html.j2``); it is used
    only when its key (:func:`template_key`: the template's text, jinja2's version and the
    environment's options) is the current one, else the template is compiled here as before."""
    env = _env()
    try:
        from . import _report_template as ahead

        source = (_TEMPLATES / _TEMPLATE_NAME).read_text(encoding="utf-8")
        if getattr(ahead, "KEY", None) == template_key(source):
            return env.template_class.from_module_dict(env, vars(ahead), env.make_globals(None))
    except Exception:  # a stale, missing or broken module: compile, as without it
        log.debug("the template compiled ahead is not usable; compiling it", exc_info=True)
    return env.get_template(_TEMPLATE_NAME)


def template_key(source: str) -> str:
    """What the compiled template depends on: its text, jinja2's version, the options."""
    what = f"{jinja2.__version__}\0{sorted(_ENV_OPTIONS.items())!r}\0{source}"
    return hashlib.sha256(what.encode("utf-8")).hexdigest()


def template_module_source() -> str:
    """The text of ``_report_template.py``: jinja2's Python for the template, with its key."""
    source = (_TEMPLATES / _TEMPLATE_NAME).read_text(encoding="utf-8")
    code = _env().compile(source, _TEMPLATE_NAME, _TEMPLATE_NAME, raw=True, defer_init=True)
    return (
        '"""report.html.j2 compiled by jinja2 (generated: do not edit).\n\n'
        "Regenerate after changing the template, jinja2 or the environment's options:\n"
        "``python -m accel_drc.regenerate``\n"
        "(a stale copy is ignored: the report compiles the template itself).\n"
        '"""\n\n'
        f"KEY = {template_key(source)!r}\n\n{code}\n"
    )


def write_template_module() -> None:
    """Regenerate ``_report_template.py`` from the template (see :func:`template`)."""
    _TEMPLATE_MODULE.write_text(template_module_source(), encoding="utf-8")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        # autoescape on for every template, whatever its extension: the report is user text;
        # rows from other modules (extras) may lack a key: show it as empty, never crash
        undefined=jinja2.Undefined,
        **_ENV_OPTIONS,
    )
    env.filters["si"] = fmt_si
    env.filters["num"] = fmt_num
    return env


def _read_asset(name: str) -> Markup:
    """Inline CSS/JS asset.  It is our own file, but a ``</`` inside it would still end the
    element early, so refuse it rather than emit a broken page."""
    text = (_TEMPLATES / name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise ValueError(f"{name} must not contain a closing script/style tag")
    return Markup(text)


def class_note(result: CheckResult) -> str:
    from .text import class_note as note

    return note(result)


_CITE = re.compile(r"\[([^\[\]\s]+)\]")


def cite_html(refs: Mapping[str, Reference], text: str | None) -> Markup:
    """``text`` escaped, each ``[id]`` of a known reference made a link to its entry in the
    page's References section (the short citation as its tooltip; no URL leaves the page)."""
    esc = str(escape(text or ""))

    def link(m: re.Match[str]) -> str:
        ref = refs.get(m.group(1))
        if ref is None:
            return m.group(0)
        return (
            f'<a class="cite" href="#ref-{escape(ref.id)}" title="{escape(ref.short())}">'
            f"[{escape(ref.id)}]</a>"
        )

    return Markup(_CITE.sub(link, esc))


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
    rows, texts = _finding_rows(findings, texts, copper)
    cls = result.classification
    stackup = _stackup_rows(result, board, findings)
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
        "sev_counts": {s: all_sev.get(s, 0) for s in _SEVERITIES},
        "violation_sev_counts": {s: sev_counts.get(s, 0) for s in _SEVERITIES},
        "status_counts": {s: status_counts.get(s, 0) for s in _STATUSES},
        "worst": _worst(sev_counts),
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
        "rails": _rails(result),
        # keyed "irdrop" by the pipeline today, by the kind ("ir_drop") once the registry keys extras
        "irdrop": [
            r
            for r in result.extras.get("irdrop") or result.extras.get("ir_drop") or []
            if isinstance(r, dict)
        ],
        "via_stubs": _via_stubs(result),
        "loss": loss_context(result.extras),
        "waivers": _waivers(result),
        "cannot_verify": cannot_verify_groups(result.findings),
        "not_accelerator": not_accelerator(cls),
        "coverage": _coverage(result),
        "rule_runs": _rule_runs(result, findings),
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
        "css": _read_asset("report.css"),
        "js": _read_asset("report.js"),
        "warnings": list(board.warnings)[:20],
        "kicad_drc": _kicad_drc(result),
        # the bibliography: every reference a source on the page cites, in full
        "references": list(cited.values()),
        "cite": functools.partial(cite_html, refs),
    }
    drawn = drawings(findings)
    # the drawings on the board view (a skew's is in the finding panel), for the layer toggle
    ctx["board_drawings"] = sum(d["k"] != "skew" for d in drawn)
    board_svg = render_board(board, _initial_layers(board), zones)
    heat = _heat_layers(result)
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


#: most coverage rows drawn (a training baseboard has thousands of NVLink nets: the JSON has all)
COVERAGE_ROWS = 400

_RESULT_BADGE = {
    "pass": "pass",
    "violation": "fail",
    "cannot_verify": "cannot_verify",
    "waived": "waived",
}


def _coverage(result: CheckResult) -> dict[str, Any] | None:
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


def _initial_layers(board: Board) -> set[int]:
    """The outer layers only: inner planes drawn over each other hide the board; the page turns a
    layer on when one of its findings is selected."""
    return {0, max(board.layer_count - 1, 0)}


def _heat_layers(result: CheckResult) -> list[dict[str, Any]]:
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
