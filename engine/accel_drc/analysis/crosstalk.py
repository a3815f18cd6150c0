"""Near- and far-end crosstalk coefficients of two coupled lines, and the parallel runs of two
sets of track segments (the physics and the geometry of the ``crosstalk`` check).

For a victim beside an aggressor, per unit length: self capacitance ``C`` (Maxwell C11), mutual
``Cm``, self inductance ``L``, mutual ``Lm``.  Backward (near-end) crosstalk
``Kb = ¼·(Cm/C + Lm/L)`` is reached once the coupled length's round trip covers the rise time
(``2·TD ≥ tr``) and grows linearly below it (``NEXT = Kb · 2·TD/tr``); forward (far-end)
crosstalk ``FEXT = (TD / 2·tr)·(Cm/C − Lm/L)`` grows with the coupled length and vanishes in a
homogeneous dielectric (a stripline: Cm/C = Lm/L).  Signs follow the capacitive term.  FEXT is
the difference of the even- and odd-mode arrivals, ½·(T_e − T_o)/tr with T_e − T_o =
TD·(Lm/L − Cm/C): it cannot exceed ½ (the two modes fully apart), where it is capped.
Source: Hall, Hall & McCall, *High-Speed Digital System Design* (2000), §2.6; Bogatin,
*Signal and Power Integrity — Simplified*, ch. 10.

:func:`coupled_lc` turns the even- and odd-mode impedances and velocities a field solve gives
(:func:`~accel_drc.analysis.impedance.fd_coupled`) into C, Cm, L, Lm; :func:`coupling_of`
field-solves a layer's cross-section for them (:class:`Coupling`), and :func:`parallel_runs`
finds where two sets of segments run side by side (a uniform grid join, linear in the segments
plus their near neighbours).

Proofs (``tests/test_crosstalk_physics.py``, ``docs/impedance.md`` "Crosstalk"): TNT-MMTL's
published coupled-microstrip case and Cohn's exact coupled stripline.

The check's coarse screen (:func:`coarse_coupling_of`): the coarse mesh alone (resolution
``XTALK_RESOLUTION / 2``, the first of the two the production solution extrapolates from, so a
fine solve that follows reuses it), with the range the production solution lies in: Kb within
−45 % / +4 % of the coarse Kb, kf within −0.10 / +0.32 × the coarse Kb of the coarse kf, the
delay within −3 % / +1.5 % (:data:`COARSE_KB`, :data:`COARSE_KF`, :data:`COARSE_PS`).  Each side
is at least twice the worst deviation of a sweep of 4,050 cross-sections
(``bench/sweep_coarse_mesh.py``: w/h 0.3–3, s/h 0.25–4, εr 3–4.6, t/h 0.02–0.4, microstrip bare
and under a mask, symmetric and offset stripline; worst 22.4 % / 1.8 %, 4.1 % / 15.3 %,
1.2 % / 0.6 %), which ``tests/test_crosstalk_screen.py`` re-runs in part; outside the swept
:data:`COARSE_DOMAIN` the screen takes the fine solution.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: speed of light in vacuum, m/s
C0_M_S = 299_792_458.0
#: the field solver's mesh setting for crosstalk (Richardson-extrapolated from r/2 and r):
#: Kb and FEXT of TNT-MMTL's published case within 1 % (tests); a solve costs ~20 ms
XTALK_RESOLUTION = 0.5
#: the two-strip solver's mesh setting (broadside runs; meshes 0.5 and 1 extrapolated): Cohn's
#: exact coupled stripline within 0.34 % (Z) and 0.33 % (Kb), the broadside odd mode (exact:
#: a centred stripline) within 0.6 % (tests); a solve costs 30-60 ms, and only a dual
#: stripline's runs need one
BROADSIDE_RESOLUTION = 1.0
#: the coarse screen (:func:`coarse_coupling_of`: the ``XTALK_RESOLUTION / 2`` mesh alone)
#: against the production solution, (below, above): the fine Kb lies in
#: [Kb_c·(1 − below), Kb_c·(1 + above)], the fine kf in [kf_c − below·Kb_c, kf_c + above·Kb_c],
#: the fine delay in [ps_c·(1 − below), ps_c·(1 + above)]; each side at least twice the worst
#: deviation on that side of the sweep over :data:`COARSE_DOMAIN` (``bench/sweep_coarse_mesh.py``,
#: docs/impedance.md "Crosstalk", coarse screen; re-checked by tests/test_crosstalk_screen.py)
COARSE_KB = (0.45, 0.04)
COARSE_KF = (0.1, 0.32)
COARSE_PS = (0.03, 0.015)
#: the cross-sections that sweep covered (ratios to h, the strip's height to its nearer
#: plane): width, gap, copper, soldermask thickness, the far plane's height over the near
#: one's (stripline; 1 for microstrip), every εr (dielectrics and mask)
COARSE_DOMAIN: dict[str, tuple[float, float]] = {
    "w_h": (0.3, 3.0),
    "s_h": (0.25, 4.0),
    "t_h": (0.02, 0.4),
    "mask_h": (0.0, 0.25),
    "far_near": (1.0, 4.0),
    "er": (3.0, 4.6),
}
#: closest edge-to-edge gap (mm) taken as a coupled run: 10 µm, under any fab's minimum space
#: (a closer pair is a clearance error; its field solve would mesh a sliver)
MIN_GAP_MM = 0.01


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
    return cap_fext(td / (2.0 * rise_s) * (lc.cm / lc.c - lc.lm / lc.l))


def cap_fext(x: float) -> float:
    """A far-end coefficient capped at ±½: the two modes fully apart (module doc)."""
    return max(-0.5, min(0.5, x))


@dataclass(frozen=True)
class Coupling:
    """Crosstalk of a victim beside an aggressor on one cross-section, per unit length.

    ``kb``: saturated backward (near-end) coefficient ¼(Cm/C + Lm/L); ``kf``: the far-end
    factor Cm/C − Lm/L (FEXT = kf·TD/2tr); ``eeff``: εeff of the line (the mean of the modes'
    delays, squared), which gives TD."""

    kb: float
    kf: float
    eeff: float

    @property
    def ps_per_mm(self) -> float:
        """Delay per mm (ps) at ``eeff``."""
        return math.sqrt(self.eeff) / C0_M_S * 1e9


def coupling_from_modes(z_even: float, z_odd: float, eeff_even: float, eeff_odd: float) -> Coupling:
    """:class:`Coupling` of a symmetric pair from its even/odd impedances (Ω) and εeff."""
    ve, vo = C0_M_S / math.sqrt(eeff_even), C0_M_S / math.sqrt(eeff_odd)
    lc = coupled_lc(z_even, z_odd, ve, vo)
    eeff = (0.5 * (math.sqrt(eeff_even) + math.sqrt(eeff_odd))) ** 2
    return Coupling(kb=k_backward(lc), kf=lc.cm / lc.c - lc.lm / lc.l, eeff=eeff)


def _section(stack: Any, w_mm: float, s_mm: float) -> tuple[tuple[Any, ...], Any, Any]:
    """The solver's arguments, mask and memo key of two strips of width ``w_mm``, ``s_mm``
    apart on ``stack`` turned upright (:meth:`~accel_drc.analysis.impedance.LayerStack.upright`:
    a stripline nearer its upper plane is solved upside down, the same fields, so two layers
    that mirror each other share their solutions)."""
    from .impedance import field_cross_section

    args, mask = field_cross_section(stack.upright(), w_mm, s_mm)
    return args, mask, (args[:4], args[4], args[5], mask)


def _lo_caps(args: tuple[Any, ...], mask: Any, key: Any, memo: dict[Any, Any] | None) -> Any:
    """The coarse mesh's (``XTALK_RESOLUTION / 2``) capacitances of both modes, memoised under
    ``("lo", key)``: the screen's coarse coupling and the fine solution's extrapolation both
    take them, so that mesh is solved once."""
    from .impedance.solver import mode_capacitances

    got = memo.get(("lo", key)) if memo is not None else None
    if got is None:
        got = mode_capacitances(*args, resolution=XTALK_RESOLUTION / 2.0, mask=mask)
        if memo is not None:
            memo[("lo", key)] = got
    return got


def coupling_of(
    stack: Any, w_mm: float, s_mm: float, memo: dict[Any, Any] | None = None
) -> Coupling:
    """The :class:`Coupling` of two strips of width ``w_mm``, ``s_mm`` apart edge to edge, on
    the cross-section ``stack`` (:class:`~accel_drc.analysis.impedance.LayerStack`: microstrip
    with its soldermask, symmetric or offset stripline, one εr or two), by the 2-D field solver
    (:func:`~accel_drc.analysis.impedance.solver.fd_coupled_modes`), memoised in ``memo`` by
    the solver's own arguments (rounded to 0.1 µm) of the stack turned upright; the coarse
    mesh's capacitances are taken from the memo where :func:`coarse_coupling_of` solved them."""
    from .impedance import FIELD_ORDER
    from .impedance.solver import fd_coupled_modes

    args, mask, key = _section(stack, w_mm, s_mm)
    if memo is not None and key in memo:
        return memo[key]  # type: ignore[no-any-return]
    ze, zo, ee, eo = fd_coupled_modes(
        *args, resolution=XTALK_RESOLUTION, mask=mask, order=FIELD_ORDER,
        lo_caps=_lo_caps(args, mask, key, memo),
    )  # fmt: skip
    got = coupling_from_modes(ze, zo, ee, eo)
    if memo is not None:
        memo[key] = got
    return got


