"""Stand-ins for KiCad's API server and board, for the plugin's tests without a KiCad: they
speak kicad-python's real protobuf messages and record what the plugin sends."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest


class FakeClient:
    """A KiCad API server reduced to what the marker code sends: it records every command and
    answers ``InjectDrcError`` as KiCad 10 does, or refuses it as KiCad 9 does (no handler).
    ``AddToSelection``, ``GetSelection`` and ``DeleteItems`` go to ``owner`` (the fake board's ``select_ids``
    or ``add_to_selection`` / ``remove_items_by_id``) and are answered as KiCad 10 answers them:
    a selected DRC marker is an empty ``Any`` (kicad-python 0.8 cannot unpack it), any other
    item a ``BoardText`` with its id."""

    def __init__(self, kicad10: bool, owner: Any = None) -> None:
        self.kicad10 = kicad10
        self.owner = owner
        self.sent: list = []
        self.markers: set[str] = set()

    def send(self, cmd, response_type):
        from kipy.errors import ApiError
        from kipy.proto.common import ApiStatusCode

        self.sent.append(cmd)
        kind = type(cmd).__name__
        if kind == "AddToSelection":
            return self._select(cmd, response_type)
        if kind == "DeleteItems":
            return self._delete(cmd, response_type)
        if kind == "GetSelection":
            return self._selection(response_type)
        if not self.kicad10:
            raise ApiError(
                "no handler available for request of type InjectDrcError",
                code=ApiStatusCode.AS_UNHANDLED,
            )
        resp = response_type()
        resp.marker.value = f"00000000-0000-0000-0000-{len(self.sent):012d}"
        self.markers.add(resp.marker.value)
        return resp

    def _select(self, cmd, response_type):
        from kipy.proto.board import board_types_pb2

        refs = [SimpleNamespace(id=k) for k in cmd.items]
        select = getattr(self.owner, "select_ids", None) or self.owner.add_to_selection
        resp = response_type()
        for got in select(refs):
            uuid = str(getattr(getattr(got, "id", got), "value", got))
            item = resp.items.add()
            if uuid not in self.markers:
                text = board_types_pb2.BoardText()
                text.id.value = uuid
                item.Pack(text)
        return resp

    def _selection(self, response_type):
        """The owner's selection as KiCad 10 answers ``GetSelection`` (markers: empty ``Any``)."""
        from kipy.proto.board import board_types_pb2

        resp = response_type()
        for uuid in getattr(self.owner, "selected", []):
            item = resp.items.add()
            if uuid not in self.markers:
                text = board_types_pb2.BoardText()
                text.id.value = uuid
                item.Pack(text)
        return resp

    def _delete(self, cmd, response_type):
        from kipy.proto.common.commands import editor_commands_pb2 as ec

        self.owner.remove_items_by_id(list(cmd.item_ids))
        resp = response_type()
        for kiid in cmd.item_ids:
            done = resp.deleted_items.add()
            done.id.CopyFrom(kiid)
            done.status = ec.IDS_OK
        return resp


class RunBoard:
    """A kipy Board stand-in for :func:`action.run` (the live reader is replaced by the file
    reader): it records commits and keeps the items created, as KiCad would."""

    def __init__(self, board_file: Path) -> None:
        from kipy.proto.common.types import base_types_pb2
        from kipy.util.board_layer import CANONICAL_LAYER_NAMES

        self.document = base_types_pb2.DocumentSpecifier()
        self.document.board_filename = board_file.name
        self.document.project.path = str(board_file.parent)
        self.client = FakeClient(kicad10=False, owner=self)  # KiCad 9: no InjectDrcError
        self.items: list = []
        self.log: list = []
        self.selected: list = []
        #: the ids of each ``DeleteItems`` KiCad got (KiCad 10's DRC markers go by id)
        self.deleted: list[list[str]] = []
        self.cmts = {v: k for k, v in CANONICAL_LAYER_NAMES.items()}["Cmts.User"]

    def get_text(self):
        from kipy.board_types import BoardText

        return [i for i in self.items if isinstance(i, BoardText)]

    def get_shapes(self):
        from kipy.board_types import BoardText

        return [i for i in self.items if not isinstance(i, BoardText)]

    def get_enabled_layers(self):
        return [self.cmts]

    def begin_commit(self):
        self.log.append("begin")
        return "c"

    def create_items(self, items):
        for n, i in enumerate(items):
            i.proto.id.value = f"00000000-0000-0000-0000-{len(self.items) + n:012d}"
        self.items += items
        return items

    def remove_items(self, items):
        ids = {i.proto.id.value for i in items}
        self.items = [i for i in self.items if i.proto.id.value not in ids]

    def remove_items_by_id(self, ids):
        self.deleted.append([k.value for k in ids])

    def update_items(self, items):
        self.log.append("update")
        return items

    def push_commit(self, commit, message):
        self.log.append(message)

    def drop_commit(self, commit):
        self.log.append("drop")

    def clear_selection(self):
        self.selected = []

    def add_to_selection(self, refs):
        """Adds to the selection (KiCad's semantics) and answers the whole selection."""
        self.selected += [r.id.value for r in refs if r.id.value not in self.selected]
        return list(self.selected)


def click_setup(
    folder: Path, source: Path, monkeypatch: pytest.MonkeyPatch, name: str | None = None
) -> tuple[RunBoard, Any, Path]:
    """A copy of the board ``source`` (and its ``.kicad_pro``) in ``folder``, renamed to
    ``name`` if given, open in a stand-in KiCad: (the board, the KiCad to hand to
    :func:`action.run`, the board file).  The live reader is the file reader of the copy."""
    from accel_drc.readers.kicad_file import read
    from accel_drc_kicad import action, markers

    folder.mkdir(parents=True, exist_ok=True)
    board_file = folder / ((name or source.stem) + ".kicad_pcb")
    shutil.copyfile(source, board_file)
    shutil.copyfile(source.with_suffix(".kicad_pro"), board_file.with_suffix(".kicad_pro"))
    monkeypatch.setattr(action, "read_live", lambda kicad, board, **kw: read(str(board_file)))
    monkeypatch.setattr(markers, "DRC_STATE", folder.parent / "drc-state.json")
    fake = RunBoard(board_file)
    kicad = SimpleNamespace(get_board=lambda: fake, get_version=lambda: SimpleNamespace(major=9))
    return fake, kicad, board_file
