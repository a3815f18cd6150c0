"""Issue #31: the report's screenshots in the README are regenerated from current reports by
``docs/img/make_report_screenshots.py`` (this tree's report of vme-wren in headless Chromium).
The script is run here into a scratch folder, so it cannot rot unnoticed.  The KiCad ones
(``docs/img/make_screenshots.py``) need a KiCad building its plugin venv from PyPI; their
screen reader is tested here."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHARED_BOARDS, need

SCRIPT = ROOT / "docs" / "img" / "make_report_screenshots.py"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


@pytest.mark.browser
@pytest.mark.slow
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


def _xwd(bits: int, byte_order: int, pixels: bytes, width: int) -> bytes:
    """A minimal ``xwd`` dump: the 100-byte header, no window name, no colour map, one row."""
    head = [0] * 25
    head[0], head[4], head[5], head[7] = 100, width, 1, byte_order
    head[11], head[12] = bits, len(pixels)
    return struct.pack(">25I", *head) + pixels


@pytest.mark.parametrize(
    "bits, byte_order, pixels",
    [
        (24, 0, bytes([3, 2, 1, 30, 20, 10])),  # LSB first: B G R
        (32, 0, bytes([3, 2, 1, 0, 30, 20, 10, 0])),  # B G R X
        (32, 1, bytes([0, 1, 2, 3, 0, 10, 20, 30])),  # MSB first: X R G B
    ],
)
def test_xwd_screens_are_read_in_rgb(bits: int, byte_order: int, pixels: bytes) -> None:
    """The KiCad screenshots are read from ``xwd`` (no ImageMagick on the machine); Xvfb's
    24-bit screen came as 24 bits per pixel where the first parser expected 32."""
    sys.path.insert(0, str(SCRIPT.parent))
    from make_screenshots import _xwd_rgb

    assert _xwd_rgb(_xwd(bits, byte_order, pixels, 2)) == (2, 1, bytes([1, 2, 3, 10, 20, 30]))
