"""`gamepak serve` holding up (issue 30): names that are not UTF-8, malformed URLs, security
headers on every response, packs closed when they leave the cache, file descriptors under a low
limit, the preview limit, the peg cache, shortages not remembered, slow clients dropped."""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from gamepak import create
from gamepak.content import previews as content_previews
from gamepak.web import app as web_app
from gamepak.web import pages as web_pages
from gamepak.web import site as web_site
from gamepak.web.app import create_app, name_of_shown, segment_url, shown_name

from web_fixtures import build_root, peg_pair

LATIN1_NAME = os.fsdecode(b"caf\xe9.txt")  # 'caf\udce9.txt': the byte 0xe9 kept as a surrogate escape
SHOWN = "caf\\xe9.txt"
SECURITY = ("content-security-policy", "x-content-type-options", "x-frame-options")


def client_of(root: Path, **options: object) -> TestClient:
    return TestClient(create_app(root), base_url="http://127.0.0.1:8000", **options)  # type: ignore[arg-type]


def main_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[html.find("<main>") : html.find("</main>")]))


@pytest.fixture
def latin1_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    try:
        with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "wb") as file:
            file.write(b"latin-1 name\n")
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    with create(root / "names.pak") as pak:
        pak.add(LATIN1_NAME, b"member with a latin-1 name\n")
        pak.add("plain.txt", b"plain\n")
    return root


# -- names -----------------------------------------------------------------------------------------
def test_shown_names_read_back_exactly() -> None:
    for name in (LATIN1_NAME, "plain.txt", "back\\slash", "\\xe9 literally", "\udcff\udc80", "a\ud800b"):
        shown = shown_name(name)
        assert shown.encode("utf-8")  # a page and a URL can carry it
        assert name_of_shown(shown) == name
    assert shown_name(LATIN1_NAME) == SHOWN
    for bad in ("\\x41", "\\", "a\\b", "\\xZZ"):
        with pytest.raises(ValueError):
            name_of_shown(bad)


def test_a_download_of_a_name_that_is_not_utf8_is_named_in_valid_utf8(latin1_root: Path) -> None:
    # filename* must be UTF-8 (RFC 6266): the byte 0xe9 percent-encoded raw would not be, and
    # browsers then drop the name; it is U+FFFD there, "_" in the ASCII fallback.
    from urllib.parse import unquote

    from gamepak.web.urls import attachment

    for segments in ([LATIN1_NAME], ["names.pak", LATIN1_NAME]):
        header = client_of(latin1_root).get(segment_url("raw", segments)).headers["content-disposition"]
        assert header == "attachment; filename=\"caf_.txt\"; filename*=UTF-8''caf%EF%BF%BD.txt"
        assert unquote(header.split("''", 1)[1], errors="strict") == "caf\ufffd.txt"
    assert attachment('say "hi"\\ \u00e9t\u00e9.txt') == (
        "attachment; filename=\"say _hi__ _t_.txt\"; filename*=UTF-8''say%20%22hi%22%5C%20%C3%A9t%C3%A9.txt"
    )
    assert attachment("a\ud800b") == "attachment; filename=\"a_b\"; filename*=UTF-8''a%EF%BF%BDb"


def test_names_that_are_not_utf8_are_listed_and_linked(latin1_root: Path) -> None:
    client = client_of(latin1_root)
    link = segment_url("browse", [LATIN1_NAME])
    assert link == "/browse/caf%5Cxe9.txt"
    folder = client.get("/browse/")
    assert folder.status_code == 200 and SHOWN in main_text(folder.text)
    assert f'href="{link}"' in folder.text
    page = client.get(link)
    assert page.status_code == 200 and "latin-1 name" in page.text and SHOWN in main_text(page.text)
    assert client.get(segment_url("raw", [LATIN1_NAME])).content == b"latin-1 name\n"
    pack = client.get("/browse/names.pak")
    assert pack.status_code == 200 and SHOWN in main_text(pack.text)
    member = client.get(segment_url("browse", ["names.pak", LATIN1_NAME]))
    assert member.status_code == 200 and "member with a latin-1 name" in member.text
    found = client.get("/search?q=caf")
    assert found.status_code == 200
    assert (
        f"names.pak/{SHOWN}" in main_text(found.text)
        and segment_url("browse", ["names.pak", LATIN1_NAME]) in found.text
    )


