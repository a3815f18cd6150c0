"""The project config ``accel-drc.yaml``: what the board file cannot say.

A KiCad board does not know which nets carry NVLink, which foil its fab laminates, what its
rails draw or which findings were reviewed and accepted.  The config says so, beside the board
(or ``--config FILE``).  It is validated strictly: an unknown key, class, signal id, foil grade
or a bad regular expression is ``file:line: what is wrong`` (exit 3), because a typo that is
silently ignored is a check that silently does not run.

Every regular expression a user writes in the config matches the **whole** name
(``re.fullmatch``): ``PCIE_TX`` matches the net ``PCIE_TX`` only, ``PCIE_TX.*`` every net that
starts so (a leading ``^`` or trailing ``$`` changes nothing).  Whole-name matching is what makes
``'GND'`` not match ``AGND``; the library's own recognition patterns (``rules/signals.yaml``) are
searched instead, but those are ours, not the user's.  Because a pattern written as a prefix
(``'^PCIE_TX'``) would match nothing and silently switch a check off, every config entry that
matches nothing on the board is reported (:func:`unmatched_entries`, finding
``config.unmatched``), with the ``.*`` it probably lacks.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, TypeVar

from . import packs as _packs
from .errors import InputError
from .hostile import MAX_RULE_PACK_BYTES, MAX_RULE_PACKS, catastrophic, fullmatch, same_file_key
from .yamlsafe import load_schema

CONFIG_NAME = "accel-drc.yaml"

#: said with every regex error and unmatched-entry warning: how config regexes match
REGEX_SEMANTICS = "config regexes match the whole name (re.fullmatch); use '.*' for a prefix"


#: the JSON schema of ``accel-drc.yaml`` (``rules/schemas/config.schema.json``)
CONFIG_SCHEMA: dict[str, Any] = load_schema("config")


def _dates_to_text(data: Any) -> Any:
    """YAML reads ``2026-12-31`` as a date; the schema and the reports want the ISO text."""
    if isinstance(data, dict):
        return {k: _dates_to_text(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_dates_to_text(v) for v in data]
    if isinstance(data, (_dt.date, _dt.datetime)):
        return data.isoformat()[:10]
    return data


# ---------------------------------------------------------------------------------------------
# The validated config, typed: one frozen dataclass per section
# ---------------------------------------------------------------------------------------------
# Every section keeps the keys it does not name in ``extra`` (read-only): the schema decides what
# is valid, these classes decide what the code reads.  A key added to the schema before its field
# is added here is therefore carried, not dropped, and a field added here before the schema
# allows it stays at its default.

T = TypeVar("T")


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


def _frozen(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


def _build(cls: type[T], data: Mapping[str, Any] | None, **convert: Callable[[Any], Any]) -> T:
    """``cls`` from the mapping ``data``: its fields by name (through ``convert[name]`` when
    given), every other key into ``extra``."""
    data = data or {}
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    kw: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, val in data.items():
        if key in names and key != "extra":
            kw[key] = convert[key](val) if key in convert and val is not None else val
        else:
            extra[str(key)] = val
    if "extra" in names:
        kw["extra"] = MappingProxyType(extra)
    return cls(**kw)


def _opt_float(v: Any) -> float | None:
    return None if v is None else float(v)


def _strs(v: Any) -> tuple[str, ...]:
    return (v,) if isinstance(v, str) else tuple(str(x) for x in v)


@dataclass(frozen=True)
class MaterialOverride:
    """``stackup: materials: NAME:``: what the designer says one dielectric is (each field
    beats the stack-up's own value and the library's)."""

    material: str | None = None
    epsilon_r: float | None = None
    loss_tangent: float | None = None
    tg_c: float | None = None
    thickness_mm: float | None = None  # a dielectric's whole thickness
    thickness_um: float | None = None  # a soldermask's thickness (µm)
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class CopperDeclaration:
    """``stackup: copper: LAYER:``: what the designer says one copper layer is."""

    thickness_um: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class FaceRoughness:
    """``stackup: roughness: LAYER:``: µm Rz of a copper layer's face toward the board top and
    toward the bottom (insertion loss); None where not declared."""

    rz_top_um: float | None = None
    rz_bottom_um: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class StackupConfig:
    """``stackup:``: foil grade per copper layer (by name, or ``default``), dielectric
    overrides, and the conductor facts the loss and IR-drop checks need."""

    foil: Mapping[str, str] = field(default_factory=_empty)
    materials: Mapping[str, MaterialOverride] = field(default_factory=_empty)
    copper: Mapping[str, CopperDeclaration] = field(default_factory=_empty)  # by layer name
    roughness: Mapping[str, FaceRoughness] = field(default_factory=_empty)  # by layer name
    conductivity_s_per_m: float | None = None  # copper conductivity (σ, S/m)
    via_plating_um: float | None = None  # via barrel plating thickness (µm)
    temperature_c: float | None = None  # conductor temperature (°C)
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> StackupConfig:
        return _build(
            cls,
            data,
            foil=lambda v: MappingProxyType({str(k): str(g) for k, g in v.items()}),
            materials=lambda v: MappingProxyType(
                {
                    str(k): _build(
                        MaterialOverride,
                        m,
                        material=str,
                        epsilon_r=float,
                        loss_tangent=float,
                        tg_c=float,
                        thickness_mm=float,
                        thickness_um=float,
                    )
                    for k, m in v.items()
                }
            ),
            copper=lambda v: MappingProxyType(
                {str(k): _build(CopperDeclaration, c, thickness_um=float) for k, c in v.items()}
            ),
            roughness=lambda v: MappingProxyType(
                {
                    str(k): _build(FaceRoughness, r, rz_top_um=float, rz_bottom_um=float)
                    for k, r in v.items()
                }
            ),
            conductivity_s_per_m=float,
            via_plating_um=float,
            temperature_c=float,
        )


@dataclass(frozen=True)
class RuleOverride:
    """``rules: RULE_ID:``: a project's change to one rule of the packs."""

    severity: str | None = None
    params: Mapping[str, Any] = field(default_factory=_empty)
    enabled: bool | None = None
    why: str | None = None
    source: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class Waiver:
    """``waivers: - …``: a reviewed finding accepted (regexes match the whole name)."""

    rule: str
    reason: str
    net: str | None = None
    layer: str | None = None
    uuid: str | None = None
    owner: str | None = None
    expires: str | None = None  # ISO date
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Waiver:
        return _build(cls, data, expires=lambda v: str(v)[:10])


