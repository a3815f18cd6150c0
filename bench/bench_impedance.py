#!/usr/bin/env python3
"""CPU time of the impedance table (``pair_table``: every pair × layer, measured and solved).

    python bench/bench_impedance.py BOARD [BOARD ...] [--repeat N]

For each board: reads it, computes what the table stands on (plane layers, track index) outside
the timed part, then times ``pair_table`` from an empty cache (CPU seconds, the robust figure
on a shared machine; best of ``--repeat``).  Prints the rows, the distinct microstrip
geometries, how each row's Zdiff was obtained, and the seconds.  Run it with the code before and
after a change (``PYTHONPATH=<old checkout>/engine``) to compare: ``docs/impedance.md`` keeps
the figures.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import time

from accel_drc.analysis import Analysis
from accel_drc.analysis import impedance as imp
from accel_drc.readers import read_board


def bench(path: str, repeat: int) -> None:
    t0 = time.perf_counter()
    board = read_board(path)
    a = Analysis(board)
    _ = a.plane_layers, a.track_index, a.diff_pairs
    # the rules library (``check`` loads it anyway; the stack-up basis reads it)
    with contextlib.suppress(Exception):  # an older checkout, or no rules directory
        _ = a.materials
    prep = time.perf_counter() - t0
    best = None
    rows = []
    for _ in range(repeat):
        a.__dict__.pop("_impedance_cache", None)
        c0 = time.process_time()
        rows = imp.pair_table(a)
        dt = time.process_time() - c0
        best = dt if best is None else min(best, dt)
    methods = collections.Counter(r.method for r in rows)
    ms = {
        (round(r.width_mm, 3), round(r.gap_mm, 3), r.stack.h_below_mm, r.stack.t_mm, r.stack.mask)
        for r in rows
        if r.stack.structure == "microstrip" and r.zdiff_ohm is not None
    }
    print(f"{path}: read + planes + index {prep:.1f} s wall")
    print(f"  {len(rows)} pair-layers, {len(ms)} distinct microstrip geometries")
    for m, n in methods.most_common():
        print(f"    {n:6d}  {m}")
    budget = sum(1 for r in rows if any("closed form used" in x for x in r.notes))
    print(f"  rows on a budget fallback: {budget}")
    print(f"  pair_table: {best:.2f} s CPU (best of {repeat})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("boards", nargs="+")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    for b in args.boards:
        bench(b, args.repeat)


if __name__ == "__main__":
    main()
