"""The trust rule, in one place: a FAIL rests only on measured, declared or library inputs."""

from __future__ import annotations

import pytest
from accel_drc.basis import Basis, describe, flips, normalise, settle
from accel_drc.results import Finding, Severity, Status


def _f(status: Status = Status.VIOLATION, **evidence: object) -> Finding:
    return Finding(
        rule="edge.via_stub.pcie4",
        check="via_stub",
        severity=Severity.ERROR,
        status=status,
        message="stub 1.500 mm > 0.476 mm",
        measured=1.5,
        limit=0.476,
        unit="mm",
        evidence=evidence,
    )


def test_facts_stay_violations_and_show_their_basis() -> None:
    f = settle(_f(basis={"stub": "measured", "er": "declared", "df": "library"}))
    assert f.status == Status.VIOLATION
    assert f.evidence["basis"] == {"stub": "measured", "er": "declared", "df": "library"}
    assert f.message.endswith("[measured: stub; declared: er; library: df]")
    assert "conditional" not in f.evidence


@pytest.mark.parametrize("weak", ["default", "assumed"])
def test_a_violation_on_a_default_or_assumption_is_conditional(weak: str) -> None:
    f = settle(_f(basis={"stub": "measured", "signal": weak}, declare="declare the generation"))
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["conditional"]["outcome"] == "violation"
    assert f.evidence["conditional"]["rests_on"] == {"signal": weak}
    assert f.message.startswith(f"conditional (rests on {weak} signal): stub 1.500 mm")
    assert "declare the generation" in f.message
    assert f.measured == 1.5  # the computed number is kept


def test_candidates_say_where_the_verdict_flips() -> None:
    f = settle(
        _f(
            basis={"stub": "measured", "signal": "assumed"},
            candidates={"pcie3": "pass", "pcie4": "fail", "pcie5": "fail"},
            candidates_of="signal",
        )
    )
    assert f.status == Status.CANNOT_VERIFY
    assert "fails pcie4, pcie5; passes pcie3" in f.message
    assert f.evidence["conditional"]["flips"] == "fails pcie4, pcie5; passes pcie3"


def test_a_guess_every_candidate_of_which_fails_is_a_fact() -> None:
    f = settle(
        _f(
            basis={"stub": "measured", "class": "assumed"},
            class_candidates={"training": "fail", "inference": "fail", "edge": "fail"},
        )
    )
    assert f.status == Status.VIOLATION
    assert f.evidence["robust_to"] == ["class"]
    assert "class (fails for every class)" in f.message


def test_two_weak_inputs_one_robust_stays_conditional() -> None:
    f = settle(
        _f(
            basis={"stub": "measured", "class": "assumed", "er": "default"},
            class_candidates={"training": "fail", "inference": "fail", "edge": "fail"},
        )
    )
    assert f.status == Status.CANNOT_VERIFY
    assert f.evidence["conditional"]["rests_on"] == {"er": "default"}


def test_cannot_verify_and_no_basis_are_left_alone() -> None:
    bare = _f()
    assert settle(bare) is bare
    cv = settle(_f(Status.CANNOT_VERIFY, basis={"signal": "assumed"}))
    assert cv.status == Status.CANNOT_VERIFY and "conditional" not in cv.evidence


def test_unknown_basis_is_refused() -> None:
    with pytest.raises(ValueError):
        normalise({"stub": "measurd"})
    assert normalise({"x": Basis.LIBRARY}) == {"x": "library"}
    assert describe({"a": "assumed", "b": "measured"}) == "measured: b; assumed: a"
    assert flips({}) == ""


