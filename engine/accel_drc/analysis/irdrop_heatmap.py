"""IR-drop heat maps for the HTML board view: per layer of a solved rail, its voltage and its
current density (A/mm²) as inline PNG data URIs (a minimal PNG writer: zlib and the four
chunks PNG needs, no imaging library), each with the board rectangle it covers (mm) and its
colour scale (blue–cyan–yellow–red; no copper transparent), at most ``max_px`` pixels a side."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import Board

if TYPE_CHECKING:
    from .irdrop import RailIR


def _png(rgba: np.ndarray) -> bytes:
    """A minimal RGBA PNG of an (h, w, 4) uint8 array (zlib + the four chunks PNG needs)."""
    import struct
    import zlib

    h, w = rgba.shape[:2]
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _colour(t: np.ndarray) -> np.ndarray:
    """0..1 -> blue-cyan-yellow-red (NaN transparent)."""
    t = np.clip(t, 0.0, 1.0)
    stops = np.array([[0, 0, 160], [0, 200, 220], [250, 230, 40], [220, 30, 20]], float)
    pos = t * (len(stops) - 1)
    i = np.minimum(pos.astype(int), len(stops) - 2)
    f = (pos - i)[..., None]
    rgb = stops[i] * (1 - f) + stops[i + 1] * f
    return rgb.astype(np.uint8)


def heat_maps(board: Board, r: RailIR, max_px: int = 600) -> list[dict[str, Any]]:
    """Per layer of the rail: a voltage map and a current-density map as PNG data URIs, with the
    board rectangle they cover (mm) and their colour scales."""
    import base64

    net = r.net
    if net is None or net.voltage is None:
        return []
    vz = net.voltage
    x0, y0 = net.origin
    ny, nx = net.shape
    step = max(1, int(math.ceil(max(nx, ny) / max_px)))
    out = []
    vmin = float(np.nanmin(vz))
    vmax = float(np.nanmax(vz))
    for li in getattr(net, "map_layers", net.layers):
        nd = net.node[li][::step, ::step]
        if not (nd >= 0).any():
            continue
        vv = np.where(nd >= 0, vz[np.maximum(nd, 0)], np.nan)
        jj = net.j_grid.get(li)
        jj = jj[::step, ::step] if jj is not None else np.full(nd.shape, np.nan)
        jtop = float(np.nanmax(jj)) if np.isfinite(jj).any() else 1.0
        maps = {}
        for kind, arr, lo, hi in (("voltage", vv, vmin, vmax), ("current_density", jj, 0.0, jtop)):
            t = (arr - lo) / (hi - lo) if hi > lo else np.zeros(arr.shape)
            rgba = np.zeros(arr.shape + (4,), np.uint8)
            rgba[..., :3] = _colour(np.nan_to_num(t))
            rgba[..., 3] = np.where(np.isfinite(arr), 210, 0)
            maps[kind] = "data:image/png;base64," + base64.b64encode(_png(rgba)).decode("ascii")
        out.append(
            {
                "layer": board.layer_name(li),
                "bbox": [x0, y0, x0 + nx * net.h, y0 + ny * net.h],
                "voltage_png": maps["voltage"],
                "voltage_range_v": [vmin, vmax],
                "current_density_png": maps["current_density"],
                "current_density_max_a_per_mm2": jtop,
            }
        )
    return out
