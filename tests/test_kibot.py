"""The KiBot plug-in (issue 31 item 12, docs/integrations.md#kibot).

The slow tests run a real KiBot from PyPI (the version constraints.txt pins) on a fixture board:
KiBot needs KiCad's ``pcbnew`` module, so the venv is made from KiCad's Python
(``--system-site-packages``) with ``accel-drc[kibot]`` installed in it, and the plug-ins are
installed with ``accel-drc kibot install`` into a scratch ``HOME``.  The fast tests cover the
install command and the plug-in's decisions without KiBot."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import accel_drc
import pytest
from accel_drc import kibot_plugin
from accel_drc.report.json_report import to_dict
from conftest import FIXTURE_BOARDS, FIXTURES, ROOT

M2 = FIXTURE_BOARDS["m2-oculink-adapter"]
TRAINING = FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


# --------------------------------------------------------------------------- without KiBot


def test_install_copies_the_plugins_where_kibot_looks(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    r = _cli("kibot", "install", env=env)
    assert r.returncode == 0, r.stderr
    where = tmp_path / ".config" / "kibot" / "plugins"  # kibot.kiplot.load_actions
    assert sorted(p.name for p in where.iterdir()) == ["out_accel_drc.py", "pre_accel_drc.py"]
    for p in where.iterdir():
        assert p.read_bytes() == (Path(kibot_plugin.source_dir()) / p.name).read_bytes()
        assert str(p) in r.stdout
        # KiBot parses a plug-in's docstring as YAML dependency data: there must be none
        assert not p.read_text(encoding="utf-8").lstrip().startswith(('"""', "'''"))
    dest = tmp_path / "elsewhere"
    assert _cli("kibot", "install", "--dest", str(dest)).returncode == 0
    assert (dest / "pre_accel_drc.py").is_file()
    afile = tmp_path / "a-file"
    afile.write_text("keep", encoding="utf-8")
    r = _cli("kibot", "install", "--dest", str(afile))
    assert r.returncode == 1 and "not a folder" in r.stderr and "Traceback" not in r.stderr
    assert afile.read_text(encoding="utf-8") == "keep"
    r = _cli("kibot", "install", "--dest", str(afile / "sub"))  # a path through a file
    assert r.returncode == 1 and "cannot write" in r.stderr and "internal" not in r.stderr
    r = _cli("kibot")
    assert r.returncode == 1 and "name an action" in r.stderr


def test_formats_option() -> None:
    assert kibot_plugin.formats("html,Json") == ["HTML", "JSON"]
    assert kibot_plugin.formats(["SARIF", "markdown", "SARIF"]) == ["SARIF", "MARKDOWN"]
    assert kibot_plugin.formats([]) == []
    with pytest.raises(accel_drc.UsageError, match="unknown accel-drc report format 'PDF'"):
        kibot_plugin.formats(["HTML", "PDF"])


def test_failure_follows_the_cli_exit_code(tmp_path: Path) -> None:
    failing = kibot_plugin.run(str(M2), str(TRAINING), None, {"JSON": str(tmp_path / "f.json")})
    why = kibot_plugin.failure(failing)
    assert why is not None and "error violation(s)" in why
    assert json.loads((tmp_path / "f.json").read_text())["findings"] == json.loads(
        json.dumps(to_dict(failing)["findings"])
    )
    unverified = kibot_plugin.run(str(M2), None, None, {})
    assert unverified.verdict() == "unverified"
    assert kibot_plugin.failure(unverified) is None
    assert "unverified" in (kibot_plugin.failure(unverified, fail_on_unverified=True) or "")


def test_failure_line_escapes_control_characters() -> None:
    """A board path is the user's data: KiBot's log shows it, never obeys it."""
    result = kibot_plugin.run(str(M2), str(TRAINING), None, {})
    hostile = dataclasses.replace(result, board_file="x\x1b[2J\u202e.kicad_pcb\nERROR: forged")
    why = kibot_plugin.failure(hostile)
    assert why is not None and "\x1b" not in why and "\n" not in why and "\u202e" not in why
    assert "\\x1b[2J" in why and "<U+202E>" in why


def test_a_report_never_lands_on_an_input(tmp_path: Path) -> None:
    for f in M2.parent.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    board = tmp_path / M2.name
    (tmp_path / "accel-drc.yaml").write_text("class: edge\n", encoding="utf-8")
    for target in (board, board.with_suffix(".kicad_pro"), tmp_path / "accel-drc.yaml"):
        before = target.read_bytes()
        with pytest.raises(accel_drc.UsageError):  # KiBot shows it as a config error (exit 7)
            kibot_plugin.run(str(board), None, None, {"JSON": str(target)})
        assert target.read_bytes() == before, target


# --------------------------------------------------------------------------- with KiBot


