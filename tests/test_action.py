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
from _versions import copy_board, edit_board
from conftest import FIXTURE_BOARDS, ROOT
from hypothesis import HealthCheck, assume, given, settings
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
        ACCEL_DRC_PYTHON=sys.executable,
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
    # the roll-up over both boards first, then per board the same Markdown as `check
    # --markdown`, one after the other
    rollup, *heads = [line for line in summary.splitlines() if line.startswith("## ")]
    assert len(heads) == 2
    assert rollup.startswith("## ") and "accel-drc" in rollup and "2 boards" in rollup
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
    # KiCad itself no longer applies m2-oculink's stored unconnected-item exclusion (its marker
    # position lapsed, tests/test_kicad_drc.py): an open KiCad error, so the gate fails, and
    # the summary names the stale exclusion
    assert "**KiCad DRC** KiCad" in summary and out["exit-code"] == "5"
    assert "stale: `kicad.unconnected_items`" in summary


def test_action_yml_is_a_complete_composite_action() -> None:
    doc = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) == {
        "boards",
        "config",
        "class",
        "kicad-drc",
        "sarif",
        "html",
        "baseline",
        "fail-on",
    }
    assert all("description" in v for v in doc["inputs"].values())
    steps = doc["runs"]["steps"]
    for s in steps:  # composite run steps must name their shell
        if "run" in s:
            assert s.get("shell") == "bash", s
    text = json.dumps(steps)
    assert 'pip install -q \\"$GITHUB_ACTION_PATH\\"' in text  # this action's own version
    assert "action/run.sh" in text
    # upload-sarif v3 is deprecated (December 2026): v4; each run names its own category
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4", upload
    assert "category" not in upload["with"]  # it would be ignored: every run has its own
    assert "actions/upload-artifact@v4" in text
    assert steps[-1]["if"] == "always()" and 'exit \\"${RC:-2}\\"' in json.dumps(steps[-1])
    envs = next(s["env"] for s in steps if s.get("id") == "check")
    for var in (
        "ACCEL_DRC_BOARDS",
        "ACCEL_DRC_CONFIG",
        "ACCEL_DRC_CLASS",
        "ACCEL_DRC_KICAD_DRC",
        "ACCEL_DRC_PYTHON",
        "ACCEL_DRC_RUN_URL",
        "ACCEL_DRC_ARTIFACT",
        "ACCEL_DRC_BASELINE",
        "ACCEL_DRC_BASE_REF",
        "ACCEL_DRC_FAIL_ON",
    ):
        assert var in envs
    # every variable run.sh reads is one the step passes (or the runner sets)
    script = (ROOT / "action" / "run.sh").read_text(encoding="utf-8")
    assert set(re.findall(r"\$\{(ACCEL_DRC_[A-Z_]+)", script)) <= set(envs)
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
    r: subprocess.CompletedProcess[str], calls: list[tuple[str, dict[str, str]]]
) -> list[Command]:
    """The job log of a run over the boards of ``calls`` (:func:`_calls`, in the order checked)
    holds exactly the commands run.sh means to emit, in order: per board a group titled with
    its exact name, around accel-drc's output inside a stop-commands block with its own random
    token, then an ``error`` annotation naming the board when accel-drc exited with an error
    (not 0 or 5); then the findings' annotations (:func:`_assert_annotations`).  stderr holds
    none (GitHub reads it on its own, interleaved at random with stdout).  Returns the
    commands."""
    boards = [board for board, _ in calls]
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
        if i < len(cmds) and cmds[i][0] == "error" and cmds[i][1].get("title") == "accel-drc":
            assert cmds[i][1] == {"file": board, "title": "accel-drc"}
            assert cmds[i][2].startswith(f"{board}: accel-drc exited ")
            i += 1
    _assert_annotations(cmds[i:], calls)
    return cmds


#: the annotation levels, most serious first, per (status, severity) of a finding
_ANNOTATED = {
    ("violation", "error"): "error",
    ("violation", "warning"): "warning",
    ("cannot_verify", "error"): "warning",
    ("cannot_verify", "warning"): "notice",
}


