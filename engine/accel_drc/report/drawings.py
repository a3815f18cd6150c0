"""What the HTML report draws for a finding beyond its marker: the thermal via field under a hot
part, a skew group's delays against the limit, the breaks in a trace's reference plane and the
reach of a missing return via.

Each drawing is a compact dict taken from the finding's *own* evidence (its numbers copied, never
recomputed: the drawing shows what the check judged, so a reader who sees 12.0 K/W on the board
sees the finding's 12.0), and the page's script turns it into SVG.  Why a list of its own rather
than the evidence in the finding rows: the rows' evidence is cut to a budget per finding
(:func:`accel_drc.report.html.evidence_budget`), and a via field or a list of breaks is exactly
what the cut drops.

The drawings travel in the page's JSON (``data.drawings``): one entry per drawn finding, keyed by
the finding's index ``i`` in ``data.findings``.  Kinds (``k``):

* ``thermal``: ``part``, ``box`` (x0, y0, x1, y1 mm: the pads' box the check judged), ``vias``
  (the positions of the vias counted), ``n`` (their count), ``theta`` (θ of the field, K/W =
  °C/W), ``theta_via``, ``limit`` (θ max, or None), ``power`` and ``rise`` (None when not
  declared);
* ``skew``: ``ref`` ([name, ps], what the members are measured against), ``members`` ([[name,
  ps], …]), ``me`` (the finding's own member's index, or None), ``limit`` (ps), ``skew`` (the
  finding's measured ps);
* ``breaks``: ``breaks`` ([[x0, y0, x1, y1, kind, length mm, layer, reference], …]);
* ``stitch``: a signal via whose reference changes with no return via near: ``c`` (its
  position), ``limit`` (the distance a return via must be within, mm), ``nearest`` (the nearest
  one's distance, or None), ``change`` and ``refs`` (the layers and the references);
* ``xtalk``: a crosstalk victim's coupled runs: ``runs`` ([[vx0, vy0, vx1, vy1, ax0, ay0, ax1,
  ay1, layer, aggressor, gap mm], …]: the victim's coupled stretch and the aggressor's beside
  it), ``victim`` (its name) and ``measured`` (the finding's noise, a fraction of the swing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from ..results import Finding

#: at most this many points of a thermal field and breaks of one finding drawn (the checks bound
#: them already: this keeps a hand-built result from blowing the file up)
MAX_POINTS = 4096


def _num(v: Any) -> float | None:
    """``v`` as a finite float, else None (evidence is data from a check, not trusted shape)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _point(v: Any) -> list[float] | None:
    """``[x, y]`` of a two-number sequence, else None."""
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        return None
    x, y = _num(v[0]), _num(v[1])
    return None if x is None or y is None else [x, y]


def _thermal(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """The via field under a hot part (``thermal_vias``)."""
    box = ev.get("outline_mm")
    corners = [_num(v) for v in box] if isinstance(box, (list, tuple)) and len(box) == 4 else None
    if corners is None or any(v is None for v in corners):
        return None
    vias = [p for p in (_point(v) for v in (ev.get("field") or [])[:MAX_POINTS]) if p]
    theta = _num(ev.get("theta_field_k_per_w"))
    return {
        "k": "thermal",
        "part": str(ev.get("part") or ""),
        "box": corners,
        "vias": vias,
        "n": int(ev.get("vias") or 0),
        "theta": theta,
        "theta_via": _num(ev.get("theta_via_k_per_w")),
        "limit": _num(ev.get("theta_max_k_per_w")),
        "power": _num(ev.get("power_w")),
        "rise": _num(ev.get("rise_k")),
    }


def _members(rows: Any) -> list[list[Any]]:
    """``[[name, ps], …]`` of a group list in the evidence (malformed rows left out)."""
    out: list[list[Any]] = []
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, (list, tuple)) and len(r) == 2 and _num(r[1]) is not None:
            out.append([str(r[0]), _num(r[1])])
    return out


