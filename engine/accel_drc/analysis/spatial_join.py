"""Points of the same net near query discs, by sorting (net, grid cell) keys and reading the
neighbouring cells with ``searchsorted``: never O(queries × points), for the 100k vias and 1M
track ends of a big board."""

from __future__ import annotations

import numpy as np

from ..arrays import isin, unique

# ---------------------------------------------------------------------------------------------
# spatial join: points of the same net near query discs, by sorting (net, cell) keys
# ---------------------------------------------------------------------------------------------


def _column_min(xy: np.ndarray) -> np.ndarray:
    """``xy.min(axis=0)`` of an (n, 2) array, one contiguous column at a time: numpy reduces
    a C-ordered (n, 2) array along axis 0 with a strided inner loop, many times slower; the minimum is exact either way."""
    return np.array([xy[:, 0].min(), xy[:, 1].min()])


def _column_max(xy: np.ndarray) -> np.ndarray:
    """``xy.max(axis=0)`` of an (n, 2) array (see :func:`_column_min`)."""
    return np.array([xy[:, 0].max(), xy[:, 1].max()])


#: :func:`near_pairs` pre-filters its queries with :func:`_box_holds_any` from this many on,
#: when they outnumber the targets this many times
_SAT_MIN_QUERIES = 20000
_SAT_RATIO = 8
#: cells of the target-count grid along the longer side at most (256: a 260 kB table, which
#: stays in cache for 2 M random look-ups; a larger one falls out of it)
_SAT_CELLS = 256


def _box_holds_any(q_xy: np.ndarray, q_rad: np.ndarray, t_xy: np.ndarray) -> np.ndarray:
    """Mask of the queries whose box ``[q - r, q + r]`` may hold a target: every query with a
    target within ``r`` is kept (a superset; :func:`near_pairs` then tests the distance).

    A grid of target counts (at most :data:`_SAT_CELLS` cells a side) as a summed-area table:
    a query's box covers the cells from ``floor((q - r - o) / c)`` to ``floor((q + r - o) / c)``,
    which hold every target inside the box (the same monotonic arithmetic maps a target to its
    cell), and four look-ups count them.  Linear, where the bucketed join sorts every query
    (346 MB synthetic board: 1.5 M signal tracks against 4,608 signal vias)."""
    lo = _column_min(t_xy)
    hi = _column_max(t_xy)
    cell = max(float((hi - lo).max()) / (_SAT_CELLS - 1), 1e-6)
    nx = int((hi[0] - lo[0]) / cell) + 2
    ny = int((hi[1] - lo[1]) / cell) + 2
    tx = np.floor((t_xy[:, 0] - lo[0]) / cell).astype(np.int64)
    ty = np.floor((t_xy[:, 1] - lo[1]) / cell).astype(np.int64)
    sat = np.zeros((nx + 1, ny + 1), np.int32)  # small: its look-ups stay in cache
    sat[1:, 1:] = np.bincount(tx * ny + ty, minlength=nx * ny).reshape(nx, ny)
    sat = sat.cumsum(axis=0).cumsum(axis=1)
    flat = sat.ravel()
    r = np.maximum(q_rad, 0.0)
    out: np.ndarray | None = None
    corners = []
    for k, n in ((0, nx), (1, ny)):
        c = q_xy[:, k]
        a = np.floor((c - r - lo[k]) / cell)
        b = np.floor((c + r - lo[k]) / cell)
        inside = (b >= 0) & (a < n)  # else the box misses the grid
        out = inside if out is None else out & inside
        np.clip(a, 0, n - 1, out=a)
        np.clip(b, 0, n - 1, out=b)
        corners.append((a.astype(np.int64), b.astype(np.int64) + 1))
    (x0, x1), (y0, y1) = corners
    x0 *= ny + 1  # row offsets in the flat table
    x1 *= ny + 1
    count = flat.take(x1 + y1)
    count -= flat.take(x0 + y1)
    count -= flat.take(x1 + y0)
    count += flat.take(x0 + y0)
    assert out is not None
    out &= count > 0
    return out


