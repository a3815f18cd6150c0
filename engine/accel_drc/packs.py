"""Load and validate the rule data: class packs, signal types, materials and foils.

All of it is YAML under ``rules/`` (data only; the code knows the *kinds* of check, never a limit).
Every file is checked against a JSON schema before use; a mistake is reported as
``file:line: what is wrong`` (exit 3), the line found from the YAML node marks of
``yaml.compose`` so a typo deep inside a pack points at its own line.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .analysis.materials import MaterialLibrary, library_from_data
from .errors import InputError
from .hostile import MAX_YAML_BYTES, non_finite
from .references import REFERENCES_SCHEMA, References, check_source, references_from_data
from .results import Rule, Severity

RULES_DIR = Path(__file__).resolve().parent / "rules"
CLASSES = ("training", "inference", "edge")

#: check kinds a pack may name (the registry in checks/ implements them)
CHECK_KINDS = (
    "layer_count",
    "tg",
    "copper_weight",
    "material_consistency",
    "laminate_df",
    "foil",
    "impedance",
    "via_stub",
    "pdn_impedance",
    "open_channel",
    "ir_drop",
    "current_density",
    "insertion_loss",  # channel insertion loss at Nyquist vs the board's budget
)

# ---------------------------------------------------------------------------------------------
# YAML with line numbers
# ---------------------------------------------------------------------------------------------

Path_ = tuple  # a JSON path: tuple of str keys and int indexes


@dataclass
class YamlDoc:
    """A parsed YAML file plus the line (1-based) of every node, keyed by its JSON path."""

    path: str
    data: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)

    def line_of(self, where: Sequence[Any]) -> int | None:
        """Line of the deepest node on ``where`` that exists (an error in a missing key points at
        its parent)."""
        where = tuple(where)
        while True:
            if where in self.lines:
                return self.lines[where]
            if not where:
                return None
            where = where[:-1]

    def error(self, where: Sequence[Any], message: str) -> InputError:
        return InputError(self.path, message, line=self.line_of(where))


#: libyaml's safe loader when PyYAML was built with it (about 10x faster than the pure-Python
#: one: loading the rule packs took 1.5 s of every run), else the pure-Python SafeLoader.  Both
#: are safe loaders and give nodes with the same line marks.
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: deepest nesting of collections a rule pack or config may have.  The deepest real file (a
#: class pack) nests 6 levels; the bound stops a hostile file before libyaml's composer, which
#: recurses on the C stack (100,000 nested ``[`` segfault the interpreter; 5,000 raise
#: RecursionError in the constructor).
MAX_DEPTH = 100

#: YAML 1.2 (core schema) floats PyYAML's YAML 1.1 resolver reads as strings: an exponent
#: without a dot or without a sign (``1e-9``, ``2E6``, ``1.5e3``).  Users write them for
#: inductances and frequencies; a schema error "'1e-9' is not of type 'number'" helps nobody.
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


class _Loader(_BASE_LOADER):  # type: ignore[misc,valid-type]
    """The safe loader plus two fixes: YAML 1.2 exponent floats, and construction errors
    (``2027-02-30``, month 13) raised as YAML errors carrying the node's line, so they become
    ``file:line:`` input errors instead of an internal ``ValueError``."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:
            what = f"{node.value!r}: " if isinstance(node, yaml.ScalarNode) else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {what}{exc}", node.start_mark
            ) from None


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))

_SAFE_LOADER = _Loader


def _quoted_end(line: str, i: int) -> int:
    """Index just past the quoted scalar that starts at ``line[i]`` (or the line's end when it
    continues on the next line: good enough for a depth bound)."""
    q = line[i]
    j = i + 1
    while j < len(line):
        c = line[j]
        if q == '"' and c == "\\":
            j += 2
            continue
        if c == q:
            if q == "'" and j + 1 < len(line) and line[j + 1] == "'":
                j += 2
                continue
            return j + 1
        j += 1
    return len(line)


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> tuple[int, int]:
    """An upper bound of how deep ``text`` nests collections, found without parsing it, and the
    1-based line where it first exceeds ``limit`` (0 if it never does).

    Why a pre-scan: libyaml composes nodes recursively in C, so a deep enough file crashes the
    interpreter before any Python check could run.  Counted: flow brackets ``[``/``{`` outside
    quoted scalars and comments, block indentation levels, and compact ``- - -`` sequence
    entries.  Block-scalar text is counted as if it were structure, which can only overestimate
    (no real file comes near the bound).
    """
    indents: list[int] = []
    flow = 0
    deepest = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        if flow == 0:
            if not stripped or stripped.startswith("#"):
                continue
            col = len(line) - len(stripped)
            while indents and indents[-1] > col:
                indents.pop()
            if not indents or indents[-1] < col:
                indents.append(col)
            block = len(indents)
            k = 0
            while stripped[k : k + 2] == "- " or stripped[k:] == "-":
                block += 1
                k += 2
                while k < len(stripped) and stripped[k] == " ":
                    k += 1
        else:
            block = len(indents)
        if not flow and "[" not in line and "{" not in line:
            # most lines: block structure only, no character scan needed (7× faster on rules/)
            deepest = max(deepest, block)
            if deepest > limit:
                return deepest, lineno
            continue
        i = len(line) - len(stripped)
        prev = " "
        while i < len(line):
            c = line[i]
            if c == "#" and prev in " \t":
                break
            if c in "\"'" and (flow or prev in " \t[{,:-"):
                i = _quoted_end(line, i)
                prev = line[i - 1]
                continue
            if c in "[{" and (flow or prev in " \t-:"):
                flow += 1
            elif c in "]}" and flow:
                flow -= 1
            deepest = max(deepest, block + flow)
            if deepest > limit:
                return deepest, lineno
            prev = c
            i += 1
        deepest = max(deepest, block + flow)
        if deepest > limit:
            return deepest, lineno
    return deepest, 0


