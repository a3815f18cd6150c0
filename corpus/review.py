#!/usr/bin/env python3
"""Draft the tables of docs/corpus-review.md from the corpus results (corpus/run.py's cache).

Prints Markdown: every error violation and warning of every board grouped by (check, rule) with
its count and examples (board, net, layer, the number printed, the message); per board the pairs
accel-drc recognised, by interface and by what recognised them, and the pairs it saw but could not
name; and the open_channel versus KiCad unconnected-items comparison.  The classification
(true / false / debatable) is the reviewer's: this only gathers what there is to classify.

    python3 corpus/review.py [--cache DIR] [--examples N] > /tmp/review-draft.md
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from corpus import build  # noqa: E402
from corpus import run as corpus_run  # noqa: E402


def load_results(cache: Path) -> dict[str, dict[str, Any]]:
    """Per manifest id: the accel-drc report and the KiCad report (None where absent)."""
    fp = corpus_run.engine_fingerprint()
    out: dict[str, dict[str, Any]] = {}
    for e in build.load_manifest()["boards"]:
        got = corpus_run.board_of(cache / e["id"])
        if got is None:
            continue
        _, src = got
        res = cache / "_results" / src["sha256"][:24]
        accel = res / f"accel-{fp}.json"
        kic = [p for p in (res / "kicad9.json", res / "kicad10.json") if p.is_file()]
        out[e["id"]] = {
            "accel": json.loads(accel.read_text()) if accel.is_file() else None,
            "kicad": json.loads(kic[0].read_text()) if kic else None,
            "sha256": src["sha256"],
        }
    return out


def short(text: str, n: int = 260) -> str:
    """One table-safe line of at most ``n`` characters."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= n else text[: n - 1] + "…"


def grouped_findings(results: dict[str, dict[str, Any]], examples: int) -> list[str]:
    """Markdown: error violations and warnings grouped by (check, rule)."""
    groups: dict[tuple[str, str, str], list[tuple[str, dict[str, Any]]]] = collections.defaultdict(
        list
    )
    seen_sha: set[str] = set()
    for ident, r in results.items():
        if r["accel"] is None or r["sha256"] in seen_sha:
            continue
        seen_sha.add(r["sha256"])
        for f in r["accel"]["findings"]:
            if f["status"] == "violation" and f["severity"] in ("error", "warning"):
                groups[(f["check"], f["rule"], f["severity"])].append((ident, f))
    lines = ["| check | rule | sev | n | boards | examples |", "|---|---|---|---|---|---|"]
    for (check, rule, sev), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        boards = collections.Counter(i for i, _ in items)
        ex = []
        for ident, f in items[:examples]:
            ex.append(
                f"**{ident}** net `{f.get('net')}` {f.get('layer')}: "
                f"{f.get('measured')} vs {f.get('limit')} {f.get('unit') or ''} — "
                f"{short(f['message'])}"
            )
        lines.append(
            f"| {check} | {rule} | {sev} | {len(items)} | "
            + ", ".join(f"{b}×{n}" for b, n in boards.most_common())
            + " | "
            + "<br>".join(ex)
            + " |"
        )
    return lines


def interfaces(results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown: per board the pairs by interface and how they were recognised."""
    lines = [
        "| board | pairs | recognised (interface: n by how) | unknown interface | not checked |",
        "|---|---|---|---|---|",
    ]
    for ident, r in results.items():
        a = r["accel"]
        if a is None:
            lines.append(f"| {ident} | (no accel-drc result) | | | |")
            continue
        by: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        unknown = []
        notchk: collections.Counter[str] = collections.Counter()
        for p in a["coverage"]["pairs"]:
            if p.get("interface"):
                by[p["interface"]][p.get("recognised_by") or "?"] += 1
            else:
                unknown.append(p["name"])
            if not p.get("checked"):
                notchk[short(p.get("not_checked_because") or "?", 60)] += 1
        rec = "; ".join(
            f"{i}: " + ", ".join(f"{n} by {how}" for how, n in c.items())
            for i, c in sorted(by.items())
        )
        unk = ", ".join(f"`{u}`" for u in unknown[:8]) + (
            f" (+{len(unknown) - 8})" if len(unknown) > 8 else ""
        )
        nc = "; ".join(f"{n}: {why}" for why, n in notchk.most_common(3))
        lines.append(f"| {ident} | {len(a['coverage']['pairs'])} | {rec} | {unk} | {nc} |")
    return lines


def open_vs_unconnected(results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown: accel-drc open_channel findings against KiCad's unconnected items."""
    lines = [
        "| board | KiCad unconnected | accel-drc open_channel | open_channel nets |",
        "|---|---|---|---|",
    ]
    for ident, r in results.items():
        a, k = r["accel"], r["kicad"]
        oc = (
            [
                f
                for f in a["findings"]
                if f["check"] == "open_channel" and f["status"] == "violation"
            ]
            if a
            else []
        )
        unc = len(k.get("unconnected_items", [])) if k else None
        nets = ", ".join(sorted({f"`{f.get('net')}`" for f in oc})[:6])
        lines.append(f"| {ident} | {unc} | {len(oc) if a else None} | {nets} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the three draft tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--examples", type=int, default=2)
    args = ap.parse_args(argv)
    results = load_results(args.cache or build.default_cache())
    print("## Findings by (check, rule)\n")
    print("\n".join(grouped_findings(results, args.examples)))
    print("\n## Interfaces\n")
    print("\n".join(interfaces(results)))
    print("\n## open_channel vs KiCad unconnected\n")
    print("\n".join(open_vs_unconnected(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
