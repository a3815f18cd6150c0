"""Rule data: schema-valid, sourced, and loaded into the objects the checks use."""

from __future__ import annotations

import re
import textwrap

import pytest
from accel_drc import packs, yamlsafe
from accel_drc.errors import InputError
from accel_drc.packs import CLASSES, load_library, load_pack, load_yaml

LIB = load_library()


def test_required_signal_ids_and_their_numbers():
    need = {
        "nvlink4",
        "nvlink5",
        "pcie3",
        "pcie4",
        "pcie5",
        "pcie6",
        "ddr5",
        "lpddr5",
        "usb3",
        "usb4",
        "eth25g",
        "eth56g",
        "eth112g",
    }
    assert need <= set(LIB.signals)
    s = LIB.signals
    # seed 000 per-signal table
    assert (s["nvlink4"].max_df, s["nvlink5"].max_df) == (0.003, 0.002)
    assert s["nvlink4"].min_foil == "VLP" and s["pcie5"].zdiff_tol_pct == 5
    # domain.md §5
    assert (s["pcie4"].zdiff_ohm, s["usb3"].zdiff_ohm, s["usb3"].zdiff_tol_pct) == (85, 90, 10)
    for sig in s.values():
        # Nyquist = symbol rate / 2; PAM4 carries 2 bits a symbol, MIPI C-PHY's 3-wire PAM3
        # 16 bits in 7 symbols (C-PHY v2.0), 1000BASE-T's PAM-5 2 data bits a symbol (the fifth
        # level carries the trellis code: 250 Mb/s a pair at 125 MBd, IEEE 802.3 Clause 40)
        bits = {"PAM4": 2, "PAM3": 16 / 7, "PAM5": 2}.get(sig.modulation, 1)
        assert sig.nyquist_hz == pytest.approx(sig.data_rate_gbps / bits / 2 * 1e9, rel=0.07), (
            sig.id
        )
        # Bogatin: L[in] < 0.3 / baud[GBd], to 0.001 mm (no limit where the band is far below
        # any stub resonance: USB 2.0)
        if sig.max_stub_mm is not None:
            assert sig.max_stub_mm == pytest.approx(25.4 * 0.3 / sig.baud_gbd, abs=0.0006), sig.id
    # domain.md §4 derived values: Gen4 ≈ 19 mil, Gen5 9-10 mil, NVLink 4 ≈ 6 mil, NVLink 5 ≈ 3 mil
    mil = {k: s[k].max_stub_mm / 0.0254 for k in ("pcie4", "pcie5", "nvlink4", "nvlink5", "eth56g")}
    assert round(mil["pcie4"]) == 19 and 9 <= mil["pcie5"] <= 10 and round(mil["nvlink4"]) == 6
    assert round(mil["nvlink5"]) == 3 and 11 <= mil["eth56g"] <= 12


def test_foils_are_ordered_smoothest_last():
    assert LIB.foils.ids == ("STD", "RTF", "VLP", "HVLP", "HVLP2", "HVLP3", "HVLP4")
    rz = [g.rz_um[1] for g in LIB.foils.grades]
    assert rz[2:] == sorted(rz[2:], reverse=True)  # from VLP on, smoother = lower Rz
    assert LIB.foils.grade("hvlp-2").id == "HVLP2" and LIB.foils.grade("HVLP1").id == "HVLP"
    assert LIB.foils.grade("ED").id == "STD" and LIB.foils.grade("nonsense") is None


