"""Issue #31 item 2, KiCad 9: the markers read on a big board.

On vme-wren (160 × 233.5 mm) KiCad 9 showed hair-thin rings (a 0.15 mm stroke: under a pixel at
Zoom to Fit), 0.8 mm labels (≈ 3 px), labels lying over each other, and the legend under copper
and silkscreen.  Now the markers are sized to the board as Zoom to Fit shows it, a label that
would overlap an earlier one joins it, and the marker layer is made the active layer, which KiCad
draws on top.  The live half (a real KiCad 9 under Xvfb) is in test_plugin_action.py."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import ROOT, SHARED_BOARDS, need

sys.path.insert(0, str(ROOT / "plugin"))

VME = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
#: a bounding box (mm) of vme-wren's size, 160.2 × 233.5 mm
VME_BBOX = (25.4, 25.4, 185.6, 258.9)


@pytest.fixture
def kipy() -> None:
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (the [kicad] extra) is not installed")


def _finding(number: int, x: float, y: float, sev: str = "error") -> Any:
    from accel_drc.results import Finding, Severity, Status

    return Finding(f"r.{number}", "via_stub", Severity(sev), Status.VIOLATION, "stub", pos=(x, y))


def test_markers_grow_with_the_board(kipy) -> None:
    from accel_drc_kicad import markers

    assert markers.marker_scale(None) == 1.0
    assert markers.marker_scale((0.0, 0.0, 22.1, 50.0)) == 1.0  # a small board: as before
    big = markers.marker_scale(VME_BBOX)
    assert big == pytest.approx(233.5 / markers.SCALE_EXTENT_MM)
    # at Zoom to Fit the longer side fills ≈ 900 px: the text is ≥ 10 px, the stroke ≥ 1.5 px
    px_per_mm = 900 / 233.5
    assert markers.TEXT_SIZE_MM * big * px_per_mm >= 10
    ring = markers._ring(0, 0, 0, big)
    assert ring.proto.shape.attributes.stroke.width.value_nm * 1e-6 * px_per_mm >= 1.5


def _circle(layer: int, radius_nm: int, width_nm: int) -> Any:
    from kipy.proto.board import board_types_pb2

    p = board_types_pb2.BoardGraphicShape()
    p.layer = layer
    p.shape.circle.center.x_nm = 5_000_000
    p.shape.circle.radius_point.x_nm = 5_000_000 + radius_nm
    p.shape.attributes.stroke.width.value_nm = width_nm
    return SimpleNamespace(proto=p)


def test_our_rings_are_known_by_their_stroke_alone(kipy) -> None:
    """A ring no longer needs a label at a fixed offset (a label may have joined another):
    its stroke (a tenth of its radius, to the µm, plus 100 nm) marks it.  Rings of the earlier
    version (1.5 mm, 0.1501 mm) are still found, a user's circle or one on copper is not."""
    from accel_drc_kicad import markers
    from kipy.proto.board.board_types_pb2 import BoardLayer

    cmts, fcu = BoardLayer.BL_Cmts_User, BoardLayer.BL_F_Cu
    board = SimpleNamespace(
        get_text=lambda: [],
        get_shapes=lambda: [
            _circle(cmts, 1_500_000, 150_100),  # the earlier version's ring
            _circle(cmts, 5_300_000, markers.ring_width_nm(5_300_000)),  # a scaled one
            _circle(cmts, 1_500_000, 150_000),  # the user's
            _circle(fcu, 1_500_000, 150_100),  # copper: never ours
        ],
    )
    _labels, rings = markers.find_markers(board)
    assert [r.proto.shape.circle.radius_point.x_nm - 5_000_000 for r in rings] == [
        1_500_000,
        5_300_000,
    ]


def test_a_label_that_would_overlap_goes_to_another_corner(kipy) -> None:
    """Two findings 1 mm apart: the second label goes below its ring, not over the first."""
    from accel_drc_kicad import markers

    findings = [_finding(1, 10.0, 10.0), _finding(2, 11.0, 10.5, "warning")]
    plan = markers.plan_markers(findings, (0.0, 0.0, 50.0, 80.0))
    assert [(c, corner) for c, _t, corner in plan.labels] == [((10.0, 10.0), 0), ((11.0, 10.5), 1)]
    a, b = (markers._label_box(c, t, plan.scale, k) for c, t, k in plan.labels)
    assert not markers._overlap(a, b)


def test_where_no_corner_is_free_the_number_joins_the_nearest_label(kipy) -> None:
    from accel_drc_kicad import markers

    findings = [_finding(i, 10.0, 10.0) for i in range(1, 7)]  # six at one via
    plan = markers.plan_markers(findings, (0.0, 0.0, 50.0, 80.0))
    assert [corner for _c, _t, corner in plan.labels] == [0, 1, 2, 3]
    assert plan.labels[0][1].endswith("· nearby: E5 E6")


def test_nearby_numbers_are_capped(kipy) -> None:
    from accel_drc_kicad import markers

    findings = [_finding(i, 10.0, 10.0) for i in range(1, 17)]
    text = markers.plan_markers(findings, (0.0, 0.0, 50.0, 50.0)).labels[0][1]
    assert text.endswith("nearby: E5 E6 E7 E8 E9 E10 E11 E12 +4")


