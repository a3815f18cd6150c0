"""DC IR drop solver (analysis/irdrop.py) against exact results: a uniform plane, an annular
plane, two planes in series through N plated barrels, current conservation, mesh convergence,
ρ(T)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from accel_drc.analysis import irdrop
from accel_drc.model import (
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

RHO = irdrop.RHO20_OHM_M
T_MM = 0.035


def board_of(
    zones: list[tuple[int, np.ndarray]],
    footprints: list[Footprint],
    layers: int = 1,
    vias: Vias | None = None,
    gap_mm: float = 0.2,
) -> Board:
    stack = []
    for i in range(layers):
        stack.append(StackupLayer(copper_layer_name(i, layers), "copper", T_MM, copper_index=i))
        if i < layers - 1:
            stack.append(StackupLayer(f"dielectric {i + 1}", "core", gap_mm))
    return Board(
        source="synthetic",
        format="kicad_pcb",
        copper_layers=tuple(
            CopperLayer(i, copper_layer_name(i, layers), copper_layer_name(i, layers))
            for i in range(layers)
        ),
        stackup=Stackup(tuple(stack)),
        nets=("", "VCORE"),
        zones=tuple(
            Zone(net=1, net_name="VCORE", layers=(li,), filled={li: (ring,)}) for li, ring in zones
        ),
        footprints=tuple(footprints),
        vias=vias if vias is not None else Vias(layer_count=layers),
    )


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], float)


def pad_strip(ref: str, x: float, y0: float, y1: float, n: int, layer: int = 0) -> Footprint:
    """``n`` small square pads in a column at ``x``: together a full-width electrode."""
    ys = np.linspace(y0, y1, n + 2)[1:-1]
    step = (y1 - y0) / n
    pads = tuple(
        Pad(str(k + 1), 1, "smd", "rect", x, float(y), step, step, copper_layers=(layer,))
        for k, y in enumerate(ys)
    )
    return Footprint(ref, "", "", "F.Cu", x, (y0 + y1) / 2, pads=pads)


def spec(**kw: object) -> dict[str, object]:
    return {"name": "VCORE", "nets": ["VCORE"], "voltage": 0.8, **kw}


CFG20 = {"stackup": {"temperature_c": 20, "via_plating_um": 25, "conductivity_s_per_m": 1 / RHO}}


def test_uniform_plane_is_rho_l_over_wt() -> None:
    """A 40 × 10 mm plane, source and load electrodes across its full width at both ends."""
    L, W = 40.0, 10.0
    b = board_of(
        [(0, rect(0, 0, L, W))],
        [pad_strip("U20", 0.25, 0, W, 20), pad_strip("U1", L - 0.25, 0, W, 20)],
    )
    r = irdrop.solve_rail(b, spec(sources=["U20"], loads={"U1": 100.0}), CFG20, cell_mm=0.5)
    exact = RHO * 1e3 * (L - 0.5) / (W * T_MM)  # electrode centres 0.25 mm in from each end
    assert r.resistance_ohm == pytest.approx(exact, rel=0.01)
    assert r.worst_drop_mv == pytest.approx(100.0 * exact * 1e3, rel=0.01)
    # current conservation: what the source gives is what the load draws
    assert abs(r.source_current_a - 100.0) < 1e-6 * 100.0
    # uniform current density I/(W t) (the max includes the electrodes' corner cells)
    assert r.jmax["F.Cu"][0] == pytest.approx(100.0 / (W * T_MM), rel=0.05)


def ring(cx: float, cy: float, r: float, n: int = 720) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.c_[cx + r * np.cos(a), cy + r * np.sin(a)]


def test_annular_plane_is_rho_ln_over_2pi_t() -> None:
    """Central round pad (r1) loaded, the plane's outer ring (r2) the source."""
    r1, r2 = 2.0, 20.0
    outer_pads = tuple(
        Pad(
            str(k),
            1,
            "smd",
            "circle",
            20 * math.cos(a) * 1.0,
            20 * math.sin(a),
            0.6,
            0.6,
            copper_layers=(0,),
        )
        for k, a in enumerate(np.linspace(0, 2 * np.pi, 400, endpoint=False))
    )
    src = Footprint("U20", "", "", "F.Cu", 0, 0, pads=outer_pads)
    load = Footprint(
        "U1",
        "",
        "",
        "F.Cu",
        0,
        0,
        pads=(Pad("1", 1, "smd", "circle", 0, 0, 2 * r1, 2 * r1, copper_layers=(0,)),),
    )
    b = board_of([(0, ring(0, 0, r2 + 0.3))], [src, load])
    r = irdrop.solve_rail(
        b, spec(sources=["U20"], loads={"U1": 10.0}), CFG20, cell_mm=0.1, max_nodes=10**6
    )
    exact = RHO * math.log(r2 / r1) / (2 * math.pi * T_MM * 1e-3)
    # the load's pad is one equipotential (min over it = its potential, up to the grid)
    assert r.resistance_ohm == pytest.approx(exact, rel=0.02)


