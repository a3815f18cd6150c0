#!/usr/bin/env python3
"""Issue 18's speed targets, each printed as a ratio against a peer measured in the same run.

    python bench/bench_speed.py [--repeat 5] [--board PATH] [--synth-scale 10] [--no-synth]
                                [--before-exe OLD/.venv/bin/accel-drc] [--plugin results.json]
                                [--json out.json] [--save-before]

Peers (measured here, never hard-coded):

* **tokenising floor**: a plain Python pass that reads the board and runs one regex tokeniser
  over it (``re.finditer`` over parentheses, strings and atoms), in its own process.  A check
  that is fast against it is fast against anything written in Python that looks at every token.
* **import floor**: a process that only imports numpy, shapely and yaml, measured alternately
  with the small-board check so both see the same machine.

Targets (issue 18):

=====================================  ====================================================
vme-wren ``check --json --html``       ≤ 0.5 × tokenising floor (wall), peak ≤ 400 MB
small board ``check``                  ≤ 1.5 × import floor (wall)
synthetic training board, scale 10     ≤ 8 s wall, ≤ 1.5 GB; time per MB within 1.5× of 40 MB
KiCad button, click → report open      ≤ 2.5 s (``bench/bench_plugin.py --json F``, then ``--plugin F``)
=====================================  ====================================================

Under the table, two figures for the big board, as ratios of the same run's floor: the **CPU
bound** (the least process CPU the check took, on all CPUs or pinned to one, divided by the
CPUs it may use: no schedule of that work ends sooner) and the **serial estimate** (Amdahl's
split of the check's time pinned to one CPU and on all of them: the part no number of CPUs
removes).  A target below both needs less work, not a better schedule.

The package's bytecode is compiled first (``compileall``), as a wheel install has it: an
editable install under ``PYTHONDONTWRITEBYTECODE=1`` would otherwise recompile every module on
every run (about 0.35 s) and time the compiler, not accel-drc.

Each figure is the median of ``--repeat`` runs (whole process, ``os.wait4`` rusage of the
child).  ``bench/speed_before.json`` holds the same table measured on main before the speed work;
it is printed beside today's figures.  Better, ``--before-exe`` names the ``accel-drc`` of an
install of the old code (e.g. a ``git worktree`` of the commit before the speed work with its own
venv): it then runs alternately with today's in the same run, so both see the same machine.
``--save-before`` rewrites the file (only for a new baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"
SMALL = ROOT / "fixtures" / "kicad_versions" / "kicad9.kicad_pcb"
GENERATOR = ROOT / "fixtures" / "synth" / "generate.py"
BEFORE = ROOT / "bench" / "speed_before.json"

FLOOR = r"""
import re, sys
data = open(sys.argv[1], 'rb').read()
n = 0
for _ in re.finditer(rb'[()]|"(?:[^"\\]|\\.)*"|[^\s()"]+', data):
    n += 1
