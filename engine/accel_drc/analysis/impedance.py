"""Differential impedance of routed pairs: closed-form solvers, a 2-D field solver, and the
board geometry (width, gap, height, εr) they are fed with.

Units are explicit and fixed: lengths in **mm** in, impedances in **Ω** out, εr dimensionless.
Every solver is a pure function of its arguments; the board part only gathers numbers.

Methods (see ``docs/impedance.md`` for the formulas and the measured accuracy):

* symmetric coupled stripline, zero thickness: Cohn (1955), exact (conformal mapping), with the
  complete elliptic integrals computed by the arithmetic-geometric mean;
* symmetric coupled stripline, finite thickness: Cohn's thickness correction (1955, eq. 22)
  on top of the exact zero-thickness values, with Wheeler's (1978) thick single stripline and
  the inner-edge term merged smoothly (:func:`coupled_stripline`; Cohn's own s/t = 5 switch is
  kept as :func:`cohn_coupled_stripline` for comparison);
* offset (asymmetric) stripline, possibly with a different εr above and below: each half of
  the cross-section is taken as half of a symmetric stripline of plate spacing 2h+t, and the two
  halves' capacitances are added (air and dielectric separately, so an inhomogeneous stack is
  handled as well as a homogeneous one);
* edge-coupled microstrip, closed form: Kirschning–Jansen (1984) coupled lines on the
  Hammerstad–Jensen (1980) single line, static (quasi-TEM, no dispersion), at t = 0; the strip
  thickness added as capacitance increments (:func:`coupled_microstrip`); the literature
  version with Jansen's width corrections is kept for comparison; no soldermask;
* IPC-2141A closed forms, for comparison only (off by 5–80 % outside a narrow range);
* :func:`fd_coupled`: a finite-difference (box-integration) Laplace solver on a graded mesh,
  numpy only, independent of all the above; used to validate them, and the production method
  for microstrip (it includes the soldermask).

Board side (:func:`layer_stack`, :func:`measure_pair`, :func:`pair_table`, :func:`pair_rows`):
the structure and its heights/εr from the stack-up, width and gap measured from the tracks.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # optional: keeps BLAS single-threaded inside the field solver (see _one_blas_thread)
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # pragma: no cover - depends on the environment
    _threadpool_limits = None

log = logging.getLogger(__name__)

#: speed of light in vacuum (m/s), exact
C0 = 299_792_458.0
#: vacuum permeability (H/m), the pre-2019 exact value (differs from CODATA 2018 by 5e-10)
MU0 = 4e-7 * math.pi
#: vacuum permittivity (F/m)
EPS0 = 1.0 / (MU0 * C0 * C0)
#: impedance of free space (Ω), μ0·c ≈ 376.730 Ω
ETA0 = MU0 * C0


# =============================================================================================
# Complete elliptic integral of the first kind
# =============================================================================================


def _agm(a: float, b: float) -> float:
    """Arithmetic-geometric mean; converges quadratically (≈ 5 steps for double precision)."""
    for _ in range(64):
        if abs(a - b) <= 1e-15 * a:
            break
        a, b = 0.5 * (a + b), math.sqrt(a * b)
    return 0.5 * (a + b)


def ellipk(k: float, kp: float | None = None) -> float:
    """K(k) = ∫0^{π/2} dθ / √(1 − k² sin²θ), by K = π / (2·AGM(1, k′)).

    ``kp`` (k′ = √(1 − k²)) may be passed when the caller knows it more accurately than
    ``sqrt(1 - k*k)`` (k close to 1 loses all digits of k′ in the subtraction).
    """
    if kp is None:
        if not 0.0 <= k < 1.0:
            raise ValueError(f"ellipk: modulus must be in [0, 1), got {k}")
        kp = math.sqrt((1.0 - k) * (1.0 + k))
    if kp <= 0.0:
        raise ValueError("ellipk: k' must be > 0 (K diverges at k = 1)")
    return math.pi / (2.0 * _agm(1.0, kp))


def ellipk_ratio(k: float, kp: float) -> float:
    """K(k′)/K(k), with both moduli given exactly (the conformal-map impedance ratio)."""
    return ellipk(kp, k) / ellipk(k, kp)


# =============================================================================================
# Stripline
# =============================================================================================

_X_MAX = 300.0  # π·w/(2b) beyond which cosh overflows; a 190:1 strip is not a PCB trace


def _check_pos(**vals: float) -> None:
    for name, v in vals.items():
        if not (v > 0.0 and math.isfinite(v)):
            raise ValueError(f"{name} must be a positive finite number of mm, got {v!r}")


def stripline_z0_zero_t(w_mm: float, b_mm: float, er: float) -> float:
    """Exact Z0 (Ω) of a zero-thickness strip of width w centred between planes b apart (Cohn 1954).

    Z0 = η0/(4√εr) · K(k)/K(k′), k = sech(πw/2b), k′ = tanh(πw/2b).
    """
    _check_pos(w_mm=w_mm, b_mm=b_mm, er=er)
    x = math.pi * w_mm / (2.0 * b_mm)
    if x > _X_MAX:
        raise ValueError("stripline: w/b too large")
    k = 1.0 / math.cosh(x)
    kp = math.tanh(x)
    return ETA0 / (4.0 * math.sqrt(er)) * ellipk(k, kp) / ellipk(kp, k)


def cohn_coupled_stripline_zero_t(
    w_mm: float, s_mm: float, b_mm: float, er: float
) -> tuple[float, float]:
    """Exact (even, odd) mode impedances (Ω) of zero-thickness edge-coupled strips centred
    between planes b apart (Cohn 1955, eqs. 2–7).  Zdiff = 2·Z0o, Zcomm = Z0e/2.

    k_e = tanh(πw/2b)·tanh(π(w+s)/2b), k_o = tanh(πw/2b)·coth(π(w+s)/2b),
    Z0e,o = η0/(4√εr) · K(k′)/K(k).  The complementary moduli are computed from exact
    hyperbolic identities (1 − tanh a·tanh b = cosh(a−b)/(cosh a·cosh b), …), so wide strips
    and wide gaps (k → 1) keep full precision.
    """
    _check_pos(w_mm=w_mm, s_mm=s_mm, b_mm=b_mm, er=er)
    x1 = math.pi * w_mm / (2.0 * b_mm)
    x2 = math.pi * (w_mm + s_mm) / (2.0 * b_mm)
    if x2 > _X_MAX:
        raise ValueError("coupled stripline: (w+s)/b too large")
    ch1, ch2, sh2 = math.cosh(x1), math.cosh(x2), math.sinh(x2)
    ke = math.tanh(x1) * math.tanh(x2)
    kpe = math.sqrt(math.cosh(x2 - x1) * math.cosh(x1 + x2)) / (ch1 * ch2)
    ko = math.tanh(x1) / math.tanh(x2)
    kpo = math.sqrt(math.sinh(x2 - x1) * math.sinh(x1 + x2)) / (ch1 * sh2)
    scale = ETA0 / (4.0 * math.sqrt(er))
    return scale * ellipk_ratio(ke, kpe), scale * ellipk_ratio(ko, kpo)


def _cohn_fringe(t_b: float) -> float:
    """Cohn's (1954, eq. 2) fringing capacitance of one thick-strip edge to both planes, C′f/ε."""
    if t_b <= 0.0:
        return 2.0 * math.log(2.0) / math.pi
    a = 1.0 / (1.0 - t_b)
    return (2.0 * a * math.log(a + 1.0) - (a - 1.0) * math.log(a * a - 1.0)) / math.pi


def wheeler_stripline_z0(w_mm: float, b_mm: float, t_mm: float, er: float) -> float:
    """Z0 (Ω) of a finite-thickness strip centred between planes b apart: Wheeler (1978),
    IEEE MTT-26 p. 866 (as given by Wadell, *Transmission Line Design Handbook*, §4.2.1).

    Wheeler states ≈ 0.5 % for w/(b−t) < 10; at t = 0 it is within 0.5 % of Cohn's exact value.
    """
    _check_pos(w_mm=w_mm, b_mm=b_mm, er=er)
    if t_mm < 0.0 or t_mm >= b_mm:
        raise ValueError("stripline: need 0 <= t < b")
    x = t_mm / b_mm
    bt = b_mm - t_mm
    if x > 0.0:
        m = 2.0 / (1.0 + (2.0 / 3.0) * x / (1.0 - x))
        dw = (
            bt
            * x
            / (math.pi * (1.0 - x))
            * (
                1.0
                - 0.5 * math.log((x / (2.0 - x)) ** 2 + (0.0796 * x / (w_mm / b_mm + 1.1 * x)) ** m)
            )
        )
    else:
        dw = 0.0
    wp = w_mm + dw
    q = 8.0 * bt / (math.pi * wp)
    return (
        30.0
        / math.sqrt(er)
        * math.log(1.0 + 4.0 * bt / (math.pi * wp) * (q + math.sqrt(q * q + 6.27)))
    )


def cohn_coupled_stripline(
    w_mm: float, s_mm: float, b_mm: float, t_mm: float, er: float
) -> tuple[float, float]:
    """(even, odd) Z (Ω) of thick edge-coupled strips centred between planes b apart, exactly as
    Cohn (1955) gives it: eqs. 18 (even), 20 (odd, s/t ≥ 5) and 22 (odd, s/t < 5), with
    Wheeler (1978) for the thick single strip.  Kept for comparison: against the field solver
    its Zdiff is off by up to 6.1 % just above the s/t = 5 switch (narrow strips,
    docs/impedance.md); :func:`coupled_stripline` is the production formula.
    """
    ze0, zo0 = cohn_coupled_stripline_zero_t(w_mm, s_mm, b_mm, 1.0)
    if t_mm <= 0.0:
        return ze0 / math.sqrt(er), zo0 / math.sqrt(er)
    z0t = wheeler_stripline_z0(w_mm, b_mm, t_mm, 1.0)
    z00 = stripline_z0_zero_t(w_mm, b_mm, 1.0)
    ratio = _cohn_fringe(t_mm / b_mm) / _cohn_fringe(0.0)
    ze = 1.0 / (1.0 / z0t - ratio * (1.0 / z00 - 1.0 / ze0))
    if s_mm / t_mm >= 5.0:
        zo = 1.0 / (1.0 / z0t + ratio * (1.0 / zo0 - 1.0 / z00))
    else:
        dyf = 2.0 * (_cohn_fringe(t_mm / b_mm) - _cohn_fringe(0.0)) / ETA0
        zo = 1.0 / (1.0 / zo0 + (1.0 / z0t - 1.0 / z00) - dyf + 2.0 * t_mm / (ETA0 * s_mm))
    return ze / math.sqrt(er), zo / math.sqrt(er)


#: exponent of the norm that merges the two inner-edge terms in :func:`coupled_stripline`
INNER_EDGE_NORM = 3.0


def coupled_stripline(
    w_mm: float, s_mm: float, b_mm: float, t_mm: float, er: float
) -> tuple[float, float]:
    """(even, odd) Z (Ω) of edge-coupled strips of thickness t centred between planes b apart.

    t = 0: Cohn's exact values.  t > 0, odd mode, in admittances (air, per unit c):
    Y_o = Y_o(0) + [Y_s(t) − Y_s(0)] − ΔY_f + ‖(Y_pp, ΔY_f)‖₃, i.e. Cohn's eq. 22 (zero-thickness
    coupled admittance, plus the thickness increment of the single strip — Wheeler 1978 —
    minus the fringing increment of the inner edge ΔY_f = 2·ΔC′f/(ε0·η0)), where the inner
    edge's own term is the 3-norm of the parallel-plate admittance Y_pp = 2t/(η0·s) between the
    facing sides and the edge-fringing increment ΔY_f.  Cohn switches abruptly between eq. 22
    (inner edge = Y_pp) and eq. 20 (≈ inner edge = ΔY_f) at s/t = 5: eq. 20 is up to 6 % off
    just above the switch, eq. 22 up to 4.8 % off at large s/t; the norm tends to each where it
    is right.  The exponent 3 was
    chosen (from 1.5, 2, 2.5, 3, 3.5, 4) against the field solver; measured Zdiff error on a
    125-point grid (t/b 0.03–0.2, w/b 0.1–1.2, s/b 0.1–1): ≤ 1.6 % for w/b ≥ 0.2, 2.1 % at
    w/b = 0.1; out-of-sample points in the tests.  Even mode: Cohn eq. 18, not validated
    (only the odd mode enters Zdiff).  Homogeneous dielectric: computed in air, scaled 1/√εr.
    """
    ze0, zo0 = cohn_coupled_stripline_zero_t(w_mm, s_mm, b_mm, 1.0)
    if t_mm <= 0.0:
        return ze0 / math.sqrt(er), zo0 / math.sqrt(er)
    z0t = wheeler_stripline_z0(w_mm, b_mm, t_mm, 1.0)
    z00 = stripline_z0_zero_t(w_mm, b_mm, 1.0)
    ratio = _cohn_fringe(t_mm / b_mm) / _cohn_fringe(0.0)
    ze = 1.0 / (1.0 / z0t - ratio * (1.0 / z00 - 1.0 / ze0))
    dyf = 2.0 * (_cohn_fringe(t_mm / b_mm) - _cohn_fringe(0.0)) / ETA0
    ypp = 2.0 * t_mm / (ETA0 * s_mm)
    p = INNER_EDGE_NORM
    inner = (ypp**p + dyf**p) ** (1.0 / p)
    zo = 1.0 / (1.0 / zo0 + (1.0 / z0t - 1.0 / z00) - dyf + inner)
    return ze / math.sqrt(er), zo / math.sqrt(er)


