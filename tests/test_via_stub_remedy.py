"""Every via_stub violation says what would pass (issue 19 §6), and the remedy's numbers hold:
fed back into the board (the backdrill declared, the connection moved, the blind via built) the
stub passes.  Also the basis of each input and, for an assumed PCIe generation, the verdict for
every generation of the family (issue 19 §1)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest
from accel_drc.analysis.signals import SignalAssignment
from accel_drc.basis import settle
from accel_drc.checks import CheckContext
from accel_drc.checks.via_stub import ASSUMED_RESIDUAL_MM, check_via_stub
from accel_drc.packs import load_library
from accel_drc.results import Status
from test_via_stub_analysis import B
from test_via_stub_check import StandIn, board_three, rule

LIMIT = 0.3  # via 0 of board_three: used F.Cu + In2, bottom stub In2 -> B.Cu = 0.67 mm


def violations(board, config=None):  # noqa: ANN001, ANN201
    a = StandIn(board, config)
    out = check_via_stub(
        CheckContext(board=board, analysis=a, board_class="inference"), rule(max_stub_mm=LIMIT)
    )
    return [f for f in out.findings if f.status == Status.VIOLATION and f.rule.endswith("pcie5")], a


def remedy_of_via0() -> dict:
    found, _ = violations(board_three())
    assert len(found) == 1 and found[0].evidence["stub_mm"] == pytest.approx(B[5] - B[2])
    return found[0].evidence["remedy"]


def test_backdrill_remedy_fed_back_passes() -> None:
    rem = remedy_of_via0()
    (bd,) = rem["backdrill"]
    assert (bd["side"], bd["from"], bd["must_not_cut"]) == ("bottom", "B.Cu", "In2.Cu")
    # no residual declared anywhere: the assumed 10 mil, marked so
    assert bd["residual_stub_mm"] == pytest.approx(ASSUMED_RESIDUAL_MM)
    assert bd["residual_basis"] == "assumed" and "assumed 10 mil" in rem["text"]
    assert rem["backdrill_passes"] is True
    config = {
        "backdrill": [
            {
                "match": {"net": "SIG"},
                "side": bd["side"],
                "must_not_cut": bd["must_not_cut"],
                "residual_stub_mm": bd["residual_stub_mm"],
            }
        ]
    }
    found, a = violations(board_three(), config)
    assert found == []
    assert a.via_stubs.stub_mm[0] == pytest.approx(rem["backdrill_stub_after_mm"])
    assert a.via_stubs.stub_mm[0] <= LIMIT


def test_layer_change_remedy_fed_back_passes() -> None:
    rem = remedy_of_via0()
    lc = rem["layer_change"]
    assert lc["move"] == "In2.Cu" and lc["passes"]
    to = int(lc["to"][2]) if lc["to"].startswith("In") else 5
    board = board_three()
    t = board.tracks
    layer = t.layer.copy()
    layer[1] = to  # via 0's In2 track, moved
    board = dataclasses.replace(board, tracks=dataclasses.replace(t, layer=layer))
    found, a = violations(board)
    assert not [f for f in found if f.pos == (10.0, 10.0)]
    assert a.via_stubs.stub_mm[0] == pytest.approx(lc["stub_after_mm"])
    # the shallowest layer that passes: one layer higher would not
    assert B[5] - B[to - 1] > LIMIT


def test_blind_via_remedy_fed_back_has_no_stub() -> None:
    rem = remedy_of_via0()
    bv = rem["blind_via"]
    assert (bv["type"], bv["from"], bv["to"]) == ("blind", "F.Cu", "In2.Cu")
    board = board_three()
    end = board.vias.end.copy()
    end[0] = 2
    board = dataclasses.replace(board, vias=dataclasses.replace(board.vias, end=end))
    found, a = violations(board)
    assert not [f for f in found if f.pos == (10.0, 10.0)]
    assert a.via_stubs.stub_mm[0] == pytest.approx(0.0)


def test_declared_residual_is_used_and_named() -> None:
    """A residual declared for the net (a backdrill that leaves too much) is the one the remedy
    uses, marked declared."""
    config = {
        "backdrill": [
            {"match": {"net": "SIG"}, "side": "bottom", "must_not_cut": "In4.Cu",
             "residual_stub_mm": 0.05}
        ]
    }  # fmt: skip
    found, _ = violations(board_three(), config)
    (f,) = found
    (bd,) = f.evidence["remedy"]["backdrill"]
    assert bd["residual_stub_mm"] == 0.05 and bd["residual_basis"] == "declared"
    assert "declared residual" in f.evidence["remedy"]["text"]


class Assumed(StandIn):
    """The stand-in with the library's signal types and net 1 recognised as PCIe of unknown
    generation."""

    @functools.cached_property
    def signal_types(self) -> dict[str, Any]:
        return dict(self.library.signals)

    @functools.cached_property
    def net_signal(self) -> dict[int, SignalAssignment]:
        return {
            1: SignalAssignment("pcie4", "family_net_name", "PCIE", "generation unknown", "pcie")
        }

    def nets_by_signal(self, sig: str) -> tuple[int, ...]:
        return (1,) if sig == "pcie4" else ()


def test_assumed_generation_lists_every_candidate_and_settles_conditional() -> None:
    lib = load_library()
    r = next(
        x for x in lib.packs["inference"].rules if x.check == "via_stub" and x.signal == "pcie4"
    )
    board = board_three()
    a = Assumed(board)
    out = check_via_stub(CheckContext(board=board, analysis=a, board_class="inference"), r)
    (f,) = [x for x in out.findings if x.status == Status.VIOLATION and x.rule == r.id]
    ev = f.evidence
    assert ev["basis"] == {"stub_mm": "measured", "signal": "assumed"}
    # 0.67 mm, f_res 58.4 GHz: Gen1-3 pass (Gen3: 0.953 mm, 4 GHz Nyquist), Gen4-6 fail
    assert ev["candidates"] == {
        "pcie1": "pass",
        "pcie2": "pass",
        "pcie3": "pass",
        "pcie4": "fail",
        "pcie5": "fail",
        "pcie6": "fail",
    }
    s = settle(f)
    assert s.status == Status.CANNOT_VERIFY
    assert "passes pcie1, pcie2, pcie3" in s.message and "fails pcie4, pcie5, pcie6" in s.message
    # the hint is the entry to paste (the assumed type), and names the other candidates
    assert "declare" in s.evidence and "signals: pcie4: [" in s.evidence["declare"]
    assert "or another of pcie1/pcie2/pcie3/pcie5/pcie6" in s.evidence["declare"]


def test_declared_signal_is_a_fact() -> None:
    lib = load_library()
    r = next(
        x for x in lib.packs["inference"].rules if x.check == "via_stub" and x.signal == "pcie4"
    )
    board = board_three()
    a = Assumed(board)
    a.net_signal = {1: SignalAssignment("pcie4", "config", "SIG")}
    out = check_via_stub(CheckContext(board=board, analysis=a, board_class="inference"), r)
    (f,) = [x for x in out.findings if x.status == Status.VIOLATION and x.rule == r.id]
    assert f.evidence["basis"]["signal"] == "declared" and "candidates" not in f.evidence
    assert settle(f).status == Status.VIOLATION


def test_kicad_default_stackup_makes_the_stub_a_default() -> None:
    """A stub measured through KiCad's generated FR4 stack-up rests on default thicknesses."""
    from accel_drc.model import Stackup, StackupLayer, copper_layer_name

    layers = []
    for i in range(6):
        layers.append(StackupLayer(copper_layer_name(i, 6), "copper", 0.035, copper_index=i))
        if i < 5:
            layers.append(StackupLayer(f"dielectric {i + 1}", "core", 0.2, "FR4", 4.5, 0.02))
    board = board_three(stackup=Stackup(tuple(layers)))
    found, _ = violations(board)
    assert found and found[0].evidence["basis"]["stub_mm"] == "default"
    assert np.isfinite(found[0].evidence["stub_mm"])


def test_backdrill_alone_not_enough_says_so() -> None:
    """At an NVLink-class limit (0.1 mm) the assumed 10 mil residual fails: the remedy says so
    and offers the layer that passes (B.Cu: no stub) and the blind via."""
    a = StandIn(board_three())
    out = check_via_stub(
        CheckContext(board=a.board, analysis=a, board_class="inference"), rule(max_stub_mm=0.1)
    )
    f = next(x for x in out.findings if x.status == Status.VIOLATION and x.pos == (10.0, 10.0))
    rem = f.evidence["remedy"]
    assert rem["backdrill_passes"] is False and "backdrill alone is not enough" in rem["text"]
    assert rem["layer_change"] == {
        "move": "In2.Cu",
        "to": "B.Cu",
        "stub_after_mm": 0.0,
        "passes": True,
    }
    assert rem["blind_via"]["to"] == "In2.Cu"
