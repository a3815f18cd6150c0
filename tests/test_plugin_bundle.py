"""The KiCad plugin without a running KiCad: the bundle (plugin.json, icons, main.py), the
installer, the pure parts of the live reader and markers, and the messages a user sees when
KiCad's API server is off.  The live half is in ``test_plugin_live.py``."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import FIXTURE_BOARDS, ROOT, need

PLUGIN = ROOT / "plugin"
sys.path.insert(0, str(PLUGIN))

from _plugin_fakes import FakeClient, RunBoard  # noqa: E402
from accel_drc_kicad import ACTION_ID, PLUGIN_ID, bundle  # noqa: E402


@pytest.fixture
def kipy() -> None:
    """kicad-python (the ``[kicad]`` extra): skipped locally without it, required in CI."""
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (the [kicad] extra) is not installed")


def _png_info(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, raw scanlines) of a PNG, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos = 8
    width = height = 0
    idat = b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF, tag
        if tag == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 6)  # 8-bit RGBA
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


# ---------------------------------------------------------------------------------------------
# The bundle
# ---------------------------------------------------------------------------------------------


def test_committed_bundle_is_what_the_generator_writes() -> None:
    assert (PLUGIN / "plugin.json").read_text(encoding="utf-8") == bundle.plugin_json_text()
    assert (PLUGIN / "main.py").read_text(encoding="utf-8") == bundle.MAIN_PY
    for size in bundle.ICON_SIZES:
        for dark in (False, True):
            name = f"accel-drc-{'dark' if dark else 'light'}-{size}.png"
            assert (PLUGIN / "icons" / name).read_bytes() == bundle.icon_png(size, dark), name


@pytest.mark.skipif(
    sys.version_info < (3, 10),
    reason="kipy.packaging (a developer tool, not used by the plugin at run time) needs Python 3.10+; "
    "CI validates plugin.json in its 3.11 run",
)
def test_plugin_json_is_valid_for_kicad(kipy: None) -> None:
    from kipy.packaging.validate import validate

    report = validate(str(PLUGIN))
    assert report.ok, [m.message for m in report.messages]
    data = json.loads((PLUGIN / "plugin.json").read_text(encoding="utf-8"))
    assert data["identifier"] == PLUGIN_ID
    (action,) = data["actions"]
    assert action["identifier"] == ACTION_ID
    assert action["scopes"] == ["pcb"] and action["show-button"] is True
    assert action["entrypoint"] == "main.py"
    for key in ("icons-light", "icons-dark"):
        sizes = []
        for rel in action[key]:
            w, h, _ = _png_info((PLUGIN / rel).read_bytes())
            assert w == h
            sizes.append(w)
        assert sizes == [24, 48]  # KiCad's toolbar size and its 2x (HiDPI) size


def test_icons_are_opaque_in_the_middle_and_transparent_in_the_corner() -> None:
    w, h, raw = _png_info(bundle.icon_png(24))
    stride = 1 + 4 * w

    def alpha(x: int, y: int) -> int:
        return raw[y * stride + 1 + 4 * x + 3]

    assert alpha(0, 0) == 0  # corner: outside the board
    assert alpha(12, 12) == 255  # centre: board or check mark
    light = bundle.icon_png(48, dark=False)
    dark = bundle.icon_png(48, dark=True)
    assert light != dark


def test_requirements_name_kicad_python() -> None:
    text = (PLUGIN / "requirements.txt").read_text(encoding="utf-8")
    assert "kicad-python>=0.8.0" in text.splitlines()


# ---------------------------------------------------------------------------------------------
# The installer
# ---------------------------------------------------------------------------------------------


def test_plugins_dir_per_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from accel_drc import kicad_install as ki

    monkeypatch.delenv("KICAD_DOCUMENTS_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(ki.platform, "system", lambda: "Linux")
    assert ki.plugins_dir("9.0") == tmp_path / ".local/share/kicad/9.0/plugins"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert ki.plugins_dir("10.0") == tmp_path / "data/kicad/10.0/plugins"
    monkeypatch.setattr(ki.platform, "system", lambda: "Darwin")
    assert ki.plugins_dir("9.0") == tmp_path / "Documents/KiCad/9.0/plugins"
    monkeypatch.setattr(ki.platform, "system", lambda: "Windows")
    assert ki.plugins_dir("9.0") == tmp_path / "Documents/KiCad/9.0/plugins"
    # KiCad's PATHS::getUserDocumentPath: $KICAD_DOCUMENTS_HOME/<kicad|KiCad>/<version>
    monkeypatch.setenv("KICAD_DOCUMENTS_HOME", str(tmp_path / "docs"))
    assert ki.plugins_dir("9.0") == tmp_path / "docs/KiCad/9.0/plugins"
    monkeypatch.setattr(ki.platform, "system", lambda: "Linux")
    assert ki.plugins_dir("9.0") == tmp_path / "docs/kicad/9.0/plugins"
    assert ki.plugins_dir("9.0", str(tmp_path / "x")) == tmp_path / "x"


def test_install_without_wheel_pins_this_version(tmp_path: Path) -> None:
    from accel_drc import __version__
    from accel_drc import kicad_install as ki

    target = ki.install("9.0", str(tmp_path), build=False)
    assert target == tmp_path / "accel-drc"
    req = (target / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "kicad-python>=0.8.0" in req
    assert f"accel-drc=={__version__}" in req
    assert (target / "plugin.json").read_text(encoding="utf-8") == bundle.plugin_json_text()
    assert (target / "accel_drc_kicad" / "live_reader.py").is_file()
    assert not list(target.rglob("__pycache__"))
    # reinstall replaces, uninstall removes, a second uninstall says so
    ki.install("9.0", str(tmp_path), build=False)
    assert [p.name for p in tmp_path.iterdir()] == ["accel-drc"]
    assert ki.uninstall("9.0", str(tmp_path)) == target
    assert not target.exists()
    assert ki.uninstall("9.0", str(tmp_path)) is None


def test_uninstall_refuses_a_folder_that_is_not_the_plugin(tmp_path: Path) -> None:
    from accel_drc import kicad_install as ki

    (tmp_path / "accel-drc").mkdir()
    (tmp_path / "accel-drc" / "precious.txt").write_text("mine")
    with pytest.raises(ki.InstallError):
        ki.uninstall("9.0", str(tmp_path))
    assert (tmp_path / "accel-drc" / "precious.txt").exists()


@pytest.mark.slow
def test_cli_install_builds_a_wheel_of_this_checkout(tmp_path: Path, kipy: None) -> None:
    """``accel-drc kicad install --dest`` from the checkout: the requirements point at a wheel
    of this very code (so KiCad's venv runs what was tested), and it contains the plugin."""
    import zipfile

    env = dict(os.environ, KICAD_CONFIG_HOME=str(tmp_path / "cfg"))
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "kicad", "install", "--dest", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "Enable KiCad API" in r.stdout  # no kicad_common.json in the scratch config: say how
    target = tmp_path / "accel-drc"
    (wheel,) = (target / "wheels").glob("accel_drc-*.whl")
    req = (target / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert f"accel-drc @ {wheel.resolve().as_uri()}" in req
    names = zipfile.ZipFile(wheel).namelist()
    assert "accel_drc/pipeline.py" in names
    assert "accel_drc_kicad/live_reader.py" in names
    # the data the engine loads at run time (a wheel without it fails in KiCad's venv)
    for data in (
        "rules/classes/training.yaml",
        "rules/signals.yaml",
        "rules/schemas/pack.schema.json",
        "report/templates/report.css",
    ):
        assert f"accel_drc/{data}" in names, data
    if sys.version_info >= (3, 10):  # kipy.packaging itself needs 3.10+ (see above)
        r = subprocess.run(
            [sys.executable, "-m", "kipy.packaging", "validate", str(target)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stdout

    # a user who did `pip install accel-drc` has no plugin/ folder: the installer must work from
    # the wheel's own files and pin the release from the index
    from accel_drc import __version__

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    dest = tmp_path / "from-wheel"
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "kicad", "install", "--dest", str(dest)],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=str(site)),
        cwd=str(tmp_path),
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    installed = dest / "accel-drc"
    req = (installed / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert f"accel-drc=={__version__}" in req and not (installed / "wheels").exists()
    assert (installed / "plugin.json").read_text(encoding="utf-8") == bundle.plugin_json_text()
    assert (installed / "accel_drc_kicad" / "action.py").read_bytes() == (
        site / "accel_drc_kicad" / "action.py"
    ).read_bytes()


# ---------------------------------------------------------------------------------------------
# Pure parts of the live reader
# ---------------------------------------------------------------------------------------------


def _v(x_mm: float, y_mm: float) -> SimpleNamespace:
    return SimpleNamespace(x_nm=int(round(x_mm * 1e6)), y_nm=int(round(y_mm * 1e6)))


@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_bridged_fill_keeps_the_area_of_polygon_minus_hole(offset: float, kipy: None) -> None:
    """Zone fills come as polygon + holes; the model wants one bridged ring (as the file has).
    Offset 0 puts vertices on x=0 / y=0, which proto3 leaves out of the bytes: that takes the
    node-by-node path; offset 100 takes the fast numpy decoding of the serialised polyline."""
    from accel_drc.model import Zone
    from accel_drc_kicad.live_reader import _bridged, _ring_nm
    from kipy.proto.common.types import base_types_pb2

    def fill(line: object, pts: list[tuple[float, float]]) -> None:
        for x, y in pts:
            node = line.nodes.add()  # type: ignore[attr-defined]
            node.point.x_nm = round((x + offset) * 1e6)
            node.point.y_nm = round((y + offset) * 1e6)

    poly = base_types_pb2.PolygonWithHoles()
    fill(poly.outline, [(0, 0), (10, 0), (10, 10), (0, 10)])
    fill(poly.holes.add(), [(2, 2), (4, 2), (4, 4), (2, 4)])  # same orientation as the outline
    poly.outline.closed = True
    assert _ring_nm(poly.outline).tolist() == [
        [0 + offset, 0 + offset],
        [10 + offset, 0 + offset],
        [10 + offset, 10 + offset],
        [0 + offset, 10 + offset],
    ]
    zone = Zone(net=0, net_name="", layers=(0,), filled={0: (_bridged(poly),)})
    assert zone.filled_area_mm2(0) == pytest.approx(100 - 4)


@pytest.mark.parametrize("name", sorted(FIXTURE_BOARDS))
def test_header_stackup_equals_the_file_readers(name: str, kipy: None) -> None:
    """The 9.0.8 workaround reads only the saved file's header; it must give the stack-up and
    layer types the full file reader gives."""
    from accel_drc.readers.kicad_file import parse_stackup, read
    from accel_drc_kicad.live_reader import (
        file_version,
        general_thickness,
        layer_kinds,
        read_file_header,
    )

    path = FIXTURE_BOARDS[name]
    board = read(str(path))
    header = read_file_header(str(path))
    assert header is not None and len(header) < path.stat().st_size
    assert parse_stackup(header) == board.stackup
    assert file_version(header) == board.file_version
    kinds = layer_kinds(header)
    assert [kinds[c.name] for c in board.copper_layers] == [c.kind for c in board.copper_layers]
    assert general_thickness(header) == board.board_thickness_mm


# ---------------------------------------------------------------------------------------------
# Markers and the action, without KiCad
# ---------------------------------------------------------------------------------------------


def _finding(**kw: object) -> object:
    from accel_drc.results import Finding, Severity, Status

    base = {
        "rule": "r",
        "check": "via_stub",
        "severity": Severity.ERROR,
        "status": Status.VIOLATION,
        "message": "m",
    }
    base.update(kw)
    return Finding(**base)  # type: ignore[arg-type]


def test_marker_labels_and_order(kipy: None) -> None:
    from accel_drc.results import Severity, Status
    from accel_drc_kicad.markers import TAG, label_for, marker_findings

    err = _finding(measured=1.4234, limit=0.3, unit="mm")
    warn = _finding(severity=Severity.WARNING, check="foil")
    unknown = _finding(status=Status.CANNOT_VERIFY, check="laminate_df")
    waived = _finding(status=Status.WAIVED)
    assert marker_findings([unknown, warn, waived, err]) == [err, warn, unknown]
    assert label_for(err, 3) == f"{TAG} E3 via_stub 1.42 vs 0.3 mm"
    assert label_for(unknown, 1) == f"{TAG} ?1 laminate_df cannot verify"


def test_report_dir_and_settings(tmp_path: Path, monkeypatch, kipy: None) -> None:
    """``report.dir`` is a folder inside the board's (made on demand); an absolute one, or one
    leading out with ``..``, is refused for the per-user folder, with a note naming the
    setting (issue #30 item 2; the whole click in ``test_plugin_safety.py``)."""
    from accel_drc_kicad.action import report_settings
    from accel_drc_kicad.places import report_place, user_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    board = str(tmp_path / "b" / "x.kicad_pcb")
    (tmp_path / "b").mkdir()
    assert report_place(board, None).dir == tmp_path / "b" / "accel-drc"
    assert report_place(board, "out/r").dir == tmp_path / "b" / "out" / "r"
    assert report_place(board, "out/../r/./s").dir == tmp_path / "b" / "r" / "s"
    user = user_folder(board)
    assert user.parent == tmp_path / "cache" / "accel-drc" and user.name.startswith("x-")
    for bad, why in ((str(tmp_path / "abs"), "is not a path inside"), ("r/../..", "leads out")):
        place = report_place(board, bad, "accel-drc.yaml:4")
        assert place.dir == user and why in place.note and "accel-drc.yaml:4" in place.note
        assert place.note.endswith(f"this report is in {user}.")
    assert not (tmp_path / "abs").exists()
    from accel_drc.config import ProjectConfig

    cfg = ProjectConfig.from_mapping({"report": {"dir": "rep", "marker_layer": "User.2"}})
    assert report_settings(cfg) == ("rep", "User.2")
    assert report_settings(ProjectConfig()) == (None, None)


def test_server_off_is_a_clear_message_and_an_error_page(tmp_path: Path, kipy: None) -> None:
    """No KiCad listening: exit 3 and a message that says how to turn the API server on; the
    button path writes an error page instead of failing silently."""
    env = dict(
        os.environ,
        KICAD_API_SOCKET=f"ipc://{tmp_path}/nothing/api.sock",
        PYTHONPATH=str(PLUGIN),
        TMPDIR=str(tmp_path),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )

    def plugin(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "accel_drc_kicad", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    r = plugin("inspect", "--json")
    assert r.returncode == 3
    assert "Enable KiCad API" in r.stderr and "Traceback" not in r.stderr
    r = plugin("run", "--no-browser")
    assert r.returncode == 1
    result = json.loads(r.stdout)
    assert result["ok"] is False and "Enable KiCad API" in result["error"]
    page = Path(result["report"])
    assert page.parent == tmp_path / "cache" / "accel-drc" / "no-board"  # the per-user folder
    assert "Enable KiCad API" in page.read_text(encoding="utf-8")
    # the per-user folder is taken (a file): a private temp folder of our own, never a
    # traceback (review: FileExistsError escaped and no page opened)
    shutil.rmtree(tmp_path / "cache" / "accel-drc")
    (tmp_path / "cache" / "accel-drc").write_text("not a folder", encoding="utf-8")
    r = plugin("run", "--no-browser")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    page = Path(json.loads(r.stdout)["report"])
    assert page.parent.name.startswith("accel-drc-") and page.is_file()
    assert "Enable KiCad API" in page.read_text(encoding="utf-8")


def test_marker_layer_falls_back_to_an_enabled_user_layer(kipy: None) -> None:
    """KiCad silently refuses items on a disabled layer, so the marker layer must be enabled."""
    from accel_drc_kicad.markers import _resolve_layer
    from kipy.proto.board.board_types_pb2 import BoardLayer as L

    def board(*enabled: int) -> SimpleNamespace:
        return SimpleNamespace(get_enabled_layers=lambda: list(enabled))

    assert _resolve_layer(board(L.BL_F_Cu, L.BL_Cmts_User), None) == (
        L.BL_Cmts_User,
        "Cmts.User",
        "",
    )
    assert _resolve_layer(board(L.BL_Cmts_User, L.BL_User_2), "User.2")[:2] == (
        L.BL_User_2,
        "User.2",
    )
    layer, name, note = _resolve_layer(board(L.BL_Cmts_User), "User.2")
    assert (layer, name) == (L.BL_Cmts_User, "Cmts.User") and "'User.2' is not an enabled" in note
    layer, name, note = _resolve_layer(board(L.BL_Eco1_User), None)
    assert (layer, name) == (L.BL_Eco1_User, "Eco1.User") and "Cmts.User is not enabled" in note


class _FakeBoard:
    """Just enough of kipy's ``Board`` for :func:`markers.place_markers` on the KiCad 10 path
    (and to notice if it wrongly takes the graphics path: that would call begin_commit)."""

    def __init__(self, kicad10: bool) -> None:
        from kipy.proto.common.types import base_types_pb2

        self.client = FakeClient(kicad10, owner=self)
        self.document = base_types_pb2.DocumentSpecifier()
        self.document.board_filename = "x.kicad_pcb"
        self.commits = 0
        self.deleted: list[list[str]] = []

    def remove_items_by_id(self, ids) -> None:
        self.deleted.append([k.value for k in ids])

    def get_project(self):
        raise RuntimeError("no project in this fake")

    def get_text(self):
        return []

    def get_shapes(self):
        return []

    def begin_commit(self):
        self.commits += 1
        raise RuntimeError("graphics path taken")


def test_kicad10_drc_markers_carry_the_findings(kipy, tmp_path) -> None:
    """KiCad 10 (``InjectDrcError`` answered): one real DRC marker per positioned finding, worst
    first, with KiCad's severity, our label, the position in nm and the finding's item uuids;
    waived findings get none, and no graphics commit is made.  No KiCad 10 is packaged for this
    machine, so the server is simulated with the real protobuf messages of kicad-python."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers
    from kipy.proto.board import board_commands_pb2 as bc

    uuid = "0f0e0d0c-0b0a-0908-0706-050403020100"
    findings = [
        Finding("r.warn", "foil", Severity.WARNING, Status.VIOLATION, "w", pos=(1.0, 2.0)),
        Finding(
            "r.err",
            "via_stub",
            Severity.ERROR,
            Status.VIOLATION,
            "e",
            measured=1.42,
            limit=0.3,
            unit="mm",
            pos=(10.5, -3.25),
            items=(uuid,),
        ),
        Finding("r.waived", "tg", Severity.ERROR, Status.WAIVED, "x", pos=(5.0, 5.0)),
        Finding("r.board", "tg", Severity.ERROR, Status.VIOLATION, "no position"),
    ]
    board = _FakeBoard(kicad10=True)
    state = tmp_path / "accel-drc-markers.json"
    got = markers.place_markers(board, findings, drc_state=state)
    assert (got.mode, got.created, got.removed, board.commits) == ("drc", 2, 0, 0)
    cmds = board.client.sent
    assert [type(c).__name__ for c in cmds] == ["InjectDrcError", "InjectDrcError"]
    first, second = cmds
    # worst first: the error violation, then the warning
    assert first.severity == bc.DRS_ERROR and second.severity == bc.DRS_WARNING
    assert (first.position.x_nm, first.position.y_nm) == (10_500_000, -3_250_000)
    assert [k.value for k in first.items] == [uuid]
    assert first.message == "accel-drc: E1 via_stub 1.42 vs 0.3 mm"
    assert first.board.board_filename == "x.kicad_pcb"
    assert (second.position.x_nm, second.position.y_nm) == (1_000_000, 2_000_000)
    # a rerun deletes the markers the first click made (by the ids KiCad returned), once
    first_ids = [f"00000000-0000-0000-0000-{n:012d}" for n in (1, 2)]
    again = markers.place_markers(board, findings, drc_state=state)
    assert (again.mode, again.created, again.removed) == ("drc", 2, 2)
    assert board.deleted == [first_ids]
    third = markers.place_markers(board, findings, drc_state=state)
    assert board.deleted[-1] == list(again.ids) and len(again.ids) == 2
    assert third.removed == 2


def test_kicad9_refusal_falls_back_to_graphics(kipy, tmp_path) -> None:
    """KiCad 9 answers "no handler": that, not a version number, sends the markers to the
    graphics path (which the live tests run against a real KiCad 9)."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    f = Finding("r.err", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0))
    board = _FakeBoard(kicad10=False)
    board.get_enabled_layers = lambda: []  # type: ignore[attr-defined]
    state = tmp_path / "accel-drc-markers.json"
    with pytest.raises(RuntimeError, match="graphics path taken"):
        markers.place_markers(board, [f], drc_state=state)
    assert len(board.client.sent) == 1  # asked once, then gave up on DRC markers
    assert not state.exists()  # no DRC marker ids to remember on KiCad 9


def test_kicad10_board_level_findings_get_a_marker_inside_the_outline(kipy, tmp_path) -> None:
    """A finding with no place on the board (stack-up, materials) is still a DRC marker on
    KiCad 10, just inside the outline's top-left corner (where Zoom to Fit looks: issue 16; it
    was above the board, outside that view); and a click whose findings all lack a place
    still asks KiCad, so KiCad 9 is never mistaken for 10 (review: mode 'drc', 0 created)."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    f = Finding("r.tg", "tg", Severity.ERROR, Status.CANNOT_VERIFY, "Tg unknown")
    board = _FakeBoard(kicad10=True)
    state = tmp_path / "accel-drc-markers.json"
    got = markers.place_markers(board, [f], drc_state=state, outline_bbox=(10.0, 20.0, 50.0, 60.0))
    assert (got.mode, got.created) == ("drc", 1)
    (cmd,) = board.client.sent
    assert (cmd.position.x_nm, cmd.position.y_nm) == (11_000_000, 21_000_000)  # 1 mm inside
    assert cmd.message.endswith("(board-level)")
    # KiCad 9 with the same lone finding: asked once, refused, graphics (no state file)
    board9 = _FakeBoard(kicad10=False)
    board9.get_enabled_layers = lambda: []  # type: ignore[attr-defined]
    state9 = tmp_path / "nine.json"
    with pytest.raises(RuntimeError, match="graphics path taken"):
        markers.place_markers(board9, [f], drc_state=state9, outline_bbox=(0.0, 0.0, 1.0, 1.0))
    assert len(board9.client.sent) == 1 and not state9.exists()


def test_clear_removes_the_kicad10_drc_markers_too(kipy, tmp_path) -> None:
    """``python -m accel_drc_kicad clear`` (what the banner names) removes KiCad 10's DRC
    markers of the last click too, by the ids KiCad returned, once."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    f = Finding("r.err", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0))
    board = _FakeBoard(kicad10=True)
    state = tmp_path / "accel-drc-markers.json"
    made = markers.place_markers(board, [f], drc_state=state)
    assert markers.clear_all(board, drc_state=state) == 1
    assert board.deleted == [list(made.ids)]
    assert markers.clear_all(board, drc_state=state) == 0 and len(board.deleted) == 1


def test_kicad10_click_with_nothing_to_mark_removes_the_last_clicks_markers(kipy, tmp_path) -> None:
    """A click that finds nothing to mark (the user fixed or waived it all) removes the DRC
    markers the last click made on KiCad 10, as it replaces them when it has findings: they
    pointed at findings that are gone.  (They stayed: the graphics path found no graphics.)"""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    f = Finding("r.err", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0))
    board = _FakeBoard(kicad10=True)
    board.get_enabled_layers = lambda: []  # type: ignore[attr-defined]
    state = tmp_path / "accel-drc-markers.json"
    made = markers.place_markers(board, [f], drc_state=state)
    got = markers.place_markers(board, [], drc_state=state)
    assert board.deleted == [list(made.ids)]
    assert (got.mode, got.created, got.removed) == ("none", 0, 1)
    assert markers.clear_all(board, drc_state=state) == 0  # forgotten: not deleted twice


@pytest.mark.parametrize("wanted", ["Edge.Cuts", "F.Cu", "In1.Cu", "B.SilkS"])
def test_markers_never_go_on_copper_or_the_outline(kipy, wanted) -> None:
    """A config naming a non-drawing layer as the marker layer falls back to Cmts.User, with a
    note: markers on Edge.Cuts cut the board outline, on copper they are copper (review)."""
    from accel_drc_kicad import markers
    from kipy.util.board_layer import CANONICAL_LAYER_NAMES

    by_name = {v: k for k, v in CANONICAL_LAYER_NAMES.items()}
    board = SimpleNamespace(
        get_enabled_layers=lambda: [by_name[n] for n in (wanted, "Cmts.User", "Dwgs.User")]
    )
    layer, name, note = markers._resolve_layer(board, wanted)
    assert (layer, name) == (by_name["Cmts.User"], "Cmts.User")
    assert "not a user drawing layer" in note
    layer, name, note = markers._resolve_layer(board, "Dwgs.User")
    assert name == "Dwgs.User" and note == ""


def test_a_failed_marker_commit_is_dropped_not_left_open(kipy) -> None:
    """KiCad refusing the marker items mid-commit: the commit is dropped (the editor is not
    left mid-edit), and the error reaches the caller, which tells the user (review)."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers
    from kipy.util.board_layer import CANONICAL_LAYER_NAMES

    by_name = {v: k for k, v in CANONICAL_LAYER_NAMES.items()}
    calls: list[str] = []

    def create_items(items):  # noqa: ANN001, ANN202
        calls.append("create")
        raise RuntimeError("KiCad said no")

    board = SimpleNamespace(
        get_text=lambda: [],
        get_shapes=lambda: [],
        get_enabled_layers=lambda: [by_name["Cmts.User"]],
        begin_commit=lambda: calls.append("begin") or "c1",
        create_items=create_items,
        push_commit=lambda c, m: calls.append("push"),
        drop_commit=lambda c: calls.append(f"drop {c}"),
    )
    f = Finding("r.err", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0))
    with pytest.raises(RuntimeError, match="KiCad said no"):
        markers.place_markers(board, [f], use_drc=False)
    assert calls == ["begin", "create", "drop c1"]


# ---------------------------------------------------------------------------------------------
# Issue 16: what a new user sees after a click (the live half is test_plugin_click.py)
# ---------------------------------------------------------------------------------------------


#: the two board-level findings of the M.2 OCuLink adapter with no config (as the CLI gives them)
def _oculink_findings() -> list:
    from accel_drc.results import Finding, Severity, Status

    return [
        Finding(
            "signals.assumed_type.pcie4",
            "signal_type",
            Severity.INFO,
            Status.CANNOT_VERIFY,
            "16 PCIe nets of unknown generation checked as pcie4: PCIe lane whose generation the "
            "net name and net class do not tell: assumed Gen4",
        ),
        Finding(
            "edge.pdn_impedance",
            "pdn_impedance",
            Severity.ERROR,
            Status.CANNOT_VERIFY,
            "no power rail found: no power-named net owns a plane zone, and the config "
            "declares no rails",
        ),
    ]


def test_board_label_is_built_from_the_findings(kipy) -> None:
    """Item 2: the legend names each board-level finding's rule, severity and status and the
    first clause of its message, worst first; nothing hard-coded ("stack-up, materials")."""
    from accel_drc_kicad.markers import TAG, plan_markers

    plan = plan_markers(_oculink_findings(), (0.0, 0.0, 300.0, 200.0), "accel-drc/b.html")
    assert (plan.placed, plan.board_level, plan.total) == (0, 2, 2)
    text = plan.legend.text
    assert text.split("\n") == [
        f"{TAG} 2 board-level findings",
        "1. edge.pdn_impedance (error, cannot verify): no power rail found",
        "2. signals.assumed_type.pcie4 (info, cannot verify): 16 PCIe nets",
        "   of unknown generation checked as pcie4",
        "Report: accel-drc/b.html",
    ]
    assert "stack-up" not in text and "materials" not in text
    # a 300 mm board: the legend is as large as Zoom to Fit needs (issue #31 item 2)
    assert plan.legend.listed == 2 and plan.legend.size_mm == pytest.approx(300 / 66)


@pytest.mark.parametrize(
    "bbox",
    [
        (100.0, 50.0, 122.1, 130.0),  # the M.2 OCuLink adapter: 22.1 x 80 mm
        (0.0, 0.0, 300.0, 200.0),
        (-20.0, -5.0, 0.0, 5.0),  # a 20 x 10 mm board: lines cut, "… more"
    ],
)
def test_legend_stays_inside_the_outline(kipy, bbox) -> None:
    """Item 1: the legend's estimated extent (KiCad's stroke font measured in pcbnew: 1.0 mm per
    character is an upper bound, 1.70 + 1.62 per further line) lies inside the outline's
    bounding box, which is what Zoom to Fit shows."""
    from accel_drc_kicad import markers

    findings = _oculink_findings() * 6
    lg = markers.plan_markers(
        findings, bbox, "accel-drc/antmicro-m2-oculink-adapter-hw.html"
    ).legend
    lines = lg.text.split("\n")
    width = max(len(line) for line in lines) * lg.size_mm * markers.CHAR_ADVANCE
    height = (markers.FIRST_LINE + markers.LINE_PITCH * (len(lines) - 1)) * lg.size_mm
    assert bbox[0] < lg.x_mm and lg.x_mm + width <= bbox[2]
    assert bbox[1] < lg.y_mm - 0.25 * lg.size_mm and lg.y_mm + height <= bbox[3]
    assert lg.size_mm >= markers.LEGEND_MIN_MM
    if lg.listed < len(findings):
        assert f"… {len(findings) - lg.listed} more in the report" in lg.text


def test_legend_fits_pcbnew_own_text_box(kipy, pcbnew_python, tmp_path) -> None:
    """The same legend measured by KiCad itself (pcbnew 9.0.8, ``PCB_TEXT.GetBoundingBox``)
    lies inside the 22.1 x 80 mm outline of the M.2 OCuLink adapter."""
    from accel_drc_kicad import markers

    bbox = (100.0, 50.0, 122.1, 130.0)
    lg = markers.plan_markers(_oculink_findings() * 3, bbox, "accel-drc/x.html").legend
    script = tmp_path / "measure.py"
    script.write_text(
        "import json, sys, pcbnew\n"
        "lg = json.loads(sys.argv[1])\n"
        "t = pcbnew.PCB_TEXT(pcbnew.BOARD())\n"
        "t.SetText(lg['text'])\n"
        "s = int(round(lg['size'] * 1e6))\n"
        "t.SetTextSize(pcbnew.VECTOR2I(s, s))\n"
        "t.SetTextThickness(int(round(lg['size'] * 0.15e6)))\n"
        "t.SetHorizJustify(pcbnew.GR_TEXT_H_ALIGN_LEFT)\n"
        "t.SetVertJustify(pcbnew.GR_TEXT_V_ALIGN_TOP)\n"
        "t.SetPosition(pcbnew.VECTOR2I(int(round(lg['x'] * 1e6)), int(round(lg['y'] * 1e6))))\n"
        "b = t.GetBoundingBox()\n"
        "print(json.dumps([b.GetLeft() / 1e6, b.GetTop() / 1e6, b.GetRight() / 1e6, "
        "b.GetBottom() / 1e6]))\n",
        encoding="utf-8",
    )
    arg = json.dumps({"text": lg.text, "size": lg.size_mm, "x": lg.x_mm, "y": lg.y_mm})
    r = subprocess.run(
        [pcbnew_python, str(script), arg], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    left, top, right, bottom = json.loads(r.stdout)
    assert bbox[0] < left and right < bbox[2] and bbox[1] < top and bottom < bbox[3], (
        (left, top, right, bottom),
        bbox,
    )


def test_banner_says_how_many_markers_go_where(kipy) -> None:
    """Item 1: the report's banner sentence (KiCad 9.0.8's API has no status-bar or info-bar
    call, so the banner is where the click says what it did in the editor)."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad.markers import plan_markers

    placed = Finding("r.v", "via_stub", Severity.ERROR, Status.VIOLATION, "v", pos=(1.0, 2.0))
    plan = plan_markers([*_oculink_findings(), placed], (0.0, 0.0, 50.0, 50.0), "a/b.html")
    assert plan.summary("Cmts.User") == (
        "In KiCad: 3 findings marked on Cmts.User: 1 at the finding's place on the board; "
        "2 board-level findings listed in a legend inside the board outline's top-left corner "
        "(View → Zoom to Fit, Home). Nothing is selected in the editor after the click: one Undo "
        '(Ctrl+Z) removes them now; "python -m accel_drc_kicad clear" at any time.'
    )
    assert "as KiCad DRC markers" in plan.summary(None, kicad10=True)
    assert "KiCad's next DRC run or" in plan.summary(None, kicad10=True)
    assert plan_markers([], None).summary("Cmts.User").startswith("In KiCad: no findings")


def test_report_banner_carries_the_editor_note(kipy, tmp_path) -> None:
    from accel_drc.pipeline import check_board
    from accel_drc.readers.kicad_file import read
    from accel_drc.report import html as html_report

    board = read(str(FIXTURE_BOARDS["m2-oculink-adapter"]))
    check = check_board(board)
    out = tmp_path / "r.html"
    html_report.write(str(out), check, board, editor_note="In KiCad: 2 <findings> marked")
    text = out.read_text(encoding="utf-8")
    assert '<p class="editor-note" id="editor-note">In KiCad: 2 &lt;findings&gt; marked</p>' in text
    html_report.write(str(out), check, board)
    assert 'id="editor-note"' not in out.read_text(encoding="utf-8")


def test_stale_labels_say_the_last_run_failed(kipy) -> None:
    """Item 5: after a failed run every earlier label says so (the legend in lines of its own,
    kept as narrow as the legend), in one commit; rewriting twice names the newest page once."""
    from accel_drc_kicad import markers

    label = markers.label_for(_oculink_findings()[1], 1)
    once = markers.stale_text(label, "accel-drc/M2.html")
    assert (
        once
        == f"{markers.TAG} STALE (last run failed, see accel-drc/M2.html) ?1 pdn_impedance cannot verify"
    )
    assert markers.stale_text(once, "accel-drc/b.html") == markers.stale_text(
        label, "accel-drc/b.html"
    )
    legend = markers.plan_markers(_oculink_findings(), (0.0, 0.0, 22.0, 80.0), "a/b.html").legend
    stale = markers.stale_text(legend.text, "accel-drc/antmicro-m2-oculink-adapter-hw.html")
    width = max(len(x) for x in legend.text.split("\n"))
    assert stale.endswith("\n" + legend.text) and stale.startswith(f"{markers.TAG} STALE: ")
    assert max(len(x) for x in stale.split("\n")) <= width
    assert markers.stale_text(stale, "x.html") == markers.stale_text(legend.text, "x.html")


def test_mark_stale_is_one_commit_and_selects_them(kipy, tmp_path) -> None:
    from accel_drc_kicad import markers
    from kipy.board_types import BoardText
    from kipy.proto.board import board_types_pb2

    def text(t: str, uuid: str) -> BoardText:
        p = board_types_pb2.BoardText()
        p.text.text = t
        p.id.value = uuid
        return BoardText(p)

    labels = [text(f"{markers.TAG} E1 via_stub", "u1"), text("someone's note", "u2")]
    calls: list = []
    board = SimpleNamespace(
        get_text=lambda: labels,
        get_shapes=lambda: [],
        begin_commit=lambda: calls.append("begin") or "c",
        update_items=lambda items: (
            calls.append(("update", [i.proto.text.text for i in items])) or items
        ),
        push_commit=lambda c, m: calls.append(("push", m)),
        drop_commit=lambda c: calls.append("drop"),
        document=SimpleNamespace(board_filename="x.kicad_pcb", project=SimpleNamespace(path="")),
    )
    got = markers.mark_stale(board, "accel-drc/x.html", drc_state=tmp_path / "s.json")
    assert calls == [
        "begin",
        ("update", [f"{markers.TAG} STALE (last run failed, see accel-drc/x.html) E1 via_stub"]),
        ("push", "accel-drc: markers stale (run failed)"),
    ]
    assert (got.mode, got.ids) == ("stale", ("u1",))
    assert labels[1].proto.text.text == "someone's note"


def test_second_click_while_running_is_ignored(tmp_path, kipy) -> None:
    """Item 7: the lock file in the report folder; a lock left by a dead process or older than
    the limit is taken over; release removes it."""
    from accel_drc_kicad.action import LOCK_MAX_AGE_S, RunLock

    path = tmp_path / "accel-drc" / ".accel-drc.lock"
    first = RunLock(path)
    assert first.acquire() and path.is_file()
    second = RunLock(path)
    assert not second.acquire() and second.holder["pid"] == os.getpid()
    first.release()
    assert not path.exists() and second.acquire()
    (path.parent / "report.html").write_text("kept")
    second.release()
    assert not path.exists() and path.parent.is_dir()  # a folder with a report stays
    (path.parent / "report.html").unlink()
    assert RunLock(path).acquire()
    RunLock.release(RunLock(path))  # not held: does nothing
    assert path.exists()
    path.unlink()
    lock = RunLock(path)
    assert lock.acquire()
    lock.release()
    assert path.parent.is_dir()  # a folder this click did not make stays, even empty
    path.parent.rmdir()
    lock = RunLock(path)
    assert lock.acquire()
    lock.release()
    assert not path.parent.exists()  # this click made it for the lock alone: removed
    path.parent.mkdir()
    # a killed run's lock: its process is gone
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    import socket
    import time

    path.write_text(
        json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(), "started": time.time()})
    )
    assert RunLock(path).acquire()
    # alive but ancient (a pid reused by another program): taken over after the limit
    path.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": time.time() - LOCK_MAX_AGE_S - 1,
            }
        )
    )
    assert RunLock(path).acquire()


