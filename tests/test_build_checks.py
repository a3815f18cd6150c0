"""The build checks (issue 33) on the readable fixture boards of fixtures/checks/<kind>/
(written by fixtures/checks/make_boards.py, KiCad 10 format), expected findings worked by hand.

Before issue 33 none of these kinds existed: every test here fails on the old main (unknown
check kind, or no finding where one is due)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.basis import settle
from accel_drc.checks import CheckContext, load_all
from accel_drc.checks.thermal_vias import barrel_theta
from accel_drc.packs import load_library, rules_for_class
from accel_drc.readers import read_board
from accel_drc.results import Status

LIB = load_library()
FIX = Path(__file__).resolve().parent.parent / "fixtures" / "checks"


def run(kind: str, name: str, board_class: str = "edge", config=None, params=None):
    """The class pack's rule of ``kind`` on fixture ``name``, findings settled."""
    board = read_board(str(FIX / kind / f"{name}.kicad_pcb"))
    rules, _ = rules_for_class(LIB, board_class)
    rule = next(r for r in rules if r.check == kind)
    if params:
        from dataclasses import replace

        rule = replace(rule, params={**rule.params, **params})
    a = Analysis(board, config or {})
    a.library = LIB
    ctx = CheckContext(board=board, analysis=a, board_class=board_class, config=config or {})
    out = load_all()[kind](ctx, rule)
    return [settle(f) for f in out.findings], out


# -- drill_aspect_ratio ------------------------------------------------------------------------


def test_aspect_ratio_beyond_every_fab_is_a_fact_with_the_remedy():
    found, out = run("drill_aspect_ratio", "thick_10layer")
    assert out.checked == 15
    by_drill = {f.evidence["drill_mm"]: f for f in found}
    f = by_drill[0.08]
    # 1.711 / 0.08 = 21.4:1 > 20:1, the most capable class (rules/fab.yaml): no guess changes it
    assert f.status == Status.VIOLATION
    assert f.evidence["count"] == 2 and f.measured == pytest.approx(21.39)
    assert set(f.evidence["candidates"].values()) == {"fail"}
    assert f.evidence["remedy"]["min_drill_mm"] == 0.2  # 1.711 / 10 = 0.171 -> 0.20 mm
    assert f.evidence["remedy"]["fab_class"] is None
    assert "0.171 mm" in f.message and "no fab class" in f.message
    assert "very_high_aspect (20:1) needs 0.086 mm" in f.message
    assert 0.2 not in by_drill  # 8.6:1 passes every class


def test_aspect_ratio_17_to_1_is_built_by_the_20_to_1_class_only():
    """Thor's 17.1:1: beyond 15:1 but inside the 20:1 that fabs quote on request
    ([multicb-drills], [emin-high-ratio]): it rests on the assumed fab, with the remedy."""
    found, _ = run("drill_aspect_ratio", "thick_10layer")
    f = next(f for f in found if f.evidence["drill_mm"] == 0.1)
    assert f.measured == pytest.approx(17.11) and f.evidence["count"] == 6
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["candidates"] == {"standard": "fail", "advanced": "fail",
                                        "high_aspect": "fail", "very_high_aspect": "pass"}  # fmt: skip
    assert f.evidence["remedy"]["fab_class"] == "very_high_aspect"
    assert f.evidence["remedy"]["min_drill_mm"] == 0.2  # 10:1 for the edge class's fab
    assert "fab: aspect_ratio_max" in f.evidence["declare"]
    assert len(f.evidence["positions"]) == 6 and f.pos == (5.0, 5.0)
    # the fab declared: a fact either way
    found, _ = run("drill_aspect_ratio", "thick_10layer", config={"fab": {"aspect_ratio_max": 20}})
    assert {g.evidence["drill_mm"] for g in found} == {0.08}


def test_fab_classes_cite_public_sources():
    """Every class of rules/fab.yaml cites a publication; none rests on [U] alone."""
    import yaml

    data = yaml.safe_load((FIX.parent.parent / "rules" / "fab.yaml").read_text())
    ratios = {c["id"]: c["aspect_ratio_max"] for c in data["fab_classes"]}
    assert ratios == {"standard": 10, "advanced": 12, "high_aspect": 15, "very_high_aspect": 20}
    for c in data["fab_classes"]:
        assert "[U]" not in c["source"] and "[" in c["source"], c["id"]
    assert "[multicb-drills]" in data["fab_classes"][-1]["source"]
    assert "[emin-high-ratio]" in data["fab_classes"][-1]["source"]


