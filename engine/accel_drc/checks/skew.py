"""``skew``: intra-pair and group skew in picoseconds, end pad to end pad.

What it checks:
    One rule per signal type (``rule.signal``).  Every differential pair of the type, joined
    across AC-coupling capacitors into one lane (``analysis/channels``): the delay of P minus
    the delay of N, against ``max_intra_pair_ps`` (or ``max_intra_pair_mm``, a length limit
    converted at the pair's own velocity on this board, or ``max_intra_pair_ui`` of the unit
    interval).  With ``group``: ``ddr`` every DQ/DM net against the DQS pair of its byte lane
    (``max_group_ps``) and every address/command net against CK (``max_ca_ck_ps``); ``mipi``
    every data lane against the clock lane of its link (``max_group_ui``).  The delay of a net
    is the sum of its tracks at their layer's velocity (εeff from the field solve of the
    cross-section: microstrip and stripline differ), its via barrels over the span the signal
    travels (entry to exit layer), and its pads' package (pad-to-die) delays: declared in
    accel-drc.yaml (``package_delays: REF: {pins_ps: {PAD: ps}}``, or ``{delays: matched |
    compensated | none}`` for a whole part) or on the pads in KiCad 10 (``die_delay``)
    (``analysis/delay.py``).  The finding says where the skew is made (the layer runs, the
    vias, the die delays that differ) and the fix.
Why:
    Skew within a pair turns differential signal into common mode (EMI, a closed eye); skew
    between data and strobe eats the receiver's setup/hold window.  A millimetre tool misses
    what a via barrel on one leg only or a microstrip run on one leg only adds.
Parameters:
    ``max_intra_pair_ps`` (ps, > 0, or null); ``max_intra_pair_mm`` (mm of track equivalent,
    > 0, or null); ``max_intra_pair_ui`` (fraction of a UI, > 0, or null): the first given is
    the limit; ``group`` (``none`` | ``ddr`` | ``mipi``); ``max_group_ps`` (ps, DQ/DM to DQS);
    ``max_ca_ck_ps`` (ps, address/command to CK); ``max_group_ui`` (UI, data lane to clock).
Cannot verify when:
    A velocity cannot be computed (no stack-up, a layer without a reference or εr, a via span
    crossing an undeclared height): one finding per rule listing the nets and what to declare.
    A skew that fails on KiCad's default stack-up (εr 4.5 assumed) is reported with its number
    as *cannot verify*: declare the stack-up.  A DDR group skew that fails while a pad of its
    nets has no package delay declared (counted 0 ps) is *cannot verify*, with the
    ``package_delays:`` entry for those pads.  A skew over a published limit its signal lists
    as ``skew_limit`` under ``unconfirmed`` (rules/signals.yaml: a typical value, not a
    requirement) is *cannot verify* with its number, until a ``.kicad_dru`` skew rule declares
    the limit.
Example:
    ``{check: skew, signal: pcie4, severity: error, params: {max_intra_pair_mm: 0.127}}``: P
    routed 0.467 mm longer than N with two extra 1.6 mm barrels on P has 3.667 mm (≈ 23 ps) of
    skew and fails, where a planar length check sees 0.467 mm.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..results import Rule, Severity, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

if TYPE_CHECKING:
    from ..analysis.delay import NetDelay
    from ..model import TimingRule

KIND = "skew"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("via_stubs",)

_LIMIT = {"type": ["number", "null"], "exclusiveMinimum": 0}
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "max_intra_pair_ps": _LIMIT,
        "max_intra_pair_mm": _LIMIT,
        "max_intra_pair_ui": _LIMIT,
        "group": {"enum": ["none", "ddr", "mipi"]},
        "max_group_ps": _LIMIT,
        "max_ca_ck_ps": _LIMIT,
        "max_group_ui": _LIMIT,
    },
}

_TOL_PS = 1e-6
#: the name a signal lists under ``unconfirmed`` when its intra-pair limit is a layout guide's
#: typical value with no primary source ([U]): a pair over it is cannot verify
UNCONFIRMED_LIMIT = "skew_limit"
#: what a DDR group finding says of its limit: it covers board and package delay together
_PACKAGE_SCOPE = "the limit covers board and package delay"
#: where a part's package delays come from, by :attr:`PadPackage.source`
_SOURCE_TEXT = {"board": "its pads' die_delay / die_length (KiCad)", "pins_ps": "pins_ps, per pad"}
#: the key of ``unknown`` under which unrouted nets are collected (not judged, not unknown)
_UNROUTED = "!unrouted"
_INTRA_KEYS = ("max_intra_pair_ps", "max_intra_pair_mm", "max_intra_pair_ui")
# DDR byte lanes and clocks, MIPI lanes (the leaf of a net or pair name, lower case)
_DDR_STROBE = re.compile(r"^(.*?)dqs_?(\d+)$")
_DDR_DATA = re.compile(r"^(.*?)(dq|dmi|dqm|dm)_?(\d+)(?:_?n)?$")
_DDR_CK = re.compile(r"^(.*?)(?:ck|clk)_?\d*$")
_DDR_CA = re.compile(r"^(.*?)(?:a\d+|ba\d|bg\d|ca\d+|cs\d*|cke\d*|odt\d*|act|par)(?:_?n)?$")
_MIPI_CLK = re.compile(r"^(.*?)(?:clk|ck)$")
_MIPI_DATA = re.compile(r"^(.*?)(?:d|data|lane)_?(\d)$")


def _leaf(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower()


#: LPDDR4's channel suffix (``DQ00_A``, ``CK_A``, ``DQ_S0A``, ``DMI_0A``)
_LP4_CHANNEL = re.compile(r"^(.*?)(?:_([ab])|(?<=\d)([ab]))$")


def _ddr_leaf(name: str) -> str:
    """A DRAM net's leaf with LPDDR4's channel suffix moved in front (``a:dq00``, ``a:ck``,
    ``a:dqs0``), so a channel's lanes and clock group as one bus's do."""
    leaf = _leaf(name)
    m = _LP4_CHANNEL.match(leaf)
    if m is None:
        return leaf
    base = m.group(1).replace("dq_s", "dqs")
    return f"{m.group(2) or m.group(3)}:{base}"


def _fmt(ps: float) -> str:
    return f"{ps:.2f} ps"


@register(KIND)
def check_skew(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    analysis = ctx.analysis
    nets = set(analysis.nets_by_signal(rule.signal)) if rule.signal else set()
    if not nets:
        return out
    board = ctx.board
    pairs = [p for p in board.diff_pairs if p.positive in nets and p.negative in nets]
    if not pairs and (rule.params or {}).get("group", "none") != "ddr":
        return out
    from ..analysis.channels import channels, series_links
    from ..analysis.delay import net_delays

    lanes = [[pairs[k] for k in ch] for ch in channels(pairs, series_links(board))]
    gaps = _pair_gaps(analysis, pairs, board)
    wanted = set(nets)
    delays = net_delays(analysis, sorted(wanted), gaps)
    out.checked = len(lanes)
    judged: set[int] = set()
    unknown: dict[str, list[str]] = {}
    st = analysis.signal_types.get(rule.signal) if rule.signal else None
    ui_ps = 1e3 / float(st.baud_gbd) if st is not None and getattr(st, "baud_gbd", None) else None
    params = rule.params or {}
    intra = any(params.get(k) is not None for k in _INTRA_KEYS)
    loose: dict[TimingRule, list[tuple[str, float, float, str, bool]]] = {}
    for lane in lanes:
        if _intra_pair(ctx, rule, lane, delays, params, ui_ps, out, unknown, loose) and intra:
            judged.update(n for p in lane for n in (p.positive, p.negative))
    group = params.get("group", "none")
    if group == "ddr":
        _ddr_groups(ctx, rule, pairs, nets, delays, params, out, unknown, judged, loose)
    elif group == "mipi":
        _mipi_groups(ctx, rule, lanes, delays, params, ui_ps, out, unknown, judged)
    out.findings.extend(_loose_warnings(rule, loose))
    _declared_lengths(ctx, rule, sorted(wanted), delays, out)
    unrouted = set(unknown.pop(_UNROUTED, ()))
    for n in wanted:
        if board.nets[n] in unrouted:
            out.not_judged.setdefault(n, []).append("skew: not routed (no track)")
    # the coverage table lists a net under this rule only where it was judged (or could not be)
    names_unknown = {n for v in unknown.values() for n in v}
    judged.update(n for n in wanted if board.nets[n] in names_unknown)
    judged.difference_update(out.not_judged)
    out.examined_nets = frozenset(judged)
    if unknown:
        names = sorted({n for v in unknown.values() for n in v})
        out.findings.append(
            finding(
                rule,
                Status.CANNOT_VERIFY,
                f"{rule.signal}: skew of {len(names)} net(s) not computed: "
                + "; ".join(sorted(unknown)),
                evidence={"nets": names[:50], "declare": sorted(unknown)},
            )
        )
    return out


def _pair_gaps(analysis: Any, pairs: Sequence[Any], board: Any) -> dict[int, float]:
    """A pair net -> the gap to its partner (the net class's, else none: a single line)."""
    out: dict[int, float] = {}
    rules = board.net_classes
    for p in pairs:
        cls = rules.class_of(board.nets[p.positive])
        nc = next((c for c in rules.classes if c.name == cls), None)
        gap = getattr(nc, "diff_pair_gap_mm", None)
        if gap:
            out[p.positive] = out[p.negative] = float(gap)
    return out


def _total(ds: Sequence[NetDelay], unknown: dict[str, list[str]], board: Any) -> float | None:
    """Sum of the delays of the nets of one leg (its halves across series capacitors)."""
    tot = 0.0
    for d in ds:
        if not d.layer_mm:  # not routed: open_channel reports it; nothing to time
            unknown.setdefault(_UNROUTED, []).append(board.nets[d.net])
            return None
        t = d.total_ps
        if t is None:
            for m in d.missing or ["a velocity"]:
                unknown.setdefault(m, []).append(board.nets[d.net])
            return None
        tot += t
    return tot


def _declare(basis: Mapping[str, str], analysis: Any) -> dict[str, str]:
    """``{"declare": …}`` for a skew resting on a default stack-up or an assumed signal type:
    the accel-drc.yaml entries that decide it, with the board's own dielectric names (a hint a
    user can paste, as every hint must be); empty when nothing is weak."""
    from ..analysis.stackup import declare_hint

    parts = []
    if "default" in (basis.get("eps_eff"), basis.get("heights")):
        stack = analysis.board.stackup
        names = [sl.name for sl in (stack.layers if stack is not None else ()) if sl.is_dielectric]
        hint = declare_hint({"h", "epsilon_r"}, dielectrics=names)
        if hint:
            parts.append(hint)
    if basis.get("signal") == "assumed":
        parts.append("declare the net's signal type (accel-drc.yaml signals: <type>: [...])")
    return {"declare": "; ".join(parts)} if parts else {}


def _basis(ds: Sequence[NetDelay], analysis: Any) -> dict[str, str]:
    from ..analysis.signals import nets_signal_basis
    from ..analysis.stackup import stackup_basis

    eps = "default" if any(d.basis == "default" for d in ds) else "declared"
    out = {"eps_eff": eps, "lengths": "measured"}
    # the heights matter to a velocity the stack-up's solve gave and to a via barrel's length;
    # not to a delay per mm the designer's tuning profile declares
    if any(d.vias or any(not v.source for v in d.velocity.values()) for d in ds):
        out["heights"] = stackup_basis(analysis).thickness
    out["signal"] = nets_signal_basis(analysis.net_signal, [d.net for d in ds])
    return out


def _where(a: Sequence[NetDelay], b: Sequence[NetDelay], board: Any) -> list[dict[str, Any]]:
    """Where leg ``a`` and leg ``b`` differ: per layer run, via barrels, die delays."""
    names = [c.name for c in board.copper_layers]
    rows: list[dict[str, Any]] = []
    layers = sorted({ly for d in (*a, *b) for ly in d.layer_mm})
    for ly in layers:
        la = sum(d.layer_mm.get(ly, 0.0) for d in a)
        lb = sum(d.layer_mm.get(ly, 0.0) for d in b)
        pa = sum(d.layer_ps.get(ly) or 0.0 for d in a)
        pb = sum(d.layer_ps.get(ly) or 0.0 for d in b)
        if abs(pa - pb) > 0.01:
            rows.append({"piece": f"tracks on {names[ly]}", "delta_mm": round(la - lb, 4),
                         "delta_ps": round(pa - pb, 3)})  # fmt: skip
    va = [v for d in a for v in d.vias]
    vb = [v for d in b for v in d.vias]
    pa = sum(v.ps or 0.0 for v in va)
    pb = sum(v.ps or 0.0 for v in vb)
    if abs(pa - pb) > 0.01:
        rows.append({"piece": f"via barrels ({len(va)} vs {len(vb)})",
                     "delta_mm": round(sum(v.length_mm or 0 for v in va)
                                       - sum(v.length_mm or 0 for v in vb), 4),
                     "delta_ps": round(pa - pb, 3),
                     "spans": sorted({f"{names[v.entry]}-{names[v.exit]}" for v in (*va, *vb)})})  # fmt: skip
    da = sum(d.die_ps for d in a)
    db = sum(d.die_ps for d in b)
    if abs(da - db) > 1e-9:
        rows.append({"piece": "pad-to-die delay", "delta_ps": round(da - db, 4)})
    return rows


def _fix(long: Sequence[NetDelay], short: Sequence[NetDelay], skew_ps: float, board: Any) -> str:
    """Add length on the shorter leg's main layer; or drop a via from the longer leg."""
    names = [c.name for c in board.copper_layers]
    main = max(short, key=lambda d: d.track_mm)
    ly = main.main_layer
    parts = []
    if ly is not None and main.velocity.get(ly) and main.velocity[ly].ps_per_mm:
        mm = skew_ps / main.velocity[ly].ps_per_mm  # type: ignore[operator]
        parts.append(f"add {mm:.3f} mm on {board.nets[main.net]} on {names[ly]}")
    nl = sum(len(d.vias) for d in long)
    ns = sum(len(d.vias) for d in short)
    if nl > ns:
        hop = max((v for d in long for v in d.vias), key=lambda v: v.ps or 0.0)
        parts.append(
            f"or drop one via from {board.nets[long[0].net]} (its {names[hop.entry]}-"
            f"{names[hop.exit]} barrel at ({hop.xy[0]:.2f}, {hop.xy[1]:.2f}) is "
            f"{hop.ps or 0.0:.2f} ps)"
        )
    return "; ".join(parts)


def _limit_ps(
    params: Mapping[str, Any], ds: Sequence[NetDelay], ui_ps: float | None
) -> tuple[float | None, str]:
    """The intra-pair limit in ps and how it was stated."""
    if params.get("max_intra_pair_ps") is not None:
        return float(params["max_intra_pair_ps"]), f"{params['max_intra_pair_ps']:g} ps"
    if params.get("max_intra_pair_mm") is not None:
        mm = float(params["max_intra_pair_mm"])
        main = max(ds, key=lambda d: d.track_mm)
        ly = main.main_layer
        vel = main.velocity.get(ly) if ly is not None else None
        if vel is None or vel.ps_per_mm is None:
            return None, ""
        return mm * vel.ps_per_mm, f"{mm:g} mm on {vel.layer_name} (εeff {vel.eps_eff:g})"
    if params.get("max_intra_pair_ui") is not None and ui_ps:
        u = float(params["max_intra_pair_ui"])
        return u * ui_ps, f"{u:g} UI of {ui_ps:.1f} ps"
    return None, ""


def _intra_pair(
    ctx: CheckContext,
    rule: Rule,
    lane: Sequence[Any],
    delays: Mapping[int, NetDelay],
    params: Mapping[str, Any],
    ui_ps: float | None,
    out: CheckOutcome,
    unknown: dict[str, list[str]],
    loose: dict[TimingRule, list[tuple[str, float, float, str, bool]]],
) -> bool:
    """Judge one lane's P against N; True when both delays were known (it was judged).  The
    limit is the designer's (:func:`_declared_rule`, basis ``declared``) where a ``.kicad_dru``
    skew rule ``within_diff_pairs`` selects the pair, else the rule's published one; a declared
    limit looser than the published one is noted in ``loose`` (one warning per rule)."""
    board = ctx.board
    p = [delays[x.positive] for x in lane]
    n = [delays[x.negative] for x in lane]
    tp, tn = _total(p, unknown, board), _total(n, unknown, board)
    if tp is None or tn is None:
        return False
    limit, stated = _limit_ps(params, p + n, ui_ps)
    declared = _declared_rule(board, [x for q in lane for x in (q.positive, q.negative)], True)
    limit_basis = "library"
    if declared is not None:
        mine, how = _limit_ps(_as_params(declared, "max_intra_pair"), p + n, ui_ps)
        if mine is not None:
            if limit is not None and mine > limit + _TOL_PS:
                loose.setdefault(declared, []).append(
                    (lane[0].name, mine, limit, stated, abs(tp - tn) > limit + _TOL_PS)
                )
            limit, stated, limit_basis = mine, f"{how}, {declared.where}", "declared"
    if limit is None:
        return False
    if limit_basis == "library" and _limit_unconfirmed(ctx, rule):
        limit_basis = "assumed"
        stated += "; [U] a typical value, not a requirement: declare yours (a .kicad_dru skew rule)"
    skew = tp - tn
    if abs(skew) <= limit + _TOL_PS:
        return True
    long, short = (p, n) if skew > 0 else (n, p)
    main = max(p, key=lambda d: d.track_mm)
    vel = main.velocity.get(main.main_layer) if main.main_layer is not None else None
    mm_eq = abs(skew) / vel.ps_per_mm if vel is not None and vel.ps_per_mm else None
    name = " + ".join(x.name for x in lane)
    where = _where(p, n, board)
    fix = _fix(long, short, abs(skew), board)
    out.findings.append(
        finding(
            rule,
            Status.CANNOT_VERIFY if limit_basis == "assumed" else Status.VIOLATION,
            f"{name}: intra-pair skew {_fmt(abs(skew))}"
            + (f" (≈ {mm_eq:.3f} mm of {vel.layer_name})" if mm_eq is not None and vel else "")
            + f" > {_fmt(limit)} ({stated}); "
            + (f"made by {where[0]['piece']}" if where else "")
            + (f"; fix: {fix}" if fix else ""),
            measured=round(abs(skew), 3),
            limit=round(limit, 3),
            unit="ps",
            net=board.nets[lane[0].positive],
            items=tuple(v.uuid for d in (*p, *n) for v in d.vias if v.uuid),
            evidence={
                "p_ps": round(tp, 3),
                "n_ps": round(tn, 3),
                "skew_mm_equivalent": None if mm_eq is None else round(mm_eq, 4),
                "where": where,
                "fix": fix,
                "nets": [board.nets[d.net] for d in (*p, *n)],
                **_declare(_basis(p + n, ctx.analysis), ctx.analysis),
            },
            basis={**_basis(p + n, ctx.analysis), "limit": limit_basis},
        )
    )
    return True


def _limit_unconfirmed(ctx: CheckContext, rule: Rule) -> bool:
    """Whether the rule's published limit is one its signal lists as unconfirmed ([U]): a
    typical value, not a requirement, so a net over it is cannot verify, with its number."""
    st = ctx.analysis.signal_types.get(rule.signal) if rule.signal else None
    return UNCONFIRMED_LIMIT in getattr(st, "unconfirmed", ())


def _as_params(r: TimingRule, prefix: str) -> dict[str, float | None]:
    """A declared rule's max as the check's own parameters (``<prefix>_ps`` or ``_mm``)."""
    return {f"{prefix}_{'ps' if r.time else 'mm'}": r.max}


def _net_matches(board: Any, net: int, term: tuple[str, str], pair_nets: set[int]) -> bool:
    """Whether ``net`` meets one condition term of a ``.kicad_dru`` rule (KiCad compares the
    strings caseless, with ``*``/``?`` wildcards).  ``inDiffPair``: the net is one of a pair
    and its name without the trailing +/-/P/N (KiCad's pair base name) matches."""
    from ..hostile import MAX_MATCH_NAME, glob_regex

    field, glob = term
    name = board.nets[net]
    if field == "NetClass":
        name = board.net_classes.class_of(name)
    elif field == "inDiffPair":
        if net not in pair_nets or not name or name[-1] not in "+-PNpn":
            return False
        name = name[:-1]
    return len(name) <= MAX_MATCH_NAME and glob_regex(glob.lower()).match(name.lower()) is not None


def _declared_rule(board: Any, nets: Sequence[int], within: bool) -> TimingRule | None:
    """The ``.kicad_dru`` skew rule that selects every one of ``nets`` (``within``: a
    ``within_diff_pairs`` rule, else a group rule); the last in the file wins, as in KiCad.  A
    rule limited to a layer or with no max is not a limit on the whole net: not used."""
    rules = [
        r
        for r in getattr(board.net_classes, "timing_rules", ())
        if r.kind == "skew" and r.within_diff_pairs == within and r.max and not r.layer
    ]
    if not rules:
        return None
    pair_nets = {n for p in board.diff_pairs for n in (p.positive, p.negative)}
    for r in reversed(rules):
        if all(any(_net_matches(board, n, t, pair_nets) for t in r.terms) for n in nets):
            return r
    return None


def _loose_warnings(
    rule: Rule, loose: Mapping[TimingRule, Sequence[tuple[str, float, float, str, bool]]]
) -> list[Any]:
    """One warning per declared rule looser than the published limit: which rule, by how much,
    on which pairs, and how many of them the published limit would fail."""
    out = []
    for r, rows in loose.items():
        worst = max(rows, key=lambda x: x[1] - x[2])
        over = [x[0] for x in rows if x[4]]
        out.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{r.where} allows {r.limit_text()} of skew ({worst[1]:.2f} ps on "
                f"{worst[0]}), looser than the published {worst[2]:.2f} ps ({worst[3]}) on "
                f"{len(rows)} of the {rule.signal} group(s) it selects; they are judged "
                f"against the declared limit"
                + (f": {len(over)} of them exceed the published one" if over else ""),
                measured=round(worst[1], 3),
                limit=round(worst[2], 3),
                unit="ps",
                severity=Severity.WARNING,
                rule_id=f"{rule.id}.declared_limit",
                evidence={
                    "declared": r.where,
                    "pairs": [x[0] for x in rows][:50],
                    "exceed_published": over[:50],
                },
                basis={"limit": "declared"},
            )
        )
    return out


