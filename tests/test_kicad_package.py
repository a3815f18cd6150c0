"""``accel-drc kicad package OUT.zip``: a KiCad Plugin and Content Manager package.

``metadata.json`` is validated with ``jsonschema`` against KiCad 9's own ``pcm.v1.schema.json``
(what ``PCM_TASK_MANAGER::InstallFromFile`` validates with).  One live test clicks KiCad's own
*Install from File…* (xdotool under Xvfb) and checks KiCad extracts exactly what
``install_like_pcm`` lays out; the other installs the package that way into a KiCad 9 user
folder, starts the PCB editor under Xvfb and reads KiCad's own log:
the plugin is loaded from the 3rdparty folder, its action and icons registered, its venv built
and the plugin marked ready; then a screenshot of the Xvfb screen (``xwd``) shows the button's
icon in the PCB editor's top toolbar (and not before the plugin was ready), and the venv's python
imports the accel_drc copy the package ships.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from accel_drc import __version__
from accel_drc.kicad_package import (
    INSTALLED_FOLDER,
    PACKAGE_ID,
    build,
    install_like_pcm,
    metadata,
    pcm_version,
)
from conftest import FIXTURE_BOARDS, need

SCHEMA_PATHS = [
    Path("/usr/share/kicad/schemas/pcm.v1.schema.json"),
    Path("/usr/local/share/kicad/schemas/pcm.v1.schema.json"),
]


def _schema() -> dict:
    for p in SCHEMA_PATHS:
        if p.is_file():
            return json.loads(p.read_text(encoding="utf-8"))
    need(False, "KiCad's pcm.v1.schema.json is not installed (share/kicad/schemas)")
    raise AssertionError  # unreachable


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pcm") / "accel-drc.zip"
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "kicad", "package", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "sha256" in r.stdout
    return out


@pytest.mark.kicad
def test_metadata_validates_against_kicads_pcm_schema(package: Path) -> None:
    import jsonschema

    schema = _schema()
    meta = json.loads(zipfile.ZipFile(package).read("metadata.json"))
    jsonschema.validate(meta, schema)
    assert len(meta["versions"]) == 1  # InstallFromFile refuses anything else
    v = meta["versions"][0]
    assert v["runtime"] == "ipc" and v["kicad_version"] == "9.0"
    assert v["version"] == pcm_version(__version__)
    # a broken metadata must fail the same validation (the test can fail)
    bad = dict(meta, identifier="-bad id")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_zip_layout_is_what_the_pcm_extracts(package: Path) -> None:
    names = set(zipfile.ZipFile(package).namelist())
    assert "metadata.json" in names and "resources/icon.png" in names
    for f in (
        "plugins/plugin.json",
        "plugins/main.py",
        "plugins/requirements.txt",
        "plugins/icons/accel-drc-light-24.png",
        "plugins/accel_drc_kicad/action.py",
        "plugins/accel_drc/__init__.py",
        "plugins/accel_drc/rules/classes/edge.yaml",
        "plugins/accel_drc/report/templates/report.html.j2",
        "plugins/LICENSE",  # Apache-2.0 §4: the licence and NOTICE travel with every copy
        "plugins/NOTICE",
    ):
        assert f in names, f
    assert not any("__pycache__" in n or "/examples/" in n for n in names)
    # everything but metadata.json lives under a folder the PCM extracts
    assert {n.split("/")[0] for n in names} == {"metadata.json", "plugins", "resources"}
    plugin = json.loads(zipfile.ZipFile(package).read("plugins/plugin.json"))
    assert plugin["identifier"] == PACKAGE_ID
    req = zipfile.ZipFile(package).read("plugins/requirements.txt").decode()
    assert "kicad-python>=0.8.0" in req and "numpy" in req and "accel-drc" not in req.split("#")[-1]
    icon = zipfile.ZipFile(package).read("resources/icon.png")
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[16:24] == (64).to_bytes(4, "big") * 2


def test_package_is_reproducible_and_refuses_bad_names(tmp_path: Path) -> None:
    a = build(tmp_path / "a.zip")
    b = build(tmp_path / "b.zip")
    assert a.read_bytes() == b.read_bytes()
    from accel_drc.errors import UsageError

    with pytest.raises(UsageError):
        build(tmp_path / "a.tar")
    with pytest.raises(UsageError):
        build(tmp_path)


def test_install_like_pcm_lays_out_the_3rdparty_folder(package: Path, tmp_path: Path) -> None:
    third = tmp_path / "3rdparty"
    settings = tmp_path / "config" / "9.0"
    plugin_dir = install_like_pcm(package, third, settings)
    assert plugin_dir == third / "plugins" / INSTALLED_FOLDER
    assert (plugin_dir / "plugin.json").is_file() and (plugin_dir / "accel_drc").is_dir()
    assert (third / "resources" / INSTALLED_FOLDER / "icon.png").is_file()
    assert sorted(p.name for p in third.iterdir()) == ["plugins", "resources"]
    reg = json.loads((settings / "installed_packages.json").read_text())
    assert [p["package"]["identifier"] for p in reg["packages"]] == [PACKAGE_ID]
    assert set(reg["packages"][0]) == {
        "package", "current_version", "repository_id", "repository_name", "install_timestamp",
        "pinned",
    }  # fmt: skip
    # the shipped copy is importable from the plugin folder, as main.py arranges
    r = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys; sys.path.insert(0, '.'); import accel_drc; print(accel_drc.__file__, accel_drc.__version__)",
        ],
        capture_output=True,
        text=True,
        cwd=str(plugin_dir),
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    where, version = r.stdout.split()
    assert where.startswith(str(plugin_dir)) and version == __version__


def test_metadata_version_is_pcm_shaped() -> None:
    assert pcm_version("1.2.3") == "1.2.3"
    assert pcm_version("1.2.3rc1") == "1.2.3"
    assert metadata()["versions"][0]["status"] in ("stable", "testing")


#: the toolbar icon's board colour, light and dark variants (accel_drc_kicad.bundle._sample)
ICON_GREENS = ((0x1B, 0x7A, 0x3D), (0x5F, 0xC2, 0x7E))


def _x_display(pgid: int) -> tuple[str, str]:
    """DISPLAY and XAUTHORITY of the pcbnew that ``xvfb-run`` started (process group ``pgid``)."""
    import os

    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        env = dict(e.split(b"=", 1) for e in raw if b"=" in e)
        if env.get(b"DISPLAY"):
            return env[b"DISPLAY"].decode(), env.get(b"XAUTHORITY", b"").decode()
    raise AssertionError("no process of KiCad's group has a DISPLAY")


def _icon_pixels(display: str, xauth: str) -> list[tuple[int, int]]:
    """Screen pixels (x, y) of exactly the icon's board green, from an ``xwd`` of the root
    window (XWD: a big-endian header, a colour map, then ZPixmap rows of ``bits_per_pixel``)."""
    import os
    import shutil
    import struct

    xwd = shutil.which("xwd")
    need(xwd is not None, "xwd (x11-apps) is not installed")
    r = subprocess.run(
        [str(xwd), "-root", "-silent", "-display", display],
        capture_output=True,
        env=dict(os.environ, XAUTHORITY=xauth),
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    data = r.stdout
    h = struct.unpack(">25I", data[:100])
    header, width, height, order, bpl, ncolors = h[0], h[4], h[5], h[7], h[12], h[19]
    size = h[11] // 8  # bytes a pixel: 3 on Xvfb's 24-bit screen (rows padded to 5120 bytes)
    assert size in (3, 4) and bpl >= size * width, h
    px = memoryview(data)[header + 12 * ncolors :]
    out = []
    for y in range(height):
        row = bytes(px[y * bpl : y * bpl + size * width])
        for x in range(width):
            b = row[size * x : size * x + size]
            rgb = (b[2], b[1], b[0]) if order == 0 else (b[-3], b[-2], b[-1])
            if rgb in ICON_GREENS:
                out.append((x, y))
    return out


@pytest.mark.kicad
@pytest.mark.slow
def test_kicad_loads_the_pcm_installed_plugin(package: Path, xvfb_run: str, tmp_path: Path) -> None:
    """KiCad 9 under Xvfb loads the PCM-installed plugin and marks it ready (its button)."""
    try:
        import kipy  # noqa: F401
    except ImportError:
        need(False, "kicad-python (kipy) is not installed")
    from kicad_live import LiveKiCad

    docs = tmp_path / "documents"
    third = docs / "kicad" / "9.0" / "3rdparty"  # PATHS::GetDefault3rdPartyPath
    kicad = LiveKiCad(
        FIXTURE_BOARDS["coral-tpu-m2-adapter"],
        tmp_path / "kicad",
        extra_env={"KICAD_DOCUMENTS_HOME": str(docs)},
    )
    kicad._prepare()  # its scratch KICAD_CONFIG_HOME gets the PCM's installed_packages.json
    plugin_dir = install_like_pcm(package, third, kicad.config / "9.0")
    with kicad:
        display, xauth = _x_display(kicad.proc.pid)  # type: ignore[union-attr]
        before = _icon_pixels(display, xauth)
        ready_early = f"marking {PACKAGE_ID} as ready" in kicad.log.read_text(errors="replace")
        deadline = time.monotonic() + 300  # the venv: pip installs numpy, shapely, …
        text = ""
        while time.monotonic() < deadline:
            text = kicad.log.read_text(errors="replace")
            if f"marking {PACKAGE_ID} as ready" in text:
                break
            time.sleep(2)
        assert f"loading plugin from {plugin_dir / 'plugin.json'}" in text, text[-3000:]
        assert f"loaded action {PACKAGE_ID}.accel-drc-check" in text
        assert f"marking {PACKAGE_ID} as ready" in text, text[-3000:]
        # the button itself: the icon's green in the PCB editor's top toolbar, in one 24 px
        # square, and (when the screen was taken before the plugin was ready) not there before
        time.sleep(3)  # KiCad rebuilds the toolbar on the availability event
        after = _icon_pixels(display, xauth)
        assert len(after) >= 20, f"no accel-drc button on screen ({len(after)} icon pixels)"
        xs, ys = [p[0] for p in after], [p[1] for p in after]
        assert max(xs) - min(xs) < 24 and max(ys) - min(ys) < 24, (
            min(xs),
            max(xs),
            min(ys),
            max(ys),
        )
        assert max(ys) < 100, "the button is not in the top toolbar"
        if not ready_early:
            assert len(before) < len(after) // 4, (len(before), len(after))
        venv_python = (
            kicad.workdir / "xdg_cache/kicad/9.0/python-environments" / PACKAGE_ID / "bin/python"
        )
        r = subprocess.run(
            [
                str(venv_python),
                "-c",
                "import sys; sys.path.insert(0, '.'); import accel_drc, accel_drc.pipeline, kipy;"
                " print(accel_drc.__file__, accel_drc.__version__)",
            ],
            capture_output=True,
            text=True,
            cwd=str(plugin_dir),  # KiCad runs main.py with the plugin folder as cwd
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        where, version = r.stdout.split()
        assert where.startswith(str(plugin_dir)) and version == __version__


@pytest.mark.kicad
@pytest.mark.slow
def test_kicads_own_install_from_file(package: Path, xvfb_run: str, tmp_path: Path) -> None:
    """KiCad 9's Plugin and Content Manager, driven under Xvfb with xdotool as a user would:
    Ctrl+M in the project manager, *Install from File…*, the zip's path in the file chooser,
    *Close*.  KiCad accepts the package, extracts exactly the tree ``install_like_pcm`` lays out,
    and records it as installed from a local file.  (Offline, the PCM first says it cannot
    download KiCad's repository: that error box is dismissed.)"""
    import os
    import shutil

    xdotool = shutil.which("xdotool")
    need(xdotool is not None, "xdotool is not installed")
    from kicad_live import LiveKiCad

    docs = tmp_path / "documents"
    kicad = LiveKiCad(
        FIXTURE_BOARDS["coral-tpu-m2-adapter"],
        tmp_path / "kicad",
        extra_env={"KICAD_DOCUMENTS_HOME": str(docs)},
    )
    kicad._prepare()
    with open(kicad.log, "wb") as log:
        proc = subprocess.Popen(
            [xvfb_run, "-a", "kicad"],
            env=kicad.env(),
            cwd=str(kicad.board_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                display, xauth = _x_display(proc.pid)
                break
            except AssertionError:
                assert time.monotonic() < deadline, "KiCad never got a display"
                time.sleep(1)
        env = dict(os.environ, DISPLAY=display, XAUTHORITY=xauth)

        def x(*args: str) -> str:
            r = subprocess.run(
                [str(xdotool), *args], env=env, capture_output=True, text=True, timeout=60
            )
            return r.stdout.strip()

        def window(title: str, timeout: float = 120) -> str:
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                got = x("search", "--onlyvisible", "--name", f"^{title}$").split()
                if got:
                    return got[0]
                time.sleep(1)
            shown = [
                x("getwindowname", w).strip()
                for w in x("search", "--onlyvisible", "--name", ".").split()
            ]
            raise AssertionError(
                f"no window {title!r}; visible: {shown}: "
                f"{kicad.log.read_text(errors='replace')[-1500:]}"
            )

        def dismiss_errors(quiet_s: float = 4) -> None:
            end = time.monotonic() + quiet_s
            while time.monotonic() < end:
                for w in x("search", "--onlyvisible", "--name", "^KiCad Error$").split():
                    x("key", "--window", w, "Return")
                    end = time.monotonic() + quiet_s
                time.sleep(0.5)

        def click(win: str, dx: int, dy: int) -> None:
            """Click at (dx, dy) from the window's left (right if negative) and bottom edge."""
            geo = dict(
                line.split("=", 1) for line in x("getwindowgeometry", "--shell", win).splitlines()
            )
            left, top, w, h = (int(geo[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
            px = left + dx if dx >= 0 else left + w + dx
            x("mousemove", str(px), str(top + h - dy), "click", "1")

        def retry(act: Callable[[], None], title: str, total: float, each: float = 15) -> str:
            """Do ``act`` until the window ``title`` shows: on a loaded machine KiCad may still
            be starting up and drop the first key press or click."""
            end = time.monotonic() + total
            while True:
                act()
                try:
                    return window(title, timeout=each)
                except AssertionError:
                    if time.monotonic() > end:
                        raise
                    dismiss_errors(1)

        main = window("KiCad 9.0")
        time.sleep(2)

        def open_pcm() -> None:
            x("windowfocus", main)
            x("key", "--window", main, "ctrl+m")

        pcm = retry(open_pcm, "Plugin And Content Manager", total=180)
        dismiss_errors()

        def install_from_file() -> None:
            x("windowraise", pcm)
            click(pcm, 178, 23)  # "Install from File..." (bottom row, second button)

        chooser = retry(install_from_file, "Install Package", total=60)
        x("windowfocus", chooser)
        x("key", "--window", chooser, "ctrl+l")
        time.sleep(1)
        x("type", "--window", chooser, "--delay", "20", str(package))
        time.sleep(1)
        x("key", "--window", chooser, "Return")
        third = docs / "kicad" / "9.0" / "3rdparty"
        target = third / "plugins" / INSTALLED_FOLDER / "plugin.json"
        end = time.monotonic() + 60
        while not target.is_file() and time.monotonic() < end:
            time.sleep(1)
        assert target.is_file(), "KiCad's PCM did not install the package"
        time.sleep(2)
        dismiss_errors()
        x("windowraise", pcm)
        click(pcm, -60, 23)  # "Close": the dialog writes installed_packages.json
        registry = kicad.config / "9.0" / "installed_packages.json"
        end = time.monotonic() + 30
        while not registry.is_file() and time.monotonic() < end:
            time.sleep(1)
        reg = json.loads(registry.read_text(encoding="utf-8"))
        (entry,) = [p for p in reg["packages"] if p["package"]["identifier"] == PACKAGE_ID]
        assert entry["repository_name"] == "Local file"
        assert entry["current_version"] == pcm_version(__version__)
    finally:  # KiCad and its Xvfb: their own process group, ended by its id
        import signal

        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    # what KiCad extracted is exactly what install_like_pcm lays out, byte for byte
    ref = tmp_path / "ref"
    install_like_pcm(package, ref)
    for folder in ("plugins", "resources"):
        mine = {
            p.relative_to(ref): p.read_bytes() for p in (ref / folder).rglob("*") if p.is_file()
        }
        kicads = {
            p.relative_to(third): p.read_bytes() for p in (third / folder).rglob("*") if p.is_file()
        }
        assert mine == kicads, folder
