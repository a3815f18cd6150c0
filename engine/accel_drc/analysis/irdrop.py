"""DC IR drop per declared rail: which rails are in scope (an IR key or ``role: core`` in the
config, or the accelerator core the PDN analysis recognised), their sources and loads, the
solve of each rail and of its return, and the per-rail result (worst drop in mV and % of the
rail's voltage, worst load, current density, via currents) with its basis; a rail whose
sources or loads are missing gets a ready-to-paste ``rails:`` entry instead (docs/irdrop.md).

Its parts beside it: the copper's resistivity and geometry in :mod:`.irdrop_copper`, the
raster mesh and its sparse solve (the model: fills, tracks, barrels, Peaceman's correction,
Dirichlet sources) in :mod:`.irdrop_solver`, the board-view heat maps in
:mod:`.irdrop_heatmap`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import ProjectConfig, RailSpec, as_config
from ..model import Board
from .irdrop_copper import (
    ALPHA20_PER_K,
    DEFAULT_COPPER_MM,
    DEFAULT_PLATING_UM,
    DEFAULT_TEMPERATURE_C,
    RHO20_OHM_M,
    SIGMA20_S_PER_M,
    Copper,
    barrel_resistance,
    copper_of,
    layer_geometry,
    rho,
)
from .irdrop_heatmap import heat_maps
from .irdrop_solver import MAX_NODES, MIN_CELL_MM, PEACEMAN, Net, no_path_message, solve_net

if TYPE_CHECKING:
    from . import Analysis
    from .stackup import StackupBasis


#: the IR-drop names, including those its parts define (importable from here as before the
#: split by idea, issue 26)
__all__ = [
    "ALPHA20_PER_K",
    "DEFAULT_COPPER_MM",
    "DEFAULT_PLATING_UM",
    "DEFAULT_TEMPERATURE_C",
    "IR_KEYS",
    "MAX_CANDIDATES",
    "MAX_NODES",
    "MIN_CELL_MM",
    "PEACEMAN",
    "RHO20_OHM_M",
    "SIGMA20_S_PER_M",
    "Copper",
    "Net",
    "RailIR",
    "barrel_resistance",
    "candidate_sources",
    "compute",
    "copper_of",
    "declared_rails",
    "heat_maps",
    "irdrop_rows",
    "layer_geometry",
    "no_path_message",
    "paste_entry",
    "rail_row",
    "rho",
    "solve_net",
    "solve_rail",
]


# ---------------------------------------------------------------------------------------------
# rails
# ---------------------------------------------------------------------------------------------


#: the config keys that put a rail in the IR-drop solve's scope
IR_KEYS = ("sources", "loads", "return_nets", "ir_drop_max_pct")


@dataclass
class RailIR:
    """One declared rail's IR-drop result (or why it has none: ``missing``)."""

    name: str
    nets: tuple[str, ...]
    voltage: float | None
    sources: tuple[str, ...] = ()
    loads: dict[str, float] = field(default_factory=dict)
    max_pct: float | None = None
    missing: list[str] = field(default_factory=list)
    error: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)  # per load
    worst_drop_mv: float | None = None
    worst_drop_pct: float | None = None
    worst_ref: str | None = None
    worst_pos: tuple[float, float] | None = None
    jmax: dict[str, tuple[float, tuple[float, float]]] = field(default_factory=dict)
    vias: list[dict[str, Any]] = field(default_factory=list)  # worst vias, by current
    max_via_current_a: float | None = None
    resistance_ohm: float | None = None
    source_current_a: float | None = None
    mesh: dict[str, Any] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    net: Net | None = None
    return_net: Net | None = None
    #: how the rail came into scope: "declared" (an IR key or ``role: core`` in the config) or
    #: "assumed" (the PDN analysis recognised it as the accelerator core, analysis/pdn.py)
    role_basis: str | None = None
    role_evidence: str = ""
    #: a ready-to-paste ``rails:`` entry (YAML lines) when sources/loads are missing
    suggest: str = ""


def _ids(board: Board, patterns: Sequence[str]) -> list[int]:
    from .pdn import rail_name_matches

    return [i for i, n in enumerate(board.nets) if i and n and rail_name_matches(patterns, n)]


def _load_pads_pos(board: Board, ref: str, ids: set[int]) -> tuple[float, float] | None:
    for fp in board.footprints:
        if fp.reference == ref:
            ps = [p for p in fp.pads if p.net in ids]
            if ps:
                return (
                    round(sum(p.x for p in ps) / len(ps), 3),
                    round(sum(p.y for p in ps) / len(ps), 3),
                )
    return None


