"""The stack-up of an IPC-2581 file: the ``Spec`` (dielectric constant, loss tangent, material,
surface roughness, backdrill properties), the ``Layer`` declarations and the ``StackupLayer``
rows while the document streams, then the :class:`Stackup` built from them (KiCad's exporter
quirks undone), with each copper layer's foil grade from its roughness or its named foil."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

from ..errors import InputError
from ..model import (
    DielectricSublayer,
    Stackup,
    StackupLayer,
    copper_layer_name,
)
from .ipc2581_records import (
    COPPER_FUNCTIONS,
    DIELECTRIC_FUNCTIONS,
    OTHER_STACKUP_FUNCTIONS,
    PROPERTY_UNITS_UM,
    LayerDecl,
    Node,
    Spec,
    StackRow,
    finite_float,
)

log = logging.getLogger("accel_drc.readers.ipc2581")

#: Foil grades by the largest Rz (µm) they allow, smoothest first: the upper ends of the
#: ``rz_um`` ranges in ``rules/foils.yaml`` (IPC-4562 profiles, foil makers' tables).  Used only when the pack cannot be
#: loaded; :func:`foil_thresholds` reads the pack.  Rz above 10 µm is still STD (the roughest).
DEFAULT_FOIL_RZ_MAX: tuple[tuple[str, float], ...] = (
    ("HVLP4", 0.6),
    ("HVLP3", 1.0),
    ("HVLP2", 1.5),
    ("HVLP", 3.0),
    ("VLP", 4.0),
    ("RTF", 4.0),
    ("STD", 10.0),
)
FOIL_NAMES = ("HVLP4", "HVLP3", "HVLP2", "HVLP1", "HVLP", "VLP", "RTF", "HTE", "STD")

_KICAD_DIELECTRIC = re.compile(r"DIELECTRIC_(\d+)\Z")
#: KiCad's solder-mask permittivity when the board declares none (``DEFAULT_EPSILON_R_SOLDERMASK``
#: in stackup_predefined_prms.h).  The board file writes a mask's epsilon_r only with a material
#: (``FormatBoardStackup``), but KiCad 10's exporter writes every mask's epsilon_r above 1 and
#: never its material, so 3.3 with no loss tangent is this default, not a declaration.
_KICAD_MASK_DEFAULT_DK = 3.3

#: what KiCad's exporter writes as the material of a layer whose stack-up entry has none
_KICAD_PLACEHOLDER_MATERIALS = frozenset({"COPPER", "SOLDERMASK"})
#: KiCad's exporter writes user-visible names ("F.Silkscreen", or a renamed "Top Overlay"); its
#: stack-up names these layers canonically, by kind and side
_KICAD_STACKUP_NAMES = {
    ("silkscreen", "TOP"): "F.SilkS",
    ("silkscreen", "BOTTOM"): "B.SilkS",
    ("solderpaste", "TOP"): "F.Paste",
    ("solderpaste", "BOTTOM"): "B.Paste",
    ("soldermask", "TOP"): "F.Mask",
    ("soldermask", "BOTTOM"): "B.Mask",
}


def _kicad_stackup_name(kind: str, side: str) -> str | None:
    return _KICAD_STACKUP_NAMES.get((kind, side))


def grade_for_rz(rz_um: float, thresholds: Sequence[tuple[str, float]] | None = None) -> str:
    """The smoothest foil grade whose Rz range reaches up to ``rz_um`` (treated side, µm);
    ``thresholds`` are (grade, max Rz) pairs, smoothest first."""
    for name, limit in thresholds if thresholds is not None else foil_thresholds():
        if rz_um <= limit + 1e-9:
            return name
    return "STD"


def foil_thresholds() -> tuple[tuple[str, float], ...]:
    """(grade, max Rz µm), smoothest first, from the rule pack's ``foils.yaml`` (the grade's
    ``rz_um`` upper bound), else :data:`DEFAULT_FOIL_RZ_MAX`."""
    try:
        from ..packs import RULES_DIR, load_foils

        foils = load_foils(RULES_DIR / "foils.yaml")
    except Exception:  # the pack is another module's file: never let it break reading a board
        log.debug("foils.yaml not usable for Rz thresholds", exc_info=True)
        return DEFAULT_FOIL_RZ_MAX
    rows = [(g.id, float(g.rz_um[1])) for g in sorted(foils.grades, key=lambda g: -g.rank)]
    return tuple(rows) if rows else DEFAULT_FOIL_RZ_MAX


def foil_grade_named(text: str) -> str | None:
    """The grade id a declared name means (``HVLP1`` → ``HVLP``), by the pack's aliases."""
    try:
        from ..packs import RULES_DIR, load_foils

        grade = load_foils(RULES_DIR / "foils.yaml").grade(text)
        return grade.id if grade is not None else None
    except Exception:
        key = re.sub(r"[\s_-]+", "", text).upper()
        return "HVLP" if key == "HVLP1" else key if key in FOIL_NAMES else None


