"""``laminate_df``: the loss tangent of the dielectric each fast net really runs in.

What it checks:
    For every net (or differential pair) of the rule's signal type and every copper layer it is
    routed on, the dielectrics that carry its field: on an inner layer between reference planes
    (stripline), everything between the layer and the plane above and the plane below; where no
    plane is known on a side, everything between the layer and the adjacent copper layer; on an
    outer layer (microstrip), the dielectric under it (the walk the impedance cross-section
    takes: ``analysis/stackup.reference_walk``).  Each dielectric's Df comes from the config, else the
    stack-up (0 = undeclared), else the library value of the material it names; the worst
    sublayer decides.  One finding per (net or pair, layer), naming the dielectric(s) over the
    limit; ``evidence["remedy"]`` lists the library laminates whose confirmed Df meets it, lowest
    first.  KiCad's untouched default dielectric (FR4, 4.5, 0.02) is a ``default`` loss tangent,
    so a violation on it is conditional ("declare your fab's stack-up").
    A limit the signal type marks unconfirmed (``unconfirmed: [max_df]`` in
    ``rules/signals.yaml``: a market-bin convention [U]) is a typical value that stands for the
    channel's loss budget, not a requirement, so the budget decides where it is known: when the
    signal has a board loss budget (the config's ``loss: budgets_db:``, declared; the class
    pack's ``insertion_loss`` rule or ``loss_budget_db`` in ``rules/signals.yaml``, library) and
    the channel's insertion loss at Nyquist is computable from its routed layers
    (:mod:`accel_drc.analysis.loss`), a dielectric over the limit fails only when the channel
    spends more than the budget (the finding rests on the loss inputs too); a channel that fits
    passes whatever the laminate (a 20 mm SFP28 escape on FR-4).  Without a budget such a
    dielectric is *cannot verify* (basis ``default: limit``) with the routed length, naming the
    budget to declare.  A limit a source states for the interface (NVLink's Df ≤ 0.003,
    [nextpcb2026]) or the project set stays a requirement of its own.
Why:
    Dielectric loss grows with Df × frequency: at the Nyquist frequency of a 100G+ lane a
    standard FR-4 (Df ≈ 0.02) eats the channel's loss budget in a few centimetres.  IEEE 802.3
    specifies an electrical channel by its insertion loss at Nyquist, never by a laminate
    ([ieee8023ap] Annex 69B, [ieee8023] 802.3by 25GBASE-KR / 25GAUI), as SFF-8431 does for the
    SFI host channel ([sff8431]): a short channel on a lossy laminate can fit where a long one on
    a low-loss laminate does not.
Parameters:
    ``max_df`` (> 0): highest loss tangent allowed for this rule's signal type.
Cannot verify when:
    The board has no stack-up; a dielectric next to a routed layer has no known loss tangent (no
    value in the config or stack-up and a material the library does not know); a dielectric is
    over an unconfirmed (typical) limit and no loss budget for the signal weighs the channel.
Example:
    ``{check: laminate_df, signal: nvlink4, severity: error, params: {max_df: 0.003}}``
    (training): an NVLink pair in FR-4 (tan δ 0.02) fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.materials import DielectricInfo, materials_meeting, resolve_dielectric
from ..analysis.signals import nets_signal_basis
from ..analysis.stackup import reference_walk, stackup_basis
from ..basis import _DECLARE as DECLARE_INPUT
from ..packs import DECLARED_PACK
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import assumption_of, finding, track_rows, where
from .insertion_loss import DECLARE_BUDGET, DECLARE_ROUGH, loss_budget
from .tg import declare_field_hint

#: what to declare when the dielectrics a finding rests on are KiCad's untouched defaults
DECLARE_STACKUP = (
    "declare your fab's stack-up: the laminate name, εr and loss tangent of each dielectric "
    "(KiCad Board Setup > Physical Stackup, IPC-2581, or accel-drc.yaml stackup: materials:)"
)


KIND = "laminate_df"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["max_df"],
    "properties": {"max_df": {"type": "number", "exclusiveMinimum": 0}},
}


def routed_length(analysis: Any, nets: Any) -> float:
    """Track length (mm, arcs as chords) of the longest net of ``nets``, all layers."""
    t = analysis.board.tracks
    best = 0.0
    for n in nets:
        rows = analysis.track_index.net_rows(n)
        if len(rows):
            d = t.end[rows] - t.start[rows]
            best = max(best, float(np.hypot(d[:, 0], d[:, 1]).sum()))
    return best


def _df_basis(info: DielectricInfo, max_df: float, auto: bool) -> str:
    """The basis of a dielectric's Df over ``max_df``: its own; but on a stack-up the designer
    edited (not KiCad's untouched auto one, ``auto``), a default Df (KiCad's "FR4", tan δ 0.02)
    whose material name covers grades that *all* exceed the limit (every generic FR-4 grade of
    rules/materials.yaml: Df 0.015–0.025) fails whatever grade the fab uses: a fact resting on
    the library's range (issue 28).  On the untouched auto stack-up nobody named the material:
    the Df stays a default."""
    if (
        not auto
        and info.df_basis == "default"
        and info.df_range is not None
        and info.df_range[0] > max_df
    ):
        return "library"
    return info.df_basis or "declared"


def typical_limit(ctx: CheckContext, rule: Rule) -> bool:
    """Whether the rule's ``max_df`` is the signal type's own unconfirmed value (a market-bin
    convention [U] in ``rules/signals.yaml``), not a number a source states or the project set."""
    st = ctx.analysis.signal_types.get(rule.signal or "")
    if st is None or st.max_df is None or "max_df" not in st.unconfirmed:
        return False
    if rule.pack == DECLARED_PACK or "overrides" in rule.source:
        return False
    return abs(float(rule.params["max_df"]) - float(st.max_df)) < 1e-12


def channel_budget(ctx: CheckContext, rule: Rule) -> tuple[float | None, str, str]:
    """(board loss budget at Nyquist in dB, its basis, where from) for the rule's signal: the
    config's, else the class pack's ``insertion_loss`` rule's, else the signal type's."""
    sid = rule.signal or ""
    pack = getattr(ctx.analysis.library, "packs", {}).get(ctx.board_class)
    il = next(
        (r for r in getattr(pack, "rules", ()) if r.check == "insertion_loss" and r.signal == sid),
        rule,
    )
    return loss_budget(ctx, il, sid)


#: weakest first: a channel's loss rests on the weakest basis of each input over its layers
_ORDER = ("assumed", "default", "library", "declared", "measured")


def loss_bases(ch: Any) -> dict[str, str]:
    """The inputs of a channel's computed loss and the weakest basis of each over its layers
    (roughness, mask εr, …); the default copper conductivity is left out: 100 % IACS is the
    best copper conducts, so a channel over budget with it is over with any real copper."""
    out: dict[str, str] = {}
    for lay in ch.layers:
        for k, v in lay.basis.items():
            if k not in out or _ORDER.index(v) < _ORDER.index(out[k]):
                out[k] = v
    if out.get("conductivity") == "default":
        out.pop("conductivity")
    return out


def foil_candidates(ctx: CheckContext, ch: Any, budget: float) -> dict[str, str]:
    """``{foil grade: "pass" | "fail"}``: the channel against ``budget`` with each grade's Rz."""
    from ..analysis.loss_models import DEFAULT_ROUGHNESS_MODEL
    from .insertion_loss import _remedy

    got = _remedy(ctx, ch, budget, DEFAULT_ROUGHNESS_MODEL).get("foil_candidates") or {}
    return dict(got)


