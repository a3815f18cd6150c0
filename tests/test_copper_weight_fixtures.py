"""copper_weight on readable fixture boards (fixtures/checks/copper_weight/): the class's copper
weight is a typical power-plane value, not a requirement (issue 27 §6).  A GND plane of 18 µm
failed every real board (vme-wren, the Thor carrier, a CM5 carrier, a DDR5 coupon)."""

from __future__ import annotations

import pytest
import yaml
from accel_drc.analysis.railnames import is_ground, is_power
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from conftest import FIXTURES

HERE = FIXTURES / "checks" / "copper_weight"
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_copper_weight_as_expected(name: str) -> None:
    case = EXPECTED[name]
    if "config" in case:
        from accel_drc.api import check

        res = check(str(HERE / case["board"]), config=case["config"], board_class="edge")
    else:
        res = check_board(read_board(str(HERE / name)), board_class="edge")
    got = [
        {"layer": f.layer, "net": f.net, "status": f.status.value, "severity": f.severity.value}
        for f in res.findings
        if f.check == "copper_weight"
    ]
    assert got == EXPECTED[name]["findings"]


@pytest.mark.parametrize(
    "name", ["VDD_0V8", "P0V85", "MGT_0V9", "/Power Supply/VREF_0V45", "+0V8", "VCC_0V75"]
)
def test_a_0vN_supply_is_power_not_ground(name: str) -> None:
    """``0V8`` is 0.8 V: analysis/nets.py took ``VDD_0V8`` for a "0V" ground; the one owner of
    the naming (analysis/railnames.py) says supply."""
    assert not is_ground(name) and is_power(name)


@pytest.mark.parametrize(
    "name", ["GND", "/AGND", "PGND", "VSS", "0V", "/sheet/DGND_2", "GND_SENSE"]
)
def test_grounds_stay_ground(name: str) -> None:
    assert is_ground(name) and not is_power(name)
