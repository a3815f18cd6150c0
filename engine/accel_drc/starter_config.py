"""What to declare, as ``accel-drc.yaml`` text: ``accel-drc init BOARD`` and the ready-to-paste
block of each cannot-verify group (issue 28 item 5, issue 31 item 7).

Every *cannot verify* finding says in ``evidence["declare"]`` what would decide it.  This module
turns those hints into config entries, from the findings' structured evidence (rule id, net,
layer, rail, the inputs the finding rests on), never by parsing prose:

* :func:`declare_yaml` (``findings -> str``): the block for exactly those findings, ready to
  paste: the Markdown report's cannot-verify section, the JSON's ``cannot_verify`` groups and
  the HTML report use it;
* :func:`starter_config` (``board, result -> str``): the whole starter file ``init`` writes:
  the class as classified with its evidence, the stack-up as read (each value marked *from
  the board* or *KiCad default*), every interface recognised and every pair of unknown
  interface, every power rail with the fields its checks need, and the entries of every
  cannot-verify finding, each with why it matters.

Both share one content source (:class:`_Doc`).  The starter file **loads as is**: it writes no
active value, because a guess written as a value would become a declaration nobody made (the
auto-detected class, a PCIe generation taken as Gen4 and KiCad's untouched FR4 would all turn
from *assumed* or *default* into *declared*: :mod:`accel_drc.basis` exists to prevent exactly
that), and a value the board already declares, restated here, would override the board from
then on.  So every entry is a commented-out line: the user deletes its first ``#`` and fills in
each ``<placeholder>`` (:data:`PLACEHOLDERS`).  The rule, stated in the file's header: a line
starting with ``#`` and no space is config, ``# `` followed by text is an explanation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .hostile import MAX_MATCH_NAME, terminal
from .results import Finding, Severity, Status
from .yamltext import yaml_quote

#: every placeholder the generated text may contain, and what to put there
PLACEHOLDERS: dict[str, str] = {
    "<type>": "a signal type id (accel-drc rules lists them: pcie4, usb3, ddr4, …)",
    "<V>": "the rail's voltage (V)",
    "<%>": "allowed ripple, % of the rail voltage",
    "<A>": "current in A (the load step for transient_a, the DC current for loads)",
    "<Ω>": "the regulator's output resistance (Ω)",
    "<H>": "the regulator's output inductance (H)",
    "<laminate>": "the laminate's name as your fab quotes it (e.g. 'Megtron 6', '370HR')",
    "<εr>": "the laminate's dielectric constant at the signal's frequency",
    "<Df>": "the laminate's loss tangent (dissipation factor)",
    "<°C>": "the laminate's glass-transition temperature Tg (°C)",
    "<grade>": "the copper foil grade: STD, RTF, VLP, HVLP, HVLP2, HVLP3 or HVLP4",
    "<µm>": "a length in µm",
    "<mm>": "a length in mm",
    "<dB>": "a loss in dB at the signal's Nyquist frequency",
    "<rail>": "the rail's name",
    "<net regex>": "a whole-name regular expression of the rail's net(s)",
    "<footprint>": "a footprint reference (U1, L3, …)",
    "<class>": "training, inference or edge",
    "<ratio>": "your fab's largest aspect ratio (plated span / finished hole), e.g. 12",
    "<2|3>": "the IPC-6012 class you order the board to: 2 or 3",
    "<W>": "the part's dissipated power (W)",
    "<K/W>": "the largest thermal resistance of the via field under the part (K/W)",
    "<ps>": "a pad's package (pad-to-die) delay in ps, from the part's package flight-time table",
    "<statement>": "what a part's package delays are: matched (equal within each group), "
    "compensated (the controller's per-bit deskew, or lengths already tuned with the package) "
    "or none",
}

#: finds the placeholders in generated text (the tests fill each one in)
PLACEHOLDER_RE = re.compile(r"<[^<>\s'\"]{1,12}(?: regex)?>")

#: a commented-out line of config in the starter file: ``#`` then no space, or two or more
#: (``#class: edge``, ``#  pcie4:``); ``# `` and text is an explanation
COMMENTED_CONFIG = re.compile(r"#(?! \S)")


def uncomment(text: str, fill: Mapping[str, str] | None = None) -> str:
    """``text`` with every commented-out config line uncommented and, where ``fill`` gives a
    value for a placeholder, that value in its place: what a user does by hand, for tests and
    for scripts that fill a starter file in."""
    out = []
    for line in text.splitlines():
        if COMMENTED_CONFIG.match(line):
            line = line[1:]
            if fill:
                line = PLACEHOLDER_RE.sub(lambda m: fill.get(m.group(), m.group()), line)
        out.append(line)
    return "\n".join(out) + "\n"


#: a net list longer than this is cut (with a note): the file must stay far below the config's
#: 1 MiB bound however large the board
MAX_PATTERNS = 64

#: the sections in the order the file lists them (the schema's order)
_SECTIONS = (
    "class", "signals", "stackup", "rails", "capacitors", "backdrill", "loss", "fab", "thermal",
    "package_delays", "rules",
)  # fmt: skip

#: the group titles of the cannot-verify section, by the section of a finding's first entry
GROUP_TITLES: dict[str, str] = {
    "signals": "declare the net's signal type",
    "stackup": "declare your fab's stack-up",
    "rails": "declare the rail's load and regulator",
    "class": "declare the board class",
    "capacitors": "declare the capacitors' mounted ESL/ESR",
    "backdrill": "declare the backdrill",
    "loss": "declare the loss budget",
    "fab": "declare your fabricator's capabilities",
    "thermal": "declare the hot parts' power and limit",
    "package_delays": "declare the parts' package delays",
    "rules": "declare the target (rule parameters)",
    "notes": "declare it where the board is drawn (KiCad)",
}

FOIL_WHY = (
    "a KiCad stack-up has no foil field: the foil grade decides the conductor loss and whether "
    "the links that need VLP/HVLP pass"
)

_STACKUP_INPUTS = frozenset(
    {"h", "t", "epsilon_r", "loss_tangent", "stackup", "height", "material", "eps_r", "er"}
)
_SIGNAL_INPUTS = frozenset({"signal", "generation"})


# ---------------------------------------------------------------------------------------------
# Text helpers: everything from the board is quoted or escaped, never written raw
# ---------------------------------------------------------------------------------------------


_q = yaml_quote


def _say(text: Any) -> str:
    """User text for a comment: one line, controls escaped visibly (a newline in a net name
    must not end the comment and start config)."""
    return terminal(" ".join(str(text).split()))


def _num(x: Any) -> str:
    """A number as YAML writes it briefly (3.3, 12, 0.85)."""
    return f"{float(x):g}"


def _pair_key(name: str) -> str | None:
    """The name with its last P/N/+/- replaced: two names with one key are the halves of a pair."""
    m = re.search(r"[PN+-](?=[^PN+-]*$)", name)
    return None if m is None else name[: m.start()] + "\0" + name[m.end() :]


def net_patterns(names: Iterable[str], all_names: Sequence[str] | None = None) -> list[str]:
    """Whole-name regexes matching exactly ``names``: the two halves of a pair in one pattern
    (``/SFP0\\.RX_[NP]``), and, when the board's ``all_names`` are known, runs of digits
    generalised (``/DDR4\\-PS\\.DQ\\d+``) wherever the pattern then still matches none but
    ``names``.  Names longer than :data:`~accel_drc.hostile.MAX_MATCH_NAME` are left out: no
    config pattern is matched against them."""
    from .coverage import _pair_regex

    todo = [n for n in dict.fromkeys(names) if n and len(n) <= MAX_MATCH_NAME]
    by_key: dict[str, list[str]] = {}
    for n in todo:
        by_key.setdefault(_pair_key(n) or "\1" + n, []).append(n)
    pairs: list[tuple[str, list[str]]] = []  # (pattern, the names it stands for)
    for group in by_key.values():
        if len(group) == 2:
            pairs.append((_pair_regex(sorted(group)), group))
        else:
            pairs.extend((re.escape(n), [n]) for n in group)
    if all_names is None or len(pairs) < 2:
        return [p for p, _ in pairs]
    wanted = set(todo)
    general: dict[str, list[tuple[str, list[str]]]] = {}
    for pat, members in pairs:
        general.setdefault(re.sub(r"\d+", r"\\d+", pat), []).append((pat, members))
    out = []
    for group in general.values():
        pat = _generalise([p for p, _ in group])
        if len(group) > 1:
            rx = re.compile(pat)
            if all(m in wanted for m in all_names if len(m) <= MAX_MATCH_NAME and rx.fullmatch(m)):
                out.append(pat)
                continue
        out.extend(p for p, _ in group)
    return out


def _generalise(patterns: list[str]) -> str:
    """One pattern for patterns that differ only in their runs of digits: a run that differs
    between them becomes ``\\d+``, a run they share stays (``DDR4``, not ``DDR\\d+``)."""
    split = [re.split(r"(\d+)", p) for p in patterns]
    first = split[0]
    return "".join(
        tok if k % 2 == 0 or all(s[k] == tok for s in split) else r"\d+"
        for k, tok in enumerate(first)
    )


# ---------------------------------------------------------------------------------------------
# The document: one content source for init and for every cannot-verify group
# ---------------------------------------------------------------------------------------------


@dataclass
class _Item:
    """One entry of a section: its YAML lines (relative to the section), why it matters, and
    the findings it decides (rule id -> count)."""

    lines: list[str]
    why: list[str] = field(default_factory=list)
    rules: Counter[str] = field(default_factory=Counter)
    findings: set[int] = field(default_factory=set)

    def note(self, text: str) -> None:
        if text and text not in self.why:
            self.why.append(text)


@dataclass
class _Rail:
    """A ``rails:`` entry being gathered: field -> (YAML value, comment), in schema order."""

    name: str
    fields: dict[str, tuple[str, str]] = field(default_factory=dict)
    item: _Item = field(default_factory=lambda: _Item([]))

    def set(self, key: str, value: str, comment: str = "", replace: bool = False) -> None:
        if replace or key not in self.fields:
            self.fields[key] = (value, comment)

    def lines(self) -> list[str]:
        order = ("name", "nets", "role", "voltage", "ripple_pct", "transient_a", "vrm")
        order += ("sources", "loads", "return_nets", "ir_drop_max_pct")
        keys = [k for k in order if k in self.fields] + [k for k in self.fields if k not in order]
        out = []
        for i, k in enumerate(keys):
            value, comment = self.fields[k]
            line = ("- " if i == 0 else "  ") + f"{k}: {value}"
            out.append(line + (f"  # {comment}" if comment else ""))
        return out


class _Doc:
    """The entries to declare, by section; rendered by :meth:`render`."""

    def __init__(self) -> None:
        self.header: list[str] = []
        self.intro: dict[str, list[str]] = {}  # section -> explanation lines above it
        self.items: dict[str, dict[str, _Item]] = {s: {} for s in _SECTIONS}
        self.items["notes"] = {}
        self.rails: dict[str, _Rail] = {}
        self.covered: dict[int, list[str]] = {}  # finding index -> sections, first = its group

    # -- recording ----------------------------------------------------------------------------

    def item(self, section: str, key: str, lines: list[str], why: str = "") -> _Item:
        it = self.items[section].get(key)
        if it is None:
            it = self.items[section][key] = _Item(list(lines))
        it.note(why)
        return it

    def decides(self, it: _Item, section: str, index: int | None, f: Finding | None) -> None:
        if f is not None:
            it.rules[f.rule] += 1
        if index is not None:
            it.findings.add(index)
            got = self.covered.setdefault(index, [])
            if section not in got:
                got.append(section)

    def rail(self, name: str) -> _Rail:
        r = self.rails.get(name)
        if r is None:
            r = self.rails[name] = _Rail(name)
            r.set("name", _q(name))
        return r

    # -- rendering ----------------------------------------------------------------------------

    def section_lines(self, section: str) -> list[tuple[str, bool]]:
        """(text, is_config) lines of one section (empty when it has nothing)."""
        out: list[tuple[str, bool]] = []
        if section == "rails":
            if not self.rails:
                return out
            out += [(t, False) for t in self.intro.get("rails", [])]
            out.append(("rails:", True))
            for r in self.rails.values():
                out += _why_lines(r.item)
                out += [("  " + ln, True) for ln in r.lines()]
            return out
        items = self.items[section]
        if not items:
            return out
        out += [(t, False) for t in self.intro.get(section, [])]
        if section == "notes":
            for it in items.values():
                out += _why_lines(it, indent="")
            return out
        if section == "class":
            for it in items.values():
                out += _why_lines(it, indent="")
                out += [(ln, True) for ln in it.lines]
            return out
        out.append((f"{section}:", True))
        for it in items.values():
            out += _why_lines(it)
            out += [("  " + ln, True) for ln in it.lines]
        return out

    def render(self, commented: bool) -> str:
        """The YAML text: ``commented`` writes every config line with a leading ``#`` (the
        starter file, which must load as is), else as config ready to paste."""
        lines: list[str] = [re.sub(r"^\s*", "# ", h) if h.strip() else "#" for h in self.header]
        for section in (*_SECTIONS, "notes"):
            body = self.section_lines(section)
            if not body:
                continue
            if lines:
                lines.append("")
            for text, is_config in body:
                if is_config:
                    lines.append(("#" + text) if commented else text)
                elif commented:  # an explanation: "# " and text at column 0, never config
                    lines.append(re.sub(r"^\s*#\s*", "# ", text))
                else:
                    lines.append(text)
        return "\n".join(lines).rstrip() + "\n" if lines else ""


def _why_lines(it: _Item, indent: str = "  ") -> list[tuple[str, bool]]:
    """The explanation lines of an entry: why it matters and what it decides."""
    out = [(f"{indent}# {_say(w)}", False) for w in it.why]
    if it.rules:
        shown = ", ".join(f"{r} ×{n}" if n > 1 else r for r, n in sorted(it.rules.items())[:6])
        more = f" and {len(it.rules) - 6} more rules" if len(it.rules) > 6 else ""
        out.append((f"{indent}# decides: {_say(shown)}{more}", False))
    return out


# ---------------------------------------------------------------------------------------------
# Findings -> entries
# ---------------------------------------------------------------------------------------------


def _signal_ids() -> frozenset[str]:
    from .packs import bundled_signal_ids

    return bundled_signal_ids()


def _list_lines(key: str, patterns: list[str], comment: str = "") -> list[str]:
    """``key:`` and its patterns as a block list (cut at :data:`MAX_PATTERNS`)."""
    shown = patterns[:MAX_PATTERNS]
    out = [f"{key}:" + (f"  # {comment}" if comment else "")]
    out += [f"  - {_q(p)}" for p in shown]
    if len(patterns) > len(shown):
        out.append(f"  # … and {len(patterns) - len(shown)} more: accel-drc inspect --detail pairs")
    return out


def _nets_of(f: Finding) -> list[str]:
    nets = f.evidence.get("nets") if f.evidence else None
    if isinstance(nets, (list, tuple)) and nets and all(isinstance(n, str) for n in nets):
        return list(nets)
    return [f.net] if f.net else []


class _Gather:
    """Adds the entries of cannot-verify findings to a :class:`_Doc`."""

    def __init__(
        self,
        doc: _Doc,
        all_names: Sequence[str] | None = None,
        sids: frozenset[str] | None = None,
    ) -> None:
        self.doc = doc
        self.all_names = all_names
        self.signal_nets: dict[str, dict[str, None]] = {}  # signal key -> nets, in order
        self.signal_meta: dict[str, tuple[str, _Item]] = {}
        #: part -> pad -> how its package delay is declared (None: not), for package_delays:
        self.package_pads: dict[str, dict[str, str | None]] = {}
        #: the decap packages whose body ESL is the library's typical figure (capacitors:)
        self.cap_packages: dict[str, None] = {}
        #: the library's signal ids: given by a caller that gathers several times (each
        #: :func:`_signal_ids` loads the rule library: 40 ms), else loaded on first use
        self._sids: frozenset[str] | None = sids

    @property
    def sids(self) -> frozenset[str]:
        if self._sids is None:
            self._sids = _signal_ids()
        return self._sids

    def finding(self, i: int | None, f: Finding) -> None:
        if f.status != Status.CANNOT_VERIFY:
            return
        ev = f.evidence or {}
        rests = set(((ev.get("conditional") or {}).get("rests_on") or {}).keys())
        basis = ev.get("basis") or {}
        weak = {k for k, v in basis.items() if str(v) in ("default", "assumed")} | rests
        before = len(self.doc.covered.get(i, ())) if i is not None else 0
        kind = f.check
        if kind == "signal_type":
            self.signal(i, f, str(ev.get("assumed") or f.rule.rsplit(".", 1)[-1]), _nets_of(f))
        elif kind == "coverage":
            self.signal(i, f, "<type>", [str(n) for n in ev.get("nets") or ()], unknown=True)
        elif kind == "pdn_impedance":
            self.pdn(i, f)
        elif kind in ("ir_drop", "current_density"):
            self.ir(i, f)
        elif kind in ("material_consistency", "laminate_df", "tg"):
            self.material(i, f, kind)
        elif kind == "foil":
            self.foil(i, f)
        elif kind == "insertion_loss":
            self.loss(i, f)
        elif kind in ("drill_aspect_ratio", "annular_ring", "thermal_vias"):
            self.build(i, f, kind, weak)
        elif kind == "skew" and isinstance(ev.get("package_pads"), Mapping):
            for part, pads in ev["package_pads"].items():
                self.package(i, f, str(part), dict.fromkeys(map(str, pads or ())))
        declare = str(ev.get("declare") or "")
        if kind == "laminate_df" and "budgets_db" in declare:
            self.loss(i, f)  # an unconfirmed Df limit defers to the channel's loss budget
        if weak & _SIGNAL_INPUTS and kind not in ("signal_type", "coverage"):
            sid = f.rule.rsplit(".", 1)[-1]
            if sid in self.sids:
                assumed = any(str(basis.get(k)) == "assumed" for k in _SIGNAL_INPUTS)
                self.signal(i, f, sid, _nets_of(f), why="assumed" if assumed else "")
        if "class" in rests and "class" not in ev.get("robust_to", ()):
            self.board_class(i, f, None)
        if kind == "impedance" and "rules:" in declare and "params" in declare:
            self.rule_params(i, f)
        if kind == "via_stub" and "backdrill" in declare and not weak & _SIGNAL_INPUTS:
            self.backdrill(i, f)
        if "via_plating_um" in declare:
            self.stackup_scalar(i, f, "via_plating_um", "<µm>", "the via barrel plating")
        if self.stackup_entries(i, f, weak, declare):
            pass  # init's structured stack-up entries decide it
        elif (weak & _STACKUP_INPUTS or "stack-up" in declare) and "stackup" not in (
            self.doc.covered.get(i, ()) if i is not None else ()
        ):
            self.note(i, f, "stackup", _stackup_note(f, weak))
        elif "mask_er" in weak or "soldermask εr" in declare:
            self.note(i, f, "notes", "the soldermask εr: stackup: materials: {F.Mask: "
                      "{epsilon_r: <εr>}} (and B.Mask), or KiCad's Physical Stackup")  # fmt: skip
        if "copper_thickness" in weak and "copper" not in self.doc.items["stackup"]:
            self.note(i, f, "notes", "the copper thickness of each layer: stackup: copper: "
                      "{LAYER: {thickness_um: <µm>}}, or KiCad's Physical Stackup")  # fmt: skip
        if (i is None or len(self.doc.covered.get(i, ())) == before) and declare:
            self.note(i, f, "notes", declare)  # nothing structured: the hint as the check said it

    def stackup_entries(self, i: int | None, f: Finding, weak: set[str], declare: str) -> bool:
        """A finding that rests on stack-up values is decided by init's structured
        ``stackup: materials:`` / ``copper:`` entries, where they are (True), not by a note."""
        st = self.doc.items["stackup"]
        inputs = weak & (_STACKUP_INPUTS | {"mask_er", "copper_thickness"})
        wants = bool(inputs) or "stack-up" in declare or "soldermask εr" in declare
        keys = [k for k in ("materials", "copper") if k in st and len(st[k].lines) > 1]
        if not wants or not keys:
            return False
        for k in keys:
            if k == "materials" or inputs & {"t", "copper_thickness"}:
                self.doc.decides(st[k], "stackup", i, f)
        return True

    # -- one kind each ------------------------------------------------------------------------

    def signal(self, i: int | None, f: Finding | None, sid: str, nets: list[str],
               unknown: bool = False, why: str = "") -> None:  # fmt: skip
        # a key is a known signal id or the placeholder, never text from elsewhere
        key = sid if sid in self.sids else "<type>"
        self.signal_nets.setdefault(key, {}).update(dict.fromkeys(nets))  # an ordered set
        if key not in self.signal_meta:
            if unknown:
                note = ("pairs of unknown interface, checked by no interface rule: name their "
                        "type (one of the ids `accel-drc rules` lists; split the list by "
                        "interface)")  # fmt: skip
            elif f is not None and f.check == "signal_type" or why == "assumed":
                family = (f.evidence or {}).get("family") if f is not None else None
                note = (f"ASSUMED {key}: the {family or 'interface'} generation/rate is not told "
                        f"by the net names or net class; replace {key} by the real type")  # fmt: skip
            else:
                note = why or f"the signal type of these nets ({key} as the finding took it)"
            self.signal_meta[key] = (note, self.doc.item("signals", key, [], note))
        it = self.signal_meta[key][1]
        self.doc.decides(it, "signals", i, f)

    def pdn(self, i: int | None, f: Finding) -> None:
        from .analysis.railnames import voltage_from_name

        ev = f.evidence or {}
        name = ev.get("rail")
        if not name:  # no rail at all: a template
            r = self.doc.rail("<rail>")
            r.fields["name"] = ("<rail>", "")
            r.set("nets", "['<net regex>']")
            r.set("voltage", "<V>")
            r.item.note("no power rail was found (no power-named net owns a plane): declare "
                        "the rails to check")  # fmt: skip
            self._rail_load(r, core=False)
            self.doc.decides(r.item, "rails", i, f)
            return
        r = self.rail_entry(str(name), ev.get("nets") or [name])
        volt = voltage_from_name(str(name))
        r.set("voltage", _num(volt) if volt is not None else "<V>")
        core = ev.get("role") == "core"
        if core:
            basis = ev.get("role_basis") or (ev.get("basis") or {}).get("rail_role")
            r.set("role", "core", "ASSUMED: " + _say(ev.get("role_evidence") or "recognised as "
                  "the core rail") + "; keep only if it is" if basis == "assumed" else "")  # fmt: skip
        self._rail_load(r, core)
        self.doc.decides(r.item, "rails", i, f)  # first: the rail is what the finding is about
        declare = str(ev.get("declare") or "")
        if "capacitors" in declare:
            it = self.capacitors(ev.get("unconfirmed_packages") or ())
            self.doc.decides(it, "capacitors", i, f)

    def capacitors(self, packages: Iterable[Any]) -> _Item:
        """The ``capacitors:`` entry: the mounting inductance and the body ESL of each package
        whose decaps rest on the library's typical figures (both confirm a decap model)."""
        self.cap_packages.update(dict.fromkeys(str(p) for p in packages if p))
        return self.doc.item("capacitors", "mounting", [],
                             "the decaps' ESL/ESR are library defaults (unconfirmed): the |Z(f)| "
                             "rests on them")  # fmt: skip

    def rail_entry(self, name: str, nets: Iterable[Any]) -> _Rail:
        r = self.doc.rail(name)
        pats = [re.escape(str(n)) for n in nets if str(n)][:MAX_PATTERNS]
        r.set("nets", "[" + ", ".join(_q(p) for p in pats) + "]")
        return r

    @staticmethod
    def _rail_load(r: _Rail, core: bool) -> None:
        r.set("ripple_pct", "<%>", "allowed ripple")
        r.set("transient_a", "<A>", "the load step")
        r.set("vrm", "{r_ohm: <Ω>, l_h: <H>}", "the regulator seen from the board")
        r.item.note(
            "the core rail: held to the class's PDN target; its load and regulator decide "
            "|Z(f)| and the DC drop"
            if core
            else "no target without the rail's own load: ripple × voltage / load step is its "
            "target impedance"
        )

    def ir(self, i: int | None, f: Finding) -> None:
        from .errors import AccelDrcError
        from .yamlsafe import load_yaml

        ev = f.evidence or {}
        name = ev.get("rail")
        entry = ev.get("declare_entry") or ""
        text = str(ev.get("declare") or "")
        if not entry and "rails:" in text:
            entry = text[text.index("rails:") :]
        data = None
        if entry:
            try:
                data = load_yaml("evidence.declare_entry", str(entry)).data
            except AccelDrcError:  # a hint that is no YAML is kept as a note
                data = None
        rails = data.get("rails") if isinstance(data, dict) else None
        if not (isinstance(rails, list) and rails and isinstance(rails[0], dict)) or not name:
            if "via_plating_um" not in text:
                self.note(i, f, "notes", text)
            return
        spec = rails[0]
        r = self.rail_entry(str(spec.get("name") or name), spec.get("nets") or [name])
        if spec.get("voltage") is not None:
            r.set("voltage", _num(spec["voltage"]), replace=True)
        if spec.get("role") == "core":
            r.set("role", "core", "ASSUMED: recognised as the core rail; keep only if it is")
        src = [str(s) for s in spec.get("sources") or ()]
        if src:
            r.set("sources", "[" + ", ".join(_q(s) for s in src) + "]",
                  "GUESSED from the footprints' names: keep only the regulator outputs")  # fmt: skip
        else:
            r.set("sources", "[<footprint>]", "the regulators whose pads feed the rail")
        loads = spec.get("loads") if isinstance(spec.get("loads"), dict) else {}
        r.set("loads", "{" + ", ".join(f"{_q(str(k))}: <A>" for k in loads) + "}"
              if loads else "{<footprint>: <A>}", "DC current in A, per load")  # fmt: skip
        r.item.note("sources and loads decide the DC IR drop and the current density on the "
                    "rail's real copper")  # fmt: skip
        self.doc.decides(r.item, "rails", i, f)

    def material(self, i: int | None, f: Finding, kind: str) -> None:
        layer = f.layer
        ev = f.evidence or {}
        if not layer or not str(layer).startswith("dielectric"):
            self.note(i, f, "stackup", _stackup_note(f, set()))
            return
        fields = {"material": "'<laminate>'", "epsilon_r": "<εr>", "loss_tangent": "<Df>"}
        if kind == "tg":
            fields = {"material": "'<laminate>'", "tg_c": "<°C>"}
        body = ", ".join(f"{k}: {v}" for k, v in fields.items())
        now = _stack_values(ev)
        it = self.doc.item(
            "stackup",
            "materials",
            ["materials:"],
            "per dielectric, as named in the stack-up; KiCad's stack-up (Board Setup > "
            "Physical Stackup) is the better place: the file then carries it",
        )
        key = f"  {_q(str(layer))}: "
        comment = f"  # {now}: KiCad default: replace with your fab's value" if now else ""
        if not any(ln.startswith(key) for ln in it.lines):  # init lists every layer already
            it.lines.append(f"{key}{{{body}}}" + comment)
        self.doc.decides(it, "stackup", i, f)

    def foil(self, i: int | None, f: Finding) -> None:
        it = self.doc.item("stackup", "foil", ["foil: {default: <grade>}"], FOIL_WHY)
        layer = f.layer
        if layer and f"  # {layer}" not in "".join(it.lines):
            it.lines[0] = it.lines[0].replace("}", f", {_q(str(layer))}: <grade>}}", 1)
        self.doc.decides(it, "stackup", i, f)

    def loss(self, i: int | None, f: Finding) -> None:
        declare = str((f.evidence or {}).get("declare") or "")
        sid = f.rule.rsplit(".", 1)[-1]
        if "budgets_db" in declare and sid in self.sids:
            it = self.doc.item("loss", "budgets", ["budgets_db:"],
                               "this board's share of the channel's insertion-loss budget at "
                               "Nyquist")  # fmt: skip
            line = f"  {sid}: <dB>"
            if line not in it.lines:
                it.lines.append(line)
            self.doc.decides(it, "loss", i, f)
        elif "rough" in declare and f.layer:
            it = self.doc.item("stackup", "roughness", ["roughness:"],
                               "µm Rz of each copper face (conductor loss)")  # fmt: skip
            line = f"  {_q(str(f.layer))}: {{rz_top_um: <µm>, rz_bottom_um: <µm>}}"
            if line not in it.lines:
                it.lines.append(line)
            self.doc.decides(it, "stackup", i, f)

    def board_class(self, i: int | None, f: Finding | None, guess: str | None) -> None:
        value = guess or "<class>"
        it = self.doc.item("class", "class", [f"class: {value}"])
        self.doc.decides(it, "class", i, f)

    def rule_params(self, i: int | None, f: Finding) -> None:
        rid = f.rule
        it = self.doc.item("rules", rid, [f"{_q(rid)}: {{params: {{zdiff_ohm: <Ω>, tol_pct: <%>}}}}"],
                           "the interface has no impedance target of its own: give the one "
                           "your design targets")  # fmt: skip
        self.doc.decides(it, "rules", i, f)

    def build(self, i: int | None, f: Finding, kind: str, weak: set[str]) -> None:
        """The build checks' entries: the fab's aspect ratio or IPC-6012 class, a hot part's
        power and limit (issue 33)."""
        if kind == "drill_aspect_ratio" and "fab" in weak:
            it = self.doc.item("fab", "aspect_ratio_max", ["aspect_ratio_max: <ratio>"],
                               "your fab's largest plated span / finished hole (else the "
                               "class's assumed fab class of rules/fab.yaml)")  # fmt: skip
            self.doc.decides(it, "fab", i, f)
        elif kind == "annular_ring" and "ipc6012_class" in weak:
            it = self.doc.item("fab", "ipc6012_class", ["ipc6012_class: <2|3>"],
                               "the IPC-6012 class you order the board to")  # fmt: skip
            self.doc.decides(it, "fab", i, f)
        elif kind == "thermal_vias":
            ref = str((f.evidence or {}).get("part") or "")
            if not ref:
                return
            it = self.doc.item("thermal", "parts", ["parts:"],
                               "each hot part's dissipation and the via field's limit")  # fmt: skip
            line = f"  {_q(ref)}: {{power_w: <W>, theta_max_k_per_w: <K/W>}}"
            if line not in it.lines:
                it.lines.append(line)
            self.doc.decides(it, "thermal", i, f)

    def package(
        self, i: int | None, f: Finding | None, part: str, pads: Mapping[str, str | None]
    ) -> None:
        """A part's ``package_delays:`` entry: its pads on a skew-checked interface (``pads``:
        pad -> how the board already declares its delay, None where it does not)."""
        known = self.package_pads.setdefault(part, {})
        for pad, source in pads.items():
            if known.get(pad) is None:
                known[pad] = source
        it = self.doc.item("package_delays", part, [])
        self.doc.decides(it, "package_delays", i, f)

    def backdrill(self, i: int | None, f: Finding) -> None:
        sid = f.rule.rsplit(".", 1)[-1]
        match = (
            f"{{signal: {sid}}}" if sid in self.sids else f"{{net: {_q(re.escape(f.net or ''))}}}"
        )
        it = self.doc.item("backdrill", match,
                           [f"- {{match: {match}, side: bottom, residual_stub_mm: <mm>}}"],
                           "a KiCad 9 board cannot carry backdrill: declare what the fab "
                           "drills (side, the layer it must not cut, the stub it leaves)")  # fmt: skip
        self.doc.decides(it, "backdrill", i, f)

    def stackup_scalar(self, i: int | None, f: Finding, key: str, value: str, what: str) -> None:
        it = self.doc.item("stackup", key, [f"{key}: {value}"], f"{what} (else a default)")
        self.doc.decides(it, "stackup", i, f)

    def note(self, i: int | None, f: Finding | None, section: str, text: str) -> None:
        if not text:
            return
        if section == "stackup":  # a stack-up note is an explanation under stackup:
            it = self.doc.item("stackup", "note:" + text, [], text)
            it.lines = []
        else:
            it = self.doc.item("notes", text, [], text)
        self.doc.decides(it, section if section != "stackup" else "stackup", i, f)

    # -- finish -------------------------------------------------------------------------------

    def finish(self) -> None:
        """Write the gathered signal nets as patterns (pairs merged, digits generalised where
        the board is known)."""
        for key, (_note, it) in self.signal_meta.items():
            pats = net_patterns(self.signal_nets.get(key, ()), self.all_names)
            it.lines = _list_lines(key, pats)
        caps = self.doc.items["capacitors"].get("mounting")
        if caps is not None:
            pkgs = ", ".join(f"{_q(p)}: {{esl_body_h: <H>}}" for p in self.cap_packages)
            caps.lines = ["mounting_esl_h: <H>  # the mounted capacitors' loop inductance"]
            if pkgs:
                caps.lines.append(f"packages: {{{pkgs}}}  # each package's body ESL")
            caps.lines.append("# parts: {C12: {esl_h: <H>, esr_ohm: <Ω>}}  # per part, where known")
        for part, pads in self.package_pads.items():
            it = self.doc.items["package_delays"][part]
            it.lines, why = _package_lines(part, pads)
            it.note(why)
        # a stack-up with only notes still needs its header for the notes to sit under
        st = self.doc.items["stackup"]
        if st and all(not it.lines for it in st.values()):
            self.doc.items["notes"].update({k: v for k, v in st.items()})
            st.clear()