@pytest.mark.parametrize(
    ("typed", "mid"),
    [
        ("FR4", "fr4"),
        ("FR-4", "fr4"),
        ("fr 4", "fr4"),
        ("FR408HR", "fr408hr"),
        ("FR408-HR", "fr408hr"),
        ("IS400 2116", "is400"),
        ("370HR", "is370hr"),
        ("Megtron 6", "megtron6"),
        ("MEGTRON6", "megtron6"),
        ("R-5775", "megtron6"),
        ("R-5775(N)", "megtron6"),
        ("Panasonic Megtron-6 1035", "megtron6"),
        ("Megtron 6E", "megtron6_k"),
        ("Megtron 7", "megtron7"),
        ("Megtron 7N", "megtron7"),
        ("R-5785", "megtron7"),
        ("Megtron 8", "megtron8"),
        ("Tachyon 100G", "tachyon100g"),
        ("TU-872 SLK", "tu872slk"),
        ("TU-872 LK", "tu872lk"),
        ("IT-968", "it968"),
        ("IT-988G", "it988g"),
        ("RO4350B", "ro4350b"),
        ("Rogers 4350B", "ro4350b"),
        ("RO3003", "ro3003"),
        ("S1000-2M", "s1000_2m"),
        ("I-Speed", "ispeed"),
        ("7628", "fr4"),
        ("2116", "fr4"),
        ("1080", "fr4"),
        ("FR4 TG170", "fr4_tg170"),
        ("FR4 7628", "fr4"),
        ("IS400 1x7628", "is400"),
        ("2x1080", "fr4"),
    ],
)
def test_material_aliases(typed, mid):
    m = LIB.materials.match(typed)
    assert m is not None and m.material.id == mid


def test_unknown_material_and_tables():
    assert LIB.materials.lookup("Unobtainium 9000") is None
    assert LIB.materials.lookup("") is None and LIB.materials.lookup(None) is None
    assert LIB.materials.lookup("Not specified") is None  # what KiCad writes for "nobody said"
    # KiCad's own predefined substrates (stackup_predefined_prms.cpp) are consistent with ours
    for name, er, tand in (
        ("FR4", 4.5, 0.02),
        ("FR408-HR", 3.69, 0.0091),
        ("Polyimide", 3.2, 0.004),
        ("Kapton", 3.2, 0.004),
        ("PTFE", 2.1, 0.0002),
        ("Teflon", 2.1, 0.0002),
    ):
        assert LIB.materials.contradiction(LIB.materials.lookup(name), er, tand) == [], name
    m = LIB.materials.materials
    # domain.md §2 table values
    assert (m["megtron7"].dk, m["megtron7"].df, m["megtron7"].tg_c, m["megtron7"].td_c) == (
        3.4,
        0.002,
        200,
        400,
    )
    assert (m["tachyon100g"].df, m["it968"].tg_method, m["megtron8"].tg_method) == (
        0.0021,
        "TMA",
        "DMA",
    )
    assert m["tu872slk"].unconfirmed and "tg_c" in m["tu872slk"].unconfirmed_fields
    for mat in m.values():
        assert mat.source
        if mat.df is not None:
            bins = {
                "standard": (0.015, 1),
                "mid": (0.008, 0.015),
                "low": (0.005, 0.008),
                "very_low": (0.003, 0.005),
                "ultra_low": (0.0015, 0.003),
                "extreme_low": (0, 0.0015),
            }
            lo, hi = bins[mat.loss_class]
            assert lo <= mat.df <= hi or mat.df_range, mat.id


def test_contradiction_and_kicad_default():
    lib = LIB.materials
    reasons = lib.contradiction(lib.get("megtron7"), 3.4, 0.02)
    assert len(reasons) == 1 and "loss tangent 0.02" in reasons[0]
    assert lib.contradiction(lib.get("megtron7"), 3.35, 0.0022) == []
    assert lib.contradiction(lib.get("fr4"), 4.5, 0.02) == []
    assert lib.is_kicad_default("FR4", 4.5, 0.02) and lib.is_kicad_default("fr-4", 4.5, 0.02)
    assert not lib.is_kicad_default("FR4", 4.2, 0.02)


