"""``accel-drc inspect``: what accel-drc reads from a board, as a stable JSON document or a
readable summary (``accel-drc inspect``, whose handler lives in ``cli.py``: this module returns
data and never prints).

Why a command of its own: every check stands on the reader, so a user (and the ground-truth
tests) must be able to see exactly what was read — layers, stack-up, counts, via spans,
net classes — before trusting a finding built on it.  The JSON is stable: keys sorted, floats
rounded to 6 decimals (1 nm), lists in a fixed order, so it can be diffed and snapshotted.
"""

from __future__ import annotations

import importlib
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .hostile import terminal
from .model import VIA_TYPES, Board

if TYPE_CHECKING:
    from .config import ProjectConfig

log = logging.getLogger(__name__)

#: ``--detail`` name -> (module, function) that builds its rows from an Analysis
DETAIL_PROVIDERS = {
    "vias": ("accel_drc.analysis.via_stubs", "via_rows"),
    "pairs": ("accel_drc.analysis.impedance", "pair_rows"),
    "loss": ("accel_drc.analysis.loss", "loss_rows"),
    "rails": ("accel_drc.analysis.pdn.rows", "rail_rows"),
    "irdrop": ("accel_drc.analysis.irdrop", "irdrop_rows"),
}

FLOAT_DIGITS = 6


def _round(value: Any) -> Any:
    """Round floats (recursively) so the JSON does not change with float noise."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        if value == 0:
            return 0.0
        # lengths in mm keep FLOAT_DIGITS decimals (nm); farads, henries and sub-milliohm
        # impedances would round to zero, so values below 1e-3 keep 9 significant digits
        if abs(value) < 1e-3:
            return float(f"{value:.9g}")
        return round(value, FLOAT_DIGITS)
    if isinstance(value, Mapping):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _round(value.item())
    return value


def _kicad_version(board: Board) -> int | None:
    if board.format != "kicad_pcb":
        return None
    from .readers.kicad_file import kicad_major

    return kicad_major(board.file_version)


def via_type_counts(board: Board) -> dict[str, int]:
    counts = Counter(board.vias.types)
    return {t: int(counts.get(t, 0)) for t in VIA_TYPES}


def via_span_counts(board: Board) -> dict[str, int]:
    """``{"F.Cu-B.Cu": n, …}``: start layer first in stack order, canonical names."""
    vias = board.vias
    if not len(vias):
        return {}
    pairs = Counter(zip(vias.start.tolist(), vias.end.tolist()))
    out = {}
    for (a, b), n in sorted(pairs.items()):
        out[f"{board.layer_name(a)}-{board.layer_name(b)}"] = int(n)
    return out


def stackup_rows(board: Board) -> list[dict[str, Any]]:
    if board.stackup is None:
        return []
    rows = []
    for layer in board.stackup.layers:
        row: dict[str, Any] = {
            "name": layer.name,
            "type": layer.kind,
            "thickness_mm": layer.thickness_mm,
            "material": layer.material,
            "epsilon_r": layer.epsilon_r,
            "loss_tangent": layer.loss_tangent,
        }
        if layer.declared:  # the values accel-drc.yaml declared over the board's
            row["declared"] = dict(layer.declared)
        if layer.copper_index is not None:
            row["copper_index"] = layer.copper_index
            row["foil"] = layer.foil  # declared foil grade (IPC-2581 roughness), else None
        if len(layer.sublayers) > 1:
            row["sublayers"] = [
                {
                    "thickness_mm": s.thickness_mm,
                    "material": s.material,
                    "epsilon_r": s.epsilon_r,
                    "loss_tangent": s.loss_tangent,
                }
                for s in layer.sublayers
            ]
        rows.append(row)
    return rows


def net_class_rows(board: Board) -> list[dict[str, Any]]:
    """Each class with its numbers and how many of the board's nets fall in it."""
    rules = board.net_classes
    if not rules.classes:  # no .kicad_pro: the classes are unknown, not "all Default"
        return []
    members = Counter(rules.class_of(n) for n in board.nets if n)
    names = [c.name for c in rules.classes]
    rows = []
    for cls in rules.classes:
        rows.append(
            {
                "name": cls.name,
                "nets": int(members.get(cls.name, 0)),
                "clearance_mm": cls.clearance_mm,
                "track_width_mm": cls.track_width_mm,
                "diff_pair_width_mm": cls.diff_pair_width_mm,
                "diff_pair_gap_mm": cls.diff_pair_gap_mm,
                "via_diameter_mm": cls.via_diameter_mm,
                "via_drill_mm": cls.via_drill_mm,
                "priority": cls.priority,
            }
        )
    for name, n in sorted(members.items()):  # assigned to a class the project does not define
        if name not in names:
            rows.append({"name": name, "nets": int(n), "defined": False})
    return rows


