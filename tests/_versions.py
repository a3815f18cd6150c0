"""Two versions of one small board, for the baseline tests (``check --baseline``, the Action).

Version 1 is the Coral Edge TPU M.2 adapter as it is (fixtures/boards/coral-tpu-m2-adapter);
version 2 is the same board after a change a designer makes: the dielectric declared as
Megtron 6, the top copper thinned to 18 µm and one via drilled 0.04 mm.  Checked as an edge
board:

* fixed: ``edge.material_consistency.kicad_default`` (the laminate is now declared);
* new: ``edge.drill_aspect_ratio`` (the 0.04 mm via through the 0.87 mm board, 21.8:1, beyond
  every fab class, the 20:1 one included), an error violation (the 18 µm top copper is no power-rail plane, so
  copper_weight does not judge it);
* changed: the two ``edge.impedance.pcie4`` findings (they could not be verified on KiCad's
  default dielectric; on Megtron 6 they are violations, their numbers in the message changed);
* unchanged: ``edge.layer_count`` (an error violation in both), ``edge.pdn_impedance`` and
  ``signals.assumed_type.pcie4``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURE_BOARDS

CORAL = FIXTURE_BOARDS["coral-tpu-m2-adapter"]

#: the edit from version 1 to version 2: (old text, new text), each found once in the board
EDITS = (
    (
        '(layer "F.Cu" (type "copper") (thickness 0.035))',
        '(layer "F.Cu" (type "copper") (thickness 0.018))',
    ),
    (
        '(material "FR4") (epsilon_r 4.5) (loss_tangent 0.02)',
        '(material "Megtron 6") (epsilon_r 3.4) (loss_tangent 0.002)',
    ),
    (
        "(via (at 152.2 119.6) (size 0.8) (drill 0.4)",
        "(via (at 152.2 119.6) (size 0.8) (drill 0.04)",
    ),
)


def copy_board(folder: Path) -> Path:
    """Version 1: the board and its project copied into ``folder``; returns the board."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in (CORAL, CORAL.with_suffix(".kicad_pro")):
        shutil.copyfile(f, folder / f.name)
    return folder / CORAL.name


def edit_board(board: Path) -> Path:
    """Turn a copy of version 1 into version 2 in place (:data:`EDITS`); returns the board."""
    text = board.read_text(encoding="utf-8")
    for old, new in EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    board.write_text(text, encoding="utf-8")
    return board
