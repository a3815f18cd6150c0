"""Load and validate the rule data: class packs, signal types, materials and foils; apply a
project's overrides; score class profiles.

All of it is YAML under ``rules/`` (data only; the code knows the *kinds* of check, never a limit).
Every file goes through the hardened loader (:mod:`accel_drc.yamlsafe`) and is checked against
its JSON schema (``rules/schemas/*.schema.json``) before use; a mistake is reported as
``file:line: what is wrong`` (exit 3).  A rule's ``check`` must name a kind of the check
registry (:mod:`accel_drc.checks`) and its ``params`` follow that kind's ``PARAMS`` schema.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .caseless import CaselessPattern
from .errors import InputError
from .material_library import MaterialLibrary, library_from_data
from .references import REFERENCES_SCHEMA, References, check_source, references_from_data
from .results import Rule, Severity
from .signal_rules import SignalRules, expand, load_signal_rules
from .yamlsafe import (  # noqa: F401  (re-exported: the loader used to live here)
    MAX_DEPTH,
    YamlDoc,
    load_schema,
    load_yaml,
    nesting_depth,
    validate,
)

RULES_DIR = Path(__file__).resolve().parent / "rules"
CLASSES = ("training", "inference", "edge")
#: the classifier's outcome for a board that is not accelerator hardware at all (a 2-layer hobby
#: board with no high-speed interface, module or memory): only the rules every class pack shares
#: apply (the interfaces' own limits), never the class-specific ones (:func:`general_pack`)
GENERAL = "general"
#: every class a board can be checked as (``--class``, ``class:`` in accel-drc.yaml)
BOARD_CLASSES = (*CLASSES, GENERAL)

#: the schemas of the rule data (JSON files in ``rules/schemas/``, beside the data)
MATERIALS_SCHEMA: dict[str, Any] = load_schema("materials")
FOILS_SCHEMA: dict[str, Any] = load_schema("foils")
SIGNALS_SCHEMA: dict[str, Any] = load_schema("signals")
PACK_SCHEMA: dict[str, Any] = load_schema("pack")
FAB_SCHEMA: dict[str, Any] = load_schema("fab")


def __getattr__(name: str) -> Any:
    """``CHECK_KINDS`` (the kind names a pack may use) and ``PARAM_SCHEMAS`` (kind -> JSON schema
    of its params), derived from the check registry when first asked for (the check modules
    import the analysis, which imports this module)."""
    from . import kinds

    if name == "CHECK_KINDS":
        return kinds.kind_names()
    if name == "PARAM_SCHEMAS":
        return kinds.param_schemas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# Library objects
# ---------------------------------------------------------------------------------------------


def _compile(
    patterns: Iterable[str], doc: YamlDoc, where: tuple[Any, ...]
) -> tuple[re.Pattern[str], ...]:
    """The recognition patterns, case-insensitive (:class:`~accel_drc.caseless.CaselessPattern`:
    compiled in ASCII mode for the printable-ASCII names nearly every board has; a pattern of
    a user's file is also compiled in Unicode mode at once, so a bad one is a ``file:line``
    error here)."""
    out: list[Any] = []
    for i, p in enumerate(patterns):
        try:
            out.append(CaselessPattern(p, validate=not doc.trusted))
        except re.error as exc:
            raise doc.error((*where, i), f"bad regular expression {p!r}: {exc}") from None
    return tuple(out)


@dataclass(frozen=True)
class SignalType:
    """A kind of high-speed signal and what it asks of the board (from ``signals.yaml``)."""

    id: str
    name: str
    data_rate_gbps: float
    modulation: str
    baud_gbd: float
    nyquist_hz: float
    max_df: float | None
    min_foil: str
    max_stub_mm: float | None
    min_fres_ratio: float | None
    zdiff_ohm: float | None
    zdiff_tol_pct: float | None
    source: str
    single_ended_ohm: float | None = None
    #: this board's share of the channel's insertion-loss budget at Nyquist (dB), where public
    loss_budget_db: float | None = None
    #: the fastest 10-90 % edge its specification allows a transmitter (ps), where published
    #: (``min_rise_source`` cites it, or says [U] what was searched): crosstalk's fastest edge
    min_rise_ps: float | None = None
    min_rise_source: str = ""
    unconfirmed: tuple[str, ...] = ()
    class_patterns: tuple[re.Pattern[str], ...] = ()
    name_patterns: tuple[re.Pattern[str], ...] = ()
    note: str = ""
    #: (check kind, why the physics of this type is outside the check's model): a trio has no
    #: pair to skew; coverage says it where the type has no rule of that kind
    not_modelled: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SignalFamily:
    """Signals whose generation a name does not tell (``PCIe_TX0``): recognised, then assumed."""

    id: str
    assume: str
    note: str
    class_patterns: tuple[re.Pattern[str], ...] = ()
    name_patterns: tuple[re.Pattern[str], ...] = ()
    #: every signal type of the family users route (PCIe 1-6): the candidates a guess is
    #: evaluated against; ``assume`` is one of them
    members: tuple[str, ...] = ()


@dataclass(frozen=True)
class SidebandKind:
    """Nets that are sideband or control, never lanes (``signals.yaml`` ``sideband:``): matched
    on the net name and on the pin names of the pads the net lands on."""

    id: str
    what: str
    patterns: tuple[re.Pattern[str], ...]
    source: str


@dataclass(frozen=True)
class FoilGrade:
    id: str
    rank: int
    name: str
    aliases: tuple[str, ...]
    rz_um: tuple[float, float]
    source: str


@dataclass(frozen=True)
class Foils:
    grades: tuple[FoilGrade, ...]
    version: str = ""

    def grade(self, typed: str | None) -> FoilGrade | None:
        """The grade a user's string names (case, spaces and dashes ignored); None if unknown."""
        if not typed:
            return None
        key = re.sub(r"[\s_-]+", "", typed).upper()
        for g in self.grades:
            if key == g.id or any(key == re.sub(r"[\s_-]+", "", a).upper() for a in g.aliases):
                return g
        return None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.grades)


