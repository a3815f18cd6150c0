"""A release that installs anywhere: one version, a bundled example, an sdist and a wheel.

The slow test builds the sdist and the wheel with ``python -m build`` (the wheel is built from
the sdist, so a file missing from the sdist fails it), installs the wheel into a fresh venv, and
runs the installed ``accel-drc`` from a folder with no checkout in sight: ``--version``,
``check --example`` and ``kicad install`` / ``kicad package`` from the wheel alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from accel_drc import __version__
from accel_drc.cli import EXAMPLE_BOARD, example_dir
from conftest import FIXTURE_BOARDS, ROOT


def _cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


def test_version_comes_from_one_place() -> None:
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]', toml, re.M)
    assert 'version = { attr = "accel_drc.__version__" }' in toml
    assert not re.search(r'^version = "', toml, re.M)
    # the plugin's requirements pin the same version (make_bundle / kicad install write it)
    req = (ROOT / "plugin" / "requirements.txt").read_text(encoding="utf-8")
    assert f"accel-drc=={__version__}" in req.splitlines()
    r = _cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"accel-drc {__version__}"


def test_every_report_carries_the_version(tmp_path: Path) -> None:
    out = {k: tmp_path / f"r.{k}" for k in ("json", "sarif", "html", "junit", "markdown")}
    args = ["check", "--example", "--quiet"]
    for k, p in out.items():
        args += [f"--{k}", str(p)]
    r = _cli(*args)
    assert r.returncode in (0, 5), r.stderr
    assert json.loads(out["json"].read_text())["tool"]["version"] == __version__
    driver = json.loads(out["sarif"].read_text())["runs"][0]["tool"]["driver"]
    assert driver["version"] == driver["semanticVersion"] == __version__
    html = out["html"].read_text(encoding="utf-8")
    assert f'<meta name="generator" content="accel-drc {__version__}">' in html
    assert f'name="accel-drc.version" value="{__version__}"' in out["junit"].read_text()
    assert f"**accel-drc** {__version__}" in out["markdown"].read_text(encoding="utf-8")


def test_example_board_is_the_fixture_and_help_names_it() -> None:
    shipped = Path(example_dir()) / EXAMPLE_BOARD
    fixture = FIXTURE_BOARDS["coral-tpu-m2-adapter"]
    assert shipped.read_bytes() == fixture.read_bytes()
    assert (
        shipped.with_suffix(".kicad_pro").read_bytes()
        == fixture.with_suffix(".kicad_pro").read_bytes()
    )
    assert (shipped.parent / "LICENSE").read_bytes() == (fixture.parent / "LICENSE").read_bytes()
    r = _cli("--help")
    assert example_dir() in " ".join(r.stdout.split())


def test_check_example_runs_from_anywhere(tmp_path: Path) -> None:
    r = _cli("check", "--example", "--json", "-", "--quiet", cwd=str(tmp_path))
    assert r.returncode in (0, 5), r.stderr
    doc = json.loads(r.stdout)
    assert doc["board"]["file"].endswith(EXAMPLE_BOARD)
    assert doc["classification"]["class"] == "edge"
    r = _cli("check", "--example", str(FIXTURE_BOARDS["coral-tpu-m2-adapter"]))
    assert r.returncode == 1 and "not both" in r.stderr


@pytest.mark.slow
def test_wheel_installs_and_runs_with_no_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    r = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if r.returncode != 0 and "No module named build" in r.stderr:
        pytest.fail("the 'build' package is missing: it is in the test extra")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    wheels = list(dist.glob(f"accel_drc-{__version__}-*.whl"))
    sdists = list(dist.glob(f"accel_drc-{__version__}.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert f"accel_drc/examples/{EXAMPLE_BOARD}" in names
    assert "accel_drc_kicad/bundle.py" in names and "accel_drc/rules/classes/edge.yaml" in names
    # the start-up tables (issue 18): validated rule data and compiled dataclass methods
    assert "accel_drc/bundled_rules.jsonl" in names
    assert "accel_drc/bundled_dataclasses.marshal" in names
    # the KiBot plug-ins `accel-drc kibot install` copies (package data, not modules)
    assert {
        "accel_drc/kibot_plugins/pre_accel_drc.py",
        "accel_drc/kibot_plugins/out_accel_drc.py",
    } <= set(names)
    # the licence (issue 31 item 13): LICENSE and NOTICE in the wheel's dist-info (PEP 639) and
    # at the sdist's root, the SPDX expression in both metadata files
    info = f"accel_drc-{__version__}.dist-info"
    wheel = zipfile.ZipFile(wheels[0])
    for name in ("LICENSE", "NOTICE"):
        assert wheel.read(f"{info}/licenses/{name}") == (ROOT / name).read_bytes(), name
    assert "License-Expression: Apache-2.0" in wheel.read(f"{info}/METADATA").decode().splitlines()
    with tarfile.open(sdists[0]) as tf:
        members = tf.getnames()
        top = f"accel_drc-{__version__}"
        for name in ("LICENSE", "NOTICE"):
            got = tf.extractfile(f"{top}/{name}")
            assert got is not None and got.read() == (ROOT / name).read_bytes(), name
        pkg_info = tf.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        assert "License-Expression: Apache-2.0" in pkg_info.read().decode().splitlines()
    assert any(
        m.endswith("engine/accel_drc/examples/coral-tpu-m2-adapter/LICENSE") for m in members
    )

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / "python"
    r = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(ROOT / "constraints.txt"),
            str(wheels[0]),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    exe = str(bindir / "accel-drc")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, *args], capture_output=True, text=True, cwd=str(elsewhere), env=env, timeout=600
        )

    assert run("--version").stdout.strip() == f"accel-drc {__version__}"
    helped = " ".join(run("--help").stdout.split())
    assert "site-packages" in helped and "examples" in helped
    r = run("check", "--example", "--json", "out.json", "--html", "out.html")
    assert r.returncode in (0, 5), r.stderr
    doc = json.loads((elsewhere / "out.json").read_text())
    assert doc["tool"]["version"] == __version__ and "site-packages" in doc["board"]["file"]
    assert str(ROOT) not in doc["board"]["file"]
    # the installed package uses its shipped snapshot and dataclass table (same interpreter)
    r = subprocess.run(
        [
            str(py),
            "-c",
            "from accel_drc import bundled, dccode, packs; dccode.install(); "
            "packs.load_library(); print(bundled._STATE.valid, bool(dccode._state['table']))",
        ],
        capture_output=True,
        text=True,
        cwd=str(elsewhere),
        env=env,
        timeout=600,
    )
    assert r.stdout.split() == ["True", "True"], r.stdout + r.stderr
    plugins = elsewhere / "plugins"
    r = run("kicad", "install", "--dest", str(plugins))
    assert r.returncode == 0, r.stderr
    installed = plugins / "accel-drc"
    assert (installed / "plugin.json").is_file() and (installed / "accel_drc_kicad").is_dir()
    req = (installed / "requirements.txt").read_text().splitlines()
    assert f"accel-drc=={__version__}" in req  # from a wheel: the released version, no checkout
    r = run("kicad", "package", "pcm.zip")
    assert r.returncode == 0, r.stderr
    pcm_names = zipfile.ZipFile(elsewhere / "pcm.zip").namelist()
    assert "plugins/accel_drc/pipeline.py" in pcm_names
    # from a wheel, the licence files come from the distribution's metadata
    assert "plugins/LICENSE" in pcm_names and "plugins/NOTICE" in pcm_names
