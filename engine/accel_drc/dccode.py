"""Precompiled code for the methods :mod:`dataclasses` generates for accel-drc's classes.

Why: ``@dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` of every class and compiles each with ``exec``: the ~70
classes a check imports cost ~380 compiles on every run, a noticeable share of start-up.  The package ships those compiled functions
(``bundled_dataclasses.marshal``: the ``.pyc`` magic number, then the marshalled code object of
each generated source keyed by the source's SHA-256; built by ``python -m accel_drc.regenerate``),
and :func:`install` makes
``dataclasses`` execute the shipped code object when the source it generated is one of them.

Why it is exact: the key is the full generated text, so a hit runs the code that compiling this
very text gives (compiled as ``dataclasses`` compiles it: no ``__future__`` flags); anything
else (a class changed since the table was built, another package's dataclass) is compiled as
before.  The table is used only by the CPython bytecode version that wrote it (the magic
number of ``.pyc`` files), and only where ``dataclasses`` compiles through ``exec``.  Nothing is
written at run time.

This module deliberately has no ``from __future__ import annotations``: a source compiled here
on a miss must get the same compiler flags as in ``dataclasses`` (none), or the generated
``__init__`` would keep its annotations as strings.
"""

import builtins
import hashlib
import importlib.util
import marshal
import os
import sys

#: the shipped table (package data)
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundled_dataclasses.marshal")

_state = {"table": None, "record": None}


def _exec(source, globals=None, locals=None):  # noqa: A002 - the signature of exec
    """``exec`` as ``dataclasses`` calls it, with the shipped code object for a known source."""
    if isinstance(source, str):
        rec = _state["record"]
        if rec is not None:
            rec.append(source)
        table = _state["table"]
        if table:
            code = table.get(hashlib.sha256(source.encode("utf-8")).digest())
            if code is not None:
                return builtins.exec(code, globals, locals)
    return builtins.exec(source, globals, locals)


def compile_source(source):
    """The code object ``dataclasses``' own ``exec(source)`` compiles (no future flags)."""
    return compile(source, "<string>", "exec", dont_inherit=True)


def install():
    """Make ``dataclasses`` use the shipped table (a no-op where it cannot be used)."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        return
    if not hasattr(dataclasses, "_create_fn") and not hasattr(dataclasses, "_FuncBuilder"):
        return  # a dataclasses that does not compile generated source: nothing to replace
    table = read_table()
    if not table:
        return
    _state["table"] = table
    dataclasses.exec = _exec  # shadows the builtin in that module only


def read_table(data=None):
    """The shipped table (``{sha256 of source: code}``), or None when it was written by another
    CPython bytecode version (its first four bytes: the ``.pyc`` magic number) or is damaged."""
    try:
        if data is None:
            with open(TABLE, "rb") as fh:
                data = fh.read()
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return None  # another bytecode version's code objects: not even unmarshalled
        table = marshal.loads(data[4:])
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return table if isinstance(table, dict) else None


def build():
    """The table's bytes: every source ``dataclasses`` generates while every module of the
    package is imported, in a fresh interpreter (so every class is really created)."""
    import subprocess

    code = (
        "import sys, pkgutil, importlib\n"
        "from accel_drc import dccode\n"
        "import dataclasses\n"
        "dccode._state['table'] = None\n"
        "dccode._state['record'] = seen = []\n"
        "dataclasses.exec = dccode._exec\n"
        "import accel_drc\n"
        "for m in pkgutil.walk_packages(accel_drc.__path__, 'accel_drc.'):\n"
        "    if m.name.endswith('__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception:\n"
        "        pass\n"
        "sys.stdout.buffer.write(__import__('marshal').dumps(seen))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, env=dict(os.environ)
    )
    sources = sorted(set(marshal.loads(out.stdout)))
    table = {hashlib.sha256(s.encode("utf-8")).digest(): compile_source(s) for s in sources}
    return importlib.util.MAGIC_NUMBER + marshal.dumps(table)
