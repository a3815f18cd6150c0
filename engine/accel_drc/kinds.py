"""The registry of check kinds: which kinds exist, their params schemas and their documentation.

It sits on the rule-data floor (``docs/architecture.md``, "Floors"), below the analysis and the
checks, because the rule data needs it: the pack loader (:mod:`accel_drc.packs`) validates a
rule's ``check:`` and ``params`` against it, and the rule snapshot (:mod:`accel_drc.bundled`)
keys itself on the kinds' ``PARAMS``.  It finds the check modules *by name*: every module of the
package :data:`CHECKS_PACKAGE` whose name does not start with ``_``, then every module named by
an entry point of :data:`ENTRY_POINT_GROUP` (a plugin package adds kinds without editing this
one), so it imports no check module by an import statement, and the floors stay one-way.  What a
check may look at (``CheckContext``) and returns (``CheckOutcome``) live with the checks, in
:mod:`accel_drc.checks`, which re-exports everything here.

The check-kind contract (a module ``checks/<kind>.py``):

* a docstring: a one-line summary, then the sections ``What it checks:``, ``Why:``,
  ``Parameters:``, ``Cannot verify when:`` and ``Example:`` (a header line each, the text
  indented under it); ``accel-drc rules --format markdown`` and ``docs/rules.md`` are generated
  from them;
* ``KIND``: the kind name packs use (``check: KIND``);
* ``PARAMS``: the JSON schema (draft 7) of a rule's ``params`` (validated at pack load, after
  the project's overrides too);
* the check, ``(ctx, rule) -> CheckOutcome``, registered with ``@register(KIND)``;
* optionally ``extras(analysis, rules)``: report data of the kind (plot rows) stored in
  ``result.extras[EXTRAS_KEY]`` (``EXTRAS_KEY`` defaults to ``KIND``);
* optionally ``NEEDS``: the costly facts of ``Analysis`` it reads, directly or through an
  analysis (``("via_stubs",)``; the names in ``Analysis.PREFETCHABLE`` and ``irdrop``): the
  pipeline computes them ahead on another core when a pack uses the kind, and runs the kind's
  rules after those that need nothing still being computed.

A rule naming a kind no module declares is an error at pack load (``file:line``, exit 3),
never a silent skip.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from .errors import InputError

log = logging.getLogger(__name__)

#: the entry-point group a plugin package names its check modules in
ENTRY_POINT_GROUP = "accel_drc.checks"

#: the package whose modules are the built-in check kinds (found by name, never imported here
#: by an import statement: it sits floors above this module)
CHECKS_PACKAGE = "accel_drc.checks"

#: the docstring sections every check module has, in order (header text -> key)
SECTIONS = (
    ("What it checks", "what"),
    ("Why", "why"),
    ("Parameters", "parameters"),
    ("Cannot verify when", "cannot_verify"),
    ("Example", "example"),
)


#: a check: ``(ctx: checks.CheckContext, rule: Rule) -> checks.CheckOutcome``
CheckFn = Callable[..., Any]
#: report data of a kind: ``(analysis, rules: list[Rule]) -> Any``
ExtrasFn = Callable[[Any, Any], Any]

#: kind -> check function, filled by :func:`register` as the modules are imported
REGISTRY: dict[str, CheckFn] = {}


def register(kind: str) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated function as the check of ``kind`` (the module's ``KIND``)."""

    def deco(fn: CheckFn) -> CheckFn:
        REGISTRY[kind] = fn
        return fn

    return deco


@dataclass(frozen=True)
class CheckKind:
    """One discovered check kind: what the registry, the pack loader and the docs know of it."""

    kind: str
    module: str  #: dotted module name
    check: CheckFn
    params: Mapping[str, Any]  #: JSON schema of a rule's params
    summary: str
    sections: Mapping[str, str]  #: "what", "why", "parameters", "cannot_verify", "example"
    extras: ExtrasFn | None = None
    extras_key: str = ""
    #: the facts of ``Analysis`` the kind reads, directly or through an analysis (``NEEDS``):
    #: the pipeline starts the costly ones early and runs the kind once they may be ready
    needs: tuple[str, ...] = ()


