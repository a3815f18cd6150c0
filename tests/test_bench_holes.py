"""bench/bench_holes.py measures what check runs: each build check of the board's class on the
board, against the board's read in the same process (the bench itself is not a test)."""

from __future__ import annotations

import pytest
from _scripts import load_script
from conftest import ROOT


def test_bench_holes_times_each_build_check_against_the_read() -> None:
    bench = load_script("bench/bench_holes.py", "bench_holes")
    board = ROOT / "fixtures" / "checks" / "drill_aspect_ratio" / "thick_10layer.kicad_pcb"
    m = bench.measure(board, None, "edge", repeat=1)
    assert set(m["kinds"]) == set(bench.KINDS)
    assert m["vias"] == 15 and m["read_cpu_s"] > 0
    dar = m["kinds"]["drill_aspect_ratio"]
    # the same judgement as the check itself: 15 holes, groups at 21.4, 17.1 and 13.2:1 found
    assert dar["rule"] == "edge.drill_aspect_ratio" and dar["checked"] == 15
    assert dar["findings"] == 4  # 0.08, 0.10, 0.13 mm and the 10.4:1 blind via (> 10:1)
    for k in m["kinds"].values():
        assert k["ratio_to_read"] == pytest.approx(k["cpu_s"] / m["read_cpu_s"])
    text = bench.table(m)
    assert "peer: reading the board" in text and "all four" in text
