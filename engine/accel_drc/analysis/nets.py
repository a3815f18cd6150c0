"""Where each net runs: copper layers, track rows, plane coverage.

A net is *routed* on a layer when it has a track or arc there; its zones on a layer count too
(a plane or a pour is copper of that net on that layer).  Vias alone do not: a via passing
through a layer carries no signal along it.  Everything is computed with numpy on the columnar
track arrays, so a million segments cost milliseconds, not a Python loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..arrays import unique
from ..geometry import ring_area
from .railnames import is_ground, is_power

if TYPE_CHECKING:
    from ..model import Board

_LAYER_SPAN = 1024  # > any copper stack index


def net_layers(board: Board) -> dict[int, frozenset[int]]:
    """Net index -> copper stack indexes it is routed on (tracks, arcs and zones)."""
    out: dict[int, set[int]] = {}
    t = board.tracks
    if len(t):
        key = t.net.astype(np.int64) * _LAYER_SPAN + t.layer.astype(np.int64)
        for k in unique(key):  # (no numpy.ma import on a small board)
            net, layer = divmod(int(k), _LAYER_SPAN)
            if net:
                out.setdefault(net, set()).add(layer)
    for z in board.zones:
        if z.net and not z.keepout:
            layers = [ly for ly in z.layers if z.filled.get(ly)] or list(z.layers)
            out.setdefault(z.net, set()).update(layers)
    return {k: frozenset(v) for k, v in out.items()}


class TrackIndex:
    """Rows of the track table by (net, layer), via one sort and binary search."""

    def __init__(self, board: Board) -> None:
        t = board.tracks
        key = t.net.astype(np.int64) * _LAYER_SPAN + t.layer.astype(np.int64)
        self._order = np.argsort(key, kind="stable")
        self._keys = key[self._order]

    def rows(self, net: int, layer: int) -> np.ndarray:
        k = net * _LAYER_SPAN + layer
        lo = int(np.searchsorted(self._keys, k, side="left"))
        hi = int(np.searchsorted(self._keys, k, side="right"))
        return self._order[lo:hi]

    def rows_many(self, nets: Sequence[int], layer: int) -> np.ndarray:
        """``rows(n, layer)`` of each of ``nets``, concatenated in that order: two binary
        searches for all of them (a check asks per layer for dozens of nets)."""
        k = np.asarray(nets, dtype=np.int64) * _LAYER_SPAN + layer
        lo = np.searchsorted(self._keys, k, side="left")
        n = np.searchsorted(self._keys, k, side="right") - lo
        at = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        return self._order[at]

    def net_rows(self, net: int) -> np.ndarray:
        """Rows of ``net`` on every layer (by layer, then row): one binary search, not a scan."""
        lo = int(np.searchsorted(self._keys, net * _LAYER_SPAN, side="left"))
        hi = int(np.searchsorted(self._keys, (net + 1) * _LAYER_SPAN, side="left"))
        return self._order[lo:hi]


class JoinedStrings(Sequence):
    """``head[0:n]`` (missing rows read as "") followed by ``tail``, without decoding ``head``.

    Why: the reader keeps track and via uuids as spans of the board text, decoded on access;
    copying 166k via uuids into a tuple cost more than the via-stub analysis that needs a few
    of them (the ones a finding names)."""

    def __init__(self, head: Sequence[str], n: int, tail: Sequence[str] = ()) -> None:
        self._head = head
        self._n = n
        self._n_head = min(n, len(head))
        self._tail = tuple(tail)

    def __len__(self) -> int:
        return self._n + len(self._tail)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN204
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("index out of range")
        if i < self._n:
            return self._head[i] if i < self._n_head else ""
        return self._tail[i - self._n]

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield self[i]


def board_area_mm2(board: Board) -> float | None:
    """Area inside the outline: the largest closed ring, else the bounding box."""
    best = 0.0
    for ring in board.outline.rings:
        if len(ring) >= 3:
            best = max(best, ring_area(ring))
    if best > 0:
        return best
    size = board.outline.size_mm
    if size and size[0] > 0 and size[1] > 0:
        return size[0] * size[1]
    return None


def zone_fractions(board: Board) -> dict[int, dict[int, float]]:
    """Copper layer -> {net index: fraction of the board area its zones fill on that layer}."""
    area = board_area_mm2(board)
    out: dict[int, dict[int, float]] = {}
    if not area:
        return out
    for z in board.zones:
        if not z.net or z.keepout:
            continue
        for layer in z.layers:
            a = z.filled_area_mm2(layer)
            if a == 0.0 and not z.filled.get(layer) and len(z.outline) >= 3:
                a = ring_area(z.outline)
            d = out.setdefault(layer, {})
            d[z.net] = d.get(z.net, 0.0) + a / area
    return out


def plane_layers(
    board: Board, fractions: Mapping[int, Mapping[int, float]], min_fraction: float = 0.25
) -> dict[int, list[tuple[str, float]]]:
    """Copper layers that carry a power or ground plane: typed ``power`` in the board, or filled
    over at least ``min_fraction`` of the board by zones of supply/ground nets (named so by
    :mod:`.railnames`, the one owner of that naming).

    Layer -> [(net name, fraction)] (empty list for a layer typed power without zones)."""
    out: dict[int, list[tuple[str, float]]] = {}
    for layer in board.copper_layers:
        if layer.kind == "power":
            out[layer.index] = []
    for layer, nets in fractions.items():
        for net, frac in sorted(nets.items(), key=lambda kv: -kv[1]):
            name = board.nets[net]
            if frac >= min_fraction and (is_power(name) or is_ground(name)):
                out.setdefault(layer, []).append((name, frac))
    return dict(sorted(out.items()))
