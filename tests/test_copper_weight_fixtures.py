"""copper_weight on readable fixture boards (fixtures/checks/copper_weight/): the class's copper
weight is a typical power-plane value, not a requirement (issue 27 §6).  A GND plane of 18 µm
failed every real board (vme-wren, the Thor carrier, a CM5 carrier, a DDR5 coupon).  The boards'
expected findings (``expected.yaml``) are run by tests/test_check_fixtures.py with every kind's."""

from __future__ import annotations

import pytest
from accel_drc.analysis.railnames import is_ground, is_power


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
