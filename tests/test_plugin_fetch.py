"""The live reader's fast paths (issue 18), without KiCad: the typed one-pass reply parse, the
zone fills decoded from bytes, the Edge.Cuts filter on footprint graphics and the I/O thread.

Each fast path is compared with the plain protobuf reading of the same bytes (what kicad-python
itself does), so a wrong field number, a misread varint or a skipped shape fails here; the live
tests (``test_plugin_live.py``) compare the whole board with the file reader on real KiCad."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest
from conftest import ROOT, need

sys.path.insert(0, str(ROOT / "plugin"))


@pytest.fixture
def kipy() -> None:
    """kicad-python (the ``[kicad]`` extra): skipped locally without it, required in CI."""
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (the [kicad] extra) is not installed")


def _polyline(points, closed=True, arc_at=None):
    from kipy.proto.common.types import base_types_pb2

    line = base_types_pb2.PolyLine()
    for k, (x, y) in enumerate(points):
        node = line.nodes.add()
        if k == arc_at:
            node.arc.start.x_nm, node.arc.start.y_nm = x, y
            node.arc.mid.x_nm, node.arc.mid.y_nm = x + 500_000, y + 700_000
            node.arc.end.x_nm, node.arc.end.y_nm = x + 1_000_000, y
        else:
            node.point.x_nm, node.point.y_nm = x, y
    line.closed = closed
    return line


def _slow(line) -> np.ndarray:
    """Node by node through the protobuf API: the reference."""
    from accel_drc_kicad.live_reader import _polyline as nodes

    return np.asarray(nodes(line), dtype=np.float64).reshape(-1, 2)


@pytest.mark.parametrize(
    "points,closed,arc_at",
    [
        (
            [(100_000_000, 50_000_000), (101_000_000, 50_000_000), (101_000_000, 52_500_000)],
            True,
            None,
        ),
        ([(1, 2), (127, 128), (16_383, 16_384), (2**35, 2**40)], False, None),  # varint widths
        ([(-5_000_000, 3_000_000), (4_000_000, -7_000_000), (-1, -1)], True, None),  # 10-byte
        ([(0, 5_000_000), (5_000_000, 5_000_000), (5_000_000, 0)], True, None),  # zeros left out
        ([(1_000_000, 1_000_000), (9_000_000, 1_000_000), (9_000_000, 9_000_000)], True, 1),  # arc
        ([], True, None),
    ],
)
def test_ring_from_bytes_equals_the_protobuf_reading(points, closed, arc_at, kipy) -> None:
    """The numpy decoding of a serialised PolyLine gives the nodes the protobuf API gives, and
    refuses (falls back on) every shape it does not fully check: arcs, left-out zeros."""
    from accel_drc_kicad.live_reader import _point_ring, _ring_nm

    line = _polyline(points, closed, arc_at)
    data = line.SerializeToString()
    want = _slow(line)
    assert np.array_equal(_ring_nm(data), want)  # bytes (the zone path)
    assert np.array_equal(_ring_nm(line), want)  # a message (the old path)
    fast = _point_ring(data)
    zero = any(0 in p for p in points)
    if points and arc_at is None and not zero:
        assert fast is not None and np.array_equal(fast, want)
    else:
        assert fast is None  # refused: the node-by-node path read it


def test_ring_decoder_refuses_bytes_of_another_shape(kipy) -> None:
    """Bytes that are all varints in groups of eight but not a PolyLine are refused (lengths
    are checked, not only tags)."""
    from accel_drc_kicad.live_reader import _point_ring

    good = _polyline([(3_000_000, 4_000_000), (5_000_000, 6_000_000)], True).SerializeToString()
    assert _point_ring(good) is not None
    assert _point_ring(good[:-1]) is None  # cut inside the last field
    bad_len = bytearray(good)
    bad_len[1] += 1  # the first node's length no longer matches its point
    assert _point_ring(bytes(bad_len)) is None
    assert _point_ring(bytes([10, 6, 10, 4, 8, 1, 16, 1])) is not None  # (1 nm, 1 nm)
    assert _point_ring(bytes([10, 7, 10, 5, 8, 1, 16, 1])) is None  # point length 5 ≠ 2+1+1


def _api_reply(items, response_type=None) -> bytes:
    """A serialised ``ApiResponse`` carrying a ``GetItemsResponse`` of ``items``, as KiCad sends."""
    from kipy.proto.common import ApiResponse, ApiStatusCode
    from kipy.proto.common.commands.editor_commands_pb2 import GetItemsResponse

    resp = GetItemsResponse()
    for item in items:
        resp.items.add().Pack(item)
    reply = ApiResponse()
    reply.status.status = ApiStatusCode.AS_OK
    reply.header.kicad_token = "token-1"
    reply.message.Pack(resp)
    return reply.SerializeToString()


def _zone():
    from kipy.proto.board import board_types_pb2 as bt

    z = bt.Zone()
    z.id.value = "11111111-2222-3333-4444-555555555555"
    z.name = "GND plane"
    z.priority = 3
    z.layers.append(bt.BoardLayer.BL_In1_Cu)
    z.copper_settings.net.name = "GND"
    z.copper_settings.min_thickness.value_nm = 200_000
    z.outline.polygons.add().outline.CopyFrom(
        _polyline([(0, 0), (10_000_000, 0), (10_000_000, 10_000_000)])
    )
    fill = z.filled_polygons.add()
    fill.layer = bt.BoardLayer.BL_In1_Cu
    poly = fill.shapes.polygons.add()
    poly.outline.CopyFrom(
        _polyline([(1_000_000, 1_000_000), (9_000_000, 1_000_000), (9_000_000, 9_000_000)])
    )
    poly.holes.add().CopyFrom(
        _polyline([(2_000_000, 2_000_000), (3_000_000, 2_000_000), (3_000_000, 3_000_000)])
    )
    return z


class _Conn:
    """A pynng socket stand-in: replies with fixed bytes, records what was sent."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    def recv_msg(self):
        class _M:
            bytes = self.reply

        return _M()