#: pads per line of a ``pins_ps:`` flow mapping the starter file writes
_PADS_PER_LINE = 8


def _natural(text: str) -> list[Any]:
    """Sort key: ``A2`` before ``A10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def _package_lines(part: str, pads: Mapping[str, str | None]) -> tuple[list[str], str]:
    """A part's ``package_delays:`` lines: a ``<ps>`` per pad the board does not declare
    (multi-line flow, :data:`_PADS_PER_LINE` a line), and the one-statement alternative as a
    comment; and the entry's explanation (how many pads, which the board declares)."""
    todo = sorted((p for p, src in pads.items() if src is None), key=_natural)
    on_board = len(pads) - len(todo)
    why = f"{part}: {len(pads)} pads on a skew-checked interface" + (
        f", {on_board} with their die_delay in KiCad (kept)" if on_board else ""
    )
    if not todo:
        return [], why + ": nothing to declare"
    rows = [todo[k : k + _PADS_PER_LINE] for k in range(0, len(todo), _PADS_PER_LINE)]
    cells = [", ".join(f"{_q(p)}: <ps>" for p in row) for row in rows]
    lines = [f"{_q(part)}:", "  pins_ps: {" + cells[0] + ("," if len(cells) > 1 else "}")]
    lines += ["    " + c + ("," if k < len(cells) - 1 else "}") for k, c in enumerate(cells[1:], 1)]
    lines.append("  # delays: <statement>  # instead of pins_ps: one statement for the whole part")
    return lines, why


