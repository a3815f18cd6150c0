"""Show findings in the PCB editor, and take them away again.

Two ways, picked at run time:

* **KiCad 10**: ``InjectDrcError`` puts real DRC markers in the editor (they show in the DRC
  dialog, and KiCad clears them on its next DRC run), one per place (:func:`drc_groups`: each
  is a commit of its own in KiCad 10.0.7, the cost on a big board).  A server without the command answers
  "no handler" (``AS_UNHANDLED``); that is how KiCad 9 is detected, not by version numbers.
* **Otherwise** (KiCad 9): marker graphics on a user layer (``Cmts.User`` unless the config's
  ``report.marker_layer`` names another enabled layer): a ring around the spot and a short label.
  Findings with no place on the board (stack-up, materials, a rail not found) are listed in one
  legend inside the board outline's top-left corner, which KiCad's Zoom to Fit always shows.
  All created in **one commit**, so one Undo (Ctrl+Z) removes them all.  Issue #31 item 2 (on
  vme-wren the markers were hair-thin, the legend lay under copper and silkscreen, the labels
  overlapped): rings, labels and legend are sized to the board as Zoom to Fit shows it
  (:func:`marker_scale`), a label that would overlap an earlier one or the legend goes to
  another corner of its ring or joins the nearest label ("nearby: E4 W6") while every finding
  keeps its ring, and the marker layer is made visible and the active
  layer, which KiCad draws above all others (:func:`raise_layer`).

:func:`plan_markers` decides all of it without KiCad, so the report (written before the markers,
to open fast) can say in its banner how many markers went where.  After a failed run
:func:`mark_stale` rewrites the previous run's labels to say so, in one commit.

Markers are tagged so a rerun removes only its own, never the user's drawings: every label's text
starts with :data:`TAG`, and a ring is a circle on a user drawing layer whose stroke width is a
tenth of its radius rounded to the micrometre plus exactly 100 nm (:func:`ring_width_nm`; the
rings of earlier versions, 1.5 mm with a 0.1501 mm stroke, have that signature too).  The tag lives in
the board itself (no state file to lose): a saved board with markers, reopened tomorrow, still
gets them cleared by the next run.  Removing the old markers and adding the new ones is one
commit: one Undo reverts exactly what the click did (the new markers go, the previous run's come
back), a second Undo takes those away too.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .connection import is_no_handler, retry

log = logging.getLogger(__name__)

#: every marker label starts with this
TAG = "accel-drc:"
#: the ring's radius and the label's text size on a board up to :data:`SCALE_EXTENT_MM` long;
#: both grow with the board above that (:func:`marker_scale`)
RING_RADIUS_MM = 1.5
TEXT_SIZE_MM = 0.8
#: a label sits up and right of its ring by this fraction of the ring's radius, in x and y
LABEL_OFFSET = 0.75
#: at Zoom to Fit the board's longer side fills the canvas (≈ 750-1000 px in a 1400 × 900 or
#: 1920 × 1080 window): 0.8 mm text on a board 66 mm long is ≈ 10 px high there, the least that
#: reads; vme-wren (233.5 mm) had 0.8 mm text at ≈ 3 px and rings with a 0.7 px stroke
SCALE_EXTENT_MM = 66.0
#: at most this many markers (the report has them all); the editor stays responsive
MAX_MARKERS = 200
DEFAULT_LAYER = "Cmts.User"

_SEVERITY_WORD = {"error": "E", "warning": "W", "info": "I"}


@dataclass(frozen=True)
class MarkerResult:
    """What the editor got: how, how many, which layer, what KiCad refused, what was removed."""

    mode: str  # "drc" (KiCad 10 markers) | "graphics" | "none"
    created: int
    requested: int
    removed: int
    layer: str | None
    refused: int = 0
    skipped_no_position: int = 0
    note: str = ""
    #: the created items' ids (what the click selects), not in the JSON result
    ids: tuple[str, ...] = ()
    #: the sentence the report's banner shows
    where: str = ""


def _nm(mm: float) -> int:
    return int(round(mm * 1_000_000))


def label_for(finding: Any, number: int) -> str:
    """The short label: ``accel-drc: E3 via_stub 1.42 > 0.30 mm``."""
    sev = getattr(finding.severity, "value", finding.severity)
    status = getattr(finding.status, "value", finding.status)
    word = _SEVERITY_WORD.get(str(sev), "?") if status == "violation" else "?"
    text = f"{TAG} {word}{number} {finding.check}"
    if finding.measured is not None and finding.limit is not None:
        text += f" {_fmt(finding.measured)} vs {_fmt(finding.limit)}"
        if finding.unit:
            text += f" {finding.unit}"
    elif status == "cannot_verify":
        text += " cannot verify"
    return text[:120]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)[:24]


def marker_findings(findings: Sequence[Any]) -> list[Any]:
    """Findings worth a marker: not waived, worst first (errors, then warnings, then unknowns)."""
    rank = {"error": 0, "warning": 1, "info": 2}
    live = [f for f in findings if getattr(f.status, "value", f.status) != "waived"]

    def key(f: Any) -> tuple[int, int]:
        status = getattr(f.status, "value", f.status)
        return (0 if status == "violation" else 1, rank.get(getattr(f.severity, "value", ""), 3))

    return sorted(live, key=key)


# ---------------------------------------------------------------------------------------------
# Finding and removing our own markers
# ---------------------------------------------------------------------------------------------


def marker_scale(bbox: tuple[float, float, float, float] | None) -> float:
    """How much larger than :data:`TEXT_SIZE_MM` / :data:`RING_RADIUS_MM` the markers are
    drawn: 1 up to a board :data:`SCALE_EXTENT_MM` long, in proportion above (issue #31 item 2).
    KiCad 9's API cannot tell the editor's zoom, so the size is chosen for the view the banner
    sends the user to, Zoom to Fit, where the board's longer side fills the canvas."""
    if bbox is None:
        return 1.0
    extent = max(bbox[2] - bbox[0], bbox[3] - bbox[1])
    return max(1.0, extent / SCALE_EXTENT_MM) if math.isfinite(extent) else 1.0


def ring_width_nm(radius_nm: float) -> int:
    """The stroke of one of our rings of ``radius_nm``: a tenth of the radius, rounded to the
    micrometre, plus 100 nm (a width nobody draws by hand; the signature that identifies our
    rings, also those of earlier versions: 1.5 mm → 150,100 nm)."""
    return int(round(radius_nm / 10 / 1000)) * 1000 + 100


def _is_our_ring(shape: Any, layers: set[int]) -> bool:
    """A circle on one of the marker ``layers`` with our signature stroke (:func:`ring_width_nm`)."""
    if shape.proto.layer not in layers:
        return False
    g = shape.proto.shape
    if g.WhichOneof("geometry") != "circle":
        return False
    c = g.circle.center
    r = math.hypot(g.circle.radius_point.x_nm - c.x_nm, g.circle.radius_point.y_nm - c.y_nm)
    return r > 0 and g.attributes.stroke.width.value_nm == ring_width_nm(r)


def _drawing_layers() -> set[int]:
    """The API ids of :data:`FALLBACK_LAYERS`, the only layers markers are ever put on."""
    from kipy.util.board_layer import CANONICAL_LAYER_NAMES

    return {k for k, v in CANONICAL_LAYER_NAMES.items() if v in FALLBACK_LAYERS}


def find_markers(board: Any) -> tuple[list[Any], list[Any]]:
    """(labels, rings) this plugin made earlier, on any user drawing layer."""
    labels = [
        t
        for t in retry(board.get_text)
        if hasattr(t.proto, "text") and t.proto.text.text.startswith(TAG)
    ]
    layers = _drawing_layers()
    rings = [s for s in retry(board.get_shapes) if _is_our_ring(s, layers)]
    return labels, rings


def remove_markers(board: Any) -> int:
    """Delete this plugin's earlier markers (one commit); returns how many items went."""
    labels, rings = find_markers(board)
    items = [*labels, *rings]
    if not items:
        return 0
    commit = retry(board.begin_commit)
    try:
        retry(board.remove_items, items)
        retry(board.push_commit, commit, "accel-drc: clear markers")
    except Exception:
        _drop(board, commit)
        raise
    return len(items)


def _drop(board: Any, commit: Any) -> None:
    """Abandon an open commit after a failure (so the editor is not left mid-edit); a failure
    to drop it is logged, the original error is what the caller reports."""
    try:
        board.drop_commit(commit)
    except Exception as exc:
        log.warning("could not drop the marker commit: %s", exc)


# ---------------------------------------------------------------------------------------------
# Creating markers
# ---------------------------------------------------------------------------------------------


#: where markers may go when the wanted layer is not enabled, in order of preference
FALLBACK_LAYERS = (DEFAULT_LAYER, "Dwgs.User", "Eco1.User", "Eco2.User") + tuple(
    f"User.{i}" for i in range(1, 10)
)


def _resolve_layer(board: Any, wanted: str | None) -> tuple[int, str, str]:
    """(API layer id, name, note): the wanted layer if it is a user drawing layer the board has
    enabled, else the first enabled of :data:`FALLBACK_LAYERS` (KiCad silently refuses items on
    a disabled layer).  Only the drawing layers of :data:`FALLBACK_LAYERS` are ever used: markers
    on Edge.Cuts would cut the board outline, on copper they would be copper."""
    from kipy.util.board_layer import CANONICAL_LAYER_NAMES

    by_name = {v: k for k, v in CANONICAL_LAYER_NAMES.items()}
    drawing = {by_name[n] for n in FALLBACK_LAYERS if n in by_name}
    enabled = set(retry(board.get_enabled_layers))
    notes = []
    if wanted:
        layer = by_name.get(wanted)
        if layer is None:  # a user name ("Comments")? ask KiCad (10.0.6+), else give up on it
            try:
                layer = board.get_layer_by_name(wanted)
            except Exception:
                layer = None
        if layer is not None and layer not in drawing:
            notes.append(
                f"marker layer {wanted!r} is not a user drawing layer (markers go only on "
                f"{', '.join(FALLBACK_LAYERS[:4])} or User.1-9, never on copper or Edge.Cuts)"
            )
        elif layer is not None and layer in enabled:
            return layer, CANONICAL_LAYER_NAMES.get(layer, wanted), ""
        else:
            notes.append(f"marker layer {wanted!r} is not an enabled layer of this board")
    for name in FALLBACK_LAYERS:
        if by_name[name] in enabled:
            if name != DEFAULT_LAYER:
                notes.append(f"{DEFAULT_LAYER} is not enabled; markers are on {name}")
            elif notes:
                notes.append(f"markers are on {name}")
            return by_name[name], name, "; ".join(notes)
    notes.append(f"no user layer is enabled; KiCad will refuse markers on {DEFAULT_LAYER}")
    return by_name[DEFAULT_LAYER], DEFAULT_LAYER, "; ".join(notes)


def resolve_layer_name(kicad: Any, board: Any, wanted: str | None) -> tuple[str, bool]:
    """(the marker layer's name, whether KiCad is 10 or newer) for the report's banner, before
    the markers are placed.  The version only picks the banner's words; which kind of marker
    is made is still decided by whether KiCad answers ``InjectDrcError``."""
    _layer, name, _note = _resolve_layer(board, wanted)
    try:
        kicad10 = retry(kicad.get_version).major >= 10
    except Exception:
        kicad10 = False
    return name, kicad10


def _ring(layer: int, x_nm: int, y_nm: int, scale: float = 1.0) -> Any:
    from kipy.board_types import BoardCircle
    from kipy.proto.board import board_types_pb2

    radius = _nm(RING_RADIUS_MM * scale)
    p = board_types_pb2.BoardGraphicShape()
    p.layer = layer
    p.shape.circle.center.x_nm = x_nm
    p.shape.circle.center.y_nm = y_nm
    p.shape.circle.radius_point.x_nm = x_nm + radius
    p.shape.circle.radius_point.y_nm = y_nm
    p.shape.attributes.stroke.width.value_nm = ring_width_nm(radius)
    return BoardCircle(p)


#: where a label may sit around its ring, in order of preference: (x sign, y sign) of its
#: anchor from the ring's centre; the text grows away from the ring (KiCad's y points down)
CORNERS = ((1, -1), (1, 1), (-1, -1), (-1, 1))


def label_offset_mm(scale: float = 1.0, corner: int = 0) -> tuple[float, float]:
    """Where a label is anchored relative to its ring's centre: up and right (``corner`` 0, its
    bottom-left corner), or another of :data:`CORNERS`."""
    r = RING_RADIUS_MM * scale * LABEL_OFFSET
    sx, sy = CORNERS[corner]
    return sx * r, sy * r


def _label(layer: int, x_nm: int, y_nm: int, text: str, scale: float = 1.0, corner: int = 0) -> Any:
    """A finding's label beside its ring at (x, y), at one of :data:`CORNERS`."""
    dx, dy = label_offset_mm(scale, corner)
    sx, sy = CORNERS[corner]
    size = TEXT_SIZE_MM * scale
    return _text(layer, x_nm + _nm(dx), y_nm + _nm(dy), text, size, top=sy > 0, right=sx < 0)


def _text(
    layer: int,
    x_nm: int,
    y_nm: int,
    text: str,
    size_mm: float,
    top: bool = True,
    right: bool = False,
) -> Any:
    """Text anchored at (x, y): its top (``top``) or bottom edge, its left edge or its right
    (``right``)."""
    from kipy.board_types import BoardText
    from kipy.proto.board import board_types_pb2
    from kipy.proto.common.types import enums_pb2

    p = board_types_pb2.BoardText()
    p.layer = layer
    p.text.text = text
    p.text.position.x_nm = x_nm
    p.text.position.y_nm = y_nm
    a = p.text.attributes
    a.size.x_nm = _nm(size_mm)
    a.size.y_nm = _nm(size_mm)
    a.stroke_width.value_nm = _nm(size_mm * 0.15)
    a.visible = True
    # KiCad's API takes these literally: without them a text with newlines is one line to
    # KiCad (its bounding box, hence selection and Zoom to Fit), and a spacing of 0 stacks lines
    a.multiline = "\n" in text
    a.line_spacing = 1.0
    a.horizontal_alignment = enums_pb2.HA_RIGHT if right else enums_pb2.HA_LEFT
    a.vertical_alignment = enums_pb2.VA_TOP if top else enums_pb2.VA_BOTTOM
    return BoardText(p)


#: a KiCad 10 marker's message holds at most this many characters (the DRC dialog's line)
DRC_MESSAGE_MAX = 400


def drc_groups(
    numbered: Sequence[tuple[int, Any]], anchor: tuple[float, float] | None
) -> list[tuple[tuple[float, float], list[tuple[int, Any]]]]:
    """The KiCad 10 markers a click makes: one per *place*, holding every finding there, worst
    first (the board-level findings all at ``anchor``, or none without one).

    Why: KiCad 10.0.7's ``InjectDrcError`` pushes one commit per marker, and a commit costs
    ≈ 150 ms on a 69 MB board (vme-wren: 47 findings, 8.5 s of markers, issue #29 item 3).
    There is no call that makes several markers at once, so the batch is the place: findings
    at one spot (the board-level ones; several checks of one via) share one marker."""
    groups: dict[tuple[int, int], tuple[tuple[float, float], list[tuple[int, Any]]]] = {}
    for number, f in numbered:
        pos = f.pos if f.pos is not None else anchor
        if pos is None:
            continue
        key = (_nm(pos[0]), _nm(pos[1]))
        groups.setdefault(key, (pos, []))[1].append((number, f))
    return list(groups.values())


def drc_message(group: Sequence[tuple[int, Any]], board_level: bool) -> str:
    """One marker's message: the label of each finding at its place (``accel-drc: E3 via_stub
    1.42 vs 0.3 mm``), joined with "; ", cut at :data:`DRC_MESSAGE_MAX` with how many more."""
    labels = [label_for(f, n) for n, f in group]
    head = labels[0] + (" (board-level)" if board_level else "")
    rest = [lbl[len(TAG) :].strip() for lbl in labels[1:]]
    text = head
    for i, part in enumerate(rest):
        more = f"; … {len(rest) - i} more in the report"
        if len(text) + 2 + len(part) + len(more) > DRC_MESSAGE_MAX and i < len(rest) - 1:
            return text + more
        text += "; " + part
    return text


def _inject_drc(
    board: Any,
    numbered: Sequence[tuple[int, Any]],
    ids: list[str] | None = None,
    anchor: tuple[float, float] | None = None,
) -> int | None:
    """KiCad 10's real DRC markers, one per place (:func:`drc_groups`); None when the server
    has no such command (KiCad 9), or when nothing could be asked (no finding has a place and
    there is no ``anchor``: the caller then draws graphics, which work on every version).  A
    finding without a position (a stack-up, material or rail finding) is marked at ``anchor``
    (mm), inside the outline's top-left corner.  The new markers' ids are appended to ``ids``;
    returns how many markers were made."""
    from kipy.proto.board import board_commands_pb2 as bc
    from kipy.proto.common.types import base_types_pb2

    sev = {"error": bc.DRS_ERROR, "warning": bc.DRS_WARNING}
    made = 0
    groups = drc_groups(numbered, anchor)
    for pos, group in groups:
        worst = group[0][1]  # the plan is worst first, and so is every group
        cmd = bc.InjectDrcError()
        cmd.board.CopyFrom(board.document)
        cmd.severity = sev.get(getattr(worst.severity, "value", ""), bc.DRS_WARNING)
        cmd.message = drc_message(group, worst.pos is None)
        cmd.position.x_nm = _nm(pos[0])
        cmd.position.y_nm = _nm(pos[1])
        seen: set[str] = set()
        for _n, f in group:
            for uuid in f.items:
                if uuid not in seen:
                    seen.add(uuid)
                    cmd.items.append(base_types_pb2.KIID(value=uuid))
        try:
            resp = retry(board.client.send, cmd, bc.InjectDrcErrorResponse)
        except Exception as exc:
            if made == 0 and is_no_handler(exc):
                return None
            raise
        made += 1
        marker = getattr(getattr(resp, "marker", None), "value", "")
        if ids is not None and marker:
            ids.append(marker)
    return made if groups else None


# ---------------------------------------------------------------------------------------------
# KiCad 10's DRC markers carry no tag we can query (kicad-python 0.8 has no marker item type), so
# the ids KiCad returns are kept in the plugin's own directory, per board, and the next click
# deletes those before injecting new ones: a rerun replaces its markers instead of doubling them.
# ---------------------------------------------------------------------------------------------

#: where the ids of the DRC markers of the last click live; None: :func:`drc_state_path`
DRC_STATE: Path | None = None


def drc_state_path(override: Path | None = None) -> Path:
    """The file with the ids of the last click's KiCad 10 DRC markers, per board: ``override``,
    else :data:`DRC_STATE`, else ``accel-drc/kicad-drc-markers.json`` in the per-user cache
    folder.  Per user, not per plugin folder (issue #29 item 4: the button, run by KiCad from its
    plugin folder, kept the ids beside itself, and ``python -m accel_drc_kicad clear`` from a
    terminal, another copy of the package, looked beside *itself*, found none and removed
    nothing)."""
    if override is not None:
        return override
    if DRC_STATE is not None:
        return DRC_STATE
    from .places import cache_root

    return cache_root() / "accel-drc" / "kicad-drc-markers.json"


def _board_key(board: Any) -> str:
    try:
        from .connection import board_path

        return board_path(board) or board.document.board_filename
    except Exception:
        return str(getattr(getattr(board, "document", None), "board_filename", ""))


def _read_state(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(i) for i in v] for k, v in data.items() if isinstance(v, list)}


