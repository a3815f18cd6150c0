"""The reader is as lenient as KiCad's board parser about a missing '(' and as strict elsewhere.

Each case edits one spot of a small KiCad 9 board.  ``LOADS`` says whether KiCad 9.0.8's
``pcbnew.LoadBoard`` opens the result: checked by :func:`test_kicad_agrees` (one pcbnew process),
and the reader must agree case by case: read it (with one warning naming the line) or refuse it
with exit-3 style ``InputError``.  See ``accel_drc/readers/kicad_lenient.py`` for the parser loops.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from accel_drc.errors import InputError
from accel_drc.readers.kicad_file import read, read_text
from conftest import FIXTURES

BASE = (FIXTURES / "kicad_versions" / "kicad9.kicad_pcb").read_text()
FOOTPRINT = """	(footprint "R_0402"
		(layer "F.Cu")
		(uuid "5b1e6a40-0000-4000-8000-000000000041")
		(at 10 10)
		(descr "d")
		(pad "1" smd roundrect
			(at -0.48 0)
			(size 0.56 0.62)
			(layers "F.Cu" "F.Mask")
			(roundrect_rratio 0.25)
			(net 3 "/SIG1")
			(teardrops
				(best_length_ratio 0.5)
				(max_length 1)
				(best_width_ratio 1)
				(max_width 2)
				(curved_edges no)
				(filter_ratio 0.9)
				(enabled yes)
				(allow_two_segments yes)
				(prefer_zone_connections yes)
			)
			(uuid "5b1e6a40-0000-4000-8000-000000000042")
		)
	)
	(embedded_fonts no)"""
GOOD = BASE.replace("\t(embedded_fonts no)", FOOTPRINT)

#: name -> (text replaced, replacement, KiCad 9.0.8 opens it)
CASES: dict[str, tuple[str, str, bool]] = {
    # lenient loops: the keyword is read as a node
    "via size": ("(at 5 5)\n\t\t(size 0.5)", "(at 5 5)\n\t\tsize 0.5)", True),
    "via at right after (via": ("(via\n\t\t(at 5 5)", "(via at 5 5)", True),
    "zone keyword": (
        "(min_thickness 0.25)\n\t\t(filled_areas_thickness no)",
        "(min_thickness 0.25)\n\t\tfilled_areas_thickness no)",
        True,
    ),
    "zone fill keyword": (
        "(fill yes\n\t\t\t(thermal_gap 0.5)",
        "(fill yes\n\t\t\tthermal_gap 0.5)",
        True,
    ),
    "footprint descr": ('(descr "d")', 'descr "d")', True),
    "RoyalBlue teardrop": (
        "(curved_edges no)\n\t\t\t\t(filter_ratio 0.9)",
        "(curved_edges no)filter_ratio 0.9)",
        True,
    ),
    "bare flag, no value": ("(curved_edges no)\n", "curved_edges\n", True),
    # strict loops and everything else
    "segment end": ("(start 5 5)\n\t\t(end 15 5)", "(start 5 5)\n\t\tend 15 5)", False),
    "pad size": ("(size 0.56 0.62)", "size 0.56 0.62)", False),
    "board root net": ('(net 3 "/SIG1")\n\t(gr_poly', 'net 3 "/SIG1")\n\t(gr_poly', False),
    "stack-up finish": ('(copper_finish "ENIG")', 'copper_finish "ENIG")', False),
    "bare flag with a value": ("(curved_edges no)\n", "curved_edges no)\n", False),
    "via bare locked with a value": (
        "(at 5 5)\n\t\t(size 0.5)",
        "(at 5 5)\n\t\tlocked yes)\n\t\t(size 0.5)",
        False,
    ),
    "unknown keyword in a lenient loop": (
        "(curved_edges no)\n",
        "(curved_edges no) foo 1)\n",
        False,
    ),
    "extra ) in a lenient loop": ("(curved_edges no)\n", "(curved_edges no))\n", False),
    "extra ) in a segment": (
        '(width 0.1)\n\t\t(layer "In2.Cu")',
        '(width 0.1))\n\t\t(layer "In2.Cu")',
        False,
    ),
}


def variant(name: str) -> str:
    old, new, _ = CASES[name]
    assert GOOD.count(old) >= 1, name
    return GOOD.replace(old, new, 1)


def summary(text: str) -> dict:
    b = read_text(text, "t.kicad_pcb")
    return {
        "vias": [(v.x, v.y, v.diameter_mm, v.drill_mm, v.type, v.net) for v in b.vias],
        "tracks": len(b.tracks),
        "zones": [(z.net_name, z.layers, z.priority, z.keepout) for z in b.zones],
        "pads": [(p.number, p.x, p.y, p.net) for f in b.footprints for p in f.pads],
        "layers": [layer.name for layer in b.copper_layers],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_reader_is_as_lenient_as_kicad(name: str) -> None:
    text = variant(name)
    loads = CASES[name][2]
    if not loads:
        with pytest.raises(InputError, match="unbalanced parentheses"):
            read_text(text, "t.kicad_pcb")
        return
    board = read_text(text, "t.kicad_pcb")
    # read exactly as the intact board
    assert summary(text) == summary(GOOD)
    notes = [w for w in board.warnings if "has no opening '('" in w]
    if name == "bare flag, no value":
        assert notes == []  # balanced: a bare flag is KiCad's legacy form, nothing to say
        return
    assert len(notes) == 1, board.warnings
    keyword = notes[0].split("'")[1]
    new = CASES[name][1]
    at = text.index(new) + new.index(keyword)
    assert notes[0].startswith(f"line {text[:at].count(chr(10)) + 1}: "), notes[0]


def test_warns_once_per_kind_with_the_count() -> None:
    """Many slips of one kind are one warning with the count and the first line."""
    text = GOOD.replace(
        "(curved_edges no)\n\t\t\t\t(filter_ratio 0.9)", "(curved_edges no)filter_ratio 0.9)"
    )
    text = text.replace(
        "\t(embedded_fonts no)",
        FOOTPRINT.replace('"R_0402"', '"R2"').replace(
            "(curved_edges no)\n\t\t\t\t(filter_ratio 0.9)", "(curved_edges no)filter_ratio 0.9)"
        ),
    )
    text = text.replace("(at 5 5)\n\t\t(size 0.5)", "(at 5 5)\n\t\tsize 0.5)")
    board = read_text(text, "t.kicad_pcb")
    notes = [w for w in board.warnings if "has no opening '('" in w]
    assert len(notes) == 2, notes
    teardrop = next(w for w in notes if "filter_ratio" in w)
    assert "(2 places, the first shown)" in teardrop and "KiCad 9 writes" in teardrop
    assert len(board.footprints) == 2


def test_string_content_is_not_a_keyword() -> None:
    """A keyword inside a quoted string is text, never a missing node."""
    text = GOOD.replace('(descr "d")', '(descr "x) size 1)")').replace(
        "(segment\n\t\t(start 5 5)\n\t\t(end 15 5)", "(segment\n\t\t(start 5 5)\n\t\tend 15 5)"
    )
    with pytest.raises(InputError, match="unbalanced parentheses"):
        read_text(text, "t.kicad_pcb")


def test_strict_error_names_the_broken_item() -> None:
    """An extra ')' is reported at the top-level item that holds it, not at the file's end."""
    text = variant("extra ) in a segment")
    with pytest.raises(InputError) as err:
        read_text(text, "t.kicad_pcb")
    assert err.value.line == text[: text.index("(segment")].count("\n") + 1
    assert "(segment …)" in str(err.value)


