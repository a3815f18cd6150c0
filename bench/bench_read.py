#!/usr/bin/env python3
"""The KiCad reader on one thread vs two, alternated in one process, with a before revision.

    python bench/bench_read.py BOARD [--repeat N] [--before REV | none]

The reader runs its parenthesis scan in two halves and its track and via blocks on two threads
(numpy with the GIL released), and prepares the footprints' children and pad fields on a third
while tracks, vias and zones are read (issue 18).  This times ``kicad_file`` reading the board
from bytes already in memory (no disk), N times each way, alternating: "1 thread" forces
``concurrency.workers()`` to 1 (every stage in turn on the calling thread), "2 threads" is the
default.  It prints CPU and wall seconds of every run, their medians and the best wall, and
whether the two boards read are identical (tracks, vias, nets, warnings, footprints).

``--before REV`` (default: ``c9e82dc``, main before this work) reads the same bytes with that
revision's reader in a child process, alternating with this one, so the load of a shared machine
falls on both.  On a shared machine the wall gain depends on the second core being free at that
moment: read the CPU column for the cost and the best/median wall for the gain.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)

CHILD = r"""
import json, sys, time
from accel_drc.readers import kicad_file
data = open(sys.argv[1], "rb").read()
c, w = time.process_time(), time.perf_counter()
kicad_file._read_bytes(data, sys.argv[1], None, None)
print(json.dumps([time.process_time() - c, time.perf_counter() - w]))
"""


def _digest(board: object) -> tuple:
    t, v = board.tracks, board.vias  # type: ignore[attr-defined]
    return (
        t.start.tobytes(),
        t.end.tobytes(),
        t.mid.tobytes(),
        t.width.tobytes(),
        t.layer.tobytes(),
        t.net.tobytes(),
        tuple(t.uuid),
        v.pos.tobytes(),
        v.net.tobytes(),
        v.drill.tobytes(),
        tuple(v.uuid),
        board.nets,  # type: ignore[attr-defined]
        board.warnings,  # type: ignore[attr-defined]
        repr(board.footprints),  # type: ignore[attr-defined]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default="c9e82dc", help="git revision, or 'none'")
    args = ap.parse_args()
    from accel_drc import concurrency
    from accel_drc.readers import kicad_file

    data = Path(args.board).read_bytes()
    before_env = None
    if args.before != "none":
        before_env = _before.env(_before.tree(args.before))
    real = concurrency.workers
    modes = ["1 thread", "2 threads"] + ([f"before {args.before}"] if before_env else [])
    got: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    boards: dict[str, tuple] = {}
    for _ in range(args.repeat):
        for mode in modes:
            if mode.startswith("before"):
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, args.board],
                    env=before_env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                cpu, wall = json.loads(out.stdout.strip().splitlines()[-1])
            else:
                concurrency.workers = (lambda: 1) if mode == "1 thread" else real  # type: ignore[assignment]
                c0, w0 = time.process_time(), time.perf_counter()
                b = kicad_file._read_bytes(data, args.board, None, None)
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                boards[mode] = _digest(b)
                del b
            got[mode].append((cpu, wall))
            print(f"  {mode:16s} CPU {cpu:5.2f} s  wall {wall:5.2f} s", flush=True)
    concurrency.workers = real  # type: ignore[assignment]
    print(f"{args.board}: {len(data) / 1e6:.1f} MB")
    _before.print_medians(got, 16)
    print("boards identical:", boards["1 thread"] == boards["2 threads"])


if __name__ == "__main__":
    main()
