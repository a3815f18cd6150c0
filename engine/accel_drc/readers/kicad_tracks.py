"""The KiCad reader's part that reads the tracks: every ``(segment …)`` and ``(arc …)`` node's
start, mid (arcs), end, width, layer, net and uuid, parsed in numpy blocks on worker threads
with the layer and net look-ups on the calling thread in file order, and the per-item parse for
items laid out any other way.

Model and units: positions and widths in mm as KiCad writes them; a segment has no mid point
(NaN), an arc must have one (refused otherwise).  Limits: a track on a layer that is not a copper
layer of the board is put on F.Cu with a warning.  Mixed into
:class:`~accel_drc.readers.kicad_file._Reader`, whose state (the file's bytes, its parenthesis
index, layers and nets) it shares."""

from __future__ import annotations

import re

import numpy as np

from ..concurrency import ordered_map
from ..errors import InputError
from ..model import Tracks
from .kicad_blocks import (
    KW_LEN,
    KW_NUMS,
    TRACK_BLOCK,
    TRACK_WORDS,
    VALUE,
    SpanStrings,
    data_is_tstamp,
    kid_codes,
    u64_view,
)
from .kicad_fields import TokenKeys

_TRACK_FIELD = re.compile(rb"\((start|end|mid|width|layer|net|uuid|tstamp)\s+" + VALUE + rb"\)")


