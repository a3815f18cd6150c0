"""Channels: the nets one link really runs on, across AC-coupling capacitors and connectors.

A PCIe, SATA or SFP lane is AC-coupled: the transmitter's pair ends at two series capacitors and
the pair on the far side carries the same signal under another name (``PCIE_PET`` ->
``PCIE_PET_AC``).  Counting nets therefore counts every lane twice; counting *channels* (pairs
joined through series capacitors) does not.  A series capacitor is a two-pad footprint whose
reference starts with ``C`` (IEEE 315 / KiCad's reference designator) and whose two pads sit on
two different signal nets (neither a supply nor ground: a decoupling capacitor joins a rail to
ground, never two signals).  A pair is chained to another only when *both* halves are: P to P'
and N to N' through two capacitors, so an RC filter on one net never merges two links.

Connectors (``rules/connectors.yaml``): a pair whose pads land on the lane pins of an M.2,
OCuLink, PCIe CEM, SFP or QSFP footprint carries that connector's interface, whatever its name.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caseless import CaselessPattern, FirstMatch
from ..yamlsafe import load_schema
from .railnames import is_ground, is_power

if TYPE_CHECKING:
    from ..model import Board, DiffPair

_CAP_REF = re.compile(r"^C\d", re.IGNORECASE)


def series_links(board: Board) -> dict[int, set[int]]:
    """Net -> the signal nets it reaches through one series capacitor (both directions).

    Found once per board (the signal recognition asks twice, the skew and loss checks once
    each; a board is immutable): the mapping returned is shared, read it only."""
    try:
        got = _LINKS.get(board)
    except TypeError:  # (a board-like object without weak references: no memo)
        return _series_links(board)
    if got is None:
        got = _LINKS[board] = _series_links(board)
    return got


_LINKS: weakref.WeakKeyDictionary[Any, dict[int, set[int]]] = weakref.WeakKeyDictionary()


def _series_links(board: Board) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    rail: dict[int, bool] = {}  # net -> a supply or ground (a board's caps share a few rails)
    for fp in board.footprints:
        if not _CAP_REF.match(fp.reference or ""):
            continue
        nets = [p.net for p in fp.pads if p.copper_layers]
        if len(nets) != 2 or nets[0] == nets[1] or not nets[0] or not nets[1]:
            continue
        if any(_is_rail(board, n, rail) for n in nets):
            continue
        a, b = nets
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def _is_rail(board: Board, net: int, seen: dict[int, bool]) -> bool:
    """Whether ``net`` is a supply or ground by name (``seen``: the answers so far)."""
    got = seen.get(net)
    if got is None:
        name = board.nets[net]
        got = seen[net] = is_power(name) or is_ground(name)
    return got


def pair_links(pairs: Sequence[DiffPair], links: Mapping[int, set[int]]) -> dict[int, set[int]]:
    """Pair index -> pair indexes joined to it through series capacitors on both halves."""
    by_net = {}
    for k, p in enumerate(pairs):
        by_net[p.positive] = (k, 1)
        by_net[p.negative] = (k, -1)
    out: dict[int, set[int]] = {}
    for k, p in enumerate(pairs):
        pos = {by_net[n][0] for n in links.get(p.positive, ()) if by_net.get(n, (0, 0))[1] == 1}
        neg = {by_net[n][0] for n in links.get(p.negative, ()) if by_net.get(n, (0, 0))[1] == -1}
        for j in pos & neg:
            if j != k:
                out.setdefault(k, set()).add(j)
                out.setdefault(j, set()).add(k)
    return out


def channels(pairs: Sequence[DiffPair], links: Mapping[int, set[int]]) -> list[list[int]]:
    """The pairs grouped into channels (connected through AC-coupling capacitors), as lists of
    pair indexes, each list in index order."""
    adj = pair_links(pairs, links)
    seen: set[int] = set()
    out = []
    for k in range(len(pairs)):
        if k in seen:
            continue
        stack, group = [k], []
        seen.add(k)
        while stack:
            i = stack.pop()
            group.append(i)
            for j in adj.get(i, ()):
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        out.append(sorted(group))
    return out


def count_lanes(board: Board, nets: Iterable[int]) -> tuple[int, int]:
    """(lanes, channels) of a duplex SerDes link (PCIe: a lane = one TX and one RX pair) carried
    by ``nets``: pairs chained through AC-coupling capacitors count once; nets outside a pair
    count as half a channel each (a pair whose partner was not recognised)."""
    members = set(nets)
    pairs = [p for p in board.diff_pairs if p.positive in members and p.negative in members]
    paired = {n for p in pairs for n in (p.positive, p.negative)}
    groups = channels(pairs, series_links(board))
    single = len(members - paired)
    n_channels = len(groups) + (single + 1) // 2
    return max(1, (n_channels + 1) // 2), n_channels


# ---------------------------------------------------------------------------------------------
# connectors
# ---------------------------------------------------------------------------------------------

#: the JSON schema of ``connectors.yaml`` (``rules/schemas/connectors.schema.json``)
CONNECTORS_SCHEMA: dict[str, Any] = load_schema("connectors")


@dataclass(frozen=True)
class Connector:
    """A connector kind whose lane pins tell the interface (from ``rules/connectors.yaml``)."""

    id: str
    name: str
    footprint: tuple[re.Pattern[str], ...]
    source: str
    pins: Mapping[str, tuple[str, str]]  # pad number -> (interface type, what)


def load_connectors(
    path: str | Path | None = None, known_types: Iterable[str] = ()
) -> list[Connector]:
    """Load and validate ``rules/connectors.yaml`` (``file:line`` errors like every rule file).
    ``known_types``: signal and family ids an interface ``type`` may name (plus ``refclk``)."""
    from ..packs import RULES_DIR, load_yaml, validate

    p = Path(path) if path is not None else RULES_DIR / "connectors.yaml"
    doc = load_yaml(p)
    validate(doc, CONNECTORS_SCHEMA)
    known = set(known_types) | {"refclk", "sideband"}
    out = []
    for cid, c in doc.data["connectors"].items():
        pats: list[Any] = []
        for i, pat in enumerate(c["footprint"]):
            try:  # case-insensitive, cheap to compile (accel_drc.caseless)
                pats.append(CaselessPattern(pat, validate=not doc.trusted))
            except re.error as exc:
                raise doc.error(
                    ("connectors", cid, "footprint", i), f"bad regex {pat!r}: {exc}"
                ) from None
        pins: dict[str, tuple[str, str]] = {}
        for j, itf in enumerate(c["interfaces"]):
            if known_types and itf["type"] not in known:
                raise doc.error(
                    ("connectors", cid, "interfaces", j, "type"),
                    f"unknown interface type {itf['type']!r} (a signal or family id of signals.yaml, refclk or sideband)",
                )
            for pin in itf["pins"]:
                pins[str(pin)] = (itf["type"], itf.get("what", ""))
        out.append(Connector(cid, c["name"], tuple(pats), " ".join(c["source"].split()), pins))
    return out


def connector_of(fp: Any, connectors: Sequence[Connector]) -> Connector | None:
    """The first connector (in ``connectors.yaml`` order) one of whose footprint patterns
    finds the footprint's ``"<library name> <value>"``."""
    return _ConnectorIndex.of(connectors).connector(f"{fp.name} {fp.value}")