@dataclass(frozen=True)
class ClassPack:
    name: str
    version: str
    file: str
    rules: tuple[Rule, ...]
    description: str = ""
    follows: str = ""
    profile: Mapping[str, Any] = field(default_factory=dict)
    applies_to: tuple[str, ...] = ("training", "inference", "edge", "general")


@dataclass(frozen=True)
class FabClass:
    """One fab capability class of ``rules/fab.yaml`` (least capable first)."""

    id: str
    name: str
    aspect_ratio_max: float
    source: str


@dataclass(frozen=True)
class FabData:
    """``rules/fab.yaml``: fab capability classes, the microvia definition, annular-ring minima
    per IPC-6012 class and the via-barrel thermal data; each block keeps its ``source``."""

    classes: tuple[FabClass, ...] = ()
    microvia: Mapping[str, Any] = field(default_factory=dict)
    annular_ring: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    thermal: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""

    def fab_class(self, fid: str | None) -> FabClass | None:
        """The class ``fid`` names; None if unknown."""
        return next((c for c in self.classes if c.id == fid), None)


@dataclass(frozen=True)
class Library:
    """Everything under ``rules/``, validated."""

    signals: Mapping[str, SignalType]
    families: Mapping[str, SignalFamily]
    exclude: tuple[re.Pattern[str], ...]
    materials: MaterialLibrary
    foils: Foils
    packs: Mapping[str, ClassPack]
    files: Mapping[str, str]  # kind -> path
    versions: Mapping[str, str]  # kind -> version
    references: References = field(default_factory=References)
    fab: FabData = field(default_factory=FabData)
    sideband: tuple[SidebandKind, ...] = ()

    def family_of(self, signal: str) -> SignalFamily | None:
        """The family ``signal`` is a member of (its first in file order), or None."""
        for fam in self.families.values():
            if signal in fam.members or signal == fam.assume:
                return fam
        return None

    def pack_info(self, names: Iterable[str]) -> list[dict[str, str]]:
        out = []
        for name in names:
            p = self.packs[name]
            out.append({"name": p.name, "version": p.version, "file": p.file})
        for kind in ("signals", "materials", "foils"):
            out.append({"name": kind, "version": self.versions[kind], "file": self.files[kind]})
        return out


def load_signals(
    path: Path, foils: Foils, refs: Mapping[str, Any] | None = None, doc: YamlDoc | None = None
) -> tuple[dict[str, SignalType], dict[str, SignalFamily], tuple]:
    """The signal types, families and excluded-net patterns of ``signals.yaml`` (``doc``: the
    file already loaded, as :func:`load_library` shares it with its other readers)."""
    doc = doc if doc is not None else load_yaml(path)
    validate(doc, SIGNALS_SCHEMA)
    data = doc.data
    check_sources(doc, refs, (("signals", sid, "source") for sid in data["signals"]))
    signals: dict[str, SignalType] = {}
    for sid, s in data["signals"].items():
        where = ("signals", sid)
        if foils.grade(s["min_foil"]) is None:
            raise doc.error(
                (*where, "min_foil"),
                f"unknown foil grade {s['min_foil']!r} (known: {', '.join(foils.ids)})",
            )
        rec = s.get("recognise", {})
        baud = float(s.get("baud_gbd") or s["data_rate_gbps"])
        signals[sid] = SignalType(
            id=sid,
            name=s["name"],
            data_rate_gbps=float(s["data_rate_gbps"]),
            modulation=s["modulation"],
            baud_gbd=baud,
            nyquist_hz=float(s["nyquist_ghz"]) * 1e9,
            max_df=s["max_df"],
            min_foil=foils.grade(s["min_foil"]).id,  # type: ignore[union-attr]
            max_stub_mm=s["max_stub_mm"],
            min_fres_ratio=s.get("min_fres_ratio"),
            zdiff_ohm=s["zdiff_ohm"],
            zdiff_tol_pct=s["zdiff_tol_pct"],
            source=s["source"],
            single_ended_ohm=s.get("single_ended_ohm"),
            loss_budget_db=s.get("loss_budget_db"),
            min_rise_ps=s.get("min_rise_ps"),
            min_rise_source=s.get("min_rise_source", ""),
            unconfirmed=tuple(s.get("unconfirmed", ())),
            class_patterns=_compile(
                rec.get("net_class", ()), doc, (*where, "recognise", "net_class")
            ),
            name_patterns=_compile(rec.get("net_name", ()), doc, (*where, "recognise", "net_name")),
            note=s.get("note", ""),
            not_modelled=tuple(
                (k, " ".join(v.split())) for k, v in s.get("not_modelled", {}).items()
            ),
        )
    families = {}
    for fid, f in data.get("families", {}).items():
        if f["assume"] not in signals:
            raise doc.error(("families", fid, "assume"), f"unknown signal type {f['assume']!r}")
        families[fid] = SignalFamily(
            id=fid,
            assume=f["assume"],
            note=" ".join(f["note"].split()),
            class_patterns=_compile(f.get("net_class", ()), doc, ("families", fid, "net_class")),
            name_patterns=_compile(f.get("net_name", ()), doc, ("families", fid, "net_name")),
            members=_members(f, signals, doc, fid),
        )
    exclude = _compile(data.get("exclude", ()), doc, ("exclude",))
    return signals, families, exclude


