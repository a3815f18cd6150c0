"""``accel-drc kicad package OUT.zip``: the plugin as a KiCad Plugin and Content Manager package.

KiCad's *Plugin and Content Manager → Install from File…* (``PCM_TASK_MANAGER::InstallFromFile``)
opens a zip, reads ``metadata.json`` at its root, validates it against ``pcm.v1.schema.json``
(installed under ``share/kicad/schemas/``), requires exactly one entry in ``versions``, refuses a
package whose identifier is already installed, and extracts every entry under a known package
folder (``plugins/``, ``resources/``, …) to ``<3rdparty>/<folder>/<identifier, '.' -> '_'>/…``
(``~/.local/share/kicad/9.0/3rdparty`` on Linux, ``$KICAD9_3RD_PARTY`` when set); entries at the
zip's root other than ``metadata.json`` are ignored.  KiCad's IPC plugin manager
(``API_PLUGIN_MANAGER::ReloadPlugins``) scans that 3rdparty folder for ``plugin.json`` like the
user plugins folder ``accel-drc kicad install`` writes to, so the button is the same.

The package carries:

* ``plugins/``: ``plugin.json``, ``main.py``, the toolbar icons and ``accel_drc_kicad`` (as
  ``accel-drc kicad install`` writes them), plus a copy of this very ``accel_drc`` package
  (pure Python, rule packs and report templates included) beside ``main.py``, which puts its own
  folder first on ``sys.path``: the button runs exactly this version, with no package index
  needed for accel-drc itself.  ``requirements.txt`` lists only accel-drc's dependencies and
  kicad-python, which KiCad pip-installs into the plugin's venv;
* ``resources/icon.png``: the 64 × 64 icon the manager lists the package with;
* ``metadata.json``: name, descriptions, identifier, author, licence, links, and one version
  (``runtime: ipc``, minimum KiCad 9.0).

This module only builds the zip; ``kicad_install`` installs the plain plugin folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from .errors import UsageError
from .kicad_install import KICAD_PYTHON_REQ, InstallError, _import_bundle
from .version import __version__

#: the identifier KiCad's PCM knows the package by (also the plugin.json identifier)
PACKAGE_ID = "io.github.accel-drc.kicad"
HOMEPAGE = "https://github.com/accel-drc/accel-drc"
#: the project's licence (LICENSE, pyproject.toml ``license``), as pcm.v1's ``License`` enum
#: spells it (SPDX ids; tests/test_licence.py keeps the three equal)
LICENSE_ID = "Apache-2.0"
#: the folder KiCad extracts ``plugins/`` to (``PCM_TASK_MANAGER::extract``)
INSTALLED_FOLDER = PACKAGE_ID.replace(".", "_")
#: what accel-drc needs at run time (pyproject.toml ``dependencies``), when no installed
#: distribution metadata can say it
_FALLBACK_REQUIRES = [
    "numpy>=1.21",
    "shapely>=2.0",
    "pyyaml>=6.0",
    "jinja2>=3.0",
    "jsonschema>=4.0",
    "threadpoolctl>=3.0",
    "scipy>=1.7",
]
#: fixed timestamp for the zip entries, so the same source gives the same bytes
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)

DESCRIPTION = (
    "Design-rule checks for AI-accelerator boards: laminate Df, copper foil, via stubs and "
    "backdrill, PDN impedance, Tg, copper weight, impedance; an HTML report and markers on the "
    "board."
)
DESCRIPTION_FULL = (
    "accel-drc checks what KiCad's DRC cannot on the boards that carry AI accelerators "
    "(training, inference and edge): the loss (Df) of the laminates each high-speed net runs "
    "over, copper foil roughness, via stubs and backdrill against each interface's Nyquist "
    "frequency, PDN target impedance, glass-transition temperature, plane copper weight, layer "
    "count and differential impedance. Every limit carries its reason and source; data the "
    "board does not declare is reported as 'cannot verify', never as a pass.\n\n"
    "The toolbar button reads the open board over KiCad's IPC API (unsaved edits included), "
    "checks it with accel-drc.yaml from the project folder, opens a self-contained HTML report "
    "and marks the findings on the board (one Undo removes them). Needs KiCad 9.0 or newer with "
    "Preferences > Plugins > 'Enable KiCad API' ticked and a Python 3.9+ interpreter set there."
)


def pcm_version(version: str = __version__) -> str:
    """accel-drc's version as pcm.v1 allows it (``major[.minor[.patch]]``, digits only)."""
    m = re.match(r"^(\d{1,4})(\.\d{1,4})?(\.\d{1,6})?", version)
    if not m:
        raise InstallError(f"version {version!r} has no major[.minor[.patch]] for KiCad's PCM")
    return m.group(0)


