"""What KiCad 10's IPC-2581 exporter writes differently from KiCad 9, on the hand-written
revision C board (fixtures/ipc2581/hand_revC_micron.xml) with the exporter's own constructs
added, so the reader's handling is pinned without KiCad installed.  The same facts are checked
against real exports of the fixture boards by KiCad 9's and KiCad 10's kicad-cli in
tests/test_ipc2581_kicad.py; the constructs below are copied from KiCad 10.0.7's output
(``generateComponents``, ``addSlotCavity``, ``generateCadSpecs`` and ``generateProfile`` in
KiCad's pcb_io_ipc2581.cpp)."""

from __future__ import annotations

import pytest
from accel_drc.readers import ipc2581
from conftest import FIXTURES

REV_C = FIXTURES / "ipc2581" / "hand_revC_micron.xml"

#: two bottom parts as KiCad 10.0.7 writes C3 (pcbnew 90) and R8 (pcbnew 180) of m2-oculink
_BOTTOM_PARTS = """
        <Component refDes="C3" packageRef="R0402" part="C" layerRef="BOTTOM" mountType="SMT">
          <Xform rotation="90.0" mirror="true"/>
          <Location x="20000" y="10000"/>
        </Component>
        <Component refDes="R8" packageRef="R0402" part="R" layerRef="BOTTOM" mountType="SMT">
          <Xform mirror="true"/>
          <Location x="25000" y="10000"/>
        </Component>
"""

#: J1, a top part whose one pad (S1) holds the slot below
_TAB_PART = """
        <Package name="TAB" type="OTHER" pinOne="UNKNOWN">
          <Pin number="S1" type="THRU" electricalType="ELECTRICAL"><Location x="0" y="0"/><StandardPrimitiveRef id="R0402_PAD"/></Pin>
        </Package>
        <Component refDes="J1" packageRef="TAB" part="TAB" layerRef="TOP" mountType="THMT">
          <Location x="30000" y="30000"/>
        </Component>
"""

_TAB_PAD = """
          <Set net="GND">
            <Pad padstackDefRef="R0402"><Location x="30000" y="30000"/><StandardPrimitiveRef id="R0402_PAD"/><PinRef componentRef="J1" pin="S1"/></Pad>
          </Set>
"""

#: a plated slot as KiCad 10.0.7 writes crosslink's J1 shield tab (revision C): a Location, an
#: Xform and an Oval whose width is the long side
_SLOT = """
        <LayerFeature layerRef="SLOT_TOP_BOTTOM">
          <Set net="GND">
            <SlotCavity name="SLOT1" platingStatus="PLATED" plusTol="0.0" minusTol="0.0">
              <Location x="30000" y="30000"/>
              <Xform rotation="90.0"/>
              <Oval width="1400" height="600"/>
            </SlotCavity>
          </Set>
        </LayerFeature>
"""

_SLOT_LAYER = """
      <Layer name="SLOT_TOP_BOTTOM" layerFunction="ROUT" side="ALL" polarity="POSITIVE">
        <Span fromLayer="TOP" toLayer="BOTTOM"/>
      </Layer>
"""


