"""``accel-drc check --baseline OLD.json [--fail-on new|error]`` (issue #31 item 10).

Two versions of a small fixture board (tests/_versions.py): the earlier one's ``--json`` report
is the baseline of the later one.  Every finding is marked new, changed or unchanged, the fixed
ones are listed, and ``--fail-on new`` fails only on the error violations the baseline lacks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _versions import copy_board, edit_board
from accel_drc import baseline
from accel_drc.report.markdown import esc, shorten

BIN = str(Path(sys.executable).with_name("accel-drc"))


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BIN, "check", "--class", "edge", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(cwd),
    )


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(folder, version 1's board, version 2's board), and version 1's report as old.json."""
    d = tmp_path_factory.mktemp("baseline")
    v1 = copy_board(d / "v1")
    v2 = edit_board(copy_board(d / "v2"))
    r = _check("--json", "old.json", "--quiet", "--", str(v1), cwd=d)
    assert r.returncode == 5, r.stderr
    return d, v1, v2


def _states(doc: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in doc["findings"]:
        out.setdefault(f["baseline"], []).append(f["rule"])
    return {k: sorted(v) for k, v in out.items()}


def test_each_finding_is_new_changed_or_unchanged_and_fixed_ones_listed(versions) -> None:
    # before: no --baseline (exit 1, a usage error): every finding of an existing board looked
    # like the pull request's
    d, _, v2 = versions
    r = _check(
        "--baseline", "old.json", "--json", "new.json", "--sarif", "new.sarif", "--", str(v2), cwd=d
    )
    assert r.returncode == 5, r.stderr  # --fail-on error (the default): any error violation
    doc = json.loads((d / "new.json").read_text(encoding="utf-8"))
    assert _states(doc) == {
        "new": ["edge.drill_aspect_ratio"],
        "changed": ["edge.impedance.pcie4", "edge.impedance.pcie4"],
        "unchanged": ["edge.layer_count", "edge.pdn_impedance", "signals.assumed_type.pcie4"],
    }
    # the message holds numbers that changed (Zdiff 141.5 -> 163.3 Ω): not part of the identity
    old = json.loads((d / "old.json").read_text(encoding="utf-8"))
    old_imp = [f["message"] for f in old["findings"] if f["rule"] == "edge.impedance.pcie4"]
    new_imp = [f["message"] for f in doc["findings"] if f["rule"] == "edge.impedance.pcie4"]
    assert set(old_imp).isdisjoint(new_imp)
    assert doc["summary"]["baseline"] == {"new": 1, "changed": 2, "unchanged": 3, "fixed": 1}
    base = doc["extras"]["baseline"]
    assert base["file"] == "old.json" and base["board"].endswith("M2.kicad_pcb")
    assert [f["rule"] for f in base["fixed"]] == ["edge.material_consistency.kicad_default"]
    # the terminal summary says it too, the fixed finding by name
    assert "baseline old.json: 1 new, 2 changed, 3 unchanged, 1 fixed" in r.stdout
    assert "fixed: edge.material_consistency.kicad_default" in r.stdout
    # SARIF: baselineState per result (SARIF's word for changed is updated)
    sarif = json.loads((d / "new.sarif").read_text(encoding="utf-8"))
    states = [res["baselineState"] for res in sarif["runs"][0]["results"]]
    assert states == [
        {"new": "new", "changed": "updated", "unchanged": "unchanged"}[f["baseline"]]
        for f in doc["findings"]
    ]


def test_fail_on_new_fails_only_on_what_the_baseline_lacks(versions) -> None:
    d, v1, v2 = versions
    # version 2 adds an error violation (copper weight): exit 5
    assert (
        _check("--baseline", "old.json", "--fail-on", "new", "--", str(v2), cwd=d).returncode == 5
    )
    # version 1 against itself: its layer-count error violation is old debt: exit 0 ...
    r = _check("--baseline", "old.json", "--fail-on", "new", "--quiet", "--", str(v1), cwd=d)
    assert r.returncode == 0, r.stdout + r.stderr
    # ... which --fail-on error (the default) still fails
    assert _check("--baseline", "old.json", "--quiet", "--", str(v1), cwd=d).returncode == 5
    # version 1 against version 2's report: the copper violation is fixed, nothing new fails
    _check("--json", "v2.json", "--quiet", "--", str(v2), cwd=d)
    r = _check(
        "--baseline", "v2.json", "--fail-on", "new", "--json", "back.json", "--", str(v1), cwd=d
    )
    assert r.returncode == 0, r.stdout + r.stderr
    back = json.loads((d / "back.json").read_text(encoding="utf-8"))
    assert [f["rule"] for f in back["extras"]["baseline"]["fixed"]] == ["edge.drill_aspect_ratio"]


def test_fail_on_new_needs_a_baseline_and_a_bad_baseline_is_bad_input(versions, tmp_path) -> None:
    d, v1, _ = versions
    r = _check("--fail-on", "new", "--", str(v1), cwd=d)
    assert r.returncode == 1 and "--fail-on new needs --baseline" in r.stderr
    assert "Traceback" not in r.stderr
    cases = {
        "missing.json": None,
        "broken.json": '{"findings": [\n  {"rule": "x",}\n]}\n',
        "other.json": '{"rules": []}\n',
        "badpos.json": '{"findings": [{"rule": "x", "pos": {"x": "NaN", "y": 1}}]}\n',
        "latin1.json": b'{"findings": [{"rule": "\xe9"}]}',
    }
    said = {}
    for name, content in cases.items():
        if isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        elif content is not None:
            (tmp_path / name).write_text(content, encoding="utf-8")
        out = tmp_path / f"{name}.out.json"
        r = _check("--baseline", str(tmp_path / name), "--json", str(out), "--", str(v1), cwd=d)
        assert r.returncode == 3, (name, r.stderr)
        assert not out.exists()  # refused before the check: no report
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        said[name] = lines[0]
    assert "missing.json: no such file" in said["missing.json"]
    assert "broken.json:2: not JSON" in said["broken.json"]  # the line of the error
    assert "has no 'findings' list" in said["other.json"]
    assert "findings[0].pos: not a finite position" in said["badpos.json"]
    assert "not UTF-8" in said["latin1.json"]


def test_identity_is_rule_subject_and_rounded_position_not_the_message() -> None:
    from accel_drc.results import Finding, Severity, Status

    def f(msg: str, pos: tuple[float, float] | None, net: str = "A") -> Finding:
        return Finding("r", "c", Severity.ERROR, Status.VIOLATION, msg, net=net, pos=pos)

    old = baseline.Baseline(
        "old.json",
        [
            baseline._old_finding(
                {
                    "rule": "r",
                    "net": "A",
                    "pos": {"x": 1.0, "y": 2.0},
                    "status": "violation",
                    "severity": "error",
                },
                "old.json",
                0,
            ),
            baseline._old_finding(
                {
                    "rule": "r",
                    "net": "A",
                    "pos": {"x": 1.0, "y": 2.0},
                    "status": "violation",
                    "severity": "error",
                },
                "old.json",
                1,
            ),
        ],
    )
    now = [f("12.5 Ω", (1.0004, 2.0)), f("13 Ω", (1.0, 1.9999)), f("x", (1.0, 2.0)), f("x", None)]
    got = baseline.compare(now, old)
    # two of one identity match one to one; a third is new, as is one without a position
    assert got.states == ["unchanged", "unchanged", "new", "new"] and got.fixed == []
    assert baseline.compare([f("x", (1.0, 2.0), net="B")], old).states == ["new"]
    assert len(baseline.compare([], old).fixed) == 2


def test_messages_are_cut_at_a_word_boundary() -> None:
    # before: "… the laminate was never really decl…" (cut mid-word at 300 characters)
    text = "the laminate was never really declared " * 20
    cut = shorten(text, 100)
    assert len(cut) <= 100 and cut.endswith("…")
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] == " "  # a whole word before …
    assert esc(text, 100) == cut  # the job summary's text (nothing in it to escape)
    assert shorten("x" * 50, 10) == "x" * 9 + "…"  # one long word: cut where it must be
    assert shorten("short", 10) == "short"