def _stack_values(ev: Mapping[str, Any]) -> str:
    """``FR4, εr 4.5, tan δ 0.02`` from a stack-up finding's evidence (empty when absent)."""
    parts = []
    if ev.get("material"):
        parts.append(_say(ev["material"]))
    if ev.get("epsilon_r") is not None:
        parts.append(f"εr {_num(ev['epsilon_r'])}")
    if ev.get("loss_tangent") is not None:
        parts.append(f"tan δ {_num(ev['loss_tangent'])}")
    return ", ".join(parts)


def _stackup_note(f: Finding, weak: set[str]) -> str:
    """What of the stack-up a finding rests on, and where to declare it."""
    what = sorted(weak & _STACKUP_INPUTS)
    head = (
        f"the stack-up's {', '.join(what)} " + (f"({_say(f.layer)}) " if f.layer else "")
        if what
        else "the board declares no stack-up of its own (none, or KiCad's defaults)"
    )
    return (
        head.rstrip()
        + (" are KiCad defaults" if what else "")
        + ": declare your fab's values here (stackup: materials: {'dielectric N': {material, "
        "thickness_mm, epsilon_r, loss_tangent}}; stackup: copper: {LAYER: {thickness_um}}) "
        "or in KiCad (Board Setup > Physical Stackup)"
    )


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _gather(
    findings: Sequence[Finding],
    doc: _Doc,
    all_names: Sequence[str] | None = None,
    sids: frozenset[str] | None = None,
) -> _Doc:
    g = _Gather(doc, all_names, sids)
    for i, f in enumerate(findings):
        g.finding(i, f)
    g.finish()
    return doc


