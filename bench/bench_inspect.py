"""Time ``accel-drc inspect --json`` on a big board beside KiCad's own loader and kiutils.

Each tool runs in its own subprocess; wall time is measured around it and peak memory is the
child's own ``ru_maxrss`` (``os.wait4``), so the figures do not mix.  KiCad's ``pcbnew`` runs
under ``/usr/bin/python3`` (the interpreter its module is built for), kiutils in this venv.
While KiCad has the board loaded, the script also takes its counts and compares them with
accel-drc's JSON, so the speed-up is measured on a read that gives the same answer.

Usage::

    python bench/bench_inspect.py [--board PATH] [--repeat 3] [--skip-kicad] [--skip-kiutils]
                                  [--before REV | --before none] [--json results.json]

Default board: ``../shared/boards/vme-wren/vme-wren.kicad_pcb`` (69 MB, 12 layers; also in
Debian's ``kicad-demos``).  Prints a table with seconds, peak MB and ratios.

Before/after (issue 18): ``--before REV`` (default: main before the speed work) also runs
``inspect`` from that revision, alternating with this one, and times the stages a ``check``
goes through before the checks (read, zone fills, plane fractions, classification, PDN plane
geometry) in CPU seconds for both (see ``bench/_before.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)

DEFAULT_BOARD = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"

KICAD_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import pcbnew
t1 = time.perf_counter()
board = pcbnew.LoadBoard(sys.argv[1])
t2 = time.perf_counter()
vias = {"through": 0, "blind_buried": 0, "micro": 0}
seg = arc = 0
kinds = {pcbnew.VIATYPE_THROUGH: "through", pcbnew.VIATYPE_MICROVIA: "micro"}
for n in ("VIATYPE_BLIND_BURIED", "VIATYPE_BLIND", "VIATYPE_BURIED"):  # KiCad 9; KiCad 10
    if hasattr(pcbnew, n):
        kinds[getattr(pcbnew, n)] = "blind_buried"
for t in board.GetTracks():
    c = t.GetClass()
    if c == "PCB_VIA":
        vias[kinds.get(t.GetViaType(), "other")] = vias.get(kinds.get(t.GetViaType(), "other"), 0) + 1
    elif c == "PCB_ARC":
        arc += 1
    else:
        seg += 1
bb = board.GetBoardEdgesBoundingBox()
area = 0.0
for z in board.Zones():
    for layer in z.GetLayerSet().CuStack():
        if z.HasFilledPolysForLayer(layer):
            area += z.GetFilledPolysList(layer).Area()
print(json.dumps({
    "copper_fill_area_mm2": area / 1e12,
    "import_s": t1 - t0, "load_s": t2 - t1,
    "counts": {"segments": seg, "arcs": arc, "vias": sum(vias.values()),
               "footprints": len(board.GetFootprints()),
               "pads": sum(len(f.Pads()) for f in board.GetFootprints()),
               "nets": sum(1 for n in board.GetNetsByName().keys() if str(n) != ""),
               "zones": len(board.Zones())},
    "vias": vias, "copper_layers": board.GetCopperLayerCount(),
    "board_size_nm": [bb.GetWidth(), bb.GetHeight()],
    "thickness_nm": board.GetDesignSettings().GetBoardThickness(),
}))
"""

KIUTILS_SCRIPT = r"""
import sys, time
t0 = time.perf_counter()
from kiutils.board import Board
t1 = time.perf_counter()
b = Board.from_file(sys.argv[1])
t2 = time.perf_counter()
print(t2 - t1, len(b.traceItems), len(b.footprints))
"""

FULL_READ_SCRIPT = r"""
import sys
from accel_drc.readers import read_board
b = read_board(sys.argv[1])
n = sum(len(p) for z in b.zones for layer in z.filled for p in z.filled[layer])
area = sum(z.filled_area_mm2(layer) for z in b.zones for layer in z.filled)
print(n, repr(area))
"""


