"""The live reader: the board open in KiCad, over the IPC API (kipy), as an accel-drc ``Board``.

It produces the same :class:`accel_drc.model.Board` the file reader produces from the saved
``.kicad_pcb``, but from the editor's memory, so unsaved edits are checked as the user sees them.

Speed matters (the plugin promises a report within seconds of the click on a 69 MB board), so
items are read from their protobuf messages directly rather than through kipy's per-property
wrappers, and bulk geometry goes straight into numpy columns.

The stack-up is the one wrinkle.  KiCad 9.0.x's ``GetBoardStackup`` leaves dielectric material,
εr and loss tangent empty (fixed in KiCad 10).  The complete stack-up is in the board text, but
``board.get_as_string()`` serialises the whole board (≈ 4 s on vme-wren), which alone would blow
the time budget.  So, in order:

1. the API's stack-up, when it is complete (KiCad 10);
2. the stack-up parsed from ``board.get_as_string()`` (always right, unsaved edits included),
   for every board whose saved file is under :data:`STRING_MAX_BYTES` (milliseconds to a second);
3. on bigger boards, the stack-up of the saved file when its layers and thicknesses equal the
   live ones (reading the file's header costs milliseconds).  KiCad 9's API cannot say whether a
   dielectric's material or εr was edited since the save, so this is said in ``Board.warnings``
   (printed and shown in the report): save the board to have such edits checked;
4. otherwise ``get_as_string()`` whatever the size.

``stackup="string"`` forces 2/4, ``stackup="file"`` 3 and ``stackup="api"`` 1; where it came from
is logged, and recorded in ``Board.warnings`` when it may miss unsaved edits.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from accel_drc.geometry import (
    arc_bbox_nm,
    arc_points,
    bezier_points,
    bridge_holes,
    circle_points,
    outline_rings,
)
from accel_drc.model import (
    Backdrill,
    Board,
    CopperLayer,
    DesignSettings,
    DielectricSublayer,
    Footprint,
    NetClass,
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
from accel_drc.readers.sexpr import find_balanced

from .connection import board_path, connect, open_board, retry
from .fetch import BoardRequests, Timer, start_requests

log = logging.getLogger(__name__)

NM_PER_MM = 1e6  # KiCad API lengths are int nanometres; x / 1e6 rounds like the file's decimal mm

#: KiCad's stack-up type names for the outer non-copper layers, by canonical layer name
_OUTER_KINDS = {
    "F.SilkS": "silkscreen",
    "B.SilkS": "silkscreen",
    "F.Paste": "solderpaste",
    "B.Paste": "solderpaste",
    "F.Mask": "soldermask",
    "B.Mask": "soldermask",
}

_PAD_TYPES = {
    "PT_PTH": "thru_hole",
    "PT_SMD": "smd",
    "PT_NPTH": "np_thru_hole",
    "PT_EDGE_CONNECTOR": "connect",  # KiCad's PAD_ATTRIB::CONN, written "connect" in the file
}
_PAD_SHAPES = {
    "PSS_CIRCLE": "circle",
    "PSS_RECTANGLE": "rect",
    "PSS_OVAL": "oval",
    "PSS_TRAPEZOID": "trapezoid",
    "PSS_ROUNDRECT": "roundrect",
    "PSS_CHAMFEREDRECT": "roundrect",  # the file format writes chamfered rects as roundrect
    "PSS_CUSTOM": "custom",
}

#: KiCad's pin-type words (the file's ``pintype``, ``GetCanonicalElectricalTypeName``) by the
#: API's ``ElectricalPinType`` name
_PIN_TYPES = {
    "EPT_INPUT": "input",
    "EPT_OUTPUT": "output",
    "EPT_BIDIRECTIONAL": "bidirectional",
    "EPT_TRISTATE": "tri_state",
    "EPT_PASSIVE": "passive",
    "EPT_FREE": "free",
    "EPT_UNSPECIFIED": "unspecified",
    "EPT_POWER_INPUT": "power_in",
    "EPT_POWER_OUTPUT": "power_out",
    "EPT_OPEN_COLLECTOR": "open_collector",
    "EPT_OPEN_EMITTER": "open_emitter",
    "EPT_NO_CONNECT": "no_connect",
}
#: a via's IPC-4761 protection as the API states it (``PADSTACK::Serialize``: a mode is sent
#: only when the padstack states it; ``*_FROM_DESIGN_RULES``/``*_UNKNOWN`` = not stated) ->
#: the file's yes/no.  SMM_MASKED is the file's ``(tenting (front yes))``.
_PROTECTION_MODES = {
    "SMM_MASKED": True,
    "SMM_UNMASKED": False,
    "VCM_COVERED": True,
    "VCM_UNCOVERED": False,
    "VPM_PLUGGED": True,
    "VPM_UNPLUGGED": False,
    "VDFM_FILLED": True,
    "VDFM_UNFILLED": False,
    "VDCM_CAPPED": True,
    "VDCM_UNCAPPED": False,
}
#: the enum-name -> word tables :func:`enum_words` serves, by kind
_WORDS: dict[str, Mapping[str, Any]] = {
    "protection": _PROTECTION_MODES,
    "pin": _PIN_TYPES,
    "pad type": _PAD_TYPES,
    "pad shape": _PAD_SHAPES,
}


# ---------------------------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------------------------


class LayerMap:
    """KiCad API layer ids <-> copper stack indexes and canonical names."""

    def __init__(self, copper_count: int) -> None:
        from kipy.proto.board.board_types_pb2 import BoardLayer
        from kipy.util.board_layer import CANONICAL_LAYER_NAMES

        self.count = copper_count
        self.names: dict[int, str] = dict(CANONICAL_LAYER_NAMES)
        self.index: dict[int, int] = {BoardLayer.BL_F_Cu: 0, BoardLayer.BL_B_Cu: copper_count - 1}
        for i in range(1, copper_count - 1):
            self.index[BoardLayer.Value(f"BL_In{i}_Cu")] = i
        self.edge_cuts = BoardLayer.BL_Edge_Cuts

    def copper(self, layer: int) -> int | None:
        return self.index.get(layer)

    def name(self, layer: int) -> str:
        return self.names.get(layer, str(layer))


# ---------------------------------------------------------------------------------------------
# The saved file's header (layer kinds, stack-up, version) — cheap, and the 9.0.8 workaround
# ---------------------------------------------------------------------------------------------


def _top_block(text: str, name: str) -> str | None:
    """The top-level ``(name …)`` block of a board text (balanced by the engine's
    :func:`accel_drc.readers.sexpr.find_balanced`); None if absent or cut off."""
    m = re.search(r"\(\s*" + re.escape(name) + r"[\s)]", text)
    if not m:
        return None
    data = text[m.start() :].encode("utf-8", "surrogatepass")
    try:
        end = find_balanced(data, 0)
    except ValueError:  # cut off (a header read in chunks)
        return None
    return data[:end].decode("utf-8", "surrogatepass")


def read_file_header(path: str, limit: int = 8 << 20) -> str | None:
    """A small, balanced board text holding the saved file's ``version``, ``general``,
    ``layers`` and ``setup`` (which has the stack-up): enough for ``parse_stackup``, read from
    the first kilobytes of the file instead of the whole file."""
    if not path or not os.path.isfile(path):
        return None
    chunk = 1 << 18
    text = ""
    with open(path, encoding="utf-8", errors="replace") as fh:
        while len(text) < limit:
            more = fh.read(chunk)
            text += more
            setup = _top_block(text, "setup")
            if setup is not None or not more:
                break
            chunk *= 2
    parts = ["(kicad_pcb"]
    version = re.search(r"\(version\s+(\d+)\)", text[:4096])
    if version:
        parts.append(version.group())
    for name in ("general", "layers", "setup"):
        block = _top_block(text, name)
        if block is None and name in ("layers",):
            return None
        if block is not None:
            parts.append(block)
    parts.append(")")
    return "\n".join(parts)


_LAYER_DECL = re.compile(r'\(\s*(\d+)\s+"?([^"\s()]+)"?\s+(\w+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\)')


def layer_kinds(header: str) -> dict[str, str]:
    """Canonical copper layer name -> its type (signal/power/mixed/jumper) from ``(layers …)``."""
    block = _top_block(header, "layers") or ""
    return {
        m.group(2): m.group(3) for m in _LAYER_DECL.finditer(block) if m.group(2).endswith(".Cu")
    }


def file_version(header: str | None) -> int | None:
    m = re.search(r"\(version\s+(\d+)\)", header or "")
    return int(m.group(1)) if m else None


def general_thickness(header: str | None) -> float | None:
    block = _top_block(header or "", "general") or ""
    m = re.search(r"\(thickness\s+([-\d.eE+]+)\)", block)
    return float(m.group(1)) if m else None


# ---------------------------------------------------------------------------------------------
# Stack-up
# ---------------------------------------------------------------------------------------------


def _api_fills_dielectrics(proto: Any) -> bool:
    """Whether KiCad filled the dielectrics' properties (10.x does; 9.0.x sends every material,
    εr and tanδ empty).  Only then is a zero a value the user set (an explicit
    ``(loss_tangent 0)``), not "not sent"."""
    from kipy.proto.board import board_pb2

    return any(
        p.material_name or p.epsilon_r
        for layer in proto.layers
        if layer.type == board_pb2.BSLT_DIELECTRIC
        for p in layer.dielectric.layer
    )


def stackup_from_api(api_stackup: Any, layers: LayerMap) -> Stackup:
    """Translate ``board.get_stackup()`` into the model (complete on KiCad 10; on 9.0.x the
    dielectric material/εr/tanδ come back empty and stay ``None`` here: unknown, not zero).
    The finish "None" is no finish, as the file reader has it (:func:`finish_name`)."""
    from accel_drc.readers.kicad_stackup import finish_name
    from kipy.proto.board import board_pb2

    filled = _api_fills_dielectrics(api_stackup.proto)
    out: list[StackupLayer] = []
    n_diel = 0
    for layer in api_stackup.proto.layers:
        t = layer.type
        thickness = layer.thickness.value_nm / NM_PER_MM
        if t == board_pb2.BSLT_COPPER:
            idx = layers.copper(layer.layer)
            out.append(
                StackupLayer(
                    name=layers.name(layer.layer),
                    kind="copper",
                    thickness_mm=thickness,
                    copper_index=idx,
                    material=None,
                    raw_type="copper",
                )
            )
        elif t == board_pb2.BSLT_DIELECTRIC:
            n_diel += 1
            subs = []
            for p in layer.dielectric.layer:
                subs.append(
                    DielectricSublayer(
                        thickness_mm=p.thickness.value_nm / NM_PER_MM
                        if p.HasField("thickness")
                        else None,
                        material=p.material_name or None,
                        epsilon_r=p.epsilon_r or None,
                        # εr 0 is no material; tanδ 0 is one (a lossless dielectric)
                        loss_tangent=p.loss_tangent if filled else None,
                    )
                )
            kind = {
                board_pb2.BSDT_CORE: "core",
                board_pb2.BSDT_PREPREG: "prepreg",
            }.get(layer.dielectric.type, "dielectric")
            total = sum(s.thickness_mm or 0.0 for s in subs) if subs else thickness
            first = subs[0] if subs else DielectricSublayer(thickness, None, None, None)
            out.append(
                StackupLayer(
                    name=f"dielectric {n_diel}",
                    kind=kind,
                    thickness_mm=total,
                    material=first.material,
                    epsilon_r=first.epsilon_r,
                    loss_tangent=first.loss_tangent,
                    sublayers=tuple(subs),
                    raw_type=kind,
                )
            )
        else:
            name = layers.name(layer.layer)
            kind = _OUTER_KINDS.get(name)
            if kind is None:
                continue
            out.append(
                StackupLayer(
                    name=name,
                    kind=kind,
                    thickness_mm=thickness if kind == "soldermask" else (thickness or None),
                    material=layer.material_name or None,
                    raw_type=kind,
                )
            )
    finish = finish_name(api_stackup.proto.finish.type_name)
    return Stackup(
        layers=tuple(out),
        finish=finish,
        impedance_controlled=api_stackup.proto.impedance.is_controlled,
        edge_plating=api_stackup.proto.edge.plating.has_edge_plating,
    )


def api_stackup_complete(stackup: Stackup) -> bool:
    """KiCad 10 fills dielectric properties; 9.0.x leaves every one of them empty."""
    diels = stackup.dielectrics()
    return bool(diels) and any(
        d.material is not None or d.epsilon_r is not None or d.loss_tangent is not None
        for d in diels
    )


def _structure(stackup: Stackup | None) -> list[tuple[str, int]]:
    """The stack-up's copper/dielectric sequence with thicknesses (µm): what an edit changes."""
    if stackup is None:
        return []
    out = []
    for layer in stackup.layers:
        if layer.is_copper or layer.is_dielectric:
            kind = "copper" if layer.is_copper else "dielectric"
            out.append((kind, round((layer.thickness_mm or 0.0) * 1000)))
    return out


