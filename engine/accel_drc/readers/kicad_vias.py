"""The KiCad reader's part that reads vias: the fast numpy pass over every ``(via …)`` block
(position, size, drill, layers, net, type flags), the slow per-via parse for the vias that hold
nested blocks (KiCad 10's backdrills, tertiary drills, padstacks), the backdrill entries and
the IPC-4761 via protection.  Mixed into :class:`~accel_drc.readers.kicad_file._Reader`, whose
state (the file's bytes, its parenthesis index, layers and nets) it shares."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..concurrency import ordered_map
from ..model import Backdrill, ViaProtection, Vias, via_type_for_span
from .kicad_blocks import (
    NESTED_PREFIXES,
    TRACK_BLOCK,
    VALUE,
    VIA_KW_LEN,
    VIA_NUMS,
    VIA_PROTECTION_PREFIXES,
    VIA_WORDS,
    SpanStrings,
    data_is_tstamp,
    kid_codes,
    kid_prefix,
    u64_view,
    via_fields_once,
)
from .kicad_stackup import _float
from .sexpr import find_balanced, unquote

if TYPE_CHECKING:
    from .kicad_fields import TokenKeys

_VIA_HEAD = re.compile(rb"\(via((?:\s+(?:locked|blind|buried|micro|through))*)")
_VIA_FLAG = re.compile(rb"\((remove_unused_layers|keep_end_layers)\s*(yes|no)?\s*\)")
_VIA_FIELD = re.compile(rb"\((at|size|drill|layers|net|uuid|tstamp)\s+" + VALUE)
#: KiCad 10's IPC-4761 via protection: ``(filling yes)``, ``(tenting (front yes) (back none))``
_VIA_PROTECT = re.compile(rb"\((tenting|covering|plugging|filling|capping)\b")
_PROTECT_VALUE = {b"yes": True, b"no": False}


class ViaReading:
    """Reads the board's vias (mixed into :class:`~accel_drc.readers.kicad_file._Reader`)."""

    def _via_block(
        self,
        spans: np.ndarray,
        pos: np.ndarray,
        dia: np.ndarray,
        drill: np.ndarray,
        ustart: np.ndarray,
        ulen: np.ndarray,
        removed: np.ndarray,
        keep_end: np.ndarray,
    ) -> tuple[np.ndarray, tuple[np.ndarray, TokenKeys] | None]:
        """Parse one block of plain through vias (no type keyword, no nested drill or
        padstack, each field once at level 3 and nowhere deeper) into the given row views;
        returns the rows done (the others go the slow way) and the rows and texts of the nets
        to look up (:meth:`_token_apply`, by the caller, in file order).  Reads ``self.data``
        and the index only, so blocks may be parsed on several threads."""
        data = self.data
        m = spans.shape[0]
        got = self._block_kids(spans, 3)
        deep = self._block_kids(spans, 4)
        if got is None or deep is None:
            return np.zeros(m, dtype=bool), None
        ko, kc, parent = got
        u64 = u64_view(data)
        code, good = via_fields_once(u64, ko, parent, m)
        dko, _dkc, dpar = deep
        dcode = kid_codes(u64, dko, VIA_WORDS)
        good[dpar[dcode > 0]] = False  # a field name deeper down: the old first-match rule
        # backdrill / tertiary_drill / padstack / primitives (by prefix: a superset is safe)
        for kpos, kpar in ((ko, parent), (dko, dpar)):
            good[kpar[kid_prefix(u64, kpos, NESTED_PREFIXES)]] = False
        good[parent[kid_prefix(u64, ko, VIA_PROTECTION_PREFIXES)]] = False  # IPC-4761
        # "(via" then only whitespace up to the first child: no type keyword, not locked
        first_kid = np.full(m, -1, dtype=np.int64)
        if parent.size:  # parent is sorted: the first child of each via starts a new value
            lead = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
            first_kid[parent[lead]] = ko[lead]
        gap = first_kid - (spans[:, 0] + 4)
        good &= (gap >= 1) & (gap <= 16)
        arr = np.frombuffer(data, dtype=np.uint8)
        for j in range(16):
            ch = arr[np.minimum(spans[:, 0] + 4 + j, arr.size - 1)]
            good &= (j >= gap) | (ch == 32) | (ch == 9) | (ch == 10) | (ch == 13)
        # numbers: at (1), size (2), drill (3)
        f = self._number_fields(good, (ko, kc, parent, code), 3, VIA_KW_LEN, VIA_NUMS)
        if f is None:
            return np.zeros(m, dtype=bool), None
        ko, kc, parent, code, npar, ncode, flat, first, ok = f
        sel = ok & (ncode == 1)
        pos[npar[sel], 0] = flat[first[sel]]
        pos[npar[sel], 1] = flat[first[sel] + 1]
        sel = ok & (ncode == 2)
        dia[npar[sel]] = flat[first[sel]]
        sel = ok & (ncode == 3)
        drill[npar[sel]] = flat[first[sel]]
        sel = code == 5
        nt = (parent[sel], self._token_keys(ko[sel] + 4, kc[sel]))
        sel = code == 6
        ua = ko[sel] + 5 + (data_is_tstamp(data, ko[sel]) * 2)
        ustart[parent[sel]] = ua
        ulen[parent[sel]] = kc[sel] - ua
        # (remove_unused_layers yes) / (keep_end_layers yes); "no" or absent = off, a bare
        # legacy (remove_unused_layers) = on (parseMaybeAbsentBool)
        for flag, prefix, kw_len in ((removed, b"remove_", 21), (keep_end, b"keep_en", 16)):
            sel = kid_prefix(u64, ko, (prefix,)) & (ko + kw_len + 2 < arr.size)
            if sel.any():
                after = ko[sel] + kw_len
                off = np.isin(arr[after], (32, 9)) & (arr[after + 1] == ord("n"))
                flag[parent[sel][~off]] = True
        return good, nt

    def _backdrill(self, s: int, e: int) -> tuple[str, Backdrill] | None:
        node = self.node(s, e)
        if not isinstance(node, list):
            return None
        size = None
        names: list[str] = []
        for part in node[1:]:
            if isinstance(part, list) and part and part[0] == "size" and len(part) > 1:
                size = _float(part[1])
            elif isinstance(part, list) and part and part[0] == "layers":
                names = [str(p) for p in part[1:]]
        if len(names) < 2:
            return None
        a, b = self.copper.get(names[0]), self.copper.get(names[1])
        if a is None or b is None:
            return None
        n = len(self.copper)
        side = "top" if a == 0 else ("bottom" if a == n - 1 else ("top" if a < b else "bottom"))
        # KiCad 10's span names the layers the drill goes *through*; the must-not-cut layer is the
        # next copper layer beyond it in the drilling direction (KiCad's FabBackdrillMustNotCut).
        beyond = b + 1 if side == "top" else b - 1
        must_not_cut = beyond if 0 <= beyond < n else None
        return str(node[0]), Backdrill(
            side=side, must_not_cut=must_not_cut, drill_mm=size, source="board"
        )

    def _vias(self, spans: np.ndarray) -> Vias:
        """All vias: plain through vias in numpy blocks (:meth:`_via_block`), the others
        (blind/buried/micro, locked, backdrilled, padstacks, unusual layouts) one by one."""
        data = self.data
        spans = spans.astype(np.int64, copy=False)
        n = spans.shape[0]
        pos = np.zeros((n, 2))
        drill = np.zeros(n)
        dia = np.zeros(n)
        start = np.zeros(n, dtype=np.int16)
        end = np.full(n, max(len(self.copper) - 1, 0), dtype=np.int16)
        net = np.zeros(n, dtype=np.int32)
        micro = np.zeros(n, dtype=bool)
        removed = np.zeros(n, dtype=bool)
        keep_end = np.zeros(n, dtype=bool)
        ustart = np.zeros(n, dtype=np.int64)
        ulen = np.zeros(n, dtype=np.int32)
        overrides: dict[int, str] = {}
        backdrills: dict[int, Backdrill] = {}
        declared: dict[int, str] = {}
        protection: dict[int, ViaProtection] = {}

        def parse(i0: int) -> tuple[int, np.ndarray, tuple[np.ndarray, TokenKeys] | None]:
            i1 = min(n, i0 + TRACK_BLOCK)
            return (i0,) + self._via_block(
                spans[i0:i1], pos[i0:i1], dia[i0:i1], drill[i0:i1],
                ustart[i0:i1], ulen[i0:i1], removed[i0:i1], keep_end[i0:i1],
            )  # fmt: skip

        # as the tracks: blocks on two threads, net look-ups here in file order
        for i0, good, nt in ordered_map(parse, range(0, n, TRACK_BLOCK)):
            if nt is not None:
                net[i0 : min(n, i0 + TRACK_BLOCK)][nt[0]] = self._token_apply(nt[1], self.net_ref)
            for row in (np.flatnonzero(~good) + i0).tolist():
                s0, e0 = int(spans[row, 0]), int(spans[row, 1])
                got = self._via_slow(s0, e0)
                pos[row], dia[row], drill[row] = got[0], got[1], got[2]
                start[row], end[row], micro[row], net[row] = got[3], got[4], got[5], got[6]
                overrides[row] = got[7]
                if got[8] is not None:
                    backdrills[row] = got[8]
                removed[row], keep_end[row] = got[10], got[11]
                if got[12] is not None:
                    protection[row] = got[12]
                # KiCad <= 9 writes 'blind' for blind and buried alike (the span tells them
                # apart); only a blind/buried via whose layers span the whole board keeps a
                # type its span does not give (KiCad reports it blind/buried, not through)
                span_type = via_type_for_span(got[3], got[4], len(self.copper), got[5])
                if span_type == "through" and got[9] in ("blind", "buried"):
                    declared[row] = got[9]
        if declared:
            names = sorted(self.copper, key=self.copper.__getitem__)
            for t, k in sorted(Counter(declared.values()).items()):
                row = next(r for r, v in declared.items() if v == t)
                span = f"{names[int(start[row])]}–{names[int(end[row])]}"
                self.warn(
                    f"{k} via{'s are' if k > 1 else ' is'} written '(via {t} …)' but "
                    f"{'span' if k > 1 else 'spans'} {span} (the first); KiCad keeps the "
                    f"written type and so does accel-drc, the barrel is read from the layers"
                )
        return Vias(
            pos=pos,
            drill=drill,
            diameter=dia,
            start=start,
            end=end,
            net=net,
            micro=micro,
            uuid=SpanStrings(data, ustart, ulen, overrides),
            layer_count=len(self.copper),
            backdrills=backdrills,
            declared=declared,
            unused_removed=removed,
            keep_end=keep_end,
            protection=protection,
        )

    def _via_slow(
        self, s: int, e: int
    ) -> tuple[
        tuple[float, float],
        float,
        float,
        int,
        int,
        bool,
        int,
        str,
        Backdrill | None,
        str,
        bool,
        bool,
        ViaProtection | None,
    ]:
        """One via, any layout: (pos, diameter, drill, start, end, micro, net, uuid, backdrill,
        the type the file declares, unused layers removed, end layers kept, IPC-4761
        protection)."""
        data = self.data
        last = len(self.copper) - 1
        backdrill: Backdrill | None = None
        head = _VIA_HEAD.match(data, s, e)
        words = head.group(1).split() if head else []
        vtype = next((w for w in words if w != b"locked"), b"through")
        f, skips = self._fields(_VIA_FIELD, s, e)
        at = f[b"at"].split()
        xy = (float(at[0]), float(at[1]))
        dia = float(f[b"size"].split()[0])
        dr = f.get(b"drill", b"").split()
        drill = float(dr[0]) if dr else 0.0
        if vtype == b"through":
            # KiCad ignores the layer pair of a through via (PCB_VIA::SanitizeLayers)
            a, b = 0, last
        else:
            got, names = self.layer_indexes(f.get(b"layers", b""))
            if len(names) >= 2 and names[0] in self.copper and names[1] in self.copper:
                a, b = sorted((self.copper[names[0]], self.copper[names[1]]))
            elif got:
                a, b = got[0], got[-1]
            else:
                raise self.fail("a blind/buried/micro via without valid (layers …)", s)
        net = self.net_ref(f.get(b"net", b""))
        uuid = unquote(f.get(b"uuid", f.get(b"tstamp", b"")).strip())
        for ks, ke in skips:
            # KiCad 10 stores a top backdrill as the secondary drill, ``(backdrill …)``, and a
            # bottom one (``PCB_VIA::SetBottomBackdrillLayer``) as ``(tertiary_drill …)``
            if data.startswith(b"(backdrill", ks) or data.startswith(b"(tertiary_drill", ks):
                got_bd = self._backdrill(ks, ke)
                if not got_bd:
                    continue
                if backdrill is not None and backdrill.side != got_bd[1].side:
                    self.warn(
                        "a via backdrilled from both faces: only its first backdrill is kept "
                        "(the model holds one per via)"
                    )
                    continue
                backdrill = got_bd[1]
        removed = keep_end = False
        for m in _VIA_FLAG.finditer(data, s, e):
            if skips and any(a0 <= m.start() < b0 for a0, b0 in skips):
                continue
            on = m.group(2) != b"no"
            if m.group(1) == b"remove_unused_layers":
                removed = on
            else:
                keep_end = on
        return (
            xy, dia, drill, a, b, vtype == b"micro", net, uuid, backdrill, vtype.decode(),
            removed, keep_end, self._via_protection(s, e, skips),
        )  # fmt: skip

    def _via_protection(
        self, s: int, e: int, skips: Sequence[tuple[int, int]]
    ) -> ViaProtection | None:
        """The IPC-4761 protection a via states (KiCad 10, format 20250228 on): ``(filling
        yes)``, ``(capping no)``, ``(tenting (front yes) (back none))``; ``none`` or an unknown
        word = not stated (None).  None when the via states none of them."""
        data = self.data
        got: dict[str, bool | None] = {}
        for m in _VIA_PROTECT.finditer(data, s, e):
            if skips and any(a0 <= m.start() < b0 for a0, b0 in skips):
                continue
            try:
                node = self.node(m.start(), find_balanced(data, m.start()))
            except ValueError:
                raise self.fail("unbalanced via protection node", m.start()) from None
            if not isinstance(node, list) or not node:
                continue
            word = m.group(1).decode()
            atoms = [str(part) for part in node[1:] if not isinstance(part, list)]
            if word == "tenting" and atoms and set(atoms) <= {"front", "back", "none"}:
                # KiCad 9 (format 20241229): ``(tenting front back)``, ``(tenting none)``:
                # a named side is tented.  An unnamed one is untented to KiCad 9 and unstated
                # to KiCad 10 (its loader drops it): not stated here either
                for side in ("front", "back"):
                    if side in atoms:
                        got[f"tenting_{side}"] = True
                continue
            for part in node[1:]:
                if isinstance(part, list) and len(part) > 1 and part[0] in ("front", "back"):
                    got[f"{word}_{part[0]}"] = _PROTECT_VALUE.get(str(part[1]).encode())
                elif not isinstance(part, list) and word in ("filling", "capping"):
                    got[word] = _PROTECT_VALUE.get(str(part).encode())
        return ViaProtection(**got) if got else None
