"""The fast signal and connector recognition gives exactly what trying each pattern in turn gives.

``analysis.signals.Recogniser`` and ``analysis.channels.connector_nets`` match every net name
(footprint text) against all patterns at once (``caseless.FirstMatch``) and memoise; the
reference below is the straightforward loop they replaced, kept here as the definition.  Compared
on every bundled board, the synthetic boards, vme-wren and Debian's kicad-demos, and on names
built to be awkward: Unicode case partners, JEDEC ``_t``/``_c`` clocks, class/name precedence.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from accel_drc import caseless
from accel_drc.analysis import channels as ch
from accel_drc.analysis import signals as sg
from accel_drc.caseless import CaselessPattern, FirstMatch, required_literals
from accel_drc.config import as_config
from accel_drc.hostile import MAX_MATCH_NAME
from accel_drc.packs import load_library
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS, FIXTURES, SHARED_BOARDS, need

DEMOS = Path("/usr/share/kicad/demos")

LIB = load_library()


# --- the reference: one pattern at a time, in the order of precedence -------------------------


def ref_recognise(name: str, net_class: str, lib: Any) -> sg.SignalAssignment | None:
    if len(net_class) > MAX_MATCH_NAME:
        net_class = ""
    if net_class and net_class != "Default":
        for sig in lib.signals.values():
            for p in sig.class_patterns:
                if p.search(net_class):
                    return sg.SignalAssignment(sig.id, "net_class", f"{net_class} ~ {p.pattern}")
    for sig in lib.signals.values():
        for p in sig.name_patterns:
            if p.search(name):
                return sg.SignalAssignment(sig.id, "net_name", p.pattern)
    # a net class is a routing class: its family decides unless the name names another family
    by_class = None
    if net_class and net_class != "Default":
        by_class = next(
            (
                (f, p)
                for f in lib.families.values()
                for p in f.class_patterns
                if p.search(net_class)
            ),
            None,
        )
    by_name = next(
        ((f, p) for f in lib.families.values() for p in f.name_patterns if p.search(name)), None
    )
    if by_class is not None and (by_name is None or by_name[0] is by_class[0]):
        fam, p = by_class
        return sg.SignalAssignment(
            fam.assume, "family_net_class", f"{net_class} ~ {p.pattern}", fam.note, fam.id
        )
    if by_name is not None:
        fam, p = by_name
        return sg.SignalAssignment(fam.assume, "family_net_name", p.pattern, fam.note, fam.id)
    return None


def ref_connector_nets(board: Any, connectors: Any) -> dict[int, ch.ConnectorHit]:
    out: dict[int, ch.ConnectorHit] = {}
    for fp in board.footprints:
        text = f"{fp.name} {fp.value}"
        c = next((c for c in connectors if any(p.search(text) for p in c.footprint)), None)
        if c is None:
            continue
        for pad in fp.pads:
            got = c.pins.get(str(pad.number))
            if got is None or not pad.net or pad.net in out:
                continue
            out[pad.net] = ch.ConnectorHit(
                pad.net, got[0], c.id, c.name, fp.reference, str(pad.number), got[1], c.source
            )
    return out


def ref_assign(board: Any, lib: Any, config: Any = None) -> dict[int, sg.SignalAssignment]:
    declared = [(sid, p) for sid, pats in as_config(config).signals.items() for p in pats]
    side = sg.assign_sidebands(board, lib, config)
    out: dict[int, sg.SignalAssignment] = {}
    for idx, name in enumerate(board.nets):
        if idx == 0 or not name or len(name) > MAX_MATCH_NAME:
            continue
        got = None
        for sid, pat in declared:
            if pat.fullmatch(name):
                if sid != sg.SIDEBAND:
                    got = sg.SignalAssignment(sid, "config", pat.pattern)
                break
        if got is None and idx not in side and not any(p.search(name) for p in lib.exclude):
            got = ref_recognise(name, board.net_classes.class_of(name), lib)
        if got is not None:
            out[idx] = got
    sg._by_dram_balls(board, lib, out, side)
    for net, hit in ref_connector_nets(board, sg.connectors_for(lib)).items():
        name = board.nets[net]
        if hit.type in ("refclk", "sideband") or net in side:
            continue
        if any(p.search(name) for p in lib.exclude):
            continue
        if net in out and not sg._connector_beats(lib, out[net], hit.type):
            continue
        where = f"{hit.ref}.{hit.pin} on {hit.connector_name} ({hit.what})"
        if hit.type in lib.signals:
            out[net] = sg.SignalAssignment(hit.type, "connector", where)
        elif hit.type in lib.families:
            fam = lib.families[hit.type]
            note = f"recognised by its connector pin {where}; {fam.note}"
            out[net] = sg.SignalAssignment(fam.assume, "connector", where, note, fam.id)
    sg._part_rate_across_ac_caps(board, lib, out)
    sg._by_pin_names(board, lib, out, side)
    sg._across_ac_caps(board, out, side)
    for pair in board.diff_pairs:
        a, b = out.get(pair.positive), out.get(pair.negative)
        if a is not None and b is None and pair.negative not in side:
            out[pair.negative] = sg.SignalAssignment(
                a.signal, "pair", board.nets[pair.positive], a.assumption, a.family
            )
        elif b is not None and a is None and pair.positive not in side:
            out[pair.positive] = sg.SignalAssignment(
                b.signal, "pair", board.nets[pair.negative], b.assumption, b.family
            )
    return out


# --- boards ------------------------------------------------------------------------------------


def _boards() -> list[Any]:
    out = []
    for p in sorted((FIXTURES / "boards").glob("*/*.kicad_pcb")):
        out.append(pytest.param(p, None, id=f"boards-{p.stem}"))
    for p in sorted((FIXTURES / "kicad_versions").glob("*.kicad_pcb")):
        if p.stem != "kicad5":
            out.append(pytest.param(p, None, id=f"versions-{p.stem}"))
    for p in sorted((FIXTURES / "ipc2581").glob("*.xml")):
        out.append(pytest.param(p, None, id=f"ipc2581-{p.stem}"))
    for p in sorted((FIXTURES / "synth" / "boards").glob("*.kicad_pcb")):
        cfg = p.with_name(p.stem + ".accel-drc.yaml")
        out.append(pytest.param(p, cfg if cfg.is_file() else None, id=f"synth-{p.stem}"))
    for p in sorted(DEMOS.glob("**/*.kicad_pcb")):
        out.append(pytest.param(p, None, id=f"demos-{p.parent.name}-{p.stem}"))
    return out


def _config(path: Path | None) -> Any:
    if path is None:
        return None
    from accel_drc.config import load_config

    return load_config(str(path), None, LIB)


def ref_sideband_kind(lib: Any, text: str) -> tuple[Any, str] | None:
    """The first sideband kind (signals.yaml order) one of whose patterns finds ``text``, and
    that kind's first such pattern (the loop ``assign_sidebands`` ran before FirstMatch)."""
    for k in lib.sideband:
        for p in k.patterns:
            if p.search(text):
                return k, p.pattern
    return None


