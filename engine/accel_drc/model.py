"""The board model every reader produces and every check consumes.

Units, fixed once for the whole engine (readers convert, nobody else does):

* length: millimetres (mm), board coordinates as KiCad writes them (x right, **y down**);
* temperature: °C; resistance/impedance: Ω; frequency: Hz; capacitance: F; inductance: H;
* angles: degrees, counter-clockwise as KiCad shows them.

Copper layers are referred to by their *canonical* KiCad name (``F.Cu``, ``In1.Cu`` … ``B.Cu``)
and by their *stack index* (0 = top, n-1 = bottom).  The numeric layer ids of the file format
changed between KiCad 8 and 9, so the model never stores them.

Bulk geometry (tracks, vias, zone fills, outline) is columnar numpy, not one Python object per
item: a 300 MB training baseboard has over a million track segments, and one frozen dataclass per
segment would cost seconds and gigabytes before any check runs.  Items with rich structure and
modest counts (footprints, pads, zones, stack-up layers) are frozen dataclasses.

Everything is immutable: readers build a board once, analysis derives facts from it, checks read.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np

from .geometry import ring_area
from .hostile import first_full_match, glob_regex

#: KiCad's copper layer types (``(layers (0 "F.Cu" signal) …)``).
COPPER_LAYER_TYPES = ("signal", "power", "mixed", "jumper")

#: Via types, derived from the span (see :func:`via_type_for_span`).
VIA_TYPES = ("through", "blind", "buried", "micro")


class _TextEnum(str, Enum):
    """An enum whose members *are* their text: ``PadType.SMD == "smd"``, JSON writes ``"smd"``,
    and ``str()``/f-strings give ``smd`` on every Python (3.12 changed the mixin's default
    ``__str__``/``__format__`` to the member name).  So code and files written against the
    strings keep working while the model's fields are typed."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class StackupKind(_TextEnum):
    """What a physical layer of the stack-up is."""

    COPPER = "copper"
    CORE = "core"
    PREPREG = "prepreg"
    DIELECTRIC = "dielectric"  # a dielectric whose core/prepreg nature the source does not say
    SOLDERMASK = "soldermask"
    SILKSCREEN = "silkscreen"
    SOLDERPASTE = "solderpaste"


class PadType(_TextEnum):
    """KiCad's pad attribute as written in the file (``(pad "1" smd …)``)."""

    SMD = "smd"
    THRU_HOLE = "thru_hole"
    NP_THRU_HOLE = "np_thru_hole"
    CONNECT = "connect"  # edge-connector finger (KiCad's PAD_ATTRIB::CONN)
    UNKNOWN = "unknown"  # a word KiCad 9 does not write: neither SMD nor plated


class PadShape(_TextEnum):
    """A pad's shape (KiCad writes chamfered rectangles as ``roundrect``)."""

    CIRCLE = "circle"
    RECT = "rect"
    OVAL = "oval"
    ROUNDRECT = "roundrect"
    TRAPEZOID = "trapezoid"
    CUSTOM = "custom"
    UNKNOWN = "unknown"  # a word KiCad 9 does not write


_DIELECTRIC_KINDS = frozenset((StackupKind.CORE, StackupKind.PREPREG, StackupKind.DIELECTRIC))
_PAD_TYPE_OF: dict[str, PadType] = {k.value: k for k in PadType}
_PAD_SHAPE_OF: dict[str, PadShape] = {k.value: k for k in PadShape}

#: Stack-up layer kinds as the model names them.
STACKUP_KINDS = tuple(k.value for k in StackupKind)


def copper_layer_name(index: int, count: int) -> str:
    """Canonical KiCad name of copper layer ``index`` (0 = top) on a board with ``count`` layers."""
    if index == 0:
        return "F.Cu"
    if index == count - 1:
        return "B.Cu"
    return f"In{index}.Cu"


# ---------------------------------------------------------------------------------------------
# Layers and stack-up
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CopperLayer:
    """One copper layer in stack order."""

    index: int  # 0 = top (F.Cu) … n-1 = bottom (B.Cu)
    name: str  # canonical: F.Cu, In1.Cu, …, B.Cu
    user_name: str  # what the designer called it ("GND", "SIG3", …); == name if not renamed
    kind: str = "signal"  # one of COPPER_LAYER_TYPES


@dataclass(frozen=True)
class DielectricSublayer:
    """One ``addsublayer`` slice of a dielectric (or the only slice)."""

    thickness_mm: float | None
    material: str | None
    epsilon_r: float | None
    loss_tangent: float | None


