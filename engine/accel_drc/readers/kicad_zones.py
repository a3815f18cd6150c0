"""The KiCad reader's part that reads the zones: each ``(zone …)`` node's net, layers,
priority, name, uuid, keepout flag, minimum thickness, its outline (the first ``polygon``) and
the spans of its filled polygons per copper layer, whose points are parsed only when a check
asks (:class:`~.kicad_blocks.LazyFills`).

Model and units: points and thickness in mm as KiCad writes them; a fill on a layer that is not
a copper layer of the board is skipped.  Mixed into :class:`~accel_drc.readers.kicad_file._Reader`,
whose state (the file's bytes, its parenthesis index, layers and nets) it shares."""

from __future__ import annotations

import numpy as np

from ..model import Zone
from .kicad_blocks import NODE_KEYWORD, LazyFills
from .kicad_stackup import _float
from .sexpr import unquote


class ZoneReading:
    """Reads the board's zones (mixed into :class:`~accel_drc.readers.kicad_file._Reader`)."""

    def _zone(self, s: int, e: int) -> Zone:
        data = self.data
        idx = self.index
        net = 0
        net_name = ""
        layers: tuple[int, ...] = ()
        priority = 0
        name = ""
        uuid = ""
        keepout = False
        min_thickness = None
        outline = np.zeros((0, 2))
        filled: dict[int, list[tuple[int, int]]] = {}
        for cs, ce in idx.children(3, s, e).tolist():
            m = NODE_KEYWORD.match(data, cs)
            if m is None:
                continue
            kw = m.group(1)
            if kw == b"net":
                net = self.net_ref(data[m.end() : ce - 1])
            elif kw == b"net_name":
                net_name = unquote(data[m.end() : ce - 1].strip())
            elif kw in (b"layer", b"layers"):
                layers = self.layer_indexes(data[m.end() : ce - 1])[0]
            elif kw == b"priority":
                priority = int(data[m.end() : ce - 1].split()[0])
            elif kw == b"name":
                name = unquote(data[m.end() : ce - 1].strip())
            elif kw in (b"uuid", b"tstamp"):
                uuid = unquote(data[m.end() : ce - 1].strip())
            elif kw == b"keepout":
                keepout = True
            elif kw == b"min_thickness":
                min_thickness = _float(data[m.end() : ce - 1].strip().decode())
            elif kw == b"polygon" and outline.size == 0:
                for ps, pe in idx.children(4, cs, ce).tolist():
                    if data.startswith(b"(pts", ps):
                        outline = self._points(ps, pe)
            elif kw == b"filled_polygon":
                layer = None
                pts_span = None
                for ps, pe in idx.children(4, cs, ce).tolist():
                    if data.startswith(b"(pts", ps):
                        pts_span = (ps, pe)
                    elif data.startswith(b"(layer", ps):
                        layer = self.copper.get(unquote(data[ps + 6 : pe - 1].strip()))
                if layer is not None and pts_span is not None:
                    filled.setdefault(layer, []).append(pts_span)
        if not net_name and net:
            net_name = self.net_names[net]
        return Zone(
            net=net,
            net_name=net_name,
            layers=layers,
            priority=priority,
            outline=outline,
            filled=LazyFills(self.data, self.source, filled),
            name=name,
            uuid=uuid,
            keepout=keepout,
            min_thickness_mm=min_thickness,
        )
