"""The report writers' fast paths (issue 18) give exactly what the slow ones gave.

Each fast path is compared with the straightforward implementation it replaced (kept here as the
reference): the JSON length of a value with ``len(json.dumps(...))``, the evidence compaction and
its one-walk rounding with the two walks, the board view's vectorised path text with the
per-chain formatting, the vectorised ring areas with the shoelace of ``geometry.ring_area``, and
the record-per-line JSON with ``json.dumps(indent=2)`` (same JSON value).  Random cases are
seeded; each property also has a hand-made case that fails when the edge it names breaks.
"""

from __future__ import annotations

import enum
import json
import math
import random
import re
from typing import Any

import numpy as np
import pytest
from accel_drc.geometry import ring_area
from accel_drc.report import board_svg, embedded_json, html, html_template, json_report, sarif


class _Colour(str, enum.Enum):
    RED = "red"


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random evidence value: scalars of every JSON kind (and numpy's), nested containers."""
    kinds = ["int", "float", "str", "bool", "none", "big", "np", "nan", "enum", "tiny"]
    if depth < 3:
        kinds += ["list", "dict", "tuple"] * 2
    k = rng.choice(kinds)
    if k == "int":
        return rng.randint(-(10**6), 10**6)
    if k == "big":
        return rng.randint(-(10**30), 10**30)
    if k == "float":
        return rng.uniform(-1e12, 1e12) * 10 ** rng.randint(-15, 15)
    if k == "tiny":
        return rng.choice([0.0, -0.0, 1e-7, 5e-324, 1e22, 123456789.0, 0.1])
    if k == "str":
        return "".join(rng.choice('ab <>&"\\\n\té€Ω\u2028😀') for _ in range(rng.randint(0, 12)))
    if k == "bool":
        return rng.random() < 0.5
    if k == "none":
        return None
    if k == "np":
        return rng.choice(
            [np.float64(rng.random()), np.int64(rng.randint(-99, 99)), np.float32(0.25)]
        )
    if k == "nan":
        return rng.choice([math.nan, math.inf, -math.inf])
    if k == "enum":
        return _Colour.RED
    n = rng.randint(0, 6)
    if k == "dict":
        return {
            f"k{i}{rng.choice(['', 'é', '<'])}": _random_value(rng, depth + 1) for i in range(n)
        }
    seq = [_random_value(rng, depth + 1) for _ in range(n)]
    return tuple(seq) if k == "tuple" else seq


# ---------------------------------------------------------------------------------------------
# HTML: evidence
# ---------------------------------------------------------------------------------------------


def _reference_compact(ev: Any, limit: int) -> Any:
    """``_compact_evidence`` as it was: every size by ``json.dumps``."""
    if not isinstance(ev, dict) or not ev:
        return ev or None
    ev = embedded_json.round_floats(ev)

    def size(v: Any) -> int:
        return len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))

    if size(ev) <= limit:
        return ev
    for k, v in ev.items():
        if size(v) > limit // 2:
            ev[k] = (
                f"({len(v)} items left out of the report)"
                if isinstance(v, (list, dict))
                else "(long value left out of the report)"
            )
    if size(ev) <= limit:
        return ev
    out: dict[str, Any] = {}
    used, left = 2, []
    for k, v in ev.items():
        need = size(k) + size(v) + 2
        if used + need <= limit - 48:
            out[k] = v
            used += need
        else:
            left.append(k)
    names = ", ".join(left)
    out["(left out)"] = names if len(names) <= 36 else names[:35].rsplit(",", 1)[0] + ", ..."
    return out


def test_json_len_is_the_length_json_dumps_writes() -> None:
    rng = random.Random(18)
    values = [True, False, None, 0, -1, 10**40, 1e-7, 1e22, -0.0, "", 'a"\\\n<é😀', _Colour.RED]
    values += [embedded_json.jsonable(_random_value(rng)) for _ in range(3000)]  # what it measures
    for v in values:
        want = len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))
        assert embedded_json.json_len(v) == want, v


