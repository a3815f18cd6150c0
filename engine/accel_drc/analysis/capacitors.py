"""Decoupling capacitors: value and package as people write them, and their R-L-C model.

Footprint values are free text: ``100n``, ``0.1uF``, ``4u7``, ``10 µF``, ``1µF/6.3V``,
``100nF 16V X7R``, ``C_100n_16V_X7R_0402``, ``DNP``.  A value we cannot read is ``None`` (the
capacitor is then left out of the network and listed as such), never a guess: a bare ``100``
could be pF or µF depending on who wrote it.

The model numbers (mounted ESL, ESR at resonance) come from ``rules/capacitors.yaml`` with their
sources; the project config may override them per package or per reference designator.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..config import CapacitorConfig

CAPACITORS_YAML = Path(__file__).resolve().parent.parent / "rules" / "capacitors.yaml"

_DNP = re.compile(r"^\s*(dnp|dnf|dni|nc|n/?c|np|nf|nostuff|no[ _-]?fit|~|-)\s*$", re.I)
_DNP_WORD = re.compile(
    r"(^|[^a-z])(dnp|dnf|dni|do[ _-]?not[ _-]?(place|populate|fit))([^a-z]|$)", re.I
)
_MULT = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0}
#: one word: number, multiplier or RKM decimal mark (``4u7``), optional F; milli needs the F
_WORD = re.compile(r"(\d+(?:[.,]\d+)?)(?:([pnu])(\d*)f?|(m)(\d*)f|f)", re.I)


def not_fitted(text: str | None) -> bool:
    """A value that says the part is not fitted (DNP, DNF, NC, …)."""
    s = "" if text is None else str(text).strip()
    return bool(s) and bool(_DNP.match(s) or _DNP_WORD.search(s))


def parse_capacitance(text: str | None) -> float | None:
    """Farads from a footprint value as people write it; ``None`` if unreadable or not fitted."""
    if text is None:
        return None
    s = str(text).strip()
    if not s or _DNP.match(s) or _DNP_WORD.search(s):
        return None
    s = s.replace("\u00b5", "u").replace("\u03bc", "u")
    s = re.sub(r"(?<=\d),(?=\d)", ".", s)  # decimal comma: "1,5uF"
    # "10 µF", "1 uF": glue the unit to its number
    s = re.sub(r"(?<=\d)\s+(?=(?:[pnu]f?|mf|f)(?![a-z]))", "", s, flags=re.I)
    # words as people separate them: "C_100n_0402", "1uF/6.3V", "100nF,16V X7R"
    for word in re.split(r"[\s_/,;:()\[\]]+", s):
        m = _WORD.fullmatch(word)
        if not m:
            continue
        num, mult, frac = m.group(1), m.group(2) or m.group(4) or "", m.group(3) or m.group(5)
        num = num.replace(",", ".")
        if frac:
            if "." in num:
                continue  # "4.7u7" is not a value
            num = f"{num}.{frac}"
        value = float(num) * _MULT[mult.lower()]
        if value > 0 and math.isfinite(value):
            return value
    return None


_METRIC_TO_IMPERIAL = {
    "0402": "01005",
    "0603": "0201",
    "1005": "0402",
    "1608": "0603",
    "2012": "0805",
    "3216": "1206",
    "3225": "1210",
    "4532": "1812",
    "5750": "2220",
}
_IMPERIAL = ("01005", "0201", "0402", "0603", "0805", "1206", "1210", "1812", "2220")
_IMPERIAL_RE = re.compile(r"(?<![0-9])(" + "|".join(_IMPERIAL) + r")(?![0-9])(?!\s*_?metric)", re.I)


def package_of(footprint_name: str | None, value: str | None = None) -> str | None:
    """Package from the footprint name (``C_0402_1005Metric``, ``C_0603Metric`` = 0201,
    ``0402-cap``), else from the value (``C_100n_0402``); bulk families by name."""
    for text in (footprint_name or "", value or ""):
        low = text.lower()
        name = low.split(":")[-1]
        if "tantal" in low or name.startswith("cp_eia"):
            return "tantalum"
        if name.startswith(("cp_elec", "capae", "c_elec", "cp_radial", "c_radial")):
            return "electrolytic"
        m = re.search(r"(?<![0-9])(\d{4,5})_(\d{4})metric", name)
        if m and m.group(1) in _IMPERIAL:
            return m.group(1)
        m = re.search(r"(?<![0-9])(\d{4})_?metric", name)
        if m and m.group(1) in _METRIC_TO_IMPERIAL:
            return _METRIC_TO_IMPERIAL[m.group(1)]
        m = _IMPERIAL_RE.search(name)
        if m:
            return m.group(1)
    return None


@dataclass(frozen=True)
class CapModel:
    """A capacitor as the PDN sees it: series R-L-C."""

    ref: str
    value_f: float
    package: str | None
    esl_h: float
    esr_ohm: float
    unconfirmed: bool
    source: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CapacitorLibrary:
    """rules/capacitors.yaml, plus the project's overrides."""

    mounting_esl_h: float
    packages: Mapping[str, Mapping[str, Any]]
    esr_points: tuple[tuple[float, float], ...]
    sources: Mapping[str, str] = field(default_factory=dict)
    parts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_package: str = "0603"

    @classmethod
    def load(
        cls, path: str | Path | None = None, overrides: CapacitorConfig | None = None
    ) -> CapacitorLibrary:
        from ..packs import load_yaml  # the one hardened loader (safe, bounded, file:line)

        p = Path(path) if path is not None else CAPACITORS_YAML
        doc = load_yaml(p).data
        if not isinstance(doc, Mapping) or "packages" not in doc:
            raise InputError(str(p), "expected a mapping with `packages`")
        packages = {str(k): dict(v) for k, v in (doc.get("packages") or {}).items()}
        mount = doc.get("mounting_esl_h") or {}
        mounting = float(mount.get("value", 0.0)) if isinstance(mount, Mapping) else float(mount)
        esr = doc.get("esr_by_value") or {}
        points = tuple(
            sorted((float(pt["farad"]), float(pt["ohm"])) for pt in esr.get("points") or ())
        )
        sources = {
            "mounting": str(mount.get("source", "")) if isinstance(mount, Mapping) else "",
            "esr": str(esr.get("source", "")),
        }
        parts: dict[str, Mapping[str, Any]] = {}
        ov = overrides
        if ov is not None:
            if ov.mounting_esl_h is not None:
                mounting = float(ov.mounting_esl_h)
                sources["mounting"] = "project config"
            for name, vals in ov.packages.items():
                merged = dict(packages.get(str(name), {}))
                merged.update(dict(vals))
                merged["source"] = "project config"
                merged["unconfirmed"] = False
                packages[str(name)] = merged
            parts = {str(k): dict(v) for k, v in ov.parts.items()}
        return cls(mounting, packages, points, sources, parts)

    def esr_for(self, farad: float) -> float:
        """ESR at resonance by value: log-log interpolation, clamped at the table ends."""
        pts = self.esr_points
        if not pts:
            return math.nan
        if farad <= pts[0][0]:
            return pts[0][1]
        if farad >= pts[-1][0]:
            return pts[-1][1]
        for (c0, r0), (c1, r1) in zip(pts, pts[1:]):
            if c0 <= farad <= c1:
                t = (math.log(farad) - math.log(c0)) / (math.log(c1) - math.log(c0))
                return math.exp(math.log(r0) + t * (math.log(r1) - math.log(r0)))
        return pts[-1][1]

    def model(self, ref: str, value_f: float, package: str | None) -> CapModel:
        """The R-L-C of one capacitor: part override > package (+ mounting) > defaults."""
        notes: list[str] = []
        pkg = package
        entry = self.packages.get(pkg) if pkg else None
        if entry is None:
            notes.append(
                f"package {'unknown' if pkg is None else pkg!r}: modelled as {self.default_package}"
            )
            entry = self.packages.get(self.default_package, {})
        esl = float(entry.get("esl_body_h", 0.0)) + self.mounting_esl_h
        esr = float(entry["esr_ohm"]) if "esr_ohm" in entry else self.esr_for(value_f)
        unconfirmed = (
            bool(entry.get("unconfirmed", False))
            or self.sources.get("mounting") != "project config"
        )
        source = str(entry.get("source", ""))
        part = self.parts.get(ref)
        if part:
            if "esl_h" in part:
                esl = float(part["esl_h"])
            if "esr_ohm" in part:
                esr = float(part["esr_ohm"])
            if "value_f" in part:
                value_f = float(part["value_f"])
            source = "project config (part)"
            unconfirmed = False
        return CapModel(ref, value_f, pkg, esl, esr, unconfirmed, source, tuple(notes))