def _write_state(path: Path, state: dict[str, list[str]]) -> None:
    for target in (path, Path(tempfile.gettempdir()) / path.name):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(state, indent=1), encoding="utf-8")
            return
        except OSError:
            continue
    log.warning("could not record the DRC marker ids (%s): a rerun will not remove them", path)


def _remove_old_drc(board: Any, ids: Sequence[str]) -> int:
    """Delete items by id in one ``DeleteItems`` request: the DRC markers of the previous click (gone already if KiCad re-ran its DRC or the
    board was reopened: then KiCad answers "nonexistent" for them, which is fine); returns how
    many KiCad says it deleted (one ``DeleteItems`` request for all of them)."""
    if not ids:
        return 0
    from kipy.proto.common.commands import editor_commands_pb2 as ec
    from kipy.proto.common.types import base_types_pb2

    cmd = ec.DeleteItems()
    cmd.header.document.CopyFrom(board.document)
    cmd.item_ids.extend(base_types_pb2.KIID(value=i) for i in ids)
    try:
        resp = retry(board.client.send, cmd, ec.DeleteItemsResponse)
    except Exception as exc:
        log.info("previous DRC markers not removed (%s): probably cleared by KiCad already", exc)
        return 0
    results = getattr(resp, "deleted_items", None)
    if not results:  # an older server that does not itemise: it took the request
        return len(ids)
    return sum(1 for r in results if r.status == ec.IDS_OK)


