"""Impedance as accurate on the 200th pair as on the first (issue 17), breakouts, the basis of
every input and the remedy (issue 19 §1, §2, §6).

The accuracy tests feed generated geometries through ``zdiff_of`` with one shared cache: the
same path ``pair_table`` takes for every pair-layer of a board, in board order."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np
import pytest
from accel_drc.analysis import impedance as imp
from accel_drc.analysis.signals import SignalAssignment
from accel_drc.checks import CheckContext
from accel_drc.checks.impedance import check_impedance, remedy
from accel_drc.model import Footprint, Pad, Stackup, StackupLayer, copper_layer_name
from accel_drc.results import Status
from test_impedance_check import StandInAnalysis, StandInSignal, make_board, rule


def masked_microstrip(h: float, er: float, t: float, mask: tuple[float, float]) -> imp.LayerStack:
    return imp.LayerStack(0, "F.Cu", "microstrip", t, h, er, mask=mask)


def reference(stack: imp.LayerStack, w: float, s: float) -> float:
    """The test's own field reference: the solver at a 4× finer mesh (resolutions 2 and 4),
    Richardson-extrapolated with the corner order 4/3 — within 0.03 % of a three-level Aitken
    extrapolation over resolutions 2-4-8 on the cases of docs/impedance.md."""
    args, mask = imp.field_cross_section(stack, w, s)
    return (
        2
        * imp.fd_coupled(
            *args, resolution=4.0, mask=mask, extrapolate=True, odd_only=True, order=4 / 3
        )[1]
    )


def generated_pairs(n: int, seed: int) -> list[tuple[imp.LayerStack, float, float]]:
    """``n`` distinct masked-microstrip pairs: widths, gaps, heights, εr, copper and mask as
    fabs build them (w/h 0.5-2.5, s/h 0.4-4, t 12-35 µm, mask 10-25 µm of εr 3.0-4.0)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        h = round(rng.uniform(0.07, 0.2), 4)
        stack = masked_microstrip(
            h,
            round(rng.uniform(3.2, 4.5), 2),
            rng.choice([0.012, 0.018, 0.035]),
            (rng.choice([0.01, 0.015, 0.025]), round(rng.uniform(3.0, 4.0), 2)),
        )
        out.append((stack, round(h * rng.uniform(0.5, 2.5), 4), round(h * rng.uniform(0.4, 4), 4)))
    return out


@pytest.mark.slow
def test_hundred_and_twenty_masked_pairs_after_sixty_others_all_field_solved() -> None:
    # 60 other microstrip geometries come first (what used to spend the budget), then 120
    # distinct masked pairs: every one is field-solved, and the last 24 (the ones the old budget
    # turned into a mask-blind closed form, up to +17.6 %) are within the stated 0.4 % of the
    # fine-mesh reference
    cache: dict[Any, Any] = {}
    for stack, w, s in generated_pairs(60, seed=1):
        imp.zdiff_of(dataclasses.replace(stack, mask=None), w, s, cache)
    pairs = generated_pairs(120, seed=2)
    got = [imp.zdiff_of(stack, w, s, cache) for stack, w, s in pairs]
    assert len(cache) == 180  # every distinct geometry solved, none skipped
    assert all(m == imp.METHOD_MS_FIELD for _, m, _, _ in got)
    assert not [n for _, _, _, notes in got for n in notes if "closed form used" in n]
    for (stack, w, s), (z, *_rest) in list(zip(pairs, got))[-24:]:
        assert z == pytest.approx(reference(stack, w, s), rel=imp.FIELD_ACCURACY_PCT / 100)
    # and the result does not depend on what came before: a fresh cache gives the same numbers
    for (stack, w, s), (z, *_rest) in list(zip(pairs, got))[-5:]:
        assert imp.zdiff_of(stack, w, s, {})[0] == z


def test_board_path_every_pair_field_solved_whatever_the_count() -> None:
    # through pair_table: a board whose 70 pairs are all distinct microstrip geometries
    board = make_board()
    rows = imp.pair_table(StandInAnalysis(board, {}))
    assert all(r.method in (imp.METHOD_MS_FIELD, imp.METHOD_SL_FIELD) for r in rows)
    assert not hasattr(imp, "MAX_FIELD_SOLVES")


def test_offset_two_er_stripline_within_stated_accuracy() -> None:
    # the weakest case (closed form +1.2 … +1.5 %): vme-wren's inner layers, 0.119 mm of
    # εr 4.1 below and 0.203 mm of εr 4.4 above, 18 µm copper, w 0.1 / s 0.16
    st = imp.LayerStack(2, "In2.Cu", "stripline", 0.018, 0.119, 4.1, h_above_mm=0.203, er_above=4.4)
    z, method, cf, _ = imp.zdiff_of(st, 0.1, 0.16, {})
    ref = reference(st, 0.1, 0.16)
    assert method == imp.METHOD_SL_FIELD
    assert z == pytest.approx(ref, rel=imp.FIELD_ACCURACY_PCT / 100)
    assert cf is not None and 0.005 < cf / ref - 1 < 0.02  # the closed form's known bias


