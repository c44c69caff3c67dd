"""The viewer never parses a stranger's file in the server process without a bound (issue 41).

Previews that parse (a table, strings, a model, a scene, a file's page) run in a forked worker
with a memory cap (`web.isolate`), killed when the page gives up. The reproducer of issue 41: a
small `.vpp_pc` holding 32 MB tables of 8 M empty `<A/>` elements; `/table/` of one parsed in the
server made it hold gigabytes, and each further request started another parse.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_web_robust import start_server, stop

import gamepak

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self") or sys.platform == "win32", reason="reads the server's memory through /proc"
)

ELEMENTS = 8_000_000  # 4 bytes each: a 32 MB table, under the 32 MiB a table may hold
# Under the tables' element budget (500,000, one per 12 bytes), yet a parse of 100 MB and half a
# second: what the viewer's worker budgets must hold.
HEAVY_ELEMENTS = 499_000


def bomb_pack(
    folder: Path, tables: int = 2, name: str = "bomb", element: bytes = b"<A/>", count: int = ELEMENTS
) -> Path:
    table = b"<root><Table>" + element * count + b"</Table></root>"
    path = folder / f"{name}.vpp_pc"
    with gamepak.create(path, flags=1) as writer:  # compressed: the pack is small on disk
        for index in range(tables):
            writer.add(f"{name}{index}.xtbl", table)
    return path


def http_get(base: str, path: str, timeout: float = 120) -> tuple[int, bytes]:
    host, port = base[len("http://") :].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return int(reply.split(b" ", 2)[1]), reply


def peak_rss(pid: int) -> int:
    """The process's peak resident size in bytes (VmHWM)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(name))
    return found


def server(root: Path, memory: int, seconds: float) -> tuple[subprocess.Popen[str], str]:
    code = (
        "import sys",
        "from gamepak.web import isolate, pages, serve",
        f"isolate.MEMORY_BYTES = {memory}",
        f"pages.PREVIEW_SECONDS = {seconds}",
        "serve(sys.argv[1], port=0, ready=lambda url: print(url, flush=True))",
    )
    return start_server(root, *code)


@pytest.fixture(scope="module")
def bomb_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bomb")
    pack = bomb_pack(root)
    assert pack.stat().st_size < 1 << 20  # small on disk
    bomb_pack(root, name="heavy", element=b"<A>1234567890</A>", count=HEAVY_ELEMENTS)
    return root


def test_a_table_bomb_is_a_clear_error_and_the_server_stays_small(bomb_root: Path) -> None:
    process, base = server(bomb_root, 48 << 20, 90.0)
    try:
        start_peak = peak_rss(process.pid)
        started = time.monotonic()
        # The issue's bomb (8 M elements) is refused by the tables' element budget, before any tree.
        status, reply = http_get(base, "/table/bomb.vpp_pc/bomb0.xtbl")
        text = reply.decode("utf-8", "replace")
        assert status == 422 and "--allow-large" in text, text[-600:]
        # A table under that budget that still takes more memory than a preview may: its worker
        # is stopped by the memory budget, and the page says so.
        status, reply = http_get(base, "/table/heavy.vpp_pc/heavy0.xtbl")
        elapsed = time.monotonic() - started
        text = reply.decode("utf-8", "replace")
        assert status == 422, text[-600:]
        assert "heavy.vpp_pc/heavy0.xtbl: too large to preview" in text and "48 MiB of memory" in text
        # The server read the members (their bytes) at most: it never parsed them.
        assert peak_rss(process.pid) < start_peak + (96 << 20), (start_peak, peak_rss(process.pid))
        assert elapsed < 90
        time.sleep(0.2)
        assert children_of(process.pid) == []  # the worker is gone with its memory
        # The server still answers, and a second request is bounded the same way.
        assert http_get(base, "/browse/")[0] == 200
        assert http_get(base, "/table/heavy.vpp_pc/heavy1.xtbl")[0] == 422
        assert peak_rss(process.pid) < start_peak + (96 << 20)
    finally:
        err = stop(process)
    assert "Traceback" not in err


def test_a_page_that_gives_up_stops_its_parse(bomb_root: Path) -> None:
    # A budget the parse fits in, and less time than it takes: the page gives up (503) and the
    # worker is killed, not left parsing.
    process, base = server(bomb_root, 8 << 30, 0.1)
    try:
        start_peak = peak_rss(process.pid)
        outcomes: list[int] = []
        most_workers = [0]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                most_workers[0] = max(most_workers[0], len(children_of(process.pid)))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()

        def ask(name: str) -> None:
            outcomes.append(http_get(base, f"/table/heavy.vpp_pc/{name}")[0])

        askers = [threading.Thread(target=ask, args=(f"heavy{index % 2}.xtbl",)) for index in range(4)]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join(60)
        time.sleep(0.3)
        done.set()
        watcher.join()
        assert outcomes == [503] * 4
        assert 1 <= most_workers[0] <= 2  # PREVIEW_WORKERS at once, however many ask
        assert children_of(process.pid) == []  # given up on: killed, not still parsing
        assert peak_rss(process.pid) < start_peak + (96 << 20)
    finally:
        err = stop(process)
    assert "Traceback" not in err