@pytest.mark.parametrize("n_vias", [1, 4, 16])
def test_two_layers_in_series_through_n_vias(n_vias: int) -> None:
    """F.Cu plane (source at its left end) -> N barrels -> B.Cu plane (load at its left end).
    The barrels stand in a 2 mm land across the strip's right end on both layers (one pad each
    side: an equipotential), so no spreading enters: R = plane + barrel/N + plane."""
    L, W, gap = 30.0, 4.0, 1.5
    drill, plating = 0.3, 0.025
    xs = np.full(n_vias, L - 1.0)
    ys = np.linspace(0, W, n_vias + 2)[1:-1]
    vias = Vias(
        pos=np.c_[xs, ys],
        drill=np.full(n_vias, drill),
        diameter=np.full(n_vias, 0.6),
        start=np.zeros(n_vias, np.int16),
        end=np.ones(n_vias, np.int16),
        net=np.ones(n_vias, np.int32),
        micro=np.zeros(n_vias, bool),
        uuid=tuple(f"v{i}" for i in range(n_vias)),
        layer_count=2,
    )
    land = Footprint(
        "J1",
        "",
        "",
        "F.Cu",
        L - 1,
        W / 2,
        pads=(
            Pad("1", 1, "smd", "rect", L - 1, W / 2, 2.0, W, copper_layers=(0,)),
            Pad("2", 1, "smd", "rect", L - 1, W / 2, 2.0, W, copper_layers=(1,)),
        ),
    )
    b = board_of(
        [(0, rect(0, 0, L, W)), (1, rect(0, 0, L, W))],
        [pad_strip("U20", 0.25, 0, W, 16, 0), pad_strip("U1", 0.25, 0, W, 16, 1), land],
        layers=2,
        vias=vias,
        gap_mm=gap,
    )
    r = irdrop.solve_rail(
        b, spec(sources=["U20"], loads={"U1": 20.0}), CFG20, cell_mm=0.25, max_nodes=10**6
    )
    plane = RHO * 1e3 * (L - 2.0 - 0.25) / (W * T_MM)  # electrode centre to the land's edge
    barrel = irdrop.barrel_resistance(gap + T_MM, drill, plating, RHO)
    exact = 2 * plane + barrel / n_vias
    assert r.resistance_ohm == pytest.approx(exact, rel=0.02)
    assert r.max_via_current_a == pytest.approx(20.0 / n_vias, rel=1e-6)
    assert abs(r.source_current_a - 20.0) < 1e-6 * 20.0


def test_barrel_formula() -> None:
    # 0.3 mm drill, 25 µm plating, 1.6 mm: ρL/(π(0.15² − 0.125²))
    got = irdrop.barrel_resistance(1.6, 0.3, 0.025, RHO)
    assert got == pytest.approx(RHO * 1.6e-3 / (math.pi * (0.15e-3**2 - 0.125e-3**2)), rel=1e-12)


