"""The ``crosstalk`` check's shortcuts (issue 32, speed): each is a test that it costs fewer
field solves or joins than the plain way, and that its result stays within its stated error of
the plain computation (docs/impedance.md, "Crosstalk", cost).

- a coupled-modes solve meshes each resolution once (Z and εeff from the same capacitances):
  exact;
- a stripline nearer its upper plane is solved upside down, so mirrored layers share a solve:
  the same fields, the two meshes agree within 4 % in Kb (the production mesh's own error
  against the fine one, up to 7 % at 4 h where Kb is ~0.3 %);
- the bound that lets a victim pass without its full solution reads only nodes the full
  solution reads, and is never below it;
- a gap that falls on a node needs that node alone;
- one neighbour join per layer for every rule of the run, equal to each rule's own join.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis import Analysis
from accel_drc.analysis.crosstalk import (
    XTALK_RESOLUTION,
    coupling_from_modes,
    coupling_of,
    parallel_runs,
)
from accel_drc.analysis.impedance import FIELD_ORDER, field_cross_section
from accel_drc.analysis.impedance import solver as fd
from accel_drc.analysis.impedance.stack import LayerStack
from accel_drc.checks import CheckContext
from accel_drc.checks import crosstalk as xc
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity, Status

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "crosstalk"
PARAMS = {"budget_pct": 5, "max_gap_h": 4, "fastest_rise_ui": 0.125, "min_coupled_mm": 1.0}

# vme-wren's In1.Cu/In(n-1).Cu: 0.119 mm of εr 4.1 to one plane, 0.203 mm of εr 4.4 to the other
UPRIGHT = LayerStack(1, "In1.Cu", "stripline", 0.018, 0.119, 4.1, h_above_mm=0.203, er_above=4.4)
UPSIDE_DOWN = LayerStack(
    8, "In8.Cu", "stripline", 0.018, 0.203, 4.4, h_above_mm=0.119, er_above=4.1
)


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple]:
    """Wrap ``module.name`` so every call's positional arguments are recorded."""
    calls: list[tuple] = []
    orig = getattr(module, name)

    def counted(*a: object, **k: object) -> object:
        calls.append(a)
        return orig(*a, **k)

    monkeypatch.setattr(module, name, counted)
    return calls


def _coupling(stack: LayerStack, s: float, resolution: float) -> object:
    args, mask = field_cross_section(stack, 0.1, s)
    return coupling_from_modes(
        *fd.fd_coupled_modes(*args, resolution=resolution, mask=mask, order=FIELD_ORDER)
    )


