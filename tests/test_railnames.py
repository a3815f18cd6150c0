"""One owner for "is this net ground / a supply / at what voltage" (issue 27):
``analysis/railnames.py``.  Before it, ``analysis/nets.py`` (planes, return-path reference,
AC-coupling walk, copper_weight) and ``analysis/railnames.py`` (the PDN's rails) had patterns of
their own and disagreed on 101 of the 10,562 net names of the corpus and the fixture boards.
The names below are taken from those boards (the board in the comment); each was judged wrong
by at least one of the two before."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from accel_drc.analysis import railnames
from accel_drc.analysis.railnames import is_ground, is_power, net_kind, voltage_from_name

ENGINE = Path(railnames.__file__).resolve().parents[1]

SUPPLIES = [
    "+3.3VA",  # KiCad power symbol with a voltage and a suffix (nets.py: not a supply)
    "/12V_IN",
    "/12Vext",
    "/5V_0",
    "/Battery_holder/VBAT+",
    "/CSI/CSIA_I2C_VCC",  # a pull-up supply (railnames.py: not a supply: VCC not first)
    "/Channel 1/CH1_AVDD33",
    "/Debugger/nRF52_VDD",
    "/Management/MCU_VDDA",
    "/Management/RGMII PHY/A1V2",  # a PHY's analog 1.2 V (nets.py: not a supply)
    "/QSGMII PHY/QSGMII Power/A1V0_VSC_SERDES1",  # (neither saw it)
    "/SFP0/SFP_VCCT",  # the SFP module's transmitter supply
    "/PoE/VO5V",
    "/Expansion connector/+V_{ADJ}",
    "/xilinx/+3,3V_OUT",
    "/DCDC/12V_OUT",
    "M12V_VME",  # -12 V on a VME backplane
    "FLASH_PWR",
    "VBUS_USB2.0",
    "HDMIRX_DDC5V",  # HDMI pin 18, +5 V
    "Net-(IC3-VDD)",  # an unnamed net named after a VDD pin (behind a ferrite)
    "P3V3_CLK",  # vme-wren: the clock section's 3.3 V (the supply first, then what it feeds)
    "/EEPROM/VDD_LED",
]
NOT_SUPPLIES = [
    "/CM5/PCIE_PI.PWR_EN",  # enables (nets.py: a supply)
    "SD_PWR_ON",
    "/DCDC/CARRIER_PWR_ON",
    "/VBUS_EN",
    "/USB Debug, PD/USBC0_5V_PEN",  # a PD controller's power-path enable (PP_EXT2)
    "PCIE_PWRGD",  # power-good flags
    "/power-supply-3/5VPG",
    "/Power Supply/1V0_PGOOD",
    "/DCDC/~{VDDIN_PWR_BAD}",
    "/DCDC/12V_FB",  # a converter's pins (railnames.py: a supply)
    "/DCDC/12V_BOOT",
    "/DCDC/12V_PHASE",
    "/DCDC/5V_{AON}_MODE1",
    "/Power Supply/1V2_SENSE",
    "Net-(U1-VBUS_SENSE)",
    "/VCC_SENSE-ERROR*",
    "/USB Hub/USBC3_VBUS_MON",
    "/Recovery USB/USBC2_VBUS_DET",
    "/CSI/CSIA_3V3_ISET",  # a current-set resistor pin
    "/SoM_IO/I2C0_SCL_1V8",  # signals in a supply's voltage domain
    "/Management/ETH12_LED0_3V3",
    "/PS2_CLK5V",
    "/PS2_DATA5V",
    "CLK27_1v8",
    "/CM5/PI_nLED_PWR",
    "/QSGMII PHY/VSC_FAST_STATUS_1V8",
    "VPP-MCLR",  # a PIC's programming-voltage / reset pin
    "/VPP{slash}MCLR",
    "Net-(U6-+)",  # an op-amp's + input
    "ADC_VINP",  # an ADC input, not VIN
    "VAUXP0",  # an XADC analog input, not VAUX
    "/PCIE_TX0_P",
    "DIAGNOSTIC",
]
GROUNDS = ["GND", "/AGND", "PGND", "VSSA", "0V", "GND_SENSE", "Net-(U2-AGND)"]
NOT_GROUNDS = ["unconnected-(BUS1-GND-Pad10)", "VDD_0V8", "BACKGROUND_LED", "DIAGNOSTIC"]


@pytest.mark.parametrize("name", SUPPLIES)
def test_supplies(name: str) -> None:
    assert net_kind(name) == "power" and is_power(name) and not is_ground(name)


@pytest.mark.parametrize("name", NOT_SUPPLIES)
def test_pins_of_supplies_and_signals_are_no_supply(name: str) -> None:
    assert not is_power(name)


@pytest.mark.parametrize("name", GROUNDS)
def test_grounds(name: str) -> None:
    assert net_kind(name) == "ground" and not is_power(name)


@pytest.mark.parametrize("name", NOT_GROUNDS)
def test_not_grounds(name: str) -> None:
    assert not is_ground(name)


@pytest.mark.parametrize(
    ("name", "volts"),
    [("+3V3", 3.3), ("P0V8", 0.8), ("VCC_1V2", 1.2), ("+12V", 12.0), ("V1P8", 1.8),
     ("/xilinx/+3,3V_OUT", 3.3), ("+3.3VA", 3.3), ("12Vext", 12.0), ("A1V8", 1.8),
     ("VDD_0V85", 0.85), ("Net-(IC30-1V8)", 1.8), ("VCC", None), ("GND", None)],
)  # fmt: skip
def test_voltage_from_name(name: str, volts: float | None) -> None:
    assert voltage_from_name(name) == (None if volts is None else pytest.approx(volts))


def test_no_other_module_names_supplies() -> None:
    """Every module asks railnames: none defines its own is_ground / is_power / voltage parser
    (nets.py had ``GROUND_RE``/``POWER_RE``/``is_power_net``, pdn.py ``voltage_from_name``)."""
    own = {"is_ground", "is_power", "is_ground_net", "is_power_net", "voltage_from_name"}
    owners = []
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in own:
                owners.append(f"{path.relative_to(ENGINE)}:{node.name}")
    assert sorted(owners) == [
        "analysis/railnames.py:is_ground",
        "analysis/railnames.py:is_power",
        "analysis/railnames.py:voltage_from_name",
    ]
