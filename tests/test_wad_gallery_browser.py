"""A WAD's gallery in a real browser (Chromium, as tests/test_web_browser.py drives it): every
picture of the WAD is decoded by the browser at its size, drawn through the palette (a `{`
texture's clear pixels transparent), and the captions carry the flags."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from quake_bytes import miptex_bytes, qpic_bytes, wad_bytes
from test_web_browser import CHROMIUM, Watched, browser, serving, wait_until, watched

from gamepak.formats.quake.palette import built_in_palette

__all__ = ["browser", "watched"]  # the fixtures, shared with test_web_browser

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")

PALETTE = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("wad-root")
    fence = bytes([255] * 128 + [12] * 128)  # the top half clear
    mips = [fence, bytes([12]) * 64, bytes([12]) * 16, bytes([12]) * 4]
    (root / "tex.wad").write_bytes(
        wad_bytes(
            [
                (b"{fence", 0x44, miptex_bytes(b"{fence", 16, 16, mips)),
                (b"sky1", 0x44, miptex_bytes(b"sky1", 32, 16)),
                (b"BOX", 0x42, qpic_bytes(4, 2, bytes([5] * 8))),
            ]
        )
    )
    yield from serving(root)


def test_the_wad_gallery_shows_every_picture(server: str, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{server}/browse/tex.wad")
    images = page.locator("section.wad-gallery figure img")
    assert images.count() == 3
    wait_until(
        page,
        "[...document.querySelectorAll('section.wad-gallery figure img')].every(i => i.complete && i.naturalWidth > 0)",
    )
    natural = page.eval_on_selector_all(
        "section.wad-gallery figure img", "list => list.map(i => [i.naturalWidth, i.naturalHeight])"
    )
    assert natural == [[16, 16], [32, 16], [4, 2]]
    captions = page.locator("section.wad-gallery figcaption").all_inner_texts()
    assert "{ clear 50%" in captions[0] and "sky" in captions[1] and captions[2].startswith("BOX: 4\u00d72 qpic")
    # The fence as the browser drew it: clear on top, palette colour 12 below (away from the
    # middle row, which the browser's scaling blends).
    shot = page.locator("section.wad-gallery figure img").first.screenshot(omit_background=True)
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGBA")).astype(int)
    height = pixels.shape[0]
    assert pixels[: height // 3, :, 3].max() == 0
    assert np.abs(pixels[2 * height // 3 :, :, :3] - PALETTE[12]).max() <= 2
    assert watched.errors == []
