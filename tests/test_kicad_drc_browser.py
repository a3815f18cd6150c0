"""KiCad's DRC in the HTML report, in a real Chromium: its own section, every entry a row and a
marker on the board view, and the Check filter isolating it (crosslink: 1,862 KiCad entries)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURE_BOARDS, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser.cdp import Browser  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.kicad]


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    b = Browser(chromium)
    b.enable()
    try:
        yield b
    finally:
        b.close()


def test_kicad_findings_are_rows_markers_and_a_section(
    browser: Browser, kicad_cli: str, tmp_path: Path
) -> None:
    from accel_drc import kicad_drc
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report import html

    board_path = FIXTURE_BOARDS["crosslink-nx-video-converter"]
    drc = kicad_drc.run(str(board_path), kicad_cli=kicad_cli)
    board = read_board(str(board_path))
    result = check_board(board, board_file=str(board_path), kicad_drc=drc)
    mine = [f for f in result.findings if f.check == "kicad_drc"]
    assert len(mine) == sum(drc.info()["counts"].values())
    page = tmp_path / "r.html"
    html.write(page, result, board)
    errors = len(browser.console_errors())
    browser.navigate(page.resolve().as_uri())
    browser.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)
    assert browser.console_errors()[errors:] == []
    assert browser.eval("document.querySelectorAll('tr[data-rule]').length") == len(result.findings)
    positioned = sum(
        1 for f in result.findings if f.pos is not None and f.check not in html.LAYER_WIDE_CHECKS
    )
    assert browser.eval("document.querySelectorAll('#markers circle').length") == positioned
    assert browser.eval("document.querySelectorAll('#kicad-drc tbody tr').length") == len(
        {f.rule for f in mine}
    )
    assert "KiCad " + drc.kicad_version in browser.eval(
        "document.querySelector('.meta').textContent"
    )
    # the Check filter isolates KiCad's findings, rows and markers alike
    browser.eval(
        "(function(){var s=document.getElementById('f-check'); s.value='kicad_drc';"
        " s.dispatchEvent(new Event('change', {bubbles: true}));})()"
    )
    browser.wait_for(f"window.__accelDrc.shown === {len(mine)}", timeout=30)
    shown_markers = browser.eval(
        "Array.from(document.querySelectorAll('#markers circle'))"
        ".filter(function(c){return c.style.display !== 'none';}).length"
    )
    assert shown_markers == sum(1 for f in mine if f.pos is not None)
    (ROOT / "artifacts").mkdir(exist_ok=True)
    browser.eval("document.getElementById('kicad-drc').scrollIntoView()")
    assert "stops reporting a type at 199" in browser.eval(
        "document.getElementById('kicad-drc').textContent"
    )  # crosslink hits it: drill_out_of_range, via_diameter, …
    browser.screenshot(ROOT / "artifacts" / "html_kicad_drc.png")
