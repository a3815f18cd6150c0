#!/usr/bin/env python3
"""CPU time of the impedance table (``pair_table``: every pair × layer, measured and solved).

    python bench/bench_impedance.py BOARD [BOARD ...] [--repeat N]
    python bench/bench_impedance.py BOARD --check [--before REV] [--repeat N]

For each board: reads it, computes what the table stands on (plane layers, track index) outside
the timed part, then times ``pair_table`` from an empty cache (CPU seconds, the robust figure
on a shared machine; best of ``--repeat``).  Prints the rows, the distinct microstrip
geometries, how each row's Zdiff was obtained, and the seconds.  Run it with the code before and
after a change (``PYTHONPATH=<old checkout>/engine``) to compare: ``docs/impedance.md`` keeps
the figures.

``--check`` times what the impedance check itself costs inside a real ``accel-drc check``
(every impedance rule: the table, the remedies' inversions, the mask-εr alternatives), in a
child process for the code of ``--before`` (a git revision, ``bench/_before.py``) and for this
checkout, alternately: CPU seconds of the check functions (``thread_time``: the PDN thread that
runs beside the checks is not counted) and of the field solver inside them,
the number of field solutions, and whether the impedance findings (messages, evidence,
remedies: the JSON) are identical.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import sys
import time
from pathlib import Path

from accel_drc.analysis import Analysis
from accel_drc.analysis import impedance as imp
from accel_drc.readers import read_board

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)

#: run in a child: a full ``check --json`` with the impedance check and the solver timed
CHECK_SCRIPT = r"""
import hashlib, json, sys, tempfile, time
import accel_drc.checks.impedance as ci
import accel_drc.analysis.impedance.solver as sv
import accel_drc.analysis.impedance.table as tb
from accel_drc.checks import REGISTRY
acc = {"check_s": 0.0, "rules": 0, "solver_s": 0.0, "solves": 0}
orig_check, orig_fd = ci.check_impedance, sv.fd_coupled
depth = [0]
def check(ctx, rule):
    c = time.thread_time()
    try:
        return orig_check(ctx, rule)
    finally:
        acc["check_s"] += time.thread_time() - c
        acc["rules"] += 1
def fd(*a, **k):
    depth[0] += 1
    c = time.thread_time()
    try:
        return orig_fd(*a, **k)
    finally:
        depth[0] -= 1
        if depth[0] == 0:
            acc["solver_s"] += time.thread_time() - c
            acc["solves"] += 1
REGISTRY[ci.KIND] = check
sv.fd_coupled = fd
if getattr(tb, "fd_coupled", None) is orig_fd:
    tb.fd_coupled = fd
from accel_drc.cli import main
out = tempfile.mktemp(suffix=".json")
sys.argv = ["accel-drc", "check", sys.argv[1], "--json", out]
try:
    main()
except SystemExit:
    pass
rep = json.load(open(out))
imp = [f for f in rep["findings"] if f.get("check") == "impedance"]
acc["findings"] = len(imp)
acc["digest"] = hashlib.sha256(json.dumps(imp, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps(acc))
"""


def bench_check(path: str, before: str, repeat: int) -> None:
    """Before/after CPU of the impedance check inside ``check`` (children alternate)."""
    roots = {"before": _before.tree(before), "after": None}
    best: dict[str, dict] = {}
    for _ in range(max(1, repeat)):
        for label, root in roots.items():
            *_, rc, out = _before.run([sys.executable, "-c", CHECK_SCRIPT, path], _before.env(root))
            if rc != 0 or not out.strip():
                print(f"  {label}: child failed (exit {rc})")
                continue
            got = json.loads(out.strip().splitlines()[-1])
            if label not in best or got["check_s"] < best[label]["check_s"]:
                best[label] = got
    print(f"{path}: impedance check inside `check --json`, CPU s (best of {repeat})")
    print(f"{'':8} {'check':>7} {'solver':>7} {'solves':>7} {'rules':>6} {'findings':>9}  digest")
    for label in roots:
        g = best.get(label)
        if g:
            print(
                f"{label:8} {g['check_s']:7.3f} {g['solver_s']:7.3f} {g['solves']:7d} "
                f"{g['rules']:6d} {g['findings']:9d}  {g['digest']}"
            )
    if len(best) == 2:
        b, a = best["before"], best["after"]
        print(f"ratio    {b['check_s'] / max(a['check_s'], 1e-9):7.1f}x (before = {before})")
        same = b["digest"] == a["digest"]
        print(f"impedance findings identical: {'yes' if same else 'NO'}")


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
    ap.add_argument("--check", action="store_true", help="time the check, before vs after")
    ap.add_argument("--before", default="main", help="revision for --check's before")
    args = ap.parse_args()
    for b in args.boards:
        if args.check:
            bench_check(b, args.before, args.repeat)
        else:
            bench(b, args.repeat)


if __name__ == "__main__":
    main()
