"""The total per-unit-length loss against a published rough-copper case, 5-30 GHz.

The case: L. Simonovich, "A Practical Method to Model Effective Permittivity and Phase Delay
Due to Conductor Surface Roughness", DesignCon 2017, Fig. 16 (right-hand graph): insertion loss
of a 6-inch, 50 Ω single-ended stripline in Isola FR408HR with reverse-treated (RTF) foil,
measured, and his Cannonball-Huray simulation.  The cross-section and the roughness per face are
the ones the open field solver OpenParEM2D (B. Young) transcribed from the paper for its
regression case ``regression/Simonovich_stripline_study`` ("OpenParEM2D Theory, Methodology and
Accuracy", §5.6 "Lossy Stripline", Figs. 27-28): trace 0.279 mm (11 mil) wide at the base, 60°
etch, 31.75 µm thick; 0.305 mm core below (εr 3.725, tan δ 0.0094), 0.301 mm prepreg above
(εr 3.713, tan δ 0.0095, the trace embedded in it, so 0.269 mm from its top face to the plane);
Rz 3.048 µm on the core-side faces (trace bottom, lower plane), 4.445 µm on the prepreg-side
faces (trace top and sides, upper plane); σ 5.813e7 S/m.  The measured and simulated curves
as that case scaled them off the paper's plot (``Simonovich_stripline_accuracy.ods``, 6-inch
loss in dB), and the solver's own attenuation (dB/m) on the same sheet, are the references.

The board here is that cross-section as a KiCad board would describe it (a 4-layer stack-up,
the pair's halves 3 mm apart so each is the single-ended line, roughness and conductivity
declared in accel-drc.yaml), run through the same code as ``inspect --detail loss``
(:func:`accel_drc.analysis.loss.loss_table` / ``loss_rows``).  What it found (docs/loss.md):
the model is within 5 % of the measurement (+2.5 % at 5 GHz .. -5.0 % at 30 GHz), within
2.2 % of the field solver and 3.1 % of Simonovich's own simulation from 5 to 30 GHz; the cannonball sphere radius the model used
before (Rz/6) over-stated this line's loss by 26-49 %, and Hammerstad-Jensen under-states it by
10-16 % from 20 to 30 GHz.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _h2_boards import cu, diel, make_board, rect, stackup
from accel_drc.analysis import Analysis, loss_models
from accel_drc.analysis.loss import loss_rows, loss_table
from accel_drc.analysis.loss_models import DEFAULT_ROUGHNESS_MODEL
from accel_drc.model import NetClass, NetClassRules
from accel_drc.packs import load_library

LIB = load_library()

#: 6 inches in m: the paper's line length, the unit of its dB figures
SIX_INCH_M = 6 * 0.0254
#: [simonovich2017] Fig. 16 right, measured: (GHz, dB over 6 inches), as scaled off the plot in
#: [openparem2d] Simonovich_stripline_accuracy.ods (rows nearest 5, 8, 10, ... 30 GHz)
MEASURED = (
    (4.99312872194228, 2.31132075471698),
    (7.97068254695373, 3.58127721335269),
    (9.96335318369217, 4.44484760522496),
    (14.9793861658268, 6.55297532656023),
    (15.9642693540999, 6.93396226415094),
    (19.9954191479615, 8.61030478955007),
    (25.0114521300962, 10.8200290275762),
    (25.9963353183692, 11.3026124818578),
    (27.0041227668346, 11.7089985486212),
    (29.9816765918461, 13.0043541364296),
)
#: [simonovich2017] Fig. 16 right, his Cannonball-Huray simulation, same sheet
SIMULATED = (
    (5.01603298213468, 2.41291727140784),
    (9.98625744388456, 4.57184325108853),
    (14.9564819056344, 6.65457184325109),
    (19.9725148877691, 8.68650217706822),
    (24.942739349519, 10.7438316400581),
    (30.0045808520385, 12.7249637155298),
)
#: [openparem2d] 2nd-order FEM with adaptive refinement, cannonball roughness per face: α (dB/m)
SOLVER = {
    5: 15.7869276628851, 8: 24.1669185669602, 10: 29.6826351187917, 15: 43.2896372108402,
    16: 45.9839625646329, 20: 56.6814839300511, 25: 69.889692954955, 26: 72.5112339255597,
    27: 75.1264148818861, 30: 82.9350825143861, 50: 133.735178389929,
}  # fmt: skip
#: the solver's characteristic impedance of the line (Ω, real part, 20 GHz regression case)
SOLVER_Z0 = 49.1217410528491

W = 0.279
GAP = 3.0  # ≈ 5 plane spacings: the odd mode of the "pair" is each half's own mode
LENGTH = 152.4
#: the three signal types whose Nyquist frequencies fall in 5-30 GHz: 8, 16 and 26.5625 GHz
SIGNALS = ("pcie4", "pcie5", "nvlink4")


def _interp(points: tuple[tuple[float, float], ...], f_ghz: float) -> float:
    xs, ys = zip(*points)
    return float(np.interp(f_ghz, xs, ys))


def _measured_db_per_m(f_ghz: float) -> float:
    return _interp(MEASURED, f_ghz) / SIX_INCH_M


def _solver_db_per_m(f_ghz: float) -> float:
    return float(np.interp(f_ghz, sorted(SOLVER), [SOLVER[k] for k in sorted(SOLVER)]))


def _case() -> Analysis:
    """Simonovich's stripline as a board: F.Cu plane / prepreg / In1.Cu signal / core / In2.Cu
    plane; one pair per signal type, routed 6 inches straight."""
    stack = stackup(
        cu(0.035),
        diel("prepreg", "FR408HR prepreg", 3.713, 0.0095, t=0.301 - 0.03175, kind="prepreg"),
        cu(0.03175),
        diel("core", "FR408HR core", 3.725, 0.0094, t=0.305),
        cu(0.035),
        diel("core2", "FR408HR core", 3.725, 0.0094, t=0.3),
        cu(0.035),
    )
    nets: list[str] = []
    tracks = []
    for k, sig in enumerate(SIGNALS):
        y = 10.0 + 20.0 * k
        for sfx, dy in (("_P", 0.0), ("_N", W + GAP)):
            nets.append(sig.upper() + sfx)
            tracks.append((sig.upper() + sfx, 1, (10.0, y + dy), (10.0 + LENGTH, y + dy)))
    nets.append("GND")
    plane = rect(0, 0, 200, 80)
    board = make_board(
        4,
        nets,
        tracks,
        [("GND", 0, plane), ("GND", 2, plane)],
        stack=stack,
        size=(200.0, 80.0),
        kinds={0: "power", 2: "power"},
        net_classes=NetClassRules(
            classes=(NetClass("Default", diff_pair_width_mm=W, diff_pair_gap_mm=GAP),)
        ),
    )
    board = dataclasses.replace(
        board, tracks=dataclasses.replace(board.tracks, width=np.full(len(tracks), W))
    )
    config = {
        "signals": {s: [f"{s.upper()}_[PN]"] for s in SIGNALS},
        "stackup": {
            "conductivity_s_per_m": 5.813e7,
            "roughness": {
                # the signal layer: prepreg side up, core side down; the planes' faces
                "In1.Cu": {"rz_top_um": 4.445, "rz_bottom_um": 3.048},
                "F.Cu": {"rz_top_um": 4.445, "rz_bottom_um": 4.445},
                "In2.Cu": {"rz_top_um": 3.048, "rz_bottom_um": 3.048},
            },
        },
    }
    a = Analysis(board, config, LIB)
    return a


@pytest.fixture(scope="module")
def case() -> Analysis:
    return _case()


def test_the_case_is_built_as_published(case: Analysis) -> None:
    """The board's cross-section is the paper's: stripline, declared inputs, the faces' Rz, and
    the solver's 49.1 Ω within the closed forms' accuracy (rectangular strip of the base width
    vs the solver's 60° trapezoid: 1.3 % lower)."""
    chans = {c.signal: c for c in loss_table(case)}
    assert set(chans) == set(SIGNALS)
    for ch in chans.values():
        (lay,) = ch.layers
        sec = lay.section
        assert lay.structure == "stripline" and lay.length_mm == pytest.approx(LENGTH)
        assert (sec.w_mm, sec.h_below_mm, sec.h_above_mm) == pytest.approx((W, 0.305, 0.26925))
        assert (sec.rz_strip_plane, sec.rz_strip_away, sec.rz_plane, sec.rz_plane2) == (
            3.048, 4.445, 3.048, 4.445,
        )  # fmt: skip
        assert sec.roughness_model == DEFAULT_ROUGHNESS_MODEL == "huray"
        assert {lay.basis[k] for k in ("roughness", "conductivity", "loss_tangent")} == {"declared"}
        assert sec.static()[0] == pytest.approx(SOLVER_Z0, rel=0.02)


def test_inspect_rows_against_measurement_and_field_solver(case: Analysis) -> None:
    """``inspect --detail loss`` rows at three Nyquist frequencies in 5-30 GHz (8, 16,
    26.6 GHz): within 10 % of the measured line (found: +0.9 %, -1.0 %, -4.3 %) and within 3 %
    of the field solver (found: -1.5 %, -1.8 %, -2.1 %)."""
    rows = [r for r in loss_rows(case) if r["layer"] == "In1.Cu"]
    assert {r["signal"] for r in rows} == set(SIGNALS)
    for r in rows:
        f = r["nyquist_hz"] / 1e9
        assert 5.0 <= f <= 30.0
        assert "validated" in r["method"] and "Cannonball-Huray" in r["method"]
        assert r["db_per_m"] == pytest.approx(_measured_db_per_m(f), rel=0.10), f
        assert r["db_per_m"] == pytest.approx(_solver_db_per_m(f), rel=0.03), f


@pytest.mark.parametrize("f_ghz", [5, 10, 15, 20, 25, 30])
def test_loss_5_to_30_ghz_against_measurement_solver_and_paper(case: Analysis, f_ghz: int) -> None:
    """The channel's line (the section ``inspect`` built) swept 5-30 GHz: within 10 % of the
    measurement (found +2.5 % at 5 GHz, -0.2, -1.2, -1.6, -3.5, -5.0 % at 10 .. 30 GHz; the
    plot's digitising is good to about ±1 %), within 3 % of the field solver (found -1.4 ..
    -2.2 %) and within 4 % of Simonovich's own Cannonball-Huray simulation (found -1.4 ..
    -3.1 %).  ``inspect`` gives the strips' sides the mean of the top and bottom faces' Rz
    (3.75 µm here, 4.445 in the paper): with the paper's sides the line is 1 % lossier."""
    ch = next(c for c in loss_table(case) if c.signal == "pcie5")
    sec = ch.layers[0].section
    meas_f, _ = min(MEASURED, key=lambda p: abs(p[0] - f_ghz))
    d, c = sec.alpha_db_per_m([meas_f * 1e9])
    ours = float(d[0] + c[0])
    assert ours == pytest.approx(_measured_db_per_m(meas_f), rel=0.10)
    d, c = sec.alpha_db_per_m([f_ghz * 1e9])
    assert float(d[0] + c[0]) == pytest.approx(SOLVER[f_ghz], rel=0.03)
    sim_f, sim_db = min(SIMULATED, key=lambda p: abs(p[0] - f_ghz))
    d, c = sec.alpha_db_per_m([sim_f * 1e9])
    assert float(d[0] + c[0]) * SIX_INCH_M == pytest.approx(sim_db, rel=0.04)
    # the IL(f) curve the report draws is the same line over its length (no vias, no extras)
    k = int(np.argmin(np.abs(ch.freqs - f_ghz * 1e9)))
    d, c = sec.alpha_db_per_m([ch.freqs[k]])
    assert ch.curve_db[k] == pytest.approx(float(d[0] + c[0]) * LENGTH * 1e-3, rel=1e-9)


def test_beyond_the_band_to_50_ghz_against_the_solver(case: Analysis) -> None:
    """Past the issue's 5-30 GHz (NVLink 5's Nyquist is 53 GHz): at 50 GHz the line is within
    3 % of the field solver (found -2.8 %); the measurement there carries the fixture's
    mismatch ripple (found -7 % at 40 and 45 GHz, -10 % at 50 GHz)."""
    sec = next(c for c in loss_table(case) if c.signal == "pcie5").layers[0].section
    d, c = sec.alpha_db_per_m([50e9])
    assert float(d[0] + c[0]) == pytest.approx(SOLVER[50], rel=0.03)


def test_the_case_rejects_the_old_radius_and_hammerstad(
    case: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the case decides (and proof that the comparison can fail): with the sphere radius
    Rz/6 this module used before, the same line loses 26-49 % more than measured (5-30 GHz);
    with Hammerstad-Jensen (saturating at K = 2) it loses 10-16 % less above 20 GHz.  The
    radius rule in use is r = Rz/(4√3(1+√2)) = 0.0598 Rz."""
    r_per_rz = loss_models.CANNONBALL_R_PER_RZ
    assert r_per_rz == pytest.approx(1 / (4 * math.sqrt(3) * (1 + math.sqrt(2))))
    assert r_per_rz == pytest.approx(0.0598, abs=5e-5)
    sec = next(c for c in loss_table(case) if c.signal == "pcie5").layers[0].section
    f = np.array([p[0] for p in MEASURED]) * 1e9
    meas = np.array([_measured_db_per_m(x / 1e9) for x in f])
    hj = dataclasses.replace(sec, roughness_model="hammerstad", _cache={})
    d, c = hj.alpha_db_per_m(f)
    high = f > 19e9
    assert np.all((d + c)[high] / meas[high] < 0.92)
    monkeypatch.setattr(loss_models, "CANNONBALL_R_PER_RZ", 1.0 / 6.0)
    old = dataclasses.replace(sec, _cache={})
    d, c = old.alpha_db_per_m(f)
    assert np.all((d + c) / meas > 1.2)