def test_run_failure_page_replaces_the_report_and_success_cleans_up(
    tmp_path, monkeypatch, kipy
) -> None:
    """Items 5 and 6 without KiCad: a broken accel-drc.yaml writes the error page where the
    report was (its line right, no API-server advice), removes the stale JSON and marks the old
    markers stale; a good run afterwards replaces it with the report and removes a leftover
    accel-drc-error.html."""
    from accel_drc.readers.kicad_file import read
    from accel_drc_kicad import action, markers

    src = FIXTURE_BOARDS["m2-oculink-adapter"]
    board_file = tmp_path / src.name
    shutil.copyfile(src, board_file)
    shutil.copyfile(src.with_suffix(".kicad_pro"), board_file.with_suffix(".kicad_pro"))
    monkeypatch.setattr(action, "read_live", lambda kicad, board, **kw: read(str(board_file)))
    monkeypatch.setattr(markers, "DRC_STATE", tmp_path / "state.json")
    fake = RunBoard(board_file)
    kicad = SimpleNamespace(get_board=lambda: fake, get_version=lambda: SimpleNamespace(major=9))
    report = tmp_path / "accel-drc" / f"{board_file.stem}.html"
    first = action.run(open_browser=False, kicad=kicad)
    assert first.ok and Path(first.report) == report
    assert first.markers["created"] == 1 and first.markers["mode"] == "graphics"
    assert 'id="editor-note">In KiCad: 2 findings marked on Cmts.User' in report.read_text()
    assert fake.selected == [] and first.selected == 0  # nothing left selected (#31)
    assert not (tmp_path / "accel-drc" / action.LOCK_NAME).exists()

    (tmp_path / "accel-drc.yaml").write_text("class: training\nreport:\n  dir: [accel-drc\n")
    failed = action.run(open_browser=False, kicad=kicad)
    assert not failed.ok and Path(failed.report) == report  # where the report was
    page = report.read_text()
    assert "accel-drc.yaml:3: malformed YAML" in page and "Fix the file" in page
    assert "API server" not in page and "Enable KiCad API" not in page
    assert not report.with_suffix(".json").exists()
    assert failed.markers["mode"] == "stale" and fake.log[-2:] == [
        "update",
        "accel-drc: markers stale (run failed)",
    ]
    (legend,) = fake.get_text()
    assert legend.proto.text.text.startswith(f"{markers.TAG} STALE: the last run")
    assert f"accel-drc/{board_file.stem}" in legend.proto.text.text.replace("\n   ", "")
    assert fake.selected == [] and failed.selected == 0

    (tmp_path / "accel-drc.yaml").unlink()
    # an earlier click's marker-failure page (recognised as ours by its title)
    (tmp_path / "accel-drc" / action.MARKER_ERROR_PAGE).write_text(
        "<!doctype html><title>accel-drc: error</title>old"
    )
    again = action.run(open_browser=False, kicad=kicad)
    assert again.ok and again.markers["removed"] == 1
    assert "<!DOCTYPE html>" in report.read_text() and report.with_suffix(".json").is_file()
    assert not (tmp_path / "accel-drc" / action.MARKER_ERROR_PAGE).exists()
    assert "STALE" not in fake.get_text()[0].proto.text.text