@dataclass(frozen=True)
class StackupLayer:
    """One physical layer of the stack-up, top to bottom.

    For dielectrics ``thickness_mm`` is the sum of the sublayers; ``material``, ``epsilon_r`` and
    ``loss_tangent`` are those of the first sublayer (KiCad's own convention), the other slices
    are in ``sublayers``.  ``None`` means the source does not declare the value: checks report it
    as *cannot verify*, never as a pass.
    """

    name: str  # "F.Cu", "dielectric 1", "F.Mask", …
    kind: StackupKind  # a reader may pass the text ("core"); stored as the enum
    thickness_mm: float | None = None
    material: str | None = None
    epsilon_r: float | None = None
    loss_tangent: float | None = None
    sublayers: tuple[DielectricSublayer, ...] = ()
    copper_index: int | None = None  # stack index for copper layers
    foil: str | None = None  # foil grade (STD, RTF, VLP, HVLP…) where the source declares it
    color: str | None = None
    raw_type: str | None = None  # the type string as the source wrote it
    #: (field, basis) of each value the project config declared over the board's
    #: (``accel-drc.yaml stackup:``, applied by ``analysis.stackup.with_declarations``)
    declared: tuple[tuple[str, str], ...] = ()
    #: the layer as the board file states it, when a config declaration changed it
    board_layer: StackupLayer | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # readers name the kind by its text; every reader maps its source to one of these
        object.__setattr__(self, "kind", StackupKind(self.kind))

    @property
    def is_copper(self) -> bool:
        return self.kind is StackupKind.COPPER

    @property
    def is_dielectric(self) -> bool:
        return self.kind in _DIELECTRIC_KINDS


@dataclass(frozen=True)
class Stackup:
    """The physical stack-up, top (F.SilkS / F.Mask) to bottom."""

    layers: tuple[StackupLayer, ...]
    finish: str | None = None  # copper finish (ENIG, HASL, …)
    impedance_controlled: bool | None = None
    edge_plating: bool | None = None

    def copper(self) -> tuple[StackupLayer, ...]:
        return tuple(layer for layer in self.layers if layer.is_copper)

    def dielectrics(self) -> tuple[StackupLayer, ...]:
        return tuple(layer for layer in self.layers if layer.is_dielectric)

    @property
    def thickness_mm(self) -> float | None:
        """Copper + dielectric (+ mask) thickness; ``None`` if any of those is undeclared."""
        total = 0.0
        for layer in self.layers:
            if layer.kind in ("silkscreen", "solderpaste"):
                continue
            if layer.thickness_mm is None:
                return None
            total += layer.thickness_mm
        return total

    def dielectrics_between(self, upper: int, lower: int) -> tuple[StackupLayer, ...]:
        """Dielectric layers between copper stack indexes ``upper`` < ``lower``."""
        inside = False
        out = []
        for layer in self.layers:
            if layer.is_copper and layer.copper_index == upper:
                inside = True
                continue
            if layer.is_copper and layer.copper_index == lower:
                break
            if inside and layer.is_dielectric:
                out.append(layer)
        return tuple(out)


# ---------------------------------------------------------------------------------------------
# Nets, net classes, diff pairs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NetClass:
    """A KiCad net class (from the ``.kicad_pro``; KiCad 6 boards carry them in the board)."""

    name: str
    clearance_mm: float | None = None
    track_width_mm: float | None = None
    diff_pair_width_mm: float | None = None
    diff_pair_gap_mm: float | None = None
    via_diameter_mm: float | None = None
    via_drill_mm: float | None = None
    priority: int | None = None
    #: the KiCad 10 tuning profile the class names ("" when none)
    tuning_profile: str = ""


@dataclass(frozen=True)
class TuningProfile:
    """A KiCad 10 impedance tuning profile (``.kicad_pro`` ``tuning_profiles``): the designer's
    target impedance and, per signal layer, the width and pair gap that give it (mm; a gap of 0
    or None on every layer: a single-ended profile)."""

    name: str
    target_ohm: float
    differential: bool
    layers: tuple[tuple[str, float | None, float | None], ...] = ()  # (layer, width, gap)
    #: ``enable_time_domain_tuning``: KiCad times this class's tracks by the delays below
    time_domain: bool = False
    #: per signal layer the designer's propagation delay (ps/mm; the file's ``delay`` in as/mm)
    delays: tuple[tuple[str, float], ...] = ()
    #: ``via_prop_delay``: a via's delay per mm of stack-up height it crosses (ps/mm)
    via_ps_per_mm: float | None = None

    def delay_on(self, layer: str) -> float | None:
        """The designer's delay (ps/mm) on ``layer`` when time-domain tuning is on, else None."""
        if not self.time_domain:
            return None
        return next((d for ly, d in self.delays if ly == layer and d > 0), None)


