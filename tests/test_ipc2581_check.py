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
    board.write_bytes(REV_C.read_bytes())
    rules, findings = _check(board, tmp_path, "declared")
    # PCIE5_TX0_P runs on F.Cu, declared HVLP2 (Rz 1.4 µm): meets pcie5's RTF minimum
    assert rules["training.foil.pcie5"]["checked"] >= 1
    assert "training.foil.pcie5" not in findings
    # its through via is backdrilled from the bottom, but only up to SIG3 (In2.Cu), the
    # must-not-cut layer, while the net uses F.Cu alone: the drill leaves the barrel from F.Cu's
    # bottom face to In2's bottom face (D1 0.1 + In1 0.018 + D2 0.2 + In2 0.018 = 0.336 mm)
    # plus the 0.2 mm allowance = 0.536 mm > 0.238 mm: a real violation, stated in mm
    assert rules["training.via_stub.pcie5"]["checked"] >= 1
    for rid, fs in findings.items():
        if "via_stub" in rid:
            assert all(f["status"] != "cannot_verify" for f in fs), fs
    (stub,) = findings["training.via_stub.pcie5"]
    assert stub["status"] == "violation" and stub["unit"] == "mm"
    assert stub["measured"] == pytest.approx(0.536, abs=1e-9)
    assert stub["limit"] == pytest.approx(0.238)


def test_backdrill_to_the_connected_layer_leaves_the_allowance(tmp_path):
    """The same board with the must-not-cut layer at TOP (the layer the net really uses): the
    drill goes up to it and leaves only the fabricator's 0.2 mm, under pcie5's 0.238 mm."""
    text = REV_C.read_text(encoding="utf-8")
    old = '<Backdrill type="MUST_NOT_CUT_LAYER"><Property layerOrGroupRef="SIG3"/></Backdrill>'
    assert old in text
    board = tmp_path / "mnc_top.xml"
    board.write_text(text.replace(old, old.replace("SIG3", "TOP")), encoding="utf-8")
    rules, findings = _check(board, tmp_path, "mnc_top")
    assert rules["training.via_stub.pcie5"]["checked"] >= 1
    assert not any(rid.startswith("training.via_stub.pcie5") for rid in findings), findings


def test_undeclared_foil_and_backdrill_are_not_a_pass(tmp_path):
    text = REV_C.read_text(encoding="utf-8")
    text = re.sub(r'\s*<Conductor type="(SURFACE_ROUGHNESS_\w+|OTHER)">.*?</Conductor>', "", text)
    text = re.sub(
        r'<LayerFeature layerRef="BACKDRILL_BOTTOM_SIG4">.*?</LayerFeature>', "", text, flags=re.S
    )
    board = tmp_path / "stripped.xml"
    board.write_text(text, encoding="utf-8")
    rules, findings = _check(board, tmp_path, "stripped")
    (foil,) = findings["training.foil.pcie5"]
    assert foil["status"] == "cannot_verify" and foil["layer"] == "F.Cu"
    assert "declare" in foil["evidence"]
    stub = findings["training.via_stub.pcie5"]
    assert any(f["status"] == "violation" for f in stub)
    assert any(f["status"] == "violation" for f in findings["training.via_stub.pcie5.backdrill"])
