"""IPC-2581 reader on hand-written files: every expected number below is worked out by hand from
the fixture text (fixtures/ipc2581/README.md lists them), not read back from the reader."""

from __future__ import annotations

import contextlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from accel_drc.errors import InputError
from accel_drc.readers import ipc2581, read_board
from conftest import FIXTURES

IPC = FIXTURES / "ipc2581"
REV_C = IPC / "hand_revC_micron.xml"
REV_B = IPC / "hand_revB_inch.xml"
HOSTILE = IPC / "hostile"


@pytest.fixture(scope="module")
def rev_c():
    return ipc2581.read(str(REV_C))


@pytest.fixture(scope="module")
def rev_b():
    return ipc2581.read(str(REV_B))


# ---------------------------------------------------------------------------------------------
# revision C, MICRON
# ---------------------------------------------------------------------------------------------


def test_revc_layers_and_functions(rev_c):
    assert [(c.name, c.user_name, c.kind) for c in rev_c.copper_layers] == [
        ("F.Cu", "TOP", "signal"),  # CONDUCTOR
        ("In1.Cu", "GND2", "power"),  # PLANE
        ("In2.Cu", "SIG3", "signal"),  # SIGNAL
        ("In3.Cu", "SIG4", "signal"),
        ("In4.Cu", "PWR5", "power"),
        ("B.Cu", "BOTTOM", "signal"),
    ]
    assert rev_c.format == "ipc2581"
    assert rev_c.generator == "hand-written 1"
    assert rev_c.warnings == ()


def test_revc_stackup_values_in_mm(rev_c):
    rows = [
        (s.name, s.kind, s.thickness_mm, s.material, s.epsilon_r, s.loss_tangent)
        for s in rev_c.stackup.layers
    ]
    expected = [
        ("TOP_MASK", "soldermask", 0.020, "LPI soldermask", None, None),
        ("F.Cu", "copper", 0.035, "COPPER", None, None),
        ("D1", "prepreg", 0.100, "Megtron 6", 3.4, 0.004),
        ("In1.Cu", "copper", 0.018, None, None, None),
        ("D2", "core", 0.200, "R-5775(N)", 3.37, 0.004),
        ("In2.Cu", "copper", 0.018, None, None, None),
        ("D3", "prepreg", 0.150, "Megtron 7", 3.4, 0.002),
        ("In3.Cu", "copper", 0.018, None, None, None),
        ("D4", "core", 0.200, "R-5775(N)", 3.37, 0.004),
        ("In4.Cu", "copper", 0.035, None, None, None),
        ("D5", "prepreg", 0.100, "Megtron 6", 3.4, 0.004),
        ("B.Cu", "copper", 0.035, "COPPER", None, None),
        ("BOTTOM_MASK", "soldermask", 0.020, "LPI soldermask", None, None),
    ]
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected):
        assert got[:2] == want[:2] and got[3:] == want[3:], got
        assert got[2] == pytest.approx(want[2], abs=1e-12), got
    # 2 x 20 mask + 2 x 35 + 3 x 18 + 35 cu + 100 + 200 + 150 + 200 + 100 µm = 949 µm
    assert rev_c.board_thickness_mm == pytest.approx(0.949, abs=1e-12)
    assert rev_c.stackup.thickness_mm == pytest.approx(0.949, abs=1e-12)
    assert [s.copper_index for s in rev_c.stackup.copper()] == [0, 1, 2, 3, 4, 5]
    d = rev_c.stackup.dielectrics_between(2, 3)
    assert [x.name for x in d] == ["D3"] and d[0].loss_tangent == 0.002


def test_revc_foil_grades_from_roughness(rev_c):
    foils = {s.name: s.foil for s in rev_c.stackup.copper()}
    assert foils == {
        "F.Cu": "HVLP2",  # up 1.2, down 1.4 µm: the rougher face (1.4) is within HVLP2's 1.5
        "In1.Cu": "HVLP4",  # treated 0.5 µm <= 0.6
        "In2.Cu": "HVLP",  # 2.5 (unit RZ, µm) in HVLP's 1.5-3.0
        "In3.Cu": "STD",  # 0.007 MM = 7 µm: above VLP's 4 µm
        "In4.Cu": "VLP",  # named: "foil: VLP"
        "B.Cu": None,  # nothing declared: unknown, never a pass
    }