def remove_previous_drc(board: Any, drc_state: Path | None = None) -> int:
    """Delete the KiCad 10 DRC markers the last click put on this board (their ids are in
    :func:`drc_state_path`; one ``DeleteItems`` request) and forget them; returns how many
    KiCad deleted (0 when none are recorded: KiCad 9, or a first click).

    The click calls it while it checks the board (:class:`.action.KiCadMeanwhile`): the
    markers need no findings to go, so KiCad deletes them while this process is busy instead
    of after the report; and a click with nothing to mark still removes them."""
    state_path = drc_state_path(drc_state)
    state = _read_state(state_path)
    key = _board_key(board)
    if not state.get(key):
        return 0
    removed = _remove_old_drc(board, state[key])
    state[key] = []
    _write_state(state_path, state)
    return removed


def _remember_drc(board: Any, ids: Sequence[str], drc_state: Path | None = None) -> None:
    """Record ``ids``, the DRC markers this click made, for the next click to delete."""
    state_path = drc_state_path(drc_state)
    state = _read_state(state_path)
    state[_board_key(board)] = list(ids)
    _write_state(state_path, state)


def clear_all(board: Any, drc_state: Path | None = None) -> int:
    """Every marker earlier clicks put on the open board: the graphics (one commit) and the
    KiCad 10 DRC markers of the last click (:data:`DRC_STATE`); returns how many went."""
    return remove_markers(board) + remove_previous_drc(board, drc_state)


