"""Width, gap and coupled length of a routed pair, measured from its tracks (the candidate
search over segment boxes, the nearest-offset gap, the longest uncoupled stretch)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...arrays import median

#: segments within this angle count as parallel
_PARALLEL_SIN = math.sin(math.radians(10.0))
#: two parallel segments farther apart than max(this × width, 0.5 mm) edge to edge are not coupled
_MAX_GAP_WIDTHS = 5.0
#: most candidate (P, N) segment pairs evaluated at once (bounds memory on dense clusters)
_CAND_BLOCK = 1 << 18
#: a box covering more grid cells than this is joined by brute force (a long diagonal run)
_GRID_MAX_CELLS = 64
#: below this many couples a box join compares every couple (cheaper than building a grid)
_SMALL_JOIN = 4096
#: direction sectors of the parallel-segment search (22.5° each: a half sector, 11.25°, is more
#: than the 10° parallel tolerance, so a segment's partners lie in its own sector or in the
#: neighbour on the side of the half it is in)
_SECTORS = 8
#: N pieces within this much (mm) of a P segment's nearest partner distance count as coupled
_SAME_OFFSET_MM = 1e-3
#: slack (mm) added to the candidate search radius, far above float rounding
_REACH_MARGIN = 1e-3

# ---------------------------------------------------------------------------------------------
# Width and gap of a routed pair, from its tracks
# ---------------------------------------------------------------------------------------------


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The value below which half the total weight lies (lower median on an exact tie)."""
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=float)[order]
    w = np.asarray(weights, dtype=float)[order]
    cum = np.cumsum(w)
    k = int(np.searchsorted(cum, 0.5 * cum[-1], side="left"))
    return float(v[min(k, v.size - 1)])


@dataclass(frozen=True)
class PairTraces:
    """Measured width and gap of one pair on one layer.

    ``width_mm``: length-weighted median width of both nets' segments on the layer.
    ``gap_mm``: median edge-to-edge spacing between parallel P and N segments, weighted by the
    length over which they run side by side; ``coupled_mm`` is that length.
    """

    width_mm: float | None
    gap_mm: float | None
    coupled_mm: float
    length_mm: float
    pos: tuple[float, float] | None
    items: tuple[str, ...]  # uuids of the segments given (pair_table keeps them on its rows)
    stretch_mm: float = 0.0  # longest contiguous run of one net with no partner alongside


