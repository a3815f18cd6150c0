"""Power-delivery network: rails, their plane-pair capacitance, decoupling capacitors, |Z(f)|.

One idea per module, each with its own model, units, limits and references:

- :mod:`.planes`: the plane pairs: where a rail's fills face a ground fill across one
  dielectric, their overlap area (mm²) and parallel-plate capacitance (F);
- :mod:`.rails`: which nets are rails (declared, or detected from the circuit), what joins
  them, their decoupling capacitors, and which one is the accelerator's core rail;
- :mod:`.model`: the lumped impedance model |Z(f)| of a rail, its target and verdict inputs,
  each with its basis;
- :mod:`.rows`: a rail's row for ``inspect --detail rails`` and the report's extras.

The names below are re-exported here so ``accel_drc.analysis.pdn`` stays the import path of
every caller (checks, inspect, the KiCad plugin's zone warming, irdrop, tests).
"""

from __future__ import annotations

from ..railnames import is_ground, is_power, voltage_from_name
from .model import (
    MODEL_MAX_HZ,
    OverBand,
    RailResult,
    branch_admittances,
    cap_impedance,
    evaluate,
    impedance,
    model_band_text,
    remedy,
    sweep,
)
from .planes import (
    EPS0,
    PlanePair,
    dielectric_between,
    ground_layers,
    layer_region,
    plane_capacitance,
    plane_pairs,
    warm_regions,
)
from .rails import (
    CORE_MAX_V,
    CORE_MIN_BALLS,
    MIN_BGA_BALLS,
    MIN_PLANE_MM2,
    SHUNT_MAX_OHM,
    CapGroup,
    Rail,
    _si,
    bga_balls,
    detect_rails,
    find_rails,
    largest_bgas,
    linked_nets,
    rail_name_matches,
    recognise_core,
    switch_nodes,
)
from .rows import rail_row, rail_rows

__all__ = [
    "CORE_MAX_V",
    "CORE_MIN_BALLS",
    "EPS0",
    "MIN_BGA_BALLS",
    "MIN_PLANE_MM2",
    "MODEL_MAX_HZ",
    "SHUNT_MAX_OHM",
    "CapGroup",
    "OverBand",
    "PlanePair",
    "Rail",
    "RailResult",
    "bga_balls",  # analysis/irdrop.py: the core rail's balls
    "rail_name_matches",  # analysis/irdrop.py: a rail's net patterns, matched as the rails are
    "_si",  # checks/pdn_impedance.py: values with an SI prefix, as the rows write them
    "branch_admittances",
    "cap_impedance",
    "detect_rails",
    "dielectric_between",
    "evaluate",
    "find_rails",
    "ground_layers",
    "impedance",
    "is_ground",
    "is_power",
    "largest_bgas",
    "layer_region",
    "linked_nets",
    "model_band_text",
    "plane_capacitance",
    "plane_pairs",
    "rail_row",
    "rail_rows",
    "recognise_core",
    "remedy",
    "sweep",
    "switch_nodes",
    "voltage_from_name",
    "warm_regions",
]
