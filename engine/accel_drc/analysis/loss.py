"""Channel insertion loss of every routed differential pair: where the dB go on this board.

Per pair and per copper layer it is routed on: the cross-section the impedance analysis measured
(:func:`accel_drc.analysis.impedance.pair_table`: width, gap, heights, εr), the loss tangent of
the dielectrics around it (config, stack-up or library, :func:`resolve_dielectric`), the roughness
of each copper face (config ``stackup: roughness:``, else the declared foil grade's typical Rz
from ``rules/foils.yaml``, else a default) and the routed length (arcs included, from the
impedance table).  Pairs joined through AC-coupling capacitors (:mod:`.channels`) are one channel;
each via of the channel adds the loss of its stub (a shunt open stub, :func:`shunt_stub_db`), and
a stub that resonates below 2× Nyquist is reported as a notch.  The physics is in
:mod:`.loss_models`; docs/loss.md states the models, sources and limits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .impedance import pair_table
from .loss_models import (
    DEFAULT_ROUGHNESS_MODEL,
    DEFAULT_SPEC_HZ,
    METHOD_DS,
    METHOD_HJ,
    METHOD_HURAY,
    SIGMA_CU,
    Dielectric,
    PairSection,
    shunt_stub_db,
)

if TYPE_CHECKING:
    from . import Analysis

#: Rz (µm) used for a face whose foil nobody declared: the middle of the RTF/VLP rows of
#: rules/foils.yaml (3-4 µm), a `default` input (the check's ``default_rz_um`` overrides it)
DEFAULT_RZ_UM = 3.5
#: points of the IL(f) curve from 0 to 2× Nyquist
CURVE_POINTS = 41


@dataclass
class LayerLoss:
    """One pair on one layer."""

    pair: str
    nets: tuple[str, str]
    layer: str
    structure: str
    length_mm: float
    dielectric_db_per_m: float
    conductor_db_per_m: float
    section: PairSection
    basis: dict[str, str]

    @property
    def db_per_m(self) -> float:
        return self.dielectric_db_per_m + self.conductor_db_per_m

    @property
    def il_db(self) -> float:
        return self.db_per_m * self.length_mm * 1e-3


@dataclass
class ChannelLoss:
    """One channel (pairs chained through AC-coupling capacitors): its layers, vias and total."""

    name: str
    pairs: tuple[str, ...]
    nets: tuple[str, ...]
    net_ids: tuple[int, ...]
    signal: str | None
    nyquist_hz: float
    layers: list[LayerLoss]
    via_db: float
    vias: int
    notches: list[dict[str, Any]]
    extra_db: float
    extra_basis: str
    missing: list[str] = field(default_factory=list)
    freqs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    curve_db: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def trace_db(self) -> float:
        return sum(r.il_db for r in self.layers)

    @property
    def dielectric_db(self) -> float:
        return sum(r.dielectric_db_per_m * r.length_mm * 1e-3 for r in self.layers)

    @property
    def conductor_db(self) -> float:
        return sum(r.conductor_db_per_m * r.length_mm * 1e-3 for r in self.layers)

    @property
    def length_mm(self) -> float:
        return sum(r.length_mm for r in self.layers)

    @property
    def total_db(self) -> float:
        return self.trace_db + self.via_db + self.extra_db


def conductivity(analysis: Analysis) -> tuple[float, str]:
    """(σ in S/m, basis): config ``stackup: conductivity_s_per_m`` or copper's 5.8e7 (default)."""
    v = analysis.config.stackup.conductivity_s_per_m
    if v:
        return float(v), "declared"
    return SIGMA_CU, "default"