def declare_yaml(findings: Sequence[Finding]) -> str:
    """The ``accel-drc.yaml`` block that declares what decides exactly these cannot-verify
    findings (others are ignored), ready to paste: each entry with why it matters and the rules
    it decides; what only KiCad's stack-up can carry is a comment.  Empty when nothing is to
    be declared.  Values the tool cannot know are ``<placeholders>`` (:data:`PLACEHOLDERS`), so
    a block pasted unfilled is refused with ``file:line`` rather than read as a fact."""
    return _declare_yaml(findings)


def _declare_yaml(findings: Sequence[Finding], sids: frozenset[str] | None = None) -> str:
    """:func:`declare_yaml` with the library's signal ids given (None: loaded)."""
    return _gather(findings, _Doc(), sids=sids).render(commented=False)


def covered(
    findings: Sequence[Finding], sids: frozenset[str] | None = None
) -> dict[int, list[str]]:
    """finding index -> the sections of the entries that decide it (the first is its group);
    ``sids``: the library's signal ids, when the caller has them (None: loaded)."""
    return _gather(findings, _Doc(), sids=sids).covered


@dataclass(frozen=True)
class DeclareGroup:
    """The cannot-verify findings that one kind of declaration decides."""

    title: str  # "declare the net's signal type"
    findings: tuple[int, ...]  # indices into the findings given
    rules: tuple[tuple[str, int], ...]  # (rule id, count)
    errors: int  # how many are error severity
    yaml: str  # declare_yaml of exactly these findings


