"""The batched connectivity join (all nets at once, issue 18) finds exactly the islands of the
per-net one: the same pad groups, loose pieces, routed length and gap, net by net, on real
boards (the bundled ones, Debian's kicad-demos) and on the synthetic accelerator boards, whose
deliberate defects include open channels."""

from __future__ import annotations

from pathlib import Path

import pytest
from accel_drc.analysis.connectivity import net_islands
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS, FIXTURES, need

DEMOS = Path("/usr/share/kicad/demos")
SYNTH = sorted((FIXTURES / "synth" / "boards").glob("*.kicad_pcb"))
# the demos with open nets (unrouted, half-routed) and the largest routed one
DEMO_BOARDS = [
    "multichannel/multichannel_mixer-unrouted.kicad_pcb",
    "royalblue54L_feather/RoyalBlue54L-Feather.kicad_pcb",
    "kit-dev-coldfire-xilinx_5213/kit-dev-coldfire-xilinx_5213.kicad_pcb",
    "video/video.kicad_pcb",
    "test_pads_inside_pads/test_pads_inside_pads.kicad_pcb",
]


def _same(path: Path) -> int:
    board = read_board(str(path))
    nets = range(1, len(board.nets))
    per_net = net_islands(board, nets, batched=False)
    batched = net_islands(board, nets, batched=True)
    assert batched.keys() == per_net.keys()
    for n, want in per_net.items():
        assert batched[n] == want, board.nets[n]
    return sum(1 for x in per_net.values() if x.open)


@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_bundled_boards(name: str) -> None:
    _same(FIXTURE_BOARDS[name])


@pytest.mark.parametrize("path", SYNTH, ids=[p.stem for p in SYNTH])
def test_synthetic_boards(path: Path) -> None:
    _same(path)


@pytest.mark.parametrize("rel", DEMO_BOARDS)
def test_kicad_demos(rel: str) -> None:
    need((DEMOS / rel).is_file(), "Debian's kicad-demos is not installed (apt: kicad-demos)")
    opened = _same(DEMOS / rel)
    if rel.startswith("multichannel/"):
        assert opened > 10  # the unrouted board: the comparison covered open nets


@pytest.mark.parametrize("path", SYNTH[:2], ids=[p.stem for p in SYNTH[:2]])
def test_groups_of_nets_equal_one_batch(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batched join run on small groups of nets (50 tracks each, so a net per group or a
    few) finds exactly the islands of one batch for the whole board and of the per-net path."""
    from accel_drc.analysis import connectivity

    board = read_board(str(path))
    nets = range(1, len(board.nets))
    whole = net_islands(board, nets, batched=True)
    monkeypatch.setattr(connectivity, "_GROUP_TRACKS", 50)
    grouped = net_islands(board, nets)
    assert grouped == whole == net_islands(board, nets, batched=False)
    assert sum(1 for x in grouped.values() if x.open) > 0
