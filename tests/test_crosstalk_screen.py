"""The ``crosstalk`` check's coarse-mesh screen (issue 32, speed): a victim passes on the
coarse mesh alone (``XTALK_RESOLUTION / 2``, no fine mesh solved) only when the ranges the fine
solution lies in (``COARSE_KB``, ``COARSE_KF``, ``COARSE_PS`` in analysis/crosstalk.py, each
side twice the worst deviation of ``bench/sweep_coarse_mesh.py``) keep its noise under the
budget; everything else is judged on the fine solution exactly as before.

- the stated ranges hold with their margin: a reduced sweep's worst deviation ≤ half of each;
- the coarse mesh is solved once: the fine solution reuses it and equals the plain one;
- each node's and each interpolated gap's range holds the fine value, and the screen's upper
  bound is never below a victim's full noise (every fixture);
- a victim just over the budget on the fine solution is still a finding, with the text of the
  plain computation; one far under passes with no fine mesh solved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _scripts import load_script
from accel_drc.analysis import Analysis
from accel_drc.analysis import crosstalk as xa
from accel_drc.analysis.impedance import FIELD_ORDER, field_cross_section
from accel_drc.analysis.impedance import solver as fd
from accel_drc.analysis.impedance.stack import LayerStack
from accel_drc.basis import settle_all
from accel_drc.checks import CheckContext
from accel_drc.checks import crosstalk as xc
from accel_drc.readers import read_board
from accel_drc.results import Rule, Severity

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "checks" / "crosstalk"
PARAMS = {"budget_pct": 5, "max_gap_h": 4, "fastest_rise_ui": 0.125, "min_coupled_mm": 1.0}
#: every non-broadside fixture with a coupled victim and the rule that judges it (the
#: stripline fixtures' far plane is 8 h away, outside ``COARSE_DOMAIN``: their striplines are
#: screened on the fine solution)
FIXTURES = (
    ("ddr4_dq_two_layers.kicad_pcb", "ddr4"),
    ("ddr4_dq_stripline_tight.kicad_pcb", "ddr4"),
    ("ddr4_dq_stripline_spaced.kicad_pcb", "ddr4"),
    ("tx_pairs_microstrip_tight.kicad_pcb", "pcie4"),
    ("tx_pairs_stripline_tight.kicad_pcb", "pcie4"),
    ("tx_rx_pairs_microstrip_tight.kicad_pcb", "pcie4"),
    ("hdmi14_pairs_microstrip_tight.kicad_pcb", "hdmi14"),
)
# vme-wren's In1.Cu: 0.119 mm of εr 4.1 to one plane, 0.203 mm of εr 4.4 to the other
VME_IN1 = LayerStack(1, "In1.Cu", "stripline", 0.018, 0.119, 4.1, h_above_mm=0.203, er_above=4.4)


def _ctx(name: str) -> CheckContext:
    board = read_board(str(HERE / name))
    return CheckContext(board=board, analysis=Analysis(board), board_class="inference")


def _rule(signal: str, **params: float) -> Rule:
    return Rule(id=f"t.crosstalk.{signal}", check="crosstalk", severity=Severity.WARNING,
                params={**PARAMS, "single_ended": signal == "ddr4", **params}, why="w",
                source="s", signal=signal)  # fmt: skip


def _fine_resolution_calls(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the mesh resolution of every :func:`_mode_capacitances` call from now on."""
    seen: list[float] = []
    orig = fd._mode_capacitances

    def counted(*a: Any, **k: Any) -> Any:
        seen.append(a[6])
        return orig(*a, **k)

    monkeypatch.setattr(fd, "_mode_capacitances", counted)
    return seen


