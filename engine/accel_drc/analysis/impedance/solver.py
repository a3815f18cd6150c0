"""The 2-D finite-difference (box-integration) Laplace solver on a graded mesh: the reference
for the closed forms and the production method where a soldermask or an offset strip makes
them inexact.  numpy only; BLAS held to one thread during the block solves (threadpoolctl).
The sweep is a block Cholesky of the free nodes' system, forward only (see
:func:`_fd_capacitances`)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

try:  # numpy's own LAPACK gufuncs (private, in every numpy from 1.8 to 2.x): see _cholesky_lo
    from numpy.linalg import _umath_linalg
except ImportError:  # pragma: no cover - a numpy that moved it: the public wrapper, slower
    _umath_linalg = None

from .formulas import C0, EPS0, _check_pos

try:  # a declared dependency; an environment without it solves on BLAS's own thread count
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - depends on the environment
    ThreadpoolController = None

#: the BLAS libraries threadpoolctl found, looked up once: finding them (a scan of the loaded
#: libraries and /proc files) costs more than a field solution's factorisations
_CONTROLLER: list = []

# =============================================================================================
# 2-D finite-difference field solver (reference, and soldermask correction)
# =============================================================================================


@dataclass(frozen=True)
class FdLayer:
    """A horizontal dielectric slab of the field-solver cross-section: from ``y0`` to ``y1`` mm
    above the lower ground plane, relative permittivity ``er``.  Space not covered is air."""

    y0: float
    y1: float
    er: float


def _graded(
    keys: Sequence[float], fine: Sequence[float], hmin: float, hmax: float, grow: float
) -> np.ndarray:
    """Mesh coordinates through every key coordinate, spacing ``hmin`` at the ``fine`` points
    (strip edges, where the field is singular) growing linearly with the distance from them
    (slope ``grow − 1``) up to ``hmax``."""
    fine_pts = [float(f) for f in sorted(fine)]

    def spacing(x: float) -> float:
        # Python floats: the same IEEE operations as numpy's, without its per-call overhead
        # (~10k calls per solve; issue 18)
        d = min([abs(f - x) for f in fine_pts]) if fine_pts else math.inf
        return min(hmax, hmin + (grow - 1.0) * d)

    uniq = sorted({round(k, 12) for k in keys})
    out = [uniq[0]]
    for a, b in zip(uniq[:-1], uniq[1:]):
        pts = [a]
        x = a
        while True:
            step = min(spacing(x), spacing(x + spacing(x)))
            if x + 1.5 * step >= b:
                break
            x += step
            pts.append(x)
        if len(pts) > 1 and (b - pts[-1]) < 0.5 * (pts[-1] - pts[-2]):
            pts.pop()
        out.extend(pts[1:])
        out.append(b)
    return np.asarray(out)


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the block solves on one BLAS thread, and restore the count after.

    The factorisations here are 50–200 wide: far below what a multithreaded BLAS gains on, and on a
    loaded machine OpenBLAS's spinning threads made each many times slower.  threadpoolctl does it for whichever BLAS numpy loaded (OpenBLAS, MKL,
    BLIS); it replaced a ctypes call into OpenBLAS's own API, measured no slower
    (``bench/bench_impedance.py``, docs/impedance.md).
    """
    if ThreadpoolController is None:  # pragma: no cover - depends on the environment
        yield
        return
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield


def _raise_not_spd(err: str, flag: int) -> None:
    """numpy's error callback for the Cholesky gufunc: it signals failure as an invalid flag."""
    raise np.linalg.LinAlgError("field-solver matrix not positive definite")


