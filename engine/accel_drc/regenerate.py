"""``python -m accel_drc.regenerate [--check]``: rewrite every derived file, or name the stale ones.

Four files are made from others and committed, each so that a run does less work:

* ``engine/accel_drc/bundled_rules.jsonl``: the validated snapshot of ``rules/``
  (:mod:`accel_drc.bundled`; a stale one costs speed, never correctness: every run then parses
  and validates the YAML itself);
* ``engine/accel_drc/bundled_dataclasses.marshal``: the compiled dataclass methods
  (:mod:`accel_drc.dccode`; ignored on another Python, or when stale);
* ``engine/accel_drc/report/_report_template.py``: ``report.html.j2`` compiled by jinja2
  (:mod:`accel_drc.report.html_template`; ignored when its key is not today's);
* ``docs/rules.md``'s generated section (:mod:`accel_drc.docgen`; only in a source checkout).

Without ``--check`` each stale file is rewritten (a current one is left alone, byte for byte);
with it nothing is written and the exit code is 1 when any file is stale, each named on stderr
with this command.  ``tests/test_regenerate.py`` runs the check, so a merge that leaves one
stale fails with the command to run.  The old ``python -m accel_drc.bundled --write`` says
this command's name and fails (it cannot run it: the snapshot's reader sits floors below).

This module sits on the top floor (``docs/architecture.md``, "Floors"): building the snapshot
loads the whole rule library through its loaders (packs, the capacitor and connector libraries,
the check kinds), so nothing below imports it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import bundled, dccode
from .bundled import RULES_DIR, SNAPSHOT, VALIDATED

#: the repository's ``docs/rules.md`` (absent in an installed wheel: then not regenerated)
RULES_DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md"
COMMAND = "python -m accel_drc.regenerate"


# --- the rule snapshot -------------------------------------------------------------------------


def _json_exact(data: Any) -> bool:
    """Whether ``data`` survives JSON unchanged (no dates, tuples or non-str keys)."""
    try:
        return json.loads(json.dumps(data, allow_nan=False)) == data and _plain(data)
    except (TypeError, ValueError):
        return False


def _plain(data: Any) -> bool:
    if isinstance(data, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in data.items())
    if isinstance(data, list):
        return all(_plain(v) for v in data)
    return data is None or isinstance(data, (str, int, float, bool))


def snapshot_text() -> str:
    """The snapshot text of the bundled rule data, through the full path: every loader parses
    and validates its file (an invalid file raises here, as it would in a run)."""
    from .analysis.capacitors import CapacitorLibrary
    from .analysis.channels import load_connectors
    from .packs import GeneratedRules, load_library, written_out
    from .yamlsafe import load_yaml

    with bundled.disabled():
        lib = load_library(RULES_DIR)
        generated = GeneratedRules(
            RULES_DIR / "signal_rules.yaml", load_yaml(RULES_DIR / "signals.yaml")
        )
        load_connectors(
            RULES_DIR / "connectors.yaml", known_types=list(lib.signals) + list(lib.families)
        )
        CapacitorLibrary.load(RULES_DIR / "capacitors.yaml")
        hashes: dict[str, str] = {}
        bodies: list[str] = []
        kinds: set[str] = set()
        for rel in VALIDATED:
            p = RULES_DIR / rel
            raw = bundled._read(p)
            if raw is None:
                continue
            doc = load_yaml(p)
            # a class pack as the rules it makes: its generated per-signal rules written out
            data = written_out(doc, generated) if rel.startswith("classes/") else doc.data
            if not _json_exact(data):
                continue  # e.g. a date: this file always takes the full path
            kinds |= bundled._kinds_of(rel, data)
            hashes[rel] = bundled._sha256(raw)
            body = json.dumps(
                {"file": rel, "data": data}, ensure_ascii=False, separators=(", ", ": ")
            )
            bodies.append(body)
    head = {
        "format": bundled.FORMAT,
        "key": bundled.key(kinds),
        "files": hashes,
        "order": list(hashes),
        "literals": literals(),
    }
    return "\n".join([json.dumps(head, sort_keys=True), *bodies]) + "\n"


def _patterns() -> list[str]:
    """Every recognition pattern of the bundled ``signals.yaml`` and ``connectors.yaml``."""
    from .yamlsafe import load_yaml

    out: list[str] = []
    sig = load_yaml(RULES_DIR / "signals.yaml").data
    for s in sig.get("signals", {}).values():
        rec = s.get("recognise", {})
        out += [*rec.get("net_class", ()), *rec.get("net_name", ())]
    for f in sig.get("families", {}).values():
        out += [*f.get("net_class", ()), *f.get("net_name", ())]
    out += sig.get("exclude", ())
    con = load_yaml(RULES_DIR / "connectors.yaml").data
    for c in con.get("connectors", {}).values():
        out += c.get("footprint", ())
    return out


def literals() -> dict[str, Any]:
    """``{pattern: sorted required literals or None}`` of the bundled patterns
    (:func:`accel_drc.caseless.parse_literals`), registered when the snapshot is valid so
    :class:`~accel_drc.caseless.FirstMatch` indexes them without parsing them."""
    from .caseless import parse_literals

    out: dict[str, Any] = {}
    for pat in _patterns():
        lits = parse_literals(pat)
        out[pat] = None if lits is None else sorted(lits)
    return dict(sorted(out.items()))


def dataclass_keys(blob: bytes | None) -> set[bytes] | None:
    """The source digests of a :mod:`accel_drc.dccode` table (None: unreadable here)."""
    table = dccode.read_table(blob or b"")
    return None if table is None else set(table)


# --- every derived file --------------------------------------------------------------------------


@dataclass(frozen=True)
class Derived:
    """One derived file: where it lives, whether it is stale, and how to rewrite it."""

    path: Path
    stale: Callable[[], bool]
    write: Callable[[], None]


def _read_text(path: Path) -> str:
    return (bundled._read(path) or b"").decode("utf-8", "replace")


def _snapshot() -> Derived:
    fresh: list[str] = []

    def text() -> str:
        if not fresh:
            fresh.append(snapshot_text())
        return fresh[0]

    return Derived(
        SNAPSHOT,
        lambda: text() != _read_text(SNAPSHOT),
        lambda: SNAPSHOT.write_text(text(), encoding="utf-8"),
    )


def _dataclasses() -> Derived | None:
    """The compiled dataclass methods: only this CPython bytecode version's table can be checked
    or rebuilt here (another Python's shipped table is left as it is)."""
    path = Path(dccode.TABLE)
    if path.is_file() and dccode.read_table() is None:
        return None
    fresh: list[bytes] = []

    def table() -> bytes:
        if not fresh:
            fresh.append(dccode.build())
        return fresh[0]

    # marshal's bytes vary between runs (object references): compare the sources held
    return Derived(
        path,
        lambda: dataclass_keys(table()) != dataclass_keys(bundled._read(path)),
        lambda: path.write_bytes(table()),
    )


def _template() -> Derived:
    from .report import html_template

    path = html_template.TEMPLATE_MODULE
    return Derived(
        path,
        lambda: html_template.template_module_source() != _read_text(path),
        html_template.write_template_module,
    )


def _rules_doc() -> Derived:
    from . import docgen

    def fresh() -> str:
        text = _read_text(RULES_DOC)
        return docgen.splice(text, docgen.reference(*docgen.shipped_rules()), str(RULES_DOC))

    return Derived(
        RULES_DOC,
        lambda: fresh() != _read_text(RULES_DOC),
        lambda: RULES_DOC.write_text(fresh(), encoding="utf-8"),
    )


def derived_files() -> list[Derived]:
    """Every derived file, in the order they are rebuilt (the rules doc only in a checkout, the
    dataclass table only on the Python that wrote it)."""
    out = [_snapshot(), _dataclasses(), _template()]
    if RULES_DOC.is_file():
        out.append(_rules_doc())
    return [d for d in out if d is not None]


def stale_files() -> list[Path]:
    """The derived files that differ from what their sources make today."""
    return [d.path for d in derived_files() if d.stale()]


def main(argv: list[str] | None = None) -> int:
    """Rewrite the stale derived files (exit 0), or with ``--check`` name them (exit 1)."""
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if any is stale")
    ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)  # the old spelling
    a = ap.parse_args(argv)
    stale = 0
    for d in derived_files():
        is_stale = d.stale()
        stale += is_stale
        if a.check:
            if is_stale:
                print(f"{d.path}: stale: run {COMMAND}", file=sys.stderr)
            continue
        if is_stale:
            d.write()
        print(f"{d.path}: {'updated' if is_stale else 'up to date'}")
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
