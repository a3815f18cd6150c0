"""``check --kicad-drc``: KiCad's own DRC in the same gate, its exclusions honoured as KiCad does.

Ground truth: KiCad's own serialisation of exclusions (``PCB_MARKER::SerializeToString``, as
written by KiCad 9 into the m2-oculink-adapter fixture's ``.kicad_pro``) and real ``kicad-cli pcb
drc`` runs of KiCad 9.0.8 (host) and 10.0.7 (its chroot) on the fixture boards.  The fixture
carries 8 exclusions a designer made in KiCad.  KiCad matches one to a marker by its exact
position (``BOARD::ResolveDRCExclusions``), and both KiCads place two of those markers elsewhere
now: KiCad 9.0.8 applies 7 (the unconnected item's marker is on the pad, 151.36 mm, not at the
stored 152.32 mm) and 10.0.7 applies 6 (its REF** courtyard marker moved too).  kicad-cli flags
exactly the entries it applied ``"excluded": true`` -- unconnected items too, shown by moving the
stored position onto the pad -- and accel-drc waives exactly those.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kicad10
import pytest
from accel_drc import __version__, kicad_drc
from accel_drc.kicad_drc import Exclusion, apply_exclusions, from_report, read_exclusions
from accel_drc.results import Status
from conftest import FIXTURE_BOARDS, need

M2 = FIXTURE_BOARDS["m2-oculink-adapter"]
U1, U2, U3 = (
    "4b412f8c-9190-44e2-9f49-09f7b8c779bd",
    "fcd9c79d-8871-4e95-afea-da3ce6e4fd74",
    "477021a0-9647-45d7-a17e-5ebdb906f6e6",
)


def _entry(kind: str, uuids: list[str], pos: list[tuple[float, float]], **kw: Any) -> dict:
    return {
        "type": kind,
        "description": kw.pop("description", kind.replace("_", " ")),
        "severity": kw.pop("severity", "error"),
        "items": [
            {"uuid": u, "description": f"Track [NET{i}] on F.Cu", "pos": {"x": x, "y": y}}
            for i, (u, (x, y)) in enumerate(zip(uuids, pos))
        ],
        **kw,
    }


def _report(violations: list[dict], unconnected: list[dict] = (), version: str = "8.0.5") -> dict:
    """A KiCad 8-style report (drc.v1: no ``excluded`` field at all)."""
    return {
        "$schema": "https://schemas.kicad.org/drc.v1.json",
        "source": "b.kicad_pcb",
        "date": "2026-01-01T00:00:00+0000",
        "kicad_version": version,
        "coordinate_units": "mm",
        "violations": list(violations),
        "unconnected_items": list(unconnected),
        "schematic_parity": [],
    }


# ---------------------------------------------------------------------------------------------
# Exclusion strings, as KiCad serialises them
# ---------------------------------------------------------------------------------------------


def test_exclusion_parse_main_aux() -> None:
    e = Exclusion.parse(f"unconnected_items|152320000|91170000|{U2}|{U1}", "ok by design")
    assert e.key == "unconnected_items"
    assert e.pos_mm == (152.32, 91.17)
    assert e.uuids == {U1, U2}
    assert e.layer is None and e.comment == "ok by design"


def test_exclusion_parse_unconnected_since_9_0_4() -> None:
    """KiCad 9.0.4+ writes ``unconnected_items|x|y|<layer>|<marker type>|<main>|<aux>``
    (``PCB_MARKER::SerializeToString``): the layer and marker type are not item uuids."""
    e = Exclusion.parse(f"unconnected_items|151360000|91170000|F.Cu|2|{U1}|{U2}")
    assert (e.pos_mm, e.uuids, e.layer) == ((151.36, 91.17), {U1, U2}, "F.Cu")


def test_exclusion_parse_layer_keyed_and_starved_thermal() -> None:
    sliver = Exclusion.parse(f"copper_sliver|1000000|2000000|{U1}|In1.Cu")
    assert sliver.uuids == {U1} and sliver.layer == "In1.Cu"
    thermal = Exclusion.parse(f"starved_thermal|0|0|{U1}|{U2}|B.Cu")
    assert thermal.uuids == {U1, U2} and thermal.layer == "B.Cu"
    nil = Exclusion.parse(f"silk_overlap|0|0|{U1}|00000000-0000-0000-0000-000000000000")
    assert nil.uuids == {U1}


def test_read_exclusions_kicad8_strings_and_kicad9_pairs(tmp_path: Path) -> None:
    pro = tmp_path / "b.kicad_pro"
    pro.write_text(
        json.dumps(
            {
                "board": {
                    "design_settings": {
                        "drc_exclusions": [
                            f"clearance|0|0|{U1}|{U2}",  # KiCad 8
                            [f"clearance|5000000|0|{U3}|{U2}", "reviewed"],  # KiCad 9/10
                        ]
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    got = read_exclusions(pro)
    assert [(e.uuids, e.comment) for e in got] == [({U1, U2}, ""), ({U3, U2}, "reviewed")]
    assert read_exclusions(tmp_path / "missing.kicad_pro") == []


def test_fixture_exclusions_are_kicad9_pairs() -> None:
    got = read_exclusions(M2.with_suffix(".kicad_pro"))
    assert len(got) == 8
    assert {e.key for e in got} == {"courtyards_overlap", "unconnected_items"}


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


def test_exclusion_matches_reversed_item_order_and_reports_stale() -> None:
    """KiCad's string is main|aux; the JSON report lists the items in its own order."""
    report = _report(
        [_entry("clearance", [U3, U2], [(1, 1), (2, 2)])],
        [_entry("unconnected_items", [U1, U2], [(151.36, 91.17), (152.79, 91.17)])],
    )
    excl = [
        Exclusion.parse(f"unconnected_items|152320000|91170000|{U2}|{U1}", "fed by a jumper"),
        Exclusion.parse(f"clearance|0|0|{U1}|{U3}"),  # the board changed: stale
    ]
    drc = from_report(report, excl, project_file="b.kicad_pro")
    found, runs, rows = kicad_drc.findings(drc)
    by_rule = {f.rule: f for f in found}
    assert by_rule["kicad.unconnected_items"].status == Status.WAIVED
    assert by_rule["kicad.unconnected_items"].waiver["reason"] == "fed by a jumper"
    assert by_rule["kicad.clearance"].status == Status.VIOLATION
    assert [r["state"] for r in rows] == ["applied", "stale"]
    assert rows[1]["hint"] and rows[0]["origin"] == "kicad"
    assert {r.rule.id for r in runs} == {"kicad.drc", "kicad.clearance", "kicad.unconnected_items"}


