#!/usr/bin/env python3
"""CPU time of each check kind and of the pipeline's per-check work (issue 18), per board, for
this tree and optionally a reference revision measured in the same run.

    python bench/bench_checks.py [--ref main] [--repeat 3] [--synth-scale 1] [--no-synth]
                                 [--board PATH ...] [--json out.json]

Each (tree, board) runs in its own process (``PYTHONPATH`` names the tree's ``engine/``; a
``--ref`` tree is ``git archive``-d into a temporary directory).  In that process the board is
read, the library and config loaded, then :func:`accel_drc.pipeline.check_board` runs with every
registered check function, ``_with_class_basis`` and ``settle_all`` wrapped in a
``time.process_time`` timer:

* ``<kind>``: CPU seconds of every rule of that kind on the board's class, *including* the
  lazily derived facts it is the first to ask for (``analysis.via_stubs`` is paid by the first
  ``via_stub`` rule, the PDN rails by ``pdn_impedance``: their prefetch thread is switched off
  so the cost lands on the check that needs it, not on a second core);
* ``class_basis``: the re-runs under the other classes' limits, for an auto-detected class;
* ``settle``: :func:`accel_drc.basis.settle_all`;
* ``check_board``: the whole call (classification, coverage and extras included).

The child runs as the command line does (``cli.run``): BLAS on one thread, the shipped
dataclass methods, and the objects loaded with the board frozen out of the cyclic collector
before the checks start (without that, a collection scanning the board's objects lands on
whichever check allocates when it falls due: tens of ms of noise on vme-wren).

Each tree's bytecode is compiled first (``compileall``), as a wheel install has it: under
``PYTHONDONTWRITEBYTECODE=1`` every child would otherwise compile each module it imports, and a
module a check imports lazily (``analysis/delay.py`` for ``skew``) would charge the compiler's
time to that check.

Under vme-wren's table, the issue-32 budget: ``skew + return_path + crosstalk`` ≤
:data:`SI_BUDGET_S` CPU, printed per tree as the sum, its ratio to the budget and met / OVER.

The reading and the reports are not measured here (``bench/bench_speed.py`` times the whole
process).  Each figure is the minimum of ``--repeat`` runs: CPU time, so the minimum is the run
the other tenants of a shared machine disturbed least.  No numbers are asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VME = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"
GENERATOR = ROOT / "fixtures" / "synth" / "generate.py"
DEMOS = [Path("/usr/share/kicad/demos"), ROOT.parent / "demos"]
#: issue 32: the three SI check kinds together add at most this much CPU on vme-wren
SI_BUDGET_S = 0.3
SI_KINDS = ("skew", "return_path", "crosstalk")
DEMO_BOARDS = ("video/video.kicad_pcb", "pic_programmer/pic_programmer.kicad_pcb")

CHILD = r"""
import gc, json, sys, time
# as the command line runs (cli.run): BLAS on one thread (set before numpy is imported), the
# shipped dataclass methods, no cyclic collection while loading, then the loaded objects frozen
from accel_drc.concurrency import one_blas_thread
one_blas_thread()
from accel_drc import dccode
dccode.install()
gc.disable()
from accel_drc import checks as _checks, pipeline
from accel_drc.config import load_config
from accel_drc.packs import load_library
from accel_drc.readers import read_board

path = sys.argv[1]
board = read_board(path)
lib = load_library()
cfg = load_config(None, path, lib)
gc.freeze()
gc.enable()
times = {}
calls = {}
in_basis = [False]

def timed(name, fn):
    def wrapper(*a, **k):
        t0 = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            dt = time.process_time() - t0
            key = name if not in_basis[0] or name in ("class_basis",) else "class_basis:" + name
            times[key] = times.get(key, 0.0) + dt
            calls[key] = calls.get(key, 0) + 1
    return wrapper

load_all = _checks.load_all
def wrapped_load_all():
    return {k: timed(k, f) for k, f in load_all().items()}
_checks.load_all = wrapped_load_all
orig_basis = pipeline._with_class_basis
def basis(*a, **k):
    in_basis[0] = True
    try:
        return orig_basis(*a, **k)
    finally:
        in_basis[0] = False
pipeline._with_class_basis = timed("class_basis", basis)
pipeline.settle_all = timed("settle", pipeline.settle_all)
pipeline._wants_rails = lambda *a, **k: False  # the rails' cost lands on the check needing them
t0 = time.process_time()
result = pipeline.check_board(board, cfg, board_file=path, library=lib)
times["check_board"] = time.process_time() - t0
print(json.dumps({"times": times, "calls": calls, "findings": len(result.findings),
                  "class": result.classification.board_class}))
