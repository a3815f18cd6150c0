"""The start-up path (issue 18): the validated snapshot of the bundled rule data, the cheap
case-insensitive patterns, the plugin scan without importlib.metadata, and what a clean run of
``accel-drc check`` does not import.  Times are measured in ``bench/bench_startup.py``, never
here; these tests hold the fast paths to the answers of the full ones."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from accel_drc import bundled, checks, packs, regenerate
from accel_drc.caseless import CaselessPattern
from accel_drc.errors import InputError
from accel_drc.yamlsafe import load_yaml
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "kicad_versions" / "kicad9.kicad_pcb"


# --- the snapshot ----------------------------------------------------------------------------


def test_shipped_snapshot_is_current():
    """Like docgen's check: a rule file, schema or check kind's PARAMS changed without
    ``python -m accel_drc.regenerate`` fails here (runs stay right: they take the full
    path while the snapshot is stale)."""
    fresh = regenerate.snapshot_text()
    shipped = bundled.SNAPSHOT.read_text(encoding="utf-8")
    assert fresh == shipped, "stale: run `python -m accel_drc.regenerate`"


def test_every_validated_file_is_in_the_snapshot():
    head = bundled.SNAPSHOT.read_text(encoding="utf-8").splitlines()[0]
    assert sorted(__import__("json").loads(head)["files"]) == sorted(bundled.VALIDATED)


@pytest.mark.parametrize("rel", bundled.VALIDATED)
def test_snapshot_data_is_the_parsed_file(rel: str):
    bundled.reset()
    fast = load_yaml(bundled.RULES_DIR / rel)
    with bundled.disabled():
        full = load_yaml(bundled.RULES_DIR / rel)
    assert fast.trusted and not full.trusted
    if rel.startswith("classes/"):
        # a class pack is stored as the rules it makes (its per-signal rules written out)
        from accel_drc.packs import GeneratedRules, written_out

        with bundled.disabled():
            generated = GeneratedRules(
                bundled.RULES_DIR / "signal_rules.yaml",
                load_yaml(bundled.RULES_DIR / "signals.yaml"),
            )
            assert fast.data == written_out(full, generated)
    else:
        assert fast.data == full.data
    assert fast.data is not load_yaml(bundled.RULES_DIR / rel).data  # a fresh copy per call
    # a line asked of a trusted document is the full parse's line (parsed on demand)
    for where in list(full.lines)[:: max(1, len(full.lines) // 25)]:
        assert fast.line_of(where) == full.lines[where], where


def test_library_from_the_snapshot_equals_the_full_load():
    bundled.reset()
    fast = packs.load_library()
    with bundled.disabled():
        full = packs.load_library()
    assert fast == full
    for sid, s in fast.signals.items():
        assert [p.pattern for p in s.name_patterns] == [
            p.pattern for p in full.signals[sid].name_patterns
        ]


def _copy_rules(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package's rules with its own snapshot, as if it were the package's."""
    rules = tmp / "rules"
    shutil.copytree(bundled.RULES_DIR, rules)
    monkeypatch.setattr(bundled, "RULES_DIR", rules)
    monkeypatch.setattr(bundled, "SCHEMA_DIR", rules / "schemas")
    monkeypatch.setattr(bundled, "SNAPSHOT", tmp / "bundled_rules.jsonl")
    bundled.SNAPSHOT.write_text(regenerate.snapshot_text(), encoding="utf-8")
    bundled.reset()
    return rules


def test_a_copy_with_its_snapshot_is_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rules = _copy_rules(tmp_path, monkeypatch)
    assert load_yaml(rules / "foils.yaml").trusted
    packs.load_library(rules)
    bundled.reset()


