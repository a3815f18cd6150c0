"""JUnit XML: one testcase per rule that ran, so CI dashboards show rules as tests.

``failure`` = the rule found violations (any severity; ``type`` says which), ``error`` = it could
not check something (missing data: cannot verify), ``skipped`` = everything it found was waived.
A rule with both violations and cannot-verify findings gets both elements.  A rule that examined
items and found nothing passes; the number examined is in ``system-out``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from ..hostile import xml_text
from ..references import resolve
from ..results import CheckResult, Finding, Severity, Status


def _owner(rule_ids: set[str], fid: str) -> str | None:
    base = fid
    while base not in rule_ids and "." in base:
        base = base.rsplit(".", 1)[0]
    return base if base in rule_ids else None


def _lines(fs: list[Finding]) -> str:
    return "\n".join(
        f"[{f.severity.value}] {f.message}"
        + (f" (declare: {f.evidence['declare']})" if "declare" in f.evidence else "")
        for f in fs
    )


def to_element(result: CheckResult) -> ET.Element:
    ids = {r.rule.id for r in result.rules}
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    orphans: list[Finding] = []
    for f in result.findings:
        owner = _owner(ids, f.rule)
        if owner is None:
            orphans.append(f)
        else:
            by_rule[owner].append(f)
    cls = result.classification.board_class
    suites = ET.Element("testsuites", name="accel-drc")
    suite = ET.SubElement(
        suites, "testsuite", name=f"accel-drc {cls} ({result.board_file})", timestamp=result.date
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="accel-drc.version", value=result.tool_version)
    kicad = result.extras.get("kicad_drc")
    if isinstance(kicad, dict):  # check --kicad-drc
        ET.SubElement(
            props, "property", name="kicad.version", value=str(kicad.get("kicad_version"))
        )
    tests = failures = errors = skipped = 0
    for run in result.rules:
        r = run.rule
        fs = by_rule.get(r.id, [])
        case = ET.SubElement(
            suite, "testcase", classname=f"accel-drc.{r.pack or cls}.{r.check}", name=r.id, time="0"
        )
        tests += 1
        viol = [f for f in fs if f.status == Status.VIOLATION]
        cant = [f for f in fs if f.status == Status.CANNOT_VERIFY]
        waived = [f for f in fs if f.status == Status.WAIVED]
        if viol:
            failures += 1
            worst = (
                "error"
                if any(f.severity == Severity.ERROR for f in viol)
                else ("warning" if any(f.severity == Severity.WARNING for f in viol) else "info")
            )
            el = ET.SubElement(
                case, "failure", message=f"{len(viol)} violation(s): {viol[0].message}", type=worst
            )
            el.text = _lines(viol)
        if cant:
            errors += 1
            el = ET.SubElement(
                case,
                "error",
                message=f"{len(cant)} item(s) cannot be verified: {cant[0].message}",
                type="cannot_verify",
            )
            el.text = _lines(cant)
        if waived and not viol and not cant:
            skipped += 1
            ET.SubElement(
                case,
                "skipped",
                message=f"{len(waived)} finding(s) waived: {waived[0].waiver.get('reason', '') if waived[0].waiver else ''}",
            )
        out = ET.SubElement(case, "system-out")
        out.text = f"{run.checked} item(s) checked; why: {r.why}; source: {r.source}" + "".join(
            f"\n[{c.id}] {c.citation()}" for c in resolve(result.references, r.source)
        )
    for f in orphans:  # findings of no rule that ran (should not happen): still visible
        tests += 1
        case = ET.SubElement(suite, "testcase", classname="accel-drc.other", name=f.rule, time="0")
        el = ET.SubElement(
            case,
            "failure" if f.status == Status.VIOLATION else "error",
            message=f.message,
            type=f.severity.value,
        )
        el.text = f.message
        failures += f.status == Status.VIOLATION
        errors += f.status != Status.VIOLATION
    for el in suites.iter():
        # XML 1.0 cannot carry C0 controls (a net named "TX\x01" made the file unreadable): shown
        # escaped, as \x01, in every attribute and text
        for key, value in el.attrib.items():
            el.set(key, xml_text(value))
        if el.text:
            el.text = xml_text(el.text)
    for el in (suite, suites):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", str(errors))
        el.set("skipped", str(skipped))
    return suites


def dumps(result: CheckResult) -> str:
    root = to_element(result)
    ET.indent(root) if hasattr(ET, "indent") else None
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: str, result: CheckResult) -> None:
    from ..hostile import write_text

    write_text(path, dumps(result))  # atomic (temp file + rename); '-' is stdout
