"""Differential impedance of routed pairs: closed-form solvers, a 2-D field solver, and the
board geometry (width, gap, height, εr) they are fed with.

Units are explicit and fixed: lengths in **mm** in, impedances in **Ω** out, εr dimensionless.
Every solver is a pure function of its arguments; the board part only gathers numbers.

Methods (see ``docs/impedance.md`` for the formulas and the measured accuracy):

* symmetric coupled stripline, zero thickness: Cohn (1955), exact (conformal mapping), with the
  complete elliptic integrals computed by the arithmetic-geometric mean;
* symmetric coupled stripline, finite thickness: Cohn's thickness correction (1955, eq. 22)
  on top of the exact zero-thickness values, with Wheeler's (1978) thick single stripline and
  the inner-edge term merged smoothly (:func:`coupled_stripline`; Cohn's own s/t = 5 switch is
  kept as :func:`cohn_coupled_stripline` for comparison);
* offset (asymmetric) stripline, possibly with a different εr above and below: each half of
  the cross-section is taken as half of a symmetric stripline of plate spacing 2h+t, and the two
  halves' capacitances are added (air and dielectric separately, so an inhomogeneous stack is
  handled as well as a homogeneous one);
* edge-coupled microstrip, closed form: Kirschning–Jansen (1984) coupled lines on the
  Hammerstad–Jensen (1980) single line, static (quasi-TEM, no dispersion), at t = 0; the strip
  thickness added as capacitance increments (:func:`coupled_microstrip`); the literature
  version with Jansen's width corrections is kept for comparison; no soldermask;
* IPC-2141A closed forms, for comparison only (off by 5–80 % outside a narrow range);
* :func:`fd_coupled`: a finite-difference (box-integration) Laplace solver on a graded mesh,
  numpy only, independent of all the above; used to validate them, and the production method
  for microstrip (it includes the soldermask).

Board side (:func:`layer_stack`, :func:`measure_pair`, :func:`pair_table`, :func:`pair_rows`):
the structure and its heights/εr from the stack-up, width and gap measured from the tracks.

The package, one concern a module (the public names are re-exported here, so
``from accel_drc.analysis.impedance import pair_table`` and ``imp.fd_coupled`` keep working):

* :mod:`.formulas`: the closed forms above (pure functions, mm in, Ω out);
* :mod:`.solver`: the finite-difference field solver;
* :mod:`.stack`: the cross-section of a layer from the stack-up (:class:`LayerStack`);
* :mod:`.pairs`: width, gap and coupled length measured from the tracks;
* :mod:`.table`: the pair × layer table, its basis and report rows.
"""

from __future__ import annotations

from .formulas import (
    C0,
    EPS0,
    ETA0,
    INNER_EDGE_NORM,
    MS_INNER_EDGE_NORM,
    MU0,
    cohn_coupled_stripline,
    cohn_coupled_stripline_zero_t,
    coupled_microstrip,
    coupled_stripline,
    ellipk,
    ellipk_ratio,
    hammerstad_jensen_microstrip,
    ipc2141_microstrip_z0,
    ipc2141_microstrip_zdiff,
    ipc2141_stripline_z0,
    ipc2141_stripline_zdiff,
    kirschning_jansen_coupled_microstrip,
    offset_coupled_stripline,
    stripline_z0_zero_t,
    wheeler_stripline_z0,
)
from .pairs import (
    PairTraces,
    box_pairs,
    measure_pair,
    measure_pairs,
    weighted_median,
)
from .pairs import (
    _longest_free_stretch as _longest_free_stretch,
)
from .solver import (
    FdLayer,
    fd_coupled,
)
from .solver import (
    _one_blas_thread as _one_blas_thread,
)
from .stack import (
    DEFAULT_MASK_ER,
    LayerStack,
    layer_stack,
)
from .table import (
    ACCURACY,
    COURTYARD_EXCESS_MM,
    FIELD_ACCURACY_PCT,
    FIELD_ORDER,
    FIELD_RESOLUTION,
    GEOMETRY_ROUND_DECIMALS,
    IN_FOOTPRINT_FRACTION,
    KICAD_DEFAULT_DP_GAP_MM,
    KICAD_DEFAULT_DP_WIDTH_MM,
    KIND_BREAKOUT,
    KIND_ROUTED,
    LUMPED_FRACTION,
    MAX_ITEMS,
    METHOD_MS_FIELD,
    METHOD_MS_KJ,
    METHOD_OFFSET,
    METHOD_SL_FIELD,
    METHOD_STRIPLINE,
    MIN_COUPLED_MM,
    PairImpedance,
    breakout_length_mm,
    closed_form_zdiff,
    field_cross_section,
    field_zdiff,
    footprints_holding,
    group_boxes,
    pair_rows,
    pair_table,
    rise_length_mm,
    row_kind,
    stack_basis,
    stack_er,
    zdiff_of,
)

__all__ = [
    "ACCURACY",
    "C0",
    "COURTYARD_EXCESS_MM",
    "DEFAULT_MASK_ER",
    "EPS0",
    "ETA0",
    "FIELD_ACCURACY_PCT",
    "FIELD_ORDER",
    "FIELD_RESOLUTION",
    "FdLayer",
    "GEOMETRY_ROUND_DECIMALS",
    "INNER_EDGE_NORM",
    "IN_FOOTPRINT_FRACTION",
    "KICAD_DEFAULT_DP_GAP_MM",
    "KICAD_DEFAULT_DP_WIDTH_MM",
    "KIND_BREAKOUT",
    "KIND_ROUTED",
    "LUMPED_FRACTION",
    "LayerStack",
    "MAX_ITEMS",
    "METHOD_MS_FIELD",
    "METHOD_MS_KJ",
    "METHOD_OFFSET",
    "METHOD_SL_FIELD",
    "METHOD_STRIPLINE",
    "MIN_COUPLED_MM",
    "MS_INNER_EDGE_NORM",
    "MU0",
    "PairImpedance",
    "PairTraces",
    "box_pairs",
    "breakout_length_mm",
    "closed_form_zdiff",
    "cohn_coupled_stripline",
    "cohn_coupled_stripline_zero_t",
    "coupled_microstrip",
    "coupled_stripline",
    "ellipk",
    "ellipk_ratio",
    "fd_coupled",
    "field_cross_section",
    "field_zdiff",
    "footprints_holding",
    "group_boxes",
    "hammerstad_jensen_microstrip",
    "ipc2141_microstrip_z0",
    "ipc2141_microstrip_zdiff",
    "ipc2141_stripline_z0",
    "ipc2141_stripline_zdiff",
    "kirschning_jansen_coupled_microstrip",
    "layer_stack",
    "measure_pair",
    "measure_pairs",
    "offset_coupled_stripline",
    "pair_rows",
    "pair_table",
    "rise_length_mm",
    "row_kind",
    "stack_basis",
    "stack_er",
    "stripline_z0_zero_t",
    "weighted_median",
    "wheeler_stripline_z0",
    "zdiff_of",
]
