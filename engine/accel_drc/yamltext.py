"""YAML text written safely: a scalar from the board (a net, part or pad name) quoted so that it
reads back as exactly itself and can never end a line or a flow collection.

Used by the starter config (``accel-drc init``) and by the checks' pasteable ``declare`` hints,
which must write the same YAML; it lives on the base floor so both can import it
(docs/architecture.md, "Floors")."""

from __future__ import annotations

import json


def yaml_quote(text: str) -> str:
    """``text`` as a YAML scalar that reads back as exactly ``text``: single-quoted when it is
    plain printable text, else double-quoted with escapes (a JSON string is a valid YAML
    double-quoted scalar), so no name from the board can end a line or a flow collection."""
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return json.dumps(text, ensure_ascii=True)
