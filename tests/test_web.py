"""`gamepak serve` over HTTP (Starlette's test client): pages, bytes, previews and the safety
rules. The real browser's view is tested in test_web_browser.py."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest
from PIL import Image
from starlette.testclient import TestClient

from gamepak import create
from gamepak.web import previews
from gamepak.web.app import create_app, segment_url

from web_fixtures import HOSTILE_NAME, STRINGS, build_root, picture


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray], TestClient]:
    root = tmp_path_factory.mktemp("served")
    pixels = build_root(root)
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("secret")
    try:  # Windows allows links only with developer mode, and has no FIFOs
        os.symlink(outside / "secret.txt", root / "leak.txt")
        os.symlink(outside, root / "leakdir")
        os.symlink(root / "plain" / "readme.txt", root / "inside-link.txt")
    except OSError:
        pass
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe")
    client = TestClient(create_app(root), base_url="http://127.0.0.1:8000")
    return root, pixels, client


def text_of(html: str) -> str:
    main = html[html.find("<main>") : html.find("</main>")]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main))


def listed(html: str) -> list[str]:
    """The names in a listing's table, in order (folders with their `/`)."""
    import html as html_module

    return [
        html_module.unescape(name)
        for name in re.findall(r'<tr class="(?:folder|file)">\s*<td><a href="[^"]*">([^<]*)</a>', html)
    ]


# -- pages ---------------------------------------------------------------------------------------
def test_the_root_lists_folders_and_packs(served) -> None:
    _, _, client = served
    page = client.get("/browse/")
    assert page.status_code == 200
    shown = text_of(page.text)
    for name in ("plain/", "mod.pak", "game.vpp_pc", "strings.bin"):
        assert name in shown
    assert client.get("/", follow_redirects=False).headers["location"] == "/browse/"


def test_a_pack_page_shows_its_format_header_and_members(served) -> None:
    _, _, client = served
    shown = text_of(client.get("/browse/mod.pak").text)
    assert "pak" in shown and "members 10" in shown
    assert "pics/" in shown and "readme.txt" in shown and "model.joe" in shown


def test_nested_packs_open_as_folders(served) -> None:
    _, _, client = served
    page = client.get("/browse/game.vpp_pc/zone.str2_pc/").text
    # Its members as the rows of a listing (a file page would name them nowhere as rows).
    assert listed(page) == ["crate.cpeg_pc", "crate.gpeg_pc"]
    # The nested pack's own format and header, as fields (the URL and the names say "vpp" too).
    shown = text_of(page)
    assert "format vpp (Red Faction Guerrilla packfile v3)" in shown and " members 2 " in shown
    assert " entry_count 2 " in shown


def test_the_check_runs_on_demand(served) -> None:
    _, _, client = served
    assert "OK: 2 members" not in client.get("/browse/game.vpp_pc").text
    assert "OK: 2 members: 0 errors, 0 warnings" in text_of(client.get("/browse/game.vpp_pc?check=1").text)


def test_listings_sort_filter_and_page(served, tmp_path: Path) -> None:
    _, _, client = served
    by_name = listed(client.get("/browse/mod.pak").text)
    assert by_name[0] == "pics/" and by_name[1:] == sorted(by_name[1:], key=str.lower)
    by_size = listed(client.get("/browse/mod.pak?sort=size&order=desc").text)
    assert by_size.index("big.txt") < by_size.index("sound.wav") < by_size.index("readme.txt")
    page = client.get("/browse/mod.pak?filter=*.wav").text
    assert listed(page) == ["sound.wav"] and "1 of 7" in text_of(page)
    many = tmp_path / "many"
    many.mkdir()
    with create(many / "many.pak") as pak:
        for index in range(1203):
            pak.add(f"m{index:05}.txt", b"x")
    client = TestClient(create_app(many), base_url="http://127.0.0.1:8000")
    first = client.get("/browse/many.pak")
    assert "page 1 of 3" in text_of(first.text)
    assert listed(first.text) == [f"m{index:05}.txt" for index in range(500)]
    last = client.get("/browse/many.pak?page=3")
    assert listed(last.text) == [f"m{index:05}.txt" for index in range(1000, 1203)]