@dataclass(frozen=True)
class DesignRule:
    """One rule of the ``.kicad_dru`` beside the board that constrains a net class (KiCad's
    custom rules): the class glob of its ``A.NetClass == '…'`` condition, its layer selector
    (``inner``, ``outer``, a layer name or "" for every layer) and its constraints in mm as
    (min, opt, max), each None where not written."""

    name: str
    net_class: str  # the glob of the condition (``85Ohm-diff*``)
    layer: str = ""
    track_width: tuple[float | None, float | None, float | None] | None = None
    diff_pair_gap: tuple[float | None, float | None, float | None] | None = None
    diff_pair_uncoupled: tuple[float | None, float | None, float | None] | None = None
    line: int = 0


@dataclass(frozen=True)
class TimingRule:
    """A ``.kicad_dru`` rule with a ``(constraint skew …)`` or ``(constraint length …)``: the
    designer's own skew or length limit for the nets its condition selects.

    ``terms`` are the condition's alternatives (joined by ``||``), each (field, glob) with field
    ``NetClass``, ``NetName`` or ``inDiffPair`` (the pair's base name, without its +/-/P/N);
    ``time`` says the values are picoseconds (KiCad's time domain, ``ps``/``fs`` in the file),
    else millimetres of track.  ``within_diff_pairs``: a skew rule judged between the two nets
    of each pair, not across the whole set."""

    name: str
    kind: str  # skew | length
    terms: tuple[tuple[str, str], ...]
    min: float | None = None
    max: float | None = None
    time: bool = True
    within_diff_pairs: bool = False
    layer: str = ""
    line: int = 0

    @property
    def where(self) -> str:
        """How a finding names the rule: ``.kicad_dru rule "name" (line N)``."""
        return f'.kicad_dru rule "{self.name}" (line {self.line})'

    def limit_text(self) -> str:
        """``5 ps`` / ``0.1 mm`` (the max, else the min)."""
        v = self.max if self.max is not None else self.min
        return f"{v:g} {'ps' if self.time else 'mm'}"


@dataclass(frozen=True)
class NetClassRules:
    """Net classes and how nets are assigned to them."""

    classes: tuple[NetClass, ...] = ()
    patterns: tuple[tuple[str, str], ...] = ()  # (wildcard pattern, class name), in file order
    assignments: Mapping[str, str] = field(default_factory=dict)  # net name -> class name
    #: the ``.kicad_dru`` rules on net classes (readers/kicad_dru.py), in file order
    design_rules: tuple[DesignRule, ...] = ()
    #: KiCad 10 tuning profiles by name (a class names one in ``NetClass.tuning_profile``)
    tuning_profiles: Mapping[str, TuningProfile] = field(default_factory=dict)
    #: the ``.kicad_dru`` skew and length rules (readers/kicad_dru.py), in file order
    timing_rules: tuple[TimingRule, ...] = ()

    def tuning_profile_of(self, net: str) -> TuningProfile | None:
        """The tuning profile ``net``'s class names, or None."""
        nc = self.by_name(self.class_of(net))
        return self.tuning_profiles.get(nc.tuning_profile) if nc and nc.tuning_profile else None

    def class_of(self, net: str) -> str:
        """The net class KiCad would give ``net``: explicit assignment, else first pattern, else Default."""
        if net in self.assignments:
            return self.assignments[net]
        first = self._first()
        if first is not None:  # all patterns in one call (hostile.first_full_match)
            m = first.match(net)
            return "Default" if m is None else self.patterns[int(m.lastgroup[1:])][1]  # type: ignore[index]
        for pattern, cls in self._compiled():
            if pattern.match(net):  # linear: a hostile glob cannot hang the run
                return cls
        return "Default"

    def by_name(self, name: str) -> NetClass | None:
        for cls in self.classes:
            if cls.name == name:
                return cls
        return None

    @functools.cache  # noqa: B019 - frozen, hashable by identity
    def _compiled(self) -> tuple[tuple[re.Pattern[str], str], ...]:
        return tuple((glob_regex(p), c) for p, c in self.patterns)

    @functools.cache  # noqa: B019 - frozen, hashable by identity
    def _first(self) -> re.Pattern[str] | None:
        return first_full_match(rx for rx, _ in self._compiled())

    __hash__ = object.__hash__


@dataclass(frozen=True)
class DiffPair:
    """Two nets KiCad would route as a differential pair (``MatchDpSuffix``)."""

    name: str  # base name, e.g. "/PCIe_TX0"
    positive: int  # net index
    negative: int  # net index


# ---------------------------------------------------------------------------------------------
# Columnar geometry
# ---------------------------------------------------------------------------------------------


def _empty(shape: tuple[int, ...], dtype: object = np.float64) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)


