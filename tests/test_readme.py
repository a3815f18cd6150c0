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


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names() -> set[str]:
    """Every package pyproject.toml asks for: the core dependencies and every extra (read as
    text: ``tomllib`` is Python 3.11+ and the suite runs on 3.9 too)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    extras = re.search(r"^\[project.optional-dependencies\]\n(.*?)^\[", text, re.S | re.M)
    assert block and extras
    specs = re.findall(r'"([A-Za-z0-9_.-]+)', block.group(1) + extras.group(1))
    return {_norm(s) for s in specs}


def _pins() -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)\s*(?:;\s*(.+))?", line)
        assert m, f"constraints.txt: not an exact pin: {line!r}"
        pins.setdefault(_norm(m.group(1)), []).append(m.group(3) or "")
    return pins


def test_every_dependency_is_pinned_for_every_python() -> None:
    """CI and the README's commands install with ``-c constraints.txt``: a package missing from
    it, or pinned for one Python only, would float to whatever PyPI serves that day (PyYAML
    6.0.4 changed an error and turned a clean clone red)."""
    pins = _pins()
    for name in sorted(_requirement_names()):
        assert name in pins, f"{name} is not pinned in constraints.txt"
        markers = pins[name]
        assert markers == [""] or sorted(markers) == sorted(
            ['python_version < "3.11"', 'python_version >= "3.11"']
        ), (name, markers)


def test_the_commands_install_with_the_constraints() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for name, cmd in _readme_commands().items():
        assert "-c constraints.txt" in cmd, name
    for line in ci.splitlines():
        if "pip install" in line:
            assert "-c constraints.txt" in line, line


def test_every_image_the_readme_shows_exists() -> None:
    """Issue #31: the README shows the report and the KiCad button as they are now; an image
    it names that is not in the repository is a broken picture on the project's front page."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) >= 4, images
    for image in images:
        assert (ROOT / image).is_file(), image
