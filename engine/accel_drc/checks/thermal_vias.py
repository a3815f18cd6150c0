"""``thermal_vias``: the via field under a hot part, its thermal resistance and temperature rise.

What it checks:
    The hot parts: every part of accel-drc.yaml ``thermal: parts:`` (``{U1: {power_w: 700,
    theta_max_k_per_w: 0.05}}``, declared), else the recognised accelerator (the largest BGA
    feeding the core rail of the PDN analysis, ``assumed``).  Under the part's pads (the
    exposed pad or die shadow: the box of its pads) the vias of its own nets that reach an
    internal layer where that net has a zone (a plane): each barrel's thermal resistance
    θ = L / (k · A), A = π(r_o² − (r_o − t)²) with r_o half the drill, t the plating
    (accel-drc.yaml ``stackup: via_plating_um``, as the IR-drop solve, else the 25 µm of
    ``rules/fab.yaml``), k copper's; a via the file states ``(filling yes)`` adds its core at
    ``thermal: fill_k_w_per_mk``.  The field is the barrels in parallel; reported: θ of the
    field (K/W), the rise at the declared power, against ``theta_max_k_per_w`` or
    ``rise_max_k``, and the count and pitch of these vias that would pass.
Why:
    An accelerator's hundreds of watts leave mostly through the board under it; a via field
    too sparse or too thinly plated is a hot spot the heat sink cannot reach, and the die
    throttles or the solder joints fatigue.
Parameters:
    None (the limits are the part's, declared; the barrel data is ``rules/fab.yaml``'s).
Cannot verify when:
    The part is only recognised (no ``thermal: parts:`` entry: its power is unknown); no limit
    is declared for it; the plating is the default 25 µm; a filled via's fill conductivity is
    not declared (its barrel alone is counted, a bound); the board thickness is KiCad's default.
Example:
    ``thermal: {parts: {U1: {power_w: 20, theta_max_k_per_w: 10}}}`` with 16 vias of 0.30 mm
    drill in a 1.6 mm board under U1: each 192 K/W, the field 12.0 K/W > 10 K/W, a rise of
    240 K at 20 W; 20 such vias pass (pitch given from the pad area).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..arrays import median
from ..results import Finding, Rule, Status
from . import CheckContext, CheckOutcome, register
from ._common import finding
from ._holes import Holes, fab_data, plated_holes, positions

KIND = "thermal_vias"
#: the costly facts it reads (the pipeline computes them ahead; docs/architecture.md)
NEEDS = ("rails",)

#: JSON schema (draft 7) of a rule's ``params``
PARAMS: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}


def barrel_theta(length_mm: np.ndarray, drill_mm: np.ndarray, plating_um: float, k: float,
                 fill_k: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """θ (K/W) of each barrel: L / (k·A), A = π(r_o² − (r_o − t)²), r_o = drill / 2; where
    ``fill_k`` is finite, the core π(r_o − t)² conducts in parallel at that conductivity."""
    r_o = np.asarray(drill_mm, float) / 2.0 * 1e-3
    t = plating_um * 1e-6
    r_i = np.maximum(r_o - t, 0.0)
    g = k * math.pi * (r_o**2 - r_i**2)
    if fill_k is not None:
        g = g + np.where(np.isfinite(fill_k), np.nan_to_num(fill_k) * math.pi * r_i**2, 0.0)
    with np.errstate(divide="ignore"):
        return np.asarray(length_mm, float) * 1e-3 / g


@register(KIND)
def check_thermal_vias(ctx: CheckContext, rule: Rule) -> CheckOutcome:
    out = CheckOutcome()
    fab = fab_data(ctx)
    if fab is None or not len(ctx.board.vias):
        return out
    parts = _hot_parts(ctx)
    if not parts:
        return out
    holes = plated_holes(ctx, pads=False)
    for fp, spec, part_basis in parts:
        out.checked += 1
        got = _part_finding(ctx, rule, holes, fab, fp, spec, part_basis)
        if got is not None:
            out.findings.append(got)
    return out


def _hot_parts(ctx: CheckContext) -> list[tuple[Any, Any, str]]:
    """(footprint, its ``thermal: parts:`` entry or None, basis) of every hot part."""
    declared = ctx.config.thermal.parts
    by_ref = {fp.reference: fp for fp in ctx.board.footprints}
    if declared:
        return [(by_ref[r], s, "declared") for r, s in declared.items() if r in by_ref]
    core = next((r for r in ctx.analysis.rails if r.role == "core"), None)
    if core is None:
        return []
    from ..analysis.pdn.rails import largest_bgas

    ids = set(core.net_ids)
    best = max(
        largest_bgas(ctx.board), key=lambda fp: sum(p.net in ids for p in fp.pads), default=None
    )
    if best is None:
        return []
    basis = "declared" if core.role_basis == "declared" else "assumed"
    return [(best, None, basis)]


#: at most this many via positions of one field in a finding's evidence (the HTML report draws
#: the field from them; an accelerator's field is hundreds of vias, 648 on the synthetic one)
MAX_FIELD_POSITIONS = 4096


def _pad_box(fp: Any) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1) mm: the box of ``fp``'s connected pads (its die shadow), or None."""
    pads = [p for p in fp.pads if p.net > 0]
    if not pads:
        return None
    xs = [p.x - p.width / 2 for p in pads] + [p.x + p.width / 2 for p in pads]
    ys = [p.y - p.height / 2 for p in pads] + [p.y + p.height / 2 for p in pads]
    return min(xs), min(ys), max(xs), max(ys)