def test_an_edited_rule_file_takes_the_full_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A user tuning an installed pack: the edit is validated, and a mistake is file:line."""
    rules = _copy_rules(tmp_path, monkeypatch)
    edge = rules / "classes" / "edge.yaml"
    text = edge.read_text(encoding="utf-8")
    edge.write_text(text.replace("severity: error", "severity: fatal", 1), encoding="utf-8")
    bundled.reset()
    assert not load_yaml(rules / "foils.yaml").trusted  # one file edited: nothing is trusted
    with pytest.raises(InputError) as exc:
        packs.load_library(rules)
    line = text[: text.index("severity: error")].count("\n") + 1
    assert f"edge.yaml:{line}:" in str(exc.value) and "fatal" in str(exc.value)
    bundled.reset()


def test_an_edit_elsewhere_revalidates_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Validity crosses files (a pack cites references.yaml): dropping a cited reference makes
    the untouched packs fail their citation check, so no file may stay trusted."""
    rules = _copy_rules(tmp_path, monkeypatch)
    refs = rules / "references.yaml"
    data = load_yaml(refs).data
    cited = re.search(r"\[([a-z][a-z0-9._-]*)\]", (rules / "foils.yaml").read_text()).group(1)
    assert cited in data["references"]
    text = refs.read_text(encoding="utf-8")
    refs.write_text(text.replace(f"\n  {cited}:", f"\n  {cited}-renamed:", 1), encoding="utf-8")
    bundled.reset()
    with pytest.raises(InputError, match=r"foils\.yaml:\d+: .*not in references\.yaml"):
        packs.load_library(rules)
    bundled.reset()


def test_a_changed_schema_or_params_schema_invalidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    rules = _copy_rules(tmp_path, monkeypatch)
    schema = rules / "schemas" / "foils.schema.json"
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    bundled.reset()
    assert not load_yaml(rules / "foils.yaml").trusted
    schema.write_text(schema.read_text(encoding="utf-8")[:-1], encoding="utf-8")
    bundled.reset()
    assert load_yaml(rules / "foils.yaml").trusted
    kind = checks.discover()["tg"]
    monkeypatch.setitem(kind.params, "x-changed", True)
    bundled.reset()
    assert not load_yaml(rules / "foils.yaml").trusted
    monkeypatch.undo()
    bundled.reset()


def test_a_damaged_snapshot_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rules = _copy_rules(tmp_path, monkeypatch)
    for junk in ("", "not json\n", '{"format": 99}\n', '{"format": 1, "files": {}}\n'):
        bundled.SNAPSHOT.write_text(junk, encoding="utf-8")
        bundled.reset()
        assert not load_yaml(rules / "foils.yaml").trusted
    bundled.reset()


def test_a_user_file_is_never_trusted(tmp_path: Path):
    p = tmp_path / "foils.yaml"
    shutil.copy(bundled.RULES_DIR / "foils.yaml", p)
    assert not load_yaml(p).trusted


# --- case-insensitive patterns ---------------------------------------------------------------


def _bundled_patterns() -> list[str]:
    lib = packs.load_library()
    out = [p.pattern for p in lib.exclude]
    for s in lib.signals.values():
        out += [p.pattern for p in (*s.class_patterns, *s.name_patterns)]
    for f in lib.families.values():
        out += [p.pattern for p in (*f.class_patterns, *f.name_patterns)]
    return out


PATTERNS = [
    *_bundled_patterns(),
    r"\bclk\b",
    r"\s+x",
    r"[^\s]+",
    r"\w+_k$",
    r"(?u)pcie",
    r"\u212a",
    r"\x4b",
    "ſata",
    r"(a)\1",
]
NAMES = [
    "PCIE_TX0_P",
    "/usb3/SSRX+",
    "K",
    "\u212a",  # KELVIN SIGN: case partner of k in Unicode mode only
    "\u017fata",  # LONG S
    "SATA",
    "µC_RST",
    "a\x1cclk",  # \x1c is \s in Unicode mode only
    "x\tclk",
    "DDR_CK_T",
    "",
    "ıNDEX",
]


def test_caseless_agrees_with_re_ignorecase_on_chosen_names():
    for p in PATTERNS:
        ref = re.compile(p, re.IGNORECASE)
        fast = CaselessPattern(p, validate=False)
        checked = CaselessPattern(p)
        for name in NAMES + ["pcie4_tx_p", "QSFP28_RX1", "m2 key m", "usb std a"]:
            for f in (fast, checked):
                for op in ("search", "match", "fullmatch"):
                    got = getattr(f, op)(name)
                    want = getattr(ref, op)(name)
                    assert (got and got.span()) == (want and want.span()), (p, name, op)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(PATTERNS),
    st.text(alphabet=st.sampled_from("aAkKsSiI_ -.0123\u212a\u017f\u0131µ\x1c\t+/"), max_size=12),
)
def test_caseless_agrees_with_re_ignorecase(pattern: str, name: str):
    ref = re.compile(pattern, re.IGNORECASE)
    got = CaselessPattern(pattern, validate=False).search(name)
    want = ref.search(name)
    assert (got and got.span()) == (want and want.span())