def _mean_pair(d: Mapping[int, NetDelay], pair: Any, unknown: dict, board: Any) -> float | None:
    a = _total([d[pair.positive]], unknown, board)
    b = _total([d[pair.negative]], unknown, board)
    return None if a is None or b is None else 0.5 * (a + b)


def _pad_counts(analysis: Any) -> dict[int, int]:
    """Net -> number of pads on it (a multi-drop net has more than two): the pads of each net
    as the delay analysis lists them (:func:`~accel_drc.analysis.delay.pads_of_nets`, built
    once per run), counted."""
    from ..analysis.delay import pads_of_nets

    return {net: len(pads) for net, pads in pads_of_nets(analysis).items()}


#: at most this many members of a group listed in each of its findings (a DDR byte lane has 9,
#: an address/command group about 30)
MAX_GROUP_MEMBERS = 64


def _package_basis(ds: Sequence[NetDelay]) -> str:
    """``declared`` when every pad of every net of ``ds`` has its package delay declared
    (config or board), else ``assumed`` (an unknown package delay counted as 0 ps)."""
    ok = all(d.die_pads and not d.die_undeclared for d in ds)
    return "declared" if ok else "assumed"


def _declaration(part: str, source: str, config: Any) -> str:
    """Which declaration a part's package delays rest on, readable, with its config line."""
    from ..config import PACKAGE_STATEMENTS

    if source == "board":
        return f"the board: {_SOURCE_TEXT['board']}"
    name = (config.path or "accel-drc.yaml").replace("\\", "/").rsplit("/", 1)[-1]
    line = config.line_of("package_delays", part)
    where = f"{name}{f':{line}' if line else ''} package_delays: {part}"
    if source == "pins_ps":
        return f"{where}: {_SOURCE_TEXT['pins_ps']}"
    spec = config.package_delays.get(part)
    reason = spec.reason if spec is not None else None
    meaning = PACKAGE_STATEMENTS.get(source, source)
    return f"{where}: delays: {source}, {meaning}" + (f"; reason: {reason}" if reason else "")


