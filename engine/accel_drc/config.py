"""The project config ``accel-drc.yaml``: what the board file cannot say.

A KiCad board does not know which nets carry NVLink, which foil its fab laminates, what its
rails draw or which findings were reviewed and accepted.  The config says so, beside the board
(or ``--config FILE``).  It is validated strictly: an unknown key, class, signal id, foil grade
or a bad regular expression is ``file:line: what is wrong`` (exit 3), because a typo that is
silently ignored is a check that silently does not run.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import packs as _packs
from .errors import InputError

CONFIG_NAME = "accel-drc.yaml"

_REGEX_LIST = {"type": "array", "items": {"type": "string"}}
_NUM = {"type": "number"}
_POS = {"type": "number", "exclusiveMinimum": 0}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "class": {"enum": list(_packs.CLASSES)},
        "signals": {"type": "object", "additionalProperties": _REGEX_LIST},
        "stackup": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "foil": {"type": "object", "additionalProperties": {"type": "string"}},
                "materials": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {
                            "material": {"type": "string", "minLength": 1},
                            "epsilon_r": _POS,
                            "loss_tangent": _POS,
                            "tg_c": _POS,
                        },
                    },
                },
            },
        },
        "rules": {
            "type": "object",
            "properties": {"packs": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "minProperties": 1,
                "properties": {
                    "severity": {"enum": ["error", "warning", "info"]},
                    "params": {"type": "object"},
                    "enabled": {"type": "boolean"},
                    "why": {"type": "string", "minLength": 1},
                    "source": {"type": "string", "minLength": 1},
                },
            },
        },
        "waivers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "reason"],
                "properties": {
                    "rule": {"type": "string", "minLength": 1},
                    "net": {"type": "string"},
                    "layer": {"type": "string"},
                    "uuid": {"type": "string"},
                    "reason": {"type": "string", "minLength": 3},
                    "owner": {"type": "string"},
                    "expires": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
                },
            },
        },
        "backdrill": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["match", "side"],
                "properties": {
                    "match": {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {
                            "net_class": {"type": "string"},
                            "signal": {"type": "string"},
                            "net": {"type": "string"},
                        },
                    },
                    "side": {"enum": ["top", "bottom"]},
                    "must_not_cut": {"type": "string", "minLength": 1},
                    "residual_stub_mm": {"type": "number", "minimum": 0},
                },
            },
        },
        "rails": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "nets"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "nets": {**_REGEX_LIST, "minItems": 1},
                    "voltage": _POS,
                    "ripple_pct": _POS,
                    "transient_a": _POS,
                    "vrm": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["r_ohm", "l_h"],
                        "properties": {
                            "r_ohm": {"type": "number", "minimum": 0},
                            "l_h": {"type": "number", "minimum": 0},
                        },
                    },
                    "target_ohm": _POS,
                },
            },
        },
        "capacitors": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mounting_esl_h": {"type": "number", "minimum": 0},
                "packages": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {
                            "esl_body_h": {"type": "number", "minimum": 0},
                            "esr_ohm": {"type": "number", "minimum": 0},
                        },
                    },
                },
                "parts": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "minProperties": 1,
                        "properties": {
                            "esl_h": {"type": "number", "minimum": 0},
                            "esr_ohm": {"type": "number", "minimum": 0},
                            "value_f": {"type": "number", "exclusiveMinimum": 0},
                        },
                    },
                },
            },
        },
        "report": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "dir": {"type": "string", "minLength": 1},
                "marker_layer": {"type": "string", "minLength": 1},
            },
        },
    },
}


def _dates_to_text(data: Any) -> Any:
    """YAML reads ``2026-12-31`` as a date; the schema and the reports want the ISO text."""
    if isinstance(data, dict):
        return {k: _dates_to_text(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_dates_to_text(v) for v in data]
    if isinstance(data, (_dt.date, _dt.datetime)):
        return data.isoformat()[:10]
    return data


@dataclass
class ProjectConfig:
    """A validated ``accel-drc.yaml`` (or the empty config when there is none)."""

    path: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    doc: _packs.YamlDoc | None = None
    signals: dict[str, tuple[re.Pattern[str], ...]] = field(default_factory=dict)
    extra_packs: list[_packs.ClassPack] = field(default_factory=list)

    @property
    def board_class(self) -> str | None:
        return self.data.get("class")

    @property
    def foil(self) -> Mapping[str, str]:
        return self.data.get("stackup", {}).get("foil", {})

    @property
    def materials(self) -> Mapping[str, Mapping[str, Any]]:
        return self.data.get("stackup", {}).get("materials", {})

    @property
    def rule_overrides(self) -> dict[str, Mapping[str, Any]]:
        return {k: v for k, v in self.data.get("rules", {}).items() if k != "packs"}

    @property
    def waivers(self) -> list[Mapping[str, Any]]:
        return list(self.data.get("waivers", []))

    def line_of(self, *where: Any) -> int | None:
        return self.doc.line_of(where) if self.doc else None

    def error(self, where: tuple[Any, ...], message: str) -> InputError:
        if self.doc is None:
            return InputError(self.path or "<config>", message)
        return self.doc.error(where, message)

    def as_mapping(self) -> dict[str, Any]:
        """What checks see as ``ctx.config`` (plain data, validated)."""
        return self.data


def find_config(board_path: str | None) -> str | None:
    if not board_path:
        return None
    cand = Path(board_path).resolve().parent / CONFIG_NAME
    return str(cand) if cand.is_file() else None


def load_config(
    path: str | None,
    board_path: str | None,
    library: _packs.Library | None = None,
) -> ProjectConfig:
    """Load ``path`` (or ``accel-drc.yaml`` beside ``board_path``); the empty config if neither.

    A ``path`` given explicitly must exist.  Signal ids, foil grades, regular expressions and
    extra pack files are checked here; layer names (which need the board) are checked by the
    pipeline against the board, with the same ``file:line`` message.
    """
    if path is None:
        path = find_config(board_path)
        if path is None:
            return ProjectConfig()
    elif not os.path.isfile(path):
        raise InputError(path, "config file not found")
    lib = library if library is not None else _packs.load_library()
    doc = _packs.load_yaml(path)
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        raise doc.error(
            (), "the config must be a mapping (class:, signals:, stackup:, rules:, waivers:, …)"
        )
    doc.data = _dates_to_text(doc.data)
    _packs.validate(doc, CONFIG_SCHEMA)
    data = doc.data
    cfg = ProjectConfig(path=str(path), data=data, doc=doc)

    def compile_(pattern: str, where: tuple[Any, ...]) -> re.Pattern[str]:
        try:
            return re.compile(pattern)
        except re.error as exc:
            raise doc.error(where, f"bad regular expression {pattern!r}: {exc}") from None

    for sid, pats in data.get("signals", {}).items():
        if sid not in lib.signals:
            raise doc.error(
                ("signals", sid), f"unknown signal type {sid!r} (known: {', '.join(lib.signals)})"
            )
        cfg.signals[sid] = tuple(compile_(p, ("signals", sid, i)) for i, p in enumerate(pats))
    for layer, grade in data.get("stackup", {}).get("foil", {}).items():
        if lib.foils.grade(grade) is None:
            raise doc.error(
                ("stackup", "foil", layer),
                f"unknown foil grade {grade!r} for {layer} (known: {', '.join(lib.foils.ids)})",
            )
    for i, w in enumerate(data.get("waivers", [])):
        for key in ("net", "layer", "uuid"):
            if key in w:
                compile_(w[key], ("waivers", i, key))
        if "expires" in w:
            try:
                _dt.date.fromisoformat(w["expires"])
            except ValueError:
                raise doc.error(
                    ("waivers", i, "expires"), f"not a date: {w['expires']!r}"
                ) from None
    for i, b in enumerate(data.get("backdrill", [])):
        for key, pattern in b["match"].items():
            if (
                key == "signal"
                and re.fullmatch(r"[a-z0-9_]+", pattern)
                and pattern not in lib.signals
            ):
                raise doc.error(("backdrill", i, "match", key), f"unknown signal type {pattern!r}")
            compile_(pattern, ("backdrill", i, "match", key))
    for i, r in enumerate(data.get("rails", [])):
        for j, p in enumerate(r["nets"]):
            compile_(p, ("rails", i, "nets", j))
    base = Path(path).resolve().parent
    for i, p in enumerate(data.get("rules", {}).get("packs", [])):
        pack_path = Path(p) if os.path.isabs(p) else base / p
        if not pack_path.is_file():
            raise doc.error(("rules", "packs", i), f"rule pack not found: {p}")
        cfg.extra_packs.append(_packs.load_pack(pack_path, lib.signals, lib.foils))
    # overrides must name real rules and leave valid params: checked for every class here
    overrides = cfg.rule_overrides
    if overrides:
        for cls in _packs.CLASSES:
            _packs.rules_for_class(lib, cls, cfg.extra_packs, overrides, doc)
    return cfg


def check_layers(cfg: ProjectConfig, layer_names: set[str]) -> None:
    """Layer names in ``stackup: foil:`` and ``backdrill: must_not_cut`` must exist on the board."""
    if cfg.doc is None:
        return
    shown = ", ".join(sorted(layer_names))
    for layer in cfg.foil:
        if layer != "default" and layer not in layer_names:
            raise cfg.error(
                ("stackup", "foil", layer),
                f"no copper layer {layer!r} on this board (layers: {shown})",
            )
    for i, b in enumerate(cfg.data.get("backdrill", [])):
        layer = b.get("must_not_cut")
        if layer is not None and layer not in layer_names:
            raise cfg.error(
                ("backdrill", i, "must_not_cut"),
                f"no copper layer {layer!r} on this board (layers: {shown})",
            )


def check_dielectrics(cfg: ProjectConfig, names: set[str]) -> None:
    """Dielectric names in ``stackup: materials:`` must exist in the board's stack-up."""
    if cfg.doc is None:
        return
    for name in cfg.materials:
        if name not in names:
            raise cfg.error(
                ("stackup", "materials", name),
                f"no dielectric {name!r} in the stack-up (dielectrics: {', '.join(sorted(names)) or 'none'})",
            )
