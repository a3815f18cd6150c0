"""``accel-drc kicad install | uninstall``: put the toolbar button where KiCad finds it.

KiCad (9.0+) looks for IPC plugins in ``<documents>/<version>/plugins/<folder>/plugin.json``:
``~/.local/share/kicad/<ver>/plugins`` on Linux (``$XDG_DATA_HOME`` honoured) and
``Documents/KiCad/<ver>/plugins`` on macOS and Windows; ``KICAD_DOCUMENTS_HOME`` replaces the
documents dir everywhere (``$KICAD_DOCUMENTS_HOME/kicad/<ver>/plugins`` on Linux).  On the first click KiCad creates a venv for the plugin and
pip-installs its ``requirements.txt``; without that file there is no button at all.

So that the venv gets *this* accel-drc (not whatever an index has), the installer pins it:
from a source checkout it builds a wheel of the running package into the plugin folder
(``pip wheel --no-deps``) and references it by absolute ``file://`` URL; from an installed
distribution it pins ``accel-drc==<this version>`` from the package index.

This module never imports kipy (the engine does not); the plugin code it copies does.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import AccelDrcError, UsageError
from .hostile import clean_exit_on_signals
from .version import __version__

log = logging.getLogger(__name__)

#: the folder name under KiCad's plugins dir
FOLDER = "accel-drc"
KICAD_PYTHON_REQ = "kicad-python>=0.8.0"


class InstallError(AccelDrcError):
    """The plugin could not be installed (exit 3 with the reason)."""


#: accel-drc's own plugin identifier (``plugin/plugin.json``): the marker of a folder this tool
#: wrote.  Install and uninstall replace or delete only a folder whose plugin.json carries it, so
#: a user's checkout that happens to be called ``accel-drc`` is never touched.
PLUGIN_ID = "io.github.accel-drc.kicad"


def is_ours(folder: Path) -> bool:
    """Whether ``folder`` is a real directory (not a symlink) holding accel-drc's plugin.json."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        doc = json.loads((folder / "plugin.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("identifier") == PLUGIN_ID


def _refuse_foreign(target: Path, doing: str) -> None:
    """Raise unless ``target`` is absent or accel-drc's own plugin folder."""
    if not (target.exists() or target.is_symlink()):
        return
    if target.is_symlink():
        raise InstallError(f"{target} is a symlink, not accel-drc's plugin folder; not {doing} it")
    if not target.is_dir():
        raise InstallError(f"{target} is a file, not accel-drc's plugin folder; not {doing} it")
    if not is_ours(target):
        raise InstallError(
            f"{target} is not accel-drc's plugin folder (its plugin.json does not carry "
            f"{PLUGIN_ID}); not {doing} it: move it away or use --dest"
        )


def documents_dir() -> Path:
    """KiCad's per-user documents root (without the version), as ``PATHS::getUserDocumentPath``
    builds it: ``$KICAD_DOCUMENTS_HOME`` (else the platform's documents dir, which on Linux is
    ``$XDG_DATA_HOME`` or ``~/.local/share``) plus ``kicad`` (``KiCad`` on macOS/Windows)."""
    system = platform.system()
    sub = "KiCad" if system in ("Darwin", "Windows") else "kicad"
    env = os.environ.get("KICAD_DOCUMENTS_HOME")
    if env:
        return Path(env).expanduser() / sub
    if system in ("Darwin", "Windows"):
        return Path.home() / "Documents" / sub
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / sub


def plugins_dir(kicad_version: str = "9.0", dest: str | None = None) -> Path:
    """Where KiCad ``kicad_version`` looks for IPC plugins (``dest`` overrides)."""
    if dest:
        return Path(dest).expanduser()
    return documents_dir() / kicad_version / "plugins"


def plugin_source() -> Path | None:
    """The repository's ``plugin/`` folder when running from a checkout, else None."""
    here = Path(__file__).resolve().parent  # engine/accel_drc
    root = here.parent.parent
    candidate = root / "plugin"
    if (candidate / "plugin.json").is_file() and (root / "pyproject.toml").is_file():
        return candidate
    return None


def project_root() -> Path | None:
    src = plugin_source()
    return src.parent if src is not None else None


def _import_bundle() -> Any:
    """``accel_drc_kicad.bundle`` from the checkout's plugin/ or the installed distribution."""
    src = plugin_source()
    if src is not None and str(src) not in sys.path:
        sys.path.insert(0, str(src))
    try:
        from accel_drc_kicad import bundle  # type: ignore[import-not-found]
    except ImportError as exc:
        raise InstallError(
            f"the plugin code (accel_drc_kicad) is not part of this installation ({exc})"
        ) from None
    return bundle


