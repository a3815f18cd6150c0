"""The review corpus of issue #27 §7: real boards accel-drc was not tuned on.

``corpus/manifest.yaml`` is checked always (every entry carries its licence and commit, ids are
unique, no board comes from fixtures/boards).  The rerun comparison needs the corpus cache that
``corpus/build.py`` extracts from git mirrors; the mirrors cannot be fetched in CI, so without the
cache it skips and says how to build it.  With the cache, each board is checked again and its
verdict and per-check counts (error violations, warnings, cannot-verify) are compared with
``corpus/expected.json``, so a change of the engine's findings on real boards shows up as a diff
that is reviewed (and ``expected.json`` regenerated with ``python3 corpus/run.py --expected``).

The boards whose check took longer than ``FAST_S`` when expected.json was written (on a loaded
machine) are marked slow: ``pytest -m "not slow"`` keeps the run to a couple of minutes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
sys.path.insert(0, str(ROOT))

from corpus import build  # noqa: E402  (corpus/build.py)
from corpus import run as corpus_run  # noqa: E402  (corpus/run.py)

MANIFEST = yaml.safe_load((CORPUS / "manifest.yaml").read_text(encoding="utf-8"))
EXPECTED: dict[str, Any] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
#: an SPDX id (or LicenseRef-…), or an SPDX OR/AND expression of them
SPDX = r"[A-Za-z0-9.+-]+( (OR|AND) [A-Za-z0-9.+-]+)*"
#: a board whose recorded check took longer than this is marked slow
FAST_S = 5.0
#: the boards accel-drc was tuned on: none of them may be in the corpus
TUNED_ON = [p.name for p in (ROOT / "fixtures" / "boards").iterdir() if p.is_dir()]


def repo_entries() -> list[dict[str, Any]]:
    """The manifest entries that come from a public repository."""
    return [e for e in MANIFEST["boards"] if "repository" in e]


def test_manifest_ids_unique_and_wellformed() -> None:
    """Every entry has a unique id and a board path; demo entries name a known demos set."""
    ids = [e["id"] for e in MANIFEST["boards"]]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for e in MANIFEST["boards"]:
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", e["id"]), e["id"]
        assert e["board"].endswith(".kicad_pcb"), e
        if "demos" in e:
            assert e["demos"] in MANIFEST["demos"], e
            assert MANIFEST["demos"][e["demos"]]["licence"], e["demos"]


def test_manifest_repository_entries_carry_licence_commit_and_review_fields() -> None:
    """Each repository board records its licence (SPDX or LicenseRef), full commit hash,
    interfaces, copper layer count and why it is in the corpus; there are at least 40."""
    entries = repo_entries()
    assert len(entries) >= 40, len(entries)
    for e in entries:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", e["repository"]), e
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]), e
        assert re.fullmatch(SPDX, e["licence"]), e
        assert e["licence_file"], e
        if "licence_commit" in e:
            assert re.fullmatch(r"[0-9a-f]{40}", e["licence_commit"]), e
        assert isinstance(e["interfaces"], list) and e["interfaces"], e
        assert isinstance(e["layers"], int) and e["layers"] >= 1, e
        assert e["why"], e


def test_manifest_avoids_the_boards_the_tool_was_tuned_on() -> None:
    """No corpus board is one of fixtures/boards (the corpus must be one we did not tune on)."""
    for e in repo_entries():
        for tuned in TUNED_ON:
            assert tuned not in e["repository"].lower(), (e["id"], tuned)
            assert tuned not in e["board"].lower(), (e["id"], tuned)


def test_expected_covers_every_manifest_entry() -> None:
    """expected.json has a record for every manifest entry (and nothing else)."""
    assert set(EXPECTED) == {e["id"] for e in MANIFEST["boards"]}


def cache_or_skip() -> Path:
    """The built corpus cache, or skip with the command that builds it."""
    cache = build.default_cache()
    if not any((cache / e["id"] / "source.json").is_file() for e in MANIFEST["boards"]):
        pytest.skip(
            f"no corpus cache at {cache}: fetch the mirrors listed in corpus/manifest.yaml, then "
            "`python3 corpus/build.py` (the corpus cannot be fetched in CI)"
        )
    return cache


def params() -> list[Any]:
    """One test per distinct board (a demo shipped unchanged in both kicad-demos versions is
    checked once); slow ones marked."""
    out = []
    seen: set[str] = set()
    for ident, exp in sorted(EXPECTED.items()):
        if exp["sha256"] in seen:
            continue
        seen.add(exp["sha256"])
        marks = [pytest.mark.slow] if (exp.get("accel_seconds") or 0) > FAST_S else []
        out.append(pytest.param(ident, id=ident, marks=marks))
    return out


@pytest.mark.parametrize("ident", params())
def test_rerun_matches_expected(ident: str, tmp_path: Path) -> None:
    """A fresh accel-drc run on the cached board gives the recorded verdict and counts."""
    cache = cache_or_skip()
    exp = EXPECTED[ident]
    got = corpus_run.board_of(cache / ident)
    if got is None:
        pytest.skip(f"{ident} is not built: `python3 corpus/build.py --only {ident}`")
    board, src = got
    resaved = src.get("original_sha256", src["sha256"]) != src["sha256"]
    # a KiCad 6 pre-release board is checked as re-saved by the local KiCad 9, whose bytes may
    # differ from another KiCad 9 build's; any other board must be exactly the recorded one
    assert resaved or src["sha256"] == exp["sha256"], (
        f"{ident}: the cached board is not the recorded one"
    )
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [*corpus_run.accel_cmd(), "check", str(board), "--json", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=corpus_run.ACCEL_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == exp["accel_exit"], proc.stderr
    if exp["verdict"] is None:
        return
    now = corpus_run.summarise_accel(out)
    for key in ("verdict", "class", "errors", "warnings", "cannot_verify", "open_channel"):
        assert now[key] == exp[key], f"{ident}: {key} changed: {exp[key]!r} -> {now[key]!r}"
