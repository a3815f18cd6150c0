"""The field solver's energy capacitance (a forward-only Cholesky sweep, issue 18) against a
dense direct solution of the same discrete system: the minimum energy Σ a_e ΔV_e² of the
box scheme, assembled edge by edge here independently of the solver's block layout."""

from __future__ import annotations

import numpy as np
import pytest
from accel_drc.analysis.impedance import solver


def _dense_energy(xs, ys, eps, fixed, value) -> float:  # noqa: ANN001
    """Assemble K over all nodes edge by edge, solve the free nodes densely, return the energy."""
    nx, ny = xs.size, ys.size
    dx, dy = np.diff(xs), np.diff(ys)
    edges = []  # (node a, node b, coefficient)
    for i in range(nx - 1):
        for j in range(ny):
            c = 0.0
            if j > 0:
                c += 0.5 * eps[i, j - 1] * dy[j - 1]
            if j < ny - 1:
                c += 0.5 * eps[i, j] * dy[j]
            edges.append((i * ny + j, (i + 1) * ny + j, c / dx[i]))
    for i in range(nx):
        for j in range(ny - 1):
            c = 0.0
            if i > 0:
                c += 0.5 * eps[i - 1, j] * dx[i - 1]
            if i < nx - 1:
                c += 0.5 * eps[i, j] * dx[i]
            edges.append((i * ny + j, i * ny + j + 1, c / dy[j]))
    n = nx * ny
    k = np.zeros((n, n))
    for a, b, c in edges:
        k[a, a] += c
        k[b, b] += c
        k[a, b] -= c
        k[b, a] -= c
    fx = fixed.ravel()
    v = np.where(fx, value.ravel(), 0.0)
    fr = ~fx
    v[fr] = np.linalg.solve(k[np.ix_(fr, fr)], -k[np.ix_(fr, fx)] @ v[fx])
    return float(sum(c * (v[a] - v[b]) ** 2 for a, b, c in edges))


@pytest.mark.parametrize("transpose", [False, True])
def test_energy_matches_dense_solution(transpose: bool) -> None:
    rng = np.random.default_rng(7)
    xs = np.cumsum(rng.uniform(0.2, 1.0, 14))
    ys = np.cumsum(rng.uniform(0.2, 1.0, 9))
    if transpose:  # blocks along the other axis
        xs, ys = ys, xs
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    fixed = np.zeros(gx.shape, dtype=bool)
    fixed[:, 0] = True  # ground
    fixed[0, :] = True  # odd-mode symmetry plane
    strip = (gx > xs[3]) & (gx < xs[6]) & (gy > ys[3]) & (gy < ys[5])
    fixed |= strip
    value = np.where(strip, 1.0, 0.0)
    eps_air = np.ones((xs.size - 1, ys.size - 1))
    eps_die = rng.uniform(1.0, 5.0, eps_air.shape)
    got = solver._fd_capacitances(xs, ys, [eps_air, eps_die], fixed, value)
    for e, g in zip((eps_air, eps_die), got):
        ref = _dense_energy(xs, ys, e, fixed, value)
        assert g == pytest.approx(ref, rel=1e-11)
        assert solver._fd_capacitance(xs, ys, e, fixed, value) == pytest.approx(g, rel=1e-13)
