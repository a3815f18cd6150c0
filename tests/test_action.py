"""The GitHub Action (``action.yml`` + ``action/run.sh``) and the pre-commit hook.

The action's check step is run here as GitHub runs it: bash, the inputs as environment
variables, ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT`` pointing at files; the summary and the
outputs it writes are asserted.  The pre-commit manifest is validated with pre-commit's own
manifest schema (``pre_commit.clientlib``), not a hand-written list of keys.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_BOARDS, ROOT

CORAL = FIXTURE_BOARDS["coral-tpu-m2-adapter"]
M2 = FIXTURE_BOARDS["m2-oculink-adapter"]
BIN = str(Path(sys.executable).with_name("accel-drc"))


def _run_action(
    tmp_path: Path, boards: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], str, dict[str, str]]:
    summary = tmp_path / "step-summary.md"
    output = tmp_path / "github-output.txt"
    run_env = dict(
        os.environ,
        ACCEL_DRC_BOARDS=boards,
        ACCEL_DRC_BIN=BIN,
        ACCEL_DRC_OUT=str(tmp_path / "reports"),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(output),
        **env,
    )
    r = subprocess.run(
        ["bash", str(ROOT / "action" / "run.sh")],
        capture_output=True,
        text=True,
        env=run_env,
        cwd=str(tmp_path),
        timeout=600,
    )
    outputs = dict(
        line.split("=", 1)
        for line in output.read_text(encoding="utf-8").splitlines()
        if "=" in line
    )
    return r, summary.read_text(encoding="utf-8") if summary.exists() else "", outputs


def test_action_script_writes_summary_outputs_and_reports(tmp_path: Path) -> None:
    assert Path(BIN).is_file(), BIN
    boards = f"{CORAL.parent}/*.kicad_pcb {M2.parent}/*.kicad_pcb"
    r, summary, out = _run_action(tmp_path, boards)
    assert r.returncode == 0, r.stderr  # the action's last step fails the job, not this one
    # per board: the same Markdown as `check --markdown`, one after the other
    heads = [line for line in summary.splitlines() if line.startswith("## ")]
    assert len(heads) == 2
    assert "M2.kicad\\_pcb" in heads[0] and "antmicro-m2-oculink-adapter-hw.kicad\\_pcb" in heads[1]
    coral = json.loads((tmp_path / "reports" / "1-M2" / "findings.json").read_text())
    m2 = json.loads(
        (tmp_path / "reports" / "2-antmicro-m2-oculink-adapter-hw" / "findings.json").read_text()
    )
    words = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}
    assert heads[0].endswith(words[coral["summary"]["verdict"]])
    assert heads[1].endswith(words[m2["summary"]["verdict"]])
    # outputs: the worst exit code and verdict over the boards
    verdicts = {coral["summary"]["verdict"], m2["summary"]["verdict"]}
    expected = (
        "fail" if "fail" in verdicts else ("unverified" if "unverified" in verdicts else "pass")
    )
    assert out["verdict"] == expected
    assert out["exit-code"] == ("5" if expected == "fail" else "0")
    assert out["report-dir"] == str(tmp_path / "reports")
    for d in ("1-M2", "2-antmicro-m2-oculink-adapter-hw"):
        for name in ("report.html", "findings.sarif", "junit.xml", "summary.md"):
            assert (tmp_path / "reports" / d / name).stat().st_size > 0
    assert "Worst findings" in summary


def test_action_script_with_no_board_fails_with_a_summary(tmp_path: Path) -> None:
    r, summary, out = _run_action(tmp_path, str(tmp_path / "nothing" / "*.kicad_pcb"))
    assert r.returncode == 0
    assert out["exit-code"] == "1" and out["verdict"] == "usage"
    assert "no board matches" in summary


def test_action_script_passes_class_and_config(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("waivers: []\n", encoding="utf-8")
    _, summary, out = _run_action(
        tmp_path, str(CORAL), ACCEL_DRC_CLASS="training", ACCEL_DRC_CONFIG=str(cfg)
    )
    assert "**Class** training (declared)" in summary
    assert out["exit-code"] == "5"  # a 2-layer board checked as training fails layer_count


def test_action_script_kicad_drc_input(tmp_path: Path) -> None:
    if shutil.which("kicad-cli") is None:
        _, summary, out = _run_action(tmp_path, str(M2), ACCEL_DRC_KICAD_DRC="true")
        assert out["exit-code"] == "1" and "before writing a summary" in summary
        return
    _, summary, out = _run_action(tmp_path, str(M2), ACCEL_DRC_KICAD_DRC="true")
    assert "**KiCad DRC** KiCad" in summary and out["exit-code"] == "0"


def test_action_yml_is_a_complete_composite_action() -> None:
    doc = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) == {"boards", "config", "class", "kicad-drc", "sarif", "html"}
    assert all("description" in v for v in doc["inputs"].values())
    steps = doc["runs"]["steps"]
    for s in steps:  # composite run steps must name their shell
        if "run" in s:
            assert s.get("shell") == "bash", s
    text = json.dumps(steps)
    assert 'pip install -q \\"$GITHUB_ACTION_PATH\\"' in text  # this action's own version
    assert "action/run.sh" in text
    assert "github/codeql-action/upload-sarif" in text and "actions/upload-artifact" in text
    assert steps[-1]["if"] == "always()" and 'exit \\"${RC:-2}\\"' in json.dumps(steps[-1])
    envs = next(s["env"] for s in steps if s.get("id") == "check")
    for var in ("ACCEL_DRC_BOARDS", "ACCEL_DRC_CONFIG", "ACCEL_DRC_CLASS", "ACCEL_DRC_KICAD_DRC"):
        assert var in envs
    assert set(doc["outputs"]) == {"exit-code", "verdict", "report-dir"}


def test_pre_commit_manifest_validates_with_pre_commit() -> None:
    manifest = ROOT / ".pre-commit-hooks.yaml"
    hooks = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    for hook in hooks:  # the keys pre-commit requires of a hook
        assert {"id", "name", "entry", "language"} <= set(hook)
    try:
        from pre_commit.clientlib import load_manifest
    except ImportError:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    (loaded,) = load_manifest(str(manifest))
    assert loaded["id"] == "accel-drc" and loaded["language"] == "python"
    import re

    assert re.search(loaded["files"], "hw/board.kicad_pcb")
    assert not re.search(loaded["files"], "hw/board.kicad_pcb.bak")
    # the entry is a console script this package installs
    assert Path(sys.executable).with_name(loaded["entry"]).is_file()


def test_pre_commit_hook_checks_each_board(tmp_path: Path) -> None:
    hook = str(Path(sys.executable).with_name("accel-drc-hook"))
    r = subprocess.run(
        [hook, "--class", "edge", str(CORAL), str(M2)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # the Coral adapter has violations as an edge board: exit 5, its summary printed
    assert r.returncode == 5, r.stderr
    assert "M2.kicad_pcb" in r.stdout and "verdict: FAIL" in r.stdout