def test_class_packs_every_rule_sourced_and_seed_numbers():
    for cls, pack in LIB.packs.items():
        assert pack.version and pack.name == cls
        ids = [r.id for r in pack.rules]
        assert len(ids) == len(set(ids))
        for r in pack.rules:
            assert r.why and len(r.why) > 20 and r.source, r.id
            assert re.fullmatch(rf"{cls}\.{r.check}(\.{r.signal})?", r.id), r.id
        assert pack.follows.startswith("[nextpcb2026] PCB Design Parameter table"), cls
    by = {cls: {r.id: r for r in p.rules} for cls, p in LIB.packs.items()}
    # seed 000 table: layers, Tg, plane copper, PDN target
    assert by["training"]["training.layer_count"].params == {"min": 20, "max": None}
    # 8, not 12: the workstation row (8-12) closes the 9-11 gap to edge (issue 27 §6)
    assert by["inference"]["inference.layer_count"].params == {"min": 8, "max": 24}
    assert by["edge"]["edge.layer_count"].params == {"min": 4, "max": 8}
    assert [by[c][f"{c}.tg"].params["min_tg_c"] for c in ("training", "inference", "edge")] == [
        170,
        150,
        130,
    ]
    assert [
        by[c][f"{c}.copper_weight"].params["min_oz"] for c in ("training", "inference", "edge")
    ] == [2.0, 1.0, 1.0]
    assert [
        by[c][f"{c}.pdn_impedance"].params["target_ohm"] for c in ("training", "inference", "edge")
    ] == [0.00015, 0.0002, 0.001]
    # backdrill: training NVLink + PCIe Gen5/6; inference Gen5 not Gen4; edge none
    bd = {
        c: {r.signal for r in p.rules if r.check == "via_stub" and r.params["require_backdrill"]}
        for c, p in LIB.packs.items()
    }
    assert {"nvlink4", "nvlink5", "pcie5", "pcie6"} <= bd["training"]
    assert "pcie5" in bd["inference"] and "pcie4" not in bd["inference"] and bd["edge"] == set()
    for p in LIB.packs.values():
        for r in p.rules:
            if r.check == "pdn_impedance":
                assert (r.params["f_min_hz"], r.params["f_max_hz"], r.params["sweep_max_hz"]) == (
                    1e4,
                    1e8,
                    1e9,
                )
            if r.check == "via_stub":
                assert set(r.params) == {"max_stub_mm", "min_fres_ratio", "require_backdrill"}


def _pack(tmp_path, body):
    p = tmp_path / "pack.yaml"
    p.write_text(textwrap.dedent(body))
    return p


GOOD = """\
    pack: extra
    version: "1"
    rules:
      - check: laminate_df
        signal: pcie5
        severity: warning
        params: {max_df: 0.004}
        why: our fab's Megtron 6 lot measures 0.004
        source: fab report 2026-10
    """


def test_extra_pack_loads(tmp_path):
    p = load_pack(_pack(tmp_path, GOOD), LIB.signals, LIB.foils)
    [r] = p.rules
    assert (r.id, r.params, r.severity.value) == (
        "extra.laminate_df.pcie5",
        {"max_df": 0.004},
        "warning",
    )


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        (
            "severity: warning",
            "severity: fatal",
            6,
            "rules.0.severity: 'fatal' is not one of error",
        ),
        ("signal: pcie5", "signal: pcie7", 5, "unknown signal type 'pcie7'"),
        ("params: {max_df: 0.004}", "params: {max_df: -1}", 7, "rules.0.params.max_df: -1"),
        (
            "params: {max_df: 0.004}",
            "params: {max_df: 0.004, bogus: 1}",
            7,
            "unknown key 'bogus' in rules.0.params",
        ),
        ("check: laminate_df", "check: laminate_dk", 4, "laminate_dk"),
        (
            "    source: fab report 2026-10\n",
            "    source: fab report 2026-10\n    colour: red\n",
            10,
            "unknown key 'colour' in rules.0",
        ),
        # an unclosed flow sequence: the line of the '[' (the parser gives up on the next key,
        # line 9, which the message names too)
        (
            "why: our fab's Megtron 6 lot measures 0.004",
            "why: [unclosed",
            8,
            "never closed; the parser gave up on line 9",
        ),
        ('version: "1"', 'version: "1"\nversion: "2"', 3, "duplicate key 'version'"),
    ],
)
def test_pack_errors_name_file_and_line(tmp_path, old, new, line, words):
    body = textwrap.dedent(GOOD)
    assert old in body
    p = _pack(tmp_path, body.replace(old, new))
    with pytest.raises(InputError) as ei:
        load_pack(p, LIB.signals, LIB.foils)
    assert ei.value.line == line, str(ei.value)
    assert words in str(ei.value)
    assert str(ei.value).startswith(f"{p}:{line}: ")