@dataclass(frozen=True, eq=False)
class Tracks:
    """All track segments and arcs, one row each.

    ``mid`` is the arc's mid point (KiCad stores arcs as start/mid/end); NaN for straight segments.
    ``layer`` is the copper stack index, ``net`` the index into :attr:`Board.nets` (0 = no net).
    """

    start: np.ndarray = field(default_factory=lambda: _empty((0, 2)))  # (n, 2) mm
    end: np.ndarray = field(default_factory=lambda: _empty((0, 2)))  # (n, 2) mm
    mid: np.ndarray = field(default_factory=lambda: _empty((0, 2)))  # (n, 2) mm, NaN = segment
    width: np.ndarray = field(default_factory=lambda: _empty((0,)))  # (n,) mm
    layer: np.ndarray = field(default_factory=lambda: _empty((0,), np.int16))  # (n,)
    net: np.ndarray = field(default_factory=lambda: _empty((0,), np.int32))  # (n,)
    uuid: Sequence[str] = ()  # a tuple, or a lazy read-only sequence decoded on access

    def __len__(self) -> int:
        return int(self.width.shape[0])

    @property
    def is_arc(self) -> np.ndarray:
        return ~np.isnan(self.mid[:, 0])

    @property
    def segment_count(self) -> int:
        return int(len(self) - int(self.is_arc.sum()))

    @property
    def arc_count(self) -> int:
        return int(self.is_arc.sum())

    def take(self, rows: np.ndarray) -> Tracks:
        """The tracks ``rows`` as a table of their own (row k is row ``rows[k]`` here)."""
        return replace(
            self,
            start=self.start[rows],
            end=self.end[rows],
            mid=self.mid[rows],
            width=self.width[rows],
            layer=self.layer[rows],
            net=self.net[rows],
            uuid=RowsOf(self.uuid, rows),
        )


class RowsOf(Sequence):
    """``seq[rows[k]]`` for each k, read on access: a lazy uuid sequence stays undecoded (a row
    beyond ``seq`` reads "", as the tables' own uuid sequences do)."""

    def __init__(self, seq: Sequence[str], rows: np.ndarray) -> None:
        self._seq = seq
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN204
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        r = int(self._rows[i])
        return self._seq[r] if r < len(self._seq) else ""


@dataclass(frozen=True)
class Via:
    """One via, as a row view of :class:`Vias` (convenient in checks and reports)."""

    index: int
    x: float
    y: float
    drill_mm: float
    diameter_mm: float
    start: int  # copper stack index, start <= end
    end: int
    net: int
    uuid: str
    type: str  # one of VIA_TYPES
    backdrill: Backdrill | None = None


@dataclass(frozen=True)
class Backdrill:
    """A backdrill (KiCad 10 secondary drill, IPC-2581 ``Backdrill``, or project config).

    ``side`` is the face drilled from (``top`` or ``bottom``); the drill removes the barrel from
    that face down to (but not into) ``must_not_cut`` (a copper stack index).  ``residual_stub_mm``
    is what the fabricator leaves behind (their depth tolerance); ``None`` = not declared.
    """

    side: str
    must_not_cut: int | None = None
    drill_mm: float | None = None
    residual_stub_mm: float | None = None
    max_stub_mm: float | None = None  # IPC-2581 maxStubLength
    source: str = "board"  # board | ipc2581 | config


@dataclass(frozen=True)
class ViaProtection:
    """A via's IPC-4761 protection as the board file states it (KiCad 10: ``(tenting (front yes)
    (back no))``, ``(covering …)``, ``(plugging …)``, ``(filling yes)``, ``(capping yes)``).

    Each field is True (``yes``), False (``no``) or None (not written, or ``none``: the board's
    default applies).  Filled and capped together is IPC-4761 type VII, what a stacked
    microvia needs under the next one."""

    tenting_front: bool | None = None
    tenting_back: bool | None = None
    covering_front: bool | None = None
    covering_back: bool | None = None
    plugging_front: bool | None = None
    plugging_back: bool | None = None
    filling: bool | None = None
    capping: bool | None = None

    @property
    def filled_and_capped(self) -> bool:
        """IPC-4761 type VII: filled and capped (both stated yes)."""
        return bool(self.filling) and bool(self.capping)


def via_type_for_span(start: int, end: int, layer_count: int, micro: bool = False) -> str:
    """KiCad's classification: micro if flagged, through if it spans F.Cu..B.Cu, blind if it
    touches one outer layer, buried otherwise."""
    if micro:
        return "micro"
    top = start == 0
    bottom = end == layer_count - 1
    if top and bottom:
        return "through"
    if top or bottom:
        return "blind"
    return "buried"


