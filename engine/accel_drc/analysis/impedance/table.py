"""The pair impedance table: every pair × layer measured and solved (:func:`pair_table`),
its breakout/routed classification, the basis of each input, and the report rows
(:func:`pair_rows`)."""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...concurrency import workers
from ..stackup import stackup_basis
from .formulas import C0, coupled_microstrip, coupled_stripline, offset_coupled_stripline
from .pairs import PairTraces, box_pairs, measure_pairs
from .solver import FdLayer, fd_coupled
from .stack import LayerStack, layer_stack

if TYPE_CHECKING:
    from .. import Analysis

log = logging.getLogger(__name__)

#: a layer where the pair's P/N run parallel over less than this is fan-out, not routing
MIN_COUPLED_MM = 0.5
#: most item uuids a pair row keeps (as many as a finding lists)
MAX_ITEMS = 200
#: segments per batch of :func:`measure_pairs` in :func:`pair_table` (bounds temporaries, ~50 MB)
_BATCH_ROWS = 1 << 17
#: decimals (mm) every field-solver length is rounded to: 0.1 µm, far below fab tolerance
GEOMETRY_ROUND_DECIMALS = 4
#: production mesh of the field solver: resolutions 0.5 and 1, extrapolated
FIELD_RESOLUTION = 1.0
#: Richardson order: the energy error near a 270° conductor corner falls as h^(4/3)
FIELD_ORDER = 4.0 / 3.0
#: largest |error| (%) of the production setting against the fine-mesh reference (docs)
FIELD_ACCURACY_PCT = 0.4

METHOD_STRIPLINE = "coupled stripline: Cohn 1955 (exact at t=0) + thickness correction"
METHOD_OFFSET = "offset coupled stripline: parallel halves on Cohn 1955 + thickness correction"
METHOD_MS_FIELD = "edge-coupled microstrip: 2-D field solver (finite differences, quasi-static)"
METHOD_SL_FIELD = "edge-coupled stripline: 2-D field solver (finite differences, quasi-static)"
METHOD_MS_KJ = (
    "edge-coupled microstrip: Kirschning-Jansen 1984 (static, t=0) + thickness as capacitance "
    "increments"
)

#: measured on 36 random cross-sections (microstrip bare and under mask, offset stripline with
#: two εr) against the solver at a 4× finer mesh, Richardson-extrapolated (docs/impedance.md)
_FIELD_ACCURACY = (
    f"within {FIELD_ACCURACY_PCT:g} % of a fine-mesh 2-D field solution (docs/impedance.md)"
)

ACCURACY = {
    METHOD_STRIPLINE: "within 2.1 % of a 2-D field solution (1.6 % for w/b >= 0.2); exact at t = 0",
    METHOD_OFFSET: "within 2.1 % of a 2-D field solution for h_far/h_near <= 4",
    METHOD_MS_FIELD: _FIELD_ACCURACY + "; mask as a conformal coat",
    METHOD_SL_FIELD: _FIELD_ACCURACY,
    METHOD_MS_KJ: "within 2.0 % of a 2-D field solution (w/h 0.5-2, s/h 0.3-8, t/h <= 0.35); "
    "soldermask not included",
}

# ---------------------------------------------------------------------------------------------
# Pair impedance table
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairImpedance:
    """One differential pair on one copper layer: its measured geometry and Zdiff."""

    pair: str
    positive: int
    negative: int
    layer: int
    layer_name: str
    net_class: str
    width_mm: float | None
    gap_mm: float | None
    width_source: str  # tracks | net class
    gap_source: str  # tracks | net class | none
    coupled_mm: float
    length_mm: float
    stack: LayerStack
    zdiff_ohm: float | None = None
    method: str | None = None
    accuracy: str | None = None
    closed_form_ohm: float | None = None  # the closed form's value where the field solver ran
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    pos: tuple[float, float] | None = None
    items: tuple[str, ...] = ()  # the first MAX_ITEMS segment uuids (what a finding lists)
    footprint: str | None = None  # the footprint whose pad field holds >= 90 % of the row
    stretch_mm: float = 0.0  # longest contiguous stretch of one net with no partner alongside
    width_basis: str = "measured"  # measured | declared | default (basis.py vocabulary)
    gap_basis: str = "measured"
    stack_basis: tuple[tuple[str, str], ...] = ()  # (input, basis) of h, epsilon_r, t, mask

    @property
    def uncoupled_mm(self) -> float:
        """Length of the pair on this layer (mean of P and N) not running side by side."""
        return max(self.length_mm - self.coupled_mm, 0.0)

    @property
    def routed(self) -> bool:
        """Routed as a pair on this layer (not just a fan-out stub to a via)."""
        return self.coupled_mm >= MIN_COUPLED_MM


