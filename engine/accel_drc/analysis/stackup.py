"""The one owner of two stack-up facts every check shares (issue 26, "one owner per fact").

**Where a value comes from.**  :class:`StackupBasis` gives the basis (``accel_drc.basis``) of
each stack-up value a check uses, with one rule for *KiCad's untouched auto stack-up*: the
stack-up KiCad writes when nobody edits Board Setup > Physical Stackup
(``BOARD_STACKUP::BuildDefaultStackupList``): every dielectric slice KiCad's default material
(``kicad_default`` of ``rules/materials.yaml``: FR4, εr 4.5, tan δ 0.02), all dielectrics of
one thickness, every copper layer 35 µm.  Then every height, copper thickness, εr and tan δ is
a ``default``.  Otherwise the thicknesses are ``declared`` (a designer who typed 18 µm copper
declared the stack-up), and a dielectric's εr and tan δ are ``default`` where any of its slices
still carries KiCad's default material values, else ``declared``.  A value computed from
several dielectrics (an εr weighted over a trace's reference dielectrics, a via stub's εr) rests
on every one of them: its basis is the weakest.  ``copper_weight``, ``impedance``, ``via_stub``,
``material_consistency``, ``insertion_loss`` (through the impedance rows), the PDN model and the
IR-drop solve (``ir_drop``, ``current_density``) ask here; ``laminate_df`` and the loss model read a dielectric's Df basis from
:func:`~accel_drc.analysis.materials.resolve_dielectric`, which applies the same per-slice test
(and the project's ``stackup: materials:`` on top).

**Which dielectrics carry a trace's field.**  :func:`reference_walk` is the one walk from a
copper layer to its reference planes, shared by the impedance cross-section, ``laminate_df``
and the loss model: on each side, every dielectric up to the first copper layer that carries a
plane (``Analysis.plane_layers``), crossing the non-plane copper between; when no plane lies on
a side, the dielectrics up to the adjacent copper layer, which is then *assumed* to be the
reference (``known_plane`` False).  The outward side of an outer layer has no reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Stackup, StackupLayer
    from .materials import MaterialLibrary

#: KiCad's default copper thickness (``BOARD_STACKUP::BuildDefaultStackupList``: 35 µm, 1 oz)
KICAD_DEFAULT_COPPER_MM = 0.035
#: KiCad's default board thickness (``BOARD_DESIGN_SETTINGS``: 1.6 mm)
KICAD_DEFAULT_BOARD_MM = 1.6
#: thicknesses equal within this are "equal" (KiCad writes them to the nanometre)
_EQUAL_MM = 1e-4


class StackupBasis:
    """The basis of every stack-up value of one board (see the module doc for the rule).

    Without a material library nothing is recognised as KiCad's default (a stand-in analysis
    has no ``rules/``): every value the stack-up states is ``declared``."""

    def __init__(self, stackup: Stackup | None, library: MaterialLibrary | None) -> None:
        self.stackup = stackup
        diels = list(stackup.dielectrics()) if stackup is not None else []
        flags = {d.name: _default_slices(d, library) for d in diels}
        #: names of the dielectrics one slice of which is KiCad's default material
        self.default_dielectrics: frozenset[str] = frozenset(n for n, f in flags.items() if any(f))
        #: copper index k -> the dielectrics between copper layers k and k + 1
        self._between: dict[int, list[str]] = _dielectrics_between(stackup)
        #: the whole stack-up is KiCad's untouched auto-generated one
        self.auto: bool = (
            bool(diels)
            and all(all(f) for f in flags.values())
            and _one_height_and_kicad_copper(stackup, diels)
        )

    def epsilon_r_between(self, copper_lo: int, copper_hi: int) -> str:
        """Basis of an εr computed from the dielectrics between copper layers ``copper_lo`` and
        ``copper_hi`` (a via stub's span); the whole board's when the span holds none."""
        names = [n for k in range(copper_lo, copper_hi) for n in self._between.get(k, ())]
        return self.epsilon_r(names or None)

    @property
    def thickness(self) -> str:
        """Basis of every dielectric height and copper thickness the stack-up states."""
        return "default" if self.auto else "declared"

    def board_thickness(self, thickness_mm: float | None) -> str | None:
        """Basis of the board's finished thickness (``Board.board_thickness_mm``): None when
        the board states none; ``default`` when it is KiCad's 1.6 mm with KiCad's untouched
        auto stack-up (or no stack-up at all: nobody set it); else ``declared``."""
        if thickness_mm is None or not thickness_mm > 0:
            return None
        untouched = self.stackup is None or self.auto
        if untouched and abs(thickness_mm - KICAD_DEFAULT_BOARD_MM) <= _EQUAL_MM:
            return "default"
        return "declared"

    def dielectric(self, name: str) -> dict[str, str]:
        """Basis of one dielectric's ``epsilon_r``, ``loss_tangent`` and ``height``."""
        mat = "default" if self.auto or name in self.default_dielectrics else "declared"
        return {"epsilon_r": mat, "loss_tangent": mat, "height": self.thickness}

    def epsilon_r(self, names: Iterable[str] | None = None) -> str:
        """Basis of an εr computed from the dielectrics ``names`` (every dielectric of the
        board when None): ``default`` as soon as one of them is KiCad's."""
        if self.auto:
            return "default"
        if names is None:
            return "default" if self.default_dielectrics else "declared"
        return "default" if any(n in self.default_dielectrics for n in names) else "declared"


def stackup_basis(analysis: Any) -> StackupBasis:
    """The :class:`StackupBasis` of ``analysis.board``: ``Analysis.stackup_basis`` (built once
    per run); a stand-in analysis gets a fresh one, without a library if it has no
    ``materials``."""
    got = getattr(analysis, "stackup_basis", None)
    if isinstance(got, StackupBasis):
        return got
    return StackupBasis(getattr(analysis.board, "stackup", None), _library(analysis))


def _library(analysis: Any) -> MaterialLibrary | None:
    """The analysis's material library, None when there is none (a stand-in analysis, or no
    ``rules/`` library behind it)."""
    try:
        return getattr(analysis, "materials", None)
    except (LookupError, OSError, ValueError):
        return None


def _dielectrics_between(stackup: Stackup | None) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    last: int | None = None
    for sl in stackup.layers if stackup is not None else ():
        if sl.is_copper and sl.copper_index is not None:
            last = sl.copper_index
        elif sl.is_dielectric and last is not None:
            out.setdefault(last, []).append(sl.name)
    return out


def _default_slices(d: StackupLayer, library: MaterialLibrary | None) -> list[bool]:
    """Per slice of dielectric ``d``: KiCad's default material (FR4, εr 4.5, tan δ 0.02)."""
    slices = list(d.sublayers) or [d]
    if library is None:
        return [False] * len(slices)
    return [library.is_kicad_default(s.material, s.epsilon_r, s.loss_tangent) for s in slices]


def _one_height_and_kicad_copper(stackup: Any, diels: Sequence[StackupLayer]) -> bool:
    """All dielectrics of one thickness and 35 µm on every copper layer, as KiCad generates."""
    heights = [d.thickness_mm for d in diels]
    if any(h is None for h in heights) or max(heights) - min(heights) > _EQUAL_MM:  # type: ignore[type-var,operator]
        return False
    cu = [c.thickness_mm for c in stackup.copper()]
    return all(t is not None and abs(t - KICAD_DEFAULT_COPPER_MM) < 1e-6 for t in cu)


# ---------------------------------------------------------------------------------------------
# The walk from a copper layer to its reference planes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceSide:
    """One side of a copper layer: what lies between it and its reference."""

    side: str  # "above" | "below"
    dielectrics: tuple[StackupLayer, ...]
    copper: tuple[StackupLayer, ...]  # non-plane copper crossed on the way to a known plane
    reference: StackupLayer | None  # None: the board's face lies that way
    known_plane: bool  # False: no plane that way, the adjacent copper is assumed the reference


@dataclass(frozen=True)
class ReferenceWalk:
    """Both sides of a copper layer (stack-up position ``position``)."""

    position: int
    above: ReferenceSide
    below: ReferenceSide

    @property
    def sides(self) -> tuple[ReferenceSide, ReferenceSide]:
        return (self.above, self.below)

    @property
    def geometry(self) -> str:
        """``stripline`` with a reference on both sides, else ``microstrip``."""
        both = self.above.reference is not None and self.below.reference is not None
        return "stripline" if both else "microstrip"

    def dielectrics(self) -> list[tuple[str, StackupLayer]]:
        """[(side, dielectric)] of both sides, above first."""
        return [(s.side, d) for s in self.sides for d in s.dielectrics]


def reference_walk(
    stackup: Stackup | None, copper_index: int, planes: Iterable[int] | Mapping[int, Any]
) -> ReferenceWalk | None:
    """The walk from copper layer ``copper_index`` to its reference on each side (module doc);
    None when the stack-up does not hold that layer."""
    if stackup is None:
        return None
    layers = stackup.layers
    pos = next(
        (i for i, sl in enumerate(layers) if sl.is_copper and sl.copper_index == copper_index),
        None,
    )
    if pos is None:
        return None
    plane_set = frozenset(int(k) for k in planes)
    above = _walk_side(layers, pos, -1, plane_set)
    below = _walk_side(layers, pos, 1, plane_set)
    return ReferenceWalk(pos, above, below)


def _walk_side(
    layers: Sequence[StackupLayer], pos: int, step: int, planes: frozenset[int]
) -> ReferenceSide:
    side = "above" if step < 0 else "below"
    diel: list[StackupLayer] = []
    copper: list[StackupLayer] = []
    first_copper = None
    first_diel: list[StackupLayer] = []
    i = pos + step
    while 0 <= i < len(layers):
        sl = layers[i]
        if sl.is_copper:
            if sl.copper_index in planes:
                return ReferenceSide(side, tuple(diel), tuple(copper), sl, True)
            if first_copper is None:
                first_copper, first_diel = sl, list(diel)
            copper.append(sl)
        elif sl.is_dielectric:
            diel.append(sl)
        i += step
    return ReferenceSide(side, tuple(first_diel), (), first_copper, False)