def test_revc_tracks_arcs_and_widths(rev_c):
    t = rev_c.tracks
    net = {n: i for i, n in enumerate(rev_c.nets)}
    assert len(t) == 4 and t.arc_count == 1 and t.segment_count == 3  # the TEXT set is not copper
    # Line (5000, 20000) -> (10000, 20000) µm, y flipped to y-down mm
    assert t.start[0].tolist() == [5.0, -20.0] and t.end[0].tolist() == [10.0, -20.0]
    assert t.width[0] == pytest.approx(0.1) and t.net[0] == net["PCIE5_TX0_P"] and t.layer[0] == 0
    # clockwise arc (10, 25) -> (15, 30) about (15, 25) mm, y up: a quarter circle through 135°
    r = 5.0
    mid_ipc = (15.0 + r * math.cos(math.radians(135)), 25.0 + r * math.sin(math.radians(135)))
    assert t.mid[1] == pytest.approx([mid_ipc[0], -mid_ipc[1]], abs=1e-9)
    assert t.mid[1] == pytest.approx([11.464466094, -28.535533906], abs=1e-9)
    # polyline on SIG3, inline LineDesc 127 µm: two segments
    assert t.layer[2:].tolist() == [2, 2] and t.width[2:] == pytest.approx([0.127, 0.127])
    assert t.start[2:].tolist() == [[40.0, -30.0], [45.0, -30.0]]
    assert t.end[2:].tolist() == [[45.0, -30.0], [45.0, -35.0]]


def test_revc_vias_spans_and_backdrill(rev_c):
    v = list(rev_c.vias)
    names = rev_c.nets
    rows = [(x.uuid, x.x, x.y, x.drill_mm, x.diameter_mm, x.start, x.end, x.type) for x in v]
    assert rows == [
        ("V1", 10.0, -20.0, 0.25, 0.5, 0, 5, "through"),
        ("V2", 11.0, -20.0, 0.25, 0.5, 0, 5, "through"),
        ("V3", 30.0, -10.0, 0.25, 0.5, 0, 5, "through"),
        ("V4", 40.0, -30.0, 0.15, pytest.approx(0.35), 0, 2, "blind"),
    ]
    assert [names[x.net] for x in v] == ["PCIE5_TX0_P", "PCIE5_TX0_N", "GND", "SIG_A"]
    for via in v[:2]:
        bd = via.backdrill
        assert bd is not None and bd.source == "ipc2581"
        assert bd.side == "bottom"  # START_LAYER BOTTOM
        assert bd.must_not_cut == 2  # MUST_NOT_CUT_LAYER SIG3 = In2.Cu
        assert bd.drill_mm == pytest.approx(0.45)  # the backdrill hole
        assert bd.max_stub_mm == pytest.approx(0.2)  # 200 MICRON
    assert v[2].backdrill is None and v[3].backdrill is None
    assert set(rev_c.vias.backdrills) == {0, 1}


def test_revc_components_nets_zones_outline(rev_c):
    assert rev_c.nets == ("", "PCIE5_TX0_P", "N1", "GND", "SIG_A", "PCIE5_TX0_N")
    (fp,) = rev_c.footprints
    assert (fp.reference, fp.name, fp.layer, fp.x, fp.y, fp.attributes) == (
        "R1",
        "R0402",
        "F.Cu",
        5.0,
        -20.0,
        ("smd",),
    )
    pads = [
        (p.number, rev_c.nets[p.net], p.x, p.y, p.shape, p.width, p.height, p.type) for p in fp.pads
    ]
    assert pads == [
        ("1", "PCIE5_TX0_P", 4.5, -20.0, "rect", pytest.approx(0.6), pytest.approx(0.5), "smd"),
        ("2", "N1", 5.5, -20.0, "rect", pytest.approx(0.6), pytest.approx(0.5), "smd"),
    ]
    (zone,) = rev_c.zones
    assert zone.net_name == "GND" and zone.layers == (1,)
    # 48 x 38 mm fill with a 2 x 2 mm cutout
    assert zone.filled_area_mm2(1) == pytest.approx(48 * 38 - 2 * 2, abs=1e-9)
    assert rev_c.outline.bbox == pytest.approx((0.0, -40.0, 50.0, 0.0))
    # a 3 mm circle flashed on the BOARD_OUTLINE layer at (45, 35) mm is a cut-out ring
    profile, hole = rev_c.outline.rings
    assert len(profile) == 5 and np.allclose(profile[0], profile[-1])
    np.testing.assert_allclose(hole.mean(axis=0), [45.0, -35.0], atol=0.05)
    np.testing.assert_allclose(np.hypot(hole[:, 0] - 45.0, hole[:, 1] + 35.0), 1.5, atol=1e-9)
    assert rev_c.outline.size_mm == pytest.approx((50.0, 40.0))
    assert [p.name for p in rev_c.diff_pairs] == ["PCIE5_TX0"]


