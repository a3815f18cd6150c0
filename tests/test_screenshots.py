"""Issue #31: the report's screenshots in the README are regenerated from current reports by
``docs/img/make_report_screenshots.py`` (this tree's report of vme-wren in headless Chromium).
The script is run here into a scratch folder, so it cannot rot unnoticed."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHARED_BOARDS, need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCRIPT = ROOT / "docs" / "img" / "make_report_screenshots.py"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_the_report_screenshots_are_made_from_a_current_report(
    chromium: str, tmp_path: Path
) -> None:
    need((SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb").is_file(), "vme-wren is absent")
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("report-first-screen.png", "report-board-view.png"):
        assert _png_size(tmp_path / name) == (1400, 900), name
        assert (ROOT / "docs" / "img" / name).is_file(), f"docs/img/{name} is not committed"