@dataclass(frozen=True)
class BackdrillMatch:
    """Which nets a ``backdrill:`` entry applies to; every key given must match (whole name)."""

    net_class: str | None = None
    signal: str | None = None
    net: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def items(self) -> list[tuple[str, str]]:
        """The keys given, in the order ``net_class``, ``signal``, ``net``."""
        return [
            (k, v)
            for k, v in (("net_class", self.net_class), ("signal", self.signal), ("net", self.net))
            if v is not None
        ]


@dataclass(frozen=True)
class BackdrillSpec:
    """``backdrill: - …``: a fab's controlled-depth drill declared for matching nets."""

    match: BackdrillMatch = field(default_factory=BackdrillMatch)
    side: str = "bottom"
    except_net: str | None = None
    must_not_cut: str | None = None
    residual_stub_mm: float | None = None
    drill_mm: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> BackdrillSpec:
        return _build(
            cls,
            data,
            match=lambda v: _build(BackdrillMatch, v),
            side=lambda v: str(v).lower(),
            residual_stub_mm=float,
            drill_mm=float,
        )


@dataclass(frozen=True)
class VrmSpec:
    """A rail's regulator seen from the board: output resistance and inductance."""

    r_ohm: float = 0.0
    l_h: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class RailSpec:
    """``rails: - …``: a power rail the designer declares (nets, role, what it draws)."""

    name: str
    nets: tuple[str, ...] = ()
    role: str | None = None  # core | memory | serdes | io | aux | input
    voltage: float | None = None
    ripple_pct: float | None = None
    transient_a: float | None = None
    vrm: VrmSpec | None = None
    target_ohm: float | None = None
    # IR drop (ir_drop / current_density checks)
    sources: tuple[str, ...] = ()  # regulator footprints whose pads on the rail are its outputs
    loads: Mapping[str, float] = field(default_factory=_empty)  # footprint -> DC current (A)
    return_nets: tuple[str, ...] = ()
    ir_drop_max_pct: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @property
    def declares_ir_drop(self) -> bool:
        """Whether the entry declares anything of the IR-drop solve (sources, loads, return
        nets or a limit): such a rail is in the ir_drop / current_density checks' scope."""
        return bool(self.sources or self.loads or self.return_nets) or (
            self.ir_drop_max_pct is not None
        )

    @classmethod
    def of(cls, data: Mapping[str, Any], index: int = 0) -> RailSpec:
        data = dict(data)
        data.setdefault("name", f"rail {index + 1}")
        return _build(
            cls,
            data,
            name=str,
            nets=_strs,
            voltage=float,
            ripple_pct=float,
            transient_a=float,
            target_ohm=float,
            vrm=lambda v: _build(VrmSpec, v, r_ohm=float, l_h=float),
            sources=_strs,
            loads=lambda v: MappingProxyType({str(k): float(x) for k, x in v.items()}),
            return_nets=_strs,
            ir_drop_max_pct=float,
        )