def channel_losses(ctx: CheckContext, sid: str) -> dict[int, Any]:
    """Net index -> the :class:`~accel_drc.analysis.loss.ChannelLoss` of its channel, for the
    channels of ``sid`` whose loss is computable (every routed layer has a cross-section)."""
    if not ctx.analysis.diff_pairs:
        return {}
    from ..analysis.loss import loss_table

    out: dict[int, Any] = {}
    for ch in loss_table(ctx.analysis):
        if ch.signal == sid and ch.layers and not ch.missing:
            for n in ch.net_ids:
                out[n] = ch
    return out


@register(KIND)
def check_laminate_df(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    a = ctx.analysis
    board = ctx.board
    sig = rule.signal
    max_df = float(rule.params["max_df"])
    groups = a.signal_groups(sig) if sig else []
    if not groups:
        return CheckOutcome([], checked=0)
    st = a.signal_types.get(sig)
    sname = st.name if st else sig
    stack = board.stackup
    if stack is None or not stack.dielectrics():
        return CheckOutcome(
            [
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{len(groups)} {sname} nets/pairs but the board has no stack-up: Df cannot be checked",
                    limit=max_df,
                    unit="tan δ",
                    evidence={
                        "declare": "define the stack-up with the laminate names in KiCad (Board Setup > Physical Stackup)"
                    },
                )
            ],
            checked=0,
        )
    overrides = ctx.config.stackup.materials
    auto = stackup_basis(a).auto
    cache: dict[str, DielectricInfo] = {}
    out = []
    checked = 0
    planes = a.plane_layers
    remedy = materials_meeting(a.materials, max_df=max_df)
    remedy_text = (
        f"laminates in rules/materials.yaml with Df ≤ {max_df:g} (at ≈ 10 GHz): "
        + ", ".join(remedy)
        if remedy
        else f"no laminate in rules/materials.yaml has a confirmed Df ≤ {max_df:g}"
    )
    typical = typical_limit(ctx, rule)
    budget, b_basis, b_from = channel_budget(ctx, rule)
    # a typical limit stands for the budget: the channel's loss decides where it is known; a
    # limit a source states for the interface is a requirement of its own
    chans = channel_losses(ctx, sig) if typical and budget is not None else {}
    for g in groups:
        layers = set()
        for n in g.nets:
            layers |= a.net_layers.get(n, frozenset())
        assumption = assumption_of(a, g.nets)
        sig_basis = nets_signal_basis(a.net_signal, g.nets)
        ch = next((chans[n] for n in g.nets if n in chans), None)
        if ch is not None and ch.total_db <= budget:  # type: ignore[operator]
            # the channel's loss fits the budget the Df limit stands for: the laminate passes
            checked += len(layers)
            continue
        for layer in sorted(layers):
            checked += 1
            lname = board.copper_layers[layer].name
            walk = reference_walk(stack, layer, planes)
            refs = walk.dielectrics() if walk is not None else []
            geometry = walk.geometry if walk is not None else "unknown"
            infos = []
            for side, d in refs:
                if d.name not in cache:
                    cache[d.name] = resolve_dielectric(d, a.materials, overrides)
                infos.append((side, cache[d.name]))
            ev: dict[str, Any] = {
                "geometry": geometry,
                "dielectrics": [{"side": s, **i.to_dict()} for s, i in infos],
                "signal": sig,
                "nets": [board.nets[n] for n in g.nets],
            }
            if assumption:
                ev["assumption"] = assumption
            note = " (signal type assumed: see evidence)" if assumption else ""
            over = [(s, i) for s, i in infos if i.df is not None and i.df > max_df]
            unknown = [(s, i) for s, i in infos if i.df is None]
            if over or unknown or not infos:
                # where the finding points (only for findings: uuids are decoded on access)
                pos, items = where(a, track_rows(a, g.nets, layer))
            if over:
                worst = max(i.df for _, i in over)  # type: ignore[type-var]
                named = ", ".join(
                    f"{i.name} ({i.material or 'unnamed'}, Df {i.df:g} from {i.df_from})"
                    for _, i in over
                )
                # the verdict rests on the weakest Df over the limit: one declared dielectric
                # over it is a fact even if another one's Df is KiCad's default
                bases = {_df_basis(i, max_df, auto) for _, i in over}
                df_basis = next(
                    (b for b in ("declared", "library", "default") if b in bases), "default"
                )
                fev = {**ev, "dielectric": over[0][1].name, "remedy": remedy_text}
                ranged = [i for _, i in over if i.df_basis == "default" and i.df_range]
                if ranged:
                    lo, hi = ranged[0].df_range  # type: ignore[misc]
                    fev["df_range"] = [lo, hi]
                    named += (
                        f"; every grade the name {ranged[0].material or 'FR4'!r} covers has Df "
                        f"{lo:g}–{hi:g} (rules/materials.yaml)"
                    )
                declare = [DECLARE_STACKUP] if df_basis == "default" else []
                basis = {"loss_tangent": df_basis, "layers_used": "measured", "signal": sig_basis}
                weighed = ""
                if ch is not None:  # over the budget: the laminate is part of why
                    weighed = (
                        f"; the channel {ch.name} spends {ch.total_db:.1f} dB at "
                        f"{ch.nyquist_hz / 1e9:g} GHz over {ch.length_mm:.0f} mm > the "
                        f"{budget:g} dB board budget ({b_from})"
                    )
                    fev["channel_loss_db"] = round(ch.total_db, 2)
                    fev["budget_db"] = budget
                    basis["budget"] = b_basis
                    inputs = loss_bases(ch)
                    basis.update(inputs)
                    if inputs.get("roughness") in ("default", "assumed"):
                        # the foil grades it fails and passes with (insertion_loss's remedy): a
                        # channel over budget with every grade does not rest on the foil
                        fev["candidates"] = foil_candidates(ctx, ch, budget)  # type: ignore[arg-type]
                        fev["candidates_of"] = "roughness"
                    declare += [
                        DECLARE_ROUGH if k == "roughness" else DECLARE_INPUT.get(k, f"declare {k}")
                        for k, v in inputs.items()
                        if v in ("default", "assumed")
                    ]
                elif typical:
                    length = routed_length(a, g.nets)
                    weighed = (
                        f"; Df {max_df:g} is a typical value [U], not a requirement, and no loss "
                        f"budget for {sname} weighs this {length:.0f} mm route"
                    )
                    fev["routed_length_mm"] = round(length, 1)
                    basis["limit"] = "default"
                    declare.append(
                        DECLARE_BUDGET.replace("<signal>", sig or "")
                        + " (the channel's loss then decides), or the limit (rules: "
                        + f"{rule.id}: {{params: {{max_df: …}}}})"
                    )
                if declare:
                    fev["declare"] = "; ".join(declare)
                out.append(
                    finding(
                        rule,
                        Status.VIOLATION,
                        f"{sname} {g.name} on {lname} ({geometry}): {named} > Df {max_df:g}"
                        f"{weighed}{note}",
                        measured=worst,
                        limit=max_df,
                        unit="tan δ",
                        net=g.name,
                        layer=lname,
                        pos=pos,
                        items=items,
                        evidence=fev,
                        basis=basis,
                    )
                )
            elif unknown or not infos:
                names = (
                    ", ".join(f"{i.name} ({i.material or 'no material'})" for _, i in unknown)
                    or "none found"
                )
                if unknown:
                    ev["declare"] = declare_field_hint(
                        unknown[0][1].name,
                        unknown[0][1],
                        "loss_tangent",
                        "loss tangent at ≈ 10 GHz",
                        "0.004",
                    )
                else:
                    ev["declare"] = (
                        f"define the dielectric next to {lname} in the stack-up (KiCad Board "
                        "Setup > Physical Stackup) with its laminate name and loss tangent"
                    )
                out.append(
                    finding(
                        rule,
                        Status.CANNOT_VERIFY,
                        f"{sname} {g.name} on {lname}: loss tangent unknown for {names}{note}",
                        limit=max_df,
                        unit="tan δ",
                        net=g.name,
                        layer=lname,
                        pos=pos,
                        items=items,
                        evidence=ev,
                        basis={
                            "layers_used": "measured",
                            "signal": sig_basis,
                        },
                    )
                )
    return CheckOutcome(out, checked=checked)
