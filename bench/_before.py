"""Before/after for the benches: the same measurement on an older revision, in the same run.

``tree(rev)`` extracts ``engine/`` and ``rules/`` of a git revision (``git archive``, so the
repository and its work tree are not touched) into a temporary directory; ``env(tree)`` puts it
first on ``PYTHONPATH`` so a child ``python -m accel_drc.cli`` imports that revision instead of
the installed one.  Runs of both alternate, so the load of a shared machine falls on both.

``PHASES_SCRIPT`` times the stages of a check that come before the checks themselves, in one
process, in CPU seconds (user + system of all threads, so the PDN thread pool counts fully):
read, zone-fill parsing, plane fractions, classification (in a fresh Analysis, so it computes
the plane fractions again from the parsed fills), PDN plane geometry.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: main before the speed work of issue 18 (the revision bench/speed_before.json was taken on)
DEFAULT_BEFORE = "b4aeca3"

PHASES_SCRIPT = r"""
import json, sys, time
def now():
    return time.process_time(), time.perf_counter()
out = {}
def lap(name, t):
    c, w = now()
    out[name] = {"cpu_s": c - t[0], "wall_s": w - t[1]}
    return now()
t = now()
from accel_drc.readers import read_board
from accel_drc.analysis import Analysis
from accel_drc.analysis.nets import zone_fractions
from accel_drc.classify import classify
from accel_drc.packs import load_library
lib = load_library()
t = now()
b = read_board(sys.argv[1])
t = lap("read", t)
n = sum(len(r) for z in b.zones for layer in z.filled for r in z.filled[layer])
t = lap("zone fills", t)
zone_fractions(b)
t = lap("plane fractions", t)
a = Analysis(b)
a.library = lib
classify(b, a, lib)
t = lap("classify", t)
a.rails
t = lap("PDN plane geometry", t)
import resource
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
out["fill_points"] = n
print(json.dumps(out))
"""

PHASES = ("read", "zone fills", "plane fractions", "classify", "PDN plane geometry")


def tree(rev: str) -> Path:
    """``engine/`` and ``rules/`` of ``rev`` in a temporary directory (removed at exit)."""
    out = Path(tempfile.mkdtemp(prefix=f"accel-drc-{rev[:12]}-"))
    atexit.register(shutil.rmtree, out, True)
    arch = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "engine", "rules"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=arch, check=True)
    return out


def env(root: Path | None) -> dict[str, str]:
    """The environment for a child that imports accel_drc from ``root`` (None: installed)."""
    e = dict(os.environ)
    if root is not None:
        e["PYTHONPATH"] = str(root / "engine") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def run(cmd: list[str], environ: dict[str, str]) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak MB, exit code, stdout) of one child (its own wait4 rusage)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=environ)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        return (
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024.0,
            os.waitstatus_to_exitcode(status),
            out.read().decode("utf-8", "replace"),
        )


def phases(board: str, before: Path | None, repeat: int) -> dict[str, dict[str, float]]:
    """Best CPU seconds of each phase, before and after (runs alternate), and peak MB."""
    best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
    for _ in range(max(1, repeat)):
        for label, root in (("before", before), ("after", None)):
            _w, _c, _mb, rc, out = run([sys.executable, "-c", PHASES_SCRIPT, board], env(root))
            if rc != 0:
                continue
            got = json.loads(out.strip().splitlines()[-1])
            for name in PHASES:
                v = got[name]["cpu_s"]
                best[label][name] = min(v, best[label].get(name, v))
            best[label]["peak_mb"] = got["peak_mb"]
    return best


def print_phases(board: str, rev: str, got: dict[str, dict[str, float]]) -> None:
    print(f"stages before the checks, CPU s (best of the runs), {Path(board).name}:")
    print(f"{'stage':22} {'before':>8} {'after':>8} {'ratio':>6}   (before = {rev})")
    tb = ta = 0.0
    for name in PHASES:
        b, a = got["before"].get(name), got["after"].get(name)
        if b is None or a is None:
            continue
        tb, ta = tb + b, ta + a
        print(f"{name:22} {b:8.3f} {a:8.3f} {a / b if b else float('nan'):6.2f}")
    if tb:
        print(f"{'total':22} {tb:8.3f} {ta:8.3f} {ta / tb:6.2f}")
    pb, pa = got["before"].get("peak_mb"), got["after"].get("peak_mb")
    if pb and pa:
        print(f"{'peak MB':22} {pb:8.0f} {pa:8.0f}")


def print_medians(got: dict[str, list[tuple[float, float]]], width: int = 16) -> None:
    """One line per mode of (CPU s, wall s) samples: median CPU, median and best wall."""
    import statistics

    for mode, runs in got.items():
        cpu = statistics.median(c for c, _ in runs)
        wall = [w for _, w in runs]
        print(
            f"{mode:{width}s} median CPU {cpu:.2f} s, wall median {statistics.median(wall):.2f} s, "
            f"best {min(wall):.2f} s"
        )
