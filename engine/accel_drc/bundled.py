"""The bundled rule data, validated once at development time: a snapshot shipped in the package.

Every run used to parse and validate the same 210 KB of YAML under ``rules/`` (class packs,
signal types, materials, foils, references, connectors, capacitors): PyYAML's constructor, the
nesting pre-scan, the line map and ``jsonschema`` (itself slow to import) cost more than the
whole check of a small board.  Those files only change with the package, so the package ships
their parsed data beside them (``bundled_rules.jsonl``) with each file's SHA-256, and
:func:`trusted_data` hands that data to :func:`accel_drc.yamlsafe.load_yaml` instead of parsing
the file again, marked ``trusted`` so that schema validation and citation checks are skipped
(they passed when the snapshot was built).

Why it stays exact:

* the snapshot is used only when *every* bundled file and every schema it was validated against
  is byte-identical to what was validated (content hashes, compared on each run: reading the
  files costs about a millisecond), and the check kinds' ``PARAMS`` schemas are unchanged.  An
  edited file anywhere under ``rules/`` (a user tuning an installed pack, a developer before
  rebuilding) makes the run take the full path: parse, validate, ``file:line`` errors;
* the snapshot is built by the full path itself (:func:`accel_drc.regenerate.snapshot_text`
  loads the library, connectors and capacitors with the snapshot off, so a file that does not
  validate cannot be snapshotted);
* ``tests/test_regenerate.py`` fails when the shipped snapshot differs from a fresh build (like
  every derived file): ``python -m accel_drc.regenerate`` rebuilds it;
* nothing is written at run time (no cache directory): the snapshot is package data.

A class pack is stored as the rules it makes: its per-signal rules, generated from
``signals.yaml`` by ``signal_rules.yaml`` (:mod:`accel_drc.signal_rules`), written out in place of
its ``- signal_rules:`` items (:func:`accel_drc.packs.written_out`), so a clean run does not
expand the template again; the hashes are of the files as written, so an edit of any of the
three sends every file through the full path, which expands.

File format (one JSON document per line, so a change of one rule file is a one-line diff): the
first line is ``{"format", "key", "files": {relative path: sha256}, "order": [relative path]}``,
then one line ``{"file": relative path, "data": parsed data}`` per file, in that order.  ``key`` hashes the schemas and the
params schemas of the check kinds the packs use.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
#: the shipped snapshot (package data)
SNAPSHOT = PACKAGE_DIR / "bundled_rules.jsonl"
#: the bundled rule data (the package's ``rules/``) and its schemas
RULES_DIR = PACKAGE_DIR / "rules"
SCHEMA_DIR = RULES_DIR / "schemas"
FORMAT = 1

#: the files the build (:func:`accel_drc.regenerate.snapshot_text`) validates through their
#: loaders (a file under ``rules/`` that no loader validates is never trusted: it always takes
#: the full path)
VALIDATED = (
    "references.yaml",
    "foils.yaml",
    "fab.yaml",
    "signals.yaml",
    "signal_rules.yaml",
    "materials.yaml",
    "capacitors.yaml",
    "connectors.yaml",
    "classes/training.yaml",
    "classes/inference.yaml",
    "classes/edge.yaml",
)

#: sentinel: no trusted data for this file
MISSING: Any = object()


class _State:
    """The snapshot as read in this process: valid (every hash matches) or not."""

    def __init__(self) -> None:
        self.enabled = True
        self.checked = False
        self.valid = False
        self.rules_real = ""
        self.hashes: dict[str, str] = {}
        self.lines: dict[str, str] = {}


_STATE = _State()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def key(kinds: Any = None) -> str:
    """The hash of what validity also depends on besides the files: every schema file and the
    ``PARAMS`` schema of every check kind a bundled pack uses (``kinds``: their names; None:
    read them from the snapshot's packs)."""
    h = hashlib.sha256()
    for p in sorted(SCHEMA_DIR.glob("*.json")):
        h.update(p.name.encode() + b"\0" + (_read(p) or b"") + b"\0")
    from .kinds import discover

    found = discover()
    for k in sorted(kinds or ()):
        params = found[k].params if k in found else None
        h.update(k.encode() + b"\0" + json.dumps(params, sort_keys=True).encode() + b"\0")
    return h.hexdigest()


def _pack_kinds(data: Any) -> set[str]:
    """The check kinds a class pack's own rules use (its ``- signal_rules:`` items are none)."""
    rules = data.get("rules") if isinstance(data, dict) else None
    return {str(r["check"]) for r in rules or () if isinstance(r, dict) and "check" in r}


def _kinds_of(rel: str, data: Any) -> set[str]:
    """The check kinds a bundled file's rules use: a class pack's, and the per-signal rule
    template's (``signal_rules.yaml`` ``checks:``)."""
    if rel.startswith("classes/"):
        return _pack_kinds(data)
    if rel == "signal_rules.yaml" and isinstance(data, dict):
        return {str(k) for k in data.get("checks") or ()}
    return set()


def _check() -> None:
    """Read the snapshot once per process and compare every hash with the files on disk."""
    st = _STATE
    st.checked = True
    st.valid = False
    raw = _read(SNAPSHOT)
    if raw is None:
        return
    try:
        text = raw.decode("utf-8")
        lines = text.splitlines()
        head = json.loads(lines[0])
        if head.get("format") != FORMAT:
            return
        hashes = {str(k): str(v) for k, v in head["files"].items()}
        bodies = dict(zip(head["order"], lines[1:]))
    except (ValueError, KeyError, IndexError, AttributeError, TypeError):
        return  # a damaged snapshot: the full path, which is always right
    if set(hashes) != set(bodies) or len(bodies) != len(lines) - 1:
        return
    for rel, sha in hashes.items():
        data = _read(RULES_DIR / rel)
        if data is None or _sha256(data) != sha:
            return
    kinds: set[str] = set()
    for rel in hashes:
        if rel.startswith("classes/") or rel == "signal_rules.yaml":
            kinds |= _kinds_of(rel, json.loads(bodies[rel])["data"])
    if key(kinds) != head.get("key"):
        return
    from .caseless import register_literals

    register_literals(head.get("literals") or {})
    st.hashes = hashes
    st.lines = bodies
    st.rules_real = os.path.realpath(RULES_DIR)
    st.valid = True


def trusted_data(path: str, raw: bytes) -> Any:
    """The snapshot's parsed data of the bundled rule file ``path`` whose bytes are ``raw``, or
    :data:`MISSING` (not a bundled file, the snapshot is stale or off): a fresh object on each
    call, so a caller may change it."""
    st = _STATE
    if not st.enabled:
        return MISSING
    if not st.checked:
        # cheap rejection first: most callers of load_yaml on a user file never read the snapshot
        real = os.path.realpath(RULES_DIR)
        if not os.path.realpath(path).startswith(real + os.sep):
            return MISSING
        _check()
    if not st.valid:
        return MISSING
    real = os.path.realpath(path)
    if not real.startswith(st.rules_real + os.sep):
        return MISSING
    rel = Path(os.path.relpath(real, st.rules_real)).as_posix()
    sha = st.hashes.get(rel)
    if sha is None or _sha256(raw) != sha:
        return MISSING
    return json.loads(st.lines[rel])["data"]


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Load everything through the full path (parse, validate) inside the block."""
    st = _STATE
    was = st.enabled
    st.enabled = False
    try:
        yield
    finally:
        st.enabled = was


def reset() -> None:
    """Forget this process's reading of the snapshot (a test that rewrote it)."""
    global _STATE
    enabled = _STATE.enabled
    _STATE = _State()
    _STATE.enabled = enabled


if __name__ == "__main__":  # the old command: the snapshot is one of the derived files now
    sys.exit("python -m accel_drc.bundled is now: python -m accel_drc.regenerate [--check]")
