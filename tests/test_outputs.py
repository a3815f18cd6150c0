"""JSON, SARIF and JUnit are views of one result: they parse and agree with each other."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from accel_drc.config import load_config
from accel_drc.packs import load_library
from accel_drc.pipeline import check_board
from accel_drc.readers import read_board
from accel_drc.report import json_report, junit, sarif
from accel_drc.report.writers import write_outputs
from conftest import FIXTURE_BOARDS, FIXTURES

BOARD = FIXTURE_BOARDS["m2-oculink-adapter"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("out")
    for f in BOARD.parent.iterdir():
        shutil.copy(f, d / f.name)
    (d / "accel-drc.yaml").write_text(
        (FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml").read_text()
        + "waivers:\n  - rule: training.layer_count\n    reason: test board, layer count is what it is\n"
        + "  - rule: training.tg\n    layer: dielectric 2\n    reason: core only\n"
    )
    lib = load_library()
    board_path = str(d / BOARD.name)
    board = read_board(board_path)
    res = check_board(
        board,
        load_config(None, board_path, lib),
        board_file=board_path,
        library=lib,
        today=dt.date(2026, 11, 22),
    )
    paths = {k: str(d / f"out.{k}") for k in ("json", "sarif", "xml", "html")}
    old = os.getcwd()
    os.chdir(d)
    try:
        write_outputs(
            res,
            board,
            json=paths["json"],
            junit=paths["xml"],
            sarif=paths["sarif"],
            html=paths["html"],
        )
    finally:
        os.chdir(old)
    return res, paths, d


def test_json_top_level(outputs):
    res, paths, _ = outputs
    doc = json.loads(Path(paths["json"]).read_text(encoding="utf-8"))
    assert set(doc) >= {
        "tool",
        "board",
        "classification",
        "findings",
        "summary",
        "rule_packs",
        "rules",
        "waivers",
        "extras",
    }
    assert doc["tool"] == {"name": "accel-drc", "version": res.tool_version}
    assert doc["board"]["copper_layers"] == 4 and len(doc["board"]["sha256"]) == 64
    assert (
        doc["classification"]["class"] == "training" and doc["classification"]["source"] == "config"
    )
    assert {p["name"] for p in doc["rule_packs"]} == {"training", "signals", "materials", "foils"}
    assert all(p["version"] for p in doc["rule_packs"])
    f = doc["findings"][0]
    assert set(f) >= {
        "rule",
        "check",
        "severity",
        "status",
        "message",
        "measured",
        "limit",
        "unit",
        "net",
        "layer",
        "pos",
        "items",
        "why",
        "source",
    }
    s = doc["summary"]
    assert (
        s["total"]
        == len(doc["findings"])
        == sum(s["by_status"].values())
        == sum(s["by_severity"].values())
    )
    assert s["by_status"]["waived"] == 2 and s["verdict"] == "fail"
    assert s["unwaived_errors"] == sum(
        1 for f in doc["findings"] if f["severity"] == "error" and f["status"] == "violation"
    )


def test_sarif_agrees_with_json(outputs):
    res, paths, d = outputs
    doc = json.loads(Path(paths["json"]).read_text(encoding="utf-8"))
    s = json.loads(Path(paths["sarif"]).read_text(encoding="utf-8"))
    assert s["version"] == "2.1.0" and "sarif-2.1.0" in s["$schema"]
    [run] = s["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r["id"] for r in doc["rules"]]
    for r in rules:
        assert (
            r["shortDescription"]["text"]
            and r["fullDescription"]["text"]
            and "Source:" in r["help"]["text"]
        )
    results = run["results"]
    assert len(results) == len(doc["findings"])
    ids = {r["id"] for r in rules}
    for r, f in zip(results, doc["findings"]):
        assert r["ruleId"] in ids and rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert f["rule"] == r["ruleId"] or f["rule"] == r["properties"]["subRule"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == BOARD.name  # relative to the cwd (d)
        assert loc["region"]["startLine"] >= 1
        assert r["properties"]["layer"] == f["layer"] and r["properties"]["net"] == f["net"]
        assert r["properties"]["pos"] == f["pos"]
        want = {"error": "error", "warning": "warning", "info": "note"}[f["severity"]]
        if f["status"] == "cannot_verify" and f["severity"] == "error":
            want = "warning"
        assert r["level"] == want
        assert ("suppressions" in r) == (f["status"] == "waived")
    fps = [r["partialFingerprints"]["accelDrcFinding/v1"] for r in results]
    assert len(set(fps)) == len(fps)
    # an item's line in the board file: the first uuid of a laminate finding sits on that line
    lam = next(r for r in results if r["ruleId"] == "training.laminate_df.nvlink4")
    line = lam["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert (
        lam["properties"]["items"][0]
        in Path(d / BOARD.name).read_text(encoding="utf-8").splitlines()[line - 1]
    )
    # stable: the same result gives the same fingerprints
    again = sarif.to_sarif(res, str(d))
    assert [r["partialFingerprints"] for r in again["runs"][0]["results"]] == [
        r["partialFingerprints"] for r in results
    ]


def test_junit_agrees_with_json(outputs):
    _, paths, _ = outputs
    doc = json.loads(Path(paths["json"]).read_text(encoding="utf-8"))
    root = ET.parse(paths["xml"]).getroot()
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [r["id"] for r in doc["rules"]]

    def owner(fid):
        ids = {r["id"] for r in doc["rules"]}
        while fid not in ids:
            fid = fid.rsplit(".", 1)[0]
        return fid

    st = {}
    for f in doc["findings"]:
        st.setdefault(owner(f["rule"]), Counter())[f["status"]] += 1
    for c in cases:
        got = st.get(c.get("name"), Counter())
        assert (c.find("failure") is not None) == (got["violation"] > 0), c.get("name")
        assert (c.find("error") is not None) == (got["cannot_verify"] > 0), c.get("name")
        assert (c.find("skipped") is not None) == (
            got["waived"] > 0 and not got["violation"] and not got["cannot_verify"]
        )
    assert root.get("tests") == str(len(cases))
    assert root.get("failures") == str(sum(1 for c in cases if c.find("failure") is not None))
    assert root.get("errors") == str(sum(1 for c in cases if c.find("error") is not None))
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert skipped == ["training.layer_count"]  # tg still has findings that are not waived


def test_html_is_written(outputs):
    _, paths, _ = outputs
    text = Path(paths["html"]).read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith("<!doctype html") and "accel-drc" in text


def test_json_has_no_nan(outputs):
    res, _, _ = outputs
    text = json_report.dumps(res)
    assert "NaN" not in text and "Infinity" not in text
    assert junit.dumps(res).startswith('<?xml version="1.0" encoding="UTF-8"?>')


def test_nan_becomes_null_and_uuid_lines(tmp_path):
    import numpy as np
    from accel_drc.report.json_report import fast_dumps

    assert json.loads(fast_dumps({"a": float("nan"), "b": np.float64(1.5), "c": (1, 2)})) == {
        "a": None,
        "b": 1.5,
        "c": [1, 2],
    }
    board = tmp_path / "b.kicad_pcb"
    u1, u2 = "12345678-aaaa-bbbb-cccc-000000000001", "12345678-aaaa-bbbb-cccc-000000000002"
    board.write_text(
        f'(kicad_pcb\n  (segment (start 0 0)\n    (uuid "{u2}")\n  )\n  (via\n\n    (uuid "{u1.upper()}"))\n)\n'
    )
    assert sarif.uuid_lines(str(board), [u1, u2, "nope"]) == {u2: 3, u1: 7}


def test_a_crashing_check_is_a_finding_not_silence():
    from accel_drc import checks
    from accel_drc.pipeline import check_board as cb
    from accel_drc.results import Severity, Status

    board = read_board(str(BOARD))
    registry = checks.load_all()
    saved = registry["tg"]

    def boom(ctx, rule):
        raise ZeroDivisionError("oops")

    registry["tg"] = boom
    try:
        res = cb(board, None, library=load_library())
    finally:
        registry["tg"] = saved
    [f] = [f for f in res.findings if f.rule == "edge.tg"]
    assert (f.severity, f.status) == (Severity.ERROR, Status.CANNOT_VERIFY)
    assert "internal error in check tg: ZeroDivisionError: oops" in f.message
    assert f.evidence["exception"] == "ZeroDivisionError: oops"


def test_verdict_fail_unverified_pass_in_every_output():
    """Unknown is not pass: an error-severity rule that could not be checked makes the verdict
    NOT VERIFIED (exit 0, as the issue's kicad-cli convention says), a violation FAIL (exit 5);
    a waived error or a warning-level cannot-verify leaves it PASS.  Text, JSON and HTML agree."""
    from dataclasses import replace

    from accel_drc.pipeline import exit_code
    from accel_drc.report import html
    from accel_drc.report.text import verdict_line
    from accel_drc.results import Finding, Severity, Status

    board = read_board(str(BOARD))
    base = check_board(board, board_class="edge", today=dt.date(2026, 11, 22))

    def f(sev: Severity, st: Status) -> Finding:
        return Finding(rule="x.rule", check="tg", severity=sev, status=st, message="m")

    cases = [
        ([f(Severity.ERROR, Status.VIOLATION), f(Severity.ERROR, Status.CANNOT_VERIFY)], "fail", 5),
        (
            [f(Severity.ERROR, Status.CANNOT_VERIFY), f(Severity.WARNING, Status.VIOLATION)],
            "unverified",
            0,
        ),
        ([f(Severity.ERROR, Status.WAIVED), f(Severity.WARNING, Status.CANNOT_VERIFY)], "pass", 0),
        ([], "pass", 0),
    ]
    for findings, want, code in cases:
        r = replace(base, findings=findings)
        assert r.verdict() == want
        assert exit_code(r) == code
        assert json_report.to_dict(r)["summary"]["verdict"] == want
        line = verdict_line(r)
        assert line.startswith({"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}[want])
        page = html.render(r, board)
        text = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}[want]
        assert f'class="verdict-text">{text}<' in page
        assert f'<header class="banner {want}"' in page
