"""The reader's vectorised number parser (``sexpr.parse_decimals``) against ``strtod``.

The parser must return exactly the float64 that Python's ``float()`` (a correctly rounded
``strtod``) gives for every plain decimal KiCad writes, and refuse (None) every other form so
the caller falls back to ``np.fromstring``.  Ground truth here is ``float()`` itself, on
hand-picked hard cases (halfway roundings, 15 significant digits, -0) and on random decimals.
"""

from __future__ import annotations

import numpy as np
import pytest
from accel_drc.geometry import signed_area
from accel_drc.readers import sexpr
from accel_drc.readers.sexpr import parse_decimals, parse_points
from hypothesis import given, settings
from hypothesis import strategies as st


def _strtod(text: bytes) -> np.ndarray:
    return np.array([float(t) for t in text.split()], dtype=np.float64)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, -0.0 and 0.0 told apart."""
    return a.shape == b.shape and a.tobytes() == b.tobytes()


HARD = [
    b"0",
    b"-0",
    b"-0.0",
    b"0.1",
    b"0.3",
    b"2.675",
    b"1.005",
    b"153.558434",
    b"-253.120535",
    b".5",
    b"-.25",
    b"7.",
    b"999999999999999",  # 15 digits: the largest mantissa taken
    b"0.000000000000001",
    b"123456.789012345",
    b"9007199.254740993",  # 2**53 + 1 scaled: exact halfway handling matters here
    b"0.1000000000000000",  # 16 digits but the value has 2: refused, strtod reads it
]


@pytest.mark.parametrize("tok", HARD)
def test_hard_tokens_are_read_as_strtod_reads_them_or_refused(tok: bytes) -> None:
    got = parse_decimals(b" " + tok + b"\n")
    if got is None:  # refused: only when the token has more than 15 digits
        assert sum(ch.isdigit() for ch in tok.decode()) > 15
    else:
        assert _same(got, _strtod(tok)), tok


@pytest.mark.parametrize(
    "text",
    [
        b"1e5",
        b"1E-3",
        b"+1.5",
        b"nan",
        b"inf",
        b"-",
        b".",
        b"1.2.3",
        b"1-2",
        b"12x",
        b"1/2",
        b"1234567890123456",
        b"0.1234567890123456",
    ],  # fmt: skip
)
def test_other_forms_are_refused_not_misread(text: bytes) -> None:
    assert parse_decimals(b"1.5 " + text + b" 2") is None


def test_separators_are_any_whitespace_and_empty_text_is_empty() -> None:
    assert _same(parse_decimals(b"\t1.5\n\n-2 \r3\x0b4\x0c"), np.array([1.5, -2.0, 3.0, 4.0]))
    assert parse_decimals(b"") is not None and parse_decimals(b"").size == 0
    assert parse_decimals(b"  \n ").size == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(), st.integers(0, 10**8 - 1), st.integers(0, 7), st.integers(0, 10**7)
        ),
        min_size=1,
        max_size=400,
    )
)
def test_random_kicad_decimals_match_strtod_bit_for_bit(
    items: list[tuple[bool, int, int, int]],
) -> None:
    toks = []
    for neg, whole, ndec, frac in items:
        t = str(whole)
        if ndec:
            t += "." + str(frac % 10**ndec).rjust(ndec, "0")  # at most 15 digits
        toks.append(("-" if neg else "") + t)
    text = " ".join(toks).encode()
    assert _same(parse_decimals(text), _strtod(text))


def test_chunk_borders_do_not_cut_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts longer than a chunk are cut at a separator; with a 64-byte chunk every border
    falls somewhere inside a number."""
    monkeypatch.setattr(sexpr, "_DEC_CHUNK", 64)
    rng = np.random.default_rng(7)
    vals = rng.uniform(-400, 400, 5000)
    nd = rng.integers(0, 7, 5000)
    text = " ".join(f"{v:.{d}f}" for v, d in zip(vals.tolist(), nd.tolist())).encode()
    assert _same(parse_decimals(text), _strtod(text))


def test_points_fast_path_equals_the_strtod_path() -> None:
    body = b"(pts\n\t(xy 153.558434 253.120535) (xy -0.5 7)\n\t(xy 1 2)\n)"
    assert _same(parse_points(body), np.array([153.558434, 253.120535, -0.5, 7.0, 1.0, 2.0]))
    # an exponent is not a plain decimal: the strtod path still reads it
    assert _same(parse_points(b"(pts (xy 1e1 2))"), np.array([10.0, 2.0]))
    assert parse_points(b"(pts (xy 1 2 3))") is None  # three numbers for one point


@pytest.mark.parametrize(
    "body",
    [b"(pts (xy 1x 2))", b"(pts (xy 1 2) (xz 3 4))", b"(pts (xyz 1 2))", b"(pts (xy 1 s2))",
     b"(pts (xy 1 2) (arc 3 4))", b"(ptsx (xy 1 2))", b"(pts (xy 1 2)) y", b"(pts (x 1 2))"],
)  # fmt: skip
def test_point_mode_refuses_any_word_but_xy_and_pts(body: bytes) -> None:
    assert parse_decimals(body, points=True) is None


def test_point_mode_reads_what_stripping_and_strtod_read() -> None:
    body = b"(pts\n\t\t(xy -1.25 3) (xy 4 .5)\n\t)\n(pts (xy 0 -0))"
    stripped = body.replace(b"(xy", b" ").replace(b")", b" ").replace(b"(pts", b" ")
    assert _same(parse_decimals(body, points=True), _strtod(stripped))


def test_shoelace_area_is_exact_far_from_the_origin() -> None:
    """A 10 k-vertex ring 300 mm from the origin: the area relative to the first vertex matches
    the exact (rational) shoelace to 1e-13, where the plain form cancels 10⁵-sized terms."""
    from fractions import Fraction

    t = np.linspace(0, 2 * np.pi, 2000, endpoint=False)
    ring = np.stack([300.123456 + 5 * np.cos(t), 250.654321 + 3 * np.sin(t)], axis=1)
    ring = np.round(ring, 6)
    xs = [Fraction(v) for v in ring[:, 0]]
    ys = [Fraction(v) for v in ring[:, 1]]
    n = len(xs)
    exact = sum(xs[i] * ys[(i + 1) % n] - xs[(i + 1) % n] * ys[i] for i in range(n)) / 2
    assert abs(signed_area(ring) - float(exact)) <= 1e-13 * abs(float(exact))
    assert abs(signed_area(ring[::-1]) + float(exact)) <= 1e-13 * abs(float(exact))


def _strtod_or_none(text: bytes) -> np.ndarray | None:
    try:
        return _strtod(text)
    except ValueError:
        return None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.-+eE \n\tx", max_size=80))
def test_any_text_is_read_as_strtod_reads_it_or_refused(text: str) -> None:
    """Random junk: the parser never returns numbers strtod would not (or other values)."""
    raw = text.encode()
    got = parse_decimals(raw)
    if got is not None:
        want = _strtod_or_none(raw)
        assert want is not None, raw
        assert _same(got, want), raw


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["(xy", "(pts", ")", " ", "\n", "1.5", "-2", "x", "y", "(xyz", "p", "3e1"]),
        max_size=30,
    )
)
def test_point_mode_on_random_words_equals_stripping_or_refuses(words: list[str]) -> None:
    raw = " ".join(words).encode()
    got = parse_decimals(raw, points=True)
    if got is not None:
        stripped = raw.replace(b"(xy", b" ").replace(b")", b" ").replace(b"(pts", b" ")
        want = _strtod_or_none(stripped)
        assert want is not None, raw
        assert _same(got, want), raw
