"""The ``.kicad_pro`` beside a board: net classes, their patterns and assignments, text variables
and the design-rule settings that live there (KiCad 6 and later keep them out of the board).

KiCad 6 lists a class's nets inside the class (``classes[].nets``); KiCad 7+ uses
``netclass_patterns`` (wildcards) and ``netclass_assignments`` (net -> class, or net -> list of
classes since KiCad 8).  All three are read into one :class:`NetClassRules`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..hostile import (
    MAX_NET_PATTERN,
    MAX_NET_PATTERN_CHARS,
    MAX_NET_PATTERNS,
    MAX_PROJECT_BYTES,
    TUNING_DELAY_PS_PER_MM,
    read_regular,
)
from ..model import DesignSettings, NetClass, NetClassRules, TuningProfile


@dataclass(frozen=True)
class ProjectInfo:
    """What the board reader takes from a ``.kicad_pro``."""

    path: str
    net_classes: NetClassRules = field(default_factory=NetClassRules)
    text_variables: Mapping[str, str] = field(default_factory=dict)
    design: DesignSettings = field(default_factory=DesignSettings)


def project_path_for(board_path: str) -> str:
    """``board.kicad_pcb`` -> ``board.kicad_pro`` (same folder, same stem)."""
    stem, _ = os.path.splitext(board_path)
    return stem + ".kicad_pro"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _net_class(raw: Mapping[str, Any]) -> NetClass:
    prio = raw.get("priority")
    return NetClass(
        name=str(raw.get("name", "")),
        clearance_mm=_num(raw.get("clearance")),
        track_width_mm=_num(raw.get("track_width")),
        diff_pair_width_mm=_num(raw.get("diff_pair_width")),
        diff_pair_gap_mm=_num(raw.get("diff_pair_gap")),
        via_diameter_mm=_num(raw.get("via_diameter")),
        via_drill_mm=_num(raw.get("via_drill")),
        priority=int(prio)
        if isinstance(prio, (int, float)) and not isinstance(prio, bool)
        else None,
        tuning_profile=str(raw.get("tuning_profile") or ""),
    )


def _tuning_profiles(doc: Mapping[str, Any]) -> dict[str, TuningProfile]:
    """KiCad 10's ``tuning_profiles.tuning_profiles_impedance_geometric``: per profile its
    ``target_impedance`` (Ω) and per ``layer_entries`` row the ``width`` and ``diff_pair_gap``
    (nm).  A profile whose rows give a pair gap is differential.  Rows KiCad would not have
    written (missing or non-numeric fields) are skipped, like KiCad skips them."""
    section = doc.get("tuning_profiles")
    rows = (
        section.get("tuning_profiles_impedance_geometric") if isinstance(section, Mapping) else None
    )
    out: dict[str, TuningProfile] = {}
    for entry in rows if isinstance(rows, list) else ():
        if not isinstance(entry, Mapping):
            continue
        name, z = entry.get("profile_name"), _num(entry.get("target_impedance"))
        if not isinstance(name, str) or z is None or not math.isfinite(z) or z <= 0:
            continue
        layers = []
        entries = entry.get("layer_entries")
        for row in entries if isinstance(entries, list) else ():
            if isinstance(row, Mapping) and isinstance(row.get("signal_layer"), str):
                w, g = _num(row.get("width")), _num(row.get("diff_pair_gap"))
                layers.append((row["signal_layer"], w / 1e6 if w else None, g / 1e6 if g else None))
        diff = entry.get("type") == 1 or any(g for _, _, g in layers)
        out[name] = TuningProfile(
            name,
            float(z),
            bool(diff),
            tuple(layers),
            time_domain=entry.get("enable_time_domain_tuning") is True,
            delays=_layer_delays(entries),
            via_ps_per_mm=_ps_per_mm(entry.get("via_prop_delay")),
        )
    return out


def _ps_per_mm(value: Any) -> float | None:
    """A KiCad delay per length (attoseconds per mm, ``IU_PER_PS_PER_MM`` = 1e6) in ps/mm; None
    for a missing or non-finite value or one no line can travel at
    (:data:`~accel_drc.hostile.TUNING_DELAY_PS_PER_MM`)."""
    v = _num(value)
    if v is None or not math.isfinite(v):
        return None
    lo, hi = TUNING_DELAY_PS_PER_MM
    return v / 1e6 if lo <= v / 1e6 <= hi else None


def _layer_delays(entries: Any) -> tuple[tuple[str, float], ...]:
    """The ``layer_entries`` rows' ``delay`` (as/mm) per ``signal_layer``, in ps/mm."""
    out = []
    for row in entries if isinstance(entries, list) else ():
        if isinstance(row, Mapping) and isinstance(row.get("signal_layer"), str):
            d = _ps_per_mm(row.get("delay"))
            if d is not None:
                out.append((row["signal_layer"], d))
    return tuple(out)


