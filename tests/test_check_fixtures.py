"""Tests as specifications: every check kind on its readable fixture boards.

Each registered check kind (:func:`accel_drc.kinds.discover`) has a folder
``fixtures/checks/<kind>/`` with small hand-readable boards and an ``expected.yaml`` beside
them, as Ruff keeps ``resources/test/fixtures/<linter>/<rule>.py`` beside the rule: a list of
``cases``, each a board, the config and class it is checked with, and the findings of that kind
it must give, with the physics of every expected number worked by hand in a comment.  At least
one case fires (a violation, or *cannot verify* with its reason) and one passes (no finding).

:func:`test_fixture_case` runs every case of every kind through :func:`accel_drc.api.check` and
compares the kind's findings with the expected ones; :func:`test_every_kind_has_fixtures` fails
when a kind has no such folder, so adding a check kind is its module, its rule data and its
fixture (``docs/development.md``, "Adding a check kind").

The expected-findings format (``fixtures/checks/README.md``)::

    cases:
      - board: long_stub.kicad_pcb    # beside this file
        class: edge                   # optional (edge)
        config: {stackup: {...}}      # optional ({}: no accel-drc.yaml)
        known_bug: "..."              # optional: the physics says otherwise today (strict xfail)
        findings:                     # the kind's findings, in the order the check gives them
          - {rule: edge.via_stub.pcie4, status: violation, severity: error, net: /TX_P,
             layer: In1.Cu, measured: 1.27, tol_pct: 1, rests_on: [...], robust_to: [...],
             contains: "text in the message", evidence: {f_res_hz: 2.88e+10}}

Only the keys an entry names are compared.  ``measured``, ``limit`` and the numbers under
``evidence`` (the finding's evidence, by key) are the hand-worked values; the tool's must lie within ``tol_pct`` % of them (default 1 %: rounding), wider where the
independent method is itself approximate (an IPC-2141 closed form against the field solver).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from accel_drc.api import check
from accel_drc.kinds import discover
from accel_drc.results import Finding
from conftest import FIXTURES

CHECKS = FIXTURES / "checks"
#: the keys of an expected finding compared with the finding's attribute of the same name
_ATTRS = ("rule", "status", "severity", "net", "layer", "unit")
#: the keys an expected finding may have
_KEYS = set(_ATTRS) | {
    "measured",
    "limit",
    "tol_pct",
    "rests_on",
    "robust_to",
    "contains",
    "evidence",
}
#: a number YAML 1.1 leaves as text (an exponent without its sign)
_NUMBER_TEXT = re.compile(r"[-+]?[0-9.]+[eE][0-9]+")
#: a what-to-declare hint that is only a basis key ("declare stub_mm"): basis.settle's fallback
#: for an input no hint covers, which names no key of accel-drc.yaml or the board
_BARE_DECLARE = re.compile(r"(^|; )declare [a-z_]+($|;)")
#: the keys a case may have
_CASE_KEYS = {"board", "class", "config", "findings", "known_bug"}


def expected_cases(kind_dir: Path) -> list[dict[str, Any]]:
    """The ``cases`` of ``kind_dir/expected.yaml`` (empty when there is none)."""
    path = kind_dir / "expected.yaml"
    if not path.is_file():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return list(data.get("cases") or []) if isinstance(data, dict) else []


def _all_cases() -> list[Any]:
    """One pytest param per case of every kind's ``expected.yaml``, id ``kind/board[n]``."""
    out = []
    for kind in sorted(discover()):
        for n, case in enumerate(expected_cases(CHECKS / kind)):
            marks = []
            if case.get("known_bug"):
                marks.append(pytest.mark.xfail(reason=case["known_bug"], strict=True))
            out.append(pytest.param(kind, case, id=f"{kind}/{case.get('board')}[{n}]", marks=marks))
    return out


def _value(f: Finding, key: str) -> Any:
    """The finding's value under an expected key (enums by value)."""
    if key == "rests_on":
        return sorted((f.evidence.get("conditional") or {}).get("rests_on") or {})
    if key == "robust_to":
        return sorted(f.evidence.get("robust_to") or [])
    v = getattr(f, key)
    return getattr(v, "value", v)