#: the last (findings, groups): the JSON and Markdown writers of one run ask for the same list
_LAST: list[Any] = [None, None, []]


def declare_groups(findings: Sequence[Finding]) -> list[DeclareGroup]:
    """The cannot-verify findings grouped by what to declare (the section of their first
    entry), most error findings first, each with its ready-to-paste block.  The groups of the
    last findings list asked for are kept (the reports of one run share them)."""
    if _LAST[0] is findings and _LAST[1] == len(findings):
        return list(_LAST[2])
    groups = _declare_groups(findings)
    _LAST[:] = [findings, len(findings), groups]
    return list(groups)


def _declare_groups(findings: Sequence[Finding]) -> list[DeclareGroup]:
    # the rule library loaded once for the grouping and every group's block (each gathering
    # loaded it again: 3 loads, 0.13 s of the KiCad button's HTML report on vme-wren)
    unknown = any(f.status == Status.CANNOT_VERIFY for f in findings)
    sids = _signal_ids() if unknown else None  # (nothing to declare: no library needed)
    cov = covered(findings, sids)
    by: dict[str, list[int]] = {}
    for i, f in enumerate(findings):
        if f.status == Status.CANNOT_VERIFY:
            by.setdefault((cov.get(i) or ["notes"])[0], []).append(i)
    out = []
    for section, idx in by.items():
        sub = [findings[i] for i in idx]
        out.append(
            DeclareGroup(
                title=GROUP_TITLES.get(section, "declare"),
                findings=tuple(idx),
                rules=tuple(sorted(Counter(f.rule for f in sub).items())),
                errors=sum(1 for f in sub if f.severity == Severity.ERROR),
                yaml=_declare_yaml(sub, sids),
            )
        )
    out.sort(key=lambda g: (-g.errors, -len(g.findings), g.title))
    return out