def _parse_stackup(text: str) -> Stackup | None:
    from accel_drc.readers.kicad_file import parse_stackup

    return parse_stackup(text)


# ---------------------------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------------------------


def _xy(v: Any) -> tuple[float, float]:
    return (v.x_nm / NM_PER_MM, v.y_nm / NM_PER_MM)


def _arc_xy(arc: Any) -> list[tuple[float, float]]:
    """A start/mid/end arc proto flattened with the engine's one chord tolerance."""
    return arc_points(_xy(arc.start), _xy(arc.mid), _xy(arc.end))


def _polyline(poly: Any) -> list[tuple[float, float]]:
    pts: list[tuple[float, float]] = []
    for node in poly.nodes:
        if node.HasField("point"):
            pts.append(_xy(node.point))
        elif node.HasField("arc"):
            pts.extend(_arc_xy(node.arc)[:-1])
            pts.append(_xy(node.arc.end))
    return pts


def _point_ring(data: bytes, n: int | None = None) -> np.ndarray | None:
    """The vertices of a serialised point-only PolyLine as an (n, 2) float array in mm, or None
    when the bytes are anything else (see :func:`_ring_nm`).

    Such a PolyLine is ``[10, node_len, 10, pt_len, 8, x, 16, y] * n`` (+ ``[16, closed]``), all
    varints; the shape is checked exactly, lengths included (``node_len = 1 + pt_len's size +
    pt_len``, ``pt_len`` the bytes of the four varints after it), so anything else (an arc
    node, a zero coordinate proto3 leaves out) is refused.  Only x and y are decoded in full:
    the tags and lengths are single bytes whenever the shape holds."""
    a = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(a < 0x80)
    size = ends.size
    if n is None:
        n = size // 8
    if n == 0 or size not in (8 * n, 8 * n + 2) or (size and ends[-1] != a.size - 1):
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lens = ends - starts + 1
    one = lens[: 8 * n].reshape(n, 8)
    if not (one[:, :5] == 1).all() or not (one[:, 6] == 1).all():
        return None
    byte = a[starts[: 8 * n]].reshape(n, 8)
    if not (
        (byte[:, 0] == 10).all()
        and (byte[:, 2] == 10).all()
        and (byte[:, 4] == 8).all()
        and (byte[:, 6] == 16).all()
    ):
        return None
    pt_len = byte[:, 3].astype(np.int64)
    if not (pt_len == 2 + one[:, 5] + one[:, 7]).all():
        return None
    if not (byte[:, 1].astype(np.int64) == 2 + pt_len).all():
        return None
    if size == 8 * n + 2 and not (lens[-2] == 1 and a[starts[-2]] == 16):
        return None
    out = np.zeros((n, 2), dtype=np.uint64)
    for col, k in ((0, 5), (1, 7)):
        st = starts[k : 8 * n : 8]
        ln = lens[k : 8 * n : 8]
        vals = (a[st] & 0x7F).astype(np.uint64)
        for j in range(1, int(ln.max())):
            more = np.flatnonzero(ln > j)
            vals[more] |= (a[st[more] + j] & 0x7F).astype(np.uint64) << np.uint64(7 * j)
        out[:, col] = vals
    return out.view(np.int64) / NM_PER_MM