def field_cross_section(
    stack: LayerStack, w_mm: float, s_mm: float
) -> tuple[tuple[Any, ...], tuple[float, float] | None]:
    """The :func:`fd_coupled` arguments ``(w, s, t, y_strip, layers, top_plane)`` and the mask of
    a pair of width ``w`` and gap ``s`` on ``stack``, every length rounded to 0.1 µm.

    Stripline: the strips sit on the lower dielectric (h_below, εr_below) and the upper one
    (h_above, εr_above) fills the rest; across the copper's own thickness the boundary between
    the two εr is taken at mid-thickness (the resin that fills the gap between the strips is the
    neighbouring prepreg's; with 18–35 µm copper the choice moves Zdiff by < 0.3 %, docs).
    Microstrip: one substrate below, air above, the soldermask a conformal coat.
    """
    r = GEOMETRY_ROUND_DECIMALS
    w, s, t = round(w_mm, r), round(s_mm, r), round(stack.t_mm or 0.0, r)
    hb, erb = stack.h_below_mm, stack.er_below
    assert hb is not None and erb is not None
    hb = round(hb, r)
    if stack.structure == "stripline":
        ha, era = stack.h_above_mm, stack.er_above
        assert ha is not None and era is not None
        top = round(hb + t + round(ha, r), r)
        mid = hb + 0.5 * t
        if abs(era - erb) < 1e-9:
            layers: tuple[FdLayer, ...] = (FdLayer(0.0, top, erb),)
        else:
            layers = (FdLayer(0.0, mid, erb), FdLayer(mid, top, era))
        return (w, s, t, hb, layers, top), None
    return (w, s, t, hb, (FdLayer(0.0, hb, erb),), None), stack.mask


def field_zdiff(
    stack: LayerStack, w_mm: float, s_mm: float, resolution: float = FIELD_RESOLUTION
) -> float:
    """Zdiff (Ω) of the pair by the 2-D field solver at the production setting: meshes
    ``resolution/2`` and ``resolution``, Richardson-extrapolated with the corner-singularity
    order 4/3 (:data:`FIELD_ORDER`).  Accuracy measured against the fine-mesh reference in
    ``docs/impedance.md`` (:data:`FIELD_ACCURACY_PCT`)."""
    args, mask = field_cross_section(stack, w_mm, s_mm)
    zo = fd_coupled(
        *args, resolution=resolution, mask=mask, extrapolate=True, odd_only=True, order=FIELD_ORDER
    )[1]
    return 2.0 * zo


def closed_form_zdiff(stack: LayerStack, w_mm: float, s_mm: float) -> tuple[float, str]:
    """(Zdiff Ω, method) by the closed forms: the cross-check beside every field solution."""
    t = stack.t_mm or 0.0
    if stack.structure == "stripline":
        ha, hb = stack.h_above_mm, stack.h_below_mm
        era, erb = stack.er_above, stack.er_below
        assert ha is not None and hb is not None and era is not None and erb is not None
        b = ha + t + hb
        if abs(ha - hb) <= 0.01 * b and abs(era - erb) <= 0.01 * max(era, erb):
            return 2.0 * coupled_stripline(w_mm, s_mm, b, t, 0.5 * (era + erb))[1], METHOD_STRIPLINE
        return 2.0 * offset_coupled_stripline(w_mm, s_mm, ha, hb, t, era, erb)[1], METHOD_OFFSET
    h, er = stack.h_below_mm, stack.er_below
    assert h is not None and er is not None
    return 2.0 * coupled_microstrip(w_mm, s_mm, h, t, er)[1], METHOD_MS_KJ


