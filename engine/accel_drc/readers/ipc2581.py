"""IPC-2581 (revision B and C) reader: boards from any EDA tool into the same :class:`Board`.

Altium, Allegro, Xpedition, PADS and KiCad (``kicad-cli pcb export ipc2581``) all write
IPC-2581, so one reader lets accel-drc check boards it has no native parser for.  What it reads:

* the stack-up: ``Ecad/CadData/Stackup/StackupGroup/StackupLayer`` (thickness, sequence) joined to
  the ``Ecad/CadHeader/Spec`` each layer refers to (``Dielectric`` DIELECTRIC_CONSTANT and
  LOSS_TANGENT, ``General`` MATERIAL, ``Conductor`` SURFACE_ROUGHNESS_* → foil grade) and to the
  ``CadData/Layer`` declarations (layerFunction CONDUCTOR/PLANE/SIGNAL/MIXED, DIELCORE/DIELPREG …);
* ``Backdrill`` specs (START_LAYER, MUST_NOT_CUT_LAYER, MAX_STUB_LENGTH) attached to vias, either
  by a backdrill drill layer whose holes sit on the vias, or by a ``SpecRef`` on the via's own set;
* nets, tracks and arcs per copper layer (``Line``/``Arc``/``Polyline`` with widths from the
  ``DictionaryLineDesc``), zone fills (``Contour``), vias with their spans (drill layers with a
  ``Span``, or ``PadStack``/``LayerHole``/``Span``), components with their pins and pads, the board
  outline (``Profile``), in MILLIMETER, MICRON or INCH, all converted to mm with y pointing down.

Why streaming: a training baseboard exports to hundreds of MB of XML.  The file is fed in 1 MiB
chunks to an ``XMLPullParser`` and each self-contained unit (a ``Set``, a ``Package``, a ``Spec`` …)
is handled at its end tag and cleared, so memory tracks the largest unit, not the file.

Why no DTD: IPC-2581 never needs one, and a DTD is how XML bombs (billion laughs) and external
entities (file or network reads) get in.  A file with ``<!DOCTYPE`` or ``<!ENTITY`` is refused
before the parser sees it; expat never fetches anything.
"""

from __future__ import annotations

import logging
import math
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from xml.parsers import expat

import numpy as np

from ..errors import InputError
from ..geometry import arc_from_centre, bridge_holes, centre_arc_points, circle_points
from ..hostile import (
    MAX_XML_BYTES,
    MAX_XML_DEPTH,
    MAX_XML_TAGS,
    MAX_XML_TOKEN,
    MAX_ZIP_RATIO,
    open_regular,
    over_limit,
    unzip_limit,
)
from ..model import (
    Backdrill,
    Board,
    CopperLayer,
    DesignSettings,
    DielectricSublayer,
    Footprint,
    NetClassRules,
    Outline,
    Pad,
    Stackup,
    StackupLayer,
    Tracks,
    ViaProtection,
    Vias,
    Zone,
    copper_layer_name,
)

log = logging.getLogger(__name__)

#: length units of the standard (``unitsType``) -> mm
UNITS_MM = {"MILLIMETER": 1.0, "MICRON": 0.001, "INCH": 25.4}
#: ``propertyUnitType`` length units -> µm (for roughness and stub lengths)
PROPERTY_UNITS_UM = {"MICRON": 1.0, "MM": 1000.0, "MILLIMETER": 1000.0, "INCH": 25400.0}

CHUNK = 1 << 20
#: prolog constructs that open the door to entity expansion or external reads
FORBIDDEN = (b"<!DOCTYPE", b"<!ENTITY", b"<!ELEMENT", b"<!ATTLIST")

COPPER_FUNCTIONS = {
    "CONDUCTOR": "signal",
    "SIGNAL": "signal",
    "CONDFOIL": "signal",
    "CONDFILM": "signal",
    "PLANE": "power",
    "MIXED": "mixed",
}
DIELECTRIC_FUNCTIONS = {
    "DIELCORE": "core",
    "DIELPREG": "prepreg",
    "DIELBASE": "dielectric",
    "DIELADHV": "dielectric",
    "DIELECTRIC": "dielectric",
    "CAPACITIVE_DIELECTRIC": "dielectric",
    "RESISTIVE": "dielectric",
}
OTHER_STACKUP_FUNCTIONS = {
    "SOLDERMASK": "soldermask",
    "COVERLAY": "soldermask",
    "COVERCOAT": "soldermask",
    "SILKSCREEN": "silkscreen",
    "LEGEND": "silkscreen",
    "SOLDERPASTE": "solderpaste",
    "PASTEMASK": "solderpaste",
}
DRILL_FUNCTIONS = ("DRILL", "BACKDRILL")
#: IPC-4761 via protection as layers (KiCad 10's ``generateAuxilliaryLayers``): a via pad on a
#: HOLEFILL layer with a Span is filled, on a COATINGCOND layer with a Span capped, and (KiCad)
#: on a HOLEFILL layer of one side plugged from that side.  KiCad writes tenting and covering
#: both as COATINGNONCOND of a side, so those two cannot be told apart and are not read.
PROTECTION_FUNCTIONS = ("HOLEFILL", "COATINGCOND")
#: what an IPC-2581 file does not carry (``Board.not_carried``): KiCad's exporter writes a
#: ``Pin`` with its number, type and electrical type, never the schematic pin name (KiCad 9.0.8
#: and 10.0.7), and a via's protection only where the via has it
NOT_CARRIED = ("pin_names", "unprotected_vias")

#: Foil grades by the largest Rz (µm) they allow, smoothest first: the upper ends of the
#: ``rz_um`` ranges in ``rules/foils.yaml`` (IPC-4562 profiles, foil makers' tables).  Used only when the pack cannot be
#: loaded; :func:`foil_thresholds` reads the pack.  Rz above 10 µm is still STD (the roughest).
DEFAULT_FOIL_RZ_MAX: tuple[tuple[str, float], ...] = (
    ("HVLP4", 0.6),
    ("HVLP3", 1.0),
    ("HVLP2", 1.5),
    ("HVLP", 3.0),
    ("VLP", 4.0),
    ("RTF", 4.0),
    ("STD", 10.0),
)
FOIL_NAMES = ("HVLP4", "HVLP3", "HVLP2", "HVLP1", "HVLP", "VLP", "RTF", "HTE", "STD")

_KICAD_DIELECTRIC = re.compile(r"DIELECTRIC_(\d+)\Z")
_KICAD_UNNUMBERED = re.compile(r"(?:PAD|NPTH)\d+")
#: KiCad's solder-mask permittivity when the board declares none (``DEFAULT_EPSILON_R_SOLDERMASK``
#: in stackup_predefined_prms.h).  The board file writes a mask's epsilon_r only with a material
#: (``FormatBoardStackup``), but KiCad 10's exporter writes every mask's epsilon_r above 1 and
#: never its material, so 3.3 with no loss tangent is this default, not a declaration.
_KICAD_MASK_DEFAULT_DK = 3.3

#: what KiCad's exporter writes as the material of a layer whose stack-up entry has none
_KICAD_PLACEHOLDER_MATERIALS = frozenset({"COPPER", "SOLDERMASK"})
#: KiCad's exporter writes user-visible names ("F.Silkscreen", or a renamed "Top Overlay"); its
#: stack-up names these layers canonically, by kind and side
_KICAD_STACKUP_NAMES = {
    ("silkscreen", "TOP"): "F.SilkS",
    ("silkscreen", "BOTTOM"): "B.SilkS",
    ("solderpaste", "TOP"): "F.Paste",
    ("solderpaste", "BOTTOM"): "B.Paste",
    ("soldermask", "TOP"): "F.Mask",
    ("soldermask", "BOTTOM"): "B.Mask",
}


def _kicad_stackup_name(kind: str, side: str) -> str | None:
    return _KICAD_STACKUP_NAMES.get((kind, side))


class _Node:
    """A parsed element of one unit (tag without namespace, attributes, children, line)."""

    __slots__ = ("tag", "attrib", "children", "line")

    def __init__(self, tag: str, attrib: dict[str, str], line: int) -> None:
        self.tag = tag
        self.attrib = attrib
        self.children: list[Any] = []  # _Node, or a bare attribute dict (PolyStepSegment)
        self.line = line

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.attrib.get(key, default)

    def __iter__(self) -> Iterator[_Node]:
        """Child elements (bare PolyStepSegment attribute dicts are left out: see _ring)."""
        return (c for c in self.children if type(c) is _Node)

    def iter(self) -> Iterator[_Node]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if type(c) is _Node)


# ---------------------------------------------------------------------------------------------
# Small records kept while streaming
# ---------------------------------------------------------------------------------------------


@dataclass
class _Shape:
    """A standard primitive resolved to what a pad needs (mm)."""

    shape: str
    width: float
    height: float


@dataclass
class _LayerDecl:
    name: str
    function: str
    side: str
    span: tuple[str, str] | None = None
    spec_refs: list[str] = field(default_factory=list)


