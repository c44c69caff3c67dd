"""The viewer on Quake files: WAD lumps, LMPs and sprites as texture galleries through the palette,
MDL models and BSP maps in the 3D view as glTF."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from PIL import Image
from quake_bytes import MdlGeometry, bsp_bytes, mdl_bytes, miptex_bytes, qpic_bytes, spr_bytes, wad_bytes

import gamepak
from gamepak.formats.quake.palette import built_in_palette
from gamepak.models import quake

from conftest import glb_summary

starlette = pytest.importorskip("starlette.testclient")

PALETTE = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)
SEAM: MdlGeometry = {
    "st": [(0, 1, 0), (0, 2, 1), (0, 3, 2)],
    "triangles": [(1, 0, 1, 2)],
    "poses": [[(0, 0, 0), (10, 0, 0), (0, 10, 0)]],
}


@pytest.fixture
def client(tmp_path: Path) -> object:
    from gamepak.web.app import create_app

    root = tmp_path / "root"
    root.mkdir()
    wad = wad_bytes([(b"BOX", 0x42, qpic_bytes(2, 1, bytes([5, 255]))), (b"wall", 0x44, miptex_bytes(b"wall", 16, 8))])
    with gamepak.create(root / "pak0.pak") as writer:
        writer.add("gfx.wad", wad)
        writer.add("gfx/pic.lmp", qpic_bytes(1, 1, bytes([7])))
        writer.add("gfx/palette.lmp", built_in_palette())
        writer.add("progs/s.spr", spr_bytes([(2, 2, bytes([1, 2, 3, 4]))]))
        writer.add("progs/m.mdl", mdl_bytes(**SEAM))
        writer.add("maps/m.bsp", bsp_bytes())
    return starlette.TestClient(create_app(root), base_url="http://127.0.0.1:8000")


def _png(client: object, url: str) -> np.ndarray:
    response = client.get(url)  # type: ignore[attr-defined]
    assert response.status_code == 200 and response.headers["content-type"] == "image/png", response.text
    return np.asarray(Image.open(io.BytesIO(response.content)).convert("RGBA"))


def test_wad_lumps_and_lmps_show_through_the_palette(client: object) -> None:
    page = client.get("/browse/pak0.pak/gfx.wad/BOX")  # type: ignore[attr-defined]
    assert "BOX: 2\u00d71 qpic" in page.text
    pixels = _png(client, "/texture/pak0.pak/gfx.wad/BOX?name=BOX")
    assert tuple(pixels[0, 0]) == (*PALETTE[5], 255) and pixels[0, 1, 3] == 0
    page = client.get("/browse/pak0.pak/gfx.wad/wall")  # type: ignore[attr-defined]
    assert "wall: 16\u00d78 miptex, 4 mips" in page.text
    assert _png(client, "/texture/pak0.pak/gfx.wad/wall?name=wall&mip=2").shape == (2, 4, 4)
    assert tuple(_png(client, "/texture/pak0.pak/gfx/pic.lmp?name=pic")[0, 0]) == (*PALETTE[7], 255)
    assert "frame0: 2\u00d72 sprite" in client.get("/browse/pak0.pak/progs/s.spr").text  # type: ignore[attr-defined]
    missing = client.get("/texture/pak0.pak/gfx/pic.lmp?name=" + quote("nothing"))  # type: ignore[attr-defined]
    assert missing.status_code == 404
    # The palette itself is not a picture: no gallery for it.
    assert "qpic" not in client.get("/browse/pak0.pak/gfx/palette.lmp").text  # type: ignore[attr-defined]


def test_models_and_maps_open_in_the_3d_view(client: object) -> None:
    for path in ("progs/m.mdl", "maps/m.bsp"):
        page = client.get(f"/browse/pak0.pak/{path}")  # type: ignore[attr-defined]
        assert f'data-model="/model/pak0.pak/{path}"' in page.text
        model = client.get(f"/model/pak0.pak/{path}")  # type: ignore[attr-defined]
        assert model.headers["content-type"] == "model/gltf-binary"
        # The model itself, not a few bytes that start like one: as many triangles as the
        # library's own conversion of the member.
        if path.endswith(".mdl"):
            direct = quake.mdl_to_gltf(mdl_bytes(**SEAM), path, palette=built_in_palette())
        else:
            direct = quake.bsp_to_gltf(bsp_bytes(), path, palette=built_in_palette())
        expected = glb_summary(direct)
        assert glb_summary(model.content) == expected and expected["triangles"] > 0


def test_a_map_shows_its_textures_under_the_3d_view(client: object) -> None:
    page = client.get("/browse/pak0.pak/maps/m.bsp")  # type: ignore[attr-defined]
    assert 'data-model="/model/pak0.pak/maps/m.bsp"' in page.text
    assert "Textures (1)" in page.text and "wall: 16\u00d716 miptex, 4 mips" in page.text
    assert _png(client, "/texture/pak0.pak/maps/m.bsp?name=wall").shape == (16, 16, 4)
    assert _png(client, "/texture/pak0.pak/maps/m.bsp?name=wall&mip=3").shape == (2, 2, 4)
    # A model keeps its 3D view alone (its skins are a texture page of their own).
    assert "Textures (" not in client.get("/browse/pak0.pak/progs/m.mdl").text  # type: ignore[attr-defined]