def solve_rail(
    board: Board,
    spec: RailSpec | Mapping[str, Any],
    config: ProjectConfig | Mapping[str, Any] | None = None,
    *,
    cell_mm: float | None = None,
    max_nodes: int = MAX_NODES,
    coarse_check: bool = True,
    stackup_facts: StackupBasis | None = None,
) -> RailIR:
    """Solve one ``rails:`` entry (its nets, sources, loads, optional return nets).
    ``stackup_facts`` (``Analysis.stackup_basis``) says whether the stack-up's thicknesses are
    KiCad's auto-generated defaults; without it, thicknesses the stack-up states are declared."""
    if not isinstance(spec, RailSpec):  # already-valid rail data (tests, bench): typed once
        spec = RailSpec.of({"name": "rail", **spec})
    name = spec.name
    ids = _ids(board, spec.nets)
    volt = spec.voltage
    out = RailIR(
        name=name,
        nets=tuple(board.nets[i] for i in ids),
        voltage=None if volt is None else float(volt),
        sources=spec.sources,
        loads=dict(spec.loads),
        max_pct=spec.ir_drop_max_pct,
    )
    if not out.sources:
        out.missing.append("sources: [regulator footprints whose pads on the rail are its outputs]")
    if not out.loads:
        out.missing.append("loads: {footprint: DC current in A}")
    if out.voltage is None:
        out.missing.append("voltage: V")
    if not ids:
        out.missing.append("nets: the rail's net patterns match no net of the board")
    if out.missing:
        return out
    cu = copper_of(config)
    _t, _z, geo_basis = layer_geometry(board)
    if geo_basis == "declared" and stackup_facts is not None:
        geo_basis = stackup_facts.thickness  # KiCad's auto stack-up: the one owner says so
    out.basis = {
        "geometry": "measured",
        "sources": "declared",
        "loads": "declared",
        "voltage": "declared",
        "stackup_thickness": geo_basis,
        **cu.basis,
    }
    try:
        net, res = solve_net(
            board,
            ids,
            out.sources,
            out.loads,
            out.voltage,
            cu,
            cell_mm=cell_mm,
            max_nodes=max_nodes,
        )
        ret = None
        rres = None
        rids = _ids(board, spec.return_nets)
        if rids:
            ret, rres = solve_net(
                board, rids, out.sources, out.loads, 0.0, cu, cell_mm=net.h, sign=-1.0
            )
    except ValueError as exc:
        out.error = str(exc)
        return out
    out.net, out.return_net = net, ret
    out.source_current_a = net.source_current
    total = sum(out.loads.values())
    power = 0.0
    idset = set(ids)
    for ref, amps in out.loads.items():
        vmin = res["v_extreme"][ref]
        rise = rres["v_extreme"][ref] if rres else 0.0
        drop = out.voltage - vmin + rise
        power += amps * drop
        out.rows.append(
            {
                "ref": ref,
                "current_a": amps,
                "v_min": round(vmin - rise, 6),
                "drop_mv": round(drop * 1e3, 4),
                "drop_pct": round(100.0 * drop / out.voltage, 4),
                **({"return_rise_mv": round(rise * 1e3, 4)} if rres else {}),
            }
        )
    worst = max(out.rows, key=lambda r: r["drop_mv"])
    out.worst_drop_mv, out.worst_drop_pct, out.worst_ref = (
        worst["drop_mv"],
        worst["drop_pct"],
        worst["ref"],
    )
    out.worst_pos = _load_pads_pos(board, worst["ref"], idset)
    out.resistance_ohm = power / (total * total) if total > 0 else None
    for li, (j, pos) in net.jmax.items():
        out.jmax[board.layer_name(li)] = (j, pos)
    vias: list[dict[str, Any]] = []
    holes = getattr(net, "holes", [])
    if net.via_current is not None and len(holes):
        order = np.argsort(-net.via_current)
        for k in order[:20]:
            hx, hy, drill, s, e, vr = holes[int(k)]
            vias.append(
                {
                    "x": round(hx, 4),
                    "y": round(hy, 4),
                    "drill_mm": drill,
                    "current_a": round(float(net.via_current[k]), 6),
                    "span": [board.layer_name(s), board.layer_name(e)],
                    "uuid": (board.vias.uuid[vr] if 0 <= vr < len(board.vias.uuid) else ""),
                    "kind": "via" if vr >= 0 else "pth",
                }
            )
        out.max_via_current_a = float(net.via_current.max())
    out.vias = vias
    if not len(holes) and not (ret is not None and len(getattr(ret, "holes", []))):
        # no barrel carries the rail's current (nor its return's): the plating is not an
        # input of this result, so no verdict may rest on its default
        out.basis.pop("via_plating", None)
    out.mesh = {
        "cell_mm": round(net.h, 4),
        "unknowns": net.nodes,
        "layers": [board.layer_name(li) for li in net.layers],
    }
    if coarse_check and cell_mm is None:
        # the same solve on a grid twice as coarse: how far the answer moves with the mesh
        try:
            n2, r2 = solve_net(
                board, ids, out.sources, out.loads, out.voltage, cu, cell_mm=2 * net.h
            )
            d2 = max(out.voltage - v for v in r2["v_extreme"].values())
            d1 = max(out.voltage - v for v in res["v_extreme"].values())
            out.mesh["coarse_cell_mm"] = round(n2.h, 4)
            out.mesh["coarse_rail_drop_mv"] = round(d2 * 1e3, 4)
            out.mesh["rail_drop_mv"] = round(d1 * 1e3, 4)
            out.mesh["change_pct"] = round(100.0 * abs(d2 - d1) / d1, 3) if d1 > 0 else 0.0
        except ValueError:
            pass
    return out


