"""Which nets are ground, which are supplies, and at what voltage, by name: the one owner.

Every part of the engine that asks "is this net ground / a supply / what voltage" asks here
(:func:`net_kind`, :func:`is_ground`, :func:`is_power`, :func:`voltage_from_name`): the plane
finder and the return-path reference (:mod:`.nets`, :mod:`.returnpath`), the AC-coupling walk
(:mod:`.channels`), the rails of the PDN model (:mod:`.pdn`) and copper_weight.  Before issue 27
:mod:`.nets` and this module each had their own patterns and disagreed on 101 of the 10,562 net
names of the corpus and the fixtures (``SD_PWR_ON`` a supply for one, ``/DCDC/12V_FB`` for the
other).

The rules, on the name's last path component (for KiCad's unnamed ``Net-(U2-AGND)``, on the pin
name it was named after; an ``unconnected-(…)`` pad is neither):

* **ground**: a word starting ``GND``, ``VSS`` or ``GROUND`` (``AGND``, ``PGND``, ``VSSA``,
  ``GND_SENSE``), or ``0V`` as a voltage of its own (``0V8`` is 0.8 V, not a return);
* **supply**: a KiCad power-symbol name (``+…``), a voltage (``3V3``, ``+1.8V``, ``12Vext``,
  ``A1V8``, ``P0V85``, ``V1P8``), a supply word (``VCC*``, ``VDD*``, ``AVDD``, ``VCORE``, and as a
  word of its own ``VIN``, ``VBUS``, ``VBAT``, ``VSYS``, ``VPP``, ``VIO``, ``VAUX``, ``VMAIN``,
  ``DC_IN``, ``PWR``) — unless another word of the name says it is a *pin of* a supply: an
  enable, a power-good, a feedback, a sense, a bootstrap, a phase, a mode, a current set, a
  clock or data line (``SD_PWR_ON``, ``5VPG``, ``/DCDC/12V_FB``, ``CSIA_3V3_ISET``,
  ``VBUS_SENSE``, ``PS2_CLK5V``, ``VPP/MCLR``).  ``_SW`` is not such a word: a switched rail
  (``3V3_SW``) and a buck's switch node (``/DCDC/5V_SW``) share it, and only the circuit tells
  them apart (:func:`accel_drc.analysis.pdn.switch_nodes`).

Why a module of its own: deciding that a board has no rail candidate (no power-named net owns
a zone, no ``rails:`` declared) needs only these patterns, not the PDN model
(:mod:`accel_drc.analysis.pdn`, its capacitor library and plane geometry): a small board then
never imports it (issue 18, start-up time).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Board

#: a word boundary for these names: start, or a character that is not a letter or digit
_B = r"(?:^|(?<=[^a-z0-9]))"
_GROUND = re.compile(_B + r"(?:[adpsc]?(?:gnd|vss|ground)|0v(?![a-z0-9]))", re.I)
#: a voltage written in the name: 3V3, 12V, 1.8V, 3,3V, 0V85, P0V8 (the P is a prefix letter)
_VOLTAGE = re.compile(r"(?<![0-9.,])(\d+)(?:[.,p](\d+))?v(\d*)(?![0-9])", re.I)
_VXPY = re.compile(r"(?<![a-z0-9])v(\d+)p(\d+)(?![0-9])", re.I)  # V1P8
_POWER = re.compile(
    r"^\+(?=\w)"  # +VBAT, +5V, +V_{ADJ}: KiCad's power symbols (not an op-amp's "+" pin)
    + r"|(?<![a-z0-9.,])[+-]?[a-z]{0,3}\d+(?:[.,p]\d+)?v\d*(?![0-9])"  # 3V3, A1V8, DDC5V, 12Vext
    + r"|(?<![a-z0-9])v\d+p\d+(?![0-9])"  # V1P8
    + r"|"
    + _B
    + r"[adp]?v(?:cc|dd)|"  # VCC*, VDD*, AVDD33, PVDD, VDDQ, VCCINT, SFP_VCCR
    + _B
    + r"vcore"
    # words of their own: VIN but not ADC inputs VINP/VINN, VAUX but not XADC's VAUXP0
    + r"|"
    + _B
    + r"(?:vin|vbus|vbat|vsys|vpp|vio|vaux|vmain|vmem|dc_?in|pwr(?:_?in)?)(?![a-z])",
    re.I,
)
#: words that make a supply-looking name a pin *of* a supply rather than the supply, wherever
#: they stand (``1V0_EN``, ``PCIE_PWR_EN``, ``5VPG``, ``/DCDC/12V_FB``, ``VBUS_SENSE``)
_PIN_OF_A_RAIL = frozenset(
    (
        *("en", "ena", "enable", "pen", "on", "off", "shdn", "run"),  # enables
        *("pg", "pgood", "pwrgd", "pwrok", "pok", "good", "bad", "flt", "fault", "alert", "trip"),
        *("fb", "sense", "sns", "mon", "det", "detect", "iset", "ilim", "comp", "mode"),  # pins
        *("boot", "bst", "phase", "lx", "mclr", "rst", "reset"),
    )
)
#: words that make it a signal in a supply's voltage domain when they come first (``SCL_3V3``,
#: ``ETH12_LED0_3V3``, ``CLK27_1v8``), but a supply of that function when the supply comes
#: first (``P3V3_CLK``, a clock section's filtered 3.3 V; ``VDD_LED``)
_SIGNAL = frozenset(
    ("clk", "data", "sda", "scl", "led", "stat", "status", "err", "error", "sel", "ctrl", "ctl")
)
_WORDS = re.compile(r"[A-Za-z]+")
_UNNAMED = re.compile(r"^Net-\((?:[^-()]*)-(.+)\)$")
_VOLTAGE_WORD = re.compile(r"\d+(?:[.,p]\d+)?v\d*", re.I)
#: a resistance written in a value field: 0R001, R001, 0R, 1m, 1mR, 4m7, 0.001, 10 mΩ, 0 ohm
_OHMS = re.compile(
    r"^(?:(?P<a>\d*)[rRΩ](?P<b>\d+)"  # 0R001, R005, 4R7
    r"|(?P<i>\d+)(?P<u>[mkM])(?P<f>\d+)"  # 4m7, 2k2
    r"|(?P<n>\d+(?:[.,]\d+)?)\s*(?P<p>[mkMuµ])?\s*(?:r|R|Ω|ohms?|Ohms?)?)$"
)
_PREFIX = {None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "u": 1e-6, "µ": 1e-6}


def leaf(name: str) -> str:
    """A hierarchical net name's last path component (``/DCDC/5V_SW`` -> ``5V_SW``)."""
    return name.rsplit("/", 1)[-1]


