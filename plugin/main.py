"""KiCad runs this file when the accel-drc toolbar button is clicked (IPC plugin entrypoint).

The working directory is the plugin folder and KICAD_API_SOCKET / KICAD_API_TOKEN are set.
stdout is discarded: everything goes to accel-drc.log here and to the report in the browser.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def _fail(message):
    """accel-drc itself could not be imported (broken plugin venv): still tell the user."""
    import html
    import tempfile
    import webbrowser

    try:  # the log first: it is what remains if nothing else can be written
        with open(os.path.join(HERE, "accel-drc.log"), "a", encoding="utf-8") as log:
            log.write("accel-drc could not start: " + message + "\n")
    except OSError:
        pass
    try:  # a file of our own (a fixed name in a shared temp dir may belong to someone else)
        fd, page = tempfile.mkstemp(prefix="accel-drc-error-", suffix=".html")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(
                "<!doctype html><meta charset='utf-8'><title>accel-drc: error</title>"
                "<h1>accel-drc could not start</h1><p>" + html.escape(message) + "</p>"
                "<p>Reinstall the plugin: <code>accel-drc kicad install</code>, then restart "
                "KiCad.</p>"
            )
    except OSError:
        return
    webbrowser.open("file://" + page)


try:
    from accel_drc_kicad.action import main
except Exception as exc:  # noqa: BLE001 - any import failure must reach the user
    _fail(type(exc).__name__ + ": " + str(exc))
    sys.exit(1)

sys.exit(main())
