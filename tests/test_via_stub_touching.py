"""Touching same-net vias (issue 19 §5), on the hand-built 6-layer board of
test_via_stub_analysis.py (0.4 mm via pads, 0.2 mm drills; stub lengths worked out there).

The property that matters: a touching via of the same net never hides another via's stub unless
it brings a connection the other via does not have.  vme-wren against pcbnew:
test_via_stub_groundtruth.py (fixtures) and the slow vme-wren case below.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis import via_stubs as vs
from accel_drc.model import Board
from accel_drc.readers import read_board
from conftest import SHARED_BOARDS
from test_via_stub_analysis import B, make_board

FULL_BARREL_BELOW_FCU = B[5] - B[0]  # 1.005 mm


def with_flags(board: Board, removed: list[bool], keep_end: list[bool]) -> Board:
    """The board with KiCad's remove_unused_layers / keep_end_layers set per via."""
    v = dataclasses.replace(
        board.vias, unused_removed=np.array(removed), keep_end=np.array(keep_end)
    )
    return dataclasses.replace(board, vias=v)


def stubs(board: Board) -> vs.ViaStubs:
    return vs.compute(board)


@pytest.mark.parametrize(
    "flags",
    [None, ([True, True], [True, True]), ([True, True], [False, False])],
    ids=["all pads kept", "unused removed, ends kept", "unused removed"],
)
def test_a_touching_via_never_hides_a_stub(flags: tuple | None) -> None:
    """Via A: F.Cu track only, so its whole barrel below F.Cu is a stub.  Via B of the same net
    touches it (0.35 mm apart, 0.4 mm pads) and is used on F.Cu only too: the two pads touch on
    every layer (or on the kept end layers), yet nothing leaves either barrel below F.Cu."""
    alone = make_board([(10, 10, 0, 5, 1, False)], [(10, 10, 12, 10, 0, 1)])
    pair = make_board(
        [(10, 10, 0, 5, 1, False), (10.35, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10.35, 10, 12, 11, 0, 1)],
    )
    if flags is not None:
        alone = with_flags(alone, flags[0][:1], flags[1][:1])
        pair = with_flags(pair, *flags)
    a = stubs(alone)
    p = stubs(pair)
    assert a.stub_mm[0] == pytest.approx(FULL_BARREL_BELOW_FCU)
    for i in (0, 1):
        assert p.connected_names(i) == ["F.Cu"]
        assert p.stub_mm[i] == pytest.approx(FULL_BARREL_BELOW_FCU)


def test_p3v3_like_kept_end_pads_do_not_connect_the_bottom() -> None:
    """vme-wren's P3V3 case: touching vias used on F.Cu and an inner layer, end pads kept
    (keep_end_layers): the B.Cu pads touch each other only.  Connected on F.Cu and In3, stub
    In3 -> B.Cu stays (B[5] - B[3])."""
    board = with_flags(
        make_board(
            [(10, 10, 0, 5, 1, False), (10.35, 10, 0, 5, 1, False)],
            [
                (10, 10, 12, 10, 0, 1),
                (10.35, 10, 12, 11, 0, 1),
                (10, 10, 8, 10, 3, 1),
                (10.35, 10, 8, 11, 3, 1),
            ],
        ),
        [True, True],
        [True, True],
    )
    s = stubs(board)
    for i in (0, 1):
        assert s.connected_names(i) == ["F.Cu", "In3.Cu"]
        assert s.stub_mm[i] == pytest.approx(B[5] - B[3])


def test_a_touching_via_that_brings_a_connection_carries_the_signal() -> None:
    """Via A is used on F.Cu only, via B (touching, pads on every layer) on B.Cu only: the two
    barrels are one conductor from F.Cu to B.Cu, so neither has a stub."""
    board = make_board(
        [(10, 10, 0, 5, 1, False), (10.35, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10.35, 10, 12, 11, 5, 1)],
    )
    s = stubs(board)
    for i in (0, 1):
        assert s.connected_names(i) == [f"{x}.Cu" for x in ("F", "In1", "In2", "In3", "In4", "B")]
        assert s.stub_mm[i] == pytest.approx(0.0)


def test_removed_pads_leave_only_the_hole() -> None:
    """The same two vias with unused pads removed (no end pads kept): A has a pad only on F.Cu,
    B only on B.Cu; A's pad (0.2 mm) and B's hole (0.1 mm) are 0.35 mm apart: no contact, each
    keeps its own stub (KiCad's FlashLayer / connectivity collides the hole there)."""
    board = with_flags(
        make_board(
            [(10, 10, 0, 5, 1, False), (10.35, 10, 0, 5, 1, False)],
            [(10, 10, 10, 12, 0, 1), (10.35, 10, 10.35, 12, 5, 1)],
        ),
        [True, True],
        [False, False],
    )
    s = stubs(board)
    assert s.connected_names(0) == ["F.Cu"] and s.connected_names(1) == ["B.Cu"]
    assert s.stub_mm[0] == pytest.approx(FULL_BARREL_BELOW_FCU)


def test_chain_of_touching_vias() -> None:
    """A - B - C in a row, each touching the next only: C alone has an In3 track.  The In3
    connection reaches A through B (pads on every layer)."""
    board = make_board(
        [(10, 10, 0, 5, 1, False), (10.35, 10, 0, 5, 1, False), (10.7, 10, 0, 5, 1, False)],
        [(10, 10, 12, 10, 0, 1), (10.7, 10, 8, 11, 3, 1)],
    )
    s = stubs(board)
    assert "In3.Cu" in s.connected_names(0)
    assert s.connected_names(1)[0] == "F.Cu"


WREN = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"


@pytest.mark.kicad
@pytest.mark.slow
def test_vme_wren_connections_match_pcbnew(pcbnew_python: str, tmp_path: Path) -> None:
    """Every via of vme-wren (4,374) against pcbnew with test_via_stub_groundtruth's script
    (one pcbnew process, ≈ 1 min CPU): connected layers equal; the 33 touching P3V3 vias
    (0.6 mm pads at 0.6 mm centres) connect on F.Cu and In5.Cu, not on every layer."""
    if not WREN.is_file():
        pytest.skip(f"{WREN} not present")
    from test_via_stub_groundtruth import PCBNEW_SCRIPT

    proc = subprocess.run(
        [pcbnew_python, "-c", PCBNEW_SCRIPT, str(WREN)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = {
        w["uuid"]: w["connected"]
        for w in json.loads(proc.stdout.strip().splitlines()[-1])
        if w["kind"] == "via"
    }
    board = read_board(str(WREN))
    s = Analysis(board).via_stubs
    ours = {
        s.uuid[i]: np.flatnonzero(s.connected[i]).tolist()
        for i in range(len(s))
        if s.via_row[i] >= 0
    }
    assert len(ours) == len(want) == 4374
    diff = {k: (ours[k], v) for k, v in want.items() if ours[k] != v}
    assert diff == {}
    p3v3 = s.rows_for_nets([list(board.nets).index("P3V3")])
    assert p3v3.size
    assert not any(s.connected[i].all() for i in p3v3.tolist())
