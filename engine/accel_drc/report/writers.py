"""The report writers: one registry drives the ``accel-drc check`` flags and :func:`write_outputs`.

Each :class:`Writer` names its flag (``--json FILE``), says what it writes, and renders the
result to text (a pure function of the result: the same result gives the same bytes).  Adding a
report format = one entry in :data:`WRITERS` and its module in ``report/``; the CLI flag, the
output guards and the atomic write follow.

The hostile-input guarantees hold for every writer (``docs/hostile-input.md``): each file is
written atomically (a temporary file in the same folder, then ``os.replace``), an output that
is an input (the board, project, config or a rule pack, symlinks and hard links followed) is
refused, ``-`` writes to stdout (one output at most), and every report is rendered before any is
written, so one that fails to render never leaves the others half-updated.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import UsageError
from ..hostile import refuse_read_only, same_file_key, write_text

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..model import Board
    from ..results import CheckResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Writer:
    """One report format: its flag name, its ``--help`` text and how it renders.

    ``render(result, board, paths, report_url)`` gets every requested output path (the Markdown
    links to the HTML report) and returns the text to write."""

    name: str
    help: str
    render: Callable[[CheckResult, Board, Mapping[str, str], str | None], str]


def _json(result: CheckResult, board: Board, paths: Mapping[str, str], url: str | None) -> str:
    from . import json_report

    return json_report.dumps(result)


def _junit(result: CheckResult, board: Board, paths: Mapping[str, str], url: str | None) -> str:
    from . import junit

    return junit.dumps(result)


def _sarif(result: CheckResult, board: Board, paths: Mapping[str, str], url: str | None) -> str:
    from . import sarif

    return sarif.dumps(result)


def _markdown(result: CheckResult, board: Board, paths: Mapping[str, str], url: str | None) -> str:
    from . import markdown

    link = None if url == "none" else url or _relative_link(paths.get("html"), paths["markdown"])
    return markdown.render(result, link)


def _placeholder_html(result: CheckResult) -> str:
    from html import escape

    from .text import summary

    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>accel-drc report</title></head>"
        f"<body><h1>accel-drc</h1><pre>{escape(summary(result))}</pre></body></html>\n"
    )


def _html(result: CheckResult, board: Board, paths: Mapping[str, str], url: str | None) -> str:
    try:
        from . import html

        return html.render(result, board)
    except Exception:  # the findings must still reach the user: plain page, loud log
        log.error("the HTML report failed; writing a plain page instead", exc_info=True)
        return _placeholder_html(result)


#: every report format, in the order they are rendered (the HTML last: the slowest, and the one
#: with a fallback)
WRITERS: dict[str, Writer] = {
    w.name: w
    for w in (
        Writer("json", "write the findings as JSON ('-' for stdout)", _json),
        Writer("junit", "write JUnit XML, one testcase per rule ('-' for stdout)", _junit),
        Writer("sarif", "write SARIF 2.1.0 for code scanning ('-' for stdout)", _sarif),
        Writer(
            "markdown",
            "write a Markdown summary, PR comment or CI job summary ('-' for stdout)",
            _markdown,
        ),
        Writer("html", "write the self-contained HTML report ('-' for stdout)", _html),
    )
}


def _paths(paths: Mapping[str, str | None]) -> dict[str, str]:
    unknown = sorted(set(paths) - set(WRITERS))
    if unknown:
        raise TypeError(
            f"unknown report format(s): {', '.join(unknown)} (known: {', '.join(WRITERS)})"
        )
    return {k: v for k, v in paths.items() if v}


def render_outputs(
    result: CheckResult, board: Board, report_url: str | None = None, **paths: str | None
) -> list[tuple[str, str]]:
    """(path, text) of each requested report (``paths``: writer name -> file), all rendered
    before any is written."""
    wanted = _paths(paths)
    # no cyclic garbage collection while rendering: the reports build 10⁵–10⁶ containers that
    # all stay alive until written, so a collection frees nothing (5 % of the time at 10,000
    # findings); the cycles they leave are collected after
    was = gc.isenabled()
    gc.disable()
    try:
        return [
            (wanted[w.name], w.render(result, board, wanted, report_url))
            for w in WRITERS.values()
            if w.name in wanted
        ]
    finally:
        if was:
            gc.enable()


def write_outputs(
    result: CheckResult, board: Board, report_url: str | None = None, **paths: str | None
) -> None:
    """Write each requested report (``json=``, ``junit=``, ``sarif=``, ``markdown=``, ``html=``:
    a path, or ``'-'`` for stdout).

    Each file is written atomically: a reader, or a second run writing the same path, never
    sees half a report.  A file that cannot be written is a usage error naming it (exit 1)."""
    for path, text in render_outputs(result, board, report_url, **paths):
        if path != "-":
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)
        try:
            write_text(path, text)
        except OSError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _relative_link(target: str | None, source: str) -> str | None:
    """``target``'s path as a link from the folder of ``source`` (None without a target)."""
    if not target:
        return None
    rel = os.path.relpath(os.path.abspath(target), os.path.dirname(os.path.abspath(source)))
    return rel.replace(os.sep, "/")