def _kicad10_text(generator: str = 'name="KiCad" revision="10.0.7" vendor="KiCad EDA"') -> str:
    """The hand-written board with KiCad 10's constructs and ``generator`` as its writer."""
    text = REV_C.read_text(encoding="utf-8")
    text = text.replace('name="hand-written" revision="1"', generator)
    # the solder mask as KiCad 10 writes one with no material: its default εr, no tan δ
    text = text.replace(
        '<Spec name="MASK"><General type="MATERIAL"><Property text="LPI soldermask"/></General></Spec>',
        '<Spec name="MASK"><General type="MATERIAL"><Property text="SOLDERMASK"/></General>'
        '<Dielectric type="DIELECTRIC_CONSTANT"><Property value="3.3"/></Dielectric></Spec>',
    )
    # the Edge.Cuts circle as a Profile cut-out too (KiCad 10 writes both)
    text = text.replace(
        "          </Polygon>\n        </Profile>",
        "          </Polygon>\n"
        '          <Cutout><PolyBegin x="46500" y="35000"/>'
        '<PolyStepCurve x="43500" y="35000" centerX="45000" centerY="35000" clockwise="false"/>'
        '<PolyStepCurve x="46500" y="35000" centerX="45000" centerY="35000" clockwise="false"/>'
        "</Cutout>\n        </Profile>",
    )
    text = text.replace(
        '        <LogicalNet name="PCIE5_TX0_P">',
        _BOTTOM_PARTS + _TAB_PART + '        <LogicalNet name="PCIE5_TX0_P">',
    )
    text = text.replace(
        '          <Set geometryUsage="TEXT">', _TAB_PAD + '          <Set geometryUsage="TEXT">'
    )
    text = text.replace("      <Stackup name=", _SLOT_LAYER + "      <Stackup name=")
    return text.replace("      </Step>", _SLOT + "      </Step>")


@pytest.fixture(scope="module")
def kicad10_board():
    return ipc2581.read_bytes(_kicad10_text().encode(), "kicad10.xml")


@pytest.fixture(scope="module")
def other_board():
    """The same file written by another tool: none of KiCad's quirks are undone."""
    return ipc2581.read_bytes(
        _kicad10_text('name="hand-written" revision="1"').encode(), "hand.xml"
    )


def test_bottom_side_rotation_is_pcbnews(kicad10_board, other_board):
    """KiCad 10 writes ``(-a - 180)`` for a bottom part at ``a``: 90 stays 90, 180 becomes 0
    (KiCad 9 wrote ``-a``); another tool's Xform is read as written."""
    k10 = {f.reference: f.rotation for f in kicad10_board.footprints}
    assert (k10["C3"], k10["R8"]) == (90.0, 180.0)
    other = {f.reference: f.rotation for f in other_board.footprints}
    assert (other["C3"], other["R8"]) == (90.0, 0.0)


def _tab(board):
    """J1's shield tab S1 (the pad the slot sits in)."""
    (j1,) = [f for f in board.footprints if f.reference == "J1"]
    (tab,) = j1.pads
    return tab


def test_located_oval_slot_is_a_barrel(kicad10_board):
    """A ``SlotCavity`` with a ``Location`` and an ``Oval`` (KiCad 10) is a plated barrel at that
    place, the Oval's short side its drill, attached to the pad there, with no warning."""
    assert not any("SlotCavity" in w for w in kicad10_board.warnings)
    tab = _tab(kicad10_board)
    assert (tab.type, tab.drill_mm, tab.x, tab.y) == ("thru_hole", pytest.approx(0.6), 30.0, -30.0)


def test_slot_without_a_place_says_so():
    """KiCad 10's revision B export writes the slot's Oval without a ``Location``: the barrel's
    place is not in the file, so it is not read, and the warning says what to do."""
    text = _kicad10_text().replace('              <Location x="30000" y="30000"/>\n', "")
    board = ipc2581.read_bytes(text.encode(), "revb.xml")
    (warning,) = [w for w in board.warnings if "SlotCavity" in w]
    assert "SLOT1" in warning and "export revision C" in warning
    assert _tab(board).drill_mm is None


def test_kicad_default_mask_permittivity_is_not_declared(kicad10_board, other_board):
    """3.3 with no loss tangent on a KiCad mask is DEFAULT_EPSILON_R_SOLDERMASK (the board file
    writes a mask's εr only with a material, which the exporter never writes): undeclared.
    Another tool's 3.3 is its declaration."""
    masks = [la for la in kicad10_board.stackup.layers if la.kind == "soldermask"]
    assert masks and all(la.epsilon_r is None for la in masks)
    others = [la for la in other_board.stackup.layers if la.kind == "soldermask"]
    assert others and all(la.epsilon_r == 3.3 for la in others)


