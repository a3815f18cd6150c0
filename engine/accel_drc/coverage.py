"""Coverage: every high-speed pair and net, its interface, and which rules really looked at it.

A checker that prints PASS after examining nothing lies by omission (LPDDR4, MIPI,
HDMI, SFP and PCIe lanes named ``TX0_P`` used to pass without a word).  So the result lists:

* every **differential pair** (KiCad's ``MatchDpSuffix`` pairs plus JEDEC ``_t``/``_c``): a
  pair is how every multi-Gb/s serial interface is carried, so each one is worth a line;
* every **single-ended net with a recognised high-speed type** (DDR DQ/CA, C-PHY wires).  A
  single-ended net whose name tells nothing is not listed: no name heuristic separates a 3 Gb/s
  DQ line from a 9600 Bd UART ``TX`` reliably, and a list of every ``TX`` would bury the pairs.

For each: the interface (from accel-drc.yaml, a net class, a name, a connector pin or AC-coupling
to a typed pair; ``excluded`` for reference clocks and sideband; ``unknown``), how it was
recognised (``recognised_by``), its ``basis`` as the signal assignment gives it to every check
(``declared``, ``assumed`` where only the family is known; ``unknown`` without an interface),
the rules that examined it with their outcome, and in words why nothing did where nothing did.

Which nets a rule examined comes from ``CheckOutcome.examined_nets`` where the check reports it
(impedance: pairs with a coupled run long enough to judge; via_stub: nets with a connected
barrel; open_channel: every listed net), else from ``rule.signal`` (a per-signal rule examines
every net of its signal type).  Board-level rules (layer count, Tg, plane copper, PDN) are not
per-net and are not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .results import Finding, Rule, Severity, Status

if TYPE_CHECKING:
    from .analysis import Analysis
    from .model import Board
    from .packs import Library

#: checks that judge a net against its interface's limits ("checked" in the summary); a
#: connectivity check runs on every listed net, known interface or not, and is listed apart
INTERFACE_CHECKS = ("impedance", "via_stub", "laminate_df", "foil")
#: the timing, return-path and crosstalk kinds each row states as run (with the result) or not
#: (and why)
SI_CHECKS = ("skew", "return_path", "crosstalk")

_RESULT_RANK = {"violation": 3, "cannot_verify": 2, "waived": 1, "pass": 0}

#: the pseudo-rule under which pairs of unknown interface are reported (one info finding)
UNKNOWN_RULE = Rule(
    id="coverage.unknown_interface",
    check="coverage",
    severity=Severity.INFO,
    params={},
    why="A differential pair whose interface is not known gets no impedance, loss, foil or stub "
    "check: it passes unseen.  Name its interface in accel-drc.yaml (signals:) and every rule of "
    "that interface applies to it.",
    source="accel-drc: nothing high-speed passes unseen (rules/signals.yaml, rules/connectors.yaml)",
    pack="coverage",
    title="differential pairs of unknown interface",
)


def _pair_regex(names: Sequence[str]) -> str:
    """One whole-name regex matching exactly ``names`` (the two halves of a pair): the common
    prefix, then the differing tails as a character class or an alternation."""
    if len(names) == 1:
        return re.escape(names[0])
    pre = names[0]
    for n in names[1:]:
        while not n.startswith(pre):
            pre = pre[:-1]
    post = names[0][len(pre) :]
    for n in names[1:]:
        while not n.endswith(post):
            post = post[1:]
    mids = [n[len(pre) : len(n) - len(post)] for n in names]
    if all(len(m) == 1 for m in mids):
        body = "[" + "".join(re.escape(m) if m in "\\]^-" else m for m in sorted(mids)) + "]"
    else:
        body = "(" + "|".join(re.escape(m) for m in sorted(mids)) + ")"
    return re.escape(pre) + body + re.escape(post)


def rule_nets(
    rule: Rule, examined: frozenset[int] | None, analysis: Analysis
) -> frozenset[int] | None:
    """The nets ``rule`` examined: the check's own word, else every net of ``rule.signal``;
    None for a board-level rule."""
    if examined is not None:
        return examined
    if rule.signal:
        return frozenset(analysis.nets_by_signal(rule.signal))
    return None


def _finding_nets(f: Finding, index: Mapping[str, int]) -> set[int]:
    names = {f.net} if f.net else set()
    ev = f.evidence or {}
    for key in ("nets", "pair_nets"):
        v = ev.get(key)
        if isinstance(v, (list, tuple)):
            names.update(x for x in v if isinstance(x, str))
    return {index[n] for n in names if n in index}


def _si_checks(
    row: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    nets: Sequence[int],
    unjudged: Mapping[int, Sequence[str]],
    examined: Sequence[tuple[Rule, frozenset[int] | None]],
    signals: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Per kind of :data:`SI_CHECKS`: ``run: <worst result>``, or ``not run: <why>`` (where
    the type has no rule of a kind because its physics is outside the check's model, the
    signal's ``not_modelled`` says why)."""
    out = {}
    itf = row.get("interface")
    for kind in SI_CHECKS:
        done = [r["result"] for r in runs if r["check"] == kind]
        if done:
            out[kind] = "run: " + max(done, key=lambda r: _RESULT_RANK[r])
            continue
        notes = [x for n in nets for x in unjudged.get(n, ()) if x.startswith(kind)]
        if itf is None:
            why = "interface unknown"
        elif itf in ("refclk", "excluded"):
            why = "a reference clock or sideband net"
        elif not any(r.check == kind and r.signal == itf for r, _ in examined):
            why = f"the pack has no {kind} rule for {row.get('interface_name', itf)}"
            st = (signals or {}).get(itf)
            reason = dict(getattr(st, "not_modelled", ())).get(kind)
            if reason:
                why += f": {reason}"
        elif notes:
            why = notes[0]
        elif kind in ("return_path", "crosstalk") and row.get("kind") == "net":
            why = "a single-ended net of a serial link's type (a sideband): not judged"
        else:
            why = "nothing to judge (no partner, group, reference change or recognised neighbour)"
        out[kind] = "not run: " + why
    return out