def _package_evidence(ds: Sequence[NetDelay], config: Any) -> dict[str, Any]:
    """The evidence of a DDR group finding about its package delays: with every pad declared,
    which declaration each part's delays rest on (``package_delays``); else the pads left
    undeclared (``package_pads``) and the pasteable accel-drc.yaml entry that declares them
    (``declare``)."""
    from ..yamltext import yaml_quote as q

    if _package_basis(ds) == "declared":
        parts: dict[str, set[str]] = {}
        for d in ds:
            for pp in d.die_pads:
                parts.setdefault(pp.part, set()).add(pp.source or "")
        return {
            "package": f"{_PACKAGE_SCOPE}; package delays declared",
            "package_delays": {
                part: "; ".join(_declaration(part, src, config) for src in sorted(srcs))
                for part, srcs in sorted(parts.items())
            },
        }
    pads: dict[str, list[str]] = {}
    for d in ds:
        for pp in d.die_undeclared:
            pads.setdefault(pp.part, []).append(pp.pad[len(pp.part) + 1 :])
    if not pads:  # a net without pads: nothing to name
        return {"package": f"{_PACKAGE_SCOPE}; a net ends on no pad: its package is unknown"}
    per_pad = ", ".join(
        f"{q(part)}: {{pins_ps: {{" + ", ".join(f"{q(n)}: <ps>" for n in ns) + "}}"
        for part, ns in pads.items()
    )
    return {
        "package": f"{_PACKAGE_SCOPE}; an undeclared package delay counts 0 ps",
        "package_pads": {part: ns for part, ns in pads.items()},
        "declare": f"the package (pad-to-die) delays of {', '.join(pads)}, ps per pad from "
        f"each part's package flight-time table: package_delays: {{{per_pad}}}; for a part "
        "whose package delays are matched, compensated (the controller's per-bit deskew, or "
        "lengths already tuned with the package) or none, {delays: <statement>} in place of "
        "its pins_ps; or on the pads in KiCad 10 (pad property 'Pad to die delay')",
    }


