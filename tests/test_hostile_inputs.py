"""Issue 30: bounds on what accel-drc reads.  Every file it reads from a user's project (board,
``.kicad_pro``, config, rule packs, IPC-2581) is a regular file of bounded size; the
``.kicad_pro``'s net-class patterns, an IPC-2581 zip's unpacked size, tag count and markup length,
and the config's ``rules.packs`` list are bounded too; ``--kicad-drc`` matches exclusions in linear
time and never hands kicad-cli a board name it could read as an option.

Tests that guard against a hang or a memory blow-up run the command in a subprocess with a
time-out and a memory limit: the bound is there so that the old behaviour (minutes, gigabytes)
fails instead of hanging the suite, not to measure speed."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from accel_drc import hostile, kicad_drc
from accel_drc.cli import main
from accel_drc.config import load_config
from accel_drc.errors import InputError
from accel_drc.kicad_drc import Exclusion, apply_exclusions
from accel_drc.packs import load_library
from accel_drc.readers import ipc2581, ipc2581_input, read_board
from accel_drc.readers.kicad_project import read_project
from accel_drc.results import Finding, Severity, Status
from conftest import FIXTURE_BOARDS, FIXTURES

K = FIXTURES / "kicad_versions"
IPC = FIXTURES / "ipc2581" / "hand_revB_inch.xml"
BOARD_TEXT = (K / "kicad9.kicad_pcb").read_text(encoding="utf-8")
PRO_TEXT = (K / "kicad9.kicad_pro").read_text(encoding="utf-8")
HAS_FIFO = hasattr(os, "mkfifo")


def board(tmp_path: Path, pro: str | None = PRO_TEXT, name: str = "b") -> Path:
    """The KiCad 9 fixture board (and its ``.kicad_pro`` unless None) in ``tmp_path``."""
    path = tmp_path / f"{name}.kicad_pcb"
    path.write_text(BOARD_TEXT, encoding="utf-8")
    if pro is not None:
        (tmp_path / f"{name}.kicad_pro").write_text(pro, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``accel-drc ARGS`` in this process: (exit code, the one stderr line that is no warning)."""
    code = main(list(args))
    _, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln and ": warning: " not in ln]
    assert "Traceback" not in err
    return code, lines[0] if len(lines) == 1 else err


def cli(*args: str, timeout: float = 60, memory: int = 2 << 30) -> subprocess.CompletedProcess[str]:
    """``accel-drc ARGS`` in a fresh interpreter limited to ``memory`` bytes of address space
    (where the OS allows it); running past ``timeout`` (the old behaviour) fails the test."""
    code = (
        "import sys\n"
        "try:\n"
        "    import resource\n"
        f"    resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
        "except (ImportError, ValueError, OSError):\n"
        "    pass\n"
        "from accel_drc.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"accel-drc {' '.join(args)} did not finish within {timeout} s")


# ---------------------------------------------------------------------------------------------
# 3. only regular files are read: a device, a FIFO or stdin is refused at once
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_kicad_pro_linked_to_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    """It used to be read until memory ran out (3.7 GB, MemoryError, exit 2)."""
    b = board(tmp_path, pro=None)
    (tmp_path / "b.kicad_pro").symlink_to("/dev/zero")
    r = cli("check", str(b))
    assert r.returncode == 3, r.stderr
    assert f"{tmp_path / 'b.kicad_pro'}: not a regular file" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="needs /dev/stdin")