def _assert_annotations(cmds: list[Command], calls: list[tuple[str, dict[str, str]]]) -> None:
    """``cmds`` are exactly the findings' annotations run.sh means to emit: per board (in the
    order checked) one command per unwaived error or warning of its JSON report, the first 50,
    most serious first, on the board's exact name (and the line of the finding's item when it
    has one), the finding's message as the data; then a notice when there were more."""
    i = 0
    for board, outputs in calls:
        report = Path(outputs["json"]) if "json" in outputs else None
        doc = json.loads(report.read_text(encoding="utf-8")) if report and report.exists() else {}
        wanted = [f for f in doc.get("findings", []) if (f["status"], f["severity"]) in _ANNOTATED]
        wanted.sort(key=lambda f: list(_ANNOTATED).index((f["status"], f["severity"])))
        for f in wanted[:50]:
            level, props, data = cmds[i]
            assert level == _ANNOTATED[(f["status"], f["severity"])], (cmds[i], f)
            assert props["file"] == board and props["title"].startswith(f"accel-drc {f['rule']}")
            assert set(props) <= {"file", "line", "title"}
            assert "line" not in props or (f["items"] and props["line"].isdigit()), props
            message = f["message"] + (" [cannot verify]" if f["status"] == "cannot_verify" else "")
            assert data == message or (data.endswith("…") and message.startswith(data[:-1]))
            i += 1
        if len(wanted) > 50:
            assert cmds[i][0] == "notice" and cmds[i][1]["file"] == board
            i += 1
    assert i == len(cmds), cmds[i:]


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


#: a backslash escape, or a run of backticks (a code span's fence: CommonMark 6.1)
_ESCAPE_OR_FENCE = re.compile(r"\\.|(`+)")


def _outside_code_spans(line: str) -> str:
    """One line with its code spans removed as CommonMark reads them: a run of n backticks not
    escaped opens a span that the next run of exactly n closes (```` `` a`b `` ```` is one
    span); a run with no closer is literal text."""
    out, pos, at = [], 0, 0
    while (m := _ESCAPE_OR_FENCE.search(line, at)) is not None:
        at = m.end()
        if m.group(1) is None:
            continue  # an escaped character: a backtick so escaped opens nothing
        n = len(m.group(1))
        close = re.compile(rf"(?<!`)`{{{n}}}(?!`)").search(line, m.end())
        if close is None:
            continue  # no closer: the backticks are text
        out.append(line[pos : m.start()])
        pos = at = close.end()
    out.append(line[pos:])
    return "".join(out)


def _summary_markup(summary: str) -> str:
    """The summary outside fenced code blocks and code spans (where ``<`` is literal text):
    what GitHub parses as Markdown and HTML."""
    lines, fence = [], ""
    for line in summary.split("\n"):
        m = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        lines.append(_outside_code_spans(line))
    return "\n".join(lines)


def test_summary_markup_model_reads_code_spans_as_commonmark() -> None:
    assert _summary_markup("a\n```yaml\n- <rail>\n```\nb <c>") == "a\nb <c>"
    assert _summary_markup("````\n```\n<x>\n````\nz") == "z"
    assert _outside_code_spans("a `<b>` c") == "a  c"
    assert _outside_code_spans("**Board** `` <U+202E>--`.kicad_pcb `` x") == "**Board**  x"
    assert _outside_code_spans("\\`<x> `y`") == "\\`<x> "  # an escaped backtick opens nothing
    assert _outside_code_spans("a ` <b>") == "a ` <b>"  # no closer: text


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
    calls = _calls(log)
    checked = [c[0] for c in calls]
    assert sorted(checked) == sorted(names)
    cmds = _assert_no_forged_command(r, calls)
    assert [c[1]["file"] for c in cmds if c[0] == "error" and c[1]["title"] == "accel-drc"] == [
        names[1]
    ]  # its exact name
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
    assume(any(not n.startswith(".") for n in names))  # else '*' matches none: a usage error
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
    _assert_no_forged_command(r, calls)
    assert snapshot(boards) == before  # no board touched, nothing written beside them
    run = Path(out["report-dir"])
    written = {str(run / f) for f in snapshot(run)}
    assert written == {f for _, outputs in calls for f in outputs.values()}
    assert not re.search(r"(?<!\\)<", _summary_markup(summary))


# ---------------------------------------------------------------------------------------------
# What the Action says in CI and on the pull request (#31 items 9 and 10)
# ---------------------------------------------------------------------------------------------