@pytest.mark.parametrize("path", ["/browse/%ff", "/browse/%c0%ae", "/raw/names.pak/%ff", "/browse/caf%5Cx41.txt"])
def test_malformed_escapes_are_a_400_page(latin1_root: Path, path: str) -> None:
    response = client_of(latin1_root).get(path)
    assert response.status_code == 400, response.text
    assert "<h1>Error 400</h1>" in response.text
    assert all(header in response.headers for header in SECURITY)


def test_every_response_carries_the_security_headers(latin1_root: Path, monkeypatch, capfd) -> None:
    client = client_of(latin1_root)
    statuses = {
        "/browse/": 200,
        "/browse/%ff": 400,
        "/browse/%2e%2e/": 403,
        "/browse/nothing": 404,
        "/texture/names.pak/plain.txt?name=x": 422,
    }
    for path, status in statuses.items():
        response = client.get(path)
        assert response.status_code == status, path
        assert all(header in response.headers for header in SECURITY), path
    assert client.post("/browse/").status_code == 405
    assert all(header in client.post("/browse/").headers for header in SECURITY)

    # An internal error: a page with the headers, and nothing raised past the application (the
    # test client would raise it; uvicorn would print its traceback).
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(web_site.Site, "rows", broken)
    response = client.get("/browse/")
    assert response.status_code == 500 and "RuntimeError: a bug" in response.text
    assert all(header in response.headers for header in SECURITY)
    # Even when the error page cannot be made.
    monkeypatch.setattr(web_app.Viewer, "page", broken)
    response = client.get("/browse/")
    assert response.status_code == 500 and all(header in response.headers for header in SECURITY)
    assert "Traceback" not in capfd.readouterr().err


# -- packs closed, descriptors flat ----------------------------------------------------------------
def make_packs(root: Path, count: int) -> None:
    root.mkdir(exist_ok=True)
    for index in range(count):
        with create(root / f"p{index:03}.pak") as pak:
            pak.add("a.txt", b"a")


def test_packs_leaving_the_cache_are_closed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(web_site, "OPEN_PACKS", 3)
    make_packs(tmp_path, 6)
    site = web_site.Site(str(tmp_path))
    with site.session():
        first = site.resolve(["p000.pak"])
        first_archive = first.archive
        assert first_archive is not None
        for index in range(1, 6):
            with site.session():
                site.resolve([f"p{index:03}.pak"])
        # Evicted while this request holds it: still readable.
        assert not first_archive._source.closed
        assert first.tree is not None and first.tree.open(first.tree.lookup("a.txt")).read() == b"a"
    assert first_archive._source.closed
    assert site.open_packs() == 3
    # A pack whose file changed is replaced, and the old one closed.
    with site.session():
        old = site.resolve(["p005.pak"]).archive
    with create(tmp_path / "p005.pak", overwrite=True) as pak:
        pak.add("b.txt", b"bb")
    os.utime(tmp_path / "p005.pak", ns=(1, 1))
    with site.session():
        assert "b.txt" in [row.name for row in site.rows(site.resolve(["p005.pak"]))]
    assert old is not None and old._source.closed
    site.close()
    assert site.open_packs() == 0


def test_a_source_closes_its_descriptor(tmp_path: Path) -> None:
    from gamepak.core.source import Source

    (tmp_path / "f").write_bytes(b"x")
    source = Source.open(tmp_path / "f")
    fd = source.fd
    assert fd is not None
    source.close()
    source.close()
    with pytest.raises(OSError):
        os.fstat(fd)
    dropped = Source.open(tmp_path / "f")
    fd = dropped.fd
    assert fd is not None
    del dropped  # never closed: the finalizer closes it
    with pytest.raises(OSError):
        os.fstat(fd)


