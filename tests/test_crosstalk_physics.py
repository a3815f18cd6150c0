"""The crosstalk coefficients (analysis/crosstalk.py) on the textbook hand case."""

from __future__ import annotations

import pytest
from accel_drc.analysis.crosstalk import (
    CoupledLC,
    coupled_lc,
    fext_coefficient,
    k_backward,
    next_coefficient,
)

# C 100 pF/m, Cm 10 pF/m, L 250 nH/m, Lm 12.5 nH/m; 2e8 m/s; 1 ns rise
HAND = CoupledLC(c=100e-12, cm=10e-12, l=250e-9, lm=12.5e-9)


def test_next_grows_linearly_then_saturates() -> None:
    assert k_backward(HAND) == pytest.approx(0.0375)
    assert next_coefficient(HAND, 0.01, 2e8, 1e-9) == pytest.approx(0.00375)  # 2TD = 0.1 ns
    assert next_coefficient(HAND, 0.20, 2e8, 1e-9) == pytest.approx(0.0375)  # 2TD = 2 ns >= tr
    assert next_coefficient(HAND, 0.50, 2e8, 1e-9) == pytest.approx(0.0375)


def test_fext_vanishes_on_a_balanced_pair() -> None:
    balanced = CoupledLC(c=100e-12, cm=10e-12, l=250e-9, lm=25e-9)  # Cm/C = Lm/L
    assert fext_coefficient(balanced, 0.2, 2e8, 1e-9) == pytest.approx(0.0, abs=1e-15)
    # the hand case: (TD/2tr)(0.1 - 0.05) at 20 cm = (1 ns / 2 ns)(0.05)
    assert fext_coefficient(HAND, 0.2, 2e8, 1e-9) == pytest.approx(0.025)


def test_coupled_lc_round_trips_the_modes() -> None:
    # modes of the hand case: Ce = C - Cm, Co = C + Cm; Le = L + Lm, Lo = L - Lm
    ce, co = HAND.c - HAND.cm, HAND.c + HAND.cm
    le, lo = HAND.l + HAND.lm, HAND.l - HAND.lm
    ze, zo = (le / ce) ** 0.5, (lo / co) ** 0.5
    ve, vo = 1 / (le * ce) ** 0.5, 1 / (lo * co) ** 0.5
    got = coupled_lc(ze, zo, ve, vo)
    for a, b in ((got.c, HAND.c), (got.cm, HAND.cm), (got.l, HAND.l), (got.lm, HAND.lm)):
        assert a == pytest.approx(b, rel=1e-12)


# ------------------------------------------------------------------------------------------
# The general two-strip solver (fd_two_strips): broadside coupling of a dual stripline
# ------------------------------------------------------------------------------------------


def _modes(c, c_air):  # (Z even, Z odd) per strip of a symmetric pair, from Maxwell matrices
    import math

    from accel_drc.analysis.impedance.formulas import C0, EPS0

    def z(cc: float, ca: float) -> float:
        return 1.0 / (C0 * EPS0 * math.sqrt(cc * ca))

    return (z(c[0, 0] + c[0, 1], c_air[0, 0] + c_air[0, 1]),
            z(c[0, 0] - c[0, 1], c_air[0, 0] - c_air[0, 1]))  # fmt: skip


@pytest.mark.parametrize("w,s,b", [(0.15, 0.15, 0.5), (0.1, 0.3, 0.4), (0.25, 0.1, 0.6)])
def test_two_strip_solver_reproduces_cohn_exact_coupled_stripline(w, s, b) -> None:
    """The general solver (no symmetry plane, any strip positions) on Cohn's exact case: two
    zero-thickness strips side by side, centred between planes b apart.  Measured: Z even and
    odd −0.06 to −0.34 %, Kb −0.12 to +0.33 % (docs/impedance.md, Crosstalk)."""
    from accel_drc.analysis.crosstalk import (
        BROADSIDE_RESOLUTION,
        coupling_from_matrices,
        coupling_from_modes,
    )
    from accel_drc.analysis.impedance import FIELD_ORDER, cohn_coupled_stripline_zero_t
    from accel_drc.analysis.impedance.solver import FdLayer, Strip, fd_two_strips

    er = 3.8
    ze, zo = cohn_coupled_stripline_zero_t(w, s, b, er)
    c, ca = fd_two_strips(Strip(-s / 2 - w, -s / 2, b / 2, b / 2), Strip(s / 2, s / 2 + w, b / 2, b / 2),
                          (FdLayer(0.0, b, er),), b, BROADSIDE_RESOLUTION, FIELD_ORDER)  # fmt: skip
    got_e, got_o = _modes(c, ca)
    assert got_e == pytest.approx(ze, rel=0.005) and got_o == pytest.approx(zo, rel=0.005)
    exact = coupling_from_modes(ze, zo, er, er)
    got = coupling_from_matrices(c, ca)
    assert got.kb == pytest.approx(exact.kb, rel=0.01)
    assert abs(got.kf) < 1e-9 and got.eeff == pytest.approx(er)


@pytest.mark.parametrize("w,h", [(0.15, 0.5), (0.3, 0.4)])
def test_broadside_odd_mode_is_cohns_exact_stripline(w, h) -> None:
    """Two zero-thickness strips one over the other, at H/4 and 3H/4 between planes H apart:
    the odd mode puts a ground at H/2, so each strip is a centred stripline of spacing H/2,
    whose impedance is exact (Cohn: the coupled case at a gap where the coupling vanishes).
    The broadside solve's odd-mode impedance matches it within 1 % (measured −0.2 to −0.6 %);
    the pair's two self terms agree (mirror symmetry) and, in one dielectric, FEXT vanishes."""
    from accel_drc.analysis.crosstalk import BROADSIDE_RESOLUTION, coupling_from_matrices
    from accel_drc.analysis.impedance import FIELD_ORDER, cohn_coupled_stripline_zero_t
    from accel_drc.analysis.impedance.solver import FdLayer, Strip, fd_two_strips

    er = 3.6
    c, ca = fd_two_strips(Strip(0.0, w, 0.75 * h, 0.75 * h), Strip(0.0, w, 0.25 * h, 0.25 * h),
                          (FdLayer(0.0, h, er),), h, BROADSIDE_RESOLUTION, FIELD_ORDER)  # fmt: skip
    z_single = cohn_coupled_stripline_zero_t(w, 20.0 * h, 0.5 * h, er)[1]
    assert _modes(c, ca)[1] == pytest.approx(z_single, rel=0.01)
    assert c[0, 0] == pytest.approx(c[1, 1], rel=0.005)
    got = coupling_from_matrices(c, ca)
    assert abs(got.kf) < 1e-9 and 0.05 < got.kb < 0.5


def test_two_strip_solver_refuses_a_strip_outside_the_planes() -> None:
    from accel_drc.analysis.impedance.solver import FdLayer, Strip, fd_two_strips

    with pytest.raises(ValueError):
        fd_two_strips(Strip(0, 0.1, 0.5, 0.6), Strip(0, 0.1, 0.1, 0.1), (FdLayer(0, 0.5, 3),), 0.5)
