"""The HTML report's cannot-verify groups carry their accel-drc.yaml block (issue #31 item 7),
and a board that is no accelerator board reads as such (not "general with confidence 1.00").

In a real headless Chromium: every group of the JSON report's ``cannot_verify[]`` is on the page
in the same order with the same count, and its ``<pre>`` text is exactly the JSON's
``declare_yaml``; a net name with markup in it stays text; the Copy button copies that text
(clipboard API) or selects it where the API is missing.  On vme-wren (required in CI) and on
the coral fixture with a net renamed to hostile markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from accel_drc.report import html
from accel_drc.report.json_report import cannot_verify_groups
from browser.cdp import Browser
from conftest import FIXTURE_BOARDS, ROOT, SHARED_BOARDS, need

VME = SHARED_BOARDS / "vme-wren" / "vme-wren.kicad_pcb"
HOBBY = ROOT / "fixtures" / "checks" / "classify" / "hobby_2layer.kicad_pcb"
#: the coral fixture's PCIe receive pair is renamed to this (a "/PER_0…" name keeps its type)
MARKUP = "/PER_0<img src=x onerror=window.__pwned=1>&amp;"

#: each group on the page: its title, the count it resolves, its block's text, element children
GROUPS_JS = (
    "JSON.stringify([].map.call(document.querySelectorAll('#cannot-verify details.cv-group'),"
    "function(d){var pre=d.querySelector('pre.yaml');return {title:"
    "d.querySelector('summary strong').textContent,count:+d.querySelector('.declare-count')"
    ".textContent,yaml:pre?pre.textContent:null,children:pre?pre.children.length:-1};}))"
)


def _check(board_path: Path, out: Path) -> tuple[Path, object, object]:
    """The real pipeline on ``board_path``: the HTML report written to ``out``, the result, board."""
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board

    board = read_board(str(board_path))
    result = check_board(board, board_file=str(board_path))
    html.write(out, result, board)
    return out, result, board


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    b = Browser(chromium, 1400, 900)
    b.enable()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def vme(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, object]:
    need(VME.is_file(), f"the vme-wren board is not beside the clone: {VME}")
    return _check(VME, tmp_path_factory.mktemp("vme") / "vme-wren.html")


@pytest.fixture(scope="module")
def hostile_coral(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, object]:
    """The coral fixture with its PCIe receive pair renamed to a name holding markup."""
    tmp = tmp_path_factory.mktemp("coral")
    text = FIXTURE_BOARDS["coral-tpu-m2-adapter"].read_text(encoding="utf-8")
    assert '"/PER_0+"' in text
    pcb = tmp / "coral.kicad_pcb"
    pcb.write_text(text.replace('"/PER_0', '"' + MARKUP.replace('"', '\\"')), encoding="utf-8")
    return _check(pcb, tmp / "coral.html")


def _open(browser: Browser, path: Path) -> list[dict]:
    browser.navigate(path.resolve().as_uri())
    browser.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)
    return json.loads(browser.eval(GROUPS_JS))


def _assert_groups_match_json(page_groups: list[dict], result: object) -> None:
    want = cannot_verify_groups(result)
    assert want, "the board has no cannot-verify group to show"
    assert [(g["title"], g["count"]) for g in page_groups] == [
        (g["declare"], g["count"]) for g in want
    ]
    for got, exp in zip(page_groups, want):
        assert got["yaml"] == exp["declare_yaml"], got["title"]
        assert got["children"] == 0  # text only, no element parsed out of it


@pytest.mark.browser
def test_vme_wren_every_group_shows_its_yaml(browser: Browser, vme) -> None:
    path, result, _board = vme
    _assert_groups_match_json(_open(browser, path), result)


@pytest.mark.browser
def test_markup_in_a_net_name_stays_text(browser: Browser, hostile_coral) -> None:
    path, result, _board = hostile_coral
    groups = _open(browser, path)
    _assert_groups_match_json(groups, result)
    # the name as the block's net pattern (regex-escaped), verbatim, tags and entity included
    assert any(re.escape(MARKUP) in g["yaml"] for g in groups), [g["yaml"] for g in groups]
    assert browser.eval("window.__pwned === undefined && !document.querySelector('pre img')")
    # nothing of the name was parsed as a tag anywhere on the page
    assert "<img src=x" not in path.read_text(encoding="utf-8")


@pytest.mark.browser
def test_copy_button_copies_or_selects(browser: Browser, hostile_coral) -> None:
    path, _result, _board = hostile_coral
    groups = _open(browser, path)
    first = groups[0]["yaml"]
    # the clipboard API (stubbed: headless Chromium on file:// has no user clipboard)
    copied = browser.eval(
        "new Promise(function(ok){navigator.clipboard.writeText=function(t){ok(t);"
        "return Promise.resolve();};document.querySelector('button.copy-yaml').click();})"
    )
    assert copied == first
    browser.wait_for("document.querySelector('.copy-state').textContent === 'copied'")
    # no clipboard API: the block is selected for Ctrl+C
    selected = browser.eval(
        "Object.defineProperty(navigator,'clipboard',{value:undefined,configurable:true});"
        "document.querySelector('button.copy-yaml').click();window.getSelection().toString()"
    )
    assert selected.rstrip("\n") == first.rstrip("\n")  # a selection drops the last newline
    assert browser.eval("document.querySelector('.copy-state').textContent")


def test_general_board_reads_not_an_accelerator_board(tmp_path: Path) -> None:
    """A 2-layer hobby board is class ``general``: the banner and the Classification section say
    "not an accelerator board" with the classifier's evidence, never a confidence."""
    path, result, _board = _check(HOBBY, tmp_path / "hobby.html")
    assert result.classification.board_class == "general"
    page = path.read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))
    assert "classified as general" not in text and "confidence 100 %" not in text
    assert "Class general not an accelerator board" in text
    why = result.classification.evidence[0].value
    assert "2 copper layers" in why
    assert f"The board is not an accelerator board (class general): {why}." in text