def start_server(root: Path, *code: str, limit: int | None = None) -> tuple[subprocess.Popen[str], str]:
    """`gamepak serve ROOT` in a subprocess (under `ulimit -n limit`), and its base URL."""
    preexec = None
    if limit is not None:
        import resource

        def preexec() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    command = [sys.executable, "-m", "gamepak", "serve", str(root), "--port", "0"]
    if code:
        command = [sys.executable, "-c", "\n".join(code), str(root)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not match:
        process.kill()
        raise AssertionError(f"no URL in {line!r}: {process.communicate()[1]}")
    return process, match.group(0)


def stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, err = process.communicate(timeout=15)
    return err


def http_get(base: str, path: str) -> tuple[int, bytes]:
    host, port = base[len("http://") :].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return int(reply.split(b" ", 2)[1]), reply


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_descriptors_stay_flat_under_a_low_limit(tmp_path: Path) -> None:
    make_packs(tmp_path, 300)
    process, base = start_server(tmp_path, limit=128)
    try:
        counts = []
        for index in range(300):
            status, reply = http_get(base, f"/browse/p{index:03}.pak")
            assert status == 200, reply[-400:]
            assert b"a.txt" in reply
            if index % 50 == 49:
                counts.append(len(os.listdir(f"/proc/{process.pid}/fd")))
        # The cache's packs and the server's own: the same after 50 packs as after 300.
        assert max(counts) - min(counts) <= 4, counts
        assert max(counts) < 128 - 20
        status, reply = http_get(base, "/search?q=a.txt")
        assert status == 200 and b"p299.pak/a.txt" in reply
        assert len(os.listdir(f"/proc/{process.pid}/fd")) <= max(counts) + 4
    finally:
        err = stop(process)
    assert "Traceback" not in err and "Too many open files" not in err, err


def test_shortages_are_not_remembered_and_pages_say_why(tmp_path: Path, monkeypatch) -> None:
    make_packs(tmp_path, 1)
    import gamepak.core.opening as opening
    from gamepak.errors import GamepakError

    real_open = opening.open
    failures = [OSError(errno.EMFILE, "Too many open files")]

    def failing_open(*args: object, **kwargs: object) -> object:
        if failures:
            raise GamepakError("p000.pak: cannot open: Too many open files") from failures.pop()
        return real_open(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(opening, "open", failing_open)
    client = client_of(tmp_path)
    busy = client.get("/browse/p000.pak")
    assert busy.status_code == 503 and "Too many open files" in busy.text
    assert all(header in busy.headers for header in SECURITY)
    again = client.get("/browse/p000.pak")
    assert again.status_code == 200 and "a.txt" in again.text

    def refused(*args: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "p000.pak")

    monkeypatch.setattr(web_site.Site, "rows", refused)
    denied = client.get("/browse/")
    assert denied.status_code == 422 and "p000.pak: Permission denied" in main_text(denied.text)


# -- previews ---------------------------------------------------------------------------------------
def test_at_most_the_stated_number_of_previews_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(web_pages, "PREVIEW_SECONDS", 0.15)
    viewer = web_app.Viewer(web_site.Site(str(tmp_path)))
    running = []
    most = [0]
    lock = threading.Lock()

    def work() -> None:
        with lock:
            running.append(1)
            most[0] = max(most[0], len(running))
        time.sleep(0.5)  # longer than the page waits: given up on, still running
        with lock:
            running.pop()

    async def many() -> list[str]:
        outcomes: list[str] = []

        async def one() -> None:
            try:
                await viewer.bounded(work)
                outcomes.append("done")
            except web_site.Busy:
                outcomes.append("given up")

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one)
            await anyio.sleep(0.4)
            for _ in range(4):  # the first ones were given up on: their places are still taken
                group.start_soon(one)
        return outcomes

    outcomes = anyio.run(many)
    time.sleep(0.6)
    assert most[0] <= web_pages.PREVIEW_WORKERS, most
    assert outcomes.count("given up") == 12


def test_parsed_pegs_are_cached_by_path_size_and_mtime(tmp_path: Path, monkeypatch) -> None:
    from gamepak.formats.rfg.peg import Peg

    cpu, gpu, pixels = peg_pair()
    (tmp_path / "crate.cpeg_pc").write_bytes(cpu)
    (tmp_path / "crate.gpeg_pc").write_bytes(gpu)
    parsed = []
    real_parse = Peg.parse

    def counting_parse(*args: object, **kwargs: object) -> Peg:
        parsed.append(1)
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Peg, "parse", counting_parse)
    content_previews._pegs.clear()
    client = client_of(tmp_path)
    assert client.get("/browse/crate.cpeg_pc").status_code == 200
    for name in pixels:
        for _ in range(3):
            assert client.get(f"/texture/crate.cpeg_pc?name={name}").status_code == 200
    assert len(parsed) == 1
    os.utime(tmp_path / "crate.gpeg_pc", ns=(1, 1))  # a changed file is read again
    assert client.get(f"/texture/crate.cpeg_pc?name={next(iter(pixels))}").status_code == 200
    assert len(parsed) == 2


