"""The IR-drop solve of one net group (a rail, or its return): its copper rasterised into a
sparse conductance network, solved for the node voltages, with the currents and current
densities that follow.

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

Limits: the cell ``h`` grows until the rail fits :data:`MAX_NODES` unknowns, never below
:data:`MIN_CELL_MM`; a load with no copper path to a source is refused with the cut it sits
behind (:func:`no_path_message`).  The sparse system (one unknown per copper cell and per
corrected via end) is solved directly with scipy (imported here, only when a rail declares
sources and loads).  DC only: no thermal coupling (the temperature is declared, not solved).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..arrays import isin, unique
from ..model import Board
from .irdrop_copper import Copper, barrel_resistance, layer_geometry

#: Peaceman's equivalent radius of a 5-point grid cell, in cell sizes

PEACEMAN = 0.198


#: the solve's default size budget (unknowns); the cell grows until the rail fits

MAX_NODES = 40_000


#: smallest cell the solve uses (mm)

MIN_CELL_MM = 0.1


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
    uniq = unique(ys * nx + xs)
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
    for li in unique(layers).tolist():
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
    trows = np.flatnonzero(isin(tr.net, list(nets))) if len(tr) else np.zeros(0, np.int64)
    vs = board.vias
    vrows = np.flatnonzero(isin(vs.net, list(nets))) if len(vs) else np.zeros(0, np.int64)
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
    live = isin(comp, unique(comp[src]))
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
