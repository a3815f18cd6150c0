"""Which net names are ground and which are power rails (the PDN analysis' naming rules).

Why a module of its own: deciding that a board has no rail candidate (no power-named net owns
a zone, no ``rails:`` declared) needs only these two patterns, not the PDN model
(:mod:`accel_drc.analysis.pdn`, its capacitor library and plane geometry): a small board then
never imports it (issue 18, start-up time).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Board

_GROUND = re.compile(r"(^|[^a-z0-9])[adpsc]?(gnd|vss|ground)|^0v$", re.I)
_POWER = re.compile(
    r"^\+"  # +VBAT, +5V: KiCad's power symbols
    r"|^[+-]?\d+([.,p]\d+)?v\d*"  # 3V3, +5V, 1.8V, 12V0
    r"|^(vcc|vdd|vddq|vccio|vcore|vin|vbus|vbat|vpp|vio|avdd|dvdd|pvdd|avcc|dvcc|vsys|vmain|pwr)"
    r"|^p\d+v\d*"  # P3V3, P0V8
    r"|^v\d+p\d+"  # V1P8
    r"|\d+v\d*$"  # VCC_3V3, *_1V8, *V0
    # an input rail anywhere in the name: SYS_VIN_HV, /PWR/VSYS, BAT_VBAT, DC_IN, USB_VBUS
    r"|(^|[_/.{-])(vin|vsys|vbat|vbus|dc_?in|vmain|pwr_?in)($|[_/.}-]|\d)",
    re.I,
)
#: a resistance written in a value field: 0R001, R001, 0R, 1m, 1mR, 4m7, 0.001, 10 mΩ, 0 ohm
_OHMS = re.compile(
    r"^(?:(?P<a>\d*)[rRΩ](?P<b>\d+)"  # 0R001, R005, 4R7
    r"|(?P<i>\d+)(?P<u>[mkM])(?P<f>\d+)"  # 4m7, 2k2
    r"|(?P<n>\d+(?:[.,]\d+)?)\s*(?P<p>[mkMuµ])?\s*(?:r|R|Ω|ohms?|Ohms?)?)$"
)
_PREFIX = {None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "u": 1e-6, "µ": 1e-6}


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def is_ground(name: str) -> bool:
    return bool(name) and bool(_GROUND.search(_short(name)))


def is_power(name: str) -> bool:
    s = _short(name)
    return bool(s) and not is_ground(name) and bool(_POWER.search(s))


def no_rails(board: Board, config: Any) -> bool:
    """True only when :func:`accel_drc.analysis.pdn.find_rails` is sure to find no rail: the
    config declares no ``rails:`` and no zone that is not a keep-out belongs to a power-named
    net (``find_rails`` detects a rail only from such a zone).  False when in doubt (a zone's
    net index out of range takes the full path, which reports it as before)."""
    if getattr(config, "rails", None):
        return False
    nets = board.nets
    for z in board.zones:
        if z.keepout or z.net <= 0:
            continue
        if z.net >= len(nets) or is_power(nets[z.net]):
            return False
    return True


def resistance_ohm(value: str) -> float | None:
    """The resistance a part's value field states, in Ω (``None`` when it states none): the
    first word of ``R_0R001_0805`` (KiCad's library naming), ``0R``, ``1m``, ``4m7``, ``10 mΩ``.
    Used to join the nets of a current-sense shunt or a 0 Ω link into one rail."""
    text = (value or "").strip()
    if text[:2] in ("R_", "r_"):
        text = text[2:]
    word = re.split(r"[_\s/]", text, maxsplit=1)[0] if "_" in text else text
    m = _OHMS.match(word.strip())
    if not m:
        return None
    if m.group("b") is not None:
        return float(f"{m.group('a') or 0}.{m.group('b')}")
    if m.group("u") is not None:
        return float(f"{m.group('i')}.{m.group('f')}") * _PREFIX[m.group("u")]
    if m.group("n") is None:
        return None
    return float(m.group("n").replace(",", ".")) * _PREFIX[m.group("p")]
