"""One owner per fact (issue 26): every check asks the same owner for the basis of the same
input, so the verdict never depends on which check looked.

* the basis of a net's signal type: ``analysis/signals.py`` (``SignalAssignment.basis``);
* the basis of each stack-up value, with one rule for KiCad's untouched auto stack-up, and the
  walk from a copper layer to its reference planes: ``analysis/stackup.py``.

Each test builds a board where the copies that used to decide these disagreed (a lane typed
through AC-coupling capacitors, 18 µm copper over KiCad's default FR4, a side of a trace with no
plane and two dielectrics) and asserts that every check reports the same basis.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from _h2_boards import cu, diel, make_board, rect, stackup
from accel_drc.analysis import Analysis
from accel_drc.model import Footprint, Pad, Vias
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.results import CheckResult

LIB = load_library()
SIZE = (100.0, 60.0)
FULL = rect(0.0, 0.0, *SIZE)


def _pad(number: str, net: int, x: float, y: float) -> Pad:
    return Pad(number, net, "smd", "rect", x, y, 0.5, 0.5, copper_layers=(0,))


def _cap(ref: str, a: int, b: int, y: float) -> Footprint:
    pads = (_pad("1", a, 5.0, y), _pad("2", b, 6.0, y))
    return Footprint(ref, "Capacitor_SMD:C_0201", "100n", "F.Cu", 5.5, y, pads=pads)


def _vias(rows: list[tuple[float, float, int]], n_layers: int) -> Vias:
    """Through vias (x, y, net) on every layer of an ``n_layers`` board."""
    n = len(rows)
    return Vias(
        pos=np.array([[x, y] for x, y, _ in rows], float).reshape(-1, 2),
        drill=np.full(n, 0.2),
        diameter=np.full(n, 0.4),
        start=np.zeros(n, np.int16),
        end=np.full(n, n_layers - 1, np.int16),
        net=np.array([net for _, _, net in rows], np.int32),
        micro=np.zeros(n, bool),
        uuid=tuple(f"via-{i}" for i in range(n)),
        layer_count=n_layers,
    )


#: a declared stack-up (named laminate, unequal heights): only the signal basis is in question
DECLARED4 = stackup(
    cu(),
    diel("dielectric 1", "FR408HR", 3.68, 0.0092, t=0.2, kind="prepreg"),
    cu(),
    diel("dielectric 2", "FR408HR", 3.68, 0.0092, t=0.8),
    cu(),
    diel("dielectric 3", "FR408HR", 3.68, 0.0092, t=0.2, kind="prepreg"),
    cu(),
)


def _lane_board(source: str, stack: Any = DECLARED4) -> Any:
    """A PCIe Gen5 lane: ``<source>_P/N`` (typed by its name) -> C1/C2 -> ``LINK_A_P/N``,
    routed 30 mm coupled on F.Cu, then down a through via (connected on F.Cu and In1.Cu: a
    ~1.1 mm stub to B.Cu) onto In1.Cu; In2.Cu is a GND plane.  The routed pair is typed only
    through the AC-coupling capacitors."""
    nets = [f"{source}_P", f"{source}_N", "LINK_A_P", "LINK_A_N", "GND"]
    idx = {n: i + 1 for i, n in enumerate(nets)}
    tracks = [
        ("LINK_A_P", 0, (10.0, 20.0), (40.0, 20.0)),
        ("LINK_A_N", 0, (10.0, 20.3), (45.0, 20.3)),
        ("LINK_A_P", 1, (40.0, 20.0), (70.0, 20.0)),
        ("LINK_A_N", 1, (45.0, 20.3), (70.0, 20.3)),
    ]
    fps = [
        _cap("C1", idx[f"{source}_P"], idx["LINK_A_P"], 10.0),
        _cap("C2", idx[f"{source}_N"], idx["LINK_A_N"], 12.0),
    ]
    board = make_board(4, nets, tracks, [("GND", 2, FULL)], stack, size=SIZE, footprints=fps)
    vias = _vias([(40.0, 20.0, idx["LINK_A_P"]), (45.0, 20.3, idx["LINK_A_N"])], 4)
    return dataclasses.replace(board, vias=vias)


def _signal_bases(res: CheckResult, lane: str) -> dict[str, set[str]]:
    """check -> the signal bases its findings about ``lane`` record (and the coverage row's)."""
    out: dict[str, set[str]] = {}
    for f in res.findings:
        b = (f.evidence or {}).get("basis") or {}
        if "signal" in b and (lane in (f.net or "") or lane in f.message):
            out.setdefault(f.check, set()).add(b["signal"])
    for row in res.coverage["pairs"]:
        if row["name"] == lane:
            out.setdefault("coverage", set()).add(row["basis"])
    return out


@pytest.mark.parametrize(
    ("source", "config", "want"),
    [
        # the source pair's name states the generation: the lane behind the caps is declared
        ("PCIE5_TX0", {}, "declared"),
        # the project declares the source pair: the lane behind the caps is declared
        ("HOST_TX0", {"signals": {"pcie5": ["HOST_TX0_[PN]"]}}, "declared"),
        # the source pair's generation is guessed (PCIe family): so is the lane's
        ("PCIE_TX0", {}, "assumed"),
    ],
)
def test_ac_coupled_lane_has_one_signal_basis_in_every_check(
    source: str, config: dict[str, Any], want: str
) -> None:
    board = _lane_board(source)
    cfg = {**config, "loss": {"budgets_db": {"pcie5": 0.01, "pcie4": 0.01}}}
    res = check_board(board, cfg, board_class="inference", library=LIB)
    got = _signal_bases(res, "LINK_A")
    assert all(v == {want} for v in got.values()), got
    # every check that judges the lane against its type, and the coverage table (an assumed
    # PCIe is checked as Gen4, which has no Df limit and no loss rule in the inference pack)
    judged = {"via_stub", "impedance", "coverage"}
    if want == "declared":
        judged |= {"insertion_loss", "laminate_df", "foil"}
    assert judged <= set(got), got
    a = Analysis(board, cfg)
    link = board.net_index["LINK_A_P"]
    assert a.net_signal[link].how == "ac_coupled"
    assert a.net_signal[link].basis == want


def _kicad_fr4(copper_mm: float) -> Any:
    """KiCad's default FR4 (4.5 / 0.02) at one height, with ``copper_mm`` on every layer."""
    return stackup(
        cu(copper_mm),
        diel("dielectric 1", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(copper_mm),
        diel("dielectric 2", "FR4", 4.5, 0.02, t=0.48),
        cu(copper_mm),
        diel("dielectric 3", "FR4", 4.5, 0.02, t=0.48, kind="prepreg"),
        cu(copper_mm),
    )


def _stack_bases(res: CheckResult) -> dict[str, dict[str, set[str]]]:
    """check -> input -> the bases its findings record, for the stack-up inputs."""
    keys = {"copper_thickness", "t", "h", "stub_mm", "height", "epsilon_r", "eps_r"}
    out: dict[str, dict[str, set[str]]] = {}
    for f in res.findings:
        for k, v in ((f.evidence or {}).get("basis") or {}).items():
            if k in keys:
                out.setdefault(f.check, {}).setdefault(k, set()).add(v)
    return out


@pytest.mark.parametrize(("copper_mm", "want"), [(0.018, "declared"), (0.035, "default")])
def test_copper_and_heights_have_one_basis_in_every_check(copper_mm: float, want: str) -> None:
    """18 µm copper over KiCad's FR4 is a declared stack-up (the designer typed the copper);
    35 µm everywhere at one height is KiCad's untouched one: every check says the same."""
    board = _lane_board("PCIE5_TX0", _kicad_fr4(copper_mm))
    res = check_board(board, {}, board_class="training", library=LIB)
    got = _stack_bases(res)
    assert got.get("impedance", {}).get("t") == {want}, got
    # copper_weight judges a power rail's plane only (issue 27 §6): the same stack-up with a
    # +0V8 plane on In2.Cu in place of the GND plane
    rail = dataclasses.replace(board, nets=tuple("+0V8" if n == "GND" else n for n in board.nets))
    got_rail = _stack_bases(check_board(rail, {}, board_class="training", library=LIB))
    assert got_rail.get("copper_weight", {}).get("copper_thickness") == {want}, got_rail
    assert got["impedance"]["h"] == {want}
    # via_stub: a stub measured through declared heights is measured; through KiCad's, default
    assert got["via_stub"]["stub_mm"] == {"measured" if want == "declared" else "default"}
    # the dielectric is KiCad's FR4 either way: its εr is a default for every check
    assert got["impedance"]["epsilon_r"] == {"default"}
    a = Analysis(board)
    assert a.stackup_basis.thickness == want
    assert a.stackup_basis.auto is (want == "default")


@pytest.mark.parametrize("default_at", ["dielectric 1", "dielectric 2", "dielectric 3"])
def test_stub_er_and_trace_er_rest_on_the_same_dielectrics(default_at: str) -> None:
    """One dielectric left at KiCad's FR4 in an otherwise declared stack-up: the εr of a via
    stub is a default exactly when the stub runs through it, as the εr of a trace is when its
    field is in it (the stub of a via used on F.Cu and In1.Cu runs through dielectrics 2 and 3;
    In1.Cu's stripline field through 1 and 2).  The board-wide rule this replaces called the
    stub's εr declared unless every dielectric was KiCad's."""
    from accel_drc.analysis.impedance import pair_table
    from accel_drc.checks import CheckContext
    from accel_drc.checks.via_stub import check_via_stub
    from accel_drc.results import Rule, Severity

    layers = []
    for name, t in (("dielectric 1", 0.2), ("dielectric 2", 0.8), ("dielectric 3", 0.2)):
        mat = ("FR4", 4.5, 0.02) if name == default_at else ("FR408HR", 3.68, 0.0092)
        layers.append(diel(name, *mat, t=t))
    stack = stackup(cu(), layers[0], cu(), layers[1], cu(), layers[2], cu())
    board = _lane_board("PCIE5_TX0", stack)
    a = Analysis(board)
    # a length limit every stub meets and a resonance limit none does: the verdict rests on εr
    rule = Rule(
        id="t.via_stub", check="via_stub", severity=Severity.ERROR, signal="pcie5",
        params={"max_stub_mm": 5.0, "min_fres_ratio": 1000.0}, why="w", source="s",
    )  # fmt: skip
    out = check_via_stub(CheckContext(board=board, analysis=a, board_class="inference"), rule)
    stub_er = {f.evidence["basis"]["eps_r"] for f in out.findings if "eps_r" in f.evidence["basis"]}
    in1 = {dict(r.stack_basis)["epsilon_r"] for r in pair_table(a) if r.layer_name == "In1.Cu"}

    def expect(names: set[str]) -> set[str]:
        return {"default" if default_at in names else "declared"}

    assert stub_er == expect({"dielectric 2", "dielectric 3"})
    assert in1 == expect({"dielectric 1", "dielectric 2"})


def test_one_walk_to_the_reference_dielectrics() -> None:
    """In1.Cu has no plane above it, and two dielectric entries between it and F.Cu: the
    impedance cross-section, laminate_df and the loss model take the same dielectrics."""
    stack = stackup(
        cu(),
        diel("prepreg 1a", "FR408HR", 3.68, 0.0092, t=0.1, kind="prepreg"),
        diel("prepreg 1b", "FR408HR", 3.68, 0.0092, t=0.1, kind="prepreg"),
        cu(),
        diel("core 2", "FR408HR", 3.68, 0.0092, t=0.8),
        cu(),
        diel("prepreg 3", "FR408HR", 3.68, 0.0092, t=0.2, kind="prepreg"),
        cu(),
    )
    board = _lane_board("PCIE5_TX0", stack)
    cfg = {"loss": {"budgets_db": {"pcie5": 0.01}}}
    res = check_board(board, cfg, board_class="inference", library=LIB)
    lam = [f for f in res.findings if f.check == "laminate_df" and f.layer == "In1.Cu"]
    assert lam
    lam_names = {d["name"] for d in lam[0].evidence["dielectrics"]}
    a = Analysis(board, cfg)
    from accel_drc.analysis.impedance import pair_table

    rows = [r for r in pair_table(a) if r.layer_name == "In1.Cu"]
    assert rows
    assert lam_names == set(rows[0].stack.dielectrics) == {"prepreg 1a", "prepreg 1b", "core 2"}


def test_the_owners_are_the_only_implementation() -> None:
    """The copies are gone and every consumer imports the owner."""
    from accel_drc import coverage
    from accel_drc.analysis import materials, signals, stackup
    from accel_drc.analysis.impedance import stack, table
    from accel_drc.checks import (
        copper_weight,
        foil,
        impedance,
        insertion_loss,
        laminate_df,
        material_consistency,
        via_stub,
    )

    gone = [
        (via_stub, "_signal_basis"),
        (via_stub, "_kicad_default_materials"),
        (via_stub, "_kicad_default_stackup"),
        (insertion_loss, "_signal_basis"),
        (table, "_signal_basis"),
        (table, "_auto_thickness"),
        (coverage, "_HOW_BASIS"),
        (materials, "stackup_is_kicad_default"),
        (materials, "dielectric_basis"),
        (laminate_df, "reference_dielectrics"),
        (stack, "_side_dielectrics"),
    ]
    assert [f"{m.__name__}.{n}" for m, n in gone if hasattr(m, n)] == []
    for m in (via_stub, impedance):
        assert m.signal_basis is signals.signal_basis, m.__name__
    for m in (laminate_df, foil, insertion_loss):
        assert m.nets_signal_basis is signals.nets_signal_basis, m.__name__
    for m in (via_stub, copper_weight, material_consistency, table):
        assert m.stackup_basis is stackup.stackup_basis, m.__name__
    for m in (laminate_df, stack):
        assert m.reference_walk is stackup.reference_walk, m.__name__


@pytest.mark.parametrize(("copper_mm", "want"), [(0.035, "default"), (0.018, "declared")])
def test_ir_drop_copper_thickness_has_the_owners_basis(copper_mm: float, want: str) -> None:
    """The IR-drop solve's copper thickness (ir_drop, current_density) rests on the same basis
    copper_weight records: KiCad's 35 µm auto stack-up is a default, 18 µm is declared."""
    from accel_drc.model import StackupLayer
    from test_irdrop import board_of, pad_strip, spec

    b = board_of(
        [(0, rect(0, 0, 40, 10)), (1, rect(0, 0, 40, 10))],
        [pad_strip("U20", 0.25, 0, 10, 10), pad_strip("U1", 39.75, 0, 10, 10)],
        layers=2,
    )
    st = b.stackup
    assert st is not None
    layers = tuple(
        dataclasses.replace(sl, thickness_mm=copper_mm)
        if sl.is_copper
        else StackupLayer(sl.name, "core", 0.2, "FR4", 4.5, 0.02)
        for sl in st.layers
    )
    b = dataclasses.replace(b, stackup=dataclasses.replace(st, layers=layers))
    a = Analysis(b, {"rails": [spec(sources=["U20"], loads={"U1": 10.0})]})
    (r,) = a.irdrop
    assert r.basis["stackup_thickness"] == a.stackup_basis.thickness == want