#: the SARIF 2.1.0 schema (OASIS, sarif-2.1/schema/sarif-schema-2.1.0.json of oasis-tcs/sarif-spec)
SARIF_SCHEMA = Path(__file__).with_name("schemas") / "sarif-schema-2.1.0.json"


def assert_valid_sarif(doc: dict) -> None:
    """``doc`` validates against the SARIF 2.1.0 schema (draft-04 JSON Schema)."""
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(doc)


def _upload_run_key(run: dict) -> str:
    """What code scanning tells runs apart by in one upload (codeql-action src/sarif/index.ts,
    createRunKey): the tool driver's names and versions and the run's category."""
    driver = run["tool"]["driver"]
    keys = ("name", "fullName", "version", "semanticVersion", "guid")
    return json.dumps([driver.get(k) for k in keys] + [run.get("automationDetails", {}).get("id")])


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(
        ["git", *args], cwd=str(cwd), env=env, check=True, capture_output=True, text=True
    ).stdout


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    return path


def _table(summary: str) -> list[dict[str, str]]:
    """The roll-up table's rows (the first table of the summary) as {column: cell}."""
    rows = [ln for ln in summary.split("\n\n", 2)[1].splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in rows]
    return [dict(zip(cells[0], row)) for row in cells[2:]]


def test_action_two_boards_of_one_class_upload_as_one_sarif(tmp_path: Path) -> None:
    # before: both runs had the category accel-drc/edge/, and code scanning refuses an upload
    # of two runs with one category ("multiple SARIF runs with the same category")
    repo = _repo(tmp_path / "repo")
    for d in ("hw/main", "hw/spare"):
        copy_board(repo / d)
    _, _, out = _run_action(tmp_path, "hw/*/M2.kicad_pcb", cwd=repo, ACCEL_DRC_CLASS="edge")
    assert out["exit-code"] == "5"
    # what upload-sarif reads from the report folder: every .sarif file in it, as one upload
    docs = [json.loads(f.read_text()) for f in sorted(Path(out["report-dir"]).rglob("*.sarif"))]
    runs = [run for doc in docs for run in doc["runs"]]
    assert [run["automationDetails"]["id"] for run in runs] == [
        "accel-drc/hw/main/M2.kicad_pcb/",
        "accel-drc/hw/spare/M2.kicad_pcb/",
    ]
    assert len({_upload_run_key(run) for run in runs}) == len(runs) == 2
    for doc in docs:
        assert_valid_sarif(doc)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in runs
        for res in run["results"]
        for loc in res["locations"]
    }
    assert uris == {"hw/main/M2.kicad_pcb", "hw/spare/M2.kicad_pcb"}


def test_sarif_category_is_the_board_not_its_class(tmp_path: Path) -> None:
    # before: accel-drc/edge/ then accel-drc/training/: a class that flips strands the alerts
    repo = _repo(tmp_path / "repo")
    board = copy_board(repo / "hw")
    ids = set()
    for cls in ("edge", "training"):
        sarif = tmp_path / f"{cls}.sarif"
        subprocess.run(
            [BIN, "check", "--class", cls, "--quiet", "--sarif", str(sarif), str(board)],
            cwd=str(repo / "hw"),  # run from a sub-folder: the category is still the repo's path
            timeout=600,
        )
        doc = json.loads(sarif.read_text(encoding="utf-8"))
        assert_valid_sarif(doc)
        ids.add(doc["runs"][0]["automationDetails"]["id"])
    assert ids == {"accel-drc/hw/M2.kicad_pcb/"}


