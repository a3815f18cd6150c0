"""Check kinds: the registry.  A check kind is ONE module ``checks/<kind>.py``; the registry
discovers the modules, so adding a kind touches that module and the packs that use it, nothing
else (``docs/architecture.md``, "Adding a check kind").

A check module declares:

* a docstring: a one-line summary, then the sections ``What it checks:``, ``Why:``,
  ``Parameters:``, ``Cannot verify when:`` and ``Example:`` (a header line each, the text
  indented under it); ``accel-drc rules --format markdown`` and ``docs/rules.md`` are generated
  from them;
* ``KIND``: the kind name packs use (``check: KIND``);
* ``PARAMS``: the JSON schema (draft 7) of a rule's ``params`` (validated at pack load, after
  the project's overrides too);
* the check, ``(ctx, rule) -> CheckOutcome``, registered with ``@register(KIND)``: it compares
  the board against the numbers in ``rule.params`` (YAML), never against numbers in code;
* optionally ``extras(analysis, rules)``: report data of the kind (plot rows) stored in
  ``result.extras[EXTRAS_KEY]`` (``EXTRAS_KEY`` defaults to ``KIND``).

Discovered: every module of this package whose name does not start with ``_`` (``_common`` is a
helper), then every module named by an entry point of the group ``accel_drc.checks`` (a plugin
package adds kinds without editing this one; ``docs/architecture.md``).  A rule naming a kind no
module declares is an error at pack load (``file:line``, exit 3), never a silent skip.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

from ..config import ProjectConfig, as_config
from ..errors import InputError
from ..results import Finding, Rule

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..model import Board

log = logging.getLogger(__name__)

#: the entry-point group a plugin package names its check modules in
ENTRY_POINT_GROUP = "accel_drc.checks"

#: the docstring sections every check module has, in order (header text -> key)
SECTIONS = (
    ("What it checks", "what"),
    ("Why", "why"),
    ("Parameters", "parameters"),
    ("Cannot verify when", "cannot_verify"),
    ("Example", "example"),
)


@dataclass
class CheckContext:
    """What a check may look at: the board, the shared analysis, the project config, the class."""

    board: Board
    analysis: Analysis
    board_class: str
    config: ProjectConfig = field(default_factory=ProjectConfig)
    #: the caller needs only which findings are violations and what identifies them (rule, net,
    #: layer, pos, items: the pipeline's re-run of a rule under another class's limits); a
    #: check may then skip messages, evidence and remedies.  Ignoring it is always correct.
    verdicts_only: bool = False

    def __post_init__(self) -> None:
        # tests and callers that build a context by hand may pass already-valid config data
        if not isinstance(self.config, ProjectConfig):
            self.config = as_config(self.config)


@dataclass
class CheckOutcome:
    """Findings plus how many items the rule examined (a clean rule that examined nothing is
    reported differently from one that examined 400 nets and found them all fine)."""

    findings: list[Finding] = field(default_factory=list)
    checked: int = 0
    #: net indexes the rule really looked at, for the coverage report.  None = not said: the
    #: pipeline then takes every net of ``rule.signal`` (a per-signal rule examines them all).
    examined_nets: frozenset[int] | None = None
    #: net index -> what the rule looked at on that net and deliberately did not judge, and why
    #: (e.g. an impedance breakout: "F.Cu: breakout, 0.24 mm coupled < 1.54 mm"), for coverage
    not_judged: dict[int, list[str]] = field(default_factory=dict)


CheckFn = Callable[[CheckContext, Rule], CheckOutcome]
ExtrasFn = Callable[[Any, "list[Rule]"], Any]

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
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"{__name__}.{info.name}"))
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