def test_kicad_pro_linked_to_stdin_does_not_wait_for_it(tmp_path: Path) -> None:
    """It used to hang for as long as stdin (here a pipe nobody writes to) stayed open."""
    b = board(tmp_path, pro=None)
    (tmp_path / "b.kicad_pro").symlink_to("/dev/stdin")
    proc = subprocess.Popen(
        [sys.executable, "-m", "accel_drc.cli", "check", str(b)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("accel-drc waited for stdin")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else ""
    assert code == 3, err
    assert "b.kicad_pro: not a regular file" in err


@pytest.mark.skipif(not HAS_FIFO, reason="needs FIFOs")
@pytest.mark.parametrize(
    "which", ["board", "kicad_pro", "ipc2581", "config", "config beside", "rule pack"]
)
def test_a_fifo_is_refused_wherever_a_file_is_read(tmp_path: Path, which: str) -> None:
    """A FIFO with no writer used to block ``open`` forever (board, IPC-2581), or be called
    missing (config, rule pack)."""
    b = board(tmp_path)
    args = ["check", str(b)]
    if which == "board":
        b.unlink()
        fifo = b
    elif which == "kicad_pro":
        fifo = b.with_suffix(".kicad_pro")
        fifo.unlink()
    elif which == "ipc2581":
        fifo = tmp_path / "b.xml"
        args = ["check", str(fifo)]
    elif which == "config":
        fifo = tmp_path / "c.yaml"
        args += ["--config", str(fifo)]
    elif which == "config beside":  # was passed over in silence
        fifo = tmp_path / "accel-drc.yaml"
    else:
        fifo = tmp_path / "pack.yaml"
        (tmp_path / "accel-drc.yaml").write_text("rules:\n  packs: [pack.yaml]\n")
    os.mkfifo(fifo)
    r = cli(*args, timeout=60)
    assert r.returncode == 3, r.stderr
    assert f"{fifo}: not a regular file" in r.stderr, r.stderr


def test_kicad_pro_over_the_size_bound_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(PRO_TEXT)
    doc["text_variables"] = {f"V{i}": "x" * 100 for i in range(45_000)}  # 5 MB of valid JSON
    b = board(tmp_path, pro=json.dumps(doc))
    code, line = run(capsys, "check", str(b))
    assert code == 3, line
    size = b.with_suffix(".kicad_pro").stat().st_size
    assert line == f"accel-drc: {b.with_suffix('.kicad_pro')}: {size:,} bytes, over the 4 MiB limit"


@pytest.mark.skipif(sys.platform == "win32", reason="sparse files and RLIMIT_AS")
def test_board_over_the_size_bound_is_refused_before_reading(tmp_path: Path) -> None:
    """A sparse 2 GiB + 1 board used to be read whole (2 GiB of zeros, then its index)."""
    b = tmp_path / "huge.kicad_pcb"
    with open(b, "wb") as fh:
        fh.write(b"(kicad_pcb (version 20240108)\n")
        fh.truncate(hostile.MAX_BOARD_BYTES + 1)
    r = cli("check", str(b))
    assert r.returncode == 3, r.stderr
    assert f"{b}: {hostile.MAX_BOARD_BYTES + 1:,} bytes, over the 2 GiB limit" in r.stderr


def test_real_project_files_are_far_below_the_bound() -> None:
    """The biggest real .kicad_pro (vme-wren's, 40 KB, among the KiCad demos where installed)
    is a hundredth of the bound."""
    demos = Path("/usr/share/kicad/demos")
    pros = [*FIXTURES.glob("boards/*/*.kicad_pro"), *demos.glob("*/*.kicad_pro")]
    biggest = max(p.stat().st_size for p in pros)
    assert biggest * 100 < hostile.MAX_PROJECT_BYTES
    for p in FIXTURES.glob("boards/*/*.kicad_pro"):
        read_project(str(p))


# ---------------------------------------------------------------------------------------------
# 6. net-class patterns: bounded number and length, so compiling them stays fast
# ---------------------------------------------------------------------------------------------


def _pro_with_patterns(patterns: Iterable[str]) -> str:
    doc = json.loads(PRO_TEXT)
    doc.setdefault("net_settings", {})["netclass_patterns"] = [
        {"netclass": "Default", "pattern": p} for p in patterns
    ]
    return json.dumps(doc, indent=2)


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        (
            ["/ok*"] * 5 + ["*a" * 150 + "b"],
            "a net-class pattern of 301 characters, over the limit of 256",
        ),
        ([f"N{i}*" for i in range(5000)], "5,000 net-class patterns, over the limit of 4,096"),
        (
            [f"{i:04d}" + "*x?" * 80 for i in range(300)],
            "net-class patterns of 73,200 characters in all, over the limit of 65,536",
        ),
    ],
    ids=["long", "many", "total"],
)
def test_net_class_patterns_past_the_bounds_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], patterns: list[str], message: str
) -> None:
    """1.6 MB of long patterns took 32 s and 866 MB to compile; now refused before compiling."""
    b = board(tmp_path, pro=_pro_with_patterns(patterns))
    code, line = run(capsys, "check", str(b))
    assert code == 3, line
    assert line.startswith(f"accel-drc: {b.with_suffix('.kicad_pro')}"), line
    assert line.endswith(message), line
    if "301" in message:  # the long one is named by its line in the file
        text = b.with_suffix(".kicad_pro").read_text(encoding="utf-8")
        want = text[: text.index("*a*a*a")].count("\n") + 1
        assert f".kicad_pro:{want}: " in line, line


