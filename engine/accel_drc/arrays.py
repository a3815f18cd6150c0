"""Small numpy helpers shared by the reader and the analysis.

Why :func:`unique_ints`: since numpy 2.3, ``np.unique(a)`` (no index, inverse or counts asked)
takes a hash-based path that first asks ``np.ma.is_masked(a)``, and the first access to
``np.ma`` imports ``numpy.ma`` (``numpy/ma/core.py``: 8,000 lines, ~40 ``inspect.signature``
calls), a cost paid on every run to learn that a plain integer array is not masked.
"""

from __future__ import annotations

import numpy as np

#: above this many elements ``np.unique``'s hash table beats a sort, and a one-off import of
#: ``numpy.ma`` no longer matters
_SORT_BELOW = 1 << 16


def unique_ints(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of an integer array: its distinct values, sorted, as a 1-D array of
    ``a``'s dtype (exactly what ``np.unique`` returns for integers), without importing
    ``numpy.ma`` for small arrays."""
    a = np.asarray(a).ravel()
    if a.size >= _SORT_BELOW or a.dtype.kind not in "iub":
        return np.unique(a)
    s = np.sort(a)
    keep = np.empty(s.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