def face_roughness(
    analysis: Analysis, index: int, default_rz: float
) -> tuple[float, float, str, str]:
    """(Rz of the face toward the board top, toward the bottom, basis, where from) of copper
    layer ``index``: config ``stackup: roughness:`` (declared), else the declared foil grade's
    typical Rz (the middle of its ``rz_um`` range in rules/foils.yaml: library), else
    ``default_rz`` (default)."""
    board = analysis.board
    layer = board.copper_layers[index]
    rough = analysis.config.stackup.roughness
    for key in (layer.name, getattr(layer, "user_name", None), "default"):
        if key and key in rough:
            d = rough[key]
            top = d.rz_top_um if d.rz_top_um is not None else d.rz_bottom_um
            bot = d.rz_bottom_um if d.rz_bottom_um is not None else d.rz_top_um
            top = default_rz if top is None else float(top)
            bot = default_rz if bot is None else float(bot)
            return top, bot, "declared", "stackup.roughness"
    try:
        grade_id = analysis.foil_of_layer(index)
    except Exception:  # noqa: BLE001 - no rules library: no foil grades
        grade_id = None
    if grade_id:
        g = analysis.library.foils.grade(grade_id)
        if g is not None:
            rz = 0.5 * (g.rz_um[0] + g.rz_um[1])
            return rz, rz, "library", f"foil {g.id}"
    return default_rz, default_rz, "default", "default"


def _side_dielectric(
    analysis: Analysis, layers: Sequence[Any], er_fallback: float, df_pick: int | None = None
) -> tuple[Dielectric | None, str, list[str]]:
    """The dielectrics between a trace and one plane as one: εr as the impedance analysis has it
    (thickness-weighted), tan δ weighted as capacitors in series (Σ (t/ε)·tanδ / Σ t/ε: the
    field crosses the slabs one after the other), at the library's stated frequency when the
    value is the library's, else 10 GHz.  ``df_pick`` (0: low, 1: high end) puts a slab whose
    Df is a default with a family range (generic FR-4: every grade the name covers) at that
    end of its range: the insertion-loss check's bounds."""
    from .materials import resolve_dielectric

    overrides = analysis.config.stackup.materials
    num = den = 0.0
    f0 = None
    bases: list[str] = []
    missing: list[str] = []
    for sl in layers:
        info = resolve_dielectric(sl, analysis.materials, overrides)
        th = sl.thickness_mm or 0.0
        er = info.dk or er_fallback
        if info.df is None:
            missing.append(f"loss tangent of {sl.name}")
            continue
        w = th / er if th > 0 and er > 0 else 0.0
        df = info.df
        if df_pick is not None and info.df_basis == "default" and info.df_range is not None:
            df = float(info.df_range[df_pick])
        num += w * df
        den += w
        bases.append(info.df_basis or "default")
        if info.df_from == "library" and info.matched:
            mat = analysis.materials.get(info.matched)
            if mat is not None and mat.freq_ghz:
                f0 = float(mat.freq_ghz) * 1e9
    if missing or den <= 0:
        return None, "default", missing or ["a dielectric with a loss tangent"]
    order = ["assumed", "default", "library", "declared", "measured"]
    worst = min(bases, key=order.index) if bases else "default"
    return Dielectric(er_fallback, num / den, f0 or DEFAULT_SPEC_HZ), worst, []


def _layer_index(board: Any, name: str) -> int | None:
    for i, cl in enumerate(board.copper_layers):
        if cl.name == name:
            return i
    return None


