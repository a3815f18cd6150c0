#!/usr/bin/env python3
"""Issue 18, small board: the fixed start-up cost every ``accel-drc check`` pays.

    python bench/bench_startup.py [--repeat 15] [--bytecode as-is|compiled|none|both]
                                  [--before REF] [--top 15] [--json out.json]

Peer (measured here, alternately, never hard-coded): a process that only does
``import numpy, shapely, yaml``.  Target: ``accel-drc check fixtures/kicad_versions/kicad9.kicad_pcb``
≤ 1.5 × its wall time.  Printed: the median (and min) wall and CPU time of both over
``--repeat`` alternating runs, the ratio, ``accel-drc --version`` beside them, then the import
time breakdown (``python -X importtime``, median of 3) of the modules the check imports beyond the
peer's: the biggest single modules (self time) and the totals by package.

``--before REF`` (e.g. ``b4aeca3``, main before the speed work) adds the same check run by the
code of that git commit (``git archive`` of ``engine/`` and ``rules/`` into a temporary folder, put
first on ``PYTHONPATH``; same interpreter and packages), alternated with the others, so before
and after are measured in the same minutes.

Bytecode: a pip-installed wheel ships compiled ``.pyc`` files; an editable install run with
``PYTHONDONTWRITEBYTECODE=1`` (as on this project's machines) compiles every module of accel_drc
from source on every run.  ``--bytecode compiled`` compiles the package first (``compileall``,
like a wheel install), ``none`` removes accel_drc's ``__pycache__`` folders and runs the children
with ``PYTHONDONTWRITEBYTECODE=1`` (only for a source checkout: never touches site-packages),
``both`` (default) measures both, ``as-is`` leaves the tree alone.  The peer's modules keep their
bytecode in every mode (numpy, shapely and yaml are installed from wheels).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import bench_speed  # bench/ is sys.path[0] when this script runs

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "kicad_versions" / "kicad9.kicad_pcb"
PEER = "import numpy, shapely, yaml"
CHECK = (
    "import sys; from accel_drc.cli import main; "
    f"sys.exit(main(['check', {str(SMALL)!r}, '--quiet']))"
)


def accel_drc() -> list[str]:
    """The console script beside this Python (what users run), else ``-m accel_drc.cli``."""
    exe = shutil.which("accel-drc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "accel_drc.cli"]


def package_dir() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import accel_drc, os; print(os.path.dirname(accel_drc.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def export_before(ref: str, dest: Path) -> Path:
    """``engine/`` and ``rules/`` of the commit ``ref`` under ``dest``; the package's folder."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "engine", "rules"],
        capture_output=True,
        check=True,
    ).stdout
    tar = dest / "before.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as tf:
        tf.extractall(dest)  # our own repository's files
    tar.unlink()
    return dest / "engine" / "accel_drc"


def set_bytecode(mode: str, pkgs: list[Path]) -> dict[str, str]:
    """Prepare the packages' bytecode for ``mode``; the environment the children run with."""
    env = dict(os.environ)
    for pkg in pkgs:
        if mode == "compiled":
            compileall.compile_dir(str(pkg), quiet=1)
        elif mode == "none":
            if not any(p in pkg.resolve().parents for p in (ROOT, Path(tempfile.gettempdir()))):
                raise SystemExit(f"--bytecode none: {pkg} is not a source checkout")
            for d in pkg.rglob("__pycache__"):
                shutil.rmtree(d)
    if mode == "none":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one child process (``bench_speed.run``); a leading ``PYTHONPATH=…``
    item is put in the child's environment."""
    if cmd and cmd[0].startswith("PYTHONPATH="):
        env = {**env, "PYTHONPATH": cmd[0].split("=", 1)[1]}
        cmd = cmd[1:]
    wall, cpu, _peak = bench_speed.run(cmd, env)
    return wall, cpu


def alternate(cmds: dict[str, list[str]], repeat: int, env: dict[str, str]) -> dict[str, Any]:
    """Run the commands in turn ``repeat`` times (one warm-up round first, not counted)."""
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    for cmd in cmds.values():
        run(cmd, env)
    for _ in range(repeat):
        for k, cmd in cmds.items():
            samples[k].append(run(cmd, env))
    return {
        k: {
            "wall_s": statistics.median(w for w, _ in s),
            "wall_min_s": min(w for w, _ in s),
            "cpu_s": statistics.median(c for _, c in s),
        }
        for k, s in samples.items()
    }


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def import_times(code: str, env: dict[str, str], runs: int = 3) -> dict[str, float]:
    """module -> median self import time (ms) of ``python -X importtime -c code``."""
    seen: dict[str, list[float]] = {}
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            capture_output=True,
            text=True,
            env=env,
        )
        for line in r.stderr.splitlines():
            m = _IMPORT_LINE.match(line)
            if m:
                seen.setdefault(m.group(4), []).append(int(m.group(1)) / 1000.0)
    return {k: statistics.median(v) for k, v in seen.items()}


