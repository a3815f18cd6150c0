"""The ``.kicad_pro`` beside a board: net classes, their patterns and assignments, text variables
and the design-rule settings that live there (KiCad 6 and later keep them out of the board).

KiCad 6 lists a class's nets inside the class (``classes[].nets``); KiCad 7+ uses
``netclass_patterns`` (wildcards) and ``netclass_assignments`` (net -> class, or net -> list of
classes since KiCad 8).  All three are read into one :class:`NetClassRules`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..model import DesignSettings, NetClass, NetClassRules


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
    )


def parse_project(doc: Mapping[str, Any], path: str) -> ProjectInfo:
    """Build a :class:`ProjectInfo` from a parsed ``.kicad_pro`` JSON document."""
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
            classes=tuple(classes), patterns=tuple(patterns), assignments=assignments
        ),
        text_variables=text_vars,
        design=design,
    )


def read_project(path: str) -> ProjectInfo:
    """Read a ``.kicad_pro``; a broken one is bad input (exit 3), naming the file and line."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(path, f"cannot open: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, "not a KiCad project file (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(doc, Mapping):
        raise InputError(path, "not a KiCad project file (expected a JSON object)")
    return parse_project(doc, path)