def in_coarse_domain(args: tuple[Any, ...], mask: tuple[float, float] | None) -> bool:
    """Whether the cross-section ``args`` (:func:`~accel_drc.analysis.impedance.
    field_cross_section`'s, upright) lies in :data:`COARSE_DOMAIN`, where the sweep measured
    the coarse mesh's error (:data:`COARSE_REL`, :data:`COARSE_PS_REL`)."""
    w, s, t, h, layers, top = args
    if not h > 0.0:  # no height: nothing was measured (the fine solver judges it)
        return False
    d = COARSE_DOMAIN
    ers = [lay.er for lay in layers] + ([mask[1]] if mask else [])
    checks = [
        (w / h, d["w_h"]),
        (s / h, d["s_h"]),
        (t / h, d["t_h"]),
        ((mask[0] if mask else 0.0) / h, d["mask_h"]),
        (((top - t - h) / h) if top is not None else 1.0, d["far_near"]),
    ] + [(er, d["er"]) for er in ers]
    # 0.1 % of slack: a node's gap is rounded to 0.1 µm, which puts 4 h a hair above 4 h
    return all(lo * (1 - 1e-3) <= x <= hi * (1 + 1e-3) for x, (lo, hi) in checks)


def coarse_coupling_of(
    stack: Any, w_mm: float, s_mm: float, memo: dict[Any, Any] | None = None
) -> tuple[Coupling, bool]:
    """(coupling, coarse): :func:`coupling_of`'s value from its coarse mesh alone (no
    extrapolation: about a third of the cost) and True, the fine solution lying within
    :data:`COARSE_KB`, :data:`COARSE_KF` and :data:`COARSE_PS` of it; outside
    :data:`COARSE_DOMAIN`, or where the fine solution is in ``memo`` already, the fine
    solution itself and False (no error)."""
    args, mask, key = _section(stack, w_mm, s_mm)
    if memo is not None and key in memo:
        return memo[key], False
    if not in_coarse_domain(args, mask):
        return coupling_of(stack, w_mm, s_mm, memo), False
    got = memo.get(("coarse", key)) if memo is not None else None
    if got is None:
        from .impedance.solver import modes_of_caps

        got = coupling_from_modes(*modes_of_caps(_lo_caps(args, mask, key, memo)))
        if memo is not None:
            memo[("coarse", key)] = got
    return got, True


