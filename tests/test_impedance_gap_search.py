"""The near-segment gap search of the impedance analysis: same answers as the full P × N
comparison it replaced, and work that grows with the segments, not their square."""

from __future__ import annotations

import math

import numpy as np
import pytest
from accel_drc.analysis import impedance as imp


def _reference(start, end, width, is_p):  # noqa: ANN001, ANN202 - the old quadratic search
    """The P × N search as it was before the grid (kept here as the oracle)."""
    start = np.asarray(start, float).reshape(-1, 2)
    end = np.asarray(end, float).reshape(-1, 2)
    width = np.asarray(width, float)
    vec = end - start
    length = np.hypot(vec[:, 0], vec[:, 1])
    if width.size == 0:
        return None, None, 0.0
    w_med = imp.weighted_median(width, np.maximum(length, 1e-9))
    p = np.flatnonzero(is_p & (length > 1e-9))
    q = np.flatnonzero(~is_p & (length > 1e-9))
    if p.size == 0 or q.size == 0:
        return w_med, None, 0.0
    limit = max(5.0 * w_med, 0.5)
    sin10 = math.sin(math.radians(10.0))
    d = vec[p] / length[p, None]
    dn = vec[q] / length[q, None]
    mid_n = 0.5 * (start[q] + end[q])
    cross = np.abs(d[:, None, 0] * dn[None, :, 1] - d[:, None, 1] * dn[None, :, 0])
    rel = mid_n[None, :, :] - start[p][:, None, :]
    dist = np.abs(d[:, None, 0] * rel[..., 1] - d[:, None, 1] * rel[..., 0])
    a = np.einsum("pk,pnk->pn", d, start[q][None, :, :] - start[p][:, None, :])
    b = np.einsum("pk,pnk->pn", d, end[q][None, :, :] - start[p][:, None, :])
    overlap = np.minimum(np.maximum(a, b), length[p][:, None]) - np.maximum(np.minimum(a, b), 0)
    edge = dist - 0.5 * (width[p][:, None] + width[q][None, :])
    ok = (cross <= sin10) & (overlap > 1e-6) & (edge > 0.0) & (edge <= limit)
    masked = np.where(ok, dist, np.inf)
    best = np.argmin(masked, axis=1)
    rows = np.flatnonzero(np.isfinite(masked[np.arange(p.size), best]))
    if not rows.size:
        return w_med, None, 0.0
    gaps, weights = edge[rows, best[rows]], overlap[rows, best[rows]]
    # coupled: every N piece at the nearest offset (to 1 µm), capped at the P segment's length
    near = ok & (dist <= masked[np.arange(p.size), best][:, None] + 1e-3)
    coupled = np.minimum(np.where(near, overlap, 0.0).sum(axis=1), length[p])
    return w_med, imp.weighted_median(gaps, weights), float(coupled[rows].sum())