def _ranges(lo: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(lo[i], lo[i] + cnt[i])`` over i, without a Python loop."""
    cnt = np.asarray(cnt, dtype=np.int64)
    return np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt - lo, cnt)


def _boxes_meet(
    alo: np.ndarray,
    ahi: np.ndarray,
    blo: np.ndarray,
    bhi: np.ndarray,
    ii: np.ndarray,
    jj: np.ndarray,
) -> np.ndarray:
    """Mask of the couples (a[ii], b[jj]) whose closed boxes intersect.  The corners may be
    given as ``(x column, y column)`` tuples of contiguous arrays (1-D gathers are several
    times cheaper than gathers of rows of an (n, 2) array)."""
    hit = alo[0][ii] <= bhi[0][jj] if isinstance(alo, tuple) else alo[ii, 0] <= bhi[jj, 0]
    if isinstance(alo, tuple):
        hit &= blo[0][jj] <= ahi[0][ii]
        hit &= alo[1][ii] <= bhi[1][jj]
        hit &= blo[1][jj] <= ahi[1][ii]
        return hit
    return (
        hit & (blo[jj, 0] <= ahi[ii, 0]) & (alo[ii, 1] <= bhi[jj, 1]) & (blo[jj, 1] <= ahi[ii, 1])
    )


def _columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])


def box_pairs(
    alo: np.ndarray,
    ahi: np.ndarray,
    blo: np.ndarray,
    bhi: np.ndarray,
    a_group: np.ndarray | None = None,
    b_group: np.ndarray | None = None,
    block: int = _CAND_BLOCK,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(i, j) index arrays of the boxes ``a[i]``, ``b[j]`` (closed, (n, 2) corners) that
    intersect and belong to the same group (``a_group``/``b_group``: non-decreasing ints; all
    one group when omitted), in blocks of about ``block`` couples.

    Every such couple is yielded at least once (a couple of two long boxes comes twice, from
    both long-box passes: callers must not count them).  A uniform grid joins the boxes (cell =
    the median box extent, keyed by group and cell): each box is listed in every cell it covers,
    the b entries sorted by key, the a entries looked up with ``searchsorted``, and a couple is
    kept only in the cell holding the low corner of the two boxes' intersection; a box covering more
    than ``_GRID_MAX_CELLS`` cells (a long diagonal run) is compared with every box of its group
    instead.  Work and memory are linear in the boxes plus the couples that lie near each other,
    never na × nb.
    """
    na, nb = len(alo), len(blo)
    if na == 0 or nb == 0:
        return
    ag = np.zeros(na, np.int64) if a_group is None else np.asarray(a_group, np.int64)
    bg = np.zeros(nb, np.int64) if b_group is None else np.asarray(b_group, np.int64)
    if na * nb <= _SMALL_JOIN:  # a short pair: every couple, no grid to build
        ii = np.repeat(np.arange(na, dtype=np.int64), nb)
        jj = np.tile(np.arange(nb, dtype=np.int64), na)
        hit = _boxes_meet(alo, ahi, blo, bhi, ii, jj) & (ag[ii] == bg[jj])
        if hit.any():
            yield ii[hit], jj[hit]
        return
    lo_all = np.array(  # per column (a reduction over axis 0 of an (n, 2) array is slow)
        [np.minimum(alo[:, k].min(), blo[:, k].min()) for k in (0, 1)], dtype=float
    )
    hi_all = np.array([np.maximum(ahi[:, k].max(), bhi[:, k].max()) for k in (0, 1)], dtype=float)
    ext_a = ahi - alo  # the larger side of each box (a column maximum: exact, and far
    ext_a = np.maximum(ext_a[:, 0], ext_a[:, 1])  # cheaper than max(axis=1) over 2 columns)
    ext_b = bhi - blo
    ext_b = np.maximum(ext_b[:, 0], ext_b[:, 1])
    cell = max(
        median(ext_a),
        median(ext_b),
        float((hi_all - lo_all).max()) / 4096.0,
        1e-6,
    )
    ncx, ncy = (np.floor((hi_all - lo_all) / cell).astype(np.int64) + 1).tolist()

    def cells(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i0 = np.floor((lo - lo_all) / cell).astype(np.int64)
        n = np.floor((hi - lo_all) / cell).astype(np.int64) - i0 + 1
        return i0, n[:, 0], n[:, 1]

    def entries(
        sel: np.ndarray, g: np.ndarray, i0: np.ndarray, nx: np.ndarray, ny: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        cnt = nx[sel] * ny[sel]
        box = np.repeat(sel, cnt)
        k = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        nxb = nx[box]
        return box, (g[box] * ncx + i0[box, 0] + k % nxb) * ncy + (i0[box, 1] + k // nxb)

    a0, anx, any_ = cells(alo, ahi)
    b0, bnx, bny = cells(blo, bhi)
    a_big = anx * any_ > _GRID_MAX_CELLS
    b_big = bnx * bny > _GRID_MAX_CELLS
    a_box, a_key = entries(np.flatnonzero(~a_big), ag, a0, anx, any_)
    b_box, b_key = entries(np.flatnonzero(~b_big), bg, b0, bnx, bny)
    order = np.argsort(b_key, kind="stable")
    b_key, b_box = b_key[order], b_box[order]
    a0x, a0y = _columns(a0)
    b0x, b0y = _columns(b0)
    cols = (_columns(alo), _columns(ahi), _columns(blo), _columns(bhi))
    first = np.searchsorted(b_key, a_key, side="left")
    cnt = np.searchsorted(b_key, a_key, side="right") - first
    cum = np.cumsum(cnt)
    e = 0
    while e < len(a_key):  # blocks of a entries holding about ``block`` couples
        before = int(cum[e - 1]) if e else 0
        f = max(int(np.searchsorted(cum, before + block, side="right")), e + 1)
        ii = np.repeat(a_box[e:f], cnt[e:f])
        jj = b_box[_ranges(first[e:f], cnt[e:f])]
        if ii.size:
            # two boxes share every cell their intersection covers: keep the couple only in
            # the cell of the intersection's low corner, so each comes once (no dedupe sort)
            # (its cell is the larger of the two boxes' low-corner cells: the cell index is a
            # monotonic function of the coordinate, so no float arithmetic per couple)
            key = ag[ii] * ncx
            key += np.maximum(a0x[ii], b0x[jj])
            key *= ncy
            key += np.maximum(a0y[ii], b0y[jj])
            hit = key == np.repeat(a_key[e:f], cnt[e:f])
            hit &= _boxes_meet(*cols, ii, jj)
            if hit.any():
                yield ii[hit], jj[hit]
        e = f
    # long boxes: against every box of the other side in the same group
    for big, g_big, g_other, swap in (
        (np.flatnonzero(a_big), ag, bg, False),
        (np.flatnonzero(b_big), bg, ag, True),
    ):
        if not big.size:
            continue
        lo = np.searchsorted(g_other, g_big[big], side="left")
        n = np.searchsorted(g_other, g_big[big], side="right") - lo
        step = max(1, block // max(int(n.max()), 1))
        for s in range(0, big.size, step):
            ii = np.repeat(big[s : s + step], n[s : s + step])
            jj = _ranges(lo[s : s + step], n[s : s + step])
            if swap:
                ii, jj = jj, ii
            hit = _boxes_meet(*cols, ii, jj)
            if hit.any():
                yield ii[hit], jj[hit]


def _sector(d: np.ndarray, half: bool = False) -> Any:
    """Direction sector (0 .. _SECTORS - 1, each 180°/_SECTORS wide) of unit vectors ``d``;
    with ``half``, also the neighbouring sector nearer to each direction (the one below in
    the lower half of its sector, the one above in the upper half, mod 180°)."""
    ang = np.mod(np.arctan2(d[:, 1], d[:, 0]), np.pi)
    pos = ang * (_SECTORS / np.pi)
    sec = np.minimum(pos.astype(np.int64), _SECTORS - 1)
    if not half:
        return sec
    near = np.where(pos - sec >= 0.5, sec + 1, sec - 1) % _SECTORS
    return sec, near


def measure_pairs(
    start: np.ndarray,
    end: np.ndarray,
    width: np.ndarray,
    is_p: np.ndarray,
    bounds: Sequence[int],
    uuids: Sequence[Sequence[str]] | None = None,
) -> list[PairTraces]:
    """:func:`measure_pair` of many pair-layers at once: group g is rows
    ``bounds[g]:bounds[g + 1]``; the result of each group is exactly what
    :func:`measure_pair` gives for its rows alone (same arithmetic, same tie-breaks), but the
    near-segment search runs once for the board, not once per pair.

    For each P segment, every N segment of its group that is parallel (within 10°), overlaps
    it along its direction, and lies within max(5·w, 0.5 mm) edge to edge (w: the group's
    median width) is a candidate; the nearest (smallest distance from the P line to the N
    midpoint, the first in row order on a tie) is its partner.  Only couples whose boxes come
    within reach are evaluated (:func:`box_pairs`): a qualifying N segment has a point within
    ``limit + (w_P + w_N)/2 + L_N·sin 10°/2`` of the P segment, so its box grown by that much
    meets the P segment's box.  A serpentine-tuned pair costs linear time, not (segments)².
    """
    start = np.asarray(start, dtype=float).reshape(-1, 2)
    end = np.asarray(end, dtype=float).reshape(-1, 2)
    width = np.asarray(width, dtype=float)
    is_p = np.asarray(is_p, dtype=bool)
    bnd = np.asarray(bounds, dtype=np.int64)
    n_groups = len(bnd) - 1
    vec = end - start
    length = np.hypot(vec[:, 0], vec[:, 1])
    group = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(bnd))
    limit = np.zeros(n_groups)
    head: list[tuple[Any, ...]] = []
    for g in range(n_groups):
        lo, hi = int(bnd[g]), int(bnd[g + 1])
        items = tuple(u for u in uuids[g] if u) if uuids is not None else ()
        if hi == lo:
            head.append((None, 0.0, None, items))
            continue
        ln = length[lo:hi].copy()
        total = float(ln.sum()) / 2.0
        w_med = weighted_median(width[lo:hi], np.maximum(ln, 1e-9))
        k = lo + int(np.argmax(ln))
        pos = (
            round(float(0.5 * (start[k, 0] + end[k, 0])), 4),
            round(float(0.5 * (start[k, 1] + end[k, 1])), 4),
        )
        limit[g] = max(_MAX_GAP_WIDTHS * w_med, 0.5)
        head.append((w_med, total, pos, items))
    p = np.flatnonzero(is_p & (length > 1e-9))
    q = np.flatnonzero(~is_p & (length > 1e-9))
    found: list[tuple[np.ndarray, ...]] = []
    if p.size and q.size:
        dp = vec[p] / length[p, None]  # (P, 2) unit directions
        dn = vec[q] / length[q, None]  # (N, 2)
        mid_n = 0.5 * (start[q] + end[q])
        reach = (
            limit[group[q]]
            + 0.5 * (float(width[p].max()) + width[q])
            + 0.5 * length[q] * _PARALLEL_SIN
            + _REACH_MARGIN
        )
        n_lo = np.minimum(start[q], end[q]) - reach[:, None]
        n_hi = np.maximum(start[q], end[q]) + reach[:, None]
        p_lo = np.minimum(start[p], end[p])
        p_hi = np.maximum(start[p], end[p])
        # direction sectors: a couple within 10° of parallel lies in the P segment's own 22.5°
        # sector or the neighbour on the side of the half it is in (mod 180°), so each P box is
        # joined with 2 sectors of N boxes only (3 of 12° each before: a third more join
        # entries) and the crossing legs of a serpentine never become candidates
        # contiguous columns for the candidate tests' gathers
        dp_x, dp_y = np.ascontiguousarray(dp[:, 0]), np.ascontiguousarray(dp[:, 1])
        dn_x, dn_y = np.ascontiguousarray(dn[:, 0]), np.ascontiguousarray(dn[:, 1])
        mid_x, mid_y = np.ascontiguousarray(mid_n[:, 0]), np.ascontiguousarray(mid_n[:, 1])
        start_x, start_y = np.ascontiguousarray(start[:, 0]), np.ascontiguousarray(start[:, 1])
        gp = group[p]
        bin_p, near_p = _sector(dp, half=True)
        bin_n = _sector(dn)
        nb_order = np.argsort(group[q] * _SECTORS + bin_n, kind="stable")
        copies = np.concatenate([bin_p, near_p])
        a_key = np.tile(group[p], 2) * _SECTORS + copies
        na_order = np.argsort(a_key, kind="stable")
        a_src = np.tile(np.arange(p.size, dtype=np.int64), 2)[na_order]
        for ia, jb in box_pairs(
            p_lo[a_src],
            p_hi[a_src],
            n_lo[nb_order],
            n_hi[nb_order],
            a_key[na_order],
            (group[q] * _SECTORS + bin_n)[nb_order],
        ):
            # the tests in stages, cheapest first, each on the survivors of the last (the
            # same element-wise arithmetic as on every candidate, so the same numbers)
            i, j = a_src[ia], nb_order[jb]
            keep = np.flatnonzero(
                np.abs(dp_x[i] * dn_y[j] - dp_y[i] * dn_x[j]) <= _PARALLEL_SIN
            )  # within 10° of parallel
            i, j = i[keep], j[keep]
            pc, qc = p[i], q[j]
            dx, dy = dp_x[i], dp_y[i]
            spx, spy = start_x[pc], start_y[pc]
            dist = np.abs(dx * (mid_y[j] - spy) - dy * (mid_x[j] - spx))
            edge = dist - 0.5 * (width[pc] + width[qc])
            keep = np.flatnonzero((edge > 0.0) & (edge <= limit[gp[i]]))
            i, j, pc, qc = i[keep], j[keep], pc[keep], qc[keep]
            dist, edge = dist[keep], edge[keep]
            d = dp[i]
            sp = start[pc]
            a = np.einsum("ck,ck->c", d, start[qc] - sp)
            b = np.einsum("ck,ck->c", d, end[qc] - sp)
            overlap = np.minimum(np.maximum(a, b), length[pc]) - np.maximum(np.minimum(a, b), 0.0)
            ok = np.flatnonzero(overlap > 1e-6)
            if ok.size:
                found.append((i[ok], j[ok], dist[ok], edge[ok], overlap[ok]))
    gaps_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    coupled_of: dict[int, float] = {}
    # uncoupled length of every segment (P: its length minus the partners' overlap; N: its
    # length unless it is some P segment's partner); filled below when there are couples
    free = length.copy()
    if found:
        i, j, dist, edge, overlap = (np.concatenate(c) for c in zip(*found))
        # nearest partner of each P segment: by P, then distance, then N row order
        order = np.lexsort((j, dist, i))
        io = i[order]
        keep = np.ones(order.size, dtype=bool)
        keep[1:] = io[1:] != io[:-1]
        best = order[keep]  # ascending P row, as the per-pair search finds them
        g_best = group[p[i[best]]]
        cuts = np.flatnonzero(np.diff(g_best)) + 1
        for sl in np.split(np.arange(best.size), cuts):
            sel = best[sl]
            gaps_of[int(g_best[sl[0]])] = (edge[sel], overlap[sel])
        # coupled length: a long P segment beside several N pieces at the same offset (an N
        # with a tuning bump, split by a via) is coupled along all of them, not just the first;
        # every distinct couple within 1 µm of the P segment's nearest distance counts, capped
        # at the P segment's length
        dmin = np.full(p.size, np.inf)
        dmin[i[best]] = dist[best]  # the nearest partner's distance, per P segment
        # a couple may come twice from the join (two long boxes): in ``order`` (by P, distance,
        # N) the copies are neighbours, so each is counted once without another sort
        jo = j[order]
        first = keep.copy()
        first[1:] |= jo[1:] != jo[:-1]
        sel_n = order[first & (dist[order] <= dmin[io] + _SAME_OFFSET_MM)]
        ui, ov = i[sel_n], overlap[sel_n]
        per_p = np.minimum(np.bincount(ui, weights=ov, minlength=p.size), length[p])
        has = np.bincount(ui, minlength=p.size) > 0
        per_group = np.bincount(group[p[has]], weights=per_p[has], minlength=n_groups)
        coupled_of = {
            int(g): float(per_group[g])
            for g in np.flatnonzero(np.bincount(group[p[has]], minlength=n_groups)).tolist()
        }
        free[p] = length[p] - per_p
        partnered = np.zeros(q.size, dtype=bool)
        partnered[j] = True  # an N segment with a parallel P within reach
        free[q[partnered]] = 0.0
    stretch = _longest_free_stretch(start, end, length, free, is_p, group, n_groups)
    out: list[PairTraces] = []
    for g, (w_med, total, pos, items) in enumerate(head):
        got = gaps_of.get(g)
        if w_med is None:
            out.append(PairTraces(None, None, 0.0, 0.0, None, items))
        elif got is None:
            out.append(PairTraces(w_med, None, 0.0, total, pos, items, float(stretch[g])))
        else:
            gaps, weights = got
            gap = weighted_median(gaps, weights)
            out.append(
                PairTraces(w_med, gap, coupled_of.get(g, 0.0), total, pos, items, float(stretch[g]))
            )
    return out


def _longest_free_stretch(
    start: np.ndarray,
    end: np.ndarray,
    length: np.ndarray,
    free: np.ndarray,
    is_p: np.ndarray,
    group: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """Per group, the longest chain of one net's mostly uncoupled segments (more than half of
    each segment's length without a partner alongside) joined end to end (to 1 µm): the
    contiguous stretch where P and N do not run together, its uncoupled length summed.
    Connected components by min-label hooking and pointer jumping (numpy, O(log n) rounds)."""
    out = np.zeros(n_groups)
    sel = np.flatnonzero((free > 0.5 * length) & (length > 1e-9))
    if not sel.size:
        return out
    n = sel.size
    # endpoints (group, net side, x, y in µm) of both ends; equal neighbours after a sort join
    # their segments
    pts = np.round(np.concatenate([start[sel], end[sel]]) * 1000.0).astype(np.int64)
    gs = np.concatenate([group[sel], group[sel]]).astype(np.int64)
    ps = np.concatenate([is_p[sel], is_p[sel]]).astype(np.int64)
    seg = np.concatenate([np.arange(n), np.arange(n)])
    order = np.lexsort((pts[:, 1], pts[:, 0], ps, gs))
    k = np.column_stack([gs, ps, pts])[order]
    same = np.all(k[1:] == k[:-1], axis=1)
    u, v = seg[order][:-1][same], seg[order][1:][same]
    # connected components: hook every segment to its smallest neighbour label, then jump
    # pointers to the root, until nothing changes (O(log n) rounds on chains)
    label = np.arange(n)
    while u.size:
        lu, lv = label[u], label[v]
        lo = np.minimum(lu, lv)
        new_label = label.copy()
        np.minimum.at(new_label, lu, lo)
        np.minimum.at(new_label, lv, lo)
        while True:
            jumped = new_label[new_label]
            if np.array_equal(jumped, new_label):
                break
            new_label = jumped
        if np.array_equal(new_label, label):
            break
        label = new_label
    sums = np.bincount(label, weights=free[sel], minlength=n)
    roots = np.flatnonzero(sums > 0.0)
    np.maximum.at(out, group[sel][roots], sums[roots])
    return out


def measure_pair(
    start: np.ndarray,
    end: np.ndarray,
    width: np.ndarray,
    is_p: np.ndarray,
    uuids: Sequence[str] = (),
) -> PairTraces:
    """Width and gap of a pair from its segments on one layer (vectorised, near P × N only).

    For each P segment, every N segment that is parallel (within 10°), overlaps it along its
    direction, and lies within max(5·w, 0.5 mm) edge to edge is a candidate; the nearest is its
    partner.  Fan-out segments that are not parallel to any N segment are ignored for the gap.
    Arcs come in as their chords.  (:func:`measure_pairs` with one group.)
    """
    n = len(np.asarray(width).reshape(-1))
    return measure_pairs(start, end, width, is_p, [0, n], [uuids])[0]