@dataclass(frozen=True)
class CapacitorConfig:
    """``capacitors:``: mounting inductance and per-package / per-part overrides of
    ``rules/capacitors.yaml``."""

    mounting_esl_h: float | None = None
    packages: Mapping[str, Mapping[str, float]] = field(default_factory=_empty)
    parts: Mapping[str, Mapping[str, float]] = field(default_factory=_empty)
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> CapacitorConfig:
        table = lambda v: MappingProxyType({str(k): _frozen(x) for k, x in v.items()})  # noqa: E731
        return _build(cls, data, mounting_esl_h=float, packages=table, parts=table)


@dataclass(frozen=True)
class LossConfig:
    """``loss:``: this board's share of each signal type's insertion-loss budget at Nyquist,
    and the lumped losses (connectors, AC caps) on its channels, dB per signal id."""

    budgets_db: Mapping[str, float] = field(default_factory=_empty)
    extra_db: Mapping[str, float] = field(default_factory=_empty)
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> LossConfig:
        per_signal = lambda v: MappingProxyType({str(k): float(x) for k, x in v.items()})  # noqa: E731
        return _build(cls, data, budgets_db=per_signal, extra_db=per_signal)


@dataclass(frozen=True)
class FabConfig:
    """``fab:``: the fabricator's own capabilities (declared), which replace the fab class a
    class pack assumes (``rules/fab.yaml``)."""

    aspect_ratio_max: float | None = None
    fab_class: str | None = None  #: ``class:`` in the YAML, an id of ``rules/fab.yaml``
    ipc6012_class: int | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> FabConfig:
        d = dict(data or {})
        if "class" in d:
            d["fab_class"] = d.pop("class")
        return _build(cls, d, aspect_ratio_max=float, fab_class=str, ipc6012_class=int)


@dataclass(frozen=True)
class ThermalPart:
    """One hot part of ``thermal: parts:``: its dissipation and the via field's limits."""

    power_w: float
    theta_max_k_per_w: float | None = None
    rise_max_k: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class ThermalConfig:
    """``thermal:``: hot parts by reference and the via-fill conductivity (the barrel plating
    is ``stackup: via_plating_um``)."""

    parts: Mapping[str, ThermalPart] = field(default_factory=_empty)
    fill_k_w_per_mk: float | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> ThermalConfig:
        parts = lambda v: MappingProxyType(  # noqa: E731
            {
                str(k): _build(ThermalPart, x, power_w=float, theta_max_k_per_w=float,
                               rise_max_k=float)
                for k, x in v.items()
            }
        )  # fmt: skip
        return _build(cls, data, parts=parts, fill_k_w_per_mk=float)


