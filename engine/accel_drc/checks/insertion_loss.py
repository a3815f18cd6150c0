"""``insertion_loss``: the dB each high-speed channel spends on this board, against its budget.

What it checks:
    Per channel of the rule's signal type (a differential pair, or pairs chained through
    AC-coupling capacitors), the insertion loss at the signal's Nyquist frequency: every routed
    layer's length × its per-unit-length loss (dielectric with wideband Dk/Df, conductor with
    skin effect and roughness; :mod:`accel_drc.analysis.loss`), the via stubs, and the declared
    lumped extras (``loss: extra_db:``), against this board's share of the budget.
Why:
    Whether a PCIe Gen5 or NVLink channel works is decided by its loss at Nyquist against the
    interface's budget, not by a laminate clearing a Df line: a short route on a mid-loss laminate
    can pass where a long one on Megtron 7 fails.
Parameters:
    budget_db: this board's share at Nyquist (dB); null = the signal type's ``loss_budget_db``
        from rules/signals.yaml; config ``loss: budgets_db:`` overrides both (declared).
    margin_db: kept free below the budget (dB, default 0).
    default_rz_um: Rz (µm) of a copper face whose foil nobody declared (default 3.5).
    roughness_model: ``huray`` (default: Huray with Simonovich's cannonball parameters from Rz,
        validated on a published case, docs/loss.md) or ``hammerstad`` (Hammerstad-Jensen).
Cannot verify when:
    no budget is public for the signal (NVLink: declare ``loss.budgets_db``); the cross-section
    lacks a stack-up number; or a failure rests on a default (undeclared foil roughness,
    conductivity, KiCad's default dielectric) or an assumed signal generation — the settle step
    turns those into conditionals, with the foil candidates that pass and fail.  A default Df
    whose material name covers a family of grades (KiCad's "FR4" on a stack-up the designer
    edited: every generic FR-4 grade, Df 0.015–0.025) decides what holds across the range:
    over the budget even at its low end is a fact (basis ``library``, ``evidence.df_range``);
    a pass that fails at its high end is *cannot verify*, with both ends.
Example:
    ``inference.insertion_loss.pcie5: PCIE_TX3 + PCIE_TX3_AC: 17.9 dB at 16 GHz > budget 16 dB
    (biggest: In3.Cu 412 mm, conductor 61 %); fits with HVLP2 foil, or within 360 mm``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..analysis.materials import materials_meeting
from ..analysis.signals import nets_signal_basis
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.loss import ChannelLoss

KIND = "insertion_loss"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("pair_table", "via_stubs")

PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "budget_db": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "margin_db": {"type": "number", "minimum": 0},
        "default_rz_um": {"type": "number", "minimum": 0},
        "roughness_model": {"enum": ["huray", "hammerstad"]},
        "remedy_foils": {"type": "array", "items": {"type": "string"}},
        "remedy_materials": {"type": "array", "items": {"type": "string"}},
    },
}

DECLARE_BUDGET = "accel-drc.yaml: loss: budgets_db: {<signal>: <dB at Nyquist>}"
DECLARE_ROUGH = (
    "the foil of each layer (accel-drc.yaml stackup: foil: or stackup: roughness: "
    "{<layer>: {rz_top_um, rz_bottom_um}})"
)
#: channels drawn as loss bars / as IL(f) curves in the HTML report (worst first)
MAX_BARS = 40
MAX_CURVES = 6
ORDER = ("assumed", "default", "library", "declared", "measured")


def loss_budget(ctx: CheckContext, rule: Rule, sid: str) -> tuple[float | None, str, str]:
    """(budget dB, basis, where from)."""
    cfg = ctx.config.loss.budgets_db
    if sid in cfg:
        return float(cfg[sid]), "declared", "accel-drc.yaml loss.budgets_db"
    b = rule.params.get("budget_db")
    if b is not None:
        return float(b), "library", f"rule {rule.id}"
    st = ctx.analysis.signal_types.get(sid)
    if st is not None and getattr(st, "loss_budget_db", None) is not None:
        return float(st.loss_budget_db), "library", f"rules/signals.yaml {sid}"
    return None, "default", ""


def _total_with(
    ctx: CheckContext,
    ch: ChannelLoss,
    rz: float | None,
    model: str,
    df_pick: int | None = None,
    default_rz: float | None = None,
) -> float:
    """The channel's total IL at Nyquist with every copper face at Rz ``rz`` (a foil remedy),
    or (``rz`` None) each face as it is, Rz ``default_rz`` where undeclared; ``df_pick``
    puts a default Df with a family range at its low (0) or high (1) end."""
    import numpy as np

    from ..analysis.impedance import pair_table
    from ..analysis.loss import DEFAULT_RZ_UM, section_of

    rows = {
        (r.pair, r.layer_name): r
        for r in pair_table(ctx.analysis)
        if r.pair in ch.pairs and r.length_mm > 0
    }
    total = ch.via_db + ch.extra_db
    for lay in ch.layers:
        row = rows.get((lay.pair, lay.layer))
        if row is None:
            total += lay.il_db
            continue
        cache = ctx.analysis.memo.setdefault("loss_remedy", {})
        key = (row.layer, row.width_mm, row.gap_mm, rz, model, df_pick, default_rz)
        if key not in cache:
            base_rz = rz if rz is not None else (default_rz or DEFAULT_RZ_UM)
            cache[key] = section_of(
                ctx.analysis, row, base_rz, model, rz_override=rz, df_pick=df_pick
            )[0]
        sec = cache[key]
        if sec is None:
            total += lay.il_db
            continue
        d, c = sec.alpha_db_per_m(np.array([ch.nyquist_hz]))
        total += float(d[0] + c[0]) * lay.length_mm * 1e-3
    return total


def _worst_foil(ctx: CheckContext, ch: ChannelLoss, model: str) -> tuple[str, float] | None:
    """(roughest foil grade of rules/foils.yaml, the channel's total with it)."""
    foils = ctx.analysis.library.foils
    if not foils.ids:
        return None
    g = foils.grade(foils.ids[0])  # smoothest last: the first is the roughest
    rz = 0.5 * (g.rz_um[0] + g.rz_um[1])
    return f"{g.id} (Rz {rz:g} µm)", _total_with(ctx, ch, rz, model)


def _df_range(ctx: CheckContext, ch: ChannelLoss) -> tuple[float, float] | None:
    """The Df range the channel's default loss tangents commit to: on a stack-up the designer
    edited (not KiCad's untouched auto one), every dielectric its traces run on whose Df is a
    default must carry its name's family range (generic FR-4: every grade rules/materials.yaml
    lists, as the laminate_df check uses it); None otherwise, or when none is a default."""
    from ..analysis.materials import resolve_dielectric
    from ..analysis.stackup import layer_dielectrics, stackup_basis

    a = ctx.analysis
    if stackup_basis(a).auto or ctx.board.stackup is None:
        return None
    by_name = {d.name: d for d in ctx.board.stackup.dielectrics()}
    overrides = ctx.config.stackup.materials
    ranges = []
    for name in dict.fromkeys(d for lay in ch.layers for d in layer_dielectrics(a, lay.layer)):
        sl = by_name.get(name)
        info = resolve_dielectric(sl, a.materials, overrides) if sl is not None else None
        if info is None or info.df_basis != "default":
            continue
        if info.df_range is None:
            return None
        ranges.append(info.df_range)
    if not ranges:
        return None
    return (min(lo for lo, _ in ranges), max(hi for _, hi in ranges))


#: the stack-up inputs of a channel's loss, declarable in accel-drc.yaml ``stackup:``
_STACKUP_INPUTS = ("h", "epsilon_r", "loss_tangent", "t", "mask_er")


def _stackup_hint(ctx: CheckContext, ch: ChannelLoss, basis: Mapping[str, str]) -> str:
    """What to declare for the channel's stack-up inputs that rest on a default, with the
    dielectrics and copper layers its traces run on (the stack-up owner's keys)."""
    from ..analysis.stackup import declare_hint, layer_dielectrics

    weak = [k for k in _STACKUP_INPUTS if basis.get(k) == "default"]
    if not weak:
        return ""
    layers = list(dict.fromkeys(lay.layer for lay in ch.layers))
    diels = list(dict.fromkeys(d for name in layers for d in layer_dielectrics(ctx.analysis, name)))
    n = ctx.board.layer_count
    names = [c.name for c in ctx.board.copper_layers]
    outer = [name for name in layers if name in names and names.index(name) in (0, n - 1)]
    mask = ("F.Mask" if names.index(outer[0]) == 0 else "B.Mask") if outer else None
    hint = declare_hint(weak, diels, layers[0] if layers else None, mask)
    if "t" in weak and len(layers) > 1:
        hint = hint.replace(
            f"{{{layers[0]}: {{thickness_um: <µm>}}}}",
            "{" + ", ".join(f"{name}: {{thickness_um: <µm>}}" for name in layers) + "}",
        )
    return hint


def _pass_on_default_df(
    ctx: CheckContext,
    rule: Rule,
    ch: ChannelLoss,
    limit: float,
    model: str,
    default_rz: float,
    sname: str,
    b_basis: str,
) -> Any:
    """A channel inside its budget on a default Df (KiCad's "FR4", tan δ 0.02) whose name
    covers a range of grades (:func:`_df_range`): the pass holds if it holds at the range's
    high end; else it is *cannot verify* with both ends (None when it holds, or no range)."""
    rng = _df_range(ctx, ch)
    if rng is None:
        return None
    hi_total = _total_with(ctx, ch, None, model, df_pick=1, default_rz=default_rz)
    if hi_total <= limit:
        return None
    lo_total = _total_with(ctx, ch, None, model, df_pick=0, default_rz=default_rz)
    return finding(
        rule,
        Status.CANNOT_VERIFY,
        f"{ch.name}: {ch.total_db:.1f} dB at {ch.nyquist_hz / 1e9:g} GHz is inside the {sname} "
        f"board budget {limit:g} dB with the stack-up's default Df, but the generic material's "
        f"grades span Df {rng[0]:g}–{rng[1]:g}: {lo_total:.1f}–{hi_total:.1f} dB: declare "
        "the laminate",
        measured=round(ch.total_db, 2),
        limit=limit,
        unit="dB",
        net=ch.nets[0],
        evidence={
            "declare": _stackup_hint(ctx, ch, {"loss_tangent": "default"}),
            "df_range": [rng[0], rng[1]],
            "candidates": {
                f"Df {rng[0]:g}": "pass" if lo_total <= limit else "fail",
                f"Df {rng[1]:g}": "fail",
            },
            "candidates_of": "loss_tangent",
        },
        basis={"loss_tangent": "default", "budget": b_basis},
    )


def _remedy(ctx: CheckContext, ch: ChannelLoss, limit: float, model: str) -> dict[str, Any]:
    """Which foil grade (rules/foils.yaml), which laminate (rules/materials.yaml, by the
    dielectric share scaled by Df·√Dk), or which length would bring the channel inside."""
    out: dict[str, Any] = {}
    foils = ctx.analysis.library.foils
    fits = []
    cands: dict[str, str] = {}
    for gid in foils.ids:
        g = foils.grade(gid)
        rz = 0.5 * (g.rz_um[0] + g.rz_um[1])
        tot = _total_with(ctx, ch, rz, model)
        cands[f"{gid} (Rz {rz:g} µm)"] = "pass" if tot <= limit else "fail"
        if tot <= limit:
            fits.append(f"{gid} foil (Rz {rz:g} µm: {tot:.1f} dB)")
    out["foil_candidates"] = cands
    if fits:
        out["foil"] = fits[0]
    # laminates: scale the dielectric share by Df·√Dk (same geometry, re-tuned for Zdiff)
    diel = ch.dielectric_db
    if diel > 0:
        need = ch.total_db - limit
        if need > 0 and need < diel:
            lay0 = max(ch.layers, key=lambda r: r.dielectric_db_per_m * r.length_mm)
            d0 = lay0.section.below
            scale_max = (diel - need) / diel
            max_df = d0.df * scale_max
            names = materials_meeting(ctx.analysis.materials, max_df=max_df, limit=4)
            if names:
                out["laminate"] = f"Df ≤ {max_df:.4f}: " + ", ".join(names)
    per_mm = ch.trace_db / ch.length_mm if ch.length_mm > 0 else 0.0
    room = limit - ch.via_db - ch.extra_db
    if per_mm > 0 and room > 0:
        out["length_mm"] = round(room / per_mm, 1)
    return out


@register(KIND)
def check(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    sid = rule.signal
    if not sid:
        return CheckOutcome([], checked=0)
    if not ctx.analysis.diff_pairs:
        # a channel is a chain of differential pairs: none, no channel (what loss_table would
        # say), and the loss models are not even imported (start-up cost, issue 18)
        return CheckOutcome([], checked=0, examined_nets=frozenset())
    from ..analysis.loss import DEFAULT_RZ_UM, loss_table, method_text
    from ..analysis.loss_models import DEFAULT_ROUGHNESS_MODEL  # (imports the field solver)

    p = rule.params
    model = str(p.get("roughness_model", DEFAULT_ROUGHNESS_MODEL))
    default_rz = float(p.get("default_rz_um", DEFAULT_RZ_UM))
    margin = float(p.get("margin_db", 0.0))
    chans = [c for c in loss_table(ctx.analysis, default_rz, model) if c.signal == sid]
    if not chans:
        return CheckOutcome([], checked=0, examined_nets=frozenset())
    budget, b_basis, b_from = loss_budget(ctx, rule, sid)
    st = ctx.analysis.signal_types.get(sid)
    sname = st.name if st is not None else sid
    nets = frozenset(n for c in chans for n in c.net_ids)
    findings = []
    if budget is None:
        worst = max(chans, key=lambda c: c.total_db)
        findings.append(
            finding(
                rule,
                Status.CANNOT_VERIFY,
                f"{sname}: no public board budget for the channel loss at "
                f"{worst.nyquist_hz / 1e9:g} GHz; worst channel {worst.name} spends "
                f"{worst.total_db:.1f} dB — declare loss.budgets_db",
                measured=round(worst.total_db, 2),
                unit="dB",
                net=worst.nets[0] if worst.nets else None,
                evidence={
                    "declare": DECLARE_BUDGET.replace("<signal>", sid),
                    "channels": len(chans),
                    "method": method_text(model),
                },
            )
        )
        return CheckOutcome(findings, checked=len(chans), examined_nets=nets)
    limit = budget - margin
    for ch in chans:
        if ch.missing and not ch.layers:
            findings.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{ch.name}: loss not computable: " + "; ".join(ch.missing[:3]),
                    net=ch.nets[0],
                    evidence={"declare": "; ".join(ch.missing[:3])},
                )
            )
            continue
        total = ch.total_db
        rough_basis = min(
            (lay.basis.get("roughness", "default") for lay in ch.layers),
            key=ORDER.index,
            default="default",
        )
        if total <= limit:
            if rough_basis in ("default", "assumed"):
                # a pass on an undeclared foil is no pass if the roughest grade fails
                worst = _worst_foil(ctx, ch, model)
                if worst is not None and worst[1] > limit:
                    findings.append(
                        finding(
                            rule,
                            Status.CANNOT_VERIFY,
                            f"{ch.name}: {total:.1f} dB at {ch.nyquist_hz / 1e9:g} GHz with the "
                            f"default Rz {default_rz:g} µm is inside the {sname} board budget "
                            f"{limit:g} dB, but {worst[1]:.1f} dB with {worst[0]} foil: declare "
                            "the foil",
                            measured=round(total, 2),
                            limit=limit,
                            unit="dB",
                            net=ch.nets[0],
                            evidence={
                                "declare": DECLARE_ROUGH,
                                "candidates": {worst[0]: "fail", f"Rz {default_rz:g} µm": "pass"},
                                "candidates_of": "roughness",
                            },
                            basis={"roughness": "default", "budget": b_basis},
                        )
                    )
                    continue
            got = _pass_on_default_df(ctx, rule, ch, limit, model, default_rz, sname, b_basis)
            if got is not None:
                findings.append(got)
            continue
        biggest = max(ch.layers, key=lambda r: r.il_db) if ch.layers else None
        # the channel's own nets: a lane behind the caps of a guessed generation is assumed
        sig_basis = nets_signal_basis(ctx.analysis.net_signal, ch.net_ids)
        basis: dict[str, str] = {"budget": b_basis, "signal": sig_basis, "extra": ch.extra_basis}
        for lay in ch.layers:
            for k, v in lay.basis.items():
                if k not in basis or ORDER.index(v) < ORDER.index(basis[k]):
                    basis[k] = v
        if ch.extra_db == 0.0:
            basis.pop("extra")
        df_note = ""
        rng = _df_range(ctx, ch) if basis.get("loss_tangent") == "default" else None
        if rng is not None:
            lo_total = _total_with(ctx, ch, None, model, df_pick=0, default_rz=default_rz)
            if lo_total > limit:
                # over the budget at the low end of every grade the name covers: a fact
                # resting on the library's range, as laminate_df has it (issue 28)
                basis["loss_tangent"] = "library"
                df_note = (
                    f"; over the budget across the Df range {rng[0]:g}–{rng[1]:g} of the "
                    f"generic material ({lo_total:.1f} dB at Df {rng[0]:g})"
                )
            else:
                df_note = (
                    f"; inside the budget at the low end of the generic material's Df range "
                    f"{rng[0]:g}–{rng[1]:g} ({lo_total:.1f} dB at Df {rng[0]:g})"
                )
        sigma_note = None
        if basis.get("conductivity") == "default":
            # 5.8e7 S/m is annealed copper (100 % IACS), the best a PCB's copper conducts: a
            # channel that fails with it fails with any real copper (lower σ, more loss), so
            # the default is a bound here, not a guess the verdict rests on
            basis.pop("conductivity")
            sigma_note = "5.8e7 S/m (100 % IACS, an upper bound: real copper only loses more)"
        remedy = _remedy(ctx, ch, limit, model)
        what = ""
        if biggest is not None:
            share = biggest.conductor_db_per_m / biggest.db_per_m if biggest.db_per_m else 0.0
            what = (
                f" (biggest: {biggest.layer} {biggest.length_mm:.0f} mm, {biggest.il_db:.1f} dB, "
                f"conductor {share:.0%} / dielectric {1 - share:.0%})"
            )
        fix = []
        if "foil" in remedy:
            fix.append(str(remedy["foil"]))
        if "laminate" in remedy:
            fix.append(f"a laminate with {remedy['laminate']}")
        if "length_mm" in remedy:
            fix.append(f"a route within {remedy['length_mm']:g} mm")
        ev: dict[str, Any] = {
            "channel": ch.name,
            "pairs": list(ch.pairs),
            "nyquist_hz": ch.nyquist_hz,
            "trace_db": round(ch.trace_db, 3),
            "dielectric_db": round(ch.dielectric_db, 3),
            "conductor_db": round(ch.conductor_db, 3),
            "via_db": round(ch.via_db, 3),
            "extra_db": round(ch.extra_db, 3),
            "budget_db": budget,
            "budget_from": b_from,
            "margin_db": margin,
            "length_mm": round(ch.length_mm, 2),
            "notches": ch.notches,
            "remedy": remedy,
            "method": method_text(model),
        }
        if sigma_note:
            ev["conductivity"] = sigma_note
        if rng is not None:
            ev["df_range"] = [rng[0], rng[1]]
        declare = []
        if basis.get("roughness") in ("default", "assumed"):
            ev["candidates"] = remedy.get("foil_candidates", {})
            ev["candidates_of"] = "roughness"
            declare.append(DECLARE_ROUGH)
        stack_hint = _stackup_hint(ctx, ch, basis)
        if stack_hint:
            declare.append(stack_hint)
        if declare:
            ev["declare"] = "; ".join(declare)
        findings.append(
            finding(
                rule,
                Status.VIOLATION,
                f"{ch.name}: {total:.1f} dB at {ch.nyquist_hz / 1e9:g} GHz > {sname} board budget "
                f"{limit:g} dB{what}"
                + (f"; fits with {' or '.join(fix)}" if fix else "")
                + df_note,
                measured=round(total, 2),
                limit=limit,
                unit="dB",
                net=ch.nets[0],
                layer=biggest.layer if biggest else None,
                evidence=ev,
                basis=basis,
            )
        )
    return CheckOutcome(findings, checked=len(chans), examined_nets=nets)