def offset_coupled_stripline(
    w_mm: float,
    s_mm: float,
    h1_mm: float,
    h2_mm: float,
    t_mm: float,
    er1: float,
    er2: float | None = None,
) -> tuple[float, float]:
    """(even, odd) Z (Ω) of edge-coupled strips between two planes, not necessarily centred.

    ``h1`` is the dielectric between the strips' top face and the upper plane (εr ``er1``),
    ``h2`` between their bottom face and the lower plane (εr ``er2``, default ``er1``).

    Parallel-capacitance approximation: the half of the cross-section above the strips is taken
    as the upper half of a symmetric stripline of spacing b1 = 2·h1 + t, the lower half as half
    of one of spacing b2 = 2·h2 + t.  Per mode, C_air = (C_air(b1) + C_air(b2))/2 and
    C = (εr1·C_air(b1) + εr2·C_air(b2))/2, Z = 1/(c·√(C·C_air)).  With h1 = h2 it is exactly the
    symmetric formula; for a homogeneous dielectric it reduces to KiCad's
    Z = 2/(1/Z(b1) + 1/Z(b2)).  The field lines that cross the strip plane beside the strips
    are what the split gets wrong; measured error vs the field solver in docs/impedance.md.
    """
    if er2 is None:
        er2 = er1
    _check_pos(h1_mm=h1_mm, h2_mm=h2_mm, er1=er1, er2=er2)
    out = []
    for mode in (0, 1):
        z1 = coupled_stripline(w_mm, s_mm, 2.0 * h1_mm + t_mm, t_mm, 1.0)[mode]
        z2 = coupled_stripline(w_mm, s_mm, 2.0 * h2_mm + t_mm, t_mm, 1.0)[mode]
        c_air = 0.5 * (1.0 / z1 + 1.0 / z2)  # ×1/c0 omitted: cancels
        c_die = 0.5 * (er1 / z1 + er2 / z2)
        out.append(1.0 / math.sqrt(c_air * c_die))
    return out[0], out[1]


# =============================================================================================
# Microstrip
# =============================================================================================


def _hj_z01(u: float) -> float:
    """Hammerstad–Jensen Z0 (Ω) of a zero-thickness strip on an air substrate, u = w/h."""
    f = 6.0 + (2.0 * math.pi - 6.0) * math.exp(-((30.666 / u) ** 0.7528))
    return ETA0 / (2.0 * math.pi) * math.log(f / u + math.sqrt(1.0 + (2.0 / u) ** 2))


def _hj_ereff(u: float, er: float) -> float:
    """Hammerstad–Jensen static effective εr of a zero-thickness microstrip."""
    a = (
        1.0
        + math.log((u**4 + (u / 52.0) ** 2) / (u**4 + 0.432)) / 49.0
        + math.log(1.0 + (u / 18.1) ** 3) / 18.7
    )
    b = 0.564 * ((er - 0.9) / (er + 3.0)) ** 0.053
    return 0.5 * (er + 1.0) + 0.5 * (er - 1.0) * (1.0 + 10.0 / u) ** (-a * b)


def hammerstad_jensen_microstrip(
    w_mm: float, h_mm: float, t_mm: float, er: float
) -> tuple[float, float]:
    """(Z0 Ω, static εeff) of a single microstrip: Hammerstad & Jensen, "Accurate models for
    microstrip computer-aided design", IEEE MTT-S 1980, including their thickness correction.
    Stated accuracy ≤ 0.2 % (εr < 128, 0.01 ≤ u ≤ 100) for t = 0."""
    _check_pos(w_mm=w_mm, h_mm=h_mm, er=er)
    u = w_mm / h_mm
    th = max(t_mm, 0.0) / h_mm
    if th > 0.0:
        du1 = (
            th / math.pi * math.log(1.0 + 4.0 * math.e * math.tanh(math.sqrt(6.517 * u)) ** 2 / th)
        )
        dur = 0.5 * du1 * (1.0 + 1.0 / math.cosh(math.sqrt(max(er - 1.0, 0.0))))
    else:
        du1 = dur = 0.0
    u1, ur = u + du1, u + dur
    eeff_r = _hj_ereff(ur, er)
    z0 = _hj_z01(ur) / math.sqrt(eeff_r)
    eeff = eeff_r * (_hj_z01(u1) / _hj_z01(ur)) ** 2
    return z0, eeff


def kirschning_jansen_coupled_microstrip(
    w_mm: float, s_mm: float, h_mm: float, t_mm: float, er: float
) -> tuple[float, float]:
    """(even, odd) static Z (Ω) of edge-coupled microstrip: Kirschning & Jansen, IEEE MTT-32
    (1984) pp. 83–90 (static part; errata MTT-33 p. 288), with Jansen's (1978) finite-thickness
    width corrections Δu_e, Δu_o.  Stated: within 1 % for 0.1 ≤ u ≤ 10, 0.1 ≤ g ≤ 10,
    1 ≤ εr ≤ 18.  Dispersion (the frequency-dependent part) is not applied: values are the
    quasi-static limit (KiCad's calculator applies it; its size was not measured here).
    Measured against the field solver: 0.63 % at t = 0, but up to 15 % high at tight gaps on
    thick copper (see :func:`coupled_microstrip`, which replaces the thickness part).
    """
    _check_pos(w_mm=w_mm, s_mm=s_mm, h_mm=h_mm, er=er)
    u = w_mm / h_mm
    g = s_mm / h_mm
    th = max(t_mm, 0.0) / h_mm
    if th > 0.0:
        # Hammerstad–Bekkadal single-strip Δu (wide: ln(2h/t); narrow, u < 1/2π: ln(4πw/t)),
        # then Jansen's split into even/odd (the odd mode also sees the gap side walls).
        arg = 2.0 / th if u >= 1.0 / (2.0 * math.pi) else 4.0 * math.pi * u / th
        du = 1.25 * th / math.pi * (1.0 + math.log(arg))
        dt = th / (g * er)
        du_e = du * (1.0 - 0.5 * math.exp(-0.69 * du / dt))
        du_o = du_e + dt
    else:
        du_e = du_o = 0.0
    ue, uo = u + du_e, u + du_o

    # zero-thickness single line at the mode's corrected width (the coupled formulas' reference)
    eeff_se = _hj_ereff(ue, er)
    z0se = _hj_z01(ue) / math.sqrt(eeff_se)

    # even-mode static εeff
    v = ue * (20.0 + g * g) / (10.0 + g * g) + g * math.exp(-g)
    ae = (
        1.0
        + math.log((v**4 + (v / 52.0) ** 2) / (v**4 + 0.432)) / 49.0
        + math.log(1.0 + (v / 18.1) ** 3) / 18.7
    )
    be = 0.564 * ((er - 0.9) / (er + 3.0)) ** 0.053
    eeff_e = 0.5 * (er + 1.0) + 0.5 * (er - 1.0) * (1.0 + 10.0 / v) ** (-ae * be)

    # odd-mode static εeff
    eeff_s = _hj_ereff(uo, er)
    z0s = _hj_z01(uo) / math.sqrt(eeff_s)
    ao = 0.7287 * (eeff_s - 0.5 * (er + 1.0)) * (1.0 - math.exp(-0.179 * uo))
    bo = 0.747 * er / (0.15 + er)
    co = bo - (bo - 0.207) * math.exp(-0.414 * uo)
    do = 0.593 + 0.694 * math.exp(-0.562 * uo)
    eeff_o = (0.5 * (er + 1.0) + ao - eeff_s) * math.exp(-co * g**do) + eeff_s

    q1 = 0.8695 * ue**0.194
    q2 = 1.0 + 0.7519 * g + 0.189 * g**2.31
    q3 = (
        0.1975
        + (16.6 + (8.4 / g) ** 6) ** -0.387
        + math.log(g**10 / (1.0 + (g / 3.4) ** 10)) / 241.0
    )
    q4 = 2.0 * q1 / (q2 * (math.exp(-g) * ue**q3 + (2.0 - math.exp(-g)) * ue ** (-q3)))
    ze = z0se * math.sqrt(eeff_se / eeff_e) / (1.0 - math.sqrt(eeff_se) * q4 * z0se / ETA0)

    q5 = 1.794 + 1.14 * math.log(1.0 + 0.638 / (g + 0.517 * g**2.43))
    q6 = (
        0.2305
        + math.log(g**10 / (1.0 + (g / 5.8) ** 10)) / 281.3
        + math.log(1.0 + 0.598 * g**1.154) / 5.1
    )
    q7 = (10.0 + 190.0 * g * g) / (1.0 + 82.3 * g**3)
    q8 = math.exp(-6.5 - 0.95 * math.log(g) - (g / 0.15) ** 5)
    q9 = math.log(q7) * (q8 + 1.0 / 16.5)
    q1o = 0.8695 * uo**0.194
    q4o = 2.0 * q1o / (q2 * (math.exp(-g) * uo**q3 + (2.0 - math.exp(-g)) * uo ** (-q3)))
    q10 = (q2 * q4o - q5 * math.exp(math.log(uo) * q6 * uo ** (-q9))) / q2
    zo = z0s * math.sqrt(eeff_s / eeff_o) / (1.0 - math.sqrt(eeff_s) * q10 * z0s / ETA0)
    return ze, zo


#: exponent of the norm that merges the gap side-wall terms in :func:`coupled_microstrip`
MS_INNER_EDGE_NORM = 2.0


def coupled_microstrip(
    w_mm: float, s_mm: float, h_mm: float, t_mm: float, er: float
) -> tuple[float, float]:
    """(even, odd) static Z (Ω) of edge-coupled microstrip with strips of thickness t.

    Odd mode: Kirschning–Jansen at t = 0 (its stated 1 % range; 0.5 % from the field solver),
    then the thickness added as capacitance increments, separately with and without the
    dielectric (the line is inhomogeneous): ΔC = ΔC_s − ΔC_s/2 + ‖(C_pp, ΔC_s/2)‖₂, where
    ΔC_s is the single strip's increment from Hammerstad–Jensen's thick-strip model (half of it
    per edge) and C_pp = 2ε0·t/s the parallel plates between the facing sides (in air).  This is
    the construction of :func:`coupled_stripline` carried over; Jansen's width corrections
    (:func:`kirschning_jansen_coupled_microstrip`) are up to 15 % off at tight gaps on thick
    copper.  Measured against the field solver: ≤ 2.0 % on a 45-point grid (w/h 0.5–2,
    s/h 0.3–8, t/h 0.1–0.35, εr 3.5; exponent chosen there from 2, 3, 4), ≤ 1.05 % on 10 other
    geometries (εr 3.0–4.5).  Even mode: Kirschning–Jansen with Jansen's thickness correction,
    not validated.  Soldermask is not included (the field solver has it).
    """
    ze = kirschning_jansen_coupled_microstrip(w_mm, s_mm, h_mm, t_mm, er)[0]
    zo0 = kirschning_jansen_coupled_microstrip(w_mm, s_mm, h_mm, 0.0, er)[1]
    if t_mm <= 0.0:
        return ze, zo0
    zo0_air = kirschning_jansen_coupled_microstrip(w_mm, s_mm, h_mm, 0.0, 1.0)[1]
    eeff0 = (zo0_air / zo0) ** 2
    # admittances per unit c: c·C = √εeff / Z, c·C_air = 1 / (Z·√εeff)
    z_s0, e_s0 = hammerstad_jensen_microstrip(w_mm, h_mm, 0.0, er)
    z_st, e_st = hammerstad_jensen_microstrip(w_mm, h_mm, t_mm, er)
    y_pp = 2.0 * t_mm / (s_mm * ETA0)
    p = MS_INNER_EDGE_NORM
    out = []
    for y0, ys0, yst in (
        (math.sqrt(eeff0) / zo0, math.sqrt(e_s0) / z_s0, math.sqrt(e_st) / z_st),
        (
            1.0 / (zo0 * math.sqrt(eeff0)),
            1.0 / (z_s0 * math.sqrt(e_s0)),
            1.0 / (z_st * math.sqrt(e_st)),
        ),
    ):
        d_single = yst - ys0
        edge = 0.5 * d_single
        out.append(y0 + d_single - edge + (y_pp**p + edge**p) ** (1.0 / p))
    return ze, 1.0 / math.sqrt(out[0] * out[1])