def test_action_rollup_table_report_links_and_annotations(tmp_path: Path) -> None:
    # before: no roll-up (one section per board, nothing saying which board failed at a
    # glance), no annotation on the pull request, and a report link reading "123#artifacts"
    repo = _repo(tmp_path / "repo")
    copy_board(repo / "a")
    (repo / "b").mkdir()
    (repo / "b" / "broken.kicad_pcb").write_text("not a board", encoding="utf-8")
    url = "https://github.example/o/r/actions/runs/42"
    r, summary, out = _run_action(
        tmp_path,
        "a/*.kicad_pcb b/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_CLASS="edge",
        ACCEL_DRC_RUN_URL=url,
        ACCEL_DRC_ARTIFACT="accel-drc-report",
    )
    assert out["exit-code"] == "3" and out["verdict"] == "error"
    assert summary.startswith("## 💥 accel-drc: ERROR (2 boards, exit 3)")
    rows = _table(summary)
    report = Path(out["report-dir"])
    doc = json.loads((report / "1-M2" / "findings.json").read_text(encoding="utf-8"))
    findings = doc["findings"]

    def count(status: str, *sev: str) -> str:
        return str(sum(1 for f in findings if f["status"] == status and f["severity"] in sev))

    assert rows[0] == {
        "board": "a/M2.kicad\\_pcb",
        "verdict": "❌ FAIL",
        "errors": count("violation", "error"),
        "warnings": count("violation", "warning"),
        "cannot verify": count("cannot_verify", "error", "warning"),
        "report": f"[accel-drc-report]({url}#artifacts) › `1-M2/report.html`",
    }
    assert rows[1]["board"] == "b/broken.kicad\\_pcb" and rows[1]["verdict"] == "💥 error (exit 3)"
    assert rows[1]["report"] == "–"
    assert "123#artifacts" not in summary and "Full report:" not in summary
    # the annotations: one per unwaived error or warning, on the board file, at its item's line
    cmds = runner_commands(r.stdout)
    notes = [
        c for c in cmds if c[0] in ("error", "warning", "notice") and c[1]["title"] != "accel-drc"
    ]
    assert len(notes) == sum(
        1
        for f in findings
        if f["status"] in ("violation", "cannot_verify") and f["severity"] != "info"
    )
    lines = (repo / "a" / "M2.kicad_pcb").read_text(encoding="utf-8").splitlines()
    with_line = [c for c in notes if "line" in c[1]]
    assert with_line, notes  # the impedance findings sit on their track segments
    for level, props, data in notes:
        assert props["file"] == "a/M2.kicad_pcb"
        f = next(f for f in findings if data.startswith(f["message"]))
        assert level == ("error" if f["status"] == "violation" else "warning")
        if "line" in props:
            assert f["items"][0] in lines[int(props["line"]) - 1]
    # most serious first: the error violations before what could not be verified
    levels = [c[0] for c in notes]
    assert levels == sorted(levels, key=["error", "warning", "notice"].index)


def test_annotations_are_bounded_per_board(tmp_path: Path) -> None:
    from accel_drc.action_report import Board, annotations

    folder = tmp_path / "r"
    folder.mkdir()
    findings = [
        {
            "rule": f"r{i}",
            "status": "violation",
            "severity": ("warning", "error")[i % 2],
            "message": f"m{i} 100% :: x\nforged",
            "items": [],
        }
        for i in range(120)
    ]
    (folder / "findings.json").write_text(json.dumps({"findings": findings}), encoding="utf-8")
    got = runner_commands(
        "\n".join(annotations(Board.read("hw/a,b:c.kicad_pcb", str(folder), "5")))
    )
    assert len(got) == 51 and got[-1][0] == "notice" and "70 more" in got[-1][2]
    assert [c[0] for c in got[:50]] == ["error"] * 50  # the 60 errors come first
    assert all(c[1]["file"] == "hw/a,b:c.kicad_pcb" for c in got)
    assert got[0][2] == "m1 100% :: x\nforged"  # the text intact, and one command