def test_mesh_convergence() -> None:
    """A plane fed at a corner by one pad and loaded at the other: halving the cell changes the
    drop less and less, and the Peaceman-corrected via ends converge."""
    b = board_of(
        [(0, rect(0, 0, 30, 20))],
        [
            Footprint(
                "U20",
                "",
                "",
                "F.Cu",
                2,
                2,
                pads=(Pad("1", 1, "smd", "rect", 2, 2, 2, 2, copper_layers=(0,)),),
            ),
            Footprint(
                "U1",
                "",
                "",
                "F.Cu",
                28,
                18,
                pads=(Pad("1", 1, "smd", "rect", 28, 18, 2, 2, copper_layers=(0,)),),
            ),
        ],
    )
    drops = [
        irdrop.solve_rail(
            b, spec(sources=["U20"], loads={"U1": 10.0}), CFG20, cell_mm=h, max_nodes=10**7
        ).worst_drop_mv
        for h in (1.0, 0.5, 0.25, 0.125)
    ]
    d = np.abs(np.diff(drops))
    assert d[1] < d[0] and d[2] < d[1]
    assert d[2] / drops[-1] < 0.02


def test_temperature_scaling() -> None:
    assert irdrop.rho(20.0) == RHO
    assert irdrop.rho(85.0) == pytest.approx(RHO * (1 + 0.00393 * 65), rel=1e-12)
    b = board_of(
        [(0, rect(0, 0, 20, 5))],
        [pad_strip("U20", 0.25, 0, 5, 10), pad_strip("U1", 19.75, 0, 5, 10)],
    )
    s = spec(sources=["U20"], loads={"U1": 10.0})
    r20 = irdrop.solve_rail(b, s, CFG20, cell_mm=0.5)
    hot = {"stackup": {**CFG20["stackup"], "temperature_c": 85}}
    r85 = irdrop.solve_rail(b, s, hot, cell_mm=0.5)
    assert r85.resistance_ohm / r20.resistance_ohm == pytest.approx(1 + 0.00393 * 65, rel=1e-9)


def test_undeclared_rail_names_what_to_declare() -> None:
    b = board_of([(0, rect(0, 0, 20, 5))], [pad_strip("U20", 0.25, 0, 5, 10)])
    r = irdrop.solve_rail(
        b, {"name": "VCORE", "nets": ["VCORE"], "voltage": 0.8, "ir_drop_max_pct": 2}
    )
    assert r.missing and "sources" in r.missing[0] and "loads" in r.missing[1]


def test_no_declared_rail_imports_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from accel_drc.analysis.irdrop import compute; "
        "assert compute(None, {'rails': [{'name': 'V', 'nets': ['V']}]}) == []; "
        "print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------
# the check kinds, end to end through check_board, and --detail irdrop
# ---------------------------------------------------------------------------------------------


def _bench():  # noqa: ANN202 - the bench module (its board builder)
    from _scripts import load_script

    return load_script("bench/bench_irdrop.py", "bench_irdrop")


def test_check_kinds_end_to_end() -> None:
    from accel_drc.pipeline import check_board

    bench = _bench()
    b = bench.make_board(100, 200, 200)
    declared = {"stackup": dict(bench.STACKUP), "rails": [bench.RAIL]}
    res = check_board(b, {"class": "training", **declared}, board_class="training")
    ir = [f for f in res.findings if f.check == "ir_drop"]
    assert len(ir) == 1 and ir[0].status.value == "violation"  # every input declared or measured
    assert ir[0].pos is not None and ir[0].unit == "%" and ir[0].measured > ir[0].limit
    cd = [f for f in res.findings if f.check == "current_density"]
    assert cd and all(f.pos is not None for f in cd)
    row = res.extras["irdrop"][0]
    assert row["maps"] and row["maps"][0]["voltage_png"].startswith("data:image/png;base64,")
    assert abs(row["source_current_a"] - 600.0) < 600.0 * 1e-6
    # the rail's own limit wins over the pack's
    loose = {**bench.RAIL, "ir_drop_max_pct": 50}
    res = check_board(
        b, {"class": "training", **declared, "rails": [loose]}, board_class="training"
    )
    assert not [f for f in res.findings if f.check == "ir_drop"]
    # plating undeclared: the drop's violation is conditional on it
    res = check_board(b, {"class": "training", "rails": [bench.RAIL]}, board_class="training")
    (f,) = [f for f in res.findings if f.check == "ir_drop"]
    assert (
        f.status.value == "cannot_verify" and "via_plating" in f.evidence["conditional"]["rests_on"]
    )
    # temperature undeclared and failing at 20 °C: robust to it
    assert "temperature" in f.evidence.get("robust_to", [])