def zdiff_of(
    stack: LayerStack,
    w_mm: float,
    s_mm: float,
    cache: dict[Any, Any] | None = None,
    field_solver: bool = True,
) -> tuple[float, str, float | None, tuple[str, ...]]:
    """(Zdiff Ω, method, closed-form Zdiff where the field solver was used, notes).

    Every structure — microstrip (with the soldermask the stack-up declares), symmetric and
    offset stripline, one εr or two — is field-solved (:func:`field_zdiff`), once per distinct
    cross-section: ``cache`` is keyed by the structure, heights, εr, copper, mask, width and gap
    rounded to 0.1 µm (far below what a fab holds: ±10 % of the width), so the hundredth pair of
    a geometry costs a dictionary look-up and the result never depends on how many other pairs
    the board has (there is no budget).  The closed form is returned alongside as a cross-check;
    ``field_solver=False`` returns the closed form alone (tests, comparisons).
    """
    notes: list[str] = []
    cf, cf_method = closed_form_zdiff(stack, w_mm, s_mm)
    if not field_solver:
        if stack.structure == "microstrip" and stack.mask is not None:
            notes.append("soldermask not included in the closed form (it lowers Zdiff by 1-5 %)")
        return cf, cf_method, None, tuple(notes)
    args, mask = field_cross_section(stack, w_mm, s_mm)
    key = (stack.structure, args[:4], args[4], args[5], mask)
    method = METHOD_MS_FIELD if stack.structure == "microstrip" else METHOD_SL_FIELD
    if cache is not None and key in cache:
        return cache[key], method, cf, ()
    z = field_zdiff(stack, w_mm, s_mm)
    if cache is not None:
        cache[key] = z
    return z, method, cf, ()


def _first_uuids(uuids: Sequence[str], rows: np.ndarray, n_uuid: int) -> list[str]:
    """The first :data:`MAX_ITEMS` non-empty uuids of track ``rows``: all a finding lists.

    The reader keeps uuids as spans of the board text, decoded one by one on access; decoding
    every segment of every pair (1.5 M on a 279 MB board) cost more than measuring them."""
    out: list[str] = []
    for lo in range(0, len(rows), 2 * MAX_ITEMS):
        for i in rows[lo : lo + 2 * MAX_ITEMS].tolist():
            if i < n_uuid:
                u = uuids[i]
                if u:
                    out.append(u)
                    if len(out) >= MAX_ITEMS:
                        return out
    return out


class _ItemUuids(Sequence):
    """The first :data:`MAX_ITEMS` non-empty uuids of some track rows, decoded when first read
    (only rows that become findings ever are): a tuple-like stand-in for ``items``."""

    def __init__(self, uuids: Sequence[str], rows: np.ndarray, n_uuid: int) -> None:
        self._src: tuple[Sequence[str], np.ndarray, int] | None = (uuids, rows, n_uuid)
        self._got: tuple[str, ...] = ()

    def _items(self) -> tuple[str, ...]:
        if self._src is not None:
            self._got = tuple(_first_uuids(*self._src))
            self._src = None
        return self._got

    def __len__(self) -> int:
        return len(self._items())

    def __getitem__(self, i):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN204
        return self._items()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (_ItemUuids, tuple, list)):
            return self._items() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items())

    def __repr__(self) -> str:
        return repr(self._items())


def _pair_rows_of(index: Any, layer: np.ndarray, pos: int, neg: int) -> dict[int, np.ndarray]:
    """Track rows of the pair's two nets, by layer, each in ascending row order (the order
    :func:`measure_pair` sees them in); found through the (net, layer) index, so a board with
    a thousand pairs costs a thousand binary searches, not a thousand scans of every track."""
    rows = np.sort(np.concatenate([index.net_rows(pos), index.net_rows(neg)]))
    if not rows.size:
        return {}
    ly = layer[rows].astype(np.int64)
    # copper layer ids are small ints: a count finds the present ones without a hash unique
    return {k: rows[ly == k] for k in np.flatnonzero(np.bincount(ly)).tolist()}


#: Johnson & Graham's lumped-element criterion: a structure shorter than 1/6 of the rising
#: edge's length acts as a lumped element (H. Johnson, M. Graham, *High-Speed Digital Design:
#: A Handbook of Black Magic*, Prentice Hall 1993, §1.6 "lumped versus distributed systems")
LUMPED_FRACTION = 1.0 / 6.0
#: IPC-7351B nominal (density level B) courtyard excess around a land pattern (mm)
COURTYARD_EXCESS_MM = 0.25
#: a row whose track length lies at least this much inside one footprint's courtyard is its escape
IN_FOOTPRINT_FRACTION = 0.9
#: what a row is: judged as routing, or listed as a pad escape that is never judged
KIND_ROUTED = "routed"
KIND_BREAKOUT = "breakout"


