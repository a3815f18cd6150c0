"""Which signal type each net carries, on what basis, and what impedance the designer declared.

Order of evidence, strongest first (docs/rules.md "How a net's interface, rate and target are
decided"): the project config's ``signals:`` (the designer said so; its regexes match the whole
net name, like every regex in the config; ``signals: sideband:`` declares sideband nets); the
pins the net lands on; the net class; its name.  **Sideband first**: a net on a sideband contact
(USB-C SBU, HDMI CEC, SFP TX_DISABLE: ``rules/connectors.yaml``), on a pin whose name is a
sideband name (``pinfunction``), or so named, is never a lane (:func:`assign_sidebands`), whatever
its net class.  **Pins**: a DRAM recognised by its ball names types its lanes (generation a
fact, speed grade assumed); a connector lane pin fills a net nothing else typed and replaces a
family *guess* by the member the part tells (an SFP28 connector: 25G), across the AC caps too;
an IC pin name gives the family.  **The net class is a routing class**: it gives the family
(rate assumed) unless it names the member (``PCIe_Gen4``), and gives way to the family the
net's own name states.  Then the net name, then the *families* whose generation a name does not
tell (``PCIe_TX0``): those get the family's assumed type and a note that says so.  The two nets
of a differential pair always share a type: a pair half-declared is still one link.

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

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
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
    how: str  # config | pin | connector | net_class | net_name | family_net_class | family_net_name | ac_coupled | pair
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


#: the key of the config's ``signals:`` that declares sideband nets (not a signal type)
SIDEBAND = "sideband"


def _compile_config(config: ProjectConfig) -> list[tuple[str, re.Pattern[str]]]:
    """The config's ``signals:`` patterns in config order, ``sideband`` among them (first
    declared wins, like ``config.unmatched_entries`` says)."""
    out = []
    for sid, pats in config.signals.items():
        for p in pats:
            out.append((sid, p))
    return out


@dataclass(frozen=True)
class Sideband:
    """A net that is sideband or control (SBU, AUX, HPD, CEC, SFP management, …), never a
    lane: judged by no data-lane rule, listed as sideband in the coverage."""

    kind: str  # the signals.yaml sideband id, or "config"
    what: str
    how: str  # config | connector | pin | net_name
    pattern: str  # the evidence: the pattern, or ``J9.A8 SBU_{1}``

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "what": self.what, "how": self.how, "pattern": self.pattern}


def assign_sidebands(
    board: Board, lib: Library, config: ProjectConfig | Mapping[str, Any] | None = None
) -> dict[int, Sideband]:
    """Net index -> :class:`Sideband` for every sideband / control net, in the order of
    evidence: the config (``signals: sideband:``, unless an earlier ``signals:`` entry types
    the net), the connector pin it lands on, the IC pin name it lands on, its name."""
    declared = _compile_config(as_config(config))
    kinds = getattr(lib, "sideband", ())
    out: dict[int, Sideband] = {}
    names = board.nets
    for idx, name in enumerate(names):
        if idx == 0 or not name or len(name) > MAX_MATCH_NAME:
            continue
        for sid, pat in declared:
            if pat.fullmatch(name):
                if sid == SIDEBAND:
                    out[idx] = Sideband("config", "declared sideband", "config", pat.pattern)
                break
    if not kinds:
        return out
    _sideband_by_connector(board, lib, out)
    typed_by_config = {
        i
        for i, n in enumerate(names)
        if i and n and len(n) <= MAX_MATCH_NAME
        for sid, pat in declared
        if sid != SIDEBAND and pat.fullmatch(n)
    }
    first = recogniser(lib).sideband_kind
    memo: dict[str, Any] = {}
    for fp, pad in board.pads:
        n = pad.net
        if n <= 0 or n in out or n in typed_by_config or not pad.pin_function:
            continue
        if len(pad.pin_function) > MAX_MATCH_NAME:  # a hostile pin name: matched by no pattern
            continue
        got = _memo(memo, pad.pin_function, first)
        if got is not None:
            k = got[0]
            out[n] = Sideband(
                k.id, k.what, "pin", f"{fp.reference}.{pad.number} {pad.pin_function}"
            )
    for idx, name in enumerate(names):
        if idx == 0 or idx in out or idx in typed_by_config or not name:
            continue
        if len(name) > MAX_MATCH_NAME:
            continue
        got = _memo(memo, name, first)
        if got is not None:
            k, pat = got
            out[idx] = Sideband(k.id, k.what, "net_name", pat.pattern)
    return out


def _memo(memo: dict[str, Any], text: str, fn: Callable[[str], Any]) -> Any:
    """``fn(text)``, memoised per text in ``memo``."""
    if text not in memo:
        memo[text] = fn(text)
    return memo[text]


def _sideband_by_connector(board: Board, lib: Library, out: dict[int, Sideband]) -> None:
    """Nets on a connector's sideband contact (rules/connectors.yaml ``type: sideband``)."""
    from .channels import connector_nets

    for net, hit in connector_nets(board, connectors_for(lib)).items():
        if net not in out and hit.type == SIDEBAND:
            where = f"{hit.ref}.{hit.pin} on {hit.connector_name} ({hit.what})"
            out[net] = Sideband("connector", hit.what, "connector", where)


