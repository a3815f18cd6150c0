"""The Markdown summary (``check --markdown F``): a PR comment or a CI job summary.

The same content the GitHub Action writes to ``$GITHUB_STEP_SUMMARY``: the verdict, the counts,
the worst findings as a table, the waivers that need attention, the versions of accel-drc (and of
KiCad when ``--kicad-drc`` ran), and a link to the full HTML report when one is given.  GitHub
renders a summary of at most 1 MiB per step; the worst-findings table is capped so a board with
10,000 findings still fits.  User text (net names, messages) is escaped so it cannot break the
table or inject markup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..hostile import terminal
from ..results import CheckResult, Status
from .text import verdict_line, worst

_VERDICT_ICON = {"fail": "❌", "unverified": "⚠️", "pass": "✅"}
_VERDICT_WORD = {"fail": "FAIL", "unverified": "NOT VERIFIED", "pass": "PASS"}
#: what Markdown or HTML give meaning to, backslash-escaped (``&``: an entity such as ``&#64;``
#: would otherwise render as the ``@`` the mention guard below removed)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
#: what GitHub links on its own in a comment: an ``@mention`` (it notifies the person), a
#: ``#123`` / ``GH-123`` issue reference, an ``http://`` or ``www.`` autolink.  A zero-width
#: space after the trigger breaks each and still reads the same.
_GITHUB_LINKS = re.compile(r"(@|#(?=\d)|\bGH-(?=\d)|:(?=//)|\bwww(?=\.))", re.IGNORECASE)
_ZWSP = "&#8203;"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, "…" marking the cut (a word is
    cut only when no space falls in the last third: one very long name)."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ")
    if space > len(cut) * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"


def esc(text: Any, limit: int = 300) -> str:
    """Markdown-safe single-line text for user text (net names, messages, reasons).

    Runs of whitespace become one space (a table row stays one row); controls and bidi
    controls are shown escaped (:func:`accel_drc.hostile.terminal`, as in the terminal); long
    text is cut; the characters Markdown and HTML give meaning to are backslash-escaped (so a
    net called ``<script>`` or ``a|b`` stays text in the table); and what GitHub would link or
    notify (``@user``, ``#123``, ``https://…``, ``www.…``) is broken with a zero-width space."""
    s = shorten(terminal(" ".join(str(text).split())), limit)
    return _GITHUB_LINKS.sub(r"\1" + _ZWSP, _MD_SPECIAL.sub(r"\\\1", s))


def code(text: Any, limit: int = 120) -> str:
    """A code span, which GitHub neither links nor mentions in: controls and bidi controls are
    escaped (:func:`accel_drc.hostile.terminal`), the table's ``|`` is ``\\|`` (GFM splits cells
    before code spans), and a backtick inside is kept by a longer fence (CommonMark)."""
    s = terminal(" ".join(str(text).split()))[:limit].replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)
    if longest or s.startswith(" ") or s.endswith(" "):
        return f"{fence} {s} {fence}"  # one space each side is stripped by the renderer
    return f"{fence}{s}{fence}"


