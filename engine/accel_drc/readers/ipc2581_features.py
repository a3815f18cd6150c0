"""The layer features of an IPC-2581 file: each copper ``Set`` (tracks, arcs, polylines, zone
fills, pads), each drill ``Set`` (vias and their spans, slots, backdrill bores), the via
protection layers and ``PadStack`` vias while the document streams, then the board's
:class:`Tracks`, :class:`Vias` (with backdrills and protection) and :class:`Zone` fills."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ..geometry import arc_from_centre, bridge_holes, circle_points
from ..model import (
    Backdrill,
    Tracks,
    ViaProtection,
    Vias,
    Zone,
    copper_layer_name,
)
from .ipc2581_records import (
    COPPER_FUNCTIONS,
    DRILL_FUNCTIONS,
    PROTECTION_FUNCTIONS,
    Bore,
    LayerDecl,
    Node,
    PadAcc,
    Shape,
    Spec,
    ViaRow,
    first_child,
)


class FeatureReading:
    """The reader's part that reads the layer features (mixed into
    :class:`~accel_drc.readers.ipc2581._Reader`, whose state it shares)."""

    def _on_set(self, elem: Node, parent: str) -> None:
        layer = self.cur_layer
        if parent != "LayerFeature" or layer is None:
            return
        decl = self.layers.get(layer)
        if decl is None:
            return
        if decl.function in COPPER_FUNCTIONS:
            self._copper_set(elem, decl)
        elif decl.function in DRILL_FUNCTIONS or decl.function == "ROUT":
            self._drill_set(elem, decl)
        elif decl.function == "BOARD_OUTLINE":
            self._outline_set(elem)
        elif decl.function in PROTECTION_FUNCTIONS:
            self._protection_set(elem, decl)

    def _protection_set(self, elem: Node, decl: LayerDecl) -> None:
        """The vias a protection layer holds a pad for (:data:`PROTECTION_FUNCTIONS`), keyed by
        position (to the µm) with the :class:`ViaProtection` field it states as True.  Such a
        layer only lists the vias that have the protection: one that does not is not stated
        (None), never "no"."""
        word = self._protection_word(decl)
        if word is None:
            return
        for child in elem:
            if child.tag not in ("Pad", "Hole"):
                continue
            loc = first_child(child, "Location") if child.tag == "Pad" else child
            if loc is None:
                continue
            x, y = self._xy(loc)
            self.via_protect.setdefault((round(x * 1e3), round(y * 1e3)), {})[word] = True

    def _protection_word(self, decl: LayerDecl) -> str | None:
        """The :class:`ViaProtection` field a protection layer states, or None (with a warning
        once per layer) when the layer says nothing this reader can tell apart."""
        if decl.span is not None:
            return "filling" if decl.function == "HOLEFILL" else "capping"
        if decl.function == "HOLEFILL" and self._kicad_version() is not None:
            side = {"TOP": "front", "BOTTOM": "back"}.get(decl.side)
            if side is not None:
                return f"plugging_{side}"
        msg = f'{decl.function} layer "{decl.name}" has no Span: its via protection is not read'
        if msg not in self.warnings:
            self.warnings.append(msg)
        return None

    def _outline_set(self, elem: Node) -> None:
        """Closed cut-outs flashed on the board-outline layer (KiCad writes Edge.Cuts circles,
        e.g. mouse bites, there; KiCad 9 not as Profile cut-outs, KiCad 10 as both, so a flash
        that repeats a Profile ``Cutout`` is dropped in :meth:`_outline`); its lines repeat the
        Profile."""
        for feats in elem.iter():
            if feats.tag not in ("Features", "UserSpecial"):
                continue
            loc: tuple[float, float] | None = None
            for child in feats:
                if child.tag == "Location":
                    loc = self._xy(child)
                    continue
                if loc is None:
                    continue
                if child.tag == "StandardPrimitiveRef":
                    shape = self.standard.get(child.get("id", ""))
                elif child.tag == "UserPrimitiveRef":
                    shape = self.user.get(child.get("id", ""))
                else:
                    shape = self._primitive(child, self._scale())
                if shape is not None and shape.shape in ("circle", "rect") and shape.width > 0:
                    self.cutouts.append(_shape_ring(shape, loc))
                loc = None

    def _copper_set(self, elem: Node, decl: LayerDecl) -> None:
        index = self._copper().get(decl.name)
        if index is None:
            return
        net = self._net(elem.get("net"))
        usage = (elem.get("geometryUsage") or "").upper()
        graphic = usage in ("TEXT", "GRAPHIC") or elem.get("componentRef") is not None
        # revision B has no geometryUsage: KiCad marks copper text with a TEXT attribute
        graphic = graphic or any(
            c.tag == "NonstandardAttribute" and (c.get("name") or "").upper() == "TEXT"
            for c in elem
        )
        via_set = (elem.get("padUsage") or "").upper() == "VIA"
        for child in elem:
            tag = child.tag
            if tag == "Features" and not graphic:
                self._features(child, index, net)
            elif tag == "Pad":
                self._pad(child, index, net, decl.name, via_set)

    def _features(self, elem: Node, layer: int, net: int) -> None:
        for child in elem:
            tag = child.tag
            if tag in ("UserSpecial", "Features"):
                self._features(child, layer, net)
            elif tag == "Line":
                self._track(*self._xy(child, "startX", "startY"), *self._xy(child, "endX", "endY"))
                self._track_tail(self._width(child), layer, net)
            elif tag == "Arc":
                start = self._xy(child, "startX", "startY")
                end = self._xy(child, "endX", "endY")
                center = self._xy(child, "centerX", "centerY")
                cw = (child.get("clockwise") or "false").lower() == "true"
                self._arc(start, end, center, cw, self._width(child), layer, net)
            elif tag == "Polyline":
                self._polyline(child, layer, net)
            elif tag == "Contour":
                self._contour(child, layer, net)

    def _width(self, elem: Node) -> float:
        for child in elem:
            tag = child.tag
            if tag == "LineDesc":
                return self._len(child, "lineWidth") if child.get("lineWidth") else 0.0
            if tag == "LineDescRef":
                width = self.line_widths.get(child.get("id", ""))
                if width is None:
                    raise InputError(
                        self.path, f'LineDescRef "{child.get("id")}" is not in DictionaryLineDesc'
                    )
                return width
        return 0.0

    def _track(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.t_start.append((x0, y0))
        self.t_end.append((x1, y1))
        self.t_mid.append((math.nan, math.nan))

    def _track_tail(self, width: float, layer: int, net: int) -> None:
        self.t_width.append(width)
        self.t_layer.append(layer)
        self.t_net.append(net)

    def _arc(
        self,
        start: tuple[float, float],
        end: tuple[float, float],
        center: tuple[float, float],
        cw_ipc: bool,
        width: float,
        layer: int,
        net: int,
    ) -> None:
        self.t_start.append(start)
        self.t_end.append(end)
        self.t_mid.append(_arc_mid(start, end, center, cw_ipc))
        self._track_tail(width, layer, net)

    def _polyline(self, elem: Node, layer: int, net: int) -> None:
        width = self._width(elem)
        last: tuple[float, float] | None = None
        for step in elem.children:
            if type(step) is dict:  # PolyStepSegment (kept as its attributes)
                if last is None:
                    continue
                nxt = self._xy(step)  # type: ignore[arg-type]
                self._track(*last, *nxt)
                self._track_tail(width, layer, net)
                last = nxt
                continue
            tag = step.tag
            if tag == "PolyBegin":
                last = self._xy(step)
            elif tag == "PolyStepCurve" and last is not None:
                nxt = self._xy(step)
                center = self._xy(step, "centerX", "centerY")
                cw = (step.get("clockwise") or "false").lower() == "true"
                self._arc(last, nxt, center, cw, width, layer, net)
                last = nxt

    def _contour(self, elem: Node, layer: int, net: int) -> None:
        outer: np.ndarray | None = None
        holes: list[np.ndarray] = []
        for child in elem:
            tag = child.tag
            if tag == "Polygon":
                outer = self._ring(child)
            elif tag == "Cutout":
                holes.append(self._ring(child))
        if outer is None or len(outer) < 3:
            return
        self.fills.setdefault((net, layer), []).append(bridge_holes(outer, holes))

    def _pad(self, elem: Node, layer: int, net: int, layer_name: str, via_set: bool) -> None:
        loc = first_child(elem, "Location")
        if loc is None:
            return
        x, y = self._xy(loc)
        pin = first_child(elem, "PinRef")
        padstack = elem.get("padstackDefRef")
        shape = self._shape_ref(elem)
        xf = first_child(elem, "Xform")
        rot = self._num(xf, "rotation", 0.0) if xf is not None else 0.0
        if pin is None:
            ps = self.padstacks.get(padstack or "")
            if via_set or (ps is not None and ps.plating == "VIA"):
                key = (round(x * 1e4), round(y * 1e4))
                size = max(shape.width, shape.height) if shape else 0.0
                got = self.via_pads.get(key)
                if got is None:
                    self.via_pads[key] = (x, y, net, {layer}, size)
                else:
                    got[3].add(layer)
                    self.via_pads[key] = (x, y, got[2] or net, got[3], max(size, got[4]))
            return
        comp, number = pin.get("componentRef", ""), pin.get("pin", "")
        key = (comp, number, round(x * 1e4), round(y * 1e4))
        acc = self.pads.get(key)
        if acc is None:
            acc = self.pads[key] = PadAcc(comp, number, x, y, net, shape, rot, padstack)
        acc.layers.add(layer)
        acc.layer_names.add(layer_name)
        acc.names[layer] = layer_name
        acc.per_layer.setdefault(layer, []).append(shape)
        if acc.net == 0:
            acc.net = net
        if acc.shape is None:
            acc.shape = shape

    def _drill_set(self, elem: Node, decl: LayerDecl) -> None:
        net = self._net(elem.get("net"))
        padstack = elem.get("geometry")
        specs = [c.get("id", "") for c in elem.iter() if c.tag == "SpecRef"]
        spec = next((s for s in specs + decl.spec_refs if self._backdrill_spec(s)), None)
        span = self._span(decl)
        for child in elem.iter():
            tag = child.tag
            if tag == "SlotCavity":
                self._slot(child)
                continue
            if tag != "Hole":
                continue
            x, y = self._xy(child)
            drill = self._len(child, "diameter")
            plating = (child.get("platingStatus") or "PLATED").upper()
            bore_layer = decl.function == "BACKDRILL"
            if (spec is not None and plating == "NONPLATED") or bore_layer:
                self.bores.append(Bore(x, y, drill, span, spec, decl.name))
                continue
            if plating == "VIA":
                if span is None:
                    span = self._through_span(decl.name)
                self.via_rows.append(
                    ViaRow(
                        x,
                        y,
                        drill,
                        None,
                        span[0],
                        span[1],
                        net,
                        child.get("name", ""),
                        padstack,
                        spec,
                    )
                )
            else:
                self.pin_holes[(round(x * 1e4), round(y * 1e4))] = (drill, plating)

    def _slot(self, elem: Node) -> None:
        """A ``SlotCavity`` (an oval or routed hole, as KiCad exports a slotted pad): a plated
        barrel at its centre, its width the narrower side (the model's drill of a slot),
        attached to the pad there like a round hole.  Non-plated slots carry no barrel.

        The slot's shape is either an ``Outline`` polygon in board coordinates (KiCad 9) or a
        standard primitive (``Oval``, ``RectCenter`` …) centred on its ``Location`` (KiCad 10,
        which writes an ``Oval`` with the long side as ``width`` and an ``Xform`` for its
        angle: the centre and the narrow side do not depend on the angle)."""
        plating = (elem.get("platingStatus") or "PLATED").upper()
        centre_width = self._slot_outline(elem)
        if centre_width is None:
            centre_width = self._slot_primitive(elem)
        if centre_width is None:
            self.warnings.append(
                f'SlotCavity "{elem.get("name", "")}" has no outline and no Location (KiCad 10 '
                "writes none in revision B): its barrel is not read; export revision C"
            )
            return
        (x, y), width = centre_width
        if plating == "NONPLATED" or width <= 0:
            return
        self.pin_holes[(round(x * 1e4), round(y * 1e4))] = (width, plating)

    def _slot_outline(self, elem: Node) -> tuple[tuple[float, float], float] | None:
        """(centre, narrow side) of a slot drawn as an ``Outline`` polygon, offset by its
        ``Location`` (KiCad 9 writes 0, 0 there); None when the slot has no outline."""
        outline = first_child(elem, "Outline")
        poly = first_child(outline, "Polygon") if outline is not None else None
        if poly is None:
            return None
        ring = self._ring(poly)
        if len(ring) < 3:
            return (0.0, 0.0), 0.0
        loc = first_child(elem, "Location")
        dx, dy = self._xy(loc) if loc is not None else (0.0, 0.0)
        xmin, ymin = ring.min(axis=0)
        xmax, ymax = ring.max(axis=0)
        centre = ((xmin + xmax) / 2 + dx, (ymin + ymax) / 2 + dy)
        return centre, float(min(xmax - xmin, ymax - ymin))

    def _slot_primitive(self, elem: Node) -> tuple[tuple[float, float], float] | None:
        """(centre, narrow side) of a slot given as a standard primitive at its ``Location``;
        None without a ``Location`` (KiCad 10's revision B export writes none, so the slot's
        place is not in the file) or without a shape."""
        loc = first_child(elem, "Location")
        shape = self._shape_ref(elem)
        if loc is None or shape is None:
            return None
        return self._xy(loc), float(min(shape.width, shape.height))

    def _on_padstack(self, elem: Node, parent: str) -> None:
        """Altium/Allegro style: ``<PadStack net>`` with ``LayerHole`` (+``Span``) and
        ``LayerPad`` children, instead of drill layers."""
        net = self._net(elem.get("net"))
        copper = self._copper()
        pad_layers: set[int] = set()
        size = 0.0
        pin_ref = None
        for child in elem:
            if child.tag == "LayerPad":
                idx = copper.get(child.get("layerRef", ""))
                if idx is not None:
                    pad_layers.add(idx)
                shape = self._shape_ref(child)
                if shape is not None:
                    size = max(size, shape.width, shape.height)
                pin_ref = pin_ref or first_child(child, "PinRef")
                if pin_ref is not None and idx is not None:
                    loc = first_child(child, "Location")
                    if loc is not None:
                        self._pad(child, idx, net, child.get("layerRef", ""), False)
        for child in elem:
            if child.tag != "LayerHole":
                continue
            x, y = self._xy(child)
            drill = self._len(child, "diameter")
            plating = (child.get("platingStatus") or "PLATED").upper()
            span_el = first_child(child, "Span")
            if span_el is not None:
                a = copper.get(span_el.get("fromLayer", ""))
                b = copper.get(span_el.get("toLayer", ""))
                span = (min(a, b), max(a, b)) if a is not None and b is not None else None
            elif pad_layers:
                span = (min(pad_layers), max(pad_layers))
            else:
                span = None
            if span is None:
                span = self._through_span(child.get("name", "LayerHole"))
            if plating == "VIA" and pin_ref is None:
                row = ViaRow(
                    x, y, drill, size or None, span[0], span[1], net, child.get("name", ""), None
                )
                self.via_rows.append(row)
            else:
                self.pin_holes[(round(x * 1e4), round(y * 1e4))] = (drill, plating)

    def _span(self, decl: LayerDecl) -> tuple[int, int] | None:
        if decl.span is None:
            return None
        copper = self._copper()
        a, b = copper.get(decl.span[0]), copper.get(decl.span[1])
        if a is None or b is None:
            raise InputError(
                self.path,
                f'drill layer "{decl.name}" spans {decl.span[0]!r}..{decl.span[1]!r}, '
                "which are not copper layers of this file",
            )
        return (min(a, b), max(a, b))

    def _through_span(self, what: str) -> tuple[int, int]:
        n = len(self._copper())
        msg = f'"{what}" declares no span: read as a through hole'
        if msg not in self.warnings:
            self.warnings.append(msg)
        return (0, max(n - 1, 0))

    def _backdrill_spec(self, name: str) -> bool:
        spec = self._resolve_spec(name)
        return spec is not None and bool(spec.backdrill)

    def _resolve_spec(self, ref: str) -> Spec | None:
        """A spec by reference, tolerating KiCad 9's ``SpecRef id="SPEC_F.Cu"`` pointing at
        ``<Spec name="F.Cu_1">`` (the exporter names the two differently)."""
        spec = self.specs.get(ref)
        if spec is not None:
            return spec
        base = ref[5:] if ref.startswith("SPEC_") else ref
        if base in self.specs:
            return self.specs[base]
        pattern = re.compile(re.escape(base) + r"_\d+\Z")
        for name, cand in self.specs.items():
            if pattern.match(name):
                return cand
        return None

    def _vias(self, n: int) -> Vias:
        rows = list(self.via_rows)
        if not rows and self.via_pads:
            # no drill data for vias: the via pads on copper layers still give position and span
            self.warnings.append("no via holes in drill layers: vias taken from copper via pads")
            for x, y, net, layers, size in self.via_pads.values():
                rows.append(ViaRow(x, y, 0.0, size, min(layers), max(layers), net, "", None))
        unique = rows  # two vias on one spot are two vias (KiCad keeps both)
        diameters = []
        for r in unique:
            d = r.diameter
            if d is None and r.padstack in self.padstacks:
                sizes = [max(s.width, s.height) for s in self.padstacks[r.padstack].pads.values()]
                d = max(sizes) if sizes else None
            if d is None:
                got = self.via_pads.get((round(r.x * 1e4), round(r.y * 1e4)))
                d = got[4] if got else None
            diameters.append(d if d is not None else r.drill)
        by_pos: dict[tuple[int, int], list[int]] = {}
        for i, r in enumerate(unique):
            by_pos.setdefault((round(r.x * 1e3), round(r.y * 1e3)), []).append(i)
        backdrills: dict[int, Backdrill] = {}
        for i, r in enumerate(unique):
            if r.spec is not None:
                bd = self._make_backdrill(r.spec, None, None, n)
                if bd is not None:
                    backdrills[i] = bd
        unmatched = 0
        for bore in self.bores:
            hits = by_pos.get((round(bore.x * 1e3), round(bore.y * 1e3)), [])
            if not hits:
                unmatched += 1
                continue
            bd = self._make_backdrill(bore.spec, bore.span, bore.drill, n)
            if bd is None:
                continue
            for i in hits:
                if i in backdrills and backdrills[i].side != bd.side:
                    self.warnings.append(
                        f"via at ({unique[i].x:.3f}, {unique[i].y:.3f}) is backdrilled from both "
                        f"faces: only the {backdrills[i].side} backdrill is kept"
                    )
                    continue
                backdrills[i] = bd
        if unmatched:
            self.warnings.append(f"{unmatched} backdrill hole(s) sit on no via: ignored")
        protection = self._protection_of(by_pos)
        m = len(unique)
        return Vias(
            pos=np.array([(r.x, r.y) for r in unique], dtype=np.float64).reshape(m, 2),
            drill=np.array([r.drill for r in unique], dtype=np.float64),
            diameter=np.array(diameters, dtype=np.float64),
            start=np.array([r.start for r in unique], dtype=np.int16),
            end=np.array([r.end for r in unique], dtype=np.int16),
            net=np.array([r.net for r in unique], dtype=np.int32),
            micro=np.zeros(m, dtype=bool),
            uuid=tuple(r.name for r in unique),
            layer_count=n,
            backdrills=backdrills,
            protection=protection,
        )

    def _protection_of(
        self, by_pos: Mapping[tuple[int, int], list[int]]
    ) -> dict[int, ViaProtection]:
        """Via row -> the protection its protection-layer pads state (:meth:`_protection_set`);
        a pad on no via is counted in one warning."""
        out: dict[int, ViaProtection] = {}
        stray = 0
        for key, fields in self.via_protect.items():
            rows = by_pos.get(key, [])
            if not rows:
                stray += 1
            for i in rows:
                out[i] = ViaProtection(**fields)
        if stray:
            self.warnings.append(f"{stray} via protection pad(s) sit on no via: ignored")
        return out

    def _make_backdrill(
        self, spec_name: str | None, span: tuple[int, int] | None, drill: float | None, n: int
    ) -> Backdrill | None:
        copper = self._copper()
        spec = self._resolve_spec(spec_name) if spec_name else None
        bd = spec.backdrill if spec is not None else {}
        start = copper.get(bd.get("start", "")) if bd.get("start") else None
        mnc = copper.get(bd.get("must_not_cut", "")) if bd.get("must_not_cut") else None
        for key, idx in (("start", start), ("must_not_cut", mnc)):
            if bd.get(key) and idx is None:
                self.warnings.append(
                    f'backdrill Spec "{spec_name}": {key} layer "{bd[key]}" is not a copper layer'
                )
        if start is None and span is not None:
            start = span[0] if span[0] == 0 else span[1] if span[1] == n - 1 else None
        if start is None:
            self.warnings.append(f'backdrill "{spec_name}": no start layer, ignored')
            return None
        side = "top" if start == 0 else "bottom" if start == n - 1 else None
        if side is None:
            self.warnings.append(
                f'backdrill "{spec_name}" starts on an inner layer ({copper_layer_name(start, n)})'
                ": ignored"
            )
            return None
        if mnc is None and span is not None:
            mnc = span[1] + 1 if side == "top" else span[0] - 1
            if not 0 <= mnc < n:
                mnc = None
        return Backdrill(
            side=side,
            must_not_cut=mnc,
            drill_mm=drill,
            max_stub_mm=bd.get("max_stub_mm"),
            source="ipc2581",
        )

    def _tracks(self) -> Tracks:
        m = len(self.t_width)
        return Tracks(
            start=np.array(self.t_start, dtype=np.float64).reshape(m, 2),
            end=np.array(self.t_end, dtype=np.float64).reshape(m, 2),
            mid=np.array(self.t_mid, dtype=np.float64).reshape(m, 2),
            width=np.array(self.t_width, dtype=np.float64),
            layer=np.array(self.t_layer, dtype=np.int16),
            net=np.array(self.t_net, dtype=np.int32),
            uuid=(),
        )

    def _zones(self) -> tuple[Zone, ...]:
        """One zone per net with its filled copper per layer: IPC-2581 carries the fills, not
        KiCad's zone outlines, priorities or settings."""
        by_net: dict[int, dict[int, list[np.ndarray]]] = {}
        for (net, layer), polys in self.fills.items():
            by_net.setdefault(net, {})[layer] = polys
        names = sorted(self.nets, key=self.nets.__getitem__)
        zones = []
        for net in sorted(by_net):
            filled = {layer: tuple(polys) for layer, polys in sorted(by_net[net].items())}
            zones.append(
                Zone(
                    net=net,
                    net_name=names[net],
                    layers=tuple(filled),
                    filled=filled,
                    name=f"fill {names[net] or '(no net)'}",
                )
            )
        return tuple(zones)


def _arc_mid(
    start: tuple[float, float], end: tuple[float, float], center: tuple[float, float], cw_ipc: bool
) -> tuple[float, float]:
    """Mid point of an arc given in board coordinates (y down) whose direction was stated in
    IPC's y-up frame: a clockwise arc there runs towards increasing angle here (the y flip
    mirrors the sense of rotation)."""
    r, a0, sweep = arc_from_centre(start, end, center, increasing=cw_ipc)
    am = a0 + sweep / 2
    return center[0] + r * math.cos(am), center[1] + r * math.sin(am)


def _shape_ring(shape: Shape, at: tuple[float, float]) -> np.ndarray:
    """A flashed circle or rectangle as a closed ring centred on ``at``."""
    x, y = at
    if shape.shape == "circle":
        return np.asarray(circle_points(at, shape.width / 2.0), dtype=np.float64)
    w, h = shape.width / 2.0, shape.height / 2.0
    return np.array(
        [[x - w, y - h], [x + w, y - h], [x + w, y + h], [x - w, y + h], [x - w, y - h]]
    )
