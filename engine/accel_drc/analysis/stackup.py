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


#: basis names from the weakest to the strongest a stack-up value can have
_WEAKEST_FIRST = ("default", "library", "declared")


def weakest(bases: Iterable[str]) -> str:
    """The weakest of ``bases`` (``default`` < ``library`` < ``declared``); ``declared`` when
    there are none (a value the stack-up states)."""
    got = set(bases)
    return next((b for b in _WEAKEST_FIRST if b in got), "declared")


class StackupBasis:
    """The basis of every stack-up value of one board (see the module doc for the rule).

    A value the project config declared (``accel-drc.yaml stackup:``, applied to the stack-up by
    :func:`with_declarations`) is ``declared`` (``library`` for a value taken from a declared
    material's datasheet) whatever the board says; the KiCad-default test looks at the layers as
    the board file states them.  Without a material library nothing is recognised as KiCad's
    default (a stand-in analysis has no ``rules/``): every value the stack-up states is
    ``declared``."""

    def __init__(self, stackup: Stackup | None, library: MaterialLibrary | None) -> None:
        self.stackup = stackup
        diels = list(stackup.dielectrics()) if stackup is not None else []
        flags = {d.name: _default_slices(_as_board(d), library) for d in diels}
        #: names of the dielectrics one slice of which is KiCad's default material
        self.default_dielectrics: frozenset[str] = frozenset(n for n, f in flags.items() if any(f))
        #: copper index k -> the dielectrics between copper layers k and k + 1
        self._between: dict[int, list[str]] = _dielectrics_between(stackup)
        #: the whole stack-up, as the board file states it, is KiCad's untouched auto one
        self.auto: bool = (
            bool(diels)
            and all(all(f) for f in flags.values())
            and _one_height_and_kicad_copper(stackup, diels)
        )
        #: layer name -> field -> basis, for the values the config declared
        self._declared: dict[str, dict[str, str]] = {
            sl.name: dict(sl.declared)
            for sl in (stackup.layers if stackup is not None else ())
            if sl.declared
        }

    def declared(self, name: str, key: str) -> str | None:
        """The basis of layer ``name``'s ``key`` when the config declared it, else None."""
        return self._declared.get(name, {}).get(key)

    def epsilon_r_between(self, copper_lo: int, copper_hi: int) -> str:
        """Basis of an εr computed from the dielectrics between copper layers ``copper_lo`` and
        ``copper_hi`` (a via stub's span); the whole board's when the span holds none."""
        names = [n for k in range(copper_lo, copper_hi) for n in self._between.get(k, ())]
        return self.epsilon_r(names or None)

    @property
    def _stated_thickness(self) -> str:
        """Basis of a height or copper thickness the board file states."""
        return "default" if self.auto else "declared"

    @property
    def thickness(self) -> str:
        """Basis of every dielectric height and copper thickness together: the weakest."""
        layers = self.stackup.layers if self.stackup is not None else ()
        return weakest(
            self.height(sl.name) if sl.is_dielectric else self.copper_thickness(sl.name)
            for sl in layers
            if sl.is_dielectric or sl.is_copper
        )

    def height(self, name: str) -> str:
        """Basis of dielectric ``name``'s thickness."""
        return self.declared(name, "thickness") or self._stated_thickness

    def heights(self, names: Iterable[str] | None = None) -> str:
        """Basis of a height summed over the dielectrics ``names`` (all when None)."""
        if names is None:
            return self.thickness
        return weakest(self.height(n) for n in names)

    def copper_thickness(self, name: str) -> str:
        """Basis of copper layer ``name``'s thickness (its stack-up name, ``F.Cu``)."""
        return self.declared(name, "thickness") or self._stated_thickness

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
        return {
            "epsilon_r": self.declared(name, "epsilon_r") or mat,
            "loss_tangent": self.declared(name, "loss_tangent") or mat,
            "height": self.height(name),
        }

    def epsilon_r(self, names: Iterable[str] | None = None) -> str:
        """Basis of an εr computed from the dielectrics ``names`` (every dielectric of the
        board when None): the weakest of theirs."""
        if names is None:
            names = [d.name for d in self.stackup.dielectrics()] if self.stackup else []
        names = list(names)
        if not names:
            return "default" if self.auto else "declared"
        return weakest(self.dielectric(n)["epsilon_r"] for n in names)


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


def declare_hint(
    weak: Iterable[str],
    dielectrics: Sequence[str] = (),
    copper: str | None = None,
    mask: str | None = None,
) -> str:
    """What to write in accel-drc.yaml to declare the stack-up inputs ``weak`` (``h``,
    ``epsilon_r``, ``loss_tangent``, ``t``, ``mask_er``) of a value computed over the
    dielectrics ``dielectrics``, copper layer ``copper`` and soldermask ``mask``: the keys
    :func:`with_declarations` reads, with the board's own layer names."""
    weak = set(weak)
    per: dict[str, list[str]] = {}
    keys = (("h", "thickness_mm: <mm>"), ("epsilon_r", "epsilon_r: <εr>"),
            ("loss_tangent", "loss_tangent: <Df>"))  # fmt: skip
    for name in dielectrics:
        for k, text in keys:
            if k in weak:
                per.setdefault(name, []).append(text)
    if mask is not None and "mask_er" in weak:
        per.setdefault(mask, []).append("epsilon_r: <εr>")
    parts = []
    if per:
        body = ", ".join(f"{n}: {{{', '.join(v)}}}" for n, v in per.items())
        parts.append(f"stackup: materials: {{{body}}}")
    if copper is not None and "t" in weak:
        parts.append(f"stackup: copper: {{{copper}: {{thickness_um: <µm>}}}}")
    if not parts:
        return ""
    return (
        "declare your fab's stack-up in accel-drc.yaml ("
        + "; ".join(parts)
        + ") or in KiCad (Board Setup > Physical Stackup)"
    )


