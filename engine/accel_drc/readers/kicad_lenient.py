"""Where KiCad's board parser reads a node whose ``(`` is missing, and only there.

Why this exists: KiCad 9 wrote ``(curved_edges no)filter_ratio 0.9)`` (no ``(`` before
``filter_ratio``) 349 times into the RoyalBlue54L-Feather demo it ships, and KiCad opens that file.
A reader that insists on balanced parentheses calls the board corrupt.  This module finds the
places where KiCad accepts the missing ``(`` and tells :class:`~.sexpr.SexprIndex` where to put it
back; everywhere else an unbalanced file stays an error, as it is in KiCad.

What KiCad does (``pcbnew/pcb_io/kicad_sexpr/pcb_io_kicad_sexpr_parser.cpp``, the DSNLEXER-based
recursive-descent ``PCB_IO_KICAD_SEXPR_PARSER``): every node is parsed by a loop over its children.
Most loops are **strict**::

    for( token = NextTok(); token != T_RIGHT; token = NextTok() )
    {
        if( token != T_LEFT )
            Expecting( T_LEFT );          // "Expecting '('": the board does not load
        token = NextTok();
        switch( token ) { case T_start: …; NeedRIGHT(); … }

Some are **lenient**: ``if( token == T_LEFT ) token = NextTok();`` (or ``case T_LEFT: continue;``),
so a keyword that arrives without its ``(`` is dispatched exactly like one with it, and the
keyword's handler then consumes the next ``)`` as its own close (``NeedRIGHT()``).  That is the
only leniency: a missing ``(`` before a *value* keyword of a lenient loop.  It is not lenient about

* a missing ``(`` in any strict loop (the board root, ``setup``, ``stackup``, ``layers``, ``pad``,
  ``segment``, ``arc``, every ``gr_*``/``fp_*`` shape, ``group``, ``net_class`` …);
* a keyword the loop does not know (``Expecting( "…" )``);
* a flag keyword read by ``parseMaybeAbsentBool`` (``enabled``, ``curved_edges``, ``hide``,
  ``locked`` …): bare, it means "yes" and takes no ``)``; bare *with a value* (``curved_edges no)``)
  the value reaches the loop's ``switch`` and the load fails;
* a value keyword with nothing before its ``)`` (``parseDouble`` / ``parseBoardUnits`` fail);
* an extra ``)`` or a missing ``)`` anywhere.

Checked against KiCad 9.0.8's ``pcbnew.LoadBoard`` on hand-made variants of a small board
(``tests/test_reader_lenient.py``): a bare ``size`` in a via, ``filled_areas_thickness`` in a zone,
``thermal_gap`` in a zone's ``fill``, ``descr`` in a footprint, ``at`` straight after ``(via`` and the
RoyalBlue teardrop load; a bare ``end`` in a segment, ``size`` in a pad, ``net`` at the board root,
``copper_finish`` in the stack-up, ``curved_edges no)``, an unknown keyword and an extra ``)`` do not.

The table below is transcribed from the parser's lenient loops (the keyword lists of their
``switch`` statements, value keywords only).  A path suffix names the parent node, so a zone's
``(fill …)`` (lenient, keywords) is told from a shape's ``(fill …)`` (lenient, atoms only) and a
footprint's ``(property …)`` (lenient text effects) from a zone's (strict).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

import numpy as np

from .sexpr import line_of


class _Loop(NamedTuple):
    """One lenient child loop of KiCad's parser."""

    #: keywords whose handler reads values and then its own ``)``
    keywords: frozenset[str]
    #: atoms the parser reads before the loop (a footprint's name, a model's file, a
    #: footprint property's name and value)
    head: int = 0
    #: the parser calls ``NeedLEFT()`` before the loop (``parsePCB_TEXT``): the first child must
    #: have its ``(``
    first_needs_paren: bool = False


