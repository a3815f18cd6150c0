"""Compare the connectivity analysis with KiCad's DRC ``unconnected_items``, net for net.

Usage: ``python bench/kicad_unconnected.py BOARD.kicad_pcb DRC.json [...pairs]``, or
``--corpus DIR`` (each ``DIR/<id>/source.json`` with its cached KiCad result under
``DIR/_results/<sha256[:24]>/kicad{9,10}.json``).  Prints, per board, the nets KiCad reports
unconnected and the nets :func:`accel_drc.analysis.connectivity.net_islands` finds open, and
the differences.  Exit 0 when every board agrees.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import time

from accel_drc.analysis.connectivity import net_islands
from accel_drc.readers import read_board

_NET = re.compile(r"\[(.*)\]")


def kicad_open_nets(drc: dict) -> set[str]:
    """Net names of KiCad's ``unconnected_items`` (the net is written in brackets)."""
    out = set()
    for item in drc.get("unconnected_items", []):
        for it in item.get("items", []):
            m = _NET.search(it.get("description", ""))
            if m:
                out.add(m.group(1))
    return out


def our_open_nets(path: str) -> tuple[set[str], float]:
    """Net names whose pads our connectivity splits into more than one island, and the time."""
    board = read_board(path)
    nets = {pad.net for _fp, pad in board.pads if pad.net}
    t0 = time.perf_counter()
    isl = net_islands(board, nets)
    dt = time.perf_counter() - t0
    # KiCad prints a net's escaped slash ``{slash}`` as ``/``
    return {board.nets[n].replace("{slash}", "/") for n, i in isl.items() if i.unconnected}, dt


#: KiCad's DRC stops listing violations of one kind at this many items (its error limit), so a
#: report with this many unconnected items is a subset of the truth, not the whole of it
KICAD_ITEM_CAP = 499


def kicad_capped(drc: dict) -> bool:
    """Whether KiCad's ``unconnected_items`` stopped at :data:`KICAD_ITEM_CAP`."""
    return len(drc.get("unconnected_items", [])) >= KICAD_ITEM_CAP


def compare(path: str, drc_path: str) -> bool:
    """Print the two lists of open nets of one board and their differences; True when they
    agree.  Where KiCad capped its list, agreement means every net KiCad lists is ours too
    (the nets past the cap are unknown), and the report says so."""
    with open(drc_path) as f:
        drc = json.load(f)
    theirs = kicad_open_nets(drc)
    ours, dt = our_open_nets(path)
    capped = kicad_capped(drc)
    same = theirs <= ours if capped else ours == theirs
    note = f" (KiCad stopped at {KICAD_ITEM_CAP} items: its nets compared only)" if capped else ""
    print(
        f"{os.path.basename(path)}: kicad {len(theirs)} open nets, ours {len(ours)} "
        f"({dt:.2f} s){note}"
    )
    if capped:
        ours = ours & theirs
    for n in sorted(ours - theirs):
        print(f"  only ours: {n}")
    for n in sorted(theirs - ours):
        print(f"  only KiCad: {n}")
    return same


def corpus_pairs(root: str) -> list[tuple[str, str]]:
    out = []
    for src in sorted(glob.glob(os.path.join(root, "*", "source.json"))):
        with open(src) as f:
            meta = json.load(f)
        board = os.path.join(os.path.dirname(src), meta["board"])
        res = os.path.join(root, "_results", meta["sha256"][:24])
        for k in ("kicad10.json", "kicad9.json"):
            if os.path.exists(os.path.join(res, k)):
                out.append((board, os.path.join(res, k)))
                break
        else:
            print(f"{os.path.basename(board)}: no KiCad result cached")
    return out


def main(argv: list[str]) -> int:
    pairs = corpus_pairs(argv[1]) if argv[0] == "--corpus" else list(zip(argv[::2], argv[1::2]))
    ok = True
    for board, drc in pairs:
        ok &= compare(board, drc)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
