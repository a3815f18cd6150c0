"""The training pack on a real board: the m2-oculink-adapter fixture with its PCIe x4 pairs
declared as NVLink 4 (fixtures/configs/m2-oculink-nvlink-training.yaml).

Every expected value is read straight from the .kicad_pcb text with regular expressions here,
independently of the reader, so the findings must carry the board's real numbers.
"""

from __future__ import annotations

import re

import pytest
from accel_drc.config import load_config
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.results import Status
from conftest import FIXTURE_BOARDS, FIXTURES

BOARD = FIXTURE_BOARDS["m2-oculink-adapter"]
CONFIG = FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml"
NV = re.compile(r"/PCIe_\{x4\}\.(TX|RX)\d[+-]")


@pytest.fixture(scope="module")
def raw():
    text = BOARD.read_text()
    copper = re.findall(r'\(\d+\s+"([^"]+\.Cu)"\s+(?:signal|power|mixed|jumper)', text)
    stack = {}
    for m in re.finditer(
        r'\(layer "([^"]+)"\s*\(type "([^"]+)"\)((?:\s*\((?:thickness|material|epsilon_r|loss_tangent|color)[^)]*\))*)',
        text,
    ):
        props = dict(
            re.findall(
                r'\((thickness|material|epsilon_r|loss_tangent)\s+"?([^")]+)"?\)', m.group(3)
            )
        )
        stack[m.group(1)] = {"type": m.group(2), **props}
    nets = {int(i): n for i, n in re.findall(r'^\t\(net (\d+) "([^"]*)"\)', text, re.M)}
    routed = set()  # (pair name, layer) of the NVLink-declared nets
    for blk in re.findall(r"^\t\((?:segment|arc)\n(.*?)^\t\)", text, re.M | re.S):
        layer = re.search(r'\(layer "([^"]+)"\)', blk).group(1)
        net = nets[int(re.search(r"\(net (\d+)\)", blk).group(1))]
        if NV.fullmatch(net):
            routed.add((net[:-1], layer))
    return {"copper": copper, "stack": stack, "nets": nets, "routed": routed}


@pytest.fixture(scope="module")
def result():
    lib = load_library()
    board = read_board(str(BOARD))
    return check_board(
        board, load_config(str(CONFIG), str(BOARD), lib), board_file=str(BOARD), library=lib
    )


def by_check(result, check):
    return [f for f in result.findings if f.check == check]


def test_classification_is_the_config_override(result):
    c = result.classification
    assert (c.board_class, c.source) == ("training", "config")
    assert "the classifier said edge" in c.evidence[0].note


def test_layer_count_carries_the_real_count(result, raw):
    assert len(raw["copper"]) == 4
    [f] = by_check(result, "layer_count")
    assert (f.measured, f.limit, f.status) == (len(raw["copper"]), 20, Status.VIOLATION)
    assert f.evidence["copper_layers"] == raw["copper"]


def test_tg_names_each_real_dielectric(result, raw):
    diel = {n: p for n, p in raw["stack"].items() if p["type"] in ("core", "prepreg")}
    assert {p["material"] for p in diel.values()} == {"7628", "FR4"}
    fs = by_check(result, "tg")
    # 7628 glass and "FR4" are generic FR-4 (Tg 130-170 by grade): the lowest grade is below
    # training's 170, so each one cannot be verified until the grade is named
    assert sorted(f.layer for f in fs) == sorted(diel)
    for f in fs:
        assert (f.measured, f.limit, f.status) == (130.0, 170.0, Status.CANNOT_VERIFY)
        assert f.evidence["dielectric"]["material"] == diel[f.layer]["material"]


def test_copper_weight_leaves_the_ground_planes_alone(result, raw):
    # In1/In2 are GND planes of 35 µm: not judged against the power-plane weight (issue 27 §6)
    fs = by_check(result, "copper_weight")
    assert fs == []  # ground planes only: nothing the rule judges


def test_laminate_df_one_finding_per_pair_and_layer(result, raw):
    fs = by_check(result, "laminate_df")
    assert raw["routed"], "the fixture routes its PCIe pairs"
    assert {(f.net, f.layer) for f in fs} == raw["routed"]
    assert len(fs) == len(raw["routed"])
    stack = raw["stack"]
    for f in fs:
        # outer layers: microstrip over the prepreg next to them ("7628", loss tangent 0 in the
        # file, i.e. undeclared, so the FR-4 library value 0.02 is used)
        name = "dielectric 1" if f.layer == "F.Cu" else "dielectric 3"
        assert f.evidence["dielectric"] == name and stack[name]["material"] == "7628"
        assert float(stack[name]["loss_tangent"]) == 0.0
        assert (f.measured, f.limit, f.status) == (0.02, 0.003, Status.VIOLATION)
        assert f.evidence["dielectrics"][0]["df_from"] == "library"
        assert f.pos is not None and f.items


def test_foil_declared_rtf_and_undeclared(result, raw):
    fs = {f.layer: f for f in by_check(result, "foil")}
    layers = {layer for _, layer in raw["routed"]}
    assert set(fs) == layers == {"F.Cu", "B.Cu"}
    assert (fs["F.Cu"].status, fs["F.Cu"].measured, fs["F.Cu"].limit) == (
        Status.VIOLATION,
        "RTF",
        "VLP",
    )
    assert fs["B.Cu"].status == Status.CANNOT_VERIFY
    assert (
        fs["B.Cu"]
        .evidence["declare"]
        .startswith(
            "declare the foil grade of B.Cu (the one your fab quotes) in accel-drc.yaml "
            "(stackup: foil: {B.Cu: <grade>}; VLP or smoother passes)"
        )
    )
    # a declared RTF on a VLP layer is a fact, with the grades that would pass
    assert fs["F.Cu"].evidence["basis"]["foil"] == "declared"
    assert "VLP (Rz" in fs["F.Cu"].evidence["remedy"]
    assert fs["F.Cu"].evidence["net_count"] == sum(
        1 for n in raw["nets"].values() if NV.fullmatch(n) and (n[:-1], "F.Cu") in raw["routed"]
    )


def test_stackup_extras_rows(result, raw):
    rows = {r["name"]: r for r in result.extras["stackup"]}
    assert rows["F.Cu"]["foil"] == "RTF" and rows["B.Cu"]["foil"] is None
    assert rows["F.Cu"]["signals"] == ["nvlink4"] and rows["In1.Cu"]["plane"] is True
    assert rows["dielectric 1"]["loss_tangent"] == 0.02 and rows["dielectric 1"]["tg_c"] == 130.0
    assert rows["dielectric 2"]["thickness_mm"] == float(raw["stack"]["dielectric 2"]["thickness"])
    assert set(rows["In1.Cu"]) >= {
        "name",
        "kind",
        "thickness_mm",
        "material",
        "epsilon_r",
        "loss_tangent",
        "tg_c",
        "foil",
        "copper_oz",
        "signals",
    }


def test_exit_code_and_no_crashed_checks(result):
    from accel_drc.pipeline import exit_code

    assert exit_code(result) == 5
    assert not [f for f in result.findings if "internal error" in f.message]


def test_default_run_reports_the_assumed_pcie_generation():
    lib = load_library()
    res = check_board(read_board(str(BOARD)), None, board_file=str(BOARD), library=lib)
    [f] = [f for f in res.findings if f.check == "signal_type"]
    assert f.rule == "signals.assumed_type.pcie4" and f.status == Status.CANNOT_VERIFY
    assert f.evidence["net_count"] == 16  # TX0-3, RX0-3, both polarities; the REFCLK is not a lane
    assert "assumed Gen4" in f.message
