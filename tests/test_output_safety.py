"""Issue #30, what accel-drc writes and prints: each test is one way a hostile name or a
careless environment got through the writers and printers (items 7, 11, 12, 14, 16, 17, 19, 20).

* ``kicad package`` writes like the reports: a private temporary file renamed over ``OUT.zip``
  (no planted ``.partial`` symlink written through, two runs at once leave one whole zip, a
  read-only zip is refused);
* every name ``inspect`` prints, and every name in the check summary and the Markdown, is shown
  escaped: a newline cannot forge a ``verdict: PASS`` line, a right-to-left override cannot
  reorder one, and in Markdown an ``@mention``, ``#123`` or URL links nothing;
* SARIF's ``artifactLocation.uri`` is percent-encoded;
* ``rules --write``, ``kicad install`` and the reports fail in one line on a file or disk
  that cannot take them, and SIGTERM/SIGHUP during a write leave no temporary file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import unquote

import pytest
from accel_drc.cli import main
from accel_drc.docgen import BEGIN, END
from accel_drc.report.markdown import code, esc
from conftest import FIXTURES

K = FIXTURES / "kicad_versions"
BOARD_TEXT = (K / "kicad9.kicad_pcb").read_text(encoding="utf-8")
PRO_TEXT = (K / "kicad9.kicad_pro").read_text(encoding="utf-8")
#: a name that, printed raw, ends its line and prints a verdict of its own, hidden text after it
FORGED = "x\nverdict: PASS\x1b[8m"
#: a right-to-left override: "LIAF" reads "FAIL"
RLO = "\u202e"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``accel-drc ARGS`` in this process: (exit code, stdout, stderr)."""
    code_ = main(list(args))
    out, err = capsys.readouterr()
    return code_, out, err


def one_line(err: str) -> str:
    """The stderr of a refused run: one ``accel-drc:`` line, no traceback."""
    lines = [ln for ln in err.splitlines() if ln and ": warning: " not in ln]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def board(tmp_path: Path, text: str = BOARD_TEXT, pro: str = PRO_TEXT, name: str = "b") -> Path:
    path = tmp_path / f"{name}.kicad_pcb"
    path.write_text(text, encoding="utf-8")
    (tmp_path / f"{name}.kicad_pro").write_text(pro, encoding="utf-8")
    return path


def hidden_files(folder: Path) -> list[str]:
    """Temporary files a writer left (``.NAME.XXXX.tmp``) or the old fixed ``.partial``."""
    return sorted(
        p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".partial"
    )


# ---------------------------------------------------------------------------------------------
# 7. kicad package writes through a private temporary file
# ---------------------------------------------------------------------------------------------


def test_package_never_writes_through_a_planted_partial_symlink(tmp_path: Path) -> None:
    from accel_drc.kicad_package import build

    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "pkg.zip"
    (tmp_path / "pkg.zip.partial").symlink_to(victim)
    build(out)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert zipfile.ZipFile(out).testzip() is None
    assert (tmp_path / "pkg.zip.partial").is_symlink()  # not ours: left as it was
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_package_refuses_a_read_only_zip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pkg.zip"
    out.write_bytes(b"the release the user froze")
    out.chmod(0o444)
    code_, _, err = run(capsys, "kicad", "package", str(out))
    assert code_ == 1
    line = one_line(err)
    assert f"{out}: cannot write" in line and "read-only" in line
    assert out.read_bytes() == b"the release the user froze"
    assert hidden_files(tmp_path) == []


