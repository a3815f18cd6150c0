"""The HTML report in a real browser: headless Chromium driven over the DevTools protocol.

Loads each report from ``file://``; asserts no console error and no request other than the file
itself, the rows equal the JSON findings, a click on a row highlights its marker (and the other
way round), filters, sorting and keyboard focus work, and a 10,000-finding report works (how
fast is ``bench/bench_html.py``'s job).  Screenshots go to ``artifacts/`` (gitignored; CI keeps
them as artefacts).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from accel_drc.report import html
from accel_drc.results import Status
from browser.cdp import Browser
from browser.synthetic import HOSTILE_NET, LOSSY_DIELECTRIC, make_board, make_result
from conftest import ROOT

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "artifacts"


def _marked(f) -> bool:
    """Whether the board view has a marker for finding ``f``: it has a position and is not
    about a whole layer (those highlight their layer instead: html.layer_wide)."""
    return f.pos is not None and f.check not in html.LAYER_WIDE_CHECKS


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    b = Browser(chromium)
    b.enable()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    board = make_board(hostile=True, n_tracks=3000, n_vias=400)
    result = make_result(board, 80, hostile=True)
    path = tmp_path_factory.mktemp("report") / "hostile report.html"
    html.write(path, result, board)
    return path, result


def _load(browser: Browser, path: Path, timeout: float = 30.0) -> dict:
    """Navigate, wait until the page's script has built every row; return the page's timings."""
    start = len(browser.events)
    browser.navigate(path.resolve().as_uri())
    browser.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=timeout)
    state = browser.eval(
        "JSON.stringify({count: __accelDrc.count, tInteractive: __accelDrc.tInteractive,"
        " tReady: __accelDrc.tReady, rows: document.querySelectorAll('tr[data-rule]').length})"
    )
    out = json.loads(state)
    out["events_from"] = start
    return out


def _new_requests(browser: Browser, start: int) -> list[str]:
    return [
        p["request"]["url"] for m, p in browser.events[start:] if m == "Network.requestWillBeSent"
    ]


def _rect(browser: Browser, selector: str) -> dict:
    return json.loads(
        browser.eval(
            f"(function(){{var e=document.querySelector({json.dumps(selector)});"
            "var r=e.getBoundingClientRect();"
            "return JSON.stringify({x:r.x,y:r.y,w:r.width,h:r.height});})()"
        )
    )


def _scroll_to(browser: Browser, selector: str) -> dict:
    """Scroll an element into the middle of the view and return its rectangle.  Sections below
    the fold are laid out lazily (content-visibility), so the first scroll can land short: repeat
    until the element is inside the viewport."""
    for _ in range(10):
        browser.eval(
            f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})"
        )
        time.sleep(0.1)
        r = _rect(browser, selector)
        if r["y"] >= 0 and r["y"] + r["h"] <= browser.eval("window.innerHeight"):
            return r
    raise AssertionError(f"{selector} does not scroll into view: {r}")


def test_loads_offline_without_errors_or_requests(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    errors_before = len(browser.console_errors())
    state = _load(browser, path)
    assert _new_requests(browser, state["events_from"]) == [path.resolve().as_uri()]
    assert browser.console_errors()[errors_before:] == []
    assert state["rows"] == state["count"] == len(result.findings) == 80
    # every row carries its rule and status
    assert browser.eval(
        "Array.from(document.querySelectorAll('tr.f')).every(function(r){"
        "return r.dataset.rule && ['violation','cannot_verify','waived'].indexOf(r.dataset.status) >= 0})"
    )
    cv = sum(1 for f in result.findings if f.status == Status.CANNOT_VERIFY)
    assert browser.eval("document.querySelectorAll('tr[data-status=cannot_verify]').length") == cv


def test_hostile_text_is_text(browser: Browser, hostile_report) -> None:
    path, _result = hostile_report
    _load(browser, path)
    assert browser.eval("document.images.length") == 0
    assert browser.eval("document.querySelectorAll('script').length") == 2
    # the net cell shows the exact hostile string as text
    cell = browser.eval("document.querySelector('tr[data-i=\"0\"] td:nth-child(4)').textContent")
    assert cell == HOSTILE_NET
    title = browser.eval("document.title")
    assert "<img src=x onerror=alert(3)>" in title


def test_row_click_highlights_and_zooms_to_marker(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    k = next(i for i, f in enumerate(result.findings) if _marked(f) and i > 3)
    sel = f'tr[data-i="{k}"]'
    r = _scroll_to(browser, sel + " td:nth-child(8)")
    home_w = browser.eval("document.getElementById('board-svg').viewBox.baseVal.width")
    browser.click(r["x"] + 20, r["y"] + r["h"] / 2)
    marker = f'#markers circle[data-i="{k}"]'
    assert browser.eval(f"document.querySelector('{marker}').classList.contains('sel')")
    assert (
        browser.eval(f"document.querySelector('{marker}').getAttribute('data-selected')") == "true"
    )
    assert browser.eval(f"document.querySelector('{sel}').getAttribute('aria-selected')") == "true"
    assert browser.eval(f"document.activeElement === document.querySelector('{sel}')")
    vb = browser.eval(
        "(function(){var v=document.getElementById('board-svg').viewBox.baseVal;"
        "return [v.x + v.width/2, v.y + v.height/2, v.width];})()"
    )
    x, y = result.findings[k].pos
    assert abs(vb[0] - x) < 1e-3 and abs(vb[1] - y) < 1e-3
    assert vb[2] < home_w / 5  # zoomed in
    # only one marker and one row selected
    assert browser.eval("document.querySelectorAll('#markers .sel').length") == 1
    assert browser.eval("document.querySelectorAll('tr.f.sel').length") == 1
    # the detail panel shows the finding
    assert result.findings[k].message in browser.eval(
        "document.getElementById('detail').textContent"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    browser.eval("document.getElementById('board').scrollIntoView()")
    time.sleep(0.2)
    browser.screenshot(ARTIFACTS / "html_zoomed_finding.png")


def test_marker_click_selects_row(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    browser.eval("document.getElementById('board').scrollIntoView()")
    k = next(
        i
        for i, f in enumerate(result.findings)
        if _marked(f) and f.status == Status.VIOLATION and i > 10
    )
    # zoom to the marker's neighbourhood first, so no other marker overlaps it
    browser.eval(
        f"(function(){{var c=document.querySelector('#markers circle[data-i=\"{k}\"]');"
        "var x=+c.getAttribute('cx'), y=+c.getAttribute('cy');"
        "document.getElementById('board-svg').setAttribute('viewBox',(x-3)+' '+(y-3)+' 6 6');})()"
    )
    r = _rect(browser, f'#markers circle[data-i="{k}"]')
    page_y = browser.eval("window.scrollY")
    browser.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    row = f'tr[data-i="{k}"]'
    assert browser.eval(f"document.querySelector('{row}').classList.contains('sel')")
    assert browser.eval(f"document.querySelector('{row}').getAttribute('aria-selected')") == "true"
    # the page stays on the board; the row is scrolled into the table's own box
    assert browser.eval("window.scrollY") == page_y
    # (rows above it fill lazily and may move it; the page settles it within a few frames)
    inside = (
        "(function(){var w=document.getElementById('table-wrap').getBoundingClientRect();"
        f"var r=document.querySelector('{row}').getBoundingClientRect();"
        "return w.top-1<=r.top && r.bottom<=w.bottom+1;})()"
    )
    browser.wait_for(inside, timeout=5)
    assert browser.eval("window.scrollY") == page_y


def test_stackup_badge_filters_findings_by_layer(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    r = _scroll_to(browser, 'a[data-filter-layer="In2.Cu"] .badge')
    browser.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    want = sum(1 for f in result.findings if f.layer == "In2.Cu")
    assert want > 0
    assert browser.eval("document.querySelectorAll('tr.f:not([hidden])').length") == want
    assert browser.eval("document.getElementById('f-layer').value") == "In2.Cu"


def test_filters_sort_group_and_keyboard(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    visible = "document.querySelectorAll('tr.f:not([hidden])').length"
    browser.eval(
        "var s=document.getElementById('f-sev'); s.value='error';"
        "s.dispatchEvent(new Event('change'))"
    )
    errors = sum(1 for f in result.findings if f.severity.value == "error")
    assert browser.eval(visible) == errors
    browser.eval(
        "var s=document.getElementById('f-status'); s.value='violation';"
        "s.dispatchEvent(new Event('change'))"
    )
    both = sum(
        1 for f in result.findings if f.severity.value == "error" and f.status == Status.VIOLATION
    )
    assert browser.eval(visible) == both
    browser.eval("document.getElementById('f-clear').click()")
    assert browser.eval(visible) == len(result.findings)
    # net filter (debounced input)
    browser.eval(
        "var n=document.getElementById('f-net'); n.value='/net_1';"
        "n.dispatchEvent(new Event('input'))"
    )
    want = sum(1 for f in result.findings if f.net and "/net_1" in f.net.lower())
    assert 0 < want < len(result.findings)
    # the filter applies after its debounce: wait for it rather than sleep a guessed time
    browser.wait_for(f"({visible}) === {want}", timeout=10)
    assert browser.eval(visible) == want
    browser.eval("document.getElementById('f-clear').click()")
    # sort by measured: ascending, first row has the smallest measured value
    browser.eval("document.querySelector('button[data-sort=measured]').click()")
    first = browser.eval("document.querySelector('#findings-body tr.f').dataset.i")
    smallest = min(range(len(result.findings)), key=lambda i: result.findings[i].measured)
    assert int(first) == smallest
    assert (
        browser.eval(
            "document.querySelector('button[data-sort=measured]').parentNode.getAttribute('aria-sort')"
        )
        == "ascending"
    )
    # group by rule: one header per rule, rows still all there
    browser.eval("var g=document.getElementById('f-group'); g.click()")
    rules = {f.rule for f in result.findings}
    assert browser.eval("document.querySelectorAll('tr.grp').length") == len(rules)
    assert browser.eval("document.querySelectorAll('tr[data-rule]').length") == len(result.findings)
    browser.eval("var g=document.getElementById('f-group'); g.click()")
    # keyboard: the filters are focusable, rows take focus and move with the arrow keys
    assert browser.eval("document.getElementById('f-sev').tabIndex") == 0
    browser.eval("document.querySelector('#findings-body tr.f[tabindex=\"0\"]').focus()")
    a = browser.eval("document.activeElement.dataset.i")
    browser.key("ArrowDown", "ArrowDown", 40)
    b = browser.eval("document.activeElement.dataset.i")
    assert a != b and b is not None
    browser.key("Enter", "Enter", 13)
    assert browser.eval("document.activeElement.getAttribute('aria-selected')") == "true"
    assert browser.console_errors() == []


def test_electrical_units_get_engineering_prefixes(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    k = next(i for i, f in enumerate(result.findings) if f.unit == "Ω" and i < 40)
    f = result.findings[k]
    cells = browser.eval(
        f"Array.from(document.querySelectorAll('tr[data-i=\"{k}\"] td.num')).map(function(c){{return c.textContent}})"
    )
    assert cells == [html.fmt_si(f.measured, "Ω", 4), "150 µΩ"]
    assert cells[0].endswith(("mΩ", "µΩ"))  # 1e-4 .. 1e-3 Ω: never "1.9e-4 Ω"


def test_page_screenshot(browser: Browser, hostile_report) -> None:
    path, _result = hostile_report
    _load(browser, path)
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / "html_page_top.png")
    browser.screenshot(ARTIFACTS / "html_page_full.png", full=True)
    assert (ARTIFACTS / "html_page_full.png").stat().st_size > 10_000


@pytest.mark.slow
def test_ten_thousand_findings_report_works(browser: Browser, tmp_path: Path) -> None:
    """10,000 findings: one file under 15 MB, every row and marker built, every row filled in
    the background, and a click on one of the last rows selects it and its marker.  How fast
    (the issue's ≤ 2 s to interactive) is measured by ``bench/bench_html.py`` against the same
    page without its script, not asserted here: a timed test fails on a busy machine, not on
    slow code."""
    board = make_board(layers=16, size=(450.0, 400.0), n_tracks=120_000, n_vias=20_000)
    result = make_result(board, 10_000)
    path = tmp_path / "big.html"
    html.write(path, result, board)
    size = path.stat().st_size
    assert size < 15 * 1024 * 1024
    state = _load(browser, path, timeout=120)
    assert state["rows"] == state["count"] == 10_000
    assert browser.eval("document.querySelectorAll('#markers circle').length") == sum(
        1 for f in result.findings if _marked(f)
    )
    assert _new_requests(browser, state["events_from"]) == [path.resolve().as_uri()]
    # the page's own clocks exist and are ordered: built, then painted, then every row filled
    t_painted = browser.wait_for("window.__accelDrc.tPainted", timeout=60)
    browser.wait_for("window.__accelDrc.complete", timeout=120)
    t_complete = browser.eval("window.__accelDrc.tComplete")
    assert 0 < state["tReady"] <= t_painted <= t_complete
    assert browser.eval("document.querySelectorAll('tr.f:empty').length") == 0
    # and it responds: a click on one of the last rows selects it and its marker
    k = max(i for i, f in enumerate(result.findings) if _marked(f))
    assert k > 9_900
    r = _scroll_to(browser, f'tr[data-i="{k}"] td:nth-child(8)')
    browser.click(r["x"] + 20, r["y"] + r["h"] / 2)
    browser.wait_for(
        f"document.querySelector('tr[data-i=\"{k}\"]').classList.contains('sel')", timeout=30
    )
    assert browser.eval(
        f"document.querySelector('#markers circle[data-i=\"{k}\"]').classList.contains('sel')"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "html_10k_timing.json").write_text(
        json.dumps({**state, "tPainted": t_painted, "tComplete": t_complete, "bytes": size})
    )
    browser.screenshot(ARTIFACTS / "html_10k.png")


@pytest.mark.parametrize("name", ["crosslink-nx-video-converter", "openpci2-backplane"])
def test_real_fixture_report_in_browser(browser: Browser, tmp_path: Path, name: str) -> None:
    """A real board through the real pipeline: no console error, no request, rows = findings."""
    from conftest import FIXTURE_BOARDS

    pipeline = pytest.importorskip("accel_drc.pipeline")
    from accel_drc.readers import read_board

    board_path = FIXTURE_BOARDS[name]
    board = read_board(str(board_path))
    result = pipeline.check_board(board, board_file=str(board_path))
    path = tmp_path / f"{name}.html"
    html.write(path, result, board)
    errors_before = len(browser.console_errors())
    state = _load(browser, path)
    assert _new_requests(browser, state["events_from"]) == [path.resolve().as_uri()]
    assert browser.console_errors()[errors_before:] == []
    assert state["rows"] == state["count"] == len(result.findings)
    positioned = sum(1 for f in result.findings if _marked(f))
    assert browser.eval("document.querySelectorAll('#markers circle').length") == positioned
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / f"html_fixture_{name}.png")


def test_empty_board_and_no_findings(browser: Browser, tmp_path: Path) -> None:
    """A board with no outline or geometry and a clean result still gives a working page."""
    from accel_drc.model import Board, CopperLayer

    board = Board(
        source="empty.kicad_pcb",
        format="kicad_pcb",
        copper_layers=(CopperLayer(0, "F.Cu", "F.Cu"), CopperLayer(1, "B.Cu", "B.Cu")),
    )
    result = make_result(make_board(n_tracks=8, n_vias=1, zones=False), 0, rails=False)
    result.extras.pop("stackup")
    path = tmp_path / "empty.html"
    html.write(path, result, board)
    errors_before = len(browser.console_errors())
    state = _load(browser, path)
    assert state["rows"] == state["count"] == 0
    assert browser.console_errors()[errors_before:] == []
    assert not browser.eval("document.getElementById('no-findings').hidden")


def test_show_on_board_link_scrolls_to_the_marker(browser: Browser, hostile_report) -> None:
    path, result = hostile_report
    _load(browser, path)
    k = next(i for i, f in enumerate(result.findings) if _marked(f) and i > 20)
    r = _scroll_to(browser, f'tr[data-i="{k}"] a.goto')
    browser.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    time.sleep(0.2)
    assert browser.eval(
        f"document.querySelector('#markers circle[data-i=\"{k}\"]').classList.contains('sel')"
    )
    top = browser.eval("document.getElementById('board').getBoundingClientRect().top")
    assert abs(top) < 60  # the board section is at the top of the view
    assert browser.eval("location.hash") == ""  # the link did not navigate


def test_dielectric_badge_filters_the_findings_it_counts(browser: Browser, hostile_report) -> None:
    """The badge on a dielectric counts findings that name it in their evidence (laminate_df);
    a click shows exactly those rows, and the Layer filter shows the dielectric's name."""
    path, result = hostile_report
    _load(browser, path)
    want = [
        i
        for i, f in enumerate(result.findings)
        if f.layer == LOSSY_DIELECTRIC or (f.evidence or {}).get("dielectric") == LOSSY_DIELECTRIC
    ]
    assert want
    r = _scroll_to(browser, f'a[data-filter-layer="{LOSSY_DIELECTRIC}"] .badge')
    browser.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    shown = browser.eval(
        "Array.from(document.querySelectorAll('tr.f:not([hidden])'))"
        ".map(function(r){return +r.dataset.i}).sort(function(a,b){return a-b})"
    )
    assert shown == want
    assert browser.eval("document.getElementById('f-layer').value") == LOSSY_DIELECTRIC
    badge = browser.eval(
        f"document.querySelector('a[data-filter-layer=\"{LOSSY_DIELECTRIC}\"]').textContent"
    )
    assert sum(int(n) for n in re.findall(r"(\d+) ", badge)) == len(want)
    browser.eval("document.getElementById('f-clear').click()")


def test_print_shows_whole_why_and_opens_every_group(browser: Browser, tmp_path: Path) -> None:
    """On screen the why/source text is clamped to two lines and cannot-verify groups after the
    third are closed; printed (print media + beforeprint), nothing is clipped and every group is
    open; afterprint closes again what was closed."""
    board = make_board(n_tracks=300, n_vias=40, zones=False)
    result = make_result(board, 80, rails=False)
    long_why = " ".join(["the loss of this channel at Nyquist must stay within budget"] * 8)
    result.findings = [dataclasses.replace(f, why=long_why) for f in result.findings]
    path = tmp_path / "print.html"
    html.write(path, result, board)
    _load(browser, path)
    clipped = (
        "Array.from(document.querySelectorAll('tr.f .why'))"
        ".filter(function(e){return e.scrollHeight > e.clientHeight + 1}).length"
    )
    closed = "document.querySelectorAll('details.cv-group:not([open])').length"
    try:
        assert browser.eval(clipped) > 0  # on screen: clamped (the test sees the clamp)
        groups = browser.eval("document.querySelectorAll('details.cv-group').length")
        assert groups >= 2 and browser.eval(closed) == max(0, groups - 3)  # after the third
        # the reader closes every group: printing opens them all, afterprint closes them again
        browser.eval(
            "document.querySelectorAll('details.cv-group').forEach(function(d){d.open=false})"
        )
        browser.send("Emulation.setEmulatedMedia", media="print")
        browser.eval("window.dispatchEvent(new Event('beforeprint'))")
        assert browser.eval("document.querySelectorAll('tr.f:empty').length") == 0
        assert browser.eval("document.querySelectorAll('tr.f .why').length") >= len(result.findings)
        assert browser.eval(clipped) == 0
        assert browser.eval(closed) == 0
        browser.eval("window.dispatchEvent(new Event('afterprint'))")
        assert browser.eval(closed) == groups
    finally:
        browser.send("Emulation.setEmulatedMedia", media="")


def test_many_layer_stackup_fits_and_labels_do_not_overlap(
    browser: Browser, tmp_path: Path
) -> None:
    """26 copper layers at the 1400 px window: the page does not scroll sideways (the stack-up
    table scrolls in its own box when wider than its column) and no two stack-up labels'
    boxes overlap."""
    board = make_board(layers=26, n_tracks=600, n_vias=60, zones=False)
    result = make_result(board, 120, rails=False)
    for row in result.extras["stackup"]:  # realistic lengths: fab material names, many signals
        if row["kind"] != "copper":
            row["material"] = "Panasonic Megtron 6 R-5775(N) 2x1078 RC 69 %"
        else:
            row["signals"] = ["nvlink4", "pcie5", "ddr5", "usb4", "eth_112g"]
    path = tmp_path / "layers26.html"
    html.write(path, result, board)
    _load(browser, path)
    assert browser.eval("window.innerWidth") == 1400
    sizes = browser.eval(
        "(function(){var w=document.querySelector('.stackup-table-wrap'),"
        "t=w.querySelector('table');return [document.documentElement.scrollWidth,"
        "document.documentElement.clientWidth, t.scrollWidth, w.clientWidth];})()"
    )
    page_w, view_w, table_w, box_w = sizes
    assert table_w > box_w  # the table is wider than its column here...
    assert page_w <= view_w  # ...and still the page does not scroll sideways
    # ...and the Findings column is inside the visible box, never clipped
    head, cell, right = browser.eval(
        "(function(){var w=document.querySelector('.stackup-table-wrap'),"
        "h=w.querySelectorAll('thead th')[1],c=w.querySelector('td.state');"
        "return [h.textContent, c.getBoundingClientRect().right,"
        "w.getBoundingClientRect().right];})()"
    )
    assert head == "Findings" and cell <= right + 0.5
    boxes = browser.eval(
        "Array.from(document.querySelectorAll('.stackup-svg .sl-label')).map(function(e){"
        "var r=e.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom,e.textContent];})"
    )
    assert len(boxes) >= 26
    overlaps = [
        (a[4], b[4])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5
    ]
    assert overlaps == []
    svg = browser.eval(
        "(function(){var r=document.querySelector('.stackup-svg').getBoundingClientRect();"
        "return [r.left,r.top,r.right,r.bottom];})()"
    )
    assert all(svg[0] <= b[0] and b[2] <= svg[2] + 1 and svg[1] <= b[1] for b in boxes)
    ARTIFACTS.mkdir(exist_ok=True)
    _scroll_to(browser, "#stackup h2")
    browser.screenshot(ARTIFACTS / "html_stackup_26_layers.png")


def test_banner_meta_wraps_instead_of_clipping(browser: Browser, tmp_path: Path) -> None:
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 4, rails=False)
    result.rule_packs = [
        {"name": f"accelerator-pack-{i}", "version": f"{i}.0.{i}", "file": "x.yaml"}
        for i in range(6)
    ]
    result.board_sha256 = "0123456789abcdef" * 4
    path = tmp_path / "meta.html"
    html.write(path, result, board)
    _load(browser, path)
    for sel in (".meta dd.sha", ".meta dd.packs"):
        w = browser.eval(
            f"(function(){{var e=document.querySelector('{sel}');"
            "return [e.scrollWidth, e.clientWidth, e.innerText];})()"
        )
        assert w[0] <= w[1] + 1, (sel, w)
    assert (
        browser.eval("document.querySelector('.meta dd.sha').innerText").replace("\n", "")
        == result.board_sha256
    )


def test_over_limit_stub_bars_are_hatched_in_the_browser(browser: Browser, hostile_report) -> None:
    """The hatch overlay resolves to the page's pattern (a missing id paints nothing)."""
    path, _result = hostile_report
    _load(browser, path)
    n = browser.eval(
        "(function(){var b=document.querySelectorAll('.plot .bar-hatch'),ok=0;"
        "b.forEach(function(e){var id=getComputedStyle(e).fill.match(/#([^\"')]+)/);"
        "if(id&&document.getElementById(id[1])&&document.getElementById(id[1]).tagName==='pattern')ok++;});"
        "return [b.length, ok, document.querySelectorAll('.plot .bar.over').length];})()"
    )
    assert n[0] == n[1] == n[2] > 0
