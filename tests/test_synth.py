"""The synthetic board generator (``fixtures/synth/generate.py``): KiCad opens every board and
counts exactly what the generator says it wrote, KiCad's own load-and-save gives back the same
bytes (the format is KiCad 9's, to the tab), IPC-2581 export works, the output is deterministic,
``--scale`` multiplies the routed content of the training board, the committed boards are what
the generator writes today, and the routed geometry is sane (no copper of two nets touching on a
layer, each pair at its intended gap)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from _scripts import load_script
from conftest import ROOT

SYNTH = ROOT / "fixtures" / "synth"
GENERATOR = SYNTH / "generate.py"
COMMITTED = SYNTH / "boards"
BOARDS = ("training-hgx", "inference-pcie5", "edge-carrier")
COUNT_KEYS = ("copper_layers", "segments", "arcs", "vias", "footprints", "pads", "nets", "zones")


def _gen_module() -> ModuleType:
    return load_script(str(GENERATOR.relative_to(ROOT)), "synth_generate")


gen = _gen_module()


def generate(out: Path, *args: str) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, str(GENERATOR), str(out), *args], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    return {
        p.name[: -len(".counts.json")]: json.loads(p.read_text("utf-8"))
        for p in out.rglob("*.counts.json")
    }


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def boards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All three boards at seed 1, scale 1 (training-hgx ≈ 36 MB: generated, never committed)."""
    out = tmp_path_factory.mktemp("synth")
    generate(out)
    return out


@pytest.fixture(scope="module")
def clean_boards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth-clean")
    generate(out, "--clean")
    return out


def all_boards(boards: Path, clean_boards: Path) -> Iterator[Path]:
    yield from (boards / f"{n}.kicad_pcb" for n in BOARDS)
    yield from (clean_boards / n / f"{n}.kicad_pcb" for n in BOARDS)


def count_in_text(path: Path) -> dict[str, int]:
    """Independent of the generator's bookkeeping: count the items in the file text."""
    text = path.read_text("utf-8")
    return {
        "copper_layers": len(re.findall(r'^\t\t\(\d+ "(?:F|B|In\d+)\.Cu" ', text, re.M)),
        "segments": text.count("\n\t(segment\n"),
        "arcs": text.count("\n\t(arc\n"),
        "vias": len(re.findall(r"^\t\(via(?: blind| buried)?\n", text, re.M)),
        "footprints": text.count("\n\t(footprint "),
        "pads": text.count("\n\t\t(pad "),
        "nets": text.count("\n\t(net "),
        "zones": text.count("\n\t(zone\n"),
    }


# --- the generator on its own --------------------------------------------------------------------


def test_manifest_matches_file_text(boards: Path, clean_boards: Path) -> None:
    for pcb in all_boards(boards, clean_boards):
        manifest = json.loads(pcb.with_suffix("").with_suffix(".counts.json").read_text("utf-8"))
        assert {k: manifest[k] for k in COUNT_KEYS} == count_in_text(pcb), pcb.name
        assert manifest["file_bytes"] == pcb.stat().st_size
        text = pcb.read_text("utf-8")
        assert text.startswith('(kicad_pcb\n\t(version 20241229)\n\t(generator "pcbnew")\n')
        assert text.endswith("\t(embedded_fonts no)\n)\n")


def test_board_shapes(boards: Path) -> None:
    """What the issue asks of each board: layers, outline size, stack-up materials."""
    want = {
        "training-hgx": (26, (500.0, 450.0), ("Megtron 7", "Tachyon 100G")),
        "inference-pcie5": (14, (312.0, 111.0), ("R-5775(N)", "Megtron 6")),
        "edge-carrier": (6, (100.0, 80.0), ("370HR",)),
    }
    for name, (layers, size, materials) in want.items():
        text = (boards / f"{name}.kicad_pcb").read_text("utf-8")
        counts = count_in_text(boards / f"{name}.kicad_pcb")
        assert counts["copper_layers"] == layers
        xy = np.array(
            re.findall(
                r"\(gr_line\n\t\t\(start ([\d.]+) ([\d.]+)\)\n\t\t\(end ([\d.]+) ([\d.]+)\)", text
            ),
            dtype=float,
        ).reshape(-1, 2)
        assert tuple(xy.max(axis=0) - xy.min(axis=0)) == size
        for m in materials:
            assert m in text[text.index("(stackup") : text.index("(copper_finish")]
        assert "addsublayer" in text or name == "edge-carrier"


