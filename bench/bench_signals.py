"""Signal and connector recognition, before/after, CPU seconds (issue 18).

The per-net name work ahead of the checks: ``assign_signals`` (every net name against the
recognition patterns of ``rules/signals.yaml``, then the connector lane pins) and the two
further ``connector_nets`` calls of the coverage table.  Each run is a fresh process: it reads
the board and loads the library untimed, then times (``time.process_time``) the first
``assign_signals`` (the one a check pays: pattern compilation included) and two
``connector_nets`` calls.  Runs of the old revision (``--before``, extracted with ``git archive``)
and of this tree alternate; the best of ``--repeat`` runs is printed.

    .venv/bin/python bench/bench_signals.py [BOARD] [--before REV] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _before import env, run, tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VME_WREN = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"

SCRIPT = r"""
import json, sys, time
from accel_drc.readers import read_board
from accel_drc.packs import load_library
from accel_drc.analysis.signals import assign_signals, connectors_for
from accel_drc.analysis.channels import connector_nets
board = read_board(sys.argv[1])
lib = load_library()
t0 = time.process_time()
sig = assign_signals(board, lib, None)
t1 = time.process_time()
for _ in range(2):
    connector_nets(board, connectors_for(lib))
t2 = time.process_time()
print(json.dumps({"assign_signals": t1 - t0, "coverage connector_nets x2": t2 - t1,
                  "total": t2 - t0, "typed": len(sig), "nets": len(board.nets)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board", nargs="?", default=str(VME_WREN))
    ap.add_argument("--before", default="a16b9a6", help="git revision to compare with")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    old = tree(a.before)
    best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
    info: dict[str, int] = {}
    for _ in range(a.repeat):
        for label, root in (("before", old), ("after", None)):
            _w, _c, _mb, rc, out = run([sys.executable, "-c", SCRIPT, a.board], env(root))
            if rc != 0:
                sys.exit(f"{label}: the child failed (exit {rc})")
            got = json.loads(out.strip().splitlines()[-1])
            info[label] = got.pop("typed")
            info["nets"] = got.pop("nets")
            for k, v in got.items():
                best[label][k] = min(v, best[label].get(k, v))
    if info["before"] != info["after"]:
        sys.exit(f"typed nets differ: before {info['before']}, after {info['after']}")
    print(
        f"{Path(a.board).name}: {info['nets']} nets, {info['after']} typed; CPU s, best of {a.repeat}"
    )
    print(f"{'stage':28} {'before':>8} {'after':>8} {'ratio':>6}   (before = {a.before})")
    for k in best["after"]:
        b, f = best["before"][k], best["after"][k]
        print(f"{k:28} {b:8.4f} {f:8.4f} {f / b if b else 0:6.2f}")


if __name__ == "__main__":
    main()
