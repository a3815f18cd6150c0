"""``python -m accel_drc_kicad inspect --json`` / ``run``: the plugin's work from a terminal.

``inspect`` prints exactly what ``accel-drc inspect`` prints for a board file, but for the board
open in KiCad (socket from ``KICAD_API_SOCKET``, else KiCad's default), which is how the tests
prove the live reader and the file reader agree.  ``run`` is the toolbar button without KiCad's
plugin launcher (handy when the button does nothing: its log is printed too).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict


def _inspect(args: argparse.Namespace) -> int:
    from accel_drc.inspection import inspect_document, render_text

    from .connection import board_path, connect, open_board
    from .live_reader import read_live

    kicad = connect()
    board = open_board(kicad)
    live = read_live(kicad, board, stackup=args.stackup)
    # exactly what ``accel-drc inspect`` does with a board file (accel_drc.cli.run_inspect)
    config = None
    if args.detail or args.config:
        from accel_drc.config import load_config

        config = load_config(args.config, board_path(board) or None)
    doc = inspect_document(
        live, details=list(args.detail), config=config, board_class=args.board_class
    )
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(doc))
    return 0


def _run(args: argparse.Namespace) -> int:
    from .action import run, use_shipped_dataclass_code

    use_shipped_dataclass_code()

    result = run(open_browser=not args.no_browser)
    json.dump(asdict(result), sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0 if result.ok or result.ignored else 1


def _clear(args: argparse.Namespace) -> int:
    from .connection import connect, open_board
    from .markers import clear_all

    removed = clear_all(open_board(connect()))
    print(f"accel-drc: removed {removed} marker item(s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m accel_drc_kicad")
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("inspect", help="inspect the board open in KiCad")
    i.add_argument("--json", action="store_true")
    i.add_argument("--detail", action="append", choices=("vias", "pairs", "rails"), default=[])
    i.add_argument("--config", metavar="FILE")
    i.add_argument(
        "--class", dest="board_class", choices=("training", "inference", "edge", "general")
    )
    i.add_argument(
        "--stackup",
        choices=("auto", "api", "file", "string"),
        default="auto",
        help="where the stack-up comes from (see live_reader)",
    )
    r = sub.add_parser("run", help="what the toolbar button does; prints the result as JSON")
    r.add_argument("--no-browser", action="store_true")
    sub.add_parser("clear", help="remove the markers earlier runs put on the board")
    args = p.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="accel-drc-kicad: %(message)s",
    )
    from .connection import LiveError

    try:
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "clear":
            return _clear(args)
        return _run(args)
    except LiveError as exc:
        print(f"accel-drc: {exc}", file=sys.stderr)
        return 3
    except Exception as exc:  # an AccelDrcError from the engine, or a bug
        code = getattr(exc, "exit_code", 2)
        print(f"accel-drc: {type(exc).__name__}: {exc}", file=sys.stderr)
        if args.verbose:
            raise
        return code


if __name__ == "__main__":
    sys.exit(main())
