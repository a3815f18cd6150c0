"""Which signal type each net carries.

Order of evidence, strongest first: the project config's ``signals:`` (the designer said so;
its regexes match the whole net name, like every regex in the config),
then the net class patterns of each signal type, then its net-name patterns, then the *families*
whose generation a name does not tell (``PCIe_TX0``): those get the family's assumed type and a
note that says so, and the report shows it.  The two nets of a differential pair always share a
type: a pair half-declared is still one link.

A net or class name longer than ``hostile.MAX_MATCH_NAME`` is matched by no pattern, so no
pattern can backtrack for minutes on a hostile 160 KB net name.

**The basis of a net's type** (issue 26: one owner; every check and the coverage table ask
:attr:`SignalAssignment.basis` or :func:`signal_basis`).  One rule: ``assumed`` when the type
carries an assumption (a family whose generation was guessed: ``PCIe_TX0`` → Gen4), else
``declared``.  Declared covers the project's ``signals:`` and every type read from the board's
own data through the rule data's patterns: a net class or net name that states the type, the
lane pin of a connector footprint the board places.  A net typed through AC-coupling capacitors
or as the other half of a typed pair is the same lane: it inherits the type *and* its
assumption, so its basis is the basis of the net it inherits from (a lane behind the caps of a
``PCIE4_TX0`` is declared; behind the caps of a ``PCIe_TX0`` it is assumed).  Never
``measured``: a name is not geometry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..caseless import FirstMatch
from ..config import ProjectConfig, as_config
from ..hostile import MAX_MATCH_NAME

if TYPE_CHECKING:
    from ..model import Board
    from ..packs import Library


@dataclass(frozen=True)
class SignalAssignment:
    """Net -> signal type, with how it was recognised and any assumption made."""

    signal: str
    how: str  # config | net_class | net_name | family_net_class | family_net_name | connector | ac_coupled | pair
    pattern: str = ""  # the pattern (or partner net) that matched
    assumption: str | None = None  # set when the type was assumed (generation unknown)
    family: str | None = None

    @property
    def basis(self) -> str:
        """The basis of this type (module doc): ``assumed`` or ``declared``."""
        return basis_of(self.assumption)

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "how": self.how,
            "pattern": self.pattern,
            "assumption": self.assumption,
        }


def basis_of(assumption: str | None) -> str:
    """The one rule for the basis of a recognised type: ``assumed`` when the recognition had to
    assume something (the generation of a family), else ``declared`` (module doc)."""
    return "assumed" if assumption else "declared"


def signal_basis(net_signal: Mapping[int, SignalAssignment] | None, net: int) -> str:
    """The basis of net ``net``'s type in ``net_signal`` (``Analysis.net_signal``) as a
    per-signal rule judging the net records it; ``assumed`` for a net with no type (a rule that
    judges it against a type nobody gave it rests on an assumption)."""
    a = net_signal.get(net) if isinstance(net_signal, Mapping) else None
    return "assumed" if a is None else a.basis


def nets_signal_basis(
    net_signal: Mapping[int, SignalAssignment] | None, nets: Iterable[int]
) -> str:
    """The basis of the type a finding about several nets (a pair, the nets of one layer) rests
    on: the weakest of their :func:`signal_basis`."""
    bases = {signal_basis(net_signal, n) for n in nets}
    return "assumed" if "assumed" in bases or not bases else "declared"


def _compile_config(config: ProjectConfig) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for sid, pats in config.signals.items():
        for p in pats:
            out.append((sid, p))
    return out


def assign_signals(
    board: Board, lib: Library, config: ProjectConfig | Mapping[str, Any] | None = None
) -> dict[int, SignalAssignment]:
    """Net index -> assignment for every net that carries a known signal type."""
    declared = _compile_config(as_config(config))
    rec = recogniser(lib)
    out: dict[int, SignalAssignment] = {}
    rules = board.net_classes
    for idx, name in enumerate(board.nets):
        if idx == 0 or not name or len(name) > MAX_MATCH_NAME:
            continue  # a longer name is matched by no pattern (bounded cost: see module doc)
        got = None
        for sid, pat in declared:
            if pat.fullmatch(name):
                got = SignalAssignment(sid, "config", pat.pattern)
                break
        if got is None and not rec.exclude.any(name):
            got = rec.recognise(name, rules.class_of(name))
        if got is not None:
            out[idx] = got
    _by_connector(board, lib, out)
    _across_ac_caps(board, out)
    for pair in board.diff_pairs:
        a, b = out.get(pair.positive), out.get(pair.negative)
        if a is not None and b is None:
            out[pair.negative] = SignalAssignment(
                a.signal, "pair", board.nets[pair.positive], a.assumption, a.family
            )
        elif b is not None and a is None:
            out[pair.positive] = SignalAssignment(
                b.signal, "pair", board.nets[pair.negative], b.assumption, b.family
            )
    return out


_CONNECTORS: dict[tuple[str, ...], list[Any]] = {}


def connectors_for(lib: Library) -> list[Any]:
    """``rules/connectors.yaml``, validated against this library's signal and family ids (loaded
    once per set of ids)."""
    from .channels import load_connectors

    key = tuple(sorted(lib.signals)) + ("|",) + tuple(sorted(lib.families))
    if key not in _CONNECTORS:
        _CONNECTORS[key] = load_connectors(known_types=list(lib.signals) + list(lib.families))
    return _CONNECTORS[key]


def _by_connector(board: Board, lib: Library, out: dict[int, SignalAssignment]) -> None:
    """Nets no name or class recognised, landing on a connector's lane pin (M.2, OCuLink, CEM
    edge, SFP, QSFP): the connector's interface; a family's generation stays an assumption."""
    from .channels import connector_nets

    exclude = recogniser(lib).exclude
    for net, hit in connector_nets(board, connectors_for(lib)).items():
        if net in out or hit.type == "refclk" or exclude.any(board.nets[net]):
            continue
        where = f"{hit.ref}.{hit.pin} on {hit.connector_name} ({hit.what})"
        if hit.type in lib.signals:
            out[net] = SignalAssignment(hit.type, "connector", where)
        elif hit.type in lib.families:
            fam = lib.families[hit.type]
            note = f"recognised by its connector pin {where}; {fam.note}"
            out[net] = SignalAssignment(fam.assume, "connector", where, note, fam.id)


def _across_ac_caps(board: Board, out: dict[int, SignalAssignment]) -> None:
    """A pair joined to a typed pair through series (AC-coupling) capacitors on both halves is
    the same lane under another name: it gets the same type (``how`` = ``ac_coupled``)."""
    from .channels import pair_links, series_links

    pairs = board.diff_pairs
    adj = pair_links(pairs, series_links(board)) if pairs else {}
    todo = [k for k in adj if pairs[k].positive in out]
    while todo:
        k = todo.pop()
        src = out[pairs[k].positive]
        for j in adj.get(k, ()):
            p = pairs[j]
            if p.positive in out or p.negative in out:
                continue
            for n, partner in ((p.positive, pairs[k].positive), (p.negative, pairs[k].negative)):
                out[n] = SignalAssignment(
                    src.signal, "ac_coupled", board.nets[partner], src.assumption, src.family
                )
            todo.append(j)


class Recogniser:
    """The recognition of one library, each ordered pattern list as one
    :class:`~accel_drc.caseless.FirstMatch`: one regular-expression call per net name (and per
    distinct net class), the same result as trying each pattern in turn in the order of precedence
    (the module doc; ``tests/test_signals_fast.py`` keeps that loop and compares the two)."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        self.exclude = FirstMatch(lib.exclude)
        sigs = list(lib.signals.values())
        fams = list(lib.families.values())
        # signal class patterns -> (signal, pattern); a class name is matched once per board
        self._sig_class = [(s, p) for s in sigs for p in s.class_patterns]
        self._sig_class_fm = FirstMatch(p for _, p in self._sig_class)
        # family class patterns -> (family rank, family, pattern)
        self._fam_class = [(k, f, p) for k, f in enumerate(fams) for p in f.class_patterns]
        self._fam_class_fm = FirstMatch(p for _, _, p in self._fam_class)
        # name patterns: every signal's, then every family's (the order of precedence)
        self._names: list[tuple[int, Any, Any]] = [
            (-1, s, p) for s in sigs for p in s.name_patterns
        ]
        self._names += [(k, f, p) for k, f in enumerate(fams) for p in f.name_patterns]
        self._names_fm = FirstMatch(p for _, _, p in self._names)
        self._classes: dict[str, tuple[SignalAssignment | None, int]] = {}

    def _of_class(self, net_class: str) -> tuple[SignalAssignment | None, int]:
        """(the signal a class pattern gives, rank of the first family whose class pattern
        matches or a rank beyond every family) of a net class name, cached per name."""
        got = self._classes.get(net_class)
        if got is None:
            sig: SignalAssignment | None = None
            fam_rank = len(self.lib.families)
            if net_class and net_class != "Default":
                k = self._sig_class_fm.first(net_class)
                if k >= 0:
                    s, p = self._sig_class[k]
                    sig = SignalAssignment(s.id, "net_class", f"{net_class} ~ {p.pattern}")
                k = self._fam_class_fm.first(net_class)
                if k >= 0:
                    fam_rank = self._fam_class[k][0]
            got = self._classes[net_class] = (sig, fam_rank)
        return got

    def recognise(self, name: str, net_class: str) -> SignalAssignment | None:
        """The signal of net ``name`` in class ``net_class``: each signal's class patterns,
        then each signal's name patterns, then per family its class then name patterns."""
        if len(net_class) > MAX_MATCH_NAME:
            net_class = ""  # a hostile .kicad_pro class name: not matched (bounded cost)
        sig, fam_rank = self._of_class(net_class)
        if sig is not None:
            return sig
        k = self._names_fm.first(name)
        rank, owner, p = self._names[k] if k >= 0 else (len(self.lib.families), None, None)
        if rank < 0:  # a signal's own name pattern
            return SignalAssignment(owner.id, "net_name", p.pattern)
        if fam_rank < len(self.lib.families) and fam_rank <= rank:
            # the family's class pattern comes before its (and later families') name patterns
            fam = list(self.lib.families.values())[fam_rank]
            k = self._fam_class_fm.first(net_class)
            return SignalAssignment(
                fam.assume,
                "family_net_class",
                f"{net_class} ~ {self._fam_class[k][2].pattern}",
                fam.note,
                fam.id,
            )
        if owner is not None:
            return SignalAssignment(
                owner.assume, "family_net_name", p.pattern, owner.note, owner.id
            )
        return None