def test_two_entries_on_the_same_items_go_to_the_nearest() -> None:
    """Two clearance violations between one track and one zone: the exclusion stored at
    (10, 10) mm takes the entry whose items are near it, and only that one."""
    near = _entry("clearance", [U1, U2], [(10.1, 10.0), (30, 30)])
    far = _entry("clearance", [U1, U2], [(50.0, 50.0), (30, 30)])
    drc = from_report(
        _report([far, near]), [Exclusion.parse(f"clearance|10000000|10000000|{U1}|{U2}")]
    )
    found, _, rows = kicad_drc.findings(drc)
    waived = [f for f in found if f.status == Status.WAIVED]
    assert len(waived) == 1 and waived[0].pos == (10.1, 10.0)
    assert rows[0]["matched"] == 1


def test_kicad_cli_excluded_flag_is_honoured_without_a_stored_string() -> None:
    v = _entry("courtyards_overlap", [U1, U3], [(0, 0), (1, 1)], excluded=True, comment="fits")
    found, _, rows = kicad_drc.findings(from_report(_report([v], version="9.0.8")))
    assert found[0].status == Status.WAIVED and found[0].waiver["reason"] == "fits"
    assert rows == []


def test_kicad9_report_unflagged_entry_is_not_waived_by_a_stored_string() -> None:
    """A KiCad 9/10 report is KiCad's own verdict: a stored exclusion on the same items whose
    entry KiCad did not flag (its marker moved) waives nothing and is stale, saying why."""
    v = _entry("courtyards_overlap", [U1, U3], [(140.175, 83.475), (140.175, 83.475)])
    excl = [Exclusion.parse(f"courtyards_overlap|136320000|79460000|{U1}|{U3}")]
    found, _, rows = kicad_drc.findings(from_report(_report([v], version="10.0.7"), excl))
    assert found[0].status == Status.VIOLATION
    assert rows[0]["state"] == "stale"
    assert "KiCad 10.0.7 no longer applies it" in rows[0]["hint"]
    assert "(136.3200, 79.4600 mm here)" in rows[0]["hint"]
    # the same report from KiCad 8 (no flags): accel-drc's own match waives it
    found8, _, rows8 = kicad_drc.findings(from_report(_report([v], version="8.0.5"), excl))
    assert found8[0].status == Status.WAIVED and rows8[0]["state"] == "applied"


