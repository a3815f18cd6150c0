"""Speed work must not change a single finding (issue 18).

``check --json`` on every bundled board, vme-wren and Debian's kicad-demos is compared with a
golden copy taken before the speed work began (``tests/golden/findings/*.json.gz``).  Compared:
the classification, the summary, every finding (message, evidence, remedy), the coverage and the
extras; floats to 9 significant digits, so a faster number parser that differs in the last bit of
a coordinate is not a change but a different plane fraction or impedance is.  Not compared: the
run's date and the board's path.

A deliberate change of a finding regenerates the golden copies::

    ACCEL_DRC_UPDATE_GOLDEN=1 python -m pytest tests/test_findings_unchanged.py -m ""

and the commit says why the findings changed.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT, SHARED_BOARDS, need

GOLDEN = ROOT / "tests" / "golden" / "findings"
UPDATE = os.environ.get("ACCEL_DRC_UPDATE_GOLDEN") == "1"
DEMOS = Path("/usr/share/kicad/demos")
VME_WREN = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"

#: the sections of the JSON report that carry the tool's judgement
SECTIONS = ("classification", "summary", "findings", "coverage", "extras", "waivers", "rules")


def _bundled() -> list[tuple[str, Path, Path | None]]:
    """(golden name, board, config) for every board in fixtures/."""
    out: list[tuple[str, Path, Path | None]] = []
    for p in sorted((FIXTURES / "boards").glob("*/*.kicad_pcb")):
        out.append((f"boards-{p.stem}", p, None))
    for p in sorted((FIXTURES / "kicad_versions").glob("*.kicad_pcb")):
        if p.stem == "kicad5":  # refused by design (exit 3), covered by the reader tests
            continue
        out.append((f"versions-{p.stem}", p, None))
    for p in sorted((FIXTURES / "ipc2581").glob("*.xml")):
        out.append((f"ipc2581-{p.stem}", p, None))
    for p in sorted((FIXTURES / "synth" / "boards").glob("*.kicad_pcb")):
        cfg = p.with_name(p.stem + ".accel-drc.yaml")
        out.append((f"synth-{p.stem}", p, cfg if cfg.is_file() else None))
    ex = FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml"
    m2 = FIXTURES / "boards" / "m2-oculink-adapter"
    boards = sorted(m2.glob("*.kicad_pcb"))
    if ex.is_file() and boards:
        out.append(("config-m2-oculink-nvlink-training", boards[0], ex))
    return out


def _demos() -> list[tuple[str, Path, Path | None]]:
    """The kicad-demos boards, less vme-wren: the same file as ../shared's, checked once above."""
    boards = [p for p in sorted(DEMOS.glob("**/*.kicad_pcb")) if p.name != VME_WREN.name]
    return [
        (
            "demos-" + p.relative_to(DEMOS).parent.as_posix().replace("/", "-") + "-" + p.stem,
            p,
            None,
        )
        for p in boards
    ]


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def _judgement(board: Path, config: Path | None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "accel_drc.cli", "check", str(board), "--json", "-", "--quiet"]
    if config is not None:
        cmd += ["--config", str(config)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode in (0, 5), f"{board}: exit {r.returncode}: {r.stderr[-2000:]}"
    report = json.loads(r.stdout)
    return _round({k: report.get(k) for k in SECTIONS})


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path}: {a!r:.300} != {b!r:.300}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present in only one ({'golden' if k in b else 'now'})"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items now, {len(b)} in the golden copy"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: now {a!r:.300}, golden {b!r:.300}"


def _compare(name: str, board: Path, config: Path | None) -> None:
    now = _judgement(board, config)
    gold = GOLDEN / f"{name}.json.gz"
    if UPDATE:
        gold.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(now, sort_keys=True, indent=0).encode()
        with gzip.GzipFile(gold, "wb", mtime=0) as f:
            f.write(data)
        return
    assert gold.is_file(), f"no golden copy {gold}: run with ACCEL_DRC_UPDATE_GOLDEN=1"
    with gzip.open(gold, "rb") as f:
        golden = json.loads(f.read())
    diff = _first_difference(json.loads(json.dumps(now)), golden)
    assert diff is None, f"{board.name}: the findings changed: {diff}"


@pytest.mark.parametrize(
    ("name", "board", "config"), [pytest.param(*c, id=c[0]) for c in _bundled()]
)
def test_bundled_board_findings_unchanged(name: str, board: Path, config: Path | None) -> None:
    _compare(name, board, config)


@pytest.mark.slow
def test_vme_wren_findings_unchanged() -> None:
    need(VME_WREN.is_file(), f"vme-wren is not beside the repository ({VME_WREN})")
    _compare("vme-wren", VME_WREN, None)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "board", "config"),
    [pytest.param(*c, id=c[0]) for c in _demos()] or [pytest.param("none", None, None, id="none")],
)
def test_kicad_demos_findings_unchanged(name: str, board: Path | None, config: None) -> None:
    need(board is not None, "Debian's kicad-demos is not installed (apt: kicad-demos)")
    assert board is not None
    _compare(name, board, config)
