"""``check --markdown F``: the job summary / PR comment."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from accel_drc import __version__
from accel_drc.report.markdown import code, esc, render
from accel_drc.results import Finding, Severity, Status
from conftest import FIXTURE_BOARDS

CORAL = FIXTURE_BOARDS["coral-tpu-m2-adapter"]


def _run(tmp_path: Path, *extra: str) -> tuple[int, str]:
    md = tmp_path / "out" / "summary.md"
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", str(CORAL), "--markdown", str(md), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 5), r.stderr
    return r.returncode, md.read_text(encoding="utf-8")


def test_markdown_has_verdict_counts_worst_and_versions(tmp_path: Path) -> None:
    rc, md = _run(
        tmp_path,
        "--html",
        str(tmp_path / "out" / "report.html"),
        "--json",
        str(tmp_path / "f.json"),
    )
    import json

    doc = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    verdict = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}[
        doc["summary"]["verdict"]
    ]
    first = md.splitlines()[0]
    assert first.startswith("## ") and first.endswith(f": {verdict}")
    assert (rc == 5) == (verdict == "FAIL")
    assert f"**accel-drc** {__version__}" in md
    assert "| severity | findings |" in md
    # every counter sentence of the text summary is in the table
    for sev, n in doc["summary"]["by_severity"].items():
        if n:
            assert f"| {sev} | {n} " in md
    # the worst findings table names the first-ranked finding's rule
    top = next(f for f in doc["findings"] if f["status"] != "waived")
    assert "### Worst findings" in md and f"`{top['rule']}`" in md
    # the link to the HTML report, relative to the Markdown file
    assert "Full report: [report.html](report.html)" in md


def test_report_url_overrides_the_link(tmp_path: Path) -> None:
    url = "https://github.com/o/r/actions/runs/1#artifacts"
    _, md = _run(tmp_path, "--report-url", url)
    assert f"]({url})" in md


def test_user_text_cannot_break_the_table() -> None:
    assert esc("a|b <script>") == "a\\|b \\<script\\>"
    assert esc("x" * 500).endswith("…") and len(esc("x" * 500)) == 300
    assert code("net`|x") == "`` net`\\|x ``"  # the backtick kept: a longer fence


def test_render_caps_the_table_and_counts_the_rest() -> None:
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    board = read_board(str(CORAL))
    result = check_board(board, board_file=str(CORAL))
    f = Finding(
        rule="x.y", check="x", severity=Severity.WARNING, status=Status.VIOLATION, message="m|n"
    )
    result = replace(result, findings=[f] * 40)
    md = render(result, top=15)
    rows = [line for line in md.splitlines() if line.startswith("| warning | violation |")]
    assert len(rows) == 15
    assert "… and 25 more." in md
    assert "m\\|n" in md


def test_report_url_none_drops_the_link(tmp_path: Path) -> None:
    _, md = _run(tmp_path, "--html", str(tmp_path / "r.html"), "--report-url", "none")
    assert "Full report" not in md
