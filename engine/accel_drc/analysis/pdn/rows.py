"""PDN rows: each rail with its network and |Z(f)| as ``inspect --json --detail rails`` and the
report's ``extras["rails"]`` show it.

A row is a plain mapping (JSON-ready): the rail's nets, plane pairs (area mm², dielectric
thickness mm, εr, capacitance F), decoupling capacitors (F, H, Ω), VRM, target (Ω) and its
source, the band judged (Hz) and why it stops there, the basis of every input, and the |Z(f)|
curve (Hz, Ω; a non-finite |Z| is null).  The values are the model's (:mod:`.model`), evaluated
with the class pack's ``pdn_impedance`` params unless given others.

Limits: a row shows, it does not judge (the verdict is the check's); ``points`` thins the curve
evenly (a finding's evidence keeps 81 points, the extras the whole sweep), so a narrow peak can
fall between kept points of a thinned curve, never of the full one.  References: those of
:mod:`.model`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...arrays import unique
from .model import RailResult, evaluate, model_band_text

if TYPE_CHECKING:
    from .. import Analysis

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# rows for inspect / extras
# ---------------------------------------------------------------------------------------------


def _params_of(analysis: Analysis, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ``pdn_impedance`` params to evaluate with: given > ``analysis.pdn_params`` > the rule
    ``check`` applies for ``analysis.board_class`` (inspect --class) or else the class the
    classifier picks: the class pack's, after the project's ``rules:`` overrides."""
    if params is not None:
        return params
    got = getattr(analysis, "pdn_params", None)
    if isinstance(got, Mapping):
        return got
    try:
        lib = analysis.library
        cls = analysis.board_class
        if cls is None:
            from ...classify import classify

            cls = classify(analysis.board, analysis, lib).board_class
        from ...packs import rules_for_class

        cfg = analysis.config
        rules, _ = rules_for_class(lib, cls, cfg.extra_packs, cfg.rule_overrides)
        for rule in rules:  # the rules `check` applies: the project's overrides included
            if rule.check == "pdn_impedance":
                return rule.params
    except Exception:  # no library / classifier: the rows still show the board's own network
        log.info("pdn: no class pack params for the rail rows", exc_info=True)
    return None


def rail_row(res: RailResult, points: int | None = None) -> dict[str, Any]:
    rail = res.rail
    f, z = res.f_hz, res.z_ohm
    if points and len(f) > points:
        keep = unique(np.linspace(0, len(f) - 1, points).round().astype(int))
        f, z = f[keep], z[keep]
    return {
        "name": rail.name,
        "nets": list(rail.nets),
        "source": rail.source,
        "ground_nets": list(rail.ground_nets),
        "voltage": rail.voltage,
        "plane_capacitance_f": rail.plane_capacitance_f,
        "plane_pairs": [
            {
                "layers": [p.rail_layer, p.ground_layer],
                "area_mm2": round(p.area_mm2, 3),
                "dielectric": p.dielectric,
                "thickness_mm": p.thickness_mm,
                "epsilon_r": None if p.epsilon_r is None else round(p.epsilon_r, 4),
                "capacitance_f": p.capacitance_f,
            }
            for p in rail.plane_pairs
        ],
        "decaps": [
            {
                "ref": c.ref,
                "value_f": c.value_f,
                "package": c.package,
                "esl_h": c.esl_h,
                "esr_ohm": round(c.esr_ohm, 6),
                "unconfirmed": c.unconfirmed,
            }
            for c in rail.decaps
        ],
        "unread_caps": list(rail.unread_caps),
        "vrm": None if res.vrm is None else {**res.vrm, "source": res.vrm_source},
        "target_ohm": res.target_ohm,
        "target_source": res.target_source if res.target_ohm is not None else None,
        "role": rail.role,
        "role_basis": rail.role_basis,
        "role_evidence": rail.role_evidence,
        "f_min_hz": res.f_min_hz,
        "f_max_hz": res.f_max_hz,
        "band_max_hz": res.band_max_hz,
        "model_max_hz": res.model_max_hz,
        "model_band": model_band_text(res),
        "basis": dict(res.basis),
        "need_load": list(res.need_load),
        "over_bands": [b.to_dict() for b in res.over_bands],
        "worst_f_hz": res.worst_f_hz,
        "worst_z_ohm": res.worst_z_ohm,
        "dominant": res.dominant,
        "missing": list(res.missing),
        "notes": list(rail.notes),
        "impedance": [
            {"f_hz": float(fi), "z_ohm": float(zi) if math.isfinite(zi) else None}
            for fi, zi in zip(f, z)
        ],
    }


def rail_rows(analysis: Analysis, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail rails``: each rail with its network and |Z(f)|."""
    p = _params_of(analysis, params)
    return [rail_row(evaluate(r, p)) for r in analysis.rails]