def assign_signals(
    board: Board,
    lib: Library,
    config: ProjectConfig | Mapping[str, Any] | None = None,
    sidebands: Mapping[int, Sideband] | None = None,
) -> dict[int, SignalAssignment]:
    """Net index -> assignment for every net that carries a known signal type.

    Order of evidence (docs/rules.md "How a net's interface, rate and target are decided"):
    the config; the pins the net lands on (sideband contacts and pin names first: such a net
    gets no type; a connector whose part tells the rate, an SFP28 cage, over a family guess;
    DRAM ball names); the net class; its name.  ``sidebands``: :func:`assign_sidebands` of the
    same board, library and config when the caller has it (``Analysis`` keeps one), else
    computed here."""
    declared = _compile_config(as_config(config))
    rec = recogniser(lib)
    side = sidebands if sidebands is not None else assign_sidebands(board, lib, config)
    out: dict[int, SignalAssignment] = {}
    rules = board.net_classes
    for idx, name in enumerate(board.nets):
        if idx == 0 or not name or len(name) > MAX_MATCH_NAME:
            continue  # a longer name is matched by no pattern (bounded cost: see module doc)
        got = None
        for sid, pat in declared:
            if pat.fullmatch(name):
                if sid != SIDEBAND:
                    got = SignalAssignment(sid, "config", pat.pattern)
                break
        if got is None and idx not in side and not rec.exclude.any(name):
            got = rec.recognise(name, rules.class_of(name))
        if got is not None:
            out[idx] = got
    _by_dram_balls(board, lib, out, side)
    _by_connector(board, lib, out, side)
    _part_rate_across_ac_caps(board, lib, out)
    _by_pin_names(board, lib, out, side)
    _across_ac_caps(board, out, side)
    for pair in board.diff_pairs:
        a, b = out.get(pair.positive), out.get(pair.negative)
        if a is not None and b is None and pair.negative not in side:
            out[pair.negative] = SignalAssignment(
                a.signal, "pair", board.nets[pair.positive], a.assumption, a.family
            )
        elif b is not None and a is None and pair.positive not in side:
            out[pair.positive] = SignalAssignment(
                b.signal, "pair", board.nets[pair.negative], b.assumption, b.family
            )
    return out


