"""Issue 28: every declaration in accel-drc.yaml is honoured by every check that reads the value,
and a severity override or a waiver does what it says.

The board is the Coral TPU M.2 adapter (fixtures/boards): KiCad's untouched 2-layer stack-up
(dielectric 1, F.Mask, B.Mask) and two PCIe pairs on F.Cu, so each declaration visibly turns a
``default`` input of the impedance check into a ``declared`` one.
"""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path
from typing import Any

import pytest
from accel_drc.config import load_config
from accel_drc.errors import InputError
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.report.text import summary
from accel_drc.results import CheckResult, Finding, Severity, Status, count_findings
from conftest import FIXTURE_BOARDS

LIB = load_library()
M2 = FIXTURE_BOARDS["coral-tpu-m2-adapter"]


@functools.cache
def _board(path: Path):
    return read_board(str(path))


def run(tmp_path: Path, text: str, board: Path = M2) -> CheckResult:
    """Check ``board`` with the config ``text``, loaded as the CLI loads it."""
    cfg_path = tmp_path / "accel-drc.yaml"
    cfg_path.write_text(textwrap.dedent(text))
    cfg = load_config(str(cfg_path), None, LIB)
    return check_board(_board(board), cfg, library=LIB)


def impedance(result: CheckResult, pair: str = "/PET_0") -> Finding:
    [f] = [f for f in result.findings if f.check == "impedance" and f.net == pair]
    return f


# ---------------------------------------------------------------------------------------------
# the stack-up: a declared value beats the board's, and every check sees it
# ---------------------------------------------------------------------------------------------


def test_declared_dielectric_epsilon_r_and_thickness_reach_the_impedance(tmp_path):
    before = impedance(run(tmp_path, "class: edge\n"))
    assert "εr 4.5" in before.message and "h 0.780 mm" in before.message
    assert before.evidence["basis"]["epsilon_r"] == "default"
    after = impedance(
        run(
            tmp_path,
            """
            class: edge
            stackup:
              materials:
                dielectric 1: {epsilon_r: 3.0, thickness_mm: 0.2}
            """,
        )
    )
    # main accepted epsilon_r, showed it in the stack-up table and computed with 4.5
    assert "εr 3;" in after.message and "h 0.200 mm" in after.message
    assert after.evidence["basis"]["epsilon_r"] == "declared"
    assert after.evidence["basis"]["h"] == "declared"
    assert after.measured != before.measured


def test_declared_copper_thickness_is_the_impedance_t(tmp_path):
    f = impedance(
        run(
            tmp_path,
            """
            class: edge
            stackup:
              copper:
                F.Cu: {thickness_um: 18}
            """,
        )
    )
    assert f.evidence["basis"]["t"] == "declared"


def test_a_dielectric_declaration_shows_in_the_stackup_rows(tmp_path):
    res = run(
        tmp_path,
        """
        stackup:
          materials:
            dielectric 1: {epsilon_r: 3.0, thickness_mm: 0.2, loss_tangent: 0.004}
        """,
    )
    [row] = [r for r in res.extras["stackup"] if r["name"] == "dielectric 1"]
    assert (row["epsilon_r"], row["thickness_mm"], row["loss_tangent"]) == (3.0, 0.2, 0.004)


def test_soldermask_is_declarable_in_check_as_in_inspect(tmp_path):
    # main: exit 3 "no dielectric 'F.Mask'" in check, while inspect --config accepted it
    res = run(
        tmp_path,
        """
        class: edge
        stackup:
          materials:
            F.Mask: {epsilon_r: 3.8, thickness_um: 20}
        """,
    )
    [mask] = [r for r in res.extras["stackup"] if r["name"] == "F.Mask"]
    assert (mask["epsilon_r"], mask["thickness_mm"]) == (3.8, 0.02)
    assert impedance(res).evidence["basis"]["mask_er"] == "declared"


def test_a_soldermask_has_no_laminate_and_a_thickness_is_given_once(tmp_path):
    with pytest.raises(InputError, match="F.Mask is a soldermask: declare its epsilon_r"):
        run(tmp_path, "stackup:\n  materials:\n    F.Mask: {material: FR4}\n")
    with pytest.raises(InputError, match="thickness_mm or thickness_um, not both"):
        run(
            tmp_path,
            "stackup:\n  materials:\n    dielectric 1: {thickness_mm: 0.2, thickness_um: 200}\n",
        )
    with pytest.raises(InputError, match="no copper layer 'In9.Cu'"):
        run(tmp_path, "stackup:\n  copper:\n    In9.Cu: {thickness_um: 35}\n")


