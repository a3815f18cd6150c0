"""Copper as the IR-drop solve conducts through it: resistivity and its temperature
coefficient, a plated barrel's resistance, the per-layer copper thickness and mid-plane depth.

Model and units: ``ρ(T) = ρ₂₀ (1 + α (T − 20 °C))`` in Ω·m, ρ₂₀ = 1/σ (default 1.7241e-8 Ω·m,
IEC 60028 annealed copper standard), α = 0.00393 /K (IEC 60028 / NIST Circular 31); a barrel
is ``ρ·L/(π(r_o² − r_i²))`` with ``r_o = drill/2`` (KiCad's drill is the drilled hole) and
``r_i = r_o − plating`` (plating grows inward); lengths in mm.  Each input carries its basis:
declared in the config, or the cited default (IPC-6012 class 3 plating, 20 °C, 1 oz copper
where the stack-up says nothing; a stack-up with an undeclared thickness spreads the layers
evenly over the board thickness, basis ``default``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import ProjectConfig, as_config
from ..model import Board

#: annealed copper at 20 °C (IEC 60028: 1/58 Ω·mm²/m = 1.7241e-8 Ω·m, 100 % IACS)

RHO20_OHM_M = 1.7241e-8


SIGMA20_S_PER_M = 1.0 / RHO20_OHM_M


#: its temperature coefficient at 20 °C (IEC 60028; NIST Circular 31: 0.00393 /K)

ALPHA20_PER_K = 0.00393


#: barrel plating when the config does not say (IPC-6012 class 3 minimum average, 25 µm)

DEFAULT_PLATING_UM = 25.0


#: temperature when the config does not say: 20 °C, the coldest a running board is, i.e. the

#: lowest resistance: a drop that fails at 20 °C fails at every operating temperature

DEFAULT_TEMPERATURE_C = 20.0


#: copper thickness of a layer the stack-up leaves undeclared (1 oz)

DEFAULT_COPPER_MM = 0.035


def rho(temperature_c: float, rho20: float = RHO20_OHM_M, alpha: float = ALPHA20_PER_K) -> float:
    """Copper resistivity (Ω·m) at ``temperature_c``: ρ₂₀ (1 + α (T − 20))."""
    return rho20 * (1.0 + alpha * (temperature_c - 20.0))


def barrel_resistance(
    length_mm: float, drill_mm: float, plating_mm: float, rho_ohm_m: float
) -> float:
    """ρ·L/(π(r_o² − r_i²)) of a plated barrel: r_o = drill/2, r_i = max(0, r_o − plating)."""
    ro = drill_mm / 2.0
    ri = max(0.0, ro - plating_mm)
    area_mm2 = math.pi * (ro * ro - ri * ri)
    return rho_ohm_m * 1e3 * length_mm / area_mm2  # Ω·m × mm / mm² = 1e3 Ω


@dataclass
class Copper:
    """Resistivity inputs and their basis."""

    rho_ohm_m: float
    plating_mm: float
    temperature_c: float
    basis: dict[str, str] = field(default_factory=dict)


def copper_of(config: ProjectConfig | Mapping[str, Any] | None) -> Copper:
    """The copper the config declares (``stackup: conductivity_s_per_m, via_plating_um,
    temperature_c``), else the cited defaults, each with its basis."""
    st = as_config(config).stackup
    basis: dict[str, str] = {}
    sigma = st.conductivity_s_per_m
    basis["conductivity"] = "declared" if sigma is not None else "library"
    sigma = float(sigma) if sigma is not None else SIGMA20_S_PER_M
    plating = st.via_plating_um
    basis["via_plating"] = "declared" if plating is not None else "default"
    plating = float(plating) if plating is not None else DEFAULT_PLATING_UM
    temp = st.temperature_c
    basis["temperature"] = "declared" if temp is not None else "default"
    temp = float(temp) if temp is not None else DEFAULT_TEMPERATURE_C
    return Copper(rho(temp, 1.0 / sigma), plating / 1000.0, temp, basis)


def layer_geometry(board: Board) -> tuple[np.ndarray, np.ndarray, str]:
    """(thickness_mm per copper layer, z of each copper layer's mid-plane in mm, basis)."""
    n = board.layer_count
    t = np.full(n, DEFAULT_COPPER_MM)
    z = np.zeros(n)
    st = board.stackup
    ok = st is not None
    if st is not None:
        depth = 0.0
        for layer in st.layers:
            if layer.kind in ("silkscreen", "solderpaste", "soldermask"):
                continue
            th = layer.thickness_mm
            if th is None:
                ok = False
                th = DEFAULT_COPPER_MM if layer.is_copper else 0.0
            if layer.is_copper and layer.copper_index is not None and layer.copper_index < n:
                t[layer.copper_index] = th
                z[layer.copper_index] = depth + th / 2.0
            depth += th
        if not (np.diff(z) > 0).all():
            ok = False
    if not ok:
        total = board.board_thickness_mm or 1.6
        z = np.linspace(0.0, total, n) if n > 1 else np.zeros(1)
    return t, z, "declared" if ok else "default"