def _record_packages(analysis: Any, rule: Rule, ds: Sequence[NetDelay]) -> None:
    """Remember the pads (and how their package delay is declared) of the nets a DDR group
    judged: the report extras list them per part, and ``init`` writes each part's entry."""
    got = analysis.memo.setdefault("skew_packages", {}).setdefault(rule.id, {})
    for d in ds:
        for pp in (*d.die_pads, *d.die_undeclared):
            got.setdefault(pp.part, {})[pp.pad[len(pp.part) + 1 :]] = pp.source


def _judge_group(
    ctx: CheckContext,
    rule: Rule,
    out: CheckOutcome,
    what: str,
    ref_name: str,
    ref_ps: float,
    members: Sequence[tuple[str, float, Sequence[NetDelay]]],
    ref_ds: Sequence[NetDelay],
    limit: float,
    stated: str,
    judged: set[int],
    package: bool = True,
    declared: Callable[[Sequence[NetDelay], float], tuple[float, str] | None] | None = None,
) -> None:
    """One finding per member whose delay differs from the reference's by more than ``limit``.

    A member or reference on more than two pads is multi-drop (fly-by address/command, a
    terminated clock): the sum of its tracks is not the delay to any one load, so it is judged
    load by load (:func:`_per_load`: the routed path from the driver to each part both reach),
    or, where the paths cannot be traced, not judged (``out.not_judged``, with why).  The group limits of the controller vendors apply to board and
    package delay together: where a net's pads declare no ``die_delay``, the package delay is
    taken as 0, an assumption (``die_delay: assumed``): where a pad of a judged net has no package
    delay declared (in accel-drc.yaml ``package_delays:``, or the pad's KiCad ``die_delay``), a
    failure is *cannot verify* with its number and the pasteable entry that declares those pads;
    with every pad declared it is a fact whose evidence names the declarations (``package``; the
    MIPI interconnect skew budget is the board's and the cable's, without the packages:
    ``package=False``).
    ``declared`` gives a member (its delays and its skew to the reference) the designer's own
    limit (a ``.kicad_dru`` skew rule that selects it and the reference), which replaces
    ``limit`` for it."""
    board = ctx.board
    pads = ctx.analysis.memo.get("skew_pad_counts")
    if pads is None:
        pads = ctx.analysis.memo["skew_pad_counts"] = _pad_counts(ctx.analysis)
    multi = [d.net for d in ref_ds if pads.get(d.net, 0) > 2]
    # every judged member's delay (ps), for a drawing of the group against its limit
    group = [
        [name, round(ps, 3)]
        for name, ps, ds in members
        if not multi and all(pads.get(d.net, 0) <= 2 for d in ds)
    ][:MAX_GROUP_MEMBERS]
    for name, ps, ds in members:
        many = multi + [d.net for d in ds if pads.get(d.net, 0) > 2]
        if not many:
            judged.update(d.net for d in (*ds, *ref_ds))
            if package:
                _record_packages(ctx.analysis, rule, (*ds, *ref_ds))
            cases = [(name, ps, ref_ps)]
        else:
            cases, why = _per_load(ctx.analysis, name, ds, ref_ds)
            if not cases:
                for d in ds:
                    out.not_judged.setdefault(d.net, []).append(
                        f"skew: {what}: {', '.join(board.nets[n] for n in many)} is multi-drop "
                        f"(more than two pads) and {why}"
                    )
                continue
            judged.update(d.net for d in (*ds, *ref_ds))
            if package:
                _record_packages(ctx.analysis, rule, (*ds, *ref_ds))
        # one finding per net: a multi-drop net by its worst load, every load in the evidence
        worst = max(cases, key=lambda c: abs(c[1] - c[2]))
        loads = {c[0].rsplit(" at ", 1)[1]: round(c[1] - c[2], 3) for c in cases} if many else {}
        _group_finding(ctx, rule, out, what, ref_name, worst, name, ds, ref_ds,
                       (limit, stated), package, declared, loads, group)  # fmt: skip


