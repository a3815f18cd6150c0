"""Rule-data load: the hardened PyYAML loader (libyaml CSafeLoader, nodes composed once) against
ruamel.yaml's round-trip loader, the one ruamel loader that keeps line numbers (issue 12 item 6:
ruamel only if it gives the lines with less code and is no slower).

    python bench/bench_yaml.py [repeats]

Prints the median wall time of (a) ``yamlsafe.load_yaml`` over every file under ``rules/``
(parse + line map + alias/depth/finite checks), (b) ruamel.yaml ``YAML(typ="rt")`` parsing the
same files (parse only: the line numbers are on the result's ``.lc``; the depth, alias and
finite checks would still have to be added), (c) ruamel ``typ="safe"`` (C loader when built, no
line numbers: not usable, shown for scale), and (d) the whole ``packs.load_library()``.
"""

from __future__ import annotations

import statistics
import sys
import time

from accel_drc import yamlsafe
from accel_drc.packs import RULES_DIR, load_library


def _median(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    files = sorted(RULES_DIR.glob("*.yaml")) + sorted(RULES_DIR.glob("classes/*.yaml"))
    texts = [(str(f), f.read_text(encoding="utf-8")) for f in files]
    size = sum(len(t) for _, t in texts)
    print(f"{len(files)} files, {size / 1024:.0f} KiB, median of {n}")
    ours = _median(lambda: [yamlsafe.load_yaml(p, t) for p, t in texts], n)
    print(f"  yamlsafe.load_yaml (CSafeLoader, lines): {ours * 1e3:8.1f} ms")
    try:
        from ruamel.yaml import YAML
    except ImportError:
        print("  ruamel.yaml not installed")
    else:
        rt = YAML(typ="rt")
        safe = YAML(typ="safe", pure=False)
        r1 = _median(lambda: [rt.load(t) for _, t in texts], n)
        r2 = _median(lambda: [safe.load(t) for _, t in texts], n)
        print(f"  ruamel typ=rt (lines, parse only):      {r1 * 1e3:8.1f} ms  ({r1 / ours:.1f}x)")
        print(f"  ruamel typ=safe (no lines):             {r2 * 1e3:8.1f} ms  ({r2 / ours:.1f}x)")
    lib = _median(load_library, n)
    print(f"  packs.load_library() (all of it):       {lib * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