def layer_dielectrics(analysis: Any, layer_name: str) -> list[str]:
    """Names of the dielectrics between copper layer ``layer_name`` and its references (the
    one walk, :func:`reference_walk`): what a trace on it rests on."""
    board = analysis.board
    index = next((i for i, c in enumerate(board.copper_layers) if c.name == layer_name), None)
    planes = getattr(analysis, "plane_layers", None) or {}
    walk = reference_walk(board.stackup, index, planes) if index is not None else None
    return [d.name for _, d in walk.dielectrics()] if walk is not None else []


def _as_board(layer: StackupLayer) -> StackupLayer:
    """``layer`` as the board file states it (before the config's declarations)."""
    return layer.board_layer if layer.board_layer is not None else layer


# ---------------------------------------------------------------------------------------------
# The config's declarations, applied once: every check reads the same values
# ---------------------------------------------------------------------------------------------

#: the soldermask layers a ``stackup: materials:`` entry may name beside the dielectrics
MASK_KEYS = ("epsilon_r", "loss_tangent", "thickness_um", "thickness_mm")


def declarable_layers(stackup: Stackup | None) -> dict[str, str]:
    """Name -> kind of the stack-up layers ``stackup: materials:`` may name: every dielectric
    and every soldermask (``F.Mask``, ``B.Mask``)."""
    if stackup is None:
        return {}
    return {
        sl.name: ("soldermask" if sl.kind == "soldermask" else "dielectric")
        for sl in stackup.layers
        if sl.is_dielectric or sl.kind == "soldermask"
    }


def with_declarations(board: Any, config: Any, library: MaterialLibrary | None) -> Any:
    """``board`` with the project config's stack-up declarations applied to its stack-up (the
    same board when the config declares none), so that impedance, loss, Df, Tg, via stubs, IR
    drop and the PDN model all read the one value (issue 28).

    ``stackup: materials: NAME:`` on a dielectric: ``material`` (its library εr and Df unless
    declared too: basis ``library``), ``epsilon_r``, ``loss_tangent`` (every slice), and
    ``thickness_mm`` (the whole dielectric; slices keep their proportions); on a soldermask:
    ``epsilon_r``, ``loss_tangent``, ``thickness_um``.  ``stackup: copper: LAYER|default:
    {thickness_um}``: a copper layer's thickness.  Each changed layer records what was declared
    (``StackupLayer.declared``) and keeps the board's own (``board_layer``), which decides what
    the board itself stated (KiCad's untouched default)."""
    from dataclasses import replace

    stackup = getattr(board, "stackup", None)
    st = getattr(config, "stackup", None)
    if stackup is None or st is None:
        return board
    mats = st.materials
    copper = getattr(st, "copper", None) or {}
    if not mats and not copper:
        return board
    user = {c.name: c.user_name for c in getattr(board, "copper_layers", ())}
    layers = []
    changed = False
    for sl in stackup.layers:
        new = sl
        if sl.name in mats and (sl.is_dielectric or sl.kind == "soldermask"):
            new = _declare_material(sl, mats[sl.name], library)
        elif sl.is_copper:
            decl = next(
                (copper[k] for k in (sl.name, user.get(sl.name), "default") if k in copper), None
            )
            if decl is not None and decl.thickness_um is not None:
                new = replace(
                    sl,
                    thickness_mm=decl.thickness_um / 1000.0,
                    declared=(("thickness", "declared"),),
                    board_layer=sl,
                )
        changed = changed or new is not sl
        layers.append(new)
    if not changed:
        return board
    return replace(board, stackup=replace(stackup, layers=tuple(layers)))


def _declare_material(sl: StackupLayer, over: Any, library: MaterialLibrary | None) -> StackupLayer:
    """Dielectric or soldermask ``sl`` with the values ``over`` (a ``MaterialOverride``) declares."""
    from dataclasses import replace

    declared: dict[str, str] = {}
    er, df = over.epsilon_r, over.loss_tangent
    if er is not None:
        declared["epsilon_r"] = "declared"
    if df is not None:
        declared["loss_tangent"] = "declared"
    mat = None
    if over.material is not None:
        declared["material"] = "declared"
        found = library.match(over.material) if library is not None else None
        mat = found.material if found is not None else None
        if mat is not None and er is None and mat.dk is not None:
            er, declared["epsilon_r"] = float(mat.dk), "library"
        if mat is not None and df is None and mat.df is not None:
            df, declared["loss_tangent"] = float(mat.df), "library"
    thick = over.thickness_mm
    if thick is None and over.thickness_um is not None:
        thick = over.thickness_um / 1000.0
    if thick is not None:
        declared["thickness"] = "declared"
    if not declared:
        return sl
    material = over.material if over.material is not None else None
    slices = list(sl.sublayers)
    if slices:
        total = sum(s.thickness_mm or 0.0 for s in slices)
        slices = [
            replace(
                s,
                material=material if material is not None else s.material,
                epsilon_r=er if er is not None else s.epsilon_r,
                loss_tangent=df if df is not None else s.loss_tangent,
                thickness_mm=(
                    s.thickness_mm
                    if thick is None
                    else (
                        thick * (s.thickness_mm or 0.0) / total
                        if total > 0
                        else thick / len(slices)
                    )
                ),
            )
            for s in slices
        ]
    return replace(
        sl,
        material=material if material is not None else sl.material,
        epsilon_r=er if er is not None else sl.epsilon_r,
        loss_tangent=df if df is not None else sl.loss_tangent,
        thickness_mm=thick if thick is not None else sl.thickness_mm,
        sublayers=tuple(slices),
        declared=tuple(declared.items()),
        board_layer=sl,
    )


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
