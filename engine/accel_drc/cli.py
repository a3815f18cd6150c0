"""``accel-drc check | inspect | rules | kicad install|uninstall``.

A thin shell over the library (like KiKit): argument parsing, the command handlers (the only
code that prints) and exit codes live here; the work lives in ``inspection``, ``pipeline``,
``docgen`` and ``kicad_install``, which return data.  The report flags of ``check`` come from the
writers registry (``report/writers.py``).  Exit codes follow kicad-cli:
0 clean, 1 usage, 3 bad input, 5 violations; 2 is an internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from typing import Any

from .errors import EXIT_OK, EXIT_USAGE, AccelDrcError, UsageError
from .hostile import terminal
from .version import __version__

log = logging.getLogger(__name__)

EXIT_INTERNAL = 2

CLASSES = ("training", "inference", "edge", "general")

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
    from .report.writers import WRITERS

    for w in WRITERS.values():
        c.add_argument(f"--{w.name}", metavar="FILE", help=w.help)
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
    c.add_argument(
        "--baseline",
        metavar="FILE",
        help="an earlier `check --json` report of this board: mark each finding new, changed or "
        "unchanged and list the fixed ones (identity: rule, net/pair/layer/rail, position)",
    )
    c.add_argument(
        "--fail-on",
        choices=("error", "new", "cannot-verify"),
        default="error",
        help="exit 5 on any unwaived error violation (error, the default), only on those "
        "--baseline does not hold (new), or also on an error-severity result that could not be "
        "verified (cannot-verify: the gate of a team that wants NOT VERIFIED to fail)",
    )
    c.add_argument("--quiet", action="store_true", help="no summary on stdout")

    n = sub.add_parser(
        "init",
        help="write a starter accel-drc.yaml for a board: everything to declare, commented out",
    )
    n.add_argument("board", help=".kicad_pcb or IPC-2581 .xml")
    n.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="where to write it (default: accel-drc.yaml beside the board, where check finds "
        "it; '-': stdout)",
    )
    n.add_argument("--force", action="store_true", help="replace an existing file")
    n.add_argument(
        "--class", dest="board_class", choices=CLASSES, help="check the board as this class"
    )

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
    r.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        help="text (default), json, or markdown: the generated reference of the check kinds "
        "(their docstrings and params) and of every rule (id, severity, limit, why, source)",
    )
    r.add_argument("--json", action="store_true", help="print JSON (same as --format json)")
    r.add_argument(
        "--write",
        metavar="FILE",
        help="with --format markdown: replace the generated section of FILE (between "
        "'<!-- generated: check kinds' and '<!-- /generated -->'), e.g. docs/rules.md",
    )

    k = sub.add_parser("kicad", help="install the KiCad toolbar button")
    ksub = k.add_subparsers(dest="kicad_command", metavar="ACTION", parser_class=_Parser)
    ki = ksub.add_parser("install", help="install the IPC plugin where KiCad finds it")
    ki.add_argument(
        "--kicad-version",
        default=None,
        choices=("9.0", "10.0"),
        help="default: the newest KiCad found on this machine (10.0 when none is)",
    )
    ki.add_argument("--dest", metavar="DIR", help="plugins directory (default: KiCad's, per OS)")
    kp = ksub.add_parser("package", help="build a KiCad Plugin and Content Manager package (.zip)")
    kp.add_argument("out", metavar="OUT.zip", help="the package to write")
    kp.add_argument("--kicad-version", default="9.0", choices=("9.0", "10.0"), help="minimum KiCad")
    ku = ksub.add_parser("uninstall", help="remove the IPC plugin")
    ku.add_argument(
        "--kicad-version",
        default=None,
        choices=("9.0", "10.0"),
        help="default: the newest KiCad found on this machine (10.0 when none is)",
    )
    ku.add_argument("--dest", metavar="DIR", help="plugins directory (default: KiCad's, per OS)")

    kb = sub.add_parser(
        "kibot", help="install the KiBot preflight and output (docs/integrations.md)"
    )
    kbsub = kb.add_subparsers(dest="kibot_command", metavar="ACTION", parser_class=_Parser)
    kbi = kbsub.add_parser("install", help="copy the plug-ins where KiBot finds them")
    kbi.add_argument(
        "--dest", metavar="DIR", help="plug-ins folder (default: ~/.config/kibot/plugins)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """The command line.  Cyclic garbage collection is off while the modules, the rule data and
    the board load (tens of thousands of long-lived objects: collections that free nothing); ``check`` then freezes what it loaded out of later collections
    (:func:`_loaded`)."""
    from . import dccode
    from .concurrency import one_blas_thread

    dccode.install()  # this process is ours: the shipped dataclass methods (accel_drc.dccode)
    one_blas_thread()  # ... and its BLAS: one thread (set before numpy is imported)
    was = gc.isenabled()
    gc.disable()
    try:
        return _main(argv)
    finally:
        if was:
            gc.enable()


#: boards from this size on (bytes) are read and checked on several threads (see _few_arenas)
MANY_THREADS_BYTES = 8 << 20


def _few_arenas(path: str) -> None:
    """Cap glibc's malloc at two arenas before a big board starts the worker threads.

    glibc gives each new thread its own arena (up to 8 per core); our reader and geometry
    threads allocate large temporaries that then stay spread over many arenas, so more pages
    are faulted in and kept.  Two arenas (one per core of the machines we measure on) cut a big
    board's system time, page faults and peak memory (docs/check-speed.md).  Small boards skip
    it (importing ctypes is a start-up cost they would not earn back); anything but glibc
    ignores it."""
    try:
        if os.path.getsize(path) < MANY_THREADS_BYTES or not sys.platform.startswith("linux"):
            return
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-8, 2)  # M_ARENA_MAX (malloc.h); musl's mallopt is a no-op
    except (OSError, AttributeError):
        return


def _loaded() -> None:
    """Start-up is over: move every object alive now (modules, rule data, board) to the
    permanent generation, so the collections the checks trigger never scan them again, and
    collect again from here on.  :func:`run_check` unfreezes them when it returns."""
    gc.freeze()
    gc.enable()


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="accel-drc: %(message)s",
    )
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command != "check":
        gc.enable()  # only check's start-up is tuned (issue 18)
    try:
        if args.command == "inspect":
            return run_inspect(args)
        if args.command == "check":
            if args.example and args.board:
                parser.error("check: give a BOARD or --example, not both")
            if args.example:
                args.board = f"{example_dir()}/{EXAMPLE_BOARD}"
            elif not args.board:
                parser.error("check: a BOARD is required (or --example for the bundled one)")

            return run_check(args)
        if args.command == "rules":
            return run_rules(args)
        if args.command == "init":
            return run_init(args)
        if args.command == "kibot":
            return run_kibot(args)
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


def run_check(args: Any) -> int:
    """The ``accel-drc check`` command."""
    frozen = gc.get_freeze_count()
    try:
        return _run_check(args)
    finally:
        if gc.get_freeze_count() > frozen:
            gc.unfreeze()  # the process may go on (tests): its objects collect again


def _run_check(args: Any) -> int:
    from .config import load_config
    from .packs import load_library
    from .pipeline import EXIT_INTERNAL as CRASHED
    from .pipeline import check_board, exit_code
    from .readers import read_board
    from .report.text import summary
    from .report.writers import WRITERS, guard_outputs, input_files, prepare_outputs, write_outputs

    outputs = {k: getattr(args, k, None) for k in WRITERS}
    prepare_outputs(*outputs.values())
    files = dict(outputs)  # the output files, for the guards and the stdout test
    outputs["report_url"] = getattr(args, "report_url", None)
    guard_outputs(files, [args.board, getattr(args, "config", None) or ""])
    old = _baseline(args)  # a bad baseline fails now, before the long check
    tty = sys.stderr.isatty()
    if tty:
        print(f"accel-drc: reading {args.board} …", file=sys.stderr, end="\r", flush=True)
    kicad = None
    if getattr(args, "kicad_drc", False):  # no kicad-cli is a usage error, before any work
        from . import kicad_drc

        kicad = kicad_drc.start(args.board, getattr(args, "kicad_drc_parity", False))
    try:
        _few_arenas(args.board)
        board = read_board(args.board)
        lib = load_library()
        cfg = load_config(getattr(args, "config", None), args.board, lib)
        guard_outputs(files, input_files(args.board, cfg, board))
    except BaseException:  # the board or config is bad: no orphaned kicad-cli
        if kicad is not None:
            kicad.cancel()
        raise
    _loaded()
    if outputs.get("html"):  # the report's board view: on another core during the check
        from .report.html import prepare

        prepare(board)

    def progress(k: int, n: int, what: str) -> None:
        msg = f"accel-drc: checking [{k}/{n}] {what}"
        print(f"\r{msg[:100]:<100}", file=sys.stderr, end="" if k < n else "\n", flush=True)

    try:
        result = check_board(
            board,
            cfg,
            board_class=getattr(args, "board_class", None),
            board_file=args.board,
            library=lib,
            progress=progress if tty else None,
            kicad_drc=kicad,  # a kicad_drc.Pending: waited for after our own checks
        )
    finally:
        if kicad is not None:
            kicad.cancel()  # a no-op once its result was read
    if old is not None:
        from .baseline import apply

        apply(result, old)
    write_outputs(result, board, **outputs)
    if not getattr(args, "quiet", False) and "-" not in files.values():
        print(summary(result))
        if old is not None:
            print(_baseline_lines(result))
    crashed = sorted({f.rule for f in result.findings if "exception" in f.evidence})
    if crashed:
        # the reports are written, but a run with a broken check must not look clean in CI
        print(
            f"accel-drc: internal error in {len(crashed)} rule(s): {', '.join(crashed[:5])} "
            "(run with -v for the traceback; please report it)",
            file=sys.stderr,
        )
        return CRASHED
    if old is not None and getattr(args, "fail_on", "error") == "new":
        from .baseline import regressions
        from .errors import EXIT_VIOLATIONS

        return EXIT_VIOLATIONS if regressions(result) else EXIT_OK
    if getattr(args, "fail_on", "error") == "cannot-verify" and result.verdict() == "unverified":
        from .errors import EXIT_VIOLATIONS

        return EXIT_VIOLATIONS
    return exit_code(result)


def run_init(args: Any) -> int:
    """``accel-drc init BOARD [--output FILE] [--force] [--class C]``: check the board with no
    config and write the starter ``accel-drc.yaml`` (:func:`accel_drc.starter_config.starter_config`):
    every cannot-verify finding's entry, commented out so the file loads as is.  An existing
    file is never replaced without ``--force`` (exit 1); the write is atomic and never onto an
    input (the board, its project file)."""
    from .config import CONFIG_NAME, ProjectConfig
    from .hostile import write_text
    from .packs import load_library
    from .pipeline import check_board
    from .readers import read_board
    from .report.writers import guard_outputs, input_files, prepare_outputs
    from .starter_config import starter_config

    out = getattr(args, "output", None) or os.path.join(
        os.path.dirname(args.board) or ".", CONFIG_NAME
    )
    if out != "-" and os.path.lexists(out) and not getattr(args, "force", False):
        raise UsageError(
            f"{out}: already exists: not replaced (--force replaces it, --output FILE writes "
            "elsewhere)"
        )
    prepare_outputs(out)
    guard_outputs({"output": out}, [args.board])
    board = read_board(args.board)
    cfg = ProjectConfig()  # the board as read: no declaration of an existing config applies
    guard_outputs({"output": out}, input_files(args.board, cfg, board))
    lib = load_library()
    result = check_board(
        board,
        cfg,
        board_class=getattr(args, "board_class", None),
        board_file=args.board,
        library=lib,
    )
    text = starter_config(result, [n for n in board.nets if n])
    write_text(out, text)
    if out != "-":
        n = sum(1 for f in result.findings if f.status.value == "cannot_verify")
        print(
            terminal(
                f"accel-drc: wrote {out}: {n} cannot-verify findings' entries, commented out "
                "(it loads as is: delete a line's first '#' and fill in its <placeholders> to "
                "declare it)"
            )
        )
    return EXIT_OK


def _baseline(args: Any) -> Any:
    """``check --baseline FILE`` read (:func:`accel_drc.baseline.load`), or None; ``--fail-on
    new`` without a baseline is a usage error (there is nothing to be new against)."""
    path = getattr(args, "baseline", None)
    if not path:
        if getattr(args, "fail_on", "error") == "new":
            raise UsageError(
                "check: --fail-on new needs --baseline FILE (an earlier --json report)"
            )
        return None
    from .baseline import load

    return load(path)


def _baseline_lines(result: Any, listed: int = 10) -> str:
    """The terminal summary's baseline lines: the counts, then the first fixed findings."""
    from .report.markdown import shorten

    compared = result.extras["baseline"]
    n = compared.counts()
    lines = [
        terminal(
            f"baseline {compared.path}: {n['new']} new, {n['changed']} changed, "
            f"{n['unchanged']} unchanged, {n['fixed']} fixed"
        )
    ]
    for f in compared.fixed[:listed]:
        where = f" ({f.net})" if f.net else (f" ({f.layer})" if f.layer else "")
        lines.append(shorten(terminal(f"  fixed: {f.rule}{where}: {f.message}"), 200))
    if n["fixed"] > listed:
        lines.append(f"  … and {n['fixed'] - listed} more fixed")
    return "\n".join(lines)


