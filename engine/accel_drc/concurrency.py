"""Threads for the geometry: how many, and one computation run ahead in the background.

Why threads help under the GIL: the heavy geometry (making 10⁵-vertex zone fills valid,
intersecting planes, simplifying fills for the report) runs inside GEOS, which shapely 2 calls
with the GIL released, so it proceeds on another core while Python-level work continues.
Only shapely's *functions* do that: ``shapely.intersection(a, b)`` releases the GIL, the method
``a.intersection(b)`` holds it for the whole overlay (measured with shapely 2.2), so code meant to
run side by side uses the function forms.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable


def workers() -> int:
    """Threads for GEOS-bound work: the CPUs this process may use, at most 4 (beyond that the
    planes of one board do not split usefully)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        n = os.cpu_count() or 1
    return max(1, min(4, n))


class Background:
    """One computation on a daemon thread; :meth:`result` waits for it and re-raises its error
    in the caller.  Daemon, so an aborted run does not wait for it at exit."""

    def __init__(self, fn: Callable[[], Any], name: str) -> None:
        self._fn: Callable[[], Any] | None = fn
        self._done = threading.Event()
        self._value: Any = None
        self._exc: BaseException | None = None
        threading.Thread(target=self._run, name=f"accel-drc {name}", daemon=True).start()

    def _run(self) -> None:
        try:
            assert self._fn is not None
            self._value = self._fn()
        except BaseException as exc:  # handed to the caller of result(), raised there
            self._exc = exc
        finally:
            self._fn = None
            self._done.set()

    def result(self) -> Any:
        self._done.wait()
        if self._exc is not None:
            raise self._exc
        return self._value