def _same_sidebands(board: Any) -> None:
    """Every pin name and net name of ``board`` gets the sideband kind the loop gives."""
    rec = sg.Recogniser(LIB)
    texts = {pad.pin_function for _fp, pad in board.pads if pad.pin_function}
    texts |= {n for n in board.nets if n}
    for text in sorted(texts):
        got = rec.sideband_kind(text)
        want = ref_sideband_kind(LIB, text)
        assert (None if got is None else (got[0], got[1].pattern)) == want, text


def ref_class_of(rules: Any, net: str) -> str:
    if net in rules.assignments:
        return rules.assignments[net]
    for pattern, cls in rules._compiled():
        if pattern.match(net):
            return cls
    return "Default"


def _same(board: Any, config: Any) -> int:
    """Compare fast and reference on every net of ``board``; the number of nets typed."""
    rules = board.net_classes
    for name in board.nets:
        assert rules.class_of(name) == ref_class_of(rules, name), name
    rec = sg.Recogniser(LIB)  # (indexed from the 33rd name: a big board sees both ways)
    for name in board.nets:  # every net on its own, whatever its class, before the pipeline
        if name and len(name) <= MAX_MATCH_NAME:
            cls = board.net_classes.class_of(name)
            assert rec.recognise(name, cls) == ref_recognise(name, cls, LIB), name
    _same_sidebands(board)
    conns = sg.connectors_for(LIB)
    assert ch.connector_nets(board, conns) == ref_connector_nets(board, conns)
    assert ch.connector_nets(board, conns) == ref_connector_nets(board, conns)  # (memo)
    fast = sg.assign_signals(board, LIB, config)
    ref = ref_assign(board, LIB, config)
    assert list(fast.items()) == list(ref.items())
    return len(ref)