def test_coupled_modes_mesh_each_resolution_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two meshes (r/2 and r), each solved once: Z and εeff come from the same capacitances
    (the plain way solved each mesh twice, once per quantity)."""
    calls = _count_calls(monkeypatch, fd, "_mode_capacitances")
    args, mask = field_cross_section(UPRIGHT, 0.1, 0.15)
    fd.fd_coupled_modes(*args, resolution=XTALK_RESOLUTION, mask=mask, order=FIELD_ORDER)
    assert [c[6] for c in calls] == [XTALK_RESOLUTION / 2, XTALK_RESOLUTION]


def test_upright_turns_a_stripline_nearer_its_upper_plane_over() -> None:
    assert UPSIDE_DOWN.upright() == UPRIGHT.__class__(
        8, "In8.Cu", "stripline", 0.018, 0.119, 4.1, h_above_mm=0.203, er_above=4.4
    )
    assert UPRIGHT.upright() is UPRIGHT
    micro = LayerStack(0, "F.Cu", "microstrip", 0.035, 0.2, 3.6)
    assert micro.upright() is micro
    # equal heights: the lower εr goes below, so the two orders meet on one key
    even = LayerStack(2, "In2.Cu", "stripline", 0.018, 0.15, 4.4, h_above_mm=0.15, er_above=4.1)
    assert even.upright().er_below == 4.1 and even.upright().upright() == even.upright()


def test_mirrored_striplines_share_one_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_calls(monkeypatch, fd, "fd_coupled_modes")
    memo: dict = {}
    a = coupling_of(UPRIGHT, 0.1, 0.15, memo)
    b = coupling_of(UPSIDE_DOWN, 0.1, 0.15, memo)
    assert len(calls) == 1 and a == b


@pytest.mark.parametrize("k", range(-1, 5))
def test_mirrored_solve_within_the_meshes_error(k: int) -> None:
    """The shared (upright) solution against the layer solved as it lies, at the gap nodes
    h·2^(k/2) from h/√2 to 4 h: within 4 % in Kb and 0.00005 in kf; both against the fine mesh
    (resolution 4): within 7 % (the production mesh's own error, largest at 4 h)."""
    s = round(0.119 * 2.0 ** (k / 2), 4)
    up = _coupling(UPRIGHT, s, XTALK_RESOLUTION)
    down = _coupling(UPSIDE_DOWN, s, XTALK_RESOLUTION)
    fine = _coupling(UPSIDE_DOWN, s, 4.0)
    assert up.kb == pytest.approx(down.kb, rel=0.04)
    assert up.kf == pytest.approx(down.kf, abs=5e-5)
    assert up.eeff == pytest.approx(down.eeff, rel=0.002)
    assert up.kb == pytest.approx(fine.kb, rel=0.07)


def _ctx(name: str) -> CheckContext:
    board = read_board(str(HERE / name))
    return CheckContext(board=board, analysis=Analysis(board), board_class="inference")


def _rule(signal: str, **params: object) -> Rule:
    return Rule(id=f"t.crosstalk.{signal}", check="crosstalk", severity=Severity.WARNING,
                params={**PARAMS, "single_ended": signal == "ddr4", **params}, why="w",
                source="s", signal=signal)  # fmt: skip


def _q(width: float) -> float:
    """A width as the solver quantises it (to :data:`~accel_drc.checks.crosstalk.WIDTH_STEP_MM`)."""
    return max(round(width / xc.WIDTH_STEP_MM) * xc.WIDTH_STEP_MM, xc.WIDTH_STEP_MM)


def _full_nodes(ctx: CheckContext, rule: Rule) -> tuple[set, dict]:
    """The nodes the full solution of every term reads, and each victim's (bound, full noise
    at the fastest edge), from a fresh solver."""
    solver = xc._Solver(ctx)
    victims = xc._victims(ctx, rule, True)
    aggressors = xc._units(ctx.board, sorted(ctx.analysis.net_signal))
    terms, _ = xc._terms(ctx, solver, victims, aggressors, 4.0)
    seen: set = set()
    node = xc._Solver._node

    def spy(self: xc._Solver, layer: int, width: float, k: int) -> object:
        seen.add((layer, _q(width), k))
        return node(self, layer, width, k)

    xc._Solver._node = spy  # type: ignore[method-assign]
    try:
        for t in terms.values():
            t.solve(solver)
        full = set(seen)
        noise = {}
        for (v, a), t in terms.items():
            _slow, fast, _d, _src = xc._rise_bounds(ctx, rule, {a: 1})
            b = xc._noise({(v, a): t.bound(solver)}, {(v, a): t.length}, {v: 1}, {a: 1}, fast)
            f = xc._noise({(v, a): t.solve(solver)}, {(v, a): t.length}, {v: 1}, {a: 1}, fast)
            noise[(v, a)] = (b, f)
    finally:
        xc._Solver._node = node  # type: ignore[method-assign]
    return full, noise


def test_bound_reads_only_the_full_solutions_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """DQ0/DQ1 0.1 mm apart on F.Cu, 0.6 mm apart on In2.Cu: the bound takes each layer at
    its own closest gap, so it solves In2.Cu at 0.6 mm (a node the full solution reads), not at
    F.Cu's 0.1 mm (the plain bound took the couple's closest gap on every layer)."""
    ctx = _ctx("ddr4_dq_two_layers.kicad_pcb")
    full, _ = _full_nodes(ctx, _rule("ddr4"))
    ctx = _ctx("ddr4_dq_two_layers.kicad_pcb")
    solver = xc._Solver(ctx)
    victims = xc._victims(ctx, _rule("ddr4"), True)
    terms, _ = xc._terms(ctx, solver, victims, victims, 4.0)
    asked = _count_calls(monkeypatch, xc._Solver, "_node")
    for t in terms.values():
        t.bound(solver)
    assert {(a[1], _q(a[2]), a[3]) for a in asked} <= full
    assert {a[1] for a in asked} == {0, 2}  # both layers bounded


@pytest.mark.parametrize(
    "name",
    [
        "ddr4_dq_two_layers.kicad_pcb",
        "ddr4_dq_stripline_tight.kicad_pcb",
        "ddr4_dq_stripline_spaced.kicad_pcb",
        "tx_pairs_microstrip_tight.kicad_pcb",
        "tx_pairs_stripline_tight.kicad_pcb",
        "tx_rx_pairs_microstrip_tight.kicad_pcb",
    ],
)
def test_bound_is_never_below_the_full_solution(name: str) -> None:
    ctx = _ctx(name)
    signal = "ddr4" if "ddr4" in name else "pcie4"
    _full, noise = _full_nodes(ctx, _rule(signal))
    assert noise
    for b, f in noise.values():
        assert abs(b[0]) >= abs(f[0]) - 1e-12  # NEXT
        assert abs(b[1]) >= abs(f[1]) - 1e-12  # FEXT


def test_a_gap_on_a_node_needs_that_node_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx("ddr4_dq_two_layers.kicad_pcb")
    solver = xc._Solver(ctx)
    asked = _count_calls(monkeypatch, xc._Solver, "_node")
    h = solver.height(0)
    kb, kf, ps = solver.interpolated(0, 0.15, h * 2.0 ** (3 / 2))
    assert [a[3] for a in asked] == [3]
    node = solver._node(0, 0.15, 3)
    assert (kb, kf, ps) == (node.kb, node.kf, node.ps_per_mm)
    # off a node: the two around it, Kb between them
    asked.clear()
    kb, _kf, _ps = solver.interpolated(0, 0.15, h * 1.9)
    assert [a[3] for a in asked][:2] == [1, 2]
    lo, hi = solver._node(0, 0.15, 1), solver._node(0, 0.15, 2)
    assert hi.kb < kb < lo.kb


def test_the_bound_delay_is_the_slowest_the_dielectrics_allow() -> None:
    ctx = _ctx("ddr4_dq_two_layers.kicad_pcb")
    solver = xc._Solver(ctx)
    for ly in (0, 2):
        slowest = solver.ps_per_mm_max(ly)
        assert slowest == pytest.approx(math.sqrt(3.6) / 299_792_458.0 * 1e9)
        for k in range(-2, 5):
            assert solver._node(ly, 0.15, k).ps_per_mm <= slowest * (1 + 1e-9)


def test_one_join_per_layer_for_every_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule of a run (the class pack's DDR4 rule, a project's second DDR4 rule, a PCIe
    rule with no nets here) shares one neighbour join per layer (they joined per rule)."""
    ctx = _ctx("ddr4_dq_two_layers.kicad_pcb")
    import accel_drc.analysis.crosstalk as xa

    joins = _count_calls(monkeypatch, xa, "parallel_runs")
    first = xc.check_crosstalk(ctx, _rule("ddr4")).findings
    second = Rule(id="project.crosstalk.ddr4", check="crosstalk", severity=Severity.ERROR,
                  params={**PARAMS, "single_ended": True, "budget_pct": 8}, why="w",
                  source="s", signal="ddr4")  # fmt: skip
    again = xc.check_crosstalk(ctx, second).findings
    xc.check_crosstalk(ctx, _rule("pcie4"))
    assert len(joins) == 2  # F.Cu and In2.Cu, once
    assert [f.measured for f in again] == [f.measured for f in first]


def test_shared_join_equals_a_rules_own_join() -> None:
    """The runs a rule takes from the shared join are the runs of its victims joined with
    every typed net, as the plain way computed them rule by rule."""
    from accel_drc.checks._common import straight_pieces, track_rows

    ctx = _ctx("ddr4_dq_stripline_tight.kicad_pcb")
    rule = _rule("ddr4")
    solver = xc._Solver(ctx)
    victims = xc._victims(ctx, rule, True)
    aggressors = xc._units(ctx.board, sorted(ctx.analysis.net_signal))
    terms, _ = xc._terms(ctx, solver, victims, aggressors, 4.0)
    t = ctx.board.tracks
    ly = 2
    vnets = sorted({n for m in victims.values() for n in m})
    vs, ve, vr = straight_pieces(ctx.board, track_rows(ctx.analysis, vnets, ly))
    anets = sorted(ctx.analysis.net_signal)
    as_, ae, ar = straight_pieces(ctx.board, track_rows(ctx.analysis, anets, ly))
    runs = parallel_runs(vs, ve, t.width[vr], as_, ae, t.width[ar], 4.0 * solver.height(ly))
    own: dict = {}
    for i in range(len(runs.victim)):
        v, a = int(t.net[vr[runs.victim[i]]]), int(t.net[ar[runs.aggressor[i]]])
        if v != a:
            own.setdefault((v, a), []).append((runs.length_mm[i], runs.gap_mm[i]))
    assert set(own) == set(terms)
    for k, pieces in own.items():
        got = sorted(zip(terms[k].lengths, terms[k].gaps))
        assert np.allclose(got, sorted(pieces), rtol=0, atol=1e-9)


def test_parallel_runs_skip_a_units_own_couples() -> None:
    """A pair's two legs side by side: a run, unless both carry one unit id."""
    vs, ve = np.array([[0.0, 0.0], [0.0, 0.3]]), np.array([[20.0, 0.0], [20.0, 0.3]])
    w = np.full(2, 0.1)
    # each leg beside the other (a segment beside itself overlaps its own copper: no run)
    assert len(parallel_runs(vs, ve, w, vs, ve, w, 1.0).victim) == 2
    one = np.array([7, 7])
    assert len(parallel_runs(vs, ve, w, vs, ve, w, 1.0, v_unit=one, a_unit=one).victim) == 0


def test_the_finding_names_the_quantity_over_the_budget() -> None:
    """DQ0/DQ1 0.1 mm apart over 20 mm of microstrip: 9.1 % NEXT at a one-UI edge (over the
    budget: a violation), while FEXT (1.8 % there) is larger only at the fastest edge (14.6 %):
    the finding names NEXT and sizes the gap for it (it named FEXT 1.82 %)."""
    from accel_drc.basis import settle_all

    got = settle_all(
        xc.check_crosstalk(_ctx("ddr4_dq_two_layers.kicad_pcb"), _rule("ddr4")).findings
    )
    assert {f.net for f in got} == {"/DDR4_DQ0", "/DDR4_DQ1"}
    for f in got:
        assert f.status is Status.VIOLATION
        assert "worst" in f.message and ": NEXT 9.1" in f.message
        assert f.layer == "F.Cu"
