"""The HTML report's stack-up: one row per stack-up layer (copper and dielectric: name,
material, thickness in mm, Dk/Df, the findings counted against it and the worst state) and
the cross-section drawing beside it (:func:`stackup_svg`: layers to scale where they fit,
labels placed so they do not overlap, hatched where an error is, dotted where a value is not
verified).  A finding counts against the layer it names and against the stack-up layers its
evidence names (:func:`stackup_names`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from ..model import Board
from ..results import CheckResult, Finding, Status

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


def stackup_rows(
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

LABEL_H = 15.0


#: the stack-up drawing grows past its 420 units to give up to this many layers a line each

LABEL_ROWS_MAX = 60


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
    ``LABEL_ROWS_MAX`` layers a line each; past that, the layers with findings and the copper
    layers keep their labels first (every layer still has its tooltip, and the table beside
    lists them all)."""
    known = [r for r in rows if r.get("known")]
    if not known:
        return Markup('<p class="muted">No layer thicknesses declared: cannot draw to scale.</p>')
    total = sum(float(r["thickness_mm"]) for r in known)
    # taller with many layers (still to scale), so every layer's label gets a line of its own
    height = max(420, int(min(len(known), LABEL_ROWS_MAX) * LABEL_H))
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
    cap = int((height - LABEL_H) // LABEL_H) + 1  # centres LABEL_H apart, inside the drawing
    if len(spans) > cap:

        def priority(item: tuple[int, float, Mapping[str, Any]]) -> tuple[int, int, float]:
            r = item[2]
            flagged = str(r.get("state")) in ("error", "warning", "cannot_verify")
            copper = str(r.get("kind")) == "copper"
            return (0 if flagged else 1, 0 if copper else 1, -float(r["thickness_mm"]))

        spans = sorted(sorted(spans, key=priority)[:cap])
    ys = place_labels([c for _, c, _ in spans], LABEL_H / 2, height - LABEL_H / 2, LABEL_H)
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
