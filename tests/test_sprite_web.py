"""The viewer on Gameloft J2ME sprites: a sprite member's page shows its animations (animated
PNG), frames and module sheet for each palette, as the game draws them."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from sprite_bytes import simple_sprite, sprite_bytes

import gamepak

starlette = pytest.importorskip("starlette.testclient")


@pytest.fixture
def client(tmp_path: Path) -> object:
    from gamepak.web.app import create_app

    root = tmp_path / "root"
    root.mkdir()
    two_palettes = sprite_bytes(
        [(1, 1)],
        [(0, 0, 0, 0)],
        [(1, 0)],
        [(0, 0, 1, 1)],
        [],
        [],
        [bytes([1])],
        palettes=[[0x7C1F, 0xFC00], [0x7C1F, 0x801F]],
    )
    with gamepak.create(root / "gen1.f", "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", two_palettes)
    return starlette.TestClient(create_app(root), base_url="http://127.0.0.1:8000")


def _images(page: str) -> dict[str, Image.Image]:
    found = re.findall(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]+)"', page)
    return {alt + f"#{n}": Image.open(io.BytesIO(base64.b64decode(data))) for n, (data, alt) in enumerate(found)}


def test_a_sprite_member_shows_its_anims_frames_and_modules(client: object) -> None:
    page = client.get("/browse/gen1.f/0.bin")  # type: ignore[attr-defined]
    assert page.status_code == 200
    assert "2 modules, 2 frames, 1 animations, 1 palette of 4 colours (1555), I256" in page.text
    images = _images(page.text)
    assert [name.split("#")[0] for name in images] == ["animation 0", "frame 0", "modules"]
    anim = images["animation 0#0"]
    assert getattr(anim, "n_frames", 1) == 3  # the blink (frame 255) is a frame of its own
    frame = np.asarray(images["frame 0#1"].convert("RGBA"))
    assert frame[1].tolist() == [[248, 0, 0, 255], [0, 248, 0, 255], [0, 0, 248, 255]]


def test_each_palette_has_its_pictures(client: object) -> None:
    page = client.get("/browse/gen1.f/1.bin")  # type: ignore[attr-defined]
    assert page.text.count("<summary>palette ") == 2
    frames = [img for name, img in _images(page.text).items() if name.startswith("frame")]
    assert [np.asarray(img.convert("RGBA"))[0, 0].tolist() for img in frames] == [[248, 0, 0, 255], [0, 0, 248, 255]]
