"""Structure of a KiCad S-expression file found at C speed, and a tiny parser for small spans.

Why not a classic tokenizer: a 69 MB board has about two million parentheses and tens of
megabytes of zone fills, footprint graphics and embedded 3D models.  Tokenising all of that in
Python costs tens of seconds (KiCad itself needs 53 s, kiutils 32 s).  Instead :class:`SexprIndex`
finds every parenthesis outside strings with numpy, computes each one's nesting level with two
``searchsorted`` calls, and pairs opens and closes per level.  The reader then looks only at the
nodes it needs (a via, a pad, a zone's point list) and never touches the rest.

:func:`parse_span` turns one small span (the layer table, the stack-up, a footprint header) into
nested Python lists; it is the only Python-level tokenizer and it only ever sees small slices.
"""

from __future__ import annotations

import re
import warnings
from typing import Callable, Optional, Union

import numpy as np

from ..errors import InputError

#: a parsed S-expression: a string atom or a list of them
Sexpr = Union[str, list]

_OPEN = 40  # (
_CLOSE = 41  # )
_QUOTE = 34  # "
_BACKSLASH = 92  # \

_TOKEN = re.compile(rb'\(|\)|"(?:[^"\\]|\\.)*"|[^\s()"]+', re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(.)", re.S)


#: deepest S-expression nesting a board may have (KiCad writes 7 to 10 levels)
MAX_SEXPR_DEPTH = 100


def line_of(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, max(0, min(offset, len(data)))) + 1


def unquote(token: bytes) -> str:
    """A token as text: quoted strings lose their quotes and escapes."""
    if token[:1] == b'"' and token[-1:] == b'"' and len(token) >= 2 and b"\\" not in token:
        return token[1:-1].decode("utf-8", errors="replace")
    text = token.decode("utf-8", errors="replace")
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
        if "\\" in text:
            text = _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)
    return text


def parse_span(data: bytes, start: int = 0, end: int | None = None) -> Sexpr:
    """Parse the one S-expression node in ``data[start:end]`` into nested lists of strings.

    Only for small spans (headers, a footprint's property, the stack-up): it is a Python loop.
    Raises ``ValueError`` on unbalanced input (the caller turns it into an InputError).
    """
    stack: list[list] = []
    root: list | None = None
    for m in _TOKEN.finditer(data, start, len(data) if end is None else end):
        tok = m.group()
        if tok == b"(":
            node: list = []
            if stack:
                stack[-1].append(node)
            stack.append(node)
        elif tok == b")":
            if not stack:
                raise ValueError("unexpected ')'")
            done = stack.pop()
            if not stack:
                root = done
                break
        elif stack:
            stack[-1].append(unquote(tok))
        else:
            raise ValueError("text outside parentheses")
    if stack or root is None:
        raise ValueError("unbalanced parentheses")
    return root


def find_balanced(data: bytes, start: int) -> int:
    """End (exclusive) of the node whose ``(`` is at ``start``, skipping strings.  For one node in
    a text that has no :class:`SexprIndex` (e.g. the stack-up inside a live board's text)."""
    depth = 0
    for m in _TOKEN.finditer(data, start):
        tok = m.group()
        if tok == b"(":
            depth += 1
        elif tok == b")":
            depth -= 1
            if depth == 0:
                return m.end()
    raise ValueError("unbalanced parentheses")


_CHUNK = 1 << 18


def offset_dtype(size: int) -> type:
    """int32 offsets for files under 2 GiB (half the memory of int64), else int64."""
    return np.int32 if size < (1 << 31) - 1 else np.int64


def _unescaped(arr: np.ndarray, quotes: np.ndarray, data: bytes) -> np.ndarray:
    """``quotes`` without the escaped ones (preceded by an odd run of backslashes; only valid
    inside strings, but a backslash outside strings is not valid KiCad syntax anyway)."""
    maybe = quotes[quotes > 0]
    maybe = maybe[arr[maybe - 1] == _BACKSLASH]
    if not maybe.size:
        return quotes
    keep = np.ones(quotes.size, dtype=bool)
    for q in maybe.tolist():
        run = 0
        k = q - 1
        while k >= 0 and data[k] == _BACKSLASH:
            run += 1
            k -= 1
        if run % 2:
            keep[np.searchsorted(quotes, q)] = False
    return quotes[keep]


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, dtype=a.dtype)
    out[: a.size] = a
    return out