# ---------------------------------------------------------------------------------------------
# rules: a severity override is what is printed, exported and counted
# ---------------------------------------------------------------------------------------------


def test_severity_override_applies_to_what_the_check_picked_itself(tmp_path):
    # layer_count above the class range is a warning the check picks; main printed WARNING
    # while `rules` listed the rule as info
    res = run(
        tmp_path,
        """
        class: edge
        rules:
          edge.layer_count: {severity: info, params: {min: 1, max: 1}}
        """,
    )
    [f] = [f for f in res.findings if f.rule == "edge.layer_count"]
    assert f.severity == Severity.INFO
    assert count_findings([f]).open["info"]["violation"] == 1
    assert "INFO    edge.layer_count" in summary(res, top=50)


# ---------------------------------------------------------------------------------------------
# waivers: a pair finding is waived by the pair's name or by its nets
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("net", [r"/PET_0", r"/PET_0\+", r"/PET_0-", r"/PET_0[+-]"])
def test_a_waiver_on_a_pair_may_name_the_pair_or_its_nets(tmp_path, net):
    res = run(
        tmp_path,
        f"""
        class: edge
        waivers:
          - rule: edge.impedance.*
            net: '{net}'
            reason: reviewed with the fab
        """,
    )
    assert impedance(res).status == Status.WAIVED
    assert impedance(res, "/PER_0").status != Status.WAIVED
    [row] = res.waivers
    assert row["state"] == "applied"


# ---------------------------------------------------------------------------------------------
# a declaration works without writing a pack
# ---------------------------------------------------------------------------------------------


def test_a_loss_budget_needs_no_pack_and_an_unmatched_one_is_reported(tmp_path):
    # main: no pack has an eth25g insertion-loss rule, so the budget did nothing, silently
    res = run(
        tmp_path,
        """
        class: edge
        signals:
          eth25g: ['/PET_0[+-]']
        loss:
          budgets_db: {eth25g: 0.01, nvlink4: 5}
        """,
    )
    [f] = [f for f in res.findings if f.rule == "edge.insertion_loss.eth25g"]
    assert f.limit == 0.01 and f.evidence["basis"]["budget"] == "declared"
    [rule] = [r.rule for r in res.rules if r.rule.id == "edge.insertion_loss.eth25g"]
    assert rule.pack == "accel-drc.yaml" and "loss: budgets_db: eth25g" in rule.source
    [u] = [f for f in res.findings if f.rule == "config.unmatched"]
    assert u.evidence["key"] == "loss.budgets_db.nvlink4"


def test_an_impedance_target_for_any_signal_type_needs_no_pack(tmp_path):
    res = run(
        tmp_path,
        """
        class: edge
        signals:
          pcie2: ['/PET_0[+-]']
        rules:
          edge.impedance.pcie2: {params: {zdiff_ohm: 120, tol_pct: 10}}
        """,
    )
    [f] = [f for f in res.findings if f.rule == "edge.impedance.pcie2" and f.net == "/PET_0"]
    assert "120 Ω" in f.message
    # a rule no pack holds must be declared whole: its schema names what is missing
    # (edge.impedance.pcie2 is in the packs since every PCIe generation has its rules)
    with pytest.raises(InputError, match="zdiff_ohm"):
        run(tmp_path, "rules:\n  edge.impedance.ddr3: {params: {tol_pct: 10}}\n")


# ---------------------------------------------------------------------------------------------
# a generic material decides what it can: the range of its grades
# ---------------------------------------------------------------------------------------------


def _laminate_df(stack, cfg):
    from _h2_boards import make_board, rect
    from accel_drc.analysis import Analysis
    from accel_drc.basis import settle
    from accel_drc.checks import CheckContext, load_all
    from accel_drc.packs import rules_for_class

    nets = ["GND", "TX_P", "TX_N"]
    board = make_board(
        4, nets, [("TX_P", 0, (1, 1), (30, 1))], [("GND", 1, rect(0, 0, 50, 40))], stack
    )
    rules, _ = rules_for_class(LIB, "edge")
    rule = next(r for r in rules if r.check == "laminate_df" and r.signal == "pcie5")
    a = Analysis(board, cfg, LIB)
    ctx = CheckContext(board=board, analysis=a, board_class="edge", config=cfg)
    return [settle(f) for f in load_all()["laminate_df"](ctx, rule).findings]


