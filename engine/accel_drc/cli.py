"""``accel-drc check | inspect | rules | kicad install|uninstall``.

A thin shell over the library (like KiKit): argument parsing and exit codes live here, the work
lives in ``inspection``, ``pipeline`` and ``kicad_install``.  Exit codes follow kicad-cli:
0 clean, 1 usage, 3 bad input, 5 violations; 2 is an internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import logging
import sys

from . import __version__
from .errors import EXIT_USAGE, AccelDrcError
from .hostile import terminal

EXIT_INTERNAL = 2

CLASSES = ("training", "inference", "edge")

#: the example board shipped in the package (CC0: a Coral Edge TPU M.2 adapter, 2 layers)
EXAMPLE_BOARD = "coral-tpu-m2-adapter/M2.kicad_pcb"


def example_dir() -> str:
    """The folder of the bundled example boards (inside the installed package)."""
    from pathlib import Path

    return str(Path(__file__).resolve().parent / "examples")


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors; kicad-cli (and we) use 1."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="accel-drc",
        description="Design-rule checker for AI-accelerator boards (training, inference, edge).",
        epilog="examples: the bundled example boards (accel-drc check --example checks one):\n  "
        + example_dir(),
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keep the path on one line
    )
    p.add_argument("--version", action="version", version=f"accel-drc {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress and details")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="classify a board and check it against the rule packs")
    c.add_argument("board", nargs="?", help=".kicad_pcb or IPC-2581 .xml")
    c.add_argument(
        "--example",
        action="store_true",
        help=f"check the bundled example board ({EXAMPLE_BOARD})",
    )
    c.add_argument(
        "--config",
        metavar="FILE",
        help="project config (default: accel-drc.yaml beside the board; its regexes match the whole name)",
    )
    c.add_argument("--class", dest="board_class", choices=CLASSES, help="override the classifier")
    c.add_argument("--json", metavar="FILE", help="write the findings as JSON ('-' for stdout)")
    c.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML, one testcase per rule ('-' for stdout)"
    )
    c.add_argument(
        "--sarif", metavar="FILE", help="write SARIF 2.1.0 for code scanning ('-' for stdout)"
    )
    c.add_argument(
        "--html", metavar="FILE", help="write the self-contained HTML report ('-' for stdout)"
    )
    c.add_argument(
        "--markdown",
        metavar="FILE",
        help="write a Markdown summary, PR comment or CI job summary ('-' for stdout)",
    )
    c.add_argument(
        "--report-url",
        metavar="URL",
        help="the Markdown's link to the full report (default: --html; 'none': no link)",
    )
    c.add_argument(
        "--kicad-drc",
        action="store_true",
        help="also run KiCad's own DRC (kicad-cli) and report it here, the board's exclusions honoured",
    )
    c.add_argument(
        "--kicad-drc-parity",
        action="store_true",
        help="with --kicad-drc: also check schematic parity (the .kicad_sch beside the board)",
    )
    c.add_argument("--quiet", action="store_true", help="no summary on stdout")

    i = sub.add_parser("inspect", help="show what accel-drc reads from a board")
    i.add_argument("board", help=".kicad_pcb or IPC-2581 .xml")
    i.add_argument("--json", action="store_true", help="print a stable JSON document")
    i.add_argument(
        "--detail",
        action="append",
        choices=("vias", "pairs", "rails", "loss", "irdrop"),
        default=[],
        help="add per-item detail (repeatable)",
    )
    i.add_argument(
        "--config",
        metavar="FILE",
        help="project config (default: accel-drc.yaml beside the board; its regexes match the whole name)",
    )
    i.add_argument(
        "--class", dest="board_class", choices=CLASSES, help="board class for class defaults"
    )

    r = sub.add_parser("rules", help="list every rule with its limit, why and source")
    r.add_argument("--class", dest="board_class", choices=CLASSES, help="only this class's pack")
    r.add_argument("--config", metavar="FILE", help="project config (adds its overrides and packs)")
    r.add_argument("--json", action="store_true", help="print JSON")

    k = sub.add_parser("kicad", help="install the KiCad toolbar button")
    ksub = k.add_subparsers(dest="kicad_command", metavar="ACTION", parser_class=_Parser)
    ki = ksub.add_parser("install", help="install the IPC plugin where KiCad finds it")
    ki.add_argument("--kicad-version", default="9.0", choices=("9.0", "10.0"))
    ki.add_argument("--dest", metavar="DIR", help="plugins directory (default: KiCad's, per OS)")
    kp = ksub.add_parser("package", help="build a KiCad Plugin and Content Manager package (.zip)")
    kp.add_argument("out", metavar="OUT.zip", help="the package to write")
    kp.add_argument("--kicad-version", default="9.0", choices=("9.0", "10.0"), help="minimum KiCad")
    ku = ksub.add_parser("uninstall", help="remove the IPC plugin")
    ku.add_argument("--kicad-version", default="9.0", choices=("9.0", "10.0"))
    ku.add_argument("--dest", metavar="DIR", help="plugins directory (default: KiCad's, per OS)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="accel-drc: %(message)s",
    )
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "inspect":
            from .inspection import run_inspect

            return run_inspect(args)
        if args.command == "check":
            from .pipeline import run_check

            if args.example and args.board:
                parser.error("check: give a BOARD or --example, not both")
            if args.example:
                args.board = f"{example_dir()}/{EXAMPLE_BOARD}"
            elif not args.board:
                parser.error("check: a BOARD is required (or --example for the bundled one)")

            return run_check(args)
        if args.command == "rules":
            from .pipeline import run_rules

            return run_rules(args)
        if args.command == "kicad":
            if not args.kicad_command:
                print(
                    "accel-drc: kicad: name an action: install, uninstall or package "
                    "(accel-drc kicad --help)",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            if args.kicad_command == "package":
                from .kicad_package import run_package

                return run_package(args)
            from .kicad_install import run_kicad

            return run_kicad(args)
    except AccelDrcError as exc:
        print(f"accel-drc: {terminal(str(exc))}", file=sys.stderr)  # one line, no escapes
        return exc.exit_code
    except KeyboardInterrupt:
        print("accel-drc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not the user's fault: say so without a traceback
        logging.getLogger(__name__).debug("internal error", exc_info=True)
        print(
            f"accel-drc: internal error: {type(exc).__name__}: {exc} "
            "(run with -v for details; please report it)",
            file=sys.stderr,
        )
        if args.verbose:
            import traceback

            traceback.print_exc()
        return EXIT_INTERNAL
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