def declared_rails(config: ProjectConfig | Mapping[str, Any] | None) -> list[RailSpec]:
    """The ``rails:`` entries that declare anything of the IR-drop solve."""
    return [r for r in as_config(config).rails if r.declares_ir_drop]


#: a footprint that may be a regulator output on the rail: an inductor (L…), or a U/PS/VR/Q…
#: whose library name or value reads like a regulator, power stage or power module
_INDUCTOR_REF = re.compile(r"^L\d", re.I)
_REG_REF = re.compile(r"^(U|IC|PS|VR|VRM|Q|PM)\d", re.I)
_REG_WORD = re.compile(
    r"regulat|vrm|buck|pmic|power.?stage|drmos|smps|dc.?dc|ldo|converter|tps\d|ltc\d|ltm\d"
    r"|lt\d|isl\d|ir\d{4}|mp\d|max\d|tda\d|adp\d|lm\d|ncp\d|mic\d|rt\d|sy\d|ap\d",
    re.I,
)
#: most candidate refs listed in the paste-ready entry
MAX_CANDIDATES = 16


def candidate_sources(board: Board, ids: set[int], exclude: set[str]) -> list[str]:
    """Footprints with a pad on the rail that look like its regulator outputs: inductors first
    (a buck's output inductor sits on the rail; its switching stage does not), then regulators
    and power stages by name.  Guesses from names only, so the entry says so."""
    inductors: list[str] = []
    regs: list[str] = []
    for fp in board.footprints:
        ref = fp.reference or ""
        if ref in exclude or not any(p.net in ids for p in fp.pads):
            continue
        text = f"{fp.name} {fp.value}"
        if _INDUCTOR_REF.match(ref) or "inductor" in text.lower():
            inductors.append(ref)
        elif _REG_REF.match(ref) and _REG_WORD.search(text):
            regs.append(ref)

    def natural(ref: str) -> tuple[str, int]:
        m = re.match(r"^(\D*)(\d*)", ref)
        return (m.group(1).upper(), int(m.group(2) or 0)) if m else (ref, 0)

    out = sorted(set(inductors), key=natural) + sorted(set(regs), key=natural)
    return out[:MAX_CANDIDATES]


def paste_entry(
    board: Board,
    name: str,
    nets: Sequence[str],
    voltage: float | None,
    spec: RailSpec | None = None,
) -> str:
    """A ``rails:`` entry to paste into accel-drc.yaml: the rail's name, nets and voltage as the
    board (or config) has them, ``role: core``, the candidate ``sources`` (guessed, and said to
    be) and ``loads`` on the largest BGA with the current left to the designer."""
    from .pdn import bga_balls, largest_bgas

    ids = set(_ids(board, list(nets))) if nets else set()
    bgas = [fp for fp in largest_bgas(board) if any(p.net in ids for p in bga_balls(fp))]
    bga_refs = [fp.reference for fp in bgas]
    pats = list(spec.nets) if spec is not None and spec.nets else [re.escape(n) for n in nets]
    lines = [
        "rails:",
        f"  - name: {name}",
        "    nets: [" + ", ".join(f"'{p}'" for p in pats) + "]",
        f"    voltage: {voltage:g}" if voltage is not None else "    voltage: <V>",
        "    role: core",
    ]
    if spec is not None and spec.sources:
        lines.append("    sources: [" + ", ".join(spec.sources) + "]")
    else:
        cands = candidate_sources(board, ids, set(bga_refs))
        if cands:
            lines.append(
                "    sources: [" + ", ".join(cands) + "]  # GUESSED from the footprints' names:"
                " keep only the regulator outputs"
            )
        else:
            lines.append("    sources: [<regulator or output-inductor refs>]")
    if spec is not None and spec.loads:
        lines.append("    loads: {" + ", ".join(f"{k}: {v:g}" for k, v in spec.loads.items()) + "}")
    elif bga_refs:
        lines.append(
            "    loads: {" + ", ".join(f"{r}: <A>" for r in bga_refs) + "}  # DC current in A"
        )
    else:
        lines.append("    loads: {<load ref>: <A>}  # DC current in A")
    return "\n".join(lines)


