"""The plated holes of a board as one table, and the fab limit a build check compares them with
(a helper of ``drill_aspect_ratio``, ``microvia``, ``annular_ring`` and ``thermal_vias``; not
a check kind: the registry skips ``_`` modules).

Why one table: every build check asks the same questions of every via and plated pad (its
drill, the copper it spans, how long that span is and on what that length rests), and the
answers must agree between checks.  The lengths come from the stack-up owner
(:mod:`accel_drc.analysis.stackup` for the basis, the stack geometry of
:mod:`accel_drc.analysis.via_stubs` for the prefix sums), never from a check's own walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.stackup import stackup_basis
from ..arrays import sorted_rows

if TYPE_CHECKING:
    from ..packs import FabClass, FabData
    from . import CheckContext

#: hole kinds (``Holes.kind``)
VIA, PAD = 0, 1
#: at most this many positions listed in one finding's evidence
MAX_POSITIONS = 20
#: a "drill" below this is no hole (10 µm: no laser or drill makes one); boards use such vias
#: as copper-only pads (KiCad's RoyalBlue54L demo: 183 vias of 0.00001 mm), so they are skipped
MIN_HOLE_MM = 0.01


@dataclass(frozen=True)
class Holes:
    """Plated holes, one row each: vias first (in via-table order), then plated pads."""

    kind: np.ndarray  #: VIA or PAD
    types: tuple[str, ...]  #: through / blind / buried / micro, "PTH pad" for pads
    xy: np.ndarray  #: (n, 2) mm
    drill: np.ndarray  #: finished hole, mm
    diameter: np.ndarray  #: land (pad) diameter, mm (a pad: its smaller side)
    start: np.ndarray  #: first copper index
    end: np.ndarray  #: last copper index
    span_mm: np.ndarray  #: plated length, mm (NaN: unknown)
    span_basis: tuple[str | None, str | None]  #: (through holes, blind/buried) basis
    via_rows: np.ndarray  #: the via-table row of each via hole (the first rows)
    via_uuids: Any  #: the via table's uuids (decoded on demand: a big board's are slow to decode)
    pad_ids: tuple[str, ...]  #: "REF.pad" of each pad hole (the rows after the vias)
    layer_names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.drill.shape[0])

    def ids_of(self, rows: Any, most: int = 200) -> list[str]:
        """The uuids (vias) and ``REF.pad`` names (pads) of ``rows``, each once, in order, at
        most ``most``: a finding's items."""
        out: dict[str, None] = {}
        nv = len(self.via_rows)
        for r in (int(x) for x in rows):
            if r < nv:
                v = int(self.via_rows[r])
                name = self.via_uuids[v] if v < len(self.via_uuids) else ""
            else:
                name = self.pad_ids[r - nv]
            if name:
                out[name] = None
                if len(out) >= most:
                    break
        return list(out)

    def basis_of(self, row: int) -> str | None:
        """The basis of row ``row``'s span: the board thickness for a through hole, the
        stack-up's thicknesses for a blind or buried one."""
        through = self.start[row] == 0 and self.end[row] == len(self.layer_names) - 1
        return self.span_basis[0] if through else self.span_basis[1]


def stack_geometry(board: Any) -> Any:
    """The stack geometry of the via-stub analysis (the one prefix-sum walk of the stack-up)."""
    from ..analysis.via_stubs import StackGeometry

    return StackGeometry.from_board(board)


def plated_holes(ctx: CheckContext, *, pads: bool = True) -> Holes:
    """Every via with a drill and (``pads``) every plated through-hole pad of the board."""
    board = ctx.board
    vias = board.vias
    n_layers = board.layer_count
    nv = len(vias)
    keep = via_rows_with_holes(vias)
    vtypes = vias.types if nv else ()
    pad_rows: list[tuple[float, float, float, float, str]] = []
    if pads:
        for fp, pad in board.pads:
            if pad.type == "thru_hole" and pad.drill_mm and pad.drill_mm >= MIN_HOLE_MM:
                pad_rows.append(
                    (pad.x, pad.y, float(pad.drill_mm), float(min(pad.width, pad.height)),
                     f"{fp.reference}.{pad.number}")
                )  # fmt: skip
    npd = len(pad_rows)
    kind = np.concatenate((np.full(len(keep), VIA, np.int8), np.full(npd, PAD, np.int8)))
    xy = np.concatenate(
        (np.asarray(vias.pos, float).reshape(-1, 2)[keep],
         np.array([r[:2] for r in pad_rows], float).reshape(-1, 2))
    )  # fmt: skip
    drill = np.concatenate((np.asarray(vias.drill, float)[keep], [r[2] for r in pad_rows]))
    dia = np.concatenate((np.asarray(vias.diameter, float)[keep], [r[3] for r in pad_rows]))
    start = np.concatenate(
        (np.asarray(vias.start, np.int64)[keep], np.zeros(npd, np.int64))
    ).astype(np.int64)
    end = np.concatenate(
        (np.asarray(vias.end, np.int64)[keep], np.full(npd, n_layers - 1, np.int64))
    ).astype(np.int64)
    facts = stackup_basis(ctx.analysis)
    geom = stack_geometry(board)
    span = geom.length(2 * start, 2 * end + 1) if len(start) else np.zeros(0)
    through = (start == 0) & (end == n_layers - 1)
    t_board = board.board_thickness_mm
    t_basis = facts.board_thickness(t_board)
    if t_basis is not None:
        span = np.where(through, float(t_board or 0.0), span)
    else:  # no stated board thickness: the stack-up's sum where it has one
        t_basis = facts.thickness if np.isfinite(geom.length([0], [2 * n_layers - 1])[0]) else None
    return Holes(
        kind=kind,
        types=tuple(vtypes[i] for i in keep.tolist()) + ("PTH pad",) * npd,
        xy=xy,
        drill=drill,
        diameter=dia,
        start=start,
        end=end,
        span_mm=span,
        span_basis=(t_basis, facts.thickness),
        via_rows=keep,
        via_uuids=vias.uuid,
        pad_ids=tuple(r[4] for r in pad_rows),
        layer_names=tuple(c.name for c in board.copper_layers),
    )


