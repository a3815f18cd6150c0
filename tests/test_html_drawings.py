"""The HTML report draws the new checks' findings (issues 32 and 33), in a real Chromium.

* ``thermal_vias``: the via field under the hot part, the part's pads' box and a label with θ of
  the field in °C/W, on the board view;
* ``skew``: a bar per member of the pair or group, its delay against the reference's with the
  limit dashed either side, in the finding panel;
* ``return_path``: each break in the reference plane as a line from its start to its end.

Every number drawn is compared with the finding's own (measured, limit, evidence): the drawing
comes from the finding, nothing is recomputed (report/drawings.py).  The reports are the real
pipeline's on the readable fixture boards of fixtures/checks/<kind>/.  Before this change the
report drew a marker only: every test here fails on the old main (no ``#drawings``, no
``svg.skew-bars``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accel_drc.report import html
from accel_drc.report.drawings import drawings
from accel_drc.results import Finding, Severity, Status
from browser.cdp import Browser
from conftest import ROOT

pytestmark = pytest.mark.browser

FIX = ROOT / "fixtures" / "checks"
THERMAL_CFG = {
    "stackup": {"via_plating_um": 25},
    "thermal": {"parts": {"U1": {"power_w": 20, "theta_max_k_per_w": 10}}},
}


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    b = Browser(chromium, 1400, 900)
    b.enable()
    try:
        yield b
    finally:
        b.close()


def _report(tmp: Path, rel: str, config: Any = None, board_class: str | None = None) -> tuple:
    """The real pipeline's result and HTML report of fixture ``rel``."""
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    path = FIX / rel
    board = read_board(str(path))
    result = check_board(board, config, board_class=board_class, board_file=str(path))
    out = tmp / (path.stem + ".html")
    html.write(out, result, board)
    return out, result


def _open(browser: Browser, path: Path) -> None:
    browser.navigate(path.resolve().as_uri())
    browser.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)


def _js(browser: Browser, body: str) -> Any:
    """``body`` (a function body returning a value) evaluated in the page, through JSON."""
    return json.loads(browser.eval(f"JSON.stringify((function(){{{body}}})())"))


def _one(result: Any, check: str) -> tuple[int, Finding]:
    got = [(i, f) for i, f in enumerate(result.findings) if f.check == check]
    assert got, f"no {check} finding"
    return got[0]


def test_thermal_via_field_drawn_with_the_findings_theta(browser: Browser, tmp_path: Path) -> None:
    path, result = _report(tmp_path, "thermal_vias/qfn_16vias.kicad_pcb", THERMAL_CFG, "edge")
    i, f = _one(result, "thermal_vias")
    assert f.status is Status.VIOLATION and f.measured == pytest.approx(12.03, abs=0.01)
    _open(browser, path)
    got = _js(
        browser,
        f"var g=document.querySelector('#drawings g.dr-thermal[data-i=\"{i}\"]');"
        "if(!g) return null; var r=g.querySelector('rect.dr-box'), b=g.getBBox();"
        "return {theta:+g.dataset.theta, n:+g.dataset.n, limit:+g.dataset.limit,"
        "box:['x','y','width','height'].map(function(k){return +r.getAttribute(k)}),"
        "vias:Array.from(g.querySelectorAll('circle.dr-via')).map(function(c){"
        "return [+c.getAttribute('cx'), +c.getAttribute('cy')]}),"
        "label:g.querySelector('text.dr-label').textContent, w:b.width, h:b.height};",
    )
    assert got is not None, "no drawing of the thermal via field"
    ev = f.evidence
    assert got["theta"] == f.measured == ev["theta_field_k_per_w"]
    assert got["limit"] == f.limit == 10
    assert got["n"] == ev["vias"] == 16 and got["vias"] == ev["field"]
    x0, y0, x1, y1 = ev["outline_mm"]
    assert got["box"] == pytest.approx([x0, y0, x1 - x0, y1 - y0], abs=1e-9)
    # every via counted lies under the part's box, and the label says θ as the finding does
    assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in got["vias"])
    assert f"θ {f.measured:.3g} °C/W (max 10)" in got["label"]
    assert "16 vias" in got["label"] and f"+{ev['rise_k']:.3g} °C at 20 W" in got["label"]
    assert got["w"] > 0 and got["h"] > 0  # laid out, not an empty group
    # selecting the finding zooms to the whole field and marks its drawing
    browser.eval(f"window.__accelDrc.select({i})")
    sel = _js(
        browser,
        "var v=document.getElementById('board-svg').getAttribute('viewBox').split(' ').map(Number);"
        f"var g=document.querySelector('g.dr-thermal[data-i=\"{i}\"]');"
        "return {vb:v, sel:g.classList.contains('sel'),"
        "drawn:document.getElementById('detail').textContent};",
    )
    vx, vy, vw, vh = sel["vb"]
    assert sel["sel"] and vx <= x0 and vy <= y0 and vx + vw >= x1 and vy + vh >= y1
    assert "16 vias counted" in sel["drawn"]