def prepare_outputs(*paths: str | None) -> None:
    """Create the folders of the output files the user named, before a long check runs, and
    refuse (exit 1, as kicad-cli does for a bad output path) the ones that cannot be written:
    a folder, a dangling symlink, a read-only file, two outputs on one file, more than one on
    stdout.  Nothing is
    written anywhere else."""
    named = [p for p in paths if p]
    if sum(1 for p in named if p == "-") > 1:
        raise UsageError("only one output can go to stdout ('-')")
    seen: dict[str, str] = {}
    for path in named:
        if path == "-":
            continue
        key = same_file_key(path)
        if key in seen:
            raise UsageError(
                f"{path}: names the same file as the output {seen[key]}; give each output its "
                "own file"
            )
        seen[key] = path
        if os.path.islink(path) and not os.path.exists(path):
            raise UsageError(f"{path}: is a symlink to nothing ({os.readlink(path)}); not written")
        folder = os.path.dirname(os.path.realpath(path))
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a folder; name the output file")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{path}: cannot create its folder: {exc.strerror or exc}") from None
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{path}: its folder is not writable")
        try:
            refuse_read_only(path)
        except PermissionError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror}") from None


def input_files(board_path: str, cfg: ProjectConfig, board: Board | None = None) -> list[str]:
    """Every file this run reads: the board, its ``.kicad_pro``, the config, its rule packs and
    the built-in rule data and schemas."""
    from ..packs import RULES_DIR
    from ..readers.kicad_project import project_path_for

    files = [board_path, project_path_for(board_path)]
    if board is not None and board.project_file:
        files.append(board.project_file)
    if cfg.path:
        files.append(cfg.path)
    files += [p.file for p in cfg.extra_packs if getattr(p, "file", None)]
    with contextlib.suppress(OSError):
        files += [str(f) for f in RULES_DIR.rglob("*.yaml")]
        files += [str(f) for f in RULES_DIR.rglob("*.schema.json")]  # read at run time too
    return files


def guard_outputs(outputs: Mapping[str, str | None], inputs: list[str]) -> None:
    """Refuse (exit 1, one line) an output that resolves, symlinks followed, to an input: the
    report would overwrite the board, project, config or a rule pack it was made from."""
    keys = {same_file_key(p): p for p in inputs if p}
    ids: dict[tuple[int, int], str] = {}
    for p in inputs:  # hard links too: the same file under another name
        with contextlib.suppress(OSError):
            st = os.stat(p)
            ids[(st.st_dev, st.st_ino)] = p
    for flag, path in outputs.items():
        if not path or path == "-":
            continue
        hit = keys.get(same_file_key(path))
        if hit is None:
            with contextlib.suppress(OSError):
                st = os.stat(path)
                hit = ids.get((st.st_dev, st.st_ino))
        if hit is not None:
            raise UsageError(
                f"--{flag} {path}: is the input {hit}; refusing to overwrite an input with a report"
            )