def _ring_nm(poly: Any) -> np.ndarray:
    """A PolyLine (a message, or its serialised bytes) as an (n, 2) float array in mm.

    Zone fills have hundreds of thousands of vertices on big boards, and reading them node by
    node through the protobuf API costs about a microsecond each.  A point-only PolyLine
    serialises as the varint sequence ``[10, len, 10, len, 8, x, 16, y] * n`` (+ ``[16, 1]``
    when closed): decode it in one go and check that shape exactly; anything else (arcs, a zero
    coordinate that proto3 leaves out) takes the node-by-node path."""
    if isinstance(poly, (bytes, bytearray)):
        pts = _point_ring(bytes(poly))
        if pts is not None:
            return pts
        from kipy.proto.common.types import base_types_pb2

        msg = base_types_pb2.PolyLine()
        msg.ParseFromString(bytes(poly))
        poly = msg
    elif len(poly.nodes):
        pts = _point_ring(poly.SerializeToString(), len(poly.nodes))
        if pts is not None:
            return pts
    return np.asarray(_polyline(poly), dtype=np.float64).reshape(-1, 2)


def _bridged(polygon: Any) -> np.ndarray:
    """One polygon-with-holes as a single ring with bridging edges, as the file format writes
    zone fills (so areas and shapely treat every reader's fills the same)."""
    outline = _ring_nm(polygon.outline)
    if not polygon.holes or len(outline) == 0:
        return outline
    return bridge_holes(outline, [_ring_nm(hole) for hole in polygon.holes])


def _arc_box(arc: Any) -> list[tuple[int, int]]:
    """The arc's bounding-box points as pcbnew computes them (its centre snapping included),
    so the live board's size equals the file's to the nanometre; the ends alone for an arc
    KiCad itself cannot place a centre on."""
    ends = [(p.x_nm, p.y_nm) for p in (arc.start, arc.mid, arc.end)]
    try:
        return arc_bbox_nm(ends[0], ends[1], ends[2])
    except (ValueError, ZeroDivisionError):
        return [ends[0], ends[2]]