def rise_length_mm(nyquist_hz: float, er: float) -> float:
    """Length (mm) of the signal's rising edge on a line of dielectric ``er``: Tr·v, with the
    knee frequency 0.5/Tr (Johnson & Graham §1.1) set to the signal's Nyquist frequency and
    v = c/√εr.  The dielectric's εr (≥ the line's εeff) gives the shortest, i.e. most
    demanding, length.  PCIe Gen4 (8 GHz) on εr 4.1: Tr = 62.5 ps, 9.25 mm."""
    tr_s = 0.5 / nyquist_hz
    return tr_s * C0 / math.sqrt(er) * 1e3


def breakout_length_mm(nyquist_hz: float | None, er: float | None) -> float:
    """Coupled run below which a pair-layer is an escape, not routing: 1/6 of the rise length
    (:data:`LUMPED_FRACTION`): electrically short, its impedance is seen as a lumped
    discontinuity the size of a pad, not as a line.  PCIe Gen4 on εr 4.1: 1.54 mm; Gen5/6
    (16 GHz): 0.77 mm.  Without a signal type (no Nyquist known) the geometric
    :data:`MIN_COUPLED_MM`."""
    if not nyquist_hz or not er:
        return MIN_COUPLED_MM
    return max(rise_length_mm(nyquist_hz, er) * LUMPED_FRACTION, MIN_COUPLED_MM)


def stack_er(stack: LayerStack) -> float | None:
    """The largest εr around the trace (the shortest rise length)."""
    ers = [e for e in (stack.er_below, stack.er_above) if e is not None]
    return max(ers) if ers else None


def row_kind(row: PairImpedance, nyquist_hz: float | None) -> tuple[str, float, str]:
    """(kind, breakout length mm, why) of a pair-layer: ``breakout`` when P and N run side by
    side for less than :func:`breakout_length_mm`, or when the row lies inside a footprint's
    courtyard (an escape in a pin field); ``routed`` otherwise."""
    limit = breakout_length_mm(nyquist_hz, stack_er(row.stack))
    if row.footprint is not None:
        return (
            KIND_BREAKOUT,
            limit,
            f"inside the courtyard of {row.footprint} (pin-field escape)",
        )
    if row.coupled_mm < limit:
        return (
            KIND_BREAKOUT,
            limit,
            f"coupled {row.coupled_mm:.2f} mm of {row.length_mm:.2f} mm, shorter than "
            f"{limit:.2f} mm (1/6 of the rise length: electrically short)",
        )
    return KIND_ROUTED, limit, ""


def _pad_fields(board: Any) -> tuple[np.ndarray, list[str]]:
    """(F, 4) boxes (xmin, ymin, xmax, ymax) of every footprint with two pads or more: the
    pads' extent (each pad taken as a square of its larger side) grown by the IPC-7351B
    courtyard excess (the board file's own courtyard drawing is not read), and the references."""
    xs: list[float] = []
    ys: list[float] = []
    rs: list[float] = []
    starts: list[int] = []
    refs: list[str] = []
    for fp in getattr(board, "footprints", ()) or ():
        pads = fp.pads
        if len(pads) < 2:
            continue
        starts.append(len(xs))
        refs.append(fp.reference)
        for p in pads:
            xs.append(p.x)
            ys.append(p.y)
            rs.append(0.5 * (p.width if p.width > p.height else p.height))
    if not refs:
        return np.zeros((0, 4)), refs
    x, y, r = np.asarray(xs), np.asarray(ys), np.asarray(rs)
    st = np.asarray(starts, dtype=np.int64)
    e = COURTYARD_EXCESS_MM
    boxes = np.column_stack(
        [
            np.minimum.reduceat(x - r, st) - e,
            np.minimum.reduceat(y - r, st) - e,
            np.maximum.reduceat(x + r, st) + e,
            np.maximum.reduceat(y + r, st) + e,
        ]
    )
    return boxes, refs


