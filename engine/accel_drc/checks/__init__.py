"""Check kinds.  A check is a plain function ``(ctx, rule) -> CheckOutcome`` registered under
its kind name; the numbers it compares against come from ``rule.params`` (YAML), never from code.

Adding a kind of check = one module here with one ``@register("kind")`` function, plus the
schema of its params in ``packs.py``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..config import ProjectConfig, as_config
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

REGISTRY: dict[str, CheckFn] = {}

#: modules that register check kinds (imported lazily by :func:`get`)
_MODULES = (
    "layer_count",
    "tg",
    "copper_weight",
    "laminate_df",
    "foil",
    "impedance",
    "via_stub",
    "pdn_impedance",
    "material_consistency",  # stack-up values that contradict the named laminate
    "open_channel",  # a high-speed net whose copper does not join its pads
    "ir_drop",  # DC drop of a declared rail (analysis/irdrop.py)
    "current_density",  # where that rail's current crowds (planes, vias)
    "insertion_loss",  # channel loss at Nyquist vs the board's budget
)


def register(kind: str) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        REGISTRY[kind] = fn
        return fn

    return deco


def load_all() -> dict[str, CheckFn]:
    """Import every check module that exists (so the registry is complete)."""
    for name in _MODULES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a kind not built yet
            if exc.name != f"{__name__}.{name}":
                raise
    return REGISTRY
