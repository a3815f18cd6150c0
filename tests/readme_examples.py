"""The README's example runs, kept equal to what this tree prints.

Each block in README.md that follows a ``<!-- example-output: NAME -->`` comment is the text
summary of a real ``accel-drc check`` run (:data:`EXAMPLES` says which board, run from which
folder, so the paths printed are the ones shown).  ``tests/test_readme_examples.py`` runs the
commands and compares line by line; a README line may shorten its real line with ``[…]``
(any text: the start of a long line and ``[…]``, or a cut in its middle), nothing else.

    python tests/readme_examples.py            # compare; prints a diff, exit 1 on drift
    python tests/readme_examples.py --write    # rewrite the blocks from real runs

``--write`` keeps each README line that still matches its real line (a hand-made cut stays)
and writes every other one afresh, cut at :data:`WIDTH` characters.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: a real line longer than this is cut at a word boundary and ends in " […]"
WIDTH = 170
CUT = "[…]"
MARK = re.compile(r"<!-- example-output: (\S+) -->\n```text\n(.*?)```", re.S)


@dataclass(frozen=True)
class Example:
    """One example run: ``accel-drc ARGS`` in ``cwd`` (its candidates, the first that holds
    ``args[1]`` is used)."""

    args: tuple[str, ...]
    cwd: tuple[Path, ...]

    def folder(self) -> Path | None:
        """The first candidate folder holding the board, or None (the board is not here)."""
        for c in self.cwd:
            if (c / self.args[1]).is_file():
                return c
        return None

    def command(self) -> str:
        return "$ " + " ".join(shlex.quote(a) for a in ("accel-drc", *self.args))


EXAMPLES = {
    "m2-oculink": Example(
        ("check", "fixtures/boards/m2-oculink-adapter/antmicro-m2-oculink-adapter-hw.kicad_pcb"),
        (ROOT,),
    ),
    # the benchmark board, not bundled: ../shared/boards, or Debian's kicad-demos (the same file)
    "vme-wren": Example(
        ("check", "vme-wren.kicad_pcb"),
        (ROOT.parent / "shared/boards/vme-wren", Path("/usr/share/kicad/demos/vme-wren")),
    ),
}


class ExampleError(Exception):
    """The README's example blocks cannot be compared (a marker names no known example)."""


def run(example: Example) -> list[str]:
    """The command line and the lines ``accel-drc`` prints on stdout for ``example`` (the
    progress line goes to stderr, and only on a terminal)."""
    folder = example.folder()
    if folder is None:
        raise ExampleError(f"board not found: {example.args[1]} in {example.cwd}")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "engine"))
    r = subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *example.args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode not in (0, 5):
        raise ExampleError(f"{example.command()} exited {r.returncode}: {r.stderr.strip()}")
    return [example.command(), *r.stdout.rstrip("\n").split("\n")]


def matches(shown: str, real: str) -> bool:
    """Whether a README line stands for the real line: equal, or equal where it has ``[…]``
    standing for any text."""
    if CUT not in shown:
        return shown == real
    pattern = ".*?".join(re.escape(part) for part in shown.split(CUT))
    return re.fullmatch(pattern, real, re.S) is not None


def abridge(line: str) -> str:
    """A real line as the README shows it: whole up to :data:`WIDTH` characters, else cut at
    the last space before it and ended with ``[…]``."""
    if len(line) <= WIDTH:
        return line
    cut = line.rfind(" ", 0, WIDTH - len(CUT) - 1)
    return line[: cut if cut > 0 else WIDTH - len(CUT) - 1] + " " + CUT


def merge(shown: list[str], real: list[str]) -> list[str]:
    """The block ``--write`` writes: a shown line kept where it matches the real line at its
    place (same number of lines), every other line abridged afresh."""
    if len(shown) != len(real):
        return [abridge(r) for r in real]
    return [s if matches(s, r) else abridge(r) for s, r in zip(shown, real)]


def blocks(text: str) -> list[tuple[str, list[str], tuple[int, int]]]:
    """(name, shown lines, span of the block's body in ``text``) of every example block."""
    out = []
    for m in MARK.finditer(text):
        name = m.group(1)
        if name not in EXAMPLES:
            raise ExampleError(f"README.md: example-output {name!r} is none of {list(EXAMPLES)}")
        out.append((name, m.group(2).rstrip("\n").split("\n"), m.span(2)))
    return out


def drift(name: str, shown: list[str], real: list[str]) -> str:
    """A unified diff from the README's block to what ``--write`` would put there, or "" when
    every line matches."""
    if len(shown) == len(real) and all(matches(s, r) for s, r in zip(shown, real)):
        return ""
    new = merge(shown, real)
    diff = difflib.unified_diff(
        shown, new, f"README.md ({name}, shown)", f"{name} (as run now)", lineterm=""
    )
    return "\n".join(diff)


def write(text: str, results: dict[str, list[str]]) -> str:
    """``text`` with every example block replaced by its merged real output."""
    for name, shown, (start, end) in reversed(blocks(text)):
        body = "\n".join(merge(shown, results[name])) + "\n"
        text = text[:start] + body + text[end:]
    return text


def main(argv: list[str]) -> int:
    """Compare the README's example blocks with real runs (``--write``: rewrite them)."""
    text = README.read_text(encoding="utf-8")
    found = blocks(text)
    results = {name: run(EXAMPLES[name]) for name, _s, _span in found}
    if "--write" in argv:
        new = write(text, results)
        if new != text:
            README.write_text(new, encoding="utf-8")
            print("README.md: example outputs rewritten")
        else:
            print("README.md: example outputs already current")
        return 0
    diffs = [d for d in (drift(n, s, results[n]) for n, s, _span in found) if d]
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
