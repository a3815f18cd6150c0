"""The KiCad reader's part that reads footprint pads: the numpy pre-pass over every pad's
fields, each pad's shape, size, drill, layers, net, pin name and type, pad-to-die length and
delay, and a custom pad's copper (its primitives' union, in the pad's own frame).  Mixed into
:class:`~accel_drc.readers.kicad_file._Reader`, whose state (the file's bytes, its parenthesis
index, layers, nets, the per-footprint pad rows and drill cache) it shares."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ..geometry import rotate_nm
from ..model import Pad
from .kicad_blocks import (
    ATOM,
    NESTED_PREFIXES,
    TRACK_BLOCK,
    VALUE,
    VIA_KW_LEN,
    VIA_WORDS,
    data_is_tstamp,
    kid_codes,
    kid_prefix,
    u64_view,
    via_fields_once,
)
from .kicad_graphics import Transform, to_nm
from .sexpr import find_balanced, unquote

_PAD_HEAD = re.compile(rb"\(pad\s+(" + ATOM + rb")\s+([^\s()]+)\s+([^\s()]+)")
_PAD_FIELD = re.compile(rb"\((at|size|drill|layers|net|uuid|tstamp)\s+" + VALUE)
#: a pad's schematic pin name and type (KiCad 6+): ``(pinfunction "DQS_t") (pintype "bidirectional")``
_PIN_FIELD = re.compile(rb'\((pinfunction|pintype)\s+("(?:[^"\\]|\\.)*"|[^\s()"]+)')
#: a pad's pad-to-die length (mm) and KiCad 10 delay (ps): read only from a pad whose text holds
#: ``(die_`` (one bytes search per pad; the package data is rare)
_PAD_DIE = re.compile(rb"\(die_(length|delay)\s+([-+0-9.eE]+)\s*\)")
#: a custom pad's primitives and a circular anchor
_PRIMITIVES = re.compile(rb"\(primitives[\s)]")
_ANCHOR_CIRCLE = re.compile(rb"\(anchor\s+circle\b")


class PadReading:
    """Reads the footprints' pads (mixed into :class:`~accel_drc.readers.kicad_file._Reader`)."""

    def _pad_prepass(self, spans: list[tuple[int, int]]) -> None:
        """Find the fields of every pad and parse their numbers in numpy blocks.

        Why: a Python regex pass per pad was the largest fixed cost of reading a board of many
        pads.  Here the fields of plain pads (each
        of at/size/drill/layers/net/uuid once, directly under the pad, nothing nested that
        could hold them) are located in the index and the ``at``/``size`` numbers parsed for all
        pads at once; :meth:`_pad` then only slices and looks up.  Other pads (custom shapes,
        padstacks, odd layouts) keep the regex path.
        """
        self._pad_rows: dict[int, tuple] = {}
        if not spans:
            return
        arr = np.asarray(spans, dtype=np.int64)
        u64 = u64_view(self.data)
        for i0 in range(0, arr.shape[0], TRACK_BLOCK):
            blk = arr[i0 : i0 + TRACK_BLOCK]
            m = blk.shape[0]
            got = self._block_kids(blk, 4)
            if got is None:
                continue
            ko, kc, parent = got
            code, good = via_fields_once(u64, ko, parent, m)
            good[parent[kid_prefix(u64, ko, NESTED_PREFIXES)]] = False
            for level in (5, 6):  # a field name deeper down: the regex's first-match rule
                deep = self._block_kids(blk, level)
                if deep is None:
                    good[:] = False
                    break
                dko, _dkc, dpar = deep
                good[dpar[kid_codes(u64, dko, VIA_WORDS) > 0]] = False
                good[dpar[kid_prefix(u64, dko, NESTED_PREFIXES)]] = False
            numeric = (code >= 1) & (code <= 2) & good[parent]
            nums = self._block_numbers(ko[numeric] + VIA_KW_LEN[code[numeric]], kc[numeric])
            if nums is None:
                continue
            flat, first, ntok = nums
            npar, ncode = parent[numeric], code[numeric]
            ok = np.where(ncode == 1, (ntok == 2) | (ntok == 3), (ntok == 1) | (ntok == 2))
            good[npar[~ok]] = False
            at = np.zeros((m, 3))
            size = np.zeros((m, 2))
            for c, target, width in ((1, at, 3), (2, size, 2)):
                sel = ncode == c
                rows, f, nt = npar[sel], first[sel], ntok[sel]
                target[rows, 0] = flat[f]
                second = flat[np.minimum(f + 1, flat.size - 1)]
                target[rows, 1] = np.where(nt > 1, second, 0.0 if c == 1 else flat[f])
                if width == 3:
                    third = flat[np.minimum(f + 2, flat.size - 1)]
                    target[rows, 2] = np.where(nt > 2, third, 0.0)
            # text spans of drill (3), layers (4), net (5), uuid / tstamp (6); -1 = absent
            text = np.full((m, 4, 2), -1, dtype=np.int64)
            for c in (3, 4, 5, 6):
                sel = code == c
                a = ko[sel] + VIA_KW_LEN[c]
                if c == 6:
                    a = a + data_is_tstamp(self.data, ko[sel]) * 2
                text[parent[sel], c - 3, 0] = a
                text[parent[sel], c - 3, 1] = kc[sel]
            starts = blk[:, 0].tolist()
            at_l, size_l, text_l = at.tolist(), size.tolist(), text.tolist()
            for r in np.flatnonzero(good).tolist():
                self._pad_rows[starts[r]] = (at_l[r], size_l[r], text_l[r])

    def _drill_of(self, raw: bytes) -> float | None:
        """A pad's drill in mm from the text of its ``(drill …)`` (an oval's smaller side)."""
        got = self._drill_cache.get(raw)
        if got is None and raw not in self._drill_cache:
            drill_mm = None
            dr = [p for p in raw.split(b"(")[0].split() if p != b"oval"]
            if dr:
                d0 = float(dr[0])
                drill_mm = min(d0, float(dr[1])) if len(dr) > 1 else d0
                if drill_mm <= 0:
                    drill_mm = None
            self._drill_cache[raw] = got = drill_mm
        return got

    def _pin_of(self, s: int, e: int) -> tuple[str, str]:
        """(pinfunction, pintype) of the pad in ``data[s:e]``, "" where absent: one ``find``
        per pad (C speed) and a regex only on pads that carry them."""
        if self.data.find(b"(pin", s, e) < 0:
            return "", ""
        got = {m.group(1): unquote(m.group(2)) for m in _PIN_FIELD.finditer(self.data, s, e)}
        return got.get(b"pinfunction", ""), got.get(b"pintype", "")

    def _pad(self, s: int, e: int, t: Transform) -> Pad:
        pad = self._pad_plain(s, e, t)
        if self.data.find(b"(die_", s, e) < 0:
            return pad
        return self._pad_die(pad, s, e)

    def _pad_die(self, pad: Pad, s: int, e: int) -> Pad:
        """``pad`` with its ``(die_length …)`` / ``(die_delay …)`` (the first of each directly in
        the pad's text; a value that is not a finite number is a bad-input error)."""
        got: dict[str, float] = {}
        for m in _PAD_DIE.finditer(self.data, s, e):
            key = m.group(1).decode()
            if key in got:
                continue
            v = float(m.group(2))
            if not math.isfinite(v):
                raise self.fail(f"pad die_{key}: not a finite number", m.start())
            got[key] = v
        if not got:
            return pad
        return dataclasses.replace(
            pad, die_length_mm=got.get("length"), die_delay_ps=got.get("delay")
        )

    def _pad_plain(self, s: int, e: int, t: Transform) -> Pad:
        data = self.data
        pin_function, pin_type = self._pin_of(s, e)
        head = _PAD_HEAD.match(data, s, e)
        if not head:
            raise self.fail("malformed (pad …): expected number, type and shape", s)
        fast = self._pad_rows.get(s)
        if fast is not None:
            (lx, ly, rot), (w, h), spans = fast
            rx, ry = rotate_nm(to_nm(lx), to_nm(ly), t.deg)
            (da, db), (la, lb), (na, nb), (ua, ub) = spans
            copper, names = self.layer_indexes(data[la:lb] if la >= 0 else b"")
            return Pad(
                number=unquote(head.group(1)),
                net=self.net_ref(data[na:nb] if na >= 0 else b""),
                type=head.group(2).decode("utf-8", "replace"),
                shape=head.group(3).decode("utf-8", "replace"),
                x=(rx + to_nm(t.x)) / 1e6,
                y=(ry + to_nm(t.y)) / 1e6,
                width=w,
                height=h,
                rotation=rot,
                drill_mm=self._drill_of(data[da:db]) if da >= 0 else None,
                copper_layers=copper,
                layers=names,
                uuid=unquote(data[ua:ub].strip()) if ua >= 0 else "",
                pin_function=pin_function,
                pin_type=pin_type,
            )
        f, _skips = self._fields(_PAD_FIELD, s, e)
        at = f.get(b"at", b"0 0").split()
        lx, ly = float(at[0]), float(at[1])
        rot = float(at[2]) if len(at) > 2 else 0.0
        # placed like KiCad places it: integer nm, RotatePoint with KiROUND, plus the position
        rx, ry = rotate_nm(to_nm(lx), to_nm(ly), t.deg)
        px, py = (rx + to_nm(t.x)) / 1e6, (ry + to_nm(t.y)) / 1e6
        size = f.get(b"size", b"0 0").split()
        w = float(size[0])
        h = float(size[1]) if len(size) > 1 else w
        drill_mm = None
        dr = [p for p in f.get(b"drill", b"").split() if p != b"oval"]
        if dr:
            d0 = float(dr[0])
            drill_mm = min(d0, float(dr[1])) if len(dr) > 1 else d0
            if drill_mm <= 0:
                drill_mm = None
        copper, names = self.layer_indexes(f.get(b"layers", b""))
        shape = head.group(3).decode("utf-8", "replace")
        return Pad(
            number=unquote(head.group(1)),
            net=self.net_ref(f.get(b"net", b"")),
            type=head.group(2).decode("utf-8", "replace"),
            shape=shape,
            x=px,
            y=py,
            width=w,
            height=h,
            rotation=rot,
            drill_mm=drill_mm,
            copper_layers=copper,
            layers=names,
            uuid=unquote(f.get(b"uuid", f.get(b"tstamp", b"")).strip()),
            pin_function=pin_function,
            pin_type=pin_type,
            custom=self._custom_pad(s, e, w, h) if shape == "custom" else (),
        )

    def _custom_pad(self, s: int, e: int, w: float, h: float) -> tuple[np.ndarray, ...]:
        """A custom pad's copper in its own frame: the anchor (``(options (anchor circle|rect))``,
        a rectangle when not written) of its size, joined with each ``(primitives …)`` graphic
        (:func:`graphic_geometry`).  Exterior rings of the union; () when the pad has no
        primitives (then it is its anchor: the rectangle already read)."""
        import shapely

        m = _PRIMITIVES.search(self.data, s, e)
        if not m:
            return ()
        node = self.node(m.start(), find_balanced(self.data, m.start()))
        if _ANCHOR_CIRCLE.search(self.data, s, e):
            parts = [shapely.Point(0, 0).buffer(w / 2.0, quad_segs=16)]
        else:
            parts = [shapely.box(-w / 2.0, -h / 2.0, w / 2.0, h / 2.0)]
        for prim in node[1:] if isinstance(node, list) else ():
            if isinstance(prim, list) and prim and str(prim[0]).startswith("gr_"):
                geom = self._geometry(prim, m.start(), in_pad=True)
                if geom is not None:
                    parts.append(geom)
        union = shapely.union_all(parts)
        return tuple(
            np.asarray(p.exterior.coords, float)
            for p in getattr(union, "geoms", (union,))
            if p.area > 0
        )
