"""The per-signal rules, generated: ``rules/signal_rules.yaml`` over ``rules/signals.yaml``.

A signal type's limits are facts of the signal (its Df, foil grade, stub length, impedance
target), so its rules are written once, in its ``signals.yaml`` entry, and every class pack gets
them from there (``<class>.<check>.<signal>``).  ``signal_rules.yaml`` says, per check kind:

* which signals get the rule: those whose fields in ``needs`` are set (``impedance`` needs
  ``zdiff_ohm``), less those matching ``unless``; a kind with ``default: false`` only for the
  signals whose entry names it under ``rules:``;
* the ``params``: a constant, or ``{field: F}`` (the signal's ``F``, left out when it is null);
* the ``severity``, the ``why`` and the ``source``: templates (``{name}``, ``{max_df}``,
  ``{baud_gbd:g}``: the signal's fields, a few values derived from them, the rule's params and
  the class pack's ``vars``), then ``when`` items that add text or change the severity where a
  condition holds (``{unconfirmed: max_df}``: the field is listed in the signal's
  ``unconfirmed``; ``{require_backdrill: true}``: a param's or field's value);
* ``styles``: named variants of the above a signal may pick (``style: interface``).

A signal's entry may say, per kind under ``rules:``: ``false`` (no such rule), ``true`` (the
rule of a ``default: false`` kind), or a mapping: ``style``, ``severity``, ``params`` (merged
over the template's), ``why`` / ``source`` (its own words, replacing the template's) and
``why_more`` / ``source_more`` (its own words appended to the template's).  A signal's own words
are not templates: a literal ``{`` stays one.

What differs by class stays in the class pack (:mod:`accel_drc.packs`), under ``signal_rules:``:
per kind, ``vars`` (template values: the class's backdrill row), ``params`` for every signal,
and ``signals: {SIGNAL: {params: …}}`` (backdrill required on NVLink in the training class).
A class pack's ``rules:`` list places the generated rules with ``- signal_rules: <block>``
items; each check kind of ``signal_rules.yaml`` names its ``block``, and a block lists its kinds'
rules kind by kind in the template's order, each over the signals in ``signals.yaml`` order (the
order reports list rules in).  A new signal type's rules therefore take their place without any
list to edit: adding a signal type is one entry in ``signals.yaml``.

Errors are ``file:line`` input errors (exit 3) at the template, the signal or the class pack
that made them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .hostile import TEMPLATE_FORMAT_SPEC
from .yamlsafe import YamlDoc, load_schema, load_yaml, validate

SIGNAL_RULES_SCHEMA: dict[str, Any] = load_schema("signal_rules")

#: the speed of light in vacuum (m/s), for the via-stub values derived from a signal's fields
_C = 299_792_458.0
#: the εr at which the via-stub template states the length the ratio allows (Bogatin's rule)
_DK_REFERENCE = 3.5

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}")
#: the keys a style or a template's base may set
_SPEC_KEYS = ("severity", "why", "source", "why_tail", "source_tail", "when")


@dataclass(frozen=True)
class SignalRules:
    """The template (``signal_rules.yaml``) and the raw signal entries it expands over."""

    doc: YamlDoc
    signals_doc: YamlDoc
    #: the rules made so far, by (kind, signal, the class pack's word on the kind): a rule no
    #: class changes is made once for the three class packs (a clean run's load of the packs)
    made: dict[tuple[str, str, str], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def checks(self) -> Mapping[str, Mapping[str, Any]]:
        return self.doc.data["checks"]

    @property
    def block_names(self) -> list[str]:
        """The blocks the kinds name, in the order the template first names them."""
        return list(dict.fromkeys(tpl["block"] for tpl in self.checks.values()))

    @property
    def signals(self) -> Mapping[str, Mapping[str, Any]]:
        return self.signals_doc.data["signals"]


def load_signal_rules(path: Any, signals_doc: YamlDoc, kinds: Iterable[str] | None) -> SignalRules:
    """Load ``signal_rules.yaml`` and check it against ``signals_doc`` (``kinds``: the known
    check kinds; None skips that test, for a trusted snapshot)."""
    doc = load_yaml(path)
    validate(doc, SIGNAL_RULES_SCHEMA)
    sr = SignalRules(doc, signals_doc)
    if doc.trusted and signals_doc.trusted:
        return sr
    known = set(kinds) if kinds is not None else None
    for kind, tpl in sr.checks.items():
        if known is not None and kind not in known:
            raise doc.error(("checks", kind), f"unknown check kind {kind!r}")
        for name in tpl.get("styles") or {}:
            _spec(tpl, name)
    for sid, entry in sr.signals.items():
        for kind in entry.get("not_modelled") or {}:
            where = ("signals", sid, "not_modelled", kind)
            if kind not in sr.checks:
                raise signals_doc.error(where, f"no template for check {kind!r} in {doc.path}")
            if _applies(sr.checks[kind], entry, (entry.get("rules") or {}).get(kind)):
                raise signals_doc.error(where, f"{sid} has a {kind} rule: it is modelled")
        for kind, own in (entry.get("rules") or {}).items():
            where = ("signals", sid, "rules", kind)
            if kind not in sr.checks:
                raise signals_doc.error(where, f"no template for check {kind!r} in {doc.path}")
            style = own.get("style") if isinstance(own, Mapping) else None
            if style is not None and style not in (sr.checks[kind].get("styles") or {}):
                raise signals_doc.error((*where, "style"), f"{kind} has no style {style!r}")
    return sr


def _spec(tpl: Mapping[str, Any], style: str | None) -> dict[str, Any]:
    """The template's base with ``style``'s keys over it."""
    spec = {k: tpl[k] for k in _SPEC_KEYS if k in tpl}
    if style is not None:
        spec.update(tpl["styles"][style])
    return spec


def _number(v: Any) -> str:
    """A value as the rule text writes it: ``100``, ``26.5625``, ``0.003``, ``16`` (not 16.0)."""
    if isinstance(v, bool) or not isinstance(v, float):
        return str(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def _derived(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Values the templates may use beyond the signal's fields: the symbol rate (``baud_gbd``,
    the data rate when not given) and, with a stub limit, the via-stub figures of Bogatin's
    rule: the εr at which the limit puts f_res at ``min_fres_ratio`` × Nyquist
    (``stub_dk_eff``), the length that ratio allows at εr 3.5 (``stub_mm_dk35``) and the ratio
    the limit reaches there (``stub_ratio_dk35``)."""
    out: dict[str, Any] = {"baud_gbd": entry.get("baud_gbd") or entry.get("data_rate_gbps")}
    stub, ratio, nyq = (
        entry.get("max_stub_mm"),
        entry.get("min_fres_ratio"),
        entry.get("nyquist_ghz"),
    )
    if stub and ratio and nyq:
        f = float(nyq) * 1e9
        out["stub_dk_eff"] = (_C / (4 * float(stub) * 1e-3 * float(ratio) * f)) ** 2
        out["stub_mm_dk35"] = _C / (4 * math.sqrt(_DK_REFERENCE) * float(ratio) * f) * 1e3
        out["stub_ratio_dk35"] = _C / (4 * float(stub) * 1e-3 * math.sqrt(_DK_REFERENCE) * f)
    return out