def hint_line(findings: Sequence[Finding], board_path: str) -> str | None:
    """The line ``check`` prints: how many cannot-verify findings say what to declare and that
    ``accel-drc init`` writes them (None when there are none)."""
    n = sum(1 for f in findings if f.status == Status.CANNOT_VERIFY)
    if not n:
        return None
    errors = sum(
        1 for f in findings if f.status == Status.CANNOT_VERIFY and f.severity == Severity.ERROR
    )
    import shlex

    board = shlex.quote(board_path)  # a command to paste into a shell
    return terminal(
        f"declare: {n} cannot-verify finding{'s' if n != 1 else ''} ({errors} at error severity) "
        f"{'say' if n != 1 else 'says'} what to declare: `accel-drc init {board}` writes "
        f"{'them' if n != 1 else 'it'} into a starter accel-drc.yaml"
    )


# ---------------------------------------------------------------------------------------------
# accel-drc init: the whole starter file
# ---------------------------------------------------------------------------------------------

_HEADER = """\
accel-drc.yaml for {board}: a starter written by `accel-drc init` (accel-drc {version}).

It loads as is and declares nothing yet: a guess written as a value would become a fact
nobody stated (basis `assumed` or `default` -> `declared`), and a value the board already
declares, restated here, would override the board from then on.
To declare something: delete the first `#` of its lines (a line of config starts with `#`
and no space; `# ` and text is an explanation) and fill in every <placeholder>.  Nested
entries need their section line (`signals:`, `stackup:`, `rails:`, …) uncommented too.
Placeholders:
{placeholders}
When this run was written: {verdict}
Regexes match the whole net name; `accel-drc check` reports entries that match nothing."""