#: what ``package_delays: REF: delays:`` may say of a whole part, and what each means (all add
#: 0 ps, declared: the package adds no delay *difference* the board must make up)
PACKAGE_STATEMENTS: Mapping[str, str] = MappingProxyType(
    {
        "matched": "its package delays are equal within each group, so they cancel",
        "compensated": "its package delays are made up elsewhere: the controller's per-bit "
        "deskew, or lengths already tuned with the package",
        "none": "it adds no package delay: a chip-scale or bare-die package",
    }
)


@dataclass(frozen=True)
class PackageDelays:
    """``package_delays: REF:``: one part's package (pad-to-die) delays as the designer
    declares them: ps per pad (``pins_ps``, from the package's flight-time table) and/or one
    statement for its other pads (``delays``: a key of :data:`PACKAGE_STATEMENTS`)."""

    pins_ps: Mapping[str, float] = field(default_factory=_empty)
    delays: str | None = None
    reason: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> PackageDelays:
        return _build(
            cls,
            data,
            pins_ps=lambda v: MappingProxyType({str(k): float(x) for k, x in v.items()}),
            delays=str,
            reason=str,
        )


@dataclass(frozen=True)
class ReportConfig:
    """``report:``: where reports go and which layer carries the markers."""

    dir: str | None = None
    marker_layer: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class ProjectConfig:
    """A validated ``accel-drc.yaml`` (or the empty config when there is none), typed.

    Built by :func:`load_config` (validated, with ``file:line`` for every error) or by
    :meth:`from_mapping` (already-valid data, e.g. in tests).  ``data`` is the validated
    mapping as read; code reads the typed sections, never ``data``.
    """

    path: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    doc: _packs.YamlDoc | None = field(default=None, compare=False)
    extra_packs: tuple[_packs.ClassPack, ...] = ()
    # the typed sections (derived from ``data`` in __post_init__)
    board_class: str | None = field(init=False, default=None)
    #: signal id -> its compiled whole-name patterns, in config order (first match wins)
    signals: Mapping[str, tuple[re.Pattern[str], ...]] = field(init=False, default_factory=_empty)
    stackup: StackupConfig = field(init=False, default_factory=StackupConfig)
    rules: Mapping[str, RuleOverride] = field(init=False, default_factory=_empty)
    rule_packs: tuple[str, ...] = field(init=False, default=())
    waivers: tuple[Waiver, ...] = field(init=False, default=())
    backdrill: tuple[BackdrillSpec, ...] = field(init=False, default=())
    rails: tuple[RailSpec, ...] = field(init=False, default=())
    capacitors: CapacitorConfig = field(init=False, default_factory=CapacitorConfig)
    loss: LossConfig = field(init=False, default_factory=LossConfig)
    report: ReportConfig = field(init=False, default_factory=ReportConfig)
    fab: FabConfig = field(init=False, default_factory=FabConfig)
    thermal: ThermalConfig = field(init=False, default_factory=ThermalConfig)
    #: footprint reference -> its declared package delays
    package_delays: Mapping[str, PackageDelays] = field(init=False, default_factory=_empty)

    def __post_init__(self) -> None:
        d = self.data or {}
        rules = d.get("rules") or {}
        sections = {
            "board_class": d.get("class"),
            "signals": MappingProxyType(
                {
                    str(k): tuple(re.compile(p) for p in _strs(v or ()))
                    for k, v in (d.get("signals") or {}).items()
                }
            ),
            "stackup": StackupConfig.of(d.get("stackup")),
            "rules": MappingProxyType(
                {
                    str(k): _build(RuleOverride, v, params=_frozen)
                    for k, v in rules.items()
                    if k != "packs"
                }
            ),
            "rule_packs": tuple(str(p) for p in rules.get("packs") or ()),
            "waivers": tuple(Waiver.of(w) for w in d.get("waivers") or ()),
            "backdrill": tuple(BackdrillSpec.of(b) for b in d.get("backdrill") or ()),
            "rails": tuple(RailSpec.of(r, i) for i, r in enumerate(d.get("rails") or ())),
            "capacitors": CapacitorConfig.of(d.get("capacitors")),
            "loss": LossConfig.of(d.get("loss")),
            "report": _build(ReportConfig, d.get("report")),
            "fab": FabConfig.of(d.get("fab")),
            "thermal": ThermalConfig.of(d.get("thermal")),
            "package_delays": MappingProxyType(
                {str(k): PackageDelays.of(v) for k, v in (d.get("package_delays") or {}).items()}
            ),
        }
        for name, value in sections.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ProjectConfig:
        """The typed config of already-valid ``data`` (no file, no line numbers)."""
        return cls(data=dict(data or {}))

    @property
    def foil(self) -> Mapping[str, str]:
        return self.stackup.foil

    @property
    def materials(self) -> Mapping[str, MaterialOverride]:
        return self.stackup.materials

    @property
    def rule_overrides(self) -> dict[str, Mapping[str, Any]]:
        """The ``rules:`` overrides as validated mappings: the packs merge and re-validate them
        against each kind's param schema (with the config's ``file:line``)."""
        return {k: v for k, v in (self.data.get("rules") or {}).items() if k != "packs"}

    def line_of(self, *where: Any) -> int | None:
        return self.doc.line_of(where) if self.doc else None

    def error(self, where: tuple[Any, ...], message: str) -> InputError:
        if self.doc is None:
            return InputError(self.path or "<config>", message)
        return self.doc.error(where, message)


