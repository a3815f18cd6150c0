"""accel-drc: a design-rule checker for the circuit boards that carry AI accelerators.

The library API (docs/api.md)::

    import accel_drc

    result = accel_drc.check("board.kicad_pcb")  # or a Board, config=path|dict, board_class=
    for f in result.unwaived_errors():
        print(f.rule, f.message)

The names in ``__all__`` are the public API, kept compatible within a minor release line
(docs/api.md says what may change before 1.0).  They load on first use (module
``__getattr__``), so ``import accel_drc`` stays as fast as reading ``__version__``: the CLI,
the KiCad plugin and the pre-commit hook import this package before they know they need numpy.
"""

from __future__ import annotations

from .version import __version__

#: ``typing.TYPE_CHECKING`` without importing typing (a start-up cost): type checkers
#: treat any name ``TYPE_CHECKING`` as true, so they see the real names below
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .api import check, read_board
    from .errors import AccelDrcError, InputError, UsageError
    from .model import Board
    from .results import CheckResult, Finding, Severity, Status


#: public name -> the module that defines it (imported on first access)
_LAZY = {
    "check": "api",
    "read_board": "api",
    "CheckResult": "results",
    "Finding": "results",
    "Severity": "results",
    "Status": "results",
    "Board": "model",
    "AccelDrcError": "errors",
    "InputError": "errors",
    "UsageError": "errors",
}

#: the public API (docs/api.md): written out, so type checkers and linters see it
__all__ = [
    "__version__",
    "check",
    "read_board",
    "CheckResult",
    "Finding",
    "Severity",
    "Status",
    "Board",
    "AccelDrcError",
    "InputError",
    "UsageError",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562) and cache the name here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'accel_drc' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