def test_kicad9_report_flagged_entry_pairs_with_its_exclusion() -> None:
    v = _entry("clearance", [U1, U3], [(1, 1), (2, 2)], excluded=True, comment="ok")
    excl = [Exclusion.parse(f"clearance|1000000|1000000|{U3}|{U1}", "ok")]
    found, _, rows = kicad_drc.findings(from_report(_report([v], version="9.0.8"), excl))
    assert found[0].status == Status.WAIVED and found[0].evidence["kicad_exclusion"]
    assert [r["state"] for r in rows] == ["applied"]


def test_unconnected_exclusion_matched_by_position_pairs_with_kicads_flag() -> None:
    """Since 9.0.4 KiCad matches an ``unconnected_items`` exclusion by position alone, so the
    entry it flags may name other items (a track re-drawn with a new uuid): the stored string
    pairs with the flagged entry of its type and comment and is applied, not stale."""
    v = _entry("unconnected_items", [U1, U3], [(151.36, 91.17), (152.0, 91.17)])
    v.update(excluded=True, comment="jumper")
    excl = [Exclusion.parse(f"unconnected_items|151360000|91170000|{U1}|{U2}", "jumper")]
    found, _, rows = kicad_drc.findings(from_report(_report([], [v], version="10.0.7"), excl))
    assert found[0].status == Status.WAIVED and rows[0]["state"] == "applied"


def test_exclusion_severity_word_is_an_exclusion() -> None:
    v = _entry("clearance", [U1], [(0, 0)], severity="exclusion")
    found, _, _ = kicad_drc.findings(from_report(_report([v], version="10.0.1")))
    assert found[0].status == Status.WAIVED


def test_findings_carry_kicad_facts_and_measured_basis() -> None:
    v = _entry(
        "clearance", [U1], [(1.5, 2.5)], severity="warning", description="Clearance violation"
    )
    (f,), _, _ = kicad_drc.findings(from_report(_report([v])))
    assert f.check == "kicad_drc" and f.rule == "kicad.clearance"
    assert f.severity.value == "warning" and f.pos == (1.5, 2.5)
    assert f.net == "NET0" and f.layer == "F.Cu" and f.items == (U1,)
    assert f.evidence["basis"] == {"kicad_drc": "measured"}
    assert f.evidence["kicad_version"] == "8.0.5"
    assert "KiCad 8.0.5" in f.source and f.source.startswith("[kicad9-cli] pcb drc")


def test_units_in_mils_become_mm() -> None:
    r = _report([_entry("clearance", [U1], [(1000, 2000)])])
    r["coordinate_units"] = "mils"
    (f,), _, _ = kicad_drc.findings(from_report(r))
    assert f.pos == (25.4, 50.8)