def build_wheel(root: Path, out_dir: Path) -> Path:
    """``pip wheel --no-deps`` of the checkout into ``out_dir``; the wheel's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="accel-drc-wheel-") as tmp:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp, str(root)]
        log.info("building wheel: %s", " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise InstallError(
                f"pip wheel failed ({proc.returncode}): {proc.stderr.strip()[-800:]}"
            )
        wheels = sorted(Path(tmp).glob("accel_drc-*.whl"))
        if not wheels:
            raise InstallError(f"pip wheel produced no accel_drc wheel in {tmp}")
        target = out_dir / wheels[-1].name
        shutil.copyfile(wheels[-1], target)
    return target


def requirements(wheel: Path | None) -> str:
    """The plugin venv's requirements: kicad-python plus exactly this accel-drc."""
    lines = [
        "# Written by `accel-drc kicad install`; KiCad pip-installs this into the plugin's venv.",
        KICAD_PYTHON_REQ,
    ]
    if wheel is not None:
        lines.append(f"accel-drc @ {wheel.resolve().as_uri()}")
    else:
        lines.append(f"accel-drc=={__version__}")
    return "\n".join(lines) + "\n"


def install(kicad_version: str = "9.0", dest: str | None = None, build: bool = True) -> Path:
    """Install (or reinstall) the plugin folder; returns it."""
    bundle = _import_bundle()
    base = plugins_dir(kicad_version, dest)
    target = base / FOLDER
    _refuse_foreign(target, "replacing")
    try:
        base.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".accel-drc-", dir=base))
    except OSError as exc:
        raise InstallError(f"cannot write to {base}: {exc.strerror or exc}") from None
    try:
        bundle.write_static(staging)
        bundle.copy_package(staging)
        root = project_root()
        wheel = None
        if build and root is not None:
            wheel = build_wheel(root, staging / "wheels")
        # the wheel's final home is the target folder: name it there before moving
        final_wheel = target / "wheels" / wheel.name if wheel is not None else None
        (staging / "requirements.txt").write_text(requirements(final_wheel), encoding="utf-8")
        _refuse_foreign(target, "replacing")  # again: it may have appeared meanwhile
        if target.exists():
            # swap, then delete the old one: the folder is never missing or half-written
            old = Path(tempfile.mkdtemp(prefix=".accel-drc-old-", dir=base))
            target.rename(old / FOLDER)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def uninstall(kicad_version: str = "9.0", dest: str | None = None) -> Path | None:
    """Remove the plugin folder; returns it, or None when it was not installed."""
    target = plugins_dir(kicad_version, dest) / FOLDER
    if not (target.exists() or target.is_symlink()):
        return None
    _refuse_foreign(target, "removing")
    shutil.rmtree(target)
    return target


def config_dir(kicad_version: str) -> Path:
    """KiCad's settings dir (where ``kicad_common.json`` lives)."""
    env = os.environ.get("KICAD_CONFIG_HOME")
    if env:
        return Path(env) / kicad_version
    system = platform.system()
    if system == "Windows":
        return Path(os.environ.get("APPDATA", str(Path.home()))) / "kicad" / kicad_version
    if system == "Darwin":
        return Path.home() / "Library" / "Preferences" / "kicad" / kicad_version
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "kicad" / kicad_version


def api_server_enabled(kicad_version: str) -> bool | None:
    """Whether the user's KiCad has its API server on (None: no settings file yet)."""
    path = config_dir(kicad_version) / "kicad_common.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return bool(data.get("api", {}).get("enable_server"))


def os_error_text(exc: OSError) -> str:
    """One line for ``exc``: its ``strerror``, or for a ``shutil.Error`` (``copytree``'s list
    of one ``(src, dst, "[Errno 28] No space left on device: '…'")`` per file that failed,
    1,371 characters on a full disk) the first reason and how many more files failed."""
    errors = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(errors, list) and errors:
        first = str(errors[0][-1]) if isinstance(errors[0], tuple) else str(errors[0])
        m = re.match(r"\[Errno \d+\] ([^:]+)", first)
        more = len(errors) - 1
        return (m.group(1) if m else first) + (
            f" (and {more} more file{'s' if more != 1 else ''})" if more else ""
        )
    return exc.strerror or str(exc)


