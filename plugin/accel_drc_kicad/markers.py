"""Show findings in the PCB editor, and take them away again.

Two ways, picked at run time:

* **KiCad 10**: ``InjectDrcError`` puts real DRC markers in the editor (they show in the DRC
  dialog, and KiCad clears them on its next DRC run).  A server without the command answers
  "no handler" (``AS_UNHANDLED``); that is how KiCad 9 is detected, not by version numbers.
* **Otherwise** (KiCad 9): marker graphics on a user layer (``Cmts.User`` unless the config's
  ``report.marker_layer`` names another enabled layer): a ring around the spot and a short label.
  All created in **one commit**, so one Undo (Ctrl+Z) removes them all.

Markers are tagged so a rerun removes only its own, never the user's drawings: every label's text
starts with :data:`TAG`, and a ring is a circle of exactly :data:`RING_RADIUS_MM` and
:data:`RING_WIDTH_NM` centred at a fixed offset from its label on the same layer.  The tag lives in
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
RING_RADIUS_MM = 1.5
#: an odd width (0.1501 mm) no user draws by hand: together with the radius and the label offset
#: it identifies our rings
RING_WIDTH_NM = 150_100
#: label position relative to the ring centre (mm)
LABEL_DX_MM = RING_RADIUS_MM * 0.75
LABEL_DY_MM = -RING_RADIUS_MM * 0.75
TEXT_SIZE_MM = 0.8
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


def _is_our_ring(shape: Any, label_centres: set[tuple[int, int, int]]) -> bool:
    g = shape.proto.shape
    if g.WhichOneof("geometry") != "circle":
        return False
    if g.attributes.stroke.width.value_nm != RING_WIDTH_NM:
        return False
    c = g.circle.center
    r = math.hypot(g.circle.radius_point.x_nm - c.x_nm, g.circle.radius_point.y_nm - c.y_nm)
    if abs(r - _nm(RING_RADIUS_MM)) > 2:
        return False
    return (shape.proto.layer, c.x_nm, c.y_nm) in label_centres


def find_markers(board: Any) -> tuple[list[Any], list[Any]]:
    """(labels, rings) this plugin made earlier, on any layer."""
    labels = [
        t
        for t in retry(board.get_text)
        if hasattr(t.proto, "text") and t.proto.text.text.startswith(TAG)
    ]
    centres = set()
    for t in labels:
        p = t.proto.text.position
        centres.add((t.proto.layer, p.x_nm - _nm(LABEL_DX_MM), p.y_nm - _nm(LABEL_DY_MM)))
    rings = [s for s in retry(board.get_shapes) if _is_our_ring(s, centres)] if centres else []
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


def _ring(layer: int, x_nm: int, y_nm: int) -> Any:
    from kipy.board_types import BoardCircle
    from kipy.proto.board import board_types_pb2

    p = board_types_pb2.BoardGraphicShape()
    p.layer = layer
    p.shape.circle.center.x_nm = x_nm
    p.shape.circle.center.y_nm = y_nm
    p.shape.circle.radius_point.x_nm = x_nm + _nm(RING_RADIUS_MM)
    p.shape.circle.radius_point.y_nm = y_nm
    p.shape.attributes.stroke.width.value_nm = RING_WIDTH_NM
    return BoardCircle(p)


def _label(layer: int, x_nm: int, y_nm: int, text: str) -> Any:
    from kipy.board_types import BoardText
    from kipy.proto.board import board_types_pb2
    from kipy.proto.common.types import enums_pb2

    p = board_types_pb2.BoardText()
    p.layer = layer
    p.text.text = text
    p.text.position.x_nm = x_nm + _nm(LABEL_DX_MM)
    p.text.position.y_nm = y_nm + _nm(LABEL_DY_MM)
    a = p.text.attributes
    a.size.x_nm = _nm(TEXT_SIZE_MM)
    a.size.y_nm = _nm(TEXT_SIZE_MM)
    a.stroke_width.value_nm = _nm(TEXT_SIZE_MM * 0.15)
    a.visible = True
    a.horizontal_alignment = enums_pb2.HA_LEFT
    a.vertical_alignment = enums_pb2.VA_BOTTOM
    return BoardText(p)


def _inject_drc(
    board: Any,
    findings: Sequence[Any],
    ids: list[str] | None = None,
    anchor: tuple[float, float] | None = None,
) -> int | None:
    """KiCad 10's real DRC markers; None when the server has no such command (KiCad 9), or when
    nothing could be asked (no finding has a place and there is no ``anchor``: the caller then
    draws graphics, which work on every version).  A finding without a position (stack-up,
    materials) is marked at ``anchor`` (mm), above the board.  The new markers' ids are
    appended to ``ids``."""
    from kipy.proto.board import board_commands_pb2 as bc
    from kipy.proto.common.types import base_types_pb2

    sev = {"error": bc.DRS_ERROR, "warning": bc.DRS_WARNING}
    made = 0
    asked = False
    for number, f in enumerate(findings, 1):
        pos = f.pos if f.pos is not None else anchor
        if pos is None:
            continue
        cmd = bc.InjectDrcError()
        cmd.board.CopyFrom(board.document)
        cmd.severity = sev.get(getattr(f.severity, "value", ""), bc.DRS_WARNING)
        cmd.message = label_for(f, number) + ("" if f.pos is not None else " (board-level)")
        cmd.position.x_nm = _nm(pos[0])
        cmd.position.y_nm = _nm(pos[1])
        for uuid in f.items:
            cmd.items.append(base_types_pb2.KIID(value=uuid))
        asked = True
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
    return made if asked else None


# ---------------------------------------------------------------------------------------------
# KiCad 10's DRC markers carry no tag we can query (kicad-python 0.8 has no marker item type), so
# the ids KiCad returns are kept in the plugin's own directory, per board, and the next click
# deletes those before injecting new ones: a rerun replaces its markers instead of doubling them.
# ---------------------------------------------------------------------------------------------

#: where the ids of the DRC markers of the last click live (beside the plugin's log)
DRC_STATE = Path(__file__).resolve().parent.parent / "accel-drc-markers.json"


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
            target.write_text(json.dumps(state, indent=1), encoding="utf-8")
            return
        except OSError:
            continue
    log.warning("could not record the DRC marker ids (%s): a rerun will not remove them", path)


def _remove_old_drc(board: Any, ids: Sequence[str]) -> int:
    """Delete the DRC markers of the previous click (gone already if KiCad re-ran its DRC or the
    board was reopened: then KiCad refuses the ids, which is fine)."""
    if not ids:
        return 0
    from kipy.proto.common.types import base_types_pb2

    try:
        board.remove_items_by_id([base_types_pb2.KIID(value=i) for i in ids])
    except Exception as exc:
        log.info("previous DRC markers not removed (%s): probably cleared by KiCad already", exc)
        return 0
    return len(ids)


def place_markers(
    board: Any,
    findings: Sequence[Any],
    layer_name: str | None = None,
    use_drc: bool = True,
    outline_bbox: tuple[float, float, float, float] | None = None,
    drc_state: Path | None = None,
) -> MarkerResult:
    """Replace this plugin's earlier markers with markers for ``findings``, in one commit
    (one Undo reverts exactly what this click did to the board).

    On KiCad 10 they are real DRC markers instead (not part of the undo history: KiCad clears
    them on its next DRC run, and the next click replaces them, see :data:`DRC_STATE`)."""
    labels, rings = find_markers(board)
    old = [*labels, *rings]
    chosen = marker_findings(findings)
    if use_drc and chosen:
        state_path = drc_state or DRC_STATE
        state = _read_state(state_path)
        key = _board_key(board)
        previous = state.get(key, [])
        ids_out: list[str] = []
        anchor = None
        if outline_bbox is not None:
            anchor = (outline_bbox[0], outline_bbox[1] - 4 * RING_RADIUS_MM)
        made = _inject_drc(board, chosen[:MAX_MARKERS], ids_out, anchor)
        if made is not None:
            removed = _remove_old_drc(board, previous)
            removed += remove_markers(board) if old else 0
            if ids_out or previous:  # nothing to remember, nothing written
                state[key] = ids_out
                _write_state(state_path, state)
            return MarkerResult("drc", made, min(len(chosen), MAX_MARKERS), removed, None)
    layer, name, note = _resolve_layer(board, layer_name)
    items: list[Any] = []
    positioned = [f for f in chosen if f.pos is not None]
    no_pos = len(chosen) - len(positioned)
    for number, f in enumerate(positioned[:MAX_MARKERS], 1):
        x, y = _nm(f.pos[0]), _nm(f.pos[1])
        items.append(_ring(layer, x, y))
        items.append(_label(layer, x, y, label_for(f, number)))
    if no_pos:
        x, y = _summary_anchor(outline_bbox, positioned)
        text = f"{TAG} {no_pos} board-level finding(s) (stack-up, materials): see the report"
        items.append(_ring(layer, x, y))
        items.append(_label(layer, x, y, text))
    if not items and not old:
        return MarkerResult("none", 0, 0, 0, name, note="no findings to mark")
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
    return MarkerResult(
        "graphics" if items else "none",
        created=len(ok),
        requested=len(items),
        removed=len(old),
        layer=name,
        refused=refused,
        skipped_no_position=no_pos,
        note=note,
    )


def _summary_anchor(
    bbox: tuple[float, float, float, float] | None, positioned: Sequence[Any]
) -> tuple[int, int]:
    """Where the board-level label goes: just above the board outline's top-left corner."""
    if bbox is not None:
        return _nm(bbox[0]), _nm(bbox[1] - 4 * RING_RADIUS_MM)
    if positioned:
        return _nm(positioned[0].pos[0]), _nm(positioned[0].pos[1] - 4 * RING_RADIUS_MM)
    return 0, 0


def select_items(board: Any, uuids: Sequence[str]) -> int:
    """Select the given items in the editor (the worst finding's vias, tracks, pads …)."""
    if not uuids:
        return 0
    from kipy.proto.common.types import base_types_pb2

    class _Ref:
        def __init__(self, uuid: str) -> None:
            self.id = base_types_pb2.KIID(value=uuid)

    retry(board.clear_selection)
    selected = retry(board.add_to_selection, [_Ref(u) for u in uuids])
    return len(selected)