# ---------------------------------------------------------------------------------------------
# The plan: what goes where, decided before anything is sent (the report's banner says it)
# ---------------------------------------------------------------------------------------------

#: KiCad's stroke font, measured with pcbnew 9.0.8 (``PCB_TEXT.GetBoundingBox``, 1 mm text):
#: mixed text advances 0.80-0.83 mm per character, digits 0.98, ``m`` 1.36; 1.0 is a safe bound
#: for the text we write (names, numbers, words)
CHAR_ADVANCE = 1.0
#: a text block's height: the first line 1.70 x size, each further line 1.61 x size (measured)
FIRST_LINE = 1.70
LINE_PITCH = 1.62
#: the legend's text: this size where the board is wide enough, smaller on narrow boards
#: (at least :data:`LEGEND_MIN_CHARS` characters to a line), never below LEGEND_MIN_MM
LEGEND_MM = 1.0
LEGEND_MIN_MM = 0.3
LEGEND_MIN_CHARS = 32
LEGEND_MAX_CHARS = 72
LEGEND_MAX_LINES = 16
#: gap between the legend and the board outline's bounding box (the text's own bounding box
#: starts 0.25 x size above its anchor)
LEGEND_INSET_MM = 1.0
#: every label of a run that failed after it starts with this (after :data:`TAG`)
STALE = "STALE"