def test_partly_declared_rail_is_cannot_verify() -> None:
    from accel_drc.pipeline import check_board

    bench = _bench()
    b = bench.make_board(60, 50, 50)
    rail = {"name": "VCORE", "nets": ["VCORE"], "voltage": 0.8, "ir_drop_max_pct": 2}
    res = check_board(b, {"class": "training", "rails": [rail]}, board_class="training")
    (f,) = [f for f in res.findings if f.check == "ir_drop"]
    assert f.status.value == "cannot_verify" and "sources" in f.message and "loads" in f.message


def test_detail_irdrop_rows() -> None:
    from accel_drc.inspection import _details

    bench = _bench()
    b = bench.make_board(60, 50, 50)
    got = _details(b, ["irdrop"], {"rails": [bench.RAIL], "stackup": bench.STACKUP}, "training")
    (row,) = got["irdrop"]
    for key in (
        "rail",
        "nets",
        "voltage",
        "sources",
        "loads",
        "worst_drop_mv",
        "worst_drop_pct",
        "max_current_density_a_per_mm2",
        "max_via_current_a",
        "resistance_ohm",
        "mesh",
        "method",
    ):
        assert key in row
    (load,) = row["loads"]
    assert set(load) >= {"ref", "current_a", "v_min", "drop_mv", "drop_pct"}
    assert load["drop_mv"] == pytest.approx((0.8 - load["v_min"]) * 1e3, rel=1e-3)


def test_html_shows_heat_maps() -> None:
    from accel_drc.pipeline import check_board
    from accel_drc.report.html import render

    bench = _bench()
    b = bench.make_board(60, 50, 50)
    cfg = {"class": "training", "stackup": dict(bench.STACKUP), "rails": [bench.RAIL]}
    res = check_board(b, cfg, board_class="training")
    page = render(res, b)
    assert 'id="irdrop"' in page and page.count('src="data:image/png;base64,') == 8  # 4 layers × 2
    assert "img-src data:;" in page  # inline images only: nothing is fetched
    # and over the board view: one hidden group per map, a toggle for each
    assert page.count('<g class="heat" data-layer="heat-') == 8
    assert page.count('<input type="checkbox" data-layer="heat-') == 8


def test_return_path_adds_its_rise() -> None:
    """The same plane on B.Cu as GND, the same electrodes: the return rises as much as the
    supply drops, so the load sees twice the drop."""
    L, W = 20.0, 5.0

    def strip(ref: str, x: float) -> Footprint:
        ys = np.linspace(0, W, 12)[1:-1]
        pads = tuple(
            Pad(f"{n}{k}", net, "smd", "rect", x, float(y), 0.5, 0.5, copper_layers=(li,))
            for k, y in enumerate(ys)
            for n, net, li in (("V", 1, 0), ("G", 2, 1))
        )
        return Footprint(ref, "", "", "F.Cu", x, W / 2, pads=pads)

    b = board_of([(0, rect(0, 0, L, W))], [strip("U20", 0.25), strip("U1", L - 0.25)], layers=2)
    gnd = Zone(net=2, net_name="GND", layers=(1,), filled={1: (rect(0, 0, L, W),)})
    b = Board(**{**b.__dict__, "nets": ("", "VCORE", "GND"), "zones": (*b.zones, gnd)})
    s = spec(sources=["U20"], loads={"U1": 10.0})
    one = irdrop.solve_rail(b, s, CFG20, cell_mm=0.25)
    both = irdrop.solve_rail(b, {**s, "return_nets": ["GND"]}, CFG20, cell_mm=0.25)
    assert both.rows[0]["return_rise_mv"] == pytest.approx(one.worst_drop_mv, rel=1e-3)
    assert both.worst_drop_mv == pytest.approx(2 * one.worst_drop_mv, rel=1e-3)