def _fd_capacitances(
    xs: np.ndarray,
    ys: np.ndarray,
    eps_cells: Sequence[np.ndarray],
    fixed: np.ndarray,
    value: np.ndarray,
) -> list[float]:
    """Energy capacitance Σ a_e ΔV_e² (in units of ε0, per unit length) of the box scheme, for
    each permittivity map of ``eps_cells`` on the same mesh and boundary conditions.

    Vertex-centred grid ``xs`` × ``ys``; each ``eps_cell`` (nx−1, ny−1) the relative
    permittivity of each cell; ``fixed`` (nx, ny) Dirichlet nodes with potential ``value``; every
    other boundary is Neumann (a symmetry plane or a far wall).  Edge coefficients: a horizontal
    edge couples with the εr·height of the two cells beside it over its length, and so on; the
    discrete solution minimises the same discrete energy that is returned.

    How (issue 18): the free nodes' system K u = b is symmetric positive definite and
    block-tridiagonal (one block per mesh column along the longer axis, free nodes only).  The
    minimum energy is E = E0 − bᵀK⁻¹b, with E0 the energy of the fixed potentials alone (free
    nodes at 0), and bᵀK⁻¹b = |y|² with y = L⁻¹b, L the Cholesky factor of K: the forward sweep
    alone, no back substitution.  Each step of the sweep is one Cholesky factorisation of the
    bordered matrix [[S_j, O_j, v_j], [O_jᵀ, D_j+1, b_j+1], [v_jᵀ, b_j+1ᵀ, ∞]] (S_j the Schur
    complement so far, O_j the column coupling): its lower-left block is W = O_jᵀ·L_j⁻ᵀ and its
    last row y_j, so S_j+1 = D_j+1 − W·Wᵀ, v_j+1 = b_j+1 − W·y_j.  LAPACK's Cholesky of a
    (2m+1)² matrix is faster than the LU solve with m+1 right-hand sides of the block Thomas
    algorithm it replaced, and all the maps go through one sweep as a stack
    (bench/bench_impedance.py, docs/impedance.md).  Agrees with the LU
    solution to ~1e-13 relative (E0 − |y|² cancels ~2 digits), tested.
    """
    dx = np.diff(xs)
    dy = np.diff(ys)
    nx, ny = xs.size, ys.size
    k = len(eps_cells)
    eps = np.stack([np.asarray(e, dtype=float) for e in eps_cells])  # (k, nx-1, ny-1)
    # horizontal edges (i,j)-(i+1,j): (k, nx-1, ny)
    half = eps * dy[None, None, :] * 0.5
    ah = np.zeros((k, nx - 1, ny))
    ah[:, :, :-1] += half
    ah[:, :, 1:] += half
    ah /= dx[None, :, None]
    # vertical edges (i,j)-(i,j+1): (k, nx, ny-1)
    halfv = eps * dx[None, :, None] * 0.5
    av = np.zeros((k, nx, ny - 1))
    av[:, :-1, :] += halfv
    av[:, 1:, :] += halfv
    av /= dy[None, None, :]
    # E0: the energy with the free nodes at 0
    v0 = np.where(fixed, value, 0.0)
    e0 = np.sum(ah * np.diff(v0, axis=0)[None] ** 2, axis=(1, 2)) + np.sum(
        av * np.diff(v0, axis=1)[None] ** 2, axis=(1, 2)
    )
    # blocks along the longer axis (block size = the shorter one)
    if nx < ny:
        ah, av = av.transpose(0, 2, 1), ah.transpose(0, 2, 1)
        fixed, value = fixed.T, value.T
        nx, ny = ny, nx
    free = ~fixed
    m = ny
    idx = np.arange(m)
    dsum = np.zeros((k, nx, ny))
    dsum[:, :-1, :] += ah
    dsum[:, 1:, :] += ah
    dsum[:, :, :-1] += av
    dsum[:, :, 1:] += av
    # b = −K_fg·g: couplings of free nodes to fixed neighbours times the fixed potential; a
    # fixed node stays in its block as an identity row with b = 0 (y = 0: adds nothing)
    rhs = np.zeros((k, nx, ny))
    rhs[:, :, :-1] += np.where(free[:, :-1] & fixed[:, 1:], av * value[:, 1:], 0.0)
    rhs[:, :, 1:] += np.where(free[:, 1:] & fixed[:, :-1], av * value[:, :-1], 0.0)
    rhs[:, :-1] += np.where(free[:-1] & fixed[1:], ah * value[1:], 0.0)
    rhs[:, 1:] += np.where(free[1:] & fixed[:-1], ah * value[:-1], 0.0)
    rhs = np.where(free, rhs, 0.0)
    # rows fixed in every column (the planes) and fixed columns at the ends (the odd mode's
    # symmetry plane, an open box's far wall) hold no unknown: their couplings are in b and
    # E0 already, so the sweep leaves them out (a 2-row-narrower block is ~18 % fewer flops)
    rows = np.flatnonzero(free.any(axis=0))
    cols = np.flatnonzero(free.any(axis=1))
    if rows.size == 0:
        return [float(e) for e in e0]
    c0, c1 = int(cols[0]), int(cols[-1]) + 1
    free, ah, av, dsum, rhs = (
        free[c0:c1][:, rows],
        ah[:, c0 : c1 - 1][:, :, rows],
        av[:, c0:c1],
        dsum[:, c0:c1][:, :, rows],
        rhs[:, c0:c1][:, :, rows],
    )
    # vertical edges between kept rows that were adjacent (a dropped row between two kept
    # ones would be a fixed row: its edges are in b, not in K)
    adjacent = np.diff(rows) == 1
    av = np.where(adjacent, av[:, :, rows[:-1]], 0.0)
    nx, m = c1 - c0, rows.size
    idx = np.arange(m)
    diag = np.zeros((nx, k, m, m))  # lower triangles only: the Cholesky reads no more
    diag[:, :, idx, idx] = np.where(free, dsum, 1.0).transpose(1, 0, 2)
    diag[:, :, idx[1:], idx[:-1]] = np.where(free[:, :-1] & free[:, 1:], -av, 0.0).transpose(
        1, 0, 2
    )
    rhs_t = rhs.transpose(1, 0, 2)  # (nx, k, m)
    # every step's bordered matrix, all but its S_j and v_j parts filled at once
    n2 = 2 * m + 1
    # one bordered matrix, refilled at every step (a stack of all of them is megabytes per
    # solve: page faults and cache misses cost more than the few extra copies)
    mat = np.zeros((k, n2, n2))
    mat[:, 2 * m, 2 * m] = 1e300  # any value above |y|² keeps the bordered matrix SPD
    flat = mat.reshape(k, n2 * n2)
    couple_diag = flat[:, m * n2 : m * n2 + m * (n2 + 1) : n2 + 1]  # the (m+i, i) entries
    coupling = np.where(free[:-1] & free[1:], -ah, 0.0).transpose(1, 0, 2)
    # [[D_j, ·], [b_jᵀ, 0]]: the Schur complement update of this (m+1)² block is one product
    # X·Xᵀ of the factor's rows under S_j (X = [W; y_j]), which also gives v and −|y_j|²
    daug = np.zeros((nx, k, m + 1, m + 1))
    daug[:, :, :m, :m] = diag
    daug[:, :, m, :m] = rhs_t
    ysq = np.zeros(k)
    s_aug = daug[0].copy()
    prod = np.empty((k, m + 1, m + 1))
    with np.errstate(call=_raise_not_spd, invalid="call", over="ignore", under="ignore"):
        for j in range(nx - 1):
            mat[:, :m, :m] = s_aug[:, :m, :m]
            mat[:, 2 * m, :m] = s_aug[:, m, :m]
            mat[:, m : 2 * m, m : 2 * m] = diag[j + 1]
            couple_diag[...] = coupling[j]
            mat[:, 2 * m, m : 2 * m] = rhs_t[j + 1]
            x = _cholesky_lo(mat)[:, m:, :m]
            # flush what decays below 1e-150 to zero: far from the strips the fill-in
            # underflows to subnormal numbers, which are ~100× slower in every later product
            x[np.abs(x) < 1e-150] = 0.0
            np.matmul(x, x.transpose(0, 2, 1), out=prod)
            np.subtract(daug[j + 1], prod, out=s_aug)
            ysq -= s_aug[:, m, m]
        last = np.zeros((k, m + 1, m + 1))
        last[:, :m, :m] = s_aug[:, :m, :m]
        last[:, m, :m] = s_aug[:, m, :m]
        last[:, m, m] = 1e300
        y = _cholesky_lo(last)[:, m, :m]
        ysq += np.einsum("ki,ki->k", y, y)
    return [float(a - b) for a, b in zip(e0, ysq)]


