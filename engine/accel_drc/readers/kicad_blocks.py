"""The numpy block machinery of the KiCad board reader: what :mod:`.kicad_file`'s ``_Reader``
uses to read millions of items without a Python loop per item.

Why a module of its own: the parser (``kicad_file._Reader``) decides *which* nodes to read; this
module holds *how* a block of them is read with numpy: overlapping 8-byte views of the board text
(:func:`u64_view`) compared as masked words to tell child keywords apart (``TRACK_WORDS``,
``VIA_WORDS`` and their codes), strings kept as offsets (:class:`SpanStrings`), footprint
properties and zone fills parsed on first access (:class:`LazyProps`, :class:`LazyFills`,
:func:`points_of`, :func:`fills_of`), and the location of a number that does not parse
(:func:`locate_bad_number`, :func:`non_finite_error`), since the vectorised parsers do not know
where it sat.  Nothing here knows the board's structure beyond one item's children.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..geometry import arc_points
from .sexpr import line_of, parse_points, parse_span, unquote

ATOM = rb'(?:"(?:[^"\\]|\\.)*"|[^\s()"]+)'
#: a field's value: text up to the next parenthesis, quoted strings whole (KiCad 10 refers to
#: nets by name, and KiCad's default net names look like "Net-(D1-Pad1)")
VALUE = rb'((?:"(?:[^"\\]|\\.)*"|[^()"])*)'
#: the keyword of a node: ``(segment``, ``( zone`` -> ``segment``, ``zone``
NODE_KEYWORD = re.compile(rb"\(\s*([^\s()\"]+)")
_PROPERTY = re.compile(rb"\(property\s+(" + ATOM + rb")\s+(" + ATOM + rb")")


def u64_view(data: bytes) -> np.ndarray:
    """``view[i]`` = the 8 bytes of ``data`` starting at offset ``i`` as a little-endian
    uint64 (an overlapping strided view: no copy).  Lets numpy compare short keywords and
    names at millions of offsets with one gather each."""
    n = len(data) - 7
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    return np.ndarray(shape=(n,), dtype="<u8", buffer=data, offset=0, strides=(1,))


#: ``MASKS[k]`` keeps the low k bytes of a uint64
MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
#: ``_BLANK[b]``: byte b ends a keyword (space, tab, newline, carriage return)
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[32, 9, 10, 13]] = True

#: children of a track item: keyword -> code (0 = anything else)
TRACK_WORDS = (
    (b"start", 1),
    (b"mid", 2),
    (b"end", 3),
    (b"width", 4),
    (b"layer", 5),
    (b"net", 6),
    (b"uuid", 7),
    (b"tstamp", 7),
)
#: per code: length of "(" + keyword (for uuid: "(uuid"; tstamp adds 2) and count of numbers
KW_LEN = np.array([0, 6, 4, 4, 6, 6, 4, 5], dtype=np.int64)
KW_NUMS = np.array([0, 2, 2, 2, 1, 0, 0, 0], dtype=np.int64)
#: children of a via: keyword -> code; per code the length of "(" + keyword and the numbers
VIA_WORDS = (
    (b"at", 1),
    (b"size", 2),
    (b"drill", 3),
    (b"layers", 4),
    (b"net", 5),
    (b"uuid", 6),
    (b"tstamp", 6),
)
VIA_KW_LEN = np.array([0, 3, 5, 6, 7, 4, 5, 0], dtype=np.int64)
VIA_NUMS = np.array([0, 2, 1, 1, 0, 0, 0, 0], dtype=np.int64)
#: items per block of the vectorised track, via and pad parsers (bounds their temporaries to a
#: few MB; smaller blocks also stay in cache: 32 k was faster than 131 k on 1.5 M tracks)
TRACK_BLOCK = 1 << 15


def concat_ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(start[i], start[i] + count[i])`` for every i."""
    count = count.astype(np.int64, copy=False)
    total = int(count.sum())
    shift = np.cumsum(count) - count - start.astype(np.int64)
    return np.arange(total, dtype=np.int64) - np.repeat(shift, count)


