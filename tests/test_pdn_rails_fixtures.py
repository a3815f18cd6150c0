"""Rail discovery on a readable fixture board (fixtures/checks/pdn_rails/) and on the Jetson AGX
Thor carrier: a rail is what the circuit says (issue 27 §5).  On the Thor carrier 13 of 22
"rails" were buck switch nodes or one side of a 1 mΩ shunt or a 0 Ω link, and the module's
16 V, 9.5 A input SYS_VIN_HV was missed."""

from __future__ import annotations

import pytest
import yaml
from accel_drc.analysis.pdn import find_rails
from accel_drc.analysis.railnames import is_power, resistance_ohm
from accel_drc.readers import read_board
from conftest import FIXTURES, need
from kicad10 import DEMO_DIR10

HERE = FIXTURES / "checks" / "pdn_rails"
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())
THOR = DEMO_DIR10 / "jetson-agx-thor-baseboard" / "jetson-agx-thor-baseboard.kicad_pcb"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rails_as_expected(name: str) -> None:
    rails = find_rails(read_board(str(HERE / name)))
    want = EXPECTED[name]
    assert {r.name: sorted(r.nets) for r in rails} == {
        k: sorted(v) for k, v in want["rails"].items()
    }
    nets = {n for r in rails for n in r.nets}
    assert not nets & set(want["not_rails"])


def test_declaring_one_rail_keeps_the_others_listed() -> None:
    board = read_board(str(HERE / "buck_shunt_input.kicad_pcb"))
    cfg = {"rails": [{"name": "IN", "nets": ["SYS_VIN_HV"], "voltage": 16}]}
    rails = {r.name: r for r in find_rails(board, cfg)}
    assert rails["IN"].source == "config"
    assert rails["+5V"].source == "detected"  # not declared, still listed
    assert "SYS_VIN_HV" not in rails


@pytest.mark.parametrize(
    ("value", "ohm"),
    [("R_0R001_0805", 0.001), ("R_0R_22.4A_0603", 0.0), ("0R", 0.0), ("1m", 0.001),
     ("4m7", 0.0047), ("10 mΩ", 0.01), ("R005", 0.005), ("2k2", 2200.0), ("R_27R_0402", 27.0),
     ("100nF", None), ("DNP", None)],
)  # fmt: skip
def test_resistance_from_the_value_field(value: str, ohm: float | None) -> None:
    assert resistance_ohm(value) == (None if ohm is None else pytest.approx(ohm))


@pytest.mark.parametrize("name", ["SYS_VIN_HV", "VSYS", "/PWR/DC_IN", "VBAT", "USBC0_VBUS"])
def test_input_rails_are_power_named(name: str) -> None:
    assert is_power(name)


def test_thor_rails() -> None:
    need(THOR.exists(), f"KiCad 10 demos not installed ({THOR})")
    rails = find_rails(read_board(str(THOR)))
    names = {r.name for r in rails}
    nets = {n for r in rails for n in r.nets}
    assert not [n for n in nets if n.endswith("_SW")]  # no buck switch node is a rail
    assert "SYS_VIN_HV" in names
    by = {r.name: set(r.nets) for r in rails}
    # the 1 mΩ shunts: each regulator output is one rail with the net it feeds
    assert {"+5V", "/DCDC/5V_OUT"} <= by["+5V"] and {"+20V", "/DCDC/20V_OUT"} <= by["+20V"]
    assert "/DCDC/16V_OUT" in by["SYS_VIN_HV"]


def test_ir_drop_no_copper_path_names_the_pads_and_where() -> None:
    """A load whose pads no copper joins to a source: the IR-drop error names them, where they
    are, and that the board's connectivity (the one open_channel uses) does not join them."""
    from accel_drc.analysis import Analysis

    board = read_board(str(HERE / "buck_shunt_input.kicad_pcb"))
    rail = {"name": "X", "nets": ["SYS_VIN_HV", r"\+5V"], "voltage": 5.0, "sources": ["C1"],
            "loads": {"C3": 1.0}}  # fmt: skip
    [r] = Analysis(board, {"rails": [rail]}).irdrop
    assert r.error is not None
    assert "C3.1 (24.00, 15.00)" in r.error and "does not join them to any source (C1)" in r.error


def test_a_rail_of_several_nets_takes_the_voltage_its_net_names_agree_on(tmp_path):
    """buck_shunt_input with +5V renamed VDD_MAIN: the rail's name states no voltage, the
    shunt's other side (/DCDC/5V_OUT) does: a 5 V rail (on the Thor carrier, SYS_VIN_HV and
    /DCDC/16V_OUT: 16 V; main left it <V>, and a filled-in 1 V made it the "core" rail)."""
    from accel_drc.analysis import Analysis

    src = HERE / "buck_shunt_input.kicad_pcb"
    board_file = tmp_path / "renamed.kicad_pcb"
    board_file.write_text(src.read_text().replace('"+5V"', '"VDD_MAIN"'))
    rails = {r.name: r for r in Analysis(read_board(str(board_file))).rails}
    assert rails["VDD_MAIN"].nets == ("/DCDC/5V_OUT", "VDD_MAIN")
    assert rails["VDD_MAIN"].voltage == 5.0
    assert rails["SYS_VIN_HV"].voltage is None  # one net, no voltage in its name
