"""The laminate library (``rules/materials.yaml``): what a dielectric named in a stack-up really is.

What is known in general, so it sits on the rule-data floor with the pack loader that reads it
(``docs/architecture.md``, "Floors"); what a board's dielectric resolves to is a fact of the
board, in :mod:`accel_drc.analysis.materials`.

People type the same laminate many ways ("Megtron 6", "MEGTRON6", "R-5775(N)", "Panasonic
Megtron-6 1035", "Megtron 7 R-5785(N)", "RO4350B LoPro"), so a lookup tries, in order:

1. the whole text, normalised (:func:`normalise`), as an alias; then without a maker prefix
   ("Panasonic") and without trailing glass styles ("1035", "2x1080");
2. the longest alias *contained* in the text on word boundaries (:func:`tokens`: "IT968" is the
   words ``it 968``, so the alias "IT-968" is found in "ITEQ IT968 SE 1078" but "FR4" is not found
   in "FR408HR").  When the aliases found name different materials: a grade beats its family
   (``megtron6_k`` beats ``megtron6`` in "Megtron 6 R-5775K": ids ``<family>_<grade>``); a class
   word without digits ("epoxy", "PTFE") yields to a named laminate ("RO3003 PTFE"); anything
   else is ambiguous and stays unknown -- we never guess between two families;
3. glass styles alone ("7628", "2116") name no resin: they are what people type for an FR-4
   class prepreg, so they resolve to generic FR-4.

Generic FR-4 with an explicit Tg in the name ("FR4 Tg170", "FR-4 TG 135", "High Tg FR4 Tg180")
gets that Tg (the designer named the grade); without one, the library's assumed lowest grade.
An unknown name stays unknown (``None``): the checks report it as cannot_verify.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

_NON_ALNUM = re.compile(r"[^0-9a-z+]+")
_TOKEN = re.compile(r"[a-z]+|[0-9]+|\+")
#: longest alias, in words, looked for inside a longer text
_MAX_ALIAS_TOKENS = 8
#: words that say what a slice is, not what it is made of ("PR 2116", "2116 prepreg")
_PLY_WORDS = frozenset({"pr", "prepreg", "core"})
#: a Tg named in the text is believed only in this range (°C); outside it is a typo
_TG_HINT_RANGE = (100.0, 300.0)


def normalise(name: str) -> str:
    """Lower case, with spaces, dashes, dots, underscores, slashes and parentheses removed.

    ``+`` is kept because it is part of some names (TU-933+)."""
    return _NON_ALNUM.sub("", name.lower())


def tokens(name: str) -> list[str]:
    """The words of ``name``: runs of letters, runs of digits and ``+``, lower case.

    Letters and digits are split ("R-5775K" -> ``r 5775 k``, "Tg170" -> ``tg 170``) so that an
    alias is found inside a longer text only on word boundaries: joined, any run of these words
    is a :func:`normalise`d string, comparable with the alias index.
    """
    return _TOKEN.findall(name.lower())


def tg_hint(name: str) -> float | None:
    """The Tg written in a material name ("FR4 Tg170", "FR-4 TG 135°C", "Tg=180"), if any.

    The first number after the word "Tg"; ``None`` when there is none or it is not a plausible
    glass-transition temperature.
    """
    words = tokens(name)
    for i, w in enumerate(words[:-1]):
        if w == "tg" and words[i + 1].isdigit():
            tg = float(words[i + 1])
            if _TG_HINT_RANGE[0] <= tg <= _TG_HINT_RANGE[1]:
                return tg
            return None
    return None


@dataclass(frozen=True)
class Material:
    """One laminate family as its datasheet gives it (Dk/Df at ``freq_ghz``)."""

    id: str
    name: str
    aliases: tuple[str, ...]
    dk: float | None
    df: float | None
    freq_ghz: float | None
    tg_c: float | None
    tg_method: str | None
    td_c: float | None
    loss_class: str
    source: str
    ipc4101: tuple[str, ...] = ()
    df_range: tuple[float, float] | None = None
    dk_range: tuple[float, float] | None = None
    unconfirmed: bool = False
    unconfirmed_fields: tuple[str, ...] = ()
    tg_assumed: bool = False
    tg_not_applicable: bool = False
    note: str = ""
    maker: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "dk": self.dk,
            "df": self.df,
            "freq_ghz": self.freq_ghz,
            "tg_c": self.tg_c,
            "tg_method": self.tg_method,
            "td_c": self.td_c,
            "loss_class": self.loss_class,
            "source": self.source,
            "unconfirmed": self.unconfirmed,
            "unconfirmed_fields": list(self.unconfirmed_fields),
        }


@dataclass(frozen=True)
class MaterialMatch:
    """How a stack-up material string resolved."""

    material: Material
    typed: str
    how: str  # alias | maker+alias | alias+glass | maker+alias+glass | contains | glass-style
    #: the alias (normalised) that decided, when it was found inside a longer text
    alias: str = ""
    #: the Tg taken from the name ("FR4 Tg170"), for generic FR-4 only
    tg_from_name: float | None = None


@dataclass(frozen=True)
class MaterialLibrary:
    materials: Mapping[str, Material]
    glass_styles: tuple[str, ...] = ()
    maker_prefixes: tuple[str, ...] = ()
    df_tolerance_rel: float = 0.5
    dk_tolerance_rel: float = 0.15
    kicad_default: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""
    not_a_material: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        index: dict[str, str] = {}
        for mid, mat in self.materials.items():
            for alias in (mid, mat.name, *mat.aliases):
                index.setdefault(normalise(alias), mid)
        object.__setattr__(self, "_index", index)

    def is_glass_style(self, word: str) -> bool:
        """A glass style, alone, with a ply count or a prepreg prefix ("7628", "2x1080",
        "1x2116", "PR2116")."""
        w = re.sub(r"^(?:pr|prepreg)(?=\d)", "", normalise(word))
        return re.sub(r"^\d+x(?=\d)", "", w) in self.glass_styles

    def get(self, material_id: str) -> Material | None:
        return self.materials.get(material_id)

    def match(self, typed: str | None) -> MaterialMatch | None:
        """Resolve a material string as typed in a stack-up; None if nothing (or two
        different families) matches.  The order of attempts is in the module docstring."""
        if not typed or not typed.strip() or normalise(typed) in self.not_a_material:
            return None
        found = self._match_name(typed)
        if found is None:
            return None
        return self._with_tg_hint(found)

    def _match_name(self, typed: str) -> MaterialMatch | None:
        index: dict[str, str] = self._index  # type: ignore[attr-defined]
        words = [w for w in re.split(r"[\s,/]+", typed.strip()) if w]
        candidates: list[tuple[list[str], str]] = [(words, "alias")]
        if words and normalise(words[0]) in self.maker_prefixes and len(words) > 1:
            candidates.append((words[1:], "maker+alias"))
        for ws, how in list(candidates):
            key = normalise(" ".join(ws))
            if key in index:
                return MaterialMatch(self.materials[index[key]], typed, how)
        # strip trailing glass styles ("Megtron 6 1035", "IS400 2116", "FR4 7628")
        for ws, how in candidates:
            trimmed = list(ws)
            stripped = False
            while len(trimmed) > 1 and self.is_glass_style(trimmed[-1]):
                trimmed.pop()
                stripped = True
            if stripped:
                key = normalise(" ".join(trimmed))
                if key in index:
                    return MaterialMatch(self.materials[index[key]], typed, how + "+glass")
        # a glass style alone (or only glass styles): an FR-4-class prepreg
        styles = [w for w in words if normalise(w) not in _PLY_WORDS]
        if styles and all(self.is_glass_style(w) for w in styles) and "fr4" in self.materials:
            return MaterialMatch(self.materials["fr4"], typed, "glass-style")
        return self._contained(typed)

    def _contained(self, typed: str) -> MaterialMatch | None:
        """The alias found inside the text ("Megtron 7 R-5785(N)", "RO4350B LoPro")."""
        found = self._contained_ids(typed)
        if len(found) != 1:
            return None  # nothing, or two families named: unknown, never a guess
        ((mid, alias),) = found.items()
        return MaterialMatch(self.materials[mid], typed, "contains", alias=alias)

    def ambiguous(self, typed: str | None) -> list[str]:
        """The laminates a text names when it names more than one ("Megtron 6 R-5785(N)" names
        Megtron 6 and Megtron 7): why :meth:`match` said None.  Empty otherwise."""
        if not typed or self.match(typed) is not None:
            return []
        found = self._contained_ids(typed)
        return sorted(self.materials[m].name for m in found) if len(found) > 1 else []

    def _contained_ids(self, typed: str) -> dict[str, str]:
        """Material id -> alias for the aliases found in the text, after the tie rules."""
        index: dict[str, str] = self._index  # type: ignore[attr-defined]
        words = tokens(typed)
        spans: list[tuple[int, int, str]] = []
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + _MAX_ALIAS_TOKENS) + 1):
                key = "".join(words[i:j])
                if key in index:
                    spans.append((i, j, key))
        # a span inside a longer one is part of that name ("TU-872" in "TU-872 SLK")
        spans = [
            s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)
        ]
        if not spans:
            return {}
        by_id: dict[str, str] = {}
        for _, _, key in sorted(spans, key=lambda s: -len(s[2])):
            by_id.setdefault(index[key], key)
        ids = set(by_id)
        # a class word without digits ("epoxy", "PTFE") yields to a named laminate
        named = {
            m for m in ids if self.materials[m].maker != "generic" or re.search(r"\d", by_id[m])
        }
        if named:
            ids = named
        # a grade beats its family: megtron6_k over megtron6, fr4_tg170 over fr4
        ids = {m for m in ids if not any(o.startswith(m + "_") for o in ids)}
        return {m: by_id[m] for m in sorted(ids)}

    def _with_tg_hint(self, found: MaterialMatch) -> MaterialMatch:
        """Generic FR-4 with a Tg in its name gets that Tg (on the nearest grade's Dk/Df)."""
        if not _is_generic_fr4(found.material):
            return found
        tg = tg_hint(found.typed)
        if tg is None:
            return found
        grades = [m for m in self.materials.values() if _is_generic_fr4(m) and m.tg_c is not None]
        below = [m for m in grades if float(m.tg_c) <= tg]  # type: ignore[arg-type]
        base = max(below, key=lambda m: float(m.tg_c)) if below else found.material  # type: ignore[arg-type]
        if base.tg_c == tg and not base.tg_assumed:
            return replace(found, material=base, tg_from_name=tg)
        mat = replace(
            base,
            name=f"generic FR-4, Tg {tg:g} (named)",
            tg_c=tg,
            tg_method=f"from the name {found.typed!r}",
            tg_assumed=False,
            note=f"Tg {tg:g} °C as named in the stack-up; Dk/Df of {base.name}",
        )
        return replace(found, material=mat, how=found.how + "+tg", tg_from_name=tg)

    def df_range(self, material: Material) -> tuple[float, float] | None:
        """The Df range a material name commits to: generic FR-4 without a grade (``fr4``:
        "FR4", a glass style such as "2116") spans every generic FR-4 grade of the library;
        any other material its own ``df_range`` (its nominal Df when it gives none)."""
        if material.id == "fr4" and _is_generic_fr4(material):
            spans = [
                m.df_range or (m.df, m.df)
                for m in self.materials.values()
                if _is_generic_fr4(m) and (m.df_range or m.df is not None)
            ]
            if spans:
                return (min(float(a) for a, _ in spans), max(float(b) for _, b in spans))  # type: ignore[arg-type]
        if material.df_range is not None:
            return (float(material.df_range[0]), float(material.df_range[1]))
        return None if material.df is None else (float(material.df), float(material.df))

    def lookup(self, typed: str | None) -> Material | None:
        m = self.match(typed)
        return m.material if m else None

    def contradiction(
        self,
        material: Material,
        epsilon_r: float | None,
        loss_tangent: float | None,
        df_tol: float | None = None,
        dk_tol: float | None = None,
    ) -> list[str]:
        """Reasons the declared Dk/Df contradict ``material`` (empty when consistent).

        The material's range (or its nominal value) is widened by the relative tolerance: Df and
        Dk move with glass style, resin content and test frequency, so only a clear miss counts.
        """
        df_tol = self.df_tolerance_rel if df_tol is None else df_tol
        dk_tol = self.dk_tolerance_rel if dk_tol is None else dk_tol
        out = []
        if loss_tangent is not None and loss_tangent > 0:
            lo_hi = material.df_range or (
                (material.df, material.df) if material.df is not None else None
            )
            if lo_hi is not None:
                lo, hi = lo_hi[0] * (1 - df_tol), lo_hi[1] * (1 + df_tol)
                if not lo <= loss_tangent <= hi:
                    out.append(
                        f"loss tangent {loss_tangent:g} is outside {material.name}'s "
                        f"{_range_text(lo_hi)} (±{df_tol:.0%})"
                    )
        if epsilon_r is not None and epsilon_r > 0:
            lo_hi = material.dk_range or (
                (material.dk, material.dk) if material.dk is not None else None
            )
            if lo_hi is not None:
                lo, hi = lo_hi[0] * (1 - dk_tol), lo_hi[1] * (1 + dk_tol)
                if not lo <= epsilon_r <= hi:
                    out.append(
                        f"εr {epsilon_r:g} is outside {material.name}'s "
                        f"{_range_text(lo_hi)} (±{dk_tol:.0%})"
                    )
        return out

    def is_kicad_default(
        self, material: str | None, epsilon_r: float | None, loss_tangent: float | None
    ) -> bool:
        """KiCad's untouched default dielectric: "FR4", εr 4.5, tan δ 0.02."""
        d = self.kicad_default
        if not d or material is None:
            return False
        return (
            normalise(material) == normalise(str(d.get("material", "")))
            and epsilon_r is not None
            and loss_tangent is not None
            and abs(epsilon_r - float(d["epsilon_r"])) < 1e-9
            and abs(loss_tangent - float(d["loss_tangent"])) < 1e-12
        )


def _is_generic_fr4(material: Material) -> bool:
    """Library ids ``fr4`` and ``fr4_<grade>`` with maker ``generic`` (materials.yaml)."""
    return material.maker == "generic" and (material.id == "fr4" or material.id.startswith("fr4_"))


def _range_text(lo_hi: Sequence[float]) -> str:
    lo, hi = lo_hi
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def library_from_data(data: Mapping[str, Any]) -> MaterialLibrary:
    """Build the library from validated ``materials.yaml`` data."""
    mats = {}
    for mid, m in data["materials"].items():
        mats[mid] = Material(
            id=mid,
            name=m["name"],
            aliases=tuple(m.get("aliases", ())),
            dk=m.get("dk"),
            df=m.get("df"),
            freq_ghz=m.get("freq_ghz"),
            tg_c=m.get("tg_c"),
            tg_method=m.get("tg_method"),
            td_c=m.get("td_c"),
            loss_class=m["loss_class"],
            source=m["source"],
            ipc4101=tuple(m.get("ipc4101", ())),
            df_range=tuple(m["df_range"]) if m.get("df_range") else None,  # type: ignore[arg-type]
            dk_range=tuple(m["dk_range"]) if m.get("dk_range") else None,  # type: ignore[arg-type]
            unconfirmed=bool(m.get("unconfirmed", False)),
            unconfirmed_fields=tuple(m.get("unconfirmed_fields", ())),
            tg_assumed=bool(m.get("tg_assumed", False)),
            tg_not_applicable=bool(m.get("tg_not_applicable", False)),
            note=m.get("note", ""),
            maker=m.get("maker", ""),
        )
    tol = data.get("tolerance", {})
    return MaterialLibrary(
        materials=mats,
        glass_styles=tuple(normalise(g) for g in data.get("glass_styles", ())),
        maker_prefixes=tuple(normalise(p) for p in data.get("maker_prefixes", ())),
        df_tolerance_rel=float(tol.get("df_rel", 0.5)),
        dk_tolerance_rel=float(tol.get("dk_rel", 0.15)),
        kicad_default=data.get("kicad_default", {}),
        version=str(data.get("version", "")),
        not_a_material=tuple(normalise(n) for n in data.get("not_a_material", ())),
    )