class TrackReading:
    """Reads the board's tracks (mixed into :class:`~accel_drc.readers.kicad_file._Reader`)."""

    def _tracks(self, segments: np.ndarray, arcs: np.ndarray) -> Tracks:
        """All segments and arcs, parsed in numpy from the structural index.

        Why not a regular expression: one match per item creates eleven Python objects per
        track, too much memory and time for a board of a million tracks.  Instead, per block of items, the fields are
        found as level-3 children in the index, classified by their first 8 bytes, the numbers
        of every start/mid/end/width gathered into one text and parsed by ``np.fromstring``,
        and layer names and nets looked up once per distinct text.  Items laid out any other
        way (a missing or repeated field, a segment with a mid point, an unexpected count of
        numbers) go through :meth:`_track_slow`, one by one, as before.
        """
        data = self.data
        spans = np.concatenate([segments, arcs]).astype(np.int64, copy=False)
        kind = np.concatenate([np.zeros(len(segments), dtype=bool), np.ones(len(arcs), dtype=bool)])
        order = np.argsort(spans[:, 0], kind="stable")
        spans, kind = spans[order], kind[order]
        del order
        n = spans.shape[0]
        start = np.zeros((n, 2))
        end = np.zeros((n, 2))
        mid = np.full((n, 2), np.nan)
        width = np.zeros(n)
        layer = np.zeros(n, dtype=np.int16)
        net = np.zeros(n, dtype=np.int32)
        ustart = np.zeros(n, dtype=np.int64)
        ulen = np.zeros(n, dtype=np.int32)
        overrides: dict[int, str] = {}
        copper_b = {k.encode(): v for k, v in self.copper.items()}

        def parse(
            i0: int,
        ) -> tuple[
            int,
            np.ndarray,
            tuple[np.ndarray, TokenKeys] | None,
            tuple[np.ndarray, TokenKeys] | None,
        ]:
            i1 = min(n, i0 + TRACK_BLOCK)
            return (i0,) + self._track_block(
                spans[i0:i1], kind[i0:i1], start[i0:i1], mid[i0:i1], end[i0:i1],
                width[i0:i1], ustart[i0:i1], ulen[i0:i1],
            )  # fmt: skip

        # the blocks' numpy work on two threads (it runs with the GIL released); the layer and
        # net look-ups, which may number new nets and warn, stay here in file order
        for i0, good, lay, nt in ordered_map(parse, range(0, n, TRACK_BLOCK)):
            i1 = min(n, i0 + TRACK_BLOCK)
            if lay is not None:
                layer[i0:i1][lay[0]] = self._token_apply(lay[1], self._layer_value)
            if nt is not None:
                net[i0:i1][nt[0]] = self._token_apply(nt[1], self.net_ref)
            for row in (np.flatnonzero(~good) + i0).tolist():
                s0, e0 = int(spans[row, 0]), int(spans[row, 1])
                f = self._track_slow(s0, e0)
                num = np.array(f[1:8], dtype="S24")
                num[num == b""] = b"nan"
                v = num.astype(np.float64)
                start[row] = v[0], v[1]
                mid[row] = v[2], v[3]
                end[row] = v[4], v[5]
                width[row] = v[6]
                li = copper_b.get(f[8])
                if li is None:
                    self.warn(
                        f"tracks on an unknown layer {f[8].decode(errors='replace')!r} put on F.Cu"
                    )
                    li = 0
                layer[row] = li
                net[row] = self.net_ref(f[9])
                overrides[row] = f[10].decode("utf-8", "replace")
        if n and np.isnan(mid[kind, 0]).any():
            raise InputError(self.source, "an (arc …) track has no (mid …) point")
        return Tracks(
            start=start,
            end=end,
            mid=mid,
            width=width,
            layer=layer,
            net=net,
            uuid=SpanStrings(data, ustart, ulen, overrides),
        )

    def _layer_value(self, raw: bytes) -> int:
        m = re.match(rb'\s*"([^"]*)"', raw)
        name = m.group(1) if m else raw.strip().strip(b'"')
        li = self.copper.get(name.decode("utf-8", "replace"))
        if li is None:
            self.warn(f"tracks on an unknown layer {name.decode(errors='replace')!r} put on F.Cu")
            li = 0
        return li

    def _track_block(
        self,
        spans: np.ndarray,
        is_arc: np.ndarray,
        start: np.ndarray,
        mid: np.ndarray,
        end: np.ndarray,
        width: np.ndarray,
        ustart: np.ndarray,
        ulen: np.ndarray,
    ) -> tuple[
        np.ndarray, tuple[np.ndarray, TokenKeys] | None, tuple[np.ndarray, TokenKeys] | None
    ]:
        """Parse one block of track items into the given row views; returns the rows done
        (the others go the slow way) and, for the layer and the net, the rows and the texts
        to look up (:meth:`_token_apply`, on the caller's thread, in file order).  Reads
        ``self.data`` and the index only, so blocks may be parsed on several threads."""
        m = spans.shape[0]
        got = self._block_kids(spans, 3)
        if got is None:
            return np.zeros(m, dtype=bool), None, None
        ko, kc, parent = got
        code = kid_codes(u64_view(self.data), ko, TRACK_WORDS)
        cnt = np.bincount(parent * 8 + code, minlength=m * 8).reshape(m, 8)
        good = (
            (cnt[:, 1] == 1)
            & (cnt[:, 3] == 1)
            & (cnt[:, 4] == 1)
            & (cnt[:, 5] == 1)
            & (cnt[:, 6] == 1)
            & (cnt[:, 7] <= 1)
            & (cnt[:, 2] == is_arc)
        )
        del cnt
        # numbers: start (1), mid (2), end (3), width (4)
        f = self._number_fields(good, (ko, kc, parent, code), 4, KW_LEN, KW_NUMS)
        if f is None:
            return np.zeros(m, dtype=bool), None, None
        ko, kc, parent, code, npar, ncode, flat, first, ok = f
        for c, target in ((1, start), (2, mid), (3, end)):
            sel = ok & (ncode == c)
            rows, f = npar[sel], first[sel]
            target[rows, 0] = flat[f]
            target[rows, 1] = flat[f + 1]
        sel = ok & (ncode == 4)
        width[npar[sel]] = flat[first[sel]]
        del flat
        # layer (5), net (6), uuid / tstamp (7)
        sel = code == 5
        lay = (parent[sel], self._token_keys(ko[sel] + 6, kc[sel]))
        sel = code == 6
        nt = (parent[sel], self._token_keys(ko[sel] + 4, kc[sel]))
        sel = code == 7
        ua = ko[sel] + KW_LEN[7] + (data_is_tstamp(self.data, ko[sel]) * 2)
        ustart[parent[sel]] = ua
        ulen[parent[sel]] = kc[sel] - ua
        return good, lay, nt

    def _track_slow(self, s: int, e: int) -> tuple[bytes, ...]:
        """One track item, fields in any order (hand-edited or unusual files)."""
        data = self.data
        kind = b"arc" if data.startswith(b"(arc", s) else b"segment"
        f = dict(_TRACK_FIELD.findall(data, s, e))
        if b"start" not in f or b"end" not in f:
            raise self.fail(f"a ({kind.decode()} …) without start or end", s)
        st, en = f[b"start"].split(), f[b"end"].split()
        mid = f.get(b"mid", b"").split() or [b"", b""]
        layer = f.get(b"layer", b"").strip().strip(b'"')
        uuid = f.get(b"uuid", f.get(b"tstamp", b"")).strip().strip(b'"')
        width = (f.get(b"width", b"0").split() or [b"0"])[0]
        return (
            kind,
            st[0],
            st[1],
            mid[0],
            mid[1],
            en[0],
            en[1],
            width,
            layer,
            f.get(b"net", b""),
            uuid,
        )