#: DRAM generations by the ball names of the part (JESD79-3/-4/-5, JESD209-4/-5), tried in
#: order on the set of a footprint's pin names (upper case, ``{}``/``#`` dropped): LPDDR5 has
#: WCK, LPDDR4 suffixes its channel (``DQ0_A``, ``CA0_A``), DDR5 has CA0-13 and CS_n but no bank
#: address, DDR4 has ACT_n and BG, DDR3 has RAS/CAS/WE
_DRAM_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("lpddr5", re.compile(r"^WCK\d?_?[TC]")),
    ("lpddr4", re.compile(r"^(DQ\d+|CA\d|DQS\d?_?[TC])_[AB]$")),
    ("ddr4", re.compile(r"^(ACT_?N|BG\d)$")),
    ("ddr3", re.compile(r"^(RAS|CAS|WE)(_?N)?$")),
    ("ddr5", re.compile(r"^CA1[0-3]$")),
)
#: a DRAM's lane balls: data, strobes, masks, command/address, chip select, clocks; not
#: LPDDR4's ODT_CA, a static strap tied to VDD2 or VSS (JESD209-4 ball description), where
#: DDR3/DDR4's ODT is a command the controller drives
_DRAM_LANE = re.compile(
    r"^(DQ\d+|DQS|DM|DMI|TDQS|RDQS|WCK|CA\d|A\d|BA\d|BG\d|CS|CK|CKE|ODT(?!_?CA)|ACT|RAS|CAS|WE|PAR"
    r"|MIR|CAI)",
)
_DQ = re.compile(r"^DQ\d+(_[AB])?$")


def _ball(name: str) -> str:
    return name.upper().replace("{", "").replace("}", "").replace("#", "_N")


def dram_kind(fp: Any) -> tuple[str, str] | None:
    """(signal id, evidence) when ``fp``'s pin names are a DRAM's (at least 8 DQ balls and
    the signature of one generation: :data:`_DRAM_KINDS`), else None."""
    balls = {_ball(p.pin_function) for p in fp.pads if p.pin_function}
    if sum(1 for b in balls if _DQ.match(b)) < 8:
        return None
    for sid, sig in _DRAM_KINDS:
        hits = sorted(b for b in balls if sig.match(b))
        if hits:
            return sid, f"{fp.reference} ball names ({', '.join(hits[:4])} …)"
    return None


def _variant_of_part(fp: Any, lib: Library, sid: str, where: str) -> tuple[str, str]:
    """The variant of DRAM generation ``sid`` the part's value or library name states (an
    LPDDR4X shares LPDDR4's balls: ``MT53E…`` says nothing, ``LPDDR4X`` in the value does):
    a signal type whose id extends ``sid`` and whose name patterns match the part's text."""
    text = f"{fp.value} {fp.name}"
    for st in lib.signals.values():
        if st.id != sid and st.id.startswith(sid) and any(p.search(text) for p in st.name_patterns):
            return st.id, f"{where}; the part says {st.name.split(' (')[0]}"
    return sid, where


def _by_dram_balls(
    board: Board, lib: Library, out: dict[int, SignalAssignment], side: Mapping[int, Any]
) -> None:
    """Nets on the lane balls of a DRAM recognised by its ball names (``pinfunction``): its
    generation is a fact of the part; its speed grade is not, so the rate is assumed."""
    for fp in board.footprints:
        if len(fp.pads) < 60:  # a DRAM has 78 balls (x4/x8 DDR4/5) or more
            continue
        got = dram_kind(fp)
        if got is None or got[0] not in lib.signals:
            continue
        sid, where = got
        sid, where = _variant_of_part(fp, lib, sid, where)
        st = lib.signals[sid]
        note = (
            f"{st.name.split(' (')[0]} recognised by {where}; the parts do not tell the speed "
            f"grade: assumed {st.name} (declare it in accel-drc.yaml signals: {sid}: [...])"
        )
        for pad in fp.pads:
            n = pad.net
            if n <= 0 or n in side or not pad.pin_function:
                continue
            if not _DRAM_LANE.match(_ball(pad.pin_function)):
                continue
            cur = out.get(n)
            if cur is None or (cur.assumption and cur.how != "config"):
                out[n] = SignalAssignment(
                    sid, "pin", f"{fp.reference}.{pad.number} {pad.pin_function}", note, sid
                )