def section_of(
    analysis: Analysis,
    row: Any,
    default_rz: float,
    model: str,
    rz_override: float | None = None,
    df_pick: int | None = None,
) -> tuple[PairSection | None, dict[str, str], list[str]]:
    """The :class:`PairSection` of an impedance-table row, the basis of its inputs and what is
    missing.  ``rz_override`` puts one Rz on every face (the remedy's foil candidates);
    ``df_pick`` a default Df with a family range at its low (0) or high (1) end."""
    from .stackup import reference_walk

    board = analysis.board
    st = row.stack
    if row.missing or row.width_mm is None or row.gap_mm is None or st.h_below_mm is None:
        return None, {}, list(row.missing) or ["the pair's cross-section"]
    planes = getattr(analysis, "plane_layers", None) or {}
    walk = reference_walk(board.stackup, row.layer, planes)
    diel = walk.dielectrics() if walk is not None else []
    n = board.layer_count
    sigma, sigma_basis = conductivity(analysis)
    basis: dict[str, str] = {"length": "measured", "width": row.width_basis, "gap": row.gap_basis}
    basis.update(dict(row.stack_basis))
    basis["conductivity"] = sigma_basis
    top, bot, rb, _ = face_roughness(analysis, row.layer, default_rz)
    rbases = [rb]
    refs = [_layer_index(board, r) for r in st.references]
    if st.structure == "stripline":
        above = [sl for side, sl in diel if side == "above"]
        below = [sl for side, sl in diel if side == "below"]
        d_a, ba, ma = _side_dielectric(analysis, above, st.er_above or 1.0, df_pick)
        d_b, bb, mb = _side_dielectric(analysis, below, st.er_below or 1.0, df_pick)
        if d_a is None or d_b is None:
            return None, basis, ma + mb
        ref_a = refs[0] if refs else None
        ref_b = refs[-1] if len(refs) > 1 else None
        ra = face_roughness(analysis, ref_a, default_rz) if ref_a is not None else None
        rbb = face_roughness(analysis, ref_b, default_rz) if ref_b is not None else None
        rz_plane = rbb[0] if rbb else default_rz  # the lower plane's face toward the top
        rz_plane2 = ra[1] if ra else default_rz  # the upper plane's face toward the bottom
        rbases += [x[2] for x in (ra, rbb) if x] or ["default"]
        if rz_override is not None:
            top = bot = rz_plane = rz_plane2 = rz_override
        sec = PairSection(
            "stripline",
            row.width_mm,
            row.gap_mm,
            st.t_mm or 0.0,
            st.h_below_mm,
            d_b,
            st.h_above_mm,
            d_a,
            rz_strip_plane=bot,
            rz_strip_away=top,
            rz_sides=0.5 * (top + bot),
            rz_plane=rz_plane,
            rz_plane2=rz_plane2,
            sigma=sigma,
            roughness_model=model,
        )
        dbases = [ba, bb]
    else:
        d_b, bb, mb = _side_dielectric(
            analysis, [sl for _, sl in diel], st.er_below or 1.0, df_pick
        )
        if d_b is None:
            return None, basis, mb
        ref = refs[0] if refs else None
        rr = face_roughness(analysis, ref, default_rz) if ref is not None else None
        bottom_layer = row.layer == n - 1
        # the strip's face toward its plane, and the plane's face toward the strip
        toward, away = (top, bot) if bottom_layer else (bot, top)
        rz_plane = (rr[1] if bottom_layer else rr[0]) if rr else default_rz
        rbases.append(rr[2] if rr else "default")
        if rz_override is not None:
            toward = away = rz_plane = rz_override
        sec = PairSection(
            "microstrip",
            row.width_mm,
            row.gap_mm,
            st.t_mm or 0.0,
            st.h_below_mm,
            d_b,
            rz_strip_plane=toward,
            rz_strip_away=away,
            rz_sides=0.5 * (toward + away),
            rz_plane=rz_plane,
            sigma=sigma,
            roughness_model=model,
        )
        dbases = [bb]
    order = ["assumed", "default", "library", "declared", "measured"]
    basis["loss_tangent"] = min(dbases, key=order.index)
    basis["roughness"] = "declared" if rz_override is not None else min(rbases, key=order.index)
    return sec, basis, []


#: what the published-case proof found (tests/test_loss_published.py, docs/loss.md)
VALIDATION_TEXT = (
    "total validated against Simonovich's FR408HR/RTF stripline (DesignCon 2017, measured) "
    "within 5 % and the OpenParEM2D field solver within 1 %, 5-30 GHz"
)


def method_text(model: str) -> str:
    """The ``method`` text of a loss row: the models, and how far the total is proven."""
    rough = METHOD_HJ if model == "hammerstad" else METHOD_HURAY
    proof = (
        VALIDATION_TEXT
        if model != "hammerstad"
        else "Hammerstad-Jensen under-states the validation case by up to 16 % at 30 GHz"
    )
    return (
        f"dielectric: filling-factor quasi-TEM, {METHOD_DS}; conductor: Wheeler incremental "
        f"inductance on the impedance closed forms, skin effect, roughness {rough}; {proof} "
        "(docs/loss.md)"
    )


