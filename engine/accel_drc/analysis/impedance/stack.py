"""The cross-section a pair sits in, from the board's stack-up: structure, heights, εr of
each side, soldermask, planes (:class:`LayerStack`, :func:`layer_stack`), and the methods and
accuracies the table reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..stackup import reference_walk

# =============================================================================================
# Geometry from the board
# =============================================================================================

#: typical soldermask εr when the stack-up gives a mask thickness but no εr (KiCad's default)
DEFAULT_MASK_ER = 3.3


@dataclass(frozen=True)
class LayerStack:
    """What the impedance of a trace on one copper layer depends on, read from the stack-up.

    ``structure`` is ``microstrip`` (outer layer over a plane) or ``stripline`` (between two
    planes).  ``h_below_mm``/``er_below``: dielectric between the trace's bottom face and the
    plane below (for a B.Cu microstrip: between its top face and the plane above — the side
    towards the plane is always "below" here); ``h_above_mm``/``er_above`` the other side (stripline
    only).  εr is thickness-weighted over the dielectric slices in between.  ``missing`` lists what
    the stack-up does not declare (so the value cannot be computed).
    """

    layer: int
    layer_name: str
    structure: str
    t_mm: float | None
    h_below_mm: float | None
    er_below: float | None
    h_above_mm: float | None = None
    er_above: float | None = None
    references: tuple[str, ...] = ()
    mask: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    dielectrics: tuple[str, ...] = ()  # names of the dielectrics between the layer and its planes
    mask_er_declared: bool = True  # False when the mask εr is the assumed default

    def upright(self) -> LayerStack:
        """The same cross-section seen from its nearer plane: a stripline whose plane above is
        nearer (or, at equal heights, whose εr above is lower) turned upside down, so
        ``h_below_mm ≤ h_above_mm``.  Turning a cross-section over changes none of its fields,
        so two layers that mirror each other (In1/In(n−1) of a symmetric stack-up) give one
        field solution (``analysis/crosstalk.py``).  Microstrip and incomplete stacks are
        returned as they are."""
        if (
            self.structure != "stripline"
            or None in (self.h_below_mm, self.h_above_mm, self.er_below, self.er_above)
            or (self.h_below_mm, self.er_below) <= (self.h_above_mm, self.er_above)  # type: ignore[operator]
        ):
            return self
        return replace(
            self,
            h_below_mm=self.h_above_mm,
            er_below=self.er_above,
            h_above_mm=self.h_below_mm,
            er_above=self.er_below,
            references=self.references[::-1],
        )


def _slices(layer: Any) -> list[tuple[float | None, float | None, str]]:
    """(thickness, εr, name) of every slice of a dielectric (``addsublayer`` splits it)."""
    if layer.sublayers:
        return [(s.thickness_mm, s.epsilon_r, layer.name) for s in layer.sublayers]
    return [(layer.thickness_mm, layer.epsilon_r, layer.name)]


def _height_er(
    diel: Sequence[Any], copper: Sequence[Any], missing: list[str]
) -> tuple[float | None, float | None]:
    """Total height (dielectrics + intermediate copper) and thickness-weighted εr."""
    h = 0.0
    weighted = 0.0
    wsum = 0.0
    ok = True
    for layer in diel:
        for th, er, name in _slices(layer):
            if th is None:
                missing.append(f"thickness of {name}")
                ok = False
                continue
            if th <= 0.0:  # a broken stack-up, not a geometry: unknown, never a crash
                missing.append(f"a positive thickness of {name} (the stack-up says {th:g} mm)")
                ok = False
                continue
            if er is None or er <= 0.0:
                missing.append(
                    f"epsilon_r of {name}"
                    if er is None
                    else f"a positive epsilon_r of {name} (the stack-up says {er:g})"
                )
                ok = False
            else:
                weighted += er * th
                wsum += th
            h += th
    for layer in copper:
        if layer.thickness_mm is None:
            missing.append(f"thickness of {layer.name}")
            ok = False
        else:
            h += layer.thickness_mm
    if not ok or h <= 0.0 or wsum <= 0.0:
        if not diel:
            missing.append("a dielectric between the layer and its reference plane")
        elif ok:
            missing.append("a dielectric of positive height between the layer and its plane")
        return None, None
    # round off float noise (3.6·0.15/0.15 = 3.6000000000000005) far below any data's precision
    return round(h, 9), round(weighted / wsum, 9)


def layer_stack(board: Any, layer: int, planes: Any) -> LayerStack:
    """Microstrip/stripline geometry of copper layer ``layer`` from the board's stack-up.

    Reference planes (the one walk, :func:`~accel_drc.analysis.stackup.reference_walk`, shared
    with ``laminate_df`` and the loss model): walking away from the layer, the
    first copper layer that carries a plane — typed ``power`` in KiCad, or filled over ≥ 25 % of
    the board by zones of a ground/supply net (``Analysis.plane_layers``).  When no such layer
    lies on a side, the adjacent copper layer is assumed to be the reference, and a note says so.
    An outer layer is a microstrip over the plane below it (B.Cu: above it); an inner layer is a
    stripline between the planes above and below.
    """
    name = board.copper_layers[layer].name
    stack = board.stackup
    if stack is None or not stack.layers:
        return LayerStack(layer, name, "unknown", None, None, None, missing=("the stack-up",))
    walk = reference_walk(stack, layer, planes or {})
    if walk is None:
        return LayerStack(
            layer, name, "unknown", None, None, None, missing=(f"{name} in the stack-up",)
        )
    pos = walk.position
    own = stack.layers[pos]
    missing: list[str] = []
    notes: list[str] = []
    t = own.thickness_mm
    if t is None:
        missing.append(f"copper thickness of {name}")
    n = board.layer_count
    outer = layer in (0, n - 1)
    sides = []
    diel_names: list[str] = []
    mask_er_declared = True
    for step in (1,) if layer == 0 else (-1,) if layer == n - 1 else (-1, 1):
        got = walk.above if step < 0 else walk.below
        diel, copper, ref, known = got.dielectrics, got.copper, got.reference, got.known_plane
        if ref is None:
            missing.append(f"a reference plane {'above' if step < 0 else 'below'} {name}")
            sides.append((None, None, ""))
            continue
        if not known:
            notes.append(
                f"no plane detected on {ref.name}: assumed to be the reference "
                f"{'above' if step < 0 else 'below'} {name}"
            )
        h, er = _height_er(diel, copper, missing)
        sides.append((h, er, ref.name))
        diel_names.extend(d.name for d in diel)
    mask = None
    if outer:
        mask_layer = None
        j = pos - 1 if layer == 0 else pos + 1
        while 0 <= j < len(stack.layers):
            sl = stack.layers[j]
            if sl.kind == "soldermask":
                mask_layer = sl
                break
            if sl.is_copper or sl.is_dielectric:
                break
            j += -1 if layer == 0 else 1
        if mask_layer is not None and mask_layer.thickness_mm:
            er_m = mask_layer.epsilon_r
            if er_m is None:
                er_m = DEFAULT_MASK_ER
                mask_er_declared = False
                notes.append(f"{mask_layer.name}: no epsilon_r declared, {DEFAULT_MASK_ER} assumed")
            mask = (float(mask_layer.thickness_mm), float(er_m))
        else:
            notes.append("no soldermask in the stack-up: computed uncoated")
        h, er, ref = sides[0]
        return LayerStack(
            layer,
            name,
            "microstrip",
            t,
            h,
            er,
            references=(ref,) if ref else (),
            mask=mask,
            notes=tuple(notes),
            missing=tuple(dict.fromkeys(missing)),
            dielectrics=tuple(diel_names),
            mask_er_declared=mask_er_declared,
        )
    (ha, era, refa), (hb, erb, refb) = sides
    return LayerStack(
        layer,
        name,
        "stripline",
        t,
        hb,
        erb,
        h_above_mm=ha,
        er_above=era,
        references=tuple(r for r in (refa, refb) if r),
        notes=tuple(notes),
        missing=tuple(dict.fromkeys(missing)),
        dielectrics=tuple(diel_names),
    )