def test_kicad10_selected_drc_markers_are_cleared_and_counted(kipy, tmp_path) -> None:
    """Issues #29 item 4 and #31 item 1: after a click nothing stays selected.  KiCad 10 answers
    a selection holding DRC markers with items kicad-python 0.8 cannot unpack (empty ``Any``;
    kipy raised "Can't unpack empty Any protobuf message"), so the selection is read back raw:
    markers still selected are counted, not an error."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    findings = [
        Finding("r.a", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0)),
        Finding("r.b", "foil", Severity.WARNING, Status.VIOLATION, "w", pos=(2.0, 2.0)),
    ]
    board = _FakeBoard(kicad10=True)
    made = markers.place_markers(board, findings, drc_state=tmp_path / "s.json")
    board.selected = [*made.ids, "0f0e0d0c-0b0a-0908-0706-050403020100"]  # the user's choice
    board.clear_selection = lambda: None  # type: ignore[attr-defined]  # KiCad kept them
    assert markers.clear_selection(board) == 3
    board.clear_selection = lambda: board.selected.clear()  # type: ignore[attr-defined]
    assert markers.clear_selection(board) == 0 and board.selected == []


def test_clear_from_a_terminal_finds_the_buttons_drc_markers(kipy, tmp_path, monkeypatch) -> None:
    """Issue #29 item 4: the button (KiCad runs it from its plugin folder) and ``python -m
    accel_drc_kicad clear`` (another copy of the package) must share the record of the KiCad 10
    markers: it lives in the per-user cache folder, not beside the package."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    f = Finding("r.err", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0))
    board = _FakeBoard(kicad10=True)
    made = markers.place_markers(board, [f])
    state = tmp_path / "cache" / "accel-drc" / "kicad-drc-markers.json"
    assert state.is_file() and list(made.ids)[0] in state.read_text()
    assert markers.clear_all(board) == 1 and board.deleted == [list(made.ids)]