def _details(
    board: Board, details: Sequence[str], config: ProjectConfig | None, board_class: str | None
) -> dict[str, Any]:
    if not details:
        return {}
    from .analysis import Analysis
    from .config import as_config

    cfg = as_config(config)
    # the class whose defaults the details use, with check's precedence: --class, then the
    # config's class:, then (inside the providers) the classifier
    board_class = board_class or cfg.board_class
    analysis = Analysis(board, cfg, board_class=board_class or None)
    out: dict[str, Any] = {}
    for name in details:
        if name not in DETAIL_PROVIDERS:
            raise UsageError(f"unknown detail {name!r} (choose from {', '.join(DETAIL_PROVIDERS)})")
        module_name, func_name = DETAIL_PROVIDERS[name]
        try:
            module = importlib.import_module(module_name)
            func = getattr(module, func_name)
        except (ImportError, AttributeError):
            raise UsageError(f"detail {name} not available yet") from None
        out[name] = func(analysis)
    return out


def _declared(board: Board, config: ProjectConfig | None) -> Board:
    """``board`` with ``config``'s stack-up declarations applied (the pipeline's own step), after
    the same name checks (``file:line`` errors, exit 3)."""
    if config is None or not (config.stackup.materials or config.stackup.copper):
        return board
    from .analysis.stackup import declarable_layers, with_declarations
    from .config import check_dielectrics, check_layers
    from .packs import load_library

    names = {n for c in board.copper_layers for n in (c.name, c.user_name)}
    check_layers(config, names)
    if board.stackup is not None:
        check_dielectrics(config, declarable_layers(board.stackup))
    return with_declarations(board, config, load_library().materials)


def inspect_document(
    board: Board,
    details: Iterable[str] = (),
    config: ProjectConfig | None = None,
    board_class: str | None = None,
) -> dict[str, Any]:
    """The ``accel-drc inspect --json`` document for ``board`` (floats rounded, keys sorted by
    the JSON writer).  The config's stack-up declarations are checked and applied as ``check``
    applies them: the stack-up table and the details show the values the checks use."""
    board = _declared(board, config)
    tracks = board.tracks
    size = board.outline.size_mm
    doc: dict[str, Any] = {
        "source": board.source,
        "format": board.format,
        "file_version": board.file_version,
        "kicad_version": _kicad_version(board),
        "generator": board.generator,
        "project_file": board.project_file,
        "copper_layers": [
            {"name": layer.name, "user_name": layer.user_name, "type": layer.kind}
            for layer in board.copper_layers
        ],
        "layer_count": board.layer_count,
        "board_size_mm": list(size) if size is not None else None,
        "board_bbox_mm": list(board.outline.bbox) if board.outline.bbox is not None else None,
        "board_thickness_mm": board.board_thickness_mm,
        "outline": {
            "rings": len(board.outline.rings),
            "closed_rings": sum(
                1 for r in board.outline.rings if len(r) > 3 and bool((r[0] == r[-1]).all())
            ),
        },
        "counts": {
            "segments": tracks.segment_count,
            "arcs": tracks.arc_count,
            "vias": len(board.vias),
            "footprints": len(board.footprints),
            "pads": board.pad_count,
            "nets": board.named_net_count,
            "zones": len(board.zones),
        },
        "via_types": via_type_counts(board),
        "via_spans": via_span_counts(board),
        "backdrilled_vias": len(board.vias.backdrills),
        "stackup": stackup_rows(board),
        "finish": board.stackup.finish if board.stackup else None,
        "impedance_controlled": board.stackup.impedance_controlled if board.stackup else None,
        "diff_pairs": len(board.diff_pairs),
        "diff_pair_names": [p.name for p in board.diff_pairs],
        "net_classes": net_class_rows(board),
        "design": {
            "allow_blind_buried_vias": board.design.allow_blind_buried_vias,
            "allow_microvias": board.design.allow_microvias,
            "min_via_drill_mm": board.design.min_via_drill_mm,
            "min_track_width_mm": board.design.min_track_width_mm,
        },
        "text_variables": dict(sorted(board.text_variables.items())),
        "warnings": list(board.warnings),
    }
    detail_list = list(dict.fromkeys(details))
    if detail_list:
        doc["details"] = _details(board, detail_list, config, board_class)
    return _round(doc)