def _cholesky_lo(a: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of a stack of SPD matrices: numpy's gufunc, called directly (the
    public wrapper's type checks cost more than the factorisation at these sizes); the caller
    holds the error state that turns a failure into LinAlgError.  Reads the lower triangles
    only (LAPACK ``potrf``, 'L'), as the public wrapper does."""
    if _umath_linalg is None:  # pragma: no cover - depends on the numpy
        return np.linalg.cholesky(a)
    return _umath_linalg.cholesky_lo(a, signature="d->d")


def _fd_capacitance(
    xs: np.ndarray,
    ys: np.ndarray,
    eps_cell: np.ndarray,
    fixed: np.ndarray,
    value: np.ndarray,
) -> float:
    """Energy capacitance of one permittivity map: :func:`_fd_capacitances`."""
    return _fd_capacitances(xs, ys, [eps_cell], fixed, value)[0]


def fd_coupled(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float = 4.0,
    mask: tuple[float, float] | None = None,
    extrapolate: bool = False,
    odd_only: bool = False,
    order: float = 1.0,
) -> tuple[float, float]:
    """(even, odd) Z (Ω) of two identical strips by a 2-D finite-difference field solution.

    Cross-section: ground plane at y = 0; strips of width ``w`` and thickness ``t`` with their
    bottom face at ``y_strip``, edge-to-edge gap ``s``; dielectric slabs ``layers``; a second
    plane at ``top_plane_mm`` (stripline) or open space above (microstrip: the box is closed
    far away, ≥ 40 h).  ``mask`` = (thickness, εr) coats the substrate top and the strips
    (a conformal soldermask of uniform thickness).  Symmetry halves the problem: the odd mode
    has V = 0 on the centre plane, the even mode ∂V/∂n = 0.  Z = 1/(c·√(C·C_air)).

    The mesh is graded towards the strip corners; ``resolution`` scales its density.  The
    energy capacitance converges from above, about linearly in the mesh size, so
    ``extrapolate=True`` solves at ``resolution/2`` and ``resolution`` and returns the Richardson
    extrapolation Z(r) + (Z(r) − Z(r/2))/(2^order − 1).  ``order`` 1 assumes first-order
    convergence; the field of a rectangular conductor's 270° corner goes as ρ^(−1/3), so the
    energy error of a refined mesh falls as h^(4/3) and ``order = 4/3`` (:data:`FIELD_ORDER`) is
    the physical one: measured convergence ratios 2^1.37 … 2^1.71 over resolutions 2-4-8 (docs).
    Measured against Cohn's exact zero-thickness values (tests): resolution 4 ≈ −0.3 %,
    8 ≈ −0.15 %, 8 extrapolated ≤ 0.05 %.
    """
    if extrapolate:
        args = (w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm)
        lo = fd_coupled(*args, resolution / 2.0, mask, odd_only=odd_only)
        hi = fd_coupled(*args, resolution, mask, odd_only=odd_only)
        k = 1.0 / (2.0**order - 1.0)
        return hi[0] + k * (hi[0] - lo[0]), hi[1] + k * (hi[1] - lo[1])
    caps = _mode_capacitances(
        w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm, resolution, mask, odd_only
    )
    z = [math.nan if c is None else 1.0 / (C0 * EPS0 * math.sqrt(c[0] * c[1])) for c in caps]
    return z[0], z[1]


def fd_coupled_modes(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float = 4.0,
    mask: tuple[float, float] | None = None,
    order: float = 1.0,
    lo_caps: list[tuple[float, float] | None] | None = None,
) -> tuple[float, float, float, float]:
    """(Z_even, Z_odd, εeff_even, εeff_odd) of the :func:`fd_coupled` cross-section from one
    solve per mesh (the air and dielectric capacitances of each mode, εeff = C/C_air), meshes
    ``resolution/2`` and ``resolution`` Richardson-extrapolated at ``order`` like
    :func:`fd_coupled`.  What crosstalk needs: the coupling is the *difference* of the modes
    (``analysis/crosstalk.py``).  ``lo_caps``: the ``resolution/2`` mesh's
    :func:`_mode_capacitances`, where the caller has them already (the crosstalk screen's
    coarse solution): that mesh is then not solved again, and the result is the same."""
    args = (w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm)
    k = 1.0 / (2.0**order - 1.0)
    # each mesh is solved once; Z and εeff both come from its capacitances
    if lo_caps is None:
        lo_caps = _mode_capacitances(*args, resolution / 2.0, mask, False)
    hi_caps = _mode_capacitances(*args, resolution, mask, False)
    out: list[float] = []
    for fn in (_z, _eeff):
        out += [fn(h) + k * (fn(h) - fn(g)) for h, g in zip(hi_caps, lo_caps)]
    return out[0], out[1], out[2], out[3]


def modes_of_caps(caps: list[tuple[float, float] | None]) -> tuple[float, float, float, float]:
    """(Z_even, Z_odd, εeff_even, εeff_odd) of one mesh's :func:`_mode_capacitances` (both
    modes), with no extrapolation: the crosstalk screen's coarse solution."""
    return _z(caps[0]), _z(caps[1]), _eeff(caps[0]), _eeff(caps[1])