def _walk(node: yaml.Node, path: tuple[Any, ...], lines: dict, file: str, seen_nodes: set) -> None:
    """Record the line of every node; refuse aliases (a node met twice).

    An alias makes the tree a graph: a 373-byte file of nested aliases expands to billions of
    nodes (took 20 s and 2.5 GB at 6 levels, never finished at 7), so aliases are refused before
    anything walks or copies the expansion.  The line is that of the key or sequence holding the
    alias, which is where a reader finds the ``*name``."""
    if id(node) in seen_nodes:
        raise InputError(file, "YAML anchors/aliases are not supported", line=lines.get(path))
    seen_nodes.add(id(node))
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key in seen:
                raise InputError(
                    file,
                    f"duplicate key {key!r} (first on line {seen[key]})",
                    line=key_node.start_mark.line + 1,
                )
            seen[key] = key_node.start_mark.line + 1
            if id(key_node) in seen_nodes:
                raise InputError(
                    file,
                    "YAML anchors/aliases are not supported",
                    line=key_node.start_mark.line + 1,
                )
            seen_nodes.add(id(key_node))
            # the key's own line is where a reader looks for an unknown or bad key (and where an
            # alias value is written)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines, file, seen_nodes)
            lines[(*path, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            if id(item) in seen_nodes:
                raise InputError(
                    file, "YAML anchors/aliases are not supported", line=lines.get(path)
                )
            _walk(item, (*path, i), lines, file, seen_nodes)


def _fix_keys(data: Any) -> Any:
    """YAML turns unquoted keys like ``yes``/``1`` into bool/int; our paths use the text."""
    if isinstance(data, dict):
        return {(k if isinstance(k, str) else str(k)): _fix_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_fix_keys(v) for v in data]
    return data


def load_yaml(path: str | Path, text: str | None = None) -> YamlDoc:
    """Parse ``path`` with the safe loader; every problem becomes ``InputError`` with the line.

    Hostile input is bounded before it can hang or crash the process: nesting deeper than
    :data:`MAX_DEPTH` is refused by a pre-scan (libyaml recurses on the C stack), aliases are
    refused while the line map is built (before any expansion), and a ``RecursionError`` left
    anywhere is an input error too, never an internal one.
    """
    path = str(path)
    if text is None:
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_YAML_BYTES + 1)
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
        if len(raw) > MAX_YAML_BYTES:
            raise InputError(
                path,
                f"larger than {MAX_YAML_BYTES >> 20} MiB: not a rule pack or config "
                "(the biggest real one is 15 KB; refused before parsing)",
            )
        if b"\0" in raw:
            # a binary file (or /etc/shadow-like data): never quote it back
            raise InputError(path, "not a YAML text file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from None
    elif len(text) > MAX_YAML_BYTES:
        raise InputError(path, f"larger than {MAX_YAML_BYTES >> 20} MiB: refused before parsing")
    depth, too_deep = nesting_depth(text, MAX_DEPTH)
    if too_deep:
        raise InputError(
            path, f"YAML nested more than {MAX_DEPTH} levels deep is not supported", line=too_deep
        )
    lines: dict[tuple[Any, ...], int] = {}
    try:
        loader = _SAFE_LOADER(text)
        try:
            # one parse: the node tree gives the lines (and shows aliases), the same tree is
            # then constructed
            node = loader.get_single_node()
            if node is not None:
                _walk(node, (), lines, path, set())
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        msg = f"malformed YAML: {problem}" + (f" ({context})" if context else "")
        opened = _unclosed_opener(exc)
        if opened is not None:  # the mistake is where the bracket or quote opened
            msg = (
                f"malformed YAML: {problem} ({context} that starts here, column "
                f"{opened.column + 1}, and is never closed; the parser gave up on line "
                f"{mark.line + 1})"
            )
            mark = opened
        if isinstance(exc, yaml.constructor.ConstructorError) and problem.startswith("cannot read"):
            msg = problem
        raise InputError(path, msg, line=mark.line + 1 if mark else None) from None
    except RecursionError:
        raise InputError(path, f"YAML nested too deeply (about {depth} levels)") from None
    doc = YamlDoc(path, _fix_keys(data), lines)
    for where, value in non_finite(doc.data):
        # .nan / .inf compare false with every limit: a NaN minimum turns every failure into a
        # pass, so no number in a pack or config may be anything but finite
        raise doc.error(
            where, f"{'.'.join(map(str, where)) or 'value'}: {value} is not a finite number"
        )
    return doc


#: the contexts PyYAML names for a construct opened by a bracket or a quote
_OPENERS = (
    "while parsing a flow sequence",
    "while parsing a flow mapping",
    "while scanning a quoted scalar",
)


def _unclosed_opener(exc: yaml.YAMLError) -> Any:
    """The mark of an unclosed ``[``, ``{`` or quote, else None.

    PyYAML's problem mark is where the parser gave up: for an unclosed bracket that is the end of
    the file or the next key, a line (or many) after the typo.  The context mark is the opener
    itself, which is the line to fix; for other errors (a bad indent) the problem mark is right
    and the context mark is the enclosing block, often line 1."""
    context = getattr(exc, "context", None) or ""
    opened = getattr(exc, "context_mark", None)
    if opened is None or not context.startswith(_OPENERS):
        return None
    return opened


def _describe(
    err: jsonschema.ValidationError, base: Sequence[Any] = ()
) -> tuple[tuple[Any, ...], str]:
    """A readable message for a schema error and the JSON path it belongs to (below ``base``)."""
    where = tuple(err.absolute_path)
    name = ".".join(str(p) for p in (*base, *where)) or "top level"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        patterns = [re.compile(p) for p in err.schema.get("patternProperties", {})]
        extra = sorted(
            k for k in err.instance if k not in allowed and not any(p.search(k) for p in patterns)
        )
        if extra:
            known = ", ".join(sorted(allowed)) if allowed else "none"
            return (*where, extra[0]), f"unknown key {extra[0]!r} in {name} (known: {known})"
    if err.validator == "required":
        return where, f"{name}: {err.message}"
    if err.validator == "enum":
        return (
            where,
            f"{name}: {err.instance!r} is not one of {', '.join(map(str, err.validator_value))}",
        )
    return where, f"{name}: {err.message}"


def validate(
    doc: YamlDoc, schema: Mapping[str, Any], data: Any = None, base: Sequence[Any] = ()
) -> None:
    """Validate ``data`` (default: the whole document) against ``schema``; raise the first error
    (the most specific one, by jsonschema's relevance) as ``file:line: message``."""
    data = doc.data if data is None else data
    validator = jsonschema.Draft7Validator(schema)
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    best = jsonschema.exceptions.best_match(errors)
    where, msg = _describe(best, base)
    raise doc.error((*base, *where), msg)


# ---------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------

_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR = {"type": "string", "minLength": 1}
_RANGE = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}

MATERIALS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "materials"],
    "properties": {
        "version": {"type": "string"},
        "tolerance": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"df_rel": _NUM, "dk_rel": _NUM},
        },
        "kicad_default": {
            "type": "object",
            "additionalProperties": False,
            "required": ["material", "epsilon_r", "loss_tangent"],
            "properties": {"material": _STR, "epsilon_r": _NUM, "loss_tangent": _NUM},
        },
        "glass_styles": {"type": "array", "items": _STR},
        "maker_prefixes": {"type": "array", "items": _STR},
        "not_a_material": {"type": "array", "items": _STR},
        "materials": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "aliases", "dk", "df", "tg_c", "td_c", "loss_class", "source"],
                "properties": {
                    "name": _STR,
                    "maker": _STR,
                    "aliases": {"type": "array", "items": _STR},
                    "dk": _NUM_OR_NULL,
                    "df": _NUM_OR_NULL,
                    "df_range": _RANGE,
                    "dk_range": _RANGE,
                    "freq_ghz": _NUM_OR_NULL,
                    "tg_c": _NUM_OR_NULL,
                    "tg_method": {"type": ["string", "null"]},
                    "tg_assumed": {"type": "boolean"},
                    "tg_not_applicable": {"type": "boolean"},
                    "td_c": _NUM_OR_NULL,
                    # null: no slash sheet known (then listed in unconfirmed_fields, [U])
                    "ipc4101": {"type": ["array", "null"], "items": _STR},
                    "loss_class": {
                        "enum": ["standard", "mid", "low", "very_low", "ultra_low", "extreme_low"]
                    },
                    "note": {"type": "string"},
                    "source": _STR,
                    "unconfirmed": {"type": "boolean"},
                    "unconfirmed_fields": {"type": "array", "items": _STR},
                },
            },
        },
    },
}