@dataclass
class _StackRow:
    ref: str
    thickness_mm: float | None
    sequence: float
    group: int
    spec_refs: list[str]


@dataclass
class _Spec:
    materials: list[str] = field(default_factory=list)
    dk: float | None = None
    df: float | None = None
    roughness_um: dict[str, float] = field(default_factory=dict)  # UPFACING/DOWNFACING/TREATED
    roughness_note: str | None = None
    foil_text: str | None = None
    backdrill: dict[str, Any] = field(default_factory=dict)
    finish: str | None = None


@dataclass
class _PadstackDef:
    hole_mm: float | None = None
    plating: str | None = None
    pads: dict[str, _Shape] = field(default_factory=dict)  # layer -> shape


@dataclass
class _Pin:
    number: str
    x: float
    y: float
    kind: str  # THRU | SURFACE | BLIND
    shape: _Shape | None
    rotation: float


@dataclass
class _PadAcc:
    """One footprint pad assembled from its appearances on copper layers."""

    comp: str
    number: str
    x: float
    y: float
    net: int = 0
    shape: _Shape | None = None
    rotation: float = 0.0
    padstack: str | None = None
    layers: set[int] = field(default_factory=set)
    layer_names: set[str] = field(default_factory=set)
    #: shapes seen per layer: two pads with one number stacked on one spot are two pads
    per_layer: dict[int, list[_Shape | None]] = field(default_factory=dict)
    #: the file's name of each copper layer the pad is on
    names: dict[int, str] = field(default_factory=dict)


@dataclass
class _ViaRow:
    x: float
    y: float
    drill: float
    diameter: float | None
    start: int
    end: int
    net: int
    name: str
    padstack: str | None
    spec: str | None = None


@dataclass
class _Bore:
    x: float
    y: float
    drill: float
    span: tuple[int, int] | None
    spec: str | None
    layer: str


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _finite_float(raw: str) -> float:
    """``float(raw)``, refusing NaN and infinity (ValueError): a NaN Df or thickness compares
    false with every limit and would turn a failure into a pass."""
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not finite")
    return value


def read(path: str) -> Board:
    """Read an IPC-2581 revision B or C file (``.xml`` / ``.cvg``, or the zip that
    ``kicad-cli pcb export ipc2581 --compress`` writes) into a :class:`Board`."""
    reader = _Reader(path)
    with _open(path) as fh:
        if fh.read(4) == b"PK\x03\x04":
            fh.seek(0)
            reader.parse(_zip_chunks(fh, path))
        else:
            fh.seek(0)
            reader.parse(_chunks(fh, path))
    return reader.board()


def _zip_chunks(fh: Any, path: str) -> Iterator[bytes]:
    """The one XML document inside a zip, streamed (never unpacked whole)."""
    import zipfile

    try:
        zf = zipfile.ZipFile(fh)
        members = [i for i in zf.infolist() if not i.is_dir()]
        xml = [i for i in members if i.filename.lower().endswith((".xml", ".cvg"))]
        if len(xml) != 1 and len(members) != 1:
            raise InputError(path, f"zip holds {len(members)} files, none or several of them XML")
        info = xml[0] if len(xml) == 1 else members[0]
        if info.flag_bits & 0x1:
            raise InputError(path, f"{info.filename} is encrypted in the zip: not supported")
        limit = unzip_limit(info.compress_size)
        if info.file_size > limit:
            raise _unzip_refused(path, info.filename, info.file_size, info.compress_size)
        inner = zf.open(info)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        RuntimeError,  # "is encrypted, password required"
        OSError,
        zlib.error,
    ) as exc:
        raise InputError(path, f"unreadable zip: {exc}") from None

    def raw() -> Iterator[bytes]:
        total = 0
        with inner:
            while True:
                try:
                    chunk = inner.read(CHUNK)
                except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError) as exc:
                    raise InputError(path, f"unreadable zip: {exc}") from None
                if not chunk:
                    return
                total += len(chunk)
                if total > limit:  # the header lied about the size
                    raise _unzip_refused(path, info.filename, total, info.compress_size)
                yield chunk

    return _check_chunks(raw(), path)


def _unzip_refused(path: str, name: str, size: int, compressed: int) -> InputError:
    """A zip member that unpacks to more than :func:`~accel_drc.hostile.unzip_limit` allows."""
    if size > MAX_XML_BYTES:
        return over_limit(path, size, MAX_XML_BYTES)
    return InputError(
        path,
        f"{name} unpacks to {size:,} bytes from {compressed:,}, over the limit of "
        f"{MAX_ZIP_RATIO} times its compressed size (real exports: 10-18 times): a zip bomb?",
    )


def read_bytes(data: bytes, source: str = "<ipc2581>") -> Board:
    """Same as :func:`read` for an in-memory document (tests, fuzzing)."""
    reader = _Reader(source)
    reader.parse(_check_chunks((data[i : i + CHUNK] for i in range(0, len(data), CHUNK)), source))
    return reader.board()


def grade_for_rz(rz_um: float, thresholds: Sequence[tuple[str, float]] | None = None) -> str:
    """The smoothest foil grade whose Rz range reaches up to ``rz_um`` (treated side, µm);
    ``thresholds`` are (grade, max Rz) pairs, smoothest first."""
    for name, limit in thresholds if thresholds is not None else foil_thresholds():
        if rz_um <= limit + 1e-9:
            return name
    return "STD"


def foil_thresholds() -> tuple[tuple[str, float], ...]:
    """(grade, max Rz µm), smoothest first, from the rule pack's ``foils.yaml`` (the grade's
    ``rz_um`` upper bound), else :data:`DEFAULT_FOIL_RZ_MAX`."""
    try:
        from ..packs import RULES_DIR, load_foils

        foils = load_foils(RULES_DIR / "foils.yaml")
    except Exception:  # the pack is another module's file: never let it break reading a board
        log.debug("foils.yaml not usable for Rz thresholds", exc_info=True)
        return DEFAULT_FOIL_RZ_MAX
    rows = [(g.id, float(g.rz_um[1])) for g in sorted(foils.grades, key=lambda g: -g.rank)]
    return tuple(rows) if rows else DEFAULT_FOIL_RZ_MAX


def foil_grade_named(text: str) -> str | None:
    """The grade id a declared name means (``HVLP1`` → ``HVLP``), by the pack's aliases."""
    try:
        from ..packs import RULES_DIR, load_foils

        grade = load_foils(RULES_DIR / "foils.yaml").grade(text)
        return grade.id if grade is not None else None
    except Exception:
        key = re.sub(r"[\s_-]+", "", text).upper()
        return "HVLP" if key == "HVLP1" else key if key in FOIL_NAMES else None


# ---------------------------------------------------------------------------------------------
# Input safety
# ---------------------------------------------------------------------------------------------


class _open:
    """:func:`~accel_drc.hostile.open_regular` as a context manager (errors: :class:`InputError`)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> Any:
        # a regular file of at most MAX_XML_BYTES (zipped or not): never a device or a FIFO
        self.fh = open_regular(self.path, MAX_XML_BYTES)
        return self.fh

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _chunks(fh: Any, path: str) -> Iterator[bytes]:
    def raw() -> Iterator[bytes]:
        while True:
            try:
                chunk = fh.read(CHUNK)
            except OSError as exc:
                raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
            if not chunk:
                return
            yield chunk

    return _check_chunks(raw(), path)


def _check_chunks(chunks: Iterable[bytes], path: str) -> Iterator[bytes]:
    """Pass chunks through, refusing DTDs/entities (also across a chunk boundary), UTF-16, more
    than :data:`~accel_drc.hostile.MAX_XML_BYTES` and more than
    :data:`~accel_drc.hostile.MAX_XML_TAGS` ``<`` (one vectorised count per chunk: 0.5 % of
    reading vme-wren's export; a Python counter per element costs more)."""
    tail = b""
    lines = 0  # newlines before ``probe``
    first = True
    total = tags = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_XML_BYTES:
            raise over_limit(path, total, MAX_XML_BYTES)
        tags += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 0x3C))  # b"<"
        if tags > MAX_XML_TAGS:
            raise InputError(
                path,
                f"more than {MAX_XML_TAGS:,} tags, over the limit (vme-wren's export has "
                "1.65 million): not a board export",
                offset=total,
            )
        if first:
            first = False
            if chunk[:2] in (b"\xff\xfe", b"\xfe\xff") or chunk[:4] in (
                b"\x00<\x00?",
                b"<\x00?\x00",
            ):
                raise InputError(path, "UTF-16 IPC-2581 files are not supported; export as UTF-8")
        probe = tail + chunk
        for bad in FORBIDDEN:
            at = probe.find(bad)
            if at >= 0:
                raise InputError(
                    path,
                    f"refusing XML with a {bad[2:].decode()} declaration (DTDs and entities "
                    "are not part of IPC-2581 and can expand without bound or read other files)",
                    line=lines + probe.count(b"\n", 0, at) + 1,
                )
        keep = max(len(probe) - 16, 0)  # the next probe starts this far into this one
        lines += probe.count(b"\n", 0, keep)
        tail = probe[keep:]
        yield chunk


