"""Take the HTML report's screenshots for the README and docs/html.md from current reports.

    python docs/img/make_report_screenshots.py              # writes docs/img/report-*.png
    python docs/img/make_report_screenshots.py --out DIR    # elsewhere (the test does)

What a reviewer sees: this tree's report of vme-wren (the 12-layer benchmark beside the clone in
``../shared/boards/``, or Debian's kicad-demos), checked with no config, opened in a real
headless Chromium at 1400 × 900:

* ``report-first-screen.png``: the page as it opens, with no scrolling (the verdict and the
  failing findings, issue #31 item 5);
* ``report-board-view.png``: the board view, scrolled to below the sticky section bar: the
  whole board with every finding marked.

Needs Chromium (``chromium`` on PATH); the PNGs are reduced to a 128-colour palette to keep the
repository small with Pillow, else ImageMagick's ``convert``, else kept as Chromium wrote them.  The report is written to a temporary folder; nothing
else is written outside docs/img (or ``--out``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from browser.cdp import Browser  # noqa: E402

BOARDS = (
    ROOT.parent / "shared/boards/vme-wren/vme-wren.kicad_pcb",
    Path("/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb"),
)
SIZE = (1400, 900)
#: scroll the board view's section to just below the sticky section bar
TO_BOARD_VIEW = (
    "(function(){var e=document.getElementById('board-view');e.scrollIntoView();"
    "var nav=document.querySelector('nav');scrollBy(0,-(nav?nav.offsetHeight:0)-8);"
    "return scrollY;})()"
)


def board() -> Path:
    """The first of :data:`BOARDS` that exists (exit 1 saying where it looked otherwise)."""
    for b in BOARDS:
        if b.is_file():
            return b
    raise SystemExit(f"vme-wren not found in {', '.join(map(str, BOARDS))}")


def write_report(board_path: Path, out: Path) -> None:
    """This tree's HTML report of ``board_path`` (no config: what a new user gets)."""
    subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", str(board_path), "--html", str(out)],
        check=False,  # exit 5 is a report with violations, still a report
        capture_output=True,
        timeout=600,
    )
    if not out.is_file():
        raise SystemExit(f"accel-drc wrote no report for {board_path}")


def palette(raw: Path, out: Path) -> None:
    """``raw`` as an 8-bit palette PNG at ``out`` (Pillow, else ImageMagick, else a copy)."""
    try:
        from PIL import Image

        with Image.open(raw) as img:
            img.convert("RGB").quantize(128).save(out, optimize=True)
    except ImportError:
        cmd = ["convert", str(raw), "-colors", "128", "-strip", f"PNG8:{out}"]
        done = False
        if shutil.which("convert"):
            # a convert that is no ImageMagick (a stand-in) fails: the copy below stands
            r = subprocess.run(cmd, capture_output=True, timeout=60)
            done = r.returncode == 0 and out.is_file()
        if not done:
            shutil.copyfile(raw, out)
    print(out, out.stat().st_size, "bytes")


def main(argv: list[str]) -> int:
    """Write the two screenshots into docs/img, or the folder after ``--out``."""
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else HERE
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("needs chromium on PATH", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="accel-drc-report-shots-") as tmp:
        work = Path(tmp)
        report = work / "vme-wren.html"
        write_report(board(), report)
        with Browser(chromium, *SIZE) as b:
            b.enable()
            b.navigate(report.resolve().as_uri())
            b.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)
            b.screenshot(work / "first.png")
            palette(work / "first.png", out / "report-first-screen.png")
            b.eval(TO_BOARD_VIEW)
            b.screenshot(work / "view.png")
            palette(work / "view.png", out / "report-board-view.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