def _skew(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """An intra-pair skew (P against N) or a group member against its reference."""
    limit = _num(f.limit)
    if limit is None:
        return None
    if "p_ps" in ev:  # intra-pair: P and N, measured against N
        p, n = _num(ev.get("p_ps")), _num(ev.get("n_ps"))
        if p is None or n is None:
            return None
        nets = [str(x) for x in ev.get("nets") or []]
        half = len(nets) // 2
        p_name = " + ".join(nets[:half]) if half else "P"
        n_name = " + ".join(nets[half:]) if half else "N"
        return {"k": "skew", "ref": [n_name, n], "members": [[p_name, p]], "me": 0,
                "limit": limit, "skew": _num(f.measured)}  # fmt: skip
    ref = _num(ev.get("reference_ps"))
    me = _num(ev.get("member_ps"))
    if ref is None or me is None:
        return None
    members = _members(ev.get("group"))
    name = f.net or "member"
    mine = next((j for j, (m, _ps) in enumerate(members) if m == name), None)
    if mine is None:  # a lane named for its pair (MIPI): the member with the finding's delay
        mine = next((j for j, (_m, ps) in enumerate(members) if ps == me), None)
    if mine is None:  # a finding without the group list: its own member alone
        members.append([name, me])
        mine = len(members) - 1
    return {"k": "skew", "ref": [str(ev.get("reference") or "reference"), ref],
            "members": members, "me": mine, "limit": limit, "skew": _num(f.measured)}  # fmt: skip


def _stitch(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """A layer change with no return via near enough (``return_path``'s ``.via``): the reach
    the return via must be within, around the signal via, and the nearest one's distance."""
    c, reach = _point(f.pos), _num(f.limit)
    if c is None or reach is None or reach <= 0:
        return None
    return {"k": "stitch", "c": c, "limit": reach,
            "nearest": _num(ev.get("nearest_return_via_mm")),
            "change": f"{ev.get('from') or ''}→{ev.get('to') or ''}",
            "refs": f"{ev.get('references_from') or ''} → {ev.get('references_to') or ''}"}  # fmt: skip


def _return_path(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``return_path`` finding: its plane breaks, or its layer change without a return via."""
    if "nearest_return_via_mm" in ev:
        return _stitch(f, ev)
    return _breaks(f, ev)


def _breaks(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """The breaks in a trace's reference plane (``return_path``)."""
    out: list[list[Any]] = []
    for b in (ev.get("breaks") or [])[:MAX_POINTS]:
        if not isinstance(b, Mapping):
            continue
        s, e = _point(b.get("start")), _point(b.get("end"))
        if s is None or e is None:
            continue
        out.append([*s, *e, str(b.get("kind") or ""), _num(b.get("length_mm")),
                    str(b.get("layer") or ""), str(b.get("reference") or "")])  # fmt: skip
    return {"k": "breaks", "breaks": out} if out else None


def _xtalk(f: Finding, ev: Mapping[str, Any]) -> dict[str, Any] | None:
    """A crosstalk victim's coupled runs (``crosstalk``'s ``coupled``): each the victim's
    stretch and the aggressor's beside it, with the layer, the aggressor and the gap."""
    out: list[list[Any]] = []
    for c in (ev.get("coupled") or [])[:MAX_POINTS]:
        if not isinstance(c, (list, tuple)) or len(c) != 11:
            continue
        xy = [_num(v) for v in c[:8]]
        if any(v is None for v in xy):
            continue
        out.append([*xy, str(c[8]), str(c[9]), _num(c[10])])
    if not out:
        return None
    return {"k": "xtalk", "runs": out, "victim": f.net or "", "measured": _num(f.measured)}


#: check kind -> the function that takes its drawing from a finding's evidence
_DRAWERS: dict[str, Callable[[Finding, Mapping[str, Any]], dict[str, Any] | None]] = {
    "thermal_vias": _thermal,
    "skew": _skew,
    "return_path": _return_path,
    "crosstalk": _xtalk,
}


def drawings(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """One drawing per finding that has one, in finding order, each with the finding's index
    ``i`` (its row in the page's ``data.findings``)."""
    out: list[dict[str, Any]] = []
    for i, f in enumerate(findings):
        draw = _DRAWERS.get(f.check)
        ev = f.evidence
        if draw is None or not isinstance(ev, Mapping):
            continue
        got = draw(f, ev)
        if got is not None:
            got["i"] = i
            out.append(got)
    return out
