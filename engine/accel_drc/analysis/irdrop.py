"""DC IR drop: a conduction solve on a rail's real copper (zone fills, tracks, pads, vias).

Model (docs/irdrop.md):

* every copper layer of the rail is a square raster of cell ``h`` over the rail's copper; a cell
  is copper when its centre lies in one of the rail's zone fills on that layer, under one of its
  pads, or at a track end or via; two neighbouring fill cells conduct ``σ·t`` (a square of
  sheet conductance); a pad or via land outside a fill conducts through its tracks and barrels;
* a track is a resistor ``ρ·length/(w·t)`` between the cells of its two ends (exact for a track,
  whatever ``h``);
* a via or plated hole of the rail joins the layers of its span: each barrel segment between
  two consecutive layers where it meets copper is ``ρ·L/(π(r_o² − r_i²))`` with ``r_o = drill/2``
  (KiCad's drill is the drilled hole) and ``r_i = r_o − plating`` (plating grows inward), ``L``
  the distance between the two copper layers' mid-planes.  The barrel below the last layer it
  meets carries no current (a stub is a dead end), so the span that conducts is found by the
  solve itself;
* where a via or pad meets a plane (all four neighbours copper), the cell node sits at Peaceman's
  equivalent radius ``r_o = 0.198·h`` of the 5-point scheme (Peaceman 1978, SPE J. 18(3)); the
  spreading between the barrel wall and that radius, ``ln(0.198·h / r)/(2π σ t)``, is added in
  series, so a coarse grid does not under-count the crowding around each via;
* the source footprints' pads on the rail are held at ``voltage`` (Dirichlet); each load draws
  its current evenly from its pads on the rail;
* copper resistivity ``ρ(T) = ρ₂₀ (1 + α (T − 20 °C))``, ρ₂₀ = 1/σ (default 1.7241e-8 Ω·m,
  IEC 60028 annealed copper standard), α = 0.00393 /K (IEC 60028 / NIST Circular 31).

The sparse system (one unknown per copper cell and per corrected via end) is solved directly with
scipy (imported here, only when a rail declares sources and loads).  DC only: no thermal coupling
(the temperature is declared, not solved).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import ProjectConfig, RailSpec, as_config
from ..model import Board

if TYPE_CHECKING:
    from . import Analysis
    from .stackup import StackupBasis

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
#: Peaceman's equivalent radius of a 5-point grid cell, in cell sizes
PEACEMAN = 0.198
#: the solve's default size budget (unknowns); the cell grows until the rail fits
MAX_NODES = 40_000
#: smallest cell the solve uses (mm)
MIN_CELL_MM = 0.1


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


# ---------------------------------------------------------------------------------------------
# geometry
# ---------------------------------------------------------------------------------------------


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


@dataclass
class Net:
    """The discretised copper of one net group (a rail or its return) and its solution."""

    h: float
    origin: tuple[float, float]
    shape: tuple[int, int]  # (ny, nx)
    layers: tuple[int, ...]  # stack indexes with copper
    node: np.ndarray  # (L, ny, nx) int: node id, -1 = no copper
    voltage: np.ndarray | None = None  # per node (V)
    jmax: dict[int, tuple[float, tuple[float, float]]] = field(default_factory=dict)
    j_grid: dict[int, np.ndarray] = field(default_factory=dict)  # layer -> (ny, nx) A/mm²
    via_current: np.ndarray | None = None  # per via row (A)
    via_rows: np.ndarray | None = None
    source_current: float = 0.0
    load_current: float = 0.0
    nodes: int = 0


def _cell(x: np.ndarray, y: np.ndarray, x0: float, y0: float, h: float, nx: int, ny: int):  # noqa: ANN202
    ix = np.clip(np.floor((x - x0) / h).astype(np.int64), 0, nx - 1)
    iy = np.clip(np.floor((y - y0) / h).astype(np.int64), 0, ny - 1)
    return ix, iy


def _pad_cells(
    pad: Any, x0: float, y0: float, h: float, nx: int, ny: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cells whose centre lies in the pad's (rotation-aware) rectangle, at least its centre cell."""
    half = 0.5 * max(pad.width, pad.height) * 1.0
    ix0, iy0 = _cell(np.array([pad.x - half]), np.array([pad.y - half]), x0, y0, h, nx, ny)
    ix1, iy1 = _cell(np.array([pad.x + half]), np.array([pad.y + half]), x0, y0, h, nx, ny)
    gx, gy = np.meshgrid(np.arange(ix0[0], ix1[0] + 1), np.arange(iy0[0], iy1[0] + 1))
    cx = x0 + (gx.ravel() + 0.5) * h - pad.x
    cy = y0 + (gy.ravel() + 0.5) * h - pad.y
    a = math.radians(pad.rotation or 0.0)
    u = cx * math.cos(a) - cy * math.sin(a)
    v = cx * math.sin(a) + cy * math.cos(a)
    inside = (np.abs(u) <= pad.width / 2) & (np.abs(v) <= pad.height / 2)
    if pad.shape in ("circle",):
        inside = (u * u + v * v) <= (pad.width / 2) ** 2
    c_ix, c_iy = _cell(np.array([pad.x]), np.array([pad.y]), x0, y0, h, nx, ny)
    xs = np.concatenate([gx.ravel()[inside], c_ix])
    ys = np.concatenate([gy.ravel()[inside], c_iy])
    uniq = np.unique(ys * nx + xs)
    return uniq % nx, uniq // nx