def parse_project(doc: Mapping[str, Any], path: str, text: str | None = None) -> ProjectInfo:
    """Build a :class:`ProjectInfo` from a parsed ``.kicad_pro`` JSON document (``text``, the
    file's text, only names the line of a refused net-class pattern)."""
    ns = doc.get("net_settings") or {}
    classes: list[NetClass] = []
    assignments: dict[str, str] = {}
    for raw in ns.get("classes") or []:
        if not isinstance(raw, Mapping):
            continue
        cls = _net_class(raw)
        classes.append(cls)
        for net in raw.get("nets") or []:  # KiCad 6 layout
            assignments[str(net)] = cls.name
    patterns: list[tuple[str, str]] = []
    for raw in ns.get("netclass_patterns") or []:
        if isinstance(raw, Mapping) and raw.get("pattern") is not None:
            patterns.append((str(raw["pattern"]), str(raw.get("netclass", "Default"))))
    _check_patterns(patterns, path, text)
    explicit = ns.get("netclass_assignments") or {}
    if isinstance(explicit, Mapping):
        for net, cls_name in explicit.items():
            if isinstance(cls_name, list):  # KiCad 8+: a net may carry several classes
                if cls_name:
                    assignments[str(net)] = str(cls_name[0])
            elif cls_name is not None:
                assignments[str(net)] = str(cls_name)
    tv = doc.get("text_variables") or {}
    text_vars = {str(k): str(v) for k, v in tv.items()} if isinstance(tv, Mapping) else {}
    rules = ((doc.get("board") or {}).get("design_settings") or {}).get("rules") or {}
    bb = rules.get("allow_blind_buried_vias")
    mv = rules.get("allow_microvias")
    design = DesignSettings(
        allow_blind_buried_vias=bb if isinstance(bb, bool) else None,
        allow_microvias=mv if isinstance(mv, bool) else None,
        min_via_drill_mm=_num(rules.get("min_through_hole_diameter")),
        min_track_width_mm=_num(rules.get("min_track_width")),
    )
    return ProjectInfo(
        path=path,
        net_classes=NetClassRules(
            classes=tuple(classes),
            patterns=tuple(patterns),
            assignments=assignments,
            tuning_profiles=_tuning_profiles(doc),
        ),
        text_variables=text_vars,
        design=design,
    )


def read_project(path: str) -> ProjectInfo:
    """Read a ``.kicad_pro``; a broken one is bad input (exit 3), naming the file and line."""
    doc, text = load_project_json(path)
    try:
        return parse_project(doc, path, text)
    except (AttributeError, TypeError, ValueError, OverflowError, KeyError, IndexError) as exc:
        # a wrongly typed field ("net_settings": [1, 2]) is this file's fault, not the board's
        raise InputError(
            path, f"not a KiCad project file as KiCad writes it ({type(exc).__name__}: {exc})"
        ) from None