def data_is_tstamp(data: bytes, pos: np.ndarray) -> np.ndarray:
    """1 where the node at ``pos`` is ``(tstamp``, 0 where it is ``(uuid``."""
    if not pos.size:
        return np.zeros(0, dtype=np.int64)
    arr = np.frombuffer(data, dtype=np.uint8)
    return (arr[pos + 1] == ord("t")).astype(np.int64)


def via_fields_once(
    u64: np.ndarray, ko: np.ndarray, parent: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per via of a block: exactly one ``at`` and ``size`` and at most one ``drill``,
    ``layers``, ``net`` and ``uuid``/``tstamp`` (``VIA_WORDS``), the shape the vectorised via
    parser can read; the others go through the general parser.  Returns (each field's
    ``VIA_WORDS`` code, the per-via mask)."""
    code = kid_codes(u64, ko, VIA_WORDS)
    cnt = np.bincount(parent * 8 + code, minlength=m * 8).reshape(m, 8)
    return code, (
        (cnt[:, 1] == 1)
        & (cnt[:, 2] == 1)
        & (cnt[:, 3] <= 1)
        & (cnt[:, 4] <= 1)
        & (cnt[:, 5] <= 1)
        & (cnt[:, 6] <= 1)
    )


def kid_codes(u64: np.ndarray, pos: np.ndarray, words: Sequence[tuple[bytes, int]]) -> np.ndarray:
    """Code of the keyword of the node opening at each ``pos`` (0 = none of ``words``):
    the keyword (up to 7 bytes) followed by whitespace, compared as masked 8-byte words."""
    code = np.zeros(pos.size, dtype=np.int64)
    if not pos.size or not u64.size:
        return code
    inside = pos + 1 < u64.size
    k = u64[np.minimum(pos + 1, u64.size - 1)]
    # the masked word and the blank-after test once per keyword length, not once per keyword
    # (the track words have four lengths among eight words)
    by_len: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for word, c in words:
        n = len(word)
        got = by_len.get(n)
        if got is None:
            nxt = ((k >> np.uint64(8 * n)) & np.uint64(0xFF)).astype(np.uint8)
            got = by_len[n] = (k & MASKS[n], _BLANK[nxt])
        hit = got[0] == np.uint64(int.from_bytes(word, "little"))
        hit &= got[1]
        code[hit] = c
    code[~inside] = 0
    return code


#: first bytes of the nested nodes whose fields must not be taken for a via's own
#: (``kicad_fields._NESTED_DRILL``): vias holding one are read the slow way
NESTED_PREFIXES = (b"backdri", b"tertiar", b"padstac", b"primiti")
#: first bytes of KiCad 10's IPC-4761 via protection nodes (``tenting``, ``covering``,
#: ``plugging``, ``filling``, ``capping``): vias stating one are read the slow way, which reads them
VIA_PROTECTION_PREFIXES = (b"tenting", b"coverin", b"pluggin", b"filling", b"capping")


def kid_prefix(u64: np.ndarray, pos: np.ndarray, prefixes: Sequence[bytes]) -> np.ndarray:
    """True where the node opening at ``pos`` starts with one of ``prefixes`` (≤ 7 bytes)."""
    hit = np.zeros(pos.size, dtype=bool)
    if not pos.size or not u64.size:
        return hit
    k = u64[np.minimum(pos + 1, u64.size - 1)]
    for word in prefixes:
        hit |= (k & MASKS[len(word)]) == np.uint64(int.from_bytes(word, "little"))
    hit[pos + 1 >= u64.size] = True  # too close to the end to tell: the slow way
    return hit


class SpanStrings(Sequence):
    """Strings kept as (offset, length) into the board text and decoded on access.

    Why: a 279 MB board has 1.7 M track and via uuids; as Python strings they cost 165 MB,
    as offsets 12 bytes each.  The board text is kept anyway (zone fills are parsed lazily from
    it).  ``overrides`` holds rows decoded already (items read the slow way).
    """

    def __init__(
        self,
        data: bytes,
        start: np.ndarray,
        length: np.ndarray,
        overrides: Mapping[int, str] | None = None,
    ) -> None:
        self._data = data
        self._start = start
        self._length = length
        self._overrides = dict(overrides or {})

    def __len__(self) -> int:
        return int(self._start.shape[0])

    def _at(self, i: int) -> str:
        got = self._overrides.get(i)
        if got is not None:
            return got
        s = int(self._start[i])
        raw = self._data[s : s + int(self._length[i])].strip().strip(b'"')
        return raw.decode("utf-8", "replace")

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        if isinstance(i, slice):
            return tuple(self._at(j) for j in range(*i.indices(len(self))))
        i = int(i)
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("uuid index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield self._at(i)

    def take(self, rows: Sequence[int]) -> list[str]:
        """The strings of ``rows`` (0 <= row < len), as ``[self[r] for r in rows]`` gives them:
        the spans gathered in one numpy step, not two numpy scalars per string (a finding lists up
        to 200 item uuids)."""
        idx = np.asarray(rows, dtype=np.int64)
        data, over = self._data, self._overrides
        starts = self._start[idx].tolist()
        ends = (self._start[idx] + self._length[idx]).tolist()
        return [
            over[r]
            if over and r in over
            else data[s:e].strip().strip(b'"').decode("utf-8", "replace")
            for r, s, e in zip(idx.tolist(), starts, ends)
        ]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SpanStrings, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} strings>"


def find_property(data: bytes, s: int, e: int, name: bytes) -> str:
    at = data.find(b'(property "' + name + b'"', s, e)
    if at < 0:
        return ""
    m = _PROPERTY.match(data, at, e)
    return unquote(m.group(2)) if m else ""


class LazyProps(Mapping):
    """A footprint's ``(property name value)`` fields, parsed on first access.

    Boards imported from other tools carry dozens of properties per footprint (86 k on
    vme-wren); decoding them all up front would be a large share of the read.
    """

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self._data = data
        self._span = (start, end)
        self._props: dict[str, str] | None = None

    def _get(self) -> dict[str, str]:
        if self._props is None:
            s, e = self._span
            self._props = {unquote(k): unquote(v) for k, v in _PROPERTY.findall(self._data, s, e)}
        return self._props

    def __getitem__(self, key: str) -> str:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


def points_of(data: bytes, s: int, e: int, source: str = "<board>") -> np.ndarray:
    """The ``(pts (xy x y) …)`` node at [s, e) of ``data`` as an (n, 2) array (arcs flattened)."""
    if data.find(b"(arc", s, e) < 0:
        flat = parse_points(data[s:e])
        if flat is not None:
            return flat.reshape(-1, 2)
    try:
        node = parse_span(data, s, e)
    except ValueError as exc:
        raise InputError(source, f"malformed point list: {exc}", line=line_of(data, s)) from None
    out: list[tuple[float, float]] = []
    try:
        for part in node[1:] if isinstance(node, list) else []:
            if not isinstance(part, list) or not part:
                continue
            if part[0] == "xy" and len(part) >= 3:
                out.append((float(part[1]), float(part[2])))
            elif part[0] == "arc":
                got = {
                    p[0]: (float(p[1]), float(p[2]))
                    for p in part[1:]
                    if isinstance(p, list) and len(p) >= 3
                }
                if {"start", "mid", "end"} <= got.keys():
                    arc = arc_points(got["start"], got["mid"], got["end"])
                    out.extend(arc if not out or out[-1] != arc[0] else arc[1:])
    except (ValueError, TypeError) as exc:
        raise InputError(source, f"malformed point list: {exc}", line=line_of(data, s)) from None
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def fills_of(
    data: bytes, spans: list[tuple[int, int]], source: str = "<board>"
) -> tuple[np.ndarray, ...]:
    """Several ``(pts …)`` nodes at once: one number parse for all of them."""
    if len(spans) > 1 and not any(data.find(b"(arc", s, e) >= 0 for s, e in spans):
        counts = [data.count(b"(xy", s, e) for s, e in spans]
        flat = parse_points(b" ".join(data[s:e] for s, e in spans))
        if flat is not None:
            pts = flat.reshape(-1, 2)
            return tuple(np.split(pts, np.cumsum(counts)[:-1]))
    return tuple(points_of(data, s, e, source) for s, e in spans)


class LazyFills(Mapping):
    """A zone's filled polygons per copper layer, parsed on first access.

    Why lazy: fills are most of a big board's geometry (930 k points on vme-wren) and most
    commands never look at them (``inspect``, stack-up and via checks).  The spans are known
    from the structural index, so the layers present are known without parsing; the points of
    a layer become (n, 2) arrays in one vectorised pass the first time a check asks for them.
    """

    def __init__(self, data: bytes, source: str, spans: dict[int, list[tuple[int, int]]]) -> None:
        self._data = data  # the board text only; the structural index is not kept alive
        self._source = source
        self._spans = spans
        self._cache: dict[int, tuple[np.ndarray, ...]] = {}
        # the PDN rails run on a background thread while the classifier reads the same fills:
        # one parse per layer, the other thread waits for it instead of parsing it again
        self._lock = threading.Lock()

    def __getitem__(self, layer: int) -> tuple[np.ndarray, ...]:
        got = self._cache.get(layer)
        if got is None:
            spans = self._spans[layer]  # KeyError for a layer without fill, as a dict would
            with self._lock:
                got = self._cache.get(layer)
                if got is None:
                    got = self._cache[layer] = fills_of(self._data, spans, self._source)
        return got

    def __iter__(self) -> Iterator[int]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def __repr__(self) -> str:
        return f"<zone fills on layers {sorted(self._spans)}>"


_BAD_FLOAT = re.compile(r"could not convert string to float: (?:np\.bytes_\()?b?'([^']*)'")


#: a token float() may read as NaN or infinity: nan, inf, infinity, or an exponent of 3+ digits
_NON_FINITE = re.compile(
    rb"(?<=[\s(])([-+]?(?:[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|"
    rb"[0-9.]+[eE]\+?[0-9]{3,}))(?=[\s)])"
)


def non_finite_error(data: bytes, source: str) -> InputError:
    """The error for a board holding a NaN or infinite number, at the first such token."""
    m = _NON_FINITE.search(data)
    while m is not None:
        try:
            if not math.isfinite(float(m.group(1))):
                break
        except ValueError:
            pass
        m = _NON_FINITE.search(data, m.end())
    return InputError(
        source,
        f"{m.group(1).decode('ascii', 'replace') if m else 'a number'} is not a finite "
        "number (NaN and infinity are refused: they compare false with every limit)",
        line=line_of(data, m.start(1)) if m else None,
    )


def locate_bad_number(data: bytes, exc: BaseException) -> tuple[str | None, int | None]:
    """(the token that is not a number, the line of its first occurrence as an atom)."""
    m = _BAD_FLOAT.search(str(exc))
    if not m or not m.group(1):
        return None, None
    token = m.group(1)
    found = re.search(rb"[(\s]" + re.escape(token.encode("utf-8", "replace")) + rb"[)\s]", data)
    return token, (line_of(data, found.start() + 1) if found else None)


class NumberFields(NamedTuple):
    """The kept fields of a block of items and the numbers read from their numeric fields."""

    ko: np.ndarray  # field start offsets
    kc: np.ndarray  # field end offsets
    parent: np.ndarray  # item row of each field
    code: np.ndarray  # field kind of each field
    npar: np.ndarray  # item row of each numeric field
    ncode: np.ndarray  # field kind of each numeric field
    flat: np.ndarray  # all numbers, in field order
    first: np.ndarray  # index in ``flat`` of each numeric field's first number
    ok: np.ndarray  # numeric field has the expected count of numbers