def test_two_package_runs_at_once_leave_one_whole_zip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run A is held in the middle of its zip while run B writes the same OUT.zip from start to
    end, then A finishes: with one fixed ``OUT.zip.partial`` B truncated the file A was writing
    and A's rename failed (the issue also saw both exit 0 and a corrupt zip)."""
    from accel_drc.kicad_package import build

    paused, resume = threading.Event(), threading.Event()
    written = {"A": 0}
    real = zipfile.ZipFile.writestr

    def writestr(self: zipfile.ZipFile, *args: object, **kw: object) -> None:
        if threading.current_thread().name == "A":
            written["A"] += 1
            if written["A"] == 20:
                paused.set()
                resume.wait(120)
        real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    out = tmp_path / "pkg.zip"
    failed: list[BaseException] = []

    def run_a() -> None:
        try:
            build(out)
        except BaseException as exc:  # reported by the assertion below
            failed.append(exc)

    a = threading.Thread(target=run_a, name="A")
    a.start()
    try:
        assert paused.wait(120), "run A never reached its zip"
        build(out)  # run B, whole
    finally:
        resume.set()
        a.join(120)
    assert failed == []
    with zipfile.ZipFile(out) as zf:
        assert zf.testzip() is None
        assert "metadata.json" in zf.namelist()
    assert hidden_files(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# 11, 19. inspect and the check summary print names escaped
# ---------------------------------------------------------------------------------------------


def test_inspect_text_escapes_every_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = BOARD_TEXT.replace('"GND")', f'"{FORGED}")').replace(
        '(material "FR4")', f'(material "FR4{FORGED}")'
    )
    pro = PRO_TEXT.replace('"HS"', json.dumps(f"HS{RLO}{FORGED}"))
    b = board(tmp_path, text, pro)
    code_, out, err = run(capsys, "inspect", str(b))
    assert code_ == 0, err
    assert [ln for ln in out.splitlines() if "verdict" in ln and not ln.startswith(" ")] == []
    assert "\x1b" not in out and RLO not in out
    assert "x\\nverdict: PASS\\x1b[8m" in out  # the user name, the material
    assert out.count("\\nverdict: PASS") >= 3  # ... and the net class
    assert "HS<U+202E>x" in out


def test_check_summary_escapes_bidi_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = board(tmp_path, BOARD_TEXT.replace('"/SIG1"', f'"/EVIL{RLO}LIAF"'))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("signals:\n  pcie5: ['/EVIL.*']\n", encoding="utf-8")
    md = tmp_path / "s.md"
    code_, out, err = run(capsys, "check", str(b), "--config", str(cfg), "--markdown", str(md))
    assert code_ in (0, 5), err
    assert "/EVIL<U+202E>LIAF" in out and RLO not in out
    text = md.read_text(encoding="utf-8")
    assert "/EVIL<U+202E>LIAF" in text and RLO not in text


def test_rules_text_wraps_into_lines_not_escaped_newlines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The wrapped ``why:`` and ``source:`` were escaped as a whole, their wrapping included:
    ``rules`` printed a literal ``\\n`` where each line should end."""
    code_, out, _ = run(capsys, "rules", "--class", "edge")
    assert code_ == 0
    assert "\\n" not in out
    lines = out.splitlines()
    why = next(i for i, ln in enumerate(lines) if ln.startswith("    why: "))
    assert lines[why + 1].startswith("         ") and len(lines[why]) <= 100


# ---------------------------------------------------------------------------------------------
# 12, 19. Markdown: nothing in a name links, mentions, or hides
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, shown",
    [
        ("@octocat", "@&#8203;octocat"),  # a mention would notify the user
        ("ping @org/team now", "ping @&#8203;org/team now"),
        ("user@example.com", "user@&#8203;example.com"),
        ("closes #123", "closes #&#8203;123"),  # an issue reference (and "closes" it)
        ("see GH-42", "see GH-&#8203;42"),
        ("http://evil.example/x", "http:&#8203;//evil.example/x"),  # autolinks
        ("HTTPS://evil.example", "HTTPS:&#8203;//evil.example"),
        ("www.evil.example", "www&#8203;.evil.example"),
        ("&#64;octocat", "\\&#&#8203;64;octocat"),  # an entity is text, not a hidden "@"
        ("a<b>c", "a\\<b\\>c"),
        ("a|b", "a\\|b"),
        ("a`b", "a\\`b"),
        ("x\x1b[8my\x00", "x\\\\x1b\\[8my\\\\x00"),  # renders as x\x1b[8my\x00
        (f"a{RLO}b\u2066c\u200e", "a\\<U+202E\\>b\\<U+2066\\>c\\<U+200E\\>"),
        ("a\nb\tc", "a b c"),  # one table row stays one row
    ],
)
def test_markdown_text_links_and_hides_nothing(name: str, shown: str) -> None:
    assert esc(name) == shown


def test_markdown_code_span_keeps_backticks_and_escapes_controls() -> None:
    assert code("net`|x") == "`` net`\\|x ``"
    assert code("a``b") == "``` a``b ```"
    assert code("plain") == "`plain`"
    assert code(f"n{RLO}\x1b\x00") == "`n<U+202E>\\x1b\\x00`"


# ---------------------------------------------------------------------------------------------
# 14. SARIF: the board's URI is percent-encoded
# ---------------------------------------------------------------------------------------------


def test_sarif_uri_is_percent_encoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "hw rev#2"
    folder.mkdir()
    b = board(folder, name="main 100%")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.sarif"
    code_, _, err = run(capsys, "check", str(b), "--sarif", str(out), "--quiet")
    assert code_ in (0, 5), err
    doc = json.loads(out.read_text(encoding="utf-8"))
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in doc["runs"][0]["results"]
        for loc in r["locations"]
    }
    assert uris == {"hw%20rev%232/main%20100%25.kicad_pcb"}
    assert (tmp_path / unquote(uris.pop())).samefile(b)


# ---------------------------------------------------------------------------------------------
# 16. rules --write: one line and exit 1 on a file it cannot write
# ---------------------------------------------------------------------------------------------

SECTION = f"# Rules\n\n{BEGIN}\nold\n{END}\n"


def test_rules_write_refuses_a_non_utf8_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "rules.md"
    doc.write_bytes(b"# R\xe9gles\n" + SECTION.encode())
    code_, _, err = run(capsys, "rules", "--format", "markdown", "--write", str(doc))
    assert code_ == 1
    line = one_line(err)
    assert f"{doc}: cannot write: it is not UTF-8 text (byte 0xe9 at offset 3)" in line
    assert doc.read_bytes() == b"# R\xe9gles\n" + SECTION.encode()


def test_rules_write_refuses_a_read_only_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "rules.md"
    doc.write_text(SECTION, encoding="utf-8")
    doc.chmod(0o444)
    code_, _, err = run(capsys, "rules", "--format", "markdown", "--write", str(doc))
    assert code_ == 1
    assert f"{doc}: cannot write: Permission denied" in one_line(err)
    assert doc.read_text(encoding="utf-8") == SECTION
    assert hidden_files(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_rules_write_refuses_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    code_, _, err = run(capsys, "rules", "--format", "markdown", "--write", "/dev/full")
    assert code_ == 1
    assert "/dev/full: cannot write" in one_line(err)


def _small_disk() -> None:
    """In the child: a 4 KiB file-size limit stands in for a full disk (a write past it fails
    with EFBIG instead of ENOSPC, through the same code path)."""
    import resource  # POSIX

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")
def test_rules_write_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "rules.md"
    doc.write_text(SECTION, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", "rules", "--format", "markdown"]
        + ["--write", str(doc)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_small_disk,
    )
    assert r.returncode == 1, r.stderr
    assert f"{doc}: cannot write: File too large" in one_line(r.stderr)
    assert doc.read_text(encoding="utf-8") == SECTION
    assert hidden_files(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# 17. SIGTERM / SIGHUP while a report is written
# ---------------------------------------------------------------------------------------------

#: a real check in a child process whose rename of the JSON report waits (the temporary file is
#: whole and in place) until the test has sent its signal
_HELD_WRITE = """
import os, signal, sys, time
from accel_drc import cli
# the default disposition, whatever the test runner inherited (nohup ignores SIGHUP, and an
# ignored signal rightly stays ignored during a write)
for name in ("SIGTERM", "SIGHUP"):
    signal.signal(getattr(signal, name), signal.SIG_DFL)
real = os.replace
def held(src, dst):
    if os.path.basename(src).startswith(".r.json."):
        open(sys.argv[1], "w").close()
        time.sleep(120)
    return real(src, dst)
os.replace = held
sys.argv[0] = "accel-drc"
cli.main(["check", sys.argv[2], "--json", sys.argv[3], "--sarif", sys.argv[4], "--quiet"])
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM/SIGHUP to a child are POSIX")
@pytest.mark.parametrize("signum", [getattr(signal, n, 0) for n in ("SIGTERM", "SIGHUP")])
def test_signal_during_a_write_leaves_no_temporary_file(tmp_path: Path, signum: int) -> None:
    b = board(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.json").write_text("OLD\n", encoding="utf-8")
    mark = tmp_path / "writing"
    p = subprocess.Popen(
        [sys.executable, "-c", _HELD_WRITE, str(mark), str(b), str(out / "r.json")]
        + [str(out / "r.sarif")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not mark.exists():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the report was never written"
            time.sleep(0.02)
        assert [n for n in hidden_files(out) if n.startswith(".r.json.")]  # the write is on
        p.send_signal(signum)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signum, err
    assert "Traceback" not in err and signal.Signals(signum).name in err
    assert hidden_files(out) == []
    assert (out / "r.json").read_text(encoding="utf-8") == "OLD\n"  # the old report, whole
    assert sorted(p.name for p in out.iterdir()) == ["r.json"]  # SARIF (next) never started


# ---------------------------------------------------------------------------------------------
# 20. kicad install on a full disk: one line
# ---------------------------------------------------------------------------------------------


def test_install_on_a_full_disk_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(src: str, dst: str, **kw: object) -> str:
        raise OSError(28, os.strerror(28), dst)

    monkeypatch.setattr(shutil, "copyfile", no_space)
    code_, out, err = run(capsys, "kicad", "install", "--dest", str(tmp_path))
    assert code_ == 3
    line = one_line(err)
    assert line.startswith(f"accel-drc: {tmp_path}: cannot install: No space left on device (and ")
    assert line.endswith(" more files)") and len(line) < 200
    assert list(tmp_path.iterdir()) == []  # the staging folder is gone
