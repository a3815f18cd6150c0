"""The README's two set-up commands are the ones a new user runs, and CI runs the same test
command: keep them from drifting apart."""

from __future__ import annotations

import re

from conftest import ROOT


def _readme_commands() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = {}
    for name in ("run", "test"):
        m = re.search(rf"<!-- {name}-command -->\s*```(?:sh|bash)?\n(.+?)\n```", text, re.S)
        assert m, f"README has no <!-- {name}-command --> block"
        found[name] = m.group(1).strip()
    return found


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()["test"] in ci.splitlines()


def test_run_command_checks_a_bundled_board() -> None:
    cmd = _readme_commands()["run"]
    assert "accel-drc check" in cmd
    boards = re.findall(r"(fixtures/\S+\.kicad_pcb)", cmd)
    assert boards and all((ROOT / b).is_file() for b in boards)
