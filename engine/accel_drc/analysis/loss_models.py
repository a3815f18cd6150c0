"""Per-unit-length loss of a routed differential pair: the physics, as pure functions.

Units: lengths in **mm** in (as everywhere in accel-drc), frequencies in Hz, attenuation in
**dB/m** out (× 0.0254 for dB/inch).  Everything here is a function of its arguments; the
board side (which dielectrics, which foil, which length) is :mod:`accel_drc.analysis.loss`.

Models (see ``docs/loss.md`` for the formulas, their sources and their known error):

* dielectric: the quasi-TEM perturbation result α_d = (π f / c) · Σ_k q_k ε_k tan δ_k / √ε_eff,
  with q_k = ∂ε_eff/∂ε_k the filling factor of dielectric k (computed on the impedance
  analysis' closed forms by a central difference).  For a homogeneous line q = 1 and it is the
  exact TEM result α_d = π f √εr tan δ / c.  Dk and Df vary with frequency by the causal
  wideband Djordjevic–Sarkar model fixed by one (Dk, Df, f0) point
  ([djordjevic2001] eq. 4; ω1 = 2π·10³, ω2 = 2π·10¹² rad/s);
* conductor: Wheeler's incremental-inductance rule (R = (R_s/η0) Σ_faces K_i ∂Z_air/∂n_i,
  α_c = R / (2 Z)), each face (strip top, strip bottom, strip sides, the reference planes' faces)
  with its own roughness factor K_i; R_s = √(π f μ0 / σ);
* roughness: Huray's sphere model K = A_matte/A_flat + (3/2)·Σ f_i/(1 + δ/r_i + δ²/(2r_i²)),
  f_i = N_i·4πr_i²/A_flat ([huray2010]; the 3/2 and the cannonball surface ratio f = 14π/9 as
  the Tidy3D field solver documents and tests them, [tidy3d-huray]), with the radius from Rz
  by Simonovich's cannonball stack, r = Rz/(4√3(1+√2)) ≈ 0.0598·Rz on a (6r)² tile, as the open
  field solver OpenParEM2D implements it ([openparem2d], after [dmitriev-zdorov2017],
  [simonovich2015]) — the default; or Hammerstad–Jensen's K = 1 + (2/π)·atan(1.4 (Δ/δ)²) with
  Δ = Rq taken as Rz/4 ([hammerstad1980]), on request.

The total (dielectric + conductor with cannonball roughness per face) is validated against a
published rough-copper case: Simonovich's FR408HR / RTF 50 Ω stripline ([simonovich2017]
Fig. 16 right, measured; the same line in [openparem2d]'s field solver), within 5 % of the
measurement and 1 % of the solver from 5 to 30 GHz (tests/test_loss_published.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .impedance import C0, ETA0, MU0, coupled_microstrip, offset_coupled_stripline

#: copper at 20 °C, 100 % IACS (S/m)
SIGMA_CU = 5.8e7
#: Np -> dB
NP_TO_DB = 20.0 / math.log(10.0)
#: Djordjevic–Sarkar corner frequencies (Hz): the model's usual 10^3 .. 10^12 span
DS_F1_HZ = 1e3
DS_F2_HZ = 1e12
#: frequency at which a stack-up's (εr, tan δ) is taken when nothing states it: the market
#: convention for laminate Df bins (values are quoted at 10 GHz, domain facts §2)
DEFAULT_SPEC_HZ = 10e9
#: relative step of the central differences
_REL = 1e-4

METHOD_DS = "Djordjevic-Sarkar wideband Dk/Df"
METHOD_HURAY = "Cannonball-Huray (r = Rz/(4*sqrt(3)*(1+sqrt(2))), 14 spheres per (6r)^2 tile)"
METHOD_HJ = "Hammerstad-Jensen"
METHOD_SMOOTH = "smooth copper"


# ---------------------------------------------------------------------------------------------
# Dielectric: Djordjevic–Sarkar
# ---------------------------------------------------------------------------------------------


def _ds_log(f: np.ndarray) -> np.ndarray:
    """log10((f2 + j f)/(f1 + j f)) (complex), the frequency kernel of the model."""
    jf = 1j * np.asarray(f, dtype=float)
    return np.log10((DS_F2_HZ + jf) / (DS_F1_HZ + jf))


def djordjevic_sarkar(
    dk: float, df: float, f0_hz: float, f_hz: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """(Dk(f), Df(f)) of the causal wideband model fixed by ``dk``, ``df`` at ``f0_hz``.

    ε(f) = ε∞ + a · log10((f2 + j f)/(f1 + j f)), with a and ε∞ real, chosen so that
    ε(f0) = dk·(1 − j df) exactly ([djordjevic2001]).  Between f1 and f2 Df is almost flat and
    Dk falls by a constant step per decade, as measured on FR-4 class laminates."""
    if dk <= 0 or df < 0 or f0_hz <= 0:
        raise ValueError("Djordjevic-Sarkar needs dk > 0, df >= 0 and f0 > 0")
    l0 = _ds_log(np.asarray([f0_hz]))[0]
    if df == 0.0:
        f = np.asarray(f_hz, dtype=float)
        return np.full(f.shape, dk), np.zeros(f.shape)
    a = -dk * df / l0.imag
    e_inf = dk - a * l0.real
    eps = e_inf + a * _ds_log(np.asarray(f_hz, dtype=float))
    return eps.real, -eps.imag / eps.real


# ---------------------------------------------------------------------------------------------
# Conductor: skin effect and roughness
# ---------------------------------------------------------------------------------------------


def skin_depth_m(f_hz: np.ndarray | float, sigma: float = SIGMA_CU) -> np.ndarray:
    """δ = 1/√(π f μ0 σ) (m)."""
    f = np.maximum(np.asarray(f_hz, dtype=float), 1e-30)
    return 1.0 / np.sqrt(math.pi * f * MU0 * sigma)


def surface_resistance(f_hz: np.ndarray | float, sigma: float = SIGMA_CU) -> np.ndarray:
    """R_s = √(π f μ0 / σ) (Ω per square) of smooth copper."""
    return np.sqrt(math.pi * np.asarray(f_hz, dtype=float) * MU0 / sigma)


#: Cannonball-Huray surface ratio N·4πr²/A_flat: 14 spheres (9 + 4 + 1) of radius r on a square
#: tile of side 6r, 14·4πr²/(36r²) = 14π/9 ([simonovich2015]; the same f_i in
#: ``HuraySurfaceRoughness.from_cannonball_huray`` of [tidy3d-huray])
CANNONBALL_SURFACE_RATIO = 14.0 * math.pi / 9.0
#: sphere radius per µm of Rz in the cannonball stack: r = Rz/(4√3(1+√2)) ≈ 0.0598·Rz, as the
#: open field solver OpenParEM2D computes it from a material's Rz (``OpenParEMmaterials.cpp``,
#: the surface-resistance factor of [dmitriev-zdorov2017] eq. 5; [openparem2d]).  2r(1+√2) is the
#: height of the three-layer (9 + 4 + 1) cannonball stack over r; the paper's reason for the
#: further 1/(2√3) is not in hand ([simonovich2015] could not be read past its first pages).
#: What proves it: with it, this model reproduces Simonovich's own published Cannonball-Huray
#: simulation of his FR408HR/RTF stripline within 1.2 % and the measurement within 5 % from 5 to
#: 30 GHz ([simonovich2017] Fig. 16; tests/test_loss_published.py), where the Rz/6 this module
#: used before (a recollection, never sourced) over-stated the loss by 28-55 %.
CANNONBALL_R_PER_RZ = 1.0 / (4.0 * math.sqrt(3.0) * (1.0 + math.sqrt(2.0)))
#: the roughness model used unless a rule or caller asks for another: the cannonball-Huray
#: model, the one validated against the published case above (Hammerstad–Jensen saturates at 2
#: and under-states that case by 10-16 % above 20 GHz)
DEFAULT_ROUGHNESS_MODEL = "huray"


def huray(
    f_hz: np.ndarray | float,
    radius_m: float,
    surface_ratio: float,
    sigma: float = SIGMA_CU,
    relative_area: float = 1.0,
) -> np.ndarray:
    """Huray's roughness factor for one sphere size ([huray2010]):

        K = A_matte/A_flat + (3/2) · f / (1 + δ/r + δ²/(2 r²)),   f = N·4πr²/A_flat.

    The 3/2 is the sphere's absorption cross-section at δ ≪ r (6πr²) over its area (4πr²); the
    form is the one the Tidy3D solver documents and asserts in its tests ([tidy3d-huray])."""
    f = np.asarray(f_hz, dtype=float)
    if radius_m <= 0.0 or surface_ratio <= 0.0:
        return np.full(f.shape, relative_area)
    d = skin_depth_m(f, sigma)
    r = radius_m
    return relative_area + 1.5 * surface_ratio / (1.0 + d / r + d * d / (2.0 * r * r))


def huray_cannonball(f_hz: np.ndarray | float, rz_um: float, sigma: float = SIGMA_CU) -> np.ndarray:
    """Roughness factor K(f) ≥ 1 of a face of ten-point height ``rz_um``: Huray's model with the
    cannonball-stack parameters ([simonovich2015]: 14 spheres of radius r per (6r)² tile, so
    f = 14π/9; r = Rz·:data:`CANNONBALL_R_PER_RZ` = Rz/(4√3(1+√2)), [openparem2d]):

        K = 1 + (7π/3) / (1 + δ/r + δ²/(2 r²)).

    K → 1 as δ ≫ r (low frequency), → 1 + 7π/3 ≈ 8.33 as δ ≪ r; rises monotonically with f and
    with Rz."""
    f = np.asarray(f_hz, dtype=float)
    if rz_um <= 0.0:
        return np.ones(f.shape)
    return huray(f, rz_um * 1e-6 * CANNONBALL_R_PER_RZ, CANNONBALL_SURFACE_RATIO, sigma)


def hammerstad_jensen(
    f_hz: np.ndarray | float, rq_um: float, sigma: float = SIGMA_CU
) -> np.ndarray:
    """Hammerstad–Jensen roughness factor 1 + (2/π)·atan(1.4·(Δ/δ)²), Δ the RMS height
    ([hammerstad1980]); saturates at 2."""
    f = np.asarray(f_hz, dtype=float)
    if rq_um <= 0.0:
        return np.ones(f.shape)
    d = skin_depth_m(f, sigma)
    return 1.0 + (2.0 / math.pi) * np.arctan(1.4 * (rq_um * 1e-6 / d) ** 2)


def roughness_factor(
    f_hz: np.ndarray | float,
    rz_um: float,
    sigma: float = SIGMA_CU,
    model: str = DEFAULT_ROUGHNESS_MODEL,
) -> np.ndarray:
    """K(f) by ``model``: ``huray`` (cannonball from Rz) or ``hammerstad`` (Δ = Rz/4: an
    assumed Rq/Rz ratio, typical of treated foils but not a law; docs/loss.md)."""
    if model == "hammerstad":
        return hammerstad_jensen(f_hz, rz_um / 4.0, sigma)
    return huray_cannonball(f_hz, rz_um, sigma)


# ---------------------------------------------------------------------------------------------
# The cross-section
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dielectric:
    """One side's dielectric: εr and tan δ at ``f0_hz`` (wideband by Djordjevic–Sarkar)."""

    er: float
    df: float
    f0_hz: float = DEFAULT_SPEC_HZ
    wideband: bool = True

    def at(self, f_hz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = np.asarray(f_hz, dtype=float)
        if not self.wideband:
            return np.full(f.shape, self.er), np.full(f.shape, self.df)
        return djordjevic_sarkar(self.er, self.df, self.f0_hz, f)


@dataclass(frozen=True)
class PairSection:
    """The cross-section of an edge-coupled pair, as the impedance analysis describes it.

    Stripline: ``h_below``/``below`` between the strips' bottom face and the lower plane,
    ``h_above``/``above`` from their top face to the upper plane.  Microstrip: ``h_below`` is the
    substrate between the strip and its plane (``above`` unused: air).  Roughness Rz (µm) per
    face: the strip's face towards its plane (``rz_strip_plane``), the face away from it
    (``rz_strip_away``), the strips' etched sides (``rz_sides``), the plane's face towards the
    strip (``rz_plane``) and, for stripline, the other plane's (``rz_plane2``)."""

    structure: str  # stripline | microstrip
    w_mm: float
    s_mm: float
    t_mm: float
    h_below_mm: float
    below: Dielectric
    h_above_mm: float | None = None
    above: Dielectric | None = None
    rz_strip_plane: float = 0.0
    rz_strip_away: float = 0.0
    rz_sides: float = 0.0
    rz_plane: float = 0.0
    rz_plane2: float = 0.0
    sigma: float = SIGMA_CU
    roughness_model: str = DEFAULT_ROUGHNESS_MODEL
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    # -- closed forms (odd mode, one strip) --------------------------------------------------

    def z_odd(self, er_b: float, er_a: float, **geo: float) -> float:
        """Odd-mode Z (Ω) with the given εr below/above and geometry overrides (mm)."""
        w = geo.get("w", self.w_mm)
        s = geo.get("s", self.s_mm)
        t = geo.get("t", self.t_mm)
        hb = geo.get("hb", self.h_below_mm)
        if self.structure == "stripline":
            ha = geo.get("ha", self.h_above_mm)
            assert ha is not None
            return offset_coupled_stripline(w, s, ha, hb, t, er_a, er_b)[1]
        return coupled_microstrip(w, s, hb, t, er_b)[1]

    def _ers(self) -> tuple[float, float]:
        return self.below.er, (self.above.er if self.above is not None else 1.0)

    def static(self) -> tuple[float, float, float, float, float, tuple[float, ...]]:
        """(Z_odd, Z_odd in air, ε_eff, q_below, q_above, wall derivatives ∂Z_air/∂n in Ω/mm for
        strip-plane face, strip-away face, sides, plane, plane2) at the nominal εr."""
        if "static" in self._cache:
            return self._cache["static"]
        eb, ea = self._ers()
        z = self.z_odd(eb, ea)
        z_air = self.z_odd(1.0, 1.0)
        eeff = (z_air / z) ** 2

        def eff(b: float, a: float) -> float:
            return (z_air / self.z_odd(b, a)) ** 2

        hb = eb * _REL
        q_b = (eff(eb + hb, ea) - eff(eb - hb, ea)) / (2 * hb)
        q_a = 0.0
        if self.structure == "stripline":
            ha_ = ea * _REL
            q_a = (eff(eb, ea + ha_) - eff(eb, ea - ha_)) / (2 * ha_)
        dn = max(1e-5, self.t_mm * 1e-3) if self.t_mm > 0 else 1e-5

        def dz(**moves: float) -> float:
            up = {k: getattr_geo(self, k) + v * dn for k, v in moves.items()}
            dw = {k: getattr_geo(self, k) - v * dn for k, v in moves.items()}
            return (self.z_odd(1.0, 1.0, **up) - self.z_odd(1.0, 1.0, **dw)) / (2 * dn)

        if self.structure == "stripline":
            # strip bottom face (towards the lower plane) recedes: hb grows, t shrinks
            d_strip_plane = dz(hb=1.0, t=-1.0)
            d_strip_away = dz(ha=1.0, t=-1.0)
            d_plane = dz(hb=1.0)
            d_plane2 = dz(ha=1.0)
        else:
            d_strip_plane = dz(hb=1.0, t=-1.0)
            d_strip_away = dz(t=-1.0) if self.t_mm > 2 * dn else 0.0
            d_plane = dz(hb=1.0)
            d_plane2 = 0.0
        d_sides = dz(w=-2.0, s=2.0)
        walls = (d_strip_plane, d_strip_away, d_sides, d_plane, d_plane2)
        out = (z, z_air, eeff, q_b, q_a, walls)
        self._cache["static"] = out
        return out  # type: ignore[return-value]

    # -- attenuation ------------------------------------------------------------------------

    def alpha_db_per_m(
        self, f_hz: np.ndarray | Sequence[float] | float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(dielectric, conductor) attenuation in dB/m of the differential (odd) mode at
        ``f_hz`` (array)."""
        f = np.atleast_1d(np.asarray(f_hz, dtype=float))
        z, z_air, eeff, q_b, q_a, walls = self.static()
        er_b, df_b = self.below.at(f)
        ad = q_b * er_b * df_b
        if self.structure == "stripline" and self.above is not None:
            er_a, df_a = self.above.at(f)
            ad = ad + q_a * er_a * df_a
        alpha_d = math.pi * f / C0 * ad / math.sqrt(eeff)
        rs = surface_resistance(f, self.sigma)
        rz = (self.rz_strip_plane, self.rz_strip_away, self.rz_sides, self.rz_plane, self.rz_plane2)
        r_ac = np.zeros(f.shape)
        for d_wall, rz_i in zip(walls, rz):
            if d_wall == 0.0:
                continue
            k = roughness_factor(f, rz_i, self.sigma, self.roughness_model)
            r_ac = r_ac + k * d_wall * 1e3  # Ω/mm -> Ω/m
        r_ac = rs / ETA0 * r_ac
        # below a few MHz the skin is thicker than the copper: blend into the DC resistance
        r_dc = 1.0 / (self.sigma * self.w_mm * 1e-3 * max(self.t_mm, 1e-6) * 1e-3)
        r = np.sqrt(r_ac * r_ac + r_dc * r_dc)
        alpha_c = r / (2.0 * z)
        return alpha_d * NP_TO_DB, alpha_c * NP_TO_DB


def getattr_geo(sec: PairSection, key: str) -> float:
    """The nominal value of geometry key ``key`` (w, s, t, hb, ha) of ``sec``."""
    return {
        "w": sec.w_mm,
        "s": sec.s_mm,
        "t": sec.t_mm,
        "hb": sec.h_below_mm,
        "ha": sec.h_above_mm if sec.h_above_mm is not None else 0.0,
    }[key]


def shunt_stub_db(
    f_hz: np.ndarray,
    stub_mm: float,
    eps_eff: float,
    z_line: float = 50.0,
    alpha_np_per_m: float = 2.0,
) -> np.ndarray:
    """Insertion loss (dB, ≥ 0) of an open via stub of length ``stub_mm`` hanging off a matched
    line: a shunt Z_in = Z_s·coth(γL), Z_s = Z_line, γ = α + jβ; S21 = 1/(1 + Z0/(2 Z_in)).
    ``alpha_np_per_m`` bounds the notch depth (a lossless stub's notch is infinite)."""
    f = np.asarray(f_hz, dtype=float)
    if not stub_mm or stub_mm <= 0 or not math.isfinite(stub_mm):
        return np.zeros(f.shape)
    beta = 2 * math.pi * f * math.sqrt(eps_eff) / C0
    gl = (alpha_np_per_m + 1j * beta) * stub_mm * 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        zin = z_line / np.tanh(gl)
        s21 = 1.0 / (1.0 + z_line / (2.0 * zin))
    out = -20.0 * np.log10(np.abs(s21))
    return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)