def test_apply_exclusions_leaves_unrelated_findings() -> None:
    report = _report([_entry("clearance", [U1], [(0, 0)])])
    found, _, _ = kicad_drc.findings(from_report(report))
    out, rows = apply_exclusions(found, [Exclusion.parse(f"hole_clearance|0|0|{U1}|{U2}")])
    assert out[0].status == Status.VIOLATION and rows[0]["state"] == "stale"


# ---------------------------------------------------------------------------------------------
# In the pipeline: one verdict, our waivers too, every output says the KiCad version
# ---------------------------------------------------------------------------------------------


def _check(tmp_path: Path, report: dict, excl: list[Exclusion], waivers: list[dict]) -> Any:
    from accel_drc.config import ProjectConfig
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    board = read_board(str(FIXTURE_BOARDS["coral-tpu-m2-adapter"]))
    cfg = ProjectConfig(data={"waivers": waivers})
    return check_board(
        board, cfg, board_file=board.source, kicad_drc=from_report(report, excl)
    ), board


def test_pipeline_one_verdict_exclusions_and_our_waivers(tmp_path: Path) -> None:
    report = _report(
        [
            _entry("clearance", [U1], [(1, 1)]),
            _entry("silk_overlap", [U2], [(2, 2)], severity="warning"),
            _entry("track_width", [U3], [(3, 3)]),
        ]
    )
    excl = [Exclusion.parse(f"track_width|0|0|{U3}|00000000-0000-0000-0000-000000000000")]
    waivers = [{"rule": "kicad.silk_*", "reason": "silk is cosmetic", "owner": "a@b.c"}]
    result, board = _check(tmp_path, report, excl, waivers)
    mine = {f.rule: f for f in result.findings if f.check == "kicad_drc"}
    assert mine["kicad.clearance"].status == Status.VIOLATION
    assert mine["kicad.silk_overlap"].status == Status.WAIVED
    assert mine["kicad.silk_overlap"].waiver["reason"] == "silk is cosmetic"
    assert mine["kicad.track_width"].waiver["origin"] == "kicad"
    assert result.verdict() == "fail" and mine["kicad.clearance"] in result.unwaived_errors()
    states = {(w["rule"], w["state"]) for w in result.waivers}
    assert ("kicad.silk_*", "applied") in states and ("kicad.track_width", "applied") in states
    assert result.extras["kicad_drc"]["kicad_version"] == "8.0.5"

    from accel_drc.report import html, json_report, junit, markdown, sarif, text

    assert json_report.to_dict(result)["extras"]["kicad_drc"]["kicad_version"] == "8.0.5"
    doc = sarif.to_sarif(result)
    assert doc["runs"][0]["tool"]["extensions"][0]["version"] == "8.0.5"
    assert doc["runs"][0]["tool"]["driver"]["version"] == __version__
    assert 'name="kicad.version" value="8.0.5"' in junit.dumps(result)
    assert "KiCad 8.0.5" in text.summary(result)
    assert "KiCad DRC** KiCad 8.0.5" in markdown.render(result)
    page = html.render(result, board)
    assert 'id="kicad-drc"' in page and "KiCad 8.0.5" in page and "kicad.clearance" in page
    assert "docs.kicad.org/9.0/en/cli/cli.html" in page  # the source's citation, in full


# ---------------------------------------------------------------------------------------------
# The command: no kicad-cli is a one-line usage error; a real kicad-cli in CI
# ---------------------------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, **(env or {})),
    )


def test_no_kicad_cli_is_exit_1_with_how_to_install(tmp_path: Path) -> None:
    r = _cli(
        "check", str(M2), "--kicad-drc", env={"PATH": str(tmp_path), "ACCEL_DRC_KICAD_CLI": ""}
    )
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1
    assert "kicad-cli not found" in r.stderr and "apt install kicad" in r.stderr