#: what the banner says of the selection a click leaves (:func:`clear_selection`)
SELECTED = "Nothing is selected in the editor after the click:"
#: the command that removes every accel-drc marker from the open board
CLEAR = "python -m accel_drc_kicad clear"

_SEVERITY_NAME = {"error": "error", "warning": "warning", "info": "info"}
_STATUS_NAME = {"violation": "violation", "cannot_verify": "cannot verify", "waived": "waived"}


@dataclass(frozen=True)
class Legend:
    """The board-level findings' legend: one multi-line text inside the outline's top-left
    corner, where KiCad's Zoom to Fit (Home) always looks: in the PCB editor it fits the board
    edges' bounding box (``COMMON_TOOLS::doZoomFit`` → ``GetDocumentExtents(false)``)."""

    x_mm: float
    y_mm: float
    size_mm: float
    text: str
    listed: int  # findings named in it (the rest: "… more in the report")


@dataclass(frozen=True)
class MarkerPlan:
    """Which findings get a marker and where, before anything is sent to KiCad."""

    numbered: tuple[tuple[int, Any], ...]  # (number, finding), worst first, at most MAX_MARKERS
    placed: int  # of those, findings with a place on the board (a ring and a label there)
    board_level: int  # findings without one (stack-up, materials, rails not found …)
    legend: Legend | None
    anchor_mm: tuple[float, float] | None  # where board-level findings are marked
    total: int  # unwaived findings (the report lists them all)
    #: marker size over the base size (:func:`marker_scale`)
    scale: float = 1.0
    #: the KiCad 9 labels (:func:`plan_labels`): ring centre (mm), text, corner (:data:`CORNERS`)
    labels: tuple[tuple[tuple[float, float], str, int], ...] = ()

    def summary(self, layer: str | None, kicad10: bool = False) -> str:
        """One sentence for the report's banner: how many markers, where, and how to undo."""
        if not self.numbered:
            return "In KiCad: no findings to mark (earlier accel-drc markers are removed)."
        parts = []
        if self.placed:
            parts.append(
                f"{self.placed} at the finding{_s(self.placed)}' place on the board"
                if self.placed != 1
                else "1 at the finding's place on the board"
            )
        if self.board_level:
            where = "inside the board outline's top-left corner (View → Zoom to Fit, Home)"
            parts.append(
                f"{self.board_level} board-level finding{_s(self.board_level)} "
                + (f"marked {where}" if kicad10 else f"listed in a legend {where}")
            )
        n = self.placed + self.board_level
        head = f"In KiCad: {n} finding{_s(n)} marked"
        if self.total > n:
            head += f" (the worst {n} of {self.total}; this report lists all)"
        kind = "as KiCad DRC markers" if kicad10 else f"on {layer or DEFAULT_LAYER}"
        tail = (
            f'{SELECTED} KiCad\'s next DRC run or "{CLEAR}" removes them.'
            if kicad10
            else f'{SELECTED} one Undo (Ctrl+Z) removes them now; "{CLEAR}" at any time.'
        )
        return f"{head} {kind}: {'; '.join(parts)}. {tail}"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _short(message: str, limit: int = 80) -> str:
    """The first clause of a finding's message (what, not why)."""
    first = message.split(": ", 1)[0].split(". ", 1)[0].strip()
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def legend_lines(numbered: Sequence[tuple[int, Any]], report: str | None) -> list[str]:
    """The legend's paragraphs (before wrapping), built from the findings themselves: their
    number, severity, status, rule id and the first clause of the message — never a fixed text
    (issue 16: a hard-coded "(stack-up, materials)" named kinds the findings were not)."""
    n = len(numbered)
    out = [f"{TAG} {n} board-level finding{_s(n)}"]
    for number, f in numbered:
        sev = str(getattr(f.severity, "value", f.severity))
        status = str(getattr(f.status, "value", f.status))
        out.append(
            f"{number}. {f.rule} ({_SEVERITY_NAME.get(sev, sev)}, "
            f"{_STATUS_NAME.get(status, status)}): {_short(str(f.message or ''))}"
        )
    if report:
        out.append(f"Report: {report}")
    return out


