"""The live reader against a real KiCad 9 and 10 (PCB editor under Xvfb with its API server on):
``python -m accel_drc_kicad inspect --json`` of the open board must print the document
``accel-drc inspect --json`` prints for the board file — every fixture board, one KiCad each.

Only the fields that name the source differ by design: ``source``/``project_file`` (the same
files, absolute), ``format`` (``kipy``) and ``kicad_version`` (the inspection reports the version
of the *file's* writer, which a live board does not have).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURE_BOARDS, ROOT, need, need_live_kicad
from kicad_live import VERSIONS, LiveKiCad

PLUGIN = ROOT / "plugin"
pytestmark = [pytest.mark.kicad, pytest.mark.slow]

#: fields that say where the board came from, not what it is
SOURCE_FIELDS = ("source", "project_file", "format", "kicad_version")


def _have_kipy() -> bool:
    try:
        import kipy  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(
    scope="module",
    params=[(v, name) for v in VERSIONS for name in sorted(FIXTURE_BOARDS)],
    ids=lambda p: f"kicad{p[0]}-{p[1]}",
)
def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveKiCad]:
    version, name = request.param
    need_live_kicad(version)
    need(_have_kipy(), "kicad-python (kipy) is not installed")
    kicad = LiveKiCad(
        FIXTURE_BOARDS[name], tmp_path_factory.mktemp(f"kicad{version}-{name}"), version=version
    )
    kicad.start()
    try:
        yield kicad
    finally:
        kicad.stop()


def plugin_env(kicad: LiveKiCad) -> dict[str, str]:
    """What KiCad gives a plugin: the socket (and our plugin package on the path)."""
    env = dict(os.environ)
    env["KICAD_API_SOCKET"] = kicad.socket
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGIN), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["TMPDIR"] = str(kicad.tmp)
    return env


def run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)} -> {r.returncode}\n{r.stderr[-3000:]}"
    return json.loads(r.stdout)


def test_live_inspect_equals_file_inspect(live: LiveKiCad) -> None:
    got = run_json(
        [sys.executable, "-m", "accel_drc_kicad", "inspect", "--json"], env=plugin_env(live)
    )
    want = run_json([sys.executable, "-m", "accel_drc.cli", "inspect", "--json", str(live.board)])
    assert got["format"] == "kipy" and want["format"] == "kicad_pcb"
    assert Path(got["source"]) == live.board.resolve()
    for key in SOURCE_FIELDS:
        got.pop(key)
        want.pop(key)
    # the fields the issue names first, so a failure says which one
    for key in (
        "layer_count",
        "copper_layers",
        "counts",
        "via_types",
        "via_spans",
        "stackup",
        "board_size_mm",
        "board_bbox_mm",
        "board_thickness_mm",
    ):
        assert got[key] == want[key], key
    assert got == want


def test_live_reader_matches_file_reader_in_detail(live: LiveKiCad) -> None:
    """Below the inspect summary: every via's span, drill and protection, every pad's place,
    size and schematic pin name/type, every zone's filled area per layer (to 1 µm / 1e-3
    mm²; the file reader places pads with floating-point rotation, KiCad with integer
    nanometres)."""
    from accel_drc.readers.kicad_file import read

    sys.path.insert(0, str(PLUGIN))
    from accel_drc_kicad.connection import connect, open_board
    from accel_drc_kicad.live_reader import read_live

    os.environ["KICAD_API_SOCKET"] = live.socket
    try:
        kicad = connect()
        got = read_live(kicad, open_board(kicad))
    finally:
        os.environ.pop("KICAD_API_SOCKET", None)
    want = read(str(live.board))

    def vias(b: object) -> list[tuple]:
        v = b.vias  # type: ignore[attr-defined]
        return sorted(
            zip(
                v.uuid,
                v.start.tolist(),
                v.end.tolist(),
                v.drill.round(6).tolist(),
                v.diameter.round(6).tolist(),
                v.types,
            )
        )

    assert vias(got) == vias(want)
    # IPC-4761 via protection, via by via (KiCad 9's (tenting none) included)
    assert {got.vias.uuid[i]: p for i, p in got.vias.protection.items()} == {
        want.vias.uuid[i]: p for i, p in want.vias.protection.items()
    }
    gp = {p.uuid: (fp.reference, p) for fp, p in got.pads}
    wp = {p.uuid: (fp.reference, p) for fp, p in want.pads}
    assert gp.keys() == wp.keys()
    for uuid, (ref, p) in wp.items():
        gref, q = gp[uuid]
        assert (gref, q.number, q.type, q.shape, q.copper_layers) == (
            ref,
            p.number,
            p.type,
            p.shape,
            p.copper_layers,
        ), uuid
        assert (q.x, q.y, q.width, q.height) == pytest.approx(
            (p.x, p.y, p.width, p.height), abs=1e-3
        )
        assert q.drill_mm == pytest.approx(p.drill_mm, abs=1e-6)
        # the schematic pin's name and type (interface recognition by ball and pin names)
        assert (q.pin_function, q.pin_type) == (p.pin_function, p.pin_type), uuid
    gz = {z.uuid: z for z in got.zones}
    assert gz.keys() == {z.uuid for z in want.zones}
    for z in want.zones:
        g = gz[z.uuid]
        assert (g.net_name, g.layers, g.keepout, g.priority) == (
            z.net_name,
            z.layers,
            z.keepout,
            z.priority,
        )
        assert g.filled.keys() == z.filled.keys()
        for layer in z.filled:
            assert g.filled_area_mm2(layer) == pytest.approx(z.filled_area_mm2(layer), abs=1e-3)

    def tracks(b: object) -> dict[str, tuple]:
        t = b.tracks  # type: ignore[attr-defined]
        return {
            u: (b.nets[n], layer, round(w, 6), bool(arc))  # type: ignore[attr-defined]
            for u, n, layer, w, arc in zip(
                t.uuid, t.net.tolist(), t.layer.tolist(), t.width.tolist(), t.is_arc.tolist()
            )
        }

    assert tracks(got) == tracks(want)
    assert {n: got.net_classes.class_of(n) for n in got.nets} == {
        n: want.net_classes.class_of(n) for n in want.nets
    }


def test_every_stackup_path_agrees_where_kicad_fills_it(live: LiveKiCad) -> None:
    """``--stackup string`` (the exact, slower path: the live board text) gives the file's
    stack-up; ``--stackup api`` gives the same layers and thicknesses but, on KiCad 9.0.x, no
    dielectric material/εr/tan δ (the bug the default path works around)."""
    file = run_json([sys.executable, "-m", "accel_drc.cli", "inspect", "--json", str(live.board)])
    cmd = [sys.executable, "-m", "accel_drc_kicad", "inspect", "--json", "--stackup"]
    exact = run_json([*cmd, "string"], env=plugin_env(live))
    assert exact["stackup"] == file["stackup"]
    assert exact["board_thickness_mm"] == file["board_thickness_mm"]
    api = run_json([*cmd, "api"], env=plugin_env(live))
    assert [(r["name"], r["thickness_mm"]) for r in api["stackup"]] == [
        (r["name"], r["thickness_mm"]) for r in file["stackup"]
    ]
    from kipy import KiCad

    major = KiCad(socket_path=live.socket, timeout_ms=30_000).get_version().major
    dielectrics = [r for r in api["stackup"] if r["name"].startswith("dielectric")]
    if major == 9:
        assert all(r["material"] is None and r["epsilon_r"] is None for r in dielectrics)


def test_unsaved_stackup_edits_are_checked_as_in_the_editor(live: LiveKiCad) -> None:
    """The saved file no longer says what the editor holds (as after an unsaved stack-up edit:
    here the file on disk changes instead, the same comparison): the default path reads the live
    board text on a board this size, so the editor's dielectrics are checked (review: the
    saved-header shortcut reported the file's Megtron6 while the editor had FR4)."""
    import re

    cmd = [sys.executable, "-m", "accel_drc_kicad", "inspect", "--json"]
    before = run_json(cmd, env=plugin_env(live))
    original = live.board.read_bytes()
    text = original.decode("utf-8")
    at = text.index('(layer "dielectric 1"')  # every fixture names its first dielectric's
    m = re.compile(r'\(material "([^"]*)"\)').search(text, at, at + 600)  # material (KiCad 6-9)
    assert m is not None, live.board.name
    edited = text[: m.start(1)] + "Megtron6 (edited on disk)" + text[m.end(1) :]
    try:
        live.board.write_text(edited, encoding="utf-8")
        after = run_json(cmd, env=plugin_env(live))
    finally:
        live.board.write_bytes(original)
    assert after["stackup"] == before["stackup"]
    assert not any("saved file" in w for w in after.get("warnings", []))