@dataclass(frozen=True)
class Runs:
    """Parallel runs of victim segments beside aggressor segments (one row per couple):
    victim and aggressor row indexes (into the arrays given), the overlap length (mm, along
    the victim), the edge-to-edge gap (mm), and the overlap's midpoint on the victim."""

    victim: np.ndarray
    aggressor: np.ndarray
    length_mm: np.ndarray
    gap_mm: np.ndarray
    mid: np.ndarray


def parallel_runs(
    vs: np.ndarray,
    ve: np.ndarray,
    vw: np.ndarray,
    as_: np.ndarray,
    ae: np.ndarray,
    aw: np.ndarray,
    max_gap_mm: float | np.ndarray,
    max_angle_deg: float = 10.0,
    v_unit: np.ndarray | None = None,
    a_unit: np.ndarray | None = None,
    min_gap_mm: float = MIN_GAP_MM,
) -> Runs:
    """Where segments ``a`` (start, end (n, 2), width (n,)) run beside segments ``v`` within an
    edge-to-edge gap of ``max_gap_mm`` (a scalar or one per victim segment), their directions
    within ``max_angle_deg``: the overlap of ``a``'s projection on ``v``, and the gap at its
    middle.  Copper closer than :data:`MIN_GAP_MM` (touching, crossing, or a sliver no fab
    etches) is not a run: a short or a clearance error, the DRC's matter.  A zero-length
    segment runs beside nothing.  With ``v_unit``/``a_unit`` (an id per segment), a couple of
    one unit (a net beside itself, a pair beside its partner) is not a run either.
    ``min_gap_mm`` (default :data:`MIN_GAP_MM`) lowers that floor for segments on two
    different layers (a broadside run: zero widths and a negative floor give the centre
    offset, stacked traces included).

    The candidate couples come from :func:`~accel_drc.analysis.impedance.box_pairs` (a
    uniform grid over the boxes, each victim box grown by its search distance): work linear in
    the segments plus the couples that lie near each other.  Each candidate block is narrowed
    test by test (unit, direction, overlap, gap) on per-segment columns computed once, so the
    couples that fail early cost a few gathers."""
    from .impedance import box_pairs

    empty = Runs(*(np.zeros(0, np.int64),) * 2, *(np.zeros(0),) * 2, np.zeros((0, 2)))
    v = _Segments.of(vs, ve)
    a = _Segments.of(as_, ae)
    if not len(v.keep) or not len(a.keep):
        return empty
    max_gap = np.broadcast_to(np.asarray(max_gap_mm, float), (len(vs),))
    reach = (max_gap + 0.5 * vw + float(aw.max()) / 2)[v.keep]
    vk, ak = v.keep, a.keep
    vlo = np.minimum(vs[vk], ve[vk]) - reach[:, None]
    vhi = np.maximum(vs[vk], ve[vk]) + reach[:, None]
    alo, ahi = np.minimum(as_[ak], ae[ak]), np.maximum(as_[ak], ae[ak])
    sin_max = math.sin(math.radians(max_angle_deg))
    half_w = (0.5 * vw, 0.5 * aw)
    parts: list[tuple[np.ndarray, ...]] = []
    for jv, ja in box_pairs(vlo, vhi, alo, ahi):
        iv, ia = vk[jv], ak[ja]
        if v_unit is not None and a_unit is not None:
            ok = v_unit[iv] != a_unit[ia]
            iv, ia = iv[ok], ia[ok]
        cross = v.ux[iv] * a.uy[ia] - v.uy[iv] * a.ux[ia]
        ok = np.abs(cross) <= sin_max
        iv, ia = iv[ok], ia[ok]
        # the aggressor's ends projected on the victim's line, from the victim's start
        rx0, ry0 = a.x0[ia] - v.x0[iv], a.y0[ia] - v.y0[iv]
        ux, uy = v.ux[iv], v.uy[iv]
        p0 = rx0 * ux + ry0 * uy
        p1 = (a.x1[ia] - v.x0[iv]) * ux + (a.y1[ia] - v.y0[iv]) * uy
        lo = np.maximum(np.minimum(p0, p1), 0.0)
        hi = np.minimum(np.maximum(p0, p1), v.length[iv])
        length = hi - lo
        ok = length > 1e-6
        iv, ia, ux, uy, length, lo, rx0, ry0 = (
            x[ok] for x in (iv, ia, ux, uy, length, lo, rx0, ry0)
        )
        # distance from the overlap's middle on v to a's line, less the two half widths
        c = lo + 0.5 * length
        mx, my = c * ux - rx0, c * uy - ry0  # overlap middle relative to a's start
        dist = np.abs(mx * a.uy[ia] - my * a.ux[ia])
        gap = dist - half_w[0][iv] - half_w[1][ia]
        ok = (gap >= min_gap_mm) & (gap <= max_gap[iv] + 1e-9)
        if ok.any():
            iv, ia, c, ux, uy = iv[ok], ia[ok], c[ok], ux[ok], uy[ok]
            mid = np.column_stack((v.x0[iv] + c * ux, v.y0[iv] + c * uy))
            parts.append((iv, ia, length[ok], gap[ok], mid))
    if not parts:
        return empty
    iv, ia, length, gap, mid = (np.concatenate(x) for x in zip(*parts))
    # box_pairs may yield a couple twice (two long boxes): keep one
    key = iv.astype(np.int64) * (len(as_) + 1) + ia
    _u, first = np.unique(key, return_index=True)
    return Runs(iv[first], ia[first], length[first], gap[first], mid[first])