def as_config(config: ProjectConfig | Mapping[str, Any] | None) -> ProjectConfig:
    """The one conversion at the library's entry points (``Analysis``, ``run``, the analysis
    functions tests call directly): a plain mapping is taken as already-valid config data."""
    if isinstance(config, ProjectConfig):
        return config
    return ProjectConfig.from_mapping(config)


def find_config(board_path: str | None) -> str | None:
    """``accel-drc.yaml`` beside the board, or None.  Anything by that name but a folder counts:
    a FIFO or a device is then refused when it is read, never silently passed over."""
    if not board_path:
        return None
    cand = Path(board_path).resolve().parent / CONFIG_NAME
    return str(cand) if cand.exists() and not cand.is_dir() else None


def load_config(
    path: str | None,
    board_path: str | None,
    library: _packs.Library | None = None,
) -> ProjectConfig:
    """Load ``path`` (or ``accel-drc.yaml`` beside ``board_path``); the empty config if neither.

    A ``path`` given explicitly must exist.  Signal ids, foil grades, regular expressions and
    extra pack files are checked here; layer names (which need the board) are checked by the
    pipeline against the board, with the same ``file:line`` message.
    """
    if path is None:
        path = find_config(board_path)
        if path is None:
            return ProjectConfig()
    elif not os.path.exists(path):
        raise InputError(path, "config file not found")  # a device or FIFO: load_yaml refuses it
    lib = library if library is not None else _packs.load_library()
    doc = _packs.load_yaml(path)
    if doc.data is None:
        doc.data = {}
    return _validated(doc, Path(path).resolve().parent, lib, str(path))