def run_rules(args: Any) -> int:
    """``accel-drc rules``: every rule with its limit, why and source (text, JSON, or the
    generated Markdown reference of the check kinds and rules, optionally written into the
    generated section of a file)."""
    import json as _json

    from . import docgen
    from .config import ProjectConfig, load_config
    from .packs import CLASSES, load_library, rules_for_class
    from .references import bibliography, resolve

    fmt = getattr(args, "format", None) or ("json" if getattr(args, "json", False) else "text")
    write = getattr(args, "write", None)
    if write and fmt != "markdown":
        raise UsageError("rules: --write needs --format markdown")
    lib = load_library()
    cfg = load_config(args.config, None, lib) if getattr(args, "config", None) else ProjectConfig()
    classes = [args.board_class] if getattr(args, "board_class", None) else list(CLASSES)
    out = []
    for cls in classes:
        rules, _ = rules_for_class(
            lib,
            cls,
            cfg.extra_packs,
            cfg.rule_overrides,
            cfg.doc,
            loss_budgets=cfg.loss.budgets_db,
        )
        out += [docgen.rule_row(r, cls) for r in rules]
    if fmt == "markdown":
        text = docgen.reference(out, classes)
        if write:
            changed = _update_generated(write, text)
            print(f"accel-drc: {write}: {'updated' if changed else 'up to date'}")
        else:
            sys.stdout.write(text)
        return EXIT_OK
    cited = bibliography(
        lib.references, [lib.packs[c].follows for c in classes] + [r["source"] for r in out]
    )
    if fmt == "json":
        for r in out:
            r["references"] = [x.id for x in resolve(lib.references, r["source"])]
        doc = {"rules": out, "packs": lib.pack_info(classes), "references": cited}
        print(_json.dumps(doc, indent=2, ensure_ascii=False))
        return EXIT_OK
    from .report.text import references_list, rules_table

    for cls in classes:
        p = lib.packs[cls]
        print(terminal(f"# pack {p.name} {p.version} ({p.file}): {p.description}"))
        print(terminal(f"#   follows {p.follows}"))
    print(rules_table(out))
    print(references_list(cited))
    return EXIT_OK