@dataclass(frozen=True, eq=False)
class Vias:
    """All vias, one row each.  ``start`` <= ``end`` are copper stack indexes."""

    pos: np.ndarray = field(default_factory=lambda: _empty((0, 2)))  # (n, 2) mm
    drill: np.ndarray = field(default_factory=lambda: _empty((0,)))  # (n,) mm
    diameter: np.ndarray = field(default_factory=lambda: _empty((0,)))  # (n,) mm
    start: np.ndarray = field(default_factory=lambda: _empty((0,), np.int16))
    end: np.ndarray = field(default_factory=lambda: _empty((0,), np.int16))
    net: np.ndarray = field(default_factory=lambda: _empty((0,), np.int32))
    micro: np.ndarray = field(default_factory=lambda: _empty((0,), bool))  # flagged micro
    uuid: Sequence[str] = ()  # a tuple, or a lazy read-only sequence decoded on access
    layer_count: int = 2
    backdrills: Mapping[int, Backdrill] = field(default_factory=dict)  # row -> backdrill
    #: row -> the type the file declares where it is not the span's (KiCad keeps a via written
    #: ``(via blind … (layers "F.Cu" "B.Cu"))`` as blind; its barrel is still F.Cu..B.Cu)
    declared: Mapping[int, str] = field(default_factory=dict)
    #: KiCad's ``(remove_unused_layers yes)``: the via has a pad only on the layers where
    #: something connects to it (``PCB_VIA::FlashLayer``); empty = none removed
    unused_removed: np.ndarray = field(default_factory=lambda: _empty((0,), bool))
    #: KiCad's ``(keep_end_layers yes)``: with the above, the pads on the start and end layers stay
    keep_end: np.ndarray = field(default_factory=lambda: _empty((0,), bool))
    #: row -> the IPC-4761 protection the file states (KiCad 10); rows not here state none
    protection: Mapping[int, ViaProtection] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.drill.shape[0])

    def conditional(self, layers: int) -> np.ndarray:
        """(n, layers) bool: True where the via's pad on that copper layer exists only if
        something connects there (KiCad's ``PCB_VIA::ConditionallyFlashed``); KiCad's own
        connectivity then collides only the drilled hole on that layer, not the pad."""
        n = len(self)
        out = np.zeros((n, layers), bool)
        if self.unused_removed.shape[0] != n or not self.unused_removed.any():
            return out
        out[self.unused_removed, :] = True
        if self.keep_end.shape[0] == n:
            rows = np.flatnonzero(self.unused_removed & self.keep_end)
            out[rows, self.start[rows].astype(np.int64)] = False
            out[rows, self.end[rows].astype(np.int64)] = False
        return out

    def type_of(self, i: int) -> str:
        got = self.declared.get(i)
        if got is not None:
            return got
        return via_type_for_span(
            int(self.start[i]), int(self.end[i]), self.layer_count, bool(self.micro[i])
        )

    @property
    def types(self) -> tuple[str, ...]:
        """:meth:`type_of` of every row (vectorised: a Python loop per row is slow on 10⁵ vias)."""
        n = len(self)
        if n == 0:
            return ()
        start = np.asarray(self.start, np.int64)
        end = np.asarray(self.end, np.int64)
        micro = np.asarray(self.micro, bool) if len(self.micro) == n else np.zeros(n, bool)
        top = start == 0
        bottom = end == self.layer_count - 1
        # 0 buried, 1 blind, 2 through, 3 micro: via_type_for_span's order of tests
        code = np.where(micro, 3, np.where(top & bottom, 2, np.where(top | bottom, 1, 0)))
        names = ("buried", "blind", "through", "micro")
        out = [names[c] for c in code.tolist()]
        for i, t in self.declared.items():
            if t is not None and 0 <= i < n:
                out[i] = t
        return tuple(out)

    def take(self, rows: np.ndarray) -> Vias:
        """The vias ``rows`` as a table of their own (row k is row ``rows[k]`` here; the
        backdrills and declared types follow their vias to the new rows)."""
        new_of = {int(r): k for k, r in enumerate(rows.tolist())}

        def cut(a: np.ndarray) -> np.ndarray:
            return a[rows] if a.shape[0] == len(self) else a  # an empty optional column stays

        return replace(
            self,
            pos=self.pos.reshape(-1, 2)[rows],
            drill=cut(self.drill),
            diameter=cut(self.diameter),
            start=cut(self.start),
            end=cut(self.end),
            net=cut(self.net),
            micro=cut(self.micro),
            uuid=RowsOf(self.uuid, rows),
            backdrills={new_of[r]: b for r, b in self.backdrills.items() if r in new_of},
            declared={new_of[r]: t for r, t in self.declared.items() if r in new_of},
            protection={new_of[r]: p for r, p in self.protection.items() if r in new_of},
            unused_removed=cut(self.unused_removed),
            keep_end=cut(self.keep_end),
        )

    def __getitem__(self, i: int) -> Via:
        return Via(
            index=i,
            x=float(self.pos[i, 0]),
            y=float(self.pos[i, 1]),
            drill_mm=float(self.drill[i]),
            diameter_mm=float(self.diameter[i]),
            start=int(self.start[i]),
            end=int(self.end[i]),
            net=int(self.net[i]),
            uuid=self.uuid[i] if i < len(self.uuid) else "",
            type=self.type_of(i),
            backdrill=self.backdrills.get(i),
        )

    def __iter__(self) -> Iterator[Via]:
        for i in range(len(self)):
            yield self[i]


