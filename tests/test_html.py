"""The HTML report as text: counts, escaping of hostile user text (in the HTML and inside the
embedded JSON), no external references, plots with hand-worked points, size limits."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import numpy as np
import pytest
from accel_drc.model import Board, CopperLayer, Footprint, Outline, Pad, Tracks, Zone
from accel_drc.report import embedded_json, html, html_rows, html_template, stackup_figure
from accel_drc.report.board_svg import grid_for, render_board
from accel_drc.report.declare_html import cannot_verify_groups
from accel_drc.results import Severity, Status
from browser.synthetic import (
    HOSTILE_FILE,
    HOSTILE_NET,
    LOSSY_DIELECTRIC,
    make_board,
    make_result,
)
from conftest import FIXTURE_BOARDS, SHARED_BOARDS
from markupsafe import escape

DATA_RE = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def hostile() -> tuple[str, object, Board]:
    board = make_board(hostile=True, n_tracks=800, n_vias=100)
    result = make_result(board, 60, hostile=True)
    return html.render(result, board), result, board


def _data(page: str) -> dict:
    m = DATA_RE.search(page)
    assert m, "embedded JSON block missing"
    return json.loads(m.group(1))


# ---------------------------------------------------------------------------------------------
# escaping
# ---------------------------------------------------------------------------------------------


def test_hostile_net_never_appears_raw(hostile) -> None:
    page, _result, _board = hostile
    assert HOSTILE_NET not in page
    assert "<img" not in page.lower()
    # exactly two script elements (the JSON and our code): nothing user-made closed or opened one
    assert page.lower().count("<script") == 2
    assert page.lower().count("</script") == 2


def test_hostile_text_round_trips_through_json(hostile) -> None:
    page, result, _board = hostile
    block = DATA_RE.search(page).group(1)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in block, f"{bad!r} left unescaped in the JSON block"
    data = _data(page)
    fields = data["fields"]
    nets = [row[fields.index("net")] for row in data["findings"]]
    assert HOSTILE_NET in nets  # JSON.parse gives the exact user text back
    assert nets == [f.net for f in result.findings]


def test_hostile_file_name_escaped_in_title_and_banner(hostile) -> None:
    page, _result, _board = hostile
    assert HOSTILE_FILE not in page
    # the title shows the base name, the banner the whole path: both as text
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert (
        title == "accel-drc: script&gt;&lt;img src=x onerror=alert(3)&gt;&#34;&#39;&amp;.kicad_pcb"
    )
    banner = page[page.index('id="input-file"') :]
    assert banner.startswith(
        'id="input-file" title="/tmp/evil&lt;/title&gt;/x&lt;script&gt;alert(2)&lt;/script&gt;'
    )


def test_hostile_waiver_selector_escaped(hostile) -> None:
    page, _result, _board = hostile
    # the stale waiver's selector carries the hostile net: shown as text in the waiver table
    assert "net: &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&#34;&#39;&amp;" in page


def test_safe_json_escapes_and_round_trips() -> None:
    value = {"a": "</script><!--<script>", "b": "x\u2028y\u2029z&", "n": float("nan"), "t": (1, 2)}
    text = str(html.safe_json(value))
    assert not set("<>&\u2028\u2029") & set(text)
    back = json.loads(text)
    assert back == {"a": "</script><!--<script>", "b": "x\u2028y\u2029z&", "n": None, "t": [1, 2]}


def test_autoescape_is_on() -> None:
    env = html_template.environment()
    assert env.autoescape is True
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


# ---------------------------------------------------------------------------------------------
# self-contained: no request can leave the file
# ---------------------------------------------------------------------------------------------


#: elements that could load something, run something or navigate
_LOADING_TAGS = {
    "link",
    "img",
    "image",
    "iframe",
    "frame",
    "object",
    "embed",
    "video",
    "audio",
    "source",
    "base",
    "use",
    "foreignobject",
    "track",
    "picture",
    "meta-refresh",
    "applet",
}


def _tags(page: str) -> list[str]:
    """Every real tag of the page (escaped user text has no raw '<', so it is never a tag)."""
    return re.findall(r"<[a-zA-Z][^>]*>", page)


def test_no_external_references(hostile) -> None:
    page, _result, _board = hostile
    # the References section prints the cited publications' URLs as text (never as a link or a
    # resource); nothing else on the page may name an external address
    low = re.sub(r'<section id="references".*?</section>', "", page, flags=re.S).lower()
    assert "http://" not in low and "https://" not in low
    low = page.lower()
    names = {re.match(r"<([a-zA-Z][a-zA-Z0-9]*)", t).group(1).lower() for t in _tags(page)}
    assert not names & _LOADING_TAGS, names & _LOADING_TAGS
    for tag in _tags(page):
        for attr, value in re.findall(r"\s(src|href|xlink:href|action|srcset)=\"([^\"]*)\"", tag):
            assert attr == "href" and value.startswith("#"), tag
    assert "@import" not in low
    # url(...) only as in-document fragment references (SVG patterns)
    assert all(u.startswith("#") for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", page))
    # the CSP forbids fetches even if something slipped through
    assert "connect-src 'none'" in page and "default-src 'none'" in page


# ---------------------------------------------------------------------------------------------
# content: counts, verdict, classification, stack-up, waivers, cannot-verify
# ---------------------------------------------------------------------------------------------


def test_counts_and_verdict(hostile) -> None:
    page, result, _board = hostile
    # the severity counters hold the open findings; the waived ones have a grey counter
    sev = Counter(f.severity.value for f in result.findings if f.status != Status.WAIVED)
    status = Counter(f.status.value for f in result.findings)
    # hand-checkable: 60 findings, r = k % 10 -> 6 cannot_verify, 6 waived
    assert status["cannot_verify"] == 6 and status["waived"] == 6
    assert f"<b>{sev['error']}</b> errors" in page
    assert f"<b>{sev['warning']}</b> warning" in page
    assert '<li class="c-waived c-waived"' in page and "<b>6</b> waived</li>" in page
    for phrase in (p for _, _, p in result.count_phrases()):  # "46 errors: 40 violations, …"
        n, rest = phrase.split(" ", 1)
        assert f"<b>{n}</b> {rest}</li>" in page
    assert sum(n for _, n, _ in result.count_phrases()) == 60
    assert "<b>60</b> findings in all" in page
    assert 'class="verdict-text">FAIL<' in page
    assert len(_data(page)["findings"]) == len(result.findings) == 60


def test_pass_when_no_unwaived_error() -> None:
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 0)
    page = html.render(result, board)
    assert 'class="verdict-text">PASS<' in page
    assert "no unwaived error violation" in page
    assert len(_data(page)["findings"]) == 0


def test_banner_metadata(hostile) -> None:
    page, result, _board = hostile
    assert result.board_sha256 in page
    assert "2026-11-22T07:00:00Z" in page
    assert "training 1.0" in page  # rule pack name and version
    assert "accel-drc 0.1.0" in page
    assert "overridden by config" in page  # hostile result has classification.source == config
    # overridden: the banner shows what the classifier alone said (its winner share of the votes)
    assert "classifier said training (82 %)" in page


def test_classification_evidence_rows(hostile) -> None:
    page, result, _board = hostile
    table = page[page.index('class="data evidence"') :]
    table = table[: table.index("</table>")]
    assert table.count('<th scope="row">') == len(result.classification.evidence) == 3
    assert "+0.60" in table and "−0.40" in table  # NVLink votes training, layer count against edge


def test_stackup_rows_and_findings_against_layers(hostile) -> None:
    page, result, board = hostile
    rows = stackup_figure.stackup_rows(result, board, result.findings)
    by_name = {r["name"]: r for r in rows}
    # findings on In2.Cu, counted by hand from the generator (layer = k % 8 for k < 60)
    on = [f for f in result.findings if f.layer == "In2.Cu"]
    expect = Counter(
        f.severity.value if f.status == Status.VIOLATION else f.status.value for f in on
    )
    assert by_name["In2.Cu"]["counts"] == dict(expect)
    assert by_name["dielectric 1"]["state"] == "ok"
    # drawn to scale: each fraction is thickness / total
    total = sum(r["thickness_mm"] for r in rows)
    assert math.isclose(by_name["dielectric 2"]["frac"], 0.2 / total)
    assert "undeclared" in page  # In2.Cu foil is None in the generator


def test_cannot_verify_grouped_with_what_to_declare(hostile) -> None:
    """The groups are starter_config's (as the JSON and Markdown reports group them), each with
    its accel-drc.yaml block on the page, escaped."""
    page, result, _board = hostile
    groups = cannot_verify_groups(result.findings)
    assert sum(g["count"] for g in groups) == 6
    for g in groups:
        assert str(escape(g["declare"])) in page
        assert g["yaml"] and str(escape(g["yaml"])) in page


def test_waivers_by_state(hostile) -> None:
    page, _result, _board = hostile
    for state in ("applied", "expired", "stale"):
        assert f'class="w-{state}"' in page


def test_rule_runs_table_shows_pass_and_fail() -> None:
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 3)  # 3 findings: only the first three rules fail
    runs = {r["id"]: r for r in html_rows.rule_runs(result, result.findings)}
    assert runs["training.via_stub.nvlink4"]["outcome"] == "fail"
    assert runs["training.tg"]["outcome"] == "pass"


# ---------------------------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------------------------


def test_pdn_plot_marks_worst_point_in_band() -> None:
    rail = {
        "name": "VCORE",
        "target_ohm": 1e-3,
        "impedance": [
            {"f_hz": 1e4, "z_ohm": 1e-3},
            {"f_hz": 1e6, "z_ohm": 5e-3},
            {"f_hz": 1e8, "z_ohm": 2e-3},
            {"f_hz": 1e9, "z_ohm": 1e-1},  # outside the band: not the worst
        ],
    }
    svg = str(html.pdn_plot(rail, (1e4, 1e8)))
    assert "worst 5 mΩ at 1 MHz" in svg
    assert 'class="worst over"' in svg  # 5 mΩ > 1 mΩ target
    assert "target 1 mΩ" in svg
    # x axis: 1e4..1e9 is 5 decades over 560 px plot width -> 1 MHz at 64 + 2/5*560 = 288
    assert '<circle cx="288.0"' in svg


def test_pdn_plot_under_target_not_flagged() -> None:
    rail = {
        "name": "V",
        "target_ohm": 1.0,
        "impedance": [{"f_hz": 1e4, "z_ohm": 0.1}, {"f_hz": 1e6, "z_ohm": 0.2}],
    }
    svg = str(html.pdn_plot(rail, None))
    assert 'class="worst"' in svg and "▲" not in svg


def test_stub_histogram_counts_and_limit() -> None:
    stubs = [0.1, 0.1, 0.2, 0.3, 0.45, 0.5]
    svg = str(html.stub_histogram("pcie5", stubs, 0.25))
    assert "6 vias on pcie5, limit 0.25 mm, 3 over" in svg
    bars = re.findall(r"(\d+) vias</title>", svg)
    assert sum(int(b) for b in bars) == 6
    assert "limit 0.25 mm (9.8 mil)" in svg


def test_via_stub_series_read() -> None:
    from accel_drc.extras import ViaStubSeries

    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 0)
    result.extras["via_stubs"] = {
        "nvlink4": ViaStubSeries(stubs_mm=(0.1, 0.3), limit_mm=0.2, count=3, unknown=1)
    }
    [s] = html_rows.via_stub_rows(result)
    assert (s["signal"], s["count"], s["over"], s["limit"]) == ("nvlink4", 2, 1, 0.2)
    assert s["notes"][0] == "1 with unknown stub"


def test_fmt_si() -> None:
    assert html.fmt_si(1.5e-4, "Ω") == "150 µΩ"
    assert html.fmt_si(1e8, "Hz", 2) == "100 MHz"
    assert html.fmt_si(None) == "—"


# ---------------------------------------------------------------------------------------------
# board SVG
# ---------------------------------------------------------------------------------------------


def _tiny_board(**kw) -> Board:
    layers = (CopperLayer(0, "F.Cu", "F.Cu"), CopperLayer(1, "B.Cu", "B.Cu"))
    ring = np.array([[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], float)
    return Board(
        source="t.kicad_pcb",
        format="kicad_pcb",
        copper_layers=layers,
        outline=Outline(rings=(ring,), bbox=(0, 0, 10, 10)),
        **kw,
    )


def test_tracks_chain_into_one_subpath() -> None:
    # three connected segments on F.Cu of width 0.2 mm: one "M" and three relative steps
    a = np.array([[1.0, 1.0], [2.0, 1.0], [2.0, 3.0]])
    b = np.array([[2.0, 1.0], [2.0, 3.0], [4.5, 3.0]])
    tracks = Tracks(
        start=a,
        end=b,
        mid=np.full((3, 2), np.nan),
        width=np.full(3, 0.2),
        layer=np.zeros(3, np.int16),
        net=np.ones(3, np.int32),
    )
    svg = render_board(_tiny_board(tracks=tracks)).svg
    m = re.search(r'<path class="trk" stroke="[^"]+" stroke-width="(\d+)" d="([^"]+)"', svg)
    assert m.group(1) == "20"  # 0.2 mm on the 0.01 mm grid
    assert m.group(2) == "M100 100l100 0 0 200 250 0"


def test_rotated_pad_corners() -> None:
    # a 2 x 1 mm rect pad at (5, 5) rotated 90°: KiCad turns it counter-clockwise on screen
    pad = Pad("1", 0, "smd", "rect", 5.0, 5.0, 2.0, 1.0, rotation=90.0, copper_layers=(0,))
    fp = Footprint("R1", "10k", "R", "F.Cu", 5.0, 5.0, pads=(pad,))
    svg = render_board(_tiny_board(footprints=(fp,))).svg
    d = re.search(r'<path class="pad" fill="[^"]+" d="([^"]+)"', svg).group(1)
    # corner (-1, -0.5) -> (x + u cos + v sin, y - u sin + v cos) = (4.5, 6.0)
    assert d == "M450 600l0 -200 100 0 0 200z"


def test_zone_with_bridged_hole_is_evenodd_and_simplified() -> None:
    outer = [(1, 1), (9, 1), (9, 9), (1, 9)]
    circle = [(5 + math.cos(t), 5 + math.sin(t)) for t in np.linspace(0, -2 * math.pi, 400)]
    poly = np.array([*outer, outer[0], *circle, outer[0]], float)
    zone = Zone(net=1, net_name="GND", layers=(1,), filled={1: (poly,)})
    svg = render_board(_tiny_board(zones=(zone,))).svg
    d = re.search(r'<path class="zone" fill="[^"]+" d="([^"]+)"', svg).group(1)
    steps = len(d.split(" "))
    assert steps < 200  # 400 circle points simplified at 0.02 mm tolerance
    assert 'class="cu" data-layer="1"' in svg


def test_zone_ring_repeated_on_layers_is_simplified_once(monkeypatch) -> None:
    """A fill poured alike on two layers (the ground planes of a real board) is simplified once
    (issue 18) and each layer draws the same outline it draws when simplified on its own; a
    ring that differs in one coordinate is simplified for itself."""
    import shapely

    outer = [(1, 1), (9, 1), (9, 9), (1, 9)]
    circle = [(5 + math.cos(t), 5 + math.sin(t)) for t in np.linspace(0, -2 * math.pi, 400)]
    poly = np.array([*outer, outer[0], *circle, outer[0]], float)
    other = poly.copy() * 0.5
    other[2, 0] += 0.25
    filled = {0: (poly, other), 1: (poly.copy(),)}
    zone = Zone(net=1, net_name="GND", layers=(0, 1), filled=filled)
    sizes: list[int] = []
    real = shapely.simplify

    def counting(geoms, *a, **k):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        sizes.append(len(geoms))
        return real(geoms, *a, **k)

    monkeypatch.setattr(shapely, "simplify", counting)
    pattern = r'data-layer="(\d)"[^>]*><path class="zone" fill="[^"]+" d="([^"]+)"'
    paths = dict(re.findall(pattern, render_board(_tiny_board(zones=(zone,))).svg))
    assert sum(sizes) == 2  # poly once for both layers, other once
    assert set(paths) == {"0", "1"}
    for layer, rings in filled.items():
        z = Zone(net=1, net_name="GND", layers=(layer,), filled={layer: rings})
        alone = dict(re.findall(pattern, render_board(_tiny_board(zones=(z,))).svg))
        assert paths[str(layer)] == alone[str(layer)]
    assert paths["0"].startswith(paths["1"]) and paths["0"] != paths["1"]


def test_grid_coarsens_on_huge_boards() -> None:
    assert grid_for(100.0) == 0.01
    assert grid_for(700.0) == 0.02  # 70,000 steps would exceed 40,000


def test_layer_names_escaped_in_svg() -> None:
    layers = (CopperLayer(0, "F.Cu", '"><x>'), CopperLayer(1, "B.Cu", "B.Cu"))
    board = Board(source="x", format="kicad_pcb", copper_layers=layers)
    board2 = make_board(n_tracks=8, n_vias=1, zones=False)
    result = make_result(board2, 1)
    page = html.render(result, board)
    assert '"><x>' not in page


# ---------------------------------------------------------------------------------------------
# size limits
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ten_thousand_findings_under_15_mb() -> None:
    board = make_board(layers=16, size=(450.0, 400.0), n_tracks=120_000, n_vias=20_000)
    result = make_result(board, 10_000)
    page = html.render(result, board)
    size = len(page.encode("utf-8"))
    assert size < 15 * 1024 * 1024, size
    assert len(_data(page)["findings"]) == 10_000


@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_fixture_board_reports(name: str, tmp_path) -> None:
    """Every real fixture board, through the real pipeline when it is there."""
    from accel_drc.readers import read_board

    path = FIXTURE_BOARDS[name]
    board = read_board(str(path))
    result = _pipeline_result(board, path) or make_result(board, 50)
    out = tmp_path / "r.html"
    html.write(out, result, board)
    size = out.stat().st_size
    assert size < 1_500_000, size  # small real boards give small reports
    page = out.read_text(encoding="utf-8")
    assert page.count('class="cu" data-layer=') == board.layer_count
    data = _data(page)
    assert len(data["findings"]) == len(result.findings)
    total = len(result.findings)
    assert f"<b>{total}</b> finding{'' if total == 1 else 's'} in all" in page
    # every rule that ran is listed, pass or not
    assert page.count('<th scope="row"><code>') == len(result.rules)
    # the stack-up table has one row per copper and dielectric layer the board declares
    if board.stackup is not None:
        drawn = [sl for sl in board.stackup.layers if sl.kind not in ("silkscreen", "solderpaste")]
        table = page[page.index('class="data stackup-table"') :]
        table = table[: table.index("</table>")]
        assert table.count("<tr class=") == len(drawn)


@pytest.mark.slow
def test_vme_wren_report_under_5_mb(tmp_path) -> None:
    path = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
    if not path.exists():
        pytest.skip("vme-wren benchmark board not present")
    from accel_drc.readers import read_board

    board = read_board(str(path))
    result = _pipeline_result(board, path) or make_result(board, 500)
    out = tmp_path / "vme.html"
    html.write(out, result, board)
    assert out.stat().st_size < 5 * 1024 * 1024, out.stat().st_size


def _pipeline_result(board: Board, path) -> object | None:
    """The real check result when the pipeline exists (else the caller uses a synthetic one)."""
    try:
        from accel_drc.pipeline import check_board
    except ImportError:
        return None
    return check_board(board, board_file=str(path))


def test_severity_enum_values_in_json(hostile) -> None:
    page, result, _board = hostile
    data = _data(page)
    f = data["fields"]
    assert {r[f.index("severity")] for r in data["findings"]} <= {s.value for s in Severity}
    assert {r[f.index("status")] for r in data["findings"]} == {s.value for s in Status}


def test_evidence_compacted_but_small_facts_kept() -> None:
    ev = {
        "f_res_hz": 52517654644.371376,
        "nets": [f"NET_{i}" for i in range(300)],
        "stub_mm": 0.785,
    }
    out = embedded_json.compact_evidence(ev)
    assert out["f_res_hz"] == 52517700000.0  # 6 significant digits
    assert out["stub_mm"] == 0.785
    assert out["nets"] == "(300 items left out of the report)"
    assert len(json.dumps(out, separators=(",", ":"))) <= embedded_json.EVIDENCE_MAX
    assert html.evidence_budget(10) == embedded_json.EVIDENCE_MAX
    assert html.evidence_budget(10_000) == 300
    assert html.evidence_budget(10**6) == 200
    many = {f"key_{i}": float(i) + 0.5 for i in range(40)}  # 40 short values, ~560 chars
    small = embedded_json.compact_evidence(dict(many), 300)
    assert len(json.dumps(small, separators=(",", ":"))) <= 300
    assert small["key_0"] == 0.5 and "key_39" not in small  # the first facts are kept
    assert small["(left out)"].startswith("key_")


def test_declare_is_its_own_field_not_repeated_in_evidence(hostile) -> None:
    page, result, _board = hostile
    data = _data(page)
    f = data["fields"]
    cv = [r for r in data["findings"] if r[f.index("status")] == "cannot_verify"]
    assert cv and all(r[f.index("declare")].startswith("declare the foil grade") for r in cv)
    assert all("declare" not in (r[f.index("evidence")] or {}) for r in data["findings"])


def test_cli_check_writes_this_report(tmp_path, capsys) -> None:
    """``accel-drc check BOARD --html F`` writes the real report (not a placeholder), and its
    JSON findings equal the ``--json`` findings of the same run."""
    from accel_drc.cli import main

    board = FIXTURE_BOARDS["crosslink-nx-video-converter"]
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    code = main(["check", str(board), "--html", str(out), "--json", str(js)])
    capsys.readouterr()
    assert code in (0, 5)
    page = out.read_text(encoding="utf-8")
    assert 'id="report-data"' in page and "Content-Security-Policy" in page
    data = _data(page)
    doc = json.loads(js.read_text(encoding="utf-8"))
    f = data["fields"]
    assert [r[f.index("rule")] for r in data["findings"]] == [x["rule"] for x in doc["findings"]]
    assert ('verdict-text">FAIL<' in page) == (code == 5)
    assert doc["summary"]["verdict"] in ("fail", "unverified", "pass")
    want = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}[doc["summary"]["verdict"]]
    assert f'verdict-text">{want}<' in page


def test_non_finite_geometry_is_skipped_not_drawn() -> None:
    """A NaN coordinate (a reader bug, a broken file) must not turn into a huge integer."""
    a = np.array([[1.0, 1.0], [np.nan, 2.0]])
    b = np.array([[2.0, 1.0], [3.0, 3.0]])
    tracks = Tracks(
        start=a,
        end=b,
        mid=np.full((2, 2), np.nan),
        width=np.full(2, 0.2),
        layer=np.zeros(2, np.int16),
        net=np.ones(2, np.int32),
    )
    svg = render_board(_tiny_board(tracks=tracks)).svg
    d = re.search(r'<path class="trk" stroke="[^"]+" stroke-width="\d+" d="([^"]+)"', svg).group(1)
    assert d == "M100 100l100 0"


# ---------------------------------------------------------------------------------------------
# issue 5 review: dielectric badges, banner, stack-up labels, hatching, waiver cells
# ---------------------------------------------------------------------------------------------


def test_dielectric_findings_are_a_layer_filter_option(hostile) -> None:
    """A laminate_df finding sits on a copper layer but names the lossy dielectric in its
    evidence; the dielectric's badge counts it, so the layer filter must offer the dielectric
    and the row must carry its name (the page matches f.layer or these names)."""
    page, result, board = hostile
    lossy = [f for f in result.findings if (f.evidence or {}).get("dielectric") == LOSSY_DIELECTRIC]
    assert lossy and all(f.check == "laminate_df" and f.layer != LOSSY_DIELECTRIC for f in lossy)
    select = page[page.index('id="f-layer"') :]
    select = select[: select.index("</select>")]
    assert f'<option value="{LOSSY_DIELECTRIC}">' in select
    data = _data(page)
    f = data["fields"]
    tagged = [r[f.index("i")] for r in data["findings"] if r[f.index("slayers")]]
    assert tagged == [result.findings.index(x) for x in lossy]
    assert all(
        r[f.index("slayers")] == [LOSSY_DIELECTRIC]
        for r in data["findings"]
        if r[f.index("slayers")]
    )
    # the badge counts exactly these findings
    rows = {r["name"]: r for r in stackup_figure.stackup_rows(result, board, result.findings)}
    assert sum(rows[LOSSY_DIELECTRIC]["counts"].values()) == len(lossy)


def test_banner_counters_read_as_sentences(hostile) -> None:
    """The counters read as sentences per severity, errors first ("11 errors: 10 violations,
    1 cannot verify"), over the open findings only, the waived ones on a grey counter of their
    own; and they agree with the JSON report's summary (open_by_severity, waived_by_config)."""
    from accel_drc.report.json_report import summary_counts

    page, result, _board = hostile
    summary = summary_counts(result)
    counts = page[page.index('<ul class="counts"') :]
    counts = counts[: counts.index("</ul>")]
    by = {sev: Counter(f.status.value for f in result.findings if f.severity.value == sev)
          for sev in ("error", "warning", "info")}  # fmt: skip
    n = summary["open_by_severity"]["error"]
    assert by["error"]["waived"] > 0  # waived errors exist in the generator: not in the count
    assert n == by["error"]["violation"] + by["error"]["cannot_verify"]
    parts = [
        f"{k} {w if k == 1 else ws}"
        for st, w, ws in (
            ("violation", "violation", "violations"),
            ("cannot_verify", "cannot verify", "cannot verify"),
        )
        if (k := by["error"][st])
    ]
    assert f"<b>{n}</b> errors: {', '.join(parts)}</li>" in counts
    assert counts.index("errors:") < counts.index("</b> warning") < counts.index("</b> waived")
    assert f"<b>{summary['waived_by_config']}</b> waived</li>" in counts
    assert summary["waived_by_config"] == summary["by_status"]["waived"]
    assert summary["excluded_in_kicad"] == 0 and "excluded in KiCad" not in counts
    unwaived = len(result.unwaived_errors())
    assert f'class="verdict-why">{unwaived} unwaived errors<' in page
    assert f"<b>{summary['open_by_severity']['warning']}</b> warning" in counts


def test_banner_meta_has_full_text_and_does_not_clip() -> None:
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 4)
    result.rule_packs = [
        {"name": f"pack-{i}", "version": f"{i}.0.{i}", "file": "x.yaml"} for i in range(6)
    ]
    page = html.render(result, board)
    assert f'<dd class="mono sha" title="{"ab" * 32}">' in page
    packs = ", ".join(f"pack-{i} {i}.0.{i}" for i in range(6))
    assert f'<dd class="packs" title="{packs}">' in page
    css = (html_template.TEMPLATES / "report.css").read_text(encoding="utf-8")
    meta_dd = re.search(r"\.meta dd \{([^}]*)\}", css).group(1)
    assert "nowrap" not in meta_dd and "ellipsis" not in meta_dd
    assert "word-break: break-all" in re.search(r"\.meta dd\.sha \{([^}]*)\}", css).group(1)