def test_yaml_lines_map_paths():
    doc = load_yaml("x.yaml", "a:\n  b: [1, 2]\n  c:\n    - d: 3\n")
    assert doc.line_of(("a", "b")) == 2 and doc.line_of(("a", "c", 0, "d")) == 4
    assert doc.line_of(("a", "zzz")) == 1  # a missing key points at its parent


def test_rules_command_lists_every_rule(capsys):
    from types import SimpleNamespace

    from accel_drc.cli import run_rules

    assert run_rules(SimpleNamespace(board_class="edge", config=None, json=False)) == 0
    out = capsys.readouterr().out
    assert "edge.layer_count  [layer_count, error]  min=4, max=8" in out
    assert (
        "source: [nextpcb2026] PCB Design Parameter table, Typical layer count row, AI Inference"
        in out
    )
    n = len(LIB.packs["edge"].rules)
    assert f"\n{n} rules\nReferences (" in out
    # the bibliography gives every cited id its full citation once
    assert "[nextpcb2026] Arya Li. \u201cAI Training vs AI Inference" in out
    assert "https://www.nextpcb.com/blog/ai-training-vs-inference-pcb-design-differences" in out


def test_schemas_are_valid_draft7():
    import jsonschema
    from accel_drc.config import CONFIG_SCHEMA

    for schema in (
        CONFIG_SCHEMA,
        packs.PACK_SCHEMA,
        packs.SIGNALS_SCHEMA,
        packs.MATERIALS_SCHEMA,
        packs.FOILS_SCHEMA,
        *packs.PARAM_SCHEMAS.values(),
    ):
        jsonschema.Draft7Validator.check_schema(schema)


# --- hostile YAML: aliases, depth, impossible values, YAML 1.2 floats ---------------------------


def _bomb(levels: int) -> str:
    """The billion-laughs shape from the review: each level lists the previous one 10 times."""
    items = ["&a0 [1,1,1,1,1,1,1,1,1,1]"]
    items += [f"&a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "x: [" + ", ".join(items) + "]\n"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (_bomb(4), 1),  # 10^4 leaves: loaded (and expanded) before the fix
        ("a: &s hello\nb: *s\n", 2),  # a scalar alias, on the line that uses it
        ("base: &b {x: 1}\nd:\n  y: 2\n  <<: *b\n", 4),  # a merge key is an alias too
        ("l:\n  - &n [1, 2]\n  - *n\n", 2),  # a sequence item: where the sequence starts
    ],
)
def test_yaml_aliases_are_refused_with_the_line(text, line):
    with pytest.raises(InputError) as ei:
        load_yaml("f.yaml", text)
    assert str(ei.value) == f"f.yaml:{line}: YAML anchors/aliases are not supported"


def test_yaml_anchor_without_alias_still_loads():
    assert load_yaml("f.yaml", "a: &x [1, 2]\nb: 3\n").data == {"a": [1, 2], "b": 3}


def _cli(args: list[str], tmp_path, timeout: float = 60):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "accel_drc.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
    )


def test_cli_refuses_a_seven_level_alias_bomb_at_once(tmp_path):
    """7 levels (10^8 leaves in 400 bytes) never finished before the fix."""
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text(_bomb(7))
    assert len(cfg.read_bytes()) < 500
    r = _cli(["rules", "--class", "edge", "--config", str(cfg)], tmp_path, timeout=30)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip() == f"accel-drc: {cfg}:1: YAML anchors/aliases are not supported"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 101 + "]" * 101, 1),
        ("x: " + "{a: " * 150 + "1" + "}" * 150 + "\n", 1),
        ("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 150)) + "  " * 150 + "v\n", 101),
        ("- " * 120 + "1\n", 1),
        ("a:\n  - b:\n" + "".join("  " * (i + 2) + "- [\n" for i in range(110)), 100),
    ],
)
def test_yaml_nesting_deeper_than_the_bound_is_refused_before_parsing(text, line):
    with pytest.raises(InputError) as ei:
        load_yaml("f.yaml", text)
    assert str(ei.value) == (
        f"f.yaml:{line}: YAML nested more than {yamlsafe.MAX_DEPTH} levels deep is not supported"
    )