def test_caseless_bad_pattern_raises_when_validated():
    with pytest.raises(re.error):
        CaselessPattern("(unclosed")
    p = CaselessPattern("pcie", validate=False)
    assert p == re.compile("pcie", re.IGNORECASE) and p.pattern == "pcie"
    assert p.flags == re.compile("pcie", re.IGNORECASE).flags


# --- plugin kinds without importlib.metadata ---------------------------------------------------


def test_plugin_scan_finds_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    info = tmp_path / "kind-0.1.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[accel_drc.checks]\nx = kind.x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert checks._may_have_plugins(checks.ENTRY_POINT_GROUP)
    assert not checks._may_have_plugins("accel_drc.no_such_group")
    zipped = tmp_path / "eggs.zip"
    zipped.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.syspath_prepend(str(zipped))
    assert checks._may_have_plugins("accel_drc.no_such_group")  # a zip: the full lookup


# --- what a clean run imports ----------------------------------------------------------------


def test_a_clean_check_imports_no_validator_metadata_or_templates():
    code = (
        "import sys\n"
        "from accel_drc.cli import main\n"
        f"rc = main(['check', {str(SMALL)!r}, '--quiet'])\n"
        "heavy = [m for m in ('jsonschema', 'importlib.metadata', 'jinja2', 'scipy', "
        "'numpy.ma', 'threadpoolctl') "
        "if m in sys.modules]\n"
        "print(rc, heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    # exit 5 since issue 33: the board's hand-written microvia (0.10 mm drill through the
    # 0.21 mm dielectric 3) is 2.1:1, over IPC-2226's 1:1 (the `microvia` check)
    assert out.stdout.split("\n")[-2] == "5 []", out.stdout


VME_WREN = ROOT.parent / "shared" / "boards" / "vme-wren" / "vme-wren.kicad_pcb"


@pytest.mark.slow
@pytest.mark.skipif(not VME_WREN.is_file(), reason="vme-wren is not on this machine")
def test_a_big_boards_check_imports_no_numpy_ma():
    """vme-wren runs what a small board does not (the via table's spatial join, the pair
    table's grid, the delays' median widths, the thermal via fields): none of it imports
    ``numpy.ma`` (``np.unique`` and ``np.median`` would: ``accel_drc.arrays``); it cost the
    KiCad button's click 15-22 ms of CPU."""
    code = (
        "import sys\n"
        "from accel_drc.cli import main\n"
        f"rc = main(['check', {str(VME_WREN)!r}, '--quiet'])\n"
        "print(rc, 'numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] in ("0 False", "5 False"), out.stdout


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(2**62), 2**62), max_size=50),
    st.lists(st.integers(-(2**62), 2**62), max_size=50),
    st.booleans(),
)
def test_isin_is_np_isin(a: list[int], among: list[int], small: bool):
    import numpy as np
    from accel_drc.arrays import isin

    x = np.array(a, dtype=np.int64) % 7 if small else np.array(a, dtype=np.int64)
    y = np.array(among, dtype=np.int64) % 7 if small else np.array(among, dtype=np.int64)
    assert isin(x, y).tolist() == np.isin(x, y).tolist()
    grid = x.reshape(-1, 1) if len(x) else x.reshape(0, 1)  # the shape of ``a`` is kept
    assert isin(grid, y).tolist() == np.isin(grid, y).tolist()
    assert (
        isin(x.astype(float) / 3, y.astype(float) / 3).tolist()
        == np.isin(x.astype(float) / 3, y.astype(float) / 3).tolist()
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=1, max_size=60),
    st.floats(0, 100),
    st.integers(0, 3),
)
def test_median_and_percentile_are_numpys_to_the_bit(values: list[float], q: float, nans: int):
    import numpy as np
    from accel_drc.arrays import median, percentile

    a = np.array(values, dtype=float)
    assert median(a) == float(np.median(a))  # the same middle values, the same mean
    assert median(a.astype(np.float32)) == float(np.median(a.astype(np.float32).astype(float)))
    for qq in (q, 99.0, 0.0, 100.0, 50.0):
        assert percentile(a, qq) == float(np.percentile(a, qq))
    if nans:
        a[: min(nans, len(a))] = np.nan
        assert np.isnan(median(a))
    for empty in (median, lambda v: percentile(v, 50.0)):
        with pytest.raises(ValueError):
            empty(np.zeros(0))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(-(2**40), 2**40)), max_size=40))