def test_patterns_within_the_bounds_still_classify(tmp_path: Path) -> None:
    pats = ["*a" * 128] + [f"/BUS{i}_*" for i in range(hostile.MAX_NET_PATTERNS - 1)]
    path = tmp_path / "p.kicad_pro"
    path.write_text(_pro_with_patterns(pats), encoding="utf-8")
    rules = read_project(str(path)).net_classes
    assert len(rules.patterns) == hostile.MAX_NET_PATTERNS
    assert rules.class_of("/BUS7_D0") == "Default"


# ---------------------------------------------------------------------------------------------
# 5. IPC-2581: zip bombs, a huge tag, too many elements
# ---------------------------------------------------------------------------------------------

HEAD = b'<?xml version="1.0"?>\n<IPC-2581 revision="C" xmlns="http://webstds.ipc.org/2581">\n'


def _zip(path: Path, parts: Iterable[bytes]) -> Path:
    """A zip of one deflated document written from ``parts`` (never whole in memory)."""
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("b.xml", "w", force_zip64=True) as fh,
    ):
        for part in parts:
            fh.write(part)
    return path


def _huge_attribute(mib: int) -> Iterator[bytes]:
    yield HEAD + b'<Content a="'
    for _ in range(mib):
        yield b"x" * (1 << 20)
    yield b'"/></IPC-2581>'