# =============================================================================================
# IPC-2141A closed forms (for comparison: coarse, and only in a narrow range)
# =============================================================================================


def ipc2141_microstrip_z0(w_mm: float, h_mm: float, t_mm: float, er: float) -> float:
    """IPC-2141A: Z0 = 87/√(εr+1.41)·ln(5.98h/(0.8w+t))."""
    return 87.0 / math.sqrt(er + 1.41) * math.log(5.98 * h_mm / (0.8 * w_mm + t_mm))


def ipc2141_microstrip_zdiff(
    w_mm: float, s_mm: float, h_mm: float, t_mm: float, er: float
) -> float:
    """IPC-2141A edge-coupled microstrip: Zdiff = 2·Z0·(1 − 0.48·e^(−0.96 s/h))."""
    z0 = ipc2141_microstrip_z0(w_mm, h_mm, t_mm, er)
    return 2.0 * z0 * (1.0 - 0.48 * math.exp(-0.96 * s_mm / h_mm))


def ipc2141_stripline_z0(w_mm: float, b_mm: float, t_mm: float, er: float) -> float:
    """IPC-2141A symmetric stripline: Z0 = 60/√εr·ln(1.9b/(0.8w+t))."""
    return 60.0 / math.sqrt(er) * math.log(1.9 * b_mm / (0.8 * w_mm + t_mm))


def ipc2141_stripline_zdiff(w_mm: float, s_mm: float, b_mm: float, t_mm: float, er: float) -> float:
    """IPC-2141A edge-coupled stripline: Zdiff = 2·Z0·(1 − 0.347·e^(−2.9 s/b))."""
    z0 = ipc2141_stripline_z0(w_mm, b_mm, t_mm, er)
    return 2.0 * z0 * (1.0 - 0.347 * math.exp(-2.9 * s_mm / b_mm))


# =============================================================================================
# 2-D finite-difference field solver (reference, and soldermask correction)
# =============================================================================================


@dataclass(frozen=True)
class FdLayer:
    """A horizontal dielectric slab of the field-solver cross-section: from ``y0`` to ``y1`` mm
    above the lower ground plane, relative permittivity ``er``.  Space not covered is air."""

    y0: float
    y1: float
    er: float


def _graded(
    keys: Sequence[float], fine: Sequence[float], hmin: float, hmax: float, grow: float
) -> np.ndarray:
    """Mesh coordinates through every key coordinate, spacing ``hmin`` at the ``fine`` points
    (strip edges, where the field is singular) growing linearly with the distance from them
    (slope ``grow − 1``) up to ``hmax``."""
    fine_arr = np.asarray(sorted(fine), dtype=float)

    def spacing(x: float) -> float:
        d = float(np.min(np.abs(fine_arr - x))) if fine_arr.size else math.inf
        return min(hmax, hmin + (grow - 1.0) * d)

    uniq = sorted({round(k, 12) for k in keys})
    out = [uniq[0]]
    for a, b in zip(uniq[:-1], uniq[1:]):
        pts = [a]
        x = a
        while True:
            step = min(spacing(x), spacing(x + spacing(x)))
            if x + 1.5 * step >= b:
                break
            x += step
            pts.append(x)
        if len(pts) > 1 and (b - pts[-1]) < 0.5 * (pts[-1] - pts[-2]):
            pts.pop()
        out.extend(pts[1:])
        out.append(b)
    return np.asarray(out)


_OPENBLAS_THREAD_API = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


def _openblas_thread_api() -> tuple[Any, Any] | None:
    """(get, set) thread-count functions of the OpenBLAS numpy loaded, or None (other BLAS,
    other OS, anything unexpected)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = {ln.split()[-1] for ln in fh if "openblas" in ln and ".so" in ln}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _OPENBLAS_THREAD_API:
            get_fn = getattr(lib, get_name, None)
            set_fn = getattr(lib, set_name, None)
            if get_fn is not None and set_fn is not None:
                get_fn.restype = ctypes.c_int
                return get_fn, set_fn
    return None


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the block solves on one BLAS thread, and restore the count after.

    The LU solves here are 50–200 wide: far below what a multithreaded BLAS gains on, and on a
    loaded machine OpenBLAS's spinning threads made each 16× slower (measured 1.6 ms -> 26 ms
    for 125 × 125).  Uses threadpoolctl when installed, else OpenBLAS's own API via ctypes; a
    no-op where neither applies.
    """
    if _threadpool_limits is not None:
        with _threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    api = _openblas_thread_api()
    if api is None:
        yield
        return
    get_fn, set_fn = api
    old = int(get_fn())
    set_fn(ctypes.c_int(1))
    try:
        yield
    finally:
        set_fn(ctypes.c_int(max(old, 1)))


def _solve_block_tridiagonal(
    diag: np.ndarray, off_in: np.ndarray, off_out: np.ndarray, rhs: np.ndarray
) -> np.ndarray:
    """Solve the 5-point system as a block-tridiagonal one (block Thomas algorithm).

    ``diag`` (nb, m, m): diagonal blocks; ``off_out`` (nb, m): coupling of block j to j+1
    (a diagonal matrix, stored as its diagonal); ``off_in`` (nb, m): coupling of j to j−1;
    ``rhs`` (nb, m).  Exact (direct) solve: no iteration count to tune, nb·m³ flops.
    """
    nb, m = rhs.shape
    g_mat = np.empty((nb, m, m))
    g_vec = np.empty((nb, m))
    prev_g = None
    prev_v = None
    for j in range(nb):
        dj = diag[j].copy()
        rj = rhs[j].copy()
        if j > 0:
            dj -= off_in[j][:, None] * prev_g
            rj -= off_in[j] * prev_v
        sol = np.linalg.solve(dj, np.column_stack([np.diag(off_out[j]), rj]))
        # flush what decays below 1e-150 to zero: far from the strips the fill-in underflows to
        # subnormal numbers, which are ~100× slower in every later product
        sol[np.abs(sol) < 1e-150] = 0.0
        g_mat[j] = sol[:, :m]
        g_vec[j] = sol[:, m]
        prev_g, prev_v = g_mat[j], g_vec[j]
    out = np.empty((nb, m))
    out[-1] = g_vec[-1]
    for j in range(nb - 2, -1, -1):
        out[j] = g_vec[j] - g_mat[j] @ out[j + 1]
    return out


def _fd_capacitance(
    xs: np.ndarray,
    ys: np.ndarray,
    eps_cell: np.ndarray,
    fixed: np.ndarray,
    value: np.ndarray,
) -> float:
    """Energy capacitance Σ a_e ΔV_e² (in units of ε0, per unit length) of the box scheme.

    Vertex-centred grid ``xs`` × ``ys``; ``eps_cell`` (nx−1, ny−1) relative permittivity of
    each cell; ``fixed`` (nx, ny) Dirichlet nodes with potential ``value``; every other boundary
    is Neumann (a symmetry plane or a far wall).  Edge coefficients: a horizontal edge couples
    with the εr·height of the two cells beside it over its length, and so on; the discrete
    solution minimises the same discrete energy that is returned.
    """
    dx = np.diff(xs)
    dy = np.diff(ys)
    nx, ny = xs.size, ys.size
    # horizontal edges (i,j)-(i+1,j): (nx-1, ny)
    half = eps_cell * dy[None, :] * 0.5  # (nx-1, ny-1)
    ah = np.zeros((nx - 1, ny))
    ah[:, :-1] += half
    ah[:, 1:] += half
    ah /= dx[:, None]
    # vertical edges (i,j)-(i,j+1): (nx, ny-1)
    halfv = eps_cell * dx[:, None] * 0.5
    av = np.zeros((nx, ny - 1))
    av[:-1, :] += halfv
    av[1:, :] += halfv
    av /= dy[None, :]

    # blocks along the shorter axis
    transpose = nx < ny
    if transpose:
        ah, av = av.T, ah.T
        fixed, value = fixed.T, value.T
        nx, ny = ny, nx
    # now blocks are x-columns? we use rows j (ny of them is the block size m) indexed by i
    # block index i (along x, nx blocks), inside a block the index j (ny = m)
    free = ~fixed
    diag = np.zeros((nx, ny, ny))
    rhs = np.zeros((nx, ny))
    idx = np.arange(ny)
    dsum = np.zeros((nx, ny))
    dsum[:-1, :] += ah
    dsum[1:, :] += ah
    dsum[:, :-1] += av
    dsum[:, 1:] += av
    diag[:, idx, idx] = np.where(free, dsum, 1.0)
    # in-block couplings (vertical edges j-j+1), only between free nodes; fixed neighbours -> rhs
    both = free[:, :-1] & free[:, 1:]
    diag[:, idx[:-1], idx[1:]] = np.where(both, -av, 0.0)
    diag[:, idx[1:], idx[:-1]] = np.where(both, -av, 0.0)
    rhs[:, :-1] += np.where(free[:, :-1] & fixed[:, 1:], av * value[:, 1:], 0.0)
    rhs[:, 1:] += np.where(free[:, 1:] & fixed[:, :-1], av * value[:, :-1], 0.0)
    # block couplings (horizontal edges i-i+1)
    both_h = free[:-1, :] & free[1:, :]
    off_out = np.zeros((nx, ny))
    off_in = np.zeros((nx, ny))
    off_out[:-1] = np.where(both_h, -ah, 0.0)
    off_in[1:] = np.where(both_h, -ah, 0.0)
    rhs[:-1] += np.where(free[:-1] & fixed[1:], ah * value[1:], 0.0)
    rhs[1:] += np.where(free[1:] & fixed[:-1], ah * value[:-1], 0.0)
    rhs = np.where(free, rhs, value)
    with _one_blas_thread():
        v = _solve_block_tridiagonal(diag, off_in, off_out, rhs)
    energy = float(np.sum(ah * np.diff(v, axis=0) ** 2) + np.sum(av * np.diff(v, axis=1) ** 2))
    return energy