def test_kicad_mask_with_a_loss_tangent_is_declared():
    """A KiCad mask with a loss tangent was given a material in the board, so its 3.3 stays."""
    text = _kicad10_text().replace(
        '<Property value="3.3"/></Dielectric></Spec>',
        '<Property value="3.3"/></Dielectric>'
        '<Dielectric type="LOSS_TANGENT"><Property value="0.02"/></Dielectric></Spec>',
    )
    board = ipc2581.read_bytes(text.encode(), "mask.xml")
    masks = [la for la in board.stackup.layers if la.kind == "soldermask"]
    assert all((la.epsilon_r, la.loss_tangent) == (3.3, 0.02) for la in masks)


@pytest.mark.parametrize("fixture", ["kicad10_board", "other_board"])
def test_profile_cutout_is_not_doubled_by_its_flash(fixture, request):
    """The 3 mm circle is both a Profile ``Cutout`` and a flash on the outline layer: one ring,
    whoever wrote the file (the profile and the cut-out: two rings, not three)."""
    board = request.getfixturevalue(fixture)
    assert len(board.outline.rings) == 2


def test_flash_that_is_no_profile_cutout_is_kept():
    """KiCad 9 writes an Edge.Cuts circle only as a flash: it stays a ring of its own."""
    text = REV_C.read_text(encoding="utf-8")
    board = ipc2581.read_bytes(text.encode(), "hand.xml")
    assert len(board.outline.rings) == 2


_FILL_LAYERS = """
      <Layer name="FILL_TOP" layerFunction="HOLEFILL" side="TOP" polarity="POSITIVE"/>
      <Layer name="FILL_ALL" layerFunction="HOLEFILL" side="ALL" polarity="POSITIVE">
        <Span fromLayer="TOP" toLayer="BOTTOM"/>
      </Layer>
"""

_FILL_FEATURES = """
        <LayerFeature layerRef="FILL_TOP">
          <Set><Pad padstackDefRef="VIA_THROUGH"><Location x="10000" y="20000"/></Pad></Set>
        </LayerFeature>
        <LayerFeature layerRef="FILL_ALL">
          <Set><Pad padstackDefRef="VIA_THROUGH"><Location x="10000" y="20000"/></Pad></Set>
          <Set><Pad padstackDefRef="VIA_THROUGH"><Location x="1" y="1"/></Pad></Set>
        </LayerFeature>
"""


@pytest.mark.parametrize(
    "generator, plugged",
    [
        ('name="KiCad" revision="10.0.7" vendor="KiCad EDA"', True),
        ('name="hand" revision="1"', None),
    ],
)
def test_protection_layers_as_read(generator: str, plugged: bool | None) -> None:
    """A HOLEFILL layer with a Span fills the vias it holds a pad for (any writer); one of a
    side plugs them from that side in a KiCad file, and in another tool's file is not read,
    with one warning.  A protection pad on no via is counted in one warning."""
    text = REV_C.read_text(encoding="utf-8").replace('name="hand-written" revision="1"', generator)
    text = text.replace("      <Stackup name=", _FILL_LAYERS + "      <Stackup name=")
    text = text.replace("      </Step>", _FILL_FEATURES + "      </Step>")
    board = ipc2581.read_bytes(text.encode(), "fill.xml")
    (row,) = [i for i in range(len(board.vias)) if tuple(board.vias.pos[i]) == (10.0, -20.0)]
    got = board.vias.protection[row]
    assert (got.filling, got.plugging_front, got.capping) == (True, plugged, None)
    assert "1 via protection pad(s) sit on no via: ignored" in board.warnings
    no_span = [w for w in board.warnings if "FILL_TOP" in w]
    if plugged:
        assert no_span == []
    else:
        assert len(no_span) == 1 and "no Span: its via protection is not read" in no_span[0]
    assert len(board.vias.protection) == 1