def _update_generated(path: str, text: str) -> bool:
    """``rules --write PATH``: :func:`accel_drc.docgen.update` (an atomic write), with a file
    that cannot be written — not UTF-8, read-only, a full disk — refused in one line (exit 1,
    as a report that cannot be written) rather than as an internal error."""
    from . import docgen

    if os.path.exists(path) and not os.path.isfile(path):  # /dev/full reads zeros forever
        raise UsageError(f"{path}: cannot write: not a regular file (--write updates a section)")
    try:
        return docgen.update(path, text)
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path}: cannot write: it is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
            f"at offset {exc.start})"
        ) from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None


def run_inspect(args: Any) -> int:
    """``accel-drc inspect BOARD [--json] [--detail …] [--config FILE] [--class C]``."""
    import json as _json

    from .inspection import inspect_document, render_text
    from .readers import read_board

    board = read_board(args.board)
    for w in board.warnings:
        log.warning("%s: warning: %s", args.board, terminal(w))
    details = list(getattr(args, "detail", None) or [])
    config = None
    if details or getattr(args, "config", None):
        from .config import load_config

        config = load_config(getattr(args, "config", None), args.board)
    doc = inspect_document(
        board, details=details, config=config, board_class=getattr(args, "board_class", None)
    )
    if getattr(args, "json", False):
        sys.stdout.write(_json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(doc))  # every name in it escaped (a newline too)
        for name, rows in (doc.get("details") or {}).items():
            sys.stdout.write(f"\n{name}: {len(rows)} rows (use --json for the rows)\n")
    return EXIT_OK