def test_clean_board_has_no_repair_warning() -> None:
    board = read_text(GOOD, "t.kicad_pcb")
    assert not [w for w in board.warnings if "opening '('" in w]


@pytest.mark.kicad
def test_kicad_agrees(pcbnew_python: str, tmp_path: Path) -> None:
    """KiCad 9.0.8 opens exactly the cases marked so (one pcbnew process for all)."""
    paths = []
    for i, name in enumerate(sorted(CASES)):
        p = tmp_path / f"case{i}.kicad_pcb"
        p.write_text(variant(name))
        paths.append(str(p))
    script = (
        "import json, sys, pcbnew\n"
        "out = []\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        out.append(pcbnew.LoadBoard(p) is not None)\n"
        "    except Exception:\n"
        "        out.append(False)\n"
        "print('@@' + json.dumps(out))\n"
    )
    proc = subprocess.run(
        [pcbnew_python, "-c", script, *paths], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(next(x for x in proc.stdout.splitlines() if x.startswith("@@"))[2:])
    assert dict(zip(sorted(CASES), got)) == {n: CASES[n][2] for n in sorted(CASES)}


ROYALBLUE = Path("/usr/share/kicad/demos/royalblue54L_feather/RoyalBlue54L-Feather.kicad_pcb")


def test_royalblue_demo_reads_with_one_warning() -> None:
    """The demo KiCad 9.0.8 ships with 349 '(curved_edges no)filter_ratio 0.9)' (line 602 the
    first): read, one warning for the lot.  Counts against pcbnew: test_groundtruth_pcbnew.py."""
    if not ROYALBLUE.is_file():
        pytest.skip("Debian's kicad-demos is not installed")
    board = read(str(ROYALBLUE))
    notes = [w for w in board.warnings if "has no opening '('" in w]
    assert notes == [
        "line 602: 'filter_ratio' inside (teardrops …) has no opening '(' (349 places, the "
        "first shown) (KiCad 9 writes teardrop settings as '(curved_edges no)filter_ratio 0.9)'); "
        "KiCad's parser reads it as (filter_ratio …) and so does accel-drc"
    ]
    assert board.layer_count == 8 and len(board.vias) == 183