def test_labels_keep_clear_of_the_legend(kipy) -> None:
    """A finding inside the legend's corner: its label goes where the legend is not."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    board_level = Finding("r.stack", "tg", Severity.ERROR, Status.CANNOT_VERIFY, "no Tg")
    plan = markers.plan_markers([board_level, _finding(2, 3.0, 5.0)], (0.0, 0.0, 60.0, 60.0))
    legend = markers.legend_box(plan.legend)
    ((centre, text, corner),) = plan.labels
    assert markers._overlap(markers._label_box(centre, text, plan.scale, 0), legend)
    assert not markers._overlap(markers._label_box(centre, text, plan.scale, corner), legend)


@pytest.mark.slow
def test_no_two_labels_overlap_on_vme_wren(kipy) -> None:
    """vme-wren's real findings (no config): the labels laid out for KiCad 9 do not overlap,
    every placed finding keeps its ring and is named in exactly one label."""
    need(VME.is_file(), f"vme-wren is not beside the repository ({VME})")
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", str(VME), "--json", "-", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode in (0, 5), r.stderr
    findings = [
        Finding(
            f["rule"],
            f["check"],
            Severity(f["severity"]),
            Status(f["status"]),
            f["message"],
            pos=(f["pos"]["x"], f["pos"]["y"]) if f.get("pos") else None,
        )
        for f in json.loads(r.stdout)["findings"]
    ]
    plan = markers.plan_markers(findings, VME_BBOX)
    assert plan.placed > 20 and len(plan.labels) < plan.placed  # some joined
    boxes = [markers._label_box(c, t, plan.scale, k) for c, t, k in plan.labels]
    legend = markers.legend_box(plan.legend)
    assert not any(markers._overlap(b, legend) for b in boxes)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not markers._overlap(a, b), (a, b)
    named, more = [], 0
    for _c, text, _k in plan.labels:
        head, _sep, nearby = text.partition(" · nearby: ")
        named.append(int(head[len(markers.TAG) :].split()[0][1:]))
        named += [int(n[1:]) for n in nearby.split() if not n.startswith("+")]
        more += sum(int(n[1:]) for n in nearby.split() if n.startswith("+"))
    placed = [n for n, f in plan.numbered if f.pos is not None]
    assert len(set(named)) == len(named) and set(named) <= set(placed)
    assert len(named) + more == len(placed)


class _GraphicsBoard:
    """kipy's ``Board`` as KiCad 9 answers the graphics path, recording the calls."""

    def __init__(self, view_calls: bool = True) -> None:
        from kipy.util.board_layer import CANONICAL_LAYER_NAMES

        self.by_name = {v: k for k, v in CANONICAL_LAYER_NAMES.items()}
        self.calls: list[Any] = []
        self.created: list[Any] = []
        if view_calls:
            self.get_visible_layers = lambda: [self.by_name["F.Cu"]]
            self.set_visible_layers = lambda layers: self.calls.append(("visible", list(layers)))
            self.set_active_layer = lambda layer: self.calls.append(("active", layer))

    def get_text(self) -> list[Any]:
        return []

    def get_shapes(self) -> list[Any]:
        return []

    def get_enabled_layers(self) -> list[int]:
        return [self.by_name["Cmts.User"]]

    def begin_commit(self) -> str:
        self.calls.append("begin")
        return "c"

    def create_items(self, items: list[Any]) -> list[Any]:
        self.created = items
        for i, item in enumerate(items):
            item.proto.id.value = f"id{i}"
        return items

    def push_commit(self, commit: str, message: str) -> None:
        self.calls.append("push")


def test_the_marker_layer_is_made_visible_and_active_after_the_commit(kipy) -> None:
    from accel_drc_kicad import markers

    board = _GraphicsBoard()
    findings = [_finding(1, 30.0, 30.0), _finding(2, 30.2, 30.0)]  # one via, two findings
    made = markers.place_markers(board, findings, use_drc=False, outline_bbox=VME_BBOX)
    cmts = board.by_name["Cmts.User"]
    assert board.calls == [
        "begin",
        "push",
        ("visible", [board.by_name["F.Cu"], cmts]),
        ("active", cmts),
    ]
    assert "Cmts.User is the active layer, drawn on top" in made.note
    # a ring per place, a label per finding (the second at another corner)
    circles = [i for i in board.created if not hasattr(i.proto, "text")]
    texts = [i for i in board.created if hasattr(i.proto, "text")]
    assert len(circles) == 2 and len(texts) == 2
    assert [x.proto.text.text.split()[1] for x in texts] == ["E1", "E2"]  # two corners
    size = texts[0].proto.text.attributes.size.y_nm * 1e-6
    assert size == pytest.approx(markers.TEXT_SIZE_MM * markers.marker_scale(VME_BBOX), abs=1e-6)


def test_a_kicad_without_the_view_commands_still_gets_its_markers(kipy) -> None:
    from accel_drc_kicad import markers

    board = _GraphicsBoard(view_calls=False)
    made = markers.place_markers(board, [_finding(1, 30.0, 30.0)], use_drc=False)
    assert made.created == 2 and board.calls == ["begin", "push"]
    assert "could not be made the active layer" in made.note


def test_a_corner_inside_the_outline_comes_first(kipy) -> None:
    """A finding at the outline's right edge: its label goes left, onto the board, not off it
    (off the board it runs out of what Zoom to Fit shows)."""
    from accel_drc_kicad import markers

    bbox = (0.0, 0.0, 60.0, 60.0)
    ((centre, text, corner),) = markers.plan_markers([_finding(1, 58.0, 30.0)], bbox).labels
    assert corner == 2  # up-left
    assert markers._inside(markers._label_box(centre, text, 1.0, corner), bbox)
