"""``bench/bench_plugin.py --compare REF`` clicks with the whole tree of ``REF``: its plugin and
its engine (the engine's speed is most of a click; comparing a new plugin on today's engine
with the same plugin on today's engine measured nothing of an engine change)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import bench_plugin  # noqa: E402


def test_compare_unpacks_the_refs_plugin_engine_and_rules(tmp_path: Path) -> None:
    plugin = bench_plugin._plugin_at("HEAD", tmp_path / "before")
    assert (plugin / "accel_drc_kicad" / "action.py").is_file()
    assert (plugin.parent / "engine" / "accel_drc" / "pipeline.py").is_file()
    # the engine's rules/ is a link to the repository's rules/: it must resolve in the copy
    assert (plugin.parent / "engine" / "accel_drc" / "rules" / "signals.yaml").is_file()


def test_a_compare_click_imports_the_refs_engine(tmp_path: Path) -> None:
    """The click's PYTHONPATH puts the ref's engine before the installed one, and that engine
    loads its rule library from its own rules/."""
    plugin = bench_plugin._plugin_at("HEAD", tmp_path / "before")
    env = dict(os.environ, PYTHONPATH=bench_plugin.click_path(plugin))
    code = (
        "import accel_drc, accel_drc_kicad; from accel_drc.packs import load_library; "
        "load_library(); print(accel_drc.__file__); print(accel_drc_kicad.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert Path(out[0]).is_relative_to(tmp_path) and Path(out[1]).is_relative_to(tmp_path)


def test_the_machine_speed_probe_is_a_loop_of_its_stated_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bench's same-run peer times ``sum(range(SPEED_LOOP))`` and nothing else: a positive
    time that grows with the loop."""
    small = bench_plugin._machine_speed()
    assert small > 0
    monkeypatch.setattr(bench_plugin, "SPEED_LOOP", bench_plugin.SPEED_LOOP * 20)
    assert bench_plugin._machine_speed() > small * 5
