"""The button as a new user meets it (issue 16), against a real KiCad 9 under Xvfb and KiCad
10.0.7 in its chroot (there both findings become real DRC markers instead of one legend).

The board is the M.2 OCuLink adapter with no ``accel-drc.yaml``: both of its findings
(``edge.pdn_impedance``, ``signals.assumed_type.pcie4``) are board-level, the case where a click
used to change nothing visible (one label above the outline, outside Zoom to Fit's view).  The
click is what KiCad runs (``python -m accel_drc_kicad run``, the action without KiCad's
launcher), with ``$BROWSER`` pointing at a script that records every page the plugin opens.

Tests run in file order and build on each other, as a user would: click; look at the label; break
the config and click; double-click.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_BOARDS, ROOT, need, need_live_kicad
from kicad_live import VERSIONS, LiveKiCad, drc_marker_ids, live_markers, raw_selection

PLUGIN = ROOT / "plugin"
sys.path.insert(0, str(PLUGIN))
pytestmark = [pytest.mark.kicad, pytest.mark.slow]

BOARD = FIXTURE_BOARDS["m2-oculink-adapter"]
REPORT = f"accel-drc/{BOARD.stem}.html"


class Session:
    def __init__(self, kicad: LiveKiCad, opened: Path) -> None:
        self.kicad = kicad
        self.opened = opened  # one line per page the plugin opened in the "browser"
        self.legend_text = ""
        self.version = kicad.version

    def drc_ids(self) -> list[str]:
        """The last click's KiCad 10 DRC markers, as the plugin recorded them in the user's
        cache (:meth:`env`)."""
        state = self.kicad.workdir / "user-cache" / "accel-drc" / "kicad-drc-markers.json"
        return drc_marker_ids(state, self.kicad.board)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KICAD_API_SOCKET"] = self.kicad.socket
        env["PYTHONPATH"] = str(PLUGIN)
        env["TMPDIR"] = str(self.kicad.tmp)
        env["XDG_CACHE_HOME"] = str(self.kicad.workdir / "user-cache")  # never the real one
        env["BROWSER"] = f"{self.kicad.workdir / 'browser.sh'} %s"
        return env

    def start_click(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "accel_drc_kicad", "run"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
        )

    def click(self, expect_rc: int = 0) -> dict[str, Any]:
        proc = self.start_click()
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == expect_rc, out[-2000:] + err[-3000:]
        return json.loads(out)

    def pages(self) -> list[str]:
        if not self.opened.exists():
            return []
        return self.opened.read_text(encoding="utf-8").split()

    def board(self) -> tuple[Any, Any]:
        from accel_drc_kicad.connection import open_board
        from kipy import KiCad

        kicad = KiCad(socket_path=self.kicad.socket, timeout_ms=30_000)
        return kicad, open_board(kicad)


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"kicad{v}")
def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Session]:
    need_live_kicad(request.param)
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (kipy) is not installed")
    work = tmp_path_factory.mktemp(f"kicad{request.param}-click")
    kicad = LiveKiCad(BOARD, work / "kicad", version=request.param)
    kicad._prepare()
    opened = work / "opened.txt"
    browser = kicad.workdir / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> "{opened}"\n', encoding="utf-8")
    browser.chmod(0o755)
    kicad.start()
    try:
        yield Session(kicad, opened)
    finally:
        kicad.stop()


def _file_findings(board: Path) -> list[dict[str, Any]]:
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", str(board), "--json", "-", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 5), r.stderr
    return json.loads(r.stdout)["findings"]


def _outline_bbox_nm(board: Any) -> tuple[int, int, int, int]:
    """The Edge.Cuts bounding box as KiCad computes it (what Zoom to Fit fits)."""
    from kipy.proto.board.board_types_pb2 import BoardLayer

    edges = [s for s in board.get_shapes() if s.proto.layer == BoardLayer.BL_Edge_Cuts]
    assert edges
    boxes = [board.get_item_bounding_box(s) for s in edges]
    return (
        min(b.pos.x for b in boxes),
        min(b.pos.y for b in boxes),
        max(b.pos.x + b.size.x for b in boxes),
        max(b.pos.y + b.size.y for b in boxes),
    )


def test_click_shows_board_level_findings_where_zoom_to_fit_looks(session: Session) -> None:
    """Item 1: the legend lies inside the outline's bounding box (KiCad's own bounding boxes),
    which is exactly what the PCB editor's Zoom to Fit (Home) fits; nothing is selected; the report's
    banner says how many markers went where; one page opens."""
    from accel_drc_kicad.markers import find_markers

    result = session.click()
    assert result["ok"], result["error"]
    if session.version != "9":
        _kicad10_board_level_markers(session, result)
        return
    assert result["markers"]["mode"] == "graphics" and result["markers"]["created"] == 1
    assert result["markers"]["refused"] == 0
    _kicad, board = session.board()
    labels, rings = find_markers(board)
    assert len(labels) == 1 and rings == []
    (legend,) = labels
    session.legend_text = legend.proto.text.text
    box = board.get_item_bounding_box(legend)
    x0, y0, x1, y1 = _outline_bbox_nm(board)
    assert x0 < box.pos.x and box.pos.x + box.size.x < x1, (box, (x0, x1))
    assert y0 < box.pos.y and box.pos.y + box.size.y < y1, (box, (y0, y1))
    # nothing selected, neither the legend nor a board item (issue #31 items 1 and 2)
    assert raw_selection(board) == (0, set()) and result["selected"] == 0
    report = session.kicad.board_dir / REPORT
    assert Path(result["report"]) == report
    assert session.pages() == [report.resolve().as_uri()]
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert (
        '<p class="editor-note" id="editor-note">In KiCad: 2 findings marked on Cmts.User: '
        "2 board-level findings listed in a legend inside the board outline's top-left corner "
        "(View → Zoom to Fit, Home). Nothing is selected in the editor after the click: one Undo "
        '(Ctrl+Z) removes them now; "python -m accel_drc_kicad clear" at any time.</p>'
    ) in page


def _kicad10_board_level_markers(session: Session, result: dict[str, Any]) -> None:
    """KiCad 10: the board-level findings are one DRC marker (at the outline's top-left corner,
    unit-tested in test_plugin_bundle: KiCad 10.0.7 has no call that reads markers back), they
    nothing is selected, no graphics are drawn, and the banner says so."""
    from accel_drc_kicad.markers import find_markers

    # one marker for both: a marker per place, and both are board-level (markers.drc_groups)
    assert result["markers"]["mode"] == "drc" and result["markers"]["created"] == 1
    assert result["markers"]["requested"] == 2
    _kicad, board = session.board()
    assert find_markers(board) == ([], [])
    assert raw_selection(board) == (0, set()) and result["selected"] == 0
    ids = session.drc_ids()
    assert len(ids) == 1 and live_markers(board, ids) == 1
    report = session.kicad.board_dir / REPORT
    assert Path(result["report"]) == report
    assert session.pages() == [report.resolve().as_uri()]
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert (
        '<p class="editor-note" id="editor-note">In KiCad: 2 findings marked as KiCad DRC '
        "markers: 2 board-level findings marked inside the board outline's top-left corner "
        "(View → Zoom to Fit, Home). Nothing is selected in the editor after the click: KiCad's "
        'next DRC run or "python -m accel_drc_kicad clear" removes them.</p>'
    ) in page


def test_board_label_names_the_findings(session: Session) -> None:
    """Item 2: the label is built from the findings, the same ones ``accel-drc check`` gives for
    the saved file: each rule id with its severity and status, the worst first."""
    findings = _file_findings(session.kicad.board)
    assert {f["rule"] for f in findings} == {"edge.pdn_impedance", "signals.assumed_type.pcie4"}
    if session.version != "9":
        # KiCad 10: the labels are the DRC markers' messages (unit-tested: KiCad 10.0.7 cannot
        # read them back); the report lists the same findings as the file's check
        report = json.loads((session.kicad.board_dir / REPORT).with_suffix(".json").read_text())
        assert [f["rule"] for f in report["findings"]] == [f["rule"] for f in findings]
        return
    text = session.legend_text
    assert text
    flat = text.replace("\n   ", " ")
    assert flat.startswith("accel-drc: 2 board-level findings\n")
    assert "1. edge.pdn_impedance (error, cannot verify): no power rail found" in flat
    assert "2. signals.assumed_type.pcie4 (info, cannot verify): 16 PCIe nets" in flat
    assert f"Report: {REPORT}" in text.replace("\n   ", "")  # a long path wraps mid-word
    assert "stack-up, materials" not in flat


def test_failed_run_marks_the_markers_stale_and_replaces_the_report(session: Session) -> None:
    """Item 5 (and 6): an unclosed ``[`` on line 3 of accel-drc.yaml: the error page is where the
    report was, names line 3 and no API-server advice; the old label says it is stale (nothing
    selected), in one commit: one Undo brings the old wording back."""
    from accel_drc_kicad.markers import find_markers
    from kipy.proto.common.commands.editor_commands_pb2 import RunActionStatus

    config = session.kicad.board_dir / "accel-drc.yaml"
    config.write_text("class: training\nreport:\n  dir: [accel-drc\n", encoding="utf-8")
    before = len(session.pages())
    try:
        result = session.click(expect_rc=1)
    finally:
        config.unlink()
    report = session.kicad.board_dir / REPORT
    assert not result["ok"] and Path(result["report"]) == report
    assert f"{config}:3: malformed YAML" in result["error"]
    page = report.read_text(encoding="utf-8")
    assert f"{config}:3: malformed YAML" in page and "Enable KiCad API" not in page
    assert not report.with_suffix(".json").exists()
    assert session.pages()[before:] == [report.resolve().as_uri()]
    if session.version != "9":
        # KiCad 10: the last click's DRC markers no longer describe the board: removed
        _kicad, board = session.board()
        assert result["markers"]["removed"] == 1 and live_markers(board, session.drc_ids()) == 0
        again = session.click()
        assert again["ok"] and "<!DOCTYPE html>" in report.read_text(encoding="utf-8")
        assert live_markers(board, session.drc_ids()) == 1
        return
    assert result["markers"]["mode"] == "stale"
    kicad, board = session.board()
    (label,), _rings = find_markers(board)
    text = label.proto.text.text
    assert text.startswith("accel-drc: STALE: the last run")
    assert REPORT in text.replace("\n   ", "") and text.endswith(session.legend_text)
    assert raw_selection(board) == (0, set()) and result["selected"] == 0
    assert kicad.run_action("common.Interactive.undo").status == RunActionStatus.RAS_OK
    (label,), _rings = find_markers(board)
    assert label.proto.text.text == session.legend_text
    # and the next good click replaces the page with the report again
    again = session.click()
    assert again["ok"] and "<!DOCTYPE html>" in report.read_text(encoding="utf-8")
    (label,), _rings = find_markers(board)
    assert label.proto.text.text == session.legend_text


def test_a_second_click_while_running_is_ignored(session: Session) -> None:
    """Item 7: the second click starts while the first holds the lock: it does nothing (no
    check, no page, no markers) and the first finishes as usual; the lock is gone after."""
    from accel_drc_kicad.markers import find_markers

    lock = session.kicad.board_dir / "accel-drc" / ".accel-drc.lock"
    before = len(session.pages())
    first = session.start_click()
    deadline = time.monotonic() + 120
    while not lock.exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    second = session.click()
    assert second["ignored"] is True and not second["ok"]
    assert "this click was ignored" in second["error"] and second["markers"] == {}
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-3000:]
    result = json.loads(out)
    assert result["ok"] and not result["ignored"]
    assert len(session.pages()) - before == 1  # one browser tab, not two
    _kicad, board = session.board()
    if session.version != "9":
        assert result["markers"]["removed"] == 1 == result["markers"]["created"]
        assert live_markers(board, session.drc_ids()) == 1  # never doubled
        assert not lock.exists()
        return
    labels, rings = find_markers(board)
    assert len(labels) == 1 and rings == []  # never doubled
    assert not lock.exists()