def _api_stackup(material: str, epsilon_r: float, loss_tangent: float, finish: str) -> Any:
    """A two-layer ``get_stackup()`` answer: F.Cu, one core dielectric, B.Cu."""
    from kipy.proto.board import board_pb2
    from kipy.proto.board.board_types_pb2 import BoardLayer

    proto = board_pb2.BoardStackup()
    proto.finish.type_name = finish
    for kind, layer in (
        (board_pb2.BSLT_COPPER, BoardLayer.BL_F_Cu),
        (board_pb2.BSLT_DIELECTRIC, BoardLayer.BL_UNDEFINED),
        (board_pb2.BSLT_COPPER, BoardLayer.BL_B_Cu),
    ):
        item = proto.layers.add()
        item.type = kind
        item.layer = layer
        item.thickness.value_nm = 35_000 if kind == board_pb2.BSLT_COPPER else 1_500_000
        if kind == board_pb2.BSLT_DIELECTRIC:
            item.dielectric.type = board_pb2.BSDT_CORE
            sub = item.dielectric.layer.add()
            sub.thickness.value_nm = 1_500_000
            sub.material_name = material
            sub.epsilon_r = epsilon_r
            sub.loss_tangent = loss_tangent
    return SimpleNamespace(proto=proto)


def test_kicad10_stackup_keeps_an_explicit_zero_loss_tangent_and_no_finish(kipy) -> None:
    """Issue #29 item 5: KiCad 10 fills the dielectrics, so its ``(loss_tangent 0)`` is a value
    (the file reader says 0.0, the live reader said null), and its finish "None" is no finish
    (the live reader said the string "None").  KiCad 9.0.x sends every dielectric empty: its
    zeros stay unknown."""
    from accel_drc_kicad.live_reader import LayerMap, stackup_from_api

    ten = stackup_from_api(_api_stackup("7628", 4.2, 0.0, "None"), LayerMap(2))
    (core,) = ten.dielectrics()
    assert (core.material, core.epsilon_r, core.loss_tangent) == ("7628", 4.2, 0.0)
    assert ten.finish is None
    assert stackup_from_api(_api_stackup("FR4", 4.5, 0.02, "ENIG"), LayerMap(2)).finish == "ENIG"
    nine = stackup_from_api(_api_stackup("", 0.0, 0.0, ""), LayerMap(2))
    (core,) = nine.dielectrics()
    assert (core.material, core.epsilon_r, core.loss_tangent) == (None, None, None)