def mode_capacitances(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float,
    mask: tuple[float, float] | None,
) -> list[tuple[float, float] | None]:
    """Both modes' (C_air, C) on one mesh of the :func:`fd_coupled` cross-section (what
    :func:`fd_coupled_modes` takes as ``lo_caps``)."""
    return _mode_capacitances(
        w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm, resolution, mask, False
    )


def fd_mode_eps_eff(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float,
    mask: tuple[float, float] | None,
    odd: bool,
) -> float:
    """εeff = C/C_air of one mode (``odd``: the differential mode, else the even mode) of the
    :func:`fd_coupled` cross-section, from one solve of that mode alone (the air and dielectric
    maps share one sweep).  What a delay needs: :func:`fd_coupled` of the dielectric and of
    air, then (Z_air/Z)², is the same ratio from six map solves instead of two."""
    caps = _mode_capacitances(
        w_mm, s_mm, t_mm, y_strip_mm, layers, top_plane_mm, resolution, mask, odd, not odd
    )
    return _eeff(caps[1 if odd else 0])


def _z(c: tuple[float, float] | None) -> float:
    """Z (Ω) of a mode from its (air, dielectric) energy capacitances."""
    assert c is not None
    return 1.0 / (C0 * EPS0 * math.sqrt(c[0] * c[1]))


