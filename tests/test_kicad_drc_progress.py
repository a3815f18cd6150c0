"""``check --kicad-drc`` says what runs while it waits for kicad-cli (#31 item 11).

kicad-cli takes 2.5 minutes on vme-wren and printed nothing meanwhile.  Here a stand-in
kicad-cli (a script that sleeps, then writes an empty DRC report) runs for a few ticks: stderr
gets a progress line per tick (at most), stdout and the reports get none of it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from accel_drc import cli, kicad_drc
from conftest import FIXTURE_BOARDS

BOARD = FIXTURE_BOARDS["coral-tpu-m2-adapter"]
SLEEP_S = 1.6
TICK_S = 0.25


def _slow_kicad_cli(tmp_path: Path) -> Path:
    """A kicad-cli that takes SLEEP_S seconds and reports no violation."""
    script = tmp_path / "kicad-cli"
    report = {
        "$schema": "https://schemas.kicad.org/drc.v1.json",
        "kicad_version": "9.0.8",
        "coordinate_units": "mm",
        "violations": [],
        "unconnected_items": [],
        "schematic_parity": [],
    }
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys, time\n"
        f"time.sleep({SLEEP_S})\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        f"open(out, 'w').write(json.dumps({report!r}))\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


class _Tty:
    """A stderr that says it is a terminal, keeping what is written."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check --kicad-drc --json -`` of the board, kicad-cli the slow stand-in."""
    monkeypatch.setenv("ACCEL_DRC_KICAD_CLI", str(_slow_kicad_cli(tmp_path)))
    monkeypatch.setattr(kicad_drc, "LOG_TICK_S", TICK_S, raising=False)
    monkeypatch.setattr(kicad_drc, "TTY_TICK_S", TICK_S, raising=False)
    code = cli.main(["check", "--class", "edge", "--kicad-drc", "--json", "-", str(BOARD)])
    assert code == 5  # the board's own findings; KiCad's DRC is clean


def test_waiting_for_kicad_cli_prints_a_line_per_tick_to_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # before: nothing at all on stderr while kicad-cli ran
    _check(tmp_path, monkeypatch)
    out, err = capfd.readouterr()
    doc = json.loads(out)  # stdout is the report, whole: no progress in it
    assert doc["extras"]["kicad_drc"]["kicad_version"] == "9.0.8"
    assert "waiting" not in json.dumps(doc)
    waiting = re.findall(
        r"^accel-drc: waiting for KiCad's DRC \(kicad-cli pcb drc M2\.kicad_pcb\): (\d+) s$",
        err,
        re.M,
    )
    # a line as the wait starts and one per tick (not more): the checks took some of SLEEP_S
    assert 1 <= len(waiting) <= SLEEP_S / TICK_S + 2, err
    assert [int(s) for s in waiting] == sorted(int(s) for s in waiting)  # the time runs on
    assert re.search(r"^accel-drc: KiCad's DRC \(.*\) ended after \d+ s$", err, re.M), err
    assert "\r" not in err  # a log: plain lines


def test_on_a_terminal_one_progress_line_is_redrawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    _check(tmp_path, monkeypatch)
    out, _ = capfd.readouterr()
    json.loads(out)
    drawn = [s for s in tty.text.split("\r") if "KiCad's DRC" in s]
    assert len(drawn) >= 2 and all(len(s.rstrip("\n")) == 100 for s in drawn), tty.text
    # redrawn in place (no newline) until it ends: one newline, after "ended after"
    start, end = tty.text.index("waiting for KiCad's DRC"), tty.text.index("ended after")
    assert "\n" not in tty.text[start:end] and tty.text.index("\n", end) < len(tty.text)
