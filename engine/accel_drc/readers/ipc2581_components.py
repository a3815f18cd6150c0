"""The parts of an IPC-2581 file: ``PadStackDef`` padstacks, ``Package`` pins, ``Component``
placements, ``BomItem`` values and ``LogicalNet`` pins while the document streams, then each
:class:`Footprint` with its pads (placed, mirrored and rotated as pcbnew would, KiCad's exporter
names and rotations undone)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import (
    Footprint,
    Pad,
)
from .ipc2581_records import Node, PadAcc, PadstackDef, Pin, Shape, first_child

_KICAD_UNNUMBERED = re.compile(r"(?:PAD|NPTH)\d+")


class ComponentReading:
    """The reader's part that reads the components (mixed into
    :class:`~accel_drc.readers.ipc2581._Reader`, whose state it shares)."""

    # -- step: padstacks, packages, components, nets, outline --------------------------------------

    def _on_padstack_def(self, elem: Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        ps = PadstackDef()
        for child in elem:
            tag = child.tag
            if tag == "PadstackHoleDef":
                ps.hole_mm = self._len(child, "diameter")
                ps.plating = (child.get("platingStatus") or "").upper()
            elif tag == "PadstackPadDef" and (child.get("padUse") or "REGULAR") == "REGULAR":
                shape = self._shape_ref(child)
                if shape is not None:
                    ps.pads[child.get("layerRef", "")] = shape
        self.padstacks[name] = ps

    def _on_package(self, elem: Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        pins = []
        for child in elem:
            if child.tag != "Pin":
                continue
            loc = first_child(child, "Location")
            x = y = 0.0
            if loc is not None:
                x, y = self._xy(loc)
            xf = first_child(child, "Xform")
            rot = self._num(xf, "rotation", 0.0) if xf is not None else 0.0
            pins.append(
                Pin(
                    number=child.get("number", ""),
                    x=x,
                    y=y,
                    kind=(child.get("type") or "").upper(),
                    shape=self._shape_ref(child),
                    rotation=rot,
                )
            )
        self.packages[name] = pins

    def _on_component(self, elem: Node, parent: str) -> None:
        ref = elem.get("refDes")
        if not ref:
            return
        loc = first_child(elem, "Location")
        xf = first_child(elem, "Xform")
        x, y = self._xy(loc) if loc is not None else (0.0, 0.0)
        self.components.append(
            {
                "ref": ref,
                "package": elem.get("packageRef", ""),
                "part": elem.get("part", ""),
                "layer": elem.get("layerRef", ""),
                "mount": (elem.get("mountType") or "").upper(),
                "x": x,
                "y": y,
                "rotation": self._num(xf, "rotation", 0.0) if xf is not None else 0.0,
                "mirror": xf is not None and (xf.get("mirror") or "").lower() == "true",
            }
        )

    def _on_bom_item(self, elem: Node, parent: str) -> None:
        value = None
        for sub in elem.iter():
            if sub.tag == "Textual" and (
                (sub.get("textualCharacteristicName") or "").lower() == "value"
            ):
                value = sub.get("textualCharacteristicValue")
        if value is None:
            return
        for sub in elem:
            if sub.tag == "RefDes" and sub.get("name"):
                self.values[sub.get("name", "")] = value

    def _on_logical_net(self, elem: Node, parent: str) -> None:
        net = self._net(elem.get("name"))
        for sub in elem:
            if sub.tag == "PinRef":
                self.logical_pins[(sub.get("componentRef", ""), sub.get("pin", ""))] = net

    def _kicad_version(self) -> tuple[int, ...] | None:
        """KiCad's version when KiCad wrote the file (its exporter has quirks we undo)."""
        gen = self.generator or ""
        if not gen.lower().startswith("kicad"):
            return None
        nums = re.findall(r"\d+", gen)
        return tuple(int(x) for x in nums[:3]) if nums else (0,)

    def _kicad_names(self) -> tuple[Mapping[str, str], Mapping[tuple[str, str], str]]:
        """Undo KiCad's name de-duplication: its exporter keeps one set of names for reference
        designators and pin numbers and appends ``_1``, ``_2`` … to the later of two equal names
        (a capacitor ``C6`` and BGA ball ``C6`` become ``C6`` and ``C6_1``).  A name ``X_n`` goes
        back to ``X`` when ``X`` is a name the exporter had already used elsewhere and nothing of
        the same kind (another component, or a pin of the same package) is called ``X``."""
        refs = {c["ref"] for c in self.components}
        pins_by_pkg = {pkg: {p.number for p in pins} for pkg, pins in self.packages.items()}
        all_pins = set().union(*pins_by_pkg.values()) if pins_by_pkg else set()
        # the exporter's one name registry also holds layer, spec, padstack and package names
        # (a part "L3" on a board with a layer "L3" is written "L3_3")
        others = all_pins | set(self.layers) | set(self.specs) | set(self.padstacks)
        others |= set(self.packages)
        ref_map: dict[str, str] = {}
        for ref in refs:
            m = re.fullmatch(r"(.+)_\d+", ref)
            if m and m.group(1) not in refs and m.group(1) in others:
                ref_map[ref] = m.group(1)
            elif m and m.group(1) in refs:
                ref_map[ref] = m.group(1)  # KiCad allows duplicate references (REF**)
        names = refs | set(ref_map.values())
        pin_map: dict[tuple[str, str], str] = {}
        for comp in self.components:
            own = pins_by_pkg.get(comp["package"], set())
            for number in own:
                m = re.fullmatch(r"(.+)_\d+", number)
                if m and m.group(1) not in own and (m.group(1) in names or m.group(1) in others):
                    pin_map[(comp["ref"], number)] = m.group(1)
        return ref_map, pin_map

    def _kicad_value(self, comp: Mapping[str, Any]) -> str:
        """KiCad's BOM section lists only top-side parts; every ``Component part`` is
        ``<library>_<footprint>_<value>`` and packages are ``<footprint>_<n>`` (one package may
        serve several footprints with the same pads, so every package name is tried)."""
        if self._package_bases is None:
            self._package_bases = sorted(
                {re.sub(r"_\d+\Z", "", p) for p in self.packages}, key=len, reverse=True
            )
        own = re.sub(r"_\d+\Z", "", comp["package"])
        part = comp["part"]
        for fp in [own, *self._package_bases]:
            at = part.find(fp + "_") if fp else -1
            if at == 0 or (at > 0 and part[at - 1] == "_"):
                return part[at + len(fp) + 1 :]
        return ""

    def _footprints(self, n: int) -> tuple[Footprint, ...]:
        copper = self._copper()
        kicad = self._kicad_version()
        ref_map: Mapping[str, str] = {}
        pin_map: Mapping[tuple[str, str], str] = {}
        if kicad is not None:
            ref_map, pin_map = self._kicad_names()
        by_comp: dict[str, list[PadAcc]] = {}
        for acc in self.pads.values():
            by_comp.setdefault(acc.comp, []).append(acc)
        out = []
        for comp in self.components:
            ref = comp["ref"]
            layer_idx = copper.get(comp["layer"])
            if layer_idx is None:
                bottom = comp["mirror"] or comp["layer"].upper() in ("BOTTOM", "B.CU")
                layer_idx = n - 1 if bottom else 0
            layer = "B.Cu" if layer_idx == n - 1 and n > 1 else "F.Cu"
            accs = by_comp.pop(ref, [])
            pads = [pad for acc in accs for pad in self._make_pads(acc, pin_map)]
            seen_numbers = {acc.number for acc in accs}
            for pin in self.packages.get(comp["package"], []):
                if pin.number in seen_numbers:
                    continue  # placed on copper already (or an unplaced duplicate number)
                x, y = _place(pin.x, pin.y, comp)
                pads.append(self._pin_pad(pin, x, y, comp, n))
            attrs = {"SMT": ("smd",), "THMT": ("through_hole",)}.get(comp["mount"], ())
            props = {"part": comp["part"], "package": comp["package"]}
            rotation = comp["rotation"]
            if kicad is not None and comp["mirror"]:
                rotation = _kicad_bottom_rotation(rotation, kicad)
            out.append(
                Footprint(
                    reference=ref_map.get(ref, ref),
                    value=self.values.get(ref) or (self._kicad_value(comp) if kicad else ""),
                    name=comp["package"],
                    layer=layer,
                    x=comp["x"],
                    y=comp["y"],
                    rotation=rotation,
                    attributes=attrs,
                    pads=tuple(sorted(pads, key=lambda p: (_natural(p.number), p.x, p.y))),
                    uuid="",
                    properties=props,
                )
            )
        if by_comp:
            self.warnings.append(
                f"pads of {len(by_comp)} component(s) without a <Component>: "
                + ", ".join(sorted(by_comp)[:5])
            )
        return tuple(out)

    def _make_pads(self, acc: PadAcc, pin_map: Mapping[tuple[str, str], str]) -> list[Pad]:
        pad = self._make_pad(acc, pin_map)
        stacked = max((len(v) for v in acc.per_layer.values()), default=1)
        if stacked <= 1:
            return [pad]
        first = acc.per_layer[min(acc.per_layer)]
        out = [pad]
        for k, shape in enumerate(first[1:stacked], 1):
            extra = (
                replace(pad, shape=shape.shape, width=shape.width, height=shape.height)
                if (shape is not None)
                else pad
            )
            on = [li for li, shapes in acc.per_layer.items() if len(shapes) > k]
            if len(on) == 1 and pad.drill_mm is not None:
                # a pad on one layer stacked on a plated pad of the same number (KiCad's SMD
                # pad over a PTH, crosslink U1.9): an SMD pad, not a second barrel
                extra = replace(
                    extra,
                    type="smd",
                    drill_mm=None,
                    copper_layers=(on[0],),
                    layers=(acc.names.get(on[0], ""),),
                )
            out.append(extra)
        return out

    def _make_pad(self, acc: PadAcc, pin_map: Mapping[tuple[str, str], str]) -> Pad:
        hole = self.pin_holes.get((round(acc.x * 1e4), round(acc.y * 1e4)))
        ps = self.padstacks.get(acc.padstack or "")
        drill = hole[0] if hole else ps.hole_mm if ps and ps.hole_mm else None
        plating = hole[1] if hole else ps.plating if ps else None
        if drill is None:
            ptype = "smd"
        elif plating == "NONPLATED":
            ptype = "np_thru_hole"
        else:
            ptype = "thru_hole"
        shape = acc.shape or Shape("custom", 0.0, 0.0)
        net = acc.net or self.logical_pins.get((acc.comp, acc.number), 0)
        number = self._pad_number(acc.comp, acc.number, pin_map)
        return Pad(
            number=number,
            net=net,
            type=ptype,
            shape=shape.shape,
            x=acc.x,
            y=acc.y,
            width=shape.width,
            height=shape.height,
            rotation=acc.rotation,
            drill_mm=drill,
            copper_layers=tuple(sorted(acc.layers)),
            layers=tuple(sorted(acc.layer_names)),
        )

    def _pad_number(self, comp: str, number: str, pin_map: Mapping[tuple[str, str], str]) -> str:
        number = pin_map.get((comp, number), number)
        if self._kicad_version() is not None and _KICAD_UNNUMBERED.fullmatch(number):
            return ""  # KiCad names unnumbered pads PAD0, PAD1 … and bare holes NPTH0 …
        return number

    def _pin_pad(self, pin: Pin, x: float, y: float, comp: Mapping[str, Any], n: int) -> Pad:
        """A package pin that no copper layer shows (a bare NPTH, a pad with no copper)."""
        hole = self.pin_holes.get((round(x * 1e4), round(y * 1e4)))
        ptype = (
            ("np_thru_hole" if hole[1] == "NONPLATED" else "thru_hole")
            if hole
            else "thru_hole"
            if pin.kind == "THRU"
            else "smd"
        )
        shape = pin.shape or Shape("custom", 0.0, 0.0)
        return Pad(
            number=self._pad_number(comp["ref"], pin.number, {}),
            net=self.logical_pins.get((comp["ref"], pin.number), 0),
            type=ptype,
            shape=shape.shape,
            x=x,
            y=y,
            width=shape.width,
            height=shape.height,
            rotation=(pin.rotation + comp["rotation"]) % 360.0,
            drill_mm=hole[0] if hole else None,
            copper_layers=(),
            layers=(),
        )