def test_kicad10_one_marker_per_place(kipy, tmp_path) -> None:
    """Issue #29 item 3: KiCad 10.0.7 pushes one commit per ``InjectDrcError`` (≈ 150 ms each on
    vme-wren) and has no call for several markers, so findings at one place share one marker:
    two checks of one via are one marker with both labels, worst first, and their items;
    the board-level findings are one marker at the outline's corner.  Every finding is still
    marked (the click's ``requested`` counts findings, ``created`` markers)."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    via = "0f0e0d0c-0b0a-0908-0706-050403020100"
    pad = "1f0e0d0c-0b0a-0908-0706-050403020100"
    findings = [
        Finding(
            "r.w", "foil", Severity.WARNING, Status.VIOLATION, "w", pos=(5.0, 5.0), items=(pad,)
        ),
        Finding(
            "r.e", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(5.0, 5.0), items=(via,)
        ),
        Finding("r.other", "foil", Severity.WARNING, Status.VIOLATION, "o", pos=(9.0, 9.0)),
        Finding("r.tg", "tg", Severity.ERROR, Status.CANNOT_VERIFY, "Tg unknown"),
        Finding("r.dk", "dk", Severity.WARNING, Status.CANNOT_VERIFY, "Dk unknown"),
    ]
    board = _FakeBoard(kicad10=True)
    got = markers.place_markers(
        board, findings, drc_state=tmp_path / "s.json", outline_bbox=(0.0, 0.0, 50.0, 50.0)
    )
    assert (got.mode, got.created, got.requested) == ("drc", 3, 5)
    cmds = board.client.sent
    assert [type(c).__name__ for c in cmds] == ["InjectDrcError"] * 3
    by_place = {(c.position.x_nm, c.position.y_nm): c for c in cmds}
    shared = by_place[(5_000_000, 5_000_000)]
    assert shared.message.startswith("accel-drc: E1 via_stub") and "W" in shared.message
    assert "; " in shared.message and [k.value for k in shared.items] == [via, pad]
    board_level = by_place[(1_000_000, 1_000_000)]
    assert board_level.message.count("board-level") == 1
    assert "tg" in board_level.message and "dk" in board_level.message
    assert len(got.ids) == 3


def test_a_marker_message_stays_short(kipy) -> None:
    """Forty findings at one place: one message of at most DRC_MESSAGE_MAX characters that
    says how many more the report has."""
    from accel_drc.results import Finding, Severity, Status
    from accel_drc_kicad import markers

    many = [
        (n, Finding(f"r.{n}", "via_stub", Severity.ERROR, Status.VIOLATION, "e", pos=(1.0, 1.0)))
        for n in range(1, 41)
    ]
    text = markers.drc_message(many, False)
    assert len(text) <= markers.DRC_MESSAGE_MAX and text.endswith("more in the report")
    assert text.startswith("accel-drc: E1 via_stub")


def test_kicad10_harness_seeds_the_settings_so_no_wizard_blocks(tmp_path) -> None:
    """Issue #29 item 8: KiCad 10 shows a modal first-run wizard (the API answers "not ready"
    for good: the harness waited 240 s) unless its settings folder is valid, the three global
    library tables exist and the update / data-collection prompts are answered.  Measured:
    without this, KiCad 10.0.7 was not ready after 60 s; with it, ready in 13 s."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from kicad_live import LiveKiCad

    board = ROOT / "fixtures" / "boards" / "coral-tpu-m2-adapter" / "M2.kicad_pcb"
    kicad = LiveKiCad(board, tmp_path / "k", version="10")
    kicad._prepare()
    cfg = tmp_path / "k" / "config" / "10.0"
    common = json.loads((cfg / "kicad_common.json").read_text(encoding="utf-8"))
    assert common["api"]["enable_server"] is True
    assert common["do_not_show_again"] == {
        "update_check_prompt": True,
        "data_collection_prompt": True,
    }
    for table in ("fp-lib-table", "sym-lib-table", "design-block-lib-table"):
        assert (cfg / table).read_text(encoding="utf-8").startswith("(" + table.replace("-", "_"))
    assert kicad.settings_version == "10.0" and kicad.env()["PATH"] == "/usr/bin:/bin"
    with pytest.raises(ValueError, match="not one of"):
        LiveKiCad(board, tmp_path / "x", version="8")
