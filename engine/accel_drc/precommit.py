"""``accel-drc-hook``: the pre-commit entry point (``.pre-commit-hooks.yaml``).

pre-commit runs ``entry + args + filenames``: the hook's ``args`` first, then the staged files
matching ``\\.kicad_pcb$``, with no separator between them.  ``accel-drc check`` takes one board,
so this runs it per board with the options given and returns the worst exit code (a usage, input
or internal error before violations, as the Action does).  Each board prints its summary only
when it does not pass cleanly, so a clean commit stays quiet.

File names are data, never options: a staged file may be called ``--json=main.kicad_pcb`` or
``-rev2.kicad_pcb``.  So the boards are not told apart by how they look but by where they are and
what they are (:func:`split_args`), and each is handed to the CLI after ``--``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Sequence

from .cli import build_parser
from .cli import main as cli_main
from .errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATIONS

#: what pre-commit's ``files`` pattern selects (``.pre-commit-hooks.yaml``)
BOARD_SUFFIX = ".kicad_pcb"


def is_board(arg: str) -> bool:
    """``arg`` names an existing regular file ending in ``.kicad_pcb``: what pre-commit passes."""
    return arg.endswith(BOARD_SUFFIX) and os.path.isfile(arg)


def split_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(options, boards)``: the boards are the longest run of *trailing* arguments that are
    existing ``.kicad_pcb`` files (pre-commit puts the file names last); everything before them is
    the hook's ``args``.

    Why not by their look (``-`` first, ``.kicad_pcb`` last): a staged file named
    ``--json=main.kicad_pcb`` would be read as an option and write JSON over ``main.kicad_pcb``,
    and one named ``-rev2.kicad_pcb`` would be left unchecked.  An option whose value is itself an
    existing board (``--html x.kicad_pcb``) is a misconfiguration this reads as a board; the CLI
    then reports the flag without its value (exit 1), so nothing passes silently."""
    i = len(args)
    while i > 0 and is_board(args[i - 1]):
        i -= 1
    return list(args[:i]), list(args[i:])


def stray_positional(options: Sequence[str]) -> str | None:
    """The first argument among the hook's ``options`` that ``accel-drc check`` would read as its
    BOARD (a name that is not an existing ``.kicad_pcb`` file), or None.  Said up front in one
    line, instead of argparse's "unrecognized arguments" about the board after it."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            ns, _ = build_parser().parse_known_args(["check", *options])
        except SystemExit:
            return None  # a bad option: the check run reports it, with argparse's usage line
    return getattr(ns, "board", None)


def check_one(board: str, options: Sequence[str]) -> tuple[int, str]:
    """``accel-drc check OPTIONS -- BOARD`` in this process: (exit code, what it printed).  The
    ``--`` makes the board a board whatever its name; argparse's exit on a bad option becomes
    the exit code instead of ending the hook before the other boards."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            rc = cli_main(["check", *options, "--", board])
        except SystemExit as exc:
            rc = (
                exc.code
                if isinstance(exc.code, int)
                else (EXIT_OK if exc.code is None else EXIT_USAGE)
            )
    return rc, buf.getvalue()


def passed_cleanly(rc: int, output: str) -> bool:
    """Exit 0 and the verdict line says PASS (not NOT VERIFIED).  Only a line that *starts* with
    ``verdict:`` counts: a board named ``verdict: PASS.kicad_pcb`` appears in the first line."""
    return rc == EXIT_OK and any(line.startswith("verdict: PASS") for line in output.splitlines())


def worst_code(worst: int, rc: int) -> int:
    """The exit code of the hook so far, with one more board's: a usage, input or internal error
    beats violations (the gate did not run as asked), and violations beat a pass."""
    if rc not in (EXIT_OK, EXIT_VIOLATIONS):
        return rc
    if rc == EXIT_VIOLATIONS and worst == EXIT_OK:
        return EXIT_VIOLATIONS
    return worst


def main(argv: list[str] | None = None) -> int:
    """The ``accel-drc-hook`` console script: check each staged board (see the module doc)."""
    options, boards = split_args(list(sys.argv[1:] if argv is None else argv))
    if not boards:
        return EXIT_OK  # nothing staged (pre-commit runs a hook with no files only with always_run)
    stray = stray_positional(options)
    if stray is not None:
        print(
            f"accel-drc-hook: {stray!r} is not an existing {BOARD_SUFFIX} file: the hook's args "
            "must be options (pre-commit puts the staged boards after them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    worst = EXIT_OK
    for board in boards:
        rc, output = check_one(board, options)
        if not passed_cleanly(rc, output):
            sys.stdout.write(output)
        worst = worst_code(worst, rc)
    return worst


if __name__ == "__main__":
    sys.exit(main())
