"""Issue #31 item 15: the README's example outputs are what this tree prints.

The README showed a vme-wren run that no longer matched the tool after a round of judgement
changes (its PCIe impedance FAIL had become conditional).  Each example block is now compared,
line by line, with a real run; on drift the test fails with the diff and the command that
rewrites the blocks (``python tests/readme_examples.py --write``)."""

from __future__ import annotations

import pytest
import readme_examples as rx
from conftest import need

README_TEXT = rx.README.read_text(encoding="utf-8")


def test_the_readme_shows_both_example_runs() -> None:
    names = [name for name, _shown, _span in rx.blocks(README_TEXT)]
    assert sorted(names) == ["m2-oculink", "vme-wren"], names


def _compare(name: str) -> None:
    example = rx.EXAMPLES[name]
    shown = next(s for n, s, _span in rx.blocks(README_TEXT) if n == name)
    diff = rx.drift(name, shown, rx.run(example))
    assert not diff, (
        f"README.md's {name} example is not what accel-drc prints now; "
        f"rewrite it with `python tests/readme_examples.py --write`:\n{diff}"
    )


def test_bundled_board_example_is_a_real_run() -> None:
    _compare("m2-oculink")


@pytest.mark.slow
def test_vme_wren_example_is_a_real_run() -> None:
    need(rx.EXAMPLES["vme-wren"].folder() is not None, "vme-wren is not beside the repository")
    _compare("vme-wren")


def test_a_changed_number_is_drift() -> None:
    """The comparison is not vacuous: one digit changed in a shown line, a line missing, or a
    line added are each reported, and ``[…]`` stands only for the text it replaces."""
    real = ["$ accel-drc check b.kicad_pcb", "rules: 114 run, 455 items checked", "verdict: PASS"]
    assert rx.drift("x", list(real), real) == ""
    assert "455" in rx.drift("x", [real[0], "rules: 114 run, 456 items checked", real[2]], real)
    assert rx.drift("x", real[:2], real)
    assert rx.drift("x", [*real, "extra"], real)
    assert rx.matches("rules: 114 run, […]", real[1])
    assert rx.matches("rules: […] items checked", real[1])
    assert not rx.matches("rules: […] items skipped", real[1])


def test_write_keeps_a_hand_made_cut_and_replaces_a_stale_line() -> None:
    long = "worst: " + " ".join(f"word{i}" for i in range(60))
    real = ["$ cmd", long, "verdict: NOT VERIFIED"]
    shown = ["$ cmd", "worst: word0 […] word59", "verdict: FAIL"]
    merged = rx.merge(shown, real)
    assert merged[1] == "worst: word0 […] word59"
    assert merged[2] == "verdict: NOT VERIFIED"
    fresh = rx.abridge(long)
    assert len(fresh) <= rx.WIDTH and fresh.endswith(" […]") and rx.matches(fresh, long)


def test_an_unknown_example_name_is_refused() -> None:
    with pytest.raises(rx.ExampleError, match="no-such"):
        rx.blocks("<!-- example-output: no-such -->\n```text\n$ x\n```\n")
