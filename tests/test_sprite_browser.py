"""A Gameloft sprite in `gamepak serve`, in a real browser (Debian's Chromium driven by
Playwright, as test_web_browser.py): the frames are drawn with the composer's pixels and the
animations play (their pictures change over time). Skips without Chromium or the samples."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from PIL import Image

from conftest import sample

CHROMIUM = os.environ.get("GAMEPAK_CHROMIUM", "/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"needs Chromium at {CHROMIUM} (Debian's chromium package; .ci/run installs it when run as root)",
)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    from test_web_browser import serving

    yield from serving(sample("gameloft"))


@pytest.fixture(scope="module")
def page(base: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--no-first-run"])
        shown = browser.new_page(viewport={"width": 1100, "height": 900})
        errors: list[str] = []
        shown.on("pageerror", lambda error: errors.append(str(error)))
        yield shown, errors
        browser.close()


def test_a_sprite_page_draws_its_frames_and_plays_its_animations(base: str, page: Any) -> None:
    import gamepak
    from gamepak.formats.j2me.sprite import read_sprite
    from gamepak.formats.j2me.sprite.compose import compose_frame

    shown, errors = page
    shown.goto(f"{base}/browse/gen1.f/5.bin")
    assert "47 modules, 33 frames, 5 animations, 3 palettes" in shown.inner_text("body")
    from test_web_browser import wait_until

    wait_until(shown, "[...document.images].every(i => i.complete && i.naturalWidth > 0)")
    # Frame 3 as the browser decoded it is the composer's picture.
    drawn = shown.evaluate(
        """(() => { const image = document.querySelector('img[alt="frame 3"]');
            const canvas = document.createElement('canvas');
            canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
            const context = canvas.getContext('2d'); context.drawImage(image, 0, 0);
            const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
            return [canvas.width, canvas.height, Array.from(pixels)];
        })()"""
    )
    with gamepak.open(sample("gameloft/gen1.f")) as pack:
        picture = compose_frame(read_sprite(pack.read("5")), 3)
    assert picture is not None
    width, height, data = drawn
    assert np.array_equal(np.array(data, dtype=np.uint8).reshape(height, width, 4), picture.rgba)
    # Animation 1 (11 AFrames of 2 ticks: 100 ms each) changes while it is watched.
    anim = shown.locator('img[alt="animation 1"]').first
    seen = set()
    for _ in range(12):
        seen.add(np.asarray(Image.open(io.BytesIO(anim.screenshot())).convert("RGB")).tobytes())
        time.sleep(0.07)
    assert len(seen) >= 3
    assert errors == []
