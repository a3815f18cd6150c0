"""The via_stub check on a hand-built board with a stand-in analysis (the exact stubs are worked
out in test_via_stub_analysis.py)."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis import via_stubs as vs
from accel_drc.analysis.signals import SignalAssignment
from accel_drc.checks import CheckContext
from accel_drc.checks.via_stub import check_via_stub, via_stub_extra
from accel_drc.model import Backdrill, Stackup
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status
from conftest import FIXTURE_BOARDS
from test_via_stub_analysis import make_board

LIBRARY = load_library()


class StandIn(Analysis):
    """A real :class:`Analysis` whose signal facts are given: net 1 is PCIe Gen5 (declared, as
    by the config) with the given Nyquist frequency, and the via table is that of every net."""

    def __init__(self, board, config=None, nyquist=16e9):  # noqa: ANN001
        super().__init__(board, config or {}, LIBRARY)
        self._nyquist = nyquist

    @functools.cached_property
    def signal_types(self) -> dict[str, Any]:
        return {"pcie5": SimpleNamespace(id="pcie5", name="PCIe Gen5", nyquist_hz=self._nyquist)}

    @functools.cached_property
    def net_signal(self) -> dict[int, SignalAssignment]:
        return {1: SignalAssignment("pcie5", "config")}

    def nets_by_signal(self, sig: str) -> tuple[int, ...]:
        return (1,) if sig == "pcie5" else ()

    @functools.cached_property
    def via_stubs(self) -> vs.ViaStubs:
        return vs.compute(self.board, self.config)


def rule(**params) -> Rule:  # noqa: ANN003
    return Rule(
        id="inference.via_stub.pcie5",
        check="via_stub",
        severity=Severity.ERROR,
        params=params,
        why="stub resonance",
        source="[bogatin2015-stub] stub length rule",
        signal="pcie5",
    )


def board_three(backdrills=None, stackup=None):  # noqa: ANN001, ANN201
    # via 0 used F.Cu + In2 (stub 0.67); via 1 used F.Cu + B.Cu (stub 0); via 2 on net 3 (not pcie5)
    # via 3 on net 1 with no connection at all (not checked)
    return make_board(
        [
            (10, 10, 0, 5, 1, False),
            (20, 10, 0, 5, 1, False),
            (30, 10, 0, 5, 3, False),
            (40, 10, 0, 5, 1, False),
        ],
        [
            (10, 10, 12, 10, 0, 1),
            (10, 10, 12, 10, 2, 1),
            (20, 10, 22, 10, 0, 1),
            (20, 10, 22, 10, 5, 1),
            (30, 10, 32, 10, 0, 3),
        ],
        backdrills=backdrills,
        stackup=stackup,
    )


def run(board, r, config=None, nyquist=16e9):  # noqa: ANN001, ANN201
    a = StandIn(board, config, nyquist)
    return check_via_stub(CheckContext(board=board, analysis=a, board_class="inference"), r), a


def test_length_limit_one_finding_per_via() -> None:
    out, _ = run(
        board_three(), rule(max_stub_mm=0.25, min_fres_ratio=None, require_backdrill=False)
    )
    assert out.checked == 2
    assert len(out.findings) == 1
    f = out.findings[0]
    assert f.status == Status.VIOLATION and f.rule == "inference.via_stub.pcie5"
    assert f.measured == pytest.approx(0.67) and f.limit == 0.25 and f.unit == "mm"
    assert f.evidence["stub_mil"] == pytest.approx(0.67 / 0.0254, abs=0.01)
    assert f.evidence["connected"] == ["F.Cu", "In2.Cu"]
    assert f.layer == "In2.Cu" and f.pos == (10.0, 10.0) and f.net == "SIG"
    assert f.evidence["f_res_ratio"] == pytest.approx(
        299_792_458.0 / (4 * 0.67e-3 * np.sqrt(2.2 / 0.6)) / 16e9, abs=1e-3
    )
    assert "26.4 mil" in f.message


def test_ratio_limit_and_pass() -> None:
    # f_res of the 0.67 mm stub is 58.4 GHz = 3.65 × 16 GHz: under 10× fails, under 3× passes
    out, _ = run(board_three(), rule(max_stub_mm=None, min_fres_ratio=10, require_backdrill=False))
    assert len(out.findings) == 1 and out.findings[0].unit == "f_res/f_Nyquist"
    assert out.findings[0].measured == pytest.approx(3.651, abs=2e-3)
    out, _ = run(board_three(), rule(max_stub_mm=None, min_fres_ratio=3, require_backdrill=False))
    assert out.findings == [] and out.checked == 2


def test_require_backdrill_and_backdrilled() -> None:
    r = rule(max_stub_mm=0.25, min_fres_ratio=None, require_backdrill=True)
    out, _ = run(board_three(), r)
    assert sorted(f.rule for f in out.findings) == [
        "inference.via_stub.pcie5",
        "inference.via_stub.pcie5.backdrill",
    ]
    bd = {0: Backdrill(side="bottom", must_not_cut=2, residual_stub_mm=0.2)}
    out, a = run(board_three(bd), r)
    assert out.findings == []
    extra = via_stub_extra(a, [r])
    assert extra["pcie5"].stubs_mm == pytest.approx([0.2, 0.0])
    assert extra["pcie5"].limit_mm == 0.25 and extra["pcie5"].backdrilled == 1


def test_backdrill_cut_is_a_finding() -> None:
    bd = {0: Backdrill(side="bottom", must_not_cut=1, residual_stub_mm=0.2)}
    out, _ = run(
        board_three(bd), rule(max_stub_mm=0.25, min_fres_ratio=None, require_backdrill=True)
    )
    assert [f.rule for f in out.findings] == ["inference.via_stub.pcie5.backdrill_cut"]


def test_unknown_is_cannot_verify_once() -> None:
    out, _ = run(
        board_three(stackup=Stackup(())),
        rule(max_stub_mm=0.25, min_fres_ratio=None, require_backdrill=False),
    )
    assert len(out.findings) == 1
    f = out.findings[0]
    assert f.status == Status.CANNOT_VERIFY
    # via 1 uses both outer layers: its stub is 0 whatever the thicknesses, so only via 0 is unknown
    assert f.evidence["vias"] == 1 and "stack-up" in f.evidence["declare"]
    bd = {0: Backdrill(side="bottom", must_not_cut=2)}
    out, _ = run(
        board_three(bd), rule(max_stub_mm=0.25, min_fres_ratio=None, require_backdrill=False)
    )
    assert [f.status for f in out.findings] == [Status.CANNOT_VERIFY]
    assert "residual_stub_mm" in out.findings[0].evidence["declare"]


def test_ratio_fails_alone_reports_the_ratio_not_the_length() -> None:
    """A stub under the length limit whose resonance is too low: measured and limit state the
    ratio that failed (3.65 < 10), not a length that passed (0.67 < 1.2 mm)."""
    out, _ = run(board_three(), rule(max_stub_mm=1.2, min_fres_ratio=10, require_backdrill=False))
    (f,) = out.findings
    assert f.status == Status.VIOLATION and f.unit == "f_res/f_Nyquist"
    assert f.measured == pytest.approx(3.651, abs=2e-3) and f.limit == 10
    # both failing: the length is the headline, the ratio is in the message
    out, _ = run(board_three(), rule(max_stub_mm=0.25, min_fres_ratio=10, require_backdrill=False))
    (f,) = out.findings
    assert f.unit == "mm" and f.measured == pytest.approx(0.67) and "Nyquist" in f.message


def test_unknown_dielectric_constant_is_not_a_ratio_pass() -> None:
    """Thicknesses known, εr of no dielectric on record: the stub length is checked, but its
    resonance is unknown, so the ratio rule reports cannot verify instead of passing."""
    from dataclasses import replace

    from test_via_stub_analysis import stackup6

    st = stackup6()
    no_er = Stackup(
        tuple(
            replace(
                sl,
                epsilon_r=None,
                sublayers=tuple(replace(x, epsilon_r=None) for x in sl.sublayers),
            )
            for sl in st.layers
        )
    )
    out, _ = run(
        board_three(stackup=no_er),
        rule(max_stub_mm=1.2, min_fres_ratio=10, require_backdrill=False),
    )
    (f,) = out.findings
    assert f.status == Status.CANNOT_VERIFY and "εr" in f.evidence["declare"]
    assert f.evidence["vias"] == 1  # via 0's 0.67 mm stub; via 1 has none to resonate


def test_no_nyquist_is_cannot_verify() -> None:
    out, _ = run(
        board_three(),
        rule(max_stub_mm=None, min_fres_ratio=10, require_backdrill=False),
        nyquist=None,
    )
    assert [f.status for f in out.findings] == [Status.CANNOT_VERIFY]


# -------------------------------------------------------------------------------------------
# end to end through the pipeline, on the 8-layer real fixture
# -------------------------------------------------------------------------------------------

CROSSLINK = "crosslink-nx-video-converter"
DQ = r"/DDR3/DDR3_DQ\d+"


def _check(config: dict, board_class: str = "inference"):  # noqa: ANN202
    board = read_board(str(FIXTURE_BOARDS[CROSSLINK]))
    return check_board(board, config, board_class=board_class)


def _by_rule(result, prefix: str) -> dict:  # noqa: ANN001
    out: dict = {}
    for f in result.findings:
        if f.rule.startswith(prefix):
            out.setdefault(f.rule, []).append(f)
    return out


def test_pipeline_crosslink_dq_as_pcie5() -> None:
    """The 16 DQ vias of crosslink go F.Cu -> In2.Cu on through vias: each leaves the 1.141 mm
    barrel below In2 (worked out in test_via_stub_groundtruth).  Declared PCIe Gen5 on an
    inference board (limit 0.238 mm, f_res >= 10 × 16 GHz, backdrill required) that is 16
    length findings and 16 missing-backdrill findings."""
    res = _check({"signals": {"pcie5": [DQ]}})
    got = _by_rule(res, "inference.via_stub.pcie5")
    assert sorted(got) == ["inference.via_stub.pcie5", "inference.via_stub.pcie5.backdrill"]
    assert len(got["inference.via_stub.pcie5"]) == 16
    assert len(got["inference.via_stub.pcie5.backdrill"]) == 16
    f = got["inference.via_stub.pcie5"][0]
    assert f.measured == pytest.approx(1.141) and f.limit == pytest.approx(0.238)
    assert f.evidence["connected"] == ["F.Cu", "In2.Cu"] and f.layer == "In2.Cu"
    # f_res = c / (4 · 1.141 mm · √4.5) = 30.96 GHz = 1.935 × 16 GHz
    assert f.evidence["f_res_hz"] == pytest.approx(299_792_458 / (4 * 1.141e-3 * 4.5**0.5))
    assert f.evidence["f_res_ratio"] == pytest.approx(1.935, abs=1e-3)
    run = next(r for r in res.rules if r.rule.id == "inference.via_stub.pcie5")
    assert run.checked == 16
    extra = res.extras["via_stubs"]["pcie5"]
    assert extra.stubs_mm == pytest.approx([1.141] * 16) and extra.limit_mm == 0.238


def test_pipeline_crosslink_backdrilled_from_config() -> None:
    # backdrilled from the bottom up to In2, 0.15 mm left: f_res = c/(4·0.15 mm·√4.5) = 235.6 GHz
    # (14.7 × Nyquist) and 0.15 <= 0.238: clean
    bd = {
        "match": {"signal": "pcie5"},
        "side": "bottom",
        "must_not_cut": "In2.Cu",
        "residual_stub_mm": 0.15,
    }
    res = _check({"signals": {"pcie5": [DQ]}, "backdrill": [bd]})
    assert _by_rule(res, "inference.via_stub.pcie5") == {}
    assert res.extras["via_stubs"]["pcie5"].backdrilled == 16
    # a drill allowed down to In1 would cut In2, where the DQ nets are routed
    bd = {**bd, "must_not_cut": "In1.Cu"}
    got = _by_rule(
        _check({"signals": {"pcie5": [DQ]}, "backdrill": [bd]}), "inference.via_stub.pcie5"
    )
    assert sorted(got) == ["inference.via_stub.pcie5.backdrill_cut"]
    assert len(got["inference.via_stub.pcie5.backdrill_cut"]) == 16


@pytest.mark.parametrize(
    "name",
    [
        "coral-tpu-m2-adapter",
        "crosslink-nx-video-converter",
        "m2-oculink-adapter",
        "openpci2-backplane",
    ],
)
def test_both_checks_run_on_every_fixture(name: str) -> None:
    res = check_board(read_board(str(FIXTURE_BOARDS[name])))
    kinds = {r.rule.check for r in res.rules}
    assert {"via_stub", "pdn_impedance"} <= kinds
    crashed = [f for f in res.findings if "exception" in (f.evidence or {})]
    assert crashed == []
    assert isinstance(res.extras.get("rails"), list)