def test_edited_stackup_left_on_generic_fr4_is_over_gen5s_df_as_a_fact():
    # 0.12 / 1.2 / 0.12 mm typed by the designer, material left on KiCad's "FR4" 4.5 / 0.02:
    # main said "rests on default loss_tangent"; every FR-4 grade has Df >= 0.015 > 0.005.
    # The Df is a fact; the limit 0.005 is a typical value [U] and this single net forms no
    # channel whose loss the Gen5 budget could weigh, so the finding rests on the limit alone
    # (issue 27: a FAIL rests only on measured or declared inputs)
    from _h2_boards import cu, diel, stackup

    edited = stackup(
        cu(),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.12, kind="prepreg"),
        cu(),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=1.2),
        cu(),
        diel("dielectric 3", "FR4", 4.5, 0.02, t=0.12, kind="prepreg"),
        cu(),
    )
    cfg = {"signals": {"pcie5": ["TX_[PN]"]}}
    [f] = _laminate_df(edited, cfg)
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["conditional"]["rests_on"] == {"limit": "default"}
    assert f.evidence["basis"]["loss_tangent"] == "library"
    assert f.evidence["df_range"] == [0.015, 0.025]
    assert "Df 0.015–0.025" in f.message
    # KiCad's untouched auto stack-up: nobody named the material, the Df stays a default
    auto = stackup(
        cu(),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=0.48),
        cu(),
        diel("dielectric 3", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(),
    )
    [g] = _laminate_df(auto, cfg)
    assert g.status == Status.CANNOT_VERIFY
    assert g.evidence["basis"]["loss_tangent"] == "default"
    assert set(g.evidence["conditional"]["rests_on"]) == {"loss_tangent", "limit"}


def test_family_ranges_of_the_library():
    mats = LIB.materials
    assert mats.df_range(mats.lookup("FR4")) == (0.015, 0.025)
    assert mats.df_range(mats.lookup("2116")) == (0.015, 0.025)
    assert mats.df_range(mats.lookup("PR2116")) == (0.015, 0.025)
    assert mats.df_range(mats.lookup("High Tg FR4")) == (0.015, 0.025)


def _readme_config_example() -> Any:
    """The first YAML block of the README's configuration section, parsed."""
    import yaml
    from conftest import ROOT

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Project config: `accel-drc.yaml`", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


