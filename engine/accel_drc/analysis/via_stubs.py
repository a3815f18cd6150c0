"""Where each via really connects, and how long its unused barrel (the stub) is.

A via's barrel runs from its start layer to its end layer whatever the routing does; the part
beyond the last layer the signal uses is an open-ended transmission line that resonates at a
quarter wave (Bogatin's stub rule of thumb).  To know the stub we must know which layers the net *really*
connects on, which KiCad itself decides geometrically (connectivity anchors):

* a track or arc **end** inside the via's pad (KiCad hit-tests track anchors, not their width);
* a pad of the same net whose copper contains the via centre (via-in-pad), on the pad's layers;
* a filled zone of the same net on that layer that touches the via's pad disc (KiCad collides
  the via's whole shape with the fill, so a thermal spoke counts as a connection);
* another via of the same net whose copper touches this one's on a layer both span, when that
  via has a real connection there or carries the signal to a layer this one does not reach
  (stacked vias); a via whose unused pads are removed has only its hole on a layer where nothing
  connects (see ``via_connections._connect_touching_vias``).

Plated through-hole pads are treated the same way (their lead is soldered on the footprint's
own side, so that layer counts as connected too).

Boards have 100k+ vias and 1M+ segments, so nothing here is O(vias × tracks): track ends are
joined to vias by sorting on a (net, grid cell) key and reading the 3×3 neighbouring cells with
``searchsorted``; zones go through one shapely STRtree with prepared polygons.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import isin
from ..config import ProjectConfig, as_config
from ..model import Backdrill, Board
from .backdrill_config import config_backdrills
from .pad_table import PadTable
from .spatial_join import near_pairs
from .stack_geometry import MM_PER_MIL, StackGeometry, resonance_hz
from .via_connections import find_connections

if TYPE_CHECKING:
    from . import Analysis
    from .signals import SignalAssignment


log = logging.getLogger(__name__)

#: the names other modules import from here; the parts live beside it: the stack-up column
#: (stack_geometry.py), the spatial join (spatial_join.py), the pad table (pad_table.py), the
#: connection rules (via_connections.py), the config's backdrills (backdrill_config.py)
__all__ = [
    "MM_PER_MIL",
    "PadTable",
    "StackGeometry",
    "ViaStubs",
    "backdrill_dict",
    "compute",
    "compute_stubs",
    "config_backdrills",
    "find_connections",
    "near_pairs",
    "resonance_hz",
    "via_rows",
]

# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ViaStubs:
    """Per barrel (vias first, then plated through-hole pads), columnar."""

    layer_names: tuple[str, ...]
    xy: np.ndarray  # (n, 2)
    net: np.ndarray
    start: np.ndarray
    end: np.ndarray
    types: tuple[str, ...]  # through | blind | buried | micro | pth
    ref: tuple[str, ...]  # "" for vias, "J1.3" for pads
    uuid: tuple[str, ...]
    via_row: np.ndarray  # index into board.vias, -1 for pads
    connected: np.ndarray  # (n, L) bool
    top_stub_mm: np.ndarray  # NaN = unknown (no stack-up data, or unconnected barrel)
    bottom_stub_mm: np.ndarray
    stub_mm: np.ndarray
    eps_eff: np.ndarray  # εr of the dielectrics along the longer stub
    f_res_hz: np.ndarray  # inf for a zero stub
    backdrill: tuple[Backdrill | None, ...]
    backdrill_cuts: np.ndarray  # a backdrill that would cut a connected layer
    geometric_stub_mm: np.ndarray  # the stub before any backdrill
    stackup_known: bool
    notes: tuple[str, ...] = ()
    index_by_net: Mapping[int, np.ndarray] = field(default_factory=dict)
    #: the stack-up column the stubs were computed on (the remedies reuse it; None when built
    #: by hand, then they rebuild it from the board)
    geom: StackGeometry | None = None
    #: per-check-run memo of the remedies (see ``checks/via_stub``): vias of one shape on one
    #: net family get the same remedy, and the per-class re-runs ask again for the same ones
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    #: the nets whose barrels the table holds (None: every net; see :func:`compute`)
    nets: frozenset[int] | None = None

    def __len__(self) -> int:
        return int(self.net.shape[0])

    @property
    def via_count(self) -> int:
        return int((self.via_row >= 0).sum())

    def rows_for_nets(self, nets: Iterable[int]) -> np.ndarray:
        """Indexes of the barrels on any of ``nets`` (sorted).  A table computed for some nets
        only refuses any other (an empty answer there would read as "no via")."""
        nets = list(nets)
        if self.nets is not None:
            other = [n for n in nets if n not in self.nets and n > 0]
            if other:
                raise LookupError(
                    f"the via table was computed for {len(self.nets)} nets; net {other[0]} "
                    "is not one of them"
                )
        parts = [self.index_by_net[n] for n in nets if n in self.index_by_net]
        if not parts:
            return np.zeros(0, np.int64)
        return np.sort(np.concatenate(parts))

    def connected_names(self, i: int) -> list[str]:
        return [self.layer_names[j] for j in np.flatnonzero(self.connected[i])]


# ---------------------------------------------------------------------------------------------
# putting it together
# ---------------------------------------------------------------------------------------------


def compute_stubs(
    geom: StackGeometry,
    start: np.ndarray,
    end: np.ndarray,
    connected: np.ndarray,
    backdrills: Sequence[Backdrill | None] | None = None,
) -> dict[str, np.ndarray]:
    """Top, bottom and overall stub (mm), εeff and f_res for each barrel.

    Top stub: top face of the start layer -> top face of the topmost connected layer.
    Bottom stub: bottom face of the bottommost connected layer -> bottom face of the end layer.
    A backdrill replaces the stub on its side with what it leaves: the barrel from the deepest
    connected layer to the must-not-cut layer (none when they are the same layer), plus the
    fabricator's residual allowance (unknown if undeclared, and so is the stub), never more
    than the undrilled stub.  One that would cut a connected layer is flagged.
    """
    n = len(start)
    n_layers = connected.shape[1] if connected.ndim == 2 else geom.n_layers
    any_conn = connected.any(axis=1)
    idx = np.arange(n_layers)
    top_c = np.where(connected, idx[None, :], n_layers).min(axis=1) if n else np.zeros(0, int)
    bot_c = np.where(connected, idx[None, :], -1).max(axis=1) if n else np.zeros(0, int)
    top_c = np.where(any_conn, top_c, start)
    bot_c = np.where(any_conn, bot_c, end)
    t_lo, t_hi = 2 * start, 2 * top_c
    b_lo, b_hi = 2 * bot_c + 1, 2 * end + 1
    top = geom.length(t_lo, t_hi)
    bottom = geom.length(b_lo, b_hi)
    eps_top = geom.eps_eff(t_lo, t_hi)
    eps_bot = geom.eps_eff(b_lo, b_hi)
    # an unconnected barrel has no signal path: no stub to speak of
    top[~any_conn] = np.nan
    bottom[~any_conn] = np.nan
    geometric = np.fmax(top, bottom)
    geometric[np.isnan(top) | np.isnan(bottom)] = np.nan

    cuts = np.zeros(n, bool)
    # a residual stub with no dielectric of its own on record takes the board's average εr
    eps_board = geom.eps_eff(np.array([0]), np.array([2 * geom.n_layers - 1]))[0]

    span = geom.span  # (length mm, εr) between faces ``lo`` and ``hi`` (NaN if unknown)

    if backdrills is not None:
        for i, bd in enumerate(backdrills):
            if bd is None or not any_conn[i]:
                continue
            residual = bd.residual_stub_mm if bd.residual_stub_mm is not None else bd.max_stub_mm
            # The drill stops at the must-not-cut layer: what is left is the barrel from the
            # deepest connected layer to that layer, plus the fabricator's residual allowance
            # beyond it (just the allowance when the must-not-cut layer is the connected one).
            if bd.side == "top":
                if start[i] != 0:
                    continue
                limit = bd.must_not_cut if bd.must_not_cut is not None else int(top_c[i])
                cuts[i] = bool(connected[i, :limit].any())
                kept, kept_eps = (
                    span(2 * limit, 2 * int(top_c[i])) if limit < top_c[i] else (0.0, math.nan)
                )
                left = math.nan if residual is None else kept + residual
                top[i] = left if np.isnan(top[i]) or np.isnan(left) else min(top[i], left)
                if not np.isnan(kept_eps):
                    eps_top[i] = kept_eps
                elif np.isnan(eps_top[i]):
                    eps_top[i] = eps_board
            else:
                if end[i] != geom.n_layers - 1:
                    continue
                limit = bd.must_not_cut if bd.must_not_cut is not None else int(bot_c[i])
                cuts[i] = bool(connected[i, limit + 1 :].any())
                kept, kept_eps = (
                    span(2 * int(bot_c[i]) + 1, 2 * limit + 1)
                    if limit > bot_c[i]
                    else (0.0, math.nan)
                )
                left = math.nan if residual is None else kept + residual
                bottom[i] = left if np.isnan(bottom[i]) or np.isnan(left) else min(bottom[i], left)
                if not np.isnan(kept_eps):
                    eps_bot[i] = kept_eps
                elif np.isnan(eps_bot[i]):
                    eps_bot[i] = eps_board
    stub = np.fmax(top, bottom)
    stub[np.isnan(top) | np.isnan(bottom)] = np.nan
    eps = np.where(np.nan_to_num(top, nan=-1) >= np.nan_to_num(bottom, nan=-1), eps_top, eps_bot)
    eps = np.where(np.isnan(eps), eps_board, eps)
    fres = resonance_hz(stub, eps)
    return {
        "top": top,
        "bottom": bottom,
        "stub": stub,
        "eps": eps,
        "f_res": fres,
        "cuts": cuts,
        "geometric": geometric,
    }


def compute(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None = None,
    net_signal: Mapping[int, SignalAssignment] | None = None,
    nets: Iterable[int] | None = None,
) -> ViaStubs:
    """Connections, stubs and backdrills for every via and PTH pad of ``board``, or only for
    those on ``nets`` (the table then answers :meth:`ViaStubs.rows_for_nets` for those nets
    only: the checks ask for their signal nets, a few percent of a board's barrels)."""
    mask = None
    if nets is not None:
        mask = np.zeros(len(board.nets), bool)
        picked = np.fromiter((n for n in nets if 0 < n < len(board.nets)), np.int64)
        mask[picked] = True
    conn = find_connections(board, mask)
    geom = StackGeometry.from_board(board)
    n = len(conn["net"])
    specs = as_config(config).backdrill
    by_net, notes = config_backdrills(board, specs, net_signal) if specs else ({}, [])
    bds: list[Backdrill | None] = [None] * n
    board_bds = board.vias.backdrills
    # only the barrels a backdrill can apply to are visited (a Python loop over every barrel
    # would mostly find none); a via's barrel is found
    # by its row (the via barrels come first, in row order)
    via_rows = conn["via_row"][: int((conn["via_row"] >= 0).sum())]
    rows = np.fromiter((int(r) for r in board_bds), np.int64, len(board_bds))
    at = np.searchsorted(via_rows, rows)
    hit = at < len(via_rows)
    hit[hit] = via_rows[at[hit]] == rows[hit]
    todo: set[int] = set(at[hit].tolist())
    if by_net:
        net_col = conn["net"]
        todo.update(np.flatnonzero(isin(net_col, np.fromiter(by_net, np.int64))).tolist())
    for i in sorted(todo):
        row = int(conn["via_row"][i])
        bd = board_bds.get(row) if row >= 0 else None
        cfg_bd = by_net.get(int(conn["net"][i]))
        if bd is None:
            bd = cfg_bd
        elif bd.residual_stub_mm is None and cfg_bd is not None:
            # the board says where it is drilled, the config what the fabricator leaves
            bd = dataclasses.replace(
                bd, residual_stub_mm=cfg_bd.residual_stub_mm, source=f"{bd.source}+config"
            )
        bds[i] = bd
    res = compute_stubs(geom, conn["start"], conn["end"], conn["connected"], bds)
    stack_known = bool(not np.isnan(geom.thickness).any())
    if board.stackup is None:
        notes.append("the board has no stack-up: stub lengths cannot be computed")
    elif not stack_known:
        notes.append("the stack-up leaves some copper or dielectric thickness undeclared")
    order = np.argsort(conn["net"], kind="stable")
    nets_sorted = conn["net"][order]
    uniq, first = np.unique(nets_sorted, return_index=True)
    bounds = list(first) + [len(order)]
    index_by_net = {int(u): order[bounds[k] : bounds[k + 1]] for k, u in enumerate(uniq)}
    for msg in notes:
        log.info("via stubs: %s", msg)
    return ViaStubs(
        layer_names=tuple(layer.name for layer in board.copper_layers),
        xy=conn["xy"],
        net=conn["net"],
        start=conn["start"],
        end=conn["end"],
        types=conn["types"],
        ref=conn["ref"],
        uuid=conn["uuid"],
        via_row=conn["via_row"],
        connected=conn["connected"],
        top_stub_mm=res["top"],
        bottom_stub_mm=res["bottom"],
        stub_mm=res["stub"],
        eps_eff=res["eps"],
        f_res_hz=res["f_res"],
        backdrill=tuple(bds),
        backdrill_cuts=res["cuts"],
        geometric_stub_mm=res["geometric"],
        stackup_known=stack_known,
        notes=tuple(notes),
        index_by_net=index_by_net,
        geom=geom,
        nets=None if mask is None else frozenset(np.flatnonzero(mask).tolist()),
    )


def _num(x: float) -> float | None:
    """JSON-friendly: NaN -> None, rounded to 1 nm."""
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), 6)