def _skew_bars(browser: Browser, i: int) -> dict:
    browser.eval(f"window.__accelDrc.select({i})")
    return _js(
        browser,
        "var s=document.querySelector('#detail svg.skew-bars'); if(!s) return null;"
        "var lim=Array.from(s.querySelectorAll('line.sk-limit')).map(function(l){"
        "return +l.getAttribute('x1')});"
        "var axis=+s.querySelector('line.sk-axis').getAttribute('x1');"
        "return {i:+s.dataset.i, limit:+s.dataset.limit, ref:+s.dataset.refPs, axis:axis,"
        "lines:lim, bars:Array.from(s.querySelectorAll('rect.skew-bar')).map(function(r){"
        "return {name:r.dataset.name, ps:+r.dataset.ps, cls:r.getAttribute('class'),"
        "x:+r.getAttribute('x'), w:+r.getAttribute('width')}})};",
    )


def _beyond_limit(bars: dict, bar: dict) -> bool:
    """Whether ``bar`` reaches past the dashed limit line on its side."""
    lo, hi = sorted(bars["lines"])
    return bar["x"] < lo if bar["x"] < bars["axis"] - 1e-9 else bar["x"] + bar["w"] > hi


def test_group_skew_bars_show_each_member_against_the_limit(
    browser: Browser, tmp_path: Path
) -> None:
    path, result = _report(tmp_path, "skew/ddr4_byte_lane_die.kicad_pcb")
    i, f = _one(result, "skew")
    assert f.net == "/DDR4_DQ3" and f.status is Status.VIOLATION
    _open(browser, path)
    bars = _skew_bars(browser, i)
    assert bars is not None, "no skew bars in the finding panel"
    ev = f.evidence
    assert bars["i"] == i and bars["limit"] == f.limit and bars["ref"] == ev["reference_ps"]
    ref = [b for b in bars["bars"] if "ref" in b["cls"].split()]
    assert [(b["name"], b["ps"]) for b in ref] == [(ev["reference"], ev["reference_ps"])]
    members = [b for b in bars["bars"] if "ref" not in b["cls"].split()]
    # the whole byte lane (DQ0-7, DM0), each at the delay the check measured
    assert [[b["name"], b["ps"]] for b in members] == ev["group"] and len(members) == 9
    (me,) = [b for b in members if "me" in b["cls"].split()]
    assert me["name"] == f.net and me["ps"] == ev["member_ps"]
    assert me["ps"] - ev["reference_ps"] == pytest.approx(f.measured, abs=2e-3)
    # the failing member's bar crosses the limit line, the others stay inside it
    for b in members:
        over = abs(b["ps"] - ev["reference_ps"]) > f.limit
        assert ("over" in b["cls"].split()) is over and _beyond_limit(bars, b) is over, b
    assert sum("over" in b["cls"].split() for b in members) == 1


def test_intra_pair_skew_bars_show_p_against_n(browser: Browser, tmp_path: Path) -> None:
    path, result = _report(tmp_path, "skew/two_barrels_one_leg.kicad_pcb")
    i, f = _one(result, "skew")
    _open(browser, path)
    bars = _skew_bars(browser, i)
    assert bars is not None
    ev = f.evidence
    by_ps = sorted((b["ps"], "ref" in b["cls"].split()) for b in bars["bars"])
    assert by_ps == sorted([(ev["p_ps"], False), (ev["n_ps"], True)])
    assert bars["limit"] == f.limit
    assert abs(ev["p_ps"] - ev["n_ps"]) == pytest.approx(f.measured, abs=2e-3)
    (p,) = [b for b in bars["bars"] if "ref" not in b["cls"].split()]
    assert _beyond_limit(bars, p) and "over" in p["cls"].split()


