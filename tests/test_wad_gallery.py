"""Issue 47 item 4: a WAD's page in the viewer shows its pictures as a gallery (names, sizes,
flags: `{` with its clear share, sky, fullbright share), and the catalog's `textures` rows of
palette textures carry `transparent` and `fullbright` shares."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from PIL import Image
from quake_bytes import miptex_bytes, qpic_bytes, wad_bytes

from gamepak.formats.quake.palette import colour_shares

if TYPE_CHECKING:
    from gamepak.web.site import Place

starlette = pytest.importorskip("starlette.testclient")


def _mips(width: int, height: int, fill: int, special: int = 0, value: int = 0) -> list[bytes]:
    """Four mips of `fill`, the first `special` pixels of mip 0 set to `value`."""
    mip0 = bytearray([fill]) * (width * height)
    mip0[:special] = bytes([value]) * special
    return [bytes(mip0)] + [bytes([fill]) * ((width >> k) * (height >> k)) for k in (1, 2, 3)]


def _wad3_miptex(name: bytes, width: int, height: int) -> bytes:
    record = miptex_bytes(name, width, height, _mips(width, height, 250))  # 250: no fullbright in WAD3
    palette = bytes(range(256)) * 3
    return record + struct.pack("<H", 256) + palette + b"\0\0"


def _sample_wad() -> bytes:
    return wad_bytes(
        [
            (b"{fence", 0x44, miptex_bytes(b"{fence", 16, 16, _mips(16, 16, 5, 64, 255))),  # 25% clear
            (b"sky3", 0x44, miptex_bytes(b"sky3", 32, 16, _mips(32, 16, 5))),
            (b"lamp", 0x44, miptex_bytes(b"lamp", 16, 16, _mips(16, 16, 5, 128, 240))),  # 50% fullbright
            (b"BOX", 0x42, qpic_bytes(2, 1, bytes([5, 255]))),
            (b"PALETTE", 0x40, bytes(768)),
        ]
    )


@pytest.fixture
def client(tmp_path: Path) -> object:
    from gamepak.web.app import create_app

    root = tmp_path / "root"
    root.mkdir()
    (root / "tex.wad").write_bytes(_sample_wad())
    (root / "hl.wad").write_bytes(wad_bytes([(b"hlwall", 0x43, _wad3_miptex(b"hlwall", 16, 16))], magic=b"WAD3"))
    import gamepak

    with gamepak.create(root / "pak0.pak") as pak:
        pak.add("gfx/tex.wad", _sample_wad())
    return starlette.TestClient(create_app(root), base_url="http://127.0.0.1:8000")


def test_colour_shares() -> None:
    assert colour_shares(bytes([255, 255, 240, 5]), 255, False) == (0.5, 0.25)
    assert colour_shares(bytes([0, 240, 5, 5]), None, False) == (0.0, 0.25)
    assert colour_shares(bytes([255, 240]), 255, True) == (0.5, None)
    assert colour_shares(b"", None, False) == (0.0, 0.0)


def test_a_wad_page_shows_its_pictures_with_their_flags(client: object) -> None:
    page = client.get("/browse/tex.wad")  # type: ignore[attr-defined]
    assert page.status_code == 200
    text = page.text
    assert "Textures (4)" in text  # the palette lump is no picture
    assert "{fence: 16\u00d716 miptex, 4 mips" in text and "{ clear 25%" in text
    assert "sky3: 32\u00d716 miptex, 4 mips" in text and '<span class="flag">sky</span>' in text
    assert "lamp: 16\u00d716 miptex, 4 mips" in text and "fullbright 50%" in text
    assert "BOX: 2\u00d71 qpic" in text and "clear 50%" in text
    # Every picture of the gallery is served, at its size, from the URL the page gives.
    urls = [part.split('"')[0] for part in text.split('<img src="')[1:]]
    assert len(urls) == 4
    sizes = []
    for url in urls:
        response = client.get(url.replace("&amp;", "&"))  # type: ignore[attr-defined]
        assert response.status_code == 200 and response.headers["content-type"] == "image/png", url
        sizes.append(Image.open(io.BytesIO(response.content)).size)
    assert sizes == [(16, 16), (32, 16), (16, 16), (2, 1)]
    # A WAD3 texture has its own palette: no fullbright share, whatever its indices.
    hl = client.get("/browse/hl.wad").text  # type: ignore[attr-defined]
    assert "hlwall: 16\u00d716 miptex, 4 mips" in hl and "fullbright" not in hl


def test_the_gallery_is_bounded(client: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from gamepak.web import wad_gallery

    monkeypatch.setattr(wad_gallery, "MAX_TEXTURES", 2)
    text = client.get("/browse/tex.wad").text  # type: ignore[attr-defined]
    assert "Textures (2)" in text and "2 more not shown" in text
    # A filtered or later page of the listing leaves the gallery out.
    assert "Textures (" not in client.get("/browse/tex.wad?filter=BOX").text  # type: ignore[attr-defined]


def test_catalog_rows_carry_transparent_and_fullbright(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("dask")
    import gamepak
    from gamepak.catalog import build_catalog
    from gamepak.catalog.schema import read_table

    root = tmp_path / "in"
    root.mkdir()
    (root / "tex.wad").write_bytes(_sample_wad())
    (root / "hl.wad").write_bytes(wad_bytes([(b"hlwall", 0x43, _wad3_miptex(b"hlwall", 16, 16))], magic=b"WAD3"))
    with gamepak.create(root / "pak0.pak") as pak:
        pak.add("gfx/pic.lmp", qpic_bytes(2, 2, bytes([255, 230, 5, 5])))
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    rows = {row["name"]: row for row in read_table(str(tmp_path / "out"), "textures").to_pylist()}
    assert rows["{fence"]["transparent"] == pytest.approx(0.25) and rows["{fence"]["fullbright"] == 0
    assert rows["lamp"]["transparent"] == 0 and rows["lamp"]["fullbright"] == pytest.approx(0.5)
    assert rows["BOX"]["transparent"] == pytest.approx(0.5)
    assert rows["pic"]["transparent"] == pytest.approx(0.25) and rows["pic"]["fullbright"] == pytest.approx(0.25)
    assert rows["hlwall"]["fullbright"] is None  # its own palette: no fullbright range
    assert np.isclose(rows["sky3"]["transparent"], 0)


def test_a_wad_inside_a_pak_has_its_gallery_too(client: object) -> None:
    text = client.get("/browse/pak0.pak/gfx/tex.wad").text  # type: ignore[attr-defined]
    assert "Textures (4)" in text and "{ clear 25%" in text
    url = text.split('<img src="')[1].split('"')[0].replace("&amp;", "&")
    assert url.startswith("/texture/pak0.pak/gfx/tex.wad/")
    response = client.get(url)  # type: ignore[attr-defined]
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"


def _textures(place: Place) -> list[dict[str, Any]]:
    """The textures of the gallery of the WAD at `place` (a WAD: never None)."""
    from gamepak.web.wad_gallery import wad_gallery

    gallery = wad_gallery(place)
    assert gallery is not None
    textures: list[dict[str, Any]] = gallery["textures"]
    return textures


def test_the_gallery_asks_the_content_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Which lumps are pictures, in which packs, and how each is read are the registry's rows,
    # not a test of the reader's type: a row's `lump_kinds`, `packs` and `rows` verb decide.
    from gamepak.content import get
    from gamepak.content.spec import Verb
    from gamepak.web.site import Site
    from gamepak.web.wad_gallery import wad_gallery

    (tmp_path / "tex.wad").write_bytes(_sample_wad())
    place = Site(str(tmp_path)).resolve(["tex.wad"])
    row = get("quake-image")
    assert [shown["name"] for shown in _textures(place)] == ["{fence", "sky3", "lamp", "BOX"]
    monkeypatch.setattr(row, "lump_kinds", ("miptex",))
    assert [shown["name"] for shown in _textures(place)] == ["{fence", "sky3", "lamp"]
    monkeypatch.setattr(row, "verbs", {**row.verbs, "rows": Verb("test_wad_gallery:one_row", ("lump",))})
    assert [(shown["name"], shown["flags"]) for shown in _textures(place)] == [("made", ["clear 50%"])] * 3
    monkeypatch.setattr(row, "packs", ("pak",))
    assert wad_gallery(place) is None


def one_row(data: bytes, name: str, label: str, *, lump: str | None = None) -> list[dict[str, object]]:
    """A `rows` verb of a made-up kind (test_the_gallery_asks_the_content_registry)."""
    assert lump == "miptex"
    return [{"name": "made", "width": 1, "height": 1, "format": "made", "mips": 1, "transparent": 0.5, "fullbright": 0}]
