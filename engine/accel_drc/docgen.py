"""The rule reference, generated from the check registry and the rule packs.

Like Ruff's rule docs (generated from each rule's doc comment), the reference of every check
kind comes from its module (:mod:`accel_drc.checks`: the docstring sections and the ``PARAMS``
schema) and the reference of every rule from the packs (id, severity, limit, why, source), so
the documentation cannot drift from the code.  ``accel-drc rules --format markdown`` prints it;
``docs/rules.md`` holds it between the markers :data:`BEGIN` and :data:`END`, and a test fails
when the committed text differs from what this module generates.  Regenerate with::

    python -m accel_drc.docgen docs/rules.md          # or --check to only compare
    accel-drc rules --format markdown --write docs/rules.md

Library code: every function returns text, nothing here prints except :func:`main`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .checks import SECTIONS, CheckKind, discover
from .errors import InputError

BEGIN = "<!-- generated: check kinds (python -m accel_drc.docgen docs/rules.md) -->"
END = "<!-- /generated -->"


def _md(text: str) -> str:
    """reStructuredText-ish docstring markup as Markdown: ````x```` -> `` `x` ``, roles dropped."""
    text = re.sub(r":(?:mod|func|class|data|meth):`([^`]*)`", r"`\1`", text)
    return text.replace("``", "`")


def _summary(kind: CheckKind) -> str:
    """The summary line without the ````kind````: prefix the module docstring starts with."""
    return _md(re.sub(r"^``?[a-z0-9_]+``?:\s*", "", kind.summary))


def _cell(text: Any) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(_md(str(text)).split()).replace("|", "\\|")


def _type(schema: Mapping[str, Any]) -> str:
    t = schema.get("type", "")
    if isinstance(t, list):
        t = " or ".join(t)
    if "enum" in schema:
        t = "one of " + ", ".join(map(str, schema["enum"]))
    bounds = []
    for key, sign in (
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
    ):
        if key in schema:
            bounds.append(f"{sign} {schema[key]}")
    if schema.get("type") == "object" and schema.get("properties"):
        t += " {" + ", ".join(schema["properties"]) + "}"
    return " ".join([str(t), *bounds]).strip()


def params_table(schema: Mapping[str, Any]) -> list[str]:
    """The params of a kind as a table: name, type and bounds, required or optional."""
    props = schema.get("properties") or {}
    if not props:
        return ["No params."]
    required = set(schema.get("required") or ())
    out = ["| param | type | required |", "|---|---|---|"]
    for name, sub in props.items():
        out.append(f"| `{name}` | {_cell(_type(sub))} | {'yes' if name in required else 'no'} |")
    if schema.get("additionalProperties") is False:
        out.append("")
        out.append("No other params are accepted (an unknown key is a load error).")
    return out


def kind_markdown(kind: CheckKind) -> str:
    """The reference of one check kind: summary, its docstring sections, its params."""
    out = [f"### `{kind.kind}`", "", _summary(kind), ""]
    for header, key in SECTIONS:
        body = _md(kind.sections.get(key, "")).strip()
        out += [f"**{header}.**", "", body, ""]
    out += params_table(kind.params)
    out.append("")
    return "\n".join(out)


def kinds_markdown(kinds: Mapping[str, CheckKind] | None = None) -> str:
    """Every check kind, in name order."""
    kinds = discover() if kinds is None else kinds
    out = ["## Check kinds (reference)", ""]
    out.append(
        "Generated from the check modules (`engine/accel_drc/checks/<kind>.py`: the docstring "
        "sections and `PARAMS`); a rule's `check:` names one of these kinds, its `params:` "
        "follow the kind's schema."
    )
    out.append("")
    out += ["| kind | checks |", "|---|---|"]
    out += [f"| [`{k}`](#{k}) | {_cell(_summary(kinds[k]))} |" for k in sorted(kinds)]
    out.append("")
    out += [kind_markdown(kinds[k]) for k in sorted(kinds)]
    return "\n".join(out)


def _limit(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "—"


def rules_markdown(rules: Sequence[Mapping[str, Any]], classes: Iterable[str]) -> str:
    """Every rule of ``classes`` (dicts as ``accel-drc rules --json`` gives them): one table per
    class, id, kind, severity, limit (the params), why and source."""
    out = ["## Rules by class (reference)", ""]
    for cls in classes:
        mine = [r for r in rules if r["class"] == cls]
        out += [f"### {cls} ({len(mine)} rules)", ""]
        out += ["| id | kind | severity | limit | why | source |", "|---|---|---|---|---|---|"]
        for r in mine:
            out.append(
                f"| `{r['id']}` | `{r['check']}` | {r['severity']} | {_cell(_limit(r['params']))} "
                f"| {_cell(r['why'])} | {_cell(r['source'])} |"
            )
        out.append("")
    return "\n".join(out)


def reference(rules: Sequence[Mapping[str, Any]], classes: Sequence[str]) -> str:
    """The generated reference: the check kinds, then the rules of ``classes``."""
    return (
        kinds_markdown().rstrip("\n") + "\n\n" + rules_markdown(rules, classes).rstrip("\n") + "\n"
    )


def shipped_rules() -> tuple[list[dict[str, Any]], list[str]]:
    """The rules of the shipped class packs, no project config (what ``docs/rules.md`` shows)."""
    from .packs import CLASSES, load_library, rules_for_class

    lib = load_library()
    out = []
    for cls in CLASSES:
        rules, _ = rules_for_class(lib, cls)
        out += [rule_row(r, cls) for r in rules]
    return out, list(CLASSES)


def rule_row(r: Any, cls: str) -> dict[str, Any]:
    """A rule as ``accel-drc rules --json`` lists it."""
    return {
        "id": r.id,
        "class": cls,
        "check": r.check,
        "signal": r.signal,
        "severity": r.severity.value,
        "params": dict(r.params),
        "why": r.why,
        "source": r.source,
        "pack": r.pack,
    }


def splice(document: str, generated: str, path: str = "<document>") -> str:
    """``document`` with the text between :data:`BEGIN` and :data:`END` replaced by
    ``generated``.  A document without both markers is an input error (where to write is the
    author's choice, never guessed)."""
    a = document.find(BEGIN)
    b = document.find(END, a + 1) if a >= 0 else -1
    if a < 0 or b < 0:
        raise InputError(path, f"no generated section: add the lines {BEGIN!r} and {END!r}")
    return document[: a + len(BEGIN)] + "\n\n" + generated.strip("\n") + "\n\n" + document[b:]


def update(path: str | Path, generated: str | None = None) -> bool:
    """Rewrite the generated section of ``path``; True when the file changed."""
    from .hostile import write_text

    p = Path(path)
    try:
        old = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(p), f"cannot read: {exc.strerror or exc}") from None
    if generated is None:
        generated = reference(*shipped_rules())
    new = splice(old, generated, str(p))
    if new != old:
        write_text(str(p), new)
    return new != old


def main(argv: list[str] | None = None) -> int:
    """``python -m accel_drc.docgen [--check] FILE``: write (or only compare) the generated
    section of FILE (default ``docs/rules.md``)."""
    ap = argparse.ArgumentParser(prog="python -m accel_drc.docgen", description=__doc__)
    ap.add_argument("file", nargs="?", default="docs/rules.md")
    ap.add_argument("--check", action="store_true", help="exit 1 if FILE is out of date")
    args = ap.parse_args(argv)
    try:
        if args.check:
            text = Path(args.file).read_text(encoding="utf-8")
            if splice(text, reference(*shipped_rules()), args.file) != text:
                print(f"{args.file}: generated section out of date", file=sys.stderr)
                return 1
            return 0
        changed = update(args.file)
    except (InputError, OSError) as exc:
        print(f"accel-drc docgen: {exc}", file=sys.stderr)
        return 3
    print(f"{args.file}: {'updated' if changed else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