#: the KiCad versions the plugin supports (IPC API), oldest first
SUPPORTED_KICAD = ("9.0", "10.0")


def _series(version_text: str) -> str | None:
    """``"10.0.7"`` (``kicad-cli version``) -> ``"10.0"``: the settings/plugins folder name."""
    m = re.match(r"\s*(\d+)\.(\d+)", version_text)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def installed_kicads() -> dict[str, str]:
    """The supported KiCad versions found on this machine, each with its evidence: KiCad's
    settings folder for that version (KiCad makes it on its first start; ``KICAD_CONFIG_HOME``
    honoured), or ``kicad-cli`` on ``PATH`` reporting that version."""
    found: dict[str, str] = {}
    for v in SUPPORTED_KICAD:
        if config_dir(v).is_dir():
            found[v] = f"its settings in {config_dir(v)}"
    cli = shutil.which("kicad-cli")
    if cli:
        try:
            out = subprocess.run(
                [cli, "version"], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        series = _series(out)
        if series in SUPPORTED_KICAD and series not in found:
            found[series] = f"{cli} {out.strip()}"
    return found


def choose_kicad_version(requested: str | None) -> tuple[str, str]:
    """(version, why): the version asked for, else the newest supported KiCad found here, else
    the newest supported (a machine with no KiCad yet gets the plugin for the KiCad it will
    install)."""
    if requested:
        return requested, "as asked (--kicad-version)"
    found = installed_kicads()
    if found:
        newest = max(found, key=lambda v: tuple(int(x) for x in v.split(".")))
        others = sorted(set(found) - {newest})
        also = (
            f"; KiCad {', '.join(others)} found too: --kicad-version {others[-1]} for it"
            if others
            else ""
        )
        return newest, f"the newest KiCad found ({found[newest]}){also}"
    newest = SUPPORTED_KICAD[-1]
    return newest, (
        f"no KiCad found on this machine: installing for the newest, KiCad {newest} "
        f"(--kicad-version {SUPPORTED_KICAD[0]} for KiCad {SUPPORTED_KICAD[0]})"
    )


def run_kicad(args: Any) -> int:
    """The CLI handler for ``accel-drc kicad install|uninstall``."""
    dest = getattr(args, "dest", None)
    version, why = choose_kicad_version(getattr(args, "kicad_version", None))
    if args.kicad_command == "install":
        try:
            with clean_exit_on_signals():  # SIGTERM/SIGHUP: the staging folder is removed too
                target = install(version, dest)
        except OSError as exc:
            raise InstallError(
                f"{plugins_dir(version, dest)}: cannot install: {os_error_text(exc)}"
            ) from None
        print(f"accel-drc: installed the KiCad {version} plugin in {target} ({why})")
        req = (target / "requirements.txt").read_text(encoding="utf-8").strip().splitlines()[1:]
        print("accel-drc: KiCad will pip-install on first use: " + "; ".join(req))
        enabled = api_server_enabled(version)
        if not enabled:
            print(
                "accel-drc: KiCad's API server is "
                + ("off" if enabled is False else "not configured yet")
                + ": in KiCad, Preferences > Preferences > Plugins, tick 'Enable KiCad API', "
                "then restart KiCad. Without it there is no button."
            )
        else:
            print("accel-drc: restart KiCad.")
        print(
            "accel-drc: on that first start KiCad builds the plugin's Python environment "
            "(1 to 5 minutes, about 150 MB from PyPI, with no progress shown); then the "
            "'accel-drc check' button appears at the right end of the PCB editor's top toolbar."
        )
        return 0
    if args.kicad_command == "uninstall":
        # with no version named, every supported KiCad's plugin folder: the plugin may have
        # been installed for KiCad 9 before KiCad 10 arrived
        asked = getattr(args, "kicad_version", None)
        versions = [asked] if asked or dest else list(SUPPORTED_KICAD)
        removed = 0
        for v in versions:
            v = v or version
            try:
                target = uninstall(v, dest)
            except OSError as exc:
                raise InstallError(
                    f"{plugins_dir(v, dest)}: cannot uninstall: {os_error_text(exc)}"
                ) from None
            if target is not None:
                removed += 1
                print(f"accel-drc: removed {target}")
        if not removed:
            where = " or ".join(str(plugins_dir(v or version, dest)) for v in versions)
            print(f"accel-drc: no plugin installed in {where}")
        return 0
    raise UsageError(f"unknown kicad action {args.kicad_command!r}")
