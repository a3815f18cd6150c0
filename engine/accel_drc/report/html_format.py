"""Text formatting for the HTML report: numbers with SI prefixes (:func:`fmt_si`, e.g.
``1.5e-4, "Ω"`` → ``150 µΩ``), plain numbers and lists (:func:`fmt_num`; the template's ``si``
and ``num`` filters), and citations (:func:`cite_html`: each ``[id]`` of a known reference a link
to its entry in the page's References section).  Every piece of user text goes through
``markupsafe.escape``; None reads as an em dash."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup, escape

from ..references import Reference

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
