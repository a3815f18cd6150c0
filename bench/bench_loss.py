#!/usr/bin/env python3
"""What the insertion-loss check costs: ``accel-drc check`` with and without it, and the loss
table alone.

    python bench/bench_loss.py BOARD [--repeat N] [--class C]

Runs ``accel-drc check BOARD`` ``--repeat`` times with the ``insertion_loss`` rules enabled and
as many with them disabled (a temporary config adding ``rules: {'*.insertion_loss.*':
{enabled: false}}`` to the board's own), interleaved, and prints the best wall time of each and
the difference (the issue's budget: within 0.3 s on vme-wren).  Then, in this process, the CPU
time of :func:`accel_drc.analysis.loss.loss_table` from an empty cache once the impedance table
it stands on is computed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def _config(board: Path, disable: bool) -> str | None:
    own = board.with_name("accel-drc.yaml")
    data = yaml.safe_load(own.read_text()) if own.exists() else {}
    data = data or {}
    if disable:
        data.setdefault("rules", {})["*.insertion_loss.*"] = {"enabled": False}
    fd, path = tempfile.mkstemp(suffix=".yaml")
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(data, fh)
    return path


def _run(board: Path, cfg: str, cls: str | None) -> float:
    cmd = [sys.executable, "-m", "accel_drc.cli", "check", str(board), "--config", cfg, "--quiet"]
    if cls:
        cmd += ["--class", cls]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 5):
        raise SystemExit(f"check failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("board")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--class", dest="cls", default=None)
    args = ap.parse_args()
    board = Path(args.board)
    on, off = _config(board, False), _config(board, True)
    assert on and off
    t_on: list[float] = []
    t_off: list[float] = []
    try:
        for _ in range(args.repeat):
            t_off.append(_run(board, off, args.cls))
            t_on.append(_run(board, on, args.cls))
    finally:
        os.unlink(on)
        os.unlink(off)
    print(
        f"check without insertion_loss: best {min(t_off):.2f} s  ({', '.join(f'{t:.2f}' for t in t_off)})"
    )
    print(
        f"check with insertion_loss:    best {min(t_on):.2f} s  ({', '.join(f'{t:.2f}' for t in t_on)})"
    )
    print(f"difference (best - best):     {min(t_on) - min(t_off):+.2f} s  (budget +0.30 s)")

    from accel_drc.analysis import Analysis
    from accel_drc.analysis.impedance import pair_table
    from accel_drc.analysis.loss import loss_table
    from accel_drc.readers import read_board

    a = Analysis(read_board(str(board)))
    _ = a.materials, a.plane_layers, a.track_index
    pair_table(a)
    _ = a.via_stubs
    c0 = time.process_time()
    chans = loss_table(a)
    dt = time.process_time() - c0
    rows = sum(len(c.layers) for c in chans)
    print(f"loss_table alone: {dt:.3f} s CPU, {len(chans)} channels, {rows} pair-layers")


if __name__ == "__main__":
    main()
