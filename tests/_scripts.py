"""Load a repository script (a bench, the synthetic-board generator) as a module, for tests
that call its functions: the scripts are not a package and must stay runnable on their own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(relpath: str, name: str) -> ModuleType:
    """``ROOT / relpath`` imported as module ``name`` (registered in ``sys.modules`` first:
    dataclasses defined in the script look their module up while the class is built)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
