"""Fuzz the board reader: truncations and byte mutations of real boards either read as a Board
or fail with InputError (-> one line, exit 3).  Nothing else: no other exception, no hang.

Inputs are derived from a small real board and from the hand-written KiCad 6, 7 and 10 boards
(quoted strings with escapes, arcs, backdrills, nets by name), so mutations land in every part
of the format.  IPC-2581 files and project configs get their own mutation sets (issue 11:
hostile numbers, markup and nesting; YAML tokens, NaN, catastrophic regexes).  The whole module
runs in well under a minute.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from accel_drc.errors import InputError
from accel_drc.model import Board
from accel_drc.packs import load_library
from accel_drc.readers import read_board
from conftest import FIXTURE_BOARDS, FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SOURCES = {
    "coral": FIXTURE_BOARDS["coral-tpu-m2-adapter"].read_bytes(),
    "kicad6": (FIXTURES / "kicad_versions" / "kicad6.kicad_pcb").read_bytes(),
    "kicad7": (FIXTURES / "kicad_versions" / "kicad7.kicad_pcb").read_bytes(),
    "kicad10": (FIXTURES / "kicad_versions" / "kicad10.kicad_pcb").read_bytes(),
}

_TMP = tempfile.mkdtemp(prefix="accel-drc-fuzz-")
_LIB = load_library()
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)  # no scratch folder left per run


def _read(data: bytes) -> Board | InputError:
    """Write ``data`` to a scratch board (no .kicad_pro beside it) and read it."""
    path = os.path.join(_TMP, "fuzz.kicad_pcb")
    Path(path).write_bytes(data)
    try:
        return read_board(path)
    except InputError as exc:
        assert str(exc).startswith(path), str(exc)  # the message names the file
        assert "\n" not in str(exc)  # one line
        return exc


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@FUZZ
@given(name=st.sampled_from(sorted(SOURCES)), frac=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_boards(name: str, frac: float) -> None:
    data = SOURCES[name]
    cut = int(len(data) * frac)
    got = _read(data[:cut])
    if cut < len(data.rstrip()):
        # a proper prefix of a board is never a whole board
        assert isinstance(got, InputError)


@FUZZ
@given(
    name=st.sampled_from(sorted(SOURCES)),
    edits=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.binary(min_size=0, max_size=4)),
        min_size=1,
        max_size=6,
    ),
)
def test_mutated_boards(name: str, edits: list[tuple[float, bytes]]) -> None:
    data = bytearray(SOURCES[name])
    for where, new in edits:
        at = int(where * (len(data) - 1))
        data[at : at + len(new) or at + 1] = new
    got = _read(bytes(data))
    assert isinstance(got, (Board, InputError))


@FUZZ
@given(
    name=st.sampled_from(sorted(SOURCES)),
    where=st.floats(min_value=0.0, max_value=1.0),
    char=st.sampled_from([b"(", b")", b'"', b"\\", b"\x00", b"\xff", b"-", b".", b"e"]),
)
def test_structural_characters(name: str, where: float, char: bytes) -> None:
    """The characters the structural index depends on, inserted anywhere."""
    data = SOURCES[name]
    at = int(where * len(data))
    got = _read(data[:at] + char + data[at:])
    assert isinstance(got, (Board, InputError))


@pytest.mark.parametrize("size", [0, 1, 10, 1000])
def test_random_bytes(size: int) -> None:
    got = _read(os.urandom(size))
    assert isinstance(got, InputError)


# ---------------------------------------------------------------------------------------------
# IPC-2581 mutations (issue 11): every mutated file reads as a Board with finite geometry or
# fails with one InputError line naming the file — no other exception, no hang
# ---------------------------------------------------------------------------------------------

IPC_SOURCES = {
    "revB": (FIXTURES / "ipc2581" / "hand_revB_inch.xml").read_bytes(),
    "revC": (FIXTURES / "ipc2581" / "hand_revC_micron.xml").read_bytes(),
}

#: what a hostile or broken exporter writes where a number, a name or markup belongs
IPC_TOKENS = [
    b"<", b">", b"/>", b'"', b"&", b"&amp;", b"<a>", b"</a>", b"NaN", b"inf", b"-INF", b"1e999",
    b"\x00", b"\xff", b"<!DOCTYPE x>", b"<![CDATA[", b"]]>", b"<?pi?>", b"-", b"e", b"0",
]  # fmt: skip


def _read_ipc(data: bytes) -> Board | InputError:
    path = os.path.join(_TMP, "fuzz.xml")
    Path(path).write_bytes(data)
    try:
        board = read_board(path)
    except InputError as exc:
        assert str(exc).startswith(path), str(exc)
        assert "\n" not in str(exc)
        return exc
    for arr in (board.tracks.start, board.tracks.end, board.tracks.width, board.vias.pos):
        assert np.isfinite(arr).all()
    return board


@FUZZ
@given(
    name=st.sampled_from(sorted(IPC_SOURCES)),
    edits=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.sampled_from(IPC_TOKENS)),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_ipc2581(name: str, edits: list[tuple[float, bytes]]) -> None:
    data = bytearray(IPC_SOURCES[name])
    for where, token in edits:
        at = int(where * len(data))
        data[at:at] = token
    assert isinstance(_read_ipc(bytes(data)), (Board, InputError))


@FUZZ
@given(
    name=st.sampled_from(sorted(IPC_SOURCES)),
    which=st.integers(min_value=0, max_value=10_000),
    value=st.sampled_from(["NaN", "inf", "-1e999", "", "1e-400", "0x10", "1,5", "١٢", "9" * 400]),
)
def test_ipc2581_attribute_values(name: str, which: int, value: str) -> None:
    """One attribute value (a coordinate, width, Dk, Df …) replaced by a hostile number."""
    data = IPC_SOURCES[name]
    spots = [m.span(1) for m in re.finditer(rb'="([^"]*)"', data)]
    a, b = spots[which % len(spots)]
    got = _read_ipc(data[:a] + value.encode() + data[b:])
    assert isinstance(got, (Board, InputError))


@FUZZ
@given(name=st.sampled_from(sorted(IPC_SOURCES)), depth=st.integers(min_value=200, max_value=5000))
def test_ipc2581_nesting(name: str, depth: int) -> None:
    data = IPC_SOURCES[name]
    at = data.index(b">", data.index(b"<IPC-2581")) + 1
    got = _read_ipc(data[:at] + b"<a>" * depth + b"</a>" * depth + data[at:])
    assert isinstance(got, Board) if depth <= 255 else isinstance(got, InputError)


# ---------------------------------------------------------------------------------------------
# Config mutations (issue 11): a mutated accel-drc.yaml loads (finite numbers, screened
# regexes) or fails with one InputError line naming the file
# ---------------------------------------------------------------------------------------------

CONFIG_SOURCES = {
    p.stem: p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "configs").glob("*.yaml"))
}
YAML_TOKENS = [
    ".nan", ".inf", "-.inf", "1e999", "&a ", "*a", "[", "]", "{", "}", "!!python/object:os.system",
    "!!binary", ": ", "- ", "\t", "'", '"', "#", "|", ">", "(a+)+", "(a|aa)*", "\x00", "\u2028",
    "~", "2027-02-30", "0x1F", "<<: ", "? ",
]  # fmt: skip


def _load_config(text: str) -> object:
    from accel_drc.config import load_config
    from accel_drc.hostile import catastrophic, non_finite

    path = os.path.join(_TMP, "accel-drc.yaml")
    Path(path).write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        cfg = load_config(path, None, _LIB)
    except InputError as exc:
        assert str(exc).startswith(path) or "rule pack" in str(exc), str(exc)
        assert "\n" not in str(exc)
        return exc
    assert not list(non_finite(cfg.data))
    for pats in (cfg.data.get("signals") or {}).values():
        assert all(catastrophic(p) is None for p in pats)
    return cfg


@FUZZ
@given(
    name=st.sampled_from(sorted(CONFIG_SOURCES)),
    edits=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.sampled_from(YAML_TOKENS)),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_configs(name: str, edits: list[tuple[float, str]]) -> None:
    text = CONFIG_SOURCES[name]
    for where, token in edits:
        at = int(where * len(text))
        text = text[:at] + token + text[at:]
    _load_config(text)


@FUZZ
@given(
    name=st.sampled_from(sorted(CONFIG_SOURCES)),
    which=st.integers(min_value=0, max_value=10_000),
    value=st.sampled_from([".nan", ".inf", "-.inf", "1e999", "'(a+)+'", "'(x|xy)*'", "[]", "{}"]),
)
def test_config_scalar_values(name: str, which: int, value: str) -> None:
    """One scalar value (a number, a regex, a name) replaced by a hostile one."""
    text = CONFIG_SOURCES[name]
    spots = [m.span(1) for m in re.finditer(r":[ \t]+([^\s#\[{][^#\n,}\]]*)", text)]
    a, b = spots[which % len(spots)]
    _load_config(text[:a] + value + text[b:])


# ---------------------------------------------------------------------------------------------
# Issue 30: the .kicad_pro (net-class patterns, sizes) and zipped IPC-2581 (bounds on the zip)
# ---------------------------------------------------------------------------------------------

PRO_SOURCE = (FIXTURES / "kicad_versions" / "kicad9.kicad_pro").read_bytes()
#: what a hostile or broken project file holds where JSON or a pattern belongs
PRO_TOKENS = [
    b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"\\ud800", b"NaN", b"1e400", b"\x00",
    b"\xff", b'"netclass_patterns": [{"pattern": "*a*a*a*a*b", "netclass": "X"}],',
    b'"pattern": "' + b"*x" * 200 + b'",', b'"net_settings": 5,',
]  # fmt: skip


def _read_project(data: bytes) -> object:
    from accel_drc.readers.kicad_project import read_project

    path = os.path.join(_TMP, "fuzz.kicad_pro")
    Path(path).write_bytes(data)
    try:
        return read_project(path)
    except InputError as exc:
        assert str(exc).startswith(path), str(exc)
        assert "\n" not in str(exc)
        return exc


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.sampled_from(PRO_TOKENS)),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_kicad_pro(edits: list[tuple[float, bytes]]) -> None:
    """A mutated project file reads, or is one InputError naming it: never another exception."""
    data = bytearray(PRO_SOURCE)
    for where, token in edits:
        at = int(where * len(data))
        data[at:at] = token
    got = _read_project(bytes(data))
    if not isinstance(got, InputError):
        got.net_classes.class_of("/x/PCIE_TX0_P")  # the patterns compile and match


def _zipped(data: bytes) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("b.xml", data)
    return buf.getvalue()


@FUZZ
@given(
    name=st.sampled_from(sorted(IPC_SOURCES)),
    where=st.floats(min_value=0.0, max_value=1.0),
    how=st.sampled_from(["truncate", "flip", "insert"]),
)
def test_damaged_ipc2581_zips(name: str, where: float, how: str) -> None:
    """A truncated or corrupted zip of a real export reads (a flip in a name or a timestamp),
    or is one InputError: never a zipfile/zlib exception or a traceback."""
    data = bytearray(_zipped(IPC_SOURCES[name]))
    at = int(where * (len(data) - 1))
    if how == "truncate":
        del data[at:]
    elif how == "flip":
        data[at] ^= 0xFF
    else:
        data[at:at] = b"\x00" * 7
    path = os.path.join(_TMP, "fuzz.zip")
    Path(path).write_bytes(bytes(data))
    try:
        read_board(path)
    except InputError as exc:
        assert str(exc).startswith(path), str(exc)
        assert "\n" not in str(exc)
