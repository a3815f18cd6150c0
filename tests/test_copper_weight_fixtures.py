"""copper_weight on readable fixture boards (fixtures/checks/copper_weight/): the class's copper
weight is a typical power-plane value, not a requirement (issue 27 §6).  A GND plane of 18 µm
failed every real board (vme-wren, the Thor carrier, a CM5 carrier, a DDR5 coupon)."""

from __future__ import annotations

import pytest
import yaml
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from conftest import FIXTURES

HERE = FIXTURES / "checks" / "copper_weight"
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_copper_weight_as_expected(name: str) -> None:
    res = check_board(read_board(str(HERE / name)), board_class="edge")
    got = [
        {"layer": f.layer, "net": f.net, "status": f.status.value, "severity": f.severity.value}
        for f in res.findings
        if f.check == "copper_weight"
    ]
    assert got == EXPECTED[name]["findings"]