def group_boxes(start: np.ndarray, end: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """(G, 4) boxes (xmin, ymin, xmax, ymax) of segment groups ``bounds[g]:bounds[g + 1]``
    (an empty group: NaN)."""
    n_groups = len(bounds) - 1
    box = np.full((n_groups, 4), np.nan)
    sizes = np.diff(bounds)
    ne = np.flatnonzero(sizes > 0)
    if ne.size:
        st = bounds[:-1][ne]
        box[ne, :2] = np.minimum.reduceat(np.minimum(start, end), st, axis=0)
        box[ne, 2:] = np.maximum.reduceat(np.maximum(start, end), st, axis=0)
    return box


def footprints_holding(
    boxes_g: np.ndarray,
    total: np.ndarray,
    segments: Any,
    fields: tuple[np.ndarray, list[str]],
) -> list[str | None]:
    """For each segment group (its box from :func:`group_boxes`, its total length), the footprint
    whose courtyard holds ≥ 90 % of the group's length (segments with both ends inside), or
    None.  ``segments(g)`` gives a group's (start, end) arrays, fetched only for the few
    couples that need them.

    Group boxes are joined with the courtyards by :func:`box_pairs`; a couple is measured
    segment by segment only when the group's box centre lies in the courtyard (a cheap
    filter: a group 90 % inside whose last 10 % stretches its box past the courtyard's far
    side is missed, and then judged by its coupled length like any other row)."""
    boxes, refs = fields
    n_groups = len(total)
    out: list[str | None] = [None] * n_groups
    ok_g = np.flatnonzero(np.isfinite(boxes_g[:, 0]) & (total > 0.0))
    if not len(boxes) or not ok_g.size:
        return out
    g_lo, g_hi = boxes_g[ok_g, :2], boxes_g[ok_g, 2:]
    centre = 0.5 * (g_lo + g_hi)
    best: dict[int, tuple[float, int]] = {}
    for gi, fi in box_pairs(g_lo, g_hi, boxes[:, :2], boxes[:, 2:]):
        c = centre[gi]
        keep = (
            (c[:, 0] >= boxes[fi, 0])
            & (c[:, 0] <= boxes[fi, 2])
            & (c[:, 1] >= boxes[fi, 1])
            & (c[:, 1] <= boxes[fi, 3])
        )
        for g_, f_ in zip(gi[keep].tolist(), fi[keep].tolist()):
            g = int(ok_g[g_])
            s0, e0 = segments(g)
            lo, hi = np.minimum(s0, e0), np.maximum(s0, e0)
            b = boxes[f_]
            inside = (
                (lo[:, 0] >= b[0]) & (hi[:, 0] <= b[2]) & (lo[:, 1] >= b[1]) & (hi[:, 1] <= b[3])
            )
            held = float(np.hypot(*(e0 - s0).T)[inside].sum())
            if held >= IN_FOOTPRINT_FRACTION * total[g] - 1e-12 and (
                g not in best or held > best[g][0]
            ):
                best[g] = (held, f_)
    for g, (_, f) in best.items():
        out[g] = refs[f]
    return out


#: KiCad's "Default" net class diff-pair gap (KiCad's NETCLASS default), mm
KICAD_DEFAULT_DP_GAP_MM = 0.25
#: KiCad's "Default" net class diff-pair width, mm
KICAD_DEFAULT_DP_WIDTH_MM = 0.2


def _class_basis(cls_name: str, value: float, kicad_default: float) -> str:
    """``default`` for KiCad's own Default net class value, ``declared`` for a designer's class."""
    if cls_name == "Default" and abs(value - kicad_default) < 1e-9:
        return "default"
    return "declared"


def stack_basis(analysis: Analysis, stack: LayerStack) -> tuple[tuple[str, str], ...]:
    """Basis of the stack-up inputs of a row: ``h`` (the heights), ``epsilon_r`` (of the
    dielectrics between the layer and its references), ``t`` (the copper thickness), as the one
    owner (:class:`~accel_drc.analysis.stackup.StackupBasis`) gives them; and ``mask_er`` on a
    microstrip with a mask (``declared`` unless the stack-up gives no εr and the typical value
    is used)."""
    sb = stackup_basis(analysis)
    names = stack.dielectrics or None
    out = {
        "h": sb.heights(names),
        "epsilon_r": sb.epsilon_r(stack.dielectrics),
        "t": sb.copper_thickness(stack.layer_name),
    }
    if stack.structure == "microstrip" and stack.mask is not None:
        out["mask_er"] = "declared" if stack.mask_er_declared else "default"
    return tuple(out.items())


def _map_batches(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """``[fn(x) for x in items]``, on two threads when there are several items and CPUs.

    Why threads pay here: a batch of :func:`measure_pairs` is a few dozen numpy operations on
    10⁵-element arrays (sorts, ``searchsorted``, gathers, arithmetic), which run with the GIL
    released, so two batches proceed side by side on two cores.  The batches are independent and pure,
    and the results come back in item order: the numbers are exactly those of the sequential
    loop.  Two threads hold two batches' temporaries.
    """
    n = min(2, workers(), len(items))
    if n < 2:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="accel-drc pairs") as pool:
        return list(pool.map(fn, items))


def pair_table(analysis: Analysis, pairs: Sequence[Any] | None = None) -> list[PairImpedance]:
    """Every routed layer of every differential pair (or of ``pairs``), with its Zdiff.

    Cached on the analysis (the check and ``inspect --detail pairs`` share one computation; the
    field solver runs once per distinct microstrip geometry).  When the pipeline started the
    whole table on a background thread (``Analysis.prefetch("pair_table")``), it is waited for
    first and the rows come from its cache; if it failed, the table is computed here as if it
    had never been started (the error, if it is one, raised by this call).
    """
    job = getattr(analysis, "_jobs", {}).get("pair_table")
    if job is not None:
        with contextlib.suppress(Exception):
            job.result()
    return _pair_table(analysis, pairs)


def _pair_table(analysis: Analysis, pairs: Sequence[Any] | None = None) -> list[PairImpedance]:
    """:func:`pair_table` itself (what the background thread runs)."""
    cache = analysis.memo.setdefault("impedance", {})
    if pairs is None and "all_rows" in cache:
        # the whole table again (the insertion-loss remedies ask once per channel and foil
        # grade); rows never change once built
        return list(cache["all_rows"])
    board = analysis.board
    wanted = tuple(pairs) if pairs is not None else tuple(analysis.diff_pairs)
    planes = getattr(analysis, "plane_layers", None)
    if planes is None:
        planes = {}
    stacks = cache.setdefault("stacks", {})
    rows_cache = cache.setdefault("rows", {})
    fd_cache = cache.setdefault("fd", {})
    tr = board.tracks
    index = getattr(analysis, "track_index", None)
    if index is None:
        from ..nets import TrackIndex

        index = TrackIndex(board)
    # every pair-layer not cached yet is measured in one batch (one near-segment search for
    # the board), then the rows are built in the same order as before
    plan: list[tuple[Any, list[tuple[int, np.ndarray]]]] = []
    chunks: list[np.ndarray] = []
    positives: list[int] = []
    n_uuid = len(tr.uuid)
    planned: set[tuple[int, int]] = set()
    for dp in wanted:
        key = (dp.positive, dp.negative)
        if key in rows_cache or key in planned:
            continue
        planned.add(key)
        per_layer = _pair_rows_of(index, tr.layer, dp.positive, dp.negative)
        plan.append((dp, list(per_layer.items())))
        for idx in per_layer.values():
            chunks.append(idx)
            positives.append(dp.positive)
    batches: list[tuple[int, int]] = []
    lo = 0
    while lo < len(chunks):  # batches of about _BATCH_ROWS segments bound the temporaries
        hi, n_rows = lo, 0
        while hi < len(chunks) and (hi == lo or n_rows + len(chunks[hi]) <= _BATCH_ROWS):
            n_rows += len(chunks[hi])
            hi += 1
        batches.append((lo, hi))
        lo = hi

    def measure_batch(lo_hi: tuple[int, int]) -> tuple[list[PairTraces], np.ndarray]:
        lo, hi = lo_hi
        rows_all = np.concatenate(chunks[lo:hi])
        sizes = [len(c) for c in chunks[lo:hi]]
        is_p = tr.net[rows_all] == np.repeat(np.asarray(positives[lo:hi], dtype=np.int64), sizes)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        st_b, en_b = tr.start[rows_all], tr.end[rows_all]
        return (
            measure_pairs(st_b, en_b, tr.width[rows_all], is_p, bounds),
            group_boxes(
                np.asarray(st_b, dtype=float).reshape(-1, 2),
                np.asarray(en_b, dtype=float).reshape(-1, 2),
                bounds.astype(np.int64),
            ),
        )

    measured_l: list[PairTraces] = []
    gboxes_l: list[np.ndarray] = []
    for got_m, got_b in _map_batches(measure_batch, batches):
        measured_l += got_m
        gboxes_l.append(got_b)
    measured = iter(measured_l)
    if plan and "pad_fields" not in cache:
        cache["pad_fields"] = _pad_fields(board)
    held_by: Iterator[str | None] = iter(())
    if chunks:

        def segments_of(g: int) -> tuple[np.ndarray, np.ndarray]:
            c = chunks[g]
            return (
                np.asarray(tr.start[c], dtype=float).reshape(-1, 2),
                np.asarray(tr.end[c], dtype=float).reshape(-1, 2),
            )

        held_by = iter(
            footprints_holding(
                np.concatenate(gboxes_l),
                2.0 * np.array([m.length_mm for m in measured_l]),  # P + N: the segments' sum
                segments_of,
                cache["pad_fields"],
            )
        )
    bases = cache.setdefault("stack_basis", {})
    for dp, layers in plan:
        key = (dp.positive, dp.negative)
        rows: list[PairImpedance] = []
        cls_name = board.net_classes.class_of(board.nets[dp.positive])
        cls = board.net_classes.by_name(cls_name)
        for layer, idx in layers:
            if layer not in stacks:
                stacks[layer] = layer_stack(board, layer, planes)
            stack = stacks[layer]
            m = next(measured)
            if layer not in bases:
                bases[layer] = stack_basis(analysis, stack)
            notes = list(stack.notes)
            width, wsrc, wbasis = m.width_mm, "tracks", "measured"
            gap, gsrc, gbasis = m.gap_mm, "tracks", "measured"
            if gap is None or m.coupled_mm < MIN_COUPLED_MM:
                if cls is not None and cls.diff_pair_gap_mm:
                    gap, gsrc = cls.diff_pair_gap_mm, "net class"
                    gbasis = _class_basis(cls_name, gap, KICAD_DEFAULT_DP_GAP_MM)
                    notes.append(
                        f"no parallel P/N run on {stack.layer_name}: gap {gap:g} mm from net "
                        f"class {cls_name} ({gbasis}, not measured)"
                    )
                else:
                    gap, gsrc, gbasis = None, "none", "none"
            if width is None and cls is not None and cls.diff_pair_width_mm:
                width, wsrc = cls.diff_pair_width_mm, "net class"
                wbasis = _class_basis(cls_name, width, KICAD_DEFAULT_DP_WIDTH_MM)
            fp = next(held_by)
            row = PairImpedance(
                pair=dp.name,
                positive=dp.positive,
                negative=dp.negative,
                layer=layer,
                layer_name=stack.layer_name,
                net_class=cls_name,
                width_mm=width,
                gap_mm=gap,
                width_source=wsrc,
                gap_source=gsrc,
                coupled_mm=m.coupled_mm,
                length_mm=m.length_mm,
                stack=stack,
                pos=m.pos,
                items=_ItemUuids(tr.uuid, idx, n_uuid),  # type: ignore[arg-type]
                footprint=fp,
                stretch_mm=m.stretch_mm,
                width_basis=wbasis,
                gap_basis=gbasis,
                stack_basis=bases[layer],
            )
            missing = [f"stack-up: {m}" for m in stack.missing]
            if gap is None:
                missing.append(
                    f"net class {cls_name}: diff_pair_gap (no parallel P/N run on "
                    f"{stack.layer_name} to measure the pair gap)"
                )
            if width is None:
                missing.append(f"net class {cls_name}: diff_pair_width")
            if missing:
                rows.append(
                    _replace(row, notes=tuple(notes), missing=tuple(dict.fromkeys(missing)))
                )
                continue
            assert width is not None and gap is not None
            try:
                z, method, cf, more = zdiff_of(stack, width, gap, fd_cache)
            except ValueError as exc:  # degenerate geometry (zero gap, …): say so, never crash
                rows.append(
                    _replace(row, notes=tuple(notes), missing=(f"a valid geometry: {exc}",))
                )
                continue
            rows.append(
                _replace(
                    row,
                    zdiff_ohm=z,
                    method=method,
                    accuracy=ACCURACY[method],
                    closed_form_ohm=cf,
                    notes=tuple(notes) + more,
                )
            )
        rows_cache[key] = rows
    out: list[PairImpedance] = []
    for dp in wanted:
        out.extend(rows_cache[(dp.positive, dp.negative)])
    if pairs is None:
        cache["all_rows"] = tuple(out)
    return out


def _replace(row: PairImpedance, **kw: Any) -> PairImpedance:
    import dataclasses

    return dataclasses.replace(row, **kw)


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def pair_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Rows of ``accel-drc inspect --json --detail pairs``: every differential pair on every
    copper layer it has tracks on.

    {name, layer, width_mm, gap_mm, zdiff_ohm, method, h_mm (microstrip) or b_mm (stripline),
    epsilon_r, …}; ``zdiff_ohm`` is null where the stack-up lacks data (``missing`` says what).
    """
    net_signal = {}
    try:
        net_signal = analysis.net_signal
    except Exception:  # noqa: BLE001 - signal assignment is optional here (no rules library)
        log.debug("no signal assignment for pair rows", exc_info=True)
    types: Any = {}
    try:
        types = analysis.signal_types
    except Exception:  # noqa: BLE001 - no rules library
        log.debug("no signal types for pair rows", exc_info=True)
    out = []
    for row in pair_table(analysis):
        st = row.stack
        sig = net_signal.get(row.positive) if net_signal else None
        stype = types.get(getattr(sig, "signal", None)) if sig is not None and types else None
        kind, limit, why = row_kind(row, getattr(stype, "nyquist_hz", None))
        d: dict[str, Any] = {
            "name": row.pair,
            "layer": row.layer_name,
            "width_mm": _r(row.width_mm),
            "gap_mm": _r(row.gap_mm),
            "zdiff_ohm": _r(row.zdiff_ohm, 2),
            "method": row.method,
            "structure": st.structure,
        }
        if st.structure == "stripline":
            b = None
            if None not in (st.h_above_mm, st.h_below_mm, st.t_mm):
                b = st.h_above_mm + st.t_mm + st.h_below_mm  # type: ignore[operator]
            d["b_mm"] = _r(b)
            d["h_above_mm"] = _r(st.h_above_mm)
            d["h_below_mm"] = _r(st.h_below_mm)
            ers = [e for e in (st.er_above, st.er_below) if e is not None]
            d["epsilon_r"] = _r(sum(ers) / len(ers), 3) if len(ers) == 2 else None
            d["epsilon_r_above"] = _r(st.er_above, 3)
            d["epsilon_r_below"] = _r(st.er_below, 3)
        else:
            d["h_mm"] = _r(st.h_below_mm)
            d["epsilon_r"] = _r(st.er_below, 3)
            d["soldermask"] = (
                None if st.mask is None else {"thickness_mm": st.mask[0], "epsilon_r": st.mask[1]}
            )
        d.update(
            {
                "t_mm": _r(st.t_mm),
                "references": list(st.references),
                "net_class": row.net_class,
                "signal": getattr(sig, "signal", None),
                "width_source": row.width_source,
                "gap_source": row.gap_source,
                "basis": {
                    "width": row.width_basis,
                    "gap": row.gap_basis,
                    **dict(row.stack_basis),
                    **({"signal": sig.basis} if sig is not None else {}),
                },
                "coupled_mm": _r(row.coupled_mm, 3),
                "length_mm": _r(row.length_mm, 3),
                "uncoupled_mm": _r(row.uncoupled_mm, 3),
                "longest_uncoupled_mm": _r(row.stretch_mm, 3),
                "kind": kind,
                "breakout_mm": _r(limit, 3),
                "breakout_reason": why or None,
                "footprint": row.footprint,
                "routed": row.routed,
                "accuracy": row.accuracy,
                "closed_form_ohm": _r(row.closed_form_ohm, 2),
                "notes": list(row.notes),
                "missing": list(row.missing),
            }
        )
        out.append(d)
    return out