def test_auto_class_makes_class_dependent_violations_conditional() -> None:
    """A limit every class shares fails under every class (a fact even with the class guessed);
    a limit only the guessed class has is conditional on the guess; declared, it is a fact."""
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from conftest import FIXTURES

    board = read_board(str(FIXTURES / "kicad_versions" / "kicad9.kicad_pcb"))
    assert board.layer_count == 4
    classes = ("training", "inference", "edge")
    strict = {"params": {"min": 6, "max": 8}}
    res = check_board(board, config={"rules": {f"{c}.layer_count": strict for c in classes}})
    cls = res.classification.board_class
    assert res.classification.source == "auto"
    lc = [f for f in res.findings if f.check == "layer_count"]
    assert len(lc) == 1 and lc[0].status == Status.VIOLATION, lc
    # the override makes every class's rule equal: the class is then no input at all
    assert "class" not in lc[0].evidence.get("basis", {})

    loose = {"params": {"min": 1, "max": 40}}
    cfg = {"rules": {f"{c}.layer_count": (strict if c == cls else loose) for c in classes}}
    res = check_board(board, config=cfg)
    lc = [f for f in res.findings if f.check == "layer_count"]
    assert len(lc) == 1 and lc[0].status == Status.CANNOT_VERIFY
    assert lc[0].evidence["conditional"]["rests_on"] == {"class": "assumed"}
    assert lc[0].evidence["class_candidates"] == {
        c: ("fail" if c == cls else "pass") for c in (cls, *[x for x in classes if x != cls])
    }
    assert "class:" in lc[0].evidence["declare"]

    res = check_board(board, config=cfg, board_class=cls)
    lc = [f for f in res.findings if f.check == "layer_count"]
    assert len(lc) == 1 and lc[0].status == Status.VIOLATION
    assert lc[0].evidence["basis"]["class"] == "declared"


def test_a_guessed_class_whose_every_limit_fails_is_a_fact() -> None:
    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from conftest import FIXTURES

    board = read_board(str(FIXTURES / "kicad_versions" / "kicad9.kicad_pcb"))
    classes = ("training", "inference", "edge")
    lim = {"training": 20, "inference": 12, "edge": 6}  # 4 layers fail all three
    cfg = {"rules": {f"{c}.layer_count": {"params": {"min": lim[c], "max": 40}} for c in classes}}
    res = check_board(board, config=cfg)
    lc = [f for f in res.findings if f.check == "layer_count"]
    assert len(lc) == 1 and lc[0].status == Status.VIOLATION
    assert lc[0].evidence["robust_to"] == ["class"]
    assert set(lc[0].evidence["class_candidates"].values()) == {"fail"}


def test_reports_lead_with_error_violations_and_count_in_sentences() -> None:
    """Error violations first, then error cannot-verify, warnings, info, waived last; the
    counters read "3 errors: 1 violation, 2 cannot verify · 1 info: 1 cannot verify"."""
    from dataclasses import replace

    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report.text import summary
    from accel_drc.results import rank
    from conftest import FIXTURES

    board = read_board(str(FIXTURES / "kicad_versions" / "kicad9.kicad_pcb"))
    res = check_board(board, board_class="edge")
    mk = [
        _f(Status.CANNOT_VERIFY),
        replace(_f(), severity=Severity.INFO, status=Status.CANNOT_VERIFY),
        _f(Status.VIOLATION),
        replace(_f(), severity=Severity.WARNING),
        _f(Status.CANNOT_VERIFY),
    ]
    res = replace(res, findings=sorted(mk, key=rank))
    order = [(f.severity.value, f.status.value) for f in res.findings]
    assert order == [
        ("error", "violation"),
        ("error", "cannot_verify"),
        ("error", "cannot_verify"),
        ("warning", "violation"),
        ("info", "cannot_verify"),
    ]
    text = summary(res)
    assert (
        "findings: 3 errors: 1 violation, 2 cannot verify · 1 warning: 1 violation"
        " · 1 info: 1 cannot verify" in text
    )
    # and a real run is sorted so
    real = check_board(read_board(str(FIXTURES / "boards" / "crosslink-nx-video-converter"
                                      / "crosslink-nx-video-converter.kicad_pcb")))  # fmt: skip
    keys = [rank(f) for f in real.findings]
    assert keys == sorted(keys) and len(keys) > 3


def test_json_summary_counts_conditionals() -> None:
    from dataclasses import replace

    from accel_drc.pipeline import check_board
    from accel_drc.readers import read_board
    from accel_drc.report.json_report import summary_counts
    from conftest import FIXTURES

    board = read_board(str(FIXTURES / "kicad_versions" / "kicad9.kicad_pcb"))
    res = check_board(board, board_class="edge")
    got = [
        settle(_f(basis={"stub": "measured", "signal": "assumed"})),
        settle(_f(basis={"er": "default", "class": "assumed"})),
        settle(_f(basis={"stub": "measured"})),
    ]
    s = summary_counts(replace(res, findings=got))
    assert s["conditional"] == 2
    assert s["conditional_on"] == {"class": 1, "er": 1, "signal": 1}
    assert s["by_status"]["violation"] == 1