def _shape_paths(
    geo: Any, bbox_nm: list[tuple[int, int]]
) -> list[tuple[list[tuple[float, float]], bool]]:
    """Flattened paths of one GraphicShape proto: [(points, closed)].  The shape's bounding box,
    inflated by half its line width like ``BOARD::GetBoardEdgesBoundingBox()``, goes to
    ``bbox_nm`` (two corners, integer nanometres as KiCad has them)."""
    which = geo.WhichOneof("geometry")
    half = max(0, geo.attributes.stroke.width.value_nm) // 2
    paths: list[tuple[list[tuple[float, float]], bool]] = []
    pts_nm: list[tuple[int, int]] = []
    if which == "segment":
        g = geo.segment
        paths = [([_xy(g.start), _xy(g.end)], False)]
        pts_nm = [(g.start.x_nm, g.start.y_nm), (g.end.x_nm, g.end.y_nm)]
    elif which == "arc":
        paths = [(_arc_xy(geo.arc), False)]
        pts_nm = _arc_box(geo.arc)
    elif which == "circle":
        c, rp = geo.circle.center, geo.circle.radius_point
        r = round(math.hypot(rp.x_nm - c.x_nm, rp.y_nm - c.y_nm))
        paths = [(circle_points(_xy(c), r / NM_PER_MM), True)]
        pts_nm = [(c.x_nm - r, c.y_nm - r), (c.x_nm + r, c.y_nm + r)]
    elif which == "rectangle":
        tl, br = geo.rectangle.top_left, geo.rectangle.bottom_right
        (x1, y1), (x2, y2) = _xy(tl), _xy(br)
        paths = [([(x1, y1), (x2, y1), (x2, y2), (x1, y2), (x1, y1)], True)]
        pts_nm = [(tl.x_nm, tl.y_nm), (br.x_nm, br.y_nm)]
    elif which == "polygon":
        for pwh in geo.polygon.polygons:
            pts = _polyline(pwh.outline)
            if pts:
                paths.append((pts + [pts[0]], True))
                pts_nm += [(round(x * NM_PER_MM), round(y * NM_PER_MM)) for x, y in pts]
    elif which == "bezier":
        b = geo.bezier
        pts = bezier_points([_xy(b.start), _xy(b.control1), _xy(b.control2), _xy(b.end)])
        paths = [(pts, False)]
        pts_nm = [(round(x * NM_PER_MM), round(y * NM_PER_MM)) for x, y in pts]
    if pts_nm:
        xs = [q[0] for q in pts_nm]
        ys = [q[1] for q in pts_nm]
        bbox_nm.append((min(xs) - half, min(ys) - half))
        bbox_nm.append((max(xs) + half, max(ys) + half))
    return paths


# ---------------------------------------------------------------------------------------------
# Raw items: kipy's get_items() builds a wrapper per item (a footprint wrapper unpacks and
# repacks every pad and graphic), which costs seconds on big boards; the plain protobuf messages
# carry the same data.
# ---------------------------------------------------------------------------------------------


def _type_url(cls: Any) -> str:
    return "type.googleapis.com/" + cls.DESCRIPTOR.full_name


def raw_items(board: Any, kinds: Sequence[str]) -> list[Any]:
    """All board items of the given ``KiCadObjectType`` names, as unpacked protobuf messages."""
    from kipy.proto.board import board_types_pb2 as bt
    from kipy.proto.common.commands.editor_commands_pb2 import GetItems, GetItemsResponse
    from kipy.proto.common.types import KiCadObjectType

    cmd = GetItems()
    cmd.header.document.CopyFrom(board.document)
    for kind in kinds:
        cmd.types.append(KiCadObjectType.Value(kind))
    response = retry(board.client.send, cmd, GetItemsResponse)
    # compare type URLs and parse the bytes directly: Any.Is()/Unpack() are Python-level and
    # cost seconds over the ~200k items of a big board's footprints
    classes = {
        _type_url(cls): cls
        for cls in (bt.Track, bt.Arc, bt.Via, bt.FootprintInstance, bt.Zone, bt.BoardGraphicShape)
    }
    out = []
    for item in response.items:
        cls = classes.get(item.type_url)
        if cls is not None:
            msg = cls()
            msg.ParseFromString(item.value)
            out.append(msg)
    return out


# ---------------------------------------------------------------------------------------------
# The reader
# ---------------------------------------------------------------------------------------------


def read_live(
    kicad: Any = None,
    board: Any = None,
    stackup: str = "auto",
    timer: Timer | None = None,
    warm: bool = False,
    requests: BoardRequests | None = None,
) -> Board:
    """The board open in KiCad as a :class:`Board` (``stackup``: auto | api | file | string).

    ``warm``: start the PDN's plane geometry, then the return path's fill indexes, on a
    background thread as soon as the zones are in (for a caller that checks the board next, as
    the toolbar action does).  ``requests``: the
    bulk requests already under way (:func:`.fetch.start_requests`, which the toolbar action
    calls before importing this module); closed here."""
    timer = timer or Timer()
    if kicad is None:
        kicad = connect()
    if board is None:
        board = open_board(kicad)
    path = board_path(board)
    warnings: list[str] = []
    # Every request goes through one I/O thread, in the order submitted, so KiCad always has
    # the next one while this thread parses the last (see .fetch).  The zones come first:
    # their plane geometry is made valid on another thread while KiCad serialises footprints.
    req = requests if requests is not None else start_requests(board)
    try:
        io = req.io
        header = None
        try:
            header = read_file_header(path)
        except OSError as exc:
            warnings.append(f"could not read the saved board's header ({exc})")
        project = os.path.splitext(path)[0] + ".kicad_pro" if path else ""
        copper_count = req.copper_count.result()
        layers = LayerMap(copper_count)
        f_names = io.submit(_layer_names, board, layers)
        f_stack = io.submit(_read_stackup, board, layers, header, stackup, path)
        f_classes = io.submit(_net_class_data, board, req.nets)
        f_vars = io.submit(_text_variables, board)
        saved_project = _saved_project(project, warnings)

        api_nets = req.nets.result()
        net_names = sorted({n.name for n in api_nets if n.name})
        nets: tuple[str, ...] = ("", *net_names)
        net_idx = {name: i for i, name in enumerate(nets)}
        timer.lap("nets")

        zones = _read_zones(board, layers, net_idx, nets, req.zones.result())
        timer.lap("zones")
        if warm:
            # make the plane fills valid on a second thread while KiCad serialises the tracks,
            # vias and footprints (the PDN check needs them; GEOS runs without the GIL)
            from accel_drc.analysis.pdn import warm_regions
            from accel_drc.report.board_svg import zones_early

            # then, on the same thread, the fills' point indexes for the return-path check and
            # the report's board view of the fills (at the grid of the Edge.Cuts drawings,
            # requested before the tracks: a footprint's own Edge.Cuts that widen the board
            # make the report simplify again, with the same view)
            view = zones_early(zones, _read_outline(board, layers, (), req.shapes.result()).bbox)
            warm_regions(zones, nets, then=lambda: _warm_more(zones, nets, view))
        tracks = _read_tracks(board, layers, net_idx, req.tracks.result())
        timer.lap("tracks")
        vias = _read_vias(
            board, layers, net_idx, copper_count, req.vias.result(), file_version(header)
        )
        timer.lap("vias")
        footprints, fp_edges = _read_footprints(board, layers, net_idx, req.footprints.result())
        timer.lap("footprints")
        outline = _read_outline(board, layers, fp_edges, req.shapes.result())
        timer.lap("outline")

        kinds = layer_kinds(header) if header else {}
        names = f_names.result()
        copper_layers = []
        for api_layer, idx in sorted(layers.index.items(), key=lambda kv: kv[1]):
            name = copper_layer_name(idx, copper_count)
            copper_layers.append(
                CopperLayer(
                    index=idx,
                    name=name,
                    user_name=names.get(api_layer) or name,
                    kind=kinds.get(name, "signal"),
                )
            )
        stack, stack_note, thickness = f_stack.result()
        log.info("%s", stack_note)
        stack_warning = stack_note.startswith("stack-up: saved file")
        timer.lap("stackup")
        net_classes = _net_classes(*f_classes.result(), saved_project)
        text_vars, vars_error = f_vars.result()
        timer.lap("project")
    finally:
        req.close()
    # the warnings in the order they always had: header, stack-up, project file, variables
    if stack_warning:
        warnings.insert(
            1 if warnings and warnings[0].startswith("could not read the saved board") else 0,
            "dielectric materials, εr and loss tangents were read from the saved file "
            "(KiCad 9's API leaves them out, and the live board text of a board this big "
            "takes seconds): save the board to have unsaved stack-up edits checked",
        )
    if vars_error:
        warnings.append(f"text variables unavailable: {vars_error}")

    if thickness is None and stack is not None:
        thickness = stack.thickness_mm
    log.info("live read %s: %s", path, ", ".join(f"{k} {v:.3f}s" for k, v in timer.stages.items()))
    return Board(
        source=path or board.name,
        format="kipy",
        copper_layers=tuple(copper_layers),
        stackup=stack,
        board_thickness_mm=thickness,
        outline=outline,
        nets=nets,
        net_classes=net_classes,
        tracks=tracks,
        vias=vias,
        zones=zones,
        footprints=footprints,
        text_variables=text_vars,
        design=saved_project.design if saved_project is not None else DesignSettings(),
        file_version=file_version(header),
        generator="pcbnew",
        project_file=project if project and os.path.isfile(project) else None,
        warnings=tuple(w for w in warnings if w),
    )


