"""Waivers: findings a reviewer looked at and accepted, with a reason, an owner and an expiry.

A waiver names a rule (glob on the rule id: ``training.laminate_df.*``, or a rule id, which also
covers the findings a check reports under sub-ids of it: ``edge.material_consistency`` waives
``edge.material_consistency.kicad_default``, the id SARIF, JUnit and ``accel-drc rules`` list
for it) and may narrow it with
regexes on the net, the layer and the item uuids (whole-string match, like every regex in the
config: ``PCIE_TX.*``, not ``^PCIE_TX``).  On a differential-pair finding (its net is the pair,
``/EthA``) the net regex may name the pair or either of its nets (``/EthA_P``, ``/EthA_N``,
``/EthA_[PN]``).  A reason is required.  An expired waiver waives
nothing and is reported as expired, with the findings it would have covered; a waiver that
matches nothing is reported as stale (the board changed, or the waiver has a typo), with a
``hint`` saying which part matched nothing, so waivers cannot rot silently.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .config import Waiver
from .hostile import fullmatch
from .results import Finding, Status


def rule_matches(pattern: str, f: Finding) -> bool:
    """Whether a waiver's ``rule`` names the finding: a glob on the finding's rule id or check
    kind, or the id of the rule the finding is a sub-finding of (``pattern`` + ``.`` + more),
    because reports list rules by their pack id while some findings carry a sub-id."""
    return (
        fnmatch.fnmatchcase(f.rule, pattern)
        or fnmatch.fnmatchcase(f.check, pattern)
        or f.rule.startswith(pattern + ".")
    )


def net_names(f: Finding) -> list[str]:
    """The names a waiver's ``net`` may match on ``f``: its net (a pair finding names the pair,
    ``/EthA``) and, on a pair finding, the pair's two nets (``evidence["nets"]``: ``/EthA_P``,
    ``/EthA_N``), so a waiver written with either net, or a pattern of both, covers the pair.
    A finding over many nets (a board-wide summary) is matched by its own net only: one net
    named in a waiver must not waive the others."""
    names = [f.net] if f.net is not None else []
    nets = f.evidence.get("nets") if isinstance(f.evidence, Mapping) else None
    if isinstance(nets, (list, tuple)) and 0 < len(nets) <= 2:
        names += [str(n) for n in nets if isinstance(n, str) and n not in names]
    return names


def _matches(w: Waiver, f: Finding) -> bool:
    if not rule_matches(w.rule, f):
        return False
    if w.net is not None and not any(fullmatch(w.net, n) for n in net_names(f)):
        return False
    if w.layer is not None and (f.layer is None or not fullmatch(w.layer, f.layer)):
        return False
    return not (w.uuid is not None and not any(fullmatch(w.uuid, u) for u in f.items))


def apply_waivers(
    findings: Sequence[Finding],
    waivers: Sequence[Waiver | Mapping[str, Any]],
    today: _dt.date | None = None,
    lines: Sequence[int | None] = (),
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """Return the findings (waived ones with status ``waived`` and the waiver attached) and one
    report row per waiver: {…the waiver…, state: applied | expired | stale, matched, line}.

    Only violations and cannot-verify findings can be waived; the first live waiver that matches
    a finding takes it.
    """
    today = today or _dt.date.today()
    # the config's typed waivers; mappings (already-valid waiver data) are typed here, once
    waivers = [w if isinstance(w, Waiver) else Waiver.of(w) for w in waivers]
    rows: list[dict[str, Any]] = []
    live = []
    for i, w in enumerate(waivers):
        expires = w.expires
        expired = expires is not None and _dt.date.fromisoformat(expires) < today
        row = {
            "rule": w.rule,
            "net": w.net,
            "layer": w.layer,
            "uuid": w.uuid,
            "reason": w.reason,
            "owner": w.owner,
            "expires": expires,
            "state": "expired" if expired else "applied",
            "matched": 0,
            "line": lines[i] if i < len(lines) else None,
        }
        rows.append(row)
        live.append(not expired)
    out = []
    for f in findings:
        taken = False
        for i, w in enumerate(waivers):
            if not _matches(w, f):
                continue
            rows[i]["matched"] += 1
            if live[i] and not taken:
                waiver = {k: rows[i][k] for k in ("rule", "reason", "owner", "expires", "line")}
                out.append(replace(f, status=Status.WAIVED, waiver=waiver))
                taken = True
        if not taken:
            out.append(f)
    for i, row in enumerate(rows):
        if row["matched"] == 0:
            row["state"] = "stale" if row["state"] == "applied" else "expired"
            hint = _stale_hint(waivers[i], findings)
            if hint:
                row["hint"] = hint
    return out, rows


def _stale_hint(w: Waiver, findings: Sequence[Finding]) -> str | None:
    """Why a waiver matched nothing, when its rule does match findings but a regex does not:
    usually a prefix written without ``.*`` (config regexes match the whole name)."""
    from .config import REGEX_SEMANTICS, suggest_pattern

    same_rule = [f for f in findings if rule_matches(w.rule, f)]
    if not same_rule:
        return f"rule {w.rule!r} matches no finding of this run"
    for key in ("net", "layer", "uuid"):
        pattern = getattr(w, key)
        if pattern is None:
            continue
        values = {u for f in same_rule for u in f.items} if key == "uuid" else None
        if key == "net":
            values = {n for f in same_rule for n in net_names(f)}
        if values is None:
            values = {getattr(f, key) for f in same_rule if getattr(f, key) is not None}
        if not any(fullmatch(pattern, v) for v in values):
            sug, n = suggest_pattern(pattern, sorted(values))
            text = f"{key} '{pattern}' matches no {key} of the {w.rule} findings; {REGEX_SEMANTICS}"
            return text + (f": '{sug}' would match {n}" if sug else "")
    return None