def test_place_labels_keeps_order_gap_and_bounds() -> None:
    wanted = [1.0, 2.0, 2.5, 50.0, 99.0, 99.5]
    ys = html.place_labels(wanted, 5.0, 100.0, 10.0)
    assert ys == [5.0, 15.0, 25.0, 50.0, 90.0, 100.0]
    assert html.place_labels([30.0, 70.0], 5.0, 100.0, 10.0) == [30.0, 70.0]  # room: untouched


def _stackup_labels(layers: int) -> tuple[list, str, list, list[float]]:
    """(stack-up rows, the drawing, its (y, text) labels, label y positions) of a synthetic
    board with ``layers`` copper layers and 80 findings."""
    board = make_board(layers=layers, n_tracks=200, n_vias=20, zones=False)
    result = make_result(board, 80, rails=False)
    rows = stackup_figure.stackup_rows(result, board, result.findings)
    svg = str(html.stackup_svg(rows))
    labels = re.findall(r'<text class="sl-label" x="[\d.]+" y="([\d.]+)">([^<]*)</text>', svg)
    return rows, svg, labels, [float(y) for y, _ in labels]


def test_stackup_labels_of_many_layers_do_not_overlap() -> None:
    """26 copper layers (53 stack-up rows): labels at least a line apart, inside the drawing,
    every layer with findings and every copper layer labelled, a leader line per label."""
    rows, svg, labels, ys = _stackup_labels(26)
    assert ys == sorted(ys)
    assert min(b - a for a, b in zip(ys, ys[1:])) >= stackup_figure.LABEL_H - 0.01
    height = 53 * stackup_figure.LABEL_H  # the drawing grows to give each of the 53 layers a line
    assert ys[0] > 0 and ys[-1] <= height + 4
    assert f'viewBox="0 0 300 {int(height) + 24}"' in svg
    names = {t.lstrip("✖⚠? ") for _, t in labels}
    copper = {r["name"] for r in rows if r["kind"] == "copper"}
    flagged = {r["name"] for r in rows if r["state"] in ("error", "warning", "cannot_verify")}
    assert len(rows) == len(labels) == 53
    assert copper | flagged <= names
    assert svg.count('class="sl-leader"') == len(labels)
    # 40 copper layers (81 rows): 60 lines, the layers with findings and the copper ones first
    rows, svg, labels, ys = _stackup_labels(40)
    assert len(rows) == 81 and len(labels) == stackup_figure.LABEL_ROWS_MAX
    assert min(b - a for a, b in zip(ys, ys[1:])) >= stackup_figure.LABEL_H - 0.01
    names = {t.lstrip("✖⚠? ") for _, t in labels}
    flagged = {r["name"] for r in rows if r["state"] in ("error", "warning", "cannot_verify")}
    assert {r["name"] for r in rows if r["kind"] == "copper"} | flagged <= names


