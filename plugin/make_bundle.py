"""Regenerate plugin.json, main.py and the PNG icons in this folder from ``accel_drc_kicad.bundle``.

Run ``python plugin/make_bundle.py`` after changing the bundle; ``tests/test_plugin_bundle.py``
fails while the committed files differ from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from accel_drc_kicad.bundle import write_static  # noqa: E402

if __name__ == "__main__":
    for path in write_static(HERE):
        print(path.relative_to(HERE))