# -- slow clients ----------------------------------------------------------------------------------
def test_slow_and_idle_clients_are_dropped(tmp_path: Path) -> None:
    build_root(tmp_path / "root")
    code = (
        "import sys",
        "from gamepak.web import serve",
        "serve(sys.argv[1], port=0, client_seconds=1.0, ready=lambda url: print(url, flush=True))",
    )
    process, base = start_server(tmp_path / "root", *code)
    host, port = base[len("http://") :].split(":")
    try:
        half = []
        for _ in range(20):
            connection = socket.create_connection((host, int(port)), timeout=10)
            connection.sendall(b"GET /browse/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            half.append(connection)
        idle = socket.create_connection((host, int(port)), timeout=10)
        started = time.monotonic()
        # The server still answers others meanwhile.
        assert http_get(base, "/browse/")[0] == 200
        for connection in [*half, idle]:
            while connection.recv(1024):  # the server closes it (socket.timeout if it does not)
                pass
            connection.close()
        assert time.monotonic() - started < 5
    finally:
        err = stop(process)
    assert "Traceback" not in err


def test_a_preview_given_up_on_keeps_its_pack_open(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(web_pages, "PREVIEW_SECONDS", 0.1)
    monkeypatch.setattr(web_site, "OPEN_PACKS", 1)
    make_packs(tmp_path, 2)
    viewer = web_app.Viewer(web_site.Site(str(tmp_path)))
    read: list[bytes] = []

    def slow_read(place: web_site.Place) -> None:
        time.sleep(0.4)  # the request has ended, and its pack has left the cache, by now
        with place.open() as stream:
            read.append(stream.read())

    async def request() -> None:
        with viewer.site.session():
            place = viewer.site.resolve(["p000.pak", "a.txt"])
            viewer.site.resolve(["p001.pak"])  # p000.pak leaves the cache
            with pytest.raises(web_site.Busy):
                await viewer.bounded(slow_read, place)

    anyio.run(request)
    time.sleep(0.6)
    assert read == [b"a"]


def test_a_preview_given_up_before_it_starts_frees_its_place(tmp_path: Path, monkeypatch) -> None:
    viewer = web_app.Viewer(web_site.Site(str(tmp_path)))
    ran: list[int] = []

    async def attempts() -> object:
        monkeypatch.setattr(web_pages, "PREVIEW_SECONDS", 0)  # given up at once, before any thread
        for _ in range(web_pages.PREVIEW_WORKERS + 3):
            with pytest.raises(web_site.Busy):
                await viewer.bounded(ran.append, 1)
        monkeypatch.setattr(web_pages, "PREVIEW_SECONDS", 5.0)
        return await viewer.bounded(lambda: "done")

    assert anyio.run(attempts) == "done"
    time.sleep(0.1)
    assert ran == []