@pytest.fixture(scope="module")
def kibot_env(pcbnew_python: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A venv of KiCad's Python with KiBot and accel-drc[kibot], and a HOME holding the
    plug-ins (``accel-drc kibot install``)."""
    base = tmp_path_factory.mktemp("kibot")
    env_dir = base / "venv"
    r = subprocess.run(
        [pcbnew_python, "-m", "venv", "--system-site-packages", str(env_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode != 0:  # no ensurepip for KiCad's Python (python3-venv): virtualenv's pip
        r = subprocess.run(
            [sys.executable, "-m", "virtualenv", "--system-site-packages", "-p", pcbnew_python,
             str(env_dir)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
    bindir = env_dir / "bin"
    r = subprocess.run(
        [
            str(bindir / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-compile",  # KiBot's macros (mcpyrate) expand at import: no pip-made .pyc
            "-c",
            str(ROOT / "constraints.txt"),
            "-e",
            f"{ROOT}[kibot]",
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    home = base / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    r = subprocess.run(
        [str(bindir / "accel-drc"), "kibot", "install"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 0, r.stderr
    return {"kibot": str(bindir / "kibot"), "env": env}


CONFIG = """\
kibot:
  version: 1
preflight:
  accel_drc: {preflight}
outputs:
  - name: accel_drc_report
    comment: accel-drc reports
    type: accel_drc
    dir: reports
    options:
      format: [HTML, JSON, SARIF, MARKDOWN, JUNIT]
"""


def _kibot(
    kenv: dict[str, Any], work: Path, preflight: str, board: Path = M2
) -> subprocess.CompletedProcess[str]:
    """``kibot -c accel-drc.kibot.yaml -b BOARD`` in ``work`` (the board copied there)."""
    work.mkdir(exist_ok=True)
    for f in board.parent.iterdir():
        (work / f.name).write_bytes(f.read_bytes())
    (work / "accel-drc.kibot.yaml").write_text(CONFIG.format(preflight=preflight), "utf-8")
    return subprocess.run(
        [kenv["kibot"], "-c", "accel-drc.kibot.yaml", "-b", board.name, "-d", "out"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=str(work),
        env=kenv["env"],
    )


@pytest.mark.kicad
@pytest.mark.slow
def test_kibot_runs_the_preflight_and_writes_the_reports(
    kibot_env: dict[str, Any], tmp_path: Path
) -> None:
    r = _kibot(kibot_env, tmp_path / "w", "{format: [JSON]}")
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-4000:]  # verdict NOT VERIFIED: exit 0, as the CLI
    assert "Running accel-drc" in log and "verdict: NOT VERIFIED" in log
    out = tmp_path / "w" / "out"
    stem = M2.stem + "-accel_drc"
    pre = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
    reports = out / "reports"
    for ext in ("html", "json", "sarif", "md", "xml"):
        assert (reports / f"{stem}.{ext}").stat().st_size > 0, ext
    cli = json.loads(_cli("check", "--quiet", "--json", "-", str(M2)).stdout)
    assert pre["findings"] == cli["findings"]
    assert json.loads((reports / f"{stem}.json").read_text())["findings"] == cli["findings"]
    sarif = json.loads((reports / f"{stem}.sarif").read_text())
    assert sarif["runs"][0]["tool"]["driver"]["name"] == "accel-drc"


@pytest.mark.kicad
@pytest.mark.slow
def test_kibot_fails_on_violations_and_on_bad_input(
    kibot_env: dict[str, Any], tmp_path: Path
) -> None:
    config = f"{{config_file: {TRAINING}}}"
    r = _kibot(kibot_env, tmp_path / "fail", config)
    log = r.stdout + r.stderr
    assert r.returncode == 5, log[-4000:]  # KiBot's DRC_ERROR, as its own `drc` preflight
    assert "error violation(s)" in log and "training.laminate_df.nvlink4" in log
    assert not (tmp_path / "fail" / "out" / "reports").exists()  # the run stopped there
    r = _kibot(kibot_env, tmp_path / "dont", f"{{config_file: {TRAINING}, dont_stop: true}}")
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "error violation(s)" in r.stderr + r.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("signals:\n  nvlink9: ['X.*']\n", encoding="utf-8")
    r = _kibot(kibot_env, tmp_path / "bad", f"{{config_file: {bad}}}")
    log = r.stdout + r.stderr
    assert r.returncode == 7, log[-4000:]  # KiBot's EXIT_BAD_CONFIG
    assert f"{bad}:2: unknown signal type 'nvlink9'" in log and "Traceback" not in log
    r = _kibot(kibot_env, tmp_path / "fmt", "{format: [PDF]}")
    assert r.returncode == 7 and "PDF" in r.stdout + r.stderr
    r = _kibot(kibot_env, tmp_path / "cls", "{board_class: huge}")  # KiBot's own choice check
    assert r.returncode == 7 and "huge" in r.stdout + r.stderr
    r = _kibot(kibot_env, tmp_path / "gone", f"{{config_file: {tmp_path / 'gone.yaml'}}}")
    log = r.stdout + r.stderr
    assert r.returncode == 7 and "gone.yaml: config file not found" in log, log[-3000:]