def config_from_data(
    data: Mapping[str, Any] | None,
    library: _packs.Library | None = None,
    base_dir: str | None = None,
) -> ProjectConfig:
    """The config of ``data`` (what ``accel-drc.yaml`` would hold, as Python data), validated
    exactly as the file is: the library API (:func:`accel_drc.check`) takes a dict, and a typo
    in it must fail as loudly as in the file.  Errors name ``<config>`` (no file, no line);
    relative ``rules: packs:`` paths are taken from ``base_dir`` (default: the working folder)."""
    import copy

    lib = library if library is not None else _packs.load_library()
    doc = _packs.YamlDoc(DICT_CONFIG_NAME, copy.deepcopy(dict(data or {})))
    return _validated(doc, Path(base_dir or os.getcwd()).resolve(), lib, None)


#: how errors in a config given as a dict (not a file) name it
DICT_CONFIG_NAME = "<config>"


def _validated(
    doc: _packs.YamlDoc, base: Path, lib: _packs.Library, path: str | None
) -> ProjectConfig:
    """Validate the parsed config ``doc`` (schema, signal ids, foils, regexes, dates, extra
    packs found from ``base``, rule overrides) into a :class:`ProjectConfig` named ``path``."""
    if not isinstance(doc.data, dict):
        raise doc.error(
            (), "the config must be a mapping (class:, signals:, stackup:, rules:, waivers:, …)"
        )
    if not (set(doc.data) & set(CONFIG_SCHEMA["properties"])) and not all(
        re.fullmatch(r"[A-Za-z_][\w.*-]{0,40}", k) for k in doc.data
    ):
        # none of the config's keys: not a config at all; quote nothing of it
        raise InputError(
            doc.path,
            "not an accel-drc config (none of its keys: "
            + ", ".join(CONFIG_SCHEMA["properties"])
            + ")",
        )
    doc.data = _dates_to_text(doc.data)
    _packs.validate(doc, CONFIG_SCHEMA)
    data = doc.data

    def compile_(pattern: str, where: tuple[Any, ...]) -> re.Pattern[str]:
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise doc.error(
                where, f"bad regular expression {pattern!r}: {exc} ({REGEX_SEMANTICS})"
            ) from None
        why = catastrophic(pattern)
        if why is not None:
            # refused statically, before it meets a net name: such a pattern can backtrack
            # for hours on a name of a few dozen characters (docs/hostile-input.md)
            raise doc.error(
                where,
                f"regular expression {pattern!r} has {why}, which can take exponential time: "
                "write it without the nested repetition",
            )
        return rx

    for sid, pats in data.get("signals", {}).items():
        # ``sideband:`` declares sideband / control nets (analysis.signals.SIDEBAND)
        if sid not in lib.signals and sid != "sideband":
            raise doc.error(
                ("signals", sid), f"unknown signal type {sid!r} (known: {', '.join(lib.signals)})"
            )
        for i, p in enumerate(pats):
            compile_(p, ("signals", sid, i))
    for part in ("budgets_db", "extra_db"):
        for sid in (data.get("loss") or {}).get(part, {}):
            if sid not in lib.signals:
                raise doc.error(
                    ("loss", part, sid),
                    f"unknown signal type {sid!r} (known: {', '.join(lib.signals)})",
                )
    for layer, grade in data.get("stackup", {}).get("foil", {}).items():
        if lib.foils.grade(grade) is None:
            raise doc.error(
                ("stackup", "foil", layer),
                f"unknown foil grade {grade!r} for {layer} (known: {', '.join(lib.foils.ids)})",
            )
    fab_class = (data.get("fab") or {}).get("class")
    fab_ids = [c.id for c in lib.fab.classes]
    if fab_class is not None and fab_ids and fab_class not in fab_ids:
        raise doc.error(
            ("fab", "class"), f"unknown fab class {fab_class!r} (known: {', '.join(fab_ids)})"
        )
    for i, w in enumerate(data.get("waivers", [])):
        for key in ("net", "layer", "uuid"):
            if key in w:
                compile_(w[key], ("waivers", i, key))
        if "expires" in w:
            try:
                _dt.date.fromisoformat(w["expires"])
            except ValueError:
                raise doc.error(
                    ("waivers", i, "expires"), f"not a date: {w['expires']!r}"
                ) from None
    for i, b in enumerate(data.get("backdrill", [])):
        for key, pattern in b["match"].items():
            if (
                key == "signal"
                and re.fullmatch(r"[a-z0-9_]+", pattern)
                and pattern not in lib.signals
            ):
                raise doc.error(("backdrill", i, "match", key), f"unknown signal type {pattern!r}")
            compile_(pattern, ("backdrill", i, "match", key))
        if "except_net" in b:
            compile_(b["except_net"], ("backdrill", i, "except_net"))
    for ref, part in (data.get("package_delays") or {}).items():
        if "pins_ps" not in part and "delays" not in part:
            raise doc.error(
                ("package_delays", ref),
                f"package_delays: {ref} declares no delay: give pins_ps (ps per pad) or delays "
                "(matched, compensated or none)",
            )
        if "pins_ps" in part and "delays" in part:
            # absolute per-pad delays and a statement of 0 ps for the rest would be added
            # together as if on one scale: a false skew of the whole package delay
            raise doc.error(
                ("package_delays", ref, "delays"),
                f"package_delays: {ref}: give pins_ps (ps per pad) or delays (one statement for "
                "the part), not both",
            )
    for i, r in enumerate(data.get("rails", [])):
        for j, p in enumerate(r["nets"]):
            compile_(p, ("rails", i, "nets", j))
        for j, p in enumerate(r.get("return_nets") or ()):
            compile_(p, ("rails", i, "return_nets", j))
    extra_packs = [
        _packs.load_pack(pack_path, lib.signals, lib.foils)
        for pack_path in _extra_pack_paths(doc, base)
    ]
    cfg = ProjectConfig(path=path, data=data, doc=doc, extra_packs=tuple(extra_packs))
    # overrides must name real rules and leave valid params: checked for every class here
    overrides = cfg.rule_overrides
    if overrides:
        for cls in _packs.CLASSES:
            _packs.rules_for_class(lib, cls, cfg.extra_packs, overrides, doc)
    return cfg