def _signal_of(analysis: Analysis, net: int) -> tuple[str | None, Any]:
    try:
        sig = analysis.net_signal.get(net)
        types = analysis.signal_types
    except Exception:  # noqa: BLE001 - no rules library
        return None, None
    sid = getattr(sig, "signal", None)
    return sid, (types.get(sid) if sid else None)


def loss_table(
    analysis: Analysis, default_rz: float = DEFAULT_RZ_UM, model: str = DEFAULT_ROUGHNESS_MODEL
) -> list[ChannelLoss]:
    """Every channel whose signal type has a Nyquist frequency, with its loss (cached)."""
    cache = analysis.memo.setdefault("loss", {})
    key = (default_rz, model)
    if key in cache:
        return cache[key]
    from .channels import channels, series_links

    board = analysis.board
    pairs = list(analysis.diff_pairs)
    rows_by_pair: dict[int, list[Any]] = {}
    for r in pair_table(analysis):
        rows_by_pair.setdefault(r.positive, []).append(r)
    extra_cfg = analysis.config.loss.extra_db
    sec_cache: dict[Any, tuple[PairSection | None, dict[str, str], list[str]]] = {}
    alpha_cache: dict[Any, Any] = {}
    stub_cache: dict[Any, tuple[float, np.ndarray]] = {}
    stubs = None
    out: list[ChannelLoss] = []
    for group in channels(pairs, series_links(board)):
        gp = [pairs[k] for k in group]
        sid, stype = None, None
        for dp in gp:
            sid, stype = _signal_of(analysis, dp.positive)
            if stype is not None:
                break
        if stype is None:
            continue
        nyq = float(stype.nyquist_hz)
        freqs = np.linspace(0.0, 2.0 * nyq, CURVE_POINTS)
        freqs[0] = 1e6
        layers: list[LayerLoss] = []
        missing: list[str] = []
        curve = np.zeros(freqs.shape)
        for dp in gp:
            for row in rows_by_pair.get(dp.positive, []):
                if row.length_mm <= 0:
                    continue
                k = (row.layer, row.width_mm, row.gap_mm)
                if k not in sec_cache:
                    sec_cache[k] = section_of(analysis, row, default_rz, model)
                sec, basis, miss = sec_cache[k]
                if sec is None:
                    missing += [f"{row.layer_name}: {m}" for m in miss]
                    continue
                ak = (k, nyq)  # one section at one Nyquist: the same α for every pair
                got = alpha_cache.get(ak)
                if got is None:
                    try:
                        d, c = sec.alpha_db_per_m(np.array([nyq]))
                    except ValueError as exc:  # a degenerate geometry: say so, never crash
                        sec_cache[k] = (None, basis, [f"a valid geometry: {exc}"])
                        missing.append(f"{row.layer_name}: a valid geometry: {exc}")
                        continue
                    got = alpha_cache[ak] = (d, c, sec.alpha_db_per_m(freqs))
                d, c, (dc, cc) = got
                layers.append(
                    LayerLoss(
                        dp.name,
                        (board.nets[dp.positive], board.nets[dp.negative]),
                        row.layer_name,
                        sec.structure,
                        row.length_mm,
                        float(d[0]),
                        float(c[0]),
                        sec,
                        basis,
                    )
                )
                curve = curve + (dc + cc) * row.length_mm * 1e-3
        # vias: the stubs of the positive nets (the pair's two vias make one transition)
        via_db = 0.0
        n_vias = 0
        notches: list[dict[str, Any]] = []
        if stubs is None:
            try:
                stubs = analysis.via_stubs
            except Exception:  # noqa: BLE001 - a board without vias data
                stubs = False
        if stubs is not False and stubs is not None:
            idx = stubs.rows_for_nets([dp.positive for dp in gp])
            for i in idx.tolist():
                if stubs.via_row[i] < 0:
                    continue
                n_vias += 1
                stub = float(stubs.stub_mm[i])
                eps = float(stubs.eps_eff[i]) if math.isfinite(float(stubs.eps_eff[i])) else 3.5
                if not math.isfinite(stub) or stub <= 0:
                    continue
                sk = (stub, eps, nyq)  # vias of one shape share their notch
                sgot = stub_cache.get(sk)
                if sgot is None:
                    sgot = stub_cache[sk] = (
                        float(shunt_stub_db(np.array([nyq]), stub, eps)[0]),
                        shunt_stub_db(freqs, stub, eps),
                    )
                at_nyq = sgot[0]
                via_db += at_nyq
                curve = curve + sgot[1]
                fres = float(stubs.f_res_hz[i])
                if math.isfinite(fres) and fres <= 2.0 * nyq:
                    notches.append(
                        {
                            "via": stubs.uuid[i],
                            "pos": [round(float(x), 4) for x in stubs.xy[i]],
                            "stub_mm": round(stub, 4),
                            "f_res_hz": round(fres, -6),
                        }
                    )
        extra = float(extra_cfg.get(sid, 0.0)) if sid else 0.0
        ch = ChannelLoss(
            name=" + ".join(dp.name for dp in gp),
            pairs=tuple(dp.name for dp in gp),
            nets=tuple(board.nets[n] for dp in gp for n in (dp.positive, dp.negative)),
            net_ids=tuple(n for dp in gp for n in (dp.positive, dp.negative)),
            signal=sid,
            nyquist_hz=nyq,
            layers=layers,
            via_db=via_db,
            vias=n_vias,
            notches=notches,
            extra_db=extra,
            extra_basis="declared" if sid in extra_cfg else "default",
            missing=list(dict.fromkeys(missing)),
            freqs=freqs,
            curve_db=curve + extra * (freqs / nyq) ** 0.5,
        )
        out.append(ch)
    cache[key] = out
    return out


