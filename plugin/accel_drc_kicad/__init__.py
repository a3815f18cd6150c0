"""accel-drc inside KiCad: the live reader (kipy -> Board), editor markers and the toolbar action.

Only this package imports ``kipy``; the engine (``accel_drc``) never does, so the checker runs
anywhere Python runs and the plugin is a thin shell around it (like KiKit's actions).
"""

from __future__ import annotations

#: the plugin identifier in plugin.json (reverse-DNS, as KiCad wants)
PLUGIN_ID = "io.github.accel-drc.kicad"
#: the action identifier; KiCad keys it as "<PLUGIN_ID>.<ACTION_ID>"
ACTION_ID = (
    "accel-drc-check"  # unique on its own too (older 9.0.x key actions without the plugin id)
)
