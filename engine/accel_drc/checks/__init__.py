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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..config import ProjectConfig, as_config
from ..kinds import (  # noqa: F401  (the registry, re-exported: check modules and tests use it here)
    _KINDS,
    CHECKS_PACKAGE,
    ENTRY_POINT_GROUP,
    REGISTRY,
    SECTIONS,
    CheckKind,
    ExtrasFn,
    _may_have_plugins,
    contract_problems,
    discover,
    kind_names,
    load_all,
    param_schemas,
    parse_docstring,
    register,
)
from ..results import Finding, Rule

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..model import Board


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
    #: the rules that apply to this board in ``board_class``: its pack with the project's
    #: ``rules:`` overrides, as the pipeline runs them (:meth:`rule_for` reads a sibling signal's
    #: limits here, so "fails pcie4, passes pcie3" follows an override of pcie3's rule); empty
    #: in a context built by hand: the shipped class pack's
    rules: tuple[Rule, ...] = ()

    def __post_init__(self) -> None:
        # tests and callers that build a context by hand may pass already-valid config data
        if not isinstance(self.config, ProjectConfig):
            self.config = as_config(self.config)

    def rule_for(self, check: str, signal: str) -> Rule | None:
        """The rule of kind ``check`` for the signal type ``signal`` that applies to this board
        (:attr:`rules`; without them the shipped class pack's), or None where there is none."""
        rules = self.rules
        if not rules:
            try:
                pack = self.analysis.library.packs.get(self.board_class)
            except Exception:  # noqa: BLE001 - no library (stand-in analyses)
                pack = None
            rules = pack.rules if pack is not None else ()
        return next((r for r in rules if r.check == check and r.signal == signal), None)


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


#: what a check is, typed with this floor's context and outcome (the registry's ``CheckFn``
#: says ``Callable[..., Any]``: it sits below the checks)
CheckFn = Callable[[CheckContext, Rule], CheckOutcome]
