"""Fuzz the board reader: truncations and byte mutations of real boards either read as a Board
or fail with InputError (-> one line, exit 3).  Nothing else: no other exception, no hang.

Inputs are derived from a small real board and from the hand-written KiCad 6, 7 and 10 boards
(quoted strings with escapes, arcs, backdrills, nets by name), so mutations land in every part
of the format.  The whole module runs in well under 30 s.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from accel_drc.errors import InputError
from accel_drc.model import Board
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
