"""PDN plane geometry (rails, plane pairs, capacitors): CPU before/after, in the same run.

    python bench/bench_pdn.py [board] [--before REV] [--repeat 3] [--check]

Each run is a fresh process that reads the board, parses the zone fills (shared with the
classifier's plane fractions, so not counted here) and then computes ``Analysis.rails``: the
CPU seconds of that step (all threads: ``time.process_time``), serially (one worker: the GEOS
work itself) and with the default thread pool.  ``before`` is ``REV`` extracted with
``git archive`` (:mod:`_before`); runs of both alternate so the load of a shared machine falls on
both.  The rails of both must be equal (names, positions, plane-pair areas to the last bit).
Both trees are byte-compiled first.  ``--check`` also times the whole ``check --json --html`` (CPU of all threads, wall) both ways.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _before  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"

SCRIPT = r"""
import json, sys, time
from accel_drc.readers import read_board
from accel_drc.analysis import Analysis
import accel_drc.analysis.pdn as P
b = read_board(sys.argv[1])
n = sum(len(r) for z in b.zones for layer in z.filled for r in z.filled[layer])
if sys.argv[2] == "serial":
    getattr(P, "planes", P).workers = lambda: 1  # the plane geometry's pool (pdn.py before the split)
a = Analysis(b)
t = time.process_time(), time.perf_counter()
rails = a.rails
cpu, wall = time.process_time() - t[0], time.perf_counter() - t[1]
sig = [[r.name, r.pos, r.layer, r.role, len(r.decaps),
        [[p.rail_layer, p.ground_layer, p.area_mm2.hex(), p.capacitance_f] for p in r.plane_pairs]]
       for r in rails]
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "rails": sig}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board", nargs="?", default=str(BOARD))
    ap.add_argument("--before", default="a16b9a6", help="revision to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="also time check --json --html")
    args = ap.parse_args()
    before = _before.tree(args.before)
    # both sides with their bytecode compiled, as an installed wheel has it (this machine sets
    # PYTHONDONTWRITEBYTECODE: without it every run would time the compiler too)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for pkg in (before / "engine" / "accel_drc", ROOT / "engine" / "accel_drc"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(pkg)], env=env, check=False)
    best: dict[tuple[str, str], float] = {}
    sigs: dict[str, object] = {}
    for _ in range(max(1, args.repeat)):
        for mode in ("serial", "pool"):
            for label, root in (("before", before), ("after", None)):
                cmd = [sys.executable, "-c", SCRIPT, args.board, mode]
                _w, _c, _mb, rc, out = _before.run(cmd, _before.env(root))
                if rc != 0:
                    print(f"{label} {mode}: exit {rc}", file=sys.stderr)
                    continue
                got = json.loads(out.strip().splitlines()[-1])
                k = (label, mode)
                best[k] = min(got["cpu_s"], best.get(k, got["cpu_s"]))
                sigs[label] = got["rails"]
    print(f"Analysis.rails on {Path(args.board).name}, CPU s (best of {args.repeat}); "
          f"before = {args.before}")  # fmt: skip
    print(f"{'':22} {'before':>8} {'after':>8} {'ratio':>6}")
    for mode, what in (("serial", "one thread (GEOS work)"), ("pool", "thread pool (all CPU)")):
        b, a = best.get(("before", mode)), best.get(("after", mode))
        if b and a:
            print(f"{what:22} {b:8.3f} {a:8.3f} {a / b:6.2f}")
    print("rails identical (areas to the bit):", sigs.get("before") == sigs.get("after"))
    if args.check:
        res: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(max(1, args.repeat)):
                for label, root in (("before", before), ("after", None)):
                    cmd = [sys.executable, "-m", "accel_drc.cli", "check", args.board,
                           "--json", f"{tmp}/o.json", "--html", f"{tmp}/o.html"]  # fmt: skip
                    w, c, _mb, rc, _out = _before.run(cmd, _before.env(root))
                    if rc in (0, 5):
                        res[label].append((c, w))
        print("check --json --html, best CPU s / best wall s:")
        for label in ("before", "after"):
            if res[label]:
                print(f"  {label:6} {min(c for c, _ in res[label]):6.2f} "
                      f"{min(w for _, w in res[label]):6.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
