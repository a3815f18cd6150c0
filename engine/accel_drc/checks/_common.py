"""Small helpers shared by the checks (not a check kind: the registry skips ``_`` modules)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..basis import normalise
from ..results import Finding, Rule, Severity, Status

if TYPE_CHECKING:
    from ..analysis import Analysis

#: most item uuids one finding lists (a plane net can have 100k segments)
MAX_ITEMS = 200


def finding(
    rule: Rule,
    status: Status,
    message: str,
    *,
    measured: Any = None,
    limit: Any = None,
    unit: str = "",
    net: str | None = None,
    layer: str | None = None,
    pos: tuple[float, float] | None = None,
    items: Sequence[str] = (),
    evidence: Mapping[str, Any] | None = None,
    severity: Severity | None = None,
    rule_id: str | None = None,
    basis: Mapping[str, Any] | None = None,
) -> Finding:
    """A finding of ``rule``.  ``basis`` says where each input came from (``{input: "measured" |
    "declared" | "library" | "default" | "assumed"}``, see :mod:`accel_drc.basis`); it is stored
    as ``evidence["basis"]`` and decides, in one place, whether a violation is a fact."""
    ev = dict(evidence or {})
    if basis:
        ev["basis"] = {**dict(ev.get("basis") or {}), **normalise(basis)}
    return Finding(
        rule=rule_id or rule.id,
        check=rule.check,
        severity=severity or rule.severity,
        status=status,
        message=message,
        measured=measured,
        limit=limit,
        unit=unit,
        net=net,
        layer=layer,
        pos=pos,
        items=tuple(items)[:MAX_ITEMS],
        why=rule.why,
        source=rule.source,
        evidence=ev,
    )


def track_rows(analysis: Analysis, nets: Iterable[int], layer: int) -> np.ndarray:
    idx = analysis.track_index
    parts = [idx.rows(n, layer) for n in nets]
    parts = [p for p in parts if len(p)]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate(parts))


def where(
    analysis: Analysis, rows: np.ndarray
) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """Position (first segment's start) and uuids of track ``rows``."""
    t = analysis.board.tracks
    if len(rows) == 0:
        return None, ()
    first = int(rows[0])
    pos = (round(float(t.start[first, 0]), 4), round(float(t.start[first, 1]), 4))
    n = len(t.uuid)  # uuids may be decoded on access (the reader's spans): read each once
    wanted = [r for r in rows[:MAX_ITEMS].tolist() if r < n]
    take = getattr(t.uuid, "take", None)  # the reader's spans: decoded in one gather
    got = take(wanted) if take is not None else [t.uuid[r] for r in wanted]
    return pos, tuple(u for u in got if u)


def assumption_of(analysis: Analysis, nets: Iterable[int]) -> str | None:
    for n in nets:
        a = analysis.net_signal.get(n)
        if a is not None and a.assumption:
            return a.assumption
    return None


def straight_pieces(board: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, row) of the straight pieces of track ``rows``: an arc as its two chords
    through its midpoint (what a check that measures along a trace walks)."""
    t = board.tracks
    s, e = t.start[rows], t.end[rows]
    mid = getattr(t, "mid", None)
    if mid is None or len(mid) != len(t.start):
        return s, e, rows
    m = mid[rows]
    arc = ~np.isnan(m[:, 0])
    if not arc.any():
        return s, e, rows
    s2 = np.concatenate([s[~arc], s[arc], m[arc]])
    e2 = np.concatenate([e[~arc], m[arc], e[arc]])
    r2 = np.concatenate([rows[~arc], rows[arc], rows[arc]])
    return s2, e2, r2