# ---------------------------------------------------------------------------------------------
# Zones, footprints, pads, outline
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CopperShape:
    """A board-level graphic on a copper layer (``gr_line``/``gr_rect``/``gr_poly``/``gr_arc``/
    ``gr_circle`` on ``F.Cu`` …): copper that KiCad's connectivity joins like a track or a fill
    (an SMA launch drawn as a 2.2 mm line, a filled rectangle bridging a USB-C shell's pads).

    ``rings``: the copper area as an exterior ring then its holes, (n, 2) arrays in mm, the
    stroke width already added (a line is its round-ended band; an unfilled rectangle or circle
    is its outline band).  ``net``: the ``(net N)`` KiCad 8+ writes, 0 where the file gives
    none (KiCad then gives it the net of the pads it touches: :mod:`.analysis.connectivity`)."""

    layer: int  # copper stack index
    net: int
    rings: tuple[np.ndarray, ...]
    uuid: str = ""


@dataclass(frozen=True, eq=False)
class Zone:
    """A copper zone.  ``filled`` maps copper stack index -> filled polygons, each an (n, 2)
    array (KiCad writes holes into the outline with bridging edges; ``shapely.make_valid`` or
    ``buffer(0)`` turns them into proper polygons)."""

    net: int
    net_name: str
    layers: tuple[int, ...]  # copper stack indexes the zone is on
    priority: int = 0
    outline: np.ndarray = field(default_factory=lambda: _empty((0, 2)))
    filled: Mapping[int, tuple[np.ndarray, ...]] = field(default_factory=dict)
    name: str = ""
    uuid: str = ""
    keepout: bool = False
    min_thickness_mm: float | None = None

    def region(self, layer: int) -> Any:
        """The fill on ``layer`` as one valid shapely geometry (None where the zone has no fill
        there), computed once per zone and layer.

        KiCad writes a fill's holes into its outline with zero-width bridges; ``buffer(0)``
        turns such a ring into the polygon-with-holes it means (much faster than ``make_valid``
        on large planes, same area).  Cached on the zone because several
        analyses need it (each rail's planes, the ground union) and because the KiCad plugin
        warms it on a second thread while it waits for KiCad to send the footprints; a per-zone
        lock makes a thread that asks meanwhile wait for that result instead of redoing it."""
        cache: dict[int, Any] = self.__dict__.setdefault("_regions", {})
        if layer in cache:
            return cache[layer]
        with self.__dict__.setdefault("_regions_lock", threading.Lock()):
            if layer in cache:
                return cache[layer]
            import shapely

            rings = [np.asarray(r, dtype=float) for r in self.filled.get(layer, ()) if len(r) >= 3]
            got = None
            if rings:
                polys = shapely.polygons([shapely.linearrings(r) for r in rings])
                polys = shapely.buffer(polys, 0)
                got = polys[0] if len(polys) == 1 else shapely.union_all(polys)
            cache[layer] = got
            return got

    def fill_polygons(self, layer: int, index: bool = False) -> tuple[Any, ...]:
        """The fill rings on ``layer`` (of 3 points or more) as prepared shapely polygons, one
        per ring as the file gives it (:func:`~accel_drc.geometry.fill_polygons`: the bridges
        kept, no union), computed once per zone and layer: the return-path check's point
        tests run on them.  ``index``: when this call builds them, also build each polygon's
        point-in-area index (GEOS builds it at the first point test otherwise: about 8 ms for a
        120k-vertex plane), for a caller that has the time before the check, as the KiCad
        plugin has while KiCad sends the footprints.

        Threads: the polygons are built, and indexed, under a per-zone lock, so a thread that
        asks meanwhile waits for them and gets them indexed; polygons another caller built
        first are never indexed here (GEOS builds a prepared geometry's index lazily, and two
        threads must not build the same one)."""
        cache: dict[int, tuple[Any, ...]] = self.__dict__.setdefault("_fill_polygons", {})
        got = cache.get(layer)
        if got is not None:
            return got
        with self.__dict__.setdefault("_fill_polygons_lock", threading.Lock()):
            got = cache.get(layer)
            if got is not None:
                return got
            import shapely

            from .geometry import fill_polygons

            rings = [np.asarray(r, dtype=float) for r in self.filled.get(layer, ()) if len(r) >= 3]
            got = tuple(fill_polygons(rings)) if rings else ()
            if index:
                for poly, ring in zip(got, rings):
                    # GEOS answers a prepared polygon's first point test by a scan and builds
                    # the index at the second (measured with GEOS 3.14): two tests build it
                    shapely.contains_xy(poly, np.repeat(ring[:1, 0], 2), np.repeat(ring[:1, 1], 2))
            cache[layer] = got  # last: another thread sees finished polygons or none
            return got

    def filled_area_mm2(self, layer: int) -> float:
        """Shoelace area of the filled polygons on ``layer`` (bridged holes cancel out)."""
        return sum(ring_area(poly) for poly in self.filled.get(layer, ()))


