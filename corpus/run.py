#!/usr/bin/env python3
"""Run accel-drc and KiCad's own DRC over the review corpus and write a summary table.

For every board that ``corpus/build.py`` put in the corpus cache this runs

* ``accel-drc check BOARD --json out.json`` (no config: the corpus is judged as it comes), and
* ``kicad-cli pcb drc --format json --severity-all`` with the host's KiCad 9, or with KiCad 10's
  ``kicad-cli`` in its chroot (``tests/kicad10.py``) when the board was saved by KiCad 10
  (file version above 20241229, which KiCad 9 cannot open),

each under a timeout.  Results are cached under ``CACHE/_results/<board sha256>/``: the KiCad
result by board hash and KiCad major version, the accel-drc result by board hash and a fingerprint
of the engine's sources (so an engine change reruns it, an unchanged engine does not).  Boards with
identical content (a demo shipped unchanged in both kicad-demos versions) are run once.

Writes ``CACHE/summary.json`` and ``CACHE/summary.md``: per board the class, the verdict, error
violations / warnings / cannot-verify counts by check kind, KiCad's unconnected-items and
violation counts, accel-drc's open_channel count, both exit codes and the run times.

    python3 corpus/run.py [--cache DIR] [--only ID ...] [--jobs N] [--force] [--no-kicad]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from corpus import build  # noqa: E402  (corpus/build.py: manifest and cache location)

#: the last file version KiCad 9 writes; anything newer needs KiCad 10
KICAD9_MAX_VERSION = 20241229
ACCEL_TIMEOUT_S = 900
KICAD_TIMEOUT_S = 1500


def engine_fingerprint() -> str:
    """A hash of the engine's Python and YAML sources and of the rule data: accel-drc results
    are cached under it.  ``engine/accel_drc/rules`` is a symlink to ``rules/``, which ``rglob``
    does not follow: the rule files are hashed from ``rules/`` itself (a changed signal type
    must rerun the corpus)."""
    h = hashlib.sha256()
    files = list((ROOT / "engine" / "accel_drc").rglob("*")) + list((ROOT / "rules").rglob("*"))
    for p in sorted(files):
        if p.suffix in (".py", ".yaml", ".json") and p.is_file():
            h.update(str(p.relative_to(ROOT)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def file_version(board: Path) -> int:
    """The ``(version N)`` in a .kicad_pcb header (0 when absent)."""
    with open(board, "rb") as fh:
        head = fh.read(400).decode("utf-8", "replace")
    m = re.search(r"\(version\s+(\d+)\)", head)
    return int(m.group(1)) if m else 0


def accel_cmd() -> list[str]:
    """The accel-drc command of this checkout's environment."""
    exe = Path(sys.executable).parent / "accel-drc"
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("accel-drc")
    if found:
        return [found]
    return [sys.executable, "-m", "accel_drc"]


def run_accel(board: Path, out_dir: Path, fp: str, force: bool) -> dict[str, Any]:
    """accel-drc on ``board`` (cached by engine fingerprint); returns the run's meta record."""
    res_json = out_dir / f"accel-{fp}.json"
    meta_json = out_dir / f"accel-{fp}.meta.json"
    if meta_json.is_file() and not force:
        return json.loads(meta_json.read_text())
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [*accel_cmd(), "check", str(board), "--json", str(res_json), "--quiet"],
            capture_output=True,
            text=True,
            timeout=ACCEL_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        rc, err = proc.returncode, proc.stderr[-2000:]
    except subprocess.TimeoutExpired:
        rc, err = "timeout", f"no result in {ACCEL_TIMEOUT_S} s"
    meta = {
        "exit": rc,
        "seconds": round(time.monotonic() - t0, 1),
        "stderr": err,
        "json": res_json.name if res_json.is_file() else None,
    }
    meta_json.write_text(json.dumps(meta, indent=1))
    return meta