FOILS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "grades"],
    "properties": {
        "version": {"type": "string"},
        "grades": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "rank", "name", "aliases", "rz_um", "source"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[A-Z0-9]+$"},
                    "rank": {"type": "integer", "minimum": 0},
                    "name": _STR,
                    "aliases": {"type": "array", "items": _STR},
                    "rz_um": _RANGE,
                    "used_up_to": {"type": "string"},
                    "note": {"type": "string"},
                    "source": _STR,
                    "unconfirmed": {"type": "boolean"},
                },
            },
        },
    },
}

_PATTERNS = {"type": "array", "items": {"type": "string"}}

SIGNALS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "signals"],
    "properties": {
        "version": {"type": "string"},
        "exclude": _PATTERNS,
        "families": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["assume", "note"],
                "properties": {
                    "net_class": _PATTERNS,
                    "net_name": _PATTERNS,
                    "assume": _STR,
                    "note": _STR,
                },
            },
        },
        "signals": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$"},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "name",
                    "data_rate_gbps",
                    "modulation",
                    "nyquist_ghz",
                    "max_df",
                    "min_foil",
                    "max_stub_mm",
                    "zdiff_ohm",
                    "zdiff_tol_pct",
                    "source",
                ],
                "properties": {
                    "name": _STR,
                    "data_rate_gbps": {"type": "number", "exclusiveMinimum": 0},
                    "modulation": {"enum": ["NRZ", "PAM3", "PAM4"]},
                    "baud_gbd": {"type": "number", "exclusiveMinimum": 0},
                    "nyquist_ghz": {"type": "number", "exclusiveMinimum": 0},
                    "max_df": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "min_foil": _STR,
                    "max_stub_mm": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "min_fres_ratio": _NUM_OR_NULL,
                    "zdiff_ohm": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "zdiff_tol_pct": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "loss_budget_db": {"type": ["number", "null"], "exclusiveMinimum": 0},
                    "single_ended_ohm": _NUM_OR_NULL,
                    "recognise": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"net_class": _PATTERNS, "net_name": _PATTERNS},
                    },
                    "source": _STR,
                    "note": {"type": "string"},
                    "unconfirmed": {"type": "array", "items": _STR},
                },
            },
        },
    },
}