# ---------------------------------------------------------------------------------------------
# revision B, INCH
# ---------------------------------------------------------------------------------------------


def test_revb_inch_conversions(rev_b):
    assert [(c.name, c.user_name, c.kind) for c in rev_b.copper_layers] == [
        ("F.Cu", "L1", "signal"),
        ("In1.Cu", "L2", "power"),
        ("In2.Cu", "L3", "mixed"),
        ("B.Cu", "L4", "signal"),
    ]
    st = {s.name: s for s in rev_b.stackup.layers}
    assert st["F.Cu"].thickness_mm == pytest.approx(0.0014 * 25.4)  # 0.03556 mm
    assert st["DIEL2"].thickness_mm == pytest.approx(1.016)
    assert (st["DIEL1"].kind, st["DIEL2"].kind) == ("prepreg", "core")
    assert (st["DIEL1"].material, st["DIEL1"].epsilon_r, st["DIEL1"].loss_tangent) == (
        "Isola Tachyon 100G",
        3.02,
        0.0021,
    )
    assert rev_b.board_thickness_mm == pytest.approx(0.0536 * 25.4)  # 1.36144 mm
    assert rev_b.outline.bbox == pytest.approx((0.0, -25.4, 50.8, 0.0))
    t = rev_b.tracks
    np.testing.assert_allclose(t.start, [[12.7, -12.7]], atol=1e-12)
    np.testing.assert_allclose(t.end, [[25.4, -12.7]], atol=1e-12)
    assert t.width[0] == pytest.approx(0.127)


def test_revb_foil_units_and_rms(rev_b):
    foils = {s.name: s.foil for s in rev_b.stackup.copper()}
    # L1: 0.0001 in = 2.54 µm -> HVLP (via the Layer's own SpecRef); L2: 0.9 µm -> HVLP3;
    # L3 named HVLP2; L4 given as RMS: not an Rz, so no grade (and a warning says why)
    assert foils == {"F.Cu": "HVLP", "In1.Cu": "HVLP3", "In2.Cu": "HVLP2", "B.Cu": None}
    assert any("RMS" in w and "L4" in w for w in rev_b.warnings)


def test_revb_vias_padstack_and_specref_backdrill(rev_b):
    v1, v2 = list(rev_b.vias)
    assert (v1.uuid, v1.x, v1.y, v1.start, v1.end, v1.type) == ("VH1", 25.4, -12.7, 0, 3, "through")
    assert v1.drill_mm == pytest.approx(0.254)
    assert v1.diameter_mm == pytest.approx(0.508)  # from the copper via pad (no padstack def)
    bd = v1.backdrill
    assert (bd.side, bd.must_not_cut, bd.drill_mm) == ("top", 2, None)
    assert bd.max_stub_mm == pytest.approx(0.008 * 25.4)  # 0.2032 mm
    # Altium-style PadStack / LayerHole / Span
    assert (v2.uuid, v2.start, v2.end, v2.type, rev_b.nets[v2.net]) == ("VH2", 0, 1, "blind", "GND")
    assert v2.x == pytest.approx(38.1) and v2.drill_mm == pytest.approx(0.3048)
    assert v2.diameter_mm == pytest.approx(0.6096) and v2.backdrill is None


