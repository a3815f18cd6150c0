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
from collections.abc import Iterable, Iterator
from typing import Any, Callable, TypeVar


def workers() -> int:
    """Threads for GEOS-bound work: the CPUs this process may use, at most 4 (beyond that the
    planes of one board do not split usefully)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        n = os.cpu_count() or 1
    return max(1, min(4, n))


class RunOnce:
    """A computation run by the first caller of :meth:`run`, on that caller's thread (a later or
    concurrent call returns at once); :meth:`result` waits for that run and re-raises its error
    in the caller."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn: Callable[[], Any] | None = fn
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self._value: Any = None
        self._exc: BaseException | None = None

    def run(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
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


class Background(RunOnce):
    """One computation on a daemon thread (:class:`RunOnce` started at once); :meth:`result`
    waits for it and re-raises its error in the caller.  Daemon, so an aborted run does not
    wait for it at exit."""

    def __init__(self, fn: Callable[[], Any], name: str) -> None:
        super().__init__(fn)
        threading.Thread(target=self.run, name=f"accel-drc {name}", daemon=True).start()


_T = TypeVar("_T")
_R = TypeVar("_R")
#: blocks in flight at once: two threads, each one block ahead (bounds the held results)
_AHEAD = 4


def ordered_map(fn: Callable[[_T], _R], items: Iterable[_T]) -> Iterator[_R]:
    """``fn(x)`` for every item, yielded in item order, computed on two threads when this
    process may use two CPUs (else here, one by one).

    Why threads: a block of the reader's parsers (or of nets for the island search) is a few
    dozen numpy operations on 10⁴-10⁵-element arrays (gathers, ``searchsorted``, sorts,
    comparisons), which run with the GIL released, so two blocks proceed side by side on two
    cores.  ``fn`` must only read shared state and write
    disjoint rows; whatever must happen in file order (numbering new nets, warnings) the caller
    does as it takes the results.  An error in ``fn`` is raised here, at its item; the items not
    started yet are cancelled.  At most :data:`_AHEAD` items are in flight (bounded memory).
    """
    todo = list(items)
    if min(2, workers()) < 2 or len(todo) < 2:
        for x in todo:
            yield fn(x)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="accel-drc blocks")
    try:
        pending: deque = deque()
        nxt = 0
        while nxt < len(todo) or pending:
            while nxt < len(todo) and len(pending) < _AHEAD:
                pending.append(pool.submit(fn, todo[nxt]))
                nxt += 1
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: the BLAS thread-count variables of the libraries numpy may be built on
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread() -> bool:
    """In a process that is ours (the command line, the KiCad plugin), before numpy is imported:
    BLAS on one thread unless the user chose otherwise.  True if it was set here.

    Why: numpy's OpenBLAS starts a thread per core at import, and they spin: they cost a
    small board's ``check`` CPU for nothing, and on a busy machine a long ``np.dot`` waited for
    them (report/board_svg.py).  Our matrices are small (the field solver's blocks, the PDN network):
    one BLAS thread is the faster choice, and the second core stays free for the GEOS and numpy
    work this package runs on its own threads.  A library caller's process is left alone."""
    import sys

    if "numpy" in sys.modules or any(k in os.environ for k in _BLAS_THREADS):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True