@dataclass(frozen=True)
class _Segments:
    """Per-segment columns :func:`parallel_runs` gathers from (1-D gathers are several times
    cheaper than rows of an (n, 2) array): start, end, unit direction, length, and the
    segments of non-zero length (``keep``)."""

    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    ux: np.ndarray
    uy: np.ndarray
    length: np.ndarray
    keep: np.ndarray

    @classmethod
    def of(cls, start: np.ndarray, end: np.ndarray) -> _Segments:
        x0, y0 = np.ascontiguousarray(start[:, 0]), np.ascontiguousarray(start[:, 1])
        x1, y1 = np.ascontiguousarray(end[:, 0]), np.ascontiguousarray(end[:, 1])
        length = np.hypot(x1 - x0, y1 - y0)
        keep = np.flatnonzero(length > 1e-9)
        safe = np.where(length > 1e-9, length, 1.0)
        return cls(x0, y0, x1, y1, (x1 - x0) / safe, (y1 - y0) / safe, length, keep)


def crosstalk_at(
    kb_len: float, td_ps: float, kf_td: float, length_mm: float, rise_ps: float
) -> tuple[float, float]:
    """(NEXT, FEXT) of a coupled run summed over its pieces: ``kb_len`` = Σ Kb·length (mm),
    ``td_ps`` = Σ TD, ``kf_td`` = Σ kf·TD (ps), ``length_mm`` = Σ length, edge ``rise_ps``.
    NEXT is the length-weighted Kb, saturating once 2·TD ≥ tr; the far-end pieces arrive
    together, so FEXT sums.  FEXT is returned uncapped: the cap (:func:`cap_fext`) belongs to
    the noise the victim sees, after the superposition (:func:`combine`), not to each term."""
    if length_mm <= 0.0 or rise_ps <= 0.0:
        return 0.0, 0.0
    nxt = kb_len / length_mm * min(1.0, 2.0 * td_ps / rise_ps)
    return nxt, kf_td / (2.0 * rise_ps)


