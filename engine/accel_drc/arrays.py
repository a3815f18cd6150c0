"""Small numpy helpers shared by the reader and the analysis.

Why :func:`unique` and :func:`median`: since numpy 2.3, ``np.unique(a)`` (no index, inverse or
counts asked) takes a hash-based path that first asks ``np.ma.is_masked(a)``, and the first
access to ``np.ma`` imports ``numpy.ma`` (``numpy/ma/core.py``: 8,000 lines, ~40
``inspect.signature`` calls), a cost paid on every run to learn that a plain array is not
masked; ``np.median`` asks ``np.ma.isMaskedArray`` likewise (and ``np.isin``, ``np.percentile``
and ``np.unique(axis=0)`` ask ``np.unique``).  The import alone: 15-22 ms of CPU, paid in the
KiCad button's click on vme-wren on whichever thread asked first (often the check's main one).
"""

from __future__ import annotations

import numpy as np

#: above this many elements ``np.unique``'s hash table beats a sort, and a one-off import of
#: ``numpy.ma`` no longer matters
_SORT_BELOW = 1 << 16


def unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of a numeric array: its distinct values, sorted, as a 1-D array of
    ``a``'s dtype (exactly what ``np.unique`` returns), without importing ``numpy.ma`` for
    arrays under :data:`_SORT_BELOW` elements.  Floats holding a NaN, and other dtypes, are
    left to ``np.unique`` (its NaN handling: one NaN kept)."""
    a = np.asarray(a).ravel()
    if a.size >= _SORT_BELOW or a.dtype.kind not in "iubf":
        return np.unique(a)
    if a.dtype.kind == "f" and np.isnan(a).any():
        return np.unique(a)
    s = np.sort(a)
    keep = np.empty(s.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def median(a: np.ndarray) -> float:
    """``float(np.median(a))`` of a plain (unmasked) 1-D array, without importing ``numpy.ma``:
    ``np.median`` asks ``np.ma.isMaskedArray`` of its input on every call (numpy 2.x,
    ``_median_nancheck``), and the first ask imports ``numpy.ma``.

    The same value as ``np.median``: the middle element of the sorted values (``np.partition``,
    as numpy does), the mean of the two middle ones for an even count (``(lo + hi) / 2``, as
    ``np.mean`` of two), NaN when any value is NaN; a ValueError for an empty array (numpy
    returns NaN with a warning: no caller here asks for the median of nothing)."""
    v = np.asarray(a, dtype=float).ravel()
    n = v.size
    if n == 0:
        raise ValueError("median of an empty array")
    if np.isnan(v).any():
        return float("nan")
    k = n // 2
    if n % 2:
        return float(np.partition(v, k)[k])
    part = np.partition(v, (k - 1, k))
    return float((part[k - 1] + part[k]) / 2)


def isin(a: np.ndarray, among: np.ndarray) -> np.ndarray:
    """``np.isin(a, among)`` of numeric arrays without NaN (a boolean array of ``a``'s shape),
    without importing ``numpy.ma``: ``np.isin`` takes its sorting path (``np.unique`` of both
    arrays) when the values span too wide a range for its lookup table.  Here: ``among``
    sorted once and each value of ``a`` looked up by ``np.searchsorted`` (exact: equal values
    compare equal)."""
    a = np.asarray(a)
    b = np.sort(np.asarray(among).ravel())
    if not b.size:
        return np.zeros(a.shape, dtype=bool)
    i = np.searchsorted(b, a)
    np.minimum(i, b.size - 1, out=i)
    return b[i] == a


def percentile(a: np.ndarray, q: float) -> float:
    """``float(np.percentile(a, q))`` (numpy's default, linear interpolation) of a 1-D array
    without NaN, without importing ``numpy.ma`` (``np.percentile`` asks ``np.unique`` of the
    two ranks it partitions at).  numpy's own arithmetic: the rank ``q/100 × (n − 1)``, the
    two neighbouring values by ``np.partition``, and its ``_lerp`` (``a + (b − a)·t``, or
    ``b − (b − a)·(1 − t)`` from ``t ≥ 0.5``), so the value is the same to the last bit."""
    v = np.asarray(a, dtype=float).ravel()
    n = v.size
    if n == 0:
        raise ValueError("percentile of an empty array")
    rank = float(np.true_divide(q, 100)) * (n - 1)
    lo = min(max(int(np.floor(rank)), 0), n - 1)
    hi = min(lo + 1, n - 1)
    part = np.partition(v, (lo, hi)) if hi != lo else np.partition(v, lo)
    x0, x1 = part[lo], part[hi]
    t = rank - lo
    d = x1 - x0
    return float(x1 - d * (1 - t)) if t >= 0.5 else float(x0 + d * t)


def sorted_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, first) of a 2-D integer array: the stable lexicographic order of its rows (the
    first column first) and, along that order, whether each row starts a run of equal rows.
    The one row grouping the engine uses (:func:`unique_rows`, the drill groups of
    ``checks._holes.group_rows``, the track-end nodes of ``analysis.delay``): one sort, not
    ``np.unique(axis=0)``, which sorts a void view of the rows and imports ``numpy.ma``."""
    order = np.lexsort(keys.T[::-1])
    k = keys[order]
    first = np.ones(len(k), dtype=bool)
    if len(k) > 1:
        np.any(k[1:] != k[:-1], axis=1, out=first[1:])
    return order, first


def unique_rows(a: np.ndarray) -> np.ndarray:
    """``np.unique(a, axis=0)`` of a 2-D integer array (its distinct rows in lexicographic
    order, the first column first), without importing ``numpy.ma`` (:func:`sorted_rows`)."""
    a = np.asarray(a)
    if a.ndim != 2 or a.dtype.kind not in "iub":
        return np.unique(a, axis=0)
    order, first = sorted_rows(a)
    return a[order][first]
