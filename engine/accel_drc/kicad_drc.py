"""KiCad's own DRC in the same run: ``accel-drc check --kicad-drc``.

accel-drc checks what KiCad's DRC cannot (laminates, stubs, PDN); KiCad's DRC checks what accel-drc
does not (clearances, courtyards, unconnected items).  A team gating a board wants one gate: one
exit code, one SARIF, one JUnit, one HTML.  This module runs ``kicad-cli pcb drc --format json
--severity-all``, reads its report (KiCad 8, 9 and 10 JSON, ``drc.v1``), and turns every entry
into a :class:`~accel_drc.results.Finding` with ``check: kicad_drc`` and rule id
``kicad.<type>`` (KiCad's settings key, e.g. ``kicad.clearance``), KiCad's severity, position and
item uuids.  Their basis is ``measured``: KiCad measured them on the board.

**Exclusions.**  A designer excludes a DRC marker in KiCad; KiCad stores it in the project file
(``.kicad_pro`` ``board.design_settings.drc_exclusions``) as ``PCB_MARKER::SerializeToString()``:
``<settings key>|<marker x nm>|<marker y nm>|<main item uuid>|<aux item uuid>`` (``copper_sliver``,
``generic_warning``/``generic_error``: ``…|<main uuid>|<layer name>``; ``starved_thermal``:
``…|<main>|<aux>|<layer name>``; ``unconnected_items`` since 9.0.4:
``…|<layer name>|<marker type>|<main>|<aux>``).  KiCad 8 stores a list of those strings; KiCad 9
and 10 a list of ``[string, comment]`` pairs.  KiCad re-applies them after each DRC
(``BOARD::ResolveDRCExclusions``) by an exact string match of a fresh marker's serialisation, the
marker's **position** included; since 9.0.4 an ``unconnected_items`` marker matches on its type and
position alone (``FindByFirstNFields``, 3 fields).  So an exclusion lapses when KiCad places the
marker elsewhere: on the m2-oculink fixture KiCad 9.0.8 and 10.0.7 put the unconnected marker on
the pad (151.36 mm), not where the stored string has it (152.32 mm), and 10.0.7 moved the REF**
courtyard marker.

kicad-cli 9 and 10 run that resolution and write ``"excluded": true`` on every entry it applied
to (``RC_ITEM::GetJsonViolation``; unconnected items too, measured by moving the stored position
onto the pad): for their reports that flag *is* KiCad's verdict and accel-drc waives exactly the
flagged entries (:func:`apply_exclusions` with ``kicad_matched``).  Each stored exclusion is paired
with a flagged entry by settings key and item set (uuids are unique on a board; the report does
not keep KiCad's main/aux order) and reported *applied*; one whose items are still reported but
unflagged is *stale* with the reason (its marker moved).  KiCad 8's report has no flag; there the
JSON carries each item's position but not the marker's, so the string cannot be rebuilt, and
accel-drc matches the settings key and the set of item uuids, an exclusion taking the entry with
an item nearest its stored marker position where several share both.  Every exclusion is
reported as applied or stale like an accel-drc waiver; KiCad exclusions never expire.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import EXIT_BAD_INPUT, AccelDrcError, InputError, UsageError
from .hostile import is_regular
from .results import Finding, Rule, RuleRun, Severity, Status

log = logging.getLogger(__name__)

CHECK = "kicad_drc"
#: the rule every KiCad DRC finding belongs to in JUnit/SARIF when its type has no rule of its own
RULE_PREFIX = "kicad"
#: nm per mm (KiCad's internal unit in the serialised exclusions)
NM_PER_MM = 1_000_000
_UNITS_TO_MM = {"mm": 1.0, "mils": 0.0254, "in": 25.4}
#: the report sections and the word used for them
SECTIONS = ("violations", "unconnected_items", "schematic_parity")
#: KiCad's severities -> ours ("exclusion" is KiCad 10's word for an excluded marker)
_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING, "ignore": Severity.INFO}
#: exclusion formats whose 5th field is a layer name, not an aux uuid
_LAYER_KEYS = {"copper_sliver", "generic_warning", "generic_error"}
NIL_UUID = "00000000-0000-0000-0000-000000000000"
INSTALL_HINT = (
    "kicad-cli not found: --kicad-drc needs KiCad 8 or newer (https://www.kicad.org/download/; "
    "Debian/Ubuntu: apt install kicad; macOS: the KiCad app; or set ACCEL_DRC_KICAD_CLI to its path)"
)
WHY = (
    "KiCad's own design-rule check (clearances, courtyards, connectivity, the board's "
    "constraints and .kicad_dru rules), run in the same gate so one exit code, one SARIF and one "
    "report cover both tools."
)

#: while accel-drc waits for kicad-cli (2.5 minutes on a 69 MB board), stderr says so: on a
#: terminal one line redrawn every TTY_TICK_S, elsewhere (a CI log) a line every LOG_TICK_S
TTY_TICK_S = 1.0
LOG_TICK_S = 10.0


class KicadCliError(AccelDrcError):
    """kicad-cli ran but produced no usable report (exit 3 with its message)."""

    exit_code = EXIT_BAD_INPUT


@dataclass(frozen=True)
class Exclusion:
    """One ``drc_exclusions`` entry of the ``.kicad_pro``."""

    serialized: str
    key: str
    pos_mm: tuple[float, float] | None
    uuids: frozenset[str]
    layer: str | None = None
    comment: str = ""

    @classmethod
    def parse(cls, serialized: str, comment: str = "") -> Exclusion:
        """As ``PCB_MARKER::DeserializeFromString`` splits it (``|``-separated)."""
        parts = serialized.split("|")
        key = parts[0] if parts else ""
        pos: tuple[float, float] | None = None
        try:
            pos = (int(parts[1]) / NM_PER_MM, int(parts[2]) / NM_PER_MM)
        except (IndexError, ValueError):
            pos = None
        rest = parts[3:]
        layer = None
        if key in _LAYER_KEYS and len(rest) >= 2:
            layer, rest = rest[1], rest[:1]
        elif key == "starved_thermal" and len(rest) >= 3:
            layer, rest = rest[2], rest[:2]
        elif key == "unconnected_items" and len(rest) >= 4:
            layer, rest = rest[0], rest[2:4]  # 9.0.4+: |layer|marker type|main|aux
        uuids = frozenset(u.lower() for u in rest if u and u != NIL_UUID)
        return cls(serialized, key, pos, uuids, layer, comment or "")


def read_exclusions(pro_path: str | os.PathLike[str]) -> list[Exclusion]:
    """The ``board.design_settings.drc_exclusions`` of a ``.kicad_pro`` (KiCad 8: strings; 9/10:
    ``[string, comment]``); [] when the file or the key is missing.  The file is read with the
    board reader's bounds (a regular file of at most ``hostile.MAX_PROJECT_BYTES``, valid JSON):
    a project linked to ``/dev/zero`` is refused, not read until memory runs out."""
    from .readers.kicad_project import load_project_json

    if not os.path.exists(pro_path):
        return []
    doc, _ = load_project_json(str(pro_path))
    board = doc.get("board")
    settings = board.get("design_settings") if isinstance(board, Mapping) else None
    raw = (settings.get("drc_exclusions") if isinstance(settings, Mapping) else None) or []
    out = []
    for entry in raw if isinstance(raw, list) else []:
        if isinstance(entry, str):
            out.append(Exclusion.parse(entry))
        elif isinstance(entry, list) and entry and isinstance(entry[0], str):
            comment = entry[1] if len(entry) > 1 and isinstance(entry[1], str) else ""
            out.append(Exclusion.parse(entry[0], comment))
    return out


def find_kicad_cli() -> str | None:
    """``$ACCEL_DRC_KICAD_CLI``, else ``kicad-cli`` on PATH, else the platform's usual place."""
    env = os.environ.get("ACCEL_DRC_KICAD_CLI")
    if env:
        return env if os.path.isfile(env) else None
    found = shutil.which("kicad-cli")
    if found:
        return found
    system = platform.system()
    candidates = []
    if system == "Darwin":
        candidates.append("/Applications/KiCad/KiCad.app/Contents/MacOS/kicad-cli")
    elif system == "Windows":
        for ver in ("10.0", "9.0", "8.0"):
            candidates.append(rf"C:\Program Files\KiCad\{ver}\bin\kicad-cli.exe")
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