def test_action_baseline_file_marks_new_findings_and_fails_only_on_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    board = copy_board(repo / "hw")
    old = tmp_path / "old.json"
    subprocess.run(
        [BIN, "check", "--class", "edge", "--quiet", "--json", str(old), str(board)], timeout=600
    )
    # the same board: its old errors do not fail the job with fail-on new ...
    _, summary, out = _run_action(
        tmp_path,
        "hw/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_CLASS="edge",
        ACCEL_DRC_BASELINE=str(old),
        ACCEL_DRC_FAIL_ON="new",
    )
    assert out["exit-code"] == "0" and out["verdict"] == "fail", summary
    assert _table(summary)[0]["new"] == "0" and _table(summary)[0]["fixed"] == "0"
    # ... the edited board's new copper-weight error does
    edit_board(board)
    r, summary, out = _run_action(
        tmp_path,
        "hw/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_CLASS="edge",
        ACCEL_DRC_BASELINE=str(old),
        ACCEL_DRC_FAIL_ON="new",
    )
    assert out["exit-code"] == "5"
    row = _table(summary)[0]
    assert row["new"] == "3" and row["fixed"] == "1"  # 1 new + 2 changed; 1 fixed
    assert "**Fixed since the baseline** in hw/M2.kicad\\_pcb (1):" in summary
    assert "`edge.material_consistency.kicad_default`" in summary
    titles = [c[1]["title"] for c in runner_commands(r.stdout) if c[0] == "error"]
    assert "accel-drc edge.drill_aspect_ratio (new)" in titles  # the one new violation
    # a baseline that does not exist: one clear error, no board checked
    r, _, out = _run_action(tmp_path, "hw/*.kicad_pcb", cwd=repo, ACCEL_DRC_BASELINE="nope.json")
    assert out["exit-code"] == "3" and "baseline: nope.json: no such file" in r.stdout
    r, _, out = _run_action(tmp_path, "hw/*.kicad_pcb", cwd=repo, ACCEL_DRC_FAIL_ON="new")
    assert out["exit-code"] == "1" and "fail-on: new needs a baseline" in r.stdout
    r, _, out = _run_action(tmp_path, "hw/*.kicad_pcb", cwd=repo, ACCEL_DRC_FAIL_ON="warning")
    assert out["exit-code"] == "1" and "'warning' is neither 'error' nor 'new'" in r.stdout


def test_action_without_its_python_still_gates_and_says_why(tmp_path: Path) -> None:
    # the roll-up and the annotations need accel_drc's Python; without it the gate still holds
    repo = _repo(tmp_path / "repo")
    copy_board(repo / "hw")
    r, summary, out = _run_action(
        tmp_path, "hw/*.kicad_pcb", cwd=repo, ACCEL_DRC_PYTHON=str(tmp_path / "no-python")
    )
    assert out["exit-code"] == "5" and out["verdict"] == "fail"
    assert summary.startswith("## accel-drc: 1 board(s), verdict fail, exit code 5")
    assert "## ❌ accel-drc: M2.kicad\\_pcb: FAIL" in summary  # the board's own summary
    warnings = [c[2] for c in runner_commands(r.stdout) if c[0] == "warning"]
    assert [w.split(":")[0] for w in warnings] == ["no roll-up", "no annotations"], warnings


def test_action_baseline_main_checks_the_base_branch_in_a_worktree(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    copy_board(repo / "hw")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "v1")
    _git(repo, "checkout", "-q", "-b", "change")
    edit_board(repo / "hw" / "M2.kicad_pcb")
    copy_board(repo / "new-board")  # not on main: every finding of it is new
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "v2")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    r, summary, out = _run_action(
        tmp_path,
        "hw/*.kicad_pcb new-board/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_CLASS="edge",
        ACCEL_DRC_BASELINE="main",
        ACCEL_DRC_FAIL_ON="new",
        TMPDIR=str(scratch),
        RUNNER_TEMP=None,
    )
    assert out["exit-code"] == "5", r.stdout
    rows = _table(summary)
    assert (rows[0]["new"], rows[0]["fixed"]) == ("3", "1")  # as against the file above
    second = json.loads((Path(out["report-dir"]) / "2-M2" / "findings.json").read_text())
    assert {f["baseline"] for f in second["findings"]} == {"new"}
    assert rows[1]["new"] == str(len(second["findings"])) and rows[1]["fixed"] == "0"
    # the worktree and the baselines are gone; the checkout is as it was
    assert list(scratch.iterdir()) == []
    assert _git(repo, "worktree", "list").count("\n") == 1
    assert _git(repo, "status", "--porcelain") == "" and "change" in _git(repo, "branch")
    # the base branch named by the pull request (github.base_ref) when there is one
    _, _, out = _run_action(
        tmp_path,
        "hw/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_CLASS="edge",
        ACCEL_DRC_BASELINE="main",
        ACCEL_DRC_FAIL_ON="new",
        ACCEL_DRC_BASE_REF="change",
    )
    assert out["exit-code"] == "0"  # against itself: nothing new
    r, _, out = _run_action(
        tmp_path,
        "hw/*.kicad_pcb",
        cwd=repo,
        ACCEL_DRC_BASELINE="main",
        ACCEL_DRC_BASE_REF="no-such-branch",
    )
    assert out["exit-code"] == "1" and "no branch 'no-such-branch'" in r.stdout
