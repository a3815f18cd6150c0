"""Capacitor values as people write them, packages from footprint names, and the model table."""

from __future__ import annotations

import pytest
from accel_drc.analysis.capacitors import CapacitorLibrary, package_of, parse_capacitance
from accel_drc.config import CapacitorConfig


@pytest.mark.parametrize(
    ("text", "farad"),
    [
        ("100n", 100e-9),
        ("0.1uF", 0.1e-6),
        ("4u7", 4.7e-6),
        ("10 µF", 10e-6),
        ("10 μF", 10e-6),  # Greek mu, not the micro sign
        ("1µF/6.3V", 1e-6),
        ("100nF 16V X7R", 100e-9),
        ("1 uF", 1e-6),
        ("2.2u", 2.2e-6),
        ("47p", 47e-12),
        ("2p2", 2.2e-12),
        ("0u1", 0.1e-6),
        ("4N7", 4.7e-9),
        ("22UF", 22e-6),
        ("1,5uF", 1.5e-6),
        ("C_100n_16V_X7R_0402", 100e-9),  # Antmicro style values
        ("C_22u_0603", 22e-6),
        ("10uF X5R 0805", 10e-6),
        ("1mF", 1e-3),
        ("470uF/25V", 470e-6),
    ],
)
def test_values(text: str, farad: float) -> None:
    assert parse_capacitance(text) == pytest.approx(farad, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    ["DNP", "dnf", "NC", "~", "", None, "100", "10K", "4.7u7", "100n DNP", "R_0R_0402", "6.3V"],
)
def test_unreadable_or_not_fitted(text: str | None) -> None:
    assert parse_capacitance(text) is None


@pytest.mark.parametrize(
    ("name", "value", "package"),
    [
        ("Capacitor_SMD:C_0402_1005Metric", "", "0402"),
        ("Capacitor_SMD:C_0201_0603Metric", "", "0201"),
        ("C_0603Metric", "", "0201"),  # metric 0603 is imperial 0201
        ("C_1005Metric", "", "0402"),
        ("Capacitor_SMD:C_0805_2012Metric_Pad1.18x1.45mm_HandSolder", "", "0805"),
        ("Capacitor_SMD:C_1206_3216Metric", "", "1206"),
        ("Capacitor_SMD:C_1210_3225Metric", "", "1210"),
        ("crosslink-nx-video-converter-footprints:0402-cap", "", "0402"),
        ("lib:cap", "C_10u_0603", "0603"),  # from the value when the footprint name says nothing
        ("PCM_EEZ_passives:CAPAE660X610N", "100u", "electrolytic"),
        ("Capacitor_SMD:CP_Elec_6.3x5.8", "", "electrolytic"),
        ("Capacitor_Tantalum_SMD:CP_EIA-3216-18_Kemet-A", "", "tantalum"),
        ("lib:weird", "100n", None),
    ],
)
def test_packages(name: str, value: str, package: str | None) -> None:
    assert package_of(name, value) == package


def test_models_from_yaml_and_overrides() -> None:
    lib = CapacitorLibrary.load()
    m = lib.model("C1", 100e-9, "0402")
    # body 0.4 nH + 0.6 nH mounting (capacitors.yaml), ESR 35 mΩ at 100 nF
    assert m.esl_h == pytest.approx(1.0e-9)
    assert m.esr_ohm == pytest.approx(0.035)
    assert m.unconfirmed
    # log-log interpolation between 1 µF (15 mΩ) and 10 µF (5.5 mΩ): at √10 µF the geometric mean
    assert lib.esr_for(10**-5.5) == pytest.approx((0.015 * 0.0055) ** 0.5)
    assert lib.esr_for(1e-9) == pytest.approx(0.035)  # clamped
    unknown = lib.model("C2", 1e-6, None)
    assert unknown.esl_h == pytest.approx(0.6e-9 + 0.6e-9) and unknown.notes
    ov = CapacitorLibrary.load(
        overrides=CapacitorConfig.of(
            {
                "mounting_esl_h": 0.2e-9,
                "packages": {"0402": {"esl_body_h": 0.3e-9}},
                "parts": {"C9": {"esl_h": 0.15e-9, "esr_ohm": 0.004}},
            }
        )
    )
    assert ov.model("C1", 100e-9, "0402").esl_h == pytest.approx(0.5e-9)
    c9 = ov.model("C9", 100e-9, "0402")
    assert (c9.esl_h, c9.esr_ohm, c9.unconfirmed) == (0.15e-9, 0.004, False)
