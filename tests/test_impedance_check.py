"""Pair geometry from tracks, layer geometry from the stack-up, and the ``impedance`` check, on
hand-built boards (values worked out here) and on a real fixture board."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis import impedance as imp
from accel_drc.checks import CheckContext
from accel_drc.checks.impedance import check_impedance
from accel_drc.model import (
    Board,
    CopperLayer,
    NetClass,
    NetClassRules,
    Stackup,
    StackupLayer,
    Tracks,
    copper_layer_name,
    find_diff_pairs,
)
from accel_drc.packs import load_library
from accel_drc.results import Rule, Severity, Status
from conftest import FIXTURE_BOARDS

# ---------------------------------------------------------------------------------------------
# A hand-built 6-layer board
# ---------------------------------------------------------------------------------------------
#
#   F.Mask 0.01 (εr 3.3) / F.Cu 0.035 / d1 0.10 εr 3.5 / In1 (power) / d2 0.15 εr 3.6 /
#   In2 0.0175 / d3 0.15 εr 3.6 / In3 (power) / d4 0.2 εr 4.0 / In4 (power) / d5 0.10 εr 3.5 /
#   B.Cu / B.Mask
#
# Pair X on In2: symmetric stripline b = 0.15 + 0.0175 + 0.15 = 0.3175 mm, εr 3.6, w 0.1, gap 0.15.
# Pair Y on F.Cu: microstrip h 0.1 mm εr 3.5, w 0.12, gap 0.13, 10 µm mask εr 3.3.

KINDS = ["signal", "power", "signal", "power", "power", "signal"]


def stackup(er_d2: float | None = 3.6) -> Stackup:
    def cu(i: int, t: float) -> StackupLayer:
        return StackupLayer(copper_layer_name(i, 6), "copper", thickness_mm=t, copper_index=i)

    def die(n: int, t: float, er: float | None, kind: str = "prepreg") -> StackupLayer:
        return StackupLayer(
            f"dielectric {n}", kind, thickness_mm=t, epsilon_r=er, loss_tangent=0.01
        )

    return Stackup(
        (
            StackupLayer("F.Mask", "soldermask", thickness_mm=0.01, epsilon_r=3.3),
            cu(0, 0.035),
            die(1, 0.10, 3.5),
            cu(1, 0.035),
            die(2, 0.15, er_d2, "core"),
            cu(2, 0.0175),
            die(3, 0.15, 3.6),
            cu(3, 0.035),
            die(4, 0.2, 4.0, "core"),
            cu(4, 0.035),
            die(5, 0.10, 3.5),
            cu(5, 0.035),
            StackupLayer("B.Mask", "soldermask", thickness_mm=0.01, epsilon_r=3.3),
        )
    )


def pair_segments(y0: float, w: float, gap: float, layer: int, pnet: int, nnet: int):
    """A 20 mm parallel run plus non-parallel fan-out stubs at both ends."""
    c = w + gap  # centre distance
    segs = [
        ((0.0, y0), (20.0, y0), pnet),
        ((0.0, y0 + c), (20.0, y0 + c), nnet),
        ((20.0, y0), (21.0, y0 - 1.0), pnet),  # fan-out, 45°
        ((20.0, y0 + c), (21.0, y0 + c + 1.5), nnet),
        ((-1.0, y0 - 0.7), (0.0, y0), pnet),
    ]
    return [(a, b, n, w, layer) for a, b, n in segs]


def make_board(
    er_d2: float | None = 3.6, stack: Stackup | None | str = "default", apart: float | None = None
) -> Board:
    """``apart``: route both pairs with their halves this far apart (uncoupled)."""
    nets = ("", "GND", "/X_P", "/X_N", "/Y_P", "/Y_N")
    segs = pair_segments(0.0, 0.1, apart or 0.15, 2, 2, 3) + pair_segments(
        5.0, 0.12, apart or 0.13, 0, 4, 5
    )
    tracks = Tracks(
        start=np.array([s[0] for s in segs], dtype=float),
        end=np.array([s[1] for s in segs], dtype=float),
        mid=np.full((len(segs), 2), np.nan),
        width=np.array([s[3] for s in segs], dtype=float),
        layer=np.array([s[4] for s in segs], dtype=np.int16),
        net=np.array([s[2] for s in segs], dtype=np.int32),
        uuid=tuple(f"u{i}" for i in range(len(segs))),
    )
    return Board(
        source="hand-built",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, 6), copper_layer_name(i, 6), KINDS[i])
            for i in range(6)
        ),
        stackup=stackup(er_d2) if stack == "default" else stack,  # type: ignore[arg-type]
        nets=nets,
        net_classes=NetClassRules(
            classes=(
                NetClass("Default"),
                NetClass("DIFF", diff_pair_width_mm=0.1, diff_pair_gap_mm=0.15),
            ),
            patterns=(("/X_*", "DIFF"),),
        ),
        tracks=tracks,
    )


@dataclass
class StandInSignal:
    zdiff_ohm: float | None
    zdiff_tol_pct: float | None
    nyquist_hz: float | None = None


LIBRARY = load_library()


class StandInAnalysis(Analysis):
    """A real :class:`Analysis` whose signal facts are given: ``signals`` (type -> its nets),
    ``signal_types`` and ``net_signal`` (empty unless given: every net's type then rests on an
    assumption), the pairs found by name and every power layer a plane with no fill."""

    def __init__(
        self,
        board: Board,
        signals: dict[str, tuple[int, ...]],
        signal_types: dict[str, Any] | None = None,
        net_signal: dict[int, Any] | None = None,
    ) -> None:
        super().__init__(board, None, LIBRARY)
        self.signals = signals
        self._given = (dict(signal_types or {}), dict(net_signal or {}))

    @functools.cached_property
    def signal_types(self) -> dict[str, Any]:
        return self._given[0]

    @functools.cached_property
    def net_signal(self) -> dict[int, Any]:
        return self._given[1]

    @functools.cached_property
    def diff_pairs(self):  # noqa: ANN201
        return find_diff_pairs(self.board.nets)

    @functools.cached_property
    def plane_layers(self) -> dict[int, list]:
        return {ly.index: [] for ly in self.board.copper_layers if ly.kind == "power"}

    def nets_by_signal(self, sig: str) -> tuple[int, ...]:
        return self.signals.get(sig, ())


def rule(params: dict[str, Any], signal: str = "pcie5") -> Rule:
    return Rule(
        id=f"test.impedance.{signal}",
        check="impedance",
        severity=Severity.ERROR,
        params=params,
        why="85 Ω receivers",
        source="[pcie-base] Gen4; [U] 85 ohm",
        signal=signal,
    )


def run(
    board: Board,
    params: dict[str, Any],
    signals: dict[str, tuple[int, ...]] | None = None,
    **kw: Any,
):
    a = StandInAnalysis(board, signals or {"pcie5": (2, 3, 4, 5)}, **kw)
    return check_impedance(CheckContext(board, a, "inference"), rule(params))  # type: ignore[arg-type]


# expected values, from the formulas directly (the check must wire the numbers through)
X_CLOSED = 2 * imp.coupled_stripline(0.1, 0.15, 0.3175, 0.0175, 3.6)[1]
#: the production field solution, computed here straight from the solver (meshes 0.5 and 1,
#: Richardson order 4/3): what every row must carry, whatever else the board holds


def _fd_zdiff(resolution: float) -> float:
    """Zdiff of the reference stripline from the field solver at ``resolution`` (Richardson
    order 4/3, as production uses)."""
    return (
        2
        * imp.fd_coupled(
            0.1,
            0.15,
            0.0175,
            0.15,
            [imp.FdLayer(0, 0.3175, 3.6)],
            0.3175,
            resolution=resolution,
            extrapolate=True,
            odd_only=True,
            order=4 / 3,
        )[1]
    )


X_ZDIFF = _fd_zdiff(1.0)


def test_expected_stripline_value_against_field_solution() -> None:
    fd = _fd_zdiff(2)
    assert pytest.approx(fd, rel=0.02) == X_CLOSED
    assert pytest.approx(104.5, abs=0.1) == X_CLOSED
    assert pytest.approx(fd, rel=0.004) == X_ZDIFF


# ---------------------------------------------------------------------------------------------
# Geometry extraction
# ---------------------------------------------------------------------------------------------


def test_weighted_median() -> None:
    assert imp.weighted_median(np.array([0.1, 0.2, 0.3]), np.array([1.0, 1.0, 5.0])) == 0.3
    assert imp.weighted_median(np.array([0.1, 0.2, 0.3]), np.array([1.0, 1.0, 1.0])) == 0.2


def test_measure_pair_ignores_fanout() -> None:
    segs = pair_segments(0.0, 0.1, 0.15, 2, 1, 2)
    start = np.array([s[0] for s in segs])
    end = np.array([s[1] for s in segs])
    m = imp.measure_pair(start, end, np.full(len(segs), 0.1), np.array([s[2] == 1 for s in segs]))
    assert m.width_mm == pytest.approx(0.1)
    assert m.gap_mm == pytest.approx(0.15, abs=1e-9)
    assert m.coupled_mm == pytest.approx(20.0)  # only the parallel run
    # P length 20 + √2 + √1.49, N length 20 + √3.25; the row length is their mean
    assert m.length_mm == pytest.approx(
        (20 + math.sqrt(2) + math.sqrt(1.49) + 20 + math.sqrt(3.25)) / 2
    )


def test_measure_pair_weights_by_coupled_length_and_handles_reversed_segments() -> None:
    # 15 mm at gap 0.2 (N drawn right-to-left), then 5 mm at gap 0.1; width 0.1 everywhere
    start = np.array([[0, 0], [15, 0.3], [15, 0], [15, 0.2]], dtype=float)
    end = np.array([[15, 0], [0, 0.3], [20, 0], [20, 0.2]], dtype=float)
    m = imp.measure_pair(start, end, np.full(4, 0.1), np.array([True, False, True, False]))
    assert m.gap_mm == pytest.approx(0.2)
    assert m.coupled_mm == pytest.approx(20.0)


def test_measure_pair_without_parallel_partner() -> None:
    start = np.array([[0, 0], [0, 3]], dtype=float)
    end = np.array([[10, 0], [0, 13]], dtype=float)  # perpendicular, far
    m = imp.measure_pair(start, end, np.full(2, 0.2), np.array([True, False]))
    assert m.gap_mm is None and m.width_mm == pytest.approx(0.2)


def test_layer_stack_stripline_and_microstrip() -> None:
    board = make_board()
    planes = {1: [], 3: [], 4: []}
    s = imp.layer_stack(board, 2, planes)
    assert s.structure == "stripline"
    assert (s.h_above_mm, s.h_below_mm, s.t_mm) == (0.15, 0.15, 0.0175)
    assert (s.er_above, s.er_below) == (3.6, 3.6)
    assert s.references == ("In1.Cu", "In3.Cu")
    m = imp.layer_stack(board, 0, planes)
    assert (m.structure, m.h_below_mm, m.er_below, m.mask) == ("microstrip", 0.1, 3.5, (0.01, 3.3))
    b = imp.layer_stack(board, 5, planes)
    assert (b.structure, b.h_below_mm, b.references) == ("microstrip", 0.1, ("In4.Cu",))


def test_layer_stack_skips_a_signal_layer_to_the_plane() -> None:
    # In2 is not a plane: a pair on F.Cu over In1 … and one on In2 sees In1 / In3.  Take In1 off
    # the plane list: F.Cu's reference becomes In3 through d1, In1 copper, d2, In2 copper, d3
    board = make_board()
    m = imp.layer_stack(board, 0, {3: [], 4: []})
    assert m.references == ("In3.Cu",)
    assert m.h_below_mm == pytest.approx(0.10 + 0.035 + 0.15 + 0.0175 + 0.15)
    assert m.er_below == pytest.approx((0.1 * 3.5 + 0.3 * 3.6) / 0.4)


def test_layer_stack_without_planes_assumes_adjacent_layers() -> None:
    s = imp.layer_stack(make_board(), 2, {})
    assert s.structure == "stripline" and s.references == ("In1.Cu", "In3.Cu")
    assert any("assumed" in n for n in s.notes)


def test_layer_stack_missing_data() -> None:
    s = imp.layer_stack(make_board(er_d2=None), 2, {1: [], 3: []})
    assert s.missing == ("epsilon_r of dielectric 2",)
    assert imp.layer_stack(make_board(stack=None), 2, {}).missing == ("the stack-up",)


# ---------------------------------------------------------------------------------------------
# The check on the hand-built board
# ---------------------------------------------------------------------------------------------


def test_pair_table_values() -> None:
    board = make_board()
    rows = imp.pair_table(StandInAnalysis(board, {}))
    by = {(r.pair, r.layer_name): r for r in rows}
    x = by[("/X", "In2.Cu")]
    assert (x.width_mm, x.gap_mm, x.method) == (
        pytest.approx(0.1),
        pytest.approx(0.15),
        imp.METHOD_SL_FIELD,
    )
    assert x.zdiff_ohm == pytest.approx(X_ZDIFF, rel=1e-9)
    assert x.closed_form_ohm == pytest.approx(X_CLOSED, rel=1e-12)
    y = by[("/Y", "F.Cu")]
    assert y.method == imp.METHOD_MS_FIELD and y.stack.mask == (0.01, 3.3)
    want = (
        2
        * imp.fd_coupled(
            0.12,
            0.13,
            0.035,
            0.1,
            [imp.FdLayer(0, 0.1, 3.5)],
            None,
            resolution=1.0,
            mask=(0.01, 3.3),
            extrapolate=True,
            odd_only=True,
            order=4 / 3,
        )[1]
    )
    assert y.zdiff_ohm == pytest.approx(want, rel=1e-9)
    # the closed form rides along and agrees to its measured accuracy (mask lowers the field value)
    assert y.closed_form_ohm == pytest.approx(
        2 * imp.coupled_microstrip(0.12, 0.13, 0.1, 0.035, 3.5)[1], rel=1e-12
    )
    assert 0.0 < y.closed_form_ohm / y.zdiff_ohm - 1 < 0.1


def test_check_passes_inside_tolerance_and_counts_items() -> None:
    out = run(make_board(), {"zdiff_ohm": 100, "tol_pct": 10}, {"pcie5": (2, 3)})
    assert out.findings == [] and out.checked == 1


def test_check_violation_names_method_and_values() -> None:
    out = run(make_board(), {"zdiff_ohm": 85, "tol_pct": 5}, {"pcie5": (2, 3)})
    assert out.checked == 1
    (f,) = out.findings
    assert f.status == Status.VIOLATION and f.severity == Severity.ERROR
    assert f.measured == pytest.approx(round(X_ZDIFF, 2))
    assert f.limit == 85 and f.unit == "ohm"
    assert (f.net, f.layer) == ("/X", "In2.Cu")
    assert "field solver" in f.message and f"{X_ZDIFF:.1f} Ω" in f.message
    assert f.evidence["method"] == imp.METHOD_SL_FIELD
    assert f.evidence["accuracy"].startswith("within 0.4 %")
    g = f.evidence["geometry"]
    assert (g["width_mm"], g["gap_mm"], g["b_mm"], g["epsilon_r_above"]) == (0.1, 0.15, 0.3175, 3.6)
    assert f.evidence["band"] == {
        "target_ohm": 85.0,
        "tol_pct": 5.0,
        "min_ohm": 80.75,
        "max_ohm": 89.25,
    }
    assert f.evidence["deviation_pct"] == pytest.approx(round((X_ZDIFF / 85 - 1) * 100, 1))
    assert f.pos == (10.0, 0.0) and "u0" in f.items
    assert f.evidence["nets"] == ["/X_P", "/X_N"]


def test_check_falls_back_on_signal_type_target() -> None:
    sig = {"pcie5": StandInSignal(zdiff_ohm=85.0, zdiff_tol_pct=5.0)}
    out = run(
        make_board(), {"zdiff_ohm": None, "tol_pct": None}, {"pcie5": (2, 3)}, signal_types=sig
    )
    assert len(out.findings) == 1 and out.findings[0].limit == 85.0


def test_check_no_target_is_cannot_verify() -> None:
    out = run(make_board(), {"zdiff_ohm": None, "tol_pct": None}, {"pcie5": (2, 3)})
    (f,) = out.findings
    assert f.status == Status.CANNOT_VERIFY and "zdiff_ohm" in f.evidence["declare"]


def test_check_missing_er_is_cannot_verify_with_declare() -> None:
    out = run(make_board(er_d2=None), {"zdiff_ohm": 85, "tol_pct": 10}, {"pcie5": (2, 3)})
    (f,) = out.findings
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["declare"] == "stack-up: epsilon_r of dielectric 2"
    assert f.layer == "In2.Cu"


def test_check_without_stackup() -> None:
    out = run(make_board(stack=None), {"zdiff_ohm": 85, "tol_pct": 10})
    assert out.checked == 2
    assert {f.status for f in out.findings} == {Status.CANNOT_VERIFY}
    assert all("the stack-up" in f.evidence["declare"] for f in out.findings)


def test_check_ignores_other_signals_and_unpaired_nets() -> None:
    assert run(make_board(), {"zdiff_ohm": 50, "tol_pct": 1}, {"pcie5": (2,)}).checked == 0
    assert run(make_board(), {"zdiff_ohm": 50, "tol_pct": 1}, {"usb3": (2, 3)}).checked == 0


# ---------------------------------------------------------------------------------------------
# A real board: antmicro M.2-to-OCuLink adapter, PCIe x4 in net class 85Ohm-diff_PCIE
# ---------------------------------------------------------------------------------------------

OCULINK = FIXTURE_BOARDS.get("m2-oculink-adapter")


@pytest.fixture(scope="module")
def oculink():  # noqa: ANN201
    if OCULINK is None:
        pytest.skip("fixture board missing")
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    board = read_board(str(OCULINK))
    return board, Analysis(board)


def test_fixture_pair_rows(oculink) -> None:  # noqa: ANN001
    board, analysis = oculink
    rows = imp.pair_rows(analysis)
    rx0 = next(r for r in rows if r["name"] == "/PCIe_{x4}.RX0" and r["layer"] == "F.Cu")
    # stack-up: F.Cu 35 µm over 0.1855 mm of "7628" εr 4.2 to In1 (GND); F.Mask 10 µm;
    # net class 85Ohm-diff_PCIE: 0.22 / 0.11 mm
    assert (rx0["width_mm"], rx0["gap_mm"], rx0["h_mm"], rx0["epsilon_r"], rx0["t_mm"]) == (
        0.22,
        0.11,
        0.1855,
        4.2,
        0.035,
    )
    assert rx0["references"] == ["In1.Cu"]
    assert rx0["method"] == imp.METHOD_MS_FIELD
    assert rx0["zdiff_ohm"] == pytest.approx(87.8, abs=0.2)  # 10 µm mask; bare: 91.3 Ω
    assert rx0["closed_form_ohm"] == pytest.approx(92.2, abs=0.2)  # closed form, no mask
    assert rx0["signal"] == "pcie4" and rx0["routed"] is True
    keys = {"name", "layer", "width_mm", "gap_mm", "zdiff_ohm", "method", "h_mm", "epsilon_r"}
    assert all(keys <= set(r) for r in rows if r["structure"] == "microstrip")
    # every PCIe pair is on an outer layer of this 4-layer board, within 87-89 Ω
    pcie = [r for r in rows if r["routed"]]
    assert len(pcie) >= 12
    assert all(87.0 < r["zdiff_ohm"] < 89.0 for r in pcie)


def test_fixture_check_through_pipeline(oculink) -> None:  # noqa: ANN001
    from accel_drc.pipeline import check_board

    board, _ = oculink
    res = check_board(board)  # edge class, PCIe assumed Gen4: 85 Ω ± 10 % -> all pass
    runs = {r.rule.id: r.checked for r in res.rules if r.rule.check == "impedance"}
    assert runs["edge.impedance.pcie4"] == 12
    assert not [f for f in res.findings if f.check == "impedance"]
    tight = check_board(  # the class declared: the override is of edge's rule only
        board,
        config={"rules": {"edge.impedance.pcie4": {"params": {"zdiff_ohm": 85, "tol_pct": 3}}}},
        board_class="edge",
    )
    found = [f for f in tight.findings if f.check == "impedance"]
    assert len(found) == 12  # 87.6-88.3 Ω is 3.1-3.9 % high
    assert all(87.5 < f.measured < 88.4 for f in found)
    # the generation is assumed (Gen4): conditional, with every generation's verdict
    assert all(f.status == Status.CANNOT_VERIFY for f in found)
    assert all(f.evidence["basis"]["signal"] == "assumed" for f in found)
    assert all(f.evidence["candidates"]["pcie4"] == "fail" for f in found)
    assert all(f.evidence["candidates"]["pcie3"] == "pass" for f in found)
    declared = check_board(
        board,
        config={
            "rules": {"edge.impedance.pcie4": {"params": {"zdiff_ohm": 85, "tol_pct": 3}}},
            "signals": {"pcie4": [".*PCIe.*[RT]X[0-9].*"]},
        },
        board_class="edge",
    )
    found = [f for f in declared.findings if f.check == "impedance"]
    assert len(found) == 12
    # facts now, except where the undeclared mask εr (3.3 assumed) decides the verdict
    facts = [f for f in found if f.status == Status.VIOLATION]
    assert facts and all(f.evidence["basis"]["signal"] == "declared" for f in facts)
    for f in found:
        if f.status == Status.CANNOT_VERIFY:
            assert f.evidence["basis"]["mask_er"] == "default"
        else:
            assert "mask_er" in f.evidence["robust_inputs"]


def test_pair_rows_stripline_keys() -> None:
    rows = imp.pair_rows(StandInAnalysis(make_board(), {}))
    x = next(r for r in rows if r["name"] == "/X")
    assert x["layer"] == "In2.Cu" and x["structure"] == "stripline"
    assert (x["width_mm"], x["gap_mm"], x["b_mm"], x["epsilon_r"]) == (0.1, 0.15, 0.3175, 3.6)
    assert x["zdiff_ohm"] == round(X_ZDIFF, 2) and x["method"] == imp.METHOD_SL_FIELD
    assert x["net_class"] == "DIFF" and x["references"] == ["In1.Cu", "In3.Cu"]
    assert x["signal"] is None and x["missing"] == []


def test_pair_routed_apart_is_never_judged_with_the_net_class_gap() -> None:
    # P and N 2 mm apart: no coupled run, so no measured gap; the net class's gap is not used
    # as if measured (issue 19 §1): the rows are breakouts, and with the signal's Nyquist known
    # the 20 mm where P and N do not run together is a warning with its length
    out = run(make_board(apart=2.0), {"zdiff_ohm": 85, "tol_pct": 5})
    assert out.checked == 2 and out.findings == []
    sig = {"pcie5": StandInSignal(85.0, 5.0, nyquist_hz=16e9)}
    out = run(make_board(apart=2.0), {"zdiff_ohm": 85, "tol_pct": 5}, signal_types=sig)
    assert {f.rule for f in out.findings} == {"test.impedance.pcie5.uncoupled"}
    assert all(f.severity == Severity.WARNING for f in out.findings)
    x = next(f for f in out.findings if f.net == "/X")
    # the longest contiguous stretch: P's 20 mm run and its two fan-outs, joined end to end
    assert x.measured == pytest.approx(20 + math.sqrt(1.49) + math.sqrt(2), abs=0.01)
    assert "stretch" in x.message
    rows = {r["name"]: r for r in imp.pair_rows(StandInAnalysis(make_board(apart=2.0), {}))}
    assert rows["/X"]["kind"] == "breakout" and rows["/X"]["gap_source"] == "net class"
    assert rows["/X"]["basis"]["gap"] == "declared"  # the designer's DIFF class, not KiCad's


def test_inspect_detail_pairs_cli(capsys) -> None:  # noqa: ANN001
    if OCULINK is None:
        pytest.skip("fixture board missing")
    import json

    from accel_drc.cli import main

    assert main(["inspect", str(OCULINK), "--json", "--detail", "pairs"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["details"]["pairs"]
    assert len(rows) == 16  # 8 PCIe lanes + 2 reference clocks, each on F.Cu and/or B.Cu
    tx1 = next(r for r in rows if r["name"] == "/PCIe_{x4}.TX1" and r["layer"] == "B.Cu")
    assert (tx1["width_mm"], tx1["gap_mm"], tx1["h_mm"], tx1["epsilon_r"]) == (
        0.22,
        0.111,
        0.1855,
        4.2,
    )
    assert tx1["zdiff_ohm"] == pytest.approx(87.9, abs=0.2)
    assert tx1["references"] == ["In2.Cu"]


def test_measure_pair_many_segments_in_chunks() -> None:
    # 600 P pieces of 0.1 mm and 300 N pieces of 0.2 mm along the same 60 mm: more P rows than
    # one block of the P × N search; N drawn 0.25 mm off (gap 0.15 at width 0.1)
    xp = np.arange(601) * 0.1
    xn = np.arange(301) * 0.2
    start = np.vstack(
        [np.column_stack([xp[:-1], np.zeros(600)]), np.column_stack([xn[:-1], np.full(300, 0.25)])]
    )
    end = np.vstack(
        [np.column_stack([xp[1:], np.zeros(600)]), np.column_stack([xn[1:], np.full(300, 0.25)])]
    )
    is_p = np.arange(900) < 600
    m = imp.measure_pair(start, end, np.full(900, 0.1), is_p)
    assert m.gap_mm == pytest.approx(0.15)
    assert m.coupled_mm == pytest.approx(60.0)
    assert m.length_mm == pytest.approx(60.0)


def _row_key(r: Any) -> tuple:
    return (
        r.pair,
        r.layer_name,
        r.width_mm,
        r.gap_mm,
        r.zdiff_ohm,
        r.closed_form_ohm,
        r.coupled_mm,
        r.length_mm,
        r.footprint,
        r.notes,
        r.missing,
    )


def test_prefetched_pair_table_equals_in_line() -> None:
    """The pipeline may build the whole pair table on a background thread
    (``Analysis.prefetch("pair_table")``, issue 18): the impedance check's subset and the
    whole table are then the rows computed in line, value for value."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    board = read_board(str(FIXTURE_BOARDS["crosslink-nx-video-converter"]))
    ahead = Analysis(board)
    ahead.prefetch("pair_table")
    some = list(board.diff_pairs[::3])
    got_some = [_row_key(r) for r in imp.pair_table(ahead, some)]
    got_all = [_row_key(r) for r in imp.pair_table(ahead)]
    fresh = Analysis(board)
    want_some = [_row_key(r) for r in imp.pair_table(fresh, some)]
    want_all = [_row_key(r) for r in imp.pair_table(Analysis(board))]
    assert got_all and any(k[4] is not None for k in got_all)  # pairs with a Zdiff
    assert got_some == want_some and got_all == want_all
    assert [_row_key(r) for r in imp.pair_table(fresh)] == want_all  # the kept whole table