class _Scan:
    """Every '(' and ')' outside strings with its nesting level, in one pass of 256 KiB chunks.

    Why chunks of this size: the string-parity and level look-ups are ``searchsorted`` calls
    between the quotes, opens and closes of one chunk; kept chunk-local (with the quote count
    and the level carried from chunk to chunk) the arrays stay in cache, which halves the time
    of doing the same over whole-file arrays, and
    no whole-file temporary is ever made.  Offsets are int32 for files under 2 GiB and levels
    int16 when the nesting allows: 12 bytes per parenthesis pair.

    Two halves on two threads (files over :data:`_SPLIT_MIN` bytes, two CPUs): the chunk work
    is numpy comparisons, ``flatnonzero`` and ``searchsorted``, which run with the GIL
    released.  The second half is scanned as if it started outside any string at level 0;
    its levels are then shifted by the first half's final level, and when the first half
    ends inside a string (an odd count of quotes: a string spanning the split, which KiCad
    never writes across lines) the second half is scanned again with the true parity, so the
    result is always that of the one-pass scan.
    """

    def __init__(self, data: bytes) -> None:
        arr = np.frombuffer(data, dtype=np.uint8)
        n = arr.size
        mid = (n // 2) // _CHUNK * _CHUNK
        if n < _SPLIT_MIN or mid <= 0 or _cpus() < 2:
            first = _scan_range(arr, data, 0, n, 0, 0)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="accel-drc scan") as pool:
                later = pool.submit(_scan_range, arr, data, mid, n, 0, 0)
                first = _scan_range(arr, data, 0, mid, 0, 0, cap=n // 16 + 1024)
                second = later.result()
            if first.n_quotes & 1:  # a string spans the split: the parity was wrong there
                second = _scan_range(arr, data, mid, n, first.n_quotes, first.level)
            else:
                second.shift(first.level, first.n_quotes)
            first.extend(second)
            del second
        first.trim()
        self.n_quotes = first.n_quotes
        self.last_quote = first.last_quote
        self.opens, self.open_level = first.opens, first.open_level
        self.closes, self.close_level = first.closes, first.close_level


#: files from this size on are scanned in two halves on two threads (below it the thread
#: costs more than it saves)
_SPLIT_MIN = 8 << 20


def _cpus() -> int:
    from ..concurrency import workers

    return workers()


class _Part:
    """The parentheses of one byte range (:func:`_scan_range`): arrays filled up to ``n_open``
    / ``n_close`` (capacity beyond), the quote count and level at the range's end."""

    def __init__(self, cap: int, dt: type) -> None:
        self.opens = np.empty(cap, dtype=dt)
        self.closes = np.empty(cap, dtype=dt)
        self.open_level: np.ndarray = np.empty(cap, dtype=np.int16)
        self.close_level: np.ndarray = np.empty(cap, dtype=np.int16)
        self.n_open = self.n_close = 0
        self.n_quotes = 0
        self.last_quote = -1
        self.level = 0

    def widen_levels(self) -> None:
        self.open_level = self.open_level.astype(np.int64)  # absurd nesting: wide levels
        self.close_level = self.close_level.astype(np.int64)

    def reserve(self, n_open: int, n_close: int) -> None:
        if n_open > self.opens.size or n_close > self.closes.size:
            cap = max(self.opens.size * 3 // 2, n_open, n_close)
            self.opens, self.open_level = _grow(self.opens, cap), _grow(self.open_level, cap)
            self.closes, self.close_level = _grow(self.closes, cap), _grow(self.close_level, cap)

    def shift(self, level: int, n_quotes: int) -> None:
        """Put this part after a part that ended at ``level`` with ``n_quotes`` quotes (even)."""
        self.n_quotes += n_quotes
        if not level:
            return
        ol, cl = self.open_level[: self.n_open], self.close_level[: self.n_close]
        lo = min(int(ol.min()) if ol.size else 0, int(cl.min()) if cl.size else 0)
        hi = max(int(ol.max()) if ol.size else 0, int(cl.max()) if cl.size else 0)
        if self.open_level.dtype == np.int16 and (hi + level > 32767 or lo + level < -32768):
            self.widen_levels()
        self.open_level[: self.n_open] += level
        self.close_level[: self.n_close] += level
        self.level += level

    def extend(self, other: _Part) -> None:
        """Append ``other`` (the next byte range, already shifted) to this part."""
        if other.open_level.dtype != self.open_level.dtype:
            self.widen_levels()
        self.reserve(self.n_open + other.n_open, self.n_close + other.n_close)
        self.opens[self.n_open : self.n_open + other.n_open] = other.opens[: other.n_open]
        self.open_level[self.n_open : self.n_open + other.n_open] = other.open_level[: other.n_open]
        self.closes[self.n_close : self.n_close + other.n_close] = other.closes[: other.n_close]
        self.close_level[self.n_close : self.n_close + other.n_close] = other.close_level[
            : other.n_close
        ]
        self.n_open += other.n_open
        self.n_close += other.n_close
        self.n_quotes = other.n_quotes
        if other.last_quote >= 0:
            self.last_quote = other.last_quote
        self.level = other.level

    def trim(self) -> None:
        # shrunk in place (realloc, no copy), so the unused capacity is given back
        for a, n in (
            (self.opens, self.n_open),
            (self.open_level, self.n_open),
            (self.closes, self.n_close),
            (self.close_level, self.n_close),
        ):
            a.resize(n, refcheck=False)


def _scan_range(
    arr: np.ndarray,
    data: bytes,
    start: int,
    stop: int,
    n_quotes: int,
    level: int,
    cap: int | None = None,
) -> _Part:
    """The parentheses of ``data[start:stop]`` outside strings and their levels, given the
    count of quotes before ``start`` (its parity) and the level there; ``start`` a multiple of
    :data:`_CHUNK`.  Reads shared data only, so two ranges may be scanned on two threads."""
    # filled in place, grown by half when full (boards have about one parenthesis pair per
    # 20-30 bytes; 1 per 16 is the first guess): per-chunk lists joined at the end would
    # hold the index twice, and counting first costs a third pass over the text
    part = _Part(cap if cap is not None else (stop - start) // 16 + 1024, offset_dtype(arr.size))
    part.n_quotes = n_quotes
    for lo in range(start, stop, _CHUNK):
        sub = arr[lo : min(lo + _CHUNK, stop)]
        qq = np.flatnonzero(sub == _QUOTE)
        if qq.size:
            qq = _unescaped(arr, qq + lo, data) - lo
            if qq.size:
                part.last_quote = int(qq[-1]) + lo
        oo = np.flatnonzero(sub == _OPEN)
        cc = np.flatnonzero(sub == _CLOSE)
        nq = part.n_quotes
        if qq.size:
            oo = oo[((np.searchsorted(qq, oo) + nq) & 1) == 0]
            cc = cc[((np.searchsorted(qq, cc) + nq) & 1) == 0]
        elif nq & 1:  # the whole chunk is inside one string
            oo, cc = oo[:0], cc[:0]
        part.n_quotes = nq + qq.size
        olv = level + 1 + np.arange(oo.size) - np.searchsorted(cc, oo)
        clv = level + np.searchsorted(oo, cc) - np.arange(cc.size)
        # levels in this chunk lie within [level before - closes, level before + opens + 1]
        lo_bound, hi_bound = level - cc.size, level + oo.size + 1
        if part.open_level.dtype == np.int16 and (hi_bound > 32767 or lo_bound < -32768):
            part.widen_levels()
        level += oo.size - cc.size
        n_open, n_close = part.n_open, part.n_close
        part.reserve(n_open + oo.size, n_close + cc.size)
        part.opens[n_open : n_open + oo.size] = oo + lo
        part.open_level[n_open : n_open + oo.size] = olv
        part.closes[n_close : n_close + cc.size] = cc + lo
        part.close_level[n_close : n_close + cc.size] = clv
        part.n_open = n_open + oo.size
        part.n_close = n_close + cc.size
    part.level = level
    return part


#: ``repair(data, scan, quotes) -> (fixed data, warnings) | None``: a format's own leniency
#: (e.g. :func:`.kicad_lenient.repair`), tried only when the parentheses do not balance
Repairer = Callable[[bytes, "_Scan", np.ndarray], Optional[tuple[bytes, list[str]]]]


def _top_item_before(data: bytes, level2: np.ndarray, before: np.ndarray) -> int:
    """Start of the top-level item that holds the last '(' of ``before``.

    After an extra ')' the rest of the broken item's children look like top-level items, so
    the nesting alone points at a stray ``(uuid …)``.  KiCad writes every top-level item on a
    line of its own with one fixed indentation (a tab, or two spaces before KiCad 8): the last
    '(' with that indentation is the item that really holds the fault.  Error path only."""
    first = int(level2[0])
    nl = data.rfind(b"\n", 0, first)
    indent = data[nl + 1 : first]
    if nl < 0 or indent.strip():
        return int(level2[-1])
    arr = np.frombuffer(data, dtype=np.uint8)
    cand = before[before > len(indent)]
    ok = arr[cand - len(indent) - 1] == 10
    for i, ch in enumerate(indent):
        ok &= arr[cand - len(indent) + i] == ch
    hits = cand[ok]
    return int(hits[-1]) if hits.size else int(level2[-1])


def _balance_error(data: bytes, scan: _Scan, source: str) -> InputError | None:
    """Why the parentheses of ``data`` do not form one node (None if they do), with the line."""
    opens, closes = scan.opens, scan.closes
    bad = np.flatnonzero(scan.close_level < 1)
    if bad.size:
        # the ')' that goes below the root is often far from the fault (the end of the file);
        # the top-level item that closes the root early is where the fault is
        root_close = int(closes[np.flatnonzero(scan.close_level == 1)[0]])
        o2 = opens[(scan.open_level == 2) & (opens < root_close)]
        if o2.size:
            start = _top_item_before(data, o2, opens[opens < root_close])
            m = re.match(rb"\(\s*([^\s()\"]{1,40})", data[start : start + 48])
            kw = m.group(1).decode("utf-8", "replace") if m else "…"
            return InputError(
                source,
                f"unbalanced parentheses: unexpected ')': an extra ')' or a missing '(' in or "
                f"right after the ({kw} …) that starts here closes the board at line "
                f"{line_of(data, root_close)}",
                line=line_of(data, start),
            )
        off = int(closes[bad[0]])
        return InputError(source, "unbalanced parentheses: unexpected ')'", line=line_of(data, off))
    if opens.size == 0:
        return InputError(source, "no S-expression found")
    if opens.size != closes.size:
        missing = opens.size - closes.size
        where = len(data)
        what = ""
        # the first top-level item that never closes is where the text stops making sense
        o2 = opens[scan.open_level == 2]
        c2 = closes[scan.close_level == 2]
        if o2.size > c2.size:
            where = int(o2[c2.size])
            m = re.match(rb"\(\s*([^\s()\"]{1,40})", data[where : where + 48])
            if m:
                what = f"; the ({m.group(1).decode('utf-8', 'replace')} …) that starts here never closes"
        return InputError(
            source,
            f"unexpected end of file: {missing} parenthes{'i' if missing == 1 else 'e'}s "
            f"left open{what} (is the file truncated?)",
            line=line_of(data, where),
        )
    # the root must be the whole file: nothing but whitespace after its ')'
    root_end = int(closes[np.flatnonzero(scan.close_level == 1)[0]])
    if np.count_nonzero(scan.open_level == 1) > 1:
        second = int(opens[np.flatnonzero(scan.open_level == 1)[1]])
        return InputError(
            source, "unexpected data after the end of the board", line=line_of(data, second)
        )
    rest = data[root_end + 1 :]
    stripped = rest.lstrip()
    if stripped:
        off = root_end + 1 + len(rest) - len(stripped)
        return InputError(
            source, "unexpected data after the end of the board", line=line_of(data, off)
        )
    return None


class SexprIndex:
    """Every parenthesis of ``data`` outside strings, with its nesting level.

    ``opens[i]`` / ``closes[j]`` are byte offsets; ``open_level`` / ``close_level`` the level of
    the node they open or close (the root node is level 1).  Raises :class:`InputError` (with
    the line) for unterminated strings and unbalanced parentheses, so a truncated or corrupt
    file fails in well under a second with a message instead of hanging or crashing later.

    Memory: offsets int32 (files < 2 GiB), levels int16 (nesting < 32767): 12 bytes per
    parenthesis pair, about 0.55 byte per byte of a track-heavy board.  The quote offsets are
    only needed to build the index and are not kept.
    """

    def __init__(self, data: bytes, source: str, repair: Repairer | None = None) -> None:
        self.source = source
        #: one line per kind of slip the ``repair`` hook read past (empty for a clean file)
        self.warnings: list[str] = []
        scan = _Scan(data)
        if scan.n_quotes % 2:
            raise InputError(
                source,
                "unterminated string (the file is truncated or corrupt)",
                line=line_of(data, scan.last_quote),
            )
        error = _balance_error(data, scan, source)
        if error is not None and repair is not None:
            # only a file that does not balance pays for this (a good board never gets here)
            arr = np.frombuffer(data, dtype=np.uint8)
            quotes = _unescaped(arr, np.flatnonzero(arr == _QUOTE), data)
            fixed = repair(data, scan, quotes)
            if fixed is not None:
                data, self.warnings = fixed
                scan = _Scan(data)
                error = _balance_error(data, scan, source)
        if error is not None:
            raise error
        self.data = data
        self.opens = scan.opens
        self.closes = scan.closes
        self.open_level = scan.open_level
        self.close_level = scan.close_level
        del scan
        root_end = int(self.closes[np.flatnonzero(self.close_level == 1)[0]])
        deepest = int(self.open_level.max())
        if deepest > MAX_SEXPR_DEPTH:
            # one vectorised max (cheap): a board nested
            # 1,000 levels is not a KiCad board, and Python-side parsers recurse on nesting
            first = int(self.opens[np.flatnonzero(self.open_level > MAX_SEXPR_DEPTH)[0]])
            raise InputError(
                source,
                f"nested more than {MAX_SEXPR_DEPTH} levels deep (KiCad writes about 10): "
                "not a KiCad board",
                line=line_of(data, first),
            )
        self.root_start = int(self.opens[0])
        self.root_end = root_end + 1

    # -- spans -------------------------------------------------------------------------------

    def children(self, level: int, start: int | None = None, end: int | None = None) -> np.ndarray:
        """(n, 2) array of [start, end) spans of the nodes at ``level`` inside [start, end)."""
        opens, closes = self.opens, self.closes
        if start is None:
            i0, i1, j0, j1 = 0, opens.size, 0, closes.size
        else:
            keys = np.array([start, end], dtype=opens.dtype)
            i0, i1 = np.searchsorted(opens, keys)
            j0, j1 = np.searchsorted(closes, keys)
        o = opens[i0:i1][self.open_level[i0:i1] == level]
        c = closes[j0:j1][self.close_level[j0:j1] == level]
        if o.size != c.size:  # cannot happen once the file is balanced; guard anyway
            raise InputError(self.source, "unbalanced parentheses", offset=int(start or 0))
        if not o.size:
            return np.zeros((0, 2), dtype=np.int64)
        return np.stack([o.astype(np.int64), c.astype(np.int64) + 1], axis=1)


#: 10**k for the decimal counts the fast number parser accepts; every one is exact in float64
_POW10 = 10.0 ** np.arange(23)
#: bytes of text parsed per pass: the per-byte masks of a chunk stay in cache and the
#: temporaries stay small however large the board (256 KiB measured fastest: 1 MiB +6 %,
#: 4 MiB +50 %)
_DEC_CHUNK = 1 << 18


def parse_decimals(text: bytes | np.ndarray, points: bool = False) -> np.ndarray | None:
    """The whitespace-separated plain decimals of ``text`` (``-12.345678``, ``7``, ``.5``) as
    float64, bit-identical to ``strtod`` (``float()``, ``np.fromstring``), or None when a token
    is anything else (exponent, ``+``, ``nan``, more than 15 significant digits), so the
    caller falls back to the general parser.  ``points``: the text is a run of ``(pts (xy x y)
    …)`` nodes, whose ``(xy``, ``(pts`` and ``)`` separate numbers too (each checked to be one
    of those words, so ``1x`` is refused as strtod refuses it).

    Why exact: each token becomes an integer mantissa below 10**15 (exact in float64) and a
    count k <= 15 of decimals (10**k exact in float64); one IEEE division of two exact values
    is correctly rounded, which is what a correct ``strtod`` returns (Clinger's fast path).
    Why not ``np.fromstring``: it calls a C ``strtod`` per number through numpy's locale-safe
    wrapper; this vectorised form reads one byte of every token at a time (Horner's rule over
    the columns), about three times faster.
    """
    got = parse_decimals_at(text, points)
    return None if got is None else got[0]


def parse_decimals_at(
    text: bytes | np.ndarray, points: bool = False
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`parse_decimals` and the offset in ``text`` where each number starts (int64),
    read in chunks of :data:`_DEC_CHUNK` bytes."""
    u = np.frombuffer(text, dtype=np.uint8) if isinstance(text, bytes) else text
    parts: list[np.ndarray] = []
    where: list[np.ndarray] = []
    lo = 0
    n = u.size
    while lo < n:
        hi = min(lo + _DEC_CHUNK, n)
        if hi < n:  # end the chunk on a blank, so no token or word is cut in two
            seg = u[hi : hi + 64]
            tail = np.flatnonzero((seg == 32) | ((seg - np.uint8(9)) < 5))
            if not tail.size:
                return None  # a 64-byte token: not a plain decimal
            hi += int(tail[0])
        got = _decimals_chunk(u[lo:hi], points)
        if got is None:
            return None
        parts.append(got[0])
        where.append(got[1] + lo)
        lo = hi
    if not parts:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0], where[0]
    return np.concatenate(parts), np.concatenate(where)


def strtod_all(text: bytes) -> np.ndarray | None:
    """Every whitespace-separated number of ``text`` read by ``np.fromstring`` (any form
    ``strtod`` takes), or None when the text is not numbers only; the slow path of
    :func:`parse_decimals`.  A junk token ends the parse early (numpy warns, it does not raise),
    so callers compare the count of numbers with the count they expect."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.fromstring(text, dtype=np.float64, sep=" ")  # text mode, not binary
        except ValueError:
            return None


def _point_words_ok(u: np.ndarray, sep: np.ndarray) -> bool:
    """In a ``points`` chunk: every ``(`` opens ``(xy`` or ``(pts`` followed by a blank, and
    no other letter occurs (the letters counted equal those of the words found).  Marks the
    words' bytes and the parentheses as separators in ``sep``."""
    po = np.flatnonzero(u == 40)
    pad = np.concatenate((u, np.full(5, 32, dtype=np.uint8)))
    b1, b2, b3, b4 = pad[po + 1], pad[po + 2], pad[po + 3], pad[po + 4]
    xy = (b1 == 120) & (b2 == 121) & ((b3 == 32) | ((b3 - np.uint8(9)) < 5))
    pts = (b1 == 112) & (b2 == 116) & (b3 == 115) & ((b4 == 32) | ((b4 - np.uint8(9)) < 5))
    if not (xy | pts).all():
        return False
    letters = (u == 120) | (u == 121) | (u == 112) | (u == 116) | (u == 115)
    n_letters = int(np.count_nonzero(letters))
    if n_letters != 2 * int(np.count_nonzero(xy)) + 3 * int(np.count_nonzero(pts)):
        return False
    sep |= letters
    sep |= (u - np.uint8(40)) < 2  # ( )
    return True


def _decimals_chunk(u: np.ndarray, points: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`parse_decimals_at` of one chunk that starts and ends at token boundaries."""
    # comparisons, not a 256-entry look-up table: numpy vectorises them (30x faster here)
    ws = u == 32
    ws |= (u - np.uint8(9)) < 5  # \t \n \v \f \r (uint8 wraps below 9)
    if points and not _point_words_ok(u, ws):
        return None
    ok = (u - np.uint8(45)) < 13  # - . / 0-9
    ok &= u != 47
    ok |= ws
    if not ok.all():
        return None
    del ok
    n = u.size
    word = ~ws
    start_mask = word.copy()  # token starts: a non-space after a space (or the chunk's start)
    start_mask[1:] &= ws[:-1]
    st = np.flatnonzero(start_mask)
    if not st.size:
        return np.zeros(0, dtype=np.float64), st
    ws[0] = False  # token ends: a space after a non-space (or the chunk's end)
    ws[1:] &= word[:-1]
    en = np.flatnonzero(ws)
    if word[-1]:
        en = np.append(en, n)
    if en.size != st.size:
        return None
    del ws, word
    length = en - st
    width = int(length.max())
    if width > 24:
        return None
    minus = np.flatnonzero(u == 45)  # '-' only as a token's first byte
    if minus.size and not start_mask[minus].all():
        return None
    del start_mask
    m = st.size
    padded = np.concatenate((u, np.full(width, 32, dtype=np.uint8)))
    mant = np.zeros(m, dtype=np.int64)
    step = np.empty(m, dtype=np.int64)
    c = np.empty(m, dtype=np.uint8)
    inside = np.empty(m, dtype=bool)
    isd = np.empty(m, dtype=bool)
    n_dots = np.zeros(m, dtype=np.int64)
    dot_at = np.zeros(m, dtype=np.int64)
    for j in range(width):  # Horner over the j-th byte of every token at once
        np.take(padded, st + j, out=c)
        np.greater(length, j, out=inside)
        np.subtract(c, 48, out=c)
        np.equal(c, 254, out=isd)  # '.'
        isd &= inside
        n_dots += isd
        np.copyto(dot_at, j, where=isd)
        np.less(c, 10, out=isd)  # a digit (the '-', '.', and bytes past the token are not)
        isd &= inside
        np.multiply(mant, 10, out=step)
        step += c
        np.copyto(mant, step, where=isd)
    if m and int(n_dots.max()) > 1:
        return None
    neg = padded[st] == 45
    digits = length - neg - n_dots
    if digits.min() < 1 or digits.max() > 15:
        return None
    decimals = np.where(n_dots > 0, length - dot_at - 1, 0)
    out = mant / _POW10[decimals]
    np.negative(out, out=out, where=neg)
    return out, st


def parse_points(body: bytes) -> np.ndarray | None:
    """The numbers of a run of ``(xy x y)`` nodes (no arcs) as a flat float array, or None.

    The numbers are read by :func:`parse_decimals` (the fastest of the ways measured,
    ``docs/check-speed.md``), or stripped and read by ``np.fromstring`` when a
    number is not a plain decimal.  Returns None when the text holds anything else (the count does not come out
    at two numbers per point), so the caller falls back to the general parser.
    """
    count = body.count(b"(xy")
    flat = parse_decimals(body, points=True)
    if flat is None:
        flat_text = body.replace(b"(xy", b" ").replace(b")", b" ").replace(b"(pts", b" ")
        flat = strtod_all(flat_text)
        if flat is None:
            return None
    if flat.size != 2 * count or not np.isfinite(flat).all():
        return None
    return flat
