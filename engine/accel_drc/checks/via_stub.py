"""``via_stub``: the unused via barrel on fast nets, and backdrill where the class requires it.

What it checks:
    One rule per signal type (``rule.signal``): every via of its nets, the barrel below (or
    above) the last layer the net uses, against ``max_stub_mm`` and its quarter-wave resonance
    against ``min_fres_ratio`` × f_Nyquist, and, with ``require_backdrill``, that every via with
    a stub is backdrilled.  Findings, one per via with a one-line message so 10k of them stay
    readable (``evidence["group"]`` names the via's shape so reports fold identical ones):
    ``<rule>`` stub over the length limit or resonance too close to Nyquist;
    ``<rule>.backdrill`` backdrill required, none declared, and the via has a stub;
    ``<rule>.backdrill_cut`` a declared backdrill would cut a layer the net uses.
    The report extras (``result.extras["via_stubs"]``) hold the stub histogram of each rule.
Why:
    A stub is an open-ended transmission line: it notches the channel at its quarter-wave
    frequency.  A length limit alone is not enough at 112G and above, where even a backdrilled
    stub may resonate too low (Bogatin's stub rule of thumb, ``[bogatin2015-stub]``).
Parameters:
    ``max_stub_mm`` (mm, > 0, or null): longest stub allowed;
    ``min_fres_ratio`` (> 0, or null): lowest allowed f_res / f_Nyquist;
    ``require_backdrill`` (bool): every via with a stub on these nets must be backdrilled.
Cannot verify when:
    Stubs cannot be computed: stack-up thicknesses undeclared (KiCad's default stack-up), or a
    backdrill's residual stub undeclared; one finding per reason, with ``evidence["declare"]``.
Example:
    ``{check: via_stub, signal: nvlink4, severity: error, params: {max_stub_mm: 0.143,
    min_fres_ratio: 10, require_backdrill: true}}`` (training): a through via from L1 to L20
    used on L1 and L3 leaves a stub of the barrel below L3 and fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.signals import signal_basis
from ..analysis.stackup import stackup_basis
from ..extras import ViaStubSeries
from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.via_stubs import ViaStubs

KIND = "via_stub"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("via_stubs",)

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "required": ["max_stub_mm", "min_fres_ratio", "require_backdrill"],
    "properties": {
        "max_stub_mm": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "min_fres_ratio": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "require_backdrill": {"type": "boolean"},
    },
}

_TOL = 1e-9
#: residual stub assumed for a proposed backdrill when no ``residual_stub_mm`` is declared:
#: 10 mil, the upper end of the 8-10 mil fabricators commonly quote for controlled-depth
#: backdrill (Bogatin's stub rule of thumb); marked ``assumed`` in the remedy
ASSUMED_RESIDUAL_MM = 0.254


def _fmt_hz(f: float) -> str:
    if not math.isfinite(f):
        return "∞"
    if f >= 1e9:
        return f"{f / 1e9:.1f} GHz"
    return f"{f / 1e6:.0f} MHz"


def _nets_of(analysis: Analysis, signal: str | None) -> tuple[int, ...]:
    if signal is None:
        return ()
    return tuple(int(n) for n in analysis.nets_by_signal(signal))


def _nyquist(analysis: Analysis, signal: str | None) -> float | None:
    st = analysis.signal_types.get(signal) if signal is not None else None
    ny = getattr(st, "nyquist_hz", None)
    return float(ny) if ny else None


def _signal_name(analysis: Analysis, signal: str | None) -> str:
    st = analysis.signal_types.get(signal) if signal is not None else None
    return str(getattr(st, "name", None) or signal or "?")


def _via_label(stubs: ViaStubs, i: int) -> str:
    if stubs.ref[i]:
        return f"PTH pad {stubs.ref[i]}"
    return f"{stubs.types[i]} via"


def _evidence(
    stubs: ViaStubs, i: int, nyq: float | None, params: Mapping[str, Any]
) -> dict[str, Any]:
    from ..analysis.via_stubs import MM_PER_MIL, backdrill_dict

    names = stubs.layer_names
    stub = float(stubs.stub_mm[i])
    fres = float(stubs.f_res_hz[i])
    conn = stubs.connected_names(i)
    return {
        "stub_mm": round(stub, 4),
        "stub_mil": round(stub / MM_PER_MIL, 2),
        "top_stub_mm": round(float(stubs.top_stub_mm[i]), 4),
        "bottom_stub_mm": round(float(stubs.bottom_stub_mm[i]), 4),
        "geometric_stub_mm": round(float(stubs.geometric_stub_mm[i]), 4),
        "connected": conn,
        "start": names[int(stubs.start[i])],
        "end": names[int(stubs.end[i])],
        "type": stubs.types[i],
        "eps_eff": None if math.isnan(stubs.eps_eff[i]) else round(float(stubs.eps_eff[i]), 3),
        "f_res_hz": fres if math.isfinite(fres) else None,
        "nyquist_hz": nyq,
        "f_res_ratio": None if nyq is None or not math.isfinite(fres) else round(fres / nyq, 3),
        "max_stub_mm": params.get("max_stub_mm"),
        "min_fres_ratio": params.get("min_fres_ratio"),
        "backdrill": backdrill_dict(stubs.backdrill[i], names),
        "group": f"{stubs.types[i]} {names[int(stubs.start[i])]}-{names[int(stubs.end[i])]} "
        f"used {'+'.join(conn)} stub {stub:.3f} mm",
    }


@register(KIND)
def check_via_stub(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    params = rule.params or {}
    max_stub = params.get("max_stub_mm")
    min_ratio = params.get("min_fres_ratio")
    need_bd = bool(params.get("require_backdrill"))
    out = CheckOutcome()
    if max_stub is None and min_ratio is None and not need_bd:
        return out
    nets = _nets_of(ctx.analysis, rule.signal)
    if not nets:
        return out
    from ..analysis.via_stubs import MM_PER_MIL, backdrill_dict  # only with nets to check

    stubs: ViaStubs = ctx.analysis.via_stubs
    idx = stubs.rows_for_nets(nets)
    # a barrel the net does not use on any layer carries no signal: nothing to check; a via
    # used on one layer only is where an unfinished route stops (open_channel reports it)
    idx = (
        idx[stubs.connected[idx].sum(axis=1) >= 1 + (stubs.via_row[idx] >= 0)] if len(idx) else idx
    )
    out.checked = int(len(idx))
    out.examined_nets = frozenset(int(n) for n in stubs.net[idx])
    if not len(idx):
        return out
    nyq = _nyquist(ctx.analysis, rule.signal)
    sig_name = _signal_name(ctx.analysis, rule.signal)
    board = ctx.board
    findings = out.findings

    def base(i: int, rule_id: str, status: Status, message: str, **kw: Any) -> Finding:
        net_i = int(stubs.net[i])
        return Finding(
            rule=rule_id,
            check="via_stub",
            severity=rule.severity,
            status=status,
            message=message,
            net=board.nets[net_i] if 0 <= net_i < len(board.nets) else None,
            pos=(round(float(stubs.xy[i, 0]), 4), round(float(stubs.xy[i, 1]), 4)),
            items=tuple(x for x in (stubs.uuid[i], stubs.ref[i]) if x),
            why=rule.why,
            source=rule.source,
            **kw,
        )

    facts = stackup_basis(ctx.analysis)
    # the length is measured through the stack-up's heights: a default where they are KiCad's
    stub_basis = "default" if facts.thickness == "default" else "measured"
    candidates_limits = _family_candidates(ctx, rule)
    unknown_stack: list[int] = []
    unknown_residual: list[int] = []
    unknown_eps: list[int] = []
    # verdicts only (the pipeline's re-run under another class's limits): the same findings
    # with the same identity (rule, net, layer, pos, items), without messages, evidence or
    # remedies, which are most of the cost of a board with 10k violating vias
    lite = ctx.verdicts_only
    # the rows' columns as Python values once (numpy scalar indexing per via is slow)
    rows = idx.tolist()
    stub_l = stubs.stub_mm[idx].tolist()
    fres_l = stubs.f_res_hz[idx].tolist()
    net_l = stubs.net[idx].tolist()
    xy_l = stubs.xy[idx].tolist()
    cuts_l = stubs.backdrill_cuts[idx].tolist()
    names = board.nets
    for k, i in enumerate(rows):
        stub = stub_l[k]
        fres = fres_l[k]
        net = names[net_l[k]]
        where = (
            ""
            if lite
            else f"{_via_label(stubs, i)} at ({xy_l[k][0]:.3f}, {xy_l[k][1]:.3f}) on {net}"
        )
        bd = stubs.backdrill[i]
        if cuts_l[k]:
            if lite:
                findings.append(base(i, rule.id + ".backdrill_cut", Status.VIOLATION, ""))
            else:
                ev = _evidence(stubs, i, nyq, params) if not math.isnan(stub) else {}
                ev["backdrill"] = backdrill_dict(bd, stubs.layer_names)
                ev["connected"] = stubs.connected_names(i)
                findings.append(
                    base(
                        i,
                        rule.id + ".backdrill_cut",
                        Status.VIOLATION,
                        f"{where}: the {bd.side if bd else ''} backdrill (must not cut "
                        f"{ev['backdrill']['must_not_cut'] if ev['backdrill'] else '?'}) would "
                        f"cut layers the net uses ({', '.join(ev['connected'])})",
                        evidence=ev,
                    )
                )
        if math.isnan(stub):
            geometric = float(stubs.geometric_stub_mm[i])
            (
                unknown_residual if bd is not None and not math.isnan(geometric) else unknown_stack
            ).append(i)
            continue
        too_long = max_stub is not None and stub > float(max_stub) + _TOL
        # as _evidence's "f_res_ratio"
        ratio = None if nyq is None or not math.isfinite(fres) else round(fres / nyq, 3)
        if min_ratio is not None and nyq is not None and ratio is None and stub > 1e-6:
            # a stub whose dielectric εr is not on record has no known resonance: the ratio
            # rule cannot pass it (unknown is not pass), even when the length rule does
            unknown_eps.append(i)
        too_low = (
            min_ratio is not None
            and nyq is not None
            and ratio is not None
            and ratio < float(min_ratio)
        )
        wants_bd = need_bd and bd is None and stub > 1e-6
        if lite:
            if too_long or too_low:
                findings.append(base(i, rule.id, Status.VIOLATION, "", layer=_stub_layer(stubs, i)))
            if wants_bd:
                findings.append(
                    base(i, rule.id + ".backdrill", Status.VIOLATION, "",
                         layer=_stub_layer(stubs, i))
                )  # fmt: skip
            continue
        ev = _evidence(stubs, i, nyq, params)
        reasons = []
        if too_long:
            reasons.append(f"> {float(max_stub):.3f} mm")
        if too_low:
            reasons.append(f"f_res {_fmt_hz(fres)} = {ratio:.1f}× Nyquist < {float(min_ratio):g}×")
        if reasons:
            # measured and limit state the reason that failed (the length when both did), so
            # JSON, SARIF and JUnit never show a value under its limit as a violation
            if too_long:
                measured, limit, unit = round(stub, 4), float(max_stub), "mm"
            else:
                measured, limit, unit = ratio, float(min_ratio), "f_res/f_Nyquist"
            side_layer = _stub_layer(stubs, i)
            ev["remedy"] = _remedy(stubs, i, ctx, params, nyq)
            basis = {"stub_mm": stub_basis}
            if too_low and not too_long:
                # the length passed: the verdict rests on the εr along the stub too
                basis["eps_r"] = facts.epsilon_r_between(*_stub_span(stubs, i))
            sb = signal_basis(ctx.analysis.net_signal, int(stubs.net[i]))
            basis["signal"] = sb
            if sb == "assumed" and candidates_limits:
                ev["candidates"] = {
                    sid: _verdict(stub, fres, lim) for sid, lim in candidates_limits.items()
                }
                ev["candidates_of"] = "signal"
            if sb == "assumed":
                others = [sid for sid in candidates_limits if sid != rule.signal]
                ev["declare"] = (
                    f"the signal type of {net} (accel-drc.yaml signals: {rule.signal}: "
                    f"['{re.escape(net)}']"
                    + (f", or another of {'/'.join(others)}" if others else "")
                    + ")"
                )
            ev["basis"] = basis
            findings.append(
                base(
                    i,
                    rule.id,
                    Status.VIOLATION,
                    f"{where}: {sig_name} stub {stub:.3f} mm ({stub / MM_PER_MIL:.1f} mil) "
                    f"{'; '.join(reasons)}; used {'+'.join(ev['connected'])}",
                    measured=measured,
                    limit=limit,
                    unit=unit,
                    layer=side_layer,
                    evidence=ev,
                )
            )
        if wants_bd:
            findings.append(
                base(
                    i,
                    rule.id + ".backdrill",
                    Status.VIOLATION,
                    f"{where}: {sig_name} requires backdrill; none declared for a "
                    f"{stub:.3f} mm ({stub / MM_PER_MIL:.1f} mil) stub",
                    measured=round(stub, 4),
                    unit="mm",
                    layer=_stub_layer(stubs, i),
                    evidence={
                        **ev,
                        "declare": "backdrill (accel-drc.yaml `backdrill:` or the "
                        "board's backdrill) for these nets",
                    },
                )
            )
    if min_ratio is not None and nyq is None:
        findings.append(
            Finding(
                rule=rule.id,
                check="via_stub",
                severity=rule.severity,
                status=Status.CANNOT_VERIFY,
                message=f"{sig_name}: no Nyquist frequency known, f_res / f_Nyquist not checked",
                why=rule.why,
                source=rule.source,
                evidence={"declare": f"data rate of signal type {rule.signal}"},
            )
        )
    _unknown(findings, rule, stubs, board, unknown_stack, sig_name,
             "copper and dielectric thicknesses in the board stack-up",
             "stub length unknown: the stack-up does not give every thickness")  # fmt: skip
    _unknown(findings, rule, stubs, board, unknown_residual, sig_name,
             "residual_stub_mm of the backdrill (accel-drc.yaml `backdrill:`)",
             "backdrilled, but the residual stub the fabricator leaves is not declared")  # fmt: skip
    _unknown(findings, rule, stubs, board, unknown_eps, sig_name,
             "εr of the dielectrics along the stub (the board's stack-up)",
             "stub resonance unknown: the dielectric εr along the stub is not on record, "
             "f_res / f_Nyquist not checked")  # fmt: skip
    return out


# -- basis, candidates and remedy ----------------------------------------------------------------


def _stub_span(stubs: ViaStubs, i: int) -> tuple[int, int]:
    """(first, last) copper layer of via ``i``'s longer stub (its εr is taken there): from the
    barrel's start to its topmost connected layer, or from its bottommost connected layer to
    its end."""
    used = np.flatnonzero(stubs.connected[i])
    start, end = int(stubs.start[i]), int(stubs.end[i])
    if not len(used):
        return start, end
    top, bottom = float(stubs.top_stub_mm[i]), float(stubs.bottom_stub_mm[i])
    top = -1.0 if math.isnan(top) else top
    bottom = -1.0 if math.isnan(bottom) else bottom
    return (start, int(used[0])) if top >= bottom else (int(used[-1]), end)


def _family_candidates(ctx: Any, rule: Rule) -> dict[str, dict[str, Any]]:
    """The via_stub limits of every member of the rule's signal family (``signals.yaml``
    ``members``: PCIe 1-6, USB 3.2 Gen 1/2/2x2, SFP 1G/10G/25G, …) in the rules that apply to
    this board (the class pack with the project's overrides: :meth:`CheckContext.rule_for`; where
    there is none, the signal type's own), keyed by signal id; empty for a family of one."""
    from ..analysis.signals import family_members

    lib = ctx.analysis.library
    if rule.signal is None:
        return {}
    members = family_members(lib, rule.signal)
    if len(members) < 2:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for sid in sorted(members):
        st = lib.signals.get(sid)
        if st is None:
            continue
        own = ctx.rule_for("via_stub", sid)
        params = (dict(own.params or {}) if own is not None else None) or {
            "max_stub_mm": st.max_stub_mm,
            "min_fres_ratio": st.min_fres_ratio,
        }
        out[sid] = {**params, "nyquist_hz": st.nyquist_hz}
    return out


def _verdict(stub: float, fres: float, params: Mapping[str, Any]) -> str:
    """pass / fail of one stub against one set of limits (a rule's params + its Nyquist)."""
    max_stub = params.get("max_stub_mm")
    if max_stub is not None and stub > float(max_stub) + _TOL:
        return "fail"
    ratio_min, nyq = params.get("min_fres_ratio"), params.get("nyquist_hz")
    if ratio_min is not None and nyq and math.isfinite(fres) and fres / nyq < float(ratio_min):
        return "fail"
    return "pass"


_PLANE_NAME = re.compile(r"GND|PWR|VCC|VDD|POWER|PLANE|VSS", re.I)


def _routable_layers(board: Any) -> set[int]:
    """Copper layers a pair could move to: KiCad type signal or mixed, and not named like a
    plane (``L2GND``, ``L6PWR``: many boards leave planes typed "signal")."""
    out = set()
    for k, layer in enumerate(board.copper_layers):
        kind = (getattr(layer, "kind", "") or "signal").lower()
        label = f"{getattr(layer, 'name', '')} {getattr(layer, 'user_name', '') or ''}"
        if kind in ("signal", "mixed") and not _PLANE_NAME.search(label):
            out.add(k)
    return out


def _routable(stubs: ViaStubs, board: Any) -> set[int]:
    """:func:`_routable_layers` of the board, once per via table."""
    got = stubs.memo.get("routable")
    if got is None:
        got = stubs.memo["routable"] = _routable_layers(board)
    return got


def _residual(stubs: ViaStubs, ctx: Any, net: int) -> tuple[float, str]:
    """The residual stub a backdrill would leave: the one declared for this net (accel-drc.yaml
    ``backdrill:`` or the board), else :data:`ASSUMED_RESIDUAL_MM` (``assumed``)."""
    key = ("residual", net)
    got = stubs.memo.get(key)
    if got is not None:
        return got  # type: ignore[no-any-return]
    got = (ASSUMED_RESIDUAL_MM, "assumed")
    for j in stubs.rows_for_nets((net,)).tolist():
        bd = stubs.backdrill[j]
        if bd is not None and bd.residual_stub_mm is not None:
            got = (float(bd.residual_stub_mm), "declared")
            break
    stubs.memo[key] = got
    return got


def _remedy(
    stubs: ViaStubs, i: int, ctx: Any, params: Mapping[str, Any], nyq: float | None
) -> dict[str, Any]:
    """What would make via ``i`` pass: a backdrill (from which face, down to which layer, the
    stub it leaves), moving the deeper connection to a layer nearer the barrel's end, or a
    blind via over the used layers.  Each option carries its stub after the change and whether
    that passes; ``text`` says the first one that does.

    The remedy is a function of the barrel's span, its outermost connected layers, its two
    stubs, whether it is a component hole, the residual a backdrill leaves on its net and the
    limits, so it is memoised on exactly those (``stubs.memo``): a board's 10k violating vias
    come in a few dozen shapes, and the per-class re-runs ask for the same ones again."""
    conn = np.flatnonzero(stubs.connected[i])
    residual = _residual(stubs, ctx, int(stubs.net[i]))
    try:
        key: Any = (
            "remedy",
            tuple(sorted(params.items())),
            nyq,
            int(stubs.start[i]),
            int(stubs.end[i]),
            int(conn[0]),
            int(conn[-1]),
            float(stubs.top_stub_mm[i]),
            float(stubs.bottom_stub_mm[i]),
            bool(stubs.ref[i]),
            residual,
        )
        hash(key)
    except TypeError:  # a param value that is not hashable: no memo
        key = None
    memo = stubs.memo if key is not None else {}
    got = memo.get(key)
    if got is None:
        got = memo[key] = _remedy_of(stubs, i, ctx, params, nyq, conn, residual)
    return _copy_remedy(got)


def _copy_remedy(r: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a memoised remedy each finding owns (its lists and dicts one level down)."""
    return {
        k: [dict(x) for x in v] if isinstance(v, list) else dict(v) if isinstance(v, dict) else v
        for k, v in r.items()
    }


def _remedy_of(
    stubs: ViaStubs,
    i: int,
    ctx: Any,
    params: Mapping[str, Any],
    nyq: float | None,
    conn: np.ndarray,
    residual_basis: tuple[float, str],
) -> dict[str, Any]:
    """:func:`_remedy` computed (see there)."""
    from ..analysis.via_stubs import MM_PER_MIL, StackGeometry, resonance_hz

    board = ctx.board
    names = stubs.layer_names
    geom = stubs.geom if stubs.geom is not None else StackGeometry.from_board(board)
    s0, e0 = int(stubs.start[i]), int(stubs.end[i])
    top_c, bot_c = int(conn[0]), int(conn[-1])
    top, bottom = float(stubs.top_stub_mm[i]), float(stubs.bottom_stub_mm[i])
    limits = {**params, "nyquist_hz": nyq}
    n = geom.n_layers
    seg = geom.span

    eps_board = seg(0, 2 * n - 1)[1]

    def fres(length: float, eps: float) -> float:
        e = eps if math.isfinite(eps) else eps_board
        return float(resonance_hz(length, e)) if length > 0 else math.inf

    out: dict[str, Any] = {}
    routable = _routable(stubs, board)
    residual, r_basis = residual_basis
    # 1. backdrill from the face(s) whose stub fails, to the connected layer
    sides = []
    if bottom > _TOL and e0 == n - 1 and _verdict(bottom, fres(bottom, math.nan), limits) == "fail":
        sides.append(("bottom", names[e0], bot_c))
    if top > _TOL and s0 == 0 and _verdict(top, fres(top, math.nan), limits) == "fail":
        sides.append(("top", names[s0], top_c))
    if sides:
        # a backdrill never leaves more than the undrilled stub (as compute_stubs)
        left_top = min(top, residual) if any(sd[0] == "top" for sd in sides) else top
        left_bottom = min(bottom, residual) if any(sd[0] == "bottom" for sd in sides) else bottom
        after = max(left_top, left_bottom)
        f_after = fres(after, eps_board)
        out["backdrill"] = [
            {
                "side": side,
                "from": face,
                "must_not_cut": names[layer],
                "residual_stub_mm": round(residual, 4),
                "residual_basis": r_basis,
            }
            for side, face, layer in sides
        ]
        out["backdrill_stub_after_mm"] = round(after, 4)
        out["backdrill_passes"] = _verdict(after, f_after, limits) == "pass"

    # 2. the deeper (or shallower) connection moved toward the barrel's end
    def move_layer(moved: int, ks: range, stub_after: Callable[[int], tuple[float, float]]) -> None:
        """The first routable layer ``k`` in ``ks`` whose stub after the move passes."""
        for k in ks:
            if k not in routable:
                continue
            after, eps = stub_after(k)
            if _verdict(after, fres(after, eps), limits) == "pass":
                out["layer_change"] = {
                    "move": names[moved],
                    "to": names[k],
                    "stub_after_mm": round(after, 4),
                    "passes": True,
                }
                return

    def below(k: int) -> tuple[float, float]:
        length, eps = seg(2 * k + 1, 2 * e0 + 1) if k < e0 else (0.0, math.nan)
        return max(top, length), eps

    def above(k: int) -> tuple[float, float]:
        length, eps = seg(2 * s0, 2 * k) if k > s0 else (0.0, math.nan)
        return max(length, bottom), eps

    if bottom > _TOL and bot_c < e0:
        move_layer(bot_c, range(bot_c + 1, e0 + 1), below)
    if "layer_change" not in out and top > _TOL and top_c > s0:
        move_layer(top_c, range(top_c - 1, s0 - 1, -1), above)
    if stubs.ref[i] and out.get("backdrill"):
        # a component's plated hole: backdrill only where the pin does not reach that depth
        out["backdrill_note"] = "press-fit or short-pin parts only (the pin must not reach it)"
    # 3. a via that spans only the used layers (not for a component's plated hole)
    if not stubs.ref[i] and top_c != bot_c and (top_c, bot_c) != (s0, e0):
        kind = "blind" if top_c == 0 or bot_c == n - 1 else "buried"
        out["blind_via"] = {"type": kind, "from": names[top_c], "to": names[bot_c],
                            "stub_after_mm": 0.0, "passes": True}  # fmt: skip
    texts = []
    lim = params.get("max_stub_mm")
    lim_txt = f" (limit {float(lim):.3f} mm)" if lim is not None else ""
    if out.get("backdrill"):
        bd = out["backdrill"]
        ways = " and ".join(f"from {b['from']} down to (not into) {b['must_not_cut']}" for b in bd)
        allow = (
            "the declared residual"
            if r_basis == "declared"
            else f"an assumed {residual / MM_PER_MIL:.0f} mil fabricator residual; declare "
            "residual_stub_mm"
        )
        if out.get("backdrill_note"):
            ways += f" ({out['backdrill_note']})"
        texts.append(
            f"backdrill {ways} leaves {out['backdrill_stub_after_mm']:.3f} mm ({allow}): "
            + (
                f"passes{lim_txt}"
                if out["backdrill_passes"]
                else f"still fails{lim_txt}, backdrill alone is not enough"
            )
        )
    if "layer_change" in out:
        lc = out["layer_change"]
        texts.append(
            f"route the {lc['move']} connection on {lc['to']} instead: stub "
            f"{lc['stub_after_mm']:.3f} mm, passes"
        )
    if "blind_via" in out:
        bv = out["blind_via"]
        texts.append(f"use a {bv['type']} via {bv['from']}–{bv['to']}: no stub")
    out["text"] = "; ".join(texts) if texts else "no change of this via alone passes"
    return out


def _stub_layer(stubs: ViaStubs, i: int) -> str:
    """The layer the longer stub hangs off (where a reviewer looks)."""
    conn = np.flatnonzero(stubs.connected[i])
    if not len(conn):
        return stubs.layer_names[int(stubs.start[i])]
    top = float(stubs.top_stub_mm[i])
    bottom = float(stubs.bottom_stub_mm[i])
    j = conn[0] if top >= bottom else conn[-1]
    return stubs.layer_names[int(j)]


def _unknown(
    findings: list[Finding],
    rule: Rule,
    stubs: ViaStubs,
    board: Any,
    rows: Sequence[int],
    sig_name: str,
    declare: str,
    why_unknown: str,
) -> None:
    """One cannot_verify finding per reason (not per via): the fix is the same for all."""
    if not rows:
        return
    nets = sorted({board.nets[int(stubs.net[i])] for i in rows})
    first = rows[0]
    findings.append(
        Finding(
            rule=rule.id,
            check="via_stub",
            severity=rule.severity,
            status=Status.CANNOT_VERIFY,
            message=f"{sig_name}: {len(rows)} via(s) on {len(nets)} net(s): {why_unknown}",
            net=nets[0] if len(nets) == 1 else None,
            pos=(round(float(stubs.xy[first, 0]), 4), round(float(stubs.xy[first, 1]), 4)),
            items=tuple(stubs.uuid[i] for i in rows[:50] if stubs.uuid[i]),
            why=rule.why,
            source=rule.source,
            evidence={"declare": declare, "vias": len(rows), "nets": nets[:50]},
        )
    )


def via_stub_extra(analysis: Analysis, rules: Sequence[Rule]) -> dict[str, ViaStubSeries]:
    """``result.extras["via_stubs"]``: per signal type the stub of every used via on its nets
    (for the HTML histogram) and the limits."""
    out: dict[str, ViaStubSeries] = {}
    stubs: ViaStubs | None = None
    for rule in rules:
        if rule.check != "via_stub" or rule.signal is None or rule.signal in out:
            continue
        nets = _nets_of(analysis, rule.signal)
        if not nets:
            continue
        if stubs is None:
            stubs = analysis.via_stubs
        idx = stubs.rows_for_nets(nets)
        idx = idx[stubs.connected[idx].any(axis=1)] if len(idx) else idx
        vals = stubs.stub_mm[idx]
        known = vals[~np.isnan(vals)]
        fres = stubs.f_res_hz[idx]
        params = rule.params or {}
        out[rule.signal] = ViaStubSeries(
            stubs_mm=tuple(round(float(v), 4) for v in known),
            limit_mm=params.get("max_stub_mm"),
            min_fres_ratio=params.get("min_fres_ratio"),
            nyquist_hz=_nyquist(analysis, rule.signal),
            min_f_res_hz=float(np.nanmin(fres)) if np.isfinite(fres).any() else None,
            count=int(len(idx)),
            unknown=int(len(vals) - len(known)),
            backdrilled=int(sum(1 for i in idx if stubs.backdrill[int(i)] is not None)),
        )
    return out


#: the report extras of this kind: ``result.extras["via_stubs"]`` (stub histograms, HTML report)
EXTRAS_KEY = "via_stubs"
extras = via_stub_extra
