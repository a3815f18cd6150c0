"""``accel-drc-hook``: the pre-commit entry point (``.pre-commit-hooks.yaml``).

pre-commit passes the staged files matching ``\\.kicad_pcb$`` after the hook's ``args``; ``accel-drc
check`` takes one board, so this runs it per board with the options given and returns the worst
exit code (a usage, input or internal error before violations, as the Action does).  Each board
prints its summary only when it does not pass cleanly, so a clean commit stays quiet.
"""

from __future__ import annotations

import contextlib
import io
import sys

from .cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    boards = [a for a in args if a.endswith(".kicad_pcb") and not a.startswith("-")]
    options = [a for a in args if a not in boards]
    worst = 0
    for board in boards:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = cli_main(["check", board, *options])
        if rc != 0 or "verdict: PASS" not in buf.getvalue():
            sys.stdout.write(buf.getvalue())
        if rc not in (0, 5):
            worst = rc
        elif rc == 5 and worst == 0:
            worst = 5
    return worst


if __name__ == "__main__":
    sys.exit(main())
