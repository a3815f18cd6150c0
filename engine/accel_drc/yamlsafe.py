"""The hardened YAML loader every rule file and config goes through, and schema validation.

One loader for everything a user or the rule data writes in YAML (class packs, ``signals.yaml``,
``materials.yaml``, ``foils.yaml``, ``references.yaml``, ``connectors.yaml``,
``capacitors.yaml``, ``accel-drc.yaml``): a safe loader (libyaml's when PyYAML has it) that
composes the node tree once, so every value has its line and a mistake is reported as
``file:line: what is wrong`` (exit 3).  Hostile input is bounded before it can hang or crash the
process (size, nesting depth, aliases, NUL bytes, non-finite numbers); see
``docs/hostile-input.md``.

The JSON schemas these files are validated against are JSON files beside the data
(``rules/schemas/<name>.schema.json``, shipped as package data): :func:`load_schema`.

The bundled rule files are not parsed on every run: when they are byte-identical to what was
validated when the package was built, their data comes from the shipped snapshot
(:mod:`accel_drc.bundled`) as a ``trusted`` document, which :func:`validate` does not validate
again (so ``jsonschema`` is imported only for a user's config or pack, or an edited rule file).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import bundled
from .errors import InputError
from .hostile import MAX_YAML_BYTES, non_finite, over_limit, read_regular

#: where the JSON schemas of the rule data and the config live (package data)
SCHEMA_DIR = Path(__file__).resolve().parent / "rules" / "schemas"


Path_ = tuple  # a JSON path: tuple of str keys and int indexes


@dataclass
class YamlDoc:
    """A parsed YAML file plus the line (1-based) of every node, keyed by its JSON path.

    ``trusted``: the data of a bundled rule file from the validated snapshot
    (:mod:`accel_drc.bundled`); its line map is built only if a line is asked for."""

    path: str
    data: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)
    trusted: bool = False

    def line_of(self, where: Sequence[Any]) -> int | None:
        """Line of the deepest node on ``where`` that exists (an error in a missing key points at
        its parent)."""
        if self.trusted and not self.lines:
            with bundled.disabled():  # parse the file for its lines (never on a clean run)
                self.lines = load_yaml(self.path).lines
        where = tuple(where)
        while True:
            if where in self.lines:
                return self.lines[where]
            if not where:
                return None
            where = where[:-1]

    def error(self, where: Sequence[Any], message: str) -> InputError:
        return InputError(self.path, message, line=self.line_of(where))


#: libyaml's safe loader when PyYAML was built with it (much faster than the pure-Python
#: one), else the pure-Python SafeLoader.  Both
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
            # most lines: block structure only, no character scan needed
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
        # a regular file (never a device or a FIFO) of at most 1 MiB: the biggest real one is
        # 15 KB, refused before parsing
        raw = read_regular(path, MAX_YAML_BYTES)
        if b"\0" in raw:
            # a binary file (or /etc/shadow-like data): never quote it back
            raise InputError(path, "not a YAML text file")
        known = bundled.trusted_data(path, raw)
        if known is not bundled.MISSING:
            return YamlDoc(path, known, trusted=True)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from None
    elif len(text) > MAX_YAML_BYTES:
        raise over_limit(path, len(text.encode("utf-8", "surrogatepass")), MAX_YAML_BYTES)
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
        if "nesting depth" in problem:  # libyaml >= 0.2.6 (PyYAML 6.0.4) has a depth bound too
            msg = f"YAML nested too deeply (about {depth} levels)"
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


def _describe(err: Any, base: Sequence[Any] = ()) -> tuple[tuple[Any, ...], str]:
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
    (the most specific one, by jsonschema's relevance) as ``file:line: message``.

    A ``trusted`` document (bundled data from the validated snapshot) passed this same
    validation when the snapshot was built: nothing to do, and ``jsonschema`` (slow to
    import) is not imported."""
    if doc.trusted:
        return
    import jsonschema

    data = doc.data if data is None else data
    validator = jsonschema.Draft7Validator(schema)
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    best = jsonschema.exceptions.best_match(errors)
    where, msg = _describe(best, base)
    raise doc.error((*base, *where), msg)


@functools.cache
def _schema_text(name: str) -> str:
    return (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """The JSON schema (draft 7) ``rules/schemas/<name>.schema.json``: a fresh copy each call, so
    a caller may extend it (the pack schema gets the registry's check kinds) without touching
    anyone else's."""
    return copy.deepcopy(json.loads(_schema_text(name)))
