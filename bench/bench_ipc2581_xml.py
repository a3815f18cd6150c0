"""Is a hardened XML library (``defusedxml``, ``lxml``) worth swapping in for the IPC-2581
reader's own hardening (pyexpat + DOCTYPE/entity refusal + a depth bound, ``hostile.py``)?

Times, on one large IPC-2581 file, each in a fresh subprocess, alternated over ``--repeat``
rounds (best of the rounds is printed, with all rounds):

- ``reader``: ``accel_drc.readers.ipc2581.read`` — the whole reader as it is (parse + build the
  board);
- ``expat``: the bare pyexpat pass the reader is built on (no-op start/end handlers): the
  parser's share of the reader;
- ``defusedxml``: ``defusedxml.expatreader`` (SAX over the same expat, with its entity and
  DTD guards) and a no-op content handler — the floor of a defusedxml-based reader;
- ``lxml``: ``lxml.etree.iterparse`` with ``resolve_entities=False, no_network=True,
  huge_tree=True`` and every element cleared at its end — the floor of an lxml-based reader;
- ``reader-lxml``: the whole reader with an ``lxml.etree.XMLPullParser`` driving the same
  handlers (``sourceline`` for the line numbers) instead of pyexpat.

A library is worth it only if it makes the reader no slower: ``reader-lxml`` against
``reader`` answers it for lxml; defusedxml's SAX reader runs on the same expat with more
Python per element, so its floor against ``expat`` answers it for defusedxml.  Usage::

    python bench/bench_ipc2581_xml.py FILE.xml [--repeat 3]

(make the file with ``kicad-cli pcb export ipc2581 -o vme-wren.xml vme-wren.kicad_pcb``; the
two libraries are not dependencies of accel-drc: ``pip install lxml defusedxml`` to run this.)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

SNIPPETS = {
    "reader": "from accel_drc.readers import ipc2581\nipc2581.read(PATH)\n",
    "expat": (
        "from xml.parsers import expat\n"
        "p = expat.ParserCreate()\n"
        "p.buffer_text = True\n"
        "p.StartElementHandler = lambda n, a: None\n"
        "p.EndElementHandler = lambda n: None\n"
        "with open(PATH, 'rb') as fh:\n"
        "    while True:\n"
        "        b = fh.read(1 << 20)\n"
        "        if not b:\n"
        "            break\n"
        "        p.Parse(b, False)\n"
        "p.Parse(b'', True)\n"
    ),
    "defusedxml": (
        "import xml.sax.handler\n"
        "from defusedxml import expatreader\n"
        "p = expatreader.create_parser()\n"
        "p.setContentHandler(xml.sax.handler.ContentHandler())\n"
        "p.parse(PATH)\n"
    ),
    "lxml": (
        "from lxml import etree\n"
        "for _, el in etree.iterparse(PATH, events=('end',), resolve_entities=False,\n"
        "                             no_network=True, huge_tree=True):\n"
        "    el.clear()\n"
    ),
    # the whole reader with lxml as its parser: the same handlers fed by an XMLPullParser
    # (chunked, like the expat driver), each element cleared and dropped after its end
    "reader-lxml": (
        "from lxml import etree\n"
        "from accel_drc.readers import ipc2581 as m\n"
        "class Line:\n"
        "    CurrentLineNumber = 0\n"
        "def parse(self, chunks):\n"
        "    p = etree.XMLPullParser(events=('start', 'end'), resolve_entities=False,\n"
        "                            no_network=True, huge_tree=True)\n"
        "    line = self._parser = Line()\n"
        "    xs, xe = self._x_start, self._x_end\n"
        "    def drain():\n"
        "        for ev, el in p.read_events():\n"
        "            if ev == 'start':\n"
        "                line.CurrentLineNumber = el.sourceline\n"
        "                t = el.tag\n"
        "                xs(t[t.rfind('}') + 1:], dict(el.attrib))\n"
        "            else:\n"
        "                xe(el.tag)\n"
        "                el.clear()\n"
        "                par = el.getparent()\n"
        "                while par is not None and el.getprevious() is not None:\n"
        "                    del par[0]\n"
        "    for chunk in chunks:\n"
        "        p.feed(chunk)\n"
        "        drain()\n"
        "    p.close()\n"
        "    drain()\n"
        "m._Reader.parse = parse\n"
        "m.read(PATH)\n"
    ),
}


def run(name: str, path: str) -> float:
    code = f"PATH = {path!r}\n" + SNIPPETS[name]
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{name}: {r.stderr.strip().splitlines()[-1]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in SNIPPETS}
    for _ in range(args.repeat):  # alternated, so drift hits every variant alike
        for name in SNIPPETS:
            times[name].append(run(name, args.file))
    best = {k: min(v) for k, v in times.items()}
    own = best["reader"] - best["expat"]
    print(f"{'variant':<12}{'best s':>9}  rounds")
    for k, v in times.items():
        print(f"{k:<12}{best[k]:>9.2f}  {' '.join(f'{x:.2f}' for x in v)}")
    print(f"reader's own work (reader - expat): {own:.2f} s")
    for k in ("defusedxml", "lxml"):
        print(f"{k}: floor + own work = {best[k] + own:.2f} s vs reader {best['reader']:.2f} s")
    print(f"defusedxml floor / expat floor: {best['defusedxml'] / best['expat']:.2f}x")
    print(f"reader-lxml / reader: {best['reader-lxml'] / best['reader']:.2f}x")


if __name__ == "__main__":
    main()