def _core_unsolved(board: Board, rail: Any, spec: RailSpec | None) -> RailIR:
    """A core rail (declared ``role: core``, or recognised) that declares no IR-drop inputs:
    ``cannot_verify`` with the entry to paste."""
    volt = rail.voltage
    out = RailIR(
        name=rail.name,
        nets=tuple(rail.nets),
        voltage=None if volt is None else float(volt),
        role_basis=rail.role_basis,
        role_evidence=rail.role_evidence,
    )
    out.missing.append("sources: [regulator footprints whose pads on the rail are its outputs]")
    out.missing.append("loads: {footprint: DC current in A}")
    if volt is None:
        out.missing.append("voltage: V")
    out.suggest = paste_entry(board, rail.name, rail.nets, out.voltage, spec)
    return out


def compute(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None,
    rails: Sequence[Any] | None = None,
    stackup_facts: StackupBasis | None = None,
) -> list[RailIR]:
    """Every declared rail's IR drop, and the core rail when it declares none of it.

    In scope: a ``rails:`` entry with an IR key (``sources``, ``loads``, ``return_nets``,
    ``ir_drop_max_pct``) is solved (or says what it lacks); the accelerator's core rail —
    declared ``role: core``, or, when no rail is, the one :func:`pdn.recognise_core` picks from
    ``rails`` (basis ``assumed``) — without them is ``cannot_verify`` with a ready-to-paste
    entry.  Any other rail without IR keys is out of scope: the seeds ask for the accelerator
    core's drop (seed 001: ~1,000 A at 0.7–0.8 V); an I/O or memory rail's few amperes are not
    the question, and asking to declare every rail of a 14-rail board would bury the one
    finding that matters.  Nothing is solved (no scipy import) when no rail declares inputs."""
    config = as_config(config)
    out = []
    done: set[str] = set()
    specs = {r.name: r for r in config.rails}
    for spec in declared_rails(config):
        r = solve_rail(board, spec, config, stackup_facts=stackup_facts)
        if r.missing:
            r.role_basis = "declared" if spec.role == "core" else None
            r.suggest = paste_entry(board, r.name, r.nets, r.voltage, spec)
        out.append(r)
        done.add(r.name)
    for rail in rails or ():
        if rail.role != "core" or rail.name in done or not rail.nets:
            continue
        out.append(_core_unsolved(board, rail, specs.get(rail.name)))
    return out


def rail_row(r: RailIR) -> dict[str, Any]:
    """One ``--detail irdrop`` row."""
    return {
        "rail": r.name,
        "nets": list(r.nets),
        "voltage": r.voltage,
        "sources": list(r.sources),
        "loads": r.rows,
        "worst_drop_mv": r.worst_drop_mv,
        "worst_drop_pct": r.worst_drop_pct,
        "max_current_density_a_per_mm2": {k: round(v[0], 4) for k, v in r.jmax.items()},
        "max_current_density_at": {k: list(v[1]) for k, v in r.jmax.items()},
        "max_via_current_a": r.max_via_current_a,
        "worst_vias": r.vias[:10],
        "resistance_ohm": r.resistance_ohm,
        "source_current_a": r.source_current_a,
        "mesh": r.mesh,
        "method": "DC conduction, square grid on the fills (Peaceman via ends), tracks as "
        "resistors, plated barrels; scipy.sparse direct solve",
        "basis": r.basis,
        **({"missing": r.missing} if r.missing else {}),
        **({"declare_entry": r.suggest} if r.suggest else {}),
        **({"role_basis": r.role_basis} if r.role_basis else {}),
        **({"error": r.error} if r.error else {}),
    }


def irdrop_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail irdrop``."""
    return [rail_row(r) for r in analysis.irdrop]