def _members(f: Mapping[str, Any], signals: Mapping[str, Any], doc: Any, fid: str) -> tuple:
    """A family's ``members`` (its ``assume`` among them), each a known signal type."""
    members = tuple(f.get("members") or (f["assume"],))
    for i, m in enumerate(members):
        if m not in signals:
            raise doc.error(("families", fid, "members", i), f"unknown signal type {m!r}")
    if f["assume"] not in members:
        raise doc.error(("families", fid, "members"), f"{f['assume']!r} (assume) is not a member")
    return members


def load_sideband(
    path: Path, refs: Mapping[str, Any] | None = None, doc: YamlDoc | None = None
) -> tuple:
    """``signals.yaml`` ``sideband:``: the kinds of sideband / control net, compiled."""
    doc = doc if doc is not None else load_yaml(path)
    data = doc.data.get("sideband") or {}
    check_sources(doc, refs, (("sideband", k, "source") for k in data))
    return tuple(
        SidebandKind(
            k,
            v["what"],
            _compile(v["match"], doc, ("sideband", k, "match")),
            " ".join(v["source"].split()),
        )
        for k, v in data.items()
    )


def load_foils(path: Path, refs: Mapping[str, Any] | None = None) -> Foils:
    doc = load_yaml(path)
    validate(doc, FOILS_SCHEMA)
    check_sources(doc, refs, (("grades", i, "source") for i in range(len(doc.data["grades"]))))
    grades = []
    for i, g in enumerate(doc.data["grades"]):
        if g["rank"] != i:
            raise doc.error(
                ("grades", i, "rank"), f"grades must be listed smoothest last with rank {i}"
            )
        grades.append(
            FoilGrade(
                g["id"], g["rank"], g["name"], tuple(g["aliases"]), tuple(g["rz_um"]), g["source"]
            )  # type: ignore[arg-type]
        )
    return Foils(tuple(grades), str(doc.data["version"]))


def load_fab(path: Path, refs: Mapping[str, Any] | None = None) -> FabData:
    """``rules/fab.yaml``, validated, every ``source`` citing known references; an empty
    :class:`FabData` when the file is absent (a rules directory of an older layout)."""
    if not Path(path).is_file():
        return FabData()
    doc = load_yaml(path)
    validate(doc, FAB_SCHEMA)
    d = doc.data
    where: list[tuple[Any, ...]] = [
        ("fab_classes", i, "source") for i in range(len(d["fab_classes"]))
    ]
    where += [("microvia", "source"), ("microvia", "stacked_source"), ("thermal", "source")]
    where += [("annular_ring", i, "source") for i in range(len(d["annular_ring"]))]
    check_sources(doc, refs, where)
    ratios = [float(c["aspect_ratio_max"]) for c in d["fab_classes"]]
    if ratios != sorted(ratios):
        raise doc.error(("fab_classes",), "fab classes must be listed least capable first")
    return FabData(
        classes=tuple(
            FabClass(str(c["id"]), str(c["name"]), float(c["aspect_ratio_max"]), str(c["source"]))
            for c in d["fab_classes"]
        ),
        microvia=dict(d["microvia"]),
        annular_ring={int(a["ipc6012_class"]): dict(a) for a in d["annular_ring"]},
        thermal=dict(d["thermal"]),
        version=str(d["version"]),
    )


