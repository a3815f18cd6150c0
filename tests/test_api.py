"""The library API (issue 31 item 14, docs/api.md): ``accel_drc.check`` and
``accel_drc.read_board`` give what ``accel-drc check`` gives, take a path or a Board and a config
path or dict, fail with the same errors, and ``import accel_drc`` stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import accel_drc
import pytest
import yaml
from accel_drc.report.json_report import to_dict
from conftest import FIXTURE_BOARDS, FIXTURES, ROOT

M2 = FIXTURE_BOARDS["m2-oculink-adapter"]
TRAINING = FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml"


def _cli_json(*args: str) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "check", "--quiet", "--json", "-", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode in (0, 5), r.stderr
    return json.loads(r.stdout)


def _findings(result: Any) -> list[dict[str, Any]]:
    """The findings as the JSON report writes them (the CLI's ``--json``)."""
    return json.loads(json.dumps(to_dict(result)["findings"]))


def test_check_equals_the_cli_json() -> None:
    cli = _cli_json(str(M2), "--config", str(TRAINING))
    result = accel_drc.check(str(M2), config=str(TRAINING))
    assert cli["findings"], "the training config makes this board fail: findings to compare"
    assert _findings(result) == cli["findings"]
    assert to_dict(result)["classification"] == cli["classification"]
    assert result.verdict() == "fail" and result.unwaived_errors()


def test_board_object_path_like_and_dict_config_give_the_same_findings() -> None:
    by_path = _findings(accel_drc.check(M2, config=TRAINING))  # os.PathLike both
    board = accel_drc.read_board(M2)
    assert isinstance(board, accel_drc.Board)
    data = yaml.safe_load(TRAINING.read_text(encoding="utf-8"))
    by_object = _findings(accel_drc.check(board, config=data))
    assert by_object == by_path
    # board_class beats the config's class:, as --class does on the command line
    edge = accel_drc.check(board, config=data, board_class="edge")
    assert edge.classification.board_class == "edge"
    assert (
        _findings(edge)
        == _cli_json(str(M2), "--config", str(TRAINING), "--class", "edge")["findings"]
    )


def test_no_config_finds_the_one_beside_the_board_as_the_cli_does(tmp_path: Path) -> None:
    board = tmp_path / M2.name
    board.write_bytes(M2.read_bytes())
    (tmp_path / "accel-drc.yaml").write_bytes(TRAINING.read_bytes())
    beside = accel_drc.check(str(board))
    assert beside.classification.board_class == "training"  # class: training, from beside it
    assert _findings(beside) == _cli_json(str(board))["findings"]
    ignored = accel_drc.check(str(board), config={})  # {}: no config whatever lies beside
    assert ignored.classification.board_class != "training"


def test_a_bad_dict_config_fails_as_the_file_would() -> None:
    with pytest.raises(accel_drc.InputError, match=r"^<config>: .*unknown signal type 'nvlink9'"):
        accel_drc.check(M2, config={"signals": {"nvlink9": ["X.*"]}})
    with pytest.raises(accel_drc.InputError, match=r"^<config>: .*nested repetition"):
        accel_drc.check(M2, config={"signals": {"pcie4": ["(a+)+b"]}})
    with pytest.raises(accel_drc.InputError, match=r"^<config>: .*no copper layer 'In9.Cu'"):
        accel_drc.check(M2, config={"stackup": {"foil": {"In9.Cu": "VLP"}}})
    with pytest.raises(accel_drc.InputError, match=r"^<config>: "):
        accel_drc.check(M2, config={"no_such_key": 1})


def test_errors_are_the_cli_errors(tmp_path: Path) -> None:
    with pytest.raises(accel_drc.InputError, match="cannot open"):
        accel_drc.read_board(tmp_path / "missing.kicad_pcb")
    junk = tmp_path / "junk.kicad_pcb"
    junk.write_text("hello", encoding="utf-8")
    with pytest.raises(accel_drc.InputError, match="not a KiCad board"):
        accel_drc.check(junk)
    with pytest.raises(accel_drc.InputError, match="config file not found"):
        accel_drc.check(M2, config=tmp_path / "missing.yaml")
    with pytest.raises(accel_drc.UsageError, match="unknown class 'huge'"):
        accel_drc.check(M2, config={}, board_class="huge")
    assert issubclass(accel_drc.InputError, accel_drc.AccelDrcError)
    with pytest.raises(TypeError, match="board must be a path or an accel_drc Board"):
        accel_drc.check(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be"):
        accel_drc.check(M2, config=[1])  # type: ignore[arg-type]


def test_import_is_light_and_every_public_name_resolves() -> None:
    code = (
        "import sys; before = set(sys.modules); import accel_drc; "
        "new = set(sys.modules) - before; "  # what import accel_drc itself loaded
        "heavy = [m for m in ('numpy', 'shapely', 'yaml', 'jsonschema', 'typing', "
        "'accel_drc.pipeline', 'accel_drc.api') if m in new]; "
        "print(heavy); "
        "print(sorted(n for n in accel_drc.__all__ if getattr(accel_drc, n, None) is None))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    heavy, missing = r.stdout.splitlines()
    assert heavy == "[]", f"import accel_drc loaded {heavy}"
    assert missing == "[]", f"public names that do not resolve: {missing}"
    assert {"check", "read_board", "CheckResult", "__version__"} <= set(accel_drc.__all__)
    assert set(accel_drc.__all__) <= set(dir(accel_drc))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        accel_drc.nope  # noqa: B018


def test_api_doc_example_runs(tmp_path: Path) -> None:
    """The first Python block of docs/api.md runs as written (from the repository root)."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    r = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=600, cwd=str(ROOT)
    )
    assert r.returncode == 0, r.stderr
    assert "verdict:" in r.stdout