def breakdown(env: dict[str, str], top: int) -> dict[str, Any]:
    """The modules the check imports beyond the peer's, biggest first, and totals by package."""
    peer = import_times(PEER, env)
    check = import_times(CHECK, env)
    extra = {k: v for k, v in check.items() if k not in peer}
    by_pkg: dict[str, float] = {}
    for k, v in extra.items():
        root = k.split(".")[0]
        by_pkg[root] = by_pkg.get(root, 0.0) + v
    return {
        "peer_import_ms": sum(peer.values()),
        "check_import_ms": sum(check.values()),
        "extra_import_ms": sum(extra.values()),
        "extra_modules": len(extra),
        "peer_modules_not_imported": sorted(
            {k.split(".")[0] for k in peer} - {k.split(".")[0] for k in check}
        ),
        "top_modules": sorted(extra.items(), key=lambda kv: -kv[1])[:top],
        "top_packages": sorted(by_pkg.items(), key=lambda kv: -kv[1])[:top],
    }


def bench(
    mode: str, repeat: int, top: int, pkg: Path, before: Path | None = None
) -> dict[str, Any]:
    env = set_bytecode(mode, [pkg] + ([before] if before else []))
    cmds = {
        "peer": [sys.executable, "-c", PEER],
        "check": [*accel_drc(), "check", str(SMALL), "--quiet"],
        "version": [*accel_drc(), "--version"],
    }
    if before is not None:
        cmds["before"] = [
            f"PYTHONPATH={before.parent}",
            sys.executable,
            "-m",
            "accel_drc.cli",
            "check",
            str(SMALL),
            "--quiet",
        ]
    t = alternate(cmds, repeat, env)
    out = {
        "bytecode": mode,
        "times": t,
        "ratio_wall": t["check"]["wall_s"] / t["peer"]["wall_s"],
        "ratio_cpu": t["check"]["cpu_s"] / t["peer"]["cpu_s"],
        "imports": breakdown(env, top),
    }
    if before is not None:
        out["before_ratio_wall"] = t["before"]["wall_s"] / t["peer"]["wall_s"]
        out["before_ratio_cpu"] = t["before"]["cpu_s"] / t["peer"]["cpu_s"]
    return out


def report(r: dict[str, Any]) -> str:
    t = r["times"]
    rows = [
        f"## bytecode: {r['bytecode']}",
        f"{'':34s} {'wall median':>12s} {'wall min':>9s} {'CPU median':>11s}",
    ]
    for k, label in (
        ("peer", f"`{PEER}`"),
        ("check", "`accel-drc check kicad9 --quiet`"),
        ("before", "  the same, code before"),
        ("version", "`accel-drc --version`"),
    ):
        if k not in t:
            continue
        x = t[k]
        rows.append(
            f"{label:34s} {x['wall_s'] * 1000:9.0f} ms {x['wall_min_s'] * 1000:6.0f} ms"
            f" {x['cpu_s'] * 1000:8.0f} ms"
        )
    met = "met" if r["ratio_wall"] <= 1.5 else "NOT met"
    rows.append(
        f"ratio check / peer: ×{r['ratio_wall']:.2f} wall, ×{r['ratio_cpu']:.2f} CPU "
        f"(goal ≤ 1.5 wall: {met})"
    )
    if "before_ratio_wall" in r:
        rows.append(
            f"before (same run): ×{r['before_ratio_wall']:.2f} wall, "
            f"×{r['before_ratio_cpu']:.2f} CPU"
        )
    im = r["imports"]
    rows.append(
        f"imports (-X importtime, median of 3): peer {im['peer_import_ms']:.0f} ms, check "
        f"{im['check_import_ms']:.0f} ms; {im['extra_modules']} modules beyond the peer's "
        f"{im['extra_import_ms']:.0f} ms; peer packages the check never imports: "
        f"{', '.join(im['peer_modules_not_imported']) or 'none'}"
    )
    rows.append(
        "  biggest modules beyond the peer's (self ms): "
        + ", ".join(f"{k} {v:.1f}" for k, v in im["top_modules"])
    )
    rows.append("  by package (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in im["top_packages"]))
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15, help="alternating runs (median; ≥ 10)")
    ap.add_argument("--bytecode", choices=("as-is", "compiled", "none", "both"), default="both")
    ap.add_argument("--top", type=int, default=15, help="modules and packages listed")
    ap.add_argument("--before", metavar="REF", help="also time the code of this git commit")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    a = ap.parse_args()
    pkg = package_dir()
    modes = ("compiled", "none") if a.bytecode == "both" else (a.bytecode,)
    out = []
    with tempfile.TemporaryDirectory(prefix="accel-drc-before-") as tmp:
        before = export_before(a.before, Path(tmp)) if a.before else None
        for mode in modes:
            r = bench(mode, a.repeat, a.top, pkg, before)
            print(report(r), flush=True)
            out.append(r)
    if "none" in modes:
        compileall.compile_dir(str(pkg), quiet=1)  # leave the tree compiled, as a wheel would
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