def test_prefetched_pair_table_failure_computes_in_line(monkeypatch) -> None:
    """A failure of the table computed ahead is not the table: the check's call computes it
    itself, as if nothing had been started."""
    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    def boom(self: Analysis) -> list:
        raise RuntimeError("pair table exploded")

    board = read_board(str(FIXTURE_BOARDS["crosslink-nx-video-converter"]))
    monkeypatch.setattr(Analysis, "_compute_pair_table", boom)
    a = Analysis(board)
    a.prefetch("pair_table")
    got = [_row_key(r) for r in imp.pair_table(a)]
    assert got == [_row_key(r) for r in imp.pair_table(Analysis(board))]


def test_pair_table_prefetched_after_the_via_table(monkeypatch) -> None:
    """``prefetch("pair_table", after="via_stubs")``: the pair table's thread starts its work
    only once the via table is done (even when that one failed), and gives the table computed
    in line."""
    import threading

    from accel_drc.analysis import Analysis
    from accel_drc.readers import read_board

    board = read_board(str(FIXTURE_BOARDS["crosslink-nx-video-converter"]))
    release = threading.Event()
    order: list[str] = []
    pair_table_compute = Analysis._compute_pair_table

    def slow_failing_vias(self: Analysis) -> None:
        release.wait(10)
        order.append("vias")
        raise RuntimeError("via table exploded")

    def pairs(self: Analysis) -> list:
        order.append("pairs")
        return pair_table_compute(self)

    monkeypatch.setattr(Analysis, "_compute_via_stubs", slow_failing_vias)
    monkeypatch.setattr(Analysis, "_compute_pair_table", pairs)
    a = Analysis(board)
    a.prefetch("via_stubs")
    a.prefetch("pair_table", after="via_stubs")
    assert not a._jobs["pair_table"]._done.wait(0.3)  # queued behind the held via table
    assert order == []
    release.set()
    got = [_row_key(r) for r in imp.pair_table(a)]
    assert order == ["vias", "pairs"]
    assert got == [_row_key(r) for r in imp.pair_table(Analysis(board))]
    a.settle_prefetched()


def test_candidates_follow_the_projects_override_of_a_sibling(oculink) -> None:  # noqa: ANN001
    """The "fails pcie4, passes pcie3" line reads the rules that apply to this board: with
    pcie3's rule overridden to ± 3 % too, pcie3 fails as well (it read the shipped pack's ± 10 %
    and said "passes pcie3" before)."""
    from accel_drc.pipeline import check_board

    board, _ = oculink
    tight = {"params": {"zdiff_ohm": 85, "tol_pct": 3}}
    res = check_board(
        board,
        config={"rules": {"edge.impedance.pcie4": tight, "edge.impedance.pcie3": tight}},
        board_class="edge",
    )
    found = [f for f in res.findings if f.check == "impedance"]
    assert len(found) == 12 and all(f.status == Status.CANNOT_VERIFY for f in found)
    assert all(f.evidence["candidates"]["pcie3"] == "fail" for f in found)
    assert all(f.evidence["candidates"]["pcie2"] == "pass" for f in found)  # 100 Ω ± 20 %
    assert all("passes pcie1, pcie2" in f.message for f in found), found[0].message