def _empty_elements(n: int) -> Iterator[bytes]:
    yield HEAD
    block = b"<a/>" * 250_000
    for _ in range(n // 250_000):
        yield block
    yield b"</IPC-2581>"


@pytest.mark.parametrize(
    "bomb",
    [
        pytest.param(lambda: _huge_attribute(255), id="255MiB-attribute"),  # 37 s, 817 MB before
        pytest.param(lambda: _empty_elements(50_000_000), id="50M-empty-elements"),  # > 45 s
    ],
)
def test_zip_bomb_is_refused_at_once(tmp_path: Path, bomb: Any) -> None:
    path = _zip(tmp_path / "bomb.zip", bomb())
    assert path.stat().st_size < 300_000
    r = cli("check", str(path), timeout=30)
    assert r.returncode == 3, r.stderr
    assert "over the limit of 100 times its compressed size" in r.stderr, r.stderr


def test_real_exports_unzip_well_within_the_ratio(tmp_path: Path) -> None:
    """The hand-written fixtures, deflated, still read (a small member's ratio is not held
    against it: KiCad's real exports compress 10-18 times)."""
    for src in (IPC, FIXTURES / "ipc2581" / "hand_revC_micron.xml"):
        path = _zip(tmp_path / f"{src.stem}.zip", [src.read_bytes()])
        assert read_board(str(path)).layer_count >= 4
    assert hostile.unzip_limit(1000) == 1 << 20
    assert hostile.unzip_limit(10 << 20) == 1000 << 20
    assert hostile.unzip_limit(1 << 40) == hostile.MAX_XML_BYTES


@pytest.mark.parametrize(
    "markup",
    [b'<Content a="' + b"x" * (3 << 20) + b'"/>', b"<!-- " + b"a>b<" * (1 << 20) + b" -->"],
    ids=["attribute", "comment"],
)
def test_markup_over_the_token_bound_is_refused_at_its_line(markup: bytes) -> None:
    """Expat 2.5 rescans an unfinished tag from its start on every chunk: quadratic."""
    doc = HEAD + b"\n\n" + markup + b"</IPC-2581>"
    with pytest.raises(
        InputError, match=r"XML markup of more than [\d,]+ bytes .* 1 MiB limit"
    ) as ei:
        ipc2581.read_bytes(doc, "b.xml")
    assert ei.value.line == 5


def test_markup_below_the_token_bound_is_read() -> None:
    x = IPC.read_bytes()
    at = x.index(b"<IPC-2581")
    at = x.index(b">", at) + 1
    doc = x[:at] + b'<Note text="' + b"y" * (900 << 10) + b'"/>' + x[at:]
    assert ipc2581.read_bytes(doc, "b.xml").layer_count == 4


def test_too_many_tags_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count is of ``<`` per chunk (vectorised): vme-wren's 99.8 MB export has 1.65 M."""
    monkeypatch.setattr(ipc2581_input, "MAX_XML_TAGS", 10_000)
    doc = HEAD + b"<a/>" * 20_000 + b"</IPC-2581>"
    with pytest.raises(InputError, match=r"more than 10,000 tags, over the limit"):
        ipc2581.read_bytes(doc, "b.xml")
    monkeypatch.setattr(ipc2581_input, "MAX_XML_TAGS", 40_000)
    with pytest.raises(InputError, match="no copper layers"):  # read to the end: no board in it
        ipc2581.read_bytes(doc, "b.xml")


# ---------------------------------------------------------------------------------------------
# 9. rules.packs: each pack once, and not too many
# ---------------------------------------------------------------------------------------------

PACK = textwrap.dedent(
    """\
    pack: ours
    version: "3"
    applies_to: [edge]
    rules:
      - check: tg
        id: ours.tg_strict
        severity: warning
        params: {min_tg_c: 150}
        why: our customer wants mid-Tg FR-4 at least
        source: customer spec ABC-12
    """
)


@pytest.fixture(scope="module")
def lib() -> Any:
    return load_library()


@pytest.mark.parametrize("second", ["ours.yaml", "./sub/../ours.yaml", "link.yaml", "ABS"])
def test_a_pack_listed_twice_is_refused_with_its_line(
    tmp_path: Path, lib: Any, second: str
) -> None:
    """One 1 MiB pack listed 40 times took 44 s and added its rules 40 times."""
    (tmp_path / "ours.yaml").write_text(PACK)
    (tmp_path / "sub").mkdir()
    try:
        (tmp_path / "link.yaml").symlink_to(tmp_path / "ours.yaml")
    except OSError:  # Windows without the symlink privilege
        if second == "link.yaml":
            pytest.skip("no symlinks here")
    second = str(tmp_path / "ours.yaml") if second == "ABS" else second
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text(f"rules:\n  packs:\n    - ours.yaml\n    - other.yaml\n    - {second}\n")
    (tmp_path / "other.yaml").write_text(PACK.replace("ours", "other"))
    with pytest.raises(InputError) as ei:
        load_config(str(cfg), None, lib)
    assert str(ei.value) == f"{cfg}:5: rule pack {second} is listed twice (first on line 3)"


def test_more_packs_than_the_bound_are_refused(tmp_path: Path, lib: Any) -> None:
    names = []
    for i in range(hostile.MAX_RULE_PACKS + 1):
        (tmp_path / f"p{i}.yaml").write_text(PACK.replace("ours", f"p{i}"))
        names.append(f"p{i}.yaml")
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("rules:\n  packs: [" + ", ".join(names) + "]\n")
    with pytest.raises(InputError) as ei:
        load_config(str(cfg), None, lib)
    assert str(ei.value) == f"{cfg}:2: 17 rule packs, over the limit of 16"
    cfg.write_text("rules:\n  packs: [" + ", ".join(names[:-1]) + "]\n")
    assert len(load_config(str(cfg), None, lib).extra_packs) == hostile.MAX_RULE_PACKS


def test_rule_packs_over_the_total_size_are_refused_before_loading(
    tmp_path: Path, lib: Any
) -> None:
    """16 distinct 1 MiB packs took 16-18 s to load: their total is bounded before any is read."""
    big = "# " + "x" * 1000 + "\n"
    names = []
    for i in range(3):
        (tmp_path / f"p{i}.yaml").write_text(PACK.replace("ours", f"p{i}") + big * 1000)
        names.append(f"p{i}.yaml")
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("rules:\n  packs:\n" + "".join(f"    - {n}\n" for n in names))
    with pytest.raises(InputError) as ei:
        load_config(str(cfg), None, lib)
    assert str(ei.value).startswith(f"{cfg}:5: the rule packs listed up to p2.yaml hold "), ei.value
    assert str(ei.value).endswith("over the limit of 2 MiB together"), ei.value
    cfg.write_text("rules:\n  packs: [p0.yaml]\n")
    assert len(load_config(str(cfg), None, lib).extra_packs) == 1


# ---------------------------------------------------------------------------------------------
# 13. --kicad-drc exclusions: indexed, linear, and the same answer as before
# ---------------------------------------------------------------------------------------------


def _nearest(f: Finding, pos: tuple[float, float] | None) -> float:
    if pos is None:
        return 0.0
    pts = [i.get("pos") for i in f.evidence.get("items", ())]
    d = [math.hypot(p[0] - pos[0], p[1] - pos[1]) for p in pts if p]
    return min(d) if d else 0.0


def _old_matches(found: Sequence[Finding], exclusions: Sequence[Exclusion]) -> list[int | None]:
    """Which finding each exclusion waived, by the matching as it was before the index
    (a scan of every finding per exclusion): the reference the indexed one must equal."""
    by_key: dict[tuple[str, frozenset[str]], list[int]] = {}
    for k, f in enumerate(found):
        by_key.setdefault((f.evidence.get("kicad_type", ""), frozenset(f.items)), []).append(k)
    taken: set[int] = set()
    out: list[int | None] = []
    for e in exclusions:
        cands = [k for k in by_key.get((e.key, e.uuids), []) if k not in taken]
        if not cands and e.uuids:
            cands = [
                k
                for (kind, ids), ks in by_key.items()
                if kind == e.key and e.uuids <= ids
                for k in ks
                if k not in taken
            ]
        if cands:
            k = min(cands, key=lambda k: _nearest(found[k], e.pos_mm))
            taken.add(k)
            out.append(k)
        else:
            out.append(None)
    return out


def _outcome(
    exclusions: Sequence[Exclusion], matched: Sequence[int | None]
) -> tuple[list[bool], list[tuple[str, int]]]:
    """Each exclusion applied or not, and the (exclusion string, finding) pairs waived:
    exclusions with one string are interchangeable, so only the pairs are compared."""
    pairs = sorted((e.serialized, k) for e, k in zip(exclusions, matched) if k is not None)
    return [k is not None for k in matched], pairs


def _new_matches(
    found: Sequence[Finding], exclusions: Sequence[Exclusion]
) -> tuple[list[bool], list[tuple[str, int]]]:
    """:func:`_outcome` of :func:`apply_exclusions` (the indexed matching)."""
    out, rows = apply_exclusions(found, exclusions)
    pairs = sorted(
        (f.evidence["kicad_exclusion"], k)
        for k, f in enumerate(out)
        if f.evidence.get("kicad_exclusion")
    )
    return [r["state"] == "applied" for r in rows], pairs


def _finding(kind: str, uuids: Sequence[str], pos: Sequence[tuple[float, float]]) -> Finding:
    return Finding(
        rule=f"kicad.{kind}",
        check="kicad_drc",
        severity=Severity.ERROR,
        status=Status.VIOLATION,
        message=kind,
        unit="",
        items=tuple(uuids),
        evidence={
            "kicad_type": kind,
            "items": [{"uuid": u, "pos": p} for u, p in zip(uuids, pos)],
        },
    )


def _synthetic(seed: int, n: int) -> tuple[list[Finding], list[Exclusion]]:
    """Findings and exclusions that exercise every path: exact matches, several findings on
    one type and item set (nearest wins), layer-keyed entries naming only the main item,
    stale entries, entries without items or position, duplicates."""
    rnd = random.Random(seed)
    uuids = [f"{i:08x}-0000-0000-0000-000000000000" for i in range(max(4, n // 3))]
    kinds = ["clearance", "copper_sliver", "courtyards_overlap", "unconnected_items"]
    found = []
    for _ in range(n):
        items = rnd.sample(uuids, rnd.choice((1, 2, 2, 3)))
        pos = [(rnd.randrange(50), rnd.randrange(50)) for _ in items]
        found.append(_finding(rnd.choice(kinds), items, pos))
    exclusions = []
    for _ in range(n):
        f = rnd.choice(found)
        kind = f.evidence["kicad_type"] if rnd.random() < 0.8 else rnd.choice(kinds)
        items = list(f.items)
        r = rnd.random()
        if r < 0.3:
            items = items[:1]  # the main item only
        elif r < 0.4:
            items = [rnd.choice(uuids)]  # often stale
        elif r < 0.45:
            items = []
        x, y = rnd.randrange(50), rnd.randrange(50)
        serial = "|".join([kind, str(x * 1_000_000), str(y * 1_000_000), *items])
        if rnd.random() < 0.1:
            serial = "|".join([kind, "?", "?", *items])  # no position
        exclusions.append(Exclusion.parse(serial))
    return found, exclusions


@pytest.mark.parametrize("seed", range(30))
def test_indexed_exclusions_match_as_before(seed: int) -> None:
    found, exclusions = _synthetic(seed, 60)
    old = _old_matches(found, exclusions)
    assert _new_matches(found, exclusions) == _outcome(exclusions, old)
    assert 0 < sum(k is not None for k in old) < len(old)  # both outcomes occur


class _CountingKey(str):
    """An exclusion key that counts how often it is compared with a finding's type."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountingKey.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_exclusion_matching_is_linear() -> None:
    """2,000 stale exclusions against 2,000 findings of their type: the old scan compared each
    exclusion with every finding (4 million comparisons; 20,000 x 20,000 took 24 s)."""
    n = 2000
    found = [_finding("clearance", [f"a{i}", f"b{i}"], [(i, 0), (i, 1)]) for i in range(n)]
    stale = [
        replace(Exclusion.parse(f"clearance|0|0|gone{i}|b{i}"), key=_CountingKey("clearance"))
        for i in range(n)
    ]
    layer_keyed = [
        replace(Exclusion.parse(f"clearance|0|0|a{i}"), key=_CountingKey("clearance"))
        for i in range(n)
    ]
    _CountingKey.compared = 0
    out, rows = apply_exclusions(found, stale + layer_keyed)
    assert [r["state"] for r in rows] == ["stale"] * n + ["applied"] * n
    assert sum(f.status == Status.WAIVED for f in out) == n
    assert _CountingKey.compared < 20 * n, _CountingKey.compared


@pytest.mark.slow
def test_twenty_thousand_exclusions_take_seconds_not_minutes() -> None:
    """The issue's case, with a bound ten times what the indexed matching takes."""
    import time

    n = 20_000
    found = [_finding("clearance", [f"a{i}", f"b{i}"], [(i, 0), (i, 1)]) for i in range(n)]
    excl = [Exclusion.parse(f"clearance|0|0|gone{i}|b{i}") for i in range(n)]
    start = time.process_time()
    apply_exclusions(found, excl)
    assert time.process_time() - start < 15


@pytest.mark.kicad
def test_exclusions_on_the_fixture_match_as_before(kicad_cli: str, tmp_path: Path) -> None:
    """m2-oculink-adapter's 8 stored exclusions against kicad-cli's real report."""
    m2 = FIXTURE_BOARDS["m2-oculink-adapter"]
    raw = tmp_path / "drc.json"
    subprocess.run(
        [kicad_cli, "pcb", "drc", "--format", "json", "--severity-all", "-o", str(raw), str(m2)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    run = kicad_drc.from_report(json.loads(raw.read_text(encoding="utf-8")))
    exclusions = kicad_drc.read_exclusions(m2.with_suffix(".kicad_pro"))
    assert len(exclusions) == 8
    found, _, _ = kicad_drc.findings(run)  # no exclusions in ``run``: nothing waived by them
    old = _old_matches(found, exclusions)
    assert _new_matches(found, exclusions) == _outcome(exclusions, old)
    assert None not in old


# ---------------------------------------------------------------------------------------------
# 15. a board named like an option reaches kicad-cli as a path
# ---------------------------------------------------------------------------------------------


def test_board_named_like_an_option_is_passed_as_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in kicad-cli records its arguments and writes an empty report."""
    fake = tmp_path / "fake-kicad-cli"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "args = sys.argv[1:]\n"
        "open(sys.argv[0] + '.args', 'w').write(json.dumps(args))\n"
        "out = args[args.index('-o') + 1]\n"
        "open(out, 'w').write(json.dumps({'violations': [], 'unconnected_items': []}))\n"
    )
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    Path("-rev2.kicad_pcb").write_text(BOARD_TEXT, encoding="utf-8")
    drc = kicad_drc.run("-rev2.kicad_pcb", kicad_cli=str(fake))
    args = json.loads(Path(str(fake) + ".args").read_text())
    assert args[-1] == os.path.join(os.curdir, "-rev2.kicad_pcb")
    assert not any(a.endswith("rev2.kicad_pcb") and a.startswith("-") for a in args)
    assert drc.command[-1] == "-rev2.kicad_pcb"  # what the reports show is the name as given
    assert kicad_drc.board_argument("/abs/-x.kicad_pcb") == "/abs/-x.kicad_pcb"


@pytest.mark.kicad
def test_real_kicad_cli_checks_a_board_named_like_an_option(
    kicad_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(K / "kicad9.kicad_pcb", "-rev2.kicad_pcb")
    shutil.copy(K / "kicad9.kicad_pro", "-rev2.kicad_pro")
    drc = kicad_drc.run("-rev2.kicad_pcb", kicad_cli=kicad_cli, timeout=600)
    assert isinstance(drc.report.get("violations"), list)
