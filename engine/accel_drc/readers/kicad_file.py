"""Fast reader for KiCad ``.kicad_pcb`` boards (KiCad 6, 7, 8, 9 and 10).

Why it is built this way: big boards are mostly zone fills, footprint graphics and embedded 3D
models.  :class:`~.sexpr.SexprIndex` finds the nesting of every parenthesis with numpy; this module
then visits only the nodes a check needs (layers, stack-up, nets, tracks, vias, zones, footprint
headers and pads, Edge.Cuts shapes) and skips everything else by span, without tokenising it.
Zone fills are parsed straight into numpy arrays (the numpy block machinery, lazy fills and
properties live in :mod:`.kicad_blocks`).  This module decides which nodes to read; the reading
of each kind lives beside it, mixed into :class:`_Reader`: the fields of many items at once in
:mod:`.kicad_fields`, tracks in :mod:`.kicad_tracks`, vias in :mod:`.kicad_vias`, pads in
:mod:`.kicad_pads`, zones in :mod:`.kicad_zones`, footprint placement and graphics in
:mod:`.kicad_graphics`.  Its speed on real boards: ``docs/reader.md``, ``docs/check-speed.md``.

Format facts used (KiCad source ``pcb_io_kicad_sexpr.h`` version history and the v10 writer):

* ``(version 20211014)`` is KiCad 6.0; 2022-2023 dates KiCad 7; ``20240108`` KiCad 8;
  ``20241229`` KiCad 9; 2025-2026 dates KiCad 10.  Older files (KiCad 5 ``20171130``) use a
  different arc and layer syntax and are refused with a hint to re-save them.
* KiCad 9 renumbered layer ids, so layers are matched by *name*, never by number.
* KiCad 10 (``20250926``) writes via types ``blind`` / ``buried`` / ``micro``; since ``20251028`` it
  stops writing net codes (items say ``(net "GND")`` and there is no net table); since
  ``20251101`` vias and pads may carry ``(backdrill (size d) (layers "B.Cu" "In3.Cu"))`` and
  ``(tertiary_drill …)``.
* Footprint graphics and pads are stored relative to the footprint, un-rotated; pad angles are
  absolute.  The board's size follows ``BOARD::GetBoardEdgesBoundingBox()``: the union of every
  Edge.Cuts shape's bounding box, each inflated by half its line width.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..arrays import unique
from ..concurrency import Background, workers
from ..errors import InputError
from ..geometry import (
    arc_bbox_nm,
    arc_points,
    bezier_points,
    circle_points,
    kiround,
    outline_rings,
    rotate_nm,
)
from ..hostile import MAX_BOARD_BYTES, read_regular
from ..model import (
    COPPER_LAYER_TYPES,
    Board,
    CopperLayer,
    CopperShape,
    DesignSettings,
    Footprint,
    NetClassRules,
    Outline,
    Stackup,
    Tracks,
    Vias,
    Zone,
)
from .kicad_blocks import (
    ATOM,
    NODE_KEYWORD,
    LazyProps,
    find_property,
    locate_bad_number,
    non_finite_error,
    points_of,
    u64_view,
)
from .kicad_dru import with_design_rules
from .kicad_fields import FieldReading
from .kicad_graphics import IDENTITY, Transform, graphic_fields, graphic_geometry, to_nm
from .kicad_pads import PadReading
from .kicad_project import ProjectInfo, project_path_for, read_project
from .kicad_stackup import _float, stackup_from_sexpr
from .kicad_tracks import TrackReading
from .kicad_vias import ViaReading
from .kicad_zones import ZoneReading
from .sexpr import (
    Sexpr,
    SexprIndex,
    find_balanced,
    line_of,
    parse_span,
    unquote,
)

#: oldest format version read (KiCad 6.0 release)
MIN_VERSION = 20211014
#: newest format version this reader knows (KiCad 10.0.x, as 10.0.7 saves: pic_programmer demo)
MAX_KNOWN_VERSION = 20260206

#: top-level nodes of KiCad 6..10 boards; anything else is reported once as unknown
KNOWN_TOP_LEVEL = frozenset(
    [
        "version",
        "generator",
        "generator_version",
        "general",
        "paper",
        "page",
        "title_block",
        "layers",
        "setup",
        "property",
        "net",
        "net_class",
        "footprint",
        "gr_line",
        "gr_arc",
        "gr_circle",
        "gr_rect",
        "gr_poly",
        "gr_curve",
        "gr_bbox",
        "gr_text",
        "gr_text_box",
        "gr_vector",
        "image",
        "table",
        "dimension",
        "target",
        "segment",
        "arc",
        "via",
        "zone",
        "group",
        "generated",
        "embedded_fonts",
        "embedded_files",
        "point",
        "barcode",
        "variants",
        "component_classes",
    ]
)

#: top-level node kinds the reader walks one by one (all others are read as numpy span arrays)
_LISTED = frozenset(
    {b"version", b"generator", b"general", b"layers", b"setup", b"net", b"zone", b"footprint"}
)
_EDGE_GR = frozenset({b"gr_line", b"gr_arc", b"gr_circle", b"gr_rect", b"gr_poly", b"gr_curve"})
_EDGE_FP = frozenset({b"fp_line", b"fp_arc", b"fp_circle", b"fp_rect", b"fp_poly", b"fp_curve"})

_STR = rb'"(?:[^"\\]|\\.)*"'
_FP_HEAD = re.compile(rb"\((?:footprint|module)\s+(" + ATOM + rb")")
_FP_TEXT = re.compile(rb"\(fp_text\s+(reference|value)\s+(" + ATOM + rb")")
_SIMPLE = re.compile(rb"\(([a-z_]+)\s+([^()]*)\)")
_NAMES = re.compile(rb'"((?:[^"\\]|\\.)*)"|([^\s"]+)')
_COPPER_NAME = re.compile(r"^(F|B|In(\d+))\.Cu$")
_PTS = re.compile(rb"\(pts[\s)]")
#: a graphic's own ``(net …)`` and ``(uuid …)`` / ``(tstamp …)`` (level 2: no nesting holds them)
_NET_FIELD = re.compile(rb"\(net\s+([^()]*)\)")
_UUID_FIELD = re.compile(rb"\((uuid|tstamp)\s+([^()]*)\)")


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------


def read(path: str) -> Board:
    """Read ``path`` (a ``.kicad_pcb``) and the ``.kicad_pro`` beside it, if there is one."""
    data = read_regular(path, MAX_BOARD_BYTES)
    pro = project_path_for(path)
    return _read_bytes(data, path, pro if os.path.exists(pro) else None, expected_project=pro)


def read_text(text: str, source: str, project_path: str | None = None) -> Board:
    """Read a board from its text (e.g. a live KiCad's ``board.get_as_string()``)."""
    return _read_bytes(text.encode("utf-8"), source, project_path, expected_project=project_path)


def parse_stackup(text: str) -> Stackup | None:
    """The stack-up of a board text, or None if the board declares none.

    The plugin uses this on ``board.get_as_string()`` because KiCad 9.0.8's API returns
    dielectrics without material, εr or loss tangent.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    m = re.search(rb"\(stackup[\s)]", data)
    if not m:
        return None
    try:
        end = find_balanced(data, m.start())
        node = parse_span(data, m.start(), end)
    except ValueError:
        return None
    return stackup_from_sexpr(node)


def kicad_major(version: int | None) -> int | None:
    """The KiCad release that writes board format ``version``."""
    if version is None:
        return None
    if version < 20211014:
        return 5
    if version <= 20211014:
        return 6
    if version <= 20221018:
        return 7
    if version <= 20240108:
        return 8
    if version <= 20241229:
        return 9
    return 10


# ---------------------------------------------------------------------------------------------
# the reader
# ---------------------------------------------------------------------------------------------


def _read_bytes(
    data: bytes, source: str, project_path: str | None, expected_project: str | None
) -> Board:
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise InputError(source, "file is empty")
    if head.startswith(b"PCBNEW-BOARD"):
        raise InputError(
            source,
            "legacy KiCad 4 board format: open and save it in KiCad 6 or newer",
        )
    if not head.startswith(b"("):
        raise InputError(
            source, f"not a KiCad board (.kicad_pcb): it starts with {head[:16]!r}", line=1
        )
    try:
        reader = _Reader(data, source)
        return reader.run(project_path, expected_project)
    except InputError:
        raise
    except (
        ValueError,
        IndexError,
        KeyError,
        TypeError,
        OverflowError,
        AttributeError,
        ZeroDivisionError,
    ) as exc:
        # malformed content inside a well-bracketed file (a number that is not a number, a node
        # with missing fields): bad input, not a crash.  The vectorised parsers do not know
        # where the bad number sat, so find the token in the file to name its line.
        if re.search(r"\bNaN\b|infinity", str(exc)):
            raise non_finite_error(data, source) from None  # int(nan) in a field parser
        token, line = locate_bad_number(data, exc)
        if token is not None:
            raise InputError(
                source, f"malformed board file: {token!r} is not a number", line=line
            ) from None
        raise InputError(source, f"malformed board file: {exc}") from None


def _lenient_repair(
    data: bytes, scan: object, quotes: np.ndarray
) -> tuple[bytes, list[str]] | None:
    """:func:`.kicad_lenient.repair`, imported only for a file whose parentheses do not balance
    (its keyword pattern is slow to compile, and a well-formed board never needs it)."""
    from . import kicad_lenient

    return kicad_lenient.repair(data, scan, quotes)


class _Reader(FieldReading, TrackReading, ViaReading, PadReading, ZoneReading):
    def __init__(self, data: bytes, source: str) -> None:
        self.source = source
        self.warnings: list[str] = []
        # KiCad's parser reads a few keywords whose '(' is missing (kicad_lenient); the index
        # puts those back, so ``self.data`` is the text as KiCad reads it (same lines)
        self.index = SexprIndex(data, source, repair=_lenient_repair)
        self.data = data = self.index.data
        self.warnings.extend(self.index.warnings)
        root_kw = NODE_KEYWORD.match(data, self.index.root_start)
        kw = root_kw.group(1) if root_kw else b""
        if kw in (b"footprint", b"module"):
            raise InputError(source, "this is a KiCad footprint, not a board", line=1)
        if kw != b"kicad_pcb":
            raise InputError(
                source, f"not a KiCad board: the file is a ({kw.decode(errors='replace')} …) node"
            )
        self.copper: dict[str, int] = {}
        self.net_names: list[str] = [""]
        self.net_by_code: dict[int, int] = {0: 0}
        self.net_by_name: dict[str, int] = {"": 0}
        self._layer_cache: dict[bytes, tuple[tuple[int, ...], tuple[str, ...]]] = {}
        self._drill_cache: dict[bytes, float | None] = {}
        self._pad_rows: dict[int, tuple] = {}
        self._net_cache: dict[bytes, int] = {}

    # -- small helpers ----------------------------------------------------------------------

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def fail(self, message: str, offset: int) -> InputError:
        return InputError(self.source, message, line=line_of(self.data, offset))

    def node(self, start: int, end: int) -> Sexpr:
        try:
            return parse_span(self.data, start, end)
        except ValueError as exc:
            raise self.fail(f"malformed node: {exc}", start) from None

    def net_ref(self, raw: bytes) -> int:
        """Net index of an item's ``(net …)`` value: a code (KiCad ≤ 9) or a name (KiCad 10)."""
        got = self._net_cache.get(raw)
        if got is None:
            got = self._net_cache[raw] = self._net_ref(raw)
        return got

    def _net_ref(self, raw: bytes) -> int:
        raw = raw.strip()
        if not raw:
            return 0
        if raw[:1] == b'"':
            end = raw.find(b'"', 1)
            while end > 0 and raw[end - 1 : end] == b"\\":
                end = raw.find(b'"', end + 1)
            return self.net_of_name(unquote(raw[: end + 1] if end > 0 else raw))
        token = raw.split(None, 1)[0]
        try:
            code = int(token)
        except ValueError:
            return self.net_of_name(unquote(token))
        idx = self.net_by_code.get(code)
        if idx is None:
            self.warn(f"items refer to net code {code}, which the net table does not list")
            parts = raw.split(None, 1)
            name = unquote(parts[1].strip()) if len(parts) > 1 else f"<net {code}>"
            idx = self.net_of_name(name)
            self.net_by_code[code] = idx
        return idx

    def net_of_name(self, name: str) -> int:
        idx = self.net_by_name.get(name)
        if idx is None:
            idx = len(self.net_names)
            self.net_names.append(name)
            self.net_by_name[name] = idx
        return idx

    def layer_indexes(self, raw: bytes) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """Copper stack indexes and all names of a ``(layers …)`` value (cached: thousands of
        pads share a handful of layer lists)."""
        got = self._layer_cache.get(raw)
        if got is None:
            got = self._layer_cache[raw] = self._layer_indexes(raw)
        return got

    def _layer_indexes(self, raw: bytes) -> tuple[tuple[int, ...], tuple[str, ...]]:
        names = tuple(
            unquote(b'"' + q + b'"') if q or not bare else bare.decode("utf-8", "replace")
            for q, bare in _NAMES.findall(raw)
        )
        n = len(self.copper)
        out: set[int] = set()
        for name in names:
            if name == "*.Cu":
                out.update(range(n))
            elif name == "F&B.Cu":
                out.update((0, n - 1))
            else:
                idx = self.copper.get(name)
                if idx is not None:
                    out.add(idx)
        return tuple(sorted(out)), names

    # -- main -----------------------------------------------------------------------------

    def run(self, project_path: str | None, expected_project: str | None) -> Board:
        data = self.data
        idx = self.index
        arrays = self._top_level()
        # Python (start, end) tuples only for the node kinds read one by one; a tuple costs
        # ~130 bytes, so a 1 GB file of gr_line nodes cost 6.7 GB when every kind had them
        by_kw: dict[bytes, list[tuple[int, int]]] = {
            kw: [(a, b) for a, b in spans.tolist()] if kw in _LISTED else []
            for kw, spans in arrays.items()
        }
        edge_arrays = {kw: arrays[kw] for kw in _EDGE_GR if kw in arrays}
        unknown: set[str] = set()
        for kw in by_kw:
            name = kw.decode("utf-8", "replace")
            if name not in KNOWN_TOP_LEVEL:
                unknown.add(name)

        version = self._version(by_kw)
        if unknown:
            self.warn(
                "ignored unknown top-level node(s): "
                + ", ".join(sorted(unknown))
                + " (written by a newer KiCad?)"
            )
        generator = None
        for s, e in by_kw.get(b"generator", [])[:1]:
            node = self.node(s, e)
            generator = str(node[1]) if isinstance(node, list) and len(node) > 1 else None

        copper_layers = self._layers(by_kw)
        thickness = None
        for s, e in by_kw.get(b"general", [])[:1]:
            for key, val in _SIMPLE.findall(data, s, e):
                if key == b"thickness":
                    raw = val.split()[0].decode(errors="replace") if val.split() else None
                    thickness = _float(raw) if raw is not None else None
                    if raw is not None and (thickness is None or thickness <= 0):
                        self.warn(
                            f"board thickness {raw!r} (general) is not a positive number; "
                            "treated as not declared"
                        )
                        thickness = None
        stackup = None
        for s, e in by_kw.get(b"setup", [])[:1]:
            for cs, ce in idx.children(3, s, e).tolist():
                if data.startswith(b"(stackup", cs):
                    stackup = stackup_from_sexpr(self.node(cs, ce), self.warn)
                    if stackup is not None:
                        self._check_stackup_copper(stackup, copper_layers, cs, ce)
        self._nets(by_kw)
        fp_spans = by_kw.get(b"footprint", [])

        def fp_prepare() -> list[dict[bytes, list[tuple[int, int]]]]:
            kids = self._footprint_children(fp_spans)
            self._pad_prepass([span for k in kids for span in k.get(b"pad", ())])
            return kids

        # the footprints' children and pad fields are found in numpy from the index alone
        # (nothing the tracks, vias or zones change): on a thread of their own while those are
        # read here, when two CPUs are there
        fp_job = Background(fp_prepare, "read footprints") if fp_spans and workers() >= 2 else None
        none = np.zeros((0, 2), dtype=np.int64)
        tracks = self._tracks(arrays.get(b"segment", none), arrays.get(b"arc", none))
        vias = self._vias(arrays.get(b"via", none))
        del arrays
        zones = tuple(self._zone(s, e) for s, e in by_kw.get(b"zone", []))
        edge_pieces: list[tuple[list[tuple[float, float]], bool]] = []
        bbox_pts: list[tuple[int, int]] = []
        fp_kids = fp_job.result() if fp_job is not None else fp_prepare()
        footprints = tuple(
            self._footprint(s, e, kids, edge_pieces, bbox_pts)
            for (s, e), kids in zip(fp_spans, fp_kids)
        )
        self._pad_rows = {}
        for s, e in self._graphics_with(edge_arrays, b"Edge.Cuts"):
            self._edge_shape(s, e, IDENTITY, edge_pieces, bbox_pts)
        copper_shapes = tuple(
            shape
            for s, e in self._graphics_with(edge_arrays, b'.Cu"')
            for shape in self._copper_shape(s, e)
        )
        del edge_arrays
        outline = self._outline(edge_pieces, bbox_pts)
        self._refuse_non_finite(tracks, vias, zones, footprints, outline)

        project: ProjectInfo | None = None
        if project_path:
            project = with_design_rules(read_project(project_path))
        else:
            where = f" ({os.path.basename(expected_project)})" if expected_project else ""
            self.warn(
                f"no .kicad_pro beside the board{where}: net classes, text variables and "
                "design-rule settings are unknown"
            )
        return Board(
            source=self.source,
            format="kicad_pcb",
            copper_layers=copper_layers,
            stackup=stackup,
            board_thickness_mm=thickness
            if thickness is not None
            else (stackup.thickness_mm if stackup else None),
            outline=outline,
            nets=tuple(self.net_names),
            net_classes=project.net_classes if project else NetClassRules(),
            tracks=tracks,
            vias=vias,
            zones=zones,
            footprints=footprints,
            copper_shapes=copper_shapes,
            text_variables=dict(project.text_variables) if project else {},
            design=project.design if project else DesignSettings(),
            file_version=version,
            generator=generator,
            project_file=project.path if project else None,
            warnings=tuple(self.warnings),
        )

    def _check_stackup_copper(
        self, stackup: Stackup, copper: Sequence[CopperLayer], s: int, e: int
    ) -> None:
        """The stack-up's copper layers must be the layer table's: every check indexes one by
        the other (a copper layer missing from the table was an IndexError deep in a check)."""
        names = {c.name for c in copper}
        rows = [sl for sl in stackup.layers if sl.copper_index is not None]
        for sl in rows:
            if sl.name not in names:
                at = self.data.find(b'"' + sl.name.encode("utf-8", "replace") + b'"', s, e)
                raise InputError(
                    self.source,
                    f"stack-up copper layer {sl.name!r} is not in the layer table "
                    f"(copper layers: {', '.join(c.name for c in copper)})",
                    line=line_of(self.data, at if at >= 0 else s),
                )
        if len(rows) != len(copper):
            raise InputError(
                self.source,
                f"the stack-up has {len(rows)} copper layers, the layer table {len(copper)}",
                line=line_of(self.data, s),
            )

    def _refuse_non_finite(
        self,
        tracks: Tracks,
        vias: Vias,
        zones: Sequence[Zone],
        footprints: Sequence[Footprint],
        outline: Outline,
    ) -> None:
        """Refuse a board with a NaN or infinite coordinate or size (``(at nan 5)``): it
        compares false with every limit, and crashed the reports.  One vectorised pass over the
        arrays; the file is searched for the bad token only when there is one."""
        arrays = [tracks.start, tracks.end, tracks.width, vias.pos, vias.drill, vias.diameter]
        arrays += [z.outline for z in zones] + list(outline.rings)
        mid = tracks.mid
        ok = all(bool(np.isfinite(a).all()) for a in arrays)
        # a segment's mid is NaN by design; an arc's must be a number, and never infinite
        ok = ok and not np.isinf(mid).any()
        if ok:
            # x * 0 is 0 for every finite x and NaN for NaN or ±inf: one sum says it (cheaper
            # than building an array of them)
            zero = sum(fp.x * 0 + fp.y * 0 + fp.rotation * 0 for fp in footprints)
            zero += sum(
                p.x * 0 + p.y * 0 + p.width * 0 + p.height * 0 for fp in footprints for p in fp.pads
            )
            ok = zero == 0
        if not ok:
            raise non_finite_error(self.data, self.source)

    # -- header ------------------------------------------------------------------------------

    def _version(self, by_kw: dict[bytes, list[tuple[int, int]]]) -> int:
        spans = by_kw.get(b"version")
        if not spans:
            raise InputError(
                self.source, "no (version …) in the board header: not a KiCad 6+ board"
            )
        s, e = spans[0]
        m = re.match(rb"\(version\s+(\d+)\s*\)", self.data[s:e])
        if not m:
            raise self.fail("malformed (version …)", s)
        version = int(m.group(1))
        if version < MIN_VERSION:
            era = "KiCad 5" if version <= 20171130 else "a KiCad 6 pre-release"
            raise InputError(
                self.source,
                f"board format version {version} ({era}) is not supported: "
                "open and save it in KiCad 6 or newer",
                line=line_of(self.data, s),
            )
        if version > MAX_KNOWN_VERSION:
            self.warn(
                f"board format version {version} is newer than the newest this reader knows "
                f"({MAX_KNOWN_VERSION}, KiCad 10): reading what it recognises"
            )
        return version

    def _layers(self, by_kw: dict[bytes, list[tuple[int, int]]]) -> tuple[CopperLayer, ...]:
        spans = by_kw.get(b"layers")
        if not spans:
            raise InputError(self.source, "no (layers …) table in the board header")
        node = self.node(*spans[0])
        found: list[tuple[int, str, str, str]] = []
        for entry in node[1:] if isinstance(node, list) else []:
            if not isinstance(entry, list) or len(entry) < 3:
                continue
            name = str(entry[1])
            m = _COPPER_NAME.match(name)
            if not m:
                continue
            order = 0 if m.group(1) == "F" else (10_000 if m.group(1) == "B" else int(m.group(2)))
            kind = str(entry[2])
            if kind not in COPPER_LAYER_TYPES:
                kind = "signal"
            user = str(entry[3]) if len(entry) > 3 and isinstance(entry[3], str) else name
            found.append((order, name, user, kind))
        if not found:
            raise InputError(self.source, "the layer table has no copper layers")
        found.sort()
        n = len(found)
        layers = []
        for i, (_order, name, user, kind) in enumerate(found):
            canonical = "F.Cu" if i == 0 else ("B.Cu" if i == n - 1 else f"In{i}.Cu")
            if name != canonical:
                self.warn(f"copper layer {name} is stack position {i} ({canonical})")
            layers.append(CopperLayer(index=i, name=name, user_name=user, kind=kind))
            self.copper[name] = i
        return tuple(layers)

    def _nets(self, by_kw: dict[bytes, list[tuple[int, int]]]) -> None:
        data = self.data
        pat = re.compile(rb"\(net\s+(-?\d+)\s*(" + _STR + rb"|[^\s()\"]*)\s*\)")
        for s, e in by_kw.get(b"net", []):
            m = pat.match(data, s, e)
            if not m:
                raise self.fail("malformed (net …) entry", s)
            code = int(m.group(1))
            name = unquote(m.group(2)) if m.group(2) else ""
            if code == 0:
                self.net_by_code[0] = 0
                continue
            idx = len(self.net_names)
            self.net_names.append(name)
            self.net_by_code[code] = idx
            self.net_by_name.setdefault(name, idx)

    # -- top-level nodes -----------------------------------------------------------------------

    def _top_level(self) -> dict[bytes, np.ndarray]:
        """Spans of the top-level nodes by keyword, as (n, 2) int64 arrays in file order.

        A big board has millions of top-level nodes (1.9 M on a 279 MB board); a Python tuple
        per node would cost more memory than the index.  Consecutive nodes whose first 8 bytes
        after the ``(`` are equal have the same keyword when the keyword ends inside them
        (``segment``, ``via``, ``arc``, ``net`` …; KiCad writes them in long runs), so the
        keyword regex runs once per run, not once per node; longer keywords (``footprint``,
        ``gr_circle``: a few thousand nodes at most) are matched node by node.
        """
        data = self.data
        top = self.index.children(2)
        n = top.shape[0]
        out: dict[bytes, np.ndarray] = {}
        if not n:
            return out
        starts = top[:, 0]
        u64 = u64_view(data)
        change = np.ones(n, dtype=bool)
        if u64.size:
            lim = u64.size - 1
            safe = starts + 1 <= lim
            k = u64[np.minimum(starts + 1, lim)]
            change[1:] = k[1:] != k[:-1]
            del k
            change |= ~safe
            change[1:] |= ~safe[:-1]
        run_starts = np.flatnonzero(change)
        del change
        run_ends = np.append(run_starts[1:], n)
        label = np.empty(n, dtype=np.int32)
        kws: dict[bytes, int] = {}
        for r0, r1 in zip(run_starts.tolist(), run_ends.tolist()):
            s0 = int(starts[r0])
            m = NODE_KEYWORD.match(data, s0)
            if not m:
                raise self.fail("malformed node: no keyword after '('", s0)
            if m.end() - s0 <= 8:
                label[r0:r1] = kws.setdefault(m.group(1), len(kws))
                continue
            label[r0] = kws.setdefault(m.group(1), len(kws))
            for i in range(r0 + 1, r1):  # a keyword longer than the compared prefix
                si = int(starts[i])
                mi = NODE_KEYWORD.match(data, si)
                if not mi:
                    raise self.fail("malformed node: no keyword after '('", si)
                label[i] = kws.setdefault(mi.group(1), len(kws))
        for kw, k in kws.items():
            out[kw] = top[label == k]
        return out

    # -- point lists -------------------------------------------------------------------------

    def _points(self, s: int, e: int) -> np.ndarray:
        return points_of(self.data, s, e, self.source)

    # -- footprints and pads ---------------------------------------------------------------------

    def _footprint_children(
        self, fp_spans: list[tuple[int, int]]
    ) -> list[dict[bytes, list[tuple[int, int]]]]:
        """The interesting direct children of every footprint, classified in numpy.

        A footprint's children are mostly graphics (``fp_line`` …, 26 k on vme-wren) that the
        checks never need; looking at each one in Python would cost more than the rest of the
        board.  Instead every level-3 node inside a footprint is classified by its first bytes
        with vectorised comparisons, and only pads, placement fields and Edge.Cuts shapes are
        handed to Python.
        """
        data = self.data
        out: list[dict[bytes, list[tuple[int, int]]]] = [{} for _ in fp_spans]
        if not fp_spans:
            return out
        fps = np.asarray(fp_spans, dtype=np.int64)
        kids = self.index.children(3, int(fps[0, 0]), int(fps[:, 1].max()))
        parent = np.searchsorted(fps[:, 0], kids[:, 0], side="right") - 1
        ok = parent >= 0
        ok[ok] &= kids[ok, 0] < fps[parent[ok], 1]
        kids, parent = kids[ok], parent[ok]
        arr = np.frombuffer(data, dtype=np.uint8)
        pos = kids[:, 0] + 1
        last = arr.size - 1

        def begins(word: bytes) -> np.ndarray:
            m = np.ones(pos.size, dtype=bool)
            for i, ch in enumerate(word):
                m &= arr[np.minimum(pos + i, last)] == ch
            nxt = arr[np.minimum(pos + len(word), last)]
            return m & ((nxt == 32) | (nxt == 9) | (nxt == 10) | (nxt == 13) | (nxt == 41))

        wanted = [b"pad", b"at", b"layer", b"attr", b"uuid", b"tstamp", b"fp_text"]
        for word in wanted:
            for k in np.flatnonzero(begins(word)).tolist():
                out[parent[k]].setdefault(word, []).append((int(kids[k, 0]), int(kids[k, 1])))
        # Edge.Cuts footprint shapes: find the layer name's occurrences, keep those inside an
        # fp_* child (there are few), instead of opening every graphic item
        edge_hits: set[int] = set()
        at = data.find(b"Edge.Cuts", fps[0, 0], fps[-1, 1])
        while at >= 0:
            k = int(np.searchsorted(kids[:, 0], at, side="right")) - 1
            if k >= 0 and at < kids[k, 1]:
                edge_hits.add(k)
            at = data.find(b"Edge.Cuts", at + 9, fps[-1, 1])
        for k in sorted(edge_hits):
            m = NODE_KEYWORD.match(data, int(kids[k, 0]))
            if m and m.group(1) in _EDGE_FP:
                out[parent[k]].setdefault(b"edge", []).append((int(kids[k, 0]), int(kids[k, 1])))
        return out

    def _footprint(
        self,
        s: int,
        e: int,
        kids: dict[bytes, list[tuple[int, int]]],
        edge_pieces: list[tuple[list[tuple[float, float]], bool]],
        bbox_pts: list[tuple[int, int]],
    ) -> Footprint:
        data = self.data
        head = _FP_HEAD.match(data, s, e)
        lib_id = unquote(head.group(1)) if head else ""
        x = y = rot = 0.0
        layer = "F.Cu"
        attrs: tuple[str, ...] = ()
        ref = value = None
        uuid = ""
        props = LazyProps(data, s, e)
        for cs, ce in kids.get(b"fp_text", ()):
            tm = _FP_TEXT.match(data, cs, ce)
            if tm:
                if tm.group(1) == b"reference":
                    ref = unquote(tm.group(2))
                else:
                    value = unquote(tm.group(2))
        for cs, ce in kids.get(b"at", ())[:1]:
            parts = data[cs + 3 : ce - 1].split()
            x, y = float(parts[0]), float(parts[1])
            rot = float(parts[2]) if len(parts) > 2 and parts[2] != b"locked" else 0.0
        for cs, ce in kids.get(b"layer", ())[:1]:
            layer = unquote(data[cs + 6 : ce - 1].strip())
        for cs, ce in kids.get(b"attr", ())[:1]:
            attrs = tuple(t.decode("utf-8", "replace") for t in data[cs + 5 : ce - 1].split())
        for cs, ce in (kids.get(b"uuid") or kids.get(b"tstamp") or [])[:1]:
            uuid = unquote(data[cs : ce - 1].split(None, 1)[1].strip())
        t = Transform(x, y, rot)
        pads = tuple(self._pad(ps, pe, t) for ps, pe in kids.get(b"pad", ()))
        for es, ee in kids.get(b"edge", ()):
            self._edge_shape(es, ee, t, edge_pieces, bbox_pts)
        if ref is None:
            ref = find_property(data, s, e, b"Reference")
        if value is None:
            value = find_property(data, s, e, b"Value")
        return Footprint(
            reference=ref,
            value=value,
            name=lib_id,
            layer=layer,
            x=x,
            y=y,
            rotation=rot,
            attributes=attrs,
            pads=pads,
            uuid=uuid,
            properties=props,
        )

    def _geometry(self, node: list, at: int, in_pad: bool) -> Any:
        """:func:`graphic_geometry` of a parsed graphic; a coordinate or width that is not a
        finite number is a bad-input error at the node's line, not a geometry library's."""
        try:
            return graphic_geometry(node, in_pad=in_pad)
        except ValueError as exc:
            raise self.fail(f"({node[0]} …): {exc}", at) from None

    # -- outline -------------------------------------------------------------------------------

    def _graphics_with(
        self, arrays: dict[bytes, np.ndarray], marker: bytes
    ) -> list[tuple[int, int]]:
        """Spans of the board-level graphic nodes (``arrays``: spans per ``gr_*`` keyword) whose
        text holds ``marker`` (``Edge.Cuts``; ``.Cu"`` for a copper layer).  Only the bytes
        between the first and the last graphic node are searched (KiCad writes them together,
        so this is a small part of the file): few matches on any real board."""
        present = [a for a in arrays.values() if len(a)]
        if not present:
            return []
        data = self.data
        lo = min(int(a[0, 0]) for a in present)
        hi = max(int(a[-1, 1]) for a in present)
        at = []
        i = data.find(marker, lo, hi)
        while i >= 0:
            at.append(i)
            i = data.find(marker, i + len(marker), hi)
        if not at:
            return []
        where = np.asarray(at, dtype=np.int64)
        out: list[tuple[int, int]] = []
        for kw in _EDGE_GR:
            spans = arrays.get(kw)
            if spans is None or not len(spans):
                continue
            row = np.searchsorted(spans[:, 0], where, side="right") - 1
            ok = row >= 0
            row = row[ok]
            row = unique(row[where[ok] < spans[row, 1]])  # (no numpy.ma import)
            out.extend((int(s), int(e)) for s, e in spans[row].tolist())
        return out

    def _copper_shape(self, s: int, e: int) -> list[CopperShape]:
        """The copper of a board-level graphic on a copper layer (:func:`graphic_geometry`),
        one :class:`CopperShape` per piece; [] when the node is on no copper layer or has no
        area."""
        node = self.node(s, e)
        if not isinstance(node, list) or not node:
            return []
        layer = next(
            (str(p[1]) for p in node[1:] if isinstance(p, list) and len(p) > 1 and p[0] == "layer"),
            "",
        )
        li = self.copper.get(layer)
        if li is None:
            return []
        geom = self._geometry(node, s, in_pad=False)
        if geom is None:
            return []
        nm = _NET_FIELD.search(self.data, s, e)
        net = self.net_ref(nm.group(1)) if nm else 0
        um = _UUID_FIELD.search(self.data, s, e)
        uuid = unquote(um.group(2).strip()) if um else ""
        return [
            CopperShape(
                layer=li,
                net=net,
                rings=(np.asarray(p.exterior.coords, float),)
                + tuple(np.asarray(h.coords, float) for h in p.interiors),
                uuid=uuid,
            )
            for p in getattr(geom, "geoms", (geom,))
            if p.area > 0
        ]

    def _edge_shape(
        self,
        s: int,
        e: int,
        t: Transform,
        pieces: list[tuple[list[tuple[float, float]], bool]],
        bbox_pts: list[tuple[int, int]],
    ) -> None:
        node = self.node(s, e)
        if not isinstance(node, list) or not node:
            return
        kind, local, width, _fill, _ring, layer = graphic_fields(node)
        if layer != "Edge.Cuts":
            return
        # geometry for the rings in float mm; the bounding box in integer nm the way KiCad
        # places footprint items (local nm, RotatePoint, + position) so sizes match pcbnew
        pts = {k: t.apply(*v) for k, v in local.items()}
        place = (to_nm(t.x), to_nm(t.y), t.deg)

        def nm_placed(p: tuple[float, float]) -> tuple[int, int]:
            x, y = rotate_nm(to_nm(p[0]), to_nm(p[1]), place[2])
            return x + place[0], y + place[1]

        half = max(0, to_nm(width)) // 2
        shape_pts: list[tuple[int, int]] = []
        if kind == "line" and {"start", "end"} <= pts.keys():
            pieces.append(([pts["start"], pts["end"]], False))
            shape_pts = [nm_placed(local["start"]), nm_placed(local["end"])]
        elif kind == "arc" and {"start", "mid", "end"} <= pts.keys():
            pieces.append((arc_points(pts["start"], pts["mid"], pts["end"]), False))
            sl, ml, el = ((to_nm(local[k][0]), to_nm(local[k][1])) for k in ("start", "mid", "end"))
            shape_pts = arc_bbox_nm(sl, ml, el, place)
        elif kind == "circle" and {"center", "end"} <= pts.keys():
            c = pts["center"]
            cx, cy = nm_placed(local["center"])
            ex, ey = nm_placed(local["end"])
            r = max(1, kiround(math.hypot(ex - cx, ey - cy)))
            pieces.append((circle_points(c, r / 1e6), True))
            shape_pts = [(cx - r, cy - r), (cx + r, cy + r)]
        elif kind == "rect" and {"start", "end"} <= pts.keys():
            # corners in footprint space, then placed (a rotated footprint rotates the rect)
            a, b = local["start"], local["end"]
            corners_local = [(a[0], a[1]), (b[0], a[1]), (b[0], b[1]), (a[0], b[1])]
            corners = [t.apply(*p) for p in corners_local]
            pieces.append((corners + [corners[0]], True))
            shape_pts = [nm_placed(p) for p in corners_local]
        elif kind in ("poly", "curve"):
            m = _PTS.search(self.data, s, e)
            if m:
                pe = find_balanced(self.data, m.start())
                arr = self._points(m.start(), pe)
                if kind == "poly" and len(arr):
                    ring_local = [(float(x), float(y)) for x, y in arr.tolist()]
                    ring = [t.apply(*p) for p in ring_local]
                    pieces.append((ring + [ring[0]], True))
                    shape_pts = [nm_placed(p) for p in ring_local]
                elif kind == "curve" and len(arr) >= 4:
                    curve_local = bezier_points([(float(x), float(y)) for x, y in arr.tolist()])
                    pieces.append(([t.apply(*p) for p in curve_local], False))
                    shape_pts = [nm_placed(p) for p in curve_local]
        if shape_pts:
            xs = [p[0] for p in shape_pts]
            ys = [p[1] for p in shape_pts]
            bbox_pts.append((min(xs) - half, min(ys) - half))
            bbox_pts.append((max(xs) + half, max(ys) + half))

    @staticmethod
    def _outline(
        pieces: list[tuple[list[tuple[float, float]], bool]], bbox_pts: Iterable[tuple[int, int]]
    ) -> Outline:
        pts = list(bbox_pts)
        if not pts:
            return Outline()
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        bbox = (min(xs) / 1e6, min(ys) / 1e6, max(xs) / 1e6, max(ys) / 1e6)
        return Outline(rings=outline_rings(pieces), bbox=bbox)
