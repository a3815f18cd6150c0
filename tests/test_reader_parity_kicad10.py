"""Pin names and IPC-4761 via protection from every reader (issue 27's reader item, issue 29):
the ``.kicad_pcb`` reader, the IPC-2581 reader (KiCad 10's own export) and the live reader
(KiCad 10's pcbnew over its API) on one board KiCad 10's pcbnew made
(fixtures/kicad_versions/kicad10_pins_protection.kicad_pcb: a part whose pads carry schematic
pin names and types, and vias with each protection, made by :data:`SCRIPT`).

The file and the live read agree field for field.  IPC-2581 carries no pin names and a via's
protection only where the via has it (filling, capping, plugging; tenting and covering share one
layer function there): the reader takes what is carried, the board says what is not
(``Board.not_carried``) and the checks that need the rest say *cannot verify*
(``coverage.pin_names_unknown``; the stacked-microvia check's "not stated")."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import kicad10
import pytest
from accel_drc.model import ViaProtection
from accel_drc.readers import ipc2581, read_board
from conftest import FIXTURES, ROOT, need, need_live_kicad

BOARD = FIXTURES / "kicad_versions" / "kicad10_pins_protection.kicad_pcb"

#: KiCad 10's pcbnew makes the fixture board: ``python3 -c SCRIPT OUT.kicad_pcb`` in the chroot
SCRIPT = r"""
import sys, pcbnew
b = pcbnew.BOARD()
b.SetCopperLayerCount(4)
mm = pcbnew.FromMM
def net(name):
    n = pcbnew.NETINFO_ITEM(b, name); b.Add(n); return n
nets = {k: net(k) for k in ("/DQ0", "/DQS_T", "/PCIE_TX0_P", "GND")}
# outline
r = pcbnew.PCB_SHAPE(b, pcbnew.SHAPE_T_RECTANGLE)
r.SetLayer(pcbnew.Edge_Cuts); r.SetStart(pcbnew.VECTOR2I(mm(0), mm(0))); r.SetEnd(pcbnew.VECTOR2I(mm(30), mm(20)))
r.SetWidth(mm(0.1)); b.Add(r)
# a part whose pads carry schematic pin names and types
fp = pcbnew.FOOTPRINT(b)
fp.SetReference("U1"); fp.SetValue("DRAM"); fp.SetPosition(pcbnew.VECTOR2I(mm(5), mm(5)))
PINS = [("A1", "DQ0", "bidirectional", "/DQ0"), ("A2", "DQS_t", "bidirectional", "/DQS_T"),
        ("A3", "PETp0", "output", "/PCIE_TX0_P"), ("A4", "VSS", "power_in", "GND"),
        ("B1", "VSS", "power_in", "GND"), ("B2", "VSS", "power_in", "GND"),
        ("B3", "NC", "no_connect", None), ("B4", "", "", None)]
