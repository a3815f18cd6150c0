#!/usr/bin/env python3
"""Build the review corpus cache of issue #27 §7 from git mirrors and the installed kicad-demos.

Each repository entry of ``corpus/manifest.yaml`` is extracted at its recorded commit with
``git show COMMIT:PATH`` (the board, the ``.kicad_pro`` and ``.kicad_dru`` beside it when the
tree has them, and the licence file) into ``CACHE/<id>/``; each kicad-demos entry is symlinked
there instead (the demo folders are read-only package files).  Nothing is fetched here: the
mirrors must already exist (``MIRRORS/<owner>+<name>/repo``, as the search tool's ``fetch``
lays them out).  The board files never enter this repository: only the manifest does.

Idempotent: a file already extracted with the right content is left alone.  Prints one line
per entry and, at the end, every entry that could not be built and why; exits 0 when every
board is present, 2 when some are missing (the corpus is still usable for the rest).

    python3 corpus/build.py [--mirrors /work/.mirror] [--cache DIR] [--only ID ...]

The cache defaults to ``$ACCEL_DRC_CORPUS`` or ``/var/cache/accel-drc/corpus``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.yaml"
DEFAULT_MIRRORS = Path("/work/.mirror")


def default_cache() -> Path:
    """The corpus cache folder: ``$ACCEL_DRC_CORPUS`` or ``/var/cache/accel-drc/corpus``."""
    return Path(os.environ.get("ACCEL_DRC_CORPUS", "/var/cache/accel-drc/corpus"))


def load_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    """The parsed manifest (``demos`` roots and the ``boards`` list)."""
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def git_dir(mirrors: Path, repository: str) -> Path | None:
    """The git directory of ``owner/name`` under ``mirrors`` (bare ``repo`` or ``repo/.git``)."""
    base = mirrors / repository.replace("/", "+", 1) / "repo"
    for cand in (base, base / ".git"):
        if (cand / "objects").is_dir():
            return cand
    return None


def git_blob(gdir: Path, commit: str, path: str) -> bytes | None:
    """The content of ``path`` at ``commit``, or None when the tree lacks it or the blob is absent."""
    res = subprocess.run(
        ["git", "--git-dir", str(gdir), "show", f"{commit}:{path}"],
        capture_output=True,
        check=False,
    )
    return res.stdout if res.returncode == 0 else None


def commit_exists(gdir: Path, commit: str) -> bool:
    """True when ``commit`` is a commit object in the mirror."""
    res = subprocess.run(
        ["git", "--git-dir", str(gdir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return res.returncode == 0


def write_if_changed(dest: Path, data: bytes) -> bool:
    """Write ``data`` to ``dest`` unless it already holds exactly that; True when written."""
    if dest.is_file() and not dest.is_symlink() and dest.read_bytes() == data:
        return False
    if dest.is_symlink():
        dest.unlink()
    dest.write_bytes(data)
    return True


RESAVE = "import sys, pcbnew\nb = pcbnew.LoadBoard(sys.argv[1])\npcbnew.SaveBoard(sys.argv[2], b)\n"


def resave_prerelease(out: Path, name: str, board: bytes) -> str | None:
    """Keep a KiCad 6 pre-release board as ``original/<name>`` and put beside it the same board
    opened and saved by the host's KiCad 9 (``pcbnew``), which accel-drc reads: accel-drc refuses
    pre-release files and says to re-save them.  Returns why it failed, or None."""
    (out / "original").mkdir(exist_ok=True)
    orig = out / "original" / name
    changed = write_if_changed(orig, board)
    dest = out / name
    if dest.is_file() and not changed:
        return None
    res = subprocess.run(
        ["/usr/bin/python3", "-c", RESAVE, str(orig), str(dest)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if res.returncode != 0 or not dest.is_file():
        return f"re-saving the pre-release board with KiCad 9 failed: {res.stderr.strip()[-300:]}"
    return None


def sibling(path: str, suffix: str) -> str:
    """``path`` with its ``.kicad_pcb`` suffix replaced by ``suffix``."""
    return path[: -len(".kicad_pcb")] + suffix


def build_repo_entry(entry: dict[str, Any], mirrors: Path, out: Path) -> str | None:
    """Extract one repository entry into ``out``; returns why it is missing, or None when built."""
    gdir = git_dir(mirrors, entry["repository"])
    if gdir is None:
        return f"no mirror of {entry['repository']} under {mirrors} (fetch it first)"
    commit = entry["commit"]
    if not commit_exists(gdir, commit):
        return f"commit {commit} is not in the mirror of {entry['repository']}"
    board = git_blob(gdir, commit, entry["board"])
    if board is None:
        return f"{entry['board']} is absent at {commit[:12]} (missing blob or path)"
    out.mkdir(parents=True, exist_ok=True)
    name = Path(entry["board"]).name
    if entry.get("format") == "kicad6-prerelease":
        why = resave_prerelease(out, name, board)
        if why:
            return why
    else:
        write_if_changed(out / name, board)
    for suffix in (".kicad_pro", ".kicad_dru"):
        data = git_blob(gdir, commit, sibling(entry["board"], suffix))
        if data is not None:
            write_if_changed(out / sibling(name, suffix), data)
    lic_commit = entry.get("licence_commit", commit)
    lic = git_blob(gdir, lic_commit, entry["licence_file"])
    if lic is None:
        return f"licence file {entry['licence_file']} is absent at {lic_commit[:12]}"
    write_if_changed(out / "LICENSE.upstream", lic)
    write_source(out, entry, name, (out / name).read_bytes(), original=board)
    return None


def build_demo_entry(entry: dict[str, Any], roots: dict[str, Any], out: Path) -> str | None:
    """Symlink one kicad-demos board (and its project files) into ``out``."""
    root = Path(roots[entry["demos"]]["root"])
    src = root / entry["board"]
    if not src.is_file():
        return f"{src} is not installed"
    out.mkdir(parents=True, exist_ok=True)
    for suffix in (".kicad_pcb", ".kicad_pro", ".kicad_dru"):
        s = src.with_suffix(suffix)
        link = out / s.name
        if not s.is_file():
            continue
        if link.is_symlink() and os.readlink(link) == str(s):
            continue
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(s)
    write_source(out, entry, src.name, src.read_bytes())
    return None


def write_source(
    out: Path, entry: dict[str, Any], name: str, board: bytes, original: bytes | None = None
) -> None:
    """Record where the board came from (``source.json``) for run.py and the tests: the hash of
    the file that is checked and, when that is a re-saved copy, of the original blob too."""
    meta = {
        "original_sha256": hashlib.sha256(original if original is not None else board).hexdigest(),
        "id": entry["id"],
        "board": name,
        "sha256": hashlib.sha256(board).hexdigest(),
        "repository": entry.get("repository"),
        "commit": entry.get("commit"),
        "demos": entry.get("demos"),
        "path": entry["board"],
    }
    data = (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode()
    write_if_changed(out / "source.json", data)


def main(argv: list[str] | None = None) -> int:
    """Build every (or each ``--only``) manifest entry; print what is missing."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--only", nargs="*", default=None, help="entry ids to build")
    args = ap.parse_args(argv)
    cache = args.cache or default_cache()
    man = load_manifest()
    missing: list[tuple[str, str]] = []
    built = 0
    for entry in man["boards"]:
        if args.only and entry["id"] not in args.only:
            continue
        out = cache / entry["id"]
        if "demos" in entry:
            why = build_demo_entry(entry, man["demos"], out)
        else:
            why = build_repo_entry(entry, args.mirrors, out)
        if why:
            missing.append((entry["id"], why))
            print(f"MISSING {entry['id']}: {why}")
        else:
            built += 1
            print(f"ok      {entry['id']}")
    print(f"{built} boards in {cache}; {len(missing)} missing")
    for ident, why in missing:
        print(f"  missing {ident}: {why}")
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
