"""Fuzzing the button's report paths (issue #30, "the fuzzing covers … the plugin's report
paths"): whatever ``report.dir`` a project's ``accel-drc.yaml`` names and whatever symlinks the
project commits, :func:`accel_drc_kicad.places.report_place` picks a folder that is really inside
the project or the per-user cache, and creates nothing anywhere else.

The generated ``report.dir`` values mix ``..``, ``.``, ``/``, ``~``, backslashes, drive letters,
NUL-free unicode and names of committed symlinks that point out of the project (to a folder, to a
file, dangling, in a loop).  The property is checked on the real file system under ``tmp_path``
(the "home" the symlinks aim at sits beside the project)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(ROOT / "plugin"))

from accel_drc_kicad import places  # noqa: E402

PARTS = st.sampled_from(
    ["..", ".", "", "~", "out", "link_dir", "link_file", "dangling", "loop", "C:", "a\\..\\..",
     "ré", "accel-drc", " ", "-x", "%2e%2e"]
)  # fmt: skip
REPORT_DIRS = st.one_of(
    st.none(),
    st.lists(PARTS, min_size=1, max_size=6).map("/".join),
    st.lists(PARTS, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p)),
)


def _tree(base: Path) -> tuple[Path, Path, Path]:
    """A project with committed links out of it, a "home" beside it, the user's cache."""
    home = base / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "settings.json").write_text("{}", encoding="utf-8")
    project = base / "project"
    project.mkdir(exist_ok=True)
    board = project / "b.kicad_pcb"
    board.write_text("(kicad_pcb)", encoding="utf-8")
    links = {
        "link_dir": home / ".config",
        "link_file": home / ".config" / "settings.json",
        "dangling": home / "nowhere",
        "loop": project / "loop",
    }
    for name, target in links.items():
        link = project / name
        if not link.is_symlink():
            link.symlink_to(target)
    return project, home, board


def _all_paths(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for n in dirnames + filenames:
            out.add(os.path.join(dirpath, n))
    return out


@pytest.mark.skipif(os.name == "nt", reason="POSIX symlinks")
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(configured=REPORT_DIRS)
def test_report_place_is_inside_the_project_or_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: str | None
) -> None:
    project, home, board = _tree(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    before_home = _all_paths(home)
    before_base = {p.name for p in tmp_path.iterdir()}

    place = places.report_place(str(board), configured, "accel-drc.yaml:2")

    real = Path(os.path.realpath(place.dir))
    allowed = [Path(os.path.realpath(p)) for p in (project, cache, tmp_path / "tmp")]
    assert any(real == a or a in real.parents for a in allowed), (configured, real)
    # the folder itself is no symlink, and a report there replaces no file the user owns
    assert not place.dir.is_symlink()
    for name in places.output_names(str(board)):
        target = place.dir / name
        assert not target.is_symlink(), (configured, target)
    # nothing appeared in the "home" the links point to, nor beside the project
    assert _all_paths(home) == before_home, configured
    assert {p.name for p in tmp_path.iterdir()} <= before_base | {"cache"}
    # a refused report.dir is explained to the user, naming where the report went
    if place.note:
        assert str(place.dir) in place.note, (configured, place.note)
    elif configured is not None:
        assert real == Path(os.path.realpath(project)) or Path(os.path.realpath(project)) in (
            real.parents
        ), configured
