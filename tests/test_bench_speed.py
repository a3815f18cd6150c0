"""bench/bench_speed.py's arithmetic and its one-CPU runs (the bench itself is not a test)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from _scripts import load_script


def _bench() -> ModuleType:
    return load_script("bench/bench_speed.py", "bench_speed")


def test_amdahl_split_is_exact() -> None:
    b = _bench()
    # t1 = S + P, tn = S + P/n: S = 1.0, P = 1.4 on 2 CPUs gives t1 2.4, t2 1.7
    got = b.amdahl(2.4, 1.7, 2)
    assert got["serial_s"] == pytest.approx(1.0)
    assert got["parallel_s"] == pytest.approx(1.4)
    got = b.amdahl(2.0, 0.75, 4)  # S 0.333…, P 1.666…
    assert got["serial_s"] == pytest.approx(1 / 3)
    # noise cannot make either part negative: slower on n CPUs than on one, or super-linear
    assert b.amdahl(2.0, 2.1, 2) == {"serial_s": 2.0, "parallel_s": 0.0}
    assert b.amdahl(2.0, 0.5, 2) == {"serial_s": 0.0, "parallel_s": 2.0}


def test_bounds_line_states_both_ratios() -> None:
    b = _bench()
    big = {
        "floor": {"wall_s": 2.0},
        "check": {"cpu_s": 2.5, "wall_s": 1.7},
        "cpus": 2,
        "cpu_bound_s": 1.2,
        "one_cpu": {"wall_s": 2.4, "cpu_s": 2.4},
        **b.amdahl(2.4, 1.7, 2),
    }
    text = b.bounds({"big": big})
    assert "2.50 s of CPU on 2 CPUs, 2.40 s pinned to one CPU (2.40 s wall)" in text
    assert "ends before 1.20 s (×0.60 of the floor)" in text
    assert "1.00 s serial + 1.40 s parallel" in text
    assert "≥ 1.00 s (×0.50 of the floor)" in text
    assert b.bounds({}) == ""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux-only")
def test_one_cpu_run_is_pinned() -> None:
    b = _bench()
    probe = "import os, sys; sys.exit(0 if len(os.sched_getaffinity(0)) == 1 else 3)"
    wall, cpu, peak = b.run((b.ONE_CPU, [sys.executable, "-c", probe]))
    assert wall > 0 and cpu > 0 and peak > 0
    if len(b.usable_cpus()) > 1:  # unpinned, the same probe sees every CPU and fails
        with pytest.raises(SystemExit, match="exit 3"):
            b.run([sys.executable, "-c", probe])


def test_cpu_bound_uses_the_least_cpu_the_work_took(tmp_path: Path, monkeypatch) -> None:
    b = _bench()
    board = tmp_path / "b.kicad_pcb"
    board.write_bytes(b"(kicad_pcb)")
    floor = {"wall_s": 2.0, "cpu_s": 2.0}
    check = {"wall_s": 1.7, "cpu_s": 2.5}
    one = {"wall_s": 2.3, "cpu_s": 2.3}
    seen: list[object] = []

    def fake_median_of(cmds: list, repeat: int) -> list:
        seen.extend(cmds)
        return [floor, check, one]

    monkeypatch.setattr(b, "median_of", fake_median_of)
    monkeypatch.setattr(b, "usable_cpus", lambda: {0, 1})
    res = b.bench_big(board, 3, tmp_path, None)
    assert seen[-1][0] == b.ONE_CPU  # the same check, pinned
    assert seen[-1][1] == seen[1]
    assert res["cpu_bound_s"] == pytest.approx(2.3 / 2)  # not 2.5 / 2
    assert res["serial_s"] == pytest.approx(2.3 - 2 * (2.3 - 1.7))
    assert res["ratio"] == pytest.approx(1.7 / 2.0)
