#!/usr/bin/env python3
"""Main-thread CPU of the analysis stages of ``check --json --html``, before vs after.

    python bench/bench_main_thread.py [BOARD] [--before REV] [--repeat N]

Why the main thread: on vme-wren the PDN plane geometry and the board view's zone
simplification already run on background threads (GEOS, GIL released), so the wall time of a
check is the main thread's own CPU plus its waits.  This bench runs a full
``accel-drc check BOARD --json --html`` in a child process for the code of ``--before`` (a git
revision, ``bench/_before.py``) and for this checkout, alternately, and records
``time.thread_time()`` (this thread's CPU only) around each stage on the main thread:

* ``read``: the reader; ``classify`` (which asks for the plane fractions first);
* ``zone_fractions``: the plane fractions (``Analysis.zone_fractions``);
* ``via_stubs``: the via table (``Analysis.via_stubs``) and ``check:via_stub`` (every rule);
* ``check:impedance`` with ``pair_table`` and ``remedy`` inside it;
* ``write_outputs``: the JSON and HTML reports;
* ``main thread``: the main thread's whole CPU, and the child's wall and total CPU.

Stages nest (``zone_fractions`` is inside ``classify``); each is inclusive.  Best of
``--repeat`` per stage.  Also prints whether the JSON findings are identical (digest of the
judgement sections, as ``tests/test_findings_unchanged.py`` compares them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _before  # noqa: E402  (beside this script)

ROOT = Path(__file__).resolve().parent.parent
VME_WREN = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"

#: run in a child: a full check with the stages timed on the main thread
SCRIPT = r"""
import functools, hashlib, json, sys, tempfile, threading, time
acc = {}
main_ident = threading.get_ident()
def timed(name, fn):
    @functools.wraps(fn)
    def run(*a, **k):
        if threading.get_ident() != main_ident:
            return fn(*a, **k)
        c, w = time.thread_time(), time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            acc[name] = acc.get(name, 0.0) + time.thread_time() - c
            acc[name + " wall"] = acc.get(name + " wall", 0.0) + time.perf_counter() - w
    return run
def wrap(mod, attr, name):
    setattr(mod, attr, timed(name, getattr(mod, attr)))
def wrap_prop(cls, attr, name):
    prop = cls.__dict__[attr]
    prop.func = timed(name, prop.func)
t_wall, t_cpu = time.perf_counter(), time.thread_time()
import accel_drc.pipeline as pl, accel_drc.cli as cli
import accel_drc.analysis as an
import accel_drc.checks as checks
import accel_drc.analysis.impedance as imp
import accel_drc.checks.impedance as ci
import accel_drc.checks.via_stub as cv
wrap(pl, "classify", "classify")
wrap_prop(an.Analysis, "zone_fractions", "zone_fractions")
wrap_prop(an.Analysis, "via_stubs", "via_stubs")
wrap(imp, "pair_table", "pair_table")
wrap(ci, "remedy", "remedy")
import accel_drc.readers as rd
import accel_drc.report.writers as wr
wrap(rd, "read_board", "read")
wrap(wr, "write_outputs", "write_outputs")
reg = checks.load_all()
for kind in ("impedance", "via_stub"):
    if kind in reg:
        reg[kind] = timed("check:" + kind, reg[kind])
out_json = tempfile.mktemp(suffix=".json")
out_html = tempfile.mktemp(suffix=".html")
cfg = ["--config", sys.argv[2]] if len(sys.argv) > 2 else []
sys.argv = ["accel-drc", "check", sys.argv[1], "--json", out_json, "--html", out_html] + cfg
try:
    cli.main()
except SystemExit:
    pass
acc["main thread"] = time.thread_time() - t_cpu
acc["wall"] = time.perf_counter() - t_wall
rep = json.load(open(out_json))
keep = {k: rep.get(k) for k in ("classification", "summary", "findings", "coverage", "extras")}
acc["digest"] = hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps(acc))
"""

STAGES = (
    "read",
    "classify",
    "zone_fractions",
    "via_stubs",
    "check:via_stub",
    "check:impedance",
    "pair_table",
    "remedy",
    "write_outputs",
    "main thread",
    "wall",
    "process cpu",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board", nargs="?", default=str(VME_WREN))
    ap.add_argument("--before", default="main", help="git revision to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--config", help="accel-drc.yaml for the board")
    args = ap.parse_args()
    roots = {"before": _before.tree(args.before), "after": None}
    # bytecode for both trees, as an installed wheel has it: the extracted revision has none,
    # and with PYTHONDONTWRITEBYTECODE set its children would compile every module every run
    # (charged to whichever stage imports it first)
    for tree in (roots["before"], ROOT):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "engine" / "accel_drc")],
            check=False,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        )
    best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
    digests: dict[str, set[str]] = {"before": set(), "after": set()}
    for _ in range(max(1, args.repeat)):
        for label, root in roots.items():
            cmd = [sys.executable, "-c", SCRIPT, args.board] + (
                [args.config] if args.config else []
            )
            _w, cpu, _mb, rc, out = _before.run(cmd, _before.env(root))
            if not out.strip():
                print(f"  {label}: child failed (exit {rc})")
                continue
            got = json.loads(out.strip().splitlines()[-1])
            digests[label].add(got.pop("digest"))
            got["process cpu"] = cpu
            for k, v in got.items():
                best[label][k] = min(v, best[label].get(k, v))
    print(f"{Path(args.board).name}: main-thread CPU s per stage (best of {args.repeat})")
    print(f"{'':18} {'CPU (main thread)':>17}   {'wall':>17}")
    print(f"{'stage':18} {'before':>8} {'after':>8}   {'before':>8} {'after':>8}")

    def cell(label: str, key: str) -> str:
        v = best[label].get(key)
        return f"{v:8.3f}" if v is not None else f"{'-':>8}"

    for s in STAGES:
        if s not in best["before"] and s not in best["after"]:
            continue
        w = s + " wall"
        print(
            f"{s:18} {cell('before', s)} {cell('after', s)}   {cell('before', w)} {cell('after', w)}"
        )
    print(f"(before = {args.before})")
    same = digests["before"] == digests["after"] and len(digests["after"]) == 1
    print(f"findings identical: {'yes' if same else 'NO'} {sorted(digests['after'])}")


if __name__ == "__main__":
    main()