def test_plain_rounded_is_round_floats_of_jsonable() -> None:
    rng = random.Random(19)
    values = [np.array([1.0, np.nan]), {1: 2.0, None: {3}}, (math.inf, 1 / 3)]
    values += [_random_value(rng) for _ in range(3000)]
    for v in values:
        assert repr(embedded_json.plain_rounded(v)) == repr(
            embedded_json.round_floats(embedded_json.jsonable(v))
        ), v


@pytest.mark.parametrize("limit", [200, 300, 800])
def test_compact_evidence_as_before(limit: int) -> None:
    """Same kept keys, same notes, same order as the implementation that measured every size
    with ``json.dumps`` (random evidence around the budget, long lists and nested dicts)."""
    rng = random.Random(limit)
    for _ in range(1500):
        ev = {f"key_{i}": _random_value(rng) for i in range(rng.randint(0, 30))}
        if rng.random() < 0.3:
            ev["nets"] = [f"NET_{i}" for i in range(rng.randint(0, 200))]
        plain = embedded_json.jsonable(ev)
        want = _reference_compact(json.loads(json.dumps(plain)), limit)
        got = embedded_json.compact_evidence(embedded_json.plain_rounded(ev), limit, rounded=True)
        assert json.dumps(got) == json.dumps(want)
        again = embedded_json.compact_evidence(json.loads(json.dumps(plain)), limit)
        assert json.dumps(again) == json.dumps(want)


# ---------------------------------------------------------------------------------------------
# HTML: board view path text
# ---------------------------------------------------------------------------------------------


def _reference_ring_path(pts: np.ndarray) -> str:
    if len(pts) < 2:
        return ""
    d = np.diff(pts, axis=0)
    d = d[np.any(d != 0, axis=1)]
    if len(d) < 2:
        return ""
    flat = d.ravel().tolist()
    return f"M{int(pts[0, 0])} {int(pts[0, 1])}l" + " ".join(map(str, flat)) + "z"


def _reference_polyline(pts: np.ndarray) -> str:
    d = np.diff(pts, axis=0)
    d = d[np.any(d != 0, axis=1)] if len(d) else d
    head = f"M{int(pts[0, 0])} {int(pts[0, 1])}"
    if not len(d):
        return head + "h0"
    return head + "l" + " ".join(map(str, d.ravel().tolist()))


def _reference_chain_segments(a: np.ndarray, b: np.ndarray) -> str:
    """Segments a[i] -> b[i], chained while each starts where the last ended, one at a time."""
    parts: list[str] = []
    i, n = 0, len(a)
    while i < n:
        j = i + 1
        while j < n and tuple(a[j]) == tuple(b[j - 1]):
            j += 1
        d = (b[i:j] - a[i:j]).tolist()
        steps = [f"{dx} {dy}" for dx, dy in d if dx or dy]
        x, y = a[i].tolist()
        parts.append(f"M{x} {y}l" + " ".join(steps) if steps else f"M{x} {y}h0")
        i = j
    return "".join(parts)


def _grid_points(rng: np.random.Generator, n: int, scale: int) -> np.ndarray:
    return rng.integers(-scale, scale, size=(n, 2)).astype(np.int64)


def test_chain_segments_as_one_at_a_time() -> None:
    rng = np.random.default_rng(18)
    for _ in range(200):
        n = int(rng.integers(0, 60))
        scale = int(rng.choice([2, 50, 100_000]))  # dots, short steps, numbers beyond the table
        a = _grid_points(rng, n, scale)
        b = _grid_points(rng, n, scale)
        link = rng.random(n) < 0.6
        a[1:][link[1:]] = b[:-1][link[1:]]  # chains
        dot = rng.random(n) < 0.2
        b[dot] = a[dot]  # zero-length segments
        assert board_svg._chain_segments(a, b) == _reference_chain_segments(a, b)


def test_ring_and_polyline_paths_as_before() -> None:
    rng = np.random.default_rng(19)
    cases = [np.zeros((0, 2), np.int64), np.array([[5, 5]]), np.array([[1, 1], [1, 1], [1, 1]])]
    cases += [np.array([[0, 0], [10, 0], [10, 0]]), np.array([[-5000, 7], [-4000, 7], [9, 9]])]
    cases += [
        _grid_points(rng, int(rng.integers(1, 40)), int(rng.choice([1, 30, 10**6])))
        for _ in range(300)
    ]
    for pts in cases:
        assert board_svg._ring_path(pts) == _reference_ring_path(pts)
        if len(pts):
            assert board_svg._polyline_path(pts) == _reference_polyline(pts)


