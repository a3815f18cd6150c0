#!/usr/bin/env python3
"""CPU time of the buildability checks (issue 33) per board, against a peer measured in the same
run: ``drill_aspect_ratio``, ``microvia``, ``annular_ring`` and ``thermal_vias``
(``checks/_holes.py``'s one vectorised table of vias and plated pads).

    python bench/bench_holes.py [--synth-scale 10] [--no-synth] [--board PATH [--config YAML]]
                                [--class training] [--repeat 3] [--json out.json]

Each board is read once (the peer, timed in the same process: CPU seconds of
:func:`accel_drc.readers.read_board`, which every run pays); the facts other checks share
(the PDN rails, from which ``thermal_vias`` recognises the hot part, as ``pdn_impedance`` and
``ir_drop`` do) are computed once and timed on their own line; then each rule of these kinds
for the board's class runs ``--repeat`` times, timed with ``time.process_time``, the minimum
reported (CPU time: the run the other tenants of a shared machine disturbed least).  Each run
builds the hole table anew (it is not cached).  The ratio to the read says what the four
checks add to a run; also reported: µs per via.  The default boards are vme-wren (beside the clone) and the synthetic
training board at ``--synth-scale`` (10: 206,606 vias, 346 MB; generated into a temporary
directory, 3x its size must be free, and deleted after).  No numbers are asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VME = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"
GENERATOR = ROOT / "fixtures" / "synth" / "generate.py"
KINDS = ("drill_aspect_ratio", "microvia", "annular_ring", "thermal_vias")
MB_PER_K = 34.0  # the synthetic training board grows ≈ 34 MB per unit of scale (bench_scale)


def best_cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """(minimum CPU seconds of ``repeat`` calls of ``fn``, the last call's result)."""
    best, got = float("inf"), None
    for _ in range(max(repeat, 1)):
        t0 = time.process_time()
        got = fn()
        best = min(best, time.process_time() - t0)
    return best, got


def measure(board_path: Path, config: Path | None, board_class: str | None, repeat: int) -> dict:
    """Per kind: CPU seconds, findings, holes checked, the ratio to the peer (the read)."""
    from accel_drc.analysis import Analysis
    from accel_drc.checks import CheckContext, load_all
    from accel_drc.classify import classify
    from accel_drc.config import load_config
    from accel_drc.packs import load_library, rules_for_class
    from accel_drc.readers import read_board

    t0 = time.process_time()
    board = read_board(str(board_path))
    read_s = time.process_time() - t0
    lib = load_library()
    cfg = load_config(str(config) if config else None, str(board_path), lib)
    analysis = Analysis(board, cfg)
    analysis.library = lib
    cls = board_class or cfg.board_class or classify(board, analysis, lib).board_class
    rules, _ = rules_for_class(lib, cls)
    kinds = load_all()
    # the facts other checks ask for too (thermal_vias recognises the hot part from the PDN
    # rails, as pdn_impedance and ir_drop do): computed once, timed on their own line
    shared_s, _ = best_cpu(lambda: getattr(analysis, "rails", None), 1)
    vias = int(len(board.vias))
    out: dict[str, Any] = {"board": board_path.name, "class": cls, "vias": vias,
                           "read_cpu_s": read_s, "shared_cpu_s": shared_s, "kinds": {}}  # fmt: skip
    ctx = CheckContext(board=board, analysis=analysis, board_class=cls, config=cfg)
    for rule in (r for r in rules if r.check in KINDS):
        secs, got = best_cpu(lambda rule=rule: kinds[rule.check](ctx, rule), repeat)
        out["kinds"][rule.check] = {
            "rule": rule.id,
            "cpu_s": secs,
            "findings": len(got.findings),
            "checked": got.checked,
            "us_per_via": 1e6 * secs / vias if vias else None,
            "ratio_to_read": secs / read_s if read_s > 0 else None,
        }
    return out


def table(m: dict) -> str:
    """The figures of one board as text."""
    read = m["read_cpu_s"]
    rows = [f"{m['board']} (class {m['class']}, {m['vias']:,} vias)",
            f"  {'':<26}{'CPU ms':>9}{'µs/via':>9}{'× read':>9}{'checked':>9}{'findings':>9}",
            f"  {'peer: reading the board':<26}{1e3 * read:>9.1f}{'':>9}{1:>9.4f}",
            f"  {'shared facts (PDN rails)':<26}{1e3 * m['shared_cpu_s']:>9.1f}"]  # fmt: skip
    total = 0.0
    for kind, k in m["kinds"].items():
        total += k["cpu_s"]
        ratio = "-" if k["ratio_to_read"] is None else f"{k['ratio_to_read']:.4f}"
        per = "-" if k["us_per_via"] is None else f"{k['us_per_via']:.3f}"
        rows.append(f"  {kind:<26}{1e3 * k['cpu_s']:>9.1f}{per:>9}{ratio:>9}"
                    f"{k['checked']:>9}{k['findings']:>9}")  # fmt: skip
    if read > 0:
        rows.append(f"  {'all four':<26}{1e3 * total:>9.1f}{'':>9}{total / read:>9.4f}")
    return "\n".join(rows)


def synth_board(tmp: Path, scale: float) -> tuple[Path, Path]:
    """The synthetic training board at ``scale`` and its config, generated into ``tmp``."""
    need = 3 * (MB_PER_K * scale + 11) * 1e6
    free = shutil.disk_usage(tmp).free
    if free < need:
        raise SystemExit(f"bench_holes: {free / 1e9:.1f} GB free in {tmp}, {need / 1e9:.1f} needed")
    subprocess.run(
        [sys.executable, str(GENERATOR), str(tmp), "--scale", str(scale), "--only", "training-hgx"],
        check=True, capture_output=True,
    )  # fmt: skip
    return tmp / "training-hgx.kicad_pcb", tmp / "training-hgx.accel-drc.yaml"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", type=Path, help="one board (default: vme-wren and the synthetic)")
    ap.add_argument("--config", type=Path, help="the board's accel-drc.yaml")
    ap.add_argument("--class", dest="board_class", help="board class (default: as check)")
    ap.add_argument("--synth-scale", type=float, default=10.0)
    ap.add_argument("--no-synth", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-holes-") as tmpd:
        boards: list[tuple[Path, Path | None, str | None]] = []
        if args.board:
            boards.append((args.board, args.config, args.board_class))
        else:
            if VME.is_file():
                boards.append((VME, None, args.board_class))
            if not args.no_synth:
                pcb, cfg = synth_board(Path(tmpd), args.synth_scale)
                boards.append((pcb, cfg, args.board_class))
        for path, cfg, cls in boards:
            m = measure(path, cfg, cls, args.repeat)
            print(table(m), flush=True)
            results.append(m)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