def test_config_keys_validate(tmp_path: object) -> None:
    """The issue's config, names exactly, loads; a bad current or plating is refused (exit 3)."""
    from pathlib import Path

    from accel_drc.config import load_config
    from accel_drc.errors import InputError

    d = Path(str(tmp_path))
    good = d / "good.yaml"
    good.write_text(
        "rails:\n  - name: VCORE\n    nets: ['VCORE']\n    voltage: 0.8\n    role: core\n"
        "    sources: [U20, U21]\n    loads: {U1: 600}\n    return_nets: ['GND']\n"
        "    ir_drop_max_pct: 2\nstackup:\n  via_plating_um: 25\n"
        "  conductivity_s_per_m: 5.8e7\n  temperature_c: 60\n",
        encoding="utf-8",
    )
    cfg = load_config(str(good), None)
    assert cfg.data["rails"][0]["loads"] == {"U1": 600}
    for bad in ("    loads: {U1: -5}\n", "    sources: []\n", "    loads: {}\n"):
        p = d / "bad.yaml"
        p.write_text("rails:\n  - name: V\n    nets: ['V']\n" + bad, encoding="utf-8")
        with pytest.raises(InputError):
            load_config(str(p), None)


# ---------------------------------------------------------------------------------------------
# scope: the core rail without sources/loads is cannot_verify with an entry to paste
# ---------------------------------------------------------------------------------------------


def _scope_findings(board: Board, config: dict) -> list:
    from accel_drc.pipeline import check_board

    res = check_board(board, {"class": "training", **config}, board_class="training")
    return [f for f in res.findings if f.check in ("ir_drop", "current_density")]


def test_core_rail_without_ir_keys_gets_paste_ready_entry() -> None:
    import yaml

    bench = _bench()
    b = bench.make_board(60, 50, 50)
    core = {"name": "VCORE", "nets": ["VCORE"], "voltage": 0.8, "role": "core"}
    got = _scope_findings(b, {"rails": [core]})
    ir = [f for f in got if f.check == "ir_drop"]
    cd = [f for f in got if f.check == "current_density"]
    assert len(ir) == 1 and len(cd) == 1
    (f,) = ir
    assert f.status.value == "cannot_verify" and f.net == "VCORE"
    assert f.evidence["basis"]["role"] == "declared"
    entry = f.evidence["declare_entry"]
    assert "sources: [U20, U21]" in entry and "GUESSED" in entry  # the two VRM footprints
    assert "loads: {U1: <A>}" in entry  # the largest BGA, current left to the designer
    assert cd[0].status.value == "cannot_verify"
    # the entry is paste-ready: with a current filled in it parses and the rail then solves
    spec = yaml.safe_load(entry.replace("<A>", "600"))["rails"][0]
    assert spec == {**core, "sources": ["U20", "U21"], "loads": {"U1": 600}}
    r = irdrop.solve_rail(b, spec, {"stackup": bench.STACKUP}, coarse_check=False)
    assert not r.missing and r.worst_drop_mv and r.worst_drop_mv > 0


def test_recognised_core_rail_is_cannot_verify_assumed() -> None:
    import dataclasses

    bench = _bench()
    b = bench.make_board(60, 50, 50)
    # no config rails: the PDN analysis detects the plane net and recognises it as the core
    # (it feeds all 50 balls of the only BGA at 0.8 V, read from its name)
    zones = tuple(dataclasses.replace(z, net_name="VDD_0V8") for z in b.zones)
    b = dataclasses.replace(b, nets=("", "VDD_0V8"), zones=zones)
    got = _scope_findings(b, {})
    ir = [f for f in got if f.check == "ir_drop"]
    assert len(ir) == 1
    (f,) = ir
    assert f.status.value == "cannot_verify" and f.evidence["basis"]["role"] == "assumed"
    assert "looks like the accelerator's core rail" in f.message
    entry = f.evidence["declare_entry"]
    assert "name: VDD_0V8" in entry and "voltage: 0.8" in entry and "role: core" in entry
    assert "loads: {U1: <A>}" in entry