def test_rings_text_is_every_ring_path_joined() -> None:
    """Rings of fewer than 3 points or 2 steps are left out, as the per-ring path leaves them."""
    rng = np.random.default_rng(20)
    q = 0.01
    for _ in range(100):
        rings = []
        for _ in range(int(rng.integers(1, 12))):
            n = int(rng.integers(1, 30))
            pts = rng.uniform(-50, 50, size=(n, 2)) * rng.choice([1e-4, 1.0])  # some collapse
            rings.append(pts)
        coords = np.concatenate(rings)
        index = np.repeat(np.arange(len(rings)), [len(r) for r in rings])
        want = "".join(
            _reference_ring_path(np.round(r / q).astype(np.int64)) if len(r) >= 3 else ""
            for r in rings
        )
        assert board_svg._rings_text(coords, index, len(rings), q) == want


def test_via_paths_are_dots() -> None:
    """One dot per grid point and diameter class, stacked vias once, as ``M x y h0``."""
    from types import SimpleNamespace

    from accel_drc.model import Vias

    vias = Vias(
        pos=np.array([[1.0, 2.0], [1.0, 2.0], [-30.0, 40.5], [500.0, 0.0]]),
        diameter=np.array([0.6, 0.6, 0.6, 0.3]),
        drill=np.array([0.3, 0.3, 0.3, 0.15]),
    )
    got = board_svg._via_paths(SimpleNamespace(vias=vias), 0.01)  # type: ignore[arg-type]
    assert got == [(30, "M50000 0h0"), (60, "M-3000 4050h0M100 200h0")]


def test_ring_areas_match_the_shoelace() -> None:
    rng = np.random.default_rng(21)
    rings = [rng.uniform(-100, 100, size=(int(rng.integers(3, 500)), 2)) for _ in range(50)]
    rings.append(np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]]))  # 2 mm²
    got = board_svg._ring_areas(rings)
    assert got[-1] == 2.0
    for r, a in zip(rings, got):
        assert a == pytest.approx(ring_area(r), rel=1e-12, abs=1e-12)
    assert len(board_svg._ring_areas([])) == 0


def test_int_strings_inside_and_beyond_the_table() -> None:
    v = np.array([0, -1, 4096, -4096, 4097, -4097, 10**12, -(10**12)], dtype=np.int64)
    assert board_svg._int_strings(v).tolist() == [str(x) for x in v.tolist()]


# ---------------------------------------------------------------------------------------------
# JSON and SARIF text
# ---------------------------------------------------------------------------------------------


def _reference_dumps(doc: Any) -> Any:
    """The JSON value ``json.dumps(indent=2)`` wrote (NaN/inf -> null through ``_clean``)."""
    try:
        text = json.dumps(
            doc, indent=2, ensure_ascii=False, allow_nan=False, default=json_report._default
        )
    except ValueError:
        text = json.dumps(json_report._clean(doc), indent=2, ensure_ascii=False, allow_nan=False)
    return json.loads(text)


def test_fast_dumps_same_json_value() -> None:
    rng = random.Random(22)
    docs: list[Any] = [{}, [], 1, "x", None, {"a": [{"b": 1}]}, {"f": [{"n": 1}, {"n": math.nan}]}]
    docs += [
        {"doc": _random_value(rng), "rows": [_random_value(rng) for _ in range(5)]}
        for _ in range(400)
    ]
    for doc in docs:
        assert json.loads(json_report.fast_dumps(doc)) == _reference_dumps(doc)
        assert json.loads(json_report.fast_dumps(doc, indent=None)) == _reference_dumps(doc)