def _per_load(
    analysis: Any, name: str, ds: Sequence[NetDelay], ref_ds: Sequence[NetDelay]
) -> tuple[list[tuple[str, float, float]], str]:
    """A multi-drop member against a multi-drop (or point-to-point) reference, load by load:
    for each part both reach from the same driver, ("<member> at <part>", member delay − mean
    reference delay to that part).  Empty, with the reason, when the paths cannot be traced."""
    from ..analysis.delay import load_delays

    if len(ds) != 1:
        return [], "it is joined through series parts: per-load paths are not traced"
    memo = analysis.memo.setdefault("skew_loads", {})

    def loads(d: NetDelay) -> Any:
        if d.net not in memo:
            memo[d.net] = load_delays(analysis, d)
        return memo[d.net]

    mine, refs = loads(ds[0]), [loads(d) for d in ref_ds]
    if mine is None or any(r is None for r in refs):
        return [], "its driver cannot be told (two parts with as many pads)"
    if any(r.driver != mine.driver for r in refs):
        return [], f"its driver ({mine.driver}) is not the reference's"
    common = sorted(set(mine.to_part).intersection(*(r.to_part for r in refs)))
    if not common:
        lost = [m for x in (mine, *refs) for m in x.missing if not x.to_part]
        if lost:
            return [], f"its paths cannot be traced: {lost[0]}"
        return [], f"no load shares the reference's (from {mine.driver})"
    out = []
    for part in common:
        ref_ps = sum(r.to_part[part] for r in refs) / len(refs)
        out.append((f"{name} at {part}", mine.to_part[part], ref_ps))
    return out, ""


