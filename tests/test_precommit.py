"""The pre-commit hook (``accel-drc-hook``) and the staged file names it is given.

pre-commit runs ``entry + args + filenames``: a staged file is named by its committer and may look
like an option.  These tests give the hook such names as real files and check that every board
is checked (and the hook fails when one fails), that no name is read as an option, and that
nothing but the outputs named in the hook's args is written; once through pre-commit itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _names import TINY_BOARD, board_names, snapshot, write_boards
from accel_drc import __version__, precommit
from accel_drc.cli import build_parser
from accel_drc.report.writers import WRITERS
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, str]]]:
    """Record, for each check the hook runs, the board and the report outputs the CLI reads
    from the argv (parsed by the CLI's own parser), then run the check."""
    calls: list[tuple[str, dict[str, str]]] = []
    real = precommit.cli_main

    def spy(argv: list[str]) -> int:
        ns = build_parser().parse_args(argv)
        outputs = {k: getattr(ns, k) for k in WRITERS if getattr(ns, k, None)}
        calls.append((ns.board, outputs))
        return real(argv)

    monkeypatch.setattr(precommit, "cli_main", spy)
    return calls


def test_a_staged_name_that_looks_like_an_option_is_a_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: '--json=main.kicad_pcb' was taken for an option and wrote JSON over main.kicad_pcb
    monkeypatch.chdir(tmp_path)
    (tmp_path / "main.kicad_pcb").write_bytes(TINY_BOARD)  # in the work tree, not staged
    before = write_boards(tmp_path, ["a.kicad_pcb", "--json=main.kicad_pcb"])
    calls = _spy(monkeypatch)
    rc = precommit.main(["a.kicad_pcb", "--json=main.kicad_pcb"])
    assert rc == 5  # both fail (2 copper layers)
    assert calls == [("a.kicad_pcb", {}), ("--json=main.kicad_pcb", {})]
    assert snapshot(tmp_path) == before  # main.kicad_pcb untouched, nothing written


def test_a_failing_board_named_like_a_flag_fails_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: '-rev2.kicad_pcb' was skipped as an option and the hook passed (exit 0)
    monkeypatch.chdir(tmp_path)
    write_boards(tmp_path, ["-rev2.kicad_pcb"])
    calls = _spy(monkeypatch)
    assert precommit.main(["--class", "edge", "-rev2.kicad_pcb"]) == 5
    assert [c[0] for c in calls] == ["-rev2.kicad_pcb"]
    assert "-rev2.kicad_pcb (2 copper layers" in capsys.readouterr().out


def test_names_with_spaces_and_newlines_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    names = ["my board.kicad_pcb", "two\nlines.kicad_pcb", " lead -x.kicad_pcb"]
    write_boards(tmp_path, names)
    calls = _spy(monkeypatch)
    assert precommit.main(["--class", "edge", *names]) == 5
    assert [c[0] for c in calls] == names
    out = capsys.readouterr().out
    assert out.count("\nverdict: FAIL") == 3  # every failing board shows its summary
    assert "two\\nlines.kicad_pcb" in out  # the name's newline shown escaped, on one line


def test_a_board_named_like_a_pass_verdict_still_shows_it_is_not_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # NOT VERIFIED exits 0 but must be shown; before, the "verdict: PASS" in the board's *name*
    # (in the summary's first line) was taken for a clean pass and the summary hidden
    monkeypatch.chdir(tmp_path)
    write_boards(tmp_path, ["verdict: PASS.kicad_pcb"])
    (tmp_path / "cfg.yaml").write_text(
        "class: edge\nwaivers:\n  - rule: edge.layer_count\n    reason: a test board\n",
        encoding="utf-8",
    )
    assert precommit.main(["--config", "cfg.yaml", "verdict: PASS.kicad_pcb"]) == 0
    assert "\nverdict: NOT VERIFIED" in capsys.readouterr().out


def test_a_name_in_the_args_that_is_no_board_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_boards(tmp_path, ["a.kicad_pcb"])
    assert precommit.main(["ghost.kicad_pcb", "a.kicad_pcb"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'ghost.kicad_pcb' is not an existing .kicad_pcb file" in err


def test_an_option_whose_value_is_a_board_fails_without_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # args: [--html, a.kicad_pcb] with a.kicad_pcb a board: read as a board, so --html has no
    # value: a usage error (exit 1), never a report written over the board
    monkeypatch.chdir(tmp_path)
    before = write_boards(tmp_path, ["a.kicad_pcb", "b.kicad_pcb"])
    assert precommit.main(["--html", "a.kicad_pcb", "b.kicad_pcb"]) == 1
    assert snapshot(tmp_path) == before


_OPTION_SETS = st.sampled_from(
    [[], ["--class", "edge"], ["--json", "out.json"], ["--markdown=out.md", "--quiet"]]
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(names=st.lists(board_names, min_size=1, max_size=3, unique=True), options=_OPTION_SETS)
def test_fuzz_hook_checks_exactly_the_staged_boards(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], options: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("staged")
    before = write_boards(folder, names)
    calls: list[tuple[str, dict[str, str]]] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        calls = _spy(mp)
        rc = precommit.main([*options, *names])
    assert rc == 5  # the tiny board fails: every name's board was checked and failed the hook
    named = {v for v in ("out.json", "out.md") if any(v in o for o in options)}
    assert [c[0] for c in calls] == names
    assert all(set(c[1].values()) == named for c in calls)
    after = snapshot(folder)
    assert {k: after[k] for k in before} == before  # no board touched
    assert set(after) - set(before) == named  # nothing written but the named outputs


def _local_hook_config(folder: Path, args: list[str]) -> None:
    """A ``.pre-commit-config.yaml`` in ``folder`` running this checkout's hook as the manifest
    declares it (its files pattern, pass_filenames), the installed console script as the entry
    (``language: system``: no environment to build)."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = dict(hook, language="system", args=args)
    hook["entry"] = str(Path(sys.executable).with_name(hook["entry"]))
    config = {"repos": [{"repo": "local", "hooks": [hook]}]}
    (folder / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, timeout=60)


def test_through_pre_commit_itself(tmp_path: Path) -> None:
    """pre-commit (the test extra) on staged files with hostile names, in a scratch repository."""
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _local_hook_config(repo, ["--class", "edge"])
    (repo / "main.kicad_pcb").write_bytes(TINY_BOARD)  # never staged
    write_boards(repo, ["a.kicad_pcb", "--json=main.kicad_pcb", "-rev2.kicad_pcb"])
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), PRE_COMMIT_COLOR="never")

    def run(*staged: str) -> subprocess.CompletedProcess[str]:
        _git(repo, "reset", "-q")
        _git(repo, "add", "--", ".pre-commit-config.yaml", *staged)
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    r = run("a.kicad_pcb", "--json=main.kicad_pcb")
    assert r.returncode == 1, r.stdout + r.stderr  # the hook failed the commit
    assert f"accel-drc {__version__}: a.kicad_pcb (2 copper layers" in r.stdout
    assert "--json=main.kicad_pcb (2 copper layers" in r.stdout
    assert (repo / "main.kicad_pcb").read_bytes() == TINY_BOARD  # not overwritten with JSON
    r = run("-rev2.kicad_pcb")
    assert r.returncode == 1, r.stdout + r.stderr  # before: skipped, and the commit passed
    assert "-rev2.kicad_pcb (2 copper layers" in r.stdout