#: params of each check kind (after overrides).  Kinds other helpers own allow extra keys.
PARAM_SCHEMAS: dict[str, dict[str, Any]] = {
    "ir_drop": {
        "type": "object",
        "required": ["max_pct"],
        "properties": {"max_pct": {"type": "number", "exclusiveMinimum": 0}},
    },
    "current_density": {
        "type": "object",
        "required": ["max_plane_a_per_mm2", "max_via_a_per_mm2"],
        "properties": {
            "max_plane_a_per_mm2": {"type": "number", "exclusiveMinimum": 0},
            "max_via_a_per_mm2": {"type": "number", "exclusiveMinimum": 0},
        },
    },
    "layer_count": {
        "type": "object",
        "additionalProperties": False,
        "required": ["min", "max"],
        "properties": {
            "min": {"type": ["integer", "null"], "minimum": 1},
            "max": {"type": ["integer", "null"], "minimum": 1},
        },
    },
    "tg": {
        "type": "object",
        "additionalProperties": False,
        "required": ["min_tg_c"],
        "properties": {"min_tg_c": _NUM},
    },
    "copper_weight": {
        "type": "object",
        "additionalProperties": False,
        "required": ["min_oz"],
        "properties": {
            "min_oz": {"type": "number", "exclusiveMinimum": 0},
            "min_plane_fraction": {"type": "number", "minimum": 0, "maximum": 1},
        },
    },
    "material_consistency": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "df_tolerance_rel": {"type": "number", "minimum": 0},
            "dk_tolerance_rel": {"type": "number", "minimum": 0},
        },
    },
    "laminate_df": {
        "type": "object",
        "additionalProperties": False,
        "required": ["max_df"],
        "properties": {"max_df": {"type": "number", "exclusiveMinimum": 0}},
    },
    "foil": {
        "type": "object",
        "additionalProperties": False,
        "required": ["min_grade"],
        "properties": {"min_grade": _STR},
    },
    "impedance": {
        "type": "object",
        "required": ["zdiff_ohm", "tol_pct"],
        "properties": {
            "zdiff_ohm": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "tol_pct": {"type": ["number", "null"], "exclusiveMinimum": 0},
        },
    },
    "via_stub": {
        "type": "object",
        "required": ["max_stub_mm", "min_fres_ratio", "require_backdrill"],
        "properties": {
            "max_stub_mm": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "min_fres_ratio": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "require_backdrill": {"type": "boolean"},
        },
    },
    "open_channel": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"unknown_pairs": {"type": "boolean"}},
    },
    "insertion_loss": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "budget_db": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "margin_db": {"type": "number", "minimum": 0},
            "default_rz_um": {"type": "number", "minimum": 0},
            "roughness_model": {"enum": ["huray", "hammerstad"]},
            "remedy_foils": {"type": "array", "items": {"type": "string"}},
            "remedy_materials": {"type": "array", "items": {"type": "string"}},
        },
    },
    "pdn_impedance": {
        "type": "object",
        "required": [
            "target_ohm",
            "f_min_hz",
            "f_max_hz",
            "sweep_max_hz",
            "default_voltage",
            "default_ripple_pct",
            "default_transient_a",
            "vrm",
        ],
        "properties": {
            "target_ohm": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "f_min_hz": {"type": "number", "exclusiveMinimum": 0},
            "f_max_hz": {"type": "number", "exclusiveMinimum": 0},
            "sweep_max_hz": {"type": "number", "exclusiveMinimum": 0},
            "model_max_hz": {"type": "number", "exclusiveMinimum": 0},
            "default_voltage": {"type": "number", "exclusiveMinimum": 0},
            "default_ripple_pct": {"type": "number", "exclusiveMinimum": 0},
            "default_transient_a": {"type": "number", "exclusiveMinimum": 0},
            "vrm": {
                "type": "object",
                "required": ["r_ohm", "l_h"],
                "properties": {"r_ohm": _NUM, "l_h": _NUM},
            },
        },
    },
}