def metadata(kicad_version: str = "9.0") -> dict[str, Any]:
    """``metadata.json`` (pcm.v1 ``Package`` with one ``PackageVersion``)."""
    status = "stable" if re.fullmatch(r"\d+\.\d+\.\d+", __version__) else "testing"
    return {
        "$schema": "https://go.kicad.org/pcm/schemas/v1",
        "name": "accel-drc",
        "description": DESCRIPTION,
        "description_full": DESCRIPTION_FULL,
        "identifier": PACKAGE_ID,
        "type": "plugin",
        "author": {"name": "accel-drc", "contact": {"web": HOMEPAGE}},
        "license": LICENSE_ID,
        "resources": {"homepage": HOMEPAGE},
        "tags": ["drc", "signal-integrity", "power-integrity", "stackup"],
        "versions": [
            {
                "version": pcm_version(),
                "status": status,
                "kicad_version": kicad_version,
                "runtime": "ipc",
                "platforms": ["linux", "macos", "windows"],
            }
        ],
    }


def runtime_requirements() -> list[str]:
    """accel-drc's run-time requirements (from the installed distribution's metadata, else the
    list pyproject.toml declares), without extras and environment markers' optional parts."""
    try:
        from importlib.metadata import PackageNotFoundError, requires

        reqs = requires("accel-drc") or []
    except (ImportError, PackageNotFoundError):
        reqs = []
    out = [r.split(";")[0].strip() for r in reqs if "extra ==" not in r]
    return out or list(_FALLBACK_REQUIRES)


def requirements_text() -> str:
    lines = [
        "# KiCad pip-installs this into the plugin's venv.  accel-drc itself is the copy in",
        f"# this folder (version {__version__}), found first on sys.path by main.py.",
        KICAD_PYTHON_REQ,
        *runtime_requirements(),
    ]
    return "\n".join(lines) + "\n"


def _stage(root: Path, kicad_version: str) -> None:
    """Lay the package out under ``root`` as it goes into the zip."""
    bundle = _import_bundle()
    plugins = root / "plugins"
    bundle.write_static(plugins)
    bundle.copy_package(plugins)
    engine = Path(__file__).resolve().parent
    shutil.copytree(
        engine,
        plugins / "accel_drc",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "examples"),
    )
    (plugins / "requirements.txt").write_text(requirements_text(), encoding="utf-8")
    resources = root / "resources"
    resources.mkdir(parents=True, exist_ok=True)
    (resources / "icon.png").write_bytes(bundle.icon_png(64))
    (root / "metadata.json").write_text(
        json.dumps(metadata(kicad_version), indent=2) + "\n", encoding="utf-8"
    )
    for src in licence_files():  # Apache-2.0 asks that the licence and NOTICE travel along
        shutil.copyfile(src, plugins / src.name)


#: the licence files every copy of accel-drc carries (Apache-2.0 §4)
LICENCE_NAMES = ("LICENSE", "NOTICE")


def licence_files() -> list[Path]:
    """LICENSE and NOTICE: from the checkout this module runs from, else from the installed
    distribution's metadata (a wheel puts them in ``*.dist-info/licenses/``)."""
    root = Path(__file__).resolve().parents[2]
    found = [root / n for n in LICENCE_NAMES if (root / n).is_file()]
    if len(found) == len(LICENCE_NAMES):
        return found
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        dist = distribution("accel-drc")
    except (ImportError, PackageNotFoundError):
        return found
    by_name = {}
    for f in dist.files or ():
        if f.name in LICENCE_NAMES and "licenses" in f.parts:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                by_name[f.name] = path
    return [by_name[n] for n in LICENCE_NAMES if n in by_name]


