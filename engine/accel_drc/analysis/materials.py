"""One board's dielectrics resolved against the laminate library and the project config.

The library itself (``rules/materials.yaml``: names, aliases, Tg, εr, Df) is what is known in
general and lives on the rule-data floor, :mod:`accel_drc.material_library`; its names are
re-exported here, where they used to live.  This module answers for one dielectric of one
board: what it is (:func:`resolve_dielectric`), and which library materials meet a limit
(:func:`materials_meeting`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..material_library import (  # noqa: F401  (re-exported: the library used to live here)
    Material,
    MaterialLibrary,
    MaterialMatch,
    library_from_data,
    normalise,
    tg_hint,
    tokens,
)

if TYPE_CHECKING:
    from ..config import MaterialOverride


# ---------------------------------------------------------------------------------------------
# One dielectric of a board, resolved against the library and the project config
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DielectricInfo:
    """What we know of one stack-up dielectric, and where each number came from.

    Df: the config (``stackup: materials:``), else the stack-up's loss tangent (0 means KiCad
    was never told, so it is not a value), else the library value of the named material.  Tg:
    the config, else a Tg written in a generic FR-4's name ("FR4 Tg170"), else the library (a
    KiCad stack-up has no Tg field).  Sublayers count: the worst
    (highest Df, lowest Tg) slice decides.
    """

    name: str
    kind: str
    material: str | None
    matched: str | None  # library material id
    matched_name: str | None
    df: float | None
    df_from: str | None  # config | stack-up | library
    dk: float | None
    tg_c: float | None
    tg_from: str | None  # config | library | library (assumed) | material name
    tg_note: str = ""
    thickness_mm: float | None = None
    #: basis (accel_drc.basis) of the Df and the Tg above: declared / library / default
    df_basis: str | None = None
    tg_basis: str | None = None
    #: KiCad's untouched default dielectric (FR4, εr 4.5, tan δ 0.02): nothing about it was declared
    kicad_default: bool = False
    #: the Df range the material's name commits to (every grade of a generic family such as
    #: FR-4, rules/materials.yaml), None when the name matches no library material
    df_range: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "material": self.material,
            "library_material": self.matched,
            "loss_tangent": self.df,
            "df_from": self.df_from,
            "epsilon_r": self.dk,
            "tg_c": self.tg_c,
            "tg_from": self.tg_from,
            "df_basis": self.df_basis,
            "tg_basis": self.tg_basis,
            "kicad_default": self.kicad_default,
            "df_range": list(self.df_range) if self.df_range is not None else None,
        }


def resolve_dielectric(
    layer: Any, library: MaterialLibrary, overrides: Mapping[str, MaterialOverride] | None
) -> DielectricInfo:
    """Resolve a :class:`~accel_drc.model.StackupLayer` dielectric; ``overrides`` is the
    config's ``stackup: materials:`` (dielectric name -> what the designer declares)."""
    from ..config import MaterialOverride

    over = (overrides or {}).get(layer.name) or MaterialOverride()
    # the layer as the board states it: the declarations are ``over``, applied here as in
    # the stack-up owner (analysis.stackup.with_declarations), which gives the same values
    board_layer = getattr(layer, "board_layer", None) or layer
    slices = list(board_layer.sublayers) or [board_layer]
    best_df: tuple[float, str, str] | None = None
    worst_tg: tuple[float, str, str, str] | None = None
    any_default = False
    unknown_df = unknown_tg = False
    materials = []
    matched = matched_name = None
    ranges: list[tuple[float, float] | None] = []
    dk = None
    for sl in slices:
        typed = over.material if over.material is not None else sl.material
        materials.append(typed)
        # KiCad's untouched default slice: its name and numbers are KiCad's, not the designer's
        default = over.material is None and library.is_kicad_default(
            sl.material, sl.epsilon_r, sl.loss_tangent
        )
        any_default = any_default or default
        found = library.match(typed)
        mat = found.material if found is not None else None
        if mat is not None and matched is None:
            matched, matched_name = mat.id, mat.name
        ranges.append(library.df_range(mat) if mat is not None else None)
        # Df
        if over.loss_tangent is not None:
            df, src, basis = float(over.loss_tangent), "config", "declared"
        elif sl.loss_tangent is not None and sl.loss_tangent > 0 and over.material is None:
            df, src = float(sl.loss_tangent), "stack-up"
            basis = "default" if default else "declared"
        elif mat is not None and mat.df is not None:
            df, src, basis = float(mat.df), "library", "default" if default else "library"
        else:
            df, src, basis = None, None, None  # type: ignore[assignment]
        if df is None:
            unknown_df = True
        elif best_df is None or df > best_df[0]:
            best_df = (df, src, basis)
        if dk is None:
            dk = over.epsilon_r
            if dk is None and over.material is not None and mat is not None:
                dk = mat.dk  # a declared material: its datasheet εr, as its Df
            if dk is None:
                dk = sl.epsilon_r if sl.epsilon_r else (mat.dk if mat else None)
        # Tg
        if over.tg_c is not None:
            tg, tsrc, note, tbasis = float(over.tg_c), "config", "", "declared"
        elif mat is not None and mat.tg_c is not None:
            tg = float(mat.tg_c)
            tsrc = "library (assumed)" if mat.tg_assumed else "library"
            # a grade nobody named (generic FR-4's lowest) is the library's default, not a fact
            tbasis = "default" if mat.tg_assumed or default else "library"
            if found is not None and found.tg_from_name is not None:
                tsrc, tbasis = "material name", "declared"
            note = mat.note if mat.tg_assumed else ""
        else:
            tg, tsrc, note, tbasis = None, None, "", None  # type: ignore[assignment]
        if tg is None:
            unknown_tg = True
        elif worst_tg is None or tg < worst_tg[0]:
            worst_tg = (tg, tsrc, note, tbasis)
    mat_text = " + ".join(dict.fromkeys(str(m) for m in materials if m)) or None
    return DielectricInfo(
        name=layer.name,
        kind=layer.kind,
        material=mat_text,
        matched=matched,
        matched_name=matched_name,
        df=None if unknown_df or best_df is None else best_df[0],
        df_from=None if unknown_df or best_df is None else best_df[1],
        dk=dk,
        tg_c=None if unknown_tg or worst_tg is None else worst_tg[0],
        tg_from=None if unknown_tg or worst_tg is None else worst_tg[1],
        tg_note="" if worst_tg is None else worst_tg[2],
        thickness_mm=layer.thickness_mm,
        df_basis=None if unknown_df or best_df is None else best_df[2],
        tg_basis=None if unknown_tg or worst_tg is None else worst_tg[3],
        kicad_default=any_default,
        df_range=_worst_range(ranges),
    )