def _extra_pack_paths(doc: _packs.YamlDoc, base: Path) -> list[Path]:
    """The files ``rules.packs`` names (relative to the config's folder ``base``), each once.

    Refused with ``file:line`` (exit 3): more than :data:`~accel_drc.hostile.MAX_RULE_PACKS`
    entries, more than :data:`~accel_drc.hostile.MAX_RULE_PACK_BYTES` in all, a missing file,
    and a file listed twice (also through a symlink or another spelling: same real path) — one 1 MiB pack listed 40 times took 44 s to load and added its
    rules 40 times.  Whether each is a regular file of bounded size is checked as it is read
    (:func:`~accel_drc.yamlsafe.load_yaml`)."""
    listed = (doc.data.get("rules") or {}).get("packs") or []
    if len(listed) > MAX_RULE_PACKS:
        raise doc.error(
            ("rules", "packs"),
            f"{len(listed)} rule packs, over the limit of {MAX_RULE_PACKS}",
        )
    seen: dict[str, int] = {}
    out = []
    total = 0
    for i, p in enumerate(listed):
        pack_path = Path(p) if os.path.isabs(p) else base / p
        if not pack_path.exists():
            raise doc.error(("rules", "packs", i), f"rule pack not found: {p}")
        key = same_file_key(str(pack_path))
        if key in seen:
            first = doc.line_of(("rules", "packs", seen[key]))
            raise doc.error(
                ("rules", "packs", i),
                f"rule pack {p} is listed twice"
                + (f" (first on line {first})" if first else f" (entry {seen[key] + 1})"),
            )
        seen[key] = i
        out.append(pack_path)
        with contextlib.suppress(OSError):  # reading it says why
            total += os.stat(pack_path).st_size
        if total > MAX_RULE_PACK_BYTES:
            raise doc.error(
                ("rules", "packs", i),
                f"the rule packs listed up to {p} hold {total} bytes, over the limit of "
                f"{MAX_RULE_PACK_BYTES >> 20} MiB together",
            )
    return out


