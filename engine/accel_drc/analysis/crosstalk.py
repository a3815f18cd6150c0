"""Near- and far-end crosstalk coefficients of two coupled lines (the physics of a future
``crosstalk`` check; no rule uses it yet).

For a victim beside an aggressor, per unit length: self capacitance ``C`` (Maxwell C11), mutual
``Cm``, self inductance ``L``, mutual ``Lm``.  Backward (near-end) crosstalk
``Kb = ¼·(Cm/C + Lm/L)`` is reached once the coupled length's round trip covers the rise time
(``2·TD ≥ tr``) and grows linearly below it (``NEXT = Kb · 2·TD/tr``); forward (far-end)
crosstalk ``FEXT = (TD / 2·tr)·(Cm/C − Lm/L)`` grows with the coupled length and vanishes in a
homogeneous dielectric (a stripline: Cm/C = Lm/L).  Signs follow the capacitive term.
Source: Hall, Hall & McCall, *High-Speed Digital System Design* (2000), §2.6; Bogatin,
*Signal and Power Integrity — Simplified*, ch. 10.

:func:`coupled_lc` turns the even- and odd-mode impedances and velocities a field solve gives
(:func:`~accel_drc.analysis.impedance.fd_coupled`) into C, Cm, L, Lm.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CoupledLC:
    """Per-unit-length parameters of a symmetric coupled pair (F/m, H/m)."""

    c: float  # self capacitance C11 (to ground and to the neighbour)
    cm: float  # mutual capacitance
    l: float  # noqa: E741  (the usual symbol) self inductance
    lm: float  # mutual inductance


def coupled_lc(z_even: float, z_odd: float, v_even: float, v_odd: float) -> CoupledLC:
    """C, Cm, L, Lm from the even/odd mode impedances (Ω) and velocities (m/s)."""
    c_e, c_o = 1.0 / (z_even * v_even), 1.0 / (z_odd * v_odd)
    l_e, l_o = z_even / v_even, z_odd / v_odd
    return CoupledLC(
        c=0.5 * (c_e + c_o), cm=0.5 * (c_o - c_e), l=0.5 * (l_e + l_o), lm=0.5 * (l_e - l_o)
    )


def k_backward(lc: CoupledLC) -> float:
    """Saturated backward coefficient Kb = ¼(Cm/C + Lm/L)."""
    return 0.25 * (lc.cm / lc.c + lc.lm / lc.l)


def next_coefficient(lc: CoupledLC, length_m: float, velocity_m_s: float, rise_s: float) -> float:
    """Near-end crosstalk (fraction of the aggressor's swing) of a coupled run of ``length_m``:
    Kb once ``2·TD ≥ tr``, else Kb·2·TD/tr."""
    td = length_m / velocity_m_s
    return k_backward(lc) * min(1.0, 2.0 * td / rise_s)


def fext_coefficient(lc: CoupledLC, length_m: float, velocity_m_s: float, rise_s: float) -> float:
    """Far-end crosstalk (fraction of the aggressor's swing): (TD/2tr)·(Cm/C − Lm/L)."""
    td = length_m / velocity_m_s
    return td / (2.0 * rise_s) * (lc.cm / lc.c - lc.lm / lc.l)