def _matches(f: Finding, want: dict[str, Any]) -> list[str]:
    """What of ``want`` the finding ``f`` does not meet (empty: it meets all)."""
    bad = []
    tol = float(want.get("tol_pct", 1.0)) / 100.0
    for key, exp in want.items():
        if key == "tol_pct":
            continue
        numbers = exp.values() if key == "evidence" else [exp]
        texts = [x for x in numbers if isinstance(x, str) and _NUMBER_TEXT.fullmatch(x)]
        if texts:  # YAML 1.1 reads 2.88e10 as text; 2.88e+10 is a number
            bad.append(f"{key}: {texts} is text, not a number (write the exponent's sign)")
            continue
        if key in ("measured", "limit"):
            got = getattr(f, key)
            if not isinstance(got, (int, float)) or got != pytest.approx(exp, rel=tol):
                bad.append(f"{key} {got!r}, expected {exp!r} ± {tol:.1%}")
        elif key == "evidence":
            for name, value in exp.items():
                got = f.evidence.get(name)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    if not isinstance(got, (int, float)) or got != pytest.approx(value, rel=tol):
                        bad.append(f"evidence {name} {got!r}, expected {value!r} ± {tol:.1%}")
                elif got != value:
                    bad.append(f"evidence {name} {got!r}, expected {value!r}")
        elif key == "contains":
            if exp not in f.message:
                bad.append(f"message lacks {exp!r}")
        elif key in ("rests_on", "robust_to"):
            if _value(f, key) != sorted(exp):
                bad.append(f"{key} {_value(f, key)!r}, expected {sorted(exp)!r}")
        elif _value(f, key) != exp:
            bad.append(f"{key} {_value(f, key)!r}, expected {exp!r}")
    return bad


@pytest.mark.parametrize(("kind", "case"), _all_cases())
def test_fixture_case(kind: str, case: dict[str, Any]) -> None:
    """The kind's findings on the case's board are the expected ones, in order."""
    assert set(case) <= _CASE_KEYS, f"unknown case keys {sorted(set(case) - _CASE_KEYS)}"
    for want in case.get("findings") or []:
        assert set(want) <= _KEYS, f"unknown finding keys {sorted(set(want) - _KEYS)}"
    res = check(
        str(CHECKS / kind / case["board"]),
        config=case.get("config") or {},
        board_class=case.get("class", "edge"),
    )
    got = [f for f in res.findings if f.check == kind]
    want = case.get("findings") or []
    lines = [f"{f.rule} {f.status.value} {f.net} {f.layer} {f.measured}: {f.message}" for f in got]
    assert len(got) == len(want), "findings:\n" + "\n".join(lines)
    for f, w in zip(got, want):
        assert not _matches(f, w), f"{_matches(f, w)}\n{f.message}"
    for f in got:
        assert not _BARE_DECLARE.search(str(f.evidence.get("declare") or "")), (
            f"{f.rule} asks to declare an internal name, not an input a user can write: "
            f"{f.evidence['declare']!r}"
        )


def fixture_coverage(kind: str) -> str | None:
    """Why ``kind`` lacks a fixture specification (None: it has one), i.e. a folder
    ``fixtures/checks/<kind>/`` whose ``expected.yaml`` has a case that fires and one that does
    not, on boards that exist."""
    folder = CHECKS / kind
    if not folder.is_dir():
        return f"no fixtures/checks/{kind}/ folder"
    cases = expected_cases(folder)
    if not cases:
        return f"no fixtures/checks/{kind}/expected.yaml with cases"
    missing = sorted(
        {c.get("board") for c in cases if not (folder / str(c.get("board"))).is_file()}
    )
    if missing:
        return f"fixtures/checks/{kind}/expected.yaml names boards that are not there: {missing}"
    if not any(c.get("findings") for c in cases):
        return f"fixtures/checks/{kind}: no case that fires"
    if not any(not c.get("findings") for c in cases):
        return f"fixtures/checks/{kind}: no case that passes"
    return None


def test_every_kind_has_fixtures() -> None:
    """Adding a check kind is its module, its rule data and its fixture: every registered kind
    has a fixture folder with a case that fires and one that passes."""
    problems = [p for p in (fixture_coverage(k) for k in sorted(discover())) if p]
    assert not problems, "check kinds without a fixture specification:\n" + "\n".join(problems)


