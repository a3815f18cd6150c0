#!/usr/bin/env python3
"""How ``accel-drc inspect`` and ``accel-drc check`` scale with board size.

    python bench/bench_scale.py [--scales 1 4 10] [--workdir /tmp/accel-drc-bench] [--keep]
                                [--json results.json] [--no-inspect] [--before REV | none]

For each K it generates ``training-hgx`` with ``fixtures/synth/generate.py --scale K`` outside the
repository, runs ``accel-drc inspect --json`` and ``accel-drc check --json`` each in its own
subprocess, and reports wall seconds and peak RSS (``os.wait4`` rusage of that one child) against
the file size, with seconds and peak MB per file MB (constant ratios = linear scaling).  The goal
of issue 18: ``check`` of the 346 MB board (K = 10) in ≤ 8 s wall and ≤ 1.5 GB, time per MB
flat within 1.5× from 40 MB (K = 1).

Before/after: ``--before REV`` (default: main before the speed work) runs the same commands
from that revision too, alternating with this one, and times the stages before the checks
(read, fills, classification, PDN geometry) of both in CPU seconds (``bench/_before.py``).

Big files: the disk is checked before each board is written (3× its expected size must be free)
and each board is deleted after its run unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)

GENERATOR = ROOT / "fixtures" / "synth" / "generate.py"
MB_PER_K = 34.0  # measured: training-hgx grows ≈ 33.5 MB per unit of K (+ ≈ 11 MB fixed)
GOAL_S, GOAL_MB, GOAL_AT_MB = 8.0, 1536.0, 346.0  # issue 18: wall s, peak MB, at file MB
GOAL_FLAT = 1.5  # issue 18: time per MB within 1.5x from 40 MB on


def accel_drc() -> list[str]:
    exe = shutil.which("accel-drc", path=str(Path(sys.executable).parent)) or shutil.which(
        "accel-drc"
    )
    return [exe] if exe else [sys.executable, "-m", "accel_drc.cli"]


def timed(cmd: list[str], stdout: Any = subprocess.DEVNULL) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MB, exit code) of one child process (wait4 rusage).

    CPU seconds (user + system) are the robust figure on a shared machine: wall time grows with
    the load of other processes, CPU time hardly does."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = (
        os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    )
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.returncode not in (0, 5):
        sys.stderr.write(f"{' '.join(cmd)} exit {proc.returncode}: {err[-1500:]}\n")
    rss_mb = usage.ru_maxrss / 1024.0  # Linux: KiB
    return wall, usage.ru_utime + usage.ru_stime, rss_mb, proc.returncode


def run_one(
    k: float,
    workdir: Path,
    do_inspect: bool,
    keep: bool,
    before: Path | None = None,
    before_rev: str = "",
) -> dict[str, Any]:
    out = workdir / f"k{k:g}"
    need = (11 + MB_PER_K * k) * 3e6
    free = shutil.disk_usage(workdir).free
    if free < need:
        raise SystemExit(
            f"not enough disk in {workdir}: {free / 1e9:.1f} GB free, {need / 1e9:.1f} GB needed"
        )
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(GENERATOR), str(out), "--only", "training-hgx", "--scale", f"{k:g}"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    gen_s = time.perf_counter() - t0
    board = out / "training-hgx.kicad_pcb"
    counts = json.loads((out / "training-hgx.counts.json").read_text("utf-8"))
    mb = board.stat().st_size / 1e6
    row: dict[str, Any] = {
        "scale": k,
        "file_mb": round(mb, 1),
        "segments": counts["segments"],
        "vias": counts["vias"],
        "pads": counts["pads"],
        "generate_s": round(gen_s, 2),
    }
    for what in ("inspect", "check") if do_inspect else ("check",):
        if what == "inspect":
            cmd = [*accel_drc(), "inspect", "--json", str(board)]
        else:
            cmd = [*accel_drc(), "check", str(board), "--json", str(out / "findings.json")]
            cmd.append("--quiet")
        if before is not None:  # the older revision first, then this one: same load on both
            bcmd = [sys.executable, "-m", "accel_drc.cli", *cmd[len(accel_drc()) :]]
            bwall, bcpu, brss, brc, _ = _before.run(bcmd, _before.env(before))
            row.update(
                {
                    f"before_{what}_s": round(bwall, 2),
                    f"before_{what}_cpu_s": round(bcpu, 2),
                    f"before_{what}_rss_mb": round(brss),
                    f"before_{what}_rc": brc,
                }
            )
        with open(out / f"{what}.stdout", "wb") as fh:
            wall, cpu, rss, rc = timed(cmd, stdout=fh)
        row.update(
            {
                f"{what}_s": round(wall, 2),
                f"{what}_cpu_s": round(cpu, 2),
                f"{what}_rss_mb": round(rss),
                f"{what}_rc": rc,
                f"{what}_cpu_s_per_mb": round(cpu / mb, 4),
                f"{what}_rss_per_mb": round(rss / mb, 2),
            }
        )
    try:
        doc = json.loads((out / "findings.json").read_text("utf-8"))
        row["findings"] = len(doc.get("findings", []))
        row["class"] = doc.get("classification", {}).get("class")
    except (OSError, ValueError):
        row["findings"] = None
    if before is not None:
        stages = _before.phases(str(board), before, 1)
        _before.print_phases(str(board), before_rev, stages)
        row["stages_cpu_s"] = stages
    row["load_avg_1min"] = round(os.getloadavg()[0], 1)
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return row


def table(rows: list[dict[str, Any]], do_inspect: bool) -> str:
    head = ["K", "MB", "segments", "vias", "gen s"]
    whats = ("inspect", "check") if do_inspect else ("check",)
    for what in whats:
        head += [f"{what} s wall (CPU)", f"{what} peak MB", f"{what} CPU s/MB", f"{what} MB/MB"]
    head += ["findings", "load"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        cells = [
            f"{r['scale']:g}",
            f"{r['file_mb']:.1f}",
            f"{r['segments']:,}",
            f"{r['vias']:,}",
            f"{r['generate_s']:.1f}",
        ]
        for what in whats:
            cells += [
                f"{r[what + '_s']:.1f} ({r[what + '_cpu_s']:.1f})",
                f"{r[what + '_rss_mb']:,}",
                f"{r[what + '_cpu_s_per_mb']:.3f}",
                f"{r[what + '_rss_per_mb']:.1f}",
            ]
        cells += [str(r.get("findings")), f"{r['load_avg_1min']:.1f}"]
        lines.append(" | ".join(cells))
    if any("before_check_s" in r for r in rows):
        lines += ["", "before/after (same run, alternating): s wall (CPU), peak MB"]
        for r in rows:
            for what in whats:
                if f"before_{what}_s" not in r:
                    continue
                lines.append(
                    f"K={r['scale']:g} {what}: before {r['before_' + what + '_s']:.1f} "
                    f"({r['before_' + what + '_cpu_s']:.1f}) s, {r['before_' + what + '_rss_mb']:,}"
                    f" MB -> after {r[what + '_s']:.1f} ({r[what + '_cpu_s']:.1f}) s, "
                    f"{r[what + '_rss_mb']:,} MB"
                )
    return "\n".join(lines)


def verdict(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    spr = [r["check_cpu_s_per_mb"] for r in rows]
    big = max(rows, key=lambda r: r["file_mb"])
    scale_to = GOAL_AT_MB / big["file_mb"]
    est_s = big["check_s"] * scale_to
    est_mb = big["check_rss_mb"] * scale_to
    flat = max(spr) / min(spr)
    met = est_s <= GOAL_S and est_mb <= GOAL_MB and flat <= GOAL_FLAT
    return (
        f"linearity: check CPU s/MB from {min(spr):.3f} to {max(spr):.3f} "
        f"(max/min {flat:.2f}, goal <= {GOAL_FLAT:g}); largest board {big['file_mb']:.0f} MB: "
        f"check {big['check_s']:.1f} s wall, {big['check_cpu_s']:.1f} s CPU, "
        f"{big['check_rss_mb']:,} MB peak (at {GOAL_AT_MB:.0f} MB: {est_s:.1f} s wall, "
        f"{est_mb:,.0f} MB; goal <= {GOAL_S:g} s and <= {GOAL_MB:,.0f} MB: "
        f"{'met' if met else 'NOT met'})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=float, nargs="+", default=[1, 4, 10])
    ap.add_argument("--workdir", default="/tmp/accel-drc-bench-scale")
    ap.add_argument("--keep", action="store_true", help="keep the generated boards")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--no-inspect", action="store_true", help="time only accel-drc check")
    ap.add_argument(
        "--before",
        default=_before.DEFAULT_BEFORE,
        help="git revision to compare with, run alternately ('none' to skip)",
    )
    args = ap.parse_args(argv)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if ROOT in workdir.resolve().parents:
        ap.error("--workdir must be outside the repository")
    before = None if args.before == "none" else _before.tree(args.before)
    rows = []
    for k in args.scales:
        rows.append(run_one(k, workdir, not args.no_inspect, args.keep, before, args.before))
        sys.stdout.write(json.dumps(rows[-1]) + "\n")
        sys.stdout.flush()
    sys.stdout.write("\n" + table(rows, not args.no_inspect) + "\n\n" + verdict(rows) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