def build(out_zip: str | os.PathLike[str], kicad_version: str = "9.0") -> Path:
    """Write the PCM package zip; returns its path.

    Written as the reports are (:func:`accel_drc.report.writers.prepare_outputs` refuses a
    folder, a dangling symlink or an unwritable folder before the work;
    :func:`accel_drc.hostile.write_atomically` writes a private temporary file beside it and
    renames it over ``OUT.zip``, and refuses a read-only one): two runs at once leave one whole
    package, and a planted ``OUT.zip.partial`` symlink is never written through."""
    from .hostile import clean_exit_on_signals, write_atomically
    from .report.writers import prepare_outputs

    out = Path(out_zip)
    if out.is_dir():
        raise UsageError(f"{out}: is a folder; name the .zip to write")
    if out.suffix.lower() != ".zip":
        raise UsageError(f"{out}: KiCad's Install from File takes a .zip; name it OUT.zip")
    prepare_outputs(str(out))
    # SIGTERM/SIGHUP while staging or zipping: the staging folder and the temporary zip go too
    with clean_exit_on_signals(), tempfile.TemporaryDirectory(prefix="accel-drc-pcm-") as tmp:
        root = Path(tmp)
        _stage(root, kicad_version)
        files = sorted(p for p in root.rglob("*") if p.is_file())
        try:
            write_atomically(str(out), lambda fh: _zip(fh, root, files), binary=True)
        except OSError as exc:
            raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return out


def _zip(fh: Any, root: Path, files: list[Path]) -> None:
    """The files under ``root`` as a zip in ``fh``, with fixed dates and modes (the same
    source gives the same bytes)."""
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in files:
            info = zipfile.ZipInfo(p.relative_to(root).as_posix(), _ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, p.read_bytes())


def install_like_pcm(
    package: str | os.PathLike[str],
    third_party: str | os.PathLike[str],
    settings_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Extract ``package`` into a KiCad 3rdparty folder exactly as ``PCM_TASK_MANAGER::extract``
    does (``<folder>/<rest>`` -> ``<3rdparty>/<folder>/<id with '.' -> '_'>/<rest>``, root files
    and unknown folders skipped) and, given KiCad's settings folder (``~/.config/kicad/9.0``),
    record it in ``installed_packages.json`` there as ``PLUGIN_CONTENT_MANAGER::MarkInstalled``
    and the dialog's close do; returns the plugin folder.  For tests and headless installs where
    the PCM dialog is not clicked.  Checked against KiCad 9.0.8's own *Install from File…*
    driven under Xvfb: the extracted trees are byte-identical, and the registry entry has the
    same keys (``package``, ``current_version``, ``repository_id``, ``repository_name: "Local
    file"``, ``install_timestamp``, ``pinned``)."""
    known = {
        "plugins",
        "footprints",
        "3dmodels",
        "symbols",
        "resources",
        "colors",
        "templates",
        "scripts",
    }  # fmt: skip  (PCM_PACKAGE_DIRECTORIES)
    base = Path(third_party)
    with zipfile.ZipFile(package) as zf:
        meta = json.loads(zf.read("metadata.json"))
        clean = str(meta["identifier"]).replace(".", "_")
        for info in zf.infolist():
            parts = info.filename.split("/")
            if len(parts) < 2 or parts[0] not in known or not parts[-1]:
                continue
            if any(p in ("", ".", "..") for p in parts[1:-1]):
                raise InstallError(f"{package}: unsafe path in the package: {info.filename}")
            target = base.joinpath(parts[0], clean, *parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
    if settings_dir is None:
        return base / "plugins" / clean
    registry = Path(settings_dir) / "installed_packages.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    try:
        doc = json.loads(registry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = {"packages": []}
    doc["packages"] = [p for p in doc.get("packages", []) if p.get("package", {}).get("identifier") != meta["identifier"]]  # fmt: skip
    doc["packages"].append(
        {
            "package": meta,
            "current_version": meta["versions"][0]["version"],
            "repository_id": "",
            "repository_name": "Local file",
            "install_timestamp": int(time.time()),
            "pinned": False,
        }
    )
    registry.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return base / "plugins" / clean


def sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_package(args: Any) -> int:
    """The CLI handler for ``accel-drc kicad package OUT.zip``."""
    out = build(args.out, getattr(args, "kicad_version", "9.0"))
    size = out.stat().st_size
    print(
        f"accel-drc: wrote the KiCad PCM package {out} ({size / 1024:.0f} KiB, sha256 {sha256(out)})"
    )
    print(
        "accel-drc: in KiCad, Plugin and Content Manager > Install from File..., choose it, then "
        "enable Preferences > Plugins > 'Enable KiCad API' and restart the PCB editor."
    )
    return 0