_RANGE_LIST = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["min", "max", "weight", "source"],
        "properties": {
            "min": _NUM,
            "max": _NUM,
            "weight": {"type": "number", "minimum": 0},
            "source": _STR,
        },
    },
}

PACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["pack", "version", "rules"],
    "properties": {
        "pack": {"type": "string", "pattern": "^[a-z][a-z0-9_-]*$"},
        "version": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "follows": {"type": "string"},
        "applies_to": {"type": "array", "items": {"enum": list(CLASSES)}},
        "profile": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "layer_count": _RANGE_LIST,
                "board_side_mm": _RANGE_LIST,
                "power_copper_oz": _RANGE_LIST,
                "tg_c": _RANGE_LIST,
            },
        },
        "rules": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["check", "severity", "params", "why", "source"],
                "properties": {
                    "id": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]+$"},
                    "check": {"enum": list(CHECK_KINDS)},
                    "signal": {"type": "string"},
                    "severity": {"enum": [s.value for s in Severity]},
                    "params": {"type": "object"},
                    "why": {"type": "string", "minLength": 10},
                    "source": {"type": "string", "minLength": 3},
                    "title": {"type": "string"},
                },
            },
        },
    },
}


# ---------------------------------------------------------------------------------------------
# Library objects
# ---------------------------------------------------------------------------------------------


def _compile(
    patterns: Iterable[str], doc: YamlDoc, where: tuple[Any, ...]
) -> tuple[re.Pattern[str], ...]:
    out = []
    for i, p in enumerate(patterns):
        try:
            out.append(re.compile(p, re.IGNORECASE))
        except re.error as exc:
            raise doc.error((*where, i), f"bad regular expression {p!r}: {exc}") from None
    return tuple(out)


@dataclass(frozen=True)
class SignalType:
    """A kind of high-speed signal and what it asks of the board (from ``signals.yaml``)."""

    id: str
    name: str
    data_rate_gbps: float
    modulation: str
    baud_gbd: float
    nyquist_hz: float
    max_df: float | None
    min_foil: str
    max_stub_mm: float | None
    min_fres_ratio: float | None
    zdiff_ohm: float | None
    zdiff_tol_pct: float | None
    source: str
    single_ended_ohm: float | None = None
    #: this board's share of the channel's insertion-loss budget at Nyquist (dB), where public
    loss_budget_db: float | None = None
    unconfirmed: tuple[str, ...] = ()
    class_patterns: tuple[re.Pattern[str], ...] = ()
    name_patterns: tuple[re.Pattern[str], ...] = ()
    note: str = ""


@dataclass(frozen=True)
class SignalFamily:
    """Signals whose generation a name does not tell (``PCIe_TX0``): recognised, then assumed."""

    id: str
    assume: str
    note: str
    class_patterns: tuple[re.Pattern[str], ...] = ()
    name_patterns: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True)
class FoilGrade:
    id: str
    rank: int
    name: str
    aliases: tuple[str, ...]
    rz_um: tuple[float, float]
    source: str


@dataclass(frozen=True)
class Foils:
    grades: tuple[FoilGrade, ...]
    version: str = ""

    def grade(self, typed: str | None) -> FoilGrade | None:
        """The grade a user's string names (case, spaces and dashes ignored); None if unknown."""
        if not typed:
            return None
        key = re.sub(r"[\s_-]+", "", typed).upper()
        for g in self.grades:
            if key == g.id or any(key == re.sub(r"[\s_-]+", "", a).upper() for a in g.aliases):
                return g
        return None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.grades)


@dataclass(frozen=True)
class ClassPack:
    name: str
    version: str
    file: str
    rules: tuple[Rule, ...]
    description: str = ""
    follows: str = ""
    profile: Mapping[str, Any] = field(default_factory=dict)
    applies_to: tuple[str, ...] = CLASSES


@dataclass(frozen=True)
class Library:
    """Everything under ``rules/``, validated."""

    signals: Mapping[str, SignalType]
    families: Mapping[str, SignalFamily]
    exclude: tuple[re.Pattern[str], ...]
    materials: MaterialLibrary
    foils: Foils
    packs: Mapping[str, ClassPack]
    files: Mapping[str, str]  # kind -> path
    versions: Mapping[str, str]  # kind -> version
    references: References = field(default_factory=References)

    def pack_info(self, names: Iterable[str]) -> list[dict[str, str]]:
        out = []
        for name in names:
            p = self.packs[name]
            out.append({"name": p.name, "version": p.version, "file": p.file})
        for kind in ("signals", "materials", "foils"):
            out.append({"name": kind, "version": self.versions[kind], "file": self.files[kind]})
        return out


