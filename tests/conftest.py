"""Shared fixtures.  Tests that need a real KiCad or browser skip with a reason where it is
absent; under ``CI=true`` a missing tool is a failure, not a skip (CI must run them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
BOARDS_DIR = FIXTURES / "boards"
SHARED_BOARDS = ROOT.parent / "shared" / "boards"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

#: the real open-hardware boards bundled in fixtures/boards (name -> .kicad_pcb)
FIXTURE_BOARDS = {p.parent.name: p for p in sorted(BOARDS_DIR.glob("*/*.kicad_pcb"))}


def need(condition: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI) when a required tool is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI but missing: {reason}")
    pytest.skip(reason)


def _system_python_has_pcbnew() -> bool:
    py = shutil.which("python3", path="/usr/bin")
    if not py:
        return False
    r = subprocess.run([py, "-c", "import pcbnew"], capture_output=True, timeout=60)
    return r.returncode == 0


_PCBNEW = None


@pytest.fixture(scope="session")
def pcbnew_python() -> str:
    """/usr/bin/python3 with KiCad's pcbnew module (KiCad 9 from Debian)."""
    global _PCBNEW
    if _PCBNEW is None:
        _PCBNEW = _system_python_has_pcbnew()
    need(_PCBNEW, "KiCad's pcbnew Python module is not installed (apt: kicad)")
    return "/usr/bin/python3"


@pytest.fixture(scope="session")
def kicad_cli() -> str:
    exe = shutil.which("kicad-cli")
    need(exe is not None, "kicad-cli is not installed (apt: kicad)")
    return exe  # type: ignore[return-value]


def need_live_kicad(version: str) -> None:
    """Skip (locally) or fail (in CI) unless a KiCad ``version`` GUI can run under Xvfb:
    "9" on the host, "10" in the Debian sid chroot (tests/kicad10.py)."""
    if version == "9":
        need(
            shutil.which("xvfb-run") is not None and shutil.which("pcbnew") is not None,
            "KiCad 9 GUI or Xvfb missing (apt: kicad xvfb)",
        )
        return
    import kicad10

    ok, why = kicad10.available()
    need(ok, why)
    for tool in ("pcbnew", "xvfb-run"):
        need((kicad10.ROOT10 / "usr" / "bin" / tool).exists(), f"no {tool} in {kicad10.ROOT10}")


@pytest.fixture(scope="session")
def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    need(exe is not None, "headless Chromium is not installed (apt: chromium)")
    return exe  # type: ignore[return-value]


@pytest.fixture(scope="session")
def xvfb_run() -> str:
    exe = shutil.which("xvfb-run")
    need(
        exe is not None and shutil.which("pcbnew") is not None,
        "KiCad GUI or Xvfb missing (apt: kicad xvfb)",
    )
    return exe  # type: ignore[return-value]
