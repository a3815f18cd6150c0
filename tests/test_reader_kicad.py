"""Reader unit tests on small hand-written boards, one per KiCad format generation.

Expected values are worked out by hand in the comments (footprint transforms, arc extremes,
line-width inflation, zone areas); the KiCad 6, 8 and 9 boards are also checked against
KiCad's own pcbnew in ``test_groundtruth_pcbnew.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from accel_drc.errors import InputError
from accel_drc.readers import read_board
from accel_drc.readers.kicad_file import (
    Transform,
    kicad_major,
    parse_stackup,
    read,
    read_text,
)
from accel_drc.readers.sexpr import SexprIndex, parse_points, parse_span
from conftest import FIXTURE_BOARDS, FIXTURES

VERSIONS = FIXTURES / "kicad_versions"


def board(name: str):  # noqa: ANN201
    return read(str(VERSIONS / f"{name}.kicad_pcb"))


def approx(v: float) -> object:
    return pytest.approx(v, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# KiCad 6 (20211014): fp_text, net codes, KiCad 6 project layout, addsublayer, arcs, escapes
# ---------------------------------------------------------------------------------------------


def test_kicad6_layers_and_stackup() -> None:
    b = board("kicad6")
    assert b.file_version == 20211014 and kicad_major(b.file_version) == 6
    assert [(c.name, c.user_name, c.kind) for c in b.copper_layers] == [
        ("F.Cu", "F.Cu", "signal"),
        ("In1.Cu", "GND_PLANE", "power"),
        ("In2.Cu", "In2.Cu", "mixed"),
        ("B.Cu", "B.Cu", "signal"),
    ]
    st = b.stackup
    assert st is not None and st.finish == "ENIG" and st.impedance_controlled is False
    d1 = st.layers[3]
    assert (d1.name, d1.kind) == ("dielectric 1", "prepreg")
    # two sublayers: 0.1 mm FR4 + 0.12 mm Megtron6; the layer is their sum, first's material
    assert d1.thickness_mm == approx(0.22)
    assert (d1.material, d1.epsilon_r, d1.loss_tangent) == ("FR4", 4.5, 0.02)
    assert [(s.thickness_mm, s.material, s.epsilon_r, s.loss_tangent) for s in d1.sublayers] == [
        (0.1, "FR4", 4.5, 0.02),
        (0.12, "Megtron6", 3.4, 0.004),
    ]
    assert [layer.copper_index for layer in st.copper()] == [0, 1, 2, 3]
    assert [layer.name for layer in st.dielectrics_between(1, 2)] == ["dielectric 2"]
    assert b.board_thickness_mm == 1.6


def test_kicad6_project_net_classes_and_settings() -> None:
    b = board("kicad6")
    assert b.project_file and b.project_file.endswith("kicad6.kicad_pro")
    assert b.warnings == ()
    rules = b.net_classes
    assert [c.name for c in rules.classes] == ["Default", "USB"]
    usb = rules.by_name("USB")
    assert usb is not None and (usb.diff_pair_width_mm, usb.diff_pair_gap_mm) == (0.2, 0.15)
    assert rules.class_of("/USB_D+") == "USB" and rules.class_of("GND") == "Default"
    assert b.text_variables == {"REV": "B"}
    assert b.design.allow_blind_buried_vias is True and b.design.allow_microvias is True
    assert b.design.min_via_drill_mm == 0.25 and b.design.min_track_width_mm == 0.15


def test_kicad6_nets_tracks_vias() -> None:
    b = board("kicad6")
    assert b.nets == ("", "GND", "/USB_D+", "/USB_D-", "/PCIE_TX0_P", "/PCIE_TX0_N")
    assert [p.name for p in b.diff_pairs] == ["/PCIE_TX0", "/USB_D"]
    t = b.tracks
    assert (t.segment_count, t.arc_count) == (3, 1)
    arc = int(np.flatnonzero(t.is_arc)[0])
    assert t.start[arc].tolist() == [20.0, 20.485]
    assert t.mid[arc].tolist() == [21.464466, 21.071786]
    assert t.end[arc].tolist() == [22.05, 22.535]
    assert b.layer_name(int(t.layer[arc])) == "F.Cu" and b.nets[int(t.net[arc])] == "/USB_D+"
    assert b.layer_name(int(t.layer[3])) == "In2.Cu" and t.width[3] == 0.25
    assert t.uuid[0] == "0d4e2d0c-0000-4000-8000-000000000031"
    v = b.vias
    assert v.types == ("through", "blind", "buried", "micro")
    assert list(zip(v.start.tolist(), v.end.tolist())) == [(0, 3), (0, 2), (1, 2), (0, 1)]
    assert v[1].diameter_mm == 0.45 and v[1].drill_mm == 0.2 and b.nets[v[1].net] == "GND"


def test_kicad6_footprint_transform_rotated_90() -> None:
    """R1 at (10, 20) rotated 90°: KiCad rotates a local point (x, y) to
    (x cos + y sin, -x sin + y cos), so pad 1 at local (-0.485, 0) lands at (10, 20.485)
    and pad 2 at (0.485, 0) at (10, 19.515) — where the two tracks start."""
    b = board("kicad6")
    r1 = b.footprints[0]
    assert (r1.reference, r1.value, r1.name, r1.layer) == (
        "R1",
        "10k",
        "Resistor_SMD:R_0402_1005Metric",
        "F.Cu",
    )
    assert (r1.x, r1.y, r1.rotation, r1.attributes) == (10.0, 20.0, 90.0, ("smd",))
    p1, p2 = r1.pads
    assert (p1.x, p1.y) == (approx(10.0), approx(20.485))
    assert (p2.x, p2.y) == (approx(10.0), approx(19.515))
    assert (p1.width, p1.height, p1.rotation, p1.type, p1.shape) == (
        0.59,
        0.64,
        90.0,
        "smd",
        "roundrect",
    )
    assert p1.copper_layers == (0,) and b.nets[p1.net] == "/USB_D+"
    assert r1.properties["Sheetfile"] == "kicad6.kicad_sch"


def test_kicad6_back_footprint_through_hole_pads() -> None:
    """J1 on B.Cu at (30, 20), 180°: pad 1 at local (1.27, 0) -> (28.73, 20); the oval drill
    1 x 0.6 reports its smaller dimension; ``*.Cu`` means every copper layer."""
    j1 = board("kicad6").footprints[1]
    assert (j1.reference, j1.layer, j1.rotation) == ("J1", "B.Cu", 180.0)
    p1, npth = j1.pads
    assert (p1.x, p1.y) == (approx(28.73), approx(20.0))
    assert p1.drill_mm == 0.6 and p1.copper_layers == (0, 1, 2, 3)
    assert p1.layers == ("*.Cu", "*.Mask")
    assert (npth.number, npth.type, npth.drill_mm) == ("", "np_thru_hole", 1.0)
    assert (npth.x, npth.y) == (approx(31.27), approx(20.0))


def test_kicad6_outline_arcs_circle_and_footprint_edge() -> None:
    """Edge.Cuts: a 50 x 40 frame (0.1 mm lines) with a rounded corner and a half-circle bulge
    of radius 10 on the left whose extreme is (-10, 20), a circular cut-out and a footprint
    edge line.  KiCad's board box = union of shape boxes each grown by half the line width:
    x -10.05 .. 50.05, y -0.05 .. 40.05 (60.1 x 40.1 mm, as pcbnew reports)."""
    b = board("kicad6")
    assert b.outline.bbox == (approx(-10.05), approx(-0.05), approx(50.05), approx(40.05))
    assert b.outline.size_mm == (approx(60.1), approx(40.1))
    rings = b.outline.rings
    # the frame chains into one closed ring; the circle is its own ring; the footprint's
    # edge line (-2,-1)-(2,-1) rotated 180° about (30, 20) becomes (32, 21)-(28, 21)
    frame = max(rings, key=len)
    assert np.allclose(frame[0], frame[-1])
    assert frame[:, 0].min() == approx(-10.0)
    fp_edge = [r for r in rings if len(r) == 2]
    assert len(fp_edge) == 1
    assert sorted(map(tuple, np.round(fp_edge[0], 9).tolist())) == [(28.0, 21.0), (32.0, 21.0)]
    circle = [r for r in rings if len(r) > 20 and r[:, 0].max() < 42]
    assert circle and np.allclose(np.hypot(circle[0][:, 0] - 40, circle[0][:, 1] - 30), 1.5)


def test_kicad6_zone_fills_are_arrays_per_layer() -> None:
    b = board("kicad6")
    (z,) = b.zones
    assert (z.net_name, b.nets[z.net], z.layers, z.priority, z.name) == (
        "GND",
        "GND",
        (0, 3),
        2,
        "gnd pour",
    )
    assert z.min_thickness_mm == 0.254 and not z.keepout
    assert sorted(z.filled) == [0, 3] and 1 not in z.filled
    (f,) = z.filled[0]
    assert f.shape == (4, 2) and f.dtype == np.float64
    assert z.filled_area_mm2(0) == approx(50.0)  # 10 x 5
    assert z.filled_area_mm2(3) == approx(4.0)  # 2 x 2
    assert z.outline.tolist() == [[1, 1], [11, 1], [11, 6], [1, 6]]
    with pytest.raises(KeyError):
        z.filled[2]


def test_escaped_quotes_and_parens_in_strings() -> None:
    """The gr_text holds ``\\"quoted\\" (text) \\\\ here``: parentheses and escaped quotes
    inside a string must not disturb the structure (the board still reads exactly)."""
    b = board("kicad6")
    assert len(b.footprints) == 2 and len(b.zones) == 1 and len(b.vias) == 4
    assert parse_span(b'(gr_text "\\"q\\" (t) \\\\ x" (at 1 2))') == [
        "gr_text",
        '"q" (t) \\ x',
        ["at", "1", "2"],
    ]


# ---------------------------------------------------------------------------------------------
# KiCad 7 (20221018): stroke, bare "locked" tokens, an Edge.Cuts arc in a rotated footprint
# ---------------------------------------------------------------------------------------------


def test_kicad7_rotated_footprint_arc_sets_the_board_box() -> None:
    """Footprint H1 at (40, 15) rotated 30° holds an Edge.Cuts arc of radius 5 about its origin
    from local (0, -5) through (4.330127, -2.5) to (5, 0), i.e. -90° .. 0°.  Rotated, it runs
    from (37.5, 10.669873) to (44.330127, 12.5) and passes the circle's top (40, 10); with the
    0.15 mm line the board box becomes x -0.05 .. 44.405127, y -0.05 .. 30.05 (pcbnew agrees)."""
    b = board("kicad7")
    assert kicad_major(b.file_version) == 7
    assert b.outline.bbox == (approx(-0.05), approx(-0.05), approx(44.405127), approx(30.05))
    (h1,) = b.footprints
    assert (h1.reference, h1.value, h1.rotation) == ("H1", "Notch", 30.0)
    assert h1.attributes == ("board_only", "exclude_from_pos_files", "exclude_from_bom")
    (pad,) = h1.pads
    # local (2, 0) rotated 30°: (40 + 2 cos 30°, 15 - 2 sin 30°), on KiCad's 1 nm grid
    assert (pad.x, pad.y) == (approx(41.732051), approx(14.0))
    assert 40 + 2 * math.cos(math.radians(30)) == pytest.approx(41.732051, abs=5e-7)
    assert b.tracks.segment_count == 2 and b.tracks.arc_count == 1  # "(segment locked …)"
    assert b.vias.types == ("through",)  # "(via locked …)"
    # the fill is a 19 x 7 rectangle with a 3 x 2 hole bridged into its outline: 133 - 6
    assert b.zones[0].filled_area_mm2(1) == approx(127.0)


# ---------------------------------------------------------------------------------------------
# KiCad 8 (20240108): properties, stroke, locked, rotated footprint at 30°
# ---------------------------------------------------------------------------------------------


def test_kicad8_properties_rotation_and_rect_outline() -> None:
    b = board("kicad8")
    assert kicad_major(b.file_version) == 8 and b.generator == "pcbnew"
    assert [(c.name, c.user_name) for c in b.copper_layers] == [("F.Cu", "TOP"), ("B.Cu", "BOTTOM")]
    (c1,) = b.footprints
    assert (c1.reference, c1.value, c1.rotation) == ("C1", "100n", 30.0)
    assert c1.properties["Footprint"] == "Capacitor_SMD:C_0603_1608Metric"
    # pad 1 at local (-1, 0), footprint at (15, 10) rotated 30°:
    # x = 15 - cos 30° = 14.133975, y = 10 + sin 30° = 10.5
    # (KiCad places pads on its 1 nm grid: RotatePoint rounds, so 15 - 0.8660254 -> 14.133975)
    p1, p2 = c1.pads
    assert (p1.x, p1.y) == (approx(14.133975), approx(10.5))
    assert (p2.x, p2.y) == (approx(15.866025), approx(9.5))
    assert b.tracks.segment_count == 2  # one of them "(locked yes)"
    # gr_rect 30 x 20 drawn with a 0.05 mm line: 30.05 x 20.05
    assert b.outline.size_mm == (approx(30.05), approx(20.05))
    assert b.stackup is None
    assert any("no .kicad_pro" in w for w in b.warnings)
    assert b.net_classes.classes == ()


# ---------------------------------------------------------------------------------------------
# KiCad 9 (20241229): renumbered layer ids, multi-layer zones, keepouts, KiCad 8+ project
# ---------------------------------------------------------------------------------------------


def test_kicad9_layer_order_by_name_not_id() -> None:
    """KiCad 9 numbers In1.Cu 4, In2.Cu 6, B.Cu 2: the stack order comes from the names."""
    b = board("kicad9")
    assert [(c.name, c.user_name, c.kind) for c in b.copper_layers] == [
        ("F.Cu", "F.Cu", "signal"),
        ("In1.Cu", "GND", "power"),
        ("In2.Cu", "PWR", "power"),
        ("B.Cu", "B.Cu", "signal"),
    ]
    assert b.layer_index("GND") == 1 and b.layer_index("B.Cu") == 3


def test_kicad9_zones_vias_arcs_outline() -> None:
    b = board("kicad9")
    gnd, keepout = b.zones
    assert gnd.layers == (1, 3) and sorted(gnd.filled) == [1, 3]
    assert gnd.filled_area_mm2(1) == approx(38 * 28)
    assert keepout.keepout and keepout.layers == (0, 1, 2, 3) and keepout.name == "no vias here"
    assert keepout.net == 0 and dict(keepout.filled) == {}
    assert b.vias.types == ("through", "micro")
    assert (int(b.vias.start[1]), int(b.vias.end[1])) == (2, 3)  # written "B.Cu" "In2.Cu"
    assert b.tracks.mid[1].tolist() == [17.5, 2.5]
    # gr_poly 40 x 30 with a 0.2 mm line: 40.2 x 30.2
    assert b.outline.bbox == (approx(-0.1), approx(-0.1), approx(40.1), approx(30.1))
    st = b.stackup
    assert st is not None and st.impedance_controlled is True
    assert [d.material for d in st.dielectrics()] == ["Megtron 7", "FR4", "Megtron 7"]


def test_kicad9_project_patterns_and_assignments() -> None:
    rules = board("kicad9").net_classes
    assert rules.patterns == (("+*V*", "PWR"), ("/SIG*", "HS"))
    assert rules.class_of("+1V8") == "PWR"
    assert rules.class_of("/SIG1") == "HS"  # explicit assignment, KiCad 8+ list form
    assert rules.class_of("GND") == "Default"
    assert rules.by_name("HS").priority == 1  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# KiCad 10 (20260101): nets by name, via keywords, backdrill, *.Cu keepout, point
# ---------------------------------------------------------------------------------------------


def test_kicad10_nets_by_name_and_via_types() -> None:
    b = board("kicad10")
    assert kicad_major(b.file_version) == 10
    assert set(b.nets) == {"", "/PCIE_TX0_P", "/PCIE_TX0_N", "GND"} and b.nets[0] == ""
    assert [b.nets[n] for n in b.tracks.net.tolist()] == ["/PCIE_TX0_P", "/PCIE_TX0_N"]
    assert b.vias.types == ("through", "blind", "buried")
    assert [p.name for p in b.diff_pairs] == ["/PCIE_TX0"]
    assert not any("unknown top-level" in w for w in b.warnings)  # (point …) is KiCad 10


def test_kicad10_backdrill_fields_do_not_leak_into_the_via() -> None:
    """The backdrill's own (size 0.5) and (layers "B.Cu" "In2.Cu") come before the via's
    (layers …) in the file; the via keeps its 0.6 mm pad, 0.3 mm drill and F.Cu-B.Cu span."""
    v = board("kicad10").vias[0]
    assert (v.diameter_mm, v.drill_mm, v.start, v.end, v.type) == (0.6, 0.3, 0, 3, "through")
    bd = v.backdrill
    assert bd is not None
    # drilled from B.Cu through In2.Cu: the first layer it must not cut is In1.Cu (index 1)
    assert (bd.side, bd.must_not_cut, bd.drill_mm, bd.source) == ("bottom", 1, 0.5, "board")
    pad = board("kicad10").footprints[0].pads[0]
    assert pad.drill_mm == 0.5 and pad.copper_layers == (0, 1, 2, 3)


def test_kicad10_zones_and_rounded_rect_outline() -> None:
    b = board("kicad10")
    gnd, keepout = b.zones
    assert (gnd.net_name, gnd.layers, gnd.filled_area_mm2(1)) == ("GND", (1,), approx(38 * 23))
    assert keepout.keepout and keepout.layers == (0, 1, 2, 3) and keepout.net == 0
    assert b.outline.size_mm == (approx(40.1), approx(25.1))
    (j1,) = b.footprints
    assert (j1.reference, j1.value) == ("J1", "PCIe x1")


def test_future_version_reads_with_one_warning_each() -> None:
    b = board("kicad_future")
    assert b.file_version == 20301231
    newer = [w for w in b.warnings if "newer than" in w]
    unknown = [w for w in b.warnings if "unknown top-level" in w]
    assert len(newer) == 1 and len(unknown) == 1
    assert "hologram" in unknown[0] and "quantum_widget" in unknown[0]
    assert len(b.vias) == 3 and len(b.zones) == 2  # the rest is read as usual


def test_kicad5_is_refused_with_a_hint() -> None:
    with pytest.raises(InputError, match="open and save it in KiCad 6 or newer") as exc:
        board("kicad5")
    assert exc.value.line == 1


# ---------------------------------------------------------------------------------------------
# real boards: the outline closes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_real_board_outline_is_one_closed_valid_ring(name: str) -> None:
    """Edge.Cuts pieces chain into a closed outer ring (ends within 0.02 mm are joined, as
    KiCad does): a valid polygon whose bounds are the board box less at most half a line."""
    from shapely.geometry import Polygon

    b = read(str(FIXTURE_BOARDS[name]))
    closed = [r for r in b.outline.rings if len(r) > 3 and np.array_equal(r[0], r[-1])]
    assert closed, "no closed outline ring"
    outer = Polygon(max(closed, key=lambda r: Polygon(r).area))
    assert outer.is_valid and outer.area > 100.0
    x0, y0, x1, y1 = b.outline.bbox  # type: ignore[misc]
    bx0, by0, bx1, by1 = outer.bounds
    for inner, outer_edge in ((bx0, x0), (by0, y0), (-bx1, -x1), (-by1, -y1)):
        assert 0.0 <= inner - outer_edge <= 0.1 + 1e-9


# ---------------------------------------------------------------------------------------------
# helpers and API
# ---------------------------------------------------------------------------------------------


def test_transform_matches_kicad_rotate_point() -> None:
    # KiCad RotatePoint(+90°) maps +x to -y (y down: "up" on screen, counter-clockwise)
    assert Transform(0, 0, 90).apply(1, 0) == (0.0, -1.0)
    assert Transform(5, 5, 180).apply(1, 2) == (4.0, 3.0)
    x, y = Transform(0, 0, 45).apply(1, 0)
    assert (x, y) == (approx(math.sqrt(0.5)), approx(-math.sqrt(0.5)))


def test_parse_stackup_from_board_text() -> None:
    text = (VERSIONS / "kicad6.kicad_pcb").read_text()
    st = parse_stackup(text)
    assert st is not None and st == board("kicad6").stackup
    assert parse_stackup("(kicad_pcb (version 20241229))") is None


def test_read_text_without_project_warns() -> None:
    text = (VERSIONS / "kicad9.kicad_pcb").read_text()
    b = read_text(text, "live KiCad: kicad9.kicad_pcb")
    assert b.source == "live KiCad: kicad9.kicad_pcb" and b.project_file is None
    assert any("no .kicad_pro" in w for w in b.warnings)
    b2 = read_text(text, "x", project_path=str(VERSIONS / "kicad9.kicad_pro"))
    assert b2.net_classes.class_of("+1V8") == "PWR" and b2.warnings == ()


def test_parse_points_equals_float() -> None:
    rng = np.random.default_rng(7)
    words = [
        f"{v:.{int(d)}f}" for v, d in zip(rng.uniform(-500, 500, 2000), rng.integers(0, 7, 2000))
    ]
    text = "(pts " + " ".join(f"(xy {a} {b})" for a, b in zip(words[::2], words[1::2])) + ")"
    got = parse_points(text.encode())
    assert got is not None and got.tolist() == [float(w) for w in words]
    assert parse_points(b"(pts (xy 1 2) (xy 3))") is None  # a point with one number
    assert parse_points(b"(pts (xy 1 2) (xy 3 oops))") is None


def test_structural_index_escapes_and_strings() -> None:
    """A string ending in an escaped backslash (``"x\\\\"``) is closed by the next quote; an
    escaped quote (``\\"``) is not a delimiter; parentheses inside strings do not count."""
    data = b'(a "x\\\\" (b "(\\")") (c))'
    idx = SexprIndex(data, "t")
    kids = [data[s:e] for s, e in idx.children(2).tolist()]
    assert kids == [b'(b "(\\")")', b"(c)"]
    with pytest.raises(InputError, match="unterminated string"):
        SexprIndex(b'(a "x\\")', "t")
    with pytest.raises(InputError, match="left open") as exc:
        SexprIndex(b"(a\n (b (c))\n (d", "t")
    assert exc.value.line == 3  # the first top-level item that never closes


def test_zone_fills_are_parsed_only_when_asked() -> None:
    b = read(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    zone = next(z for z in b.zones if z.filled)
    assert zone.filled._cache == {}  # type: ignore[attr-defined]
    layer = next(iter(zone.filled))
    polys = zone.filled[layer]
    assert polys and all(p.ndim == 2 and p.shape[1] == 2 for p in polys)
    assert zone.filled._cache.keys() == {layer}  # type: ignore[attr-defined]


def test_read_text_equals_read_on_a_real_board() -> None:
    path = FIXTURE_BOARDS["crosslink-nx-video-converter"]
    a = read(str(path))
    b = read_text(
        path.read_text(encoding="utf-8"), "live", project_path=str(path.with_suffix(".kicad_pro"))
    )
    assert (len(a.tracks), len(a.vias), a.pad_count, a.nets) == (
        len(b.tracks),
        len(b.vias),
        b.pad_count,
        b.nets,
    )
    assert np.array_equal(a.tracks.start, b.tracks.start) and a.stackup == b.stackup
    assert a.outline.bbox == b.outline.bbox and a.net_classes.patterns == b.net_classes.patterns


def test_broken_project_file_is_bad_input(tmp_path) -> None:  # noqa: ANN001
    board = tmp_path / "b.kicad_pcb"
    board.write_bytes((VERSIONS / "kicad9.kicad_pcb").read_bytes())
    (tmp_path / "b.kicad_pro").write_text('{\n  "net_settings": {\n    "classes": [,]\n  }\n}\n')
    with pytest.raises(InputError, match="not valid JSON") as exc:
        read(str(board))
    assert exc.value.path.endswith("b.kicad_pro") and exc.value.line == 3


def test_read_board_dispatch_and_errors(tmp_path) -> None:  # noqa: ANN001
    assert read_board(str(VERSIONS / "kicad9.kicad_pcb")).layer_count == 4
    cases = {
        "empty.kicad_pcb": (b"", "file is empty"),
        "gerber.kicad_pcb": (b"G04 Gerber*\n%FSLAX46Y46*%\nM02*\n", "not a KiCad board"),
        "trunc.kicad_pcb": ((VERSIONS / "kicad9.kicad_pcb").read_bytes()[:3000], "truncated"),
        "extra.kicad_pcb": (
            (VERSIONS / "kicad9.kicad_pcb").read_bytes() + b")",
            r"unexpected '\)'",
        ),
        "footprint.kicad_pcb": (b'(footprint "R" (layer "F.Cu"))', "not a KiCad board"),
        "nocopper.kicad_pcb": (
            b'(kicad_pcb (version 20241229) (layers (25 "Edge.Cuts" user)))',
            "no copper",
        ),
    }
    for name, (data, message) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(InputError, match=message) as exc:
            read_board(str(p))
        assert str(exc.value).startswith(str(p))
    with pytest.raises(InputError, match="footprint, not a board"):
        read(str(tmp_path / "footprint.kicad_pcb"))  # the KiCad reader itself says what it is
    with pytest.raises(InputError, match="cannot open"):
        read_board(str(tmp_path / "missing.kicad_pcb"))


# ---------------------------------------------------------------------------------------------
# the vectorised track / via parse (P1): equal to the item-by-item parse, uuids as offsets
# ---------------------------------------------------------------------------------------------


def _columns(b) -> list:  # noqa: ANN001
    t, v = b.tracks, b.vias
    return [
        t.start.tolist(),
        t.end.tolist(),
        np.nan_to_num(t.mid, nan=-1.0).tolist(),
        t.width.tolist(),
        t.layer.tolist(),
        t.net.tolist(),
        list(t.uuid),
        v.pos.tolist(),
        v.drill.tolist(),
        v.diameter.tolist(),
        v.start.tolist(),
        v.end.tolist(),
        v.net.tolist(),
        v.micro.tolist(),
        list(v.uuid),
        sorted(v.backdrills.items()),
        b.nets,
        b.warnings,
        [repr(fp.pads) for fp in b.footprints],
    ]


@pytest.mark.parametrize(
    "path",
    [FIXTURE_BOARDS["crosslink-nx-video-converter"], FIXTURE_BOARDS["openpci2-backplane"]]
    + [VERSIONS / f"kicad{n}.kicad_pcb" for n in (6, 7, 8, 9, 10)],
    ids=lambda p: p.stem,
)
def test_block_parse_equals_item_by_item(path, monkeypatch) -> None:  # noqa: ANN001
    """Every track, via and pad read by the numpy block parsers equals what the per-item parser
    (the fallback for unusual layouts) reads from the same text, column by column."""
    from accel_drc.readers import kicad_file

    fast = read(str(path))
    assert len(fast.tracks) > 0
    monkeypatch.setattr(
        kicad_file._Reader,
        "_track_block",
        lambda self, spans, *a: (np.zeros(len(spans), bool), None, None),
    )
    monkeypatch.setattr(
        kicad_file._Reader,
        "_via_block",
        lambda self, spans, *a: (np.zeros(len(spans), bool), None),
    )
    monkeypatch.setattr(
        kicad_file._Reader, "_pad_prepass", lambda self, spans: setattr(self, "_pad_rows", {})
    )
    slow = read(str(path))
    assert _columns(fast) == _columns(slow)


def test_block_parse_sends_odd_items_the_slow_way() -> None:
    """Fields out of order, extra children, a number count that is not the usual one and
    tstamp instead of uuid: read exactly, each item on its own merits."""
    text = (VERSIONS / "kicad9.kicad_pcb").read_text("utf-8")
    i = text.index("\t(segment")
    odd = (
        '\t(segment (width 0.2) (end 3 4) (start 1 2) (layer "F.Cu") (net 1) (tstamp "t-1"))\n'
        '\t(segment (start 5 6 7) (end 8 9) (width 0.3) (layer "B.Cu") (net 1) (uuid "u-2"))\n'
        '\t(segment (start 1e1 -2) (end 0.5 .5) (width 0.1) (layer "F.Cu") (locked yes) '
        '(net 1) (uuid "u-3"))\n'
    )
    b = read_text(text[:i] + odd + text[i:], "odd.kicad_pcb")
    t = b.tracks
    assert t.start[:3].tolist() == [[1.0, 2.0], [5.0, 6.0], [10.0, -2.0]]
    assert t.end[:3].tolist() == [[3.0, 4.0], [8.0, 9.0], [0.5, 0.5]]
    assert t.width[:3].tolist() == [0.2, 0.3, 0.1]
    assert t.layer[:3].tolist() == [0, len(b.copper_layers) - 1, 0]
    assert list(t.uuid[:3]) == ["t-1", "u-2", "u-3"]


def test_kicad10_net_names_with_parentheses() -> None:
    """KiCad's default net names look like ``Net-(U1-PadA1)``; KiCad 10 refers to nets by name,
    so tracks, vias and pads must read the whole quoted name (the field regexes used to stop at
    the first parenthesis)."""
    text = (
        (VERSIONS / "kicad10.kicad_pcb").read_text("utf-8").replace("/PCIE_TX0_N", "Net-(U1-PadA1)")
    )
    b = read_text(text, "paren.kicad_pcb")
    k = b.nets.index("Net-(U1-PadA1)")
    assert '"Net-' not in b.nets
    assert k in b.tracks.net.tolist()
    assert k in [p.net for fp in b.footprints for p in fp.pads]


def test_uuids_are_decoded_on_access() -> None:
    from accel_drc.readers.kicad_blocks import SpanStrings

    t = board("kicad9").tracks
    assert isinstance(t.uuid, SpanStrings)
    uuids = list(t.uuid)
    assert len(uuids) == len(t) and all(isinstance(u, str) and u for u in uuids)
    assert t.uuid[-1] == uuids[-1] and t.uuid[0:2] == tuple(uuids[:2])
    assert t.uuid == tuple(uuids) and t.uuid == uuids
    with pytest.raises(IndexError):
        t.uuid[len(t)]


@pytest.mark.parametrize("bad", ["0", "-0.1", "abc"])
def test_unusable_stackup_number_warns_and_checks_say_unknown(tmp_path, bad) -> None:
    """A dielectric thickness of 0, negative or not a number: the reader warns (naming the
    layer and the value) and treats it as not declared; the checks then say cannot verify for
    what needs it (impedance over that dielectric) instead of crashing or passing."""
    import shutil

    from accel_drc.pipeline import check_board
    from accel_drc.results import Status

    src = FIXTURE_BOARDS["m2-oculink-adapter"]
    for f in src.parent.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    path = tmp_path / src.name
    text = path.read_text(encoding="utf-8")
    assert "(thickness 0.1855)" in text
    path.write_text(text.replace("(thickness 0.1855)", f"(thickness {bad})", 1), encoding="utf-8")
    board = read(str(path))
    (w,) = [x for x in board.warnings if "stack-up layer" in x]
    assert "'dielectric 1'" in w and repr(bad) in w and "not declared" in w
    d1 = next(d for d in board.stackup.dielectrics() if d.name == "dielectric 1")
    assert d1.thickness_mm is None
    res = check_board(board, {"signals": {"nvlink4": [".*PCIe.*"]}}, board_class="training")
    crashed = [f for f in res.findings if "crashed" in f.message.lower()]
    assert crashed == []
    f_cu = [f for f in res.findings if f.check == "impedance" and f.layer == "F.Cu"]
    assert f_cu and all(f.status == Status.CANNOT_VERIFY for f in f_cu)
    assert all("thickness of dielectric 1" in f.message for f in f_cu)


def test_a_number_that_is_not_a_number_names_its_line(tmp_path) -> None:
    """`(at xx …)` in a via: exit-3 error naming the token and the line it is on (the fast
    parsers read numbers in blocks, so the line is found afterwards)."""
    text = FIXTURE_BOARDS["m2-oculink-adapter"].read_text(encoding="utf-8")
    i = text.index("(via")
    j = text.index("(at ", i)
    bad = tmp_path / "b.kicad_pcb"
    bad.write_text(text[:j] + "(at xx " + text[j + 4 :], encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(str(bad))
    assert "'xx' is not a number" in str(err.value)
    assert err.value.line == text[:j].count("\n") + 1


# ---------------------------------------------------------------------------------------------
# two threads: the split parenthesis scan and the track blocks give the one-thread result
# ---------------------------------------------------------------------------------------------


def _scan_arrays(scan) -> list:  # noqa: ANN001
    return [
        scan.opens.tolist(),
        scan.closes.tolist(),
        scan.open_level.tolist(),
        scan.close_level.tolist(),
        str(scan.open_level.dtype),
        scan.n_quotes,
        scan.last_quote,
    ]


@pytest.mark.parametrize("case", ["plain", "string_across_split", "deep_before_split"])
def test_split_scan_equals_one_pass(case: str, monkeypatch) -> None:  # noqa: ANN001
    """The two-half scan (second half on a thread, levels shifted after) gives exactly the
    arrays of the one-pass scan: with a string that spans the split point (the second half is
    scanned again with the true parity) and with the split deep inside nested nodes."""
    from accel_drc.readers import sexpr

    chunk = sexpr._CHUNK
    item = b'  (segment (start 1 2) (end 3 4) (width 0.2) (layer "F.Cu") (net 1) (uuid "a"))\n'
    body = item * (3 * chunk // len(item))
    mid = (len(body) + 20) // 2 // chunk * chunk
    if case == "string_across_split":  # a quoted ')' '(' '"' run across the split
        at = mid - 40
        body = body[:at] + b'(gr_text "((( \\" ))) ' + b"x" * 60 + b' ((" (at 0 0))' + body[at:]
    elif case == "deep_before_split":
        at = mid - 30
        body = body[:at] + b"(a " * 5 + b"(b" + b" " * 60 + b")" + b")" * 5 + body[at:]
    data = b"(kicad_pcb (version 20240108)\n" + body + b")\n"
    monkeypatch.setattr(sexpr, "_SPLIT_MIN", 1)
    monkeypatch.setattr(sexpr, "_cpus", lambda: 2)
    split = _scan_arrays(sexpr._Scan(data))
    monkeypatch.setattr(sexpr, "_cpus", lambda: 1)
    one = _scan_arrays(sexpr._Scan(data))
    assert split == one
    assert one[5] % 2 == 0 and len(one[0]) == len(one[1]) > 1000


@pytest.mark.parametrize("path", list(FIXTURE_BOARDS.values())[:3], ids=lambda p: p.stem)
def test_threaded_track_blocks_equal_one_thread(path, monkeypatch) -> None:  # noqa: ANN001
    """Track and via blocks parsed on two threads (blocks of 64 items, so every board has
    several) and the footprints prepared on a third read exactly what one thread reads, nets
    and warnings in the same order."""
    from accel_drc import concurrency
    from accel_drc.readers import kicad_pads, kicad_tracks, kicad_vias

    for module in (kicad_tracks, kicad_vias, kicad_pads):  # where each block parser reads it
        monkeypatch.setattr(module, "TRACK_BLOCK", 64)
    monkeypatch.setattr(concurrency, "workers", lambda: 2)
    two = read(str(path))
    monkeypatch.setattr(concurrency, "workers", lambda: 1)
    one = read(str(path))
    assert len(one.tracks) > 64
    assert _columns(two) == _columns(one)


def test_ordered_map_raises_in_order_and_cancels() -> None:
    """An error in one item is raised where that item's result is taken, after the earlier
    items' results, and the pool does not run the whole rest of the list."""
    from accel_drc.concurrency import ordered_map

    ran: list[int] = []

    def fn(x: int) -> int:
        ran.append(x)
        if x == 3:
            raise ValueError("bad item 3")
        return x * x

    got: list[int] = []
    with pytest.raises(ValueError, match="bad item 3"):
        for v in ordered_map(fn, range(100)):
            got.append(v)
    assert got == [0, 1, 4]
    assert len(ran) < 100


def test_span_strings_take_equals_item_access():
    """``SpanStrings.take`` (the findings' uuid lists) gives what indexing one row at a time
    gives: quoted and bare spans, padding stripped, overrides, repeats and any row order."""
    import numpy as np
    from accel_drc.readers.kicad_blocks import SpanStrings

    data = b' "a-1" b-2\t"c-3"  "d\xc3\xa9" '
    cuts = [0, 6, 10, 17, len(data)]  # each span: padding, maybe quotes, the text
    start = np.array(cuts[:-1], dtype=np.int64)
    length = np.diff(np.array(cuts, dtype=np.int64))
    plain = SpanStrings(data, start, length)
    assert plain.take([0, 1, 2, 3]) == ["a-1", "b-2", "c-3", "d\u00e9"]
    over = SpanStrings(data, start, length, {2: "slow-way"})
    rows = [3, 2, 2, 0, 1]
    assert (
        over.take(rows)
        == [over[r] for r in rows]
        == ["d\u00e9", "slow-way", "slow-way", "a-1", "b-2"]
    )
    assert over.take([]) == []
