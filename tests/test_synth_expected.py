"""End to end on the synthetic boards: ``accel-drc check --json`` with NO config gives exactly the
findings listed in each board's ``*.expected.yaml`` (rule, status, layer, net, count), and the
classifier gives each board its class; the same defects board checked WITH its declared config
(``NAME.accel-drc.yaml``: foil, backdrill, rail loads, as a real project would declare them)
gives exactly the ``with_config:`` list, which holds only deliberate defects; the ``--clean``
variants (defects off, the same declarations in an ``accel-drc.yaml`` beside the board) check
clean, their rails with margin.

Why both modes: with no config every rail fails the class-default target and no via is
backdrilled, so a weak rail or an undrilled pair would be caught whatever the board did; only
under the declared values (the same ones the clean variant passes with) is a defect genuine.

The expected lists are written by the generator from what it built (how many NVLink pairs run on
the layer with the wrong laminate, how many vias keep a stub …), never copied from a run of the
checker.  A mismatch here is either a generator intent that was wrong or an engine bug: the test
prints both lists so the difference can be judged.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

SYNTH = ROOT / "fixtures" / "synth"
GENERATOR = SYNTH / "generate.py"
COMMITTED = SYNTH / "boards"
SMALL = ("inference-pcie5", "edge-carrier")
REPORTED = ("violation", "cannot_verify")
# a strong rail of a clean variant must sit this far under its declared target, and a
# deliberately weak rail this far over it: a pass or a failure that is not a rounding matter
RAIL_MARGIN = 0.15


def _accel_drc() -> list[str]:
    exe = shutil.which("accel-drc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "accel_drc.cli"]


def run_check(board: Path, tmp: Path, config: Path | None = None) -> dict[str, Any]:
    out = tmp / (board.stem + ".findings.json")
    cmd = [*_accel_drc(), "check", str(board), "--json", str(out), "--quiet"]
    if config is not None:
        cmd += ["--config", str(config)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode in (0, 5), f"accel-drc check exit {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(out.read_text(encoding="utf-8"))


def entry_matches(e: Mapping[str, Any], f: Mapping[str, Any]) -> bool:
    if e.get("rule") is not None and f.get("rule") != e["rule"]:
        return False
    if e.get("check") is not None and f.get("check") != e["check"]:
        return False
    if f.get("status") != e["status"]:
        return False
    if e.get("layer") is not None and f.get("layer") != e["layer"]:
        return False
    return not (e.get("net") is not None and not re.search(e["net"], f.get("net") or ""))


def compare(
    expected: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every reported finding matches exactly one entry; every entry matches ``count`` findings.
    Returns the differences as readable lines (empty = equal)."""
    got = [0] * len(expected)
    problems: list[str] = []
    for f in findings:
        if f.get("status") not in REPORTED:
            continue
        hits = [i for i, e in enumerate(expected) if entry_matches(e, f)]
        if len(hits) == 1:
            got[hits[0]] += 1
        else:
            what = "unexpected" if not hits else f"ambiguous (entries {hits})"
            problems.append(
                f"{what}: {f.get('rule')} {f.get('status')} layer={f.get('layer')} "
                f"net={f.get('net')}: {str(f.get('message'))[:160]}"
            )
    for e, n in zip(expected, got):
        if n != e["count"]:
            problems.append(
                f"entry {e.get('rule')} {e['status']} layer={e.get('layer')} net={e.get('net')}: "
                f"expected {e['count']}, got {n}"
            )
    return problems


def _summary(problems: list[str]) -> str:
    head = problems[:25]
    more = f"\n… {len(problems) - 25} more" if len(problems) > 25 else ""
    return "\n".join(head) + more


# --- the matcher itself (no engine needed) -----------------------------------------------------