def check_layers(cfg: ProjectConfig, layer_names: set[str]) -> None:
    """Layer names in ``stackup: foil:``, ``stackup: roughness:``, ``stackup: copper:`` and
    ``backdrill: must_not_cut`` must exist on the board."""
    if cfg.doc is None:
        return
    shown = ", ".join(sorted(layer_names))
    for layer in cfg.foil:
        if layer != "default" and layer not in layer_names:
            raise cfg.error(
                ("stackup", "foil", layer),
                f"no copper layer {layer!r} on this board (layers: {shown})",
            )
    for part in ("roughness", "copper"):
        for layer in getattr(cfg.stackup, part):
            if layer != "default" and layer not in layer_names:
                raise cfg.error(
                    ("stackup", part, layer),
                    f"no copper layer {layer!r} on this board (layers: {shown})",
                )
    for i, b in enumerate(cfg.backdrill):
        layer = b.must_not_cut
        if layer is not None and layer not in layer_names:
            raise cfg.error(
                ("backdrill", i, "must_not_cut"),
                f"no copper layer {layer!r} on this board (layers: {shown})",
            )


def check_dielectrics(cfg: ProjectConfig, names: Mapping[str, str] | set[str]) -> None:
    """Names in ``stackup: materials:`` must be a dielectric or a soldermask of the board's
    stack-up (``names``: name -> ``dielectric`` | ``soldermask``; a plain set is all
    dielectrics), and each entry may declare only what that kind of layer has: a soldermask an
    ``epsilon_r``, a ``loss_tangent`` and a ``thickness_um``.  A thickness is given once."""
    if cfg.doc is None:
        return
    kinds = names if isinstance(names, Mapping) else dict.fromkeys(names, "dielectric")
    shown = ", ".join(sorted(kinds)) or "none"
    for name, over in cfg.materials.items():
        where = ("stackup", "materials", name)
        if name not in kinds:
            raise cfg.error(
                where,
                f"no dielectric or soldermask {name!r} in the stack-up (layers: {shown})",
            )
        if over.thickness_mm is not None and over.thickness_um is not None:
            raise cfg.error(where, f"{name}: give thickness_mm or thickness_um, not both")
        if kinds[name] == "soldermask":
            bad = [k for k in ("material", "tg_c") if getattr(over, k) is not None]
            if bad:
                raise cfg.error(
                    (*where, bad[0]),
                    f"{name} is a soldermask: declare its epsilon_r, loss_tangent or "
                    f"thickness_um, not {bad[0]}",
                )


# ---------------------------------------------------------------------------------------------
# Config entries that apply to nothing on this board
# ---------------------------------------------------------------------------------------------


def _fullmatch_count(pattern: str, names: Any) -> int:
    try:
        rx = re.compile(pattern)
    except re.error:
        return 0
    return sum(1 for n in names if fullmatch(rx, n))


def suggest_pattern(pattern: str, names: Any) -> tuple[str | None, int]:
    """A whole-name pattern close to ``pattern`` that matches some of ``names``, and how many.

    Written for the usual mistake, a prefix or substring pattern (``'^PCIE_TX'``): tries the
    prefix form ``PCIE_TX.*``, then ``.*PCIE_TX.*``, then both case-insensitively.
    """
    names = list(names)
    core = pattern
    if core.startswith("^"):
        core = core[1:]
    if core.endswith("$") and not core.endswith("\\$"):
        core = core[:-1]
    if "|" in core:
        core = f"(?:{core})"
    for cand in (f"{core}.*", f".*{core}.*", f"(?i){core}", f"(?i){core}.*", f"(?i).*{core}.*"):
        if cand == pattern:
            continue
        n = _fullmatch_count(cand, names)
        if n:
            return cand, n
    return None, 0