def test_aspect_ratio_between_classes_rests_on_the_assumed_fab():
    found, _ = run("drill_aspect_ratio", "thick_10layer")
    f = next(f for f in found if f.evidence["drill_mm"] == 0.13)  # 13.2:1
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["candidates"] == {"standard": "fail", "advanced": "fail",
                                        "high_aspect": "pass", "very_high_aspect": "pass"}  # fmt: skip
    assert "fab: aspect_ratio_max" in f.evidence["declare"]
    assert f.evidence["remedy"]["fab_class"] == "high_aspect"


def test_aspect_ratio_declared_fab_decides():
    found, _ = run("drill_aspect_ratio", "thick_10layer", config={"fab": {"aspect_ratio_max": 14}})
    assert {f.evidence["drill_mm"] for f in found} == {0.1, 0.08}  # 13.2:1 now passes
    assert {f.status for f in found} == {Status.VIOLATION} and found[0].limit == 14
    found, _ = run("drill_aspect_ratio", "thick_10layer", config={"fab": {"aspect_ratio_max": 12}})
    f = next(f for f in found if f.evidence["drill_mm"] == 0.13)
    assert f.status == Status.VIOLATION  # declared: a fact
    assert f.evidence["basis"]["fab"] == "declared"


def test_aspect_ratio_blind_via_uses_its_drilled_span():
    found, _ = run("drill_aspect_ratio", "thick_10layer")
    f = next(f for f in found if f.evidence["type"] == "blind")
    # F.Cu..In3.Cu: 4 × 0.035 copper + 0.08 + 0.10 + 0.20 dielectric = 0.52 mm over 0.05 mm
    assert f.evidence["span_mm"] == pytest.approx(0.52)
    assert f.measured == pytest.approx(10.4)
    assert f.evidence["layers"] == "F.Cu–In3.Cu"


def test_aspect_ratio_on_kicads_default_board_is_conditional():
    found, _ = run("drill_aspect_ratio", "kicad_default_16")
    assert len(found) == 1 and found[0].status == Status.CANNOT_VERIFY
    assert found[0].evidence["basis"]["span"] == "default"


# -- microvia ----------------------------------------------------------------------------------


def test_microvia_08_passes_and_12_fails():
    found, out = run("microvia", "pass_08")
    assert out.checked == 1 and found == []
    found, _ = run("microvia", "fail_12")
    assert len(found) == 1 and found[0].status == Status.VIOLATION
    assert found[0].measured == pytest.approx(1.2)
    assert "1.20:1 > 1:1" in found[0].message


@pytest.mark.parametrize(
    "name,expect",
    [
        ("stack3_unfilled", Status.VIOLATION),  # (filling no): declared, a fact
        ("stack3_unstated", Status.CANNOT_VERIFY),  # nothing stated: declare it
        ("stack3_filled", None),
        ("stack3_staggered", None),
    ],
)
def test_microvia_stacks(name, expect):
    found, _ = run("microvia", name)  # edge: max_stack 3
    stacks = [f for f in found if f.rule.endswith(".stack")]
    if expect is None:
        assert stacks == []
    else:
        assert len(stacks) == 1 and stacks[0].status == expect
        assert stacks[0].evidence["levels"] == 3 and stacks[0].evidence["layers"] == "F.Cu–In3.Cu"
    assert [f for f in found if not f.rule.endswith(".stack")] == []  # each 0.8:1


def test_microvia_stack_over_the_class_limit_fails_even_filled():
    found, _ = run("microvia", "stack3_filled", board_class="training")  # max_stack 2
    assert len(found) == 1 and found[0].status == Status.VIOLATION
    assert "3 levels > 2" in found[0].message


# -- thermal_vias ------------------------------------------------------------------------------