def _worst_range(ranges: Sequence[tuple[float, float] | None]) -> tuple[float, float] | None:
    """The Df range of a dielectric whose worst (highest-Df) slice decides: from the highest
    low end to the highest high end; None when a slice's material is unknown."""
    if not ranges or any(r is None for r in ranges):
        return None
    return (max(r[0] for r in ranges), max(r[1] for r in ranges))  # type: ignore[index]


# ---------------------------------------------------------------------------------------------
# What a remedy may propose (KiCad's auto-generated stack-up: ``analysis/stackup.py``)
# ---------------------------------------------------------------------------------------------


def materials_meeting(
    library: MaterialLibrary,
    *,
    max_df: float | None = None,
    min_tg: float | None = None,
    limit: int = 8,
) -> list[str]:
    """Library laminates that meet a Df ceiling and/or a Tg floor, best first, as a remedy
    names them ("Megtron 7 (Df 0.002 @ 12 GHz)").  Only confirmed numbers count: a material
    whose Df (or Tg) the library marks unconfirmed or assumed is never proposed on it."""
    rows: list[tuple[float, str]] = []
    for m in library.materials.values():
        unconf = set(m.unconfirmed_fields) or ({"df", "dk", "tg_c"} if m.unconfirmed else set())
        bits = []
        if max_df is not None:
            if m.df is None or m.df > max_df or "df" in unconf:
                continue
            f = f" @ {m.freq_ghz:g} GHz" if m.freq_ghz else ""
            bits.append(f"Df {m.df:g}{f}")
        if min_tg is not None:
            if m.tg_c is None or m.tg_c < min_tg or m.tg_assumed or "tg_c" in unconf:
                continue
            bits.append(f"Tg {m.tg_c:g} °C" + (f" {m.tg_method}" if m.tg_method else ""))
        key = m.df if max_df is not None and m.df is not None else -(m.tg_c or 0.0)
        rows.append((float(key), f"{m.name} ({', '.join(bits)})"))
    rows.sort()
    names = [r for _, r in rows]
    return names[:limit] + ([f"… {len(names) - limit} more"] if len(names) > limit else [])