def load_project_json(path: str) -> tuple[Mapping[str, Any], str]:
    """A ``.kicad_pro`` parsed (and its text), every hostile shape refused with ``file:line``:
    not a regular file or over :data:`~accel_drc.hostile.MAX_PROJECT_BYTES`, not UTF-8, nested
    deeper than :data:`MAX_JSON_DEPTH`, not JSON, a non-finite number, a lone surrogate.  Shared
    by the board reader and ``--kicad-drc`` (its exclusions), so both refuse the same files."""
    raw = read_regular(path, MAX_PROJECT_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not a KiCad project file (not UTF-8 text)") from None
    depth, line = _nesting(text)
    if line:
        raise InputError(
            path, f"JSON nested more than {MAX_JSON_DEPTH} levels deep: not a KiCad project", line
        )
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except _NonFinite as exc:
        raise InputError(
            path,
            f"{exc.args[0]} is not a finite number (not JSON)",
            line=_line_of(text, exc.args[0]),
        ) from None
    except RecursionError:  # the pre-scan counts brackets; this is the last line of defence
        raise InputError(path, "JSON nested too deeply: not a KiCad project") from None
    if not isinstance(doc, Mapping):
        raise InputError(path, "not a KiCad project file (expected a JSON object)")
    bad = _surrogate(doc)
    if bad is not None:
        raise InputError(
            path,
            f"a lone UTF-16 surrogate escape ({bad}) is no character: not a valid project file",
            line=_line_of(text, bad),
        )
    return doc, text


def _check_patterns(patterns: list[tuple[str, str]], path: str, text: str | None) -> None:
    """Refuse net-class wildcards past the bounds in :mod:`accel_drc.hostile`: compiling them
    costs 2–20 µs per character, so their number and length bound the time (exit 3)."""
    if len(patterns) > MAX_NET_PATTERNS:
        raise InputError(
            path, f"{len(patterns):,} net-class patterns, over the limit of {MAX_NET_PATTERNS:,}"
        )
    total = 0
    for pattern, _ in patterns:
        total += len(pattern)
        if len(pattern) > MAX_NET_PATTERN:
            raise InputError(
                path,
                f"a net-class pattern of {len(pattern):,} characters, over the limit of "
                f"{MAX_NET_PATTERN}",
                line=_line_of(text, json.dumps(pattern, ensure_ascii=False)[1:65])
                if text
                else None,
            )
    if total > MAX_NET_PATTERN_CHARS:
        raise InputError(
            path,
            f"net-class patterns of {total:,} characters in all, over the limit of "
            f"{MAX_NET_PATTERN_CHARS:,}",
        )


#: deepest JSON nesting accepted in a .kicad_pro (KiCad writes about 6 levels); json.loads
#: recurses, and 1,000 levels raise RecursionError
MAX_JSON_DEPTH = 100


class _NonFinite(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _NonFinite(name)  # NaN, Infinity, -Infinity: Python's json accepts them, JSON does not


def _finite(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value):
        raise _NonFinite(raw)  # 1e400 reads as inf
    return value


def _nesting(text: str) -> tuple[int, int]:
    """Deepest bracket nesting outside strings, and the line where it passes the bound (0: never).

    Fast path: most project files are shallow, so only a text with very many brackets in a row
    is scanned character by character."""
    if "[" * 8 not in text and "{" * 8 not in text and text.count("[") + text.count("{") < 2000:
        return 0, 0
    depth = deepest = 0
    in_str = esc = False
    line = 1
    for c in text:
        if c == "\n":
            line += 1
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                return depth, line
        elif c in "]}":
            depth -= 1
    return deepest, 0


def _surrogate(data: Any) -> str | None:
    """The first lone surrogate in any string of a parsed JSON document, escaped, or None."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            for ch in x:
                if "\ud800" <= ch <= "\udfff":
                    return f"\\u{ord(ch):04x}"
        elif isinstance(x, Mapping):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def _line_of(text: str, escape: str) -> int | None:
    at = text.lower().find(escape.lower())
    return text.count("\n", 0, at) + 1 if at >= 0 else None
