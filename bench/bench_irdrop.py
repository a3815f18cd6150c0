"""DC IR-drop solve: a 300 × 300 mm board, a 4-layer core rail (full planes on all four copper
layers), 2,000 through vias of the rail and one load of 2,000 pads, two regulators.

    python bench/bench_irdrop.py [--size 300] [--vias 2000] [--balls 2000]

Prints the solve's time, the rest of ``check`` on the same board (every other rule of the
training pack) and their ratio; the issue asks for the solve in <= 3 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

from accel_drc.model import (  # noqa: E402
    Board,
    CopperLayer,
    Footprint,
    Pad,
    Stackup,
    StackupLayer,
    Vias,
    Zone,
    copper_layer_name,
)


def make_board(size: float = 300.0, n_vias: int = 2000, n_balls: int = 2000) -> Board:
    """The bench board (also used by tests/test_irdrop.py at a small size)."""
    L = 4
    stack = []
    for i in range(L):
        stack.append(StackupLayer(copper_layer_name(i, L), "copper", 0.07, copper_index=i))
        if i < L - 1:
            stack.append(
                StackupLayer(
                    f"dielectric {i + 1}",
                    "core",
                    0.2,
                    material="FR4",
                    epsilon_r=4.2,
                    loss_tangent=0.015,
                )
            )
    plane = np.array([(1, 1), (size - 1, 1), (size - 1, size - 1), (1, size - 1)], float)
    zones = tuple(
        Zone(net=1, net_name="VCORE", layers=(li,), filled={li: (plane,)}) for li in range(L)
    )
    # the load: a square BGA of n_balls rail balls at 1 mm pitch in the board's middle
    side = int(math.ceil(math.sqrt(n_balls)))
    c = size / 2
    xs, ys = np.meshgrid(np.arange(side) - (side - 1) / 2, np.arange(side) - (side - 1) / 2)
    pts = np.c_[xs.ravel() + c, ys.ravel() + c][:n_balls]
    balls = tuple(
        Pad(f"B{k}", 1, "smd", "circle", float(x), float(y), 0.5, 0.5, copper_layers=(0,))
        for k, (x, y) in enumerate(pts)
    )
    load = Footprint("U1", "ASIC", "bench:BGA", "F.Cu", c, c, pads=balls)
    regs = []
    for k, (x, y) in enumerate(((30.0, 30.0), (size - 30.0, size - 30.0))):
        pads = tuple(
            Pad(
                str(j + 1),
                1,
                "smd",
                "rect",
                x + (j % 4) * 3.0,
                y + (j // 4) * 3.0,
                2.5,
                2.5,
                copper_layers=(0,),
            )
            for j in range(16)
        )
        regs.append(Footprint(f"U{20 + k}", "VRM", "bench:VRM", "F.Cu", x, y, pads=pads))
    # vias: half under the load's balls (via-in-pad), half around the regulators
    rng = np.random.default_rng(1)
    half = n_vias // 2
    vpos = np.vstack(
        [
            pts[rng.choice(len(pts), half, replace=False)],
            np.r_[[30.0, 30.0],] + rng.uniform(-8, 18, (n_vias - half, 2)),
        ]
    )
    vpos[half + (n_vias - half) // 2 :] += size - 60.0
    vias = Vias(
        pos=vpos,
        drill=np.full(n_vias, 0.3),
        diameter=np.full(n_vias, 0.6),
        start=np.zeros(n_vias, np.int16),
        end=np.full(n_vias, L - 1, np.int16),
        net=np.ones(n_vias, np.int32),
        micro=np.zeros(n_vias, bool),
        uuid=tuple(f"v{i}" for i in range(n_vias)),
        layer_count=L,
    )
    return Board(
        source="bench",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, L), copper_layer_name(i, L)) for i in range(L)
        ),
        stackup=Stackup(tuple(stack)),
        board_thickness_mm=0.88,
        nets=("", "VCORE"),
        zones=zones,
        footprints=(load, *regs),
        vias=vias,
    )


RAIL = {
    "name": "VCORE",
    "nets": ["VCORE"],
    "voltage": 0.8,
    "role": "core",
    "sources": ["U20", "U21"],
    "loads": {"U1": 600},
}
STACKUP = {"via_plating_um": 25, "temperature_c": 60}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=float, default=300.0)
    ap.add_argument("--vias", type=int, default=2000)
    ap.add_argument("--balls", type=int, default=2000)
    a = ap.parse_args()
    from accel_drc.analysis import irdrop
    from accel_drc.pipeline import check_board

    board = make_board(a.size, a.vias, a.balls)
    t0 = time.perf_counter()
    base = check_board(board, {"class": "training", "stackup": STACKUP}, board_class="training")
    t_rest = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = irdrop.solve_rail(board, RAIL, {"stackup": STACKUP}, coarse_check=False)
    t_solve = time.perf_counter() - t0
    t0 = time.perf_counter()
    full = check_board(
        board, {"class": "training", "stackup": STACKUP, "rails": [RAIL]}, board_class="training"
    )
    t_full = time.perf_counter() - t0
    ir = [f for f in full.findings if f.check in ("ir_drop", "current_density")]
    print(f"board {a.size:g} mm, 4-layer rail, {a.vias} vias, {a.balls} load pads")
    print(
        f"  solve: {t_solve:.2f} s  ({r.mesh['unknowns']} unknowns, {r.mesh['cell_mm']} mm cells); "
        f"drop {r.worst_drop_mv:.3f} mV, R {r.resistance_ohm * 1e6:.3f} µΩ"
    )
    print(
        f"  rest of check (no rail declared): {t_rest:.2f} s; check with the rail: {t_full:.2f} s "
        f"(solve + 2x-coarse mesh check); {len(ir)} ir findings"
    )
    print(f"  ratio solve / rest of check: {t_solve / max(t_rest, 1e-9):.2f}")
    print(f"  base findings: {len(base.findings)}")


if __name__ == "__main__":
    main()