@pytest.mark.parametrize(("path", "config"), _boards())
def test_fast_assignment_equals_the_loop_on_real_boards(path: Path, config: Path | None) -> None:
    board = read_board(str(path))
    _same(board, _config(config))


@pytest.mark.slow
def test_fast_assignment_equals_the_loop_on_vme_wren() -> None:
    p = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
    need(p.is_file(), "vme-wren is not present")
    assert _same(read_board(str(p)), None) > 50  # (it types ~100 nets: the test sees them)


# --- awkward names -----------------------------------------------------------------------------

_STEMS = [
    "PCIE_TX0_P",
    "pcie_gen5_rx1_n",
    "PCIe4_RX",
    "gen4.tx",
    "GEN_3_RX",
    "PCIE3",
    "pcie_gen_10",
    "DDR4_CK_t",
    "DDR4_CK_c",
    "DDR5_DQS0_t",
    "DQS0_c",
    "LPDDR5_CK_t",
    "lpddr4x_ck_c",
    "DDR_CK_T",
    "/ddr/CK_t",
    "CLK_100M_P",
    "REFCLK+",
    "PCIE_REFCLK_N",
    "/mipi/CSI0_CK_P",
    "hdmi_clk+",
    "USB_D+",
    "usb2_dp",
    "USB3_SSTX_P",
    "/usb/D-",
    "SS_RX1+",
    "TBT_TX0",
    "USB4_RX",
    "SFP0.TX_P",
    "SFP28_RD+",
    "QSFP_DD_TX1",
    "qsfp112_rx0",
    "QSFP_TX3_N",
    "sfp+_td",
    "NVLINK4_TX",
    "/nvl5_lane0",
    "NVL_3.RX",
    "SATA_A+",
    "/sata/ata_tx_p",
    "DP_ML0_P",
    "eDP_AUX_P",
    "DSI_D0_P",
    "TMDS_CLK",
    "trio0_a",
    "D_PHY",
    "10GBASE_KR",
    "XFI_TX",
    "PERST#",
    "PCIE_WAKE",
    "SMB_CLK",
    "pet_p0",
    "PER0",
    "PETp1",
    "GND",
    "+3V3",
    "VDD_CORE",
]
_TWISTS = [
    lambda s: s,
    str.lower,
    str.upper,
    str.swapcase,
    lambda s: "/sheet/" + s,
    lambda s: s.replace("K", "\u212a"),  # KELVIN SIGN: folds to k in Unicode mode only
    lambda s: s.replace("S", "\u017f").replace("s", "\u017f"),  # LONG S: folds to s
    lambda s: s.replace("I", "\u0130"),  # I WITH DOT ABOVE
    lambda s: "µC_" + s,
    lambda s: s + "\u00e9",
    lambda s: s + "\t",  # not printable: the Unicode pattern
    lambda s: s + "\x1c",  # \s in Unicode mode only
    lambda s: s.replace("_", "\u00a0"),
    lambda s: s + "\n",  # ``$`` before a final newline
    lambda s: "x" * (MAX_MATCH_NAME - len(s)) + s,
]
_CLASSES = [
    "",
    "Default",
    "PCIe",
    "PCIE_GEN5",
    "pcie_gen3_lanes",
    "DDR4",
    "USB",
    "HS",
    "SFP",
    "Ünïcode",
    "c" * 300,
]