#: below this saved-file size the live board text is read for the stack-up (exact, unsaved edits
#: included): ~0.1 s per 2 MB here; vme-wren (69 MB) would take 4 s of a 5 s click budget
STRING_MAX_BYTES = 20_000_000


def _read_stackup(
    board: Any, layers: LayerMap, header: str | None, mode: str, path: str = ""
) -> tuple[Stackup | None, str, float | None]:
    """(stack-up, where it came from, board thickness) — see the module docstring."""
    api = stackup_from_api(retry(board.get_stackup), layers)
    if mode == "api" or (mode == "auto" and api_stackup_complete(api)):
        return api, "stack-up: from KiCad's API", None
    try:
        big = os.path.getsize(path) > STRING_MAX_BYTES if path else True
    except OSError:
        big = True
    if (mode == "file" or (mode == "auto" and big)) and header is not None:
        saved = _parse_stackup(header)
        if saved is not None and _structure(saved) == _structure(api):
            return (
                saved,
                "stack-up: saved file (same layers and thicknesses as the live board)",
                (general_thickness(header)),
            )
        if mode == "file":
            return (
                saved,
                "stack-up: saved file (differs from the live board)",
                general_thickness(header),
            )
    text = retry(board.get_as_string)
    saved = _parse_stackup(text)
    return (
        saved,
        "stack-up: parsed from the live board text",
        general_thickness("(kicad_pcb " + (_top_block(text[:65536], "general") or "") + ")"),
    )


def _saved_project(project: str, warnings: list[str]) -> Any:
    """The saved ``.kicad_pro`` (design-rule settings and net-class priorities, which KiCad 9's
    API does not serve); None without one."""
    if not project or not os.path.isfile(project):
        return None
    from accel_drc.readers.kicad_project import read_project

    try:
        return read_project(project)
    except Exception as exc:  # a broken project file must not stop the live check
        warnings.append(f"could not read {os.path.basename(project)}: {exc}")
        return None


def _layer_names(board: Any, layers: LayerMap) -> dict[int, str]:
    """The copper layers' user names by API layer id (empty where KiCad < 9.0.8 lacks
    ``GetBoardLayerName``: the canonical names are used then)."""
    out: dict[int, str] = {}
    for api_layer in layers.index:
        try:
            out[api_layer] = retry(board.get_layer_name, api_layer)
        except Exception:
            return {}
    return out


def _text_variables(board: Any) -> tuple[dict[str, str], str]:
    """(the project's text variables, the error if KiCad would not say)."""
    try:
        return dict(retry(board.get_project().get_text_variables).variables), ""
    except Exception as exc:
        return {}, str(exc)


def _net_class_data(board: Any, f_nets: Any) -> tuple[list[Any], dict[str, Any]]:
    """KiCad's net classes and each named net's effective class (the requests only; on the
    I/O thread, after the nets)."""
    api_nets = f_nets.result()
    try:
        api_classes = retry(board.get_project().get_net_classes)
    except Exception as exc:
        log.warning("net classes unavailable: %s", exc)
        api_classes = []
    try:
        effective = retry(board.get_netclass_for_nets, [n for n in api_nets if n.name])
    except Exception as exc:
        log.warning("net class assignments unavailable: %s", exc)
        effective = {}
    return list(api_classes), dict(effective)


def _net_classes(
    api_classes: Sequence[Any], effective: Mapping[str, Any], saved: Any
) -> NetClassRules:
    """The model's net classes from what :func:`_net_class_data` fetched."""
    classes: list[NetClass] = []
    saved_priority: dict[str, int | None] = {}
    if saved is not None:
        saved_priority = {c.name: c.priority for c in saved.net_classes.classes}
    for c in api_classes:
        classes.append(
            NetClass(
                name=c.name,
                clearance_mm=_mm(c.clearance),
                track_width_mm=_mm(c.track_width),
                diff_pair_width_mm=_mm(c.diff_pair_track_width),
                diff_pair_gap_mm=_mm(c.diff_pair_gap),
                via_diameter_mm=_mm(c.via_diameter),
                via_drill_mm=_mm(c.via_drill),
                priority=saved_priority.get(c.name, c.priority),
            )
        )
    known = {c.name for c in classes}
    assignments: dict[str, str] = {}
    for net, cls in effective.items():
        name = cls.name
        if name not in known:  # KiCad 9 composes "A,B" effective classes from several patterns
            parts = [c for c in (cls.constituents or []) if c in known]
            name = parts[0] if parts else name
        if name and name != "Default":
            assignments[net] = name
    return NetClassRules(classes=tuple(classes), patterns=(), assignments=assignments)


