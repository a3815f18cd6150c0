"""The GitHub Action (``action.yml`` + ``action/run.sh``) and the pre-commit hook.

The action's check step is run here as GitHub runs it: bash, the inputs as environment
variables, ``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT`` pointing at files; the summary and the
outputs it writes are asserted.  The pre-commit manifest is validated with pre-commit's own
manifest schema (``pre_commit.clientlib``), not a hand-written list of keys.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _names import board_names, snapshot, write_boards
from conftest import FIXTURE_BOARDS, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CORAL = FIXTURE_BOARDS["coral-tpu-m2-adapter"]
M2 = FIXTURE_BOARDS["m2-oculink-adapter"]
BIN = str(Path(sys.executable).with_name("accel-drc"))


def _run_action(
    tmp_path: Path, boards: str, cwd: Path | None = None, **env: str | None
) -> tuple[subprocess.CompletedProcess[str], str, dict[str, str]]:
    """Run ``action/run.sh`` as the Action's check step does; ``env`` adds or (None) removes
    variables.  Returns the process, the job summary it wrote and its outputs."""
    run_env = dict(
        os.environ,
        ACCEL_DRC_BOARDS=boards,
        ACCEL_DRC_BIN=BIN,
        ACCEL_DRC_OUT=str(tmp_path / "reports"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "step-summary.md"),
        GITHUB_OUTPUT=str(tmp_path / "github-output.txt"),
    )
    run_env.update(env)  # type: ignore[arg-type]
    run_env = {k: v for k, v in run_env.items() if v is not None}
    output = Path(run_env["GITHUB_OUTPUT"])
    output.unlink(missing_ok=True)  # GitHub gives each step new files
    if run_env.get("GITHUB_STEP_SUMMARY"):
        Path(run_env["GITHUB_STEP_SUMMARY"]).unlink(missing_ok=True)
    r = subprocess.run(
        ["bash", str(ROOT / "action" / "run.sh")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        env=run_env,
        cwd=str(cwd or tmp_path),
        timeout=600,
    )
    outputs = dict(
        line.split("=", 1)
        for line in output.read_text(encoding="utf-8").splitlines()
        if "=" in line
    )
    summary = Path(run_env.get("GITHUB_STEP_SUMMARY") or Path(outputs["report-dir"], "summary.md"))
    return r, summary.read_text(encoding="utf-8") if summary.exists() else "", outputs


def test_action_script_writes_summary_outputs_and_reports(tmp_path: Path) -> None:
    assert Path(BIN).is_file(), BIN
    boards = f"{CORAL.parent}/*.kicad_pcb {M2.parent}/*.kicad_pcb"
    r, summary, out = _run_action(tmp_path, boards)
    assert r.returncode == 0, r.stderr  # the action's last step fails the job, not this one
    # per board: the same Markdown as `check --markdown`, one after the other
    heads = [line for line in summary.splitlines() if line.startswith("## ")]
    assert len(heads) == 2
    assert "M2.kicad\\_pcb" in heads[0] and "antmicro-m2-oculink-adapter-hw.kicad\\_pcb" in heads[1]
    reports = Path(out["report-dir"])
    coral = json.loads((reports / "1-M2" / "findings.json").read_text())
    m2 = json.loads((reports / "2-antmicro-m2-oculink-adapter-hw" / "findings.json").read_text())
    words = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}
    assert heads[0].endswith(words[coral["summary"]["verdict"]])
    assert heads[1].endswith(words[m2["summary"]["verdict"]])
    # outputs: the worst exit code and verdict over the boards
    verdicts = {coral["summary"]["verdict"], m2["summary"]["verdict"]}
    expected = (
        "fail" if "fail" in verdicts else ("unverified" if "unverified" in verdicts else "pass")
    )
    assert out["verdict"] == expected
    assert out["exit-code"] == ("5" if expected == "fail" else "0")
    assert reports.parent == tmp_path / "reports"  # this run's own folder in it
    for d in ("1-M2", "2-antmicro-m2-oculink-adapter-hw"):
        for name in ("report.html", "findings.sarif", "junit.xml", "summary.md"):
            assert (reports / d / name).stat().st_size > 0
    assert "Worst findings" in summary


def test_action_script_with_no_board_fails_with_a_summary(tmp_path: Path) -> None:
    r, summary, out = _run_action(tmp_path, str(tmp_path / "nothing" / "*.kicad_pcb"))
    assert r.returncode == 0
    assert out["exit-code"] == "1" and out["verdict"] == "usage"
    assert "no board matches" in summary


def test_action_script_passes_class_and_config(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("waivers: []\n", encoding="utf-8")
    _, summary, out = _run_action(
        tmp_path, str(CORAL), ACCEL_DRC_CLASS="training", ACCEL_DRC_CONFIG=str(cfg)
    )
    assert "**Class** training (declared)" in summary
    assert out["exit-code"] == "5"  # a 2-layer board checked as training fails layer_count


def test_action_script_kicad_drc_input(tmp_path: Path) -> None:
    if shutil.which("kicad-cli") is None:
        _, summary, out = _run_action(tmp_path, str(M2), ACCEL_DRC_KICAD_DRC="true")
        assert out["exit-code"] == "1" and "before writing a summary" in summary
        return
    _, summary, out = _run_action(tmp_path, str(M2), ACCEL_DRC_KICAD_DRC="true")
    assert "**KiCad DRC** KiCad" in summary and out["exit-code"] == "0"


def test_action_yml_is_a_complete_composite_action() -> None:
    doc = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) == {"boards", "config", "class", "kicad-drc", "sarif", "html"}
    assert all("description" in v for v in doc["inputs"].values())
    steps = doc["runs"]["steps"]
    for s in steps:  # composite run steps must name their shell
        if "run" in s:
            assert s.get("shell") == "bash", s
    text = json.dumps(steps)
    assert 'pip install -q \\"$GITHUB_ACTION_PATH\\"' in text  # this action's own version
    assert "action/run.sh" in text
    assert "github/codeql-action/upload-sarif" in text and "actions/upload-artifact" in text
    assert steps[-1]["if"] == "always()" and 'exit \\"${RC:-2}\\"' in json.dumps(steps[-1])
    envs = next(s["env"] for s in steps if s.get("id") == "check")
    for var in ("ACCEL_DRC_BOARDS", "ACCEL_DRC_CONFIG", "ACCEL_DRC_CLASS", "ACCEL_DRC_KICAD_DRC"):
        assert var in envs
    assert set(doc["outputs"]) == {"exit-code", "verdict", "report-dir"}


def test_pre_commit_manifest_validates_with_pre_commit() -> None:
    manifest = ROOT / ".pre-commit-hooks.yaml"
    hooks = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    for hook in hooks:  # the keys pre-commit requires of a hook
        assert {"id", "name", "entry", "language"} <= set(hook)
    try:
        from pre_commit.clientlib import load_manifest
    except ImportError:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    (loaded,) = load_manifest(str(manifest))
    assert loaded["id"] == "accel-drc" and loaded["language"] == "python"
    import re

    assert re.search(loaded["files"], "hw/board.kicad_pcb")
    assert not re.search(loaded["files"], "hw/board.kicad_pcb.bak")
    # the entry is a console script this package installs
    assert Path(sys.executable).with_name(loaded["entry"]).is_file()


def test_pre_commit_hook_checks_each_board(tmp_path: Path) -> None:
    hook = str(Path(sys.executable).with_name("accel-drc-hook"))
    r = subprocess.run(
        [hook, "--class", "edge", str(CORAL), str(M2)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # the Coral adapter has violations as an edge board: exit 5, its summary printed
    assert r.returncode == 5, r.stderr
    assert "M2.kicad_pcb" in r.stdout and "verdict: FAIL" in r.stdout


# ---------------------------------------------------------------------------------------------
# Board file names are the committer's data: the job log, the summary, the reports (#30)
# ---------------------------------------------------------------------------------------------

#: the commands GitHub's runner acts on (actions/runner, src/Runner.Worker: ActionCommandManager
#: and its command extensions); names are compared case-insensitively
RUNNER_COMMANDS = frozenset(
    [
        "error",
        "warning",
        "notice",
        "debug",
        "group",
        "endgroup",
        "add-mask",
        "set-output",
        "save-state",
        "set-env",
        "add-path",
        "add-matcher",
        "remove-matcher",
        "echo",
        "stop-commands",
    ]
)

#: the runner's unescaping of a command's data and of its property values (ActionCommand.cs)
_DATA_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))
_LEGACY_ESCAPES = (("%3B", ";"), ("%0D", "\r"), ("%0A", "\n"), ("%5D", "]"), ("%25", "%"))

Command = tuple[str, dict[str, str], str]


def _unescape(text: str, table: tuple[tuple[str, str], ...]) -> str:
    for escaped, char in table:
        text = text.replace(escaped, char)
    return text


def _parse_command(line: str, registered: set[str]) -> Command | None:
    """The command in one log line as the runner parses it: ``::name props::data`` once leading
    white space is trimmed (TryParseV2), else ``##[name props]data`` anywhere in the line (the
    legacy TryParse the runner still falls back to); None when the line holds none."""
    text = line.lstrip()
    if text.startswith("::") and text.find("::", 2) > 0:
        end = text.find("::", 2)
        name, _, props = text[2:end].partition(" ")
        if name.lower() in registered:
            pairs = (p.split("=", 1) for p in props.strip().split(",") if p)
            properties = {k: _unescape(v, _PROPERTY_ESCAPES) for k, v in pairs if k and v}
            return name.lower(), properties, _unescape(text[end + 2 :], _DATA_ESCAPES)
    start = line.find("##[")
    close = line.find("]", start) if start >= 0 else -1
    if close > 0:
        name, _, props = line[start + 3 : close].partition(" ")
        if name.lower() in registered:
            pairs = (p.split("=", 1) for p in props.split(";") if p)
            properties = {k: _unescape(v, _LEGACY_ESCAPES) for k, v in pairs if k and v}
            return name.lower(), properties, _unescape(line[close + 1 :], _LEGACY_ESCAPES)
    return None


def runner_commands(log: str) -> list[Command]:
    """The workflow commands GitHub's runner would act on in one output stream, in order.

    Modelled on actions/runner: lines end at LF, CR or CRLF (.NET's ``ReadLine``); a command is
    parsed as :func:`_parse_command` does; after ``::stop-commands::TOKEN`` every command is
    ignored until ``::TOKEN::`` (both are listed, as ``stop-commands`` and ``resume``)."""
    found: list[Command] = []
    token: str | None = None
    for line in re.split(r"\r\n|\r|\n", log):
        if token is None:
            cmd = _parse_command(line, set(RUNNER_COMMANDS))
            if cmd is not None:
                found.append(cmd)
                if cmd[0] == "stop-commands":
                    token = cmd[2]
        else:
            cmd = _parse_command(line, {*RUNNER_COMMANDS, token.lower()})
            if cmd is not None and token and cmd[0] == token.lower():
                found.append(("resume", {}, token))
                token = None
    return found


def _assert_no_forged_command(
    r: subprocess.CompletedProcess[str], boards: list[str]
) -> list[Command]:
    """The job log of a run over ``boards`` (in the order checked) holds exactly the commands
    run.sh means to emit, in order: per board a group titled with its exact name, around
    accel-drc's output inside a stop-commands block with its own random token, then an
    ``error`` annotation naming the board when accel-drc exited with an error (not 0 or 5).
    stderr holds none (GitHub reads it on its own, interleaved at random with stdout).
    Returns the commands."""
    assert runner_commands(r.stderr) == []
    cmds = runner_commands(r.stdout)
    starts = [ln for ln in re.split(r"\r\n|\r|\n", r.stdout) if ln.lstrip().startswith("::")]
    assert len(starts) == len(cmds)  # no other line starts like one, even where they are stopped
    tokens = [c[2] for c in cmds if c[0] == "stop-commands"]
    assert len(set(tokens)) == len(tokens) == len(boards)
    assert all(re.fullmatch(r"accel-drc-[0-9a-f]{32}", t) for t in tokens), tokens
    i = 0
    for board, token in zip(boards, tokens):
        assert cmds[i : i + 4] == [
            ("group", {}, f"accel-drc {board}"),
            ("stop-commands", {}, token),
            ("resume", {}, token),
            ("endgroup", {}, ""),
        ]
        i += 4
        if i < len(cmds) and cmds[i][0] == "error":
            assert cmds[i][1] == {"file": board, "title": "accel-drc"}
            assert cmds[i][2].startswith(f"{board}: accel-drc exited ")
            i += 1
    assert i == len(cmds), cmds[i:]
    return cmds


def test_runner_model_finds_what_the_runner_acts_on() -> None:
    """The model the tests above rely on: the forms actions/runner accepts, and stop-commands."""
    log = (
        "plain line\n  ::error file=a%3Ab%2Cc,title=t::x%0Ay\rfoo ##[warning]legacy\n"
        "::unknown::x\n::stop-commands::T1\n::error::ignored\n##[error]ignored\n"
        "::t1::\n::GROUP::g%25"
    )
    assert runner_commands(log) == [
        ("error", {"file": "a:b,c", "title": "t"}, "x\ny"),
        ("warning", {}, "legacy"),
        ("stop-commands", {}, "T1"),
        ("resume", {}, "T1"),
        ("group", {}, "g%"),
    ]


def _recording_bin(tmp_path: Path) -> tuple[str, Path]:
    """An accel-drc that appends its argv (JSON, one line per call) to a log, then runs the real
    one: which boards the Action checked, and with which outputs."""
    log = tmp_path / "calls.jsonl"
    script = tmp_path / "accel-drc-recording"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(log)!r}, 'a', encoding='utf-8') as fh:\n"
        "    fh.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"os.execv({BIN!r}, [{BIN!r}, *sys.argv[1:]])\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return str(script), log


def _calls(log: Path) -> list[tuple[str, dict[str, str]]]:
    """(board, {output flag: file}) per recorded call, as accel-drc's own parser reads them."""
    from accel_drc.cli import build_parser
    from accel_drc.report.writers import WRITERS

    calls = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        ns = build_parser().parse_args(json.loads(line))
        calls.append((ns.board, {k: getattr(ns, k) for k in WRITERS if getattr(ns, k, None)}))
    return calls


def _summary_markup(summary: str) -> str:
    """The summary outside code spans (where ``<`` is literal text): what GitHub parses."""
    return re.sub(r"`[^`\n]*`", "", summary)


def test_action_checks_a_board_named_like_an_option(tmp_path: Path) -> None:
    # before: 'check -rev2.kicad_pcb' read the name as an option: exit 1, the board unchecked
    boards = tmp_path / "b"
    boards.mkdir()
    write_boards(boards, ["-rev2.kicad_pcb"])
    r, summary, out = _run_action(tmp_path, "*.kicad_pcb", cwd=boards)
    assert out["exit-code"] == "5" and out["verdict"] == "fail", r.stdout + r.stderr
    assert "-rev2.kicad\\_pcb: FAIL" in summary


def test_action_log_and_summary_forge_nothing_from_a_name(tmp_path: Path) -> None:
    # before: the name's newline put ::stop-commands:: and a forged ::error:: into the job log,
    # and <img> and <!-- into the job summary (the board that fails to read: the summary that
    # run.sh writes itself)
    boards = tmp_path / "b"
    boards.mkdir()
    evil = "x\n::stop-commands::pwn\n::error file=a.c::forged <img src=x onerror=alert(1)><!--"
    names = [f"{evil}.kicad_pcb", f"unread {evil}.kicad_pcb"]
    write_boards(boards, names[:1])
    (boards / names[1]).write_text("not a board", encoding="utf-8")
    bin_, log = _recording_bin(tmp_path)
    r, summary, out = _run_action(tmp_path, "*.kicad_pcb", cwd=boards, ACCEL_DRC_BIN=bin_)
    checked = [c[0] for c in _calls(log)]
    assert sorted(checked) == sorted(names)
    cmds = _assert_no_forged_command(r, checked)
    assert [c[1]["file"] for c in cmds if c[0] == "error"] == [names[1]]  # its exact name
    assert out["exit-code"] == "3"  # the unreadable board: an input error
    markup = _summary_markup(summary)
    assert not re.search(r"(?<!\\)<", markup), summary  # every < is text
    assert "\\<img src=x onerror=alert(1)\\>\\<\\!--" in markup
    assert "x ::stop-commands::pwn ::error file=a.c::forged" in markup  # one line


def test_action_summary_shows_bidi_controls_instead_of_obeying_them(tmp_path: Path) -> None:
    # before: U+202E in a name reached the job summary raw and displayed the name reversed
    # ("main\u202egnp.kicad_pcb" reads as "mainbcp_dacik.png")
    boards = tmp_path / "b"
    boards.mkdir()
    name = "main\u202egnp\u2066.kicad_pcb"
    write_boards(boards, [name])
    (boards / f"unread {name}").write_text("not a board", encoding="utf-8")  # run.sh's own line
    r, summary, out = _run_action(tmp_path, "*.kicad_pcb", cwd=boards)
    assert out["exit-code"] == "3", r.stdout + r.stderr
    assert "unread main\\<U+202E\\>gnp" in summary, summary
    for ch in ("\u202e", "\u2066"):
        assert ch not in summary
    assert "main\\<U+202E\\>gnp\\<U+2066\\>.kicad\\_pcb" in summary, summary


def test_action_shows_only_this_runs_reports(tmp_path: Path) -> None:
    # before: the second run's board failed to read, and the first run's summary.md in the
    # reused report folder was shown (and uploaded) as this run's
    boards = tmp_path / "b"
    boards.mkdir()
    write_boards(boards, ["main.kicad_pcb"])
    for summary_file in (str(tmp_path / "summary-1.md"), None):  # GitHub's, then run.sh's own
        _, first, out1 = _run_action(
            tmp_path, "*.kicad_pcb", cwd=boards, GITHUB_STEP_SUMMARY=summary_file
        )
        assert "main.kicad\\_pcb: FAIL" in first and out1["exit-code"] == "5"
        (boards / "main.kicad_pcb").write_text("now broken", encoding="utf-8")
        _, second, out2 = _run_action(
            tmp_path, "*.kicad_pcb", cwd=boards, GITHUB_STEP_SUMMARY=summary_file
        )
        assert out2["exit-code"] == "3" and out2["verdict"] == "error"
        assert "exited 3 before writing a summary" in second and "FAIL" not in second, second
        assert out2["report-dir"] != out1["report-dir"]
        left = snapshot(Path(out2["report-dir"]))
        assert set(left) <= {"summary.md"}  # no report of the first run's
        write_boards(boards, ["main.kicad_pcb"])


def test_action_report_folders_are_names_upload_artifact_accepts(tmp_path: Path) -> None:
    # actions/upload-artifact refuses a path holding " : < > | * ? CR or LF: a board named so
    # must not make the reports unuploadable
    boards = tmp_path / "b"
    boards.mkdir()
    write_boards(boards, ['a:b<c>|d*e?"f\r\ng.kicad_pcb'])
    _, _, out = _run_action(tmp_path, "*.kicad_pcb", cwd=boards)
    files = snapshot(Path(out["report-dir"]))
    assert files and all(re.fullmatch(r"[A-Za-z0-9._/-]+", f) for f in files), files


@pytest.mark.slow  # about 2 s per example: bash and accel-drc per board
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(names=st.lists(board_names, min_size=1, max_size=3, unique=True))
def test_fuzz_action_file_names(tmp_path_factory: pytest.TempPathFactory, names: list[str]) -> None:
    """Generated names (leading dashes, '=', newlines, '%', '::', '##[', spaces, Markdown, HTML,
    unicode, U+202E): the boards the glob selects are each checked once, nothing is written but
    the run's reports, and the job log holds no command run.sh did not mean to emit."""
    tmp = tmp_path_factory.mktemp("action")
    boards = tmp / "b"
    boards.mkdir()
    before = write_boards(boards, names)
    bin_, log = _recording_bin(tmp)
    r, summary, out = _run_action(tmp, "*.kicad_pcb", cwd=boards, ACCEL_DRC_BIN=bin_)
    calls = _calls(log)
    checked = [c[0] for c in calls]
    # bash's '*' skips names with a leading dot, as in any shell
    assert sorted(checked) == sorted(n for n in names if not n.startswith("."))
    assert out["exit-code"] == "5", r.stdout + r.stderr  # each board read and failed
    _assert_no_forged_command(r, checked)
    assert snapshot(boards) == before  # no board touched, nothing written beside them
    run = Path(out["report-dir"])
    written = {str(run / f) for f in snapshot(run)}
    assert written == {f for _, outputs in calls for f in outputs.values()}
    assert not re.search(r"(?<!\\)<", _summary_markup(summary))