def test_barrel_theta_by_hand():
    # 0.30 mm drill, 25 µm plating, 1.6 mm, copper 385 W/m K: A = π(0.15² − 0.125²) mm²
    each = barrel_theta(np.array([1.6]), np.array([0.3]), 25.0, 385.0)[0]
    assert each == pytest.approx(1.6e-3 / (385 * math.pi * (0.15**2 - 0.125**2) * 1e-6))
    assert each == pytest.approx(192.4, abs=0.1)


def test_thermal_vias_field_against_declared_limit():
    cfg = {"thermal": {"parts": {"U1": {"power_w": 20, "theta_max_k_per_w": 10}}}}
    found, out = run("thermal_vias", "qfn_16vias", config=cfg)
    assert out.checked == 1 and len(found) == 1
    f = found[0]
    assert f.evidence["vias"] == 16
    assert f.measured == pytest.approx(192.4 / 16, abs=0.01)  # 12.0 K/W
    assert f.evidence["rise_k"] == pytest.approx(20 * 192.4 / 16, abs=0.2)
    assert f.evidence["vias_needed"] == 20  # 192.4 / 10 -> 20
    # the plating is the 25 µm default: the fail rests on it
    assert f.status == Status.CANNOT_VERIFY and f.evidence["basis"]["plating"] == "default"
    cfg["stackup"] = {"via_plating_um": 25}
    found, _ = run("thermal_vias", "qfn_16vias", config=cfg)
    assert found[0].status == Status.VIOLATION
    cfg["thermal"]["parts"]["U1"]["theta_max_k_per_w"] = 13
    found, _ = run("thermal_vias", "qfn_16vias", config=cfg)
    assert found == []


def test_thermal_vias_filled_with_declared_fill():
    cfg = {"stackup": {"via_plating_um": 25},
           "thermal": {"fill_k_w_per_mk": 385,
                       "parts": {"U1": {"power_w": 20, "theta_max_k_per_w": 10}}}}  # fmt: skip
    found, _ = run("thermal_vias", "qfn_16vias_filled", config=cfg)
    # solid copper cylinder of 0.30 mm: 1.6e-3 / (385 π 0.15² e-6) = 58.8 K/W each, 3.7 field
    assert found == []
    del cfg["thermal"]["fill_k_w_per_mk"]  # fill unknown: the barrel alone, a bound
    found, _ = run("thermal_vias", "qfn_16vias_filled", config=cfg)
    assert (
        found[0].status == Status.CANNOT_VERIFY and found[0].evidence["basis"]["fill"] == "default"
    )


def test_thermal_vias_no_hot_part_costs_nothing():
    found, out = run("thermal_vias", "qfn_16vias")
    assert found == [] and out.checked == 0  # no declared part, no core rail


# -- annular_ring ------------------------------------------------------------------------------


def test_annular_ring_class3():
    found, _ = run("annular_ring", "rings", board_class="training")  # class 3
    assert len(found) == 1
    f = found[0]
    assert f.measured == pytest.approx(0.025) and f.limit == 0.05
    # assumed class 3, passes class 2: conditional
    assert f.status == Status.CANNOT_VERIFY
    found, _ = run("annular_ring", "rings", config={"fab": {"ipc6012_class": 3}})
    assert found[0].status == Status.VIOLATION
    found, _ = run("annular_ring", "rings")  # edge: class 2 allows it
    assert found == []


# -- config ------------------------------------------------------------------------------------


def test_config_fab_and_thermal_typed_and_refused(tmp_path):
    from accel_drc.config import load_config
    from accel_drc.errors import InputError

    p = tmp_path / "accel-drc.yaml"
    p.write_text("fab: {aspect_ratio_max: 14, ipc6012_class: 3}\n"
                 "thermal: {parts: {U1: {power_w: 700, theta_max_k_per_w: 0.05}}}\n")  # fmt: skip
    cfg = load_config(str(p), None, LIB)
    assert cfg.fab.aspect_ratio_max == 14 and cfg.fab.ipc6012_class == 3
    assert cfg.thermal.parts["U1"].power_w == 700
    p.write_text("fab:\n  class: superfab\n")
    with pytest.raises(InputError, match=r"accel-drc.yaml:2: unknown fab class 'superfab'"):
        load_config(str(p), None, LIB)
    p.write_text("thermal:\n  parts: {U1: {theta_max_k_per_w: 1}}\n")
    with pytest.raises(InputError, match=r"accel-drc.yaml:2"):
        load_config(str(p), None, LIB)