def _board_with(reply: bytes):
    from types import SimpleNamespace

    from kipy.proto.common.types import base_types_pb2

    client = SimpleNamespace(
        _conn=_Conn(reply), connected=True, _kicad_token="", _client_name="test"
    )
    return SimpleNamespace(document=base_types_pb2.DocumentSpecifier(), client=client)


def test_typed_reply_parses_zones_like_kicad_python(kipy) -> None:
    """One C-level parse of the whole reply gives every zone field kicad-python's Any-by-Any
    reading gives; the fills stay bytes and decode to the same vertices; the token is kept."""
    from accel_drc_kicad import fetch
    from accel_drc_kicad.live_reader import _ring_nm
    from kipy.proto.board import board_types_pb2 as bt

    zone = _zone()
    board = _board_with(_api_reply([zone, zone]))
    got = fetch.get_items(board, ["KOT_PCB_ZONE"], "zone")
    assert len(got) == 2
    assert got[0].SerializeToString() == zone.SerializeToString()  # nothing lost on the wire
    assert got[0].name == "GND plane" and got[0].copper_settings.net.name == "GND"
    assert got[0].priority == 3 and got[0].copper_settings.min_thickness.value_nm == 200_000
    poly = got[0].filled_polygons[0].shapes.polygons[0]
    assert isinstance(poly.outline, bytes) and len(poly.holes) == 1
    ref = zone.filled_polygons[0].shapes.polygons[0]
    assert np.array_equal(_ring_nm(poly.outline), _slow(ref.outline))
    assert np.array_equal(_ring_nm(poly.holes[0]), _slow(ref.holes[0]))
    assert board.client._kicad_token == "token-1"
    # the request went out as a GetItems for zones
    from kipy.proto.common import ApiRequest
    from kipy.proto.common.commands.editor_commands_pb2 import GetItems

    req = ApiRequest()
    req.ParseFromString(board.client._conn.sent[0])
    cmd = GetItems()
    assert req.message.Unpack(cmd) and list(cmd.types) == [
        __import__("kipy.proto.common.types", fromlist=["KiCadObjectType"]).KiCadObjectType.Value(
            "KOT_PCB_ZONE"
        )
    ]
    # and the "any" path keeps the items as they came, for tracks and arcs in KiCad's order
    t, a = bt.Track(), bt.Arc()
    t.width.value_nm, a.width.value_nm = 150_000, 90_000
    anys = fetch.get_items(_board_with(_api_reply([t, a, t])), ["KOT_PCB_TRACE"], "any")
    assert [x.type_url.rsplit(".", 1)[-1] for x in anys] == ["Track", "Arc", "Track"]