def _field_rows(ctx: CheckContext, holes: Holes, fp: Any) -> tuple[np.ndarray, float]:
    """Vias under ``fp``'s pads' box (:func:`_pad_box`), on its nets, reaching an internal layer
    where the same net has a zone; and the box's area (mm²)."""
    box = _pad_box(fp)
    if box is None or not len(holes):
        return np.zeros(0, np.int64), 0.0
    pads = [p for p in fp.pads if p.net > 0]
    x0, y0, x1, y1 = box
    nets = {p.net for p in pads}
    inside = (
        (holes.xy[:, 0] >= x0) & (holes.xy[:, 0] <= x1)
        & (holes.xy[:, 1] >= y0) & (holes.xy[:, 1] <= y1)
    )  # fmt: skip
    rows = np.flatnonzero(inside)
    area = (x1 - x0) * (y1 - y0)
    if not len(rows):
        return rows, area
    via_net = np.asarray(ctx.board.vias.net)[holes.via_rows]
    last = len(holes.layer_names) - 1
    planes: dict[int, set[int]] = {}
    for z in ctx.board.zones:
        if z.net in nets and not z.keepout:
            planes.setdefault(z.net, set()).update(k for k in z.layers if 0 < k < last)
    keep = []
    for r in rows.tolist():
        n = int(via_net[r])
        lay = planes.get(n)
        if (
            n in nets
            and lay
            and any(
                int(holes.start[r]) < k <= int(holes.end[r])
                or int(holes.start[r]) <= k < int(holes.end[r])
                for k in lay
            )
        ):
            keep.append(r)  # fmt: skip
    return np.array(keep, np.int64), area