def test_revb_through_hole_pin(rev_b):
    (fp,) = rev_b.footprints
    assert (fp.reference, fp.layer, fp.rotation, fp.attributes) == (
        "J1",
        "F.Cu",
        90.0,
        ("through_hole",),
    )
    (pad,) = fp.pads
    assert (pad.number, rev_b.nets[pad.net], pad.type, pad.shape, pad.copper_layers) == (
        "1",
        "CLK_P",
        "thru_hole",
        "circle",
        (0, 3),
    )
    assert pad.drill_mm == pytest.approx(1.016) and pad.width == pytest.approx(1.524)
    assert (pad.x, pad.y) == pytest.approx((6.35, -6.35))


# ---------------------------------------------------------------------------------------------
# units: the same board in MICRON, MILLIMETER and INCH reads the same
# ---------------------------------------------------------------------------------------------

_LENGTH_ATTRS = (
    "x|y|startX|startY|endX|endY|centerX|centerY|diameter|width|height|lineWidth|thickness"
    "|overallThickness"
)


def _rescale(text: str, units: str, factor: float) -> str:
    """The rev C fixture with its geometry in other units (property units stay as written)."""

    def sub(m: re.Match[str]) -> str:
        return f'{m.group(1)}="{float(m.group(2)) * factor!r}"'

    out = re.sub(rf'\b({_LENGTH_ATTRS})="([-0-9.]+)"', sub, text)
    return out.replace('units="MICRON"', f'units="{units}"')


@pytest.mark.parametrize(("units", "factor"), [("MILLIMETER", 1e-3), ("INCH", 1e-3 / 25.4)])
def test_units_are_converted_to_mm(rev_c, units, factor):
    text = REV_C.read_text(encoding="utf-8")
    board = ipc2581.read_bytes(_rescale(text, units, factor).encode(), source=f"rev C in {units}")
    for a, b in (
        (board.tracks.start, rev_c.tracks.start),
        (board.tracks.end, rev_c.tracks.end),
        (board.tracks.width, rev_c.tracks.width),
        (board.vias.pos, rev_c.vias.pos),
        (board.vias.drill, rev_c.vias.drill),
        (board.vias.diameter, rev_c.vias.diameter),
    ):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    np.testing.assert_allclose(board.tracks.mid[1], rev_c.tracks.mid[1], atol=1e-9)
    for x, y in zip(board.stackup.layers, rev_c.stackup.layers):
        assert (x.name, x.foil, x.epsilon_r) == (y.name, y.foil, y.epsilon_r)
        assert x.thickness_mm == pytest.approx(y.thickness_mm, abs=1e-12)
    assert board.zones[0].filled_area_mm2(1) == pytest.approx(1820.0)
    assert board.vias.backdrills[0].max_stub_mm == pytest.approx(0.2)  # its own unit: MICRON


# ---------------------------------------------------------------------------------------------
# foil grades follow rules/foils.yaml
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rz", "grade"),
    [
        (0.5, "HVLP4"),
        (0.6, "HVLP4"),
        (0.61, "HVLP3"),
        (1.0, "HVLP3"),
        (1.5, "HVLP2"),
        (2.9, "HVLP"),
        (3.0, "HVLP"),
        (3.5, "VLP"),  # VLP and RTF share 3-4 µm; VLP is the smoother grade
        (4.2, "STD"),
        (8.0, "STD"),
        (25.0, "STD"),
    ],
)
def test_grade_for_rz(rz, grade):
    assert ipc2581.grade_for_rz(rz) == grade


def test_thresholds_are_the_foil_pack():
    from accel_drc.packs import RULES_DIR, load_foils

    foils = load_foils(RULES_DIR / "foils.yaml")
    table = dict(ipc2581.foil_thresholds())
    for g in foils.grades:
        assert table[g.id] == g.rz_um[1]


# ---------------------------------------------------------------------------------------------
# hostile input: exit 3 with one clear line, never a traceback or a memory blow-up
# ---------------------------------------------------------------------------------------------