def test_return_path_breaks_drawn_where_the_finding_says(browser: Browser, tmp_path: Path) -> None:
    path, result = _report(tmp_path, "return_path/split.kicad_pcb")
    found = [(i, f) for i, f in enumerate(result.findings) if f.check == "return_path"]
    assert len(found) == 2
    _open(browser, path)
    for i, f in found:
        lines = _js(
            browser,
            f"var g=document.querySelector('#drawings g.dr-breaks[data-i=\"{i}\"]');"
            "if(!g) return null; return Array.from(g.querySelectorAll('line.dr-break')).map("
            "function(l){return {x1:+l.getAttribute('x1'), y1:+l.getAttribute('y1'),"
            "x2:+l.getAttribute('x2'), y2:+l.getAttribute('y2'), len:+l.dataset.len,"
            "cls:l.getAttribute('class'), layer:l.dataset.layer, ref:l.dataset.ref,"
            "w:l.getBBox().width}})",
        )
        assert lines is not None, f"no drawing of {f.net}'s breaks"
        want = f.evidence["breaks"]
        assert len(lines) == len(want) == 1
        for got, b in zip(lines, want):
            assert (got["x1"], got["y1"]) == tuple(b["start"])
            assert (got["x2"], got["y2"]) == tuple(b["end"])
            assert got["len"] == b["length_mm"] == pytest.approx(2.0, abs=1e-3)
            assert f"k-{b['kind']}" in got["cls"] and b["kind"] == "crossing"
            assert (got["layer"], got["ref"]) == (b["layer"], b["reference"])
            assert got["w"] > 0
    # selecting a finding shows the plane its break is in (In1.Cu is hidden at first)
    i, f = found[0]
    ref = f.evidence["breaks"][0]["reference"]
    hidden = f"getComputedStyle(document.querySelector('g.cu[data-name=\"{ref}\"]')).display"
    assert browser.eval(hidden) == "none"
    browser.eval(f"window.__accelDrc.select({i})")
    assert browser.eval(hidden) == "inline"
    # the layer toggle hides them, a filter that hides the finding hides its drawing
    shown = _js(
        browser,
        "var t=document.querySelector('input[data-layer=\"drawings\"]'); t.click();"
        "var a=getComputedStyle(document.getElementById('drawings')).display; t.click();"
        "var b=getComputedStyle(document.getElementById('drawings')).display;"
        "var f=document.getElementById('f-sev'); f.value='info'; f.dispatchEvent(new Event('change'));"
        "var c=Array.from(document.querySelectorAll('#drawings g.dr')).map(function(g){"
        "return getComputedStyle(g).display}); f.value=''; f.dispatchEvent(new Event('change'));"
        "return [a, b, c];",
    )
    assert shown == ["none", "inline", ["none", "none"]]
    assert not browser.console_errors()


def _f(check: str, evidence: Any, **kw: Any) -> Finding:
    return Finding(rule=f"t.{check}", check=check, severity=Severity.ERROR,
                   status=Status.VIOLATION, message="m", evidence=evidence, **kw)  # fmt: skip


def test_malformed_evidence_draws_nothing_and_names_stay_text() -> None:
    """A hand-built result with evidence of the wrong shape: no drawing, no exception."""
    bad = [
        _f("thermal_vias", {"outline_mm": [0, 0, "x", 1]}),
        _f("thermal_vias", {"outline_mm": None}),
        _f("skew", {"p_ps": "1", "n_ps": 2}, limit=1.0),
        _f("skew", {"member_ps": 3.0}, limit=None),
        _f("return_path", {"breaks": [{"start": [0, float("nan")], "end": [1, 1]}, "x"]}),
        _f("impedance", {"breaks": [{"start": [0, 0], "end": [1, 1]}]}),
        _f("crosstalk", {"coupled": [[0, 0, 1, 1, 0, 1, 1, "x", "F.Cu", "A", 0.1], [1, 2], "z"]}),
        _f("crosstalk", {"coupled": None}),
    ]
    assert drawings(bad) == []
    good = _f("skew", {"member_ps": 12.0, "reference_ps": 5.0, "reference": "DQS0",
                       "group": [["</text><script>", 12.0], [3, "x"]]}, limit=3.5, net="n")  # fmt: skip
    (d,) = drawings([good])
    assert d["members"] == [["</text><script>", 12.0]] and d["me"] == 0  # by its delay