def via_rows_with_holes(vias: Any) -> np.ndarray:
    """Rows of the via table that are holes (a drill of at least :data:`MIN_HOLE_MM`): the
    via rows of :func:`plated_holes`, in order."""
    if not len(vias):
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.asarray(vias.drill, float) >= MIN_HOLE_MM)


def microvia_rows(holes: Holes) -> np.ndarray:
    """Rows that are microvias: KiCad's micro type, and blind vias spanning one dielectric."""
    n_layers = len(holes.layer_names)
    blind = (holes.start == 0) ^ (holes.end == n_layers - 1)
    one = (holes.end - holes.start) == 1
    micro = np.array([t == "micro" for t in holes.types], bool)
    return np.flatnonzero((holes.kind == VIA) & (micro | (blind & one)))


@dataclass(frozen=True)
class FabLimit:
    """The aspect-ratio limit a run compares with, and where it comes from."""

    limit: float
    label: str  #: "advanced fab (12:1, assumed for training)" / "your fab (declared 14:1)"
    basis: str  #: declared | default
    assumed: FabClass | None  #: the class the pack assumes (None: declared)
    classes: Sequence[FabClass]


def fab_data(ctx: CheckContext) -> FabData | None:
    fab = ctx.analysis.library.fab
    return fab if fab is not None and fab.classes else None


def fab_limit(ctx: CheckContext, fab_class: str | None) -> FabLimit | None:
    """The aspect-ratio limit: ``fab: aspect_ratio_max`` or ``fab: class`` of the config
    (declared), else the pack's ``fab_class`` (a default: the class's assumed fab)."""
    fab = fab_data(ctx)
    classes = fab.classes if fab is not None else ()
    cfg = ctx.config.fab
    if cfg.aspect_ratio_max is not None:
        r = float(cfg.aspect_ratio_max)
        return FabLimit(r, f"your fab (declared {r:g}:1)", "declared", None, classes)
    if cfg.fab_class and fab is not None and fab.fab_class(cfg.fab_class) is not None:
        c = fab.fab_class(cfg.fab_class)
        assert c is not None
        return FabLimit(
            c.aspect_ratio_max, f"{c.id} fab ({c.aspect_ratio_max:g}:1, declared)", "declared",
            None, classes,
        )  # fmt: skip
    c = fab.fab_class(fab_class) if fab is not None else None
    if c is None:
        return None
    return FabLimit(
        c.aspect_ratio_max,
        f"{c.id} fab ({c.aspect_ratio_max:g}:1, assumed for {ctx.board_class})",
        "default",
        c,
        classes,
    )


def group_rows(columns: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Rows grouped by equal values of ``columns`` (ints), rows ascending in each group, groups
    in order of first row.  A stable lexsort, not ``np.unique(axis=0)`` (which imports
    ``numpy.ma``, a start-up cost every run would pay: docs/architecture.md)."""
    if not len(columns) or not len(columns[0]):
        return []
    keys = np.stack([np.asarray(c, np.int64) for c in columns], axis=1)
    order, change = sorted_rows(keys)
    groups = np.split(order, np.flatnonzero(change)[1:])
    return sorted(groups, key=lambda g: int(g[0]))


def positions(holes: Holes, rows: np.ndarray) -> list[list[float]]:
    """The first :data:`MAX_POSITIONS` positions of ``rows``, mm, rounded to 0.1 µm."""
    return [[round(x, 4), round(y, 4)] for x, y in holes.xy[rows[:MAX_POSITIONS]].tolist()]


def ceil_to(x: float, step: float) -> float:
    """``x`` rounded up to a multiple of ``step`` (a drill from a fab's drill list)."""
    return round(float(np.ceil(x / step - 1e-9) * step), 6)