def _wrap(paragraphs: Sequence[str], width: int) -> list[list[str]]:
    """Each paragraph wrapped to ``width`` characters (continuation lines indented)."""
    import textwrap

    return [
        textwrap.wrap(
            p, width, subsequent_indent="   ", break_long_words=True, break_on_hyphens=False
        )
        or [""]
        for p in paragraphs
    ]


#: at most this many finding numbers after "nearby:" in one label
NEARBY_MAX = 8


Box = tuple[float, float, float, float]


def _label_box(centre: tuple[float, float], text: str, scale: float, corner: int = 0) -> Box:
    """The box (mm, x0 y0 x1 y1) a one-line label's text covers at ``corner`` of its ring
    (:data:`CHAR_ADVANCE` bounds KiCad's stroke font, so boxes that do not meet here do not meet
    on screen)."""
    size = TEXT_SIZE_MM * scale
    dx, dy = label_offset_mm(scale, corner)
    x, y = centre[0] + dx, centre[1] + dy
    w, h = len(text) * size * CHAR_ADVANCE, FIRST_LINE * size
    x0 = x - w if dx < 0 else x
    y0 = y if dy > 0 else y - h
    return (x0, y0, x0 + w, y0 + h)


def legend_box(legend: Legend) -> Box:
    """The box (mm) the legend's text covers (its first line starts 0.25 x size above it)."""
    lines = legend.text.split("\n")
    w = max(len(line) for line in lines) * legend.size_mm * CHAR_ADVANCE
    h = (FIRST_LINE + LINE_PITCH * (len(lines) - 1)) * legend.size_mm
    top = legend.y_mm - 0.25 * legend.size_mm
    return (legend.x_mm, top, legend.x_mm + w, legend.y_mm + h)


def _inside(box: Box, bbox: Box | None) -> bool:
    """Whether ``box`` lies within ``bbox`` (True with no ``bbox``)."""
    if bbox is None:
        return True
    return bbox[0] <= box[0] and box[2] <= bbox[2] and bbox[1] <= box[1] and box[3] <= bbox[3]


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def plan_labels(
    numbered: Sequence[tuple[int, Any]],
    scale: float,
    legend: Legend | None = None,
    bbox: Box | None = None,
) -> tuple[tuple[tuple[float, float], str, int], ...]:
    """The labels of the placed findings, worst first: each at the first of :data:`CORNERS`
    of its ring where it overlaps no label laid out before it and not the ``legend``; where
    every corner does, its number joins the nearest label ("nearby: E4 W6", at most
    :data:`NEARBY_MAX`, then "+N").  A corner whose text stays inside the outline's ``bbox``
    (what Zoom to Fit shows) is tried before one whose text runs off it.  Issue #31 item 2: on
    vme-wren labels lay over each other and over the legend, and none could be read.  Every
    finding keeps its ring."""
    obstacles = [legend_box(legend)] if legend is not None else []
    out: list[list[Any]] = []  # [centre, text, corner, box, nearby numbers]
    for number, f in numbered:
        if f.pos is None:
            continue
        centre = (float(f.pos[0]), float(f.pos[1]))
        text = label_for(f, number)
        taken = obstacles + [lab[3] for lab in out]
        boxes = [(_label_box(centre, text, scale, k), k) for k in range(len(CORNERS))]
        boxes.sort(key=lambda bk: (not _inside(bk[0], bbox), bk[1]))  # stable: CORNERS order
        for box, corner in boxes:
            if not any(_overlap(box, other) for other in taken):
                out.append([centre, text, corner, box, []])
                break
        else:
            if not out:  # only the legend is in the way: the label goes there all the same
                out.append([centre, text, 0, _label_box(centre, text, scale), []])
                continue
            host = min(out, key=lambda lab: math.dist(lab[0], centre))
            host[4].append(text[len(TAG) :].split()[0])
            # the host's text grew: later labels keep clear of all of it
            host[3] = _label_box(host[0], _with_nearby(host[1], host[4]), scale, host[2])
    return tuple((c, _with_nearby(text, near), corner) for c, text, corner, _b, near in out)


def _with_nearby(text: str, nearby: Sequence[str]) -> str:
    """A label with the numbers of the findings that joined it (:func:`plan_labels`)."""
    if not nearby:
        return text
    shown = list(nearby[:NEARBY_MAX])
    more = len(nearby) - len(shown)
    return text + " · nearby: " + " ".join(shown) + (f" +{more}" if more else "")