def run_kibot(args: Any) -> int:
    """``accel-drc kibot install``: the KiBot plug-in files into KiBot's plug-ins folder."""
    if getattr(args, "kibot_command", None) != "install":
        print("accel-drc: kibot: name an action: install (accel-drc kibot --help)", file=sys.stderr)
        return EXIT_USAGE
    from .kibot_plugin import install

    for path in install(args.dest):
        print(f"accel-drc: installed {terminal(path)}")
    return EXIT_OK


def run() -> None:
    """The ``accel-drc`` console script and ``python -m accel_drc.cli``: :func:`main`, then end
    the process the quick way when nothing else can be running.

    Why: a normal interpreter exit frees every object one by one (the modules, the rule data,
    the board: a noticeable share of a small board's run, issue 18) though the process is gone a
    moment later.  What the exit must still do is done first: the ``atexit`` handlers run
    (logging's flush among them) and stdout/stderr are flushed; a failing flush (a closed pipe)
    and any other thread alive (nothing to join is left behind) take the normal exit, which
    reports them as before.  :func:`main` itself never exits the process (tests call it)."""
    code = main()
    import atexit
    import threading

    alone = threading.active_count() == 1 and threading.current_thread() is threading.main_thread()
    if alone and isinstance(code, int) and 0 <= code <= 255:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - the normal exit reports it (exit code 120)
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
