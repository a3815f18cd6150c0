"""The HTML report's inline SVG plots of two checks: a rail's PDN impedance |Z(f)| against its
target on log-log axes (:func:`pdn_plot`; Ω against Hz, the band of interest shaded), and a
signal group's via-stub lengths against the limit (:func:`stub_histogram`; mm).  Built from
numbers alone; the only text in them (names, labels) goes through ``escape()``.  The insertion
loss plots live in :mod:`.loss_plots`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from .html_format import fmt_si


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