def run(cmd: list[str]) -> tuple[float, float, int, str, str, float]:
    """(wall seconds, peak MB, exit code, stdout, stderr, CPU seconds) of one child process.

    CPU seconds (user + system, from the child's own rusage) are reported beside wall time
    because on a shared machine wall time includes waiting for a core."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        peak_mb = usage.ru_maxrss / 1024.0  # Linux: KiB
        cpu = usage.ru_utime + usage.ru_stime
        return elapsed, peak_mb, proc.returncode, out.read().decode(), err.read().decode(), cpu


def accel_drc_cmd() -> list[str]:
    exe = shutil.which("accel-drc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "accel_drc.cli"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default=str(DEFAULT_BOARD))
    ap.add_argument("--repeat", type=int, default=3, help="accel-drc runs (best time is kept)")
    ap.add_argument("--skip-kicad", action="store_true")
    ap.add_argument("--skip-kiutils", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument(
        "--before",
        default=_before.DEFAULT_BEFORE,
        help="git revision to compare with, run alternately ('none' to skip)",
    )
    args = ap.parse_args(argv)
    board = args.board
    if not os.path.isfile(board):
        print(f"board not found: {board}", file=sys.stderr)
        return 1
    size_mb = os.path.getsize(board) / 1e6
    rows: list[dict] = []

    before_tree = None if args.before == "none" else _before.tree(args.before)
    best = None
    old_best = None
    for _ in range(max(1, args.repeat)):
        if before_tree is not None:  # alternating, so the machine's load falls on both
            t, cpu, mb, rc, _out = _before.run(
                [sys.executable, "-m", "accel_drc.cli", "inspect", "--json", board],
                _before.env(before_tree),
            )
            if rc == 0 and (old_best is None or t < old_best[0]):
                old_best = (t, mb, cpu)
        t, mb, rc, out, err, cpu = run([*accel_drc_cmd(), "inspect", "--json", board])
        if rc != 0:
            print(f"accel-drc failed ({rc}): {err}", file=sys.stderr)
            return 1
        if best is None or t < best[0]:
            best = (t, mb, out, cpu)
    assert best is not None
    phases = None
    if before_tree is not None:
        phases = _before.phases(board, before_tree, args.repeat)
        _before.print_phases(board, args.before, phases)
        if old_best is not None:
            print(
                f"inspect --json: before {old_best[0]:.2f} s wall, {old_best[2]:.2f} s CPU, "
                f"{old_best[1]:.0f} MB; after {best[0]:.2f} s wall, {best[3]:.2f} s CPU, "
                f"{best[1]:.0f} MB"
            )
        print()
    ours = json.loads(best[2])
    rows.append(
        {
            "tool": "accel-drc inspect --json",
            "seconds": best[0],
            "cpu_s": best[3],
            "peak_mb": best[1],
        }
    )

    fill_area = None
    t, mb, rc, out, _, cpu = run([sys.executable, "-c", FULL_READ_SCRIPT, board])
    if rc == 0:
        fill_area = float(out.split()[1])
        rows.append(
            {
                "tool": "accel-drc read + every zone fill",
                "seconds": t,
                "cpu_s": cpu,
                "peak_mb": mb,
                "note": f"{int(out.split()[0])} fill points",
            }
        )

    agree = None
    if not args.skip_kicad and os.path.exists("/usr/bin/python3"):
        t, mb, rc, out, err, cpu = run(["/usr/bin/python3", "-c", KICAD_SCRIPT, board])
        if rc == 0:
            kicad = json.loads(out.strip().splitlines()[-1])
            rows.append(
                {
                    "tool": "KiCad pcbnew.LoadBoard",
                    "seconds": t,
                    "cpu_s": cpu,
                    "peak_mb": mb,
                    "note": f"load {kicad['load_s']:.1f} s",
                }
            )
            vt = ours["via_types"]
            mine = {
                "counts": ours["counts"],
                "vias": {
                    "through": vt["through"],
                    "blind_buried": vt["blind"] + vt["buried"],
                    "micro": vt["micro"],
                },
                "copper_layers": ours["layer_count"],
                "board_size_nm": [round(v * 1e6) for v in ours["board_size_mm"]],
                "thickness_nm": round(ours["board_thickness_mm"] * 1e6),
            }
            theirs = {k: kicad[k] for k in mine}
            agree = mine == theirs
            if fill_area is not None:
                kicad_area = kicad["copper_fill_area_mm2"]
                same_area = abs(fill_area - kicad_area) <= 1e-9 * max(1.0, abs(kicad_area))
                print(
                    f"copper fill area: accel-drc {fill_area:.6f} mm², KiCad {kicad_area:.6f} mm²"
                    f" ({'equal' if same_area else 'DIFFERENT'})"
                )
                agree = agree and same_area
            if not agree:
                print(
                    "MISMATCH with KiCad:",
                    json.dumps({"accel-drc": mine, "kicad": theirs}),
                    file=sys.stderr,
                )
        else:
            print(f"KiCad not run: {err.strip()[-300:]}", file=sys.stderr)

    if not args.skip_kiutils:
        t, mb, rc, out, err, cpu = run([sys.executable, "-c", KIUTILS_SCRIPT, board])
        if rc == 0:
            rows.append(
                {"tool": "kiutils Board.from_file", "seconds": t, "cpu_s": cpu, "peak_mb": mb}
            )
        else:
            print(f"kiutils not run: {err.strip()[-300:]}", file=sys.stderr)

    base = rows[0]["seconds"]
    print(f"board: {board} ({size_mb:.1f} MB)")
    base_cpu = rows[0]["cpu_s"]
    print(f"{'tool':34} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'x wall':>7} {'x CPU':>7}  note")
    for r in rows:
        ratio = r["seconds"] / base if base else float("nan")
        cpu_ratio = r["cpu_s"] / base_cpu if base_cpu else float("nan")
        print(
            f"{r['tool']:34} {r['seconds']:7.2f} {r['cpu_s']:7.2f} {r['peak_mb']:8.0f} "
            f"{ratio:7.1f} {cpu_ratio:7.1f}  {r.get('note', '')}"
        )
    if agree is not None:
        print(f"counts, via types, size and thickness agree with KiCad: {'yes' if agree else 'NO'}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "board": board,
                    "board_mb": size_mb,
                    "rows": rows,
                    "agree_with_kicad": agree,
                    "before": args.before,
                    "inspect_before": old_best,
                    "stages_cpu_s": phases,
                },
                indent=2,
            )
        )
    return 0 if agree in (None, True) else 2


if __name__ == "__main__":
    sys.exit(main())