def test_fast_dumps_one_record_per_line() -> None:
    """A dict in a list of several is one line; a lone record and the top level are indented
    as ``json.dumps(indent=2)`` indents them."""
    doc = {
        "tool": {"name": "accel-drc"},
        "findings": [{"rule": "a", "ev": {"x": [1, 2]}}, {"rule": "b", "ev": {}}],
        "one": [{"k": 1}],
    }
    text = json_report.fast_dumps(doc)
    lines = text.splitlines()
    assert '    {"rule": "a", "ev": {"x": [1, 2]}},' in lines
    assert '    {"rule": "b", "ev": {}}' in lines
    assert '  "tool": {' in lines and '    "name": "accel-drc"' in lines
    assert '      "k": 1' in lines  # the lone record is expanded
    assert json.loads(text) == doc


def test_fast_dumps_non_string_keys_as_json_writes_them() -> None:
    doc = {"m": {1: "a", 2.5: "b", None: "c", False: "d"}}
    assert json.loads(json_report.fast_dumps(doc)) == json.loads(json.dumps(doc))


def test_uuid_lines_quoted_unquoted_and_upper_case(tmp_path) -> None:
    u = ["0b6a3f2e-1111-4222-8333-944455556666", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"]
    text = (
        "(kicad_pcb\n"
        f'  (segment (uuid "{u[1].upper()}"))\n'  # upper case in the file
        "  (via\n"
        f"    (uuid {u[0]}))\n"  # unquoted (KiCad 6)
        f'  (segment (uuid "{u[0]}"))\n'  # a second appearance: the first one counts
        ")\n"
    )
    board = tmp_path / "b.kicad_pcb"
    board.write_text(text)
    assert sarif.uuid_lines(str(board), [*u, "nope"]) == {u[1]: 2, u[0]: 4}
    want = {}
    for m in re.finditer(rb'\(uuid "?([0-9a-fA-F-]{36})"?\)', text.encode()):
        want.setdefault(m.group(1).decode().lower(), text[: m.start()].count("\n") + 1)
    assert sarif.uuid_lines(str(board), list(want)) == want


# ---------------------------------------------------------------------------------------------
# HTML: the template compiled ahead
# ---------------------------------------------------------------------------------------------


def test_template_compiled_ahead_is_current() -> None:
    """``_report_template.py`` is what jinja2 makes of ``report.html.j2`` today.  When this
    fails, the template (or jinja2) changed: regenerate it with ``python -m accel_drc.regenerate``."""
    shipped = html_template.TEMPLATE_MODULE.read_text(encoding="utf-8")
    assert shipped == html.template_module_source()


def test_template_compiled_ahead_renders_what_jinja_compiles() -> None:
    """The shipped module is the one in use, and the page is byte-identical to the one the
    template compiled at run time renders (hostile text included: autoescape holds)."""
    from browser.synthetic import make_board, make_result

    board = make_board(hostile=True, n_tracks=300, n_vias=40)
    result = make_result(board, 30, hostile=True)
    html.template.cache_clear()
    ahead = html.template()
    assert ahead.root_render_func.__module__ == "accel_drc.report._report_template"
    fresh = html_template.environment().get_template("report.html.j2")
    assert fresh.root_render_func.__module__ != "accel_drc.report._report_template"
    ctx = html.build_context(result, board)
    assert ahead.render(**ctx, editor_note="<b>x</b>") == fresh.render(
        **ctx, editor_note="<b>x</b>"
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in ahead.render(**ctx, editor_note="<b>x</b>")


def test_stale_template_module_is_ignored(monkeypatch) -> None:
    from accel_drc.report import _report_template

    monkeypatch.setattr(_report_template, "KEY", "stale")
    html.template.cache_clear()
    try:
        t = html.template()
        assert t.root_render_func.__module__ != "accel_drc.report._report_template"
    finally:
        html.template.cache_clear()


def test_board_view_started_ahead_is_the_same_report(monkeypatch) -> None:
    """``html.prepare(board)`` before the check starts the board view's zone fills (0.25 s of
    GEOS on vme-wren) on another core; the report takes that job over (one simplification, not
    two) and is byte for byte the report written without it."""
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    assert any(z.filled for z in board.zones)  # (the view has zone fills to simplify)
    result = check_board(board)
    plain = html.render(result, board, editor_note="note")
    jobs = []
    real = board_svg.ZoneJob
    monkeypatch.setattr(board_svg, "ZoneJob", lambda *a, **k: jobs.append(a) or real(*a, **k))
    html.prepare(board)
    assert len(jobs) == 1
    ahead = html.render(result, board, editor_note="note")
    assert len(jobs) == 1  # the report took the job over
    assert ahead == plain
    assert html.render(result, board, editor_note="note") == plain  # (claimed once: a new job)
    assert len(jobs) == 2 and not board_svg._AHEAD


def test_board_view_started_ahead_for_another_board_is_not_used() -> None:
    """A job started ahead for one board object is never the view of another (an equal copy
    too: the job is claimed by identity), and unclaimed jobs are bounded."""
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    path = str(FIXTURE_BOARDS["m2-oculink-adapter"])
    a, b = read_board(path), read_board(path)
    html.prepare(a)
    assert board_svg.start_zones(b) is not board_svg._AHEAD[id(a)][1]
    for _ in range(5):
        html.prepare(read_board(path))
    assert len(board_svg._AHEAD) <= board_svg._AHEAD_MAX
    board_svg._AHEAD.clear()


def test_board_view_started_ahead_never_fails_the_run(monkeypatch) -> None:
    """``html.prepare`` is only a head start: a board view that cannot be built raises nothing
    before the check (``accel-drc check --html`` and the button call it first); the report then
    meets the error where it always did (the CLI's plain-page fallback)."""
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))

    def broken(*_a: Any) -> Any:
        raise ValueError("no fills for you")

    monkeypatch.setattr(board_svg, "_zone_job", broken)
    html.prepare(board)  # no exception
    assert id(board) not in board_svg._AHEAD