def test_member_pages_and_downloads(served) -> None:
    root, _, client = served
    page = client.get("/browse/mod.pak/readme.txt")
    assert "A mod for the viewer" in page.text
    raw = client.get("/raw/mod.pak/readme.txt")
    assert raw.content == b"A mod for the viewer's tests.\n"
    assert raw.headers["content-disposition"] == "attachment; filename=\"readme.txt\"; filename*=UTF-8''readme.txt"
    assert raw.headers["content-type"] == "application/octet-stream"
    on_disk = client.get("/raw/plain/readme.txt")
    assert on_disk.content == b"plain file\n"
    assert client.head("/raw/mod.pak/readme.txt").status_code == 200
    # A pack's own bytes, and a page of them.
    assert client.get("/raw/mod.pak").content == (root / "mod.pak").read_bytes()
    assert "00000000" in client.get("/browse/mod.pak?view=file").text


def test_images_are_shown_as_browsers_can(served) -> None:
    _, _, client = served
    expected = picture()
    for name in ("a.png", "b.tga", "c.bmp", "d.dds"):
        page = client.get(f"/browse/mod.pak/pics/{name}")
        assert f'src="/image/mod.pak/pics/{name}"' in page.text
        image = client.get(f"/image/mod.pak/pics/{name}")
        assert image.status_code == 200 and image.headers["content-type"] in ("image/png",)
        pixels = np.asarray(Image.open(io.BytesIO(image.content)).convert("RGBA"))
        if name == "c.bmp":
            assert np.array_equal(pixels[..., :3], expected[..., :3])
        else:
            assert np.array_equal(pixels, expected), name


def test_an_image_shown_as_png_is_encoded_as_every_preview_is(served, monkeypatch: pytest.MonkeyPatch) -> None:
    """The viewer's PNG of a TGA is the content registry's PNG encoding (`png_bytes`), not a copy of it."""
    from gamepak.content import previews as content_previews

    encoded: list[str] = []
    real = content_previews.png_bytes

    def recorded(image: Any) -> bytes:
        encoded.append(image.mode)
        return real(image)

    monkeypatch.setattr(content_previews, "png_bytes", recorded)
    _, _, client = served
    assert client.get("/image/mod.pak/pics/b.tga").status_code == 200 and encoded


def test_peg_textures_are_pngs_of_the_decoders_pixels(served) -> None:
    _, decoded, client = served
    page = client.get("/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    assert "crate.tga: 64\u00d732 DXT5" in text_of(page.text)
    for name, pixels in decoded.items():
        url = f"/texture/game.vpp_pc/zone.str2_pc/crate.cpeg_pc?name={quote(name)}"
        assert url.replace("&", "&amp;") in page.text
        png = client.get(url)
        assert png.headers["content-type"] == "image/png"
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png.content)).convert("RGBA")), pixels)
    missing = client.get("/texture/game.vpp_pc/zone.str2_pc/crate.cpeg_pc?name=nothing")
    assert missing.status_code == 404


def test_models_are_served_as_gltf(served) -> None:
    _, _, client = served
    page = client.get("/browse/mod.pak/model.joe")
    assert 'data-model="/model/mod.pak/model.joe"' in page.text
    assert '<script src="/static/model-viewer.js"' in page.text
    model = client.get("/model/mod.pak/model.joe")
    assert model.headers["content-type"] == "model/gltf-binary" and model.content[:4] == b"glTF"
    script = client.get("/static/model-viewer.js")
    assert script.status_code == 200 and len(script.content) > 100_000  # three.js, shipped


def test_text_strings_audio_and_hex(served) -> None:
    _, _, client = served
    assert "&lt;root&gt;&lt;Table&gt;" in client.get("/browse/game.vpp_pc/notes.xtbl").text
    strings = text_of(client.get("/browse/strings.bin").text)
    for text in STRINGS:
        assert text.replace("<b>", " ").replace("</b>", " ").split()[0] in strings
    assert "&lt;b&gt;bold&lt;/b&gt;" in client.get("/browse/strings.bin").text
    audio = client.get("/browse/mod.pak/sound.wav")
    assert '<audio controls preload="metadata" src="/raw/mod.pak/sound.wav">' in audio.text
    assert client.get("/raw/mod.pak/sound.wav").headers["content-type"] == "audio/wav"
    hexed = client.get("/browse/mod.pak/data.bin")
    assert "00 01 02 03" in hexed.text and "?offset=4096" in hexed.text
    second = client.get("/browse/mod.pak/data.bin?offset=4096")
    assert "00001000" in second.text
    big = text_of(client.get("/browse/mod.pak/big.txt").text)
    assert "the first 256 KiB" in big