def load_materials(path: Path, refs: Mapping[str, Any] | None = None) -> MaterialLibrary:
    """Load the laminate library.  ``ipc4101: null`` (slash sheet not known) must be marked
    unconfirmed, so an unknown sheet is never mistaken for "no sheet applies"; the library
    object holds it as an empty tuple."""
    doc = load_yaml(path)
    validate(doc, MATERIALS_SCHEMA)
    check_sources(doc, refs, (("materials", m, "source") for m in doc.data["materials"]))
    mats = {}
    for mid, m in doc.data["materials"].items():
        if "ipc4101" in m and m["ipc4101"] is None:
            if "ipc4101" not in m.get("unconfirmed_fields", ()):
                raise doc.error(
                    ("materials", mid, "ipc4101"),
                    f"{mid}: ipc4101 is null (unknown) but not listed in unconfirmed_fields",
                )
            m = {k: v for k, v in m.items() if k != "ipc4101"}
        mats[mid] = m
    return library_from_data({**doc.data, "materials": mats})


def _rule_id(pack: str, r: Mapping[str, Any]) -> str:
    if r.get("id"):
        return str(r["id"])
    return ".".join(x for x in (pack, r["check"], r.get("signal")) if x)


def check_params(
    doc: YamlDoc, where: tuple[Any, ...], check: str, params: Mapping[str, Any], foils: Foils
) -> None:
    """Validate one rule's params against its kind's schema (and foil grades by name).  A kind
    no check module declares is an error here, at load, with the rule's line (never a rule
    silently skipped at run time).  A ``trusted`` document (the validated bundled snapshot,
    :mod:`accel_drc.bundled`) passed all of this when the snapshot was built."""
    if doc.trusted:
        return
    from .kinds import discover

    kinds = discover()
    if check not in kinds:
        raise doc.error(
            (*where[:-1], "check"),
            f"unknown check kind {check!r} (known: {', '.join(sorted(kinds))})",
        )
    validate(doc, kinds[check].params, data=dict(params), base=where)
    if check == "foil" and foils.grade(str(params.get("min_grade"))) is None:
        raise doc.error(
            (*where, "min_grade"),
            f"unknown foil grade {params.get('min_grade')!r} (known: {', '.join(foils.ids)})",
        )
    if check == "layer_count":
        lo, hi = params.get("min"), params.get("max")
        if lo is not None and hi is not None and lo > hi:
            raise doc.error(where, f"min {lo} is above max {hi}")


def _unique(doc: YamlDoc, where: tuple[Any, ...], rid: str, seen: dict[str, int], i: int) -> None:
    """Refuse a rule id the pack already has (``file:line`` of the second)."""
    if rid in seen:
        raise doc.error(where, f"duplicate rule id {rid!r} (rule {seen[rid]} has it too)")
    seen[rid] = i


def _generated_blocks(doc: YamlDoc, generated: Any) -> tuple[dict[str, list[Any]], Any]:
    """The per-signal rules a pack generates (:mod:`accel_drc.signal_rules`), by block;
    empty for a pack that places none (a project's pack of explicit rules); and the template.
    ``generated``: a :class:`SignalRules`, or a callable giving one (loaded only when needed)."""
    data = doc.data
    placed = [r for r in data["rules"] if "signal_rules" in r]
    if not placed and not data.get("signal_rules"):
        return {}, None
    generated = generated() if callable(generated) else generated
    if generated is None:
        raise doc.error(
            ("rules",),
            "signal_rules: the generated per-signal rules are for the class packs beside "
            "rules/signal_rules.yaml; write this pack's rules out (check:, signal:, params:)",
        )
    blocks = expand(generated, data["pack"], data.get("signal_rules"), doc)
    if not placed:
        raise doc.error(("signal_rules",), "signal_rules: but no '- signal_rules: <block>' item")
    return blocks, generated


def written_out(doc: YamlDoc, generated: Any) -> dict[str, Any]:
    """A class pack's data with its generated rules written out in place of its
    ``- signal_rules:`` items (and no ``signal_rules:`` section): what the validated snapshot
    stores (:func:`accel_drc.regenerate.snapshot_text`), so a clean run loads the packs as
    explicit rules, without expanding the template again.  The same rules :func:`load_pack`
    makes from the file."""
    data = dict(doc.data)
    blocks, _ = _generated_blocks(doc, generated)
    if not blocks:
        return data
    rules: list[Any] = []
    for r in data["rules"]:
        rules += blocks[r["signal_rules"]] if "signal_rules" in r else [r]
    data["rules"] = [dict(r) for r in rules]
    data.pop("signal_rules", None)
    return data


def _unknown_block(doc: YamlDoc, where: tuple[Any, ...], r: Mapping[str, Any], left: Any) -> None:
    """Refuse a ``- signal_rules:`` item naming no block (or one already placed)."""
    raise doc.error(
        (*where, "signal_rules"),
        f"no block {r['signal_rules']!r} left to place (left: {', '.join(left) or 'none'})",
    )