def load_signals(
    path: Path, foils: Foils, refs: Mapping[str, Any] | None = None
) -> tuple[dict[str, SignalType], dict[str, SignalFamily], tuple]:
    doc = load_yaml(path)
    validate(doc, SIGNALS_SCHEMA)
    data = doc.data
    check_sources(doc, refs, (("signals", sid, "source") for sid in data["signals"]))
    signals: dict[str, SignalType] = {}
    for sid, s in data["signals"].items():
        where = ("signals", sid)
        if foils.grade(s["min_foil"]) is None:
            raise doc.error(
                (*where, "min_foil"),
                f"unknown foil grade {s['min_foil']!r} (known: {', '.join(foils.ids)})",
            )
        rec = s.get("recognise", {})
        baud = float(s.get("baud_gbd") or s["data_rate_gbps"])
        signals[sid] = SignalType(
            id=sid,
            name=s["name"],
            data_rate_gbps=float(s["data_rate_gbps"]),
            modulation=s["modulation"],
            baud_gbd=baud,
            nyquist_hz=float(s["nyquist_ghz"]) * 1e9,
            max_df=s["max_df"],
            min_foil=foils.grade(s["min_foil"]).id,  # type: ignore[union-attr]
            max_stub_mm=s["max_stub_mm"],
            min_fres_ratio=s.get("min_fres_ratio"),
            zdiff_ohm=s["zdiff_ohm"],
            zdiff_tol_pct=s["zdiff_tol_pct"],
            source=s["source"],
            single_ended_ohm=s.get("single_ended_ohm"),
            loss_budget_db=s.get("loss_budget_db"),
            unconfirmed=tuple(s.get("unconfirmed", ())),
            class_patterns=_compile(
                rec.get("net_class", ()), doc, (*where, "recognise", "net_class")
            ),
            name_patterns=_compile(rec.get("net_name", ()), doc, (*where, "recognise", "net_name")),
            note=s.get("note", ""),
        )
    families = {}
    for fid, f in data.get("families", {}).items():
        if f["assume"] not in signals:
            raise doc.error(("families", fid, "assume"), f"unknown signal type {f['assume']!r}")
        families[fid] = SignalFamily(
            id=fid,
            assume=f["assume"],
            note=" ".join(f["note"].split()),
            class_patterns=_compile(f.get("net_class", ()), doc, ("families", fid, "net_class")),
            name_patterns=_compile(f.get("net_name", ()), doc, ("families", fid, "net_name")),
        )
    exclude = _compile(data.get("exclude", ()), doc, ("exclude",))
    return signals, families, exclude


def load_foils(path: Path, refs: Mapping[str, Any] | None = None) -> Foils:
    doc = load_yaml(path)
    validate(doc, FOILS_SCHEMA)
    check_sources(doc, refs, (("grades", i, "source") for i in range(len(doc.data["grades"]))))
    grades = []
    for i, g in enumerate(doc.data["grades"]):
        if g["rank"] != i:
            raise doc.error(
                ("grades", i, "rank"), f"grades must be listed smoothest last with rank {i}"
            )
        grades.append(
            FoilGrade(
                g["id"], g["rank"], g["name"], tuple(g["aliases"]), tuple(g["rz_um"]), g["source"]
            )  # type: ignore[arg-type]
        )
    return Foils(tuple(grades), str(doc.data["version"]))


def load_materials(path: Path, refs: Mapping[str, Any] | None = None) -> MaterialLibrary:
    """Load the laminate library.  ``ipc4101: null`` (slash sheet not known) must be marked
    unconfirmed, so an unknown sheet is never mistaken for "no sheet applies"; the library
    object holds it as an empty tuple."""
    doc = load_yaml(path)
    validate(doc, MATERIALS_SCHEMA)
    check_sources(doc, refs, (("materials", m, "source") for m in doc.data["materials"]))
    mats = {}
    for mid, m in doc.data["materials"].items():
        if "ipc4101" in m and m["ipc4101"] is None:
            if "ipc4101" not in m.get("unconfirmed_fields", ()):
                raise doc.error(
                    ("materials", mid, "ipc4101"),
                    f"{mid}: ipc4101 is null (unknown) but not listed in unconfirmed_fields",
                )
            m = {k: v for k, v in m.items() if k != "ipc4101"}
        mats[mid] = m
    return library_from_data({**doc.data, "materials": mats})


def _rule_id(pack: str, r: Mapping[str, Any]) -> str:
    if r.get("id"):
        return str(r["id"])
    return ".".join(x for x in (pack, r["check"], r.get("signal")) if x)


def check_params(
    doc: YamlDoc, where: tuple[Any, ...], check: str, params: Mapping[str, Any], foils: Foils
) -> None:
    """Validate one rule's params against its kind's schema (and foil grades by name)."""
    schema = PARAM_SCHEMAS.get(check)
    if schema is not None:
        validate(doc, schema, data=dict(params), base=where)
    if check == "foil" and foils.grade(str(params.get("min_grade"))) is None:
        raise doc.error(
            (*where, "min_grade"),
            f"unknown foil grade {params.get('min_grade')!r} (known: {', '.join(foils.ids)})",
        )
    if check == "layer_count":
        lo, hi = params.get("min"), params.get("max")
        if lo is not None and hi is not None and lo > hi:
            raise doc.error(where, f"min {lo} is above max {hi}")


