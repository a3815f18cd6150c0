"""KiCad 10's IPC-4761 via protection (``tenting``/``covering``/``plugging``/``filling``/
``capping`` per via, format 20250228 on) read into ``Vias.protection`` (issue 33).

Before: the fast via parser took such a via as plain and dropped the tokens, so no check could
know that a stacked microvia was filled and capped."""

from __future__ import annotations

from pathlib import Path

import kicad10
from accel_drc.model import ViaProtection
from accel_drc.readers import read_board
from conftest import need

SAVED = (
    Path(__file__).resolve().parent.parent
    / "fixtures" / "checks" / "microvia" / "kicad10_saved_protection.kicad_pcb"
)  # fmt: skip

#: KiCad 10's pcbnew: one via of each protection, saved (how the fixture above was made)
SCRIPT = r"""
import sys, pcbnew
b = pcbnew.BOARD()
b.SetCopperLayerCount(4)
def via(x, t, a, c):
    v = pcbnew.PCB_VIA(b)
    v.SetPosition(pcbnew.VECTOR2I(pcbnew.FromMM(x), pcbnew.FromMM(10)))
    v.SetViaType(t); v.SetLayerPair(a, c)
    v.SetDrill(pcbnew.FromMM(0.1)); v.SetWidth(pcbnew.FromMM(0.25))
    b.Add(v); return v
v = via(10, pcbnew.VIATYPE_MICROVIA, pcbnew.F_Cu, pcbnew.In1_Cu)
v.SetFillingMode(pcbnew.FILLING_MODE_FILLED); v.SetCappingMode(pcbnew.CAPPING_MODE_CAPPED)
v = via(12, pcbnew.VIATYPE_MICROVIA, pcbnew.F_Cu, pcbnew.In1_Cu)
v.SetFillingMode(pcbnew.FILLING_MODE_NOT_FILLED)
via(14, pcbnew.VIATYPE_THROUGH, pcbnew.F_Cu, pcbnew.B_Cu)
v = via(16, pcbnew.VIATYPE_THROUGH, pcbnew.F_Cu, pcbnew.B_Cu)
v.SetFrontTentingMode(pcbnew.TENTING_MODE_TENTED)
v.SetBackCoveringMode(pcbnew.COVERING_MODE_COVERED)
v.SetFrontPluggingMode(pcbnew.PLUGGING_MODE_PLUGGED)
b.Save(sys.argv[1])
"""


def _by_x(board):
    return {round(float(board.vias.pos[i, 0]), 3): board.vias.protection.get(i)
            for i in range(len(board.vias))}  # fmt: skip


def test_protection_of_a_kicad10_saved_board():
    b = read_board(str(SAVED))
    got = _by_x(b)
    assert got[10.0] == ViaProtection(filling=True, capping=True)
    assert got[10.0].filled_and_capped
    assert got[12.0] is None and got[14.0] is None
    assert got[16.0] == ViaProtection(tenting_front=True, covering_back=True, plugging_front=True)
    assert b.vias.types == ("through", "micro", "micro", "through")


def test_protection_as_kicad10_writes_it_now(tmp_path):
    ok, why = kicad10.available()
    need(ok, why)
    out = "/tmp/accel-drc-tests/via-protection.kicad_pcb"
    kicad10.outside(out).parent.mkdir(parents=True, exist_ok=True)
    proc = kicad10.python(SCRIPT, out, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = _by_x(read_board(str(kicad10.outside(out))))
    assert got[10.0] == ViaProtection(filling=True, capping=True)
    assert got[12.0] == ViaProtection(filling=False)
    assert got[14.0] is None
    assert got[16.0] == ViaProtection(tenting_front=True, covering_back=True, plugging_front=True)


def test_protection_words_other_than_yes_no_state_nothing(tmp_path):
    """``none`` (KiCad: from the board's default) and an unknown word are "not stated" (None),
    never a yes; a via stating only those keeps an all-None protection."""
    text = SAVED.read_text()
    text = text.replace("(capping yes)", "(capping none)").replace(
        "(filling yes)", "(filling maybe)"
    )
    p = tmp_path / "odd.kicad_pcb"
    p.write_text(text)
    got = _by_x(read_board(str(p)))
    assert got[10.0] == ViaProtection()
    assert not got[10.0].filled_and_capped


def test_kicad9_tenting_words_state_the_tented_sides(tmp_path):
    """KiCad 9 (format 20241229) writes a via's tenting as bare words: ``(tenting front)`` states
    the front tented.  ``(tenting none)`` and an unnamed side are untented to KiCad 9 but
    unstated to KiCad 10 (it drops them on loading; its API and an upgrade say nothing), so they
    read as not stated: the live readers of both KiCads agree (tests/test_plugin_live.py).  A
    named side used to be dropped with the rest, so ``(tenting front)`` read as nothing."""
    from conftest import FIXTURE_BOARDS

    src = FIXTURE_BOARDS["m2-oculink-adapter"]
    text = src.read_text(encoding="utf-8")
    assert text.count("(tenting none)") == 2
    assert read_board(str(src)).vias.protection == {}
    one = tmp_path / src.name
    one.write_text(text.replace("(tenting none)", "(tenting front)", 1), encoding="utf-8")
    assert list(read_board(str(one)).vias.protection.values()) == [
        ViaProtection(tenting_front=True)
    ]
