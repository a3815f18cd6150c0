"""Take the two screenshots of docs/plugin.md from a real KiCad 9 under Xvfb.

    python docs/img/make_screenshots.py            # writes docs/img/plugin-*.png

What a new user does (issue 16): ``accel-drc kicad install``, start KiCad (it builds the plugin's
venv, then shows the button), open the M.2 OCuLink adapter, click the button.  The click is run
the way KiCad runs it (the venv's python, ``main.py``, the plugin folder as working directory);
no browser is opened.  Needs xvfb-run, pcbnew, ImageMagick's ``import`` and network access to
PyPI for the venv.  One KiCad, stopped by its process group at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "plugin")]

from kicad_live import LiveKiCad  # noqa: E402

IDENT = "io.github.accel-drc.kicad"
BOARD = ROOT / "fixtures/boards/m2-oculink-adapter/antmicro-m2-oculink-adapter-hw.kicad_pcb"
SCREEN = "1400x1300x24"


#: ImageMagick steps after the capture: the button's toolbar strip with a red box around the
#: button (its place in KiCad 9.0.8's toolbar at this window width), and the editor without the
#: appearance panel, scaled and reduced to a small palette
BUTTON = ["-crop", "800x100+340+0", "+repage", "-fill", "none", "-stroke", "#d00000",
          "-strokewidth", "3", "-draw", "rectangle 742,24 776,58"]  # fmt: skip
MARKERS = ["-crop", "1130x1300+0+0", "+repage", "-resize", "70%", "-colors", "96"]


def shot(kicad: LiveKiCad, out: Path, steps: list[str]) -> None:
    """The whole X screen (no window manager: KiCad's window is all there is), processed by
    ImageMagick ``steps``, as an 8-bit palette PNG to keep the repository small."""
    env = dict(os.environ, **kicad.display_env())
    raw = out.with_suffix(".raw.png")
    subprocess.run(["import", "-window", "root", str(raw)], env=env, check=True, timeout=60)
    subprocess.run(["convert", str(raw), *steps, "-strip", f"PNG8:{out}"], check=True, timeout=60)
    raw.unlink()
    print(out, out.stat().st_size, "bytes")


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="accel-drc-shots-"))
    docs = work / "documents"
    env = dict(os.environ, KICAD_DOCUMENTS_HOME=str(docs))
    subprocess.run([sys.executable, "-m", "accel_drc.cli", "kicad", "install"], env=env, check=True)
    plugin_dir = docs / "kicad" / "9.0" / "plugins" / "accel-drc"
    kicad = LiveKiCad(
        BOARD, work / "kicad", extra_env={"KICAD_DOCUMENTS_HOME": str(docs)}, screen=SCREEN
    )
    kicad._prepare()
    # a tall window: the 80 mm board fills it at Zoom to Fit, so the legend is readable
    w, h = (int(v) for v in SCREEN.split("x")[:2])
    settings = kicad.config / "9.0" / "pcbnew.json"
    settings.write_text(
        json.dumps({"window": {"pos_x": 0, "pos_y": 0, "size_x": w, "size_y": h}}),
        encoding="utf-8",
    )
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
        shot(kicad, HERE / "plugin-button.png", BUTTON)
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
        shot(kicad, HERE / "plugin-markers.png", MARKERS)
    finally:
        kicad.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