@dataclass(frozen=True)
class Pad:
    """A footprint pad in board coordinates."""

    number: str
    net: int  # index into Board.nets
    type: PadType  # a reader may pass the text ("smd"); stored as the enum
    shape: PadShape  # likewise ("roundrect")
    x: float
    y: float
    width: float
    height: float
    rotation: float = 0.0
    drill_mm: float | None = None  # round drill diameter, or the smaller slot dimension
    copper_layers: tuple[int, ...] = ()  # copper stack indexes the pad has copper on
    layers: tuple[str, ...] = ()  # layer names as written ("*.Cu", "F.Mask", …)
    uuid: str = ""
    #: the schematic pin's name and electrical type (KiCad 6+ ``pinfunction`` / ``pintype``):
    #: a DRAM's ball name (``DQS_t``), a connector's contact (``SBU1``); "" when not written
    pin_function: str = ""
    pin_type: str = ""
    #: pad-to-die length (KiCad ``(die_length mm)``) and delay (KiCad 10 ``(die_delay ps)``):
    #: the package's share of the net, which the skew check adds to the routed delay
    die_length_mm: float | None = None
    die_delay_ps: float | None = None
    #: a custom pad's copper (KiCad ``custom`` shape: its anchor pad joined with its
    #: ``(primitives …)``, stroke widths added) as closed rings in the pad's own frame (mm from
    #: the pad's position, before its rotation); () for every other shape
    custom: tuple[np.ndarray, ...] = ()

    def __post_init__(self) -> None:
        # readers pass the file's words; a word KiCad 9 does not write is UNKNOWN, not an error
        # (a hostile or future file must not stop the read).  Dict look-ups: a board has 10⁵ pads.
        object.__setattr__(self, "type", _PAD_TYPE_OF.get(self.type, PadType.UNKNOWN))
        object.__setattr__(self, "shape", _PAD_SHAPE_OF.get(self.shape, PadShape.UNKNOWN))


@dataclass(frozen=True)
class Footprint:
    reference: str
    value: str
    name: str  # library id, e.g. "Capacitor_SMD:C_0402_1005Metric"
    layer: str  # "F.Cu" or "B.Cu"
    x: float
    y: float
    rotation: float = 0.0
    attributes: tuple[str, ...] = ()  # smd, through_hole, board_only, exclude_from_bom, dnp, …
    pads: tuple[Pad, ...] = ()
    uuid: str = ""
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Outline:
    """Board outline from Edge.Cuts (board graphics and footprint edge cuts), arcs and circles
    flattened to polylines.  ``rings`` are closed where the drawing closes; ``bbox`` is
    (xmin, ymin, xmax, ymax) over all Edge.Cuts geometry (KiCad's board-size convention)."""

    rings: tuple[np.ndarray, ...] = ()
    bbox: tuple[float, float, float, float] | None = None

    @property
    def size_mm(self) -> tuple[float, float] | None:
        if self.bbox is None:
            return None
        return (self.bbox[2] - self.bbox[0], self.bbox[3] - self.bbox[1])


@dataclass(frozen=True)
class DesignSettings:
    """Board design settings that change what a check may assume."""

    allow_blind_buried_vias: bool | None = None
    allow_microvias: bool | None = None
    min_via_drill_mm: float | None = None
    min_track_width_mm: float | None = None