def test_non_core_rail_without_ir_keys_is_out_of_scope() -> None:
    bench = _bench()
    b = bench.make_board(60, 50, 50)
    # a 3.3 V rail: not declared core, and above a core voltage, so never recognised as one
    io = {"name": "VCORE", "nets": ["VCORE"], "voltage": 3.3}
    assert _scope_findings(b, {"rails": [io]}) == []
    assert _scope_findings(b, {"rails": [{**io, "role": "io"}]}) == []


@pytest.mark.slow
def test_vme_wren_one_core_finding() -> None:
    """vme-wren (12 layers, 14 detected power rails): one ir_drop finding, for P0V85 (the
    FPGA core, recognised), not one per rail."""
    from pathlib import Path

    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    path = Path(__file__).resolve().parents[2] / "shared/boards/vme-wren/vme-wren.kicad_pcb"
    if not path.exists():
        pytest.skip("vme-wren is not on this machine")
    b = read_board(str(path))
    res = check_board(b, {}, board_class="edge")
    ir = [f for f in res.findings if f.check == "ir_drop"]
    assert len(ir) == 1 and ir[0].net == "P0V85" and ir[0].status.value == "cannot_verify"
    assert ir[0].evidence["basis"]["role"] == "assumed"
    assert "P0V85" in ir[0].evidence["declare_entry"]


@pytest.mark.parametrize("dx", [0.0, 0.006, 0.2])
def test_a_track_ending_anywhere_in_a_via_land_conducts(dx: float) -> None:
    """A BGA dogbone: the load's ball U1 on F.Cu, a 1 mm F.Cu track to a via (0.45 mm land)
    down to a B.Cu plane fed from its far end.  KiCad joins a track to a via wherever its end
    lies in the land; the track ending 6 µm off the via's centre (across a cell boundary, as
    vme-wren's IC14 dogbones do) or 0.2 mm off must conduct exactly as one ending on it (on
    main the last two gave "no copper path to a source" for the ball)."""
    from dataclasses import replace

    from accel_drc.model import Tracks

    vx, vy = 9.999, 2.0  # the via just left of the 10.0 mm cell boundary (cell 0.25 mm)
    vias = Vias(pos=np.array([[vx, vy]]), drill=np.array([0.2]), diameter=np.array([0.45]),
                start=np.zeros(1, np.int16), end=np.ones(1, np.int16), net=np.ones(1, np.int32),
                micro=np.zeros(1, bool), uuid=("v",), layer_count=2)  # fmt: skip
    ball = Footprint("U1", "", "", "F.Cu", vx - 1.0, vy,
                     pads=(Pad("A1", 1, "smd", "circle", vx - 1.0, vy, 0.45, 0.45,
                               copper_layers=(0,)),))  # fmt: skip
    b = board_of([(1, rect(0, 0, 30, 4))], [pad_strip("U20", 29.75, 0, 4, 16, 1), ball],
                 layers=2, vias=vias, gap_mm=1.5)  # fmt: skip
    tracks = Tracks(start=np.array([[vx - 1.0, vy]]), end=np.array([[vx + dx, vy]]),
                    mid=np.full((1, 2), np.nan), width=np.array([0.2]),
                    layer=np.zeros(1, np.int16), net=np.ones(1, np.int32), uuid=("t",))  # fmt: skip
    b = replace(b, tracks=tracks)
    r = irdrop.solve_rail(b, spec(sources=["U20"], loads={"U1": 1.0}), CFG20, cell_mm=0.25,
                          max_nodes=10**6, coarse_check=False)  # fmt: skip
    assert r.error is None, r.error
    track = RHO * 1e3 * abs(1.0 + dx) / (0.2 * T_MM)
    assert r.resistance_ohm > track  # the track, the barrel and the plane in series
    if dx:
        base = irdrop.solve_rail(
            replace(b, tracks=replace(tracks, end=np.array([[vx, vy]]))),
            spec(sources=["U20"], loads={"U1": 1.0}), CFG20, cell_mm=0.25, max_nodes=10**6,
            coarse_check=False,
        )  # fmt: skip
        # the same node: only the track's own length differs
        assert r.resistance_ohm - base.resistance_ohm == pytest.approx(
            RHO * 1e3 * dx / (0.2 * T_MM), rel=1e-6, abs=1e-12
        )
