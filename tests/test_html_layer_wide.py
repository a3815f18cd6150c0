"""A finding about a whole layer (issue #31 item 8): plane copper weight.

copper_weight gives its finding a point inside the plane (for the KiCad marker); on vme-wren
that point of In1.Cu's GND plane fell in a BGA field, and the report's board view put an error
marker there, as if the problem were at that spot.  Now such a finding has no point marker:
the table says "the whole layer In1.Cu", and selecting it shows that layer alone on the board
view with its copper outlined, at the whole-board zoom.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from accel_drc.report import html
from accel_drc.results import Finding
from browser.cdp import Browser
from browser.synthetic import make_board, make_result


def _with_plane_finding() -> tuple[object, object, int, Finding]:
    """A synthetic board and result whose finding 0 is a copper_weight violation of the plane on
    In1.Cu, with a point inside the plane (as checks/copper_weight.plane_anchor gives it)."""
    board = make_board(n_tracks=300, n_vias=40)
    result = make_result(board, 30, rails=False)
    layer = board.copper_layers[1].name
    first = next(f for f in result.findings if f.check == "copper_weight")
    plane = replace(
        first,
        status=result.findings[0].status,
        severity=result.findings[0].severity,
        layer=layer,
        net="GND",
        pos=(12.5, 20.0),
        message=f"{layer} (GND): 18 µm = 0.51 oz plane copper < 1 oz",
    )
    result.findings[0] = plane
    return board, result, 0, plane


def _rows(page: str) -> tuple[list[str], list[list]]:
    start = page.index('<script type="application/json" id="report-data">') + len(
        '<script type="application/json" id="report-data">'
    )
    data = json.loads(page[start : page.index("</script>", start)])
    return data["fields"], data["findings"]


def test_plane_finding_has_no_point_and_names_its_layer() -> None:
    board, result, k, plane = _with_plane_finding()
    assert html.layer_wide(plane, frozenset(cl.name for cl in board.copper_layers))
    fields, rows = _rows(html.render(result, board))
    row = dict(zip(fields, rows[k]))
    assert row["whole"] == 1 and row["x"] is None and row["y"] is None
    assert row["layer"] == plane.layer
    # findings about a spot keep their point (a via stub, an impedance run)
    spot = [
        dict(zip(fields, r))
        for r, f in zip(rows, result.findings)
        if f.pos is not None and f.check in ("via_stub", "impedance")
    ]
    assert spot and all(r["x"] is not None and r["whole"] is None for r in spot)


def test_layer_wide_needs_a_copper_layer() -> None:
    """On a layer the board view does not draw (a dielectric), the finding keeps its point."""
    _board, _result, _k, plane = _with_plane_finding()
    assert not html.layer_wide(replace(plane, layer="dielectric 1"), frozenset({"F.Cu"}))
    assert not html.layer_wide(replace(plane, check="via_stub"), frozenset({plane.layer}))


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    b = Browser(chromium)
    b.enable()
    try:
        yield b
    finally:
        b.close()


@pytest.mark.browser
def test_selecting_a_plane_finding_highlights_its_layer(browser: Browser, tmp_path: Path) -> None:
    board, result, k, plane = _with_plane_finding()
    path = tmp_path / "plane.html"
    html.write(path, result, board)
    browser.navigate(path.resolve().as_uri())
    browser.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)
    # no marker for it on the board view
    assert browser.eval(f"document.querySelectorAll('#markers circle[data-i=\"{k}\"]').length") == 0
    cell = browser.eval(f"document.querySelector('tr[data-i=\"{k}\"] .items').textContent")
    assert f"the whole layer {plane.layer}" in cell
    index = next(cl.index for cl in board.copper_layers if cl.name == plane.layer)
    group = f"document.querySelector('g.cu[data-layer=\"{index}\"]')"
    assert browser.eval(f"{group}.style.display") == "none"  # an inner layer: hidden at first
    browser.eval(f"document.querySelector('tr[data-i=\"{k}\"] a.goto').click()")
    time.sleep(0.3)
    assert browser.eval(f"{group}.style.display") == ""  # shown...
    assert browser.eval(f"{group}.classList.contains('hl')")  # ...and outlined
    assert browser.eval("document.getElementById('board-svg').classList.contains('focus-layer')")
    assert browser.eval("document.querySelectorAll('g.cu.hl').length") == 1
    # at the whole-board zoom, no crosshair on a point of it
    vb = browser.eval("document.getElementById('board-svg').getAttribute('viewBox')")
    home = browser.eval("document.getElementById('board-svg').getAttribute('data-home')")
    assert [round(float(v), 2) for v in vb.split()] == [round(float(v), 2) for v in home.split()]
    assert browser.eval(
        "(function(){var c=document.querySelector('.crosshair');"
        "return !c || !c.getAttribute('d');})()"
    )
    assert "the whole layer" in browser.eval("document.getElementById('detail').textContent")
    # selecting a finding about a spot ends the highlight
    j = next(
        i
        for i, f in enumerate(result.findings)
        if f.pos is not None and f.check in ("via_stub", "impedance")
    )
    browser.eval(f"window.__accelDrc.select({j})")
    assert browser.eval("document.querySelectorAll('g.cu.hl').length") == 0
    assert not browser.eval(
        "document.getElementById('board-svg').classList.contains('focus-layer')"
    )
    assert browser.console_errors() == []