def test_search_finds_names_in_packs_and_nested_packs(served) -> None:
    _, _, client = served
    found = client.get("/search?q=*.cpeg_pc")
    assert "game.vpp_pc/zone.str2_pc/crate.cpeg_pc" in found.text
    assert "/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc" in found.text
    assert "pics/b.tga" in client.get("/search?q=B.TGA").text


def test_search_uses_a_catalog(tmp_path: Path) -> None:
    from gamepak.catalog import build_catalog

    root = tmp_path / "root"
    build_root(root)
    catalog = tmp_path / "root.catalog"
    build_catalog([str(root)], str(catalog), scheduler="synchronous")
    client = TestClient(create_app(root, catalog=str(catalog)), base_url="http://127.0.0.1:8000")
    found = client.get("/search?q=*.cpeg_pc")
    assert "in the catalog" in found.text
    assert "/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc" in found.text
    assert client.get("/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc").status_code == 200
    # A catalog kept inside ROOT is found without --catalog.
    inside = root / "root.catalog"
    build_catalog([str(root)], str(inside), scheduler="synchronous")
    found = TestClient(create_app(root), base_url="http://127.0.0.1:8000").get("/search?q=*.cpeg_pc")
    assert "in the catalog root.catalog" in found.text


def test_a_single_pack_can_be_the_root(served) -> None:
    root, _, _ = served
    client = TestClient(create_app(root / "game.vpp_pc"), base_url="http://127.0.0.1:8000")
    assert "zone.str2_pc" in client.get("/browse/").text
    assert client.get("/raw/notes.xtbl").content.startswith(b"<root>")


# -- safety --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/browse/%2e%2e/",
        "/browse/..%2f..%2fetc%2fpasswd",
        "/raw/plain/%2e%2e/%2e%2e/etc/passwd",
        "/raw//etc/passwd",
        "/raw/plain%2f..%2f..%2fx",
        "/raw/leak.txt",
        "/browse/leakdir/",
        "/raw/mod.pak/%2e%2e/%2e%2e/secret.txt",
        "/raw/pipe",
        "/raw/nothing-here",
        "/raw/mod.pak/nothing-here",
    ],
)
def test_nothing_outside_root_is_served(served, path: str) -> None:
    _, _, client = served
    response = client.get(path)
    assert response.status_code in (403, 404), response.status_code
    assert b"secret" not in response.content and b"root:" not in response.content


def test_links_inside_root_are_followed(served) -> None:
    root, _, client = served
    if not (root / "inside-link.txt").is_symlink():
        pytest.skip("this system refused to make symbolic links")
    assert client.get("/raw/inside-link.txt").content == b"plain file\n"


def test_names_are_text_never_markup(served) -> None:
    _, _, client = served
    listing = client.get("/browse/mod.pak").text
    assert HOSTILE_NAME not in listing
    assert "&lt;img src=x onerror=alert(1)&gt;.txt" in listing
    assert segment_url("browse", ["mod.pak", HOSTILE_NAME]) in listing
    member = client.get(segment_url("browse", ["mod.pak", HOSTILE_NAME]))
    assert member.status_code == 200 and "<script>alert" not in member.text
    policy = member.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy
    assert member.headers["x-content-type-options"] == "nosniff"
    raw = client.get(segment_url("raw", ["mod.pak", HOSTILE_NAME]))
    assert raw.headers["content-type"] == "application/octet-stream"
    assert raw.headers["content-disposition"].startswith("attachment;")


def test_only_get_and_head(served) -> None:
    _, _, client = served
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/browse/mod.pak").status_code == 405
        assert client.request(method, "/raw/mod.pak/readme.txt").status_code == 405


