"""The HTML report at scale in a real Chromium: 10,000 findings interactive within 2 s.

Writes a report with 10,000 findings over a dense synthetic 16-layer board (the tests' own
generator, ``tests/browser/synthetic.py``), opens it from ``file://`` in headless Chromium over
the DevTools protocol and reads the page's own clocks (``performance.now()`` since navigation):

* ``tReady``: every row exists, every marker is drawn, every handler is wired;
* ``tPainted``: the first frame is on screen and the main thread is free to take a click;
* ``tComplete``: every row has its cells (filled in the background after that);
* click: a click on one of the last rows until its row and marker are selected.

The peer, measured in the same run and the same browser: the same document with its script
removed, i.e. what Chromium needs just to parse and lay out the bytes.  The ratio says what the
report's own code costs on top of the browser.  Also reports vme-wren's report size when the
shared boards are beside the repository (goal: < 5 MB).

Usage::

    python bench/bench_html.py [--repeat 3] [--findings 10000]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

TARGET_MS = 2000.0
MAX_BYTES = 15 * 1024 * 1024
VME_WREN = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"


def _load(browser: object, path: Path, ready: str) -> float:
    """Navigate and wait until ``ready`` is true; the navigation's wall seconds."""
    t0 = time.perf_counter()
    browser.navigate(path.resolve().as_uri())  # type: ignore[attr-defined]
    browser.wait_for(ready, timeout=120)  # type: ignore[attr-defined]
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--findings", type=int, default=10_000)
    args = ap.parse_args()

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        print("headless Chromium is not installed (apt: chromium)", file=sys.stderr)
        return 1
    from accel_drc.report import html
    from browser.cdp import Browser
    from browser.synthetic import make_board, make_result

    work = Path(tempfile.mkdtemp(prefix="accel-drc-bench-html-"))
    try:
        board = make_board(layers=16, size=(450.0, 400.0), n_tracks=120_000, n_vias=20_000)
        result = make_result(board, args.findings)
        report = work / "big.html"
        t0 = time.perf_counter()
        html.write(report, result, board)
        write_s = time.perf_counter() - t0
        text = report.read_text(encoding="utf-8")
        # the peer: the same bytes without the page's code (parse + layout only)
        static = work / "static.html"
        static.write_text(
            re.sub(r"<script\b[^>]*>.*?</script>", "", text, flags=re.S), encoding="utf-8"
        )
        size = report.stat().st_size

        ready, painted, complete, clicks, peer = [], [], [], [], []
        with Browser(exe) as b:
            b.enable()
            for _ in range(args.repeat):
                _load(b, static, "document.readyState === 'complete'")
                peer.append(
                    b.eval(
                        "performance.getEntriesByType('navigation')[0].loadEventEnd"
                        " || performance.now()"
                    )
                )
                _load(b, report, "window.__accelDrc && window.__accelDrc.ready")
                ready.append(b.eval("window.__accelDrc.tReady"))
                painted.append(b.wait_for("window.__accelDrc.tPainted", timeout=60))
                b.wait_for("window.__accelDrc.complete", timeout=120)
                complete.append(b.eval("window.__accelDrc.tComplete"))
                k = max(i for i, f in enumerate(result.findings) if f.pos is not None)
                rect = json.loads(
                    b.eval(
                        f"(function(){{var e=document.querySelector('tr[data-i=\"{k}\"] td:nth-child(8)');"
                        "e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();"
                        "return JSON.stringify({x:r.x,y:r.y,h:r.height});})()"
                    )
                )
                t1 = time.perf_counter()
                b.click(rect["x"] + 20, rect["y"] + rect["h"] / 2)
                b.wait_for(
                    f"document.querySelector('tr[data-i=\"{k}\"]').classList.contains('sel') &&"
                    f" document.querySelector('#markers circle[data-i=\"{k}\"]')"
                    ".classList.contains('sel')",
                    timeout=30,
                )
                clicks.append((time.perf_counter() - t1) * 1000)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    print(
        f"report: {args.findings} findings, {size / 1e6:.1f} MB (limit 15 MB), written in {write_s:.2f} s"
    )
    print(f"peer, the same page without its script (parse + layout): {med(peer):7.0f} ms")
    print(
        f"tReady   (rows, markers, handlers):  {med(ready):7.0f} ms  ratio to peer "
        f"{med(ready) / max(med(peer), 1):.2f}  (runs: {', '.join(f'{x:.0f}' for x in ready)})"
    )
    print(f"tPainted (first frame, input free): {med(painted):7.0f} ms")
    print(f"tComplete (every row's cells):      {med(complete):7.0f} ms")
    print(f"click on row {args.findings - 1}-ish to row + marker selected: {med(clicks):5.0f} ms")
    if VME_WREN.is_file():
        from accel_drc.pipeline import check_board
        from accel_drc.readers import read_board

        b2 = read_board(str(VME_WREN))
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "vme-wren.html"
            html.write(out, check_board(b2), b2)
            print(f"vme-wren report: {out.stat().st_size / 1e6:.2f} MB (goal < 5 MB)")
    ok = max(med(ready), med(painted)) <= TARGET_MS and size <= MAX_BYTES
    print(f"target interactive ≤ {TARGET_MS / 1000:.0f} s and ≤ 15 MB: {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