def extras(analysis: Analysis, rules: list[Rule]) -> Any:
    """Report extras: per channel of a signal an ``insertion_loss`` rule ran on, the loss split
    and its budget (the HTML bars, worst first, at most :data:`MAX_BARS`), and the IL(f) curve
    from 0 to 2× Nyquist of the :data:`MAX_CURVES` worst."""
    if not analysis.diff_pairs:
        return []  # no pair, no channel (what loss_table would say), no loss models imported
    from ..analysis.loss import loss_table

    sigs = {r.signal: r for r in rules if r.check == KIND and r.signal}
    budgets = analysis.config.loss.budgets_db
    out = []
    for ch in loss_table(analysis):
        if ch.signal not in sigs:
            continue
        rule = sigs[ch.signal]
        budget = budgets.get(ch.signal, rule.params.get("budget_db"))
        if budget is None:
            st = analysis.signal_types.get(ch.signal)
            budget = getattr(st, "loss_budget_db", None)
        out.append(
            {
                "name": ch.name,
                "signal": ch.signal,
                "nyquist_hz": ch.nyquist_hz,
                "dielectric_db": round(ch.dielectric_db, 3),
                "conductor_db": round(ch.conductor_db, 3),
                "via_db": round(ch.via_db, 3),
                "extra_db": round(ch.extra_db, 3),
                "total_db": round(ch.total_db, 3),
                "budget_db": budget,
                "freqs_hz": [float(f) for f in ch.freqs],
                "il_db": [round(float(v), 3) for v in ch.curve_db],
            }
        )
    out.sort(key=lambda d: -d["total_db"])
    out = out[:MAX_BARS]
    for d in out[MAX_CURVES:]:
        d.pop("freqs_hz")
        d.pop("il_db")
    return out
