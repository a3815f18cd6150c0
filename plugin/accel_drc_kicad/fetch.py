"""Bulk reads from KiCad's API, parsed in one pass, on a thread that keeps KiCad busy.

Why this exists (vme-wren, 69 MB, KiCad 9.0.8): KiCad answers one API request at a time on its
main thread, and serialising the board's items is most of the click's extraction time (zones
0.2–0.3 s for 13 MB of fills, footprints 0.45–0.75 s for 18 MB; tracks, arcs and vias 0.1 s).
The plugin's own parsing of those replies is another 0.6 s of CPU.  Done one after the other
(request, wait, parse, next request) the two add up; here one ``kicad-io`` thread sends every
request in a fixed order and hands over the raw replies, so the main thread parses one reply
while KiCad serialises the next (the thread waits in ``nng_recvmsg``, which releases the GIL).

Only one thread ever uses the connection while a :class:`Fetcher` is open (a ``Req0`` socket
carries one request at a time): everything the reader asks KiCad for goes through
:meth:`Fetcher.submit`.

Parsing: kicad-python's client parses the reply envelope, unpacks the ``GetItemsResponse`` from
its ``Any`` (a second copy of up to 18 MB) and the caller then parses every item from its own
``Any`` (70 000 Python-level calls on vme-wren).  :func:`reply_class` instead builds, once per
item type, a message class whose fields are *typed* where kicad-python's are ``Any``: an ``Any``
is ``{string type_url = 1; bytes value = 2}`` on the wire, and a length-delimited ``bytes`` field
is byte-for-byte a nested message, so a ``TypedAny { string type_url = 1; Zone value = 2 }``
parses the same bytes as the typed message.  The whole reply is then one C-level parse.  For
zones the fill polygons are declared ``bytes`` (:data:`RAW_POLYLINE`): their hundreds of
thousands of vertices are decoded with numpy (``live_reader._ring_nm``) instead of becoming one
Python-visible message per vertex.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from .connection import retry

log = logging.getLogger(__name__)

T = TypeVar("T")

#: the package of the message classes made here (kept apart from kicad-python's ``kiapi.*``)
PACKAGE = "accel_drc_kicad.wire"
#: the item types :func:`reply_class` knows, by the name the reader uses
ITEM_TYPES = {
    "zone": "kiapi.board.types.Zone",
    "footprint": "kiapi.board.types.FootprintInstance",
    "via": "kiapi.board.types.Via",
    "shape": "kiapi.board.types.BoardGraphicShape",
    "any": "google.protobuf.Any",
}
#: a zone's fill outline and holes stay serialised (``bytes``): numpy decodes them
RAW_POLYLINE = "kiapi.common.types.PolyLine"


def _field(message: Any, name: str) -> Any:
    return message.DESCRIPTOR.fields_by_name[name]


@functools.cache
def _classes() -> dict[str, Any]:
    """Build the typed reply classes once (added to protobuf's default pool beside
    kicad-python's own descriptors, which they reference)."""
    from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
    from kipy.proto.board import board_types_pb2 as bt
    from kipy.proto.common import ApiResponse
    from kipy.proto.common.commands.editor_commands_pb2 import GetItemsResponse
    from kipy.proto.common.types import base_types_pb2 as base

    pool = descriptor_pool.Default()
    fd = descriptor_pb2.FileDescriptorProto(
        name="accel_drc_kicad/wire.proto", package=PACKAGE, syntax="proto3"
    )
    deps = {
        bt.DESCRIPTOR.name,
        base.DESCRIPTOR.name,
        ApiResponse.DESCRIPTOR.file.name,
        any_pb2.DESCRIPTOR.name,
    }
    fd.dependency.extend(sorted(deps))
    FDP = descriptor_pb2.FieldDescriptorProto

    def copy(source: Any, name: str, retype: dict[str, str | None]) -> None:
        """``source`` under a new ``name`` with the fields in ``retype`` pointing at another
        message type (a full name) or, for None, plain ``bytes``."""
        dp = fd.message_type.add()
        source.DESCRIPTOR.CopyToProto(dp)
        dp.name = name
        del dp.nested_type[:]  # nested types stay referenced by their original full names
        del dp.enum_type[:]
        for f in dp.field:
            if f.name in retype:
                target = retype[f.name]
                if target is None:
                    f.type = FDP.TYPE_BYTES
                    f.ClearField("type_name")
                else:
                    f.type = FDP.TYPE_MESSAGE
                    f.type_name = f".{PACKAGE}.{target}"

    def message(name: str, fields: Sequence[tuple[str, int, int, str, bool]]) -> None:
        dp = fd.message_type.add(name=name)
        for fname, number, ftype, type_name, repeated in fields:
            f = dp.field.add(name=fname, number=number, type=ftype)
            f.label = FDP.LABEL_REPEATED if repeated else FDP.LABEL_OPTIONAL
            if type_name:
                f.type_name = type_name if type_name.startswith(".") else f".{PACKAGE}.{type_name}"

    # zones with their fill polygons left serialised
    copy(base.PolygonWithHoles, "RawPolygonWithHoles", {"outline": None, "holes": None})
    copy(base.PolySet, "RawPolySet", {"polygons": "RawPolygonWithHoles"})
    copy(bt.ZoneFilledPolygons, "RawZoneFilledPolygons", {"shapes": "RawPolySet"})
    copy(bt.Zone, "Zone", {"filled_polygons": "RawZoneFilledPolygons"})

    type_url_no = _field(any_pb2.Any, "type_url").number
    value_no = _field(any_pb2.Any, "value").number
    items_no = _field(GetItemsResponse, "items").number
    status_no = _field(ApiResponse, "status").number
    message_no = _field(ApiResponse, "message").number
    header_no = _field(ApiResponse, "header").number
    M, S = FDP.TYPE_MESSAGE, FDP.TYPE_STRING
    names = {}
    for key, full in ITEM_TYPES.items():
        item_type = ".accel_drc_kicad.wire.Zone" if key == "zone" else f".{full}"
        if key == "any":  # items stay Any (a request for several types)
            item = item_type
        else:
            item = f"Item_{key}"
            message(
                item,
                [("type_url", type_url_no, S, "", False), ("value", value_no, M, item_type, False)],
            )
        message(f"Items_{key}", [("items", items_no, M, item, True)])
        message(
            f"Payload_{key}",
            [
                ("type_url", type_url_no, S, "", False),
                ("value", value_no, M, f"Items_{key}", False),
            ],
        )
        message(
            f"Reply_{key}",
            [
                (
                    "header",
                    header_no,
                    M,
                    "." + _field(ApiResponse, "header").message_type.full_name,
                    False,
                ),
                (
                    "status",
                    status_no,
                    M,
                    "." + _field(ApiResponse, "status").message_type.full_name,
                    False,
                ),
                ("message", message_no, M, f"Payload_{key}", False),
            ],
        )
        names[key] = f"{PACKAGE}.Reply_{key}"
    try:
        pool.FindFileByName(fd.name)
    except KeyError:
        pool.Add(fd)
    return {
        k: message_factory.GetMessageClass(pool.FindMessageTypeByName(v)) for k, v in names.items()
    }


def reply_class(kind: str) -> Any:
    """The typed reply class for item type ``kind`` (a key of :data:`ITEM_TYPES`)."""
    return _classes()[kind]


def _type_url(full_name: str) -> str:
    return "type.googleapis.com/" + full_name


def get_items(board: Any, kinds: Sequence[str], item: str) -> list[Any]:
    """The board's items of the ``KiCadObjectType`` names ``kinds``, parsed as ``item``
    (a key of :data:`ITEM_TYPES`; ``"any"`` leaves them as ``Any``), in KiCad's order.

    Talks to kicad-python's socket directly (one request, one C-level parse of the reply); a
    client without one (a stand-in in tests) goes through its ``send``."""
    from kipy.errors import ApiError
    from kipy.proto.common import ApiRequest, ApiStatusCode
    from kipy.proto.common.commands.editor_commands_pb2 import GetItems, GetItemsResponse
    from kipy.proto.common.types import KiCadObjectType

    cmd = GetItems()
    cmd.header.document.CopyFrom(board.document)
    for kind in kinds:
        cmd.types.append(KiCadObjectType.Value(kind))
    client = board.client
    conn = getattr(client, "_conn", None) if getattr(client, "connected", False) else None
    if conn is None or not hasattr(client, "_kicad_token"):
        response = client.send(cmd, GetItemsResponse)
        return _unpack_each(response.items, item)
    envelope = ApiRequest()
    envelope.message.Pack(cmd)
    envelope.header.kicad_token = client._kicad_token
    envelope.header.client_name = client._client_name
    from kipy.errors import ConnectionError as KiConnectionError

    try:
        conn.send(envelope.SerializeToString())
        data = conn.recv_msg().bytes
    except Exception as exc:  # pynng's exceptions, as kicad-python words them
        raise KiConnectionError(f"Error talking to KiCad: {exc}") from None
    reply = reply_class(item)()
    reply.ParseFromString(data)
    if reply.status.status != ApiStatusCode.AS_OK:
        raise ApiError(
            f"KiCad returned error: {reply.status.error_message}",
            raw_message=reply.status.error_message,
            code=reply.status.status,
        )
    if reply.message.type_url != _type_url(GetItemsResponse.DESCRIPTOR.full_name):
        raise ApiError(f"unexpected reply {reply.message.type_url!r} to GetItems")
    if not client._kicad_token:
        client._kicad_token = reply.header.kicad_token
    items = reply.message.value.items
    if item == "any":
        return list(items)
    want = _type_url(ITEM_TYPES[item])
    return [i.value for i in items if i.type_url == want]


def _unpack_each(items: Sequence[Any], item: str) -> list[Any]:
    """The slow path for a client without a socket: each ``Any`` parsed on its own."""
    if item == "any":
        return list(items)
    from google.protobuf import message_factory
    from google.protobuf.descriptor_pool import Default

    full = f"{PACKAGE}.Zone" if item == "zone" else ITEM_TYPES[item]
    _classes()
    cls = message_factory.GetMessageClass(Default().FindMessageTypeByName(full))
    want = _type_url(ITEM_TYPES[item])
    out = []
    for a in items:
        if a.type_url == want:
            msg = cls()
            msg.ParseFromString(a.value)
            out.append(msg)
    return out


class Fetcher:
    """One ``kicad-io`` thread that sends KiCad every request the reader makes, in the order
    submitted, while the caller parses the replies already in (see the module docstring)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kicad-io")

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """``retry(fn, *args)`` on the I/O thread (busy/not-ready answers are retried)."""
        return self._pool.submit(retry, fn, *args)

    def items(self, board: Any, kinds: Sequence[str], item: str) -> Future[list[Any]]:
        return self.submit(get_items, board, kinds, item)

    def close(self) -> None:
        """Wait for the request in flight (the socket must be free when the caller goes on to
        use it) and drop the ones not yet sent."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Timer:
    """Per-stage timings, for the log and the benchmark: wall (``stages``) and the CPU of the
    whole process, every thread (``cpu``: on a shared machine the steadier number)."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._t = time.perf_counter()
        self._c = time.process_time()
        #: the process's CPU before this timer (the interpreter's start and the imports)
        self.cpu_start = self._c

    def lap(self, name: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        self.stages[name] = self.stages.get(name, 0.0) + now - self._t
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu - self._c
        self._t, self._c = now, cpu


def _call(obj: Any, method: str) -> Any:
    return getattr(obj, method)()


class BoardRequests:
    """The bulk requests of one live read, sent as soon as the board is known (before numpy
    and the engine are even imported: KiCad serialises the zones meanwhile); the reader adds
    its small requests to the same :class:`Fetcher` and parses the replies in this order."""

    def __init__(self, board: Any) -> None:
        self.board = board
        self.io = Fetcher()
        io = self.io
        # methods looked up on the I/O thread too: whatever goes wrong is raised by the
        # future, to the reader, not here (a caller that never reads loses nothing)
        self.copper_count: Future[int] = io.submit(_call, board, "get_copper_layer_count")
        self.nets: Future[Any] = io.submit(_call, board, "get_nets")
        self.zones = io.items(board, ["KOT_PCB_ZONE"], "zone")
        # the drawings before the footprints: their Edge.Cuts give the board view's grid, so
        # its zone fills are simplified while KiCad serialises the footprints
        self.shapes = io.items(board, ["KOT_PCB_SHAPE"], "shape")
        # one request for both keeps KiCad's (the file's) order of tracks and arcs
        self.tracks = io.items(board, ["KOT_PCB_TRACE", "KOT_PCB_ARC"], "any")
        self.vias = io.items(board, ["KOT_PCB_VIA"], "via")
        # the footprints last: KiCad's longest serialising (vme-wren: 0.45-0.9 s, 50 MB from
        # KiCad 10), during which the reader parses the tracks and vias; after it, only the
        # footprints' own parse is left before the check
        self.footprints = io.items(board, ["KOT_PCB_FOOTPRINT"], "footprint")

    def close(self) -> None:
        self.io.close()


def start_requests(board: Any) -> BoardRequests:
    """Start a live read of ``board`` (see :class:`BoardRequests`)."""
    return BoardRequests(board)