def _pad_geometry_one_at_a_time(board: Any, q: float) -> tuple[dict, dict, int]:
    """The board view's pads as computed pad by pad before issue 29 (the reference)."""
    polys: dict[int, list[str]] = {}
    strokes: dict[int, dict[int, list[str]]] = {}
    count = 0
    for _fp, pad in board.pads:
        if not pad.copper_layers or pad.width <= 0 or pad.height <= 0:
            continue
        count += 1
        th = math.radians(pad.rotation or 0.0)
        c, s = math.cos(th), math.sin(th)
        if pad.shape in ("circle", "oval"):
            long_x = pad.width >= pad.height
            half = (abs(pad.width - pad.height)) / 2.0
            u, v = (half, 0.0) if long_x else (0.0, half)
            dx, dy = u * c + v * s, -u * s + v * c
            x0, y0 = round((pad.x - dx) / q), round((pad.y - dy) / q)
            x1, y1 = round((pad.x + dx) / q), round((pad.y + dy) / q)
            w = max(1, round(min(pad.width, pad.height) / q))
            seg = f"M{x0} {y0}l{x1 - x0} {y1 - y0}" if (x0, y0) != (x1, y1) else f"M{x0} {y0}h0"
            for layer in pad.copper_layers:
                strokes.setdefault(layer, {}).setdefault(w, []).append(seg)
            continue
        hw, hh = pad.width / 2.0, pad.height / 2.0
        corners = [
            (round((pad.x + u * c + v * s) / q), round((pad.y - u * s + v * c) / q))
            for u, v in ((-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh))
        ]
        (x0, y0), rest = corners[0], corners[1:]
        steps, px, py = [], x0, y0
        for x, y in rest:
            steps.append(f"{x - px} {y - py}")
            px, py = x, y
        text = f"M{x0} {y0}l" + " ".join(steps) + "z"
        for layer in pad.copper_layers:
            polys.setdefault(layer, []).append(text)
    return polys, strokes, count


def _pad_boards() -> list[Any]:
    from pathlib import Path

    from accel_drc.readers import read_board
    from conftest import SHARED_BOARDS

    root = Path(__file__).resolve().parent.parent / "fixtures"
    paths = sorted(root.glob("boards/*/*.kicad_pcb")) + sorted(root.glob("checks/*/*.kicad_pcb"))
    vme = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
    if vme.is_file():
        paths.append(vme)
    return [read_board(str(p)) for p in paths]