def _class_intro(result: Any) -> list[str]:
    c = result.classification
    how = {"auto": "classified", "config": "declared in the config", "cli": "given by --class"}
    out = [
        f"# class: {_say(c.board_class)} ({how.get(c.source, c.source)}, confidence "
        f"{c.confidence:.0%}); uncomment to make it a fact: the rules whose limits differ by "
        "class (layer count, Tg, plane copper, PDN target, backdrill) then run for it alone",
        "# the evidence and its votes:",
    ]
    for e in c.evidence:
        votes = ", ".join(f"{k} {float(v):.2f}" for k, v in e.votes.items() if float(v))
        out.append(
            f"# - {_say(e.what)}: {_say(e.value)}"
            + (f" ({votes})" if votes else "")
            + (f"; {_say(e.note)}" if e.note else "")
        )
    return out


def _exact(x: float) -> str:
    """``x`` as YAML text that reads back as exactly ``x`` (a restated board value must not
    move by a rounding: it would change a verdict at its margin) and as a float in PyYAML
    (``1e-09`` without a dot is a string there)."""
    text = repr(float(x))
    if "e" in text and "." not in text.split("e")[0]:
        text = text.replace("e", ".0e", 1)
    return text


#: what the comment says of a value restated from the board, and of a KiCad default
_FROM_BOARD = "from the board"
_REPLACE = "KiCad default: replace"


def _value(value: Any, basis: str | None, scale: float = 1.0) -> str | None:
    """A stack-up value as the starter writes it: the board's own (when the board states it,
    not as KiCad's default, and the schema takes it: > 0), else None (the placeholder)."""
    if value is None or basis in (None, "default", "assumed") or not float(value) > 0:
        return None
    return _exact(round(float(value) * scale, 9) if scale != 1.0 else float(value))