def _generated_rule(
    doc: YamlDoc,
    where: tuple[Any, ...],
    pack: str,
    g: Mapping[str, Any],
    generated: Any,
    signals: Mapping[str, SignalType],
    foils: Foils,
    refs: Mapping[str, Any] | None,
) -> Rule:
    """A generated rule of ``pack``, its params validated against its kind and its source
    against the references (errors at the signal's entry in ``signals.yaml``)."""
    sid, kind = g["signal"], g["check"]
    sdoc = generated.signals_doc
    at = ("signals", sid, "rules", kind)
    if sid not in signals:  # cannot happen with the library's own signals; a guard for callers
        raise doc.error(where, f"unknown signal type {sid!r}")
    check_params(sdoc, (*at, "params"), kind, g["params"], foils)
    if refs is not None and not (sdoc.trusted and doc.trusted):
        why = check_source(g["source"], refs)
        if why:
            raise sdoc.error((*at, "source"), f"{pack}.{kind}.{sid}: {why}")
    return Rule(
        id=f"{pack}.{kind}.{sid}",
        check=kind,
        severity=Severity(g["severity"]),
        params=dict(g["params"]),
        why=g["why"],
        source=g["source"],
        pack=pack,
        signal=sid,
    )


def load_pack(
    path: Path | str,
    signals: Mapping[str, SignalType],
    foils: Foils,
    refs: Mapping[str, Any] | None = None,
    generated: SignalRules | Callable[[], SignalRules | None] | None = None,
) -> ClassPack:
    """Load one pack file (a class pack or a project's extra pack).  With ``refs`` (the
    shipped class packs) every ``source`` must cite references by id (:func:`check_sources`);
    a project's extra pack may cite them but is not held to it.  ``generated``: the per-signal
    rule template over the signal types (:mod:`accel_drc.signal_rules`), which a pack's
    ``- signal_rules: <block>`` items place among its own rules."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict) or not ({"pack", "rules"} & set(doc.data)):
        # no line, no key: a file that is not a pack at all (someone's /etc/shadow) must not be
        # quoted back in the error
        raise InputError(
            doc.path, "not a rule pack (a YAML mapping with pack:, version: and rules:)"
        )
    validate(doc, PACK_SCHEMA)
    data = doc.data
    cited: list[tuple[Any, ...]] = [("follows",)]
    cited += [("rules", i, "source") for i in range(len(data["rules"]))]
    for kind, sec in (data.get("signal_rules") or {}).items():
        cited += [("signal_rules", kind, "vars", k) for k in (sec or {}).get("vars") or {}]
    for key, ranges in (data.get("profile") or {}).items():
        cited += [("profile", key, j, "source") for j in range(len(ranges))]
    check_sources(doc, refs, cited)
    name = data["pack"]
    blocks, generated = _generated_blocks(doc, generated)
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, r in enumerate(data["rules"]):
        where = ("rules", i)
        if "signal_rules" in r:
            if r["signal_rules"] not in blocks:
                _unknown_block(doc, where, r, blocks)
            for g in blocks.pop(r["signal_rules"]):
                rules.append(_generated_rule(doc, where, name, g, generated, signals, foils, refs))
                _unique(doc, where, rules[-1].id, seen, i)
            continue
        sig = r.get("signal")
        if sig is not None and sig not in signals:
            raise doc.error(
                (*where, "signal"), f"unknown signal type {sig!r} (known: {', '.join(signals)})"
            )
        check_params(doc, (*where, "params"), r["check"], r["params"], foils)
        rid = _rule_id(name, r)
        _unique(doc, where, rid, seen, i)
        rules.append(
            Rule(
                id=rid,
                check=r["check"],
                severity=Severity(r["severity"]),
                params=dict(r["params"]),
                why=" ".join(r["why"].split()),
                source=r["source"],
                pack=name,
                signal=sig,
                title=r.get("title", ""),
            )
        )
    if blocks:
        raise doc.error(
            ("rules",),
            f"no '- signal_rules: {next(iter(blocks))}' item: every block the kinds of "
            f"{generated.doc.path} name must be placed once",  # type: ignore[union-attr]
        )
    return ClassPack(
        name=name,
        version=str(data["version"]),
        file=str(path),
        rules=tuple(rules),
        description=data.get("description", ""),
        follows=" ".join(str(data.get("follows", "")).split()),
        profile=data.get("profile", {}),
        applies_to=tuple(data.get("applies_to", BOARD_CLASSES)),
    )


def class_specific(packs: Mapping[str, ClassPack]) -> tuple[set[str], list[Rule]]:
    """(the rule suffixes whose params or severity differ between the class packs or that some
    class lacks, the rules of the first pack that every class holds alike).  A suffix is a rule id
    without its class (``via_stub.pcie5``)."""
    by_suffix: dict[str, dict[str, Rule]] = {}
    for cls in CLASSES:
        for r in packs[cls].rules:
            suffix = r.id[len(cls) + 1 :] if r.id.startswith(cls + ".") else r.id
            by_suffix.setdefault(suffix, {})[cls] = r
    specific: set[str] = set()
    shared: list[Rule] = []
    for suffix, got in by_suffix.items():
        first = next(iter(got.values()))
        same = len(got) == len(CLASSES) and all(
            (dict(r.params), r.severity) == (dict(first.params), first.severity)
            for r in got.values()
        )
        if same:
            shared.append(replace(first, id=f"{GENERAL}.{suffix}", pack=GENERAL))
        else:
            specific.add(suffix)
    return specific, shared


def general_pack(packs: Mapping[str, ClassPack]) -> ClassPack:
    """The pack of a board that is not an accelerator board (:data:`GENERAL`): the rules every
    class pack holds with the same params and severity (an interface's own limits: a USB 3 via
    stub, a PCIe impedance), renamed ``general.<check>[.<signal>]``.  The class-specific rules
    (layer count, Tg, copper weight, PDN target, fab class, backdrill) describe accelerator
    hardware of one class, so a board of no class is held to none of them."""
    specific, shared = class_specific(packs)
    base = packs[CLASSES[-1]]
    return ClassPack(
        name=GENERAL,
        version=base.version,
        file=f"(derived from {', '.join(packs[c].file for c in CLASSES)})",
        rules=tuple(shared),
        description="not an accelerator board: the rules every class pack shares",
        follows="[nextpcb2026] PCB Design Parameter table: only the rules its training, inference "
        "and edge columns share (each interface's own limits); none of the class-specific ones ("
        + ", ".join(sorted(specific))
        + ")",
        profile={},
        applies_to=(GENERAL,),
    )


def load_library(rules_dir: str | Path | None = None) -> Library:
    """Load and validate everything under ``rules/`` (class packs included)."""
    base = Path(rules_dir) if rules_dir is not None else RULES_DIR
    files = {
        "foils": base / "foils.yaml",
        "signals": base / "signals.yaml",
        "materials": base / "materials.yaml",
        "references": base / "references.yaml",
        "fab": base / "fab.yaml",
        "signal_rules": base / "signal_rules.yaml",
    }
    refs = load_references(files["references"])
    fab = load_fab(files["fab"], refs)
    foils = load_foils(files["foils"], refs)
    sdoc = load_yaml(files["signals"])  # read once: its four readers below share it
    signals, families, exclude = load_signals(files["signals"], foils, refs, sdoc)
    sideband = load_sideband(files["signals"], refs, sdoc)
    materials = load_materials(files["materials"], refs)
    check_capacitor_sources(base / "capacitors.yaml", refs)
    generated = GeneratedRules(files["signal_rules"], sdoc)
    packs = {}
    for cls in CLASSES:
        p = load_pack(base / "classes" / f"{cls}.yaml", signals, foils, refs, generated)
        if p.name != cls:
            raise InputError(
                str(base / "classes" / f"{cls}.yaml"),
                f"pack name {p.name!r} should be {cls!r}",
                line=1,
            )
        packs[cls] = p
    packs[GENERAL] = general_pack(packs)
    versions = {
        "foils": foils.version,
        "signals": str(sdoc.data["version"]),
        "materials": materials.version,
        "references": refs.version,
        "fab": fab.version,
    }
    if rules_dir is None:
        _BUNDLED_SIGNAL_IDS[_file_key(files["signals"])] = frozenset(signals)
    return Library(
        signals=signals,
        families=families,
        exclude=exclude,
        materials=materials,
        foils=foils,
        packs=packs,
        files={k: str(v) for k, v in files.items()},
        versions=versions,
        references=refs,
        fab=fab,
        sideband=sideband,
    )


#: the signal ids of the bundled library, by its signals.yaml's (path, mtime, size): what
#: :func:`bundled_signal_ids` answers without loading the library again
_BUNDLED_SIGNAL_IDS: dict[tuple[str, int, int] | None, frozenset[str]] = {}


def _file_key(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_mtime_ns, st.st_size)


def bundled_signal_ids() -> frozenset[str]:
    """The signal type ids of the bundled rule library (``rules/signals.yaml``): remembered
    from this process's last :func:`load_library` of it while that file is unchanged, else
    loaded.  For the reports' "what to declare" blocks, written after a check that loaded the
    library already (loading it again cost the KiCad button's report 19 ms on vme-wren)."""
    key = _file_key(RULES_DIR / "signals.yaml")
    got = _BUNDLED_SIGNAL_IDS.get(key) if key is not None else None
    if got is None:
        got = frozenset(load_library().signals)
    return got


class GeneratedRules:
    """The per-signal rule template of a rules directory, loaded when a pack first places its
    rules (a clean run's packs come from the snapshot with them written out:
    :func:`written_out`); None where there is no template (the class packs then hold explicit
    rules only).  Called: the :class:`SignalRules`."""

    def __init__(self, path: Path, signals_doc: YamlDoc) -> None:
        self.path = path
        self.signals_doc = signals_doc
        self.loaded: list[SignalRules | None] = []

    def __call__(self) -> SignalRules | None:
        if not self.loaded:
            kinds = None
            if not self.signals_doc.trusted:
                from .kinds import discover

                kinds = set(discover())
            found = Path(self.path).is_file()
            self.loaded.append(
                load_signal_rules(self.path, self.signals_doc, kinds) if found else None
            )
        return self.loaded[0]


# ---------------------------------------------------------------------------------------------
# Citations: every source names publications from references.yaml
# ---------------------------------------------------------------------------------------------


def load_references(path: Path | str) -> References:
    """Load ``references.yaml``: the publications the rule data cites, by id."""
    doc = load_yaml(path)
    validate(doc, REFERENCES_SCHEMA)
    return references_from_data(doc.data)


def check_sources(
    doc: YamlDoc, refs: Mapping[str, Any] | None, where: Iterable[tuple[Any, ...]]
) -> None:
    """Every ``source`` at the JSON paths ``where`` (missing ones skipped) cites known
    references (:func:`references.check_source`); the first that does not is a
    ``file:line`` error.  ``refs`` None: not checked (a project's own pack); a ``trusted``
    document (the validated bundled snapshot) was checked when the snapshot was built."""
    if refs is None or doc.trusted:
        return
    for path in where:
        node: Any = doc.data
        for k in path:
            in_map = isinstance(node, Mapping) and k in node
            in_list = isinstance(node, list) and isinstance(k, int) and 0 <= k < len(node)
            if in_map or in_list:
                node = node[k]
            else:
                node = None
                break
        if node is None:
            continue
        why = check_source(str(node), refs)
        if why:
            raise doc.error(path, why)


def check_capacitor_sources(path: Path, refs: Mapping[str, Any]) -> None:
    """The sources of ``capacitors.yaml`` (mounting ESL, package ESLs, ESR curve) cite known
    references too (the file is loaded for use by ``analysis/capacitors.py``)."""
    if not Path(path).is_file():
        return
    doc = load_yaml(path)
    data = doc.data if isinstance(doc.data, Mapping) else {}
    where: list[tuple[Any, ...]] = [("mounting_esl_h", "source"), ("esr_by_value", "source")]
    where += [("packages", k, "source") for k in (data.get("packages") or {})]
    check_sources(doc, refs, where)


# ---------------------------------------------------------------------------------------------
# Rules of a class, with project overrides
# ---------------------------------------------------------------------------------------------


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def override_matches(rule_id: str, pattern: str) -> bool:
    """Whether a ``rules:`` override key applies to the rule ``rule_id``.

    A key is a glob on rule ids (``edge.laminate_df.*``), or the id a finding carries: checks
    report some findings under a sub-id of their rule (``edge.material_consistency.kicad_default``),
    and users copy the id from the report.  Params and severity belong to the rule, so a sub-id
    selects its rule (one more dot-separated word after the rule's id)."""
    if fnmatch.fnmatchcase(rule_id, pattern):
        return True
    return pattern.startswith(rule_id + ".") and "." not in pattern[len(rule_id) + 1 :]


def _override_note(
    r: Rule, over: Mapping[str, Any], doc: YamlDoc | None, where: tuple[Any, ...]
) -> tuple[str, str]:
    """The ``why`` and ``source`` of a rule after a project override.

    A limit the project changed is the project's limit: leaving the pack's source on it would
    tell JSON, SARIF and ``accel-drc rules`` readers that the cited article or datasheet says a number it
    never said.  So when params change (or a why is given) the source names the config line and
    the source it overrides, unless the override gives its own source."""
    changed = bool(over.get("params")) and _merge(r.params, over["params"]) != r.params
    if not changed and "why" not in over and "source" not in over:
        return r.why, r.source
    here = "project config"
    if doc is not None:
        line = doc.line_of(where)
        here = Path(doc.path).name + (f":{line}" if line is not None else "")
    source = over.get("source") or f"{here} (overrides {r.source})"
    if "why" in over:
        why = str(over["why"])
    elif changed:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(over["params"].items()))
        why = f"Limit set by the project ({here}: {shown}), not by the pack. Pack rule: {r.why}"
    else:
        why = r.why
    return why, source