def _eeff(c: tuple[float, float] | None) -> float:
    """εeff of a mode from its (air, dielectric) energy capacitances."""
    assert c is not None
    return c[1] / c[0]


def _mode_capacitances(
    w_mm: float,
    s_mm: float,
    t_mm: float,
    y_strip_mm: float,
    layers: Sequence[FdLayer],
    top_plane_mm: float | None,
    resolution: float,
    mask: tuple[float, float] | None,
    odd_only: bool,
    even_only: bool = False,
) -> list[tuple[float, float] | None]:
    """[(C_air, C) of the even mode (None when ``odd_only``), (C_air, C) of the odd mode (None
    when ``even_only``)], in units of ε0 per strip per unit length: the one mesh and solve
    behind :func:`fd_coupled`.  Each mode is its own solve on the same mesh, so asking for one
    gives the same numbers as asking for both."""
    _check_pos(w_mm=w_mm, s_mm=s_mm)
    h_ref = (
        y_strip_mm if top_plane_mm is None else min(y_strip_mm, top_plane_mm - y_strip_mm - t_mm)
    )
    scale = min(w_mm, s_mm, h_ref)
    hmin = scale / (40.0 * resolution)
    x0, x1 = s_mm / 2.0, s_mm / 2.0 + w_mm
    y0, y1 = y_strip_mm, y_strip_mm + t_mm
    if top_plane_mm is None:
        y_top = y1 + 40.0 * y_strip_mm
        x_far = x1 + 40.0 * y_strip_mm
    else:
        y_top = top_plane_mm
        x_far = x1 + 12.0 * top_plane_mm
    xkeys = [0.0, x0, x1, x_far]
    ykeys = [0.0, y0, y1, y_top]
    for lay in layers:
        ykeys += [min(max(lay.y0, 0.0), y_top), min(max(lay.y1, 0.0), y_top)]
    if mask is not None:
        ykeys += [y0 + mask[0], y1 + mask[0]]
        xkeys += [x0 - mask[0], x1 + mask[0]] if x0 - mask[0] > 0 else [x1 + mask[0]]
    if top_plane_mm is not None:
        hmax = max(w_mm, s_mm, h_ref) / (2.0 * resolution)
    else:  # open box: let the mesh coarsen far from the strips
        hmax = 10.0 * h_ref / resolution
    grow = 1.0 + 0.25 / resolution
    xs = _graded(xkeys, [x0, x1], hmin, hmax, grow)
    ys = _graded(ykeys, [y0, y1], hmin, hmax, grow)

    xc = 0.5 * (xs[:-1] + xs[1:])
    yc = 0.5 * (ys[:-1] + ys[1:])
    eps = np.ones((xc.size, yc.size))
    for lay in layers:
        eps[:, (yc > lay.y0) & (yc < lay.y1)] = lay.er
    if mask is not None:
        tm, erm = mask
        sub_top = max((lay.y1 for lay in layers), default=0.0)
        cx, cy = np.meshgrid(xc, yc, indexing="ij")
        coat = (cy > sub_top) & (cy < sub_top + tm)
        coat |= (cy > y1) & (cy < y1 + tm) & (cx > x0 - tm) & (cx < x1 + tm)
        coat |= (
            (cy > y0)
            & (cy < y1 + tm)
            & (((cx > x0 - tm) & (cx < x0)) | ((cx > x1) & (cx < x1 + tm)))
        )
        eps = np.where(coat, erm, eps)

    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    on_strip = (gx >= x0 - 1e-12) & (gx <= x1 + 1e-12) & (gy >= y0 - 1e-12) & (gy <= y1 + 1e-12)
    ground = gy <= 1e-12
    if top_plane_mm is not None:
        ground |= gy >= y_top - 1e-12
    else:
        ground |= gy >= y_top - 1e-12
        ground |= gx >= x_far - 1e-12
    result: list[tuple[float, float] | None] = [None] if odd_only else []
    modes = (True,) if odd_only else (False,) if even_only else (False, True)
    with _one_blas_thread():
        for odd in modes:
            fixed = ground | on_strip
            if odd:
                fixed = fixed | (gx <= 1e-12)
            value = np.where(on_strip, 1.0, 0.0)
            if np.all(eps == eps.flat[0]):  # homogeneous: C = εr·C_air exactly
                c_air = _fd_capacitances(xs, ys, [np.ones_like(eps)], fixed, value)[0]
                c_die = float(eps.flat[0]) * c_air
            else:
                c_air, c_die = _fd_capacitances(xs, ys, [np.ones_like(eps), eps], fixed, value)
            # per strip, per unit length: C = ε0·energy (half domain holds one strip)
            result.append((float(c_air), float(c_die)))
    return result + [None] if even_only else result


