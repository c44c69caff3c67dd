"""`gamepak serve` in a real browser: Debian's Chromium driven by Playwright, against the real
command (`python -m gamepak serve`), WebGL through SwiftShader.

Skips, saying why, only where Chromium is not installed (`.ci/run` installs it as root).
GAMEPAK_UPDATE_SCREENSHOT=1 also saves the README's screenshot (docs/serve.png).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from web_fixtures import HOSTILE_NAME, build_root

CHROMIUM = os.environ.get("GAMEPAK_CHROMIUM", "/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "serve.png"

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"needs Chromium at {CHROMIUM} (Debian's chromium package; .ci/run installs it when run as root)",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, np.ndarray], Path]]:
    root = tmp_path_factory.mktemp("browser-root")
    pixels = build_root(root)
    shutil.copytree(root, root / "copy", ignore=shutil.ignore_patterns("copy"))
    process = subprocess.Popen(
        [sys.executable, "-m", "gamepak", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/browse/", line)
    assert match, f"no URL in {line!r}: {process.stderr.read() if process.stderr else ''}"
    yield match.group(1), pixels, root
    process.terminate()
    assert process.wait(timeout=15) == 0


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--enable-unsafe-swiftshader",
                "--use-angle=swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        yield launched
        launched.close()


class Watched:
    """A page whose JavaScript errors, failed requests and dialogs are recorded."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1100, "height": 820})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    page = Watched(browser)
    yield page
    page.page.close()


def test_listings_and_navigation_into_nested_packs(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/")
    page.click("text=game.vpp_pc")
    assert page.url.endswith("/browse/game.vpp_pc")
    assert "vpp" in page.inner_text("table.fields")
    page.click("text=zone.str2_pc/")
    page.click("text=crate.cpeg_pc")
    assert page.url.endswith("/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    assert page.locator("figure img").count() == 2
    page.go_back()
    assert page.url.endswith("/browse/game.vpp_pc/zone.str2_pc/")
    assert "crate.gpeg_pc" in page.inner_text("table.listing")
    # A shared link opens the same page.
    page.goto(f"{base}/browse/game.vpp_pc/zone.str2_pc/")
    assert "crate.gpeg_pc" in page.inner_text("table.listing")
    page.click("th a:text-is('size')")
    page.wait_for_url("**sort=size**")
    assert page.locator("table.listing td a").first.inner_text() == "crate.cpeg_pc"
    assert watched.errors == []


def _img_pixels(page: Any, selector: str) -> list[np.ndarray]:
    """Each matching <img>'s pixels as the browser decoded them (drawn on a canvas)."""
    page.wait_for_function(f"[...document.querySelectorAll({selector!r})].every(i => i.complete && i.naturalWidth > 0)")
    shots = page.evaluate(
        f"""[...document.querySelectorAll({selector!r})].map(image => {{
            const canvas = document.createElement('canvas');
            canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
            const context = canvas.getContext('2d');
            context.drawImage(image, 0, 0);
            return [image.naturalWidth, image.naturalHeight,
                    Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data)];
        }})"""
    )
    return [np.array(data, dtype=np.uint8).reshape(height, width, 4) for width, height, data in shots]


def test_texture_images_are_the_decoders_pixels(server, watched: Watched) -> None:
    base, decoded, _ = server
    page = watched.page
    page.goto(f"{base}/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    shown = _img_pixels(page, "figure img")
    assert [image.shape for image in shown] == [pixels.shape for pixels in decoded.values()]
    for image, pixels in zip(shown, decoded.values()):
        assert np.array_equal(image, pixels)
    page.goto(f"{base}/browse/mod.pak/pics/b.tga")
    (tga,) = _img_pixels(page, ".preview img")
    from web_fixtures import picture

    assert np.array_equal(tga, picture())
    assert watched.errors == []


def test_the_model_viewer_draws_a_shaded_object(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/mod.pak/model.joe")
    page.wait_for_selector("[data-state=shown]", timeout=30_000)
    page.wait_for_timeout(300)
    canvas = page.locator(".model canvas")
    image = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB")).astype(int)
    background = image[2, 2]
    object_pixels = image[np.abs(image - background).sum(axis=2) > 30]
    assert len(object_pixels) > image.shape[0] * image.shape[1] // 20, "the object covers almost nothing"
    shades = {int(value) // 8 for value in object_pixels.mean(axis=1)}
    assert len(shades) >= 4, f"one flat colour, not shading: {sorted(shades)}"
    # Orbiting changes the picture.
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 150, box["y"] + box["height"] / 2 + 40, steps=8)
    page.mouse.up()
    page.wait_for_timeout(400)
    turned = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB")).astype(int)
    assert np.abs(turned - image).sum() > 0
    assert watched.errors == []


def test_no_javascript_errors_on_any_page(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    paths = [
        "/browse/",
        "/browse/plain/",
        "/browse/mod.pak",
        "/browse/mod.pak/pics/",
        "/browse/mod.pak/pics/a.png",
        "/browse/mod.pak/pics/d.dds",
        "/browse/mod.pak/sound.wav",
        "/browse/mod.pak/data.bin",
        "/browse/mod.pak/big.txt",
        "/browse/game.vpp_pc?check=1",
        "/browse/game.vpp_pc/notes.xtbl",
        "/browse/strings.bin",
        "/search?q=*.tga",
    ]
    for path in paths:
        response = page.goto(base + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
    assert watched.errors == []


def test_hostile_names_run_no_script(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/mod.pak")
    assert HOSTILE_NAME in page.inner_text("table.listing")
    assert page.locator("img[src=x]").count() == 0
    page.click(f"text={HOSTILE_NAME}")
    page.wait_for_load_state("networkidle")
    assert HOSTILE_NAME in page.inner_text("h1")
    assert "<script>alert(1)</script>" in page.inner_text("pre.text")
    assert page.locator("main script").count() == 0
    # A script smuggled in through the URL is refused by the policy too.
    page.goto(f"{base}/browse/{'%3Cscript%3Ealert(2)%3C%2Fscript%3E'}")
    assert watched.dialogs == []


def test_screenshot_for_the_readme(server, watched: Watched, tmp_path: Path) -> None:
    base, _, _ = server
    page = watched.page
    page.set_viewport_size({"width": 900, "height": 560})
    page.goto(f"{base}/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    page.wait_for_load_state("networkidle")
    shot = tmp_path / "serve.png"
    page.screenshot(path=str(shot))
    picture = Image.open(shot)
    assert picture.size == (900, 560)
    if os.environ.get("GAMEPAK_UPDATE_SCREENSHOT"):
        SCREENSHOT.parent.mkdir(exist_ok=True)
        picture.convert("P", palette=Image.Palette.ADAPTIVE, colors=128).save(SCREENSHOT, optimize=True)
    assert SCREENSHOT.exists(), "run with GAMEPAK_UPDATE_SCREENSHOT=1 to make docs/serve.png"
    assert SCREENSHOT.stat().st_size < 150_000