def _natural(s: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s))


def _place(px: float, py: float, comp: Mapping[str, Any]) -> tuple[float, float]:
    """Package-local pin position (already y-flipped) to board coordinates: mirror, then rotate
    by the component's Xform (counter-clockwise in IPC's y-up frame), then translate."""
    x, y = (-px if comp["mirror"] else px), py
    a = math.radians(comp["rotation"])
    # rotating ccw in y-up is rotating cw in our y-down coordinates
    rx = x * math.cos(a) + y * math.sin(a)
    ry = -x * math.sin(a) + y * math.cos(a)
    return comp["x"] + rx, comp["y"] + ry


def _kicad_bottom_rotation(written: float, kicad: tuple[int, ...]) -> float:
    """pcbnew's orientation of a bottom-side (mirrored) part from the ``Xform rotation`` KiCad
    ``kicad`` wrote for it.  KiCad 9 (9.0.8 tested) writes the orientation negated (-a); KiCad 10
    (10.0.7 tested; ``generateComponents`` in ``pcb_io_ipc2581.cpp``) writes
    ``(-a - 180).Normalize()``, so a part at 90 reads 90 and one at 180 reads 0.  Each is
    undone here; tests/test_ipc2581_kicad.py checks both against that KiCad's pcbnew."""
    if kicad[:1] >= (10,):
        return (-written - 180.0) % 360.0
    return (-written) % 360.0


#: two outline rings are one hole when their boxes agree this closely (mm): a flashed circle
#: and the same circle as a Profile cut-out polygon (KiCad 10 writes both) differ by the
#: polygon's chord error, KiCad's 0.005 mm ``m_MaxError`` by default