def _group_finding(
    ctx: CheckContext,
    rule: Rule,
    out: CheckOutcome,
    what: str,
    ref_name: str,
    case: tuple[str, float, float],
    name: str,
    ds: Sequence[NetDelay],
    ref_ds: Sequence[NetDelay],
    limits: tuple[float, str],
    package: bool,
    declared: Callable[[Sequence[NetDelay], float], tuple[float, str] | None] | None,
    loads: Mapping[str, float],
    group: Sequence[Sequence[Any]] = (),
) -> None:
    """The finding of one member ``case`` (label: the net, or the net at one load; its delay;
    the reference's delay) whose skew to the reference exceeds ``limits`` (ps, how stated), or
    the designer's limit where ``declared`` gives one."""
    label, ps, ref_ps = case
    delta = ps - ref_ps
    mine = declared(ds, delta) if declared is not None else None
    lim, said = mine if mine is not None else limits
    if abs(delta) <= lim + _TOL_PS:
        return
    main = max(ds, key=lambda d: d.track_mm)
    ly = main.main_layer
    vel = main.velocity.get(ly) if ly is not None else None
    mm = abs(delta) / vel.ps_per_mm if vel is not None and vel.ps_per_mm else None
    side = "longer" if delta > 0 else "shorter"
    fix = (
        f"{'remove' if delta > 0 else 'add'} {mm:.3f} mm on {name} on {vel.layer_name}"
        if mm is not None and vel is not None
        else ""
    )
    die = _package_basis((*ds, *ref_ds))
    typical = mine is None and _limit_unconfirmed(ctx, rule)
    out.findings.append(
        finding(
            rule,
            Status.CANNOT_VERIFY if typical else Status.VIOLATION,
            f"{label}: {what} skew to {ref_name} {_fmt(delta)} ({side}) > ±{_fmt(lim)} "
            f"({said})" + (f"; fix: {fix}" if fix else ""),
            measured=round(abs(delta), 3),
            limit=round(lim, 3),
            unit="ps",
            net=ctx.board.nets[ds[0].net],
            rule_id=f"{rule.id}.{what.replace('–', '_').replace('-', '_').lower()}",
            evidence={
                "member_ps": round(ps, 3),
                "reference_ps": round(ref_ps, 3),
                "reference": ref_name,
                "group": [list(m) for m in group],
                "fix": fix,
                **(
                    {
                        "load": label.rsplit(" at ", 1)[1],
                        "skew_ps_by_load": dict(loads),
                        "driver_to_load": "the routed path from the driver's pad (the part with "
                        "the most pads on the net) to each load's pad",
                    }
                    if loads
                    else {}
                ),
                **(_package_evidence((*ds, *ref_ds), ctx.config) if package else {}),
            },
            basis={
                **_basis([*ds, *ref_ds], ctx.analysis),
                "limit": "declared" if mine is not None else "assumed" if typical else "library",
                **({"die_delay": die} if package else {}),
            },
        )
    )