def test_compare_counts_and_unexpected() -> None:
    exp = [
        {"rule": "x.foil.nvlink4", "status": "cannot_verify", "layer": "In6.Cu", "count": 1},
        {"rule": "x.via_stub.nvlink4", "status": "violation", "net": "^NVL_", "count": 2},
    ]
    f_ok = [
        {"rule": "x.foil.nvlink4", "status": "cannot_verify", "layer": "In6.Cu", "net": "NVL_A_P"},
        {"rule": "x.via_stub.nvlink4", "status": "violation", "net": "NVL_A_P"},
        {"rule": "x.via_stub.nvlink4", "status": "violation", "net": "NVL_A_N"},
        {"rule": "x.tg", "status": "waived"},  # waived findings are not reported ones
    ]
    assert compare(exp, f_ok) == []
    extra = [*f_ok, {"rule": "x.tg", "status": "cannot_verify", "layer": "dielectric 1"}]
    assert [p.split(":")[0] for p in compare(exp, extra)] == ["unexpected"]
    short = f_ok[:2]
    assert compare(exp, short) == [
        "entry x.via_stub.nvlink4 violation layer=None net=^NVL_: expected 2, got 1"
    ]


# --- boards ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All three boards, seed 1, scale 1 (the training board is 36 MB: generated, not committed)."""
    out = tmp_path_factory.mktemp("synth-defects")
    subprocess.run([sys.executable, str(GENERATOR), str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth-clean")
    subprocess.run(
        [sys.executable, str(GENERATOR), str(out), "--clean"], check=True, capture_output=True
    )
    return out


@pytest.fixture(scope="module")
def checked() -> dict[Path, dict[str, Any]]:
    """One ``accel-drc check`` per board per module (the training board takes ~10 s)."""
    return {}


def check_once(cache: dict[Path, dict[str, Any]], board: Path, tmp: Path) -> dict[str, Any]:
    if board not in cache:
        cache[board] = run_check(board, tmp)
    return cache[board]


def _board_path(name: str, generated: Path) -> Path:
    committed = COMMITTED / f"{name}.kicad_pcb"
    return committed if committed.exists() else generated / f"{name}.kicad_pcb"


_NAMES = ["edge-carrier", "inference-pcie5", "training-hgx"]


@pytest.mark.slow
@pytest.mark.parametrize("name", _NAMES)
def test_findings_equal_expected_with_no_config(
    name: str, generated: Path, checked: dict[Path, dict[str, Any]], tmp_path: Path
) -> None:
    board = _board_path(name, generated)
    assert not (board.parent / "accel-drc.yaml").exists(), (
        "the defect list is judged with NO config"
    )
    exp = yaml.safe_load(board.with_suffix("").with_suffix(".expected.yaml").read_text("utf-8"))
    doc = check_once(checked, board, tmp_path)
    problems = compare(exp["findings"], doc["findings"])
    assert not problems, f"{name}: findings differ from {name}.expected.yaml:\n{_summary(problems)}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["edge-carrier", "inference-pcie5", "training-hgx"])
def test_classifier_gives_each_board_its_class(
    name: str, generated: Path, checked: dict[Path, dict[str, Any]], tmp_path: Path
) -> None:
    board = _board_path(name, generated)
    doc = check_once(checked, board, tmp_path)
    cls = doc["classification"]
    assert cls["source"] == "auto"
    assert cls["class"] == name.split("-")[0], json.dumps(cls, indent=1)[:3000]


@pytest.mark.slow
@pytest.mark.parametrize("name", _NAMES)
def test_clean_variant_checks_clean(name: str, clean: Path, tmp_path: Path) -> None:
    board = clean / name / f"{name}.kicad_pcb"
    assert (board.parent / "accel-drc.yaml").exists()
    exp = yaml.safe_load((board.parent / f"{name}.expected.yaml").read_text("utf-8"))
    assert exp["findings"] == []
    doc = run_check(board, tmp_path)
    problems = compare([], doc["findings"])
    assert not problems, f"{name} (clean variant) is not clean:\n{_summary(problems)}"
    # every declared rail passes its own V·ripple/ΔI target with margin
    for rail in doc["extras"]["rails"]:
        assert rail["source"] == "config" and rail["target_source"] == "V·ripple/ΔI (config)"
        assert rail["worst_z_ohm"] < (1 - RAIL_MARGIN) * rail["target_ohm"], rail["name"]
    # the config declares foil, backdrill and rails, never the class: the classifier decides
    assert doc["classification"]["source"] == "auto"
    assert doc["classification"]["class"] == name.split("-")[0]


@pytest.fixture(scope="module")
def checked_with_config() -> dict[Path, dict[str, Any]]:
    """One ``accel-drc check --config`` per defects board per module."""
    return {}


def _declared_config(board: Path) -> Path:
    return board.with_name(board.name.replace(".kicad_pcb", ".accel-drc.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("name", _NAMES)
def test_findings_equal_deliberate_defects_with_declared_config(
    name: str, generated: Path, checked_with_config: dict[Path, dict[str, Any]], tmp_path: Path
) -> None:
    board = _board_path(name, generated)
    exp = yaml.safe_load(board.with_suffix("").with_suffix(".expected.yaml").read_text("utf-8"))
    config = board.parent / exp["config"]
    assert config == _declared_config(board) and config.exists()
    want = exp["with_config"]
    # with the project's declarations, only what the generator broke on purpose is left
    assert want and all(e["deliberate"] is True for e in want)
    if board not in checked_with_config:
        checked_with_config[board] = run_check(board, tmp_path, config)
    doc = checked_with_config[board]
    problems = compare(want, doc["findings"])
    assert not problems, (
        f"{name} with {config.name}: findings differ from with_config:\n{_summary(problems)}"
    )
    # every weak rail is caught by a margin under the declared target, not by rounding
    rails = {r["name"]: r for r in doc["extras"]["rails"]}
    weak = [e for e in want if e["check"] == "pdn_impedance"]
    assert len(weak) == 1
    for e in weak:
        (rail,) = [r for n, r in rails.items() if re.search(e["net"], n)]
        assert rail["source"] == "config" and rail["target_source"] == "V·ripple/ΔI (config)"
        assert rail["worst_z_ohm"] > (1 + RAIL_MARGIN) * rail["target_ohm"], rail["name"]


@pytest.mark.parametrize("name", ["edge-carrier", "inference-pcie5", "training-hgx"])
def test_declared_config_is_the_clean_one_but_for_the_deliberate_defect(
    name: str, generated: Path, clean: Path
) -> None:
    """The rails, foil and backdrill a defects board is judged with are the ones its clean
    variant passes with: a weak rail fails because the board is weak, not because its load was
    declared harder.  The only allowed differences are the header line, the class (declared
    for the defects board, so its class-dependent defects are facts; left to the classifier for
    the clean one, which ``test_clean_variant_checks_clean`` checks) and, on the training board,
    the one NVLink pair left out of the backdrill table."""

    def without_class(lines: list[str]) -> list[str]:
        return [
            ln
            for ln in lines
            if not (ln.startswith(("class: ", "# the class is ")) or ln == "# classifier's guess")
        ]

    defects_text = _declared_config(_board_path(name, generated)).read_text("utf-8")
    clean_text = (clean / name / "accel-drc.yaml").read_text("utf-8")
    assert yaml.safe_load(defects_text)["class"] == name.split("-")[0]
    assert "class" not in yaml.safe_load(clean_text)
    defects = without_class(defects_text.splitlines())
    declared = without_class(clean_text.splitlines())
    assert defects[0].replace("defects", "expected-clean") == declared[0]
    diff = [(a, b) for a, b in zip(defects[1:], declared[1:]) if a != b]
    extra = [ln for ln in defects if ln not in declared]
    if name == "training-hgx":
        assert len(defects) == len(declared) + 2
        assert extra[1:] == [
            "  # deliberate defect: NVL_G3_L05_RX2 is left out of this entry",
            "    except_net: 'NVL_G3_L05_RX2_.*'",
        ]
    else:
        assert len(defects) == len(declared) and diff == [] and extra[1:] == []
    rails = yaml.safe_load("\n".join(defects))["rails"]
    assert all({"voltage", "ripple_pct", "transient_a", "vrm"} <= set(r) for r in rails)