def test_over_limit_bars_are_hatched() -> None:
    svg = str(html.stub_histogram("pcie5", [0.1, 0.1, 0.2, 0.3, 0.45, 0.5], 0.25))
    over = re.findall(r'<rect class="bar over" (x="[\d.]+" y="[\d.]+")', svg)
    hatched = re.findall(
        r'<rect class="bar-hatch" (x="[\d.]+" y="[\d.]+")[^>]*fill="url\(#hatch\)"', svg
    )
    assert over and hatched == over  # one hatch over each over-limit bar, none elsewhere
    # the pattern is defined once per page, also when no stack-up is drawn
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 4, rails=False)
    result.extras.pop("stackup")
    page = html.render(result, board)
    assert page.count('<pattern id="hatch"') == 1
    assert 'class="bar-hatch"' in page and "bars over the limit are hatched" in page


def test_waiver_cells_never_say_none() -> None:
    """Rows as waivers.apply_waivers writes them: expires None, a rule-only stale waiver."""
    board = make_board(n_tracks=80, n_vias=10, zones=False)
    result = make_result(board, 4, rails=False)
    result.waivers = [
        {
            "rule": "training.tg",
            "net": None,
            "layer": None,
            "uuid": None,
            "reason": "board Tg declared by the fab",
            "owner": None,
            "expires": None,
            "state": "stale",
            "matched": 0,
            "line": 12,
        }
    ]
    page = html.render(result, board)
    table = page[page.index('class="data waivers"') :]
    table = table[: table.index("</table>")]
    row = re.search(r'<tr class="w-stale">(.*?)</tr>', table, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
    assert cells == ["∅ stale", "training.tg", "any", "board Tg declared by the fab", "—", "—", "0"]
    assert "None" not in table
