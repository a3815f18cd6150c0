"""The ``.kicad_dru`` beside a board: KiCad's custom design rules, as far as they declare how a
net class is routed.

Why: the designer's impedance target lives there as geometry (``85_ohm_inner``: track width
0.15 mm, pair gap 0.125 mm on inner layers for ``A.NetClass == '85Ohm-diff*'``).  The signal
owner (``analysis/signals.py``) reads the Ω value a rule's name states, and the impedance check
shows the declared width and gap beside the measured ones.

Also read (:func:`parse_timing`): every ``(constraint skew …)`` and ``(constraint length …)``
with its ``(min …)``/``(max …)`` in time (``ps``, ``fs``: KiCad's time domain) or length, and
``within_diff_pairs``, of a rule whose condition selects nets by class, name or pair
(:func:`condition_terms`): the designer's limits the ``skew`` check judges by.

Read: every ``(rule …)`` whose condition names one net class (``A.NetClass == '<glob>'``) and
that constrains ``track_width``, ``diff_pair_gap`` or ``diff_pair_uncoupled``; its ``(layer …)``
(``inner``, ``outer``, a layer name).  Everything else (clearance rules, conditions on other
fields) is left to KiCad's own DRC.  Lengths: ``mm`` (KiCad's default unit), ``mil``, ``in``,
``um``.  Lines starting with ``#`` are comments, as KiCad reads them.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..errors import InputError
from ..hostile import MAX_PROJECT_BYTES, read_regular
from ..model import DesignRule, TimingRule
from .sexpr import find_balanced, line_of, parse_span

if TYPE_CHECKING:
    from .kicad_project import ProjectInfo

#: the net-class term of a rule condition: ``A.NetClass == '85Ohm-diff*'``
_CLASS_TERM = re.compile(r"A\.NetClass\s*==\s*'([^']*)'")
_LENGTH = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))\s*(mm|mil|mils|in|um|µm)?$", re.IGNORECASE)
_MM_PER = {"": 1.0, "mm": 1.0, "mil": 0.0254, "mils": 0.0254, "in": 25.4, "um": 1e-3, "µm": 1e-3}
_KINDS = ("track_width", "diff_pair_gap", "diff_pair_uncoupled")
#: a time value of a skew or length constraint (KiCad's time units: ``ps``, ``fs``)
_TIME = re.compile(r"^([+]?(?:\d+\.?\d*|\.\d+))\s*(ps|fs)$", re.IGNORECASE)
#: one term of a condition that selects nets by class, name or pair
_TERM = re.compile(
    r"A\.(NetClass|NetName)\s*==\s*'([^']*)'|A\.(hasNetclass|inDiffPair)\(\s*'([^']*)'\s*\)"
)


def dru_path_for(board_path: str) -> str:
    """``board.kicad_pcb`` -> ``board.kicad_dru`` (same folder, same stem)."""
    return os.path.splitext(board_path)[0] + ".kicad_dru"


def _length_mm(text: str) -> float | None:
    """``0.15mm`` / ``6mil`` / ``0.15`` in mm; None for anything else (an expression)."""
    m = _LENGTH.match(text.strip())
    if m is None:
        return None
    return float(m.group(1)) * _MM_PER[(m.group(2) or "").lower()]


def _constraint(node: list) -> tuple[float | None, float | None, float | None]:
    """(min, opt, max) of a ``(constraint kind (min …) (opt …) (max …))`` node."""
    got: dict[str, float | None] = {}
    for item in node[2:]:
        if isinstance(item, list) and len(item) >= 2 and isinstance(item[0], str):
            got[item[0]] = _length_mm(item[1]) if isinstance(item[1], str) else None
    return got.get("min"), got.get("opt"), got.get("max")


def _strip_comments(text: str) -> str:
    """The text with ``#`` comment lines blanked (kept as empty lines: line numbers stay)."""
    return "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.split("\n"))


def _nodes(text: str, path: str) -> Iterator[tuple[list, int]]:
    """Each top-level ``(…)`` node of a ``.kicad_dru`` text with its line; a file whose
    parentheses do not balance is bad input, named with its line."""
    data = _strip_comments(text).encode("utf-8", "replace")
    pos = 0
    while True:
        start = data.find(b"(", pos)
        if start < 0:
            break
        try:
            end = find_balanced(data, start)
        except ValueError:
            raise InputError(
                path, "unbalanced parentheses in the custom rules", line=line_of(data, start)
            ) from None
        node = parse_span(data, start, end)
        pos = end
        if isinstance(node, list):
            yield node, line_of(data, start)


def parse_dru(text: str, path: str) -> tuple[DesignRule, ...]:
    """The net-class routing rules of a ``.kicad_dru`` text (module doc)."""
    rules = (_rule(node, line) for node, line in _nodes(text, path))
    return tuple(r for r in rules if r is not None)


def parse_timing(text: str, path: str) -> tuple[TimingRule, ...]:
    """The skew and length rules of a ``.kicad_dru`` text (:class:`TimingRule`): one per
    ``(constraint skew|length …)`` of a rule whose condition :func:`condition_terms` reads."""
    out: list[TimingRule] = []
    for node, line in _nodes(text, path):
        out.extend(_timing(node, line))
    return tuple(out)