def _mm(nm: int | None) -> float | None:
    return None if nm is None else nm / NM_PER_MM


def _read_tracks(
    board: Any, layers: LayerMap, net_idx: Mapping[str, int], anys: Sequence[Any] | None = None
) -> Tracks:
    """Tracks and arcs in KiCad's order (one request for both keeps it: the file's order).
    ``anys``: the ``Any`` items of that request, already fetched (see :mod:`.fetch`)."""
    from kipy.proto.board import board_types_pb2 as bt

    if anys is None:
        items = raw_items(board, ["KOT_PCB_TRACE", "KOT_PCB_ARC"])
    else:
        track_url, arc_url = _type_url(bt.Track), _type_url(bt.Arc)
        items = []
        for a in anys:
            url = a.type_url
            cls = bt.Track if url == track_url else bt.Arc if url == arc_url else None
            if cls is not None:
                msg = cls()
                msg.ParseFromString(a.value)
                items.append(msg)
    # plain lists, one numpy conversion at the end: numpy's per-element stores cost more than
    # the protobuf reads (26 650 items on vme-wren)
    coords: list[int] = []  # start x y, end x y, mid x y (nm) per kept item
    width: list[int] = []
    is_arc: list[bool] = []
    layer: list[int] = []
    net: list[int] = []
    uuids: list[str] = []
    copper = layers.index
    arc_type = bt.Arc
    for p in items:
        idx = copper.get(p.layer)
        if idx is None:
            continue
        st, en = p.start, p.end
        if type(p) is arc_type:
            mid = p.mid
            coords += (st.x_nm, st.y_nm, en.x_nm, en.y_nm, mid.x_nm, mid.y_nm)
            is_arc.append(True)
        else:
            coords += (st.x_nm, st.y_nm, en.x_nm, en.y_nm, 0, 0)
            is_arc.append(False)
        width.append(p.width.value_nm)
        layer.append(idx)
        net.append(net_idx.get(p.net.name, 0))
        uuids.append(p.id.value)
    mm = np.array(coords, dtype=np.int64).reshape(-1, 6) / NM_PER_MM
    arcs = np.array(is_arc, dtype=bool)
    mid_mm = mm[:, 4:6].copy()
    mid_mm[~arcs] = np.nan
    return Tracks(
        start=mm[:, 0:2].copy(),
        end=mm[:, 2:4].copy(),
        mid=mid_mm,
        width=np.array(width, dtype=np.int64) / NM_PER_MM,
        layer=np.array(layer, dtype=np.int16),
        net=np.array(net, dtype=np.int32),
        uuid=tuple(uuids),
    )


def _read_vias(
    board: Any,
    layers: LayerMap,
    net_idx: Mapping[str, int],
    count: int,
    items: Sequence[Any] | None = None,
    version: int | None = None,
) -> Vias:
    """The board's vias; ``version``: the saved file's format, which decides which of the
    API's protection values are the designer's (:func:`_via_protection`)."""
    from kipy.proto.board.board_types_pb2 import ViaType

    if items is None:
        items = raw_items(board, ["KOT_PCB_VIA"])
    n = len(items)
    pos = np.empty((n, 2))
    drill = np.empty(n)
    diameter = np.empty(n)
    start = np.empty(n, dtype=np.int16)
    end = np.empty(n, dtype=np.int16)
    net = np.empty(n, dtype=np.int32)
    micro = np.zeros(n, dtype=bool)
    removed = np.zeros(n, dtype=bool)
    keep_end = np.zeros(n, dtype=bool)
    uuids = []
    backdrills: dict[int, Backdrill] = {}
    protection: dict[int, ViaProtection] = {}
    for i, p in enumerate(items):
        ps = p.pad_stack
        # UnconnectedLayerRemoval: 2 REMOVE, 3 REMOVE_EXCEPT_START_AND_END, 4 START_END_ONLY
        # (the file's remove_unused_layers / keep_end_layers; see Vias.conditional)
        ulr = int(getattr(ps, "unconnected_layer_removal", 0) or 0)
        removed[i] = ulr in (2, 3, 4)
        keep_end[i] = ulr in (3, 4)
        pos[i] = (p.position.x_nm / NM_PER_MM, p.position.y_nm / NM_PER_MM)
        drill[i] = ps.drill.diameter.x_nm / NM_PER_MM
        diameter[i] = ps.copper_layers[0].size.x_nm / NM_PER_MM if ps.copper_layers else 0.0
        a = layers.copper(ps.drill.start_layer)
        b = layers.copper(ps.drill.end_layer)
        a = 0 if a is None else a
        b = count - 1 if b is None else b
        start[i], end[i] = min(a, b), max(a, b)
        net[i] = net_idx.get(p.net.name, 0)
        micro[i] = p.type == ViaType.VT_MICRO
        uuids.append(p.id.value)
        bd = _backdrill(ps, layers, count)
        if bd is not None:
            backdrills[i] = bd
        prot = _via_protection(ps, version)
        if prot is not None:
            protection[i] = prot
    return Vias(
        pos=pos,
        drill=drill,
        diameter=diameter,
        start=start,
        end=end,
        net=net,
        micro=micro,
        uuid=tuple(uuids),
        layer_count=count,
        backdrills=backdrills,
        unused_removed=removed,
        keep_end=keep_end,
        protection=protection,
    )


@functools.cache
def enum_words(descriptor: Any, name: str, kind: str) -> dict[int, Any]:
    """The enum field ``name`` of message type ``descriptor`` as ``{number: word}``, the words
    taken by the enum values' names from the table :data:`_WORDS` ``[kind]``; empty when the
    message has no such enum field (an older API).

    Why: the per-item ``DESCRIPTOR.fields_by_name[…].enum_type.values_by_number`` walk cost
    about 12 µs per via and 4 µs per pad (vme-wren: 35 000 mode reads, 6 900 pins), where one
    dict lookup per value does.  Built once per message type and field."""
    field = descriptor.fields_by_name.get(name)
    if field is None or field.enum_type is None:
        return {}
    table = _WORDS[kind]
    return {v.number: table[v.name] for v in field.enum_type.values if v.name in table}


