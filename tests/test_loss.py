"""Channel insertion loss: the physics against exact and published results, and the check on a
real (synthetic) board.  See docs/loss.md for the models and their sources."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from accel_drc.analysis.impedance import C0
from accel_drc.analysis.loss_models import (
    CANNONBALL_R_PER_RZ,
    CANNONBALL_SURFACE_RATIO,
    NP_TO_DB,
    Dielectric,
    PairSection,
    djordjevic_sarkar,
    hammerstad_jensen,
    huray,
    huray_cannonball,
    shunt_stub_db,
    skin_depth_m,
    surface_resistance,
)
from conftest import ROOT

SYNTH = ROOT / "fixtures" / "synth" / "boards"
BOARD = SYNTH / "inference-pcie5.kicad_pcb"
CONFIG = SYNTH / "inference-pcie5.accel-drc.yaml"


def _stripline(w: float, s: float, b: float, t: float, er: float, df: float, **kw) -> PairSection:
    h = (b - t) / 2
    d = Dielectric(er, df, wideband=False)
    return PairSection("stripline", w, s, t, h, d, h, d, **kw)


# -- dielectric --------------------------------------------------------------------------------


@pytest.mark.parametrize("er,df,f", [(3.5, 0.004, 16e9), (4.3, 0.02, 1e9), (3.0, 0.001, 30e9)])
def test_dielectric_homogeneous_stripline_is_exact_tem(er: float, df: float, f: float) -> None:
    """α_d = π f √εr tan δ / c for a homogeneous stripline (any width, gap, offset)."""
    sec = PairSection(
        "stripline", 0.1, 0.15, 0.018, 0.1, Dielectric(er, df, wideband=False), 0.2,
        Dielectric(er, df, wideband=False),
    )  # fmt: skip
    d, _ = sec.alpha_db_per_m([f])
    exact = math.pi * f * math.sqrt(er) * df / C0 * NP_TO_DB
    assert d[0] == pytest.approx(exact, rel=0.005)


def test_dielectric_wideband_at_its_spec_frequency_is_exact() -> None:
    sec = PairSection(
        "stripline", 0.1, 0.15, 0.018, 0.12, Dielectric(3.4, 0.004, 12e9), 0.12,
        Dielectric(3.4, 0.004, 12e9),
    )  # fmt: skip
    d, _ = sec.alpha_db_per_m([12e9])
    assert d[0] == pytest.approx(math.pi * 12e9 * math.sqrt(3.4) * 0.004 / C0 * NP_TO_DB, rel=1e-6)


def test_djordjevic_sarkar_fixed_point_and_causal_shape() -> None:
    f = np.array([1e8, 1e9, 10e9, 50e9])
    dk, df = djordjevic_sarkar(3.7, 0.009, 10e9, f)
    assert dk[2] == pytest.approx(3.7, rel=1e-12) and df[2] == pytest.approx(0.009, rel=1e-12)
    assert np.all(np.diff(dk) < 0)  # Dk falls with frequency (Kramers-Kronig)
    assert np.all(np.abs(df / 0.009 - 1) < 0.05)  # Df nearly flat between the corners


def test_microstrip_dielectric_matches_filling_factor_formula() -> None:
    """Microstrip: α_d = (π f / c)·εr (ε_eff − 1)/(εr − 1)·tan δ/√ε_eff (the classic filling
    factor q = (ε_eff − 1)/(εr − 1), Pozar eq. 3.198); ours uses q = ∂ε_eff/∂εr, equal for a line
    whose ε_eff is linear in εr and within 3 % for the coupled closed forms."""
    sec = PairSection("microstrip", 0.12, 0.15, 0.035, 0.1, Dielectric(3.5, 0.004, wideband=False))
    d, _ = sec.alpha_db_per_m([10e9])
    eeff = sec.static()[2]
    classic = math.pi * 10e9 / C0 * 3.5 * (eeff - 1) / 2.5 * 0.004 / math.sqrt(eeff) * NP_TO_DB
    assert 1.0 < eeff < 3.5
    assert d[0] == pytest.approx(classic, rel=0.03)


# -- conductor ---------------------------------------------------------------------------------


def test_smooth_wide_strip_is_parallel_plate_skin_effect() -> None:
    """Wide strip (w ≫ b), smooth copper: R = R_s/w (both strip faces, both planes), so
    α_c = R_s / (2 w Z) — the classic skin-effect result, fringing aside (≤ 3 % at w/b = 40)."""
    f = 10e9
    sec = _stripline(8.0, 20.0, 0.2, 0.01, 3.5, 0.0)
    _, c = sec.alpha_db_per_m([f])
    z = sec.static()[0]
    classic = surface_resistance(f) / (8.0e-3) / (2 * z) * NP_TO_DB
    assert c[0] == pytest.approx(float(classic), rel=0.03)


def test_pozar_example_stripline() -> None:
    """Published case: D. M. Pozar, *Microwave Engineering*, 4th ed. (Wiley 2012), Example 3.5:
    50 Ω copper stripline, b = 3.2 mm, εr = 2.2, tan δ = 0.001, t = 0.01 mm, 10 GHz: W = 2.66 mm,
    α_d = 0.155 Np/m, α_c = 0.122 Np/m (smooth copper, σ = 5.813e7)."""
    sec = _stripline(2.66, 500.0, 3.2, 0.01, 2.2, 0.001, sigma=5.813e7)
    d, c = sec.alpha_db_per_m([10e9])
    assert d[0] / NP_TO_DB == pytest.approx(0.155, rel=0.01)
    assert c[0] / NP_TO_DB == pytest.approx(0.122, rel=0.05)
    assert (d[0] + c[0]) / NP_TO_DB == pytest.approx(0.277, rel=0.05)


def test_conductor_loss_scales_as_sqrt_f_when_smooth() -> None:
    sec = _stripline(0.1, 0.15, 0.26, 0.018, 3.4, 0.0)
    _, c = sec.alpha_db_per_m([4e9, 16e9])
    assert c[1] / c[0] == pytest.approx(2.0, rel=0.01)


@pytest.mark.parametrize("model", ["huray", "hammerstad"])
def test_loss_monotonic_in_rz_and_f(model: str) -> None:
    f = np.linspace(1e9, 40e9, 40)
    prev = None
    for rz in (0.0, 0.5, 1.5, 3.0, 6.0, 10.0):
        sec = _stripline(
            0.1, 0.15, 0.26, 0.018, 3.4, 0.004, rz_strip_plane=rz, rz_strip_away=rz,
            rz_sides=rz, rz_plane=rz, rz_plane2=rz, roughness_model=model,
        )  # fmt: skip
        d, c = sec.alpha_db_per_m(f)
        tot = d + c
        assert np.all(np.diff(tot) > 0)
        if prev is not None:
            assert np.all(tot > prev)
        prev = tot


def test_roughness_factors_limits() -> None:
    f = np.array([1e6, 1e9, 1e10, 1e11])
    assert np.all(huray_cannonball(f, 0.0) == 1.0)
    assert np.all(hammerstad_jensen(f, 0.0) == 1.0)
    assert huray_cannonball(f, 3.0)[0] == pytest.approx(1.0, abs=0.02)  # δ ≫ r at 1 MHz
    assert np.all(hammerstad_jensen(f, 1.0) < 2.0)  # saturates at 2


def test_cannonball_huray_matches_the_published_solver_form() -> None:
    """The Cannonball-Huray factor against the closed form the Tidy3D field solver documents
    and asserts in its own tests ([tidy3d-huray], ``HuraySurfaceRoughness.from_cannonball_huray``:
    K = 1 + (7π/3)/(1 + δ/r + δ²/(2r²)), i.e. Huray's 3/2 times the cannonball surface ratio
    14·4πr²/(6r)² = 14π/9).  The radius-from-Rz step, r = Rz/(4√3(1+√2)), is what the published
    rough-copper case decides (tests/test_loss_published.py)."""
    assert math.isclose(CANNONBALL_SURFACE_RATIO, 14 * 4 * math.pi / 36)
    r = 0.5e-6
    f = np.array([1e8, 1e9, 5e9, 16e9, 30e9, 1e12])
    d = skin_depth_m(f)
    ref = 1 + (7 * math.pi / 3) / (1 + d / r + d**2 / (2 * r * r))
    assert np.allclose(huray(f, r, CANNONBALL_SURFACE_RATIO), ref, rtol=1e-12)
    assert np.allclose(huray_cannonball(f, r / CANNONBALL_R_PER_RZ * 1e6), ref, rtol=1e-12)
    # where δ = r the denominator is 2.5 exactly: K = 1 + 7π/7.5 = 3.932
    f_eq = 1 / (math.pi * 4e-7 * math.pi * 5.8e7 * r * r)
    assert huray(f_eq, r, CANNONBALL_SURFACE_RATIO) == pytest.approx(1 + 7 * math.pi / 7.5)
    # Huray's high-frequency limit: A_matte/A_flat + (3/2)·f
    assert huray(1e20, r, CANNONBALL_SURFACE_RATIO) == pytest.approx(1 + 7 * math.pi / 3, rel=1e-4)


def test_stub_notch_at_quarter_wave() -> None:
    """A 1.5 mm open stub in εr 3.6: notch at c/(4 L √εr) = 26.3 GHz."""
    fres = C0 / (4 * 1.5e-3 * math.sqrt(3.6))
    f = np.array([fres * 0.3, fres, fres * 1.5])
    il = shunt_stub_db(f, 1.5, 3.6)
    assert il[1] > 10.0 and il[0] < 1.0 and il[1] > il[2]


# -- the board ---------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_inspect_detail_loss_rows() -> None:
    r = _cli("inspect", str(BOARD), "--json", "--detail", "loss", "--config", str(CONFIG))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["details"]["loss"]
    fields = {
        "name", "nets", "signal", "layer", "structure", "length_mm", "nyquist_hz", "db_per_m",
        "dielectric_db_per_m", "conductor_db_per_m", "il_db", "method",
    }  # fmt: skip
    layer_rows = [x for x in rows if x["layer"] != "total"]
    totals = [x for x in rows if x["layer"] == "total"]
    assert layer_rows and totals
    assert all(set(x) == fields for x in layer_rows)
    assert all(fields <= set(x) for x in totals)
    for x in layer_rows:
        assert x["il_db"] == pytest.approx(x["db_per_m"] * x["length_mm"] * 1e-3, abs=2e-3)
        assert x["db_per_m"] == pytest.approx(
            x["dielectric_db_per_m"] + x["conductor_db_per_m"], abs=2e-3
        )
        # plausible: a PCIe Gen5 stripline on a low-loss laminate with VLP foil loses about
        # 0.8-1.6 dB/inch at 16 GHz (docs/loss.md beside published laminate figures)
        assert 0.5 < x["db_per_m"] * 0.0254 < 2.5


def _check(tmp_path: Path, extra_cfg: str) -> dict:
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text(CONFIG.read_text() + extra_cfg)
    out = tmp_path / "r.json"
    _cli("check", str(BOARD), "--config", str(cfg), "--json", str(out), "--quiet")
    return json.loads(out.read_text())


def test_check_fails_on_a_declared_small_budget(tmp_path: Path) -> None:
    d = _check(tmp_path, "loss:\n  budgets_db: {pcie5: 1.0}\n  extra_db: {pcie5: 0.5}\n")
    fs = [f for f in d["findings"] if f["check"] == "insertion_loss"]
    assert fs
    f = fs[0]
    assert f["measured"] > 1.0 and f["limit"] == 1.0
    assert "biggest:" in f["message"]
    assert f["evidence"]["extra_db"] == 0.5
    assert "length_mm" in f["evidence"]["remedy"]


def test_check_passes_within_the_pcie5_budget(tmp_path: Path) -> None:
    d = _check(tmp_path, "")
    runs = [r for r in d["rules"] if r["id"] == "inference.insertion_loss.pcie5"]
    assert runs and runs[0]["checked"] > 0
    assert not [f for f in d["findings"] if f["check"] == "insertion_loss"]
    bars = d["extras"]["insertion_loss"]
    assert bars[0]["budget_db"] == 16.0 and bars[0]["il_db"]


def test_config_refuses_unknown_signal_in_budgets(tmp_path: Path) -> None:
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("loss:\n  budgets_db: {pcie9: 3}\n")
    r = _cli("check", str(BOARD), "--config", str(cfg), "--quiet")
    assert r.returncode == 3
    assert "pcie9" in r.stderr


def test_stub_notch_reported_without_backdrill(tmp_path: Path) -> None:
    """Without the declared backdrill the RX through vias keep a 1.5 mm stub whose quarter-wave
    resonance (≈ 26 GHz) lies below 2× Nyquist (32 GHz): reported as a notch, and the stub adds
    loss; with the backdrill (config) no notch."""
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("class: inference\n")
    r = _cli("inspect", str(BOARD), "--json", "--detail", "loss", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["details"]["loss"]
    rx = [x for x in rows if x["layer"] == "total" and x["name"].startswith("PCIE_RX")]
    assert rx and all(x["notches"] for x in rx)
    assert all(n["f_res_hz"] <= 32e9 for x in rx for n in x["notches"])
    r2 = _cli("inspect", str(BOARD), "--json", "--detail", "loss", "--config", str(CONFIG))
    rows2 = json.loads(r2.stdout)["details"]["loss"]
    rx2 = {x["name"]: x for x in rows2 if x["layer"] == "total"}
    assert all(not rx2[x["name"]]["notches"] for x in rx)
    assert all(x["via_db"] > rx2[x["name"]]["via_db"] for x in rx)


def test_no_public_budget_is_cannot_verify(tmp_path: Path) -> None:
    """NVLink has no public channel budget: the check shows the loss and asks for
    loss.budgets_db (here the board's lanes are declared NVLink 4 to exercise it)."""
    d = _check(tmp_path, "signals:\n  nvlink4: ['PCIE_(TX|RX)\\d+_[PN]']\n")
    fs = [f for f in d["findings"] if f["rule"] == "inference.insertion_loss.nvlink4"]
    assert len(fs) == 1
    assert fs[0]["status"] == "cannot_verify"
    assert "loss.budgets_db" in fs[0]["message"]
    assert "budgets_db" in fs[0]["evidence"]["declare"]


def test_declared_roughness_is_used_and_checked(tmp_path: Path) -> None:
    """``stackup: roughness:`` per layer face is declared: rougher faces, more loss; a layer
    name the board does not have is refused (exit 3)."""

    def rx_loss(extra: str) -> float:
        cfg = tmp_path / "accel-drc.yaml"
        cfg.write_text(CONFIG.read_text().replace("stackup:\n", "stackup:\n" + extra, 1))
        r = _cli("inspect", str(BOARD), "--json", "--detail", "loss", "--config", str(cfg))
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)["details"]["loss"]
        return next(
            x["db_per_m"] for x in rows if x["name"] == "PCIE_RX0" and x["layer"] != "total"
        )

    smooth = rx_loss("  roughness:\n    In2.Cu: {rz_top_um: 0.3, rz_bottom_um: 0.3}\n")
    rough = rx_loss("  roughness:\n    In2.Cu: {rz_top_um: 8.0, rz_bottom_um: 8.0}\n")
    assert rough > smooth
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("stackup:\n  roughness:\n    In99.Cu: {rz_top_um: 1}\n")
    r = _cli("check", str(BOARD), "--config", str(cfg), "--quiet")
    assert r.returncode == 3 and "In99.Cu" in r.stderr
