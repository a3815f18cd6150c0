"""Config entries that apply to nothing on the board being checked (``config.unmatched``).

Auditing the project config against a board needs the board's facts (which nets a backdrill
entry selects is :func:`accel_drc.analysis.via_stubs.config_backdrills`' answer), so it sits on
the facts floor, above the config it reads (``docs/architecture.md``, "Floors"); the config
module only loads and types the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config import REGEX_SEMANTICS, ProjectConfig, _fullmatch_count, as_config, suggest_pattern
from .hostile import fullmatch


@dataclass(frozen=True)
class Unmatched:
    """A config entry that applies to no net, layer or dielectric of the board being checked."""

    where: tuple[Any, ...]  # path in the config: ("backdrill", 0, "match", "net")
    key: str  # the same, readable: "backdrill[0].match.net"
    pattern: str
    message: str
    line: int | None = None
    suggestion: str | None = None  # a pattern that would match, when one is close
    would_match: int = 0  # how many names the suggestion matches


def _key_text(where: tuple[Any, ...]) -> str:
    out = ""
    for w in where:
        out += f"[{w}]" if isinstance(w, int) else (f".{w}" if out else str(w))
    return out


def unmatched_entries(
    cfg: ProjectConfig | Mapping[str, Any],
    board: Any,
    net_signal: Mapping[int, Any] | None = None,
) -> tuple[list[Unmatched], int]:
    """The ``signals:``, ``backdrill:``, ``rails:``, ``capacitors: parts:``, ``package_delays:``,
    ``loss:`` and ``stackup: materials:`` entries that apply to nothing on ``board``, and how many entries were looked at.

    Each is matched exactly as its consumer matches it (whole-name ``re.fullmatch``; a rail's
    patterns also against the net name's last ``/`` part; backdrill through
    :func:`accel_drc.analysis.via_stubs.config_backdrills` itself), so a warning here means the
    entry really changed nothing.  An entry whose every net is already taken by an earlier
    entry (first match wins) is reported too.  Layer and dielectric *names* that do not exist
    are errors already (:func:`check_layers`, :func:`check_dielectrics`).
    """
    pc = as_config(cfg)
    nets = [(i, n) for i, n in enumerate(board.nets) if i and n]
    names = [n for _, n in nets]
    out: list[Unmatched] = []
    checked = 0

    def add(where: tuple[Any, ...], pattern: str, what: str, domain: Any = None) -> None:
        sug, n = suggest_pattern(pattern, domain) if domain is not None else (None, 0)
        msg = f"{_key_text(where)} '{pattern}' {what}"
        if domain is not None:
            msg += f"; {REGEX_SEMANTICS}"
            if sug is not None:
                msg += f": '{sug}' would match {n}"
        out.append(Unmatched(where, _key_text(where), pattern, msg, pc.line_of(*where), sug, n))

    # signals: first declared pattern wins, in config order (analysis.signals.assign_signals)
    claimed: dict[int, str] = {}
    for sid, pats in pc.signals.items():
        for i, rx in enumerate(pats):
            checked += 1
            p = rx.pattern
            hits = {idx for idx, n in nets if fullmatch(rx, n)}
            where = ("signals", sid, i)
            if not hits:
                add(where, p, "matches no net of this board", names)
            else:
                others = {claimed[h] for h in hits if h in claimed}
                if all(h in claimed for h in hits) and sid not in others:
                    add(
                        where,
                        p,
                        f"declares no net as {sid}: all {len(hits)} nets it matches are "
                        f"declared earlier as {', '.join(sorted(others))} (first match wins)",
                    )
            for h in hits:
                claimed.setdefault(h, sid)

    # backdrill: first matching entry wins (analysis.via_stubs.config_backdrills)
    specs = pc.backdrill
    if specs:
        from .analysis.via_stubs import config_backdrills

        classes = sorted({board.net_classes.class_of(n) for n in names})
        signals = sorted({a.signal for a in (net_signal or {}).values()})
        domains = {"net": names, "net_class": classes, "signal": signals}
        taken: set[int] = set()
        for k, spec in enumerate(specs):
            checked += 1
            hits = set(config_backdrills(board, [spec], net_signal)[0])
            match = dict(spec.match.items())
            if not hits:
                alone = {
                    key: _fullmatch_count(str(p), domains.get(key, ())) for key, p in match.items()
                }
                dead = [key for key, n in alone.items() if n == 0]
                for key in dead or list(match)[:1]:
                    what = {
                        "net": "matches no net of this board",
                        "net_class": "matches no net class of this board's nets",
                        "signal": "matches no signal type carried by a net of this board",
                    }.get(key, "matches nothing")
                    if not dead:
                        what = (
                            f"applies to no net: each of {', '.join(match)} matches, but no net "
                            "matches them all"
                        )
                    add(
                        ("backdrill", k, "match", key),
                        str(match[key]),
                        what + " (no backdrill is applied)",
                        domains.get(key) if dead else None,
                    )
            elif hits <= taken:
                key = next(iter(match), "match")
                add(
                    ("backdrill", k, "match", key),
                    str(match.get(key, "")),
                    f"applies to no via: all {len(hits)} nets it matches are taken by an earlier "
                    "backdrill entry (first match wins)",
                )
            taken |= hits

    # rails: each pattern, on the whole net name or its last "/" part (analysis.pdn)
    leaves = sorted({n.rsplit("/", 1)[-1] for n in names} | set(names))
    for i, r in enumerate(pc.rails):
        for j, p in enumerate(r.nets):
            checked += 1
            if _fullmatch_count(str(p), leaves) == 0:
                add(
                    ("rails", i, "nets", j),
                    str(p),
                    f"matches no net of this board (rail {r.name})",
                    leaves,
                )

    # capacitors: parts: by reference designator (analysis.capacitors)
    parts = pc.capacitors.parts
    if parts:
        refs = {fp.reference for fp in getattr(board, "footprints", ())}
        for ref in parts:
            checked += 1
            if str(ref) not in refs:
                add(
                    ("capacitors", "parts", ref),
                    str(ref),
                    "is no footprint reference of this board (the override applies to nothing)",
                )

    # package_delays: a part the board lacks, a pad its footprint lacks (analysis.delay)
    declared = pc.package_delays
    if declared:
        pads_of = {fp.reference: {p.number for p in fp.pads} for fp in board.footprints}
        for ref, part in declared.items():
            checked += 1
            have = pads_of.get(ref)
            if have is None:
                add(
                    ("package_delays", ref),
                    ref,
                    "is no footprint reference of this board (its package delays apply to nothing)",
                )
                continue
            for pad in part.pins_ps:
                if pad not in have:
                    add(
                        ("package_delays", ref, "pins_ps", pad),
                        pad,
                        f"is no pad of {ref} (its package delay applies to nothing)",
                    )

    # loss: budgets_db / extra_db: a signal type no net of this board carries
    if net_signal is not None:
        carried = {a.signal for a in net_signal.values()}
        for part in ("budgets_db", "extra_db"):
            for sid in getattr(pc.loss, part):
                checked += 1
                if sid not in carried:
                    add(
                        ("loss", part, sid),
                        str(sid),
                        f"applies to nothing: no net of this board is of signal type {sid} "
                        f"(declare its nets under signals: {sid}: [...])",
                    )

    # stackup: materials: on a board without a stack-up applies to nothing
    mats = pc.stackup.materials
    if mats and getattr(board, "stackup", None) is None:
        for name in mats:
            checked += 1
            add(
                ("stackup", "materials", name),
                str(name),
                "applies to nothing: the board has no stack-up (define it in KiCad's Board "
                "Setup > Physical Stackup)",
            )
    return out, checked