#: (ViaProtection field, padstack part, mode field) of every protection the API can state
_PROTECTION_FIELDS = (
    ("tenting_front", "front_outer_layers", "solder_mask_mode"),
    ("tenting_back", "back_outer_layers", "solder_mask_mode"),
    ("covering_front", "front_outer_layers", "covering_mode"),
    ("covering_back", "back_outer_layers", "covering_mode"),
    ("plugging_front", "front_outer_layers", "plugging_mode"),
    ("plugging_back", "back_outer_layers", "plugging_mode"),
    ("filling", "drill", "filled"),
    ("capping", "drill", "capped"),
)


@functools.cache
def _protection_tables(padstack: Any) -> tuple[tuple[str, str, str, dict[int, Any]], ...]:
    """:data:`_PROTECTION_FIELDS` of padstack type ``padstack`` (a descriptor) with each mode's
    ``{number: yes/no}`` (:func:`enum_words`); the modes an older API lacks are left out."""
    out = []
    for key, part, name in _PROTECTION_FIELDS:
        field = padstack.fields_by_name.get(part)
        if field is None or field.message_type is None:
            continue
        words = enum_words(field.message_type, name, "protection")
        if words:
            out.append((key, part, name, words))
    return tuple(out)


#: the first board format with per-via IPC-4761 protection tokens (KiCad 10's 20250228)
PROTECTION_FORMAT = 20250228


def _via_protection(padstack: Any, version: int | None = None) -> ViaProtection | None:
    """A via's IPC-4761 protection as the file reader reads it (KiCad API: the outer layers'
    mask/covering/plugging modes and the drill's filled/capped), None when the padstack states
    none of them.

    A board saved before :data:`PROTECTION_FORMAT` could state only a via's tented sides (KiCad
    9's ``(tenting front back)``): what else KiCad reports for it is its loader's default (KiCad
    10 sends every such via as not covered, plugged, filled or capped, and KiCad 9 an unnamed
    side as untented), not the designer's, so only a tented side is kept, as the file reader
    keeps it."""
    got = {}
    for key, part, name, words in _protection_tables(padstack.DESCRIPTOR):
        got[key] = words.get(getattr(getattr(padstack, part), name))
    if version is not None and version < PROTECTION_FORMAT:
        got = {k: v for k, v in got.items() if k.startswith("tenting_") and v is True}
    stated = {k: v for k, v in got.items() if v is not None}
    return ViaProtection(**stated) if stated else None


def _pin(pad: Any) -> tuple[str, str]:
    """(pin function, pin type) of a pad as the file writes them (``pinfunction``,
    ``pintype``; a pin flagged no-connect is ``<type>+no_connect``), "" where KiCad sends
    none (a pad with no schematic pin; KiCad 9's API)."""
    try:
        if not pad.HasField("symbol_pin"):
            return "", ""
    except ValueError:  # an older API without the field
        return "", ""
    pin = pad.symbol_pin
    word = enum_words(pin.DESCRIPTOR, "type", "pin").get(pin.type, "")
    if pin.no_connect and word and word != "no_connect":
        word += "+no_connect"
    return pin.name, word


def _backdrill(padstack: Any, layers: LayerMap, count: int) -> Backdrill | None:
    """KiCad 10's backdrill (raw proto only): the secondary drill (a top backdrill) or else the
    tertiary one (``PCB_VIA::SetBottomBackdrillLayer``), drilled from ``start_layer`` (an outer
    layer) to ``end_layer``; the copper just past ``end_layer`` is the one it must not cut.
    The first is kept, as the file reader keeps it."""
    for name in ("secondary_drill", "tertiary_drill"):
        got = _drill_as_backdrill(padstack, name, layers, count)
        if got is not None:
            return got
    return None


def _drill_as_backdrill(padstack: Any, name: str, layers: LayerMap, count: int) -> Backdrill | None:
    """The padstack's drill ``name`` as a :class:`Backdrill`, None when it has none."""
    try:
        if not padstack.HasField(name):
            return None
    except ValueError:  # older proto without the field
        return None
    sd = getattr(padstack, name)
    if sd.diameter.x_nm <= 0:
        return None
    a = layers.copper(sd.start_layer)
    b = layers.copper(sd.end_layer)
    if a is None or b is None:
        return None
    if a == 0:
        side, must_not_cut = "top", b + 1 if b + 1 < count else None
    else:
        side, must_not_cut = "bottom", b - 1 if b - 1 >= 0 else None
    return Backdrill(
        side=side, must_not_cut=must_not_cut, drill_mm=sd.diameter.x_nm / NM_PER_MM, source="board"
    )


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_footprints(
    board: Any, layers: LayerMap, net_idx: Mapping[str, int], items: Sequence[Any] | None = None
) -> tuple[tuple[Footprint, ...], list[Any]]:
    """Footprints with their pads (board coordinates), plus their Edge.Cuts shapes."""
    from kipy.proto.board import board_types_pb2 as bt

    if items is None:
        items = raw_items(board, ["KOT_PCB_FOOTPRINT"])
    out: list[Footprint] = []
    edges: list[Any] = []
    pad_url = _type_url(bt.Pad)
    shape_url = _type_url(bt.BoardGraphicShape)
    # a footprint's graphics are most of its items (28 000 on vme-wren) and only the Edge.Cuts
    # ones matter: a shape on Edge.Cuts has the bytes of ``layer = BL_Edge_Cuts`` in its
    # serialisation, so only shapes holding them are parsed (and their layer then checked)
    edge_key = _varint_bytes(
        bt.BoardGraphicShape.DESCRIPTOR.fields_by_name["layer"].number << 3
    ) + _varint_bytes(layers.edge_cuts)
    pad_layers: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[str, ...]]] = {}
    for p in items:
        d = p.definition
        pads: list[Pad] = []
        for any_item in d.items:
            url = any_item.type_url
            if url == pad_url:
                pad = bt.Pad()
                pad.ParseFromString(any_item.value)
                pads.append(_pad(pad, layers, net_idx, pad_layers))
            elif url == shape_url:
                value = any_item.value
                if edge_key not in value:
                    continue
                g = bt.BoardGraphicShape()
                g.ParseFromString(value)
                if g.layer == layers.edge_cuts:
                    edges.append(g)
        attrs = []
        a = p.attributes  # the instance's (9.0.8 leaves the definition's empty)
        style = bt.FootprintMountingStyle.Name(a.mounting_style)
        if style == "FMS_SMD":
            attrs.append("smd")
        elif style == "FMS_THROUGH_HOLE":
            attrs.append("through_hole")
        if a.not_in_schematic:
            attrs.append("board_only")
        if a.exclude_from_position_files:
            attrs.append("exclude_from_pos_files")
        if a.exclude_from_bill_of_materials:
            attrs.append("exclude_from_bom")
        if a.exempt_from_courtyard_requirement:
            attrs.append("allow_missing_courtyard")
        if a.do_not_populate:
            attrs.append("dnp")
        if a.allow_soldermask_bridges:
            attrs.append("allow_soldermask_bridges")
        lib = d.id.library_nickname
        name = f"{lib}:{d.id.entry_name}" if lib else d.id.entry_name
        props = {
            "Reference": p.reference_field.text.text.text,
            "Value": p.value_field.text.text.text,
            "Datasheet": p.datasheet_field.text.text.text,
            "Description": p.description_field.text.text.text,
        }
        out.append(
            Footprint(
                reference=props["Reference"],
                value=props["Value"],
                name=name,
                layer="B.Cu" if p.layer == bt.BoardLayer.BL_B_Cu else "F.Cu",
                x=p.position.x_nm / NM_PER_MM,
                y=p.position.y_nm / NM_PER_MM,
                rotation=p.orientation.value_degrees,
                attributes=tuple(attrs),
                pads=tuple(pads),
                uuid=p.id.value,
                properties={k: v for k, v in props.items() if v},
            )
        )
    return tuple(out), edges


