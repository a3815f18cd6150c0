"""What the IPC-2581 reader keeps while the document streams past: the layer-function tables
of the standard, the parsed element (:class:`Node`) of one unit, and the small records (shapes,
layer declarations, stack-up rows, specs, padstacks, pins, pads, vias, bores) the reader's parts
fill and :meth:`~accel_drc.readers.ipc2581._Reader.board` turns into a :class:`Board`."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: length units of the standard (``unitsType``) -> mm
UNITS_MM = {"MILLIMETER": 1.0, "MICRON": 0.001, "INCH": 25.4}
#: ``propertyUnitType`` length units -> µm (for roughness and stub lengths)
PROPERTY_UNITS_UM = {"MICRON": 1.0, "MM": 1000.0, "MILLIMETER": 1000.0, "INCH": 25400.0}


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


class Node:
    """A parsed element of one unit (tag without namespace, attributes, children, line)."""

    __slots__ = ("tag", "attrib", "children", "line")

    def __init__(self, tag: str, attrib: dict[str, str], line: int) -> None:
        self.tag = tag
        self.attrib = attrib
        self.children: list[Any] = []  # Node, or a bare attribute dict (PolyStepSegment)
        self.line = line

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.attrib.get(key, default)

    def __iter__(self) -> Iterator[Node]:
        """Child elements (bare PolyStepSegment attribute dicts are left out: see _ring)."""
        return (c for c in self.children if type(c) is Node)

    def iter(self) -> Iterator[Node]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if type(c) is Node)


# ---------------------------------------------------------------------------------------------
# Small records kept while streaming
# ---------------------------------------------------------------------------------------------


@dataclass
class Shape:
    """A standard primitive resolved to what a pad needs (mm)."""

    shape: str
    width: float
    height: float


@dataclass
class LayerDecl:
    name: str
    function: str
    side: str
    span: tuple[str, str] | None = None
    spec_refs: list[str] = field(default_factory=list)


@dataclass
class StackRow:
    ref: str
    thickness_mm: float | None
    sequence: float
    group: int
    spec_refs: list[str]


@dataclass
class Spec:
    materials: list[str] = field(default_factory=list)
    dk: float | None = None
    df: float | None = None
    roughness_um: dict[str, float] = field(default_factory=dict)  # UPFACING/DOWNFACING/TREATED
    roughness_note: str | None = None
    foil_text: str | None = None
    backdrill: dict[str, Any] = field(default_factory=dict)
    finish: str | None = None


@dataclass
class PadstackDef:
    hole_mm: float | None = None
    plating: str | None = None
    pads: dict[str, Shape] = field(default_factory=dict)  # layer -> shape


@dataclass
class Pin:
    number: str
    x: float
    y: float
    kind: str  # THRU | SURFACE | BLIND
    shape: Shape | None
    rotation: float


@dataclass
class PadAcc:
    """One footprint pad assembled from its appearances on copper layers."""

    comp: str
    number: str
    x: float
    y: float
    net: int = 0
    shape: Shape | None = None
    rotation: float = 0.0
    padstack: str | None = None
    layers: set[int] = field(default_factory=set)
    layer_names: set[str] = field(default_factory=set)
    #: shapes seen per layer: two pads with one number stacked on one spot are two pads
    per_layer: dict[int, list[Shape | None]] = field(default_factory=dict)
    #: the file's name of each copper layer the pad is on
    names: dict[int, str] = field(default_factory=dict)


@dataclass
class ViaRow:
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
class Bore:
    x: float
    y: float
    drill: float
    span: tuple[int, int] | None
    spec: str | None
    layer: str


def finite_float(raw: str) -> float:
    """``float(raw)``, refusing NaN and infinity (ValueError): a NaN Df or thickness compares
    false with every limit and would turn a failure into a pass."""
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not finite")
    return value


def first_child(elem: Node, name: str) -> Node | None:
    for child in elem:
        if child.tag == name:
            return child
    return None