def _ddr_groups(
    ctx: CheckContext,
    rule: Rule,
    pairs: Sequence[Any],
    nets: set[int],
    delays: Mapping[int, NetDelay],
    params: Mapping[str, Any],
    out: CheckOutcome,
    unknown: dict[str, list[str]],
    judged: set[int],
    loose: dict[TimingRule, list[tuple[str, float, float, str, bool]]],
) -> None:
    """DQ/DM against the DQS of their byte lane; address/command against CK; a member and its
    reference that one ``.kicad_dru`` skew rule selects are judged by that rule's limit."""
    board = ctx.board
    in_pair = {n for p in pairs for n in (p.positive, p.negative)}
    strobes: dict[tuple[str, int], Any] = {}
    clocks: dict[str, Any] = {}
    for p in pairs:
        leaf = _ddr_leaf(p.name)
        m = _DDR_STROBE.match(leaf)
        if m:
            strobes[(m.group(1), int(m.group(2)))] = p
            continue
        m = _DDR_CK.match(leaf)
        if m:
            clocks.setdefault(m.group(1), p)
    lanes: dict[tuple[str, int], list[int]] = {}
    cas: dict[str, list[int]] = {}
    for n in sorted(nets - in_pair):
        leaf = _ddr_leaf(board.nets[n])
        m = _DDR_DATA.match(leaf)
        if m and not leaf[len(m.group(1)) :].startswith("dqs"):
            k = int(m.group(3))
            lane = k // 8 if m.group(2) == "dq" else k
            lanes.setdefault((m.group(1), lane), []).append(n)
            continue
        m = _DDR_CA.match(leaf)
        if m:
            cas.setdefault(m.group(1), []).append(n)
    for groups, refs, limit_key, what in (
        (lanes, strobes, "max_group_ps", "DQ–DQS"),
        (cas, clocks, "max_ca_ck_ps", "CA–CK"),
    ):
        limit = params.get(limit_key)
        if limit is None:
            continue
        for key, members in sorted(groups.items()):
            ref = refs.get(key)
            if ref is None:
                continue
            ref_ps = _mean_pair(delays, ref, unknown, board)
            if ref_ps is None:
                continue
            got = []
            for n in members:
                t = _total([delays[n]], unknown, board)
                if t is not None:
                    got.append((board.nets[n], t, [delays[n]]))
            refs_ds = [delays[ref.positive], delays[ref.negative]]
            mine = _group_declared(board, refs_ds, float(limit), what, loose)
            _judge_group(ctx, rule, out, what, ref.name, ref_ps, got, refs_ds, float(limit),
                         f"{float(limit):g} ps", judged, declared=mine)  # fmt: skip


