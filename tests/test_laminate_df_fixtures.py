"""laminate_df on readable fixture boards (fixtures/checks/laminate_df/): the Df limit stands for
the channel's loss budget, so a known budget decides; a typical (unconfirmed) limit with no budget
is a conditional, never a FAIL (issue 27: 6 FAILs on the Thor carrier's SFP28 lanes)."""

from __future__ import annotations

import pytest
import yaml
from accel_drc.api import check
from conftest import FIXTURES

HERE = FIXTURES / "checks" / "laminate_df"
CASES = yaml.safe_load((HERE / "expected.yaml").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['board']}-{sorted(c['config'])}")
def test_laminate_df_as_expected(case) -> None:
    res = check(str(HERE / case["board"]), config=case["config"], board_class="edge")
    got = [f for f in res.findings if f.check == "laminate_df"]
    assert [{"status": f.status.value, "net": f.net, "layer": f.layer} for f in got] == [
        {k: v for k, v in e.items() if k in ("status", "net", "layer")} for e in case["findings"]
    ]
    for f, e in zip(got, case["findings"]):
        if "rests_on" in e:
            assert sorted(f.evidence["conditional"]["rests_on"]) == e["rests_on"], f.message
        if "robust_to" in e:
            assert f.evidence["robust_to"] == e["robust_to"], f.message
    if case["config"].get("loss") and got and case["board"].startswith("sfp28"):
        # a budget weighs the channel: the finding says what it spends against what
        assert "board budget" in got[0].message and " dB at 12.89 GHz over 300 mm" in got[0].message
    if case["board"].startswith("sfp28") and not case["config"]:
        assert "typical value [U]" in got[0].message and "20 mm route" in got[0].message
        assert "loss: budgets_db: {eth25g:" in got[0].evidence["declare"]