def _short(name: str) -> str:
    """The part of a net name the rules read: the last path component, or for KiCad's
    unnamed ``Net-(U2-AGND)`` the pin name (``AGND``); "" for an ``unconnected-(…)`` pad."""
    last = leaf(name)
    if last.startswith("unconnected-("):
        return ""
    m = _UNNAMED.match(last)
    return m.group(1) if m else last


def _words(text: str) -> list[str]:
    """The words of ``text`` in lower case, voltages taken out (``5VPG`` -> ``pg``) and an
    active-low ``n`` prefix dropped (``nLED`` -> ``led``)."""
    out = []
    for word in _WORDS.findall(_VOLTAGE_WORD.sub(" ", text)):
        if word[:1] == "n" and word[1:2].isupper():
            word = word[1:]
        out.append(word.lower())
    return out


def _not_the_supply(short: str, end: int) -> bool:
    """True when ``short`` (whose first supply word ends at ``end``) names a pin of a supply
    (an enable, a power-good, a feedback, a sense …) or a signal in its voltage domain."""
    if any(w in _PIN_OF_A_RAIL for w in _words(short)):
        return True
    return any(w in _SIGNAL for w in _words(short[:end]))


def net_kind(name: str) -> str | None:
    """``"ground"``, ``"power"`` (a supply) or ``None`` (a signal, or not known by its name)."""
    s = _short(name or "")
    if not s:
        return None
    if _GROUND.search(s):
        return "ground"
    m = _POWER.search(s)
    if m and not _not_the_supply(s, m.end()):
        return "power"
    return None


def is_ground(name: str) -> bool:
    """A ground / return net by name (``GND``, ``/AGND``, ``VSSA``, ``0V``)."""
    return net_kind(name) == "ground"


def is_power(name: str) -> bool:
    """A supply net by name (``+3V3``, ``VDD_CORE``, ``12V``, ``VCCINT``); ground excluded."""
    return net_kind(name) == "power"


def voltage_from_name(name: str) -> float | None:
    """The voltage a net's name states: ``3V3`` -> 3.3, ``+5V`` -> 5, ``P0V8`` -> 0.8,
    ``VCC_1V2`` -> 1.2, ``1.8V`` -> 1.8, ``3,3V`` -> 3.3, ``V1P8`` -> 1.8; ``None`` when it states
    none.  The first voltage written wins."""
    s = _short(name or "")
    m = _VOLTAGE.search(s)
    if m:
        whole, frac = m.group(1), m.group(2) or m.group(3)
        return float(f"{whole}.{frac}") if frac else float(whole)
    m = _VXPY.search(s)
    if m:
        return float(f"{m.group(1)}.{m.group(2)}")
    return None


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