# ---------------------------------------------------------------------------------------------
# readable summary
# ---------------------------------------------------------------------------------------------


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "?"
    if isinstance(value, float):
        return f"{value:.4g}{unit}"
    return f"{value}{unit}"


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    return out


def _printable(value: Any) -> Any:
    """``value`` (an inspect document or part of one) with every string, keys too, escaped for
    a terminal (:func:`accel_drc.hostile.terminal`): layer, material, net-class and pair names
    are the board's text, and a newline or ESC in one must not print a forged line."""
    if isinstance(value, str):
        return terminal(value)
    if isinstance(value, Mapping):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def render_text(doc: Mapping[str, Any]) -> str:
    """A human summary of an inspect document; every name in it is shown escaped, so the text
    holds no control character but the newlines between its lines."""
    doc = _printable({k: v for k, v in doc.items() if k != "details"})  # rows: not shown here
    out: list[str] = []
    kv = doc.get("kicad_version")
    out.append(f"{doc['source']}")
    out.append(
        f"  format {doc['format']}"
        + (f", KiCad {kv} (file version {doc['file_version']})" if kv else "")
    )
    size = doc.get("board_size_mm")
    size_txt = f"{size[0]:.3f} x {size[1]:.3f} mm" if size else "no Edge.Cuts outline"
    ol = doc.get("outline") or {}
    if size and ol.get("rings") and not ol.get("closed_rings"):
        size_txt += " (the outline does not close)"
    out.append(
        f"  {doc['layer_count']} copper layers, {size_txt}, "
        f"thickness {_fmt(doc.get('board_thickness_mm'), ' mm')}"
    )
    out.append("")
    out.append("Copper layers")
    out += [
        "  " + line
        for line in _table(
            [
                [str(i), c["name"], c["user_name"], c["type"]]
                for i, c in enumerate(doc["copper_layers"])
            ],
            ["#", "layer", "name", "type"],
        )
    ]
    out.append("")
    if doc.get("stackup"):
        out.append("Stack-up" + (f" (finish {doc['finish']})" if doc.get("finish") else ""))
        rows = []
        for r in doc["stackup"]:
            mat = r.get("material") or ""
            if r.get("sublayers"):
                mat += f" (+{len(r['sublayers']) - 1} sublayer)"
            rows.append(
                [
                    r["name"],
                    r["type"],
                    _fmt(r.get("thickness_mm")),
                    mat,
                    _fmt(r.get("epsilon_r")),
                    _fmt(r.get("loss_tangent")),
                ]
            )
        out += [
            "  " + line for line in _table(rows, ["layer", "type", "mm", "material", "er", "tan d"])
        ]
    else:
        out.append("Stack-up: none declared in the board (dielectrics cannot be verified)")
    out.append("")
    c = doc["counts"]
    out.append(
        "Counts: "
        + ", ".join(
            f"{c[k]} {k}"
            for k in ("segments", "arcs", "vias", "footprints", "pads", "nets", "zones")
        )
    )
    vt = ", ".join(f"{n} {t}" for t, n in doc["via_types"].items() if n)
    out.append(f"Via types: {vt or 'none'}")
    if doc["via_spans"]:
        out.append("Via spans: " + ", ".join(f"{k} x{n}" for k, n in doc["via_spans"].items()))
    if doc.get("backdrilled_vias"):
        out.append(f"Backdrilled vias: {doc['backdrilled_vias']}")
    out.append("")
    if doc.get("net_classes"):
        out.append("Net classes")
        rows = [
            [
                r["name"],
                str(r["nets"]),
                _fmt(r.get("track_width_mm")),
                _fmt(r.get("clearance_mm")),
                _fmt(r.get("diff_pair_width_mm")),
                _fmt(r.get("diff_pair_gap_mm")),
            ]
            for r in doc["net_classes"]
        ]
        out += [
            "  " + line
            for line in _table(rows, ["class", "nets", "width", "clearance", "dp width", "dp gap"])
        ]
    else:
        out.append("Net classes: unknown (no .kicad_pro)")
    out.append("")
    names = doc.get("diff_pair_names") or []
    shown = ", ".join(names[:12]) + (f", … ({len(names) - 12} more)" if len(names) > 12 else "")
    out.append(f"Differential pairs: {doc['diff_pairs']}" + (f": {shown}" if names else ""))
    for w in doc.get("warnings") or []:
        out.append(f"warning: {w}")
    return "\n".join(out) + "\n"