def _key_paths(node: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of parsed YAML (a list item is ``[]``)."""
    out: set[tuple[str, ...]] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            out.add((*path, str(k)))
            out |= _key_paths(v, (*path, str(k)))
    elif isinstance(node, list):
        for v in node:
            out |= _key_paths(v, (*path, "[]"))
    return out


def _schema_paths(node: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path the config schema names (``*``: any name, ``[]``: a list item)."""
    out: set[tuple[str, ...]] = set()
    if not isinstance(node, dict):
        return out
    for k, v in (node.get("properties") or {}).items():
        out.add((*path, k))
        out |= _schema_paths(v, (*path, k))
    if isinstance(node.get("additionalProperties"), dict):
        out |= _schema_paths(node["additionalProperties"], (*path, "*"))
    if isinstance(node.get("items"), dict):
        out |= _schema_paths(node["items"], (*path, "[]"))
    return out


def test_the_readme_config_example_shows_every_key():
    """Every key of the config schema, at every depth, has an example in the README's
    configuration section (a new key such as package_delays cannot go undocumented)."""
    from accel_drc.config import CONFIG_SCHEMA

    shown = _key_paths(_readme_config_example())

    def documented(want: tuple[str, ...]) -> bool:
        return any(
            len(got) == len(want) and all(w in ("*", g) for w, g in zip(want, got)) for got in shown
        )

    missing = sorted(p for p in _schema_paths(CONFIG_SCHEMA) if not documented(p))
    assert missing == [], f"keys without an example in README.md: {missing}"


def test_the_readme_config_example_is_a_valid_config(tmp_path):
    import yaml

    data = _readme_config_example()
    data["rules"].pop("packs")  # names a file of the reader's project
    cfg_path = tmp_path / "accel-drc.yaml"
    cfg_path.write_text(yaml.safe_dump(data, allow_unicode=True))
    cfg = load_config(str(cfg_path), None, LIB)
    assert cfg.stackup.copper["In1.Cu"].thickness_um == 18
    assert cfg.materials["F.Mask"].thickness_um == 20
    assert cfg.materials["dielectric 1"].thickness_mm == 0.1
    assert cfg.package_delays["U1"].pins_ps == {"AB12": 45.2, "AC13": 47.1}
    assert cfg.package_delays["U5"].delays == "compensated"


def test_vme_wren_declared_epsilon_r_moves_the_zdiff(tmp_path):
    # the case of the issue: main printed the same Zdiff before and after the declaration
    from conftest import SHARED_BOARDS

    vme = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
    if not vme.exists():
        pytest.skip("vme-wren is not in ../shared/boards")
    cfg = "stackup:\n  materials:\n    dielectric 1: {epsilon_r: 3.0}\n"

    def zdiff(res):
        f = impedance(res, "/SFP0.RX")
        return f.measured, f.evidence["basis"]["epsilon_r"], "εr 3;" in f.message

    before = zdiff(run(tmp_path, "class: inference\n", vme))
    after = zdiff(run(tmp_path, "class: inference\n" + cfg, vme))
    assert after[0] > before[0]  # a lower εr raises the impedance
    assert after[1:] == ("declared", True)


def test_inspect_applies_and_checks_the_declarations_as_check_does(tmp_path):
    from accel_drc.inspection import inspect_document

    path = tmp_path / "accel-drc.yaml"
    path.write_text("stackup:\n  materials:\n    F.Mask: {epsilon_r: 3.8}\n")
    doc = inspect_document(_board(M2), config=load_config(str(path), None, LIB))
    [mask] = [r for r in doc["stackup"] if r["name"] == "F.Mask"]
    assert mask["epsilon_r"] == 3.8 and mask["declared"] == {"epsilon_r": "declared"}
    path.write_text("stackup:\n  materials:\n    dielectric 9: {epsilon_r: 3.0}\n")
    with pytest.raises(InputError, match="no dielectric or soldermask 'dielectric 9'"):
        inspect_document(_board(M2), config=load_config(str(path), None, LIB))


def test_an_error_cannot_verify_the_user_cannot_decide_is_a_warning():
    from accel_drc.pipeline import severity_by_consequence

    base = Finding("x.r", "r", Severity.ERROR, Status.CANNOT_VERIFY, "m")
    yours = Finding(
        "x.r", "r", Severity.ERROR, Status.CANNOT_VERIFY, "m", evidence={"declare": "d"}
    )
    fail = Finding("x.r", "r", Severity.ERROR, Status.VIOLATION, "m")
    got = severity_by_consequence([base, yours, fail])
    assert [f.severity for f in got] == [Severity.WARNING, Severity.ERROR, Severity.ERROR]


def test_ir_drop_via_stubs_and_the_basis_owner_read_the_declared_copper_and_heights():
    # one owner: the IR-drop geometry and the stack-up basis see what accel-drc.yaml declares
    from accel_drc.analysis.irdrop import layer_geometry
    from accel_drc.analysis.stackup import StackupBasis, with_declarations
    from accel_drc.config import ProjectConfig

    board = _board(M2)
    cfg = ProjectConfig.from_mapping(
        {
            "stackup": {
                "copper": {"default": {"thickness_um": 70}},
                "materials": {"dielectric 1": {"thickness_mm": 1.0}},
            }
        }
    )
    declared = with_declarations(board, cfg, LIB.materials)
    t, z, _ = layer_geometry(declared)
    assert list(t) == pytest.approx([0.070, 0.070])
    assert z[1] - z[0] == pytest.approx(0.070 + 1.0)
    facts = StackupBasis(declared.stackup, LIB.materials)
    assert StackupBasis(board.stackup, LIB.materials).thickness == "default"
    assert facts.thickness == "declared" and facts.copper_thickness("F.Cu") == "declared"
    assert facts.dielectric("dielectric 1") == {
        "epsilon_r": "default",  # still KiCad's 4.5: only the thickness was declared
        "loss_tangent": "default",
        "height": "declared",
    }


def _insertion_loss(stack, budget_db: float):
    """The pcie5 insertion_loss findings (settled) of a 200 mm F.Cu pair over an In1.Cu GND
    plane on ``stack``, everything but the laminate's Df declared (foil HVLP, εr as the board
    states it, soldermask εr 3.8), against a board budget of ``budget_db``; and the channel's
    totals at the generic material's Df range ends and as the stack-up states it."""
    from _h2_boards import make_board, rect
    from accel_drc.analysis import Analysis
    from accel_drc.analysis.loss import loss_table
    from accel_drc.analysis.stackup import with_declarations
    from accel_drc.basis import settle
    from accel_drc.checks import CheckContext, load_all
    from accel_drc.checks.insertion_loss import _total_with
    from accel_drc.config import config_from_data
    from accel_drc.packs import rules_for_class

    board = make_board(
        4,
        ["GND", "TX_P", "TX_N"],
        [("TX_P", 0, (1, 1), (201, 1)), ("TX_N", 0, (1, 1.2), (201, 1.2))],
        [("GND", 1, rect(0, 0, 205, 40))],
        stack,
        size=(205, 40),
    )
    cfg = config_from_data(
        {
            "signals": {"pcie5": ["TX_[PN]"]},
            "loss": {"budgets_db": {"pcie5": budget_db}},
            "stackup": {
                "foil": {"default": "HVLP"},
                "materials": {
                    "dielectric 1": {"epsilon_r": 4.5},
                    "F.Mask": {"epsilon_r": 3.8},
                },
            },
        },
        LIB,
    )
    board = with_declarations(board, cfg, LIB.materials)  # as check applies them
    rules, _ = rules_for_class(LIB, "edge")
    rule = next(r for r in rules if r.check == "insertion_loss" and r.signal == "pcie5")
    a = Analysis(board, cfg)
    a.library = LIB
    ctx = CheckContext(board=board, analysis=a, board_class="edge", config=cfg)
    (ch,) = [c for c in loss_table(a) if c.signal == "pcie5"]
    ends = tuple(_total_with(ctx, ch, None, "huray", pick, 3.5) for pick in (0, 1))
    got = [settle(f) for f in load_all()["insertion_loss"](ctx, rule).findings]
    return got, (ends[0], ch.total_db, ends[1])


def test_insertion_loss_decides_what_the_generic_fr4_range_decides():
    """The stack-up the designer edited, left on KiCad's "FR4" (tan δ 0.02): its name covers
    every generic FR-4 grade (Df 0.015–0.025).  Over the budget even at Df 0.015: a fact
    resting on the library's range (main: rests on default loss_tangent); over at 0.02 but
    inside at 0.015: conditional, with the range; inside at 0.02 but over at 0.025: cannot
    verify, with both ends; inside at 0.025: nothing."""
    from _h2_boards import cu, diel, stackup

    edited = stackup(
        cu(),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.12, kind="prepreg"),
        cu(),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=1.2),
        cu(),
        diel("dielectric 3", "FR4", 4.5, 0.02, t=0.12, kind="prepreg"),
        cu(),
    )
    _, (lo, nominal, hi) = _insertion_loss(edited, 100.0)
    assert lo < nominal < hi
    [f], _ = _insertion_loss(edited, lo - 0.5)
    assert f.status == Status.VIOLATION
    assert f.evidence["basis"]["loss_tangent"] == "library"
    assert f.evidence["df_range"] == [0.015, 0.025]
    assert "across the Df range 0.015–0.025" in f.message
    [g], _ = _insertion_loss(edited, (lo + nominal) / 2)
    assert g.status == Status.CANNOT_VERIFY
    assert g.evidence["basis"]["loss_tangent"] == "default"
    assert g.evidence["df_range"] == [0.015, 0.025]
    assert "inside the budget at the low end" in g.message
    [h], _ = _insertion_loss(edited, (nominal + hi) / 2)
    assert h.status == Status.CANNOT_VERIFY and h.evidence["df_range"] == [0.015, 0.025]
    assert h.evidence["candidates"] == {"Df 0.015": "pass", "Df 0.025": "fail"}
    assert "stackup: materials:" in h.evidence["declare"]
    assert _insertion_loss(edited, hi + 0.5)[0] == []


def test_insertion_loss_on_the_auto_stackup_keeps_the_default_df():
    """KiCad's untouched auto stack-up: nobody named the material, no range applies: a failure
    stays conditional on the default Df, and a pass stands as before."""
    from _h2_boards import cu, diel, stackup

    auto = stackup(
        cu(),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=0.48),
        cu(),
        diel("dielectric 3", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(),
    )
    _, (lo, nominal, hi) = _insertion_loss(auto, 100.0)
    [f], _ = _insertion_loss(auto, lo - 0.5)
    assert f.status == Status.CANNOT_VERIFY and "df_range" not in f.evidence
    assert _insertion_loss(auto, (nominal + hi) / 2)[0] == []
