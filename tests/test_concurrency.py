"""The head-start primitives of :mod:`accel_drc.concurrency`: a computation runs once, on the
thread of its first caller (or its own thread for a ``Background``), and every asker gets its
value or its error."""

from __future__ import annotations

import threading

import pytest
from accel_drc.concurrency import Background, RunOnce


def test_run_once_runs_on_the_first_callers_thread_once() -> None:
    calls: list[str] = []
    job = RunOnce(lambda: calls.append(threading.current_thread().name) or 42)
    t = threading.Thread(target=job.run, name="first")
    t.start()
    t.join(10)
    job.run()  # a later call: nothing runs again
    assert job.result() == 42 and calls == ["first"]


def test_run_once_result_waits_and_reraises() -> None:
    gate = threading.Event()

    def slow() -> int:
        gate.wait(10)
        raise ValueError("no")

    job = RunOnce(slow)
    runner = threading.Thread(target=job.run)
    runner.start()
    got: list[BaseException] = []

    def ask() -> None:
        try:
            job.result()
        except ValueError as exc:
            got.append(exc)

    asker = threading.Thread(target=ask)
    asker.start()
    asker.join(0.2)
    assert asker.is_alive()  # waiting for the run
    gate.set()
    asker.join(10)
    runner.join(10)
    assert [str(e) for e in got] == ["no"]
    with pytest.raises(ValueError):
        job.result()


def test_background_runs_on_its_own_thread() -> None:
    names: list[str] = []
    job = Background(lambda: names.append(threading.current_thread().name) or "ok", "probe")
    assert job.result() == "ok" and names == ["accel-drc probe"]
    job.run()  # already run: a no-op
    assert names == ["accel-drc probe"]