_RECOGNISERS: dict[int, tuple[Any, Recogniser]] = {}


def recogniser(lib: Library) -> Recogniser:
    """The :class:`Recogniser` of ``lib`` (built once per library object; a few kept)."""
    got = _RECOGNISERS.get(id(lib))
    if got is None or got[0] is not lib:
        if len(_RECOGNISERS) >= 8:
            _RECOGNISERS.clear()
        got = _RECOGNISERS[id(lib)] = (lib, Recogniser(lib))
    return got[1]


@dataclass(frozen=True)
class SignalGroup:
    """One item a per-signal check reports on: a differential pair, or a single net."""

    name: str
    nets: tuple[int, ...]
    is_pair: bool


def signal_groups(board: Board, net_ids: tuple[int, ...]) -> list[SignalGroup]:
    """Group the nets of one signal type into pairs (both halves present) and single nets."""
    members = set(net_ids)
    out = []
    used: set[int] = set()
    for pair in board.diff_pairs:
        if pair.positive in members and pair.negative in members:
            out.append(SignalGroup(pair.name, (pair.positive, pair.negative), True))
            used.update((pair.positive, pair.negative))
    for n in net_ids:
        if n not in used:
            out.append(SignalGroup(board.nets[n], (n,), False))
    out.sort(key=lambda g: g.name)
    return out