def _kw(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: parsePCB_TEXT_effects: the children of footprint fields and of fp_text / gr_text
_TEXT = _kw("at layer tstamp uuid locked unlocked effects render_cache")
_TEXT_DIMS = _Loop(_kw("size thickness"))
_PRIMITIVES = _Loop(_kw("gr_arc gr_line gr_circle gr_rect gr_poly gr_curve gr_bbox gr_vector"))
_FOOTPRINT = _Loop(
    _kw(
        "version generator generator_version layer stackup tedit tstamp uuid at descr tags "
        "property path sheetname sheetfile units autoplace_cost90 autoplace_cost180 "
        "private_layers net_tie_pad_groups duplicate_pad_numbers_are_jumpers jumper_pad_groups "
        "solder_mask_margin solder_paste_margin solder_paste_ratio solder_paste_margin_ratio "
        "clearance zone_connect thermal_width thermal_gap attr fp_text fp_text_box table fp_arc "
        "fp_circle fp_curve fp_rect fp_line fp_poly image barcode dimension pad model zone group "
        "point embedded_fonts embedded_files component_classes variant"
    ),
    head=1,
)

#: parent path suffix -> the lenient loop that reads its children
LENIENT: dict[tuple[str, ...], _Loop] = {
    ("footprint",): _FOOTPRINT,
    ("module",): _FOOTPRINT,
    ("footprint", "property"): _Loop(_TEXT, head=2),
    ("module", "property"): _Loop(_TEXT, head=2),
    ("fp_text",): _Loop(_TEXT, head=2, first_needs_paren=True),
    ("gr_text",): _Loop(_TEXT, head=1, first_needs_paren=True),
    ("effects",): _Loop(_kw("font justify")),
    ("effects", "font"): _Loop(_kw("face size line_spacing thickness")),
    ("model",): _Loop(_kw("at offset scale rotate opacity"), head=1),
    ("teardrops",): _Loop(
        _kw("best_length_ratio max_length best_width_ratio max_width curve_points filter_ratio")
    ),
    ("via",): _Loop(
        _kw(
            "at size drill layers net zone_layer_connections padstack teardrops tenting covering "
            "plugging filling capping tstamp uuid status backdrill tertiary_drill "
            "front_post_machining back_post_machining"
        )
    ),
    ("zone",): _Loop(
        _kw(
            "net net_name layer layers property tstamp uuid hatch priority connect_pads "
            "min_thickness filled_areas_thickness fill placement keepout polygon filled_polygon "
            "fill_segments name attr locked"
        )
    ),
    ("zone", "connect_pads"): _Loop(_kw("clearance")),
    ("zone", "fill"): _Loop(
        _kw(
            "mode hatch_thickness hatch_gap hatch_orientation hatch_smoothing_level "
            "hatch_smoothing_value hatch_border_algorithm hatch_min_hole_area arc_segments "
            "thermal_gap thermal_bridge_width smoothing radius island_removal_mode "
            "island_area_min"
        )
    ),
    ("zone", "placement"): _Loop(_kw("sheetname component_class group enabled")),
    ("zone", "keepout"): _Loop(_kw("tracks vias copperpour pads footprints")),
    ("zone", "attr"): _Loop(_kw("teardrop")),
    ("zone", "attr", "teardrop"): _Loop(_kw("type")),
    ("pad", "drill"): _Loop(_kw("offset")),
    ("pad", "primitives"): _PRIMITIVES,
    ("layer", "primitives"): _PRIMITIVES,  # a padstack layer's custom shape
    # KiCad 10 also skips *unknown* bare keywords here (``skipCurrent``); not followed
    ("footprint", "units"): _Loop(_kw("unit")),
    ("units", "unit"): _Loop(_kw("name pins")),
    ("point",): _Loop(_kw("at size layer uuid")),
    ("target",): _Loop(_kw("at size width layer tstamp uuid")),
    ("variants",): _Loop(_kw("variant")),
    ("variants", "variant"): _Loop(_kw("name description")),
    ("footprint", "variant"): _Loop(_kw("name field")),
    ("variant", "field"): _Loop(_kw("name value")),
    ("dimension", "format"): _Loop(
        _kw("prefix suffix units units_format precision override_value")
    ),
    ("dimension", "style"): _Loop(
        _kw(
            "thickness arrow_direction arrow_length text_position_mode extension_height "
            "extension_offset text_frame"
        )
    ),
    ("defaults", "copper_text_dims"): _TEXT_DIMS,
    ("defaults", "silk_text_dims"): _TEXT_DIMS,
    ("defaults", "fab_layers_text_dims"): _TEXT_DIMS,
    ("defaults", "other_layers_text_dims"): _TEXT_DIMS,
}

_ALL_KEYWORDS = sorted(
    {kw for loop in LENIENT.values() for kw in loop.keywords}, key=len, reverse=True
)
#: a bare atom that is one of the keywords, preceded by whitespace or ')' (never '(' directly:
#: then it is an ordinary node's keyword)
_CANDIDATE = re.compile(
    rb"(?<![^\s)])(" + rb"|".join(k.encode() for k in _ALL_KEYWORDS) + rb")(?=[\s()])"
)
_KEYWORD_AT = re.compile(rb"\(\s*([^\s()\"]+)")
_NEXT = re.compile(rb"\s*(.)", re.S)
_ATOMS = re.compile(rb'"(?:[^"\\]|\\.)*"|[^\s()"]+', re.S)
#: how far back (in opening parentheses) one look for a parent reaches before widening
_WINDOW = 4096


class Repair(NamedTuple):
    """A ``(`` KiCad reads as present: where it goes, the keyword and its parent path."""

    offset: int
    keyword: str
    path: tuple[str, ...]


def _loop_for(path: tuple[str, ...]) -> _Loop | None:
    for n in (3, 2, 1):
        if len(path) >= n:
            loop = LENIENT.get(path[-n:])
            if loop is not None:
                return loop
    return None


def missing_opens(
    data: bytes,
    opens: np.ndarray,
    open_level: np.ndarray,
    closes: np.ndarray,
    quotes: np.ndarray,
) -> list[Repair]:
    """Every place where KiCad's parser reads a keyword as a node although its ``(`` is missing.

    ``opens`` / ``open_level`` / ``closes`` are the raw parenthesis index of the (unbalanced)
    text and ``quotes`` the offsets of its unescaped quotes.  Candidates are processed in file
    order: a ``(`` accepted earlier raises the nesting level of everything after it, so the
    parent of a later candidate is looked up with the corrected levels (the parent is the last
    node opened before the candidate whose level equals the candidate's depth).  Only runs on
    files whose parentheses do not balance, so its Python loop never costs a good board anything.
    """
    accepted: list[Repair] = []
    acc_pos: list[int] = []  # offsets of accepted '('
    acc_level: list[int] = []  # the level of the node each opens
    for m in _CANDIDATE.finditer(data):
        c = m.start()
        if int(np.searchsorted(quotes, c)) & 1:
            continue  # inside a string
        keyword = m.group(1).decode("ascii")
        nxt = _NEXT.match(data, m.end())
        if nxt is None or nxt.group(1) == b")":
            continue  # a keyword with no value before its ')' is not read as a node either
        k = int(np.searchsorted(opens, c))
        n_acc = bisect_left(acc_pos, c)
        depth = k - int(np.searchsorted(closes, c)) + n_acc
        chain = _ancestors(data, opens, open_level, k, c, depth, acc_pos, acc_level, 4)
        if not chain:
            continue
        path = tuple(kw for _, kw in reversed(chain))
        loop = _loop_for(path)
        if loop is None or keyword not in loop.keywords:
            continue
        parent_pos = chain[0][0]
        if not _past_head(data, opens, open_level, parent_pos, c, depth, acc_pos, acc_level, loop):
            continue
        accepted.append(Repair(c, keyword, path))
        acc_pos.append(c)
        acc_level.append(depth + 1)
    return accepted


def _corrected(
    opens: np.ndarray, open_level: np.ndarray, lo: int, hi: int, acc_pos: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and corrected levels of the raw opens ``lo:hi``."""
    window = opens[lo:hi]
    levels = open_level[lo:hi].astype(np.int64)
    if acc_pos:
        levels = levels + np.searchsorted(np.asarray(acc_pos), window)
    return window, levels


def _ancestors(
    data: bytes,
    opens: np.ndarray,
    open_level: np.ndarray,
    k: int,
    c: int,
    depth: int,
    acc_pos: list[int],
    acc_level: list[int],
    count: int,
) -> list[tuple[int, str]]:
    """Up to ``count`` enclosing nodes of offset ``c`` (innermost first) as (offset, keyword)."""
    out: list[tuple[int, str]] = []
    hi = k
    before = c
    level = depth
    while len(out) < count and level >= 1:
        found = -1
        lo = max(0, hi - _WINDOW)
        while True:
            window, levels = _corrected(opens, open_level, lo, hi, acc_pos)
            hits = np.flatnonzero(levels == level)
            if hits.size:
                found = int(window[hits[-1]])
                break
            if lo == 0:
                break
            hi, lo = lo, max(0, lo - 4 * _WINDOW)
        # a '(' accepted earlier may be the nearer parent
        j = bisect_left(acc_pos, before) - 1
        while j >= 0 and acc_pos[j] > found:
            if acc_level[j] == level:
                found = acc_pos[j]
                break
            j -= 1
        if found < 0:
            break
        if j >= 0 and acc_pos[j] == found:
            m = _ATOMS.match(data, found)
            keyword = m.group().decode("utf-8", "replace") if m else ""
        else:
            m = _KEYWORD_AT.match(data, found)
            keyword = m.group(1).decode("utf-8", "replace") if m else ""
        out.append((found, keyword))
        before = found
        hi = int(np.searchsorted(opens, found))
        level -= 1
    return out


def _past_head(
    data: bytes,
    opens: np.ndarray,
    open_level: np.ndarray,
    parent: int,
    c: int,
    depth: int,
    acc_pos: list[int],
    acc_level: list[int],
    loop: _Loop,
) -> bool:
    """True if ``c`` is where the parent's loop reads children: after the head atoms (and, for
    ``parsePCB_TEXT``, after a first child that had its ``(``)."""
    lo = int(np.searchsorted(opens, parent, side="right"))
    hi = int(np.searchsorted(opens, c))
    _, levels = _corrected(opens, open_level, lo, hi, acc_pos)
    has_child = bool(np.any(levels == depth + 1))
    j0, j1 = bisect_left(acc_pos, parent + 1), bisect_left(acc_pos, c)
    has_child = has_child or any(acc_level[j] == depth + 1 for j in range(j0, j1))
    if has_child:
        return True
    if loop.first_needs_paren:
        return False
    # no child yet: the atoms between the parent's keyword and c are its head
    if data[parent : parent + 1] == b"(":
        m = _KEYWORD_AT.match(data, parent)
        start = m.end() if m else parent + 1
    else:
        m = _ATOMS.match(data, parent)
        start = m.end() if m else parent
    return len(_ATOMS.findall(data, start, c)) >= loop.head


def describe(repairs: list[Repair], data: bytes) -> list[str]:
    """One warning per kind (parent and keyword), with the first line and the count."""
    kinds: dict[tuple[str, str], list[int]] = {}
    for r in repairs:
        kinds.setdefault((r.path[-1], r.keyword), []).append(r.offset)
    out = []
    for (parent, keyword), offsets in kinds.items():
        n = len(offsets)
        where = f"line {line_of(data, offsets[0])}"
        count = f" ({n} places, the first shown)" if n > 1 else ""
        known = (
            " (KiCad 9 writes teardrop settings as '(curved_edges no)filter_ratio 0.9)')"
            if (parent, keyword) == ("teardrops", "filter_ratio")
            else ""
        )
        out.append(
            f"{where}: '{keyword}' inside ({parent} …) has no opening '('{count}{known}; "
            f"KiCad's parser reads it as ({keyword} …) and so does accel-drc"
        )
    return out


def repair(data: bytes, scan: object, quotes: np.ndarray) -> tuple[bytes, list[str]] | None:
    """The :data:`~.sexpr.Repairer` for ``.kicad_pcb``: ``data`` with every ``(`` KiCad reads
    as present put back, and the warnings that say so; None if there is none to put back (the
    caller then reports the imbalance as it found it)."""
    found = missing_opens(
        data,
        scan.opens,  # type: ignore[attr-defined]
        scan.open_level,  # type: ignore[attr-defined]
        scan.closes,  # type: ignore[attr-defined]
        quotes,
    )
    if not found:
        return None
    pieces = []
    last = 0
    for r in found:
        pieces.append(data[last : r.offset])
        last = r.offset
    pieces.append(data[last:])
    return b"(".join(pieces), describe(found, data)