class _Expander:
    """Expands the template for one class pack."""

    def __init__(self, sr: SignalRules, pack: str, section: Mapping[str, Any], pack_doc: YamlDoc):
        self.sr = sr
        self.pack = pack
        self.section = section
        self.pack_doc = pack_doc
        #: per kind, what identifies this class's word on it (empty: the class says nothing)
        self.word = {k: repr(v) for k, v in section.items() if v}

    def fill(self, text: str, ctx: Mapping[str, Any], where: tuple[Any, ...], sid: str) -> str:
        """``text`` with every ``{name}`` / ``{name:fmt}`` replaced from ``ctx``."""

        def one(m: re.Match[str]) -> str:
            name, fmt = m.group(1), m.group(2)
            if name not in ctx or ctx[name] is None:
                raise self.sr.doc.error(
                    where,
                    f"{{{name}}}: signal {sid!r} has no {name} (and the class pack "
                    f"{self.pack!r} no such var)",
                )
            value = ctx[name]
            if fmt is None:
                return _number(value)
            if not TEMPLATE_FORMAT_SPEC.match(fmt):
                raise self.sr.doc.error(
                    where, f"{{{name}:{fmt}}}: format spec not supported (e.g. .3f, .1f, g)"
                )
            try:
                return format(value, fmt)
            except (TypeError, ValueError) as exc:
                raise self.sr.doc.error(where, f"{{{name}:{fmt}}}: {exc}") from None

        return _FIELD.sub(one, text)

    def rule(self, kind: str, sid: str) -> dict[str, Any] | None:
        """The rule of check ``kind`` for signal ``sid`` in this class (a pack rule's data), or
        None when the signal gets none; made once for the classes whose word on it is alike."""
        key = (kind, sid, self.word.get(kind, ""))
        made = self.sr.made
        if key not in made:
            tpl = self.sr.checks[kind]
            entry = self.sr.signals[sid]
            own = (entry.get("rules") or {}).get(kind)
            made[key] = None
            if _applies(tpl, entry, own):
                own = own if isinstance(own, Mapping) else {}
                made[key] = self._make(kind, sid, own, self.section.get(kind) or {})
        return made[key]

    def _make(
        self, kind: str, sid: str, own: Mapping[str, Any], cls: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The rule of ``kind`` for ``sid`` (which gets one): template, the signal's own word
        (``own``) and the class pack's (``cls``)."""
        tpl = self.sr.checks[kind]
        entry = self.sr.signals[sid]
        params: dict[str, Any] = {}
        for name, spec in (tpl.get("params") or {}).items():
            if isinstance(spec, Mapping):
                if entry.get(spec["field"]) is not None:
                    params[name] = entry[spec["field"]]
            else:
                params[name] = spec
        params.update(cls.get("params") or {})
        params.update(own.get("params") or {})
        params.update(((cls.get("signals") or {}).get(sid) or {}).get("params") or {})
        style = own.get("style")
        spec = _spec(tpl, style)
        base = ("checks", kind) if style is None else ("checks", kind, "styles", style)
        ctx = {**entry, **_derived(entry), **(cls.get("vars") or {}), **params, "id": sid}
        severity = own.get("severity", spec.get("severity"))
        texts: dict[str, list[str]] = {}
        for key in ("why", "source"):
            if key in own:
                parts = [str(own[key])]
            else:
                parts = [self.fill(str(spec.get(key, "")), ctx, (*base, key), sid)]
                parts.append(str(own.get(f"{key}_more", "")))
            if f"{key}_tail" in spec:
                parts.append(self.fill(str(spec[f"{key}_tail"]), ctx, (*base, f"{key}_tail"), sid))
            texts[key] = parts
        for i, item in enumerate(spec.get("when") or ()):
            if not _holds(item["if"], entry, ctx):
                continue
            if "severity" in item and "severity" not in own:
                severity = item["severity"]
            for key in ("why", "source"):
                if f"{key}_more" in item:
                    where = (*base, "when", i, f"{key}_more")
                    texts[key].append(self.fill(str(item[f"{key}_more"]), ctx, where, sid))
        return {
            "check": kind,
            "signal": sid,
            "severity": severity,
            "params": params,
            # a why reads as sentences (words joined by one space, as a pack's why is); a
            # source's parts bring their own separator ("; rate: ...")
            "why": " ".join(" ".join(texts["why"]).split()),
            "source": "".join(texts["source"]),
        }

    def blocks(self) -> dict[str, list[dict[str, Any]]]:
        """Every generated rule of this class, by block: kind by kind in the template's order,
        each over the signals in ``signals.yaml`` order (see the module docstring)."""
        out: dict[str, list[dict[str, Any]]] = {b: [] for b in self.sr.block_names}
        for kind, tpl in self.sr.checks.items():
            for sid in self.sr.signals:
                r = self.rule(kind, sid)
                if r is not None:
                    out[tpl["block"]].append(r)
        return out


def _applies(tpl: Mapping[str, Any], entry: Mapping[str, Any], own: Any) -> bool:
    """Whether a signal gets the rule of a template: not turned off by its entry (``false``;
    a ``default: false`` kind only when the entry names it), every field of ``needs`` set, no
    field at its ``unless`` value."""
    if own is False or (own is None and tpl.get("default") is False):
        return False
    if any(entry.get(f) is None for f in tpl.get("needs") or ()):
        return False
    return not any(entry.get(k) == v for k, v in (tpl.get("unless") or {}).items())


def _holds(cond: Mapping[str, Any], entry: Mapping[str, Any], ctx: Mapping[str, Any]) -> bool:
    """Whether every key of a ``when`` condition holds (``unconfirmed: F``: F is listed in the
    signal's ``unconfirmed``; any other key: that param's or field's value)."""
    for k, v in cond.items():
        if k == "unconfirmed":
            if v not in (entry.get("unconfirmed") or ()):
                return False
        elif ctx.get(k) != v:
            return False
    return True


def expand(
    sr: SignalRules, pack: str, section: Mapping[str, Any] | None, pack_doc: YamlDoc
) -> dict[str, list[dict[str, Any]]]:
    """The generated rules of the class pack ``pack`` (its ``signal_rules:`` ``section``), by
    block: rule data as a pack file writes it (``check``, ``signal``, ``severity``,
    ``params``, ``why``, ``source``)."""
    if section:
        for kind, cls in section.items():
            if kind not in sr.checks:
                raise pack_doc.error(("signal_rules", kind), f"no template for check {kind!r}")
            for sid in (cls or {}).get("signals") or {}:
                if sid not in sr.signals:
                    raise pack_doc.error(
                        ("signal_rules", kind, "signals", sid), f"unknown signal type {sid!r}"
                    )
    return _Expander(sr, pack, section or {}, pack_doc).blocks()
