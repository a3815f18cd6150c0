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
