"""The stack-up as a via sees it: each layer's position and the dielectric between (a column
built once per via table with prefix sums), the length and effective εr of a barrel between two
layers, and a stub's quarter-wave resonance."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..model import Board

#: speed of light in vacuum (m/s)
C0 = 299_792_458.0
MM_PER_MIL = 0.0254
#: tolerance (mm) on "touches": KiCad works in nm, fills approximate arcs


# ---------------------------------------------------------------------------------------------
# stack-up geometry
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StackGeometry:
    """The copper/dielectric column along a barrel, as prefix sums over segments.

    Segments in z order: ``Cu0, D0, Cu1, D1, …, Cu(n-1)`` (segment ``2i`` is copper layer ``i``,
    ``2i+1`` the dielectric(s) between copper ``i`` and ``i+1``, sublayers summed).  Any length
    over a segment range is a difference of prefix sums; a range crossing an undeclared
    thickness is unknown (NaN), not zero.
    """

    n_layers: int
    thickness: np.ndarray  # (2n-1,) mm, NaN = undeclared
    eps_t: np.ndarray  # (2n-1,) Σ εr·t over dielectric sublayers (0 for copper), NaN = unknown εr
    diel_t: np.ndarray  # (2n-1,) dielectric thickness (0 for copper)

    @classmethod
    def from_board(cls, board: Board) -> StackGeometry:
        n = board.layer_count
        seg = 2 * n - 1
        thickness = np.full(seg, np.nan)
        eps_t = np.zeros(seg)
        diel_t = np.zeros(seg)
        st = board.stackup
        if st is None or len(st.copper()) != n:
            eps_t[:] = np.nan
            return cls(n, thickness, eps_t, diel_t)
        for layer in st.copper():
            idx = layer.copper_index
            if idx is None or not 0 <= idx < n:
                continue
            if layer.thickness_mm is not None:
                thickness[2 * idx] = layer.thickness_mm
        for i in range(n - 1):
            diels = st.dielectrics_between(i, i + 1)
            if not diels:
                eps_t[2 * i + 1] = np.nan
                continue
            t_sum = 0.0
            et_sum = 0.0
            for d in diels:
                subs = d.sublayers or ()
                slices = [(s.thickness_mm, s.epsilon_r) for s in subs] or [
                    (d.thickness_mm, d.epsilon_r)
                ]
                if len(subs) > 0 and any(s.thickness_mm is None for s in subs):
                    # sublayer thicknesses missing: fall back to the layer's total
                    slices = [(d.thickness_mm, d.epsilon_r)]
                for t, er in slices:
                    if t is None:
                        t_sum = math.nan
                    else:
                        t_sum += t
                        et_sum += math.nan if er is None else er * t
            thickness[2 * i + 1] = t_sum
            diel_t[2 * i + 1] = 0.0 if math.isnan(t_sum) else t_sum
            eps_t[2 * i + 1] = et_sum
        return cls(n, thickness, eps_t, diel_t)

    @functools.cached_property
    def _prefixes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Prefix sums of thickness, undeclared-count, εr·t, unknown-εr count and dielectric
        thickness (computed once per geometry: the remedies of 10k violating vias ask for
        spans one at a time, and rebuilding five arrays per ask was most of their cost)."""

        def pre(a: np.ndarray) -> np.ndarray:
            return np.concatenate(([0.0], np.cumsum(a)))

        return (
            pre(np.nan_to_num(self.thickness, nan=0.0)),
            pre(np.isnan(self.thickness).astype(float)),
            pre(np.nan_to_num(self.eps_t, nan=0.0)),
            pre(np.isnan(self.eps_t).astype(float)),
            pre(self.diel_t),
        )

    def _prefix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._prefixes

    @functools.cached_property
    def _prefix_lists(self) -> tuple[list[float], ...]:
        return tuple(a.tolist() for a in self._prefixes)

    def span(self, lo: int, hi: int) -> tuple[float, float]:
        """``(length, eps_eff)`` of segments ``lo .. hi-1`` as Python floats: the scalar twin of
        :meth:`length` and :meth:`eps_eff` (the same prefix differences, bit for bit), for
        per-via callers where building one-element arrays costs more than the arithmetic."""
        p_t, p_nan, p_et, p_enan, p_d = self._prefix_lists
        hi = max(hi, lo)
        length = math.nan if p_nan[hi] - p_nan[lo] > 0 else p_t[hi] - p_t[lo]
        d = p_d[hi] - p_d[lo]
        if d <= 0 or p_enan[hi] - p_enan[lo] > 0:
            return length, math.nan
        return length, (p_et[hi] - p_et[lo]) / d

    def length(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Σ thickness of segments ``lo .. hi-1`` (vectorised; NaN if any is undeclared)."""
        p_t, p_nan, _, _, _ = self._prefixes
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.maximum(np.asarray(hi, dtype=np.int64), lo)
        out = p_t[hi] - p_t[lo]
        out[(p_nan[hi] - p_nan[lo]) > 0] = np.nan
        return out

    def eps_eff(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Thickness-weighted εr of the dielectrics in segments ``lo .. hi-1`` (NaN if none or
        unknown)."""
        _, _, p_et, p_enan, p_d = self._prefixes
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.maximum(np.asarray(hi, dtype=np.int64), lo)
        d = p_d[hi] - p_d[lo]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (p_et[hi] - p_et[lo]) / d
        out[(d <= 0) | ((p_enan[hi] - p_enan[lo]) > 0)] = np.nan
        return out

    # positions of faces, for tests and docs
    def top_face(self, i: int) -> float:
        return float(self.length(np.array([0]), np.array([2 * i]))[0])

    def bottom_face(self, i: int) -> float:
        return float(self.length(np.array([0]), np.array([2 * i + 1]))[0])


def resonance_hz(stub_mm: np.ndarray | float, eps_eff: np.ndarray | float) -> np.ndarray:
    """Quarter-wave resonance of an open stub: f = c / (4 · L · √εeff).  0 length → inf."""
    stub = np.asarray(stub_mm, dtype=float)
    eps = np.asarray(eps_eff, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return C0 / (4.0 * stub * 1e-3 * np.sqrt(eps))