def _entry(
    name: str,
    fields: Sequence[tuple[str, str | None, str]],
    sources: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """``'NAME': {k: v, …}`` and its comment: which values restate the board (or, per key in
    ``sources``, where else they come from), which are placeholders (fields: key, the value
    or None, the placeholder)."""
    sources = sources or {}
    body = ", ".join(f"{k}: {v if v is not None else ph}" for k, v, ph in fields)
    kept = [k for k, v, _ph in fields if v is not None and k not in sources]
    other = [f"{k}: {sources[k]}" for k, v, _ph in fields if v is not None and k in sources]
    todo = [k for k, v, _ph in fields if v is None]
    notes = (
        ([f"{', '.join(kept)}: {_FROM_BOARD}"] if kept else [])
        + other
        + ([f"{', '.join(todo)}: {_REPLACE} (or not in the stack-up)"] if todo else [])
    )
    return f"{_q(name)}: {{{body}}}", "; ".join(notes)


def _dielectric_entry(r: Mapping[str, Any]) -> tuple[str, str]:
    """A dielectric's ``stackup: materials:`` entry from its stack-up row: material, εr, Df and
    thickness as the board states them, Tg as the library gives it for the named laminate;
    a KiCad default or a value the board lacks is a placeholder.  Slices (KiCad sub-layers)
    that differ cannot be restated by one entry: material, εr and Df are placeholders then."""
    b = r.get("basis") or {}
    uniform = bool(r.get("uniform", True))
    mat_basis = b.get("epsilon_r") if uniform else None
    material = r.get("material")
    fields = [
        ("material", _q(str(material)) if material and mat_basis == "declared" else None,
         "'<laminate>'"),
        ("thickness_mm", _value(r.get("thickness_mm"), b.get("thickness")), "<mm>"),
        ("epsilon_r", _value(r.get("epsilon_r"), mat_basis), "<εr>"),
        ("loss_tangent",
         _value(r.get("loss_tangent"), mat_basis if r.get("loss_tangent_from") == "stack-up"
                else None), "<Df>"),
        ("tg_c", _value(r.get("tg_c"), b.get("tg_c") if uniform else None), "<°C>"),
    ]  # fmt: skip
    tg_from = _say(r.get("tg_from") or "library")
    lib = r.get("library_material")
    sources = {"tg_c": f"{tg_from}" + (f" ({_say(lib)})" if lib else "") + ": replace with "
               "your laminate's if it differs"}  # fmt: skip
    line, comment = _entry(str(r.get("name")), fields, sources)
    if not uniform:
        comment += "; its sub-layers differ: one entry would replace them all"
    return line, comment


def _stackup_entries(g: _Gather, result: Any) -> None:
    """The stack-up as structured ``stackup: materials:`` (each dielectric and soldermask) and
    ``stackup: copper:`` entries: a value the board states, restated as it is (uncommented
    unedited, it changes no verdict); a KiCad default or a value the board lacks, a
    ``<placeholder>`` (uncommented unedited, refused with file:line, never read as a fact)."""
    rows = result.extras.get("stackup") if isinstance(result.extras, Mapping) else None
    mats: list[str] = []
    copper: list[str] = []
    for r in rows or ():
        kind = str(r.get("kind") or "")
        b = r.get("basis") or {}
        name = str(r.get("name"))
        if kind == "copper":
            t = _value(r.get("thickness_mm"), b.get("thickness"), scale=1000.0)
            line, comment = _entry(name, [("thickness_um", t, "<µm>")])
            copper.append(f"  {line}  # {comment}")
        elif kind == "soldermask":
            line, comment = _entry(name, [
                ("thickness_um", _value(r.get("thickness_mm"), b.get("thickness"), scale=1000.0),
                 "<µm>"),
                ("epsilon_r", _value(r.get("epsilon_r"), b.get("epsilon_r")), "<εr>"),
                ("loss_tangent", _value(r.get("loss_tangent"), b.get("loss_tangent")), "<Df>"),
            ])  # fmt: skip
            mats.append(f"  {line}  # {comment}")
        elif kind in ("core", "prepreg", "dielectric"):
            line, comment = _dielectric_entry(r)
            mats.append(f"  {line}  # {kind}; {comment}")
    if mats:
        g.doc.item("stackup", "materials", ["materials:", *mats],
                   "per dielectric and soldermask, as named in the stack-up; KiCad's stack-up "
                   "(Board Setup > Physical Stackup) is the better place: the file then "
                   "carries it")  # fmt: skip
    if copper:
        g.doc.item("stackup", "copper", ["copper:", *copper],
                   "per copper layer: its finished thickness (the foil grade is foil: above)")  # fmt: skip


def _stackup_intro(result: Any) -> list[str]:
    """The explanation above ``stackup:``: how its entries are marked."""
    rows = result.extras.get("stackup") if isinstance(result.extras, Mapping) else None
    if not rows:
        return [
            "# stack-up: the board has none (define it in KiCad: Board Setup > Physical Stackup)"
        ]
    return [
        "# the stack-up as read: each value marked 'from the board' restates the board (it "
        "changes nothing uncommented as it is: replace it with your fab's value where they "
        "differ); 'KiCad default: replace' is a <placeholder> for your fab's value (a KiCad "
        "default or a value the board does not state)"
    ]


def _interfaces(g: _Gather, result: Any) -> None:
    """Every interface recognised or assumed on the board (coverage rows), with its rate."""
    rows = (result.coverage or {}).get("pairs") or ()
    by: dict[str, list[Mapping[str, Any]]] = {}
    excluded = 0
    for r in rows:
        iface = r.get("interface")
        if iface == "excluded":
            excluded += 1
        elif iface and r.get("basis") in ("recognised", "assumed", "declared"):
            by.setdefault(str(iface), []).append(r)
    for sid, rs in by.items():
        if sid not in g.sids:  # a reference clock, say: no signal type to declare
            continue
        name = _say(rs[0].get("interface_name") or sid)
        bases = Counter(str(r.get("basis")) for r in rs)
        how = sorted({str(r.get("recognised_by") or r.get("basis")) for r in rs})
        if bases.get("assumed"):
            why = (
                f"ASSUMED {sid} = {name}: the generation/rate is not told by the net names or "
                f"net class; replace {sid} by the real type"
            )
        else:
            why = (
                f"recognised as {name} (by {', '.join(_say(h) for h in how)}); uncomment to "
                "declare it (config patterns are tried before recognition)"
            )
        g.signal(None, None, sid, [n for r in rs for n in r.get("nets") or ()], why=why)
    if excluded:
        g.doc.intro.setdefault("signals", []).append(
            f"# {excluded} clock/sideband pairs are excluded from the interface rules "
            "(accel-drc inspect --detail pairs lists them)"
        )


def _rails(g: _Gather, result: Any) -> None:
    """Every power rail the run found, with the fields its checks need."""
    for r in result.extras.get("rails") or () if isinstance(result.extras, Mapping) else ():
        if not isinstance(r, Mapping) or not r.get("name"):
            continue
        entry = g.rail_entry(str(r["name"]), r.get("nets") or [r["name"]])
        volt = r.get("voltage")
        entry.set("voltage", _num(volt) if volt is not None else "<V>")
        core = r.get("role") == "core"
        if core and r.get("role_basis") != "assumed":
            entry.set("role", "core")
        g._rail_load(entry, core)
        unconfirmed = [d.get("package") for d in r.get("decaps") or () if d.get("unconfirmed")]
        if unconfirmed:  # declared rails are judged on their decaps' models: confirm them
            g.capacitors(unconfirmed)


def _packages(g: _Gather, result: Any) -> None:
    """Every part whose package delays a skew rule's limit covers (``extras["skew"]``), with
    its pads on the checked nets."""
    extras = result.extras if isinstance(result.extras, Mapping) else {}
    got = (extras.get("skew") or {}).get("packages") or {}
    for _rule, parts in got.items():
        for part, pads in (parts or {}).items():
            g.package(None, None, str(part), {str(p): s for p, s in (pads or {}).items()})


def starter_config(result: Any, board_names: Sequence[str] | None = None) -> str:
    """The starter ``accel-drc.yaml`` ``accel-drc init`` writes for the board ``result`` was
    checked from (see the module docstring): loads as is, declares nothing, and every
    cannot-verify finding of ``result`` has its entry.  ``board_names`` (the board's net names)
    lets net lists be written as patterns that match those nets and no others."""
    from .report.verdict import verdict_line
    from .version import __version__

    findings = list(result.findings)
    doc = _Doc()
    doc.header = _HEADER.format(
        board=_say(result.board_file.replace("\\", "/").rsplit("/", 1)[-1]),
        version=__version__,
        placeholders="\n".join(f"- {k}  {v}" for k, v in PLACEHOLDERS.items()),
        verdict=_say(verdict_line(result)),
    ).split("\n")
    c = result.classification
    doc.intro["class"] = _class_intro(result)
    doc.item("class", "class", [f"class: {c.board_class}"])
    doc.intro["stackup"] = _stackup_intro(result)
    doc.intro["rails"] = [
        "# power rails: declaring `rails:` replaces their detection, so keep every rail you "
        "want checked (those found on the board are all below)"
    ]
    doc.intro["package_delays"] = [
        "# package (pad-to-die) delays of the parts on a skew-checked interface: the DDR "
        "DQ-DQS and CA-CK limits cover board and package, so an undeclared delay (counted 0 ps) "
        "leaves a failing skew unverified. Give ps per pad from each part's package "
        "flight-time table (pins_ps), or one statement for the whole part (delays: matched, "
        "compensated or none, and a reason: the controller's per-bit deskew, or lengths "
        "already tuned with the package)"
    ]
    g = _Gather(doc, board_names)
    _interfaces(g, result)
    _rails(g, result)
    _packages(g, result)
    doc.item("stackup", "foil", ["foil: {default: <grade>}"], FOIL_WHY)
    _stackup_entries(g, result)
    for i, f in enumerate(findings):
        g.finding(i, f)
    g.finish()
    return doc.render(commented=True)
