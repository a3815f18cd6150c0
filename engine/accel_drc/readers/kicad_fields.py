"""The KiCad reader's part that reads the fields of many items at once: which children of a
block of items sit at a given nesting level (from the parenthesis index), the numbers of their
numeric fields parsed in one vectorised pass, the field texts that repeat (layer names, nets)
looked up once per distinct text, and the per-item regex path for the items laid out any other
way (fields in another order, nested drill or padstack nodes whose fields are not the item's).

Model: an item is a node whose fields are its direct children ``(keyword value…)``; a field's
numbers are KiCad's decimal mm (exact decimal parse, :func:`.sexpr.parse_decimals_at`; any other
number form goes through ``strtod``).  Limits: a block whose field holds something that is not a
number, or whose index ranges do not pair up, is refused as a whole (``None``) and its items go
the slow way.  Shared by the track, via and pad readers; mixed into
:class:`~accel_drc.readers.kicad_file._Reader`, whose state (the file's bytes, its parenthesis
index) it reads."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .kicad_blocks import MASKS, NumberFields, concat_ranges, u64_view
from .sexpr import find_balanced, parse_decimals_at, strtod_all

_NESTED_DRILL = re.compile(rb"\((backdrill|tertiary_drill|padstack|primitives)\b")


class TokenKeys(NamedTuple):
    """Rows of one field sharing a text (:meth:`FieldReading._token_keys`): the field texts
    ``data[a:b]``, the ``(row, unique index or -1)`` rows whose text ``value`` must read, in row
    order, and the inverse map of the short rows onto the distinct texts."""

    a: np.ndarray
    b: np.ndarray
    calls: list[tuple[int, int]]
    inv: np.ndarray | None
    rows: np.ndarray | None
    n_unique: int = 0


class FieldReading:
    """Reads the fields of blocks of items (mixed into :class:`~accel_drc.readers.kicad_file._Reader`)."""

    def _token_values(
        self, a: np.ndarray, b: np.ndarray, value: Callable[[bytes], int]
    ) -> np.ndarray:
        """``value(data[a:b])`` for every row, calling ``value`` once per distinct text, in the
        order of first appearance (``net_ref`` numbers unknown KiCad 10 net names as it meets
        them, so the order is part of the result).

        Layer names and net codes repeat millions of times; texts of up to 32 bytes are
        compared as four masked 8-byte words in numpy and only the distinct ones reach Python.
        """
        return self._token_apply(self._token_keys(a, b), value)

    def _token_keys(self, a: np.ndarray, b: np.ndarray) -> TokenKeys:
        """The numpy half of :meth:`_token_values`: which rows share a text.  Pure (reads
        ``self.data`` only), so a worker thread may run it; :meth:`_token_apply` then calls
        ``value`` in row order on the caller's thread."""
        data = self.data
        if not a.size:
            return TokenKeys(a, b, [], None, None)
        u64 = u64_view(data)
        length = b - a
        short = (length <= 32) & (a + 24 <= u64.size - 1) & (length >= 0)
        rows = np.flatnonzero(short)
        calls: list[tuple[int, int]] = []  # (row, unique index or -1 for a row of its own)
        inv = first = None
        if rows.size:
            aa, ll = a[rows], length[rows]
            n_words = (int(ll.max()) + 7) // 8 if ll.size else 0
            words = [
                u64[aa + 8 * k] & MASKS[np.clip(ll - 8 * k, 0, 8)] for k in range(max(n_words, 1))
            ]
            h = words[0]
            for w in words[1:]:
                h = h * np.uint64(0x9E3779B97F4A7C15) ^ w
            _u, first, inv = np.unique(h, return_index=True, return_inverse=True)
            inv = inv.reshape(-1)
            if all((w[first][inv] == w).all() for w in words):
                calls = [(int(rows[f]), u) for u, f in enumerate(first.tolist())]
            else:  # a hash collision: exact, per row
                short[:] = False
                inv = None
        calls.extend((r, -1) for r in np.flatnonzero(~short).tolist())
        calls.sort()
        n_unique = len(first) if inv is not None and first is not None else 0
        return TokenKeys(a, b, calls, inv, rows if n_unique else None, n_unique)

    def _token_apply(self, keys: TokenKeys, value: Callable[[bytes], int]) -> np.ndarray:
        """The Python half of :meth:`_token_values`: ``value`` once per distinct text, in row
        order (the order ``net_ref`` numbers new nets in)."""
        data = self.data
        a, b = keys.a, keys.b
        out = np.zeros(a.size, dtype=np.int64)
        lut = np.zeros(keys.n_unique, dtype=np.int64)
        for r, u in keys.calls:
            got = value(data[int(a[r]) : int(b[r])])
            if u >= 0:
                lut[u] = got
            else:
                out[r] = got
        if keys.inv is not None and keys.rows is not None:
            out[keys.rows] = lut[keys.inv]
        return out

    def _block_kids(self, spans: np.ndarray, level: int) -> tuple[np.ndarray, ...] | None:
        """(opens, closes, parent row) of the nodes at ``level`` inside the items ``spans``
        (sorted, non-overlapping).  Only the items' own parentheses are looked at (their index
        ranges), so items far apart in the file (vias before and after the tracks) do not
        drag in everything between them."""
        idx = self.index
        m = spans.shape[0]
        lo = spans[:, 0].astype(idx.opens.dtype)
        hi = spans[:, 1].astype(idx.opens.dtype)
        out = []
        for pos, lev in ((idx.opens, idx.open_level), (idx.closes, idx.close_level)):
            i_lo = np.searchsorted(pos, lo)
            i_hi = np.searchsorted(pos, hi)
            count = i_hi - i_lo
            sel = concat_ranges(i_lo, count)
            par = np.repeat(np.arange(m, dtype=np.int64), count)
            at = lev[sel] == level
            out.append((pos[sel[at]].astype(np.int64), par[at]))
            del sel, par, at
        (ko, parent), (kc, cpar) = out
        if ko.size != kc.size or not np.array_equal(parent, cpar):
            return None
        return ko, kc, parent

    def _block_numbers(
        self, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The numbers in the texts ``data[a:b]`` (one text per field): (all numbers in one
        array, index of each text's first number, count of numbers per text), or None when
        something in them is not a number.

        The texts are gathered into one buffer (separated by a space) and parsed in one
        vectorised pass (:func:`.sexpr.parse_decimals`); the count per text comes from counting token starts, so a field
        with an unexpected count of numbers is detected per field, not per block.
        """
        length = b - a
        if (length < 0).any():
            return None
        block = length + 1
        offs = np.cumsum(block) - block
        total = int(offs[-1] + block[-1]) if offs.size else 0
        src = np.arange(total, dtype=np.int64) - np.repeat(offs - a, block)
        buf = np.frombuffer(self.data, dtype=np.uint8)[src]
        del src
        buf[offs + length] = 32  # the ')' that ends each field becomes a separator
        got = parse_decimals_at(buf)  # exact, 3x faster than strtod per number
        if got is not None:  # each field's numbers: the token starts inside its text
            flat, where = got
            # every byte of the buffer belongs to one field, so each token to the field whose
            # text holds its start: counted per field, the first index is the running sum
            ntok = np.bincount(np.searchsorted(offs, where, side="right") - 1, minlength=offs.size)
            first = np.cumsum(ntok) - ntok
        else:  # a number in another form (exponent, '+', …): strtod reads it
            ws = (buf == 32) | (buf == 9) | (buf == 10) | (buf == 13)
            tok = ~ws
            tok[1:] &= ws[:-1]
            csum = np.zeros(total + 1, dtype=np.int64)
            np.cumsum(tok, out=csum[1:])
            ntok = csum[offs + block] - csum[offs]
            first = csum[offs]
            del csum, ws, tok
            flat = strtod_all(buf.tobytes())
            if flat is None:
                return None
        if flat.size != int(ntok.sum()):
            return None
        return flat, first, ntok

    def _number_fields(
        self,
        good: np.ndarray,
        kids: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        last_code: int,
        kw_len: np.ndarray,
        kw_nums: np.ndarray,
    ) -> NumberFields | None:
        """The shared step of the block parsers: keep the fields of the items still ``good``,
        read the numbers of their numeric fields (codes 1..``last_code``) in one pass, and mark
        not-good every item one of whose fields holds the wrong count of numbers.  None when a
        field holds something that is not a number (the whole block then goes the slow way)."""
        ko, kc, parent, code = kids
        keep = good[parent]
        ko, kc, parent, code = ko[keep], kc[keep], parent[keep], code[keep]
        numeric = (code >= 1) & (code <= last_code)
        npar, ncode = parent[numeric], code[numeric]
        nums = self._block_numbers(ko[numeric] + kw_len[ncode], kc[numeric])
        if nums is None:
            return None
        flat, first, ntok = nums
        bad = ntok != kw_nums[ncode]
        if bad.any():
            good[npar[bad]] = False
        return NumberFields(ko, kc, parent, code, npar, ncode, flat, first, ~bad)

    def _skip_ranges(self, s: int, e: int) -> list[tuple[int, int]]:
        """Spans of nested drill / padstack nodes inside an item, whose fields must not be
        mistaken for the item's own (a backdrill has its own ``size`` and ``layers``)."""
        out = []
        for m in _NESTED_DRILL.finditer(self.data, s, e):
            try:
                out.append((m.start(), find_balanced(self.data, m.start())))
            except ValueError:
                raise self.fail("unbalanced nested node", m.start()) from None
        return out

    def _fields(
        self, pattern: re.Pattern[bytes], s: int, e: int
    ) -> tuple[dict[bytes, bytes], list[tuple[int, int]]]:
        data = self.data
        skips = self._skip_ranges(s, e) if _NESTED_DRILL.search(data, s, e) else []
        f: dict[bytes, bytes] = {}
        for m in pattern.finditer(data, s + 1, e):
            key = m.group(1)
            if key in f:
                continue
            if skips and any(a <= m.start() < b for a, b in skips):
                continue
            f[key] = m.group(2)
        return f, skips
