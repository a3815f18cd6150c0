"""Insertion-loss plots for the HTML report: per-channel loss bars (dielectric / conductor /
vias / extras against the budget) and IL(f) curves from 0 to 2× Nyquist for the worst channels.

Self-contained SVG (no script, no external file); every text from the board is escaped.  The
rows come from ``result.extras["insertion_loss"]`` (:func:`accel_drc.checks.insertion_loss.extras`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

_PARTS = (
    ("dielectric_db", "dielectric", "#4c78a8"),
    ("conductor_db", "conductor", "#f58518"),
    ("via_db", "vias", "#54a24b"),
    ("extra_db", "extras", "#b279a2"),
)


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and x == x else 0.0


def loss_bars(rows: Sequence[Mapping[str, Any]]) -> Markup:
    """Horizontal stacked bars, one per channel (worst first), with its budget as a tick."""
    rows = [r for r in rows if isinstance(r, Mapping)]
    if not rows:
        return Markup("")
    width, ml, mr, bh, gap, mt = 640, 190, 20, 14, 6, 22
    height = mt + len(rows) * (bh + gap) + 30
    top = max(max(_num(r.get("total_db")), _num(r.get("budget_db"))) for r in rows) * 1.1 or 1.0
    pw = width - ml - mr

    def X(v: float) -> float:
        return ml + v / top * pw

    out = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="insertion loss at Nyquist per channel against its budget">'
    ]
    lx = ml
    for _key, label, color in _PARTS:
        out.append(
            f'<rect x="{lx}" y="4" width="10" height="10" fill="{color}"/>'
            f'<text class="tick" x="{lx + 13}" y="13">{escape(label)}</text>'
        )
        lx += 90
    out.append(f'<text class="tick" x="{lx}" y="13">| budget</text>')
    y = float(mt)
    for r in rows:
        name = str(r.get("name") or "")
        shown = name if len(name) <= 30 else name[:29] + "…"
        total = _num(r.get("total_db"))
        budget = r.get("budget_db")
        over = isinstance(budget, (int, float)) and total > budget
        out.append(
            f'<text class="tick" x="{ml - 4}" y="{y + bh - 3:.1f}" text-anchor="end">'
            f"{escape(shown)}</text>"
        )
        x = float(ml)
        for key, label, color in _PARTS:
            v = _num(r.get(key))
            if v <= 0:
                continue
            w = v / top * pw
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bh}" fill="{color}">'
                f"<title>{escape(name)}: {escape(label)} {v:.2f} dB</title></rect>"
            )
            x += w
        out.append(
            f'<text class="tick" x="{x + 4:.1f}" y="{y + bh - 3:.1f}">'
            f"{total:.1f} dB{' ✖' if over else ''}</text>"
        )
        if isinstance(budget, (int, float)):
            bx = X(float(budget))
            out.append(
                f'<line class="target" x1="{bx:.1f}" y1="{y - 2:.1f}" x2="{bx:.1f}" '
                f'y2="{y + bh + 2:.1f}"/>'
            )
        y += bh + gap
    out.append(
        f'<text class="axis" x="{ml + pw / 2:.0f}" y="{height - 6}" text-anchor="middle">'
        f"insertion loss at Nyquist (dB, axis to {top:.0f} dB)</text></svg>"
    )
    return Markup("".join(out))


def il_curve(row: Mapping[str, Any]) -> Markup:
    """IL(f) in dB (linear axes) from 0 to 2× Nyquist, Nyquist and the budget marked."""
    fs, ils = row.get("freqs_hz"), row.get("il_db")
    if not isinstance(fs, list) or not isinstance(ils, list) or len(fs) < 2:
        return Markup("")
    pts = [(_num(f), _num(v)) for f, v in zip(fs, ils)]
    name = str(row.get("name") or "")
    nyq = _num(row.get("nyquist_hz"))
    budget = row.get("budget_db")
    width, height, ml, mr, mt, mb = 640, 260, 56, 16, 14, 40
    pw, ph = width - ml - mr, height - mt - mb
    fmax = max(f for f, _ in pts) or 1.0
    vmax = max([v for _, v in pts] + ([float(budget)] if isinstance(budget, (int, float)) else []))
    vmax = (vmax or 1.0) * 1.1

    def X(f: float) -> float:
        return ml + f / fmax * pw

    def Y(v: float) -> float:
        return mt + v / vmax * ph  # loss grows downward, as an S21 plot in dB

    out = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="insertion loss versus frequency of {escape(name)}">',
        f'<rect class="plot-area" x="{ml}" y="{mt}" width="{pw}" height="{ph}"/>',
    ]
    for i in range(5):
        f = fmax * i / 4
        x = X(f)
        out.append(
            f'<line class="grid" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}"/>'
            f'<text class="tick" x="{x:.1f}" y="{mt + ph + 14}" text-anchor="middle">'
            f"{f / 1e9:.3g} GHz</text>"
        )
        v = vmax * i / 4
        y = Y(v)
        out.append(
            f'<line class="grid" x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{ml - 4}" y="{y + 4:.1f}" text-anchor="end">−{v:.3g}</text>'
        )
    if 0 < nyq <= fmax:
        x = X(nyq)
        out.append(
            f'<line class="model-limit" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}"/>'
            f'<text class="tick" x="{x + 3:.1f}" y="{mt + 11}">Nyquist</text>'
        )
    if isinstance(budget, (int, float)):
        y = Y(float(budget))
        out.append(
            f'<line class="target" x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}"/>'
            f'<text class="target-label" x="{ml + pw - 4}" y="{y - 5:.1f}" text-anchor="end">'
            f"budget {float(budget):g} dB</text>"
        )
    d = "M" + " L".join(f"{X(f):.1f} {Y(v):.1f}" for f, v in pts)
    out.append(f'<path class="curve" d="{d}"/>')
    out.append(
        f'<text class="axis" x="{ml + pw / 2:.0f}" y="{height - 4}" text-anchor="middle">'
        "frequency</text>"
        f'<text class="axis" x="12" y="{mt + ph / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {mt + ph / 2:.0f})">S21 (dB)</text></svg>'
    )
    return Markup("".join(out))


def loss_context(extras: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the template's insertion-loss section needs, or None when no channel was computed."""
    rows = extras.get("insertion_loss")
    if not isinstance(rows, list) or not rows:
        return None
    curves = [
        {"name": str(r.get("name") or ""), "total": _num(r.get("total_db")), "plot": il_curve(r)}
        for r in rows
        if isinstance(r, Mapping) and r.get("freqs_hz")
    ]
    return {"bars": loss_bars(rows), "curves": curves, "count": len(rows)}