def combine(
    terms: Mapping[tuple[int, int], float], victim: Mapping[int, int], aggressor: Mapping[int, int]
) -> float:
    """The noise on a victim (one net, or a pair's difference) from an aggressor (one net, or
    a pair driven ±½ of its differential swing), by superposition of the net-to-net ``terms``
    ``{(victim net, aggressor net): coefficient}``; ``victim``/``aggressor`` map each member
    net to its sign (+1, or −1 for a pair's N).  A pair drives each leg with half its swing."""
    amp = 0.5 if len(aggressor) > 1 else 1.0
    return sum(
        sv * sa * amp * terms.get((v, a), 0.0)
        for v, sv in victim.items()
        for a, sa in aggressor.items()
    )


def coupling_from_matrices(c: np.ndarray, c_air: np.ndarray) -> Coupling:
    """:class:`Coupling` of two lines from their 2×2 Maxwell capacitance matrices, in the
    dielectric and in air (any common unit): Cm = −C12, L ∝ C_air⁻¹ (so Lm/L = (C_air⁻¹)12 /
    (C_air⁻¹)11).  Two lines of unequal self terms (a dual stripline's two layers) take the
    geometric mean of their self terms, Cm/√(C11·C22) and Lm/√(L11·L22): for a symmetric pair
    the even/odd result exactly.  εeff: the mean of the two lines' C_ii/C_air,ii."""
    inv = np.linalg.inv(c_air)
    cm_c = -float(c[0, 1]) / math.sqrt(float(c[0, 0]) * float(c[1, 1]))
    lm_l = float(inv[0, 1]) / math.sqrt(float(inv[0, 0]) * float(inv[1, 1]))
    eeff = 0.5 * (float(c[0, 0] / c_air[0, 0]) + float(c[1, 1] / c_air[1, 1]))
    return Coupling(kb=0.25 * (cm_c + lm_l), kf=cm_c - lm_l, eeff=eeff)