def plan_legend(
    numbered: Sequence[tuple[int, Any]],
    bbox: tuple[float, float, float, float] | None,
    report: str | None = None,
    scale: float = 1.0,
) -> Legend:
    """Lay the legend out inside ``bbox`` (mm): the text size is chosen so a line holds at least
    :data:`LEGEND_MIN_CHARS` characters in the board's width, and lines that do not fit its
    height are replaced by "… N more in the report"; ``scale`` (:func:`marker_scale`) makes it
    as large as the labels on a big board."""
    paragraphs = legend_lines(numbered, report)
    if bbox is None:  # no outline: at the origin, full size (KiCad's view is the page then)
        x0, y0, width, height = 0.0, 0.0, 200.0, 200.0
    else:
        x0, y0 = bbox[0], bbox[1]
        width, height = bbox[2] - bbox[0], bbox[3] - bbox[1]
    inset = min(LEGEND_INSET_MM, width * 0.05, height * 0.05)
    avail_w = max(width - 2 * inset, 0.1)
    avail_h = max(height - 2 * inset, 0.1)
    size = min(LEGEND_MM * scale, avail_w / (LEGEND_MIN_CHARS * CHAR_ADVANCE))
    size = max(size, LEGEND_MIN_MM)
    if 0.3 * size > inset:  # large text: its box starts 0.25 x size above the anchor
        inset = min(0.3 * size, width * 0.05, height * 0.05)
        avail_w = max(width - 2 * inset, 0.1)
        avail_h = max(height - 2 * inset, 0.1)
    chars = int(avail_w / (size * CHAR_ADVANCE))
    chars = max(min(chars, LEGEND_MAX_CHARS), 16)
    max_lines = int((avail_h - FIRST_LINE * size) / (LINE_PITCH * size)) + 1
    max_lines = max(1, min(max_lines, LEGEND_MAX_LINES))
    wrapped = _wrap(paragraphs, chars)
    lines: list[str] = []
    listed = 0
    footer = wrapped[-1] if report else []
    body = wrapped[:-1] if report else wrapped
    budget = max_lines - len(footer)
    for i, para in enumerate(body):
        rest = len(body) - i  # this paragraph and those after it (the head is body[0])
        more = 1 if rest > 1 else 0  # room for "… N more" if anything is left after this one
        if len(lines) + len(para) + more > budget and i > 0:
            lines.append(f"… {len(body) - i} more in the report"[:chars])
            break
        lines.extend(para)
        listed = i  # body[0] is the head, so paragraph i names finding i
    lines.extend(footer)
    lines = lines[: max(max_lines, 1)]
    return Legend(x0 + inset, y0 + inset, size, "\n".join(lines), listed)


def plan_markers(
    findings: Sequence[Any],
    outline_bbox: tuple[float, float, float, float] | None = None,
    report: str | None = None,
) -> MarkerPlan:
    """What :func:`place_markers` will put on the board, decided without KiCad: the unwaived
    findings worst first (at most :data:`MAX_MARKERS`), numbered; a ring and a label at each
    placed one; the board-level ones in one legend inside the outline's top-left corner."""
    chosen = marker_findings(findings)
    numbered = tuple((i, f) for i, f in enumerate(chosen[:MAX_MARKERS], 1))
    board_level = [(i, f) for i, f in numbered if f.pos is None]
    scale = marker_scale(outline_bbox)
    legend = plan_legend(board_level, outline_bbox, report, scale) if board_level else None
    # KiCad 10 marks board-level findings at the legend's corner; with no outline there is no
    # view to aim at, and those findings get no DRC marker (the report has them)
    anchor = (legend.x_mm, legend.y_mm) if legend is not None and outline_bbox else None
    return MarkerPlan(
        numbered=numbered,
        placed=len(numbered) - len(board_level),
        board_level=len(board_level),
        legend=legend,
        anchor_mm=anchor,
        total=len(chosen),
        scale=scale,
        labels=plan_labels(numbered, scale, legend, outline_bbox),
    )


def place_markers(
    board: Any,
    findings: Sequence[Any],
    layer_name: str | None = None,
    use_drc: bool = True,
    outline_bbox: tuple[float, float, float, float] | None = None,
    drc_state: Path | None = None,
    plan: MarkerPlan | None = None,
    removed_before: int = 0,
) -> MarkerResult:
    """Replace this plugin's earlier markers with markers for ``findings``, in one commit
    (one Undo reverts exactly what this click did to the board).

    On KiCad 10 they are real DRC markers instead, one per place (:func:`drc_groups`; KiCad
    clears them on its next DRC run, and the next click replaces them, see
    :func:`drc_state_path`).  KiCad 10.0.7 makes each an undo step of its own.
    ``removed_before``: how many of the last click's DRC markers the click already removed
    (:func:`remove_previous_drc`), counted in the result's ``removed``."""
    labels, rings = find_markers(board)
    old = [*labels, *rings]
    if plan is None:
        plan = plan_markers(findings, outline_bbox)
    chosen = [f for _n, f in plan.numbered]
    # the last click's DRC markers go first (only KiCad 10 made any; the click has usually
    # removed them already, while it checked): KiCad 10.0.7 leaves an API client's commit open
    # after InjectDrcError, so deleting after it is one more undo step at the end, and one
    # Undo after a click would bring the old markers back
    removed_drc = removed_before + remove_previous_drc(board, drc_state)
    if use_drc and chosen:
        ids_out: list[str] = []
        made = _inject_drc(board, plan.numbered, ids_out, plan.anchor_mm)
        if made is not None:
            # earlier graphics markers (KiCad 9, or a board saved with them), by id: a
            # begin_commit would be refused after InjectDrcError ("already has a commit")
            removed = removed_drc + _remove_old_drc(board, [i.proto.id.value for i in old])
            if ids_out:  # nothing to remember, nothing written
                _remember_drc(board, ids_out, drc_state)
            return MarkerResult(
                "drc",
                made,
                len(chosen),
                removed,
                None,
                ids=tuple(ids_out),
                where=plan.summary(None, True),
            )
    layer, name, note = _resolve_layer(board, layer_name)
    items: list[Any] = []
    rings = {(_nm(f.pos[0]), _nm(f.pos[1])) for _n, f in plan.numbered if f.pos is not None}
    items.extend(_ring(layer, x, y, plan.scale) for x, y in sorted(rings))
    for (x, y), text, corner in plan.labels:
        items.append(_label(layer, _nm(x), _nm(y), text, plan.scale, corner))
    if plan.legend is not None:
        lg = plan.legend
        items.append(_text(layer, _nm(lg.x_mm), _nm(lg.y_mm), lg.text, lg.size_mm))
    if not items and not old:
        return MarkerResult("none", 0, 0, removed_drc, name, note="no findings to mark")
    commit = retry(board.begin_commit)
    try:
        if old:
            retry(board.remove_items, old)
        created = retry(board.create_items, items) if items else []
        retry(board.push_commit, commit, "accel-drc: markers")
    except Exception:
        _drop(board, commit)
        raise
    ok = [c for c in created if getattr(getattr(c, "proto", None), "id", None) and c.proto.id.value]
    refused = len(items) - len(ok)
    if refused:
        log.warning("KiCad refused %d of %d marker items on %s", refused, len(items), name)
    if ok:
        on_top = raise_layer(board, layer, name)
        note = "; ".join(x for x in (note, on_top) if x)
    return MarkerResult(
        "graphics" if items else "none",
        created=len(ok),
        requested=len(items),
        removed=len(old) + removed_drc,
        layer=name,
        refused=refused,
        skipped_no_position=plan.board_level,
        note=note,
        ids=tuple(c.proto.id.value for c in ok),
        where=plan.summary(name),
    )


