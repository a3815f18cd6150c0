"""KiCad's physical stack-up: the ``(stackup …)`` block of a ``.kicad_pcb`` (or of the live board's
text) into a :class:`~accel_drc.model.Stackup`.

Its own module because the file reader, the KiCad plugin's live reader (KiCad 9.0.8's API returns
an empty stack-up, so the plugin parses the board text instead) and the tests all need exactly
this parse, and nothing else of the board reader.  A number that is zero, negative or not finite
is reported through ``warn`` and treated as not declared (never a crash, never a silent zero).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..model import DielectricSublayer, Stackup, StackupLayer
from .sexpr import Sexpr


def _kind_of(raw_type: str) -> str:
    t = raw_type.lower()
    if t == "copper":
        return "copper"
    if t in ("core", "prepreg"):
        return t
    if "silk" in t:
        return "silkscreen"
    if "paste" in t:
        return "solderpaste"
    if "mask" in t:
        return "soldermask"
    return "dielectric"


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        out = float(value)
    except ValueError:
        return None
    return out if math.isfinite(out) else None


#: stack-up fields that must be positive numbers (loss tangent may be 0)
_POSITIVE = {"thickness": "thickness", "epsilon_r": "epsilon_r"}


def _stack_number(
    name: str, key: str, raw: str | None, warn: Callable[[str], None] | None
) -> float | None:
    """A stack-up number, or None (not declared) with a warning when the file's value is not a
    usable one: a non-number, or a thickness / εr that is not positive.  Silently dropping it
    would make later messages say the board "does not declare" what it declares wrongly."""
    if raw is None:
        return None
    try:
        if not math.isfinite(float(raw)):
            # refused, not "not declared": the reader turns this into file:line (exit 3)
            raise ValueError(f"stack-up layer {name!r}: {key} {raw!r} is NaN or infinity")
    except (ValueError, OverflowError) as exc:
        if "NaN or infinity" in str(exc):
            raise
    val = _float(raw)
    bad = val is None or (key in _POSITIVE and val <= 0) or (key == "loss_tangent" and val < 0)
    if bad:
        if warn is not None:
            want = "a number ≥ 0" if key == "loss_tangent" else "a positive number"
            warn(f"stack-up layer {name!r}: {key} {raw!r} is not {want}; treated as not declared")
        return None
    return val


def finish_name(value: object) -> str | None:
    """A board's ``copper_finish`` as the model holds it: KiCad writes "None" (and the API
    sends "None") for a board with no finish declared, which is no finish, not one named None."""
    text = "" if value is None else str(value)
    return None if text in ("None", "") else text


def stackup_from_sexpr(node: Sexpr, warn: Callable[[str], None] | None = None) -> Stackup | None:
    """Build a :class:`Stackup` from a parsed ``(stackup …)`` node; ``warn`` receives one line
    per unusable number (the field is then not declared)."""
    if not isinstance(node, list):
        return None
    layers: list[StackupLayer] = []
    finish: str | None = None
    impedance: bool | None = None
    edge_plating: bool | None = None
    copper_index = 0
    for item in node[1:]:
        if not isinstance(item, list) or not item:
            continue
        head = item[0]
        if head == "copper_finish" and len(item) > 1:
            finish = finish_name(item[1])
        elif head == "dielectric_constraints" and len(item) > 1:
            impedance = item[1] == "yes"
        elif head == "edge_plating" and len(item) > 1:
            edge_plating = item[1] == "yes"
        elif head == "layer" and len(item) > 1:
            name = str(item[1])
            raw_type = ""
            color: str | None = None
            subs: list[dict[str, str]] = [{}]
            for part in item[2:]:
                if part == "addsublayer":
                    subs.append({})
                    continue
                if not isinstance(part, list) or len(part) < 2:
                    continue
                key = part[0]
                if key == "type":
                    raw_type = str(part[1])
                elif key == "color" and color is None:
                    color = str(part[1])
                elif key in ("thickness", "material", "epsilon_r", "loss_tangent"):
                    subs[-1][key] = str(part[1])
            kind = _kind_of(raw_type)
            sublayers = tuple(
                DielectricSublayer(
                    thickness_mm=_stack_number(name, "thickness", s.get("thickness"), warn),
                    material=s.get("material"),
                    epsilon_r=_stack_number(name, "epsilon_r", s.get("epsilon_r"), warn),
                    loss_tangent=_stack_number(name, "loss_tangent", s.get("loss_tangent"), warn),
                )
                for s in subs
            )
            thicknesses = [s.thickness_mm for s in sublayers]
            thickness = (
                None if any(t is None for t in thicknesses) else float(sum(thicknesses))  # type: ignore[misc]
            )
            first = sublayers[0]
            layer = StackupLayer(
                name=name,
                kind=kind,
                thickness_mm=thickness,
                material=first.material,
                epsilon_r=first.epsilon_r,
                loss_tangent=first.loss_tangent,
                sublayers=sublayers if kind in ("core", "prepreg", "dielectric") else (),
                copper_index=copper_index if kind == "copper" else None,
                color=color,
                raw_type=raw_type or None,
            )
            if kind == "copper":
                copper_index += 1
            layers.append(layer)
    if not layers:
        return None
    return Stackup(
        layers=tuple(layers),
        finish=finish,
        impedance_controlled=impedance,
        edge_plating=edge_plating,
    )