def run_kicad(board: Path, out_dir: Path, force: bool) -> dict[str, Any]:
    """KiCad's DRC on ``board`` with KiCad 9, or KiCad 10 for a KiCad 10 file (cached)."""
    use10 = file_version(board) > KICAD9_MAX_VERSION
    tag = "kicad10" if use10 else "kicad9"
    res_json = out_dir / f"{tag}.json"
    meta_json = out_dir / f"{tag}.meta.json"
    if meta_json.is_file() and not force:
        return json.loads(meta_json.read_text())
    t0 = time.monotonic()
    rc: Any
    try:
        if use10:
            rc, err = _kicad10_drc(board, res_json)
        else:
            proc = subprocess.run(
                ["kicad-cli", "pcb", "drc", "--format", "json", "--severity-all"]
                + ["-o", str(res_json), str(board)],
                capture_output=True,
                text=True,
                timeout=KICAD_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
            rc, err = proc.returncode, proc.stderr[-2000:]
    except subprocess.TimeoutExpired:
        rc, err = "timeout", f"no result in {KICAD_TIMEOUT_S} s"
    meta = {
        "kicad": tag,
        "exit": rc,
        "seconds": round(time.monotonic() - t0, 1),
        "stderr": err,
        "json": res_json.name if res_json.is_file() else None,
    }
    meta_json.write_text(json.dumps(meta, indent=1))
    return meta


def cached_kicad(board: Path, out_dir: Path) -> dict[str, Any]:
    """The KiCad result already cached for ``board`` (``--no-kicad`` still reports it), or an
    empty record."""
    tag = "kicad10" if file_version(board) > KICAD9_MAX_VERSION else "kicad9"
    meta_json = out_dir / f"{tag}.meta.json"
    if meta_json.is_file():
        meta = json.loads(meta_json.read_text())
        if meta.get("json") and (out_dir / meta["json"]).is_file():
            return meta
    return {"kicad": None, "exit": None, "seconds": None, "json": None}


def _kicad10_drc(board: Path, res_json: Path) -> tuple[Any, str]:
    """KiCad 10's ``kicad-cli pcb drc`` in the chroot; the report is copied to ``res_json``."""
    import kicad10  # tests/kicad10.py

    ok, why = kicad10.available()
    if not ok:
        return "unavailable", why
    inside = kicad10.inside(board)
    out_inside = inside + ".drc.json"
    proc = kicad10.run(
        ["/usr/bin/kicad-cli", "pcb", "drc", "--format", "json", "--severity-all"]
        + ["-o", out_inside, inside],
        timeout=KICAD_TIMEOUT_S,
    )
    produced = kicad10.outside(out_inside)
    if produced.is_file():
        shutil.copyfile(produced, res_json)
        if not str(board.resolve()).startswith(str(kicad10.ROOT10.resolve())):
            produced.unlink()
    return proc.returncode, proc.stderr[-2000:]


def summarise_accel(path: Path | None) -> dict[str, Any]:
    """Class, verdict and per-check counts from an accel-drc JSON report."""
    if path is None or not path.is_file():
        return {"class": None, "verdict": None}
    d = json.loads(path.read_text())
    counts: dict[str, collections.Counter[str]] = {
        "errors": collections.Counter(),
        "warnings": collections.Counter(),
        "cannot_verify": collections.Counter(),
    }
    for f in d["findings"]:
        if f["status"] == "violation" and f["severity"] == "error":
            counts["errors"][f["check"]] += 1
        elif f["status"] == "violation" and f["severity"] == "warning":
            counts["warnings"][f["check"]] += 1
        elif f["status"] == "cannot_verify":
            counts["cannot_verify"][f["check"]] += 1
    open_channel = sum(
        1 for f in d["findings"] if f["check"] == "open_channel" and f["status"] == "violation"
    )
    cls = d["classification"]
    return {
        "class": cls["class"],
        "confidence": cls.get("confidence"),
        "verdict": d["summary"]["verdict"],
        "copper_layers": d["board"]["copper_layers"],
        "pairs": d["coverage"]["summary"],
        **{k: dict(sorted(v.items())) for k, v in counts.items()},
        "open_channel": open_channel,
    }


def summarise_kicad(path: Path | None) -> dict[str, Any]:
    """Unconnected-items and violation counts (by type) from a KiCad DRC JSON report."""
    if path is None or not path.is_file():
        return {"unconnected": None}
    d = json.loads(path.read_text())
    by_type = collections.Counter(v.get("type", "?") for v in d.get("violations", []))
    return {
        "unconnected": len(d.get("unconnected_items", [])),
        "violations": sum(by_type.values()),
        "by_type": dict(sorted(by_type.items())),
        "kicad_version": d.get("kicad_version"),
    }


def board_of(out: Path) -> tuple[Path, dict[str, Any]] | None:
    """The board file of one cache entry and its ``source.json``, or None when not built."""
    src = out / "source.json"
    if not src.is_file():
        return None
    meta = json.loads(src.read_text())
    return out / meta["board"], meta


#: one lock per board hash: two entries with the same content (a demo shipped unchanged in both
#: kicad-demos versions) must not run the same checks at once into the same files
_LOCKS: dict[str, threading.Lock] = collections.defaultdict(threading.Lock)
_LOCKS_GUARD = threading.Lock()


def board_lock(sha: str) -> threading.Lock:
    """The lock of one board hash."""
    with _LOCKS_GUARD:
        return _LOCKS[sha]


def run_one(
    entry: dict[str, Any], cache: Path, fp: str, force: bool, kicad: bool
) -> dict[str, Any]:
    """Both checkers on one cache entry; the summary row."""
    got = board_of(cache / entry["id"])
    if got is None:
        return {"id": entry["id"], "missing": True}
    board, src = got
    res_dir = cache / "_results" / src["sha256"][:24]
    res_dir.mkdir(parents=True, exist_ok=True)
    with board_lock(src["sha256"]):
        am = run_accel(board, res_dir, fp, force)
        km = run_kicad(board, res_dir, force) if kicad else cached_kicad(board, res_dir)
    row = {
        "id": entry["id"],
        "sha256": src["sha256"],
        "file_version": file_version(board),
        "accel_exit": am["exit"],
        "accel_seconds": am["seconds"],
        "kicad": km.get("kicad"),
        "kicad_exit": km["exit"],
        "kicad_seconds": km.get("seconds"),
        **summarise_accel(res_dir / am["json"] if am["json"] else None),
        "kicad_drc": summarise_kicad(res_dir / km["json"] if km["json"] else None),
    }
    print(
        f"{entry['id']:<44} {row.get('verdict')!s:<12} accel {am['exit']!s:>3} "
        f"{am['seconds']:>6}s  kicad {km['exit']!s:>3} {km.get('seconds')!s:>6}s",
        flush=True,
    )
    return row


def fmt_counts(c: dict[str, int] | None) -> str:
    """``check×n`` list for the Markdown table."""
    if not c:
        return ""
    return ", ".join(f"{k}×{v}" for k, v in c.items())


def write_summary(rows: list[dict[str, Any]], cache: Path) -> None:
    """``summary.json`` and the Markdown table ``summary.md`` in the cache."""
    (cache / "summary.json").write_text(json.dumps(rows, indent=1, sort_keys=True))
    lines = [
        "| board | class | verdict | layers | error violations | warnings | cannot verify "
        "| KiCad unconnected | KiCad violations | open_channel | exit accel/KiCad | time accel/KiCad s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("missing"):
            lines.append(f"| {r['id']} | (not built) |||||||||||")
            continue
        k = r["kicad_drc"]
        lines.append(
            f"| {r['id']} | {r.get('class')} | {r.get('verdict')} | {r.get('copper_layers')} "
            f"| {fmt_counts(r.get('errors'))} | {fmt_counts(r.get('warnings'))} "
            f"| {fmt_counts(r.get('cannot_verify'))} | {k.get('unconnected')} "
            f"| {k.get('violations')} | {r.get('open_channel')} "
            f"| {r['accel_exit']}/{r['kicad_exit']} ({r.get('kicad')}) "
            f"| {r['accel_seconds']}/{r['kicad_seconds']} |"
        )
    (cache / "summary.md").write_text("\n".join(lines) + "\n")


#: what tests/test_corpus.py compares on a rerun (plus the hash and time, to pick the board)
EXPECTED_KEYS = (
    "sha256",
    "accel_exit",
    "accel_seconds",
    "verdict",
    "class",
    "errors",
    "warnings",
    "cannot_verify",
    "open_channel",
)


def write_expected(rows: list[dict[str, Any]], path: Path) -> None:
    """``corpus/expected.json``: per board the verdict and counts a rerun must reproduce."""
    exp = {r["id"]: {k: r.get(k) for k in EXPECTED_KEYS} for r in rows if not r.get("missing")}
    path.write_text(json.dumps(exp, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the corpus (every built entry, or each ``--only``) and write the summary."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="ignore cached results")
    ap.add_argument(
        "--no-kicad", action="store_true", help="run accel-drc only (cached KiCad results kept)"
    )
    ap.add_argument(
        "--expected", action="store_true", help="also rewrite corpus/expected.json from this run"
    )
    args = ap.parse_args(argv)
    cache = args.cache or build.default_cache()
    entries = [e for e in build.load_manifest()["boards"] if not args.only or e["id"] in args.only]
    fp = engine_fingerprint()

    # the smallest boards first: the many small ones report before the two 70-85 MB demos
    def size(e: dict[str, Any]) -> int:
        got = board_of(cache / e["id"])
        return got[0].stat().st_size if got else 0

    order = sorted(entries, key=size)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = list(pool.map(lambda e: run_one(e, cache, fp, args.force, not args.no_kicad), order))
    by_id = {r["id"]: r for r in done}
    rows = [by_id[e["id"]] for e in entries]
    write_summary(rows, cache)
    print(f"summary: {cache / 'summary.md'}")
    if args.expected:
        write_expected(rows, HERE / "expected.json")
        print(f"expected: {HERE / 'expected.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
