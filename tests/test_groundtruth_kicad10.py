"""Ground truth in KiCad 10: the reader against KiCad 10.0.7's own ``pcbnew`` (Debian sid, in the
chroot ``.ci/kicad10`` builds; see ``tests/kicad10.py``).

The same comparison as ``test_groundtruth_pcbnew.py`` (counts, via spans, outline in nanometres,
thickness, fill area, then item by item), on every board Debian's ``kicad-demos`` 10.0.7 ships —
the Antmicro Jetson AGX Thor carrier, a CM5 carrier and boards saved as format versions 20250513,
20250907 and 20260206 — and on the bundled fixture boards.  Skips locally without the chroot
or root, fails in CI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import kicad10
import pytest
from accel_drc.readers.kicad_file import MAX_KNOWN_VERSION, read
from conftest import FIXTURE_BOARDS, need
from test_groundtruth_pcbnew import (
    DEMO_SCRIPT,
    compare,
    reader_counts,
    reader_items,
)

#: the 10.0.7 demo boards (vme-wren is read against KiCad 9 in its own tests)
DEMO_EXCLUDED = ("vme-wren",)


def _demo_boards() -> dict[str, Path]:
    if not kicad10.DEMO_DIR10.is_dir():
        return {}
    return {
        str(p.relative_to(kicad10.DEMO_DIR10)): p
        for p in sorted(kicad10.DEMO_DIR10.glob("**/*.kicad_pcb"))
        if not any(x in p.parts for x in DEMO_EXCLUDED)
    }


DEMO_BOARDS10 = _demo_boards()


@pytest.fixture(scope="module")
def kicad10_ready() -> str:
    ok, why = kicad10.available()
    need(ok, why)
    v = kicad10.version()
    assert v.startswith("10."), v
    return v


def _truth(paths: list[Path]) -> list[dict]:
    """KiCad 10's counts and items for ``paths``, from one pcbnew process."""
    proc = kicad10.python(DEMO_SCRIPT, *[kicad10.inside(p) for p in paths], timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = [json.loads(line[2:]) for line in proc.stdout.splitlines() if line.startswith("@@")]
    assert len(got) == len(paths), f"KiCad 10 loaded {len(got)} of {len(paths)} boards"
    return got


@pytest.fixture(scope="module")
def demo_truth10(kicad10_ready: str) -> dict[str, dict]:
    need(bool(DEMO_BOARDS10), f"kicad-demos 10 is not in the chroot ({kicad10.DEMO_DIR10})")
    return dict(zip(DEMO_BOARDS10, _truth(list(DEMO_BOARDS10.values()))))


@pytest.fixture(scope="module")
def fixture_truth10(kicad10_ready: str) -> dict[str, dict]:
    return dict(zip(FIXTURE_BOARDS, _truth(list(FIXTURE_BOARDS.values()))))


def _check(name: str, path: Path, truth: dict) -> None:
    compare(name, reader_counts(str(path)), truth["counts"])
    ours = json.loads(json.dumps(reader_items(str(path))))  # tuples -> lists, as pcbnew's JSON
    for key in sorted(truth["items"]):
        assert ours[key] == truth["items"][key], f"{name}: {key}"


@pytest.mark.kicad
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DEMO_BOARDS10))
def test_kicad10_demo_board_matches_pcbnew10(name: str, demo_truth10: dict[str, dict]) -> None:
    """Every kicad-demos 10.0.7 board reads with KiCad 10's counts and items."""
    _check(name, DEMO_BOARDS10[name], demo_truth10[name])


@pytest.mark.kicad
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_fixture_board_matches_pcbnew10(name: str, fixture_truth10: dict[str, dict]) -> None:
    """The bundled real boards read the same in KiCad 10 as in KiCad 9."""
    _check(name, FIXTURE_BOARDS[name], fixture_truth10[name])


@pytest.mark.kicad
def test_kicad10_demos_are_present_and_known(kicad10_ready: str) -> None:
    """The 10.0.7 demos are there (the Thor carrier among them), and no board KiCad 10 saved
    is of a format version newer than the reader knows: a 10.0.7 board must not warn
    "newer than the newest this reader knows" at the top of every report."""
    need(bool(DEMO_BOARDS10), f"kicad-demos 10 is not in the chroot ({kicad10.DEMO_DIR10})")
    assert any("jetson-agx-thor" in name for name in DEMO_BOARDS10), sorted(DEMO_BOARDS10)
    versions = {}
    for name, path in DEMO_BOARDS10.items():
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        m = re.search(r"\(version (\d+)\)", head)
        assert m, name
        versions[name] = int(m.group(1))
    assert max(versions.values()) <= MAX_KNOWN_VERSION, versions
    newest = max(versions, key=versions.__getitem__)
    assert not [w for w in read(str(DEMO_BOARDS10[newest])).warnings if "newer" in w]