def near_pairs(
    q_xy: np.ndarray,
    q_net: np.ndarray,
    q_rad: np.ndarray,
    t_xy: np.ndarray,
    t_net: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """All (query, target) index pairs with the same net and ``|t - q| <= q_rad``.

    Targets are bucketed on a square grid keyed by (net, cx, cy) and sorted once; each query
    reads its 3×3 neighbourhood with ``searchsorted``.  Queries are grouped by radius (powers of
    two) so one large pad does not blow up the cell size for 100k small vias.
    """
    q_xy = np.asarray(q_xy, dtype=float).reshape(-1, 2)
    t_xy = np.asarray(t_xy, dtype=float).reshape(-1, 2)
    q_net = np.asarray(q_net, dtype=np.int64)
    t_net = np.asarray(t_net, dtype=np.int64)
    q_rad = np.asarray(q_rad, dtype=float)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if len(q_xy) == 0 or len(t_xy) == 0:
        return empty
    # only nets present on both sides matter
    lo_net = min(int(q_net.min()), int(t_net.min()))
    hi_net = max(int(q_net.max()), int(t_net.max()))
    if lo_net >= 0 and hi_net < (1 << 26):
        # a table over the net numbers: linear, where intersect1d / isin sort both sides
        in_q = np.zeros(hi_net + 1, bool)
        in_q[q_net] = True
        both = np.zeros(hi_net + 1, bool)
        both[t_net] = True
        both &= in_q
        if not both.any():
            return empty
        t_keep = np.flatnonzero(both[t_net])
        q_keep = np.flatnonzero(both[q_net] & (q_rad >= 0))
    else:
        qn = unique(q_net)
        common = qn[isin(qn, unique(t_net))]  # np.intersect1d, sorted, without numpy.ma
        if len(common) == 0:
            return empty
        t_keep = np.flatnonzero(isin(t_net, common))
        q_keep = np.flatnonzero(isin(q_net, common) & (q_rad >= 0))
    if len(t_keep) == 0 or len(q_keep) == 0:
        return empty
    if len(q_keep) >= _SAT_MIN_QUERIES and len(q_keep) > _SAT_RATIO * len(t_keep):
        # many queries, few targets (every signal track against the signal vias): first drop
        # the queries whose box holds no target at all, in O(1) each
        q_keep = q_keep[_box_holds_any(q_xy[q_keep], q_rad[q_keep], t_xy[t_keep])]
        if len(q_keep) == 0:
            return empty
    txy = t_xy[t_keep]
    tnet = t_net[t_keep]
    qxy = q_xy[q_keep]
    origin = np.minimum(_column_min(txy), _column_min(qxy)) - 1.0
    span = np.maximum(_column_max(txy), _column_max(qxy)) - origin + 1.0

    rad = np.maximum(q_rad[q_keep], 1e-3)
    group = np.ceil(np.log2(rad / 1e-3)).astype(np.int64)
    out_q: list[np.ndarray] = []
    out_t: list[np.ndarray] = []
    for g in unique(group):  # (no numpy.ma import: accel_drc.arrays)
        qi = q_keep[group == g]
        cell = float(np.maximum(q_rad[qi].max(), 1e-3))
        gx = int(span[0] / cell) + 3
        gy = int(span[1] / cell) + 3
        tc = np.floor((txy - origin) / cell).astype(np.int64)
        tkey = (tnet * gx + tc[:, 0]) * gy + tc[:, 1]
        order = np.argsort(tkey, kind="stable")
        skey = tkey[order]
        qc = np.floor((q_xy[qi] - origin) / cell).astype(np.int64)
        base = (q_net[qi] * gx + qc[:, 0]) * gy + qc[:, 1]
        # sorted needles: searchsorted is several times faster, and base + offset stays sorted
        qorder = np.argsort(base, kind="stable")
        base = base[qorder]
        qi = qi[qorder]
        for dx in (-1, 0, 1):
            # the cells dy = -1, 0, 1 of one column are consecutive keys, so their targets
            # are one run of the sorted keys: two searches per column, not six
            key = base + dx * gy
            lo = np.searchsorted(skey, key - 1, side="left")
            hi = np.searchsorted(skey, key + 1, side="right")
            cnt = hi - lo
            total = int(cnt.sum())
            if total == 0:
                continue
            rep_q = np.repeat(qi, cnt)
            offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            rep_t = t_keep[order[np.repeat(lo, cnt) + offs]]
            d = np.hypot(*(t_xy[rep_t] - q_xy[rep_q]).T)
            ok = d <= q_rad[rep_q]
            out_q.append(rep_q[ok])
            out_t.append(rep_t[ok])
    if not out_q:
        return empty
    return np.concatenate(out_q), np.concatenate(out_t)