@dataclass
class KicadDrcRun:
    """What one ``kicad-cli pcb drc`` run produced, parsed, and the board's exclusions."""

    report: Mapping[str, Any]
    kicad_version: str
    command: list[str] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    project_file: str | None = None

    def info(self) -> dict[str, Any]:
        """What every output says about the KiCad run (``extras["kicad_drc"]``)."""
        counts = {s: len(self.report.get(s) or []) for s in SECTIONS}
        return {
            "kicad_version": self.kicad_version,
            "command": " ".join(self.command),
            "schema": self.report.get("$schema"),
            "source": self.report.get("source"),
            "date": self.report.get("date"),
            "coordinate_units": self.report.get("coordinate_units"),
            "counts": counts,
            "project_file": self.project_file,
            "exclusions": len(self.exclusions),
        }


def run(
    board_path: str,
    schematic_parity: bool = False,
    kicad_cli: str | None = None,
    timeout: float = 3600.0,
) -> KicadDrcRun:
    """Run ``kicad-cli pcb drc`` on ``board_path`` and read its JSON report.

    No kicad-cli: :class:`UsageError` (exit 1) naming how to install it, never a silent skip."""
    return start(board_path, schematic_parity, kicad_cli, timeout).result()


class Pending:
    """A ``kicad-cli pcb drc`` process running while accel-drc checks the board (kicad-cli is
    one process on one core; the checks use the other).  :meth:`result` waits for it and reads
    its report; :meth:`cancel` ends it (and its temp folder) when the check fails first."""

    def __init__(self, board_path: str, schematic_parity: bool, exe: str, timeout: float) -> None:
        self.board_path = board_path
        self.timeout = timeout
        self._tmp = tempfile.mkdtemp(prefix="accel-drc-kicad-")
        self._out = os.path.join(self._tmp, "drc.json")
        self._started = time.monotonic()
        cmd = [exe, "pcb", "drc", "--format", "json", "--severity-all", "--units", "mm"]
        if schematic_parity:
            cmd.append("--schematic-parity")
        self.shown = [*cmd[1:], "-o", "drc.json", os.path.basename(board_path)]
        cmd += ["-o", self._out, board_argument(board_path)]
        log.info("running %s", " ".join(cmd))
        try:
            self._proc: subprocess.Popen[str] | None = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                # kicad-cli's own temporary files (its instance lock folder org.kicad.kicad)
                # go into our folder: a kicad-cli ended by cancel() cannot remove them itself
                env={**os.environ, "TMPDIR": self._tmp, "TMP": self._tmp, "TEMP": self._tmp},
            )
        except OSError as exc:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise UsageError(f"{exe}: cannot run kicad-cli: {exc.strerror or exc}") from None

    def result(self) -> KicadDrcRun:
        proc = self._proc
        assert proc is not None, "result() after cancel()"
        try:
            out, err = self._wait(proc)
            if not os.path.isfile(self._out):
                said = (err or out or "").strip().splitlines()
                raise KicadCliError(
                    f"{self.board_path}: kicad-cli pcb drc wrote no report (exit {proc.returncode})"
                    + (f": {said[-1]}" if said else "")
                )
            try:
                report = json.loads(Path(self._out).read_text(encoding="utf-8"))
            except ValueError as exc:
                raise KicadCliError(f"kicad-cli's DRC report is not JSON: {exc}") from None
        finally:
            self._proc = None
            shutil.rmtree(self._tmp, ignore_errors=True)
        pro = Path(self.board_path).with_suffix(".kicad_pro")
        return from_report(
            report,
            exclusions=read_exclusions(pro),
            command=["kicad-cli", *self.shown],
            project_file=str(pro) if pro.is_file() else None,
        )

    def _wait(self, proc: subprocess.Popen[str]) -> tuple[str, str]:
        """kicad-cli's stdout and stderr once it exits, saying on stderr meanwhile what runs and
        for how long (:meth:`_progress`); killed after ``timeout`` s of waiting."""
        deadline = time.monotonic() + self.timeout
        tty = _stderr_is_tty()
        shown = False
        while True:
            tick = TTY_TICK_S if tty else LOG_TICK_S
            left = deadline - time.monotonic()
            try:
                out, err = proc.communicate(timeout=max(0.0, min(tick if shown else 0.0, left)))
                break
            except subprocess.TimeoutExpired:  # communicate() may be called again after it
                if time.monotonic() >= deadline:
                    proc.kill()
                    proc.communicate()
                    self._progress(tty, shown, done=True)
                    raise KicadCliError(
                        f"kicad-cli pcb drc did not finish in {self.timeout:.0f} s"
                    ) from None
                self._progress(tty, shown)
                shown = True
        if shown:
            self._progress(tty, shown, done=True)
        return out or "", err or ""

    def _progress(self, tty: bool, shown: bool, done: bool = False) -> None:
        """One progress report on stderr (never stdout: it may be a report, ``--json -``): what
        runs and the time since it started.  A terminal gets one line redrawn in place and
        cleared when done; a log a plain line each time, and a last one when it ends."""
        elapsed = time.monotonic() - self._started
        what = f"KiCad's DRC (kicad-cli pcb drc {self.shown[-1]})"
        if done:
            msg = f"accel-drc: {what} ended after {elapsed:.0f} s"
        else:
            msg = f"accel-drc: waiting for {what}: {elapsed:.0f} s"
        from .hostile import terminal

        msg = terminal(msg)  # the board's name is the user's: no escapes reach the terminal
        try:
            if tty:
                print(f"\r{msg[:100]:<100}", file=sys.stderr, end="\n" if done else "", flush=True)
            else:
                print(msg, file=sys.stderr, flush=True)
        except (OSError, ValueError):  # a closed stderr must not end the check
            pass

    def cancel(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()
        shutil.rmtree(self._tmp, ignore_errors=True)


def _stderr_is_tty() -> bool:
    """Whether stderr is a terminal (a progress line can be redrawn in place)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def start(
    board_path: str,
    schematic_parity: bool = False,
    kicad_cli: str | None = None,
    timeout: float = 3600.0,
) -> Pending:
    """Check the arguments and that kicad-cli exists (usage errors now), then start it;
    ``.result()`` waits for it."""
    if not board_path.endswith(".kicad_pcb"):
        raise UsageError(
            f"{board_path}: --kicad-drc needs a .kicad_pcb (KiCad checks its own files)"
        )
    exe = kicad_cli or find_kicad_cli()
    if exe is None:
        raise UsageError(INSTALL_HINT)
    if not os.path.exists(board_path):
        raise InputError(board_path, "no such file")
    if not is_regular(board_path):
        raise InputError(board_path, "not a regular file")
    if schematic_parity and not Path(board_path).with_suffix(".kicad_sch").is_file():
        raise UsageError(
            f"{board_path}: --kicad-drc-parity needs the schematic beside the board "
            f"({Path(board_path).with_suffix('.kicad_sch').name})"
        )
    return Pending(board_path, schematic_parity, exe, timeout)


def board_argument(board_path: str) -> str:
    """``board_path`` as kicad-cli's positional argument: a relative path gets a ``./`` prefix,
    so a board named ``-rev2.kicad_pcb`` is never read as an option (kicad-cli's parser has no
    ``--`` to end its options)."""
    return board_path if os.path.isabs(board_path) else os.path.join(os.curdir, board_path)


def from_report(
    report: Mapping[str, Any],
    exclusions: Sequence[Exclusion] = (),
    command: Sequence[str] = (),
    project_file: str | None = None,
) -> KicadDrcRun:
    """A :class:`KicadDrcRun` from an already-read report (KiCad 8, 9, 10)."""
    if not isinstance(report, Mapping) or not any(
        isinstance(report.get(s), list) for s in SECTIONS
    ):
        raise KicadCliError("kicad-cli's DRC report has none of violations/unconnected_items")
    units = report.get("coordinate_units") or "mm"
    if units not in _UNITS_TO_MM:
        raise KicadCliError(f"kicad-cli's DRC report uses unknown units {units!r}")
    version = str(report.get("kicad_version") or "unknown")
    return KicadDrcRun(dict(report), version, list(command), list(exclusions), project_file)


_NET = re.compile(r"\[([^\]]+)\]")
_LAYER = re.compile(r" on ([A-Za-z0-9_]+\.[A-Za-z0-9_]+)")


def _item_pos(item: Mapping[str, Any], scale: float) -> tuple[float, float] | None:
    p = item.get("pos")
    if not isinstance(p, Mapping):
        return None
    try:
        x, y = float(p["x"]) * scale, float(p["y"]) * scale
    except (KeyError, TypeError, ValueError):
        return None
    return (round(x, 4), round(y, 4)) if math.isfinite(x) and math.isfinite(y) else None


def _rule(kind: str, severity: Severity, description: str, version: str) -> Rule:
    return Rule(
        id=f"{RULE_PREFIX}.{kind}",
        check=CHECK,
        severity=severity,
        params={},
        why=WHY,
        source=f"[kicad9-cli] pcb drc, run with KiCad {version} (the board's constraints and custom "
        "rules)",
        pack="kicad",
        title=f"KiCad DRC: {description}",
    )


def findings(drc: KicadDrcRun) -> tuple[list[Finding], list[RuleRun], list[dict[str, Any]]]:
    """The report's entries as findings (excluded ones ``waived``), one rule run per KiCad
    violation type plus ``kicad.drc`` (so a clean KiCad DRC is a visible pass), and one waiver row
    per exclusion (applied or stale)."""
    scale = _UNITS_TO_MM[drc.report.get("coordinate_units") or "mm"]
    version = drc.kicad_version
    out: list[Finding] = []
    rules: dict[str, Rule] = {}
    for section in SECTIONS:
        for v in drc.report.get(section) or []:
            if not isinstance(v, Mapping):
                continue
            kind = str(v.get("type") or section)
            sev_word = str(v.get("severity") or "error")
            severity = _SEVERITY.get(sev_word, Severity.ERROR)
            description = str(v.get("description") or kind)
            items = [i for i in (v.get("items") or []) if isinstance(i, Mapping)]
            uuids = tuple(str(i.get("uuid", "")).lower() for i in items if i.get("uuid"))
            pos = next((p for p in (_item_pos(i, scale) for i in items) if p is not None), None)
            descs = [str(i.get("description", "")) for i in items]
            net = next((m.group(1) for d in descs for m in [_NET.search(d)] if m), None)
            net = None if net in ("<no net>", "") else net
            layer = next((m.group(1) for d in descs for m in [_LAYER.search(d)] if m), None)
            rule = rules.setdefault(kind, _rule(kind, severity, description, version))
            message = description + (": " + "; ".join(d for d in descs if d) if descs else "")
            ev: dict[str, Any] = {
                "kicad_type": kind,
                "kicad_severity": sev_word,
                "section": section,
                "kicad_version": version,
                "items": [
                    {
                        "uuid": str(i.get("uuid", "")),
                        "description": str(i.get("description", "")),
                        "pos": _item_pos(i, scale),
                    }
                    for i in items
                ],
                "basis": {"kicad_drc": "measured"},
            }
            if v.get("excluded") or sev_word == "exclusion":  # 9: a flag; a severity word too
                ev["kicad_excluded"] = True
            if v.get("comment"):
                ev["kicad_comment"] = str(v["comment"])
            out.append(
                Finding(
                    rule=rule.id,
                    check=CHECK,
                    severity=severity,
                    status=Status.VIOLATION,
                    message=message,
                    unit="",
                    net=net,
                    layer=layer,
                    pos=pos,
                    items=uuids,
                    why=rule.why,
                    source=rule.source,
                    evidence=ev,
                )
            )
    out, rows = apply_exclusions(
        out,
        drc.exclusions,
        drc.project_file,
        kicad_matched=reports_exclusions(drc.report),
        kicad_version=version,
    )
    drc_rule = _rule("drc", Severity.ERROR, "every check", version)
    per_kind: dict[str, int] = {}
    for f in out:
        per_kind[f.rule] = per_kind.get(f.rule, 0) + 1
    runs = [RuleRun(drc_rule, len(out))] + [
        RuleRun(r, per_kind.get(r.id, 0)) for r in rules.values()
    ]
    return out, runs, rows


def _nearest(f: Finding, pos: tuple[float, float] | None) -> float:
    if pos is None:
        return 0.0
    pts = [i.get("pos") for i in f.evidence.get("items", ())]
    d = [math.hypot(p[0] - pos[0], p[1] - pos[1]) for p in pts if p]
    return min(d) if d else 0.0


class _FindingIndex:
    """The findings an exclusion may cover, looked up instead of searched.

    ``exact``: (KiCad type, item uuid set) -> findings, in report order; ``by_item``: (type, one
    item uuid) -> findings, for an exclusion that names fewer items than its finding (a
    layer-keyed entry lists only the main item).  An exclusion then costs the findings that
    share its type and an item, not a scan of the report (a scan per stale exclusion is quadratic in
    the report's size)."""

    def __init__(self, found: Sequence[Finding]) -> None:
        self.exact: dict[tuple[str, frozenset[str]], list[int]] = {}
        self.by_item: dict[tuple[str, str], list[int]] = {}
        #: the report position of the first finding with the same type and items: the order
        #: the subset match has always tried candidates in (ties go to the earliest group)
        self.group: list[int] = []
        self.ids: list[frozenset[str]] = []
        for k, f in enumerate(found):
            kind, ids = f.evidence.get("kicad_type", ""), frozenset(f.items)
            same = self.exact.setdefault((kind, ids), [])
            self.group.append(same[0] if same else k)
            same.append(k)
            self.ids.append(ids)
            for u in ids:
                self.by_item.setdefault((kind, u), []).append(k)

    def candidates(self, e: Exclusion, taken: set[int]) -> list[int]:
        """The untaken findings ``e`` may cover: those with its type and exactly its items,
        else those whose items include all of its items."""
        cands = [k for k in self.exact.get((e.key, e.uuids), ()) if k not in taken]
        if cands or not e.uuids:
            return cands
        lists = [self.by_item.get((e.key, u), ()) for u in e.uuids]
        shortest = min(lists, key=len)
        cands = [k for k in shortest if k not in taken and e.uuids <= self.ids[k]]
        cands.sort(key=lambda k: (self.group[k], k))
        return cands


def reports_exclusions(report: Mapping[str, Any]) -> bool:
    """Whether kicad-cli's report carries KiCad's own exclusion verdict on every entry: KiCad 9
    and 10 resolve the stored exclusions after the DRC (``BOARD::ResolveDRCExclusions``) and
    write ``"excluded": true`` on each entry whose marker matched (``RC_ITEM::GetJsonViolation``,
    violations and unconnected items alike; measured with kicad-cli 9.0.8 and 10.0.7).  KiCad 8
    writes no such field, and accel-drc has to match the stored strings itself."""
    major = re.match(r"\s*(\d+)", str(report.get("kicad_version") or ""))
    if major is not None:
        return int(major.group(1)) >= 9
    return "included_severities" in report


#: why an exclusion KiCad no longer applies is stale although its items are still reported
MOVED_HINT = (
    "KiCad {version} no longer applies it: KiCad matches an exclusion to a marker by its exact "
    "position ({x:.4f}, {y:.4f} mm here), and this violation's marker is elsewhere now "
    "(KiCad drops the exclusion on its next DRC; exclude it again in KiCad)"
)
STALE_HINT = (
    "no KiCad DRC entry of this type on these items: the board changed since it was "
    "excluded (KiCad drops it on its next DRC too)"
)


def apply_exclusions(
    found: Sequence[Finding],
    exclusions: Sequence[Exclusion],
    project_file: str | None = None,
    kicad_matched: bool = False,
    kicad_version: str = "",
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """Mark the findings the board's KiCad exclusions cover as waived, and return one waiver
    row per exclusion.  Linear in findings plus exclusions (:class:`_FindingIndex`).

    ``kicad_matched`` (a KiCad 9 or 10 report, :func:`reports_exclusions`): KiCad's own
    ``excluded`` flags are the verdict, as KiCad applies exclusions: only a flagged entry is
    waived, and a stored exclusion is *applied* when it pairs (type and items) with a flagged
    entry; one whose items are still reported but unflagged is *stale* (its marker moved, see
    :data:`MOVED_HINT`).  Otherwise (KiCad 8) the stored strings are matched by type and item
    set, the nearest entry taking a tie (the module docstring)."""
    out = list(found)
    index = _FindingIndex(out)
    shown = os.path.basename(project_file) if project_file else ".kicad_pro"
    rows: list[dict[str, Any]] = []
    taken: set[int] = set()
    for e in exclusions:
        cands = index.candidates(e, taken)
        if kicad_matched:
            flagged = [k for k in cands if out[k].evidence.get("kicad_excluded")]
            moved, cands = bool(cands) and not flagged, flagged
            if not cands and not moved:
                cands = _position_matched(out, e, taken)
        row = _exclusion_row(e, project_file, shown)
        if cands:
            k = min(cands, key=lambda k: _nearest(out[k], e.pos_mm))
            taken.add(k)
            row["state"] = "applied"
            row["matched"] = 1
            out[k] = _waive(out[k], row, e)
        elif kicad_matched and moved and e.pos_mm is not None:
            x, y = e.pos_mm
            row["hint"] = MOVED_HINT.format(version=kicad_version or "9+", x=x, y=y)
        else:
            row["hint"] = STALE_HINT
        rows.append(row)
    for k, f in enumerate(out):  # KiCad's own match, where no stored entry paired with it
        if f.status != Status.WAIVED and f.evidence.get("kicad_excluded"):
            out[k] = replace(
                f,
                status=Status.WAIVED,
                waiver={
                    "rule": f.rule,
                    "reason": f.evidence.get("kicad_comment") or f"excluded in KiCad ({shown})",
                    "owner": None,
                    "expires": None,
                    "line": None,
                    "origin": "kicad",
                },
            )
    return out, rows


def _position_matched(found: Sequence[Finding], e: Exclusion, taken: set[int]) -> list[int]:
    """For an ``unconnected_items`` exclusion whose items KiCad does not report: the flagged,
    unpaired entries of that type with its comment.  Since 9.0.4 KiCad matches these by type
    and marker position only (``FindByFirstNFields``, 3 fields), so the flagged entry may name
    other items than the stored string."""
    if e.key != "unconnected_items":
        return []
    return [
        k
        for k, f in enumerate(found)
        if k not in taken
        and f.evidence.get("kicad_excluded")
        and f.evidence.get("kicad_type") == e.key
        and str(f.evidence.get("kicad_comment") or "") == e.comment
    ]


def _exclusion_row(e: Exclusion, project_file: str | None, shown: str) -> dict[str, Any]:
    """A stored exclusion's waiver row, stale until a finding takes it."""
    return {
        "rule": f"{RULE_PREFIX}.{e.key}",
        "net": None,
        "layer": e.layer,
        "uuid": ",".join(sorted(e.uuids)) or None,
        "reason": e.comment or f"excluded in KiCad ({shown})",
        "owner": None,
        "expires": None,
        "state": "stale",
        "matched": 0,
        "line": None,
        "origin": "kicad",
        "file": project_file,
        "exclusion": e.serialized,
    }


def _waive(f: Finding, row: Mapping[str, Any], e: Exclusion) -> Finding:
    ev = dict(f.evidence)
    ev["kicad_exclusion"] = e.serialized
    waiver = {k: row[k] for k in ("rule", "reason", "owner", "expires", "line", "origin")}
    return replace(f, status=Status.WAIVED, waiver=waiver, evidence=ev)