def test_training_content(boards: Path) -> None:
    c = json.loads((boards / "training-hgx.counts.json").read_text("utf-8"))
    facts = c["facts"]
    assert facts["nvlink_pairs"] == 1152 and facts["nvlink_nets"] == 2304
    assert len(facts["nvlink_layers"]) == 6
    assert facts["decaps"]["VDD_0V8"] >= 600 and facts["decaps"]["VDDQ_1V1"] == 3
    text = (boards / "training-hgx.kicad_pcb").read_text("utf-8")
    nvl = set(re.findall(r'\(net \d+ "(NVL_G\d_L\d\d_(?:TX|RX)\d_[PN])"\)', text))
    assert len(nvl) == 2304
    assert text.count('"GH100 SXM5 GPU"') == 8 and text.count('"NVSwitch 3"') == 4
    # 2-3 oz planes on the 0.8 V rail except the deliberate 1 oz one, and the wrong laminate
    stack = text[text.index("(stackup") : text.index("(copper_finish")]
    assert re.search(r'"In20.Cu"\n\t\t\t\t\(type "copper"\)\n\t\t\t\t\(thickness 0.035\)', stack)
    assert re.search(r'"In12.Cu"\n\t\t\t\t\(type "copper"\)\n\t\t\t\t\(thickness 0.105\)', stack)
    assert '"Megtron 6 1078"' in stack
    for value in ('"100n"', '"1u"', '"4u7"', '"10uF"', '"100uF"'):
        assert value in text