HOSTILE_CASES = {
    "billion_laughs.xml": "refusing XML with a DOCTYPE",
    "external_entity.xml": "refusing XML with a DOCTYPE",
    "truncated.xml": "not well-formed XML",
    "not_xml.xml": "not a KiCad board (.kicad_pcb) or IPC-2581 XML file",
    "not_ipc2581.xml": "XML root element is <svg>, not <IPC-2581>",
    "no_copper.xml": "no copper layers",
    "bad_number.xml": "non-numeric",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_CASES))
def test_hostile_files_raise_input_error(name):
    with pytest.raises(InputError) as err:
        read_board(str(HOSTILE / name))
    assert HOSTILE_CASES[name] in str(err.value)
    assert str(err.value).startswith(str(HOSTILE / name))


def test_error_lines_point_at_the_problem():
    with pytest.raises(InputError) as err:
        read_board(str(HOSTILE / "billion_laughs.xml"))
    assert err.value.line == 2
    with pytest.raises(InputError) as err:
        read_board(str(HOSTILE / "truncated.xml"))
    assert err.value.line == (HOSTILE / "truncated.xml").read_bytes().count(b"\n") + 1
    assert "truncated" in str(err.value)
    with pytest.raises(InputError) as err:
        read_board(str(HOSTILE / "not_ipc2581.xml"))
    assert err.value.line == 3


def test_doctype_across_a_chunk_boundary_is_refused():
    head = b'<?xml version="1.0"?>\n<!--'
    pad = b"x" * (ipc2581.CHUNK - len(head) - 5) + b"-->\n"
    data = head + pad + b'<!DOCTYPE a [<!ENTITY b "c">]>\n<IPC-2581 revision="C"/>'
    assert data.index(b"<!DOCTYPE") < ipc2581.CHUNK < data.index(b"<!DOCTYPE") + 9
    with pytest.raises(InputError) as err:
        ipc2581.read_bytes(data)
    assert "DOCTYPE" in str(err.value) and err.value.line == 3


