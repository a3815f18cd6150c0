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
Why:
    Dielectric loss grows with Df × frequency: at the Nyquist frequency of a 100G+ lane a
    standard FR-4 (Df ≈ 0.02) eats the channel's loss budget in a few centimetres.
Parameters:
    ``max_df`` (> 0): highest loss tangent allowed for this rule's signal type.
Cannot verify when:
    The board has no stack-up; a dielectric next to a routed layer has no known loss tangent (no
    value in the config or stack-up and a material the library does not know).
Example:
    ``{check: laminate_df, signal: nvlink4, severity: error, params: {max_df: 0.003}}``
    (training): an NVLink pair in FR-4 (tan δ 0.02) fails.
"""

from __future__ import annotations

from typing import Any

from ..analysis.materials import DielectricInfo, materials_meeting, resolve_dielectric
from ..analysis.signals import nets_signal_basis
from ..analysis.stackup import reference_walk, stackup_basis
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import assumption_of, finding, track_rows, where
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
    for g in groups:
        layers = set()
        for n in g.nets:
            layers |= a.net_layers.get(n, frozenset())
        assumption = assumption_of(a, g.nets)
        sig_basis = nets_signal_basis(a.net_signal, g.nets)
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
                if df_basis == "default":
                    fev["declare"] = DECLARE_STACKUP
                out.append(
                    finding(
                        rule,
                        Status.VIOLATION,
                        f"{sname} {g.name} on {lname} ({geometry}): {named} > Df {max_df:g}{note}",
                        measured=worst,
                        limit=max_df,
                        unit="tan δ",
                        net=g.name,
                        layer=lname,
                        pos=pos,
                        items=items,
                        evidence=fev,
                        basis={
                            "loss_tangent": df_basis,
                            "layers_used": "measured",
                            "signal": sig_basis,
                        },
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