def load_pack(
    path: Path | str,
    signals: Mapping[str, SignalType],
    foils: Foils,
    refs: Mapping[str, Any] | None = None,
) -> ClassPack:
    """Load one pack file (a class pack or a project's extra pack).  With ``refs`` (the
    shipped class packs) every ``source`` must cite references by id (:func:`check_sources`);
    a project's extra pack may cite them but is not held to it."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict) or not ({"pack", "rules"} & set(doc.data)):
        # no line, no key: a file that is not a pack at all (someone's /etc/shadow) must not be
        # quoted back in the error
        raise InputError(
            doc.path, "not a rule pack (a YAML mapping with pack:, version: and rules:)"
        )
    validate(doc, PACK_SCHEMA)
    data = doc.data
    cited = [("follows",)] + [("rules", i, "source") for i in range(len(data["rules"]))]
    for key, ranges in (data.get("profile") or {}).items():
        cited += [("profile", key, j, "source") for j in range(len(ranges))]
    check_sources(doc, refs, cited)
    name = data["pack"]
    rules = []
    seen: dict[str, int] = {}
    for i, r in enumerate(data["rules"]):
        where = ("rules", i)
        sig = r.get("signal")
        if sig is not None and sig not in signals:
            raise doc.error(
                (*where, "signal"), f"unknown signal type {sig!r} (known: {', '.join(signals)})"
            )
        check_params(doc, (*where, "params"), r["check"], r["params"], foils)
        rid = _rule_id(name, r)
        if rid in seen:
            raise doc.error(where, f"duplicate rule id {rid!r} (rule {seen[rid]} has it too)")
        seen[rid] = i
        rules.append(
            Rule(
                id=rid,
                check=r["check"],
                severity=Severity(r["severity"]),
                params=dict(r["params"]),
                why=" ".join(r["why"].split()),
                source=r["source"],
                pack=name,
                signal=sig,
                title=r.get("title", ""),
            )
        )
    return ClassPack(
        name=name,
        version=str(data["version"]),
        file=str(path),
        rules=tuple(rules),
        description=data.get("description", ""),
        follows=" ".join(str(data.get("follows", "")).split()),
        profile=data.get("profile", {}),
        applies_to=tuple(data.get("applies_to", CLASSES)),
    )


def load_library(rules_dir: str | Path | None = None) -> Library:
    """Load and validate everything under ``rules/`` (class packs included)."""
    base = Path(rules_dir) if rules_dir is not None else RULES_DIR
    files = {
        "foils": base / "foils.yaml",
        "signals": base / "signals.yaml",
        "materials": base / "materials.yaml",
        "references": base / "references.yaml",
    }
    refs = load_references(files["references"])
    foils = load_foils(files["foils"], refs)
    signals, families, exclude = load_signals(files["signals"], foils, refs)
    materials = load_materials(files["materials"], refs)
    check_capacitor_sources(base / "capacitors.yaml", refs)
    packs = {}
    for cls in CLASSES:
        p = load_pack(base / "classes" / f"{cls}.yaml", signals, foils, refs)
        if p.name != cls:
            raise InputError(
                str(base / "classes" / f"{cls}.yaml"),
                f"pack name {p.name!r} should be {cls!r}",
                line=1,
            )
        packs[cls] = p
    versions = {
        "foils": foils.version,
        "signals": str(load_yaml(files["signals"]).data["version"]),
        "materials": materials.version,
        "references": refs.version,
    }
    return Library(
        signals=signals,
        families=families,
        exclude=exclude,
        materials=materials,
        foils=foils,
        packs=packs,
        files={k: str(v) for k, v in files.items()},
        versions=versions,
        references=refs,
    )


# ---------------------------------------------------------------------------------------------
# Citations: every source names publications from references.yaml
# ---------------------------------------------------------------------------------------------


def load_references(path: Path | str) -> References:
    """Load ``references.yaml``: the publications the rule data cites, by id."""
    doc = load_yaml(path)
    validate(doc, REFERENCES_SCHEMA)
    return references_from_data(doc.data)


def check_sources(
    doc: YamlDoc, refs: Mapping[str, Any] | None, where: Iterable[tuple[Any, ...]]
) -> None:
    """Every ``source`` at the JSON paths ``where`` (missing ones skipped) cites known
    references (:func:`references.check_source`); the first that does not is a
    ``file:line`` error.  ``refs`` None: not checked (a project's own pack)."""
    if refs is None:
        return
    for path in where:
        node: Any = doc.data
        for k in path:
            in_map = isinstance(node, Mapping) and k in node
            in_list = isinstance(node, list) and isinstance(k, int) and 0 <= k < len(node)
            if in_map or in_list:
                node = node[k]
            else:
                node = None
                break
        if node is None:
            continue
        why = check_source(str(node), refs)
        if why:
            raise doc.error(path, why)


def check_capacitor_sources(path: Path, refs: Mapping[str, Any]) -> None:
    """The sources of ``capacitors.yaml`` (mounting ESL, package ESLs, ESR curve) cite known
    references too (the file is loaded for use by ``analysis/capacitors.py``)."""
    if not Path(path).is_file():
        return
    doc = load_yaml(path)
    data = doc.data if isinstance(doc.data, Mapping) else {}
    where: list[tuple[Any, ...]] = [("mounting_esl_h", "source"), ("esr_by_value", "source")]
    where += [("packages", k, "source") for k in (data.get("packages") or {})]
    check_sources(doc, refs, where)


# ---------------------------------------------------------------------------------------------
# Rules of a class, with project overrides
# ---------------------------------------------------------------------------------------------


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def override_matches(rule_id: str, pattern: str) -> bool:
    """Whether a ``rules:`` override key applies to the rule ``rule_id``.

    A key is a glob on rule ids (``edge.laminate_df.*``), or the id a finding carries: checks
    report some findings under a sub-id of their rule (``edge.material_consistency.kicad_default``),
    and users copy the id from the report.  Params and severity belong to the rule, so a sub-id
    selects its rule (one more dot-separated word after the rule's id)."""
    if fnmatch.fnmatchcase(rule_id, pattern):
        return True
    return pattern.startswith(rule_id + ".") and "." not in pattern[len(rule_id) + 1 :]


def _override_note(
    r: Rule, over: Mapping[str, Any], doc: YamlDoc | None, where: tuple[Any, ...]
) -> tuple[str, str]:
    """The ``why`` and ``source`` of a rule after a project override.

    A limit the project changed is the project's limit: leaving the pack's source on it would
    tell JSON, SARIF and ``accel-drc rules`` readers that the cited article or datasheet says a number it
    never said.  So when params change (or a why is given) the source names the config line and
    the source it overrides, unless the override gives its own source."""
    changed = bool(over.get("params")) and _merge(r.params, over["params"]) != r.params
    if not changed and "why" not in over and "source" not in over:
        return r.why, r.source
    here = "project config"
    if doc is not None:
        line = doc.line_of(where)
        here = Path(doc.path).name + (f":{line}" if line is not None else "")
    source = over.get("source") or f"{here} (overrides {r.source})"
    if "why" in over:
        why = str(over["why"])
    elif changed:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(over["params"].items()))
        why = f"Limit set by the project ({here}: {shown}), not by the pack. Pack rule: {r.why}"
    else:
        why = r.why
    return why, source