def test_yaml_nesting_within_the_bound_and_brackets_in_strings_load():
    assert load_yaml("f.yaml", "[" * 99 + "]" * 99).data is not None
    deep = "".join("  " * i + f"k{i}:\n" for i in range(90)) + "  " * 90 + "v\n"
    assert load_yaml("f.yaml", deep).data is not None
    text = 'why: \'a [[[[ b\' # [[[[\nc: "[[[\\" ["\nd: see [1 and {\n' + "".join(
        f"e{i}: '[[[['\n" for i in range(200)
    )
    assert load_yaml("f.yaml", text).data["d"] == "see [1 and {"
    # the real rule files come nowhere near the bound
    for p in (packs.RULES_DIR.glob("*.yaml"), packs.RULES_DIR.glob("classes/*.yaml")):
        for f in p:
            depth, over = yamlsafe.nesting_depth(f.read_text(encoding="utf-8"))
            assert over == 0 and depth < yamlsafe.MAX_DEPTH // 4, (f, depth)


def test_recursion_error_is_an_input_error(monkeypatch):
    """Whatever the bound, running out of Python stack is bad input (exit 3), not a crash."""
    monkeypatch.setattr(yamlsafe, "MAX_DEPTH", 10**6)
    with pytest.raises(InputError) as ei:
        load_yaml("f.yaml", "[" * 3000 + "]" * 3000)
    # what we promise is an input error naming the file, in our words, whichever bound hit first
    # (Python's recursion limit, or libyaml's own depth bound since libyaml 0.2.6 / PyYAML 6.0.4)
    assert str(ei.value).startswith("f.yaml"), str(ei.value)
    assert "YAML nested too deeply" in str(ei.value), str(ei.value)


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_cli_deep_nesting_is_exit_3_not_a_crash(tmp_path, depth):
    """5,000 deep gave 'internal error: RecursionError' (exit 2), 100,000 a segfault."""
    cfg = tmp_path / "accel-drc.yaml"
    cfg.write_text("x: " + "[" * depth + "]" * depth + "\n")
    r = _cli(["rules", "--class", "edge", "--config", str(cfg)], tmp_path)
    assert r.returncode == 3, (r.returncode, r.stderr[-300:])
    assert r.stderr.strip() == (
        f"accel-drc: {cfg}:1: YAML nested more than {yamlsafe.MAX_DEPTH} levels deep is not supported"
    )


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("2027-02-30", "cannot read '2027-02-30': day is out of range for month"),
        ("2027-13-01", "cannot read '2027-13-01': month must be in 1..12"),
    ],
)
def test_impossible_date_in_a_pack_names_file_and_line(tmp_path, value, words):
    body = textwrap.dedent(GOOD).replace('version: "1"', f"version: {value}")
    p = _pack(tmp_path, body)
    with pytest.raises(InputError) as ei:
        load_pack(p, LIB.signals, LIB.foils)
    assert str(ei.value) == f"{p}:2: {words}"


def test_yaml_12_exponent_floats_are_numbers():
    doc = load_yaml(
        "f.yaml", "a: 1e-9\nb: [2E6, 1.5e3, -3e+2, .5e1, 1.0e-9, '1e-9', 1e, e5, 1_0]\n"
    )
    assert doc.data == {
        "a": 1e-9,
        "b": [2e6, 1500.0, -300.0, 5.0, 1e-9, "1e-9", "1e", "e5", 10],
    }
    assert isinstance(doc.data["a"], float)