def _pad(
    pad: Any,
    layers: LayerMap,
    net_idx: Mapping[str, int],
    layer_cache: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[str, ...]]] | None = None,
) -> Pad:
    ps = pad.pad_stack
    key = tuple(ps.layers)
    known = layer_cache.get(key) if layer_cache is not None else None
    if known is None:
        copper = tuple(sorted({i for i in (layers.copper(la) for la in key) if i is not None}))
        known = (copper, tuple(layers.name(la) for la in key))
        if layer_cache is not None:
            layer_cache[key] = known
    cl = ps.copper_layers[0] if ps.copper_layers else None
    drill = None
    if ps.drill.diameter.x_nm > 0 or ps.drill.diameter.y_nm > 0:
        drill = min(ps.drill.diameter.x_nm, ps.drill.diameter.y_nm) / NM_PER_MM
        if drill <= 0:
            drill = max(ps.drill.diameter.x_nm, ps.drill.diameter.y_nm) / NM_PER_MM
    pin_function, pin_type = _pin(pad)
    return Pad(
        number=pad.number,
        net=net_idx.get(pad.net.name, 0),
        type=enum_words(pad.DESCRIPTOR, "type", "pad type").get(pad.type, "smd"),
        shape=enum_words(cl.DESCRIPTOR, "shape", "pad shape").get(cl.shape, "custom")
        if cl is not None
        else "custom",
        x=pad.position.x_nm / NM_PER_MM,
        y=pad.position.y_nm / NM_PER_MM,
        width=cl.size.x_nm / NM_PER_MM if cl is not None else 0.0,
        height=cl.size.y_nm / NM_PER_MM if cl is not None else 0.0,
        rotation=ps.angle.value_degrees,
        drill_mm=drill,
        copper_layers=known[0],
        layers=known[1],
        uuid=pad.id.value,
        pin_function=pin_function,
        pin_type=pin_type,
    )


def _read_zones(
    board: Any,
    layers: LayerMap,
    net_idx: Mapping[str, int],
    nets: Sequence[str],
    items: Sequence[Any] | None = None,
) -> tuple[Zone, ...]:
    """Zones (``items``: already fetched, their fill polylines as bytes; see :mod:`.fetch`)."""
    from kipy.proto.board import board_types_pb2 as bt

    out = []
    for p in raw_items(board, ["KOT_PCB_ZONE"]) if items is None else items:
        # every zone the file has at top level: copper, rule areas (keepouts), teardrops and
        # graphic zones (those have no copper layers), as the file reader does
        idxs = tuple(sorted({i for i in (layers.copper(la) for la in p.layers) if i is not None}))
        keepout = p.type == bt.ZT_RULE_AREA
        net_name = p.copper_settings.net.name if p.HasField("copper_settings") else ""
        filled: dict[int, tuple[np.ndarray, ...]] = {}
        for fp in p.filled_polygons:
            idx = layers.copper(fp.layer)
            if idx is None:
                continue
            polys = tuple(_bridged(s) for s in fp.shapes.polygons)
            if polys:
                filled[idx] = filled.get(idx, ()) + polys
        outline = _polyline(p.outline.polygons[0].outline) if p.outline.polygons else []
        min_t = None
        if p.HasField("copper_settings") and p.copper_settings.HasField("min_thickness"):
            min_t = p.copper_settings.min_thickness.value_nm / NM_PER_MM
        out.append(
            Zone(
                net=net_idx.get(net_name, 0),
                net_name=net_name,
                layers=idxs,
                priority=p.priority,
                outline=np.asarray(outline, dtype=np.float64).reshape(-1, 2),
                filled=filled,
                name=p.name,
                uuid=p.id.value,
                keepout=keepout,
                min_thickness_mm=min_t,
            )
        )
    return tuple(out)


def _warm_more(zones: Sequence[Zone], nets: Sequence[str], view: Any) -> None:
    """The warm-up thread's work after the PDN regions (:func:`read_live` with ``warm``): the
    return-path check's fill polygons and their point indexes, then the HTML report's board
    view of the fills (``view``: :func:`accel_drc.report.board_svg.zones_early`, unless the
    report started it already)."""
    from accel_drc.analysis.returnpath import warm_fills

    warm_fills(zones, nets)
    if view is not None:
        view.run_here()


def _read_outline(
    board: Any, layers: LayerMap, fp_edges: Iterable[Any], shapes: Sequence[Any] | None = None
) -> Outline:
    bbox_nm: list[tuple[int, int]] = []
    paths: list[tuple[list[tuple[float, float]], bool]] = []
    for shape in raw_items(board, ["KOT_PCB_SHAPE"]) if shapes is None else shapes:
        if shape.layer == layers.edge_cuts:
            paths.extend(_shape_paths(shape.shape, bbox_nm))
    for g in fp_edges:
        paths.extend(_shape_paths(g.shape, bbox_nm))
    if not bbox_nm:
        return Outline()
    xs = [p[0] for p in bbox_nm]
    ys = [p[1] for p in bbox_nm]
    bbox = (min(xs) / NM_PER_MM, min(ys) / NM_PER_MM, max(xs) / NM_PER_MM, max(ys) / NM_PER_MM)
    return Outline(rings=outline_rings(paths), bbox=bbox)