def test_typed_reply_raises_kicads_error_for_retry(kipy) -> None:
    """A busy KiCad's answer becomes kicad-python's ApiError with its code (what retry()
    waits out), not an empty item list."""
    from accel_drc_kicad import fetch
    from accel_drc_kicad.connection import is_transient
    from kipy.errors import ApiError
    from kipy.proto.common import ApiResponse, ApiStatusCode

    reply = ApiResponse()
    reply.status.status = ApiStatusCode.AS_BUSY
    reply.status.error_message = "KiCad is busy"
    board = _board_with(reply.SerializeToString())
    with pytest.raises(ApiError) as err:
        fetch.get_items(board, ["KOT_PCB_VIA"], "via")
    assert is_transient(err.value)


def test_footprint_edges_only_edge_cuts_shapes(kipy) -> None:
    """The byte filter on footprint graphics keeps every Edge.Cuts shape and nothing else, even
    a shape whose other bytes happen to hold the Edge.Cuts pattern."""
    from accel_drc_kicad.live_reader import LayerMap, _read_footprints
    from kipy.proto.board import board_types_pb2 as bt

    fp = bt.FootprintInstance()
    fp.reference_field.text.text.text = "J1"
    fp.definition.id.entry_name = "Slot"

    def shape(layer: int, width_nm: int):
        g = bt.BoardGraphicShape()
        g.layer = layer
        g.shape.segment.start.x_nm = 1_000_000
        g.shape.segment.end.x_nm = 2_000_000
        g.shape.attributes.stroke.width.value_nm = width_nm
        fp.definition.items.add().Pack(g)

    shape(bt.BoardLayer.BL_Edge_Cuts, 100_000)
    shape(bt.BoardLayer.BL_F_SilkS, 0x2F10)  # width varint holds the bytes 0x10 0x2f…
    shape(bt.BoardLayer.BL_F_Fab, 150_000)
    shape(bt.BoardLayer.BL_Edge_Cuts, 50_000)
    pad = bt.Pad()
    pad.number = "1"
    pad.pad_stack.layers.extend([bt.BoardLayer.BL_F_Cu, bt.BoardLayer.BL_F_Mask])
    fp.definition.items.add().Pack(pad)
    footprints, edges = _read_footprints(None, LayerMap(4), {"": 0}, [fp])
    assert [e.shape.attributes.stroke.width.value_nm for e in edges] == [100_000, 50_000]
    assert all(e.layer == bt.BoardLayer.BL_Edge_Cuts for e in edges)
    (only,) = footprints
    assert only.reference == "J1" and [p.number for p in only.pads] == ["1"]
    assert only.pads[0].copper_layers == (0,) and only.pads[0].layers == ("F.Cu", "F.Mask")


def test_fetcher_runs_requests_in_order_on_one_thread(kipy) -> None:
    """Every request runs on the one I/O thread, in the order submitted (one request at a time
    on the socket); errors come out of the future; close() waits for the request in flight."""
    from accel_drc_kicad.fetch import Fetcher

    seen: list[tuple[str, str]] = []

    def job(name: str, delay: float = 0.0) -> str:
        time.sleep(delay)
        seen.append((name, threading.current_thread().name))
        return name

    def boom() -> None:
        raise ValueError("no such board")

    with Fetcher() as io:
        a = io.submit(job, "a", 0.05)
        b = io.submit(boom)
        c = io.submit(job, "c")
        assert c.result() == "c" and a.result() == "a"
        with pytest.raises(ValueError, match="no such board"):
            b.result()
        started = threading.Event()
        slow = io.submit(lambda: (started.set(), job("slow", 0.1))[1])
        queued = io.submit(job, "never")
        assert started.wait(5)
    # close(): the request in flight finished (the socket is free), the queued one dropped
    assert slow.done() and slow.result() == "slow"
    assert queued.cancelled()
    assert [n for n, _t in seen] == ["a", "c", "slow"]
    assert len({t for _n, t in seen}) == 1 and seen[0][1].startswith("kicad-io")
