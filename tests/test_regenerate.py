"""One command for every derived file (issue 26): ``python -m accel_drc.regenerate``.

The rule snapshot, the compiled dataclass methods, the compiled HTML template and the generated
section of ``docs/rules.md`` are made from other files and committed; each used to have its own
command and went stale by hand at merges.  Here: every one is current, and a stale one is found
and named with the one command that rebuilds it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from accel_drc import regenerate
from accel_drc.report import html_template

ROOT = Path(__file__).resolve().parent.parent


def test_every_derived_file_is_current() -> None:
    stale = regenerate.stale_files()
    assert not stale, (
        "stale derived files: " + ", ".join(map(str, stale)) + (f"; run `{regenerate.COMMAND}`")
    )


def test_every_derived_file_is_covered() -> None:
    """The snapshot, the template and the rules doc always; the dataclass table where this
    Python can read it (3.11: the version that wrote it)."""
    from accel_drc import bundled, dccode

    paths = {d.path for d in regenerate.derived_files()}
    want = {bundled.SNAPSHOT, html_template.TEMPLATE_MODULE, regenerate.RULES_DOC}
    if dccode.read_table() is not None:
        want.add(Path(dccode.TABLE))
    assert paths == want


def _stale_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A stale template module and a stale rules doc, in ``tmp_path``, in place of the real."""
    template = tmp_path / "_report_template.py"
    template.write_text("KEY = 'stale'\n", encoding="utf-8")
    doc = tmp_path / "rules.md"
    text = regenerate.RULES_DOC.read_text(encoding="utf-8")
    from accel_drc import docgen

    head, _, tail = text.partition(docgen.BEGIN)
    doc.write_text(f"{head}{docgen.BEGIN}\nstale\n{docgen.END}{tail.partition(docgen.END)[2]}")
    monkeypatch.setattr(html_template, "TEMPLATE_MODULE", template)
    monkeypatch.setattr(regenerate, "RULES_DOC", doc)
    return template, doc


def test_check_names_each_stale_file_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    template, doc = _stale_copies(tmp_path, monkeypatch)
    before = (template.read_bytes(), doc.read_bytes())
    assert regenerate.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"{template}: stale: run python -m accel_drc.regenerate" in err
    assert f"{doc}: stale: run python -m accel_drc.regenerate" in err
    assert (template.read_bytes(), doc.read_bytes()) == before  # --check writes nothing


def test_regenerate_rewrites_the_stale_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    template, doc = _stale_copies(tmp_path, monkeypatch)
    # only the copies: a test writes nothing into the package
    monkeypatch.setattr(
        regenerate, "derived_files", lambda: [regenerate._template(), regenerate._rules_doc()]
    )
    assert regenerate.main([]) == 0
    out = capsys.readouterr().out
    assert f"{template}: updated" in out and f"{doc}: updated" in out
    assert template.read_text(encoding="utf-8") == html_template.template_module_source()
    assert regenerate.stale_files() == []
    mtime = template.stat().st_mtime_ns
    assert regenerate.main([]) == 0
    assert f"{template}: up to date" in capsys.readouterr().out
    assert template.stat().st_mtime_ns == mtime  # a current file is left alone


def test_the_old_bundled_command_names_the_new_one() -> None:
    """``python -m accel_drc.bundled --write`` (the old spelling) fails with the new command's
    name, never silently doing nothing."""
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.bundled", "--write"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        "python -m accel_drc.bundled is now: python -m accel_drc.regenerate [--check]"
    )
