#!/usr/bin/env python3
"""The report writers' time (issue 18): everything ``accel-drc check`` does after the checks.

    python bench/bench_report.py [--repeat 5] [--board PATH ...] [--synth-scale 1] [--no-synth]
                                 [--json out.json] [--save-before]

Each board is read and checked once (not timed); then each writer (JSON, JUnit, SARIF, Markdown,
HTML and the text summary the CLI prints) renders the same result ``--repeat`` times and the
median CPU seconds (``time.process_time``, the whole process: the HTML's second core counts) and
wall seconds are printed, with the whole ``write_outputs`` of ``check --json --html`` (the CLI's
common call; timed first, so its first call, printed too, is the CLI's: imports and the template
compile included) and of every format at once.

Peer, measured in the same run: ``json.dumps`` of the same JSON document through CPython's C
encoder (no indent, no NaN handling): what serialising the findings costs at the least in Python.

Boards: vme-wren (when the shared boards are beside the repository) and the synthetic training
board (``fixtures/synth/generate.py --scale N --only training-hgx``, generated into a temporary
folder and deleted).  ``bench/report_before.json`` holds the same figures measured on the code
before the speed work (``--save-before`` rewrites it); they are printed beside today's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
VME_WREN = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"
GENERATOR = ROOT / "fixtures" / "synth" / "generate.py"
BEFORE = ROOT / "bench" / "report_before.json"


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float]:
    """Median (CPU s, wall s) of ``repeat`` calls of ``fn``, and the first call's CPU s (the
    CLI's case: imports and the template compile included)."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall), cpu[0]


def measure(board_path: str, repeat: int) -> dict[str, Any]:
    """Check ``board_path`` once, then time each writer on the result."""
    from accel_drc.config import load_config
    from accel_drc.packs import load_library
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report import json_report, writers
    from accel_drc.report.text import summary

    board = read_board(board_path)
    lib = load_library()
    cfg = load_config(None, board_path, lib)
    result = check_board(board, cfg, board_file=board_path, library=lib)
    out: dict[str, Any] = {"board": Path(board_path).name, "findings": len(result.findings)}
    with tempfile.TemporaryDirectory(prefix="accel-drc-bench-report-") as d:
        paths = {name: os.path.join(d, f"report.{name}") for name in writers.WRITERS}
        # first, so that its first call is the CLI's: nothing of the HTML imported or compiled
        out["check --json --html"] = _timed(
            lambda: writers.write_outputs(result, board, json=paths["json"], html=paths["html"]),
            repeat,
        )
        for name, w in writers.WRITERS.items():
            out[name] = _timed(lambda w=w: w.render(result, board, paths, None), repeat)
        out["summary"] = _timed(lambda: summary(result), repeat)
        out["every format"] = _timed(lambda: writers.write_outputs(result, board, **paths), repeat)
        out["json MB"] = os.path.getsize(paths["json"]) / 1e6
        out["html MB"] = os.path.getsize(paths["html"]) / 1e6
        doc = json_report.to_dict(result)
        out["peer: C json.dumps"] = _timed(
            lambda: json.dumps(doc, ensure_ascii=False, default=json_report._default), repeat
        )
    return out


ROWS = (
    "json",
    "junit",
    "sarif",
    "markdown",
    "html",
    "summary",
    "check --json --html",
    "every format",
    "peer: C json.dumps",
)


def show(now: dict[str, Any], before: dict[str, Any] | None) -> None:
    print(
        f"\n{now['board']}: {now['findings']} findings, JSON {now['json MB']:.1f} MB, "
        f"HTML {now['html MB']:.2f} MB"
    )
    print(
        f"  {'writer (median of runs)':<24}{'CPU s':>7}{'wall s':>8}{'1st CPU s':>10}"
        f"   {'before CPU s':>12}{'1st':>7}{'÷':>6}"
    )
    for row in ROWS:
        cpu, wall, first = (list(now[row]) + [math.nan])[:3]
        old = (before or {}).get(row)
        tail = ""
        if old:
            old_first = old[2] if len(old) > 2 else math.nan
            tail = f"   {old[0]:12.3f}{old_first:7.3f}{old[0] / max(cpu, 1e-6):6.1f}"
        print(f"  {row:<24}{cpu:7.3f}{wall:8.3f}{first:10.3f}{tail}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--board", action="append", default=[])
    ap.add_argument("--synth-scale", type=int, default=1)
    ap.add_argument("--no-synth", action="store_true")
    ap.add_argument("--json", help="write the figures as JSON here")
    ap.add_argument("--save-before", action="store_true", help=f"rewrite {BEFORE.name}")
    args = ap.parse_args()

    boards = list(args.board) or ([str(VME_WREN)] if VME_WREN.is_file() else [])
    work = Path(tempfile.mkdtemp(prefix="accel-drc-bench-report-synth-"))
    try:
        if not args.no_synth:
            subprocess.run(
                [sys.executable, str(GENERATOR), str(work), "--scale", str(args.synth_scale)]
                + ["--only", "training-hgx"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            boards.append(str(work / "training-hgx.kicad_pcb"))
        before = json.loads(BEFORE.read_text()) if BEFORE.is_file() else {}
        results = {}
        for b in boards:
            key = f"{Path(b).name}" + (f"@scale{args.synth_scale}" if "training-hgx" in b else "")
            results[key] = measure(b, args.repeat)
            show(results[key], before.get(key))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    if args.save_before:
        BEFORE.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