class _ConnectorIndex:
    """Every footprint pattern of a connector list as one
    :class:`~accel_drc.caseless.FirstMatch` (the first pattern in list order belongs to the
    first connector that has a match), and the answer per distinct footprint text: a board
    repeats a few footprints (0402 capacitors, one BGA) over thousands of instances."""

    _last: tuple[Any, _ConnectorIndex] | None = None

    def __init__(self, connectors: Sequence[Connector]) -> None:
        self._owner = [c for c in connectors for _ in c.footprint]
        self._first = FirstMatch(p for c in connectors for p in c.footprint)
        self._memo: dict[str, Connector | None] = {}

    @classmethod
    def of(cls, connectors: Sequence[Connector]) -> _ConnectorIndex:
        last = cls._last  # (one connector list per run: the bundled one)
        if last is None or last[0] is not connectors:
            last = cls._last = (connectors, cls(connectors))
        return last[1]

    def connector(self, text: str) -> Connector | None:
        try:
            return self._memo[text]
        except KeyError:
            k = self._first.first(text)
            got = self._memo[text] = self._owner[k] if k >= 0 else None
            return got


@dataclass(frozen=True)
class ConnectorHit:
    """A net landing on a connector's lane pin."""

    net: int
    type: str  # signal or family id, or "refclk"
    connector: str  # connector id
    connector_name: str
    ref: str  # "J1"
    pin: str
    what: str
    source: str


_HITS: weakref.WeakKeyDictionary[Any, tuple[Any, dict[int, ConnectorHit]]] = (
    weakref.WeakKeyDictionary()
)


def connector_nets(board: Board, connectors: Sequence[Connector]) -> dict[int, ConnectorHit]:
    """Net -> the first connector lane pin it lands on (footprints in board order).

    Computed once per (board, connector list): the signal recognition and the coverage table
    both ask (a board is immutable; the caller gets its own copy of the mapping)."""
    try:
        got = _HITS.get(board)
    except TypeError:  # (a board-like object without weak references: no memo)
        return _connector_nets(board, connectors)
    if got is None or got[0] is not connectors:
        got = _HITS[board] = (connectors, _connector_nets(board, connectors))
    return dict(got[1])


def _connector_nets(board: Board, connectors: Sequence[Connector]) -> dict[int, ConnectorHit]:
    out: dict[int, ConnectorHit] = {}
    index = _ConnectorIndex.of(connectors)
    for fp in board.footprints:
        c = index.connector(f"{fp.name} {fp.value}")
        if c is None:
            continue
        for pad in fp.pads:
            got = c.pins.get(str(pad.number))
            if got is None or not pad.net or pad.net in out:
                continue
            out[pad.net] = ConnectorHit(
                pad.net, got[0], c.id, c.name, fp.reference, str(pad.number), got[1], c.source
            )
    return out