print(n)
"""


def accel_drc() -> list[str]:
    exe = shutil.which("accel-drc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "accel_drc.cli"]


def check_cmds(before: str | None, *args: str) -> list[list[str]]:
    """``accel-drc <args>`` of this tree, and of the old install when one is named."""
    return [[*accel_drc(), *args]] + ([[before, *args]] if before else [])


#: a command given as ``(ONE_CPU, cmd)`` runs pinned to one CPU (its threads share that CPU)
ONE_CPU = "one-cpu"


def usable_cpus() -> set[int]:
    """The CPUs this process may run on (its affinity mask), else ``os.cpu_count()`` of them."""
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return set(range(os.cpu_count() or 1))


def run(cmd: list[str] | tuple[str, list[str]]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process (its own ``os.wait4`` rusage); a
    failing child (exit other than 0 or 5) stops the bench with its stderr.  ``(ONE_CPU, cmd)``
    pins the child to the first usable CPU before it starts (``sched_setaffinity``)."""
    pin = None
    if isinstance(cmd, tuple):
        first = min(usable_cpus())
        cmd = cmd[1]

        def pin() -> None:
            os.sched_setaffinity(0, {first})

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pin)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if code not in (0, 5):
        raise SystemExit(f"{' '.join(cmd)}: exit {code}: {err[-1500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def median_of(cmds: list[Any], repeat: int) -> list[dict[str, float]]:
    """Run the commands alternately ``repeat`` times; the median wall, CPU and peak of each."""
    samples: list[list[tuple[float, float, float]]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            samples[i].append(run(cmd))
    return [
        {
            "wall_s": statistics.median(s[0] for s in runs),
            "cpu_s": statistics.median(s[1] for s in runs),
            "peak_mb": max(s[2] for s in runs),
            "wall_min_s": min(s[0] for s in runs),
            "wall_max_s": max(s[0] for s in runs),
        }
        for runs in samples
    ]


def _with_before(res: dict[str, Any], peer: dict[str, float], old: list[dict[str, float]]) -> None:
    if old:
        res["before"] = {"check": old[0], "ratio": old[0]["wall_s"] / peer["wall_s"]}


def bench_big(board: Path, repeat: int, out: Path, before: str | None) -> dict[str, Any]:
    args = ("check", str(board), "--json", str(out / "r.json"), "--html", str(out / "r.html"))
    cmds = check_cmds(before, *args, "--quiet")
    n_cpu = len(usable_cpus())
    pinned = [(ONE_CPU, cmds[0])] if n_cpu > 1 and hasattr(os, "sched_setaffinity") else []
    floor, check, *rest = median_of(
        [[sys.executable, "-c", FLOOR, str(board)], *cmds, *pinned], repeat
    )
    old, one = (rest[:-1], rest[-1]) if pinned else (rest, None)
    # the least CPU time the work took: pinned, its threads do not pay for each other's GIL
    # hand-offs and caches; no schedule of it on n CPUs ends sooner than that / n
    least_cpu = min(check["cpu_s"], one["cpu_s"]) if one is not None else check["cpu_s"]
    res = {
        "board": board.name,
        "mb": board.stat().st_size / 1e6,
        "floor": floor,
        "check": check,
        "ratio": check["wall_s"] / floor["wall_s"],
        "cpus": n_cpu,
        "cpu_bound_s": least_cpu / n_cpu,
    }
    if one is not None:
        res["one_cpu"] = one
        res.update(amdahl(one["wall_s"], check["wall_s"], n_cpu))
    _with_before(res, floor, old)
    return res


def amdahl(t1: float, tn: float, n: int) -> dict[str, float]:
    """Amdahl's split of a run that takes ``t1`` on one CPU and ``tn`` on ``n``: the serial
    part S and the parallel part P with t1 = S + P and tn = S + P/n.  S is what no number of
    CPUs takes away (the longest chain of work that waits on itself: start-up, the read, the
    main thread's checks); clamped to [0, t1] against noise."""
    p = max(0.0, min(t1, (t1 - tn) * n / (n - 1)))
    return {"serial_s": t1 - p, "parallel_s": p}


def bench_small(repeat: int, before: str | None) -> dict[str, Any]:
    imp, check, *old = median_of(
        [
            [sys.executable, "-c", "import numpy, shapely, yaml"],
            *check_cmds(before, "check", str(SMALL), "--quiet"),
        ],
        repeat * 2,
    )
    res = {"imports": imp, "check": check, "ratio": check["wall_s"] / imp["wall_s"]}
    _with_before(res, imp, old)
    return res


def bench_synth(scale: int, repeat: int, out: Path, before: str | None) -> dict[str, Any]:
    rows = []
    for k in sorted({1, scale}):
        d = out / f"k{k}"
        subprocess.run(
            [sys.executable, str(GENERATOR), str(d), "--scale", str(k), "--only", "training-hgx"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        board = next(d.glob("**/training-hgx.kicad_pcb"))
        check, *old = median_of(
            check_cmds(before, "check", str(board), "--json", str(out / "s.json"), "--quiet"),
            max(1, repeat // 2),
        )
        mb = board.stat().st_size / 1e6
        row = {"scale": k, "mb": mb, "check": check, "s_per_mb": check["wall_s"] / mb}
        if old:
            row["before"] = {"check": old[0]}
        rows.append(row)
        board.unlink()
    return {"rows": rows, "flatness": rows[-1]["s_per_mb"] / rows[0]["s_per_mb"]}


def fmt(x: float | None, unit: str = "s") -> str:
    return "—" if x is None else f"{x:.2f} {unit}" if unit else f"{x:.2f}"


def table(now: dict[str, Any], before: dict[str, Any] | None) -> str:
    b = dict(before or {})
    for key in ("big", "small"):  # measured in this run: better than the saved file
        if key in now and "before" in now[key]:
            b[key] = now[key]["before"]
    if "synth" in now and "before" in now["synth"]["rows"][-1]:
        b["synth"] = {"rows": [now["synth"]["rows"][-1]["before"]]}

    def get(d: dict[str, Any], *path: str) -> Any:
        for p in path:
            if not isinstance(d, dict) or p not in d:
                return None
            d = d[p]
        return d

    lines = [
        "| target | goal | before | now | peer (same run) | ratio now | met |",
        "|---|---|---|---|---|---|---|",
    ]
    big = now.get("big")
    if big:
        r = big["ratio"]
        lines.append(
            f"| vme-wren `check --json --html` ({big['mb']:.0f} MB) | ≤ 0.5 × floor, ≤ 400 MB "
            f"| {fmt(get(b, 'big', 'check', 'wall_s'))}, {fmt(get(b, 'big', 'check', 'peak_mb'), 'MB')}"
            f" (×{fmt(get(b, 'big', 'ratio'), '')}) "
            f"| {fmt(big['check']['wall_s'])} wall, {fmt(big['check']['cpu_s'])} CPU, "
            f"{fmt(big['check']['peak_mb'], 'MB')} "
            f"| tokenising floor {fmt(big['floor']['wall_s'])} | ×{r:.2f} "
            f"| {'yes' if r <= 0.5 and big['check']['peak_mb'] <= 400 else 'no'} |"
        )
    small = now.get("small")
    if small:
        r = small["ratio"]
        lines.append(
            f"| small board `check` (kicad9.kicad_pcb) | ≤ 1.5 × import floor "
            f"| {fmt(get(b, 'small', 'check', 'wall_s'))} (×{fmt(get(b, 'small', 'ratio'), '')}) "
            f"| {fmt(small['check']['wall_s'])} "
            f"| `import numpy, shapely, yaml` {fmt(small['imports']['wall_s'])} | ×{r:.2f} "
            f"| {'yes' if r <= 1.5 else 'no'} |"
        )
    synth = now.get("synth")
    if synth:
        top = synth["rows"][-1]
        bt = (get(b, "synth", "rows") or [{}])[-1]
        lines.append(
            f"| synthetic training board, scale {top['scale']} ({top['mb']:.0f} MB) "
            f"| ≤ 8 s, ≤ 1.5 GB, s/MB ≤ 1.5 × scale 1 "
            f"| {fmt(get(bt, 'check', 'wall_s'))}, {fmt(get(bt, 'check', 'peak_mb'), 'MB')} "
            f"| {fmt(top['check']['wall_s'])}, {fmt(top['check']['peak_mb'], 'MB')} "
            f"| scale 1 ({synth['rows'][0]['mb']:.0f} MB): {fmt(synth['rows'][0]['check']['wall_s'])} "
            f"| s/MB ×{synth['flatness']:.2f} "
            f"| {'yes' if top['check']['wall_s'] <= 8 and top['check']['peak_mb'] <= 1536 and synth['flatness'] <= 1.5 else 'no'} |"
        )
    plugin = now.get("plugin")
    if plugin:
        lines.append(
            f"| KiCad button on vme-wren, click → report open | ≤ 2.5 s "
            f"| {fmt(get(b, 'plugin', 'median_s'))} | {fmt(plugin.get('median_s'))} "
            f"| — | — | {'yes' if (plugin.get('median_s') or 99) <= 2.5 else 'no'} |"
        )
    return "\n".join(lines)


def bounds(now: dict[str, Any]) -> str:
    """Why vme-wren's ratio is where it is: the CPU-time bound on these CPUs and Amdahl's
    estimate of the serial part no number of CPUs removes, both as ratios of the same run's
    floor."""
    big = now.get("big")
    if not big or "serial_s" not in big:
        return ""
    fl = big["floor"]["wall_s"]
    one = big["one_cpu"]
    return (
        f"vme-wren's work: {fmt(big['check']['cpu_s'])} of CPU on {big['cpus']} CPUs, "
        f"{fmt(one['cpu_s'])} pinned to one CPU ({fmt(one['wall_s'])} wall), so no schedule of "
        f"it on {big['cpus']} CPUs ends before {fmt(big['cpu_bound_s'])} "
        f"(×{big['cpu_bound_s'] / fl:.2f} of the floor); Amdahl's split of the one-CPU and "
        f"{big['cpus']}-CPU times: {fmt(big['serial_s'])} serial + {fmt(big['parallel_s'])} "
        f"parallel, so with unlimited CPUs ≥ {fmt(big['serial_s'])} "
        f"(×{big['serial_s'] / fl:.2f} of the floor)."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--board", type=Path, default=BOARD)
    ap.add_argument("--synth-scale", type=int, default=10)
    ap.add_argument("--no-synth", action="store_true")
    ap.add_argument("--no-big", action="store_true")
    ap.add_argument("--plugin", type=Path, help="bench_plugin.py --json output to include")
    ap.add_argument("--before-exe", help="accel-drc of an install of the old code (same run)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--save-before", action="store_true")
    a = ap.parse_args()

    import accel_drc

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(accel_drc.__file__).parent)],
        check=True,
        env=env,
    )
    now: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="accel-drc-speed-") as tmp:
        out = Path(tmp)
        if not a.no_big:
            if not a.board.is_file():
                print(f"skip big board: {a.board} not found", file=sys.stderr)
            else:
                now["big"] = bench_big(a.board, a.repeat, out, a.before_exe)
        now["small"] = bench_small(a.repeat, a.before_exe)
        if not a.no_synth:
            now["synth"] = bench_synth(a.synth_scale, a.repeat, out, a.before_exe)
    if a.plugin and a.plugin.is_file():
        clicks = json.loads(a.plugin.read_text()).get("clicks", {}).get("this tree", {})
        times = clicks.get("click_to_report_s") or []
        if times:
            now["plugin"] = {"median_s": statistics.median(times), "clicks": times}
    before = json.loads(BEFORE.read_text()) if BEFORE.is_file() and not a.save_before else None
    print(table(now, before))
    why = bounds(now)
    if why:
        print("\n" + why)
    if a.json:
        a.json.write_text(json.dumps(now, indent=1))
    if a.save_before:
        BEFORE.write_text(json.dumps(now, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