#: an FPGA's or MCU's multi-function I/O name lists every function the pin *may* have
#: (Xilinx ``IO_L16P_T2_CSI_B_14``: CSI_B is the configuration chip select, not MIPI CSI)
_MULTI_FUNCTION_PIN = re.compile(r"^(IO|PL|PS|GPIO|PIO|MIO|P[A-K]\d)[_\d]", re.IGNORECASE)


def _by_pin_names(
    board: Board, lib: Library, out: dict[int, SignalAssignment], side: Mapping[int, Any]
) -> None:
    """Nets no config, connector, class or name typed, landing on an IC pin whose name names
    an interface family (``PCIE_TX0_P``, ``PETp0``): the family name patterns on the pin name;
    the member stays assumed."""
    rec = recogniser(lib)
    memo: dict[str, SignalAssignment | None] = {}
    for fp, pad in board.pads:
        n, pf = pad.net, pad.pin_function
        if n <= 0 or n in out or n in side or not pf or len(pf) > MAX_MATCH_NAME:
            continue
        if rec.exclude.any(board.nets[n]):  # an unconnected pin, a supply
            continue
        if pf not in memo:
            multi = _MULTI_FUNCTION_PIN.match(pf) is not None
            got = None if multi or rec.exclude.any(pf) else rec.recognise(pf, "")
            # a pin name gives the family only: its digits are often a port number (a USB 2.0
            # hub's ``USB4D+`` is port 4, not USB4), never a generation
            memo[pf] = got if got is not None and got.how == "family_net_name" else None
        got = memo[pf]
        if got is not None:
            out[n] = dataclasses.replace(
                got, how="pin", pattern=f"{fp.reference}.{pad.number} {pf} ~ {got.pattern}"
            )


_CONNECTORS: dict[tuple[str, ...], list[Any]] = {}


def connectors_for(lib: Library) -> list[Any]:
    """``rules/connectors.yaml``, validated against this library's signal and family ids (loaded
    once per set of ids)."""
    from .channels import load_connectors

    key = tuple(sorted(lib.signals)) + ("|",) + tuple(sorted(lib.families))
    if key not in _CONNECTORS:
        _CONNECTORS[key] = load_connectors(known_types=list(lib.signals) + list(lib.families))
    return _CONNECTORS[key]


def _by_connector(
    board: Board, lib: Library, out: dict[int, SignalAssignment], side: Mapping[int, Any]
) -> None:
    """Nets landing on a connector's lane pin (M.2, OCuLink, CEM edge, SFP, SFP28, QSFP, HDMI,
    DP): the connector's interface.  It fills nets nothing else typed, and it replaces a
    guess: a family assumed from a net class or a name gives way to the member the part tells
    (an SFP28 cage: 25G) or to the interface of the connector (an HDMI pair in a DP class)."""
    from .channels import connector_nets

    exclude = recogniser(lib).exclude
    for net, hit in connector_nets(board, connectors_for(lib)).items():
        if hit.type in ("refclk", SIDEBAND) or net in side or exclude.any(board.nets[net]):
            continue
        cur = out.get(net)
        if cur is not None and not _connector_beats(lib, cur, hit.type):
            continue
        where = f"{hit.ref}.{hit.pin} on {hit.connector_name} ({hit.what})"
        if hit.type in lib.signals:
            out[net] = SignalAssignment(hit.type, "connector", where)
        elif hit.type in lib.families:
            fam = lib.families[hit.type]
            note = f"recognised by its connector pin {where}; {fam.note}"
            out[net] = SignalAssignment(fam.assume, "connector", where, note, fam.id)


def _connector_beats(lib: Library, cur: SignalAssignment, hit_type: str) -> bool:
    """Whether a connector pin of ``hit_type`` replaces the assignment ``cur``: only a guess
    (an assumed family, never the config), by a signal the part tells or another family."""
    if cur.how == "config" or not cur.assumption:
        return False
    if hit_type in lib.signals:
        fam = lib.family_of(hit_type)
        return fam is not None and fam.id == cur.family
    # a family guessed from a routing class gives way to the connector's; one guessed from the
    # net's own name does not (a DisplayPort alt-mode lane on USB-C contacts stays DP), unless
    # the name's family is a narrower guess of the connector's link (DVI's TMDS on an HDMI
    # receptacle: every dvi member is an hdmi member, so the receptacle tells the family)
    if hit_type not in lib.families or hit_type == cur.family:
        return False
    if cur.how == "family_net_class":
        return True
    named = lib.families.get(cur.family) if cur.family else None
    return named is not None and set(named.members) <= set(lib.families[hit_type].members)