def _part_finding(
    ctx: CheckContext, rule: Rule, holes: Holes, fab: Any, fp: Any, spec: Any, part_basis: str
) -> Finding | None:
    rows, area = _field_rows(ctx, holes, fp)
    th = fab.thermal
    k = float(th["copper_k_w_per_mk"])
    cfg_plating = ctx.config.stackup.via_plating_um
    plating = float(cfg_plating or th["plating_um"])
    x, y = fp.x, fp.y
    ref = fp.reference
    box = _pad_box(fp)
    # the box judged, for a drawing of the field (the HTML report's board view)
    outline = None if box is None else [round(v, 4) for v in box]
    power = getattr(spec, "power_w", None)
    theta_max = getattr(spec, "theta_max_k_per_w", None)
    rise_max = getattr(spec, "rise_max_k", None)
    if theta_max is None and rise_max is not None and power:
        theta_max = float(rise_max) / float(power)
    if not len(rows):
        return finding(
            rule,
            Status.VIOLATION,
            f"{ref}: no via under it reaches an internal plane of its nets; its heat has no "
            f"path into the board",
            pos=(round(x, 4), round(y, 4)),
            items=[fp.uuid] if fp.uuid else [],
            evidence={"part": ref, "vias": 0, "outline_mm": outline,
                      "declare": _declare_hint(ref)},
            basis={"part": part_basis},
        )  # fmt: skip
    prot = ctx.board.vias.protection
    keep = holes.via_rows
    filled = np.array([bool(getattr(prot.get(int(keep[r])), "filling", False)) for r in rows])
    fill_k_cfg = ctx.config.thermal.fill_k_w_per_mk
    fill_k = np.where(filled, float(fill_k_cfg) if fill_k_cfg else np.nan, np.nan)
    length = holes.span_mm[rows]
    theta_each = barrel_theta(length, holes.drill[rows], plating, k, fill_k)
    ok = np.isfinite(theta_each) & (theta_each > 0)
    if not ok.any():
        return None
    theta = 1.0 / float(np.sum(1.0 / theta_each[ok]))
    n = int(ok.sum())
    basis: dict[str, str] = {
        "part": part_basis,
        "length": holes.basis_of(int(rows[0])) or "default",
        "plating": "declared" if cfg_plating else "default",
        "k": "library",
    }
    if filled.any() and not fill_k_cfg:
        basis["fill"] = "default"
    ev: dict[str, Any] = {
        "part": ref,
        "vias": n,
        "theta_via_k_per_w": round(median(theta_each[ok]), 2),
        "theta_field_k_per_w": round(theta, 4),
        "plating_um": plating,
        "copper_k_w_per_mk": k,
        "filled_vias": int(filled.sum()),
        "positions": positions(holes, rows),
        "outline_mm": outline,
        # every via counted, for a drawing of the field (``positions`` lists the first few)
        "field": [
            [round(a, 4), round(b, 4)] for a, b in holes.xy[rows[ok][:MAX_FIELD_POSITIONS]].tolist()
        ],
    }
    msg = (
        f"{ref}: {n} vias to its planes, θ {theta:.3g} K/W (each ≈ {ev['theta_via_k_per_w']:g} K/W)"
    )
    if power:
        rise = float(power) * theta
        ev.update(power_w=float(power), rise_k=round(rise, 2))
        msg += f", a rise of {rise:.3g} K at {float(power):g} W"
    if power is None or theta_max is None:
        declare = _declare_hint(ref)
        ev["declare"] = declare
        return finding(
            rule, Status.CANNOT_VERIFY, f"{msg}; not judged: declare {declare}",
            measured=round(theta, 4), unit="K/W", pos=(round(x, 4), round(y, 4)),
            items=[fp.uuid] if fp.uuid else [], evidence=ev, basis=basis,
        )  # fmt: skip
    if theta <= float(theta_max) * (1 + 1e-9):
        return None
    need = int(math.ceil(median(theta_each[ok]) / float(theta_max)))
    pitch = math.sqrt(area / need) if area > 0 and need > 0 else None
    ev.update(theta_max_k_per_w=float(theta_max), vias_needed=need,
              pitch_needed_mm=None if pitch is None else round(pitch, 3))  # fmt: skip
    remedy = f"{need} such vias" + (f" (a {pitch:.2f} mm pitch under it)" if pitch else "")
    ev["remedy"] = remedy
    return finding(
        rule,
        Status.VIOLATION,
        f"{msg} > {float(theta_max):g} K/W; remedy: {remedy}, or filled vias",
        measured=round(theta, 4),
        limit=float(theta_max),
        unit="K/W",
        pos=(round(x, 4), round(y, 4)),
        items=[fp.uuid] if fp.uuid else [],
        evidence=ev,
        basis=basis,
    )


def _declare_hint(ref: str) -> str:
    """The ``accel-drc.yaml`` entry that decides a hot part's finding, ready to paste."""
    key = ref if re.fullmatch(r"[A-Za-z][\w.-]*", ref) else "'" + ref.replace("'", "''") + "'"
    return f"thermal: parts: {{{key}: {{power_w: <W>, theta_max_k_per_w: <K/W>}}}}"