def test_pack_params_accept_exponent_floats(tmp_path):
    body = textwrap.dedent(GOOD).replace("{max_df: 0.004}", "{max_df: 4e-3}")
    [r] = load_pack(_pack(tmp_path, body), LIB.signals, LIB.foils).rules
    assert r.params == {"max_df": 0.004}


# --- wording of rule data ----------------------------------------------------------------------


def test_pcie_assumption_note_suggests_no_pattern_as_if_it_matched():
    """The note used to say `signals: pcie5: ['.*PCIe_.*']` on every board, matching or not."""
    note = LIB.families["pcie"].note
    assert "PCIe_" not in note and "pcie5: [...]" in note
    assert "for example only" in note and "whole net name" in note
    assert "evidence.declare" in note


def test_via_stub_why_states_the_basis_of_each_limit():
    """Each max_stub_mm is Bogatin's 0.3/baud; the why must say so and give the Dk at which that
    length is 10× Nyquist (≈ 3.87), and what 10× Nyquist allows at Dk 3.5 (0.250 mm for PCIe
    Gen5, 0.151 mm for NVLink 4; the old text claimed 0.238 / 0.143 at Dk 3.5)."""
    c = 299_792_458.0
    seen = 0
    for p in (LIB.packs[c] for c in CLASSES):  # the pack files (general is derived from them)
        for r in p.rules:
            if r.check != "via_stub":
                continue
            seen += 1
            s = LIB.signals[r.signal]
            stub = r.params["max_stub_mm"]
            assert stub == pytest.approx(25.4 * 0.3 / s.baud_gbd, abs=0.0006)
            assert f"0.3 / {s.baud_gbd:g} in = {stub:.3f} mm" in r.why, r.id
            dk = float(re.search(r"only at Dk_eff (\d\.\d\d)", r.why).group(1))
            assert dk == pytest.approx((c / (40 * s.nyquist_hz * stub * 1e-3)) ** 2, abs=0.006)
            assert 3.8 < dk < 3.95, r.id
            at35 = float(re.search(r"at Dk 3\.5, 10× Nyquist would allow (\d\.\d{3}) mm", r.why)[1])
            assert at35 == pytest.approx(c / (40 * s.nyquist_hz * 3.5**0.5) * 1e3, abs=0.0006)
            assert "mm at Dk 3.5)" not in r.why
            assert r.source.startswith("[bogatin2015-stub] stub length (in) < 0.3 / symbol"), r.id
            if r.params["require_backdrill"]:
                assert r.why.endswith("This class requires backdrill on these vias."), r.id
    # + the 11 interfaces of issue 19 §3 and the 7 family members of issue 27 §4 in each pack
    # + QSGMII, 3G-SDI, 12G-SDI, LPDDR4X of issue 27 §4 (1000BASE-T and LVDS: no stub limit)
    assert seen == 39 + 3 * 11 + 3 * 7 + 3 * 4
    by = {r.id: r for r in LIB.packs["edge"].rules}
    assert "would allow 0.250 mm" in by["edge.via_stub.pcie5"].why
    assert "would allow 0.151 mm" in by["edge.via_stub.nvlink4"].why


def test_bundled_signal_ids_remembered_from_the_last_load(monkeypatch, tmp_path) -> None:
    """The reports' "what to declare" blocks ask for the bundled library's signal ids after the
    check loaded it: answered from that load while rules/signals.yaml is unchanged (no second
    load), loaded again once the file changes."""
    import os
    import shutil

    from accel_drc import packs

    rules = tmp_path / "rules"
    shutil.copytree(packs.RULES_DIR, rules)
    monkeypatch.setattr(packs, "RULES_DIR", rules)
    want = frozenset(packs.load_library().signals)
    real = packs.load_library
    loads = []

    def counting(*a, **k):  # noqa: ANN002, ANN003, ANN202
        loads.append(a)
        return real(*a, **k)

    monkeypatch.setattr(packs, "load_library", counting)
    assert packs.bundled_signal_ids() == want and loads == []
    sig = rules / "signals.yaml"
    sig.write_text(sig.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    os.utime(sig, ns=(1, 1))
    assert packs.bundled_signal_ids() == want and len(loads) == 1