def fd_coupled(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float = 4.0,
    mask: tuple[float, float] | None = None,
    extrapolate: bool = False,
    odd_only: bool = False,
    order: float = 1.0,
) -> tuple[float, float]:
    """(even, odd) Z (Ω) of two identical strips by a 2-D finite-difference field solution.

    Cross-section: ground plane at y = 0; strips of width ``w`` and thickness ``t`` with their
    bottom face at ``y_strip``, edge-to-edge gap ``s``; dielectric slabs ``layers``; a second
    plane at ``top_plane_mm`` (stripline) or open space above (microstrip: the box is closed
    far away, ≥ 40 h).  ``mask`` = (thickness, εr) coats the substrate top and the strips
    (a conformal soldermask of uniform thickness).  Symmetry halves the problem: the odd mode
    has V = 0 on the centre plane, the even mode ∂V/∂n = 0.  Z = 1/(c·√(C·C_air)).

    The mesh is graded towards the strip corners; ``resolution`` scales its density.  The
    energy capacitance converges from above, about linearly in the mesh size, so
    ``extrapolate=True`` solves at ``resolution/2`` and ``resolution`` and returns the Richardson
    extrapolation Z(r) + (Z(r) − Z(r/2))/(2^order − 1).  ``order`` 1 assumes first-order
    convergence; the field of a rectangular conductor's 270° corner goes as ρ^(−1/3), so the
    energy error of a refined mesh falls as h^(4/3) and ``order = 4/3`` (:data:`FIELD_ORDER`) is
    the physical one: measured convergence ratios 2^1.37 … 2^1.71 over resolutions 2-4-8 (docs).
    Measured against Cohn's exact zero-thickness values (tests): resolution 4 ≈ −0.3 %,
    8 ≈ −0.15 %, 8 extrapolated ≤ 0.05 %.
    """
    if extrapolate:
        args = (w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm)
        lo = fd_coupled(*args, resolution / 2.0, mask, odd_only=odd_only)
        hi = fd_coupled(*args, resolution, mask, odd_only=odd_only)
        k = 1.0 / (2.0**order - 1.0)
        return hi[0] + k * (hi[0] - lo[0]), hi[1] + k * (hi[1] - lo[1])
    _check_pos(w_mm=w_mm, s_mm=s_mm)
    h_ref = (
        y_strip_mm if top_plane_mm is None else min(y_strip_mm, top_plane_mm - y_strip_mm - t_mm)
    )
    scale = min(w_mm, s_mm, h_ref)
    hmin = scale / (40.0 * resolution)
    x0, x1 = s_mm / 2.0, s_mm / 2.0 + w_mm
    y0, y1 = y_strip_mm, y_strip_mm + t_mm
    if top_plane_mm is None:
        y_top = y1 + 40.0 * y_strip_mm
        x_far = x1 + 40.0 * y_strip_mm
    else:
        y_top = top_plane_mm
        x_far = x1 + 12.0 * top_plane_mm
    xkeys = [0.0, x0, x1, x_far]
    ykeys = [0.0, y0, y1, y_top]
    for lay in layers:
        ykeys += [min(max(lay.y0, 0.0), y_top), min(max(lay.y1, 0.0), y_top)]
    if mask is not None:
        ykeys += [y0 + mask[0], y1 + mask[0]]
        xkeys += [x0 - mask[0], x1 + mask[0]] if x0 - mask[0] > 0 else [x1 + mask[0]]
    if top_plane_mm is not None:
        hmax = max(w_mm, s_mm, h_ref) / (2.0 * resolution)
    else:  # open box: let the mesh coarsen far from the strips
        hmax = 10.0 * h_ref / resolution
    grow = 1.0 + 0.25 / resolution
    xs = _graded(xkeys, [x0, x1], hmin, hmax, grow)
    ys = _graded(ykeys, [y0, y1], hmin, hmax, grow)

    xc = 0.5 * (xs[:-1] + xs[1:])
    yc = 0.5 * (ys[:-1] + ys[1:])
    eps = np.ones((xc.size, yc.size))
    for lay in layers:
        eps[:, (yc > lay.y0) & (yc < lay.y1)] = lay.er
    if mask is not None:
        tm, erm = mask
        sub_top = max((lay.y1 for lay in layers), default=0.0)
        cx, cy = np.meshgrid(xc, yc, indexing="ij")
        coat = (cy > sub_top) & (cy < sub_top + tm)
        coat |= (cy > y1) & (cy < y1 + tm) & (cx > x0 - tm) & (cx < x1 + tm)
        coat |= (
            (cy > y0)
            & (cy < y1 + tm)
            & (((cx > x0 - tm) & (cx < x0)) | ((cx > x1) & (cx < x1 + tm)))
        )
        eps = np.where(coat, erm, eps)

    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    on_strip = (gx >= x0 - 1e-12) & (gx <= x1 + 1e-12) & (gy >= y0 - 1e-12) & (gy <= y1 + 1e-12)
    ground = gy <= 1e-12
    if top_plane_mm is not None:
        ground |= gy >= y_top - 1e-12
    else:
        ground |= gy >= y_top - 1e-12
        ground |= gx >= x_far - 1e-12
    result = [math.nan] if odd_only else []
    for odd in (True,) if odd_only else (False, True):
        fixed = ground | on_strip
        if odd:
            fixed = fixed | (gx <= 1e-12)
        value = np.where(on_strip, 1.0, 0.0)
        c_air = _fd_capacitance(xs, ys, np.ones_like(eps), fixed, value)
        if np.all(eps == eps.flat[0]):  # homogeneous: C = εr·C_air exactly
            c_die = float(eps.flat[0]) * c_air
        else:
            c_die = _fd_capacitance(xs, ys, eps, fixed, value)
        # per strip, per unit length: C = ε0·energy (half domain holds one strip)
        result.append(1.0 / (C0 * EPS0 * math.sqrt(c_die * c_air)))
    return result[0], result[1]


# =============================================================================================
# Geometry from the board
# =============================================================================================

#: typical soldermask εr when the stack-up gives a mask thickness but no εr (KiCad's default)
DEFAULT_MASK_ER = 3.3
#: a layer where the pair's P/N run parallel over less than this is fan-out, not routing
MIN_COUPLED_MM = 0.5
#: segments within this angle count as parallel
_PARALLEL_SIN = math.sin(math.radians(10.0))
#: two parallel segments farther apart than max(this × width, 0.5 mm) edge to edge are not coupled
_MAX_GAP_WIDTHS = 5.0
#: most item uuids a pair row keeps (as many as a finding lists)
MAX_ITEMS = 200
#: most candidate (P, N) segment pairs evaluated at once (bounds memory on dense clusters)
_CAND_BLOCK = 1 << 18
#: a box covering more grid cells than this is joined by brute force (a long diagonal run)
_GRID_MAX_CELLS = 64
#: below this many couples a box join compares every couple (cheaper than building a grid)
_SMALL_JOIN = 4096
#: segments per batch of :func:`measure_pairs` in :func:`pair_table` (bounds temporaries, ~50 MB)
_BATCH_ROWS = 1 << 17
#: direction sectors of the parallel-segment search (12° each: > the 10° parallel tolerance)
_SECTORS = 15
#: N pieces within this much (mm) of a P segment's nearest partner distance count as coupled
_SAME_OFFSET_MM = 1e-3
#: slack (mm) added to the candidate search radius, far above float rounding
_REACH_MARGIN = 1e-3
#: decimals (mm) every field-solver length is rounded to: 0.1 µm, far below fab tolerance
GEOMETRY_ROUND_DECIMALS = 4
#: production mesh of the field solver: resolutions 0.5 and 1, extrapolated (≈ 20 ms a geometry)
FIELD_RESOLUTION = 1.0
#: Richardson order: the energy error near a 270° conductor corner falls as h^(4/3)
FIELD_ORDER = 4.0 / 3.0
#: largest |error| (%) of the production setting against the fine-mesh reference (docs)
FIELD_ACCURACY_PCT = 0.4

METHOD_STRIPLINE = "coupled stripline: Cohn 1955 (exact at t=0) + thickness correction"
METHOD_OFFSET = "offset coupled stripline: parallel halves on Cohn 1955 + thickness correction"
METHOD_MS_FIELD = "edge-coupled microstrip: 2-D field solver (finite differences, quasi-static)"
METHOD_SL_FIELD = "edge-coupled stripline: 2-D field solver (finite differences, quasi-static)"
METHOD_MS_KJ = (
    "edge-coupled microstrip: Kirschning-Jansen 1984 (static, t=0) + thickness as capacitance "
    "increments"
)

#: measured on 36 random cross-sections (microstrip bare and under mask, offset stripline with
#: two εr) against the solver at a 4× finer mesh, Richardson-extrapolated (docs/impedance.md)
_FIELD_ACCURACY = (
    f"within {FIELD_ACCURACY_PCT:g} % of a fine-mesh 2-D field solution (docs/impedance.md)"
)

ACCURACY = {
    METHOD_STRIPLINE: "within 2.1 % of a 2-D field solution (1.6 % for w/b >= 0.2); exact at t = 0",
    METHOD_OFFSET: "within 2.1 % of a 2-D field solution for h_far/h_near <= 4",
    METHOD_MS_FIELD: _FIELD_ACCURACY + "; mask as a conformal coat",
    METHOD_SL_FIELD: _FIELD_ACCURACY,
    METHOD_MS_KJ: "within 2.0 % of a 2-D field solution (w/h 0.5-2, s/h 0.3-8, t/h <= 0.35); "
    "soldermask not included",
}


@dataclass(frozen=True)
class LayerStack:
    """What the impedance of a trace on one copper layer depends on, read from the stack-up.

    ``structure`` is ``microstrip`` (outer layer over a plane) or ``stripline`` (between two
    planes).  ``h_below_mm``/``er_below``: dielectric between the trace's bottom face and the
    plane below (for a B.Cu microstrip: between its top face and the plane above — the side
    towards the plane is always "below" here); ``h_above_mm``/``er_above`` the other side (stripline
    only).  εr is thickness-weighted over the dielectric slices in between.  ``missing`` lists what
    the stack-up does not declare (so the value cannot be computed).
    """

    layer: int
    layer_name: str
    structure: str
    t_mm: float | None
    h_below_mm: float | None
    er_below: float | None
    h_above_mm: float | None = None
    er_above: float | None = None
    references: tuple[str, ...] = ()
    mask: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    dielectrics: tuple[str, ...] = ()  # names of the dielectrics between the layer and its planes
    mask_er_declared: bool = True  # False when the mask εr is the assumed default


def _side_dielectrics(
    stack: Any, pos: int, step: int, planes: frozenset[int]
) -> tuple[list[Any], list[Any], Any | None, bool]:
    """Walk the stack-up from stack position ``pos`` in direction ``step``: (dielectrics,
    intermediate copper layers, the reference copper layer or None, whether it is a known plane).
    Stops at the first plane layer; when no plane lies that way, the adjacent copper layer is
    taken as the reference (and the caller says it assumed so)."""
    layers = stack.layers
    diel: list[Any] = []
    copper: list[Any] = []
    first_copper = None
    first_diel: list[Any] = []
    i = pos + step
    while 0 <= i < len(layers):
        sl = layers[i]
        if sl.is_copper:
            if sl.copper_index in planes:
                return diel, copper, sl, True
            if first_copper is None:
                first_copper = sl
                first_diel = list(diel)
            copper.append(sl)
        elif sl.is_dielectric:
            diel.append(sl)
        i += step
    return first_diel, [], first_copper, False


def _slices(layer: Any) -> list[tuple[float | None, float | None, str]]:
    """(thickness, εr, name) of every slice of a dielectric (``addsublayer`` splits it)."""
    if layer.sublayers:
        return [(s.thickness_mm, s.epsilon_r, layer.name) for s in layer.sublayers]
    return [(layer.thickness_mm, layer.epsilon_r, layer.name)]


def _height_er(
    diel: Sequence[Any], copper: Sequence[Any], missing: list[str]
) -> tuple[float | None, float | None]:
    """Total height (dielectrics + intermediate copper) and thickness-weighted εr."""
    h = 0.0
    weighted = 0.0
    wsum = 0.0
    ok = True
    for layer in diel:
        for th, er, name in _slices(layer):
            if th is None:
                missing.append(f"thickness of {name}")
                ok = False
                continue
            if th <= 0.0:  # a broken stack-up, not a geometry: unknown, never a crash
                missing.append(f"a positive thickness of {name} (the stack-up says {th:g} mm)")
                ok = False
                continue
            if er is None or er <= 0.0:
                missing.append(
                    f"epsilon_r of {name}"
                    if er is None
                    else f"a positive epsilon_r of {name} (the stack-up says {er:g})"
                )
                ok = False
            else:
                weighted += er * th
                wsum += th
            h += th
    for layer in copper:
        if layer.thickness_mm is None:
            missing.append(f"thickness of {layer.name}")
            ok = False
        else:
            h += layer.thickness_mm
    if not ok or h <= 0.0 or wsum <= 0.0:
        if not diel:
            missing.append("a dielectric between the layer and its reference plane")
        elif ok:
            missing.append("a dielectric of positive height between the layer and its plane")
        return None, None
    # round off float noise (3.6·0.15/0.15 = 3.6000000000000005) far below any data's precision
    return round(h, 9), round(weighted / wsum, 9)


def layer_stack(board: Any, layer: int, planes: Any) -> LayerStack:
    """Microstrip/stripline geometry of copper layer ``layer`` from the board's stack-up.

    Reference planes (the rule, shared with ``laminate_df``): walking away from the layer, the
    first copper layer that carries a plane — typed ``power`` in KiCad, or filled over ≥ 25 % of
    the board by zones of a ground/supply net (``Analysis.plane_layers``).  When no such layer
    lies on a side, the adjacent copper layer is assumed to be the reference, and a note says so.
    An outer layer is a microstrip over the plane below it (B.Cu: above it); an inner layer is a
    stripline between the planes above and below.
    """
    name = board.copper_layers[layer].name
    stack = board.stackup
    if stack is None or not stack.layers:
        return LayerStack(layer, name, "unknown", None, None, None, missing=("the stack-up",))
    pos = next(
        (i for i, sl in enumerate(stack.layers) if sl.is_copper and sl.copper_index == layer), None
    )
    if pos is None:
        return LayerStack(
            layer, name, "unknown", None, None, None, missing=(f"{name} in the stack-up",)
        )
    plane_set = frozenset(int(k) for k in (planes or {}))
    own = stack.layers[pos]
    missing: list[str] = []
    notes: list[str] = []
    t = own.thickness_mm
    if t is None:
        missing.append(f"copper thickness of {name}")
    n = board.layer_count
    outer = layer in (0, n - 1)
    sides = []
    diel_names: list[str] = []
    mask_er_declared = True
    for step in (1,) if layer == 0 else (-1,) if layer == n - 1 else (-1, 1):
        diel, copper, ref, known = _side_dielectrics(stack, pos, step, plane_set)
        if ref is None:
            missing.append(f"a reference plane {'above' if step < 0 else 'below'} {name}")
            sides.append((None, None, ""))
            continue
        if not known:
            notes.append(
                f"no plane detected on {ref.name}: assumed to be the reference "
                f"{'above' if step < 0 else 'below'} {name}"
            )
        h, er = _height_er(diel, copper, missing)
        sides.append((h, er, ref.name))
        diel_names.extend(d.name for d in diel)
    mask = None
    if outer:
        mask_layer = None
        j = pos - 1 if layer == 0 else pos + 1
        while 0 <= j < len(stack.layers):
            sl = stack.layers[j]
            if sl.kind == "soldermask":
                mask_layer = sl
                break
            if sl.is_copper or sl.is_dielectric:
                break
            j += -1 if layer == 0 else 1
        if mask_layer is not None and mask_layer.thickness_mm:
            er_m = mask_layer.epsilon_r
            if er_m is None:
                er_m = DEFAULT_MASK_ER
                mask_er_declared = False
                notes.append(f"{mask_layer.name}: no epsilon_r declared, {DEFAULT_MASK_ER} assumed")
            mask = (float(mask_layer.thickness_mm), float(er_m))
        else:
            notes.append("no soldermask in the stack-up: computed uncoated")
        h, er, ref = sides[0]
        return LayerStack(
            layer,
            name,
            "microstrip",
            t,
            h,
            er,
            references=(ref,) if ref else (),
            mask=mask,
            notes=tuple(notes),
            missing=tuple(dict.fromkeys(missing)),
            dielectrics=tuple(diel_names),
            mask_er_declared=mask_er_declared,
        )
    (ha, era, refa), (hb, erb, refb) = sides
    return LayerStack(
        layer,
        name,
        "stripline",
        t,
        hb,
        erb,
        h_above_mm=ha,
        er_above=era,
        references=tuple(r for r in (refa, refb) if r),
        notes=tuple(notes),
        missing=tuple(dict.fromkeys(missing)),
        dielectrics=tuple(diel_names),
    )