def broadside_section(stack_a: Any, stack_b: Any) -> tuple[float, float, float, tuple[Any, ...]]:
    """The dual stripline of two adjacent signal layers between the same two planes: ``a`` the
    upper layer, ``b`` the lower, both :class:`~accel_drc.analysis.impedance.LayerStack` of
    structure stripline (the reference walk passes the other signal layer, so each side's
    height holds it).  Returns (y of b's bottom face, y of a's bottom face, plane spacing, the
    dielectric slabs), y from the lower plane.  εr: b's below side, a's above side, and between
    the two layers the rest of a's thickness-weighted εr below (what a's εr below holds beyond
    b's own side); every length in mm."""
    from .impedance.solver import FdLayer

    ta, tb = stack_a.t_mm or 0.0, stack_b.t_mm or 0.0
    top = stack_a.h_below_mm + ta + stack_a.h_above_mm
    yb, ya = stack_b.h_below_mm, stack_a.h_below_mm
    wa = stack_a.h_below_mm - tb  # a's dielectric below (its height holds b's copper)
    mid_h = wa - stack_b.h_below_mm
    er_mid = stack_a.er_below
    if mid_h > 1e-9:
        got = (stack_a.er_below * wa - stack_b.er_below * stack_b.h_below_mm) / mid_h
        er_mid = got if got > 0 else stack_a.er_below
    cut_b, cut_a = yb + 0.5 * tb, ya + 0.5 * ta
    layers = (
        FdLayer(0.0, cut_b, stack_b.er_below),
        FdLayer(cut_b, cut_a, er_mid),
        FdLayer(cut_a, top, stack_a.er_above),
    )
    return yb, ya, top, layers


def broadside_coupling_of(
    stack_a: Any, stack_b: Any, w_mm: float, offset_mm: float, memo: dict[Any, Coupling] | None
) -> Coupling:
    """The :class:`Coupling` of a strip of width ``w_mm`` on the upper layer of a dual
    stripline (``stack_a``) over one as wide on the lower layer (``stack_b``), their centres
    ``offset_mm`` apart across: the general two-strip field solution
    (:func:`~accel_drc.analysis.impedance.solver.fd_two_strips`, proved on Cohn's exact
    coupled stripline), memoised in ``memo`` by the geometry rounded to 0.1 µm."""
    from .impedance import FIELD_ORDER
    from .impedance.solver import Strip, fd_two_strips

    yb, ya, top, layers = broadside_section(stack_a, stack_b)
    r = 4
    key = ("broadside", round(w_mm, r), round(offset_mm, r), round(yb, r), round(ya, r),
           round(top, r), round(stack_a.t_mm or 0.0, r), round(stack_b.t_mm or 0.0, r),
           tuple((round(x.y0, r), round(x.y1, r), round(x.er, 6)) for x in layers))  # fmt: skip
    if memo is not None and key in memo:
        return memo[key]
    a = Strip(offset_mm - 0.5 * w_mm, offset_mm + 0.5 * w_mm, ya, ya + (stack_a.t_mm or 0.0))
    b = Strip(-0.5 * w_mm, 0.5 * w_mm, yb, yb + (stack_b.t_mm or 0.0))
    c, c_air = fd_two_strips(a, b, layers, top, resolution=BROADSIDE_RESOLUTION, order=FIELD_ORDER)
    got = coupling_from_matrices(c, c_air)
    if memo is not None:
        memo[key] = got
    return got
