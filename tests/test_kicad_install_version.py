"""``accel-drc kicad install`` targets the KiCad the user runs: the newest supported KiCad found
on the machine (its settings folder, or ``kicad-cli`` on PATH), and says which and why.  Before,
it installed for KiCad 9 unless told ``--kicad-version 10.0``, so a KiCad-10-only user got no
button (issue 29 item 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _run(tmp_path: Path, *args: str, cli_version: str | None = None, config: tuple[str, ...] = ()):
    """Run ``accel-drc kicad ARGS`` with scratch KiCad folders and a fake ``kicad-cli`` (or none)
    on PATH."""
    cfg = tmp_path / "config"
    for v in config:
        (cfg / v).mkdir(parents=True, exist_ok=True)
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    if cli_version:
        fake = bindir / "kicad-cli"
        fake.write_text(f"#!/bin/sh\necho {cli_version}\n", encoding="utf-8")
        fake.chmod(0o755)
    env = dict(
        os.environ,
        KICAD_CONFIG_HOME=str(cfg),
        KICAD_DOCUMENTS_HOME=str(tmp_path / "docs"),
        PATH=str(bindir),
    )
    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "kicad", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _plugin(tmp_path: Path, version: str) -> Path:
    return tmp_path / "docs" / "kicad" / version / "plugins" / "accel-drc" / "plugin.json"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "cli", "expected", "words"),
    [
        (("10.0",), None, "10.0", "the newest KiCad found (its settings in"),
        (("9.0", "10.0"), None, "10.0", "KiCad 9.0 found too: --kicad-version 9.0"),
        ((), "10.0.7", "10.0", "the newest KiCad found ("),
        (("9.0",), None, "9.0", "the newest KiCad found (its settings in"),
        ((), None, "10.0", "no KiCad found on this machine"),
    ],
)
def test_install_targets_the_newest_kicad_found(tmp_path, config, cli, expected, words) -> None:
    r = _run(tmp_path, "install", cli_version=cli, config=config)
    assert r.returncode == 0, r.stderr
    assert _plugin(tmp_path, expected).is_file(), r.stdout
    other = "9.0" if expected == "10.0" else "10.0"
    assert not _plugin(tmp_path, other).exists()
    line = next(x for x in r.stdout.splitlines() if "installed the KiCad" in x)
    assert f"installed the KiCad {expected} plugin" in line and words in line, line


@pytest.mark.slow
def test_uninstall_without_a_version_removes_every_install(tmp_path) -> None:
    assert _run(tmp_path, "install", "--kicad-version", "9.0").returncode == 0
    assert _run(tmp_path, "install", "--kicad-version", "10.0").returncode == 0
    r = _run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("removed") == 2
    assert not _plugin(tmp_path, "9.0").exists() and not _plugin(tmp_path, "10.0").exists()