class StackupReading:
    """The reader's part that reads the stack-up (mixed into
    :class:`~accel_drc.readers.ipc2581._Reader`, whose state it shares)."""

    # -- header: specs, layers, stack-up -----------------------------------------------------------

    def _on_spec(self, elem: Node, parent: str) -> None:
        name = elem.get("name")
        if not name:
            return
        spec = self.specs.setdefault(name, Spec())
        for item in elem:
            kind = item.tag
            typ = (item.get("type") or "").upper()
            props = [p for p in item if p.tag == "Property"]
            if kind == "General" and typ == "MATERIAL":
                for p in props:
                    text = (p.get("text") or "").strip()
                    if text and ":" not in text:
                        spec.materials.append(text)
                    elif text.lower().startswith("foil"):
                        spec.foil_text = text.split(":", 1)[1].strip()
            elif kind == "Dielectric" and typ in ("DIELECTRIC_CONSTANT", "LOSS_TANGENT"):
                val = self._prop_value(props, name, typ)
                if val is not None and (val <= 0 if typ == "DIELECTRIC_CONSTANT" else val < 0):
                    # physically impossible: not declared (and said so), never used as a number
                    self.warnings.append(
                        f'Spec "{name}" {typ} {val:g} is impossible; treated as not declared'
                    )
                    val = None
                if typ == "DIELECTRIC_CONSTANT":
                    spec.dk = val
                else:
                    spec.df = val
            elif kind == "Conductor" and typ.startswith("SURFACE_ROUGHNESS"):
                self._roughness(spec, name, typ, props)
            elif kind == "Conductor" and typ == "OTHER":
                for p in props:
                    text = (p.get("text") or "").strip()
                    if text.upper().split(":")[-1].strip() in FOIL_NAMES:
                        spec.foil_text = text.split(":")[-1].strip()
            elif kind == "Backdrill":
                self._backdrill_prop(spec, name, typ, props)
            elif kind == "SurfaceFinish":
                fin = item.get("comment") or typ or None
                for sub in item.iter():
                    if sub.tag == "Finish" and sub.get("type"):
                        fin = sub.get("type")
                spec.finish = fin

    def _prop_value(self, props: list[Node], spec: str, typ: str) -> float | None:
        for p in props:
            raw = p.get("value")
            if raw is None:
                continue
            try:
                return finite_float(raw)
            except ValueError:
                raise InputError(
                    self.path,
                    f'Spec "{spec}" {typ}: value "{raw[:40]}" is not a finite number',
                    line=getattr(p, "line", None),
                ) from None
        return None

    def _roughness(self, spec: Spec, name: str, typ: str, props: list[Node]) -> None:
        face = typ.replace("SURFACE_ROUGHNESS_", "").replace("SURFACE_ROUGHNESS", "TREATED")
        for p in props:
            if p.get("value") is None:
                continue
            value = self._prop_value([p], name, typ)
            if value is None:
                continue
            unit = (p.get("unit") or "").upper()
            ref_unit = (p.get("refUnit") or "").upper()
            if unit in PROPERTY_UNITS_UM:
                um = value * PROPERTY_UNITS_UM[unit]
            elif unit in ("RZ", "RMAX", ""):
                um = value  # Rz is quoted in µm by every foil datasheet
                if unit == "":
                    self.warnings.append(
                        f'Spec "{name}" {typ} has no unit: read {value} as Rz in µm'
                    )
            else:  # RMS (Rq/Ra): not comparable with the Rz limits of the foil grades
                spec.roughness_note = f"{typ} given as {unit}, not Rz: no foil grade derived"
                continue
            if ref_unit == "RMS":
                spec.roughness_note = f"{typ} given as RMS, not Rz: no foil grade derived"
                continue
            spec.roughness_um[face] = um

    def _backdrill_prop(self, spec: Spec, name: str, typ: str, props: list[Node]) -> None:
        bd = spec.backdrill
        bd.setdefault("present", True)
        for p in props:
            layer = p.get("layerOrGroupRef") or p.get("text")
            if typ == "START_LAYER" and layer:
                bd["start"] = layer.strip()
            elif typ == "MUST_NOT_CUT_LAYER" and layer:
                bd["must_not_cut"] = layer.strip()
            elif typ in ("MAX_STUB_LENGTH", "STUB_LENGTH") and p.get("value") is not None:
                value = self._prop_value([p], name, typ) or 0.0
                if value < 0:
                    raise self._bad(p, f'Spec "{name}" {typ} is negative ({value:g})')
                unit = (p.get("unit") or "").upper()
                if unit in PROPERTY_UNITS_UM:
                    bd["max_stub_mm"] = value * PROPERTY_UNITS_UM[unit] / 1000.0
                else:
                    bd["max_stub_mm"] = value * self._scale()
                    self.warnings.append(
                        f'Spec "{name}" MAX_STUB_LENGTH has no unit: read in the CadHeader units'
                    )

    def _on_layer(self, elem: Node, parent: str) -> None:
        if parent != "CadData":
            return
        name = elem.get("name")
        if not name:
            return
        decl = LayerDecl(
            name=name,
            function=(elem.get("layerFunction") or "").upper(),
            side=(elem.get("side") or "").upper(),
        )
        for child in elem:
            tag = child.tag
            if tag == "Span":
                decl.span = (child.get("fromLayer", ""), child.get("toLayer", ""))
            elif tag == "SpecRef" and child.get("id"):
                decl.spec_refs.append(child.get("id", ""))
        if name not in self.layers:
            self.layer_order.append(name)
        self.layers[name] = decl
        self.copper_index = None

    def _on_stackup_layer(self, elem: Node, parent: str) -> None:
        ref = elem.get("layerOrGroupRef")
        if not ref:
            return
        thickness = self._len(elem, "thickness") if elem.get("thickness") is not None else None
        if thickness is not None and thickness < 0:
            raise self._bad(elem, f'(layer "{ref}") thickness is negative ({thickness:g} mm)')
        seq_raw = elem.get("sequence")
        try:
            seq = finite_float(seq_raw) if seq_raw is not None else float(len(self.stack_rows))
        except ValueError:
            raise InputError(
                self.path,
                f'StackupLayer "{ref}": sequence "{seq_raw[:40]}" is not a finite number',
                line=elem.line,
            ) from None
        refs = [c.get("id", "") for c in elem if c.tag == "SpecRef" and c.get("id")]
        self.stack_rows.append(StackRow(ref, thickness, seq, self.stack_group, refs))

    def _copper(self) -> dict[str, int]:
        """IPC layer name -> copper stack index (0 = top), in stack-up order."""
        if self.copper_index is None:
            names = [
                n for n in self._layer_sequence() if self.layers[n].function in COPPER_FUNCTIONS
            ]
            self.copper_index = {n: i for i, n in enumerate(names)}
        return self.copper_index

    def _layer_sequence(self) -> list[str]:
        """Declared layers in physical order: the stack-up's sequence when it names them."""
        rows = sorted(self.stack_rows, key=lambda r: (r.group, r.sequence))
        ordered = [r.ref for r in rows if r.ref in self.layers]
        seen = set(ordered)
        if ordered:
            # layers the stack-up forgot keep their declaration order, after it
            ordered += [
                n
                for n in self.layer_order
                if n not in seen and self.layers[n].function in COPPER_FUNCTIONS
            ]
            return ordered
        return list(self.layer_order)

    def _check_overall(self, stackup: Stackup) -> None:
        """Warn when the layers do not add up to ``overallThickness`` (KiCad 9.0.8 writes every
        dielectric sub-layer with the first slice's thickness, for one)."""
        kinds = ("copper", "core", "prepreg", "dielectric")
        if self.where_measured in ("", "MASK"):
            kinds += ("soldermask",)
        parts = [x.thickness_mm for x in stackup.layers if x.kind in kinds]
        if not parts or any(p is None for p in parts) or self.overall_thickness is None:
            return
        total = float(sum(parts))  # type: ignore[arg-type]
        if abs(total - self.overall_thickness) > max(0.01, 0.02 * self.overall_thickness):
            self.warnings.append(
                f"the stack-up layers add up to {total:.4g} mm but <Stackup overallThickness> "
                f"says {self.overall_thickness:.4g} mm: a layer's thickness is wrong"
            )

    def _layer_specs(self, name: str, row: StackRow | None) -> list[Spec]:
        refs = list(row.spec_refs if row else ()) + list(self.layers[name].spec_refs)
        out = []
        for ref in refs:
            spec = self._resolve_spec(ref)
            if spec is None:
                self.warnings.append(f'layer "{name}" refers to Spec "{ref}", which is missing')
            elif spec not in out:
                out.append(spec)
        if not refs:  # no reference at all: a spec named like the layer (KiCad: "F.Cu_1")
            spec = self._resolve_spec(name)
            if spec is not None:
                out.append(spec)
        return out

    def _stackup(self, copper: Mapping[str, int]) -> Stackup | None:
        if not self.stack_rows:
            self.warnings.append("no <Stackup>: thicknesses and dielectric values are unknown")
            return None
        rows = {r.ref: r for r in self.stack_rows}
        kicad = self._kicad_version() is not None
        layers: list[StackupLayer] = []
        finish = None
        for name in self._layer_sequence():
            decl = self.layers[name]
            fn = decl.function
            kind = (
                "copper"
                if fn in COPPER_FUNCTIONS
                else DIELECTRIC_FUNCTIONS.get(fn) or OTHER_STACKUP_FUNCTIONS.get(fn)
            )
            row = rows.get(name)
            if kind is None or row is None:
                continue
            specs = self._layer_specs(name, row)
            material = next((m for s in specs for m in s.materials), None)
            if (
                kicad
                and material is not None
                and (
                    kind in ("silkscreen", "solderpaste")
                    or material.upper() in _KICAD_PLACEHOLDER_MATERIALS
                )
            ):
                material = None  # KiCad writes its layer type where the stack-up has no material
            dk = next((s.dk for s in specs if s.dk is not None), None)
            df = next((s.df for s in specs if s.df is not None), None)
            if kicad and kind == "soldermask" and dk == _KICAD_MASK_DEFAULT_DK and df is None:
                dk = None  # KiCad's default for a mask with no material, not a declaration
            finish = finish or next((s.finish for s in specs if s.finish), None)
            if kind in ("silkscreen", "solderpaste") and row.thickness_mm == 0.0:
                thickness = None
            else:
                thickness = row.thickness_mm
            if kind == "copper":
                foil = self._foil(name, specs)
                layers.append(
                    StackupLayer(
                        name=copper_layer_name(copper[name], len(copper)),
                        kind="copper",
                        thickness_mm=thickness,
                        material=material,
                        copper_index=copper[name],
                        foil=foil,
                        raw_type=fn,
                    )
                )
            elif kind in ("core", "prepreg", "dielectric"):
                m = _KICAD_DIELECTRIC.match(name)
                layers.append(
                    StackupLayer(
                        name=f"dielectric {m.group(1)}" if m else name,
                        kind=kind,
                        thickness_mm=thickness,
                        material=material,
                        epsilon_r=dk,
                        loss_tangent=df,
                        sublayers=(DielectricSublayer(thickness, material, dk, df),),
                        raw_type=fn,
                    )
                )
            else:
                layers.append(
                    StackupLayer(
                        name=_kicad_stackup_name(kind, decl.side) or name if kicad else name,
                        kind=kind,
                        thickness_mm=thickness,
                        material=material,
                        epsilon_r=dk,
                        loss_tangent=df,
                        raw_type=fn,
                    )
                )
        if not any(layer.is_copper for layer in layers):
            self.warnings.append("the <Stackup> names no copper layer: stack-up ignored")
            return None
        return Stackup(layers=tuple(layers), finish=finish)

    def _foil(self, name: str, specs: Sequence[Spec]) -> str | None:
        """The layer's foil grade: a grade the file names, else the one its roughness implies.
        The grade holds only if every declared face meets it, so the roughest face decides."""
        for spec in specs:
            if spec.foil_text:
                grade = foil_grade_named(spec.foil_text)
                if grade is not None:
                    return grade
                self.warnings.append(f'layer "{name}": unknown foil grade "{spec.foil_text}"')
        faces = {k: v for s in specs for k, v in s.roughness_um.items()}
        if not faces:
            for spec in specs:
                if spec.roughness_note:
                    self.warnings.append(f'layer "{name}": {spec.roughness_note}')
            return None
        return grade_for_rz(max(faces.values()), self.foil_rz)
