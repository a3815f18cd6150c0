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
    r"|\d+v\d*$",  # VCC_3V3, *_1V8, *V0
    re.I,
)


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