def raise_layer(board: Any, layer: int, name: str) -> str:
    """Make the marker ``layer`` visible and the editor's active layer: KiCad draws the active
    layer above every other, so the markers and the legend are no longer hidden under copper
    and silkscreen (issue #31 item 2).  This changes only the view (no undo step, nothing in
    the board file); the user picks another layer as ever.  Returns what was done, or why not
    (a KiCad without the commands: the markers are placed all the same)."""
    try:
        visible = list(retry(board.get_visible_layers))
        if layer not in visible:
            retry(board.set_visible_layers, [*visible, layer])
        retry(board.set_active_layer, layer)
    except Exception as exc:
        log.info("could not make %s the active layer: %s", name, exc)
        return f"{name} could not be made the active layer ({exc}): select it to see the markers on top"
    return f"{name} is the active layer, drawn on top"


def stale_text(text: str, where: str) -> str:
    """A marker label rewritten to say the run after it failed (idempotent: a label already
    stale names the newest failure's page, never gets a second prefix).  A one-line label gets
    the note in front; the multi-line legend gets it as lines of its own, wrapped to the
    legend's width so it stays inside the board outline."""
    import textwrap

    original = _unstale(text)
    if "\n" not in original:
        body = original[len(TAG) :].lstrip() if original.startswith(TAG) else original
        return f"{TAG} {STALE} (last run failed, see {where}) {body}".rstrip()
    width = max(len(line) for line in original.split("\n"))
    note = textwrap.wrap(
        f"{TAG} {STALE}: the last run failed, see {where}",
        max(width, 16),
        subsequent_indent="   ",
        break_on_hyphens=False,
    )
    return "\n".join([*note, original])


def _unstale(text: str) -> str:
    """The label as the successful run wrote it (undoes :func:`stale_text`)."""
    if not text.startswith(f"{TAG} {STALE}"):
        return text
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].startswith(TAG):
            return "\n".join(lines[i:])
    body = text[len(f"{TAG} {STALE}") :]
    return f"{TAG} " + body.split(") ", 1)[1] if ") " in body else TAG


def mark_stale(board: Any, where: str, drc_state: Path | None = None) -> MarkerResult:
    """After a failed run: the previous run's markers no longer describe the board, so every
    label says so (one commit, so one Undo brings the old wording back) and KiCad 10 DRC markers
    of the last click are removed.  ``where`` names the error page (relative to the board)."""
    labels, _rings = find_markers(board)
    removed = remove_previous_drc(board, drc_state)
    if not labels:
        return MarkerResult("none", 0, 0, removed, None, note="no earlier markers")
    for t in labels:
        t.proto.text.text = stale_text(t.proto.text.text, where)
    commit = retry(board.begin_commit)
    try:
        updated = retry(board.update_items, labels)
        retry(board.push_commit, commit, "accel-drc: markers stale (run failed)")
    except Exception:
        _drop(board, commit)
        raise
    ids = tuple(t.proto.id.value for t in labels)
    return MarkerResult(
        "stale",
        created=0,
        requested=len(labels),
        removed=removed,
        layer=None,
        note=f"{len(updated)} label(s) marked stale",
        ids=ids,
    )


def clear_selection(board: Any) -> int:
    """Leave nothing selected in the editor after a click, and return how many items KiCad
    still reports selected (0 unless it refused).

    Issue #31 item 1: a click must leave only its own markers selected, or nothing.  Selecting
    the markers (KiCad 9: 67–85 items on vme-wren) kept "Selected Items 67" in KiCad 9's message
    panel, cost 2.2 s of KiCad's time on vme-wren, and a Delete meant for the markers was one
    keystroke from a board item should KiCad ever select more; with nothing selected a Delete
    does nothing.  The markers stay one Undo step on KiCad 9 (one commit) either way.  The
    selection is read back raw (``GetSelection``), not through kipy: KiCad 10 answers a selected
    DRC marker with an ``Any`` kicad-python 0.8 cannot unpack (issue #29 item 4)."""
    from kipy.proto.common.commands import editor_commands_pb2 as ec

    retry(board.clear_selection)
    cmd = ec.GetSelection()
    cmd.header.document.CopyFrom(board.document)
    return len(retry(board.client.send, cmd, ec.SelectionResponse).items)
