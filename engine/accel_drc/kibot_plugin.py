"""KiBot integration: the ``accel_drc`` preflight and output (docs/integrations.md, KiBot).

KiBot finds plug-ins only as files named ``pre_*.py`` / ``out_*.py`` in
``~/.config/kibot/plugins`` (``kibot.kiplot.load_actions``; no entry points), imported as
``kibot.<name>`` with KiBot's macros.  The two files in ``accel_drc/kibot_plugins/`` are
therefore thin KiBot classes, copied there by ``accel-drc kibot install``; what they do lives
here, importable and testable without KiBot:

- :func:`run` checks the board (:func:`accel_drc.check`, the CLI's findings) and writes the
  reports the KiBot config asked for;
- :func:`failure` says why a preflight must stop the KiBot run (None if it passes).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .errors import UsageError

if TYPE_CHECKING:
    from .results import CheckResult

#: the KiBot ``format`` names -> (accel-drc writer, file extension)
FORMATS: dict[str, tuple[str, str]] = {
    "HTML": ("html", "html"),
    "JSON": ("json", "json"),
    "SARIF": ("sarif", "sarif"),
    "MARKDOWN": ("markdown", "md"),
    "JUNIT": ("junit", "xml"),
}

#: the plug-in files ``accel-drc kibot install`` copies (package data beside this module)
PLUGIN_FILES = ("pre_accel_drc.py", "out_accel_drc.py")

#: KiBot's id for the ``%i`` expansion and the preflight/output type
KIBOT_ID = "accel_drc"


def plugins_dir(home: str | None = None) -> str:
    """Where KiBot loads plug-ins from: ``$HOME/.config/kibot/plugins`` (KiBot reads ``HOME``,
    not ``XDG_CONFIG_HOME``)."""
    home = home or os.environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".config", "kibot", "plugins")


def source_dir() -> str:
    """The folder holding the plug-in files shipped with this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "kibot_plugins")


def install(dest: str | None = None) -> list[str]:
    """Copy the plug-in files into ``dest`` (default :func:`plugins_dir`), replacing older
    copies; returns the files written.  A ``dest`` that exists and is not a folder, or cannot be
    written, is refused (exit 1, one line); nothing else is touched."""
    target = dest or plugins_dir()
    if os.path.exists(target) and not os.path.isdir(target):
        raise UsageError(f"{target}: not a folder (KiBot's plug-ins folder is {plugins_dir()})")
    written = []
    try:
        os.makedirs(target, exist_ok=True)
        for name in PLUGIN_FILES:
            out = os.path.join(target, name)
            shutil.copyfile(os.path.join(source_dir(), name), out)
            written.append(out)
    except OSError as exc:  # a read-only folder, a path through a file: the user's to fix
        raise UsageError(f"{exc.filename or target}: cannot write: {exc.strerror or exc}") from None
    return written


def formats(value: object) -> list[str]:
    """The KiBot ``format`` option as a list of known names (upper case), in order, once each;
    an unknown name is a :class:`UsageError` (KiBot shows it as a configuration error)."""
    items = [value] if isinstance(value, str) else list(value or [])  # type: ignore[call-overload]
    out: list[str] = []
    for item in items:
        for name in str(item).split(","):
            name = name.strip().upper()
            if not name or name in out:
                continue
            if name not in FORMATS:
                raise UsageError(
                    f"unknown accel-drc report format {name!r} (one of {', '.join(FORMATS)})"
                )
            out.append(name)
    return out


def run(
    board_path: str,
    config: str | None,
    board_class: str | None,
    reports: Mapping[str, str],
) -> CheckResult:
    """Check ``board_path`` as ``accel-drc check`` does and write ``reports`` (KiBot format
    name -> file).  ``config``: a path or None (the ``accel-drc.yaml`` beside the board, if
    any); ``board_class``: None for the config's or the classifier's.  The report folders are
    created, and no report may land on the board, its project or the config (exit 1, before
    the check)."""
    from .api import check, read_board
    from .config import find_config
    from .report.writers import guard_outputs, prepare_outputs, write_outputs

    outputs = {FORMATS[name][0]: path for name, path in reports.items()}
    prepare_outputs(*outputs.values())
    project = os.path.splitext(board_path)[0] + ".kicad_pro"
    guard_outputs(outputs, [board_path, project, config or find_config(board_path) or ""])
    key = _run_key(board_path, config, board_class)
    if _LAST.get("key") != key:  # the preflight and the output of one KiBot run: checked once
        board = read_board(board_path)
        result = check(board, config=config or None, board_class=board_class or None)
        _LAST.clear()
        _LAST.update(key=key, board=board, result=result)
    write_outputs(_LAST["result"], _LAST["board"], **outputs)
    return _LAST["result"]  # type: ignore[no-any-return]


#: the last board checked in this process ("key", "board", "result"): KiBot runs the preflight
#: and then the output on the same board and config, and a big board takes seconds to check
_LAST: dict[str, object] = {}


def _run_key(board_path: str, config: str | None, board_class: str | None) -> tuple[object, ...]:
    """What makes two runs the same check: the board, its project and its config (path, size,
    modification time: an edit between the two is a new check) and the class."""
    from .config import find_config

    def stamp(path: str | None) -> tuple[object, ...]:
        if not path:
            return (None,)
        try:
            st = os.stat(path)
        except OSError:
            return (os.path.abspath(path), None)
        return (os.path.abspath(path), st.st_size, st.st_mtime_ns)

    project = os.path.splitext(board_path)[0] + ".kicad_pro"  # net classes are read from it
    return (
        stamp(board_path),
        stamp(project),
        stamp(config or find_config(board_path)),
        board_class,
    )


def crashed_rules(result: CheckResult) -> list[str]:
    """Rules whose check raised (an internal error, reported as a finding)."""
    return sorted({f.rule for f in result.findings if "exception" in f.evidence})


def failure(result: CheckResult, fail_on_unverified: bool = False) -> str | None:
    """Why the preflight fails the KiBot run, in one line; None when it passes.

    Fails on an unwaived error violation (the CLI's exit 5), on a crashed check (exit 2), and
    with ``fail_on_unverified`` on an error-severity rule that could not be checked."""
    board = result.board_file
    errors = result.unwaived_errors()
    if errors:
        rules = sorted({f.rule for f in errors})
        shown = ", ".join(rules[:5]) + (", …" if len(rules) > 5 else "")
        return message(f"accel-drc: {len(errors)} error violation(s) on {board}: {shown}")
    crashed = crashed_rules(result)
    if crashed:
        return f"accel-drc: internal error in {len(crashed)} rule(s): {', '.join(crashed[:5])}"
    if fail_on_unverified and result.verdict() == "unverified":
        n = len(result.unverified_errors())
        return message(f"accel-drc: {n} error-severity rule(s) unverified on {board}")
    return None


def message(what: object) -> str:
    """An accel-drc error (or any text) as KiBot shows it: one line, control characters escaped (a file or
    net name is the user's data, never terminal escapes)."""
    from .hostile import terminal

    return terminal(str(what))


def summary(result: CheckResult) -> str:
    """The CLI's text summary (what ``accel-drc check`` prints), for KiBot's log."""
    from .report.text import summary as text_summary

    return text_summary(result)