def _group_declared(
    board: Any,
    ref_ds: Sequence[NetDelay],
    published: float,
    what: str,
    loose: dict[TimingRule, list[tuple[str, float, float, str, bool]]],
) -> Callable[[Sequence[NetDelay], float], tuple[float, str] | None]:
    """A member's declared group limit: the ``.kicad_dru`` skew rule (not within pairs) that
    selects it and the reference's nets, in ps (a length limit at the member's velocity on its
    main layer); a declared limit looser than ``published`` is noted in ``loose``."""

    def limit_of(ds: Sequence[NetDelay], delta: float) -> tuple[float, str] | None:
        r = _declared_rule(board, [d.net for d in (*ds, *ref_ds)], False)
        if r is None:
            return None
        ps, how = _limit_ps(_as_params(r, "max_intra_pair"), ds, None)
        if ps is None:
            return None
        if ps > published + _TOL_PS:
            loose.setdefault(r, []).append(
                (
                    board.nets[ds[0].net],
                    ps,
                    published,
                    f"{what} {published:g} ps",
                    abs(delta) > published + _TOL_PS,
                )
            )
        return ps, f"{how}, {r.where}"

    return limit_of


def _declared_lengths(
    ctx: CheckContext, rule: Rule, nets: Sequence[int], delays: Mapping[int, NetDelay],
    out: CheckOutcome,
) -> None:  # fmt: skip
    """Each net a ``.kicad_dru`` ``(constraint length …)`` in time (ps) selects, against its
    min and max: the designer's delay budget, judged on the delay computed here (via barrels
    and die delays included).  A length in mm is KiCad's own DRC's to judge: not repeated."""
    board = ctx.board
    rules = [r for r in getattr(board.net_classes, "timing_rules", ()) if r.kind == "length"]
    if not rules or not any(r.time and not r.layer for r in rules):
        return
    pair_nets = {n for p in board.diff_pairs for n in (p.positive, p.negative)}
    for n in nets:
        r = next(
            (
                r
                for r in reversed(rules)
                if any(_net_matches(board, n, t, pair_nets) for t in r.terms)
            ),
            None,
        )
        d = delays.get(n)
        if r is None or not r.time or r.layer or d is None or not d.layer_mm:
            continue
        t = d.total_ps
        if t is None:
            continue
        over = r.max is not None and t > r.max + _TOL_PS
        under = r.min is not None and t < r.min - _TOL_PS
        if not (over or under):
            continue
        bound = r.max if over else r.min
        out.findings.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{board.nets[n]}: delay {_fmt(t)} {'>' if over else '<'} "
                f"{'max' if over else 'min'} {_fmt(bound)} ({r.where}); tracks "
                f"{d.track_mm:.2f} mm, {len(d.vias)} via barrel(s)",
                measured=round(t, 3),
                limit=bound,
                unit="ps",
                net=board.nets[n],
                rule_id=f"{rule.id}.declared_length",
                evidence={"declared": r.where, "min_ps": r.min, "max_ps": r.max},
                basis={**_basis([d], ctx.analysis), "limit": "declared"},
            )
        )


def _mipi_groups(
    ctx: CheckContext,
    rule: Rule,
    lanes: Sequence[Sequence[Any]],
    delays: Mapping[int, NetDelay],
    params: Mapping[str, Any],
    ui_ps: float | None,
    out: CheckOutcome,
    unknown: dict[str, list[str]],
    judged: set[int],
) -> None:
    """Every data lane of a link against its clock lane (mean of P and N, across caps)."""
    u = params.get("max_group_ui")
    if u is None or not ui_ps:
        return
    board = ctx.board
    clocks: dict[str, Sequence[Any]] = {}
    data: dict[str, list[Sequence[Any]]] = {}
    for lane in lanes:
        leaf = _leaf(lane[0].name)
        m = _MIPI_CLK.match(leaf)
        if m:
            clocks[m.group(1)] = lane
            continue
        m = _MIPI_DATA.match(leaf)
        if m:
            data.setdefault(m.group(1), []).append(lane)
    limit = float(u) * ui_ps
    for prefix, members in sorted(data.items()):
        clk = clocks.get(prefix)
        if clk is None:
            continue
        cds = [delays[n] for p in clk for n in (p.positive, p.negative)]
        a = _total([delays[p.positive] for p in clk], unknown, board)
        b = _total([delays[p.negative] for p in clk], unknown, board)
        if a is None or b is None:
            continue
        got = []
        for lane in members:
            ds = [delays[n] for p in lane for n in (p.positive, p.negative)]
            x = _total([delays[p.positive] for p in lane], unknown, board)
            y = _total([delays[p.negative] for p in lane], unknown, board)
            if x is not None and y is not None:
                got.append((lane[0].name, 0.5 * (x + y), ds))
        _judge_group(ctx, rule, out, "data–clock", clk[0].name, 0.5 * (a + b), got, cds, limit,
                     f"{float(u):g} UI of {ui_ps:.1f} ps", judged, package=False)  # fmt: skip


def extras(analysis: Any, rules: Any = None) -> dict[str, Any] | None:
    """``result.extras["skew"]``: per DDR group rule, the parts whose package delays its limit
    covers, each pad with how its delay is declared (``board``, ``pins_ps``, a part statement,
    or None): ``init`` writes a ``package_delays:`` entry per part from it."""
    got = analysis.memo.get("skew_packages")
    if not got:
        return None
    return {
        "packages": {
            rid: {part: dict(sorted(pads.items())) for part, pads in sorted(parts.items())}
            for rid, parts in sorted(got.items())
        }
    }