def _r(x: float, nd: int = 3) -> float:
    return round(float(x), nd)


def loss_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Rows of ``accel-drc inspect --json --detail loss``: per pair and layer
    ``{name, nets, signal, layer, structure, length_mm, nyquist_hz, db_per_m,
    dielectric_db_per_m, conductor_db_per_m, il_db, method}``, then one ``layer: "total"`` row
    per channel (vias and declared extras included)."""
    out: list[dict[str, Any]] = []
    method = method_text(DEFAULT_ROUGHNESS_MODEL)
    for ch in loss_table(analysis):
        for r in ch.layers:
            out.append(
                {
                    "name": r.pair,
                    "nets": list(r.nets),
                    "signal": ch.signal,
                    "layer": r.layer,
                    "structure": r.structure,
                    "length_mm": _r(r.length_mm),
                    "nyquist_hz": ch.nyquist_hz,
                    "db_per_m": _r(r.db_per_m),
                    "dielectric_db_per_m": _r(r.dielectric_db_per_m),
                    "conductor_db_per_m": _r(r.conductor_db_per_m),
                    "il_db": _r(r.il_db),
                    "method": method,
                }
            )
        length = ch.length_mm
        out.append(
            {
                "name": ch.name,
                "nets": list(ch.nets),
                "signal": ch.signal,
                "layer": "total",
                "structure": "channel",
                "length_mm": _r(length),
                "nyquist_hz": ch.nyquist_hz,
                "db_per_m": _r(ch.trace_db / (length * 1e-3)) if length > 0 else None,
                "dielectric_db_per_m": _r(ch.dielectric_db / (length * 1e-3))
                if length > 0
                else None,
                "conductor_db_per_m": _r(ch.conductor_db / (length * 1e-3)) if length > 0 else None,
                "il_db": _r(ch.total_db),
                "method": method + "; vias: open-stub shunt; extras: config loss.extra_db",
                "via_db": _r(ch.via_db),
                "vias": ch.vias,
                "extra_db": _r(ch.extra_db),
                "notches": ch.notches,
                "missing": ch.missing,
            }
        )
    return out