# ---------------------------------------------------------------------------------------------
# Width and gap of a routed pair, from its tracks
# ---------------------------------------------------------------------------------------------


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The value below which half the total weight lies (lower median on an exact tie)."""
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=float)[order]
    w = np.asarray(weights, dtype=float)[order]
    cum = np.cumsum(w)
    k = int(np.searchsorted(cum, 0.5 * cum[-1], side="left"))
    return float(v[min(k, v.size - 1)])


@dataclass(frozen=True)
class PairTraces:
    """Measured width and gap of one pair on one layer.

    ``width_mm``: length-weighted median width of both nets' segments on the layer.
    ``gap_mm``: median edge-to-edge spacing between parallel P and N segments, weighted by the
    length over which they run side by side; ``coupled_mm`` is that length.
    """

    width_mm: float | None
    gap_mm: float | None
    coupled_mm: float
    length_mm: float
    pos: tuple[float, float] | None
    items: tuple[str, ...]  # uuids of the segments given (pair_table keeps them on its rows)
    stretch_mm: float = 0.0  # longest contiguous run of one net with no partner alongside


def _ranges(lo: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(lo[i], lo[i] + cnt[i])`` over i, without a Python loop."""
    cnt = np.asarray(cnt, dtype=np.int64)
    return np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt - lo, cnt)


def _boxes_meet(
    alo: np.ndarray,
    ahi: np.ndarray,
    blo: np.ndarray,
    bhi: np.ndarray,
    ii: np.ndarray,
    jj: np.ndarray,
) -> np.ndarray:
    """Mask of the couples (a[ii], b[jj]) whose closed boxes intersect."""
    return (
        (alo[ii, 0] <= bhi[jj, 0])
        & (blo[jj, 0] <= ahi[ii, 0])
        & (alo[ii, 1] <= bhi[jj, 1])
        & (blo[jj, 1] <= ahi[ii, 1])
    )