def test_board_thickness_basis_is_the_stackup_owners():
    from accel_drc.analysis.stackup import StackupBasis

    auto = read_board(str(FIX / "drill_aspect_ratio" / "kicad_default_16.kicad_pcb"))
    facts = StackupBasis(auto.stackup, LIB.materials)
    assert facts.auto and facts.board_thickness(1.6) == "default"
    assert facts.board_thickness(1.711) == "declared"  # a thickness someone typed
    assert facts.board_thickness(None) is None
    thick = read_board(str(FIX / "drill_aspect_ratio" / "thick_10layer.kicad_pcb"))
    assert StackupBasis(thick.stackup, LIB.materials).board_thickness(1.6) == "declared"


def test_init_writes_the_fab_entry_that_decides(tmp_path):
    """``accel-drc init`` gives the 13.2:1 group's cannot-verify its entry (``fab:
    aspect_ratio_max``); filled in, the finding is decided."""
    import shutil

    from accel_drc.cli import main
    from accel_drc.starter_config import PLACEHOLDER_RE, uncomment

    board = tmp_path / "thick.kicad_pcb"
    shutil.copy(FIX / "drill_aspect_ratio" / "thick_10layer.kicad_pcb", board)
    assert main(["init", str(board), "--output", str(tmp_path / "start.yaml")]) == 0
    text = (tmp_path / "start.yaml").read_text()
    assert "#  aspect_ratio_max: <ratio>" in text
    fab = "\n".join(ln for ln in text.splitlines() if ln.startswith(("#fab:", "#  aspect")))
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text(PLACEHOLDER_RE.sub("12", uncomment(fab)) + "\n")
    assert main(["check", str(board), "--config", str(cfg), "--json", str(tmp_path / "r.json"),
                 "--quiet"]) == 5  # fmt: skip
    import json

    found = json.loads((tmp_path / "r.json").read_text())["findings"]
    f = next(f for f in found if f["check"] == "drill_aspect_ratio"
             and f["evidence"]["drill_mm"] == 0.13)  # fmt: skip
    assert f["status"] == "violation" and f["limit"] == 12


def test_jetson_agx_thor_carrier_17_to_1():
    """KiCad 10's Jetson AGX Thor carrier: 3,235 through vias of 0.10 mm in a 1.711 mm board
    (17.1:1) fail every fab class of rules/fab.yaml: a fact, with the remedy."""
    import kicad10
    from conftest import need

    path = kicad10.DEMO_DIR10 / "jetson-agx-thor-baseboard" / "jetson-agx-thor-baseboard.kicad_pcb"
    need(path.is_file(), f"no KiCad 10 demos at {path.parent} (run .ci/kicad10)")
    board = read_board(str(path))
    rules, _ = rules_for_class(LIB, "edge")
    rule = next(r for r in rules if r.check == "drill_aspect_ratio")
    a = Analysis(board, {})
    a.library = LIB
    out = load_all()["drill_aspect_ratio"](CheckContext(board, a, "edge"), rule)
    found = [settle(f) for f in out.findings]
    vias = next(f for f in found if f.evidence["type"] == "through")
    assert vias.evidence["count"] == 3235 and vias.evidence["drill_mm"] == 0.1
    assert vias.evidence["span_mm"] == pytest.approx(1.711)
    # 17.1:1: beyond the edge class's assumed 10:1 and every class but the 20:1 one
    assert vias.status == Status.CANNOT_VERIFY and vias.measured == pytest.approx(17.11)
    assert vias.evidence["remedy"]["min_drill_mm"] == 0.2  # 0.171 mm for 10:1
    assert vias.evidence["remedy"]["fab_class"] == "very_high_aspect"
    assert "very_high_aspect fab (20:1) builds it" in vias.message


def test_a_drill_below_10_um_is_no_hole():
    """KiCad's RoyalBlue54L demo draws 183 copper-only pads as vias with a 0.00001 mm drill:
    not holes (no 171,100:1 finding), while the real 0.10 mm via beside one is judged."""
    found, out = run("drill_aspect_ratio", "copper_only_via")
    assert out.checked == 1
    assert [f.evidence["drill_mm"] for f in found] == [0.1]
