"""core.forked: a forked worker's answers, errors and ends reach the parent; nothing hangs."""

from __future__ import annotations

import copyreg
import os
import signal
from collections.abc import Callable

import pytest

from gamepak.core.forked import Channel, Queue, Worker, can_split
from gamepak.errors import GamepakError


class Unmakeable(Exception):
    """Pickles, but cannot be made again from its pickle (a required keyword argument)."""

    def __init__(self, message: str, *, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


@pytest.fixture(autouse=True)
def deadline() -> object:
    """A hang fails the test instead of stopping the run."""

    def expired(*_: object) -> None:
        raise TimeoutError("still running after 30 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, 30)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_both_processes_take_from_one_queue_and_talk() -> None:
    queue = Queue(list(range(200)))

    def work(channel: Channel) -> None:
        taken = list(queue)  # maybe none: the parent may have taken them all
        channel.send(taken)
        factor = channel.receive()
        channel.send([number * factor for number in taken])

    try:
        with Worker(work, "test") as worker:
            mine = list(queue)
            theirs = worker.receive()
            worker.send(3)
            assert worker.receive() == [number * 3 for number in theirs]
    finally:
        queue.close()
    assert sorted(mine + theirs) == list(range(200))


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        (lambda channel: (_ for _ in ()).throw(KeyError("gone")), KeyError, "gone"),
        (lambda channel: (_ for _ in ()).throw(Unmakeable("odd", detail="x")), GamepakError, "test: Unmakeable: odd"),
        (lambda channel: os._exit(3), GamepakError, "test: the worker process ended with status 3 before it answered"),
        (
            lambda channel: os.kill(os.getpid(), signal.SIGKILL),
            GamepakError,
            "test: the worker process was killed by signal 9 before it answered",
        ),
    ],
)
def test_what_ends_the_worker_reaches_the_parent(
    body: Callable[[Channel], None], error: type[Exception], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tblib's pickling support (dask installs it) registers every exception class that exists
    # then with copyreg, which would make Unmakeable from its __dict__ after all.
    monkeypatch.delitem(copyreg.dispatch_table, Unmakeable, raising=False)
    with pytest.raises(error, match=message), Worker(body, "test") as worker:
        worker.receive()


def test_sending_to_a_worker_that_is_gone_says_so() -> None:
    def work(channel: Channel) -> None:
        os.close(channel.reader)
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"), Worker(work, "test") as worker:
        worker.send(b"x" * (1 << 20))  # more than the pipe holds: the write meets the closed end


def test_a_parent_that_stops_stops_its_worker() -> None:
    def work(channel: Channel) -> None:
        signal.pause()  # would wait for ever

    with pytest.raises(RuntimeError, match="stop"), Worker(work, "test") as worker:
        pid = worker.pid
        raise RuntimeError("stop")
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # killed and reaped


def test_no_split_without_a_second_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    assert can_split()
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0})
    assert not can_split()