# ---------------------------------------------------------------------------------------------
# The streaming reader
# ---------------------------------------------------------------------------------------------


class _Reader:
    """Collects what the board needs while the document streams past; :meth:`board` builds it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings: list[str] = []
        self.revision: str | None = None
        self.generator: str | None = None
        self.cad_scale: float | None = None
        # dictionaries (id -> value in mm, already scaled)
        self.line_widths: dict[str, float] = {}
        self.standard: dict[str, _Shape] = {}
        self.user: dict[str, _Shape] = {}
        # header / layers / stack-up
        self.specs: dict[str, _Spec] = {}
        self.layers: dict[str, _LayerDecl] = {}
        self.layer_order: list[str] = []
        self.stack_rows: list[_StackRow] = []
        self.stack_group = 0
        self.overall_thickness: float | None = None
        self.where_measured = ""
        # step content
        self.padstacks: dict[str, _PadstackDef] = {}
        self.packages: dict[str, list[_Pin]] = {}
        self.components: list[dict[str, Any]] = []
        self.values: dict[str, str] = {}
        self.nets: dict[str, int] = {"": 0}
        self.logical_pins: dict[tuple[str, str], int] = {}
        self.profile: list[np.ndarray] = []
        self.cutouts: list[np.ndarray] = []
        # geometry, collected as Python lists and turned into numpy once
        self.t_start: list[tuple[float, float]] = []
        self.t_end: list[tuple[float, float]] = []
        self.t_mid: list[tuple[float, float]] = []
        self.t_width: list[float] = []
        self.t_layer: list[int] = []
        self.t_net: list[int] = []
        self.fills: dict[tuple[int, int], list[np.ndarray]] = {}
        self.pads: dict[tuple[str, str, int, int], _PadAcc] = {}
        self.pin_holes: dict[tuple[int, int], tuple[float, str]] = {}
        self.via_rows: list[_ViaRow] = []
        #: via position (µm) -> the protection fields its protection layers state (True)
        self.via_protect: dict[tuple[int, int], dict[str, bool]] = {}
        self.via_pads: dict[tuple[int, int], tuple[float, float, int, set[int], float]] = {}
        self.bores: list[_Bore] = []
        self.foil_rz = foil_thresholds()
        self._package_bases: list[str] | None = None
        # parse state
        self.root_seen = False
        self.tags: list[str] = []
        self.cap: list[_Node] = []
        self.cap_parent = ""
        self.skip = 0
        self.cur_layer: str | None = None
        self.copper_index: dict[str, int] | None = None
        self.dict_scale: float | None = None

    # -- driver --------------------------------------------------------------------------------

    def parse(self, chunks: Iterable[bytes]) -> None:
        """Feed the document to expat with Python callbacks: nodes are built only for the units
        the board needs (a copper ``Set``, a ``Package`` …), and dropped once handled."""
        p = expat.ParserCreate()
        p.buffer_text = False
        p.StartElementHandler = self._x_start
        p.EndElementHandler = self._x_end
        p.StartDoctypeDeclHandler = self._x_doctype
        p.EntityDeclHandler = self._x_entity
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self._parser = p
        fed = 0
        try:
            for chunk in chunks:
                p.Parse(chunk, False)
                fed += len(chunk)
                self._check_pending(fed)
            p.Parse(b"", True)
        except LookupError as err:  # <?xml encoding="..."?> names no codec Python has
            raise InputError(self.path, f"unsupported XML encoding: {err}", line=1) from None
        except ValueError as err:  # pyexpat: "multi-byte encodings are not supported" (UTF-7)
            raise InputError(self.path, f"unsupported XML encoding: {err}", line=1) from None
        except expat.ExpatError as err:
            msg = expat.errors.messages.get(err.code, str(err))
            hint = (
                " (the file ends early: truncated?)"
                if err.code
                in (
                    expat.errors.codes.get(expat.errors.XML_ERROR_NO_ELEMENTS),
                    expat.errors.codes.get(expat.errors.XML_ERROR_UNCLOSED_TOKEN),
                )
                or "no element found" in msg
                else ""
            )
            raise InputError(
                self.path, f"not well-formed XML: {msg}{hint}", line=err.lineno
            ) from None
        if not self.root_seen:
            raise InputError(self.path, "no XML element found: not an IPC-2581 file")

    def _check_pending(self, fed: int) -> None:
        """Refuse markup (a tag with its attributes, a comment) longer than
        :data:`~accel_drc.hostile.MAX_XML_TOKEN`, at its first line; ``fed``: bytes given to
        expat so far.

        Why: expat 2.5 and older rescan an unfinished piece of markup from its start each time a
        chunk is fed, so a 255 MB attribute took 37 s and twice that size takes four times as
        long.  Between two chunks expat's ``CurrentByteIndex`` is where the markup it holds back
        unfinished starts; refusing it once it passes the bound keeps every rescan under two
        chunks, so parsing stays linear.  (Modulo 2**32: the index is a C long, 32 bits on
        Windows; -1 means no markup is pending.)"""
        at = self._parser.CurrentByteIndex
        if at != -1 and (fed - at) % (1 << 32) > MAX_XML_TOKEN:
            raise InputError(
                self.path,
                f"XML markup of more than {(fed - at) % (1 << 32):,} bytes (a tag, attribute or "
                f"comment), over the {MAX_XML_TOKEN >> 20} MiB limit (real exports: under 1 KB)",
                line=self._parser.CurrentLineNumber,
            )

    def _x_doctype(self, *args: object) -> None:
        raise InputError(
            self.path,
            "refusing XML with a DOCTYPE (DTDs and entities are not part of IPC-2581 and can "
            "expand without bound or read other files)",
            line=self._parser.CurrentLineNumber,
        )

    def _x_entity(self, *args: object) -> None:
        raise InputError(
            self.path,
            "refusing XML with an ENTITY declaration",
            line=self._parser.CurrentLineNumber,
        )

    def _too_deep(self) -> None:
        """Raise when the open elements nest deeper than :data:`MAX_XML_DEPTH`.

        Refused at the first element too deep: expat keeps every open element, so a 136 KB zip
        of nested elements grew to 2.7 GB before anything else stopped it.  The depth is the
        three stacks the walk keeps anyway (outer tags, captured nodes, skipped levels), and it
        is summed only once one of them passes 64, so a real file pays one comparison per
        element (no counter to keep: 5 % of the parse time on an element-heavy file)."""
        depth = len(self.tags) + len(self.cap) + self.skip
        if depth > MAX_XML_DEPTH:
            raise InputError(
                self.path,
                f"XML nested more than {MAX_XML_DEPTH} elements deep: not an IPC-2581 file",
                line=self._parser.CurrentLineNumber,
            )

    def _x_start(self, name: str, attrs: dict[str, str]) -> None:
        skip = self.skip
        if skip:
            self.skip = skip + 1
            if skip > 64:
                self._too_deep()
            return
        tag = name[name.find(":") + 1 :]
        cap = self.cap
        if cap:
            if tag in _PRUNE and not (tag == "Outline" and cap[-1].tag == "SlotCavity"):
                self.skip = 1  # a slot's outline is its hole: kept; other outlines are drawings
                return
            if tag == "PolyStepSegment":  # the bulk of a file: keep just the attributes
                cap[-1].children.append(attrs)  # type: ignore[arg-type]
                self.skip = 1
                return
            node = _Node(tag, attrs, self._parser.CurrentLineNumber)
            cap[-1].children.append(node)
            cap.append(node)
            if len(cap) > 64:
                self._too_deep()
            return
        tags = self.tags
        if not tags and not self.root_seen:
            self._root(tag, attrs)
        parent = tags[-1] if tags else ""
        tags.append(tag)
        if len(tags) > 64:
            self._too_deep()
        if tag in _END_HANDLERS and self._wanted(tag, attrs, parent):
            cap.append(_Node(tag, attrs, self._parser.CurrentLineNumber))
            self.cap_parent = parent
            return
        self._start(tag, attrs)

    def _x_end(self, name: str) -> None:
        if self.skip:
            self.skip -= 1
            return
        cap = self.cap
        if cap:
            node = cap.pop()
            if not cap:
                self.tags.pop()
                _END_HANDLERS[node.tag](self, node, self.cap_parent)
            return
        tag = self.tags.pop()
        if tag == "LayerFeature":
            self.cur_layer = None

    def _root(self, tag: str, attrs: Mapping[str, str]) -> None:
        if tag != "IPC-2581":
            raise InputError(
                self.path,
                f"XML root element is <{tag}>, not <IPC-2581>: not an IPC-2581 file",
                line=self._parser.CurrentLineNumber,
            )
        self.root_seen = True
        self.revision = attrs.get("revision")
        if self.revision not in ("B", "C"):
            self.warnings.append(
                f"IPC-2581 revision {self.revision!r}: read as revision C (only B and C are tested)"
            )

    def _wanted(self, tag: str, attrs: Mapping[str, str], parent: str) -> bool:
        """Whether to build nodes for this unit: copper and drill sets only (silkscreen, paste
        and document layers are most of a big file and carry nothing a check reads)."""
        if tag == "Set":
            if parent != "LayerFeature" or self.cur_layer is None:
                return False
            decl = self.layers.get(self.cur_layer)
            if decl is None:
                return False
            if decl.function in COPPER_FUNCTIONS:
                usage = (attrs.get("geometryUsage") or "").upper()
                return usage not in ("TEXT", "GRAPHIC") and attrs.get("componentRef") is None
            return (
                decl.function in DRILL_FUNCTIONS
                or decl.function in PROTECTION_FUNCTIONS
                or decl.function in ("ROUT", "BOARD_OUTLINE")
            )
        if tag == "Layer":
            return parent == "CadData"
        return True

    def _start(self, tag: str, elem: Mapping[str, str]) -> None:
        if tag.startswith("Dictionary"):
            self.dict_scale = self._units(elem.get("units"))
        elif tag == "CadHeader":
            self.cad_scale = self._units(elem.get("units"))
            if self.cad_scale is None:
                self.cad_scale = 1.0
                self.warnings.append("CadHeader declares no units: assuming MILLIMETER")
        elif tag == "LayerFeature":
            self.cur_layer = elem.get("layerRef")
        elif tag == "StackupGroup":
            self.stack_group += 1
        elif tag == "Stackup":
            self.where_measured = (elem.get("whereMeasured") or "").upper()
            if self.overall_thickness is None and elem.get("overallThickness"):
                raw = elem.get("overallThickness", "")
                try:
                    self.overall_thickness = _finite_float(raw) * self._scale()
                except ValueError:
                    raise InputError(
                        self.path,
                        f'Stackup overallThickness "{raw[:40]}" is not a finite number',
                        line=self._parser.CurrentLineNumber,
                    ) from None
        elif tag == "SoftwarePackage" and self.generator is None:
            name = elem.get("name") or ""
            self.generator = f"{name} {elem.get('revision') or ''}".strip() or None

    # -- units and numbers -----------------------------------------------------------------------

    def _units(self, units: str | None) -> float | None:
        if units is None:
            return None
        scale = UNITS_MM.get(units.strip().upper())
        if scale is None:
            raise InputError(
                self.path, f"unknown units {units!r} (IPC-2581 allows MILLIMETER, MICRON, INCH)"
            )
        return scale

    def _scale(self) -> float:
        if self.cad_scale is None:
            self.cad_scale = 1.0
            self.warnings.append("geometry before any CadHeader units: assuming MILLIMETER")
        return self.cad_scale

    def _num(self, elem: _Node, attr: str, default: float | None = None) -> float:
        raw = elem.get(attr)
        if raw is None:
            if default is not None:
                return default
            raise self._bad(elem, f"has no {attr} attribute")
        try:
            val = float(raw)
        except ValueError:
            raise self._bad(elem, f'{attr}="{raw[:40]}" is not a number') from None
        if not math.isfinite(val):
            raise self._bad(elem, f'{attr}="{raw[:40]}" is not finite')
        return val

    def _bad(self, elem: Any, what: str) -> InputError:
        tag = getattr(elem, "tag", "PolyStepSegment")
        return InputError(self.path, f"<{tag}> {what}", line=getattr(elem, "line", None))

    def _len(self, elem: _Node, attr: str, scale: float | None = None) -> float:
        return self._num(elem, attr) * (scale if scale is not None else self._scale())

    def _xy(
        self, elem: _Node, xa: str = "x", ya: str = "y", scale: float | None = None
    ) -> tuple[float, float]:
        """A point in board coordinates: mm, y down (IPC-2581 has y up)."""
        s = scale if scale is not None else self._scale()
        return self._num(elem, xa) * s, -self._num(elem, ya) * s

    def _net(self, name: str | None) -> int:
        if not name:
            return 0
        idx = self.nets.get(name)
        if idx is None:
            idx = self.nets[name] = len(self.nets)
        return idx

    # -- dictionaries ------------------------------------------------------------------------------

    def _entry_scale(self) -> float:
        return self.dict_scale if self.dict_scale is not None else self._scale()

    def _on_entry_line(self, elem: _Node, parent: str) -> None:
        desc = _child(elem, "LineDesc")
        if desc is not None and elem.get("id"):
            self.line_widths[elem.get("id", "")] = self._num(desc, "lineWidth", 0.0) * (
                self._entry_scale()
            )

    def _on_entry_standard(self, elem: _Node, parent: str) -> None:
        shape = None
        for child in elem:
            shape = self._primitive(child, self._entry_scale())
            if shape is not None:
                break
        if shape is not None and elem.get("id"):
            self.standard[elem.get("id", "")] = shape

    def _on_entry_user(self, elem: _Node, parent: str) -> None:
        shape = None
        for child in elem.iter():
            if child is elem:
                continue
            shape = self._primitive(child, self._entry_scale())
            if shape is not None:
                break
        if shape is None:
            shape = _Shape("custom", 0.0, 0.0)
        if elem.get("id"):
            self.user[elem.get("id", "")] = shape

    def _primitive(self, elem: _Node, scale: float) -> _Shape | None:
        tag = elem.tag
        n = self._num
        if tag == "Circle":
            d = n(elem, "diameter") * scale
            return _Shape("circle", d, d)
        if tag in ("RectCenter", "RectCorner"):
            if tag == "RectCorner":
                w = abs(n(elem, "upperRightX") - n(elem, "lowerLeftX")) * scale
                h = abs(n(elem, "upperRightY") - n(elem, "lowerLeftY")) * scale
                return _Shape("rect", w, h)
            return _Shape("rect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag == "RectRound":
            return _Shape("roundrect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag == "RectCham":
            return _Shape("chamfered_rect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag in ("Oval", "Ellipse"):
            return _Shape("oval", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag in ("Octagon", "Hexagon", "Diamond", "Triangle", "Butterfly", "Donut", "Thermal"):
            w = elem.get("width") or elem.get("length") or elem.get("outerDiameter") or "0"
            h = elem.get("height") or w
            try:
                return _Shape("custom", _finite_float(w) * scale, _finite_float(h) * scale)
            except ValueError:
                return _Shape("custom", 0.0, 0.0)
        if tag in ("Contour", "Polygon"):
            poly = elem if tag == "Polygon" else _child(elem, "Polygon")
            ring = self._ring(poly, scale) if poly is not None else np.zeros((0, 2))
            if len(ring):
                size = ring.max(axis=0) - ring.min(axis=0)
                return _Shape("custom", float(size[0]), float(size[1]))
            return _Shape("custom", 0.0, 0.0)
        return None

    def _shape_ref(self, elem: _Node) -> _Shape | None:
        for child in elem:
            tag = child.tag
            if tag == "StandardPrimitiveRef":
                return self.standard.get(child.get("id", ""))
            if tag == "UserPrimitiveRef":
                return self.user.get(child.get("id", ""))
            shape = self._primitive(child, self._scale())
            if shape is not None:
                return shape
        return None

    # -- header: specs, layers, stack-up -----------------------------------------------------------

    def _on_spec(self, elem: _Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        spec = self.specs.setdefault(name, _Spec())
        for item in elem:
            kind = item.tag
            typ = (item.get("type") or "").upper()
            props = [p for p in item if p.tag == "Property"]
            if kind == "General" and typ == "MATERIAL":
                for p in props:
                    text = (p.get("text") or "").strip()
                    if text and ":" not in text:
                        spec.materials.append(text)
                    elif text.lower().startswith("foil"):
                        spec.foil_text = text.split(":", 1)[1].strip()
            elif kind == "Dielectric" and typ in ("DIELECTRIC_CONSTANT", "LOSS_TANGENT"):
                val = self._prop_value(props, name, typ)
                if val is not None and (val <= 0 if typ == "DIELECTRIC_CONSTANT" else val < 0):
                    # physically impossible: not declared (and said so), never used as a number
                    self.warnings.append(
                        f'Spec "{name}" {typ} {val:g} is impossible; treated as not declared'
                    )
                    val = None
                if typ == "DIELECTRIC_CONSTANT":
                    spec.dk = val
                else:
                    spec.df = val
            elif kind == "Conductor" and typ.startswith("SURFACE_ROUGHNESS"):
                self._roughness(spec, name, typ, props)
            elif kind == "Conductor" and typ == "OTHER":
                for p in props:
                    text = (p.get("text") or "").strip()
                    if text.upper().split(":")[-1].strip() in FOIL_NAMES:
                        spec.foil_text = text.split(":")[-1].strip()
            elif kind == "Backdrill":
                self._backdrill_prop(spec, name, typ, props)
            elif kind == "SurfaceFinish":
                fin = item.get("comment") or typ or None
                for sub in item.iter():
                    if sub.tag == "Finish" and sub.get("type"):
                        fin = sub.get("type")
                spec.finish = fin

    def _prop_value(self, props: list[_Node], spec: str, typ: str) -> float | None:
        for p in props:
            raw = p.get("value")
            if raw is None:
                continue
            try:
                return _finite_float(raw)
            except ValueError:
                raise InputError(
                    self.path,
                    f'Spec "{spec}" {typ}: value "{raw[:40]}" is not a finite number',
                    line=getattr(p, "line", None),
                ) from None
        return None

    def _roughness(self, spec: _Spec, name: str, typ: str, props: list[_Node]) -> None:
        face = typ.replace("SURFACE_ROUGHNESS_", "").replace("SURFACE_ROUGHNESS", "TREATED")
        for p in props:
            if p.get("value") is None:
                continue
            value = self._prop_value([p], name, typ)
            if value is None:
                continue
            unit = (p.get("unit") or "").upper()
            ref_unit = (p.get("refUnit") or "").upper()
            if unit in PROPERTY_UNITS_UM:
                um = value * PROPERTY_UNITS_UM[unit]
            elif unit in ("RZ", "RMAX", ""):
                um = value  # Rz is quoted in µm by every foil datasheet
                if unit == "":
                    self.warnings.append(
                        f'Spec "{name}" {typ} has no unit: read {value} as Rz in µm'
                    )
            else:  # RMS (Rq/Ra): not comparable with the Rz limits of the foil grades
                spec.roughness_note = f"{typ} given as {unit}, not Rz: no foil grade derived"
                continue
            if ref_unit == "RMS":
                spec.roughness_note = f"{typ} given as RMS, not Rz: no foil grade derived"
                continue
            spec.roughness_um[face] = um

    def _backdrill_prop(self, spec: _Spec, name: str, typ: str, props: list[_Node]) -> None:
        bd = spec.backdrill
        bd.setdefault("present", True)
        for p in props:
            layer = p.get("layerOrGroupRef") or p.get("text")
            if typ == "START_LAYER" and layer:
                bd["start"] = layer.strip()
            elif typ == "MUST_NOT_CUT_LAYER" and layer:
                bd["must_not_cut"] = layer.strip()
            elif typ in ("MAX_STUB_LENGTH", "STUB_LENGTH") and p.get("value") is not None:
                value = self._prop_value([p], name, typ) or 0.0
                if value < 0:
                    raise self._bad(p, f'Spec "{name}" {typ} is negative ({value:g})')
                unit = (p.get("unit") or "").upper()
                if unit in PROPERTY_UNITS_UM:
                    bd["max_stub_mm"] = value * PROPERTY_UNITS_UM[unit] / 1000.0
                else:
                    bd["max_stub_mm"] = value * self._scale()
                    self.warnings.append(
                        f'Spec "{name}" MAX_STUB_LENGTH has no unit: read in the CadHeader units'
                    )

    def _on_layer(self, elem: _Node, parent: str) -> None:
        if parent != "CadData":
            return
        name = elem.get("name")
        if not name:
            return
        decl = _LayerDecl(
            name=name,
            function=(elem.get("layerFunction") or "").upper(),
            side=(elem.get("side") or "").upper(),
        )
        for child in elem:
            tag = child.tag
            if tag == "Span":
                decl.span = (child.get("fromLayer", ""), child.get("toLayer", ""))
            elif tag == "SpecRef" and child.get("id"):
                decl.spec_refs.append(child.get("id", ""))
        if name not in self.layers:
            self.layer_order.append(name)
        self.layers[name] = decl
        self.copper_index = None

    def _on_stackup_layer(self, elem: _Node, parent: str) -> None:
        ref = elem.get("layerOrGroupRef")
        if not ref:
            return
        thickness = self._len(elem, "thickness") if elem.get("thickness") is not None else None
        if thickness is not None and thickness < 0:
            raise self._bad(elem, f'(layer "{ref}") thickness is negative ({thickness:g} mm)')
        seq_raw = elem.get("sequence")
        try:
            seq = _finite_float(seq_raw) if seq_raw is not None else float(len(self.stack_rows))
        except ValueError:
            raise InputError(
                self.path,
                f'StackupLayer "{ref}": sequence "{seq_raw[:40]}" is not a finite number',
                line=elem.line,
            ) from None
        refs = [c.get("id", "") for c in elem if c.tag == "SpecRef" and c.get("id")]
        self.stack_rows.append(_StackRow(ref, thickness, seq, self.stack_group, refs))

    def _copper(self) -> dict[str, int]:
        """IPC layer name -> copper stack index (0 = top), in stack-up order."""
        if self.copper_index is None:
            names = [
                n for n in self._layer_sequence() if self.layers[n].function in COPPER_FUNCTIONS
            ]
            self.copper_index = {n: i for i, n in enumerate(names)}
        return self.copper_index

    def _layer_sequence(self) -> list[str]:
        """Declared layers in physical order: the stack-up's sequence when it names them."""
        rows = sorted(self.stack_rows, key=lambda r: (r.group, r.sequence))
        ordered = [r.ref for r in rows if r.ref in self.layers]
        seen = set(ordered)
        if ordered:
            # layers the stack-up forgot keep their declaration order, after it
            ordered += [
                n
                for n in self.layer_order
                if n not in seen and self.layers[n].function in COPPER_FUNCTIONS
            ]
            return ordered
        return list(self.layer_order)

    # -- step: padstacks, packages, components, nets, outline --------------------------------------

    def _on_padstack_def(self, elem: _Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        ps = _PadstackDef()
        for child in elem:
            tag = child.tag
            if tag == "PadstackHoleDef":
                ps.hole_mm = self._len(child, "diameter")
                ps.plating = (child.get("platingStatus") or "").upper()
            elif tag == "PadstackPadDef" and (child.get("padUse") or "REGULAR") == "REGULAR":
                shape = self._shape_ref(child)
                if shape is not None:
                    ps.pads[child.get("layerRef", "")] = shape
        self.padstacks[name] = ps

    def _on_package(self, elem: _Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        pins = []
        for child in elem:
            if child.tag != "Pin":
                continue
            loc = _child(child, "Location")
            x = y = 0.0
            if loc is not None:
                x, y = self._xy(loc)
            xf = _child(child, "Xform")
            rot = self._num(xf, "rotation", 0.0) if xf is not None else 0.0
            pins.append(
                _Pin(
                    number=child.get("number", ""),
                    x=x,
                    y=y,
                    kind=(child.get("type") or "").upper(),
                    shape=self._shape_ref(child),
                    rotation=rot,
                )
            )
        self.packages[name] = pins

    def _on_component(self, elem: _Node, parent: str) -> None:
        ref = elem.get("refDes")
        if not ref:
            return
        loc = _child(elem, "Location")
        xf = _child(elem, "Xform")
        x, y = self._xy(loc) if loc is not None else (0.0, 0.0)
        self.components.append(
            {
                "ref": ref,
                "package": elem.get("packageRef", ""),
                "part": elem.get("part", ""),
                "layer": elem.get("layerRef", ""),
                "mount": (elem.get("mountType") or "").upper(),
                "x": x,
                "y": y,
                "rotation": self._num(xf, "rotation", 0.0) if xf is not None else 0.0,
                "mirror": xf is not None and (xf.get("mirror") or "").lower() == "true",
            }
        )

    def _on_bom_item(self, elem: _Node, parent: str) -> None:
        value = None
        for sub in elem.iter():
            if sub.tag == "Textual" and (
                (sub.get("textualCharacteristicName") or "").lower() == "value"
            ):
                value = sub.get("textualCharacteristicValue")
        if value is None:
            return
        for sub in elem:
            if sub.tag == "RefDes" and sub.get("name"):
                self.values[sub.get("name", "")] = value

    def _on_logical_net(self, elem: _Node, parent: str) -> None:
        net = self._net(elem.get("name"))
        for sub in elem:
            if sub.tag == "PinRef":
                self.logical_pins[(sub.get("componentRef", ""), sub.get("pin", ""))] = net

    def _on_profile(self, elem: _Node, parent: str) -> None:
        for sub in elem.iter():
            if sub.tag in ("Polygon", "Cutout"):
                ring = self._ring(sub)
                if len(ring) >= 2:
                    self.profile.append(ring)

    def _ring(self, poly: _Node, scale: float | None = None) -> np.ndarray:
        """A PolyBegin/PolyStepSegment/PolyStepCurve ring, arcs flattened by
        :func:`accel_drc.geometry.centre_arc_points` (the one chord tolerance).

        Zone fills are most of the points in a big file, so straight steps (kept as bare
        attribute dicts, see ``_x_start``) are converted by numpy in one go."""
        parts: list[np.ndarray] = []
        xs: list[str | None] = []
        ys: list[str | None] = []

        def flush() -> None:
            if xs:
                try:
                    arr = np.array([xs, ys], dtype=np.float64).T
                except (TypeError, ValueError):
                    raise InputError(
                        self.path, "polygon with a missing or non-numeric x/y", line=poly.line
                    ) from None
                if not np.isfinite(arr).all():
                    raise InputError(self.path, "polygon with a non-finite x/y", line=poly.line)
                arr *= scale if scale is not None else self._scale()
                arr[:, 1] *= -1.0
                parts.append(arr)
                xs.clear()
                ys.clear()

        for step in poly.children:
            if type(step) is dict or step.tag == "PolyBegin":
                xs.append(step.get("x"))
                ys.append(step.get("y"))
            elif step.tag == "PolyStepCurve":
                flush()
                if not parts:
                    continue
                last = parts[-1][-1]
                end = self._xy(step, scale=scale)
                center = self._xy(step, "centerX", "centerY", scale=scale)
                cw = (step.get("clockwise") or "false").lower() == "true"
                start = (float(last[0]), float(last[1]))
                arc = centre_arc_points(start, end, center, increasing=cw)[1:]
                parts.append(np.asarray(arc, dtype=np.float64).reshape(-1, 2))
        flush()
        if not parts:
            return np.zeros((0, 2))
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    # -- layer features ----------------------------------------------------------------------------

    def _on_set(self, elem: _Node, parent: str) -> None:
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

    def _protection_set(self, elem: _Node, decl: _LayerDecl) -> None:
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
            loc = _child(child, "Location") if child.tag == "Pad" else child
            if loc is None:
                continue
            x, y = self._xy(loc)
            self.via_protect.setdefault((round(x * 1e3), round(y * 1e3)), {})[word] = True

    def _protection_word(self, decl: _LayerDecl) -> str | None:
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

    def _outline_set(self, elem: _Node) -> None:
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

    def _copper_set(self, elem: _Node, decl: _LayerDecl) -> None:
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

    def _features(self, elem: _Node, layer: int, net: int) -> None:
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

    def _width(self, elem: _Node) -> float:
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

    def _polyline(self, elem: _Node, layer: int, net: int) -> None:
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

    def _contour(self, elem: _Node, layer: int, net: int) -> None:
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

    def _pad(self, elem: _Node, layer: int, net: int, layer_name: str, via_set: bool) -> None:
        loc = _child(elem, "Location")
        if loc is None:
            return
        x, y = self._xy(loc)
        pin = _child(elem, "PinRef")
        padstack = elem.get("padstackDefRef")
        shape = self._shape_ref(elem)
        xf = _child(elem, "Xform")
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
            acc = self.pads[key] = _PadAcc(comp, number, x, y, net, shape, rot, padstack)
        acc.layers.add(layer)
        acc.layer_names.add(layer_name)
        acc.names[layer] = layer_name
        acc.per_layer.setdefault(layer, []).append(shape)
        if acc.net == 0:
            acc.net = net
        if acc.shape is None:
            acc.shape = shape

    def _drill_set(self, elem: _Node, decl: _LayerDecl) -> None:
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
                self.bores.append(_Bore(x, y, drill, span, spec, decl.name))
                continue
            if plating == "VIA":
                if span is None:
                    span = self._through_span(decl.name)
                self.via_rows.append(
                    _ViaRow(
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

    def _slot(self, elem: _Node) -> None:
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

    def _slot_outline(self, elem: _Node) -> tuple[tuple[float, float], float] | None:
        """(centre, narrow side) of a slot drawn as an ``Outline`` polygon, offset by its
        ``Location`` (KiCad 9 writes 0, 0 there); None when the slot has no outline."""
        outline = _child(elem, "Outline")
        poly = _child(outline, "Polygon") if outline is not None else None
        if poly is None:
            return None
        ring = self._ring(poly)
        if len(ring) < 3:
            return (0.0, 0.0), 0.0
        loc = _child(elem, "Location")
        dx, dy = self._xy(loc) if loc is not None else (0.0, 0.0)
        xmin, ymin = ring.min(axis=0)
        xmax, ymax = ring.max(axis=0)
        centre = ((xmin + xmax) / 2 + dx, (ymin + ymax) / 2 + dy)
        return centre, float(min(xmax - xmin, ymax - ymin))

    def _slot_primitive(self, elem: _Node) -> tuple[tuple[float, float], float] | None:
        """(centre, narrow side) of a slot given as a standard primitive at its ``Location``;
        None without a ``Location`` (KiCad 10's revision B export writes none, so the slot's
        place is not in the file) or without a shape."""
        loc = _child(elem, "Location")
        shape = self._shape_ref(elem)
        if loc is None or shape is None:
            return None
        return self._xy(loc), float(min(shape.width, shape.height))

    def _on_padstack(self, elem: _Node, parent: str) -> None:
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
                pin_ref = pin_ref or _child(child, "PinRef")
                if pin_ref is not None and idx is not None:
                    loc = _child(child, "Location")
                    if loc is not None:
                        self._pad(child, idx, net, child.get("layerRef", ""), False)
        for child in elem:
            if child.tag != "LayerHole":
                continue
            x, y = self._xy(child)
            drill = self._len(child, "diameter")
            plating = (child.get("platingStatus") or "PLATED").upper()
            span_el = _child(child, "Span")
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
                row = _ViaRow(
                    x, y, drill, size or None, span[0], span[1], net, child.get("name", ""), None
                )
                self.via_rows.append(row)
            else:
                self.pin_holes[(round(x * 1e4), round(y * 1e4))] = (drill, plating)

    def _span(self, decl: _LayerDecl) -> tuple[int, int] | None:
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

    def _resolve_spec(self, ref: str) -> _Spec | None:
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

    # ---------------------------------------------------------------------------------------------
    # Building the board
    # ---------------------------------------------------------------------------------------------

    def board(self) -> Board:
        copper = self._copper()
        if not copper:
            raise InputError(
                self.path,
                "no copper layers (no <Layer> with layerFunction CONDUCTOR, SIGNAL, PLANE or "
                "MIXED): not a board, or not the Ecad section of an IPC-2581 file",
            )
        n = len(copper)
        names = sorted(copper, key=copper.__getitem__)
        copper_layers = tuple(
            CopperLayer(
                index=i,
                name=copper_layer_name(i, n),
                user_name=name,
                kind=COPPER_FUNCTIONS[self.layers[name].function],
            )
            for i, name in enumerate(names)
        )
        stackup = self._stackup(copper)
        vias = self._vias(n)
        thickness = self.overall_thickness
        if thickness is None and stackup is not None:
            thickness = stackup.thickness_mm
        elif stackup is not None:
            self._check_overall(stackup)
        project = self._project()
        return Board(
            source=self.path,
            format="ipc2581",
            not_carried=NOT_CARRIED,
            copper_layers=copper_layers,
            stackup=stackup,
            board_thickness_mm=thickness,
            outline=self._outline(),
            nets=tuple(sorted(self.nets, key=self.nets.__getitem__)),
            tracks=self._tracks(),
            vias=vias,
            zones=self._zones(),
            footprints=self._footprints(n),
            net_classes=project.net_classes if project else NetClassRules(),
            text_variables=project.text_variables if project else {},
            design=project.design if project else DesignSettings(),
            generator=self.generator,
            project_file=project.path if project else None,
            warnings=tuple(self.warnings),
        )

    def _project(self) -> Any:
        """The KiCad project beside the file (``board.xml`` next to ``board.kicad_pro``): IPC-2581
        has no net classes, and the signal classifier reads them when they exist."""
        import os

        from .kicad_project import project_path_for, read_project

        pro = project_path_for(self.path)
        if not os.path.isfile(pro):
            return None
        try:
            return read_project(pro)
        except InputError as err:
            self.warnings.append(f"project file beside the board not read: {err}")
            return None

    def _check_overall(self, stackup: Stackup) -> None:
        """Warn when the layers do not add up to ``overallThickness`` (KiCad 9.0.8 writes every
        dielectric sub-layer with the first slice's thickness, for one)."""
        kinds = ("copper", "core", "prepreg", "dielectric")
        if self.where_measured in ("", "MASK"):
            kinds += ("soldermask",)
        parts = [x.thickness_mm for x in stackup.layers if x.kind in kinds]
        if not parts or any(p is None for p in parts) or self.overall_thickness is None:
            return
        total = float(sum(parts))  # type: ignore[arg-type]
        if abs(total - self.overall_thickness) > max(0.01, 0.02 * self.overall_thickness):
            self.warnings.append(
                f"the stack-up layers add up to {total:.4g} mm but <Stackup overallThickness> "
                f"says {self.overall_thickness:.4g} mm: a layer's thickness is wrong"
            )

    def _layer_specs(self, name: str, row: _StackRow | None) -> list[_Spec]:
        refs = list(row.spec_refs if row else ()) + list(self.layers[name].spec_refs)
        out = []
        for ref in refs:
            spec = self._resolve_spec(ref)
            if spec is None:
                self.warnings.append(f'layer "{name}" refers to Spec "{ref}", which is missing')
            elif spec not in out:
                out.append(spec)
        if not refs:  # no reference at all: a spec named like the layer (KiCad: "F.Cu_1")
            spec = self._resolve_spec(name)
            if spec is not None:
                out.append(spec)
        return out

    def _stackup(self, copper: Mapping[str, int]) -> Stackup | None:
        if not self.stack_rows:
            self.warnings.append("no <Stackup>: thicknesses and dielectric values are unknown")
            return None
        rows = {r.ref: r for r in self.stack_rows}
        kicad = self._kicad_version() is not None
        layers: list[StackupLayer] = []
        finish = None
        for name in self._layer_sequence():
            decl = self.layers[name]
            fn = decl.function
            kind = (
                "copper"
                if fn in COPPER_FUNCTIONS
                else DIELECTRIC_FUNCTIONS.get(fn) or OTHER_STACKUP_FUNCTIONS.get(fn)
            )
            row = rows.get(name)
            if kind is None or row is None:
                continue
            specs = self._layer_specs(name, row)
            material = next((m for s in specs for m in s.materials), None)
            if (
                kicad
                and material is not None
                and (
                    kind in ("silkscreen", "solderpaste")
                    or material.upper() in _KICAD_PLACEHOLDER_MATERIALS
                )
            ):
                material = None  # KiCad writes its layer type where the stack-up has no material
            dk = next((s.dk for s in specs if s.dk is not None), None)
            df = next((s.df for s in specs if s.df is not None), None)
            if kicad and kind == "soldermask" and dk == _KICAD_MASK_DEFAULT_DK and df is None:
                dk = None  # KiCad's default for a mask with no material, not a declaration
            finish = finish or next((s.finish for s in specs if s.finish), None)
            if kind in ("silkscreen", "solderpaste") and row.thickness_mm == 0.0:
                thickness = None
            else:
                thickness = row.thickness_mm
            if kind == "copper":
                foil = self._foil(name, specs)
                layers.append(
                    StackupLayer(
                        name=copper_layer_name(copper[name], len(copper)),
                        kind="copper",
                        thickness_mm=thickness,
                        material=material,
                        copper_index=copper[name],
                        foil=foil,
                        raw_type=fn,
                    )
                )
            elif kind in ("core", "prepreg", "dielectric"):
                m = _KICAD_DIELECTRIC.match(name)
                layers.append(
                    StackupLayer(
                        name=f"dielectric {m.group(1)}" if m else name,
                        kind=kind,
                        thickness_mm=thickness,
                        material=material,
                        epsilon_r=dk,
                        loss_tangent=df,
                        sublayers=(DielectricSublayer(thickness, material, dk, df),),
                        raw_type=fn,
                    )
                )
            else:
                layers.append(
                    StackupLayer(
                        name=_kicad_stackup_name(kind, decl.side) or name if kicad else name,
                        kind=kind,
                        thickness_mm=thickness,
                        material=material,
                        epsilon_r=dk,
                        loss_tangent=df,
                        raw_type=fn,
                    )
                )
        if not any(layer.is_copper for layer in layers):
            self.warnings.append("the <Stackup> names no copper layer: stack-up ignored")
            return None
        return Stackup(layers=tuple(layers), finish=finish)

    def _foil(self, name: str, specs: Sequence[_Spec]) -> str | None:
        """The layer's foil grade: a grade the file names, else the one its roughness implies.
        The grade holds only if every declared face meets it, so the roughest face decides."""
        for spec in specs:
            if spec.foil_text:
                grade = foil_grade_named(spec.foil_text)
                if grade is not None:
                    return grade
                self.warnings.append(f'layer "{name}": unknown foil grade "{spec.foil_text}"')
        faces = {k: v for s in specs for k, v in s.roughness_um.items()}
        if not faces:
            for spec in specs:
                if spec.roughness_note:
                    self.warnings.append(f'layer "{name}": {spec.roughness_note}')
            return None
        return grade_for_rz(max(faces.values()), self.foil_rz)

    def _vias(self, n: int) -> Vias:
        rows = list(self.via_rows)
        if not rows and self.via_pads:
            # no drill data for vias: the via pads on copper layers still give position and span
            self.warnings.append("no via holes in drill layers: vias taken from copper via pads")
            for x, y, net, layers, size in self.via_pads.values():
                rows.append(_ViaRow(x, y, 0.0, size, min(layers), max(layers), net, "", None))
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

    def _outline(self) -> Outline:
        if not self.profile:
            self.warnings.append("no <Profile>: board outline unknown")
            return Outline()
        allpts = np.vstack(self.profile)  # the box is the profile's: cut-outs lie inside it
        bbox = (
            float(allpts[:, 0].min()),
            float(allpts[:, 1].min()),
            float(allpts[:, 0].max()),
            float(allpts[:, 1].max()),
        )
        flashed = _not_repeated(self.cutouts, self.profile[1:])
        return Outline(rings=tuple(self.profile) + tuple(flashed), bbox=bbox)

    def _kicad_version(self) -> tuple[int, ...] | None:
        """KiCad's version when KiCad wrote the file (its exporter has quirks we undo)."""
        gen = self.generator or ""
        if not gen.lower().startswith("kicad"):
            return None
        nums = re.findall(r"\d+", gen)
        return tuple(int(x) for x in nums[:3]) if nums else (0,)

    def _kicad_names(self) -> tuple[Mapping[str, str], Mapping[tuple[str, str], str]]:
        """Undo KiCad's name de-duplication: its exporter keeps one set of names for reference
        designators and pin numbers and appends ``_1``, ``_2`` … to the later of two equal names
        (a capacitor ``C6`` and BGA ball ``C6`` become ``C6`` and ``C6_1``).  A name ``X_n`` goes
        back to ``X`` when ``X`` is a name the exporter had already used elsewhere and nothing of
        the same kind (another component, or a pin of the same package) is called ``X``."""
        refs = {c["ref"] for c in self.components}
        pins_by_pkg = {pkg: {p.number for p in pins} for pkg, pins in self.packages.items()}
        all_pins = set().union(*pins_by_pkg.values()) if pins_by_pkg else set()
        # the exporter's one name registry also holds layer, spec, padstack and package names
        # (a part "L3" on a board with a layer "L3" is written "L3_3")
        others = all_pins | set(self.layers) | set(self.specs) | set(self.padstacks)
        others |= set(self.packages)
        ref_map: dict[str, str] = {}
        for ref in refs:
            m = re.fullmatch(r"(.+)_\d+", ref)
            if m and m.group(1) not in refs and m.group(1) in others:
                ref_map[ref] = m.group(1)
            elif m and m.group(1) in refs:
                ref_map[ref] = m.group(1)  # KiCad allows duplicate references (REF**)
        names = refs | set(ref_map.values())
        pin_map: dict[tuple[str, str], str] = {}
        for comp in self.components:
            own = pins_by_pkg.get(comp["package"], set())
            for number in own:
                m = re.fullmatch(r"(.+)_\d+", number)
                if m and m.group(1) not in own and (m.group(1) in names or m.group(1) in others):
                    pin_map[(comp["ref"], number)] = m.group(1)
        return ref_map, pin_map

    def _kicad_value(self, comp: Mapping[str, Any]) -> str:
        """KiCad's BOM section lists only top-side parts; every ``Component part`` is
        ``<library>_<footprint>_<value>`` and packages are ``<footprint>_<n>`` (one package may
        serve several footprints with the same pads, so every package name is tried)."""
        if self._package_bases is None:
            self._package_bases = sorted(
                {re.sub(r"_\d+\Z", "", p) for p in self.packages}, key=len, reverse=True
            )
        own = re.sub(r"_\d+\Z", "", comp["package"])
        part = comp["part"]
        for fp in [own, *self._package_bases]:
            at = part.find(fp + "_") if fp else -1
            if at == 0 or (at > 0 and part[at - 1] == "_"):
                return part[at + len(fp) + 1 :]
        return ""

    def _footprints(self, n: int) -> tuple[Footprint, ...]:
        copper = self._copper()
        kicad = self._kicad_version()
        ref_map: Mapping[str, str] = {}
        pin_map: Mapping[tuple[str, str], str] = {}
        if kicad is not None:
            ref_map, pin_map = self._kicad_names()
        by_comp: dict[str, list[_PadAcc]] = {}
        for acc in self.pads.values():
            by_comp.setdefault(acc.comp, []).append(acc)
        out = []
        for comp in self.components:
            ref = comp["ref"]
            layer_idx = copper.get(comp["layer"])
            if layer_idx is None:
                bottom = comp["mirror"] or comp["layer"].upper() in ("BOTTOM", "B.CU")
                layer_idx = n - 1 if bottom else 0
            layer = "B.Cu" if layer_idx == n - 1 and n > 1 else "F.Cu"
            accs = by_comp.pop(ref, [])
            pads = [pad for acc in accs for pad in self._make_pads(acc, pin_map)]
            seen_numbers = {acc.number for acc in accs}
            for pin in self.packages.get(comp["package"], []):
                if pin.number in seen_numbers:
                    continue  # placed on copper already (or an unplaced duplicate number)
                x, y = _place(pin.x, pin.y, comp)
                pads.append(self._pin_pad(pin, x, y, comp, n))
            attrs = {"SMT": ("smd",), "THMT": ("through_hole",)}.get(comp["mount"], ())
            props = {"part": comp["part"], "package": comp["package"]}
            rotation = comp["rotation"]
            if kicad is not None and comp["mirror"]:
                rotation = _kicad_bottom_rotation(rotation, kicad)
            out.append(
                Footprint(
                    reference=ref_map.get(ref, ref),
                    value=self.values.get(ref) or (self._kicad_value(comp) if kicad else ""),
                    name=comp["package"],
                    layer=layer,
                    x=comp["x"],
                    y=comp["y"],
                    rotation=rotation,
                    attributes=attrs,
                    pads=tuple(sorted(pads, key=lambda p: (_natural(p.number), p.x, p.y))),
                    uuid="",
                    properties=props,
                )
            )
        if by_comp:
            self.warnings.append(
                f"pads of {len(by_comp)} component(s) without a <Component>: "
                + ", ".join(sorted(by_comp)[:5])
            )
        return tuple(out)

    def _make_pads(self, acc: _PadAcc, pin_map: Mapping[tuple[str, str], str]) -> list[Pad]:
        pad = self._make_pad(acc, pin_map)
        stacked = max((len(v) for v in acc.per_layer.values()), default=1)
        if stacked <= 1:
            return [pad]
        first = acc.per_layer[min(acc.per_layer)]
        out = [pad]
        for k, shape in enumerate(first[1:stacked], 1):
            extra = (
                replace(pad, shape=shape.shape, width=shape.width, height=shape.height)
                if (shape is not None)
                else pad
            )
            on = [li for li, shapes in acc.per_layer.items() if len(shapes) > k]
            if len(on) == 1 and pad.drill_mm is not None:
                # a pad on one layer stacked on a plated pad of the same number (KiCad's SMD
                # pad over a PTH, crosslink U1.9): an SMD pad, not a second barrel
                extra = replace(
                    extra,
                    type="smd",
                    drill_mm=None,
                    copper_layers=(on[0],),
                    layers=(acc.names.get(on[0], ""),),
                )
            out.append(extra)
        return out

    def _make_pad(self, acc: _PadAcc, pin_map: Mapping[tuple[str, str], str]) -> Pad:
        hole = self.pin_holes.get((round(acc.x * 1e4), round(acc.y * 1e4)))
        ps = self.padstacks.get(acc.padstack or "")
        drill = hole[0] if hole else ps.hole_mm if ps and ps.hole_mm else None
        plating = hole[1] if hole else ps.plating if ps else None
        if drill is None:
            ptype = "smd"
        elif plating == "NONPLATED":
            ptype = "np_thru_hole"
        else:
            ptype = "thru_hole"
        shape = acc.shape or _Shape("custom", 0.0, 0.0)
        net = acc.net or self.logical_pins.get((acc.comp, acc.number), 0)
        number = self._pad_number(acc.comp, acc.number, pin_map)
        return Pad(
            number=number,
            net=net,
            type=ptype,
            shape=shape.shape,
            x=acc.x,
            y=acc.y,
            width=shape.width,
            height=shape.height,
            rotation=acc.rotation,
            drill_mm=drill,
            copper_layers=tuple(sorted(acc.layers)),
            layers=tuple(sorted(acc.layer_names)),
        )

    def _pad_number(self, comp: str, number: str, pin_map: Mapping[tuple[str, str], str]) -> str:
        number = pin_map.get((comp, number), number)
        if self._kicad_version() is not None and _KICAD_UNNUMBERED.fullmatch(number):
            return ""  # KiCad names unnumbered pads PAD0, PAD1 … and bare holes NPTH0 …
        return number

    def _pin_pad(self, pin: _Pin, x: float, y: float, comp: Mapping[str, Any], n: int) -> Pad:
        """A package pin that no copper layer shows (a bare NPTH, a pad with no copper)."""
        hole = self.pin_holes.get((round(x * 1e4), round(y * 1e4)))
        ptype = (
            ("np_thru_hole" if hole[1] == "NONPLATED" else "thru_hole")
            if hole
            else "thru_hole"
            if pin.kind == "THRU"
            else "smd"
        )
        shape = pin.shape or _Shape("custom", 0.0, 0.0)
        return Pad(
            number=self._pad_number(comp["ref"], pin.number, {}),
            net=self.logical_pins.get((comp["ref"], pin.number), 0),
            type=ptype,
            shape=shape.shape,
            x=x,
            y=y,
            width=shape.width,
            height=shape.height,
            rotation=(pin.rotation + comp["rotation"]) % 360.0,
            drill_mm=hole[0] if hole else None,
            copper_layers=(),
            layers=(),
        )


# ---------------------------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------------------------


def _child(elem: _Node, name: str) -> _Node | None:
    for child in elem:
        if child.tag == name:
            return child
    return None


def _natural(s: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s))


def _place(px: float, py: float, comp: Mapping[str, Any]) -> tuple[float, float]:
    """Package-local pin position (already y-flipped) to board coordinates: mirror, then rotate
    by the component's Xform (counter-clockwise in IPC's y-up frame), then translate."""
    x, y = (-px if comp["mirror"] else px), py
    a = math.radians(comp["rotation"])
    # rotating ccw in y-up is rotating cw in our y-down coordinates
    rx = x * math.cos(a) + y * math.sin(a)
    ry = -x * math.sin(a) + y * math.cos(a)
    return comp["x"] + rx, comp["y"] + ry


def _arc_mid(
    start: tuple[float, float], end: tuple[float, float], center: tuple[float, float], cw_ipc: bool
) -> tuple[float, float]:
    """Mid point of an arc given in board coordinates (y down) whose direction was stated in
    IPC's y-up frame: a clockwise arc there runs towards increasing angle here (the y flip
    mirrors the sense of rotation)."""
    r, a0, sweep = arc_from_centre(start, end, center, increasing=cw_ipc)
    am = a0 + sweep / 2
    return center[0] + r * math.cos(am), center[1] + r * math.sin(am)


def _kicad_bottom_rotation(written: float, kicad: tuple[int, ...]) -> float:
    """pcbnew's orientation of a bottom-side (mirrored) part from the ``Xform rotation`` KiCad
    ``kicad`` wrote for it.  KiCad 9 (9.0.8 tested) writes the orientation negated (-a); KiCad 10
    (10.0.7 tested; ``generateComponents`` in ``pcb_io_ipc2581.cpp``) writes
    ``(-a - 180).Normalize()``, so a part at 90 reads 90 and one at 180 reads 0.  Each is
    undone here; tests/test_ipc2581_kicad.py checks both against that KiCad's pcbnew."""
    if kicad[:1] >= (10,):
        return (-written - 180.0) % 360.0
    return (-written) % 360.0


#: two outline rings are one hole when their boxes agree this closely (mm): a flashed circle
#: and the same circle as a Profile cut-out polygon (KiCad 10 writes both) differ by the
#: polygon's chord error, KiCad's 0.005 mm ``m_MaxError`` by default
_SAME_RING_MM = 0.02


def _ring_boxes(rings: Sequence[np.ndarray]) -> np.ndarray:
    """(n, 4) array of the rings' boxes (xmin, ymin, xmax, ymax); empty rings get NaN."""
    boxes = np.full((len(rings), 4), np.nan)
    for i, ring in enumerate(rings):
        if len(ring):
            boxes[i, :2] = ring.min(axis=0)
            boxes[i, 2:] = ring.max(axis=0)
    return boxes


def _not_repeated(flashed: Sequence[np.ndarray], rings: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The ``flashed`` rings whose bounding box is not that of one of ``rings`` (within
    :data:`_SAME_RING_MM`): one vectorised comparison per flash."""
    if not flashed or not rings:
        return list(flashed)
    boxes = _ring_boxes(rings)
    mine = _ring_boxes(flashed)
    return [
        ring
        for ring, box in zip(flashed, mine)
        if not np.any(np.all(np.abs(boxes - box) <= _SAME_RING_MM, axis=1))
    ]


def _shape_ring(shape: _Shape, at: tuple[float, float]) -> np.ndarray:
    """A flashed circle or rectangle as a closed ring centred on ``at``."""
    x, y = at
    if shape.shape == "circle":
        return np.asarray(circle_points(at, shape.width / 2.0), dtype=np.float64)
    w, h = shape.width / 2.0, shape.height / 2.0
    return np.array(
        [[x - w, y - h], [x + w, y - h], [x + w, y + h], [x - w, y + h], [x - w, y - h]]
    )


_END_HANDLERS = {
    "EntryLineDesc": _Reader._on_entry_line,
    "EntryStandard": _Reader._on_entry_standard,
    "EntryUser": _Reader._on_entry_user,
    "Spec": _Reader._on_spec,
    "Layer": _Reader._on_layer,
    "StackupLayer": _Reader._on_stackup_layer,
    "PadStackDef": _Reader._on_padstack_def,
    "PadStack": _Reader._on_padstack,
    "Package": _Reader._on_package,
    "Component": _Reader._on_component,
    "BomItem": _Reader._on_bom_item,
    "LogicalNet": _Reader._on_logical_net,
    "Profile": _Reader._on_profile,
    "Set": _Reader._on_set,
}
#: subtrees inside a unit that nothing reads (package drawings, silkscreen, text attributes)
_PRUNE = frozenset({"AssemblyDrawing", "SilkScreen", "Outline", "Marking", "PickupPoint"})