"""


def demo_boards() -> list[Path]:
    for base in DEMOS:
        got = [base / b for b in DEMO_BOARDS if (base / b).is_file()]
        if got:
            return got
    return []


def tree_of(ref: str, tmp: Path) -> Path:
    """``engine/`` of ``ref``, extracted with ``git archive`` (the worktree is not touched)."""
    dest = tmp / f"ref-{ref.replace('/', '_')}"
    dest.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "engine", "rules"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest / "engine"


def compile_tree(engine: Path) -> None:
    """Write the bytecode of ``engine/accel_drc`` (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(engine / "accel_drc")], check=True, env=env
    )


def measure(engine: Path, board: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(engine))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(board)], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"{board} with {engine}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def best(runs: list[dict[str, Any]]) -> dict[str, float]:
    keys = set().union(*(r["times"] for r in runs))
    return {k: min(r["times"].get(k, 0.0) for r in runs) for k in keys}


def table(name: str, cols: dict[str, dict[str, float]]) -> str:
    heads = list(cols)
    keys = sorted(set().union(*cols.values()), key=lambda k: (k == "check_board", k))
    rows = [f"{name}", "  " + f"{'CPU s':<34}" + "".join(f"{h:>12}" for h in heads)]
    for k in keys:
        vals = [cols[h].get(k) for h in heads]
        cells = "".join(f"{'-' if v is None else f'{v:.3f}':>12}" for v in vals)
        ratio = ""
        if len(vals) == 2 and vals[0] and vals[1] is not None and vals[0] > 0.005:
            ratio = f"   ×{vals[1] / vals[0]:.2f}"
        rows.append(f"  {k:<34}{cells}{ratio}")
    return "\n".join(rows)


def si_budget(cols: dict[str, dict[str, float]]) -> str:
    """The issue-32 line: per tree, the three SI kinds' CPU summed against :data:`SI_BUDGET_S`."""
    rows = []
    for tree, got in cols.items():
        parts = [got.get(k, 0.0) for k in SI_KINDS]
        total = sum(parts)
        ratio = total / SI_BUDGET_S
        split = " + ".join(f"{k} {v:.3f}" for k, v in zip(SI_KINDS, parts))
        rows.append(
            f"  target (issue 32) {' + '.join(SI_KINDS)} ≤ {SI_BUDGET_S:.3f} s CPU, {tree}: "
            f"{total:.3f} s ({split}) ×{ratio:.2f} of the budget: {'met' if ratio <= 1 else 'OVER'}"
        )
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", help="git revision to measure beside this tree (e.g. main)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synth-scale", type=float, default=1.0)
    ap.add_argument("--no-synth", action="store_true")
    ap.add_argument("--board", action="append", type=Path, help="boards (default: see doc)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-checks-") as tmpd:
        tmp = Path(tmpd)
        boards = list(args.board or [])
        if not args.board:
            if VME.is_file():
                boards.append(VME)
            if not args.no_synth:
                subprocess.run(
                    [sys.executable, str(GENERATOR), str(tmp / "synth"), "--scale",
                     str(args.synth_scale), "--only", "training-hgx"],
                    check=True, capture_output=True,
                )  # fmt: skip
                boards.append(tmp / "synth" / "training-hgx.kicad_pcb")
            boards += demo_boards()
        trees = {}
        if args.ref:
            trees[args.ref] = tree_of(args.ref, tmp)
        trees["this tree"] = ROOT / "engine"
        for eng in trees.values():
            compile_tree(eng)
        for board in boards:
            runs: dict[str, list[dict[str, Any]]] = {t: [] for t in trees}
            for _ in range(args.repeat):  # alternately, so both see the same machine
                for t, eng in trees.items():
                    runs[t].append(measure(eng, board))
            cols = {t: best(r) for t, r in runs.items()}
            size = board.stat().st_size / 1e6
            first = next(iter(runs.values()))[0]
            head = f"{board.name} ({size:.1f} MB, class {first['class']}, {first['findings']} findings)"
            print(table(head, cols), flush=True)
            if board.name == VME.name:
                print(si_budget(cols), flush=True)
            out[str(board)] = {"size_mb": size, "cpu_s": cols}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