def test_remedy_fed_back_meets_the_target() -> None:
    st = masked_microstrip(0.119, 4.1, 0.018, (0.01, 3.3))
    cache: dict[Any, Any] = {}
    r = remedy(st, 0.115, 0.125, 85.0, cache)
    # fed back through the same solver (fresh cache), each suggestion gives 85 Ω to within
    # the 1 µm the suggestion is rounded to (≈ 0.3 Ω here)
    assert imp.zdiff_of(st, r["width_mm_at_measured_gap"], 0.125, {})[0] == pytest.approx(
        85.0, abs=0.4
    )
    assert imp.zdiff_of(st, 0.115, r["gap_mm_at_measured_width"], {})[0] == pytest.approx(
        85.0, abs=0.4
    )
    assert r["width_mm_at_measured_gap"] > 0.115  # 110 Ω now: wider lowers Zdiff
    assert r["gap_mm_at_measured_width"] < 0.125  # and so does a tighter gap
    s = imp.LayerStack(2, "In2.Cu", "stripline", 0.018, 0.119, 4.1, h_above_mm=0.203, er_above=4.4)
    r = remedy(s, 0.1, 0.16, 85.0, {})
    assert imp.zdiff_of(s, r["width_mm_at_measured_gap"], 0.16, {})[0] == pytest.approx(85, abs=0.4)


def test_every_violation_carries_a_remedy_that_meets_the_target() -> None:
    out = check_impedance(
        CheckContext(make_board(), StandInAnalysis(make_board(), {"pcie5": (2, 3)}), "inference"),  # type: ignore[arg-type]
        rule({"zdiff_ohm": 85, "tol_pct": 5}),
    )
    (f,) = out.findings
    rem = f.evidence["remedy"]
    assert rem["zdiff_ohm_at_that_width"] == pytest.approx(85, abs=0.4)
    assert rem["zdiff_ohm_at_that_gap"] == pytest.approx(85, abs=0.4)
    assert "to meet it" in f.message


def _two_pad_escape_board(coupled: float) -> Any:
    """make_board with pair X's parallel run cut to ``coupled`` mm (the rest uncoupled)."""
    b = make_board()
    tr = b.tracks
    start, end = tr.start.copy(), tr.end.copy()
    end[0, 0] = coupled  # P of X: 0 → coupled
    end[1, 0] = coupled  # N of X
    return dataclasses.replace(b, tracks=dataclasses.replace(tr, start=start, end=end))


def test_short_coupled_run_is_a_breakout_never_a_failure() -> None:
    # Gen4-like Nyquist 8 GHz on εr 3.6: rise length 0.5/8e9·c/√3.6 = 9.87 mm, breakout 1.65 mm
    sig = {"pcie5": StandInSignal(85.0, 5.0, nyquist_hz=8e9)}
    assert imp.breakout_length_mm(8e9, 3.6) == pytest.approx(9.8746 / 6, rel=1e-3)
    short = _two_pad_escape_board(1.2)
    a = StandInAnalysis(short, {"pcie5": (2, 3)}, signal_types=sig)
    out = check_impedance(
        CheckContext(short, a, "inference"), rule({"zdiff_ohm": 85, "tol_pct": 5})
    )  # type: ignore[arg-type]
    assert out.findings == [] and out.checked == 1
    assigned = {2: SignalAssignment("pcie5", "config")}
    rows = {
        r["name"]: r
        for r in imp.pair_rows(StandInAnalysis(short, {}, signal_types=sig, net_signal=assigned))
    }
    assert rows["/X"]["kind"] == "breakout" and rows["/X"]["coupled_mm"] == pytest.approx(1.2)
    longer = _two_pad_escape_board(2.0)
    a = StandInAnalysis(longer, {"pcie5": (2, 3)}, signal_types=sig)
    out = check_impedance(
        CheckContext(longer, a, "inference"), rule({"zdiff_ohm": 85, "tol_pct": 5})
    )  # type: ignore[arg-type]
    assert [f.status for f in out.findings] == [Status.VIOLATION]