def backdrill_dict(bd: Backdrill | None, layer_names: Sequence[str]) -> dict[str, Any] | None:
    if bd is None:
        return None
    return {
        "side": bd.side,
        "must_not_cut": None
        if bd.must_not_cut is None or not 0 <= bd.must_not_cut < len(layer_names)
        else layer_names[bd.must_not_cut],
        "residual_stub_mm": bd.residual_stub_mm,
        "source": bd.source,
    }


def via_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """``accel-drc inspect --json --detail vias``: one row per via, then per PTH pad."""
    vs: ViaStubs = analysis.via_stubs
    board: Board = analysis.board
    names = vs.layer_names
    rows = []
    for i in range(len(vs)):
        net_i = int(vs.net[i])
        row: dict[str, Any] = {
            "x": round(float(vs.xy[i, 0]), 6),
            "y": round(float(vs.xy[i, 1]), 6),
            "net": board.nets[net_i] if 0 <= net_i < len(board.nets) else "",
            "start": names[int(vs.start[i])],
            "end": names[int(vs.end[i])],
            "type": vs.types[i],
            "connected": vs.connected_names(i),
            "top_stub_mm": _num(vs.top_stub_mm[i]),
            "bottom_stub_mm": _num(vs.bottom_stub_mm[i]),
            "stub_mm": _num(vs.stub_mm[i]),
            "backdrill": backdrill_dict(vs.backdrill[i], names),
        }
        if vs.ref[i]:
            row["ref"] = vs.ref[i]
        if vs.backdrill_cuts[i]:
            row["backdrill_cuts_connected_layer"] = True
        rows.append(row)
    return rows
