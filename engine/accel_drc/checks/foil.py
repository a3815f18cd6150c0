"""``foil``: the copper foil grade of every layer a fast signal type is routed on.

What it checks:
    The foil grade of each copper layer the rule's signal type is routed on against
    ``min_grade`` (grades ranked in ``rules/foils.yaml``, roughest first).  A KiCad stack-up has
    no foil field, so the grade comes from the config (``stackup: foil:`` by layer name, or
    ``default``) or from the board where the format carries it (IPC-2581).  A violation lists
    the grades of ``rules/foils.yaml`` that meet the limit, with their Rz
    (``evidence["remedy"]``).
Why:
    Above a few GHz the current crowds into the copper's skin, a few µm deep: the foil's surface
    roughness then adds conductor loss, so fast lanes need smooth (VLP/HVLP) foil.
Parameters:
    ``min_grade`` (a ``foils.yaml`` grade id or alias): the roughest foil allowed.
Cannot verify when:
    A layer that needs better than standard foil has no declared grade: the finding gives the
    line to add to ``accel-drc.yaml`` (``stackup: foil: {In3.Cu: <grade>}``, the grade the fab
    quotes).
Example:
    ``{check: foil, signal: nvlink4, severity: error, params: {min_grade: VLP}}`` (training): an
    NVLink layer declared ``RTF`` fails.
"""

from __future__ import annotations

from typing import Any

from ..analysis.signals import nets_signal_basis
from ..results import Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import assumption_of, finding, track_rows, where

KIND = "foil"

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["min_grade"],
    "properties": {"min_grade": {"type": "string", "minLength": 1}},
}


@register(KIND)
def check_foil(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    a = ctx.analysis
    board = ctx.board
    sig = rule.signal
    nets = a.nets_by_signal(sig) if sig else ()
    if not nets:
        return CheckOutcome([], checked=0)
    foils = a.library.foils
    need = foils.grade(str(rule.params["min_grade"]))
    assert need is not None  # validated when the pack was loaded
    st = a.signal_types.get(sig)
    sname = st.name if st else sig
    by_layer: dict[int, list[int]] = {}
    for n in nets:
        for layer in a.net_layers.get(n, ()):
            by_layer.setdefault(layer, []).append(n)
    out = []
    meeting = [g for g in sorted(foils.grades, key=lambda g: g.rank) if g.rank >= need.rank]
    remedy = f"foil grades in rules/foils.yaml that meet {need.id}: " + ", ".join(
        f"{g.id} (Rz {g.rz_um[0]:g}–{g.rz_um[1]:g} µm)" for g in meeting
    )
    for layer, lnets in sorted(by_layer.items()):
        if need.rank == 0:
            continue  # every grade meets standard foil
        lname = board.copper_layers[layer].name
        grade_id = a.foil_of_layer(layer)
        rows = track_rows(a, lnets, layer)
        pos, items = where(a, rows)
        names = [board.nets[n] for n in lnets]
        ev = {
            "signal": sig,
            "net_count": len(lnets),
            "nets": names[:20],
            "declared": grade_id,
            "declared_in": a.foil_source(layer),
        }
        assumption = assumption_of(a, lnets)
        if assumption:
            ev["assumption"] = assumption
        basis = {
            "foil": "declared",
            "layers_used": "measured",
            "signal": nets_signal_basis(a.net_signal, lnets),
        }
        if grade_id is None:
            ev["declare"] = (
                f"declare the foil grade of {lname} (the one your fab quotes) in accel-drc.yaml "
                f"(stackup: foil: {{{lname}: <grade>}}; {need.id} or smoother passes), or export "
                "IPC-2581 with the conductor's surface roughness"
            )
            ev["remedy"] = remedy
            out.append(
                finding(
                    rule,
                    Status.CANNOT_VERIFY,
                    f"{lname} carries {len(lnets)} {sname} nets but its foil grade is not declared "
                    f"(needs {need.id} or smoother)",
                    limit=need.id,
                    unit="grade",
                    layer=lname,
                    net=names[0],
                    pos=pos,
                    items=items,
                    evidence=ev,
                    basis={k: v for k, v in basis.items() if k != "foil"},
                )
            )
            continue
        have = foils.grade(grade_id)
        if have is None or have.rank < need.rank:
            ev["remedy"] = remedy
            out.append(
                finding(
                    rule,
                    Status.VIOLATION,
                    f"{lname} carries {len(lnets)} {sname} nets on {grade_id} foil; needs {need.id} or smoother",
                    measured=grade_id,
                    limit=need.id,
                    unit="grade",
                    layer=lname,
                    net=names[0],
                    pos=pos,
                    items=items,
                    evidence=ev,
                    basis=basis,
                )
            )
    return CheckOutcome(out, checked=len(by_layer))