def test_missing_return_via_drawn_as_its_reach_and_the_nearest(
    browser: Browser, tmp_path: Path
) -> None:
    """A layer change whose nearest GND via is 1.40 mm away (limit 1.27 mm): the reach around
    the signal via and the nearest return via's distance, both the finding's numbers."""
    path, result = _report(tmp_path, "return_path/gnd_via_1p40.kicad_pcb")
    found = [(i, f) for i, f in enumerate(result.findings) if f.rule.endswith(".via")]
    assert found
    _open(browser, path)
    for i, f in found:
        got = _js(
            browser,
            f"var g=document.querySelector('#drawings g.dr-stitch[data-i=\"{i}\"]');"
            "if(!g) return null; function c(s){var e=g.querySelector(s); return e?"
            "[+e.getAttribute('cx'), +e.getAttribute('cy'), +e.getAttribute('r')]:null}"
            "return {reach:c('circle.dr-reach'), nearest:c('circle.dr-nearest'),"
            "label:g.querySelector('text.dr-label').textContent};",
        )
        assert got is not None, f"no drawing of {f.net}'s missing return via"
        x, y = f.pos
        assert got["reach"] == [x, y, f.limit] and f.limit == 1.27
        assert got["nearest"] == [x, y, f.measured] == [x, y, f.evidence["nearest_return_via_mm"]]
        assert got["nearest"][2] > got["reach"][2]  # outside the reach: why it fails
        assert f"within 1.27 mm: nearest {f.measured:.3g} mm" in got["label"]
    assert not browser.console_errors()


def test_crosstalk_coupled_runs_drawn_from_the_finding(browser: Browser, tmp_path: Path) -> None:
    """A crosstalk finding draws its victim's coupled stretches, the aggressor's beside each and
    the band between, at the coordinates, layer, aggressor and gap of the finding's evidence;
    its panel says what is drawn.  Before this change a crosstalk finding drew a marker only."""
    path, result = _report(tmp_path, "crosstalk/tx_pairs_microstrip_tight.kicad_pcb")
    i, f = _one(result, "crosstalk")
    want = f.evidence["coupled"]
    assert want and all(c[8] == "F.Cu" for c in want)
    _open(browser, path)
    runs = _js(
        browser,
        f"var g=document.querySelector('#drawings g.dr-xtalk[data-i=\"{i}\"]');"
        "if(!g) return null; return Array.from(g.querySelectorAll('g.dr-run')).map(function(r){"
        "var v=r.querySelector('line.dr-xv'), a=r.querySelector('line.dr-xa');"
        "return {v:['x1','y1','x2','y2'].map(function(k){return +v.getAttribute(k)}),"
        "a:['x1','y1','x2','y2'].map(function(k){return +a.getAttribute(k)}),"
        "layer:r.dataset.layer, agg:r.dataset.aggressor, gap:+r.dataset.gap,"
        "band:r.querySelector('polygon.dr-xc').getBBox().height}})",
    )
    assert runs is not None, "no drawing of the coupled runs"
    assert len(runs) == len(want)
    for got, c in zip(runs, want):
        assert got["v"] == c[0:4] and got["a"] == c[4:8]
        assert (got["layer"], got["agg"], got["gap"]) == (c[8], c[9], c[10])
        assert got["band"] == pytest.approx(abs(c[5] - c[1]), abs=1e-3)
    browser.eval(f"window.__accelDrc.select({i})")
    drawn = browser.eval(
        "Array.from(document.querySelectorAll('.detail dt')).filter(function(d){"
        "return d.textContent==='Drawn'}).map(function(d){return d.nextSibling.textContent})[0]"
    )
    assert drawn and "coupled stretch" in drawn and want[0][9] in drawn
