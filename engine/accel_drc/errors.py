"""Errors a user can act on.  The CLI turns them into one line on stderr and an exit code that
follows kicad-cli (1 usage, 3 bad input), never a traceback."""

from __future__ import annotations

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_BAD_INPUT = 3
EXIT_VIOLATIONS = 5


class AccelDrcError(Exception):
    """Base class: ``str(err)`` is the complete message shown to the user."""

    exit_code = EXIT_BAD_INPUT


class InputError(AccelDrcError):
    """A board, pack or config that cannot be read.  Names the file and, where it applies, the
    line (1-based) or byte offset."""

    def __init__(
        self,
        path: str,
        message: str,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.offset = offset
        where = path
        if line is not None:
            where += f":{line}"
        elif offset is not None:
            where += f": at byte {offset}"
        super().__init__(f"{where}: {message}")


class UsageError(AccelDrcError):
    """Bad command-line arguments (exit 1)."""

    exit_code = EXIT_USAGE