def rules_for_class(
    lib: Library,
    board_class: str,
    extra_packs: Sequence[ClassPack] = (),
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    override_doc: YamlDoc | None = None,
    override_base: Sequence[Any] = ("rules",),
) -> tuple[list[Rule], list[str]]:
    """The rules that apply to ``board_class``: its pack, the extra packs that apply to it, then
    the project's overrides (``{rule-id glob or finding id: {severity, params, enabled, why,
    source}}``) in file order (see :func:`override_matches`).

    Returns the rules and the names of the packs used.  An override that matches no rule of any
    class is a config error (a typo would otherwise silently change nothing).  An overridden
    limit's ``why`` and ``source`` say it came from the config (:func:`_override_note`).
    """
    pack = lib.packs[board_class]
    rules = list(pack.rules)
    used = [pack.name]
    for extra in extra_packs:
        if board_class in extra.applies_to:
            have = {r.id for r in rules}
            for r in extra.rules:
                if r.id in have:
                    raise InputError(
                        extra.file,
                        f"rule id {r.id!r} is already defined (change it with an override under "
                        "rules: in accel-drc.yaml instead)",
                    )
            rules.extend(extra.rules)
            used.append(extra.name)
    if overrides:
        all_ids = [r.id for p in (*lib.packs.values(), *extra_packs) for r in p.rules]
        for glob, over in overrides.items():
            where = (*override_base, glob)
            if not any(override_matches(i, glob) for i in all_ids):
                msg = f"rule override {glob!r} matches no rule (see `accel-drc rules`)"
                if override_doc is not None:
                    raise override_doc.error(where, msg)
                raise InputError("<config>", msg)
            new = []
            for r in rules:
                if not override_matches(r.id, glob):
                    new.append(r)
                    continue
                if over.get("enabled") is False:
                    continue
                params = _merge(r.params, over.get("params", {}))
                if override_doc is not None:
                    check_params(override_doc, (*where, "params"), r.check, params, lib.foils)
                why, source = _override_note(r, over, override_doc, where)
                new.append(
                    Rule(
                        id=r.id,
                        check=r.check,
                        severity=Severity(over.get("severity", r.severity.value)),
                        params=params,
                        why=why,
                        source=source,
                        pack=r.pack,
                        signal=r.signal,
                        title=r.title,
                    )
                )
            rules = new
    return rules, used


def range_score(value: float, ranges: Sequence[Mapping[str, Any]], scale: float) -> float:
    """How well ``value`` fits overlapping ranges: the best weight, decaying with the distance
    outside a range (e-folding length ``scale``), so ranges are evidence, never a hard cut."""
    best = 0.0
    for r in ranges:
        lo, hi, w = float(r["min"]), float(r["max"]), float(r["weight"])
        d = lo - value if value < lo else (value - hi if value > hi else 0.0)
        best = max(best, w * math.exp(-d / scale))
    return best
