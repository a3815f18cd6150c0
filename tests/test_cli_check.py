"""``accel-drc check`` and ``accel-drc rules`` as a user runs them: exit codes 0 / 5 / 3 / 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_BOARDS, FIXTURES

EXE = [sys.executable, "-m", "accel_drc.cli"]
M2 = str(FIXTURE_BOARDS["m2-oculink-adapter"])
TRAINING = str(FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml")


def run(*args, cwd=None):
    return subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_clean_board_exits_0_with_summary():
    r = run("check", M2)
    assert r.returncode == 0, r.stderr
    assert "class: edge (classified, confidence" in r.stdout
    # its PDN cannot be checked (no rail declared or found): exit 0, but not called a pass
    assert "verdict: NOT VERIFIED (no error violation, but 1 error-severity check" in r.stdout
    assert "edge.pdn_impedance" in r.stdout
    assert "signals.assumed_type.pcie4" in r.stdout  # the assumption is visible
    assert r.stderr == ""  # no progress noise when stderr is not a terminal


def test_violations_exit_5_and_reports(tmp_path):
    j, s, x, h = (str(tmp_path / n) for n in ("r.json", "r.sarif", "r.xml", "r.html"))
    r = run("check", M2, "--config", TRAINING, "--json", j, "--sarif", s, "--junit", x, "--html", h)
    assert r.returncode == 5, r.stderr
    assert "class: training (set in accel-drc.yaml" in r.stdout and "verdict: FAIL" in r.stdout
    doc = json.loads(Path(j).read_text(encoding="utf-8"))
    assert doc["summary"]["verdict"] == "fail" and doc["summary"]["unwaived_errors"] > 0
    assert json.loads(Path(s).read_text(encoding="utf-8"))["runs"][0]["results"]
    assert Path(x).read_text(encoding="utf-8").startswith("<?xml") and Path(h).read_text(
        encoding="utf-8"
    )


def test_class_flag_overrides_config_and_json_to_stdout():
    r = run("check", M2, "--config", TRAINING, "--class", "edge", "--json", "-")
    doc = json.loads(r.stdout)  # only JSON on stdout
    assert doc["classification"]["class"] == "edge" and doc["classification"]["source"] == "cli"
    assert r.returncode == (5 if doc["summary"]["unwaived_errors"] else 0)


def test_bad_inputs_exit_3_with_one_line(tmp_path):
    bad = tmp_path / "accel-drc.yaml"
    bad.write_text("class: edge\nsignals:\n  pcie9: ['x']\n")
    r = run("check", M2, "--config", str(bad))
    assert r.returncode == 3
    assert (
        r.stderr.strip()
        == f"accel-drc: {bad}:3: unknown signal type 'pcie9' (known: nvlink4, nvlink5, pcie1, pcie2, pcie3, pcie4, pcie5, pcie6, ddr5, lpddr5, usb3, usb3_gen1, usb3_gen2x2, usb4, eth25g, eth56g, eth112g, ddr3, ddr4, lpddr4x, lpddr4, hdmi14, hdmi20, hdmi21, mipi_dphy, mipi_cphy, dp12, dp14, dp20, sata3, eth10g, eth1g, usb2, qsgmii, eth1000baset, sdi3g, sdi12g, lvds)"
    )
    missing = run("check", str(tmp_path / "none.kicad_pcb"))
    assert (
        missing.returncode == 3
        and "cannot open" in missing.stderr
        and "Traceback" not in missing.stderr
    )
    junk = tmp_path / "junk.kicad_pcb"
    junk.write_text("hello")
    assert run("check", str(junk)).returncode == 3
    layer = tmp_path / "layer.yaml"
    layer.write_text("stackup:\n  foil:\n    In5.Cu: HVLP\n")
    r = run("check", M2, "--config", str(layer))
    assert r.returncode == 3 and f"{layer}:3: no copper layer 'In5.Cu'" in r.stderr


def test_unclosed_bracket_names_its_own_line(tmp_path):
    """Issue 16: an unclosed ``[`` on line 3 was reported on line 4 (where the parser reached
    the end of the file)."""
    bad = tmp_path / "accel-drc.yaml"
    bad.write_text("class: training\nreport:\n  dir: [accel-drc\n")
    r = run("check", M2, "--config", str(bad))
    assert r.returncode == 3
    assert r.stderr.startswith(f"accel-drc: {bad}:3: malformed YAML: "), r.stderr
    assert "gave up on line 4" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_usage_errors_exit_1():
    assert run("check", M2, "--class", "datacenter").returncode == 1
    assert run("check").returncode == 1
    assert run("rules", "--bogus").returncode == 1


def test_rules_command():
    r = run("rules", "--class", "training")
    assert r.returncode == 0
    assert "training.laminate_df.nvlink5  [laminate_df, error]  max_df=0.002" in r.stdout
    assert "why:" in r.stdout and "source:" in r.stdout
    j = json.loads(run("rules", "--json").stdout)
    assert {x["class"] for x in j["rules"]} == {"training", "inference", "edge"}
    assert all(x["why"] and x["source"] for x in j["rules"])


def test_config_beside_the_board_is_found(tmp_path):
    import shutil

    for f in FIXTURE_BOARDS["m2-oculink-adapter"].parent.iterdir():
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(TRAINING, tmp_path / "accel-drc.yaml")
    r = run("check", str(tmp_path / FIXTURE_BOARDS["m2-oculink-adapter"].name))
    assert r.returncode == 5 and "class: training" in r.stdout


def test_progress_only_on_a_terminal():
    import shutil

    if shutil.which("script") is None:
        import pytest

        pytest.skip("util-linux `script` (a pseudo-terminal) is not installed")
    cmd = " ".join([*EXE, "check", M2, "--quiet"])
    r = subprocess.run(
        ["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0
    assert "accel-drc: checking [0/" in r.stdout and "done" in r.stdout  # the pty merges stderr


def test_outputs_go_into_new_folders_and_bad_output_paths_exit_1(tmp_path):
    """`--html out/report.html` on a fresh checkout: the folder is created.  A path that is a
    folder, or under a file, is refused before the check runs (exit 1, one line)."""
    r = run("check", M2, "--json", "out/a/f.json", "--html", "out/b/r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (
        json.loads((tmp_path / "out/a/f.json").read_text(encoding="utf-8"))["findings"] is not None
    )
    assert (tmp_path / "out/b/r.html").read_text(encoding="utf-8").startswith("<!")
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for bad in (str(tmp_path), str(tmp_path / "afile" / "r.json")):
        r = run("check", M2, "--json", bad)
        assert r.returncode == 1, (bad, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert bad in r.stderr


def test_malloc_arenas_capped_only_for_big_boards(monkeypatch, tmp_path):
    """``_few_arenas`` calls glibc's mallopt(M_ARENA_MAX, 2) for a board of 8 MB or more, and
    nothing (no ctypes import) for a small one or a missing file."""
    import ctypes

    from accel_drc import cli

    calls: list[tuple[int, int]] = []

    class _Libc:
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: _Libc())
    monkeypatch.setattr(cli.sys, "platform", "linux")
    small = tmp_path / "small.kicad_pcb"
    small.write_bytes(b"(kicad_pcb)")
    cli._few_arenas(str(small))
    cli._few_arenas(str(tmp_path / "missing.kicad_pcb"))
    assert calls == []
    big = tmp_path / "big.kicad_pcb"
    with open(big, "wb") as fh:
        fh.truncate(cli.MANY_THREADS_BYTES)  # sparse: 8 MB on paper
    cli._few_arenas(str(big))
    assert calls == [(-8, 2)]
    monkeypatch.setattr(cli.sys, "platform", "win32")
    cli._few_arenas(str(big))
    assert calls == [(-8, 2)]


@pytest.mark.parametrize(
    ("env", "code", "want"),
    [
        ({}, "", "True 1"),  # ours: one BLAS thread
        ({"OPENBLAS_NUM_THREADS": "3"}, "", "False 3"),  # the user's choice stands
        ({"OMP_NUM_THREADS": "2"}, "", "False None"),
        ({}, "import numpy", "False None"),  # too late once numpy is loaded: not pretended
    ],
)
def test_one_blas_thread_only_in_a_fresh_process_without_a_user_choice(env, code, want):
    import os

    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    prog = (
        f"{code}\nimport os\nfrom accel_drc.concurrency import one_blas_thread\n"
        "print(one_blas_thread(), os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", prog], env={**clean, **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == want


def test_fail_on_cannot_verify_makes_not_verified_exit_5(tmp_path) -> None:
    """``--fail-on cannot-verify`` (issue 28 item 4): a team that wants NOT VERIFIED to fail the
    gate gets exit 5; without it NOT VERIFIED exits 0 as before, and a PASS stays 0 either way."""
    import subprocess
    import sys

    from conftest import FIXTURE_BOARDS

    board = str(FIXTURE_BOARDS["m2-oculink-adapter"])  # NOT VERIFIED with no config

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "accel_drc.cli", "check", board, "--quiet", *extra],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )

    plain = run("--json", str(tmp_path / "a.json"))
    assert plain.returncode == 0, plain.stderr
    import json

    assert json.loads((tmp_path / "a.json").read_text())["summary"]["verdict"] == "unverified"
    gated = run("--fail-on", "cannot-verify")
    assert gated.returncode == 5, gated.stderr