def test_coarse_mesh_error_within_half_the_stated_ranges() -> None:
    """The reduced sweep (each ratio's extremes and middle: 486 cross-sections, microstrip
    bare and masked, symmetric and offset stripline): the worst deviation of the fine solution
    from the coarse mesh, on each side of each quantity, is at most half the range stated, so
    the 2× margin is measured, not assumed."""
    sweep = load_script("bench/sweep_coarse_mesh.py", "sweep_coarse_mesh")
    stated = {
        ("Kb", "below"): xa.COARSE_KB[0],
        ("Kb", "above"): xa.COARSE_KB[1],
        ("kf/Kb", "below"): xa.COARSE_KF[0],
        ("kf/Kb", "above"): xa.COARSE_KF[1],
        ("delay", "below"): xa.COARSE_PS[0],
        ("delay", "above"): xa.COARSE_PS[1],
    }
    worst = sweep.sweep(reduced=True)
    for side, (dev, where) in worst.items():
        assert dev <= 0.5 * stated[side], (side, dev, where)
    # the sweep is not vacuous: the coarse mesh does deviate (the fine Kb up to 22 % below it)
    assert worst[("Kb", "below")][0] > 0.1


def test_sweep_cases_lie_in_the_domain_and_outside_it_is_fine() -> None:
    """Every sweep case is in ``COARSE_DOMAIN``; a gap beyond it (8 h) gets the fine solution,
    flagged as not coarse, so no unmeasured range is ever used."""
    sweep = load_script("bench/sweep_coarse_mesh.py", "sweep_coarse_mesh")
    for _name, stack, w, s in sweep.cases(reduced=True):
        assert xa.in_coarse_domain(*field_cross_section(stack.upright(), w, s))
    memo: dict = {}
    far, coarse = xa.coarse_coupling_of(VME_IN1, 0.1, 8 * 0.119, memo)
    assert not coarse and far == xa.coupling_of(VME_IN1, 0.1, 8 * 0.119, {})