def rules_for_class(
    lib: Library,
    board_class: str,
    extra_packs: Sequence[ClassPack] = (),
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    override_doc: YamlDoc | None = None,
    override_base: Sequence[Any] = ("rules",),
    loss_budgets: Mapping[str, float] | None = None,
) -> tuple[list[Rule], list[str]]:
    """The rules that apply to ``board_class``: its pack, the extra packs that apply to it, then
    the project's overrides (``{rule-id glob or finding id: {severity, params, enabled, why,
    source}}``) in file order (see :func:`override_matches`).

    A declaration needs no pack (:func:`declared_rules`): ``loss_budgets`` (the config's
    ``loss: budgets_db:``) and an override naming a per-signal rule the packs lack
    (``edge.impedance.eth25g: {params: {zdiff_ohm: 100, tol_pct: 10}}``) each add that rule.

    Returns the rules and the names of the packs used.  An override that matches no rule of any
    class is a config error (a typo would otherwise silently change nothing).  An overridden
    limit's ``why`` and ``source`` say it came from the config (:func:`_override_note`).
    """
    pack = lib.packs[board_class]
    rules = list(pack.rules)
    used = [pack.name]
    declared = declared_rules(lib, board_class, rules, overrides or {}, loss_budgets or {})
    for extra in extra_packs:
        if board_class in extra.applies_to:
            have = {r.id for r in rules}
            for r in extra.rules:
                if r.id in have:
                    raise InputError(
                        extra.file,
                        f"rule id {r.id!r} is already defined (change it with an override under "
                        "rules: in accel-drc.yaml instead)",
                    )
            rules.extend(extra.rules)
            used.append(extra.name)
    have = {r.id for r in rules}
    rules += [r for r in declared if r.id not in have]
    if overrides:
        all_ids = [r.id for p in (*lib.packs.values(), *extra_packs) for r in p.rules]
        for glob, over in overrides.items():
            where = (*override_base, glob)
            if not any(override_matches(i, glob) for i in all_ids) and not _declarable(lib, glob):
                msg = f"rule override {glob!r} matches no rule (see `accel-drc rules`)"
                if override_doc is not None:
                    raise override_doc.error(where, msg)
                raise InputError("<config>", msg)
            new = []
            for r in rules:
                if not override_matches(r.id, glob):
                    new.append(r)
                    continue
                if over.get("enabled") is False:
                    continue
                params = _merge(r.params, over.get("params", {}))
                if override_doc is not None:
                    check_params(override_doc, (*where, "params"), r.check, params, lib.foils)
                why, source = _override_note(r, over, override_doc, where)
                new.append(
                    Rule(
                        id=r.id,
                        check=r.check,
                        severity=Severity(over.get("severity", r.severity.value)),
                        params=params,
                        why=why,
                        source=source,
                        pack=r.pack,
                        signal=r.signal,
                        title=r.title,
                    )
                )
            rules = new
    return rules, used


