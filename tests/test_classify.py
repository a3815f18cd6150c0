"""The classifier: real fixtures are never training; hand-made boards of each class come out right."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from _h2_boards import cu, diel, make_board, rect, stackup
from accel_drc.analysis import Analysis
from accel_drc.api import check
from accel_drc.classify import NOT_ACCELERATOR, classify, explain, override
from accel_drc.model import Footprint, Pad
from accel_drc.packs import GENERAL, class_specific, load_library
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS

LIB = load_library()


def _classify(board, config=None):
    a = Analysis(board, config or {}, LIB)
    return classify(board, a, LIB)


@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_real_fixtures_are_edge_or_inference(name):
    c = _classify(read_board(str(FIXTURE_BOARDS[name])))
    assert c.board_class in ("edge", "inference"), (name, c.scores)
    assert c.board_class != "training"
    assert 1 / 3 < c.confidence <= 1
    assert c.scores["training"] < c.scores[c.board_class]
    assert c.evidence and all(e.source for e in c.evidence)


def test_small_m2_boards_are_edge_with_m2_evidence():
    c = _classify(read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"])))
    assert c.board_class == "edge" and c.confidence > 0.6
    assert any(e.what == "footprints" and "M.2" in e.value for e in c.evidence)
    assert any(e.what == "PCIe" and "assumed" in e.value for e in c.evidence)


def _fp(ref, name, value="", pads=1):
    return Footprint(
        ref,
        value,
        name,
        "F.Cu",
        0,
        0,
        pads=tuple(Pad(str(i), 0, "smd", "circle", 0, 0, 0.3, 0.3) for i in range(pads)),
    )


def _layers(n, material, t_plane=0.035):
    spec = []
    for i in range(n):
        spec.append(cu(t_plane))
        if i < n - 1:
            spec.append(diel(f"d{i + 1}", material, 3.4, 0.002))
    return stackup(*spec)


def test_hgx_like_board_is_training():
    nets = ["GND", "VDD_CORE"] + [
        f"NVL4_GPU{g}_TX{i}_{p}" for g in range(8) for i in range(12) for p in "PN"
    ]
    b = make_board(
        26,
        nets,
        [(n, 3, (1, 1), (2, 1)) for n in nets[2:]],
        [("GND", 1, rect(0, 0, 500, 450)), ("VDD_CORE", 2, rect(0, 0, 500, 450))],
        _layers(26, "Megtron 7", 0.07),
        size=(500, 450),
        footprints=[_fp(f"U{i}", "Package_BGA:BGA-5000", "GH100", 5000) for i in range(8)]
        + [_fp("U20", "NVSwitch_BGA", "NVSwitch")],
    )
    c = _classify(b)
    assert c.board_class == "training" and c.confidence > 0.6, c.scores
    assert {e.what for e in c.evidence} >= {
        "NVLink nets",
        "NVSwitch parts",
        "copper layers",
        "board size",
        "laminate",
        "plane copper",
    }


def test_pcie_card_is_inference():
    nets = ["GND", "+12V"] + [
        f"PCIE5_{d}{i}_{p}" for d in ("TX", "RX") for i in range(16) for p in "PN"
    ]
    b = make_board(
        14,
        nets,
        [(n, 3, (1, 1), (2, 1)) for n in nets[2:]],
        [("GND", 1, rect(0, 0, 312, 111))],
        _layers(14, "Megtron 6"),
        size=(312, 111),
        footprints=[_fp("J1", "Connector_PCBEdge:BUS_PCIexpress_x16")],
    )
    c = _classify(b)
    assert c.board_class == "inference", c.scores
    assert any(e.what == "PCIe" and e.value == "Gen5 x16" for e in c.evidence)


def test_ranges_overlap_no_hard_cut():
    # a 12-layer 150 mm board with nothing else: between edge and inference, never certain
    c = _classify(make_board(12, size=(150, 150)))
    assert c.board_class in ("edge", "inference") and c.confidence < 0.7
    # a 22-layer board without NVLink is not automatically training either
    c2 = _classify(make_board(22, size=(300, 111)))
    assert c2.scores["inference"] > 0 and c2.scores["training"] > 0


def test_override_keeps_evidence_and_says_who():
    auto = _classify(make_board(4, size=(60, 60)))
    o = override(auto, "training", "cli")
    assert (o.board_class, o.source, o.confidence) == ("training", "cli", 1.0)
    assert o.evidence[1:] == auto.evidence and "the classifier said edge" in o.evidence[0].note
    assert explain(o).startswith("training (set by --class")
    assert explain(auto).startswith("edge (classified, confidence")


# --- boards that are no accelerator board at all (issue 27: layer_count false alarms) ---------
CLASSIFY_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "classify"


def test_two_layer_hobby_board_is_general_with_its_evidence():
    """A 2-layer USB 2.0 gadget: fewer layers than any class, no fast interface, no module or
    memory footprint -> ``general``; the evidence says each of the three facts."""
    c = _classify(read_board(str(CLASSIFY_FIXTURES / "hobby_2layer.kicad_pcb")))
    assert c.board_class == GENERAL and c.source == "auto"
    first = c.evidence[0]
    assert first.what == NOT_ACCELERATOR
    assert "2 copper layers" in first.value and "only usb2" in first.value
    assert "[nextpcb2026]" in first.source and "max_stub_mm" in first.source
    assert explain(c).startswith("general: not an accelerator board (classified): 2 copper layers")
    assert set(c.scores) == {"training", "inference", "edge"}  # the votes are kept


def test_four_layer_carrier_with_pcie_and_mipi_is_edge():
    c = _classify(read_board(str(CLASSIFY_FIXTURES / "edge_carrier_4layer.kicad_pcb")))
    assert c.board_class == "edge"
    assert not any(e.what == NOT_ACCELERATOR for e in c.evidence)


@pytest.mark.parametrize(
    "what",
    ["pcie", "m2", "bga"],
)
def test_one_piece_of_accelerator_evidence_keeps_a_two_layer_board_in_a_class(what):
    """Any one fact an accelerator board has (a fast lane, a module connector, a BGA) keeps a
    2-layer board in the classes: ``general`` needs all of them absent."""
    board = read_board(str(CLASSIFY_FIXTURES / "hobby_2layer.kicad_pcb"))
    if what == "pcie":
        nets = list(board.nets)
        nets[nets.index("/USB_D+")] = "/PCIE_TX0_P"
        nets[nets.index("/USB_D-")] = "/PCIE_TX0_N"
        board = dataclasses.replace(board, nets=type(board.nets)(nets))
    else:
        fp = _fp("U9", "Module:M.2_Key_M" if what == "m2" else "Package_BGA:BGA-256", pads=4)
        board = dataclasses.replace(board, footprints=(*board.footprints, fp))
    assert _classify(board).board_class in ("edge", "inference")


def test_general_runs_only_the_rules_every_class_shares():
    """No class-specific rule (layer count, Tg, copper weight, PDN target, fab class) runs on a
    general board; the interface rules do; ``--class`` and the config's ``class:`` still decide."""
    hobby = str(CLASSIFY_FIXTURES / "hobby_2layer.kicad_pcb")
    res = check(hobby, config={})
    ids = {r.rule.id for r in res.rules}
    assert res.classification.board_class == GENERAL
    assert not any(i.startswith(("edge.", "inference.", "training.")) for i in ids)
    for kind in ("layer_count", "tg", "copper_weight", "pdn_impedance", "drill_aspect_ratio"):
        assert f"general.{kind}" not in ids
    assert "general.impedance.usb2" in ids and "general.via_stub.pcie4" in ids
    assert res.verdict() == "pass"
    forced = check(hobby, config={}, board_class="edge")
    assert forced.classification.source == "cli"
    assert "classifier said general" in forced.classification.evidence[0].note
    assert any(
        f.rule == "edge.layer_count" and f.status.value == "violation" for f in forced.findings
    )
    carrier = str(CLASSIFY_FIXTURES / "edge_carrier_4layer.kicad_pcb")
    declared = check(carrier, config={"class": "general"})
    assert declared.classification.board_class == GENERAL
    assert declared.classification.source == "config"


def test_general_pack_is_the_shared_rules_of_the_class_packs():
    specific, shared = class_specific(LIB.packs)
    assert {"layer_count", "tg", "copper_weight", "pdn_impedance", "via_stub.pcie5"} <= specific
    gen = LIB.packs[GENERAL]
    assert [r.id for r in gen.rules] == [r.id for r in shared]
    edge = {r.id[len("edge.") :]: r for r in LIB.packs["edge"].rules}
    for r in gen.rules:
        suffix = r.id[len("general.") :]
        assert suffix not in specific
        assert (r.params, r.severity) == (edge[suffix].params, edge[suffix].severity)