def test_deterministic_and_seeded(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", "--only", "inference-pcie5", "--only", "edge-carrier")
    b = generate(tmp_path / "b", "--only", "inference-pcie5", "--only", "edge-carrier")
    c = generate(tmp_path / "c", "--seed", "7", "--only", "edge-carrier")
    for name in a:
        for ext in (".kicad_pcb", ".kicad_pro", ".counts.json", ".expected.yaml"):
            assert sha(tmp_path / "a" / (name + ext)) == sha(tmp_path / "b" / (name + ext))
    assert a == b
    assert sha(tmp_path / "a" / "edge-carrier.kicad_pcb") != sha(
        tmp_path / "c" / "edge-carrier.kicad_pcb"
    )
    assert {k: c["edge-carrier"][k] for k in COUNT_KEYS} == {
        k: a["edge-carrier"][k] for k in COUNT_KEYS
    }


def test_training_deterministic(boards: Path, tmp_path: Path) -> None:
    generate(tmp_path, "--only", "training-hgx")
    assert sha(tmp_path / "training-hgx.kicad_pcb") == sha(boards / "training-hgx.kicad_pcb")


def test_committed_boards_are_what_the_generator_writes(boards: Path, clean_boards: Path) -> None:
    committed = sorted(p.relative_to(COMMITTED) for p in COMMITTED.rglob("*") if p.is_file())
    assert committed, "fixtures/synth/boards is empty"
    for rel in committed:
        fresh = (
            (clean_boards / rel.relative_to("clean")) if rel.parts[0] == "clean" else boards / rel
        )
        assert sha(COMMITTED / rel) == sha(fresh), f"{rel} is stale: rerun the generator"
    for p in COMMITTED.rglob("*.kicad_pcb"):
        assert p.stat().st_size < 5_000_000


def test_scale_multiplies_routed_content(tmp_path: Path) -> None:
    """Segments and vias grow linearly with K; K = 8 then gives >= 1 M segments, >= 100 k vias
    (the 300 MB board itself is measured by bench/bench_scale.py, not here)."""
    c1 = generate(tmp_path / "k1", "--only", "training-hgx", "--scale", "1")["training-hgx"]
    c2 = generate(tmp_path / "k2", "--only", "training-hgx", "--scale", "2")["training-hgx"]
    c3 = generate(tmp_path / "k3", "--only", "training-hgx", "--scale", "3")["training-hgx"]
    for key in ("segments", "vias"):
        d1, d2 = c2[key] - c1[key], c3[key] - c2[key]
        assert d1 == d2 > 0, key  # exactly linear in K
        at8 = c1[key] + 7 * d1
        assert at8 >= (1_000_000 if key == "segments" else 100_000), (key, at8)
    assert c2["segments"] / c1["segments"] > 1.9
    for key in ("footprints", "pads", "nets", "zones", "copper_layers"):
        assert c1[key] == c2[key] == c3[key]  # only routed content scales
    b1, b2 = c2["file_bytes"] - c1["file_bytes"], c3["file_bytes"] - c2["file_bytes"]
    assert abs(b1 - b2) < 0.01 * b1  # bytes linear in K too
    assert c1["file_bytes"] + 7 * b1 > 250e6  # K = 8 is the ≈ 300 MB board


# --- geometry sanity --------------------------------------------------------------------------


def _segments(path: Path) -> dict[str, list[tuple[float, float, float, float, float, int]]]:
    text = path.read_text("utf-8")
    out: dict[str, list[tuple[float, float, float, float, float, int]]] = {}
    for m in re.finditer(
        r"\(segment\n\t\t\(start ([\d.]+) ([\d.]+)\)\n\t\t\(end ([\d.]+) ([\d.]+)\)\n\t\t"
        r'\(width ([\d.]+)\)\n\t\t\(layer "([^"]+)"\)\n\t\t\(net (\d+)\)',
        text,
    ):
        x0, y0, x1, y1, w = (float(v) for v in m.group(1, 2, 3, 4, 5))
        out.setdefault(m.group(6), []).append((x0, y0, x1, y1, w, int(m.group(7))))
    return out


@pytest.mark.parametrize("name", ["inference-pcie5", "edge-carrier", "training-hgx"])
def test_no_two_nets_touch_and_pairs_keep_their_gap(name: str, tmp_path: Path) -> None:
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import LineString
    from shapely.strtree import STRtree

    args = ["--only", name] + (["--scale", "0.25"] if name == "training-hgx" else [])
    generate(tmp_path, *args)
    pcb = tmp_path / f"{name}.kicad_pcb"
    text = pcb.read_text("utf-8")
    net_names = dict((int(i), n) for i, n in re.findall(r'^\t\(net (\d+) "([^"]*)"\)', text, re.M))
    facts = json.loads((tmp_path / f"{name}.counts.json").read_text("utf-8"))["facts"]
    gap = facts["pair_gap_mm"]
    off = facts.get("off_target_pair")
    bad = {off[0]: off[2]} if off else {}
    if name == "edge-carrier":
        bad = {"USB3_SSRX1": 0.1}
    assert shapely.__version__
    for layer, segs in _segments(pcb).items():
        geoms = [
            LineString([(a, b), (c, d)]).buffer(w / 2, quad_segs=4) for a, b, c, d, w, _ in segs
        ]
        nets = [s[5] for s in segs]
        tree = STRtree(geoms)
        pairs = tree.query(geoms, predicate="intersects")
        for i, j in zip(*pairs):
            assert nets[i] == nets[j] or i == j, f"{layer}: nets {nets[i]} and {nets[j]} touch"
        # the closest P-N approach of every pair is its gap (edge to edge), to 2 µm
        by_net: dict[int, list[int]] = {}
        for k, n in enumerate(nets):
            by_net.setdefault(n, []).append(k)
        lines = [LineString([(a, b), (c, d)]) for a, b, c, d, _, _ in segs]
        for n, idx in by_net.items():
            pname = net_names[n]
            if not pname.endswith("_P"):
                continue
            partner = [k for k, v in net_names.items() if v == pname[:-1] + "N"][0]
            jdx = by_net[partner]
            # skip the breakout segments (first and last of each net), which fan out to the balls
            core_p = idx[1:-1] if len(idx) > 2 else idx
            dist = min(lines[i].distance(lines[j]) for i in core_p for j in jdx)
            width = segs[idx[0]][4]
            want = bad.get(pname[:-2], gap)
            assert abs(dist - width - want) < 0.002, (layer, pname, dist - width, want)


# --- KiCad itself -------------------------------------------------------------------------------

PCBNEW_COUNT = r"""
import json, sys, pcbnew
src, dst = sys.argv[1], sys.argv[2]
b = pcbnew.LoadBoard(src)
segs = arcs = vias = 0
for t in b.GetTracks():
    c = t.GetClass()
    if c == "PCB_VIA":
        vias += 1
    elif c == "PCB_ARC":
        arcs += 1
    else:
        segs += 1
fps = list(b.GetFootprints())
out = dict(copper_layers=b.GetCopperLayerCount(), segments=segs, arcs=arcs, vias=vias,
           footprints=len(fps), pads=sum(len(f.Pads()) for f in fps), nets=b.GetNetCount(),
           zones=b.GetAreaCount())
if dst != "-":
    pcbnew.SaveBoard(dst, b)
print(json.dumps(out))
"""


@pytest.mark.kicad
@pytest.mark.slow
def test_pcbnew_counts_and_round_trip(
    pcbnew_python: str, boards: Path, clean_boards: Path, tmp_path: Path
) -> None:
    """pcbnew.LoadBoard counts exactly what the manifest says, and SaveBoard of the loaded board
    writes the very same bytes: KiCad 9 reads every item and has nothing to normalise."""
    script = tmp_path / "count.py"
    script.write_text(PCBNEW_COUNT, "utf-8")
    for pcb in all_boards(boards, clean_boards):
        saved = tmp_path / ("resaved-" + pcb.name)
        r = subprocess.run(
            [pcbnew_python, str(script), str(pcb), str(saved)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        got = json.loads(r.stdout.strip().splitlines()[-1])
        manifest = json.loads(pcb.with_suffix("").with_suffix(".counts.json").read_text("utf-8"))
        assert got == {k: manifest[k] for k in COUNT_KEYS}, pcb
        assert sha(saved) == sha(pcb), f"KiCad rewrote {pcb.name} differently"
        saved.unlink()


@pytest.mark.kicad
@pytest.mark.parametrize("name", ["inference-pcie5", "edge-carrier"])
def test_ipc2581_export(kicad_cli: str, name: str, boards: Path, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.xml"
    r = subprocess.run(
        [kicad_cli, "pcb", "export", "ipc2581", "-o", str(out), str(boards / f"{name}.kicad_pcb")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    xml = out.read_text("utf-8")
    assert "<IPC-2581" in xml[:4000]
    layers = json.loads((boards / f"{name}.counts.json").read_text("utf-8"))["copper_layers"]
    conductors = re.findall(r'<Layer name="([^"]+)" layerFunction="CONDUCTOR"', xml)
    assert conductors == [gen.cu_name(i, layers) for i in range(layers)]


@pytest.mark.kicad
@pytest.mark.slow
def test_ipc2581_export_training(kicad_cli: str, tmp_path: Path) -> None:
    """The 26-layer board exports too.  KiCad's exporter takes ≈ 100 s on its 42,000 BGA pads
    whatever the routing, so this runs on the smallest scale (the pads are all there)."""
    generate(tmp_path, "--only", "training-hgx", "--scale", "0.05")
    out = tmp_path / "training-hgx.xml"
    r = subprocess.run(
        [
            kicad_cli,
            "pcb",
            "export",
            "ipc2581",
            "-o",
            str(out),
            str(tmp_path / "training-hgx.kicad_pcb"),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.stat().st_size > 1_000_000


# --- the generator's own impedance maths (it aims the pairs at their targets) -------------------


def test_stripline_zdiff_against_cohn_exact() -> None:
    """At t = 0 the generator's formula is Cohn's exact one: check it against an independent
    numeric evaluation of K(k')/K(k) by quadrature."""

    def kk(k: float) -> float:  # K(k) by midpoint quadrature of 1/sqrt(1 - k^2 sin^2)
        n = 200_000
        th = (np.arange(n) + 0.5) * (np.pi / 2) / n
        return float(np.sum(1 / np.sqrt(1 - (k * np.sin(th)) ** 2)) * (np.pi / 2) / n)

    w, s, b, er = 0.1, 0.15, 0.25, 3.4
    ko = np.tanh(np.pi * w / (2 * b)) / np.tanh(np.pi * (w + s) / (2 * b))
    z0o = 30 * np.pi / np.sqrt(er) * kk(np.sqrt(1 - ko**2)) / kk(ko)
    assert gen.stripline_zdiff(w, s, b, 0.0, er) == pytest.approx(2 * z0o, rel=1e-4)
    # at the same plane spacing, strip thickness lowers the impedance a few per cent
    assert 0.8 < gen.stripline_zdiff(w, s, b, 0.018, er) / (2 * z0o) < 1.0


def test_fmt_writes_numbers_like_kicad() -> None:
    assert [gen.fmt(v) for v in (100.0, 0.035, -0.48, 1e-7, 12.3456789, -0.0)] == [
        "100",
        "0.035",
        "-0.48",
        "0",
        "12.345679",
        "0",
    ]
    table = gen.NumTable(2)
    assert list(table(np.array([0, 1, 10, 1500, 2000]))) == ["0", "0.001", "0.01", "1.5", "2"]
    assert gen.natural_key("A10") > gen.natural_key("A2") and gen.natural_key(
        "AA1"
    ) > gen.natural_key("A10")