@pytest.fixture(params=["indexed", "one by one"])
def index_after(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Both ways of ``FirstMatch``: the literal index from the first text, and never."""
    n = 0 if request.param == "indexed" else 10**9
    monkeypatch.setattr(FirstMatch, "INDEX_AFTER", n)
    if n:  # the bundled patterns' registered literals would index from the first text on
        monkeypatch.setattr(caseless, "_KNOWN", {})
    return n


def test_awkward_names_and_classes(index_after: int) -> None:
    rec = sg.Recogniser(LIB)
    n = typed = 0
    for stem, twist, cls in itertools.product(_STEMS, _TWISTS, _CLASSES):
        name = twist(stem)
        got, want = rec.recognise(name, cls), ref_recognise(name, cls, LIB)
        assert got == want, (name, cls, got, want)
        assert rec.exclude.any(name) == any(p.search(name) for p in LIB.exclude), name
        n += 1
        typed += want is not None
    assert typed > n // 3  # (the names do reach the patterns: most get a type)


_SIDEBAND_STEMS = [
    "USB_C_SBU1",
    "SBU2",
    "DP_AUX_P",
    "AUX_N",
    "HDMI_HPD",
    "HPD",
    "HDMI_CEC",
    "SFP0_TX_FAULT",
    "SFP_MOD_ABS",
    "SFP1_RS0",
    "PCIE_PERST#",
    "CLKREQ_N",
    "I2C_SCL",
    "SMB_DATA",
    "USB_CC1",
]


def test_sideband_kind_is_the_first_kind_in_order(index_after: int) -> None:
    """``Recogniser.sideband_kind`` (one FirstMatch over every kind's patterns) names the kind
    and pattern the loop over the kinds in ``signals.yaml`` order names, on sideband names and
    lane names alike, in every case and twist."""
    rec = sg.Recogniser(LIB)
    hits = n = 0
    for stem, twist in itertools.product(_SIDEBAND_STEMS + _STEMS, _TWISTS):
        name = twist(stem)
        got, want = rec.sideband_kind(name), ref_sideband_kind(LIB, name)
        assert (None if got is None else (got[0], got[1].pattern)) == want, name
        hits += want is not None
        n += 1
    assert 0 < hits < n  # (both outcomes are seen)


def test_analysis_assigns_the_sidebands_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal types and the coverage share one sideband assignment (each computed it:
    0.07 s of every check on vme-wren), and the types are what the function alone gives."""
    from accel_drc.analysis import Analysis

    board = read_board(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    want = sg.assign_signals(board, LIB, None)
    calls = []
    real = sg.assign_sidebands
    monkeypatch.setattr(sg, "assign_sidebands", lambda *a: calls.append(a) or real(*a))
    a = Analysis(board, as_config(None), LIB)
    assert a.net_signal == want
    assert a.net_sideband == real(board, LIB, None)
    assert len(calls) == 1


def test_class_patterns_take_precedence_by_family_rank(index_after: int) -> None:
    """A family's class pattern beats a later family's name pattern, loses to a signal's own
    name pattern; the same ordering as the loop for every class of every pattern text."""
    rec = sg.Recogniser(LIB)
    texts = [
        p.pattern for f in LIB.families.values() for p in (*f.class_patterns, *f.name_patterns)
    ]
    words = {w for t in texts for w in re.findall(r"[a-z]{3,}", t)}
    for cls, name in itertools.product(
        sorted(words), ["X1", "PCIE_TX0", "PCIE_GEN5_TX", "SFP_TX", "CLK"]
    ):
        assert rec.recognise(name, cls) == ref_recognise(name, cls, LIB), (name, cls)


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        ("nvlink_?4", {"nvlink"}),
        (r"(^|[/_.])(pet|per)[pn]?\d", {"pe"}),
        ("sstx|ssrx", {"ss"}),  # (the parser factors the common prefix out)
        ("(?<!lp)ddr_?5", {"ddr"}),
        ("(?:usb|USB3)+x", {"usb", "usb3"}),
        ("a?b*", None),
        ("(a|)bc", {"bc"}),
        ("(?-i:Ab)c", {"ab"}),
        ("x{0,3}", None),
        ("(ab){2}", {"ab"}),
    ],
)
def test_required_literals(pattern: str, want: set[str] | None) -> None:
    got = required_literals(pattern)
    assert (None if got is None else set(got)) == want


def test_required_literals_are_in_every_match() -> None:
    """Every pattern of the library: each name it finds contains one of its literals."""
    names = [t(s) for s in _STEMS for t in _TWISTS if t(s).isascii() and t(s).isprintable()]
    pats = [p for s in LIB.signals.values() for p in (*s.name_patterns, *s.class_patterns)]
    pats += [p for f in LIB.families.values() for p in (*f.name_patterns, *f.class_patterns)]
    with_literals = 0
    for p in pats:
        req = required_literals(p.pattern)
        with_literals += req is not None
        for name in names:
            if req is not None and p.search(name):
                assert any(lit in name.lower() for lit in req), (p.pattern, name)
    assert with_literals > len(pats) * 3 // 4


def test_net_class_of_the_first_matching_wildcard() -> None:
    """``NetClassRules.class_of`` (one alternation of all wildcards) against the loop."""
    from accel_drc.model import NetClassRules

    globs = [
        "*",
        "PCIE_*",
        "*_TX?",
        "DDR4-PS.A0",
        "*a*a*a*a*ab",
        "[ab]*",
        "*[*",
        "?",
        "*\\1*",
        "*DDR*CK_t",
        "µ*",
        "*\n*",
        "x.y",
        "*.*",
    ]
    names = [
        "",
        "PCIE_TX0",
        "pcie_tx0",
        "X_TX1",
        "DDR4-PS.A0",
        "DDR4-PSXA0",
        "a" * 40 + "b",
        "[ab]",
        "a[",
        "Q",
        "QQ",
        "/ddr/DDR4_CK_t",
        "µC",
        "a\nb",
        "x.y",
        "xzy",
        "a\\1b",
        "\u212a",
    ]
    for k in range(len(globs)):
        order = globs[k:] + globs[:k]  # every pattern first once: the order decides
        rules = NetClassRules(patterns=tuple((g, f"c{i}") for i, g in enumerate(order)))
        for n in names:
            assert rules.class_of(n) == ref_class_of(rules, n), (order, n)


def test_first_match_is_the_first_pattern_in_list_order(index_after: int) -> None:
    pats = [CaselessPattern(p) for p in ("b(x)", "(^|_)a", "zz$", "(?<!l)dd", "^(?!.*q).*k")]
    fm = FirstMatch(pats)
    for text in [
        "ab",
        "bx_a",
        "_abx",
        "q",
        "xzz",
        "ZZ",
        "BX",
        "ldd",
        "dd",
        "qk",
        "K",
        "\u212a",
        "a\n",
        "zz\n",
    ]:
        want = next((k for k, p in enumerate(pats) if p.search(text)), -1)
        assert fm.first(text) == want, text


@pytest.mark.parametrize("unsafe", [r"(a)\1", r"(?P<x>a)", r"(?x) a b", r"(a)?(?(1)b|c)"])
def test_first_match_with_back_references_and_inline_flags(unsafe: str, index_after: int) -> None:
    pats = [CaselessPattern("zz"), CaselessPattern(unsafe), CaselessPattern("a")]
    fm = FirstMatch(pats)
    for text in ["aa", "ab", "ac", "zz", "q"]:
        want = next((k for k, p in enumerate(pats) if p.search(text)), -1)
        assert fm.first(text) == want, text


def test_first_match_of_plain_re_patterns(index_after: int) -> None:
    """A compiled ``re`` pattern with other flags is never folded into the alternation."""
    fm = FirstMatch([re.compile("abc"), CaselessPattern("x")])
    assert fm.first("ABCX") == 1 and fm.first("abcx") == 0


def test_registered_literals_are_the_parsed_ones() -> None:
    """The bundled snapshot's literal table (registered when it is valid) is exactly what
    parsing each pattern gives, and every bundled pattern is in it."""
    from accel_drc import regenerate

    table = regenerate.literals()
    assert table, "no bundled patterns found"
    for pat, lits in table.items():
        want = caseless.parse_literals(pat)
        assert (None if lits is None else frozenset(lits)) == want, pat
        assert caseless.required_literals(pat) == want, pat
    patterns = [p.pattern for p in LIB.exclude]
    assert set(patterns) <= set(table)