def test_kicad_drc_needs_a_kicad_board(tmp_path: Path) -> None:
    xml = tmp_path / "b.xml"
    xml.write_text("<IPC-2581/>", encoding="utf-8")
    r = _cli("check", str(xml), "--kicad-drc")
    assert r.returncode == 1 and ".kicad_pcb" in r.stderr


def _kicad_cli_report(version: str, board: Path, tmp_path: Path) -> dict[str, Any]:
    """KiCad ``version``'s ``kicad-cli pcb drc --format json --severity-all`` report of
    ``board`` (KiCad 9 on the host, KiCad 10 in its chroot), or a skip (a failure in CI)."""
    if version == "9":
        exe = shutil.which("kicad-cli")
        need(exe is not None, "kicad-cli is not installed (apt: kicad)")
        raw = tmp_path / "drc9.json"
        cmd = [exe, "pcb", "drc", "--format", "json", "--severity-all", "-o", str(raw), str(board)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
        return json.loads(raw.read_text(encoding="utf-8"))
    ok, why = kicad10.available()
    need(ok, why)
    src = kicad10.inside(board)
    out = str(Path(src).parent / "drc10.json")
    r = kicad10.run(
        ["/usr/bin/kicad-cli", "pcb", "drc", "--format", "json", "--severity-all", "-o", out, src]
    )
    assert r.returncode == 0, r.stderr
    report = json.loads(kicad10.outside(out).read_text(encoding="utf-8"))
    kicad10.outside(out).unlink()
    return report


def _flagged(report: dict[str, Any]) -> set[tuple[str, frozenset[str]]]:
    """(type, item uuids) of every entry kicad-cli flagged excluded."""
    return {
        (v["type"], frozenset(i["uuid"] for i in v["items"]))
        for s in ("violations", "unconnected_items", "schematic_parity")
        for v in report.get(s) or []
        if v.get("excluded")
    }


def _waived(found: list[Any]) -> set[tuple[str, frozenset[str]]]:
    return {
        (f.evidence["kicad_type"], frozenset(f.items)) for f in found if f.status == Status.WAIVED
    }


#: what each KiCad applies of the fixture's 8 stored exclusions (measured: kicad-cli's flags)
_APPLIED = {"9": 7, "10": 6}


@pytest.mark.kicad
@pytest.mark.parametrize("version", ["9", "10"])
def test_real_kicad_cli_exclusions_as_kicad_applies_them(version: str, tmp_path: Path) -> None:
    """The fixture's 8 stored exclusions against a real kicad-cli: accel-drc waives exactly what
    that KiCad excluded (9.0.8: 7, 10.0.7: 6) and reports the rest stale, saying the marker moved;
    it used to waive all 8, one or two errors more lenient than KiCad."""
    report = _kicad_cli_report(version, M2, tmp_path)
    assert report["kicad_version"].startswith(version + ".")
    stored = read_exclusions(M2.with_suffix(".kicad_pro"))
    found, _, rows = kicad_drc.findings(from_report(report, stored, project_file=str(M2)))
    assert _waived(found) == _flagged(report)
    assert len(_waived(found)) == _APPLIED[version]
    assert [r["state"] for r in rows].count("applied") == _APPLIED[version]
    stale = [r for r in rows if r["state"] == "stale"]
    assert len(stale) == 8 - _APPLIED[version]
    assert all("no longer applies it" in r["hint"] for r in stale)
    assert any(r["rule"] == "kicad.unconnected_items" for r in stale)


@pytest.mark.kicad
@pytest.mark.parametrize("version", ["9", "10"])
def test_real_kicad_cli_applies_an_unconnected_exclusion_at_its_marker(
    version: str, tmp_path: Path
) -> None:
    """The stored unconnected exclusion moved onto the pad (where KiCad 9.0.8 and 10.0.7 put the
    marker): kicad-cli flags the unconnected item excluded, and accel-drc waives it too -- so
    kicad-cli does report exclusions of unconnected items; the stored 152.32 mm was the lapse."""
    for sibling in (M2, M2.with_suffix(".kicad_pro")):
        shutil.copy(sibling, tmp_path / sibling.name)
    pro = tmp_path / M2.with_suffix(".kicad_pro").name
    doc = json.loads(pro.read_text(encoding="utf-8"))
    entries = doc["board"]["design_settings"]["drc_exclusions"]
    old = "unconnected_items|152320000|91170000|"
    assert sum(e[0].startswith(old) for e in entries) == 1
    for e in entries:
        e[0] = e[0].replace(old, "unconnected_items|151360000|91170000|")
    pro.write_text(json.dumps(doc), encoding="utf-8")
    board = tmp_path / M2.name
    report = _kicad_cli_report(version, board, tmp_path)
    assert any(v.get("excluded") for v in report["unconnected_items"])
    found, _, rows = kicad_drc.findings(from_report(report, read_exclusions(pro)))
    assert _waived(found) == _flagged(report)
    (row,) = [r for r in rows if r["rule"] == "kicad.unconnected_items"]
    assert row["state"] == "applied"


@pytest.mark.kicad
def test_real_kicad_cli_check_waives_what_kicad_excluded(kicad_cli: str, tmp_path: Path) -> None:
    """End to end (``check --kicad-drc`` with the host's kicad-cli): every KiCad entry is a
    finding, the waived ones are exactly those kicad-cli flagged, and every output says which
    KiCad ran."""
    report = _kicad_cli_report("9", M2, tmp_path)
    out = tmp_path / "out.json"
    r = _cli("check", str(M2), "--kicad-drc", "--json", str(out), "--quiet")
    assert r.returncode in (0, 5), r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    kicad = [f for f in doc["findings"] if f["check"] == "kicad_drc"]
    n_native = sum(len(report[s]) for s in ("violations", "unconnected_items", "schematic_parity"))
    assert len(kicad) == n_native
    waived = {
        (f["rule"].split(".", 1)[1], frozenset(f["items"]))
        for f in kicad
        if f["status"] == "waived"
    }
    assert waived == _flagged(report)
    rows = [w for w in doc["waivers"] if w.get("origin") == "kicad"]
    assert sorted(w["state"] for w in rows) == ["applied"] * _APPLIED["9"] + ["stale"]
    assert doc["extras"]["kicad_drc"]["kicad_version"] == report["kicad_version"]


@pytest.mark.kicad
def test_real_kicad_cli_violations_fail_the_gate(kicad_cli: str, tmp_path: Path) -> None:
    """crosslink has KiCad DRC errors and no exclusions: exit 5, SARIF carries them."""
    board = FIXTURE_BOARDS["crosslink-nx-video-converter"]
    sarif_path = tmp_path / "o.sarif"
    r = _cli("check", str(board), "--kicad-drc", "--sarif", str(sarif_path), "--quiet")
    assert r.returncode == 5, r.stderr
    doc = json.loads(sarif_path.read_text(encoding="utf-8"))
    ids = {res["ruleId"] for res in doc["runs"][0]["results"]}
    assert "kicad.clearance" in ids and "kicad.unconnected_items" in ids
    assert doc["runs"][0]["tool"]["extensions"][0]["name"].startswith("KiCad DRC")


@pytest.mark.kicad
def test_bad_board_with_kicad_drc_is_bad_input_and_leaves_no_kicad_cli(
    kicad_cli: str, tmp_path: Path
) -> None:
    """accel-drc's reader refuses the board while kicad-cli runs: exit 3, one line, and the
    kicad-cli it started is ended (no orphan writing into a temp folder)."""
    import os

    bad = tmp_path / "bad.kicad_pcb"
    bad.write_text("(kicad_pcb (version 20241229) (generator pcbnew)\n", encoding="utf-8")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    r = _cli("check", str(bad), "--kicad-drc", env={"TMPDIR": str(scratch)})
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "bad.kicad_pcb" in r.stderr
    assert os.listdir(scratch) == []  # kicad-cli's report folder is gone with it