@dataclass(frozen=True)
class Strip:
    """A rectangular conductor of the two-strip cross-section (:func:`fd_two_strips`): from
    ``x0`` to ``x1`` across and ``y0`` to ``y1`` up (mm, above the lower plane); ``y0 == y1``
    is a zero-thickness strip."""

    x0: float
    x1: float
    y0: float
    y1: float


def fd_two_strips(
    a: Strip,
    b: Strip,
    layers: Sequence[FdLayer],
    top_plane_mm: float,
    resolution: float = 4.0,
    order: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(C, C_air): the 2×2 Maxwell capacitance matrices (units of ε0, per unit length) of two
    strips anywhere between the plane at y = 0 and the plane at ``top_plane_mm``, in the
    dielectric slabs ``layers`` and in air: the general cross-section (no symmetry plane), so
    strips side by side, one above the other (broadside: a dual stripline's two signal layers)
    or offset both ways.  Side walls far away (12 plane spacings) are Neumann.

    Each matrix comes from the energies of three potential sets on one mesh, (1, 0), (0, 1) and
    (1, 1): C11, C22 and C11 + C22 + 2·C12; meshes ``resolution/2`` and ``resolution`` are
    Richardson-extrapolated at ``order`` (:func:`fd_coupled`).  Proof (tests): two strips side
    by side reproduce Cohn's exact coupled stripline like :func:`fd_coupled`."""
    k = 1.0 / (2.0**order - 1.0)
    lo = _two_strip_caps(a, b, layers, top_plane_mm, resolution / 2.0)
    hi = _two_strip_caps(a, b, layers, top_plane_mm, resolution)
    c = hi[0] + k * (hi[0] - lo[0])
    c_air = hi[1] + k * (hi[1] - lo[1])
    return c, c_air


def _two_strip_caps(
    a: Strip, b: Strip, layers: Sequence[FdLayer], top: float, resolution: float
) -> tuple[np.ndarray, np.ndarray]:
    """(C, C_air) of :func:`fd_two_strips` on one mesh."""
    for s in (a, b):
        _check_pos(width=s.x1 - s.x0)
        if s.y1 < s.y0 or s.y0 <= 0.0 or s.y1 >= top:
            raise ValueError("two strips: a strip must lie between the planes")
    gaps = [a.y0, b.y0, top - a.y1, top - b.y1, abs(a.y0 - b.y1), abs(b.y0 - a.y1)]
    sep = max(a.x0 - b.x1, b.x0 - a.x1)  # > 0: side by side
    if sep > 0:
        gaps.append(sep)
    scale = min([a.x1 - a.x0, b.x1 - b.x0] + [g for g in gaps if g > 1e-9])
    hmin = scale / (40.0 * resolution)
    # as fine as :func:`fd_coupled` at the strips' own scale: the largest width or the nearest
    # plane or strip above or below, whichever is larger
    near = min(g for g in gaps[:6] if g > 1e-9)
    hmax = max(a.x1 - a.x0, b.x1 - b.x0, near) / (2.0 * resolution)
    grow = 1.0 + 0.25 / resolution
    left, right = min(a.x0, b.x0) - 12.0 * top, max(a.x1, b.x1) + 12.0 * top
    xkeys = [left, a.x0, a.x1, b.x0, b.x1, right]
    ykeys = [0.0, a.y0, a.y1, b.y0, b.y1, top]
    for lay in layers:
        ykeys += [min(max(lay.y0, 0.0), top), min(max(lay.y1, 0.0), top)]
    xs = _graded(xkeys, [a.x0, a.x1, b.x0, b.x1], hmin, hmax, grow)
    ys = _graded(ykeys, [a.y0, a.y1, b.y0, b.y1], hmin, hmax, grow)
    yc = 0.5 * (ys[:-1] + ys[1:])
    eps = np.ones((xs.size - 1, yc.size))
    for lay in layers:
        eps[:, (yc > lay.y0) & (yc < lay.y1)] = lay.er
    gx, gy = np.meshgrid(xs, ys, indexing="ij")

    def on(s: Strip) -> np.ndarray:
        return (
            (gx >= s.x0 - 1e-12)
            & (gx <= s.x1 + 1e-12)
            & (gy >= s.y0 - 1e-12)
            & (gy <= s.y1 + 1e-12)
        )

    on_a, on_b = on(a), on(b)
    fixed = on_a | on_b | (gy <= 1e-12) | (gy >= top - 1e-12)
    homogeneous = bool(np.all(eps == eps.flat[0]))
    maps = [np.ones_like(eps)] if homogeneous else [np.ones_like(eps), eps]
    energies = []
    with _one_blas_thread():
        for va, vb in ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0)):
            value = np.where(on_a, va, 0.0) + np.where(on_b, vb, 0.0)
            got = _fd_capacitances(xs, ys, maps, fixed, value)
            energies.append(got if not homogeneous else [got[0], float(eps.flat[0]) * got[0]])
    out = []
    for m in (1, 0):  # dielectric, then air
        c11, c22, both = (e[m] for e in energies)
        c12 = 0.5 * (both - c11 - c22)
        out.append(np.array([[c11, c12], [c12, c22]]))
    return out[0], out[1]