def test_pad_geometry_is_the_pad_by_pad_text() -> None:
    """The vectorised pads give the pad-by-pad text, on every fixture board (and vme-wren
    where present), at two grid steps, and on hand-made pads at odd angles and half-step
    positions (round half to even, as ``round`` does)."""
    from types import SimpleNamespace

    boards = _pad_boards()
    shapes = ["rect", "circle", "oval", "roundrect"]
    rng = random.Random(29)
    made = [
        (None, SimpleNamespace(x=rng.choice([0.05, 0.15, 1.25, rng.uniform(-50, 50)]),
                               y=rng.uniform(-50, 50), width=rng.choice([0.1, 0.3, rng.uniform(0.05, 3)]),
                               height=rng.choice([0.1, 0.3, rng.uniform(0.05, 3)]),
                               rotation=rng.choice([0.0, 90.0, 45.0, -30.0, 179.9, None]),
                               shape=rng.choice(shapes), copper_layers=(0, 3)))
        for _ in range(500)
    ]  # fmt: skip
    boards.append(SimpleNamespace(pads=made))
    n = 0
    for board in boards:
        for q in (0.1, 0.025):
            assert board_svg._pad_geometry(board, q) == _pad_geometry_one_at_a_time(board, q)
            n += 1
    assert n > 40


def test_board_view_zones_early_are_the_same_report(monkeypatch) -> None:
    """The KiCad plugin registers the view's zone job before the board object exists
    (``zones_early``: the zones and the Edge.Cuts extent) and runs it on its warm-up thread: the
    report of a board holding those very zones takes the job over (no second simplification),
    whether the warm-up ran it or not yet (the report then starts it), and is byte for byte the
    report written without it; a board of other zone objects, or whose final extent gives
    another grid step, does not take it."""
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    result = check_board(board)
    plain = html.render(result, board, editor_note="note")
    jobs = []
    real = board_svg.ZoneJob
    monkeypatch.setattr(board_svg, "ZoneJob", lambda *a, **k: jobs.append(k) or real(*a, **k))
    job = board_svg.zones_early(board.zones, board.outline.bbox)
    assert jobs == [{"tol_steps": 2.0, "here": True}]
    job.run_here()  # the warm-up thread
    assert html.render(result, board, editor_note="note") == plain
    assert len(jobs) == 1 and not board_svg._EARLY  # taken over, once
    board_svg.zones_early(board.zones, board.outline.bbox)  # not run by the warm-up yet
    assert html.render(result, board, editor_note="note") == plain
    assert len(jobs) == 2 and not board_svg._EARLY
    # another board object with equal zones: not taken (claimed by the zones' identity)
    board_svg.zones_early(board.zones, board.outline.bbox)
    other = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    assert html.render(result, other, editor_note="note") == plain
    assert len(jobs) == 4
    # an extent 100 times larger: another grid step, so not taken either
    x0, y0, x1, y1 = board.outline.bbox
    board_svg.zones_early(board.zones, (x0, y0, x0 + 100 * (x1 - x0), y1))
    assert html.render(result, board, editor_note="note") == plain
    assert len(jobs) == 6 and not board_svg._EARLY
    assert board_svg.zones_early(board.zones, None) is None  # no extent known: nothing started
    assert len(jobs) == 6 and not board_svg._EARLY


def test_board_view_zones_early_a_report_meanwhile_waits_for_it(monkeypatch) -> None:
    """A report that comes while the warm-up thread is simplifying the early job waits for
    that result instead of simplifying again."""
    import threading

    import shapely
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from conftest import FIXTURE_BOARDS

    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    result = check_board(board)
    plain = html.render(result, board)
    gate, started, calls = threading.Event(), threading.Event(), []
    real = shapely.simplify

    def slow(*a: Any, **k: Any) -> Any:
        calls.append(threading.current_thread().name)
        started.set()
        gate.wait(10)
        return real(*a, **k)

    monkeypatch.setattr(shapely, "simplify", slow)
    job = board_svg.zones_early(board.zones, board.outline.bbox)
    early = threading.Thread(target=job.run_here, name="warm")
    early.start()
    assert started.wait(10)
    got: list[str] = []
    report = threading.Thread(target=lambda: got.append(html.render(result, board)))
    report.start()
    report.join(0.3)
    assert report.is_alive()  # waiting for the warm-up's simplification
    gate.set()
    report.join(10)
    early.join(10)
    assert got == [plain] and calls == ["warm"]