def render(
    result: CheckResult, html_link: str | None = None, top: int = 15, title: str | None = None
) -> str:
    """The summary as Markdown text."""
    v = result.verdict()
    board = os.path.basename(result.board_file) or result.board_file
    head = title or f"accel-drc: {board}"
    out = [f"## {_VERDICT_ICON[v]} {esc(head)}: {_VERDICT_WORD[v]}", ""]
    out.append(esc(verdict_line(result), 1000))
    out.append("")
    b = result.board_summary
    cls = result.classification
    how = "declared" if cls.source in ("config", "cli") else f"auto-detected, {cls.confidence:.0%}"
    facts = [
        f"**Board** {code(board)} · {b.get('copper_layers')} copper layers",
        f"**Class** {cls.board_class} ({how})",
        f"**accel-drc** {result.tool_version}",
    ]
    kicad = result.extras.get("kicad_drc")
    if isinstance(kicad, Mapping):
        facts.append(f"**KiCad DRC** KiCad {esc(kicad.get('kicad_version'))} (kicad-cli)")
    out.append(" · ".join(facts))
    out.append("")
    phrases = result.count_phrases()
    out.append("| severity | findings |")
    out.append("|---|---|")
    if phrases:
        for sev, _n, phrase in phrases:
            out.append(f"| {sev} | {esc(phrase)} |")
    else:
        out.append("| – | none |")
    out.append("")
    shown = [f for f in worst(result.findings, top) if f.status != Status.WAIVED]
    if shown:
        out.append("### Worst findings")
        out.append("")
        out.append("| severity | status | rule | where | message |")
        out.append("|---|---|---|---|---|")
        for f in shown:
            where = " ".join(
                p
                for p in (
                    f"net {code(f.net, 80)}" if f.net else "",
                    f"on {esc(f.layer, 40)}" if f.layer else "",
                    f"at ({f.pos[0]:.2f}, {f.pos[1]:.2f}) mm" if f.pos else "",
                )
                if p
            )
            out.append(
                f"| {f.severity.value} | {f.status.value.replace('_', ' ')} | {code(f.rule, 80)} "
                f"| {where or '–'} | {esc(f.message)} |"
            )
        rest = sum(1 for f in result.findings if f.status != Status.WAIVED) - len(shown)
        if rest > 0:
            out.append("")
            out.append(f"… and {rest} more.")
        out.append("")
    out += _declare_section(result)
    attention = [w for w in result.waivers if w.get("state") in ("expired", "stale")]
    applied = sum(1 for w in result.waivers if w.get("state") == "applied")
    if result.waivers:
        out.append(
            f"**Waivers:** {applied} applied"
            + (f", {len(attention)} need attention:" if attention else "")
        )
        for w in attention[:10]:
            where = f" (line {w['line']})" if w.get("line") else ""
            out.append(f"- {w['state']}: {code(w['rule'], 80)}{where}: {esc(w.get('reason', ''))}")
        out.append("")
    if html_link:
        out.append(f"Full report: [{esc(os.path.basename(html_link))}]({html_link})")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


#: the cannot-verify section's bounds: a PR comment stays short and under GitHub's 1 MiB
_DECLARE_GROUPS = 8
_DECLARE_LINES = 40


def fence(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (CommonMark), so nothing in
    a code block (a net name with backticks) can close it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _declare_section(result: CheckResult) -> list[str]:
    """The cannot-verify findings grouped by what to declare, each group with the
    ``accel-drc.yaml`` block for exactly its findings (:func:`accel_drc.starter_config.declare_groups`),
    cut to a few groups and lines; ``accel-drc init`` writes them all."""
    from ..starter_config import declare_groups

    groups = [g for g in declare_groups(result.findings) if g.yaml]
    if not groups:
        return []
    board = os.path.basename(result.board_file) or result.board_file
    out = [
        "### Cannot verify: what to declare",
        "",
        f"Paste into `accel-drc.yaml` and fill in each `<…>`; {code('accel-drc init ' + board)} "
        "writes every entry into a starter file.",
        "",
    ]
    for g in groups[:_DECLARE_GROUPS]:
        rules = ", ".join(
            f"{code(r, 80)}" + (f" ×{n}" if n > 1 else "") for r, n in g.rules[:6]
        ) + (" …" if len(g.rules) > 6 else "")
        n = len(g.findings)
        out.append(
            f"**{esc(g.title)}**: {n} finding{'s' if n != 1 else ''}"
            + (f" ({g.errors} at error severity)" if g.errors else "")
            + f": {rules}"
        )
        out.append("")
        lines = g.yaml.rstrip("\n").split("\n")
        text = "\n".join(lines[:_DECLARE_LINES])
        if len(lines) > _DECLARE_LINES:
            text += f"\n# … {len(lines) - _DECLARE_LINES} more lines: accel-drc init writes them"
        f = fence(text)
        out += [f + "yaml", text, f, ""]
    if len(groups) > _DECLARE_GROUPS:
        out += [f"… and {len(groups) - _DECLARE_GROUPS} more groups.", ""]
    return out


def write(path: str, result: CheckResult, html_link: str | None = None) -> None:
    from ..hostile import write_text

    write_text(path, render(result, html_link))  # atomic (temp file + rename); '-' is stdout
