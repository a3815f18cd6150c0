"""Citable sources: ``rules/references.yaml``, the ``[id] place`` citations in every ``source``,
the load-time check that every cited id exists, and the reports that expand them.

Users cannot open the project's working notes, so no text a user sees may name one: no seed
file name (``000_…txt``), no ``domain.md``, no ``§`` section.  The scan runs every check on the
real fixture boards and the committed synthetic boards, and reads ``accel-drc rules``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from accel_drc.errors import InputError
from accel_drc.packs import RULES_DIR, load_library, load_references
from accel_drc.references import (
    Reference,
    References,
    bibliography,
    check_source,
    cited_ids,
    resolve,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LIB = load_library()

#: what a user can never open: the seed articles' file names, the internal domain notes, a
#: section (§) of them or of the project's issues, the shared working directory.  A § of a
#: published document ("Johnson & Graham §1.6") is a real place and stays allowed.
INTERNAL = re.compile(
    r"\b\d{3}_[0-9a-f]{16}\.txt\b|\bseeds? 00\d\b|domain\.md|\bdomain\W{0,3}§"
    r"|\bissue \d+\W{0,3}§|/work/shared"
)


def _internal(text: Any) -> list[str]:
    return INTERNAL.findall(str(text or ""))


# --------------------------------------------------------------------------------------------
# the references file and the citation syntax
# --------------------------------------------------------------------------------------------


def test_every_reference_is_complete_and_the_articles_are_the_real_publications() -> None:
    refs = LIB.references
    assert len(refs) >= 20
    for r in refs.values():
        assert r.author and r.title and r.publisher and 1900 < r.year <= 2100, r.id
        assert r.url or r.document, r.id
        assert not _internal(r.citation()), r.id
    # the articles the class packs follow, as the world can find them
    np = refs["nextpcb2026"]
    assert np.author == "Arya Li" and np.year == 2026 and np.publisher == "NextPCB blog"
    assert np.url == "https://www.nextpcb.com/blog/ai-training-vs-inference-pcb-design-differences"
    assert "AI Training vs AI Inference: Why They Need Different PCB Designs" in np.title
    assert "PCB Design Parameter" in np.note and "Required Laminate (Df)" in np.note
    assert refs["nextpcb2026-first"].url == np.url
    assert refs["bogatin2015-stub"].author == "Eric Bogatin"
    assert "0.3 / BR[Gbps]" in refs["bogatin2015-stub"].note
    assert refs["jedec-ddr5"].document == "JESD79-5"
    # a field nobody checked against the document is marked, never silently asserted
    assert "[U]" in refs["ipc4562"].citation()
    assert "[U]" not in refs["jedec-ddr5"].citation()


def test_citation_format() -> None:
    r = Reference("x", "A. Author", "What it says?", "Publisher", 2020, url="https://e.org/x")
    assert r.citation() == "A. Author. \u201cWhat it says?\u201d Publisher, 2020. https://e.org/x"
    r = Reference("y", "B", "T", "P", 1999, document="IPC-1", unconfirmed=("document",))
    assert r.citation() == "B. \u201cT.\u201d P, 1999. IPC-1 [U]."
    assert r.to_dict()["citation"] == r.citation() and r.to_dict()["unconfirmed"] == ["document"]
    assert "http" not in Reference("z", "C", "T", "P", 2001, url="https://e.org").short()


def test_cited_ids_and_check_source() -> None:
    refs = LIB.references
    src = "[nextpcb2026] PCB Design Parameter table; [U] 85 ohm; [bogatin2015-stub] rule"
    assert cited_ids(src) == ["nextpcb2026", "bogatin2015-stub"]
    assert [r.id for r in resolve(refs, src)] == ["nextpcb2026", "bogatin2015-stub"]
    assert cited_ids("[U] typical, no primary source") == []
    assert check_source(src, refs) is None
    assert check_source("[U] typical value, no primary source", refs) is None
    # a typo in an id, an internal note, a bare name: each is refused, saying what to do
    why = check_source("[nextpcb2062] table", refs)
    assert why and "[nextpcb2062]" in why and "references.yaml" in why
    assert "cites no publication" in (check_source("domain.md §4", refs) or "")
    assert "[in]" in (check_source("[bogatin2015-stub] L[in] < 0.3", refs) or "")
    # a project's override text may bracket words of its own: resolved ids only
    assert resolve(refs, "ACME spec [rev-b]; [ipc2152]")[0].id == "ipc2152"
    bib = bibliography(refs, [src, None, src, "[ipc2152] charts"])
    assert list(bib) == ["nextpcb2026", "bogatin2015-stub", "ipc2152"]
    assert bib["ipc2152"]["citation"].startswith("IPC. \u201cIPC-2152")
    assert bibliography({}, [src]) == {}


# --------------------------------------------------------------------------------------------
# every source under rules/ cites; an unknown id is a file:line error (exit 3)
# --------------------------------------------------------------------------------------------


def _all_sources() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def walk(x: Any, where: str) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("source", "follows") and isinstance(v, str):
                    out.append((f"{where}.{k}", v))
                else:
                    walk(v, f"{where}.{k}")
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")

    for f in sorted(RULES_DIR.glob("*.yaml")) + sorted(RULES_DIR.glob("classes/*.yaml")):
        # signal_rules.yaml holds templates ('{source}'): the rules they make are checked below
        if f.name not in ("references.yaml", "signal_rules.yaml"):
            walk(yaml.safe_load(f.read_text(encoding="utf-8")), f.name)
    for pack in LIB.packs.values():  # every rule as loaded, the generated per-signal ones too
        out += [(r.id, r.source) for r in pack.rules]
    return out


def test_every_source_under_rules_cites_known_references() -> None:
    sources = _all_sources()
    assert len(sources) > 200
    used: set[str] = set()
    for where, src in sources:
        assert check_source(src, LIB.references) is None, (where, src)
        assert not _internal(src), (where, src)
        used.update(cited_ids(src))
    # the data really rests on the publications, not only on [U]
    assert {"nextpcb2026", "nextpcb2026-first", "bogatin2015-stub", "pcie-base"} <= used
    assert {"ipc4101", "ipc4562", "smith1999", "panasonic-megtron7"} <= used
    for p in LIB.packs.values():
        assert check_source(p.follows, LIB.references) is None
        for r in p.rules:
            if r.check == "via_stub":
                assert cited_ids(r.source)[0] == "bogatin2015-stub", r.id
            if r.check in ("layer_count", "tg", "copper_weight"):
                assert r.source.startswith("[nextpcb2026] PCB Design Parameter table"), r.id


@pytest.fixture()
def rules_copy(tmp_path: Path) -> Path:
    out = tmp_path / "rules"
    shutil.copytree(RULES_DIR, out)
    return out


def _replace_line(path: Path, old: str, new: str) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(k for k, line in enumerate(lines) if old in line)
    lines[i] = lines[i].replace(old, new)
    path.write_text("\n".join(lines), encoding="utf-8")
    return i + 1


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("classes/edge.yaml", "[nextpcb2026] Inference Deployment", "[nextpcb2062] Inference"),
        ("signals.yaml", "[pcie-base] Gen5, 32 GT/s", "[pcisig5] Gen5, 32 GT/s"),
        ("materials.yaml", "[rogers-ro4000] RO4350B", "[rogers] RO4350B"),
        ("foils.yaml", "[ipc4562] profile S", "[ipc-4562] profile S"),
        ("capacitors.yaml", "[U] typical 0402", "[mlcc] typical 0402"),
    ],
)
def test_unknown_reference_is_a_file_line_error(
    rules_copy: Path, file: str, old: str, new: str
) -> None:
    line = _replace_line(rules_copy / file, old, new)
    # the error names the line of the `source:` key (a folded value starts below it)
    lines = (rules_copy / file).read_text(encoding="utf-8").split("\n")
    while "source:" not in lines[line - 1]:
        line -= 1
    with pytest.raises(InputError) as exc:
        load_library(rules_copy)
    assert exc.value.exit_code == 3
    text = str(exc.value)
    assert text.startswith(f"{rules_copy / file}:{line}:"), text
    assert new.split("]")[0] + "]" in text and "references.yaml" in text


def test_source_without_citation_is_refused(rules_copy: Path) -> None:
    p = rules_copy / "classes" / "edge.yaml"
    line = _replace_line(p, "[nextpcb2026] Inference Deployment table", "the seed's table")
    with pytest.raises(InputError, match="cites no publication") as exc:
        load_library(rules_copy)
    assert str(exc.value).startswith(f"{p}:{line}:")


def test_references_file_is_validated(rules_copy: Path) -> None:
    p = rules_copy / "references.yaml"
    line = _replace_line(p, "year: 2009", "year: two thousand nine")
    with pytest.raises(InputError) as exc:
        load_references(p)
    assert f"references.yaml:{line}:" in str(exc.value)
    shutil.copy(RULES_DIR / "references.yaml", p)
    text = p.read_text(encoding="utf-8")
    # an entry with neither URL nor document number cannot be found by a reader
    text = text.replace("    document: IPC-2152\n", "")
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError):
        load_references(p)
    # and the library refuses a missing references file with the file's name
    p.unlink()
    with pytest.raises(InputError, match="references.yaml"):
        load_library(rules_copy)


# --------------------------------------------------------------------------------------------
# nothing a user sees names an internal file or section; reports expand the citations
# --------------------------------------------------------------------------------------------


def _boards() -> list[tuple[Path, Path | None]]:
    synth = FIXTURES / "synth" / "boards"
    out: list[tuple[Path, Path | None]] = []
    for b in sorted((FIXTURES / "boards").glob("*/*.kicad_pcb")):
        out.append((b, None))
    out.append(
        (
            next((FIXTURES / "boards" / "m2-oculink-adapter").glob("*.kicad_pcb")),
            FIXTURES / "configs" / "m2-oculink-nvlink-training.yaml",
        )
    )
    for b in sorted(synth.glob("*.kicad_pcb")):
        out.append((b, None))
        out.append((b, b.with_name(b.stem + ".accel-drc.yaml")))
    return out


@pytest.mark.parametrize(
    ("board", "config"), _boards(), ids=lambda p: p.name if isinstance(p, Path) else "no-config"
)
def test_no_internal_reference_reaches_a_user(board: Path, config: Path | None) -> None:
    from accel_drc.config import ProjectConfig, load_config
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report.json_report import to_dict
    from accel_drc.report.sarif import to_sarif

    b = read_board(str(board))
    cfg = load_config(str(config), str(board), LIB) if config else ProjectConfig()
    result = check_board(b, cfg, board_file=str(board), library=LIB)
    assert result.findings
    for e in result.classification.evidence:
        assert not _internal(e.source) and not _internal(e.note), e
        if e.what != "override":  # the classifier's votes cite; an override names its setter
            assert check_source(e.source, LIB.references) is None, e.source
    for f in result.findings:
        for text in (f.source, f.why, f.message):
            assert not _internal(text), (f.rule, text)
    for run in result.rules:
        assert not _internal(run.rule.source) and not _internal(run.rule.why), run.rule.id
    doc = to_dict(result)
    assert not _internal(json.dumps(doc["findings"], ensure_ascii=False))
    assert not _internal(json.dumps(doc["classification"], ensure_ascii=False))
    # every id the report cites comes with its full citation
    cited = {i for f in doc["findings"] for i in f["references"]}
    cited |= {i for r in doc["rules"] for i in r["references"]}
    cited |= {i for e in doc["classification"]["evidence"] for i in e["references"]}
    assert cited and cited == set(doc["references"])
    for rid, ref in doc["references"].items():
        assert ref["citation"] == LIB.references[rid].citation()
    sarif = to_sarif(result)
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert not _internal(rule["help"]["text"]), rule["id"]
        for ref in rule["properties"]["references"]:
            assert f"[{ref['id']}] {ref['citation']}" in rule["help"]["text"]
    from accel_drc.report.junit import to_element

    for case in to_element(result).iter("testcase"):
        out = case.findtext("system-out") or ""
        assert not _internal(out)
        for ref in resolve(LIB.references, out.partition("; source: ")[2].split("\n")[0]):
            assert f"[{ref.id}] {ref.citation()}" in out


def test_rules_command_has_no_internal_reference_and_cites_in_full(capsys: Any) -> None:
    from accel_drc.cli import run_rules

    assert run_rules(SimpleNamespace(board_class=None, config=None, json=False)) == 0
    text = capsys.readouterr().out
    assert not _internal(text)
    head, _, refs = text.partition("\nReferences (")
    listed = re.findall(r"(?m)^  \[([a-z0-9._-]+)\] ", refs)
    # every id the sources cite is listed once (a why's "L[in]" is not an id)
    assert set(listed) == set(cited_ids(head)) & set(LIB.references)
    assert len(listed) == len(set(listed))
    for rid in listed:
        assert LIB.references[rid].url[:30] in refs or LIB.references[rid].document[:10] in refs

    assert run_rules(SimpleNamespace(board_class="training", config=None, json=True)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert not _internal(json.dumps(doc, ensure_ascii=False))
    for r in doc["rules"]:
        assert r["references"] == [x.id for x in resolve(LIB.references, r["source"])]
        assert r["references"] or "[U]" in r["source"], r["id"]
        assert set(r["references"]) <= set(doc["references"])
    assert doc["references"]["nextpcb2026"]["author"] == "Arya Li"


def test_html_links_citations_to_a_references_section() -> None:
    from accel_drc.config import load_config
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report.html import cite_html, render

    board = FIXTURES / "synth" / "boards" / "edge-carrier.kicad_pcb"
    b = read_board(str(board))
    cfg = load_config(str(board.with_name("edge-carrier.accel-drc.yaml")), str(board), LIB)
    result = check_board(b, cfg, board_file=str(board), library=LIB)
    page = render(result, b)
    section = re.search(r'<section id="references".*?</section>', page, re.S)
    assert section, "no References section"
    ids = re.findall(r'<li id="ref-([a-z0-9._-]+)">', section.group(0))
    assert "nextpcb2026" in ids and "bogatin2015-stub" in ids
    for rid in ids:
        ref = LIB.references[rid]
        assert str(ref.year) in section.group(0) and (ref.url or ref.document)[:20] in page
        assert f'href="#ref-{rid}"' in page  # cited from the evidence or the rules table
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert set(data["refs"]) == set(ids)
    assert not _internal(re.sub(r"<[^>]+>", " ", page))
    # the filter escapes the text and links only known ids
    out = str(cite_html(LIB.references, "<b>[nextpcb2026] x; [nope] y [U]"))
    assert out.startswith('&lt;b&gt;<a class="cite" href="#ref-nextpcb2026"')
    assert "[nope] y [U]" in out and "http" not in out
    assert str(cite_html(References(), "[nextpcb2026]")) == "[nextpcb2026]"


@pytest.mark.browser
def test_finding_panel_links_its_citations_in_the_browser(chromium: str, tmp_path: Path) -> None:
    """Select a finding in a real report: its Source shows each [id] as a link to the
    References section, one Reference line per cited publication, no console error, no request."""
    from accel_drc.config import load_config
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report import html
    from browser.cdp import Browser

    board = FIXTURES / "synth" / "boards" / "edge-carrier.kicad_pcb"
    b = read_board(str(board))
    cfg = load_config(str(board.with_name("edge-carrier.accel-drc.yaml")), str(board), LIB)
    result = check_board(b, cfg, board_file=str(board), library=LIB)
    path = tmp_path / "report.html"
    html.write(path, result, b)
    k, f = next((i, f) for i, f in enumerate(result.findings) if cited_ids(f.source))
    br = Browser(chromium)
    br.enable()
    try:
        br.navigate(path.resolve().as_uri())
        br.wait_for("window.__accelDrc && window.__accelDrc.ready", timeout=60)
        br.eval(f"document.querySelector('tr[data-i=\"{k}\"]').click()")
        br.wait_for("document.querySelector('#detail a.cite') !== null", timeout=10)
        links = br.eval(
            "JSON.stringify(Array.from(document.querySelectorAll('#detail a.cite'))"
            ".map(function (a) { return [a.getAttribute('href'), a.textContent]; }))"
        )
        every = re.findall(r"\[([^\[\]\s]+)\]", f.source)
        want = [[f"#ref-{i}", f"[{i}]"] for i in every if i in LIB.references]
        assert json.loads(links) == want
        detail = br.eval("document.getElementById('detail').textContent")
        for i in cited_ids(f.source):
            assert f"[{i}] {LIB.references[i].short()}" in detail
            assert br.eval(f"document.getElementById('ref-{i}') !== null")
        assert br.console_errors() == []
    finally:
        br.close()
