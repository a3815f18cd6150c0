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
from collections.abc import Iterable, Mapping
from typing import Any
from xml.parsers import expat

import numpy as np

from ..errors import InputError
from ..hostile import (
    MAX_XML_DEPTH,
    MAX_XML_TOKEN,
)
from ..model import (
    Board,
    CopperLayer,
    DesignSettings,
    NetClassRules,
    copper_layer_name,
)
from .ipc2581_components import ComponentReading
from .ipc2581_features import FeatureReading
from .ipc2581_input import CHUNK, check_chunks, file_chunks, open_bounded, zip_chunks
from .ipc2581_outline import OutlineReading
from .ipc2581_records import (
    COPPER_FUNCTIONS,
    DRILL_FUNCTIONS,
    NOT_CARRIED,
    PROTECTION_FUNCTIONS,
    UNITS_MM,
    Bore,
    LayerDecl,
    Node,
    PadAcc,
    PadstackDef,
    Pin,
    Shape,
    Spec,
    StackRow,
    ViaRow,
    finite_float,
    first_child,
)
from .ipc2581_stackup import (
    DEFAULT_FOIL_RZ_MAX,
    StackupReading,
    foil_grade_named,
    foil_thresholds,
    grade_for_rz,
)

log = logging.getLogger(__name__)

#: the reader's public names; the reader's parts live in ``ipc2581_*.py`` beside it (input
#: bounds, records, stack-up, layer features, components, outline), each mixed into ``_Reader``
__all__ = [
    "CHUNK",
    "DEFAULT_FOIL_RZ_MAX",
    "foil_grade_named",
    "foil_thresholds",
    "grade_for_rz",
    "read",
    "read_bytes",
]

# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def read(path: str) -> Board:
    """Read an IPC-2581 revision B or C file (``.xml`` / ``.cvg``, or the zip that
    ``kicad-cli pcb export ipc2581 --compress`` writes) into a :class:`Board`."""
    reader = _Reader(path)
    with open_bounded(path) as fh:
        if fh.read(4) == b"PK\x03\x04":
            fh.seek(0)
            reader.parse(zip_chunks(fh, path))
        else:
            fh.seek(0)
            reader.parse(file_chunks(fh, path))
    return reader.board()


def read_bytes(data: bytes, source: str = "<ipc2581>") -> Board:
    """Same as :func:`read` for an in-memory document (tests, fuzzing)."""
    reader = _Reader(source)
    reader.parse(check_chunks((data[i : i + CHUNK] for i in range(0, len(data), CHUNK)), source))
    return reader.board()


# ---------------------------------------------------------------------------------------------
# The streaming reader
# ---------------------------------------------------------------------------------------------


class _Reader(StackupReading, FeatureReading, ComponentReading, OutlineReading):
    """Collects what the board needs while the document streams past; :meth:`board` builds it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings: list[str] = []
        self.revision: str | None = None
        self.generator: str | None = None
        self.cad_scale: float | None = None
        # dictionaries (id -> value in mm, already scaled)
        self.line_widths: dict[str, float] = {}
        self.standard: dict[str, Shape] = {}
        self.user: dict[str, Shape] = {}
        # header / layers / stack-up
        self.specs: dict[str, Spec] = {}
        self.layers: dict[str, LayerDecl] = {}
        self.layer_order: list[str] = []
        self.stack_rows: list[StackRow] = []
        self.stack_group = 0
        self.overall_thickness: float | None = None
        self.where_measured = ""
        # step content
        self.padstacks: dict[str, PadstackDef] = {}
        self.packages: dict[str, list[Pin]] = {}
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
        self.pads: dict[tuple[str, str, int, int], PadAcc] = {}
        self.pin_holes: dict[tuple[int, int], tuple[float, str]] = {}
        self.via_rows: list[ViaRow] = []
        #: via position (µm) -> the protection fields its protection layers state (True)
        self.via_protect: dict[tuple[int, int], dict[str, bool]] = {}
        self.via_pads: dict[tuple[int, int], tuple[float, float, int, set[int], float]] = {}
        self.bores: list[Bore] = []
        self.foil_rz = foil_thresholds()
        self._package_bases: list[str] | None = None
        # parse state
        self.root_seen = False
        self.tags: list[str] = []
        self.cap: list[Node] = []
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
            node = Node(tag, attrs, self._parser.CurrentLineNumber)
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
            cap.append(Node(tag, attrs, self._parser.CurrentLineNumber))
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
                    self.overall_thickness = finite_float(raw) * self._scale()
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

    def _num(self, elem: Node, attr: str, default: float | None = None) -> float:
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

    def _len(self, elem: Node, attr: str, scale: float | None = None) -> float:
        return self._num(elem, attr) * (scale if scale is not None else self._scale())

    def _xy(
        self, elem: Node, xa: str = "x", ya: str = "y", scale: float | None = None
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

    def _on_entry_line(self, elem: Node, parent: str) -> None:
        desc = first_child(elem, "LineDesc")
        if desc is not None and elem.get("id"):
            self.line_widths[elem.get("id", "")] = self._num(desc, "lineWidth", 0.0) * (
                self._entry_scale()
            )

    def _on_entry_standard(self, elem: Node, parent: str) -> None:
        shape = None
        for child in elem:
            shape = self._primitive(child, self._entry_scale())
            if shape is not None:
                break
        if shape is not None and elem.get("id"):
            self.standard[elem.get("id", "")] = shape

    def _on_entry_user(self, elem: Node, parent: str) -> None:
        shape = None
        for child in elem.iter():
            if child is elem:
                continue
            shape = self._primitive(child, self._entry_scale())
            if shape is not None:
                break
        if shape is None:
            shape = Shape("custom", 0.0, 0.0)
        if elem.get("id"):
            self.user[elem.get("id", "")] = shape

    def _primitive(self, elem: Node, scale: float) -> Shape | None:
        tag = elem.tag
        n = self._num
        if tag == "Circle":
            d = n(elem, "diameter") * scale
            return Shape("circle", d, d)
        if tag in ("RectCenter", "RectCorner"):
            if tag == "RectCorner":
                w = abs(n(elem, "upperRightX") - n(elem, "lowerLeftX")) * scale
                h = abs(n(elem, "upperRightY") - n(elem, "lowerLeftY")) * scale
                return Shape("rect", w, h)
            return Shape("rect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag == "RectRound":
            return Shape("roundrect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag == "RectCham":
            return Shape("chamfered_rect", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag in ("Oval", "Ellipse"):
            return Shape("oval", n(elem, "width") * scale, n(elem, "height") * scale)
        if tag in ("Octagon", "Hexagon", "Diamond", "Triangle", "Butterfly", "Donut", "Thermal"):
            w = elem.get("width") or elem.get("length") or elem.get("outerDiameter") or "0"
            h = elem.get("height") or w
            try:
                return Shape("custom", finite_float(w) * scale, finite_float(h) * scale)
            except ValueError:
                return Shape("custom", 0.0, 0.0)
        if tag in ("Contour", "Polygon"):
            poly = elem if tag == "Polygon" else first_child(elem, "Polygon")
            ring = self._ring(poly, scale) if poly is not None else np.zeros((0, 2))
            if len(ring):
                size = ring.max(axis=0) - ring.min(axis=0)
                return Shape("custom", float(size[0]), float(size[1]))
            return Shape("custom", 0.0, 0.0)
        return None

    def _shape_ref(self, elem: Node) -> Shape | None:
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