def test_foreign_host_names_are_refused(served) -> None:
    root, _, _ = served
    app = create_app(root)
    assert TestClient(app, base_url="http://attacker.example:8000").get("/browse/").status_code == 400
    assert TestClient(app, base_url="http://localhost:8000").get("/browse/").status_code == 200
    extra = create_app(root, extra_hosts=["nas.local"])
    assert TestClient(extra, base_url="http://nas.local:8000").get("/browse/").status_code == 200


def test_hostile_packs_give_an_error_page(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    header = b"PACK" + (64).to_bytes(4, "little") + (64 * 1000).to_bytes(4, "little")
    (root / "broken.pak").write_bytes(header + bytes(52))
    # A member whose declared size is far beyond the file: refused, not read.
    entry = b"huge.bin".ljust(56, b"\0") + (12).to_bytes(4, "little") + (0xFFFFFFF0).to_bytes(4, "little")
    (root / "lies.pak").write_bytes(
        b"PACK" + (76).to_bytes(4, "little") + (64).to_bytes(4, "little") + bytes(64) + entry
    )
    # A JOE that is not one, and an image that is not one.
    with create(root / "bad.pak") as pak:
        pak.add("model.joe", b"IDP2" + bytes(60))
        pak.add("picture.png", b"\x89PNG\r\n\x1a\n" + bytes(40))
        pak.add("picture.tga", bytes(30))
    client = TestClient(create_app(root), base_url="http://127.0.0.1:8000", raise_server_exceptions=False)
    broken = client.get("/browse/broken.pak")
    assert broken.status_code == 200 and "not readable as pak" in text_of(broken.text)
    lies = client.get("/browse/lies.pak")
    assert lies.status_code == 200 and "huge.bin" not in text_of(lies.text).split("name")[-1]
    assert client.get("/raw/lies.pak/huge.bin").status_code == 404
    for url in ("/model/bad.pak/model.joe", "/image/bad.pak/picture.tga"):
        response = client.get(url)
        assert response.status_code == 422, url
        assert "Traceback" not in response.text
    assert client.get("/browse/bad.pak/model.joe").status_code == 200


def test_bomb_like_members_are_bounded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    # 200 MiB of zeros compress to almost nothing: the previews read their limits, no more.
    zeros = bytes(200 << 20)
    with create(root / "bomb.vpp_pc", flags=1) as vpp:
        vpp.add("zeros.tga", zeros)
        vpp.add("zeros.xtbl", zeros)
        vpp.add("zeros.joe", zeros)
    del zeros
    client = TestClient(create_app(root), base_url="http://127.0.0.1:8000")
    for member in ("zeros.xtbl", "zeros.tga"):
        page = client.get(f"/browse/bomb.vpp_pc/{member}")
        # The page shows the start of the member, not all of it.
        assert page.status_code == 200 and len(page.content) < 1 << 20
    # Refused by the size the member declares, before anything is read: the messages say the
    # previews' limits (an unbounded read would fail later, decoding, with another message).
    image = client.get("/image/bomb.vpp_pc/zeros.tga")
    assert image.status_code == 422
    assert f"bomb.vpp_pc/zeros.tga: {200 << 20} bytes, more than the {previews.MAX_IMAGE_BYTES >> 20} MiB" in image.text
    model = client.get("/model/bomb.vpp_pc/zeros.joe")
    assert model.status_code == 422
    assert f"bomb.vpp_pc/zeros.joe: {200 << 20} bytes, more than the {previews.MAX_MODEL_BYTES >> 20} MiB" in model.text


# -- the command ---------------------------------------------------------------------------------
def test_serve_prints_its_url_and_stops_on_sigterm(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_root(root)
    process = subprocess.Popen(
        [sys.executable, "-m", "gamepak", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = re.search(r"http://127\.0\.0\.1:\d+/browse/", line)
        assert url, line
        host, port = url.group(0)[7:].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as connection:
            connection.sendall(b"GET /raw/plain/readme.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            reply = b""
            while chunk := connection.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"plain file\n")
    finally:
        process.terminate()
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""


def test_serve_warns_when_listening_beyond_this_machine(monkeypatch, capsys, tmp_path: Path) -> None:
    import gamepak.web.server as server
    from gamepak.cli import main

    calls = []
    monkeypatch.setattr(server, "serve", lambda root, **options: calls.append(options))
    assert main(["serve", str(tmp_path), "--host", "0.0.0.0", "--port", "0"]) == 0
    assert "warning: listening on 0.0.0.0" in capsys.readouterr().err
    assert calls and calls[0]["host"] == "0.0.0.0"
    assert main(["serve", str(tmp_path / "missing")]) == 1
    assert main(["serve", str(tmp_path), "--port", "70000"]) == 2


def test_pages_never_show_where_root_is_on_the_server(tmp_path: Path) -> None:
    root = tmp_path / "secret-place"
    root.mkdir()
    header = b"PACK" + (64).to_bytes(4, "little") + (64 * 1000).to_bytes(4, "little")
    (root / "broken.pak").write_bytes(header + bytes(52))
    with create(root / "ok.pak") as pak:
        pak.add("a.txt", b"a")
    client = TestClient(create_app(root), base_url="http://127.0.0.1:8000")
    for url in ("/browse/broken.pak", "/browse/ok.pak?check=1", "/browse/nothing", "/raw/ok.pak/none"):
        page = client.get(url)
        assert str(root) not in page.text and str(tmp_path) not in page.text, url


# -- previews (issue 31) ---------------------------------------------------------------------------
def test_loose_models_have_a_caption_and_no_error(served) -> None:
    _, _, client = served
    page = client.get("/browse/models/wheel.joe")
    assert page.status_code == 200 and 'class="warning"' not in page.text
    assert "66 vertices, 128 faces, size 0.07 \u00d7 1.08 \u00d7 1.08" in text_of(page.text)
    assert 'data-model="/model/models/wheel.joe"' in page.text


def test_j2me_strings_are_listed_one_per_row_with_their_index(served) -> None:
    import html

    from web_fixtures import LANG_STRINGS

    _, _, client = served
    page = client.get("/browse/lang.f/0.txt")
    rows = re.findall(r'<td class="number">(\d+)</td><td class="string">([^<]*)</td>', page.text)
    assert [(int(index), html.unescape(text)) for index, text in rows] == list(enumerate(LANG_STRINGS))
    # Binary members stay hex; plain text stays text.
    assert "00 01 02 03" in client.get("/browse/lang.f/1.bin").text
    assert '<pre class="text">plain file' in client.get("/browse/plain/readme.txt").text


def test_pictures_are_sized_at_their_ratio_with_zoom_and_mips(served) -> None:
    from gamepak.formats.rfg.peg.pixels import mip_chain

    from web_fixtures import picture

    _, _, client = served
    fitted = client.get("/browse/big.cpeg_pc").text
    assert re.search(r'name=square\.tga" alt="square\.tga" width="512" height="512"', fitted)
    assert re.search(r'name=wide\.tga" alt="wide\.tga" width="256" height="64"', fitted)
    assert 'class="mip">3</a>' in fitted
    actual = client.get("/browse/big.cpeg_pc?zoom=1&mip=2").text
    assert re.search(r'name=square\.tga" alt="square\.tga" width="1024" height="1024"', actual)
    assert re.search(r'name=wide\.tga&amp;mip=2" alt="wide\.tga" width="64" height="16"', actual)
    level = client.get("/texture/big.cpeg_pc?name=wide.tga&mip=2")
    expected = mip_chain(picture(256, 64), 3)[2]
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(level.content)).convert("RGBA")), expected)
    assert client.get("/texture/big.cpeg_pc?name=wide.tga&mip=99").status_code == 422
    assert client.get("/texture/big.cpeg_pc?name=wide.tga&mip=x").status_code == 400
    image = client.get("/browse/mod.pak/pics/a.png").text
    assert 'width="256" height="192"' in image and "64\u00d748" in image


def test_previews_are_a_table_other_modules_extend(served, monkeypatch) -> None:
    from gamepak.web import previews

    _, _, client = served
    monkeypatch.setattr(previews, "PREVIEWERS", list(previews.PREVIEWERS))

    def shout(place, head, kind):  # type: ignore[no-untyped-def]
        if place.name != "readme.txt":
            return None
        return previews.Preview("text", "text/shout", text=head.decode().upper())

    previews.add_previewer("shout", shout, before="text")
    assert [name for name, _ in previews.PREVIEWERS][-2:] == ["shout", "text"]
    assert "PLAIN FILE" in client.get("/browse/plain/readme.txt").text