def test_coverage_rule_names_what_is_missing(tmp_path: Path, monkeypatch) -> None:
    """The coverage rule itself: no folder, no passing case, a board not there."""
    import test_check_fixtures as me

    monkeypatch.setattr(me, "CHECKS", tmp_path)
    assert fixture_coverage("k") == "no fixtures/checks/k/ folder"
    (tmp_path / "k").mkdir()
    assert "no fixtures/checks/k/expected.yaml" in str(fixture_coverage("k"))
    (tmp_path / "k" / "a.kicad_pcb").write_text("")
    spec = {"cases": [{"board": "a.kicad_pcb", "findings": [{"status": "violation"}]}]}
    (tmp_path / "k" / "expected.yaml").write_text(yaml.safe_dump(spec))
    assert fixture_coverage("k") == "fixtures/checks/k: no case that passes"
    spec["cases"].append({"board": "b.kicad_pcb", "findings": []})
    (tmp_path / "k" / "expected.yaml").write_text(yaml.safe_dump(spec))
    assert "names boards that are not there: ['b.kicad_pcb']" in str(fixture_coverage("k"))
    (tmp_path / "k" / "b.kicad_pcb").write_text("")
    assert fixture_coverage("k") is None


#: loads boards in pcbnew and prints, per board, what the comparison needs (one process)
_PCBNEW_COUNTS = """
import json, sys
import pcbnew
out = {}
for path in sys.argv[1:]:
    b = pcbnew.LoadBoard(path)
    if b is None:  # a file pcbnew refuses (a parse error): no board
        out[path] = "not loaded"
        continue
    out[path] = {
        "copper_layers": b.GetCopperLayerCount(),
        "tracks_and_vias": len(b.GetTracks()),
        "footprints": len(b.GetFootprints()),
        "zones": len(b.Zones()),
        "thickness_mm": round(pcbnew.ToMM(b.GetDesignSettings().GetBoardThickness()), 4),
    }
print("COUNTS" + json.dumps(out))
"""


def _spec_boards() -> dict[str, list[Path]]:
    """The boards the kinds' ``expected.yaml`` name, by the KiCad that opens their format:
    "9" for KiCad 9's 20241229 and older, "10" for KiCad 10's 2026 files."""
    out: dict[str, list[Path]] = {"9": [], "10": []}
    for kind in sorted(discover()):
        for name in sorted({str(c.get("board")) for c in expected_cases(CHECKS / kind)}):
            path = CHECKS / kind / name
            m = re.search(r"\(version (\d+)\)", path.read_text(encoding="utf-8")[:200])
            out["10" if m and int(m.group(1)) >= 20250000 else "9"].append(path)
    return out


def _ours(path: Path) -> dict[str, Any]:
    """What accel-drc's reader reads of the board, in the keys of :data:`_PCBNEW_COUNTS`."""
    from accel_drc.readers import read_board

    b = read_board(str(path))
    return {
        "copper_layers": b.layer_count,
        "tracks_and_vias": len(b.tracks) + len(b.vias),
        "footprints": len(b.footprints),
        "zones": len(b.zones),
        "thickness_mm": round(float(b.board_thickness_mm or 0.0), 4),
    }


def _counts(stdout: str) -> dict[str, Any]:
    line = next(x for x in stdout.splitlines() if x.startswith("COUNTS"))
    return dict(json.loads(line[len("COUNTS") :]))


@pytest.mark.parametrize("version", ["9", "10"])
def test_fixture_boards_load_in_pcbnew(version: str, request) -> None:
    """Every board of a fixture specification opens in the pcbnew of its format (KiCad 9 for
    the hand-written 20241229 boards, KiCad 10 for the 2026 ones), and KiCad reads the copper
    layers, tracks and vias, footprints, zones and board thickness the check reads: a fixture
    is a board KiCad would give the designer, not a file only accel-drc accepts."""
    boards = _spec_boards()[version]
    if not boards:
        pytest.skip(f"no KiCad {version} board in the fixture specifications")
    if version == "9":
        py = request.getfixturevalue("pcbnew_python")
        proc = subprocess.run(
            [py, "-c", _PCBNEW_COUNTS, *map(str, boards)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        got = {Path(k): v for k, v in _counts(proc.stdout).items()} if proc.returncode == 0 else {}
    else:
        import kicad10
        from conftest import need

        ok, why = kicad10.available()
        need(ok, why)
        inner = {kicad10.inside(p): p for p in boards}
        proc = kicad10.python(_PCBNEW_COUNTS, *inner, timeout=900)
        got = {inner[k]: v for k, v in _counts(proc.stdout).items()} if proc.returncode == 0 else {}
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {p: got[p] for p in boards} == {p: _ours(p) for p in boards}
