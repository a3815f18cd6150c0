"""Take the KiCad screenshots of the README and docs/plugin.md from a real KiCad 9 under Xvfb.

    python docs/img/make_screenshots.py                  # writes docs/img/plugin-*.png
    python docs/img/make_screenshots.py --only vme-wren  # only plugin-markers-vme-wren.png

What a new user does (issue 16): ``accel-drc kicad install``, start KiCad (it builds the plugin's
venv, then shows the button), open the M.2 OCuLink adapter, click the button.  The click is run
the way KiCad runs it (the venv's python, ``main.py``, the plugin folder as working directory);
no browser is opened.  Then the markers on a big board (issue #31 item 2): vme-wren (beside the
clone in ``../shared/boards/``, or Debian's kicad-demos; linked, never copied) clicked with this
checkout's plugin, at Zoom to Fit.  Needs xvfb-run, pcbnew, Pillow, ``xwd`` (x11-apps) or
ImageMagick's ``import``, and network access to PyPI for the venv.  One KiCad
at a time, each stopped by its process group.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "plugin")]

from kicad_live import LiveKiCad  # noqa: E402

IDENT = "io.github.accel-drc.kicad"
BOARD = ROOT / "fixtures/boards/m2-oculink-adapter/antmicro-m2-oculink-adapter-hw.kicad_pcb"
SCREEN = "1400x1300x24"


VME_WREN = (
    ROOT.parent / "shared/boards/vme-wren/vme-wren.kicad_pcb",
    Path("/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb"),
)

#: what is kept of the screen: the button's toolbar strip (x, y, w, h) with a red box around the
#: button (its place in KiCad 9.0.8's toolbar at this window width), and the editor without the
#: appearance panel, scaled to 70 % and reduced to a small palette
BUTTON_CROP = (340, 0, 800, 100)
BUTTON_BOX = (742, 24, 776, 58)
EDITOR_CROP = (0, 0, 1130, 1300)


def _xwd_rgb(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, RGB bytes) of an ``xwd`` dump of a TrueColor screen (Xvfb's ``-screen
    WxHx24``: 24 or 32 bits per pixel): a big-endian header, the window name, the colour map,
    then ZPixmap rows of ``bytes_per_line`` in the server's byte order."""
    import struct

    head = struct.unpack(">25I", data[:100])
    header_size, width, height = head[0], head[4], head[5]
    byte_order, bits_per_pixel, bytes_per_line, ncolors = head[7], head[11], head[12], head[19]
    step = bits_per_pixel // 8
    if step not in (3, 4):
        raise SystemExit(f"xwd: {bits_per_pixel} bits per pixel; run Xvfb at 24-bit depth")
    start = header_size + 12 * ncolors
    rows = data[start : start + bytes_per_line * height]
    # where red, green and blue sit in a pixel: LSB first is B G R (X), MSB first (X) R G B
    order = (2, 1, 0) if byte_order == 0 else (step - 3, step - 2, step - 1)
    out = bytearray()
    for y in range(height):
        row = rows[y * bytes_per_line : y * bytes_per_line + step * width]
        px = bytearray(3 * width)
        for c, at in enumerate(order):
            px[c::3] = row[at::step]
        out += px
    return width, height, bytes(out)


def capture(kicad: LiveKiCad) -> Any:
    """The whole X screen (no window manager: KiCad's window is all there is) as a Pillow
    image: through ``xwd`` where it is installed, else ImageMagick's ``import``."""
    from PIL import Image

    env = dict(os.environ, **kicad.display_env())
    if shutil.which("xwd"):
        dump = subprocess.run(
            ["xwd", "-root", "-silent"], env=env, check=True, capture_output=True, timeout=60
        ).stdout
        width, height, rgb = _xwd_rgb(dump)
        return Image.frombytes("RGB", (width, height), rgb)
    raw = kicad.tmp / "screen.png"
    subprocess.run(["import", "-window", "root", str(raw)], env=env, check=True, timeout=60)
    return Image.open(raw).convert("RGB")


def save(img: Any, out: Path, colors: int = 96) -> None:
    """``img`` as an 8-bit palette PNG, to keep the repository small."""
    img.quantize(colors).save(out, optimize=True)
    print(out, out.stat().st_size, "bytes")


def _crop(img: Any, box: tuple[int, int, int, int]) -> Any:
    x, y, w, h = box
    return img.crop((x, y, x + w, y + h))


def button_shot(img: Any) -> Any:
    from PIL import ImageDraw

    strip = _crop(img, BUTTON_CROP)
    ImageDraw.Draw(strip).rectangle(BUTTON_BOX, outline="#d00000", width=3)
    return strip