def test_entity_expansion_never_happens():
    """A 10^9-fold expansion would take gigabytes; refused before the parser sees it, so the
    read allocates next to nothing (measured as memory, not time: deterministic)."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            read_board(str(HOSTILE / "billion_laughs.xml"))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "DOCTYPE" in str(err.value)
    assert peak < 8 * 1024 * 1024, f"{peak} bytes allocated while refusing the file"


def test_every_truncation_is_an_input_error():
    """Cut the rev C fixture anywhere: always InputError, never another exception."""
    data = REV_C.read_bytes()
    for cut in range(0, len(data) - 1, 61):
        with pytest.raises(InputError):
            ipc2581.read_bytes(data[:cut], source="cut")


@pytest.mark.parametrize("name", sorted(HOSTILE_CASES))
def test_cli_inspect_exits_3_with_one_line(name):
    pytest.importorskip("accel_drc.inspection")
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "inspect", str(HOSTILE / name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert HOSTILE_CASES[name] in lines[0]


def test_cli_inspect_reads_ipc2581(tmp_path):
    pytest.importorskip("accel_drc.inspection")
    import json

    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "inspect", "--json", str(REV_C)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "ipc2581" and doc["layer_count"] == 6
    assert doc["counts"]["vias"] == 4 and doc["backdrilled_vias"] == 2


def test_renamed_file_is_sniffed_by_content(tmp_path):
    renamed = tmp_path / "board.kicad_pcb"
    renamed.write_bytes(REV_B.read_bytes())
    assert read_board(str(renamed)).format == "ipc2581"


# ---------------------------------------------------------------------------------------------
# streaming: a large file stays lean
# ---------------------------------------------------------------------------------------------


def _big_board(path: Path, sets: int, lines_per_set: int) -> None:
    head = REV_C.read_text(encoding="utf-8").split('<LayerFeature layerRef="TOP">')[0]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head)
        fh.write('<LayerFeature layerRef="SIG4">\n')
        for s in range(sets):
            fh.write(f'<Set net="N{s}"><Features><UserSpecial>\n')
            for k in range(lines_per_set):
                y = s * 10 + k * 0.001
                fh.write(
                    f'<Line startX="{k}" startY="{y:.3f}" endX="{k + 1}" endY="{y:.3f}">'
                    '<LineDescRef id="W100"/></Line>\n'
                )
            fh.write("</UserSpecial></Features></Set>\n")
        fh.write("</LayerFeature></Step></CadData></Ecad></IPC-2581>\n")


@pytest.mark.slow
def test_large_file_memory_and_time(tmp_path):
    """~60 MB of tracks: parse in a child process and measure its peak RSS and time."""
    big = tmp_path / "big.xml"
    _big_board(big, sets=2000, lines_per_set=300)
    size_mb = os.path.getsize(big) / 1e6
    assert size_mb > 50
    # VmHWM, not ru_maxrss: a child started from pytest inherits the parent's ru_maxrss
    code = (
        "import re, time, sys\n"
        "from accel_drc.readers import ipc2581\n"
        "t = time.perf_counter(); b = ipc2581.read(sys.argv[1]); dt = time.perf_counter() - t\n"
        "s = open('/proc/self/status').read()\n"
        "rss = int(re.search(r'VmHWM:\\s+(\\d+) kB', s).group(1)) / 1024\n"
        "print(len(b.tracks), dt, rss)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(big)], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    n, dt, rss = r.stdout.split()
    assert int(n) == 2000 * 300
    assert float(rss) < 1024, f"peak RSS {rss} MB for {size_mb:.0f} MB of XML"
    print(f"{size_mb:.0f} MB of IPC-2581 read in {float(dt):.1f} s")  # speed: bench/, not here


def test_mutated_attributes_never_crash():
    """Garbage in attribute values (and dropped lines): a Board or an InputError, nothing else."""
    import random

    rng = random.Random(2581)
    attr = re.compile(rb'(\w+)="([^"]*)"')
    garbage = [b"", b"abc", b"-1", b"0", b"1e999", b"nan", b"TOP", b"NOPE", b"0.0.0", b"true"]
    sources = [REV_C.read_bytes(), REV_B.read_bytes()]
    for _ in range(400):
        data = rng.choice(sources)
        for _ in range(rng.randint(1, 3)):
            m = rng.choice(list(attr.finditer(data)))
            data = data[: m.start(2)] + rng.choice(garbage) + data[m.end(2) :]
        if rng.random() < 0.2:
            lines = data.split(b"\n")
            del lines[rng.randrange(len(lines))]
            data = b"\n".join(lines)
        with contextlib.suppress(InputError):
            ipc2581.read_bytes(data, source="mutated")


def test_zipped_file_reads_like_the_plain_one(tmp_path, rev_c):
    """``kicad-cli pcb export ipc2581 --compress`` writes a zip (even when named .xml)."""
    import zipfile

    z = tmp_path / "board.xml"
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.write(REV_C, "board.xml")
    board = read_board(str(z))
    assert board.format == "ipc2581"
    np.testing.assert_array_equal(board.tracks.start, rev_c.tracks.start)
    np.testing.assert_array_equal(board.vias.pos, rev_c.vias.pos)
    assert set(board.vias.backdrills) == {0, 1}
    assert [s.foil for s in board.stackup.copper()] == [s.foil for s in rev_c.stackup.copper()]


def test_bad_zips_are_input_errors(tmp_path):
    import zipfile

    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.xml", REV_C.read_bytes())
        zf.writestr("b.xml", REV_B.read_bytes())
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w") as zf:
        zf.writestr("a.xml", b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY b "c">]><IPC-2581/>')
    junk = tmp_path / "junk.xml"
    junk.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    for path, msg in ((two, "2 files"), (bomb, "DOCTYPE"), (junk, "unreadable zip")):
        with pytest.raises(InputError) as err:
            read_board(str(path))
        assert msg in str(err.value)


def test_without_stackup_layers_follow_declaration_order():
    """Allegro-style files may have no <Stackup>: layer order from the declarations, and no
    thickness, material or foil (unknown, so the checks say cannot verify)."""
    text = re.sub(r"<Stackup .*?</Stackup>", "", REV_C.read_text(encoding="utf-8"), flags=re.S)
    board = ipc2581.read_bytes(text.encode(), source="no stackup")
    assert [c.user_name for c in board.copper_layers] == [
        "TOP",
        "GND2",
        "SIG3",
        "SIG4",
        "PWR5",
        "BOTTOM",
    ]
    assert board.stackup is None and board.board_thickness_mm is None
    assert any("no <Stackup>" in w for w in board.warnings)
    assert len(board.vias) == 4 and board.vias.backdrills[0].must_not_cut == 2


def test_drill_layer_without_span_is_a_through_hole():
    text = REV_C.read_text(encoding="utf-8").replace('<Span fromLayer="TOP" toLayer="SIG3"/>', "")
    board = ipc2581.read_bytes(text.encode(), source="no span")
    v4 = board.vias[3]
    assert (v4.uuid, v4.start, v4.end, v4.type) == ("V4", 0, 5, "through")
    assert any('"DRILL_TOP_SIG3" declares no span' in w for w in board.warnings)


def test_prefixed_namespace_is_read(rev_c):
    text = REV_C.read_text(encoding="utf-8")
    text = re.sub(r"<(/?)(?=[A-Z])", r"<\1ipc:", text)
    text = text.replace(
        'xmlns="http://webstds.ipc.org/2581"', 'xmlns:ipc="http://webstds.ipc.org/2581"'
    )
    board = ipc2581.read_bytes(text.encode(), source="prefixed")
    assert [s.foil for s in board.stackup.copper()] == [s.foil for s in rev_c.stackup.copper()]
    np.testing.assert_array_equal(board.tracks.start, rev_c.tracks.start)
    assert len(board.vias) == 4 and set(board.vias.backdrills) == {0, 1}


def test_span_naming_a_non_copper_layer_is_an_input_error():
    text = REV_C.read_text(encoding="utf-8").replace(
        '<Span fromLayer="TOP" toLayer="SIG3"/>', '<Span fromLayer="TOP" toLayer="D3"/>'
    )
    with pytest.raises(InputError) as err:
        ipc2581.read_bytes(text.encode(), source="bad span")
    assert "not copper layers" in str(err.value)


def test_inspect_shows_declared_foil_grades() -> None:
    """`accel-drc inspect board.xml` shows the foil grade IPC-2581 declares per copper layer."""
    from accel_drc.inspection import inspect_document
    from accel_drc.readers import read_board

    doc = inspect_document(read_board(str(REV_C)))
    foils = {r["name"]: r["foil"] for r in doc["stackup"] if r["type"] == "copper"}
    assert foils["In4.Cu"] == "VLP"


def test_impossible_values_are_refused_or_undeclared(tmp_path):
    """Negative lengths are malformed (exit 3, with the line); an εr ≤ 0 or a negative loss
    tangent is physically impossible and is treated as not declared, with a warning — never fed
    to the stub and impedance maths as a number."""
    text = REV_C.read_text(encoding="utf-8")
    stub = '<Backdrill type="MAX_STUB_LENGTH"><Property value="200" unit="MICRON"/></Backdrill>'
    assert stub in text
    neg = tmp_path / "neg_stub.xml"
    neg.write_text(text.replace(stub, stub.replace('"200"', '"-200"')), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_board(str(neg))
    assert "negative" in str(err.value) and err.value.line is not None
    m = re.search(r'(<StackupLayer [^>]*thickness=")([0-9.]+)(")', text)
    assert m
    negt = tmp_path / "neg_thickness.xml"
    negt.write_text(text[: m.start(2)] + "-" + text[m.start(2) :], encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_board(str(negt))
    assert "thickness is negative" in str(err.value)
    dk = re.search(r'(<Dielectric type="DIELECTRIC_CONSTANT"><Property value=")([0-9.]+)', text)
    assert dk
    zero = tmp_path / "zero_dk.xml"
    zero.write_text(text[: dk.start(2)] + "0" + text[dk.end(2) :], encoding="utf-8")
    b = read_board(str(zero))
    assert any("DIELECTRIC_CONSTANT 0 is impossible" in w for w in b.warnings)
    assert all((d.epsilon_r or 1) > 0 for d in b.stackup.dielectrics())