def box_pairs(
    alo: np.ndarray,
    ahi: np.ndarray,
    blo: np.ndarray,
    bhi: np.ndarray,
    a_group: np.ndarray | None = None,
    b_group: np.ndarray | None = None,
    block: int = _CAND_BLOCK,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(i, j) index arrays of the boxes ``a[i]``, ``b[j]`` (closed, (n, 2) corners) that
    intersect and belong to the same group (``a_group``/``b_group``: non-decreasing ints; all
    one group when omitted), in blocks of about ``block`` couples.

    Every such couple is yielded at least once (a couple of two long boxes comes twice, from
    both long-box passes: callers must not count them).  A uniform grid joins the boxes (cell =
    the median box extent, keyed by group and cell): each box is listed in every cell it covers,
    the b entries sorted by key, the a entries looked up with ``searchsorted``, and a couple is
    kept only in the cell holding the low corner of the two boxes' intersection; a box covering more
    than ``_GRID_MAX_CELLS`` cells (a long diagonal run) is compared with every box of its group
    instead.  Work and memory are linear in the boxes plus the couples that lie near each other,
    never na × nb.
    """
    na, nb = len(alo), len(blo)
    if na == 0 or nb == 0:
        return
    ag = np.zeros(na, np.int64) if a_group is None else np.asarray(a_group, np.int64)
    bg = np.zeros(nb, np.int64) if b_group is None else np.asarray(b_group, np.int64)
    if na * nb <= _SMALL_JOIN:  # a short pair: every couple, no grid to build
        ii = np.repeat(np.arange(na, dtype=np.int64), nb)
        jj = np.tile(np.arange(nb, dtype=np.int64), na)
        hit = _boxes_meet(alo, ahi, blo, bhi, ii, jj) & (ag[ii] == bg[jj])
        if hit.any():
            yield ii[hit], jj[hit]
        return
    lo_all = np.minimum(alo.min(axis=0), blo.min(axis=0))
    hi_all = np.maximum(ahi.max(axis=0), bhi.max(axis=0))
    ext_a = (ahi - alo).max(axis=1)
    ext_b = (bhi - blo).max(axis=1)
    cell = max(
        float(np.median(ext_a)),
        float(np.median(ext_b)),
        float((hi_all - lo_all).max()) / 4096.0,
        1e-6,
    )
    ncx, ncy = (np.floor((hi_all - lo_all) / cell).astype(np.int64) + 1).tolist()

    def cells(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i0 = np.floor((lo - lo_all) / cell).astype(np.int64)
        n = np.floor((hi - lo_all) / cell).astype(np.int64) - i0 + 1
        return i0, n[:, 0], n[:, 1]

    def entries(
        sel: np.ndarray, g: np.ndarray, i0: np.ndarray, nx: np.ndarray, ny: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        cnt = nx[sel] * ny[sel]
        box = np.repeat(sel, cnt)
        k = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        nxb = nx[box]
        return box, (g[box] * ncx + i0[box, 0] + k % nxb) * ncy + (i0[box, 1] + k // nxb)

    a0, anx, any_ = cells(alo, ahi)
    b0, bnx, bny = cells(blo, bhi)
    a_big = anx * any_ > _GRID_MAX_CELLS
    b_big = bnx * bny > _GRID_MAX_CELLS
    a_box, a_key = entries(np.flatnonzero(~a_big), ag, a0, anx, any_)
    b_box, b_key = entries(np.flatnonzero(~b_big), bg, b0, bnx, bny)
    order = np.argsort(b_key, kind="stable")
    b_key, b_box = b_key[order], b_box[order]
    first = np.searchsorted(b_key, a_key, side="left")
    cnt = np.searchsorted(b_key, a_key, side="right") - first
    cum = np.cumsum(cnt)
    e = 0
    while e < len(a_key):  # blocks of a entries holding about ``block`` couples
        before = int(cum[e - 1]) if e else 0
        f = max(int(np.searchsorted(cum, before + block, side="right")), e + 1)
        ii = np.repeat(a_box[e:f], cnt[e:f])
        jj = b_box[_ranges(first[e:f], cnt[e:f])]
        if ii.size:
            # two boxes share every cell their intersection covers: keep the couple only in
            # the cell of the intersection's low corner, so each comes once (no dedupe sort)
            corner = np.floor((np.maximum(alo[ii], blo[jj]) - lo_all) / cell).astype(np.int64)
            key = (ag[ii] * ncx + corner[:, 0]) * ncy + corner[:, 1]
            hit = (key == np.repeat(a_key[e:f], cnt[e:f])) & _boxes_meet(alo, ahi, blo, bhi, ii, jj)
            if hit.any():
                yield ii[hit], jj[hit]
        e = f
    # long boxes: against every box of the other side in the same group
    for big, g_big, g_other, swap in (
        (np.flatnonzero(a_big), ag, bg, False),
        (np.flatnonzero(b_big), bg, ag, True),
    ):
        if not big.size:
            continue
        lo = np.searchsorted(g_other, g_big[big], side="left")
        n = np.searchsorted(g_other, g_big[big], side="right") - lo
        step = max(1, block // max(int(n.max()), 1))
        for s in range(0, big.size, step):
            ii = np.repeat(big[s : s + step], n[s : s + step])
            jj = _ranges(lo[s : s + step], n[s : s + step])
            if swap:
                ii, jj = jj, ii
            hit = _boxes_meet(alo, ahi, blo, bhi, ii, jj)
            if hit.any():
                yield ii[hit], jj[hit]


def _sector(d: np.ndarray) -> np.ndarray:
    """Direction sector (0 .. _SECTORS - 1, each 180°/_SECTORS wide) of unit vectors ``d``."""
    ang = np.mod(np.arctan2(d[:, 1], d[:, 0]), np.pi)
    return np.minimum((ang * (_SECTORS / np.pi)).astype(np.int64), _SECTORS - 1)


def measure_pairs(
    start: np.ndarray,
    end: np.ndarray,
    width: np.ndarray,
    is_p: np.ndarray,
    bounds: Sequence[int],
    uuids: Sequence[Sequence[str]] | None = None,
) -> list[PairTraces]:
    """:func:`measure_pair` of many pair-layers at once: group g is rows
    ``bounds[g]:bounds[g + 1]``; the result of each group is exactly what
    :func:`measure_pair` gives for its rows alone (same arithmetic, same tie-breaks), but the
    near-segment search runs once for the board, not once per pair.

    For each P segment, every N segment of its group that is parallel (within 10°), overlaps
    it along its direction, and lies within max(5·w, 0.5 mm) edge to edge (w: the group's
    median width) is a candidate; the nearest (smallest distance from the P line to the N
    midpoint, the first in row order on a tie) is its partner.  Only couples whose boxes come
    within reach are evaluated (:func:`box_pairs`): a qualifying N segment has a point within
    ``limit + (w_P + w_N)/2 + L_N·sin 10°/2`` of the P segment, so its box grown by that much
    meets the P segment's box.  A serpentine-tuned pair costs linear time, not (segments)².
    """
    start = np.asarray(start, dtype=float).reshape(-1, 2)
    end = np.asarray(end, dtype=float).reshape(-1, 2)
    width = np.asarray(width, dtype=float)
    is_p = np.asarray(is_p, dtype=bool)
    bnd = np.asarray(bounds, dtype=np.int64)
    n_groups = len(bnd) - 1
    vec = end - start
    length = np.hypot(vec[:, 0], vec[:, 1])
    group = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(bnd))
    limit = np.zeros(n_groups)
    head: list[tuple[Any, ...]] = []
    for g in range(n_groups):
        lo, hi = int(bnd[g]), int(bnd[g + 1])
        items = tuple(u for u in uuids[g] if u) if uuids is not None else ()
        if hi == lo:
            head.append((None, 0.0, None, items))
            continue
        ln = length[lo:hi].copy()
        total = float(ln.sum()) / 2.0
        w_med = weighted_median(width[lo:hi], np.maximum(ln, 1e-9))
        k = lo + int(np.argmax(ln))
        pos = (
            round(float(0.5 * (start[k, 0] + end[k, 0])), 4),
            round(float(0.5 * (start[k, 1] + end[k, 1])), 4),
        )
        limit[g] = max(_MAX_GAP_WIDTHS * w_med, 0.5)
        head.append((w_med, total, pos, items))
    p = np.flatnonzero(is_p & (length > 1e-9))
    q = np.flatnonzero(~is_p & (length > 1e-9))
    found: list[tuple[np.ndarray, ...]] = []
    if p.size and q.size:
        dp = vec[p] / length[p, None]  # (P, 2) unit directions
        dn = vec[q] / length[q, None]  # (N, 2)
        mid_n = 0.5 * (start[q] + end[q])
        reach = (
            limit[group[q]]
            + 0.5 * (float(width[p].max()) + width[q])
            + 0.5 * length[q] * _PARALLEL_SIN
            + _REACH_MARGIN
        )
        n_lo = np.minimum(start[q], end[q]) - reach[:, None]
        n_hi = np.maximum(start[q], end[q]) + reach[:, None]
        p_lo = np.minimum(start[p], end[p])
        p_hi = np.maximum(start[p], end[p])
        # direction sectors: a couple within 10° of parallel lies in the same or a neighbouring
        # 12° sector (mod 180°), so each P box is joined with 3 sectors of N boxes only and the
        # crossing legs of a serpentine never become candidates
        bin_p = _sector(dp)
        bin_n = _sector(dn)
        nb_order = np.argsort(group[q] * _SECTORS + bin_n, kind="stable")
        copies = np.concatenate([(bin_p + k) % _SECTORS for k in (-1, 0, 1)])
        a_key = np.tile(group[p], 3) * _SECTORS + copies
        na_order = np.argsort(a_key, kind="stable")
        a_src = np.tile(np.arange(p.size, dtype=np.int64), 3)[na_order]
        for ia, jb in box_pairs(
            p_lo[a_src],
            p_hi[a_src],
            n_lo[nb_order],
            n_hi[nb_order],
            a_key[na_order],
            (group[q] * _SECTORS + bin_n)[nb_order],
        ):
            i, j = a_src[ia], nb_order[jb]
            pc, qc = p[i], q[j]
            d = dp[i]
            cross = np.abs(d[:, 0] * dn[j, 1] - d[:, 1] * dn[j, 0])
            rel = mid_n[j] - start[pc]
            dist = np.abs(d[:, 0] * rel[:, 1] - d[:, 1] * rel[:, 0])
            a = np.einsum("ck,ck->c", d, start[qc] - start[pc])
            b = np.einsum("ck,ck->c", d, end[qc] - start[pc])
            overlap = np.minimum(np.maximum(a, b), length[pc]) - np.maximum(np.minimum(a, b), 0.0)
            edge = dist - 0.5 * (width[pc] + width[qc])
            ok = np.flatnonzero(
                (cross <= _PARALLEL_SIN)
                & (overlap > 1e-6)
                & (edge > 0.0)
                & (edge <= limit[group[pc]])
            )
            if ok.size:
                found.append((i[ok], j[ok], dist[ok], edge[ok], overlap[ok]))
    gaps_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    coupled_of: dict[int, float] = {}
    # uncoupled length of every segment (P: its length minus the partners' overlap; N: its
    # length unless it is some P segment's partner); filled below when there are couples
    free = length.copy()
    if found:
        i, j, dist, edge, overlap = (np.concatenate(c) for c in zip(*found))
        # nearest partner of each P segment: by P, then distance, then N row order
        order = np.lexsort((j, dist, i))
        io = i[order]
        keep = np.ones(order.size, dtype=bool)
        keep[1:] = io[1:] != io[:-1]
        best = order[keep]  # ascending P row, as the per-pair search finds them
        g_best = group[p[i[best]]]
        cuts = np.flatnonzero(np.diff(g_best)) + 1
        for sl in np.split(np.arange(best.size), cuts):
            sel = best[sl]
            gaps_of[int(g_best[sl[0]])] = (edge[sel], overlap[sel])
        # coupled length: a long P segment beside several N pieces at the same offset (an N
        # with a tuning bump, split by a via) is coupled along all of them, not just the first;
        # every distinct couple within 1 µm of the P segment's nearest distance counts, capped
        # at the P segment's length
        dmin = np.full(p.size, np.inf)
        dmin[i[best]] = dist[best]  # the nearest partner's distance, per P segment
        # a couple may come twice from the join (two long boxes): in ``order`` (by P, distance,
        # N) the copies are neighbours, so each is counted once without another sort
        jo = j[order]
        first = keep.copy()
        first[1:] |= jo[1:] != jo[:-1]
        sel_n = order[first & (dist[order] <= dmin[io] + _SAME_OFFSET_MM)]
        ui, ov = i[sel_n], overlap[sel_n]
        per_p = np.minimum(np.bincount(ui, weights=ov, minlength=p.size), length[p])
        has = np.bincount(ui, minlength=p.size) > 0
        per_group = np.bincount(group[p[has]], weights=per_p[has], minlength=n_groups)
        coupled_of = {
            int(g): float(per_group[g])
            for g in np.flatnonzero(np.bincount(group[p[has]], minlength=n_groups)).tolist()
        }
        free[p] = length[p] - per_p
        partnered = np.zeros(q.size, dtype=bool)
        partnered[j] = True  # an N segment with a parallel P within reach
        free[q[partnered]] = 0.0
    stretch = _longest_free_stretch(start, end, length, free, is_p, group, n_groups)
    out: list[PairTraces] = []
    for g, (w_med, total, pos, items) in enumerate(head):
        got = gaps_of.get(g)
        if w_med is None:
            out.append(PairTraces(None, None, 0.0, 0.0, None, items))
        elif got is None:
            out.append(PairTraces(w_med, None, 0.0, total, pos, items, float(stretch[g])))
        else:
            gaps, weights = got
            gap = weighted_median(gaps, weights)
            out.append(
                PairTraces(w_med, gap, coupled_of.get(g, 0.0), total, pos, items, float(stretch[g]))
            )
    return out


def _longest_free_stretch(
    start: np.ndarray,
    end: np.ndarray,
    length: np.ndarray,
    free: np.ndarray,
    is_p: np.ndarray,
    group: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """Per group, the longest chain of one net's mostly uncoupled segments (more than half of
    each segment's length without a partner alongside) joined end to end (to 1 µm): the
    contiguous stretch where P and N do not run together, its uncoupled length summed.
    Connected components by min-label hooking and pointer jumping (numpy, O(log n) rounds)."""
    out = np.zeros(n_groups)
    sel = np.flatnonzero((free > 0.5 * length) & (length > 1e-9))
    if not sel.size:
        return out
    n = sel.size
    # endpoints (group, net side, x, y in µm) of both ends; equal neighbours after a sort join
    # their segments
    pts = np.round(np.concatenate([start[sel], end[sel]]) * 1000.0).astype(np.int64)
    gs = np.concatenate([group[sel], group[sel]]).astype(np.int64)
    ps = np.concatenate([is_p[sel], is_p[sel]]).astype(np.int64)
    seg = np.concatenate([np.arange(n), np.arange(n)])
    order = np.lexsort((pts[:, 1], pts[:, 0], ps, gs))
    k = np.column_stack([gs, ps, pts])[order]
    same = np.all(k[1:] == k[:-1], axis=1)
    u, v = seg[order][:-1][same], seg[order][1:][same]
    # connected components: hook every segment to its smallest neighbour label, then jump
    # pointers to the root, until nothing changes (O(log n) rounds on chains)
    label = np.arange(n)
    while u.size:
        lu, lv = label[u], label[v]
        lo = np.minimum(lu, lv)
        new_label = label.copy()
        np.minimum.at(new_label, lu, lo)
        np.minimum.at(new_label, lv, lo)
        while True:
            jumped = new_label[new_label]
            if np.array_equal(jumped, new_label):
                break
            new_label = jumped
        if np.array_equal(new_label, label):
            break
        label = new_label
    sums = np.bincount(label, weights=free[sel], minlength=n)
    roots = np.flatnonzero(sums > 0.0)
    np.maximum.at(out, group[sel][roots], sums[roots])
    return out


def measure_pair(
    start: np.ndarray,
    end: np.ndarray,
    width: np.ndarray,
    is_p: np.ndarray,
    uuids: Sequence[str] = (),
) -> PairTraces:
    """Width and gap of a pair from its segments on one layer (vectorised, near P × N only).

    For each P segment, every N segment that is parallel (within 10°), overlaps it along its
    direction, and lies within max(5·w, 0.5 mm) edge to edge is a candidate; the nearest is its
    partner.  Fan-out segments that are not parallel to any N segment are ignored for the gap.
    Arcs come in as their chords.  (:func:`measure_pairs` with one group.)
    """
    n = len(np.asarray(width).reshape(-1))
    return measure_pairs(start, end, width, is_p, [0, n], [uuids])[0]


# ---------------------------------------------------------------------------------------------
# Pair impedance table
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairImpedance:
    """One differential pair on one copper layer: its measured geometry and Zdiff."""

    pair: str
    positive: int
    negative: int
    layer: int
    layer_name: str
    net_class: str
    width_mm: float | None
    gap_mm: float | None
    width_source: str  # tracks | net class
    gap_source: str  # tracks | net class | none
    coupled_mm: float
    length_mm: float
    stack: LayerStack
    zdiff_ohm: float | None = None
    method: str | None = None
    accuracy: str | None = None
    closed_form_ohm: float | None = None  # the closed form's value where the field solver ran
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    pos: tuple[float, float] | None = None
    items: tuple[str, ...] = ()  # the first MAX_ITEMS segment uuids (what a finding lists)
    footprint: str | None = None  # the footprint whose pad field holds >= 90 % of the row
    stretch_mm: float = 0.0  # longest contiguous stretch of one net with no partner alongside
    width_basis: str = "measured"  # measured | declared | default (basis.py vocabulary)
    gap_basis: str = "measured"
    stack_basis: tuple[tuple[str, str], ...] = ()  # (input, basis) of h, epsilon_r, t, mask

    @property
    def uncoupled_mm(self) -> float:
        """Length of the pair on this layer (mean of P and N) not running side by side."""
        return max(self.length_mm - self.coupled_mm, 0.0)

    @property
    def routed(self) -> bool:
        """Routed as a pair on this layer (not just a fan-out stub to a via)."""
        return self.coupled_mm >= MIN_COUPLED_MM


def field_cross_section(
    stack: LayerStack, w_mm: float, s_mm: float
) -> tuple[tuple[Any, ...], tuple[float, float] | None]:
    """The :func:`fd_coupled` arguments ``(w, s, t, y_strip, layers, top_plane)`` and the mask of
    a pair of width ``w`` and gap ``s`` on ``stack``, every length rounded to 0.1 µm.

    Stripline: the strips sit on the lower dielectric (h_below, εr_below) and the upper one
    (h_above, εr_above) fills the rest; across the copper's own thickness the boundary between
    the two εr is taken at mid-thickness (the resin that fills the gap between the strips is the
    neighbouring prepreg's; with 18–35 µm copper the choice moves Zdiff by < 0.3 %, docs).
    Microstrip: one substrate below, air above, the soldermask a conformal coat.
    """
    r = GEOMETRY_ROUND_DECIMALS
    w, s, t = round(w_mm, r), round(s_mm, r), round(stack.t_mm or 0.0, r)
    hb, erb = stack.h_below_mm, stack.er_below
    assert hb is not None and erb is not None
    hb = round(hb, r)
    if stack.structure == "stripline":
        ha, era = stack.h_above_mm, stack.er_above
        assert ha is not None and era is not None
        top = round(hb + t + round(ha, r), r)
        mid = hb + 0.5 * t
        if abs(era - erb) < 1e-9:
            layers: tuple[FdLayer, ...] = (FdLayer(0.0, top, erb),)
        else:
            layers = (FdLayer(0.0, mid, erb), FdLayer(mid, top, era))
        return (w, s, t, hb, layers, top), None
    return (w, s, t, hb, (FdLayer(0.0, hb, erb),), None), stack.mask


def field_zdiff(
    stack: LayerStack, w_mm: float, s_mm: float, resolution: float = FIELD_RESOLUTION
) -> float:
    """Zdiff (Ω) of the pair by the 2-D field solver at the production setting: meshes
    ``resolution/2`` and ``resolution``, Richardson-extrapolated with the corner-singularity
    order 4/3 (:data:`FIELD_ORDER`).  Accuracy measured against the fine-mesh reference in
    ``docs/impedance.md`` (:data:`FIELD_ACCURACY_PCT`)."""
    args, mask = field_cross_section(stack, w_mm, s_mm)
    zo = fd_coupled(
        *args, resolution=resolution, mask=mask, extrapolate=True, odd_only=True, order=FIELD_ORDER
    )[1]
    return 2.0 * zo


def closed_form_zdiff(stack: LayerStack, w_mm: float, s_mm: float) -> tuple[float, str]:
    """(Zdiff Ω, method) by the closed forms: the cross-check beside every field solution."""
    t = stack.t_mm or 0.0
    if stack.structure == "stripline":
        ha, hb = stack.h_above_mm, stack.h_below_mm
        era, erb = stack.er_above, stack.er_below
        assert ha is not None and hb is not None and era is not None and erb is not None
        b = ha + t + hb
        if abs(ha - hb) <= 0.01 * b and abs(era - erb) <= 0.01 * max(era, erb):
            return 2.0 * coupled_stripline(w_mm, s_mm, b, t, 0.5 * (era + erb))[1], METHOD_STRIPLINE
        return 2.0 * offset_coupled_stripline(w_mm, s_mm, ha, hb, t, era, erb)[1], METHOD_OFFSET
    h, er = stack.h_below_mm, stack.er_below
    assert h is not None and er is not None
    return 2.0 * coupled_microstrip(w_mm, s_mm, h, t, er)[1], METHOD_MS_KJ


def zdiff_of(
    stack: LayerStack,
    w_mm: float,
    s_mm: float,
    cache: dict[Any, Any] | None = None,
    field_solver: bool = True,
) -> tuple[float, str, float | None, tuple[str, ...]]:
    """(Zdiff Ω, method, closed-form Zdiff where the field solver was used, notes).

    Every structure — microstrip (with the soldermask the stack-up declares), symmetric and
    offset stripline, one εr or two — is field-solved (:func:`field_zdiff`), once per distinct
    cross-section: ``cache`` is keyed by the structure, heights, εr, copper, mask, width and gap
    rounded to 0.1 µm (far below what a fab holds: ±10 % of the width), so the hundredth pair of
    a geometry costs a dictionary look-up and the result never depends on how many other pairs
    the board has (there is no budget).  The closed form is returned alongside as a cross-check;
    ``field_solver=False`` returns the closed form alone (tests, comparisons).
    """
    notes: list[str] = []
    cf, cf_method = closed_form_zdiff(stack, w_mm, s_mm)
    if not field_solver:
        if stack.structure == "microstrip" and stack.mask is not None:
            notes.append("soldermask not included in the closed form (it lowers Zdiff by 1-5 %)")
        return cf, cf_method, None, tuple(notes)
    args, mask = field_cross_section(stack, w_mm, s_mm)
    key = (stack.structure, args[:4], args[4], args[5], mask)
    method = METHOD_MS_FIELD if stack.structure == "microstrip" else METHOD_SL_FIELD
    if cache is not None and key in cache:
        return cache[key], method, cf, ()
    z = field_zdiff(stack, w_mm, s_mm)
    if cache is not None:
        cache[key] = z
    return z, method, cf, ()


def _first_uuids(uuids: Sequence[str], rows: np.ndarray, n_uuid: int) -> list[str]:
    """The first :data:`MAX_ITEMS` non-empty uuids of track ``rows``: all a finding lists.

    The reader keeps uuids as spans of the board text, decoded one by one on access; decoding
    every segment of every pair (1.5 M on a 279 MB board) cost more than measuring them."""
    out: list[str] = []
    for lo in range(0, len(rows), 2 * MAX_ITEMS):
        for i in rows[lo : lo + 2 * MAX_ITEMS].tolist():
            if i < n_uuid:
                u = uuids[i]
                if u:
                    out.append(u)
                    if len(out) >= MAX_ITEMS:
                        return out
    return out


class _ItemUuids(Sequence):
    """The first :data:`MAX_ITEMS` non-empty uuids of some track rows, decoded when first read
    (only rows that become findings ever are): a tuple-like stand-in for ``items``."""

    def __init__(self, uuids: Sequence[str], rows: np.ndarray, n_uuid: int) -> None:
        self._src: tuple[Sequence[str], np.ndarray, int] | None = (uuids, rows, n_uuid)
        self._got: tuple[str, ...] = ()

    def _items(self) -> tuple[str, ...]:
        if self._src is not None:
            self._got = tuple(_first_uuids(*self._src))
            self._src = None
        return self._got

    def __len__(self) -> int:
        return len(self._items())

    def __getitem__(self, i):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN204
        return self._items()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (_ItemUuids, tuple, list)):
            return self._items() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items())

    def __repr__(self) -> str:
        return repr(self._items())


def _pair_rows_of(index: Any, layer: np.ndarray, pos: int, neg: int) -> dict[int, np.ndarray]:
    """Track rows of the pair's two nets, by layer, each in ascending row order (the order
    :func:`measure_pair` sees them in); found through the (net, layer) index, so a board with
    a thousand pairs costs a thousand binary searches, not a thousand scans of every track."""
    rows = np.sort(np.concatenate([index.net_rows(pos), index.net_rows(neg)]))
    if not rows.size:
        return {}
    ly = layer[rows].astype(np.int64)
    # copper layer ids are small ints: a count finds the present ones without a hash unique
    return {k: rows[ly == k] for k in np.flatnonzero(np.bincount(ly)).tolist()}


#: Johnson & Graham's lumped-element criterion: a structure shorter than 1/6 of the rising
#: edge's length acts as a lumped element (H. Johnson, M. Graham, *High-Speed Digital Design:
#: A Handbook of Black Magic*, Prentice Hall 1993, §1.6 "lumped versus distributed systems")
LUMPED_FRACTION = 1.0 / 6.0
#: IPC-7351B nominal (density level B) courtyard excess around a land pattern (mm)
COURTYARD_EXCESS_MM = 0.25
#: a row whose track length lies at least this much inside one footprint's courtyard is its escape
IN_FOOTPRINT_FRACTION = 0.9
#: what a row is: judged as routing, or listed as a pad escape that is never judged
KIND_ROUTED = "routed"
KIND_BREAKOUT = "breakout"


def rise_length_mm(nyquist_hz: float, er: float) -> float:
    """Length (mm) of the signal's rising edge on a line of dielectric ``er``: Tr·v, with the
    knee frequency 0.5/Tr (Johnson & Graham §1.1) set to the signal's Nyquist frequency and
    v = c/√εr.  The dielectric's εr (≥ the line's εeff) gives the shortest, i.e. most
    demanding, length.  PCIe Gen4 (8 GHz) on εr 4.1: Tr = 62.5 ps, 9.25 mm."""
    tr_s = 0.5 / nyquist_hz
    return tr_s * C0 / math.sqrt(er) * 1e3


def breakout_length_mm(nyquist_hz: float | None, er: float | None) -> float:
    """Coupled run below which a pair-layer is an escape, not routing: 1/6 of the rise length
    (:data:`LUMPED_FRACTION`): electrically short, its impedance is seen as a lumped
    discontinuity the size of a pad, not as a line.  PCIe Gen4 on εr 4.1: 1.54 mm; Gen5/6
    (16 GHz): 0.77 mm.  Without a signal type (no Nyquist known) the geometric
    :data:`MIN_COUPLED_MM`."""
    if not nyquist_hz or not er:
        return MIN_COUPLED_MM
    return max(rise_length_mm(nyquist_hz, er) * LUMPED_FRACTION, MIN_COUPLED_MM)


def stack_er(stack: LayerStack) -> float | None:
    """The largest εr around the trace (the shortest rise length)."""
    ers = [e for e in (stack.er_below, stack.er_above) if e is not None]
    return max(ers) if ers else None


def row_kind(row: PairImpedance, nyquist_hz: float | None) -> tuple[str, float, str]:
    """(kind, breakout length mm, why) of a pair-layer: ``breakout`` when P and N run side by
    side for less than :func:`breakout_length_mm`, or when the row lies inside a footprint's
    courtyard (an escape in a pin field); ``routed`` otherwise."""
    limit = breakout_length_mm(nyquist_hz, stack_er(row.stack))
    if row.footprint is not None:
        return (
            KIND_BREAKOUT,
            limit,
            f"inside the courtyard of {row.footprint} (pin-field escape)",
        )
    if row.coupled_mm < limit:
        return (
            KIND_BREAKOUT,
            limit,
            f"coupled {row.coupled_mm:.2f} mm of {row.length_mm:.2f} mm, shorter than "
            f"{limit:.2f} mm (1/6 of the rise length: electrically short)",
        )
    return KIND_ROUTED, limit, ""


def _pad_fields(board: Any) -> tuple[np.ndarray, list[str]]:
    """(F, 4) boxes (xmin, ymin, xmax, ymax) of every footprint with two pads or more: the
    pads' extent (each pad taken as a square of its larger side) grown by the IPC-7351B
    courtyard excess (the board file's own courtyard drawing is not read), and the references."""
    xs: list[float] = []
    ys: list[float] = []
    rs: list[float] = []
    starts: list[int] = []
    refs: list[str] = []
    for fp in getattr(board, "footprints", ()) or ():
        pads = fp.pads
        if len(pads) < 2:
            continue
        starts.append(len(xs))
        refs.append(fp.reference)
        for p in pads:
            xs.append(p.x)
            ys.append(p.y)
            rs.append(0.5 * (p.width if p.width > p.height else p.height))
    if not refs:
        return np.zeros((0, 4)), refs
    x, y, r = np.asarray(xs), np.asarray(ys), np.asarray(rs)
    st = np.asarray(starts, dtype=np.int64)
    e = COURTYARD_EXCESS_MM
    boxes = np.column_stack(
        [
            np.minimum.reduceat(x - r, st) - e,
            np.minimum.reduceat(y - r, st) - e,
            np.maximum.reduceat(x + r, st) + e,
            np.maximum.reduceat(y + r, st) + e,
        ]
    )
    return boxes, refs


def group_boxes(start: np.ndarray, end: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """(G, 4) boxes (xmin, ymin, xmax, ymax) of segment groups ``bounds[g]:bounds[g + 1]``
    (an empty group: NaN)."""
    n_groups = len(bounds) - 1
    box = np.full((n_groups, 4), np.nan)
    sizes = np.diff(bounds)
    ne = np.flatnonzero(sizes > 0)
    if ne.size:
        st = bounds[:-1][ne]
        box[ne, :2] = np.minimum.reduceat(np.minimum(start, end), st, axis=0)
        box[ne, 2:] = np.maximum.reduceat(np.maximum(start, end), st, axis=0)
    return box


def footprints_holding(
    boxes_g: np.ndarray,
    total: np.ndarray,
    segments: Any,
    fields: tuple[np.ndarray, list[str]],
) -> list[str | None]:
    """For each segment group (its box from :func:`group_boxes`, its total length), the footprint
    whose courtyard holds ≥ 90 % of the group's length (segments with both ends inside), or
    None.  ``segments(g)`` gives a group's (start, end) arrays, fetched only for the few
    couples that need them.

    Group boxes are joined with the courtyards by :func:`box_pairs`; a couple is measured
    segment by segment only when the group's box centre lies in the courtyard (a cheap
    filter: a group 90 % inside whose last 10 % stretches its box past the courtyard's far
    side is missed, and then judged by its coupled length like any other row)."""
    boxes, refs = fields
    n_groups = len(total)
    out: list[str | None] = [None] * n_groups
    ok_g = np.flatnonzero(np.isfinite(boxes_g[:, 0]) & (total > 0.0))
    if not len(boxes) or not ok_g.size:
        return out
    g_lo, g_hi = boxes_g[ok_g, :2], boxes_g[ok_g, 2:]
    centre = 0.5 * (g_lo + g_hi)
    best: dict[int, tuple[float, int]] = {}
    for gi, fi in box_pairs(g_lo, g_hi, boxes[:, :2], boxes[:, 2:]):
        c = centre[gi]
        keep = (
            (c[:, 0] >= boxes[fi, 0])
            & (c[:, 0] <= boxes[fi, 2])
            & (c[:, 1] >= boxes[fi, 1])
            & (c[:, 1] <= boxes[fi, 3])
        )
        for g_, f_ in zip(gi[keep].tolist(), fi[keep].tolist()):
            g = int(ok_g[g_])
            s0, e0 = segments(g)
            lo, hi = np.minimum(s0, e0), np.maximum(s0, e0)
            b = boxes[f_]
            inside = (
                (lo[:, 0] >= b[0]) & (hi[:, 0] <= b[2]) & (lo[:, 1] >= b[1]) & (hi[:, 1] <= b[3])
            )
            held = float(np.hypot(*(e0 - s0).T)[inside].sum())
            if held >= IN_FOOTPRINT_FRACTION * total[g] - 1e-12 and (
                g not in best or held > best[g][0]
            ):
                best[g] = (held, f_)
    for g, (_, f) in best.items():
        out[g] = refs[f]
    return out


#: KiCad's "Default" net class diff-pair gap (KiCad's NETCLASS default), mm
KICAD_DEFAULT_DP_GAP_MM = 0.25
#: KiCad's "Default" net class diff-pair width, mm
KICAD_DEFAULT_DP_WIDTH_MM = 0.2


def _class_basis(cls_name: str, value: float, kicad_default: float) -> str:
    """``default`` for KiCad's own Default net class value, ``declared`` for a designer's class."""
    if cls_name == "Default" and abs(value - kicad_default) < 1e-9:
        return "default"
    return "declared"


def stack_basis(analysis: Any, stack: LayerStack) -> tuple[tuple[str, str], ...]:
    """Basis of the stack-up inputs of a row: ``h``, ``epsilon_r``, ``t`` (and ``mask_er`` on a
    microstrip with a mask).  KiCad's untouched auto-generated stack-up (every dielectric
    "FR4", εr 4.5, tan δ 0.02, all of one thickness (board − copper − mask)/(n − 1), as
    ``BOARD_STACKUP::BuildDefaultStackupList`` writes it) makes h, εr and t ``default``; a
    dielectric on the path that still carries KiCad's default material values makes εr
    ``default``; anything else the board file states is ``declared``."""
    board = analysis.board
    st = board.stackup
    lib = None
    try:
        lib = analysis.materials
    except Exception:  # noqa: BLE001 - no rules library (stand-in analyses): nothing is default
        log.debug("no materials library for the stack-up basis", exc_info=True)
    out = {"h": "declared", "epsilon_r": "declared", "t": "declared"}
    if st is not None and lib is not None:
        diel = list(st.dielectrics())

        def is_default(d: Any) -> bool:
            return all(
                lib.is_kicad_default(x.material, x.epsilon_r, x.loss_tangent)
                for x in (list(d.sublayers) or [d])
            )

        path = [d for d in diel if d.name in set(stack.dielectrics)]
        if path and any(is_default(d) for d in path):
            out["epsilon_r"] = "default"
        if diel and all(is_default(d) for d in diel) and _auto_thickness(board, diel):
            out.update(h="default", epsilon_r="default", t="default")
    if stack.structure == "microstrip" and stack.mask is not None:
        out["mask_er"] = "declared" if stack.mask_er_declared else "default"
    return tuple(out.items())


def _auto_thickness(board: Any, diel: Sequence[Any]) -> bool:
    """The dielectrics are all (board − copper − mask)/(n − 1) thick, to 1 µm: KiCad's default."""
    st = board.stackup
    th = [d.thickness_mm for d in diel]
    if any(t is None for t in th):
        return False
    total = board.board_thickness_mm
    if total is None:
        return max(th) - min(th) < 1e-3
    cu = sum(sl.thickness_mm or 0.0 for sl in st.layers if sl.is_copper)
    mask = sum(sl.thickness_mm or 0.0 for sl in st.layers if sl.kind == "soldermask")
    want = (total - cu - mask) / max(len(diel), 1)
    return all(abs(t - want) < 1e-3 for t in th)


def pair_table(analysis: Any, pairs: Sequence[Any] | None = None) -> list[PairImpedance]:
    """Every routed layer of every differential pair (or of ``pairs``), with its Zdiff.

    Cached on the analysis (the check and ``inspect --detail pairs`` share one computation; the
    field solver runs once per distinct microstrip geometry).
    """
    cache = analysis.__dict__.setdefault("_impedance_cache", {})
    board = analysis.board
    wanted = tuple(pairs) if pairs is not None else tuple(analysis.diff_pairs)
    planes = getattr(analysis, "plane_layers", None)
    if planes is None:
        planes = {}
    stacks = cache.setdefault("stacks", {})
    rows_cache = cache.setdefault("rows", {})
    fd_cache = cache.setdefault("fd", {})
    tr = board.tracks
    index = getattr(analysis, "track_index", None)
    if index is None:
        from .nets import TrackIndex

        index = TrackIndex(board)
    # every pair-layer not cached yet is measured in one batch (one near-segment search for
    # the board), then the rows are built in the same order as before
    plan: list[tuple[Any, list[tuple[int, np.ndarray]]]] = []
    chunks: list[np.ndarray] = []
    positives: list[int] = []
    n_uuid = len(tr.uuid)
    planned: set[tuple[int, int]] = set()
    for dp in wanted:
        key = (dp.positive, dp.negative)
        if key in rows_cache or key in planned:
            continue
        planned.add(key)
        per_layer = _pair_rows_of(index, tr.layer, dp.positive, dp.negative)
        plan.append((dp, list(per_layer.items())))
        for idx in per_layer.values():
            chunks.append(idx)
            positives.append(dp.positive)
    measured_l: list[PairTraces] = []
    gboxes_l: list[np.ndarray] = []
    lo = 0
    while lo < len(chunks):  # batches of about _BATCH_ROWS segments bound the temporaries
        hi, n_rows = lo, 0
        while hi < len(chunks) and (hi == lo or n_rows + len(chunks[hi]) <= _BATCH_ROWS):
            n_rows += len(chunks[hi])
            hi += 1
        rows_all = np.concatenate(chunks[lo:hi])
        sizes = [len(c) for c in chunks[lo:hi]]
        is_p = tr.net[rows_all] == np.repeat(np.asarray(positives[lo:hi], dtype=np.int64), sizes)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        st_b, en_b = tr.start[rows_all], tr.end[rows_all]
        measured_l += measure_pairs(st_b, en_b, tr.width[rows_all], is_p, bounds)
        gboxes_l.append(
            group_boxes(
                np.asarray(st_b, dtype=float).reshape(-1, 2),
                np.asarray(en_b, dtype=float).reshape(-1, 2),
                bounds.astype(np.int64),
            )
        )
        lo = hi
    measured = iter(measured_l)
    if plan and "pad_fields" not in cache:
        cache["pad_fields"] = _pad_fields(board)
    held_by: Iterator[str | None] = iter(())
    if chunks:

        def segments_of(g: int) -> tuple[np.ndarray, np.ndarray]:
            c = chunks[g]
            return (
                np.asarray(tr.start[c], dtype=float).reshape(-1, 2),
                np.asarray(tr.end[c], dtype=float).reshape(-1, 2),
            )

        held_by = iter(
            footprints_holding(
                np.concatenate(gboxes_l),
                2.0 * np.array([m.length_mm for m in measured_l]),  # P + N: the segments' sum
                segments_of,
                cache["pad_fields"],
            )
        )
    bases = cache.setdefault("stack_basis", {})
    for dp, layers in plan:
        key = (dp.positive, dp.negative)
        rows: list[PairImpedance] = []
        cls_name = board.net_classes.class_of(board.nets[dp.positive])
        cls = board.net_classes.by_name(cls_name)
        for layer, idx in layers:
            if layer not in stacks:
                stacks[layer] = layer_stack(board, layer, planes)
            stack = stacks[layer]
            m = next(measured)
            if layer not in bases:
                bases[layer] = stack_basis(analysis, stack)
            notes = list(stack.notes)
            width, wsrc, wbasis = m.width_mm, "tracks", "measured"
            gap, gsrc, gbasis = m.gap_mm, "tracks", "measured"
            if gap is None or m.coupled_mm < MIN_COUPLED_MM:
                if cls is not None and cls.diff_pair_gap_mm:
                    gap, gsrc = cls.diff_pair_gap_mm, "net class"
                    gbasis = _class_basis(cls_name, gap, KICAD_DEFAULT_DP_GAP_MM)
                    notes.append(
                        f"no parallel P/N run on {stack.layer_name}: gap {gap:g} mm from net "
                        f"class {cls_name} ({gbasis}, not measured)"
                    )
                else:
                    gap, gsrc, gbasis = None, "none", "none"
            if width is None and cls is not None and cls.diff_pair_width_mm:
                width, wsrc = cls.diff_pair_width_mm, "net class"
                wbasis = _class_basis(cls_name, width, KICAD_DEFAULT_DP_WIDTH_MM)
            fp = next(held_by)
            row = PairImpedance(
                pair=dp.name,
                positive=dp.positive,
                negative=dp.negative,
                layer=layer,
                layer_name=stack.layer_name,
                net_class=cls_name,
                width_mm=width,
                gap_mm=gap,
                width_source=wsrc,
                gap_source=gsrc,
                coupled_mm=m.coupled_mm,
                length_mm=m.length_mm,
                stack=stack,
                pos=m.pos,
                items=_ItemUuids(tr.uuid, idx, n_uuid),  # type: ignore[arg-type]
                footprint=fp,
                stretch_mm=m.stretch_mm,
                width_basis=wbasis,
                gap_basis=gbasis,
                stack_basis=bases[layer],
            )
            missing = [f"stack-up: {m}" for m in stack.missing]
            if gap is None:
                missing.append(
                    f"net class {cls_name}: diff_pair_gap (no parallel P/N run on "
                    f"{stack.layer_name} to measure the pair gap)"
                )
            if width is None:
                missing.append(f"net class {cls_name}: diff_pair_width")
            if missing:
                rows.append(
                    _replace(row, notes=tuple(notes), missing=tuple(dict.fromkeys(missing)))
                )
                continue
            assert width is not None and gap is not None
            try:
                z, method, cf, more = zdiff_of(stack, width, gap, fd_cache)
            except ValueError as exc:  # degenerate geometry (zero gap, …): say so, never crash
                rows.append(
                    _replace(row, notes=tuple(notes), missing=(f"a valid geometry: {exc}",))
                )
                continue
            rows.append(
                _replace(
                    row,
                    zdiff_ohm=z,
                    method=method,
                    accuracy=ACCURACY[method],
                    closed_form_ohm=cf,
                    notes=tuple(notes) + more,
                )
            )
        rows_cache[key] = rows
    out: list[PairImpedance] = []
    for dp in wanted:
        out.extend(rows_cache[(dp.positive, dp.negative)])
    return out


def _replace(row: PairImpedance, **kw: Any) -> PairImpedance:
    import dataclasses

    return dataclasses.replace(row, **kw)


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def _signal_basis(sig: Any) -> str:
    """``assumed`` for a guessed generation (the assignment carries an assumption) or a type
    taken from the partner net; ``declared`` when the config, a net class or the net's own name
    states the type (the designer wrote it)."""
    if getattr(sig, "assumption", None):
        return "assumed"
    if getattr(sig, "how", "") in (
        "config",
        "net_class",
        "family_net_class",
        "net_name",
        "family_net_name",
    ):
        return "declared"
    return "assumed"


def pair_rows(analysis: Any) -> list[dict[str, Any]]:
    """Rows of ``accel-drc inspect --json --detail pairs``: every differential pair on every
    copper layer it has tracks on.

    {name, layer, width_mm, gap_mm, zdiff_ohm, method, h_mm (microstrip) or b_mm (stripline),
    epsilon_r, …}; ``zdiff_ohm`` is null where the stack-up lacks data (``missing`` says what).
    """
    net_signal = {}
    try:
        net_signal = analysis.net_signal
    except Exception:  # noqa: BLE001 - signal assignment is optional here (no rules library)
        log.debug("no signal assignment for pair rows", exc_info=True)
    types: Any = {}
    try:
        types = analysis.signal_types
    except Exception:  # noqa: BLE001 - no rules library
        log.debug("no signal types for pair rows", exc_info=True)
    out = []
    for row in pair_table(analysis):
        st = row.stack
        sig = net_signal.get(row.positive) if net_signal else None
        stype = types.get(getattr(sig, "signal", None)) if sig is not None and types else None
        kind, limit, why = row_kind(row, getattr(stype, "nyquist_hz", None))
        d: dict[str, Any] = {
            "name": row.pair,
            "layer": row.layer_name,
            "width_mm": _r(row.width_mm),
            "gap_mm": _r(row.gap_mm),
            "zdiff_ohm": _r(row.zdiff_ohm, 2),
            "method": row.method,
            "structure": st.structure,
        }
        if st.structure == "stripline":
            b = None
            if None not in (st.h_above_mm, st.h_below_mm, st.t_mm):
                b = st.h_above_mm + st.t_mm + st.h_below_mm  # type: ignore[operator]
            d["b_mm"] = _r(b)
            d["h_above_mm"] = _r(st.h_above_mm)
            d["h_below_mm"] = _r(st.h_below_mm)
            ers = [e for e in (st.er_above, st.er_below) if e is not None]
            d["epsilon_r"] = _r(sum(ers) / len(ers), 3) if len(ers) == 2 else None
            d["epsilon_r_above"] = _r(st.er_above, 3)
            d["epsilon_r_below"] = _r(st.er_below, 3)
        else:
            d["h_mm"] = _r(st.h_below_mm)
            d["epsilon_r"] = _r(st.er_below, 3)
            d["soldermask"] = (
                None if st.mask is None else {"thickness_mm": st.mask[0], "epsilon_r": st.mask[1]}
            )
        d.update(
            {
                "t_mm": _r(st.t_mm),
                "references": list(st.references),
                "net_class": row.net_class,
                "signal": getattr(sig, "signal", None),
                "width_source": row.width_source,
                "gap_source": row.gap_source,
                "basis": {
                    "width": row.width_basis,
                    "gap": row.gap_basis,
                    **dict(row.stack_basis),
                    **({"signal": _signal_basis(sig)} if sig is not None else {}),
                },
                "coupled_mm": _r(row.coupled_mm, 3),
                "length_mm": _r(row.length_mm, 3),
                "uncoupled_mm": _r(row.uncoupled_mm, 3),
                "longest_uncoupled_mm": _r(row.stretch_mm, 3),
                "kind": kind,
                "breakout_mm": _r(limit, 3),
                "breakout_reason": why or None,
                "footprint": row.footprint,
                "routed": row.routed,
                "accuracy": row.accuracy,
                "closed_form_ohm": _r(row.closed_form_ohm, 2),
                "notes": list(row.notes),
                "missing": list(row.missing),
            }
        )
        out.append(d)
    return out