for i, (num, func, ptype, nn) in enumerate(PINS):
    p = pcbnew.PAD(fp)
    p.SetNumber(num); p.SetPinFunction(func); p.SetPinType(ptype)
    p.SetAttribute(pcbnew.PAD_ATTRIB_SMD); p.SetShape(pcbnew.PAD_SHAPE_CIRCLE)
    p.SetLayerSet(pcbnew.PAD.SMDMask()); p.SetSize(pcbnew.VECTOR2I(mm(0.4), mm(0.4)))
    p.SetPosition(pcbnew.VECTOR2I(mm(5 + i % 4), mm(5 + i // 4)))
    if nn:
        p.SetNet(nets[nn])
    fp.Add(p)
b.Add(fp)
def via(x, t, a, c, n="GND"):
    v = pcbnew.PCB_VIA(b)
    v.SetPosition(pcbnew.VECTOR2I(mm(x), mm(10)))
    v.SetViaType(t); v.SetLayerPair(a, c)
    v.SetDrill(mm(0.1) if t == pcbnew.VIATYPE_MICROVIA else mm(0.3))
    v.SetWidth(mm(0.25) if t == pcbnew.VIATYPE_MICROVIA else mm(0.6))
    v.SetNet(nets[n]); b.Add(v); return v
v = via(10, pcbnew.VIATYPE_MICROVIA, pcbnew.F_Cu, pcbnew.In1_Cu)
v.SetFillingMode(pcbnew.FILLING_MODE_FILLED); v.SetCappingMode(pcbnew.CAPPING_MODE_CAPPED)
v = via(12, pcbnew.VIATYPE_MICROVIA, pcbnew.F_Cu, pcbnew.In1_Cu)
v.SetFillingMode(pcbnew.FILLING_MODE_NOT_FILLED)
via(14, pcbnew.VIATYPE_THROUGH, pcbnew.F_Cu, pcbnew.B_Cu)
v = via(16, pcbnew.VIATYPE_THROUGH, pcbnew.F_Cu, pcbnew.B_Cu)
v.SetFrontTentingMode(pcbnew.TENTING_MODE_TENTED)
v.SetBackCoveringMode(pcbnew.COVERING_MODE_COVERED)
v.SetFrontPluggingMode(pcbnew.PLUGGING_MODE_PLUGGED)
v = via(18, pcbnew.VIATYPE_THROUGH, pcbnew.F_Cu, pcbnew.B_Cu)
v.SetBackPluggingMode(pcbnew.PLUGGING_MODE_PLUGGED)
v.SetFrontTentingMode(pcbnew.TENTING_MODE_NOT_TENTED)
b.Save(sys.argv[1])
print("ok")
"""

#: the pads as the fixture states them: (number, pin name, pin type)
PINS = [
    ("A1", "DQ0", "bidirectional"),
    ("A2", "DQS_t", "bidirectional"),
    ("A3", "PETp0", "output"),
    ("A4", "VSS", "power_in"),
    ("B1", "VSS", "power_in"),
    ("B2", "VSS", "power_in"),
    ("B3", "NC", "no_connect"),
    ("B4", "", ""),
]
#: the vias by x (mm) as the fixture states them
PROTECTION = {
    10.0: ViaProtection(filling=True, capping=True),
    12.0: ViaProtection(filling=False),
    14.0: None,
    16.0: ViaProtection(tenting_front=True, covering_back=True, plugging_front=True),
    18.0: ViaProtection(tenting_front=False, plugging_back=True),
}
#: the protection fields IPC-2581 carries, and only as "yes" (docs/ipc2581.md)
IPC2581_FIELDS = ("filling", "capping", "plugging_front", "plugging_back")


def pins(board) -> list[tuple[str, str, str]]:
    return sorted((p.number, p.pin_function, p.pin_type) for _, p in board.pads)


def protection(board) -> dict[float, ViaProtection | None]:
    v = board.vias
    return {round(float(v.pos[i, 0]), 3): v.protection.get(i) for i in range(len(v))}


def carried_by_ipc2581(p: ViaProtection | None) -> ViaProtection | None:
    """What an IPC-2581 file can say of ``p``: its "yes" filling, capping and plugging."""
    kept = {f: True for f in IPC2581_FIELDS if getattr(p, f, None) is True}
    return ViaProtection(**kept) if kept else None


def test_file_reader_reads_what_kicad10_saved() -> None:
    b = read_board(str(BOARD))
    assert pins(b) == sorted(PINS)
    assert protection(b) == PROTECTION
    assert b.not_carried == ()


def test_fixture_is_what_kicad10_makes_now() -> None:
    """KiCad 10's pcbnew, run now, makes a board that reads the same (the fixture is KiCad's)."""
    ok, why = kicad10.available()
    need(ok, why)
    out = "/tmp/accel-drc-tests/pins-protection/made.kicad_pcb"
    kicad10.outside(out).parent.mkdir(parents=True, exist_ok=True)
    proc = kicad10.python(SCRIPT, out, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    b = read_board(str(kicad10.outside(out)))
    assert (pins(b), protection(b)) == (sorted(PINS), PROTECTION)


@pytest.fixture(scope="module")
def export10(tmp_path_factory) -> Path:
    """The fixture board exported by KiCad 10's ``kicad-cli pcb export ipc2581``."""
    ok, why = kicad10.available()
    need(ok, why)
    src = kicad10.inside(BOARD)
    dest = str(Path(src).parent / "pins-protection.xml")
    r = kicad10.run(["/usr/bin/kicad-cli", "pcb", "export", "ipc2581", "-o", dest, src])
    assert r.returncode == 0, r.stderr
    out = tmp_path_factory.mktemp("export10") / "pins-protection.xml"
    out.write_bytes(kicad10.outside(dest).read_bytes())
    return out


def test_ipc2581_reader_carries_what_the_export_has(export10: Path) -> None:
    """Filling, capping and plugging (the "yes" ones) come through; pin names, "no" and
    tenting/covering do not, and the board says so."""
    b = ipc2581.read(str(export10))
    assert b.warnings == ()
    assert protection(b) == {x: carried_by_ipc2581(p) for x, p in PROTECTION.items()}
    assert [(n, f) for n, f, _ in pins(b)] == [(n, "") for n, _, _ in sorted(PINS)]
    assert b.not_carried == ("pin_names", "unprotected_vias")


def test_no_pin_names_is_cannot_verify_not_a_guess(export10: Path) -> None:
    """The same board checked from its IPC-2581 export: one info *cannot verify* finding says
    which parts' pin names were missing; the ``.kicad_pcb`` run has none."""
    from accel_drc.pipeline import check_board

    ipc = check_board(ipc2581.read(str(export10)), board_file=str(export10))
    (f,) = [f for f in ipc.findings if f.rule == "coverage.pin_names_unknown"]
    assert f.status.value == "cannot_verify" and f.severity.value == "info"
    assert f.evidence["parts"] == ["U1"] and "no pin names" in f.message
    pcb = check_board(read_board(str(BOARD)), board_file=str(BOARD))
    assert not [f for f in pcb.findings if f.rule == "coverage.pin_names_unknown"]


@pytest.mark.kicad
@pytest.mark.slow
def test_live_reader_reads_what_the_file_says(tmp_path: Path) -> None:
    """KiCad 10's pcbnew with the board open: the live reader's pin names and types and via
    protection equal the file reader's, field for field."""
    need_live_kicad("10")
    from kicad_live import LiveKiCad

    sys.path.insert(0, str(ROOT / "plugin"))
    from accel_drc_kicad.connection import connect, open_board
    from accel_drc_kicad.live_reader import read_live

    kicad = LiveKiCad(BOARD, tmp_path, version="10")
    kicad.start()
    try:
        os.environ["KICAD_API_SOCKET"] = kicad.socket
        api = connect()
        live = read_live(api, open_board(api))
    finally:
        os.environ.pop("KICAD_API_SOCKET", None)
        kicad.stop()
    assert pins(live) == sorted(PINS)
    assert protection(live) == PROTECTION
    assert live.not_carried == ()


# -- a bottom backdrill as KiCad 10's pcbnew makes it ------------------------------------------

BACKDRILLED = FIXTURES / "kicad_versions" / "kicad10_bottom_backdrill.kicad_pcb"

#: KiCad 10's pcbnew: a 6-layer board, a PCIe via F.Cu..B.Cu routed on F.Cu and In2.Cu,
#: backdrilled from B.Cu through In4.Cu (``SetBottomBackdrillLayer``), which KiCad 10.0.7 saves
#: as the via's ``(tertiary_drill (size 0.45) (layers "B.Cu" "In4.Cu"))``
BACKDRILL_SCRIPT = r"""
import sys, pcbnew
b = pcbnew.BOARD()
b.SetCopperLayerCount(6)
ds = b.GetDesignSettings()
ds.SetBoardThickness(pcbnew.FromMM(1.6))
mm = pcbnew.FromMM
n = pcbnew.NETINFO_ITEM(b, "/PCIE_TX0_P"); b.Add(n)
r = pcbnew.PCB_SHAPE(b, pcbnew.SHAPE_T_RECTANGLE)
r.SetLayer(pcbnew.Edge_Cuts); r.SetStart(pcbnew.VECTOR2I(0, 0)); r.SetEnd(pcbnew.VECTOR2I(mm(20), mm(20))); r.SetWidth(mm(0.1)); b.Add(r)
v = pcbnew.PCB_VIA(b)
v.SetPosition(pcbnew.VECTOR2I(mm(10), mm(10))); v.SetViaType(pcbnew.VIATYPE_THROUGH)
v.SetLayerPair(pcbnew.F_Cu, pcbnew.B_Cu); v.SetDrill(mm(0.25)); v.SetWidth(mm(0.5)); v.SetNet(n)
v.SetBottomBackdrillLayer(pcbnew.In4_Cu); v.SetBottomBackdrillSize(mm(0.45))
b.Add(v)
for layer, x in ((pcbnew.F_Cu, 2), (pcbnew.In2_Cu, 18)):
    t = pcbnew.PCB_TRACK(b); t.SetLayer(layer); t.SetStart(pcbnew.VECTOR2I(mm(10), mm(10)))
    t.SetEnd(pcbnew.VECTOR2I(mm(x), mm(10))); t.SetWidth(mm(0.2)); t.SetNet(n); b.Add(t)
b.Save(sys.argv[1])
import json
print(json.dumps({"layer": b.GetLayerName(v.GetBottomBackdrillLayer()),
                  "size_mm": pcbnew.ToMM(v.GetBottomBackdrillSize())}))
"""


def test_bottom_backdrill_as_kicad10_saves_it() -> None:
    """KiCad 10 saves a bottom backdrill as ``tertiary_drill``, which the reader skipped (the
    via read as not backdrilled, its stub the undrilled In2.Cu..B.Cu one).  Now: bottom, drilled
    through In4.Cu (pcbnew's ``GetBottomBackdrillLayer``), so In3.Cu must not be cut; the stub is
    the backdrill's, unknown until the fabricator's residual is declared."""
    from accel_drc.analysis import Analysis
    from accel_drc.analysis.via_stubs import via_rows

    b = read_board(str(BACKDRILLED))
    (bd,) = b.vias.backdrills.values()
    assert (bd.side, b.layer_name(bd.must_not_cut), bd.drill_mm) == ("bottom", "In3.Cu", 0.45)
    (row,) = via_rows(Analysis(b, {}))
    assert row["connected"] == ["F.Cu", "In2.Cu"]
    assert row["backdrill"]["must_not_cut"] == "In3.Cu" and row["stub_mm"] is None


def test_bottom_backdrill_equals_pcbnew_and_its_ipc2581_export() -> None:
    """The board made now by KiCad 10's pcbnew reads as pcbnew holds it, and KiCad 10's own
    IPC-2581 export of it gives the same backdrill with pcbnew's ``maxStubLength``: the stub is
    the barrel from In2.Cu (the deepest connected layer) through In3.Cu (the exported stack-up's
    DIELECTRIC_3 and In3.Cu) plus that allowance."""
    import json

    from accel_drc.analysis import Analysis
    from accel_drc.analysis.via_stubs import via_rows

    ok, why = kicad10.available()
    need(ok, why)
    out = "/tmp/accel-drc-tests/backdrill/made.kicad_pcb"
    kicad10.outside(out).parent.mkdir(parents=True, exist_ok=True)
    proc = kicad10.python(BACKDRILL_SCRIPT, out, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pcbnew_says = json.loads(proc.stdout.strip().splitlines()[-1])
    assert pcbnew_says == {"layer": "In4.Cu", "size_mm": 0.45}
    made = read_board(str(kicad10.outside(out)))
    (bd,) = made.vias.backdrills.values()
    # drilled through pcbnew's layer: the next one up is the first it must not cut
    assert made.layer_name(bd.must_not_cut + 1) == pcbnew_says["layer"]
    assert bd.drill_mm == pcbnew_says["size_mm"]
    xml = "/tmp/accel-drc-tests/backdrill/made.xml"
    r = kicad10.run(["/usr/bin/kicad-cli", "pcb", "export", "ipc2581", "-o", xml, out])
    assert r.returncode == 0, r.stderr
    ipc = ipc2581.read(str(kicad10.outside(xml)))
    (ibd,) = ipc.vias.backdrills.values()
    assert (ibd.side, ibd.must_not_cut) == (bd.side, bd.must_not_cut)
    text = kicad10.outside(xml).read_text(encoding="utf-8")
    max_stub = float(re.search(r'MAX_STUB_LENGTH">\s*<Property value="([0-9.]+)"', text)[1])
    assert ibd.max_stub_mm == pytest.approx(max_stub)
    thick = {
        m[1]: float(m[2])
        for m in re.finditer(r'StackupLayer layerOrGroupRef="([^"]+)" thickness="([0-9.]+)"', text)
    }
    (row,) = via_rows(Analysis(ipc, {}))
    want = thick["DIELECTRIC_3"] + thick["In3.Cu"] + max_stub
    assert row["stub_mm"] == pytest.approx(want, abs=1e-4)


def test_via_backdrilled_from_both_faces_keeps_one_and_says_so(tmp_path: Path) -> None:
    """A via with a top backdrill (``backdrill``) and a bottom one (``tertiary_drill``): the
    model holds one per via, so the first is kept and a warning says so."""
    text = BACKDRILLED.read_text(encoding="utf-8")
    top = '(drill 0.25)\n\t\t(backdrill\n\t\t\t(size 0.3)\n\t\t\t(layers "F.Cu" "In1.Cu")\n\t\t)'
    assert text.count("(drill 0.25)") == 1
    both = tmp_path / BACKDRILLED.name
    both.write_text(text.replace("(drill 0.25)", top), encoding="utf-8")
    b = read_board(str(both))
    (bd,) = b.vias.backdrills.values()
    assert (bd.side, bd.drill_mm) == ("top", 0.3)
    assert any("backdrilled from both faces" in w for w in b.warnings)