_HEADER = re.compile("^(" + "|".join(re.escape(h) for h, _ in SECTIONS) + r"):[ \t]*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary line and the sections of a check module's docstring (text dedented, blank
    lines inside a section kept as paragraph breaks).  Missing sections are absent from the
    dict; :func:`contract_problems` names them."""
    lines = (doc or "").strip("\n").splitlines()
    summary = lines[0].strip() if lines else ""
    keys = dict(SECTIONS)
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[1:]:
        m = _HEADER.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if m:
            current = sections.setdefault(keys[m.group(1)], [])
            if m.group(2):
                current.append(m.group(2))
            continue
        if current is not None:
            current.append(line)
    out = {}
    for key, body in sections.items():
        text = "\n".join(body)
        # dedent by the smallest indent of the non-blank lines
        indents = [len(x) - len(x.lstrip()) for x in body if x.strip()]
        cut = min(indents) if indents else 0
        text = "\n".join(x[cut:] if x.strip() else "" for x in body).strip()
        out[key] = text
    return summary, out


def contract_problems(module: ModuleType) -> list[str]:
    """What ``module`` lacks of the check-kind contract (empty: it follows it)."""
    problems = []
    kind = getattr(module, "KIND", None)
    if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
        problems.append("KIND (a lower-case name) is missing")
    if not isinstance(getattr(module, "PARAMS", None), Mapping):
        problems.append("PARAMS (the JSON schema of the rule params) is missing")
    if (
        isinstance(kind, str)
        and kind not in REGISTRY
        and not callable(getattr(module, "check", None))
    ):
        problems.append(f"no function is registered with @register({kind!r})")
    summary, sections = parse_docstring(module.__doc__)
    if not summary:
        problems.append("the docstring has no summary line")
    for header, key in SECTIONS:
        if not sections.get(key):
            problems.append(f"the docstring has no {header!r} section")
    return problems


_KINDS: dict[str, CheckKind] = {}


def _modules() -> list[ModuleType]:
    """The check modules: this package's (``_``-prefixed helpers skipped), then the entry
    points' of :data:`ENTRY_POINT_GROUP`."""
    mods = []
    package = importlib.import_module(CHECKS_PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"{CHECKS_PACKAGE}.{info.name}"))
    if not _may_have_plugins(ENTRY_POINT_GROUP):
        return mods
    from importlib import metadata

    eps: Any = metadata.entry_points()
    group = (
        eps.select(group=ENTRY_POINT_GROUP)
        if hasattr(eps, "select")
        else eps.get(ENTRY_POINT_GROUP, ())
    )
    for ep in sorted(group, key=lambda e: e.name):
        mod = ep.load()
        if not isinstance(mod, ModuleType):
            raise InputError(
                f"entry point {ep.name} = {ep.value}",
                f"names {type(mod).__name__}, not a check module (group {ENTRY_POINT_GROUP})",
            )
        mods.append(mod)
    return mods


def _may_have_plugins(group: str) -> bool:
    """Whether an installed distribution may declare entry points of ``group``: False only when
    no ``entry_points.txt`` of any ``*.dist-info``/``*.egg-info`` folder on ``sys.path``
    mentions the group (what :mod:`importlib.metadata` would read, found without it).

    Why: importing :mod:`importlib.metadata` (it pulls in ``email``, ``zipfile``, ``csv``) and
    parsing every distribution's metadata took longer than checking a small board, on every run,
    to find no plugin.  Anything this scan cannot see cheaply (a zip file on ``sys.path``, a
    custom finder that lists distributions) answers True, and the full lookup runs."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    needle = group.encode()
    for entry in sys.path:
        root = entry or "."
        try:
            names = os.listdir(root)
        except OSError:
            if os.path.isfile(root):
                return True  # a zip archive: importlib.metadata reads inside it
            continue
        for name in names:
            if not name.lower().endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(root, name, "entry_points.txt"), "rb") as fh:
                    if needle in fh.read():
                        return True
            except OSError:
                continue
    return False


def discover(refresh: bool = False) -> dict[str, CheckKind]:
    """Every check kind, by kind name (the built-in modules, then plugins).  Imported once;
    ``refresh`` looks again (a test that installs a plugin kind)."""
    if _KINDS and not refresh:
        return _KINDS
    found: dict[str, CheckKind] = {}
    for mod in _modules():
        where = getattr(mod, "__file__", None) or mod.__name__
        problems = contract_problems(mod)
        # a kind that cannot run (no KIND, no PARAMS, no check) is an error; a docstring short
        # of a section only makes the generated docs poorer: logged here, a test failure for
        # the built-in kinds (tests/test_registry.py)
        broken = [p for p in problems if not p.startswith("the docstring")]
        if broken:
            raise InputError(where, f"check module {mod.__name__}: " + "; ".join(broken))
        for p in problems:
            log.warning("check module %s: %s (docs/architecture.md)", mod.__name__, p)
        kind = mod.KIND
        if kind in found:
            raise InputError(
                where, f"check kind {kind!r} is declared twice ({found[kind].module} has it)"
            )
        summary, sections = parse_docstring(mod.__doc__)
        extras = getattr(mod, "extras", None)
        found[kind] = CheckKind(
            kind=kind,
            module=mod.__name__,
            check=REGISTRY.get(kind) or mod.check,
            params=mod.PARAMS,
            summary=summary,
            sections=sections,
            extras=extras if callable(extras) else None,
            extras_key=str(getattr(mod, "EXTRAS_KEY", kind)),
            needs=tuple(str(n) for n in getattr(mod, "NEEDS", ())),
        )
        REGISTRY[kind] = found[kind].check
    _KINDS.clear()
    _KINDS.update(found)
    return _KINDS


def kind_names() -> tuple[str, ...]:
    """The kind names a pack may use (``check:``), in discovery order."""
    return tuple(discover())


def param_schemas() -> dict[str, Mapping[str, Any]]:
    """kind -> JSON schema of its params."""
    return {k: v.params for k, v in discover().items()}


def load_all() -> dict[str, CheckFn]:
    """kind -> check function of every discovered kind: :data:`REGISTRY` itself, the table the
    pipeline calls through (a test may swap a function in it)."""
    discover()
    return REGISTRY