def test_unique_rows_is_np_unique_axis_0(rows: list[tuple[int, int]]):
    import numpy as np
    from accel_drc.arrays import unique_rows

    a = np.array(rows, dtype=np.int64).reshape(-1, 2)
    a = np.concatenate([a, a[::2]])  # repeats
    assert unique_rows(a).tolist() == np.unique(a, axis=0).tolist()


# --- precompiled dataclass methods (accel_drc.dccode) ------------------------------------------

_DUMP = r"""
import dataclasses, inspect, json, sys
if sys.argv[1] == "table":
    import accel_drc.dccode
    accel_drc.dccode.install()  # what the command line and the plugin do first
import accel_drc.model, accel_drc.config, accel_drc.results, accel_drc.packs
out = {}
for mod in (accel_drc.model, accel_drc.config, accel_drc.results, accel_drc.packs):
    for name, cls in vars(mod).items():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == mod.__name__:
            row = {"sig": str(inspect.signature(cls)), "doc": cls.__doc__}
            for meth in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                fn = cls.__dict__.get(meth)
                code = getattr(fn, "__code__", None)
                row[meth] = None if code is None else [
                    code.co_code.hex(), repr(code.co_consts), code.co_names, code.co_varnames,
                    repr(getattr(fn, "__annotations__", None)), repr(fn.__defaults__),
                    repr(fn.__kwdefaults__), fn.__qualname__,
                ]
            out[f"{mod.__name__}.{name}"] = row
json.dump(out, sys.stdout, sort_keys=True)
"""


def _need_table_for_this_python() -> None:
    """The shipped table serves the CPython bytecode version that built it (3.11 here and in
    KiCad 9's Python); another Python (the 3.9 CI job) compiles as always: nothing to test."""
    from accel_drc import dccode

    if dccode.read_table() is None:
        pytest.skip("the shipped dataclass table is for another CPython bytecode version")


def _dump(mode: str) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", _DUMP, mode], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return __import__("json").loads(r.stdout)


def test_dataclasses_from_the_table_equal_compiled_ones():
    """Every generated method (code, constants, names, annotations, defaults, qualname) and the
    signature of every dataclass of the core modules: the same with the table as without."""
    from accel_drc import dccode

    _need_table_for_this_python()
    dccode.install()
    assert dccode._state["table"], "the table is not installed (stale or unreadable?)"
    table, plain = _dump("table"), _dump("plain")
    assert len(table) > 40 and table == plain


def test_dataclass_table_is_current_and_equal_to_compiling():
    import hashlib

    from accel_drc import dccode

    _need_table_for_this_python()
    shipped = dccode.read_table()
    fresh = dccode.read_table(dccode.build())
    assert shipped and fresh
    assert set(fresh) == set(shipped), "stale: run `python -m accel_drc.regenerate`"
    for digest, code in fresh.items():
        assert shipped[digest] == code
    src = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    assert hashlib.sha256(src.encode()).digest() not in shipped


def test_a_dataclass_the_table_does_not_know_compiles_as_before():
    """A miss is compiled with dataclasses' own flags: no ``from __future__ import annotations``
    leaks into another package's generated ``__init__``."""
    import dataclasses

    from accel_drc import dccode

    if dccode._state["table"]:
        assert dataclasses.exec is dccode._exec
    ns: dict = {}
    src = "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Y:\n    a: int\n"
    exec(compile(src, "<test>", "exec", dont_inherit=True), ns)  # no future flags here
    assert ns["Y"].__init__.__annotations__ == {"a": int, "return": None}
    assert ns["Y"](1) == ns["Y"](1) and hash(ns["Y"](1)) == hash(ns["Y"](1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ns["Y"](1).a = 2


# --- np.unique without numpy.ma -----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(2**40), 2**40), max_size=60),
    st.sampled_from(["int64", "int32", "uint16", "int8", "bool"]),
)
def test_unique_is_np_unique(values: list[int], dtype: str):
    import numpy as np
    from accel_drc.arrays import unique

    a = np.array(values, dtype=np.int64).astype(dtype)
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    big = np.random.default_rng(len(values)).integers(0, 1000, 70_000).astype(dtype)
    assert unique(big).tolist() == np.unique(big).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_infinity=True), max_size=60))
def test_unique_of_floats_is_np_unique(values: list[float]):
    """Floats too (NaN among them: left to ``np.unique``, one NaN kept; -0.0 beside 0.0)."""
    import numpy as np
    from accel_drc.arrays import unique

    a = np.array(values + [0.0, -0.0][: len(values) % 3], dtype=float)
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)
