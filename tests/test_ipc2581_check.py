"""End to end: an IPC-2581 file that declares foil roughness and a backdrill makes the ``foil``
and ``via_stub`` checks verifiable with no accel-drc.yaml at all; the same file without those
declarations gets cannot_verify (foil) and a missing-backdrill violation (via_stub)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES

REV_C = FIXTURES / "ipc2581" / "hand_revC_micron.xml"
MNC_SIG3 = '<Backdrill type="MUST_NOT_CUT_LAYER"><Property layerOrGroupRef="SIG3"/></Backdrill>'


def _routed(must_not_cut: str = "SIG4") -> str:
    """The fixture with PCIE5_TX0_P routed on into SIG3 (In2.Cu) from its through via, so the via
    is a real layer change (a via used on one layer only is an open channel, not a stub), and the
    backdrill's must-not-cut layer set to ``must_not_cut``."""
    text = REV_C.read_text(encoding="utf-8")
    old = '        <LayerFeature layerRef="SIG3">\n          <Set net="SIG_A">'
    assert old in text and MNC_SIG3 in text
    route = (
        '        <LayerFeature layerRef="SIG3">\n          <Set net="PCIE5_TX0_P">\n'
        '            <Features><Line startX="10000" startY="20000" endX="10000" endY="14000">'
        '<LineDescRef id="W100"/></Line></Features>\n          </Set>\n          <Set net="SIG_A">'
    )
    text = text.replace(old, route)
    return text.replace(MNC_SIG3, MNC_SIG3.replace("SIG3", must_not_cut))


def _check(board, tmp_path, tag):
    pytest.importorskip("accel_drc.pipeline")
    out = tmp_path / f"{tag}.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "accel_drc.cli",
            "check",
            str(board),
            "--class",
            "training",
            "--json",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # no accel-drc.yaml anywhere near
    )
    assert r.returncode in (0, 5), r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    rules = {r["id"]: r for r in doc["rules"]}
    findings = {}
    for f in doc["findings"]:
        findings.setdefault(f["rule"], []).append(f)
    return rules, findings


def test_declared_foil_and_backdrill_are_verified(tmp_path):
    board = tmp_path / REV_C.name
    board.write_text(_routed("SIG4"), encoding="utf-8")
    rules, findings = _check(board, tmp_path, "declared")
    # PCIE5_TX0_P runs on F.Cu, declared HVLP2 (Rz 1.4 µm): meets pcie5's RTF minimum
    assert rules["training.foil.pcie5"]["checked"] >= 1
    assert "training.foil.pcie5" not in findings
    # its through via (F.Cu -> SIG3 = In2.Cu) is backdrilled from the bottom, but only up to
    # SIG4 (In3.Cu), the must-not-cut layer: the drill leaves the barrel from In2's bottom face
    # to In3's bottom face (D3 0.150 + In3 0.018 = 0.168 mm) plus the 0.2 mm allowance
    # = 0.368 mm > 0.238 mm: a real violation, stated in mm
    assert rules["training.via_stub.pcie5"]["checked"] >= 1
    for rid, fs in findings.items():
        if "via_stub" in rid:
            assert all(f["status"] != "cannot_verify" for f in fs), fs
    (stub,) = findings["training.via_stub.pcie5"]
    assert stub["status"] == "violation" and stub["unit"] == "mm"
    assert stub["measured"] == pytest.approx(0.368, abs=1e-9)
    assert stub["limit"] == pytest.approx(0.238)


def test_backdrill_to_the_connected_layer_leaves_the_allowance(tmp_path):
    """The same board with the must-not-cut layer at SIG3 (the deepest layer the net really
    uses): the drill goes up to it and leaves only the fabricator's 0.2 mm, under pcie5's
    0.238 mm."""
    board = tmp_path / "mnc_sig3.xml"
    board.write_text(_routed("SIG3"), encoding="utf-8")
    rules, findings = _check(board, tmp_path, "mnc_sig3")
    assert rules["training.via_stub.pcie5"]["checked"] >= 1
    assert not any(rid.startswith("training.via_stub.pcie5") for rid in findings), findings


def test_a_via_used_on_one_layer_is_an_open_channel_not_a_stub(tmp_path):
    """The fixture as written: PCIE5_TX0_P stops in its through via on F.Cu. That is an
    unfinished route (open_channel), not a stub to backdrill."""
    board = tmp_path / REV_C.name
    board.write_bytes(REV_C.read_bytes())
    rules, findings = _check(board, tmp_path, "open")
    assert rules["training.via_stub.pcie5"]["checked"] == 0
    assert "training.via_stub.pcie5" not in findings
    opens = {f["net"] for f in findings["training.open_channel"]}
    assert "PCIE5_TX0_P" in opens


def test_undeclared_foil_and_backdrill_are_not_a_pass(tmp_path):
    text = _routed("SIG4")
    text = re.sub(r'\s*<Conductor type="(SURFACE_ROUGHNESS_\w+|OTHER)">.*?</Conductor>', "", text)
    text = re.sub(
        r'<LayerFeature layerRef="BACKDRILL_BOTTOM_SIG4">.*?</LayerFeature>', "", text, flags=re.S
    )
    board = tmp_path / "stripped.xml"
    board.write_text(text, encoding="utf-8")
    rules, findings = _check(board, tmp_path, "stripped")
    foils = findings["training.foil.pcie5"]  # F.Cu and In2.Cu, both undeclared now
    assert {f["layer"] for f in foils} >= {"F.Cu"}
    assert all(f["status"] == "cannot_verify" and "declare" in f["evidence"] for f in foils)
    stub = findings["training.via_stub.pcie5"]
    assert any(f["status"] == "violation" for f in stub)
    assert any(f["status"] == "violation" for f in findings["training.via_stub.pcie5.backdrill"])