def _across_ac_caps(
    board: Board, out: dict[int, SignalAssignment], side: Mapping[int, Any] | None = None
) -> None:
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
            if side and (p.positive in side or p.negative in side):
                continue
            for n, partner in ((p.positive, pairs[k].positive), (p.negative, pairs[k].negative)):
                out[n] = SignalAssignment(
                    src.signal, "ac_coupled", board.nets[partner], src.assumption, src.family
                )
            todo.append(j)


def _part_rate_across_ac_caps(board: Board, lib: Library, out: dict[int, SignalAssignment]) -> None:
    """The member a part tells (an SFP28 connector: ``eth25g``) crosses the AC-coupling caps:
    a pair behind them whose type is only a family guess of the same family (``85Ohm-diff_SFI``
    -> SFP, assumed 10G) is the same lane at the same rate (``how`` = ``ac_coupled``)."""
    from .channels import pair_links, series_links

    pairs = board.diff_pairs
    told = (
        [
            k
            for k, p in enumerate(pairs)
            if (a := out.get(p.positive)) is not None and a.how == "connector" and not a.assumption
        ]
        if pairs
        else []
    )
    if not told:
        return
    adj = pair_links(pairs, series_links(board))
    todo = [k for k in told if k in adj]
    while todo:
        k = todo.pop()
        src = out[pairs[k].positive]
        fam = lib.family_of(src.signal)
        for j in adj.get(k, ()):
            p = pairs[j]
            cur = out.get(p.positive)
            if cur is None or fam is None or not cur.assumption or cur.family != fam.id:
                continue
            if cur.how not in ("family_net_class", "family_net_name", "ac_coupled", "pair"):
                continue
            for n, partner in ((p.positive, pairs[k].positive), (p.negative, pairs[k].negative)):
                out[n] = SignalAssignment(src.signal, "ac_coupled", board.nets[partner])
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
        # sideband kinds' patterns in kind order: the first pattern found is the first kind's
        self._sideband = [(k, p) for k in getattr(lib, "sideband", ()) for p in k.patterns]
        self._sideband_fm = FirstMatch(p for _, p in self._sideband)

    def sideband_kind(self, text: str) -> tuple[Any, Any] | None:
        """(the first sideband kind, in ``signals.yaml`` order, one of whose patterns finds
        ``text``; that kind's first such pattern), or None: one regular-expression call for
        most texts (a pin name or a net name) instead of one per pattern (29 on vme-wren's
        14,600 texts: 0.07 s of every check)."""
        k = self._sideband_fm.first(text)
        return self._sideband[k] if k >= 0 else None

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
        if fam_rank < len(self.lib.families) and (owner is None or rank == fam_rank):
            # a net class is a routing class: it gives the family unless the net's own name
            # names another one (an HDMI pair in a ``DP 100 5mil`` class is HDMI)
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


# -- the designer's declared impedance ---------------------------------------------------------

#: an Ω value in a net-class or rule name: ``85Ohm-diff_DP``, ``90_ohm_inner``, ``100R``
_OHM_IN_NAME = re.compile(r"(?<![\d.])(\d{2,3}(?:\.\d+)?)\s*[-_ ]?(?:ohms?|Ω|r)(?![a-z])", re.I)
#: differential targets lie here; a 50 Ω single-ended class name declares no pair target
_ZDIFF_RANGE = (70.0, 130.0)


