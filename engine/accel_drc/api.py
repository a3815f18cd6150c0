"""The library API: :func:`check` and :func:`read_board`, re-exported as ``accel_drc.check`` and
``accel_drc.read_board`` (docs/api.md states what these names promise across 0.x releases).

Both do what ``accel-drc check BOARD`` does, without the command line: the same reader, the
same config lookup, the same pipeline (:func:`accel_drc.pipeline.check_board`), so a script, a
notebook or a CI plug-in (the KiBot preflight) gets exactly the findings the CLI reports.
Nothing is printed and nothing is written: reports are the caller's choice
(:func:`accel_drc.pipeline.write_outputs`).  Errors are exceptions the caller can act on:
:class:`~accel_drc.errors.InputError` (a board or config that cannot be read, ``file:line``
in its message) and :class:`~accel_drc.errors.UsageError` (an unknown board class).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # the heavy modules load on the first call, not on ``import accel_drc``
    from .config import ProjectConfig
    from .model import Board
    from .results import CheckResult

#: what ``board`` may be: a path (``str`` or ``os.PathLike``) or a board already read
BoardLike = Union[str, "os.PathLike[str]", "Board"]
#: what ``config`` may be: a path to an ``accel-drc.yaml``, its content as a mapping, or None
ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "ProjectConfig", None]


def read_board(path: str | os.PathLike[str]) -> Board:
    """Read a KiCad ``.kicad_pcb`` or IPC-2581 file into a :class:`accel_drc.model.Board`.

    The format is told from the content, not the extension.  Raises
    :class:`~accel_drc.errors.InputError` (naming the file, and the line where there is one) for
    a file that cannot be read."""
    from .readers import read_board as _read

    return _read(os.fspath(path))


def check(
    board: BoardLike,
    config: ConfigLike = None,
    board_class: str | None = None,
) -> CheckResult:
    """Check ``board`` and return its :class:`accel_drc.results.CheckResult`.

    ``board``: a path, or a :class:`~accel_drc.model.Board` from :func:`read_board` (read once,
    checked under several configs).  ``config``: a path to an ``accel-drc.yaml``; a mapping
    with the same content (validated as strictly as the file; relative ``rules: packs:`` paths
    are taken from the working folder); or None, which means what it means on the command
    line: the ``accel-drc.yaml`` beside the board file when there is one, else no config (pass
    ``{}`` for "no config" whatever lies beside the board).  ``board_class``: ``training``,
    ``inference`` or ``edge``; it beats the config's ``class:``, which beats the classifier.

    The result's findings are those ``accel-drc check BOARD --json`` writes for the same board
    and config.  ``result.verdict()`` is ``"pass"``, ``"fail"`` or ``"unverified"``;
    ``result.unwaived_errors()`` are the findings that make the CLI exit 5."""
    from .packs import load_library
    from .pipeline import check_board

    path = None if _is_board(board) else os.fspath(board)  # type: ignore[arg-type]
    the_board = board if path is None else read_board(path)
    lib = load_library()
    cfg = _config(config, path or the_board.source, lib)  # type: ignore[union-attr]
    return check_board(
        the_board,  # type: ignore[arg-type]
        cfg,
        board_class=board_class,
        board_file=path,
        library=lib,
    )


def _is_board(board: Any) -> bool:
    """Whether ``board`` is a board already read (not a path)."""
    from .model import Board

    if isinstance(board, Board):
        return True
    if isinstance(board, (str, os.PathLike)):
        return False
    raise TypeError(
        f"board must be a path or an accel_drc Board (from accel_drc.read_board), "
        f"not {type(board).__name__}"
    )


def _config(config: ConfigLike, board_path: str | None, lib: Any) -> ProjectConfig:
    """The validated config ``config`` stands for (see :func:`check`)."""
    from .config import ProjectConfig, config_from_data, load_config

    if isinstance(config, ProjectConfig):
        return config
    if config is None or isinstance(config, (str, os.PathLike)):
        found = None if config is None else os.fspath(config)
        return load_config(found, board_path if found is None else None, lib)
    if isinstance(config, Mapping):
        return config_from_data(config, lib)
    raise TypeError(
        "config must be a path to an accel-drc.yaml, a mapping with its content, or None, "
        f"not {type(config).__name__}"
    )
