"""Hand-made boards for the rule-engine tests: small enough to work the answers by hand."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from accel_drc.model import (
    Board,
    CopperLayer,
    Footprint,
    NetClassRules,
    Outline,
    Stackup,
    StackupLayer,
    Tracks,
    Zone,
    copper_layer_name,
)


def cu(thickness: float = 0.035) -> tuple:
    return ("cu", thickness)


def diel(
    name: str,
    material: str | None,
    er: float | None,
    tand: float | None,
    t: float = 0.1,
    kind: str = "core",
) -> tuple:
    return ("diel", name, material, er, tand, t, kind)


def stackup(*spec: tuple) -> Stackup:
    """Copper and dielectric entries top to bottom; copper layers get indexes in order."""
    n_cu = sum(1 for s in spec if s[0] == "cu")
    layers = [StackupLayer("F.Mask", "soldermask", 0.01)]
    k = 0
    for s in spec:
        if s[0] == "cu":
            layers.append(StackupLayer(copper_layer_name(k, n_cu), "copper", s[1], copper_index=k))
            k += 1
        else:
            _, name, mat, er, tand, t, kind = s
            layers.append(StackupLayer(name, kind, t, mat, er, tand))
    layers.append(StackupLayer("B.Mask", "soldermask", 0.01))
    return Stackup(tuple(layers))


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def make_board(
    n_layers: int,
    nets: Sequence[str] = (),
    tracks: Sequence[tuple[str, int, tuple[float, float], tuple[float, float]]] = (),
    zones: Sequence[tuple[str, int, np.ndarray]] = (),
    stack: Stackup | None = None,
    size: tuple[float, float] = (100.0, 80.0),
    kinds: dict[int, str] | None = None,
    net_classes: NetClassRules | None = None,
    footprints: Sequence[Footprint] = (),
    source: str = "hand-made.kicad_pcb",
) -> Board:
    """A board with named nets, straight tracks (net name, layer index, start, end) and full
    zones (net name, layer index, polygon with its fill = the polygon)."""
    all_nets = ("", *nets)
    index = {n: i for i, n in enumerate(all_nets)}
    m = len(tracks)
    t = Tracks(
        start=np.array([tr[2] for tr in tracks], dtype=float).reshape(m, 2),
        end=np.array([tr[3] for tr in tracks], dtype=float).reshape(m, 2),
        mid=np.full((m, 2), np.nan),
        width=np.full(m, 0.1),
        layer=np.array([tr[1] for tr in tracks], dtype=np.int16),
        net=np.array([index[tr[0]] for tr in tracks], dtype=np.int32),
        uuid=tuple(f"00000000-0000-0000-0000-{i:012d}" for i in range(m)),
    )
    zs = tuple(
        Zone(
            net=index[name],
            net_name=name,
            layers=(layer,),
            outline=poly,
            filled={layer: (poly,)},
            uuid=f"zone-{k}",
        )
        for k, (name, layer, poly) in enumerate(zones)
    )
    kinds = kinds or {}
    copper = tuple(
        CopperLayer(
            i,
            copper_layer_name(i, n_layers),
            copper_layer_name(i, n_layers),
            kinds.get(i, "signal"),
        )
        for i in range(n_layers)
    )
    ring = rect(0, 0, size[0], size[1])
    return Board(
        source=source,
        format="kicad_pcb",
        copper_layers=copper,
        stackup=stack,
        outline=Outline(rings=(ring,), bbox=(0.0, 0.0, size[0], size[1])),
        nets=all_nets,
        net_classes=net_classes or NetClassRules(),
        tracks=t,
        zones=zs,
        footprints=tuple(footprints),
    )
