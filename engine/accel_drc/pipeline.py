"""The check pipeline: board -> classification -> rules -> findings (``accel-drc check``, whose
handler lives in ``cli.py``; this module returns data and never prints).

:func:`check_board` is the library entry point (the CLI and the KiCad plugin both call it);
:func:`write_outputs` writes the reports, each a pure function of the result.  A check that
crashes does not take the run down with it, but it is never silent either: it becomes an
error-severity *cannot verify* finding naming the exception, and is logged with its traceback.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable

from . import checks as _checks
from . import coverage as _coverage
from .analysis import Analysis
from .analysis.stackup import declarable_layers, with_declarations
from .basis import Basis, replace_finding, settle_all
from .classify import classify, override
from .concurrency import Background
from .config import (
    CONFIG_NAME,
    ProjectConfig,
    as_config,
    check_dielectrics,
    check_layers,
)
from .config_audit import unmatched_entries
from .errors import EXIT_OK, EXIT_VIOLATIONS
from .hostile import MAX_MATCH_NAME, is_regular, open_regular
from .model import Board
from .packs import BOARD_CLASSES, CLASSES, Library, load_library, rules_for_class
from .results import CheckResult, Finding, Rule, RuleRun, Severity, Status, rank
from .version import __version__
from .waivers import apply_waivers

log = logging.getLogger(__name__)

#: exit code of a run in which a check crashed (cli.EXIT_INTERNAL: a bug, not the user's input)
EXIT_INTERNAL = 2

#: the pseudo-rule under which assumed signal types are reported
ASSUMPTION_RULE = Rule(
    id="signals.assumed_type",
    check="signal_type",
    severity=Severity.INFO,
    params={},
    why="A net whose interface generation cannot be told from its name or net class is checked "
    "against an assumed type; the limits that follow (Df, foil, stub, impedance) are only as "
    "right as that assumption.",
    source="accel-drc rules/signals.yaml, families: a net whose generation its name does not "
    "tell gets the family's assumed type, reported here",
    pack="signals",
    title="signal type assumed",
)


#: the pseudo-rule under which config entries that apply to nothing are reported
CONFIG_RULE = Rule(
    id="config.unmatched",
    check="config",
    severity=Severity.WARNING,
    params={},
    why="A config entry that matches nothing changes nothing: a backdrill written as a prefix "
    "regex ('^PCIE_TX') applies to no via and the stubs stay undrilled, a signals: pattern "
    "declares no net and the nets keep their guessed type.  Config regexes match the whole name "
    "(re.fullmatch), so a prefix needs '.*'.",
    source="accel-drc.yaml: entries that match no net, via, layer or rule",
    pack="config",
    title="config entry matches nothing",
)


def _sha256(path: str | None) -> str:
    if not path or not is_regular(path):
        return ""
    h = hashlib.sha256()
    with open_regular(path, None) as fh:  # checked again on the open file: never a FIFO
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def board_summary(board: Board, board_file: str | None, sha: str) -> dict[str, Any]:
    size = board.outline.size_mm
    return {
        "file": board_file or board.source,
        "sha256": sha,
        "format": board.format,
        "file_version": board.file_version,
        "generator": board.generator,
        "copper_layers": board.layer_count,
        "layer_names": [c.name for c in board.copper_layers],
        "size_mm": None if size is None else [round(size[0], 3), round(size[1], 3)],
        "thickness_mm": board.board_thickness_mm,
        "stackup": board.stackup is not None,
        "nets": board.named_net_count,
        "diff_pairs": len(board.diff_pairs),
        "tracks": len(board.tracks),
        "vias": len(board.vias),
        "zones": len(board.zones),
        "footprints": len(board.footprints),
        "warnings": list(board.warnings),
    }


def stackup_rows(board: Board, analysis: Analysis, config: ProjectConfig) -> list[dict[str, Any]]:
    """``extras["stackup"]``: one row per physical layer, top to bottom, for the HTML drawing."""
    from .analysis.materials import resolve_dielectric

    if board.stackup is None:
        return []
    sig_by_layer: dict[int, set[str]] = {}
    for net, a in analysis.net_signal.items():
        for layer in analysis.net_layers.get(net, ()):
            sig_by_layer.setdefault(layer, set()).add(a.signal)
    from .analysis.stackup import stackup_basis

    overrides = config.stackup.materials
    layers = board.stackup.layers
    sb = stackup_basis(analysis)
    thick = sb.thickness  # "default" on KiCad's untouched auto stack-up
    rows = []
    for i, sl in enumerate(layers):
        row: dict[str, Any] = {
            "name": sl.name,
            "kind": sl.kind,
            "thickness_mm": sl.thickness_mm,
            "material": sl.material,
            "epsilon_r": sl.epsilon_r,
            "loss_tangent": sl.loss_tangent,
            "tg_c": None,
            "foil": None,
            "copper_oz": None,
            "signals": [],
        }
        # where each value comes from (the stack-up owner's word): ``init`` writes a value
        # from the board as it is and a KiCad default as a placeholder to replace
        if sl.kind == "soldermask":
            row["basis"] = {
                "thickness": sb.declared(sl.name, "thickness") or thick,
                "epsilon_r": "declared" if sl.epsilon_r else "default",
                "loss_tangent": "declared" if sl.loss_tangent else "default",
            }
        if sl.is_copper and sl.copper_index is not None:
            row["basis"] = {"thickness": sb.copper_thickness(sl.name)}
            row["foil"] = analysis.foil_of_layer(sl.copper_index)
            if sl.thickness_mm:
                row["copper_oz"] = round(sl.thickness_mm * 1000 / 35.0, 3)
            row["signals"] = sorted(sig_by_layer.get(sl.copper_index, ()))
            row["user_name"] = board.copper_layers[sl.copper_index].user_name
            row["plane"] = sl.copper_index in analysis.plane_layers
        elif sl.is_dielectric:
            info = resolve_dielectric(sl, analysis.materials, overrides)
            row.update(
                material=info.material,
                epsilon_r=info.dk,
                loss_tangent=info.df,
                loss_tangent_from=info.df_from,
                tg_c=info.tg_c,
                tg_from=info.tg_from,
                library_material=info.matched,
                basis={
                    "thickness": sb.height(sl.name),
                    **{k: v for k, v in sb.dielectric(sl.name).items() if k != "height"},
                    "loss_tangent_value": info.df_basis,
                    "tg_c": info.tg_basis,
                },
                # the slices (KiCad sub-layers) agree on material, εr and Df: one entry can
                # restate them
                uniform=len({(x.material, x.epsilon_r, x.loss_tangent) for x in sl.sublayers}) <= 1,
            )
            near: set[str] = set()
            for step in (-1, 1):
                j = i + step
                while 0 <= j < len(layers) and not layers[j].is_copper:
                    j += step
                if 0 <= j < len(layers) and layers[j].copper_index is not None:
                    near |= sig_by_layer.get(layers[j].copper_index, set())  # type: ignore[arg-type]
            row["signals"] = sorted(near)
        rows.append(row)
    return rows


_FAMILY_NAMES = {
    "pcie": "PCIe",
    "nvlink": "NVLink",
    "sfp": "SFP",
    "qsfp": "QSFP",
    "mipi": "MIPI",
    "hdmi": "HDMI",
    "displayport": "DisplayPort",
}


def _assumption_findings(analysis: Analysis, board: Board) -> tuple[list[Finding], int]:
    groups: dict[tuple[str, str], list[int]] = {}
    for net, a in analysis.net_signal.items():
        if a.assumption:
            groups.setdefault((a.family or "", a.signal), []).append(net)
    out = []
    for (family, sig), nets in sorted(groups.items()):
        names = sorted(board.nets[n] for n in nets)
        note = analysis.net_signal[nets[0]].assumption or ""
        out.append(
            Finding(
                rule=f"{ASSUMPTION_RULE.id}.{sig}",
                check=ASSUMPTION_RULE.check,
                severity=Severity.INFO,
                status=Status.CANNOT_VERIFY,
                message=f"{len(nets)} {_FAMILY_NAMES.get(family, family or sig)} nets of unknown generation checked as {sig}: {note}",
                measured=sig,
                unit="signal type",
                net=names[0],
                why=ASSUMPTION_RULE.why,
                source=ASSUMPTION_RULE.source,
                evidence={
                    "assumed": sig,
                    "family": family,
                    "nets": names[:50],
                    "net_count": len(nets),
                    # escaped: config regexes match the whole name, and '+', '.', '{' in a
                    # net name are regex syntax ('TX0+' would not match the net 'TX0+')
                    "declare": f"declare the real type in accel-drc.yaml (signals: {sig}: "
                    f"['{re.escape(names[0])}'])",
                },
            )
        )
    return out, len(groups)


def _config_findings(
    cfg: ProjectConfig, board: Board, analysis: Analysis
) -> tuple[list[Finding], int]:
    """One warning per config entry that applies to nothing on this board (``config.unmatched``)."""
    entries, checked = unmatched_entries(cfg, board, analysis.net_signal)
    out = []
    for u in entries:
        where = f"{cfg.path or CONFIG_NAME}:{u.line}" if u.line else (cfg.path or CONFIG_NAME)
        shown = f"{os.path.basename(cfg.path or CONFIG_NAME)}" + (f":{u.line}" if u.line else "")
        ev: dict[str, Any] = {
            "config": where,
            "file": cfg.path,
            "line": u.line,
            "key": u.key,
            "pattern": u.pattern,
        }
        if u.suggestion is not None:
            ev["suggestion"] = u.suggestion
            ev["would_match"] = u.would_match
        out.append(
            Finding(
                rule=CONFIG_RULE.id,
                check=CONFIG_RULE.check,
                severity=CONFIG_RULE.severity,
                status=Status.VIOLATION,
                message=f"{shown}: {u.message}",
                measured=u.pattern,
                unit="config entry",
                why=CONFIG_RULE.why,
                source=CONFIG_RULE.source,
                evidence=ev,
            )
        )
    return out, checked


def _class_suffix(rule_id: str, cls: str) -> str | None:
    """``"training.via_stub.pcie5.backdrill"`` -> ``"via_stub.pcie5.backdrill"`` (None if the id
    is not of ``cls``'s pack)."""
    return rule_id[len(cls) + 1 :] if rule_id.startswith(cls + ".") else None


def _finding_key(f: Finding, cls: str) -> tuple[Any, ...]:
    """What makes two findings of the same rule under two classes the same finding."""
    return (_class_suffix(f.rule, cls) or f.rule, f.net, f.layer, f.pos, f.items[:3])


def _with_class_basis(
    outcomes: list[tuple[list[Finding], RuleRun]],
    classification: Any,
    lib: Library,
    cfg: ProjectConfig,
    registry: Mapping[str, Any],
    ctx: Any,
    rules_for: Callable[..., Any],
) -> list[tuple[list[Finding], RuleRun]]:
    """Record the board class as an input of every rule whose limits differ between classes.

    A class the user declared (``class:`` or ``--class``) is a fact.  An auto-detected class is an
    assumption: for each violation of such a rule, the same rule of the other classes is run and
    the finding lists, per class, whether it fails there too (``evidence["class_candidates"]``).
    A violation that fails under every class is a fact whatever the class; one that passes under
    some class is reported as conditional on the class by :func:`accel_drc.basis.settle`.
    Only rules whose params or severity differ are re-run, so this costs nothing for the
    per-signal rules that every class shares."""
    cls = classification.board_class
    declared = classification.source in ("config", "cli")
    others: dict[str, dict[str, Rule]] = {}
    effective: dict[str, tuple[Rule, ...]] = {}  # each class's rules, for its re-run's context
    for c in CLASSES:
        if c == cls:
            continue
        try:
            rs, _ = rules_for(
                lib,
                c,
                cfg.extra_packs,
                cfg.rule_overrides,
                cfg.doc,
                loss_budgets=cfg.loss.budgets_db,
            )
        except Exception:  # an override that only fits this class: no comparison possible
            log.info("rules of class %s not comparable", c, exc_info=True)
            rs = []
        others[c] = {suf: r for r in rs if (suf := _class_suffix(r.id, c)) is not None}
        effective[c] = tuple(rs)
    out = []
    for got, run in outcomes:
        rule = run.rule
        suffix = _class_suffix(rule.id, cls)
        if suffix is None or not got:
            out.append((got, run))
            continue
        mine = (dict(rule.params), rule.severity)
        differs = [
            c
            for c, rs in others.items()
            if suffix not in rs or (dict(rs[suffix].params), rs[suffix].severity) != mine
        ]
        if not differs:
            out.append((got, run))
            continue
        basis = Basis.DECLARED.value if declared else Basis.ASSUMED.value
        failing: dict[str, set[tuple[Any, ...]] | None] = {}
        if not declared and any(f.status == Status.VIOLATION for f in got):
            for c in others:
                if c not in differs:
                    failing[c] = {_finding_key(f, cls) for f in got if f.status == Status.VIOLATION}
                    continue
                other = others[c].get(suffix)
                if other is None:
                    failing[c] = set()
                    continue
                try:
                    octx = _checks.CheckContext(
                        board=ctx.board,
                        analysis=ctx.analysis,
                        board_class=c,
                        config=ctx.config,
                        verdicts_only=True,  # only the violations' keys are compared
                        rules=effective[c],
                    )
                    res = registry[other.check](octx, other)
                    failing[c] = {
                        _finding_key(f, c) for f in res.findings if f.status == Status.VIOLATION
                    }
                except Exception:  # the other class's verdict is unknown: stays conditional
                    log.info("rule %s under class %s failed", other.id, c, exc_info=True)
                    failing[c] = None
        new = []
        for f in got:
            ev = dict(f.evidence)
            ev["basis"] = {**dict(ev.get("basis") or {}), "class": basis}
            if f.status == Status.VIOLATION and not declared:
                key = _finding_key(f, cls)
                cands = {cls: "fail"}
                for c in CLASSES:
                    if c == cls:
                        continue
                    got_c = failing.get(c)
                    if got_c is not None:
                        cands[c] = "fail" if key in got_c else "pass"
                if len(cands) == len(CLASSES):
                    ev["class_candidates"] = cands
                ev.setdefault(
                    "declare_class",
                    "declare the board class (accel-drc.yaml `class:` or `--class`)",
                )
            new.append(replace_finding(f, evidence=ev))
        out.append((new, run))
    return out


def _crash_finding(rule: Rule, exc: BaseException) -> Finding:
    return Finding(
        rule=rule.id,
        check=rule.check,
        severity=Severity.ERROR,
        status=Status.CANNOT_VERIFY,
        message=f"internal error in check {rule.check}: {type(exc).__name__}: {exc} (please report it)",
        why=rule.why,
        source=rule.source,
        evidence={"exception": f"{type(exc).__name__}: {exc}"},
    )


def _needs(kind: str) -> tuple[str, ...]:
    """The facts a check kind reads (its module's ``NEEDS``), with the facts those read."""
    found = _checks.discover().get(kind)
    direct = found.needs if found is not None else ()
    return direct + tuple(f for n in direct for f in Analysis.FACT_NEEDS.get(n, ()))


def _some_pack_needs(lib: Library, cfg: ProjectConfig, fact: str) -> bool:
    """Whether a pack this run may use (any class: the class is not known yet when facts are
    prefetched) has a rule whose kind needs ``fact`` (a wrong guess only costs the second
    core)."""
    packs = list(lib.packs.values()) + list(cfg.extra_packs)
    return any(fact in _needs(r.check) for p in packs for r in p.rules)


def _wants_via_stubs(board: Board, lib: Library, cfg: ProjectConfig) -> bool:
    """Whether the via table is worth starting early: the board has many vias
    (``Analysis.VIA_PREFETCH_MIN``) and some pack this run may use needs it."""
    if len(board.vias) < Analysis.VIA_PREFETCH_MIN:
        return False
    return _some_pack_needs(lib, cfg, "via_stubs")


def _wants_pair_table(board: Board, lib: Library, cfg: ProjectConfig) -> bool:
    """Whether the differential-pair table is worth starting early: many pairs
    (``Analysis.PAIR_PREFETCH_MIN``) and some pack this run may use needs it."""
    if len(board.diff_pairs) < Analysis.PAIR_PREFETCH_MIN:
        return False
    return _some_pack_needs(lib, cfg, "pair_table")


def _wants_rails(board: Board, lib: Library, cfg: ProjectConfig) -> bool:
    """Whether the PDN rails are worth starting early: the board has copper zones and some pack
    this run may use needs them (the PDN and thermal-via rules, the IR-drop ones through
    ``irdrop``)."""
    if not board.zones:
        return False
    from .analysis.railnames import no_rails

    if no_rails(board, cfg):
        return False  # the rails are found empty at once, on the main thread
    return _some_pack_needs(lib, cfg, "rails")


def check_board(
    board: Board,
    config: ProjectConfig | Mapping[str, Any] | None = None,
    board_class: str | None = None,
    board_file: str | None = None,
    library: Library | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    today: _dt.date | None = None,
    kicad_drc: Any = None,
) -> CheckResult:
    """Classify ``board``, run every rule of its class pack, apply waivers.

    ``board_class`` (the CLI's ``--class``) beats the config's ``class:``, which beats the
    classifier.  ``board_file`` is the path reports point at (default ``board.source``).
    ``kicad_drc`` (a :class:`accel_drc.kicad_drc.KicadDrcRun`, or a ``Pending`` run still going,
    waited for after accel-drc's own checks) adds KiCad's own DRC findings, the board's KiCad
    exclusions applied, under the same waivers and verdict.
    """
    # the file's SHA-256 for the reports, on another core while the checks run: hashlib
    # releases the GIL on each 1 MB chunk
    sha_job = Background(lambda: _sha256(board_file or board.source), "sha256")
    lib = library if library is not None else load_library()
    cfg = as_config(config)
    names = set()
    for c in board.copper_layers:
        names.update((c.name, c.user_name))
    check_layers(cfg, names)
    if board.stackup is not None:
        check_dielectrics(cfg, declarable_layers(board.stackup))
    # the config's stack-up declarations, once: every check reads the same values (issue 28)
    board = with_declarations(board, cfg, lib.materials)
    long_names = sum(1 for n in board.nets if len(n) > MAX_MATCH_NAME)
    if long_names:
        log.warning(
            "%d net name(s) longer than %d characters: matched by no signal, rail or config "
            "pattern (docs/hostile-input.md)",
            long_names,
            MAX_MATCH_NAME,
        )
    analysis = Analysis(board, cfg, lib)
    analysis.scope_via_table()  # the checks read the via rows of their signal nets only
    if _wants_via_stubs(board, lib, cfg):
        analysis.prefetch("via_stubs")  # numpy/GEOS-bound: overlaps the classification
    if _wants_rails(board, lib, cfg):
        analysis.prefetch("rails")  # GEOS-bound: overlaps the classification and other checks
    if _wants_pair_table(board, lib, cfg):
        # numpy/LAPACK-bound: its checks run last; queued behind the via table (read first)
        analysis.prefetch("pair_table", after="via_stubs")
    auto = classify(board, analysis, lib)
    if board_class is not None:
        if board_class not in BOARD_CLASSES:
            from .errors import UsageError

            raise UsageError(f"unknown class {board_class!r} (one of {', '.join(BOARD_CLASSES)})")
        classification = override(auto, board_class, "cli")
    elif cfg.board_class:
        classification = override(auto, cfg.board_class, "config")
    else:
        classification = auto
    cls = classification.board_class
    rules, used = rules_for_class(
        lib, cls, cfg.extra_packs, cfg.rule_overrides, cfg.doc, loss_budgets=cfg.loss.budgets_db
    )
    registry = _checks.load_all()
    ctx = _checks.CheckContext(
        board=board, analysis=analysis, board_class=cls, config=cfg, rules=tuple(rules)
    )
    findings: list[Finding] = []
    runs: list[RuleRun] = []
    runnable = list(rules)  # every kind is known: packs.load_pack refused any other
    # Rules whose facts are being computed on the background thread run later, by the wave
    # their kind's NEEDS fall in (Analysis.wave), so the main thread does the other checks
    # meanwhile; results are kept in the pack's order.  The pair table is queued behind the
    # via table, so its rules come after the via rules.
    waves = {r.check: analysis.wave(_needs(r.check)) for r in runnable}
    schedule = sorted(range(len(runnable)), key=lambda k: waves[runnable[k].check])
    outcomes: list[tuple[list[Finding], RuleRun]] = [([], RuleRun(r, 0)) for r in runnable]
    raw: list[Any] = [None] * len(runnable)  # each rule's CheckOutcome (examined nets: coverage)
    for done, k in enumerate(schedule):
        rule = runnable[k]
        if progress is not None:
            progress(done, len(runnable), rule.id)
        try:
            outcome = registry[rule.check](ctx, rule)
        except Exception as exc:  # a bug in one check: reported as a finding, logged in full
            # the finding carries the error; the traceback is for -v (a bug report), not for
            # every user's terminal
            log.error("check %s crashed on rule %s: %s: %s", rule.check, rule.id,
                      type(exc).__name__, exc)  # fmt: skip
            log.info("traceback of the crash in %s (shown with -v)", rule.check, exc_info=True)
            outcomes[k] = ([_crash_finding(rule, exc)], RuleRun(rule, 0))
            continue
        outcomes[k] = (list(outcome.findings), RuleRun(rule, outcome.checked))
        raw[k] = outcome
    outcomes = _with_class_basis(
        outcomes, classification, lib, cfg, registry, ctx, rules_for=rules_for_class
    )
    analysis.settle_prefetched()  # no background fact left running (an unused via table)
    for got, run in outcomes:
        findings.extend(got)
        runs.append(run)
    assumed, _ = _assumption_findings(analysis, board)
    runs.append(RuleRun(ASSUMPTION_RULE, len(analysis.net_signal)))
    unmatched, n_entries = _config_findings(cfg, board, analysis)
    if n_entries:
        runs.append(RuleRun(CONFIG_RULE, n_entries))
    findings = settle_all(unmatched + assumed + findings)
    findings = with_severity_overrides(severity_by_consequence(findings), cfg)
    examined = _coverage.examined_pairs(zip(runnable, raw), analysis)
    unjudged = _coverage.not_judged(o for o in raw if o is not None)
    cov = _coverage.build(board, analysis, lib, examined, findings, cls, unjudged)
    unknown = _coverage.unknown_interface_finding(cov, lib)
    runs.append(RuleRun(_coverage.UNKNOWN_RULE, cov["summary"]["pairs"]))
    if unknown is not None:
        findings = [unknown] + findings
    no_pins = _coverage.pin_names_finding(board)
    if no_pins is not None:  # the format has no pin names: say what could not be recognised
        runs.append(RuleRun(_coverage.PIN_NAMES_RULE, no_pins.measured or 0))
        findings = [no_pins] + findings
    excluded: list[Finding] = []
    kicad_rows: list[dict[str, Any]] = []
    if kicad_drc is not None:  # KiCad's DRC: its exclusions first, then our waivers on the rest
        from .kicad_drc import findings as kicad_findings

        if hasattr(kicad_drc, "result"):  # still running beside our checks: wait for it now
            kicad_drc = kicad_drc.result()

        got, kicad_runs, kicad_rows = kicad_findings(kicad_drc)
        runs.extend(kicad_runs)
        findings += [f for f in got if f.status != Status.WAIVED]
        excluded = [f for f in got if f.status == Status.WAIVED]
    waiver_lines = [cfg.line_of("waivers", i) for i in range(len(cfg.waivers))]
    findings, waiver_rows = apply_waivers(findings, cfg.waivers, today=today, lines=waiver_lines)
    findings += excluded
    waiver_rows += kicad_rows
    findings.sort(key=rank)  # every report leads with error violations, then error unknowns
    cov = _coverage.build(  # waived outcomes too
        board, analysis, lib, examined, findings, cls, unjudged
    )
    if progress is not None:
        progress(len(runnable), len(runnable), "done")
    sha = sha_job.result()
    extras: dict[str, Any] = {"stackup": stackup_rows(board, analysis, cfg)}
    extras["signals"] = {
        sig: len(analysis.nets_by_signal(sig))
        for sig in lib.signals
        if analysis.nets_by_signal(sig)
    }
    if kicad_drc is not None:
        extras["kicad_drc"] = kicad_drc.info()
    ran = [r.rule for r in runs]
    for kind in _checks.discover().values():
        # per-kind report extras (stub histograms, |Z(f)| curves): the module's extras hook
        if kind.extras is not None and any(r.check == kind.kind for r in ran):
            extra = _extra(kind, analysis, ran)
            if extra is not None:
                extras[kind.extras_key] = extra
    return CheckResult(
        board_file=board_file or board.source,
        board_sha256=sha,
        classification=classification,
        findings=findings,
        rules=runs,
        rule_packs=lib.pack_info(used[:1])
        + [
            {"name": p.name, "version": p.version, "file": p.file}
            for p in cfg.extra_packs
            if p.name in used
        ],
        waivers=waiver_rows,
        extras=extras,
        references=lib.references,
        board_summary=board_summary(board, board_file, sha),
        date=(_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()),
        tool_version=__version__,
        coverage=cov,
    )


def severity_by_consequence(findings: list[Finding]) -> list[Finding]:
    """An error-severity *cannot verify* stays an error only where the user can decide it:
    the finding says what to declare (``evidence["declare"]``).  One that names nothing the
    user could declare for this board (a gap of the rule library, not of the project) is a
    warning: an error the designer cannot clear is noise that teaches to ignore errors
    (issue 28).  A crashed check stays an error (a bug, and no verdict at all).  A ``rules:
    {RULE: {severity: …}}`` override is applied after this."""
    out = []
    for f in findings:
        if (
            f.status == Status.CANNOT_VERIFY
            and f.severity == Severity.ERROR
            and not f.evidence.get("declare")
            and "exception" not in f.evidence  # a crashed check: a bug to report, no verdict
        ):
            ev = {**f.evidence, "severity_from": "error rule; nothing for the project to declare"}
            f = replace(f, severity=Severity.WARNING, evidence=ev)
        out.append(f)
    return out


def with_severity_overrides(findings: list[Finding], cfg: ProjectConfig) -> list[Finding]:
    """``findings`` with the config's ``rules: RULE_ID: {severity: …}`` applied to every finding
    of that rule (and of its sub-ids, ``edge.material_consistency.kicad_default``).

    A check may pick a finding's severity itself (``layer_count`` above the class range is a
    warning whatever the rule says); the project's word beats the check's, so what is printed,
    exported and counted is the severity the config lists (issue 28)."""
    wanted = {rid: o.severity for rid, o in cfg.rules.items() if o.severity is not None}
    if not wanted:
        return findings
    out = []
    for f in findings:
        sev = wanted.get(f.rule)
        if sev is None:
            parent = next((r for r in wanted if f.rule.startswith(r + ".")), None)
            sev = wanted[parent] if parent is not None else None
        out.append(
            f if sev is None or f.severity.value == sev else replace(f, severity=Severity(sev))
        )
    return out


def _extra(kind: _checks.CheckKind, analysis: Analysis, rules: list[Rule]) -> Any:
    """A check kind's report extras (its module's ``extras(analysis, rules)`` hook).

    A failure here is logged, not fatal: the findings are complete without the plot data."""
    assert kind.extras is not None
    try:
        return kind.extras(analysis, rules)
    except Exception:
        log.error("%s.extras failed; the report will lack its plot data", kind.module,
                  exc_info=True)  # fmt: skip
        return None


def exit_code(result: CheckResult) -> int:
    return EXIT_VIOLATIONS if result.unwaived_errors() else EXIT_OK
