"""Hostile board file names for the tests of the pre-commit hook and the GitHub Action.

A board's file name is data the committer chose: it may look like an option (``--json=x``,
``-rev2``), hold a newline and a workflow command (``::error::``), Markdown or HTML, a percent
escape, or a right-to-left override.  ``board_names`` generates such names for hypothesis;
``TINY_BOARD`` is a board that reads and checks in a fraction of a second (and fails: two copper
layers are too few for every class, exit 5).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hypothesis import strategies as st

#: a 2-layer board with one BGA footprint and nothing else: accel-drc reads it and fails it
#: (layer count: the BGA keeps it an accelerator-class board, not ``general``), quickly
TINY_BOARD = (
    b'(kicad_pcb (version 20240108) (generator "pcbnew") (general (thickness 1.6))\n'
    b'  (layers (0 "F.Cu" signal) (31 "B.Cu" signal) (44 "Edge.Cuts" user))\n'
    b'  (net 0 "")\n'
    b'  (footprint "Package_BGA:BGA-4" (layer "F.Cu") (at 0 0)))\n'
)

#: pieces a hostile name is made of: options, workflow commands (both forms), escapes, markup
_FRAGMENTS = [
    "-",
    "--",
    "--json=",
    "-rev2",
    "=",
    "\n",
    "\r",
    "\r\n",
    "%",
    "%0A",
    "%25",
    "::",
    "::error::forged",
    "::stop-commands::x",
    "##[error]",
    " ",
    "\t",
    ",",
    ";",
    "<img src=x>",
    "<!--",
    "`",
    "*",
    "_",
    "|",
    "[",
    "]",
    "\\",
    "$(x)",
    "'",
    '"',
    "\u202e",  # right-to-left override
    "\u00a0",
    "é",
    "漢",
    "verdict: PASS",
    ".",
    "a",
    "b",
]

#: one board name: fragments and arbitrary characters, ending in .kicad_pcb (what the hook's
#: ``files`` and the Action's default glob select); no '/' or NUL (no file can have them)
board_names = (
    st.lists(
        st.sampled_from(_FRAGMENTS)
        | st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
        min_size=1,
        max_size=8,
    )
    .map(lambda parts: "".join(parts) + ".kicad_pcb")
    .filter(lambda name: len(os.fsencode(name)) <= 200)
)


def write_boards(folder: Path, names: Iterable[str]) -> dict[str, bytes]:
    """Write ``TINY_BOARD`` under each name in ``folder``; returns every file of ``folder`` with
    its bytes afterwards (to compare with what is there after a run)."""
    for name in names:
        (folder / name).write_bytes(TINY_BOARD)
    return snapshot(folder)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` (relative path -> bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
