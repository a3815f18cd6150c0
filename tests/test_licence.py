"""The licence (issue 31 item 13): Apache-2.0 in LICENSE, in the package metadata and in KiCad's
PCM metadata, and a NOTICE that names every bundled third-party board with its own licence.
(The wheel and the sdist carrying LICENSE and NOTICE: tests/test_release.py, which builds them.)"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from accel_drc import kicad_package
from conftest import ROOT

#: SHA-256 of the Apache License 2.0 text with white space collapsed: the text Debian ships as
#: /usr/share/common-licenses/Apache-2.0, and the one Antmicro's m2-oculink-adapter fixture
#: carries (two independent copies agree)
APACHE_2_0 = "0ffddef9e48f8a09aed5caf2d44f7ba1c1be2d9b8e0a6f693b1635b2d5566645"

#: how a bundled LICENSE file is recognised: SPDX id -> a phrase only that licence's text holds
SIGNATURES = {
    "CC0-1.0": r"CC0 1\.0 Universal",
    "Apache-2.0": r"Apache License\s+Version 2\.0, January 2004",
    "BSD-3-Clause": r"BSD 3-Clause License|Neither the name of the copyright holder",
    "MIT": r"Permission is hereby granted, free of charge",
    "GPL-3.0": r"GNU GENERAL PUBLIC LICENSE\s+Version 3",
    "CERN-OHL": r"CERN Open Hardware Licence",
}


def _normalised_sha(path: Path) -> str:
    return hashlib.sha256(" ".join(path.read_text(encoding="utf-8").split()).encode()).hexdigest()


def _spdx_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    found = [spdx for spdx, rx in SIGNATURES.items() if re.search(rx, text)]
    assert len(found) == 1, f"{path}: licence not recognised ({found}); add it to SIGNATURES"
    return found[0]


def _bundled_board_folders() -> list[Path]:
    """Every folder of the repository that carries a third-party board or its own licence file:
    the fixture boards, the shipped example, and any other folder holding a LICENSE."""
    folders = set(ROOT.glob("fixtures/boards/*/")) | set(ROOT.glob("engine/accel_drc/examples/*/"))
    skip = {".git", ".venv", "node_modules", "build", "dist"}
    for lic in ROOT.rglob("LICENSE*"):
        rel = lic.relative_to(ROOT)
        if rel.parts[0] in skip or rel.parts[0].startswith((".", "venv")) or len(rel.parts) == 1:
            continue
        if any(p.endswith(".egg-info") for p in rel.parts):
            continue
        folders.add(lic.parent)
    return sorted(f for f in folders if f.is_dir())


def test_licence_is_apache_2_0_everywhere() -> None:
    assert _normalised_sha(ROOT / "LICENSE") == APACHE_2_0
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^license = "Apache-2.0"$', toml, re.M)
    files = re.search(r"^license-files = \[(.*)\]$", toml, re.M)
    assert files and {"LICENSE", "NOTICE"} <= set(re.findall(r'"([^"]+)"', files.group(1)))
    assert kicad_package.LICENSE_ID == "Apache-2.0"
    assert kicad_package.metadata("9.0")["license"] == "Apache-2.0"


def test_every_bundled_board_has_its_licence_and_is_in_notice() -> None:
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    assert notice.startswith("accel-drc\n") and "Apache License, Version 2.0" in notice
    folders = _bundled_board_folders()
    assert len(folders) >= 5  # 4 fixture boards and the shipped example
    for folder in folders:
        rel = folder.relative_to(ROOT).as_posix() + "/"
        lic = folder / "LICENSE"
        assert lic.is_file(), f"{rel} has no LICENSE"
        assert (folder / "PROVENANCE.md").is_file(), f"{rel} has no PROVENANCE.md"
        spdx = _spdx_of(lic)
        entry = re.search(rf"^{re.escape(rel)}.*\n(.+)$", notice, re.M)
        assert entry, f"{rel} is not listed in NOTICE"
        assert re.search(rf"-- {re.escape(spdx)}\b", entry.group(1)), (rel, spdx, entry.group(1))
        provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
        assert "`LICENSE`" in provenance, f"{rel}PROVENANCE.md does not point at its LICENSE"
    # the derived data built from boards that are not bundled says whose they are
    assert "tests/golden/findings/" in notice and "GPL-2.0-or-later" in notice


def test_the_shipped_example_is_listed_as_shipped() -> None:
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    for ex in ROOT.glob("engine/accel_drc/examples/*/"):
        line = next(x for x in notice.splitlines() if x.startswith(ex.relative_to(ROOT).as_posix()))
        assert "shipped in the wheel" in line