@dataclass(frozen=True)
class DeclaredTarget:
    """The differential impedance the designer declared for a net on a layer: the target of the
    KiCad 10 tuning profile its net class names (with that profile's width and gap on the
    layer), else the Ω in its net class's name, else in the name of the ``.kicad_dru`` rule for
    its class on that layer; with that rule's width and gap (opt, else min) where it gives them."""

    zdiff_ohm: float
    how: str  # tuning_profile | net_class | kicad_dru
    source: str  # "net class 85Ohm-diff_DP" / ".kicad_dru rule 85_ohm_inner (line 4)"
    width_mm: float | None = None
    gap_mm: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"zdiff_ohm": self.zdiff_ohm, "how": self.how, "source": self.source}
        if self.width_mm is not None:
            out["width_mm"] = self.width_mm
        if self.gap_mm is not None:
            out["gap_mm"] = self.gap_mm
        return out


def ohm_in_name(name: str) -> float | None:
    """The differential Ω a name states (:data:`_OHM_IN_NAME`, within :data:`_ZDIFF_RANGE`)."""
    if not name or len(name) > MAX_MATCH_NAME:
        return None
    m = _OHM_IN_NAME.search(name)
    if m is None:
        return None
    z = float(m.group(1))
    return z if _ZDIFF_RANGE[0] <= z <= _ZDIFF_RANGE[1] else None


def _layer_matches(selector: str, layer_name: str) -> bool:
    """A ``.kicad_dru`` ``(layer …)``: "" any, ``outer`` F.Cu/B.Cu, ``inner`` the rest, or a name."""
    if not selector:
        return True
    outer = layer_name in ("F.Cu", "B.Cu")
    if selector == "outer":
        return outer
    if selector == "inner":
        return not outer
    return selector == layer_name


def _pick(c: tuple[float | None, float | None, float | None] | None) -> float | None:
    return None if c is None else (c[1] if c[1] is not None else c[0])


def declared_target(
    board: Board, net: int, layer_name: str, cache: dict[Any, Any] | None = None
) -> DeclaredTarget | None:
    """The designer's declared Zdiff for ``net`` on ``layer_name`` (:class:`DeclaredTarget`), or
    None; cached per (net class, layer) in ``cache``."""
    import fnmatch

    rules = board.net_classes
    cls = rules.class_of(board.nets[net]) if 0 < net < len(board.nets) else "Default"
    key = (cls, layer_name)
    if cache is not None and key in cache:
        return cache[key]
    dru = next(
        (
            r
            for r in rules.design_rules
            if fnmatch.fnmatchcase(cls, r.net_class) and _layer_matches(r.layer, layer_name)
        ),
        None,
    )
    width = _pick(dru.track_width) if dru else None
    gap = _pick(dru.diff_pair_gap) if dru else None
    got = None
    z = ohm_in_name(cls) if cls != "Default" else None
    nc = rules.by_name(cls)
    tp = (
        rules.tuning_profiles.get(nc.tuning_profile)
        if nc is not None and nc.tuning_profile
        else None
    )
    if tp is not None and tp.differential:
        row = next((r for r in tp.layers if r[0] == layer_name), None)
        got = DeclaredTarget(
            tp.target_ohm,
            "tuning_profile",
            f"KiCad tuning profile {tp.name} of net class {cls}",
            row[1] if row else width,
            row[2] if row else gap,
        )
    elif z is not None:
        got = DeclaredTarget(z, "net_class", f"net class {cls}", width, gap)
    elif dru is not None and ohm_in_name(dru.name) is not None:
        got = DeclaredTarget(
            ohm_in_name(dru.name),  # type: ignore[arg-type]
            "kicad_dru",
            f".kicad_dru rule {dru.name.lstrip('(')} (line {dru.line}) for net class {cls}",
            width,
            gap,
        )
    if cache is not None:
        cache[key] = got
    return got


def family_members(lib: Library, signal: str) -> tuple[str, ...]:
    """Every member of ``signal``'s family (``signals.yaml`` ``members``), or ``(signal,)``."""
    fam = lib.family_of(signal) if hasattr(lib, "family_of") else None
    return fam.members if fam is not None and fam.members else (signal,)