# ---------------------------------------------------------------------------------------------
# The board
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Board:
    """One board, whatever it was read from."""

    source: str  # path or description ("live KiCad: board.kicad_pcb")
    format: str  # kicad_pcb | ipc2581 | kipy
    copper_layers: tuple[CopperLayer, ...]
    stackup: Stackup | None = None
    board_thickness_mm: float | None = None  # (general (thickness)) or the stack-up sum
    outline: Outline = field(default_factory=Outline)
    nets: tuple[str, ...] = ("",)  # index 0 = no net
    net_classes: NetClassRules = field(default_factory=NetClassRules)
    tracks: Tracks = field(default_factory=Tracks)
    vias: Vias = field(default_factory=Vias)
    zones: tuple[Zone, ...] = ()
    footprints: tuple[Footprint, ...] = ()
    #: board-level graphics on copper layers, joined as copper (:class:`CopperShape`)
    copper_shapes: tuple[CopperShape, ...] = ()
    text_variables: Mapping[str, str] = field(default_factory=dict)
    design: DesignSettings = field(default_factory=DesignSettings)
    file_version: int | None = None
    generator: str | None = None
    project_file: str | None = None  # the .kicad_pro read beside the board, if any
    warnings: tuple[str, ...] = ()  # reader warnings (unknown nodes, missing .kicad_pro, …)
    #: facts the source format cannot carry, so their absence states nothing (docs/ipc2581.md):
    #: ``pin_names`` (no schematic pin names: IPC-2581), ``unprotected_vias`` (a via's IPC-4761
    #: protection is listed only where present, never "no": IPC-2581)
    not_carried: tuple[str, ...] = ()

    # -- derived, cached (frozen dataclasses still have a __dict__ for cached_property) --------

    @property
    def layer_count(self) -> int:
        return len(self.copper_layers)

    @functools.cached_property
    def net_index(self) -> Mapping[str, int]:
        return {name: i for i, name in enumerate(self.nets)}

    def layer_index(self, name: str) -> int | None:
        """Stack index of a copper layer by canonical or user name."""
        for layer in self.copper_layers:
            if layer.name == name or layer.user_name == name:
                return layer.index
        return None

    def layer_name(self, index: int) -> str:
        return self.copper_layers[index].name

    @functools.cached_property
    def diff_pairs(self) -> tuple[DiffPair, ...]:
        return find_diff_pairs(self.nets)

    @property
    def pads(self) -> Iterator[tuple[Footprint, Pad]]:
        for fp in self.footprints:
            for pad in fp.pads:
                yield fp, pad

    @property
    def pad_count(self) -> int:
        return sum(len(fp.pads) for fp in self.footprints)

    @property
    def named_net_count(self) -> int:
        return sum(1 for n in self.nets if n)


# ---------------------------------------------------------------------------------------------
# Differential pairs (KiCad's MatchDpSuffix)
# ---------------------------------------------------------------------------------------------


def dp_base(net: str) -> tuple[str, str, int] | None:
    """Split ``net`` like KiCad's ``MatchDpSuffix``: (base, suffix, +1 | -1) or None.

    KiCad walks back over trailing digits and underscores, then wants ``+``/``P`` (positive) or
    ``-``/``N`` (negative); so ``USB_D+``, ``PCIE_TX0_P``, ``CLK_P1`` and ``DP_N_2`` all pair, each
    with the net that has the other polarity character and the same base and suffix.
    """
    i = len(net) - 1
    while i >= 0 and (net[i].isdigit() or net[i] == "_"):
        i -= 1
    if i < 0:
        return None
    polarity = {"+": 1, "P": 1, "-": -1, "N": -1}.get(net[i])
    if polarity is None:
        return None
    return net[:i], net[i + 1 :], polarity


#: JEDEC's true/complement names (JESD79-4, JESD209-4): ``CK_t``/``CK_c``, ``DQS0_t``/``DQS0_c``,
#: ``WCK_t``/``WCK_c``; only clock and strobe names, so an ``X_T``/``X_C`` pair of anything else
#: is left alone.
#: LPDDR4 channel names append the channel: ``CK_TA``/``CK_CA``, ``DQ_S0_TA``/``DQ_S0_CA``, or
#: ``CK_T_A``/``CK_C_A`` (Antmicro's LPDDR4 test bed).
_JEDEC_DP = re.compile(
    r"^(.*(?:dqs|dq_s|ck|clk|strobe)[a-z0-9]*)_([tc])(\d*|_?[ab])$", re.IGNORECASE
)


def _jedec_pairs(nets: Sequence[str], taken: set[int]) -> list[DiffPair]:
    """Pairs KiCad's ``MatchDpSuffix`` does not see: JEDEC ``_t`` (true) / ``_c`` (complement)."""
    halves: dict[tuple[str, str, str], int] = {}
    for i, name in enumerate(nets):
        m = _JEDEC_DP.match(name) if name and i not in taken else None
        if m:
            halves[(m.group(1), m.group(2).lower(), m.group(3))] = i
    return [
        DiffPair(name=base + digits, positive=p, negative=halves[(base, "c", digits)])
        for (base, tc, digits), p in halves.items()
        if tc == "t" and (base, "c", digits) in halves
    ]


def find_diff_pairs(nets: Sequence[str]) -> tuple[DiffPair, ...]:
    """All (positive, negative) net pairs, sorted by name."""
    positives: dict[tuple[str, str], int] = {}
    negatives: dict[tuple[str, str], int] = {}
    for i, name in enumerate(nets):
        got = dp_base(name) if name else None
        if got is None:
            continue
        base, suffix, polarity = got
        (positives if polarity > 0 else negatives)[(base, suffix)] = i
    pairs = [
        DiffPair(name=(base + suffix).rstrip("_") or nets[p], positive=p, negative=negatives[key])
        for key, p in positives.items()
        if key in negatives
        for base, suffix in (key,)
    ]
    pairs += _jedec_pairs(nets, {i for d in pairs for i in (d.positive, d.negative)})
    pairs.sort(key=lambda d: d.name)
    return tuple(pairs)