def build(
    board: Board,
    analysis: Analysis,
    lib: Library,
    examined: Sequence[tuple[Rule, frozenset[int] | None]],
    findings: Sequence[Finding],
    board_class: str,
    unjudged: Mapping[int, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """``CheckResult.coverage``: ``{"pairs": [...], "summary": {...}}``.

    ``unjudged`` (from :func:`not_judged`) lists per net the runs a rule deliberately left
    unjudged, such as impedance breakouts; each pair row carries them as ``breakout_runs``."""
    unjudged = unjudged or {}
    from .analysis.channels import connector_nets
    from .analysis.signals import basis_of, connectors_for

    names = board.nets
    sig = analysis.net_signal
    index = {n: i for i, n in enumerate(names) if n}
    pairs = list(board.diff_pairs)
    paired = {n for p in pairs for n in (p.positive, p.negative)}
    items: list[tuple[str, tuple[int, ...], str]] = [
        (p.name, (p.positive, p.negative), "pair") for p in pairs
    ]
    items += sorted((names[n], (n,), "net") for n in sig if n not in paired)
    hits = connector_nets(board, connectors_for(lib))

    # which rules examined which nets, and what they said about each net
    per_net_rules: dict[int, list[Rule]] = {}
    for rule, nets in examined:
        if nets is None:
            continue
        for n in nets:
            per_net_rules.setdefault(n, []).append(rule)
    result_of: dict[tuple[str, int], str] = {}
    by_rule_prefix: dict[str, str] = {}
    for rule, _ in examined:
        by_rule_prefix[rule.id] = rule.id
    for f in findings:
        rid = f.rule
        while rid and rid not in by_rule_prefix:
            rid = rid.rpartition(".")[0]
        if not rid:
            continue
        res = f.status.value
        for n in _finding_nets(f, index):
            key = (rid, n)
            if _RESULT_RANK[res] > _RESULT_RANK[result_of.get(key, "pass")]:
                result_of[key] = res
    pack_signals = {r.signal for r, _ in examined if r.signal}
    routed = set(analysis.net_layers)

    rows = []
    for name, nets, kind in items:
        a = next((sig[n] for n in nets if n in sig), None)
        row: dict[str, Any] = {"name": name, "kind": kind, "nets": [names[n] for n in nets]}
        if a is not None:
            st = lib.signals.get(a.signal)
            row["interface"] = a.signal
            row["interface_name"] = st.name if st else a.signal
            row["basis"] = a.basis  # the one owner (analysis/signals.py)
            row["recognised_by"] = a.how
            row["evidence"] = a.pattern
            if a.assumption:
                row["assumption"] = a.assumption
        else:
            excl = next((p.pattern for p in lib.exclude for n in nets if p.search(names[n])), None)
            clock = next((hits[n] for n in nets if n in hits and hits[n].type == "refclk"), None)
            side = next(
                (analysis.net_sideband[n] for n in nets if n in analysis.net_sideband), None
            )
            if side is not None:
                row.update(
                    interface="sideband",
                    interface_name=side.what,
                    basis=basis_of(None),
                    recognised_by=side.how,
                    evidence=side.pattern,
                )
            elif clock is not None:
                row.update(
                    interface="refclk",
                    interface_name="reference clock",
                    basis=basis_of(None),
                    recognised_by="connector",
                    evidence=f"{clock.ref}.{clock.pin} on {clock.connector_name} ({clock.what})",
                )
            elif excl is not None:
                row.update(
                    interface="excluded",
                    interface_name="clock / sideband",
                    basis=basis_of(None),
                    recognised_by="net_name",
                    evidence=excl,
                )
            else:
                row.update(interface=None, interface_name="unknown", basis="unknown")
        runs = []
        seen = set()
        for n in nets:
            for rule in per_net_rules.get(n, ()):
                if rule.id in seen:
                    continue
                seen.add(rule.id)
                worst = max(
                    (result_of.get((rule.id, m), "pass") for m in nets),
                    key=lambda r: _RESULT_RANK[r],
                )
                runs.append({"rule": rule.id, "check": rule.check, "result": worst})
        runs.sort(key=lambda r: r["rule"])
        row["checks_run"] = runs
        row["si_checks"] = _si_checks(row, runs, nets, unjudged, examined, lib.signals)
        interface_runs = [r for r in runs if r["check"] in INTERFACE_CHECKS]
        row["checked"] = bool(interface_runs)
        is_routed = any(n in routed for n in nets)
        row["routed"] = is_routed
        row["breakout"] = False
        runs_left: list[str] = []
        for n in nets:
            for note in unjudged.get(n, ()):
                if note not in runs_left:
                    runs_left.append(note)
        why = None
        if not interface_runs:
            itf = row["interface"]
            if itf is None:
                why = "interface unknown: declare it in accel-drc.yaml (signals:)"
            elif itf in ("refclk", "excluded", "sideband"):
                why = "a reference clock or sideband net, not a data lane (signals.yaml exclude)"
            elif not is_routed:
                why = "not routed: no track or zone of this net on the board"
            elif itf not in pack_signals:
                why = f"the {board_class} pack has no rule for {row['interface_name']}"
            elif runs_left:
                row["breakout"] = True
                why = "breakout / escape runs only (listed, never judged): " + "; ".join(runs_left)
            else:
                why = "its rules found nothing to measure (no connected via, no coupled run)"
        elif kind == "pair" and row["interface"] not in (None, "refclk", "excluded", "sideband"):
            imp = [
                r for r in examined if r[0].check == "impedance" and r[0].signal == row["interface"]
            ]
            if imp and is_routed and not any(r["check"] == "impedance" for r in runs):
                row["breakout"] = True
                why = (
                    "impedance not judged: no coupled run long enough (breakout / escape "
                    "routing only)"
                )
        row["breakout_runs"] = runs_left
        row["not_checked_because"] = why
        rows.append(row)

    pair_rows = [r for r in rows if r["kind"] == "pair"]
    net_rows = [r for r in rows if r["kind"] == "net"]
    n_pairs = len(pair_rows)
    checked = sum(1 for r in pair_rows if r["checked"])
    unknown = sum(1 for r in pair_rows if r["interface"] is None)
    clocks = sum(1 for r in pair_rows if r["interface"] in ("refclk", "excluded", "sideband"))
    breakouts = sum(1 for r in pair_rows if r["breakout"])
    breakout_runs = sum(len(r["breakout_runs"]) for r in pair_rows)
    unrouted = sum(
        1
        for r in pair_rows
        if not r["checked"]
        and r["interface"] not in (None, "refclk", "excluded", "sideband")
        and not r["routed"]
    )
    no_rule = (
        n_pairs
        - checked
        - unknown
        - clocks
        - unrouted
        - sum(1 for r in pair_rows if r["breakout"] and not r["checked"])
    )
    line = (
        f"pairs: {n_pairs} — {checked} checked, {unknown} of unknown interface, "
        f"{breakouts} breakout{'s' if breakouts != 1 else ''}"
        + (f" (breakout runs listed, not judged: {breakout_runs})" if breakout_runs else "")
    )
    extra = []
    if clocks:
        extra.append(f"{clocks} clock/sideband")
    if unrouted:
        extra.append(f"{unrouted} not routed")
    if no_rule > 0:
        extra.append(f"{no_rule} of a known interface but unchecked")
    if extra:
        line += ", " + ", ".join(extra)
    if net_rows:
        line += (
            f"; single-ended high-speed nets: {len(net_rows)} — "
            f"{sum(1 for r in net_rows if r['checked'])} checked"
        )
    summary = {
        "pairs": n_pairs,
        "checked": checked,
        "unknown_interface": unknown,
        "breakouts": breakouts,
        "breakout_runs": breakout_runs,
        "clock_or_sideband": clocks,
        "not_routed": unrouted,
        "known_unchecked": max(0, no_rule),
        "single_ended": len(net_rows),
        "single_ended_checked": sum(1 for r in net_rows if r["checked"]),
        "line": line,
    }
    return {"pairs": rows, "summary": summary}


#: the pseudo-rule under which a board whose format carries no pin names says what that costs
PIN_NAMES_RULE = Rule(
    id="coverage.pin_names_unknown",
    check="coverage",
    severity=Severity.INFO,
    params={},
    why="accel-drc recognises some interfaces by the pins a net lands on: a DRAM's generation by "
    "its ball names, PCIe/USB/MIPI by an IC's pin names, sideband by a pin's name. A board file "
    "with no pin names (IPC-2581) leaves those to net names and classes: a net they do not name "
    "is of unknown interface, not a pass.",
    source="accel-drc: a guess is not a fact (docs/ipc2581.md, What KiCad's exporter loses)",
    pack="coverage",
    title="pin names not in the board file",
)
#: parts with at least this many pads are the ICs whose pin names could name an interface
PIN_NAMES_MIN_PADS = 8


def pin_names_finding(board: Board) -> Finding | None:
    """One info *cannot verify* finding when the board's format carries no pin names
    (``Board.not_carried``) and the board has ICs: interface recognition by pin and ball
    names could not run on them; the file reader of the same board can."""
    if "pin_names" not in board.not_carried:
        return None
    parts = [fp.reference for fp in board.footprints if len(fp.pads) >= PIN_NAMES_MIN_PADS]
    if not parts:
        return None
    shown = ", ".join(parts[:12]) + (" …" if len(parts) > 12 else "")
    return Finding(
        rule=PIN_NAMES_RULE.id,
        check=PIN_NAMES_RULE.check,
        severity=Severity.INFO,
        status=Status.CANNOT_VERIFY,
        message=f"this {board.format} file carries no pin names: interfaces recognised by pin "
        f"or ball names (a DRAM by its balls, PCIe/USB/MIPI by an IC's pins, sideband pins) "
        f"were recognised by net names and classes only, on {len(parts)} part"
        f"{'s' if len(parts) != 1 else ''} of {PIN_NAMES_MIN_PADS} pads or more: {shown}",
        measured=len(parts),
        unit="parts",
        why=PIN_NAMES_RULE.why,
        source=PIN_NAMES_RULE.source,
        evidence={
            "parts": parts[:200],
            "format": board.format,
            "declare": "check the .kicad_pcb itself (it carries the pin names), or declare the "
            "nets' interfaces in accel-drc.yaml signals: {<type>: [...]}",
        },
    )


def unknown_interface_finding(coverage: Mapping[str, Any], lib: Library) -> Finding | None:
    """One info finding listing the pairs of unknown interface, with a ready-to-paste
    ``signals:`` block (the type left for the designer to name: guessing it is what the
    tool could not do)."""
    rows = [r for r in coverage.get("pairs", ()) if r["kind"] == "pair" and r["interface"] is None]
    if not rows:
        return None
    regexes = [_pair_regex(r["nets"]) for r in rows]
    quoted = ", ".join("'" + x.replace("'", "''") + "'" for x in regexes)
    shown = ", ".join(r["name"] for r in rows[:12]) + (" …" if len(rows) > 12 else "")
    types = ", ".join(lib.signals)
    return Finding(
        rule=UNKNOWN_RULE.id,
        check=UNKNOWN_RULE.check,
        severity=Severity.INFO,
        status=Status.CANNOT_VERIFY,
        message=f"{len(rows)} differential pair{'s' if len(rows) != 1 else ''} of unknown "
        f"interface, checked by no interface rule: {shown}",
        measured=len(rows),
        unit="pairs",
        net=rows[0]["nets"][0],
        why=UNKNOWN_RULE.why,
        source=UNKNOWN_RULE.source,
        evidence={
            "pairs": [r["name"] for r in rows],
            "nets": [n for r in rows for n in r["nets"]][:200],
            "declare": f"accel-drc.yaml: signals: {{<type>: [{quoted}]}}  (<type> one of: {types}; "
            "split the list by interface)",
            "signals_yaml": "signals:\n  <type>: [" + quoted + "]\n",
        },
    )


def not_judged(outcomes: Iterable[Any]) -> dict[int, list[str]]:
    """net -> what the rules looked at and deliberately did not judge (breakouts), merged."""
    out: dict[int, list[str]] = {}
    for outcome in outcomes:
        for n, notes in (getattr(outcome, "not_judged", None) or {}).items():
            got = out.setdefault(n, [])
            got.extend(x for x in notes if x not in got)
    return out


def examined_pairs(
    rules: Iterable[tuple[Rule, Any]], analysis: Analysis
) -> list[tuple[Rule, frozenset[int] | None]]:
    """(rule, nets it examined) for the rules a run ran (``outcome`` may be None: crashed)."""
    out = []
    for rule, outcome in rules:
        nets = getattr(outcome, "examined_nets", None) if outcome is not None else None
        if outcome is None:
            out.append((rule, frozenset()))
            continue
        out.append((rule, rule_nets(rule, nets, analysis)))
    return out