def _time_or_length(text: str) -> tuple[float, bool] | None:
    """``5ps`` -> (5.0, True); ``500fs`` -> (0.5, True); ``0.1mm`` / ``4mil`` -> (mm, False);
    None for anything else (an expression, a unit KiCad does not take)."""
    m = _TIME.match(text.strip())
    if m is not None:
        return float(m.group(1)) * (1e-3 if m.group(2).lower() == "fs" else 1.0), True
    mm = _length_mm(text)
    return None if mm is None else (mm, False)


def condition_terms(condition: str) -> tuple[tuple[str, str], ...] | None:
    """The alternatives of a rule condition made only of ``A.NetClass == 'glob'``,
    ``A.NetName == 'glob'``, ``A.hasNetclass('glob')`` and ``A.inDiffPair('glob')`` joined by
    ``||``, as (field, glob) with field ``NetClass`` | ``NetName`` | ``inDiffPair``; None for
    any other condition (``&&``, other fields, ``B.``: which nets it selects is KiCad's to say)."""
    out = []
    for part in condition.split("||"):
        m = _TERM.fullmatch(part.strip())
        if m is None:
            return None
        field = m.group(1) or m.group(3)
        out.append(("NetClass" if field == "hasNetclass" else field, m.group(2) or m.group(4)))
    return tuple(out) or None


def _timing(node: list, line: int) -> list[TimingRule]:
    """The :class:`TimingRule` of each skew/length constraint of one ``(rule …)`` node."""
    if len(node) < 2 or node[0] != "rule" or not isinstance(node[1], str):
        return []
    layer, terms, got = "", None, []
    for item in node[2:]:
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            continue
        if item[0] == "layer" and len(item) > 1 and isinstance(item[1], str):
            layer = item[1]
        elif item[0] == "condition" and len(item) > 1 and isinstance(item[1], str):
            terms = condition_terms(item[1])
        elif item[0] == "constraint" and len(item) > 1 and item[1] in ("skew", "length"):
            got.append(item)
    if terms is None:
        return []
    out = []
    for c in got:
        vals: dict[str, tuple[float, bool]] = {}
        within = False
        for opt in c[2:]:
            if opt == ["within_diff_pairs"]:
                within = True
            elif isinstance(opt, list) and len(opt) == 2 and opt[0] in ("min", "max"):
                v = _time_or_length(opt[1]) if isinstance(opt[1], str) else None
                if v is not None:
                    vals[opt[0]] = v
        domains = {t for _, t in vals.values()}
        if len(domains) != 1:  # no value read, or mixed units (KiCad refuses those too)
            continue
        out.append(
            TimingRule(
                node[1],
                c[1],
                terms,
                vals["min"][0] if "min" in vals else None,
                vals["max"][0] if "max" in vals else None,
                time=domains.pop(),
                within_diff_pairs=within and c[1] == "skew",
                layer=layer,
                line=line,
            )
        )
    return out


def _rule(node: list, line: int) -> DesignRule | None:
    """One ``(rule "name" …)`` node as a :class:`DesignRule`, or None when it does not
    constrain the routing of exactly one net class."""
    if len(node) < 2 or node[0] != "rule" or not isinstance(node[1], str):
        return None
    layer, classes = "", []
    found: dict[str, tuple[float | None, float | None, float | None]] = {}
    for item in node[2:]:
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            continue
        if item[0] == "layer" and len(item) > 1 and isinstance(item[1], str):
            layer = item[1]
        elif item[0] == "condition" and len(item) > 1 and isinstance(item[1], str):
            classes = _CLASS_TERM.findall(item[1])
        elif item[0] == "constraint" and len(item) > 1 and item[1] in _KINDS:
            found[item[1]] = _constraint(item)
    if len(classes) != 1 or not found:
        return None
    return DesignRule(
        name=node[1],
        net_class=classes[0],
        layer=layer,
        track_width=found.get("track_width"),
        diff_pair_gap=found.get("diff_pair_gap"),
        diff_pair_uncoupled=found.get("diff_pair_uncoupled"),
        line=line,
    )


def _dru_text(path: str) -> str:
    """A ``.kicad_dru``'s text (bounded like a project file); not UTF-8: bad input."""
    raw = read_regular(path, MAX_PROJECT_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not a KiCad custom rules file (not UTF-8 text)") from None


def read_dru(path: str) -> tuple[DesignRule, ...]:
    """Read a ``.kicad_dru``'s net-class routing rules; not UTF-8 or unbalanced: bad input."""
    return parse_dru(_dru_text(path), path)


def with_design_rules(project: ProjectInfo) -> ProjectInfo:
    """``project`` with the rules of the ``.kicad_dru`` beside it (same stem), if there is one:
    the net-class routing rules in ``net_classes.design_rules``, the skew and length rules in
    ``net_classes.timing_rules``."""
    path = dru_path_for(project.path)
    if not os.path.isfile(path):
        return project
    text = _dru_text(path)
    rules, timing = parse_dru(text, path), parse_timing(text, path)
    if not rules and not timing:
        return project
    classes = dataclasses.replace(project.net_classes, design_rules=rules, timing_rules=timing)
    return dataclasses.replace(project, net_classes=classes)