def test_coarse_mesh_solved_once_and_fine_solution_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The screen's coarse solve is the fine solution's r/2 mesh: after it, the fine solution
    solves only the r mesh, and equals the plain extrapolation bit for bit."""
    args, mask = field_cross_section(VME_IN1, 0.1, 0.15)
    plain = xa.coupling_from_modes(
        *fd.fd_coupled_modes(*args, resolution=xa.XTALK_RESOLUTION, mask=mask, order=FIELD_ORDER)
    )
    seen = _fine_resolution_calls(monkeypatch)
    memo: dict = {}
    coarse, is_coarse = xa.coarse_coupling_of(VME_IN1, 0.1, 0.15, memo)
    assert is_coarse and seen == [xa.XTALK_RESOLUTION / 2]
    fine = xa.coupling_of(VME_IN1, 0.1, 0.15, memo)
    assert seen == [xa.XTALK_RESOLUTION / 2, xa.XTALK_RESOLUTION]
    assert fine == plain and coarse != fine
    # once the fine solution is known, the screen takes it (no error range)
    assert xa.coarse_coupling_of(VME_IN1, 0.1, 0.15, memo) == (fine, False)


@pytest.mark.parametrize(("name", "signal"), FIXTURES[:4])
def test_ranges_hold_the_fine_values(name: str, signal: str) -> None:
    """At every piece of every term (gaps on and between the nodes): the coarse range of the
    interpolated Kb, kf and delay holds the fine interpolation; of each term's sums, its fine
    sums."""
    ctx = _ctx(name)
    rule = _rule(signal)
    coarse = xc._Solver(ctx)
    victims = xc._victims(ctx, rule, signal == "ddr4")
    aggressors = xc._units(ctx.board, sorted(ctx.analysis.net_signal))
    terms, _ = xc._terms(ctx, coarse, victims, aggressors, 4.0)
    spans = {k: t.span_sums(coarse) for k, t in terms.items()}
    fine = xc._Solver(_ctx(name))  # its own memo: no coarse node stands for a fine one
    assert terms
    for k, t in terms.items():
        for ly, w, g in zip(t.layers, t.widths, t.gaps):
            b0, b1, f0, f1, p0, p1 = coarse.span_interpolated(ly, w, g)
            kb, kf, ps = fine.interpolated(ly, w, g)
            assert b0 <= kb <= b1 and f0 <= kf <= f1 and p0 <= ps <= p1
        sums = t.solve(fine)
        lo, hi = spans[k][0::2], spans[k][1::2]
        for x, a, b in zip(sums, lo, hi):
            assert a - 1e-12 <= x <= b + 1e-12


@pytest.mark.parametrize(("name", "signal"), FIXTURES)
def test_screen_bound_never_below_the_full_noise(name: str, signal: str) -> None:
    """Every victim of every fixture: the screen's upper bound (coarse meshes, superposition,
    power sum) is at least the full solution's noise at the fastest edges, and the coarse
    plain bound at least the fine plain bound."""
    ctx = _ctx(name)
    rule = _rule(signal)
    solver = xc._Solver(ctx)
    victims = xc._victims(ctx, rule, signal == "ddr4")
    aggressors = xc._units(ctx.board, sorted(ctx.analysis.net_signal))
    terms, _ = xc._terms(ctx, solver, victims, aggressors, 4.0)
    judged = xc._couples(ctx, rule, victims, aggressors, terms)
    assert judged
    for _name, victim, couples in judged:
        upper = xc._coarse_upper(ctx, rule, solver, victim, couples, terms)
        bound = xc._bound(ctx, rule, solver, couples, terms, True)
        rows = xc._rows(ctx, rule, xc._Solver(_ctx(name)), victim, couples, terms)
        full = xc._power_sum(xc._worst(r[4], r[8]) for r in rows)
        assert upper >= full > 0
        assert bound >= xc._bound(ctx, rule, xc._Solver(_ctx(name)), couples, terms, False)


def _findings(
    name: str, signal: str, monkeypatch: pytest.MonkeyPatch | None = None, **params: float
) -> list[tuple[Any, ...]]:
    """The settled findings (net, status, measured, message) of one rule on one fixture, from
    a fresh analysis; with ``monkeypatch``, with the coarse screen switched off (the plain
    computation)."""
    if monkeypatch is not None:
        monkeypatch.setattr(xc, "_coarse_passes", lambda *a, **k: False)
    ctx = _ctx(name)
    got = settle_all(xc.check_crosstalk(ctx, _rule(signal, **params)).findings)
    if monkeypatch is not None:
        monkeypatch.undo()
    return [(f.net, f.status, f.measured, f.message, f.evidence) for f in got]


@pytest.mark.parametrize(
    ("name", "signal"),
    [
        ("tx_pairs_microstrip_tight.kicad_pcb", "pcie4"),  # FEXT, pair on pair
        ("ddr4_dq_two_layers.kicad_pcb", "ddr4"),  # NEXT and FEXT, single nets, two layers
    ],
)
def test_a_victim_just_over_the_budget_stays_a_finding(
    name: str, signal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget set a hair (2e-5 of the swing) under the fine noise of the fixture's least
    noisy victim: every victim is still a finding, identical (text, number, evidence) to the
    plain computation's, though the coarse meshes put the noise within ~20 % of it."""
    # the fine noise at the fastest edge of each victim (a tiny budget fails all)
    plain = _findings(name, signal, monkeypatch, budget_pct=0.001)
    noise = min(f[4]["crosstalk_fastest_edge"] for f in plain)  # rounded to 1e-5
    budget_pct = 100.0 * (noise - 2e-5)
    screened = _findings(name, signal, budget_pct=budget_pct)
    assert screened == _findings(name, signal, monkeypatch, budget_pct=budget_pct)
    assert len(screened) == len(plain)
    # and just above the fine noise of them all: every victim passes, screened or not
    top = max(f[4]["crosstalk_fastest_edge"] for f in plain)
    assert _findings(name, signal, budget_pct=100.0 * (top + 2e-5)) == []


@pytest.mark.parametrize(
    ("name", "signal"),
    [
        ("tx_rx_pairs_microstrip_tight.kicad_pcb", "pcie4"),  # NEXT 0.7 % of a 5 % budget
        ("hdmi14_pairs_microstrip_tight.kicad_pcb", "hdmi14"),  # 0.7 % at the cited edge
    ],
)
def test_a_victim_far_under_the_budget_solves_no_fine_mesh(
    name: str, signal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Microstrip pairs well under the budget: judged, and passed, on the coarse meshes
    alone: no solve at the fine resolution (the plain way solved every node its bound read
    at both meshes)."""
    seen = _fine_resolution_calls(monkeypatch)
    assert _findings(name, signal) == []
    assert seen and set(seen) == {xa.XTALK_RESOLUTION / 2}
