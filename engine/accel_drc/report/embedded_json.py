"""The data the HTML report embeds as JSON, safe and bounded.

Safe: :func:`safe_json` writes ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX`` escapes, so
no ``</script>`` or ``<!--`` can appear inside the ``<script type="application/json">`` element
and JSON.parse gives the original text back.  Bounded: a finding's evidence is cut to its keys
when it is longer than its share of the page (:func:`evidence_budget`, :func:`compact_evidence`;
sizes in JSON characters as written), so one check that attaches a long list to every finding
cannot blow the file up.  Values are made JSON-able here (:func:`jsonable`: numpy scalars and
arrays, tuples, sets, dataclasses; NaN and infinities become null) and floats rounded to 6
significant digits, enough for every quantity the page shows."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from ..results import Severity, Status

#: per-finding evidence larger than this (JSON characters) is cut to its keys, so one check that

#: attaches a long list to each finding cannot blow the file up

EVIDENCE_MAX = 800


def safe_json(data: Any, plain: bool = False) -> Markup:
    """JSON text that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so neither
    ``</script>`` nor ``<!--`` can appear), and U+2028/U+2029 as escapes (they end a line in
    older JavaScript parsers).  JSON.parse gives the original text back.

    ``plain``: the caller built ``data`` from :func:`jsonable` values only (str keys, no NaN),
    so the walk that converts it is skipped (a large share of a big report's time); a value that is
    not plain after all still goes through :func:`jsonable`.
    """
    text = None
    if plain:
        try:
            text = _COMPACT.encode(data)
        except (TypeError, ValueError):
            text = None
    if text is None:
        text = _COMPACT.encode(jsonable(data))
    text = (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return Markup(text)


#: ``json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, built once

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def jsonable(value: Any) -> Any:
    """Plain JSON values: enums by value, tuples as lists, NaN/inf as None, numpy scalars as
    Python numbers, anything else as its string."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (Severity, Status)):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        try:
            return jsonable(item())
        except (TypeError, ValueError):
            pass
    tolist = getattr(value, "tolist", None)  # numpy array
    if callable(tolist):
        return jsonable(tolist())
    return str(value)


def round_floats(value: Any, digits: int = 6) -> Any:
    """Floats to ``digits`` significant digits (52517654644.371376 -> 52517700000.0): the
    report shows evidence, it does not recompute from it, and 10,000 findings add up."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [round_floats(v, digits) for v in value]
    return value


def evidence_budget(n_findings: int) -> int:
    """Characters of evidence JSON per finding: ``EVIDENCE_MAX``, less when there are many
    findings (about 3 MB of evidence in all, never under 200 characters each), so a
    10,000-finding report stays quick to parse."""
    return max(200, min(EVIDENCE_MAX, 3_000_000 // max(n_findings, 1)))


def plain_rounded(value: Any) -> Any:
    """``round_floats(jsonable(value))`` in one walk (the evidence of 10,000 findings is a
    million values)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        return float(f"{value:.6g}") if math.isfinite(value) else None
    if t is dict or isinstance(value, Mapping):
        return {str(k): plain_rounded(v) for k, v in value.items()}
    if t is list or t is tuple or isinstance(value, (list, tuple, set, frozenset)):
        return [plain_rounded(v) for v in value]
    return round_floats(jsonable(value))


#: what :func:`compact_evidence` measures with: compact separators, as safe_json writes

_SIZER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]


def json_len(v: Any) -> int:
    """``len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))`` without building an
    encoder per call: scalars by their ``repr`` (what json writes), containers through C."""
    t = type(v)
    if t is str:
        return len(_encode_str(v))
    if t is int or t is float:
        return len(repr(v))
    if v is None:
        return 4
    if t is bool:
        return 4 if v else 5
    return len(_SIZER.encode(v))


def compact_evidence(ev: Any, limit: int = EVIDENCE_MAX, rounded: bool = False) -> Any:
    """Evidence within about ``limit`` characters of JSON.  Values longer than half the budget
    become a note saying what was left out; then keys are kept in the check's order while they
    fit, and the names of the rest are listed, so the first (most telling) facts survive.
    ``rounded``: ``ev`` is a fresh dict whose floats are already rounded (:func:`plain_rounded`)."""
    if not isinstance(ev, dict) or not ev:
        return ev or None
    if not rounded:
        ev = round_floats(ev)
    size = json_len

    # each key's and value's JSON length, measured once: the dict's length follows from them
    # exactly ("{" + "k:v" joined by "," + "}"), so nothing below encodes anything twice
    keys = [(k, size(k if type(k) is str else str(k))) for k in ev]
    vsize = [size(v) for v in ev.values()]
    if 2 + sum(n + 1 + vsize[i] for i, (_k, n) in enumerate(keys)) + len(keys) - 1 <= limit:
        return ev
    for i, (k, _n) in enumerate(keys):
        if vsize[i] > limit // 2:
            v = ev[k]
            ev[k] = (
                f"({len(v)} items left out of the report)"
                if isinstance(v, (list, dict))
                else "(long value left out of the report)"
            )
            vsize[i] = size(ev[k])
    if 2 + sum(n + 1 + vsize[i] for i, (_k, n) in enumerate(keys)) + len(keys) - 1 <= limit:
        return ev
    out: dict[str, Any] = {}
    used, left = 2, []
    for i, (k, n) in enumerate(keys):
        need = n + vsize[i] + 2
        if used + need <= limit - 48:
            out[k] = ev[k]
            used += need
        else:
            left.append(k)
    names = ", ".join(left)
    out["(left out)"] = names if len(names) <= 36 else names[:35].rsplit(",", 1)[0] + ", ..."
    return out
