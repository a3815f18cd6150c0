#!/usr/bin/env python3
"""The impedance table's pair measurement on one thread vs two, alternated in one process.

    python bench/bench_pair_threads.py BOARD [--repeat N]

``pair_table`` measures the pairs in batches of ~130k segments (``measure_pairs``: sorts,
``searchsorted``, gathers and arithmetic on 10⁵-element arrays, all with the GIL released) and
runs the batches on two threads when two CPUs are there.  This reads the board once, then times
``pair_table`` from an empty cache N times each way, alternating (sequential = the thread count
forced to 1), and prints CPU and wall seconds of every run, their medians, and whether the rows
are identical.  On a shared machine the wall gain depends on the second core being free at that
moment: read the CPU column for the cost and the best/median wall for the gain.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from accel_drc.analysis import Analysis
from accel_drc.analysis.impedance import table
from accel_drc.readers import read_board

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    board = read_board(args.board)
    a = Analysis(board)
    _ = a.plane_layers, a.track_index, a.diff_pairs
    with contextlib.suppress(Exception):  # the rules library (the stack-up basis reads it)
        _ = a.materials
    real_workers = table.workers
    got: dict[str, list[tuple[float, float]]] = {"1 thread": [], "2 threads": []}
    rows: dict[str, object] = {}
    for _ in range(args.repeat):
        for mode in got:
            table.workers = (lambda: 1) if mode == "1 thread" else real_workers  # type: ignore[assignment]
            a.__dict__.pop("_impedance_cache", None)
            c0, w0 = time.process_time(), time.perf_counter()
            rows[mode] = table.pair_table(a)
            got[mode].append((time.process_time() - c0, time.perf_counter() - w0))
            print(f"  {mode:9s} CPU {got[mode][-1][0]:5.2f} s  wall {got[mode][-1][1]:5.2f} s")
    table.workers = real_workers  # type: ignore[assignment]
    _before.print_medians(got, 9)
    print("rows identical:", rows["1 thread"] == rows["2 threads"])


if __name__ == "__main__":
    main()