#: the pseudo-pack of the rules a project's declaration adds (:func:`declared_rules`)
DECLARED_PACK = "accel-drc.yaml"


def _per_signal_kinds(lib: Library) -> set[str]:
    """Check kinds the packs apply per signal type (impedance, via_stub, insertion_loss, …)."""
    return {r.check for p in lib.packs.values() for r in p.rules if r.signal}


def _declarable(lib: Library, glob: str) -> tuple[str, str, str] | None:
    """(class glob, kind, signal id) when the override key ``glob`` names a per-signal rule
    (``edge.impedance.eth25g``, ``*.via_stub.pcie4``) of a signal type of rules/signals.yaml
    for some class: such a rule is the project's to declare even where no pack has it."""
    parts = glob.split(".")
    if len(parts) != 3:
        return None
    cls, kind, sid = parts
    if kind not in _per_signal_kinds(lib) or sid not in lib.signals:
        return None
    if not any(fnmatch.fnmatchcase(c, cls) for c in BOARD_CLASSES):
        return None
    return cls, kind, sid


def declared_rules(
    lib: Library,
    board_class: str,
    rules: Sequence[Rule],
    overrides: Mapping[str, Mapping[str, Any]],
    loss_budgets: Mapping[str, float],
) -> list[Rule]:
    """The rules the project's declarations add to ``board_class`` where its pack has none, so
    a declaration works without writing a pack (issue 28):

    * ``loss: budgets_db: {SIGNAL: dB}``: the insertion-loss rule of that signal type;
    * ``rules: {CLASS.KIND.SIGNAL: {params: …}}`` naming a per-signal rule no pack has: that
      rule, with only the declared params (the kind's schema then requires what it needs, e.g.
      ``zdiff_ohm`` and ``tol_pct`` for an impedance target).

    Their pack is ``accel-drc.yaml``; their source says the project declared the limit."""
    out: list[Rule] = []
    have = {(r.check, r.signal) for r in rules}
    severity = {r.check: r.severity for r in reversed(rules)}

    def add(kind: str, sid: str, params: Mapping[str, Any], what: str) -> None:
        if (kind, sid) in have:
            return
        have.add((kind, sid))
        name = lib.signals[sid].name if sid in lib.signals else sid
        out.append(
            Rule(
                id=f"{board_class}.{kind}.{sid}",
                check=kind,
                severity=severity.get(kind, Severity.ERROR),
                params=dict(params),
                why=f"Declared by the project ({what}): no rule pack holds a {kind} rule for "
                f"{name}.",
                source=f"{DECLARED_PACK} {what} (the project's declaration)",
                pack=DECLARED_PACK,
                signal=sid,
            )
        )

    for sid, budget in loss_budgets.items():
        if sid in lib.signals:
            add("insertion_loss", sid, {"budget_db": float(budget)}, f"loss: budgets_db: {sid}")
    for glob in overrides:
        got = _declarable(lib, glob)
        if got is not None and fnmatch.fnmatchcase(board_class, got[0]):
            add(got[1], got[2], {}, f"rules: {glob}")
    return out


def range_score(value: float, ranges: Sequence[Mapping[str, Any]], scale: float) -> float:
    """How well ``value`` fits overlapping ranges: the best weight, decaying with the distance
    outside a range (e-folding length ``scale``), so ranges are evidence, never a hard cut."""
    best = 0.0
    for r in ranges:
        lo, hi, w = float(r["min"]), float(r["max"]), float(r["weight"])
        d = lo - value if value < lo else (value - hi if value > hi else 0.0)
        best = max(best, w * math.exp(-d / scale))
    return best