def _lands(
    vias: Any, vrows: np.ndarray, pads: Sequence[tuple[Any, Any]], n_layers: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per copper layer, the rail's via lands and pads there: (centres (n, 2), radii (n,)).  A
    via's land is its diameter; a pad's, the circle its rectangle fits in (a track ending in
    the rectangle's corner beyond the pad is rare and short)."""
    out: dict[int, tuple[list[Any], list[float]]] = {}
    for r in vrows.tolist():
        for li in range(int(vias.start[r]), int(vias.end[r]) + 1):
            got = out.setdefault(li, ([], []))
            got[0].append(vias.pos[r])
            got[1].append(0.5 * float(vias.diameter[r]))
    for _fp, p in pads:
        for li in p.copper_layers:
            if 0 <= li < n_layers:
                got = out.setdefault(li, ([], []))
                got[0].append((p.x, p.y))
                got[1].append(0.5 * min(p.width, p.height))
    return {li: (np.asarray(c, float).reshape(-1, 2), np.asarray(r)) for li, (c, r) in out.items()}


def _snap_to_lands(
    ends: np.ndarray, layers: np.ndarray, lands: Mapping[int, tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    """Track ends moved onto the centre of the via land or pad they end on (same layer): KiCad
    joins a track to a via or pad wherever its end lies in the land, so the solve must too,
    whatever cell the end falls in (on vme-wren the BGA dogbones of IC14 end 8 µm off their
    vias' centres, in the next 0.156 mm cell: ten balls of the core rail looked unrouted)."""
    from scipy.spatial import cKDTree

    out = np.array(ends, float, copy=True)
    for li in np.unique(layers).tolist():
        got = lands.get(int(li))
        if got is None or not len(got[1]):
            continue
        centres, radii = got
        sel = np.flatnonzero(layers == li)
        dist, k = cKDTree(centres).query(out[sel], distance_upper_bound=float(radii.max()))
        ok = np.isfinite(dist)
        ok[ok] &= dist[ok] <= radii[k[ok]]
        out[sel[ok]] = centres[k[ok]]
    return out


def no_path_message(
    board: Board, nets: set[int], ref: str, cut: Sequence[Any], sources: Sequence[str], h: float
) -> str:
    """Why a load cannot be solved: its pads without a copper path to a source, named with
    where they are, and what the board's connectivity (:mod:`.connectivity`, KiCad's joining
    rules) says of them: not joined to any source pad on the copper (route them), or joined
    there, so the solver's ``h``-mm grid does not resolve the path (a thin track between
    fills): the mesh, not the board."""
    from .connectivity import net_islands

    shown = ", ".join(f"{ref}.{p.number} ({p.x:.2f}, {p.y:.2f})" for p in cut[:4])
    more = f" and {len(cut) - 4} more" if len(cut) > 4 else ""
    names = {f"{ref}.{p.number}" for p in cut}
    src = set(sources)
    joined = False
    for isl in net_islands(board, sorted(nets)).values():
        for group in isl.pad_groups:
            refs = {g.rsplit(".", 1)[0] for g in group}
            if names & set(group) and refs & src:
                joined = True
    why = (
        f"the board's copper joins them to a source, but the {h:g} mm solver grid does not "
        "resolve the path (a track narrower than a cell between fills)"
        if joined
        else f"the board's copper does not join them to any source ({', '.join(sources)}): "
        "not routed, as open_channel / KiCad's DRC count it"
    )
    return f"load {ref}: pads {shown}{more} have no copper path to a source: {why}"


def solve_net(
    board: Board,
    net_ids: Sequence[int],
    sources: Sequence[str],
    loads: Mapping[str, float],
    voltage: float,
    copper: Copper,
    *,
    cell_mm: float | None = None,
    max_nodes: int = MAX_NODES,
    sign: float = 1.0,
) -> tuple[Net, dict[str, Any]]:
    """Solve the DC potential of the copper of ``net_ids``; returns the net and the per-load
    results.  ``sign`` = -1 solves a return net (the loads push current in; the drop is a rise)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla

    nets = set(int(n) for n in net_ids)
    L = board.layer_count
    thick, zmid, _ = layer_geometry(board)
    rho_ = copper.rho_ohm_m
    sigma = 1.0 / rho_
    # ---- the items ----------------------------------------------------------------------------
    zones = [(z, li) for z in board.zones if not z.keepout and z.net in nets for li in z.filled]
    tr = board.tracks
    trows = np.flatnonzero(np.isin(tr.net, list(nets))) if len(tr) else np.zeros(0, np.int64)
    vs = board.vias
    vrows = np.flatnonzero(np.isin(vs.net, list(nets))) if len(vs) else np.zeros(0, np.int64)
    pads = [(fp, p) for fp, p in board.pads if p.net in nets]
    # bounds
    xs: list[float] = []
    ys: list[float] = []
    for z, li in zones:
        for ring in z.filled.get(li, ()):
            if len(ring):
                xs += [float(ring[:, 0].min()), float(ring[:, 0].max())]
                ys += [float(ring[:, 1].min()), float(ring[:, 1].max())]
    if len(trows):
        pts = np.vstack([tr.start[trows], tr.end[trows]])
        xs += [float(pts[:, 0].min()), float(pts[:, 0].max())]
        ys += [float(pts[:, 1].min()), float(pts[:, 1].max())]
    if len(vrows):
        xs += [float(vs.pos[vrows, 0].min()), float(vs.pos[vrows, 0].max())]
        ys += [float(vs.pos[vrows, 1].min()), float(vs.pos[vrows, 1].max())]
    for _fp, p in pads:
        xs += [p.x - p.width, p.x + p.width]
        ys += [p.y - p.width, p.y + p.width]
    if not xs:
        raise ValueError("the rail's nets have no copper")
    used_layers = sorted(
        {li for _z, li in zones}
        | {int(v) for v in tr.layer[trows]}
        | {li for _fp, p in pads for li in p.copper_layers}
        | {li for r in vrows for li in range(int(vs.start[r]), int(vs.end[r]) + 1)}
    )
    used_layers = [li for li in used_layers if 0 <= li < L]
    w, hgt = max(xs) - min(xs), max(ys) - min(ys)
    if cell_mm is None:
        # the copper the grid holds: zone fills, tracks, pads (not the bounding box of every
        # layer a through via crosses, which holds only the via's own pad there)
        area = sum(z.filled_area_mm2(li) for z, li in zones)
        area += float((tr.width[trows] * np.hypot(*(tr.end[trows] - tr.start[trows]).T)).sum())
        area += sum(p.width * p.height * len(p.copper_layers) for _fp, p in pads)
        area = max(area, 1e-6)
        cell_mm = max(MIN_CELL_MM, math.sqrt(area / max_nodes))
    h = float(cell_mm)
    # cells aligned on multiples of h: the same copper gives the same grid wherever it starts
    x0 = math.floor(min(xs) / h) * h - h
    y0 = math.floor(min(ys) / h) * h - h
    nx = int(math.ceil((w + 2 * h) / h)) + 1
    ny = int(math.ceil((hgt + 2 * h) / h)) + 1
    mask = np.zeros((L, ny, nx), bool)
    cx = x0 + (np.arange(nx) + 0.5) * h
    cy = y0 + (np.arange(ny) + 0.5) * h
    # ---- zone fills -----------------------------------------------------------------------------
    import shapely

    for z, li in zones:
        reg = z.region(li)
        if reg is None or reg.is_empty:
            continue
        bx0, by0, bx1, by1 = reg.bounds
        i0, j0 = _cell(np.array([bx0]), np.array([by0]), x0, y0, h, nx, ny)
        i1, j1 = _cell(np.array([bx1]), np.array([by1]), x0, y0, h, nx, ny)
        gx, gy = np.meshgrid(cx[i0[0] : i1[0] + 1], cy[j0[0] : j1[0] + 1])
        inside = shapely.contains_xy(reg, gx, gy)
        mask[li, j0[0] : j1[0] + 1, i0[0] : i1[0] + 1] |= inside
    # only fill copper conducts sideways from cell to cell: pads, track ends and vias outside a
    # fill are joined by their tracks and barrels alone (two balls side by side are not shorted)
    fill = mask.copy()
    # ---- pads, track ends, vias ----------------------------------------------------------------------
    pad_cells: list[tuple[Any, Any, list[tuple[int, np.ndarray, np.ndarray]]]] = []
    for fp, p in pads:
        got = []
        for li in p.copper_layers:
            if 0 <= li < L:
                px, py = _pad_cells(p, x0, y0, h, nx, ny)
                mask[li, py, px] = True
                got.append((li, px, py))
        pad_cells.append((fp, p, got))
    tl = tr.layer[trows].astype(np.int64)
    lands = _lands(vs, vrows, pads, L)
    e0 = _snap_to_lands(tr.start[trows], tl, lands)
    e1 = _snap_to_lands(tr.end[trows], tl, lands)
    t_ix0, t_iy0 = _cell(e0[:, 0], e0[:, 1], x0, y0, h, nx, ny)
    t_ix1, t_iy1 = _cell(e1[:, 0], e1[:, 1], x0, y0, h, nx, ny)
    mask[tl, t_iy0, t_ix0] = True
    mask[tl, t_iy1, t_ix1] = True
    v_ix, v_iy = _cell(vs.pos[vrows, 0], vs.pos[vrows, 1], x0, y0, h, nx, ny)
    # a via is a node on its end layers and where the rail has other copper under it; on a
    # layer where only its own pad is, the barrel passes by (no current leaves there)
    for k, r in enumerate(vrows):
        mask[int(vs.start[r]), v_iy[k], v_ix[k]] = True
        mask[int(vs.end[r]), v_iy[k], v_ix[k]] = True
    used_layers = [li for li in used_layers if mask[li].any()]
    node = np.full(mask.shape, -1, np.int64)
    n_cells = int(mask.sum())
    node[mask] = np.arange(n_cells)
    # a pad (its copper, solder and the part's lead or ball) is one equipotential per layer:
    # its cells are one node
    canon = np.arange(n_cells)
    for _fp, _p, got in pad_cells:
        for li, px, py in got:
            ids_ = node[li, py, px]
            canon[ids_] = canon[ids_].min()
    if pad_cells:
        # follow the chains of merges (pads that overlap) to their root
        while True:
            nxt = canon[canon]
            if (nxt == canon).all():
                break
            canon = nxt
        _u, inv = np.unique(canon, return_inverse=True)
        node[mask] = inv[node[mask]]
        n_cells = int(len(_u))
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    # in-plane grid edges
    for li in range(L):
        if not mask[li].any():
            continue
        g = sigma * thick[li] * 1e-3  # S (square cell)
        a, b = node[li, :, :-1], node[li, :, 1:]
        ok = (a >= 0) & (b >= 0) & (a != b) & fill[li, :, :-1] & fill[li, :, 1:]
        rows.append(a[ok])
        cols.append(b[ok])
        gs.append(np.full(int(ok.sum()), g))  # noqa: E702
        a, b = node[li, :-1, :], node[li, 1:, :]
        ok = (a >= 0) & (b >= 0) & (a != b) & fill[li, :-1, :] & fill[li, 1:, :]
        rows.append(a[ok])
        cols.append(b[ok])
        gs.append(np.full(int(ok.sum()), g))  # noqa: E702
    n_grid_edges = int(sum(len(r) for r in rows))
    # tracks
    if len(trows):
        seg = np.hypot(*(tr.end[trows] - tr.start[trows]).T)
        arc = ~np.isnan(tr.mid[trows, 0])
        if arc.any():
            m = tr.mid[trows][arc]
            seg[arc] = np.hypot(*(m - tr.start[trows][arc]).T) + np.hypot(
                *(tr.end[trows][arc] - m).T
            )
        a = node[tl, t_iy0, t_ix0]
        b = node[tl, t_iy1, t_ix1]
        keep = a != b
        r_tr = rho_ * 1e3 * seg / (tr.width[trows] * thick[tl])
        rows.append(a[keep])
        cols.append(b[keep])
        gs.append(1.0 / np.maximum(r_tr[keep], 1e-12))  # noqa: E702
    # vias and plated holes: barrel segments between consecutive layers, Peaceman ends
    extra = n_cells
    holes: list[tuple[float, float, float, int, int, int]] = []  # x, y, drill, start, end, via row
    for r in vrows:
        holes.append(
            (
                float(vs.pos[r, 0]),
                float(vs.pos[r, 1]),
                float(vs.drill[r]),
                int(vs.start[r]),
                int(vs.end[r]),
                int(r),
            )
        )
    for _fp, p, _got in pad_cells:
        if p.type == "thru_hole" and p.drill_mm and len(p.copper_layers) > 1:
            holes.append(
                (p.x, p.y, float(p.drill_mm), min(p.copper_layers), max(p.copper_layers), -1)
            )
    b_rows: list[int] = []
    b_cols: list[int] = []
    b_g: list[float] = []
    b_hole: list[int] = []
    for hi_, (hx, hy, drill, s, e, _vr) in enumerate(holes):
        ix, iy = _cell(np.array([hx]), np.array([hy]), x0, y0, h, nx, ny)
        ix, iy = int(ix[0]), int(iy[0])
        prev: tuple[int, int] | None = None  # (layer, node)
        for li in range(s, e + 1):
            cn = node[li, iy, ix]
            if cn < 0:
                continue
            end_node = cn
            r_w = drill / 2.0
            r_eq = PEACEMAN * h
            interior = (
                0 < ix < nx - 1
                and 0 < iy < ny - 1
                and bool(fill[li, iy, ix])
                and bool(fill[li, iy, ix - 1])
                and bool(fill[li, iy, ix + 1])
                and bool(fill[li, iy - 1, ix])
                and bool(fill[li, iy + 1, ix])
            )
            if interior and r_eq > r_w:
                end_node = extra
                extra += 1
                rows.append(np.array([end_node]))
                cols.append(np.array([cn]))  # noqa: E702
                gs.append(np.array([2 * math.pi * sigma * thick[li] * 1e-3 / math.log(r_eq / r_w)]))
            if prev is not None:
                rb = barrel_resistance(zmid[li] - zmid[prev[0]], drill, copper.plating_mm, rho_)
                b_rows.append(prev[1])
                b_cols.append(end_node)
                b_g.append(1.0 / rb)
                b_hole.append(hi_)  # noqa: E702
            prev = (li, end_node)
    rows.append(np.array(b_rows, np.int64))
    cols.append(np.array(b_cols, np.int64))
    gs.append(np.array(b_g))  # noqa: E702
    N = extra
    r_all = np.concatenate(rows).astype(np.int64)
    c_all = np.concatenate(cols).astype(np.int64)
    g_all = np.concatenate(gs).astype(float)
    G = sp.coo_matrix(
        (np.r_[g_all, g_all], (np.r_[r_all, c_all], np.r_[c_all, r_all])), shape=(N, N)
    ).tocsr()
    lap = (sp.diags(np.asarray(G.sum(axis=1)).ravel()) - G).tocsr()
    # ---- sources and loads ------------------------------------------------------------------------
    src_nodes: set[int] = set()
    inj = np.zeros(N)
    load_nodes: dict[str, list[int]] = {}
    by_ref: dict[str, list[tuple[Any, list[tuple[int, np.ndarray, np.ndarray]]]]] = {}
    for fp, p, got in pad_cells:
        by_ref.setdefault(fp.reference, []).append((p, got))
    missing = [r for r in list(sources) + list(loads) if r not in by_ref]
    if missing:
        raise ValueError(f"no pad of {', '.join(missing)} is on the rail's nets")
    for ref in sources:
        for _p, got in by_ref[ref]:
            for li, px, py in got:
                src_nodes.update(int(n) for n in node[li, py, px])
    load_pads: dict[str, list[tuple[Any, list[int]]]] = {}
    for ref, amps in loads.items():
        ps = by_ref[ref]
        per_pad = float(amps) / len(ps)
        ln: list[int] = []
        for _p, got in ps:
            cells = (
                np.concatenate([node[li, py, px] for li, px, py in got])
                if got
                else np.zeros(0, np.int64)
            )
            if len(cells) == 0:
                continue
            np.add.at(inj, cells, -sign * per_pad / len(cells))
            ln += [int(c) for c in cells]
            load_pads.setdefault(ref, []).append((_p, [int(c) for c in cells]))
        load_nodes[ref] = ln
    # ---- connected component of the sources ------------------------------------------------------
    from scipy.sparse.csgraph import connected_components

    _, comp = connected_components(G, directed=False)
    src = np.array(sorted(src_nodes), np.int64)
    live = np.isin(comp, np.unique(comp[src]))
    for ref, ln in load_nodes.items():
        if ln and not live[ln].all():
            cut = [p for p, cells in load_pads.get(ref, []) if not live[cells].all()]
            raise ValueError(no_path_message(board, nets, ref, cut, list(sources), h))
    fixed = np.zeros(N, bool)
    fixed[src] = True
    free = np.flatnonzero(live & ~fixed)
    vfull = np.full(N, np.nan)
    vfull[fixed] = voltage
    K = lap[free][:, free].tocsc()
    rhs = inj[free] - lap[free][:, src] @ np.full(len(src), voltage)
    vfull[free] = sla.spsolve(K, rhs) if len(free) else np.zeros(0)
    vz = np.nan_to_num(vfull, nan=voltage)
    # current out of the sources = what the loads draw
    src_out = float((lap[src] @ vz).sum())
    # ---- results -----------------------------------------------------------------------------------
    net = Net(
        h=h,
        origin=(x0, y0),
        shape=(ny, nx),
        layers=tuple(used_layers),
        node=node,
        voltage=vfull,
        nodes=N,
    )
    net.source_current = sign * src_out
    net.load_current = float(sum(loads.values()))
    # current density per layer with fills or tracks (cell centres from the grid edges); a
    # layer holding only pads and via lands carries its current in the barrels
    conducting = sorted({li for _z, li in zones} | {int(v) for v in tl})
    net.map_layers = tuple(conducting)  # type: ignore[attr-defined]
    for li in conducting:
        nd = node[li]
        if not (nd >= 0).any():
            continue
        vv = np.where(nd >= 0, vz[np.maximum(nd, 0)], np.nan)
        g = sigma * thick[li] * 1e-3
        fl = fill[li]
        ex = (nd[:, :-1] >= 0) & (nd[:, 1:] >= 0) & fl[:, :-1] & fl[:, 1:]
        ey = (nd[:-1, :] >= 0) & (nd[1:, :] >= 0) & fl[:-1, :] & fl[1:, :]
        ix_ = np.where(ex, (vv[:, :-1] - vv[:, 1:]) * g, 0.0)
        iy_ = np.where(ey, (vv[:-1, :] - vv[1:, :]) * g, 0.0)
        jx = np.zeros(nd.shape)
        jy = np.zeros(nd.shape)
        jx[:, :-1] += ix_ / 2
        jx[:, 1:] += ix_ / 2
        jy[:-1, :] += iy_ / 2
        jy[1:, :] += iy_ / 2
        jmag = np.hypot(jx, jy) / (h * thick[li])  # A/mm²
        jmag[nd < 0] = np.nan
        # tracks on this layer: I / (w t)
        best = float(np.nanmax(jmag)) if np.isfinite(jmag).any() else 0.0
        iy_m, ix_m = np.unravel_index(int(np.nanargmax(np.nan_to_num(jmag, nan=-1))), jmag.shape)
        where = (x0 + (ix_m + 0.5) * h, y0 + (iy_m + 0.5) * h)
        if len(trows):
            on = tl == li
            if on.any():
                a = node[tl, t_iy0, t_ix0][on]
                b = node[tl, t_iy1, t_ix1][on]
                i_t = np.abs(vz[a] - vz[b]) / np.maximum(
                    rho_ * 1e3 * seg[on] / (tr.width[trows][on] * thick[li]), 1e-12
                )  # a zero-length track joins one node to itself: no current
                jt = i_t / (tr.width[trows][on] * thick[li])
                k = int(np.argmax(jt))
                if jt[k] > best:
                    best = float(jt[k])
                    rr = trows[on][k]
                    where = (
                        float((tr.start[rr, 0] + tr.end[rr, 0]) / 2),
                        float((tr.start[rr, 1] + tr.end[rr, 1]) / 2),
                    )
        net.jmax[li] = (best, (round(where[0], 3), round(where[1], 3)))
        net.j_grid[li] = jmag
    # via currents: the largest barrel segment current of each via
    if b_rows:
        ib = np.abs(vz[np.array(b_rows)] - vz[np.array(b_cols)]) * np.array(b_g)
        per_hole = np.zeros(len(holes))
        np.maximum.at(per_hole, np.array(b_hole), ib)
    else:
        per_hole = np.zeros(len(holes))
    net.via_rows = np.array([hh[5] for hh in holes], np.int64)
    net.via_current = per_hole
    net.holes = holes  # type: ignore[attr-defined]
    per_load: dict[str, Any] = {}
    for ref, ln in load_nodes.items():
        vals = vz[ln]
        per_load[ref] = float(vals.min() if sign > 0 else vals.max())
    return net, {
        "v_extreme": per_load,
        "source_current": net.source_current,
        "grid_edges": n_grid_edges,
    }


# ---------------------------------------------------------------------------------------------
# rails
# ---------------------------------------------------------------------------------------------

#: the config keys that put a rail in the IR-drop solve's scope
IR_KEYS = ("sources", "loads", "return_nets", "ir_drop_max_pct")


@dataclass
class RailIR:
    """One declared rail's IR-drop result (or why it has none: ``missing``)."""

    name: str
    nets: tuple[str, ...]
    voltage: float | None
    sources: tuple[str, ...] = ()
    loads: dict[str, float] = field(default_factory=dict)
    max_pct: float | None = None
    missing: list[str] = field(default_factory=list)
    error: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)  # per load
    worst_drop_mv: float | None = None
    worst_drop_pct: float | None = None
    worst_ref: str | None = None
    worst_pos: tuple[float, float] | None = None
    jmax: dict[str, tuple[float, tuple[float, float]]] = field(default_factory=dict)
    vias: list[dict[str, Any]] = field(default_factory=list)  # worst vias, by current
    max_via_current_a: float | None = None
    resistance_ohm: float | None = None
    source_current_a: float | None = None
    mesh: dict[str, Any] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    net: Net | None = None
    return_net: Net | None = None
    #: how the rail came into scope: "declared" (an IR key or ``role: core`` in the config) or
    #: "assumed" (the PDN analysis recognised it as the accelerator core, analysis/pdn.py)
    role_basis: str | None = None
    role_evidence: str = ""
    #: a ready-to-paste ``rails:`` entry (YAML lines) when sources/loads are missing
    suggest: str = ""


def _ids(board: Board, patterns: Sequence[str]) -> list[int]:
    from .pdn import _match

    return [i for i, n in enumerate(board.nets) if i and n and _match(patterns, n)]


def _load_pads_pos(board: Board, ref: str, ids: set[int]) -> tuple[float, float] | None:
    for fp in board.footprints:
        if fp.reference == ref:
            ps = [p for p in fp.pads if p.net in ids]
            if ps:
                return (
                    round(sum(p.x for p in ps) / len(ps), 3),
                    round(sum(p.y for p in ps) / len(ps), 3),
                )
    return None


def solve_rail(
    board: Board,
    spec: RailSpec | Mapping[str, Any],
    config: ProjectConfig | Mapping[str, Any] | None = None,
    *,
    cell_mm: float | None = None,
    max_nodes: int = MAX_NODES,
    coarse_check: bool = True,
    stackup_facts: StackupBasis | None = None,
) -> RailIR:
    """Solve one ``rails:`` entry (its nets, sources, loads, optional return nets).
    ``stackup_facts`` (``Analysis.stackup_basis``) says whether the stack-up's thicknesses are
    KiCad's auto-generated defaults; without it, thicknesses the stack-up states are declared."""
    if not isinstance(spec, RailSpec):  # already-valid rail data (tests, bench): typed once
        spec = RailSpec.of({"name": "rail", **spec})
    name = spec.name
    ids = _ids(board, spec.nets)
    volt = spec.voltage
    out = RailIR(
        name=name,
        nets=tuple(board.nets[i] for i in ids),
        voltage=None if volt is None else float(volt),
        sources=spec.sources,
        loads=dict(spec.loads),
        max_pct=spec.ir_drop_max_pct,
    )
    if not out.sources:
        out.missing.append("sources: [regulator footprints whose pads on the rail are its outputs]")
    if not out.loads:
        out.missing.append("loads: {footprint: DC current in A}")
    if out.voltage is None:
        out.missing.append("voltage: V")
    if not ids:
        out.missing.append("nets: the rail's net patterns match no net of the board")
    if out.missing:
        return out
    cu = copper_of(config)
    _t, _z, geo_basis = layer_geometry(board)
    if geo_basis == "declared" and stackup_facts is not None:
        geo_basis = stackup_facts.thickness  # KiCad's auto stack-up: the one owner says so
    out.basis = {
        "geometry": "measured",
        "sources": "declared",
        "loads": "declared",
        "voltage": "declared",
        "stackup_thickness": geo_basis,
        **cu.basis,
    }
    try:
        net, res = solve_net(
            board,
            ids,
            out.sources,
            out.loads,
            out.voltage,
            cu,
            cell_mm=cell_mm,
            max_nodes=max_nodes,
        )
        ret = None
        rres = None
        rids = _ids(board, spec.return_nets)
        if rids:
            ret, rres = solve_net(
                board, rids, out.sources, out.loads, 0.0, cu, cell_mm=net.h, sign=-1.0
            )
    except ValueError as exc:
        out.error = str(exc)
        return out
    out.net, out.return_net = net, ret
    out.source_current_a = net.source_current
    total = sum(out.loads.values())
    power = 0.0
    idset = set(ids)
    for ref, amps in out.loads.items():
        vmin = res["v_extreme"][ref]
        rise = rres["v_extreme"][ref] if rres else 0.0
        drop = out.voltage - vmin + rise
        power += amps * drop
        out.rows.append(
            {
                "ref": ref,
                "current_a": amps,
                "v_min": round(vmin - rise, 6),
                "drop_mv": round(drop * 1e3, 4),
                "drop_pct": round(100.0 * drop / out.voltage, 4),
                **({"return_rise_mv": round(rise * 1e3, 4)} if rres else {}),
            }
        )
    worst = max(out.rows, key=lambda r: r["drop_mv"])
    out.worst_drop_mv, out.worst_drop_pct, out.worst_ref = (
        worst["drop_mv"],
        worst["drop_pct"],
        worst["ref"],
    )
    out.worst_pos = _load_pads_pos(board, worst["ref"], idset)
    out.resistance_ohm = power / (total * total) if total > 0 else None
    for li, (j, pos) in net.jmax.items():
        out.jmax[board.layer_name(li)] = (j, pos)
    vias: list[dict[str, Any]] = []
    holes = getattr(net, "holes", [])
    if net.via_current is not None and len(holes):
        order = np.argsort(-net.via_current)
        for k in order[:20]:
            hx, hy, drill, s, e, vr = holes[int(k)]
            vias.append(
                {
                    "x": round(hx, 4),
                    "y": round(hy, 4),
                    "drill_mm": drill,
                    "current_a": round(float(net.via_current[k]), 6),
                    "span": [board.layer_name(s), board.layer_name(e)],
                    "uuid": (board.vias.uuid[vr] if 0 <= vr < len(board.vias.uuid) else ""),
                    "kind": "via" if vr >= 0 else "pth",
                }
            )
        out.max_via_current_a = float(net.via_current.max())
    out.vias = vias
    out.mesh = {
        "cell_mm": round(net.h, 4),
        "unknowns": net.nodes,
        "layers": [board.layer_name(li) for li in net.layers],
    }
    if coarse_check and cell_mm is None:
        # the same solve on a grid twice as coarse: how far the answer moves with the mesh
        try:
            n2, r2 = solve_net(
                board, ids, out.sources, out.loads, out.voltage, cu, cell_mm=2 * net.h
            )
            d2 = max(out.voltage - v for v in r2["v_extreme"].values())
            d1 = max(out.voltage - v for v in res["v_extreme"].values())
            out.mesh["coarse_cell_mm"] = round(n2.h, 4)
            out.mesh["coarse_rail_drop_mv"] = round(d2 * 1e3, 4)
            out.mesh["rail_drop_mv"] = round(d1 * 1e3, 4)
            out.mesh["change_pct"] = round(100.0 * abs(d2 - d1) / d1, 3) if d1 > 0 else 0.0
        except ValueError:
            pass
    return out


def declared_rails(config: ProjectConfig | Mapping[str, Any] | None) -> list[RailSpec]:
    """The ``rails:`` entries that declare anything of the IR-drop solve."""
    return [r for r in as_config(config).rails if r.declares_ir_drop]


#: a footprint that may be a regulator output on the rail: an inductor (L…), or a U/PS/VR/Q…
#: whose library name or value reads like a regulator, power stage or power module
_INDUCTOR_REF = re.compile(r"^L\d", re.I)
_REG_REF = re.compile(r"^(U|IC|PS|VR|VRM|Q|PM)\d", re.I)
_REG_WORD = re.compile(
    r"regulat|vrm|buck|pmic|power.?stage|drmos|smps|dc.?dc|ldo|converter|tps\d|ltc\d|ltm\d"
    r"|lt\d|isl\d|ir\d{4}|mp\d|max\d|tda\d|adp\d|lm\d|ncp\d|mic\d|rt\d|sy\d|ap\d",
    re.I,
)
#: most candidate refs listed in the paste-ready entry
MAX_CANDIDATES = 16


def candidate_sources(board: Board, ids: set[int], exclude: set[str]) -> list[str]:
    """Footprints with a pad on the rail that look like its regulator outputs: inductors first
    (a buck's output inductor sits on the rail; its switching stage does not), then regulators
    and power stages by name.  Guesses from names only, so the entry says so."""
    inductors: list[str] = []
    regs: list[str] = []
    for fp in board.footprints:
        ref = fp.reference or ""
        if ref in exclude or not any(p.net in ids for p in fp.pads):
            continue
        text = f"{fp.name} {fp.value}"
        if _INDUCTOR_REF.match(ref) or "inductor" in text.lower():
            inductors.append(ref)
        elif _REG_REF.match(ref) and _REG_WORD.search(text):
            regs.append(ref)

    def natural(ref: str) -> tuple[str, int]:
        m = re.match(r"^(\D*)(\d*)", ref)
        return (m.group(1).upper(), int(m.group(2) or 0)) if m else (ref, 0)

    out = sorted(set(inductors), key=natural) + sorted(set(regs), key=natural)
    return out[:MAX_CANDIDATES]


def paste_entry(
    board: Board,
    name: str,
    nets: Sequence[str],
    voltage: float | None,
    spec: RailSpec | None = None,
) -> str:
    """A ``rails:`` entry to paste into accel-drc.yaml: the rail's name, nets and voltage as the
    board (or config) has them, ``role: core``, the candidate ``sources`` (guessed, and said to
    be) and ``loads`` on the largest BGA with the current left to the designer."""
    from .pdn import _balls, largest_bgas

    ids = set(_ids(board, list(nets))) if nets else set()
    bgas = [fp for fp in largest_bgas(board) if any(p.net in ids for p in _balls(fp))]
    bga_refs = [fp.reference for fp in bgas]
    pats = list(spec.nets) if spec is not None and spec.nets else [re.escape(n) for n in nets]
    lines = [
        "rails:",
        f"  - name: {name}",
        "    nets: [" + ", ".join(f"'{p}'" for p in pats) + "]",
        f"    voltage: {voltage:g}" if voltage is not None else "    voltage: <V>",
        "    role: core",
    ]
    if spec is not None and spec.sources:
        lines.append("    sources: [" + ", ".join(spec.sources) + "]")
    else:
        cands = candidate_sources(board, ids, set(bga_refs))
        if cands:
            lines.append(
                "    sources: [" + ", ".join(cands) + "]  # GUESSED from the footprints' names:"
                " keep only the regulator outputs"
            )
        else:
            lines.append("    sources: [<regulator or output-inductor refs>]")
    if spec is not None and spec.loads:
        lines.append("    loads: {" + ", ".join(f"{k}: {v:g}" for k, v in spec.loads.items()) + "}")
    elif bga_refs:
        lines.append(
            "    loads: {" + ", ".join(f"{r}: <A>" for r in bga_refs) + "}  # DC current in A"
        )
    else:
        lines.append("    loads: {<load ref>: <A>}  # DC current in A")
    return "\n".join(lines)


def _core_unsolved(board: Board, rail: Any, spec: RailSpec | None) -> RailIR:
    """A core rail (declared ``role: core``, or recognised) that declares no IR-drop inputs:
    ``cannot_verify`` with the entry to paste."""
    volt = rail.voltage
    out = RailIR(
        name=rail.name,
        nets=tuple(rail.nets),
        voltage=None if volt is None else float(volt),
        role_basis=rail.role_basis,
        role_evidence=rail.role_evidence,
    )
    out.missing.append("sources: [regulator footprints whose pads on the rail are its outputs]")
    out.missing.append("loads: {footprint: DC current in A}")
    if volt is None:
        out.missing.append("voltage: V")
    out.suggest = paste_entry(board, rail.name, rail.nets, out.voltage, spec)
    return out


def compute(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None,
    rails: Sequence[Any] | None = None,
    stackup_facts: StackupBasis | None = None,
) -> list[RailIR]:
    """Every declared rail's IR drop, and the core rail when it declares none of it.

    In scope: a ``rails:`` entry with an IR key (``sources``, ``loads``, ``return_nets``,
    ``ir_drop_max_pct``) is solved (or says what it lacks); the accelerator's core rail —
    declared ``role: core``, or, when no rail is, the one :func:`pdn.recognise_core` picks from
    ``rails`` (basis ``assumed``) — without them is ``cannot_verify`` with a ready-to-paste
    entry.  Any other rail without IR keys is out of scope: the seeds ask for the accelerator
    core's drop (seed 001: ~1,000 A at 0.7–0.8 V); an I/O or memory rail's few amperes are not
    the question, and asking to declare every rail of a 14-rail board would bury the one
    finding that matters.  Nothing is solved (no scipy import) when no rail declares inputs."""
    config = as_config(config)
    out = []
    done: set[str] = set()
    specs = {r.name: r for r in config.rails}
    for spec in declared_rails(config):
        r = solve_rail(board, spec, config, stackup_facts=stackup_facts)
        if r.missing:
            r.role_basis = "declared" if spec.role == "core" else None
            r.suggest = paste_entry(board, r.name, r.nets, r.voltage, spec)
        out.append(r)
        done.add(r.name)
    for rail in rails or ():
        if rail.role != "core" or rail.name in done or not rail.nets:
            continue
        out.append(_core_unsolved(board, rail, specs.get(rail.name)))
    return out


def rail_row(r: RailIR) -> dict[str, Any]:
    """One ``--detail irdrop`` row."""
    return {
        "rail": r.name,
        "nets": list(r.nets),
        "voltage": r.voltage,
        "sources": list(r.sources),
        "loads": r.rows,
        "worst_drop_mv": r.worst_drop_mv,
        "worst_drop_pct": r.worst_drop_pct,
        "max_current_density_a_per_mm2": {k: round(v[0], 4) for k, v in r.jmax.items()},
        "max_current_density_at": {k: list(v[1]) for k, v in r.jmax.items()},
        "max_via_current_a": r.max_via_current_a,
        "worst_vias": r.vias[:10],
        "resistance_ohm": r.resistance_ohm,
        "source_current_a": r.source_current_a,
        "mesh": r.mesh,
        "method": "DC conduction, square grid on the fills (Peaceman via ends), tracks as "
        "resistors, plated barrels; scipy.sparse direct solve",
        "basis": r.basis,
        **({"missing": r.missing} if r.missing else {}),
        **({"declare_entry": r.suggest} if r.suggest else {}),
        **({"role_basis": r.role_basis} if r.role_basis else {}),
        **({"error": r.error} if r.error else {}),
    }


def irdrop_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail irdrop``."""
    return [rail_row(r) for r in analysis.irdrop]


# ---------------------------------------------------------------------------------------------
# heat maps (HTML board view): inline PNG data URIs, no imaging library
# ---------------------------------------------------------------------------------------------


def _png(rgba: np.ndarray) -> bytes:
    """A minimal RGBA PNG of an (h, w, 4) uint8 array (zlib + the four chunks PNG needs)."""
    import struct
    import zlib

    h, w = rgba.shape[:2]
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _colour(t: np.ndarray) -> np.ndarray:
    """0..1 -> blue-cyan-yellow-red (NaN transparent)."""
    t = np.clip(t, 0.0, 1.0)
    stops = np.array([[0, 0, 160], [0, 200, 220], [250, 230, 40], [220, 30, 20]], float)
    pos = t * (len(stops) - 1)
    i = np.minimum(pos.astype(int), len(stops) - 2)
    f = (pos - i)[..., None]
    rgb = stops[i] * (1 - f) + stops[i + 1] * f
    return rgb.astype(np.uint8)


def heat_maps(board: Board, r: RailIR, max_px: int = 600) -> list[dict[str, Any]]:
    """Per layer of the rail: a voltage map and a current-density map as PNG data URIs, with the
    board rectangle they cover (mm) and their colour scales."""
    import base64

    net = r.net
    if net is None or net.voltage is None:
        return []
    vz = net.voltage
    x0, y0 = net.origin
    ny, nx = net.shape
    step = max(1, int(math.ceil(max(nx, ny) / max_px)))
    out = []
    vmin = float(np.nanmin(vz))
    vmax = float(np.nanmax(vz))
    for li in getattr(net, "map_layers", net.layers):
        nd = net.node[li][::step, ::step]
        if not (nd >= 0).any():
            continue
        vv = np.where(nd >= 0, vz[np.maximum(nd, 0)], np.nan)
        jj = net.j_grid.get(li)
        jj = jj[::step, ::step] if jj is not None else np.full(nd.shape, np.nan)
        jtop = float(np.nanmax(jj)) if np.isfinite(jj).any() else 1.0
        maps = {}
        for kind, arr, lo, hi in (("voltage", vv, vmin, vmax), ("current_density", jj, 0.0, jtop)):
            t = (arr - lo) / (hi - lo) if hi > lo else np.zeros(arr.shape)
            rgba = np.zeros(arr.shape + (4,), np.uint8)
            rgba[..., :3] = _colour(np.nan_to_num(t))
            rgba[..., 3] = np.where(np.isfinite(arr), 210, 0)
            maps[kind] = "data:image/png;base64," + base64.b64encode(_png(rgba)).decode("ascii")
        out.append(
            {
                "layer": board.layer_name(li),
                "bbox": [x0, y0, x0 + nx * net.h, y0 + ny * net.h],
                "voltage_png": maps["voltage"],
                "voltage_range_v": [vmin, vmax],
                "current_density_png": maps["current_density"],
                "current_density_max_a_per_mm2": jtop,
            }
        )
    return out