def editor_shot(img: Any) -> Any:
    editor = _crop(img, EDITOR_CROP)
    return editor.resize((editor.width * 7 // 10, editor.height * 7 // 10))


def _window(kicad: LiveKiCad) -> None:
    """A tall window at the screen's size: the board fills it at Zoom to Fit."""
    w, h = (int(v) for v in SCREEN.split("x")[:2])
    settings = kicad.config / "9.0" / "pcbnew.json"
    settings.write_text(
        json.dumps({"window": {"pos_x": 0, "pos_y": 0, "size_x": w, "size_y": h}}),
        encoding="utf-8",
    )


def vme_wren_markers(work: Path) -> None:
    """``plugin-markers-vme-wren.png``: vme-wren after a click (this checkout's plugin, run as
    the live tests run it), at Zoom to Fit: the markers sized to the board, on top."""
    board = next((b for b in VME_WREN if b.is_file()), None)
    if board is None:
        raise SystemExit(f"vme-wren not found in {', '.join(map(str, VME_WREN))}")
    kicad = LiveKiCad(board, work / "vme", screen=SCREEN, link_board=True)
    kicad._prepare()
    _window(kicad)
    kicad.start(timeout_s=600)
    try:
        env = dict(
            os.environ,
            KICAD_API_SOCKET=kicad.socket,
            PYTHONPATH=str(ROOT / "plugin"),
            TMPDIR=str(kicad.tmp),
            XDG_CACHE_HOME=str(kicad.workdir / "user-cache"),
        )
        subprocess.run(
            [sys.executable, "-m", "accel_drc_kicad", "run", "--no-browser"],
            env=env,
            check=True,
            timeout=600,
            capture_output=True,
        )
        from kipy import KiCad

        api = KiCad(socket_path=kicad.socket, timeout_ms=60_000)
        api.run_action("common.Control.zoomFitScreen")
        time.sleep(5)
        save(editor_shot(capture(kicad)), HERE / "plugin-markers-vme-wren.png")
    finally:
        kicad.stop()


def main(argv: list[str]) -> int:
    """Both M.2 adapter screenshots, then vme-wren's (``--only vme-wren``: that one alone)."""
    work = Path(tempfile.mkdtemp(prefix="accel-drc-shots-"))
    try:
        if "--only" not in argv or argv[argv.index("--only") + 1] != "vme-wren":
            m2_shots(work)
        vme_wren_markers(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def m2_shots(work: Path) -> None:
    """``plugin-button.png`` and ``plugin-markers.png``: the M.2 OCuLink adapter in a KiCad
    that built the plugin's venv, before and after a click as KiCad runs it."""
    docs = work / "documents"
    env = dict(os.environ, KICAD_DOCUMENTS_HOME=str(docs))
    subprocess.run([sys.executable, "-m", "accel_drc.cli", "kicad", "install"], env=env, check=True)
    plugin_dir = docs / "kicad" / "9.0" / "plugins" / "accel-drc"
    kicad = LiveKiCad(
        BOARD, work / "kicad", extra_env={"KICAD_DOCUMENTS_HOME": str(docs)}, screen=SCREEN
    )
    kicad._prepare()
    _window(kicad)  # the 80 mm board fills it at Zoom to Fit, so the legend is readable
    kicad.start()
    try:
        deadline = time.monotonic() + 600
        while f"marking {IDENT} as ready" not in kicad.log.read_text(errors="replace"):
            if time.monotonic() > deadline:
                raise SystemExit("KiCad did not build the plugin venv in 10 minutes")
            time.sleep(2)
        time.sleep(5)  # the toolbar is rebuilt when the plugin turns ready
        from kipy import KiCad

        api = KiCad(socket_path=kicad.socket, timeout_ms=30_000)
        api.run_action("common.Control.zoomFitScreen")
        time.sleep(2)
        save(button_shot(capture(kicad)), HERE / "plugin-button.png")
        venv_python = (
            kicad.workdir / "xdg_cache/kicad/9.0/python-environments" / IDENT / "bin/python"
        )
        click_env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(kicad.home),
            "TMPDIR": str(kicad.tmp),
            "KICAD_API_SOCKET": kicad.socket,
            "KICAD_API_TOKEN": "",
            "ACCEL_DRC_NO_BROWSER": "1",
        }
        subprocess.run(
            [str(venv_python), str(plugin_dir / "main.py")],
            cwd=str(plugin_dir),
            env=click_env,
            check=True,
            timeout=300,
        )
        api.run_action("common.Control.zoomFitScreen")  # Home: the view a user starts from
        time.sleep(3)
        save(editor_shot(capture(kicad)), HERE / "plugin-markers.png")
    finally:
        kicad.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
