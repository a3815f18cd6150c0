"""``accel-drc inspect``: the JSON document, the readable summary, details and bad input.

The expected numbers for the real board are KiCad's own (``test_groundtruth_pcbnew.py`` checks
the reader against pcbnew on the same file): 8 copper layers, 100.1 x 70.1 mm, 1.552 mm thick,
3315 segments, 831 arcs, 430 through + 2 blind vias (F.Cu-In2.Cu).
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from accel_drc import inspection
from accel_drc.cli import main
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS, FIXTURES

CROSSLINK = str(FIXTURE_BOARDS["crosslink-nx-video-converter"])
KICAD6 = str(FIXTURES / "kicad_versions" / "kicad6.kicad_pcb")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_inspect_json_subprocess_on_real_board() -> None:
    proc = run_cli("inspect", "--json", CROSSLINK)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [c["name"] for c in doc["copper_layers"]] == ["F.Cu"] + [
        f"In{i}.Cu" for i in range(1, 7)
    ] + ["B.Cu"]
    assert doc["copper_layers"][0] == {"name": "F.Cu", "user_name": "F.Cu", "type": "signal"}
    assert doc["board_size_mm"] == [100.1, 70.1]
    assert doc["board_thickness_mm"] == 1.552
    assert doc["outline"] == {"rings": 1, "closed_rings": 1}
    assert doc["counts"] == {
        "segments": 3315,
        "arcs": 831,
        "vias": 432,
        "footprints": 340,
        "pads": 1382,
        "nets": 367,
        "zones": 32,
    }
    assert doc["via_types"] == {"through": 430, "blind": 2, "buried": 0, "micro": 0}
    assert doc["via_spans"] == {"F.Cu-B.Cu": 430, "F.Cu-In2.Cu": 2}
    d1 = doc["stackup"][4]
    assert d1 == {
        "name": "dielectric 1",
        "type": "core",
        "thickness_mm": 0.12,
        "material": "FR4",
        "epsilon_r": 4.5,
        "loss_tangent": 0.02,
    }
    assert [r["type"] for r in doc["stackup"][:4]] == [
        "silkscreen",
        "solderpaste",
        "soldermask",
        "copper",
    ]
    assert doc["diff_pairs"] == 22 == len(doc["diff_pair_names"])
    classes = {r["name"]: r for r in doc["net_classes"]}
    assert classes["90Ohm-diff_DDR3"]["diff_pair_width_mm"] == 0.15
    assert sum(r["nets"] for r in doc["net_classes"]) == 367
    assert doc["kicad_version"] == 6 and doc["file_version"] == 20211014
    assert doc["warnings"] == [] and proc.stderr == ""


def test_inspect_json_is_stable_and_rounded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--json", KICAD6]) == 0
    first = capsys.readouterr().out
    assert main(["inspect", "--json", KICAD6]) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert list(doc) == sorted(doc)
    # 0.1 + 0.12 is 0.22000000000000003 in binary: the document says 0.22
    assert doc["stackup"][3]["thickness_mm"] == 0.22
    assert doc["stackup"][3]["sublayers"][1]["material"] == "Megtron6"
    assert doc["board_bbox_mm"] == [-10.05, -0.05, 50.05, 40.05]
    assert doc["via_types"] == {"through": 1, "blind": 1, "buried": 1, "micro": 1}
    assert doc["text_variables"] == {"REV": "B"}
    assert doc["design"]["allow_blind_buried_vias"] is True


def test_inspect_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", KICAD6]) == 0
    out = capsys.readouterr().out
    assert "4 copper layers, 60.100 x 40.100 mm, thickness 1.6 mm" in out
    assert "In1.Cu  GND_PLANE  power" in out
    assert "dielectric 1  prepreg     0.22   FR4 (+1 sublayer)  4.5  0.02" in out
    assert "Via types: 1 through, 1 blind, 1 buried, 1 micro" in out
    assert "USB      2" in out
    assert "Differential pairs: 2: /PCIE_TX0, /USB_D" in out


def test_missing_project_is_a_warning_not_an_error() -> None:
    proc = run_cli("inspect", "--json", str(FIXTURES / "kicad_versions" / "kicad10.kicad_pcb"))
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["net_classes"] == [] and doc["project_file"] is None
    assert any("no .kicad_pro" in w for w in doc["warnings"])
    assert proc.stderr.count("warning: no .kicad_pro") == 1


def test_details_call_the_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def rows(analysis):  # noqa: ANN001, ANN202
        seen["board"] = analysis.board
        return [{"n": len(analysis.board.vias), "x": 0.1234567891}]

    fake = types.ModuleType("fake_detail")
    fake.rows = rows  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_detail", fake)
    monkeypatch.setitem(inspection.DETAIL_PROVIDERS, "vias", ("fake_detail", "rows"))
    board = read_board(KICAD6)
    doc = inspection.inspect_document(board, details=["vias"])
    assert seen["board"] is board
    assert doc["details"] == {"vias": [{"n": 4, "x": 0.123457}]}


def test_detail_not_available_yet_is_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(
        inspection.DETAIL_PROVIDERS, "rails", ("accel_drc.no_such_module", "rail_rows")
    )
    assert main(["inspect", "--detail", "rails", KICAD6]) == 1
    assert "detail rails not available yet" in capsys.readouterr().err


def test_detail_vias_real_provider() -> None:
    proc = run_cli("inspect", "--json", "--detail", "vias", KICAD6)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["details"]["vias"]
    assert [(r["x"], r["y"]) for r in rows[:4]] == [
        (22.05, 22.535),
        (30.0, 30.0),
        (31.0, 30.0),
        (32.0, 30.0),
    ]


BAD_INPUTS = {
    "empty": (b"", "file is empty"),
    "random": (bytes(range(256)) * 40, "not a KiCad board"),
    "gerber": (
        b"G04 made by a CAM tool*\n%FSLAX46Y46*%\n%MOMM*%\nX0Y0D02*\nM02*\n",
        "not a KiCad board",
    ),
    "truncated": (None, "unexpected end of file"),
    "unbalanced": (None, "unexpected ')'"),
    "kicad5": (None, "open and save it in KiCad 6 or newer"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exit_3_one_line(case: str, tmp_path: Path) -> None:
    data, message = BAD_INPUTS[case]
    src = (FIXTURES / "kicad_versions" / "kicad9.kicad_pcb").read_bytes()
    if case == "truncated":
        data = src[: len(src) // 2]
    elif case == "unbalanced":
        data = src.replace(b"(segment", b")(segment", 1)
    elif case == "kicad5":
        data = (FIXTURES / "kicad_versions" / "kicad5.kicad_pcb").read_bytes()
    path = tmp_path / f"{case}.kicad_pcb"
    path.write_bytes(data)
    proc = run_cli("inspect", str(path))
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"accel-drc: {path}") and message in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    if case in ("truncated", "unbalanced", "kicad5"):
        assert lines[0].split(":")[2].strip().isdigit()  # file:line:


def test_future_version_warns_once_and_exits_0() -> None:
    proc = run_cli("inspect", "--json", str(FIXTURES / "kicad_versions" / "kicad_future.kicad_pcb"))
    assert proc.returncode == 0
    assert proc.stderr.count("newer than the newest") == 1
    assert proc.stderr.count("unknown top-level") == 1
    assert json.loads(proc.stdout)["counts"]["vias"] == 3


def test_tiny_si_values_keep_their_significant_digits() -> None:
    """Farads, henries and µΩ impedances in --detail rails must not round to zero."""
    doc = inspection._round({"c": 1.234567891234e-9, "l": 3e-10, "z": 1.5e-4, "mm": 0.1234567891})
    assert doc == {"c": 1.23456789e-9, "l": 3e-10, "z": 1.5e-4, "mm": 0.123457}