def test_run_inside_a_footprint_courtyard_is_a_breakout() -> None:
    b = make_board()
    # a 40-pad connector whose pad field covers pair X's whole run (x -1.5…21.5, y -1.5…1.5)
    pads = tuple(
        Pad(str(k), 0, "smd", "rect", -1.0 + 22.0 * (k % 20) / 19, -1.0 + 2.0 * (k // 20), 0.3, 0.6)
        for k in range(40)
    )
    fp = Footprint("J1", "CONN", "Conn:X", "F.Cu", 10.0, 0.0, pads=pads)
    b = dataclasses.replace(b, footprints=(fp,))
    rows = {r.pair: r for r in imp.pair_table(StandInAnalysis(b, {}))}
    assert rows["/X"].footprint == "J1" and rows["/Y"].footprint is None
    assert imp.row_kind(rows["/X"], 8e9)[0] == imp.KIND_BREAKOUT


def kicad_default_stackup(n: int = 4, board_mm: float = 1.6) -> Stackup:
    """KiCad's BuildDefaultStackupList: equal FR4 dielectrics of (board − copper − mask)/(n − 1)."""
    cu_t, mask_t = 0.035, 0.01
    d = (board_mm - n * cu_t - 2 * mask_t) / (n - 1)
    layers = [StackupLayer("F.Mask", "soldermask", thickness_mm=mask_t)]
    for i in range(n):
        layers.append(
            StackupLayer(copper_layer_name(i, n), "copper", thickness_mm=cu_t, copper_index=i)
        )
        if i < n - 1:
            layers.append(
                StackupLayer(
                    f"dielectric {i + 1}",
                    "core" if i % 2 == 0 else "prepreg",
                    thickness_mm=d,
                    material="FR4",
                    epsilon_r=4.5,
                    loss_tangent=0.02,
                )
            )
    layers.append(StackupLayer("B.Mask", "soldermask", thickness_mm=mask_t))
    return Stackup(tuple(layers))


def test_kicad_default_stackup_makes_h_er_t_default_and_the_violation_conditional() -> None:
    from accel_drc.analysis import Analysis
    from accel_drc.basis import settle
    from accel_drc.model import CopperLayer

    b = make_board()
    kinds = ["signal", "power", "power", "signal"]
    b4 = dataclasses.replace(
        b,
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, 4), copper_layer_name(i, 4), kinds[i])
            for i in range(4)
        ),
        stackup=kicad_default_stackup(),
        board_thickness_mm=1.6,
        tracks=dataclasses.replace(
            b.tracks, layer=np.where(b.tracks.layer == 2, 3, b.tracks.layer).astype(np.int16)
        ),
    )
    a = Analysis(b4)
    st = imp.layer_stack(b4, 0, {1: [], 2: []})
    basis = dict(imp.stack_basis(a, st))
    assert (basis["h"], basis["epsilon_r"], basis["t"]) == ("default", "default", "default")
    # the same materials at thicknesses a designer typed: h and t declared, εr still KiCad's
    edited = dataclasses.replace(
        b4,
        stackup=Stackup(
            tuple(
                dataclasses.replace(sl, thickness_mm=0.2) if sl.name == "dielectric 1" else sl
                for sl in b4.stackup.layers  # type: ignore[union-attr]
            )
        ),
    )
    basis = dict(imp.stack_basis(Analysis(edited), imp.layer_stack(edited, 0, {1: [], 2: []})))
    assert (basis["h"], basis["epsilon_r"]) == ("declared", "default")
    # a violation on the default stack-up settles as cannot_verify, "declare your fab's stack-up"
    sa = StandInAnalysis(b4, {"pcie5": (4, 5)})
    sa.materials = a.materials  # type: ignore[attr-defined]
    out = check_impedance(CheckContext(b4, sa, "inference"), rule({"zdiff_ohm": 50, "tol_pct": 5}))  # type: ignore[arg-type]
    (f,) = out.findings
    assert f.evidence["basis"]["epsilon_r"] == "default"
    s = settle(f)
    assert s.status == Status.CANNOT_VERIFY and "stack-up" in s.evidence["declare"]


def _stretch_oracle(start, end, length, free, is_p, group, n_groups):  # noqa: ANN001, ANN202
    """Plain union-find over the mostly uncoupled segments: the reference for the numpy one."""
    sel = [k for k in range(len(length)) if free[k] > 0.5 * length[k] and length[k] > 1e-9]
    parent = {k: k for k in sel}

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    seen: dict[tuple, int] = {}
    for k in sel:
        for pt in (start[k], end[k]):
            key = (int(group[k]), bool(is_p[k]), round(pt[0] * 1000), round(pt[1] * 1000))
            if key in seen:
                parent[find(k)] = find(seen[key])
            else:
                seen[key] = k
    out = np.zeros(n_groups)
    sums: dict[int, float] = {}
    for k in sel:
        sums[find(k)] = sums.get(find(k), 0.0) + free[k]
    for r, v in sums.items():
        out[group[r]] = max(out[group[r]], v)
    return out


def test_longest_uncoupled_stretch_equals_plain_union_find() -> None:
    rng = np.random.default_rng(19)
    for _ in range(200):
        n, g = int(rng.integers(1, 300)), int(rng.integers(1, 5))
        s = np.round(rng.uniform(0, 3, (n, 2)), 1)
        e = s + np.round(rng.normal(0, 0.5, (n, 2)), 1)
        length = np.hypot(*(e - s).T)
        free = length * rng.choice([0.0, 0.3, 1.0], n)
        is_p = rng.random(n) < 0.5
        group = np.sort(rng.integers(0, g, n))
        got = imp._longest_free_stretch(s, e, length, free, is_p, group, g)
        want = _stretch_oracle(s, e, length, free, is_p, group, g)
        assert got == pytest.approx(want, abs=1e-9)
