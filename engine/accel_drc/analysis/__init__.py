"""Derived facts about a board, computed once and shared by all checks.

:class:`Analysis` is lazy: each fact is a ``cached_property`` computed by a function in one of
the modules beside this file, the first time a check asks for it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..model import Board


class Analysis:
    def __init__(self, board: Board, config: Mapping[str, Any] | None = None) -> None:
        self.board = board
        self.config = config or {}

    @functools.cached_property
    def diff_pairs(self):  # noqa: ANN201 - tuple[DiffPair, ...]
        return self.board.diff_pairs