def _soup(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random segments: free, on a 0.1 mm grid (exact ties), long diagonals, zero-length."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    kind = seed % 4
    if kind == 0:
        s = rng.uniform(0, 5, (n, 2))
        e = s + rng.normal(0, 1, (n, 2))
    elif kind == 1:
        s = np.round(rng.uniform(0, 3, (n, 2)), 1)
        e = s + rng.choice([[1, 0], [0, 1], [-1, 0], [1, 1]], n) * np.round(
            rng.uniform(0.1, 2, (n, 1)), 1
        )
    elif kind == 2:
        s = rng.uniform(0, 50, (n, 2))
        e = s + rng.normal(0, 20, (n, 2)) * (rng.random((n, 1)) < 0.2) + rng.normal(0, 0.1, (n, 2))
    else:
        s = np.round(rng.uniform(0, 2, (n, 2)), 2)
        e = s.copy()
        m = rng.random(n) < 0.7
        e[m] += np.round(rng.normal(0, 0.5, (int(m.sum()), 2)), 2)
    return s, e, rng.choice([0.1, 0.12, 0.2], n), rng.random(n) < 0.5


@pytest.mark.parametrize("tiny", [False, True])
def test_measure_pair_equals_the_full_comparison_bit_for_bit(
    tiny: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if tiny:  # every path of the join: no small-pair shortcut, long boxes, many small blocks
        monkeypatch.setattr(imp.pairs, "_SMALL_JOIN", 0)
        monkeypatch.setattr(imp.pairs, "_GRID_MAX_CELLS", 2)
        monkeypatch.setattr(imp.box_pairs, "__defaults__", (None, None, 7))
    with_gap = 0
    for seed in range(160):
        s, e, w, isp = _soup(seed)
        got = imp.measure_pair(s, e, w, isp)
        want = _reference(s, e, w, isp)
        # width and gap bit for bit; the coupled length is a sum (order of addition differs)
        assert (got.width_mm, got.gap_mm) == want[:2], seed
        assert got.coupled_mm == pytest.approx(want[2], rel=1e-12, abs=1e-12), seed
        with_gap += got.gap_mm is not None
    assert with_gap > 100  # the soups do exercise the gap search


def test_measure_pairs_batch_equals_each_pair_alone() -> None:
    cases = [_soup(1000 + k) for k in range(12)]
    cases[5] = (np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0), np.zeros(0, bool))
    bounds = np.cumsum([0] + [len(c[2]) for c in cases])
    cat = [np.concatenate([c[k] for c in cases]) for k in range(4)]
    batch = imp.measure_pairs(*cat, bounds)
    assert len(batch) == len(cases)
    for c, b in zip(cases, batch):
        alone = imp.measure_pair(*c)
        assert (b.width_mm, b.gap_mm, b.coupled_mm, b.length_mm, b.pos) == (
            alone.width_mm,
            alone.gap_mm,
            alone.coupled_mm,
            alone.length_mm,
            alone.pos,
        )


def test_box_pairs_finds_exactly_the_intersecting_boxes_of_each_group() -> None:
    rng = np.random.default_rng(7)
    na, nb = 400, 500
    alo = rng.uniform(0, 20, (na, 2))
    ahi = alo + rng.exponential(0.5, (na, 2)) * np.where(rng.random((na, 1)) < 0.05, 40, 1)
    blo = rng.uniform(0, 20, (nb, 2))
    bhi = blo + rng.exponential(0.8, (nb, 2))
    ag = np.sort(rng.integers(0, 3, na))
    bg = np.sort(rng.integers(0, 3, nb))
    meet = (
        (alo[:, None, 0] <= bhi[None, :, 0])
        & (blo[None, :, 0] <= ahi[:, None, 0])
        & (alo[:, None, 1] <= bhi[None, :, 1])
        & (blo[None, :, 1] <= ahi[:, None, 1])
        & (ag[:, None] == bg[None, :])
    )
    want = set(zip(*np.nonzero(meet)))
    got: set[tuple[int, int]] = set()
    for i, j in imp.box_pairs(alo, ahi, blo, bhi, ag, bg, block=50):
        got |= set(zip(i.tolist(), j.tolist()))
    assert got == {(int(i), int(j)) for i, j in want}


def test_gap_search_work_is_linear_in_a_tuned_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """A serpentine pair of 2 × 4,000 segments: the couples compared grow with the segments
    (the old search compared 16 M), and the pair's gap is its designed 0.1 mm."""
    couples = []
    real = imp.box_pairs

    def counting(*a, **k):  # noqa: ANN002, ANN003, ANN202
        for i, j in real(*a, **k):
            couples.append(len(i))
            yield i, j

    monkeypatch.setattr(imp.pairs, "box_pairs", counting)  # where measure_pairs looks it up
    for bumps in (250, 1000):
        pts = [(0.0, 0.0)]
        y = 0.0
        for _ in range(bumps):
            pts += [(2.0, y), (2.0, y + 1.0), (0.0, y + 1.0), (0.0, y + 2.0)]
            y += 2.0
        c = np.array(pts)
        # P and N: the centre line shifted ±0.1 mm diagonally (w 0.1, edge gap 0.1 on the legs)
        p_line, n_line = c + [0.1, 0.1], c - [0.1, 0.1]
        start = np.concatenate([p_line[:-1], n_line[:-1]])
        end = np.concatenate([p_line[1:], n_line[1:]])
        is_p = np.arange(len(start)) < len(p_line) - 1
        couples.clear()
        m = imp.measure_pair(start, end, np.full(len(start), 0.1), is_p)
        assert m.gap_mm == pytest.approx(0.1, abs=1e-9)
        n = len(start)
        assert sum(couples) <= 4 * n, (bumps, sum(couples), n)


def test_partners_across_direction_sector_boundaries() -> None:
    """The join groups segments by direction (22.5° sectors, each P segment joined with its own
    sector and the neighbour on the side of its half): a P segment at or next to a sector
    boundary, with N partners up to 9.9° to either side, gets the partners the full comparison
    finds (and none beyond 10°)."""
    sector = 180.0 / imp.pairs._SECTORS
    cases = 0
    for k in range(imp.pairs._SECTORS + 1):
        for base in (k * sector, k * sector + 1e-9, k * sector - 1e-9, k * sector + sector / 2):
            for turn in (-9.9, -5.0, 0.0, 5.0, 9.9, -10.5, 10.5):
                a = math.radians(base)
                b = math.radians(base + turn)
                u = np.array([math.cos(a), math.sin(a)])
                v = np.array([math.cos(b), math.sin(b)])
                normal = np.array([-u[1], u[0]])
                # N: 1 mm long, 0.4 mm beside P (its middle 0.31-0.49 mm away: within reach)
                s = np.array([[0.0, 0.0], 0.4 * normal + 0.5 * u])
                e = np.array([4.0 * u, 0.4 * normal + 0.5 * u + 1.0 * v])
                w = np.array([0.1, 0.1])
                isp = np.array([True, False])
                got = imp.measure_pair(s, e, w, isp)
                want = _reference(s, e, w, isp)
                assert (got.width_mm, got.gap_mm) == want[:2], (base, turn)
                assert (got.gap_mm is not None) == (abs(turn) < 10.0), (base, turn)
                cases += 1
    assert cases == (imp.pairs._SECTORS + 1) * 4 * 7
