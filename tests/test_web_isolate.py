"""The viewer's preview worker (`web.isolate.Worker`) is `core.forked`'s worker with a memory cap:
its answer, its errors in the viewer's words, its death, and a kill from another thread than
the one waiting for its answer."""

from __future__ import annotations

import errno
import os
import signal
import threading
import time

import pytest

from gamepak.core import forked
from gamepak.errors import FormatLimitError, GamepakError
from gamepak.web import isolate

pytestmark = pytest.mark.skipif(not isolate.available(), reason="preview workers are forked (POSIX)")

MEMORY = 64 << 20


def answer(worker: isolate.Worker, seconds: float = 30) -> object:
    deadline = time.monotonic() + seconds
    while not worker.ready():
        assert time.monotonic() < deadline, "no answer"
        time.sleep(0.01)
    try:
        return worker.result()
    finally:
        worker.kill()


def gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # reaped
    return False


def test_one_fork_implementation() -> None:
    assert issubclass(isolate.Worker, forked.Worker)


def test_the_answer_and_the_errors_come_back_as_themselves() -> None:
    assert answer(isolate.Worker(lambda a, b: a + b, (2, 3), "x.bin", MEMORY)) == 5

    def refuse() -> None:
        raise FormatLimitError("x.bin: offset 12: bad count")

    with pytest.raises(FormatLimitError, match="offset 12: bad count"):
        answer(isolate.Worker(refuse, (), "x.bin", MEMORY))

    def missing() -> None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "/somewhere/x.bin")

    with pytest.raises(FileNotFoundError) as caught:
        answer(isolate.Worker(missing, (), "x.bin", MEMORY))
    assert caught.value.filename == "/somewhere/x.bin"


def test_the_errors_in_the_viewers_words() -> None:
    def hungry() -> bytes:
        return bytes(MEMORY * 4)  # past the cap: MemoryError in the worker

    with pytest.raises(GamepakError, match=r"x.bin: too large to preview: .* 64 MiB of memory"):
        answer(isolate.Worker(hungry, (), "x.bin", MEMORY))

    def deep() -> None:
        raise RecursionError("maximum recursion depth exceeded")

    with pytest.raises(GamepakError, match="x.bin: too deeply nested to preview"):
        answer(isolate.Worker(deep, (), "x.bin", MEMORY))

    def bug() -> None:
        raise ValueError("oops")

    with pytest.raises(GamepakError, match="x.bin: the preview failed: ValueError: oops"):
        answer(isolate.Worker(bug, (), "x.bin", MEMORY))

    with pytest.raises(GamepakError, match="x.bin: the worker process was killed by signal 9"):
        answer(isolate.Worker(lambda: os.kill(os.getpid(), signal.SIGKILL), (), "x.bin", MEMORY))


def test_a_kill_stops_and_reaps_it_while_another_thread_waits() -> None:
    worker = isolate.Worker(time.sleep, (60,), "x.bin", MEMORY)
    pid = worker.pid
    assert not worker.ready()
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            worker.result()
        except BaseException as exc:
            outcome.append(exc)

    waiting = threading.Thread(target=wait)
    waiting.start()
    time.sleep(0.1)
    worker.kill()
    waiting.join(10)
    assert not waiting.is_alive() and isinstance(outcome[0], GamepakError)
    assert gone(pid) and worker.reader == worker.writer == -1  # closed by the reader, once done
    worker.kill()  # again: nothing left to do
    with pytest.raises(GamepakError, match="the preview was stopped"):
        worker.result()


def test_a_kill_with_no_one_waiting_reaps_it() -> None:
    worker = isolate.Worker(time.sleep, (60,), "x.bin", MEMORY)
    pid = worker.pid
    worker.kill()
    assert gone(pid) and worker.reader == -1


def test_no_process_left_is_an_os_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(BlockingIOError):  # the viewer's "busy, try again" page
        isolate.Worker(lambda: None, (), "x.bin", MEMORY)


def test_a_server_that_exits_kills_its_workers() -> None:
    worker = isolate.Worker(time.sleep, (60,), "x.bin", MEMORY)
    pid = worker.pid
    isolate._kill_running()  # what the server runs at exit
    assert gone(pid) and worker.pid == 0
    assert worker not in isolate._running
