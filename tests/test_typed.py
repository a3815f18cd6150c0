"""The typed joins (issue 12 item 3): the config as frozen dataclasses, the model's enums, the
typed report extras.  Each test can fail: a field read from the wrong key, a key dropped on the
way, a mutable section, an enum that stops comparing equal to its text."""

from __future__ import annotations

import dataclasses
import json

import pytest
from accel_drc.config import (
    BackdrillSpec,
    FaceRoughness,
    LossConfig,
    MaterialOverride,
    ProjectConfig,
    RailSpec,
    Waiver,
    as_config,
)
from accel_drc.extras import ViaStubSeries
from accel_drc.model import Pad, PadShape, PadType, StackupKind, StackupLayer
from accel_drc.report.json_report import fast_dumps

DATA = {
    "class": "training",
    "signals": {"pcie5": ["PCIE_.*"]},
    "stackup": {
        "foil": {"default": "VLP"},
        "materials": {"dielectric 1": {"material": "Megtron 6", "tg_c": 185}},
        "roughness": {"In1.Cu": {"rz_top_um": 4.4, "rz_bottom_um": 3}},
        "conductivity_s_per_m": 5.8e7,
        "via_plating_um": 25,
        "temperature_c": 85,
    },
    "rules": {"packs": ["x.yaml"], "training.tg": {"severity": "info", "params": {"a": 1}}},
    "waivers": [{"rule": "a.*", "reason": "reviewed", "expires": "2027-01-02", "net": "N"}],
    "backdrill": [{"match": {"signal": "pcie5", "net": "PCIE_.*"}, "side": "Top"}],
    "rails": [
        {
            "name": "VCORE",
            "nets": ["VCORE"],
            "role": "core",
            "voltage": 0.8,
            "vrm": {"r_ohm": 2e-4, "l_h": 2e-10},
            "sources": ["U9"],
            "loads": {"U1": 300},
            "return_nets": ["GND"],
            "ir_drop_max_pct": 2,
        }
    ],
    "capacitors": {"mounting_esl_h": 3e-10, "parts": {"C1": {"esl_h": 4e-10}}},
    "report": {"dir": "out", "marker_layer": "Cmts.User"},
    "loss": {"budgets_db": {"nvlink4": 20}, "extra_db": {"pcie5": 1.5}},
}


def test_every_section_is_typed_and_read_from_its_key() -> None:
    cfg = ProjectConfig.from_mapping(DATA)
    assert cfg.board_class == "training"
    assert [p.pattern for p in cfg.signals["pcie5"]] == ["PCIE_.*"]
    st = cfg.stackup
    assert st.foil == {"default": "VLP"}
    assert st.materials["dielectric 1"] == MaterialOverride(material="Megtron 6", tg_c=185.0)
    assert (st.conductivity_s_per_m, st.via_plating_um, st.temperature_c) == (5.8e7, 25.0, 85.0)
    assert st.roughness["In1.Cu"] == FaceRoughness(rz_top_um=4.4, rz_bottom_um=3.0)
    assert cfg.loss == LossConfig(budgets_db={"nvlink4": 20.0}, extra_db={"pcie5": 1.5})
    assert cfg.rule_packs == ("x.yaml",)
    assert cfg.rules["training.tg"].severity == "info"
    assert cfg.rules["training.tg"].params == {"a": 1}
    assert cfg.waivers == (Waiver(rule="a.*", reason="reviewed", net="N", expires="2027-01-02"),)
    [bd] = cfg.backdrill
    assert (bd.side, bd.match.signal, bd.match.net, bd.match.net_class) == (
        "top",
        "pcie5",
        "PCIE_.*",
        None,
    )
    assert bd.match.items() == [("signal", "pcie5"), ("net", "PCIE_.*")]
    [rail] = cfg.rails
    assert (rail.name, rail.nets, rail.role, rail.voltage) == ("VCORE", ("VCORE",), "core", 0.8)
    assert rail.vrm is not None and (rail.vrm.r_ohm, rail.vrm.l_h) == (2e-4, 2e-10)
    assert rail.sources == ("U9",) and rail.loads == {"U1": 300.0} and rail.declares_ir_drop
    assert not RailSpec(name="V", nets=("V",)).declares_ir_drop
    assert (rail.return_nets, rail.ir_drop_max_pct) == (("GND",), 2.0)
    assert cfg.capacitors.mounting_esl_h == 3e-10 and cfg.capacitors.parts["C1"]["esl_h"] == 4e-10
    assert (cfg.report.dir, cfg.report.marker_layer) == ("out", "Cmts.User")


def test_a_key_the_dataclass_does_not_name_is_carried_not_dropped() -> None:
    # a key another change adds to the schema before its field exists here
    cfg = ProjectConfig.from_mapping(
        {"stackup": {"etch_factor": 0.6}, "rails": [{"name": "V", "nets": ["V"], "new": 1}]}
    )
    assert cfg.stackup.extra == {"etch_factor": 0.6}
    assert cfg.rails[0].extra == {"new": 1}
    assert RailSpec.of({"nets": "VDD"}, 2) == RailSpec(name="rail 3", nets=("VDD",))


def test_sections_are_frozen() -> None:
    cfg = ProjectConfig.from_mapping(DATA)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.rails[0].voltage = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        cfg.stackup.materials["x"] = MaterialOverride()  # type: ignore[index]
    with pytest.raises(TypeError):
        cfg.rails[0].extra["k"] = 1  # type: ignore[index]


def test_as_config_is_the_identity_on_a_config() -> None:
    cfg = ProjectConfig.from_mapping(DATA)
    assert as_config(cfg) is cfg
    assert as_config(None) == ProjectConfig()
    assert as_config({"backdrill": DATA["backdrill"]}).backdrill == (
        BackdrillSpec.of(DATA["backdrill"][0]),
    )


def test_enums_are_their_text() -> None:
    pad = Pad("1", 0, "thru_hole", "roundrect", 0.0, 0.0, 1.0, 1.0)
    assert pad.type is PadType.THRU_HOLE and pad.shape is PadShape.ROUNDRECT
    assert (
        pad.type == "thru_hole" and f"{pad.shape}" == "roundrect" and str(pad.type) == "thru_hole"
    )
    assert json.dumps({"t": pad.type, "s": pad.shape}) == '{"t": "thru_hole", "s": "roundrect"}'
    odd = Pad("1", 0, "nonsense", "hexagon", 0.0, 0.0, 1.0, 1.0)
    assert (odd.type, odd.shape) == (PadType.UNKNOWN, PadShape.UNKNOWN)
    core = StackupLayer("dielectric 1", "core")
    assert core.kind is StackupKind.CORE and core.is_dielectric and not core.is_copper
    with pytest.raises(ValueError):
        StackupLayer("x", "plasma")


def test_via_stub_series_in_the_json_report() -> None:
    s = ViaStubSeries(stubs_mm=(0.1, 0.25), limit_mm=0.2, count=3, unknown=1)
    doc = json.loads(fast_dumps({"extras": {"via_stubs": {"pcie5": s}}}))
    assert doc["extras"]["via_stubs"]["pcie5"]["stubs_mm"] == [0.1, 0.25]
    assert doc["extras"]["via_stubs"]["pcie5"]["unknown"] == 1
