"""Issue 28, item 6: every hint is followable.

Every distinct ``evidence["declare"]`` the fixture boards (and vme-wren, where it is present)
produce is pasted into accel-drc.yaml the way a user would paste it: the YAML the hint quotes,
its placeholders (``<εr>``, ``<mm>``, ``[...]``) filled with a plausible value.  The board is
checked again and the finding the hint came from must have changed: resolved, become a fact, or
moved to the other verdict.  A hint that cannot be pasted (not valid config once filled in, or
no config in it at all) fails here, as does a hint that changes nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from accel_drc.config import load_config
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.results import Finding
from conftest import FIXTURE_BOARDS, SHARED_BOARDS

LIB = load_library()
VME = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
BOARDS = {**FIXTURE_BOARDS, **({"vme-wren": VME} if VME.exists() else {})}

#: a plausible value per key a hint leaves open, then per placeholder text
BY_KEY = {
    "thickness_mm": "0.15",
    "epsilon_r": "3.6",
    "loss_tangent": "0.004",
    "thickness_um": "35",
    "rz_top_um": "2.0",
    "rz_bottom_um": "2.0",
    "ripple_pct": "3",
    "transient_a": "1",
    "r_ohm": "0.001",
    "l_h": "1.0e-9",
    "voltage": "1.0",
    "material": "Megtron 6",
    "default": "HVLP",
    "delays": "compensated",
    "name": "VDD_CORE",
    "mounting_esl_h": "0.3e-9",
    "esl_body_h": "0.4e-9",
}
BY_PLACEHOLDER = {
    "Df": "0.004",
    "dB at Nyquist": "20",
    "A": "1.0",
    "V": "1.0",
    "layer": "default",
    "foil grade": "HVLP",
}
#: the top-level keys of accel-drc.yaml, from its schema (a new section is pasteable at once)
ROOTS = tuple(sorted(__import__("accel_drc.config", fromlist=["x"]).CONFIG_SCHEMA["properties"]))
_ROOT = "(" + "|".join(ROOTS) + ")"


@functools.cache
def _board(path: Path) -> Any:
    return read_board(str(path))


def _check(path: Path, cfg_file: Path | None) -> list[Finding]:
    cfg = load_config(str(cfg_file) if cfg_file else None, None, LIB)
    return check_board(_board(path), cfg, library=LIB).findings


@functools.cache
def _baseline(name: str) -> tuple[Finding, ...]:
    return tuple(_check(BOARDS[name], None))


def _hints() -> Iterator[tuple[str, str, str]]:
    """(board, rule, hint) for every distinct hint, first finding of each.  The package-delay
    hints of a skew rule differ only in the pads they name (one per DQ net): one of each
    board and rule stands for them (each re-check of vme-wren takes seconds)."""
    seen: set[str] = set()
    for name in BOARDS:
        for f in _baseline(name):
            hint = f.evidence.get("declare")
            if not isinstance(hint, str):
                continue
            key = f"{name} {f.rule} package" if "package_delays:" in hint else hint
            if key not in seen:
                seen.add(key)
                yield name, f.rule, hint


def _nets_of(f: Finding) -> list[str]:
    nets = f.evidence.get("nets")
    names = [str(n) for n in nets] if isinstance(nets, (list, tuple)) and nets else []
    return names or ([f.net] if f.net else [])


def _fill(text: str, f: Finding) -> str:
    """The hint's placeholders filled in as a user would."""
    sid = f.rule.rsplit(".", 1)[-1]
    sid = sid if sid in LIB.signals else "usb3"
    text = text.replace("<signal>", sid).replace("<type>", sid)
    text = text.replace("'<laminate>'", "'Megtron 6'")
    text = re.sub(
        r"(\w+): <([^>]*)>",
        lambda m: f"{m.group(1)}: {BY_KEY.get(m.group(1)) or BY_PLACEHOLDER.get(m.group(2), '1')}",
        text,
    )
    text = re.sub(r"<([^>]*)>", lambda m: BY_PLACEHOLDER.get(m.group(1), "1"), text)
    nets = ", ".join("'" + re.escape(n).replace("'", "''") + "'" for n in _nets_of(f))
    return text.replace("[...]", f"[{nets}]")


def _segments(hint: str) -> list[str]:
    """The config fragments a one-line hint quotes: from a top-level key of accel-drc.yaml to
    the end of its balanced value (``;``, `` or ``, a closing parenthesis or the end)."""
    out = []
    for m in re.finditer(r"(?<![\w.])" + _ROOT + ": ", hint):
        if out and m.start() < out[-1][1]:
            continue
        depth, i, quote = 0, m.end(), None
        while i < len(hint):
            c = hint[i]
            if quote:
                quote = None if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c in "{[(":
                depth += 1
            elif c in "}])":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (c == ";" or hint.startswith((" or ", ", or ", "  ("), i)):
                break
            i += 1
        out.append((m.start(), i))
    return [hint[a:b].strip() for a, b in out]


def _fragment(segment: str) -> dict[str, Any]:
    """``stackup: materials: {…}`` as nested mappings (YAML flow has no ``a: b: c`` chains)."""
    keys = []
    rest = segment
    while True:
        m = re.match(r"([\w .+/-]+?): (?=[^{\[']|[{\[])", rest)
        if (
            m is None
            or rest[m.end() :].lstrip()[:1] in "{['"
            or not re.match(r"[\w .]+: ", rest[m.end() :])
        ):
            if m is not None:
                keys.append(m.group(1))
                rest = rest[m.end() :]
            break
        keys.append(m.group(1))
        rest = rest[m.end() :]
    value = yaml.safe_load(rest)
    for k in reversed(keys):
        value = {k: value}
    return value


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        elif isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = out[k] + v
        else:
            out[k] = v
    return out


def paste(hint: str, f: Finding) -> dict[str, Any]:
    """The config a user writes from ``hint`` for finding ``f``."""
    filled = _fill(hint, f)
    block = re.search(r"(?m)^" + _ROOT + r":\s*$", filled)
    if block is not None:  # a multi-line YAML block to paste as is
        return yaml.safe_load(filled[block.start() :])
    cfg: dict[str, Any] = {}
    for seg in _segments(filled):
        cfg = _merge(cfg, _fragment(seg))
    return cfg


def _state(findings: Any, f: Finding) -> list[tuple[Any, ...]]:
    key = (f.rule, f.net, f.layer)
    return sorted(
        (g.status.value, tuple(sorted((g.evidence.get("basis") or {}).items())), g.message[:80])
        for g in findings
        if (g.rule, g.net, g.layer) == key
    )


HINTS = list(_hints())


def test_the_boards_give_hints_of_every_kind():
    kinds = {rule.split(".")[1] if rule.count(".") else rule for _, rule, _ in HINTS}
    assert {"impedance", "material_consistency", "assumed_type", "unknown_interface"} <= kinds


@pytest.mark.parametrize(("board", "rule", "hint"), HINTS, ids=[f"{b}:{r}" for b, r, _ in HINTS])
def test_every_hint_is_followable(tmp_path, board, rule, hint):
    f = next(g for g in _baseline(board) if g.evidence.get("declare") == hint)
    cfg = paste(hint, f)
    assert cfg, f"no accel-drc.yaml in the hint: {hint!r}"
    path = tmp_path / "accel-drc.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False))
    after = _check(BOARDS[board], path)  # the pasted config must be valid (else exit 3)
    assert _state(after, f) != _state(_baseline(board), f), (
        f"following {hint!r} ({cfg}) changed nothing in {f.rule} {f.net or ''}"
    )
